-- wal-insert: small writes with synchronous_commit = off.
--
-- Stresses: WAL insertion (the WALInsert locks and the insert-position
-- spinlock) without waiting for WAL flushes, so that commits do not queue
-- on WALWrite and insertion itself becomes the bottleneck.
-- pgbench-options: -M prepared
\set aid random(1, 100000 * :scale)
\set delta random(-5000, 5000)
SET synchronous_commit = off;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
