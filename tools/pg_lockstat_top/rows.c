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
 * read_tranches
 *		Fill the tranche counters of a sample, sorted by tranche ID.  The
 *		columns are found by name.
 */
void
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
void
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
void
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
void
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
