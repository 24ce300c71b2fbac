/*-------------------------------------------------------------------------
 *
 * order.c
 *	  The order of pg_lockstat_top's report rows
 *
 * The tranches go by the sort key (-s, and the keys b w s a), the call
 * sites by delays and spins, the queries by wait, the blockers by blocks or
 * wait as the sort key says; each key is a value of the counter table
 * (columns.c) or of a view's row.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/order.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "pg_lockstat_top.h"

static int	compare_rates(const void *a, const void *b);
static int	compare_site_rates(const void *a, const void *b);
static int	compare_query_rates(const void *a, const void *b);
static int	compare_blocker_rates(const void *a, const void *b);


/*
 * sort_report
 *		Order a report's tranche rows by the current sort_key, its spinlock
 *		call sites by delays and spins per second, its queries by wait, and
 *		its blockers by blocks or wait as the sort key says.
 */
void
sort_report(Report *report)
{
	qsort(report->rows, report->nrows, sizeof(TrancheRate), compare_rates);
	qsort(report->sites, report->nsites, sizeof(SiteRate),
		  compare_site_rates);
	qsort(report->queries, report->nqueries, sizeof(QueryRate),
		  compare_query_rates);
	qsort(report->blockers, report->nblockers, sizeof(BlockerRate),
		  compare_blocker_rates);
}

/*
 * compare_rates
 *		qsort order of TrancheRate: highest value of the sort key first, then
 *		most acquisitions, then by tranche ID.
 */
static int
compare_rates(const void *a, const void *b)
{
	static const char *const key_values[] = {
		[SORT_BLOCKS] = BLOCKS,
		[SORT_WAIT] = WAIT_TIME,
		[SORT_SPIN_DELAYS] = SPIN_DELAYS,
		[SORT_ACQUIRES] = ACQUIRES,
	};
	const TrancheRate *ra = a;
	const TrancheRate *rb = b;
	double		va = column_rate(ra, key_values[sort_key]);
	double		vb = column_rate(rb, key_values[sort_key]);
	double		acq_a = column_rate(ra, ACQUIRES);
	double		acq_b = column_rate(rb, ACQUIRES);

	if (va != vb)
		return va < vb ? 1 : -1;
	if (acq_a != acq_b)
		return acq_a < acq_b ? 1 : -1;
	return (ra->id > rb->id) - (ra->id < rb->id);
}

/*
 * compare_site_rates
 *		qsort order of SiteRate: most delays, then most spins, first.
 */
static int
compare_site_rates(const void *a, const void *b)
{
	const SiteRate *ra = a;
	const SiteRate *rb = b;
	int			delays = counter_column(COUNTERS_SPIN, SITE_DELAYS);
	int			spins = counter_column(COUNTERS_SPIN, SITE_SPINS);

	if (delays >= 0 && ra->per_s[delays] != rb->per_s[delays])
		return ra->per_s[delays] < rb->per_s[delays] ? 1 : -1;
	if (spins >= 0 && ra->per_s[spins] != rb->per_s[spins])
		return ra->per_s[spins] < rb->per_s[spins] ? 1 : -1;
	return strcmp(ra->site, rb->site);
}

/*
 * compare_query_rates
 *		qsort order of QueryRate: most wait, then most blocks, first, then by
 *		queryid.
 */
static int
compare_query_rates(const void *a, const void *b)
{
	const QueryRate *ra = a;
	const QueryRate *rb = b;

	if (ra->wait_ms_per_s != rb->wait_ms_per_s)
		return ra->wait_ms_per_s < rb->wait_ms_per_s ? 1 : -1;
	if (ra->blocks_per_s != rb->blocks_per_s)
		return ra->blocks_per_s < rb->blocks_per_s ? 1 : -1;
	return (ra->queryid > rb->queryid) - (ra->queryid < rb->queryid);
}

/*
 * compare_blocker_rates
 *		qsort order of BlockerRate: with sort key blocks, most blocks, then
 *		most wait, first; with any other key (wait, and the spin delays and
 *		acquisitions that the view does not have), most wait, then most
 *		blocks; then by key.
 */
static int
compare_blocker_rates(const void *a, const void *b)
{
	const BlockerRate *ra = a;
	const BlockerRate *rb = b;
	double		a1 = ra->wait_ms_per_s,
				b1 = rb->wait_ms_per_s;
	double		a2 = ra->blocks_per_s,
				b2 = rb->blocks_per_s;

	if (sort_key == SORT_BLOCKS)
	{
		a1 = ra->blocks_per_s;
		b1 = rb->blocks_per_s;
		a2 = ra->wait_ms_per_s;
		b2 = rb->wait_ms_per_s;
	}
	if (a1 != b1)
		return a1 < b1 ? 1 : -1;
	if (a2 != b2)
		return a2 < b2 ? 1 : -1;
	return compare_blocker_key(a, b);
}

/*
 * column_rate
 *		The rate of the column of a tranche row's value named name, 0 if the
 *		counter table shows no such value.
 */
double
column_rate(const TrancheRate *r, const char *name)
{
	int			c = counter_column(COUNTERS_LWLOCK, name);

	return c < 0 ? 0 : r->per_s[c];
}
