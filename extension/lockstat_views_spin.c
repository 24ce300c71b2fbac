/*-------------------------------------------------------------------------
 *
 * lockstat_views_spin.c
 *	  SQL-callable functions of pg_lockstat behind the spinlock views
 *	  pg_spinlock_stats, pg_spinlock_backend_type_stats and
 *	  pg_spinlock_wait_histogram
 *
 * All read the spin-wait counters per call site (and kind of process) of
 * lockstat_spin_sum.c.
 *
 * One C function per SQL function of pg_lockstat--1.0.sql, of the same
 * name, with one result shape: each checks that its SQL definition has the
 * number of columns it fills.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_views_spin.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "lockstat_srf.h"

PG_FUNCTION_INFO_V1(pg_spinlock_stats);
PG_FUNCTION_INFO_V1(pg_spinlock_backend_type_stats);
PG_FUNCTION_INFO_V1(pg_spinlock_wait_histogram);

/*
 * result columns of pg_spinlock_wait_histogram(), as pg_lockstat--1.0.sql
 * declares them; those of pg_spinlock_stats() follow the table below
 */
#define PG_SPINLOCK_WAIT_HISTOGRAM_COLS	6

/* the spin-wait lines of lockstat_counters.h: offset in LockStatSpinTotals */
typedef struct LockStatSpinColumn
{
	const char *column;
	LockStatUnit unit;
	size_t		offset;
} LockStatSpinColumn;

static const LockStatSpinColumn lockstat_spin_columns[] = {
#define LOCKSTAT_SPIN_COUNTER(field, column, unit, descr, export) \
	{column, LOCKSTAT_UNIT_##unit, offsetof(LockStatSpinTotals, field)},
#include "lockstat_counters.h"
#undef LOCKSTAT_SPIN_COUNTER
};

/*
 * the columns of pg_spinlock_stats() before and after the counters; those
 * of pg_spinlock_backend_type_stats() have one more before them
 */
#define PG_SPINLOCK_STATS_SITE_COLS		3
#define PG_SPINLOCK_STATS_COLS \
	(PG_SPINLOCK_STATS_SITE_COLS + lengthof(lockstat_spin_columns) + 1)
#define PG_SPINLOCK_BACKEND_TYPE_STATS_COLS	(1 + PG_SPINLOCK_STATS_COLS)

/*
 * Check that the columns of the result of function fn from column first on
 * (0-based) are those of the spin-wait lines of lockstat_counters.h, by
 * name.  Errors: 42804 if not (the script and the library are of different
 * versions).
 */
static void
lockstat_check_spin_columns(TupleDesc result, int first, const char *fn)
{
	for (int c = 0; c < lengthof(lockstat_spin_columns); c++)
	{
		Form_pg_attribute att = TupleDescAttr(result, first + c);

		if (strcmp(NameStr(att->attname), lockstat_spin_columns[c].column) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d of %s() is \"%s\", where pg_lockstat's library has \"%s\"",
							first + c + 1, fn,
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
			values[i++] = lockstat_ns_as_ms(value);
		else if (col->unit == LOCKSTAT_UNIT_S_LOCK_COUNT && !s_lock_counted)
			nulls[i++] = true;
		else
			values[i++] = lockstat_counter_datum(value);
	}
	return i;
}

/*
 * Put one row per call site (and kind of process, if by_kind) with
 * contended waits since the last reset into rsinfo's tuplestore: the kind's
 * name if by_kind, then the columns of pg_spinlock_stats().  Errors as
 * lockstat_spin_read().
 */
static void
lockstat_put_spin_rows(ReturnSetInfo *rsinfo, bool by_kind)
{
	HTAB	   *htab = lockstat_spin_read(by_kind);
	HASH_SEQ_STATUS seq;
	LockStatSpinEntry *entry;

	hash_seq_init(&seq, htab);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		LockStatSpinTotals *c = &entry->counts;
		Datum		values[PG_SPINLOCK_BACKEND_TYPE_STATS_COLS];
		bool		nulls[PG_SPINLOCK_BACKEND_TYPE_STATS_COLS] = {0};
		int			i = 0;

		if (c->contended == 0)
			continue;

		if (by_kind)
			values[i++] = CStringGetTextDatum(lockstat_kind_name(entry->key.kind));
		values[i++] = CStringGetTextDatum(entry->key.file);
		values[i++] = Int32GetDatum(entry->key.line);
		values[i++] = CStringGetTextDatum(entry->key.func);
		i = lockstat_put_spin_counters(values, nulls, i, c);
		values[i++] = lockstat_ns_as_ms(c->max_wait_ns);
		Assert(i == (by_kind ? PG_SPINLOCK_BACKEND_TYPE_STATS_COLS :
					 PG_SPINLOCK_STATS_COLS));

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	hash_destroy(htab);
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

	lockstat_check_spin_columns(rsinfo->setDesc, PG_SPINLOCK_STATS_SITE_COLS,
								"pg_spinlock_stats");
	lockstat_put_spin_rows(rsinfo, false);
	return (Datum) 0;
}

/*
 * pg_spinlock_backend_type_stats() returns setof record
 *
 * Contended spin waits per kind of process and call site since the last
 * reset, of live and exited processes alike:
 *	backend_type text	the kind of process, as
 *						pg_lwlock_backend_type_stats.backend_type: the kind
 *						the process had when it started counting
 *	then the columns of pg_spinlock_stats(), from the same counters
 * Per call site, the kinds' counts add up to pg_spinlock_stats' exactly,
 * and its max_wait_time is the largest of theirs.  Errors: 55000 if
 * pg_lockstat is not preloaded; 55P03 if counters cannot be read
 * consistently; 42804 if the SQL definition's counter columns are not the
 * library's.
 */
Datum
pg_spinlock_backend_type_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = lockstat_begin_srf(fcinfo,
											   PG_SPINLOCK_BACKEND_TYPE_STATS_COLS);

	lockstat_check_spin_columns(rsinfo->setDesc,
								1 + PG_SPINLOCK_STATS_SITE_COLS,
								"pg_spinlock_backend_type_stats");
	lockstat_put_spin_rows(rsinfo, true);
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

	htab = lockstat_spin_read(false);

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
