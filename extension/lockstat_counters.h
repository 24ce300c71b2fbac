/*-------------------------------------------------------------------------
 *
 * lockstat_counters.h
 *	  The LWLock and spin-wait counters of pg_lockstat, one line each
 *
 * A file that includes this header defines LOCKSTAT_LWLOCK_COUNTER or
 * LOCKSTAT_SPIN_COUNTER (or both) and gets the lines of that list.
 *
 * The LWLock counters: each line is
 *
 *	LOCKSTAT_LWLOCK_COUNTER(symbol, column, unit, descr, sum, export)
 *
 * symbol	the counter's LockStatCounter is LOCKSTAT_<symbol>
 * column	its attribute of the SQL type pg_lwlock_counters, in the order of
 *			these lines; the views pg_lwlock_stats, pg_lwlock_instance_stats,
 *			pg_lwlock_backend_stats and pg_lwlock_backend_type_stats show
 *			that type's attributes as columns, each with the description of
 *			the attribute
 * unit		COUNT: a count, shown as bigint; NS_AS_MS: nanoseconds, shown as
 *			double precision milliseconds
 * descr	the attribute's description (COMMENT ON COLUMN), naming the unit
 *			in parentheses: "(count" or "(milliseconds" and then ")", ";"
 *			or ","; one string, split into literals that C joins
 * sum		what one process's row of the core patch's counters adds to it:
 *			an expression of "row" (volatile LWLockStatsCounters *), of
 *			"hold" (volatile LockStatHoldRow *, what our hold hook counted
 *			for the same row and kind of process; the hold counters are the
 *			last lines, and only they use it) and of ex_slept and
 *			sh_slept, that row's acquisitions after sleeping, read once
 *			(see lockstat_add_row())
 * export	where the counter is shown beyond SQL, for the reader, for
 *			pg_lockstat_top, which is compiled with this table, and for t/043,
 *			which checks every consumer against it (the extension's C code
 *			ignores this argument):
 *
 *	EXPORT(metric, type, top_name, top_label, panel)
 *
 *			metric		its Prometheus family in
 *						integrations/prometheus/pg_lockstat.yaml, with the
 *						label that tells it apart in braces if it shares the
 *						family ({mode=shared}); "" if not exported
 *			type		the family's usage in that file: COUNTER, GAUGE or
 *						HISTOGRAM (the counter is the histogram's _count or
 *						_sum), or NONE
 *			top_name	the column of pg_lockstat_top's tranche or call-site
 *						query that carries it, summed with the counters of the
 *						same top_name (tools/pg_lockstat_top/columns.c); ""
 *						if not shown there
 *			top_label	the heading of its column on pg_lockstat_top's screen,
 *						a rate per second summed over the values of the same
 *						top_label (hold_samples and hold_time: their section)
 *			panel		the title of a panel of the Grafana dashboard
 *						integrations/grafana/pg_lockstat.json that plots the
 *						metric; "" if none
 *
 * "make" writes the install script pg_lockstat--1.0.sql from its template
 * and these lines (the attributes of pg_lwlock_counters, the counter
 * columns of pg_spinlock_stats() and their descriptions), and the
 * Prometheus query file from its template and their EXPORT() (the columns
 * and queries of the COUNTER and GAUGE families): scripts/counters.pl, which
 * reads this file with the C preprocessor.  Adding a counter: see "Adding a
 * counter" in doc/layout.md for what else a counter touches.  Every
 * function that returns pg_lwlock_counters checks the type's attributes
 * against these lines (names and types) and errors if they differ.
 *
 * The spin-wait counters of a call site: each line is
 *
 *	LOCKSTAT_SPIN_COUNTER(field, column, unit, descr, export)
 *
 * field	its member of the core patch's SpinWaitCounters (storage/s_lock.h)
 *			and of LockStatSpinTotals, in the order of both; the first is
 *			contended, and the waits per duration and the longest wait follow
 *			the last
 * column	its column of pg_spinlock_stats(), in this order, after file, line
 *			and func
 * unit		COUNT, NS_AS_MS as above, or S_LOCK_COUNT: a count that only
 *			s_lock() keeps, under the strategies that count probes; a site's
 *			S_LOCK_COUNT columns are NULL when all of them are zero
 * descr	the column's description, as for the LWLock counters
 * export	as for the LWLock counters
 *
 * Adding one: as above.  pg_spinlock_stats() checks its columns' names
 * against these lines.
 *
 * This file has no include guard: it is included where the macros are
 * defined.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_counters.h
 *
 *-------------------------------------------------------------------------
 */

#ifdef LOCKSTAT_LWLOCK_COUNTER
LOCKSTAT_LWLOCK_COUNTER(SH_ACQUIRES, "sh_acquires", COUNT,
						"shared acquisitions (count): LWLockAcquire calls, "
						"successful LWLockConditionalAcquire and "
						"LWLockAcquireOrWait calls",
						sh_slept + row->acquires[true][LW_SHARED],
						EXPORT("pg_lockstat_lwlock_acquires_total{mode=shared}",
							   COUNTER, "sh_acquires", "Acq/s",
							   "Top tranches by acquisitions"))
LOCKSTAT_LWLOCK_COUNTER(EX_ACQUIRES, "ex_acquires", COUNT,
						"exclusive acquisitions (count), as sh_acquires",
						ex_slept + row->acquires[true][LW_EXCLUSIVE],
						EXPORT("pg_lockstat_lwlock_acquires_total{mode=exclusive}",
							   COUNTER, "ex_acquires", "Acq/s",
							   "Top tranches by acquisitions"))
LOCKSTAT_LWLOCK_COUNTER(BLOCKS, "blocks", COUNT,
						"calls that had to sleep on the process semaphore at "
						"least once (count); LWLOCK_STATS \"blk\"",
						ex_slept + sh_slept + row->blocks,
						EXPORT("pg_lockstat_lwlock_blocks_total", COUNTER,
							   "blocks", "Blk/s", "Top tranches by blocks"))
LOCKSTAT_LWLOCK_COUNTER(SPIN_DELAYS, "spin_delays", COUNT,
						"sleeps of perform_spin_delay while taking the "
						"wait-list lock (count); LWLOCK_STATS \"spindelay\"",
						row->spin_delays,
						EXPORT("pg_lockstat_lwlock_spin_delays_total", COUNTER,
							   "spin_delays", "SpinDelay/s",
							   "Top tranches by spin delays"))
/* rare; a sign of a wake-up race, for hackers: not on the live screens */
LOCKSTAT_LWLOCK_COUNTER(DEQUEUE_SELF, "dequeue_self", COUNT,
						"waiters that removed themselves from the wait queue "
						"(count); LWLOCK_STATS \"dequeue self\"",
						row->dequeue_self,
						EXPORT("pg_lockstat_lwlock_dequeue_self_total", COUNTER,
							   "", "", ""))
LOCKSTAT_LWLOCK_COUNTER(WAIT_TIME_NS, "wait_time", NS_AS_MS,
						"time that blocked calls waited, each from its first "
						"sleep until its last wake-up (milliseconds)",
						row->wait_time_ns,
						EXPORT("pg_lockstat_lwlock_wait_seconds_total", COUNTER,
							   "wait_time", "Wait ms/s",
							   "Top tranches by wait time"))
/* the hold counters: Prometheus has them as the hold histogram's _count and _sum */
LOCKSTAT_LWLOCK_COUNTER(SH_HOLD_SAMPLES, "sh_hold_samples", COUNT,
						"shared acquisitions whose hold was timed (count): "
						"one in pg_lockstat.hold_sample_every of each "
						"process's acquisitions; times that setting, an "
						"estimate of sh_acquires",
						hold->samples[1],
						EXPORT("pg_lockstat_lwlock_hold_duration_seconds{mode=shared}",
							   HISTOGRAM, "hold_samples", "Samples",
							   "Mean sampled LWLock hold time"))
LOCKSTAT_LWLOCK_COUNTER(EX_HOLD_SAMPLES, "ex_hold_samples", COUNT,
						"exclusive acquisitions whose hold was timed (count), "
						"as sh_hold_samples",
						hold->samples[0],
						EXPORT("pg_lockstat_lwlock_hold_duration_seconds{mode=exclusive}",
							   HISTOGRAM, "hold_samples", "Samples",
							   "Mean sampled LWLock hold time"))
LOCKSTAT_LWLOCK_COUNTER(SH_HOLD_TIME_NS, "sh_hold_time", NS_AS_MS,
						"time that the timed shared holds lasted, each from "
						"the end of its acquisition to its release "
						"(milliseconds)",
						hold->hold_ns[1],
						EXPORT("pg_lockstat_lwlock_hold_duration_seconds{mode=shared}",
							   HISTOGRAM, "hold_time", "Hold us",
							   "Mean sampled LWLock hold time"))
LOCKSTAT_LWLOCK_COUNTER(EX_HOLD_TIME_NS, "ex_hold_time", NS_AS_MS,
						"time that the timed exclusive holds lasted "
						"(milliseconds), as sh_hold_time",
						hold->hold_ns[0],
						EXPORT("pg_lockstat_lwlock_hold_duration_seconds{mode=exclusive}",
							   HISTOGRAM, "hold_time", "Hold us",
							   "Mean sampled LWLock hold time"))
#endif

#ifdef LOCKSTAT_SPIN_COUNTER
LOCKSTAT_SPIN_COUNTER(contended, "contended", COUNT,
					  "waits that had to spin at least once (count)",
					  EXPORT("pg_lockstat_spin_waits_total", COUNTER,
							 "contended", "Contended/s",
							 "Top spin-wait call sites"))
LOCKSTAT_SPIN_COUNTER(spins, "spins", COUNT,
					  "spin loop iterations, calls of perform_spin_delay() "
					  "(count)",
					  EXPORT("pg_lockstat_spin_spins_total", COUNTER,
							 "spins", "Spins/s", "Top spin-wait call sites"))
LOCKSTAT_SPIN_COUNTER(delays, "delays", COUNT,
					  "sleeps in perform_spin_delay() (count)",
					  EXPORT("pg_lockstat_spin_delays_total", COUNTER,
							 "delays", "Delays/s",
							 "Top spin-wait call sites by delays"))
LOCKSTAT_SPIN_COUNTER(sleep_ns, "wait_time", NS_AS_MS,
					  "time slept in those delays (milliseconds); spinning "
					  "itself is not timed",
					  EXPORT("pg_lockstat_spin_delay_seconds_total", COUNTER,
							 "wait_time", "Wait ms/s",
							 "Top spin-wait call sites"))
/* the probes of s_lock(): for comparing strategies, not on the live screen */
LOCKSTAT_SPIN_COUNTER(tas_attempts, "tas_attempts", S_LOCK_COUNT,
					  "probes of s_lock() that issued the atomic TAS(), the "
					  "successful one included (count); NULL where not "
					  "counted: other spin loops, and spin_strategy default",
					  EXPORT("pg_lockstat_spin_tas_attempts_total", COUNTER,
							 "", "", "Top spin-wait call sites"))
LOCKSTAT_SPIN_COUNTER(unlocked_skips, "unlocked_skips", S_LOCK_COUNT,
					  "probes of s_lock() whose unlocked read saw the lock "
					  "held, so that no atomic was issued (count; ttas_spin, "
					  "ttas, ttas_backoff); NULL where not counted",
					  EXPORT("pg_lockstat_spin_unlocked_skips_total", COUNTER,
							 "", "", "Top spin-wait call sites"))
#endif
