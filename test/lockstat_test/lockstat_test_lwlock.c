/*-------------------------------------------------------------------------
 *
 * lockstat_test_lwlock.c
 *	  lockstat_test's LWLock functions: acquisitions of the "lockstat_test"
 *	  LWLock and of the fixed main array issued on request, holds until
 *	  released, errors while holding, nested and disowned holds, dynamic
 *	  tranches, and a setter of this backend's counters
 *
 * The shared state and the helpers are lockstat_test.c's (lockstat_test.h).
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  test/lockstat_test/lockstat_test_lwlock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lwlockstats.h"
#include "utils/builtins.h"

#include "lockstat_test.h"

PG_FUNCTION_INFO_V1(lockstat_test_lwlock);
PG_FUNCTION_INFO_V1(lockstat_test_main_lwlock);
PG_FUNCTION_INFO_V1(lockstat_test_first_user_tranche);
PG_FUNCTION_INFO_V1(lockstat_test_dynamic_tranches);
PG_FUNCTION_INFO_V1(lockstat_test_raise_counter);
PG_FUNCTION_INFO_V1(lockstat_test_lwlock_hold);
PG_FUNCTION_INFO_V1(lockstat_test_lwlock_error);
PG_FUNCTION_INFO_V1(lockstat_test_lwlock_nested);
PG_FUNCTION_INFO_V1(lockstat_test_lwlock_disown);

/*
 * Translate a mode argument: 'shared', 'exclusive' and, if allowed,
 * 'conditional' (LWLockConditionalAcquire, exclusive).  Errors: 22023 for
 * any other mode.
 */
static void
lst_parse_mode(const char *mode, LWLockMode *lwmode, bool *conditional,
			   bool allow_conditional)
{
	if (conditional)
		*conditional = false;
	if (strcmp(mode, "shared") == 0)
		*lwmode = LW_SHARED;
	else if (strcmp(mode, "exclusive") == 0)
		*lwmode = LW_EXCLUSIVE;
	else if (allow_conditional && strcmp(mode, "conditional") == 0)
	{
		*lwmode = LW_EXCLUSIVE;
		*conditional = true;
	}
	else if (allow_conditional)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid lock mode \"%s\"", mode),
				 errhint("Valid modes are \"shared\", \"exclusive\" and \"conditional\".")));
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid lock mode \"%s\"", mode),
				 errhint("Valid modes are \"shared\" and \"exclusive\".")));
}

/*
 * lockstat_test_lwlock(mode text, n int, hold_us int, busy bool)
 *	  returns bigint
 *
 * Acquires and releases the "lockstat_test" LWLock n times in mode 'shared',
 * 'exclusive' or 'conditional' (LWLockConditionalAcquire, exclusive),
 * holding it hold_us microseconds each time (at most 1 s): asleep, or with
 * busy, busy-waiting on the clock, so that the hold is hold_us to within a
 * clock read (bench/ceiling.sh's lock of known hold time).  Returns the
 * number of acquisitions made, which is n except for failed conditional
 * attempts.  Errors: 22023 for an unknown mode, a negative n or hold_us out
 * of range; 55000 if not preloaded.
 */
Datum
lockstat_test_lwlock(PG_FUNCTION_ARGS)
{
	char	   *mode = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		n = PG_GETARG_INT32(1);
	int32		hold_us = PG_GETARG_INT32(2);
	bool		busy = PG_GETARG_BOOL(3);
	bool		conditional = false;
	LWLockMode	lwmode;
	int64		acquired = 0;

	lst_require_ready();
	lst_check_counts(n, hold_us, LST_MAX_LWLOCK_HOLD_US);

	lst_parse_mode(mode, &lwmode, &conditional, true);

	for (int32 i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();

		if (conditional)
		{
			if (!LWLockConditionalAcquire(lst_state->lock, lwmode))
				continue;
		}
		else
			LWLockAcquire(lst_state->lock, lwmode);

		if (hold_us > 0 && busy)
			lst_busy_wait(hold_us);
		else if (hold_us > 0)
			pg_usleep(hold_us);
		LWLockRelease(lst_state->lock);
		acquired++;
	}

	PG_RETURN_INT64(acquired);
}

/*
 * lockstat_test_main_lwlock(main_index int, mode text, n int) returns bigint
 *
 * Acquires and releases lock main_index of the fixed part of the main LWLock
 * array (an individual LWLock, or a partition of BufferMapping, LockManager
 * or PredicateLockManager) n times in mode 'shared' or 'exclusive', holding
 * nothing else.  Returns n.  Errors: 22023 for an index outside
 * 0 .. NUM_FIXED_LWLOCKS - 1, an unknown mode or a negative n.
 */
Datum
lockstat_test_main_lwlock(PG_FUNCTION_ARGS)
{
	int32		index = PG_GETARG_INT32(0);
	char	   *mode = text_to_cstring(PG_GETARG_TEXT_PP(1));
	int32		n = PG_GETARG_INT32(2);
	LWLockMode	lwmode;
	LWLock	   *lock;

	lst_check_counts(n, 0, 0);
	if (index < 0 || index >= NUM_FIXED_LWLOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("main_index must be between 0 and %d",
						NUM_FIXED_LWLOCKS - 1)));
	lst_parse_mode(mode, &lwmode, NULL, false);

	lock = &MainLWLockArray[index].lock;
	for (int32 i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		LWLockAcquire(lock, lwmode);
		LWLockRelease(lock);
	}

	PG_RETURN_INT64(n);
}

/*
 * lockstat_test_first_user_tranche() returns integer
 *
 * The server's LWTRANCHE_FIRST_USER_DEFINED: tranche IDs from it on are
 * those of extensions (RequestNamedLWLockTranche(), LWLockNewTrancheId()),
 * the IDs below it the server's own, which pg_wait_events lists.  Needs
 * no preloading; no errors.
 */
Datum
lockstat_test_first_user_tranche(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(LWTRANCHE_FIRST_USER_DEFINED);
}

/*
 * lockstat_test_dynamic_tranches(count int, n int) returns bigint
 *
 * Allocates count new tranche IDs with LWLockNewTrancheId(), registers them
 * in this backend as "lockstat_test_dynamic", and acquires and releases an
 * LWLock of each tranche n times in exclusive mode.  The locks live in this
 * backend's memory, which is fine for acquisitions nobody else contends.
 * Returns count * n.  Tranche IDs are never given back: each call uses up
 * count more until the server restarts.  Errors: 22023 for a negative or
 * too large count or n.
 */
Datum
lockstat_test_dynamic_tranches(PG_FUNCTION_ARGS)
{
	int32		count = PG_GETARG_INT32(0);
	int32		n = PG_GETARG_INT32(1);
	LWLock	   *lock = palloc(sizeof(LWLock));

	if (count < 0 || count > 1000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("count must be between 0 and 1000")));
	lst_check_counts(n, 0, 0);

	for (int32 t = 0; t < count; t++)
	{
		int			tranche_id = LWLockNewTrancheId();

		LWLockRegisterTranche(tranche_id, "lockstat_test_dynamic");
		LWLockInitialize(lock, tranche_id);
		for (int32 i = 0; i < n; i++)
		{
			LWLockAcquire(lock, LW_EXCLUSIVE);
			LWLockRelease(lock);
		}
	}

	pfree(lock);
	PG_RETURN_INT64((int64) count * n);
}

/*
 * lockstat_test_raise_counter(tranche_id int, value numeric) returns void
 *
 * Test-only setter: raises this backend's count of shared acquisitions of
 * the tranche to value (at most 2^64 - 1), so that tests can reach values
 * near and beyond 2^63 without 2^63 acquisitions.  Writes only into this
 * backend's own counters, through the core patch's MyLWLockStats.  Errors:
 * 55000 if pg_lockstat is not counting in this backend; 22023 if the
 * tranche has no row of its own, or if value is lower than the current
 * count (counters never go down).
 */
Datum
lockstat_test_raise_counter(PG_FUNCTION_ARGS)
{
	int32		tranche_id = PG_GETARG_INT32(0);
	char	   *valuestr = DatumGetCString(DirectFunctionCall1(numeric_out,
															   PG_GETARG_DATUM(1)));
	uint64		value;
	char	   *end;
	LWLockStatsCounters *row;

	if (MyLWLockStats == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_lockstat is not counting in this backend")));
	if (tranche_id < 0 || tranche_id >= LWLockStatsOverflowTranche)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("tranche ID %d has no row of its own", tranche_id)));

	errno = 0;
	value = strtou64(valuestr, &end, 10);
	if (errno != 0 || *end != '\0' || valuestr[0] == '-')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("value must be an integer between 0 and 18446744073709551615")));

	/* shared acquisitions that did not sleep */
	row = &MyLWLockStats[tranche_id];
	if (value < row->acquires[true][LW_SHARED])
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("counters never go down: current value is " UINT64_FORMAT,
						row->acquires[true][LW_SHARED])));
	row->acquires[true][LW_SHARED] = value;

	PG_RETURN_VOID();
}

/*
 * lockstat_test_lwlock_hold(mode text) returns bigint
 *
 * Acquires the "lockstat_test" LWLock once in mode 'shared' or 'exclusive'
 * and holds it until lockstat_test_release() is called, so that a test can
 * make others block on it for as long as it needs, whatever the machine's
 * speed.  While it holds the lock, the session shows wait_event_type and
 * wait_event "Extension" in pg_stat_activity: a test waits for that before
 * it starts the waiters, and releases only after it saw them block.
 * Returns 1.  Errors: 22023 for an unknown mode; 55000 if not preloaded;
 * 57014 (after releasing the lock) if no release came within
 * LST_MAX_RELEASE_WAIT_S seconds.
 */
Datum
lockstat_test_lwlock_hold(PG_FUNCTION_ARGS)
{
	char	   *mode = text_to_cstring(PG_GETARG_TEXT_PP(0));
	LWLockMode	lwmode;
	uint64		releases;
	instr_time	start;
	bool		timed_out = false;

	lst_require_ready();
	lst_parse_mode(mode, &lwmode, NULL, false);

	/* only releases after this count; the test waits for our wait event */
	releases = pg_atomic_read_u64(&lst_state->releases);
	INSTR_TIME_SET_CURRENT(start);

	LWLockAcquire(lst_state->lock, lwmode);
	pgstat_report_wait_start(PG_WAIT_EXTENSION);
	while (!lst_released(releases, start, LST_MAX_RELEASE_WAIT_S, &timed_out))
		pg_usleep(1000L);
	pgstat_report_wait_end();
	LWLockRelease(lst_state->lock);

	if (timed_out)
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("lockstat_test_release() was not called within %d s",
						LST_MAX_RELEASE_WAIT_S)));
	PG_RETURN_INT64(1);
}

/*
 * lockstat_test_lwlock_error(hold_us int, fatal bool) returns bigint
 *
 * Acquires the "lockstat_test" LWLock exclusively, holds it hold_us
 * microseconds (at most 1 s) and raises an error while still holding it, so
 * that the hold ends in LWLockReleaseAll(): of the transaction's abort, or
 * with fatal, of the exit of the process.  Never returns.  Errors: 22023
 * for hold_us out of range; 55000 if not preloaded; otherwise P0001
 * ("error while holding ...") as ERROR or FATAL.
 */
Datum
lockstat_test_lwlock_error(PG_FUNCTION_ARGS)
{
	int32		hold_us = PG_GETARG_INT32(0);
	bool		fatal = PG_GETARG_BOOL(1);

	lst_require_ready();
	lst_check_counts(0, hold_us, LST_MAX_LWLOCK_HOLD_US);

	LWLockAcquire(lst_state->lock, LW_EXCLUSIVE);
	if (hold_us > 0)
		pg_usleep(hold_us);
	ereport(fatal ? FATAL : ERROR,
			(errcode(ERRCODE_RAISE_EXCEPTION),
			 errmsg("error while holding the lockstat_test LWLock")));
	PG_RETURN_INT64(0);			/* not reached */
}

/*
 * lockstat_test_lwlock_nested(main_index int4, a_us int4, b_us int4,
 *							   c_us int4, lifo bool) returns void
 *
 * Nested holds: takes the test LWLock exclusively, sleeps a_us, takes lock
 * main_index of the fixed main LWLock array in shared mode, sleeps b_us,
 * then releases the inner lock (lifo) or the outer one (not lifo), sleeps
 * c_us, and releases the other.  So with lifo the test lock is held at least
 * a + b + c us and the inner one b; without, a + b and b + c.  Each sleep
 * is at most 1 s.  Errors: 22023 for a bad argument; 55000 if not
 * preloaded.
 */
Datum
lockstat_test_lwlock_nested(PG_FUNCTION_ARGS)
{
	int32		index = PG_GETARG_INT32(0);
	int32		a_us = PG_GETARG_INT32(1);
	int32		b_us = PG_GETARG_INT32(2);
	int32		c_us = PG_GETARG_INT32(3);
	bool		lifo = PG_GETARG_BOOL(4);
	LWLock	   *inner;

	lst_require_ready();
	lst_check_counts(0, a_us, LST_MAX_LWLOCK_HOLD_US);
	lst_check_counts(0, b_us, LST_MAX_LWLOCK_HOLD_US);
	lst_check_counts(0, c_us, LST_MAX_LWLOCK_HOLD_US);
	if (index < 0 || index >= NUM_FIXED_LWLOCKS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("main_index must be between 0 and %d",
						NUM_FIXED_LWLOCKS - 1)));
	inner = &MainLWLockArray[index].lock;

	LWLockAcquire(lst_state->lock, LW_EXCLUSIVE);
	pg_usleep(a_us);
	LWLockAcquire(inner, LW_SHARED);
	pg_usleep(b_us);
	LWLockRelease(lifo ? inner : lst_state->lock);
	pg_usleep(c_us);
	LWLockRelease(lifo ? lst_state->lock : inner);

	PG_RETURN_VOID();
}

/*
 * lockstat_test_lwlock_disown(mode text, hold_us int4) returns bigint
 *
 * Takes the test LWLock in mode 'shared' or 'exclusive', holds it hold_us
 * microseconds (at most 1 s), then gives up its ownership with
 * LWLockDisown(), as PostgreSQL 18's asynchronous I/O does for a buffer's
 * content lock that another process may release.  The lock stays held:
 * the session then shows wait event "Extension", as
 * lockstat_test_lwlock_hold() does, until lockstat_test_release() is
 * called, and only then releases it with LWLockReleaseDisowned().  So a
 * test can look at the counters while the disowned lock is still held.
 * Returns 1.  Errors: 0A000 before PostgreSQL 18, which has no
 * LWLockDisown(); 22023 for a bad argument; 55000 if not preloaded; 57014
 * (after releasing the lock) if no release came within
 * LST_MAX_RELEASE_WAIT_S seconds.
 */
Datum
lockstat_test_lwlock_disown(PG_FUNCTION_ARGS)
{
#if PG_VERSION_NUM >= 180000
	char	   *mode = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		hold_us = PG_GETARG_INT32(1);
	LWLockMode	lwmode;
	uint64		releases;
	instr_time	start;
	bool		timed_out = false;

	lst_require_ready();
	lst_check_counts(0, hold_us, LST_MAX_LWLOCK_HOLD_US);
	lst_parse_mode(mode, &lwmode, NULL, false);

	releases = pg_atomic_read_u64(&lst_state->releases);
	INSTR_TIME_SET_CURRENT(start);

	LWLockAcquire(lst_state->lock, lwmode);
	pg_usleep(hold_us);
	LWLockDisown(lst_state->lock);

	/*
	 * Nothing below may raise an error before the release: the lock is no
	 * longer in this process's list of held locks, so an abort would not
	 * release it.
	 */
	pgstat_report_wait_start(PG_WAIT_EXTENSION);
	while (!lst_released(releases, start, LST_MAX_RELEASE_WAIT_S, &timed_out))
		pg_usleep(1000L);
	pgstat_report_wait_end();
	LWLockReleaseDisowned(lst_state->lock, lwmode);

	if (timed_out)
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("lockstat_test_release() was not called within %d s",
						LST_MAX_RELEASE_WAIT_S)));
	PG_RETURN_INT64(1);
#else
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("LWLockDisown() needs PostgreSQL 18 or later")));
	PG_RETURN_NULL();			/* keep the compiler quiet */
#endif
}
