# Copyright (c) 2026, pg_lockstat developers
#
# pg_lwlock_backend_stats: each live process's counts since it started.
# - a second session reads a backend's exact counts by pid, while the
#   backend is connected and idle;
# - pg_lockstat_reset() does not change them;
# - a backend that exits disappears from the view, and a new backend that
#   gets its process slot (ProcNumber) starts from zero, although the slot's
#   counters, which pg_lwlock_stats sums, keep the old counts;
# - it joins with pg_stat_activity on pid, with the same backend_type for
#   every process, background processes included (checkpointer, a parallel
#   worker that holds the lockstat_test LWLock while the view is read);
# - while backends come and go (pgbench -C, a new connection per
#   transaction, on few process slots, so slots are reused at once), no
#   read ever shows a process with another process's counts; the reads see
#   pgbench's backends with their counts (a gate, an advisory lock, keeps
#   them alive after their work until a read has seen one).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

# few client process slots, so that they are reused soon
my $node = LockStatTest::new_node('backend_stats',
	"max_connections = 10\nautovacuum = off\n");

# the row of $pid for the lockstat_test tranche: "sh|ex|blocks", or ""
sub lockstat_test_row
{
	my ($pid) = @_;
	return $node->safe_psql(
		'postgres', qq{
		SELECT sh_acquires || '|' || ex_acquires || '|' || blocks
		FROM pg_lwlock_backend_stats
		WHERE pid = $pid AND tranche = 'lockstat_test'});
}

# the ProcNumber of a session, from pg_stat_get_backend_idset()
my $procnumber_query = q{
	SELECT b FROM pg_stat_get_backend_idset() AS b
	WHERE pg_stat_get_backend_pid(b) = pg_backend_pid()};

# -------------------------------------------------------------------------
# Exact counts of another session, and the reset
# -------------------------------------------------------------------------
my $a = $node->background_psql('postgres', on_error_stop => 1);
my $a_pid = $a->query_safe('SELECT pg_backend_pid()');
my $a_procnumber = $a->query_safe($procnumber_query);
$a->query_safe(q{SELECT lockstat_test_lwlock('exclusive', 1000)});

is(lockstat_test_row($a_pid), '0|1000|0',
	'another session reads exactly 1000 exclusive acquisitions of the backend');

$a->query_safe(q{SELECT lockstat_test_lwlock('shared', 250)});
is(lockstat_test_row($a_pid), '250|1000|0', 'and then 250 shared ones');

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'}),
	'0',
	'pg_lockstat_reset() restarts pg_lwlock_stats');
is(lockstat_test_row($a_pid), '250|1000|0',
	'but not the counts of a process since it started');
$a->query_safe(q{SELECT lockstat_test_lwlock('exclusive', 5)});
is(lockstat_test_row($a_pid), '250|1005|0', 'which go on counting');

# -------------------------------------------------------------------------
# Join with pg_stat_activity
# -------------------------------------------------------------------------
is( $node->safe_psql(
		'postgres', qq{
		SELECT a.backend_type, a.datname, b.ex_acquires
		FROM pg_lwlock_backend_stats b JOIN pg_stat_activity a USING (pid)
		WHERE b.pid = $a_pid AND b.tranche = 'lockstat_test'}),
	'client backend|postgres|1005',
	'joins with pg_stat_activity on pid');

$node->safe_psql('postgres', 'CHECKPOINT');
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) > 0
		FROM pg_lwlock_backend_stats b JOIN pg_stat_activity a USING (pid)
		WHERE a.backend_type = 'checkpointer'
		  AND b.backend_type = 'checkpointer'}),
	't',
	'the checkpointer appears with its backend_type');

# Every process shown is in pg_stat_activity with the same backend_type,
# and every process of pg_stat_activity that has counted is shown.  No
# process comes or goes here (no autovacuum, idle sessions).
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*)
		FROM (SELECT DISTINCT pid, backend_type
		      FROM pg_lwlock_backend_stats) b
		FULL JOIN (SELECT pid, backend_type FROM pg_stat_activity) a
		USING (pid)
		WHERE a.backend_type IS DISTINCT FROM b.backend_type}),
	'0',
	'the same processes and backend types as pg_stat_activity');
is( $node->safe_psql(
		'postgres', q{
		SELECT string_agg(DISTINCT backend_type, ',' ORDER BY backend_type)
		FROM pg_lwlock_backend_stats
		WHERE backend_type IN ('background writer', 'checkpointer',
		                       'client backend', 'walwriter',
		                       'logical replication launcher')}),
	'background writer,checkpointer,client backend,'
	  . 'logical replication launcher,walwriter',
	'auxiliary processes and background workers are shown');

# A parallel worker, shown as in pg_stat_activity ("parallel worker", the
# bgw_type of a background worker), while it holds the lockstat_test
# LWLock until the test releases it, however long the test takes to see it;
# single-copy Gather, so the leader does not run the function (see t/009).
my $leader = $node->background_psql('postgres', on_error_stop => 1);
my $leader_pid = $leader->query_safe('SELECT pg_backend_pid()');
$leader->query_until(qr/started/,
	LockStatTest::single_copy_gather_sql() . q{
\echo started
SELECT lockstat_test_lwlock_hold('shared');
});
ok( $node->poll_query_until(
		'postgres', qq{
		SELECT count(*) = 1
		FROM pg_lwlock_backend_stats b JOIN pg_stat_activity a USING (pid)
		WHERE a.leader_pid = $leader_pid AND a.backend_type = 'parallel worker'
		  AND b.backend_type = 'parallel worker'
		  AND b.tranche = 'lockstat_test' AND b.sh_acquires >= 1}),
	'a parallel worker appears with its backend_type and its own counts');
is(lockstat_test_row($leader_pid), '',
	'the leader did not take the lock itself');
LockStatTest::release_holds($node);
$leader->quit;

# -------------------------------------------------------------------------
# Exit and reuse of the process slot
# -------------------------------------------------------------------------
my $total_query = q{SELECT sh_acquires || '|' || ex_acquires
	FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'};
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$a->query_safe(q{SELECT lockstat_test_lwlock('exclusive', 10)});
$a->quit;
ok( $node->poll_query_until(
		'postgres',
		"SELECT count(*) = 0 FROM pg_lwlock_backend_stats WHERE pid = $a_pid"),
	'a backend that has exited is no longer shown');
is($node->safe_psql('postgres', $total_query),
	'0|10', 'pg_lwlock_stats keeps its counts');

# Client backends take their PGPROC from a FIFO free list: connect until a
# session gets the exited backend's ProcNumber.
my $c;
my $c_procnumber = -1;
foreach my $try (1 .. 30)
{
	$c = $node->background_psql('postgres', on_error_stop => 1);
	$c_procnumber = $c->query_safe($procnumber_query);
	last if $c_procnumber == $a_procnumber;
	$c->quit;
}
is($c_procnumber, $a_procnumber,
	'a new backend got the exited backend\'s ProcNumber');
my $c_pid = $c->query_safe('SELECT pg_backend_pid()');
isnt($c_pid, $a_pid, 'with another pid');
is(lockstat_test_row($c_pid), '',
	'it does not inherit the exited backend\'s counts');
$c->query_safe(q{SELECT lockstat_test_lwlock('exclusive', 7)});
is(lockstat_test_row($c_pid), '0|7|0', 'and counts its own exactly');
is($node->safe_psql('postgres', $total_query),
	'0|17', 'pg_lwlock_stats has both backends\' counts');
$c->quit;

# -------------------------------------------------------------------------
# Backends coming and going while the view is read
#
# Each pgbench transaction is a new backend (-C) that takes the lock
# exclusively exactly 100 times and exits, so a correct read shows at most
# 100 for any backend.  The reader is one session reading 100 times per
# statement until pgbench has finished.  After its work each transaction
# passes a gate (advisory lock 15, shared), which the test keeps closed
# until a read has seen a pgbench backend: the first transactions wait
# there with their counts, however fast or slow the machine.  (If no read
# sees one within the TAP timeout, the gate opens anyway and the check
# below fails; pgbench then has the TAP timeout again to finish.)
# -------------------------------------------------------------------------
my $gate = $node->background_psql('postgres', on_error_stop => 1);
$gate->set_query_timer_restart();
$gate->query_safe('SELECT pg_advisory_lock(15)');
my $script = $node->basedir . '/acquire100.sql';
append_to_file($script,
	    "SELECT lockstat_test_lwlock('exclusive', 100);\n"
	  . "SELECT pg_advisory_lock_shared(15);\n"
	  . "SELECT pg_advisory_unlock_shared(15);\n");
my ($pgb_out, $pgb_err) = ('', '');
my $pgb_timer = IPC::Run::timeout(2 * $PostgreSQL::Test::Utils::timeout_default);
my $gate_deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
my $pgbench = IPC::Run::start(
	[
		'pgbench', '-n', '-C', '-c', '4', '-t', '250',
		'-f', $script, '-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$pgb_out, '2>', \$pgb_err, $pgb_timer);

my $reader = $node->background_psql('postgres', on_error_stop => 1);
$reader->set_query_timer_restart();
$reader->query_safe(q{CREATE TEMP TABLE seen (reads int, busy int, bad int)});
my $read_query = q{
	INSERT INTO seen
	SELECT count(*),
	       sum((SELECT count(*) FROM pg_lwlock_backend_stats() s
	            WHERE s.tranche = 'lockstat_test' AND s.pid <> pg_backend_pid()
	              AND g > 0)),
	       sum((SELECT count(*) FROM pg_lwlock_backend_stats() s
	            WHERE s.tranche = 'lockstat_test'
	              AND ((s.counters).ex_acquires > 100
	                   OR (s.counters).sh_acquires > 0)
	              AND g > 0))
	FROM generate_series(1, 100) AS g};
my $rounds = 0;
my $gate_open = 0;
while ($pgbench->pumpable)
{
	$reader->query_safe($read_query);
	$rounds++;
	if (!$gate_open
		&& ($reader->query_safe('SELECT sum(busy) > 0 FROM seen') eq 't'
			|| time() > $gate_deadline))
	{
		$gate->query_safe('SELECT pg_advisory_unlock(15)');
		$gate_open = 1;
		$pgb_timer->start($PostgreSQL::Test::Utils::timeout_default);
	}
	$pgbench->pump_nb;
}
$gate->quit;
ok($pgbench->finish, 'pgbench succeeded') or diag($pgb_err);
like(
	$pgb_out,
	qr{number of transactions actually processed: 1000/1000},
	'pgbench ran 1000 transactions, each in a backend of its own');
$reader->query_safe($read_query);
my ($reads, $busy, $bad) = split /\|/,
  $reader->query_safe('SELECT sum(reads), sum(busy), sum(bad) FROM seen');
$reader->quit;
note "$rounds rounds, $reads reads, $busy rows of pgbench backends seen";
cmp_ok($busy, '>', 0, 'reads saw pgbench backends at work');
is($bad, 0, 'no read showed a backend with more than its own 100');
is($node->safe_psql('postgres', $total_query),
	'0|100017', 'pg_lwlock_stats counted all 1000 x 100 exactly');

$node->stop;
done_testing();
