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

-- a second reset right away
SELECT pg_lockstat_reset() >= :'reset_at' AS not_backwards;
SELECT count(*) AS bad_rows FROM pg_lwlock_stats
WHERE sh_acquires < 0 OR ex_acquires < 0 OR blocks < 0 OR wait_time < 0;
