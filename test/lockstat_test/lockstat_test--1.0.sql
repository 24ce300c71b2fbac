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

-- These functions can make other sessions wait: superusers only.
REVOKE ALL ON FUNCTION lockstat_test_lwlock(text, integer, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_spinlock(integer, integer) FROM PUBLIC;
