#!/bin/bash
#
# run-study.sh - the pgsql-hackers spinlock/LWLock study in one command
#
# On a throwaway cluster of its own: initialise pgbench, then for each spin
# strategy restart the server with it and, for each client count, reset the
# pg_lockstat counters, run pgbench and record the tps and the
# pg_lwlock_stats delta.  Prints (a) the tps table, clients x strategy, and
# (b) for the highest client count of each strategy the top 10 LWLock
# tranches by blocks, with Blk, SpinDelay, Blk % and SpinDelay % as in the
# LWLOCK_STATS tables posted to the list.  Raw results are saved as CSV
# under build/run/<timestamp>/.
#
# Called by "make run".  Environment (all optional except PG_CONFIG):
#   PG_CONFIG   pg_config of the patched server with pg_lockstat installed
#   SCALE       pgbench scale factor (10)
#   STRATEGIES  spin strategies to compare ("tas ttas_spin ttas")
#   CLIENTS     client counts ("1 2 4 8 16 32 64")
#   DURATION    seconds per pgbench run (10)
#   WORKLOAD    select-only (-S -M prepared), tpcb-like, simple-update
#               (select-only)
#   THREADS     pgbench -j (the smaller of clients and nproc)
#   RUN_DIR     where studies are saved (build/run)
# Exit status: 0 on success; 1 with a message naming the failing step.
#
set -euo pipefail

me=run-study
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

die() { echo "$me: error: $*" >&2; exit 1; }

: "${PG_CONFIG:?PG_CONFIG must point to the pg_config of the patched server}"
SCALE=${SCALE:-10}
STRATEGIES=${STRATEGIES:-tas ttas_spin ttas}
CLIENTS=${CLIENTS:-1 2 4 8 16 32 64}
DURATION=${DURATION:-10}
WORKLOAD=${WORKLOAD:-select-only}
THREADS=${THREADS:-}
RUN_DIR=${RUN_DIR:-$top/build/run}

# --- validate parameters before anything starts ---------------------------
is_posint() { [[ "$1" =~ ^[1-9][0-9]*$ ]]; }
is_posint "$SCALE" || die "SCALE must be a positive integer, not \"$SCALE\""
is_posint "$DURATION" || die "DURATION must be a positive integer (seconds), not \"$DURATION\""
[ -n "$CLIENTS" ] || die "CLIENTS is empty"
for c in $CLIENTS; do
	is_posint "$c" || die "CLIENTS must be positive integers, not \"$c\""
done
[ -z "$THREADS" ] || is_posint "$THREADS" || die "THREADS must be a positive integer, not \"$THREADS\""
[ -n "$STRATEGIES" ] || die "STRATEGIES is empty"
for s in $STRATEGIES; do
	case $s in
		default|tas|ttas_spin|ttas) ;;
		*) die "unknown strategy \"$s\" in STRATEGIES (valid: default tas ttas_spin ttas)" ;;
	esac
done
case $WORKLOAD in
	select-only) workload_args="-S -M prepared" ;;
	tpcb-like) workload_args="-M prepared" ;;
	simple-update) workload_args="-N -M prepared" ;;
	*) die "unknown WORKLOAD \"$WORKLOAD\" (valid: select-only tpcb-like simple-update)" ;;
esac

# --- as root, run the rest as the unprivileged user -----------------------
if [ "$(id -u)" = 0 ] && [ "${1:-}" != "--as-user" ]; then
	mkdir -p "$RUN_DIR"
	AS_USER_WRITABLE="$RUN_DIR" RUN_DIR="$RUN_DIR" exec scripts/as-user.sh "$0" --as-user
fi

bindir=$("$PG_CONFIG" --bindir)
export PATH="$bindir:$PATH"
nproc=$(nproc)
max_clients=0
for c in $CLIENTS; do [ "$c" -gt "$max_clients" ] && max_clients=$c; done

mkdir -p "$RUN_DIR"
exec 9>"$RUN_DIR/.lock"
flock -n 9 || die "another make run is in progress (lock $RUN_DIR/.lock is held)"

stamp=$(date +%Y%m%d-%H%M%S)
rundir=$RUN_DIR/$stamp
mkdir -p "$rundir"
data=$rundir/data
# unix socket paths are limited to about 100 bytes: keep it short
sock=$(mktemp -d /tmp/pg_lockstat-run.XXXXXX)
log=$rundir/server.log
port=$(( 20000 + RANDOM % 20000 ))
export PGHOST=$sock PGPORT=$port PGDATABASE=postgres

server_running=0
cleanup() {
	if [ $server_running = 1 ]; then
		if ! pg_ctl -D "$data" -m fast -w stop >/dev/null 2>&1 &&
			! pg_ctl -D "$data" -m immediate -w stop >/dev/null 2>&1; then
			echo "$me: could not stop the server of $data; stop it with pg_ctl -D $data stop" >&2
			return
		fi
	fi
	rm -rf "$sock" "$data"
}
trap cleanup EXIT
trap 'echo "$me: interrupted" >&2; exit 130' INT TERM

step() { echo "$me: $*" >&2; }
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }

step "cluster in $rundir (port $port)"
initdb -D "$data" -A trust -N >"$rundir/initdb.log" 2>&1 || \
	die "initdb failed; see $rundir/initdb.log"
cat >>"$data/postgresql.conf" <<CONF
# written by bench/run-study.sh
listen_addresses = ''
port = $port
unix_socket_directories = '$sock'
max_connections = $(( max_clients + 10 ))
shared_preload_libraries = 'pg_lockstat'
CONF

start_server() {
	# set first: a server that failed to start in time may still be running
	server_running=1
	pg_ctl -D "$data" -l "$log" -w -t 120 start >/dev/null || \
		die "server did not start (strategy $1); see $log"
}
stop_server() {
	pg_ctl -D "$data" -m fast -w stop >/dev/null || die "server did not stop; see $log"
	server_running=0
}

start_server default
psql_q -c "CREATE EXTENSION pg_lockstat" || die "CREATE EXTENSION pg_lockstat failed"
psql_q -c "CREATE TABLE study_runs (strategy text, clients int, tps float8, seconds float8)
	       ;CREATE TABLE study_locks (strategy text, clients int, LIKE pg_lwlock_stats)" || \
	die "creating the result tables failed"
step "pgbench -i -s $SCALE"
pgbench -i -q -s "$SCALE" postgres >"$rundir/pgbench-init.log" 2>&1 || \
	die "pgbench -i failed; see $rundir/pgbench-init.log"
stop_server

echo "pg_lockstat study: workload $WORKLOAD ($workload_args), scale $SCALE, ${DURATION}s per run, $nproc CPUs"
for s in $STRATEGIES; do
	sed -i '/^pg_lockstat.spin_strategy/d' "$data/postgresql.conf"
	echo "pg_lockstat.spin_strategy = '$s'" >>"$data/postgresql.conf"
	start_server "$s"
	inforce=$(psql_q -c "SELECT spin_strategy FROM pg_lockstat_status")
	[ "$inforce" = "$s" ] || die "strategy $s requested but $inforce in force"
	for c in $CLIENTS; do
		j=${THREADS:-$(( c < nproc ? c : nproc ))}
		psql_q -c "SELECT pg_lockstat_reset()" >/dev/null || die "pg_lockstat_reset() failed"
		out=$rundir/pgbench-$s-$c.log
		t0=$(date +%s.%N)
		pgbench -n $workload_args -c "$c" -j "$j" -T "$DURATION" postgres >"$out" 2>&1 || \
			die "pgbench failed (strategy $s, $c clients); see $out"
		t1=$(date +%s.%N)
		tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$out" | head -n 1)
		[ -n "$tps" ] || die "no tps in pgbench output (strategy $s, $c clients); see $out"
		elapsed=$(echo "$t1 - $t0" | bc -l 2>/dev/null || awk "BEGIN{print $t1 - $t0}")
		psql_q -c "INSERT INTO study_locks SELECT '$s', $c, * FROM pg_lwlock_stats" \
			-c "INSERT INTO study_runs VALUES ('$s', $c, $tps, $elapsed)" || \
			die "recording results failed (strategy $s, $c clients)"
		printf '%s: strategy %-9s clients %4d  %8.1f s  %10.1f tps\n' \
			"$me" "$s" "$c" "$elapsed" "$tps" >&2
	done
	stop_server
done

start_server report
psql_q -c "\\copy study_runs TO '$rundir/runs.csv' CSV HEADER" \
	-c "\\copy (SELECT * FROM study_locks ORDER BY strategy, clients, blocks DESC) TO '$rundir/locks.csv' CSV HEADER" || \
	die "writing CSV failed"

strategies_sql=$(printf "'%s'," $STRATEGIES); strategies_sql=${strategies_sql%,}
echo
echo "(a) tps by clients and spin strategy"
cols=""
for s in $STRATEGIES; do
	cols="$cols, round(max(tps) FILTER (WHERE strategy = '$s')::numeric, 0) AS \"$s\""
done
psql -X -q -v ON_ERROR_STOP=1 -P footer=off \
	-c "SELECT clients $cols FROM study_runs GROUP BY clients ORDER BY clients" || die "report (a) failed"

for s in $STRATEGIES; do
	echo
	echo "(b) top 10 LWLocks by blocks: strategy $s, $max_clients clients"
	psql -X -q -v ON_ERROR_STOP=1 -P footer=off -c "
		SELECT tranche AS lock, sh_acquires + ex_acquires AS acquires,
		       blocks AS \"Blk\", spin_delays AS \"SpinDelay\",
		       round(blk_pct::numeric, 2) AS \"Blk %\",
		       round(spin_delay_pct::numeric, 2) AS \"SpinDelay %\",
		       round(wait_time::numeric, 1) AS \"wait ms\"
		FROM study_locks
		WHERE strategy = '$s' AND clients = $max_clients
		ORDER BY blocks DESC, spin_delays DESC, acquires DESC
		LIMIT 10" || die "report (b) failed"
done
stop_server

echo
echo "raw results: $rundir/runs.csv, $rundir/locks.csv"
