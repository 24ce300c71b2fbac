/* extension/pg_lockstat--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_lockstat UPDATE TO '1.2'" to load this file. \quit

-- pg_spinlock_stats() gains max_wait_time.  A function's result columns
-- cannot change in place, so the view and its function are made again,
-- with their comments and privileges.
DROP VIEW pg_spinlock_stats;
DROP FUNCTION pg_spinlock_stats();

-- pg_spinlock_stats(): contended spin waits per call site since the last
-- reset.  Errors with SQLSTATE 55000 unless pg_lockstat is in
-- shared_preload_libraries.
CREATE FUNCTION pg_spinlock_stats(
    OUT file text,
    OUT line integer,
    OUT func text,
    OUT contended bigint,
    OUT spins bigint,
    OUT delays bigint,
    OUT wait_time double precision,
    OUT tas_attempts bigint,
    OUT unlocked_skips bigint,
    OUT max_wait_time double precision
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_spinlock_stats_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_spinlock_stats() IS
'contended spin waits per call site since the last reset; backs the view pg_spinlock_stats (errors: 55000 if not preloaded, XX001 if the counters cannot be read consistently)';

CREATE VIEW pg_spinlock_stats AS
    SELECT * FROM pg_spinlock_stats();

COMMENT ON VIEW pg_spinlock_stats IS
'contended spin waits per call site (file, line, function given to s_lock() or init_spin_delay()) since the last pg_lockstat_reset(), summed over all processes; each wait is counted whole when it ends';
COMMENT ON COLUMN pg_spinlock_stats.file IS
'source file of the call site, as __FILE__ there (at most 63 bytes)';
COMMENT ON COLUMN pg_spinlock_stats.line IS
'source line of the call site';
COMMENT ON COLUMN pg_spinlock_stats.func IS
'function of the call site, as __func__ there (at most 63 bytes)';
COMMENT ON COLUMN pg_spinlock_stats.contended IS
'waits that had to spin at least once (count)';
COMMENT ON COLUMN pg_spinlock_stats.spins IS
'spin loop iterations, calls of perform_spin_delay() (count)';
COMMENT ON COLUMN pg_spinlock_stats.delays IS
'sleeps in perform_spin_delay() (count)';
COMMENT ON COLUMN pg_spinlock_stats.wait_time IS
'time slept in those delays (milliseconds); spinning itself is not timed';
COMMENT ON COLUMN pg_spinlock_stats.tas_attempts IS
'probes of s_lock() that issued the atomic TAS(), the successful one included (count); NULL where not counted: other spin loops, and spin_strategy default';
COMMENT ON COLUMN pg_spinlock_stats.unlocked_skips IS
'probes of s_lock() whose unlocked read saw the lock held, so that no atomic was issued (count; ttas_spin, ttas, ttas_backoff); NULL where not counted';
COMMENT ON COLUMN pg_spinlock_stats.max_wait_time IS
'longest wait, from its first spin until the lock was taken, spinning and sleeping included (milliseconds)';

REVOKE ALL ON FUNCTION pg_spinlock_stats() FROM PUBLIC;
REVOKE ALL ON pg_spinlock_stats FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_spinlock_stats() TO pg_read_all_stats;
GRANT SELECT ON pg_spinlock_stats TO pg_read_all_stats;

-- pg_spinlock_wait_histogram(): the durations of contended spin waits per
-- call site since the last reset, in log2 microsecond buckets.  Errors
-- with SQLSTATE 55000 unless pg_lockstat is in shared_preload_libraries.
CREATE FUNCTION pg_spinlock_wait_histogram(
    OUT file text,
    OUT line integer,
    OUT func text,
    OUT bucket_lower_us bigint,
    OUT bucket_upper_us bigint,
    OUT count bigint
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_spinlock_wait_histogram_1_2'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_spinlock_wait_histogram() IS
'durations of contended spin waits per call site since the last reset; backs the view pg_spinlock_wait_histogram (errors: 55000 if not preloaded, XX001 if the counters cannot be read consistently)';

CREATE VIEW pg_spinlock_wait_histogram AS
    SELECT * FROM pg_spinlock_wait_histogram();

COMMENT ON VIEW pg_spinlock_wait_histogram IS
'distribution of the durations of contended spin waits per call site since the last pg_lockstat_reset(), summed over all processes: one row per call site and non-empty log2 bucket; a site''s counts add up to pg_spinlock_stats.contended';
COMMENT ON COLUMN pg_spinlock_wait_histogram.file IS
'source file of the call site, as in pg_spinlock_stats';
COMMENT ON COLUMN pg_spinlock_wait_histogram.line IS
'source line of the call site';
COMMENT ON COLUMN pg_spinlock_wait_histogram.func IS
'function of the call site';
COMMENT ON COLUMN pg_spinlock_wait_histogram.bucket_lower_us IS
'the bucket holds waits of at least this many microseconds (0, then powers of two)';
COMMENT ON COLUMN pg_spinlock_wait_histogram.bucket_upper_us IS
'and less than this many microseconds; NULL for the last bucket (4194304 and more)';
COMMENT ON COLUMN pg_spinlock_wait_histogram.count IS
'waits in the bucket, each from its first spin until the lock was taken (count)';

REVOKE ALL ON FUNCTION pg_spinlock_wait_histogram() FROM PUBLIC;
REVOKE ALL ON pg_spinlock_wait_histogram FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_spinlock_wait_histogram() TO pg_read_all_stats;
GRANT SELECT ON pg_spinlock_wait_histogram TO pg_read_all_stats;
