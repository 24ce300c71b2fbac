/*-------------------------------------------------------------------------
 *
 * busy.c
 *	  The busy share and the throughput ceiling of a tranche over an interval
 *
 * By the operational law U = X n h, a lock held exclusively for h on
 * average, n times per transaction, is busy U at X transactions per second,
 * and so caps throughput at X / U however many cores there are.  The
 * interval's busy share of a tranche is its estimated exclusive hold time
 * in the interval over the interval: the share of the interval that its
 * lock was held exclusively, or for a tranche of several locks the sum of
 * their shares (so that tps / busy is then a lower bound of the ceiling that
 * the busiest of them sets).
 *
 * The estimate is the interval's exact exclusive acquisitions times the
 * mean of the interval's timed exclusive holds, or, when the interval timed
 * none, the mean of those since the reset, from the exclusive row of
 * pg_lwlock_utilization (whose est_hold_time is the same product since the
 * reset).  It is not the difference of est_hold_time between the samples:
 * that one counts every acquisition since the reset with the mean of all
 * samples so far, so each new sample revises the estimate of all the
 * earlier acquisitions too.  The revision, which grows with the time since
 * the reset, can make the difference negative, or far larger than the
 * interval (167 % for the one WALWrite lock seconds after a reset under
 * pgbench).  With every hold timed (hold_sample_every = 1) the two agree:
 * both are the exact sum of the interval's holds.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  tools/pg_lockstat_top/busy.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include "pg_lockstat_top.h"

static double mean_hold_ms(const TrancheCounters *cur,
						   const TrancheCounters *prev);


/*
 * make_busy
 *		The interval's estimated exclusive hold time of a tranche, its busy
 *		share in percent of report->rate_interval and the ceiling
 *		report->tps / busy, into *r, whose counts are made; each -1 when not
 *		known: no exclusive hold of the tranche timed since the reset.  The
 *		ceiling is also -1 when the tranche was not busy or the interval had
 *		no transactions.  prev is the tranche's row in the previous sample,
 *		NULL if it had none or the counters were reset (the counts are then
 *		those since the reset).
 */
void
make_busy(const TrancheCounters *cur, const TrancheCounters *prev,
		  const Report *report, TrancheRate *r)
{
	int			ex_acquires = counter_value(COUNTERS_LWLOCK, EX_ACQUIRES);
	double		mean = mean_hold_ms(cur, prev);

	r->ex_est_hold_ms = r->busy_pct = r->ceiling_tps = -1;
	if (ex_acquires < 0 || mean < 0)
		return;
	r->ex_est_hold_ms = r->counts[ex_acquires] * mean;
	r->busy_pct = r->ex_est_hold_ms / (10.0 * report->rate_interval);
	if (r->busy_pct > 0 && report->have_tps && report->tps > 0)
		r->ceiling_tps = report->tps * 100.0 / r->busy_pct;
}

/*
 * mean_hold_ms
 *		The mean exclusive hold of a tranche in milliseconds: that of the
 *		holds timed between prev (NULL: the reset) and cur if there were
 *		any, else that of those since the reset, or -1 if none was timed.
 *		Each row's hold time is est_hold_time * samples / acquires.
 */
static double
mean_hold_ms(const TrancheCounters *cur, const TrancheCounters *prev)
{
	double		samples = cur->ex_util_samples;
	double		hold_ms;
	double		prev_samples = 0;
	double		prev_hold_ms = 0;

	if (!(samples > 0 && cur->ex_util_acquires > 0))
		return -1;
	hold_ms = cur->ex_util_est_ms * samples / cur->ex_util_acquires;
	if (prev && prev->ex_util_samples > 0 && prev->ex_util_acquires > 0)
	{
		prev_samples = prev->ex_util_samples;
		prev_hold_ms = prev->ex_util_est_ms * prev_samples /
			prev->ex_util_acquires;
	}
	if (samples > prev_samples && hold_ms >= prev_hold_ms)
		return (hold_ms - prev_hold_ms) / (samples - prev_samples);
	return hold_ms / samples;
}
