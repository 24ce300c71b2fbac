#!/bin/bash
# Per label: function-level callgrind figures over the backends that ran the
# LWLock sessions (lw) and the spinlock sessions (spin).
cd "$(dirname "$0")"
for label in before after; do
  lw=$(awk -F'|' '$1=="lw"{printf "%s/cg.%s ", L, $2}' L=$label $label/sessions.txt)
  spin=$(awk -F'|' '$1=="spin"{printf "%s/cg.%s ", L, $2}' L=$label $label/sessions.txt)
  echo "=== $label: LWLock backends: $lw"
  python3 cgparse.py LWLockAcquireSlow LWLockStatsWaitStart LWLockStatsWaitEnd LWLockStatsWoken \
    LWLockStatsWaitDone LWLockRelease LWLockReleaseMarked LWLockReleaseInternal LWLockWakeup \
    lockstat_wait_hook lockstat_query_record_wait lockstat_hist_add 'clock_gettime@@GLIBC_2.17' -- $lw
  echo "=== $label: spinlock backends: $spin"
  python3 cgparse.py s_lock perform_spin_delay s_lock_begin_counted_wait finish_spin_delay \
    finish_contended_spin_delay 'clock_gettime@@GLIBC_2.17' -- $spin
done
