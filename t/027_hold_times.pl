# Copyright (c) 2026, pg_lockstat developers
#
# Sampled LWLock hold times (pg_lockstat.hold_sample_every): with every
# hold timed, each hold of the test lock is counted once, lasts at least as
# long as it was held and at most as long as the statement, and falls in
# the right bucket; nested holds, released in either order, are each timed
# once for as long as each lasted; a hold ended by LWLockDisown() is timed
# up to the disown, while the lock stays held; with one in 10, an idle process's
# samples are exactly its acquisitions / 10; holds that end by an error, by a FATAL exit and
# across pg_lockstat_reset() are counted once, in pg_lwlock_stats and per
# query alike; 0 times nothing; and the histogram adds up to the samples of
# pg_lwlock_stats, per tranche and mode, and the per-query rows to its
# hold columns, under pgbench too.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

use LockStatTest;
use LockStatTest::Gdb;

my $node = LockStatTest::new_node('hold_times',
	"pg_lockstat.hold_sample_every = 10\n");

is($node->safe_psql('postgres', 'SHOW pg_lockstat.hold_sample_every'),
	'10', 'the setting from postgresql.conf');

my $test_row = q{FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'};

# Every hold timed, in one session: 5 exclusive holds of 2 ms each.
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my $t0 = Time::HiRes::time();
$node->safe_psql('postgres',
	q{SET pg_lockstat.hold_sample_every = 1;
	  SELECT lockstat_test_lwlock('exclusive', 5, 2000);});
my $stmt_ms = (Time::HiRes::time() - $t0) * 1000;
is( $node->safe_psql(
		'postgres',
		qq{SELECT ex_acquires, ex_hold_samples, sh_hold_samples,
				  ex_hold_time >= 10, max_ex_hold_time >= 2,
				  max_ex_hold_time <= $stmt_ms,
				  max_ex_hold_time <= ex_hold_time
		   $test_row}),
	'5|5|0|t|t|t|t',
	sprintf('N = 1: each of 5 holds of 2 ms is timed once, within 2..%.0f ms',
		$stmt_ms));
is( $node->safe_psql(
		'postgres',
		q{SELECT sum(count), bool_and(mode = 'exclusive'),
				 bool_and(bucket_upper_us > 2000)
		  FROM pg_lwlock_hold_histogram WHERE tranche = 'lockstat_test'}),
	'5|t|t',
	'the histogram has the 5 holds, in buckets of 2 ms or more');
is( $node->safe_psql(
		'postgres',
		q{SELECT mode, samples, acquires, mean_hold_time >= 2,
				 max_hold_time = (SELECT max_ex_hold_time FROM pg_lwlock_stats
								  WHERE tranche = 'lockstat_test')
		  FROM pg_lwlock_hold_stats WHERE tranche = 'lockstat_test'}),
	'exclusive|5|5|t|t',
	'pg_lwlock_hold_stats shows them per mode');

# One hold in 10, set in postgresql.conf, so every process counts down from
# its first counted acquisition: once idle, a process has exactly
# acquisitions / 10 samples.  Samples are kept per kind of process, so this
# is read for the checkpointer, the one process of its kind, on a server
# that was never reset (its counts since start are that process's whole
# life), after each of many checkpoints.  A countdown that started k
# acquisitions early or late would show floor((acquisitions +- k) / 10)
# samples, which differs from floor(acquisitions / 10) at residue 9 (early)
# or 0 (late) for every k from 1 to 9: the loop goes on until it has checked
# both residues, dirtying a varying number of pages before each checkpoint.  The checkpointer may be busy for a moment after a
# checkpoint, so each check waits for the idle state rather than read once.
my $every10 = LockStatTest::new_node('hold_every_10',
	"pg_lockstat.hold_sample_every = 10\n");
my $ckpt_counts = q{
	SELECT sum(sh_acquires + ex_acquires), sum(sh_hold_samples + ex_hold_samples)
	FROM pg_lwlock_backend_type_stats WHERE backend_type = 'checkpointer'};
my (%residues, $wrong);
my $checks = 0;
$every10->safe_psql('postgres', 'CREATE TABLE dirty (i int)');
for my $round (1 .. 300)
{
	# a checkpoint of nothing takes an even number of locks: dirty a
	# varying number of pages first
	$every10->safe_psql('postgres',
		"INSERT INTO dirty SELECT generate_series(1, 200 * ($round % 7)); CHECKPOINT");
	# one read gives both numbers; wait until it shows the idle state, up
	# to the TAP timeout (a hang, not a slow machine)
	my ($acq, $samples);
	my $deadline = Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
	for (;;)
	{
		($acq, $samples) = split /\|/,
		  $every10->safe_psql('postgres', $ckpt_counts);
		last if $samples == int($acq / 10) || Time::HiRes::time() > $deadline;
		Time::HiRes::usleep(100_000);
	}
	if ($samples != int($acq / 10))
	{
		$wrong = "after checkpoint $round: $samples samples of $acq acquisitions";
		last;
	}
	$checks++;
	$residues{ $acq % 10 } = 1;
	last if $residues{0} && $residues{9} && $checks >= 10;
}
is($wrong, undef,
	'N = 10: the idle checkpointer has exactly its acquisitions / 10 samples');
ok($residues{0} && $residues{9},
	"checked at residues 0 and 9 of acquisitions / 10, among $checks checks: "
	  . join(',', sort keys %residues));
is( $every10->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_lwlock_backend_stats
		  WHERE coalesce(ex_hold_samples, sh_hold_samples, ex_hold_time,
						 sh_hold_time) IS NOT NULL}),
	'0', 'pg_lwlock_backend_stats shows the hold columns as NULL');
$every10->stop;

# 0 times nothing, from the change on: only this session takes the test
# lock, 500 times more, without a sample.
my $session = $node->background_psql('postgres');
$session->query_safe(q{SELECT lockstat_test_lwlock('shared', 100)});
$session->query_safe('SET pg_lockstat.hold_sample_every = 0');
my $before = $node->safe_psql('postgres',
	qq{SELECT sh_acquires, sh_hold_samples + ex_hold_samples $test_row});
$session->query_safe(q{SELECT lockstat_test_lwlock('shared', 500)});
my ($acq0, $samples0) = split /\|/, $before;
is( $node->safe_psql(
		'postgres',
		qq{SELECT sh_acquires - $acq0, sh_hold_samples + ex_hold_samples $test_row}),
	"500|$samples0", 'N = 0: 500 more acquisitions, no more samples');
$session->quit;

# Nested holds, every hold timed: the test lock exclusively, and inside it
# AutoFile (main array index 35, taken by nothing else here) in shared
# mode.  Released inner first (lifo), the outer hold covers all three sleeps
# and the inner one the middle one; released outer first, each covers two.
# One sample each, within those bounds and the statement's duration.
for my $case ([ 'true', 7, 3 ], [ 'false', 5, 5 ])
{
	my ($lifo, $outer_ms, $inner_ms) = @$case;
	$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
	my $t = Time::HiRes::time();
	$node->safe_psql('postgres',
		qq{SET pg_lockstat.hold_sample_every = 1;
		   SELECT lockstat_test_lwlock_nested(35, 2000, 3000, 2000, $lifo)});
	my $ms = (Time::HiRes::time() - $t) * 1000;
	is( $node->safe_psql(
			'postgres', qq{
SELECT (SELECT ex_hold_samples || ',' || sh_hold_samples || ',' ||
			   (ex_hold_time >= $outer_ms AND ex_hold_time <= $ms)
		$test_row),
	   (SELECT sh_hold_samples || ',' || ex_hold_samples || ',' ||
			   (sh_hold_time >= $inner_ms AND sh_hold_time <= $ms)
		FROM pg_lwlock_stats WHERE tranche = 'AutoFile')}),
		'1,0,true|1,0,true',
		sprintf('nested holds (lifo %s): the outer hold one sample of %d..%.0f ms, the inner one of %d..%.0f ms',
			$lifo, $outer_ms, $ms, $inner_ms, $ms));
}

# A hold that ends in LWLockDisown() (PostgreSQL 18, as its asynchronous
# I/O does for a buffer's content lock) is timed up to the disown, while the
# lock stays held: with every hold timed, the test lock held 3 ms and then
# disowned is one sample of at least 3 ms, and at most the time from sending
# the statement to seeing it wait after the disown, already there while a
# conditional acquisition still fails; LWLockReleaseDisowned() later adds no
# second sample.
SKIP:
{
	skip 'LWLockDisown() is new in PostgreSQL 18', 4
	  if LockStatTest::server_major() < 18;

	$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
	my $disowner = $node->background_psql('postgres');
	my $dpid = $disowner->query_safe(
		'SET pg_lockstat.hold_sample_every = 1; SELECT pg_backend_pid()') =~
	  s/\D//gr;
	my $t = Time::HiRes::time();
	LockStatTest::start_hold($node, $disowner, $dpid,
		q{SELECT lockstat_test_lwlock_disown('exclusive', 3000);},
		'and disown the lock');
	my $ms = (Time::HiRes::time() - $t) * 1000;
	is( $node->safe_psql(
			'postgres',
			q{SELECT lockstat_test_lwlock('conditional', 1, 0)}),
		'0', 'the disowned lock is still held');
	is( $node->safe_psql(
			'postgres', qq{
SELECT ex_hold_samples, sh_hold_samples,
	   ex_hold_time >= 3 AND ex_hold_time <= $ms
$test_row}),
		'1|0|t',
		sprintf('LWLockDisown(): one sample of 3..%.0f ms while the lock is still held',
			$ms));
	LockStatTest::release_holds($node);
	$disowner->quit;
	is( $node->safe_psql(
			'postgres', qq{SELECT ex_hold_samples, sh_hold_samples $test_row}),
		'1|0', 'LWLockReleaseDisowned() adds no second sample');
	is( $node->safe_psql(
			'postgres',
			q{SELECT lockstat_test_lwlock('conditional', 1, 0)}),
		'1', 'and the lock is free again');
}

# A hold that an error ends (LWLockReleaseAll() at abort) is timed once,
# for as long as it lasted.
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my ($rc, $stdout, $stderr) = $node->psql('postgres',
	q{SET pg_lockstat.hold_sample_every = 1;
	  SELECT lockstat_test_lwlock_error(3000, false);});
like($stderr, qr/error while holding the lockstat_test LWLock/,
	'the error was raised while holding');
is( $node->safe_psql(
		'postgres', qq{SELECT ex_hold_samples, max_ex_hold_time >= 3 $test_row}),
	'1|t', 'a hold ended by an error is timed once');
is( $node->safe_psql(
		'postgres',
		q{SELECT backend_type, ex_hold_samples, sh_hold_samples
		  FROM pg_lwlock_query_stats WHERE tranche = 'lockstat_test'}),
	'client backend|1|0',
	'per query too: one row of the session (no query IDs here), one sample');
LockStatTest::query_tranches_add_up($node, 'after a hold ended by an error');

# One that the exit after a FATAL error ends is counted once or not at all
# (the process gives up its counters at exit), never twice.
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
($rc, $stdout, $stderr) = $node->psql('postgres',
	q{SET pg_lockstat.hold_sample_every = 1;
	  SELECT lockstat_test_lwlock_error(1000, true);});
like($stderr, qr/FATAL:  error while holding the lockstat_test LWLock/,
	'the FATAL error was raised while holding');
LockStatTest::wait_for_exits($node);
like(
	$node->safe_psql(
		'postgres',
		qq{SELECT coalesce((SELECT ex_hold_samples || '|' ||
								   CASE WHEN max_ex_hold_time >= 1 THEN 't' ELSE 'f' END
							$test_row), 'none')}),
	qr/^(1\|t|0\|f|none)$/,
	'a hold ended by a FATAL exit is one sample of its time, or none');
is( $node->safe_psql(
		'postgres',
		q{SELECT coalesce(sum(count), 0) = coalesce(
				 (SELECT ex_hold_samples FROM pg_lwlock_stats
				  WHERE tranche = 'lockstat_test'), 0)
		  FROM pg_lwlock_hold_histogram WHERE tranche = 'lockstat_test'}),
	't', 'and the histogram agrees');
LockStatTest::query_tranches_add_up($node, 'after a hold ended by a FATAL exit');

# A hold that began before a reset and ends after it counts after it, once.
my $holder = $node->background_psql('postgres');
my $hpid = $holder->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
$holder->query_safe('SET pg_lockstat.hold_sample_every = 1');
LockStatTest::hold_lwlock($node, 'shared', $holder, $hpid);
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is($node->safe_psql('postgres', qq{SELECT count(*) $test_row}),
	'0', 'nothing counted after the reset while the hold lasts');
LockStatTest::release_holds($node);
$holder->quit;
is( $node->safe_psql(
		'postgres',
		qq{SELECT sh_acquires, sh_hold_samples, ex_hold_samples $test_row}),
	'0|1|0',
	'the hold across the reset is one sample after it (its acquisition was before)');
is( $node->safe_psql(
		'postgres',
		q{SELECT mode, sum(count) FROM pg_lwlock_hold_histogram
		  WHERE tranche = 'lockstat_test' GROUP BY mode}),
	'shared|1', 'in the histogram too');
is( $node->safe_psql(
		'postgres',
		q{SELECT sum(sh_hold_samples), sum(ex_hold_samples)
		  FROM pg_lwlock_query_stats WHERE tranche = 'lockstat_test'}),
	'1|0', 'and per query');

# A timed hold with a waiter ends before its release wakes the waiter: the
# holder, stopped by gdb in its wake-up of the waiter (pg_lockstat's wake
# hook, which the core calls from LWLockWakeup() after the release), stays
# stopped for longer than everything before the stop took, and its sample
# must not contain the stop.  The bound is the time from sending the hold
# to the stop, which contains the whole hold, whatever the machine's speed.
SKIP:
{
	my $why = LockStatTest::Gdb::gdb_unavailable();
	skip $why, 3 if $why;

	$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
	my $slow = $node->background_psql('postgres');
	my $spid = $slow->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	$slow->query_safe('SET pg_lockstat.hold_sample_every = 1');
	my $sent = Time::HiRes::time();
	LockStatTest::hold_lwlock($node, 'exclusive', $slow, $spid);
	my $waiter = $node->background_psql('postgres');
	$waiter->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_lwlock('shared', 1);\n");
	LockStatTest::wait_for_waiters($node, 1);
	my $g = LockStatTest::Gdb::gdb_attach($slow, 'lockstat_query_note_waker',
		$spid);
	LockStatTest::release_holds($node);
	LockStatTest::Gdb::gdb_wait($g, qr/Breakpoint 1,/);
	my $stopped = Time::HiRes::time();
	my $stack = LockStatTest::Gdb::gdb_send($g, "bt\necho end of stack\\n",
		qr/end of stack/);
	like($stack, qr/LWLockRelease.*lockstat_test_lwlock_hold/s,
		'gdb stopped the holder in its release of the test lock');
	# stopped for longer than the hold can have lasted
	Time::HiRes::sleep(($stopped - $sent) * 1.5 + 0.5);
	LockStatTest::Gdb::gdb_detach($g);
	LockStatTest::end_session($_) for ($slow, $waiter);
	my $bound_ms = ($stopped - $sent) * 1000;
	is( $node->safe_psql(
			'postgres',
			qq{SELECT ex_hold_samples, max_ex_hold_time > 0,
					  max_ex_hold_time < $bound_ms
			   $test_row}),
		'1|t|t',
		sprintf('a hold with a waiter is timed up to its release, not through the %.0f ms wake-up (bound %.0f ms)',
			(($stopped - $sent) * 1.5 + 0.5) * 1000, $bound_ms));
	is( $node->safe_psql(
			'postgres',
			qq{SELECT blocks, wait_time >= $bound_ms $test_row}),
		'1|t', 'while the waiter\'s wait does contain the stop');
}

# Under pgbench with every hold timed: per tranche and mode the histogram
# adds up to the samples, exactly, once the clients have gone and sampling
# has stopped.
$node->safe_psql('postgres', 'ALTER SYSTEM SET pg_lockstat.hold_sample_every = 1');
$node->reload;
$node->command_ok([ 'pgbench', '-i', '-q', '-s', '1', 'postgres' ],
	'pgbench -i');
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$node->command_ok(
	[ 'pgbench', '-n', '-c', '4', '-j', '2', '-t', '200', 'postgres' ],
	'pgbench with every hold timed');
# Then no process starts another sample, so that the counts stand still
# once every process has seen the reload and ended its timed holds.
$node->safe_psql('postgres', 'ALTER SYSTEM SET pg_lockstat.hold_sample_every = 0');
$node->reload;
my $mismatch = q{
	WITH s AS (SELECT tranche_id, 'exclusive' AS mode, ex_hold_samples AS n
			   FROM pg_lwlock_stats
			   UNION ALL
			   SELECT tranche_id, 'shared', sh_hold_samples FROM pg_lwlock_stats),
	h AS (SELECT tranche_id, mode, sum(count) AS n
		  FROM pg_lwlock_hold_histogram GROUP BY 1, 2)
	SELECT count(*) FROM s FULL JOIN h USING (tranche_id, mode)
	WHERE coalesce(s.n, 0) <> coalesce(h.n, 0)};
ok( $node->poll_query_until('postgres', "SELECT ($mismatch) = 0"),
	'the hold histogram adds up to the samples per tranche and mode');
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) > 0 FROM pg_lwlock_hold_stats
		  WHERE tranche IN ('WALInsert', 'BufferContent', 'ProcArray')}),
	't', 'pgbench holds tranches such as ProcArray and BufferContent');
LockStatTest::query_tranches_add_up($node, 'after pgbench with every hold timed');

# privileges: like pg_lwlock_wait_histogram
$node->safe_psql('postgres', 'CREATE ROLE regress_nobody LOGIN');
($rc, $stdout, $stderr) = $node->psql('postgres',
	'SELECT count(*) FROM pg_lwlock_hold_histogram',
	extra_params => [ '-U', 'regress_nobody' ]);
like($stderr, qr/permission denied for view pg_lwlock_hold_histogram/,
	'a role without pg_read_all_stats cannot read the histogram');
($rc, $stdout, $stderr) = $node->psql('postgres',
	'SET pg_lockstat.hold_sample_every = 1',
	extra_params => [ '-U', 'regress_nobody' ]);
like($stderr, qr/permission denied to set parameter/,
	'nor set pg_lockstat.hold_sample_every');

done_testing();
