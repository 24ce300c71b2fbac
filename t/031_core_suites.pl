# Copyright (c) 2026, pg_lockstat developers
#
# PostgreSQL's own regression suite (parallel schedule) and isolation suite,
# from the source tree that the server under test was built from, run
# against that server with pg_lockstat preloaded, pg_lockstat.track = on and
# a spin strategy other than the default (ttas_backoff): the core patch and
# the extension must change no result of the server's own tests.  The
# source tree is the one scripts/build-server.sh names in
# <install>/.pg_lockstat_build_src; a server installed some other way skips
# this test.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $bindir = `pg_config --bindir`;
chomp $bindir;
my $src_file = "$bindir/../.pg_lockstat_build_src";
plan skip_all =>
  "no $src_file: the server was not built by scripts/build-server.sh"
  unless -f $src_file;
my $src = slurp_file($src_file);
chomp $src;
my $regress_dir = "$src/src/test/regress";
my $isolation_dir = "$src/src/test/isolation";

# Under emulation (make test-arch) the suites' data and regress.so come
# from the guest's build tree, and the programs that run them from the
# native one of the same version.
my $prog_src = $src;
if (defined LockStatTest::guest_arch())
{
	my $native = LockStatTest::native_install();
	$prog_src = slurp_file("$native/.pg_lockstat_build_src");
	chomp $prog_src;
}
my $pg_regress = "$prog_src/src/test/regress/pg_regress";
my $pg_isolation_regress = "$prog_src/src/test/isolation/pg_isolation_regress";
for my $f ($pg_regress, "$regress_dir/parallel_schedule",
	"$regress_dir/regress.so", $pg_isolation_regress,
	"$prog_src/src/test/isolation/isolationtester",
	"$isolation_dir/isolation_schedule")
{
	BAIL_OUT("$f is missing from the build tree") unless -e $f;
}

# the first 200 lines of a failed suite's differences
sub diag_diffs
{
	my ($file) = @_;
	return diag("no $file") unless -f $file;
	my @lines = split /\n/, slurp_file($file);
	diag(join("\n", @lines[ 0 .. ($#lines < 199 ? $#lines : 199) ]));
}

my $node = PostgreSQL::Test::Cluster->new('core_suites');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'pg_lockstat'
pg_lockstat.track = on
pg_lockstat.spin_strategy = 'ttas_backoff'
max_connections = 30
log_statement = none
});
$node->start;

is( $node->safe_psql(
		'postgres', 'SHOW pg_lockstat.spin_strategy'),
	'ttas_backoff',
	'the server runs under ttas_backoff');

# pg_regress looks for expected files in the current directory unless told
# otherwise (--expecteddir, 16 and later; before, under --inputdir): run it
# in the temporary directory, never in the checkout, whose expected/ holds
# pg_lockstat's own tests.
my $out = PostgreSQL::Test::Utils::tempdir;
chdir $out or die "chdir $out: $!";
my @server = ('--host=' . $node->host, '--port=' . $node->port,
	"--bindir=$bindir");
my @expected = LockStatTest::server_major() >= 16
  ? ("--expecteddir=$regress_dir") : ();
my @iso_expected = LockStatTest::server_major() >= 16
  ? ("--expecteddir=$isolation_dir") : ();

# As "make installcheck-parallel" and "make -C src/test/isolation
# installcheck" run them, with the outputs in our temporary directory.
my $rc = system($pg_regress, @server,
	"--inputdir=$regress_dir", @expected, "--dlpath=$regress_dir",
	"--outputdir=$out/regress", '--max-concurrent-tests=20',
	"--schedule=$regress_dir/parallel_schedule");
ok($rc == 0, 'the core regression suite passes')
  or diag_diffs("$out/regress/regression.diffs");

$rc = system($pg_isolation_regress, @server,
	"--inputdir=$isolation_dir", @iso_expected, "--outputdir=$out/isolation",
	"--schedule=$isolation_dir/isolation_schedule");
ok($rc == 0, 'the isolation suite passes')
  or diag_diffs("$out/isolation/regression.diffs");

# pg_lockstat counted all along: the suites' sessions acquired LWLocks of
# many tranches, and blocked on some.
$node->safe_psql('postgres', 'CREATE EXTENSION pg_lockstat');
my ($counting, $tranches, $acquires) = split /\|/, $node->safe_psql(
	'postgres', q{
	SELECT s.counting, count(*), sum(l.ex_acquires + l.sh_acquires)
	FROM pg_lockstat_status s, pg_lwlock_stats l
	WHERE l.ex_acquires + l.sh_acquires > 0
	GROUP BY s.counting});
is($counting, 't', 'pg_lockstat counted during the suites');
cmp_ok($tranches, '>=', 10, 'LWLocks of at least 10 tranches were acquired');
cmp_ok($acquires, '>', 1_000_000, 'more than a million LWLock acquisitions counted');

$node->stop;
my $log = slurp_file($node->logfile);
unlike($log, qr/terminated by signal|PANIC:|was terminated by exception/,
	'no server process crashed');

done_testing();
