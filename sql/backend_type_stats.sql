--
-- backend_type_stats: pg_lwlock_backend_type_stats sums the counts of each
-- kind of process since the last reset, of live and exited processes alike
--
\set VERBOSITY terse

SELECT pg_lockstat_reset() IS NOT NULL AS reset;
SELECT count(*) AS test_rows_after_reset FROM pg_lwlock_backend_type_stats
WHERE tranche = 'lockstat_test';

-- this session's acquisitions, under its kind
SELECT lockstat_test_lwlock('exclusive', 1000);
SELECT lockstat_test_lwlock('shared', 20);
SELECT backend_type, tranche_id IS NOT NULL AS has_id, tranche,
       sh_acquires, ex_acquires, blocks, spin_delays, dequeue_self, wait_time
FROM pg_lwlock_backend_type_stats
WHERE tranche = 'lockstat_test';

-- a session that has exited still counts: this one replaces it
\c
SELECT lockstat_test_lwlock('exclusive', 3);
SELECT backend_type, sh_acquires, ex_acquires
FROM pg_lwlock_backend_type_stats
WHERE tranche = 'lockstat_test';

-- per tranche, the kinds add up to pg_lwlock_stats (nobody else takes
-- the test tranche, so two reads agree)
SELECT s.sh_acquires = k.sh AND s.ex_acquires = k.ex AS kinds_add_up
FROM pg_lwlock_stats s,
     (SELECT sum(sh_acquires) AS sh, sum(ex_acquires) AS ex
      FROM pg_lwlock_backend_type_stats
      WHERE tranche = 'lockstat_test') AS k
WHERE s.tranche = 'lockstat_test';

-- a reset starts every kind again, a live session's counts included
SELECT pg_lockstat_reset() IS NOT NULL AS reset;
SELECT count(*) AS test_rows_after_reset FROM pg_lwlock_backend_type_stats
WHERE tranche = 'lockstat_test';
SELECT lockstat_test_lwlock('shared', 2);
SELECT backend_type, sh_acquires, ex_acquires
FROM pg_lwlock_backend_type_stats
WHERE tranche = 'lockstat_test';

-- the checkpointer takes LWLocks for a checkpoint, under its own kind
CHECKPOINT;
SELECT count(*) > 0 AS checkpointer_rows FROM pg_lwlock_backend_type_stats
WHERE backend_type = 'checkpointer';

-- only rows with activity, one row per kind and tranche, and only names
-- that pg_stat_activity shows
SELECT count(*) AS bad_rows
FROM pg_lwlock_backend_type_stats
WHERE sh_acquires = 0 AND ex_acquires = 0 AND blocks = 0 AND
      spin_delays = 0 AND dequeue_self = 0 AND wait_time = 0 AND
      sh_hold_samples = 0 AND ex_hold_samples = 0;
SELECT count(*) AS duplicates
FROM (SELECT backend_type, tranche_id FROM pg_lwlock_backend_type_stats
      GROUP BY backend_type, tranche_id HAVING count(*) > 1) AS d;
SELECT count(*) AS unknown_kinds
FROM pg_lwlock_backend_type_stats
WHERE backend_type NOT IN ('client backend', 'autovacuum launcher',
                           'autovacuum worker', 'background worker',
                           'parallel worker', 'background writer',
                           'checkpointer', 'io worker', 'logical replication launcher',
                           'logical replication worker', 'slotsync worker',
                           'standalone backend', 'startup', 'walreceiver',
                           'walsender', 'walsummarizer', 'walwriter',
                           'archiver', 'logger', 'dead-end client backend');
