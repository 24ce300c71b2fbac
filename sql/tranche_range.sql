--
-- tranche_range: the range of pg_lockstat.max_tranches, which depends on the
-- major.  The minimum is the first tranche ID for extensions
-- (LWTRANCHE_FIRST_USER_DEFINED: 95 on PostgreSQL 18, 75 on 15; output
-- tranche_range_1.out); the maximum leaves room for the rows of the main
-- LWLock array below 65536.  Values outside it are refused.
--
\set VERBOSITY terse

SELECT name, min_val, max_val
FROM pg_settings
WHERE name = 'pg_lockstat.max_tranches';

ALTER SYSTEM SET pg_lockstat.max_tranches = 10;
ALTER SYSTEM SET pg_lockstat.max_tranches = 70000;
