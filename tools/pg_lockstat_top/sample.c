/*-------------------------------------------------------------------------
 *
 * sample.c
 *	  pg_lockstat_top's samples
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
 * and root holder, pg_lwlock_blockers.  Their query texts are texts.c's.
 *
 * Setup errors exit (see connect.c); other failures are returned.  While
 * the query of a sample runs, fe_utils/cancel.c's SIGINT handler may cancel
 * it.
 *
 * The results are read by rows.c, by their columns' names; the names of the
 * counters are those of the views, which extension/lockstat_counters.h
 * lists with the columns of this program that show them (checked by t/043).
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

/* what was found in the connected database */
static char *ext_schema;		/* quoted schema of the extension */
static bool have_spinlock_view;
static bool spinlock_view_failed = false;	/* not read again after an error */
static bool have_query_view;
static bool query_view_failed = false;	/* likewise */
static bool have_blocker_view;
static bool blocker_view_failed = false;	/* likewise */

/*
 * queries of a sample: status, tranches, and spinlock sites, blocked calls
 * per query and blockers if there
 */
#define MAX_SAMPLE_RESULTS	5

static bool find_extension(void);
static bool take_baseline(Sample *sample, char **error);
static void append_sample_query(PQExpBuffer sql);
static int	collect_results(PGresult **results);
static bool check_results(PGresult **results, int nresults, char **error);
static int	sites_result(void);
static int	queries_result(void);
static int	blockers_result(void);


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
	char	   *error;

	PQreset(sampling_conn());
	if (PQstatus(sampling_conn()) != CONNECTION_OK || !find_extension())
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

	res = PQexec(sampling_conn(),
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
		bool		lost = (PQstatus(sampling_conn()) == CONNECTION_BAD);

		if (!lost)
			setup_failure("could not look up extension \"pg_lockstat\": %s",
						  first_line(PQerrorMessage(sampling_conn())));
		PQclear(res);
		return false;
	}
	if (PQntuples(res) == 0)
		setup_failure("extension \"pg_lockstat\" is not installed in database \"%s\": run CREATE EXTENSION pg_lockstat; in it as a superuser, or connect to a database that has it",
					  PQdb(sampling_conn()));

	if (ext_schema)
		PQfreemem(ext_schema);
	ext_schema = PQescapeIdentifier(sampling_conn(), column_value(res, "ext_schema"),
									strlen(column_value(res, "ext_schema")));
	if (ext_schema == NULL)
		setup_failure("%s", first_line(PQerrorMessage(sampling_conn())));
	have_spinlock_view = (strcmp(column_value(res, "have_spinlock"), "t") == 0 &&
						  !spinlock_view_failed);
	have_query_view = (strcmp(column_value(res, "have_queries"), "t") == 0 &&
					   !query_view_failed);
	have_blocker_view = (strcmp(column_value(res, "have_blockers"), "t") == 0 &&
						 !blocker_view_failed);
	set_text_schema(PQgetisnull(res, 0, PQfnumber(res, "pgss_schema")) ?
					NULL : column_value(res, "pgss_schema"));
	PQclear(res);
	return true;
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
	SetCancelConn(sampling_conn());
	ok = PQsendQuery(sampling_conn(), sql.data);
	if (ok)
		nresults = collect_results(results);
	ResetCancelConn();
	termPQExpBuffer(&sql);
	if (!ok)
	{
		*error = first_line(PQerrorMessage(sampling_conn()));
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

	while ((res = PQgetResult(sampling_conn())) != NULL)
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
		if (PQstatus(sampling_conn()) == CONNECTION_BAD)
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
		*error = first_line(nresults == 0 ? PQerrorMessage(sampling_conn()) :
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
		if (attempt < 3 && PQstatus(sampling_conn()) == CONNECTION_OK &&
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
