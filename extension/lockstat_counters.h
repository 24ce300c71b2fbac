/*-------------------------------------------------------------------------
 *
 * lockstat_counters.h
 *	  The LWLock counters of pg_lockstat, one line each
 *
 * Each line is
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
 *			an expression of "row" (volatile LWLockStatsCounters *) and of
 *			ex_slept and sh_slept, that row's acquisitions after sleeping,
 *			read once (see lockstat_add_row())
 *
 * Adding a counter: its counting point in the core patch, a line here, its
 * attribute and COMMENT ON COLUMN in the SQL script, the expected output
 * of the views test, and its line in doc/.  Every function that returns
 * pg_lwlock_counters checks the type's attributes against these lines
 * (names and types) and errors if they differ.
 *
 * This file has no include guard: it is included where the macro is
 * defined.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_counters.h
 *
 *-------------------------------------------------------------------------
 */

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
