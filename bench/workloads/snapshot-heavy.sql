-- snapshot-heavy: many short read transactions of several statements.
--
-- Stresses: ProcArrayLock in shared mode and the snapshot code
-- (GetSnapshotData): in READ COMMITTED every statement takes a new
-- snapshot, so five lookups per transaction take five snapshots, against
-- one for pgbench -S.  Asked for in the 2012 TAS_SPIN thread, where
-- pgbench -S was found too weak a spinlock test.
-- pgbench-options: -M prepared
\set aid1 random(1, 100000 * :scale)
\set aid2 random(1, 100000 * :scale)
\set aid3 random(1, 100000 * :scale)
\set aid4 random(1, 100000 * :scale)
\set aid5 random(1, 100000 * :scale)
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid1;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid2;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid3;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid4;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid5;
END;
