/*-------------------------------------------------------------------------
 *
 * lockstat_guc.c
 *	  The GUCs of pg_lockstat: their definitions, checks and assign hooks
 *
 * The spin strategy and the spin-and-sleep limits are bound to the core
 * patch's variables in s_lock.c (through lockstat_core); the other
 * parameters to the variables of lockstat_core.c.  The strategy, like the
 * sizes of the counter tables, is read at server start only
 * (PGC_POSTMASTER): it is set in postgresql.conf or with ALTER SYSTEM, and
 * takes effect at the next restart.  The limits and what is counted follow
 * a reload.
 *
 * _PG_init (pg_lockstat.c) calls lockstat_define_gucs() once, in the
 * postmaster, before it installs the hooks.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_guc.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "storage/s_lock.h"
#include "utils/guc.h"

#include "lockstat.h"

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
 * True while lockstat_define_gucs() defines the parameters.  The check hooks
 * that compare a minimum with its maximum stand aside then, because the
 * values arrive in definition order; the pairs are checked once all are
 * defined.
 */
static bool lockstat_defining = false;

static void lockstat_define_spin_gucs(void);
static void lockstat_define_spin_limit_gucs(void);
static void lockstat_define_counting_gucs(void);
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

/*
 * Define the parameters, then check what postgresql.conf or the command line
 * gave them.  Errors: an invalid value of a postmaster parameter, or a
 * minimum above its maximum, stops the server (FATAL in the postmaster).
 */
void
lockstat_define_gucs(void)
{
	char	   *spin_strategy_setting;
	char	   *max_tranches_setting;
	char	   *max_spin_sites_setting;
	char	   *max_query_entries_setting;

	/* values given before the parameters exist; checked after defining */
	spin_strategy_setting = lockstat_placeholder_value("pg_lockstat.spin_strategy");
	max_tranches_setting = lockstat_placeholder_value("pg_lockstat.max_tranches");
	max_spin_sites_setting = lockstat_placeholder_value("pg_lockstat.max_spin_sites");
	max_query_entries_setting = lockstat_placeholder_value("pg_lockstat.max_query_entries");

	lockstat_defining = true;
	lockstat_define_spin_gucs();
	lockstat_define_spin_limit_gucs();
	lockstat_define_counting_gucs();
	lockstat_define_delay_gucs();
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
}

/*
 * The spin strategy and its backoff cap, bound to the core's variables in
 * s_lock.c, which s_lock() reads: the GUC machinery sets them directly, at
 * start-up, on reload and in EXEC_BACKEND children.
 */
static void
lockstat_define_spin_gucs(void)
{
	DefineCustomEnumVariable("pg_lockstat.spin_strategy",
							 "Selects the spinlock acquisition strategy used by S_LOCK() and s_lock(); set at server start.",
							 "Takes effect at server start: set it in postgresql.conf or with ALTER SYSTEM, then restart. "
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

/*
 * The spin-and-sleep limits of s_lock.c, bound to the core's variables like
 * the strategy, and reloadable; a minimum may not pass its maximum.
 */
static void
lockstat_define_spin_limit_gucs(void)
{
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
