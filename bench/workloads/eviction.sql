-- eviction: pgbench -S lookups on a buffer pool far smaller than the data.
--
-- Stresses: buffer replacement.  With 1 MB of shared buffers (128 pages)
-- and a scale-10 database (about 160 MB), nearly every lookup evicts a
-- page: the BufferMapping partition locks, the freelist spinlocks of the
-- shared buffer-table hash (dynahash.c get_hash_entry and
-- hash_search_with_hash_value, the partitioned-dynahash thread), the
-- buffer header locks (bufmgr.c WaitBufHdrUnlocked) and the LWLock
-- wait-list lock all contend, even on 2 CPUs, where pgbench -S with the
-- whole database in shared buffers shows no contended spin wait.  The
-- pages come from the kernel's page cache, not the disk.
-- pgbench-options: -M prepared
-- server-settings: shared_buffers = 1MB
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
