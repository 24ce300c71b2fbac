# Copyright (c) 2026, pg_lockstat developers
#
# The series' own test (patch 0007): the regression test of the test
# module src/test/modules/test_lock_stats, from the source tree that the
# server under test was built from, against that server without
# pg_lockstat, where the module alone drives the core's counting points
# (exact LWLock counts by mode, a blocked acquisition and the wait hook, a
# spin wait's counts, more than NUM_DELAYS short delays not declared
# stuck, S_LOCK() under every strategy).  Then with pg_lockstat preloaded,
# whose counters the module must not touch: it refuses with 55000.  It
# runs under emulation too (make test-arch).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my ($src, $prog_src) = LockStatTest::build_trees();
my $module = "$src/src/test/modules/test_lock_stats";
my $pg_regress = "$prog_src/src/test/regress/pg_regress";
foreach my $f ("$module/sql/test_lock_stats.sql", $pg_regress)
{
	BAIL_OUT("$f is missing from the build tree (the series has no test module?)")
	  unless -e $f;
}

my $node = PostgreSQL::Test::Cluster->new('core_module');
$node->init;
$node->start;

# As "make -C src/test/modules/test_lock_stats installcheck" does.
LockStatTest::run_regress($node, $pg_regress, $module,
	'the test module passes on the server without pg_lockstat',
	'test_lock_stats');

# With pg_lockstat preloaded, the counting points are in use.
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'pg_lockstat'\npg_lockstat.track = on\n");
$node->restart;
$node->safe_psql('postgres',
	'CREATE EXTENSION IF NOT EXISTS test_lock_stats; CREATE EXTENSION pg_lockstat');
foreach my $call ('test_lwlock_counting(10)', 'test_lwlock_blocked()',
	'test_spin_wait_counting(10, 5)', 'test_spin_strategies()')
{
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT * FROM $call");
	like($stderr,
		qr/ERROR:  55000: test_lock_stats must run without a lock statistics extension/,
		"$call refuses to run beside pg_lockstat");
}
is($node->safe_psql('postgres', 'SELECT counting FROM pg_lockstat_status'),
	't', 'pg_lockstat still counts');

$node->stop;
LockStatTest::no_crash($node);

done_testing();
