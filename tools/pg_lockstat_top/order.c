/*-------------------------------------------------------------------------
 *
 * order.c
 *	  The order of pg_lockstat_top's report rows
 *
 * The tranches go by the sort key (-s, and the keys b w s a), the call
 * sites by delays and spins, the queries by wait, the blockers by blocks or
 * wait as the sort key says.
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
	const TrancheRate *ra = a;
	const TrancheRate *rb = b;
	double		va;
	double		vb;

	switch (sort_key)
	{
		case SORT_BLOCKS:
			va = ra->blocks_per_s;
			vb = rb->blocks_per_s;
			break;
		case SORT_WAIT:
			va = ra->wait_ms_per_s;
			vb = rb->wait_ms_per_s;
			break;
		case SORT_SPIN_DELAYS:
			va = ra->spin_delays_per_s;
			vb = rb->spin_delays_per_s;
			break;
		default:
			va = ra->acquires_per_s;
			vb = rb->acquires_per_s;
			break;
	}
	if (va != vb)
		return va < vb ? 1 : -1;
	if (ra->acquires_per_s != rb->acquires_per_s)
		return ra->acquires_per_s < rb->acquires_per_s ? 1 : -1;
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

	if (ra->delays_per_s != rb->delays_per_s)
		return ra->delays_per_s < rb->delays_per_s ? 1 : -1;
	if (ra->spins_per_s != rb->spins_per_s)
		return ra->spins_per_s < rb->spins_per_s ? 1 : -1;
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
