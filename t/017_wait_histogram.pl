# Copyright (c) 2026, pg_lockstat developers
#
# pg_lwlock_wait_histogram and pg_lwlock_stats.max_wait_time: a blocked
# acquisition is counted once, in the bucket that holds its whole wait, and
# is the maximum; under contention the histogram adds up to blocks exactly
# (one entry per blocked acquisition, however often it slept), its total
# wait equals wait_time, and the maximum lies in the highest non-empty
# bucket; a reset empties both; the view is for pg_read_all_stats only.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

use LockStatTest;

my $node = LockStatTest::new_node('wait_histogram');

my $hist = q{SELECT coalesce(sum(count), 0) FROM pg_lwlock_wait_histogram
	WHERE tranche = 'lockstat_test'};

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is($node->safe_psql('postgres', $hist), '0', 'no sleeps after a reset');

# the holder keeps the test lock exclusively until released; the waiter
# sleeps once.  Its wait lies within the bounds the test measures: at least
# from the moment it was seen waiting to the release, at most from before
# it started to after it finished.
my $t0 = Time::HiRes::time();
my ($holder, $waiter) = LockStatTest::block_waiter($node);
my $seen = Time::HiRes::time();
my $released = Time::HiRes::time();
LockStatTest::end_block($node, $holder, $waiter);
my $t1 = Time::HiRes::time();
my $min_ms = ($released - $seen) * 1000;
my $max_ms = ($t1 - $t0) * 1000;

is($node->safe_psql('postgres', $hist), '1', 'the one blocked acquisition is counted once');
is( $node->safe_psql(
		'postgres',
		qq{SELECT blocks, wait_time = max_wait_time,
				 max_wait_time >= $min_ms, max_wait_time <= $max_ms
		  FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'}),
	'1|t|t|t',
	sprintf('one block; its wait is both the wait time and the maximum, within %.1f..%.1f ms',
		$min_ms, $max_ms));
is( $node->safe_psql(
		'postgres',
		q{SELECT h.bucket_lower_us <= s.max_wait_time * 1000
				 AND s.max_wait_time * 1000 < h.bucket_upper_us,
				 h.bucket_upper_us = 2 * greatest(h.bucket_lower_us, 1) - (h.bucket_lower_us = 0)::int
		  FROM pg_lwlock_wait_histogram h
		  JOIN pg_lwlock_stats s USING (tranche_id)
		  WHERE h.tranche = 'lockstat_test'}),
	't|t',
	'the wait is in the power-of-two bucket that holds its duration');

# contention: 4 sessions, 3000 exclusive acquisitions each, holding 20 us,
# where woken waiters often lose the lock again and sleep once more.  They
# start behind a holder and are let go together once all four sleep, so
# that there are at least four blocks on any machine.
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$holder = LockStatTest::hold_lwlock($node, 'exclusive');
my @h;
foreach my $i (1 .. 4)
{
	push @h, $node->background_psql('postgres');
	$h[-1]->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_lwlock('exclusive', 3000, 20);\n");
}
LockStatTest::wait_for_waiters($node, 4);
LockStatTest::release_holds($node);
$holder->quit;
$_->quit foreach @h;
is( $node->safe_psql(
		'postgres',
		q{SELECT s.blocks >= 4, sum(h.count) = s.blocks,
				 max(h.bucket_lower_us) <= s.max_wait_time * 1000,
				 s.max_wait_time * 1000 < coalesce(
					 (SELECT bucket_upper_us FROM pg_lwlock_wait_histogram
					  WHERE tranche = 'lockstat_test'
					  ORDER BY bucket_lower_us DESC LIMIT 1)::float8, 'Infinity'),
				 s.max_wait_time <= s.wait_time
		  FROM pg_lwlock_wait_histogram h
		  JOIN pg_lwlock_stats s USING (tranche_id)
		  WHERE h.tranche = 'lockstat_test'
		  GROUP BY s.blocks, s.max_wait_time, s.wait_time}),
	't|t|t|t|t',
	'under contention: one entry per block, the maximum is in the highest bucket');

# a reset empties the distribution and the maximum
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_lwlock_wait_histogram}),
	'0', 'a reset empties every bucket');
$node->safe_psql('postgres', q{SELECT lockstat_test_lwlock('exclusive', 5)});
is( $node->safe_psql(
		'postgres',
		q{SELECT max_wait_time FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'}),
	'0', 'and the maximum');

# privileges: like pg_lwlock_stats
$node->safe_psql('postgres',
	'CREATE ROLE regress_nobody LOGIN; CREATE ROLE regress_monitor LOGIN IN ROLE pg_read_all_stats;');
my ($rc, $stdout, $stderr) = $node->psql('postgres',
	'SELECT count(*) FROM pg_lwlock_wait_histogram',
	extra_params => [ '-U', 'regress_nobody' ]);
like($stderr, qr/permission denied for view pg_lwlock_wait_histogram/,
	'a role without pg_read_all_stats cannot read the view');
($rc, $stdout, $stderr) = $node->psql('postgres',
	'SELECT count(*) >= 0 FROM pg_lwlock_wait_histogram',
	extra_params => [ '-U', 'regress_monitor' ]);
is($stdout, 't', 'pg_read_all_stats can');

done_testing();
