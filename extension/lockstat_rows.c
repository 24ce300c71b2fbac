/*-------------------------------------------------------------------------
 *
 * lockstat_rows.c
 *	  The rows of the counter tables and the tranches they count for
 *
 * A process slot has one row per tranche ID below max_tranches, the
 * overflow row for the higher ones, and one row per lock of the fixed part
 * of the main LWLock array (NUM_FIXED_LWLOCKS: individual locks and the
 * partitions of BufferMapping, LockManager and PredicateLockManager); see
 * lockstat_lwlock.c.  This file maps rows to tranches and back, and folds
 * the rows of the fixed array's locks into their tranches' rows for the
 * readers that report per tranche: the views, and the per-query counts,
 * which count every call under its tranche's row.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/lwlock.h"

#include "lockstat.h"

/*
 * Row of the overflow tranche: tranche IDs at or above max_tranches.  Rows
 * after it belong to the locks of the fixed main LWLock array.  Errors:
 * 55000 if not preloaded.
 */
int
lockstat_overflow_row(void)
{
	return lockstat_num_rows() - 1 - NUM_FIXED_LWLOCKS;
}

/*
 * The tranche ID that row counts for, or -1 for the overflow row.  For the
 * row of a lock of the fixed main array, *partition is set to the lock's
 * partition number within BufferMapping, LockManager or
 * PredicateLockManager, or to -1 for an individual LWLock; otherwise it is
 * set to -1.  Errors: 55000 if not preloaded.
 */
int
lockstat_row_tranche(int row, int *partition)
{
	int			overflow = lockstat_overflow_row();
	int			index;

	*partition = -1;
	if (row < overflow)
		return row;
	if (row == overflow)
		return -1;

	index = row - overflow - 1;
	Assert(index < NUM_FIXED_LWLOCKS);
	if (index >= PREDICATELOCK_MANAGER_LWLOCK_OFFSET)
		*partition = index - PREDICATELOCK_MANAGER_LWLOCK_OFFSET;
	else if (index >= LOCK_MANAGER_LWLOCK_OFFSET)
		*partition = index - LOCK_MANAGER_LWLOCK_OFFSET;
	else if (index >= BUFFER_MAPPING_LWLOCK_OFFSET)
		*partition = index - BUFFER_MAPPING_LWLOCK_OFFSET;

	/* the tranche the postmaster gave the lock; it never changes */
	return MainLWLockArray[index].lock.tranche;
}

/*
 * The row that reports of row "row" per tranche go to: the row itself for a
 * tranche or the overflow row, and for the row of a lock of the fixed main
 * array, its tranche's row (or the overflow row); -1 for a row out of
 * range.  Cheap enough for the blocked path (lockstat_query.c's hook).
 */
int
lockstat_tranche_row(int row)
{
	int			overflow = lockstat_overflow_row();
	int			tranche;

	if (row <= overflow)
		return row;
	if (row > overflow + NUM_FIXED_LWLOCKS)
		return -1;
	/* the tranche the postmaster gave the lock; it never changes */
	tranche = MainLWLockArray[row - overflow - 1].lock.tranche;
	return Min(tranche, overflow);
}

/*
 * Fold per-row values into their tranches' rows: rows[] holds "width"
 * values per row, lockstat_num_rows() rows; each row of a lock of the fixed
 * main array is added to (or, with LOCKSTAT_FOLD_MAX, raises) the values
 * of its tranche's row, and is cleared.
 */
void
lockstat_fold_instance(uint64 *rows, int width, LockStatFold fold)
{
	int			num_rows = lockstat_num_rows();

	for (int row = lockstat_overflow_row() + 1; row < num_rows; row++)
	{
		uint64	   *to = &rows[lockstat_tranche_row(row) * width];
		uint64	   *from = &rows[row * width];

		for (int w = 0; w < width; w++)
		{
			if (fold == LOCKSTAT_FOLD_SUM)
				to[w] += from[w];
			else
				to[w] = Max(to[w], from[w]);
			from[w] = 0;
		}
	}
}

/*
 * Make totals[] (lockstat_num_rows() entries) per tranche: the rows of the
 * fixed main array's locks are added to their tranches' rows and cleared.
 */
void
lockstat_fold_instance_rows(LockStatTrancheTotals *totals)
{
	StaticAssertStmt(sizeof(LockStatTrancheTotals) ==
					 sizeof(uint64) * LOCKSTAT_NUM_COUNTERS,
					 "LockStatTrancheTotals must be an array of counters");
	lockstat_fold_instance((uint64 *) totals, LOCKSTAT_NUM_COUNTERS,
						   LOCKSTAT_FOLD_SUM);
}
