/*-------------------------------------------------------------------------
 *
 * lockstat_query_internal.h
 *	  The per-query counts' shared structures, for the files that keep
 *	  them: lockstat_query_slots.c (shared memory, process tables, residual
 *	  rows), lockstat_query.c (counting from the hooks) and
 *	  lockstat_query_table.c (the shared table: folds, reads, the reset's
 *	  steps)
 *
 * The layout and the locking rules are in those files' headers; the
 * reset's, in lockstat_reset.c's.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_query_internal.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef LOCKSTAT_QUERY_INTERNAL_H
#define LOCKSTAT_QUERY_INTERNAL_H

#include "utils/hsearch.h"

#include "lockstat.h"

/*
 * Entries of a process's table, and how many of them make the process fold
 * its table at the end of its next transaction.  A statement that blocks
 * on a dozen tranches still fits, and 104 bytes an entry keep a slot small
 * (see doc/reference.md, "View pg_lwlock_query_stats").
 */
#define LOCKSTAT_QUERY_SLOT_ENTRIES	32
#define LOCKSTAT_QUERY_FOLD_AT		24

/*
 * the counters of a residual row, as atomic words, in the order of
 * LockStatQueryCounts
 */
enum
{
	RESIDUAL_BLOCKS,
	RESIDUAL_WAIT_NS,
	RESIDUAL_MAX_WAIT_NS,
	RESIDUAL_HOLD_SAMPLES,		/* two words: LW_EXCLUSIVE, LW_SHARED */
	RESIDUAL_HOLD_NS = RESIDUAL_HOLD_SAMPLES + 2,
	RESIDUAL_MAX_HOLD_NS = RESIDUAL_HOLD_NS + 2,
	RESIDUAL_WORDS = RESIDUAL_MAX_HOLD_NS + 2
};

/* one process slot's table; see lockstat_query_slots.c's locking rules */
typedef struct LockStatQuerySlot
{
	uint32		changecount;	/* odd while the owner writes */
	uint32		nused;			/* entries[0 .. nused) are in use */
	uint64		generation;		/* of the counts in entries[] */
	uint64		target_generation;	/* the generation the owner counts in from
									 * its next write: set by resets */
	uint32		resetting;		/* a reset is taking this slot's cut: the
								 * owner starts no write */
	uint64		hooked_blocks;	/* blocked calls the hook counted, and */
	uint64		hooked_wait_ns; /* their wait, since the owner attached */
	uint64		unattributed;	/* calls counted in a residual row because the
								 * table was full, since start */

	/*
	 * Who ended the owner's last sleep on an LWLock, and the root of that
	 * waker's hold (see LockStatQueryKey): written by the waker, in its
	 * lwlock_stats_wake_hook (lockstat_query_note_waker()), before it lets
	 * the owner run; read and cleared by the owner when it is woken
	 * (lockstat_query_note_woken()).  waker.kind is LOCKSTAT_HOLDER_NONE
	 * when nobody wrote since.
	 */
	LockStatHolder waker;
	LockStatHolder root;
	LockStatQueryEntry entries[LOCKSTAT_QUERY_SLOT_ENTRIES];
} LockStatQuerySlot;

typedef struct LockStatQueryState
{
	LWLock	   *lock;			/* query_lock: see lockstat_query_table.c */
	uint64		fold_count;		/* raised by every fold and reset */
	uint64		evicted;		/* entries evicted since start */
	pg_atomic_uint64 generation;	/* raised by every reset */
	int			num_slots;		/* process slots (ProcNumbers) */
	int			num_rows;		/* tranche rows: max_tranches + overflow */
	int			max_entries;	/* pg_lockstat.max_query_entries */
	Size		slot_stride;	/* bytes between two slots */
	char	   *slots;			/* num_slots tables */
	pg_atomic_uint64 *residual; /* 2 * num_rows * RESIDUAL_WORDS: one set for
								 * even generations, one for odd ones */
} LockStatQueryState;

/* lockstat_query_slots.c: the shared state, and the shared table */
extern LockStatQueryState *lockstat_query_state;
extern HTAB *lockstat_query_hash;

/* lockstat_query.c: this process's table, NULL if none */
extern LockStatQuerySlot *lockstat_query_my_slot;

/* lockstat_query.c: did this process's table ask for a fold? */
extern bool lockstat_query_fold_wanted;

/* no holder known */
static inline void
lockstat_holder_clear(LockStatHolder *h)
{
	h->queryid = 0;
	h->kind = LOCKSTAT_HOLDER_NONE;
	h->mode = 0;
	h->pad = 0;
}

/* the table of process slot "slot" */
static inline LockStatQuerySlot *
lockstat_query_slot(int slot)
{
	return (LockStatQuerySlot *) (lockstat_query_state->slots +
								  lockstat_query_state->slot_stride * slot);
}

/* the residual row "row" of the generation's set */
static inline pg_atomic_uint64 *
lockstat_query_residual(uint64 generation, int row)
{
	LockStatQueryState *state = lockstat_query_state;

	return &state->residual[((generation & 1) * state->num_rows + row) *
							RESIDUAL_WORDS];
}

/* lockstat_query_slots.c */
extern void lockstat_query_begin_write(LockStatQuerySlot *slot);
extern void lockstat_query_end_write(LockStatQuerySlot *slot);
extern void lockstat_query_add_counts(LockStatQueryCounts *to,
									  const LockStatQueryCounts *from);
extern void lockstat_query_add_residual(uint64 generation, int row,
										const LockStatQueryCounts *c);
extern void lockstat_query_read_residual(uint64 generation, int row,
										 LockStatQueryCounts *c);
extern void lockstat_query_copy_slot(LockStatQuerySlot *to,
									 volatile LockStatQuerySlot *from);

#endif							/* LOCKSTAT_QUERY_INTERNAL_H */
