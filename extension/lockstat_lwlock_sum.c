/*-------------------------------------------------------------------------
 *
 * lockstat_lwlock_sum.c
 *	  Reading the shared counter array: the sum over processes, one
 *	  process's rows, and the reset baseline that the views subtract
 *
 * pg_lwlock_stats and pg_lwlock_backend_type_stats are the totals of
 * exited processes plus the rows of the live process slots, minus the
 * baseline of the last reset, plus the hold table's half of that reset
 * (lockstat_hist.c); pg_lwlock_backend_stats is one slot's rows as they
 * are.  The array and the rules of its writers are in lockstat_lwlock.c;
 * how a reset takes its baseline, slot by slot, in lockstat_reset.c.
 *
 * Locking rules:
 *
 * - A reader (lockstat_sum_all) copies the totals of exited processes and
 *	 sums the live slots between two reads of exit_count, and keeps the
 *	 result only if both are the same even value: then no process exited in
 *	 between, so every process's counts were added exactly once, from its
 *	 slot or from the totals.  A process that starts meanwhile is added from
 *	 zero or not at all.  After LOCKSTAT_OPTIMISTIC_READS disturbed attempts
 *	 the reader holds exit_lock shared for one more, so that exiting
 *	 processes cannot starve it; they wait for that one sum (their exit is
 *	 delayed by a few milliseconds at the most, at 1000 slots).  Without
 *	 that fallback no lock is held while summing, so a reader cannot delay
 *	 a process's start or exit, and every long loop checks for interrupts.
 *	 Each process's counts only grow, and move to the totals whole, so a
 *	 sum read later is never smaller than a sum read earlier.
 *
 * - The baseline, stats_reset and wait_half are protected by state->lock,
 *	 held only to copy them (shared) or to update them (exclusive), never
 *	 while summing, so that readers cannot starve a reset.  A reader copies
 *	 the baseline first and sums afterwards; since the baseline is itself a
 *	 sum taken earlier, sum minus baseline is never negative.  A reset sums
 *	 first, slot by slot at each one's cut, and then raises each baseline
 *	 entry to its sum, never lowering it, so that concurrent resets cannot
 *	 move the baseline back.
 *
 * - pg_lwlock_backend_stats copies a slot's owner record and rows between
 *	 two reads of the record's changecount (lockstat_read_process()), with
 *	 no lock; retries check for interrupts.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_lwlock_sum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/proc.h"
#include "utils/timestamp.h"

#include "lockstat.h"
#include "lockstat_lwlock_internal.h"

/* what the hold counters add to a slot's rows: nothing */
static const LWLockStatsCounters lockstat_no_rows = {0};

/*
 * The kind of the live owner of process slot "slot", or -1 if the slot has
 * no owner; after it, the caller may read the slot's rows (see the locking
 * rules of lockstat_lwlock.c).
 */
static int
lockstat_live_kind(int slot)
{
	volatile LockStatSlotOwner *owner = &lockstat_state->owners[slot];
	int			kind;

	if (owner->pid == 0)
		return -1;
	pg_read_barrier();
	kind = owner->kind;
	Assert(kind >= 0 && kind < LOCKSTAT_NUM_KINDS);
	return kind;
}

/*
 * Add the rows of every live process slot to totals[LOCKSTAT_NUM_KINDS *
 * num_rows], each to its owner's kind.  Lock-free with respect to the
 * writers; the caller checks that no process exited meanwhile.  Checks for
 * interrupts (a no-op while exit_lock is held).
 */
static void
lockstat_add_live_rows(LockStatTrancheTotals *totals)
{
	int			num_rows = lockstat_state->num_rows;

	for (int slot = 0; slot < lockstat_state->num_slots; slot++)
	{
		volatile LWLockStatsCounters *rows = lockstat_slot_rows(slot);
		LockStatTrancheTotals *to;
		int			kind;

		CHECK_FOR_INTERRUPTS();

		kind = lockstat_live_kind(slot);
		if (kind < 0)
			continue;
		to = totals + kind * num_rows;
		for (int row = 0; row < num_rows; row++)
			lockstat_add_row(&to[row], &rows[row], &lockstat_no_holds);
	}
}

/*
 * Fill totals[LOCKSTAT_NUM_KINDS * num_rows] with every count since
 * start-up, kind by kind: the totals of exited processes plus the rows of
 * the live slots, each process's counts exactly once (see the locking rules
 * at the top).  Must not be called with state->lock held.  Checks for
 * interrupts.
 */
static void
lockstat_sum_all(LockStatTrancheTotals *totals)
{
	volatile LockStatSharedState *state = lockstat_state;
	Size		size = sizeof(LockStatTrancheTotals) * LOCKSTAT_NUM_KINDS *
		lockstat_state->num_rows;

	for (int attempt = 1;; attempt++)
	{
		bool		locked = (attempt > LOCKSTAT_OPTIMISTIC_READS);
		uint64		before;

		if (locked)
			LWLockAcquire(lockstat_state->exit_lock, LW_SHARED);
		before = state->exit_count;
		pg_read_barrier();
		if ((before & 1) == 0)
		{
			memcpy(totals, lockstat_state->exited, size);
			lockstat_add_live_rows(totals);
		}
		pg_read_barrier();
		if (locked)
		{
			/* no process can exit while we hold exit_lock */
			Assert(state->exit_count == before && (before & 1) == 0);
			LWLockRelease(lockstat_state->exit_lock);
			return;
		}
		if (state->exit_count == before && (before & 1) == 0)
			return;
		/* a process exited meanwhile: a moment's work, try again */
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Subtract an earlier reading of the same counters, base, from *totals.
 * Counters only grow, so the difference is the count in between; being
 * unsigned, it stays right even if a counter wrapped around 2^64 meanwhile.
 */
static void
lockstat_subtract_totals(LockStatTrancheTotals *totals,
						 const LockStatTrancheTotals *base)
{
	for (int c = 0; c < LOCKSTAT_NUM_COUNTERS; c++)
		totals->counts[c] -= base->counts[c];
}

/*
 * Read the counts of the process that owns process slot "slot", since it
 * attached (its rows): fills *process and totals[num_rows], and returns
 * true; returns false if no live process owns the slot.  Not affected by
 * pg_lockstat_reset().  Lock-free; see the locking rules of
 * lockstat_lwlock.c.
 * Checks for interrupts.  Errors: 55000 if not preloaded.
 */
bool
lockstat_read_process(int slot, LockStatProcess *process,
					  LockStatTrancheTotals *totals)
{
	volatile LockStatSlotOwner *owner;
	volatile LWLockStatsCounters *rows;
	int			num_rows;

	Assert(slot >= 0 && slot < lockstat_state->num_slots);

	num_rows = lockstat_state->num_rows;
	owner = &lockstat_state->owners[slot];
	rows = lockstat_slot_rows(slot);

	for (;;)
	{
		uint32		before;

		CHECK_FOR_INTERRUPTS();

		before = owner->changecount;
		pg_read_barrier();

		if ((before & 1) == 0)
		{
			process->pid = owner->pid;
			process->backend_type = owner->backend_type;
			memcpy(process->bgw_type, (const char *) owner->bgw_type,
				   BGW_MAXLEN);
			memset(totals, 0, sizeof(LockStatTrancheTotals) * num_rows);
			if (process->pid != 0)
			{
				for (int row = 0; row < num_rows; row++)
					lockstat_add_row(&totals[row], &rows[row],
									 &lockstat_no_holds);
			}

			pg_read_barrier();
			if (owner->changecount == before)
				break;
		}

		/* the owner is attaching or exiting right now: a moment's work */
		pg_spin_delay();
	}
	process->bgw_type[BGW_MAXLEN - 1] = '\0';

	/*
	 * Skip a slot without an owner, and one whose owner has exited since we
	 * read it: ProcKill clears the PGPROC's pid after our detach callback
	 * ran, and a new process there has another pid.
	 */
	return process->pid != 0 &&
		((volatile PGPROC *) GetPGProcByNumber(slot))->pid == process->pid;
}

/*
 * Fill totals with the counts since the last reset: with by_kind, kind by
 * kind, totals[LOCKSTAT_NUM_KINDS * num_rows] (entry kind * num_rows + row);
 * else summed over the kinds, totals[num_rows].  Returns the time of that
 * reset.  Errors: 55000 if not preloaded.
 */
TimestampTz
lockstat_read_totals(LockStatTrancheTotals *totals, bool by_kind)
{
	int			num_rows = lockstat_state->num_rows;
	int			entries = LOCKSTAT_NUM_KINDS * num_rows;
	LockStatTrancheTotals *baseline;
	LockStatTrancheTotals *kinds;
	LockStatHoldRow *holds;
	TimestampTz stats_reset;
	int			half;

	baseline = palloc(sizeof(LockStatTrancheTotals) * entries);
	holds = palloc(sizeof(LockStatHoldRow) * entries);
	kinds = by_kind ? totals : palloc(sizeof(LockStatTrancheTotals) * entries);

	/* the baseline first: it must not be newer than the sums */
	LWLockAcquire(lockstat_state->lock, LW_SHARED);
	memcpy(baseline, lockstat_state->baseline,
		   sizeof(LockStatTrancheTotals) * entries);
	stats_reset = lockstat_state->stats_reset;
	half = lockstat_state->wait_half;
	LWLockRelease(lockstat_state->lock);

	/*
	 * The hold counts since that reset (its half of the hold table) before
	 * the acquisitions, so that no row shows more samples than acquisitions.
	 * The baseline has none: the slots' rows have no hold counts.
	 */
	lockstat_read_holds(half, holds);

	lockstat_sum_all(kinds);

	for (int e = 0; e < entries; e++)
	{
		lockstat_subtract_totals(&kinds[e], &baseline[e]);
		lockstat_add_row(&kinds[e], &lockstat_no_rows, &holds[e]);
	}

	if (!by_kind)
	{
		memcpy(totals, kinds, sizeof(LockStatTrancheTotals) * num_rows);
		for (int e = num_rows; e < entries; e++)
			for (int c = 0; c < LOCKSTAT_NUM_COUNTERS; c++)
				totals[e % num_rows].counts[c] += kinds[e].counts[c];
		pfree(kinds);
	}

	pfree(holds);
	pfree(baseline);
	return stats_reset;
}

/* raise each counter of *base to that of *totals; a baseline never moves back */
static void
lockstat_raise_totals(LockStatTrancheTotals *base,
					  const LockStatTrancheTotals *totals)
{
	for (int c = 0; c < LOCKSTAT_NUM_COUNTERS; c++)
		base->counts[c] = Max(base->counts[c], totals->counts[c]);
}

/*
 * The baseline that a reset is taking: the rows of exited processes plus,
 * slot by slot, each live process's rows at its cut.
 */
struct LockStatLWLockCut
{
	LockStatTrancheTotals *totals;	/* the new baseline so far, by kind */
	LockStatTrancheTotals *one; /* the last slot's rows read */
	int			one_kind;		/* and its owner's kind, or -1 */
};

/*
 * The first step of pg_lockstat_reset() on the LWLock counters (see
 * lockstat_reset.c), once the per-query counts have started generation
 * "generation": empty that generation's half of the distributions and of
 * the hold table (no process counts in them before its cut), and start a
 * cut with the rows of exited processes.  Takes exit_lock, which keeps
 * every slot's owner from folding its rows into those until
 * lockstat_lwlock_reset_finish(); exiting processes wait for the per-query
 * lock first anyway.
 */
LockStatLWLockCut *
lockstat_lwlock_reset_begin(uint64 generation)
{
	int			num_rows = lockstat_state->num_rows;
	LockStatLWLockCut *cut = palloc(sizeof(LockStatLWLockCut));

	cut->totals = palloc(sizeof(LockStatTrancheTotals) *
						 LOCKSTAT_NUM_KINDS * num_rows);
	cut->one = palloc(sizeof(LockStatTrancheTotals) * num_rows);
	cut->one_kind = -1;
	lockstat_hist_clear_half(generation);

	LWLockAcquire(lockstat_state->exit_lock, LW_SHARED);
	memcpy(cut->totals, lockstat_state->exited,
		   sizeof(LockStatTrancheTotals) * LOCKSTAT_NUM_KINDS * num_rows);
	return cut;
}

/*
 * A step of the cut of process slot "slot" (lockstat_reset.c): read the
 * slot's rows into the cut (zero for a slot without an owner), and set
 * *blocks and *wait_ns to the sums of their blocks and wait time in ns,
 * which the reset compares with what the owner's hook counted.  Returns
 * false if no process owns the slot.  The reset may read a slot more than
 * once; the last read counts (lockstat_lwlock_cut_add()).  Called with
 * exit_lock held, so no owner folds its rows meanwhile.  Cannot fail.
 */
bool
lockstat_lwlock_cut_rows(int slot, LockStatLWLockCut *cut, uint64 *blocks,
						 uint64 *wait_ns)
{
	LockStatTrancheTotals *one = cut->one;
	volatile LWLockStatsCounters *rows = lockstat_slot_rows(slot);
	int			num_rows = lockstat_state->num_rows;

	memset(one, 0, sizeof(LockStatTrancheTotals) * num_rows);
	*blocks = 0;
	*wait_ns = 0;
	cut->one_kind = lockstat_live_kind(slot);
	if (cut->one_kind < 0)
		return false;
	for (int row = 0; row < num_rows; row++)
	{
		lockstat_add_row(&one[row], &rows[row], &lockstat_no_holds);
		*blocks += one[row].counts[LOCKSTAT_BLOCKS];
		*wait_ns += one[row].counts[LOCKSTAT_WAIT_TIME_NS];
	}
	return true;
}

/*
 * Add the slot that lockstat_lwlock_cut_rows() read last to the cut, to its
 * owner's kind.
 */
void
lockstat_lwlock_cut_add(LockStatLWLockCut *cut)
{
	int			num_rows = lockstat_state->num_rows;
	LockStatTrancheTotals *to;

	if (cut->one_kind < 0)
		return;
	to = cut->totals + cut->one_kind * num_rows;
	for (int row = 0; row < num_rows; row++)
		for (int c = 0; c < LOCKSTAT_NUM_COUNTERS; c++)
			to[row].counts[c] += cut->one[row].counts[c];
}

/*
 * The last step of a reset on the LWLock counters, once every slot's cut is
 * in: make the cut the new baseline, let readers read the distribution's
 * half of generation "generation", and move stats_reset, which it returns.
 * Releases exit_lock and frees the cut.
 */
TimestampTz
lockstat_lwlock_reset_finish(LockStatLWLockCut *cut, uint64 generation)
{
	TimestampTz now;

	LWLockRelease(lockstat_state->exit_lock);

	LWLockAcquire(lockstat_state->lock, LW_EXCLUSIVE);
	for (int e = 0; e < LOCKSTAT_NUM_KINDS * lockstat_state->num_rows; e++)
		lockstat_raise_totals(&lockstat_state->baseline[e], &cut->totals[e]);
	lockstat_state->wait_half = (int) (generation & 1);

	/* stats_reset only moves forward, even if the clock steps back */
	now = GetCurrentTimestamp();
	if (now > lockstat_state->stats_reset)
		lockstat_state->stats_reset = now;
	now = lockstat_state->stats_reset;
	LWLockRelease(lockstat_state->lock);

	pfree(cut->one);
	pfree(cut->totals);
	pfree(cut);
	return now;
}

/*
 * Time of the last reset, or of shared memory initialisation.  Errors:
 * 55000 if not preloaded.
 */
TimestampTz
lockstat_last_reset(void)
{
	TimestampTz result;

	LWLockAcquire(lockstat_state->lock, LW_SHARED);
	result = lockstat_state->stats_reset;
	LWLockRelease(lockstat_state->lock);
	return result;
}
