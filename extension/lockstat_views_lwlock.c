/*-------------------------------------------------------------------------
 *
 * lockstat_views_lwlock.c
 *	  SQL-callable functions of pg_lockstat behind the LWLock views
 *	  pg_lwlock_stats, pg_lwlock_wait_histogram, pg_lwlock_hold_histogram,
 *	  pg_lwlock_instance_stats, pg_lwlock_backend_stats and
 *	  pg_lwlock_backend_type_stats
 *
 * They read the LWLock counters, summed by lockstat_lwlock_sum.c and
 * distributed by lockstat_hist.c: per tranche, per lock of the main array,
 * per process and per kind of process.
 *
 * One C function per SQL function of pg_lockstat--1.0.sql, of the same
 * name, with one result shape: each checks that its SQL definition has the
 * number of columns it fills.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_views_lwlock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "lockstat_srf.h"

PG_FUNCTION_INFO_V1(pg_lwlock_stats);
PG_FUNCTION_INFO_V1(pg_lwlock_wait_histogram);
PG_FUNCTION_INFO_V1(pg_lwlock_hold_histogram);
PG_FUNCTION_INFO_V1(pg_lwlock_instance_stats);
PG_FUNCTION_INFO_V1(pg_lwlock_backend_stats);
PG_FUNCTION_INFO_V1(pg_lwlock_backend_type_stats);

/* result columns of each function, as pg_lockstat--1.0.sql declares them */
#define PG_LWLOCK_STATS_COLS			6
#define PG_LWLOCK_WAIT_HISTOGRAM_COLS	5
#define PG_LWLOCK_HOLD_HISTOGRAM_COLS	6
#define PG_LWLOCK_INSTANCE_STATS_COLS	6
#define PG_LWLOCK_BACKEND_STATS_COLS	5
#define PG_LWLOCK_BACKEND_TYPE_STATS_COLS	4

/* has this backend warned about the overflow row yet? */
static bool lockstat_overflow_warned = false;

/*
 * pg_lwlock_stats() returns setof record
 *
 * One row per LWLock tranche with any activity since the last reset:
 *	tranche_id int4		tranche ID; NULL for the overflow row, which sums all
 *						IDs >= pg_lockstat.max_tranches
 *	tranche text		name as pg_stat_activity.wait_event shows it
 *	counters pg_lwlock_counters	the counters of lockstat_counters.h: counts
 *						as int8, wait_time and the hold times as float8 (ms)
 *	max_wait_time float8	longest wait of one blocked call since the last
 *						reset (ms)
 *	max_ex_hold_time float8, max_sh_hold_time float8	longest sampled hold
 *						in exclusive and in shared mode since the last
 *						reset (ms)
 * The counters come from the core patch's counting points in lwlock.c, the
 * successors of LWLOCK_STATS' sh_acquire, ex_acquire, block, spin_delay and
 * dequeue_self; the longest wait from its lwlock_stats_wait_hook, the hold
 * samples and times from its lwlock_stats_hold_hook.  Errors:
 * 55000 if pg_lockstat is not preloaded; 42804 if pg_lwlock_counters does
 * not match the library.  The first time a backend shows an overflow row,
 * it also raises a WARNING.
 */
Datum
pg_lwlock_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lockstat_begin_srf(fcinfo, PG_LWLOCK_STATS_COLS);
	TupleDesc	counters_desc = lockstat_counters_desc(rsinfo->setDesc, 2);
	LockStatTrancheTotals *totals;
	uint64	   *max_ns[LOCKSTAT_NUM_HISTS];
	int			num_rows;
	int			overflow_row;

	num_rows = lockstat_num_rows();
	overflow_row = lockstat_overflow_row();
	totals = palloc(sizeof(LockStatTrancheTotals) * num_rows);
	lockstat_read_totals(totals, false);
	lockstat_fold_instance_rows(totals);
	for (int h = 0; h < LOCKSTAT_NUM_HISTS; h++)
	{
		max_ns[h] = palloc(sizeof(uint64) * num_rows);
		lockstat_read_hist((LockStatHist) h, NULL, max_ns[h]);
		lockstat_fold_instance(max_ns[h], 1, LOCKSTAT_FOLD_MAX);
	}

	for (int row = 0; row <= overflow_row; row++)
	{
		LockStatTrancheTotals *t = &totals[row];
		Datum		values[PG_LWLOCK_STATS_COLS];
		bool		nulls[PG_LWLOCK_STATS_COLS] = {0};
		bool		overflow = (row == overflow_row);
		int			i = 0;

		if (!lockstat_totals_active(t))
			continue;

		if (overflow && !lockstat_overflow_warned)
		{
			ereport(WARNING,
					(errmsg("some LWLock tranches are not counted separately"),
					 errdetail("Tranche IDs of %d and above are summed in the row \"overflow\".",
							   overflow_row),
					 errhint("Raise \"pg_lockstat.max_tranches\" and restart the server.")));
			lockstat_overflow_warned = true;
		}
		i = lockstat_put_tranche(values, nulls, i, row, overflow);
		values[i++] = lockstat_counters_value(counters_desc, t, true);
		for (int h = 0; h < LOCKSTAT_NUM_HISTS; h++)
			values[i++] = lockstat_ns_as_ms(max_ns[h][row]);
		Assert(i == PG_LWLOCK_STATS_COLS);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	pfree(totals);
	for (int h = 0; h < LOCKSTAT_NUM_HISTS; h++)
		pfree(max_ns[h]);
	return (Datum) 0;
}

/*
 * Put the rows of distribution "which" since the last reset, one per tranche
 * and non-empty bucket, into a materialized SRF's result: tranche_id,
 * tranche, then the text "mode" unless it is NULL, then the bucket
 * (lockstat_put_bucket()).  The main array's locks count in their
 * tranches.
 */
static void
lockstat_put_histogram(ReturnSetInfo *rsinfo, LockStatHist which,
					   const char *mode)
{
	int			num_rows = lockstat_num_rows();
	int			overflow_row = lockstat_overflow_row();
	int			natts = rsinfo->setDesc->natts;
	uint64	   *counts;
	Datum	   *values = palloc(sizeof(Datum) * natts);
	bool	   *nulls = palloc(sizeof(bool) * natts);

	counts = palloc(sizeof(uint64) * num_rows * LOCKSTAT_WAIT_BUCKETS);
	lockstat_read_hist(which, counts, NULL);
	lockstat_fold_instance(counts, LOCKSTAT_WAIT_BUCKETS, LOCKSTAT_FOLD_SUM);

	for (int row = 0; row <= overflow_row; row++)
	{
		for (int b = 0; b < LOCKSTAT_WAIT_BUCKETS; b++)
		{
			uint64		count = counts[row * LOCKSTAT_WAIT_BUCKETS + b];
			int			i = 0;

			if (count == 0)
				continue;

			memset(nulls, 0, sizeof(bool) * natts);
			i = lockstat_put_tranche(values, nulls, i, row, row == overflow_row);
			if (mode)
				values[i++] = CStringGetTextDatum(mode);
			i = lockstat_put_bucket(values, nulls, i, b, count);
			Assert(i == natts);

			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}

	pfree(counts);
	pfree(values);
	pfree(nulls);
}

/*
 * pg_lwlock_wait_histogram() returns setof record
 *
 * The distribution of the waits of blocked LWLock calls since the last
 * reset, one row per tranche and non-empty bucket:
 *	tranche_id int4			tranche ID; NULL for the overflow row
 *	tranche text			name as pg_stat_activity.wait_event shows it
 *	bucket_lower_us int8	the bucket holds calls that waited at least this
 *							many microseconds
 *	bucket_upper_us int8	and less than this many; NULL for the last bucket
 *							(4194304 us and more)
 *	count int8				blocked calls in the bucket (count)
 * Buckets are powers of two (log2 histogram); the first is [0, 1) us.  Each
 * blocked call counts once, with its whole wait, from the core patch's
 * lwlock_stats_wait_hook, so a tranche's counts add up to its blocks.
 * Errors: 55000 if pg_lockstat is not preloaded.
 */
Datum
pg_lwlock_wait_histogram(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lockstat_begin_srf(fcinfo,
											   PG_LWLOCK_WAIT_HISTOGRAM_COLS);

	lockstat_put_histogram(rsinfo, LOCKSTAT_HIST_WAIT, NULL);
	return (Datum) 0;
}

/*
 * pg_lwlock_hold_histogram() returns setof record
 *
 * The distribution of the sampled LWLock holds (pg_lockstat.hold_sample_every)
 * since the last reset, one row per tranche, mode and non-empty bucket:
 *	tranche_id int4, tranche text	as pg_lwlock_wait_histogram()
 *	mode text				'exclusive' or 'shared'
 *	bucket_lower_us int8, bucket_upper_us int8	as pg_lwlock_wait_histogram(),
 *							for the time from the end of the acquisition to
 *							the release
 *	count int8				sampled holds in the bucket (count)
 * Each sample counts once, from the core patch's lwlock_stats_hold_hook, so
 * that a tranche's counts of a mode add up to its ex_hold_samples or
 * sh_hold_samples in pg_lwlock_stats.  Errors: 55000 if pg_lockstat is not
 * preloaded.
 */
Datum
pg_lwlock_hold_histogram(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lockstat_begin_srf(fcinfo,
											   PG_LWLOCK_HOLD_HISTOGRAM_COLS);

	lockstat_put_histogram(rsinfo, LOCKSTAT_HIST_HOLD_EX, "exclusive");
	lockstat_put_histogram(rsinfo, LOCKSTAT_HIST_HOLD_SH, "shared");
	return (Datum) 0;
}

/*
 * Put a row for each tranche (and the overflow row) with any activity in
 * totals[lockstat_num_rows()], folded per tranche, into a materialized
 * SRF's result: the nlead columns of lead, then tranche_id, tranche and
 * the counters (a column of type counters_desc, lockstat_counters_desc()),
 * their hold counters NULL unless holds.  The SRF's natts must be nlead + 3.
 */
static void
lockstat_put_tranche_rows(ReturnSetInfo *rsinfo, TupleDesc counters_desc,
						  const LockStatTrancheTotals *totals,
						  const Datum *lead, int nlead, bool holds)
{
	int			overflow_row = lockstat_overflow_row();

	/* the widest caller */
	Assert(nlead + 3 <= PG_LWLOCK_BACKEND_STATS_COLS);
	Assert(rsinfo->setDesc->natts == nlead + 3);
	for (int row = 0; row <= overflow_row; row++)
	{
		const LockStatTrancheTotals *t = &totals[row];
		Datum		values[PG_LWLOCK_BACKEND_STATS_COLS];
		bool		nulls[PG_LWLOCK_BACKEND_STATS_COLS] = {0};
		int			i = 0;

		if (!lockstat_totals_active(t))
			continue;

		for (; i < nlead; i++)
			values[i] = lead[i];
		/* the overflow row: pg_lwlock_stats() warns about it */
		i = lockstat_put_tranche(values, nulls, i, row, row == overflow_row);
		values[i++] = lockstat_counters_value(counters_desc, t, holds);
		Assert(i == nlead + 3);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * pg_lwlock_backend_stats() returns setof record
 *
 * One row per live process and LWLock tranche with any activity since that
 * process started (attached its counter slot):
 *	pid int4			process ID, as pg_stat_activity.pid
 *	backend_type text	as pg_stat_activity.backend_type: the bgw_type of a
 *						background worker, else GetBackendTypeDesc()
 *	tranche_id int4, tranche text, counters pg_lwlock_counters: as in
 *	pg_lwlock_stats(), but the hold counters (ex_hold_samples,
 *	sh_hold_samples, ex_hold_time, sh_hold_time) are NULL: sampled holds
 *	are kept per kind of process (pg_lwlock_backend_type_stats), not per
 *	process
 * pg_lockstat_reset() does not affect these counts.  Processes that have
 * exited are not shown (pg_lwlock_stats keeps their counts).  Errors: 55000
 * if pg_lockstat is not preloaded; 42804 if pg_lwlock_counters does not
 * match the library.
 */
Datum
pg_lwlock_backend_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lockstat_begin_srf(fcinfo,
											   PG_LWLOCK_BACKEND_STATS_COLS);
	TupleDesc	counters_desc = lockstat_counters_desc(rsinfo->setDesc, 4);
	LockStatTrancheTotals *totals;
	LockStatProcess process;
	Datum		lead[2];
	int			num_rows;
	int			num_slots;

	num_rows = lockstat_num_rows();
	num_slots = lockstat_num_slots();
	totals = palloc(sizeof(LockStatTrancheTotals) * num_rows);

	for (int slot = 0; slot < num_slots; slot++)
	{
		Datum		backend_type;

		if (!lockstat_read_process(slot, &process, totals))
			continue;
		lockstat_fold_instance_rows(totals);

		/* as pg_stat_get_activity() shows it */
		if (process.backend_type == B_BG_WORKER && process.bgw_type[0] != '\0')
			backend_type = CStringGetTextDatum(process.bgw_type);
		else
			backend_type =
				CStringGetTextDatum(GetBackendTypeDesc(process.backend_type));

		lead[0] = Int32GetDatum(process.pid);
		lead[1] = backend_type;
		lockstat_put_tranche_rows(rsinfo, counters_desc, totals, lead, 2,
								  false);
	}

	pfree(totals);
	return (Datum) 0;
}

/*
 * pg_lwlock_backend_type_stats() returns setof record
 *
 * One row per kind of process and LWLock tranche with any activity since
 * the last reset, the counts of live and of exited processes alike:
 *	backend_type text	as pg_stat_io.backend_type ("client backend",
 *						"autovacuum worker", "checkpointer", "walsender",
 *						"background worker", ...), but "parallel worker" for
 *						parallel workers; a process's kind is the one it had
 *						when it attached its counter slot
 *	tranche_id int4, tranche text, counters pg_lwlock_counters: as in
 *	pg_lwlock_stats()
 * Per tranche, the rows of all kinds add up to pg_lwlock_stats' row read at
 * the same moment: they come from the same counting points, and from one
 * read of the counters.  Errors: 55000 if pg_lockstat is not preloaded;
 * 42804 if pg_lwlock_counters does not match the library.
 */
Datum
pg_lwlock_backend_type_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lockstat_begin_srf(fcinfo,
											   PG_LWLOCK_BACKEND_TYPE_STATS_COLS);
	TupleDesc	counters_desc = lockstat_counters_desc(rsinfo->setDesc, 3);
	LockStatTrancheTotals *totals;
	int			num_rows;

	num_rows = lockstat_num_rows();
	totals = palloc(sizeof(LockStatTrancheTotals) * LOCKSTAT_NUM_KINDS *
					num_rows);
	lockstat_read_totals(totals, true);

	for (int kind = 0; kind < LOCKSTAT_NUM_KINDS; kind++)
	{
		LockStatTrancheTotals *kind_totals = totals + kind * num_rows;
		Datum		lead[1];

		lockstat_fold_instance_rows(kind_totals);
		lead[0] = CStringGetTextDatum(lockstat_kind_name(kind));
		lockstat_put_tranche_rows(rsinfo, counters_desc, kind_totals, lead, 1,
								  true);
	}

	pfree(totals);
	return (Datum) 0;
}

/*
 * pg_lwlock_instance_stats() returns setof record
 *
 * The counters of each lock of the fixed main LWLock array with any activity
 * since the last reset: the individual LWLocks (ProcArray, XidGen, WALWrite,
 * ...) and each partition of BufferMapping, LockManager and
 * PredicateLockManager.
 *	tranche_id int4			tranche ID of the lock
 *	tranche text			tranche name
 *	partition int4			partition number within its tranche; NULL for
 *							an individual LWLock
 *	main_index int4			position in the main LWLock array
 *	counters pg_lwlock_counters	as pg_lwlock_stats
 *	max_wait_time float8	longest wait of one blocked call for this lock (ms)
 * They come from the same counting points as pg_lwlock_stats, which shows
 * their sums per tranche: the core patch gives each of these locks a row of
 * its own (LWLockStatsMainArrayRows).  Errors: 55000 if not preloaded;
 * 42804 if pg_lwlock_counters does not match the library.
 */
Datum
pg_lwlock_instance_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lockstat_begin_srf(fcinfo,
											   PG_LWLOCK_INSTANCE_STATS_COLS);
	TupleDesc	counters_desc = lockstat_counters_desc(rsinfo->setDesc, 4);
	LockStatTrancheTotals *totals;
	uint64	   *max_ns;
	int			num_rows;
	int			overflow_row;

	num_rows = lockstat_num_rows();
	overflow_row = lockstat_overflow_row();
	totals = palloc(sizeof(LockStatTrancheTotals) * num_rows);
	max_ns = palloc(sizeof(uint64) * num_rows);
	lockstat_read_totals(totals, false);
	lockstat_read_hist(LOCKSTAT_HIST_WAIT, NULL, max_ns);

	for (int row = overflow_row + 1; row < num_rows; row++)
	{
		LockStatTrancheTotals *t = &totals[row];
		Datum		values[PG_LWLOCK_INSTANCE_STATS_COLS];
		bool		nulls[PG_LWLOCK_INSTANCE_STATS_COLS] = {0};
		int			partition;
		int			tranche = lockstat_row_tranche(row, &partition);
		int			i = 0;

		if (!lockstat_totals_active(t))
			continue;

		i = lockstat_put_tranche(values, nulls, i, tranche, false);
		if (partition >= 0)
			values[i++] = Int32GetDatum(partition);
		else
			nulls[i++] = true;
		values[i++] = Int32GetDatum(row - overflow_row - 1);
		values[i++] = lockstat_counters_value(counters_desc, t, true);
		values[i++] = lockstat_ns_as_ms(max_ns[row]);
		Assert(i == PG_LWLOCK_INSTANCE_STATS_COLS);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	pfree(totals);
	pfree(max_ns);
	return (Datum) 0;
}
