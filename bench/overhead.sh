#!/bin/bash
#
# overhead.sh - what pg_lockstat costs, compared with the alternatives
#
# 1. Instructions per LWLock acquisition (bench/callgrind-cost.sh): stock,
#    -DLWLOCK_STATS, patched without the library, track = off, track = on.
# 2. Interleaved pgbench -S pairs, A = patched with pg_lockstat preloaded and
#    track = on, B = stock, run A B A B ... PAIRS times at each client count
#    of PAIR_CLIENTS on one data directory (both servers are built from the
#    same source, so they share the catalog version).  Reports the median
#    A/B tps ratio and its range.
# 3. Checks the goals: track = on costs at most 6 instructions per
#    acquisition over stock, the patched server without the library at most
#    1, and the median tps ratio is at least 0.99.
# Writes build/overhead/overhead.md and prints it ("make bench-overhead"
# copies it to bench/results/overhead.md).
#
# Environment: PG_CONFIG (patched, pg_lockstat installed), STOCK_PG_CONFIG,
# LWLOCK_STATS_PG_CONFIG (all required); PAIRS (5), PAIR_CLIENTS ("2 8"),
# DURATION (10 s), SCALE (10).
# Exit status: 0 if every goal is met; 3 if the measurement ran but a goal
# is missed; 1 on error, with a message naming the step.
#
set -euo pipefail

me=overhead
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
die() { echo "$me: error: $*" >&2; exit 1; }

: "${PG_CONFIG:?PG_CONFIG must point to the patched server}"
: "${STOCK_PG_CONFIG:?STOCK_PG_CONFIG must point to the unpatched server}"
: "${LWLOCK_STATS_PG_CONFIG:?LWLOCK_STATS_PG_CONFIG must point to the -DLWLOCK_STATS server}"
PAIRS=${PAIRS:-5}
PAIR_CLIENTS=${PAIR_CLIENTS:-2 8}
DURATION=${DURATION:-10}
SCALE=${SCALE:-10}
work=$top/build/overhead

for v in PAIRS DURATION SCALE; do
	[[ "${!v}" =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer, not \"${!v}\""
done
for c in $PAIR_CLIENTS; do
	[[ "$c" =~ ^[1-9][0-9]*$ ]] || die "PAIR_CLIENTS must be positive integers, not \"$c\""
done

if [ "$(id -u)" = 0 ] && [ "${1:-}" != "--as-user" ]; then
	mkdir -p "$work"
	AS_USER_WRITABLE="$work" exec scripts/as-user.sh "$0" --as-user
fi

# --- 1. instructions --------------------------------------------------------
echo "$me: callgrind (instructions per acquisition)" >&2
OUT=$work/callgrind bench/callgrind-cost.sh >"$work/callgrind.md" || die "callgrind step failed"
per() { awk -F'|' -v v="$1" '$2 ~ "^ "v" $" { gsub(/ /, "", $4); print $4 }' "$work/callgrind.md"; }
cost_on=$(per track_on)
cost_unloaded=$(per patched)
[ -n "$cost_on" ] && [ -n "$cost_unloaded" ] || die "could not read the callgrind table"

# --- 2. interleaved tps pairs -------------------------------------------------
patched_bin=$("$PG_CONFIG" --bindir)
stock_bin=$("$STOCK_PG_CONFIG" --bindir)
data=$work/data
sock=$(mktemp -d /tmp/pg_lockstat-overhead.XXXXXX)
port=$(( 20000 + RANDOM % 20000 ))
running=
cleanup() {
	[ -n "$running" ] && "$running/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1
	rm -rf "$sock" "$data"
}
trap cleanup EXIT
trap 'echo "$me: interrupted" >&2; exit 130' INT TERM

rm -rf "$data"
"$patched_bin/initdb" -D "$data" -A trust -N >"$work/initdb.log" 2>&1 || die "initdb failed; see $work/initdb.log"
cat >>"$data/postgresql.conf" <<CONF
listen_addresses = ''
port = $port
unix_socket_directories = '$sock'
max_connections = 50
CONF
start() {
	# start <bindir> <preload>
	"$1/pg_ctl" -D "$data" -l "$work/server.log" -w -t 120 \
		-o "-c shared_preload_libraries='$2'" start >/dev/null || die "server did not start; see $work/server.log"
	running=$1
}
stop() {
	"$running/pg_ctl" -D "$data" -m fast -w stop >/dev/null || die "server did not stop"
	running=
}
start "$patched_bin" pg_lockstat
"$patched_bin/pgbench" -h "$sock" -p "$port" -i -q -s "$SCALE" postgres >"$work/pgbench-init.log" 2>&1 || \
	die "pgbench -i failed; see $work/pgbench-init.log"
stop

tps_of() {
	# tps_of <bindir> <preload> <clients>
	start "$1" "$2"
	if [ -n "$2" ]; then
		[ "$("$1/psql" -X -At -h "$sock" -p "$port" -d postgres -c 'SHOW pg_lockstat.track')" = on ] || \
			die "pg_lockstat.track is not on"
	fi
	"$1/pgbench" -h "$sock" -p "$port" -n -S -M prepared -c "$3" -j "$3" -T "$DURATION" postgres \
		>"$work/pgbench.log" 2>&1 || die "pgbench failed; see $work/pgbench.log"
	stop
	sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$work/pgbench.log" | head -n 1
}

pairs_md=""
medians=""
ratio_ok=1
for c in $PAIR_CLIENTS; do
	ratios=()
	for p in $(seq 1 "$PAIRS"); do
		a=$(tps_of "$patched_bin" pg_lockstat "$c")
		b=$(tps_of "$stock_bin" "" "$c")
		r=$(echo "scale=4; $a / $b" | bc -l)
		ratios+=("$r")
		echo "$me: $c clients, pair $p: A $a tps, B $b tps, A/B $r" >&2
	done
	sorted=$(printf '%s\n' "${ratios[@]}" | sort -n)
	n=${#ratios[@]}
	if [ $((n % 2)) = 1 ]; then
		median=$(echo "$sorted" | sed -n "$(( n / 2 + 1 ))p")
	else
		median=$(echo "scale=4; ($(echo "$sorted" | sed -n "$(( n / 2 ))p") + $(echo "$sorted" | sed -n "$(( n / 2 + 1 ))p")) / 2" | bc -l)
	fi
	lo=$(echo "$sorted" | head -n 1)
	hi=$(echo "$sorted" | tail -n 1)
	f3() { awk -v x="$1" 'BEGIN { printf "%.4f", x }'; }
	pairs_md="$pairs_md| $c | $n | $(f3 "$median") | $(f3 "$lo") – $(f3 "$hi") |"$'\n'
	medians="$medians${medians:+, }$(f3 "$median") ($c clients)"
	[ "$(echo "$median >= 0.99" | bc -l)" = 1 ] || ratio_ok=0
done

# --- 3. goals -------------------------------------------------------------------
verdict() { [ "$1" = 1 ] && echo met || echo "**missed**"; }
on_ok=$([ "$(echo "$cost_on <= 6" | bc -l)" = 1 ] && echo 1 || echo 0)
unloaded_ok=$([ "$(echo "$cost_unloaded <= 1" | bc -l)" = 1 ] && echo 1 || echo 0)

{
	echo "# What pg_lockstat costs"
	echo
	echo "Produced by \`make bench-overhead\` (bench/overhead.sh) on $(date -u +%Y-%m-%d), pg_lockstat $(git -c safe.directory='*' -C "$top" describe --always --dirty 2>/dev/null || echo unknown)."
	echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), Linux $(uname -r); $("$patched_bin/postgres" --version)."
	echo
	echo "## Instructions per LWLock acquisition (callgrind, postgres --single)"
	echo
	cat "$work/callgrind.md"
	echo
	echo "## pgbench -S, interleaved pairs"
	echo
	echo "A = patched server, pg_lockstat preloaded, track = on; B = stock server; same data directory, scale $SCALE, ${DURATION} s per run, run A B A B ..."
	echo
	echo "| clients | pairs | median A/B tps | range |"
	echo "|---:|---:|---:|---:|"
	printf '%s' "$pairs_md"
	echo
	echo "## Goals"
	echo
	echo "| goal | measured | |"
	echo "|---|---:|---|"
	echo "| track = on: at most 6 instructions per acquisition over stock | $cost_on | $(verdict "$on_ok") |"
	echo "| library not loaded: at most 1 | $cost_unloaded | $(verdict "$unloaded_ok") |"
	echo "| median tps ratio at least 0.99 | $medians | $(verdict "$ratio_ok") |"
	echo
	echo "Wall-clock pairs on a shared 2-CPU machine are noisy (see the ranges); the instruction counts are the stable measure."
} >"$work/overhead.md"
cat "$work/overhead.md"

if [ "$on_ok$unloaded_ok$ratio_ok" != 111 ]; then
	echo "$me: a goal is missed (see the table above)" >&2
	exit 3
fi
