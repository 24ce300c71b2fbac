/*-------------------------------------------------------------------------
 *
 * lockstat_core.c
 *	  The link to the core patch, and the settings the counter modules read
 *
 * The core patch exports one struct, LockStatsCore, with the addresses of
 * its counting points, hooks and spin settings.  lockstat_link_core() looks
 * it up by name when the library is preloaded, so that this library never
 * links against the patch's symbols.  On a server without the patch (or
 * with an incompatible version of it), lockstat_core is a stand-in whose
 * variables are our own, so that the GUCs can be bound to its variables
 * either way, and lockstat_inactive_reason says why counting is inactive.
 *
 * The variables of pg_lockstat's own GUCs are here too: pg_lockstat.c
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
 * The core patch's interface, or, on a server without it, a stand-in whose
 * variables are our own, so that the GUCs can be bound to its variables
 * either way.  lockstat_inactive_reason is NULL while counting is possible.
 */
static int	inactive_spin_settings[6];
static LWLockStatsCounters *inactive_counters;
static int	inactive_overflow_tranche;
static bool inactive_main_array_rows;
static lwlock_stats_attach_hook_type inactive_attach_hook;
static lwlock_stats_wait_hook_type inactive_wait_hook;
static spin_stats_site_hook_type inactive_spin_site_hook;
static uint32 inactive_hold_every;
static lwlock_stats_hold_hook_type inactive_hold_hook;
static lwlock_stats_wake_hook_type inactive_wake_hook;

/* the stand-in's setter: the value is kept, and times nothing */
static void
inactive_set_hold_every(uint32 every)
{
	inactive_hold_every = every;
}

static const LockStatsCoreInterface lockstat_inactive_core = {
	.version = 0,
	.size = sizeof(LockStatsCoreInterface),
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
	.spin_site_hook = &inactive_spin_site_hook,
	.hold_every = &inactive_hold_every,
	.set_hold_every = inactive_set_hold_every,
	.hold_hook = &inactive_hold_hook,
	.wake_hook = &inactive_wake_hook,
};

const LockStatsCoreInterface *lockstat_core = &lockstat_inactive_core;
const char *lockstat_inactive_reason = NULL;

/*
 * The text of lockstat_inactive_reason: static, since children of the
 * postmaster free the memory contexts of its start-up.
 */
static char lockstat_inactive_reason_buf[256];

/*
 * Look up the core patch's interface, LockStatsCore, and check its version
 * and size.  Without it, with a version of another major, or with an
 * interface shorter than this library's (a series without some of the
 * counting points that this library uses), counting stays inactive:
 * lockstat_inactive_reason says why, and the postmaster logs it once as a
 * WARNING (an EXEC_BACKEND child loads the library again, silently).
 */
void
lockstat_link_core(void)
{
	const LockStatsCoreInterface *core = NULL;

#ifdef RTLD_DEFAULT
	core = (const LockStatsCoreInterface *) dlsym(RTLD_DEFAULT, "LockStatsCore");
#endif

	if (core == NULL)
		snprintf(lockstat_inactive_reason_buf,
				 sizeof(lockstat_inactive_reason_buf),
				 "The running server was built without the pg_lockstat core patch: it does not export the symbol \"%s\".",
				 "LockStatsCore");
	else if (core->version / 100 != LOCK_STATS_CORE_VERSION / 100)
		snprintf(lockstat_inactive_reason_buf,
				 sizeof(lockstat_inactive_reason_buf),
				 "The server has core patch version %d.%d, but this pg_lockstat library was built for version %d.x.",
				 core->version / 100, core->version % 100,
				 LOCK_STATS_CORE_VERSION / 100);
	else if (core->size < sizeof(LockStatsCoreInterface))
		snprintf(lockstat_inactive_reason_buf,
				 sizeof(lockstat_inactive_reason_buf),
				 "The server's core patch (version %d.%d) lacks counting points that this pg_lockstat library uses: its interface has %zu bytes, this library needs %zu.",
				 core->version / 100, core->version % 100,
				 core->size, sizeof(LockStatsCoreInterface));
	else
	{
		lockstat_core = core;
		return;
	}
	lockstat_inactive_reason = lockstat_inactive_reason_buf;

	if (!IsUnderPostmaster)
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_lockstat is inactive: the server lacks a compatible pg_lockstat core patch"),
				 errdetail_internal("%s", lockstat_inactive_reason),
				 errhint("%s", LOCKSTAT_CORE_PATCH_HINT)));
}
