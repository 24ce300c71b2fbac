/*-------------------------------------------------------------------------
 *
 * pg_lockstat.c
 *	  Start-up, GUCs and the link to the core patch for pg_lockstat
 *
 * pg_lockstat must be loaded with shared_preload_libraries into a server
 * built with the pg_lockstat core patch (patches/pg18).  The patch adds
 * counting points to lwlock.c and a run-time spin strategy to s_lock.c, and
 * exports a version symbol.  This library does not link against those
 * symbols: it looks them up by name when it is preloaded, so that a server
 * without the patch fails with a message naming the patch instead of a
 * dynamic-linker "undefined symbol" error.
 *
 * When loaded any other way (LOAD, or CREATE EXTENSION on a server that does
 * not preload it), _PG_init returns quietly and every SQL function reports
 * that the library must be preloaded.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/pg_lockstat.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <dlfcn.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/s_lock.h"
#include "utils/guc.h"

#include "pg_lockstat.h"

PG_MODULE_MAGIC_EXT(
					.name = "pg_lockstat",
					.version = "1.0"
);

/* Values of pg_lockstat.spin_strategy; same order as SpinStrategy. */
static const struct config_enum_entry spin_strategy_options[] = {
	{"default", SPIN_STRATEGY_DEFAULT, false},
	{"tas", SPIN_STRATEGY_TAS, false},
	{"ttas_spin", SPIN_STRATEGY_TTAS_SPIN, false},
	{"ttas", SPIN_STRATEGY_TTAS, false},
	{"ttas_backoff", SPIN_STRATEGY_TTAS_BACKOFF, false},
	{NULL, 0, false}
};

/* GUC variables */
int			lockstat_spin_strategy = SPIN_STRATEGY_DEFAULT;
bool		lockstat_track = true;
int			lockstat_max_tranches = 256;
int			lockstat_min_spins_per_delay = DEFAULT_MIN_SPINS_PER_DELAY;
int			lockstat_max_spins_per_delay = DEFAULT_MAX_SPINS_PER_DELAY;
int			lockstat_min_delay_us = DEFAULT_MIN_DELAY_USEC;
int			lockstat_max_delay_us = DEFAULT_MAX_DELAY_USEC;
int			lockstat_backoff_max_pauses = DEFAULT_BACKOFF_MAX_PAUSES;
int			lockstat_max_spin_sites = 32;

/*
 * True while _PG_init defines the parameters.  The check hooks that compare
 * a minimum with its maximum stand aside then, because the values arrive in
 * definition order; _PG_init checks the pairs once all are defined.
 */
static bool lockstat_defining = false;

LockStatCore lockstat_core;

/* Saved hook values */
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static lwlock_stats_attach_hook_type prev_lwlock_stats_attach_hook = NULL;
static lwlock_stats_wait_hook_type prev_lwlock_stats_wait_hook = NULL;

static void lockstat_link_core(void);
static void *lockstat_core_symbol(const char *name);
static char *lockstat_placeholder_value(const char *name);
static void lockstat_check_setting(const char *name, const char *value);
static void lockstat_assign_spin_strategy(int newval, void *extra);
static void lockstat_assign_track(bool newval, void *extra);
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
static void lockstat_assign_min_spins(int newval, void *extra);
static void lockstat_assign_max_spins(int newval, void *extra);
static void lockstat_assign_min_delay(int newval, void *extra);
static void lockstat_assign_max_delay(int newval, void *extra);
static void lockstat_assign_backoff(int newval, void *extra);
static void lockstat_require_pair(const char *min_name, int min_value,
								  const char *max_name, int max_value);
static void lockstat_shmem_request_hook(void);
static void lockstat_shmem_startup_hook(void);
static void lockstat_attach_hook(void);
static void lockstat_wait_hook(LWLock *lock, uint64 wait_ns);

/*
 * Module load callback
 */
void
_PG_init(void)
{
	char	   *spin_strategy_setting;
	char	   *max_tranches_setting;
	char	   *max_spin_sites_setting;

	/*
	 * Counting needs shared memory sized at postmaster start and the core
	 * hooks set in every process, so do nothing unless preloaded.  The SQL
	 * functions then fail with a hint (see lockstat_require_ready()).
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	/* Fail now, with a clear message, if the server lacks the core patch. */
	lockstat_link_core();

	/* values given before the parameters exist; checked after defining */
	spin_strategy_setting = lockstat_placeholder_value("pg_lockstat.spin_strategy");
	max_tranches_setting = lockstat_placeholder_value("pg_lockstat.max_tranches");
	max_spin_sites_setting = lockstat_placeholder_value("pg_lockstat.max_spin_sites");

	lockstat_defining = true;

	DefineCustomEnumVariable("pg_lockstat.spin_strategy",
							 "Selects the spinlock acquisition strategy used by S_LOCK() and s_lock().",
							 "default is the build's own TAS() and TAS_SPIN(); "
							 "tas issues the atomic test-and-set on every attempt; "
							 "ttas_spin adds the unlocked test while spinning; "
							 "ttas adds it before every attempt, the first one included; "
							 "ttas_backoff is ttas with a bounded exponential backoff between attempts.",
							 &lockstat_spin_strategy,
							 SPIN_STRATEGY_DEFAULT,
							 spin_strategy_options,
							 PGC_POSTMASTER,
							 0,
							 NULL,
							 lockstat_assign_spin_strategy,
							 NULL);

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

	DefineCustomIntVariable("pg_lockstat.max_tranches",
							"Sets the number of LWLock tranche IDs counted separately.",
							"Tranche IDs at or above this value are counted together in one overflow row.",
							&lockstat_max_tranches,
							256,
							LWTRANCHE_FIRST_USER_DEFINED,
							LOCKSTAT_MAX_TRANCHES,
							PGC_POSTMASTER,
							0,
							NULL,
							NULL,
							NULL);

	DefineCustomIntVariable("pg_lockstat.min_spins_per_delay",
							"Sets the lower bound of the adaptive number of spins between spin delays.",
							"Formerly MIN_SPINS_PER_DELAY in s_lock.c.",
							&lockstat_min_spins_per_delay,
							DEFAULT_MIN_SPINS_PER_DELAY,
							1, LOCKSTAT_MAX_SPINS,
							PGC_SIGHUP,
							0,
							lockstat_check_min_spins,
							lockstat_assign_min_spins,
							NULL);

	DefineCustomIntVariable("pg_lockstat.max_spins_per_delay",
							"Sets the upper bound of the adaptive number of spins between spin delays.",
							"Formerly MAX_SPINS_PER_DELAY in s_lock.c.",
							&lockstat_max_spins_per_delay,
							DEFAULT_MAX_SPINS_PER_DELAY,
							1, LOCKSTAT_MAX_SPINS,
							PGC_SIGHUP,
							0,
							lockstat_check_max_spins,
							lockstat_assign_max_spins,
							NULL);

	DefineCustomIntVariable("pg_lockstat.min_delay_us",
							"Sets the first sleep of a contended spin wait.",
							"Formerly MIN_DELAY_USEC in s_lock.c.",
							&lockstat_min_delay_us,
							DEFAULT_MIN_DELAY_USEC,
							1, LOCKSTAT_MAX_DELAY_US,
							PGC_SIGHUP,
							0,
							lockstat_check_min_delay,
							lockstat_assign_min_delay,
							NULL);

	DefineCustomIntVariable("pg_lockstat.max_delay_us",
							"Sets the longest sleep of a contended spin wait before it starts again from the first.",
							"Formerly MAX_DELAY_USEC in s_lock.c.",
							&lockstat_max_delay_us,
							DEFAULT_MAX_DELAY_USEC,
							1, LOCKSTAT_MAX_DELAY_US,
							PGC_SIGHUP,
							0,
							lockstat_check_max_delay,
							lockstat_assign_max_delay,
							NULL);

	DefineCustomIntVariable("pg_lockstat.backoff_max_pauses",
							"Sets the cap of the exponential backoff of spin_strategy ttas_backoff, in spin delay instructions.",
							NULL,
							&lockstat_backoff_max_pauses,
							DEFAULT_BACKOFF_MAX_PAUSES,
							1, LOCKSTAT_MAX_BACKOFF_PAUSES,
							PGC_SIGHUP,
							0,
							NULL,
							lockstat_assign_backoff,
							NULL);

	DefineCustomIntVariable("pg_lockstat.max_spin_sites",
							"Sets the number of spin wait call sites counted per process.",
							"Waits at further call sites are counted only as dropped.",
							&lockstat_max_spin_sites,
							32,
							1, LOCKSTAT_MAX_SPIN_SITES,
							PGC_POSTMASTER,
							0,
							NULL,
							NULL,
							NULL);

	MarkGUCPrefixReserved("pg_lockstat");

	lockstat_defining = false;
	lockstat_require_pair("pg_lockstat.min_spins_per_delay",
						  lockstat_min_spins_per_delay,
						  "pg_lockstat.max_spins_per_delay",
						  lockstat_max_spins_per_delay);
	lockstat_require_pair("pg_lockstat.min_delay_us", lockstat_min_delay_us,
						  "pg_lockstat.max_delay_us", lockstat_max_delay_us);

	lockstat_check_setting("pg_lockstat.spin_strategy", spin_strategy_setting);
	lockstat_check_setting("pg_lockstat.max_tranches", max_tranches_setting);
	lockstat_check_setting("pg_lockstat.max_spin_sites", max_spin_sites_setting);

	/*
	 * Tranche IDs at or above max_tranches go to the overflow row.  The core
	 * stores each LWLock's row when the lock is initialized, so this must be
	 * set before shared memory and its LWLocks are created, in every process
	 * that loads the library (EXEC_BACKEND children included).
	 */
	*lockstat_core.overflow_tranche = lockstat_max_tranches;
	/* and each lock of the fixed main array has a row of its own after it */
	*lockstat_core.main_array_rows = true;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = lockstat_shmem_request_hook;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = lockstat_shmem_startup_hook;
	prev_lwlock_stats_attach_hook = *lockstat_core.attach_hook;
	*lockstat_core.attach_hook = lockstat_attach_hook;
	prev_lwlock_stats_wait_hook = *lockstat_core.wait_hook;
	*lockstat_core.wait_hook = lockstat_wait_hook;

	/*
	 * The call-site lookup returns a row of our own table, which the end of
	 * the wait then reports, so neither hook can be shared with another
	 * library: refuse to overwrite one.
	 */
	if (*lockstat_core.spin_site_hook != NULL ||
		*lockstat_core.spin_wait_hook != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("another library has already set spin_stats_site_hook or spin_stats_wait_hook"),
				 errhint("Remove the other spinlock statistics library from \"shared_preload_libraries\".")));
	*lockstat_core.spin_site_hook = lockstat_spin_site;
	*lockstat_core.spin_wait_hook = lockstat_spin_wait;
}

/*
 * Look up the core patch's variables by name.  Errors out (FATAL during
 * postmaster start-up) if the server was built without the patch, or with an
 * incompatible version of it.
 */
static void
lockstat_link_core(void)
{
	const int  *version;

	version = (const int *) lockstat_core_symbol("LWLockStatsCoreVersion");
	if (version == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_lockstat requires a server built with the pg_lockstat core patch"),
				 errdetail("The running server does not export the symbol \"%s\".",
						   "LWLockStatsCoreVersion"),
				 errhint("Apply patches/pg18/*.patch from pg_lockstat to the PostgreSQL source, rebuild and reinstall the server, or remove pg_lockstat from \"shared_preload_libraries\".")));

	if (*version / 100 != LOCKSTAT_CORE_MAJOR)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_lockstat core patch version mismatch"),
				 errdetail("The server has core patch version %d.%d, but this pg_lockstat library was built for version %d.x.",
						   *version / 100, *version % 100, LOCKSTAT_CORE_MAJOR),
				 errhint("Rebuild the server with the patches/pg18/*.patch of the same pg_lockstat release as the library.")));

	lockstat_core.version = version;
	lockstat_core.spin_strategy = lockstat_core_symbol("spin_strategy");
	lockstat_core.my_counters = lockstat_core_symbol("MyLWLockStats");
	lockstat_core.overflow_tranche = lockstat_core_symbol("LWLockStatsOverflowTranche");
	lockstat_core.attach_hook = lockstat_core_symbol("lwlock_stats_attach_hook");
	lockstat_core.min_spins_per_delay = lockstat_core_symbol("spin_min_spins_per_delay");
	lockstat_core.max_spins_per_delay = lockstat_core_symbol("spin_max_spins_per_delay");
	lockstat_core.min_delay_usec = lockstat_core_symbol("spin_min_delay_usec");
	lockstat_core.max_delay_usec = lockstat_core_symbol("spin_max_delay_usec");
	lockstat_core.backoff_max_pauses = lockstat_core_symbol("spin_backoff_max_pauses");
	lockstat_core.wait_hook = lockstat_core_symbol("lwlock_stats_wait_hook");
	lockstat_core.main_array_rows = lockstat_core_symbol("LWLockStatsMainArrayRows");
	lockstat_core.spin_site_hook = lockstat_core_symbol("spin_stats_site_hook");
	lockstat_core.spin_wait_hook = lockstat_core_symbol("spin_stats_wait_hook");

	if (lockstat_core.spin_strategy == NULL ||
		lockstat_core.min_spins_per_delay == NULL ||
		lockstat_core.max_spins_per_delay == NULL ||
		lockstat_core.min_delay_usec == NULL ||
		lockstat_core.max_delay_usec == NULL ||
		lockstat_core.backoff_max_pauses == NULL ||
		lockstat_core.wait_hook == NULL ||
		lockstat_core.main_array_rows == NULL ||
		lockstat_core.spin_site_hook == NULL ||
		lockstat_core.spin_wait_hook == NULL ||
		lockstat_core.my_counters == NULL ||
		lockstat_core.overflow_tranche == NULL ||
		lockstat_core.attach_hook == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_lockstat core patch is incomplete"),
				 errdetail("The server exports \"%s\" but not all of the patch's variables.",
						   "LWLockStatsCoreVersion"),
				 errhint("Rebuild the server from a clean source tree with patches/pg18/*.patch applied.")));
}

/*
 * Address of a global of the running server, or NULL if there is none.
 */
static void *
lockstat_core_symbol(const char *name)
{
#ifdef RTLD_DEFAULT
	return dlsym(RTLD_DEFAULT, name);
#else
	return NULL;
#endif
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
 * pg_lockstat.spin_strategy is PGC_POSTMASTER, so this runs at start-up in
 * the postmaster (and again in each child of an EXEC_BACKEND build).
 */
static void
lockstat_assign_spin_strategy(int newval, void *extra)
{
	if (lockstat_core.spin_strategy)
		*lockstat_core.spin_strategy = newval;
}

/*
 * A minimum may not exceed its maximum.  Each check compares the new value
 * with the other parameter's value in force, so moving both limits past
 * each other takes two steps (README).  Errors: the GUC machinery reports
 * the refusal (22023 for SET-like commands, a log line on reload) and keeps
 * the old value.
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
								lockstat_max_spins_per_delay, true);
}

static bool
lockstat_check_max_spins(int *newval, void **extra, GucSource source)
{
	return lockstat_check_limit("pg_lockstat.max_spins_per_delay", *newval,
								"pg_lockstat.min_spins_per_delay",
								lockstat_min_spins_per_delay, false);
}

static bool
lockstat_check_min_delay(int *newval, void **extra, GucSource source)
{
	return lockstat_check_limit("pg_lockstat.min_delay_us", *newval,
								"pg_lockstat.max_delay_us",
								lockstat_max_delay_us, true);
}

static bool
lockstat_check_max_delay(int *newval, void **extra, GucSource source)
{
	return lockstat_check_limit("pg_lockstat.max_delay_us", *newval,
								"pg_lockstat.min_delay_us",
								lockstat_min_delay_us, false);
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
 * The assign hooks of the spin limits write the core's variables, which
 * s_lock.c reads on its contended path.  The check hooks keep every pair
 * ordered at every step, so the core never sees a minimum above its
 * maximum.
 */
static void
lockstat_assign_min_spins(int newval, void *extra)
{
	if (lockstat_core.min_spins_per_delay)
		*lockstat_core.min_spins_per_delay = newval;
}

static void
lockstat_assign_max_spins(int newval, void *extra)
{
	if (lockstat_core.max_spins_per_delay)
		*lockstat_core.max_spins_per_delay = newval;
}

static void
lockstat_assign_min_delay(int newval, void *extra)
{
	if (lockstat_core.min_delay_usec)
		*lockstat_core.min_delay_usec = newval;
}

static void
lockstat_assign_max_delay(int newval, void *extra)
{
	if (lockstat_core.max_delay_usec)
		*lockstat_core.max_delay_usec = newval;
}

static void
lockstat_assign_backoff(int newval, void *extra)
{
	if (lockstat_core.backoff_max_pauses)
		*lockstat_core.backoff_max_pauses = newval;
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
}

/* shmem_request_hook: see lockstat_shmem_request() */
static void
lockstat_shmem_request_hook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	lockstat_shmem_request();
}

/* shmem_startup_hook: see lockstat_shmem_startup() */
static void
lockstat_shmem_startup_hook(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	lockstat_shmem_startup();
}

/*
 * Called by InitLWLockAccess() once the process has its PGPROC.
 */
static void
lockstat_attach_hook(void)
{
	if (prev_lwlock_stats_attach_hook)
		prev_lwlock_stats_attach_hook();

	lockstat_attach_process();
}

/*
 * Called by the core after each timed sleep on an LWLock while this process
 * counts: adds the sleep to the distribution of its tranche.
 */
static void
lockstat_wait_hook(LWLock *lock, uint64 wait_ns)
{
	if (prev_lwlock_stats_wait_hook)
		prev_lwlock_stats_wait_hook(lock, wait_ns);

	lockstat_record_wait(lock->stats_row, wait_ns);
}
