--
-- oldextversions: install version 1.0, check it, update it to 1.1 and
-- then to 1.2, checking each, and compare the result with a fresh install
-- of the default version, 1.2
--
\set VERBOSITY terse

-- Every member of the extension, and every column of its views, with what
-- an update must get right: the definition (for functions the C symbol
-- too), the privileges granted to others than the owner ('default' if
-- none were ever granted or revoked) and the comment.  Reads only the
-- catalogs, so it survives DROP EXTENSION.
CREATE TEMP VIEW lockstat_members AS
WITH member AS (
    SELECT d.classid, d.objid
    FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
    WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
      AND e.extname = 'pg_lockstat'),
obj AS (
    SELECT m.classid, m.objid, 0 AS objsubid,
           coalesce(p.proacl, c.relacl) AS acl,
           coalesce(p.proowner, c.relowner) AS owner,
           p.prosrc AS c_function,
           CASE WHEN p.oid IS NOT NULL THEN pg_get_functiondef(p.oid)
                WHEN c.relkind = 'v' THEN pg_get_viewdef(c.oid)
           END AS definition
    FROM member m
    LEFT JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
    LEFT JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
    UNION ALL
    SELECT m.classid, a.attrelid, a.attnum, a.attacl, c.relowner, NULL,
           format_type(a.atttypid, a.atttypmod)
    FROM member m
    JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
    JOIN pg_attribute a ON a.attrelid = c.oid
    WHERE a.attnum > 0 AND NOT a.attisdropped)
SELECT pg_describe_object(o.classid, o.objid, o.objsubid) AS object,
       CASE WHEN o.acl IS NULL THEN 'default'
            ELSE (SELECT coalesce(string_agg(
                             CASE WHEN x.grantee = 0 THEN 'PUBLIC'
                                  ELSE x.grantee::regrole::text
                             END || ':' || x.privilege_type, ' '
                             ORDER BY 1), 'owner only')
                  FROM aclexplode(o.acl) AS x
                  WHERE x.grantee <> o.owner)
       END AS privileges,
       d.description AS comment,
       o.c_function,
       o.definition
FROM obj o
LEFT JOIN pg_description d
  ON d.classoid = o.classid AND d.objoid = o.objid
 AND d.objsubid = o.objsubid;

-- version 1.0
DROP EXTENSION pg_lockstat;
CREATE EXTENSION pg_lockstat VERSION '1.0';
SELECT extversion FROM pg_extension WHERE extname = 'pg_lockstat';
SELECT object, privileges, comment IS NOT NULL AS commented, c_function
FROM lockstat_members ORDER BY object;

-- its objects work with the current library
SELECT spin_strategy, track, max_tranches FROM pg_lockstat_status;
SELECT pg_lockstat_reset() IS NOT NULL AS reset;
SELECT lockstat_test_lwlock('exclusive', 3);
SELECT ex_acquires FROM pg_lwlock_stats WHERE tranche = 'lockstat_test';
-- 1.1's objects are not there yet
SELECT count(*) FROM pg_lwlock_backend_stats;

SELECT source, target, path FROM pg_extension_update_paths('pg_lockstat')
ORDER BY source, target;

-- update to 1.1
ALTER EXTENSION pg_lockstat UPDATE TO '1.1';
SELECT extversion FROM pg_extension WHERE extname = 'pg_lockstat';
SELECT object, privileges, comment IS NOT NULL AS commented, c_function
FROM lockstat_members ORDER BY object;

-- the updated objects work; the counters were not touched by the update
SELECT spin_strategy, max_tranches, min_spins_per_delay, max_spins_per_delay,
       min_delay_us, max_delay_us, backoff_max_pauses
FROM pg_lockstat_status;
SELECT ex_acquires FROM pg_lwlock_stats WHERE tranche = 'lockstat_test';
SELECT ex_acquires FROM pg_lwlock_backend_stats
WHERE pid = pg_backend_pid() AND tranche = 'lockstat_test';
-- 1.1's pg_spinlock_stats, without max_wait_time, works with the current
-- library; 1.2's histogram is not there yet
SELECT count(*) >= 0 AS spin_view_works FROM pg_spinlock_stats;
SELECT count(*) FROM pg_spinlock_wait_histogram;

-- update to 1.2
ALTER EXTENSION pg_lockstat UPDATE TO '1.2';
SELECT extversion FROM pg_extension WHERE extname = 'pg_lockstat';
SELECT object, privileges, comment IS NOT NULL AS commented, c_function
FROM lockstat_members ORDER BY object;
CREATE TEMP TABLE lockstat_updated AS SELECT * FROM lockstat_members;
SELECT count(*) >= 0 AS spin_view_works FROM pg_spinlock_stats;
SELECT count(*) >= 0 AS histogram_works FROM pg_spinlock_wait_histogram;
SELECT ex_acquires FROM pg_lwlock_stats WHERE tranche = 'lockstat_test';

-- a fresh install of 1.2 has exactly the same members, definitions,
-- privileges and comments
DROP EXTENSION pg_lockstat;
CREATE EXTENSION pg_lockstat;
SELECT extversion FROM pg_extension WHERE extname = 'pg_lockstat';
SELECT 'only after the update' AS found, object
FROM (SELECT * FROM lockstat_updated
      EXCEPT SELECT * FROM lockstat_members) AS u
UNION ALL
SELECT 'only in a fresh install', object
FROM (SELECT * FROM lockstat_members
      EXCEPT SELECT * FROM lockstat_updated) AS f
ORDER BY 1, 2;
SELECT count(*) AS members_compared FROM lockstat_updated;

-- every function and view is documented and none is for PUBLIC
SELECT object FROM lockstat_members
WHERE (object LIKE 'function %' OR object LIKE 'view %')
  AND (comment IS NULL OR privileges LIKE '%PUBLIC%' OR privileges = 'default');

DROP VIEW lockstat_members;
DROP TABLE lockstat_updated;
