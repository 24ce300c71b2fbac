--
-- backend_stats: pg_lwlock_backend_stats shows each live process's counts
-- since it started; this session checks its own
--
\set VERBOSITY terse

-- a new session starts from zero, although earlier sessions of this test
-- run took the lockstat_test LWLock and may have used the same process slot
SELECT count(*) AS own_rows_at_start FROM pg_lwlock_backend_stats
WHERE pid = pg_backend_pid() AND tranche = 'lockstat_test';

SELECT lockstat_test_lwlock('exclusive', 1000);
SELECT lockstat_test_lwlock('shared', 20);
-- nobody else holds the lock, so every conditional attempt succeeds
SELECT lockstat_test_lwlock('conditional', 5);

SELECT backend_type, tranche_id IS NOT NULL AS has_id, tranche,
       sh_acquires, ex_acquires, blocks, spin_delays, dequeue_self, wait_time
FROM pg_lwlock_backend_stats
WHERE pid = pg_backend_pid() AND tranche = 'lockstat_test';

-- the same tranche ID as in pg_lwlock_stats
SELECT b.tranche_id = s.tranche_id AS same_id
FROM pg_lwlock_backend_stats b JOIN pg_lwlock_stats s USING (tranche)
WHERE b.pid = pg_backend_pid() AND tranche = 'lockstat_test';

-- pg_lockstat_reset() restarts pg_lwlock_stats, not the per-process counts
SELECT pg_lockstat_reset() IS NOT NULL AS reset;
SELECT count(*) AS total_rows_after_reset FROM pg_lwlock_stats
WHERE tranche = 'lockstat_test';
SELECT sh_acquires, ex_acquires FROM pg_lwlock_backend_stats
WHERE pid = pg_backend_pid() AND tranche = 'lockstat_test';
SELECT lockstat_test_lwlock('exclusive', 1);
SELECT sh_acquires, ex_acquires FROM pg_lwlock_backend_stats
WHERE pid = pg_backend_pid() AND tranche = 'lockstat_test';

-- joins with pg_stat_activity on pid, with the same backend_type
SELECT a.backend_type = b.backend_type AS same_type,
       a.datname = current_database() AS same_db, b.ex_acquires
FROM pg_lwlock_backend_stats b JOIN pg_stat_activity a USING (pid)
WHERE b.pid = pg_backend_pid() AND b.tranche = 'lockstat_test';

-- only rows with activity, one row per process and tranche
SELECT count(*) AS bad_rows
FROM pg_lwlock_backend_stats
WHERE sh_acquires = 0 AND ex_acquires = 0 AND blocks = 0 AND
      spin_delays = 0 AND dequeue_self = 0 AND wait_time = 0;
SELECT count(*) AS duplicates
FROM (SELECT pid, tranche_id FROM pg_lwlock_backend_stats
      GROUP BY pid, tranche_id HAVING count(*) > 1) AS d;
