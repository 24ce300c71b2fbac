# Copyright (c) 2026, pg_lockstat developers
#
# Process kinds: pg_lwlock_stats counts the LWLock activity of every kind of
# process that has a PGPROC, not only of client backends.
#
# There is no per-process view, so each kind is shown through a tranche or a
# lock mode that, in the situation the test sets up, only that kind of
# process takes (the reasons are given at each step, with the PostgreSQL 18
# functions that take the lock):
#
#	parallel worker		the lockstat_test tranche, taken in a single-copy
#						Gather whose one worker ran the function
#	autovacuum			Autovacuum, AutovacuumSchedule
#	checkpointer		ControlFile exclusive, during CHECKPOINT
#	walsender			SyncRep (primary with a synchronous standby name and
#						synchronous_commit = local)
#	walreceiver			XidGen shared on a hot standby whose replay is paused
#						(hot standby feedback)
#	startup				BufferContent exclusive on a hot standby
#
# Each is also found under its kind in pg_lwlock_backend_type_stats, which
# keeps the counts of the kind's exited processes.
#
# The standby has a higher max_connections than its primary, so that it has
# more process slots; its views and pg_lockstat_reset() work in recovery, and
# after promotion.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use LockStatTest;

my $t_start = time();

# counter $column of tranche $tranche since the last reset (0 without a row)
sub count_of
{
	my ($node, $tranche, $column) = @_;
	return $node->safe_psql('postgres',
		qq{SELECT coalesce(sum($column), 0) FROM pg_lwlock_stats
		   WHERE tranche = '$tranche'});
}

# counter $column of tranche $tranche for kind of process $kind since the
# last reset, from pg_lwlock_backend_type_stats (0 without a row)
sub kind_count_of
{
	my ($node, $kind, $tranche, $column) = @_;
	return $node->safe_psql('postgres',
		qq{SELECT coalesce(sum($column), 0) FROM pg_lwlock_backend_type_stats
		   WHERE backend_type = '$kind' AND tranche = '$tranche'});
}

# wait until that counter is positive; true on success
sub wait_for_count
{
	my ($node, $tranche, $column) = @_;
	return $node->poll_query_until('postgres',
		qq{SELECT coalesce(sum($column), 0) > 0 FROM pg_lwlock_stats
		   WHERE tranche = '$tranche'});
}

# -------------------------------------------------------------------------
# The primary.  Not LockStatTest::new_node(): it must allow streaming.
#
# synchronous_standby_names = '*' makes the walsender of the standby a
# synchronous one, so that it takes SyncRepLock for every reply of the
# standby (SyncRepReleaseWaiters); synchronous_commit = local keeps every
# other process away from SyncRepLock (SyncRepWaitForLSN returns before
# taking it unless synchronous_commit is above local) and keeps commits from
# waiting.  max_connections = 20 here, 40 on the standby.
# -------------------------------------------------------------------------
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'pg_lockstat,lockstat_test'
max_connections = 20
autovacuum = on
autovacuum_naptime = 1s
synchronous_standby_names = '*'
synchronous_commit = local
});
$primary->start;
$primary->safe_psql('postgres',
	'CREATE EXTENSION pg_lockstat; CREATE EXTENSION lockstat_test;');

# the built-in tranches used below have these names (pg_wait_events lists
# them from 17 on; 15 has the same names, in lwlocknames.txt and
# lwlock.c)
SKIP:
{
	skip 'pg_wait_events is new in PostgreSQL 17', 1
	  if LockStatTest::server_major() < 17;
	is( $primary->safe_psql(
			'postgres', q{
		SELECT count(*) FROM pg_wait_events
		WHERE type = 'LWLock'
		  AND name IN ('Autovacuum', 'AutovacuumSchedule', 'ControlFile',
		               'SyncRep', 'XidGen', 'BufferContent')}),
		'6',
		'the built-in tranches used by this test are known wait events');
}

# -------------------------------------------------------------------------
# Parallel workers.
#
# With debug_parallel_query = on (force_parallel_mode before 16), the
# planner puts a single-copy Gather with one planned worker on top of the
# parallel-safe plan.  When the worker is launched, the leader does not run the plan of a single-copy Gather
# (ExecGather: need_to_scan_locally is false once nreaders > 0 and
# single_copy is set), so all 1000 acquisitions are the worker's.
# -------------------------------------------------------------------------
my $parallel_on = LockStatTest::single_copy_gather_sql();
my $launched_query = q{SELECT parallel_workers_launched FROM pg_stat_database
	WHERE datname = current_database()};

# the statement itself, counted by pg_stat_database from 18 on (before,
# only the EXPLAIN ANALYZE below shows the launched worker)
my $count_launched = LockStatTest::server_major() >= 18;
my $launched_before =
  $count_launched ? $primary->safe_psql('postgres', $launched_query) : 0;
$primary->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is( $primary->safe_psql(
		'postgres',
		$parallel_on . q{SELECT lockstat_test_lwlock('shared', 1000)}),
	'1000',
	'lockstat_test_lwlock runs with a single-copy Gather');
SKIP:
{
	skip 'pg_stat_database.parallel_workers_launched is new in PostgreSQL 18', 1
	  unless $count_launched;
	# the session has exited and flushed its statistics, or is about to
	ok( $primary->poll_query_until(
			'postgres', $launched_query, $launched_before + 1),
		'the statement launched exactly one parallel worker');
}
is(count_of($primary, 'lockstat_test', 'sh_acquires'),
	'1000', 'the parallel worker\'s 1000 shared acquisitions are counted exactly');
is(count_of($primary, 'lockstat_test', 'ex_acquires'),
	'0', 'no exclusive acquisitions counted');
is(kind_count_of($primary, 'parallel worker', 'lockstat_test', 'sh_acquires'),
	'1000', 'pg_lwlock_backend_type_stats: all 1000 under "parallel worker"');
is(kind_count_of($primary, 'client backend', 'lockstat_test', 'sh_acquires'),
	'0', 'pg_lwlock_backend_type_stats: none under "client backend"');

# the same statement under EXPLAIN ANALYZE: the plan shape, and the Result
# node ran once, in worker 0
$primary->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my $plan = $primary->safe_psql('postgres',
	    $parallel_on
	  . q{EXPLAIN (ANALYZE, VERBOSE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF)
		SELECT lockstat_test_lwlock('shared', 1000)});
note "plan:\n$plan";
like($plan, qr/^Gather \(actual rows=1(\.00)? loops=1\)/m,
	'EXPLAIN: Gather at the top');
like($plan, qr/^\s+Workers Launched: 1$/m, 'EXPLAIN: Workers Launched: 1');
like($plan, qr/^\s+Single Copy: true$/m,
	'EXPLAIN: single copy, the leader does not run the plan');
like(
	$plan,
	qr/->  Result \(actual rows=1(\.00)? loops=1\)\n.*\n\s+Worker 0:  actual rows=1(\.00)? loops=1/,
	'EXPLAIN: the Result node calling the function ran once, in worker 0');
is(count_of($primary, 'lockstat_test', 'sh_acquires'),
	'1000', 'under EXPLAIN ANALYZE too, the worker\'s count is exact');

# -------------------------------------------------------------------------
# Autovacuum.
#
# AutovacuumLock and AutovacuumScheduleLock are taken only in autovacuum.c:
# by the launcher (AutovacuumLock: main loop, do_start_worker) and the
# workers (AutoVacWorkerMain, do_autovacuum, FreeWorkerInfo).  The one
# exception, AutoVacuumRequestWork(), is called only for BRIN
# autosummarize, which this test does not use.  AutovacuumScheduleLock is
# taken only by a worker that has a table to process (do_autovacuum), so a
# table that needs an analyze is created after the reset.
# -------------------------------------------------------------------------
$primary->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$primary->safe_psql('postgres',
	'CREATE TABLE av_target (i int); INSERT INTO av_target SELECT generate_series(1, 1000)'
);
ok(wait_for_count($primary, 'Autovacuum', 'ex_acquires'),
	'autovacuum launcher and workers are counted (Autovacuum, exclusive)');
ok(wait_for_count($primary, 'AutovacuumSchedule', 'ex_acquires'),
	'an autovacuum worker processing a table is counted (AutovacuumSchedule)');
cmp_ok(
	kind_count_of($primary, 'autovacuum worker', 'AutovacuumSchedule',
		'ex_acquires'),
	'>', 0,
	'pg_lwlock_backend_type_stats: AutovacuumSchedule under "autovacuum worker"'
);
is( $primary->safe_psql(
		'postgres', q{
		SELECT count(*) FROM pg_lwlock_backend_type_stats
		WHERE tranche IN ('Autovacuum', 'AutovacuumSchedule')
		  AND backend_type NOT IN ('autovacuum launcher', 'autovacuum worker')}),
	'0',
	'pg_lwlock_backend_type_stats: the autovacuum tranches under no other kind');

# -------------------------------------------------------------------------
# Checkpointer.
#
# The backend that runs CHECKPOINT only asks the checkpointer to do it and
# waits (RequestCheckpoint); the checkpoint itself, CreateCheckPoint(), runs
# in the checkpointer and takes ControlFileLock exclusively to write
# pg_control.  The requesting session does not count at all
# (pg_lockstat.track = off).  Outside recovery, the only other exclusive
# users of ControlFileLock are start-up (StartupXLOG, done) and the creation
# of a new WAL segment file (InstallXLogFileSegment), which the few kB of
# WAL of this test do not need except in the checkpointer itself, when it
# recycles old segments.
# -------------------------------------------------------------------------
# requested checkpoints: pg_stat_checkpointer from 17 on, pg_stat_bgwriter
# before
my $requested_query = LockStatTest::server_major() >= 17
  ? 'SELECT num_requested FROM pg_stat_checkpointer'
  : 'SELECT checkpoints_req FROM pg_stat_bgwriter';
my $requested_before = $primary->safe_psql('postgres', $requested_query);
$primary->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$primary->safe_psql('postgres',
	'SET pg_lockstat.track = off; CHECKPOINT;');
cmp_ok(count_of($primary, 'ControlFile', 'ex_acquires'),
	'>', 0, 'the checkpointer is counted (ControlFile, exclusive)');
cmp_ok(kind_count_of($primary, 'checkpointer', 'ControlFile', 'ex_acquires'),
	'>', 0, 'pg_lwlock_backend_type_stats: ControlFile under "checkpointer"');
is(kind_count_of($primary, 'client backend', 'ControlFile', 'ex_acquires'),
	'0', 'pg_lwlock_backend_type_stats: none under "client backend"');
ok( $primary->poll_query_until(
		'postgres', "SELECT ($requested_query) > $requested_before"),
	'the cumulative statistics show the requested checkpoint');

# -------------------------------------------------------------------------
# A streaming hot standby with more connections than its primary.
# hot_standby_feedback makes its walreceiver report the standby's xmin.
# -------------------------------------------------------------------------
$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->append_conf(
	'postgresql.conf', q{
max_connections = 40
hot_standby_feedback = on
});
$standby->start;
$primary->wait_for_catchup($standby, 'replay');

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'standby is in recovery');
is($standby->safe_psql('postgres', 'SHOW max_connections'),
	'40', 'standby has max_connections = 40');

my $primary_slots = $primary->safe_psql('postgres',
	'SELECT process_slots FROM pg_lockstat_status');
my $standby_slots = $standby->safe_psql('postgres',
	'SELECT process_slots FROM pg_lockstat_status');
is($standby_slots - $primary_slots,
	20, "standby has 20 process slots more ($standby_slots vs $primary_slots)");
is( $standby->safe_psql(
		'postgres',
		q{SELECT spin_strategy || ' ' || track || ' ' || core_patch_version
		  FROM pg_lockstat_status}),
	'default true 7',
	'pg_lockstat_status works on the standby');
cmp_ok(
	$standby->safe_psql(
		'postgres', 'SELECT count(*) FROM pg_lwlock_stats'),
	'>', 0,
	'pg_lwlock_stats works on the standby');

# Pause replay: from now on the startup process modifies no buffer, until
# replay is resumed.
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_pause()');
$standby->poll_query_until('postgres',
	q{SELECT pg_get_wal_replay_pause_state() = 'paused'})
  or die 'replay did not pause';

my $reset_before = $standby->safe_psql('postgres',
	'SELECT stats_reset FROM pg_lockstat_status');
my $reset_at =
  $standby->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is( $standby->safe_psql(
		'postgres',
		qq{SELECT stats_reset = '$reset_at' AND stats_reset > '$reset_before'
		   FROM pg_lockstat_status}),
	't',
	'pg_lockstat_reset() works on the standby, stats_reset moves');

# rows written on the primary reach the standby's WAL, not yet its buffers
$primary->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$primary->safe_psql('postgres',
	'CREATE TABLE replicated (i int); INSERT INTO replicated SELECT generate_series(1, 5000)'
);
$primary->wait_for_catchup($standby, 'flush');

# Walsender: with the settings above, SyncRepLock is taken only by the
# walsender of a synchronous standby (SyncRepReleaseWaiters, for each reply
# of the standby), and by the checkpointer only at its start or when
# synchronous_standby_names changes (SyncRepUpdateSyncStandbysDefined).
ok(wait_for_count($primary, 'SyncRep', 'ex_acquires'),
	'the walsender is counted (SyncRep, on the primary)');
cmp_ok(kind_count_of($primary, 'walsender', 'SyncRep', 'ex_acquires'),
	'>', 0, 'pg_lwlock_backend_type_stats: SyncRep under "walsender"');

# Walreceiver: a reload makes it send hot standby feedback at once
# (XLogWalRcvSendHSFeedback(true)), which reads the next XID with
# XidGenLock shared (ReadNextFullTransactionId).  On a standby the startup
# process takes XidGenLock to replay (exclusive, and shared only for the
# replay of B-tree and GiST page reuse, and it is paused); backends take it
# exclusively when they enter and leave the ProcArray (ProcArrayAdd,
# ProcArrayRemove), and shared only for age(), pg_current_snapshot() and the
# like, which nothing calls here.  The checkpointer, bgwriter and IO workers
# do not take it.  (Without hot_standby_feedback, the same steps leave
# XidGen sh_acquires at 0.)
$standby->safe_psql('postgres', 'SELECT pg_reload_conf()');
ok(wait_for_count($standby, 'XidGen', 'sh_acquires'),
	'the walreceiver is counted (XidGen, shared, on the standby)');
cmp_ok(kind_count_of($standby, 'walreceiver', 'XidGen', 'sh_acquires'),
	'>', 0, 'pg_lwlock_backend_type_stats: XidGen shared under "walreceiver"');

# Startup process: in recovery, read-only backends never take a buffer
# content lock exclusively (no pruning in recovery, hint bits under a share
# lock, nothing written); the checkpointer and bgwriter flush buffers under
# a share lock.  Only replay (XLogReadBufferForRedo) locks buffers
# exclusively.  While replay is paused, nothing does ...
is(count_of($standby, 'BufferContent', 'ex_acquires'),
	'0', 'nothing locks a buffer exclusively on the standby while replay is paused');

# ... and once it resumes, the startup process does.
$standby->safe_psql('postgres', 'SELECT pg_wal_replay_resume()');
$primary->wait_for_catchup($standby, 'replay');
is($standby->safe_psql('postgres', 'SELECT count(*) FROM replicated'),
	'5000', 'the rows are replayed on the standby');
my $replay_ex = count_of($standby, 'BufferContent', 'ex_acquires');
cmp_ok($replay_ex, '>', 0,
	'the startup process is counted (BufferContent, exclusive, on the standby)');
my $startup_ex =
  kind_count_of($standby, 'startup', 'BufferContent', 'ex_acquires');
cmp_ok($startup_ex, '>', 0,
	'pg_lwlock_backend_type_stats: BufferContent exclusive under "startup"');

unlike(
	slurp_file($standby->logfile),
	qr/pg_lockstat: process number .* out of range/,
	'no process of the standby is out of the slot range');

# -------------------------------------------------------------------------
# Promotion: the startup process exits, the node becomes writable.
# -------------------------------------------------------------------------
$standby->promote;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	'f', 'the promoted standby is out of recovery');
is( $standby->safe_psql(
		'postgres', 'SELECT stats_reset FROM pg_lockstat_status'),
	$reset_at,
	'promotion does not reinitialise pg_lockstat (stats_reset kept)');
cmp_ok(count_of($standby, 'BufferContent', 'ex_acquires'),
	'>=', $replay_ex, 'the counts of the exited startup process are kept');
cmp_ok(kind_count_of($standby, 'startup', 'BufferContent', 'ex_acquires'),
	'>=', $startup_ex,
	'pg_lwlock_backend_type_stats keeps them under "startup"');

$standby->safe_psql('postgres',
	'CREATE TABLE after_promotion (i int); INSERT INTO after_promotion VALUES (1)'
);
is($standby->safe_psql('postgres', 'SELECT count(*) FROM after_promotion'),
	'1', 'the promoted node is writable');

$standby->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$standby->safe_psql('postgres',
	q{SELECT lockstat_test_lwlock('exclusive', 500), lockstat_test_lwlock('shared', 300)}
);
is( $standby->safe_psql(
		'postgres',
		q{SELECT sh_acquires, ex_acquires FROM pg_lwlock_stats
		  WHERE tranche = 'lockstat_test'}),
	'300|500',
	'counts on the promoted node are exact');
is( $standby->safe_psql(
		'postgres', 'SELECT process_slots FROM pg_lockstat_status'),
	$standby_slots,
	'process slots unchanged by promotion');

$standby->stop;
$primary->stop;

note sprintf('runtime %.1f s', time() - $t_start);
done_testing();
