/*-------------------------------------------------------------------------
 *
 * render.c
 *	  pg_lockstat_top's report as text
 *
 * One text, in 80 columns, serves the screen and --batch (output.c).  The
 * rate columns of the tranche and call-site tables are those of the counter
 * table (columns.c), in its order.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/render.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "pg_lockstat_top.h"

static void render_header(const Report *report, PQExpBuffer out);
static void render_holds(const Report *report, PQExpBuffer out,
						 int max_rows);
static void render_tranches(const Report *report, PQExpBuffer out,
							int max_rows);
static void render_sites(const Report *report, PQExpBuffer out);
static void render_queries(const Report *report, PQExpBuffer out);
static void render_blockers(const Report *report, PQExpBuffer out);
static void render_headings(CounterKind kind, PQExpBuffer out);
static void render_rates(CounterKind kind, const double *per_s,
						 PQExpBuffer out);
static bool all_zero(CounterKind kind, const double *per_s);
static void format_pct(char *buf, size_t len, double pct);


/*
 * render_report
 *		The text of a report, into out: the header line, a line if the
 *		counters were reset, the column names, at most max_rows tranches (0:
 *		no limit besides -t), the sampled holds of those tranches, then the
 *		queries that blocked, their holders and the spinlock call sites if
 *		the report has them.  Tranche IDs are only in the CSV output; the
 *		names tell the tranches apart.
 */
void
render_report(const Report *report, PQExpBuffer out, int max_rows)
{
	render_header(report, out);
	render_tranches(report, out, max_rows);
	render_holds(report, out, max_rows);
	if (report->have_queries)
		render_queries(report, out);
	if (report->have_blockers)
		render_blockers(report, out);
	if (report->have_sites)
		render_sites(report, out);
}

/*
 * render_header
 *		The header line of a report, and the line that says the counters
 *		were reset.
 */
static void
render_header(const Report *report, PQExpBuffer out)
{
	char		tps[32];

	if (report->have_tps)
		snprintf(tps, sizeof(tps), "%.1f", report->tps);
	else
		snprintf(tps, sizeof(tps), "-");
	appendPQExpBuffer(out,
					  "%s  strategy %s  interval %.2f s  tps %s  active %d\n",
					  report->time_text, report->spin_strategy,
					  report->interval, tps, report->active);
	if (report->reset && report->rate_interval < report->interval)
		appendPQExpBuffer(out,
						  "counters reset: rates over the %.2f s since the reset\n",
						  report->rate_interval);
	else if (report->reset)
		appendPQExpBufferStr(out,
							 "counters reset: counts since the reset, over the whole interval\n");
}

/*
 * tranche_rows
 *		How many of the report's tranches the tables show: the top -t, at
 *		most max_rows (0: no limit); sets *namewidth to the width of the
 *		widest of their names, at least 16.
 */
static int
tranche_rows(const Report *report, int max_rows, int *namewidth)
{
	int			nrows = top_rows(report->nrows);

	if (max_rows > 0 && nrows > max_rows)
		nrows = max_rows;
	*namewidth = 16;
	for (int i = 0; i < nrows; i++)
		*namewidth = Max(*namewidth, (int) strlen(report->rows[i].name));
	return nrows;
}

/*
 * render_tranches
 *		The tranche table: column names, then the top -t rows, at most
 *		max_rows of them (0: no limit), the name column as wide as the
 *		widest name shown: the rate columns of the counter table, then the
 *		shares of blocks and spin delays.
 */
static void
render_tranches(const Report *report, PQExpBuffer out, int max_rows)
{
	int			namewidth;
	int			nrows = tranche_rows(report, max_rows, &namewidth);

	appendPQExpBuffer(out, "%-*s", namewidth, "Tranche");
	render_headings(COUNTERS_LWLOCK, out);
	appendPQExpBuffer(out, " %6s %11s\n", "Blk %", "SpinDelay %");
	for (int i = 0; i < nrows; i++)
	{
		const TrancheRate *r = &report->rows[i];
		char		blk_pct[16];
		char		spin_pct[16];

		format_pct(blk_pct, sizeof(blk_pct), r->blk_pct);
		format_pct(spin_pct, sizeof(spin_pct), r->spin_delay_pct);
		appendPQExpBuffer(out, "%-*s", namewidth, r->name);
		render_rates(COUNTERS_LWLOCK, r->per_s, out);
		appendPQExpBuffer(out, " %6s %11s\n", blk_pct, spin_pct);
	}
	if (report->nrows == 0)
		appendPQExpBufferStr(out, "(no LWLock activity since the last reset)\n");
}

/*
 * render_headings
 *		The headings of the rate columns of kind, each after a space.
 */
static void
render_headings(CounterKind kind, PQExpBuffer out)
{
	const CounterSet *set = counter_set(kind);

	for (int c = 0; c < set->ncolumns; c++)
	{
		if (!set->columns[c].held)
			appendPQExpBuffer(out, " %*s", set->columns[c].width,
							  set->columns[c].label);
	}
}

/*
 * render_rates
 *		A row's rates per_s of the rate columns of kind, each after a space,
 *		milliseconds with two decimals and counts with one.
 */
static void
render_rates(CounterKind kind, const double *per_s, PQExpBuffer out)
{
	const CounterSet *set = counter_set(kind);

	for (int c = 0; c < set->ncolumns; c++)
	{
		const TopColumn *col = &set->columns[c];

		if (!col->held)
			appendPQExpBuffer(out, " %*.*f", col->width, col->in_ms ? 2 : 1,
							  per_s[c]);
	}
}

/*
 * all_zero
 *		Whether every rate column of kind is zero in per_s.
 */
static bool
all_zero(CounterKind kind, const double *per_s)
{
	const CounterSet *set = counter_set(kind);

	for (int c = 0; c < set->ncolumns; c++)
	{
		if (!set->columns[c].held && per_s[c] != 0)
			return false;
	}
	return true;
}

/*
 * render_holds
 *		The sampled holds (pg_lockstat.hold_sample_every) of the tranches of
 *		the table above, in its order, that had samples in the interval:
 *		their number, the mean hold in microseconds, and the hold time per
 *		second that the mean implies at the tranche's acquisition rate (an
 *		estimate; the samples are one acquisition in N of each process).
 *		The first two are headed by the labels of the counter table's
 *		HOLD_SAMPLES and HOLD_TIME.  Not shown when none of those tranches
 *		had a sample.
 */
static void
render_holds(const Report *report, PQExpBuffer out, int max_rows)
{
	const CounterSet *set = counter_set(COUNTERS_LWLOCK);
	int			samples = counter_value(COUNTERS_LWLOCK, HOLD_SAMPLES);
	int			hold_time = counter_value(COUNTERS_LWLOCK, HOLD_TIME);
	int			namewidth;
	int			nrows = tranche_rows(report, max_rows, &namewidth);
	int			shown = 0;

	for (int i = 0; i < nrows && samples >= 0 && hold_time >= 0; i++)
	{
		if (report->rows[i].counts[samples] > 0)
			shown++;
	}

	/* nothing to show, for instance with hold_sample_every = 0 */
	if (shown == 0)
		return;

	appendPQExpBuffer(out, "%-*s %11s %11s %11s\n",
					  namewidth, "Sampled holds",
					  set->columns[set->values[samples].column].label,
					  set->columns[set->values[hold_time].column].label,
					  "Held ms/s");
	for (int i = 0; i < nrows; i++)
	{
		const TrancheRate *r = &report->rows[i];

		if (r->counts[samples] <= 0)
			continue;
		appendPQExpBuffer(out, "%-*s %11lld %11.2f %11.2f\n",
						  namewidth, r->name, (long long) r->counts[samples],
						  r->mean_hold_us, r->held_ms_per_s);
	}
}

/*
 * render_queries
 *		The table of the queries (and the calls without a query ID) that
 *		blocked in the interval, most wait first: column names, then the top
 *		-t, with the tranche each waited on most and its text (see
 *		label_queries()).  A text longer than the line is cut off by the
 *		screen, not here.
 */
static void
render_queries(const Report *report, PQExpBuffer out)
{
	int			nrows = top_rows(report->nqueries);
	int			width = 16;
	int			i;

	for (i = 0; i < nrows; i++)
		width = Max(width, (int) strlen(report->queries[i].top_tranche));

	appendPQExpBuffer(out, "%9s %9s %-*s %s\n",
					  "Wait ms/s", "Blk/s", width, "Top tranche", "Query");
	for (i = 0; i < nrows; i++)
	{
		const QueryRate *q = &report->queries[i];

		appendPQExpBuffer(out, "%9.2f %9.1f %-*s %s\n",
						  q->wait_ms_per_s, q->blocks_per_s, width,
						  q->top_tranche, q->text ? q->text : "");
	}
	if (nrows == 0)
		appendPQExpBufferStr(out, "(no blocked LWLock calls of queries in this interval)\n");
}

/*
 * render_blockers
 *		The table of the blocked calls per tranche, waiting query, holder
 *		and root holder (pg_lwlock_blockers) in the interval, in the order
 *		of sort_report(): column names, then the top -t keys, each in three
 *		lines: wait and blocks per second, the tranche and the waiter (as in
 *		the query table); then the holder, the process whose release ended
 *		the wait, and the root holder, at the head of that chain of
 *		wake-ups, each with its mode and its query (see label_blockers()),
 *		or "?" and "(not known)" when the view has no holder.
 */
static void
render_blockers(const Report *report, PQExpBuffer out)
{
	int			nrows = top_rows(report->nblockers);
	int			width = 16;
	int			i;

	for (i = 0; i < nrows; i++)
		width = Max(width, (int) strlen(report->blockers[i].key.tranche));

	appendPQExpBuffer(out, "%9s %9s %-*s %s\n",
					  "Wait ms/s", "Blk/s", width, "Tranche",
					  "Waiter / holder / root holder");
	for (i = 0; i < nrows; i++)
	{
		const BlockerRate *b = &report->blockers[i];
		const char *holder_mode = b->key.holder_mode;
		const char *root_mode = b->key.root_mode;

		appendPQExpBuffer(out, "%9.2f %9.1f %-*s %s\n",
						  b->wait_ms_per_s, b->blocks_per_s, width,
						  b->key.tranche,
						  b->waiter_text ? b->waiter_text : "");
		/* "holder " and "root   " before the mode fill the tranche column */
		appendPQExpBuffer(out, "%20s%-6s %-*s %s\n", "", "holder",
						  width - 7, holder_mode[0] ? holder_mode : "?",
						  b->holder_text ? b->holder_text : "");
		appendPQExpBuffer(out, "%20s%-6s %-*s %s\n", "", "root",
						  width - 7, root_mode[0] ? root_mode : "?",
						  b->root_text ? b->root_text : "");
	}
	if (nrows == 0)
		appendPQExpBufferStr(out, "(no blocked LWLock calls in this interval)\n");
}

/*
 * render_sites
 *		The spinlock call-site table: column names, then the top -t sites
 *		that had any activity in the interval, with the rate columns of the
 *		counter table.
 */
static void
render_sites(const Report *report, PQExpBuffer out)
{
	int			nsites = top_rows(report->nsites);
	int			width = 34;
	int			shown = 0;


	/* the widest call site name sets the column, so that columns align */
	for (int i = 0; i < nsites; i++)
		width = Max(width, (int) strlen(report->sites[i].site));

	appendPQExpBuffer(out, "%-*s", width, "Spinlock call site");
	render_headings(COUNTERS_SPIN, out);
	appendPQExpBufferChar(out, '\n');
	for (int i = 0; i < nsites; i++)
	{
		const SiteRate *s = &report->sites[i];

		/* sites idle during the interval say nothing */
		if (all_zero(COUNTERS_SPIN, s->per_s))
			continue;
		appendPQExpBuffer(out, "%-*s", width, s->site);
		render_rates(COUNTERS_SPIN, s->per_s, out);
		appendPQExpBufferChar(out, '\n');
		shown++;
	}
	if (shown == 0)
		appendPQExpBufferStr(out, "(no contended spin waits in this interval)\n");
}

/*
 * format_pct
 *		A share in percent into buf (of len bytes), or "-" when the interval
 *		had none at all (as the view's NULL).
 */
static void
format_pct(char *buf, size_t len, double pct)
{
	if (pct < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2f", pct);
}
