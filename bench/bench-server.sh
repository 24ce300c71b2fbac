# bench-server.sh - the throwaway server of the lock benchmarks, sourced by
# observer.sh and ceiling.sh (not run on its own)
#
# bench_server_start CONNECTIONS: initdb in $OUT/data, a server on a Unix
# socket in $OUT (port PGPORT_BENCH, default 54329) with pg_lockstat and the
# test module lockstat_test preloaded and room for CONNECTIONS clients
# besides, started, stopped again when the script exits, and both
# extensions created.  Extra settings for postgresql.conf may be given on
# standard input.
# psql ARGS: psql as the benchmark's client (-X -q -At, ON_ERROR_STOP).
# bench_wait_idle [CONDITION]: wait until no other client backend is left
# (those of the last pgbench run) and CONDITION, an SQL boolean, holds; no
# time limit (the state itself is waited for).
#
# Needs: PG_CONFIG, OUT, die() and, for pgbench, $bin and $port, which it
# sets.

bin=$("$PG_CONFIG" --bindir 2>/dev/null) ||
	die "cannot run \"$PG_CONFIG --bindir\": set PG_CONFIG to the pg_config of the patched server"
port=${PGPORT_BENCH:-54329}

bench_server_start() {
	local data=$OUT/data
	rm -rf "$data"
	mkdir -p "$OUT"
	"$bin/initdb" -D "$data" -A trust -N >"$OUT/initdb.log" 2>&1 ||
		die "initdb failed; see $OUT/initdb.log"
	{
		cat <<CONF
port = $port
listen_addresses = ''
unix_socket_directories = '$OUT'
shared_preload_libraries = 'pg_lockstat,lockstat_test'
max_connections = $(($1 + 10))
CONF
		cat
	} >>"$data/postgresql.conf"
	"$bin/pg_ctl" -D "$data" -l "$OUT/server.log" -w start >/dev/null ||
		die "the server did not start; see $OUT/server.log"
	trap '"$bin/pg_ctl" -D "$OUT/data" -m fast stop >/dev/null 2>&1 || true' EXIT
	psql -c 'CREATE EXTENSION pg_lockstat; CREATE EXTENSION lockstat_test;'
}

psql() {
	"$bin/psql" -X -q -At -h "$OUT" -p "$port" -d postgres -v ON_ERROR_STOP=1 "$@"
}

bench_wait_idle() {
	psql -c "DO \$\$ BEGIN
		WHILE (SELECT count(*) FROM pg_stat_activity
			   WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()) > 0
			  OR NOT (${1:-true}) LOOP
			PERFORM pg_sleep(0.05);
			PERFORM pg_stat_clear_snapshot();
		END LOOP; END \$\$"
}
