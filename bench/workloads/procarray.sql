-- procarray: many clients committing tiny write transactions.
--
-- Stresses: ProcArrayLock in exclusive mode at every commit
-- (ProcArrayEndTransaction, group XID clearing) and XidGenLock at XID
-- assignment, with as little other work per transaction as possible; the
-- ProcArrayLock contention measured with LWLOCK_STATS in the 2012-2014
-- threads.  synchronous_commit = off keeps WAL flushes out of the way.
-- pgbench-options: -M prepared
\set aid random(1, 100000 * :scale)
SET synchronous_commit = off;
UPDATE pgbench_accounts SET filler = filler WHERE aid = :aid;
