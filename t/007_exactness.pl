# Copyright (c) 2026, pg_lockstat developers
#
# Exactness under concurrency.  8 writer sessions take the lockstat_test
# LWLock in shared, exclusive and conditional mode, with holds of 0-20 us,
# while 3 reader sessions record every read of pg_lockstat_status and
# pg_lwlock_stats into tables and one session calls pg_lockstat_reset()
# every 50 ms.  Over all recorded reads:
# - no counter is ever negative (nor an underflow shown as a huge number);
# - blk_pct and spin_delay_pct lie in [0, 100] and add up to 100 per read;
# - stats_reset never moves back within a session, and every value seen is
#   the start-up time or one returned by pg_lockstat_reset();
# - between two reads of a session under the same reset, no counter of the
#   lockstat_test tranche decreases;
# - blocks of lockstat_test never exceed its acquisitions.
# The same is checked for 5000 reads taken right after a reset while the 8
# writers contend exclusively (a woken waiter that loses the lock again used
# to show its block before its acquisition).
# Then, with the resetter stopped and one last reset while the writers are
# idle, 8 concurrent writers run a known mixed workload, and the totals are
# exactly the acquisitions made: sh_acquires = the shared calls' n,
# ex_acquires = the exclusive calls' n plus what the conditional calls got.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $num_writers = 8;
my @modes = qw(shared exclusive conditional);

my $node = LockStatTest::new_node('exactness', "max_connections = 40");

# Readers record their reads here.  Each read is one call of take_sample(),
# which reads stats_reset before and after pg_lwlock_stats, so that a read
# is known to have used the baseline of that reset when both are equal.
$node->safe_psql(
	'postgres', q{
CREATE UNLOGGED TABLE stop (what text);
CREATE UNLOGGED TABLE resets (id bigserial PRIMARY KEY, ts timestamptz);
CREATE SEQUENCE read_ids;
CREATE UNLOGGED TABLE reads (read_id bigint PRIMARY KEY, session int,
	reset_before timestamptz, reset_after timestamptz);
CREATE UNLOGGED TABLE samples AS
	SELECT 0::bigint AS read_id, * FROM pg_lwlock_stats WITH NO DATA;
CREATE INDEX ON samples (read_id);
CREATE UNLOGGED TABLE ops (writer int, mode text, n int, got bigint);

CREATE FUNCTION take_sample(session int) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
	id bigint;
	r0 timestamptz;
	r1 timestamptz;
BEGIN
	IF EXISTS (SELECT FROM stop WHERE what = 'readers') THEN
		RETURN NULL;
	END IF;
	id := nextval('read_ids');
	SELECT stats_reset INTO r0 FROM pg_lockstat_status;
	INSERT INTO samples SELECT id, v.* FROM pg_lwlock_stats v;
	SELECT stats_reset INTO r1 FROM pg_lockstat_status;
	INSERT INTO reads VALUES (id, session, r0, r1);
	RETURN id;
END $$;

-- the value of stats_reset before any reset: from server start
INSERT INTO resets (id, ts) SELECT 0, stats_reset FROM pg_lockstat_status;
});

# Start $num_writers sessions that wait at a barrier and then run
# @$scripts[$w - 1], all together.
sub start_writers
{
	my ($scripts) = @_;
	return LockStatTest::start_together($node, 7,
		@$scripts[ 0 .. $num_writers - 1 ]);
}

# Wait for writers to finish; the number that exited with an error
sub finish_writers
{
	my $failed = 0;
	foreach my $h (@_)
	{
		$failed++ unless $h->quit;
	}
	return $failed;
}

# --- the readers and the resetter ---------------------------------------

my @readers;
my @intervals = (0.005, 0.01, 0.02);
foreach my $s (1 .. @intervals)
{
	my $h = $node->background_psql('postgres');
	$h->query_until(qr/started/,
			"\\o /dev/null\n\\echo started\n"
		  . LockStatTest::watch_sql(
			"SELECT id FROM take_sample($s) AS id WHERE id IS NOT NULL",
			interval => $intervals[ $s - 1 ],
			until_empty => 1));
	push @readers, $h;
}

my $resetter = $node->background_psql('postgres');
$resetter->query_until(qr/started/,
		"\\o /dev/null\n\\echo started\n"
	  . LockStatTest::watch_sql(
		"INSERT INTO resets (ts) SELECT pg_lockstat_reset()\n"
		  . "  WHERE NOT EXISTS (SELECT FROM stop WHERE what = 'resetter')\n"
		  . "  RETURNING id",
		interval => 0.05,
		until_empty => 1));

$node->poll_query_until(
	'postgres',
	q{SELECT (SELECT count(DISTINCT session) FROM reads) = 3
	     AND (SELECT count(*) FROM resets) > 1}
) or die 'readers and resetter did not start';

# --- phase 1: mixed load under reads and resets -------------------------

my @scripts;
foreach my $w (1 .. $num_writers)
{
	my $script = '';
	foreach my $r (1 .. 4)
	{
		foreach my $k (0 .. 2)
		{
			my $m = ($w + $r + $k) % 3;
			my $n = $modes[$m] eq 'shared' ? 2000 : 1000;
			my $hold = ($w * 7 + $r * 3 + $m * 5) % 21;
			$script .=
			  "SELECT lockstat_test_lwlock('$modes[$m]', $n, $hold);\n";
		}
	}
	push @scripts, $script;
}
my $t0 = time();
is(finish_writers(start_writers(\@scripts)),
	0, 'phase 1: all writers finished without error');
note sprintf('phase 1 writers took %d s', time() - $t0);

# stop the resetter
$node->safe_psql('postgres', q{INSERT INTO stop VALUES ('resetter')});
ok($resetter->quit, 'the resetter stopped without error');
my $num_resets =
  $node->safe_psql('postgres', 'SELECT count(*) - 1 FROM resets');
cmp_ok($num_resets, '>=', 20,
	"the resetter reset $num_resets times during phase 1");

# --- phase 1b: reads right after a reset, under exclusive contention ----

# A read right after a reset shows small counts, so it is where a block
# counted without its acquisition shows.  The writers take the lock
# exclusively with a hold until told to stop; one session resets (recording
# each reset like the resetter) and reads, 5000 times.
my @excl;
foreach my $w (1 .. $num_writers)
{
	my $h = $node->background_psql('postgres');
	$h->query_until(qr/started/,
			"\\o /dev/null\n\\echo started\n"
		  . LockStatTest::watch_sql(
			"SELECT lockstat_test_lwlock('exclusive', 100, 1)\n"
			  . "  WHERE NOT EXISTS (SELECT FROM stop WHERE what = 'writers')",
			until_empty => 1));
	push @excl, $h;
}
$node->poll_query_until(
	'postgres',
	q{SELECT count(*) > 0 FROM pg_stat_activity
	  WHERE wait_event = 'lockstat_test'}
) or die 'exclusive writers did not contend';
my ($rr_reads, $rr_blocked, $rr_excess, $rr_max_excess) =
  split /\|/, $node->safe_psql(
	'postgres', q{
	CREATE FUNCTION reset_and_read(n int, OUT reads int, OUT blocked int,
		OUT excess int, OUT max_excess bigint)
	LANGUAGE plpgsql AS $$
	DECLARE
		b bigint;
		a bigint;
	BEGIN
		reads := 0; blocked := 0; excess := 0; max_excess := 0;
		FOR i IN 1 .. n LOOP
			INSERT INTO resets (ts) VALUES (pg_lockstat_reset());
			SELECT coalesce(sum(blocks), 0),
			       coalesce(sum(sh_acquires + ex_acquires), 0)
			INTO b, a
			FROM pg_lwlock_stats WHERE tranche = 'lockstat_test';
			reads := reads + 1;
			IF b > 0 THEN blocked := blocked + 1; END IF;
			IF b > a THEN
				excess := excess + 1;
				max_excess := greatest(max_excess, b - a);
			END IF;
		END LOOP;
	END $$;
	SELECT * FROM reset_and_read(5000);});
$node->safe_psql('postgres', q{INSERT INTO stop VALUES ('writers')});
is(finish_writers(@excl), 0, 'phase 1b: all writers finished without error');
note
  "phase 1b: $rr_reads reads right after a reset, $rr_blocked with blocks, "
  . "$rr_excess with more blocks than acquisitions (at most $rr_max_excess more)";
is($rr_reads, 5000, 'phase 1b: 5000 resets and reads');
cmp_ok($rr_blocked, '>=', 1,
	'phase 1b: reads right after a reset saw blocks');
cmp_ok($rr_max_excess, '<=', $num_writers,
	'phase 1b: blocks never exceeded acquisitions by more than the calls in progress'
);
is($rr_excess, 0,
	'phase 1b: blocks never exceeded acquisitions right after a reset');

# one last reset while every writer is idle
my $last_reset = $node->safe_psql('postgres',
	'INSERT INTO resets (ts) SELECT pg_lockstat_reset() RETURNING ts');

# --- phase 2: a known workload, still under reads -----------------------

@scripts = ();
foreach my $w (1 .. $num_writers)
{
	my $script = '';
	foreach my $r (1 .. 2)
	{
		foreach my $k (0 .. 2)
		{
			my $m = ($w + $r + $k) % 3;
			my $n =
				$modes[$m] eq 'shared'    ? 500 + 37 * $w
			  : $modes[$m] eq 'exclusive' ? 300 + 11 * $w
			  :                             3000;
			my $hold = ($w + 2 * $r + $m) % 6;
			$script .=
				"INSERT INTO ops SELECT $w, '$modes[$m]', $n, "
			  . "lockstat_test_lwlock('$modes[$m]', $n, $hold);\n";
		}
	}
	push @scripts, $script;
}
is(finish_writers(start_writers(\@scripts)),
	0, 'phase 2: all writers finished without error');

# the readers have read during phase 2 too
$node->poll_query_until(
	'postgres',
	qq{SELECT count(DISTINCT session) = 3 FROM reads
	   WHERE reset_before = '$last_reset'}
) or die 'readers did not read after the last reset';
$node->safe_psql('postgres', q{INSERT INTO stop VALUES ('readers')});
my $failed = 0;
foreach my $h (@readers)
{
	$failed++ unless $h->quit;
}
is($failed, 0, 'all readers stopped without error');

# --- exact totals of phase 2 --------------------------------------------

my ($exp_sh, $exp_ex, $cond_n, $cond_got, $bad_ops, $num_ops) =
  split /\|/, $node->safe_psql(
	'postgres', q{
	SELECT sum(got) FILTER (WHERE mode = 'shared'),
	       sum(got) FILTER (WHERE mode <> 'shared'),
	       sum(n) FILTER (WHERE mode = 'conditional'),
	       sum(got) FILTER (WHERE mode = 'conditional'),
	       count(*) FILTER (WHERE got < 0 OR got > n
	                        OR (mode <> 'conditional' AND got <> n)),
	       count(*)
	FROM ops});
is($num_ops, 6 * $num_writers, 'every phase 2 call recorded its result');
is($bad_ops, 0,
	'shared and exclusive calls acquired n times, conditional ones 0..n');
note "conditional calls acquired $cond_got of $cond_n";

my ($sh, $ex, $blocks, $reset_now) = split /\|/, $node->safe_psql(
	'postgres', q{
	SELECT sum(sh_acquires), sum(ex_acquires), sum(blocks),
	       (SELECT stats_reset FROM pg_lockstat_status)
	FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'});
is($sh, $exp_sh, "sh_acquires = $exp_sh, the shared acquisitions made");
is($ex, $exp_ex,
	"ex_acquires = $exp_ex, the exclusive and conditional acquisitions made");
cmp_ok($blocks, '>', 0, 'phase 2 had contention (blocks)');
cmp_ok($blocks, '<=', $sh + $ex,
	'at rest, blocks do not exceed acquisitions');
is($reset_now, $last_reset, 'stats_reset is the last reset');

# --- invariants over every recorded read --------------------------------

my ($num_reads, $min_per_session, $num_seen_resets,
	$busy_reads, $blocked_reads)
  = split /\|/, $node->safe_psql(
	'postgres', q{
	SELECT (SELECT count(*) FROM reads),
	       (SELECT min(c) FROM (SELECT count(*) c FROM reads
	                            GROUP BY session) x),
	       (SELECT count(DISTINCT reset_before) FROM reads),
	       (SELECT count(*) FROM samples
	        WHERE tranche = 'lockstat_test' AND ex_acquires > 0),
	       (SELECT count(*) FROM samples
	        WHERE tranche = 'lockstat_test' AND blocks > 0)});
note "$num_reads reads, $busy_reads with lockstat_test acquisitions, "
  . "$blocked_reads with blocks, under $num_seen_resets resets";
cmp_ok($min_per_session, '>=', 50, 'every reader read at least 50 times');
cmp_ok($num_seen_resets, '>=', 10, 'the readers saw at least 10 resets');
cmp_ok($busy_reads, '>=', 20,
	'at least 20 reads saw lockstat_test acquisitions');
cmp_ok($blocked_reads, '>=', 1, 'reads saw lockstat_test blocks');

is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FROM samples
	WHERE sh_acquires < 0 OR ex_acquires < 0 OR blocks < 0
	   OR spin_delays < 0 OR dequeue_self < 0 OR wait_time < 0
	   OR sh_acquires > 1e15 OR ex_acquires > 1e15 OR blocks > 1e15
	   OR spin_delays > 1e15 OR dequeue_self > 1e15 OR wait_time > 1e9}),
	'0',
	'no counter of any tranche was ever negative or implausibly large');

is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FROM samples
	WHERE blk_pct < 0 OR blk_pct > 100
	   OR spin_delay_pct < 0 OR spin_delay_pct > 100
	   OR (blocks = 0) <> (blk_pct IS NULL OR blk_pct = 0)
	   OR (spin_delays = 0) <> (spin_delay_pct IS NULL OR spin_delay_pct = 0)}),
	'0',
	'blk_pct and spin_delay_pct were always within [0, 100]');

is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FROM
	  (SELECT sum(blocks) AS b, sum(blk_pct) AS bp,
	          sum(spin_delays) AS s, sum(spin_delay_pct) AS sp
	   FROM samples GROUP BY read_id) x
	WHERE (b = 0) <> (bp IS NULL) OR abs(bp - 100) > 1e-6
	   OR (s = 0) <> (sp IS NULL) OR abs(sp - 100) > 1e-6}),
	'0',
	'per read, blk_pct and spin_delay_pct add up to 100 (or are NULL)');

is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FROM
	  (SELECT reset_before, reset_after,
	          lag(reset_after) OVER (PARTITION BY session ORDER BY read_id)
	            AS prev_after
	   FROM reads) x
	WHERE reset_after < reset_before OR reset_before < prev_after}),
	'0',
	'stats_reset never moved back within a session');

is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FROM reads
	WHERE reset_before NOT IN (SELECT ts FROM resets)
	   OR reset_after NOT IN (SELECT ts FROM resets)}),
	'0',
	'every stats_reset seen is the start-up time or a value returned by a reset'
);

is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FROM
	  (SELECT ts, lag(ts) OVER (ORDER BY id) AS prev FROM resets) x
	WHERE ts < prev}),
	'0',
	'pg_lockstat_reset() never returned an earlier time than before');

# Consecutive reads of a session that both saw the same reset (before and
# after reading the counters) used the same baseline: the later one must
# not show less.  A tranche without a row counts as zero.
my ($pairs, $decreases) = split /\|/, $node->safe_psql(
	'postgres', q{
	WITH t AS (
	  SELECT r.session, r.read_id, r.reset_before, r.reset_after,
	         coalesce(s.sh_acquires, 0) AS sh, coalesce(s.ex_acquires, 0) AS ex,
	         coalesce(s.blocks, 0) AS blk, coalesce(s.spin_delays, 0) AS sd,
	         coalesce(s.dequeue_self, 0) AS dq, coalesce(s.wait_time, 0) AS wt
	  FROM reads r
	  LEFT JOIN samples s ON s.read_id = r.read_id AND s.tranche = 'lockstat_test'),
	l AS (
	  SELECT t.*,
	         lag(reset_before) OVER w AS p_before, lag(reset_after) OVER w AS p_after,
	         lag(sh) OVER w AS p_sh, lag(ex) OVER w AS p_ex, lag(blk) OVER w AS p_blk,
	         lag(sd) OVER w AS p_sd, lag(dq) OVER w AS p_dq, lag(wt) OVER w AS p_wt
	  FROM t WINDOW w AS (PARTITION BY session ORDER BY read_id))
	SELECT count(*),
	       count(*) FILTER (WHERE sh < p_sh OR ex < p_ex OR blk < p_blk
	                        OR sd < p_sd OR dq < p_dq OR wt < p_wt)
	FROM l
	WHERE reset_before = reset_after AND p_before = p_after
	  AND p_after = reset_before});
cmp_ok($pairs, '>=', 50,
	"$pairs pairs of consecutive reads under the same reset compared");
is($decreases, 0,
	'no lockstat_test counter decreased between reads under the same reset');

# A blocked LWLockAcquire counts its block when it first wakes up, and its
# acquisition only once it holds the lock, so a read can see at most one
# block without its acquisition per call in progress: one per writer.
my ($max_excess, $num_excess) = split /\|/, $node->safe_psql(
	'postgres', q{
	SELECT coalesce(max(blocks - sh_acquires - ex_acquires), 0),
	       count(*) FILTER (WHERE blocks > sh_acquires + ex_acquires)
	FROM samples WHERE tranche = 'lockstat_test'});
cmp_ok($max_excess, '<=', $num_writers,
	'lockstat_test blocks never exceeded acquisitions by more than the calls in progress'
);
is($num_excess, 0,
	'lockstat_test blocks never exceeded acquisitions in any read');

$node->stop;
done_testing();
