/*-------------------------------------------------------------------------
 *
 * lockstat_util.c
 *	  Primitives shared by the counter modules of pg_lockstat
 *
 * Each counter module (lockstat_lwlock.c, lockstat_spin.c,
 * lockstat_query_slots.c) keeps per-process tables that only their owner
 * writes and that readers copy while the owner goes on.  The small steps
 * they have in common are written once here: how many process slots there
 * are, the largest value kept by an atomic maximum, the kind of a process,
 * the retry loop of a reader that waits for an owner to finish a write, and
 * the layout of a struct in shared memory.
 * This file calls nothing in the others.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_util.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "lockstat.h"

#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/wait_event.h"

/*
 * Number of process slots of a per-process table: one per PGPROC that can
 * run, backends and auxiliary processes, indexed by ProcNumber.  Valid from
 * the shared memory request on (MaxBackends is set by then).
 */
int
lockstat_process_slots(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS;
}

/*
 * The kind of a process (see LOCKSTAT_NUM_KINDS) whose MyBackendType is
 * backend_type and, for a background worker, whose bgw_type is bgw_type:
 * the parallel workers that parallel.c starts have the bgw_type "parallel
 * worker", which pg_stat_activity.backend_type shows for them.  Cheap, no
 * errors.
 */
int
lockstat_kind_of(BackendType backend_type, const char *bgw_type)
{
	if (backend_type == B_BG_WORKER && bgw_type != NULL &&
		strcmp(bgw_type, "parallel worker") == 0)
		return LOCKSTAT_KIND_PARALLEL_WORKER;
	if ((int) backend_type < 0 ||
		(int) backend_type >= LOCKSTAT_NUM_BACKEND_TYPES)
		return B_INVALID;
	return (int) backend_type;
}

/*
 * The name of kind of process "kind", as pg_stat_activity.backend_type and
 * pg_stat_io.backend_type show it ("client backend", "checkpointer",
 * "parallel worker", ...).
 */
const char *
lockstat_kind_name(int kind)
{
	if (kind == LOCKSTAT_KIND_PARALLEL_WORKER)
		return "parallel worker";
	return GetBackendTypeDesc((BackendType) kind);
}

/*
 * Raise *max to value if value is larger, atomically: a concurrent larger
 * value is never overwritten by a smaller one.
 */
void
lockstat_atomic_max_u64(pg_atomic_uint64 *max, uint64 value)
{
	uint64		cur = pg_atomic_read_u64(max);

	while (value > cur)
	{
		/* on failure, cur is the value that beat us */
		if (pg_atomic_compare_exchange_u64(max, &cur, value))
			break;
	}
}

/*
 * One more wait of a loop that waits for another process to finish a few
 * instructions, which it cannot fail in but may be preempted in: the first
 * LOCKSTAT_RETRY_FAST_TRIES waits spin, later ones sleep 100 us each.
 * "tries" counts the earlier waits of the loop.
 */
void
lockstat_pause(int tries)
{
	if (tries < LOCKSTAT_RETRY_FAST_TRIES)
		pg_spin_delay();
	else
		pg_usleep(100);
}

/*
 * One more wait of a reader whose copy of an owner's table was not
 * consistent (the owner was writing it), before it tries again: a
 * lockstat_pause(), with wait event Extension while it sleeps, until
 * LOCKSTAT_RETRY_MAX_USEC have passed since its first sleep.  An owner that
 * takes that long has been stopped (by a debugger, or a signal): then it
 * returns false without waiting, and the caller gives up (with an error, or
 * by leaving the table out).  It never errors itself, so callers may hold
 * interrupts off or an LWLock.  *retry starts as LOCKSTAT_RETRY_INIT.
 */
bool
lockstat_retry_wait(LockStatRetry *retry)
{
	bool		sleeps = retry->tries >= LOCKSTAT_RETRY_FAST_TRIES;

	if (sleeps)
	{
		instr_time	now;

		INSTR_TIME_SET_CURRENT(now);
		if (INSTR_TIME_IS_ZERO(retry->start))
			retry->start = now;
		INSTR_TIME_SUBTRACT(now, retry->start);
		if (INSTR_TIME_GET_MICROSEC(now) >= LOCKSTAT_RETRY_MAX_USEC)
			return false;
		pgstat_report_wait_start(PG_WAIT_EXTENSION);
	}
	lockstat_pause(retry->tries++);
	if (sleeps)
		pgstat_report_wait_end();
	return true;
}

/*
 * The layout of a struct in shared memory, built part by part: each part
 * starts at a cache line of its own (no false sharing between parts).
 * *size is the layout's size so far (0 for a new one); returns the offset
 * of a new part of "bytes" bytes and adds it to *size.  A module computes
 * its layout in one function, for both its request (the size) and its
 * start-up (the offsets).
 */
Size
lockstat_layout_part(Size *size, Size bytes)
{
	Size		offset = CACHELINEALIGN(*size);

	*size = add_size(offset, bytes);
	return offset;
}

/*
 * The bytes to request for a layout of "size" bytes: ShmemInitStruct's
 * result is only MAXALIGNed, and the layout starts at a cache line.
 */
Size
lockstat_layout_request(Size size)
{
	return add_size(size, PG_CACHE_LINE_SIZE);
}

/*
 * ShmemInitStruct for a layout of "size" bytes requested with
 * lockstat_layout_request(): returns its start, at a cache line.  *found as
 * for ShmemInitStruct.  Call with AddinShmemInitLock held.
 */
char *
lockstat_layout_init(const char *name, Size size, bool *found)
{
	char	   *base = ShmemInitStruct(name, lockstat_layout_request(size), found);

	return (char *) TYPEALIGN(PG_CACHE_LINE_SIZE, base);
}
