/*-------------------------------------------------------------------------
 *
 * legend.c
 *	  The legend that the "?" key shows: every column and key of the screen
 *
 * The rate columns of the tranche and call-site tables come from the
 * counter table (columns.c), so their lines here do too: each column's
 * heading and the values it sums, by the names of the sample's query,
 * which are those of the views' columns.  The other columns are this
 * program's own, and so is their text.  The legend fits a window of 80 by
 * 24, the smallest that the screen is made for; on a smaller one the
 * screen cuts it as it cuts a report.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/legend.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "pg_lockstat_top.h"

/* widest legend line */
#define LEGEND_WIDTH	80

static void legend_counters(CounterKind kind, PQExpBuffer out, int width);

/* the keys, and what the rates are */
static const char *const legend_keys[] = {
	"Keys: b w s a sort tranches by blocks, wait, spin delays, acquisitions;",
	"  ? shows or hides this legend; q quits.  Rates are per second over the",
	"  interval; ms/s is milliseconds per second (1000: one process all along)",
	NULL
};

/* the tranche table's shares, busy share and ceiling, after its rates */
static const char *const legend_shares[] = {
	"  Blk share, Delay share: its % of all tranches' blocks, spin delays (not per",
	"  Acq); Busy %: % of the interval held exclusively, from Acq and sampled holds",
	"  (sum over the tranche's locks); Ceil tps: tps / Busy, the tps that holds it",
	"  all along; -: none, or not known (no exclusive hold timed since the reset)",
	NULL
};

/* the sections of sampled holds, queries and blockers */
static const char *const legend_sections[] = {
	"Sampled holds: the holds timed (pg_lockstat.hold_sample_every); Samples:",
	"  how many; Hold us: their mean; Held ms/s: the mean times Acq/s",
	"Wait ms/s Blk/s of blocked calls per query; Top tranche: where it waited",
	"  most; Query: its text from pg_stat_statements, or queryid N; (residual:",
	"  ...): evicted entries; (no query ID) TYPE: other processes, and utility",
	"  statements prepared (pgbench -M prepared's COMMIT) with track_utility on",
	"Waiter / holder / root holder (pg_lwlock_blockers): holder: whose release",
	"  ended the wait; root: the hold at the head of that chain; ?: not known",
	NULL
};

/* the mark of a cut */
static const char *const legend_cut[] = {
	"... N more rows: the section was cut to fit the window (--batch shows all)",
	NULL
};


/*
 * append_lines
 *		The lines of a NULL-terminated list, each with a newline.
 */
static void
append_lines(const char *const *lines, PQExpBuffer out)
{
	for (int i = 0; lines[i] != NULL; i++)
		appendPQExpBuffer(out, "%s\n", lines[i]);
}

/*
 * render_legend
 *		The legend, into out, for a window width columns wide: the keys,
 *		then the columns of each section in the order of the screen.
 */
void
render_legend(PQExpBuffer out, int width)
{
	width = Min(width, LEGEND_WIDTH);
	append_lines(legend_keys, out);
	appendPQExpBufferStr(out,
						 "Tranche: an LWLock tranche of pg_lwlock_stats, the top -t by the sort key\n");
	legend_counters(COUNTERS_LWLOCK, out, width);
	append_lines(legend_shares, out);
	append_lines(legend_sections, out);
	appendPQExpBufferStr(out,
						 "Spinlock call site: file:line function of pg_spinlock_stats\n");
	legend_counters(COUNTERS_SPIN, out, width);
	append_lines(legend_cut, out);
}

/*
 * legend_counters
 *		The rate columns of kind, as the counter table gives them: "heading
 *		= value + value", separated by "; ", in lines of at most width
 *		columns, each indented by two spaces.
 */
static void
legend_counters(CounterKind kind, PQExpBuffer out, int width)
{
	const CounterSet *set = counter_set(kind);
	int			linelen = 0;

	for (int c = 0; c < set->ncolumns; c++)
	{
		PQExpBufferData entry;

		if (set->columns[c].held)
			continue;
		initPQExpBuffer(&entry);
		appendPQExpBuffer(&entry, "%s =", set->columns[c].label);
		for (int v = 0, n = 0; v < set->nvalues; v++)
		{
			if (set->values[v].column == c)
				appendPQExpBuffer(&entry, "%s %s", n++ > 0 ? " +" : "",
								  set->values[v].name);
		}
		if (linelen > 0 && linelen + 2 + (int) entry.len > width)
		{
			appendPQExpBufferStr(out, ";\n");
			linelen = 0;
		}
		else if (linelen > 0)
		{
			appendPQExpBufferStr(out, "; ");
			linelen += 2;
		}
		if (linelen == 0)
		{
			appendPQExpBufferStr(out, "  ");
			linelen = 2;
		}
		appendPQExpBufferStr(out, entry.data);
		linelen += entry.len;
		termPQExpBuffer(&entry);
	}
	if (linelen > 0)
		appendPQExpBufferChar(out, '\n');
}
