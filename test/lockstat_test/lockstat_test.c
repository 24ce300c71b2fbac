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
 * This file has the shared memory, the spin-wait hook and the functions
 * that take the test spinlock; the LWLock functions are in
 * lockstat_test_lwlock.c, the rendezvous on the test spinlock in
 * lockstat_test_rendezvous.c (lockstat_test.h).
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
#include "storage/ipc.h"
#include "storage/shmem.h"

#include "lockstat_compat.h"
#include "lockstat_test.h"

LOCKSTAT_MODULE_MAGIC("lockstat_test", "1.0");

LockStatTestState *lst_state = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* pg_lockstat's spin_stats_site_hook, which ours wraps; NULL if none */
static spin_stats_site_hook_type prev_spin_site_hook = NULL;

PG_FUNCTION_INFO_V1(lockstat_test_spinlock);
PG_FUNCTION_INFO_V1(lockstat_test_spin_counter);
PG_FUNCTION_INFO_V1(lockstat_test_spinlock_churn);
PG_FUNCTION_INFO_V1(lockstat_test_release);
PG_FUNCTION_INFO_V1(lockstat_test_spinlock_hold);
PG_FUNCTION_INFO_V1(lockstat_test_spin_waits);
PG_FUNCTION_INFO_V1(lockstat_test_spin_sites);

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
		pg_atomic_init_u64(&lst_state->rdv_arrivals, 0);
		pg_atomic_init_u64(&lst_state->rdv_held, 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

/*
 * spin_stats_site_hook, wrapping pg_lockstat's: counts the contended waits
 * for the test spinlock (every wait at a call site of this file or of
 * lockstat_test_rendezvous.c, the only files that take it) as they begin, so that a test can tell that a waiter is inside s_lock(), on every
 * major (PostgreSQL 15 reports no wait event while a spin wait sleeps).
 * Runs at a wait's first spin, while the process holds no spinlock: one
 * 32-bit atomic add (never emulated with a spinlock), no lock, no error.
 * Then returns what pg_lockstat returns, so that the wait is counted (or
 * not) just as without us.
 */
static SpinWaitCounters *
lst_spin_site(const char *file, int line, const char *func)
{
	if (lst_state != NULL && file != NULL &&
		(strcmp(file, __FILE__) == 0 || strcmp(file, lst_rendezvous_file) == 0))
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

/*
 * Errors: 55000 if lockstat_test is not preloaded.
 */
void
lst_require_ready(void)
{
	if (lst_state == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lockstat_test must be loaded via \"shared_preload_libraries\"")));
}

/*
 * Errors: 55000 if lockstat_test is not preloaded, or if pg_lockstat was
 * not preloaded before it: lst_spin_site() counts the waits for the test
 * spinlock only then.
 */
void
lst_require_spin_waits(void)
{
	lst_require_ready();
	if (prev_spin_site_hook == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("lockstat_test counts spin waits only if pg_lockstat is loaded before it"),
				 errhint("List \"pg_lockstat\" before \"lockstat_test\" in \"shared_preload_libraries\".")));
}

/*
 * Longest spinlock hold allowed, in microseconds: waiters for a spinlock
 * PANIC with "stuck spinlock" after a few minutes, so the test functions
 * refuse holds that could crash the server.  LWLock holds are bounded by
 * LST_MAX_LWLOCK_HOLD_US (lockstat_test.h), since their waiters cannot be
 * cancelled.
 */
#define LST_MAX_SPINLOCK_HOLD_US	1000

/*
 * The same for lockstat_test_spinlock_hold(), which holds the test spinlock
 * all along: well under the minute after which its waiters PANIC with
 * "stuck spinlock" (SPIN_STUCK_MIN_USEC in s_lock.c), since they start their
 * minute when they first sleep, after the hold began.
 */
#define LST_MAX_SPIN_RELEASE_WAIT_S	30

/*
 * Errors: 22023 for a negative n, or hold_us outside 0 .. max_hold_us.
 */
void
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
 * Busy-wait for hold_us microseconds, read from the monotonic clock: no
 * system call while a spinlock is held, and an LWLock hold of a length
 * known to within a clock read.
 */
void
lst_busy_wait(int32 hold_us)
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
 * lockstat_test_spinlock(n int, hold_us int) returns bigint
 *
 * Acquires and releases the test spinlock n times, holding it hold_us
 * microseconds each time (at most 1 ms, busy-waiting).  Returns n.  Errors:
 * 22023 for a negative n or hold_us out of range; 55000 if not preloaded.
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
			lst_busy_wait(hold_us);
		SpinLockRelease(&lst_state->mutex);
	}

	PG_RETURN_INT64(n);
}

/*
 * lockstat_test_spin_counter() returns bigint
 *
 * The number of times lockstat_test_spinlock(), lockstat_test_spinlock_churn()
 * and lockstat_test_spinlock_hold() took the test spinlock since server
 * start, read under the spinlock: a spin strategy that let two processes in
 * at once would lose increments.  Errors: 55000 if not preloaded.
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
 * Have more than max_wait_s seconds passed since start?  Reads only the
 * clock (clock_gettime(), which the vDSO serves without a system call on
 * Linux, as in lst_busy_wait()), so that it can run under the test
 * spinlock.
 */
bool
lst_timed_out(instr_time start, int max_wait_s)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	return INSTR_TIME_GET_MICROSEC(now) > (int64) max_wait_s * 1000000;
}

/*
 * Has lockstat_test_release() been called since *releases was read?  Also
 * true, with *timed_out set, once max_wait_s seconds have passed since
 * start.  Reads only an atomic and the clock, so that it can run under the
 * test spinlock.
 */
bool
lst_released(uint64 releases, instr_time start, int max_wait_s,
			 bool *timed_out)
{
	if (pg_atomic_read_u64(&lst_state->releases) != releases)
		return true;
	*timed_out = lst_timed_out(start, max_wait_s);
	return *timed_out;
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
			lst_busy_wait(hold_us);
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
 * this module: lockstat_test.c and lockstat_test_rendezvous.c) that have begun since server start, in every process, each
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
	lst_require_spin_waits();
	PG_RETURN_INT64((int64) pg_atomic_read_u32(&lst_state->spin_waits));
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
