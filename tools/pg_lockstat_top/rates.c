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

static bool tranches_went_down(const Sample *prev, const Sample *cur);
static bool sites_went_down(const Sample *prev, const Sample *cur);
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
			 tranches_went_down(prev, cur));
	make_header(prev, cur, seconds, reset, report);
	make_tranche_rates(prev, cur, report);
	make_site_rates(prev, cur, report);
	make_query_rates(prev, cur, report);
	make_blocker_rates(prev, cur, report);
	sort_report(report);
	return true;
}

/*
 * tranches_went_down
 *		Whether a tranche of prev is missing from cur or has a counter that
 *		is lower there.
 */
static bool
tranches_went_down(const Sample *prev, const Sample *cur)
{
	int			i;

	for (i = 0; i < prev->ntranches; i++)
	{
		const TrancheCounters *p = &prev->tranches[i];
		const TrancheCounters *c;

		c = bsearch(p, cur->tranches, cur->ntranches,
					sizeof(TrancheCounters), compare_tranche_id);
		if (c == NULL ||
			c->sh_acquires < p->sh_acquires ||
			c->ex_acquires < p->ex_acquires ||
			c->blocks < p->blocks ||
			c->spin_delays < p->spin_delays ||
			c->wait_ms < p->wait_ms)
			return true;
	}
	return false;
}

/*
 * sites_went_down
 *		Likewise for the spinlock call sites.
 */
static bool
sites_went_down(const Sample *prev, const Sample *cur)
{
	int			i;

	for (i = 0; i < prev->nsites; i++)
	{
		const SiteCounters *p = &prev->sites[i];
		const SiteCounters *c;

		c = bsearch(p, cur->sites, cur->nsites, sizeof(SiteCounters),
					compare_site);
		if (c == NULL || c->contended < p->contended ||
			c->spins < p->spins || c->delays < p->delays ||
			c->wait_ms < p->wait_ms)
			return true;
	}
	return false;
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
 *		and spin delays (-1 when the interval had none), and the mean of the
 *		interval's sampled holds with the hold time per second it implies
 *		(-1 without samples).
 */
static void
make_tranche_rates(const Sample *prev, const Sample *cur, Report *report)
{
	double		seconds = report->rate_interval;
	int64		total_blocks = 0;
	int64		total_spin_delays = 0;
	int			i;

	report->nrows = cur->ntranches;
	report->rows = pg_malloc0(sizeof(TrancheRate) * Max(cur->ntranches, 1));
	for (i = 0; i < cur->ntranches; i++)
	{
		const TrancheCounters *c = &cur->tranches[i];
		const TrancheCounters *p = NULL;
		TrancheRate *r = &report->rows[i];

		if (!report->reset)
			p = bsearch(c, prev->tranches, prev->ntranches,
						sizeof(TrancheCounters), compare_tranche_id);
		r->id = c->id;
		r->name = pg_strdup(c->name);
		r->sh_acquires = c->sh_acquires - (p ? p->sh_acquires : 0);
		r->ex_acquires = c->ex_acquires - (p ? p->ex_acquires : 0);
		r->blocks = c->blocks - (p ? p->blocks : 0);
		r->spin_delays = c->spin_delays - (p ? p->spin_delays : 0);
		r->wait_ms = c->wait_ms - (p ? p->wait_ms : 0);
		r->acquires_per_s = (r->sh_acquires + r->ex_acquires) / seconds;
		r->blocks_per_s = r->blocks / seconds;
		r->spin_delays_per_s = r->spin_delays / seconds;
		r->wait_ms_per_s = r->wait_ms / seconds;
		r->hold_samples = c->hold_samples - (p ? p->hold_samples : 0);
		r->hold_ms = c->hold_ms - (p ? p->hold_ms : 0);
		if (r->hold_samples > 0)
		{
			r->mean_hold_us = 1000.0 * r->hold_ms / r->hold_samples;
			r->held_ms_per_s = r->mean_hold_us / 1000.0 * r->acquires_per_s;
		}
		else
		{
			r->mean_hold_us = -1;
			r->held_ms_per_s = -1;
		}
		total_blocks += r->blocks;
		total_spin_delays += r->spin_delays;
	}
	for (i = 0; i < report->nrows; i++)
	{
		TrancheRate *r = &report->rows[i];

		r->blk_pct = total_blocks > 0 ?
			100.0 * r->blocks / total_blocks : -1;
		r->spin_delay_pct = total_spin_delays > 0 ?
			100.0 * r->spin_delays / total_spin_delays : -1;
	}
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
	double		seconds = report->rate_interval;
	bool		reset = report->reset || sites_went_down(prev, cur);
	int			i;

	report->have_sites = cur->have_sites;
	report->nsites = cur->nsites;
	report->sites = pg_malloc0(sizeof(SiteRate) * Max(cur->nsites, 1));
	for (i = 0; i < cur->nsites; i++)
	{
		const SiteCounters *c = &cur->sites[i];
		const SiteCounters *p = NULL;
		SiteRate   *r = &report->sites[i];

		if (!reset)
			p = bsearch(c, prev->sites, prev->nsites, sizeof(SiteCounters),
						compare_site);
		r->site = pg_strdup(c->site);
		r->contended_per_s = (c->contended - (p ? p->contended : 0)) / seconds;
		r->spins_per_s = (c->spins - (p ? p->spins : 0)) / seconds;
		r->delays_per_s = (c->delays - (p ? p->delays : 0)) / seconds;
		r->wait_ms_per_s = (c->wait_ms - (p ? p->wait_ms : 0)) / seconds;
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
