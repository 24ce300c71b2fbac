/*-------------------------------------------------------------------------
 *
 * rows.c
 *	  The rows of pg_lockstat_top's samples: read, ordered by key, freed
 *
 * The readers of the views' results (the table of sections in sample.c
 * names them) read every column by its name (PQfnumber), never by its
 * position: the query and blocker rows by a table of their columns, the
 * counters of the tranches and call sites are the values of
 * the counter table that columns.c says are shown.  A sample's rows are
 * sorted by their keys, so that rates.c finds a row's previous counts with
 * bsearch; the blockers' keys are copied into the report.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/rows.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "pg_lockstat_top.h"

/* how a member of a row's struct is read from a column of a view */
typedef enum FieldType
{
	FIELD_INT64,
	FIELD_OID,					/* unsigned int */
	FIELD_DOUBLE,
	FIELD_TEXT,					/* malloc'd */
} FieldType;

typedef struct RowField
{
	const char *column;
	FieldType	type;
	size_t		offset;			/* of the member in the row's struct */
} RowField;

#define MAX_ROW_FIELDS	16

/* the rows of pg_lwlock_query_stats */
static const RowField query_fields[] = {
	{"queryid", FIELD_INT64, offsetof(QueryCounters, queryid)},
	{"dbid", FIELD_OID, offsetof(QueryCounters, dbid)},
	{"userid", FIELD_OID, offsetof(QueryCounters, userid)},
	{"backend_type", FIELD_TEXT, offsetof(QueryCounters, backend_type)},
	{"tranche", FIELD_TEXT, offsetof(QueryCounters, tranche)},
	{"blocks", FIELD_INT64, offsetof(QueryCounters, blocks)},
	{"wait_time", FIELD_DOUBLE, offsetof(QueryCounters, wait_ms)},
};

/* the rows of pg_lwlock_blockers */
static const RowField blocker_fields[] = {
	{"tranche", FIELD_TEXT, offsetof(BlockerCounters, key.tranche)},
	{"queryid", FIELD_INT64, offsetof(BlockerCounters, key.queryid)},
	{"dbid", FIELD_OID, offsetof(BlockerCounters, key.dbid)},
	{"userid", FIELD_OID, offsetof(BlockerCounters, key.userid)},
	{"backend_type", FIELD_TEXT, offsetof(BlockerCounters, key.backend_type)},
	{"holder_queryid", FIELD_INT64, offsetof(BlockerCounters, key.holder_queryid)},
	{"holder_backend_type", FIELD_TEXT,
	offsetof(BlockerCounters, key.holder_backend_type)},
	{"holder_mode", FIELD_TEXT, offsetof(BlockerCounters, key.holder_mode)},
	{"root_queryid", FIELD_INT64, offsetof(BlockerCounters, key.root_queryid)},
	{"root_backend_type", FIELD_TEXT,
	offsetof(BlockerCounters, key.root_backend_type)},
	{"root_mode", FIELD_TEXT, offsetof(BlockerCounters, key.root_mode)},
	{"blocks", FIELD_INT64, offsetof(BlockerCounters, blocks)},
	{"wait_time", FIELD_DOUBLE, offsetof(BlockerCounters, wait_ms)},
};

static void *read_rows(const PGresult *res, const RowField *fields,
					   int nfields, size_t size,
					   int (*compare) (const void *, const void *));
static void counter_fnums(const PGresult *res, CounterKind kind, int *fnum);
static void read_values(const PGresult *res, int row, CounterKind kind,
						const int *fnum, double *values);

/*
 * read_status
 *		Fill the header fields of a sample from the status query, by its
 *		columns' names.
 */
void
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
 * counter_fnums
 *		The column numbers in res of the counter values of kind, into fnum.
 */
static void
counter_fnums(const PGresult *res, CounterKind kind, int *fnum)
{
	const CounterSet *set = counter_set(kind);

	for (int v = 0; v < set->nvalues; v++)
		fnum[v] = PQfnumber(res, set->values[v].name);
}

/*
 * read_values
 *		The counter values of kind in row of res, whose columns are fnum,
 *		into values.  Counts are exact as doubles below 2^53.
 */
static void
read_values(const PGresult *res, int row, CounterKind kind,
			const int *fnum, double *values)
{
	for (int v = 0; v < counter_set(kind)->nvalues; v++)
		values[v] = strtod(PQgetvalue(res, row, fnum[v]), NULL);
}

/*
 * read_tranches
 *		Fill the tranche counters of a sample, sorted by tranche ID.
 */
void
read_tranches(const PGresult *res, Sample *sample)
{
	int			n = PQntuples(res);
	int			c_tranche_id = PQfnumber(res, "tranche_id");
	int			c_tranche = PQfnumber(res, "tranche");
	int			fnum[MAX_TOP_VALUES];

	counter_fnums(res, COUNTERS_LWLOCK, fnum);
	sample->ntranches = n;
	sample->tranches = pg_malloc0(sizeof(TrancheCounters) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		TrancheCounters *t = &sample->tranches[i];

		t->id = atoi(PQgetvalue(res, i, c_tranche_id));
		t->name = pg_strdup(PQgetvalue(res, i, c_tranche));
		read_values(res, i, COUNTERS_LWLOCK, fnum, t->values);
	}
	qsort(sample->tranches, n, sizeof(TrancheCounters), compare_tranche_id);
}

/*
 * read_utilization
 *		Fill the exclusive acquisitions, timed holds and estimated hold time
 *		of the tranches of a sample that have a row in res, the exclusive
 *		rows of pg_lwlock_utilization (those with a timed hold).  The
 *		tranches are read before; a row of a tranche that they do not have
 *		(active only between the two reads) is left out.
 */
void
read_utilization(const PGresult *res, Sample *sample)
{
	int			c_tranche_id = PQfnumber(res, "tranche_id");
	int			c_acquires = PQfnumber(res, "acquires");
	int			c_samples = PQfnumber(res, "samples");
	int			c_est = PQfnumber(res, "est_hold_time");

	for (int i = 0; i < PQntuples(res); i++)
	{
		TrancheCounters key;
		TrancheCounters *t;

		key.id = atoi(PQgetvalue(res, i, c_tranche_id));
		t = bsearch(&key, sample->tranches, sample->ntranches,
					sizeof(TrancheCounters), compare_tranche_id);
		if (t == NULL)
			continue;
		t->ex_util_acquires = strtod(PQgetvalue(res, i, c_acquires), NULL);
		t->ex_util_samples = strtod(PQgetvalue(res, i, c_samples), NULL);
		t->ex_util_est_ms = strtod(PQgetvalue(res, i, c_est), NULL);
	}
}

/*
 * read_sites
 *		Fill the spinlock call-site counters of a sample, sorted by site.
 */
void
read_sites(const PGresult *res, Sample *sample)
{
	int			n = PQntuples(res);
	int			c_func = PQfnumber(res, "func");
	int			c_file = PQfnumber(res, "file");
	int			c_line = PQfnumber(res, "line");
	int			fnum[MAX_TOP_VALUES];

	counter_fnums(res, COUNTERS_SPIN, fnum);
	sample->have_sites = true;
	sample->nsites = n;
	sample->sites = pg_malloc0(sizeof(SiteCounters) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		SiteCounters *s = &sample->sites[i];

		s->site = psprintf("%s:%s %s", PQgetvalue(res, i, c_file),
						   PQgetvalue(res, i, c_line),
						   PQgetvalue(res, i, c_func));
		read_values(res, i, COUNTERS_SPIN, fnum, s->values);
	}
	qsort(sample->sites, n, sizeof(SiteCounters), compare_site);
}

/*
 * read_queries
 *		Fill the blocked calls per query of a sample, sorted by key and
 *		tranche.
 */
void
read_queries(const PGresult *res, Sample *sample)
{
	sample->have_queries = true;
	sample->nqueries = PQntuples(res);
	sample->queries = read_rows(res, query_fields, lengthof(query_fields),
								sizeof(QueryCounters), compare_query_row);
}

/*
 * read_blockers
 *		Fill the blockers of a sample (the rows of pg_lwlock_blockers, NULLs
 *		as 0 and ""), sorted by key.
 */
void
read_blockers(const PGresult *res, Sample *sample)
{
	sample->have_blockers = true;
	sample->nblockers = PQntuples(res);
	sample->blockers = read_rows(res, blocker_fields, lengthof(blocker_fields),
								 sizeof(BlockerCounters), compare_blocker_key);
}

/*
 * read_rows
 *		The rows of res as an array of structs of size bytes (at least one,
 *		zeroed), each member filled from the column that fields names,
 *		sorted by compare.
 */
static void *
read_rows(const PGresult *res, const RowField *fields, int nfields,
		  size_t size, int (*compare) (const void *, const void *))
{
	int			n = PQntuples(res);
	char	   *rows = pg_malloc0(size * Max(n, 1));
	int			fnum[MAX_ROW_FIELDS];

	Assert(nfields <= MAX_ROW_FIELDS);
	for (int f = 0; f < nfields; f++)
		fnum[f] = PQfnumber(res, fields[f].column);
	for (int i = 0; i < n; i++)
	{
		for (int f = 0; f < nfields; f++)
		{
			const char *value = PQgetvalue(res, i, fnum[f]);
			void	   *member = rows + i * size + fields[f].offset;

			switch (fields[f].type)
			{
				case FIELD_INT64:
					*(int64 *) member = strtoi64(value, NULL, 10);
					break;
				case FIELD_OID:
					*(unsigned int *) member =
						(unsigned int) strtoul(value, NULL, 10);
					break;
				case FIELD_DOUBLE:
					*(double *) member = strtod(value, NULL);
					break;
				case FIELD_TEXT:
					*(char **) member = pg_strdup(value);
					break;
			}
		}
	}
	qsort(rows, n, size, compare);
	return rows;
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
