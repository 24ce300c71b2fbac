# Copyright (c) 2026, pg_lockstat developers
#
# pg_lwlock_query_stats, with pg_stat_statements preloaded:
# - three sessions running three different statements each block exactly
#   once behind a holder of the lockstat_test LWLock: each statement has one
#   row, with blocks = 1, its queryid equal to pg_stat_statements' and to
#   pg_stat_activity.query_id, the session's database and role, and a wait
#   equal to its maximum and within the bounds the test measures; the rows
#   add up to pg_lwlock_stats' blocks and wait_time of the tranche;
# - under contention (two statements, two sessions each, 2000 exclusive
#   acquisitions, started behind a holder so that each session blocks):
#   each statement's blocks are exactly the sum of its two sessions' blocks
#   in pg_lwlock_backend_stats, and once the sessions have exited their
#   counts are still there, unchanged;
# - for every tranche, the rows add up to pg_lwlock_stats' blocks and
#   wait_time;
# - a transaction that blocks once in each of 40 different statements
#   overflows its process's table of 32 entries: 32 statements have rows,
#   the 8 calls without an entry are in the residual row and in
#   query_waits_unattributed, exactly, the per-tranche totals stay exact,
#   and the commit folds the table into the shared one;
# - a parallel query's two workers, each blocking once, are counted under
#   the leader's queryid, and the leader not at all;
# - a session without query IDs (compute_query_id = off) is counted with
#   queryid NULL as a client backend, and pg_lockstat_status says it has
#   none;
# - pg_lockstat_reset() empties the view, also of the tables of sessions
#   still running;
# - pgbench's tpcb-like transactions, each client's first statement
#   blocking behind a holder: the join with pg_stat_statements names that
#   statement with its 8 blocks and their measured wait;
# - a role without pg_read_all_stats gets 42501, one with it reads.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

use LockStatTest;

# the monotonic clock, which the server's wait times are measured on too
sub now
{
	return Time::HiRes::clock_gettime(Time::HiRes::CLOCK_MONOTONIC());
}

my $node = LockStatTest::new_node('query_stats',
	    "shared_preload_libraries = 'pg_lockstat,lockstat_test,pg_stat_statements'\n"
	  . "max_worker_processes = 16\n"
	  . "autovacuum = off\n");
$node->safe_psql('postgres', 'CREATE EXTENSION pg_stat_statements');

# the rows of tranche lockstat_test, and how they add up against
# pg_lwlock_stats: "<rows' blocks> <tranche's blocks> <waits equal>"
my $test_sums = q{
SELECT coalesce(sum(q.blocks), 0) || ' ' ||
       coalesce((SELECT blocks FROM pg_lwlock_stats
                 WHERE tranche = 'lockstat_test'), 0) || ' ' ||
       (round(coalesce(sum(q.wait_time), 0)::numeric, 6) =
        round(coalesce((SELECT wait_time FROM pg_lwlock_stats
                        WHERE tranche = 'lockstat_test'), 0)::numeric, 6))
FROM pg_lwlock_query_stats q WHERE q.tranche = 'lockstat_test'};

# --- three statements, one block each ----------------------------------------

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset(); SELECT pg_stat_statements_reset()');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_lwlock_query_stats WHERE tranche = 'lockstat_test'}),
	'0', 'no rows of the test tranche after a reset');

my @statements = (
	q{SELECT lockstat_test_lwlock('shared', 1)},
	q{SELECT 1, lockstat_test_lwlock('shared', 1)},
	q{SELECT 1, 2, lockstat_test_lwlock('shared', 1)});

# the holder keeps the lock until released, which comes once the three
# waiters have been seen blocked for 50 ms; each wait lies within the bounds
# the test measures: at least from the moment all were seen waiting to the
# release, at most from before the first started to after the last finished
my $holder = LockStatTest::hold_lwlock($node, 'exclusive');
my $t0 = now();
my @waiters;
foreach my $sql (@statements)
{
	my $h = $node->background_psql('postgres');
	$h->query_until(qr/started/, "\\echo started\n$sql;\n");
	push @waiters, $h;
}
LockStatTest::wait_for_waiters($node, 3);
my $seen = now();
# the query IDs of the waiting sessions, as pg_stat_activity shows them
my %activity_id = map { split /\|/ } split /\n/, $node->safe_psql('postgres',
	q{SELECT rtrim(query, ';'), query_id FROM pg_stat_activity
	  WHERE wait_event = 'lockstat_test'});
Time::HiRes::usleep(10_000) while now() - $seen < 0.05;
my $released = now();
LockStatTest::release_holds($node);
$holder->quit;
$_->quit foreach @waiters;
my $t1 = now();
my ($min_ms, $max_ms) = (($released - $seen) * 1000, ($t1 - $t0) * 1000);

is($node->safe_psql('postgres', $test_sums), '3 3 true',
	'three blocks, all in the view, adding up to the tranche blocks and wait time');
foreach my $i (0 .. $#statements)
{
	my $sql = $statements[$i];
	my $pattern = $sql =~ s/\d+, //gr;
	my ($pgss_id, $row) = split /\|/, $node->safe_psql(
		'postgres', qq{
SELECT p.queryid,
       q.blocks || ' ' || (q.wait_time = q.max_wait_time) || ' ' ||
       (q.wait_time >= $min_ms AND q.wait_time <= $max_ms) || ' ' ||
       (q.dbid = (SELECT oid FROM pg_database WHERE datname = 'postgres')) || ' ' ||
       (q.userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)) || ' ' ||
       coalesce(q.backend_type, 'NULL')
FROM pg_stat_statements p
JOIN pg_lwlock_query_stats q USING (queryid, dbid, userid)
WHERE p.query ~ '^SELECT (\\\$[0-9]+, )*lockstat_test_lwlock'
  AND p.query ~ ('^SELECT ' || repeat('\\\$[0-9]+, ', $i) || 'lockstat_test')
  AND q.tranche = 'lockstat_test'});
	ok(defined $row, "statement $i joins pg_stat_statements by queryid, dbid, userid");
	is($row, '1 true true true true NULL',
		sprintf("statement $i: one block, its wait the maximum, within %.1f..%.1f ms, in the session's database and role, no backend type",
			$min_ms, $max_ms));
	is($activity_id{$sql}, $pgss_id,
		"statement $i: the queryid is the one pg_stat_activity showed while it waited");
}
is($node->safe_psql('postgres',
		q{SELECT count(DISTINCT queryid) FROM pg_lwlock_query_stats
		  WHERE tranche = 'lockstat_test'}),
	'3', 'three distinct queryids, none NULL');

# --- contention: two statements, two sessions each ---------------------------

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my %contended = (
	A => q{SELECT lockstat_test_lwlock('exclusive', 2000, 20)},
	B => q{SELECT 7, lockstat_test_lwlock('exclusive', 2000, 20)});
my @names = qw(A A B B);
# the four sessions start behind a holder and go on together once all four
# sleep on the lock: each blocks at least once, on any machine
$holder = LockStatTest::hold_lwlock($node, 'exclusive');
my @sessions;
foreach my $name (@names)
{
	push @sessions, $node->background_psql('postgres');
	$sessions[-1]->query_until(qr/started/, "\\echo started\n$contended{$name};\n");
}
LockStatTest::wait_for_waiters($node, 4);
LockStatTest::release_holds($node);
$holder->quit;
$_->query_until(qr/done/, "\\echo done\n") foreach @sessions;
my @pids = map { $_->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr } @sessions;

# a statement's blocks in the view, found by its text in pg_stat_statements
sub statement_blocks
{
	my ($regex) = @_;
	return $node->safe_psql(
		'postgres', qq{
SELECT coalesce(sum(q.blocks), 0)
FROM pg_lwlock_query_stats q
JOIN pg_stat_statements p USING (queryid, dbid, userid)
WHERE q.tranche = 'lockstat_test' AND p.query ~ '$regex'});
}
my %regex = (
	A => q{^SELECT lockstat_test_lwlock\(\$1, \$2, \$3\)$},
	B => q{^SELECT \$1, lockstat_test_lwlock\(\$2, \$3, \$4\)$});
my %live;
foreach my $name (qw(A B))
{
	my $pids = join ',', map { $pids[$_] } grep { $names[$_] eq $name } 0 .. 3;
	my ($backend, $each) = split /\|/, $node->safe_psql('postgres', qq{
SELECT coalesce(sum(blocks), 0), count(*) FILTER (WHERE blocks >= 1)
FROM pg_lwlock_backend_stats
WHERE tranche = 'lockstat_test' AND pid IN ($pids)});
	$live{$name} = statement_blocks($regex{$name});
	is($each, 2, "statement $name blocked in each of its two sessions ($backend times)");
	is($live{$name}, $backend,
		"statement $name: its blocks are exactly its two sessions' blocks");
}
my ($rows_blocks, $tranche_blocks, $waits_equal) =
  split / /, $node->safe_psql('postgres', $test_sums);
is("$rows_blocks $waits_equal", "$tranche_blocks true",
	"under contention the rows add up to the tranche's $tranche_blocks blocks and its wait time");

$_->quit foreach @sessions;
$node->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid IN (" . join(',', @pids) . ")")
  or die 'the sessions did not exit';
foreach my $name (qw(A B))
{
	is(statement_blocks($regex{$name}), $live{$name},
		"statement $name: the same blocks once its sessions have exited");
}
is($node->safe_psql('postgres', $test_sums), "$tranche_blocks $tranche_blocks true",
	'and the rows still add up');
LockStatTest::query_tranches_add_up($node, 'after contention');

# --- a process's table overflows ----------------------------------------------

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my ($unattributed0, $entries0) = split /\|/, $node->safe_psql('postgres',
	'SELECT query_waits_unattributed, query_entries FROM pg_lockstat_status');
# 40 statements of different shapes, so 40 queryids, in one transaction,
# each blocking exactly once: for each, a holder takes the lock, the waiter
# sends the statement, the test waits until the waiter sleeps on the lock,
# releases it and waits for the statement's end.  The process's table has
# 32 entries (LOCKSTAT_QUERY_SLOT_ENTRIES in lockstat_query.c), so the
# first 32 statements get one, and the last 8 calls are in the residual row
# of the tranche.  (Nothing is folded before the commit: a process folds at
# the end of a transaction, once its table has LOCKSTAT_QUERY_FOLD_AT = 24
# entries or has spilled.)  Should the waiter also block on another LWLock
# inside one of its statements, that takes an entry too: the test counts
# those rows and allows for them.
my ($n_stmts, $slot_entries) = (40, 32);
$holder = $node->background_psql('postgres');
$holder->set_query_timer_restart();
my $holder_pid = $holder->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
my $waiter = $node->background_psql('postgres');
$waiter->set_query_timer_restart();
my $waiter_pid = $waiter->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
$waiter->query_safe('BEGIN');
foreach my $i (1 .. $n_stmts)
{
	my $consts = join '', map { "$_, " } 1 .. $i;
	LockStatTest::hold_lwlock($node, 'exclusive', $holder, $holder_pid);
	$waiter->query_until(qr/started $i\b/,
		"\\echo started $i\nSELECT $consts lockstat_test_lwlock('shared', 1) + 0;\n\\echo done $i\n");
	LockStatTest::wait_for_waiters($node, 1);
	LockStatTest::release_holds($node);
	$waiter->query_until(qr/done $i\b/, '');
}
$holder->quit;
# the waiter's statements, as pg_stat_statements shows them
my $overflow_like = q{'SELECT $1, %lockstat_test_lwlock($%, $%) + $%'};
my ($waiter_blocks, $stmt_blocks, $stmt_rows, $other_rows, $residual_blocks,
	$residual_all, $unattributed1)
  = split /\|/, $node->safe_psql('postgres', qq{
SELECT (SELECT blocks FROM pg_lwlock_backend_stats
        WHERE pid = $waiter_pid AND tranche = 'lockstat_test'),
       (SELECT coalesce(sum(q.blocks), 0) FROM pg_lwlock_query_stats q
        JOIN pg_stat_statements p USING (queryid, dbid, userid)
        WHERE q.tranche = 'lockstat_test' AND p.query LIKE $overflow_like),
       (SELECT count(*) FROM pg_lwlock_query_stats q
        JOIN pg_stat_statements p USING (queryid, dbid, userid)
        WHERE q.tranche = 'lockstat_test' AND p.query LIKE $overflow_like),
       (SELECT count(*) FROM pg_lwlock_query_stats q
        JOIN pg_stat_statements p USING (queryid, dbid, userid)
        WHERE q.tranche <> 'lockstat_test' AND p.query LIKE $overflow_like),
       (SELECT coalesce(sum(blocks), 0) FROM pg_lwlock_query_stats
        WHERE queryid IS NULL AND backend_type IS NULL AND tranche = 'lockstat_test'),
       (SELECT coalesce(sum(blocks), 0) FROM pg_lwlock_query_stats
        WHERE queryid IS NULL AND backend_type IS NULL),
       (SELECT query_waits_unattributed FROM pg_lockstat_status)});
note "the waiter's statements have $other_rows rows of other tranches";
is($waiter_blocks, $n_stmts,
	"the waiter blocked once in each of its $n_stmts statements");
is($stmt_rows, $slot_entries - $other_rows,
	"$stmt_rows statements have rows: the table's $slot_entries entries, less the $other_rows of other tranches");
is($stmt_blocks, $stmt_rows, 'one block in each of those rows');
is($residual_blocks, $n_stmts - $stmt_rows,
	"the residual row holds the other statements' $residual_blocks calls");
is($unattributed1 - $unattributed0, $residual_all,
	'query_waits_unattributed counts exactly the calls in the residual rows');
# The commit folds only if it gets query_lock at once, and every backend
# that exits takes it to fold: first let the other client backends (of the
# test's earlier connections) be gone, as the waiter sees them (clearing its
# transaction's snapshot of pg_stat_activity each time).
my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
for (;;)
{
	$waiter->query_safe('SELECT pg_stat_clear_snapshot()');
	last if $waiter->query_safe(q{SELECT count(*) = 0 FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()}) eq 't';
	die 'the other client backends did not exit' if time() > $deadline;
	Time::HiRes::usleep(100_000);
}
$waiter->query_safe('COMMIT');
cmp_ok($node->safe_psql('postgres', 'SELECT query_entries FROM pg_lockstat_status'),
	'>=', $entries0 + $stmt_rows,
	'the commit folded the table into the shared table');
is(statement_blocks(q{lockstat_test_lwlock\(\$[0-9]+, \$[0-9]+\) \+ \$[0-9]+$}) + 0, $stmt_blocks,
	'the statements keep their blocks after the fold');
$waiter->quit;
($rows_blocks, $tranche_blocks, $waits_equal) =
  split / /, $node->safe_psql('postgres', $test_sums);
is("$rows_blocks $waits_equal", "$tranche_blocks true",
	'the rows add up to the tranche after the overflow and the fold');
LockStatTest::query_tranches_add_up($node, 'after the overflow');

# --- parallel workers ------------------------------------------------------------

$node->safe_psql('postgres', q{
CREATE TABLE pages (i int, pad text);
ALTER TABLE pages ALTER pad SET STORAGE PLAIN;
ALTER TABLE pages SET (parallel_workers = 2);
INSERT INTO pages SELECT g, repeat('x', 5000) FROM generate_series(1, 64) g;
ANALYZE pages;
-- costly enough that the planner runs it in the workers
ALTER FUNCTION lockstat_test_lwlock(text, integer, integer, boolean) COST 100000;
SELECT pg_lockstat_reset();});
is($node->safe_psql('postgres',
		"SELECT pg_relation_size('pages') / current_setting('block_size')::int"),
	'64', 'the table has one row on each of 64 pages');
my $leader = $node->background_psql('postgres');
my $leader_pid = $leader->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
$leader->query_safe(q{
SET max_parallel_workers_per_gather = 2; SET parallel_leader_participation = off;
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0});
like($leader->query_safe(
		'EXPLAIN (COSTS OFF) SELECT count(lockstat_test_lwlock(\'shared\', 1)) FROM pages'),
	qr/Workers Planned: 2/, 'the query is planned with two workers');
# a session holds the lock until both workers have been seen sleeping on it
$holder = LockStatTest::hold_lwlock($node, 'exclusive');
$leader->query_until(qr/started/,
	"\\echo started\nSELECT count(lockstat_test_lwlock('shared', 1)) FROM pages;\n\\echo done\n");
$node->poll_query_until('postgres',
	q{SELECT count(*) = 2 FROM pg_stat_activity
	  WHERE backend_type = 'parallel worker' AND wait_event = 'lockstat_test'})
  or die 'the workers did not block';
LockStatTest::release_holds($node);
$leader->query_until(qr/done/, '');
$holder->quit;
is($node->safe_psql('postgres', qq{
SELECT q.blocks, q.backend_type IS NULL
FROM pg_lwlock_query_stats q
JOIN pg_stat_statements p USING (queryid, dbid, userid)
WHERE q.tranche = 'lockstat_test'
  AND p.query = 'SELECT count(lockstat_test_lwlock(\$1, \$2)) FROM pages'}),
	'2|t', "the two workers' blocks are counted under the leader's queryid");
is($node->safe_psql('postgres', qq{
SELECT coalesce(sum(sh_acquires + ex_acquires), 0) FROM pg_lwlock_backend_stats
WHERE pid = $leader_pid AND tranche = 'lockstat_test'}),
	'0', 'the leader did not take the lock itself');
is($node->safe_psql('postgres', q{
SELECT count(*) FROM pg_lwlock_query_stats
WHERE tranche = 'lockstat_test' AND backend_type = 'parallel worker'}),
	'0', 'no parallel worker row without a queryid');
$leader->quit;
$node->safe_psql('postgres',
	'ALTER FUNCTION lockstat_test_lwlock(text, integer, integer, boolean) COST 1');

# --- a session without query IDs, then a reset -----------------------------------

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is($node->safe_psql('postgres', 'SELECT query_ids_available FROM pg_lockstat_status'),
	't', 'with pg_stat_statements loaded, query IDs are available');
$holder = LockStatTest::hold_lwlock($node, 'exclusive');
$waiter = $node->background_psql('postgres');
$waiter->query_safe('SET compute_query_id = off');
is($waiter->query_safe('SELECT query_ids_available FROM pg_lockstat_status'),
	'f', 'with compute_query_id = off, pg_lockstat_status says there are none');
$waiter->query_until(qr/started/,
	"\\echo started\nSELECT lockstat_test_lwlock('shared', 1);\n\\echo done\n");
LockStatTest::wait_for_waiters($node, 1);
LockStatTest::release_holds($node);
$waiter->query_until(qr/done/, '');
$holder->quit;
is($node->safe_psql('postgres', q{
SELECT queryid IS NULL, backend_type, blocks,
       dbid = (SELECT oid FROM pg_database WHERE datname = 'postgres'),
       userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)
FROM pg_lwlock_query_stats WHERE tranche = 'lockstat_test'}),
	't|client backend|1|t|t',
	'its block has queryid NULL, as a client backend of its database and role');

# the waiter is still running, with its count in its own table
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_lwlock_query_stats WHERE tranche = 'lockstat_test'}),
	'0', "a reset empties the view, the running session's table included");
($holder, my $w2) = LockStatTest::block_waiter($node);
LockStatTest::end_block($node, $holder, $w2);
is($node->safe_psql('postgres', $test_sums), '1 1 true',
	'after the reset, the next block is the only one');
$waiter->quit;

# --- pgbench, joined with pg_stat_statements -----------------------------------

$node->command_ok([ 'pgbench', '-i', '-s', '2', '-q', '-h', $node->host,
		'-p', $node->port, 'postgres' ], 'pgbench -i');
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset(); SELECT pg_stat_statements_reset()');
# pgbench's tpcb-like transaction (as a script of its own, scale 2), 25
# per client, each preceded by a statement on pgbench_branches that takes
# the test lock: each client's first one sleeps behind a holder, which is
# released once all 8 have been seen sleeping for 50 ms, so that 8 blocks
# of a pgbench statement, each of at least the measured wait, are certain
# on any machine
my $tpcb = $node->basedir . '/tpcb_blocked.sql';
append_to_file($tpcb, q{\set aid random(1, 200000)
\set bid random(1, 2)
\set tid random(1, 20)
\set delta random(-5000, 5000)
SELECT lockstat_test_lwlock('shared', 1) FROM pgbench_branches WHERE bid = :bid;
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
});
$holder = LockStatTest::hold_lwlock($node, 'exclusive');
$t0 = now();
my ($pgb_out, $pgb_err) = ('', '');
my $pgbench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '8', '-j', '2', '-t', '25', '-f', $tpcb,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$pgb_out, '2>', \$pgb_err,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
LockStatTest::wait_for_waiters($node, 8);
$seen = now();
Time::HiRes::usleep(10_000) while now() - $seen < 0.05;
$released = now();
LockStatTest::release_holds($node);
$holder->quit;
ok($pgbench->finish, 'pgbench, tpcb-like, 8 clients, 25 transactions each')
  or diag($pgb_err);
$t1 = now();
like($pgb_out, qr{number of transactions actually processed: 200/200},
	'pgbench ran 200 transactions');
($min_ms, $max_ms) = (($released - $seen) * 1000, ($t1 - $t0) * 1000);
is($node->safe_psql('postgres', qq{
SELECT q.blocks, q.wait_time >= 8 * $min_ms, q.max_wait_time <= $max_ms
FROM pg_lwlock_query_stats q
JOIN pg_stat_statements p USING (queryid, dbid, userid)
WHERE q.tranche = 'lockstat_test'
  AND p.query = 'SELECT lockstat_test_lwlock(\$1, \$2) FROM pgbench_branches WHERE bid = \$3'}),
	'8|t|t',
	sprintf('the join names the pgbench statement with its 8 blocks, together at least 8 x %.1f ms, none longer than %.1f ms',
		$min_ms, $max_ms));
my $joined = $node->safe_psql('postgres', q{
SELECT p.query, q.tranche, q.blocks, round(q.wait_time::numeric, 3)
FROM pg_lwlock_query_stats q
JOIN pg_stat_statements p USING (queryid, dbid, userid)
WHERE q.blocks > 0 AND q.wait_time > 0
ORDER BY q.wait_time DESC LIMIT 5});
note "top statements by blocked time:\n$joined";
LockStatTest::query_tranches_add_up($node, 'after pgbench');

# --- privileges -------------------------------------------------------------------

$node->safe_psql('postgres',
	'CREATE ROLE regress_nobody LOGIN; CREATE ROLE regress_monitor LOGIN IN ROLE pg_read_all_stats;');
foreach my $obj ('pg_lwlock_query_stats', 'pg_lwlock_query_stats()')
{
	my ($rc, $stdout, $stderr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT count(*) FROM $obj;",
		extra_params => [ '-U', 'regress_nobody' ]);
	like($stderr, qr/ERROR:  42501: permission denied for (view|function) pg_lwlock_query_stats/,
		"a role without pg_read_all_stats cannot read $obj (42501)");
	($rc, $stdout, $stderr) = $node->psql('postgres',
		"SELECT count(*) > 0 FROM $obj",
		extra_params => [ '-U', 'regress_monitor' ]);
	is($stdout, 't', "pg_read_all_stats reads $obj");
}

done_testing();
