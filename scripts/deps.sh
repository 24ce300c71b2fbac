#!/bin/bash
#
# deps.sh - check (and, as root, install) the Debian packages needed to
# build PostgreSQL (15 or 18) with pg_lockstat and to run its tests and studies.
#
# Each package is checked with dpkg-query; a package counts as present only
# when its status is "install ok installed" (or "hold ok installed").
# Two lists: the packages needed to build and to run the tests and studies
# (gdb among them: t/021, t/026 and t/054 stop a backend at a breakpoint;
# python3-psycopg2 is the study's driver, python3-pytest runs its tests;
# sysbench, with its PostgreSQL driver built in, runs the study's
# WORKLOAD=sysbench-* and t/038),
# and the test-only packages whose tests skip without them (the Prometheus
# exporter and client of t/040 and t/041).  When some are missing:
#   - as root: "apt-get install -y --no-install-recommends <missing>"
#     (non-interactive), both lists in one command; only if that fails is
#     "apt-get update" run, and the install tried once more.  Recommended
#     packages are left out: python3-scipy alone would pull in ImageMagick,
#     Ghostscript and the Boost headers, none of which a test uses;
#   - otherwise: prints the apt-get command to run as root, and fails if a
#     package of the first list is missing; test-only packages alone do not
#     fail (the message names the tests that skip).
#
# Installing prometheus-postgres-exporter creates the system user
# "prometheus" and, on a machine run by systemd (and no policy-rc.d that
# forbids it), starts the Debian service on port 9187.  The tests never use
# that service: they start an exporter of their own.
#
# Arguments: none.
# Environment:
#   DEPS_EXTRA   optional, more package names to require (space separated)
# Output: "deps: ok" on stdout when everything is present (or was installed);
#   apt-get's output and messages go to stderr.
# Exit status: 0 all packages present (or only test-only ones missing and
#   not root); 1 packages of the first list missing and not root, or
#   installing failed.
#
set -euo pipefail

me=deps

packages="gcc make bison flex pkg-config patch libreadline-dev zlib1g-dev
libicu-dev perl libipc-run-perl bzip2 xz-utils gnuplot-nox valgrind gdb
python3 python3-numpy python3-scipy python3-psycopg2 python3-pytest
sysbench ${DEPS_EXTRA:-}"

# t/040_prometheus.pl and t/041_grafana.pl run Debian's exporter (0.11.1 on
# Debian 12) and read its /metrics with the parser of the Prometheus Python
# client; they skip without them.
test_packages="prometheus-postgres-exporter python3-prometheus-client"

install_cmd="apt-get install -y --no-install-recommends"

# Print the packages of "$@" that are not installed, one per line.
missing_packages() {
	local status pkg
	# One dpkg-query call for all packages (fast); unknown packages are
	# reported on stderr and simply do not appear in the output.
	status=$(dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null || true)
	for pkg in "$@"; do
		if ! printf '%s\n' "$status" | awk -v p="$pkg" '
			$1 == p && ($2 == "install" || $2 == "hold") &&
			$3 == "ok" && $4 == "installed" { found = 1 }
			END { exit !found }'; then
			echo "$pkg"
		fi
	done
}

# shellcheck disable=SC2086 # word splitting of the package list is wanted
missing_required=$(missing_packages $packages | tr '\n' ' ')
missing_required=${missing_required% }
# shellcheck disable=SC2086
missing_test=$(missing_packages $test_packages | tr '\n' ' ')
missing_test=${missing_test% }
missing="$missing_required${missing_required:+${missing_test:+ }}$missing_test"

if [ -z "$missing" ]; then
	echo "deps: ok"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	if [ -n "$missing_required" ]; then
		echo "$me: missing Debian packages: $missing" >&2
		echo "$me: run as root: $install_cmd $missing" >&2
		exit 1
	fi
	echo "$me: missing test-only Debian packages: $missing (t/040 and t/041 will skip)" >&2
	echo "$me: run as root: $install_cmd $missing" >&2
	echo "deps: ok"
	exit 0
fi

echo "$me: installing missing packages: $missing" >&2
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
if ! $install_cmd $missing >&2; then
	echo "$me: apt-get install failed; running apt-get update and retrying" >&2
	if ! apt-get update >&2; then
		echo "$me: step 'apt-get update' failed" >&2
		exit 1
	fi
	# shellcheck disable=SC2086
	if ! $install_cmd $missing >&2; then
		echo "$me: step 'apt-get install -y $missing' failed" >&2
		exit 1
	fi
fi

# shellcheck disable=SC2086
still=$(missing_packages $missing | tr '\n' ' ')
if [ -n "${still% }" ]; then
	echo "$me: still not installed after apt-get install: ${still% }" >&2
	exit 1
fi
echo "deps: ok"
