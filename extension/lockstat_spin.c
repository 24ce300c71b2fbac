/*-------------------------------------------------------------------------
 *
 * lockstat_spin.c
 *	  Spin waits per call site: the tables behind pg_spinlock_stats
 *
 * The core patch asks lockstat_spin_site(), its spin_stats_site_hook, for
 * the counters of a contended spin wait's file, line and function when the
 * wait first spins (perform_spin_delay() in s_lock.c), keeps the wait's
 * counts itself, and adds them, whole, to those counters when the wait ends
 * (finish_spin_delay()), with the lock held.  No code of ours runs under the
 * spinlock: the core adds the wait with plain stores (see SpinWaitCounters in
 * storage/s_lock.h).
 *
 * Layout: the reset baseline per call site name (LockStatSpinEntry, up to
 * LOCKSTAT_SPIN_BASELINES(max_spin_sites) names), then one block per
 * process slot (ProcNumber), each holding pg_lockstat.max_spin_sites
 * entries: the site's names (LockStatSpinSite), its counters
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
 *	 entries again by their names.
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
 *	 name, not per entry, as readers report it.  Each
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
 * - Sites are identified by name when summed over processes, since the same
 *	 site has the same names in every process, but not always the same
 *	 string addresses (EXEC_BACKEND, libraries loaded after start).
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_spin.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"

#include "lockstat.h"

/* one call site of a slot, as its owner registered it */
typedef struct LockStatSpinSite
{
	const char *file_ptr;		/* the owner's string addresses: its lookup
								 * key; NULL until the owner uses the entry */
	const char *func_ptr;
	int			line;
	char		file[LOCKSTAT_SITE_NAME_LEN];
	char		func[LOCKSTAT_SITE_NAME_LEN];
} LockStatSpinSite;

/*
 * One call site's counters in one process slot: the core's, which the core
 * adds each finished wait to, then ours (see the locking rules above).
 */
typedef struct LockStatSpinCounters
{
	SpinWaitCounters core;
	uint64		started;		/* waits that began spinning */
	uint64		max_epoch;		/* reset epoch of core.max_wait_ns */
	uint64		carry_ns;		/* last wait before max_epoch began */
	uint64		carry_index;	/* its number, as core.contended counts */
} LockStatSpinCounters;

/* one process slot's table header; sites, counters, baseline follow */
typedef struct LockStatSpinSlot
{
	uint32		nsites;			/* entries registered */
	uint64		dropped;		/* waits not counted: the table was full */
} LockStatSpinSlot;

typedef struct LockStatSpinState
{
	LWLock	   *lock;			/* protects the baselines */
	pg_atomic_uint64 reset_epoch;	/* resets since start; see above */
	int			num_slots;
	int			max_sites;
	Size		slot_stride;
	int			num_baselines;	/* site names in baselines */
	LockStatSpinEntry *baselines;	/* LOCKSTAT_SPIN_BASELINES(max_sites) */
	char	   *slots;
} LockStatSpinState;

/*
 * Site names that the reset baseline can hold: a reset that finds more
 * distinct names over all slots fails before it changes anything.  A
 * server has far fewer contended call sites of spinlocks than this.
 */
#define LOCKSTAT_SPIN_BASELINES(max_sites) \
	Max(LOCKSTAT_MAX_SPIN_SITES, 4 * (max_sites))

/*
 * The sum words of the core's counters line up with LockStatSpinTotals:
 * each counter of lockstat_counters.h, the waits per duration, and no more.
 */
#define LOCKSTAT_SPIN_COUNTER(field, column, unit, export) \
StaticAssertDecl(offsetof(SpinWaitCounters, field) - \
				 offsetof(SpinWaitCounters, contended) == \
				 offsetof(LockStatSpinTotals, field), \
				 "SpinWaitCounters and LockStatSpinTotals differ at " #field);
#include "lockstat_counters.h"
#undef LOCKSTAT_SPIN_COUNTER
StaticAssertDecl(offsetof(SpinWaitCounters, wait_hist) -
				 offsetof(SpinWaitCounters, contended) ==
				 offsetof(LockStatSpinTotals, wait_hist),
				 "SpinWaitCounters and LockStatSpinTotals differ at wait_hist");
StaticAssertDecl(offsetof(SpinWaitCounters, max_wait_ns) -
				 offsetof(SpinWaitCounters, contended) ==
				 LOCKSTAT_SPIN_SUM_WORDS * sizeof(uint64),
				 "SpinWaitCounters must have LockStatSpinTotals' sum words");

static LockStatSpinState *spin_state = NULL;

/* this process's slot; NULL if none */
static LockStatSpinSlot *spin_my_slot = NULL;

/* the table's parts within a slot */
static inline LockStatSpinSite *
spin_sites(LockStatSpinSlot *slot)
{
	return (LockStatSpinSite *) ((char *) slot +
								 MAXALIGN(sizeof(LockStatSpinSlot)));
}

static inline LockStatSpinCounters *
spin_counters(LockStatSpinSlot *slot, int max_sites)
{
	return (LockStatSpinCounters *) ((char *) spin_sites(slot) +
									 MAXALIGN(sizeof(LockStatSpinSite) * max_sites));
}

/* each entry's contended count at the last reset */
static inline uint64 *
spin_base_contended(LockStatSpinSlot *slot, int max_sites)
{
	return (uint64 *) (spin_counters(slot, max_sites) + max_sites);
}

static inline LockStatSpinSlot *
spin_slot(int slot)
{
	return (LockStatSpinSlot *) (spin_state->slots +
								 spin_state->slot_stride * slot);
}

/* the sum words of a counter entry, as LockStatSpinTotals lays them out */
static inline const uint64 *
spin_sum_words(const LockStatSpinCounters *c)
{
	return &c->core.contended;
}

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
	spin_state = (LockStatSpinState *) p;
	if (!found)
	{
		spin_state->lock = &(GetNamedLWLockTranche("pg_lockstat_spin"))->lock;
		spin_state->num_slots = lockstat_process_slots();
		spin_state->max_sites = lockstat_max_spin_sites;
		spin_state->slot_stride = lockstat_spin_slot_stride(lockstat_max_spin_sites);
		spin_state->num_baselines = 0;
		spin_state->baselines = (LockStatSpinEntry *) (p + baselines);
		spin_state->slots = p + slots;
		pg_atomic_init_u64(&spin_state->reset_epoch, 0);
		memset(spin_state->slots, 0, spin_state->slot_stride * spin_state->num_slots);
	}
}

/*
 * The process with ProcNumber slot starts: take over the slot's table.
 * Entries keep their names and counts; the string addresses of the earlier
 * owner are forgotten, so that they are matched by name again.
 */
void
lockstat_spin_attach(int slot)
{
	LockStatSpinSite *sites;

	if (spin_state == NULL || slot < 0 || slot >= spin_state->num_slots)
		return;

	spin_my_slot = spin_slot(slot);
	sites = spin_sites(spin_my_slot);
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
 * be; -1 if the table is full.  Looks up the string addresses first, then
 * the names of entries that an earlier owner of the slot registered.
 */
static int
spin_find_site(LockStatSpinSlot *slot, const char *file, int line,
			   const char *func)
{
	LockStatSpinSite *sites = spin_sites(slot);
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
			spin_name_equal(sites[i].file, file) &&
			spin_name_equal(sites[i].func, func))
		{
			sites[i].file_ptr = file;
			sites[i].func_ptr = func;
			return (int) i;
		}
	}

	if (n >= (uint32) spin_state->max_sites)
		return -1;

	sites[n].file_ptr = file;
	sites[n].func_ptr = func;
	sites[n].line = line;
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
	c = &spin_counters(slot, spin_state->max_sites)[i];

	/* started before the epoch is read: see the locking rules */
	c->started++;
	pg_memory_barrier();
	epoch = pg_atomic_read_u64(&spin_state->reset_epoch);

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

/*
 * Copy an entry's counters as of a moment when its owner was not writing
 * them, so that every wait is in the copy whole or not at all, retrying
 * while the owner writes (lockstat_retry_wait()).  Errors: 55P03 when the
 * owner has been writing for LOCKSTAT_RETRY_MAX_USEC, unless missing_ok,
 * when it returns false instead (and true once it has a copy).
 */
static bool
spin_copy_counters(LockStatSpinCounters *to,
				   volatile LockStatSpinCounters *from, bool missing_ok)
{
	LockStatRetry retry = LOCKSTAT_RETRY_INIT;

	for (;;)
	{
		uint64		before = from->core.changecount;

		pg_read_barrier();
		memcpy(to, (const LockStatSpinCounters *) from, sizeof(*to));
		pg_read_barrier();
		if (before % 2 == 0 && from->core.changecount == before)
			return true;

		if (!lockstat_retry_wait(&retry))
		{
			if (missing_ok)
				return false;
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not read pg_lockstat spin wait counters consistently"),
					 errdetail("A process has been adding a spin wait to its counters for more than %d ms.",
							   (int) (LOCKSTAT_RETRY_MAX_USEC / 1000)),
					 errhint("A process stopped by a debugger or a signal can cause this; try again once it runs.")));
		}
	}
}

/*
 * The longest wait of a copied entry among those counted since the last
 * reset, at which the entry's contended count was base_contended (see the
 * locking rules above); 0 if there are none.
 */
static uint64
spin_max_since(const LockStatSpinCounters *c, uint64 base_contended,
			   uint64 epoch)
{
	uint64		max_ns;

	if (c->core.contended <= base_contended)
		return 0;
	if (c->max_epoch != epoch)
		return c->core.last_wait_ns;
	max_ns = c->core.max_wait_ns;
	if (c->carry_index > base_contended)
		max_ns = Max(max_ns, c->carry_ns);
	return max_ns;
}

/* Add a copied entry's counts, all of them, to a call site's totals. */
static void
spin_add(LockStatSpinTotals *to, const LockStatSpinCounters *from)
{
	uint64	   *sum = (uint64 *) to;
	const uint64 *now = spin_sum_words(from);

	for (int w = 0; w < LOCKSTAT_SPIN_SUM_WORDS; w++)
		sum[w] += now[w];
}

/*
 * The entry of a call site in a local hash table of LockStatSpinEntry,
 * created with zero counts if new.
 */
static LockStatSpinEntry *
spin_key_entry(HTAB *htab, const LockStatSpinKey *key)
{
	LockStatSpinEntry *entry;
	bool		found;

	entry = hash_search(htab, key, HASH_ENTER, &found);
	if (!found)
		memset(&entry->counts, 0, sizeof(LockStatSpinTotals));
	return entry;
}

/* the same for a slot's entry, by its names */
static LockStatSpinEntry *
spin_read_entry(HTAB *htab, const LockStatSpinSite *site)
{
	LockStatSpinKey key;

	memset(&key, 0, sizeof(key));
	strlcpy(key.file, site->file, LOCKSTAT_SITE_NAME_LEN);
	strlcpy(key.func, site->func, LOCKSTAT_SITE_NAME_LEN);
	key.line = site->line;
	return spin_key_entry(htab, &key);
}

/* a new local hash table of LockStatSpinEntry, in CurrentMemoryContext */
static HTAB *
spin_new_table(void)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(LockStatSpinKey);
	ctl.entrysize = sizeof(LockStatSpinEntry);
	ctl.hcxt = CurrentMemoryContext;
	return hash_create("pg_lockstat spin sites", 64, &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/*
 * Subtract each site name's baseline from its sum in htab.  The sum only
 * grows, and was read after the baseline, so the difference is never
 * negative; a name has entries now if it had them at the reset.
 */
static void
spin_subtract_baselines(HTAB *htab, const LockStatSpinEntry *baselines,
						int num_baselines)
{
	for (int b = 0; b < num_baselines; b++)
	{
		LockStatSpinEntry *entry = hash_search(htab, &baselines[b].key,
											   HASH_FIND, NULL);
		uint64	   *sum;
		const uint64 *then = (const uint64 *) &baselines[b].counts;

		if (entry == NULL)
			continue;
		sum = (uint64 *) &entry->counts;
		for (int w = 0; w < LOCKSTAT_SPIN_SUM_WORDS; w++)
			sum[w] -= then[w];
	}
}

/*
 * Sum every slot's counters, minus their baselines, per call site, into a
 * new local hash table of LockStatSpinEntry (in CurrentMemoryContext): the
 * counts since the last reset.  Errors: 55000 if not counting (see
 * lockstat_require_ready()); 55P03 if an entry cannot be read consistently.
 */
HTAB *
lockstat_spin_read(void)
{
	HTAB	   *htab;
	int			max_sites;
	int			num_slots;
	int			num_baselines;
	LockStatSpinEntry *baselines;
	uint64	   *base_contended;
	uint64		epoch;

	max_sites = spin_state->max_sites;
	num_slots = spin_state->num_slots;
	htab = spin_new_table();

	/*
	 * The baselines first: they must not be newer than the counters.  The
	 * lock is held until the counters are copied too, so that no reset falls
	 * in between and the epoch stays the one of these baselines.
	 */
	baselines = palloc(mul_size(sizeof(LockStatSpinEntry),
								LOCKSTAT_SPIN_BASELINES(max_sites)));
	base_contended = palloc(mul_size(sizeof(uint64),
									 mul_size(max_sites, num_slots)));
	LWLockAcquire(spin_state->lock, LW_SHARED);
	num_baselines = spin_state->num_baselines;
	memcpy(baselines, spin_state->baselines,
		   sizeof(LockStatSpinEntry) * num_baselines);
	for (int s = 0; s < num_slots; s++)
		memcpy(&base_contended[s * max_sites],
			   spin_base_contended(spin_slot(s), max_sites),
			   sizeof(uint64) * max_sites);
	epoch = pg_atomic_read_u64(&spin_state->reset_epoch);

	for (int s = 0; s < num_slots; s++)
	{
		LockStatSpinSlot *slot = spin_slot(s);
		LockStatSpinSite *sites = spin_sites(slot);
		volatile LockStatSpinCounters *counters = spin_counters(slot, max_sites);
		uint32		n;

		/* no interrupt check: they are held off under the lock */
		n = slot->nsites;
		pg_read_barrier();

		for (uint32 i = 0; i < n && i < (uint32) max_sites; i++)
		{
			LockStatSpinCounters copy;
			LockStatSpinTotals *to;

			(void) spin_copy_counters(&copy, &counters[i], false);
			to = &spin_read_entry(htab, &sites[i])->counts;
			spin_add(to, &copy);
			to->max_wait_ns = Max(to->max_wait_ns,
								  spin_max_since(&copy,
												 base_contended[s * max_sites + i],
												 epoch));
		}
	}
	LWLockRelease(spin_state->lock);

	spin_subtract_baselines(htab, baselines, num_baselines);
	pfree(base_contended);
	pfree(baselines);
	return htab;
}

/*
 * Copy the counters of every slot's entries into copy (num_slots by
 * max_sites).  Without missing_ok, the slots' numbers of entries are read
 * and stored in nsites[num_slots]; with it, only those entries are copied
 * again, and an entry that cannot be read consistently keeps what copy held
 * for it.  Errors: 55P03 without missing_ok.
 */
static void
spin_copy_all(LockStatSpinCounters *copy, uint32 *nsites, int num_slots,
			  int max_sites, bool missing_ok)
{
	for (int s = 0; s < num_slots; s++)
	{
		LockStatSpinSlot *slot = spin_slot(s);
		volatile LockStatSpinCounters *counters = spin_counters(slot, max_sites);
		uint32		n;

		if (!missing_ok)
		{
			n = Min(slot->nsites, (uint32) max_sites);
			pg_read_barrier();
			nsites[s] = n;
		}
		n = nsites[s];
		for (uint32 i = 0; i < n; i++)
		{
			LockStatSpinCounters one;

			if (spin_copy_counters(&one, &counters[i], missing_ok))
				copy[s * max_sites + i] = one;
		}
	}
}

/*
 * Sum the copied counters of every slot's first nsites[s] entries per site
 * name into htab.
 */
static void
spin_sum_copies(HTAB *htab, const LockStatSpinCounters *copy,
				const uint32 *nsites, int num_slots, int max_sites)
{
	for (int s = 0; s < num_slots; s++)
	{
		LockStatSpinSite *sites = spin_sites(spin_slot(s));

		for (uint32 i = 0; i < nsites[s]; i++)
			spin_add(&spin_read_entry(htab, &sites[i])->counts,
					 &copy[s * max_sites + i]);
	}
}

/*
 * Make the current counters of every slot their new baselines, and start a
 * new epoch of longest waits; part of pg_lockstat_reset(), which calls it
 * before it touches anything else.
 *
 * Everything is copied once before the epoch is raised: that is the step
 * that can fail, and an error then leaves everything as it was.  Once the
 * epoch is raised, each process's next wait starts a new maximum, so the
 * reset must then complete: the same entries are copied again, after the
 * epoch (see the locking rules), and an entry whose owner stalls in between
 * keeps its first copy, which is older but whole.  Entries registered
 * after the first copy had no counts then and keep none in the baseline.
 * Each site name's baseline is raised to its sum over the copies, never
 * lowered.  Errors: 55P03 if an entry cannot be read consistently, 53400 if
 * the slots have more site names than the baseline can hold, both before
 * the epoch is raised.
 */
void
lockstat_spin_reset(void)
{
	int			max_sites;
	int			num_slots;
	int			max_baselines;
	LockStatSpinCounters *copy;
	uint32	   *nsites;
	HTAB	   *htab;
	HASH_SEQ_STATUS seq;
	LockStatSpinEntry *entry;
	int			n;

	if (spin_state == NULL)
		return;
	max_sites = spin_state->max_sites;
	num_slots = spin_state->num_slots;
	max_baselines = LOCKSTAT_SPIN_BASELINES(max_sites);
	copy = palloc0(mul_size(sizeof(LockStatSpinCounters),
							mul_size(max_sites, num_slots)));
	nsites = palloc0(mul_size(sizeof(uint32), num_slots));

	LWLockAcquire(spin_state->lock, LW_EXCLUSIVE);
	spin_copy_all(copy, nsites, num_slots, max_sites, false);

	/* the names of the new baseline: those copied, and the old ones */
	htab = spin_new_table();
	spin_sum_copies(htab, copy, nsites, num_slots, max_sites);
	for (int b = 0; b < spin_state->num_baselines; b++)
		(void) spin_key_entry(htab, &spin_state->baselines[b].key);
	if (hash_get_num_entries(htab) > max_baselines)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many spin wait call sites to reset"),
				 errdetail("The processes have counted spin waits at %lld call sites, and the reset baseline holds %d.",
						   (long long) hash_get_num_entries(htab),
						   max_baselines),
				 errhint("Raise \"pg_lockstat.max_spin_sites\" and restart the server.")));
	hash_destroy(htab);

	pg_atomic_fetch_add_u64(&spin_state->reset_epoch, 1);
	spin_copy_all(copy, nsites, num_slots, max_sites, true);

	htab = spin_new_table();
	spin_sum_copies(htab, copy, nsites, num_slots, max_sites);
	for (int b = 0; b < spin_state->num_baselines; b++)
	{
		LockStatSpinEntry *old = &spin_state->baselines[b];
		uint64	   *now = (uint64 *) &spin_key_entry(htab, &old->key)->counts;
		const uint64 *then = (const uint64 *) &old->counts;

		for (int w = 0; w < LOCKSTAT_SPIN_SUM_WORDS; w++)
			now[w] = Max(now[w], then[w]);
	}
	n = 0;
	hash_seq_init(&seq, htab);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		Assert(n < max_baselines);
		spin_state->baselines[n++] = *entry;
	}
	spin_state->num_baselines = n;

	for (int s = 0; s < num_slots; s++)
	{
		uint64	   *base = spin_base_contended(spin_slot(s), max_sites);

		for (uint32 i = 0; i < nsites[s]; i++)
			base[i] = Max(base[i], copy[s * max_sites + i].core.contended);
	}
	LWLockRelease(spin_state->lock);

	hash_destroy(htab);
	pfree(nsites);
	pfree(copy);
}

/*
 * Spin waits not counted since start because a process's table of call
 * sites was full, summed over the slots.  Errors: 55000 if not counting.
 */
uint64
lockstat_spin_dropped(void)
{
	uint64		dropped = 0;

	for (int s = 0; s < spin_state->num_slots; s++)
		dropped += spin_slot(s)->dropped;
	return dropped;
}
