/*-------------------------------------------------------------------------
 *
 * lockstat_delay.c
 *	  Delay injection: a known busy-wait inside every hold of one LWLock
 *	  tranche, or, as its control, just before each acquisition
 *
 * A causal experiment on a lock: make its holds longer by d and measure
 * how throughput responds, against a control that spends the same d just
 * before the acquisition, without the lock held, which costs the same CPU
 * and serializes nothing.  pg_lockstat.delay_tranche names the tranche,
 * pg_lockstat.delay_us gives d and pg_lockstat.delay_mode says where
 * ('inside' or 'before').  While all are set, the core patch's
 * lwlock_stats_delay_hook is ours: the core calls it around every
 * acquisition of every lock (each takes the core's checked path while it is
 * set), and it busy-waits on the clock when the lock is of the tranche and
 * the call is the one of the mode.  Unset, the hook is NULL and costs
 * nothing (the checked path tests one more pointer).
 *
 * Each process counts the delays it injected, with plain stores, in a slot
 * of its own (indexed by ProcNumber); a process that takes over a slot
 * goes on from the count there, so the sum over the slots is the number of
 * delays since the server started (pg_lockstat_status.injected_delays; not
 * reset by pg_lockstat_reset(), compare two readings).
 *
 * Whether a lock is of the tranche is decided once per tranche ID and
 * process, by name (GetLWLockIdentifier()), and kept in two bitmaps.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_delay.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/wait_event.h"

#include "lockstat.h"
#include "lockstat_compat.h"

/* tranche IDs are uint16 */
#define LOCKSTAT_DELAY_TRANCHES		65536

/* the shortest delay, in microseconds: about two clock reads */
#define LOCKSTAT_DELAY_MIN_US		0.1
#define LOCKSTAT_DELAY_MAX_US		1000.0

typedef enum LockStatDelayMode
{
	LOCKSTAT_DELAY_INSIDE,		/* after the acquisition, the lock held */
	LOCKSTAT_DELAY_BEFORE,		/* before it: the control */
} LockStatDelayMode;

static const struct config_enum_entry delay_mode_options[] = {
	{"inside", LOCKSTAT_DELAY_INSIDE, false},
	{"before", LOCKSTAT_DELAY_BEFORE, false},
	{NULL, 0, false}
};

/* the settings */
static char *lockstat_delay_tranche = NULL;
static double lockstat_delay_us = 0;
static int	lockstat_delay_mode = LOCKSTAT_DELAY_INSIDE;

/* per process slot, delays injected since server start */
static uint64 *lockstat_delay_counts = NULL;

/* the hook's settings, set by lockstat_delay_configure() */
static bool delay_inside;
static uint64 delay_ns;

/* per tranche ID: decided, and of the tranche (process memory) */
static uint8 *delay_known = NULL;
static uint8 *delay_match = NULL;

static void lockstat_delay_hook(LWLock *lock, bool held);
static bool lockstat_check_delay_tranche(char **newval, void **extra,
										 GucSource source);
static bool lockstat_check_delay_us(double *newval, void **extra,
									GucSource source);
static void lockstat_assign_delay_tranche(const char *newval, void *extra);
static void lockstat_assign_delay_us(double newval, void *extra);
static void lockstat_assign_delay_mode(int newval, void *extra);

/*
 * Shared memory of the per-process delay counts: one uint64 per process
 * slot.  Called from shmem_request_hook and shmem_startup_hook.
 */
static Size
lockstat_delay_shmem_size(void)
{
	return mul_size(lockstat_process_slots(), sizeof(uint64));
}

void
lockstat_delay_shmem_request(void)
{
	RequestAddinShmemSpace(lockstat_delay_shmem_size());
}

void
lockstat_delay_shmem_startup(void)
{
	bool		found;

	lockstat_delay_counts = ShmemInitStruct("pg_lockstat delays",
											lockstat_delay_shmem_size(),
											&found);
	if (!found)
		memset(lockstat_delay_counts, 0, lockstat_delay_shmem_size());
}

/*
 * Whether tranche ID "tranche" is pg_lockstat.delay_tranche in this
 * process: decided by name the first time, then from the bitmaps.
 */
static inline bool
lockstat_delay_is_tranche(uint16 tranche)
{
	uint8		bit = (uint8) (1 << (tranche & 7));

	if (unlikely(!(delay_known[tranche >> 3] & bit)))
	{
		const char *name = GetLWLockIdentifier(PG_WAIT_LWLOCK, tranche);

		if (name != NULL && lockstat_delay_tranche != NULL &&
			strcmp(name, lockstat_delay_tranche) == 0)
			delay_match[tranche >> 3] |= bit;
		delay_known[tranche >> 3] |= bit;
	}
	return (delay_match[tranche >> 3] & bit) != 0;
}

/*
 * lwlock_stats_delay_hook: before an acquisition (held = false) and once
 * the lock is held (held = true), busy-wait pg_lockstat.delay_us if the
 * lock is of pg_lockstat.delay_tranche and this is the call of
 * pg_lockstat.delay_mode, and count it.  No locks, no allocation, no
 * errors.
 */
static void
lockstat_delay_hook(LWLock *lock, bool held)
{
	instr_time	start;
	instr_time	now;
	int			slot;

	if (held != delay_inside || !lockstat_delay_is_tranche(lock->tranche))
		return;

	INSTR_TIME_SET_CURRENT(start);
	do
	{
		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
	} while (INSTR_TIME_GET_NANOSEC(now) < delay_ns);

	slot = lockstat_my_proc_number();
	if (slot >= 0 && slot < lockstat_process_slots() &&
		lockstat_delay_counts != NULL)
		lockstat_delay_counts[slot]++;
}

/*
 * Set or clear the core's delay hook from the three settings (given, since
 * an assign hook runs before its variable changes), in this process: set
 * while the tranche is not empty and the delay not 0, on a server whose
 * core patch has the delay point.
 */
static void
lockstat_delay_configure(const char *tranche, double us, int mode)
{
	bool		on = tranche != NULL && tranche[0] != '\0' && us > 0;

	if (lockstat_core->delay_hook == NULL)
		return;
	if (on && delay_known == NULL)
	{
		delay_known = MemoryContextAllocZero(TopMemoryContext,
											 LOCKSTAT_DELAY_TRANCHES / 8);
		delay_match = MemoryContextAllocZero(TopMemoryContext,
											 LOCKSTAT_DELAY_TRANCHES / 8);
	}
	else if (delay_known != NULL)
	{
		/* the tranche may have changed: decide each ID again */
		memset(delay_known, 0, LOCKSTAT_DELAY_TRANCHES / 8);
		memset(delay_match, 0, LOCKSTAT_DELAY_TRANCHES / 8);
	}
	delay_inside = (mode == LOCKSTAT_DELAY_INSIDE);
	delay_ns = (uint64) (us * 1000.0 + 0.5);
	*lockstat_core->delay_hook = on ? lockstat_delay_hook : NULL;
	/* have the next acquisition take the checked path, which sees the hook */
	lockstat_core->set_hold_every(*lockstat_core->hold_every);
}

/*
 * The delays injected since the server started, summed over the process
 * slots; 0 before shared memory is set up.
 */
uint64
lockstat_delays_injected(void)
{
	uint64		total = 0;

	if (lockstat_delay_counts == NULL)
		return 0;
	for (int i = 0; i < lockstat_process_slots(); i++)
		total += lockstat_delay_counts[i];
	return total;
}

/*
 * Define pg_lockstat.delay_tranche, delay_us and delay_mode: reloadable
 * (PGC_SIGHUP), so that every process of an experiment injects the same
 * delay; set with ALTER SYSTEM and pg_reload_conf().  Called by
 * lockstat_define_gucs().
 */
void
lockstat_define_delay_gucs(void)
{
	DefineCustomStringVariable("pg_lockstat.delay_tranche",
							   "LWLock tranche whose holds pg_lockstat.delay_us lengthens.",
							   "An LWLock tranche as pg_lwlock_stats.tranche names it; empty turns delays off.  LWLocks only: a spinlock's holder must not wait.",
							   &lockstat_delay_tranche,
							   "",
							   PGC_SIGHUP,
							   0,
							   lockstat_check_delay_tranche,
							   lockstat_assign_delay_tranche,
							   NULL);
	DefineCustomRealVariable("pg_lockstat.delay_us",
							 "Busy-wait injected at each acquisition of pg_lockstat.delay_tranche, in microseconds.",
							 "0 turns delays off; otherwise 0.1 to 1000.",
							 &lockstat_delay_us,
							 0, 0, LOCKSTAT_DELAY_MAX_US,
							 PGC_SIGHUP,
							 0,
							 lockstat_check_delay_us,
							 lockstat_assign_delay_us,
							 NULL);
	DefineCustomEnumVariable("pg_lockstat.delay_mode",
							 "Where the delay is spent: inside the hold, or before the acquisition (the control).",
							 NULL,
							 &lockstat_delay_mode,
							 LOCKSTAT_DELAY_INSIDE,
							 delay_mode_options,
							 PGC_SIGHUP,
							 0,
							 NULL,
							 lockstat_assign_delay_mode,
							 NULL);
}

/*
 * pg_lockstat.delay_tranche: empty, or the name of an LWLock tranche that
 * this process knows (every built-in tranche, and those of libraries that
 * registered theirs), checked once the process is up; on a server whose
 * core patch has the delay point.
 * Errors (22023, or 55000 without the delay point) as the GUC machinery
 * reports a failed check.
 */
static bool
lockstat_check_delay_tranche(char **newval, void **extra, GucSource source)
{
	const char *name = *newval;

	if (name == NULL || name[0] == '\0')
		return true;
	if (lockstat_core->delay_hook == NULL)
	{
		GUC_check_errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE);
		GUC_check_errdetail("The running server's core patch has no LWLock delay point (lwlock_stats_delay_hook).");
		return false;
	}
	/*
	 * Only a process that is up knows every tranche: the postmaster knows
	 * the built-in ones only, and a child that restores the postmaster's
	 * settings at start-up (EXEC_BACKEND) does so before the named tranches
	 * are known.  The names are checked where a value is given (ALTER
	 * SYSTEM) and where a running process reloads.
	 */
	if (!IsUnderPostmaster || !IsNormalProcessingMode())
		return true;
	for (int id = 0; id < LOCKSTAT_DELAY_TRANCHES; id++)
	{
		const char *known = GetLWLockIdentifier(PG_WAIT_LWLOCK, (uint16) id);

		if (known != NULL && strcmp(known, name) == 0 &&
			strcmp(known, "extension") != 0)
			return true;
	}
	GUC_check_errcode(ERRCODE_INVALID_PARAMETER_VALUE);
	GUC_check_errmsg("unknown LWLock tranche \"%s\"", name);
	GUC_check_errdetail("pg_lockstat.delay_tranche names an LWLock tranche, as pg_lwlock_stats.tranche shows it.");
	GUC_check_errhint("Only LWLocks can be delayed: a spinlock's holder must not wait.");
	return false;
}

/* pg_lockstat.delay_us: 0, or LOCKSTAT_DELAY_MIN_US to LOCKSTAT_DELAY_MAX_US */
static bool
lockstat_check_delay_us(double *newval, void **extra, GucSource source)
{
	if (*newval == 0 || *newval >= LOCKSTAT_DELAY_MIN_US)
		return true;
	GUC_check_errdetail("pg_lockstat.delay_us must be 0 or between %g and %g.",
						LOCKSTAT_DELAY_MIN_US, LOCKSTAT_DELAY_MAX_US);
	return false;
}

static void
lockstat_assign_delay_tranche(const char *newval, void *extra)
{
	lockstat_delay_configure(newval, lockstat_delay_us, lockstat_delay_mode);
}

static void
lockstat_assign_delay_us(double newval, void *extra)
{
	lockstat_delay_configure(lockstat_delay_tranche, newval,
							 lockstat_delay_mode);
}

static void
lockstat_assign_delay_mode(int newval, void *extra)
{
	lockstat_delay_configure(lockstat_delay_tranche, lockstat_delay_us,
							 newval);
}
