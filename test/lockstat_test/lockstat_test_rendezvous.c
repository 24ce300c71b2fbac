/*-------------------------------------------------------------------------
 *
 * lockstat_test_rendezvous.c
 *	  lockstat_test_spin_rendezvous(): one contended wait for the test
 *	  spinlock, made on purpose between the first two callers since server
 *	  start, whatever the machine's speed
 *
 * A contended spin wait is otherwise a matter of chance: a holder must be
 * preempted, or two processes must meet, inside a critical section of a few
 * instructions.  Here the first caller takes the test spinlock and keeps it
 * until the second caller is known to be waiting for it: the second caller
 * asks for the spinlock only once the first holds it, so its first test and
 * set fails, and the holder releases only after the spin-wait hook
 * (lst_spin_site() in lockstat_test.c) has counted a wait for the spinlock
 * begun while it held it.  That hook runs at the first spin of a wait inside
 * s_lock(), where pg_lockstat marks the wait as contended, so the wait is
 * one pg_lockstat counts, at this file's call site in
 * lst_rendezvous_wait().  Watching the waiter's CPU time in /proc would only
 * suggest that it spins; the hook says that a wait began.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  test/lockstat_test/lockstat_test_rendezvous.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "lockstat_test.h"

PG_FUNCTION_INFO_V1(lockstat_test_spin_rendezvous);

const char *const lst_rendezvous_file = __FILE__;

/*
 * Longest wait of either caller for the other, in seconds: only a bound on
 * a hang (a second caller that never came, or a process that stopped), not
 * a wait for a time.  The holder waits for the waiter's first spin while it
 * holds the spinlock, which is safe for that long: no process spins on the
 * spinlock meanwhile, or the hook would have counted it and the hold would
 * have ended, so none can PANIC with "stuck spinlock".
 */
#define LST_MAX_RENDEZVOUS_WAIT_S	300

/*
 * Wait, holding nothing and cancellably, until the atomic *value is at
 * least target.  Errors: 57014 naming what it waited for, worded by
 * missing, after LST_MAX_RENDEZVOUS_WAIT_S seconds.
 */
static void
lst_rendezvous_await(pg_atomic_uint64 *value, uint64 target,
					 const char *missing)
{
	instr_time	start;

	INSTR_TIME_SET_CURRENT(start);
	while (pg_atomic_read_u64(value) < target)
	{
		CHECK_FOR_INTERRUPTS();
		if (lst_timed_out(start, LST_MAX_RENDEZVOUS_WAIT_S))
			ereport(ERROR,
					(errcode(ERRCODE_QUERY_CANCELED),
					 errmsg("%s within %d s", missing,
							LST_MAX_RENDEZVOUS_WAIT_S)));
		pg_usleep(1000L);
	}
}

/*
 * The first caller: once the second has arrived, take the test spinlock,
 * say so (rdv_held), and keep it until a wait for it has begun
 * (spin_waits grew past its value under the spinlock), busy-waiting with
 * no system call.  Errors: 57014 after LST_MAX_RENDEZVOUS_WAIT_S seconds
 * without a second caller, or (after releasing) without a wait.
 */
static void
lst_rendezvous_hold(void)
{
	uint32		waits;
	instr_time	start;
	bool		timed_out = false;

	lst_rendezvous_await(&lst_state->rdv_arrivals, 2,
						 "no second caller of lockstat_test_spin_rendezvous() came");

	INSTR_TIME_SET_CURRENT(start);
	SpinLockAcquire(&lst_state->mutex);
	waits = pg_atomic_read_u32(&lst_state->spin_waits);
	/* a full barrier: the waiter sees the flag only after the lock is taken */
	pg_atomic_exchange_u64(&lst_state->rdv_held, 1);
	while (pg_atomic_read_u32(&lst_state->spin_waits) == waits && !timed_out)
	{
		SPIN_DELAY();
		timed_out = lst_timed_out(start, LST_MAX_RENDEZVOUS_WAIT_S);
	}
	SpinLockRelease(&lst_state->mutex);

	if (timed_out)
		ereport(ERROR,
				(errcode(ERRCODE_QUERY_CANCELED),
				 errmsg("the second caller of lockstat_test_spin_rendezvous() did not wait for the test spinlock within %d s",
						LST_MAX_RENDEZVOUS_WAIT_S)));
}

/*
 * The second caller: once the first holds the test spinlock, ask for it.
 * The first keeps it until this wait has begun, so the wait is contended:
 * the only one at this call site (nobody else calls this function), and
 * counted by pg_lockstat here when it ends.  Errors: 57014 after
 * LST_MAX_RENDEZVOUS_WAIT_S seconds without the first caller's hold.
 */
static void
lst_rendezvous_wait(void)
{
	lst_rendezvous_await(&lst_state->rdv_held, 1,
						 "the first caller of lockstat_test_spin_rendezvous() did not take the test spinlock");
	SpinLockAcquire(&lst_state->mutex);
	SpinLockRelease(&lst_state->mutex);
}

/*
 * lockstat_test_spin_rendezvous() returns integer
 *
 * The first two calls since server start meet: the first (which returns 1)
 * takes the test spinlock once the second has come, and holds it until the
 * second (which returns 2) has begun to wait for it, so that exactly one
 * contended wait is counted at lst_rendezvous_wait()'s call site, in
 * pg_spinlock_stats (file lockstat_test_rendezvous.c) and in
 * lockstat_test_spin_waits(), on any machine.  Each caller waits for the
 * other as long as it takes (at most 300 s, a bound on a hang).  Every
 * later call returns 0 at once, touching no lock, so that a workload that
 * calls it again and again adds no other wait.  Errors: 55000 if
 * lockstat_test is not preloaded, or pg_lockstat not preloaded before it;
 * 57014 after 300 s without the other caller (its arrival, its hold or its
 * wait, as the message says), or on cancel while waiting for the other's
 * arrival or hold.
 */
Datum
lockstat_test_spin_rendezvous(PG_FUNCTION_ARGS)
{
	uint64		arrival;

	lst_require_spin_waits();

	arrival = pg_atomic_fetch_add_u64(&lst_state->rdv_arrivals, 1);
	if (arrival == 0)
		lst_rendezvous_hold();
	else if (arrival == 1)
		lst_rendezvous_wait();
	PG_RETURN_INT32(arrival < 2 ? (int32) arrival + 1 : 0);
}
