# Copyright (c) 2026, pg_lockstat developers
#
# Holders of blocked LWLock calls (pg_lwlock_blockers) and per-query hold
# times (pg_lwlock_query_stats' hold columns), with pg_stat_statements
# preloaded:
# - a session holding the test lock exclusively, timed (hold_sample_every =
#   1 in that session), blocks a waiter for a known time: the waiter's row
#   names the holder's query ID, which joins pg_stat_statements, in mode
#   exclusive, with one block of that time; the holder's row of
#   pg_lwlock_query_stats has its one timed hold, at least that long;
# - a shared holder that runs no query with an ID (compute_query_id = off)
#   is named by its kind of process, in mode shared;
# - a reset empties the view;
# - one backend blocked twice, behind two different holders, has one block
#   under each;
# - with hold_sample_every = 10, three shared waiters woken by one exclusive
#   release are exactly three blocks under that holder;
# - a commit that waits for another session's WAL insertion
#   (LWLockWaitForVar, the inserter stopped by gdb while it holds its
#   insertion lock) names the inserting statement as its holder;
# - so does a wait that the inserter's LWLockUpdateVar() ends, while the
#   inserter still holds the lock (gdb stops it in LWLockUpdateVar() and
#   again before its release);
# - a session that got the lock by being woken, later holding it again
#   without a block, is the root of the wait it ends then, not the root of
#   its old wait;
# - under pgbench (tpcb-like, and a script whose 4 clients queue behind a
#   shared holder), with hold sampling at its default, every blocked call
#   has a known holder; the script's first block names the holder's query,
#   the other three the script's statement (each waiter's release wakes the
#   next), and all four name the holder's query as their root; the
#   per-query hold samples join pg_stat_statements, and per tranche both
#   views add up to pg_lwlock_stats exactly.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

use LockStatTest;
use LockStatTest::Gdb;

# the monotonic clock, which the server's wait times are measured on too
sub now
{
	return Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC());
}

my $node = LockStatTest::new_node('blockers',
	    "shared_preload_libraries = 'pg_lockstat,lockstat_test,pg_stat_statements'\n"
	  . "autovacuum = off\n");
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements');

# the query ID that pg_stat_activity shows for backend $pid now
sub query_id_of
{
	my ($pid) = @_;
	return $node->safe_psql('postgres',
		"SELECT query_id FROM pg_stat_activity WHERE pid = $pid");
}

# A holder session (timed, in $mode, after $setup) and a waiter asking for
# the lock in $wait_mode; the holder releases once the waiter has been seen
# waiting for 50 ms.  Returns the holder's and the waiter's query IDs as
# pg_stat_activity showed them, and the bounds of the wait: at least from
# the moment the waiter was seen waiting to the release, at most from before
# the waiter started to after both ended.
sub block_once
{
	my ($mode, $wait_mode, $setup) = @_;
	my $holder = $node->background_psql('postgres');
	my $hpid = $holder->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	$holder->query_safe("SET pg_lockstat.hold_sample_every = 1; $setup");
	LockStatTest::hold_lwlock($node, $mode, $holder, $hpid);
	my $holder_id = query_id_of($hpid);

	my $t0 = now();
	my $waiter = $node->background_psql('postgres');
	my $wpid = $waiter->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	$waiter->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_lwlock('$wait_mode', 1);\n");
	LockStatTest::wait_for_waiters($node, 1);
	my $seen = now();
	my $waiter_id = query_id_of($wpid);
	Time::HiRes::usleep(10_000) while now() - $seen < 0.05;
	my $released = now();
	LockStatTest::release_holds($node);
	$holder->quit;
	$waiter->quit;
	my $t1 = now();
	return ($holder_id, $waiter_id, ($released - $seen) * 1000,
		($t1 - $t0) * 1000);
}

# --- an exclusive holder with a query ID -------------------------------------

$node->safe_psql('postgres',
	'SELECT pg_lockstat_reset(); SELECT pg_stat_statements_reset()');
my ($holder_id, $waiter_id, $min_ms, $max_ms) =
  block_once('exclusive', 'shared', '');
isnt($holder_id, '', "the holder ran a query with an ID ($holder_id)");

is( $node->safe_psql(
		'postgres', qq{
SELECT count(*), sum(blocks) FROM pg_lwlock_blockers
WHERE tranche = 'lockstat_test'}),
	'1|1', 'one row of the test tranche, with its one block');
is( $node->safe_psql(
		'postgres', qq{
SELECT b.queryid = $waiter_id, b.holder_queryid = $holder_id,
       b.holder_backend_type IS NULL, b.holder_mode, b.blocks,
       b.wait_time >= $min_ms AND b.wait_time <= $max_ms,
       b.wait_time = b.max_wait_time,
       b.dbid = (SELECT oid FROM pg_database WHERE datname = 'postgres'),
       b.userid = (SELECT oid FROM pg_roles WHERE rolname = current_user),
       b.backend_type IS NULL
FROM pg_lwlock_blockers b WHERE b.tranche = 'lockstat_test'}),
	't|t|t|exclusive|1|t|t|t|t|t',
	sprintf('the row names the waiter and the holding query, exclusive, one block of %.1f..%.1f ms',
		$min_ms, $max_ms));
is( $node->safe_psql(
		'postgres', q{
SELECT p.query
FROM pg_lwlock_blockers b
JOIN pg_stat_statements p ON p.queryid = b.holder_queryid
WHERE b.tranche = 'lockstat_test'}),
	'SELECT lockstat_test_lwlock_hold($1)',
	'holder_queryid joins pg_stat_statements: the holding statement');
is( $node->safe_psql(
		'postgres', q{
SELECT p.query
FROM pg_lwlock_blockers b
JOIN pg_stat_statements p USING (queryid, dbid, userid)
WHERE b.tranche = 'lockstat_test'}),
	'SELECT lockstat_test_lwlock($1, $2)',
	'and the waiter joins it USING (queryid, dbid, userid): the waiting statement');

# the holder's timed hold, per query
is( $node->safe_psql(
		'postgres', qq{
SELECT q.ex_hold_samples, q.sh_hold_samples, q.blocks,
       q.ex_hold_time >= $min_ms, q.ex_hold_time = q.max_ex_hold_time,
       p.query
FROM pg_lwlock_query_stats q
JOIN pg_stat_statements p USING (queryid, dbid, userid)
WHERE q.tranche = 'lockstat_test' AND q.queryid = $holder_id}),
	"1|0|0|t|t|SELECT lockstat_test_lwlock_hold(\$1)",
	sprintf('the holding query has its one timed exclusive hold, at least %.1f ms, joinable with pg_stat_statements',
		$min_ms));
is( $node->safe_psql(
		'postgres', qq{
SELECT q.blocks, q.ex_hold_samples + q.sh_hold_samples
FROM pg_lwlock_query_stats q
WHERE q.tranche = 'lockstat_test' AND q.queryid = $waiter_id}),
	'1|0',
	'the waiting query has its block, and no timed hold (its session times one in 4999)');
LockStatTest::query_tranches_add_up($node, 'after one block');

# --- a shared holder without a query ID ------------------------------------

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
($holder_id, $waiter_id, $min_ms, $max_ms) =
  block_once('shared', 'exclusive', 'SET compute_query_id = off;');
is($holder_id, '', 'with compute_query_id off the holder runs no query with an ID');
is( $node->safe_psql(
		'postgres', qq{
SELECT b.queryid = $waiter_id, b.holder_queryid IS NULL,
       b.holder_backend_type, b.holder_mode, b.blocks,
       b.wait_time >= $min_ms AND b.wait_time <= $max_ms
FROM pg_lwlock_blockers b WHERE b.tranche = 'lockstat_test'}),
	't|t|client backend|shared|1|t',
	'a shared holder without a query ID is named by its kind of process, mode shared');
is( $node->safe_psql(
		'postgres', q{
SELECT q.backend_type, q.sh_hold_samples, q.ex_hold_samples
FROM pg_lwlock_query_stats q
WHERE q.tranche = 'lockstat_test' AND q.queryid IS NULL}),
	'client backend|1|0',
	'its timed shared hold counts under its kind of process');

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_lwlock_blockers WHERE tranche = 'lockstat_test'}),
	'0', 'a reset empties pg_lwlock_blockers');

# --- two blocks of one backend, behind two holders -------------------------
# One waiter session blocks twice with the same statement: first behind an
# exclusive holder with a query ID, then behind a shared holder without one.
# Each block names its own holder: a holder left over in the waiter's state
# from its first block would put both under the first holder.
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my $waiter2 = $node->background_psql('postgres');
my $w2pid = $waiter2->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
my @holder_ids;
for my $step ([ 'exclusive', 'shared', '' ],
	[ 'shared', 'exclusive', 'SET compute_query_id = off;' ])
{
	my ($mode, $wait_mode, $setup) = @$step;
	my $holder = $node->background_psql('postgres');
	my $hpid = $holder->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	$holder->query_safe("SET pg_lockstat.hold_sample_every = 1; $setup");
	LockStatTest::hold_lwlock($node, $mode, $holder, $hpid);
	push @holder_ids, query_id_of($hpid);
	$waiter2->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_lwlock('$wait_mode', 1);\n");
	LockStatTest::wait_for_waiters($node, 1);
	LockStatTest::release_holds($node);
	$waiter2->query_safe('SELECT 1');
	$holder->quit;
}
$waiter2->quit;
is( $node->safe_psql(
		'postgres', qq{
SELECT string_agg(concat_ws(',', coalesce((holder_queryid = $holder_ids[0])::text,
										  holder_backend_type),
							holder_mode, blocks), ' ' ORDER BY holder_mode)
FROM pg_lwlock_blockers WHERE tranche = 'lockstat_test'}),
	'true,exclusive,1 client backend,shared,1',
	'a backend blocked twice: one block under each holder, the first by its query ID, the second by its kind');
LockStatTest::query_tranches_add_up($node, 'after two blocks of one backend');
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');

# --- exact counts with sampled holds (N = 10) ------------------------------
# Holders are named for every blocked call, whether or not the hold was
# timed: with hold_sample_every = 10, three shared waiters behind one
# exclusive hold, all woken by its release, are three blocks under it.
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
{
	my $holder = $node->background_psql('postgres');
	my $hpid = $holder->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	$holder->query_safe('SET pg_lockstat.hold_sample_every = 10');
	LockStatTest::hold_lwlock($node, 'exclusive', $holder, $hpid);
	my $hid = query_id_of($hpid);
	my @waiters = map { $node->background_psql('postgres') } 1 .. 3;
	$_->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_lwlock('shared', 1);\n")
	  for @waiters;
	LockStatTest::wait_for_waiters($node, 3);
	LockStatTest::release_holds($node);
	$_->query_safe('SELECT 1') for @waiters;
	$_->quit for @waiters;
	$holder->quit;
	is( $node->safe_psql(
			'postgres', qq{
SELECT count(*), sum(blocks), bool_and(holder_queryid = $hid),
       bool_and(root_queryid = $hid), min(holder_mode)
FROM pg_lwlock_blockers WHERE tranche = 'lockstat_test'}),
		'1|3|t|t|exclusive',
		'N = 10: three shared waiters behind one exclusive hold, three blocks under it, also as root');
	LockStatTest::query_tranches_add_up($node, 'after three blocks at N = 10');
}
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');

# --- a root is passed on only by the hold that followed the block ----------
# Session A blocks behind a holder without a query ID (named by its kind of
# process) and gets the lock by being woken; later it takes the lock again,
# without blocking, and its release ends the wait of session W.  That hold
# did not follow a block: W's root is A's own query, not A's old root.  And
# W's is a second block of the lock's tranche in the server after A's, each
# under its own holder.

my $old_root = $node->background_psql('postgres');
my $opid = $old_root->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
$old_root->query_safe('SET compute_query_id = off');
LockStatTest::hold_lwlock($node, 'exclusive', $old_root, $opid);
my $a = $node->background_psql('postgres');
my $apid = $a->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
$a->query_until(qr/started/,
	"\\echo started\nSELECT lockstat_test_lwlock('exclusive', 1);\n");
LockStatTest::wait_for_waiters($node, 1);
LockStatTest::release_holds($node);
$a->query_safe('SELECT 1');    # its blocked call has ended
LockStatTest::hold_lwlock($node, 'exclusive', $a, $apid);
my $a_hold_id = query_id_of($apid);
my $w = $node->background_psql('postgres');
$w->query_until(qr/started/,
	"\\echo started\nSELECT lockstat_test_lwlock('shared', 1);\n");
LockStatTest::wait_for_waiters($node, 1);
LockStatTest::release_holds($node);
LockStatTest::end_session($_) for ($old_root, $a, $w);
is( $node->safe_psql(
		'postgres', qq{
SELECT string_agg(b.blocks || ' ' || coalesce(b.holder_backend_type,
                  CASE WHEN b.holder_queryid = $a_hold_id THEN 'A' ELSE 'other' END)
                  || ' ' || b.holder_mode || ', root ' ||
                  coalesce(b.root_backend_type,
                  CASE WHEN b.root_queryid = $a_hold_id THEN 'A' ELSE 'other' END)
                  || ' ' || b.root_mode,
                  '; ' ORDER BY b.holder_backend_type NULLS LAST)
FROM pg_lwlock_blockers b WHERE b.tranche = 'lockstat_test'}),
	'1 client backend exclusive, root client backend exclusive; 1 A exclusive, root A exclusive',
	'a waker whose hold did not follow its block is its own root, not the root of its old block');

# --- a wait for a WAL insertion (LWLockWaitForVar) -------------------------
# Session I inserts a row, and gdb stops it in LWLockReleaseClearVar(),
# still holding its WAL insertion lock.  Session F's commit flushes WAL up
# to its own record, after I's, so it waits in LWLockWaitForVar() for I's
# insertion (WaitXLogInsertionsToFinish()), sleeping on tranche WALInsert.
# Once I goes on, its release ends F's wait: F's statement has a block on
# WALInsert whose holder is I's INSERT.
SKIP:
{
	my $no_gdb = LockStatTest::Gdb::gdb_unavailable();
	skip $no_gdb, 2 if $no_gdb;

	$node->safe_psql('postgres',
		'CREATE TABLE wal_i (i int); CREATE TABLE wal_f (i int); SELECT pg_lockstat_reset()');
	my $ins = $node->background_psql('postgres');
	my $ipid = $ins->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	my $g = LockStatTest::Gdb::gdb_attach($ins, 'LWLockReleaseClearVar', $ipid);
	$ins->query_until(qr/started/,
		"\\echo started\nINSERT INTO wal_i VALUES (1);\n");
	LockStatTest::Gdb::gdb_wait($g, qr/Breakpoint 1,/);
	my $ins_id = query_id_of($ipid);

	my $flusher = $node->background_psql('postgres');
	my $fpid = $flusher->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	$flusher->query_until(qr/started/,
		"\\echo started\nINSERT INTO wal_f VALUES (1);\n");
	$node->poll_query_until('postgres', qq{
		SELECT wait_event = 'WALInsert' FROM pg_stat_activity WHERE pid = $fpid})
	  or die 'the committing session did not wait for the WAL insertion';
	my $f_id = query_id_of($fpid);
	LockStatTest::Gdb::gdb_detach($g);
	$ins->query_safe('SELECT 1');
	$flusher->query_safe('SELECT 1');
	$ins->quit;
	$flusher->quit;

	is( $node->safe_psql(
			'postgres', qq{
SELECT sum(blocks) >= 1, bool_and(holder_mode = 'exclusive')
FROM pg_lwlock_blockers
WHERE tranche = 'WALInsert' AND queryid = $f_id AND holder_queryid = $ins_id}),
		't|t',
		'a commit waiting for a WAL insertion (LWLockWaitForVar) names the inserting statement as holder, exclusive');
	is( $node->safe_psql(
			'postgres', qq{
SELECT p.query FROM pg_stat_statements p WHERE p.queryid = $ins_id}),
		'INSERT INTO wal_i VALUES ($1)',
		'and that holder joins pg_stat_statements: the INSERT');
}

# --- a wait for a WAL insertion that LWLockUpdateVar() ends ------------------
# With 64 kB of WAL buffers, session I's 400 kB WAL record (a logical
# message) runs onto pages that are not initialized yet: before it
# initializes one, I advertises how far it got with LWLockUpdateVar() on its
# WAL insertion lock, which wakes that lock's waiters, and goes on holding
# the lock.  gdb stops I at its first LWLockUpdateVar() call.  Session F's
# INSERT then needs the buffers that I's record fills, and waits for I's
# insertion in LWLockWaitForVar().  gdb lets I go on, through that update,
# until it stops again in LWLockReleaseClearVar(), still holding the lock:
# F's wait, ended by the update and not by a release, is a block on
# WALInsert under I's statement, in mode exclusive, and there is no block
# of F whose holder is not known.  F may also block under other processes
# (the WAL writer's WALWrite or WALBufMapping, another process's WAL
# insertion), and under I on WALWrite with the root of I's own wait: those
# name their own holders and roots, so only F's blocks on WALInsert under I
# are asked to name I as root.  Everything that I's stop could make wait
# for WAL is done first (VACUUM FREEZE, then a checkpoint), and the
# observer's session is connected before, so that reading the views
# inserts no WAL.
SKIP:
{
	my $no_gdb = LockStatTest::Gdb::gdb_unavailable();
	skip $no_gdb, 3 if $no_gdb;

	my $wal = LockStatTest::new_node('wal_update',
		    "shared_preload_libraries = 'pg_lockstat,lockstat_test,pg_stat_statements'\n"
		  . "autovacuum = off\nwal_buffers = 64kB\n");
	$wal->safe_psql('postgres',
		'CREATE EXTENSION pg_stat_statements; CREATE TABLE wal_u (i int)');
	$wal->safe_psql('postgres', 'VACUUM FREEZE');
	$wal->safe_psql('postgres', 'CHECKPOINT');
	my $obs = $wal->background_psql('postgres');
	my $ins = $wal->background_psql('postgres');
	my $ipid = $ins->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	my $flusher = $wal->background_psql('postgres');
	my $fpid = $flusher->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	$obs->query_safe(
		'SELECT pg_lockstat_reset(); SELECT count(*) FROM pg_lwlock_blockers; SELECT count(*) FROM pg_stat_activity');

	# poll with the observer's session until $sql returns 't'
	my $poll = sub {
		my ($sql, $what) = @_;
		my $deadline =
		  Time::HiRes::time() + $PostgreSQL::Test::Utils::timeout_default;
		until ($obs->query_safe($sql) eq 't')
		{
			die "timed out waiting for $what"
			  if Time::HiRes::time() > $deadline;
			Time::HiRes::usleep(10_000);
		}
	};

	my $g = LockStatTest::Gdb::gdb_attach($ins, 'LWLockUpdateVar', $ipid);
	$ins->query_until(qr/started/,
		"\\echo started\nSELECT pg_logical_emit_message(false, 'p', repeat('x', 400000)) IS NOT NULL;\n");
	LockStatTest::Gdb::gdb_wait($g, qr/Breakpoint 1,/);
	my $ins_id = $obs->query_safe(
		"SELECT query_id FROM pg_stat_activity WHERE pid = $ipid");

	$flusher->query_until(qr/started/,
		"\\echo started\nINSERT INTO wal_u VALUES (1);\n");
	$poll->(
		"SELECT wait_event = 'WALInsert' FROM pg_stat_activity WHERE pid = $fpid",
		'the INSERT to wait for the WAL insertion');
	my $f_id = $obs->query_safe(
		"SELECT query_id FROM pg_stat_activity WHERE pid = $fpid");

	LockStatTest::Gdb::gdb_send($g,
		"delete\nbreak LWLockReleaseClearVar\ncontinue",
		qr/Breakpoint 2,/);
	$poll->(
		qq{SELECT coalesce(sum(blocks), 0) >= 1 FROM pg_lwlock_blockers
		   WHERE tranche = 'WALInsert' AND queryid = $f_id
			 AND (holder_queryid = $ins_id OR holder_mode IS NULL)},
		'the INSERT to be woken by the update');
	is( $obs->query_safe(
			qq{
SELECT coalesce(sum(blocks) FILTER (WHERE tranche = 'WALInsert'
									AND holder_queryid = $ins_id), 0) >= 1,
	   coalesce(bool_and(holder_mode = 'exclusive'
						 AND root_queryid IS NOT DISTINCT FROM $ins_id)
				FILTER (WHERE tranche = 'WALInsert'
						AND holder_queryid = $ins_id), false),
	   count(*) FILTER (WHERE holder_mode IS NULL) = 0
FROM pg_lwlock_blockers WHERE queryid = $f_id}),
		't|t|t',
		'a wait that LWLockUpdateVar() ends, the updater still holding its WAL insertion lock, names the updating statement as holder and root, exclusive'
	);
	LockStatTest::Gdb::gdb_detach($g);
	$ins->query_safe('SELECT 1');
	$flusher->query_safe('SELECT 1');
	$ins->quit;
	$flusher->quit;
	$obs->quit;

	# Once I goes on, F may block again, on other locks or under other
	# processes (WALWrite under the WAL writer, an insertion of the
	# bgwriter's): those blocks name their own holders.  What must hold is
	# that F's blocks under I are still there and that none of F's blocks
	# lost its holder.
	note "blocks of the INSERT after the release:\n"
	  . $wal->safe_psql(
		'postgres', qq{
SELECT tranche, blocks, holder_queryid, holder_backend_type, holder_mode,
	   root_queryid, root_backend_type, root_mode
FROM pg_lwlock_blockers WHERE queryid = $f_id ORDER BY tranche});
	is( $wal->safe_psql(
			'postgres', qq{
SELECT coalesce(sum(blocks) FILTER (WHERE tranche = 'WALInsert'
									AND holder_queryid = $ins_id), 0) >= 1,
	   count(*) FILTER (WHERE holder_mode IS NULL)
FROM pg_lwlock_blockers WHERE queryid = $f_id}),
		't|0',
		'once I released, the INSERT still has its blocks under I, and none of its blocks lacks a holder');
	like(
		$wal->safe_psql(
			'postgres',
			"SELECT query FROM pg_stat_statements WHERE queryid = $ins_id"),
		qr/^SELECT pg_logical_emit_message/,
		'and that holder joins pg_stat_statements: the logical message');
	LockStatTest::query_tranches_add_up($wal, 'after the waits for a WAL insertion');
	$wal->stop;
}

# --- pgbench -------------------------------------------------------------------

$node->command_ok(
	[
		'pgbench', '-i', '-s', '1', '-q',
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'pgbench -i');
$node->safe_psql('postgres',
	'SELECT pg_lockstat_reset(); SELECT pg_stat_statements_reset()');

# tpcb-like at 4 clients, and 4 clients of a script that blocks behind a
# holder of the test lock, each once
my $script = $node->basedir . '/block.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	"SELECT lockstat_test_lwlock('exclusive', 1);\n");
my $holder = $node->background_psql('postgres');
my $hpid = $holder->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
LockStatTest::hold_lwlock($node, 'shared', $holder, $hpid);
$holder_id = query_id_of($hpid);
my ($pgb_out, $pgb_err) = ('', '');
my $blocking = IPC::Run::start(
	[
		'pgbench', '-n', '-c', 4, '-t', 1, '-f', $script,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$pgb_out, '2>', \$pgb_err);
LockStatTest::wait_for_waiters($node, 4);
$node->command_ok(
	[
		'pgbench', '-n', '-c', 4, '-t', 200,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'pgbench tpcb-like, 4 clients, 200 transactions each, while 4 wait');
LockStatTest::release_holds($node);
$holder->quit;
ok($blocking->finish, 'the 4 blocked clients finish once released')
  or diag($pgb_err);

# The shared holder's release wakes the first exclusive waiter only; each
# waiter's release then wakes the next: one block ended by the holder, three
# by the statement itself, exclusive.
is( $node->safe_psql(
		'postgres', qq{
SELECT string_agg(b.blocks || ' ' ||
                  CASE WHEN b.holder_queryid = $holder_id THEN 'holder'
                       WHEN b.holder_queryid = b.queryid THEN 'itself'
                       ELSE 'other' END || ' ' || b.holder_mode,
                  ', ' ORDER BY b.holder_mode DESC)
FROM pg_lwlock_blockers b
JOIN pg_stat_statements p USING (queryid, dbid, userid)
WHERE b.tranche = 'lockstat_test'
  AND p.query = 'SELECT lockstat_test_lwlock(\$1, \$2)'}),
	'1 holder shared, 3 itself exclusive',
	"the pgbench script's 4 blocks: the first ended by the shared holder's query, the others by the statement's own exclusive holds, one after the other");
# Each waiter got the lock by being woken, so its release passes on the root
# of its own wait: all four calls of the convoy name the shared holder's
# query as their root.
is( $node->safe_psql(
		'postgres', qq{
SELECT string_agg(b.blocks || ' ' ||
                  CASE WHEN b.root_queryid = $holder_id THEN 'holder'
                       WHEN b.root_queryid = b.queryid THEN 'itself'
                       ELSE 'other' END || ' ' || b.root_mode,
                  ', ' ORDER BY b.holder_mode DESC)
FROM pg_lwlock_blockers b
JOIN pg_stat_statements p USING (queryid, dbid, userid)
WHERE b.tranche = 'lockstat_test'
  AND p.query = 'SELECT lockstat_test_lwlock(\$1, \$2)'}),
	'1 holder shared, 3 holder shared',
	"and all 4 name the shared holder's query as their root, in mode shared");
is( $node->safe_psql(
		'postgres', q{
SELECT coalesce(sum(blocks), 0) FROM pg_lwlock_blockers
WHERE holder_mode IS NULL AND (queryid IS NOT NULL OR backend_type IS NOT NULL)}),
	'0', 'every blocked call outside the residual rows has a known holder');
my ($blocks, $named) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT sum(blocks), sum(blocks) FILTER (WHERE holder_queryid IS NOT NULL)
FROM pg_lwlock_blockers});
note "blocked calls: $blocks, of them with a holding query ID: $named";
my $joined = $node->safe_psql(
	'postgres', q{
SELECT b.tranche, left(w.query, 40), left(h.query, 40), b.holder_mode,
       b.blocks, round(b.wait_time::numeric, 3)
FROM pg_lwlock_blockers b
JOIN pg_stat_statements w USING (queryid, dbid, userid)
JOIN pg_stat_statements h ON h.queryid = b.holder_queryid
  AND h.dbid = b.dbid AND h.userid = b.userid
ORDER BY b.wait_time DESC LIMIT 8});
note "top waiter/holder pairs:\n$joined";

cmp_ok(
	$node->safe_psql(
		'postgres', q{
SELECT coalesce(sum(q.sh_hold_samples + q.ex_hold_samples), 0)
FROM pg_lwlock_query_stats q
JOIN pg_stat_statements p USING (queryid, dbid, userid)}),
	'>', 0,
	'at the default sampling, timed holds of the pgbench statements join pg_stat_statements'
);
my $holds = $node->safe_psql(
	'postgres', q{
SELECT q.tranche, left(p.query, 40), q.ex_hold_samples, q.sh_hold_samples,
       round((q.ex_hold_time + q.sh_hold_time)::numeric, 3)
FROM pg_lwlock_query_stats q
JOIN pg_stat_statements p USING (queryid, dbid, userid)
WHERE q.ex_hold_samples + q.sh_hold_samples > 0
ORDER BY q.ex_hold_time + q.sh_hold_time DESC LIMIT 8});
note "top sampled holds by statement:\n$holds";
LockStatTest::query_tranches_add_up($node, 'after pgbench');

$node->stop;
done_testing();
