/* extension/pg_lockstat--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_lockstat UPDATE TO '1.1'" to load this file. \quit

-- pg_lockstat_status() gains the spin-and-sleep limits in force.  A view's
-- columns cannot be added in the middle, and the function's result type
-- changes, so both are created again.
DROP VIEW pg_lockstat_status;
DROP FUNCTION pg_lockstat_status();

-- pg_lockstat_status(): one row describing what is in force.  Errors with
-- SQLSTATE 55000 unless pg_lockstat is in shared_preload_libraries.
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
    OUT backoff_max_pauses integer
)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_lockstat_status_1_1'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION pg_lockstat_status() IS
'pg_lockstat settings in force; backs the view pg_lockstat_status (errors: 55000 if not preloaded)';

CREATE VIEW pg_lockstat_status AS
    SELECT * FROM pg_lockstat_status();

COMMENT ON VIEW pg_lockstat_status IS
'pg_lockstat settings in force: spin strategy and spin-and-sleep limits read back from the server core, tracking, last reset, core patch version, table sizes';
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

REVOKE ALL ON FUNCTION pg_lockstat_status() FROM PUBLIC;
REVOKE ALL ON pg_lockstat_status FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_lockstat_status() TO pg_read_all_stats;
GRANT SELECT ON pg_lockstat_status TO pg_read_all_stats;
