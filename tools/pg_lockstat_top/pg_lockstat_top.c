/*-------------------------------------------------------------------------
 *
 * pg_lockstat_top.c
 *	  Live LWLock contention rates from pg_lockstat, in the manner of top
 *
 * Every interval the program reads pg_lockstat_status, pg_lwlock_stats,
 * pg_stat_database and pg_stat_activity (and pg_spinlock_stats,
 * pg_lwlock_query_stats and pg_lwlock_blockers where the extension has
 * them) in one round trip ("a sample", sample.c) and shows the difference
 * to the previous sample as rates per second (rates.c), with the texts of
 * the queries shown from
 * pg_stat_statements: a full-screen display on a terminal, blocks of plain
 * lines with --batch, or CSV rows with --csv (render.c, terminal.c).  The
 * first sample after start-up or after a reconnection is only a baseline.
 * pg_lockstat_top.h lists the files.
 *
 * Exit status: 0 after -n reports, "q", SIGINT or SIGTERM; 1 for bad
 * options; 2 when the server cannot be reached at start-up or pg_lockstat
 * cannot be read (extension missing, library not preloaded, permission
 * denied).  A connection lost later is retried at every interval.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/pg_lockstat_top.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <time.h>

#include "common/logging.h"
#include "pg_lockstat_top.h"

/* where the main loop is */
typedef struct LoopState
{
	Sample		prev;			/* the last sample, if connected */
	Report		report;			/* the last report, if have_report */
	bool		have_report;
	bool		connected;
	int			reports;		/* reports shown so far */
	double		lost_at;		/* monotonic_seconds when the connection was
								 * lost */
} LoopState;

static void run_loop(LoopState *state);
static void try_reconnect(LoopState *state);
static bool wait_for_deadline(LoopState *state, double deadline);
static bool next_report(LoopState *state);
static void sample_failed(LoopState *state, char *error);
static void show_sampling_notes(void);
static const char *client_time(void);


/*
 * main
 *		Parse the options, connect and take a baseline, then run the loop
 *		until -n reports, "q" or a stop signal.  Exits with EXIT_OK, or (in
 *		the callees) EXIT_USAGE or EXIT_SETUP.
 */
int
main(int argc, char **argv)
{
	ConnParams	cparams = {0};
	LoopState	state = {0};

	pg_logging_init(argv[0]);
	progname = get_progname(argv[0]);
	cparams.prompt_password = TRI_DEFAULT;

	parse_options(argc, argv, &cparams);
	open_sampling(&cparams, &state.prev);
	state.connected = true;
	show_sampling_notes();

	install_signal_handlers();
	if (output_mode == OUTPUT_SCREEN)
	{
		terminal_enter();
		show_screen(NULL);
	}

	run_loop(&state);

	terminal_leave();
	free_report(&state.report);
	if (state.connected)
		free_sample(&state.prev);
	close_sampling();
	return EXIT_OK;
}

/*
 * run_loop
 *		One report per interval until -n reports, "q" or a stop signal.  A
 *		lost connection is retried at every interval; the first sample after
 *		reconnecting is a new baseline.
 */
static void
run_loop(LoopState *state)
{
	double		deadline = monotonic_seconds();

	for (;;)
	{
		/* a late sample (slow query, reconnection) does not cause a burst */
		deadline += interval_s;
		if (deadline < monotonic_seconds())
			deadline = monotonic_seconds();
		if (!wait_for_deadline(state, deadline))
			return;

		if (!state->connected)
			try_reconnect(state);
		else if (next_report(state) &&
				 report_count > 0 && state->reports >= report_count)
			return;
		if (got_stop_signal)
			return;
	}
}

/*
 * wait_for_deadline
 *		Wait until deadline, acting on what happens meanwhile: a sort key
 *		re-sorts the report shown (and leaves the legend), "?" shows or
 *		hides the legend, and each of these or a window size change redraws
 *		the screen.  Returns false on a stop signal or "q".
 */
static bool
wait_for_deadline(LoopState *state, double deadline)
{
	for (;;)
	{
		SortKey		key = sort_key;

		switch (wait_until(deadline, &key))
		{
			case WAIT_DEADLINE:
				return true;
			case WAIT_STOP:
				return false;
			case WAIT_SORT_KEY:
				sort_key = key;
				if (state->have_report)
					sort_report(&state->report);
				hide_legend();
				show_screen(state->have_report ? &state->report : NULL);
				break;
			case WAIT_LEGEND:
				toggle_legend();
				show_screen(state->have_report ? &state->report : NULL);
				break;
			case WAIT_RESIZE:
				show_screen(state->have_report ? &state->report : NULL);
				break;
		}
	}
}

/*
 * try_reconnect
 *		One attempt to get the lost connection back, with a new baseline.
 */
static void
try_reconnect(LoopState *state)
{
	bool		ok = reopen_sampling(&state->prev);

	show_sampling_notes();
	if (!ok)
		return;
	state->connected = true;
	note_event("reconnected at %s after %.1f s; new baseline",
			   state->prev.time_text, monotonic_seconds() - state->lost_at);
	if (output_mode == OUTPUT_SCREEN)
		show_screen(state->have_report ? &state->report : NULL);
}

/*
 * next_report
 *		Take a sample and show the report since the previous one.  Returns
 *		true if a report was shown; false if the sample failed (or was
 *		cancelled by a stop signal) or the server clock went back, in which
 *		case the new sample is only a baseline.
 */
static bool
next_report(LoopState *state)
{
	Sample		cur;
	char	   *error;

	if (!take_sample(&cur, &error))
	{
		show_sampling_notes();
		sample_failed(state, error);
		return false;
	}

	free_report(&state->report);
	state->have_report = make_report(&state->prev, &cur, &state->report);
	free_sample(&state->prev);
	state->prev = cur;
	if (!state->have_report)
		return false;
	if (state->report.have_queries)
		label_queries(&state->report);
	if (state->report.have_blockers)
		label_blockers(&state->report);

	/* on the screen, an event stays on show until the next report */
	clear_event();
	show_sampling_notes();
	show_report(&state->report);
	state->reports++;
	return true;
}

/*
 * sample_failed
 *		Say why a sample failed (error, which is freed) and whether the
 *		connection is lost; nothing if it was our own cancel.
 */
static void
sample_failed(LoopState *state, char *error)
{
	if (got_stop_signal)
	{
		pg_free(error);
		return;
	}
	if (connection_lost())
	{
		state->connected = false;
		state->lost_at = monotonic_seconds();
		note_event("connection lost at %s: %s; retrying every %.2f s",
				   client_time(), error, interval_s);
		free_sample(&state->prev);
	}
	else
		note_event("sample failed at %s: %s; trying again in %.2f s",
				   client_time(), error, interval_s);
	pg_free(error);
	if (output_mode == OUTPUT_SCREEN)
		show_screen(state->have_report ? &state->report : NULL);
}

/*
 * show_sampling_notes
 *		Show what sample.c has noted (a view or the query texts turned off
 *		after an error, and why) as events, oldest first.
 */
static void
show_sampling_notes(void)
{
	char	   *note;

	while ((note = next_sampling_note()) != NULL)
	{
		note_event("%s", note);
		pg_free(note);
	}
}

/*
 * client_time
 *		The client's local time of day, for events that happen while there is
 *		no server to ask (a static buffer).
 */
static const char *
client_time(void)
{
	static char buf[32];
	time_t		now = time(NULL);
	struct tm	tm;

	localtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	return buf;
}
