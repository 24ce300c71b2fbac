/*-------------------------------------------------------------------------
 *
 * lockstat_lwlock.c
 *	  The shared counter array of pg_lockstat: sizing, attaching, reading
 *	  and resetting
 *
 * Layout: a LockStatSharedState header, then the reset baseline and the
 * counts of exited processes (one LockStatTrancheTotals per kind of process
 * and row each, kind by kind: entry kind * num_rows + row), then
 * one block of rows for each process slot, then the two halves of the wait
 * histogram and the longest waits (atomic counters, one set per row each),
 * then the two halves of the hold table (atomic counters per kind of
 * process and row), then one LockStatSlotOwner for each process slot.
 *
 * Rows: row t < max_tranches counts tranche ID t; row max_tranches (the
 * overflow row) collects every higher tranche ID; the NUM_FIXED_LWLOCKS rows
 * after it count one lock each of the fixed main LWLock array (individual
 * locks and partitions), as the core patch assigns them when the extension
 * sets LWLockStatsMainArrayRows.  Readers that report per tranche add those
 * rows to their tranche's (lockstat_fold_instance_rows).  There are
 * MaxBackends + NUM_AUXILIARY_PROCS process slots, indexed by ProcNumber,
 * the same range as the PGPROCs that can run.
 *
 * A slot's rows hold the counts of the process that owns the slot now, since
 * it attached (pg_lwlock_backend_stats): a process zeroes them before it
 * counts, and when it exits it adds them to the shared totals of exited
 * processes of its kind ("folds" them), so the counts of exited processes
 * are kept.  pg_lwlock_backend_type_stats is, kind by kind, those totals
 * plus the rows of every live slot of that kind, minus the kind's baseline
 * of the last reset; pg_lwlock_stats is the sum of the kinds.
 *
 * Locking rules:
 *
 * - A process's rows are written only by that process: by the core patch's
 *	 counting points, with plain adds and no lock, while it counts; and by
 *	 lockstat_attach_process(), which zeroes them before it counts.  Counts
 *	 only grow while a process owns the slot.  This relies on aligned 64-bit
 *	 loads and stores being single-copy atomic
 *	 (PG_HAVE_8BYTE_SINGLE_COPY_ATOMICITY).
 *
 * - A slot is live while its owner record's pid is not 0.  Its owner sets
 *	 pid after zeroing the rows and setting its kind, behind a write
 *	 barrier; a reader reads pid, then a read barrier, then the kind and the
 *	 rows, and adds the rows of live slots only, to their kind.  So a reader
 *	 that sees a new owner sees its rows zeroed and its kind, and one that
 *	 sees no owner adds nothing.  The kind does not change while the owner
 *	 lives, and its fold goes to the same kind.
 *
 * - The totals of exited processes are written only by an exiting process,
 *	 after it stopped counting (MyLWLockStats = NULL), holding exit_lock
 *	 exclusively (folds of several processes exclude each other).  It makes
 *	 exit_count odd, adds its rows to the totals, sets its slot's pid to 0,
 *	 and makes exit_count even again, with write barriers in between: the
 *	 move of its counts from its slot to the totals happens inside one odd
 *	 period of exit_count.  Its rows stay as they are until the next owner
 *	 zeroes them; nobody adds them again since the slot is not live.
 *
 * - A reader (lockstat_sum_all) copies the totals of exited processes and
 *	 sums the live slots between two reads of exit_count, and keeps the
 *	 result only if both are the same even value: then no process exited in
 *	 between, so every process's counts were added exactly once, from its
 *	 slot or from the totals.  A process that starts meanwhile is added from
 *	 zero or not at all.  After LOCKSTAT_OPTIMISTIC_READS disturbed attempts
 *	 the reader holds exit_lock shared for one more, so that exiting
 *	 processes cannot starve it; they wait for that one sum (their exit is
 *	 delayed by a few milliseconds at the most, at 1000 slots).  Without
 *	 that fallback no lock is held while summing, so a reader cannot delay
 *	 a process's start or exit, and every long loop checks for interrupts.
 *	 Each process's counts only grow, and move to the totals whole, so a
 *	 sum read later is never smaller than a sum read earlier.
 *
 * - The baseline, stats_reset and wait_half are protected by state->lock,
 *	 held only to copy them (shared) or to update them (exclusive), never
 *	 while summing, so that readers cannot starve a reset.  (A reset holds
 *	 the per-query lock of lockstat_query.c around its sum and state->lock,
 *	 and exit_lock shared while it sums, process by process at each one's
 *	 cut.)  A reader copies the baseline first and sums afterwards; since the baseline is itself a
 *	 sum taken earlier, sum minus baseline is never negative.  A reset sums
 *	 first, as a reader, and then raises each baseline entry to its sum,
 *	 never lowering it, so that concurrent resets cannot move the baseline
 *	 back.
 *
 * - The distributions of blocked calls by wait time (lockstat_record_wait)
 *	 and of sampled holds by hold time, one per mode (lockstat_record_hold),
 *	 are shared tables of atomic counters per row and bucket, plus an
 *	 atomic maximum per row: blocked calls and samples are rare and slow
 *	 next to an atomic add.  It has two halves, for even and odd per-query
 *	 generations: a process adds to the half of the generation it counts
 *	 in, which a reset moves on at the process's cut, together with the
 *	 baseline and the per-query counts (see lockstat_reset() and the
 *	 locking rules of lockstat_query.c).  A reset empties the new half
 *	 before any process counts in it, and readers read the half of the last
 *	 complete reset (wait_half, set with the baseline).
 *
 * - Sampled holds and their hold time are not kept per process but in a
 *	 shared hold table of atomic counters per kind of process and row
 *	 (LOCKSTAT_HOLD_WORDS each), in two halves like the distributions and
 *	 moved on with them: a process adds to the half of the generation it
 *	 counts in, inside a write of its per-query table (see
 *	 lockstat_query.c), so a reset's cut of the process sees each sample in
 *	 the hold table, in the distribution and in the per-query counts of the
 *	 same generation.  A reset empties the new half before any process
 *	 counts in it; readers read the half of the last complete reset, before
 *	 they sum the rows, so that no row shows more samples than
 *	 acquisitions.  Sampled holds are rare and slow next to an atomic add;
 *	 one process's holds are not told apart from others of its kind
 *	 (pg_lwlock_backend_stats shows them as NULL).
 *
 * - A process stops counting (MyLWLockStats = NULL) in an on_shmem_exit
 *	 callback registered after ProcKill's, so it runs first, with the
 *	 process's PGPROC (which LWLockAcquire needs): the slot is given up and
 *	 no longer written when the next process is given the same ProcNumber.
 *
 * - A slot's owner record (pid, type) is written only by the process that
 *	 owns the slot, when it attaches (together with zeroing the rows) and
 *	 when it exits (pid = 0), never while it counts.  Like
 *	 PgBackendStatus.st_changecount, the record's changecount is odd while
 *	 it is being written; pg_lwlock_backend_stats copies the record and the
 *	 slot's rows between two reads of changecount and tries again unless
 *	 both are the same even value, so it never takes the rows of one process
 *	 with the pid of another.  No lock is taken, and retries check for
 *	 interrupts.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_lwlock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "port/pg_bitutils.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "lockstat.h"

#ifndef PG_HAVE_8BYTE_SINGLE_COPY_ATOMICITY
#error "pg_lockstat needs single-copy atomic 64-bit loads and stores"
#endif

typedef struct LockStatSharedState
{
	LWLock	   *lock;			/* protects baseline and stats_reset */
	LWLock	   *exit_lock;		/* held by exiting processes; see above */
	uint64		exit_count;		/* odd while a process folds its rows */
	int			num_slots;		/* process slots (ProcNumbers) */
	int			num_rows;		/* rows per slot */
	Size		slot_stride;	/* bytes between two process slots */
	TimestampTz stats_reset;	/* time of the last reset, or of start-up */
	int			wait_half;		/* the half of wait_hist readers read */
	pg_atomic_uint64 *wait_hist;	/* 2 halves, one for even and one for odd
									 * per-query generations, each of
									 * LOCKSTAT_NUM_HISTS distributions of
									 * num_rows * LOCKSTAT_WAIT_BUCKETS
									 * counts, then num_rows maxima */
	LockStatTrancheTotals *baseline;	/* LOCKSTAT_NUM_KINDS * num_rows */
	LockStatTrancheTotals *exited;	/* LOCKSTAT_NUM_KINDS * num_rows: folded
									 * by exited processes */
	pg_atomic_uint64 *holds;	/* 2 halves like wait_hist's, each of
								 * LOCKSTAT_NUM_KINDS * num_rows entries of
								 * LOCKSTAT_HOLD_WORDS counts */
	char	   *slots;			/* num_slots * slot_stride bytes */
	struct LockStatSlotOwner *owners;	/* num_slots records */
} LockStatSharedState;

/*
 * Who counts into a process slot.  See the locking rules at the top.
 */
typedef struct LockStatSlotOwner
{
	uint32		changecount;	/* odd while the owner writes the record */
	int			pid;			/* the owning process; 0 if none */
	int			kind;			/* its kind (lockstat_kind_of()), set before
								 * pid */
	BackendType backend_type;	/* its MyBackendType */
	char		bgw_type[BGW_MAXLEN];	/* a background worker's bgw_type */
} LockStatSlotOwner;

/* Links to shared memory state; set in every process by shmem startup */
static LockStatSharedState *lockstat_state = NULL;

/* This process's rows, whether or not tracking is on; NULL if none */
static LWLockStatsCounters *lockstat_my_rows = NULL;

/* This process's kind (lockstat_kind_of()), set when it attaches */
static int	lockstat_my_kind = -1;

/*
 * The counts of one entry of the shared hold table, in the order of
 * LockStatHoldRow: samples[2], then hold_ns[2].
 */
#define LOCKSTAT_HOLD_WORDS		4

/* what a slot's rows add to the hold counters, and the reverse: nothing */
static const LockStatHoldRow lockstat_no_holds = {{0}};
static const LWLockStatsCounters lockstat_no_rows = {0};

static Size lockstat_slot_stride(int num_rows);
static LWLockStatsCounters *lockstat_slot_rows(int slot);
static void lockstat_begin_owner_write(LockStatSlotOwner *owner);
static void lockstat_end_owner_write(LockStatSlotOwner *owner);
static void lockstat_sum_all(LockStatTrancheTotals *totals);
static void lockstat_subtract_totals(LockStatTrancheTotals *totals,
									 const LockStatTrancheTotals *base);
static void lockstat_add_row(LockStatTrancheTotals *totals,
							 const volatile LWLockStatsCounters *row,
							 const volatile LockStatHoldRow *hold);

/* bytes per process slot: the core's rows */
static Size
lockstat_slot_stride(int num_rows)
{
	/* a cache line of its own per process: no false sharing of counters */
	return CACHELINEALIGN(mul_size(sizeof(LWLockStatsCounters), num_rows));
}

/* where the parts of the shared counter array are: offsets from its start */
typedef struct LockStatLWLockLayout
{
	Size		baseline;		/* LockStatTrancheTotals[kinds * num_rows] */
	Size		exited;			/* LockStatTrancheTotals[kinds * num_rows] */
	Size		slots;			/* num_slots * slot_stride bytes */
	Size		wait_hist;		/* 2 halves of LOCKSTAT_NUM_HISTS * num_rows *
								 * (buckets + max) */
	Size		holds;			/* 2 halves of kinds * num_rows *
								 * LOCKSTAT_HOLD_WORDS */
	Size		owners;			/* LockStatSlotOwner[num_slots] */
	Size		size;			/* bytes in all, the header included */
} LockStatLWLockLayout;

/* the layout of the shared counter array after its header */
static void
lockstat_lwlock_layout(int num_slots, int num_rows, LockStatLWLockLayout *l)
{
	Size		size = 0;
	Size		totals = mul_size(sizeof(LockStatTrancheTotals),
								  mul_size(LOCKSTAT_NUM_KINDS, num_rows));

	(void) lockstat_layout_part(&size, sizeof(LockStatSharedState));
	l->baseline = lockstat_layout_part(&size, totals);
	l->exited = lockstat_layout_part(&size, totals);
	l->slots = lockstat_layout_part(&size,
									mul_size(lockstat_slot_stride(num_rows),
											 num_slots));
	l->wait_hist = lockstat_layout_part(&size,
										mul_size(sizeof(pg_atomic_uint64),
												 mul_size(2 * LOCKSTAT_NUM_HISTS * num_rows,
														  LOCKSTAT_WAIT_BUCKETS + 1)));
	l->holds = lockstat_layout_part(&size,
									mul_size(sizeof(pg_atomic_uint64),
											 mul_size(2 * LOCKSTAT_NUM_KINDS * LOCKSTAT_HOLD_WORDS,
													  num_rows)));
	l->owners = lockstat_layout_part(&size,
									 mul_size(sizeof(LockStatSlotOwner),
											  num_slots));
	l->size = size;
}

/*
 * shmem_request_hook: MaxBackends is known here, unlike in _PG_init.
 */
void
lockstat_lwlock_shmem_request(void)
{
	LockStatLWLockLayout layout;

	lockstat_lwlock_layout(lockstat_process_slots(),
						   lockstat_max_tranches + 1 + NUM_FIXED_LWLOCKS,
						   &layout);
	RequestAddinShmemSpace(lockstat_layout_request(layout.size));
	/* state->lock and state->exit_lock */
	RequestNamedLWLockTranche("pg_lockstat", 2);
}

/*
 * Create or attach to the shared counter array; called with
 * AddinShmemInitLock held by our shmem_startup_hook, in every process.
 */
void
lockstat_lwlock_shmem_startup(void)
{
	bool		found;
	int			num_slots = lockstat_process_slots();
	int			num_rows = lockstat_max_tranches + 1 + NUM_FIXED_LWLOCKS;
	LockStatLWLockLayout layout;
	char	   *p;

	lockstat_lwlock_layout(num_slots, num_rows, &layout);
	p = lockstat_layout_init("pg_lockstat", layout.size, &found);
	lockstat_state = (LockStatSharedState *) p;

	if (!found)
	{
		LWLockPadded *locks = GetNamedLWLockTranche("pg_lockstat");

		memset(p, 0, layout.size);
		lockstat_state->lock = &locks[0].lock;
		lockstat_state->exit_lock = &locks[1].lock;
		lockstat_state->exit_count = 0;
		lockstat_state->num_slots = num_slots;
		lockstat_state->num_rows = num_rows;
		lockstat_state->slot_stride = lockstat_slot_stride(num_rows);
		lockstat_state->stats_reset = GetCurrentTimestamp();
		lockstat_state->baseline = (LockStatTrancheTotals *) (p + layout.baseline);
		lockstat_state->exited = (LockStatTrancheTotals *) (p + layout.exited);
		lockstat_state->slots = p + layout.slots;
		lockstat_state->wait_half = 0;
		lockstat_state->wait_hist = (pg_atomic_uint64 *) (p + layout.wait_hist);
		for (int i = 0; i < 2 * LOCKSTAT_NUM_HISTS * num_rows *
			 (LOCKSTAT_WAIT_BUCKETS + 1); i++)
			pg_atomic_init_u64(&lockstat_state->wait_hist[i], 0);
		lockstat_state->holds = (pg_atomic_uint64 *) (p + layout.holds);
		for (int i = 0; i < 2 * LOCKSTAT_NUM_KINDS * LOCKSTAT_HOLD_WORDS *
			 num_rows; i++)
			pg_atomic_init_u64(&lockstat_state->holds[i], 0);
		lockstat_state->owners = (LockStatSlotOwner *) (p + layout.owners);
	}

	/* _PG_init chose the overflow row from the same setting */
	Assert(*lockstat_core->overflow_tranche ==
		   lockstat_state->num_rows - 1 - NUM_FIXED_LWLOCKS);
}

/* is the shared counter array there (preloaded, patched server)? */
bool
lockstat_lwlock_shmem_ready(void)
{
	return lockstat_state != NULL;
}

/* words of one distribution: num_rows * buckets counts, then num_rows maxima */
#define LOCKSTAT_HIST_WORDS(num_rows)	((num_rows) * (LOCKSTAT_WAIT_BUCKETS + 1))

/* the half of the distributions for a per-query generation */
static inline pg_atomic_uint64 *
lockstat_wait_half(uint64 generation)
{
	return lockstat_state->wait_hist + (generation & 1) *
		LOCKSTAT_NUM_HISTS * LOCKSTAT_HIST_WORDS(lockstat_state->num_rows);
}

/* distribution "hist" in the half of a per-query generation */
static inline pg_atomic_uint64 *
lockstat_hist(uint64 generation, LockStatHist hist)
{
	return lockstat_wait_half(generation) +
		hist * LOCKSTAT_HIST_WORDS(lockstat_state->num_rows);
}

/* words of one half of the hold table */
#define LOCKSTAT_HOLDS_HALF_WORDS(num_rows) \
	(LOCKSTAT_NUM_KINDS * (num_rows) * LOCKSTAT_HOLD_WORDS)

/*
 * The hold counts of kind "kind" and row "row" in the half of the hold table
 * for a per-query generation: LOCKSTAT_HOLD_WORDS counters.
 */
static inline pg_atomic_uint64 *
lockstat_holds(uint64 generation, int kind, int row)
{
	int			num_rows = lockstat_state->num_rows;

	return lockstat_state->holds +
		(generation & 1) * LOCKSTAT_HOLDS_HALF_WORDS(num_rows) +
		((Size) kind * num_rows + row) * LOCKSTAT_HOLD_WORDS;
}

/* the rows of process slot "slot" */
static LWLockStatsCounters *
lockstat_slot_rows(int slot)
{
	return (LWLockStatsCounters *)
		(lockstat_state->slots + lockstat_state->slot_stride * slot);
}

/*
 * The owner record's write protocol, as PGSTAT_BEGIN_WRITE_ACTIVITY and
 * PGSTAT_END_WRITE_ACTIVITY: changecount is odd while the record changes.
 * Nothing in between may fail, so an error there is a PANIC rather than a
 * record left odd for good.
 */
static void
lockstat_begin_owner_write(LockStatSlotOwner *owner)
{
	START_CRIT_SECTION();
	owner->changecount++;
	pg_write_barrier();
}

static void
lockstat_end_owner_write(LockStatSlotOwner *owner)
{
	pg_write_barrier();
	owner->changecount++;
	Assert((owner->changecount & 1) == 0);
	END_CRIT_SECTION();
}

/*
 * This process (with its PGPROC and ProcNumber) takes the slot of its
 * ProcNumber: see lockstat_attach_hook() in pg_lockstat.c, which calls it
 * once per process.  Returns false, and counts nothing, if the slot does not
 * exist, which cannot happen as the slots cover every PGPROC that can run.
 *
 * Zeroes the slot's rows, which still hold the counts of the slot's previous
 * owner (already in the totals of exited processes), and records this
 * process as the slot's owner.  MyBackendType and MyBgworkerEntry are set
 * before InitProcess() in every kind of process.  Counting starts with
 * lockstat_track_changed().
 */
bool
lockstat_attach_process(void)
{
	LockStatSlotOwner *owner;
	LWLockStatsCounters *rows;
	int			slot = lockstat_my_proc_number();

	if (slot < 0 || slot >= lockstat_state->num_slots)
	{
		elog(WARNING, "pg_lockstat: process number %d out of range, not counting",
			 slot);
		return false;
	}

	/*
	 * The slot's previous owner has folded its rows and given up the slot
	 * (see lockstat_detach_process) before ProcKill handed its ProcNumber on,
	 * and we do not count yet: the rows are ours, and no reader adds them
	 * while pid is 0.
	 */
	owner = &lockstat_state->owners[slot];
	rows = lockstat_slot_rows(slot);
	Assert(owner->pid == 0);
	lockstat_begin_owner_write(owner);
	memset(rows, 0, sizeof(LWLockStatsCounters) * lockstat_state->num_rows);
	owner->backend_type = MyBackendType;
	if (MyBackendType == B_BG_WORKER && MyBgworkerEntry != NULL)
		strlcpy(owner->bgw_type, MyBgworkerEntry->bgw_type, BGW_MAXLEN);
	else
		owner->bgw_type[0] = '\0';
	owner->kind = lockstat_kind_of(owner->backend_type, owner->bgw_type);
	/* a reader that sees our pid sees the rows zeroed and our kind */
	pg_write_barrier();
	owner->pid = MyProcPid;
	lockstat_end_owner_write(owner);

	/* a reader that sees our first count also sees the record complete */
	pg_write_barrier();
	lockstat_my_kind = owner->kind;
	lockstat_my_rows = rows;
	return true;
}

/*
 * The process exits, and has stopped counting (MyLWLockStats is NULL): add
 * its rows to the totals of exited processes and give up the slot, in one
 * odd period of exit_count (see the locking rules at the top).
 */
void
lockstat_detach_process(void)
{
	volatile LockStatSharedState *state = lockstat_state;
	LockStatSlotOwner *owner;
	LockStatTrancheTotals *exited;
	LWLockStatsCounters *rows = lockstat_my_rows;

	if (rows == NULL)
		return;
	lockstat_my_rows = NULL;
	owner = &lockstat_state->owners[lockstat_my_proc_number()];
	/* the kind that readers added our live rows to */
	exited = lockstat_state->exited + owner->kind * lockstat_state->num_rows;

	LWLockAcquire(lockstat_state->exit_lock, LW_EXCLUSIVE);
	state->exit_count++;
	pg_write_barrier();

	for (int row = 0; row < lockstat_state->num_rows; row++)
		lockstat_add_row(&exited[row], &rows[row], &lockstat_no_holds);

	lockstat_begin_owner_write(owner);
	owner->pid = 0;
	lockstat_end_owner_write(owner);

	pg_write_barrier();
	state->exit_count++;
	LWLockRelease(lockstat_state->exit_lock);
}

/*
 * Point the core's MyLWLockStats at this process's rows, or at nothing,
 * according to pg_lockstat.track; spin waits follow the same setting.  The
 * hold-time countdown starts again, so that it counts the acquisitions
 * counted from here on (the core advances it only at its checks, which it
 * spaces by what it knew of MyLWLockStats before).
 */
void
lockstat_track_changed(void)
{
	*lockstat_core->my_lwlock_stats = lockstat_track ? lockstat_my_rows : NULL;
	lockstat_core->set_hold_every(*lockstat_core->hold_every);
	/* lockstat_spin_site() reads pg_lockstat.track itself */
}

/*
 * Number of counter rows per process: pg_lockstat.max_tranches plus the
 * overflow row.  Errors: 55000 if not preloaded.
 */
int
lockstat_num_rows(void)
{
	return lockstat_state->num_rows;
}

/*
 * Number of process slots (MaxBackends + NUM_AUXILIARY_PROCS).  Errors:
 * 55000 if not preloaded.
 */
int
lockstat_num_slots(void)
{
	return lockstat_state->num_slots;
}

/*
 * The kind of the live owner of process slot "slot", or -1 if the slot has
 * no owner; after it, the caller may read the slot's rows (see the locking
 * rules at the top).
 */
static int
lockstat_live_kind(int slot)
{
	volatile LockStatSlotOwner *owner = &lockstat_state->owners[slot];
	int			kind;

	if (owner->pid == 0)
		return -1;
	pg_read_barrier();
	kind = owner->kind;
	Assert(kind >= 0 && kind < LOCKSTAT_NUM_KINDS);
	return kind;
}

/*
 * Add the rows of every live process slot to totals[LOCKSTAT_NUM_KINDS *
 * num_rows], each to its owner's kind.  Lock-free with respect to the
 * writers; the caller checks that no process exited meanwhile.  Checks for
 * interrupts (a no-op while exit_lock is held).
 */
static void
lockstat_add_live_rows(LockStatTrancheTotals *totals)
{
	int			num_rows = lockstat_state->num_rows;

	for (int slot = 0; slot < lockstat_state->num_slots; slot++)
	{
		volatile LWLockStatsCounters *rows = lockstat_slot_rows(slot);
		LockStatTrancheTotals *to;
		int			kind;

		CHECK_FOR_INTERRUPTS();

		kind = lockstat_live_kind(slot);
		if (kind < 0)
			continue;
		to = totals + kind * num_rows;
		for (int row = 0; row < num_rows; row++)
			lockstat_add_row(&to[row], &rows[row], &lockstat_no_holds);
	}
}

/*
 * Fill totals[LOCKSTAT_NUM_KINDS * num_rows] with every count since
 * start-up, kind by kind: the totals of exited processes plus the rows of
 * the live slots, each process's counts exactly once (see the locking rules
 * at the top).  Must not be called with state->lock held.  Checks for
 * interrupts.
 */
static void
lockstat_sum_all(LockStatTrancheTotals *totals)
{
	volatile LockStatSharedState *state = lockstat_state;
	Size		size = sizeof(LockStatTrancheTotals) * LOCKSTAT_NUM_KINDS *
		lockstat_state->num_rows;

	for (int attempt = 1;; attempt++)
	{
		bool		locked = (attempt > LOCKSTAT_OPTIMISTIC_READS);
		uint64		before;

		if (locked)
			LWLockAcquire(lockstat_state->exit_lock, LW_SHARED);
		before = state->exit_count;
		pg_read_barrier();
		if ((before & 1) == 0)
		{
			memcpy(totals, lockstat_state->exited, size);
			lockstat_add_live_rows(totals);
		}
		pg_read_barrier();
		if (locked)
		{
			/* no process can exit while we hold exit_lock */
			Assert(state->exit_count == before && (before & 1) == 0);
			LWLockRelease(lockstat_state->exit_lock);
			return;
		}
		if (state->exit_count == before && (before & 1) == 0)
			return;
		/* a process exited meanwhile: a moment's work, try again */
		CHECK_FOR_INTERRUPTS();
	}
}

/*
 * Add counters of one row to *totals: one process's, as the core patch
 * writes them (row), or the hold counts of one kind of process, as our hold
 * hook adds them to the shared hold table (hold), the other being
 * lockstat_no_rows or lockstat_no_holds: each counter gets the "sum" of its
 * line in lockstat_counters.h.  This is the only place that knows the
 * layout of LWLockStatsCounters on the reading side.
 */
static void
lockstat_add_row(LockStatTrancheTotals *totals,
				 const volatile LWLockStatsCounters *row,
				 const volatile LockStatHoldRow *hold)
{
	/*
	 * The elements that two sums use are loaded once.  An acquisition after
	 * sleeping is counted by a single store that also counts its block, so
	 * blocks never run ahead of acquisitions here, and after the subtraction
	 * of a baseline computed the same way, neither.
	 */
	uint64	   *c = totals->counts;
	uint64		ex_slept = row->acquires[false][LW_EXCLUSIVE];
	uint64		sh_slept = row->acquires[false][LW_SHARED];

#define LOCKSTAT_LWLOCK_COUNTER(symbol, column, unit, sum, export) \
	c[LOCKSTAT_##symbol] += (sum);
#include "lockstat_counters.h"
#undef LOCKSTAT_LWLOCK_COUNTER
}

/*
 * Subtract an earlier reading of the same counters, base, from *totals.
 * Counters only grow, so the difference is the count in between; being
 * unsigned, it stays right even if a counter wrapped around 2^64 meanwhile.
 */
static void
lockstat_subtract_totals(LockStatTrancheTotals *totals,
						 const LockStatTrancheTotals *base)
{
	for (int c = 0; c < LOCKSTAT_NUM_COUNTERS; c++)
		totals->counts[c] -= base->counts[c];
}

/*
 * Read the counts of the process that owns process slot "slot", since it
 * attached (its rows): fills *process and totals[num_rows], and returns
 * true; returns false if no live process owns the slot.  Not affected by
 * pg_lockstat_reset().  Lock-free; see the locking rules at the top.
 * Checks for interrupts.  Errors: 55000 if not preloaded.
 */
bool
lockstat_read_process(int slot, LockStatProcess *process,
					  LockStatTrancheTotals *totals)
{
	volatile LockStatSlotOwner *owner;
	volatile LWLockStatsCounters *rows;
	int			num_rows;

	Assert(slot >= 0 && slot < lockstat_state->num_slots);

	num_rows = lockstat_state->num_rows;
	owner = &lockstat_state->owners[slot];
	rows = lockstat_slot_rows(slot);

	for (;;)
	{
		uint32		before;

		CHECK_FOR_INTERRUPTS();

		before = owner->changecount;
		pg_read_barrier();

		if ((before & 1) == 0)
		{
			process->pid = owner->pid;
			process->backend_type = owner->backend_type;
			memcpy(process->bgw_type, (const char *) owner->bgw_type,
				   BGW_MAXLEN);
			memset(totals, 0, sizeof(LockStatTrancheTotals) * num_rows);
			if (process->pid != 0)
			{
				for (int row = 0; row < num_rows; row++)
					lockstat_add_row(&totals[row], &rows[row],
									 &lockstat_no_holds);
			}

			pg_read_barrier();
			if (owner->changecount == before)
				break;
		}

		/* the owner is attaching or exiting right now: a moment's work */
		pg_spin_delay();
	}
	process->bgw_type[BGW_MAXLEN - 1] = '\0';

	/*
	 * Skip a slot without an owner, and one whose owner has exited since we
	 * read it: ProcKill clears the PGPROC's pid after our detach callback
	 * ran, and a new process there has another pid.
	 */
	return process->pid != 0 &&
		((volatile PGPROC *) GetPGProcByNumber(slot))->pid == process->pid;
}

/*
 * Fill totals with the counts since the last reset: with by_kind, kind by
 * kind, totals[LOCKSTAT_NUM_KINDS * num_rows] (entry kind * num_rows + row);
 * else summed over the kinds, totals[num_rows].  Returns the time of that
 * reset.  Errors: 55000 if not preloaded.
 */
TimestampTz
lockstat_read_totals(LockStatTrancheTotals *totals, bool by_kind)
{
	int			num_rows = lockstat_state->num_rows;
	int			entries = LOCKSTAT_NUM_KINDS * num_rows;
	LockStatTrancheTotals *baseline;
	LockStatTrancheTotals *kinds;
	LockStatHoldRow *holds;
	TimestampTz stats_reset;
	int			half;

	baseline = palloc(sizeof(LockStatTrancheTotals) * entries);
	holds = palloc(sizeof(LockStatHoldRow) * entries);
	kinds = by_kind ? totals : palloc(sizeof(LockStatTrancheTotals) * entries);

	/* the baseline first: it must not be newer than the sums */
	LWLockAcquire(lockstat_state->lock, LW_SHARED);
	memcpy(baseline, lockstat_state->baseline,
		   sizeof(LockStatTrancheTotals) * entries);
	stats_reset = lockstat_state->stats_reset;
	half = lockstat_state->wait_half;
	LWLockRelease(lockstat_state->lock);

	/*
	 * The hold counts since that reset (its half of the hold table) before
	 * the acquisitions, so that no row shows more samples than acquisitions.
	 * The baseline has none: the slots' rows have no hold counts.
	 */
	for (int e = 0; e < entries; e++)
	{
		pg_atomic_uint64 *h = lockstat_holds(half, e / num_rows, e % num_rows);

		for (int m = 0; m < 2; m++)
		{
			holds[e].samples[m] = pg_atomic_read_u64(&h[m]);
			holds[e].hold_ns[m] = pg_atomic_read_u64(&h[2 + m]);
		}
	}

	lockstat_sum_all(kinds);

	for (int e = 0; e < entries; e++)
	{
		lockstat_subtract_totals(&kinds[e], &baseline[e]);
		lockstat_add_row(&kinds[e], &lockstat_no_rows, &holds[e]);
	}

	if (!by_kind)
	{
		memcpy(totals, kinds, sizeof(LockStatTrancheTotals) * num_rows);
		for (int e = num_rows; e < entries; e++)
			for (int c = 0; c < LOCKSTAT_NUM_COUNTERS; c++)
				totals[e % num_rows].counts[c] += kinds[e].counts[c];
		pfree(kinds);
	}

	pfree(holds);
	pfree(baseline);
	return stats_reset;
}

/* raise each counter of *base to that of *totals; a baseline never moves back */
static void
lockstat_raise_totals(LockStatTrancheTotals *base,
					  const LockStatTrancheTotals *totals)
{
	for (int c = 0; c < LOCKSTAT_NUM_COUNTERS; c++)
		base->counts[c] = Max(base->counts[c], totals->counts[c]);
}

/*
 * The baseline that a reset is taking: the rows of exited processes plus,
 * slot by slot, each live process's rows at its cut.
 */
struct LockStatLWLockCut
{
	LockStatTrancheTotals *totals;	/* the new baseline so far, by kind */
	LockStatTrancheTotals *one; /* the last slot's rows read */
	int			one_kind;		/* and its owner's kind, or -1 */
};

/*
 * The first step of pg_lockstat_reset() on the LWLock counters (see
 * lockstat_reset.c), once the per-query counts have started generation
 * "generation": empty that generation's half of the distributions and of
 * the hold table (no process counts in them before its cut), and start a
 * cut with the rows of exited processes.  Takes exit_lock, which keeps
 * every slot's owner from folding its rows into those until
 * lockstat_lwlock_reset_finish(); exiting processes wait for the per-query
 * lock first anyway.
 */
LockStatLWLockCut *
lockstat_lwlock_reset_begin(uint64 generation)
{
	int			num_rows = lockstat_state->num_rows;
	LockStatLWLockCut *cut = palloc(sizeof(LockStatLWLockCut));
	pg_atomic_uint64 *hist = lockstat_wait_half(generation);
	pg_atomic_uint64 *holds = lockstat_holds(generation, 0, 0);

	cut->totals = palloc(sizeof(LockStatTrancheTotals) *
						 LOCKSTAT_NUM_KINDS * num_rows);
	cut->one = palloc(sizeof(LockStatTrancheTotals) * num_rows);
	cut->one_kind = -1;
	for (int i = 0; i < LOCKSTAT_NUM_HISTS * LOCKSTAT_HIST_WORDS(num_rows); i++)
		pg_atomic_write_u64(&hist[i], 0);
	for (int i = 0; i < LOCKSTAT_HOLDS_HALF_WORDS(num_rows); i++)
		pg_atomic_write_u64(&holds[i], 0);

	LWLockAcquire(lockstat_state->exit_lock, LW_SHARED);
	memcpy(cut->totals, lockstat_state->exited,
		   sizeof(LockStatTrancheTotals) * LOCKSTAT_NUM_KINDS * num_rows);
	return cut;
}

/*
 * For lockstat_query_cut_slot(): read the rows of process slot "slot" into
 * the cut at arg (zero for a slot without an owner), with the sums of their
 * blocks and wait time.  It may read a slot more than once; the last read
 * counts (lockstat_lwlock_cut_add()).  Called with exit_lock held, so no
 * owner folds its rows meanwhile.
 */
bool
lockstat_lwlock_cut_rows(int slot, void *arg, uint64 *blocks, uint64 *wait_ns)
{
	LockStatLWLockCut *cut = (LockStatLWLockCut *) arg;
	LockStatTrancheTotals *one = cut->one;
	volatile LWLockStatsCounters *rows = lockstat_slot_rows(slot);
	int			num_rows = lockstat_state->num_rows;

	memset(one, 0, sizeof(LockStatTrancheTotals) * num_rows);
	*blocks = 0;
	*wait_ns = 0;
	cut->one_kind = lockstat_live_kind(slot);
	if (cut->one_kind < 0)
		return false;
	for (int row = 0; row < num_rows; row++)
	{
		lockstat_add_row(&one[row], &rows[row], &lockstat_no_holds);
		*blocks += one[row].counts[LOCKSTAT_BLOCKS];
		*wait_ns += one[row].counts[LOCKSTAT_WAIT_TIME_NS];
	}
	return true;
}

/*
 * Add the slot that lockstat_lwlock_cut_rows() read last to the cut, to its
 * owner's kind.
 */
void
lockstat_lwlock_cut_add(LockStatLWLockCut *cut)
{
	int			num_rows = lockstat_state->num_rows;
	LockStatTrancheTotals *to;

	if (cut->one_kind < 0)
		return;
	to = cut->totals + cut->one_kind * num_rows;
	for (int row = 0; row < num_rows; row++)
		for (int c = 0; c < LOCKSTAT_NUM_COUNTERS; c++)
			to[row].counts[c] += cut->one[row].counts[c];
}

/*
 * The last step of a reset on the LWLock counters, once every slot's cut is
 * in: make the cut the new baseline, let readers read the distribution's
 * half of generation "generation", and move stats_reset, which it returns.
 * Releases exit_lock and frees the cut.
 */
TimestampTz
lockstat_lwlock_reset_finish(LockStatLWLockCut *cut, uint64 generation)
{
	TimestampTz now;

	LWLockRelease(lockstat_state->exit_lock);

	LWLockAcquire(lockstat_state->lock, LW_EXCLUSIVE);
	for (int e = 0; e < LOCKSTAT_NUM_KINDS * lockstat_state->num_rows; e++)
		lockstat_raise_totals(&lockstat_state->baseline[e], &cut->totals[e]);
	lockstat_state->wait_half = (int) (generation & 1);

	/* stats_reset only moves forward, even if the clock steps back */
	now = GetCurrentTimestamp();
	if (now > lockstat_state->stats_reset)
		lockstat_state->stats_reset = now;
	now = lockstat_state->stats_reset;
	LWLockRelease(lockstat_state->lock);

	pfree(cut->one);
	pfree(cut->totals);
	pfree(cut);
	return now;
}

/*
 * Time of the last reset, or of shared memory initialisation.  Errors:
 * 55000 if not preloaded.
 */
TimestampTz
lockstat_last_reset(void)
{
	TimestampTz result;

	LWLockAcquire(lockstat_state->lock, LW_SHARED);
	result = lockstat_state->stats_reset;
	LWLockRelease(lockstat_state->lock);
	return result;
}

/*
 * Lower bound of a bucket in microseconds.
 */
uint64
lockstat_wait_bucket_lower_us(int bucket)
{
	return bucket == 0 ? 0 : UINT64CONST(1) << (bucket - 1);
}

/* add a duration of ns nanoseconds to row "row" of a distribution */
static void
lockstat_hist_add(pg_atomic_uint64 *hist, int row, uint64 ns)
{
	pg_atomic_fetch_add_u64(&hist[row * LOCKSTAT_WAIT_BUCKETS +
								  spin_wait_bucket(ns)], 1);
	lockstat_atomic_max_u64(&hist[lockstat_state->num_rows *
								  LOCKSTAT_WAIT_BUCKETS + row], ns);
}

/*
 * Count one blocked call, which waited wait_ns nanoseconds in all, on an
 * LWLock of counter row row, in the half of the distribution of the
 * per-query generation that the calling process counts in (see
 * lockstat_reset()).  Called from lockstat_query_record_wait() on the
 * blocked path: no locks, no allocation, no errors.
 */
void
lockstat_record_wait(int row, uint64 wait_ns, uint64 generation)
{
	if (lockstat_state == NULL || row < 0 || row >= lockstat_state->num_rows)
		return;

	lockstat_hist_add(lockstat_hist(generation, LOCKSTAT_HIST_WAIT), row,
					  wait_ns);
}

/*
 * Count one sampled hold of an LWLock of counter row "row" in mode "mode"
 * (LW_EXCLUSIVE or LW_SHARED), which lasted hold_ns nanoseconds: in the
 * hold table under this process's kind, and in the distribution of that
 * mode, both in the half of the per-query generation that the process
 * counts in.  Called from
 * lockstat_query_record_hold(), inside a write of the process's per-query
 * table, after the core released the lock: no locks, no allocation, no
 * errors.  Nothing is counted once the process has given up its slot
 * (lockstat_detach_process()), as a hold that ProcKill's
 * LWLockReleaseAll() ends can be.
 */
void
lockstat_record_hold(int row, int mode, uint64 hold_ns, uint64 generation)
{
	pg_atomic_uint64 *holds;
	int			m = (mode == LW_SHARED);

	if (lockstat_my_rows == NULL || row < 0 || row >= lockstat_state->num_rows)
		return;

	holds = lockstat_holds(generation, lockstat_my_kind, row);
	pg_atomic_fetch_add_u64(&holds[m], 1);
	pg_atomic_fetch_add_u64(&holds[2 + m], hold_ns);

	lockstat_hist_add(lockstat_hist(generation, m == 0 ? LOCKSTAT_HIST_HOLD_EX :
									LOCKSTAT_HIST_HOLD_SH), row, hold_ns);
}

/*
 * Copy distribution "which" since the last reset: counts[num_rows *
 * LOCKSTAT_WAIT_BUCKETS] and max_ns[num_rows] (either may be NULL): the
 * waits of blocked calls (LOCKSTAT_HIST_WAIT) or the sampled holds of one
 * mode.  Errors: 55000 if not preloaded.
 */
void
lockstat_read_hist(LockStatHist which, uint64 *counts, uint64 *max_ns)
{
	int			num_rows;
	pg_atomic_uint64 *hist;

	num_rows = lockstat_state->num_rows;
	hist = lockstat_hist(((volatile LockStatSharedState *) lockstat_state)->wait_half,
						 which);

	if (counts)
	{
		for (int i = 0; i < num_rows * LOCKSTAT_WAIT_BUCKETS; i++)
			counts[i] = pg_atomic_read_u64(&hist[i]);
	}
	if (max_ns)
	{
		for (int row = 0; row < num_rows; row++)
			max_ns[row] = pg_atomic_read_u64(&hist[num_rows * LOCKSTAT_WAIT_BUCKETS + row]);
	}
}

/*
 * Row of the overflow tranche: tranche IDs at or above max_tranches.  Rows
 * after it belong to the locks of the fixed main LWLock array.  Errors:
 * 55000 if not preloaded.
 */
int
lockstat_overflow_row(void)
{
	return lockstat_state->num_rows - 1 - NUM_FIXED_LWLOCKS;
}

/*
 * The tranche ID that row counts for, or -1 for the overflow row.  For the
 * row of a lock of the fixed main array, *partition is set to the lock's
 * partition number within BufferMapping, LockManager or
 * PredicateLockManager, or to -1 for an individual LWLock; otherwise it is
 * set to -1.  Errors: 55000 if not preloaded.
 */
int
lockstat_row_tranche(int row, int *partition)
{
	int			overflow = lockstat_overflow_row();
	int			index;

	*partition = -1;
	if (row < overflow)
		return row;
	if (row == overflow)
		return -1;

	index = row - overflow - 1;
	Assert(index < NUM_FIXED_LWLOCKS);
	if (index >= PREDICATELOCK_MANAGER_LWLOCK_OFFSET)
		*partition = index - PREDICATELOCK_MANAGER_LWLOCK_OFFSET;
	else if (index >= LOCK_MANAGER_LWLOCK_OFFSET)
		*partition = index - LOCK_MANAGER_LWLOCK_OFFSET;
	else if (index >= BUFFER_MAPPING_LWLOCK_OFFSET)
		*partition = index - BUFFER_MAPPING_LWLOCK_OFFSET;

	/* the tranche the postmaster gave the lock; it never changes */
	return MainLWLockArray[index].lock.tranche;
}

/*
 * The row that reports of row "row" per tranche go to: the row itself for a
 * tranche or the overflow row, and for the row of a lock of the fixed main
 * array, its tranche's row (or the overflow row); -1 for a row out of
 * range.  Cheap enough for the blocked path (lockstat_query.c's hook).
 */
int
lockstat_tranche_row(int row)
{
	int			overflow = lockstat_overflow_row();
	int			tranche;

	if (row <= overflow)
		return row;
	if (row > overflow + NUM_FIXED_LWLOCKS)
		return -1;
	/* the tranche the postmaster gave the lock; it never changes */
	tranche = MainLWLockArray[row - overflow - 1].lock.tranche;
	return Min(tranche, overflow);
}

/*
 * Fold per-row values into their tranches' rows: rows[] holds "width"
 * values per row, lockstat_num_rows() rows; each row of a lock of the fixed
 * main array is added to (or, with LOCKSTAT_FOLD_MAX, raises) the values
 * of its tranche's row, and is cleared.
 */
void
lockstat_fold_instance(uint64 *rows, int width, LockStatFold fold)
{
	int			num_rows = lockstat_num_rows();

	for (int row = lockstat_overflow_row() + 1; row < num_rows; row++)
	{
		uint64	   *to = &rows[lockstat_tranche_row(row) * width];
		uint64	   *from = &rows[row * width];

		for (int w = 0; w < width; w++)
		{
			if (fold == LOCKSTAT_FOLD_SUM)
				to[w] += from[w];
			else
				to[w] = Max(to[w], from[w]);
			from[w] = 0;
		}
	}
}

/*
 * Make totals[] (lockstat_num_rows() entries) per tranche: the rows of the
 * fixed main array's locks are added to their tranches' rows and cleared.
 */
void
lockstat_fold_instance_rows(LockStatTrancheTotals *totals)
{
	StaticAssertStmt(sizeof(LockStatTrancheTotals) ==
					 sizeof(uint64) * LOCKSTAT_NUM_COUNTERS,
					 "LockStatTrancheTotals must be an array of counters");
	lockstat_fold_instance((uint64 *) totals, LOCKSTAT_NUM_COUNTERS,
						   LOCKSTAT_FOLD_SUM);
}
