/*-------------------------------------------------------------------------
 *
 * lockstat_test_counters.c
 *	  The counter table of pg_lockstat as the compiler reads it, for the
 *	  regression test that compares it with the catalog
 *
 * pg_lockstat--1.0.sql is made from a template and the counter table
 * (extension/lockstat_counters.h) by scripts/counters.pl, which reads the
 * table through the preprocessor and prints SQL.  This file compiles the
 * same table into a set-returning function, so that the views test can
 * check what that script wrote (the attributes of pg_lwlock_counters, the
 * counter columns of pg_spinlock_stats and their descriptions) against the
 * table itself rather than against a list frozen in expected output.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  test/lockstat_test/lockstat_test_counters.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "lockstat_test.h"

PG_FUNCTION_INFO_V1(lockstat_test_counter_lines);

/* one line of the table: what the SQL script makes of it */
typedef struct LstCounterLine
{
	const char *kind;			/* "lwlock" or "spin" */
	const char *column;
	const char *type;			/* the SQL type of its unit */
	const char *descr;
} LstCounterLine;

#define LST_TYPE_COUNT			"bigint"
#define LST_TYPE_NS_AS_MS		"double precision"
#define LST_TYPE_S_LOCK_COUNT	"bigint"
#define LOCKSTAT_LWLOCK_COUNTER(symbol, column, unit, descr, sum, export) \
	{"lwlock", column, LST_TYPE_##unit, descr},
#define LOCKSTAT_SPIN_COUNTER(field, column, unit, descr, export) \
	{"spin", column, LST_TYPE_##unit, descr},

static const LstCounterLine lst_counter_lines[] = {
#include "lockstat_counters.h"
};

/*
 * lockstat_test_counter_lines(): one row per line of the counter table, in
 * its order: kind, ordinal among the lines of that kind (from 1), column,
 * SQL type and description.
 */
Datum
lockstat_test_counter_lines(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			lwlock_lines = 0;
	int			spin_lines = 0;

	InitMaterializedSRF(fcinfo, 0);
	for (int i = 0; i < lengthof(lst_counter_lines); i++)
	{
		const LstCounterLine *line = &lst_counter_lines[i];
		bool		lwlock = strcmp(line->kind, "lwlock") == 0;
		Datum		values[5];
		bool		nulls[5] = {0};

		values[0] = CStringGetTextDatum(line->kind);
		values[1] = Int32GetDatum(lwlock ? ++lwlock_lines : ++spin_lines);
		values[2] = CStringGetTextDatum(line->column);
		values[3] = CStringGetTextDatum(line->type);
		values[4] = CStringGetTextDatum(line->descr);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values,
							 nulls);
	}
	return (Datum) 0;
}
