--
-- reset: counters restart from zero, stats_reset moves forward
--
\set VERBOSITY terse

SELECT lockstat_test_lwlock('exclusive', 7);
SELECT stats_reset AS before_reset FROM pg_lockstat_status \gset
SELECT pg_lockstat_reset() AS reset_at \gset
SELECT stats_reset = :'reset_at' AS status_shows_reset,
       stats_reset > :'before_reset' AS moved_forward
FROM pg_lockstat_status;
SELECT count(*) AS rows_after_reset FROM pg_lwlock_stats
WHERE tranche = 'lockstat_test';

SELECT lockstat_test_lwlock('exclusive', 3);
SELECT ex_acquires FROM pg_lwlock_stats WHERE tranche = 'lockstat_test';

-- a second reset right away; no count falls below its new baseline (which
-- would show as a uint64 above 2^63: the view shows the largest bigint)
SELECT pg_lockstat_reset() >= :'reset_at' AS not_backwards;
SELECT count(*) AS huge_rows FROM pg_lwlock_stats
WHERE sh_acquires > 1e15 OR ex_acquires > 1e15 OR blocks > 1e15
   OR spin_delays > 1e15 OR dequeue_self > 1e15 OR wait_time > 1e9;
