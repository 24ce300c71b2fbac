/* test/lockstat_test/lockstat_test--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION lockstat_test" to load this file. \quit

-- Acquire and release the "lockstat_test" LWLock n times in mode 'shared',
-- 'exclusive' or 'conditional', holding it hold_us microseconds (at most 1 s)
-- each time, asleep or, with busy, busy-waiting on the clock (a hold known to
-- within a clock read).  Returns the number of acquisitions.  Errors: 22023
-- for a bad argument.
CREATE FUNCTION lockstat_test_lwlock(mode text, n integer, hold_us integer DEFAULT 0,
									 busy boolean DEFAULT false)
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

-- Acquire and release lock main_index of the fixed main LWLock array n times
-- in mode 'shared' or 'exclusive'.  Returns n.  Errors: 22023 for a bad
-- argument.
CREATE FUNCTION lockstat_test_main_lwlock(main_index integer, mode text, n integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'lockstat_test_main_lwlock'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- The number of times the test spinlock was taken by lockstat_test_spinlock,
-- lockstat_test_spinlock_churn and lockstat_test_spinlock_hold (one per
-- call) since server start, read under the spinlock.  Errors: 55000 if not
-- preloaded.
CREATE FUNCTION lockstat_test_spin_counter()
RETURNS bigint
AS 'MODULE_PATHNAME', 'lockstat_test_spin_counter'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- The server's first tranche ID of extensions (LWTRANCHE_FIRST_USER_DEFINED):
-- the IDs below it are the server's own tranches, which pg_wait_events
-- lists.  No errors.
CREATE FUNCTION lockstat_test_first_user_tranche()
RETURNS integer
AS 'MODULE_PATHNAME', 'lockstat_test_first_user_tranche'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

-- Allocate count new LWLock tranche IDs (LWLockNewTrancheId) and acquire a
-- lock of each n times, exclusive.  Returns count * n.  IDs are used up
-- until restart.  Errors: 22023 for a bad argument.
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

-- Acquire the "lockstat_test" LWLock once in mode 'shared' or 'exclusive' and
-- hold it until lockstat_test_release() is called; wait_event "Extension"
-- (type "Extension") shows the hold.  Returns 1.  Errors: 22023 for a bad
-- mode; 57014 after 600 s without a release.
CREATE FUNCTION lockstat_test_lwlock_hold(mode text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'lockstat_test_lwlock_hold'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- Acquire the "lockstat_test" LWLock exclusively, hold it hold_us
-- microseconds (at most 1 s) and raise an error (FATAL if fatal) while
-- holding it, so that LWLockReleaseAll() ends the hold.  Errors: 22023 for
-- hold_us out of range; P0001 always.
CREATE FUNCTION lockstat_test_lwlock_error(hold_us integer, fatal boolean)
RETURNS bigint
AS 'MODULE_PATHNAME', 'lockstat_test_lwlock_error'
LANGUAGE C STRICT VOLATILE;

-- Take the test spinlock again and again, holding it hold_us microseconds
-- (at most 1 ms) each time, until lockstat_test_release() is called;
-- wait_event "Extension" shows it runs (set again after each hold).
-- Returns the number of holds.  Errors: 22023 for a bad hold_us; 57014 on
-- cancel or after 600 s.
CREATE FUNCTION lockstat_test_spinlock_churn(hold_us integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'lockstat_test_spinlock_churn'
LANGUAGE C STRICT VOLATILE;

-- Take the test spinlock once and hold it, busy-waiting, until
-- lockstat_test_release() is called; wait_event "Extension" (type
-- "Extension") shows that it holds.  Not cancellable meanwhile.  Returns 1.
-- Errors: 55000 if not preloaded; 57014 (after releasing) after 30 s without
-- a release, before the waiters' stuck-spinlock PANIC.
CREATE FUNCTION lockstat_test_spinlock_hold()
RETURNS bigint
AS 'MODULE_PATHNAME', 'lockstat_test_spinlock_hold'
LANGUAGE C STRICT VOLATILE;

-- The number of contended waits for the test spinlock begun since server
-- start, in all processes, each counted at its first spin in s_lock()
-- (tracked by pg_lockstat or not): it rises while the waiters still wait.
-- Errors: 55000 if not preloaded, or if pg_lockstat is not preloaded before
-- lockstat_test.
CREATE FUNCTION lockstat_test_spin_waits()
RETURNS bigint
AS 'MODULE_PATHNAME', 'lockstat_test_spin_waits'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

-- Nested holds: the test lock exclusively, a_us later lock main_index of
-- the fixed main array shared, b_us later release of the inner lock (lifo)
-- or of the outer one, c_us later release of the other.  Each sleep at most
-- 1 s.  Errors: 22023 for a bad argument.
CREATE FUNCTION lockstat_test_lwlock_nested(main_index integer, a_us integer,
                                            b_us integer, c_us integer,
                                            lifo boolean)
RETURNS void
AS 'MODULE_PATHNAME', 'lockstat_test_lwlock_nested'
LANGUAGE C STRICT VOLATILE;

-- Takes the test lock in mode 'shared' or 'exclusive', holds it hold_us
-- microseconds (at most 1 s), gives up its ownership with LWLockDisown()
-- and keeps it held, with wait event "Extension", until
-- lockstat_test_release(); then releases it with LWLockReleaseDisowned().
-- Returns 1.  Errors: 0A000 before PostgreSQL 18; 22023 for a bad argument;
-- 57014 if no release came within 600 s.
CREATE FUNCTION lockstat_test_lwlock_disown(mode text, hold_us integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'lockstat_test_lwlock_disown'
LANGUAGE C STRICT VOLATILE;

-- Register n spin wait call sites of a file that does not exist, at lines
-- first_line .. first_line + n - 1, in this process's table of call sites,
-- without a wait; returns how many got counters.  Errors: 22023 for n out of
-- 0..10000; 55000 if not preloaded, or if pg_lockstat is not preloaded
-- before lockstat_test.
CREATE FUNCTION lockstat_test_spin_sites(first_line integer, n integer)
RETURNS integer
AS 'MODULE_PATHNAME', 'lockstat_test_spin_sites'
LANGUAGE C STRICT VOLATILE;

-- The first two calls since server start meet: the first (returns 1) takes
-- the test spinlock and holds it until the second (returns 2) has begun to
-- wait for it, so that exactly one contended wait is counted, at a call site
-- of lockstat_test_rendezvous.c (func lst_rendezvous_wait), on any machine.
-- Later calls return 0 at once.  Each waits for the other at most 300 s.
-- Errors: 55000 if not preloaded, or if pg_lockstat is not preloaded before
-- lockstat_test; 57014 after 300 s without the other caller, or on cancel.
CREATE FUNCTION lockstat_test_spin_rendezvous()
RETURNS integer
AS 'MODULE_PATHNAME', 'lockstat_test_spin_rendezvous'
LANGUAGE C STRICT VOLATILE;

-- End every hold and churn that started before this call.  Errors: 55000 if
-- not preloaded.
CREATE FUNCTION lockstat_test_release()
RETURNS void
AS 'MODULE_PATHNAME', 'lockstat_test_release'
LANGUAGE C STRICT VOLATILE;

-- These functions can make other sessions wait or falsify counts:
-- superusers only.
REVOKE ALL ON FUNCTION lockstat_test_lwlock(text, integer, integer, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_spinlock(integer, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_spin_counter() FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_main_lwlock(integer, text, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_dynamic_tranches(integer, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_raise_counter(integer, numeric) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_lwlock_hold(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_spinlock_churn(integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_release() FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_spinlock_hold() FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_spin_waits() FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_spin_sites(integer, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_spin_rendezvous() FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_lwlock_nested(integer, integer, integer, integer, boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION lockstat_test_lwlock_disown(text, integer) FROM PUBLIC;

-- The lines of pg_lockstat's counter table (extension/lockstat_counters.h)
-- as this module was compiled with them, in their order: kind (lwlock or
-- spin), ordinal among the lines of that kind, column, the SQL type of its
-- unit and its description.  For the test that the install script made
-- from the table has them.  No errors.
CREATE FUNCTION lockstat_test_counter_lines(
    OUT kind text,
    OUT ordinal integer,
    OUT column_name text,
    OUT type text,
    OUT description text
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'lockstat_test_counter_lines'
LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
