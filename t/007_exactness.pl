# Copyright (c) 2026, pg_lockstat developers
#
# Exactness under concurrency.  8 writer sessions take the lockstat_test
# LWLock in shared, exclusive and conditional mode, with holds of 0-20 us,
# while 3 reader sessions record every read of pg_lockstat_status and
# pg_lwlock_stats into tables and one session calls pg_lockstat_reset()
# every 50 ms.  The writers go on until the recorded reads and resets reach
# what the checks below need (at least 20 resets, 50 reads per reader, 10
# resets seen, 20 reads with lockstat_test acquisitions and one with its
# blocks, 50 pairs of reads under the same reset), however long that takes.
# Over all recorded reads:
# - no counter is ever an underflow (shown as a huge number);
# - stats_reset never moves back within a session, and every value seen is
#   the start-up time or one returned by pg_lockstat_reset();
# - between two reads of a session under the same reset, no counter of the
#   lockstat_test tranche decreases;
# - blocks of lockstat_test never exceed its acquisitions.
# The same is checked for reads taken right after a reset while the 8
# writers contend exclusively (a woken waiter that loses the lock again used
# to show its block before its acquisition): first a reset while all 8
# sleep behind a holder of the lock, then reads after the holder let go
# until one shows their blocks; then 5000 resets, each followed by a read.
# Then, with the resetter stopped and one last reset while no writer runs,
# 8 concurrent writers, started behind a holder of the lock that lets go
# once all 8 sleep on it, run a known mixed workload, and the totals are
# exactly the acquisitions made: sh_acquires = the shared calls' n,
# ex_acquires = the exclusive calls' n plus what the conditional calls got,
# with a block for each of the 8 writers at least.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

# Every background session of this file runs one command (a \watch loop,
# or a hold) through a whole phase of fixed work, and such a session's
# bound on a hang is the TAP timeout from the start of that command: under
# AddressSanitizer beside other work, the writers of phase 1b ran past it
# (200 s for its 5000 resets).  So the bound is five TAP timeouts here.
$PostgreSQL::Test::Utils::timeout_default *= 5;

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
-- reads of phase 1b: kind 'straddled' or 'loop', with what they saw
CREATE UNLOGGED TABLE rr (kind text, blocks bigint, acquires bigint);

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

# Writer w takes the lock in rounds r = 1, 2, ... of three calls, one per
# mode, with holds of 0-20 us, until stop holds 'phase 1'.
$node->safe_psql(
	'postgres', q{
CREATE PROCEDURE writer(w int) LANGUAGE plpgsql AS $$
DECLARE
	modes text[] := ARRAY['shared', 'exclusive', 'conditional'];
	r int := 0;
	m int;
BEGIN
	WHILE NOT EXISTS (SELECT FROM stop WHERE what = 'phase 1') LOOP
		r := r + 1;
		FOR k IN 0 .. 2 LOOP
			m := (w + r + k) % 3;
			PERFORM lockstat_test_lwlock(modes[m + 1],
				CASE WHEN m = 0 THEN 2000 ELSE 1000 END,
				(w * 7 + r * 3 + m * 5) % 21);
		END LOOP;
	END LOOP;
END $$;});

# What the checks over the recorded reads need, reached: at least 20 resets,
# 50 reads of each reader, 10 distinct resets seen, 20 reads that show
# lockstat_test acquisitions and one that shows its blocks, 50 pairs of
# consecutive reads of a session under the same reset (as counted below).
# All of these only grow while the test goes on.
my $phase1_done = q{
SELECT (SELECT count(*) - 1 FROM resets) >= 20
   AND (SELECT min(c) FROM (SELECT count(*) c FROM reads
                            GROUP BY session) x) >= 50
   AND (SELECT count(DISTINCT reset_before) FROM reads) >= 10
   AND (SELECT count(*) FROM (SELECT FROM samples
        WHERE tranche = 'lockstat_test' AND ex_acquires > 0 LIMIT 20) x) = 20
   AND EXISTS (SELECT FROM samples
               WHERE tranche = 'lockstat_test' AND blocks > 0)
   AND (SELECT count(*) FROM
         (SELECT reset_before, reset_after,
                 lag(reset_before) OVER w AS p_before,
                 lag(reset_after) OVER w AS p_after
          FROM reads WINDOW w AS (PARTITION BY session ORDER BY read_id)) l
        WHERE reset_before = reset_after AND p_before = p_after
          AND p_after = reset_before) >= 50};

my $t0 = time();
my @writers = LockStatTest::start_together($node, 7,
	map { "CALL writer($_);" } 1 .. $num_writers);
ok($node->poll_query_until('postgres', $phase1_done),
	'phase 1: the writers ran until the reads and resets needed were recorded');
$node->safe_psql('postgres', q{INSERT INTO stop VALUES ('phase 1')});
is(finish_writers(@writers), 0, 'phase 1: all writers finished without error');
note sprintf('phase 1 writers ran for %d s', time() - $t0);

# stop the resetter
$node->safe_psql('postgres', q{INSERT INTO stop VALUES ('resetter')});
ok(LockStatTest::end_session($resetter),
	'the resetter stopped without error');
my $num_resets =
  $node->safe_psql('postgres', 'SELECT count(*) - 1 FROM resets');
cmp_ok($num_resets, '>=', 20,
	"the resetter reset $num_resets times during phase 1");

# --- phase 1b: reads right after a reset, under exclusive contention ----

# A read right after a reset shows small counts, so it is where a block
# counted without its acquisition shows.  The writers take the lock
# exclusively with a hold until told to stop.  First they start behind a
# holder of the lock; once all of them sleep, a reset, and the holder lets
# go: reads follow until one shows the blocks of the woken writers (which
# all slept across the reset).  Then one session resets (recording each
# reset like the resetter) and reads, 5000 times.
$node->safe_psql(
	'postgres', q{
CREATE FUNCTION read_after_reset(kind text) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
	b bigint;
	a bigint;
BEGIN
	SELECT coalesce(sum(blocks), 0), coalesce(sum(sh_acquires + ex_acquires), 0)
	INTO b, a
	FROM pg_lwlock_stats WHERE tranche = 'lockstat_test';
	INSERT INTO rr VALUES (kind, b, a);
	RETURN b > 0;
END $$;
CREATE FUNCTION reset_and_read(n int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1 .. n LOOP
		INSERT INTO resets (ts) VALUES (pg_lockstat_reset());
		PERFORM read_after_reset('loop');
	END LOOP;
END $$;});

my $holder = LockStatTest::hold_lwlock($node, 'exclusive');
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
LockStatTest::wait_for_waiters($node, $num_writers);
$node->safe_psql('postgres',
	'INSERT INTO resets (ts) SELECT pg_lockstat_reset()');
LockStatTest::release_holds($node);
ok( $node->poll_query_until(
		'postgres', q{SELECT read_after_reset('straddled')}),
	'phase 1b: a read after a reset that all writers slept across shows their blocks'
);
$node->safe_psql('postgres', 'SELECT reset_and_read(5000)');
$node->safe_psql('postgres', q{INSERT INTO stop VALUES ('writers')});
is(finish_writers($holder, @excl),
	0, 'phase 1b: the holder and all writers finished without error');
my ($rr_straddled, $rr_reads, $rr_blocked, $rr_excess, $rr_max_excess) =
  split /\|/, $node->safe_psql(
	'postgres', q{
	SELECT count(*) FILTER (WHERE kind = 'straddled'),
	       count(*) FILTER (WHERE kind = 'loop'),
	       count(*) FILTER (WHERE blocks > 0),
	       count(*) FILTER (WHERE blocks > acquires),
	       coalesce(max(blocks - acquires) FILTER (WHERE blocks > acquires), 0)
	FROM rr});
note
  "phase 1b: $rr_straddled reads after the reset that the writers slept across, "
  . "$rr_reads reads right after a reset; $rr_blocked of them with blocks, "
  . "$rr_excess with more blocks than acquisitions (at most $rr_max_excess more)";
is($rr_reads, 5000, 'phase 1b: 5000 resets and reads');
cmp_ok($rr_blocked, '>=', 1,
	'phase 1b: reads right after a reset saw blocks');
is($rr_excess, 0,
	'phase 1b: blocks never exceeded acquisitions right after a reset');

# one last reset while no writer runs, and while a holder has the lock, so
# that its acquisition is not counted after the reset; the phase 2 writers
# start behind it
$holder = LockStatTest::hold_lwlock($node, 'exclusive');
my $last_reset = $node->safe_psql('postgres',
	'INSERT INTO resets (ts) SELECT pg_lockstat_reset() RETURNING ts');

# --- phase 2: a known workload, still under reads -----------------------

my @scripts;
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
# Each writer sleeps behind the holder in its first call, or in its second
# if the first is conditional (which gets nothing while the lock is held):
# the holder lets go once all of them sleep.
my @phase2;
foreach my $script (@scripts)
{
	my $h = $node->background_psql('postgres');
	$h->query_until(qr/started/, "\\echo started\n$script");
	push @phase2, $h;
}
LockStatTest::wait_for_waiters($node, $num_writers);
LockStatTest::release_holds($node);
is(finish_writers($holder, @phase2),
	0, 'phase 2: the holder and all writers finished without error');

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
	       count(*) FILTER (WHERE got > n
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
cmp_ok($blocks, '>=', $num_writers,
	'phase 2: each writer that slept behind the holder counted a block');
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

# A count below its reset's baseline would be a uint64 above 2^63, which
# the view shows as the largest bigint (never as a negative number).
is( $node->safe_psql(
		'postgres', q{
	SELECT count(*) FROM samples
	WHERE sh_acquires > 1e15 OR ex_acquires > 1e15 OR blocks > 1e15
	   OR spin_delays > 1e15 OR dequeue_self > 1e15 OR wait_time > 1e9}),
	'0',
	'no counter of any tranche was ever implausibly large (an underflow)');

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

# An LWLockAcquire that slept counts its block and its acquisition in one
# store, so no read sees the block alone.
my ($max_excess, $num_excess) = split /\|/, $node->safe_psql(
	'postgres', q{
	SELECT coalesce(max(blocks - sh_acquires - ex_acquires)
	                  FILTER (WHERE blocks > sh_acquires + ex_acquires), 0),
	       count(*) FILTER (WHERE blocks > sh_acquires + ex_acquires)
	FROM samples WHERE tranche = 'lockstat_test'});
is($num_excess, 0,
	"lockstat_test blocks never exceeded acquisitions in any read (at most by $max_excess)");

$node->stop;
done_testing();
