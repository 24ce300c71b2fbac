# Copyright (c) 2026, pg_lockstat developers
#
# pg_lwlock_query_stats with pg_lockstat.max_query_entries = 2 and
# compute_query_id = on (no pg_stat_statements):
# - pg_lockstat_status shows the limit, and query IDs as available, but not
#   in a session with compute_query_id = auto and no module that computes
#   them;
# - five statements each block once behind a holder of the lockstat_test
#   LWLock, each waiting longer than the one before (the test releases the
#   holder only once the waiter has been seen blocked for longer than the
#   previous statement's measured wait), each wait within the bounds the
#   test measures, in sessions that then exit and fold their tables into
#   the shared table: the two that waited longest keep their rows (with the
#   queryids that pg_stat_activity showed), the three others are evicted
#   into the residual row of the tranche, which holds exactly their blocks,
#   their wait times and the longest of them; query_entries_evicted counts
#   them; the tranche's rows still add up to pg_lwlock_stats;
# - under concurrency, while readers read the view: five sessions, one per
#   statement, each block at least once behind a holder, then pgbench -C
#   connections running the same five statements fold into the two entries
#   over and over: at least three entries are evicted, no read shows less in
#   total for the tranche than the previous read of its session, and at the
#   end every tranche's rows add up to pg_lwlock_stats exactly, with the
#   evicted entries in the residual rows;
# - an invalid pg_lockstat.max_query_entries stops the server.

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

my $node = LockStatTest::new_node('query_eviction',
	"pg_lockstat.max_query_entries = 2\ncompute_query_id = on\nautovacuum = off\n");

is( $node->safe_psql(
		'postgres',
		'SELECT max_query_entries, query_ids_available FROM pg_lockstat_status'),
	'2|t', 'the limit is 2, and compute_query_id = on gives query IDs');
is( $node->safe_psql(
		'postgres',
		"SET compute_query_id = auto; SELECT query_ids_available FROM pg_lockstat_status"),
	'f', 'with compute_query_id = auto and no module that computes them, none');

# --- five statements, the least-waited evicted ----------------------------------

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my $evicted0 = $node->safe_psql('postgres',
	'SELECT query_entries_evicted FROM pg_lockstat_status');
my (@ids, @waits);
foreach my $i (1 .. 5)
{
	my $consts = join '', map { "$_, " } 1 .. $i;
	# the waiter blocks behind a holder that keeps the lock until released;
	# the release comes once the waiter has been seen blocked for 50 ms more
	# than the previous statement waited, so each wait is longer than the one
	# before by construction, on any machine
	my $waiter = $node->background_psql('postgres');
	my $pid = $waiter->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	my $holder = LockStatTest::hold_lwlock($node, 'exclusive');
	my $t0 = now();
	$waiter->query_until(qr/started/,
		"\\echo started\nSELECT $consts lockstat_test_lwlock('shared', 1);\n\\echo done\n");
	LockStatTest::wait_for_waiters($node, 1);
	my $seen = now();
	my $min_s = ($i > 1 ? $waits[-1] / 1000 : 0) + 0.05;
	Time::HiRes::usleep(10_000) while now() - $seen <= $min_s;
	my $released = now();
	LockStatTest::release_holds($node);
	$waiter->query_until(qr/done/, '');
	my $t1 = now();
	# an idle session shows the query ID of its last statement
	push @ids, $node->safe_psql('postgres',
		"SELECT query_id FROM pg_stat_activity WHERE pid = $pid");
	$holder->quit;
	$waiter->quit;
	$node->poll_query_until('postgres',
		q{SELECT count(*) = 0 FROM pg_stat_activity WHERE query LIKE '%lockstat_test_lwlock%'
		  AND pid <> pg_backend_pid()})
	  or die 'the sessions did not exit';
	# the statement's wait, while its row is there (it is the longest yet)
	push @waits, $node->safe_psql('postgres',
		"SELECT wait_time FROM pg_lwlock_query_stats WHERE queryid = $ids[-1]");
	my ($min_ms, $max_ms) = (($released - $seen) * 1000, ($t1 - $t0) * 1000);
	ok($waits[-1] ne '' && $waits[-1] >= $min_ms && $waits[-1] <= $max_ms,
		sprintf('statement %d waited %s ms, within %.1f..%.1f ms',
			$i, $waits[-1], $min_ms, $max_ms));
}
ok($waits[0] < $waits[1] && $waits[1] < $waits[2] && $waits[2] < $waits[3]
	  && $waits[3] < $waits[4], 'each statement waited longer than the one before');

is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(queryid::text, ' ' ORDER BY wait_time)
FROM pg_lwlock_query_stats WHERE tranche = 'lockstat_test' AND queryid IS NOT NULL}),
	"$ids[3] $ids[4]",
	'the two statements that waited longest keep their rows');
my $evicted_wait = $waits[0] + $waits[1] + $waits[2];
is( $node->safe_psql(
		'postgres', qq{
SELECT blocks, round(wait_time::numeric, 6) = round(${evicted_wait}::numeric, 6),
       max_wait_time = $waits[2]
FROM pg_lwlock_query_stats
WHERE tranche = 'lockstat_test' AND queryid IS NULL AND backend_type IS NULL}),
	'3|t|t',
	'the residual row holds the three evicted blocks, their wait and the longest of them');
cmp_ok($node->safe_psql('postgres',
		'SELECT query_entries_evicted FROM pg_lockstat_status') - $evicted0,
	'>=', 3, 'query_entries_evicted counts them');
is($node->safe_psql('postgres', 'SELECT query_entries <= 2 FROM pg_lockstat_status'),
	't', 'the shared table holds at most 2 entries');
is( $node->safe_psql(
		'postgres', q{
SELECT sum(q.blocks) = s.blocks,
       round(sum(q.wait_time)::numeric, 6) = round(s.wait_time::numeric, 6)
FROM pg_lwlock_query_stats q JOIN pg_lwlock_stats s USING (tranche)
WHERE q.tranche = 'lockstat_test' GROUP BY s.blocks, s.wait_time}),
	't|t', 'the rows of the tranche still add up to pg_lwlock_stats');
LockStatTest::query_tranches_add_up($node, 'after the evictions');

# --- eviction under concurrency ----------------------------------------------------

$node->safe_psql(
	'postgres', q{
CREATE UNLOGGED TABLE stop (what text);
CREATE UNLOGGED TABLE reads (session int, n int, reset_before timestamptz,
	reset_after timestamptz, blocks bigint);
CREATE PROCEDURE reader(session int) LANGUAGE plpgsql AS $$
DECLARE
	i int := 0;
	r0 timestamptz;
BEGIN
	WHILE NOT EXISTS (SELECT FROM stop WHERE what = 'readers') LOOP
		i := i + 1;
		SELECT stats_reset INTO r0 FROM pg_lockstat_status;
		INSERT INTO reads
		SELECT session, i, r0, (SELECT stats_reset FROM pg_lockstat_status),
		       (SELECT coalesce(sum(blocks), 0) FROM pg_lwlock_query_stats
		        WHERE tranche = 'lockstat_test');
		COMMIT;
	END LOOP;
END $$;
SELECT pg_lockstat_reset();
});
$evicted0 = $node->safe_psql('postgres',
	'SELECT query_entries_evicted FROM pg_lockstat_status');
my ($readers) = LockStatTest::start_readers($node, 2, 1);
my @readers = @$readers;
my @files;
foreach my $i (1 .. 5)
{
	my $file = $node->basedir . "/s$i.sql";
	my $consts = join '', map { "$_, " } 1 .. $i;
	PostgreSQL::Test::Utils::append_to_file($file,
		"SELECT $consts lockstat_test_lwlock('exclusive', 7, 200);\n");
	push @files, '-f', $file;
}
# the five statements, each in a session of its own that blocks at least
# once behind a holder and then exits, folding five entries into the two:
# at least three evictions and five blocks, however the machine runs pgbench
my $holder = LockStatTest::hold_lwlock($node, 'exclusive');
my @sessions;
foreach my $i (1 .. 5)
{
	my $consts = join '', map { "$_, " } 1 .. $i;
	push @sessions, $node->background_psql('postgres');
	$sessions[-1]->query_until(qr/started/,
		"\\echo started\nSELECT $consts lockstat_test_lwlock('exclusive', 7, 200);\n");
}
LockStatTest::wait_for_waiters($node, 5);
LockStatTest::release_holds($node);
$holder->quit;
$_->quit foreach @sessions;
$node->command_ok(
	[
		'pgbench', '-n', '-C', '-c', 4, '-j', 4, '-t', 150, @files,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'short-lived connections running five statements');
$node->poll_query_until(
	'postgres', q{
SELECT count(*) = 0 FROM pg_stat_activity
WHERE query LIKE '%lockstat_test_lwlock(''exclusive'', 7, 200)%'})
  or die 'the connections did not exit';
$node->poll_query_until('postgres', 'SELECT count(*) >= 30 FROM reads')
  or die 'the readers did not read 30 times';
$node->safe_psql('postgres', "INSERT INTO stop VALUES ('readers')");
is(scalar(grep { !LockStatTest::end_session($_) } @readers),
	0, 'the readers ended without error');

my $num_reads = $node->safe_psql('postgres', 'SELECT count(*) FROM reads');
cmp_ok($num_reads, '>=', 30, "the readers read $num_reads times");
is(LockStatTest::reads_that_shrank($node, 'blocks'),
	'0',
	"no read shows less for the tranche than the previous read of its session");
my ($evicted, $tranche_blocks, $rows_blocks) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT (SELECT query_entries_evicted FROM pg_lockstat_status),
       (SELECT blocks FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'),
       (SELECT sum(blocks) FROM pg_lwlock_query_stats WHERE tranche = 'lockstat_test')});
cmp_ok($evicted - $evicted0, '>=', 3,
	'entries were evicted: ' . ($evicted - $evicted0));
cmp_ok($tranche_blocks, '>=', 5, "the sessions and connections blocked $tranche_blocks times");
is($rows_blocks, $tranche_blocks,
	"the tranche's rows hold exactly its $tranche_blocks blocks");
LockStatTest::query_tranches_add_up($node, 'after evictions under concurrency');

# --- a bad limit -------------------------------------------------------------------

$node->stop;
$node->append_conf('postgresql.conf', "pg_lockstat.max_query_entries = 0\n");
my $started = $node->start(fail_ok => 1);
ok(!$started, 'pg_lockstat.max_query_entries = 0 stops the server');
like(slurp_file($node->logfile),
	qr/0 is outside the valid range for parameter "pg_lockstat.max_query_entries" \(1 \.\. 1000000\)/,
	'with the valid range in the log');

done_testing();
