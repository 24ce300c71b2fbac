# Copyright (c) 2026, pg_lockstat developers
#
# "make clean" removes every build product of the checkout, the test
# module's and the files made from the counter table included, in both of
# the Makefile's modes: with PG_CONFIG (plain
# PGXS) and without (the patched server of build/).  Objects left behind
# would be linked into the next build for another server, as happened when
# the test module's were kept.  Run in a copy of the checkout's files with
# a stand-in product next to each source, so that nothing is compiled and
# the checkout's own build is not touched.

use strict;
use warnings FATAL => 'all';

use File::Copy qw(copy);
use File::Find;
use File::Path qw(make_path);
use PostgreSQL::Test::Utils;
use Test::More;

my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my $tmp = PostgreSQL::Test::Utils::tempdir;

# the files make reads: the Makefiles and the sources they name
my @files = ('Makefile', 'pg_lockstat.control', 'META.json',
	glob('extension/*'), glob('test/lockstat_test/*'),
	glob('tools/pg_lockstat_top/*'));
# the files made from the counter table (scripts/counters.pl)
my @made =
  ('extension/pg_lockstat--1.0.sql', 'integrations/prometheus/pg_lockstat.yaml');
my %made = map { $_ => 1 } @made;
@files =
  grep { -f $_ && !/\.(o|so|bc)$/ && !m{/pg_lockstat_top$} && !$made{$_} } @files;

# the products of a build: each .c file's object, the libraries, the client
# and the files made from the counter table
my @products = (
	'pg_lockstat.so', 'test/lockstat_test/lockstat_test.so',
	'tools/pg_lockstat_top/pg_lockstat_top', @made,
	(map { s/\.c$/.o/r } grep { /\.c$/ } @files));

sub products_left
{
	my ($dir) = @_;
	my @left;
	find(
		sub {
			my $name = $File::Find::name =~ s{^\Q$dir\E/}{}r;
			push @left, $name
			  if -f $_
			  && (/\.(o|so|bc)$/ || $_ eq 'pg_lockstat_top' || $made{$name});
		},
		$dir);
	return join(' ', sort @left);
}

foreach my $mode ([ 'with PG_CONFIG', "PG_CONFIG=$pg_config" ],
	[ 'without PG_CONFIG', () ])
{
	my ($name, @args) = @$mode;
	my $dir = "$tmp/" . ($name =~ s/\W/_/gr);
	make_path($dir);
	foreach my $f (@files)
	{
		make_path("$dir/" . ($f =~ s{/[^/]*$}{}r)) if $f =~ m{/};
		copy($f, "$dir/$f") or die "copy $f: $!";
	}
	foreach my $p (@products)
	{
		make_path("$dir/" . ($p =~ s{/[^/]*$}{}r)) if $p =~ m{/};
		open(my $fh, '>', "$dir/$p") or die "$dir/$p: $!";
		close($fh);
	}
	is(products_left($dir), join(' ', sort @products),
		"$name: the stand-in products are there");
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run([ 'make', '-C', $dir, @args, 'clean' ],
		'>', \$out, '2>', \$err);
	ok($ok, "$name: make clean succeeds") or diag($err);
	is(products_left($dir), '', "$name: make clean leaves no build product");
}

done_testing();
