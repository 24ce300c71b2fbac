# Copyright (c) 2026, pg_lockstat developers
#
# Shared memory and the counts of exited processes, on a server with
# max_connections = 1000 and pg_lockstat's other settings at their defaults:
# - the allocations of pg_lockstat (pg_shmem_allocations: everything the
#   server allocates with pg_lockstat preloaded, minus what the same server
#   allocates without it) take at most 40 MB;
# - while pgbench -C opens thousands of short-lived connections, each taking
#   the lockstat_test LWLock a known number of times, and 3 reader sessions
#   read pg_lwlock_stats, pg_lwlock_backend_stats and
#   pg_lwlock_backend_type_stats in a loop (and, in a
#   first phase, one session resets every 20 ms): no read of a session is
#   smaller than its previous read under the same reset, no process ever
#   shows more acquisitions than it made (a slot's rows start from zero for
#   each process), and once the connections are gone the total since the
#   last reset is exactly the acquisitions made, in pg_lwlock_stats and
#   under "client backend" in pg_lwlock_backend_type_stats: no exited
#   process is counted twice or lost, and none under another kind.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

# --- shared memory --------------------------------------------------------

# All of the server's shared memory allocations but the free space, named
# or not (the elements of a shared hash table are anonymous).
my $all_allocations = q{
SELECT sum(allocated_size) FROM pg_shmem_allocations WHERE name IS NOT NULL};

# the same server without pg_lockstat, for the difference
my $bare = PostgreSQL::Test::Cluster->new('shmem_bare');
$bare->init;
$bare->append_conf('postgresql.conf',
	"shared_preload_libraries = 'lockstat_test'\nmax_connections = 1000\n");
$bare->start;
my $bare_bytes = $bare->safe_psql('postgres', $all_allocations);
$bare->stop;

my $node = LockStatTest::new_node('shmem_exits', "max_connections = 1000");

my $limit = 40 * 1024 * 1024;
my ($slots, $named, $bytes) = split /\|/, $node->safe_psql(
	'postgres', qq{
SELECT (SELECT process_slots FROM pg_lockstat_status),
       (SELECT string_agg(name || ' ' || allocated_size, ', ' ORDER BY name)
        FROM pg_shmem_allocations WHERE name LIKE 'pg_lockstat%'),
       ($all_allocations) - $bare_bytes});
cmp_ok($slots, '>=', 1000, "$slots process slots at max_connections = 1000");
note "pg_lockstat's named allocations: $named";
cmp_ok($bytes, '<=', $limit,
	"pg_lockstat's shared memory at max_connections = 1000, anonymous hash elements and locks included: $bytes bytes");

# --- exited processes racing with readers ---------------------------------

my $per_connection = 7;
my $clients = 4;
my $connections = 300;			# per client and phase

$node->safe_psql(
	'postgres', q{
CREATE UNLOGGED TABLE stop (what text);
CREATE UNLOGGED TABLE reads (session int, n int, reset_before timestamptz,
	reset_after timestamptz, ex bigint, backend_max bigint, kind_ex bigint);

-- read until told to stop; one row per read
CREATE PROCEDURE reader(session int) LANGUAGE plpgsql AS $$
DECLARE
	i int := 0;
BEGIN
	WHILE NOT EXISTS (SELECT FROM stop WHERE what = 'readers') LOOP
		i := i + 1;
		INSERT INTO reads
		SELECT session, i, r0, r1, ex, bmax, kex
		FROM (SELECT stats_reset AS r0 FROM pg_lockstat_status) a,
			 (SELECT coalesce(sum(ex_acquires), 0) AS ex FROM pg_lwlock_stats
			  WHERE tranche = 'lockstat_test') b,
			 (SELECT coalesce(max(ex_acquires), 0) AS bmax
			  FROM pg_lwlock_backend_stats WHERE tranche = 'lockstat_test') c,
			 (SELECT coalesce(sum(ex_acquires), 0) AS kex
			  FROM pg_lwlock_backend_type_stats
			  WHERE tranche = 'lockstat_test'
				AND backend_type = 'client backend') e,
			 (SELECT stats_reset AS r1 FROM pg_lockstat_status) d;
		COMMIT;
	END LOOP;
END $$;
});

my ($readers, $resetter) = LockStatTest::start_readers($node, 3);
my @readers = @$readers;

my $script = $node->basedir . '/short.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	"SELECT lockstat_test_lwlock('exclusive', $per_connection);\n");
my @pgbench = (
	'pgbench', '-n', '-C', '-c', $clients, '-t', $connections,
	'-f', $script, '-h', $node->host, '-p', $node->port, 'postgres');

# phase 1: short connections, readers and resets
$node->command_ok(\@pgbench, 'short-lived connections with resets');
$node->safe_psql('postgres', "INSERT INTO stop VALUES ('resetter')");
LockStatTest::end_session($resetter)
  or die 'the resetter ended with an error';

# phase 2: one reset with no connection taking the test lock, then the same
# connections again, with the readers still reading
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$node->command_ok(\@pgbench, 'short-lived connections after the last reset');

$node->poll_query_until(
	'postgres', q{
SELECT count(*) = 0 FROM pg_stat_activity
WHERE query LIKE 'SELECT lockstat_test_lwlock%'})
  or die 'the connections did not exit';
my $expected = $clients * $connections * $per_connection;
is( $node->safe_psql(
		'postgres', q{
SELECT sum(ex_acquires) FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'}),
	$expected,
	"exactly $clients x $connections exited processes x $per_connection acquisitions"
);
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(backend_type || ' ' || ex_acquires, ', ')
FROM pg_lwlock_backend_type_stats WHERE tranche = 'lockstat_test'}),
	"client backend $expected",
	'and exactly as many in pg_lwlock_backend_type_stats, all under "client backend"'
);

# the readers go on until they have read at least 30 times in all
ok( $node->poll_query_until(
		'postgres', 'SELECT count(*) >= 30 FROM reads'),
	'the readers read at least 30 times');
$node->safe_psql('postgres', "INSERT INTO stop VALUES ('readers')");
is(scalar(grep { !LockStatTest::end_session($_) } @readers), 0, 'the readers ended without error');
note 'the readers read '
  . $node->safe_psql('postgres', 'SELECT count(*) FROM reads') . ' times';
is(LockStatTest::reads_that_shrank($node, 'ex'),
	'0',
	'no read is smaller than the previous read of its session under the same reset'
);
is(LockStatTest::reads_that_shrank($node, 'kind_ex'),
	'0',
	'nor of pg_lwlock_backend_type_stats, "client backend"');
is( $node->safe_psql(
		'postgres', "SELECT count(*) FROM reads WHERE backend_max > $per_connection"),
	'0',
	"no process shows more than its $per_connection acquisitions");
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM reads WHERE ex > $expected OR kind_ex > $expected"),
	'0',
	'no read is above what was acquired since the reset');
$node->stop;
done_testing();
