/* extension/pg_lockstat--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION pg_lockstat" to load this file. \quit

-- This script only creates objects and calls nothing in the library, so
-- that CREATE EXTENSION works on a server that does not preload pg_lockstat
-- (a restore of pg_dump output into a staging server, say).  There every
-- function below, and so every view, fails with SQLSTATE 55000 and a hint
-- to add pg_lockstat to shared_preload_libraries.
--
-- Lock statistics reveal workload details: every function and view is
-- revoked from PUBLIC.  The views and the functions behind them are granted
-- to pg_read_all_stats (which pg_monitor includes); pg_lockstat_reset() is
-- for superusers and whoever is granted EXECUTE on it.

-- pg_lwlock_counters: the LWLock counters, one attribute each, in the
-- order of extension/lockstat_counters.h (every function that returns it
-- checks that order, and errors with SQLSTATE 42804 if it differs).  The
-- views pg_lwlock_stats, pg_lwlock_instance_stats and
-- pg_lwlock_backend_stats show its attributes as columns, and each such
-- column gets the description of its attribute (at the end of this
-- script).
CREATE TYPE pg_lwlock_counters AS (
    sh_acquires bigint,
    ex_acquires bigint,
    blocks bigint,
    spin_delays bigint,
    dequeue_self bigint,
    wait_time double precision,
    sh_hold_samples bigint,
    ex_hold_samples bigint,
    sh_hold_time double precision,
    ex_hold_time double precision
);

COMMENT ON TYPE pg_lwlock_counters IS
'the LWLock counters of one tranche, lock or process (see the views pg_lwlock_stats, pg_lwlock_instance_stats and pg_lwlock_backend_stats)';
COMMENT ON COLUMN pg_lwlock_counters.sh_acquires IS
'shared acquisitions (count): LWLockAcquire calls, successful LWLockConditionalAcquire and LWLockAcquireOrWait calls';
COMMENT ON COLUMN pg_lwlock_counters.ex_acquires IS
'exclusive acquisitions (count), as sh_acquires';
COMMENT ON COLUMN pg_lwlock_counters.blocks IS
'calls that had to sleep on the process semaphore at least once (count); LWLOCK_STATS "blk"';
COMMENT ON COLUMN pg_lwlock_counters.spin_delays IS
'sleeps of perform_spin_delay while taking the wait-list lock (count); LWLOCK_STATS "spindelay"';
COMMENT ON COLUMN pg_lwlock_counters.dequeue_self IS
'waiters that removed themselves from the wait queue (count); LWLOCK_STATS "dequeue self"';
COMMENT ON COLUMN pg_lwlock_counters.wait_time IS
'time that blocked calls waited, each from its first sleep until its last wake-up (milliseconds)';
COMMENT ON COLUMN pg_lwlock_counters.sh_hold_samples IS
'shared acquisitions whose hold was timed (count): one in pg_lockstat.hold_sample_every of each process''s acquisitions; times that setting, an estimate of sh_acquires';
COMMENT ON COLUMN pg_lwlock_counters.ex_hold_samples IS
'exclusive acquisitions whose hold was timed (count), as sh_hold_samples';
COMMENT ON COLUMN pg_lwlock_counters.sh_hold_time IS
'time that the timed shared holds lasted, each from the end of its acquisition to its release (milliseconds)';
COMMENT ON COLUMN pg_lwlock_counters.ex_hold_time IS
'time that the timed exclusive holds lasted (milliseconds), as sh_hold_time';

-- pg_lwlock_stats(): the per-tranche counters since the last reset, summed
-- over all processes.  Columns and units: see the view below.  Errors with
-- SQLSTATE 55000 unless pg_lockstat is in shared_preload_libraries.
CREATE FUNCTION pg_lwlock_stats(
    OUT tranche_id integer,
    OUT tranche text,
    OUT counters pg_lwlock_counters,
    OUT max_wait_time double precision,
    OUT max_ex_hold_time double precision,
    OUT max_sh_hold_time double precision
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_lwlock_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_lwlock_stats() IS
'per-tranche LWLock counters since the last reset; backs the view pg_lwlock_stats (errors: 55000 if not preloaded)';

CREATE VIEW pg_lwlock_stats AS
    SELECT s.tranche_id, s.tranche,
           (s.counters).*, s.max_wait_time,
           s.max_ex_hold_time, s.max_sh_hold_time,
           100 * (s.counters).blocks /
               nullif(sum((s.counters).blocks::float8) OVER (), 0)
               AS blk_pct,
           100 * (s.counters).spin_delays /
               nullif(sum((s.counters).spin_delays::float8) OVER (), 0)
               AS spin_delay_pct
    FROM pg_lwlock_stats() AS s;

COMMENT ON VIEW pg_lwlock_stats IS
'LWLock statistics per tranche since the last pg_lockstat_reset(), summed over all processes (successor of LWLOCK_STATS)';
COMMENT ON COLUMN pg_lwlock_stats.tranche_id IS
'LWLock tranche ID; NULL for the overflow row that sums tranche IDs >= pg_lockstat.max_tranches';
COMMENT ON COLUMN pg_lwlock_stats.tranche IS
'tranche name, as pg_stat_activity.wait_event shows it';
COMMENT ON COLUMN pg_lwlock_stats.max_wait_time IS
'longest wait of one blocked call since the last reset (milliseconds); 0 if none';
COMMENT ON COLUMN pg_lwlock_stats.max_ex_hold_time IS
'longest timed exclusive hold since the last reset (milliseconds); 0 if none';
COMMENT ON COLUMN pg_lwlock_stats.max_sh_hold_time IS
'longest timed shared hold since the last reset (milliseconds); 0 if none';
COMMENT ON COLUMN pg_lwlock_stats.blk_pct IS
'this tranche''s share of all blocks (percent); NULL when there are no blocks';
COMMENT ON COLUMN pg_lwlock_stats.spin_delay_pct IS
'this tranche''s share of all spin delays (percent); NULL when there are none';

REVOKE ALL ON FUNCTION pg_lwlock_stats() FROM PUBLIC;
REVOKE ALL ON pg_lwlock_stats FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_lwlock_stats() TO pg_read_all_stats;
GRANT SELECT ON pg_lwlock_stats TO pg_read_all_stats;

-- pg_lwlock_wait_histogram(): log2 distribution of the waits of blocked LWLock calls
-- since the last reset, one row per tranche and non-empty bucket.  Errors
-- with SQLSTATE 55000 unless pg_lockstat is in shared_preload_libraries.
CREATE FUNCTION pg_lwlock_wait_histogram(
    OUT tranche_id integer,
    OUT tranche text,
    OUT bucket_lower_us bigint,
    OUT bucket_upper_us bigint,
    OUT count bigint
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_lwlock_wait_histogram'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_lwlock_wait_histogram() IS
'log2 histogram of the waits of blocked LWLock calls per tranche since the last reset; backs the view pg_lwlock_wait_histogram (errors: 55000 if not preloaded)';

CREATE VIEW pg_lwlock_wait_histogram AS
    SELECT * FROM pg_lwlock_wait_histogram();

COMMENT ON VIEW pg_lwlock_wait_histogram IS
'distribution of the waits of blocked LWLock calls per tranche since the last pg_lockstat_reset(), one entry per blocked call (so a tranche''s counts add up to its blocks), in power-of-two microsecond buckets; only non-empty buckets';
COMMENT ON COLUMN pg_lwlock_wait_histogram.tranche_id IS
'LWLock tranche ID; NULL for the overflow row that sums tranche IDs >= pg_lockstat.max_tranches';
COMMENT ON COLUMN pg_lwlock_wait_histogram.tranche IS
'tranche name, as pg_stat_activity.wait_event shows it';
COMMENT ON COLUMN pg_lwlock_wait_histogram.bucket_lower_us IS
'the bucket counts blocked calls that waited at least this many microseconds (0, 1, 2, 4, ...)';
COMMENT ON COLUMN pg_lwlock_wait_histogram.bucket_upper_us IS
'and of less than this many microseconds; NULL for the last bucket (4194304 microseconds and more)';
COMMENT ON COLUMN pg_lwlock_wait_histogram.count IS
'blocked calls in the bucket (count); a call that slept twice counts once, with its whole wait';

REVOKE ALL ON FUNCTION pg_lwlock_wait_histogram() FROM PUBLIC;
REVOKE ALL ON pg_lwlock_wait_histogram FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_lwlock_wait_histogram() TO pg_read_all_stats;
GRANT SELECT ON pg_lwlock_wait_histogram TO pg_read_all_stats;

-- pg_lwlock_hold_histogram(): log2 distribution of the timed LWLock holds
-- since the last reset, one row per tranche, mode and non-empty bucket.
-- Errors with SQLSTATE 55000 unless pg_lockstat is in
-- shared_preload_libraries.
CREATE FUNCTION pg_lwlock_hold_histogram(
    OUT tranche_id integer,
    OUT tranche text,
    OUT mode text,
    OUT bucket_lower_us bigint,
    OUT bucket_upper_us bigint,
    OUT count bigint
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_lwlock_hold_histogram'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_lwlock_hold_histogram() IS
'log2 histogram of the timed LWLock holds per tranche and mode since the last reset; backs the view pg_lwlock_hold_histogram (errors: 55000 if not preloaded)';

CREATE VIEW pg_lwlock_hold_histogram AS
    SELECT * FROM pg_lwlock_hold_histogram();

COMMENT ON VIEW pg_lwlock_hold_histogram IS
'distribution of the timed LWLock holds (pg_lockstat.hold_sample_every) per tranche and mode since the last pg_lockstat_reset(), one entry per sample (so a tranche''s counts of a mode add up to its ex_hold_samples or sh_hold_samples), in power-of-two microsecond buckets; only non-empty buckets';
COMMENT ON COLUMN pg_lwlock_hold_histogram.tranche_id IS
'LWLock tranche ID; NULL for the overflow row that sums tranche IDs >= pg_lockstat.max_tranches';
COMMENT ON COLUMN pg_lwlock_hold_histogram.tranche IS
'tranche name, as pg_stat_activity.wait_event shows it';
COMMENT ON COLUMN pg_lwlock_hold_histogram.mode IS
'exclusive or shared';
COMMENT ON COLUMN pg_lwlock_hold_histogram.bucket_lower_us IS
'the bucket counts holds that lasted at least this many microseconds (0, 1, 2, 4, ...), from the end of the acquisition to the release (the wake-ups of waiters that follow the release not included)';
COMMENT ON COLUMN pg_lwlock_hold_histogram.bucket_upper_us IS
'and less than this many microseconds; NULL for the last bucket (4194304 microseconds and more)';
COMMENT ON COLUMN pg_lwlock_hold_histogram.count IS
'timed holds in the bucket (count)';

REVOKE ALL ON FUNCTION pg_lwlock_hold_histogram() FROM PUBLIC;
REVOKE ALL ON pg_lwlock_hold_histogram FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_lwlock_hold_histogram() TO pg_read_all_stats;
GRANT SELECT ON pg_lwlock_hold_histogram TO pg_read_all_stats;

-- pg_lwlock_hold_stats: the timed holds of pg_lwlock_stats, one row per
-- tranche and mode with any sample.
CREATE VIEW pg_lwlock_hold_stats AS
    SELECT tranche_id, tranche, 'exclusive'::text AS mode,
           ex_hold_samples AS samples, ex_acquires AS acquires,
           ex_hold_time AS hold_time,
           ex_hold_time / ex_hold_samples AS mean_hold_time,
           max_ex_hold_time AS max_hold_time
    FROM pg_lwlock_stats WHERE ex_hold_samples > 0
    UNION ALL
    SELECT tranche_id, tranche, 'shared'::text AS mode,
           sh_hold_samples, sh_acquires, sh_hold_time,
           sh_hold_time / sh_hold_samples, max_sh_hold_time
    FROM pg_lwlock_stats WHERE sh_hold_samples > 0;

COMMENT ON VIEW pg_lwlock_hold_stats IS
'timed LWLock holds per tranche and mode since the last pg_lockstat_reset() (pg_lockstat.hold_sample_every); only tranches and modes with a sample';
COMMENT ON COLUMN pg_lwlock_hold_stats.tranche_id IS
'LWLock tranche ID; NULL for the overflow row that sums tranche IDs >= pg_lockstat.max_tranches';
COMMENT ON COLUMN pg_lwlock_hold_stats.tranche IS
'tranche name, as pg_stat_activity.wait_event shows it';
COMMENT ON COLUMN pg_lwlock_hold_stats.mode IS
'exclusive or shared';
COMMENT ON COLUMN pg_lwlock_hold_stats.samples IS
'acquisitions in this mode whose hold was timed (count)';
COMMENT ON COLUMN pg_lwlock_hold_stats.acquires IS
'all acquisitions in this mode (count), for scaling: hold_time * acquires / samples estimates the time the lock was held in all';
COMMENT ON COLUMN pg_lwlock_hold_stats.hold_time IS
'time that the timed holds lasted, each from the end of its acquisition to its release (milliseconds)';
COMMENT ON COLUMN pg_lwlock_hold_stats.mean_hold_time IS
'hold_time / samples (milliseconds)';
COMMENT ON COLUMN pg_lwlock_hold_stats.max_hold_time IS
'longest timed hold (milliseconds)';

REVOKE ALL ON pg_lwlock_hold_stats FROM PUBLIC;
GRANT SELECT ON pg_lwlock_hold_stats TO pg_read_all_stats;

-- pg_lwlock_instance_stats(): the counters of each lock of the fixed main
-- LWLock array since the last reset.  Errors with SQLSTATE 55000 unless
-- pg_lockstat is in shared_preload_libraries.
CREATE FUNCTION pg_lwlock_instance_stats(
    OUT tranche_id integer,
    OUT tranche text,
    OUT partition integer,
    OUT main_index integer,
    OUT counters pg_lwlock_counters,
    OUT max_wait_time double precision
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_lwlock_instance_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_lwlock_instance_stats() IS
'counters of each individual LWLock and each partition of the main LWLock array since the last reset; backs the view pg_lwlock_instance_stats (errors: 55000 if not preloaded)';

CREATE VIEW pg_lwlock_instance_stats AS
    SELECT s.tranche_id, s.tranche, s.partition, s.main_index,
           (s.counters).*, s.max_wait_time,
           100 * ((s.counters).sh_acquires + (s.counters).ex_acquires)::float8 /
               nullif(sum(((s.counters).sh_acquires +
                           (s.counters).ex_acquires)::float8)
                      OVER (PARTITION BY s.tranche_id), 0)
               AS tranche_acquire_pct,
           100 * (s.counters).blocks /
               nullif(sum((s.counters).blocks::float8)
                      OVER (PARTITION BY s.tranche_id), 0)
               AS tranche_blk_pct
    FROM pg_lwlock_instance_stats() AS s;

COMMENT ON VIEW pg_lwlock_instance_stats IS
'LWLock statistics per lock of the main LWLock array (individual locks, and the partitions of BufferMapping, LockManager and PredicateLockManager) since the last pg_lockstat_reset(); pg_lwlock_stats shows their sums per tranche';
COMMENT ON COLUMN pg_lwlock_instance_stats.tranche_id IS
'LWLock tranche ID of the lock';
COMMENT ON COLUMN pg_lwlock_instance_stats.tranche IS
'tranche name, as pg_stat_activity.wait_event shows it';
COMMENT ON COLUMN pg_lwlock_instance_stats.partition IS
'partition number within BufferMapping (0-127), LockManager (0-15) or PredicateLockManager (0-15); NULL for an individual LWLock';
COMMENT ON COLUMN pg_lwlock_instance_stats.main_index IS
'position of the lock in the main LWLock array (MainLWLockArray)';
COMMENT ON COLUMN pg_lwlock_instance_stats.max_wait_time IS
'longest wait of one blocked call for this lock since the last reset (milliseconds)';
COMMENT ON COLUMN pg_lwlock_instance_stats.tranche_acquire_pct IS
'this lock''s share of its tranche''s acquisitions (percent): partition skew';
COMMENT ON COLUMN pg_lwlock_instance_stats.tranche_blk_pct IS
'this lock''s share of its tranche''s blocks (percent); NULL when the tranche has none';

REVOKE ALL ON FUNCTION pg_lwlock_instance_stats() FROM PUBLIC;
REVOKE ALL ON pg_lwlock_instance_stats FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_lwlock_instance_stats() TO pg_read_all_stats;
GRANT SELECT ON pg_lwlock_instance_stats TO pg_read_all_stats;

-- pg_lwlock_backend_stats(): per live process and tranche, the counters
-- since that process started.  Columns and units: see the view below.
-- Errors with SQLSTATE 55000 unless pg_lockstat is in
-- shared_preload_libraries.
CREATE FUNCTION pg_lwlock_backend_stats(
    OUT pid integer,
    OUT backend_type text,
    OUT tranche_id integer,
    OUT tranche text,
    OUT counters pg_lwlock_counters
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_lwlock_backend_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_lwlock_backend_stats() IS
'per-process, per-tranche LWLock counters since each live process started; backs the view pg_lwlock_backend_stats (errors: 55000 if not preloaded)';

CREATE VIEW pg_lwlock_backend_stats AS
    SELECT s.pid, s.backend_type, s.tranche_id, s.tranche,
           (s.counters).*
    FROM pg_lwlock_backend_stats() AS s;

COMMENT ON VIEW pg_lwlock_backend_stats IS
'LWLock statistics per live process and tranche since the process started, not affected by pg_lockstat_reset(); joins with pg_stat_activity on pid; the hold columns (sh_hold_samples, ex_hold_samples, sh_hold_time, ex_hold_time) are NULL, as sampled holds are kept per kind of process (pg_lwlock_backend_type_stats)';
COMMENT ON COLUMN pg_lwlock_backend_stats.pid IS
'process ID, as pg_stat_activity.pid';
COMMENT ON COLUMN pg_lwlock_backend_stats.backend_type IS
'kind of process, as pg_stat_activity.backend_type (client backend, checkpointer, parallel worker, ...)';
COMMENT ON COLUMN pg_lwlock_backend_stats.tranche_id IS
'LWLock tranche ID; NULL for the overflow row that sums tranche IDs >= pg_lockstat.max_tranches';
COMMENT ON COLUMN pg_lwlock_backend_stats.tranche IS
'tranche name, as pg_stat_activity.wait_event shows it';

-- the same audience as pg_lwlock_stats
REVOKE ALL ON FUNCTION pg_lwlock_backend_stats() FROM PUBLIC;
REVOKE ALL ON pg_lwlock_backend_stats FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_lwlock_backend_stats() TO pg_read_all_stats;
GRANT SELECT ON pg_lwlock_backend_stats TO pg_read_all_stats;

-- pg_lwlock_backend_type_stats(): per kind of process and tranche, the
-- counters since the last reset, of live and exited processes alike.
-- Columns and units: see the view below.  Errors with SQLSTATE 55000 unless
-- pg_lockstat is in shared_preload_libraries.
CREATE FUNCTION pg_lwlock_backend_type_stats(
    OUT backend_type text,
    OUT tranche_id integer,
    OUT tranche text,
    OUT counters pg_lwlock_counters
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_lwlock_backend_type_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_lwlock_backend_type_stats() IS
'per-kind-of-process, per-tranche LWLock counters since the last reset, exited processes included; backs the view pg_lwlock_backend_type_stats (errors: 55000 if not preloaded)';

CREATE VIEW pg_lwlock_backend_type_stats AS
    SELECT s.backend_type, s.tranche_id, s.tranche,
           (s.counters).*
    FROM pg_lwlock_backend_type_stats() AS s;

COMMENT ON VIEW pg_lwlock_backend_type_stats IS
'LWLock statistics per kind of process and tranche since the last pg_lockstat_reset(), of live and exited processes; per tranche, the kinds add up to pg_lwlock_stats';
COMMENT ON COLUMN pg_lwlock_backend_type_stats.backend_type IS
'kind of process, as pg_stat_io.backend_type (client backend, autovacuum worker, checkpointer, background worker, ...), with parallel workers as "parallel worker"; the kind a process had when it started counting';
COMMENT ON COLUMN pg_lwlock_backend_type_stats.tranche_id IS
'LWLock tranche ID; NULL for the overflow row that sums tranche IDs >= pg_lockstat.max_tranches';
COMMENT ON COLUMN pg_lwlock_backend_type_stats.tranche IS
'tranche name, as pg_stat_activity.wait_event shows it';

-- the same audience as pg_lwlock_stats
REVOKE ALL ON FUNCTION pg_lwlock_backend_type_stats() FROM PUBLIC;
REVOKE ALL ON pg_lwlock_backend_type_stats FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_lwlock_backend_type_stats() TO pg_read_all_stats;
GRANT SELECT ON pg_lwlock_backend_type_stats TO pg_read_all_stats;

-- pg_lwlock_query_stats(): blocked LWLock calls and sampled holds per
-- query, database, role and tranche since the last reset, with a residual
-- row per tranche, so that per tranche the rows add up to
-- pg_lwlock_stats.blocks, wait_time and the hold columns.
-- Columns and units: see the view below.  Errors with SQLSTATE 55000 unless
-- pg_lockstat is in shared_preload_libraries, 55P03 if a process's table
-- cannot be read consistently.
CREATE FUNCTION pg_lwlock_query_stats(
    OUT queryid bigint,
    OUT dbid oid,
    OUT userid oid,
    OUT backend_type text,
    OUT tranche_id integer,
    OUT tranche text,
    OUT blocks bigint,
    OUT wait_time double precision,
    OUT max_wait_time double precision,
    OUT sh_hold_samples bigint,
    OUT ex_hold_samples bigint,
    OUT sh_hold_time double precision,
    OUT ex_hold_time double precision,
    OUT max_ex_hold_time double precision,
    OUT max_sh_hold_time double precision
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_lwlock_query_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_lwlock_query_stats() IS
'blocked LWLock calls and sampled holds per query, database, role and tranche since the last reset; backs the view pg_lwlock_query_stats (errors: 55000 if not preloaded, 55P03 if a process''s table cannot be read consistently)';

CREATE VIEW pg_lwlock_query_stats AS
    SELECT s.queryid, s.dbid, s.userid, s.backend_type,
           s.tranche_id, s.tranche, s.blocks, s.wait_time, s.max_wait_time,
           s.sh_hold_samples, s.ex_hold_samples,
           s.sh_hold_time, s.ex_hold_time,
           s.max_ex_hold_time, s.max_sh_hold_time
    FROM pg_lwlock_query_stats() AS s;

COMMENT ON VIEW pg_lwlock_query_stats IS
'blocked LWLock calls and sampled holds per (queryid, dbid, userid, tranche) since the last pg_lockstat_reset(), joinable with pg_stat_statements USING (queryid, dbid, userid); rows with queryid NULL hold the counts outside any query with an ID (per backend type) and, with backend_type NULL too, each tranche''s residual row; per tranche the rows add up to pg_lwlock_stats.blocks, wait_time, sh_hold_samples, ex_hold_samples, sh_hold_time and ex_hold_time';
COMMENT ON COLUMN pg_lwlock_query_stats.queryid IS
'ID of the query that was running, as pg_stat_statements.queryid (in a parallel worker, its leader''s); NULL outside any query with an ID (compute_query_id off, utility statements without one, background processes) and in the residual row';
COMMENT ON COLUMN pg_lwlock_query_stats.dbid IS
'OID of the database of the process; NULL in processes without one and in the residual row';
COMMENT ON COLUMN pg_lwlock_query_stats.userid IS
'OID of the current user at the blocked call; NULL if none and in the residual row';
COMMENT ON COLUMN pg_lwlock_query_stats.backend_type IS
'for a row with queryid NULL, the kind of process (client backend, autovacuum worker, checkpointer, parallel worker, background worker, ...); NULL for a query''s row and for the residual row of each tranche, which holds the calls of processes whose table was full and the evicted entries';
COMMENT ON COLUMN pg_lwlock_query_stats.tranche_id IS
'LWLock tranche ID; NULL for the overflow row that sums tranche IDs >= pg_lockstat.max_tranches';
COMMENT ON COLUMN pg_lwlock_query_stats.tranche IS
'tranche name, as pg_stat_activity.wait_event shows it';
COMMENT ON COLUMN pg_lwlock_query_stats.blocks IS
'calls that slept on the process semaphore at least once (count), as pg_lwlock_stats.blocks';
COMMENT ON COLUMN pg_lwlock_query_stats.wait_time IS
'time that those calls waited, each from its first sleep until its last wake-up (milliseconds)';
COMMENT ON COLUMN pg_lwlock_query_stats.max_wait_time IS
'longest wait of one of those calls (milliseconds)';
COMMENT ON COLUMN pg_lwlock_query_stats.sh_hold_samples IS
'sampled shared holds (count): one acquisition in pg_lockstat.hold_sample_every, as pg_lwlock_stats.sh_hold_samples';
COMMENT ON COLUMN pg_lwlock_query_stats.ex_hold_samples IS
'sampled exclusive holds (count), as pg_lwlock_stats.ex_hold_samples';
COMMENT ON COLUMN pg_lwlock_query_stats.sh_hold_time IS
'time the sampled shared holds lasted, each from the acquisition to the release (milliseconds)';
COMMENT ON COLUMN pg_lwlock_query_stats.ex_hold_time IS
'time the sampled exclusive holds lasted (milliseconds)';
COMMENT ON COLUMN pg_lwlock_query_stats.max_ex_hold_time IS
'longest sampled exclusive hold (milliseconds)';
COMMENT ON COLUMN pg_lwlock_query_stats.max_sh_hold_time IS
'longest sampled shared hold (milliseconds)';

-- the same audience as pg_lwlock_stats
REVOKE ALL ON FUNCTION pg_lwlock_query_stats() FROM PUBLIC;
REVOKE ALL ON pg_lwlock_query_stats FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_lwlock_query_stats() TO pg_read_all_stats;
GRANT SELECT ON pg_lwlock_query_stats TO pg_read_all_stats;

-- pg_lwlock_blockers(): blocked LWLock calls per tranche, waiting query,
-- holder (the process whose release ended the wait) and root holder (the
-- hold at the head of the chain of wake-ups) since the last reset.
-- Columns and units: see the view below.  Errors as pg_lwlock_query_stats().
CREATE FUNCTION pg_lwlock_blockers(
    OUT tranche_id integer,
    OUT tranche text,
    OUT queryid bigint,
    OUT dbid oid,
    OUT userid oid,
    OUT backend_type text,
    OUT holder_queryid bigint,
    OUT holder_backend_type text,
    OUT holder_mode text,
    OUT root_queryid bigint,
    OUT root_backend_type text,
    OUT root_mode text,
    OUT blocks bigint,
    OUT wait_time double precision,
    OUT max_wait_time double precision
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_lwlock_blockers'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_lwlock_blockers() IS
'blocked LWLock calls per tranche, waiting query, holding query and root holding query since the last reset; backs the view pg_lwlock_blockers (errors: 55000 if not preloaded, 55P03 if a process''s table cannot be read consistently)';

CREATE VIEW pg_lwlock_blockers AS
    SELECT b.tranche_id, b.tranche, b.queryid, b.dbid, b.userid,
           b.backend_type, b.holder_queryid, b.holder_backend_type,
           b.holder_mode, b.root_queryid, b.root_backend_type, b.root_mode,
           b.blocks, b.wait_time, b.max_wait_time
    FROM pg_lwlock_blockers() AS b;

COMMENT ON VIEW pg_lwlock_blockers IS
'blocked LWLock calls per (tranche, waiting queryid, dbid, userid, holder, root holder) since the last pg_lockstat_reset(): the holder is the process whose release of the lock ended the wait, the root the holder at the head of that chain of wake-ups (the holder itself, unless it had got the lock by being woken); join pg_stat_statements USING (queryid, dbid, userid) for the waiter and ON queryid = holder_queryid or root_queryid for the holders; rows with NULL holder columns hold the calls whose holder is not known and each tranche''s residual row; per tranche the rows add up to pg_lwlock_stats.blocks and wait_time';
COMMENT ON COLUMN pg_lwlock_blockers.tranche_id IS
'LWLock tranche ID; NULL for the overflow row that sums tranche IDs >= pg_lockstat.max_tranches';
COMMENT ON COLUMN pg_lwlock_blockers.tranche IS
'tranche name, as pg_stat_activity.wait_event shows it';
COMMENT ON COLUMN pg_lwlock_blockers.queryid IS
'ID of the waiting query, as pg_lwlock_query_stats.queryid; NULL outside any query with an ID and in the residual row';
COMMENT ON COLUMN pg_lwlock_blockers.dbid IS
'OID of the database of the waiting process; NULL in processes without one and in the residual row';
COMMENT ON COLUMN pg_lwlock_blockers.userid IS
'OID of the current user of the waiting process; NULL if none and in the residual row';
COMMENT ON COLUMN pg_lwlock_blockers.backend_type IS
'for a waiter with queryid NULL, its kind of process; NULL for a query''s row and the residual row';
COMMENT ON COLUMN pg_lwlock_blockers.holder_queryid IS
'ID of the query that the holder ran when its release ended the wait, as pg_stat_statements.queryid; NULL if it ran none with an ID or the holder is not known';
COMMENT ON COLUMN pg_lwlock_blockers.holder_backend_type IS
'the holder''s kind of process (client backend, checkpointer, walwriter, ...) when it ran no query with an ID; NULL otherwise';
COMMENT ON COLUMN pg_lwlock_blockers.holder_mode IS
'exclusive or shared: the mode in which the holder held the lock (exclusive also for the waits for a variable that LWLockUpdateVar ends); NULL if the holder is not known';
COMMENT ON COLUMN pg_lwlock_blockers.root_queryid IS
'ID of the query of the root holder: the holder itself if it had not blocked on the lock for the hold whose release ended the wait, else the root that its own wait was ended under, passed on along a convoy of waiters that each got the lock by being woken; NULL if it ran none with an ID or the holder is not known';
COMMENT ON COLUMN pg_lwlock_blockers.root_backend_type IS
'the root holder''s kind of process when it ran no query with an ID; NULL otherwise';
COMMENT ON COLUMN pg_lwlock_blockers.root_mode IS
'exclusive or shared: the mode in which the root holder held the lock; NULL if the holder is not known';
COMMENT ON COLUMN pg_lwlock_blockers.blocks IS
'blocked calls whose last sleep this holder ended under this root (count), as pg_lwlock_query_stats.blocks';
COMMENT ON COLUMN pg_lwlock_blockers.wait_time IS
'time that those calls waited, each from its first sleep until its last wake-up (milliseconds)';
COMMENT ON COLUMN pg_lwlock_blockers.max_wait_time IS
'longest wait of one of those calls (milliseconds)';

-- the same audience as pg_lwlock_stats
REVOKE ALL ON FUNCTION pg_lwlock_blockers() FROM PUBLIC;
REVOKE ALL ON pg_lwlock_blockers FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_lwlock_blockers() TO pg_read_all_stats;
GRANT SELECT ON pg_lwlock_blockers TO pg_read_all_stats;

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
AS 'MODULE_PATHNAME', 'pg_spinlock_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_spinlock_stats() IS
'contended spin waits per call site since the last reset; backs the view pg_spinlock_stats (errors: 55000 if not preloaded, 55P03 if the counters cannot be read consistently)';

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
'longest wait, from its first spin until its last spin before the lock was taken, spinning and sleeping included (milliseconds)';

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
AS 'MODULE_PATHNAME', 'pg_spinlock_wait_histogram'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_spinlock_wait_histogram() IS
'durations of contended spin waits per call site since the last reset; backs the view pg_spinlock_wait_histogram (errors: 55000 if not preloaded, 55P03 if the counters cannot be read consistently)';

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
'waits in the bucket, each from its first spin until its last spin before the lock was taken (count)';

REVOKE ALL ON FUNCTION pg_spinlock_wait_histogram() FROM PUBLIC;
REVOKE ALL ON pg_spinlock_wait_histogram FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_spinlock_wait_histogram() TO pg_read_all_stats;
GRANT SELECT ON pg_spinlock_wait_histogram TO pg_read_all_stats;

-- pg_lockstat_status(): one row describing what is in force, or, on a server
-- without a compatible core patch, that counting is inactive and why.
-- Errors with SQLSTATE 55000 unless pg_lockstat is in
-- shared_preload_libraries.
CREATE FUNCTION pg_lockstat_status(
    OUT spin_strategy text,
    OUT track boolean,
    OUT stats_reset timestamp with time zone,
    OUT core_patch_version text,
    OUT max_tranches integer,
    OUT process_slots integer,
    OUT min_spins_per_delay integer,
    OUT max_spins_per_delay integer,
    OUT min_delay_us integer,
    OUT max_delay_us integer,
    OUT backoff_max_pauses integer,
    OUT max_spin_sites integer,
    OUT spin_sites_dropped bigint,
    OUT max_query_entries integer,
    OUT query_entries bigint,
    OUT query_entries_evicted bigint,
    OUT query_waits_unattributed bigint,
    OUT query_ids_available boolean,
    OUT counting boolean,
    OUT inactive_reason text
)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_lockstat_status'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_lockstat_status() IS
'pg_lockstat settings in force; backs the view pg_lockstat_status (errors: 55000 if not preloaded)';

CREATE VIEW pg_lockstat_status AS
    SELECT * FROM pg_lockstat_status();

COMMENT ON VIEW pg_lockstat_status IS
'pg_lockstat settings in force: spin strategy and spin-and-sleep limits read back from the server core, tracking, last reset, core patch version, table sizes';
COMMENT ON COLUMN pg_lockstat_status.spin_strategy IS
'spin strategy in force, read back from the server core''s spin_strategy variable (default, tas, ttas_spin, ttas, ttas_backoff)';
COMMENT ON COLUMN pg_lockstat_status.track IS
'pg_lockstat.track in this session: whether this process counts';
COMMENT ON COLUMN pg_lockstat_status.stats_reset IS
'time of the last pg_lockstat_reset(), or when shared memory was initialised (server start or crash restart)';
COMMENT ON COLUMN pg_lockstat_status.core_patch_version IS
'version of the core patch interface, the server''s LWLockStatsVersion; NULL while counting is inactive';
COMMENT ON COLUMN pg_lockstat_status.max_tranches IS
'pg_lockstat.max_tranches in force: tranche IDs counted separately (count)';
COMMENT ON COLUMN pg_lockstat_status.process_slots IS
'per-process counter slots, MaxBackends plus auxiliary processes (count)';
COMMENT ON COLUMN pg_lockstat_status.min_spins_per_delay IS
'lower bound of the adaptive spins between spin delays in force (count; s_lock.c, formerly MIN_SPINS_PER_DELAY)';
COMMENT ON COLUMN pg_lockstat_status.max_spins_per_delay IS
'upper bound of the adaptive spins between spin delays in force (count; formerly MAX_SPINS_PER_DELAY)';
COMMENT ON COLUMN pg_lockstat_status.min_delay_us IS
'first sleep of a contended spin wait in force (microseconds; formerly MIN_DELAY_USEC)';
COMMENT ON COLUMN pg_lockstat_status.max_delay_us IS
'longest sleep of a contended spin wait in force (microseconds; formerly MAX_DELAY_USEC)';
COMMENT ON COLUMN pg_lockstat_status.backoff_max_pauses IS
'cap of the exponential backoff of spin_strategy ttas_backoff in force (spin delay instructions per pause)';
COMMENT ON COLUMN pg_lockstat_status.max_spin_sites IS
'pg_lockstat.max_spin_sites: call sites of spin waits counted per process (count)';
COMMENT ON COLUMN pg_lockstat_status.spin_sites_dropped IS
'spin waits not counted in pg_spinlock_stats since server start because a process already had max_spin_sites call sites (count)';
COMMENT ON COLUMN pg_lockstat_status.max_query_entries IS
'pg_lockstat.max_query_entries: entries of the shared table of pg_lwlock_query_stats (count)';
COMMENT ON COLUMN pg_lockstat_status.query_entries IS
'entries in the shared table of pg_lwlock_query_stats now, at most max_query_entries (count); entries still in the tables of running processes are not included';
COMMENT ON COLUMN pg_lockstat_status.query_entries_evicted IS
'entries evicted from the shared table of pg_lwlock_query_stats into the residual row of their tranche since server start, least-waited first (count)';
COMMENT ON COLUMN pg_lockstat_status.query_waits_unattributed IS
'blocked calls counted in the residual row of their tranche in pg_lwlock_query_stats since server start because their process''s table of entries was full (count)';
COMMENT ON COLUMN pg_lockstat_status.query_ids_available IS
'whether this session''s queries get query IDs, which pg_lwlock_query_stats counts by: compute_query_id = on or regress, or auto with a module that enables them (pg_stat_statements), and track_activities on';
COMMENT ON COLUMN pg_lockstat_status.counting IS
'true if the server has a compatible core patch, so that pg_lockstat counts (while track is on); false if it is inactive, and then every column in force is NULL and the other views fail with 55000';
COMMENT ON COLUMN pg_lockstat_status.inactive_reason IS
'why counting is inactive (the core patch is missing, or of another interface major version); NULL while counting';

REVOKE ALL ON FUNCTION pg_lockstat_status() FROM PUBLIC;
REVOKE ALL ON pg_lockstat_status FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_lockstat_status() TO pg_read_all_stats;
GRANT SELECT ON pg_lockstat_status TO pg_read_all_stats;

-- pg_lockstat_reset(): restart every counter from zero; returns the new
-- stats_reset.  Superuser only unless EXECUTE is granted.
CREATE FUNCTION pg_lockstat_reset()
RETURNS timestamp with time zone
AS 'MODULE_PATHNAME', 'pg_lockstat_reset'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_lockstat_reset() IS
'restart all pg_lockstat counters from zero by taking a baseline; returns the new stats_reset (errors: 55000 if not preloaded, 42501 without EXECUTE)';

REVOKE ALL ON FUNCTION pg_lockstat_reset() FROM PUBLIC;

-- Each column of a view that shows an attribute of pg_lwlock_counters gets
-- that attribute's description, so that a counter is described once.
DO $$
DECLARE
    col record;
BEGIN
    FOR col IN
        SELECT v.attrelid::regclass AS view, v.attname,
               col_description(t.attrelid, t.attnum) AS description
        FROM pg_attribute t
        JOIN pg_attribute v ON v.attname = t.attname
        WHERE t.attrelid = 'pg_lwlock_counters'::regclass AND t.attnum > 0
          AND v.attrelid IN ('pg_lwlock_stats'::regclass,
                             'pg_lwlock_instance_stats'::regclass,
                             'pg_lwlock_backend_stats'::regclass,
                             'pg_lwlock_backend_type_stats'::regclass)
    LOOP
        EXECUTE format('COMMENT ON COLUMN %s.%I IS %L',
                       col.view, col.attname, col.description);
    END LOOP;
END
$$;
