/*-------------------------------------------------------------------------
 *
 * lockstat_hist.c
 *	  The distributions of blocked LWLock calls by wait time and of sampled
 *	  holds by hold time, and the shared hold table: the counts behind
 *	  pg_lwlock_wait_histogram, pg_lwlock_hold_histogram and the hold
 *	  columns of the LWLock views
 *
 * They are parts of the shared counter array (lockstat_lwlock.c), written
 * only from the core's hooks on the blocked and sampled paths, through
 * lockstat_query.c, which counts each call and sample in the same write of
 * the process's per-query table.
 *
 * Locking rules:
 *
 * - The distributions of blocked calls by wait time (lockstat_record_wait)
 *	 and of sampled holds by hold time, one per mode (lockstat_record_hold),
 *	 are shared tables of atomic counters per row and bucket, plus an
 *	 atomic maximum per row: blocked calls and samples are rare and slow
 *	 next to an atomic add.
 *
 * - Sampled holds and their hold time are not kept per process but in a
 *	 shared hold table of atomic counters per kind of process and row
 *	 (LOCKSTAT_HOLD_WORDS each): one process's holds are not told apart from
 *	 others of its kind (pg_lwlock_backend_stats shows them as NULL).
 *	 Readers read the hold table before they sum the rows, so that no row
 *	 shows more samples than acquisitions.
 *
 * - Both have two halves, one for even and one for odd per-query
 *	 generations: a process adds to the half of the generation it counts
 *	 in, and readers read the half of the last complete reset (wait_half).
 *	 A reset empties the new half before any process counts in it
 *	 (lockstat_hist_clear_half()); the rules are in lockstat_reset.c.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_hist.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/atomics.h"
#include "storage/s_lock.h"

#include "lockstat.h"
#include "lockstat_lwlock_internal.h"

/* the half of the distributions for a per-query generation */
static inline pg_atomic_uint64 *
lockstat_wait_half(uint64 generation)
{
	return lockstat_state->wait_hist + (generation & 1) *
		LOCKSTAT_NUM_HISTS * LOCKSTAT_HIST_WORDS(lockstat_state->num_rows);
}

/* distribution "hist" in the half of a per-query generation */
static inline pg_atomic_uint64 *
lockstat_hist(uint64 generation, LockStatHist hist)
{
	return lockstat_wait_half(generation) +
		hist * LOCKSTAT_HIST_WORDS(lockstat_state->num_rows);
}

/*
 * The hold counts of kind "kind" and row "row" in the half of the hold table
 * for a per-query generation: LOCKSTAT_HOLD_WORDS counters.
 */
static inline pg_atomic_uint64 *
lockstat_holds(uint64 generation, int kind, int row)
{
	int			num_rows = lockstat_state->num_rows;

	return lockstat_state->holds +
		(generation & 1) * LOCKSTAT_HOLDS_HALF_WORDS(num_rows) +
		((Size) kind * num_rows + row) * LOCKSTAT_HOLD_WORDS;
}

/*
 * Part of a reset (lockstat_lwlock_reset_begin()), once the per-query
 * counts have started generation "generation": empty that generation's
 * half of the distributions and of the hold table, in which no process
 * counts before its cut.  Cannot fail.
 */
void
lockstat_hist_clear_half(uint64 generation)
{
	int			num_rows = lockstat_state->num_rows;
	pg_atomic_uint64 *hist = lockstat_wait_half(generation);
	pg_atomic_uint64 *holds = lockstat_holds(generation, 0, 0);

	for (int i = 0; i < LOCKSTAT_NUM_HISTS * LOCKSTAT_HIST_WORDS(num_rows); i++)
		pg_atomic_write_u64(&hist[i], 0);
	for (int i = 0; i < LOCKSTAT_HOLDS_HALF_WORDS(num_rows); i++)
		pg_atomic_write_u64(&holds[i], 0);
}

/*
 * Copy half "half" of the hold table (that of the last complete reset,
 * wait_half) into holds[LOCKSTAT_NUM_KINDS * num_rows], entry kind *
 * num_rows + row.  Cannot fail.
 */
void
lockstat_read_holds(int half, LockStatHoldRow *holds)
{
	int			num_rows = lockstat_state->num_rows;

	for (int e = 0; e < LOCKSTAT_NUM_KINDS * num_rows; e++)
	{
		pg_atomic_uint64 *h = lockstat_holds(half, e / num_rows, e % num_rows);

		for (int m = 0; m < 2; m++)
		{
			holds[e].samples[m] = pg_atomic_read_u64(&h[m]);
			holds[e].hold_ns[m] = pg_atomic_read_u64(&h[2 + m]);
		}
	}
}

/*
 * Lower bound of a bucket in microseconds.
 */
uint64
lockstat_wait_bucket_lower_us(int bucket)
{
	return bucket == 0 ? 0 : UINT64CONST(1) << (bucket - 1);
}

/* add a duration of ns nanoseconds to row "row" of a distribution */
static void
lockstat_hist_add(pg_atomic_uint64 *hist, int row, uint64 ns)
{
	pg_atomic_fetch_add_u64(&hist[row * LOCKSTAT_WAIT_BUCKETS +
								  spin_wait_bucket(ns)], 1);
	lockstat_atomic_max_u64(&hist[lockstat_state->num_rows *
								  LOCKSTAT_WAIT_BUCKETS + row], ns);
}

/*
 * Count one blocked call, which waited wait_ns nanoseconds in all, on an
 * LWLock of counter row row, in the half of the distribution of the
 * per-query generation that the calling process counts in (see
 * lockstat_reset.c).  Called from lockstat_query_record_wait() on the
 * blocked path: no locks, no allocation, no errors.
 */
void
lockstat_record_wait(int row, uint64 wait_ns, uint64 generation)
{
	if (lockstat_state == NULL || row < 0 || row >= lockstat_state->num_rows)
		return;

	lockstat_hist_add(lockstat_hist(generation, LOCKSTAT_HIST_WAIT), row,
					  wait_ns);
}

/*
 * Count one sampled hold of an LWLock of counter row "row" in mode "mode"
 * (LW_EXCLUSIVE or LW_SHARED), which lasted hold_ns nanoseconds: in the
 * hold table under this process's kind, and in the distribution of that
 * mode, both in the half of the per-query generation that the process
 * counts in.  Called from
 * lockstat_query_record_hold(), inside a write of the process's per-query
 * table, after the core released the lock: no locks, no allocation, no
 * errors.  Nothing is counted once the process has given up its slot
 * (lockstat_detach_process()), as a hold that ProcKill's
 * LWLockReleaseAll() ends can be.
 */
void
lockstat_record_hold(int row, int mode, uint64 hold_ns, uint64 generation)
{
	pg_atomic_uint64 *holds;
	int			m = (mode == LW_SHARED);

	if (lockstat_my_rows == NULL || row < 0 || row >= lockstat_state->num_rows)
		return;

	holds = lockstat_holds(generation, lockstat_my_kind, row);
	pg_atomic_fetch_add_u64(&holds[m], 1);
	pg_atomic_fetch_add_u64(&holds[2 + m], hold_ns);

	lockstat_hist_add(lockstat_hist(generation, m == 0 ? LOCKSTAT_HIST_HOLD_EX :
									LOCKSTAT_HIST_HOLD_SH), row, hold_ns);
}

/*
 * Copy distribution "which" since the last reset: counts[num_rows *
 * LOCKSTAT_WAIT_BUCKETS] and max_ns[num_rows] (either may be NULL): the
 * waits of blocked calls (LOCKSTAT_HIST_WAIT) or the sampled holds of one
 * mode.  Errors: 55000 if not preloaded.
 */
void
lockstat_read_hist(LockStatHist which, uint64 *counts, uint64 *max_ns)
{
	int			num_rows;
	pg_atomic_uint64 *hist;

	num_rows = lockstat_state->num_rows;
	hist = lockstat_hist(((volatile LockStatSharedState *) lockstat_state)->wait_half,
						 which);

	if (counts)
	{
		for (int i = 0; i < num_rows * LOCKSTAT_WAIT_BUCKETS; i++)
			counts[i] = pg_atomic_read_u64(&hist[i]);
	}
	if (max_ns)
	{
		for (int row = 0; row < num_rows; row++)
			max_ns[row] = pg_atomic_read_u64(&hist[num_rows * LOCKSTAT_WAIT_BUCKETS + row]);
	}
}
