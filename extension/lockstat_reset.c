/*-------------------------------------------------------------------------
 *
 * lockstat_reset.c
 *	  pg_lockstat_reset(): the sequence of steps over the three counters
 *
 * A reset starts every counter again from zero: the LWLock counters and
 * their wait distribution (lockstat_lwlock.c), the spin waits per call site
 * (lockstat_spin.c) and the blocked calls per query (lockstat_query.c).  No
 * process's own counters are written: the LWLock and spin counters get new
 * baselines, the per-query counts a new generation.
 *
 * The LWLock counters, their distribution and the per-query counts are cut
 * at the same moment, process by process (lockstat_query_cut_slot()): a
 * blocked call that ends while the reset runs counts before the reset in
 * the baseline, the per-query counts and the distribution, or after it in
 * all three.  So per tranche, pg_lwlock_query_stats and
 * pg_lwlock_wait_histogram add up to pg_lwlock_stats' blocks whatever ran
 * meanwhile (t/055).  Each process counts its blocked calls into the
 * per-query generation and the half of the distribution that its cut gave
 * it; readers read the half of the generation that the last complete reset
 * started.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_reset.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lockstat.h"

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

	/* first the spin sites, whose reset alone can fail */
	lockstat_spin_reset();

	/*
	 * The per-query counts start again at the same cut as the baseline:
	 * lockstat_query_reset_start() empties them holding the per-query lock,
	 * which we keep until stats_reset has moved.  A reader that sees them
	 * empty took that lock later, and so sees the new stats_reset; and a
	 * block of ours on the locks below counts after the reset in both.
	 */
	generation = lockstat_query_reset_start();
	cut = lockstat_lwlock_reset_begin(generation);
	for (int slot = 0; slot < lockstat_num_slots(); slot++)
	{
		lockstat_query_cut_slot(slot, lockstat_lwlock_cut_rows, cut);
		lockstat_lwlock_cut_add(cut);
	}
	now = lockstat_lwlock_reset_finish(cut, generation);
	lockstat_query_reset_finish();
	return now;
}
