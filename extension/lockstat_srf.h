/*-------------------------------------------------------------------------
 *
 * lockstat_srf.h
 *	  What the SQL-callable functions of pg_lockstat share: the check that
 *	  counting works, the start of a set-returning function, and the
 *	  columns that several views have
 *
 * lockstat_srf.c defines the functions, and the small conversions are
 * inline here.  Included by the lockstat_views*.c files only.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_srf.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef LOCKSTAT_SRF_H
#define LOCKSTAT_SRF_H

#include "fmgr.h"
#include "funcapi.h"

#include "lockstat.h"

/* lockstat_srf.c: readiness, the start of an SRF, shared columns */
extern void lockstat_require_ready(void);
extern ReturnSetInfo *lockstat_begin_srf(FunctionCallInfo fcinfo, int ncols);
extern int	lockstat_put_bucket(Datum *values, bool *nulls, int i, int b,
								uint64 count);
extern int	lockstat_put_tranche(Datum *values, bool *nulls, int i,
								 int tranche, bool overflow);
extern TupleDesc lockstat_counters_desc(TupleDesc result, int attno);
extern Datum lockstat_counters_value(TupleDesc desc,
									 const LockStatTrancheTotals *t,
									 bool holds);

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

/* nanoseconds as float8 milliseconds */
static inline Datum
lockstat_ns_as_ms(uint64 ns)
{
	return Float8GetDatum((double) ns / 1000000.0);
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

#endif							/* LOCKSTAT_SRF_H */
