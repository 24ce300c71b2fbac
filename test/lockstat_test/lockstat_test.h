/*-------------------------------------------------------------------------
 *
 * lockstat_test.h
 *	  The shared state of the test-only module lockstat_test, and the
 *	  helpers its files share
 *
 * lockstat_test.c owns the shared memory, the spin-wait hook and the
 * spinlock functions; lockstat_test_lwlock.c has the LWLock functions and
 * lockstat_test_rendezvous.c the rendezvous on the test spinlock.  The
 * waits for the test spinlock are counted (spin_waits) at the call sites of
 * lockstat_test.c and lockstat_test_rendezvous.c alone, which are the only
 * files that take it.
 *
 * Copyright (c) 2026, pg_lockstat developers
 *
 * IDENTIFICATION
 *	  test/lockstat_test/lockstat_test.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef LOCKSTAT_TEST_H
#define LOCKSTAT_TEST_H

#include "port/atomics.h"
#include "portability/instr_time.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

typedef struct LockStatTestState
{
	LWLock	   *lock;			/* the one lock of tranche "lockstat_test" */
	slock_t		mutex;			/* the test spinlock */
	uint64		spin_counter;	/* incremented under mutex */
	pg_atomic_uint64 releases;	/* lockstat_test_release() calls */
	pg_atomic_uint32 spin_waits;	/* contended waits begun for mutex */
	/* lockstat_test_spin_rendezvous() calls since server start */
	pg_atomic_uint64 rdv_arrivals;
	/* 1 once its first caller holds mutex, waiting for the second */
	pg_atomic_uint64 rdv_held;
} LockStatTestState;

/* in shared memory; NULL unless preloaded */
extern LockStatTestState *lst_state;

/* __FILE__ of lockstat_test_rendezvous.c, for the spin-wait hook */
extern const char *const lst_rendezvous_file;

/*
 * Longest LWLock hold of the functions that sleep while holding one, in
 * microseconds: waiters for an LWLock cannot be cancelled.
 */
#define LST_MAX_LWLOCK_HOLD_US		1000000

/*
 * Longest wait of the hold-until-released functions for their release, in
 * seconds.  Only a bound on a test that died before it released them: a
 * holder of an LWLock cannot be cancelled, so it gives up by itself.
 */
#define LST_MAX_RELEASE_WAIT_S		600

extern void lst_require_ready(void);
extern void lst_require_spin_waits(void);
extern void lst_check_counts(int32 n, int32 hold_us, int32 max_hold_us);
extern void lst_busy_wait(int32 hold_us);
extern bool lst_timed_out(instr_time start, int max_wait_s);
extern bool lst_released(uint64 releases, instr_time start, int max_wait_s,
						 bool *timed_out);

#endif							/* LOCKSTAT_TEST_H */
