/*-------------------------------------------------------------------------
 *
 * lockstat.h
 *	  Declarations shared by the source files of the pg_lockstat extension
 *
 * pg_lockstat keeps, for every process slot (ProcNumber) and every LWLock
 * tranche ID, the counters that the core patch's counting points in lwlock.c
 * increment (struct LWLockStatsCounters in storage/lwlockstats.h).  The
 * pieces are:
 *
 *	pg_lockstat.c		_PG_init, hooks, and the life cycle of the counter
 *						tables in each process
 *	lockstat_guc.c		the GUCs: definitions, checks, assign hooks
 *	lockstat_views.c	pg_lockstat_status() and pg_lockstat_reset()
 *	lockstat_views_lwlock.c	the SQL-callable functions behind the LWLock
 *						views: per tranche, lock, process, kind of process,
 *						and the wait and hold histograms
 *	lockstat_views_query.c	those behind pg_lwlock_query_stats and
 *						pg_lwlock_blockers
 *	lockstat_views_spin.c	those behind the spinlock views
 *	lockstat_srf.c		what those functions share (lockstat_srf.h): the
 *						one place that checks that counting works, the
 *						start of a set-returning function, shared columns
 *	lockstat_reset.c	pg_lockstat_reset()'s sequence over the counters, and
 *						the cut that keeps the LWLock views in step
 *	lockstat_query_table.c	blocked LWLock calls per query, database, role
 *						and tranche: the shared table, folds, reads
 *	lockstat_query.c	counting them from the hooks into a process's table
 *	lockstat_query_slots.c	their shared memory: process tables, residual
 *						rows
 *	lockstat_rows.c		counter rows and the tranches they count for
 *	lockstat_lwlock_sum.c	the LWLock counters summed, and the reset baseline
 *	lockstat_lwlock.c	the LWLock counter array: layout, process slots
 *	lockstat_hist.c		the wait and hold distributions, the hold table
 *	lockstat_counters.h	the LWLock counters, one line each
 *	lockstat_spin_sum.c	the spin-wait counters per call site summed over
 *						processes, and the reset's baselines
 *	lockstat_spin.c		their shared memory, the process slots' site tables
 *						and the hook that finds a call site's counters
 *	lockstat_delay.c	delay injection: its GUCs, the core's delay hook, the
 *						count of injected delays
 *	lockstat_core.c		the link to the core patch, and the GUC variables
 *	lockstat_util.c		primitives the counter modules share
 *
 * Each file calls only files below it in this list (lockstat_query.c calls
 * lockstat_hist.c's lockstat_record_wait(), not the reverse); t/070
 * checks it.  lockstat_query_internal.h, lockstat_lwlock_internal.h and
 * lockstat_spin_internal.h hold the structures that the files of one
 * module share.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef LOCKSTAT_H
#define LOCKSTAT_H

#include "datatype/timestamp.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "storage/lwlock.h"
#include "storage/lwlockstats.h"
#include "storage/s_lock.h"
#include "utils/hsearch.h"

#include "lockstat_compat.h"

/*
 * lockstat_guc.c: defines the GUCs; _PG_init calls it once.
 */
extern void lockstat_define_gucs(void);

/*
 * lockstat_core.c: the variables of our own GUCs, which lockstat_guc.c
 * defines; the spin strategy and limits are bound to the core's variables,
 * read through lockstat_core.
 */
extern bool lockstat_track;
extern int	lockstat_max_tranches;
extern int	lockstat_max_spin_sites;
extern int	lockstat_max_query_entries;
extern int	lockstat_hold_sample_every;

/*
 * pg_lockstat.hold_sample_every's default: one hold in 4999 is timed.  A prime,
 * so that a process whose acquisitions repeat in a fixed cycle (k locks per
 * transaction) has every position of the cycle sampled alike unless k is a
 * multiple of 4999.  Chosen by make bench-cost: see doc/cost.md.
 */
#define LOCKSTAT_HOLD_SAMPLE_EVERY_DEFAULT	4999

/*
 * The core patch's counting points (storage/lwlockstats.h, storage/s_lock.h),
 * each looked up by name once when the library is preloaded, so that this
 * library never links against them; on a server without the patch, or with
 * another version of it, stand-ins whose variables have no effect, and
 * lockstat_inactive_reason says why (it is NULL while counting is possible).
 */
typedef struct LockStatCoreLink
{
	int			version;		/* LWLockStatsVersion, or 0 if inactive */

	/* spin strategy and limits (s_lock.h) */
	int		   *spin_strategy;
	int		   *spin_min_spins_per_delay;
	int		   *spin_max_spins_per_delay;
	int		   *spin_min_delay_usec;
	int		   *spin_max_delay_usec;
	int		   *spin_backoff_max_pauses;

	/* LWLock counting points (lwlockstats.h) */
	LWLockStatsCounters **my_lwlock_stats;
	int		   *overflow_tranche;
	bool	   *main_array_rows;
	lwlock_stats_attach_hook_type *attach_hook;
	lwlock_stats_wait_hook_type *wait_hook;
	lwlock_stats_wake_hook_type *wake_hook;
	uint32	   *hold_every;		/* read only: set it with set_hold_every */
	void		(*set_hold_every) (uint32 every);
	lwlock_stats_hold_hook_type *hold_hook;
	/* the delay point; NULL if the server's core patch has none */
	lwlock_stats_delay_hook_type *delay_hook;

	/* spin-wait counting points (s_lock.h) */
	spin_stats_site_hook_type *spin_site_hook;
} LockStatCoreLink;

extern const LockStatCoreLink *lockstat_core;
extern const char *lockstat_inactive_reason;
extern void lockstat_link_core(void);

/*
 * lockstat_util.c: the primitives shared by the counter modules.  A reader
 * that copies an owner's table retries while the owner writes it: it spins
 * for LOCKSTAT_RETRY_FAST_TRIES waits, then sleeps, and gives up after
 * LOCKSTAT_RETRY_MAX_USEC (2 s) of sleeps (lockstat_retry_wait()).
 */
#define LOCKSTAT_RETRY_FAST_TRIES	1000
#define LOCKSTAT_RETRY_MAX_USEC		INT64CONST(2000000)

typedef struct LockStatRetry
{
	int			tries;			/* waits so far */
	instr_time	start;			/* first sleep, or zero before it */
} LockStatRetry;

#define LOCKSTAT_RETRY_INIT		{0}

/*
 * A reader of counters that other processes fold or move (the totals of
 * exited processes, the shared per-query table) tries this many times
 * without holding off the folds, and then once holding them off; see the
 * locking rules of lockstat_lwlock_sum.c and lockstat_query_table.c.
 */
#define LOCKSTAT_OPTIMISTIC_READS	3

extern int	lockstat_process_slots(void);
extern void lockstat_atomic_max_u64(pg_atomic_uint64 *max, uint64 value);
extern void lockstat_pause(int tries);
extern bool lockstat_retry_wait(LockStatRetry *retry);
extern Size lockstat_layout_part(Size *size, Size bytes);
extern Size lockstat_layout_request(Size size);
extern char *lockstat_layout_init(const char *name, Size size, bool *found);

/*
 * The hint of every message about a missing or incompatible core patch; it
 * names the series of the server's major (patches/pg15, patches/pg18).
 */
#define LOCKSTAT_CORE_PATCH_HINT \
	"Apply the patch series in patches/pg" PG_MAJORVERSION " of the same pg_lockstat release to the PostgreSQL source, rebuild and reinstall the server, or remove pg_lockstat from \"shared_preload_libraries\"."

/* longest file or function name kept for a spin wait's call site, with NUL */
#define LOCKSTAT_SITE_NAME_LEN		64
#define LOCKSTAT_MAX_SPIN_SITES		256

/*
 * Upper bounds of the spin limits.  Delays stay far below INT_MAX / 2,
 * which perform_spin_delay()'s growth of the delay needs; 10 s is already
 * longer than any sensible spin sleep.
 */
/*
 * Rows of the counter table: one per tranche ID below max_tranches, the
 * overflow row (index max_tranches), then one per lock of the fixed part of
 * the main LWLock array (NUM_FIXED_LWLOCKS).  Row numbers are stored in a
 * uint16 (LWLock.stats_row), which bounds max_tranches.
 */
#define LOCKSTAT_MAX_TRANCHES		(PG_UINT16_MAX - NUM_FIXED_LWLOCKS)

#define LOCKSTAT_MAX_SPINS			1000000
#define LOCKSTAT_MAX_DELAY_US		10000000
#define LOCKSTAT_MAX_BACKOFF_PAUSES	65536
#define LOCKSTAT_MAX_QUERY_ENTRIES	1000000


/*
 * What pg_lockstat's hold hook counts for one kind of process and counter
 * row: sampled holds and their hold time in ns, indexed 0 for LW_EXCLUSIVE
 * and 1 for LW_SHARED.  Kept in a shared table of atomic counters per kind
 * and row, not per process (lockstat_record_hold()); this is a copy of one
 * entry, as the readers take it.
 */
typedef struct LockStatHoldRow
{
	uint64		samples[2];
	uint64		hold_ns[2];
} LockStatHoldRow;

/*
 * The counters of one row (a tranche, the overflow row or a lock of the fixed
 * main array), one per line of lockstat_counters.h, in its order.
 */
typedef enum LockStatCounter
{
#define LOCKSTAT_LWLOCK_COUNTER(symbol, column, unit, descr, sum, export) \
	LOCKSTAT_##symbol,
#include "lockstat_counters.h"
#undef LOCKSTAT_LWLOCK_COUNTER
	LOCKSTAT_NUM_COUNTERS
} LockStatCounter;

/*
 * The hold counters are the last lines of lockstat_counters.h, from this
 * one on.  They are kept per kind of process, not per process, so
 * pg_lwlock_backend_stats shows them as NULL.
 */
#define LOCKSTAT_FIRST_HOLD_COUNTER		LOCKSTAT_SH_HOLD_SAMPLES

/* how a counter is shown: the unit column of lockstat_counters.h */
typedef enum LockStatUnit
{
	LOCKSTAT_UNIT_COUNT,		/* a count, as bigint */
	LOCKSTAT_UNIT_NS_AS_MS,		/* nanoseconds, as float8 milliseconds */
	LOCKSTAT_UNIT_S_LOCK_COUNT, /* a count of s_lock()'s, NULL if not kept */
} LockStatUnit;

/*
 * One row's counters, summed over processes (and minus the baseline taken
 * at the last reset), or of one process; indexed by LockStatCounter.  Every
 * counter only grows, so that sums, differences and baselines go counter
 * by counter.
 */
typedef struct LockStatTrancheTotals
{
	uint64		counts[LOCKSTAT_NUM_COUNTERS];
} LockStatTrancheTotals;

/*
 * Buckets of the distributions of blocked LWLock calls and of spin waits:
 * the core's spin_wait_bucket() (storage/s_lock.h), [0, 1) us, then
 * [2^(b-1), 2^b) us for b = 1 .. 22, and 2^22 us (4.2 s) or more.
 */
#define LOCKSTAT_WAIT_BUCKETS	SPIN_WAIT_BUCKETS

/* the distributions kept per counter row, in these buckets */
typedef enum LockStatHist
{
	LOCKSTAT_HIST_WAIT,			/* waits of blocked calls */
	LOCKSTAT_HIST_HOLD_EX,		/* sampled exclusive holds */
	LOCKSTAT_HIST_HOLD_SH,		/* sampled shared holds */
	LOCKSTAT_NUM_HISTS
} LockStatHist;

/*
 * Kinds of process, by which pg_lwlock_backend_type_stats and the per-query
 * counts tell processes apart, as pg_stat_io does by backend_type: a
 * BackendType, or LOCKSTAT_KIND_PARALLEL_WORKER for a parallel worker (which
 * is a B_BG_WORKER).  lockstat_kind_name() gives the name that
 * pg_stat_activity.backend_type shows for it.
 */
#define LOCKSTAT_KIND_PARALLEL_WORKER	LOCKSTAT_NUM_BACKEND_TYPES
#define LOCKSTAT_NUM_KINDS				(LOCKSTAT_NUM_BACKEND_TYPES + 1)

extern int	lockstat_kind_of(BackendType backend_type, const char *bgw_type);
extern const char *lockstat_kind_name(int kind);

/*
 * The process that owns a counter slot, as pg_lwlock_backend_stats shows
 * it.
 */
typedef struct LockStatProcess
{
	int			pid;
	BackendType backend_type;	/* its MyBackendType when it attached */
	char		bgw_type[BGW_MAXLEN];	/* bgw_type if B_BG_WORKER, else "" */
} LockStatProcess;

/* lockstat_lwlock.c */
extern void lockstat_lwlock_shmem_request(void);
extern void lockstat_lwlock_shmem_startup(void);
extern bool lockstat_lwlock_shmem_ready(void);
extern bool lockstat_attach_process(void);
extern void lockstat_detach_process(void);
extern void lockstat_track_changed(void);
extern int	lockstat_num_rows(void);
extern int	lockstat_num_slots(void);

/* lockstat_delay.c */
extern void lockstat_define_delay_gucs(void);
extern void lockstat_delay_shmem_request(void);
extern void lockstat_delay_shmem_startup(void);
extern uint64 lockstat_delays_injected(void);

/* lockstat_lwlock_sum.c */
extern TimestampTz lockstat_read_totals(LockStatTrancheTotals *totals,
										 bool by_kind);
extern bool lockstat_read_process(int slot, LockStatProcess *process,
								  LockStatTrancheTotals *totals);
typedef struct LockStatLWLockCut LockStatLWLockCut;
extern LockStatLWLockCut *lockstat_lwlock_reset_begin(uint64 generation);
extern bool lockstat_lwlock_cut_rows(int slot, LockStatLWLockCut *cut,
									 uint64 *blocks, uint64 *wait_ns);
extern void lockstat_lwlock_cut_add(LockStatLWLockCut *cut);
extern TimestampTz lockstat_lwlock_reset_finish(LockStatLWLockCut *cut,
												uint64 generation);
extern TimestampTz lockstat_last_reset(void);

/* lockstat_hist.c */
extern void lockstat_record_wait(int row, uint64 wait_ns, uint64 generation);
extern void lockstat_record_hold(int row, int mode, uint64 hold_ns,
								 uint64 generation);
extern void lockstat_read_hist(LockStatHist which, uint64 *counts,
							   uint64 *max_ns);
extern uint64 lockstat_wait_bucket_lower_us(int bucket);

/* lockstat_rows.c */
extern int	lockstat_overflow_row(void);
extern int	lockstat_row_tranche(int row, int *partition);
extern int	lockstat_tranche_row(int row);
typedef enum LockStatFold
{
	LOCKSTAT_FOLD_SUM,
	LOCKSTAT_FOLD_MAX,
} LockStatFold;
extern void lockstat_fold_instance(uint64 *rows, int width, LockStatFold fold);
extern void lockstat_fold_instance_rows(LockStatTrancheTotals *totals);

/*
 * One call site of spin waits, and the kind of process that waited there,
 * as the readers sum it over processes: the key and entry of
 * lockstat_spin_read()'s hash table.  kind is -1 in a sum over all kinds.
 */
typedef struct LockStatSpinKey
{
	char		file[LOCKSTAT_SITE_NAME_LEN];
	char		func[LOCKSTAT_SITE_NAME_LEN];
	int			line;
	int			kind;			/* see lockstat_kind_of(); -1: every kind */
} LockStatSpinKey;

/*
 * A call site's counts: in one process slot's table (lockstat_spin.c), and
 * since the last reset summed over processes (lockstat_spin_sum.c).  Every
 * word before max_wait_ns is a count that only grows, so that sums,
 * differences and baselines can go word by word (LOCKSTAT_SPIN_SUM_WORDS).
 */
typedef struct LockStatSpinTotals
{
#define LOCKSTAT_SPIN_COUNTER(field, column, unit, descr, export) \
	uint64		field;
#include "lockstat_counters.h"
#undef LOCKSTAT_SPIN_COUNTER
	uint64		wait_hist[LOCKSTAT_WAIT_BUCKETS];	/* waits per duration */
	uint64		max_wait_ns;	/* longest wait, first spin to acquisition */
} LockStatSpinTotals;

#define LOCKSTAT_SPIN_SUM_WORDS \
	(offsetof(LockStatSpinTotals, max_wait_ns) / sizeof(uint64))

typedef struct LockStatSpinEntry
{
	LockStatSpinKey key;
	LockStatSpinTotals counts;
} LockStatSpinEntry;

/* lockstat_spin_sum.c */
extern HTAB *lockstat_spin_read(bool by_kind);
extern void lockstat_spin_reset(void);
extern uint64 lockstat_spin_dropped(void);

/* lockstat_spin.c */
extern void lockstat_spin_shmem_request(void);
extern void lockstat_spin_shmem_startup(void);
extern void lockstat_spin_attach(int slot);
extern void lockstat_spin_detach(void);
extern SpinWaitCounters *lockstat_spin_site(const char *file, int line,
											const char *func);

/*
 * A holder of an LWLock as a blocked call names it: the holder's running
 * query ID and kind of process (as queryid and kind of LockStatQueryKey) and
 * the mode in which it held the lock (0 for LW_EXCLUSIVE, 1 for LW_SHARED).
 * kind is LOCKSTAT_HOLDER_NONE, with queryid and mode 0, when not known.
 */
typedef struct LockStatHolder
{
	int64		queryid;
	uint16		kind;
	uint16		mode;
	uint32		pad;			/* 0: keys are compared as bytes */
} LockStatHolder;

/*
 * What blocked LWLock calls and sampled holds are counted by in
 * pg_lwlock_query_stats and pg_lwlock_blockers: the running query's ID (0 if
 * none), database and role, and the tranche's row (a tranche ID below
 * max_tranches, or the overflow row).  Calls outside any query with an ID are
 * counted per kind of process: kind is 0 when queryid is not, else the
 * process's kind (a BackendType, or LOCKSTAT_KIND_PARALLEL_WORKER).
 *
 * A blocked call is also counted by two holders.  holder, the waker: the
 * process whose release ended the wait (the core's lwlock_stats_wake_hook).
 * root: the waker too, unless the waker's own hold of the lock followed a
 * blocked call of its own on it, whose root it passes on; so every call of
 * a convoy behind one hold names that hold as its root.  Both have kind
 * LOCKSTAT_HOLDER_NONE for a sampled hold and for a call whose holder is not
 * known.  Keys are compared as bytes (HASH_BLOBS): every byte is set.
 */
typedef struct LockStatQueryKey
{
	int64		queryid;
	Oid			dbid;
	Oid			userid;
	uint16		row;
	uint16		kind;
	uint32		pad;			/* 0 */
	LockStatHolder holder;
	LockStatHolder root;
} LockStatQueryKey;

#define LOCKSTAT_HOLDER_NONE			PG_UINT16_MAX

/*
 * The counts of one key: blocked calls, their wait and the longest (ns);
 * sampled holds, their hold time and the longest (ns), indexed 0 for
 * LW_EXCLUSIVE and 1 for LW_SHARED.
 */
typedef struct LockStatQueryCounts
{
	uint64		blocks;
	uint64		wait_ns;
	uint64		max_wait_ns;
	uint64		hold_samples[2];
	uint64		hold_ns[2];
	uint64		max_hold_ns[2];
} LockStatQueryCounts;

typedef struct LockStatQueryEntry
{
	LockStatQueryKey key;
	LockStatQueryCounts counts;
} LockStatQueryEntry;

/* what pg_lockstat_status shows of the per-query counts */
typedef struct LockStatQueryStatus
{
	int64		entries;		/* entries in the shared table now */
	uint64		evicted;		/* entries evicted since start */
	uint64		unattributed;	/* calls counted in a residual row since start
								 * because a process's table was full */
} LockStatQueryStatus;

/* lockstat_query_slots.c */
extern void lockstat_query_shmem_request(void);
extern void lockstat_query_shmem_startup(void);
extern bool lockstat_query_slot_hold(int slot, uint64 *hooked_blocks,
									 uint64 *hooked_wait_ns);
extern void lockstat_query_slot_release(int slot, bool cut);

/* lockstat_query.c */
extern void lockstat_query_attach(int slot);
extern void lockstat_query_note_woken(struct LWLock *lock);
extern void lockstat_query_forget_waits(void);
extern void lockstat_query_record_wait(struct LWLock *lock, int stats_row,
									   uint64 wait_ns);
extern void lockstat_query_record_hold(int stats_row, int mode,
									   uint64 hold_ns);
extern void lockstat_query_note_waker(struct LWLock *lock,
									  struct PGPROC *waiter, int mode);

/* lockstat_query_table.c */
extern void lockstat_query_init(void);
extern void lockstat_query_detach(void);
extern HTAB *lockstat_query_read(LockStatQueryCounts *residual, bool holders);
extern uint64 lockstat_query_reset_start(void);
extern void lockstat_query_reset_finish(void);
extern void lockstat_query_status(LockStatQueryStatus *status);

/* lockstat_reset.c */
extern TimestampTz lockstat_reset(void);

#endif							/* LOCKSTAT_H */
