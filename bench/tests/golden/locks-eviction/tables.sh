#!/bin/bash
# tables (b) and (c) and the lock shares of bench/run-study.sh (4e541ba),
# the queries copied from it, on study_locks and study_spins loaded from a
# study's locks.csv and spins.csv; TIE=", 1" appends the lock name (b) or
# the function (c) to the ORDER BY, the tie-break of bench/lockstudy;
# NAMES, MAX_CLIENTS and REPEAT: the variants, the highest client count
# and the rounds of the study (default: those of locks-eviction).
set -euo pipefail
noun=variant names=${NAMES:-tas ttas} max_clients=${MAX_CLIENTS:-4} REPEAT=${REPEAT:-6} TIE=${TIE:-}
for s in $names; do
	echo
	echo "(b) top 10 LWLocks by blocks: $noun $s, $max_clients clients, sum of $REPEAT rounds"
	psql -X -q -v ON_ERROR_STOP=1 -P footer=off -c "
		SELECT tranche AS lock, sum(sh_acquires + ex_acquires) AS acquires,
		       sum(blocks) AS \"Blk\", sum(spin_delays) AS \"SpinDelay\",
		       round((100 * sum(blocks) / nullif(sum(sum(blocks)) OVER (), 0))::numeric, 2) AS \"Blk %\",
		       round((100 * sum(spin_delays) / nullif(sum(sum(spin_delays)) OVER (), 0))::numeric, 2) AS \"SpinDelay %\",
		       round(sum(wait_time)::numeric, 1) AS \"wait ms\",
		       sum(sh_hold_samples + ex_hold_samples) AS \"hold samples\",
		       round((1000 * sum(sh_hold_time + ex_hold_time) /
		              nullif(sum(sh_hold_samples + ex_hold_samples), 0))::numeric, 2) AS \"mean hold us\",
		       CASE WHEN sum(sh_hold_samples + ex_hold_samples) > 0
		            THEN round((1000 * max(greatest(max_ex_hold_time, max_sh_hold_time)))::numeric, 1)
		       END AS \"max hold us\"
		FROM study_locks
		WHERE strategy = '$s' AND clients = $max_clients
		GROUP BY tranche
		ORDER BY 3 DESC, 4 DESC, 2 DESC$TIE
		LIMIT 10"
done
for s in $names; do
	echo
	echo "(c) top 10 spin-wait call sites by contended waits: $noun $s, $max_clients clients, sum of $REPEAT rounds"
	sites=$(psql -X -q -At -c "SELECT count(DISTINCT (file, line, func)) FROM study_spins
		WHERE strategy = '$s' AND clients = $max_clients AND contended > 0")
	if [ "$sites" = 0 ]; then
		echo "no contended spin waits"
		continue
	fi
	psql -X -q -v ON_ERROR_STOP=1 -P footer=off -c "
		SELECT func, file || ':' || line AS site, sum(contended) AS contended,
		       sum(spins) AS spins, sum(delays) AS delays,
		       round(sum(wait_time)::numeric, 1) AS \"wait ms\",
		       sum(tas_attempts) AS \"TAS attempts\", sum(unlocked_skips) AS \"unlocked skips\",
		       round(sum(unlocked_skips)::numeric / nullif(sum(contended), 0), 2) AS \"skips/contended\"
		FROM study_spins
		WHERE strategy = '$s' AND clients = $max_clients
		GROUP BY func, file, line
		HAVING sum(contended) > 0
		ORDER BY 3 DESC, 4 DESC, 2$TIE
		LIMIT 10"
done
for s in $names; do
	psql -X -q -v ON_ERROR_STOP=1 -At -F ' ' -c "
		WITH per AS (
			SELECT clients, tranche, sum(blocks) AS blk, sum(spin_delays) AS spin
			FROM study_locks WHERE strategy = '$s' GROUP BY clients, tranche),
		top AS (
			SELECT tranche, row_number() OVER (ORDER BY sum(blk + spin) DESC, tranche) AS rank
			FROM per GROUP BY tranche ORDER BY 2 LIMIT 5),
		tot AS (SELECT clients, sum(blk) AS blk, sum(spin) AS spin FROM per GROUP BY clients)
		SELECT t.rank, per.clients, replace(per.tranche, ' ', '_'),
		       coalesce(round(100 * per.blk / nullif(tot.blk, 0), 2), 0),
		       coalesce(round(100 * per.spin / nullif(tot.spin, 0), 2), 0)
		FROM per JOIN top t USING (tranche) JOIN tot USING (clients)
		ORDER BY t.rank, per.clients" >"locks-$s.dat"
done
