# Copyright (c) 2026, pg_lockstat developers
#
# pg_lockstat preloaded into a server without the core patch: the server
# refuses to start with a message that names the patch, not a dynamic-linker
# "undefined symbol" error.  Likewise with a core patch of another version.  Needs an unpatched build of the same PostgreSQL
# version (STOCK_PG_CONFIG, set by "make test").

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $stock_pg_config = $ENV{STOCK_PG_CONFIG};
plan skip_all => 'STOCK_PG_CONFIG is not set: no unpatched server to test'
  unless defined $stock_pg_config && -x $stock_pg_config;

# A library built with a sanitizer (make test-asan) cannot be loaded into an
# unpatched server built without it.
my $our_cflags = `pg_config --cflags`;
my $stock_cflags = `$stock_pg_config --cflags`;
plan skip_all => 'pg_lockstat is built with a sanitizer, the unpatched server is not'
  if $our_cflags =~ /-fsanitize=/ && $stock_cflags !~ /-fsanitize=/;

my $stock_prefix = `$stock_pg_config --bindir`;
chomp $stock_prefix;
$stock_prefix =~ s{/bin$}{};

# our library, built against the patched headers, lives with the patched
# server found on PATH
my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
ok(-e "$pkglibdir/pg_lockstat.so", 'pg_lockstat library is installed');

my $node =
  PostgreSQL::Test::Cluster->new('unpatched', install_path => $stock_prefix);
$node->init;
$node->append_conf('postgresql.conf',
	"dynamic_library_path = '$pkglibdir'\nshared_preload_libraries = 'pg_lockstat'"
);
my $ret = $node->start(fail_ok => 1);
ok(!$ret, 'unpatched server does not start with pg_lockstat preloaded');
my $log = slurp_file($node->logfile);
like(
	$log,
	qr/pg_lockstat requires a server built with the pg_lockstat core patch/,
	'the message says the core patch is missing');
like($log, qr/patches\/pg18/, 'the hint names the patch directory');
unlike($log, qr/undefined symbol/, 'no dynamic-linker error');

# A core patch of another major version.  Stand in for it with a library,
# loaded into the unpatched server with LD_PRELOAD, that exports only the
# version symbol, with version 99.0.
my $fake_dir = PostgreSQL::Test::Utils::tempdir;
open(my $fh, '>', "$fake_dir/fake_core.c") or die "could not write fake_core.c: $!";
print $fh "const int LWLockStatsCoreVersion = 9900;\n";
close $fh;
my $cc = `pg_config --cc`;
chomp $cc;
system_or_bail(split(/ /, $cc), '-shared', '-fPIC', '-o',
	"$fake_dir/fake_core.so", "$fake_dir/fake_core.c");
{
	local $ENV{LD_PRELOAD} = "$fake_dir/fake_core.so";
	my $logstart = -s $node->logfile;
	ok(!$node->start(fail_ok => 1),
		'a server with another core patch version does not start');
	my $vlog = slurp_file($node->logfile, $logstart);
	like($vlog, qr/pg_lockstat core patch version mismatch/,
		'the message says the versions do not match');
	like(
		$vlog,
		qr/The server has core patch version 99\.0, but this pg_lockstat library was built for version 3\.x\./,
		'the detail names both versions');
}

# without preload the same server works, and CREATE EXTENSION gives 55000
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''");
$node->start;
my ($rc, $stdout, $stderr) = $node->psql('postgres',
	"LOAD 'pg_lockstat';");
is($rc, 0, 'LOAD on an unpatched server is harmless');
$node->stop;

done_testing();
