--
-- permissions: the views are for superusers and pg_read_all_stats; the
-- reset is for superusers and whoever is granted EXECUTE
--
\set VERBOSITY terse

CREATE ROLE regress_lockstat_plain;
CREATE ROLE regress_lockstat_stats IN ROLE pg_read_all_stats;
CREATE ROLE regress_lockstat_monitor IN ROLE pg_monitor;

SET ROLE regress_lockstat_plain;
-- the test module can make others wait: not for plain roles either
SELECT lockstat_test_lwlock('exclusive', 1);
SELECT lockstat_test_spinlock(1);
SELECT count(*) >= 0 FROM pg_lwlock_stats;
SELECT count(*) >= 0 FROM pg_lockstat_status;
SELECT count(*) >= 0 FROM pg_lwlock_stats();
SELECT count(*) >= 0 FROM pg_lwlock_backend_stats;
SELECT count(*) >= 0 FROM pg_lwlock_backend_stats();
SELECT count(*) >= 0 FROM pg_lwlock_backend_type_stats;
SELECT count(*) >= 0 FROM pg_lwlock_backend_type_stats();
SELECT count(*) >= 0 FROM pg_lwlock_query_stats;
SELECT count(*) >= 0 FROM pg_lwlock_query_stats();
SELECT pg_lockstat_reset() IS NOT NULL;
RESET ROLE;

-- the checkpointer takes LWLocks for a checkpoint (its counts since it
-- started, which no reset clears)
CHECKPOINT;
SET ROLE regress_lockstat_stats;
SELECT count(*) > 0 FROM pg_lwlock_stats;
SELECT count(*) FROM pg_lockstat_status;
-- every process, not only the role's own sessions
SELECT count(*) > 0 FROM pg_lwlock_backend_stats
WHERE backend_type = 'checkpointer';
SELECT count(*) >= 0 FROM pg_lwlock_backend_type_stats;
SELECT count(*) >= 0 FROM pg_lwlock_query_stats;
SELECT pg_lockstat_reset() IS NOT NULL;
SET pg_lockstat.track = off;
RESET ROLE;

SET ROLE regress_lockstat_monitor;
SELECT count(*) > 0 FROM pg_lwlock_stats;
SELECT count(*) FROM pg_lockstat_status;
SELECT count(*) > 0 FROM pg_lwlock_backend_stats
WHERE pid = pg_backend_pid();
SELECT pg_lockstat_reset() IS NOT NULL;
RESET ROLE;

-- EXECUTE on the reset can be granted
GRANT EXECUTE ON FUNCTION pg_lockstat_reset() TO regress_lockstat_monitor;
SET ROLE regress_lockstat_monitor;
SELECT pg_lockstat_reset() IS NOT NULL AS reset_by_grantee;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION pg_lockstat_reset() FROM regress_lockstat_monitor;

-- the frozen privilege matrix
SELECT r.rolname, o.obj,
       CASE WHEN o.kind = 'view' THEN has_table_privilege(r.rolname, o.obj, 'SELECT')
            ELSE has_function_privilege(r.rolname, o.obj, 'EXECUTE') END AS allowed
FROM (VALUES ('regress_lockstat_plain'), ('regress_lockstat_stats'),
             ('regress_lockstat_monitor')) AS r(rolname),
     (VALUES ('view', 'pg_lwlock_stats'), ('view', 'pg_lockstat_status'),
             ('view', 'pg_lwlock_backend_stats'),
             ('view', 'pg_lwlock_backend_type_stats'),
             ('view', 'pg_lwlock_query_stats'),
             ('function', 'pg_lwlock_stats()'),
             ('function', 'pg_lwlock_backend_stats()'),
             ('function', 'pg_lwlock_backend_type_stats()'),
             ('function', 'pg_lwlock_query_stats()'),
             ('function', 'pg_lockstat_status()'),
             ('function', 'pg_lockstat_reset()')) AS o(kind, obj)
ORDER BY 1, 2;

DROP ROLE regress_lockstat_plain;
DROP ROLE regress_lockstat_stats;
DROP ROLE regress_lockstat_monitor;
