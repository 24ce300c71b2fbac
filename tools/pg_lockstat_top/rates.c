/*-------------------------------------------------------------------------
 *
 * rates.c
 *	  pg_lockstat_top's rates between two samples
 *
 * Time base: rates divide the counter differences by the time between the
 * two samples' clock_timestamp() on the server, which is read in the same
 * round trip as the counters, so that network delays do not distort the
 * rates.  The client's monotonic clock only schedules the samples.
 *
 * Resets: pg_lockstat_reset() moves pg_lockstat_status.stats_reset, and the
 * counters start again from zero.  The status is read before the counters, so
 * a reset that happens between the two reads is seen either as a counter
 * that went down or, in the next sample, as a moved stats_reset.  Either way
 * the interval is marked as reset and its values are the counts since the
 * reset; when stats_reset lies inside the interval, rates are over the time
 * since the reset.  No rate is ever negative.
 *
 * Blocked calls per query: a key's counts can also go down without a reset,
 * when its entry was evicted into the residual row and came back; its count
 * in the interval is then its count now.  The residual row grows by what is
 * evicted into it.  The same goes for the blockers (pg_lwlock_blockers),
 * per waiting query, holder and root holder.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/rates.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "pg_lockstat_top.h"

static bool rows_went_down(const void *prev, int nprev, const void *cur,
						   int ncur, size_t size, CounterKind kind,
						   int (*compare) (const void *, const void *));
static const double *row_values(const void *row, CounterKind kind);
static void value_rates(CounterKind kind, const double *cur,
						const double *prev, double seconds, double *counts,
						double *per_s);
static void make_shares(Report *report);
static double share(double part, double total);
static double value_count(const TrancheRate *r, const char *name);
static void make_header(const Sample *prev, const Sample *cur,
						double seconds, bool reset, Report *report);
static void make_tranche_rates(const Sample *prev, const Sample *cur,
							   Report *report);
static void make_site_rates(const Sample *prev, const Sample *cur,
							Report *report);
static void make_query_rates(const Sample *prev, const Sample *cur,
							 Report *report);
static void make_blocker_rates(const Sample *prev, const Sample *cur,
							   Report *report);


/*
 * make_report
 *		The rates between two samples, into *report (which need not be
 *		initialized; free it with free_report).  Returns false, with *report
 *		empty, if the server clock did not move forward, in which case cur is
 *		only a new baseline.
 *
 * A tranche missing from prev had no activity then (the view omits such
 * rows): its previous counts are zero.  If stats_reset moved, or any counter
 * of any tranche went down (or a tranche disappeared), the interval is
 * marked as reset and every value is the count since the reset.
 */
bool
make_report(const Sample *prev, const Sample *cur, Report *report)
{
	double		seconds = cur->epoch - prev->epoch;
	bool		reset;

	memset(report, 0, sizeof(Report));
	if (!(seconds > 0))
		return false;

	reset = (strcmp(prev->stats_reset, cur->stats_reset) != 0 ||
			 rows_went_down(prev->tranches, prev->ntranches, cur->tranches,
							cur->ntranches, sizeof(TrancheCounters),
							COUNTERS_LWLOCK, compare_tranche_id));
	make_header(prev, cur, seconds, reset, report);
	make_tranche_rates(prev, cur, report);
	make_site_rates(prev, cur, report);
	make_query_rates(prev, cur, report);
	make_blocker_rates(prev, cur, report);
	sort_report(report);
	return true;
}

/*
 * rows_went_down
 *		Whether a row of prev (nprev rows of size bytes, sorted by compare)
 *		is missing from cur or has a counter value of kind that is lower
 *		there: the tranches or the spinlock call sites.
 */
static bool
rows_went_down(const void *prev, int nprev, const void *cur, int ncur,
			   size_t size, CounterKind kind,
			   int (*compare) (const void *, const void *))
{
	int			nvalues = counter_set(kind)->nvalues;

	for (int i = 0; i < nprev; i++)
	{
		const char *p = (const char *) prev + i * size;
		const char *c = bsearch(p, cur, ncur, size, compare);

		if (c == NULL)
			return true;
		for (int v = 0; v < nvalues; v++)
		{
			if (row_values(c, kind)[v] < row_values(p, kind)[v])
				return true;
		}
	}
	return false;
}

/*
 * row_values
 *		The counter values of a row of a sample: a TrancheCounters for kind
 *		COUNTERS_LWLOCK, a SiteCounters for COUNTERS_SPIN.
 */
static const double *
row_values(const void *row, CounterKind kind)
{
	if (kind == COUNTERS_LWLOCK)
		return ((const TrancheCounters *) row)->values;
	return ((const SiteCounters *) row)->values;
}

/*
 * value_rates
 *		The counts of the values of kind in an interval, cur minus prev (or
 *		cur if prev is NULL), into counts, and the rates of the columns over
 *		seconds into per_s: each column's sum of its values' counts, per
 *		second.
 */
static void
value_rates(CounterKind kind, const double *cur, const double *prev,
			double seconds, double *counts, double *per_s)
{
	const CounterSet *set = counter_set(kind);

	memset(per_s, 0, sizeof(double) * MAX_TOP_VALUES);
	for (int v = 0; v < set->nvalues; v++)
	{
		counts[v] = cur[v] - (prev ? prev[v] : 0);
		per_s[set->values[v].column] += counts[v];
	}
	for (int c = 0; c < set->ncolumns; c++)
		per_s[c] /= seconds;
}

/*
 * make_header
 *		The fields of a report other than its rows: times, the seconds the
 *		rates are over (seconds, or less after a pg_lockstat_reset() inside
 *		the interval, since the counts cover only the time since the reset),
 *		tps and active backends.
 */
static void
make_header(const Sample *prev, const Sample *cur, double seconds,
			bool reset, Report *report)
{
	report->time_text = pg_strdup(cur->time_text);
	report->time_csv = pg_strdup(cur->time_csv);
	report->spin_strategy = pg_strdup(cur->spin_strategy);
	report->interval = seconds;
	report->reset = reset;
	report->rate_interval = seconds;

	if (reset && strcmp(prev->stats_reset, cur->stats_reset) != 0)
	{
		double		since_reset = cur->epoch - cur->stats_reset_epoch;

		if (since_reset > 0 && since_reset < seconds)
			report->rate_interval = since_reset;
	}

	if (prev->have_xacts && cur->have_xacts && cur->xacts >= prev->xacts)
	{
		report->have_tps = true;
		report->tps = (cur->xacts - prev->xacts) / seconds;
	}
	report->active = cur->active;
}

/*
 * make_tranche_rates
 *		The tranche rows of a report whose header is made: counts, rates
 *		over report->rate_interval, each tranche's share of all blocks
 *		and spin delays (-1 when the interval had none), the mean of the
 *		interval's sampled holds with the hold time per second it implies
 *		(-1 without samples), and the busy share and ceiling (busy.c).
 */
static void
make_tranche_rates(const Sample *prev, const Sample *cur, Report *report)
{
	report->nrows = cur->ntranches;
	report->rows = pg_malloc0(sizeof(TrancheRate) * Max(cur->ntranches, 1));
	for (int i = 0; i < cur->ntranches; i++)
	{
		const TrancheCounters *c = &cur->tranches[i];
		const TrancheCounters *p = NULL;
		TrancheRate *r = &report->rows[i];
		double		hold_samples;

		if (!report->reset)
			p = bsearch(c, prev->tranches, prev->ntranches,
						sizeof(TrancheCounters), compare_tranche_id);
		r->id = c->id;
		r->name = pg_strdup(c->name);
		value_rates(COUNTERS_LWLOCK, c->values, p ? p->values : NULL,
					report->rate_interval, r->counts, r->per_s);
		hold_samples = value_count(r, HOLD_SAMPLES);
		r->mean_hold_us = r->held_ms_per_s = -1;
		if (hold_samples > 0)
		{
			r->mean_hold_us = 1000.0 * value_count(r, HOLD_TIME) / hold_samples;
			r->held_ms_per_s = r->mean_hold_us / 1000.0 *
				column_rate(r, ACQUIRES);
		}
		make_busy(c, p, report, r);
	}
	make_shares(report);
}

/*
 * make_shares
 *		Each tranche row's share of the interval's blocks and spin delays in
 *		all rows, or -1 when there were none.
 */
static void
make_shares(Report *report)
{
	double		total_blocks = 0;
	double		total_spin_delays = 0;

	for (int i = 0; i < report->nrows; i++)
	{
		total_blocks += value_count(&report->rows[i], BLOCKS);
		total_spin_delays += value_count(&report->rows[i], SPIN_DELAYS);
	}
	for (int i = 0; i < report->nrows; i++)
	{
		TrancheRate *r = &report->rows[i];

		r->blk_pct = share(value_count(r, BLOCKS), total_blocks);
		r->spin_delay_pct = share(value_count(r, SPIN_DELAYS),
								  total_spin_delays);
	}
}

/*
 * share
 *		part in percent of total, or -1 if total is not positive.
 */
static double
share(double part, double total)
{
	return total > 0 ? 100.0 * part / total : -1;
}

/*
 * value_count
 *		The interval's count of a tranche row's value named name, 0 if the
 *		counter table shows no such value.
 */
static double
value_count(const TrancheRate *r, const char *name)
{
	int			v = counter_value(COUNTERS_LWLOCK, name);

	return v < 0 ? 0 : r->counts[v];
}

/*
 * make_site_rates
 *		The spinlock call-site rates of a report whose header is made, over
 *		report->rate_interval.  As for tranches, any counter that went down
 *		makes every value the count since the reset.
 */
static void
make_site_rates(const Sample *prev, const Sample *cur, Report *report)
{
	bool		reset = report->reset ||
		rows_went_down(prev->sites, prev->nsites, cur->sites, cur->nsites,
					   sizeof(SiteCounters), COUNTERS_SPIN, compare_site);

	report->have_sites = cur->have_sites;
	report->nsites = cur->nsites;
	report->sites = pg_malloc0(sizeof(SiteRate) * Max(cur->nsites, 1));
	for (int i = 0; i < cur->nsites; i++)
	{
		const SiteCounters *c = &cur->sites[i];
		const SiteCounters *p = NULL;
		SiteRate   *r = &report->sites[i];
		double		counts[MAX_TOP_VALUES];

		if (!reset)
			p = bsearch(c, prev->sites, prev->nsites, sizeof(SiteCounters),
						compare_site);
		r->site = pg_strdup(c->site);
		value_rates(COUNTERS_SPIN, c->values, p ? p->values : NULL,
					report->rate_interval, counts, r->per_s);
	}
}

/*
 * make_query_rates
 *		The query rows of a report whose header is made: one per key that
 *		blocked in the interval, summed over its tranches, with the tranche
 *		it waited on most, over report->rate_interval.  The rows of cur are
 *		sorted by key and tranche, so a key's rows are consecutive.
 */
static void
make_query_rates(const Sample *prev, const Sample *cur, Report *report)
{
	double		seconds = report->rate_interval;
	int			i = 0;

	report->have_queries = cur->have_queries;
	report->nqueries = 0;
	report->queries = pg_malloc0(sizeof(QueryRate) * Max(cur->nqueries, 1));
	while (i < cur->nqueries)
	{
		const QueryCounters *first = &cur->queries[i];
		int64		blocks = 0;
		double		wait_ms = 0;
		double		top_wait = -1;
		const char *top_tranche = "";

		for (; i < cur->nqueries &&
			 compare_query_key(first, &cur->queries[i]) == 0; i++)
		{
			const QueryCounters *c = &cur->queries[i];
			const QueryCounters *p = NULL;
			int64		b;
			double		w;

			if (!report->reset)
				p = bsearch(c, prev->queries, prev->nqueries,
							sizeof(QueryCounters), compare_query_row);
			b = c->blocks;
			w = c->wait_ms;
			if (p && p->blocks <= c->blocks && p->wait_ms <= c->wait_ms)
			{
				b -= p->blocks;
				w -= p->wait_ms;
			}
			blocks += b;
			wait_ms += w;
			if (b > 0 && w > top_wait)
			{
				top_wait = w;
				top_tranche = c->tranche;
			}
		}
		if (blocks > 0)
		{
			QueryRate  *r = &report->queries[report->nqueries++];

			r->queryid = first->queryid;
			r->dbid = first->dbid;
			r->userid = first->userid;
			r->backend_type = pg_strdup(first->backend_type);
			r->top_tranche = pg_strdup(top_tranche);
			r->blocks_per_s = blocks / seconds;
			r->wait_ms_per_s = wait_ms / seconds;
		}
	}
}

/*
 * make_blocker_rates
 *		The blocker rows of a report whose header is made: one per key of
 *		pg_lwlock_blockers (tranche, waiter, holder, root holder) that
 *		blocked in the interval, over report->rate_interval.  A key whose
 *		counts went down (evicted and counted again) counts what it has now.
 *		The texts are set later, by label_blockers().
 */
static void
make_blocker_rates(const Sample *prev, const Sample *cur, Report *report)
{
	double		seconds = report->rate_interval;

	report->have_blockers = cur->have_blockers;
	report->nblockers = 0;
	report->blockers = pg_malloc0(sizeof(BlockerRate) *
								  Max(cur->nblockers, 1));
	for (int i = 0; i < cur->nblockers; i++)
	{
		const BlockerCounters *c = &cur->blockers[i];
		const BlockerCounters *p = NULL;
		int64		blocks = c->blocks;
		double		wait_ms = c->wait_ms;
		BlockerRate *r;

		if (!report->reset)
			p = bsearch(c, prev->blockers, prev->nblockers,
						sizeof(BlockerCounters), compare_blocker_key);
		if (p && p->blocks <= c->blocks && p->wait_ms <= c->wait_ms)
		{
			blocks -= p->blocks;
			wait_ms -= p->wait_ms;
		}
		if (blocks <= 0)
			continue;
		r = &report->blockers[report->nblockers++];
		copy_blocker_key(&r->key, &c->key);
		r->blocks_per_s = blocks / seconds;
		r->wait_ms_per_s = wait_ms / seconds;
	}
}


/*
 * free_report
 *		Release what a report points to and clear it.
 */
void
free_report(Report *report)
{
	int			i;

	pg_free(report->time_text);
	pg_free(report->time_csv);
	pg_free(report->spin_strategy);
	for (i = 0; i < report->nrows; i++)
		pg_free(report->rows[i].name);
	pg_free(report->rows);
	for (i = 0; i < report->nsites; i++)
		pg_free(report->sites[i].site);
	pg_free(report->sites);
	for (i = 0; i < report->nqueries; i++)
	{
		pg_free(report->queries[i].backend_type);
		pg_free(report->queries[i].top_tranche);
		pg_free(report->queries[i].text);
	}
	pg_free(report->queries);
	for (i = 0; i < report->nblockers; i++)
	{
		free_blocker_key(&report->blockers[i].key);
		pg_free(report->blockers[i].waiter_text);
		pg_free(report->blockers[i].holder_text);
		pg_free(report->blockers[i].root_text);
	}
	pg_free(report->blockers);
	memset(report, 0, sizeof(Report));
}
