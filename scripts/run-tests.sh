#!/bin/bash
#
# run-tests.sh - run pg_lockstat's pg_regress and TAP tests
#
# Called by "make test" after pg_lockstat and lockstat_test are installed
# into the server of PG_CONFIG.  The pg_regress tests (REGRESS, from the
# Makefile) run on a temporary instance configured by test/pg_lockstat.conf;
# the TAP tests in t/ create their own clusters with PostgreSQL::Test::Cluster.
# Output goes to build/test/.  As root, everything runs as the unprivileged
# user pglockstat (scripts/as-user.sh), since PostgreSQL refuses to run as
# root.
#
# Environment: PG_CONFIG (required), REGRESS (test names; "none" skips
# pg_regress and pytest), PYTEST (0 skips pytest: .ci/run runs it once, not
# once per major), PROVE_TESTS (optional subset of t/*.pl), PROVE_FLAGS,
# STOCK_PG_CONFIG (unpatched server for t/005), UPGRADE_FROM_PG_CONFIG (a
# patched server of an older major with pg_lockstat installed, for t/032),
# TEST_OUTDIR (default build/test).
# Exit status: 0 if every test passed, 1 otherwise.
#
set -euo pipefail

: "${PG_CONFIG:?PG_CONFIG must point to the pg_config of the patched server}"
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
outdir=${TEST_OUTDIR:-$top/build/test}

if [ "${1:-}" != "--as-user" ]; then
	rm -rf "$outdir"
	mkdir -p "$outdir"
	AS_USER_WRITABLE="$outdir" exec scripts/as-user.sh "$0" --as-user
fi

bindir=$("$PG_CONFIG" --bindir)
pgxs=$(dirname "$("$PG_CONFIG" --pgxs)")/..
pgxs=$(cd "$pgxs/.." && pwd)		# .../lib/postgresql/pgxs
pg_regress=$pgxs/src/test/regress/pg_regress
regress=${REGRESS:-$(sed -n 's/^REGRESS = //p' Makefile)}
status=0

for f in "$pg_regress" "$pgxs/src/test/perl/PostgreSQL/Test/Cluster.pm"; do
	if [ ! -e "$f" ]; then
		echo "run-tests: $f is missing; was the server configured with --enable-tap-tests?" >&2
		exit 1
	fi
done

if [ "$regress" = none ]; then
	echo "run-tests: pg_regress skipped (REGRESS=none)"
else
	echo "run-tests: pg_regress ($regress)"
	mkdir -p "$outdir/regress"
	if ! "$pg_regress" \
		--temp-instance="$outdir/regress/tmp_check" \
		--temp-config="$top/test/pg_lockstat.conf" \
		--inputdir="$top" \
		--outputdir="$outdir/regress" \
		--bindir="$bindir" \
		--dbname=contrib_regression \
		$regress; then
		status=1
		if [ -f "$outdir/regress/regression.diffs" ]; then
			echo "run-tests: pg_regress failed; first lines of $outdir/regress/regression.diffs:" >&2
			head -n 60 "$outdir/regress/regression.diffs" >&2
		fi
	fi
fi

# The study harness's own tests (bench/tests, pytest): its statistics,
# parsing and report, without a server.  Debian's python3 has pytest,
# numpy, scipy and psycopg2 (scripts/deps.sh).
# Left out with REGRESS=none and with PYTEST=0, which make test-arch sets:
# they test no server, and run on this machine's python3 whatever the
# server's architecture.
if [ "$regress" = none ] || [ "${PYTEST:-1}" = 0 ]; then
	echo "run-tests: pytest bench/tests skipped ($([ "$regress" = none ] && echo REGRESS=none || echo PYTEST=0))"
else
	echo "run-tests: study harness (pytest bench/tests)"
	if ! PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 -m pytest -q -p no:cacheprovider \
		"$top/bench/tests"; then
		status=1
		echo "run-tests: pytest bench/tests failed" >&2
	fi
fi

echo "run-tests: TAP tests"
mkdir -p "$outdir/tap"
# PostgreSQL 16 and later write the logs to TESTLOGDIR and the data to
# TESTDATADIR; 15 writes both under $TESTDIR/tmp_check.
if ! TESTLOGDIR="$outdir/tap/log" \
	TESTDATADIR="$outdir/tap" \
	TESTDIR="$outdir/tap" \
	PATH="$bindir:$PATH" \
	PG_REGRESS="$pg_regress" \
	PG_CONFIG="$PG_CONFIG" \
	prove -I "$pgxs/src/test/perl" -I "$top/t" ${PROVE_FLAGS:-} \
		${PROVE_TESTS:-t/*.pl}; then
	status=1
	echo "run-tests: TAP tests failed; logs are in $outdir/tap/log (PostgreSQL 15: $outdir/tap/tmp_check/log)" >&2
fi

if [ $status -eq 0 ]; then
	echo "run-tests: all tests passed"
else
	echo "run-tests: FAILED" >&2
fi
exit $status
