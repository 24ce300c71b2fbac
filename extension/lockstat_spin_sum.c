/*-------------------------------------------------------------------------
 *
 * lockstat_spin_sum.c
 *	  Reading the spin-wait site tables: the counts per call site summed
 *	  over the process slots since the last reset, the reset's baselines,
 *	  and the waits dropped because a table was full
 *
 * pg_spinlock_stats and its sibling views are each site name's counts
 * summed over the slots' entries of that name, minus the name's baselines,
 * with the longest wait since the reset found from each entry's epoch and
 * carry; pg_spinlock_backend_type_stats the same per site name and kind of
 * process.  The layout of the tables, the rules of their writers and those of
 * the baselines and the epoch are in lockstat_spin.c's header; the reset's
 * place in pg_lockstat_reset()'s sequence, in lockstat_reset.c's.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_spin_sum.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/shmem.h"
#include "utils/hsearch.h"

#include "lockstat_spin_internal.h"

/*
 * The sum words of the core's counters line up with LockStatSpinTotals:
 * each counter of lockstat_counters.h, the waits per duration, and no more.
 */
#define LOCKSTAT_SPIN_COUNTER(field, column, unit, descr, export) \
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

/* the sum words of a counter entry, as LockStatSpinTotals lays them out */
static inline const uint64 *
spin_sum_words(const LockStatSpinCounters *c)
{
	return &c->core.contended;
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
 * locking rules of lockstat_spin.c); 0 if there are none.
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

/*
 * the same for a slot's entry, by its names and, if by_kind, its kind of
 * process (else kind -1: the sum of all kinds)
 */
static LockStatSpinEntry *
spin_read_entry(HTAB *htab, const LockStatSpinSite *site, bool by_kind)
{
	LockStatSpinKey key;

	memset(&key, 0, sizeof(key));
	strlcpy(key.file, site->file, LOCKSTAT_SITE_NAME_LEN);
	strlcpy(key.func, site->func, LOCKSTAT_SITE_NAME_LEN);
	key.line = site->line;
	key.kind = by_kind ? site->kind : -1;
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
 * Subtract each baseline, kept per site name and kind, from its sum in
 * htab: the sum of that name and kind if by_kind, else of that name (which
 * then loses every kind's baseline).  The sum only grows, and was read
 * after the baseline, so the difference is never negative; a name and kind
 * have entries now if they had them at the reset.
 */
static void
spin_subtract_baselines(HTAB *htab, const LockStatSpinEntry *baselines,
						int num_baselines, bool by_kind)
{
	for (int b = 0; b < num_baselines; b++)
	{
		LockStatSpinKey key = baselines[b].key;
		LockStatSpinEntry *entry;
		uint64	   *sum;
		const uint64 *then = (const uint64 *) &baselines[b].counts;

		if (!by_kind)
			key.kind = -1;
		entry = hash_search(htab, &key, HASH_FIND, NULL);

		if (entry == NULL)
			continue;
		sum = (uint64 *) &entry->counts;
		for (int w = 0; w < LOCKSTAT_SPIN_SUM_WORDS; w++)
			sum[w] -= then[w];
	}
}

/*
 * Add the counters of a slot's entries to their site names' (and, if
 * by_kind, kinds') sums in htab, and each entry's longest wait since the
 * reset of epoch to its sum's maximum; base_contended[max_sites] holds the
 * entries' contended counts at that reset.  Called under the shared lock,
 * which holds off interrupts.  Errors: 55P03 if an entry cannot be read
 * consistently.
 */
static void
spin_read_slot(HTAB *htab, LockStatSpinSlot *slot, int max_sites,
			   const uint64 *base_contended, uint64 epoch, bool by_kind)
{
	LockStatSpinSite *sites = lockstat_spin_sites(slot);
	volatile LockStatSpinCounters *counters = lockstat_spin_counters(slot, max_sites);
	uint32		n;

	/* no interrupt check: they are held off under the lock */
	n = slot->nsites;
	pg_read_barrier();

	for (uint32 i = 0; i < n && i < (uint32) max_sites; i++)
	{
		LockStatSpinCounters copy;
		LockStatSpinTotals *to;

		(void) spin_copy_counters(&copy, &counters[i], false);
		to = &spin_read_entry(htab, &sites[i], by_kind)->counts;
		spin_add(to, &copy);
		to->max_wait_ns = Max(to->max_wait_ns,
							  spin_max_since(&copy, base_contended[i], epoch));
	}
}

/*
 * Sum every slot's counters, minus their baselines, per call site and, if
 * by_kind, kind of process, into a new local hash table of
 * LockStatSpinEntry (in CurrentMemoryContext; key.kind -1 unless by_kind):
 * the counts since the last reset.  Errors: 55000 if not counting (see
 * lockstat_require_ready()); 55P03 if an entry cannot be read consistently.
 */
HTAB *
lockstat_spin_read(bool by_kind)
{
	HTAB	   *htab;
	int			max_sites;
	int			num_slots;
	int			num_baselines;
	LockStatSpinEntry *baselines;
	uint64	   *base_contended;
	uint64		epoch;

	max_sites = lockstat_spin_state->max_sites;
	num_slots = lockstat_spin_state->num_slots;
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
	LWLockAcquire(lockstat_spin_state->lock, LW_SHARED);
	num_baselines = lockstat_spin_state->num_baselines;
	memcpy(baselines, lockstat_spin_state->baselines,
		   sizeof(LockStatSpinEntry) * num_baselines);
	for (int s = 0; s < num_slots; s++)
		memcpy(&base_contended[s * max_sites],
			   lockstat_spin_base_contended(lockstat_spin_slot(s), max_sites),
			   sizeof(uint64) * max_sites);
	epoch = pg_atomic_read_u64(&lockstat_spin_state->reset_epoch);

	for (int s = 0; s < num_slots; s++)
		spin_read_slot(htab, lockstat_spin_slot(s), max_sites,
					   &base_contended[s * max_sites], epoch, by_kind);
	LWLockRelease(lockstat_spin_state->lock);

	spin_subtract_baselines(htab, baselines, num_baselines, by_kind);
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
		LockStatSpinSlot *slot = lockstat_spin_slot(s);
		volatile LockStatSpinCounters *counters = lockstat_spin_counters(slot, max_sites);
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
 * The names and kinds of a new baseline, in a new local hash table of
 * LockStatSpinEntry (in CurrentMemoryContext): the copied counters of every
 * slot's first nsites[s] entries summed per site name and kind, and every
 * name and kind of the current baseline, with zero counts if no copy has
 * it.  Called under the exclusive lock.
 */
static HTAB *
spin_sum_copies(const LockStatSpinCounters *copy, const uint32 *nsites,
				int num_slots, int max_sites)
{
	HTAB	   *htab = spin_new_table();

	for (int s = 0; s < num_slots; s++)
	{
		LockStatSpinSite *sites = lockstat_spin_sites(lockstat_spin_slot(s));

		for (uint32 i = 0; i < nsites[s]; i++)
			spin_add(&spin_read_entry(htab, &sites[i], true)->counts,
					 &copy[s * max_sites + i]);
	}
	for (int b = 0; b < lockstat_spin_state->num_baselines; b++)
		(void) spin_key_entry(htab, &lockstat_spin_state->baselines[b].key);
	return htab;
}

/*
 * Raise each site name's and kind's baseline to its sum in htab
 * (spin_sum_copies()), never lowering it, and make htab's names and kinds
 * the baseline's.  Called under
 * the exclusive lock, with no more names in htab than the baseline holds.
 */
static void
spin_raise_baselines(HTAB *htab)
{
	HASH_SEQ_STATUS seq;
	LockStatSpinEntry *entry;
	int			n;

	for (int b = 0; b < lockstat_spin_state->num_baselines; b++)
	{
		LockStatSpinEntry *old = &lockstat_spin_state->baselines[b];
		uint64	   *now = (uint64 *) &spin_key_entry(htab, &old->key)->counts;
		const uint64 *then = (const uint64 *) &old->counts;

		for (int w = 0; w < LOCKSTAT_SPIN_SUM_WORDS; w++)
			now[w] = Max(now[w], then[w]);
	}
	n = 0;
	hash_seq_init(&seq, htab);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		Assert(n < LOCKSTAT_SPIN_BASELINES(lockstat_spin_state->max_sites));
		lockstat_spin_state->baselines[n++] = *entry;
	}
	lockstat_spin_state->num_baselines = n;
}

/*
 * Raise the contended count at the last reset of every slot's first
 * nsites[s] entries to that of its copy.  Called under the exclusive lock.
 */
static void
spin_raise_base_contended(const LockStatSpinCounters *copy,
						  const uint32 *nsites, int num_slots, int max_sites)
{
	for (int s = 0; s < num_slots; s++)
	{
		uint64	   *base = lockstat_spin_base_contended(lockstat_spin_slot(s), max_sites);

		for (uint32 i = 0; i < nsites[s]; i++)
			base[i] = Max(base[i], copy[s * max_sites + i].core.contended);
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
 * epoch (see the locking rules of lockstat_spin.c), and an entry whose
 * owner stalls in between keeps its first copy, which is older but whole.
 * Entries registered after the first copy had no counts then and keep none
 * in the baseline.  Each site name's and kind's baseline is raised to its
 * sum over the copies, never lowered.  Errors: 55P03 if an entry cannot be
 * read consistently, 53400 if the slots have more site names and kinds
 * than the baseline can hold, both before the epoch is raised.
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

	if (lockstat_spin_state == NULL)
		return;
	max_sites = lockstat_spin_state->max_sites;
	num_slots = lockstat_spin_state->num_slots;
	max_baselines = LOCKSTAT_SPIN_BASELINES(max_sites);
	copy = palloc0(mul_size(sizeof(LockStatSpinCounters),
							mul_size(max_sites, num_slots)));
	nsites = palloc0(mul_size(sizeof(uint32), num_slots));

	LWLockAcquire(lockstat_spin_state->lock, LW_EXCLUSIVE);
	spin_copy_all(copy, nsites, num_slots, max_sites, false);

	/* the names and kinds of the new baseline: those copied, the old ones */
	htab = spin_sum_copies(copy, nsites, num_slots, max_sites);
	if (hash_get_num_entries(htab) > max_baselines)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("too many spin wait call sites to reset"),
				 errdetail("The processes have counted spin waits at %lld call sites and kinds of process, and the reset baseline holds %d.",
						   (long long) hash_get_num_entries(htab),
						   max_baselines),
				 errhint("Raise \"pg_lockstat.max_spin_sites\" and restart the server.")));
	hash_destroy(htab);

	pg_atomic_fetch_add_u64(&lockstat_spin_state->reset_epoch, 1);
	spin_copy_all(copy, nsites, num_slots, max_sites, true);

	htab = spin_sum_copies(copy, nsites, num_slots, max_sites);
	spin_raise_baselines(htab);
	spin_raise_base_contended(copy, nsites, num_slots, max_sites);
	LWLockRelease(lockstat_spin_state->lock);

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

	for (int s = 0; s < lockstat_spin_state->num_slots; s++)
		dropped += lockstat_spin_slot(s)->dropped;
	return dropped;
}
