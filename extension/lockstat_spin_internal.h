/*-------------------------------------------------------------------------
 *
 * lockstat_spin_internal.h
 *	  The spin-wait site tables' structures, for the files that keep their
 *	  parts: lockstat_spin.c (shared memory, the process slots' site tables
 *	  and the hook that finds a call site's counters) and lockstat_spin_sum.c
 *	  (the sums over the slots and the reset baseline)
 *
 * The layout and the locking rules are in lockstat_spin.c's header.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_spin_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef LOCKSTAT_SPIN_INTERNAL_H
#define LOCKSTAT_SPIN_INTERNAL_H

#include "lockstat.h"

/*
 * one call site of a slot and the kind of process that waited there, as
 * the slot's owner registered it
 */
typedef struct LockStatSpinSite
{
	const char *file_ptr;		/* the owner's string addresses: its lookup
								 * key; NULL until the owner uses the entry */
	const char *func_ptr;
	int			line;
	int			kind;			/* the owner's lockstat_kind_of() */
	char		file[LOCKSTAT_SITE_NAME_LEN];
	char		func[LOCKSTAT_SITE_NAME_LEN];
} LockStatSpinSite;

/*
 * One call site's counters in one process slot: the core's, which the core
 * adds each finished wait to, then ours (see the locking rules of
 * lockstat_spin.c).
 */
typedef struct LockStatSpinCounters
{
	SpinWaitCounters core;
	uint64		started;		/* waits that began spinning */
	uint64		max_epoch;		/* reset epoch of core.max_wait_ns */
	uint64		carry_ns;		/* last wait before max_epoch began */
	uint64		carry_index;	/* its number, as core.contended counts */
} LockStatSpinCounters;

/* one process slot's table header; sites, counters, baseline follow */
typedef struct LockStatSpinSlot
{
	uint32		nsites;			/* entries registered */
	uint64		dropped;		/* waits not counted: the table was full */
} LockStatSpinSlot;

/* the header of the module's shared memory; baselines and slots follow */
typedef struct LockStatSpinState
{
	LWLock	   *lock;			/* protects the baselines */
	pg_atomic_uint64 reset_epoch;	/* resets since start; see lockstat_spin.c */
	int			num_slots;
	int			max_sites;
	Size		slot_stride;
	int			num_baselines;	/* site names in baselines */
	LockStatSpinEntry *baselines;	/* LOCKSTAT_SPIN_BASELINES(max_sites) */
	char	   *slots;
} LockStatSpinState;

/*
 * Site names that the reset baseline can hold: a reset that finds more
 * distinct names over all slots fails before it changes anything.  A
 * server has far fewer contended call sites of spinlocks than this.
 */
#define LOCKSTAT_SPIN_BASELINES(max_sites) \
	Max(LOCKSTAT_MAX_SPIN_SITES, 4 * (max_sites))

/* link to the shared state; set in every process by shmem startup */
extern LockStatSpinState *lockstat_spin_state;

/* the table's parts within a slot */
static inline LockStatSpinSite *
lockstat_spin_sites(LockStatSpinSlot *slot)
{
	return (LockStatSpinSite *) ((char *) slot +
								 MAXALIGN(sizeof(LockStatSpinSlot)));
}

static inline LockStatSpinCounters *
lockstat_spin_counters(LockStatSpinSlot *slot, int max_sites)
{
	return (LockStatSpinCounters *) ((char *) lockstat_spin_sites(slot) +
									 MAXALIGN(sizeof(LockStatSpinSite) * max_sites));
}

/* each entry's contended count at the last reset */
static inline uint64 *
lockstat_spin_base_contended(LockStatSpinSlot *slot, int max_sites)
{
	return (uint64 *) (lockstat_spin_counters(slot, max_sites) + max_sites);
}

static inline LockStatSpinSlot *
lockstat_spin_slot(int slot)
{
	return (LockStatSpinSlot *) (lockstat_spin_state->slots +
								 lockstat_spin_state->slot_stride * slot);
}

#endif							/* LOCKSTAT_SPIN_INTERNAL_H */
