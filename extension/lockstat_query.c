/*-------------------------------------------------------------------------
 *
 * lockstat_query.c
 *	  Blocked LWLock calls and sampled holds per query, database, role,
 *	  tranche and holder: the counts behind pg_lwlock_query_stats and
 *	  pg_lwlock_blockers
 *
 * The core patch calls lwlock_stats_wait_hook on the blocked path only:
 * at each wake-up, where lockstat_query_note_woken() takes note of who woke
 * the process, and once per blocked LWLock call with the call's whole wait,
 * once the call no longer holds the lock it waited for.  There
 * lockstat_query_record_wait() counts the call under the running query's ID
 * (pgstat_get_my_query_id()), MyDatabaseId, the current user and the
 * tranche's row, in a small table that the process owns, and in the wait
 * distribution of lockstat_lwlock.c (lockstat_record_wait()), in one write.
 * The key also names the call's holder: the process whose release ended
 * the wait, which noted its own query ID (or kind of process) and mode in
 * this process's slot from the core's lwlock_stats_wake_hook
 * (lockstat_query_note_waker()), before it let this process run.  The
 * core's lwlock_stats_hold_hook counts each sampled hold in the same way,
 * with no holder (lockstat_query_record_hold()).  Nothing is counted
 * anywhere else, so the uncontended path of an acquisition runs no
 * instruction of this file.
 *
 * Layout: a LockStatQueryState header; one LockStatQuerySlot per process
 * slot (ProcNumber), each a table of LOCKSTAT_QUERY_SLOT_ENTRIES entries;
 * the residual rows (RESIDUAL_WORDS atomic counters per tranche row, in two
 * sets); and a shared dynahash table of at most
 * pg_lockstat.max_query_entries entries, which processes fold their tables
 * into.  pg_lwlock_query_stats is the shared
 * table plus the tables of the process slots plus the residual rows.
 *
 * The residual row of a tranche (queryid, dbid, userid and backend_type
 * NULL in the view) holds what has no entry of its own: the calls of a
 * process whose table was full, and the entries evicted from the shared
 * table.  So every blocked call is counted exactly once, and per tranche
 * the view adds up to pg_lwlock_stats' blocks and wait_time.
 *
 * Locking rules:
 *
 * - A slot's table is written only by the process that owns the slot, with
 *	 plain stores: by the wait hook, which takes no lock and allocates
 *	 nothing, and by the fold.  Every change happens between two increments
 *	 of the slot's changecount (odd while the owner writes), as
 *	 PgBackendStatus.st_changecount, and readers copy a table until they see
 *	 the same even changecount before and after the copy.  The hook also
 *	 adds each call to the slot's hooked_blocks and hooked_wait_ns, which
 *	 only a reset reads.  The only fields others write are a reset's,
 *	 resetting and target_generation (see below), and a waker's:
 *	 waker and root, written with plain stores
 *	 only while the owner sleeps in an LWLock's wait queue, before the
 *	 waker's barrier that lets it run (so at most one waker writes them
 *	 at a time, and never while the owner reads them).
 *
 * - When the hook finds its table full, it adds the call to the tranche's
 *	 residual row of its generation with atomic operations (as the wait
 *	 distribution of lockstat_lwlock.c does), inside its write, and asks for
 *	 a fold.  The process folds at the
 *	 end of its next transaction if it can take query_lock at once
 *	 (LWLockConditionalAcquire never sleeps, so it never calls the wait
 *	 hook, and a commit never waits for it), or else at a later one, and
 *	 always when it exits (lockstat_query_detach(), from the on_shmem_exit
 *	 callback of pg_lockstat.c, after counting stopped).  Once its table is
 *	 three quarters full it asks for a fold too, so that spills stay rare.
 *
 * - The shared table, the residual rows' contents as moved by folds, and
 *	 the generation are changed only with query_lock held exclusively, and
 *	 each such change raises fold_count first, behind a write barrier: a
 *	 fold moves a process's entries from its table into the shared table
 *	 (evicting entries into the residual rows when it is full) and empties
 *	 the table; a reset (lockstat_query_reset_start()) empties the shared
 *	 table and the new generation's residual rows and raises the
 *	 generation.  The only changes without the lock are the hook's: new
 *	 counts, into the owner's table or a residual row.
 *
 * - A reader copies the shared table, the residual rows, the generation
 *	 and fold_count under query_lock held shared, then the process tables,
 *	 and reads fold_count again.  If it has not moved, no fold or reset ran
 *	 in between, so every call was counted exactly once: in a process table
 *	 or in the shared table or residual rows.  Otherwise it tries again,
 *	 and after LOCKSTAT_OPTIMISTIC_READS disturbed attempts it holds
 *	 the lock until it has copied the process tables too, so folds wait for
 *	 that one read instead of starving it.
 *
 * - A reset does not write into the process tables, which only their owners
 *	 do.  It raises the generation instead: readers skip the tables of an
 *	 older generation, and each owner empties its table when its slot's
 *	 target_generation has moved on, at its next blocked call or fold.
 *
 * - The cut of a reset (lockstat_query_cut_slot()).  pg_lwlock_stats takes
 *	 a reset's cut where the reset reads a process's counter rows for its
 *	 baseline; this file, where the process's hook starts counting in the
 *	 new generation.  The core stores a blocked call's counts in the rows a
 *	 few instructions before or after it calls the hook (LWLockAcquire
 *	 stores the block after), so a call that ends during a reset could count
 *	 after the reset in one view and before it in the other, for good
 *	 (t/055).  So the reset takes each slot's cut in one step, with the
 *	 owner held off: it sets the slot's "resetting", and with a full
 *	 barrier on both sides (Dekker's pattern) either the owner sees it when
 *	 it starts a write, and waits, or the reset sees changecount odd, and
 *	 waits.  With the owner not writing, the reset reads the owner's rows;
 *	 if their blocks and wait time add up to hooked_blocks and
 *	 hooked_wait_ns, no call of the owner is between the core's stores and
 *	 its hook, and every call so far is both in the baseline and in the old
 *	 generation.  Then the reset sets target_generation and clears
 *	 "resetting": the owner's later calls count after the reset in both.
 *	 If the sums differ, the reset lets the owner go on and tries again.
 *	 The wait distribution and the residual rows have one set for even and
 *	 one for odd generations, so that calls of processes on either side of
 *	 their cut count in their own set while the reset runs.
 *
 * - query_lock is taken with no other LWLock held (the end of a
 *	 transaction, process exit, the SQL functions), and whoever holds it
 *	 takes no other LWLock, except a reset: lockstat_reset() in
 *	 lockstat_reset.c empties the per-query counts first and holds
 *	 query_lock while it takes the cuts for its baseline (holding the exit
 *	 lock shared) and while it holds the "pg_lockstat" lock to store the
 *	 baseline and stats_reset.  Nobody takes query_lock holding
 *	 either of those, so it cannot deadlock.  So the reset's cut is the
 *	 same for both views: a reader that sees the per-query counts empty
 *	 took query_lock after the reset, and sees its stats_reset; a block of
 *	 the resetting process on query_lock or on the "pg_lockstat" lock is
 *	 counted when it releases that lock, after the reset in both (its own
 *	 cut, taken while the block was not counted anywhere yet, holds as any
 *	 other).  A process that sleeps for query_lock counts that block like
 *	 any other, when it releases query_lock, into its table, after what it
 *	 changed; the hook itself never takes it.  The hook may wait for a
 *	 reset's cut of its own slot (a few loads), never holding the LWLock it
 *	 waited for (the core calls it once that lock is released), perhaps
 *	 holding others: the reset takes no LWLock while it takes cuts, so it
 *	 never waits for them.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_query.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/parallel.h"
#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "portability/instr_time.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/backend_status.h"
#include "utils/hsearch.h"

#include "lockstat.h"

/*
 * Entries of a process's table, and how many of them make the process fold
 * its table at the end of its next transaction.  A statement that blocks
 * on a dozen tranches still fits, and 104 bytes an entry keep a slot small
 * (see doc/reference.md, "View pg_lwlock_query_stats").
 */
#define LOCKSTAT_QUERY_SLOT_ENTRIES	32
#define LOCKSTAT_QUERY_FOLD_AT		24

/* most entries evicted from the shared table at once */
#define LOCKSTAT_QUERY_EVICT_MAX	64

/*
 * how long a reset waits for a process in the middle of counting a call
 * before it takes the cut anyway; see lockstat_query_cut_slot()
 */
#define LOCKSTAT_QUERY_CUT_MAX_USEC	INT64CONST(60000000)

/*
 * the counters of a residual row, as atomic words, in the order of
 * LockStatQueryCounts
 */
enum
{
	RESIDUAL_BLOCKS,
	RESIDUAL_WAIT_NS,
	RESIDUAL_MAX_WAIT_NS,
	RESIDUAL_HOLD_SAMPLES,		/* two words: LW_EXCLUSIVE, LW_SHARED */
	RESIDUAL_HOLD_NS = RESIDUAL_HOLD_SAMPLES + 2,
	RESIDUAL_MAX_HOLD_NS = RESIDUAL_HOLD_NS + 2,
	RESIDUAL_WORDS = RESIDUAL_MAX_HOLD_NS + 2
};

/* one process slot's table; see the locking rules above */
typedef struct LockStatQuerySlot
{
	uint32		changecount;	/* odd while the owner writes */
	uint32		nused;			/* entries[0 .. nused) are in use */
	uint64		generation;		/* of the counts in entries[] */
	uint64		target_generation;	/* the generation the owner counts in from
									 * its next write: set by resets */
	uint32		resetting;		/* a reset is taking this slot's cut: the
								 * owner starts no write */
	uint64		hooked_blocks;	/* blocked calls the hook counted, and */
	uint64		hooked_wait_ns; /* their wait, since the owner attached */
	uint64		unattributed;	/* calls counted in a residual row because the
								 * table was full, since start */

	/*
	 * Who ended the owner's last sleep on an LWLock, and the root of that
	 * waker's hold (see LockStatQueryKey): written by the waker, in its
	 * lwlock_stats_wake_hook (lockstat_query_note_waker()), before it lets
	 * the owner run; read and cleared by the owner when it is woken
	 * (lockstat_query_note_woken()).  waker.kind is LOCKSTAT_HOLDER_NONE
	 * when nobody wrote since.
	 */
	LockStatHolder waker;
	LockStatHolder root;
	LockStatQueryEntry entries[LOCKSTAT_QUERY_SLOT_ENTRIES];
} LockStatQuerySlot;

typedef struct LockStatQueryState
{
	LWLock	   *lock;			/* query_lock: see the locking rules */
	uint64		fold_count;		/* raised by every fold and reset */
	uint64		evicted;		/* entries evicted since start */
	pg_atomic_uint64 generation;	/* raised by every reset */
	int			num_slots;		/* process slots (ProcNumbers) */
	int			num_rows;		/* tranche rows: max_tranches + overflow */
	int			max_entries;	/* pg_lockstat.max_query_entries */
	Size		slot_stride;	/* bytes between two slots */
	char	   *slots;			/* num_slots tables */
	pg_atomic_uint64 *residual; /* 2 * num_rows * RESIDUAL_WORDS: one set for
								 * even generations, one for odd ones */
} LockStatQueryState;

static LockStatQueryState *query_state = NULL;
static HTAB *query_hash = NULL;

/* this process's table; NULL if none */
static LockStatQuerySlot *query_my_slot = NULL;

/* did this process's table ask for a fold? */
static bool query_fold_wanted = false;

/*
 * This process's blocked calls that are not counted yet, oldest first: the
 * lock each waited for, as this process maps it, and who woke it last and
 * the root of that waker's hold, taken from the slot when it was woken
 * (lockstat_query_note_woken()).  A call that took its lock is counted when
 * it releases the lock again, so a process that holds several locks from
 * blocked calls has as many here; while the call holds the lock, a release
 * of it that wakes a waiter passes its root on (lockstat_query_note_waker()).
 * When more are pending than there is room for, the newest have no holder.
 */
#define LOCKSTAT_QUERY_PENDING_WAITS	8

static struct
{
	LWLock	   *lock;
	LockStatHolder waker;
	LockStatHolder root;
}			query_my_waits[LOCKSTAT_QUERY_PENDING_WAITS];
static int	query_my_nwaits = 0;

static void lockstat_query_xact_callback(XactEvent event, void *arg);

/* no holder known */
static inline void
lockstat_holder_clear(LockStatHolder *h)
{
	h->queryid = 0;
	h->kind = LOCKSTAT_HOLDER_NONE;
	h->mode = 0;
	h->pad = 0;
}

/*
 * The index in query_my_waits of the newest pending call on "lock", or -1
 * if there is none.
 */
static inline int
lockstat_query_my_wait(LWLock *lock)
{
	for (int i = query_my_nwaits; --i >= 0;)
		if (query_my_waits[i].lock == lock)
			return i;
	return -1;
}

static void lockstat_query_fold(bool wait);

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

static inline LockStatQuerySlot *
lockstat_query_slot(int slot)
{
	return (LockStatQuerySlot *) (query_state->slots +
								  query_state->slot_stride * slot);
}

/* the residual row "row" of the generation's set */
static inline pg_atomic_uint64 *
lockstat_query_residual(uint64 generation, int row)
{
	return &query_state->residual[((generation & 1) * query_state->num_rows +
								   row) * RESIDUAL_WORDS];
}

/*
 * Start a write of this process's table: make changecount odd.  If a reset
 * is taking this slot's cut (lockstat_query_cut_slot()), wait until it has:
 * the reset must see no write start once it has seen changecount even.
 * Together with the reset's full barrier between setting "resetting" and
 * reading changecount, this full barrier makes sure that one of the two
 * sees the other.
 */
static void
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
static void
lockstat_query_end_write(LockStatQuerySlot *slot)
{
	pg_write_barrier();
	((volatile LockStatQuerySlot *) slot)->changecount++;
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

	size = lockstat_query_layout(&slots, &residual);
	p = lockstat_layout_init("pg_lockstat query entries", size, &found);
	query_state = (LockStatQueryState *) p;
	if (!found)
	{
		int			nwords;

		query_state->lock = &(GetNamedLWLockTranche("pg_lockstat_query"))->lock;
		query_state->fold_count = 0;
		query_state->evicted = 0;
		pg_atomic_init_u64(&query_state->generation, 0);
		query_state->num_slots = lockstat_process_slots();
		query_state->num_rows = lockstat_max_tranches + 1;
		query_state->max_entries = lockstat_max_query_entries;
		query_state->slot_stride = lockstat_query_slot_stride();
		query_state->slots = p + slots;
		memset(query_state->slots, 0,
			   query_state->slot_stride * query_state->num_slots);
		query_state->residual = (pg_atomic_uint64 *) (p + residual);
		nwords = 2 * query_state->num_rows * RESIDUAL_WORDS;
		for (int i = 0; i < nwords; i++)
			pg_atomic_init_u64(&query_state->residual[i], 0);
	}

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(LockStatQueryKey);
	info.entrysize = sizeof(LockStatQueryEntry);
	query_hash = ShmemInitHash("pg_lockstat query hash",
							   lockstat_max_query_entries,
							   lockstat_max_query_entries,
							   &info, HASH_ELEM | HASH_BLOBS);
}

/*
 * At preload, in the postmaster (and in every EXEC_BACKEND child): the end
 * of each transaction is where a process folds its table when it asked to.
 */
void
lockstat_query_init(void)
{
	RegisterXactCallback(lockstat_query_xact_callback, NULL);
}

/*
 * The process with ProcNumber slot starts: take over the slot's table,
 * which the previous owner emptied when it exited, and start it in the
 * current generation.
 */
void
lockstat_query_attach(int slot)
{
	LockStatQuerySlot *s;

	if (query_state == NULL || slot < 0 || slot >= query_state->num_slots)
		return;

	s = lockstat_query_slot(slot);
	lockstat_query_begin_write(s);
	s->nused = 0;
	s->generation = s->target_generation;
	s->hooked_blocks = 0;
	s->hooked_wait_ns = 0;
	lockstat_holder_clear(&s->waker);
	lockstat_holder_clear(&s->root);
	lockstat_query_end_write(s);
	query_my_slot = s;
	query_my_nwaits = 0;
	query_fold_wanted = false;
}

/*
 * The process exits and has stopped counting (MyLWLockStats is NULL, so
 * the hook no longer runs): fold its table into the shared table, waiting
 * for query_lock if need be, and give up the slot.
 */
void
lockstat_query_detach(void)
{
	if (query_my_slot == NULL)
		return;
	lockstat_query_fold(true);
	query_my_slot = NULL;
}

/* add counts "from" to counts "to": sums, and the larger maximum */
static void
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
static void
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
static void
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
 * What this process is counted by, as waiter or as holder: the running
 * query's ID, and the kind of process when there is none (see
 * LockStatQueryKey).
 */
static inline void
lockstat_query_my_identity(int64 *queryid, uint16 *kind)
{
	*queryid = pgstat_get_my_query_id();
	if (*queryid != 0)
		*kind = 0;
	else
		*kind = IsParallelWorker() ? LOCKSTAT_KIND_PARALLEL_WORKER :
			(uint16) MyBackendType;
}

/*
 * The key of a blocked call or a sampled hold of this process, in table row
 * "row": the running query's ID, database and user; without a query ID, the
 * kind of process instead.  No holder: the caller sets it.
 */
static void
lockstat_query_my_key(LockStatQueryKey *key, int row)
{
	int			sec_context;

	memset(key, 0, sizeof(*key));
	lockstat_query_my_identity(&key->queryid, &key->kind);
	key->dbid = MyDatabaseId;
	/* GetUserId() would Assert a valid user, which processes may not have */
	GetUserIdAndSecContext(&key->userid, &sec_context);
	key->row = (uint16) row;
	lockstat_holder_clear(&key->holder);
	lockstat_holder_clear(&key->root);
}

/*
 * The generation that this process counts in, within a write of its table:
 * if a reset has moved it on, the table's counts of the older generation
 * are not shown, and are dropped.
 */
static uint64
lockstat_query_my_generation(LockStatQuerySlot *slot)
{
	uint64		generation = slot->target_generation;

	if (slot->generation != generation)
	{
		slot->nused = 0;
		slot->generation = generation;
	}
	return generation;
}

/*
 * Within a write of this process's table, in generation "generation": add
 * counts c under key, to the key's entry, or to a new one, or, if the table
 * is full, to the residual row of the key's tranche (returns true then).
 * Asks for a fold once the table is full or three quarters full.
 */
static bool
lockstat_query_count(LockStatQuerySlot *slot, uint64 generation,
					 const LockStatQueryKey *key,
					 const LockStatQueryCounts *c)
{
	uint32		nused = slot->nused;
	uint32		i;

	for (i = 0; i < nused; i++)
	{
		if (memcmp(&slot->entries[i].key, key, sizeof(*key)) == 0)
			break;
	}
	if (i < nused)
		lockstat_query_add_counts(&slot->entries[i].counts, c);
	else if (nused < LOCKSTAT_QUERY_SLOT_ENTRIES)
	{
		LockStatQueryEntry *e = &slot->entries[nused];

		e->key = *key;
		e->counts = *c;
		slot->nused = ++nused;
	}
	else
	{
		/* the table is full: no entry of its own for these counts */
		lockstat_query_add_residual(generation, key->row, c);
		query_fold_wanted = true;
		return true;
	}

	if (nused >= LOCKSTAT_QUERY_FOLD_AT)
		query_fold_wanted = true;
	return false;
}

/*
 * Count one sampled hold of an LWLock of counter row stats_row in mode
 * "mode" (0 for LW_EXCLUSIVE, 1 for LW_SHARED), which lasted hold_ns
 * nanoseconds: under the running query, database, role and the lock's
 * tranche, with no holder, and in this process's hold rows and the
 * hold-time distribution (lockstat_record_hold()), within one write of
 * this process's table, so that a reset's cut sees the sample in all or in
 * none.  Called from the core's lwlock_stats_hold_hook after the lock was
 * released, also during error recovery and at exit: no locks, no
 * allocation, no errors.
 */
void
lockstat_query_record_hold(int stats_row, int mode, uint64 hold_ns)
{
	LockStatQuerySlot *slot = query_my_slot;
	LockStatQueryKey key;
	LockStatQueryCounts c = {0};
	uint64		generation;
	int			row;

	if (slot == NULL || mode < 0 || mode > 1)
		return;
	row = lockstat_tranche_row(stats_row);
	if (row >= 0)
		lockstat_query_my_key(&key, row);
	c.hold_samples[mode] = 1;
	c.hold_ns[mode] = hold_ns;
	c.max_hold_ns[mode] = hold_ns;

	lockstat_query_begin_write(slot);
	generation = lockstat_query_my_generation(slot);
	if (row >= 0)
		(void) lockstat_query_count(slot, generation, &key, &c);
	lockstat_record_hold(stats_row, mode, hold_ns, generation);
	lockstat_query_end_write(slot);
}

/*
 * lwlock_stats_wake_hook, in the process that ends the wait of "waiter" by
 * its release of "lock", which it held in mode "mode" (0 for LW_EXCLUSIVE,
 * 1 for LW_SHARED), or by its LWLockUpdateVar(): note this process's query
 * ID (or kind) and the mode in the waiter's slot as its waker, where the
 * waiter finds them when it is woken, and as its root either this process
 * too or, if this process holds the lock from a blocked call of its own
 * that is not counted yet (see query_my_waits), that call's root.  The core
 * calls it before the barrier that lets the waiter run, with no spinlock
 * held; from LWLockRelease() once the lock is free, from LWLockUpdateVar()
 * with the lock still held.  So it does loads and plain stores only: no
 * atomic, no clock read, no lock, no call but the query ID's reader.
 */
void
lockstat_query_note_waker(LWLock *lock, PGPROC *waiter, int mode)
{
	int			slotno;
	int			mine;
	LockStatQuerySlot *s;

	if (query_state == NULL)
		return;
	slotno = lockstat_proc_number(waiter);
	if (slotno < 0 || slotno >= query_state->num_slots)
		return;
	s = lockstat_query_slot(slotno);
	lockstat_query_my_identity(&s->waker.queryid, &s->waker.kind);
	s->waker.mode = (uint16) (mode == LW_SHARED ? 1 : 0);
	s->waker.pad = 0;
	mine = lockstat_query_my_wait(lock);
	if (mine >= 0 && query_my_waits[mine].waker.kind != LOCKSTAT_HOLDER_NONE)
		s->root = query_my_waits[mine].root;
	else
		s->root = s->waker;
}

/*
 * lwlock_stats_wait_hook at a wake-up of this process's blocked call on
 * "lock", which it does not hold: take the waker and root that the waker
 * noted in this process's slot into the call's entry of query_my_waits (a
 * new one on its first wake-up), and clear them, so that a later sleep on
 * another lock, while this call is not counted yet, does not overwrite them.
 * Plain loads and stores, no locks, no allocation, no errors.
 */
void
lockstat_query_note_woken(LWLock *lock)
{
	LockStatQuerySlot *slot = query_my_slot;
	int			i;

	if (slot == NULL)
		return;

	i = lockstat_query_my_wait(lock);
	if (i < 0 && query_my_nwaits < LOCKSTAT_QUERY_PENDING_WAITS)
	{
		i = query_my_nwaits++;
		query_my_waits[i].lock = lock;
	}
	if (i >= 0)
	{
		/* the waker's stores came before it let us run; take them */
		pg_read_barrier();
		query_my_waits[i].waker = slot->waker;
		query_my_waits[i].root = slot->root;
	}
	lockstat_holder_clear(&slot->waker);
	lockstat_holder_clear(&slot->root);
}

/*
 * Forget the notes of this process's blocked calls that are not counted
 * yet: called when pg_lockstat.track changes, since a call that took its
 * lock while counting was on is not counted if counting is off at its
 * release (the core counts nothing then), and its note would otherwise
 * stay, to be taken for a later call's.  A GUC's assign hook runs with no
 * LWLock held, so no call that would be counted is pending then (if one
 * were, it would only lose its holder: its counts stay exact).
 */
void
lockstat_query_forget_waits(void)
{
	query_my_nwaits = 0;
}

/*
 * Count one blocked call that waited wait_ns nanoseconds on "lock", of
 * counter row stats_row: under the running query, database, role, the
 * lock's tranche and the holder whose release ended the wait and its root
 * (as noted when it was woken; none if nobody noted them), in the wait
 * distribution (lockstat_record_wait()), and in this process's totals of
 * hooked calls, which a reset compares with the core's counters to take its
 * cut (lockstat_query_cut_slot()).  Called from the core's
 * lwlock_stats_wait_hook once the call's block is counted, which the core
 * does once the call no longer holds the lock it waited for (after its
 * release, for a call that took it); "lock" only names the lock.  One write
 * of this process's table (or, when it is full, a residual row's atomic
 * counters); no locks, no allocation, no errors.
 */
void
lockstat_query_record_wait(LWLock *lock, int stats_row, uint64 wait_ns)
{
	LockStatQuerySlot *slot = query_my_slot;
	LockStatQueryKey key;
	LockStatQueryCounts c = {0};
	uint64		generation;
	bool		spilled = false;
	int			row;
	int			mine;

	if (slot == NULL)
		return;
	row = lockstat_tranche_row(stats_row);
	if (row >= 0)
		lockstat_query_my_key(&key, row);

	/* who woke the call last, and this call's entry goes */
	mine = lockstat_query_my_wait(lock);
	if (mine >= 0)
	{
		if (row >= 0 && query_my_waits[mine].waker.kind != LOCKSTAT_HOLDER_NONE)
		{
			key.holder = query_my_waits[mine].waker;
			key.root = query_my_waits[mine].root;
		}
		query_my_nwaits--;
		for (; mine < query_my_nwaits; mine++)
			query_my_waits[mine] = query_my_waits[mine + 1];
	}

	c.blocks = 1;
	c.wait_ns = wait_ns;
	c.max_wait_ns = wait_ns;

	lockstat_query_begin_write(slot);
	generation = lockstat_query_my_generation(slot);
	if (row >= 0)
		spilled = lockstat_query_count(slot, generation, &key, &c);
	lockstat_record_wait(stats_row, wait_ns, generation);
	slot->hooked_blocks++;
	slot->hooked_wait_ns += wait_ns;
	lockstat_query_end_write(slot);

	if (spilled)
		slot->unattributed++;
}

/*
 * does entry a rank below entry b for eviction (less waited, then less
 * sampled hold time)?
 */
static inline bool
lockstat_query_less_waited(const LockStatQueryEntry *a,
						   const LockStatQueryEntry *b)
{
	uint64		a_hold = a->counts.hold_ns[0] + a->counts.hold_ns[1];
	uint64		b_hold = b->counts.hold_ns[0] + b->counts.hold_ns[1];

	if (a->counts.wait_ns != b->counts.wait_ns)
		return a->counts.wait_ns < b->counts.wait_ns;
	if (a_hold != b_hold)
		return a_hold < b_hold;
	return a->counts.blocks < b->counts.blocks;
}

/*
 * The shared table is full: move its least-waited entries, 5% of them (at
 * least 1, at most LOCKSTAT_QUERY_EVICT_MAX), into the residual rows of
 * their tranches, so that the per-tranche totals stay the same.  Called
 * with query_lock held exclusively.  A scan of the whole table, keeping the
 * candidates in a fixed array: nothing is allocated, nothing can fail.
 */
static void
lockstat_query_evict(void)
{
	LockStatQueryEntry *victims[LOCKSTAT_QUERY_EVICT_MAX];
	int			want = Min(Max(query_state->max_entries / 20, 1),
						   LOCKSTAT_QUERY_EVICT_MAX);
	int			nvictims = 0;
	int			most = 0;		/* the most-waited of the victims */
	HASH_SEQ_STATUS seq;
	LockStatQueryEntry *e;

	hash_seq_init(&seq, query_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (nvictims < want)
		{
			victims[nvictims] = e;
			if (lockstat_query_less_waited(victims[most], e))
				most = nvictims;
			nvictims++;
		}
		else if (lockstat_query_less_waited(e, victims[most]))
		{
			victims[most] = e;
			most = 0;
			for (int v = 1; v < nvictims; v++)
			{
				if (lockstat_query_less_waited(victims[most], victims[v]))
					most = v;
			}
		}
	}

	for (int v = 0; v < nvictims; v++)
	{
		LockStatQueryEntry *victim = victims[v];

		lockstat_query_add_residual(pg_atomic_read_u64(&query_state->generation),
									victim->key.row, &victim->counts);
		hash_search(query_hash, &victim->key, HASH_REMOVE, NULL);
	}
	query_state->evicted += nvictims;
}

/*
 * Add one process-table entry to the shared table, evicting first if it is
 * full.  Called with query_lock held exclusively.
 */
static void
lockstat_query_add_shared(const LockStatQueryEntry *from)
{
	LockStatQueryEntry *to;
	bool		found;

	to = hash_search(query_hash, &from->key, HASH_FIND, NULL);
	if (to == NULL)
	{
		if (hash_get_num_entries(query_hash) >= query_state->max_entries)
			lockstat_query_evict();
		/* the table's elements were all allocated at start-up */
		to = hash_search(query_hash, &from->key, HASH_ENTER_NULL, &found);
		if (to == NULL)
		{
			lockstat_query_add_residual(pg_atomic_read_u64(&query_state->generation),
										from->key.row, &from->counts);
			return;
		}
		Assert(!found);
		memset(&to->counts, 0, sizeof(to->counts));
	}
	lockstat_query_add_counts(&to->counts, &from->counts);
}

/*
 * Move this process's table into the shared table and empty it; see the
 * locking rules.  With wait, waits for query_lock; without, gives up (and
 * keeps asking for a fold) unless it gets the lock at once.  Cannot fail.
 */
static void
lockstat_query_fold(bool wait)
{
	volatile LockStatQueryState *state = query_state;
	LockStatQuerySlot *slot = query_my_slot;
	uint64		generation;

	if (slot == NULL)
		return;

	/*
	 * If we sleep for the lock, the hook counts that block into our table
	 * now, before we read it.
	 */
	if (wait)
		LWLockAcquire(query_state->lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(query_state->lock, LW_EXCLUSIVE))
		return;
	query_fold_wanted = false;

	/* readers that copied anything before this see it moved */
	state->fold_count++;
	pg_write_barrier();

	/* no reset runs while we hold query_lock: every slot has its cut */
	generation = pg_atomic_read_u64(&query_state->generation);
	Assert(slot->target_generation == generation);
	if (slot->generation == generation)
	{
		for (uint32 i = 0; i < slot->nused; i++)
			lockstat_query_add_shared(&slot->entries[i]);
	}

	lockstat_query_begin_write(slot);
	slot->nused = 0;
	slot->generation = generation;
	lockstat_query_end_write(slot);

	LWLockRelease(query_state->lock);
}

/*
 * XactCallback: at the end of a transaction (top level, parallel worker or
 * prepared), fold this process's table if it asked for it and query_lock
 * is free.  Nothing to do otherwise, which is the rule.
 */
static void
lockstat_query_xact_callback(XactEvent event, void *arg)
{
	if (!query_fold_wanted)
		return;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			lockstat_query_fold(false);
			break;
		default:
			break;
	}
}

/*
 * Copy the used part of a process table as of a moment when its owner was
 * not writing it, retrying while the owner writes (lockstat_retry_wait()).
 * Errors: 55P03 when the owner has been writing for
 * LOCKSTAT_RETRY_MAX_USEC.
 */
static void
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

/*
 * Add an entry's counts to the entry of the same key in a reader's table;
 * without "holders", to the entry of its key with no holder, so that the
 * counts of all holders add up.
 */
static void
lockstat_query_add_local(HTAB *htab, const LockStatQueryEntry *from,
						 bool holders)
{
	LockStatQueryEntry *to;
	LockStatQueryKey key = from->key;
	bool		found;

	if (!holders)
	{
		lockstat_holder_clear(&key.holder);
		lockstat_holder_clear(&key.root);
	}
	to = hash_search(htab, &key, HASH_ENTER, &found);
	if (!found)
		memset(&to->counts, 0, sizeof(to->counts));
	lockstat_query_add_counts(&to->counts, &from->counts);
}

/*
 * The counts since the last reset: a new hash table of LockStatQueryEntry
 * in CurrentMemoryContext, one entry per key (with "holders"; else per key
 * with the holder fields cleared, see lockstat_query_add_local()), and
 * residual[num_rows], the
 * residual row of each tranche row (max_tranches + 1 rows, the overflow row
 * last).  Every blocked call since the reset is in exactly one of them; see
 * the locking rules.  Checks for interrupts.  Errors: 55000 if not counting;
 * 55P03 if a process table cannot be read consistently.
 */
HTAB *
lockstat_query_read(LockStatQueryCounts *residual, bool holders)
{
	volatile LockStatQueryState *state;
	LockStatQuerySlot *copy;
	HASHCTL		ctl;

	state = query_state;
	copy = palloc(sizeof(LockStatQuerySlot));

	ctl.keysize = sizeof(LockStatQueryKey);
	ctl.entrysize = sizeof(LockStatQueryEntry);
	ctl.hcxt = CurrentMemoryContext;

	for (int attempt = 1;; attempt++)
	{
		bool		hold = (attempt > LOCKSTAT_OPTIMISTIC_READS);
		HTAB	   *htab;
		HASH_SEQ_STATUS seq;
		LockStatQueryEntry *e;
		uint64		before;
		uint64		generation;

		htab = hash_create("pg_lockstat query entries", 256, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

		LWLockAcquire(query_state->lock, LW_SHARED);
		before = state->fold_count;
		generation = pg_atomic_read_u64(&query_state->generation);
		hash_seq_init(&seq, query_hash);
		while ((e = hash_seq_search(&seq)) != NULL)
			lockstat_query_add_local(htab, e, holders);
		for (int row = 0; row < query_state->num_rows; row++)
			lockstat_query_read_residual(generation, row, &residual[row]);
		if (!hold)
			LWLockRelease(query_state->lock);

		for (int s = 0; s < query_state->num_slots; s++)
		{
			/* no interrupt check while the lock holds them off */
			if (!hold)
				CHECK_FOR_INTERRUPTS();
			lockstat_query_copy_slot(copy, lockstat_query_slot(s));
			if (copy->generation != generation)
				continue;
			for (uint32 i = 0; i < copy->nused; i++)
				lockstat_query_add_local(htab, &copy->entries[i], holders);
		}

		pg_read_barrier();
		if (hold)
		{
			/* no fold or reset can run while we hold the lock */
			Assert(state->fold_count == before);
			LWLockRelease(query_state->lock);
			pfree(copy);
			return htab;
		}
		if (state->fold_count == before)
		{
			pfree(copy);
			return htab;
		}

		/* a process folded its table meanwhile: a moment's work, again */
		hash_destroy(htab);
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Start the per-query counts again from zero: start a new generation, whose
 * residual rows are emptied here, and empty the shared table.  The process
 * tables move to the new generation one by one, as lockstat_reset() takes
 * each slot's cut (lockstat_query_cut_slot()), and readers skip the tables
 * of an older one.  Part of pg_lockstat_reset(): called by lockstat_reset()
 * before it takes the cuts, and returns with query_lock held exclusively,
 * until lockstat_query_reset_finish(), so that no reader or fold sees a
 * reset half done and no reader sees the empty counts before the new
 * stats_reset.  Returns the new generation.  Cannot fail.
 */
uint64
lockstat_query_reset_start(void)
{
	volatile LockStatQueryState *state = query_state;
	HASH_SEQ_STATUS seq;
	LockStatQueryEntry *e;
	uint64		generation;

	LWLockAcquire(query_state->lock, LW_EXCLUSIVE);
	state->fold_count++;
	pg_write_barrier();

	/*
	 * No process counts in the new generation's residual rows before its cut,
	 * and every process took its cut of the generation before, so the set of
	 * two generations ago is free to empty.
	 */
	generation = pg_atomic_read_u64(&query_state->generation) + 1;
	for (int row = 0; row < query_state->num_rows; row++)
	{
		pg_atomic_uint64 *words = lockstat_query_residual(generation, row);

		for (int w = 0; w < RESIDUAL_WORDS; w++)
			pg_atomic_write_u64(&words[w], 0);
	}
	pg_atomic_write_u64(&query_state->generation, generation);

	hash_seq_init(&seq, query_hash);
	while ((e = hash_seq_search(&seq)) != NULL)
		hash_search(query_hash, &e->key, HASH_REMOVE, NULL);

	return generation;
}

/*
 * Part of a reset, between lockstat_query_reset_start() and
 * lockstat_query_reset_finish(): take the cut of process slot "slot".
 * read_rows(slot, arg, &blocks, &wait_ns) reads the counters of the slot's
 * owner (into arg) and returns false if the slot has none; else it sets
 * blocks and wait_ns to the owner's blocks and wait time summed over its
 * rows, which the owner's hook also counts, as hooked_blocks and
 * hooked_wait_ns.  The cut is a moment when the owner writes nothing and
 * both sums equal the hook's: then each of its blocked calls is either in
 * the counters read and counted by its hook before the reset (in the old
 * generation, which readers no longer show), or in neither and counted
 * after the reset in both views.  The core stores a blocked call's counts
 * a few instructions before or after it calls the hook, so when the sums
 * differ, the owner is in between: we let it go on and read again.  From
 * the cut on, the owner counts in the new generation.  While it waits for
 * an owner, the resetting session shows wait event "Extension".
 *
 * A process stopped inside those few instructions (by a debugger, say)
 * would stop the reset, and with it every process exit (the caller holds
 * exit_lock): after LOCKSTAT_QUERY_CUT_MAX_USEC the cut is taken as it is,
 * with a WARNING that the two views may disagree by that process's call.
 * Cannot fail.
 */
void
lockstat_query_cut_slot(int slot, lockstat_cut_reader read_rows, void *arg)
{
	volatile LockStatQuerySlot *s = lockstat_query_slot(slot);
	uint64		generation = pg_atomic_read_u64(&query_state->generation);
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	for (int tries = 0;; tries++)
	{
		bool		cut = false;
		bool		live;
		uint64		blocks = 0;
		uint64		wait_ns = 0;
		instr_time	now;

		/* from here on the owner starts no write (lockstat_query_begin_write) */
		s->resetting = 1;
		pg_memory_barrier();
		if (s->changecount % 2 == 0)
		{
			pg_read_barrier();
			live = read_rows(slot, arg, &blocks, &wait_ns);
			pg_read_barrier();
			cut = !live || (blocks == s->hooked_blocks &&
							wait_ns == s->hooked_wait_ns);
		}

		INSTR_TIME_SET_CURRENT(now);
		INSTR_TIME_SUBTRACT(now, start);
		if (!cut && INSTR_TIME_GET_MICROSEC(now) >= LOCKSTAT_QUERY_CUT_MAX_USEC)
		{
			live = read_rows(slot, arg, &blocks, &wait_ns);
			ereport(WARNING,
					(errmsg("pg_lockstat could not take an exact cut of process number %d for the reset", slot),
					 errdetail("The process has been in the middle of counting a blocked LWLock call for more than %d s.",
							   (int) (LOCKSTAT_QUERY_CUT_MAX_USEC / 1000000)),
					 errhint("pg_lwlock_query_stats and pg_lwlock_stats may differ by that call until the next reset.")));
			cut = true;
		}

		if (cut)
		{
			s->target_generation = generation;
			pg_memory_barrier();
			s->resetting = 0;
			if (tries > 0)
				pgstat_report_wait_end();
			return;
		}

		/* the owner is writing, or between the core's counts and the hook */
		s->resetting = 0;
		pg_memory_barrier();
		if (tries == 0)
			pgstat_report_wait_start(PG_WAIT_EXTENSION);
		lockstat_pause(tries);
	}
}

/* the reset is complete: let readers and folds in again */
void
lockstat_query_reset_finish(void)
{
	LWLockRelease(query_state->lock);
}

/*
 * The fill level of the shared table and the counts of what had no entry
 * of its own, for pg_lockstat_status.  Errors: 55000 if not counting.
 */
void
lockstat_query_status(LockStatQueryStatus *status)
{
	LWLockAcquire(query_state->lock, LW_SHARED);
	status->entries = hash_get_num_entries(query_hash);
	status->evicted = query_state->evicted;
	LWLockRelease(query_state->lock);

	status->unattributed = 0;
	for (int s = 0; s < query_state->num_slots; s++)
		status->unattributed +=
			((volatile LockStatQuerySlot *) lockstat_query_slot(s))->unattributed;
}
