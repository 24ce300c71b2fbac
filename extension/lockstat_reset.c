/*-------------------------------------------------------------------------
 *
 * lockstat_reset.c
 *	  pg_lockstat_reset(): the sequence of steps over the counters, and the
 *	  cut that keeps the LWLock views in step
 *
 * A reset starts every counter again from zero: the LWLock counters
 * (lockstat_lwlock_sum.c), their distributions and hold table
 * (lockstat_hist.c), the spin waits per call site (lockstat_spin_sum.c)
 * and the blocked calls per query (lockstat_query_table.c).  No process's
 * own counters are written: the LWLock and spin counters get new
 * baselines, the per-query counts a new generation.  This file owns the
 * rules that tie the LWLock modules together at a reset; their headers
 * refer here.
 *
 * The invariant: a blocked LWLock call counts before a reset in
 * pg_lwlock_stats, pg_lwlock_query_stats and pg_lwlock_wait_histogram
 * alike, or after it in all three, whatever ran meanwhile.  So per tranche
 * the last two add up to pg_lwlock_stats' blocks and wait time.  The core
 * stores a blocked call's counts in the process's rows a few instructions
 * before or after it calls the wait hook, which counts the call per query
 * and in the distribution (lockstat_query_record_wait()); no one moment
 * of the reset would do for every process, so each process slot gets a cut
 * of its own, taken by lockstat_reset_cut_slot().
 *
 * Rules:
 *
 * - Generations.  The per-query counts have a generation, which each
 *	 reset raises (lockstat_query_reset_start(), which also empties the
 *	 shared per-query table and the new generation's residual rows).  The
 *	 reset writes no process table: at a slot's cut it sets the slot's
 *	 target_generation (lockstat_query_slot_release()), and the owner counts
 *	 in that generation from its next write on, dropping its table's counts
 *	 of an older one then.  Readers skip the tables of an older generation.
 *
 * - Halves.  The distributions and the hold table (lockstat_hist.c) and
 *	 the per-query residual rows have two halves, one for even and one for
 *	 odd generations: a process adds to the half of the generation it counts
 *	 in, so that processes on either side of their cut count in their own
 *	 half while the reset runs.  The reset empties the new generation's half
 *	 before any process counts in it (every process took its cut of the
 *	 generation before, so the half of two generations ago is free);
 *	 readers read the half of the last complete reset (wait_half, set with
 *	 the baseline).
 *
 * - The baseline.  The LWLock counters' new baseline is the totals of
 *	 exited processes plus, slot by slot, each live process's rows as read
 *	 at its cut (lockstat_lwlock_reset_begin(), lockstat_lwlock_cut_rows(),
 *	 lockstat_lwlock_cut_add()); exit_lock is held shared meanwhile, so no
 *	 process folds its rows into those totals.  lockstat_lwlock_reset_finish()
 *	 raises the baseline to the cut and moves stats_reset.
 *
 * - The handshake.  A slot's cut is a moment when its owner writes nothing
 *	 and its rows' blocks and wait time add up to what its hook counted
 *	 (hooked_blocks and hooked_wait_ns): then each of its blocked calls is
 *	 both in the rows read and in the old generation, or in neither and
 *	 counted after the reset everywhere.  The reset sets the slot's
 *	 "resetting", and with a full barrier on both sides (Dekker's pattern)
 *	 either the owner sees it when it starts a write, and waits, or the
 *	 reset sees changecount odd, and lets the owner go on
 *	 (lockstat_query_slot_hold(), lockstat_query_begin_write()).  While held,
 *	 the owner's hooked sums stand still; the reset reads the owner's rows,
 *	 and if their sums agree, sets target_generation as it lets the owner
 *	 go: the owner's later calls count after the reset in all three views.
 *	 If they differ, the owner is between the core's store and its hook: the
 *	 reset lets it go on and tries again, showing wait event "Extension".
 *	 A process stopped there (by a debugger, say) would stop the reset, and
 *	 with it every process exit (exit_lock): after
 *	 LOCKSTAT_RESET_CUT_MAX_USEC the cut is taken as it is, with a WARNING
 *	 that the views may disagree by that process's call.
 *
 * - Locks.  The reset empties the per-query counts first and holds their
 *	 lock, query_lock, until stats_reset has moved: while it takes the cuts
 *	 (holding exit_lock shared) and while it holds the "pg_lockstat" lock to
 *	 store the baseline and stats_reset.  Nobody takes query_lock holding
 *	 either of those, so this cannot deadlock, and no fold or reader sees a
 *	 reset half done.  A reader that sees the per-query counts empty took
 *	 query_lock after the reset, and sees its stats_reset; a block of the
 *	 resetting process on query_lock or on the "pg_lockstat" lock counts
 *	 when it releases that lock, after the reset in all three views (its
 *	 own cut, taken while the block was not counted anywhere yet, holds as
 *	 any other).  A hook may wait for the cut of its own slot (a few loads),
 *	 never holding the LWLock it waited for, perhaps holding others: the
 *	 reset takes no LWLock while it takes cuts, so it never waits for them.
 *
 * - The spin sites are reset first: their reset alone can fail, and does so
 *	 before anything is reset.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_reset.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "pgstat.h"
#include "portability/instr_time.h"
#include "utils/wait_event.h"

#include "lockstat.h"

/*
 * how long a reset waits for a process in the middle of counting a call
 * before it takes the cut anyway; see lockstat_reset_cut_slot()
 */
#define LOCKSTAT_RESET_CUT_MAX_USEC	INT64CONST(60000000)

/*
 * Has the cut of process slot "slot", begun at "start", waited for its
 * owner for LOCKSTAT_RESET_CUT_MAX_USEC?  Then read the owner's rows into
 * the cut as they are, with a WARNING, and return true.  Cannot fail.
 */
static bool
lockstat_reset_cut_overdue(int slot, LockStatLWLockCut *cut,
						   instr_time start)
{
	instr_time	now;
	uint64		blocks;
	uint64		wait_ns;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, start);
	if (INSTR_TIME_GET_MICROSEC(now) < LOCKSTAT_RESET_CUT_MAX_USEC)
		return false;

	(void) lockstat_lwlock_cut_rows(slot, cut, &blocks, &wait_ns);
	ereport(WARNING,
			(errmsg("pg_lockstat could not take an exact cut of process number %d for the reset", slot),
			 errdetail("The process has been in the middle of counting a blocked LWLock call for more than %d s.",
					   (int) (LOCKSTAT_RESET_CUT_MAX_USEC / 1000000)),
			 errhint("pg_lwlock_query_stats and pg_lwlock_stats may differ by that call until the next reset.")));
	return true;
}

/*
 * Take the cut of process slot "slot" (the handshake of the header): add
 * its owner's rows to the baseline "cut" and move the owner to the
 * per-query generation that the reset started, at one moment when the
 * owner writes nothing and its rows agree with its hook.  Called between
 * lockstat_lwlock_reset_begin() and lockstat_lwlock_reset_finish().  While
 * it waits for an owner, the resetting session shows wait event
 * "Extension".  Cannot fail.
 */
static void
lockstat_reset_cut_slot(int slot, LockStatLWLockCut *cut)
{
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	for (int tries = 0;; tries++)
	{
		bool		done = false;
		uint64		hooked_blocks;
		uint64		hooked_wait_ns;
		uint64		blocks;
		uint64		wait_ns;

		if (lockstat_query_slot_hold(slot, &hooked_blocks, &hooked_wait_ns))
			done = !lockstat_lwlock_cut_rows(slot, cut, &blocks, &wait_ns) ||
				(blocks == hooked_blocks && wait_ns == hooked_wait_ns);
		if (!done)
			done = lockstat_reset_cut_overdue(slot, cut, start);
		lockstat_query_slot_release(slot, done);

		if (done)
		{
			if (tries > 0)
				pgstat_report_wait_end();
			lockstat_lwlock_cut_add(cut);
			return;
		}

		/* the owner is writing, or between the core's counts and the hook */
		if (tries == 0)
			pgstat_report_wait_start(PG_WAIT_EXTENSION);
		lockstat_pause(tries);
	}
}

/*
 * Reset every counter; returns the new stats_reset.  The caller has checked
 * that counting works.  Errors: 55P03 from the spin-wait reset, before
 * anything is reset, if a process has been writing its spin counters for
 * too long (see lockstat_spin_reset()); nothing after it can fail.
 */
TimestampTz
lockstat_reset(void)
{
	LockStatLWLockCut *cut;
	uint64		generation;
	TimestampTz now;

	lockstat_spin_reset();

	/* returns holding query_lock, until lockstat_query_reset_finish() */
	generation = lockstat_query_reset_start();
	cut = lockstat_lwlock_reset_begin(generation);
	for (int slot = 0; slot < lockstat_num_slots(); slot++)
		lockstat_reset_cut_slot(slot, cut);
	now = lockstat_lwlock_reset_finish(cut, generation);
	lockstat_query_reset_finish();
	return now;
}
