#!/bin/bash
#
# build-server.sh - build PostgreSQL (one major, with the pg_lockstat core
# patches for it) once into a cache outside the checkout, and copy the
# installation to <dest_dir>.
#
# Usage: build-server.sh [--plan] <dest_dir>
#
# With --plan nothing is installed, fetched, built or copied: the key is
# computed as below from the source already in the cache, and one line
# says whether <cache>/builds/<key>/complete exists and <dest_dir> holds
# that build; or that the source must be fetched first, which the key
# depends on.  For "make test-plan", the plan that "make test" prints.
#
# Steps: scripts/deps.sh; scripts/fetch-source.sh (pristine <major>.x source);
# compute the build key; unless <cache>/builds/<key> is complete: copy the
# source, apply the patches (patch -p1 --batch --forward), configure
# (--enable-tap-tests --enable-debug [--enable-cassert]; ICU, readline and
# zlib are on by default), make, make install, plus the TAP perl modules
# (src/test/perl), pg_regress (src/test/regress), contrib/pg_stat_statements
# and, where the series has it, src/test/modules/test_lock_stats; then copy
# the installation to <dest_dir> unless <dest_dir> already holds that key.
# Running it again with the same inputs does nothing but checks (well under
# 2 s).
#
# The installation is relocatable: pg_config and the server find their
# directories relative to bin/, and the binaries and libraries find libpq
# etc. through a relative run path ($ORIGIN), so <dest_dir> does not depend
# on the cache.
#
# Build key: <pgversion>-<first 12 hex digits of a SHA-256>[-cassert], the
# SHA-256 being taken over: the source identity (SHA-256 of the source
# tarball, or for a PG_SOURCE directory a listing of its files' names,
# sizes and mtimes), the configure flags, EXTRA_CFLAGS, the make variables,
# and the SHA-256 of each patch in order.  The inputs are written to
# <cache>/builds/<key>/key.txt.
#
# Environment:
#   PG_MAJOR      PostgreSQL major: 15 or 18 (default 18); selects the
#                 source (fetch-source.sh) and the series patches/pg<major>
#   PG_SOURCE     optional source directory or tarball of that major (see
#                 fetch-source.sh); default: Debian's postgresql-<major>
#   CASSERT       1 adds --enable-cassert (key gets "-cassert")
#   PATCHES       space-separated patch files (relative to the current
#                 directory or to the checkout); unset or empty: all
#                 patches/pg<major>/*.patch in sort order
#   STOCK         1 builds an unpatched server (PATCHES must be empty)
#   EXTRA_CONFIGURE  extra configure flags, e.g. --disable-spinlocks (part
#                 of the key)
#   EXTRA_CFLAGS  extra compiler flags, e.g. -DLWLOCK_STATS; configure then
#                 gets CFLAGS="-O2 $EXTRA_CFLAGS" (plus -g from
#                 --enable-debug), so PGXS builds of extensions use them too
#   PG_CACHE_DIR  cache directory (default: /var/cache/pg_lockstat as root,
#                 else ${XDG_CACHE_HOME:-$HOME/.cache}/pg_lockstat); must
#                 not be inside the checkout
#   BUILD_JOBS    parallel make jobs (default: nproc)
#   PG_ARCH       ppc64le or aarch64: cross-build the server for that
#                 architecture (key gets "-<arch>"; see "Architectures"
#                 below); unset or empty: the machine's own
#   NATIVE_PG_DIR with PG_ARCH: the native installation of the same major
#                 (build/pg<major>) whose front-end programs <dest_dir>/bin
#                 gets (scripts/arch-wrap.sh)
#   CFLAGS, CPPFLAGS, LDFLAGS, CC, MAKEFLAGS... of the caller are NOT passed
#   to configure/make, so that the key describes the build.
#
# Output: progress on stdout, ending with the key and <dest_dir>; errors on
#   stderr.  Cache layout:
#     <cache>/src/, downloads/, apt/   (fetch-source.sh)
#     <cache>/builds/<key>/src/        patched, built source tree
#     <cache>/builds/<key>/install/    the installation (--prefix)
#     <cache>/builds/<key>/build.log   log of all build steps
#     <cache>/builds/<key>/key.txt     what the key was computed from
#     <cache>/builds/<key>/complete    stamp, written last
#     <cache>/builds/<key>.lock        flock for concurrent builds
#   <dest_dir>/.pg_lockstat_build_key holds the key of the copied build,
#   <dest_dir>/.pg_lockstat_build_src the path of its built source tree
#   (for PostgreSQL's own regression and isolation suites).
# Exit status: 0 success (with --plan, whatever it found); 1 failure
#   (message names the failing step); 2 usage error.
#
# Architectures: with PG_ARCH, configure runs with --host=<triple> and the
# Debian cross compiler <triple>-gcc (packages installed by deps.sh as
# root), without readline, ICU and zlib (no cross libraries of them) and
# with the system's time zone data (zic would have to run on the build
# machine).  A cross configure cannot run its test programs and leaves out
# -Wl,--export-dynamic, so make gets LDFLAGS_EX_BE=-Wl,--export-dynamic:
# without it the server exports no symbols and no extension loads
# ("undefined symbol: CurrentMemoryContext").  <dest_dir> then holds the
# guest installation with a bin/ that runs under qemu-user: see
# scripts/arch-wrap.sh.
#
set -euo pipefail

me=build-server
die() { echo "$me: $*" >&2; exit 1; }

plan=0
if [ "${1:-}" = --plan ]; then
	plan=1
	shift
fi
if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: $0 [--plan] <dest_dir>" >&2
	exit 2
fi
dest_arg=$1
scripts=$(cd "$(dirname "$0")" && pwd -P)
top=$(cd "$scripts/.." && pwd -P)
is_root=0
[ "$(id -u)" -eq 0 ] && is_root=1
# Everything we create must be readable by the unprivileged test user.
umask 022

truthy() {
	case "${1:-}" in
	1|yes|true|on) return 0 ;;
	*) return 1 ;;
	esac
}

# --- cache directory ----------------------------------------------------
if [ -n "${PG_CACHE_DIR:-}" ]; then
	cache=$PG_CACHE_DIR
elif [ $is_root = 1 ]; then
	cache=/var/cache/pg_lockstat
elif [ -n "${XDG_CACHE_HOME:-}" ]; then
	cache=$XDG_CACHE_HOME/pg_lockstat
elif [ -n "${HOME:-}" ]; then
	cache=$HOME/.cache/pg_lockstat
else
	die "step 'cache dir': neither HOME nor XDG_CACHE_HOME is set; set PG_CACHE_DIR"
fi
# Check before creating anything (realpath -m: the path need not exist).
cache=$(realpath -m "$cache")
case "$cache/" in
"$top/"*) die "step 'cache dir': the cache $cache is inside the checkout $top; set PG_CACHE_DIR to a directory outside it" ;;
esac
if [ $plan = 0 ]; then
	mkdir -p "$cache/builds" "$cache/locks" ||
		die "step 'cache dir': cannot create $cache (set PG_CACHE_DIR to a writable directory)"
	if [ $is_root = 1 ]; then
		chmod a+rX "$cache" "$cache/builds" "$cache/locks"
	fi
fi

# --- destination ----------------------------------------------------------
if [ $plan = 1 ]; then
	dest=$(realpath -m "$dest_arg")
else
	mkdir -p "$(dirname "$dest_arg")" ||
		die "step 'destination': cannot create the parent of $dest_arg"
	dest=$(cd "$(dirname "$dest_arg")" && pwd -P)/$(basename "$dest_arg")
fi
case "$dest" in
/|"$top"|"$cache"|"$cache"/*|"${HOME:-/}")
	die "step 'destination': refusing to use $dest as the destination" ;;
esac

# Never replace a directory that this script did not fill.
dest_is_ours() {
	[ ! -e "$dest" ] || [ -f "$dest/.pg_lockstat_build_key" ] ||
		[ -x "$dest/bin/pg_config" ] || [ -z "$(ls -A "$dest" 2>/dev/null)" ]
}
[ $plan = 1 ] || [ -w "$(dirname "$dest")" ] ||
	die "step 'destination': cannot write into $(dirname "$dest") (the parent of $dest)"
dest_is_ours ||
	die "step 'destination': $dest exists and is not a server installed by $me; remove it or choose another directory"

major=${PG_MAJOR:-18}
if [ ! -d "$top/patches/pg$major" ] && ! truthy "${STOCK:-}"; then
	have=$(cd "$top/patches" && ls -d pg[0-9]* 2>/dev/null | sed 's/^pg//' | sort -n | tr '\n' ' ')
	die "step 'patches': PostgreSQL $major has no patch series (no $top/patches/pg$major); PG_MAJOR can be: ${have% } (see doc/majors-and-architectures.md, \"PostgreSQL majors\")"
fi
export PG_MAJOR=$major

# --- architecture -----------------------------------------------------------
arch=${PG_ARCH:-}
case "$arch" in
"") ;;
ppc64le | aarch64)
	triple=$("$scripts/arch-wrap.sh" --triple "$arch")
	export DEPS_EXTRA="${DEPS_EXTRA:-} $("$scripts/arch-wrap.sh" --packages "$arch")"
	# (A plan may come before the native build: it needs neither.)
	if [ $plan = 0 ]; then
		[ -n "${NATIVE_PG_DIR:-}" ] && [ -x "$NATIVE_PG_DIR/bin/psql" ] ||
			die "step 'architecture': PG_ARCH=$arch needs NATIVE_PG_DIR, the native installation of PostgreSQL $major (its front-end programs run the guest server)"
		[ "$(cd "$NATIVE_PG_DIR" && pwd -P)" != "$dest" ] ||
			die "step 'architecture': the destination $dest is NATIVE_PG_DIR itself; the guest installation needs a directory of its own"
	fi
	;;
*) die "step 'architecture': PG_ARCH is '$arch'; it can be ppc64le or aarch64 (or empty for this machine's own)" ;;
esac

# --- dependencies and source --------------------------------------------
if [ $plan = 1 ]; then
	# Only the source already there: the key depends on it.
	status=0
	src=$("$scripts/fetch-source.sh" --cached "$cache" 2>/dev/null) || status=$?
	if [ $status = 3 ]; then
		what="the patched server"
		if truthy "${STOCK:-}"; then what="the unpatched server"; fi
		[ -z "$arch" ] || what="the patched $arch server (a cross build)"
		echo "$me: plan: $dest: the PostgreSQL $major source is not in $cache/src yet: to fetch, then $what to build (its key depends on the source)"
		exit 0
	fi
	[ $status = 0 ] ||
		die "step 'fetch source': fetch-source.sh --cached failed; run it for its message"
else
	"$scripts/deps.sh" || die "step 'deps': missing build dependencies (see above)"

	if ! src=$("$scripts/fetch-source.sh" "$cache"); then
		die "step 'fetch source': fetch-source.sh failed (see above)"
	fi
fi
src=$(printf '%s\n' "$src" | tail -n 1)
[ -f "$src/configure" ] || die "step 'fetch source': $src is not a PostgreSQL source tree"
pgversion=$(sed -n "s/^PACKAGE_VERSION='\\(.*\\)'\$/\\1/p" "$src/configure" | head -n 1)
[ -n "$pgversion" ] || die "step 'fetch source': cannot read PACKAGE_VERSION from $src/configure"

# --- patches --------------------------------------------------------------
patches=()
if truthy "${STOCK:-}"; then
	[ -z "${PATCHES:-}" ] ||
		die "step 'patches': STOCK=1 builds an unpatched server, but PATCHES is set to '$PATCHES'"
elif [ -n "${PATCHES:-}" ]; then
	for p in $PATCHES; do
		if [ -f "$p" ]; then
			patches+=("$(cd "$(dirname "$p")" && pwd -P)/$(basename "$p")")
		elif [ -f "$top/$p" ]; then
			patches+=("$top/$p")
		else
			die "step 'patches': patch file $p not found (PATCHES='$PATCHES')"
		fi
	done
else
	for p in "$top"/patches/pg"$major"/*.patch; do
		[ -f "$p" ] && patches+=("$p")
	done
	[ ${#patches[@]} -gt 0 ] ||
		die "step 'patches': no patches in $top/patches/pg$major/; set STOCK=1 for an unpatched server"
fi

# --- build key --------------------------------------------------------------
if [ -f "$src.stamp" ] && sed -n 's/^sha256=//p' "$src.stamp" | grep -q .; then
	source_id="tarball-sha256 $(sed -n 's/^sha256=//p' "$src.stamp" | head -n 1)"
else
	# A source directory given by PG_SOURCE: identify it by its file list
	# (names, sizes, mtimes); hashing all contents would be slow.
	source_id="tree $(find "$src" -path "$src/.git" -prune -o -type f -printf '%P %s %T@\n' |
		LC_ALL=C sort | sha256sum | cut -d' ' -f1)"
fi

configure_flags=(--enable-tap-tests --enable-debug)
cassert_suffix=""
if truthy "${CASSERT:-}"; then
	configure_flags+=(--enable-cassert)
	cassert_suffix=-cassert
fi
if [ -n "${EXTRA_CONFIGURE:-}" ]; then
	read -r -a extra_configure <<<"$EXTRA_CONFIGURE"
	configure_flags+=("${extra_configure[@]}")
fi
configure_env=()
if [ -n "${EXTRA_CFLAGS:-}" ]; then
	configure_env+=("CFLAGS=-O2 $EXTRA_CFLAGS")
fi
arch_suffix=""
if [ -n "$arch" ]; then
	configure_flags+=(--host="$triple" --build="$(gcc -dumpmachine)"
		--without-readline --without-icu --without-zlib
		--with-system-tzdata=/usr/share/zoneinfo)
	configure_env+=("CC=$triple-gcc")
	arch_suffix=-$arch
fi
# Relative run paths: bin/ -> ../lib, lib/ -> ., lib/postgresql/ -> ..
# ($$ is make's escape for $; the quotes in Makefile.linux's rpath rule
# keep $ORIGIN from the shell).
# shellcheck disable=SC2016
make_vars=('rpathdir=$$ORIGIN/../lib:$$ORIGIN:$$ORIGIN/..')
[ -z "$arch" ] || make_vars+=(LDFLAGS_EX_BE=-Wl,--export-dynamic)
jobs=${BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}

key_text=$(
	echo "recipe 1"
	[ -z "$arch" ] || echo "arch $arch"
	echo "postgresql $pgversion"
	echo "source $source_id"
	echo "configure ${configure_flags[*]}"
	echo "configure-env ${configure_env[*]+"${configure_env[*]}"}"
	echo "extra-cflags ${EXTRA_CFLAGS:-}"
	echo "make ${make_vars[*]}"
	for p in "${patches[@]+"${patches[@]}"}"; do
		echo "patch $(sha256sum "$p" | cut -d' ' -f1) $(basename "$p")"
	done
)
# Patch names are informative only: the key depends on patch contents.
key_hash=$(printf '%s\n' "$key_text" | sed 's/^\(patch [0-9a-f]*\) .*/\1/' |
	sha256sum | cut -c1-12)
key=$pgversion-$key_hash$cassert_suffix$arch_suffix
bdir=$cache/builds/$key
log=$bdir/build.log

if [ $plan = 1 ]; then
	if [ -f "$bdir/complete" ] && [ -x "$bdir/install/bin/pg_config" ]; then
		state="cached ($bdir/complete"
		secs=$(sed -n 's/^seconds=//p' "$bdir/complete")
		[ -z "$secs" ] || state="$state: built in ${secs}s"
		state="$state)"
		if [ "$(cat "$dest/.pg_lockstat_build_key" 2>/dev/null)" = "$key" ]; then
			state="$state, in $dest already"
		else
			state="$state, to copy to $dest"
		fi
	elif [ -e "$cache/builds/$key.lock" ] && ! flock -n "$cache/builds/$key.lock" true; then
		state="being built by another process now (its log: $log), to wait for"
	else
		state="to build (no $bdir/complete)"
	fi
	echo "$me: plan: $dest: PostgreSQL $pgversion, key $key: $state"
	exit 0
fi

# --- build (unless cached) -------------------------------------------------
exec 8>"$cache/builds/$key.lock"
if ! flock -n 8; then
	echo "$me: waiting for another build of $key to finish"
	flock 8 || die "step 'lock': cannot lock $cache/builds/$key.lock"
fi

run_step() {
	local name=$1 start=$SECONDS
	shift
	echo "$me: $name"
	printf '\n==== %s: %s\n' "$name" "$*" >>"$log"
	if ! "$@" >>"$log" 2>&1; then
		echo "$me: step '$name' failed; last 40 lines of $log:" >&2
		tail -n 40 "$log" | sed 's/^/    /' >&2
		die "step '$name' failed (full log: $log)"
	fi
	printf '==== %s: done in %ss\n' "$name" $((SECONDS - start)) >>"$log"
}

# Run in the build tree with a controlled environment: nothing of the
# caller's compiler settings or make state (MAKEFLAGS from an outer make,
# jobserver) leaks into the build.
in_src() {
	(cd "$bdir/src" &&
		exec env -u CFLAGS -u CPPFLAGS -u CXXFLAGS -u LDFLAGS -u LDFLAGS_EX \
			-u LDFLAGS_SL -u LIBS -u CC -u CPP -u CXX -u COPT -u PROFILE \
			-u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u GNUMAKEFLAGS \
			"$@")
}

if [ -f "$bdir/complete" ] && [ -x "$bdir/install/bin/pg_config" ]; then
	echo "$me: using cached build $key"
else
	start=$SECONDS
	echo "$me: building PostgreSQL $pgversion as $key in $bdir (log: $log)"
	rm -rf "$bdir"
	mkdir -p "$bdir"
	printf '%s\n' "$key_text" >"$bdir/key.txt"
	: >"$log"
	run_step "copy source" cp -a "$src" "$bdir/src"
	for p in "${patches[@]+"${patches[@]}"}"; do
		echo "$me: apply $(basename "$p")"
		printf '\n==== apply %s\n' "$p" >>"$log"
		if ! patch -d "$bdir/src" -p1 --batch --forward -i "$p" >>"$log" 2>&1; then
			tail -n 20 "$log" | sed 's/^/    /' >&2
			die "step 'apply patch': $p does not apply to PostgreSQL $pgversion ($src); log: $log"
		fi
	done
	run_step configure in_src ./configure --prefix="$bdir/install" \
		"${configure_flags[@]}" "${configure_env[@]+"${configure_env[@]}"}"
	run_step "make -j$jobs" in_src make -j"$jobs" "${make_vars[@]}"
	run_step "make install" in_src make "${make_vars[@]}" install
	# The top-level install already covers these two in PostgreSQL 18
	# (with --enable-tap-tests); kept explicit since PGXS installcheck with
	# TAP_TESTS needs them.
	run_step "install TAP modules" in_src make -C src/test/perl "${make_vars[@]}" install
	run_step "install pg_regress" in_src make -C src/test/regress "${make_vars[@]}" install
	run_step "install pg_stat_statements" \
		in_src make -C contrib/pg_stat_statements -j"$jobs" "${make_vars[@]}" install
	# The series' own test module (patch 0007), for t/034; a stock server
	# or a series without it has none.
	if [ -d "$bdir/src/src/test/modules/test_lock_stats" ]; then
		run_step "install test_lock_stats" \
			in_src make -C src/test/modules/test_lock_stats "${make_vars[@]}" install
	fi

	if [ -n "$arch" ]; then
		pgxs=$bdir/install/lib/postgresql/pgxs	# pg_config is a guest program
	else
		pgxs=$("$bdir/install/bin/pg_config" --pkglibdir)/pgxs
	fi
	for f in "$pgxs/src/test/perl/PostgreSQL/Test/Cluster.pm" \
		"$pgxs/src/test/regress/pg_regress"; do
		[ -e "$f" ] || die "step 'check install': $f is missing after the build (log: $log)"
	done
	if [ $is_root = 1 ]; then
		chmod -R a+rX "$bdir"
	fi
	{
		echo "key=$key"
		echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "seconds=$((SECONDS - start))"
	} >"$bdir/complete.tmp"
	mv "$bdir/complete.tmp" "$bdir/complete"
	echo "$me: built $key in $((SECONDS - start))s"
fi

# --- copy to the destination -------------------------------------------------
exec 7>"$cache/locks/dest-$(printf '%s' "$dest" | sha256sum | cut -c1-16).lock"
flock 7 || die "step 'lock destination': cannot lock for $dest"

if [ -f "$dest/.pg_lockstat_build_key" ] && [ -x "$dest/bin/pg_config" ] &&
	[ "$(cat "$dest/.pg_lockstat_build_key")" = "$key" ]; then
	echo "$me: $dest is up to date"
else
	dest_is_ours ||
		die "step 'copy to destination': $dest exists and is not a server installed by $me; remove it or choose another directory"
	echo "$me: copying the installation to $dest"
	tmp=$(mktemp -d "$(dirname "$dest")/.$(basename "$dest").tmp.XXXXXX") ||
		die "step 'copy to destination': cannot create a directory next to $dest"
	# shellcheck disable=SC2064
	trap "rm -rf '$tmp'" EXIT
	chmod 755 "$tmp"
	cp -a "$bdir/install/." "$tmp/" ||
		die "step 'copy to destination': cp -a $bdir/install/. $tmp/ failed"
	printf '%s\n' "$key" >"$tmp/.pg_lockstat_build_key"
	rm -rf "$dest" || die "step 'copy to destination': cannot remove the old $dest"
	mv "$tmp" "$dest" || die "step 'copy to destination': cannot rename $tmp to $dest"
	trap - EXIT
fi

# A guest installation's bin/: the native front-end programs of
# NATIVE_PG_DIR, and the guest's server run under qemu-user (redone every
# time, since NATIVE_PG_DIR may have been rebuilt).
if [ -n "$arch" ]; then
	"$scripts/arch-wrap.sh" "$arch" "$dest" "$NATIVE_PG_DIR" ||
		die "step 'arch wrap': scripts/arch-wrap.sh $arch $dest $NATIVE_PG_DIR failed"
fi
pkglibdir=$("$dest/bin/pg_config" --pkglibdir) ||
	die "step 'check destination': $dest/bin/pg_config does not run"
case "$pkglibdir" in
"$dest"/*) ;;
*) die "step 'check destination': pg_config --pkglibdir is $pkglibdir, outside $dest (installation not relocatable?)" ;;
esac

if [ "$(cat "$dest/.pg_lockstat_build_src" 2>/dev/null)" != "$bdir/src" ]; then
	printf '%s\n' "$bdir/src" >"$dest/.pg_lockstat_build_src" ||
		die "step 'copy to destination': cannot write $dest/.pg_lockstat_build_src"
fi

echo "$me: key $key"
echo "$me: PostgreSQL $pgversion in $dest (PG_CONFIG=$dest/bin/pg_config)"
