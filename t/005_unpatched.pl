# Copyright (c) 2026, pg_lockstat developers
#
# pg_lockstat preloaded into a server without the core patch: the server
# starts, with one WARNING at start-up that names the missing patch (not a
# dynamic-linker "undefined symbol" error); CREATE EXTENSION works; the views
# fail with SQLSTATE 55000 and the same hint; pg_lockstat_status says that
# counting is inactive and why.  Likewise with a core patch of another
# version, whose message names both versions, with one whose LWLock counter
# rows have another size, whose message names both sizes, and with one
# that lacks a counting point the library looks up, whose message names it.  Needs an unpatched build of
# the same PostgreSQL version (STOCK_PG_CONFIG, set by "make test").

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $patch_dir = LockStatTest::patch_dir();
my $stock_pg_config = $ENV{STOCK_PG_CONFIG};
plan skip_all => 'STOCK_PG_CONFIG is not set: no unpatched server to test'
  unless defined $stock_pg_config && -x $stock_pg_config;

# A library built with a sanitizer (make test-asan) cannot be loaded into an
# unpatched server built without it.
my $our_cflags = `pg_config --cflags`;
my $stock_cflags = `$stock_pg_config --cflags`;
plan skip_all =>
  'pg_lockstat is built with a sanitizer, the unpatched server is not'
  if $our_cflags =~ /-fsanitize=/ && $stock_cflags !~ /-fsanitize=/;

# our library, built against the patched headers, installed into a copy of
# the unpatched installation
my $pkglibdir = `pg_config --pkglibdir`;
chomp $pkglibdir;
ok(-e "$pkglibdir/pg_lockstat.so", 'pg_lockstat library is installed');
my $install = LockStatTest::unpatched_install($stock_pg_config);

my $node =
  PostgreSQL::Test::Cluster->new('unpatched', install_path => $install);
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'pg_lockstat'
pg_lockstat.spin_strategy = 'ttas'
});

# Check one inactive server: started, warned once, views refused, status
# explained.  $why is a pattern for the reason.
sub check_inactive
{
	my ($what, $why) = @_;
	my $logstart = -s $node->logfile;
	ok($node->start(fail_ok => 1), "$what: the server starts");
	my $log = slurp_file($node->logfile, $logstart);
	my @warnings = ($log =~ /WARNING:  pg_lockstat is inactive/g);
	is(scalar(@warnings), 1, "$what: one WARNING at start-up");
	like($log, $why, "$what: the WARNING says why");
	like($log, qr/HINT:  Apply the patch series in \Q$patch_dir\E /,
		"$what: the hint names the patch directory");
	unlike($log, qr/undefined symbol/, "$what: no dynamic-linker error");

	# the first round creates the extension, the second finds it there
	is( $node->safe_psql(
			'postgres', q{CREATE EXTENSION IF NOT EXISTS pg_lockstat;
			  SELECT extversion FROM pg_extension WHERE extname = 'pg_lockstat'}),
		'1.0',
		"$what: CREATE EXTENSION works: pg_lockstat 1.0 is installed");

	for my $view (qw(pg_lwlock_stats pg_spinlock_stats pg_lwlock_wait_histogram))
	{
		my ($rc, $out, $err) = $node->psql('postgres',
			"\\set VERBOSITY verbose\nSELECT * FROM $view");
		isnt($rc, 0, "$what: $view fails");
		like($err, qr/ERROR:  55000: pg_lockstat is inactive/,
			"$what: $view fails with 55000");
		like($err, qr/HINT:  Apply the patch series in \Q$patch_dir\E /,
			"$what: $view gives the same hint");
	}
	my ($rc, $out, $err) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT pg_lockstat_reset()");
	like($err, qr/ERROR:  55000: pg_lockstat is inactive/,
		"$what: pg_lockstat_reset() fails with 55000");

	my $status = $node->safe_psql('postgres',
		"SELECT counting, inactive_reason FROM pg_lockstat_status");
	like($status, qr/^f\|/, "$what: pg_lockstat_status says counting is off");
	like($status, $why, "$what: pg_lockstat_status says why");

	# the GUCs exist, so the settings are kept and shown, but do nothing
	is($node->safe_psql('postgres', 'SHOW pg_lockstat.spin_strategy'),
		'ttas', "$what: the GUCs are defined");
	is($node->safe_psql('postgres', 'SELECT 42'), '42', "$what: server up");
	$node->stop;
}

check_inactive('no core patch',
	qr/built without the pg_lockstat core patch: it does not export the symbol "LWLockStatsVersion"/
);

# Core patches that this library cannot use.  Stand in for each with a
# library, loaded into the unpatched server with LD_PRELOAD, that exports
# the interface version, the counter row size and, for the last case, the
# first counting points the library looks up.
my $fake_dir = PostgreSQL::Test::Utils::tempdir;
my $cc = `pg_config --cc`;
chomp $cc;
sub fake_core
{
	my ($name, $version, $row_size, $more) = @_;
	open(my $fh, '>', "$fake_dir/$name.c")
	  or die "could not write $name.c: $!";
	print $fh "#include <stddef.h>\n"
	  . "const int LWLockStatsVersion = $version;\n"
	  . "const size_t LWLockStatsRowSize = $row_size;\n"
	  . ($more // '');
	close $fh;
	system_or_bail(split(/ /, $cc), '-shared', '-fPIC', '-o',
		"$fake_dir/$name.so", "$fake_dir/$name.c");
	return "$fake_dir/$name.so";
}

# An ASan build (make test-asan) refuses to start when a library preloaded
# before its runtime is not built with ASan, as the stand-in is not; the
# stand-in has no memory to check, so that check is turned off.
my $asan_options = join(':',
	grep { length } ($ENV{ASAN_OPTIONS} // ''), 'verify_asan_link_order=0');

# another version: the series before its counting points were looked up one
# by one (6, which exported one struct, LockStatsCore, and does not export
# LWLockStatsVersion, is refused above as "no core patch"), or a later one
{
	local $ENV{LD_PRELOAD} = fake_core('other_version', 99, 64);
	local $ENV{ASAN_OPTIONS} = $asan_options;
	check_inactive('another core patch version',
		qr/The server has core patch version 99, but this pg_lockstat library was built for version 7\./
	);
}

# this version, but counter rows of another size (a row layout this
# library would misread)
{
	local $ENV{LD_PRELOAD} = fake_core('row_size', 7, 56);
	local $ENV{ASAN_OPTIONS} = $asan_options;
	check_inactive('a core patch with other counter rows',
		qr/The server's core patch \(version 7\) has LWLock counter rows of 56 bytes, but this pg_lockstat library was built for rows of 64 bytes\./
	);
}

# this version and row size, but without a counting point that the library
# looks up (here everything after the spin strategy)
{
	local $ENV{LD_PRELOAD} =
	  fake_core('missing_point', 7, 64, "int spin_strategy = 0;\n");
	local $ENV{ASAN_OPTIONS} = $asan_options;
	check_inactive('a core patch without some counting points',
		qr/The server's core patch \(version 7\) does not export the symbol "spin_min_spins_per_delay", which this pg_lockstat library uses\./
	);
}

# without preload the same server works too
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''");
$node->start;
my ($rc, $stdout, $stderr) = $node->psql('postgres', "LOAD 'pg_lockstat';");
is($rc, 0, 'LOAD on an unpatched server is harmless');
$node->stop;

done_testing();
