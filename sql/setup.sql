--
-- setup: create the extension and the test module.  Needs both libraries in
-- shared_preload_libraries (test/pg_lockstat.conf).
--
CREATE EXTENSION pg_lockstat;
CREATE EXTENSION lockstat_test;
SELECT extname, extversion FROM pg_extension
WHERE extname IN ('pg_lockstat', 'lockstat_test') ORDER BY extname;
