#!/bin/bash
#
# callgrind-cost.sh - instructions per LWLock acquisition that counting
# costs, and instructions and simulated cache misses per transaction
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
# Then, unless XACT=0, the cost per transaction: a second workload of
# separate statements "SELECT v FROM lookup WHERE id = <k>;", each its own
# transaction in postgres --single, k running over the whole table in a
# fixed scattered order, at XACT_N1 < XACT_N2 statements, for each variant
# of XACT_VARIANTS (default: all of the above), once under callgrind and
# once under valgrind --tool=cachegrind --cache-sim=yes (the caches of the
# host as cachegrind detects them; printed below the table).  Per
# transaction: instructions (callgrind), I1 misses (I1mr), D1 misses
# (D1mr + D1mw) and LL misses (DLmr + DLmw + ILmr: data and instruction
# fetches that miss the last level) from cachegrind's summary line, each
# the growth from XACT_N1 to XACT_N2 divided by XACT_N2 - XACT_N1, as the
# variant's value and over the reference.  Per-query attribution
# (pg_lwlock_query_stats) has no setting of its own: it counts only in the
# wait and hold hooks (blocked calls and sampled holds) and its transaction
# callback runs whenever the library is loaded, so it is inside every
# preloaded variant and has no variant of its own.
#
# Environment: PG_CONFIG (patched, with pg_lockstat installed; required),
# STOCK_PG_CONFIG, LWLOCK_STATS_PG_CONFIG and BASE_PG_CONFIG (optional), N1
# (20000), N2 (60000), HOLD_EVERY (values of pg_lockstat.hold_sample_every
# to measure; default "100 1000 10000"), XACT (1; 0 skips the per-transaction
# part), XACT_N1 (2000), XACT_N2 (8000), XACT_VARIANTS (the variants measured
# per transaction, a subset of those above; the reference is always added),
# OUT (directory for the callgrind and cachegrind files; default
# build/callgrind).
# Output: a Markdown table on stdout; with BASE_PG_CONFIG, a second one of
# the hold variants over base_track_on; unless XACT=0, then the table per
# transaction and the cache configuration that cachegrind simulated.
# Exit status 1 with a message on error.
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
XACT=${XACT:-1}
XACT_N1=${XACT_N1:-2000}
XACT_N2=${XACT_N2:-8000}
XACT_VARIANTS=${XACT_VARIANTS:-}
OUT=${OUT:-$top/build/callgrind}
command -v valgrind >/dev/null || die "valgrind is not installed (apt-get install valgrind)"
case $XACT_N1$XACT_N2 in
	*[!0-9]*) die "XACT_N1 and XACT_N2 must be numbers" ;;
esac
[ "$XACT" = 0 ] || [ "$XACT_N2" -gt "$XACT_N1" ] || die "XACT_N2 ($XACT_N2) must be greater than XACT_N1 ($XACT_N1)"

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
variant_setup() {
	# variant_setup <variant>: sets bin and opts
	case $1 in
		hold_off) bin=$patched_bin; opts=(-c shared_preload_libraries=pg_lockstat -c pg_lockstat.hold_sample_every=0) ;;
		hold_*) bin=$patched_bin; opts=(-c shared_preload_libraries=pg_lockstat -c "pg_lockstat.hold_sample_every=${1#hold_}") ;;
		base_track_on) bin=$base_bin; opts=(-c shared_preload_libraries=pg_lockstat -c pg_lockstat.track=on) ;;
		stock) bin=$stock_bin; opts=() ;;
		lwlock_stats) bin=$lwstats_bin; opts=() ;;
		patched) bin=$patched_bin; opts=() ;;
		track_off) bin=$patched_bin; opts=(-c shared_preload_libraries=pg_lockstat -c pg_lockstat.track=off) ;;
		track_on) bin=$patched_bin; opts=(-c shared_preload_libraries=pg_lockstat -c pg_lockstat.track=on) ;;
		*) die "unknown variant $1" ;;
	esac
}
for v in $variants; do
	variant_setup "$v"
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

[ "$XACT" = 0 ] && exit 0

# --- per transaction ---------------------------------------------------------
# XACT_N1 and XACT_N2 statements, one a line: postgres --single runs each
# line as a query in a transaction of its own.  The keys run over the table
# (10000 rows) in the order i * 7919 mod 10000, which visits every key once
# in 10000 statements without following the index's order.
xact_workload() {
	local i
	for ((i = 0; i < $1; i++)); do
		echo "SELECT v FROM lookup WHERE id = $(( i * 7919 % 10000 + 1 ));"
	done
}
xact_workload "$XACT_N1" >"$OUT/xact-$XACT_N1.sql"
xact_workload "$XACT_N2" >"$OUT/xact-$XACT_N2.sql"

# LWLock acquisitions per size, from pg_lwlock_stats (outside valgrind), as
# for the first workload
xact_acquisitions() {
	{
		echo "SELECT pg_lockstat_reset();"
		cat "$OUT/xact-$1.sql"
		echo "SELECT sum(sh_acquires + ex_acquires) AS acq FROM pg_lwlock_stats WHERE tranche NOT IN ('pg_lockstat');"
	} >"$OUT/xact-count-$1.sql"
	single "$patched_bin" "$OUT/xact-count-$1.sql" -c shared_preload_libraries=pg_lockstat 2>&1 | \
		sed -n 's/.*acq = "\([0-9]*\)".*/\1/p' | tail -n 1
}
xa1=$(xact_acquisitions "$XACT_N1")
xa2=$(xact_acquisitions "$XACT_N2")
if [ -z "$xa1" ] || [ -z "$xa2" ] || [ "$xa2" -le "$xa1" ]; then
	die "could not read acquisition counts per transaction ($xa1, $xa2)"
fi

xact_run() {
	# xact_run <tool> <variant> <n> <bindir> [options...]: runs the workload
	# under valgrind's tool; prints the tool's events line and summary line
	local tool=$1 variant=$2 n=$3 bin=$4 file
	shift 4
	file=$OUT/$tool.xact.$variant.$n
	local toolopts=(--tool=callgrind "--callgrind-out-file=$file")
	[ "$tool" = cachegrind ] && toolopts=(--tool=cachegrind --cache-sim=yes "--cachegrind-out-file=$file")
	valgrind "${toolopts[@]}" \
		"$bin/postgres" --single -D "$data" "${single_opts[@]}" "$@" postgres \
		<"$OUT/xact-$n.sql" >"$OUT/valgrind.$tool.xact.$variant.$n.log" 2>&1 || die "valgrind $tool run $variant $n (per transaction) failed; see $OUT/valgrind.$tool.xact.$variant.$n.log"
	sed -n 's/^events: //p; s/^summary: //p' "$file"
}

event() {
	# event <name> <events line> <summary line>: the summary's value of the event
	local name=$1 i
	local -a names values
	read -r -a names <<<"$2"
	read -r -a values <<<"$3"
	for i in "${!names[@]}"; do
		if [ "${names[$i]}" = "$name" ]; then
			echo "${values[$i]}"
			return
		fi
	done
	die "no event $name in the valgrind output"
}

xvariants=${XACT_VARIANTS:-$variants}
case " $xvariants " in
	*" $ref "*) ;;
	*) xvariants="$ref $xvariants" ;;
esac
declare -A xi xi1 xd1 xll ir i1m d1m llm
for v in $xvariants; do
	case " $variants " in
		*" $v "*) ;;
		*) die "XACT_VARIANTS: $v is not one of the variants measured ($variants)" ;;
	esac
	variant_setup "$v"
	for n in "$XACT_N1" "$XACT_N2"; do
		ev='' sum=''
		{ read -r ev; read -r sum; } < <(xact_run callgrind "$v" "$n" "$bin" "${opts[@]}")
		[ -n "${sum:-}" ] || die "no summary in $OUT/callgrind.xact.$v.$n"
		ir[$n]=$(event Ir "$ev" "$sum")
		ev='' sum=''
		{ read -r ev; read -r sum; } < <(xact_run cachegrind "$v" "$n" "$bin" "${opts[@]}")
		[ -n "${sum:-}" ] || die "no summary in $OUT/cachegrind.xact.$v.$n"
		i1m[$n]=$(event I1mr "$ev" "$sum")
		d1m[$n]=$(( $(event D1mr "$ev" "$sum") + $(event D1mw "$ev" "$sum") ))
		llm[$n]=$(( $(event DLmr "$ev" "$sum") + $(event DLmw "$ev" "$sum") + $(event ILmr "$ev" "$sum") ))
		echo "$me: xact $v $n: ${ir[$n]} instructions (cachegrind: $(event Ir "$ev" "$sum")), I1 misses ${i1m[$n]}, D1 misses ${d1m[$n]}, LL misses ${llm[$n]}" >&2
	done
	xi[$v]=$(( ir[$XACT_N2] - ir[$XACT_N1] ))
	xi1[$v]=$(( i1m[$XACT_N2] - i1m[$XACT_N1] ))
	xd1[$v]=$(( d1m[$XACT_N2] - d1m[$XACT_N1] ))
	xll[$v]=$(( llm[$XACT_N2] - llm[$XACT_N1] ))
done

dx=$(( XACT_N2 - XACT_N1 ))
per_xact() {
	# per <growth> [<reference growth>]: per transaction, 2 decimals
	printf '%.2f' "$(echo "scale=4; ($1 - ${2:-0}) / $dx" | bc -l)"
}
echo
echo "Per transaction: $XACT_N1 and $XACT_N2 statements \"SELECT v FROM lookup WHERE id = <k>;\", each its own transaction in postgres --single; growth $dx transactions, LWLock acquisitions $xa1 and $xa2 ($(per_xact "$(( xa2 - xa1 ))") per transaction).  Instructions from callgrind; misses from cachegrind --cache-sim=yes: I1 = I1mr, D1 = D1mr + D1mw, LL = DLmr + DLmw + ILmr."
echo
echo "| variant | instructions per transaction | over $ref | I1 misses per transaction | over $ref | D1 misses per transaction | over $ref | LL misses per transaction | over $ref |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for v in $xvariants; do
	echo "| $v | $(per_xact "${xi[$v]}") | $(per_xact "${xi[$v]}" "${xi[$ref]}") | $(per_xact "${xi1[$v]}") | $(per_xact "${xi1[$v]}" "${xi1[$ref]}") | $(per_xact "${xd1[$v]}") | $(per_xact "${xd1[$v]}" "${xd1[$ref]}") | $(per_xact "${xll[$v]}") | $(per_xact "${xll[$v]}" "${xll[$ref]}") |"
done
echo
echo "Caches simulated by cachegrind:"
echo
sed -n 's/^desc: \(.*cache:.*\)/- \1/p' "$OUT/cachegrind.xact.$ref.$XACT_N1"
