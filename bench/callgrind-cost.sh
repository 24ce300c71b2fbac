#!/bin/bash
#
# callgrind-cost.sh - instructions per LWLock acquisition that counting costs
#
# Runs one fixed single-user workload (index lookups, each taking
# BufferMapping and BufferContent LWLocks) under valgrind --tool=callgrind
# on "postgres --single", at two sizes N1 < N2, for each variant:
#
#   stock        unpatched server (STOCK_PG_CONFIG), if given
#   lwlock_stats unpatched server built with -DLWLOCK_STATS
#                (LWLOCK_STATS_PG_CONFIG), if given
#   patched      patched server, pg_lockstat not loaded
#   track_off    patched, pg_lockstat preloaded, pg_lockstat.track = off
#   track_on     patched, pg_lockstat preloaded, pg_lockstat.track = on,
#                pg_lockstat.hold_sample_every at its default
#   hold_off     track_on with pg_lockstat.hold_sample_every = 0
#   hold_<N>     track_on with pg_lockstat.hold_sample_every = N, for each N
#                of HOLD_EVERY
#   base_track_on  track_on on another patched build with its own
#                pg_lockstat (BASE_PG_CONFIG), if given: the build that a
#                change of the series is measured against
#
# The cost per acquisition of a variant is the growth of its instruction
# total from N1 to N2 minus that of the reference (stock, or patched when
# there is no stock build), divided by the growth of the number of LWLock
# acquisitions that pg_lwlock_stats reports from N1 to N2.  Using the growth
# cancels start-up and shutdown, which differ between variants but not
# with N.  Instruction counts are deterministic, unlike wall-clock time.
#
# Environment: PG_CONFIG (patched, with pg_lockstat installed; required),
# STOCK_PG_CONFIG, LWLOCK_STATS_PG_CONFIG and BASE_PG_CONFIG (optional), N1
# (20000), N2 (60000), HOLD_EVERY (values of pg_lockstat.hold_sample_every
# to measure; default "100 1000 10000"), OUT (directory for the callgrind
# files; default build/callgrind).
# Output: a Markdown table on stdout; with BASE_PG_CONFIG, a second one of
# the hold variants over base_track_on.  Exit status 1 with a message on error.
#
set -euo pipefail

me=callgrind-cost
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
die() { echo "$me: error: $*" >&2; exit 1; }

: "${PG_CONFIG:?PG_CONFIG must point to the patched server}"
N1=${N1:-20000}
N2=${N2:-60000}
HOLD_EVERY=${HOLD_EVERY:-100 1000 10000}
OUT=${OUT:-$top/build/callgrind}
command -v valgrind >/dev/null || die "valgrind is not installed (apt-get install valgrind)"

if [ "$(id -u)" = 0 ] && [ "${1:-}" != "--as-user" ]; then
	mkdir -p "$OUT"
	AS_USER_WRITABLE="$OUT" OUT="$OUT" HOLD_EVERY="$HOLD_EVERY" exec scripts/as-user.sh "$0" --as-user
fi

patched_bin=$("$PG_CONFIG" --bindir)
stock_bin=
[ -n "${STOCK_PG_CONFIG:-}" ] && stock_bin=$("$STOCK_PG_CONFIG" --bindir)
lwstats_bin=
[ -n "${LWLOCK_STATS_PG_CONFIG:-}" ] && lwstats_bin=$("$LWLOCK_STATS_PG_CONFIG" --bindir)
base_bin=
[ -n "${BASE_PG_CONFIG:-}" ] && base_bin=$("$BASE_PG_CONFIG" --bindir)

rm -rf "$OUT/data"
mkdir -p "$OUT"
data=$OUT/data
"$patched_bin/initdb" -D "$data" -A trust -N >"$OUT/initdb.log" 2>&1 || die "initdb failed; see $OUT/initdb.log"

# the same settings for every run, counted or measured: the acquisition
# counts must belong to the plans that callgrind measures
single_opts=(-c max_parallel_workers_per_gather=0 -c jit=off -c autovacuum=off
	-c enable_bitmapscan=off)

single() {
	# single <bindir> <input file> [postgres options...]
	local bin=$1 input=$2
	shift 2
	"$bin/postgres" --single -D "$data" "${single_opts[@]}" "$@" postgres <"$input"
}

cat >"$OUT/setup.sql" <<SQL
CREATE EXTENSION pg_lockstat;
CREATE TABLE lookup (id int PRIMARY KEY, v int);
INSERT INTO lookup SELECT g, g FROM generate_series(1, 10000) g;
VACUUM ANALYZE lookup;
SQL
single "$patched_bin" "$OUT/setup.sql" -c shared_preload_libraries=pg_lockstat \
	>"$OUT/setup.log" 2>&1 || die "setup failed; see $OUT/setup.log"

workload() {
	echo "SELECT sum((SELECT v FROM lookup WHERE id = g % 10000 + 1)) FROM generate_series(1, $1) g;"
}

# acquisitions per workload size, from pg_lwlock_stats (outside valgrind)
acquisitions() {
	{
		echo "SELECT pg_lockstat_reset();"
		workload "$1"
		echo "SELECT sum(sh_acquires + ex_acquires) AS acq FROM pg_lwlock_stats WHERE tranche NOT IN ('pg_lockstat');"
	} >"$OUT/count-$1.sql"
	single "$patched_bin" "$OUT/count-$1.sql" -c shared_preload_libraries=pg_lockstat 2>&1 | \
		sed -n 's/.*acq = "\([0-9]*\)".*/\1/p' | tail -n 1
}
a1=$(acquisitions "$N1")
a2=$(acquisitions "$N2")
[ -n "$a1" ] && [ -n "$a2" ] && [ "$a2" -gt "$a1" ] || die "could not read acquisition counts ($a1, $a2)"

instructions() {
	# instructions <variant> <n> <bindir> [options...]
	local variant=$1 n=$2 bin=$3
	shift 3
	workload "$n" >"$OUT/work-$n.sql"
	valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.$variant.$n" \
		"$bin/postgres" --single -D "$data" "${single_opts[@]}" "$@" postgres \
		<"$OUT/work-$n.sql" >"$OUT/valgrind.$variant.$n.log" 2>&1 || die "valgrind run $variant $n failed; see $OUT/valgrind.$variant.$n.log"
	sed -n 's/^summary: \([0-9]*\).*/\1/p' "$OUT/callgrind.$variant.$n"
}

declare -A growth
variants="patched track_off track_on hold_off"
for n in $HOLD_EVERY; do
	variants="$variants hold_$n"
done
[ -n "$base_bin" ] && variants="$variants base_track_on"
[ -n "$lwstats_bin" ] && variants="lwlock_stats $variants"
[ -n "$stock_bin" ] && variants="stock $variants"
for v in $variants; do
	case $v in
		hold_off) bin=$patched_bin; opts=(-c shared_preload_libraries=pg_lockstat -c pg_lockstat.hold_sample_every=0) ;;
		hold_*) bin=$patched_bin; opts=(-c shared_preload_libraries=pg_lockstat -c "pg_lockstat.hold_sample_every=${v#hold_}") ;;
		base_track_on) bin=$base_bin; opts=(-c shared_preload_libraries=pg_lockstat -c pg_lockstat.track=on) ;;
		stock) bin=$stock_bin; opts=() ;;
		lwlock_stats) bin=$lwstats_bin; opts=() ;;
		patched) bin=$patched_bin; opts=() ;;
		track_off) bin=$patched_bin; opts=(-c shared_preload_libraries=pg_lockstat -c pg_lockstat.track=off) ;;
		track_on) bin=$patched_bin; opts=(-c shared_preload_libraries=pg_lockstat -c pg_lockstat.track=on) ;;
	esac
	i1=$(instructions "$v" "$N1" "$bin" "${opts[@]}")
	i2=$(instructions "$v" "$N2" "$bin" "${opts[@]}")
	growth[$v]=$(( i2 - i1 ))
	echo "$me: $v: $i1 -> $i2 instructions" >&2
done

ref=patched
[ -n "$stock_bin" ] && ref=stock
da=$(( a2 - a1 ))
echo "Workload: $N1 and $N2 index lookups in postgres --single; LWLock acquisitions $a1 and $a2 (growth $da)."
echo
echo "| variant | instructions growth N1->N2 | instructions per acquisition over $ref |"
echo "|---|---:|---:|"
for v in $variants; do
	per=$(echo "scale=2; (${growth[$v]} - ${growth[$ref]}) / $da" | bc -l)
	echo "| $v | ${growth[$v]} | $per |"
done

if [ -n "$base_bin" ]; then
	echo
	echo "Hold-time sampling over base_track_on (the build of BASE_PG_CONFIG, counting):"
	echo
	echo "| variant | instructions per acquisition over base_track_on |"
	echo "|---|---:|"
	for v in track_on hold_off $(for n in $HOLD_EVERY; do echo "hold_$n"; done); do
		per=$(echo "scale=2; (${growth[$v]} - ${growth[base_track_on]}) / $da" | bc -l)
		echo "| $v | $per |"
	done
fi
