/*-------------------------------------------------------------------------
 *
 * columns.c
 *	  The counters pg_lockstat_top shows, from the extension's counter table
 *
 * This file includes extension/lockstat_counters.h, the table of the
 * extension's counters, and keeps of each line its SQL column, its unit and
 * the top_name and top_label of its EXPORT().  A counter with a top_name is
 * shown: the sample's query selects it (summed with the counters of the same
 * top_name) under that name, and the screen shows it in the column headed
 * top_label (summed with the values of the same top_label), as a rate per
 * second, in the tranche table for an LWLock counter and in the call-site
 * table for a spin counter; the CSV output has its count and its column's
 * rate.  So a counter's EXPORT() is all it takes to show it here.
 *
 * The values HOLD_SAMPLES and HOLD_TIME are the exception: the section of
 * sampled holds shows them, with their mean, not as rates.  The shares
 * (Blk %, SpinDelay %), the sort keys and the order of the call sites name
 * values too (see rates.c and render.c).
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/columns.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "pg_lockstat_top.h"

/* one line of the counter table, as this program reads it */
typedef struct CounterLine
{
	CounterKind kind;
	const char *column;			/* the counter's SQL column */
	bool		in_ms;			/* unit NS_AS_MS */
	const char *top_name;		/* "": not shown */
	const char *top_label;
} CounterLine;

#define COUNTER_IN_MS_COUNT			false
#define COUNTER_IN_MS_NS_AS_MS		true
#define COUNTER_IN_MS_S_LOCK_COUNT	false
#define EXPORT(metric, type, top_name, top_label, panel) top_name, top_label
#define LOCKSTAT_LWLOCK_COUNTER(symbol, column, unit, descr, sum, export) \
	{COUNTERS_LWLOCK, column, COUNTER_IN_MS_##unit, export},
#define LOCKSTAT_SPIN_COUNTER(field, column, unit, descr, export) \
	{COUNTERS_SPIN, column, COUNTER_IN_MS_##unit, export},

static const CounterLine counter_lines[] = {
#include "lockstat_counters.h"
};

/*
 * The CSV names that two rate columns have had since version 1.0, which
 * scripts read; any other rate column is its first value's name with
 * "_per_s".
 */
static const struct
{
	const char *label;
	const char *csv_name;
}			csv_names[] = {
	{"Acq/s", "acquires_per_s"},
	{"Wait ms/s", "wait_ms_per_s"},
};

static CounterSet counter_sets[COUNTERS_SPIN + 1];
static bool counter_sets_made = false;

static void make_counter_set(CounterKind kind, CounterSet *set);
static int	find_value(const CounterSet *set, const char *name);
static int	add_column(CounterSet *set, const CounterLine *line);
static const char *csv_name(const char *label, const char *value);


/*
 * counter_set
 *		The values and columns of the counters of kind that are shown, in
 *		the order of the counter table.
 */
const CounterSet *
counter_set(CounterKind kind)
{
	Assert(kind == COUNTERS_LWLOCK || kind == COUNTERS_SPIN);
	if (!counter_sets_made)
	{
		make_counter_set(COUNTERS_LWLOCK, &counter_sets[COUNTERS_LWLOCK]);
		make_counter_set(COUNTERS_SPIN, &counter_sets[COUNTERS_SPIN]);
		counter_sets_made = true;
	}
	return &counter_sets[kind];
}

/*
 * make_counter_set
 *		Fill *set from the lines of kind with a top_name: a value per
 *		top_name, a column per top_label.  The rate columns are alternately
 *		11 and 9 wide (or as wide as their heading), as the screen has had
 *		them since version 1.0.
 */
static void
make_counter_set(CounterKind kind, CounterSet *set)
{
	int			nrates = 0;

	memset(set, 0, sizeof(CounterSet));
	for (int i = 0; i < lengthof(counter_lines); i++)
	{
		const CounterLine *line = &counter_lines[i];
		TopValue   *v;

		if (line->kind != kind || line->top_name[0] == '\0' ||
			find_value(set, line->top_name) >= 0)
			continue;
		v = &set->values[set->nvalues++];
		v->name = line->top_name;
		v->in_ms = line->in_ms;
		v->column = add_column(set, line);
	}
	for (int c = 0; c < set->ncolumns; c++)
	{
		TopColumn  *col = &set->columns[c];

		if (col->held)
			continue;
		col->width = Max((int) strlen(col->label), nrates % 2 == 0 ? 11 : 9);
		nrates++;
	}
}

/*
 * add_column
 *		The index of the column of line's top_label in *set, added if new.
 */
static int
add_column(CounterSet *set, const CounterLine *line)
{
	TopColumn  *col;

	for (int c = 0; c < set->ncolumns; c++)
	{
		if (strcmp(set->columns[c].label, line->top_label) == 0)
			return c;
	}
	col = &set->columns[set->ncolumns];
	col->label = line->top_label;
	col->in_ms = line->in_ms;
	col->held = (strcmp(line->top_name, HOLD_SAMPLES) == 0 ||
				 strcmp(line->top_name, HOLD_TIME) == 0);
	col->csv_name = csv_name(line->top_label, line->top_name);
	return set->ncolumns++;
}

/*
 * csv_name
 *		The CSV name of the rate column headed label whose first value is
 *		named value (see csv_names).  Kept for the program's life.
 */
static const char *
csv_name(const char *label, const char *value)
{
	for (int i = 0; i < lengthof(csv_names); i++)
	{
		if (strcmp(csv_names[i].label, label) == 0)
			return csv_names[i].csv_name;
	}
	return psprintf("%s_per_s", value);
}

/*
 * counter_value
 *		The index of the value named name among the shown counters of kind,
 *		or -1 if the counter table shows none by that name.
 */
int
counter_value(CounterKind kind, const char *name)
{
	return find_value(counter_set(kind), name);
}

/*
 * find_value
 *		The index of the value named name in *set, or -1.
 */
static int
find_value(const CounterSet *set, const char *name)
{
	for (int v = 0; v < set->nvalues; v++)
	{
		if (strcmp(set->values[v].name, name) == 0)
			return v;
	}
	return -1;
}

/*
 * counter_column
 *		The index of the column of the value named name, or -1.
 */
int
counter_column(CounterKind kind, const char *name)
{
	int			v = counter_value(kind, name);

	return v < 0 ? -1 : counter_set(kind)->values[v].column;
}

/*
 * append_counter_select
 *		The select list of the values of kind, into sql: for each, the sum of
 *		its counters' SQL columns under its name (", a + b AS name").
 */
void
append_counter_select(PQExpBuffer sql, CounterKind kind)
{
	const CounterSet *set = counter_set(kind);

	for (int v = 0; v < set->nvalues; v++)
	{
		const char *sep = ", ";

		for (int i = 0; i < lengthof(counter_lines); i++)
		{
			const CounterLine *line = &counter_lines[i];

			if (line->kind != kind ||
				strcmp(line->top_name, set->values[v].name) != 0)
				continue;
			appendPQExpBuffer(sql, "%s%s", sep, line->column);
			sep = " + ";
		}
		appendPQExpBuffer(sql, " AS %s", set->values[v].name);
	}
}
