#!/bin/bash
#
# ceiling.sh - utilization and the throughput ceiling against a lock whose
# hold time is known
#
# One server start, with pg_lockstat and the test module lockstat_test
# preloaded.  Each pgbench transaction sleeps THINK_MS milliseconds on the
# client (\sleep: no server CPU), then takes the lockstat_test LWLock
# exclusively and holds it HOLD_US microseconds, busy-waiting on the clock
# (lockstat_test_lwlock('exclusive', 1, HOLD_US, true)), so every hold is
# HOLD_US to within a clock read and the lock can pass at most 1 / HOLD_US
# transactions a second.  Per round, one run of RUN_SECONDS at each count
# of CLIENTS (in the order given in odd rounds, reversed in even rounds, so
# that a drift of the machine's speed that is linear over a round cancels),
# each after pg_lockstat_reset() and once the last run's clients have
# gone; after it, the lockstat_test row of pg_lwlock_utilization (mode
# exclusive).  pg_lockstat.hold_sample_every is HOLD_SAMPLE_EVERY (11:
# the default, one in 4999, would time about one hold of the test lock in a
# run; a prime, since a transaction's acquisitions repeat in a cycle, and a
# cycle sharing a factor with it would time the test lock's holds at a rate
# of their own); the sampling error is the one the view states.  With
# DELAY_US (whole microseconds, 1 to 1000), pg_lockstat's delay injection
# adds that busy-wait to every acquisition of the test lock, inside the hold
# (DELAY_MODE=inside: the known hold is then HOLD_US + DELAY_US) or before
# the acquisition (DELAY_MODE=before, the control: the hold stays HOLD_US).
#
# The result (python3 -m lockstudy.ceiling): the reported busy fraction
# against X h (X pgbench's tps, h the known hold) at the lowest client
# count, and the ceiling predicted there (X / busy) against the tps
# measured at the highest count in the same round, where the lock is
# saturated; each a Hodges-Lehmann ratio with the signed-rank interval
# over the rounds and a verdict at +-5 %.  On 2 CPUs the holder's busy-wait
# takes one CPU: keep the highest count's CPU demand on the other
# (THINK_MS large against HOLD_US), and run nothing beside it.
#
# Environment: PG_CONFIG (patched, with pg_lockstat and lockstat_test
# installed, as "make test" leaves it; required), HOLD_US (2000), THINK_MS
# (8), CLIENTS ("1 2 4 8 16"), RUN_SECONDS (10), ROUNDS (6), CONFIDENCE
# (0.95), HOLD_SAMPLE_EVERY (11), DELAY_US (0: none), DELAY_MODE (inside),
# OUT (directory for the
# cluster, the logs and runs.csv; default build/ceiling), PGPORT_BENCH
# (54329).  The server: bench/bench-server.sh.
# Output: one line per run on stderr; on stdout the table and the two
# verdicts.  Exit status 1 with a message on error.
#
set -euo pipefail

me=ceiling
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
die() { echo "$me: error: $*" >&2; exit 1; }

: "${PG_CONFIG:?PG_CONFIG must point to the patched server}"
HOLD_US=${HOLD_US:-2000}
THINK_MS=${THINK_MS:-8}
CLIENTS=${CLIENTS:-1 2 4 8 16}
SECONDS_PER_RUN=${RUN_SECONDS:-10}
ROUNDS=${ROUNDS:-6}
CONFIDENCE=${CONFIDENCE:-0.95}
HOLD_SAMPLE_EVERY=${HOLD_SAMPLE_EVERY:-11}
DELAY_US=${DELAY_US:-0}
DELAY_MODE=${DELAY_MODE:-inside}
OUT=${OUT:-$top/build/ceiling}
# each a whole number, at least its minimum
for v in HOLD_US:1 THINK_MS:0 SECONDS_PER_RUN:1 ROUNDS:1 HOLD_SAMPLE_EVERY:1 DELAY_US:0; do
	name=${v%:*} value=${!name}
	case $value in
		'' | *[!0-9]*) die "${name/SECONDS_PER_RUN/RUN_SECONDS} must be a whole number, not \"$value\"" ;;
	esac
	[ "$value" -ge "${v#*:}" ] || die "${name/SECONDS_PER_RUN/RUN_SECONDS} must be at least ${v#*:}"
done
[ "$HOLD_US" -le 1000000 ] ||
	die "HOLD_US must be at most 1000000 (lockstat_test's limit)"
[ "$DELAY_US" -le 1000 ] || die "DELAY_US must be at most 1000 (pg_lockstat.delay_us's limit)"
case $DELAY_MODE in
	inside) known_hold=$((HOLD_US + DELAY_US)) ;;
	before) known_hold=$HOLD_US ;;
	*) die "DELAY_MODE must be inside or before, not \"$DELAY_MODE\"" ;;
esac
max=0
for c in $CLIENTS; do
	case $c in
		*[!0-9]* | 0)
			die "CLIENTS must be positive whole numbers, not \"$c\"" ;;
	esac
	[ "$c" -gt "$max" ] && max=$c
done
[ "$max" -gt 0 ] || die "CLIENTS is empty"

if [ "$(id -u)" = 0 ] && [ "${1:-}" != "--as-user" ]; then
	mkdir -p "$OUT"
	AS_USER_WRITABLE="$OUT" OUT="$OUT" exec scripts/as-user.sh "$0" --as-user
fi

. bench/bench-server.sh
conf="pg_lockstat.hold_sample_every = $HOLD_SAMPLE_EVERY"
if [ "$DELAY_US" -gt 0 ]; then
	conf="$conf
pg_lockstat.delay_tranche = 'lockstat_test'
pg_lockstat.delay_us = $DELAY_US
pg_lockstat.delay_mode = '$DELAY_MODE'"
fi
bench_server_start "$max" <<<"$conf"
printf '\\sleep %s ms\nSELECT lockstat_test_lwlock('"'exclusive'"', 1, %s, true);\n' \
	"$THINK_MS" "$HOLD_US" >"$OUT/workload.sql"

run() {
	local round=$1 clients=$2 log row tps
	log=$OUT/pgbench-$round-$clients.log
	bench_wait_idle
	psql -c 'SELECT pg_lockstat_reset()' >/dev/null
	"$bin/pgbench" -n -h "$OUT" -p "$port" -c "$clients" -j "$clients" \
		-T "$SECONDS_PER_RUN" -f "$OUT/workload.sql" postgres >"$log" 2>&1 ||
		die "pgbench failed; see $log"
	row=$(psql -F , -c "SELECT acquires, samples, busy, busy_se_max, ceiling_factor
		FROM pg_lwlock_utilization
		WHERE tranche = 'lockstat_test' AND mode = 'exclusive'")
	# no row: no hold of the test lock was timed (every field empty)
	[ -n "$row" ] || row=,,,,
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$log" | tail -n 1)
	[ -n "$tps" ] || die "no tps in $log"
	echo "$round,$clients,$tps,$row" >>"$OUT/runs.csv"
	echo "$me: round $round, $clients clients: $tps tps, acquires,samples,busy,se,ceiling_factor $row" >&2
}

echo "round,clients,tps,acquires,samples,busy,busy_se_max,ceiling_factor" >"$OUT/runs.csv"
reversed=$(echo $CLIENTS | tr ' ' '\n' | tac | tr '\n' ' ')
for round in $(seq 1 "$ROUNDS"); do
	if [ $((round % 2)) = 1 ]; then order=$CLIENTS; else order=$reversed; fi
	for c in $order; do
		run "$round" "$c"
	done
done

PYTHONPATH="$top/bench" /usr/bin/python3 -m lockstudy.ceiling "$OUT/runs.csv" \
	--hold-us "$known_hold" --confidence "$CONFIDENCE"
