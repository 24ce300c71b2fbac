/*-------------------------------------------------------------------------
 *
 * lockstat_query.c
 *	  Blocked LWLock calls and sampled holds per query, database, role,
 *	  tranche and holder: counting them from the core's hooks into the
 *	  process's own table, for pg_lwlock_query_stats and pg_lwlock_blockers
 *
 * The core patch calls lwlock_stats_wait_hook on the blocked path only:
 * at each wake-up, where lockstat_query_note_woken() takes note of who woke
 * the process, and once per blocked LWLock call with the call's whole wait,
 * once the call no longer holds the lock it waited for.  There
 * lockstat_query_record_wait() counts the call under the running query's ID
 * (pgstat_get_my_query_id()), MyDatabaseId, the current user and the
 * tranche's row, in a small table that the process owns, and in the wait
 * distribution of lockstat_hist.c (lockstat_record_wait()), in one write.
 * The key also names the call's holder: the process whose release ended
 * the wait, which noted its own query ID (or kind of process) and mode in
 * this process's slot from the core's lwlock_stats_wake_hook
 * (lockstat_query_note_waker()), before it let this process run.  The
 * core's lwlock_stats_hold_hook counts each sampled hold in the same way,
 * with no holder (lockstat_query_record_hold()).  Nothing is counted
 * anywhere else, so the uncontended path of an acquisition runs no
 * instruction of this file.
 *
 * The tables, their write protocol and the residual rows are in
 * lockstat_query_slots.c; the folds of the tables into the shared table,
 * and the readers, in lockstat_query_table.c; how a reset moves each
 * process to a new generation, in lockstat_reset.c.
 *
 * Locking rules:
 *
 * - The hooks write only this process's table, each call or sample within
 *	 one write (lockstat_query_begin_write()), together with its counts in
 *	 lockstat_hist.c and the slot's hooked_blocks and hooked_wait_ns, so
 *	 that a reset's cut sees it in all or in none.  They take no lock,
 *	 allocate nothing and raise no error.  A hook may wait for a reset's
 *	 cut of its own slot (a few loads), never holding the LWLock it waited
 *	 for (the core calls it once that lock is released), perhaps holding
 *	 others: the reset takes no LWLock while it takes cuts.
 *
 * - When the hook finds its table full, it adds the call to the tranche's
 *	 residual row of its generation with atomic operations (as the wait
 *	 distribution does), inside its write, and asks for a fold
 *	 (lockstat_query_fold_wanted), which lockstat_query_table.c does at the
 *	 end of a transaction or at exit.  Once its table is three quarters full
 *	 it asks for a fold too, so that spills stay rare.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_query.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/proc.h"
#include "utils/backend_status.h"

#include "lockstat.h"
#include "lockstat_query_internal.h"

LockStatQuerySlot *lockstat_query_my_slot = NULL;
bool		lockstat_query_fold_wanted = false;

/*
 * This process's blocked calls that are not counted yet, oldest first: the
 * lock each waited for, as this process maps it, and who woke it last and
 * the root of that waker's hold, taken from the slot when it was woken
 * (lockstat_query_note_woken()).  A call that took its lock is counted when
 * it releases the lock again, so a process that holds several locks from
 * blocked calls has as many here; while the call holds the lock, a release
 * of it that wakes a waiter passes its root on (lockstat_query_note_waker()).
 * When more are pending than there is room for, the newest have no holder.
 */
#define LOCKSTAT_QUERY_PENDING_WAITS	8

static struct
{
	LWLock	   *lock;
	LockStatHolder waker;
	LockStatHolder root;
}			query_my_waits[LOCKSTAT_QUERY_PENDING_WAITS];
static int	query_my_nwaits = 0;

/*
 * The index in query_my_waits of the newest pending call on "lock", or -1
 * if there is none.
 */
static inline int
lockstat_query_my_wait(LWLock *lock)
{
	for (int i = query_my_nwaits; --i >= 0;)
		if (query_my_waits[i].lock == lock)
			return i;
	return -1;
}

/*
 * The process with ProcNumber slot starts: take over the slot's table,
 * which the previous owner emptied when it exited, and start it in the
 * current generation.
 */
void
lockstat_query_attach(int slot)
{
	LockStatQuerySlot *s;

	if (lockstat_query_state == NULL || slot < 0 ||
		slot >= lockstat_query_state->num_slots)
		return;

	s = lockstat_query_slot(slot);
	lockstat_query_begin_write(s);
	s->nused = 0;
	s->generation = s->target_generation;
	s->hooked_blocks = 0;
	s->hooked_wait_ns = 0;
	lockstat_holder_clear(&s->waker);
	lockstat_holder_clear(&s->root);
	lockstat_query_end_write(s);
	lockstat_query_my_slot = s;
	query_my_nwaits = 0;
	lockstat_query_fold_wanted = false;
}

/*
 * What this process is counted by, as waiter or as holder: the running
 * query's ID, and the kind of process when there is none (see
 * LockStatQueryKey).
 */
static inline void
lockstat_query_my_identity(int64 *queryid, uint16 *kind)
{
	*queryid = pgstat_get_my_query_id();
	if (*queryid != 0)
		*kind = 0;
	else
		*kind = IsParallelWorker() ? LOCKSTAT_KIND_PARALLEL_WORKER :
			(uint16) MyBackendType;
}

/*
 * The key of a blocked call or a sampled hold of this process, in table row
 * "row": the running query's ID, database and user; without a query ID, the
 * kind of process instead.  No holder: the caller sets it.
 */
static void
lockstat_query_my_key(LockStatQueryKey *key, int row)
{
	int			sec_context;

	memset(key, 0, sizeof(*key));
	lockstat_query_my_identity(&key->queryid, &key->kind);
	key->dbid = MyDatabaseId;
	/* GetUserId() would Assert a valid user, which processes may not have */
	GetUserIdAndSecContext(&key->userid, &sec_context);
	key->row = (uint16) row;
	lockstat_holder_clear(&key->holder);
	lockstat_holder_clear(&key->root);
}

/*
 * The generation that this process counts in, within a write of its table:
 * if a reset has moved it on, the table's counts of the older generation
 * are not shown, and are dropped.
 */
static uint64
lockstat_query_my_generation(LockStatQuerySlot *slot)
{
	uint64		generation = slot->target_generation;

	if (slot->generation != generation)
	{
		slot->nused = 0;
		slot->generation = generation;
	}
	return generation;
}

/*
 * Within a write of this process's table, in generation "generation": add
 * counts c under key, to the key's entry, or to a new one, or, if the table
 * is full, to the residual row of the key's tranche (returns true then).
 * Asks for a fold once the table is full or three quarters full.
 */
static bool
lockstat_query_count(LockStatQuerySlot *slot, uint64 generation,
					 const LockStatQueryKey *key,
					 const LockStatQueryCounts *c)
{
	uint32		nused = slot->nused;
	uint32		i;

	for (i = 0; i < nused; i++)
	{
		if (memcmp(&slot->entries[i].key, key, sizeof(*key)) == 0)
			break;
	}
	if (i < nused)
		lockstat_query_add_counts(&slot->entries[i].counts, c);
	else if (nused < LOCKSTAT_QUERY_SLOT_ENTRIES)
	{
		LockStatQueryEntry *e = &slot->entries[nused];

		e->key = *key;
		e->counts = *c;
		slot->nused = ++nused;
	}
	else
	{
		/* the table is full: no entry of its own for these counts */
		lockstat_query_add_residual(generation, key->row, c);
		lockstat_query_fold_wanted = true;
		return true;
	}

	if (nused >= LOCKSTAT_QUERY_FOLD_AT)
		lockstat_query_fold_wanted = true;
	return false;
}

/*
 * Count one sampled hold of an LWLock of counter row stats_row in mode
 * "mode" (0 for LW_EXCLUSIVE, 1 for LW_SHARED), which lasted hold_ns
 * nanoseconds: under the running query, database, role and the lock's
 * tranche, with no holder, and in this process's hold rows and the
 * hold-time distribution (lockstat_record_hold()), within one write of
 * this process's table, so that a reset's cut sees the sample in all or in
 * none.  Called from the core's lwlock_stats_hold_hook after the lock was
 * released, also during error recovery and at exit: no locks, no
 * allocation, no errors.
 */
void
lockstat_query_record_hold(int stats_row, int mode, uint64 hold_ns)
{
	LockStatQuerySlot *slot = lockstat_query_my_slot;
	LockStatQueryKey key;
	LockStatQueryCounts c = {0};
	uint64		generation;
	int			row;

	if (slot == NULL || mode < 0 || mode > 1)
		return;
	row = lockstat_tranche_row(stats_row);
	if (row >= 0)
		lockstat_query_my_key(&key, row);
	c.hold_samples[mode] = 1;
	c.hold_ns[mode] = hold_ns;
	c.max_hold_ns[mode] = hold_ns;

	lockstat_query_begin_write(slot);
	generation = lockstat_query_my_generation(slot);
	if (row >= 0)
		(void) lockstat_query_count(slot, generation, &key, &c);
	lockstat_record_hold(stats_row, mode, hold_ns, generation);
	lockstat_query_end_write(slot);
}

/*
 * lwlock_stats_wake_hook, in the process that ends the wait of "waiter" by
 * its release of "lock", which it held in mode "mode" (0 for LW_EXCLUSIVE,
 * 1 for LW_SHARED), or by its LWLockUpdateVar(): note this process's query
 * ID (or kind) and the mode in the waiter's slot as its waker, where the
 * waiter finds them when it is woken, and as its root either this process
 * too or, if this process holds the lock from a blocked call of its own
 * that is not counted yet (see query_my_waits), that call's root.  The core
 * calls it before the barrier that lets the waiter run, with no spinlock
 * held; from LWLockRelease() once the lock is free, from LWLockUpdateVar()
 * with the lock still held.  So it does loads and plain stores only: no
 * atomic, no clock read, no lock, no call but the query ID's reader.
 */
void
lockstat_query_note_waker(LWLock *lock, PGPROC *waiter, int mode)
{
	int			slotno;
	int			mine;
	LockStatQuerySlot *s;

	if (lockstat_query_state == NULL)
		return;
	slotno = lockstat_proc_number(waiter);
	if (slotno < 0 || slotno >= lockstat_query_state->num_slots)
		return;
	s = lockstat_query_slot(slotno);
	lockstat_query_my_identity(&s->waker.queryid, &s->waker.kind);
	s->waker.mode = (uint16) (mode == LW_SHARED ? 1 : 0);
	s->waker.pad = 0;
	mine = lockstat_query_my_wait(lock);
	if (mine >= 0 && query_my_waits[mine].waker.kind != LOCKSTAT_HOLDER_NONE)
		s->root = query_my_waits[mine].root;
	else
		s->root = s->waker;
}

/*
 * lwlock_stats_wait_hook at a wake-up of this process's blocked call on
 * "lock", which it does not hold: take the waker and root that the waker
 * noted in this process's slot into the call's entry of query_my_waits (a
 * new one on its first wake-up), and clear them, so that a later sleep on
 * another lock, while this call is not counted yet, does not overwrite them.
 * Plain loads and stores, no locks, no allocation, no errors.
 */
void
lockstat_query_note_woken(LWLock *lock)
{
	LockStatQuerySlot *slot = lockstat_query_my_slot;
	int			i;

	if (slot == NULL)
		return;

	i = lockstat_query_my_wait(lock);
	if (i < 0 && query_my_nwaits < LOCKSTAT_QUERY_PENDING_WAITS)
	{
		i = query_my_nwaits++;
		query_my_waits[i].lock = lock;
	}
	if (i >= 0)
	{
		/* the waker's stores came before it let us run; take them */
		pg_read_barrier();
		query_my_waits[i].waker = slot->waker;
		query_my_waits[i].root = slot->root;
	}
	lockstat_holder_clear(&slot->waker);
	lockstat_holder_clear(&slot->root);
}

/*
 * Forget the notes of this process's blocked calls that are not counted
 * yet: called when pg_lockstat.track changes, since a call that took its
 * lock while counting was on is not counted if counting is off at its
 * release (the core counts nothing then), and its note would otherwise
 * stay, to be taken for a later call's.  A GUC's assign hook runs with no
 * LWLock held, so no call that would be counted is pending then (if one
 * were, it would only lose its holder: its counts stay exact).
 */
void
lockstat_query_forget_waits(void)
{
	query_my_nwaits = 0;
}

/*
 * Count one blocked call that waited wait_ns nanoseconds on "lock", of
 * counter row stats_row: under the running query, database, role, the
 * lock's tranche and the holder whose release ended the wait and its root
 * (as noted when it was woken; none if nobody noted them), in the wait
 * distribution (lockstat_record_wait()), and in this process's totals of
 * hooked calls, which a reset compares with the core's counters to take its
 * cut (lockstat_reset.c).  Called from the core's
 * lwlock_stats_wait_hook once the call's block is counted, which the core
 * does once the call no longer holds the lock it waited for (after its
 * release, for a call that took it); "lock" only names the lock.  One write
 * of this process's table (or, when it is full, a residual row's atomic
 * counters); no locks, no allocation, no errors.
 */
void
lockstat_query_record_wait(LWLock *lock, int stats_row, uint64 wait_ns)
{
	LockStatQuerySlot *slot = lockstat_query_my_slot;
	LockStatQueryKey key;
	LockStatQueryCounts c = {0};
	uint64		generation;
	bool		spilled = false;
	int			row;
	int			mine;

	if (slot == NULL)
		return;
	row = lockstat_tranche_row(stats_row);
	if (row >= 0)
		lockstat_query_my_key(&key, row);

	/* who woke the call last, and this call's entry goes */
	mine = lockstat_query_my_wait(lock);
	if (mine >= 0)
	{
		if (row >= 0 && query_my_waits[mine].waker.kind != LOCKSTAT_HOLDER_NONE)
		{
			key.holder = query_my_waits[mine].waker;
			key.root = query_my_waits[mine].root;
		}
		query_my_nwaits--;
		for (; mine < query_my_nwaits; mine++)
			query_my_waits[mine] = query_my_waits[mine + 1];
	}

	c.blocks = 1;
	c.wait_ns = wait_ns;
	c.max_wait_ns = wait_ns;

	lockstat_query_begin_write(slot);
	generation = lockstat_query_my_generation(slot);
	if (row >= 0)
		spilled = lockstat_query_count(slot, generation, &key, &c);
	lockstat_record_wait(stats_row, wait_ns, generation);
	slot->hooked_blocks++;
	slot->hooked_wait_ns += wait_ns;
	lockstat_query_end_write(slot);

	if (spilled)
		slot->unattributed++;
}

