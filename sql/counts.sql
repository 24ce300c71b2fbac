--
-- counts: exact counts for one session, through lockstat_test
--
\set VERBOSITY terse

SELECT pg_lockstat_reset() IS NOT NULL AS reset;
SELECT count(*) AS rows_after_reset FROM pg_lwlock_stats
WHERE tranche = 'lockstat_test';

SELECT lockstat_test_lwlock('exclusive', 100);
SELECT lockstat_test_lwlock('shared', 50);
-- nobody else holds the lock, so every conditional attempt succeeds
SELECT lockstat_test_lwlock('conditional', 25);
SELECT lockstat_test_lwlock('shared', 0);
SELECT lockstat_test_lwlock('shared', 3, 1000);

-- reading the view twice does not count against lockstat_test
SELECT tranche, sh_acquires, ex_acquires, blocks, spin_delays, dequeue_self,
       wait_time
FROM pg_lwlock_stats WHERE tranche = 'lockstat_test';
SELECT tranche, sh_acquires, ex_acquires, blocks, spin_delays, dequeue_self,
       wait_time
FROM pg_lwlock_stats WHERE tranche = 'lockstat_test';

-- the share columns are relative to all tranches: lockstat_test, which had
-- no block, has no share of them (0, or NULL while no tranche has blocks,
-- which a background process's block anywhere in the server changes)
SELECT coalesce(blk_pct, 0) = 0 AS no_blocks_no_share
FROM pg_lwlock_stats WHERE tranche = 'lockstat_test';

-- spinlock acquisitions without contention do not count as LWLock activity
SELECT lockstat_test_spinlock(1000);
SELECT sh_acquires, ex_acquires FROM pg_lwlock_stats
WHERE tranche = 'lockstat_test';

-- bad arguments
SELECT lockstat_test_lwlock('bogus', 1);
SELECT lockstat_test_lwlock('shared', -1);
SELECT lockstat_test_lwlock('shared', 1, -5);
SELECT lockstat_test_lwlock('shared', 1, 1000001);
SELECT lockstat_test_spinlock(-1);
SELECT lockstat_test_spinlock(1, 1001);
SELECT lockstat_test_lwlock(NULL, 1) IS NULL AS strict;
-- nothing was counted by the failed calls
SELECT sh_acquires, ex_acquires FROM pg_lwlock_stats
WHERE tranche = 'lockstat_test';
