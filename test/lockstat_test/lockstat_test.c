/*-------------------------------------------------------------------------
 *
 * lockstat_test.c
 *	  Test-only module for pg_lockstat: an LWLock tranche and a spinlock
 *	  whose acquisitions are issued on request, so that tests can expect
 *	  exact counts
 *
 * Must be preloaded (shared_preload_libraries) to get its named tranche
 * "lockstat_test" and its shared memory.  Not installed by pg_lockstat's
 * "make install"; "make test" installs it into the test server.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  test/lockstat_test/lockstat_test.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/lwlockstats.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/builtins.h"

#include "lockstat_compat.h"

LOCKSTAT_MODULE_MAGIC("lockstat_test", "1.0");

typedef struct LockStatTestState
{
	LWLock	   *lock;			/* the one lock of tranche "lockstat_test" */
	slock_t		mutex;			/* the test spinlock */
	uint64		spin_counter;	/* incremented under mutex */
	pg_atomic_uint64 releases;	/* lockstat_test_release() calls */
	pg_atomic_uint32 spin_waits;	/* contended waits begun for mutex */
} LockStatTestState;

static LockStatTestState *lst_state = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* pg_lockstat's spin_stats_site_hook, which ours wraps; NULL if none */
static spin_stats_site_hook_type prev_spin_site_hook = NULL;

PG_FUNCTION_INFO_V1(lockstat_test_lwlock);
PG_FUNCTION_INFO_V1(lockstat_test_spinlock);
PG_FUNCTION_INFO_V1(lockstat_test_dynamic_tranches);
PG_FUNCTION_INFO_V1(lockstat_test_raise_counter);
PG_FUNCTION_INFO_V1(lockstat_test_spin_counter);
PG_FUNCTION_INFO_V1(lockstat_test_first_user_tranche);
PG_FUNCTION_INFO_V1(lockstat_test_main_lwlock);
PG_FUNCTION_INFO_V1(lockstat_test_lwlock_hold);
PG_FUNCTION_INFO_V1(lockstat_test_lwlock_error);
PG_FUNCTION_INFO_V1(lockstat_test_spinlock_churn);
PG_FUNCTION_INFO_V1(lockstat_test_release);
PG_FUNCTION_INFO_V1(lockstat_test_spinlock_hold);
PG_FUNCTION_INFO_V1(lockstat_test_spin_waits);
PG_FUNCTION_INFO_V1(lockstat_test_spin_sites);
PG_FUNCTION_INFO_V1(lockstat_test_lwlock_nested);
PG_FUNCTION_INFO_V1(lockstat_test_lwlock_disown);

static void
lst_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(LockStatTestState)));
	RequestNamedLWLockTranche("lockstat_test", 1);
}

static void
lst_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	lst_state = ShmemInitStruct("lockstat_test", sizeof(LockStatTestState),
								&found);
	if (!found)
	{
		lst_state->lock = &(GetNamedLWLockTranche("lockstat_test"))->lock;
		SpinLockInit(&lst_state->mutex);
		lst_state->spin_counter = 0;
		pg_atomic_init_u64(&lst_state->releases, 0);
		pg_atomic_init_u32(&lst_state->spin_waits, 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * spin_stats_site_hook, wrapping pg_lockstat's: counts the contended waits
 * for the test spinlock (every wait at a call site of this file) as they
 * begin, so that a test can tell that a waiter is inside s_lock(), on every
 * major (PostgreSQL 15 reports no wait event while a spin wait sleeps).
 * Runs at a wait's first spin, while the process holds no spinlock: one
 * 32-bit atomic add (never emulated with a spinlock), no lock, no error.
 * Then returns what pg_lockstat returns, so that the wait is counted (or
 * not) just as without us.
 */
static SpinWaitCounters *
lst_spin_site(const char *file, int line, const char *func)
{
	if (lst_state != NULL && file != NULL && strcmp(file, __FILE__) == 0)
		pg_atomic_fetch_add_u32(&lst_state->spin_waits, 1);
	return prev_spin_site_hook(file, line, func);
}

void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = lst_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = lst_shmem_startup;

	/*
	 * Wrap pg_lockstat's spin_stats_site_hook if it is loaded before us, as
	 * the tests preload them.  Installing a hook of our own otherwise would
	 * make a pg_lockstat loaded after us refuse to start; without it, spin
	 * waits are simply not counted here (lockstat_test_spin_waits() fails).
	 */
	if (spin_stats_site_hook != NULL)
	{
		prev_spin_site_hook = spin_stats_site_hook;
		spin_stats_site_hook = lst_spin_site;
	}
}

static void
lst_require_ready(void)
{
	if (lst_state == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lockstat_test must be loaded via \"shared_preload_libraries\"")));
}

/*
 * Longest holds allowed, in microseconds.  Waiters for an LWLock cannot be
 * cancelled, and waiters for a spinlock PANIC with "stuck spinlock" after a
 * few minutes, so the test functions refuse holds that could hang or crash
 * the server.
 */
#define LST_MAX_LWLOCK_HOLD_US		1000000
#define LST_MAX_SPINLOCK_HOLD_US	1000

/*
 * Longest wait of the hold-until-released functions for their release, in
 * seconds.  Only a bound on a test that died before it released them: a
 * holder of an LWLock cannot be cancelled, so it gives up by itself.
 */
#define LST_MAX_RELEASE_WAIT_S		600

/*
 * The same for lockstat_test_spinlock_hold(), which holds the test spinlock
 * all along: well under the minute after which its waiters PANIC with
 * "stuck spinlock" (SPIN_STUCK_MIN_USEC in s_lock.c), since they start their
 * minute when they first sleep, after the hold began.
 */
#define LST_MAX_SPIN_RELEASE_WAIT_S	30

static void lst_parse_mode(const char *mode, LWLockMode *lwmode,
						   bool *conditional, bool allow_conditional);

static void
lst_check_counts(int32 n, int32 hold_us, int32 max_hold_us)
{
	if (n < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n must not be negative")));
	if (hold_us < 0 || hold_us > max_hold_us)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("hold_us must be between 0 and %d", max_hold_us)));
}

/*
 * Busy-wait for hold_us microseconds: no system call while a spinlock is
 * held.
 */
static void
lst_spin_hold(int32 hold_us)
{
	instr_time	start;
	instr_time	now;

	INSTR_TIME_SET_CURRENT(start);
	do
	{
		SPIN_DELAY();
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
	} while (INSTR_TIME_GET_MICROSEC(now) < hold_us);
}

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
 * lockstat_test_lwlock(mode text, n int, hold_us int) returns bigint
 *
 * Acquires and releases the "lockstat_test" LWLock n times in mode 'shared',
 * 'exclusive' or 'conditional' (LWLockConditionalAcquire, exclusive),
 * holding it hold_us microseconds each time (at most 1 s).  Returns the
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

		if (hold_us > 0)
			pg_usleep(hold_us);
		LWLockRelease(lst_state->lock);
		acquired++;
	}

	PG_RETURN_INT64(acquired);
}

/*
 * lockstat_test_spinlock(n int, hold_us int) returns bigint
 *
 * Acquires and releases the test spinlock n times, holding it hold_us
 * microseconds each time (at most 1 ms, busy-waiting).  Returns n.  Errors
 * as lockstat_test_lwlock.
 */
Datum
lockstat_test_spinlock(PG_FUNCTION_ARGS)
{
	int32		n = PG_GETARG_INT32(0);
	int32		hold_us = PG_GETARG_INT32(1);

	lst_require_ready();
	lst_check_counts(n, hold_us, LST_MAX_SPINLOCK_HOLD_US);

	for (int32 i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();

		SpinLockAcquire(&lst_state->mutex);
		lst_state->spin_counter++;
		if (hold_us > 0)
			lst_spin_hold(hold_us);
		SpinLockRelease(&lst_state->mutex);
	}

	PG_RETURN_INT64(n);
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
 * lockstat_test_spin_counter() returns bigint
 *
 * The number of times lockstat_test_spinlock(), lockstat_test_spinlock_churn()
 * and lockstat_test_spinlock_hold() took the test spinlock since server
 * start, read under the spinlock: a spin strategy that let two processes in
 * at once would lose increments.  Errors as lockstat_test_lwlock.
 */
Datum
lockstat_test_spin_counter(PG_FUNCTION_ARGS)
{
	uint64		value;

	lst_require_ready();

	SpinLockAcquire(&lst_state->mutex);
	value = lst_state->spin_counter;
	SpinLockRelease(&lst_state->mutex);

	PG_RETURN_INT64((int64) value);
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
 * Has lockstat_test_release() been called since *releases was read?  Also
 * true, with *timed_out set, once max_wait_s seconds have passed since
 * start.  Reads only an atomic and the clock (clock_gettime(), which the
 * vDSO serves without a system call on Linux, as in lst_spin_hold()), so
 * that it can run under the test spinlock.
 */
static bool
lst_released(uint64 releases, instr_time start, int max_wait_s,
			 bool *timed_out)
{
	instr_time	now;

	if (pg_atomic_read_u64(&lst_state->releases) != releases)
		return true;
	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	*timed_out = INSTR_TIME_GET_MICROSEC(now) > (int64) max_wait_s * 1000000;
	return *timed_out;
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
 * lockstat_test_spinlock_churn(hold_us int) returns bigint
 *
 * Takes the test spinlock again and again, holding it hold_us microseconds
 * each time (at most 1 ms, busy-waiting), until lockstat_test_release() is
 * called: contention that lasts as long as the test needs, on any machine.
 * Each hold adds one to lockstat_test_spin_counter().  Shows
 * wait_event_type and wait_event "Extension" while it runs, set again after
 * every hold (a contended acquisition that slept reported "SpinDelay" and
 * then no wait event, from PostgreSQL 16 on) and never under the spinlock.
 * Returns the number of holds.  Errors as lockstat_test_lwlock_hold; 57014
 * also for a cancel between two holds.
 */
Datum
lockstat_test_spinlock_churn(PG_FUNCTION_ARGS)
{
	int32		hold_us = PG_GETARG_INT32(0);
	uint64		releases;
	instr_time	start;
	bool		timed_out = false;
	int64		holds = 0;

	lst_require_ready();
	lst_check_counts(0, hold_us, LST_MAX_SPINLOCK_HOLD_US);

	releases = pg_atomic_read_u64(&lst_state->releases);
	INSTR_TIME_SET_CURRENT(start);

	pgstat_report_wait_start(PG_WAIT_EXTENSION);
	while (!lst_released(releases, start, LST_MAX_RELEASE_WAIT_S, &timed_out))
	{
		CHECK_FOR_INTERRUPTS();

		SpinLockAcquire(&lst_state->mutex);
		lst_state->spin_counter++;
		if (hold_us > 0)
			lst_spin_hold(hold_us);
		SpinLockRelease(&lst_state->mutex);
		/* a spin delay of the acquisition ended our wait event */
		pgstat_report_wait_start(PG_WAIT_EXTENSION);
		holds++;
	}
	pgstat_report_wait_end();

	if (timed_out)
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("lockstat_test_release() was not called within %d s",
						LST_MAX_RELEASE_WAIT_S)));
	PG_RETURN_INT64(holds);
}

/*
 * lockstat_test_spinlock_hold() returns bigint
 *
 * Takes the test spinlock once and holds it until lockstat_test_release()
 * is called, busy-waiting (SPIN_DELAY() and a read of the release count, no
 * system call), so that every session that asks for the spinlock meanwhile
 * waits inside s_lock(), for as long as the test needs, whatever the
 * machine's speed.  Once it holds the spinlock, the session shows
 * wait_event_type and wait_event "Extension" in pg_stat_activity (a plain
 * store, made under the spinlock): a test waits for that before it starts
 * the waiters, and releases after lockstat_test_spin_waits() has counted
 * them.  Adds one to lockstat_test_spin_counter().  Cannot be cancelled
 * while it holds the spinlock.  Returns 1.  Errors: 55000 if not
 * preloaded; 57014 (after releasing the spinlock) if no release came within
 * LST_MAX_SPIN_RELEASE_WAIT_S (30) seconds, well before the waiters would
 * PANIC with "stuck spinlock".
 */
Datum
lockstat_test_spinlock_hold(PG_FUNCTION_ARGS)
{
	uint64		releases;
	instr_time	start;
	bool		timed_out = false;

	lst_require_ready();

	/* only releases after this count; the test waits for our wait event */
	releases = pg_atomic_read_u64(&lst_state->releases);
	INSTR_TIME_SET_CURRENT(start);

	SpinLockAcquire(&lst_state->mutex);
	pgstat_report_wait_start(PG_WAIT_EXTENSION);
	lst_state->spin_counter++;
	while (!lst_released(releases, start, LST_MAX_SPIN_RELEASE_WAIT_S,
						 &timed_out))
		SPIN_DELAY();
	SpinLockRelease(&lst_state->mutex);
	pgstat_report_wait_end();

	if (timed_out)
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("lockstat_test_release() was not called within %d s",
						LST_MAX_SPIN_RELEASE_WAIT_S)));
	PG_RETURN_INT64(1);
}

/*
 * lockstat_test_spin_waits() returns bigint
 *
 * The number of contended waits for the test spinlock (at any call site of
 * this module) that have begun since server start, in every process, each
 * counted at its first spin inside s_lock(), whether pg_lockstat counts it
 * or not (pg_lockstat.track = off).  A waiter for a spinlock that a
 * lockstat_test_spinlock_hold() holds is counted here before the hold ends:
 * so a test reads this before it starts the waiters, and releases once it
 * has risen by their number.  Works on every major, also where no wait event
 * shows a spinning or sleeping waiter (PostgreSQL 15).  Errors: 55000 if
 * not preloaded, or if pg_lockstat was not preloaded before lockstat_test
 * (there is no hook to count the waits with then).
 */
Datum
lockstat_test_spin_waits(PG_FUNCTION_ARGS)
{
	lst_require_ready();
	if (prev_spin_site_hook == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lockstat_test counts spin waits only if pg_lockstat is loaded before it"),
				 errhint("List \"pg_lockstat\" before \"lockstat_test\" in \"shared_preload_libraries\".")));
	PG_RETURN_INT64((int64) pg_atomic_read_u32(&lst_state->spin_waits));
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
 * lockstat_test_spin_sites(first_line int4, n int4) returns int4
 *
 * Asks pg_lockstat's spin_stats_site_hook for the counters of n call sites
 * of a file "lockstat_test_sites.c" that does not exist, at lines
 * first_line .. first_line + n - 1, as the first spin of a wait at each
 * would; no wait is added to them.  This registers the sites' names in this
 * process's table of call sites, so that a test can fill the tables with
 * more names than a reset's baseline holds.  Returns how many the hook gave
 * counters for (the others were dropped: the table was full, or
 * pg_lockstat.track is off).  Errors: 22023 for n out of 0..10000 or a line
 * that overflows; 55000 if not preloaded, or if pg_lockstat was not
 * preloaded before lockstat_test.
 */
Datum
lockstat_test_spin_sites(PG_FUNCTION_ARGS)
{
	int32		first_line = PG_GETARG_INT32(0);
	int32		n = PG_GETARG_INT32(1);
	int32		given = 0;

	lst_require_ready();
	if (prev_spin_site_hook == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lockstat_test registers spin wait call sites only if pg_lockstat is loaded before it"),
				 errhint("List \"pg_lockstat\" before \"lockstat_test\" in \"shared_preload_libraries\".")));
	if (n < 0 || n > 10000 || first_line < 1 || first_line > PG_INT32_MAX - n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("n must be between 0 and 10000, and first_line + n at most %d",
						PG_INT32_MAX)));

	for (int32 i = 0; i < n; i++)
	{
		if (prev_spin_site_hook("lockstat_test_sites.c", first_line + i,
								"lockstat_test_spin_sites") != NULL)
			given++;
	}
	PG_RETURN_INT32(given);
}

/*
 * lockstat_test_release() returns void
 *
 * Ends every lockstat_test_lwlock_hold(), lockstat_test_spinlock_hold() and
 * lockstat_test_spinlock_churn() call that started before this one.
 * Errors: 55000 if not preloaded.
 */
Datum
lockstat_test_release(PG_FUNCTION_ARGS)
{
	lst_require_ready();
	pg_atomic_fetch_add_u64(&lst_state->releases, 1);
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
