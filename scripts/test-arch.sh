#!/bin/bash
#
# test-arch.sh - cross-build pg_lockstat for another architecture and run
# its tests against that build under qemu-user.
#
# Usage: test-arch.sh <arch>        (ppc64le or aarch64)
#
# Called by "make test-arch" after the native server of the same major and
# pg_lockstat are built.  Steps:
#   1. scripts/build-server.sh with PG_ARCH=<arch>: the patched server,
#      cross-built once and cached (key "<version>-<hash>-<arch>"), copied
#      to <native>-<arch> (build/pg18-ppc64le) with a bin/ that runs it
#      under emulation (scripts/arch-wrap.sh);
#   2. a copy of the extension's sources in <native>-<arch>-ext, built
#      there with PGXS against the guest's pg_config and installed into the
#      guest: pg_lockstat, pg_lockstat_top and the test module lockstat_test
#      (the checkout's own objects are native ones and stay as they are);
#   3. scripts/run-tests.sh on the guest installation: the pg_regress tests
#      $ARCH_REGRESS and the TAP tests $ARCH_TESTS (not pytest, which tests
#      no server and runs natively whatever the architecture), output in
#      build/test-<arch>; on aarch64, t/060 once more on an emulated CPU
#      without LSE atomics (build/test-aarch64-cortex-a57).
#
# Environment: PG_CONFIG (required), the native patched server's pg_config;
#   ARCH_REGRESS, ARCH_TESTS (from the Makefile); ARCH_SKIP_MISSING=1
#   (from "make test"): not as root, missing packages skip the architecture
#   instead of failing; PG_MAJOR, PG_CACHE_DIR and BUILD_JOBS as for
#   build-server.sh.
# Exit status: 0 if every test passed (or skipped, see ARCH_SKIP_MISSING);
#   1 otherwise; 2 usage error.
#
set -euo pipefail

me=test-arch
die() { echo "$me: $*" >&2; exit 1; }
[ $# -eq 1 ] || { echo "usage: $0 ppc64le|aarch64" >&2; exit 2; }
arch=$1
: "${PG_CONFIG:?PG_CONFIG must point to the pg_config of the native patched server}"
top=$(cd "$(dirname "$0")/.." && pwd -P)
cd "$top"
scripts/arch-wrap.sh --triple "$arch" >/dev/null || exit 2
umask 022

native=$(cd "$("$PG_CONFIG" --bindir)/.." && pwd -P)
guest=$native-$arch
ext=$native-$arch-ext
start=$SECONDS

# The cross compiler, qemu-user and patchelf: installed as root, else the
# apt-get command is printed.  Called by "make test" (ARCH_SKIP_MISSING=1),
# a user who is not root and lacks them gets that command and a skip, not
# a failure; "make test-arch" fails.
if ! DEPS_EXTRA=$(scripts/arch-wrap.sh --packages "$arch") scripts/deps.sh; then
	if [ "${ARCH_SKIP_MISSING:-}" = 1 ] && [ "$(id -u)" -ne 0 ]; then
		echo "$me: SKIPPED $arch: the packages above are missing (install them as root to test $arch; \"make test TEST_ARCHES=\" leaves the architectures out)" >&2
		exit 0
	fi
	die "the packages above are needed for $arch (\"make test TEST_ARCHES=\" leaves the architectures out of make test)"
fi

echo "$me: $arch: server"
PG_ARCH=$arch NATIVE_PG_DIR=$native scripts/build-server.sh "$guest"

echo "$me: $arch: pg_lockstat, pg_lockstat_top and lockstat_test, built in $ext"
rm -rf "$ext"
mkdir -p "$ext"
# The checkout's files (tracked or new, not ignored, and present: a
# tracked file deleted in the work tree is left out), without build output;
# with the generator of the files made from the counter table and the query
# file's template, which "make all" makes.
if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$top" ls-files -z -co --exclude-standard -- Makefile '*.control' \
		extension test tools scripts/counters.pl integrations/prometheus |
		while IFS= read -r -d '' f; do
			if [ -e "$f" ]; then printf '%s\0' "$f"; fi
		done | xargs -0 cp --parents -t "$ext" ||
		die "copying the sources to $ext failed"
else
	cp -r --parents -t "$ext" Makefile ./*.control extension test tools \
		scripts/counters.pl integrations/prometheus ||
		die "copying the sources to $ext failed"
	find "$ext" \( -name '*.o' -o -name '*.so' -o -name '*.bc' \) -delete
fi
make -C "$ext" PG_CONFIG="$guest/bin/pg_config" all install test-module \
	>"$ext.log" 2>&1 || {
	tail -n 40 "$ext.log" >&2
	die "building pg_lockstat for $arch failed (log: $ext.log)"
}
# pg_lockstat_top is a guest program now: run it under emulation too
scripts/arch-wrap.sh "$arch" "$guest" "$native"
echo "$me: $arch: built in $((SECONDS - start))s"

status=0
PG_CONFIG=$guest/bin/pg_config REGRESS="${ARCH_REGRESS:-none}" PYTEST=0 \
	PROVE_TESTS="${ARCH_TESTS:-t/060_contention_counts.pl}" \
	TEST_OUTDIR="$top/build/test-$arch" scripts/run-tests.sh || status=1

# aarch64's TAS() calls libgcc's __aarch64_swp4_sync, which chooses at run
# time, from HWCAP_ATOMICS, between an LSE swp and an ldxr/stxr loop.
# qemu's default CPU has LSE atomics; a Cortex-A57 (ARMv8.0) has not: the
# counts under contention are checked once more on it, for the other path.
if [ "$arch" = aarch64 ]; then
	echo "$me: $arch: t/060 once more with QEMU_CPU=cortex-a57 (no LSE atomics)"
	QEMU_CPU=cortex-a57 PG_CONFIG=$guest/bin/pg_config REGRESS=none \
		PROVE_TESTS=t/060_contention_counts.pl \
		TEST_OUTDIR="$top/build/test-$arch-cortex-a57" scripts/run-tests.sh || status=1
fi
echo "$me: $arch: $( [ $status = 0 ] && echo passed || echo FAILED) in $((SECONDS - start))s"
exit $status
