# Copyright (c) 2026, pg_lockstat developers
#
# pg_lwlock_query_stats, with pg_stat_statements preloaded:
# - three sessions running three different statements each block exactly
#   once behind a holder of the lockstat_test LWLock: each statement has one
#   row, with blocks = 1, its queryid equal to pg_stat_statements' and to
#   pg_stat_activity.query_id, the session's database and role, and a wait
#   equal to its maximum; the rows add up to pg_lwlock_stats' blocks and
#   wait_time of the tranche;
# - under contention (two statements, two sessions each, 2000 exclusive
#   acquisitions): each statement's blocks are exactly the sum of its two
#   sessions' blocks in pg_lwlock_backend_stats, and once the sessions have
#   exited their counts are still there, unchanged;
# - for every tranche, the rows add up to pg_lwlock_stats' blocks and
#   wait_time;
# - a transaction that blocks in 100 different statements overflows its
#   process's table of 32 entries: the calls without an entry are in the
#   residual row and in query_waits_unattributed, exactly, the per-tranche
#   totals stay exact, and the commit folds the table into the shared one;
# - a parallel query's two workers, each blocking once, are counted under
#   the leader's queryid, and the leader not at all;
# - a session without query IDs (compute_query_id = off) is counted with
#   queryid NULL as a client backend, and pg_lockstat_status says it has
#   none;
# - pg_lockstat_reset() empties the view, also of the tables of sessions
#   still running;
# - the join with pg_stat_statements names pgbench's statements with their
#   blocked time;
# - a role without pg_read_all_stats gets 42501, one with it reads.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

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

my $holder = $node->background_psql('postgres');
$holder->query_until(qr/started/,
	"\\echo started\nSELECT lockstat_test_lwlock('exclusive', 1, 1000000);\n");
$node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity
	  WHERE query LIKE 'SELECT lockstat_test_lwlock(''exclusive''%' AND state = 'active'})
  or die 'holder did not start';
my @waiters;
foreach my $sql (@statements)
{
	my $h = $node->background_psql('postgres');
	$h->query_until(qr/started/, "\\echo started\n$sql;\n");
	push @waiters, $h;
}
$node->poll_query_until('postgres',
	q{SELECT count(*) = 3 FROM pg_stat_activity WHERE wait_event = 'lockstat_test'})
  or die 'waiters did not block';
# the query IDs of the waiting sessions, as pg_stat_activity shows them
my %activity_id = map { split /\|/ } split /\n/, $node->safe_psql('postgres',
	q{SELECT rtrim(query, ';'), query_id FROM pg_stat_activity
	  WHERE wait_event = 'lockstat_test'});
$holder->quit;
$_->quit foreach @waiters;

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
       (q.wait_time > 0 AND q.wait_time < 1100) || ' ' ||
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
		"statement $i: one block, its wait the maximum, below 1.1 s, in the session's database and role, no backend type");
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
my @sessions = LockStatTest::start_together($node, 50,
	map { "$contended{$_};" } @names);
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
	my $backend = $node->safe_psql('postgres', qq{
SELECT coalesce(sum(blocks), 0) FROM pg_lwlock_backend_stats
WHERE tranche = 'lockstat_test' AND pid IN ($pids)});
	$live{$name} = statement_blocks($regex{$name});
	cmp_ok($backend, '>', 0, "statement $name blocked $backend times in its two sessions");
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
# a holder takes the lock exclusively for 2 ms at a time, with a gap of
# 0.1 ms in between, so that a waiter gets in during a gap and its next
# statement blocks behind the next hold; until cancelled
$holder = $node->background_psql('postgres', on_error_stop => 0);
my $holder_pid = $holder->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
$holder->query_until(qr/started/,
	    "\\o /dev/null\n\\echo started\n"
	  . "SELECT lockstat_test_lwlock('exclusive', 1, 2000), pg_sleep(0.0001) "
	  . "FROM generate_series(1, 5000);\n");
$node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity
	  WHERE query LIKE 'SELECT lockstat_test_lwlock(''exclusive'', 1, 2000)%' AND state = 'active'})
  or die 'holder did not start';
my $waiter = $node->background_psql('postgres');
my $waiter_pid = $waiter->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
# 100 statements of different shapes, so 100 queryids, each taking the lock
# once and then sleeping 1 ms, so that the next finds the holder's next hold;
# in one transaction
my $batch = "BEGIN;\n";
foreach my $i (1 .. 100)
{
	my $consts = join '', map { "$_, " } 1 .. $i;
	$batch .= "SELECT $consts lockstat_test_lwlock('shared', 1), pg_sleep(0.001);\n";
}
$waiter->query_until(qr/done/, "\\o /dev/null\n$batch\\o\n\\echo done\n");
$node->safe_psql('postgres', "SELECT pg_cancel_backend($holder_pid)");
$holder->quit;
my ($waiter_blocks, $stmt_blocks, $residual_blocks, $unattributed1, $stmt_rows)
  = split /\|/, $node->safe_psql('postgres', qq{
SELECT (SELECT blocks FROM pg_lwlock_backend_stats
        WHERE pid = $waiter_pid AND tranche = 'lockstat_test'),
       (SELECT coalesce(sum(q.blocks), 0) FROM pg_lwlock_query_stats q
        JOIN pg_stat_statements p USING (queryid, dbid, userid)
        WHERE q.tranche = 'lockstat_test' AND p.query LIKE '%lockstat_test_lwlock(\$%, \$%), pg_sleep(\$%)'),
       (SELECT coalesce(sum(blocks), 0) FROM pg_lwlock_query_stats
        WHERE queryid IS NULL AND backend_type IS NULL AND tranche = 'lockstat_test'),
       (SELECT query_waits_unattributed FROM pg_lockstat_status),
       (SELECT count(*) FROM pg_lwlock_query_stats q
        JOIN pg_stat_statements p USING (queryid, dbid, userid)
        WHERE q.tranche = 'lockstat_test' AND p.query LIKE '%lockstat_test_lwlock(\$%, \$%), pg_sleep(\$%)')});
cmp_ok($stmt_rows, '>=', 24, "$stmt_rows of the 100 statements have rows");
cmp_ok($stmt_rows, '<=', 32, 'at most as many as a process table has entries (32)');
is($stmt_blocks + $residual_blocks, $waiter_blocks,
	"the statements' rows ($stmt_blocks) and the residual row ($residual_blocks) hold all of the waiter's $waiter_blocks blocks");
cmp_ok($residual_blocks, '>', 0, 'the calls without an entry are in the residual row');
is($unattributed1 - $unattributed0, $residual_blocks,
	'query_waits_unattributed counts exactly the calls in the residual row');
$waiter->query_safe('COMMIT');
cmp_ok($node->safe_psql('postgres', 'SELECT query_entries FROM pg_lockstat_status'),
	'>=', $entries0 + $stmt_rows,
	'the commit folded the table into the shared table');
is(statement_blocks(q{lockstat_test_lwlock\(\$[0-9]+, \$[0-9]+\), pg_sleep\(\$[0-9]+\)$}) + 0, $stmt_blocks,
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
ALTER FUNCTION lockstat_test_lwlock(text, integer, integer) COST 100000;
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
$holder = $node->background_psql('postgres');
$holder->query_until(qr/started/,
	"\\echo started\nSELECT lockstat_test_lwlock('exclusive', 1, 1000000);\n");
$node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity
	  WHERE query LIKE 'SELECT lockstat_test_lwlock(''exclusive'', 1,%' AND state = 'active'})
  or die 'holder did not start';
$leader->query_until(qr/started/,
	"\\echo started\nSELECT count(lockstat_test_lwlock('shared', 1)) FROM pages;\n\\echo done\n");
$node->poll_query_until('postgres',
	q{SELECT count(*) = 2 FROM pg_stat_activity
	  WHERE backend_type = 'parallel worker' AND wait_event = 'lockstat_test'})
  or die 'the workers did not block';
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
	'ALTER FUNCTION lockstat_test_lwlock(text, integer, integer) COST 1');

# --- a session without query IDs, then a reset -----------------------------------

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is($node->safe_psql('postgres', 'SELECT query_ids_available FROM pg_lockstat_status'),
	't', 'with pg_stat_statements loaded, query IDs are available');
$holder = $node->background_psql('postgres');
$holder->query_until(qr/started/,
	"\\echo started\nSELECT lockstat_test_lwlock('exclusive', 1, 500000);\n");
$node->poll_query_until('postgres',
	q{SELECT count(*) = 1 FROM pg_stat_activity
	  WHERE query LIKE 'SELECT lockstat_test_lwlock(''exclusive''%' AND state = 'active'})
  or die 'holder did not start';
$waiter = $node->background_psql('postgres');
$waiter->query_safe('SET compute_query_id = off');
is($waiter->query_safe('SELECT query_ids_available FROM pg_lockstat_status'),
	'f', 'with compute_query_id = off, pg_lockstat_status says there are none');
$waiter->query_until(qr/started/,
	"\\echo started\nSELECT lockstat_test_lwlock('shared', 1);\n\\echo done\n");
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
($holder, my $w2) = LockStatTest::block_waiter($node, 200000);
$holder->quit;
$w2->quit;
is($node->safe_psql('postgres', $test_sums), '1 1 true',
	'after the reset, the next block is the only one');
$waiter->quit;

# --- pgbench, joined with pg_stat_statements -----------------------------------

$node->command_ok([ 'pgbench', '-i', '-s', '2', '-q', '-h', $node->host,
		'-p', $node->port, 'postgres' ], 'pgbench -i');
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset(); SELECT pg_stat_statements_reset()');
$node->command_ok([ 'pgbench', '-n', '-c', '8', '-j', '2', '-T', '4', '-h', $node->host,
		'-p', $node->port, 'postgres' ], 'pgbench tpcb-like, 8 clients, 4 s');
my $joined = $node->safe_psql('postgres', q{
SELECT p.query, q.tranche, q.blocks, round(q.wait_time::numeric, 3)
FROM pg_lwlock_query_stats q
JOIN pg_stat_statements p USING (queryid, dbid, userid)
WHERE q.blocks > 0 AND q.wait_time > 0
ORDER BY q.wait_time DESC LIMIT 5});
note "top statements by blocked time:\n$joined";
like($joined, qr/^(UPDATE|SELECT|INSERT|BEGIN|END)\b.*pgbench|^(BEGIN|END)\b/m,
	'the join names pgbench statements with blocked time');
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
