/*-------------------------------------------------------------------------
 *
 * connect.c
 *	  pg_lockstat_top's connection, its setup errors, and the notes
 *
 * Errors that mean pg_lockstat cannot be used here (extension missing,
 * library not preloaded, permission denied) end the program with
 * EXIT_SETUP through setup_failure; other failures are returned.  What is
 * turned off after an error is said in a note that the main loop shows
 * (next_sampling_note()), so that the files that sample do not call the
 * output's.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/connect.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "common/logging.h"
#include "common/string.h"
#include "pg_lockstat_top.h"

/* the connection */
static PGconn *conn;

/* notes not yet shown, oldest first (see next_sampling_note()) */
#define MAX_SAMPLING_NOTES	8

static char *sampling_notes[MAX_SAMPLING_NOTES];
static int	nsampling_notes = 0;

static void notice_processor(void *arg, const char *message);


/*
 * connect_or_exit
 *		Open the connection, asking for a password only if the server wants
 *		one and none was given (or always with -W).  Failure ends the program
 *		with EXIT_SETUP and libpq's message.  (connectDatabase of
 *		fe_utils/connect_utils.h ends it with exit status 1, or drops the
 *		message with fail_ok.)
 */
void
connect_or_exit(const ConnParams *cparams)
{
	char	   *password = NULL;

	if (cparams->prompt_password == TRI_YES)
		password = simple_prompt("Password: ", false);

	for (;;)
	{
		const char *keywords[] = {"host", "port", "user", "password",
		"dbname", "fallback_application_name", NULL};
		const char *values[] = {cparams->pghost, cparams->pgport,
		cparams->pguser, password, cparams->dbname, progname, NULL};

		/* expand_dbname: dbname may be a connection string or URI */
		conn = PQconnectdbParams(keywords, values, true);
		if (conn == NULL)
		{
			pg_log_error("could not connect to the server: out of memory");
			exit(EXIT_SETUP);
		}
		if (PQstatus(conn) == CONNECTION_BAD &&
			PQconnectionNeedsPassword(conn) && password == NULL &&
			cparams->prompt_password != TRI_NO)
		{
			PQfinish(conn);
			password = simple_prompt("Password: ", false);
			continue;
		}
		break;
	}

	if (PQstatus(conn) == CONNECTION_BAD)
	{
		pg_log_error("%s", PQerrorMessage(conn));
		exit(EXIT_SETUP);
	}
	free(password);
	PQsetNoticeProcessor(conn, notice_processor, NULL);
}

/*
 * notice_processor
 *		Server notices and warnings (such as pg_lockstat's warning about the
 *		overflow row) go to stderr after the program's name, except on the
 *		screen, which they would garble.  PQreset keeps this processor.
 */
static void
notice_processor(void *arg, const char *message)
{
	if (output_mode != OUTPUT_SCREEN)
		pg_log_info("%s", message);
}

/*
 * sampling_conn
 *		The connection, open since connect_or_exit.
 */
PGconn *
sampling_conn(void)
{
	return conn;
}

/*
 * close_sampling
 *		Close the connection.
 */
void
close_sampling(void)
{
	PQfinish(conn);
	conn = NULL;
}

/*
 * sampling_dbname
 *		The name of the connected database, for the title of the screen.
 */
const char *
sampling_dbname(void)
{
	return PQdb(conn);
}

/*
 * connection_lost
 *		Whether the connection is gone, after a failed sample.  When the
 *		server has closed the socket, a query can fail in the write while
 *		libpq still reports CONNECTION_OK, since it waits to read the server's
 *		last message; an empty query then settles it.
 */
bool
connection_lost(void)
{
	PGresult   *res;

	if (PQstatus(conn) == CONNECTION_BAD)
		return true;
	res = PQexec(conn, "");
	PQclear(res);
	return PQstatus(conn) == CONNECTION_BAD;
}

/*
 * check_setup_error
 *		If a failed query says that pg_lockstat cannot be used here, say what
 *		to do and exit with EXIT_SETUP.  Other errors return.
 */
void
check_setup_error(const PGresult *res)
{
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);

	if (sqlstate == NULL)
		return;
	if (strcmp(sqlstate, "55000") == 0)
		setup_failure("pg_lockstat is not loaded by the server: add pg_lockstat to shared_preload_libraries and restart the server");
	if (strcmp(sqlstate, "42501") == 0)
		setup_failure("role \"%s\" may not read the pg_lockstat views: GRANT pg_read_all_stats TO \"%s\"; as a superuser, or connect as a role that has it",
					  PQuser(conn), PQuser(conn));
	/* undefined table, function or schema: the extension was dropped */
	if (strcmp(sqlstate, "42P01") == 0 || strcmp(sqlstate, "42883") == 0 ||
		strcmp(sqlstate, "3F000") == 0)
		setup_failure("extension \"pg_lockstat\" is not installed in database \"%s\": run CREATE EXTENSION pg_lockstat; in it as a superuser, or connect to a database that has it",
					  PQdb(conn));
}

/*
 * column_value
 *		The value of the column named name in the first row of res, which
 *		our own query selects (so the column is there).
 */
const char *
column_value(const PGresult *res, const char *name)
{
	int			column = PQfnumber(res, name);

	Assert(column >= 0);
	return PQgetvalue(res, 0, column);
}

/*
 * first_line
 *		A malloc'd copy of the first line of a (libpq) message, without the
 *		"ERROR:  " prefix.
 */
char *
first_line(const char *msg)
{
	char	   *copy;
	char	   *nl;

	if (msg == NULL || *msg == '\0')
		msg = "unknown error";
	if (strncmp(msg, "ERROR:  ", 8) == 0 || strncmp(msg, "FATAL:  ", 8) == 0)
		msg += 8;
	copy = pg_strdup(msg);
	nl = strchr(copy, '\n');
	if (nl)
		*nl = '\0';
	return copy;
}

/*
 * add_sampling_note
 *		Keep a note (a printf format and its arguments, one line without a
 *		newline) for next_sampling_note.  Notes beyond MAX_SAMPLING_NOTES
 *		not yet taken are dropped; each kind is made at most once per view
 *		turned off.
 */
void
add_sampling_note(const char *fmt,...)
{
	va_list		ap;
	char		msg[1024];

	if (nsampling_notes == MAX_SAMPLING_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sampling_notes[nsampling_notes++] = pg_strdup(msg);
}

/*
 * next_sampling_note
 *		The oldest note not yet taken, such as "query texts not shown:
 *		<reason>", malloc'd for the caller to show and free; NULL if there is
 *		none.  Notes are made by open_sampling, reopen_sampling, take_sample,
 *		label_queries and label_blockers.
 */
char *
next_sampling_note(void)
{
	char	   *note;

	if (nsampling_notes == 0)
		return NULL;
	note = sampling_notes[0];
	nsampling_notes--;
	memmove(sampling_notes, sampling_notes + 1,
			sizeof(char *) * nsampling_notes);
	return note;
}
