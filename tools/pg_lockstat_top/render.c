/*-------------------------------------------------------------------------
 *
 * render.c
 *	  pg_lockstat_top's report as text
 *
 * One text serves the screen and --batch (output.c).  It is 80 columns
 * wide for names of up to 14 characters, but for the query texts and the
 * tranche table, which the busy share and the ceiling beside the share of
 * blocks take to 97: a narrower window cuts their lines (output.c).  The
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

static int	render_header(const Report *report, PQExpBuffer out);
static void section_sizes(const Report *report, SectionSize *sizes);
static int	hold_rows(const Report *report, int nrows);
static int	busy_sites(const Report *report, int nsites);
static int	name_width(const Report *report);
static void render_cut(const SectionSize *size, PQExpBuffer out);
static void render_tranches(const Report *report, PQExpBuffer out,
							const SectionSize *size);
static void render_holds(const Report *report, PQExpBuffer out,
						 const SectionSize *size);
static void render_queries(const Report *report, PQExpBuffer out,
						   const SectionSize *size);
static void render_blockers(const Report *report, PQExpBuffer out,
							const SectionSize *size);
static void render_sites(const Report *report, PQExpBuffer out,
						 const SectionSize *size);
static void render_headings(CounterKind kind, PQExpBuffer out);
static void render_rates(CounterKind kind, const double *per_s,
						 PQExpBuffer out);
static bool all_zero(CounterKind kind, const double *per_s);
static void format_value(char *buf, size_t len, double value, int decimals);

/* narrowest name column of the tranche tables */
#define NAME_WIDTH		14


/*
 * render_report
 *		The text of a report, into out: the header line, a line if the
 *		counters were reset, then the sections: the tranches, their sampled
 *		holds, and the queries that blocked, their holders and the spinlock
 *		call sites if the report has them.  With max_lines > 0 (a screen of
 *		that many lines) each section gets a share of them (layout.c) and
 *		ends with "... N more rows" where rows are left out; with 0 each
 *		shows its top -t rows.  Tranche IDs are only in the CSV output; the
 *		names tell the tranches apart.
 */
void
render_report(const Report *report, PQExpBuffer out, int max_lines)
{
	SectionSize sizes[NUM_SECTIONS];
	int			header_lines = render_header(report, out);

	section_sizes(report, sizes);
	fit_sections(sizes, NUM_SECTIONS,
				 max_lines > 0 ? Max(max_lines - header_lines, 1) : 0);
	render_tranches(report, out, &sizes[SECTION_TRANCHES]);
	if (sizes[SECTION_HOLDS].rows >= 0)
		render_holds(report, out, &sizes[SECTION_HOLDS]);
	if (report->have_queries)
		render_queries(report, out, &sizes[SECTION_QUERIES]);
	if (report->have_blockers)
		render_blockers(report, out, &sizes[SECTION_BLOCKERS]);
	if (report->have_sites)
		render_sites(report, out, &sizes[SECTION_SITES]);
}

/*
 * render_header
 *		The header line of a report, and the line that says the counters
 *		were reset.  Returns the number of lines.
 */
static int
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
	else
		return 1;
	return 2;
}

/*
 * section_sizes
 *		The rows each section has to show (its top -t; -1 for a section not
 *		shown) and the lines each row takes, for fit_sections().
 */
static void
section_sizes(const Report *report, SectionSize *sizes)
{
	int			ntranches = top_rows(report->nrows);
	int			nholds = hold_rows(report, ntranches);

	for (int s = 0; s < NUM_SECTIONS; s++)
		sizes[s].row_lines = (s == SECTION_BLOCKERS) ? 3 : 1;
	sizes[SECTION_TRANCHES].rows = ntranches;
	/* no sampled hold, for instance with hold_sample_every = 0: not shown */
	sizes[SECTION_HOLDS].rows = nholds > 0 ? nholds : -1;
	sizes[SECTION_QUERIES].rows =
		report->have_queries ? top_rows(report->nqueries) : -1;
	sizes[SECTION_BLOCKERS].rows =
		report->have_blockers ? top_rows(report->nblockers) : -1;
	sizes[SECTION_SITES].rows =
		report->have_sites ? busy_sites(report, top_rows(report->nsites)) : -1;
}

/*
 * hold_rows
 *		How many of the first nrows tranches had sampled holds in the
 *		interval.
 */
static int
hold_rows(const Report *report, int nrows)
{
	int			samples = counter_value(COUNTERS_LWLOCK, HOLD_SAMPLES);
	int			n = 0;

	for (int i = 0; i < nrows && samples >= 0; i++)
	{
		if (report->rows[i].counts[samples] > 0)
			n++;
	}
	return n;
}

/*
 * busy_sites
 *		How many of the first nsites spinlock call sites had any activity
 *		in the interval: the others say nothing and are not shown.
 */
static int
busy_sites(const Report *report, int nsites)
{
	int			n = 0;

	for (int i = 0; i < nsites; i++)
	{
		if (!all_zero(COUNTERS_SPIN, report->sites[i].per_s))
			n++;
	}
	return n;
}

/*
 * name_width
 *		The width of the name column of the tranche table and of the
 *		sampled holds: the widest name of the top -t tranches, so that the
 *		two align, and at least NAME_WIDTH.
 */
static int
name_width(const Report *report)
{
	int			nrows = top_rows(report->nrows);
	int			width = NAME_WIDTH;

	for (int i = 0; i < nrows; i++)
		width = Max(width, (int) strlen(report->rows[i].name));
	return width;
}

/*
 * render_cut
 *		The mark at the end of a section that left rows out to fit the
 *		screen: how many.
 */
static void
render_cut(const SectionSize *size, PQExpBuffer out)
{
	int			left = size->rows - size->shown;

	if (left > 0)
		appendPQExpBuffer(out, "... %d more row%s\n", left,
						  left == 1 ? "" : "s");
}

/*
 * render_tranches
 *		The tranche table: column names, then its rows shown, the name
 *		column as wide as the widest name shown: the rate columns of the
 *		counter table, then the share of blocks ("Blk share": of all
 *		tranches' in the interval, not per acquisition), the busy share and
 *		the ceiling beside it (busy.c), and the share of spin delays.
 */
static void
render_tranches(const Report *report, PQExpBuffer out,
				const SectionSize *size)
{
	int			namewidth = name_width(report);

	appendPQExpBuffer(out, "%-*s", namewidth, "Tranche");
	render_headings(COUNTERS_LWLOCK, out);
	appendPQExpBuffer(out, " %9s %6s %9s %11s\n",
					  "Blk share", "Busy %", "Ceil tps", "Delay share");
	for (int i = 0; i < size->shown; i++)
	{
		const TrancheRate *r = &report->rows[i];
		char		blk_pct[16];
		char		busy_pct[16];
		char		ceiling[32];
		char		spin_pct[16];

		format_value(blk_pct, sizeof(blk_pct), r->blk_pct, 2);
		format_value(busy_pct, sizeof(busy_pct), r->busy_pct, 2);
		format_value(ceiling, sizeof(ceiling), r->ceiling_tps, 0);
		format_value(spin_pct, sizeof(spin_pct), r->spin_delay_pct, 2);
		appendPQExpBuffer(out, "%-*s", namewidth, r->name);
		render_rates(COUNTERS_LWLOCK, r->per_s, out);
		appendPQExpBuffer(out, " %9s %6s %9s %11s\n",
						  blk_pct, busy_pct, ceiling, spin_pct);
	}
	if (report->nrows == 0)
		appendPQExpBufferStr(out, "(no LWLock activity since the last reset)\n");
	render_cut(size, out);
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
 *		The sampled holds (pg_lockstat.hold_sample_every) of the top -t
 *		tranches, in the order of the tranche table, that had samples in the
 *		interval, as many as shown: their number, the mean hold in
 *		microseconds, and the hold time per second that the mean implies at
 *		the tranche's acquisition rate (an estimate; the samples are one
 *		acquisition in N of each process).  The first two are headed by the
 *		labels of the counter table's HOLD_SAMPLES and HOLD_TIME.
 */
static void
render_holds(const Report *report, PQExpBuffer out, const SectionSize *size)
{
	const CounterSet *set = counter_set(COUNTERS_LWLOCK);
	int			samples = counter_value(COUNTERS_LWLOCK, HOLD_SAMPLES);
	int			hold_time = counter_value(COUNTERS_LWLOCK, HOLD_TIME);
	int			ntranches = top_rows(report->nrows);
	int			namewidth = name_width(report);
	int			shown = 0;

	appendPQExpBuffer(out, "%-*s %11s %11s %11s\n",
					  namewidth, "Sampled holds",
					  set->columns[set->values[samples].column].label,
					  set->columns[set->values[hold_time].column].label,
					  "Held ms/s");
	for (int i = 0; i < ntranches && shown < size->shown; i++)
	{
		const TrancheRate *r = &report->rows[i];

		if (r->counts[samples] <= 0)
			continue;
		appendPQExpBuffer(out, "%-*s %11lld %11.2f %11.2f\n",
						  namewidth, r->name, (long long) r->counts[samples],
						  r->mean_hold_us, r->held_ms_per_s);
		shown++;
	}
	render_cut(size, out);
}

/*
 * render_queries
 *		The table of the queries (and the calls without a query ID) that
 *		blocked in the interval, most wait first: column names, then the
 *		rows shown, with the tranche each waited on most and its text (see
 *		label_queries()).  A text longer than the line is cut off by the
 *		screen, not here.
 */
static void
render_queries(const Report *report, PQExpBuffer out,
			   const SectionSize *size)
{
	int			width = 16;
	int			i;

	for (i = 0; i < size->shown; i++)
		width = Max(width, (int) strlen(report->queries[i].top_tranche));

	appendPQExpBuffer(out, "%9s %9s %-*s %s\n",
					  "Wait ms/s", "Blk/s", width, "Top tranche", "Query");
	for (i = 0; i < size->shown; i++)
	{
		const QueryRate *q = &report->queries[i];

		appendPQExpBuffer(out, "%9.2f %9.1f %-*s %s\n",
						  q->wait_ms_per_s, q->blocks_per_s, width,
						  q->top_tranche, q->text ? q->text : "");
	}
	if (size->rows == 0)
		appendPQExpBufferStr(out, "(no blocked LWLock calls of queries in this interval)\n");
	render_cut(size, out);
}

/*
 * render_blockers
 *		The table of the blocked calls per tranche, waiting query, holder
 *		and root holder (pg_lwlock_blockers) in the interval, in the order
 *		of sort_report(): column names, then the rows shown, each in three
 *		lines: wait and blocks per second, the tranche and the waiter (as in
 *		the query table); then the holder, the process whose release ended
 *		the wait, and the root holder, at the head of that chain of
 *		wake-ups, each with its mode and its query (see label_blockers()),
 *		or "?" and "(not known)" when the view has no holder.
 */
static void
render_blockers(const Report *report, PQExpBuffer out,
				const SectionSize *size)
{
	int			width = 16;
	int			i;

	for (i = 0; i < size->shown; i++)
		width = Max(width, (int) strlen(report->blockers[i].key.tranche));

	appendPQExpBuffer(out, "%9s %9s %-*s %s\n",
					  "Wait ms/s", "Blk/s", width, "Tranche",
					  "Waiter / holder / root holder");
	for (i = 0; i < size->shown; i++)
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
	if (size->rows == 0)
		appendPQExpBufferStr(out, "(no blocked LWLock calls in this interval)\n");
	render_cut(size, out);
}

/*
 * render_sites
 *		The spinlock call-site table: column names, then the rows shown of
 *		the top -t sites that had any activity in the interval, with the
 *		rate columns of the counter table.
 */
static void
render_sites(const Report *report, PQExpBuffer out, const SectionSize *size)
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
	for (int i = 0; i < nsites && shown < size->shown; i++)
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
	if (size->rows == 0)
		appendPQExpBufferStr(out, "(no contended spin waits in this interval)\n");
	render_cut(size, out);
}

/*
 * format_value
 *		A share, busy share or ceiling with decimals decimals into buf (of
 *		len bytes), or "-" for -1: the interval had none at all (as the
 *		view's NULL), or it is not known.
 */
static void
format_value(char *buf, size_t len, double value, int decimals)
{
	if (value < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.*f", decimals, value);
}
