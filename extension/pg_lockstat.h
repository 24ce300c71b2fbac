/*-------------------------------------------------------------------------
 *
 * pg_lockstat.h
 *	  Declarations shared by the source files of the pg_lockstat extension
 *
 * pg_lockstat keeps, for every process slot (ProcNumber) and every LWLock
 * tranche ID, the counters that the core patch's counting points in lwlock.c
 * increment (struct LWLockStatsCounters in storage/lwlockstats.h).  The
 * pieces are:
 *
 *	pg_lockstat.c		_PG_init, GUCs, and the link to the core patch
 *	lockstat_shmem.c	the shared counter array, attach/detach, reset, read
 *	lockstat_views.c	the SQL-callable functions behind the views
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/pg_lockstat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef PG_LOCKSTAT_H
#define PG_LOCKSTAT_H

#include "datatype/timestamp.h"
#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "storage/lwlock.h"
#include "storage/lwlockstats.h"
#include "storage/s_lock.h"
#include "utils/hsearch.h"

/* the major version of the core patch interface this build understands */
#define LOCKSTAT_CORE_MAJOR		(LWLOCK_STATS_CORE_VERSION / 100)

/* GUC values (pg_lockstat.c) */
extern int	lockstat_spin_strategy;
extern bool lockstat_track;
extern int	lockstat_max_tranches;
extern int	lockstat_min_spins_per_delay;
extern int	lockstat_max_spins_per_delay;
extern int	lockstat_min_delay_us;
extern int	lockstat_max_delay_us;
extern int	lockstat_backoff_max_pauses;
extern int	lockstat_max_spin_sites;

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

/*
 * Addresses of the core patch's variables, looked up by name when the
 * library is preloaded (see lockstat_link_core()).  All NULL if the library
 * was not preloaded.
 */
typedef struct LockStatCore
{
	const int  *version;		/* LWLockStatsCoreVersion */
	int		   *spin_strategy;	/* spin_strategy, s_lock.c */
	LWLockStatsCounters **my_counters;	/* MyLWLockStats */
	int		   *overflow_tranche;	/* LWLockStatsOverflowTranche */
	lwlock_stats_attach_hook_type *attach_hook; /* lwlock_stats_attach_hook */
	int		   *min_spins_per_delay;	/* spin_min_spins_per_delay, s_lock.c */
	int		   *max_spins_per_delay;	/* spin_max_spins_per_delay */
	int		   *min_delay_usec; /* spin_min_delay_usec */
	int		   *max_delay_usec; /* spin_max_delay_usec */
	int		   *backoff_max_pauses; /* spin_backoff_max_pauses */
	lwlock_stats_wait_hook_type *wait_hook; /* lwlock_stats_wait_hook */
	bool	   *main_array_rows;	/* LWLockStatsMainArrayRows */
	spin_stats_site_hook_type *spin_site_hook;	/* spin_stats_site_hook */
	spin_stats_wait_hook_type *spin_wait_hook;	/* spin_stats_wait_hook */
} LockStatCore;

extern LockStatCore lockstat_core;

/*
 * One tranche's counters as read by the SQL functions: the sum over all
 * process slots, minus the baseline taken at the last reset.
 */
typedef struct LockStatTrancheTotals
{
	uint64		sh_acquires;
	uint64		ex_acquires;
	uint64		blocks;
	uint64		spin_delays;
	uint64		dequeue_self;
	uint64		wait_time_ns;
} LockStatTrancheTotals;

/*
 * Buckets of the distributions of LWLock sleep durations and of spin wait
 * durations: [0, 1) us, then [2^(b-1), 2^b) us for b = 1 .. 22, and 2^22 us
 * (4.2 s) or more.
 */
#define LOCKSTAT_WAIT_BUCKETS	24

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

/* lockstat_shmem.c */
extern void lockstat_shmem_request(void);
extern void lockstat_shmem_startup(void);
extern void lockstat_attach_process(void);
extern void lockstat_track_changed(void);
extern void lockstat_require_ready(void);
extern int	lockstat_num_rows(void);
extern int	lockstat_num_slots(void);
extern void lockstat_add_row(LockStatTrancheTotals *totals,
							 volatile LWLockStatsCounters *row);
extern TimestampTz lockstat_read_totals(LockStatTrancheTotals *totals);
extern bool lockstat_read_process(int slot, LockStatProcess *process,
								  LockStatTrancheTotals *totals);
extern TimestampTz lockstat_reset(void);
extern TimestampTz lockstat_last_reset(void);
extern void lockstat_record_wait(int row, uint64 wait_ns);
extern void lockstat_read_waits(uint64 *counts, uint64 *max_ns);
extern int	lockstat_wait_bucket(uint64 wait_ns);
extern uint64 lockstat_wait_bucket_lower_us(int bucket);
extern int	lockstat_overflow_row(void);
extern int	lockstat_row_tranche(int row, int *partition);
extern int	lockstat_tranche_row(int row);
extern void lockstat_fold_instance_rows(LockStatTrancheTotals *totals);
extern void lockstat_fold_instance_max(uint64 *max_ns);

/*
 * One call site of spin waits as the readers sum it over processes: the key
 * and entry of lockstat_spin_read()'s hash table.
 */
typedef struct LockStatSpinKey
{
	char		file[LOCKSTAT_SITE_NAME_LEN];
	char		func[LOCKSTAT_SITE_NAME_LEN];
	int			line;
} LockStatSpinKey;

/*
 * A call site's counts: in one process slot's table (lockstat_spin.c), and
 * since the last reset summed over processes.  Every word before
 * max_wait_ns is a count that only grows, so that sums, differences and
 * baselines can go word by word (LOCKSTAT_SPIN_SUM_WORDS).
 */
typedef struct LockStatSpinTotals
{
	uint64		contended;
	uint64		spins;
	uint64		delays;
	uint64		wait_time_ns;	/* slept in delays */
	uint64		tas_attempts;
	uint64		unlocked_skips;
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

/* lockstat_spin.c */
extern Size lockstat_spin_shmem_size(int num_slots);
extern void lockstat_spin_shmem_startup(int num_slots);
extern void lockstat_spin_attach(int slot);
extern void lockstat_spin_detach(void);
extern int	lockstat_spin_site(const char *file, int line, const char *func);
extern void lockstat_spin_wait(const SpinWaitStats *wait);
extern HTAB *lockstat_spin_read(bool baselines, uint64 *dropped);
extern void lockstat_spin_reset(void);
extern uint64 lockstat_spin_dropped(void);

#endif							/* PG_LOCKSTAT_H */
