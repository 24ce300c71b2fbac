/*-------------------------------------------------------------------------
 *
 * output.c
 *	  pg_lockstat_top's output: the screen, --batch, CSV, events
 *
 * The screen and --batch show the text of a report (render.c); --csv writes
 * one row per tranche instead, with the counts and rate columns of the
 * counter table (columns.c).  Connection events go to the status line of the
 * screen, to "--" lines in --batch output, or to stderr with --csv.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/output.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "common/logging.h"
#include "pg_lockstat_top.h"

/* state of the output */
static char *status_line = NULL;	/* event shown on a terminal */
static bool legend_shown = false;	/* the "?" key's legend on the screen */
static bool csv_header_done = false;

static void clip_to_screen(const char *text, int rows, int cols,
						   PQExpBuffer screen);
static int	cut_at_blank(const char *line, int cols);
static bool is_heading(const char *line);
static void write_batch(const Report *report);
static void write_csv(const Report *report);
static void write_csv_busy(const Report *report, const TrancheRate *r);
static void write_csv_header(void);
static void write_csv_counts(const TrancheRate *r, bool held);
static void write_csv_text(const char *text);


/*
 * show_report
 *		Write a report in the output mode: redraw the screen, or append to
 *		stdout.
 */
void
show_report(const Report *report)
{
	switch (output_mode)
	{
		case OUTPUT_SCREEN:
			show_screen(report);
			break;
		case OUTPUT_BATCH:
			write_batch(report);
			break;
		case OUTPUT_CSV:
			write_csv(report);
			break;
	}
}

/*
 * show_screen
 *		Redraw the terminal: a title line, the key and status line, then the
 *		report sized to the window (or the legend, while it is shown).
 *		report may be NULL before the first interval has passed.
 */
void
show_screen(const Report *report)
{
	int			rows;
	int			cols;
	PQExpBufferData body;
	PQExpBufferData screen;

	terminal_size(&rows, &cols);

	initPQExpBuffer(&body);
	appendPQExpBuffer(&body, "pg_lockstat_top %s on %s  sort: %s  (keys: b w s a, ? legend, q)\n",
					  PG_LOCKSTAT_TOP_VERSION, sampling_dbname(),
					  sort_key_names[sort_key]);
	appendPQExpBuffer(&body, "%s\n", status_line ? status_line : "");
	if (legend_shown)
		render_legend(&body, cols);
	else if (report)
		render_report(report, &body, rows - 2);
	else
		appendPQExpBuffer(&body, "waiting %.2f s for the first interval...\n",
						  interval_s);

	initPQExpBuffer(&screen);
	clip_to_screen(body.data, rows, cols, &screen);
	fputs(screen.data, stdout);
	fflush(stdout);
	termPQExpBuffer(&screen);
	termPQExpBuffer(&body);
}

/*
 * toggle_legend
 *		Show the legend instead of the report on the screen, or the report
 *		again.
 */
void
toggle_legend(void)
{
	legend_shown = !legend_shown;
}

/*
 * hide_legend
 *		Show the report again, if the legend was shown.
 */
void
hide_legend(void)
{
	legend_shown = false;
}

/*
 * clip_to_screen
 *		The escape sequences that draw text on a screen of rows by cols,
 *		into screen: home, each line clipped and cleared to its end (the
 *		column names in reverse video), then clear below.  Nothing is cut
 *		without a mark: a line cut at the right edge ends in ">" (after its
 *		last blank that fits, see cut_at_blank), and if the text has more
 *		lines than the screen, its last line says how many more.
 */
static void
clip_to_screen(const char *text, int rows, int cols, PQExpBuffer screen)
{
	const char *line = text;
	int			nlines = 0;
	int			total = 0;

	for (const char *p = text; *p; p++)
		total += (*p == '\n' || p[1] == '\0');

	appendPQExpBufferStr(screen, "\033[H");
	while (*line && nlines < rows)
	{
		const char *eol = strchr(line, '\n');
		int			len = eol ? (int) (eol - line) : (int) strlen(line);

		if (nlines > 0)
			appendPQExpBufferChar(screen, '\n');
		if (nlines == rows - 1 && total > rows)
		{
			appendPQExpBuffer(screen, "... %d more lines\033[K",
							  total - nlines);
			break;
		}
		if (is_heading(line))
			appendPQExpBufferStr(screen, "\033[7m");
		if (len > cols)
		{
			appendBinaryPQExpBuffer(screen, line, cut_at_blank(line, cols));
			appendPQExpBufferChar(screen, '>');
		}
		else
			appendBinaryPQExpBuffer(screen, line, len);
		appendPQExpBufferStr(screen, "\033[0m\033[K");
		nlines++;
		line = eol ? eol + 1 : line + len;
	}
	appendPQExpBufferStr(screen, "\033[J");
}

/*
 * cut_at_blank
 *		How many bytes of a line too long for a window cols wide to show
 *		before the ">" that marks the cut: up to its last blank within
 *		cols - 1 bytes, so that no number or word shows in part (a number
 *		cut in part would read as a smaller one), or cols - 1 bytes if it
 *		has no such blank.
 */
static int
cut_at_blank(const char *line, int cols)
{
	for (int i = cols - 1; i > 0; i--)
	{
		if (line[i] == ' ')
			return i;
	}
	return cols - 1;
}

/*
 * is_heading
 *		Whether a line of a report is the column names of a section, which
 *		the screen shows in reverse video.
 */
static bool
is_heading(const char *line)
{
	static const char *const headings[] = {
		"Tranche ", "Sampled holds ", "Wait ms/s ", "Spinlock call site ",
	};

	for (int i = 0; i < lengthof(headings); i++)
	{
		if (strncmp(line, headings[i], strlen(headings[i])) == 0)
			return true;
	}
	return false;
}

/*
 * write_batch
 *		A report as --batch writes it: its text and an empty line.
 */
static void
write_batch(const Report *report)
{
	PQExpBufferData out;

	initPQExpBuffer(&out);
	render_report(report, &out, 0);
	fputs(out.data, stdout);
	fputc('\n', stdout);
	fflush(stdout);
	termPQExpBuffer(&out);
}

/*
 * write_csv
 *		One CSV row per tranche (the top -t of them), preceded once by the
 *		header row.  Values are the interval's counts and their rates; the
 *		percentages are empty when the interval had no blocks or spin delays
 *		at all, the busy share and ceiling when not known.
 */
static void
write_csv(const Report *report)
{
	const CounterSet *set = counter_set(COUNTERS_LWLOCK);
	int			nrows = top_rows(report->nrows);

	write_csv_header();
	for (int i = 0; i < nrows; i++)
	{
		const TrancheRate *r = &report->rows[i];

		printf("%s,%.3f,%d,", report->time_csv, report->rate_interval,
			   report->reset ? 1 : 0);
		if (r->id >= 0)
			printf("%d", r->id);
		putchar(',');
		write_csv_text(r->name);
		write_csv_counts(r, false);
		for (int c = 0; c < set->ncolumns; c++)
		{
			if (!set->columns[c].held)
				printf(",%.3f", r->per_s[c]);
		}
		putchar(',');
		if (r->blk_pct >= 0)
			printf("%.2f", r->blk_pct);
		putchar(',');
		if (r->spin_delay_pct >= 0)
			printf("%.2f", r->spin_delay_pct);
		write_csv_counts(r, true);
		putchar(',');
		if (r->mean_hold_us >= 0)
			printf("%.3f", r->mean_hold_us);
		write_csv_busy(report, r);
	}
	fflush(stdout);
}

/*
 * write_csv_busy
 *		The last fields of a tranche's CSV row and its line end: the
 *		interval's estimated exclusive hold time, the busy share, the tps
 *		and the ceiling, each empty when not known (see busy.c).
 */
static void
write_csv_busy(const Report *report, const TrancheRate *r)
{
	putchar(',');
	if (r->ex_est_hold_ms >= 0)
		printf("%.3f", r->ex_est_hold_ms);
	putchar(',');
	if (r->busy_pct >= 0)
		printf("%.2f", r->busy_pct);
	putchar(',');
	if (report->have_tps)
		printf("%.1f", report->tps);
	putchar(',');
	if (r->ceiling_tps >= 0)
		printf("%.1f", r->ceiling_tps);
	putchar('\n');
}

/*
 * write_csv_header
 *		The CSV header row, the first time: the tranche, the counts of the
 *		values of the rate columns, the rates, the shares, then the counts of
 *		the sampled holds and their mean.
 */
static void
write_csv_header(void)
{
	const CounterSet *set = counter_set(COUNTERS_LWLOCK);

	if (csv_header_done)
		return;
	fputs("timestamp,interval_s,reset,tranche_id,tranche", stdout);
	write_csv_counts(NULL, false);
	for (int c = 0; c < set->ncolumns; c++)
	{
		if (!set->columns[c].held)
			printf(",%s", set->columns[c].csv_name);
	}
	fputs(",blk_pct,spin_delay_pct", stdout);
	write_csv_counts(NULL, true);
	fputs(",mean_hold_us,ex_est_hold_time_ms,busy_pct,tps,ceiling_tps\n",
		  stdout);
	csv_header_done = true;
}

/*
 * write_csv_counts
 *		A tranche row's counts of the values of the rate columns, or (held)
 *		of the sampled holds, each after a comma, milliseconds with three
 *		decimals; or, if r is NULL, their names in the header row (a name in
 *		milliseconds with "_ms").
 */
static void
write_csv_counts(const TrancheRate *r, bool held)
{
	const CounterSet *set = counter_set(COUNTERS_LWLOCK);

	for (int v = 0; v < set->nvalues; v++)
	{
		const TopValue *val = &set->values[v];

		if (set->columns[val->column].held != held)
			continue;
		if (r == NULL)
			printf(",%s%s", val->name, val->in_ms ? "_ms" : "");
		else if (val->in_ms)
			printf(",%.3f", r->counts[v]);
		else
			printf(",%lld", (long long) r->counts[v]);
	}
}

/*
 * write_csv_text
 *		A CSV field, quoted if it has a comma, quote or line break.
 */
static void
write_csv_text(const char *text)
{
	const char *p;

	if (strpbrk(text, ",\"\r\n") == NULL)
	{
		fputs(text, stdout);
		return;
	}
	putchar('"');
	for (p = text; *p; p++)
	{
		if (*p == '"')
			putchar('"');
		putchar(*p);
	}
	putchar('"');
}

/*
 * note_event
 *		Report a connection event (a printf format and its arguments, one
 *		line without a newline): on the status line of the screen until
 *		clear_event, as a "--" line in --batch output, or on stderr with
 *		--csv (so that stdout stays pure CSV; the gap shows as missing
 *		timestamps).
 */
void
note_event(const char *fmt,...)
{
	va_list		ap;
	char		msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	switch (output_mode)
	{
		case OUTPUT_SCREEN:
			pg_free(status_line);
			status_line = pg_strdup(msg);
			break;
		case OUTPUT_BATCH:
			printf("-- %s\n\n", msg);
			fflush(stdout);
			break;
		case OUTPUT_CSV:
			pg_log_info("%s", msg);
			break;
	}
}

/*
 * clear_event
 *		Take the last event off the status line of the screen.
 */
void
clear_event(void)
{
	pg_free(status_line);
	status_line = NULL;
}
