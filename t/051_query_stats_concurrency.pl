# Copyright (c) 2026, pg_lockstat developers
#
# pg_lwlock_query_stats under concurrency, with compute_query_id = on:
# pgbench -C opens short-lived connections (a thread per client, so that
# they connect at the same time) that each run one of two
# statements, taking the lockstat_test LWLock exclusively 7 times with a
# 200 us hold, so that they may block each other and every connection folds
# its table into the shared table when it exits; meanwhile 3 sessions read
# the view in a loop and, in a first phase, one resets it every 20 ms; the
# last reset runs while no other process can end a blocked call.  After it,
# each statement's first connections sleep behind a holder until all four
# are seen asleep, so that both statements block on any machine (a block
# between the connections themselves is a matter of chance).  Then:
# - no read of a session shows less for a key (a statement, or the calls
#   without a query ID) than its previous read under the same reset: a read
#   never misses or doubles a process's table while it is folded;
# - after the first phase, every tranche's rows add up to pg_lwlock_stats:
#   a call that ended inside one of the resets counts on the same side of
#   it in both views (t/055 makes the two orders that broke this happen);
# - once the connections are gone, the rows of the two statements hold
#   every block of the tranche (pg_lwlock_stats), and every tranche's rows
#   add up to pg_lwlock_stats' blocks and wait_time;
# - the status counts no eviction and no call without an entry.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $node = LockStatTest::new_node('query_concurrency',
	"compute_query_id = on\nautovacuum = off\nmax_connections = 40\n");

$node->safe_psql(
	'postgres', q{
CREATE UNLOGGED TABLE stop (what text);
CREATE UNLOGGED TABLE reads (session int, n int, reset_before timestamptz,
	reset_after timestamptz, queryid bigint, blocks bigint);

-- read until told to stop: one row per read and key of the test tranche
-- (queryid 0 for the rows without one)
CREATE PROCEDURE reader(session int) LANGUAGE plpgsql AS $$
DECLARE
	i int := 0;
	r0 timestamptz;
BEGIN
	WHILE NOT EXISTS (SELECT FROM stop WHERE what = 'readers') LOOP
		-- a gate the test closes to hold the readers between two reads
		PERFORM pg_advisory_xact_lock_shared(51);
		i := i + 1;
		SELECT stats_reset INTO r0 FROM pg_lockstat_status;
		INSERT INTO reads
		SELECT session, i, r0, (SELECT stats_reset FROM pg_lockstat_status),
		       q.queryid, q.blocks
		FROM (SELECT coalesce(queryid, 0) AS queryid, sum(blocks) AS blocks
		      FROM pg_lwlock_query_stats WHERE tranche = 'lockstat_test'
		      GROUP BY 1
		      UNION ALL SELECT -1, 0) q;
		COMMIT;
	END LOOP;
END $$;
});

my ($readers, $resetter) = LockStatTest::start_readers($node, 3);
my @readers = @$readers;

my %scripts = (
	a => "SELECT lockstat_test_lwlock('exclusive', 7, 200);\n",
	b => "SELECT 1, lockstat_test_lwlock('exclusive', 7, 200);\n");
my @files;
foreach my $name (sort keys %scripts)
{
	my $file = $node->basedir . "/$name.sql";
	PostgreSQL::Test::Utils::append_to_file($file, $scripts{$name});
	push @files, '-f', $file;
}
my @connect = ('-h', $node->host, '-p', $node->port, 'postgres');
my @pgbench = ('pgbench', '-n', '-C', '-c', 4, '-j', 4, '-t', 150, @files, @connect);

# phase 1: short connections, readers and resets
$node->command_ok(\@pgbench, 'short-lived connections, with readers and resets');
$node->safe_psql('postgres', "INSERT INTO stop VALUES ('resetter')");
LockStatTest::end_session($resetter)
  or die 'the resetter ended with an error';
# resets every 20 ms while the connections blocked each other: every call
# that ended inside one counts on the same side of it in both views
LockStatTest::query_tranches_add_up($node, 'after resets under load');

# phase 2: a last reset, then the same again with the readers still reading.
# The reset runs while no other process can end a blocked call: a call that
# ends inside a reset may count on different sides of it in the two views
# (t/055).  So the backends of phase 1 have exited, and the readers wait
# at their gate, between two reads.
my @reader_pids = split /\n/, $node->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE query LIKE 'CALL reader(%'});
is(scalar(@reader_pids), 3, 'three readers are reading');
my $gate = $node->background_psql('postgres');
my $gate_pid = $gate->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
$gate->query_safe('SELECT pg_advisory_lock(51)');
LockStatTest::wait_for_exits($node, @reader_pids, $gate_pid);
$node->poll_query_until('postgres', q{
SELECT count(*) = 3 FROM pg_stat_activity
WHERE query LIKE 'CALL reader(%' AND wait_event = 'advisory'})
  or die 'the readers did not stop at their gate';
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$gate->query_safe('SELECT pg_advisory_unlock(51)');
$gate->quit;
# two pgbench runs, one per statement, with 2 clients each: the first
# connection of each client sleeps behind the holder
my $holder = LockStatTest::hold_lwlock($node, 'exclusive');
my @runs;
foreach my $i (0, 1)
{
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-C', '-c', 2, '-j', 2, '-t', 150,
			'-f', $files[ 2 * $i + 1 ], @connect
		],
		'>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	push @runs, [ $h, \$out, \$err ];
}
LockStatTest::wait_for_waiters($node, 4);
LockStatTest::release_holds($node);
$holder->quit;
foreach my $i (0, 1)
{
	my ($h, $out, $err) = @{ $runs[$i] };
	ok($h->finish && $$out =~ m{actually processed: 300/300},
		"statement $i: 2 clients, 150 short-lived connections each, after the last reset"
	) or diag($$err);
}
$node->poll_query_until(
	'postgres', q{
SELECT count(*) = 0 FROM pg_stat_activity
WHERE query LIKE '%lockstat_test_lwlock(''exclusive'', 7, 200)%'})
  or die 'the connections did not exit';

# the readers go on until they have read 30 times and seen both statements
$node->poll_query_until(
	'postgres', q{
SELECT (SELECT count(DISTINCT (session, n)) FROM reads) >= 30
   AND (SELECT count(DISTINCT queryid) FROM reads
        WHERE queryid > 0 OR queryid < -1) = 2})
  or die 'the readers did not read 30 times or did not see both statements';
$node->safe_psql('postgres', "INSERT INTO stop VALUES ('readers')");
is(scalar(grep { !LockStatTest::end_session($_) } @readers),
	0, 'the readers ended without error');

my $num_reads = $node->safe_psql('postgres',
	'SELECT count(DISTINCT (session, n)) FROM reads');
cmp_ok($num_reads, '>=', 30, "the readers read $num_reads times");
my $keys_read = $node->safe_psql('postgres',
	'SELECT count(DISTINCT queryid) FROM reads WHERE queryid > 0 OR queryid < -1');
is($keys_read, '2', 'the reads saw the two statements');
is( $node->safe_psql(
		'postgres', q{
SELECT count(*)
FROM reads a
JOIN reads b ON b.session = a.session AND b.n = a.n + 1
LEFT JOIN reads c ON c.session = b.session AND c.n = b.n AND c.queryid = a.queryid
WHERE a.reset_before = a.reset_after AND b.reset_before = b.reset_after
  AND a.reset_after = b.reset_before
  AND coalesce(c.blocks, 0) < a.blocks}),
	'0',
	'no key shows less than in the previous read of its session under the same reset'
);
is( $node->safe_psql(
		'postgres', q{
SELECT count(*)
FROM reads r
JOIN (SELECT coalesce(queryid, 0) AS queryid, sum(blocks) AS blocks
      FROM pg_lwlock_query_stats WHERE tranche = 'lockstat_test'
      GROUP BY 1) f USING (queryid)
WHERE r.reset_before = (SELECT stats_reset FROM pg_lockstat_status)
  AND r.reset_after = r.reset_before AND r.blocks > f.blocks}),
	'0',
	'no read since the last reset shows more for a key than its final count (nothing counted twice)'
);

# after the last reset: the two statements hold every block of the tranche
my ($stmt_blocks, $tranche_blocks) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT (SELECT coalesce(sum(blocks), 0) FROM pg_lwlock_query_stats
        WHERE tranche = 'lockstat_test' AND queryid IS NOT NULL),
       (SELECT blocks FROM pg_lwlock_stats WHERE tranche = 'lockstat_test')});
cmp_ok($tranche_blocks, '>=', 4,
	"the connections blocked $tranche_blocks times, 4 of them behind the holder");
is($stmt_blocks, $tranche_blocks,
	"the two statements' rows hold exactly the tranche's $tranche_blocks blocks");
is( $node->safe_psql(
		'postgres', q{
SELECT round(sum(q.wait_time)::numeric, 6) =
       round((SELECT wait_time FROM pg_lwlock_stats
              WHERE tranche = 'lockstat_test')::numeric, 6)
FROM pg_lwlock_query_stats q WHERE q.tranche = 'lockstat_test'}),
	't', 'and their wait times add up to the tranche wait time');

LockStatTest::query_tranches_add_up($node, 'after the connections');
is( $node->safe_psql(
		'postgres',
		'SELECT query_entries_evicted, query_waits_unattributed FROM pg_lockstat_status'),
	'0|0', 'nothing was evicted or left without an entry');

$node->stop;
done_testing();
