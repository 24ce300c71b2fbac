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
 *	LOCKSTAT_LWLOCK_COUNTER(symbol, column, unit, sum)
 *
 * symbol	the counter's LockStatCounter is LOCKSTAT_<symbol>
 * column	its attribute of the SQL type pg_lwlock_counters, declared in
 *			pg_lockstat--1.0.sql in the order of these lines; the views
 *			pg_lwlock_stats, pg_lwlock_instance_stats and
 *			pg_lwlock_backend_stats show that type's attributes as columns,
 *			each with the description that the script gives the attribute
 * unit		COUNT: a count, shown as bigint; NS_AS_MS: nanoseconds, shown as
 *			double precision milliseconds
 * sum		what one process's row of the core patch's counters adds to it:
 *			an expression of "row" (volatile LWLockStatsCounters *), of
 *			"hold" (volatile LockStatHoldRow *, what our hold hook counted
 *			for the same row and kind of process; the hold counters are the
 *			last lines, and only they use it) and of ex_slept and
 *			sh_slept, that row's acquisitions after sleeping, read once
 *			(see lockstat_add_row())
 *
 * Adding a counter: its counting point in the core patch, a line here, its
 * attribute and COMMENT ON COLUMN in the SQL script, the expected output
 * of the views test, and its line in doc/.  Every function that returns
 * pg_lwlock_counters checks the type's attributes against these lines
 * (names and types) and errors if they differ.
 *
 * The spin-wait counters of a call site: each line is
 *
 *	LOCKSTAT_SPIN_COUNTER(field, column, unit)
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
 *
 * Adding one: its counting point in the core patch, a line here, its OUT
 * column and COMMENT ON COLUMN in the SQL script, the expected output and
 * its line in doc/.  pg_spinlock_stats() checks its columns' names against
 * these lines.
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
						sh_slept + row->acquires[true][LW_SHARED])
LOCKSTAT_LWLOCK_COUNTER(EX_ACQUIRES, "ex_acquires", COUNT,
						ex_slept + row->acquires[true][LW_EXCLUSIVE])
LOCKSTAT_LWLOCK_COUNTER(BLOCKS, "blocks", COUNT,
						ex_slept + sh_slept + row->blocks)
LOCKSTAT_LWLOCK_COUNTER(SPIN_DELAYS, "spin_delays", COUNT,
						row->spin_delays)
LOCKSTAT_LWLOCK_COUNTER(DEQUEUE_SELF, "dequeue_self", COUNT,
						row->dequeue_self)
LOCKSTAT_LWLOCK_COUNTER(WAIT_TIME_NS, "wait_time", NS_AS_MS,
						row->wait_time_ns)
LOCKSTAT_LWLOCK_COUNTER(SH_HOLD_SAMPLES, "sh_hold_samples", COUNT,
						hold->samples[1])
LOCKSTAT_LWLOCK_COUNTER(EX_HOLD_SAMPLES, "ex_hold_samples", COUNT,
						hold->samples[0])
LOCKSTAT_LWLOCK_COUNTER(SH_HOLD_TIME_NS, "sh_hold_time", NS_AS_MS,
						hold->hold_ns[1])
LOCKSTAT_LWLOCK_COUNTER(EX_HOLD_TIME_NS, "ex_hold_time", NS_AS_MS,
						hold->hold_ns[0])
#endif

#ifdef LOCKSTAT_SPIN_COUNTER
LOCKSTAT_SPIN_COUNTER(contended, "contended", COUNT)
LOCKSTAT_SPIN_COUNTER(spins, "spins", COUNT)
LOCKSTAT_SPIN_COUNTER(delays, "delays", COUNT)
LOCKSTAT_SPIN_COUNTER(sleep_ns, "wait_time", NS_AS_MS)
LOCKSTAT_SPIN_COUNTER(tas_attempts, "tas_attempts", S_LOCK_COUNT)
LOCKSTAT_SPIN_COUNTER(unlocked_skips, "unlocked_skips", S_LOCK_COUNT)
#endif
