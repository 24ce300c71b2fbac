/*-------------------------------------------------------------------------
 *
 * lockstat_views_query.c
 *	  SQL-callable functions of pg_lockstat behind the per-query views
 *	  pg_lwlock_query_stats and pg_lwlock_blockers
 *
 * Both read the per-query counts (lockstat_query_table.c), by waiting key
 * or by waiting key and holder, and add each tranche's residual row.
 *
 * One C function per SQL function of pg_lockstat--1.0.sql, of the same
 * name, with one result shape: each checks that its SQL definition has the
 * number of columns it fills.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  extension/lockstat_views_query.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "lockstat_srf.h"

PG_FUNCTION_INFO_V1(pg_lwlock_query_stats);
PG_FUNCTION_INFO_V1(pg_lwlock_blockers);

/* result columns of each function, as pg_lockstat--1.0.sql declares them */
#define PG_LWLOCK_QUERY_STATS_COLS		15
#define PG_LWLOCK_BLOCKERS_COLS			15

/*
 * Put the columns queryid int8, dbid oid, userid oid and backend_type text
 * of a pg_lwlock_query_stats() row for key at values[i]; 0 shows as NULL,
 * and backend_type is NULL for a query's row.  Returns the next column.
 */
static int
lockstat_put_query_key(Datum *values, bool *nulls, int i,
					   const LockStatQueryKey *key)
{
	if (key->queryid != 0)
		values[i++] = Int64GetDatum(key->queryid);
	else
		nulls[i++] = true;
	if (OidIsValid(key->dbid))
		values[i++] = ObjectIdGetDatum(key->dbid);
	else
		nulls[i++] = true;
	if (OidIsValid(key->userid))
		values[i++] = ObjectIdGetDatum(key->userid);
	else
		nulls[i++] = true;
	if (key->queryid != 0)
		nulls[i++] = true;
	else
		values[i++] = CStringGetTextDatum(lockstat_kind_name(key->kind));
	return i;
}

/*
 * Put the columns blocks int8, wait_time float8 (ms) and max_wait_time
 * float8 (ms) of counts c at values[i].  Returns the next column.
 */
static int
lockstat_put_query_waits(Datum *values, int i, const LockStatQueryCounts *c)
{
	values[i++] = lockstat_counter_datum(c->blocks);
	values[i++] = lockstat_ns_as_ms(c->wait_ns);
	values[i++] = lockstat_ns_as_ms(c->max_wait_ns);
	return i;
}

/*
 * Put the columns sh_hold_samples int8, ex_hold_samples int8, sh_hold_time
 * float8 (ms), ex_hold_time float8 (ms), max_ex_hold_time float8 (ms) and
 * max_sh_hold_time float8 (ms) of counts c at values[i].  Returns the next
 * column.
 */
static int
lockstat_put_query_holds(Datum *values, int i, const LockStatQueryCounts *c)
{
	values[i++] = lockstat_counter_datum(c->hold_samples[1]);
	values[i++] = lockstat_counter_datum(c->hold_samples[0]);
	values[i++] = lockstat_ns_as_ms(c->hold_ns[1]);
	values[i++] = lockstat_ns_as_ms(c->hold_ns[0]);
	values[i++] = lockstat_ns_as_ms(c->max_hold_ns[0]);
	values[i++] = lockstat_ns_as_ms(c->max_hold_ns[1]);
	return i;
}

/* does c count anything? */
static inline bool
lockstat_query_counts_any(const LockStatQueryCounts *c)
{
	return c->blocks != 0 || c->hold_samples[0] != 0 || c->hold_samples[1] != 0;
}

/*
 * One row of a per-query view: put the columns of counts c of key (NULL for
 * the residual row of tranche row "row"; overflow if that is the overflow
 * row) at values and nulls, or return false to leave the row out.
 */
typedef bool (*lockstat_query_row_fn) (Datum *values, bool *nulls,
									   const LockStatQueryKey *key, int row,
									   bool overflow,
									   const LockStatQueryCounts *c);

/*
 * The rows of a per-query view of ncols columns: one per entry of the
 * per-query counts (lockstat_query_read(), by holder or not), then one per
 * tranche's residual row, each as put_row() puts it.  Errors: as
 * lockstat_query_read().
 */
static Datum
lockstat_query_srf(FunctionCallInfo fcinfo, int ncols, bool holders,
				   lockstat_query_row_fn put_row)
{
	ReturnSetInfo *rsinfo = lockstat_begin_srf(fcinfo, ncols);
	Datum	   *values = palloc(sizeof(Datum) * ncols);
	bool	   *nulls = palloc(sizeof(bool) * ncols);
	LockStatQueryCounts *residual;
	HTAB	   *htab;
	HASH_SEQ_STATUS seq;
	LockStatQueryEntry *entry;
	int			overflow_row;

	overflow_row = lockstat_overflow_row();
	residual = palloc(sizeof(LockStatQueryCounts) * (overflow_row + 1));
	htab = lockstat_query_read(residual, holders);

	hash_seq_init(&seq, htab);
	while ((entry = hash_seq_search(&seq)) != NULL)
	{
		memset(nulls, 0, sizeof(bool) * ncols);
		if (put_row(values, nulls, &entry->key, entry->key.row,
					entry->key.row == overflow_row, &entry->counts))
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
	}
	for (int row = 0; row <= overflow_row; row++)
	{
		memset(nulls, 0, sizeof(bool) * ncols);
		if (put_row(values, nulls, NULL, row, row == overflow_row,
					&residual[row]))
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
	}

	hash_destroy(htab);
	pfree(residual);
	pfree(values);
	pfree(nulls);
	return (Datum) 0;
}

/* a row of pg_lwlock_query_stats(), for a key that blocked or was sampled */
static bool
lockstat_query_stats_row(Datum *values, bool *nulls,
						 const LockStatQueryKey *key, int row, bool overflow,
						 const LockStatQueryCounts *c)
{
	int			i = 0;

	if (!lockstat_query_counts_any(c))
		return false;
	if (key)
		i = lockstat_put_query_key(values, nulls, i, key);
	else
		for (int n = 0; n < 4; n++)
			nulls[i++] = true;	/* queryid, dbid, userid, backend_type */
	i = lockstat_put_tranche(values, nulls, i, row, overflow);
	i = lockstat_put_query_waits(values, i, c);
	i = lockstat_put_query_holds(values, i, c);
	Assert(i == PG_LWLOCK_QUERY_STATS_COLS);
	return true;
}

/*
 * pg_lwlock_query_stats() returns setof record
 *
 * Blocked LWLock calls and sampled holds since the last reset per query,
 * database, role and tranche, one row per key that blocked or was sampled
 * at least once:
 *	queryid int8		the running query's ID, as pg_stat_statements.queryid
 *						(in a parallel worker, its leader's); NULL for calls
 *						outside any query with an ID
 *	dbid oid			MyDatabaseId; NULL in processes without a database
 *	userid oid			the current user at the call; NULL if none
 *	backend_type text	for a row with queryid NULL, the kind of process
 *						(client backend, checkpointer, parallel worker,
 *						...); NULL for a query's row and for the residual
 *						row of each tranche, where queryid, dbid and userid
 *						are NULL too: the counts whose process's table was
 *						full and the evicted entries
 *	tranche_id int4, tranche text	as in pg_lwlock_stats (NULL and
 *						"overflow" for IDs >= max_tranches)
 *	blocks int8			calls that slept on the process semaphore (count)
 *	wait_time float8	their waits, each from its first sleep until its
 *						last wake-up (ms)
 *	max_wait_time float8	longest of them (ms)
 *	sh_hold_samples int8, ex_hold_samples int8	sampled holds by mode
 *						(count), one acquisition in
 *						pg_lockstat.hold_sample_every
 *	sh_hold_time float8, ex_hold_time float8	their hold times (ms)
 *	max_ex_hold_time float8, max_sh_hold_time float8	longest of them (ms)
 * Per tranche, the rows add up to pg_lwlock_stats' blocks, wait_time and
 * hold columns exactly (read when no call is in progress).  The counts come
 * from the core patch's lwlock_stats_wait_hook, once per blocked call, and
 * lwlock_stats_hold_hook, once per sampled hold.  Errors: 55000 if
 * pg_lockstat is not preloaded; 55P03 if a process's table cannot be read
 * consistently (a process stopped while it counts a call).
 */
Datum
pg_lwlock_query_stats(PG_FUNCTION_ARGS)
{
	return lockstat_query_srf(fcinfo, PG_LWLOCK_QUERY_STATS_COLS, false,
							  lockstat_query_stats_row);
}

/*
 * Put the columns queryid int8, backend_type text and mode text of holder h
 * (a key's holder or root) at values[i]: all NULL when the holder is not
 * known; backend_type NULL when the holder ran a query with an ID.  Returns
 * the next column.
 */
static int
lockstat_put_query_holder(Datum *values, bool *nulls, int i,
						  const LockStatHolder *h)
{
	if (h->kind == LOCKSTAT_HOLDER_NONE)
	{
		for (int c = 0; c < 3; c++)
			nulls[i++] = true;
		return i;
	}
	if (h->queryid != 0)
	{
		values[i++] = Int64GetDatum(h->queryid);
		nulls[i++] = true;
	}
	else
	{
		nulls[i++] = true;
		values[i++] = CStringGetTextDatum(lockstat_kind_name(h->kind));
	}
	values[i++] = CStringGetTextDatum(h->mode == 0 ? "exclusive" : "shared");
	return i;
}

/* a row of pg_lwlock_blockers(), for a key that blocked */
static bool
lockstat_blockers_row(Datum *values, bool *nulls,
					  const LockStatQueryKey *key, int row, bool overflow,
					  const LockStatQueryCounts *c)
{
	int			i = 0;

	if (c->blocks == 0)
		return false;
	i = lockstat_put_tranche(values, nulls, i, row, overflow);
	if (key)
	{
		i = lockstat_put_query_key(values, nulls, i, key);
		i = lockstat_put_query_holder(values, nulls, i, &key->holder);
		i = lockstat_put_query_holder(values, nulls, i, &key->root);
	}
	else
		for (int n = 0; n < 10; n++)
			nulls[i++] = true;	/* the waiter's four, the holders' three each */
	i = lockstat_put_query_waits(values, i, c);
	Assert(i == PG_LWLOCK_BLOCKERS_COLS);
	return true;
}

/*
 * pg_lwlock_blockers() returns setof record
 *
 * Blocked LWLock calls since the last reset per tranche, waiting query
 * (queryid, dbid, userid, backend_type as in pg_lwlock_query_stats) and
 * holder: the process whose release of the lock ended the wait (the core
 * patch's lwlock_stats_wake_hook, which notes it for the waiter), one row
 * per key that blocked at least once:
 *	tranche_id int4, tranche text	as in pg_lwlock_stats
 *	queryid int8, dbid oid, userid oid, backend_type text	the waiter
 *	holder_queryid int8	the holder's running query ID at its release;
 *						NULL if it had none or the holder is not known
 *	holder_backend_type text	the holder's kind of process when it had no
 *						query ID; NULL otherwise
 *	holder_mode text	"exclusive" or "shared": how the holder held the lock
 *						(NULL if not known)
 *	root_queryid int8, root_backend_type text, root_mode text
 *						the same of the root holder: the holder itself, or,
 *						if the holder held the lock from a blocked call of its
 *						own, the root of that call (so along a convoy of
 *						waiters woken one by one, the hold at its head)
 *	blocks int8, wait_time float8 (ms), max_wait_time float8 (ms)
 *						as in pg_lwlock_query_stats
 * A call is counted under the holder that ended its last sleep; calls with
 * no known holder (none ended a sleep while the call was counted: for
 * example one whose waker had not loaded pg_lockstat yet) and the residual
 * rows show NULL holder and root columns, so per tranche the rows add up to pg_lwlock_stats.blocks
 * and wait_time, and per waiting key to pg_lwlock_query_stats.  Errors: as
 * pg_lwlock_query_stats().
 */
Datum
pg_lwlock_blockers(PG_FUNCTION_ARGS)
{
	return lockstat_query_srf(fcinfo, PG_LWLOCK_BLOCKERS_COLS, true,
							  lockstat_blockers_row);
}
