/*-------------------------------------------------------------------------
 *
 * lockstat_core.c
 *	  The link to the core patch, and the settings the counter modules read
 *
 * lockstat_link_core() looks up each of the core patch's counting points,
 * hooks and spin settings by name (dlsym()) when the library is preloaded,
 * after checking the patch's LWLockStatsVersion and LWLockStatsRowSize, so
 * that this library never links against the patch's symbols.  On a server
 * without the patch (or with an incompatible version of it), lockstat_core
 * points at stand-ins whose variables are our own, so that the GUCs can be
 * bound to its variables either way, and lockstat_inactive_reason says why
 * counting is inactive.
 *
 * The variables of pg_lockstat's own GUCs are here too: lockstat_guc.c
 * defines the GUCs, and the counter modules read the values.  This file
 * calls nothing in the others.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_core.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <dlfcn.h>

#include "miscadmin.h"

#include "lockstat.h"

/* GUC variables of our own; the spin settings are the core's variables */
bool		lockstat_track = true;
int			lockstat_max_tranches = 128;
int			lockstat_max_spin_sites = 16;
int			lockstat_max_query_entries = 5000;
int			lockstat_hold_sample_every = LOCKSTAT_HOLD_SAMPLE_EVERY_DEFAULT;

/*
 * The stand-ins for the core patch's variables while counting is inactive:
 * the GUCs are bound to them, and nothing reads them.
 */
static int	inactive_spin_settings[6];
static LWLockStatsCounters *inactive_counters;
static int	inactive_overflow_tranche;
static bool inactive_main_array_rows;
static lwlock_stats_attach_hook_type inactive_attach_hook;
static lwlock_stats_wait_hook_type inactive_wait_hook;
static lwlock_stats_wake_hook_type inactive_wake_hook;
static uint32 inactive_hold_every;
static lwlock_stats_hold_hook_type inactive_hold_hook;
static spin_stats_site_hook_type inactive_spin_site_hook;

/* the stand-in's setter: the value is kept, and times nothing */
static void
inactive_set_hold_every(uint32 every)
{
	inactive_hold_every = every;
}

static const LockStatCoreLink lockstat_inactive_core = {
	.version = 0,
	.spin_strategy = &inactive_spin_settings[0],
	.spin_min_spins_per_delay = &inactive_spin_settings[1],
	.spin_max_spins_per_delay = &inactive_spin_settings[2],
	.spin_min_delay_usec = &inactive_spin_settings[3],
	.spin_max_delay_usec = &inactive_spin_settings[4],
	.spin_backoff_max_pauses = &inactive_spin_settings[5],
	.my_lwlock_stats = &inactive_counters,
	.overflow_tranche = &inactive_overflow_tranche,
	.main_array_rows = &inactive_main_array_rows,
	.attach_hook = &inactive_attach_hook,
	.wait_hook = &inactive_wait_hook,
	.wake_hook = &inactive_wake_hook,
	.hold_every = &inactive_hold_every,
	.set_hold_every = inactive_set_hold_every,
	.hold_hook = &inactive_hold_hook,
	.delay_hook = NULL,
	.spin_site_hook = &inactive_spin_site_hook,
};

/* the core patch's points, once all were found */
static LockStatCoreLink lockstat_linked_core;

const LockStatCoreLink *lockstat_core = &lockstat_inactive_core;
const char *lockstat_inactive_reason = NULL;

/*
 * The text of lockstat_inactive_reason: static, since children of the
 * postmaster free the memory contexts of its start-up.
 */
static char lockstat_inactive_reason_buf[256];

/*
 * The address of the server's symbol "name", or NULL, with the reason in
 * lockstat_inactive_reason_buf.
 */
static void *
lockstat_core_symbol(const char *name)
{
	void	   *addr = NULL;

#ifdef RTLD_DEFAULT
	addr = dlsym(RTLD_DEFAULT, name);
#endif
	if (addr == NULL && lockstat_linked_core.version == 0)
		snprintf(lockstat_inactive_reason_buf,
				 sizeof(lockstat_inactive_reason_buf),
				 "The running server was built without the pg_lockstat core patch: it does not export the symbol \"%s\".",
				 name);
	else if (addr == NULL)
		snprintf(lockstat_inactive_reason_buf,
				 sizeof(lockstat_inactive_reason_buf),
				 "The server's core patch (version %d) does not export the symbol \"%s\", which this pg_lockstat library uses.",
				 lockstat_linked_core.version, name);
	return addr;
}

/*
 * Check the core patch's version and counter row size: the reason why this
 * library cannot use it, in lockstat_inactive_reason_buf, or true.
 */
static bool
lockstat_core_compatible(void)
{
	const int  *version;
	const Size *row_size;

	if ((version = lockstat_core_symbol("LWLockStatsVersion")) == NULL ||
		(row_size = lockstat_core_symbol("LWLockStatsRowSize")) == NULL)
		return false;
	if (*version != LWLOCK_STATS_VERSION)
		snprintf(lockstat_inactive_reason_buf,
				 sizeof(lockstat_inactive_reason_buf),
				 "The server has core patch version %d, but this pg_lockstat library was built for version %d.",
				 *version, LWLOCK_STATS_VERSION);
	else if (*row_size != sizeof(LWLockStatsCounters))
		snprintf(lockstat_inactive_reason_buf,
				 sizeof(lockstat_inactive_reason_buf),
				 "The server's core patch (version %d) has LWLock counter rows of %zu bytes, but this pg_lockstat library was built for rows of %zu bytes.",
				 *version, *row_size, sizeof(LWLockStatsCounters));
	else
	{
		lockstat_linked_core.version = *version;
		return true;
	}
	return false;
}

/*
 * Look up the core patch's counting points by name, after checking its
 * version and row size.  If any is missing or the patch does not match,
 * counting stays inactive: lockstat_inactive_reason says why, and the
 * postmaster logs it once as a WARNING with SQLSTATE 55000 (an EXEC_BACKEND
 * child loads the library again, silently).
 */
void
lockstat_link_core(void)
{
	LockStatCoreLink *c = &lockstat_linked_core;

	if (lockstat_core_compatible())
	{
#define LOOKUP(field, symbol) \
		(c->field = lockstat_core_symbol(symbol)) != NULL
		if (LOOKUP(spin_strategy, "spin_strategy") &&
			LOOKUP(spin_min_spins_per_delay, "spin_min_spins_per_delay") &&
			LOOKUP(spin_max_spins_per_delay, "spin_max_spins_per_delay") &&
			LOOKUP(spin_min_delay_usec, "spin_min_delay_usec") &&
			LOOKUP(spin_max_delay_usec, "spin_max_delay_usec") &&
			LOOKUP(spin_backoff_max_pauses, "spin_backoff_max_pauses") &&
			LOOKUP(my_lwlock_stats, "MyLWLockStats") &&
			LOOKUP(overflow_tranche, "LWLockStatsOverflowTranche") &&
			LOOKUP(main_array_rows, "LWLockStatsMainArrayRows") &&
			LOOKUP(attach_hook, "lwlock_stats_attach_hook") &&
			LOOKUP(wait_hook, "lwlock_stats_wait_hook") &&
			LOOKUP(wake_hook, "lwlock_stats_wake_hook") &&
			LOOKUP(hold_every, "LWLockStatsHoldEvery") &&
			LOOKUP(set_hold_every, "LWLockStatsSetHoldEvery") &&
			LOOKUP(hold_hook, "lwlock_stats_hold_hook") &&
			LOOKUP(spin_site_hook, "spin_stats_site_hook"))
		{
#ifdef RTLD_DEFAULT
			/* optional: a server without it runs no delay experiment */
			c->delay_hook = dlsym(RTLD_DEFAULT, "lwlock_stats_delay_hook");
#endif
			lockstat_core = c;
			return;
		}
#undef LOOKUP
	}
	lockstat_inactive_reason = lockstat_inactive_reason_buf;

	if (!IsUnderPostmaster)
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_lockstat is inactive: the server lacks a compatible pg_lockstat core patch"),
				 errdetail_internal("%s", lockstat_inactive_reason),
				 errhint("%s", LOCKSTAT_CORE_PATCH_HINT)));
}
