/*-------------------------------------------------------------------------
 *
 * sample.c
 *	  pg_lockstat_top's samples: the views read in one round trip
 *
 * A sample is one statement per view of the table sections below, sent in
 * one query: pg_lockstat_status (with pg_stat_database and
 * pg_stat_activity), pg_lwlock_stats, and pg_lwlock_utilization (its
 * exclusive rows), pg_spinlock_stats, pg_lwlock_query_stats and
 * pg_lwlock_blockers when the extension's schema has them.  The table
 * drives the query, the checks of its results, the notes and the readers.
 * The status is read before the counters, so that a reset between the two
 * reads shows either as a counter that went down or, in the next sample, as
 * a moved stats_reset (see rates.c).
 *
 * The counters of the tranches and the call sites are those of the
 * extension's counter table that columns.c says are shown, selected under
 * their top_name.  The readers are in rows.c.
 *
 * An optional view that cannot be read is left out from then on, with a
 * note (the spinlock view's columns, for one, are not settled yet).  Setup
 * errors exit (see connect.c); other failures are returned.  While the
 * query of a sample runs, fe_utils/cancel.c's SIGINT handler may cancel it.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/sample.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "fe_utils/cancel.h"
#include "pg_lockstat_top.h"

/* one statement of a sample: a view and how its rows are read */
typedef struct SampleSection
{
	const char *view;			/* in the extension's schema */
	const char *from;			/* what FROM has after the view */
	const char *keys;			/* the select list, before the counters */
	CounterKind counters;		/* the counters selected after the keys */
	const char *optional;		/* what is not shown without the view; NULL
								 * if the view is required */
	void		(*read) (const PGresult *res, Sample *sample);
} SampleSection;

/*
 * The statements of a sample, in the order sent: the status first, then the
 * counters (see the file header for why this order makes every reset
 * visible).
 */
static const SampleSection sections[] = {
	{"pg_lockstat_status", " s, pg_catalog.clock_timestamp() AS t(now)",
		"EXTRACT(epoch FROM t.now) AS epoch, "
		"pg_catalog.to_char(t.now, 'YYYY-MM-DD HH24:MI:SS') AS time_text, "
		"pg_catalog.to_char(t.now, 'YYYY-MM-DD\"T\"HH24:MI:SS.MSOF') AS time_csv, "
		"s.spin_strategy, s.stats_reset, "
		"EXTRACT(epoch FROM s.stats_reset) AS stats_reset_epoch, "
		"(SELECT pg_catalog.sum(xact_commit + xact_rollback) "
		" FROM pg_catalog.pg_stat_database) AS xacts, "
		"(SELECT pg_catalog.count(*) FROM pg_catalog.pg_stat_activity "
		" WHERE state = 'active' AND backend_type = 'client backend' "
		"   AND pid <> pg_catalog.pg_backend_pid()) AS active",
	COUNTERS_NONE, NULL, read_status},
	{"pg_lwlock_stats", "",
		"COALESCE(tranche_id, -1) AS tranche_id, tranche",
	COUNTERS_LWLOCK, NULL, read_tranches},
	{"pg_lwlock_utilization", " WHERE mode = 'exclusive'",
		"COALESCE(tranche_id, -1) AS tranche_id, acquires, samples, "
		"est_hold_time",
	COUNTERS_NONE, "Busy % and Ceil tps", read_utilization},
	{"pg_spinlock_stats", "", "func, file, line",
	COUNTERS_SPIN, "spinlock call sites", read_sites},
	{"pg_lwlock_query_stats", "",
		"COALESCE(queryid, 0) AS queryid, "
		"COALESCE(dbid, 0) AS dbid, COALESCE(userid, 0) AS userid, "
		"COALESCE(backend_type, '') AS backend_type, "
		"tranche, blocks, wait_time",
	COUNTERS_NONE, "blocked calls per query", read_queries},
	{"pg_lwlock_blockers", "",
		"tranche, COALESCE(queryid, 0) AS queryid, "
		"COALESCE(dbid, 0) AS dbid, COALESCE(userid, 0) AS userid, "
		"COALESCE(backend_type, '') AS backend_type, "
		"COALESCE(holder_queryid, 0) AS holder_queryid, "
		"COALESCE(holder_backend_type, '') AS holder_backend_type, "
		"COALESCE(holder_mode, '') AS holder_mode, "
		"COALESCE(root_queryid, 0) AS root_queryid, "
		"COALESCE(root_backend_type, '') AS root_backend_type, "
		"COALESCE(root_mode, '') AS root_mode, "
		"blocks, wait_time",
	COUNTERS_NONE, "blockers", read_blockers},
};

#define NSECTIONS	lengthof(sections)

/* what was found in the connected database */
static char *ext_schema;		/* quoted schema of the extension */
static bool section_read[NSECTIONS];	/* the view is there and read */
static bool section_failed[NSECTIONS];	/* not read again after an error */

static bool find_extension(void);
static void append_extension_query(PQExpBuffer sql);
static bool take_baseline(Sample *sample, char **error);
static int	sections_read(void);
static void append_sample_query(PQExpBuffer sql);
static int	collect_results(PGresult **results);
static bool check_results(PGresult **results, int nresults, char **error);
static void turn_off_section(PGresult **results, int i, const char *error);


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
					  first_line(PQerrorMessage(sampling_conn())));
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
	PGconn	   *conn = sampling_conn();
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
 * find_extension
 *		Find the schema of pg_lockstat in the connected database, which of
 *		the optional views of sections this version has, and the schema of
 *		pg_stat_statements if the database has it (for texts.c).  Exits with
 *		EXIT_SETUP if the extension is not there.  Returns false if the
 *		connection failed.
 */
static bool
find_extension(void)
{
	PGconn	   *conn = sampling_conn();
	PQExpBufferData sql;
	PGresult   *res;

	initPQExpBuffer(&sql);
	append_extension_query(&sql);
	res = PQexec(conn, sql.data);
	termPQExpBuffer(&sql);
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
	for (int s = 0; s < NSECTIONS; s++)
		section_read[s] = (sections[s].optional == NULL ||
						   (strcmp(column_value(res, sections[s].view), "t") == 0 &&
							!section_failed[s]));
	set_text_schema(PQgetisnull(res, 0, PQfnumber(res, "pgss_schema")) ?
					NULL : column_value(res, "pgss_schema"));
	PQclear(res);
	return true;
}

/*
 * append_extension_query
 *		The query of find_extension, into sql: the extension's schema, for
 *		each optional view of sections whether it is there (a column named
 *		as the view), and pg_stat_statements' schema or NULL.
 */
static void
append_extension_query(PQExpBuffer sql)
{
	appendPQExpBufferStr(sql, "SELECT n.nspname AS ext_schema, ");
	for (int s = 0; s < NSECTIONS; s++)
	{
		if (sections[s].optional)
			appendPQExpBuffer(sql,
							  "pg_catalog.to_regclass(pg_catalog.format('%%I.%%I', n.nspname, '%s')) IS NOT NULL AS %s, ",
							  sections[s].view, sections[s].view);
	}
	appendPQExpBufferStr(sql,
						 "(SELECT pn.nspname FROM pg_catalog.pg_extension pe "
						 " JOIN pg_catalog.pg_namespace pn ON pn.oid = pe.extnamespace "
						 " WHERE pe.extname = 'pg_stat_statements') AS pgss_schema "
						 "FROM pg_catalog.pg_extension e "
						 "JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace "
						 "WHERE e.extname = 'pg_lockstat'");
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
	PGconn	   *conn = sampling_conn();
	PQExpBufferData sql;
	PGresult   *results[NSECTIONS];
	int			nresults = 0;
	bool		ok;

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
	for (int s = 0, i = 0; ok && s < NSECTIONS; s++)
	{
		if (section_read[s])
			sections[s].read(results[i++], sample);
	}
	for (int i = 0; i < nresults; i++)
		PQclear(results[i]);
	return ok;
}

/*
 * take_baseline
 *		take_sample, tried again (at most three times) if it failed only
 *		because an optional view could not be read.
 */
static bool
take_baseline(Sample *sample, char **error)
{
	for (int attempt = 0;; attempt++)
	{
		int			nread = sections_read();

		if (take_sample(sample, error))
			return true;
		if (attempt < 3 && PQstatus(sampling_conn()) == CONNECTION_OK &&
			sections_read() < nread)
		{
			pg_free(*error);
			continue;
		}
		return false;
	}
}

/*
 * sections_read
 *		How many views a sample reads: how many results it has.
 */
static int
sections_read(void)
{
	int			n = 0;

	for (int s = 0; s < NSECTIONS; s++)
		n += section_read[s] ? 1 : 0;
	return n;
}

/*
 * append_sample_query
 *		The statements of a sample, into sql: one per view read, in the
 *		order of sections.
 */
static void
append_sample_query(PQExpBuffer sql)
{
	for (int s = 0; s < NSECTIONS; s++)
	{
		if (!section_read[s])
			continue;
		appendPQExpBuffer(sql, "SELECT %s", sections[s].keys);
		if (sections[s].counters != COUNTERS_NONE)
			append_counter_select(sql, sections[s].counters);
		appendPQExpBuffer(sql, " FROM %s.%s%s;\n",
						  ext_schema, sections[s].view, sections[s].from);
	}
}

/*
 * collect_results
 *		Read every result of the query sent, keeping the first NSECTIONS in
 *		results.  Returns how many were kept.
 */
static int
collect_results(PGresult **results)
{
	PGresult   *res;
	int			nresults = 0;

	while ((res = PQgetResult(sampling_conn())) != NULL)
	{
		if (nresults < NSECTIONS)
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
 *		optional view is turned off, with a note; setup errors exit.
 */
static bool
check_results(PGresult **results, int nresults, char **error)
{
	PGconn	   *conn = sampling_conn();

	for (int i = 0; i < nresults; i++)
	{
		if (PQresultStatus(results[i]) == PGRES_TUPLES_OK)
			continue;
		*error = first_line(PQresultErrorMessage(results[i]));
		if (PQstatus(conn) != CONNECTION_BAD)
			turn_off_section(results, i, *error);
		return false;
	}
	if (nresults != sections_read())
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
 * turn_off_section
 *		After results[i] failed with error: if it is an optional view's, turn
 *		that view off with a note; if not, exit if the error is a setup
 *		error.
 */
static void
turn_off_section(PGresult **results, int i, const char *error)
{
	for (int s = 0, r = 0; s < NSECTIONS; s++)
	{
		if (!section_read[s] || r++ != i)
			continue;
		if (sections[s].optional == NULL)
			break;
		section_read[s] = false;
		section_failed[s] = true;
		add_sampling_note("%s not shown: %s", sections[s].optional, error);
		return;
	}
	check_setup_error(results[i]);
}
