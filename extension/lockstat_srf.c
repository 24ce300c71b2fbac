/*-------------------------------------------------------------------------
 *
 * lockstat_srf.c
 *	  What the SQL-callable functions of pg_lockstat share: the check that
 *	  counting works, the start of a set-returning function, and the
 *	  columns that several views have
 *
 * The columns written here are a tranche (tranche_id, tranche), a bucket
 * of the log2 histograms (bucket_lower_us, bucket_upper_us, count) and the
 * composite pg_lwlock_counters, whose attributes are checked against
 * lockstat_counters.h before any row is formed.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_srf.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/typcache.h"

#include "lockstat_srf.h"

/*
 * Error out unless counting works: the library was preloaded into a server
 * with a compatible core patch, and its shared memory exists.  Errors: 55000,
 * naming the missing preload or the missing or incompatible core patch.
 */
void
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
ReturnSetInfo *
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
 * Put the columns bucket_lower_us int8, bucket_upper_us int8 (NULL for the
 * last bucket) and count int8 of histogram bucket b at values[i]; returns
 * the next column.
 */
int
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

/*
 * Store the tranche_id and tranche columns of a per-tranche row at
 * values[i]: the tranche ID and its name, or NULL and "overflow" for the
 * overflow row.  Returns the next column.
 */
int
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
#define LOCKSTAT_LWLOCK_COUNTER(symbol, column, unit, descr, sum, export) \
	{column, LOCKSTAT_UNIT_##unit},
#include "lockstat_counters.h"
#undef LOCKSTAT_LWLOCK_COUNTER
};

StaticAssertDecl(lengthof(lockstat_counter_columns) == LOCKSTAT_NUM_COUNTERS,
				 "one column per LWLock counter");

/*
 * The row type of column attno (0-based) of an SRF's result, which the SQL
 * script declares as pg_lwlock_counters: checked to have the attributes of
 * lockstat_counters.h, in its order, with the types of their units.
 * Errors: 42804 if it does not (the script and the library are of
 * different versions).
 */
TupleDesc
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
Datum
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
			values[c] = lockstat_ns_as_ms(t->counts[c]);
	}
	return HeapTupleGetDatum(heap_form_tuple(desc, values, nulls));
}
