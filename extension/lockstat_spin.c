/*-------------------------------------------------------------------------
 *
 * lockstat_spin.c
 *	  Spin waits per call site: the tables behind pg_spinlock_stats
 *
 * The core patch counts a contended spin wait (perform_spin_delay() and
 * s_lock() in s_lock.c) in MySpinStats[site], where site is the row that
 * lockstat_spin_site(), its spin_stats_site_hook, returns for the wait's
 * file, line and function.
 *
 * Layout: one block per process slot (ProcNumber), each holding
 * pg_lockstat.max_spin_sites entries: the site's names (LockStatSpinSite),
 * its counters (SpinStatsCounters, which MySpinStats points at) and the
 * reset baseline of those counters.
 *
 * Locking rules:
 *
 * - A slot's entries and counters are written only by the process that owns
 *	 the slot, with plain stores and no lock, as the LWLock counters (see
 *	 lockstat_shmem.c).  An entry's names and line are written once, before
 *	 nsites is raised past it behind a write barrier; readers read nsites,
 *	 then a read barrier, then only entries below it.  Slots are handed to
 *	 the next process with the same ProcNumber without being cleared: the
 *	 new owner forgets the earlier owner's string addresses and finds its
 *	 entries again by their names.
 *
 * - The baselines are written only by pg_lockstat_reset(), which raises
 *	 them under the exclusive "pg_lockstat_spin" lock; readers copy all of
 *	 them under the shared lock, before they read the counters.  Each takes
 *	 the lock once, so the tranche "pg_lockstat_spin" shows one acquisition
 *	 per read or reset in pg_lwlock_stats.
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
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/hsearch.h"

#include "pg_lockstat.h"

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

/* one process slot's table header; sites, counters, baseline follow */
typedef struct LockStatSpinSlot
{
	uint32		nsites;			/* entries registered */
	uint64		dropped;		/* waits not counted: the table was full */
} LockStatSpinSlot;

typedef struct LockStatSpinState
{
	LWLock	   *lock;			/* protects the baselines */
	int			num_slots;
	int			max_sites;
	Size		slot_stride;
	char	   *slots;
} LockStatSpinState;

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

static inline SpinStatsCounters *
spin_counters(LockStatSpinSlot *slot, int max_sites)
{
	return (SpinStatsCounters *) ((char *) spin_sites(slot) +
								  MAXALIGN(sizeof(LockStatSpinSite) * max_sites));
}

static inline SpinStatsCounters *
spin_baseline(LockStatSpinSlot *slot, int max_sites)
{
	return spin_counters(slot, max_sites) + max_sites;
}

static inline LockStatSpinSlot *
spin_slot(int slot)
{
	return (LockStatSpinSlot *) (spin_state->slots +
								 spin_state->slot_stride * slot);
}

static Size
lockstat_spin_slot_stride(int max_sites)
{
	Size		size;

	size = MAXALIGN(sizeof(LockStatSpinSlot));
	size = add_size(size, MAXALIGN(mul_size(sizeof(LockStatSpinSite), max_sites)));
	size = add_size(size, mul_size(2 * sizeof(SpinStatsCounters), max_sites));
	return CACHELINEALIGN(size);
}

/*
 * Shared memory for the spin site tables, for lockstat_shmem_request().
 */
Size
lockstat_spin_shmem_size(int num_slots)
{
	return add_size(CACHELINEALIGN(sizeof(LockStatSpinState)) + PG_CACHE_LINE_SIZE,
					mul_size(lockstat_spin_slot_stride(lockstat_max_spin_sites),
							 num_slots));
}

/*
 * Create or attach to the spin site tables; called with AddinShmemInitLock
 * held, from lockstat_shmem_startup() in every process.
 */
void
lockstat_spin_shmem_startup(int num_slots)
{
	bool		found;
	char	   *base;

	base = ShmemInitStruct("pg_lockstat spin sites",
						   lockstat_spin_shmem_size(num_slots), &found);
	spin_state = (LockStatSpinState *) TYPEALIGN(PG_CACHE_LINE_SIZE, base);
	if (!found)
	{
		char	   *p = (char *) spin_state + CACHELINEALIGN(sizeof(LockStatSpinState));

		spin_state->lock = &(GetNamedLWLockTranche("pg_lockstat_spin"))->lock;
		spin_state->num_slots = num_slots;
		spin_state->max_sites = lockstat_max_spin_sites;
		spin_state->slot_stride = lockstat_spin_slot_stride(lockstat_max_spin_sites);
		spin_state->slots = p;
		memset(p, 0, spin_state->slot_stride * num_slots);
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
	if (lockstat_core.my_spin_stats)
		*lockstat_core.my_spin_stats = NULL;
}

/*
 * Start or stop counting spin waits in this process, with the LWLock
 * counters (pg_lockstat.track).
 */
void
lockstat_spin_track_changed(void)
{
	if (lockstat_core.my_spin_stats == NULL)
		return;
	*lockstat_core.my_spin_stats = (lockstat_track && spin_my_slot) ?
		spin_counters(spin_my_slot, spin_state->max_sites) : NULL;
}

/* does a stored name equal name, as far as the stored copy goes? */
static inline bool
spin_name_equal(const char *stored, const char *name)
{
	return strncmp(stored, name, LOCKSTAT_SITE_NAME_LEN - 1) == 0;
}

/*
 * spin_stats_site_hook: the row of a call site in this process's table, or
 * -1 if the table is full.  Runs on the first spin of a contended wait: no
 * locks, no allocation, no errors.  Looks up the string addresses first,
 * then the names of entries that an earlier owner of the slot registered,
 * then registers a new entry.
 */
int
lockstat_spin_site(const char *file, int line, const char *func)
{
	LockStatSpinSlot *slot = spin_my_slot;
	LockStatSpinSite *sites;
	uint32		n;

	if (slot == NULL)
		return -1;
	sites = spin_sites(slot);
	n = slot->nsites;

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
	{
		slot->dropped++;
		return -1;
	}

	sites[n].file_ptr = file;
	sites[n].func_ptr = func;
	sites[n].line = line;
	strlcpy(sites[n].file, file ? file : "", LOCKSTAT_SITE_NAME_LEN);
	strlcpy(sites[n].func, func ? func : "", LOCKSTAT_SITE_NAME_LEN);
	pg_write_barrier();
	slot->nsites = n + 1;
	return (int) n;
}

static void
spin_add(SpinStatsCounters *to, volatile SpinStatsCounters *from,
		 const SpinStatsCounters *minus)
{
	to->contended += from->contended - minus->contended;
	to->spins += from->spins - minus->spins;
	to->delays += from->delays - minus->delays;
	to->wait_time_ns += from->wait_time_ns - minus->wait_time_ns;
	to->tas_attempts += from->tas_attempts - minus->tas_attempts;
	to->unlocked_skips += from->unlocked_skips - minus->unlocked_skips;
}

static inline void
spin_raise(uint64 *base, uint64 value)
{
	if (value > *base)
		*base = value;
}

/*
 * Sum every slot's counters, minus their baselines, per call site, into a
 * new local hash table of LockStatSpinEntry (in CurrentMemoryContext).  With
 * baselines == false the baselines are not subtracted.  *dropped is set to
 * the waits not counted because a table was full, since start.  Errors:
 * 55000 if not preloaded.
 */
HTAB *
lockstat_spin_read(bool baselines, uint64 *dropped)
{
	HASHCTL		ctl;
	HTAB	   *htab;
	int			max_sites;
	int			num_slots;
	SpinStatsCounters *base;
	static const SpinStatsCounters zero;

	lockstat_require_ready();
	if (spin_state == NULL)
		elog(ERROR, "pg_lockstat spin site tables are not attached");

	max_sites = spin_state->max_sites;
	num_slots = spin_state->num_slots;

	ctl.keysize = sizeof(LockStatSpinKey);
	ctl.entrysize = sizeof(LockStatSpinEntry);
	ctl.hcxt = CurrentMemoryContext;
	htab = hash_create("pg_lockstat spin sites", 64, &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	/* the baselines first: they must not be newer than the counters */
	base = palloc(mul_size(sizeof(SpinStatsCounters),
						   mul_size(max_sites, num_slots)));
	LWLockAcquire(spin_state->lock, LW_SHARED);
	for (int s = 0; s < num_slots; s++)
		memcpy(&base[s * max_sites], spin_baseline(spin_slot(s), max_sites),
			   sizeof(SpinStatsCounters) * max_sites);
	LWLockRelease(spin_state->lock);
	*dropped = 0;

	for (int s = 0; s < num_slots; s++)
	{
		LockStatSpinSlot *slot = spin_slot(s);
		LockStatSpinSite *sites = spin_sites(slot);
		volatile SpinStatsCounters *counters = spin_counters(slot, max_sites);
		SpinStatsCounters *slot_base = &base[s * max_sites];
		uint32		n;

		CHECK_FOR_INTERRUPTS();

		*dropped += slot->dropped;
		n = slot->nsites;
		pg_read_barrier();

		for (uint32 i = 0; i < n && i < (uint32) max_sites; i++)
		{
			LockStatSpinKey key;
			LockStatSpinEntry *entry;
			bool		found;

			memset(&key, 0, sizeof(key));
			strlcpy(key.file, sites[i].file, LOCKSTAT_SITE_NAME_LEN);
			strlcpy(key.func, sites[i].func, LOCKSTAT_SITE_NAME_LEN);
			key.line = sites[i].line;
			entry = hash_search(htab, &key, HASH_ENTER, &found);
			if (!found)
				memset(&entry->counts, 0, sizeof(SpinStatsCounters));
			spin_add(&entry->counts, &counters[i],
					 baselines ? &slot_base[i] : &zero);
		}
	}

	pfree(base);
	return htab;
}

/*
 * Make the current counters of every slot their new baselines; part of
 * pg_lockstat_reset().  A baseline never moves back.
 */
void
lockstat_spin_reset(void)
{
	int			max_sites;

	if (spin_state == NULL)
		return;
	max_sites = spin_state->max_sites;

	/* a few loads and stores per site: no interrupt check needed inside */
	LWLockAcquire(spin_state->lock, LW_EXCLUSIVE);
	for (int s = 0; s < spin_state->num_slots; s++)
	{
		LockStatSpinSlot *slot = spin_slot(s);
		volatile SpinStatsCounters *counters = spin_counters(slot, max_sites);
		SpinStatsCounters *base = spin_baseline(slot, max_sites);
		uint32		n;

		n = slot->nsites;
		pg_read_barrier();

		for (uint32 i = 0; i < n && i < (uint32) max_sites; i++)
		{
			spin_raise(&base[i].contended, counters[i].contended);
			spin_raise(&base[i].spins, counters[i].spins);
			spin_raise(&base[i].delays, counters[i].delays);
			spin_raise(&base[i].wait_time_ns, counters[i].wait_time_ns);
			spin_raise(&base[i].tas_attempts, counters[i].tas_attempts);
			spin_raise(&base[i].unlocked_skips, counters[i].unlocked_skips);
		}
	}
	LWLockRelease(spin_state->lock);
}

/*
 * Spin waits not counted since start because a process's table of call
 * sites was full, summed over the slots.  Errors: 55000 if not preloaded.
 */
uint64
lockstat_spin_dropped(void)
{
	uint64		dropped = 0;

	lockstat_require_ready();
	if (spin_state == NULL)
		return 0;
	for (int s = 0; s < spin_state->num_slots; s++)
		dropped += spin_slot(s)->dropped;
	return dropped;
}
