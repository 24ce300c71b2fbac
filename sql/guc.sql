--
-- guc: definitions in pg_settings, and invalid values
--
\set VERBOSITY terse

-- (the range of pg_lockstat.max_tranches depends on the major: the test
-- tranche_range shows it)
SELECT name, setting, unit, context, vartype, boot_val, reset_val,
       CASE WHEN name = 'pg_lockstat.max_tranches' THEN 'tranche_range' ELSE min_val END AS min_val,
       CASE WHEN name = 'pg_lockstat.max_tranches' THEN 'tranche_range' ELSE max_val END AS max_val,
       enumvals
FROM pg_settings
WHERE name LIKE 'pg_lockstat.%'
ORDER BY name;

-- the spin strategy's description says how to change it: the refusal of
-- SET below says only that a restart is needed
SELECT short_desc LIKE '%set at server start%' AS short_says_start,
       extra_desc LIKE 'Takes effect at server start: set it in postgresql.conf or with ALTER SYSTEM, then restart.%' AS extra_says_how
FROM pg_settings WHERE name = 'pg_lockstat.spin_strategy';

-- postmaster settings cannot change at run time, reloadable ones only by
-- reloading
SET pg_lockstat.spin_strategy = 'tas';
SET pg_lockstat.max_tranches = 512;
SET pg_lockstat.min_delay_us = 2000;
SET pg_lockstat.backoff_max_pauses = 8;
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
ALTER SYSTEM SET pg_lockstat.max_tranches = 'abc';
ALTER SYSTEM SET pg_lockstat.max_tranches = '';
ALTER SYSTEM SET pg_lockstat.track = 'maybe';
ALTER SYSTEM SET pg_lockstat.track = '';
-- spin-and-sleep limits: out of range, wrong type, empty, wrong unit, and a
-- minimum above its maximum (or a maximum below its minimum) in force
ALTER SYSTEM SET pg_lockstat.min_spins_per_delay = 0;
ALTER SYSTEM SET pg_lockstat.max_spins_per_delay = 1000001;
ALTER SYSTEM SET pg_lockstat.min_spins_per_delay = 'abc';
ALTER SYSTEM SET pg_lockstat.max_spins_per_delay = '';
ALTER SYSTEM SET pg_lockstat.min_delay_us = 0;
ALTER SYSTEM SET pg_lockstat.max_delay_us = 11000000;
ALTER SYSTEM SET pg_lockstat.min_delay_us = '1 kB';
ALTER SYSTEM SET pg_lockstat.backoff_max_pauses = 0;
ALTER SYSTEM SET pg_lockstat.backoff_max_pauses = 65537;
ALTER SYSTEM SET pg_lockstat.min_spins_per_delay = 1001;
ALTER SYSTEM SET pg_lockstat.max_spins_per_delay = 9;
ALTER SYSTEM SET pg_lockstat.min_delay_us = 2000000;
ALTER SYSTEM SET pg_lockstat.max_delay_us = 999;
\set VERBOSITY terse
SELECT count(*) AS written FROM pg_file_settings
WHERE name LIKE 'pg_lockstat.%';
-- SET of the reloadable setting with empty and out-of-domain values
SET pg_lockstat.track = 2;
SET pg_lockstat.track = 'on;off';
SHOW pg_lockstat.track;
