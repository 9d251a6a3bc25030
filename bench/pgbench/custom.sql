-- A customer's mix on pgbench's tables, in pgbench's script language: zipfian accounts,
-- a read whose result decides the write (\gset, \if), a teller picked by hash, a
-- gaussian delta. bench/compare-pgbench.sh runs it under plumb and under pgbench -f.
\set aid random_zipfian(1, 100000 * :scale, 1.1)
\set tid abs(hash(:aid)) % (10 * :scale) + 1
\set delta random_gaussian(-5000, 5000, 2.5)
BEGIN;
SELECT abalance AS bal FROM pgbench_accounts WHERE aid = :aid \gset
\if :bal < 0
  UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
\else
  UPDATE pgbench_accounts SET abalance = abalance - :delta WHERE aid = :aid;
\endif
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
END;
