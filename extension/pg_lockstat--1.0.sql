/* extension/pg_lockstat--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION pg_lockstat" to load this file. \quit

-- pg_lwlock_stats(): the per-tranche counters since the last reset, summed
-- over all processes.  Columns and units: see the view below.  Errors with
-- SQLSTATE 55000 unless pg_lockstat is in shared_preload_libraries.
CREATE FUNCTION pg_lwlock_stats(
    OUT tranche_id integer,
    OUT tranche text,
    OUT sh_acquires bigint,
    OUT ex_acquires bigint,
    OUT blocks bigint,
    OUT spin_delays bigint,
    OUT dequeue_self bigint,
    OUT wait_time double precision
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_lwlock_stats_1_0'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- pg_lockstat_status(): one row describing what is in force.
CREATE FUNCTION pg_lockstat_status(
    OUT spin_strategy text,
    OUT track boolean,
    OUT stats_reset timestamp with time zone,
    OUT core_patch_version text,
    OUT max_tranches integer,
    OUT process_slots integer
)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_lockstat_status_1_0'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- pg_lockstat_reset(): restart every counter from zero; returns the new
-- stats_reset.  Superuser only unless EXECUTE is granted.
CREATE FUNCTION pg_lockstat_reset()
RETURNS timestamp with time zone
AS 'MODULE_PATHNAME', 'pg_lockstat_reset_1_0'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- Fail CREATE EXTENSION now, with SQLSTATE 55000 and a hint, if the library
-- was not preloaded: without shared memory there is nothing to show.
SELECT FROM pg_lockstat_status();

COMMENT ON FUNCTION pg_lwlock_stats() IS
'per-tranche LWLock counters since the last reset; backs the view pg_lwlock_stats (errors: 55000 if not preloaded)';
COMMENT ON FUNCTION pg_lockstat_status() IS
'pg_lockstat settings in force; backs the view pg_lockstat_status (errors: 55000 if not preloaded)';
COMMENT ON FUNCTION pg_lockstat_reset() IS
'restart all pg_lockstat counters from zero by taking a baseline; returns the new stats_reset (errors: 55000 if not preloaded, 42501 without EXECUTE)';

CREATE VIEW pg_lwlock_stats AS
    SELECT s.tranche_id, s.tranche,
           s.sh_acquires, s.ex_acquires, s.blocks, s.spin_delays,
           s.dequeue_self, s.wait_time,
           100 * s.blocks / nullif(sum(s.blocks::float8) OVER (), 0)
               AS blk_pct,
           100 * s.spin_delays / nullif(sum(s.spin_delays::float8) OVER (), 0)
               AS spin_delay_pct
    FROM pg_lwlock_stats() AS s;

COMMENT ON VIEW pg_lwlock_stats IS
'LWLock statistics per tranche since the last pg_lockstat_reset(), summed over all processes (successor of LWLOCK_STATS)';
COMMENT ON COLUMN pg_lwlock_stats.tranche_id IS
'LWLock tranche ID; NULL for the overflow row that sums tranche IDs >= pg_lockstat.max_tranches';
COMMENT ON COLUMN pg_lwlock_stats.tranche IS
'tranche name, as pg_stat_activity.wait_event shows it';
COMMENT ON COLUMN pg_lwlock_stats.sh_acquires IS
'shared acquisitions (count): LWLockAcquire calls, successful LWLockConditionalAcquire and LWLockAcquireOrWait calls';
COMMENT ON COLUMN pg_lwlock_stats.ex_acquires IS
'exclusive acquisitions (count), as sh_acquires';
COMMENT ON COLUMN pg_lwlock_stats.blocks IS
'calls that had to sleep on the process semaphore at least once (count); LWLOCK_STATS "blk"';
COMMENT ON COLUMN pg_lwlock_stats.spin_delays IS
'sleeps of perform_spin_delay while taking the wait-list lock (count); LWLOCK_STATS "spindelay"';
COMMENT ON COLUMN pg_lwlock_stats.dequeue_self IS
'waiters that removed themselves from the wait queue (count); LWLOCK_STATS "dequeue self"';
COMMENT ON COLUMN pg_lwlock_stats.wait_time IS
'time spent sleeping in blocked calls (milliseconds)';
COMMENT ON COLUMN pg_lwlock_stats.blk_pct IS
'this tranche''s share of all blocks (percent); NULL when there are no blocks';
COMMENT ON COLUMN pg_lwlock_stats.spin_delay_pct IS
'this tranche''s share of all spin delays (percent); NULL when there are none';

CREATE VIEW pg_lockstat_status AS
    SELECT * FROM pg_lockstat_status();

COMMENT ON VIEW pg_lockstat_status IS
'pg_lockstat settings in force: spin strategy read back from the server core, tracking, last reset, core patch version, table sizes';

-- Lock statistics reveal workload details: the views are for superusers
-- and pg_read_all_stats (which pg_monitor includes), not for PUBLIC.
REVOKE ALL ON FUNCTION pg_lwlock_stats() FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_lockstat_status() FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_lockstat_reset() FROM PUBLIC;
REVOKE ALL ON pg_lwlock_stats FROM PUBLIC;
REVOKE ALL ON pg_lockstat_status FROM PUBLIC;

GRANT EXECUTE ON FUNCTION pg_lwlock_stats() TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_lockstat_status() TO pg_read_all_stats;
GRANT SELECT ON pg_lwlock_stats TO pg_read_all_stats;
GRANT SELECT ON pg_lockstat_status TO pg_read_all_stats;
