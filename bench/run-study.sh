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
# Exit status: 0 on success (also when gnuplot is missing or fails: the
#   tables and CSVs are complete, a warning says why there is no plot);
#   1 on an invalid parameter, a second run while one holds the lock, or a
#   failing step, with "run-study: error: <step> failed ..." on stderr;
#   130, 143 or 129 when interrupted by SIGINT (Ctrl-C), SIGTERM or SIGHUP.
#   In every case the server is stopped (immediate shutdown after a failure)
#   and the cluster's data directory removed; the logs stay.
#
set -euo pipefail

me=run-study
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

# Every failure prints "run-study: error: <what>" and exits 1; once the
# cluster exists, <what> is "<step> failed ...", and on_exit stops the server.
died=0
die() { echo "$me: error: $*" >&2; died=1; exit 1; }
warn() { echo "$me: warning: $*" >&2; }

[ -n "${PG_CONFIG:-}" ] || die "PG_CONFIG must point to the pg_config of the patched server"
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
bindir=$("$PG_CONFIG" --bindir 2>/dev/null) || \
	die "PG_CONFIG=\"$PG_CONFIG\" cannot be run; it must point to the pg_config of the patched server"
for prog in initdb pg_ctl postgres psql pgbench; do
	[ -x "$bindir/$prog" ] || die "PG_CONFIG=\"$PG_CONFIG\": $bindir/$prog is missing"
done
[ -z "$THREADS" ] || is_posint "$THREADS" || die "THREADS must be a positive integer, not \"$THREADS\""
[ -n "$STRATEGIES" ] || die "STRATEGIES is empty"
for s in $STRATEGIES; do
	case $s in
		default|tas|ttas_spin|ttas|ttas_backoff) ;;
		*) die "unknown strategy \"$s\" in STRATEGIES (valid: default tas ttas_spin ttas ttas_backoff)" ;;
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

export PATH="$bindir:$PATH"
# libpq settings of the caller's environment (PGUSER, PGOPTIONS, PGSERVICE,
# ...) must not reach the throwaway cluster; PGHOST, PGPORT and PGDATABASE
# are set below
for v in $(compgen -e | grep '^PG' || true); do
	[ "$v" = PG_CONFIG ] || unset "$v"
done
nproc=$(nproc)
max_clients=0
for c in $CLIENTS; do [ "$c" -gt "$max_clients" ] && max_clients=$c; done

mkdir -p "$RUN_DIR" || die "cannot create RUN_DIR $RUN_DIR"
# One study at a time per RUN_DIR: an flock on fd 9, held until this script
# exits (the server is started with fd 9 closed, so a server that could not
# be stopped does not hold it).  The file keeps the pid of the holder.
lockfile=$RUN_DIR/.lock
exec 9>>"$lockfile" || die "cannot open the lock file $lockfile"
if ! flock -n 9; then
	holder=$(head -n 1 "$lockfile" 2>/dev/null || true)
	die "another make run is in progress${holder:+ (pid $holder)}: lock $lockfile is held; wait for it to end or interrupt it"
fi
echo $$ >"$lockfile"

# --- failure, interruption and cleanup -------------------------------------
at="setting up the study"	# the current step, named by error messages
child=""			# pid of the command that run_bg waits for
server_running=0
interrupted=""
failed_cmd=""
rundir="" data="" sock="" log=""

# On any exit: stop what runs, remove the cluster, keep the logs.
on_exit() {
	local rc=$? st
	trap '' INT TERM HUP	# a second Ctrl-C must not cut the cleanup short
	set +e
	if [ $rc -ne 0 ] && [ $died = 0 ] && [ -z "$interrupted" ]; then
		# a command failed outside the checks below (set -e)
		echo "$me: error: $at failed (exit status $rc${failed_cmd:+ at $failed_cmd})" >&2
	fi
	if [ -n "$child" ]; then
		kill -TERM "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	if [ $server_running = 1 ]; then
		# the data is thrown away: no shutdown checkpoint to wait for
		pg_ctl -D "$data" -m immediate -w -t 60 stop >/dev/null 2>&1
		pg_ctl -D "$data" status >/dev/null 2>&1
		st=$?
		if [ $st -ne 3 ] && [ $st -ne 4 ]; then	# 3: not running; 4: no data directory
			# keep its data directory and socket: it still runs
			echo "$me: error: could not stop the server of $data (see $log); stop it with: pg_ctl -D $data -m immediate stop" >&2
			exit $(( rc ? rc : 1 ))
		fi
	fi
	[ -z "$sock" ] || rm -rf "$sock"
	[ -z "$data" ] || rm -rf "$data"
	if [ $rc -ne 0 ] && [ -n "$rundir" ]; then
		echo "$me: no server left running; data directory removed; logs in $rundir/" >&2
	fi
	exit $rc
}
on_signal() {
	interrupted=$1
	echo "$me: interrupted by SIG$1 during $at; stopping" >&2
	exit "$2"
}
set -E
trap 'failed_cmd="line $LINENO: $BASH_COMMAND"' ERR
trap on_exit EXIT
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap 'on_signal HUP 129' HUP

# run_bg <log> <command...>: run a long command (initdb, pgbench) in the
# background, its output to <log>, and wait for it.  A signal then
# interrupts the wait at once and on_exit stops the command; a foreground
# command would make the trap wait for its end.  (The output is redirected
# here, not on the call: a trap runs with the redirections of the call.)
# The lock's fd 9 is closed for the command: only this script holds it.
run_bg() {
	local rc=0 out=$1
	shift
	"$@" >"$out" 2>&1 9>&- &
	child=$!
	wait "$child" || rc=$?
	child=""
	return $rc
}
# Up to 4 lines of a log file, indented, to stderr: the first lines that
# match the (lower-case) extended regular expression $2 ignoring case, if $2
# is given and some match; else the last lines.
show_log() {
	[ -s "$1" ] || return 0
	echo "$me: from $1:"
	awk -v pat="${2:-}" '
		pat != "" && tolower($0) ~ pat && n < 4 { m[n++] = $0 }
		{ last[NR % 4] = $0 }
		END {
			if (n) for (i = 0; i < n; i++) print "    " m[i]
			else for (i = NR - 3; i <= NR; i++) if (i > 0) print "    " last[i % 4]
		}' "$1"
} >&2

stamp=$(date +%Y%m%d-%H%M%S)
dir=$RUN_DIR/$stamp
n=1
while [ -e "$dir" ]; do		# a study that failed within the same second
	n=$(( n + 1 ))
	dir=$RUN_DIR/$stamp-$n
done
mkdir "$dir" || die "cannot create $dir"
rundir=$dir
data=$rundir/data
log=$rundir/server.log
# unix socket paths are limited to about 100 bytes: keep it short
sock=$(mktemp -d /tmp/pg_lockstat-run.XXXXXX) || die "mktemp -d /tmp/pg_lockstat-run.XXXXXX failed"
port=$(( 20000 + RANDOM % 20000 ))
PGUSER=$(id -un)
export PGHOST=$sock PGPORT=$port PGDATABASE=postgres PGUSER

step() { echo "$me: $*" >&2; }
psql_q() { psql -X -q -v ON_ERROR_STOP=1 -At "$@"; }

step "cluster in $rundir (port $port)"
at=initdb
rc=0
run_bg "$rundir/initdb.log" initdb -D "$data" -A trust -N || rc=$?
if [ $rc -ne 0 ]; then
	show_log "$rundir/initdb.log" 'error'
	die "initdb failed (exit status $rc); see $rundir/initdb.log"
fi
cat >>"$data/postgresql.conf" <<CONF
# written by bench/run-study.sh
listen_addresses = ''
port = $port
unix_socket_directories = '$sock'
max_connections = $(( max_clients + 10 ))
shared_preload_libraries = 'pg_lockstat'
CONF

start_server() {
	local lines
	at="server start (strategy $1)"
	lines=0
	[ ! -f "$log" ] || lines=$(wc -l <"$log")
	# set first: a server that failed to start in time may still be running
	server_running=1
	if ! pg_ctl -D "$data" -l "$log" -w -t 120 start >/dev/null 9>&-; then
		tail -n +$(( lines + 1 )) "$log" >"$rundir/server-start.log" 2>/dev/null
		show_log "$rundir/server-start.log"
		rm -f "$rundir/server-start.log"
		die "$at failed; see $log"
	fi
}
stop_server() {
	at="server stop"
	pg_ctl -D "$data" -m fast -w stop >/dev/null || die "$at failed; see $log"
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
at="CREATE EXTENSION pg_lockstat"
psql_q -c "CREATE EXTENSION pg_lockstat" || die "$at failed"
at="creating the result tables"
psql_q -c "CREATE TABLE study_runs (strategy text, clients int, run int, tps float8, seconds float8)
	       ;CREATE TABLE study_locks (strategy text, clients int, run int, LIKE pg_lwlock_stats)" || \
	die "$at failed"
step "pgbench -i -s $SCALE"
at="pgbench -i"
rc=0
run_bg "$rundir/pgbench-init.log" pgbench -i -q -s "$SCALE" postgres || rc=$?
if [ $rc -ne 0 ]; then
	show_log "$rundir/pgbench-init.log" 'error'
	die "$at failed (exit status $rc); see $rundir/pgbench-init.log"
fi
stop_server

echo "pg_lockstat study: workload $WORKLOAD ($workload_args), scale $SCALE, ${DURATION}s per run, $nproc CPUs"
for s in $STRATEGIES; do
	sed -i '/^pg_lockstat.spin_strategy/d' "$data/postgresql.conf"
	echo "pg_lockstat.spin_strategy = '$s'" >>"$data/postgresql.conf"
	start_server "$s"
	at="checking the strategy in force ($s)"
	inforce=$(psql_q -c "SELECT spin_strategy FROM pg_lockstat_status") || die "$at failed"
	[ "$inforce" = "$s" ] || die "$at failed: strategy $s requested but $inforce in force"
	# the settings each strategy's server ran with
	at="saving the server settings ($s)"
	{
		echo "-- strategy $s"
		psql_q -c "SELECT name, setting, unit, source FROM pg_settings WHERE source NOT IN ('default', 'override') ORDER BY name"
	} >>"$rundir/settings.txt" || die "$at failed"
	for c in $CLIENTS; do
		j=${THREADS:-$(( c < nproc ? c : nproc ))}
		for r in $(seq 1 "$REPEAT"); do
			point="strategy $s, $c clients, run $r"
			at="pg_lockstat_reset() ($point)"
			psql_q -c "SELECT pg_lockstat_reset()" >/dev/null || die "$at failed"
			out=$rundir/pgbench-$s-$c-$r.log
			cmd="pgbench -n $workload_args -c $c -j $j -T $DURATION postgres"
			echo "[$s] $cmd" >>"$rundir/commands.txt"
			at="pgbench ($point)"
			t0=$(date +%s.%N)
			rc=0
			run_bg "$out" $cmd || rc=$?
			t1=$(date +%s.%N)
			if [ $rc -ne 0 ]; then
				show_log "$out" 'error'
				die "$at failed (exit status $rc); see $out"
			fi
			tps=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$out" | head -n 1)
			[ -n "$tps" ] || die "$at failed: no tps in its output; see $out"
			elapsed=$(awk -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.3f", t1 - t0 }')
			at="recording the results ($point)"
			psql_q -c "INSERT INTO study_locks SELECT '$s', $c, $r, * FROM pg_lwlock_stats" \
				-c "INSERT INTO study_runs VALUES ('$s', $c, $r, $tps, $elapsed)" || \
				die "$at failed"
			printf '%s: strategy %-9s clients %4d  run %d/%d  %8.1f s  %10.1f tps\n' \
				"$me" "$s" "$c" "$r" "$REPEAT" "$elapsed" "$tps" >&2
		done
	done
	stop_server
done

start_server report
at="report"
psql_q -c "\\copy study_runs TO '$rundir/runs.csv' CSV HEADER" \
	-c "\\copy (SELECT * FROM study_locks ORDER BY strategy, clients, blocks DESC) TO '$rundir/locks.csv' CSV HEADER" || \
	die "$at failed: writing runs.csv and locks.csv"

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
	FROM p LEFT JOIN split s USING (strategy, clients)" || die "$at failed: computing the points"
psql_q -c "\\copy (SELECT * FROM study_points ORDER BY strategy, clients) TO '$rundir/points.csv' CSV HEADER" || \
	die "$at failed: writing points.csv"

echo "(a) tps by clients and spin strategy: median (min-max) of $REPEAT run$([ "$REPEAT" -eq 1 ] || echo s); * bifurcated"
cols=""
for s in $STRATEGIES; do
	cols="$cols, max(round(median::numeric) || ' (' || round(lo::numeric) || '-' || round(hi::numeric) || ')'
	                 || CASE WHEN bifurcated THEN ' *' ELSE '' END) FILTER (WHERE strategy = '$s') AS \"$s\""
done
psql -X -q -v ON_ERROR_STOP=1 -P footer=off \
	-c "SELECT clients $cols FROM study_points GROUP BY clients ORDER BY clients" || die "$at failed: table (a)"

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
		LIMIT 10" || die "$at failed: table (b) of $s"
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
		ORDER BY t.rank, per.clients" >"$rundir/locks-$s.dat" || die "$at failed: the lock shares of $s"
done

stop_server

# Plots (gnuplot).  Not fatal: the tables are printed and the CSVs saved by
# now, so a missing or failing gnuplot is a warning and the study succeeds.
at="plots"
plots=""
if ! command -v gnuplot >/dev/null; then
	warn "gnuplot not found, no plots (apt-get install gnuplot-nox)"
else
	# tps against clients, one line per strategy, with min-max bars
	plot=""
	for s in $STRATEGIES; do
		awk -F, -v s="$s" 'NR > 1 && $1 == s { print $2, $4, $5, $6 }' \
			"$rundir/points.csv" >"$rundir/tps-$s.dat"
		plot="$plot${plot:+, }'$rundir/tps-$s.dat' using 1:2:3:4 with yerrorlines title '$s'"
	done
	if gnuplot -e "set terminal png size 900,600 noenhanced; set output '$rundir/tps.png';
		set xrange [$(echo "$CLIENTS" | tr ' ' '\n' | sort -n | head -n 1)*0.8:$max_clients*1.25]; set yrange [0:*];
		set title 'pgbench $WORKLOAD, scale $SCALE, ${DURATION}s x $REPEAT runs, $nproc CPUs';
		set xlabel 'clients'; set ylabel 'tps (median, min-max)'; set logscale x 2;
		set key top left; set grid; plot $plot" 2>"$rundir/gnuplot.log"; then
		plots="tps.png"
	else
		rm -f "$rundir/tps.png"
		warn "plotting tps.png failed, no plot; see $rundir/gnuplot.log"
	fi
	# lock shares: one image per strategy, blocks above, spin delays below
	for s in $STRATEGIES; do
		dat=$rundir/locks-$s.dat
		[ -s "$dat" ] || continue
		lines=""
		for r in $(cut -d' ' -f1 "$dat" | sort -un); do
			name=$(awk -v r="$r" '$1 == r { print $3; exit }' "$dat")
			lines="$lines${lines:+, }'$dat' using (\$1 == $r ? \$2 : 1/0):COL with linespoints title '$name'"
		done
		if gnuplot -e "set terminal png size 900,800 noenhanced; set output '$rundir/locks-$s.png';
			set multiplot layout 2,1 title 'top LWLocks, strategy $s: share per client count';
			set logscale x 2; set xrange [$(echo "$CLIENTS" | tr ' ' '\n' | sort -n | head -n 1)*0.8:$max_clients*1.25];
			set yrange [0:100]; set grid; set key outside right;
			set ylabel 'Blk %'; plot ${lines//COL/4};
			set xlabel 'clients'; set ylabel 'SpinDelay %'; plot ${lines//COL/5};
			unset multiplot" 2>>"$rundir/gnuplot.log"; then
			plots="$plots${plots:+, }locks-$s.png"
		else
			rm -f "$rundir/locks-$s.png"
			warn "plotting locks-$s.png failed, no plot; see $rundir/gnuplot.log"
		fi
	done
fi

echo
echo "results: $rundir/ (runs.csv, points.csv, locks.csv, ${plots:+$plots, }settings.txt, machine.txt, versions.txt, commands.txt)"
