#!/bin/bash
#
# observer.sh - what counting costs the contended path, in throughput
#
# One server start, with pg_lockstat and the test module lockstat_test
# preloaded.  CLIENTS pgbench clients hammer one lock for RUN_SECONDS per run:
# the lockstat_test LWLock (WORKLOAD=lwlock: lockstat_test_lwlock(
# 'exclusive', 200, 0) per transaction) or the test spinlock
# (WORKLOAD=spinlock: lockstat_test_spinlock(200, 0)).  Between runs
# pg_lockstat.track is switched on or off with ALTER SYSTEM and
# pg_reload_conf(), and the next run starts once every client of the
# previous one has gone; PAIRS pairs of runs in ABBA order (on, off, off,
# on, ...), so that a drift of the machine's speed that is linear over
# four runs cancels.  The result is the ratio of throughput on/off: the
# Hodges-Lehmann estimate of the pairs' log ratios with the interval of
# Wilcoxon's signed-rank test (lockstudy.stats.hl_ci, as the study uses
# it), at CONFIDENCE.
#
# On a machine with few CPUs most acquisitions of the hot lock do not
# block (two CPUs contend only when a holder is preempted), so the interval
# is wide: what runs inside a contended critical section is counted in
# instructions (doc/cost.md, "Inside a contended critical section").  This
# measures the whole, on the machine at hand, and says what it can tell.
#
# Environment: PG_CONFIG (patched, with pg_lockstat and lockstat_test
# installed, as "make test" leaves it; required), WORKLOAD (lwlock),
# CLIENTS (8), RUN_SECONDS (10), PAIRS (16), CONFIDENCE (0.95), OUT (directory
# for the cluster, the logs and runs.csv; default build/observer),
# PGPORT_BENCH (54329).  The server: bench/bench-server.sh.
# Output: one line per run on stderr; on stdout the table of runs and the
# ratio with its interval and the pairs' acquisitions and blocks per second.
# Exit status 1 with a message on error.
#
set -euo pipefail

me=observer
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
die() { echo "$me: error: $*" >&2; exit 1; }

: "${PG_CONFIG:?PG_CONFIG must point to the patched server}"
WORKLOAD=${WORKLOAD:-lwlock}
CLIENTS=${CLIENTS:-8}
SECONDS_PER_RUN=${RUN_SECONDS:-10}
PAIRS=${PAIRS:-16}
CONFIDENCE=${CONFIDENCE:-0.95}
OUT=${OUT:-$top/build/observer}
case $CLIENTS$SECONDS_PER_RUN$PAIRS in
	*[!0-9]*) die "CLIENTS, RUN_SECONDS and PAIRS must be numbers" ;;
esac
# what the hot lock's counters say per run: for the LWLock its acquisitions
# and blocks (pg_lwlock_stats), for the spinlock its contended waits and
# their spins (pg_spinlock_stats); counted in the track = on runs only
case $WORKLOAD in
	lwlock)
		call="SELECT lockstat_test_lwlock('exclusive', 200, 0);"
		count_sql="SELECT coalesce(sum(sh_acquires + ex_acquires), 0), coalesce(sum(blocks), 0)
			FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'"
		counted="acquisitions,blocks of the lockstat_test LWLock" ;;
	spinlock)
		call="SELECT lockstat_test_spinlock(200, 0);"
		count_sql="SELECT coalesce(sum(contended), 0), coalesce(sum(spins), 0)
			FROM pg_spinlock_stats WHERE func = 'lockstat_test_spinlock'"
		counted="contended waits,spins of the test spinlock" ;;
	*) die "WORKLOAD must be lwlock or spinlock, not \"$WORKLOAD\"" ;;
esac

if [ "$(id -u)" = 0 ] && [ "${1:-}" != "--as-user" ]; then
	mkdir -p "$OUT"
	AS_USER_WRITABLE="$OUT" OUT="$OUT" exec scripts/as-user.sh "$0" --as-user
fi

. bench/bench-server.sh
bench_server_start "$CLIENTS" </dev/null
echo "$call" >"$OUT/workload.sql"

# the hot lock's two counts so far
counts() {
	psql -F ' ' -c "$count_sql"
}

# set track, and wait until every backend of the last run has gone and the
# reload has reached this session
set_track() {
	psql -c "ALTER SYSTEM SET pg_lockstat.track = $1" -c 'SELECT pg_reload_conf()' >/dev/null
	bench_wait_idle "current_setting('pg_lockstat.track') = '$1'"
}

run() {
	local track=$1 pair=$2 before after tps
	set_track "$track"
	before=$(counts)
	"$bin/pgbench" -n -h "$OUT" -p "$port" -c "$CLIENTS" -j "$CLIENTS" \
		-T "$SECONDS_PER_RUN" -f "$OUT/workload.sql" postgres \
		>"$OUT/pgbench-$pair-$track.log" 2>&1 ||
		die "pgbench failed; see $OUT/pgbench-$pair-$track.log"
	after=$(counts)
	tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$OUT/pgbench-$pair-$track.log" | tail -n 1)
	[ -n "$tps" ] || die "no tps in $OUT/pgbench-$pair-$track.log"
	echo "$pair,$track,$tps,$before,$after" | tr ' ' ',' >>"$OUT/runs.csv"
	echo "$me: pair $pair track=$track: $tps tps" >&2
}

echo "pair,track,tps,first_before,second_before,first_after,second_after" >"$OUT/runs.csv"
for pair in $(seq 1 "$PAIRS"); do
	if [ $((pair % 2)) = 1 ]; then
		run on "$pair"
		run off "$pair"
	else
		run off "$pair"
		run on "$pair"
	fi
done

PYTHONPATH="$top/bench" /usr/bin/python3 - "$OUT/runs.csv" "$CONFIDENCE" "$SECONDS_PER_RUN" "$counted" <<'PY'
import csv
import math
import sys

from lockstudy import stats

path, confidence, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
first_name, second_name = sys.argv[4].split(",", 1)
runs = {}
rates = []
with open(path) as f:
    for row in csv.DictReader(f):
        runs[(row["pair"], row["track"])] = float(row["tps"])
        if row["track"] == "on":
            acq = int(row["first_after"]) - int(row["first_before"])
            blk = int(row["second_after"]) - int(row["second_before"])
            rates.append((acq / seconds, blk / seconds))
pairs = sorted({p for p, _ in runs}, key=int)
ratios = [runs[(p, "on")] / runs[(p, "off")] for p in pairs]
# as the study does: on the log scale, where on/off and off/on are alike
est, low, high, coverage = (
    math.exp(v) if i < 3 else v
    for i, v in enumerate(stats.hl_ci([math.log(r) for r in ratios],
                                      confidence)))
print("| pair | on tps | off tps | on/off |")
print("|---|---|---|---|")
for p, r in zip(pairs, ratios):
    print(f"| {p} | {runs[(p, 'on')]:.1f} | {runs[(p, 'off')]:.1f} | {r:.4f} |")
print()
print(f"on/off: {est:.3f} [{low:.3f}, {high:.3f}] "
      f"({len(ratios)} ABBA pairs, exact coverage {coverage:.3f})")
if high < 1:
    print("counting makes this workload slower: the whole interval is below 1")
elif low > 1:
    print("counting makes this workload faster: the whole interval is above 1")
else:
    print(f"not resolved: the interval holds 1; a difference larger than "
          f"{max(1 - low, high - 1) * 100:.1f} % is excluded at this confidence")
acq = sorted(a for a, _ in rates)[len(rates) // 2]
blk = sorted(b for _, b in rates)[len(rates) // 2]
print(f"with track = on, median per second: {acq:.0f} {first_name}, "
      f"{blk:.0f} {second_name}")
PY
