/*-------------------------------------------------------------------------
 *
 * lockstat_views.c
 *	  SQL-callable functions of pg_lockstat about pg_lockstat itself:
 *	  pg_lockstat_status(), behind the view pg_lockstat_status, and
 *	  pg_lockstat_reset()
 *
 * The views of the counters are in lockstat_views_lwlock.c,
 * lockstat_views_query.c and lockstat_views_spin.c; what they share, with
 * the check that counting works, in lockstat_srf.c.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_views.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "utils/backend_status.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "lockstat_srf.h"

PG_FUNCTION_INFO_V1(pg_lockstat_status);
PG_FUNCTION_INFO_V1(pg_lockstat_reset);

/* result columns of pg_lockstat_status(), as pg_lockstat--1.0.sql declares */
#define PG_LOCKSTAT_STATUS_COLS			21

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
 * The row type of pg_lockstat_status()'s result, checked to have the
 * PG_LOCKSTAT_STATUS_COLS columns that it fills.
 */
static TupleDesc
lockstat_status_desc(FunctionCallInfo fcinfo)
{
	TupleDesc	tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != PG_LOCKSTAT_STATUS_COLS)
		elog(ERROR, "incorrect number of output arguments");
	return tupdesc;
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
 *	injected_delays int8		delays that pg_lockstat.delay_us injected
 *								since start (count; lockstat_delay.c)
 *	counting bool				false if the server lacks a compatible core
 *								patch; then every column that describes what
 *								is in force is NULL
 *	inactive_reason text		why counting is inactive, or NULL
 * Errors: 55000 if pg_lockstat is not preloaded.
 */
Datum
pg_lockstat_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc = lockstat_status_desc(fcinfo);
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
	STATUS_IN_FORCE(lockstat_counter_datum(lockstat_delays_injected()));
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
 * the rules in lockstat_reset.c's header).
 * Returns the new stats_reset.  Executable by superusers and whoever has
 * been granted EXECUTE.  Errors: 55000 if pg_lockstat is not preloaded.
 */
Datum
pg_lockstat_reset(PG_FUNCTION_ARGS)
{
	lockstat_require_ready();
	PG_RETURN_TIMESTAMPTZ(lockstat_reset());
}
