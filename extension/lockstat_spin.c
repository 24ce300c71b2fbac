/*-------------------------------------------------------------------------
 *
 * lockstat_spin.c
 *	  Spin waits per call site: the tables behind pg_spinlock_stats
 *
 * The core patch asks lockstat_spin_site(), its spin_stats_site_hook, for
 * the row of a contended spin wait's file, line and function when the wait
 * first spins (perform_spin_delay() in s_lock.c), keeps the wait's counts,
 * and hands them to lockstat_spin_wait(), its spin_stats_wait_hook, when the
 * wait ends (finish_spin_delay()).
 *
 * Layout: one block per process slot (ProcNumber), each holding
 * pg_lockstat.max_spin_sites entries: the site's names (LockStatSpinSite),
 * its counters (LockStatSpinCounters) and the reset baseline of those
 * counters.
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
 * - A wait's counts are added all at once, between two increments of the
 *	 entry's changecount (odd while the owner writes), as pgstat's backend
 *	 status does.  Readers and resets copy an entry until they see the same
 *	 even changecount before and after the copy, so they see every wait
 *	 either whole or not at all: a reset cannot split a wait's counts.
 *
 * - The baselines are written only by pg_lockstat_reset(), which raises
 *	 them under the exclusive "pg_lockstat_spin" lock; readers copy all of
 *	 them under the shared lock, then the counters, still under it.  Each
 *	 takes the lock once, so the tranche "pg_lockstat_spin" shows one
 *	 acquisition per read or reset in pg_lwlock_stats.
 *
 * - The longest wait since the last reset cannot be kept as a difference
 *	 from a baseline.  A reset raises reset_epoch instead, and the owner
 *	 starts an entry's maximum again when it sees a new epoch.  The owner
 *	 reads the epoch after it makes the changecount odd, and a reader reads
 *	 it with the baselines and holds the lock until it has copied the
 *	 counters, so every wait counted after a reset is in that reset's
 *	 maximum.  A wait that ends while a reset runs may count in the maximum
 *	 after the reset but in the other counters before it.
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

/*
 * One call site's counters in one process slot, and the shape of its reset
 * baseline (whose changecount, max_epoch and counts.max_wait_ns are
 * unused).  counts.max_wait_ns is the longest wait of reset epoch
 * max_epoch.
 */
typedef struct LockStatSpinCounters
{
	uint64		changecount;	/* odd while the owner adds a wait */
	uint64		max_epoch;
	LockStatSpinTotals counts;
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

static inline LockStatSpinCounters *
spin_counters(LockStatSpinSlot *slot, int max_sites)
{
	return (LockStatSpinCounters *) ((char *) spin_sites(slot) +
									 MAXALIGN(sizeof(LockStatSpinSite) * max_sites));
}

static inline LockStatSpinCounters *
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
	size = add_size(size, mul_size(2 * sizeof(LockStatSpinCounters), max_sites));
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
		pg_atomic_init_u64(&spin_state->reset_epoch, 0);
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
}

/* does a stored name equal name, as far as the stored copy goes? */
static inline bool
spin_name_equal(const char *stored, const char *name)
{
	return strncmp(stored, name, LOCKSTAT_SITE_NAME_LEN - 1) == 0;
}

/*
 * spin_stats_site_hook: the row of a call site in this process's table, or
 * -1 not to count the wait: while pg_lockstat.track is off, or if the table
 * is full.  Runs on the first spin of a contended wait: no locks, no
 * allocation, no errors.  Looks up the string addresses first, then the
 * names of entries that an earlier owner of the slot registered, then
 * registers a new entry.
 */
int
lockstat_spin_site(const char *file, int line, const char *func)
{
	LockStatSpinSlot *slot = spin_my_slot;
	LockStatSpinSite *sites;
	uint32		n;

	if (slot == NULL || !lockstat_track)
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

/*
 * spin_stats_wait_hook: a counted wait of this process ends; add it, whole,
 * to its call site's counters.  wait->wait_ns is its duration from the
 * first spin to the acquisition.  Runs while the process holds the lock it
 * waited for: no locks, no allocation, no errors.
 */
void
lockstat_spin_wait(const SpinWaitStats *wait)
{
	LockStatSpinSlot *slot = spin_my_slot;
	LockStatSpinCounters *c;
	uint64		epoch;

	if (slot == NULL || wait->site < 0 || wait->site >= (int) slot->nsites)
		return;
	c = &spin_counters(slot, spin_state->max_sites)[wait->site];

	c->changecount++;

	/*
	 * Read the reset epoch only once the changecount is odd, with a full
	 * barrier between the two: a reset raises the epoch (a full barrier too)
	 * before it copies the counters, so either this wait sees the new epoch,
	 * or the reset sees the odd changecount and waits for this wait to go
	 * into its baseline.  Read before, an old epoch could go with a wait that
	 * the reset's copy missed, and the wait would be counted after the reset
	 * without its duration in max_wait_time.
	 */
	pg_memory_barrier();
	epoch = pg_atomic_read_u64(&spin_state->reset_epoch);

	c->counts.contended++;
	c->counts.spins += wait->spins;
	c->counts.delays += wait->delays;
	c->counts.wait_time_ns += wait->sleep_ns;
	c->counts.tas_attempts += wait->tas_attempts;
	c->counts.unlocked_skips += wait->unlocked_skips;
	c->counts.wait_hist[lockstat_wait_bucket(wait->wait_ns)]++;
	if (c->max_epoch != epoch)
	{
		c->max_epoch = epoch;
		c->counts.max_wait_ns = wait->wait_ns;
	}
	else if (wait->wait_ns > c->counts.max_wait_ns)
		c->counts.max_wait_ns = wait->wait_ns;

	pg_write_barrier();
	c->changecount++;
}

/*
 * Copy an entry's counters as of a moment when its owner was not adding a
 * wait, so that every wait is in the copy whole or not at all.  An owner
 * adds a wait in a few dozen instructions and cannot fail in between, so a
 * retry nearly always succeeds at once; but the owner can be preempted, or
 * stopped by a debugger, inside that window.  So after SPIN_COPY_FAST_TRIES
 * quick retries, retry every 100 us, and give up after SPIN_COPY_MAX_USEC
 * with an error rather than wait for ever with interrupts held off.
 * Errors: XX001 then.
 */
#define SPIN_COPY_FAST_TRIES	1000
#define SPIN_COPY_MAX_USEC		INT64CONST(2000000)

static void
spin_copy_counters(LockStatSpinCounters *to,
				   volatile LockStatSpinCounters *from)
{
	instr_time	start;

	INSTR_TIME_SET_ZERO(start);
	for (int tries = 0;; tries++)
	{
		uint64		before = from->changecount;

		pg_read_barrier();
		memcpy(to, (const LockStatSpinCounters *) from, sizeof(*to));
		pg_read_barrier();
		if (before % 2 == 0 && from->changecount == before)
			return;

		if (tries < SPIN_COPY_FAST_TRIES)
			pg_spin_delay();
		else
		{
			instr_time	now;

			INSTR_TIME_SET_CURRENT(now);
			if (INSTR_TIME_IS_ZERO(start))
				start = now;
			INSTR_TIME_SUBTRACT(now, start);
			if (INSTR_TIME_GET_MICROSEC(now) >= SPIN_COPY_MAX_USEC)
				ereport(ERROR,
						(errcode(ERRCODE_DATA_CORRUPTED),
						 errmsg("could not read pg_lockstat spin wait counters consistently"),
						 errdetail("A process has been adding a spin wait to its counters for more than %d ms.",
								   (int) (SPIN_COPY_MAX_USEC / 1000)),
						 errhint("A process stopped by a debugger or a signal can cause this; try again once it runs.")));
			pg_usleep(100);
		}
	}
}

StaticAssertDecl(offsetof(LockStatSpinTotals, max_wait_ns) ==
				 (6 + LOCKSTAT_WAIT_BUCKETS) * sizeof(uint64),
				 "LockStatSpinTotals must be 64-bit counts before max_wait_ns");

/* add an entry's counts since its baseline to a call site's totals */
static void
spin_add(LockStatSpinTotals *to, const LockStatSpinCounters *from,
		 const LockStatSpinCounters *minus, uint64 epoch)
{
	uint64	   *sum = (uint64 *) to;
	const uint64 *now = (const uint64 *) &from->counts;
	const uint64 *then = (const uint64 *) &minus->counts;

	for (int w = 0; w < LOCKSTAT_SPIN_SUM_WORDS; w++)
		sum[w] += now[w] - then[w];
	if (from->max_epoch == epoch && from->counts.max_wait_ns > to->max_wait_ns)
		to->max_wait_ns = from->counts.max_wait_ns;
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
 * baselines == false the baselines are not subtracted and max_wait_ns is
 * the longest wait since the last reset all the same.  *dropped is set to
 * the waits not counted because a table was full, since start.  Errors:
 * 55000 if not preloaded; XX001 if an entry cannot be read consistently.
 */
HTAB *
lockstat_spin_read(bool baselines, uint64 *dropped)
{
	HASHCTL		ctl;
	HTAB	   *htab;
	int			max_sites;
	int			num_slots;
	LockStatSpinCounters *base;
	uint64		epoch;
	static const LockStatSpinCounters zero;

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

	/*
	 * The baselines first: they must not be newer than the counters.  The
	 * lock is held until the counters are copied too, so that no reset falls
	 * in between: a reset there would start a new epoch, and the waits
	 * counted after the baselines but in that new epoch would be in the
	 * counts without their durations in max_wait_ns.
	 */
	base = palloc(mul_size(sizeof(LockStatSpinCounters),
						   mul_size(max_sites, num_slots)));
	LWLockAcquire(spin_state->lock, LW_SHARED);
	for (int s = 0; s < num_slots; s++)
		memcpy(&base[s * max_sites], spin_baseline(spin_slot(s), max_sites),
			   sizeof(LockStatSpinCounters) * max_sites);
	epoch = pg_atomic_read_u64(&spin_state->reset_epoch);
	*dropped = 0;

	for (int s = 0; s < num_slots; s++)
	{
		LockStatSpinSlot *slot = spin_slot(s);
		LockStatSpinSite *sites = spin_sites(slot);
		volatile LockStatSpinCounters *counters = spin_counters(slot, max_sites);
		LockStatSpinCounters *slot_base = &base[s * max_sites];
		uint32		n;

		/* no interrupt check: they are held off under the lock */
		*dropped += slot->dropped;
		n = slot->nsites;
		pg_read_barrier();

		for (uint32 i = 0; i < n && i < (uint32) max_sites; i++)
		{
			LockStatSpinKey key;
			LockStatSpinEntry *entry;
			LockStatSpinCounters copy;
			bool		found;

			memset(&key, 0, sizeof(key));
			strlcpy(key.file, sites[i].file, LOCKSTAT_SITE_NAME_LEN);
			strlcpy(key.func, sites[i].func, LOCKSTAT_SITE_NAME_LEN);
			key.line = sites[i].line;
			entry = hash_search(htab, &key, HASH_ENTER, &found);
			if (!found)
				memset(&entry->counts, 0, sizeof(LockStatSpinTotals));
			spin_copy_counters(&copy, &counters[i]);
			spin_add(&entry->counts, &copy,
					 baselines ? &slot_base[i] : &zero, epoch);
		}
	}
	LWLockRelease(spin_state->lock);

	pfree(base);
	return htab;
}

/*
 * Make the current counters of every slot their new baselines, and start a
 * new epoch of longest waits; part of pg_lockstat_reset(), which calls it
 * before it touches anything else.  All counters are copied before any
 * baseline moves, so an error leaves the baselines as they were; only the
 * epoch, raised first so that waits can tell (see lockstat_spin_wait()),
 * has moved then.  A baseline never moves back.  Errors: XX001 if an entry
 * cannot be read consistently.
 */
void
lockstat_spin_reset(void)
{
	int			max_sites;
	int			num_slots;
	LockStatSpinCounters *copy;

	if (spin_state == NULL)
		return;
	max_sites = spin_state->max_sites;
	num_slots = spin_state->num_slots;
	copy = palloc(mul_size(sizeof(LockStatSpinCounters),
						   mul_size(max_sites, num_slots)));

	LWLockAcquire(spin_state->lock, LW_EXCLUSIVE);
	pg_atomic_fetch_add_u64(&spin_state->reset_epoch, 1);

	/* copy everything first: the only step that can fail */
	for (int s = 0; s < num_slots; s++)
	{
		LockStatSpinSlot *slot = spin_slot(s);
		volatile LockStatSpinCounters *counters = spin_counters(slot, max_sites);
		uint32		n;

		n = slot->nsites;
		pg_read_barrier();
		for (uint32 i = 0; i < (uint32) max_sites; i++)
		{
			if (i < n)
				spin_copy_counters(&copy[s * max_sites + i], &counters[i]);
			else
				memset(&copy[s * max_sites + i], 0, sizeof(LockStatSpinCounters));
		}
	}

	for (int s = 0; s < num_slots; s++)
	{
		LockStatSpinCounters *base = spin_baseline(spin_slot(s), max_sites);

		for (int i = 0; i < max_sites; i++)
		{
			uint64	   *then = (uint64 *) &base[i].counts;
			const uint64 *now = (const uint64 *) &copy[s * max_sites + i].counts;

			for (int w = 0; w < LOCKSTAT_SPIN_SUM_WORDS; w++)
				spin_raise(&then[w], now[w]);
		}
	}
	LWLockRelease(spin_state->lock);
	pfree(copy);
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
