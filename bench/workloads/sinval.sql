-- sinval: catalog changes in every transaction (temporary table create and
-- drop).
--
-- Stresses: the shared invalidation queue (SInvalWrite and SInvalRead
-- LWLocks, and the sinval spinlocks), plus catalog buffer and lock-manager
-- traffic.  Every backend must read every other backend's invalidation
-- messages, which is the sinval traffic the 2012 TAS_SPIN thread asked
-- for.
-- pgbench-options: -M simple
CREATE TEMP TABLE sinval_:client_id (x int);
DROP TABLE sinval_:client_id;
