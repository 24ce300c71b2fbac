/*-------------------------------------------------------------------------
 *
 * pg_lockstat.c
 *	  Start-up, GUCs, and the life cycle of the counters in each process
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
 * (lockstat_spin.c) and the blocked calls per query (lockstat_query.c).
 * Each has a request, start-up, attach and detach step, and this file's
 * hooks call all three.  It defines the GUCs; their variables, and the link
 * to the core patch, are in lockstat_core.c, which the counter modules
 * read.  Nothing calls back into this file.
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

/* Values of pg_lockstat.spin_strategy; same order as SpinStrategy. */
static const struct config_enum_entry spin_strategy_options[] = {
	{"default", SPIN_STRATEGY_DEFAULT, false},
	{"tas", SPIN_STRATEGY_TAS, false},
	{"ttas_spin", SPIN_STRATEGY_TTAS_SPIN, false},
	{"ttas", SPIN_STRATEGY_TTAS, false},
	{"ttas_backoff", SPIN_STRATEGY_TTAS_BACKOFF, false},
	{NULL, 0, false}
};

/*
 * True while _PG_init defines the parameters.  The check hooks that compare
 * a minimum with its maximum stand aside then, because the values arrive in
 * definition order; _PG_init checks the pairs once all are defined.
 */
static bool lockstat_defining = false;

/* Saved hook values */
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static lwlock_stats_attach_hook_type prev_lwlock_stats_attach_hook = NULL;
static lwlock_stats_wait_hook_type prev_lwlock_stats_wait_hook = NULL;
static lwlock_stats_hold_hook_type prev_lwlock_stats_hold_hook = NULL;
static lwlock_stats_wake_hook_type prev_lwlock_stats_wake_hook = NULL;

static void lockstat_define_spin_gucs(void);
static void lockstat_define_counting_gucs(void);
static void lockstat_install_hooks(void);
static char *lockstat_placeholder_value(const char *name);
static void lockstat_check_setting(const char *name, const char *value);
static void lockstat_assign_track(bool newval, void *extra);
static void lockstat_assign_hold_sample_every(int newval, void *extra);
static bool lockstat_check_limit(const char *name, int value,
								 const char *other_name, int other_value,
								 bool is_minimum);
static bool lockstat_check_min_spins(int *newval, void **extra,
									 GucSource source);
static bool lockstat_check_max_spins(int *newval, void **extra,
									 GucSource source);
static bool lockstat_check_min_delay(int *newval, void **extra,
									 GucSource source);
static bool lockstat_check_max_delay(int *newval, void **extra,
									 GucSource source);
static void lockstat_require_pair(const char *min_name, int min_value,
								  const char *max_name, int max_value);
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
	char	   *spin_strategy_setting;
	char	   *max_tranches_setting;
	char	   *max_spin_sites_setting;
	char	   *max_query_entries_setting;

	/*
	 * Counting needs shared memory sized at postmaster start and the core
	 * hooks set in every process, so do nothing unless preloaded.  The SQL
	 * functions then fail with a hint (see lockstat_views.c).
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	/* Find the core patch; warn and stay inactive without it. */
	lockstat_link_core();

	/* values given before the parameters exist; checked after defining */
	spin_strategy_setting = lockstat_placeholder_value("pg_lockstat.spin_strategy");
	max_tranches_setting = lockstat_placeholder_value("pg_lockstat.max_tranches");
	max_spin_sites_setting = lockstat_placeholder_value("pg_lockstat.max_spin_sites");
	max_query_entries_setting = lockstat_placeholder_value("pg_lockstat.max_query_entries");

	lockstat_defining = true;
	lockstat_define_spin_gucs();
	lockstat_define_counting_gucs();
	MarkGUCPrefixReserved("pg_lockstat");
	lockstat_defining = false;

	lockstat_require_pair("pg_lockstat.min_spins_per_delay",
						  *lockstat_core->spin_min_spins_per_delay,
						  "pg_lockstat.max_spins_per_delay",
						  *lockstat_core->spin_max_spins_per_delay);
	lockstat_require_pair("pg_lockstat.min_delay_us",
						  *lockstat_core->spin_min_delay_usec,
						  "pg_lockstat.max_delay_us",
						  *lockstat_core->spin_max_delay_usec);

	lockstat_check_setting("pg_lockstat.spin_strategy", spin_strategy_setting);
	lockstat_check_setting("pg_lockstat.max_tranches", max_tranches_setting);
	lockstat_check_setting("pg_lockstat.max_spin_sites", max_spin_sites_setting);
	lockstat_check_setting("pg_lockstat.max_query_entries", max_query_entries_setting);

	if (lockstat_inactive_reason == NULL)
		lockstat_install_hooks();
}

/*
 * The spin strategy and the spin-and-sleep limits, bound to the core's
 * variables in s_lock.c, which s_lock() reads: the GUC machinery sets them
 * directly, at start-up, on reload and in EXEC_BACKEND children.
 */
static void
lockstat_define_spin_gucs(void)
{
	DefineCustomEnumVariable("pg_lockstat.spin_strategy",
							 "Selects the spinlock acquisition strategy used by S_LOCK() and s_lock().",
							 "default is the build's own TAS() and TAS_SPIN(); "
							 "tas issues the atomic test-and-set on every attempt; "
							 "ttas_spin adds the unlocked test while spinning; "
							 "ttas adds it before every attempt, the first one included; "
							 "ttas_backoff is ttas with a bounded exponential backoff between attempts.",
							 lockstat_core->spin_strategy,
							 SPIN_STRATEGY_DEFAULT,
							 spin_strategy_options,
							 PGC_POSTMASTER,
							 0,
							 NULL, NULL, NULL);

	DefineCustomIntVariable("pg_lockstat.min_spins_per_delay",
							"Sets the lower bound of the adaptive number of spins between spin delays.",
							"Formerly MIN_SPINS_PER_DELAY in s_lock.c.",
							lockstat_core->spin_min_spins_per_delay,
							DEFAULT_MIN_SPINS_PER_DELAY,
							1, LOCKSTAT_MAX_SPINS,
							PGC_SIGHUP,
							0,
							lockstat_check_min_spins, NULL, NULL);

	DefineCustomIntVariable("pg_lockstat.max_spins_per_delay",
							"Sets the upper bound of the adaptive number of spins between spin delays.",
							"Formerly MAX_SPINS_PER_DELAY in s_lock.c.",
							lockstat_core->spin_max_spins_per_delay,
							DEFAULT_MAX_SPINS_PER_DELAY,
							1, LOCKSTAT_MAX_SPINS,
							PGC_SIGHUP,
							0,
							lockstat_check_max_spins, NULL, NULL);

	DefineCustomIntVariable("pg_lockstat.min_delay_us",
							"Sets the first sleep of a contended spin wait.",
							"Formerly MIN_DELAY_USEC in s_lock.c.",
							lockstat_core->spin_min_delay_usec,
							DEFAULT_MIN_DELAY_USEC,
							1, LOCKSTAT_MAX_DELAY_US,
							PGC_SIGHUP,
							0,
							lockstat_check_min_delay, NULL, NULL);

	DefineCustomIntVariable("pg_lockstat.max_delay_us",
							"Sets the longest sleep of a contended spin wait before it starts again from the first.",
							"Formerly MAX_DELAY_USEC in s_lock.c.",
							lockstat_core->spin_max_delay_usec,
							DEFAULT_MAX_DELAY_USEC,
							1, LOCKSTAT_MAX_DELAY_US,
							PGC_SIGHUP,
							0,
							lockstat_check_max_delay, NULL, NULL);

	DefineCustomIntVariable("pg_lockstat.backoff_max_pauses",
							"Sets the cap of the exponential backoff of spin_strategy ttas_backoff, in spin delay instructions.",
							NULL,
							lockstat_core->spin_backoff_max_pauses,
							DEFAULT_BACKOFF_MAX_PAUSES,
							1, LOCKSTAT_MAX_BACKOFF_PAUSES,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);
}

/* What is counted, and the sizes of the counter tables. */
static void
lockstat_define_counting_gucs(void)
{
	DefineCustomBoolVariable("pg_lockstat.track",
							 "Counts LWLock acquisitions, blocks, spin delays and wait time.",
							 NULL,
							 &lockstat_track,
							 true,
							 PGC_SUSET,
							 0,
							 NULL,
							 lockstat_assign_track,
							 NULL);

	DefineCustomIntVariable("pg_lockstat.hold_sample_every",
							"Times one in this many LWLock holds of each process.",
							"Sampled holds are counted in ex_hold_samples and sh_hold_samples, with their hold time. 0 turns sampling off.",
							&lockstat_hold_sample_every,
							LOCKSTAT_HOLD_SAMPLE_EVERY_DEFAULT,
							0, INT_MAX,
							PGC_SUSET,
							0,
							NULL,
							lockstat_assign_hold_sample_every,
							NULL);

	DefineCustomIntVariable("pg_lockstat.max_tranches",
							"Sets the number of LWLock tranche IDs counted separately.",
							"Tranche IDs at or above this value are counted together in one overflow row.",
							&lockstat_max_tranches,
							128,
							LWTRANCHE_FIRST_USER_DEFINED,
							LOCKSTAT_MAX_TRANCHES,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("pg_lockstat.max_spin_sites",
							"Sets the number of spin wait call sites counted per process.",
							"Waits at further call sites are counted only as dropped.",
							&lockstat_max_spin_sites,
							16,
							1, LOCKSTAT_MAX_SPIN_SITES,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("pg_lockstat.max_query_entries",
							"Sets the number of (query, database, role, tranche) entries kept in pg_lwlock_query_stats.",
							"When the table is full, the least-waited entries are evicted into the residual row of their tranche.",
							&lockstat_max_query_entries,
							5000,
							1, LOCKSTAT_MAX_QUERY_ENTRIES,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
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

/*
 * The value that postgresql.conf or the command line gave a parameter of
 * ours before it was defined, held by the GUC placeholder; NULL if none.
 */
static char *
lockstat_placeholder_value(const char *name)
{
	const char *value = GetConfigOption(name, true, false);

	return value ? pstrdup(value) : NULL;
}

/*
 * Refuse to start with an invalid value for a postmaster parameter.  When a
 * placeholder is converted by DefineCustom*Variable(), an invalid value only
 * draws a WARNING and the default silently stays in force; for a setting
 * that decides the spin strategy or the size of shared memory that would be
 * a wrong result with no visible cause.  Validating the value again with
 * elevel ERROR (FATAL in the postmaster) reports it with the GUC machinery's
 * own message and hint, e.g. the list of valid enum values.
 */
static void
lockstat_check_setting(const char *name, const char *value)
{
	if (value == NULL)
		return;
	(void) set_config_option(name, value, PGC_POSTMASTER, PGC_S_FILE,
							 GUC_ACTION_SET, false, ERROR, false);
}

/*
 * A minimum may not exceed its maximum.  Each check compares the new value
 * with the other parameter's value in force, so moving both limits past
 * each other takes two steps (doc/reference.md, "GUCs").  Errors: the GUC
 * machinery reports the refusal (22023 for SET-like commands, a log line on
 * reload) and keeps the old value.
 */
static bool
lockstat_check_limit(const char *name, int value,
					 const char *other_name, int other_value,
					 bool is_minimum)
{
	if (lockstat_defining)
		return true;
	if (is_minimum ? value <= other_value : value >= other_value)
		return true;

	GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
	if (is_minimum)
		GUC_check_errdetail("\"%s\" (%d) must not be greater than \"%s\" (%d).",
							name, value, other_name, other_value);
	else
		GUC_check_errdetail("\"%s\" (%d) must not be less than \"%s\" (%d).",
							name, value, other_name, other_value);
	GUC_check_errhint("To move both limits past each other, change \"%s\" first and reload, then \"%s\".",
					  other_name, name);
	return false;
}

static bool
lockstat_check_min_spins(int *newval, void **extra, GucSource source)
{
	return lockstat_check_limit("pg_lockstat.min_spins_per_delay", *newval,
								"pg_lockstat.max_spins_per_delay",
								*lockstat_core->spin_max_spins_per_delay, true);
}

static bool
lockstat_check_max_spins(int *newval, void **extra, GucSource source)
{
	return lockstat_check_limit("pg_lockstat.max_spins_per_delay", *newval,
								"pg_lockstat.min_spins_per_delay",
								*lockstat_core->spin_min_spins_per_delay, false);
}

static bool
lockstat_check_min_delay(int *newval, void **extra, GucSource source)
{
	return lockstat_check_limit("pg_lockstat.min_delay_us", *newval,
								"pg_lockstat.max_delay_us",
								*lockstat_core->spin_max_delay_usec, true);
}

static bool
lockstat_check_max_delay(int *newval, void **extra, GucSource source)
{
	return lockstat_check_limit("pg_lockstat.max_delay_us", *newval,
								"pg_lockstat.min_delay_us",
								*lockstat_core->spin_min_delay_usec, false);
}

/*
 * At start-up, when the check hooks stood aside: refuse a minimum above its
 * maximum.  Errors: 22023 (FATAL in the postmaster).
 */
static void
lockstat_require_pair(const char *min_name, int min_value,
					  const char *max_name, int max_value)
{
	if (min_value > max_value)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("\"%s\" must not be greater than \"%s\"",
						min_name, max_name),
				 errdetail("\"%s\" is %d and \"%s\" is %d.",
						   min_name, min_value, max_name, max_value)));
}

/*
 * pg_lockstat.track: start or stop counting in this process at once.
 */
static void
lockstat_assign_track(bool newval, void *extra)
{
	/* the GUC variable is updated after this hook returns */
	lockstat_track = newval;
	lockstat_track_changed();
	/* blocked calls left uncounted when counting stopped stay uncounted */
	lockstat_query_forget_waits();
}

/*
 * pg_lockstat.hold_sample_every: the core times one in this many of the
 * process's acquisitions, counting down from the moment the value changed,
 * so that the process's samples are exactly its acquisitions since then
 * divided by the value.  A reload that leaves the value as it was keeps the
 * countdown running.  0 starts no sample; holds already being timed are
 * still counted when they end.
 */
static void
lockstat_assign_hold_sample_every(int newval, void *extra)
{
	if (*lockstat_core->hold_every == (uint32) newval)
		return;
	lockstat_core->set_hold_every((uint32) newval);
}

/* shmem_request_hook: MaxBackends is known here, unlike in _PG_init */
static void
lockstat_shmem_request_hook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	lockstat_lwlock_shmem_request();
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
	lockstat_spin_shmem_startup();
	lockstat_query_shmem_startup();
	LWLockRelease(AddinShmemInitLock);

	/*
	 * In an EXEC_BACKEND child of 15, InitProcess() calls InitLWLockAccess(),
	 * and so our attach hook, before it attaches to shared memory structures
	 * and runs this hook: the attach hook found no shared state then.  Attach
	 * now if the kind of process is known, which it is for client backends;
	 * the others set it later, and the core patch calls the attach hook
	 * again from BaseInit(), once it is.  (With fork(), the state is
	 * inherited and the hook attached; on 18, an EXEC_BACKEND child attaches
	 * to shared memory before InitProcess(), with its kind set.)
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
