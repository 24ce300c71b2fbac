--
-- guc: definitions in pg_settings, and invalid values
--
\set VERBOSITY terse

SELECT name, setting, unit, context, vartype, boot_val, reset_val,
       min_val, max_val, enumvals
FROM pg_settings
WHERE name LIKE 'pg_lockstat.%'
ORDER BY name;

-- postmaster settings cannot change at run time
SET pg_lockstat.spin_strategy = 'tas';
SET pg_lockstat.max_tranches = 512;
-- invalid values
SET pg_lockstat.track = 'maybe';
SET pg_lockstat.track = '';
SET pg_lockstat.track = 1.5;
-- the prefix is reserved
SET pg_lockstat.no_such_setting = 1;
-- nothing changed
SELECT name, setting FROM pg_settings
WHERE name LIKE 'pg_lockstat.%' ORDER BY name;

-- pg_lockstat.track is superuser-settable; when off, nothing is counted
SELECT pg_lockstat_reset() IS NOT NULL AS reset;
SET pg_lockstat.track = off;
SELECT lockstat_test_lwlock('exclusive', 10);
SELECT count(*) AS counted FROM pg_lwlock_stats WHERE tranche = 'lockstat_test';
RESET pg_lockstat.track;
SELECT lockstat_test_lwlock('exclusive', 10);
SELECT ex_acquires FROM pg_lwlock_stats WHERE tranche = 'lockstat_test';
SELECT track FROM pg_lockstat_status;

-- ALTER SYSTEM validates every value and writes nothing when it is bad
\set VERBOSITY default
ALTER SYSTEM SET pg_lockstat.spin_strategy = 'fastest';
ALTER SYSTEM SET pg_lockstat.spin_strategy = '';
ALTER SYSTEM SET pg_lockstat.spin_strategy = 1;
ALTER SYSTEM SET pg_lockstat.max_tranches = 10;
ALTER SYSTEM SET pg_lockstat.max_tranches = 70000;
ALTER SYSTEM SET pg_lockstat.max_tranches = 'abc';
ALTER SYSTEM SET pg_lockstat.max_tranches = '';
ALTER SYSTEM SET pg_lockstat.track = 'maybe';
ALTER SYSTEM SET pg_lockstat.track = '';
\set VERBOSITY terse
SELECT count(*) AS written FROM pg_file_settings
WHERE name LIKE 'pg_lockstat.%';
-- SET of the reloadable setting with empty and out-of-domain values
SET pg_lockstat.track = 2;
SET pg_lockstat.track = 'on;off';
SHOW pg_lockstat.track;
