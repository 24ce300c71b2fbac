#!/bin/bash
# Count, with callgrind, the instructions pg_lockstat's code executes on the
# blocked LWLock path and the contended spin wait path of one installation.
#
# usage: run.sh LABEL INSTALL PORT
#   e.g. run.sh before <667e9a1 checkout>/build/pg18 55491
#        run.sh after  build/pg18 55492
#
# Runs as root; the server runs as pglockstat.  Cluster in /tmp/cg-LABEL,
# callgrind outputs (one per process) in $OUT_DIR/LABEL/ (default: the current directory).
set -euo pipefail
label=$1
inst=$2
port=$3
n_lw=${N_LW:-300}          # acquisitions per LWLock session
hold_lw=${HOLD_LW:-200}    # usec held (pg_usleep), so that others block
n_spin=${N_SPIN:-2000}     # acquisitions per spinlock session
hold_spin=${HOLD_SPIN:-20} # usec held (busy wait), so that others spin
sessions=${SESSIONS:-3}

dir=/tmp/cg-$label
out=${OUT_DIR:-$(pwd)}/$label
rm -rf "$dir" "$out"
mkdir -p "$dir" "$out"
chown pglockstat: "$dir" "$out"
as_pg() { su pglockstat -s /bin/bash -c "$*"; }

as_pg "$inst/bin/initdb -D $dir/data -A trust -U postgres >$dir/initdb.log 2>&1"
cat >>"$dir/data/postgresql.conf" <<EOF
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
shared_preload_libraries = 'pg_lockstat,lockstat_test'
# no hold sampling: a sampled hold reads the clock inside the hold by design;
# leave it out so that the figures are those of the blocked path alone
pg_lockstat.hold_sample_every = 0
autovacuum = off
max_connections = 20
EOF

# The postmaster and every forked process under callgrind, one file each.
as_pg "cd $dir && nohup valgrind --tool=callgrind --trace-children=yes \
  --dump-instr=yes --callgrind-out-file=$out/cg.%p \
  $inst/bin/postgres -D $dir/data >$dir/server.log 2>&1 &"
for i in $(seq 1 300); do
  if $inst/bin/pg_isready -h $dir -p $port -U postgres -q; then break; fi
  sleep 1
done
psql_() { $inst/bin/psql -X -h $dir -p $port -U postgres -d postgres -v ON_ERROR_STOP=1 "$@"; }
psql_ -c "CREATE EXTENSION pg_lockstat; CREATE EXTENSION lockstat_test;"
psql_ -c "SELECT version();" -c "SHOW pg_lockstat.track;" -c "SHOW pg_lockstat.hold_sample_every;"

# Backends that block on the test LWLock; the pids let us pick their outputs.
pids=()
for s in $(seq 1 $sessions); do
  psql_ -At -c "SELECT 'lw', pg_backend_pid(), lockstat_test_lwlock('exclusive', $n_lw, $hold_lw);" >"$dir/lw.$s" &
  pids+=($!)
done
wait "${pids[@]}"
pids=()
for s in $(seq 1 $sessions); do
  psql_ -At -c "SELECT 'spin', pg_backend_pid(), lockstat_test_spinlock($n_spin, $hold_spin);" >"$dir/spin.$s" &
  pids+=($!)
done
wait "${pids[@]}"
cat "$dir"/lw.* "$dir"/spin.* | tee "$out/sessions.txt"

psql_ -c "SELECT * FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'" \
      -c "SELECT * FROM pg_spinlock_stats WHERE contended > 0" \
      > "$out/views.txt" 2>&1 || true
cat "$out/views.txt"

as_pg "$inst/bin/pg_ctl -D $dir/data -m fast -t 600 -w stop"
cp "$dir/server.log" "$out/server.log"
