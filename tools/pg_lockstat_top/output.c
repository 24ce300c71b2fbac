/*-------------------------------------------------------------------------
 *
 * output.c
 *	  pg_lockstat_top's output: the screen, --batch, CSV, events
 *
 * The screen and --batch show the text of a report (render.c); --csv writes
 * one row per tranche instead.  Connection events go to the status line of the
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
static bool csv_header_done = false;

static void clip_to_screen(const char *text, int rows, int cols,
						   PQExpBuffer screen);
static void write_batch(const Report *report);
static void write_csv(const Report *report);
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
 *		report clipped to the window.  report may be NULL before the first
 *		interval has passed.
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
	appendPQExpBuffer(&body, "pg_lockstat_top %s on %s  sort: %s  (keys: b w s a, q)\n",
					  PG_LOCKSTAT_TOP_VERSION, sampling_dbname(),
					  sort_key_names[sort_key]);
	appendPQExpBuffer(&body, "%s\n", status_line ? status_line : "");
	if (report)
		render_report(report, &body, rows - 6);
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
 * clip_to_screen
 *		The escape sequences that draw text on a screen of rows by cols,
 *		into screen: home, each line clipped and cleared to its end (the
 *		column names in reverse video), then clear below.
 */
static void
clip_to_screen(const char *text, int rows, int cols, PQExpBuffer screen)
{
	const char *line = text;
	int			nlines = 0;

	appendPQExpBufferStr(screen, "\033[H");
	while (*line && nlines < rows)
	{
		const char *eol = strchr(line, '\n');
		int			len = eol ? (int) (eol - line) : (int) strlen(line);

		if (nlines > 0)
			appendPQExpBufferChar(screen, '\n');
		if (strncmp(line, "Tranche ", 8) == 0 ||
			strncmp(line, "Wait ms/s ", 10) == 0 ||
			strncmp(line, "Spinlock call site ", 19) == 0)
			appendPQExpBufferStr(screen, "\033[7m");
		appendBinaryPQExpBuffer(screen, line, Min(len, cols));
		appendPQExpBufferStr(screen, "\033[0m\033[K");
		nlines++;
		line = eol ? eol + 1 : line + len;
	}
	appendPQExpBufferStr(screen, "\033[J");
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
 *		at all.
 */
static void
write_csv(const Report *report)
{
	int			nrows = report->nrows;
	int			i;

	if (!csv_header_done)
	{
		fputs("timestamp,interval_s,reset,tranche_id,tranche,"
			  "sh_acquires,ex_acquires,blocks,spin_delays,wait_time_ms,"
			  "acquires_per_s,blocks_per_s,spin_delays_per_s,wait_ms_per_s,"
			  "blk_pct,spin_delay_pct,hold_samples,hold_time_ms,mean_hold_us\n",
			  stdout);
		csv_header_done = true;
	}
	if (top_n > 0 && nrows > top_n)
		nrows = top_n;
	for (i = 0; i < nrows; i++)
	{
		const TrancheRate *r = &report->rows[i];

		printf("%s,%.3f,%d,", report->time_csv, report->rate_interval,
			   report->reset ? 1 : 0);
		if (r->id >= 0)
			printf("%d", r->id);
		putchar(',');
		write_csv_text(r->name);
		printf(",%lld,%lld,%lld,%lld,%.3f,%.3f,%.3f,%.3f,%.3f,",
			   (long long) r->sh_acquires, (long long) r->ex_acquires,
			   (long long) r->blocks, (long long) r->spin_delays,
			   r->wait_ms, r->acquires_per_s, r->blocks_per_s,
			   r->spin_delays_per_s, r->wait_ms_per_s);
		if (r->blk_pct >= 0)
			printf("%.2f", r->blk_pct);
		putchar(',');
		if (r->spin_delay_pct >= 0)
			printf("%.2f", r->spin_delay_pct);
		printf(",%lld,%.3f,", (long long) r->hold_samples, r->hold_ms);
		if (r->mean_hold_us >= 0)
			printf("%.3f", r->mean_hold_us);
		putchar('\n');
	}
	fflush(stdout);
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
