# Copyright (c) 2026, pg_lockstat developers
#
# Spin waits are counted whole when they end: resets that fall in the middle
# of spin waits (for certain: a holder keeps the test spinlock through the
# resets while three sessions wait for it) do not split any wait's counts,
# so the probe equality tas_attempts + unlocked_skips = spins + contended
# holds exactly after them.  pg_spinlock_wait_histogram has one count per contended wait, and
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
# microseconds, while the counters are reset 25 times, 20 ms apart.  A
# holder (not counted) keeps the spinlock from before the three start until
# the last reset has returned: the three wait inside s_lock() (spinning and
# sleeping) through every reset, on any machine, and their waits end after
# the last one, which must count each of them whole.  From the release on,
# they contend with each other for their $n acquisitions (the few waits of
# an unfair spinlock, a holder taking it again at once), all counted after
# the last reset too.
sub contend_with_resets
{
	my ($n, $hold_us) = @_;

	# connected first, so that the hold lasts only while they start
	my @h = map { $node->background_psql('postgres') } 1 .. 3;
	my $holder = LockStatTest::hold_spinlock($node);
	my $since = LockStatTest::spin_waits($node);
	$_->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_spinlock($n, $hold_us);\n")
	  foreach @h;
	LockStatTest::wait_for_spin_waiters($node, $since, 3);
	$node->safe_psql(
		'postgres', q{DO $$BEGIN
			FOR i IN 1 .. 25 LOOP
				PERFORM pg_sleep(0.02);
				PERFORM pg_lockstat_reset();
			END LOOP;
		END$$;});
	LockStatTest::release_holds($node);
	$_->quit foreach @h;
	$holder->quit;
}

foreach my $round ([ 1, 300, 1000 ], [ 2, 300, 1000 ], [ 3, 300, 1000 ],
	[ 4, 30000, 5 ], [ 5, 30000, 5 ])
{
	my ($n, $hold_us);
	($round, $n, $hold_us) = @$round;
	contend_with_resets($n, $hold_us);
	my $row = $node->safe_psql('postgres',
		"SELECT contended, spins, delays, tas_attempts, unlocked_skips $site");
	note("round $round: contended|spins|delays|tas_attempts|unlocked_skips = $row");
	cmp_ok((split(/\|/, $row))[0] // 0, '>=', 3,
		"round $round: the 3 waits through the resets were counted after the last");
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
