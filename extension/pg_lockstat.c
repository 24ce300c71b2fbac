/*-------------------------------------------------------------------------
 *
 * pg_lockstat.c
 *	  Start-up, hooks, and the life cycle of the counters in each process
 *
 * pg_lockstat counts when it is loaded with shared_preload_libraries into a
 * server built with the pg_lockstat core patch (patches/pg<major>).  The patch
 * adds counting points to lwlock.c and s_lock.c and a run-time spin
 * strategy.  This library does not link against the patch's symbols: it
 * looks each of them up by name when it is preloaded (lockstat_core.c).  On a server without the patch
 * (or with an incompatible version of it) the server starts all the same:
 * one WARNING at start-up says why counting is inactive, the GUCs are still
 * defined (bound to local variables, with no effect), pg_lockstat_status
 * says that counting is inactive and why, and the other views fail with
 * SQLSTATE 55000 and the same hint.
 *
 * When loaded any other way (LOAD, or CREATE EXTENSION on a server that does
 * not preload it), _PG_init returns quietly, and every SQL function reports
 * that the library must be preloaded; CREATE EXTENSION itself works, so that
 * dumps restore anywhere.
 *
 * This file drives the life cycle of the three kinds of counters, as peers:
 * the LWLock counters (lockstat_lwlock.c), the spin-wait counters
 * (lockstat_spin.c) and the blocked calls per query (lockstat_query_slots.c,
 * lockstat_query.c and lockstat_query_table.c).  Each has a request,
 * start-up, attach and detach step, and this file's hooks call all three.  lockstat_guc.c defines the GUCs; their variables,
 * and the link to the core patch, are in lockstat_core.c, which the counter
 * modules read.  Nothing calls back into this file.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/pg_lockstat.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/s_lock.h"
#include "utils/guc.h"

#include "lockstat.h"

LOCKSTAT_MODULE_MAGIC("pg_lockstat", "1.0");

/* Saved hook values */
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static lwlock_stats_attach_hook_type prev_lwlock_stats_attach_hook = NULL;
static lwlock_stats_wait_hook_type prev_lwlock_stats_wait_hook = NULL;
static lwlock_stats_hold_hook_type prev_lwlock_stats_hold_hook = NULL;
static lwlock_stats_wake_hook_type prev_lwlock_stats_wake_hook = NULL;

static void lockstat_install_hooks(void);
static void lockstat_shmem_request_hook(void);
static void lockstat_shmem_startup_hook(void);
static void lockstat_attach_hook(void);
static bool lockstat_kind_known(void);
static void lockstat_detach(int code, Datum arg);
static void lockstat_wait_hook(LWLock *lock, int stats_row, uint64 wait_ns,
							   bool done);
static void lockstat_hold_hook(int stats_row, int mode, uint64 hold_ns);
static void lockstat_wake_hook(LWLock *lock, int mode, PGPROC *waiter);

/*
 * Module load callback
 */
void
_PG_init(void)
{
	/*
	 * Counting needs shared memory sized at postmaster start and the core
	 * hooks set in every process, so do nothing unless preloaded.  The SQL
	 * functions then fail with a hint (see lockstat_srf.c).
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	/* Find the core patch; warn and stay inactive without it. */
	lockstat_link_core();

	/* Define the parameters; stop the server on an invalid value. */
	lockstat_define_gucs();

	if (lockstat_inactive_reason == NULL)
		lockstat_install_hooks();
}

/*
 * Set the core's row settings and chain our hooks; only with the core patch.
 */
static void
lockstat_install_hooks(void)
{
	/*
	 * The call-site lookup returns counters of our own, which the end of the
	 * wait then writes, so the hook cannot be shared with another library:
	 * refuse to overwrite one.  Errors: 55000 (FATAL in the postmaster).
	 */
	if (*lockstat_core->spin_site_hook != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("another library has already set spin_stats_site_hook"),
				 errhint("Remove the other spinlock statistics library from \"shared_preload_libraries\".")));

	/*
	 * Tranche IDs at or above max_tranches go to the overflow row.  The core
	 * stores each LWLock's row when the lock is initialized, so this must be
	 * set before shared memory and its LWLocks are created, in every process
	 * that loads the library (EXEC_BACKEND children included).
	 */
	*lockstat_core->overflow_tranche = lockstat_max_tranches;
	/* and each lock of the fixed main array has a row of its own after it */
	*lockstat_core->main_array_rows = true;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = lockstat_shmem_request_hook;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = lockstat_shmem_startup_hook;
	prev_lwlock_stats_attach_hook = *lockstat_core->attach_hook;
	*lockstat_core->attach_hook = lockstat_attach_hook;
	prev_lwlock_stats_wait_hook = *lockstat_core->wait_hook;
	*lockstat_core->wait_hook = lockstat_wait_hook;
	prev_lwlock_stats_hold_hook = *lockstat_core->hold_hook;
	*lockstat_core->hold_hook = lockstat_hold_hook;
	prev_lwlock_stats_wake_hook = *lockstat_core->wake_hook;
	*lockstat_core->wake_hook = lockstat_wake_hook;
	*lockstat_core->spin_site_hook = lockstat_spin_site;

	/* where processes fold their per-query tables */
	lockstat_query_init();
}

/* shmem_request_hook: MaxBackends is known here, unlike in _PG_init */
static void
lockstat_shmem_request_hook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	lockstat_lwlock_shmem_request();
	lockstat_delay_shmem_request();
	lockstat_spin_shmem_request();
	lockstat_query_shmem_request();
}

/*
 * shmem_startup_hook: create or attach to both counter tables.  Runs in the
 * postmaster, in a standalone backend, and in every child of an EXEC_BACKEND
 * build, so pointers are recomputed here rather than inherited.
 */
static void
lockstat_shmem_startup_hook(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	lockstat_lwlock_shmem_startup();
	lockstat_delay_shmem_startup();
	lockstat_spin_shmem_startup();
	lockstat_query_shmem_startup();
	LWLockRelease(AddinShmemInitLock);

	/*
	 * In an EXEC_BACKEND child of 15, InitProcess() calls InitLWLockAccess(),
	 * and so our attach hook, before it attaches to shared memory structures
	 * and runs this hook: the attach hook found no shared state then.  Attach
	 * now if the kind of process is known, which it is for client backends;
	 * the others set it later, and the core patch calls the attach hook again
	 * from BaseInit(), once it is.  (With fork(), the state is inherited and
	 * the hook attached; on 18, an EXEC_BACKEND child attaches to shared
	 * memory before InitProcess(), with its kind set.)
	 */
	if (lockstat_my_proc_number() >= 0 && lockstat_kind_known())
		lockstat_attach_hook();
}

/*
 * Is this process's kind of process (lockstat_kind_of()) set yet?  A
 * process counts under the kind it has when it attaches, which must not
 * change afterwards: MyBackendType is set, and for a background worker so
 * is MyBgworkerEntry, whose bgw_type tells a parallel worker apart.
 */
static bool
lockstat_kind_known(void)
{
	return MyBackendType != B_INVALID &&
		(MyBackendType != B_BG_WORKER || MyBgworkerEntry != NULL);
}

/*
 * Called by InitLWLockAccess() once the process has its PGPROC, and by
 * lockstat_shmem_startup_hook() in EXEC_BACKEND children: give this process
 * its counter slots and start counting.  Idempotent.
 */
static void
lockstat_attach_hook(void)
{
	static bool attached = false;

	if (prev_lwlock_stats_attach_hook)
		prev_lwlock_stats_attach_hook();

	if (attached || !lockstat_lwlock_shmem_ready() ||
		lockstat_my_proc_number() < 0)
		return;

	if (!lockstat_attach_process())
		return;
	lockstat_spin_attach(lockstat_my_proc_number());
	lockstat_query_attach(lockstat_my_proc_number());
	attached = true;

	/* runs before ProcKill, which hands our ProcNumber to the next process */
	on_shmem_exit(lockstat_detach, (Datum) 0);

	lockstat_track_changed();
}

/*
 * on_shmem_exit callback: stop counting, fold the per-query table, and give
 * up the slots.
 */
static void
lockstat_detach(int code, Datum arg)
{
	*lockstat_core->my_lwlock_stats = NULL;
	lockstat_spin_detach();
	lockstat_query_detach();
	lockstat_detach_process();
}

/*
 * Called by the core for each blocked LWLock call while this process
 * counts, never while it holds the lock it waited for: at each wake-up
 * (done false), where it takes note of who woke it; and once the call's
 * block was counted (done true: after the lock's release, or before a call
 * that did not take the lock returns), where it adds the call's wait to the
 * distribution of its tranche and counts it under the running query in
 * this process's table.
 */
static void
lockstat_wait_hook(LWLock *lock, int stats_row, uint64 wait_ns, bool done)
{
	if (prev_lwlock_stats_wait_hook)
		prev_lwlock_stats_wait_hook(lock, stats_row, wait_ns, done);

	/* nothing of ours inside a hold that others may be queued for */
	Assert(!LWLockHeldByMe(lock));

	if (!done)
		lockstat_query_note_woken(lock);
	else
	{
		/* the per-query count and the wait distribution, in one write */
		lockstat_query_record_wait(lock, stats_row, wait_ns);
	}
}

/*
 * Called by the core once per sampled LWLock hold (pg_lockstat.hold_sample_every),
 * right after the lock was released and its waiters woken, with the lock's
 * counter row and the hold time up to the release (the wake-ups not in
 * it): counts the hold and its time in this process's hold row of that
 * row, and in the hold-time distribution of the mode.
 */
static void
lockstat_hold_hook(int stats_row, int mode, uint64 hold_ns)
{
	if (prev_lwlock_stats_hold_hook)
		prev_lwlock_stats_hold_hook(stats_row, mode, hold_ns);

	lockstat_query_record_hold(stats_row, mode, hold_ns);
}

/*
 * Called by the core in a process whose release of an LWLock (held in mode
 * "mode") ends the wait of "waiter", before the waiter runs again: notes
 * this process's query, and the root of its hold, in the waiter's per-query
 * slot, where the waiter's wait hook finds them, for pg_lwlock_blockers.
 */
static void
lockstat_wake_hook(LWLock *lock, int mode, PGPROC *waiter)
{
	if (prev_lwlock_stats_wake_hook)
		prev_lwlock_stats_wake_hook(lock, mode, waiter);

	lockstat_query_note_waker(lock, waiter, mode);
}
