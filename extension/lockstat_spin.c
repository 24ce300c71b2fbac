/*-------------------------------------------------------------------------
 *
 * lockstat_spin.c
 *	  Spin waits per call site: shared memory, the process slots' site
 *	  tables, and the hook that finds a call site's counters
 *
 * The core patch asks lockstat_spin_site(), its spin_stats_site_hook, for
 * the counters of a contended spin wait's file, line and function when the
 * wait first spins (perform_spin_delay() in s_lock.c), keeps the wait's
 * counts itself, and adds them, whole, to those counters when the wait ends
 * (finish_spin_delay()), with the lock held.  No code of ours runs under the
 * spinlock: the core adds the wait with plain stores (see SpinWaitCounters in
 * storage/s_lock.h).
 *
 * Layout: the reset baseline per call site name and kind of process
 * (LockStatSpinEntry, up to LOCKSTAT_SPIN_BASELINES(max_spin_sites) of
 * them), then one block per process slot (ProcNumber), each holding
 * pg_lockstat.max_spin_sites entries: the site's names and the kind of
 * process of the owner that registered it (LockStatSpinSite), its counters
 * (LockStatSpinCounters, the core's SpinWaitCounters and a few fields of
 * ours) and the entry's contended count at the last reset, which its
 * longest wait since the reset needs.
 *
 * Locking rules:
 *
 * - A slot's entries and counters are written only by the process that owns
 *	 the slot, with plain stores and no lock, as the LWLock counters (see
 *	 lockstat_lwlock.c).  An entry's names and line are written once, before
 *	 nsites is raised past it behind a write barrier; readers read nsites,
 *	 then a read barrier, then only entries below it.  Slots are handed to
 *	 the next process with the same ProcNumber without being cleared: the
 *	 new owner forgets the earlier owner's string addresses and finds its
 *	 entries again by their names and its kind of process.  An entry that
 *	 an owner of another kind registered keeps its counts under that kind,
 *	 and the new owner registers an entry of its own: an entry's counts are
 *	 all of one kind, the kind its processes had when they started
 *	 counting, as for LWLocks.
 *
 * - Every change of an entry's counters, by the core at the end of a wait or
 *	 by us at its first spin, happens between two increments of the entry's
 *	 changecount (odd while the owner writes), as pgstat's backend status
 *	 does.  Readers and resets copy an entry until they see the same even
 *	 changecount before and after the copy, so they see every wait either
 *	 whole or not at all: a reset cannot split a wait's counts.
 *
 * - The baselines are written only by pg_lockstat_reset(), which raises
 *	 them under the exclusive "pg_lockstat_spin" lock; readers copy all of
 *	 them under the shared lock, then the counters, still under it.  Since
 *	 an entry's counters only grow and entries are never removed, a site
 *	 name's sum over the slots only grows, so the baseline is kept per
 *	 name and kind of process, not per entry; readers subtract it from
 *	 their sums per name and kind (pg_spinlock_backend_type_stats) or per
 *	 name (pg_spinlock_stats: the sum of the kinds' baselines).  Each
 *	 takes the lock once, so the tranche "pg_lockstat_spin" shows one
 *	 acquisition per read or reset in pg_lwlock_stats.
 *
 * - The longest wait since the last reset cannot be kept as a difference
 *	 from a baseline.  A reset raises reset_epoch instead (an atomic add, a
 *	 full barrier), before it copies the counters.  At a wait's first spin,
 *	 the owner counts the wait as started, issues a full barrier (it holds
 *	 no spinlock then), reads the epoch, and if it is new, starts the
 *	 entry's maximum again, keeping the duration and index of the entry's
 *	 last wait as its carry.  So a wait that read an old epoch had started
 *	 before the reset's copy (the two barriers order the started count and
 *	 the epoch), and if its counts are not in the baseline, it was the one
 *	 wait that the process had in flight then: the only wait counted since
 *	 the reset whose duration is not in the new maximum.  Readers add it
 *	 from the carry, or, until the next wait starts, from last_wait_ns.
 *	 A wait that ends while a reset runs may count in the maximum after the
 *	 reset but in the other counters before it.
 *
 * - Sites are identified by name (and kind) when summed over processes,
 *	 since the same site has the same names in every process, but not
 *	 always the same string addresses (EXEC_BACKEND, libraries loaded after
 *	 start).
 *
 * This file keeps the layout and the writers' side: the owner's entries,
 * and its first spin of each wait.  The readers' side, the sums over the
 * slots behind pg_spinlock_stats and the reset's baselines and epoch, is
 * lockstat_spin_sum.c; the structures both share, lockstat_spin_internal.h.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_spin.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/shmem.h"

#include "lockstat_spin_internal.h"

LockStatSpinState *lockstat_spin_state = NULL;

/* this process's slot; NULL if none */
static LockStatSpinSlot *spin_my_slot = NULL;

/* this process's kind (lockstat_kind_of()), as it started counting */
static int	spin_my_kind = B_INVALID;

static Size
lockstat_spin_slot_stride(int max_sites)
{
	Size		size;

	size = MAXALIGN(sizeof(LockStatSpinSlot));
	size = add_size(size, MAXALIGN(mul_size(sizeof(LockStatSpinSite), max_sites)));
	size = add_size(size, mul_size(sizeof(LockStatSpinCounters), max_sites));
	size = add_size(size, mul_size(sizeof(uint64), max_sites));
	return CACHELINEALIGN(size);
}

/*
 * bytes of the header, the baselines and the slots, each slot a stride of
 * its own
 */
static Size
lockstat_spin_layout(Size *baselines, Size *slots)
{
	Size		size = 0;

	(void) lockstat_layout_part(&size, sizeof(LockStatSpinState));
	*baselines = lockstat_layout_part(&size,
									  mul_size(sizeof(LockStatSpinEntry),
											   LOCKSTAT_SPIN_BASELINES(lockstat_max_spin_sites)));
	*slots = lockstat_layout_part(&size,
								  mul_size(lockstat_spin_slot_stride(lockstat_max_spin_sites),
										   lockstat_process_slots()));
	return size;
}

/*
 * Shared memory and the "pg_lockstat_spin" lock, for our shmem_request_hook
 * (MaxBackends is known there).
 */
void
lockstat_spin_shmem_request(void)
{
	Size		baselines;
	Size		slots;

	RequestAddinShmemSpace(lockstat_layout_request(lockstat_spin_layout(&baselines,
																		&slots)));
	RequestNamedLWLockTranche("pg_lockstat_spin", 1);
}

/*
 * Create or attach to the spin site tables; called with AddinShmemInitLock
 * held by our shmem_startup_hook, in every process.
 */
void
lockstat_spin_shmem_startup(void)
{
	bool		found;
	Size		baselines;
	Size		slots;
	Size		size = lockstat_spin_layout(&baselines, &slots);
	char	   *p;

	p = lockstat_layout_init("pg_lockstat spin sites", size, &found);
	lockstat_spin_state = (LockStatSpinState *) p;
	if (!found)
	{
		lockstat_spin_state->lock = &(GetNamedLWLockTranche("pg_lockstat_spin"))->lock;
		lockstat_spin_state->num_slots = lockstat_process_slots();
		lockstat_spin_state->max_sites = lockstat_max_spin_sites;
		lockstat_spin_state->slot_stride = lockstat_spin_slot_stride(lockstat_max_spin_sites);
		lockstat_spin_state->num_baselines = 0;
		lockstat_spin_state->baselines = (LockStatSpinEntry *) (p + baselines);
		lockstat_spin_state->slots = p + slots;
		pg_atomic_init_u64(&lockstat_spin_state->reset_epoch, 0);
		memset(lockstat_spin_state->slots, 0, lockstat_spin_state->slot_stride * lockstat_spin_state->num_slots);
	}
}

/*
 * The process with ProcNumber slot starts: take over the slot's table.
 * Entries keep their names, kinds and counts; the string addresses of the
 * earlier owner are forgotten, so that they are matched by name again.
 * The process's kind is that of its MyBackendType and, for a background
 * worker, its bgw_type, as lockstat_attach_process() records it.
 */
void
lockstat_spin_attach(int slot)
{
	LockStatSpinSite *sites;

	if (lockstat_spin_state == NULL || slot < 0 || slot >= lockstat_spin_state->num_slots)
		return;

	spin_my_kind = lockstat_kind_of(MyBackendType,
									MyBgworkerEntry ? MyBgworkerEntry->bgw_type : NULL);
	spin_my_slot = lockstat_spin_slot(slot);
	sites = lockstat_spin_sites(spin_my_slot);
	for (uint32 i = 0; i < spin_my_slot->nsites; i++)
	{
		sites[i].file_ptr = NULL;
		sites[i].func_ptr = NULL;
	}
}

/* the process exits: stop counting into its slot */
void
lockstat_spin_detach(void)
{
	spin_my_slot = NULL;
}

/* does a stored name equal name, as far as the stored copy goes? */
static inline bool
spin_name_equal(const char *stored, const char *name)
{
	return strncmp(stored, name, LOCKSTAT_SITE_NAME_LEN - 1) == 0;
}

/*
 * The entry of a call site in this process's table, registering it if need
 * be; -1 if the table is full.  Looks up the string addresses first (only
 * this process sets them), then the names of entries of this process's
 * kind that an earlier owner of the slot registered.
 */
static int
spin_find_site(LockStatSpinSlot *slot, const char *file, int line,
			   const char *func)
{
	LockStatSpinSite *sites = lockstat_spin_sites(slot);
	uint32		n = slot->nsites;

	for (uint32 i = 0; i < n; i++)
	{
		if (sites[i].file_ptr == file && sites[i].func_ptr == func &&
			sites[i].line == line)
			return (int) i;
	}

	for (uint32 i = 0; i < n; i++)
	{
		if (sites[i].file_ptr == NULL && sites[i].line == line &&
			sites[i].kind == spin_my_kind &&
			spin_name_equal(sites[i].file, file) &&
			spin_name_equal(sites[i].func, func))
		{
			sites[i].file_ptr = file;
			sites[i].func_ptr = func;
			return (int) i;
		}
	}

	if (n >= (uint32) lockstat_spin_state->max_sites)
		return -1;

	sites[n].file_ptr = file;
	sites[n].func_ptr = func;
	sites[n].line = line;
	sites[n].kind = spin_my_kind;
	strlcpy(sites[n].file, file ? file : "", LOCKSTAT_SITE_NAME_LEN);
	strlcpy(sites[n].func, func ? func : "", LOCKSTAT_SITE_NAME_LEN);
	pg_write_barrier();
	slot->nsites = n + 1;
	return (int) n;
}

/*
 * spin_stats_site_hook: the counters of a call site in this process's table,
 * for the core to add the wait to when it ends; NULL not to count the wait:
 * while pg_lockstat.track is off, or if the table is full (counted as
 * dropped).  Runs on the first spin of a contended wait, while the process
 * spins and holds no spinlock: no locks, no allocation, no errors.  Starts a
 * new maximum if a reset came since the entry's last wait (see the locking
 * rules above).
 */
SpinWaitCounters *
lockstat_spin_site(const char *file, int line, const char *func)
{
	LockStatSpinSlot *slot = spin_my_slot;
	LockStatSpinCounters *c;
	uint64		epoch;
	int			i;

	if (slot == NULL || !lockstat_track)
		return NULL;
	i = spin_find_site(slot, file, line, func);
	if (i < 0)
	{
		slot->dropped++;
		return NULL;
	}
	c = &lockstat_spin_counters(slot, lockstat_spin_state->max_sites)[i];

	/* started before the epoch is read: see the locking rules */
	c->started++;
	pg_memory_barrier();
	epoch = pg_atomic_read_u64(&lockstat_spin_state->reset_epoch);

	if (c->max_epoch != epoch)
	{
		c->core.changecount++;
		pg_write_barrier();
		c->carry_ns = c->core.last_wait_ns;
		c->carry_index = c->core.contended;
		c->core.max_wait_ns = 0;
		c->max_epoch = epoch;
		pg_write_barrier();
		c->core.changecount++;
	}
	return &c->core;
}
