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
#   WORKLOAD    select-only (-S -M prepared), tpcb-like, simple-update, or
#               a script of bench/workloads/ by name: snapshot-heavy,
#               sinval, wal-insert, procarray (select-only)
#   THREADS     pgbench -j (the smaller of clients and nproc)
#   REPEAT      runs per point (3); the tables show the median and min-max
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
REPEAT=${REPEAT:-3}
RUN_DIR=${RUN_DIR:-$top/build/run}

# --- validate parameters before anything starts ---------------------------
is_posint() { [[ "$1" =~ ^[1-9][0-9]*$ ]]; }
is_posint "$SCALE" || die "SCALE must be a positive integer, not \"$SCALE\""
is_posint "$REPEAT" || die "REPEAT must be a positive integer, not \"$REPEAT\""
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
# built-in pgbench scripts, or bench/workloads/<name>.sql, whose header
# says what it stresses and may give a "-- pgbench-options:" line
workloads="select-only tpcb-like simple-update $(cd "$top/bench/workloads" && ls *.sql | sed 's/\.sql$//' | tr '\n' ' ')"
case $WORKLOAD in
	select-only) workload_args="-S -M prepared" ;;
	tpcb-like) workload_args="-M prepared" ;;
	simple-update) workload_args="-N -M prepared" ;;
	*)
		script=$top/bench/workloads/$WORKLOAD.sql
		[[ "$WORKLOAD" =~ ^[a-z0-9-]+$ ]] && [ -f "$script" ] || \
			die "unknown WORKLOAD \"$WORKLOAD\" (valid: $workloads)"
		workload_args="-f $script $(sed -n 's/^-- pgbench-options: //p' "$script")"
		;;
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

{
	echo "nproc: $nproc"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
	echo "kernel: $(uname -srvm)"
	echo "memory: $(grep MemTotal /proc/meminfo | sed 's/MemTotal: *//')"
} >"$rundir/machine.txt"
{
	echo "server: $(postgres --version)"
	echo "pgbench: $(pgbench --version)"
	echo "pg_lockstat: $(git -c safe.directory='*' -C "$top" describe --always --dirty 2>/dev/null || echo unknown)"
	echo "core patch: $(sha256sum "$top"/patches/pg18/*.patch | cut -c1-12 | tr '\n' ' ')"
} >"$rundir/versions.txt"
echo "SCALE=$SCALE STRATEGIES=\"$STRATEGIES\" CLIENTS=\"$CLIENTS\" DURATION=$DURATION WORKLOAD=$WORKLOAD REPEAT=$REPEAT THREADS=$THREADS" \
	>"$rundir/commands.txt"

start_server default
psql_q -c "CREATE EXTENSION pg_lockstat" || die "CREATE EXTENSION pg_lockstat failed"
psql_q -c "CREATE TABLE study_runs (strategy text, clients int, run int, tps float8, seconds float8)
	       ;CREATE TABLE study_locks (strategy text, clients int, run int, LIKE pg_lwlock_stats)" || \
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
		for r in $(seq 1 "$REPEAT"); do
			psql_q -c "SELECT pg_lockstat_reset()" >/dev/null || die "pg_lockstat_reset() failed"
			out=$rundir/pgbench-$s-$c-$r.log
			cmd="pgbench -n $workload_args -c $c -j $j -T $DURATION postgres"
			echo "[$s] $cmd" >>"$rundir/commands.txt"
			t0=$(date +%s.%N)
			$cmd >"$out" 2>&1 || \
				die "pgbench failed (strategy $s, $c clients, run $r); see $out"
			t1=$(date +%s.%N)
			tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$out" | head -n 1)
			[ -n "$tps" ] || die "no tps in pgbench output (strategy $s, $c clients, run $r); see $out"
			elapsed=$(echo "$t1 - $t0" | bc -l)
			psql_q -c "INSERT INTO study_locks SELECT '$s', $c, $r, * FROM pg_lwlock_stats" \
				-c "INSERT INTO study_runs VALUES ('$s', $c, $r, $tps, $elapsed)" || \
				die "recording results failed (strategy $s, $c clients, run $r)"
			printf '%s: strategy %-9s clients %4d  run %d/%d  %8.1f s  %10.1f tps\n' \
				"$me" "$s" "$c" "$r" "$REPEAT" "$elapsed" "$tps" >&2
		done
	done
	stop_server
done

start_server report
psql_q -c "SELECT name, setting, unit, source FROM pg_settings WHERE source NOT IN ('default', 'override') ORDER BY name" \
	>"$rundir/settings.txt" || die "saving the server settings failed"
psql_q -c "\\copy study_runs TO '$rundir/runs.csv' CSV HEADER" \
	-c "\\copy (SELECT * FROM study_locks ORDER BY strategy, clients, blocks DESC) TO '$rundir/locks.csv' CSV HEADER" || \
	die "writing CSV failed"

strategies_sql=$(printf "'%s'," $STRATEGIES); strategies_sql=${strategies_sql%,}
echo
# One row per point: median, min, max, and whether the runs split into two
# separated groups ("bifurcated", like the good and bad runs of the flexlock
# thread): at least 3 runs, and the largest gap between consecutive sorted
# tps values is over 10% of the median and over twice the spread within
# either group it separates.
psql_q -c "
	CREATE VIEW study_points AS
	WITH g AS (
		SELECT strategy, clients, tps,
		       tps - lag(tps) OVER (PARTITION BY strategy, clients ORDER BY tps) AS gap
		FROM study_runs),
	p AS (
		SELECT strategy, clients, count(*) AS n, min(tps) AS lo, max(tps) AS hi,
		       percentile_cont(0.5) WITHIN GROUP (ORDER BY tps) AS median,
		       max(gap) AS maxgap
		FROM g GROUP BY strategy, clients),
	split AS (
		SELECT DISTINCT ON (g.strategy, g.clients) g.strategy, g.clients,
		       g.tps - g.gap AS lower_top, g.tps AS upper_bottom
		FROM g JOIN p USING (strategy, clients)
		WHERE g.gap = p.maxgap
		ORDER BY g.strategy, g.clients, g.tps)
	SELECT p.strategy, p.clients, p.n, p.median, p.lo, p.hi,
	       coalesce(p.n >= 3 AND p.maxgap > 0.1 * p.median
	                AND p.maxgap > 2 * greatest(s.lower_top - p.lo, p.hi - s.upper_bottom),
	                false) AS bifurcated
	FROM p LEFT JOIN split s USING (strategy, clients)" || die "computing the points failed"
psql_q -c "\\copy (SELECT * FROM study_points ORDER BY strategy, clients) TO '$rundir/points.csv' CSV HEADER" || \
	die "writing points.csv failed"

echo "(a) tps by clients and spin strategy: median (min-max) of $REPEAT runs; * bifurcated"
cols=""
for s in $STRATEGIES; do
	cols="$cols, max(round(median::numeric) || ' (' || round(lo::numeric) || '-' || round(hi::numeric) || ')'
	                 || CASE WHEN bifurcated THEN ' *' ELSE '' END) FILTER (WHERE strategy = '$s') AS \"$s\""
done
psql -X -q -v ON_ERROR_STOP=1 -P footer=off \
	-c "SELECT clients $cols FROM study_points GROUP BY clients ORDER BY clients" || die "report (a) failed"

for s in $STRATEGIES; do
	echo
	echo "(b) top 10 LWLocks by blocks: strategy $s, $max_clients clients, sum of $REPEAT runs"
	psql -X -q -v ON_ERROR_STOP=1 -P footer=off -c "
		SELECT tranche AS lock, sum(sh_acquires + ex_acquires) AS acquires,
		       sum(blocks) AS \"Blk\", sum(spin_delays) AS \"SpinDelay\",
		       round((100 * sum(blocks) / nullif(sum(sum(blocks)) OVER (), 0))::numeric, 2) AS \"Blk %\",
		       round((100 * sum(spin_delays) / nullif(sum(sum(spin_delays)) OVER (), 0))::numeric, 2) AS \"SpinDelay %\",
		       round(sum(wait_time)::numeric, 1) AS \"wait ms\"
		FROM study_locks
		WHERE strategy = '$s' AND clients = $max_clients
		GROUP BY tranche
		ORDER BY 3 DESC, 4 DESC, 2 DESC
		LIMIT 10" || die "report (b) failed"
done
# per strategy: share of all blocks and of all spin delays of its top 5
# tranches (by blocks plus spin delays over the whole study), per client count
for s in $STRATEGIES; do
	psql_q -F ' ' -c "
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
		ORDER BY t.rank, per.clients" >"$rundir/locks-$s.dat" || die "lock shares of $s failed"
done

stop_server

# tps against clients, one line per strategy, with min-max bars (gnuplot)
if command -v gnuplot >/dev/null; then
	plot=""
	for s in $STRATEGIES; do
		awk -F, -v s="$s" 'NR > 1 && $1 == s { print $2, $4, $5, $6 }' \
			"$rundir/points.csv" >"$rundir/tps-$s.dat"
		plot="$plot${plot:+, }'$rundir/tps-$s.dat' using 1:2:3:4 with yerrorlines title '$s'"
	done
	gnuplot -e "set terminal png size 900,600 noenhanced; set output '$rundir/tps.png';
		set xrange [$(echo "$CLIENTS" | tr ' ' '\n' | sort -n | head -n 1)*0.8:$max_clients*1.25]; set yrange [0:*];
		set title 'pgbench $WORKLOAD, scale $SCALE, ${DURATION}s x $REPEAT runs, $nproc CPUs';
		set xlabel 'clients'; set ylabel 'tps (median, min-max)'; set logscale x 2;
		set key top left; set grid; plot $plot" 2>"$rundir/gnuplot.log" || \
		die "plotting failed; see $rundir/gnuplot.log"
	# lock shares: one image per strategy, blocks above, spin delays below
	for s in $STRATEGIES; do
		dat=$rundir/locks-$s.dat
		[ -s "$dat" ] || continue
		lines=""
		for r in $(cut -d' ' -f1 "$dat" | sort -un); do
			name=$(awk -v r="$r" '$1 == r { print $3; exit }' "$dat")
			lines="$lines${lines:+, }'$dat' using (\$1 == $r ? \$2 : 1/0):COL with linespoints title '$name'"
		done
		gnuplot -e "set terminal png size 900,800 noenhanced; set output '$rundir/locks-$s.png';
			set multiplot layout 2,1 title 'top LWLocks, strategy $s: share per client count';
			set logscale x 2; set xrange [$(echo "$CLIENTS" | tr ' ' '\n' | sort -n | head -n 1)*0.8:$max_clients*1.25];
			set yrange [0:100]; set grid; set key outside right;
			set ylabel 'Blk %'; plot ${lines//COL/4};
			set xlabel 'clients'; set ylabel 'SpinDelay %'; plot ${lines//COL/5};
			unset multiplot" 2>>"$rundir/gnuplot.log" || \
			die "plotting the lock shares of $s failed; see $rundir/gnuplot.log"
	done
else
	echo "$me: gnuplot not found, no plot (apt-get install gnuplot-nox)" >&2
fi

echo
echo "results: $rundir/ (runs.csv, points.csv, locks.csv, tps.png, locks-<strategy>.png, settings.txt, machine.txt, versions.txt, commands.txt)"
