# Copyright (c) 2026, pg_lockstat developers
#
# pg_lwlock_utilization and pg_lwlock_instance_utilization against holds
# whose length is known: the test lock held a known time by one session
# gives an estimated hold time of at least the time it was held and at most
# the time the statement took, a busy fraction that is that estimate over
# the time since the reset, a ceiling that is its inverse, and, with every
# hold timed, a standard error of 0; busy-waited holds (lockstat_test_lwlock's
# busy, the ground truth of bench/ceiling.sh) timed at their length or more;
# with one hold in 10 timed, an estimate
# from the samples with a positive standard error bound that is the one the
# view's comment describes; a lock of the main array on its own.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

use LockStatTest;

my $node = LockStatTest::new_node('utilization',
	"pg_lockstat.hold_sample_every = 10\n");

my $util = q{FROM pg_lwlock_utilization
			 WHERE tranche = 'lockstat_test' AND mode = 'exclusive'};

# Every hold timed: 20 exclusive holds of 5 ms in one statement.
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my $t0 = Time::HiRes::time();
$node->safe_psql('postgres',
	q{SET pg_lockstat.hold_sample_every = 1;
	  SELECT lockstat_test_lwlock('exclusive', 20, 5000);});
my $stmt_ms = (Time::HiRes::time() - $t0) * 1000;
is( $node->safe_psql(
		'postgres',
		qq{SELECT acquires, samples, est_hold_time >= 100,
				  est_hold_time <= $stmt_ms,
				  elapsed_time >= est_hold_time,
				  busy > 0 AND busy <= 1,
				  abs(busy * elapsed_time - est_hold_time) < 1e-9 * est_hold_time,
				  abs(ceiling_factor * busy - 1) < 1e-9,
				  busy_se_max
		   $util}),
	'20|20|t|t|t|t|t|t|0',
	sprintf(
		'N = 1: 20 holds of 5 ms estimated at 100..%.0f ms, busy = estimate / elapsed, ceiling = 1 / busy, no sampling error',
		$stmt_ms));
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_lwlock_utilization
		  WHERE tranche = 'lockstat_test' AND mode = 'shared'}),
	'0', 'no row for a mode without a timed hold');

# Busy-waited holds (bench/ceiling.sh's lock of known hold time), every
# hold timed: 10 holds of 3 ms, each timed at 3 ms or more, so every sample
# is in the bucket [2048, 4096) us or above.
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is( $node->safe_psql(
		'postgres',
		q{SET pg_lockstat.hold_sample_every = 1;
		  SELECT lockstat_test_lwlock('exclusive', 10, 3000, true);}),
	'10', 'busy-waited holds: 10 acquisitions');
is( $node->safe_psql(
		'postgres',
		q{SELECT sum(count), coalesce(sum(count) FILTER (WHERE bucket_upper_us <= 2048), 0)
		  FROM pg_lwlock_hold_histogram
		  WHERE tranche = 'lockstat_test' AND mode = 'exclusive'}),
	'10|0', 'busy-waited holds of 3 ms: every sample 2048 us or more');
is( $node->safe_psql('postgres', qq{SELECT samples, est_hold_time >= 30 $util}),
	'10|t', 'busy-waited holds of 3 ms: estimated at 30 ms or more');

# One hold in 10 (postgresql.conf): 200 holds of 1 ms, 20 of them timed.
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$node->safe_psql('postgres',
	q{SELECT lockstat_test_lwlock('exclusive', 200, 1000)});
is( $node->safe_psql(
		'postgres',
		qq{SELECT acquires, samples BETWEEN 19 AND 20, est_hold_time >= 200,
				  busy_se_max > 0
		   $util}),
	'200|t|t|t',
	'N = 10: 200 holds of 1 ms estimated from their 20 samples at 200 ms or more, with a positive standard error bound');

# The bound takes each sample at its bucket's upper bound: recomputed here
# from the histogram, as the view's comment states it.
is( $node->safe_psql(
		'postgres',
		q{WITH h AS (
			SELECT sum(count * (bucket_upper_us / 1000.0) ^ 2)::float8 /
				   sum(count) AS m2
			FROM pg_lwlock_hold_histogram
			WHERE tranche = 'lockstat_test' AND mode = 'exclusive')
		  SELECT abs(u.busy_se_max -
					 u.acquires * sqrt((h.m2 - (s.ex_hold_time / s.ex_hold_samples) ^ 2) /
									   u.samples * (1 - u.samples::float8 / u.acquires)) /
					 u.elapsed_time) < 1e-6 * u.busy_se_max
		  FROM pg_lwlock_utilization u, h, pg_lwlock_stats s
		  WHERE u.tranche = 'lockstat_test' AND u.mode = 'exclusive'
			AND s.tranche = 'lockstat_test'}),
	't', 'busy_se_max is the histogram bound its comment describes');

# A lock of the main array, every hold timed: its own row.  AutoFile (main
# array index 35) is taken only by ALTER SYSTEM, so its counts are ours
# alone (as in t/018).
my $autofile = 35;
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$node->safe_psql('postgres',
	qq{SET pg_lockstat.hold_sample_every = 1;
	   SELECT lockstat_test_main_lwlock($autofile, 'exclusive', 1000);});
is( $node->safe_psql(
		'postgres',
		qq{SELECT tranche, acquires, samples, busy > 0,
				  abs(ceiling_factor * busy - 1) < 1e-9
		   FROM pg_lwlock_instance_utilization
		   WHERE main_index = $autofile AND mode = 'exclusive'}),
	'AutoFile|1000|1000|t|t',
	'an individual lock of the main array: its own acquisitions, all timed, busy and ceiling');
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_lwlock_instance_utilization
		  WHERE mode = 'shared' AND ceiling_factor IS NOT NULL}),
	'0', 'the ceiling is given for exclusive holds only');

done_testing();
