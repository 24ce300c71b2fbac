/*-------------------------------------------------------------------------
 *
 * texts.c
 *	  The texts of the queries that pg_lockstat_top shows
 *
 * The query and blocker rows name queries by their (queryid, dbid, userid)
 * or query ID.  Their texts come from pg_stat_statements when the database
 * has that extension: looked up for the rows shown only, and kept (see
 * label_queries() and label_blockers()).  An error turns the lookups off,
 * with a note.  While a lookup runs, fe_utils/cancel.c's SIGINT handler may
 * cancel it.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/texts.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "fe_utils/cancel.h"
#include "pg_lockstat_top.h"

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

/* longest query text kept, in bytes */
#define QUERY_TEXT_LEN		200

static const char *find_query_text(const QueryRate *q);
static const char *find_text_of_queryid(int64 queryid);
static void look_up_query_texts(const Report *report, int nshown);
static void look_up_blocker_texts(const Report *report, int nshown);
static void run_text_lookup(const char *sql);
static char *query_label(int64 queryid, const char *backend_type);


/*
 * set_text_schema
 *		The schema of pg_stat_statements in the connected database (NULL if
 *		it does not have that extension), found with pg_lockstat's.
 */
void
set_text_schema(const char *schema)
{
	PGconn	   *conn = sampling_conn();

	if (pgss_schema)
		PQfreemem(pgss_schema);
	pgss_schema = NULL;
	if (schema)
		pgss_schema = PQescapeIdentifier(conn, schema, strlen(schema));
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
	PGconn	   *conn = sampling_conn();
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
	int			nshown = top_rows(report->nqueries);

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
	int			nshown = top_rows(report->nblockers);

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
