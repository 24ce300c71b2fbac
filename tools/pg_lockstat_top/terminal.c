/*-------------------------------------------------------------------------
 *
 * terminal.c
 *	  pg_lockstat_top's terminal, signals, and the wait between samples
 *
 * On the screen the program switches the terminal to the alternate screen
 * with the cursor hidden and, if stdin is a terminal, to unbuffered input
 * without echo, so that single keys re-sort the table; every way out
 * (exit, a second Ctrl-C, Ctrl-Z) restores the terminal.
 *
 * SIGINT is fe_utils/cancel.c's: it cancels the query of a sample in
 * progress (see take_sample) and calls stop_requested.  SIGTERM is turned
 * into SIGINT.  The handlers interrupt the select() of the wait at once
 * (select() is not restarted after a signal handler, SA_RESTART or not).
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/terminal.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <signal.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <termios.h>
#include <unistd.h>

#include "common/logging.h"
#include "fe_utils/cancel.h"
#include "pg_lockstat_top.h"
#include "portability/instr_time.h"

/* escape sequences: alternate screen, no cursor, cleared; and back */
static const char screen_enter_seq[] = "\033[?1049h\033[?25l\033[H\033[2J";
static const char screen_leave_seq[] = "\033[0m\033[?25h\033[?1049l";

/* terminal state */
static bool keys_enabled;		/* reading keys from a terminal on stdin */
static struct termios saved_termios;
static volatile sig_atomic_t terminal_active = false;

/* signals */
volatile sig_atomic_t got_stop_signal = false;
static volatile sig_atomic_t got_winch = false;

static void write_raw(const char *seq, size_t len);
static void screen_enter_raw(void);
static void screen_leave_raw(void);
static void stop_requested(void);
static void handle_sigterm(SIGNAL_ARGS);
static void handle_winch(SIGNAL_ARGS);
static void handle_tstp(SIGNAL_ARGS);
static WaitEvent read_keys(SortKey *key);


/*
 * write_raw
 *		Write len bytes of seq to stdout, bypassing stdio.  Async-signal-safe;
 *		a failure is ignored, since the terminal is then gone.
 */
static void
write_raw(const char *seq, size_t len)
{
	if (write(STDOUT_FILENO, seq, len) < 0)
	{
		/* nothing to do: the terminal is gone */
	}
}

/*
 * screen_enter_raw
 *		Key input without echo (if keys are read) and the alternate screen.
 *		Async-signal-safe, for handle_tstp.
 */
static void
screen_enter_raw(void)
{
	if (keys_enabled)
	{
		struct termios raw = saved_termios;

		raw.c_lflag &= ~(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw);
	}
	write_raw(screen_enter_seq, sizeof(screen_enter_seq) - 1);
}

/*
 * screen_leave_raw
 *		Undo screen_enter_raw.  Async-signal-safe, for the signal handlers.
 */
static void
screen_leave_raw(void)
{
	write_raw(screen_leave_seq, sizeof(screen_leave_seq) - 1);
	if (keys_enabled)
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_termios);
}

/*
 * terminal_enter
 *		Switch the terminal to the alternate screen with the cursor hidden,
 *		and, if stdin is a terminal, to unbuffered input without echo.
 *		Signals (Ctrl-C) stay enabled.  Every exit() restores the terminal.
 */
void
terminal_enter(void)
{
	keys_enabled = isatty(STDIN_FILENO) &&
		tcgetattr(STDIN_FILENO, &saved_termios) == 0;
	fflush(stdout);
	screen_enter_raw();
	terminal_active = true;
	atexit(terminal_leave);
}

/*
 * terminal_leave
 *		Undo terminal_enter, if it is in force.
 */
void
terminal_leave(void)
{
	if (!terminal_active)
		return;
	terminal_active = false;
	fflush(stdout);
	screen_leave_raw();
}

/*
 * terminal_size
 *		The window size of the terminal on stdout in *rows and *cols, or 24
 *		by 80 if it cannot be read.
 */
void
terminal_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 &&
		ws.ws_col > 0)
	{
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/*
 * stop_requested
 *		Called by fe_utils/cancel.c's SIGINT handler, before it cancels the
 *		query in progress: ask the main loop to stop.  A second signal, if
 *		the first did not get through (a connection attempt that hangs),
 *		restores the terminal and exits at once.
 */
static void
stop_requested(void)
{
	if (got_stop_signal)
	{
		if (terminal_active)
			screen_leave_raw();
		_exit(EXIT_OK);
	}
	got_stop_signal = true;
}

/*
 * handle_sigterm
 *		SIGTERM: the same as SIGINT, whose handler cancels the query.
 */
static void
handle_sigterm(SIGNAL_ARGS)
{
	raise(SIGINT);
}

/*
 * handle_winch
 *		SIGWINCH: redraw at the new window size.
 */
static void
handle_winch(SIGNAL_ARGS)
{
	got_winch = true;
}

/*
 * handle_tstp
 *		SIGTSTP (Ctrl-Z): give the shell a normal terminal while stopped, and
 *		take the screen back when continued.
 */
static void
handle_tstp(SIGNAL_ARGS)
{
	bool		was_active = terminal_active;
	sigset_t	mask;

	if (was_active)
		screen_leave_raw();

	/* stop with the default action, then come back here on SIGCONT */
	pqsignal(SIGTSTP, SIG_DFL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTSTP);
	sigprocmask(SIG_UNBLOCK, &mask, NULL);
	raise(SIGTSTP);
	pqsignal(SIGTSTP, handle_tstp);

	if (was_active)
	{
		screen_enter_raw();
		got_winch = true;		/* redraw */
	}
}

/*
 * setup_failure
 *		Leave the terminal, print one error line from the printf format fmt
 *		and its arguments, saying what to do, and exit with EXIT_SETUP.
 */
void
setup_failure(const char *fmt,...)
{
	va_list		ap;

	terminal_leave();
	va_start(ap, fmt);
	pg_log_generic_v(PG_LOG_ERROR, PG_LOG_PRIMARY, fmt, ap);
	va_end(ap);
	exit(EXIT_SETUP);
}

/*
 * install_signal_handlers
 *		SIGINT and SIGTERM stop the program cleanly, cancelling a sample in
 *		progress; on the screen, SIGWINCH redraws and SIGTSTP hands the
 *		terminal back while stopped.
 */
void
install_signal_handlers(void)
{
	setup_cancel_handler(stop_requested);
	pqsignal(SIGTERM, handle_sigterm);
	if (output_mode == OUTPUT_SCREEN)
	{
		pqsignal(SIGWINCH, handle_winch);
		pqsignal(SIGTSTP, handle_tstp);
	}
}

/*
 * monotonic_seconds
 *		The client's monotonic clock in seconds, for scheduling samples.
 */
double
monotonic_seconds(void)
{
	instr_time	now;

	INSTR_TIME_SET_CURRENT(now);
	return INSTR_TIME_GET_DOUBLE(now);
}

/*
 * wait_until
 *		Sleep until deadline (in monotonic_seconds), and say what ended the
 *		wait: WAIT_DEADLINE; WAIT_STOP after a stop signal or "q";
 *		WAIT_RESIZE when the window size changed (or the screen came back
 *		after Ctrl-Z); WAIT_SORT_KEY when a sort key was typed, the new key
 *		in *key; WAIT_LEGEND when "?" was typed.  The caller re-sorts and redraws, then waits again for the
 *		same deadline.  Nothing here draws.
 */
WaitEvent
wait_until(double deadline, SortKey *key)
{
	for (;;)
	{
		double		left;
		struct timeval tv;
		fd_set		fds;
		int			rc;

		if (got_stop_signal)
			return WAIT_STOP;
		if (got_winch)
		{
			got_winch = false;
			return WAIT_RESIZE;
		}
		left = deadline - monotonic_seconds();
		if (left <= 0)
			return WAIT_DEADLINE;
		tv.tv_sec = (time_t) left;
		tv.tv_usec = (suseconds_t) ((left - tv.tv_sec) * 1000000);
		FD_ZERO(&fds);
		if (keys_enabled)
			FD_SET(STDIN_FILENO, &fds);
		rc = select(keys_enabled ? STDIN_FILENO + 1 : 0,
					keys_enabled ? &fds : NULL, NULL, NULL, &tv);
		if (rc > 0 && keys_enabled && FD_ISSET(STDIN_FILENO, &fds))
		{
			WaitEvent	event = read_keys(key);

			if (event != WAIT_DEADLINE)
				return event;
		}
	}
}

/*
 * read_keys
 *		The keys typed: q gives WAIT_STOP; b, w, s and a give WAIT_SORT_KEY
 *		with the last of them in *key; ? (or h) gives WAIT_LEGEND unless a
 *		sort key follows it; anything else is ignored (WAIT_DEADLINE: no
 *		event).
 */
static WaitEvent
read_keys(SortKey *key)
{
	char		keys[64];
	ssize_t		n = read(STDIN_FILENO, keys, sizeof(keys));
	WaitEvent	event = WAIT_DEADLINE;
	ssize_t		i;

	for (i = 0; i < n; i++)
	{
		switch (keys[i])
		{
			case 'q':
			case 'Q':
				got_stop_signal = true;
				return WAIT_STOP;
			case 'b':
				*key = SORT_BLOCKS;
				event = WAIT_SORT_KEY;
				break;
			case 'w':
				*key = SORT_WAIT;
				event = WAIT_SORT_KEY;
				break;
			case 's':
				*key = SORT_SPIN_DELAYS;
				event = WAIT_SORT_KEY;
				break;
			case 'a':
				*key = SORT_ACQUIRES;
				event = WAIT_SORT_KEY;
				break;
			case '?':
			case 'h':
				event = WAIT_LEGEND;
				break;
			default:
				break;
		}
	}
	return event;
}
