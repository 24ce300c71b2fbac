#!/usr/bin/env bash
#
# check-series.sh - check that every prefix of the core patch series applies
# with "git am" to the PostgreSQL source and builds
#
# Usage: scripts/check-series.sh
#
# Fetches the source as build-server.sh does (fetch-source.sh, cached), makes
# a git repository of it in a scratch directory under the cache, configures
# it once (--enable-depend, so that each step rebuilds what a changed header
# touches; -O0, since only "does it build" is asked, with -Werror for the
# warnings the patches could add), then for each patch of patches/pg<major> in
# order: git am, make.  A patch that does not apply, or a prefix that does not
# build, stops the check with the patch's name and the end of its log.  Then,
# on the whole series: the regression test of its test module
# (src/test/modules/test_lock_stats, "make check" in the source tree: a
# temporary installation, as the unprivileged user of as-user.sh when run
# as root), and lwlock.c compiled with -DLWLOCK_STATS as well, since the
# series keeps that option beside its counting points: it must give no
# warning that the unpatched lwlock.c does not give too (18.6's lacks the
# declaration of on_shmem_exit() under LWLOCK_STATS).  Last, each patch of
# bench/experiments applies (git apply --check) after the whole series.
#
# Environment: PG_MAJOR (default 18; the series patches/pg<major> on the
# source of that major), PG_CACHE_DIR as for build-server.sh; BUILD_JOBS
# (default: nproc).  Takes about 15 minutes on 2 CPUs for the seven patches
# of each series; not part of "make test" (run it with "make check-series").
#
# Exit status: 0 if every prefix builds and the series' test passes, 1
# otherwise.

set -euo pipefail

me=check-series
die() { echo "$me: $*" >&2; exit 1; }

scripts=$(cd "$(dirname "$0")" && pwd -P)
top=$(cd "$scripts/.." && pwd -P)
umask 022

if [ -n "${PG_CACHE_DIR:-}" ]; then
	cache=$PG_CACHE_DIR
elif [ "$(id -u)" -eq 0 ]; then
	cache=/var/cache/pg_lockstat
else
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/pg_lockstat
fi
mkdir -p "$cache" || die "cannot create the cache directory $cache"

major=${PG_MAJOR:-18}
export PG_MAJOR=$major
"$scripts/deps.sh" || die "missing build dependencies (see above)"
src=$("$scripts/fetch-source.sh" "$cache" | tail -n 1) ||
	die "fetch-source.sh failed (see above)"
[ -f "$src/configure" ] || die "$src is not a PostgreSQL source tree"

patches=("$top"/patches/pg"$major"/*.patch)
[ -f "${patches[0]}" ] || die "no patches in $top/patches/pg$major"

work=$(mktemp -d "$cache/check-series.XXXXXX")
trap 'rm -rf "$work"' EXIT
log=$work/log
jobs=${BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}

echo "$me: copying $src"
cp -a "$src" "$work/src"
cd "$work/src"
export GIT_AUTHOR_NAME=check-series GIT_AUTHOR_EMAIL=check-series@localhost
export GIT_COMMITTER_NAME=check-series GIT_COMMITTER_EMAIL=check-series@localhost
{
	git init -q . &&
		git add -A . &&
		git commit -q -m "PostgreSQL source as fetched"
} >"$log" 2>&1 || die "cannot make a git repository of the source: $(tail -n 5 "$log")"

echo "$me: configure (-O0, --enable-depend)"
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	./configure --enable-depend --enable-tap-tests CFLAGS="-O0" >"$log" 2>&1 ||
	die "configure failed: $(tail -n 20 "$log")"

# What the unpatched lwlock.c says when compiled with -DLWLOCK_STATS: the
# baseline for the same compile of the whole series (below).  The warnings
# are compared without file positions.
lwlock_stats_warnings() {
	touch src/backend/storage/lmgr/lwlock.c
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -s -C src/backend/storage/lmgr lwlock.o COPT=-DLWLOCK_STATS \
		>"$log" 2>&1 || return 1
	grep -E '(warning|error):' "$log" | sed -E 's/^[^ ]*:[0-9]+:[0-9]+: //' | sort -u
	rm -f src/backend/storage/lmgr/lwlock.o
}
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	make -s -C src/backend generated-headers >"$log" 2>&1 ||
	die "make generated-headers failed: $(tail -n 20 "$log")"
stock_warnings=$(lwlock_stats_warnings) ||
	die "the unpatched lwlock.c does not compile with -DLWLOCK_STATS: $(tail -n 20 "$log")"

for p in "${patches[@]}"; do
	name=$(basename "$p")
	if ! git am -q "$p" >"$log" 2>&1; then
		sed 's/^/    /' "$log" >&2
		die "$name does not apply with git am on top of the patches before it"
	fi
	start=$SECONDS
	if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -s -j"$jobs" COPT=-Werror >"$log" 2>&1; then
		tail -n 30 "$log" | sed 's/^/    /' >&2
		die "the series up to $name does not build (warnings are errors)"
	fi
	echo "$me: up to $name: applies and builds ($((SECONDS - start)) s)"
done
echo "$me: all ${#patches[@]} prefixes of patches/pg$major apply and build"

# The series' own test, where it has one.
module=src/test/modules/test_lock_stats
if [ -d "$module" ]; then
	as_user=()
	[ "$(id -u)" -eq 0 ] &&
		as_user=(env AS_USER_WRITABLE="$work/src" "$scripts/as-user.sh")
	start=$SECONDS
	if ! "${as_user[@]}" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		make -C "$module" check >"$log" 2>&1; then
		tail -n 30 "$log" | sed 's/^/    /' >&2
		[ -f "$module/regression.diffs" ] &&
			head -n 60 "$module/regression.diffs" | sed 's/^/    /' >&2
		die "the regression test of $module fails"
	fi
	echo "$me: $module: make check passes ($((SECONDS - start)) s)"
fi

# LWLOCK_STATS beside the counting points: lwlock.c compiles with both,
# with no warning that the unpatched lwlock.c does not give too.
series_warnings=$(lwlock_stats_warnings) || {
	tail -n 30 "$log" | sed 's/^/    /' >&2
	die "lwlock.c of the whole series does not compile with -DLWLOCK_STATS"
}
new_warnings=$(comm -13 <(printf '%s\n' "$stock_warnings") <(printf '%s\n' "$series_warnings") | sed '/^$/d')
if [ -n "$new_warnings" ]; then
	printf '%s\n' "$new_warnings" | sed 's/^/    /' >&2
	die "lwlock.c of the whole series gives new warnings with -DLWLOCK_STATS"
fi
[ -n "$stock_warnings" ] &&
	printf '%s\n' "$stock_warnings" | sed "s/^/$me: (also unpatched) /"
echo "$me: lwlock.c of the whole series compiles with -DLWLOCK_STATS, with no new warning"

# The experiments of bench/experiments, patches that a study applies after
# the series: each applies to the whole series of this major (checked, not
# built).
for p in "$top"/bench/experiments/*.patch; do
	[ -e "$p" ] || continue
	if ! git apply --check "$p" >"$log" 2>&1; then
		sed 's/^/    /' "$log" >&2
		die "bench/experiments/$(basename "$p") does not apply after the series of patches/pg$major"
	fi
	echo "$me: bench/experiments/$(basename "$p") applies after the series"
done
