/*-------------------------------------------------------------------------
 *
 * lockstat_lwlock.c
 *	  The shared counter array of pg_lockstat: its layout, and the process
 *	  slots that the core patch counts into, taken and given up
 *
 * Layout: a LockStatSharedState header, then the reset baseline and the
 * counts of exited processes (one LockStatTrancheTotals per kind of process
 * and row each, kind by kind: entry kind * num_rows + row), then
 * one block of rows for each process slot, then the two halves of the wait
 * histogram and the longest waits (atomic counters, one set per row each),
 * then the two halves of the hold table (atomic counters per kind of
 * process and row), then one LockStatSlotOwner for each process slot.
 * lockstat_lwlock_sum.c reads the rows and keeps the baseline;
 * lockstat_hist.c keeps the distributions and the hold table; their shared
 * structures are in lockstat_lwlock_internal.h.
 *
 * Rows: row t < max_tranches counts tranche ID t; row max_tranches (the
 * overflow row) collects every higher tranche ID; the NUM_FIXED_LWLOCKS rows
 * after it count one lock each of the fixed main LWLock array (individual
 * locks and partitions), as the core patch assigns them when the extension
 * sets LWLockStatsMainArrayRows.  Readers that report per tranche add those
 * rows to their tranche's (lockstat_rows.c).  There are
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
 * Locking rules (how readers sum, and the baseline: lockstat_lwlock_sum.c;
 * the reset: lockstat_reset.c):
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
 *	 with the pid of another (lockstat_read_process()).
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
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "lockstat.h"
#include "lockstat_lwlock_internal.h"

#ifndef PG_HAVE_8BYTE_SINGLE_COPY_ATOMICITY
#error "pg_lockstat needs single-copy atomic 64-bit loads and stores"
#endif

LockStatSharedState *lockstat_state = NULL;
LWLockStatsCounters *lockstat_my_rows = NULL;
int			lockstat_my_kind = -1;
const LockStatHoldRow lockstat_no_holds = {{0}};

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
 * Add counters of one row to *totals: one process's, as the core patch
 * writes them (row), or the hold counts of one kind of process, as our hold
 * hook adds them to the shared hold table (hold), the other being
 * lockstat_no_rows or lockstat_no_holds: each counter gets the "sum" of its
 * line in lockstat_counters.h.  This is the only place that knows the
 * layout of LWLockStatsCounters on the reading side.
 */
void
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

#define LOCKSTAT_LWLOCK_COUNTER(symbol, column, unit, descr, sum, export) \
	c[LOCKSTAT_##symbol] += (sum);
#include "lockstat_counters.h"
#undef LOCKSTAT_LWLOCK_COUNTER
}
