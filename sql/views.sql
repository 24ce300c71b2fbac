--
-- views: shapes and types of the views, and what they show
--
\set VERBOSITY terse

-- The counters: the attributes of pg_lwlock_counters and the counter
-- columns of pg_spinlock_stats (those between func and max_wait_time) are
-- the lines of the counter table, extension/lockstat_counters.h, from
-- which the install script is made: the same names, types of their units,
-- descriptions and order as the test module, compiled with the table, has
-- them.  No row: no difference.
SELECT kind, count(*) > 0 AS has_lines
FROM lockstat_test_counter_lines() GROUP BY kind ORDER BY kind;
CREATE TEMP VIEW catalog_counters AS
    SELECT 'lwlock' AS kind, a.attnum::integer AS ordinal,
           a.attname::text AS column_name,
           format_type(a.atttypid, a.atttypmod) AS type,
           col_description(a.attrelid, a.attnum) AS description
    FROM pg_attribute a
    WHERE a.attrelid = 'pg_lwlock_counters'::regclass AND a.attnum > 0
    UNION ALL
    SELECT 'spin', a.attnum - 3, a.attname,
           format_type(a.atttypid, a.atttypmod),
           col_description(a.attrelid, a.attnum)
    FROM pg_attribute a
    WHERE a.attrelid = 'pg_spinlock_stats'::regclass
      AND a.attnum > 3 AND a.attname <> 'max_wait_time';
CREATE TEMP VIEW counter_differences AS
    (SELECT 'only in the table' AS "where", * FROM lockstat_test_counter_lines()
     EXCEPT SELECT 'only in the table', * FROM catalog_counters)
    UNION ALL
    (SELECT 'only in the catalog', * FROM catalog_counters
     EXCEPT SELECT 'only in the catalog', * FROM lockstat_test_counter_lines());
SELECT * FROM counter_differences ORDER BY kind, ordinal, "where";
-- a difference shows: a description that is not the table's
BEGIN;
COMMENT ON COLUMN pg_lwlock_counters.dequeue_self IS 'another description';
SELECT "where", kind, column_name, description = 'another description' AS changed
FROM counter_differences ORDER BY kind, ordinal, "where";
ROLLBACK;
SELECT attname FROM pg_attribute
WHERE attrelid = 'pg_spinlock_stats'::regclass AND attnum > 0
  AND (attnum <= 3 OR attname = 'max_wait_time')
ORDER BY attnum;
SELECT max(attnum) = (SELECT attnum FROM pg_attribute
                      WHERE attrelid = 'pg_spinlock_stats'::regclass
                        AND attname = 'max_wait_time') AS max_wait_time_last
FROM pg_attribute
WHERE attrelid = 'pg_spinlock_stats'::regclass AND attnum > 0;
-- pg_spinlock_backend_type_stats: backend_type, then the columns of
-- pg_spinlock_stats with their types, the counters with their descriptions
SELECT attname, format_type(atttypid, atttypmod)
FROM pg_attribute
WHERE attrelid = 'pg_spinlock_backend_type_stats'::regclass AND attnum = 1;
SELECT count(*) = (SELECT count(*) FROM pg_attribute
                   WHERE attrelid = 'pg_spinlock_backend_type_stats'::regclass
                     AND attnum > 1) AS every_column,
       bool_and(k.attname = s.attname AND k.atttypid = s.atttypid
                AND k.atttypmod = s.atttypmod) AS same_names_and_types,
       bool_and(col_description(k.attrelid, k.attnum) IS NOT DISTINCT FROM
                col_description(s.attrelid, s.attnum))
           FILTER (WHERE s.attnum > 3 AND s.attname <> 'max_wait_time')
           AS counters_described_alike
FROM pg_attribute s
JOIN pg_attribute k ON k.attrelid = 'pg_spinlock_backend_type_stats'::regclass
                   AND k.attnum = s.attnum + 1
WHERE s.attrelid = 'pg_spinlock_stats'::regclass AND s.attnum > 0;
SELECT a.attname
FROM pg_attribute a
WHERE a.attrelid = 'pg_spinlock_backend_type_stats'::regclass AND a.attnum > 0
  AND col_description(a.attrelid, a.attnum) IS NULL;

-- Columns and types.  In the LWLock views the attributes of
-- pg_lwlock_counters, checked above against the counter table, are shown as
-- one row, "(pg_lwlock_counters)": all of them, in their order and with
-- their types, at that place (or how many are there, if not all).
CREATE FUNCTION pg_temp.view_columns(rel regclass)
RETURNS TABLE (attname text, format_type text)
LANGUAGE sql AS $$
    WITH t AS (
        SELECT attnum, attname, atttypid, atttypmod
        FROM pg_attribute
        WHERE attrelid = 'pg_lwlock_counters'::regclass AND attnum > 0
    ), v AS (
        SELECT attnum, attname, atttypid, atttypmod
        FROM pg_attribute
        WHERE attrelid = rel AND attnum > 0
    ), block AS (
        -- the view's columns that are the type's attributes, in their
        -- order from the place of the first one
        SELECT v.attnum
        FROM v JOIN t USING (attname, atttypid, atttypmod)
        WHERE v.attnum - t.attnum =
              (SELECT min(v.attnum) - 1 FROM v JOIN t USING (attname))
    )
    SELECT attname, format_type
    FROM (SELECT attname::text, format_type(atttypid, atttypmod), attnum
          FROM v WHERE attnum NOT IN (SELECT attnum FROM block)
          UNION ALL
          SELECT '(pg_lwlock_counters)',
                 CASE WHEN count(*) = (SELECT count(*) FROM t)
                      THEN 'every attribute, in order'
                      ELSE count(*) || ' of ' || (SELECT count(*) FROM t)
                 END,
                 min(attnum)
          FROM block
          HAVING count(*) > 0) AS c
    ORDER BY attnum
$$;
SELECT * FROM pg_temp.view_columns('pg_lwlock_stats');

SELECT attname, format_type(atttypid, atttypmod)
FROM pg_attribute
WHERE attrelid = 'pg_lockstat_status'::regclass AND attnum > 0
ORDER BY attnum;

SELECT * FROM pg_temp.view_columns('pg_lwlock_backend_stats');

SELECT * FROM pg_temp.view_columns('pg_lwlock_backend_type_stats');

SELECT attname, format_type(atttypid, atttypmod)
FROM pg_attribute
WHERE attrelid = 'pg_lwlock_query_stats'::regclass AND attnum > 0
ORDER BY attnum;
SELECT attname, format_type(atttypid, atttypmod)
FROM pg_attribute
WHERE attrelid = 'pg_lwlock_blockers'::regclass AND attnum > 0
ORDER BY attnum;

-- every view and column is documented
SELECT c.relname, a.attname
FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
WHERE c.relname IN ('pg_lwlock_stats', 'pg_lwlock_backend_stats',
                    'pg_lwlock_backend_type_stats', 'pg_lwlock_query_stats')
  AND a.attnum > 0
  AND col_description(c.oid, a.attnum) IS NULL;
SELECT relname FROM pg_class
WHERE relname IN ('pg_lwlock_stats', 'pg_lwlock_backend_stats',
                  'pg_lwlock_backend_type_stats', 'pg_lwlock_query_stats',
                  'pg_lockstat_status')
  AND obj_description(oid, 'pg_class') IS NULL;

-- one status row; the strategy is read back from the server core
SELECT spin_strategy, track, core_patch_version, max_tranches,
       process_slots > 0 AS has_slots,
       stats_reset <= now() AS reset_in_past
FROM pg_lockstat_status;

-- the per-query table: its limit, never exceeded, and query IDs as
-- compute_query_id says
SELECT max_query_entries, query_entries <= max_query_entries AS within_limit,
       query_entries_evicted, query_waits_unattributed
FROM pg_lockstat_status;
SET compute_query_id = on;
SELECT query_ids_available FROM pg_lockstat_status;
SET compute_query_id = off;
SELECT query_ids_available FROM pg_lockstat_status;
RESET compute_query_id;

-- a single session blocks on nothing: no row of the test tranche; every
-- row has a block or a sampled hold, and longest waits and holds within
-- their totals
SELECT count(*) AS test_rows FROM pg_lwlock_query_stats
WHERE tranche = 'lockstat_test';
SELECT count(*) AS bad_rows FROM pg_lwlock_query_stats
WHERE (blocks <= 0 AND sh_hold_samples + ex_hold_samples <= 0)
   OR max_wait_time > wait_time
   OR max_ex_hold_time > ex_hold_time OR max_sh_hold_time > sh_hold_time
   OR (queryid IS NOT NULL AND backend_type IS NOT NULL);
-- every row of pg_lwlock_blockers has a block; the holder's query ID and
-- kind are never both set, and its mode is known with either; the same of
-- the root holder, which is known exactly when the holder is
SELECT count(*) AS bad_blocker_rows FROM pg_lwlock_blockers
WHERE blocks <= 0 OR max_wait_time > wait_time
   OR (holder_queryid IS NOT NULL AND holder_backend_type IS NOT NULL)
   OR ((holder_queryid IS NOT NULL OR holder_backend_type IS NOT NULL)
       <> (holder_mode IS NOT NULL))
   OR holder_mode NOT IN ('exclusive', 'shared')
   OR (root_queryid IS NOT NULL AND root_backend_type IS NOT NULL)
   OR ((root_queryid IS NOT NULL OR root_backend_type IS NOT NULL)
       <> (root_mode IS NOT NULL))
   OR root_mode NOT IN ('exclusive', 'shared')
   OR (holder_mode IS NULL) <> (root_mode IS NULL);

-- a query touches shared buffers: BufferMapping and BufferContent show up,
-- named as pg_stat_activity.wait_event names them
SELECT count(*) > 0 FROM pg_class;
SELECT tranche, tranche_id > 0 AS has_id
FROM pg_lwlock_stats
WHERE tranche IN ('BufferMapping', 'BufferContent')
ORDER BY tranche;

-- names match the tranche IDs of the LWLock wait events, except for the
-- tranches of extensions (ours, which a reset and every read take, and any
-- other preloaded library's, such as pg_stat_statements'), whose IDs are
-- LWTRANCHE_FIRST_USER_DEFINED or more; before 17, which
-- has no pg_wait_events, every row has a name other than that of an
-- unknown tranche ("extension") and no name appears twice
SELECT pg_lockstat_reset() IS NOT NULL AS reset;
-- a tranche of another extension, with a name that no wait event has
SELECT lockstat_test_dynamic_tranches(1, 1);
SELECT count(*) AS other_extension_rows FROM pg_lwlock_stats
WHERE tranche = 'lockstat_test_dynamic' AND tranche_id IS NOT NULL;
CREATE FUNCTION pg_temp.mismatched_tranche_names() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    IF to_regclass('pg_catalog.pg_wait_events') IS NOT NULL THEN
        EXECUTE $q$
            SELECT count(*) FROM pg_lwlock_stats s
            WHERE s.tranche_id IS NOT NULL
              AND s.tranche IS DISTINCT FROM
                  (SELECT name FROM pg_wait_events
                   WHERE type = 'LWLock' AND name = s.tranche)
              AND s.tranche_id < lockstat_test_first_user_tranche()$q$ INTO n;
    ELSE
        EXECUTE $q$
            SELECT count(*) FROM pg_lwlock_stats s
            WHERE s.tranche_id IS NOT NULL
              AND (s.tranche IS NULL OR s.tranche IN ('', 'extension')
                   OR (SELECT count(*) FROM pg_lwlock_stats t
                       WHERE t.tranche = s.tranche) > 1)$q$ INTO n;
    END IF;
    RETURN n;
END
$$;
SELECT pg_temp.mismatched_tranche_names() AS mismatched;

-- nothing is implausibly large: a count below its reset's baseline would
-- be a uint64 above 2^63, which the view shows as the largest bigint
SELECT count(*) AS huge_rows
FROM pg_lwlock_stats
WHERE sh_acquires > 1e15 OR ex_acquires > 1e15 OR blocks > 1e15
   OR spin_delays > 1e15 OR dequeue_self > 1e15 OR wait_time > 1e9;

-- The counter columns of the LWLock views are the attributes of
-- pg_lwlock_counters, each with its attribute's description; a view's
-- other columns have descriptions of their own.
SELECT v.attrelid::regclass AS view,
       count(*) = (SELECT count(*) FROM pg_attribute
                   WHERE attrelid = 'pg_lwlock_counters'::regclass
                     AND attnum > 0) AS every_counter,
       bool_and(col_description(v.attrelid, v.attnum)
                IS NOT DISTINCT FROM
                col_description(t.attrelid, t.attnum)) AS described
FROM pg_attribute t
JOIN pg_attribute v ON v.attname = t.attname AND v.attnum > 0
WHERE t.attrelid = 'pg_lwlock_counters'::regclass AND t.attnum > 0
  AND v.attrelid IN ('pg_lwlock_stats'::regclass,
                     'pg_lwlock_instance_stats'::regclass,
                     'pg_lwlock_backend_stats'::regclass,
                     'pg_lwlock_backend_type_stats'::regclass)
GROUP BY 1 ORDER BY 1::text;
SELECT c.relname, a.attname
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relname LIKE 'pg\_lwlock\_%' AND c.relkind IN ('v', 'c')
  AND a.attnum > 0 AND col_description(a.attrelid, a.attnum) IS NULL;

-- A pg_lwlock_counters that does not match the library's counters (as
-- after installing the SQL script of another release) is an error, not a
-- wrong column.  The numbers of the message depend on the counter table:
-- they are shown as N, and numbers_right checks them against the table (n
-- LWLock lines): "has n + 1 attributes, where ... has n LWLock counters",
-- or "attribute k ... where pg_lockstat's library has "<the k-th line's
-- column>"".
CREATE FUNCTION pg_temp.counters_error(query text,
    OUT code text, OUT message text, OUT numbers_right boolean,
    OUT hint text)
LANGUAGE plpgsql AS $$
DECLARE
    n integer;
    m text[];
BEGIN
    SELECT count(*) INTO n
    FROM lockstat_test_counter_lines() WHERE kind = 'lwlock';
    EXECUTE query;
    code := 'no error';
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS code = RETURNED_SQLSTATE,
        message = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
    m := regexp_match(message, '^type pg_lwlock_counters has (\d+) attributes, '
                      'where pg_lockstat''s library has (\d+) LWLock counters$');
    IF m IS NOT NULL THEN
        numbers_right := m[1]::integer = n + 1 AND m[2]::integer = n;
    ELSE
        m := regexp_match(message, '^attribute (\d+) of type pg_lwlock_counters '
                          'is .*, where pg_lockstat''s library has "(\w+)"');
        numbers_right := m[1]::integer =
            (SELECT ordinal FROM lockstat_test_counter_lines()
             WHERE kind = 'lwlock' AND column_name = m[2]);
    END IF;
    message := regexp_replace(message, '\d+', 'N', 'g');
END
$$;
\x on
BEGIN;
ALTER TYPE pg_lwlock_counters RENAME ATTRIBUTE dequeue_self TO dequeued;
SELECT * FROM pg_temp.counters_error('SELECT count(*) FROM pg_lwlock_stats');
ROLLBACK;
BEGIN;
ALTER TYPE pg_lwlock_counters ADD ATTRIBUTE extra bigint;
SELECT * FROM pg_temp.counters_error('SELECT count(*) FROM pg_lwlock_backend_stats');
ROLLBACK;
BEGIN;
ALTER TYPE pg_lwlock_counters ADD ATTRIBUTE extra bigint;
ALTER TYPE pg_lwlock_counters DROP ATTRIBUTE extra;
SELECT * FROM pg_temp.counters_error('SELECT count(*) FROM pg_lwlock_backend_stats');
ROLLBACK;
BEGIN;
ALTER TYPE pg_lwlock_counters RENAME ATTRIBUTE wait_time TO waited;
SELECT * FROM pg_temp.counters_error('SELECT count(*) FROM pg_lwlock_instance_stats');
ROLLBACK;
BEGIN;
ALTER TYPE pg_lwlock_counters ADD ATTRIBUTE extra bigint;
SELECT * FROM pg_temp.counters_error('SELECT count(*) FROM pg_lwlock_backend_type_stats');
ROLLBACK;
\x off
SELECT count(*) > 0 AS still_reads FROM pg_lwlock_stats;
