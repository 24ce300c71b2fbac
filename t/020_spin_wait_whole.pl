# Copyright (c) 2026, pg_lockstat developers
#
# Spin waits are counted whole when they end: resets that fall in the middle
# of spin waits do not split any wait's counts, so the probe equality
# tas_attempts + unlocked_skips = spins + contended holds exactly after
# them.  pg_spinlock_wait_histogram has one count per contended wait, and
# max_wait_time lies in its highest non-empty bucket.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

# ttas counts probes in s_lock(); short delays make the waits sleep too
my $node = LockStatTest::new_node('spin_wait_whole',
	"pg_lockstat.spin_strategy = 'ttas'\n"
	  . "pg_lockstat.min_delay_us = 50\n"
	  . "pg_lockstat.max_delay_us = 200\n");

my $site = q{FROM pg_spinlock_stats
	WHERE file = 'lockstat_test.c' AND func = 'lockstat_test_spinlock'};
my $hist = q{FROM pg_spinlock_wait_histogram
	WHERE file = 'lockstat_test.c' AND func = 'lockstat_test_spinlock'};

# Three sessions take the test spinlock $n times each and hold it $hold_us
# microseconds, while a fourth resets the counters every 20 ms for 0.5 s
# (longer on a loaded machine or under emulation).  At any moment two of
# them are in the middle of a spin wait.  A spinlock is unfair (its holder
# takes it again at once), so the waits are few and long whatever the
# hold: typically 1 to 10 after the last reset with 1 ms holds, and 4 to 30
# in the rounds of 100000 holds of 5 us.  Every round holds the lock for at
# least 3 s in all, so that the contention outlasts the resets: with 300
# holds of 1 ms (0.9 s) the last reset came after the last wait under
# ppc64le emulation, and no wait was left to count.  A wait that began before the last reset is counted
# whole after it.  All start together, released by an advisory lock that a
# gate session holds.
sub contend_with_resets
{
	my ($n, $hold_us) = @_;

	$_->quit foreach LockStatTest::start_together(
		$node, 20,
		("SELECT lockstat_test_spinlock($n, $hold_us);") x 3,
		q{DO $$BEGIN
			FOR i IN 1 .. 25 LOOP
				PERFORM pg_sleep(0.02);
				PERFORM pg_lockstat_reset();
			END LOOP;
		END$$;});
}

foreach my $round ([ 1, 1000, 1000 ], [ 2, 1000, 1000 ], [ 3, 1000, 1000 ],
	[ 4, 100000, 5 ], [ 5, 100000, 5 ])
{
	my ($n, $hold_us);
	($round, $n, $hold_us) = @$round;
	contend_with_resets($n, $hold_us);
	my $row = $node->safe_psql('postgres',
		"SELECT contended, spins, delays, tas_attempts, unlocked_skips $site");
	note("round $round: contended|spins|delays|tas_attempts|unlocked_skips = $row");
	isnt($row, '', "round $round: waits after the last reset were counted");
	is( $node->safe_psql('postgres',
			"SELECT tas_attempts + unlocked_skips = spins + contended $site"),
		't',
		"round $round: resets during spin waits split no wait's counts");
	is( $node->safe_psql('postgres',
			"SELECT (SELECT sum(count) $hist) = (SELECT contended $site)"),
		't',
		"round $round: the histogram counts every contended wait once");
}

# the longest wait lies in the highest non-empty bucket
is( $node->safe_psql(
		'postgres',
		"SELECT s.max_wait_time * 1000 >= h.bucket_lower_us
			AND (h.bucket_upper_us IS NULL
				 OR s.max_wait_time * 1000 < h.bucket_upper_us)
		 FROM (SELECT max_wait_time $site) s,
			  (SELECT bucket_lower_us, bucket_upper_us $hist
			   ORDER BY bucket_lower_us DESC LIMIT 1) h"),
	't',
	'max_wait_time lies in the highest non-empty bucket');

# waits that slept last at least the delay they slept
is( $node->safe_psql(
		'postgres',
		"SELECT delays = 0 OR max_wait_time >= 0.05 $site"),
	't',
	'a wait that slept lasted at least min_delay_us');

# a reset empties both views, the longest wait included
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is( $node->safe_psql('postgres',
		"SELECT (SELECT count(*) $site) + (SELECT count(*) $hist)"),
	'0', 'a reset empties pg_spinlock_stats and pg_spinlock_wait_histogram');
$node->safe_psql('postgres', 'SELECT lockstat_test_spinlock(10, 0)');
is($node->safe_psql('postgres', "SELECT count(*) $site"),
	'0', 'uncontended acquisitions are not waits');

# privileges, as for the other views
$node->safe_psql('postgres', 'CREATE ROLE regress_nobody LOGIN');
my ($rc, $stdout, $stderr) = $node->psql('postgres',
	'SELECT count(*) FROM pg_spinlock_wait_histogram',
	extra_params => [ '-U', 'regress_nobody' ]);
like(
	$stderr,
	qr/permission denied for view pg_spinlock_wait_histogram/,
	'a role without pg_read_all_stats cannot read the histogram');

done_testing();
