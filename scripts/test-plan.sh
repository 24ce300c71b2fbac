#!/bin/bash
#
# test-plan.sh - print what "make test" will do, before it does it
#
# Called by "make test-plan", the first step of "make test" (no PG_CONFIG
# given).  Prints the servers the run uses, each cached or to build (from
# "scripts/build-server.sh --plan", which computes the build key without
# building anything), the suites that run, and the time such runs took on
# a 2-CPU machine (the figures of doc/tests.md, "Time").  Builds, fetches
# and installs nothing.
#
# Environment (from the Makefile): PG_MAJOR, BUILD_DIR (build/pg<major>),
#   REGRESS, PYTEST, PROVE_TESTS, TEST_ARCHES, ARCH_REGRESS, ARCH_TESTS,
#   ARCH_PARALLEL, UPGRADE_FROM_PG_CONFIG; CASSERT, EXTRA_CFLAGS,
#   PG_SOURCE and PG_CACHE_DIR as for build-server.sh.
# Exit status: 0; 1 if a server's plan could not be made (the message
#   says why).
#
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$top"
major=${PG_MAJOR:-18}
build_dir=${BUILD_DIR:-$top/build/pg$major}
read -ra arches <<<"${TEST_ARCHES:-}"
status=0

# The times measured on an idle 2-CPU machine, as doc/tests.md's "Time"
# states them (change both together): a native server build, a cross build
# (the two at the same time), the stages of .ci/run from an empty cache
# (the first of the two cold runs, at 68e3780; the second, at 54ff42e,
# took 3019 s) and with every server cached (at 3e3a592).
NATIVE_BUILD="2.3 to 2.9 minutes"
NATIVE_BUILD_MIN=2.9
CROSS_BUILD="about 6 minutes"
CROSS_BUILD_MIN=6
COLD_15=14 COLD_18=18 COLD_ARCH=17
WARM_15=6 WARM_18=8 WARM_ARCH=10
CI_COLD="49 minutes (2918 s)"
CI_WARM="25 minutes (1495 s)"

# "1 file", "2 files": the words of $1 counted, $2 named
count() {
	local w
	read -ra w <<<"$1"
	if [ ${#w[@]} = 1 ]; then echo "1 $2"; else echo "${#w[@]} ${2}s"; fi
}

native_to_build=0 cross_to_build=0
# One server's plan line, indented; counts those still to build.
server_plan() {
	local kind=$1 line
	shift
	if ! line=$("$@" 2>&1); then
		printf '%s\n' "$line" | sed 's/^/  /'
		status=1
		return
	fi
	printf '  %s\n' "${line#build-server: plan: }"
	case "$line" in
	*": cached ("*) ;;
	*)
		if [ "$kind" = native ]; then
			native_to_build=$((native_to_build + 1))
		else
			cross_to_build=$((cross_to_build + 1))
		fi
		;;
	esac
}

variant=""
[ -z "${CASSERT:-}" ] || variant=" with --enable-cassert"
[ -z "${EXTRA_CFLAGS:-}" ] || variant="$variant with EXTRA_CFLAGS=$EXTRA_CFLAGS"
echo "pg_lockstat make test: PostgreSQL $major$variant${arches[*]:+, then test-arch for ${arches[*]}}"
echo "servers (cache: scripts/build-server.sh; nothing is built before this plan is printed):"
server_plan native scripts/build-server.sh --plan "$build_dir"
server_plan native env STOCK=1 scripts/build-server.sh --plan "$build_dir-stock"
for arch in "${arches[@]+"${arches[@]}"}"; do
	server_plan cross env PG_ARCH="$arch" NATIVE_PG_DIR="$build_dir" \
		scripts/build-server.sh --plan "$build_dir-$arch"
done

regress=${REGRESS:-}
tap=${PROVE_TESTS:-$(echo t/*.pl)}
echo "suites:"
if [ "$regress" = none ]; then
	echo "  pg_regress and pytest: left out (REGRESS=none)"
else
	echo "  pg_regress: $(count "$regress" test) on a temporary instance"
	if [ "${PYTEST:-1}" = 0 ]; then
		echo "  pytest bench/tests: left out (PYTEST=0)"
	else
		echo "  pytest bench/tests: the study harness, no server"
	fi
fi
upgrade="t/032 skips: no UPGRADE_FROM_PG_CONFIG to upgrade from"
[ -z "${UPGRADE_FROM_PG_CONFIG:-}" ] ||
	upgrade="t/032 upgrades from $UPGRADE_FROM_PG_CONFIG"
echo "  TAP: $(count "$tap" file)${PROVE_TESTS:+ (PROVE_TESTS)}; $upgrade"
if [ ${#arches[@]} -gt 0 ]; then
	arch_regress=${ARCH_REGRESS:-none}
	[ "$arch_regress" != none ] || arch_regress=""
	cortex=""
	case " ${arches[*]} " in
	*" aarch64 "*) cortex=", and t/060 once more on a Cortex-A57" ;;
	esac
	how=""
	if [ ${#arches[@]} -gt 1 ]; then
		how=" one after the other"
		[ "${ARCH_PARALLEL:-1}" != 1 ] || how=" at the same time"
	fi
	echo "  test-arch, ${arches[*]}$how under qemu-user: $(count "$arch_regress" "pg_regress test") and $(count "${ARCH_TESTS:-}" "TAP file") each$cortex"
	if [ "$(id -u)" -ne 0 ]; then
		echo "    (not as root, an architecture whose cross packages are missing is skipped)"
	fi
fi

echo "time, as measured on a 2-CPU machine (doc/tests.md, \"Time\"):"
if [ $native_to_build -gt 0 ] || [ $cross_to_build -gt 0 ]; then
	minutes=$(awk -v n=$native_to_build -v c=$cross_to_build \
		-v nm=$NATIVE_BUILD_MIN -v cm=$CROSS_BUILD_MIN \
		'BEGIN { printf "%.0f", n * nm + c * cm }')
	what=""
	[ $native_to_build = 0 ] ||
		what="$native_to_build native ($NATIVE_BUILD each)"
	[ $cross_to_build = 0 ] ||
		what="${what:+$what and }$cross_to_build cross ($CROSS_BUILD each)"
	echo "  builds here: $what, about $minutes minutes"
else
	echo "  builds here: none, every server is cached"
fi
# A first run of the whole suite on the default build, as a stage (or
# two) of .ci/run did it.
first="" cached=""
if [ -z "${CASSERT:-}${EXTRA_CFLAGS:-}${PROVE_TESTS:-}" ] && [ "$regress" != none ]; then
	case "$major:${#arches[@]}" in
	15:0) first=$COLD_15 cached=$WARM_15 ;;
	18:0) first=$COLD_18 cached=$WARM_18 ;;
	18:2) first=$((COLD_18 + COLD_ARCH)) cached=$((WARM_18 + WARM_ARCH)) ;;
	esac
fi
if [ -n "$first" ]; then
	echo "  a make test like this one took about $first minutes with every server to build, about $cached with every server cached"
fi
echo "  .ci/run (make test for 15 and for 18, then test-arch): $CI_COLD from an empty cache, $CI_WARM with every server cached"
exit $status
