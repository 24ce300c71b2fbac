/*-------------------------------------------------------------------------
 *
 * lockstat_views.c
 *	  SQL-callable functions of pg_lockstat, behind the views
 *	  pg_lwlock_stats, pg_lwlock_wait_histogram, pg_lwlock_instance_stats,
 *	  pg_lwlock_backend_stats, pg_lwlock_backend_type_stats,
 *	  pg_lwlock_query_stats, pg_spinlock_stats,
 *	  pg_spinlock_wait_histogram and pg_lockstat_status, and
 *	  pg_lockstat_reset()
 *
 * One C function per SQL function of pg_lockstat--1.0.sql, of the same
 * name, with one result shape: each checks that its SQL definition has the
 * number of columns it fills.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_views.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "storage/s_lock.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "lockstat.h"

PG_FUNCTION_INFO_V1(pg_lwlock_stats);
PG_FUNCTION_INFO_V1(pg_lwlock_wait_histogram);
PG_FUNCTION_INFO_V1(pg_lwlock_hold_histogram);
PG_FUNCTION_INFO_V1(pg_lwlock_instance_stats);
PG_FUNCTION_INFO_V1(pg_lwlock_backend_stats);
PG_FUNCTION_INFO_V1(pg_lwlock_backend_type_stats);
PG_FUNCTION_INFO_V1(pg_lwlock_query_stats);
PG_FUNCTION_INFO_V1(pg_lwlock_blockers);
PG_FUNCTION_INFO_V1(pg_spinlock_stats);
PG_FUNCTION_INFO_V1(pg_spinlock_wait_histogram);
PG_FUNCTION_INFO_V1(pg_lockstat_status);
PG_FUNCTION_INFO_V1(pg_lockstat_reset);

/* result columns of each function, as pg_lockstat--1.0.sql declares them */
#define PG_LWLOCK_STATS_COLS			6
#define PG_LWLOCK_WAIT_HISTOGRAM_COLS	5
#define PG_LWLOCK_HOLD_HISTOGRAM_COLS	6
#define PG_LWLOCK_INSTANCE_STATS_COLS	6
#define PG_LWLOCK_BACKEND_STATS_COLS	5
#define PG_LWLOCK_BACKEND_TYPE_STATS_COLS	4
#define PG_LWLOCK_QUERY_STATS_COLS		15
#define PG_LWLOCK_BLOCKERS_COLS			15
#define PG_SPINLOCK_WAIT_HISTOGRAM_COLS	6
#define PG_LOCKSTAT_STATUS_COLS			20

/* has this backend warned about the overflow row yet? */
static bool lockstat_overflow_warned = false;

/*
 * Error out unless counting works: the library was preloaded into a server
 * with a compatible core patch, and its shared memory exists.  Errors: 55000,
 * naming the missing preload or the missing or incompatible core patch.
 */
static void
lockstat_require_ready(void)
{
	if (lockstat_inactive_reason != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_lockstat is inactive: the server lacks a compatible pg_lockstat core patch"),
				 errdetail_internal("%s", lockstat_inactive_reason),
				 errhint("%s", LOCKSTAT_CORE_PATCH_HINT)));
	if (!lockstat_lwlock_shmem_ready())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("pg_lockstat must be loaded via \"shared_preload_libraries\""),
				 errhint("Add pg_lockstat to \"shared_preload_libraries\" in postgresql.conf and restart the server.")));
}

/*
 * The start of every set-returning function here: errors with 55000 unless
 * pg_lockstat is preloaded, then sets up the materialized result and checks
 * that the SQL definition has the ncols columns that the caller fills.
 */
static ReturnSetInfo *
lockstat_begin_srf(FunctionCallInfo fcinfo, int ncols)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;

	lockstat_require_ready();

	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != ncols)
		elog(ERROR, "incorrect number of output arguments");
	return rsinfo;
}

/*
 * A uint64 counter as bigint.  Counters cannot realistically pass 2^63, but
 * if one did it is shown as the largest bigint rather than as a negative
 * number.
 */
static inline Datum
lockstat_counter_datum(uint64 value)
{
	return Int64GetDatum(value > (uint64) PG_INT64_MAX ? PG_INT64_MAX :
						 (int64) value);
}

/*
 * Put the columns bucket_lower_us int8, bucket_upper_us int8 (NULL for the
 * last bucket) and count int8 of histogram bucket b at values[i]; returns
 * the next column.
 */
static int
lockstat_put_bucket(Datum *values, bool *nulls, int i, int b, uint64 count)
{
	values[i++] = Int64GetDatum((int64) lockstat_wait_bucket_lower_us(b));
	if (b == LOCKSTAT_WAIT_BUCKETS - 1)
		nulls[i++] = true;
	else
		values[i++] = Int64GetDatum((int64) lockstat_wait_bucket_lower_us(b + 1));
	values[i++] = lockstat_counter_datum(count);
	return i;
}

/* does a tranche or lock row show any activity? */
static inline bool
lockstat_totals_active(const LockStatTrancheTotals *t)
{
	for (int c = 0; c < LOCKSTAT_NUM_COUNTERS; c++)
	{
		if (t->counts[c] != 0)
			return true;
	}
	return false;
}

/*
 * Store the tranche_id and tranche columns of a per-tranche row at
 * values[i]: the tranche ID and its name, or NULL and "overflow" for the
 * overflow row.  Returns the next column.
 */
static int
lockstat_put_tranche(Datum *values, bool *nulls, int i, int tranche,
					 bool overflow)
{
	if (overflow)
	{
		nulls[i++] = true;
		values[i++] = CStringGetTextDatum("overflow");
	}
	else
	{
		const char *name = GetLWLockIdentifier(PG_WAIT_LWLOCK, (uint16) tranche);

		values[i++] = Int32GetDatum(tranche);
		values[i++] = CStringGetTextDatum(name ? name : "unknown");
	}
	return i;
}

/* the lines of lockstat_counters.h: a counter's column and unit */
typedef struct LockStatCounterColumn
{
	const char *column;
	LockStatUnit unit;
} LockStatCounterColumn;

static const LockStatCounterColumn lockstat_counter_columns[] = {
#define LOCKSTAT_LWLOCK_COUNTER(symbol, column, unit, sum, export) \
	{column, LOCKSTAT_UNIT_##unit},
#include "lockstat_counters.h"
#undef LOCKSTAT_LWLOCK_COUNTER
};

StaticAssertDecl(lengthof(lockstat_counter_columns) == LOCKSTAT_NUM_COUNTERS,
				 "one column per LWLock counter");

/* the spin-wait lines of lockstat_counters.h: offset in LockStatSpinTotals */
typedef struct LockStatSpinColumn
{
	const char *column;
	LockStatUnit unit;
	size_t		offset;
} LockStatSpinColumn;

static const LockStatSpinColumn lockstat_spin_columns[] = {
#define LOCKSTAT_SPIN_COUNTER(field, column, unit, export) \
	{column, LOCKSTAT_UNIT_##unit, offsetof(LockStatSpinTotals, field)},
#include "lockstat_counters.h"
#undef LOCKSTAT_SPIN_COUNTER
};

/* the columns of pg_spinlock_stats() before and after the counters */
#define PG_SPINLOCK_STATS_SITE_COLS		3
#define PG_SPINLOCK_STATS_COLS \
	(PG_SPINLOCK_STATS_SITE_COLS + lengthof(lockstat_spin_columns) + 1)

/*
 * The row type of column attno (0-based) of an SRF's result, which the SQL
 * script declares as pg_lwlock_counters: checked to have the attributes of
 * lockstat_counters.h, in its order, with the types of their units.
 * Errors: 42804 if it does not (the script and the library are of
 * different versions).
 */
static TupleDesc
lockstat_counters_desc(TupleDesc result, int attno)
{
	Oid			type = TupleDescAttr(result, attno)->atttypid;
	TupleDesc	desc = lookup_rowtype_tupdesc_copy(type, -1);

	/* a dropped attribute counts: the values are formed by position */
	if (desc->natts != LOCKSTAT_NUM_COUNTERS)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("type %s has %d attributes, where pg_lockstat's library has %d LWLock counters",
						format_type_be(type), desc->natts,
						LOCKSTAT_NUM_COUNTERS),
				 errhint("Install the library and the SQL script of the same pg_lockstat release.")));
	for (int a = 0; a < desc->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, a);
		const LockStatCounterColumn *col = &lockstat_counter_columns[a];
		Oid			want = col->unit == LOCKSTAT_UNIT_COUNT ? INT8OID : FLOAT8OID;

		if (att->attisdropped ||
			strcmp(NameStr(att->attname), col->column) != 0 ||
			att->atttypid != want)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("attribute %d of type %s is \"%s\" of type %s, where pg_lockstat's library has \"%s\" of type %s",
							a + 1, format_type_be(type),
							att->attisdropped ? "(dropped)" : NameStr(att->attname),
							att->attisdropped ? "-" : format_type_be(att->atttypid),
							col->column, format_type_be(want)),
					 errhint("Install the library and the SQL script of the same pg_lockstat release.")));
	}
	return desc;
}

/*
 * The pg_lwlock_counters value of counters t, for a result column of the
 * type desc (lockstat_counters_desc()): each counter in the SQL type of its
 * unit, a count as bigint and nanoseconds as float8 milliseconds; without
 * holds, the hold counters (LOCKSTAT_FIRST_HOLD_COUNTER on) as NULL.
 */
static Datum
lockstat_counters_value(TupleDesc desc, const LockStatTrancheTotals *t,
						bool holds)
{
	Datum		values[LOCKSTAT_NUM_COUNTERS];
	bool		nulls[LOCKSTAT_NUM_COUNTERS] = {0};

	/* lockstat_counters_desc() checked it */
	Assert(desc->natts == LOCKSTAT_NUM_COUNTERS);
	for (int c = 0; c < LOCKSTAT_NUM_COUNTERS; c++)
	{
		if (!holds && c >= LOCKSTAT_FIRST_HOLD_COUNTER)
			nulls[c] = true;
		else if (lockstat_counter_columns[c].unit == LOCKSTAT_UNIT_COUNT)
			values[c] = lockstat_counter_datum(t->counts[c]);
		else
			values[c] = Float8GetDatum((double) t->counts[c] / 1000000.0);
	}
	return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
}

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
			values[i++] = Float8GetDatum((double) max_ns[h][row] / 1000000.0);
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
 * Put the columns queryid int8, dbid oid, userid oid and backend_type text
 * of a pg_lwlock_query_stats() row for key at values[i]; 0 shows as NULL,
 * and backend_type is NULL for a query's row.  Returns the next column.
 */
static int
lockstat_put_query_key(Datum *values, bool *nulls, int i,
					   const LockStatQueryKey *key)
{
	if (key->queryid != 0)
		values[i++] = Int64GetDatum(key->queryid);
	else
		nulls[i++] = true;
	if (OidIsValid(key->dbid))
		values[i++] = ObjectIdGetDatum(key->dbid);
	else
		nulls[i++] = true;
	if (OidIsValid(key->userid))
		values[i++] = ObjectIdGetDatum(key->userid);
	else
		nulls[i++] = true;
	if (key->queryid != 0)
		nulls[i++] = true;
	else
		values[i++] = CStringGetTextDatum(lockstat_kind_name(key->kind));
	return i;
}

/* nanoseconds as float8 milliseconds */
static inline Datum
lockstat_ns_as_ms(uint64 ns)
{
	return Float8GetDatum((double) ns / 1000000.0);
}

/*
 * Put the columns blocks int8, wait_time float8 (ms) and max_wait_time
 * float8 (ms) of counts c at values[i].  Returns the next column.
 */
static int
lockstat_put_query_waits(Datum *values, int i, const LockStatQueryCounts *c)
{
	values[i++] = lockstat_counter_datum(c->blocks);
	values[i++] = lockstat_ns_as_ms(c->wait_ns);
	values[i++] = lockstat_ns_as_ms(c->max_wait_ns);
	return i;
}

/*
 * Put the columns sh_hold_samples int8, ex_hold_samples int8, sh_hold_time
 * float8 (ms), ex_hold_time float8 (ms), max_ex_hold_time float8 (ms) and
 * max_sh_hold_time float8 (ms) of counts c at values[i].  Returns the next
 * column.
 */
static int
lockstat_put_query_holds(Datum *values, int i, const LockStatQueryCounts *c)
{
	values[i++] = lockstat_counter_datum(c->hold_samples[1]);
	values[i++] = lockstat_counter_datum(c->hold_samples[0]);
	values[i++] = lockstat_ns_as_ms(c->hold_ns[1]);
	values[i++] = lockstat_ns_as_ms(c->hold_ns[0]);
	values[i++] = lockstat_ns_as_ms(c->max_hold_ns[0]);
	values[i++] = lockstat_ns_as_ms(c->max_hold_ns[1]);
	return i;
}

/* does c count anything? */
static inline bool
lockstat_query_counts_any(const LockStatQueryCounts *c)
{
	return c->blocks != 0 || c->hold_samples[0] != 0 || c->hold_samples[1] != 0;
}

/*
 * One row of a per-query view: put the columns of counts c of key (NULL for
 * the residual row of tranche row "row"; overflow if that is the overflow
 * row) at values and nulls, or return false to leave the row out.
 */
typedef bool (*lockstat_query_row_fn) (Datum *values, bool *nulls,
									   const LockStatQueryKey *key, int row,
									   bool overflow,
									   const LockStatQueryCounts *c);

/*
 * The rows of a per-query view of ncols columns: one per entry of the
 * per-query counts (lockstat_query_read(), by holder or not), then one per
 * tranche's residual row, each as put_row() puts it.  Errors: as
 * lockstat_query_read().
 */
static Datum
lockstat_query_srf(FunctionCallInfo fcinfo, int ncols, bool holders,
				   lockstat_query_row_fn put_row)
{
	ReturnSetInfo *rsinfo = lockstat_begin_srf(fcinfo, ncols);
	Datum	   *values = palloc(sizeof(Datum) * ncols);
	bool	   *nulls = palloc(sizeof(bool) * ncols);
	LockStatQueryCounts *residual;
	HTAB	   *htab;
	HASH_SEQ_STATUS seq;
	LockStatQueryEntry *entry;
	int			overflow_row;

	overflow_row = lockstat_overflow_row();
	residual = palloc(sizeof(LockStatQueryCounts) * (overflow_row + 1));
	htab = lockstat_query_read(residual, holders);

	hash_seq_init(&seq, htab);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		memset(nulls, 0, sizeof(bool) * ncols);
		if (put_row(values, nulls, &entry->key, entry->key.row,
					entry->key.row == overflow_row, &entry->counts))
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
	}
	for (int row = 0; row <= overflow_row; row++)
	{
		memset(nulls, 0, sizeof(bool) * ncols);
		if (put_row(values, nulls, NULL, row, row == overflow_row,
					&residual[row]))
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
	}

	hash_destroy(htab);
	pfree(residual);
	pfree(values);
	pfree(nulls);
	return (Datum) 0;
}

/* a row of pg_lwlock_query_stats(), for a key that blocked or was sampled */
static bool
lockstat_query_stats_row(Datum *values, bool *nulls,
						 const LockStatQueryKey *key, int row, bool overflow,
						 const LockStatQueryCounts *c)
{
	int			i = 0;

	if (!lockstat_query_counts_any(c))
		return false;
	if (key)
		i = lockstat_put_query_key(values, nulls, i, key);
	else
		for (int n = 0; n < 4; n++)
			nulls[i++] = true;	/* queryid, dbid, userid, backend_type */
	i = lockstat_put_tranche(values, nulls, i, row, overflow);
	i = lockstat_put_query_waits(values, i, c);
	i = lockstat_put_query_holds(values, i, c);
	Assert(i == PG_LWLOCK_QUERY_STATS_COLS);
	return true;
}

/*
 * pg_lwlock_query_stats() returns setof record
 *
 * Blocked LWLock calls and sampled holds since the last reset per query,
 * database, role and tranche, one row per key that blocked or was sampled
 * at least once:
 *	queryid int8		the running query's ID, as pg_stat_statements.queryid
 *						(in a parallel worker, its leader's); NULL for calls
 *						outside any query with an ID
 *	dbid oid			MyDatabaseId; NULL in processes without a database
 *	userid oid			the current user at the call; NULL if none
 *	backend_type text	for a row with queryid NULL, the kind of process
 *						(client backend, checkpointer, parallel worker,
 *						...); NULL for a query's row and for the residual
 *						row of each tranche, where queryid, dbid and userid
 *						are NULL too: the counts whose process's table was
 *						full and the evicted entries
 *	tranche_id int4, tranche text	as in pg_lwlock_stats (NULL and
 *						"overflow" for IDs >= max_tranches)
 *	blocks int8			calls that slept on the process semaphore (count)
 *	wait_time float8	their waits, each from its first sleep until its
 *						last wake-up (ms)
 *	max_wait_time float8	longest of them (ms)
 *	sh_hold_samples int8, ex_hold_samples int8	sampled holds by mode
 *						(count), one acquisition in
 *						pg_lockstat.hold_sample_every
 *	sh_hold_time float8, ex_hold_time float8	their hold times (ms)
 *	max_ex_hold_time float8, max_sh_hold_time float8	longest of them (ms)
 * Per tranche, the rows add up to pg_lwlock_stats' blocks, wait_time and
 * hold columns exactly (read when no call is in progress).  The counts come
 * from the core patch's lwlock_stats_wait_hook, once per blocked call, and
 * lwlock_stats_hold_hook, once per sampled hold.  Errors: 55000 if
 * pg_lockstat is not preloaded; 55P03 if a process's table cannot be read
 * consistently (a process stopped while it counts a call).
 */
Datum
pg_lwlock_query_stats(PG_FUNCTION_ARGS)
{
	return lockstat_query_srf(fcinfo, PG_LWLOCK_QUERY_STATS_COLS, false,
							  lockstat_query_stats_row);
}

/*
 * Put the columns queryid int8, backend_type text and mode text of holder h
 * (a key's holder or root) at values[i]: all NULL when the holder is not
 * known; backend_type NULL when the holder ran a query with an ID.  Returns
 * the next column.
 */
static int
lockstat_put_query_holder(Datum *values, bool *nulls, int i,
						  const LockStatHolder *h)
{
	if (h->kind == LOCKSTAT_HOLDER_NONE)
	{
		for (int c = 0; c < 3; c++)
			nulls[i++] = true;
		return i;
	}
	if (h->queryid != 0)
	{
		values[i++] = Int64GetDatum(h->queryid);
		nulls[i++] = true;
	}
	else
	{
		nulls[i++] = true;
		values[i++] = CStringGetTextDatum(lockstat_kind_name(h->kind));
	}
	values[i++] = CStringGetTextDatum(h->mode == 0 ? "exclusive" : "shared");
	return i;
}

/* a row of pg_lwlock_blockers(), for a key that blocked */
static bool
lockstat_blockers_row(Datum *values, bool *nulls,
					  const LockStatQueryKey *key, int row, bool overflow,
					  const LockStatQueryCounts *c)
{
	int			i = 0;

	if (c->blocks == 0)
		return false;
	i = lockstat_put_tranche(values, nulls, i, row, overflow);
	if (key)
	{
		i = lockstat_put_query_key(values, nulls, i, key);
		i = lockstat_put_query_holder(values, nulls, i, &key->holder);
		i = lockstat_put_query_holder(values, nulls, i, &key->root);
	}
	else
		for (int n = 0; n < 10; n++)
			nulls[i++] = true;	/* the waiter's four, the holders' three each */
	i = lockstat_put_query_waits(values, i, c);
	Assert(i == PG_LWLOCK_BLOCKERS_COLS);
	return true;
}

/*
 * pg_lwlock_blockers() returns setof record
 *
 * Blocked LWLock calls since the last reset per tranche, waiting query
 * (queryid, dbid, userid, backend_type as in pg_lwlock_query_stats) and
 * holder: the process whose release of the lock ended the wait (the core
 * patch's lwlock_stats_wake_hook, which notes it for the waiter), one row
 * per key that blocked at least once:
 *	tranche_id int4, tranche text	as in pg_lwlock_stats
 *	queryid int8, dbid oid, userid oid, backend_type text	the waiter
 *	holder_queryid int8	the holder's running query ID at its release;
 *						NULL if it had none or the holder is not known
 *	holder_backend_type text	the holder's kind of process when it had no
 *						query ID; NULL otherwise
 *	holder_mode text	"exclusive" or "shared": how the holder held the lock
 *						(NULL if not known)
 *	root_queryid int8, root_backend_type text, root_mode text
 *						the same of the root holder: the holder itself, or,
 *						if the holder held the lock from a blocked call of its
 *						own, the root of that call (so along a convoy of
 *						waiters woken one by one, the hold at its head)
 *	blocks int8, wait_time float8 (ms), max_wait_time float8 (ms)
 *						as in pg_lwlock_query_stats
 * A call is counted under the holder that ended its last sleep; calls with
 * no known holder (none ended a sleep while the call was counted: for
 * example one whose waker had not loaded pg_lockstat yet) and the residual
 * rows show NULL holder and root columns, so per tranche the rows add up to pg_lwlock_stats.blocks
 * and wait_time, and per waiting key to pg_lwlock_query_stats.  Errors: as
 * pg_lwlock_query_stats().
 */
Datum
pg_lwlock_blockers(PG_FUNCTION_ARGS)
{
	return lockstat_query_srf(fcinfo, PG_LWLOCK_BLOCKERS_COLS, true,
							  lockstat_blockers_row);
}

/*
 * Do this session's queries get query IDs, which pg_lwlock_query_stats
 * counts by?  They need compute_query_id = on (or regress), or auto with a
 * module that asks for them (pg_stat_statements), and track_activities,
 * which is where the core keeps the running query's ID.
 */
static bool
lockstat_query_ids_available(void)
{
	return IsQueryIdEnabled() && pgstat_track_activities;
}

/*
 * pg_lockstat_status() returns record
 *
 *	spin_strategy text		the strategy in force, read back from the core
 *							variable spin_strategy (s_lock.c)
 *	track bool				pg_lockstat.track in this session
 *	stats_reset timestamptz last pg_lockstat_reset(), or server start
 *	core_patch_version text	the core patch's LWLockStatsVersion
 *	max_tranches int4		rows counted separately (pg_lockstat.max_tranches)
 *	process_slots int4		per-process counter slots (MaxBackends plus
 *							auxiliary processes)
 * and the spin-and-sleep limits in force in this process, read back from
 * the core variables of s_lock.c:
 *	min_spins_per_delay int4, max_spins_per_delay int4	(spins)
 *	min_delay_us int4, max_delay_us int4				(microseconds)
 *	backoff_max_pauses int4		cap of ttas_backoff (spin delay instructions)
 *	max_spin_sites int4			pg_lockstat.max_spin_sites
 *	spin_sites_dropped int8		spin waits not counted since start because a
 *								process's table of call sites was full
 *	max_query_entries int4		pg_lockstat.max_query_entries
 *	query_entries int8			entries in the shared table of
 *								pg_lwlock_query_stats now (count)
 *	query_entries_evicted int8	entries evicted from it into the residual
 *								rows since start (count)
 *	query_waits_unattributed int8	blocked calls counted in a residual row
 *								since start because their process's table
 *								was full (count)
 *	query_ids_available bool	whether this session's queries get query
 *								IDs (compute_query_id, track_activities)
 *	counting bool				false if the server lacks a compatible core
 *								patch; then every column that describes what
 *								is in force is NULL
 *	inactive_reason text		why counting is inactive, or NULL
 * Errors: 55000 if pg_lockstat is not preloaded.
 */
Datum
pg_lockstat_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[PG_LOCKSTAT_STATUS_COLS] = {0};
	bool		nulls[PG_LOCKSTAT_STATUS_COLS] = {0};
	LockStatQueryStatus query_status = {0};
	bool		counting = (lockstat_inactive_reason == NULL);
	int			i = 0;

/* a column that shows what is in force: NULL while counting is inactive */
#define STATUS_IN_FORCE(datum) \
	do { \
		if (counting) \
			values[i] = (datum); \
		else \
			nulls[i] = true; \
		i++; \
	} while (0)

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != PG_LOCKSTAT_STATUS_COLS)
		elog(ERROR, "incorrect number of output arguments");
	if (counting)
	{
		lockstat_require_ready();
		lockstat_query_status(&query_status);
	}

	/* the GUC shows the core's variable, which it is bound to */
	STATUS_IN_FORCE(CStringGetTextDatum(GetConfigOption("pg_lockstat.spin_strategy",
														false, false)));
	values[i++] = BoolGetDatum(lockstat_track);
	STATUS_IN_FORCE(TimestampTzGetDatum(lockstat_last_reset()));
	STATUS_IN_FORCE(CStringGetTextDatum(psprintf("%d", lockstat_core->version)));
	values[i++] = Int32GetDatum(lockstat_max_tranches);
	STATUS_IN_FORCE(Int32GetDatum(lockstat_num_slots()));
	STATUS_IN_FORCE(Int32GetDatum(*lockstat_core->spin_min_spins_per_delay));
	STATUS_IN_FORCE(Int32GetDatum(*lockstat_core->spin_max_spins_per_delay));
	STATUS_IN_FORCE(Int32GetDatum(*lockstat_core->spin_min_delay_usec));
	STATUS_IN_FORCE(Int32GetDatum(*lockstat_core->spin_max_delay_usec));
	STATUS_IN_FORCE(Int32GetDatum(*lockstat_core->spin_backoff_max_pauses));
	values[i++] = Int32GetDatum(lockstat_max_spin_sites);
	STATUS_IN_FORCE(lockstat_counter_datum(lockstat_spin_dropped()));
	values[i++] = Int32GetDatum(lockstat_max_query_entries);
	STATUS_IN_FORCE(Int64GetDatum(query_status.entries));
	STATUS_IN_FORCE(lockstat_counter_datum(query_status.evicted));
	STATUS_IN_FORCE(lockstat_counter_datum(query_status.unattributed));
	values[i++] = BoolGetDatum(lockstat_query_ids_available());
	values[i++] = BoolGetDatum(counting);
	if (counting)
		nulls[i++] = true;
	else
		values[i++] = CStringGetTextDatum(lockstat_inactive_reason);
	Assert(i == PG_LOCKSTAT_STATUS_COLS);
#undef STATUS_IN_FORCE

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * pg_lockstat_reset() returns timestamptz
 *
 * Starts all counters of pg_lwlock_stats again from zero, by taking the
 * current sums as the new baseline; no process's own counters are written.
 * pg_lwlock_query_stats starts a new generation of its counts instead (see
 * lockstat_query.c).
 * Returns the new stats_reset.  Executable by superusers and whoever has
 * been granted EXECUTE.  Errors: 55000 if pg_lockstat is not preloaded.
 */
Datum
pg_lockstat_reset(PG_FUNCTION_ARGS)
{
	lockstat_require_ready();
	PG_RETURN_TIMESTAMPTZ(lockstat_reset());
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
		values[i++] = Float8GetDatum((double) max_ns[row] / 1000000.0);
		Assert(i == PG_LWLOCK_INSTANCE_STATS_COLS);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	pfree(totals);
	pfree(max_ns);
	return (Datum) 0;
}

/*
 * Check that the columns of a pg_spinlock_stats() result after the call
 * site are those of the spin-wait lines of lockstat_counters.h, by name.
 * Errors: 42804 if not (the script and the library are of different
 * versions).
 */
static void
lockstat_check_spin_columns(TupleDesc result)
{
	for (int c = 0; c < lengthof(lockstat_spin_columns); c++)
	{
		Form_pg_attribute att =
			TupleDescAttr(result, PG_SPINLOCK_STATS_SITE_COLS + c);

		if (strcmp(NameStr(att->attname), lockstat_spin_columns[c].column) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of pg_spinlock_stats() is \"%s\", where pg_lockstat's library has \"%s\"",
							PG_SPINLOCK_STATS_SITE_COLS + c + 1,
							NameStr(att->attname),
							lockstat_spin_columns[c].column),
					 errhint("Install the library and the SQL script of the same pg_lockstat release.")));
	}
}

/*
 * Store a call site's counter columns of pg_spinlock_stats() at values[i],
 * each in the SQL type of its unit; returns the next column.  The
 * S_LOCK_COUNT columns are NULL if all of them are zero: the site is not
 * s_lock()'s, or the strategy does not count its probes.
 */
static int
lockstat_put_spin_counters(Datum *values, bool *nulls, int i,
						   const LockStatSpinTotals *t)
{
	bool		s_lock_counted = false;

	for (int c = 0; c < lengthof(lockstat_spin_columns); c++)
	{
		const LockStatSpinColumn *col = &lockstat_spin_columns[c];

		if (col->unit == LOCKSTAT_UNIT_S_LOCK_COUNT &&
			*(const uint64 *) ((const char *) t + col->offset) != 0)
			s_lock_counted = true;
	}
	for (int c = 0; c < lengthof(lockstat_spin_columns); c++)
	{
		const LockStatSpinColumn *col = &lockstat_spin_columns[c];
		uint64		value = *(const uint64 *) ((const char *) t + col->offset);

		if (col->unit == LOCKSTAT_UNIT_NS_AS_MS)
			values[i++] = Float8GetDatum((double) value / 1000000.0);
		else if (col->unit == LOCKSTAT_UNIT_S_LOCK_COUNT && !s_lock_counted)
			nulls[i++] = true;
		else
			values[i++] = lockstat_counter_datum(value);
	}
	return i;
}

/*
 * pg_spinlock_stats() returns setof record
 *
 * Contended spin waits per call site since the last reset, summed over all
 * processes: one row per file, line and function that s_lock() or
 * init_spin_delay() received (SpinLockAcquire() callers, the LWLock
 * wait-list lock, buffer header locks, ...).
 *	file text, line int4, func text		the call site
 *	the spin-wait counters of lockstat_counters.h: contended, spins,
 *	delays (int8 counts), wait_time (float8 ms), tas_attempts and
 *	unlocked_skips (int8 counts, NULL where not counted: sites other than
 *	s_lock(), and every site under spin_strategy default)
 *	max_wait_time float8	longest wait, from its first spin until the
 *						lock was taken (ms)
 * Each wait is counted whole when it ends: the core patch's s_lock.c adds
 * it to the counters that lockstat_spin_site() gave it.  Errors: 55000 if
 * pg_lockstat is not preloaded; 55P03 if counters cannot be read
 * consistently; 42804 if the SQL definition's counter columns are not the
 * library's.
 */
Datum
pg_spinlock_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lockstat_begin_srf(fcinfo, PG_SPINLOCK_STATS_COLS);
	HTAB	   *htab;
	HASH_SEQ_STATUS seq;
	LockStatSpinEntry *entry;

	lockstat_check_spin_columns(rsinfo->setDesc);
	htab = lockstat_spin_read();

	hash_seq_init(&seq, htab);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		LockStatSpinTotals *c = &entry->counts;
		Datum		values[PG_SPINLOCK_STATS_COLS];
		bool		nulls[PG_SPINLOCK_STATS_COLS] = {0};
		int			i = 0;

		if (c->contended == 0)
			continue;

		values[i++] = CStringGetTextDatum(entry->key.file);
		values[i++] = Int32GetDatum(entry->key.line);
		values[i++] = CStringGetTextDatum(entry->key.func);
		i = lockstat_put_spin_counters(values, nulls, i, c);
		values[i++] = Float8GetDatum((double) c->max_wait_ns / 1000000.0);
		Assert(i == PG_SPINLOCK_STATS_COLS);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	hash_destroy(htab);
	return (Datum) 0;
}

/*
 * pg_spinlock_wait_histogram() returns setof record
 *
 * The distribution of the durations of contended spin waits since the last
 * reset, per call site, summed over all processes; one row per call site
 * and non-empty bucket:
 *	file text, line int4, func text		the call site, as in
 *							pg_spinlock_stats
 *	bucket_lower_us int8	the bucket holds waits of at least this many
 *							microseconds
 *	bucket_upper_us int8	and less than this many; NULL for the last bucket
 *							(4194304 us and more)
 *	count int8				waits in the bucket (count)
 * A wait lasts from its first spin until the lock is taken, spinning and
 * sleeping included, as the core patch's finish_spin_delay() measures it;
 * the buckets are those of pg_lwlock_wait_histogram, and a site's counts add
 * up to its pg_spinlock_stats.contended.  Errors: 55000 if pg_lockstat is
 * not preloaded; 55P03 if counters cannot be read consistently.
 */
Datum
pg_spinlock_wait_histogram(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lockstat_begin_srf(fcinfo,
											   PG_SPINLOCK_WAIT_HISTOGRAM_COLS);
	HTAB	   *htab;
	HASH_SEQ_STATUS seq;
	LockStatSpinEntry *entry;

	htab = lockstat_spin_read();

	hash_seq_init(&seq, htab);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		for (int b = 0; b < LOCKSTAT_WAIT_BUCKETS; b++)
		{
			uint64		count = entry->counts.wait_hist[b];
			Datum		values[PG_SPINLOCK_WAIT_HISTOGRAM_COLS];
			bool		nulls[PG_SPINLOCK_WAIT_HISTOGRAM_COLS] = {0};
			int			i = 0;

			if (count == 0)
				continue;

			values[i++] = CStringGetTextDatum(entry->key.file);
			values[i++] = Int32GetDatum(entry->key.line);
			values[i++] = CStringGetTextDatum(entry->key.func);
			i = lockstat_put_bucket(values, nulls, i, b, count);
			Assert(i == PG_SPINLOCK_WAIT_HISTOGRAM_COLS);

			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}

	hash_destroy(htab);
	return (Datum) 0;
}
