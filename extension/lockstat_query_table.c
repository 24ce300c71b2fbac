/*-------------------------------------------------------------------------
 *
 * lockstat_query_table.c
 *	  The shared table of the per-query counts: folds of the process tables
 *	  into it, eviction, the readers behind pg_lwlock_query_stats and
 *	  pg_lwlock_blockers, and the reset's steps on it
 *
 * Processes count their blocked calls and sampled holds into tables of
 * their own (lockstat_query.c); each folds its table into the shared table
 * at the end of a transaction once the table fills, and when it exits.
 * When the shared table is full, a fold evicts its least-waited entries
 * into the residual rows of their tranches.  The layout is in
 * lockstat_query_slots.c's header, the structures in
 * lockstat_query_internal.h.
 *
 * Locking rules:
 *
 * - A process folds at the end of its next transaction after it asked to
 *	 if it can take query_lock at once (LWLockConditionalAcquire never
 *	 sleeps, so it never calls the wait hook, and a commit never waits for
 *	 it), or else at a later one, and always when it exits
 *	 (lockstat_query_detach(), from the on_shmem_exit callback of
 *	 pg_lockstat.c, after counting stopped).
 *
 * - The shared table, the residual rows' contents as moved by folds, and
 *	 the generation are changed only with query_lock held exclusively, and
 *	 each such change raises fold_count first, behind a write barrier: a
 *	 fold moves a process's entries from its table into the shared table
 *	 (evicting entries into the residual rows when it is full) and empties
 *	 the table; a reset (lockstat_query_reset_start()) empties the shared
 *	 table and the new generation's residual rows and raises the
 *	 generation.  The only changes without the lock are the hook's: new
 *	 counts, into the owner's table or a residual row.
 *
 * - A reader copies the shared table, the residual rows, the generation
 *	 and fold_count under query_lock held shared, then the process tables,
 *	 and reads fold_count again.  If it has not moved, no fold or reset ran
 *	 in between, so every call was counted exactly once: in a process table
 *	 or in the shared table or residual rows.  Otherwise it tries again,
 *	 and after LOCKSTAT_OPTIMISTIC_READS disturbed attempts it holds
 *	 the lock until it has copied the process tables too, so folds wait for
 *	 that one read instead of starving it.
 *
 * - query_lock is taken with no other LWLock held (the end of a
 *	 transaction, process exit, the SQL functions), and whoever holds it
 *	 takes no other LWLock, except a reset, which holds it from its start
 *	 to its end (see lockstat_reset.c).  A process that sleeps for
 *	 query_lock counts that block like any other, when it releases
 *	 query_lock, into its table, after what it changed; the hook itself
 *	 never takes it.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_query_table.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "utils/hsearch.h"

#include "lockstat.h"
#include "lockstat_query_internal.h"

/* most entries evicted from the shared table at once */
#define LOCKSTAT_QUERY_EVICT_MAX	64

static void lockstat_query_fold(bool wait);
static void lockstat_query_xact_callback(XactEvent event, void *arg);

/*
 * At preload, in the postmaster (and in every EXEC_BACKEND child): the end
 * of each transaction is where a process folds its table when it asked to.
 */
void
lockstat_query_init(void)
{
	RegisterXactCallback(lockstat_query_xact_callback, NULL);
}

/*
 * The process exits and has stopped counting (MyLWLockStats is NULL, so
 * the hook no longer runs): fold its table into the shared table, waiting
 * for query_lock if need be, and give up the slot.
 */
void
lockstat_query_detach(void)
{
	if (lockstat_query_my_slot == NULL)
		return;
	lockstat_query_fold(true);
	lockstat_query_my_slot = NULL;
}

/*
 * does entry a rank below entry b for eviction (less waited, then less
 * sampled hold time)?
 */
static inline bool
lockstat_query_less_waited(const LockStatQueryEntry *a,
						   const LockStatQueryEntry *b)
{
	uint64		a_hold = a->counts.hold_ns[0] + a->counts.hold_ns[1];
	uint64		b_hold = b->counts.hold_ns[0] + b->counts.hold_ns[1];

	if (a->counts.wait_ns != b->counts.wait_ns)
		return a->counts.wait_ns < b->counts.wait_ns;
	if (a_hold != b_hold)
		return a_hold < b_hold;
	return a->counts.blocks < b->counts.blocks;
}

/*
 * The shared table is full: move its least-waited entries, 5% of them (at
 * least 1, at most LOCKSTAT_QUERY_EVICT_MAX), into the residual rows of
 * their tranches, so that the per-tranche totals stay the same.  Called
 * with query_lock held exclusively.  A scan of the whole table, keeping the
 * candidates in a fixed array: nothing is allocated, nothing can fail.
 */
static void
lockstat_query_evict(void)
{
	LockStatQueryEntry *victims[LOCKSTAT_QUERY_EVICT_MAX];
	int			want = Min(Max(lockstat_query_state->max_entries / 20, 1),
						   LOCKSTAT_QUERY_EVICT_MAX);
	int			nvictims = 0;
	int			most = 0;		/* the most-waited of the victims */
	HASH_SEQ_STATUS seq;
	LockStatQueryEntry *e;

	hash_seq_init(&seq, lockstat_query_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (nvictims < want)
		{
			victims[nvictims] = e;
			if (lockstat_query_less_waited(victims[most], e))
				most = nvictims;
			nvictims++;
		}
		else if (lockstat_query_less_waited(e, victims[most]))
		{
			victims[most] = e;
			most = 0;
			for (int v = 1; v < nvictims; v++)
			{
				if (lockstat_query_less_waited(victims[most], victims[v]))
					most = v;
			}
		}
	}

	for (int v = 0; v < nvictims; v++)
	{
		LockStatQueryEntry *victim = victims[v];

		lockstat_query_add_residual(pg_atomic_read_u64(&lockstat_query_state->generation),
									victim->key.row, &victim->counts);
		hash_search(lockstat_query_hash, &victim->key, HASH_REMOVE, NULL);
	}
	lockstat_query_state->evicted += nvictims;
}

/*
 * Add one process-table entry to the shared table, evicting first if it is
 * full.  Called with query_lock held exclusively.
 */
static void
lockstat_query_add_shared(const LockStatQueryEntry *from)
{
	LockStatQueryEntry *to;
	bool		found;

	to = hash_search(lockstat_query_hash, &from->key, HASH_FIND, NULL);
	if (to == NULL)
	{
		if (hash_get_num_entries(lockstat_query_hash) >= lockstat_query_state->max_entries)
			lockstat_query_evict();
		/* the table's elements were all allocated at start-up */
		to = hash_search(lockstat_query_hash, &from->key, HASH_ENTER_NULL, &found);
		if (to == NULL)
		{
			lockstat_query_add_residual(pg_atomic_read_u64(&lockstat_query_state->generation),
										from->key.row, &from->counts);
			return;
		}
		Assert(!found);
		memset(&to->counts, 0, sizeof(to->counts));
	}
	lockstat_query_add_counts(&to->counts, &from->counts);
}

/*
 * Move this process's table into the shared table and empty it; see the
 * locking rules.  With wait, waits for query_lock; without, gives up (and
 * keeps asking for a fold) unless it gets the lock at once.  Cannot fail.
 */
static void
lockstat_query_fold(bool wait)
{
	volatile LockStatQueryState *state = lockstat_query_state;
	LockStatQuerySlot *slot = lockstat_query_my_slot;
	uint64		generation;

	if (slot == NULL)
		return;

	/*
	 * If we sleep for the lock, the hook counts that block into our table
	 * now, before we read it.
	 */
	if (wait)
		LWLockAcquire(lockstat_query_state->lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(lockstat_query_state->lock, LW_EXCLUSIVE))
		return;
	lockstat_query_fold_wanted = false;

	/* readers that copied anything before this see it moved */
	state->fold_count++;
	pg_write_barrier();

	/* no reset runs while we hold query_lock: every slot has its cut */
	generation = pg_atomic_read_u64(&lockstat_query_state->generation);
	Assert(slot->target_generation == generation);
	if (slot->generation == generation)
	{
		for (uint32 i = 0; i < slot->nused; i++)
			lockstat_query_add_shared(&slot->entries[i]);
	}

	lockstat_query_begin_write(slot);
	slot->nused = 0;
	slot->generation = generation;
	lockstat_query_end_write(slot);

	LWLockRelease(lockstat_query_state->lock);
}

/*
 * XactCallback: at the end of a transaction (top level, parallel worker or
 * prepared), fold this process's table if it asked for it and query_lock
 * is free.  Nothing to do otherwise, which is the rule.
 */
static void
lockstat_query_xact_callback(XactEvent event, void *arg)
{
	if (!lockstat_query_fold_wanted)
		return;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			lockstat_query_fold(false);
			break;
		default:
			break;
	}
}

/*
 * Add an entry's counts to the entry of the same key in a reader's table;
 * without "holders", to the entry of its key with no holder, so that the
 * counts of all holders add up.
 */
static void
lockstat_query_add_local(HTAB *htab, const LockStatQueryEntry *from,
						 bool holders)
{
	LockStatQueryEntry *to;
	LockStatQueryKey key = from->key;
	bool		found;

	if (!holders)
	{
		lockstat_holder_clear(&key.holder);
		lockstat_holder_clear(&key.root);
	}
	to = hash_search(htab, &key, HASH_ENTER, &found);
	if (!found)
		memset(&to->counts, 0, sizeof(to->counts));
	lockstat_query_add_counts(&to->counts, &from->counts);
}

/*
 * A step of lockstat_query_read(), holding query_lock shared: add the
 * shared table to htab, and copy the residual rows of the current
 * generation into residual[num_rows]; returns that generation.
 */
static uint64
lockstat_query_read_shared(HTAB *htab, LockStatQueryCounts *residual,
						   bool holders)
{
	HASH_SEQ_STATUS seq;
	LockStatQueryEntry *e;
	uint64		generation;

	generation = pg_atomic_read_u64(&lockstat_query_state->generation);
	hash_seq_init(&seq, lockstat_query_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
		lockstat_query_add_local(htab, e, holders);
	for (int row = 0; row < lockstat_query_state->num_rows; row++)
		lockstat_query_read_residual(generation, row, &residual[row]);
	return generation;
}

/*
 * A step of lockstat_query_read(), after lockstat_query_read_shared(): add
 * the process tables of generation "generation" to htab, each copied into
 * *copy first.  Checks for interrupts unless "locked" (query_lock is held,
 * which holds them off).  Errors: 55P03 if a table cannot be read
 * consistently (lockstat_query_copy_slot()).
 */
static void
lockstat_query_read_slots(HTAB *htab, LockStatQuerySlot *copy,
						  uint64 generation, bool holders, bool locked)
{
	for (int s = 0; s < lockstat_query_state->num_slots; s++)
	{
		/* no interrupt check while the lock holds them off */
		if (!locked)
			CHECK_FOR_INTERRUPTS();
		lockstat_query_copy_slot(copy, lockstat_query_slot(s));
		if (copy->generation != generation)
			continue;
		for (uint32 i = 0; i < copy->nused; i++)
			lockstat_query_add_local(htab, &copy->entries[i], holders);
	}
}

/*
 * The counts since the last reset: a new hash table of LockStatQueryEntry
 * in CurrentMemoryContext, one entry per key (with "holders"; else per key
 * with the holder fields cleared, see lockstat_query_add_local()), and
 * residual[num_rows], the
 * residual row of each tranche row (max_tranches + 1 rows, the overflow row
 * last).  Every blocked call since the reset is in exactly one of them; see
 * the locking rules.  Checks for interrupts.  Errors: 55000 if not counting;
 * 55P03 if a process table cannot be read consistently.
 */
HTAB *
lockstat_query_read(LockStatQueryCounts *residual, bool holders)
{
	volatile LockStatQueryState *state;
	LockStatQuerySlot *copy;
	HASHCTL		ctl;

	state = lockstat_query_state;
	copy = palloc(sizeof(LockStatQuerySlot));

	ctl.keysize = sizeof(LockStatQueryKey);
	ctl.entrysize = sizeof(LockStatQueryEntry);
	ctl.hcxt = CurrentMemoryContext;

	for (int attempt = 1;; attempt++)
	{
		bool		hold = (attempt > LOCKSTAT_OPTIMISTIC_READS);
		HTAB	   *htab;
		uint64		before;
		uint64		generation;

		htab = hash_create("pg_lockstat query entries", 256, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

		LWLockAcquire(lockstat_query_state->lock, LW_SHARED);
		before = state->fold_count;
		generation = lockstat_query_read_shared(htab, residual, holders);
		if (!hold)
			LWLockRelease(lockstat_query_state->lock);

		lockstat_query_read_slots(htab, copy, generation, holders, hold);

		pg_read_barrier();
		if (hold)
		{
			/* no fold or reset can run while we hold the lock */
			Assert(state->fold_count == before);
			LWLockRelease(lockstat_query_state->lock);
			pfree(copy);
			return htab;
		}
		if (state->fold_count == before)
		{
			pfree(copy);
			return htab;
		}

		/* a process folded its table meanwhile: a moment's work, again */
		hash_destroy(htab);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Start the per-query counts again from zero: start a new generation, whose
 * residual rows are emptied here, and empty the shared table.  The process
 * tables move to the new generation one by one, as lockstat_reset() takes
 * each slot's cut (lockstat_query_slot_release()), and readers skip the
 * tables of an older one.  Part of pg_lockstat_reset(): called by
 * lockstat_reset() before it takes the cuts, and returns with query_lock
 * held exclusively, until lockstat_query_reset_finish(), so that no reader
 * or fold sees a reset half done and no reader sees the empty counts
 * before the new stats_reset.  Returns the new generation.  Cannot fail.
 */
uint64
lockstat_query_reset_start(void)
{
	volatile LockStatQueryState *state = lockstat_query_state;
	HASH_SEQ_STATUS seq;
	LockStatQueryEntry *e;
	uint64		generation;

	LWLockAcquire(lockstat_query_state->lock, LW_EXCLUSIVE);
	state->fold_count++;
	pg_write_barrier();

	/*
	 * No process counts in the new generation's residual rows before its cut,
	 * and every process took its cut of the generation before, so the set of
	 * two generations ago is free to empty.
	 */
	generation = pg_atomic_read_u64(&lockstat_query_state->generation) + 1;
	for (int row = 0; row < lockstat_query_state->num_rows; row++)
	{
		pg_atomic_uint64 *words = lockstat_query_residual(generation, row);

		for (int w = 0; w < RESIDUAL_WORDS; w++)
			pg_atomic_write_u64(&words[w], 0);
	}
	pg_atomic_write_u64(&lockstat_query_state->generation, generation);

	hash_seq_init(&seq, lockstat_query_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
		hash_search(lockstat_query_hash, &e->key, HASH_REMOVE, NULL);

	return generation;
}

/* the reset is complete: let readers and folds in again */
void
lockstat_query_reset_finish(void)
{
	LWLockRelease(lockstat_query_state->lock);
}

/*
 * The fill level of the shared table and the counts of what had no entry
 * of its own, for pg_lockstat_status.  Errors: 55000 if not counting.
 */
void
lockstat_query_status(LockStatQueryStatus *status)
{
	LWLockAcquire(lockstat_query_state->lock, LW_SHARED);
	status->entries = hash_get_num_entries(lockstat_query_hash);
	status->evicted = lockstat_query_state->evicted;
	LWLockRelease(lockstat_query_state->lock);

	status->unattributed = 0;
	for (int s = 0; s < lockstat_query_state->num_slots; s++)
		status->unattributed +=
			((volatile LockStatQuerySlot *) lockstat_query_slot(s))->unattributed;
}
