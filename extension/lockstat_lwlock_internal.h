/*-------------------------------------------------------------------------
 *
 * lockstat_lwlock_internal.h
 *	  The shared counter array's structures, for the files that keep its
 *	  parts: lockstat_lwlock.c (layout, process slots and their owners),
 *	  lockstat_lwlock_sum.c (sums and the reset baseline) and
 *	  lockstat_hist.c (the distributions and the hold table)
 *
 * The layout and the locking rules of the array are in lockstat_lwlock.c's
 * header; those of the reset, in lockstat_reset.c's.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_lwlock_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef LOCKSTAT_LWLOCK_INTERNAL_H
#define LOCKSTAT_LWLOCK_INTERNAL_H

#include "lockstat.h"

typedef struct LockStatSharedState
{
	LWLock	   *lock;			/* protects baseline and stats_reset */
	LWLock	   *exit_lock;		/* held by exiting processes; see
								 * lockstat_lwlock.c */
	uint64		exit_count;		/* odd while a process folds its rows */
	int			num_slots;		/* process slots (ProcNumbers) */
	int			num_rows;		/* rows per slot */
	Size		slot_stride;	/* bytes between two process slots */
	TimestampTz stats_reset;	/* time of the last reset, or of start-up */
	int			wait_half;		/* the half of wait_hist readers read */
	pg_atomic_uint64 *wait_hist;	/* 2 halves, one for even and one for odd
									 * per-query generations, each of
									 * LOCKSTAT_NUM_HISTS distributions of
									 * num_rows * LOCKSTAT_WAIT_BUCKETS
									 * counts, then num_rows maxima */
	LockStatTrancheTotals *baseline;	/* LOCKSTAT_NUM_KINDS * num_rows */
	LockStatTrancheTotals *exited;	/* LOCKSTAT_NUM_KINDS * num_rows: folded
									 * by exited processes */
	pg_atomic_uint64 *holds;	/* 2 halves like wait_hist's, each of
								 * LOCKSTAT_NUM_KINDS * num_rows entries of
								 * LOCKSTAT_HOLD_WORDS counts */
	char	   *slots;			/* num_slots * slot_stride bytes */
	struct LockStatSlotOwner *owners;	/* num_slots records */
} LockStatSharedState;

/*
 * Who counts into a process slot.  See the locking rules of
 * lockstat_lwlock.c.
 */
typedef struct LockStatSlotOwner
{
	uint32		changecount;	/* odd while the owner writes the record */
	int			pid;			/* the owning process; 0 if none */
	int			kind;			/* its kind (lockstat_kind_of()), set before
								 * pid */
	BackendType backend_type;	/* its MyBackendType */
	char		bgw_type[BGW_MAXLEN];	/* a background worker's bgw_type */
} LockStatSlotOwner;

/* links to shared memory state; set in every process by shmem startup */
extern LockStatSharedState *lockstat_state;

/* this process's rows, whether or not tracking is on; NULL if none */
extern LWLockStatsCounters *lockstat_my_rows;

/* this process's kind (lockstat_kind_of()), set when it attaches */
extern int	lockstat_my_kind;

/*
 * The counts of one entry of the shared hold table, in the order of
 * LockStatHoldRow: samples[2], then hold_ns[2].
 */
#define LOCKSTAT_HOLD_WORDS		4

/* what a slot's rows add to the hold counters: nothing */
extern const LockStatHoldRow lockstat_no_holds;

/* words of one distribution: num_rows * buckets counts, then num_rows maxima */
#define LOCKSTAT_HIST_WORDS(num_rows)	((num_rows) * (LOCKSTAT_WAIT_BUCKETS + 1))

/* words of one half of the hold table */
#define LOCKSTAT_HOLDS_HALF_WORDS(num_rows) \
	(LOCKSTAT_NUM_KINDS * (num_rows) * LOCKSTAT_HOLD_WORDS)

/* the rows of process slot "slot" */
static inline LWLockStatsCounters *
lockstat_slot_rows(int slot)
{
	return (LWLockStatsCounters *)
		(lockstat_state->slots + lockstat_state->slot_stride * slot);
}

/* lockstat_lwlock.c */
extern void lockstat_add_row(LockStatTrancheTotals *totals,
							 const volatile LWLockStatsCounters *row,
							 const volatile LockStatHoldRow *hold);

/* lockstat_hist.c */
extern void lockstat_hist_clear_half(uint64 generation);
extern void lockstat_read_holds(int half, LockStatHoldRow *holds);

#endif							/* LOCKSTAT_LWLOCK_INTERNAL_H */
