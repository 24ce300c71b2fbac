/*-------------------------------------------------------------------------
 *
 * sample.c
 *	  pg_lockstat_top's connection and samples
 *
 * A sample is pg_lockstat_status, pg_lwlock_stats, pg_stat_database and
 * pg_stat_activity (and pg_spinlock_stats, when the extension has it) read
 * in one round trip.  The status is read before the counters, so that a
 * reset between the two reads shows either as a counter that went down or,
 * in the next sample, as a moved stats_reset (see rates.c).
 *
 * Spinlock call sites: the view pg_spinlock_stats
 * (func, file, line, contended, spins, delays, wait_time, ...).  When the
 * extension's schema has it, it is read too; if it cannot be read it is
 * left out from then on, with a note.  The same goes for the blocked calls
 * per query, pg_lwlock_query_stats, and for those per waiting query, holder
 * and root holder, pg_lwlock_blockers.  Their query texts come from
 * pg_stat_statements when the database has that extension: looked up for
 * the rows shown only, and kept (see label_queries() and label_blockers()).
 *
 * Errors that mean pg_lockstat cannot be used here (extension missing,
 * library not preloaded, permission denied) end the program with
 * EXIT_SETUP through setup_failure; other failures are returned.  What is
 * turned off after an error is said in a note that the main loop shows
 * (next_sampling_note()), so that this file does not call the output's.
 * While the query of a sample runs, fe_utils/cancel.c's SIGINT handler may
 * cancel it.
 *
 * Every result is read by its columns' names (PQfnumber), never by their
 * positions; the names of the counters are those of the views, which
 * extension/lockstat_counters.h lists with the columns of this program that
 * show them (checked by t/043).
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/sample.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "common/logging.h"
#include "common/string.h"
#include "fe_utils/cancel.h"
#include "pg_lockstat_top.h"

/* the connection and what was found in its database */
static PGconn *conn;
static char *ext_schema;		/* quoted schema of the extension */
static bool have_spinlock_view;
static bool spinlock_view_failed = false;	/* not read again after an error */
static bool have_query_view;
static bool query_view_failed = false;	/* likewise */
static bool have_blocker_view;
static bool blocker_view_failed = false;	/* likewise */
static char *pgss_schema;		/* quoted schema of pg_stat_statements, or
								 * NULL if the database does not have it */
static bool pgss_failed = false;	/* texts not looked up after an error */

/* query texts looked up so far, by (queryid, dbid, userid) */
typedef struct QueryText
{
	int64		queryid;
	unsigned int dbid;
	unsigned int userid;
	char	   *text;
} QueryText;

static QueryText *query_texts = NULL;
static int	nquery_texts = 0;
static int	max_query_texts = 0;

/* notes not yet shown, oldest first (see next_sampling_note()) */
#define MAX_SAMPLING_NOTES	8

static char *sampling_notes[MAX_SAMPLING_NOTES];
static int	nsampling_notes = 0;

/* longest query text kept, in bytes */
#define QUERY_TEXT_LEN		200

/*
 * queries of a sample: status, tranches, and spinlock sites, blocked calls
 * per query and blockers if there
 */
#define MAX_SAMPLE_RESULTS	5

static void connect_or_exit(const ConnParams *cparams);
static void notice_processor(void *arg, const char *message);
static bool find_extension(void);
static void check_setup_error(const PGresult *res);
static bool take_baseline(Sample *sample, char **error);
static void append_sample_query(PQExpBuffer sql);
static int	collect_results(PGresult **results);
static bool check_results(PGresult **results, int nresults, char **error);
static void read_status(const PGresult *res, Sample *sample);
static void read_tranches(const PGresult *res, Sample *sample);
static void read_sites(const PGresult *res, Sample *sample);
static void read_queries(const PGresult *res, Sample *sample);
static void read_blockers(const PGresult *res, Sample *sample);
static int	sites_result(void);
static int	queries_result(void);
static int	blockers_result(void);
static const char *find_query_text(const QueryRate *q);
static const char *find_text_of_queryid(int64 queryid);
static void look_up_query_texts(const Report *report, int nshown);
static void look_up_blocker_texts(const Report *report, int nshown);
static void run_text_lookup(const char *sql);
static char *query_label(int64 queryid, const char *backend_type);
static void add_sampling_note(const char *fmt,...) pg_attribute_printf(1, 2);
static char *first_line(const char *msg);
static const char *column_value(const PGresult *res, const char *name);


/*
 * open_sampling
 *		Connect with *cparams, find the extension and take the first sample
 *		into *baseline.  Any failure ends the program with EXIT_SETUP.
 */
void
open_sampling(const ConnParams *cparams, Sample *baseline)
{
	char	   *error;

	connect_or_exit(cparams);
	if (!find_extension())
		setup_failure("could not read pg_lockstat: %s",
					  first_line(PQerrorMessage(conn)));
	if (!take_baseline(baseline, &error))
		setup_failure("could not read pg_lockstat: %s", error);
}

/*
 * reopen_sampling
 *		After a lost connection: reconnect with the same parameters (and
 *		password), find the extension again and take a new baseline into
 *		*baseline.  Returns false if any of it failed, to be tried again
 *		later; setup errors exit.
 */
bool
reopen_sampling(Sample *baseline)
{
	char	   *error;

	PQreset(conn);
	if (PQstatus(conn) != CONNECTION_OK || !find_extension())
		return false;
	if (!take_baseline(baseline, &error))
	{
		pg_free(error);
		return false;
	}
	return true;
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
 * connect_or_exit
 *		Open the connection, asking for a password only if the server wants
 *		one and none was given (or always with -W).  Failure ends the program
 *		with EXIT_SETUP and libpq's message.  (connectDatabase of
 *		fe_utils/connect_utils.h ends it with exit status 1, or drops the
 *		message with fail_ok.)
 */
static void
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
 * find_extension
 *		Find the schema of pg_lockstat in the connected database, whether
 *		this version has the spinlock view, the per-query view and the
 *		blockers' view, and the schema of pg_stat_statements if the database
 *		has it.  Exits with EXIT_SETUP if the
 *		extension is not there.  Returns false if the connection failed.
 */
static bool
find_extension(void)
{
	PGresult   *res;

	res = PQexec(conn,
				 "SELECT n.nspname AS ext_schema, "
				 "       pg_catalog.to_regclass(pg_catalog.format('%I.%I', n.nspname, 'pg_spinlock_stats')) IS NOT NULL AS have_spinlock, "
				 "       pg_catalog.to_regclass(pg_catalog.format('%I.%I', n.nspname, 'pg_lwlock_query_stats')) IS NOT NULL AS have_queries, "
				 "       pg_catalog.to_regclass(pg_catalog.format('%I.%I', n.nspname, 'pg_lwlock_blockers')) IS NOT NULL AS have_blockers, "
				 "       (SELECT pn.nspname FROM pg_catalog.pg_extension pe "
				 "        JOIN pg_catalog.pg_namespace pn ON pn.oid = pe.extnamespace "
				 "        WHERE pe.extname = 'pg_stat_statements') AS pgss_schema "
				 "FROM pg_catalog.pg_extension e "
				 "JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace "
				 "WHERE e.extname = 'pg_lockstat'");
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		bool		lost = (PQstatus(conn) == CONNECTION_BAD);

		if (!lost)
			setup_failure("could not look up extension \"pg_lockstat\": %s",
						  first_line(PQerrorMessage(conn)));
		PQclear(res);
		return false;
	}
	if (PQntuples(res) == 0)
		setup_failure("extension \"pg_lockstat\" is not installed in database \"%s\": run CREATE EXTENSION pg_lockstat; in it as a superuser, or connect to a database that has it",
					  PQdb(conn));

	if (ext_schema)
		PQfreemem(ext_schema);
	ext_schema = PQescapeIdentifier(conn, column_value(res, "ext_schema"),
									strlen(column_value(res, "ext_schema")));
	if (ext_schema == NULL)
		setup_failure("%s", first_line(PQerrorMessage(conn)));
	have_spinlock_view = (strcmp(column_value(res, "have_spinlock"), "t") == 0 &&
						  !spinlock_view_failed);
	have_query_view = (strcmp(column_value(res, "have_queries"), "t") == 0 &&
					   !query_view_failed);
	have_blocker_view = (strcmp(column_value(res, "have_blockers"), "t") == 0 &&
						 !blocker_view_failed);
	if (pgss_schema)
		PQfreemem(pgss_schema);
	pgss_schema = NULL;
	if (!PQgetisnull(res, 0, PQfnumber(res, "pgss_schema")))
		pgss_schema = PQescapeIdentifier(conn, column_value(res, "pgss_schema"),
										 strlen(column_value(res, "pgss_schema")));
	PQclear(res);
	return true;
}

/*
 * column_value
 *		The value of the column named name in the first row of res, which
 *		our own query selects (so the column is there).
 */
static const char *
column_value(const PGresult *res, const char *name)
{
	int			column = PQfnumber(res, name);

	Assert(column >= 0);
	return PQgetvalue(res, 0, column);
}

/*
 * check_setup_error
 *		If a failed query says that pg_lockstat cannot be used here, say what
 *		to do and exit with EXIT_SETUP.  Other errors return.
 */
static void
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
 * take_sample
 *		Read one sample into *sample (which need not be initialized) in one
 *		round trip.  On failure returns false with *error set to the first
 *		line of the message (malloc'd, for the caller to free); the caller
 *		tells a lost connection by connection_lost.  Setup errors exit.  A
 *		stop signal cancels the query (SetCancelConn).
 */
bool
take_sample(Sample *sample, char **error)
{
	PQExpBufferData sql;
	PGresult   *results[MAX_SAMPLE_RESULTS];
	int			nresults = 0;
	bool		ok;
	int			i;

	memset(sample, 0, sizeof(Sample));
	*error = NULL;

	initPQExpBuffer(&sql);
	append_sample_query(&sql);
	SetCancelConn(conn);
	ok = PQsendQuery(conn, sql.data);
	if (ok)
		nresults = collect_results(results);
	ResetCancelConn();
	termPQExpBuffer(&sql);
	if (!ok)
	{
		*error = first_line(PQerrorMessage(conn));
		return false;
	}

	ok = check_results(results, nresults, error);
	if (ok)
	{
		read_status(results[0], sample);
		read_tranches(results[1], sample);
		sample->have_sites = have_spinlock_view;
		if (have_spinlock_view)
			read_sites(results[sites_result()], sample);
		sample->have_queries = have_query_view;
		if (have_query_view)
			read_queries(results[queries_result()], sample);
		sample->have_blockers = have_blocker_view;
		if (have_blocker_view)
			read_blockers(results[blockers_result()], sample);
	}

	for (i = 0; i < nresults; i++)
		PQclear(results[i]);
	return ok;
}

/*
 * sites_result, queries_result, blockers_result
 *		The index of the result of the spinlock sites, of the blocked calls
 *		per query and of the blockers in a sample, or -1 if the view is not
 *		read.
 */
static int
sites_result(void)
{
	return have_spinlock_view ? 2 : -1;
}

static int
queries_result(void)
{
	return have_query_view ? 2 + (have_spinlock_view ? 1 : 0) : -1;
}

static int
blockers_result(void)
{
	return have_blocker_view ?
		2 + (have_spinlock_view ? 1 : 0) + (have_query_view ? 1 : 0) : -1;
}

/*
 * append_sample_query
 *		The statements of a sample, into sql: the status first, then the
 *		counters (see the file header for why this order makes every reset
 *		visible), then the spinlock sites, the blocked calls per query and
 *		the blockers if those views are read.
 */
static void
append_sample_query(PQExpBuffer sql)
{
	appendPQExpBuffer(sql,
					  "SELECT EXTRACT(epoch FROM t.now) AS epoch, "
					  "       pg_catalog.to_char(t.now, 'YYYY-MM-DD HH24:MI:SS') AS time_text, "
					  "       pg_catalog.to_char(t.now, 'YYYY-MM-DD\"T\"HH24:MI:SS.MSOF') AS time_csv, "
					  "       s.spin_strategy, s.stats_reset, "
					  "       EXTRACT(epoch FROM s.stats_reset) AS stats_reset_epoch, "
					  "       (SELECT pg_catalog.sum(xact_commit + xact_rollback) "
					  "        FROM pg_catalog.pg_stat_database) AS xacts, "
					  "       (SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_activity "
					  "        WHERE state = 'active' AND backend_type = 'client backend' "
					  "          AND pid <> pg_catalog.pg_backend_pid()) AS active "
					  "FROM %s.pg_lockstat_status s, "
					  "     pg_catalog.clock_timestamp() AS t(now);\n"
					  "SELECT COALESCE(tranche_id, -1) AS tranche_id, tranche, "
					  "       sh_acquires, ex_acquires, blocks, spin_delays, wait_time, "
					  "       sh_hold_samples + ex_hold_samples AS hold_samples, "
					  "       sh_hold_time + ex_hold_time AS hold_time "
					  "FROM %s.pg_lwlock_stats;\n",
					  ext_schema, ext_schema);
	if (have_spinlock_view)
		appendPQExpBuffer(sql,
						  "SELECT func, file, line, contended, spins, delays, wait_time "
						  "FROM %s.pg_spinlock_stats;\n",
						  ext_schema);
	if (have_query_view)
		appendPQExpBuffer(sql,
						  "SELECT COALESCE(queryid, 0) AS queryid, "
						  "       COALESCE(dbid, 0) AS dbid, COALESCE(userid, 0) AS userid, "
						  "       COALESCE(backend_type, '') AS backend_type, "
						  "       tranche, blocks, wait_time "
						  "FROM %s.pg_lwlock_query_stats;\n",
						  ext_schema);
	if (have_blocker_view)
		appendPQExpBuffer(sql,
						  "SELECT tranche, COALESCE(queryid, 0) AS queryid, "
						  "       COALESCE(dbid, 0) AS dbid, COALESCE(userid, 0) AS userid, "
						  "       COALESCE(backend_type, '') AS backend_type, "
						  "       COALESCE(holder_queryid, 0) AS holder_queryid, "
						  "       COALESCE(holder_backend_type, '') AS holder_backend_type, "
						  "       COALESCE(holder_mode, '') AS holder_mode, "
						  "       COALESCE(root_queryid, 0) AS root_queryid, "
						  "       COALESCE(root_backend_type, '') AS root_backend_type, "
						  "       COALESCE(root_mode, '') AS root_mode, "
						  "       blocks, wait_time "
						  "FROM %s.pg_lwlock_blockers;\n",
						  ext_schema);
}

/*
 * collect_results
 *		Read every result of the query sent, keeping the first
 *		MAX_SAMPLE_RESULTS in results.  Returns how many were kept.
 */
static int
collect_results(PGresult **results)
{
	PGresult   *res;
	int			nresults = 0;

	while ((res = PQgetResult(conn)) != NULL)
	{
		if (nresults < MAX_SAMPLE_RESULTS)
			results[nresults++] = res;
		else
			PQclear(res);
	}
	return nresults;
}

/*
 * check_results
 *		Whether the nresults results of a sample are all there and all rows.
 *		If not, returns false with *error set as for take_sample.  A failed
 *		spinlock view turns the view off, with a note; setup errors exit.
 */
static bool
check_results(PGresult **results, int nresults, char **error)
{
	int			nexpected = 2 + (have_spinlock_view ? 1 : 0) +
		(have_query_view ? 1 : 0) + (have_blocker_view ? 1 : 0);
	int			i;

	for (i = 0; i < nresults; i++)
	{
		if (PQresultStatus(results[i]) == PGRES_TUPLES_OK)
			continue;
		*error = first_line(PQresultErrorMessage(results[i]));
		if (PQstatus(conn) == CONNECTION_BAD)
			return false;
		if (i == sites_result())
		{
			/*
			 * The spinlock view is not what this program expects (its columns
			 * are not settled yet): go on without it.
			 */
			have_spinlock_view = false;
			spinlock_view_failed = true;
			add_sampling_note("spinlock call sites not shown: %s", *error);
		}
		else if (i == queries_result())
		{
			/* likewise for the blocked calls per query */
			have_query_view = false;
			query_view_failed = true;
			add_sampling_note("blocked calls per query not shown: %s", *error);
		}
		else if (i == blockers_result())
		{
			/* and for the blockers */
			have_blocker_view = false;
			blocker_view_failed = true;
			add_sampling_note("blockers not shown: %s", *error);
		}
		else
			check_setup_error(results[i]);
		return false;
	}
	if (nresults != nexpected)
	{
		*error = first_line(nresults == 0 ? PQerrorMessage(conn) :
							"unexpected number of results");
		return false;
	}
	if (PQntuples(results[0]) != 1)
	{
		*error = first_line("pg_lockstat_status returned no row");
		return false;
	}
	return true;
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
 * take_baseline
 *		take_sample, tried again (at most three times) if it failed only
 *		because the spinlock view, the per-query view or the blockers' view
 *		could not be read.
 */
static bool
take_baseline(Sample *sample, char **error)
{
	for (int attempt = 0;; attempt++)
	{
		bool		had_sites = have_spinlock_view;
		bool		had_queries = have_query_view;
		bool		had_blockers = have_blocker_view;

		if (take_sample(sample, error))
			return true;
		if (attempt < 3 && PQstatus(conn) == CONNECTION_OK &&
			((had_sites && !have_spinlock_view) ||
			 (had_queries && !have_query_view) ||
			 (had_blockers && !have_blocker_view)))
		{
			pg_free(*error);
			continue;
		}
		return false;
	}
}

/*
 * read_status
 *		Fill the header fields of a sample from the status query, by its
 *		columns' names.
 */
static void
read_status(const PGresult *res, Sample *sample)
{
	sample->epoch = strtod(column_value(res, "epoch"), NULL);
	sample->time_text = pg_strdup(column_value(res, "time_text"));
	sample->time_csv = pg_strdup(column_value(res, "time_csv"));
	sample->spin_strategy = pg_strdup(column_value(res, "spin_strategy"));
	sample->stats_reset = pg_strdup(column_value(res, "stats_reset"));
	sample->stats_reset_epoch = strtod(column_value(res, "stats_reset_epoch"),
									   NULL);
	sample->have_xacts = !PQgetisnull(res, 0, PQfnumber(res, "xacts"));
	if (sample->have_xacts)
		sample->xacts = strtoi64(column_value(res, "xacts"), NULL, 10);
	sample->active = atoi(column_value(res, "active"));
}

/*
 * read_tranches
 *		Fill the tranche counters of a sample, sorted by tranche ID.  The
 *		columns are found by name.
 */
static void
read_tranches(const PGresult *res, Sample *sample)
{
	int			n = PQntuples(res);
	int			c_tranche_id = PQfnumber(res, "tranche_id");
	int			c_tranche = PQfnumber(res, "tranche");
	int			c_sh_acquires = PQfnumber(res, "sh_acquires");
	int			c_ex_acquires = PQfnumber(res, "ex_acquires");
	int			c_blocks = PQfnumber(res, "blocks");
	int			c_spin_delays = PQfnumber(res, "spin_delays");
	int			c_wait_time = PQfnumber(res, "wait_time");
	int			c_hold_samples = PQfnumber(res, "hold_samples");
	int			c_hold_time = PQfnumber(res, "hold_time");
	int			i;

	sample->ntranches = n;
	sample->tranches = pg_malloc0(sizeof(TrancheCounters) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		TrancheCounters *t = &sample->tranches[i];

		t->id = atoi(PQgetvalue(res, i, c_tranche_id));
		t->name = pg_strdup(PQgetvalue(res, i, c_tranche));
		t->sh_acquires = strtoi64(PQgetvalue(res, i, c_sh_acquires), NULL, 10);
		t->ex_acquires = strtoi64(PQgetvalue(res, i, c_ex_acquires), NULL, 10);
		t->blocks = strtoi64(PQgetvalue(res, i, c_blocks), NULL, 10);
		t->spin_delays = strtoi64(PQgetvalue(res, i, c_spin_delays), NULL, 10);
		t->wait_ms = strtod(PQgetvalue(res, i, c_wait_time), NULL);
		t->hold_samples = strtoi64(PQgetvalue(res, i, c_hold_samples), NULL, 10);
		t->hold_ms = strtod(PQgetvalue(res, i, c_hold_time), NULL);
	}
	qsort(sample->tranches, n, sizeof(TrancheCounters), compare_tranche_id);
}

/*
 * read_sites
 *		Fill the spinlock call-site counters of a sample, sorted by site.
 *		The columns are found by name.
 */
static void
read_sites(const PGresult *res, Sample *sample)
{
	int			n = PQntuples(res);
	int			c_func = PQfnumber(res, "func");
	int			c_file = PQfnumber(res, "file");
	int			c_line = PQfnumber(res, "line");
	int			c_contended = PQfnumber(res, "contended");
	int			c_spins = PQfnumber(res, "spins");
	int			c_delays = PQfnumber(res, "delays");
	int			c_wait_time = PQfnumber(res, "wait_time");
	int			i;

	sample->nsites = n;
	sample->sites = pg_malloc0(sizeof(SiteCounters) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		SiteCounters *s = &sample->sites[i];

		s->site = psprintf("%s:%s %s", PQgetvalue(res, i, c_file),
						   PQgetvalue(res, i, c_line),
						   PQgetvalue(res, i, c_func));
		s->contended = strtoi64(PQgetvalue(res, i, c_contended), NULL, 10);
		s->spins = strtoi64(PQgetvalue(res, i, c_spins), NULL, 10);
		s->delays = strtoi64(PQgetvalue(res, i, c_delays), NULL, 10);
		s->wait_ms = strtod(PQgetvalue(res, i, c_wait_time), NULL);
	}
	qsort(sample->sites, n, sizeof(SiteCounters), compare_site);
}

/*
 * read_queries
 *		Fill the blocked calls per query of a sample, sorted by key and
 *		tranche.  The columns are found by name.
 */
static void
read_queries(const PGresult *res, Sample *sample)
{
	int			n = PQntuples(res);
	int			c_queryid = PQfnumber(res, "queryid");
	int			c_dbid = PQfnumber(res, "dbid");
	int			c_userid = PQfnumber(res, "userid");
	int			c_backend_type = PQfnumber(res, "backend_type");
	int			c_tranche = PQfnumber(res, "tranche");
	int			c_blocks = PQfnumber(res, "blocks");
	int			c_wait_time = PQfnumber(res, "wait_time");
	int			i;

	sample->nqueries = n;
	sample->queries = pg_malloc0(sizeof(QueryCounters) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		QueryCounters *q = &sample->queries[i];

		q->queryid = strtoi64(PQgetvalue(res, i, c_queryid), NULL, 10);
		q->dbid = (unsigned int) strtoul(PQgetvalue(res, i, c_dbid), NULL, 10);
		q->userid = (unsigned int) strtoul(PQgetvalue(res, i, c_userid),
										   NULL, 10);
		q->backend_type = pg_strdup(PQgetvalue(res, i, c_backend_type));
		q->tranche = pg_strdup(PQgetvalue(res, i, c_tranche));
		q->blocks = strtoi64(PQgetvalue(res, i, c_blocks), NULL, 10);
		q->wait_ms = strtod(PQgetvalue(res, i, c_wait_time), NULL);
	}
	qsort(sample->queries, n, sizeof(QueryCounters), compare_query_row);
}

/*
 * read_blockers
 *		Fill the blockers of a sample (the rows of pg_lwlock_blockers, NULLs
 *		as 0 and ""), sorted by key.  The columns are found by name.
 */
static void
read_blockers(const PGresult *res, Sample *sample)
{
	int			n = PQntuples(res);
	int			c_tranche = PQfnumber(res, "tranche");
	int			c_queryid = PQfnumber(res, "queryid");
	int			c_dbid = PQfnumber(res, "dbid");
	int			c_userid = PQfnumber(res, "userid");
	int			c_backend_type = PQfnumber(res, "backend_type");
	int			c_holder_queryid = PQfnumber(res, "holder_queryid");
	int			c_holder_backend_type = PQfnumber(res, "holder_backend_type");
	int			c_holder_mode = PQfnumber(res, "holder_mode");
	int			c_root_queryid = PQfnumber(res, "root_queryid");
	int			c_root_backend_type = PQfnumber(res, "root_backend_type");
	int			c_root_mode = PQfnumber(res, "root_mode");
	int			c_blocks = PQfnumber(res, "blocks");
	int			c_wait_time = PQfnumber(res, "wait_time");

	sample->nblockers = n;
	sample->blockers = pg_malloc0(sizeof(BlockerCounters) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		BlockerCounters *b = &sample->blockers[i];
		BlockerKey *k = &b->key;

		k->tranche = pg_strdup(PQgetvalue(res, i, c_tranche));
		k->queryid = strtoi64(PQgetvalue(res, i, c_queryid), NULL, 10);
		k->dbid = (unsigned int) strtoul(PQgetvalue(res, i, c_dbid), NULL, 10);
		k->userid = (unsigned int) strtoul(PQgetvalue(res, i, c_userid),
										   NULL, 10);
		k->backend_type = pg_strdup(PQgetvalue(res, i, c_backend_type));
		k->holder_queryid = strtoi64(PQgetvalue(res, i, c_holder_queryid),
									 NULL, 10);
		k->holder_backend_type =
			pg_strdup(PQgetvalue(res, i, c_holder_backend_type));
		k->holder_mode = pg_strdup(PQgetvalue(res, i, c_holder_mode));
		k->root_queryid = strtoi64(PQgetvalue(res, i, c_root_queryid),
								   NULL, 10);
		k->root_backend_type =
			pg_strdup(PQgetvalue(res, i, c_root_backend_type));
		k->root_mode = pg_strdup(PQgetvalue(res, i, c_root_mode));
		b->blocks = strtoi64(PQgetvalue(res, i, c_blocks), NULL, 10);
		b->wait_ms = strtod(PQgetvalue(res, i, c_wait_time), NULL);
	}
	qsort(sample->blockers, n, sizeof(BlockerCounters), compare_blocker_key);
}

/*
 * find_query_text
 *		The text looked up for a query's key, or NULL.
 */
static const char *
find_query_text(const QueryRate *q)
{
	for (int i = 0; i < nquery_texts; i++)
	{
		if (query_texts[i].queryid == q->queryid &&
			query_texts[i].dbid == q->dbid &&
			query_texts[i].userid == q->userid)
			return query_texts[i].text;
	}
	return NULL;
}

/*
 * find_text_of_queryid
 *		A text looked up for a query ID, of any database and role (a query ID
 *		is computed from the query's text and objects, so that the entries
 *		of pg_stat_statements with it are of the same query), or NULL.
 */
static const char *
find_text_of_queryid(int64 queryid)
{
	for (int i = 0; i < nquery_texts; i++)
	{
		if (query_texts[i].queryid == queryid)
			return query_texts[i].text;
	}
	return NULL;
}

/*
 * look_up_query_texts
 *		Read from pg_stat_statements the texts of the first nshown queries of
 *		a report that have none yet, in one query, and keep them: the text of
 *		a (queryid, dbid, userid) never changes.  pg_stat_statements reads
 *		all of its texts for that query, so this runs only for queries not
 *		seen before (and again for those it did not know yet, such as a
 *		statement still running).  An error turns the lookups off, with a
 *		note (see run_text_lookup()).
 */
static void
look_up_query_texts(const Report *report, int nshown)
{
	PQExpBufferData sql;
	int			nmissing = 0;

	if (pgss_schema == NULL || pgss_failed)
		return;

	initPQExpBuffer(&sql);
	appendPQExpBuffer(&sql,
					  "SELECT queryid, dbid, userid, "
					  "       pg_catalog.left(pg_catalog.regexp_replace(query, '\\s+', ' ', 'g'), %d) "
					  "FROM %s.pg_stat_statements "
					  "WHERE toplevel AND (queryid, dbid, userid) IN (VALUES ",
					  QUERY_TEXT_LEN, pgss_schema);
	for (int i = 0; i < nshown; i++)
	{
		const QueryRate *q = &report->queries[i];

		if (q->queryid == 0 || find_query_text(q) != NULL)
			continue;
		appendPQExpBuffer(&sql, "%s(" INT64_FORMAT "::int8, %u::oid, %u::oid)",
						  nmissing > 0 ? ", " : "", q->queryid, q->dbid,
						  q->userid);
		nmissing++;
	}
	appendPQExpBufferStr(&sql, ")");
	if (nmissing > 0)
		run_text_lookup(sql.data);
	termPQExpBuffer(&sql);
}

/*
 * look_up_blocker_texts
 *		Read from pg_stat_statements, in one query, a text of each query ID
 *		of the first nshown blocker rows of a report (waiter, holder and
 *		root) that has none yet, and keep it, as look_up_query_texts does.
 *		A query ID is looked up in every database and role: the view does
 *		not say in which the holder ran its query.
 */
static void
look_up_blocker_texts(const Report *report, int nshown)
{
	PQExpBufferData sql;
	int64	   *missing;
	int			nmissing = 0;

	if (pgss_schema == NULL || pgss_failed)
		return;

	missing = pg_malloc(sizeof(int64) * 3 * Max(nshown, 1));
	for (int i = 0; i < nshown; i++)
	{
		const BlockerKey *k = &report->blockers[i].key;
		int64		ids[3] = {k->queryid, k->holder_queryid, k->root_queryid};

		for (int j = 0; j < 3; j++)
		{
			bool		seen = false;

			if (ids[j] == 0 || find_text_of_queryid(ids[j]) != NULL)
				continue;
			for (int m = 0; m < nmissing && !seen; m++)
				seen = (missing[m] == ids[j]);
			if (!seen)
				missing[nmissing++] = ids[j];
		}
	}
	if (nmissing == 0)
	{
		pg_free(missing);
		return;
	}

	initPQExpBuffer(&sql);
	appendPQExpBuffer(&sql,
					  "SELECT DISTINCT ON (queryid) queryid, dbid, userid, "
					  "       pg_catalog.left(pg_catalog.regexp_replace(query, '\\s+', ' ', 'g'), %d) "
					  "FROM %s.pg_stat_statements "
					  "WHERE toplevel AND queryid IN (",
					  QUERY_TEXT_LEN, pgss_schema);
	for (int m = 0; m < nmissing; m++)
		appendPQExpBuffer(&sql, "%s" INT64_FORMAT "::int8",
						  m > 0 ? ", " : "", missing[m]);
	appendPQExpBufferStr(&sql, ")");
	run_text_lookup(sql.data);
	termPQExpBuffer(&sql);
	pg_free(missing);
}

/*
 * run_text_lookup
 *		Run sql, a query of pg_stat_statements that returns queryid, dbid,
 *		userid and a text, and keep its rows in query_texts.  An error
 *		turns the lookups off, with a note; a lost connection shows at the
 *		next sample.
 */
static void
run_text_lookup(const char *sql)
{
	PGresult   *res;

	SetCancelConn(conn);
	res = PQexec(conn, sql);
	ResetCancelConn();
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		char	   *error = first_line(PQresultErrorMessage(res));

		if (PQstatus(conn) == CONNECTION_OK)
		{
			pgss_failed = true;
			add_sampling_note("query texts not shown: %s", error);
		}
		pg_free(error);
		PQclear(res);
		return;
	}
	for (int i = 0; i < PQntuples(res); i++)
	{
		QueryText  *t;

		if (nquery_texts == max_query_texts)
		{
			max_query_texts = Max(64, max_query_texts * 2);
			query_texts = pg_realloc(query_texts,
									 sizeof(QueryText) * max_query_texts);
		}
		t = &query_texts[nquery_texts++];
		t->queryid = strtoi64(PQgetvalue(res, i, 0), NULL, 10);
		t->dbid = (unsigned int) strtoul(PQgetvalue(res, i, 1), NULL, 10);
		t->userid = (unsigned int) strtoul(PQgetvalue(res, i, 2), NULL, 10);
		t->text = pg_strdup(PQgetvalue(res, i, 3));
	}
	PQclear(res);
}

/*
 * label_queries
 *		Set the text of each query row of a report that will be shown (the
 *		top -t): its query text from pg_stat_statements, looked up if need
 *		be; "queryid N" when there is none; "(no query ID) <backend type>"
 *		for the calls outside any query with an ID; and "(residual)" for the
 *		residual row.
 */
void
label_queries(Report *report)
{
	int			nshown = report->nqueries;

	if (top_n > 0 && nshown > top_n)
		nshown = top_n;
	look_up_query_texts(report, nshown);
	for (int i = 0; i < nshown; i++)
	{
		QueryRate  *q = &report->queries[i];
		const char *text;

		pg_free(q->text);
		if (q->queryid != 0)
		{
			text = find_query_text(q);
			q->text = text ? pg_strdup(text) :
						psprintf("queryid " INT64_FORMAT, q->queryid);
		}
		else if (q->backend_type[0] != '\0')
			q->text = psprintf("(no query ID) %s", q->backend_type);
		else
			q->text = pg_strdup("(residual: evicted, or no entry left)");
	}
}

/*
 * query_label
 *		What a blocker row shows for a process that ran queryid (0: none) as
 *		process kind backend_type: a text of the query from
 *		pg_stat_statements if one was looked up, "queryid N" if not, and
 *		"(no query ID) <backend type>" without a query ID.  malloc'd.
 */
static char *
query_label(int64 queryid, const char *backend_type)
{
	const char *text;

	if (queryid == 0)
		return psprintf("(no query ID) %s", backend_type);
	text = find_text_of_queryid(queryid);
	return text ? pg_strdup(text) : psprintf("queryid " INT64_FORMAT, queryid);
}

/*
 * label_blockers
 *		Set the texts of the blocker rows of a report: the waiter as
 *		label_queries() labels a query row, the holder and the root holder by
 *		query_label(), or "(not known)" when the view has no holder.  The
 *		texts of the rows that will be shown (the top -t) are looked up if
 *		need be; the other rows get those already known, so that a new sort
 *		order on the screen shows labels too, some perhaps as "queryid N".
 */
void
label_blockers(Report *report)
{
	int			nshown = report->nblockers;

	if (top_n > 0 && nshown > top_n)
		nshown = top_n;
	look_up_blocker_texts(report, nshown);
	for (int i = 0; i < report->nblockers; i++)
	{
		BlockerRate *b = &report->blockers[i];
		const BlockerKey *k = &b->key;

		pg_free(b->waiter_text);
		pg_free(b->holder_text);
		pg_free(b->root_text);
		if (k->queryid != 0 || k->backend_type[0] != '\0')
			b->waiter_text = query_label(k->queryid, k->backend_type);
		else
			b->waiter_text = pg_strdup("(residual: evicted, or no entry left)");
		b->holder_text = k->holder_mode[0] != '\0' ?
			query_label(k->holder_queryid, k->holder_backend_type) :
			pg_strdup("(not known)");
		b->root_text = k->root_mode[0] != '\0' ?
			query_label(k->root_queryid, k->root_backend_type) :
			pg_strdup("(not known)");
	}
}

/*
 * free_sample
 *		Release what a sample points to and clear it.
 */
void
free_sample(Sample *sample)
{
	int			i;

	pg_free(sample->time_text);
	pg_free(sample->time_csv);
	pg_free(sample->spin_strategy);
	pg_free(sample->stats_reset);
	for (i = 0; i < sample->ntranches; i++)
		pg_free(sample->tranches[i].name);
	pg_free(sample->tranches);
	for (i = 0; i < sample->nsites; i++)
		pg_free(sample->sites[i].site);
	pg_free(sample->sites);
	for (i = 0; i < sample->nqueries; i++)
	{
		pg_free(sample->queries[i].backend_type);
		pg_free(sample->queries[i].tranche);
	}
	pg_free(sample->queries);
	for (i = 0; i < sample->nblockers; i++)
		free_blocker_key(&sample->blockers[i].key);
	pg_free(sample->blockers);
	memset(sample, 0, sizeof(Sample));
}

/*
 * compare_tranche_id
 *		qsort and bsearch order of TrancheCounters: by tranche ID.
 */
int
compare_tranche_id(const void *a, const void *b)
{
	int			ia = ((const TrancheCounters *) a)->id;
	int			ib = ((const TrancheCounters *) b)->id;

	return (ia > ib) - (ia < ib);
}

/*
 * compare_site
 *		qsort and bsearch order of SiteCounters: by site text.
 */
int
compare_site(const void *a, const void *b)
{
	return strcmp(((const SiteCounters *) a)->site,
				  ((const SiteCounters *) b)->site);
}

/*
 * compare_query_key
 *		Order of the keys of QueryCounters: queryid, dbid, userid,
 *		backend_type.
 */
int
compare_query_key(const void *a, const void *b)
{
	const QueryCounters *qa = a;
	const QueryCounters *qb = b;

	if (qa->queryid != qb->queryid)
		return qa->queryid < qb->queryid ? -1 : 1;
	if (qa->dbid != qb->dbid)
		return qa->dbid < qb->dbid ? -1 : 1;
	if (qa->userid != qb->userid)
		return qa->userid < qb->userid ? -1 : 1;
	return strcmp(qa->backend_type, qb->backend_type);
}

/*
 * compare_query_row
 *		qsort and bsearch order of QueryCounters: by key, then tranche.
 */
int
compare_query_row(const void *a, const void *b)
{
	int			c = compare_query_key(a, b);

	if (c != 0)
		return c;
	return strcmp(((const QueryCounters *) a)->tranche,
				  ((const QueryCounters *) b)->tranche);
}

/*
 * add_sampling_note
 *		Keep a note (a printf format and its arguments, one line without a
 *		newline) for next_sampling_note.  Notes beyond MAX_SAMPLING_NOTES
 *		not yet taken are dropped; each kind is made at most once per view
 *		turned off.
 */
static void
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

/*
 * compare_blocker_key
 *		qsort and bsearch order of BlockerCounters and BlockerRate (whose
 *		first member is their BlockerKey): by tranche, the waiter's key, then
 *		the holder's and the root's query ID, process kind and mode.
 */
int
compare_blocker_key(const void *a, const void *b)
{
	const BlockerKey *ka = a;
	const BlockerKey *kb = b;
	int			c;

	if ((c = strcmp(ka->tranche, kb->tranche)) != 0)
		return c;
	if (ka->queryid != kb->queryid)
		return ka->queryid < kb->queryid ? -1 : 1;
	if (ka->dbid != kb->dbid)
		return ka->dbid < kb->dbid ? -1 : 1;
	if (ka->userid != kb->userid)
		return ka->userid < kb->userid ? -1 : 1;
	if ((c = strcmp(ka->backend_type, kb->backend_type)) != 0)
		return c;
	if (ka->holder_queryid != kb->holder_queryid)
		return ka->holder_queryid < kb->holder_queryid ? -1 : 1;
	if ((c = strcmp(ka->holder_backend_type, kb->holder_backend_type)) != 0)
		return c;
	if ((c = strcmp(ka->holder_mode, kb->holder_mode)) != 0)
		return c;
	if (ka->root_queryid != kb->root_queryid)
		return ka->root_queryid < kb->root_queryid ? -1 : 1;
	if ((c = strcmp(ka->root_backend_type, kb->root_backend_type)) != 0)
		return c;
	return strcmp(ka->root_mode, kb->root_mode);
}

/*
 * copy_blocker_key
 *		Copy *src into *dst, with copies of its strings.
 */
void
copy_blocker_key(BlockerKey *dst, const BlockerKey *src)
{
	*dst = *src;
	dst->tranche = pg_strdup(src->tranche);
	dst->backend_type = pg_strdup(src->backend_type);
	dst->holder_backend_type = pg_strdup(src->holder_backend_type);
	dst->holder_mode = pg_strdup(src->holder_mode);
	dst->root_backend_type = pg_strdup(src->root_backend_type);
	dst->root_mode = pg_strdup(src->root_mode);
}

/*
 * free_blocker_key
 *		Release the strings of a BlockerKey.
 */
void
free_blocker_key(BlockerKey *key)
{
	pg_free(key->tranche);
	pg_free(key->backend_type);
	pg_free(key->holder_backend_type);
	pg_free(key->holder_mode);
	pg_free(key->root_backend_type);
	pg_free(key->root_mode);
}

/*
 * first_line
 *		A malloc'd copy of the first line of a (libpq) message, without the
 *		"ERROR:  " prefix.
 */
static char *
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
