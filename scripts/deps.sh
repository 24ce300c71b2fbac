#!/bin/bash
#
# deps.sh - check (and, as root, install) the Debian packages needed to
# build PostgreSQL (15 or 18) with pg_lockstat and to run its tests and studies.
#
# Each package is checked with dpkg-query; a package counts as present only
# when its status is "install ok installed" (or "hold ok installed").
# When some are missing:
#   - as root: "apt-get install -y <missing>" (non-interactive); only if that
#     fails is "apt-get update" run, and the install tried once more;
#   - otherwise: prints the apt-get command to run as root and fails.
#
# Arguments: none.
# Environment:
#   DEPS_EXTRA   optional, more package names to require (space separated)
# Output: "deps: ok" on stdout when everything is present (or was installed);
#   apt-get's output and messages go to stderr.
# Exit status: 0 all packages present; 1 packages missing and not root, or
#   installing them failed.
#
set -euo pipefail

me=deps

packages="gcc make bison flex pkg-config patch libreadline-dev zlib1g-dev
libicu-dev perl libipc-run-perl bzip2 xz-utils gnuplot-nox valgrind
python3 python3-numpy python3-scipy
${DEPS_EXTRA:-}"

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
missing=$(missing_packages $packages | tr '\n' ' ')
missing=${missing% }

if [ -z "$missing" ]; then
	echo "deps: ok"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "$me: missing Debian packages: $missing" >&2
	echo "$me: run as root: apt-get install -y $missing" >&2
	exit 1
fi

echo "$me: installing missing packages: $missing" >&2
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
if ! apt-get install -y $missing >&2; then
	echo "$me: apt-get install failed; running apt-get update and retrying" >&2
	if ! apt-get update >&2; then
		echo "$me: step 'apt-get update' failed" >&2
		exit 1
	fi
	# shellcheck disable=SC2086
	if ! apt-get install -y $missing >&2; then
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
