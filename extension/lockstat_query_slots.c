/*-------------------------------------------------------------------------
 *
 * lockstat_query_slots.c
 *	  The shared memory of the per-query counts: the process tables, their
 *	  write protocol, and the residual rows
 *
 * Layout: a LockStatQueryState header; one LockStatQuerySlot per process
 * slot (ProcNumber), each a table of LOCKSTAT_QUERY_SLOT_ENTRIES entries;
 * the residual rows (RESIDUAL_WORDS atomic counters per tranche row, in two
 * sets); and a shared dynahash table of at most
 * pg_lockstat.max_query_entries entries, which processes fold their tables
 * into.  pg_lwlock_query_stats is the shared
 * table plus the tables of the process slots plus the residual rows.
 * lockstat_query.c counts into a process's table from the hooks;
 * lockstat_query_table.c folds the tables into the shared table and reads
 * them.
 *
 * The residual row of a tranche (queryid, dbid, userid and backend_type
 * NULL in the view) holds what has no entry of its own: the calls of a
 * process whose table was full, and the entries evicted from the shared
 * table.  So every blocked call is counted exactly once, and per tranche
 * the view adds up to pg_lwlock_stats' blocks and wait_time.
 *
 * Locking rules (those of the shared table: lockstat_query_table.c; the
 * reset's, with its generations and halves: lockstat_reset.c):
 *
 * - A slot's table is written only by the process that owns the slot, with
 *	 plain stores: by the wait hook, which takes no lock and allocates
 *	 nothing, and by the fold.  Every change happens between two increments
 *	 of the slot's changecount (odd while the owner writes), as
 *	 PgBackendStatus.st_changecount, and readers copy a table until they see
 *	 the same even changecount before and after the copy
 *	 (lockstat_query_copy_slot()).  The hook also adds each call to the
 *	 slot's hooked_blocks and hooked_wait_ns, which only a reset reads.  The
 *	 only fields others write are a reset's, resetting and
 *	 target_generation (lockstat_query_slot_hold() and _release()), and a
 *	 waker's: waker and root, written with plain stores
 *	 only while the owner sleeps in an LWLock's wait queue, before the
 *	 waker's barrier that lets it run (so at most one waker writes them
 *	 at a time, and never while the owner reads them).
 *
 * - The residual rows are atomic counters: the hook adds to them when its
 *	 table is full, inside its write, and folds add the entries they evict,
 *	 holding query_lock.  They have one set for even and one for odd
 *	 generations.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_query_slots.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "port/atomics.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"

#include "lockstat.h"
#include "lockstat_query_internal.h"

LockStatQueryState *lockstat_query_state = NULL;
HTAB	   *lockstat_query_hash = NULL;

static Size
lockstat_query_slot_stride(void)
{
	return CACHELINEALIGN(sizeof(LockStatQuerySlot));
}

/*
 * The layout of the header, the process tables and the residual rows:
 * their offsets, and the size, which it returns.
 */
static Size
lockstat_query_layout(Size *slots, Size *residual)
{
	Size		size = 0;

	(void) lockstat_layout_part(&size, sizeof(LockStatQueryState));
	*slots = lockstat_layout_part(&size,
								  mul_size(lockstat_query_slot_stride(),
										   lockstat_process_slots()));
	*residual = lockstat_layout_part(&size,
									 mul_size(sizeof(pg_atomic_uint64),
											  mul_size(2 * (lockstat_max_tranches + 1),
													   RESIDUAL_WORDS)));
	return size;
}

/*
 * Start a write of this process's table: make changecount odd.  If a reset
 * is taking this slot's cut (lockstat_query_slot_hold()), wait until it has:
 * the reset must see no write start once it has seen changecount even.
 * Together with the reset's full barrier between setting "resetting" and
 * reading changecount, this full barrier makes sure that one of the two
 * sees the other.
 */
void
lockstat_query_begin_write(LockStatQuerySlot *slot)
{
	volatile LockStatQuerySlot *vslot = slot;

	for (int tries = 0;; tries++)
	{
		vslot->changecount++;
		pg_memory_barrier();
		if (!vslot->resetting)
		{
			/* see the target_generation the reset set before it let us go */
			pg_read_barrier();
			return;
		}
		/* back off, writing nothing, until the reset has its cut */
		vslot->changecount++;
		pg_memory_barrier();
		while (vslot->resetting)
			lockstat_pause(tries++);
	}
}

/* end a write of this process's table: changecount even again */
void
lockstat_query_end_write(LockStatQuerySlot *slot)
{
	pg_write_barrier();
	((volatile LockStatQuerySlot *) slot)->changecount++;
}

/*
 * The owner's side of a reset's handshake on process slot "slot" (see
 * lockstat_reset.c): set the slot's "resetting", so that its owner starts
 * no write (lockstat_query_begin_write()), and return true if the owner is
 * not writing now, with *hooked_blocks and *hooked_wait_ns set to the
 * blocked calls its hook counted and their wait in ns, which stand still
 * until lockstat_query_slot_release(); false if the owner is writing.
 * Either way the caller releases the slot.  Loads and stores only; cannot
 * fail.
 */
bool
lockstat_query_slot_hold(int slot, uint64 *hooked_blocks,
						 uint64 *hooked_wait_ns)
{
	volatile LockStatQuerySlot *s = lockstat_query_slot(slot);

	/* from here on the owner starts no write (lockstat_query_begin_write) */
	s->resetting = 1;
	pg_memory_barrier();
	if (s->changecount % 2 != 0)
		return false;
	pg_read_barrier();
	*hooked_blocks = s->hooked_blocks;
	*hooked_wait_ns = s->hooked_wait_ns;
	return true;
}

/*
 * Let the owner of process slot "slot" write again after
 * lockstat_query_slot_hold(); with "cut", it counts in the current
 * generation from its next write on (the slot's cut is taken).  Cannot
 * fail.
 */
void
lockstat_query_slot_release(int slot, bool cut)
{
	volatile LockStatQuerySlot *s = lockstat_query_slot(slot);

	if (cut)
	{
		s->target_generation =
			pg_atomic_read_u64(&lockstat_query_state->generation);
		pg_memory_barrier();
	}
	s->resetting = 0;
	if (!cut)
		pg_memory_barrier();
}

/*
 * Shared memory and the "pg_lockstat_query" lock, for our
 * shmem_request_hook (MaxBackends is known there).
 */
void
lockstat_query_shmem_request(void)
{
	Size		slots;
	Size		residual;

	RequestAddinShmemSpace(lockstat_layout_request(lockstat_query_layout(&slots,
																		 &residual)));
	RequestAddinShmemSpace(hash_estimate_size(lockstat_max_query_entries,
											  sizeof(LockStatQueryEntry)));
	RequestNamedLWLockTranche("pg_lockstat_query", 1);
}

/*
 * Create or attach to the per-query tables; called with AddinShmemInitLock
 * held by our shmem_startup_hook, in every process.
 */
void
lockstat_query_shmem_startup(void)
{
	bool		found;
	Size		size;
	Size		slots;
	Size		residual;
	char	   *p;
	HASHCTL		info;
	LockStatQueryState *state;

	size = lockstat_query_layout(&slots, &residual);
	p = lockstat_layout_init("pg_lockstat query entries", size, &found);
	state = (LockStatQueryState *) p;
	lockstat_query_state = state;
	if (!found)
	{
		int			nwords;

		state->lock = &(GetNamedLWLockTranche("pg_lockstat_query"))->lock;
		state->fold_count = 0;
		state->evicted = 0;
		pg_atomic_init_u64(&state->generation, 0);
		state->num_slots = lockstat_process_slots();
		state->num_rows = lockstat_max_tranches + 1;
		state->max_entries = lockstat_max_query_entries;
		state->slot_stride = lockstat_query_slot_stride();
		state->slots = p + slots;
		memset(state->slots, 0, state->slot_stride * state->num_slots);
		state->residual = (pg_atomic_uint64 *) (p + residual);
		nwords = 2 * state->num_rows * RESIDUAL_WORDS;
		for (int i = 0; i < nwords; i++)
			pg_atomic_init_u64(&state->residual[i], 0);
	}

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(LockStatQueryKey);
	info.entrysize = sizeof(LockStatQueryEntry);
	lockstat_query_hash = ShmemInitHash("pg_lockstat query hash",
										lockstat_max_query_entries,
										lockstat_max_query_entries,
										&info, HASH_ELEM | HASH_BLOBS);
}


/* add counts "from" to counts "to": sums, and the larger maximum */
void
lockstat_query_add_counts(LockStatQueryCounts *to,
						  const LockStatQueryCounts *from)
{
	to->blocks += from->blocks;
	to->wait_ns += from->wait_ns;
	to->max_wait_ns = Max(to->max_wait_ns, from->max_wait_ns);
	for (int m = 0; m < 2; m++)
	{
		to->hold_samples[m] += from->hold_samples[m];
		to->hold_ns[m] += from->hold_ns[m];
		to->max_hold_ns[m] = Max(to->max_hold_ns[m], from->max_hold_ns[m]);
	}
}

/* add counts to a tranche's residual row, with atomic operations */
void
lockstat_query_add_residual(uint64 generation, int row,
							const LockStatQueryCounts *c)
{
	pg_atomic_uint64 *words = lockstat_query_residual(generation, row);

	pg_atomic_fetch_add_u64(&words[RESIDUAL_BLOCKS], c->blocks);
	pg_atomic_fetch_add_u64(&words[RESIDUAL_WAIT_NS], c->wait_ns);
	lockstat_atomic_max_u64(&words[RESIDUAL_MAX_WAIT_NS], c->max_wait_ns);
	for (int m = 0; m < 2; m++)
	{
		if (c->hold_samples[m] == 0)
			continue;
		pg_atomic_fetch_add_u64(&words[RESIDUAL_HOLD_SAMPLES + m],
								c->hold_samples[m]);
		pg_atomic_fetch_add_u64(&words[RESIDUAL_HOLD_NS + m], c->hold_ns[m]);
		lockstat_atomic_max_u64(&words[RESIDUAL_MAX_HOLD_NS + m],
								c->max_hold_ns[m]);
	}
}

/* the counts of a residual row, read with atomic reads */
void
lockstat_query_read_residual(uint64 generation, int row,
							 LockStatQueryCounts *c)
{
	pg_atomic_uint64 *words = lockstat_query_residual(generation, row);

	c->blocks = pg_atomic_read_u64(&words[RESIDUAL_BLOCKS]);
	c->wait_ns = pg_atomic_read_u64(&words[RESIDUAL_WAIT_NS]);
	c->max_wait_ns = pg_atomic_read_u64(&words[RESIDUAL_MAX_WAIT_NS]);
	for (int m = 0; m < 2; m++)
	{
		c->hold_samples[m] = pg_atomic_read_u64(&words[RESIDUAL_HOLD_SAMPLES + m]);
		c->hold_ns[m] = pg_atomic_read_u64(&words[RESIDUAL_HOLD_NS + m]);
		c->max_hold_ns[m] = pg_atomic_read_u64(&words[RESIDUAL_MAX_HOLD_NS + m]);
	}
}

/*
 * Copy the used part of a process table as of a moment when its owner was
 * not writing it, retrying while the owner writes (lockstat_retry_wait()).
 * Errors: 55P03 when the owner has been writing for
 * LOCKSTAT_RETRY_MAX_USEC.
 */
void
lockstat_query_copy_slot(LockStatQuerySlot *to,
						 volatile LockStatQuerySlot *from)
{
	LockStatRetry retry = LOCKSTAT_RETRY_INIT;

	for (;;)
	{
		uint32		before = from->changecount;
		uint32		nused;

		pg_read_barrier();
		nused = Min(from->nused, LOCKSTAT_QUERY_SLOT_ENTRIES);
		to->nused = nused;
		to->generation = from->generation;
		memcpy(to->entries, (const LockStatQueryEntry *) from->entries,
			   sizeof(LockStatQueryEntry) * nused);
		pg_read_barrier();
		if (before % 2 == 0 && from->changecount == before)
			return;

		if (!lockstat_retry_wait(&retry))
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not read pg_lockstat per-query counters consistently"),
					 errdetail("A process has been counting a blocked LWLock call for more than %d ms.",
							   (int) (LOCKSTAT_RETRY_MAX_USEC / 1000)),
					 errhint("A process stopped by a debugger or a signal can cause this; try again once it runs.")));
	}
}

