/* test/lockstat_test/lockstat_test--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION lockstat_test" to load this file. \quit

-- Acquire and release the "lockstat_test" LWLock n times in mode 'shared',
-- 'exclusive' or 'conditional', holding it hold_us microseconds (at most 1 s)
-- each time.  Returns the number of acquisitions.  Errors: 22023 for a bad
-- argument.
CREATE FUNCTION lockstat_test_lwlock(mode text, n integer, hold_us integer DEFAULT 0)
RETURNS bigint
AS 'MODULE_PATHNAME', 'lockstat_test_lwlock'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- Acquire and release the test spinlock n times, holding it hold_us
-- microseconds (at most 1 ms) each time.  Returns n.  Errors: 22023 for a bad
-- argument.
CREATE FUNCTION lockstat_test_spinlock(n integer, hold_us integer DEFAULT 0)
RETURNS bigint
AS 'MODULE_PATHNAME', 'lockstat_test_spinlock'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- Allocate count new LWLock tranche IDs (LWLockNewTrancheId) and acquire a
-- lock of each n times, exclusive.  Returns count * n.  IDs are used up
-- until restart.  Errors: 22023 for a bad argument.
CREATE FUNCTION lockstat_test_main_lwlock(main_index integer, mode text, n integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'lockstat_test_main_lwlock'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE FUNCTION lockstat_test_spin_counter()
RETURNS bigint
AS 'MODULE_PATHNAME', 'lockstat_test_spin_counter'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE FUNCTION lockstat_test_dynamic_tranches(count integer, n integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'lockstat_test_dynamic_tranches'
LANGUAGE C STRICT VOLATILE;

-- Test-only setter: raise this backend's shared-acquisition count of a
-- tranche to value (up to 2^64 - 1).  Errors: 55000 if pg_lockstat is not
-- counting; 22023 for a tranche without its own row or a lower value.
CREATE FUNCTION lockstat_test_raise_counter(tranche_id integer, value numeric)
RETURNS void
AS 'MODULE_PATHNAME', 'lockstat_test_raise_counter'
LANGUAGE C STRICT VOLATILE;

-- These functions can make other sessions wait or falsify counts:
-- superusers only.
REVOKE ALL ON FUNCTION lockstat_test_lwlock(text, integer, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_spinlock(integer, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_spin_counter() FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_main_lwlock(integer, text, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_dynamic_tranches(integer, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_raise_counter(integer, numeric) FROM PUBLIC;
