#!/bin/bash
#
# run-study.sh - the pgsql-hackers spinlock/LWLock study in one command
#
# A study compares variants of the server, the first the baseline: a
# variant is a name, patch files applied after the project's core series
# (none: the server of PG_CONFIG) and server settings; a spin strategy is
# the setting pg_lockstat.spin_strategy.  Each distinct list of patches is
# one build, made before the first run (see "the builds" below).  On a
# throwaway cluster of its own: initialise pgbench, then run REPEAT
# rounds.  A round runs every variant once, in an order that changes from
# round to round (bench/study_stats.py order: the rows of a Williams
# design, seeded; SEED replays it): start the variant's server with its
# settings, one warm-up pgbench run that is not recorded, then for each
# client count, in an order shuffled per round (bench/study_stats.py
# clients), reset the pg_lockstat counters, run pgbench and record the
# tps, the transactions and the pg_lwlock_stats and pg_spinlock_stats
# deltas.  Then bench/study_stats.py turns runs.csv into (a): per client
# count the baseline's median tps with its 95% interval and, for every
# other variant, the median over the rounds of its tps ratio to the
# baseline's in the same round, its interval (Bonferroni-corrected over
# the study) and a verdict (faster, slower, no difference, bimodal), and
# the noise, drift and position tables; and into (m), the mechanism: per
# variant and client count, per tranche the LWLock acquisitions, blocks
# and wait time, per spin-wait call site the contended waits and spins,
# all per 1000 transactions, as the median over the rounds of the paired
# ratio (or difference) to the baseline with its interval, sorted by the
# size of the change (mechanism.csv has every row).  The report goes on
# with (b), for the highest client count of each variant, the top 10
# LWLock tranches by blocks, with Blk, SpinDelay, Blk % and SpinDelay % as
# in the LWLOCK_STATS tables posted to the list, and the sampled holds
# (pg_lockstat.hold_sample_every): their number, mean and longest hold in
# microseconds, and (c) its top spin-wait call sites from
# pg_spinlock_stats.  Raw results are saved as CSV under
# build/run/<timestamp>/, with gnuplot plots.
#
# Called by "make run".  Environment (all optional except PG_CONFIG):
#   PG_CONFIG   pg_config of the patched server with pg_lockstat installed
#   SCALE       pgbench scale factor (10)
#   STRATEGIES  spin strategies to compare, the first the baseline
#               ("tas ttas_spin ttas" unless VARIANTS is given): the
#               shorthand of VARIANTS="tas: pg_lockstat.spin_strategy=tas;
#               ttas_spin: pg_lockstat.spin_strategy=ttas_spin; ..."
#   VARIANTS    variants to compare, the first the baseline, separated by
#               ";": "name[: item ...]", each item a patch file (relative
#               to the directory of the call or to the checkout) or a
#               setting name=value (no spaces or quotes), e.g.
#               "base; onefl: bench/experiments/dynahash-one-freelist.patch;
#               ttas: pg_lockstat.spin_strategy=ttas".  Names: lower-case
#               letters, digits, _ and -.  Not together with STRATEGIES.
#   VARIANT_DIR where the variants' builds are installed
#               (build/variants/<hash of the base build and the patches>)
#   CLIENTS     client counts ("1 8 64")
#   DURATION    seconds per pgbench run (5)
#   WARMUP      seconds of the warm-up run after each server start, at the
#               highest client count (3; 0: none)
#   WORKLOAD    select-only (-S -M prepared), tpcb-like, simple-update, or
#               a script of bench/workloads/ by name: eviction,
#               snapshot-heavy, sinval, wal-insert, procarray.  A script's
#               header may give "-- pgbench-options: ..." and
#               "-- server-settings: name = value" lines; the settings are
#               added to postgresql.conf.
#   THREADS     pgbench -j (the smaller of clients and nproc)
#   REPEAT      rounds (12: a multiple of the period of the balanced order,
#               2 x the number of strategies when it is odd, else that number)
#   SEED        seed of the strategy order (random, and printed)
#   THRESHOLD   percent: a ratio whose interval does not lie wholly beyond
#               1 +- THRESHOLD/100 is "no difference" (2)
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
self=$top/bench/$(basename "$0")
# patch files of VARIANTS are relative to the directory of the call
caller_pwd=$PWD
cd "$top"
# the builds of the first pass, for the unprivileged second one only
[ "${1:-}" = --as-user ] || unset RUN_STUDY_BUILDS

# Every failure prints "run-study: error: <what>" and exits 1; once the
# cluster exists, <what> is "<step> failed ...", and on_exit stops the server.
died=0
die() { echo "$me: error: $*" >&2; died=1; exit 1; }
warn() { echo "$me: warning: $*" >&2; }

[ -n "${PG_CONFIG:-}" ] || die "PG_CONFIG must point to the pg_config of the patched server"
SCALE=${SCALE:-10}
CLIENTS=${CLIENTS:-1 8 64}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-3}
WORKLOAD=${WORKLOAD:-select-only}
THREADS=${THREADS:-}
REPEAT=${REPEAT:-12}
SEED=${SEED:-$(( (RANDOM << 15 | RANDOM) % 1000000 ))}
THRESHOLD=${THRESHOLD:-2}
RUN_DIR=${RUN_DIR:-$top/build/run}
VARIANT_DIR=${VARIANT_DIR:-$top/build/variants}
stats=$top/bench/study_stats.py

# --- validate parameters before anything starts ---------------------------
is_posint() { [[ "$1" =~ ^[1-9][0-9]*$ ]]; }
is_posint "$SCALE" || die "SCALE must be a positive integer, not \"$SCALE\""
is_posint "$REPEAT" || die "REPEAT must be a positive integer, not \"$REPEAT\""
is_posint "$DURATION" || die "DURATION must be a positive integer (seconds), not \"$DURATION\""
[[ "$WARMUP" =~ ^(0|[1-9][0-9]*)$ ]] || die "WARMUP must be 0 or a positive integer (seconds), not \"$WARMUP\""
[[ "$SEED" =~ ^(0|[1-9][0-9]{0,17})$ ]] || die "SEED must be a non-negative integer, not \"$SEED\""
[[ "$THRESHOLD" =~ ^[0-9]{1,2}(\.[0-9]+)?$ ]] || \
	die "THRESHOLD must be a percentage from 0 to below 100, not \"$THRESHOLD\""
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
# --- the variants -------------------------------------------------------------
# A study compares variants, the first the baseline.  Each has a name, the
# patch files applied after the project's series (none: the server of
# PG_CONFIG) and server settings; vname[i], vpatches[i] (absolute paths,
# one a line), vsettings[i] ("name = 'value'" lines) and vstrategy[i] (its
# pg_lockstat.spin_strategy, if it sets one).  STRATEGIES="a b" is the
# shorthand of VARIANTS="a: pg_lockstat.spin_strategy=a; b: ...".
strategies_valid="default tas ttas_spin ttas ttas_backoff"
vname=() vpatches=() vsettings=() vstrategy=()
VARIANTS=${VARIANTS:-}
if [ -n "$VARIANTS" ]; then
	[ -z "${STRATEGIES:-}" ] || die "give STRATEGIES or VARIANTS, not both (a strategy is the setting pg_lockstat.spin_strategy=<strategy> of a variant)"
	noun=variant
	# a newline separates variants as ";" does
	IFS=';' read -r -a specs <<<"${VARIANTS//$'\n'/;}"
	for spec in "${specs[@]}"; do
		[[ "$spec" =~ ^[[:space:]]*$ ]] && continue
		name=${spec%%:*}
		items=""
		[[ "$spec" != *:* ]] || items=${spec#*:}
		name="${name#"${name%%[![:space:]]*}"}"
		name="${name%"${name##*[![:space:]]}"}"
		[[ "$name" =~ ^[a-z0-9][a-z0-9_-]{0,30}$ ]] || \
			die "VARIANTS: bad variant name \"$name\" in \"$spec\" (lower-case letters, digits, _ and -, at most 31; the form is \"name: patch-file ... setting=value ...; name: ...\")"
		for n in "${vname[@]+"${vname[@]}"}"; do
			[ "$n" != "$name" ] || die "VARIANTS: variant \"$name\" appears twice"
		done
		patches_of="" settings_of="" strategy_of="" names_of=" "
		set -f
		for item in $items; do
			if [[ "$item" =~ ^[A-Za-z_][A-Za-z0-9_.]*= ]]; then
				sname=${item%%=*}
				sval=${item#*=}
				[[ "$sname" =~ ^[a-z_][a-z0-9_.]*$ ]] || \
					die "VARIANTS: variant $name: bad setting name \"$sname\" in \"$item\" (name=value, the name in lower case)"
				[ -n "$sval" ] && [[ "$sval" != *[\'\\\"#]* ]] || \
					die "VARIANTS: variant $name: bad value in \"$item\" (not empty, no quotes, backslashes or #)"
				[[ "$names_of" != *" $sname "* ]] || die "VARIANTS: variant $name sets $sname twice"
				case $sname in
					port|listen_addresses|unix_socket_directories)
						die "VARIANTS: variant $name: $sname is set by the study itself (its clients connect through it)" ;;
				esac
				names_of="$names_of$sname "
				if [ "$sname" = pg_lockstat.spin_strategy ]; then
					[[ " $strategies_valid " == *" $sval "* ]] || \
						die "VARIANTS: variant $name: unknown strategy \"$sval\" (valid: $strategies_valid)"
					strategy_of=$sval
				fi
				settings_of="$settings_of$sname = '$sval'"$'\n'
			elif [ -n "${RUN_STUDY_BUILDS:-}" ]; then
				# the second pass, as the unprivileged user: the
				# patches were read and built by the first
				patches_of="$patches_of$item"$'\n'
			else
				where=""
				case $item in
					/*) f=$item ;;
					*) f=$caller_pwd/$item
					   where=" (relative to $caller_pwd"
					   [ "$caller_pwd" = "$top" ] || where="$where or to $top"
					   where="$where)"
					   [ -e "$f" ] || f=$top/$item ;;
				esac
				[ -e "$f" ] || \
					die "VARIANTS: variant $name: patch file \"$item\" not found$where; a setting is name=value, without spaces"
				[ -f "$f" ] || die "VARIANTS: variant $name: patch file \"$item\" is not a regular file"
				[ -r "$f" ] || die "VARIANTS: variant $name: patch file \"$item\" cannot be read by $(id -un)"
				f=$(cd "$(dirname "$f")" && pwd -P)/$(basename "$f")
				[[ "$f" != *[[:space:]]* ]] || \
					die "VARIANTS: variant $name: the path of patch file \"$f\" has a space; move or link it elsewhere"
				grep -q '^+++ ' "$f" || \
					die "VARIANTS: variant $name: patch file \"$item\" has no unified diff in it (no +++ line)"
				[[ $'\n'"$patches_of" != *$'\n'"$f"$'\n'* ]] || \
					die "VARIANTS: variant $name lists patch file \"$item\" twice"
				patches_of="$patches_of$f"$'\n'
			fi
		done
		set +f
		vname+=("$name")
		vpatches+=("$patches_of")
		vsettings+=("$settings_of")
		vstrategy+=("$strategy_of")
	done
	[ ${#vname[@]} -gt 0 ] || die "VARIANTS is empty"
else
	noun=strategy
	STRATEGIES=${STRATEGIES:-tas ttas_spin ttas}
	for s in $STRATEGIES; do
		[[ " $strategies_valid " == *" $s "* ]] || \
			die "unknown strategy \"$s\" in STRATEGIES (valid: $strategies_valid)"
		for n in "${vname[@]+"${vname[@]}"}"; do
			[ "$n" != "$s" ] || die "strategy \"$s\" appears twice in STRATEGIES"
		done
		vname+=("$s")
		vpatches+=("")
		vsettings+=("pg_lockstat.spin_strategy = '$s'"$'\n')
		vstrategy+=("$s")
	done
	[ ${#vname[@]} -gt 0 ] || die "STRATEGIES is empty"
fi
nvariants=${#vname[@]}
names="${vname[*]}"
# the first variant is the baseline of the ratios
read -r base others <<<"$names"
# built-in pgbench scripts, or bench/workloads/<name>.sql, whose header
# says what it stresses and may give a "-- pgbench-options:" line and
# "-- server-settings: name = value" lines
workload_settings=""
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
		workload_settings=$(sed -n 's/^-- server-settings: //p' "$script")
		while IFS= read -r setting; do
			[ -z "$setting" ] || [[ "$setting" =~ ^[a-z_][a-z0-9_.]*\ =\ [^\ ].*$ ]] || \
				die "WORKLOAD $WORKLOAD: bad server-settings line \"$setting\" (name = value)"
		done <<<"$workload_settings"
		;;
esac
# the statistics: python3 with numpy and scipy (Debian python3-scipy)
[ -x "$stats" ] || die "$stats is missing"
/usr/bin/python3 -c 'import numpy, scipy.stats' 2>/dev/null || \
	die "the statistics of the report need /usr/bin/python3 with numpy and scipy (apt-get install python3-scipy)"

# --- the builds --------------------------------------------------------------
# Variants without patches run the server of PG_CONFIG (the base build).
# Each distinct list of patches is one build: the base's source, configure
# flags and core patch series plus the patches, built by
# scripts/build-server.sh (cached by the hash of its patches) into
# build/variants/<hash>/, with pg_lockstat built and installed into it from
# a copy of the checkout's sources (build/variants/<hash>-ext/).  Every
# variant's patches are first applied to a copy of the files they touch,
# taken from the base's patched source tree: a patch that does not apply
# stops the study before any build, naming the patch, the file and the
# hunk.  All of this happens before the first run, as the calling user
# (root's builds go to root's cache); the unprivileged second pass gets
# the result in RUN_STUDY_BUILDS: one line per variant, "<bindir> <build
# key> <description>".
vbin=() vkey=() vbuild=()
# until the study's own traps are set (below), an interrupt or a failure
# of the checks and builds removes their temporary files
early_tmp=""
trap 'rm -rf $early_tmp' EXIT
trap 'echo "$me: interrupted by SIGINT before the study; stopping" >&2; exit 130' INT
trap 'echo "$me: interrupted by SIGTERM before the study; stopping" >&2; exit 143' TERM
trap 'echo "$me: interrupted by SIGHUP before the study; stopping" >&2; exit 129' HUP
major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
base_key=$(cat "$bindir/../.pg_lockstat_build_key" 2>/dev/null || true)
if [ -n "${RUN_STUDY_BUILDS:-}" ]; then
	i=0
	while read -r b k d; do
		vbin[i]=$b vkey[i]=$k vbuild[i]=$d
		i=$(( i + 1 ))
	done <<<"$RUN_STUDY_BUILDS"
	[ $i = "$nvariants" ] || die "internal: RUN_STUDY_BUILDS has $i variants, VARIANTS $nvariants"
else
	need_build=0
	for i in "${!vname[@]}"; do
		[ -z "${vpatches[i]}" ] || need_build=1
	done
	if [ $need_build = 1 ]; then
		base_src=$(cat "$bindir/../.pg_lockstat_build_src" 2>/dev/null || true)
		[ -n "$base_key" ] && [ -d "$base_src" ] && [ -f "$base_src/../key.txt" ] || \
			die "variants with patches are built like the base server, so PG_CONFIG must be a server built by scripts/build-server.sh (as make run does); $PG_CONFIG is not"
		base_keytxt=$base_src/../key.txt
		grep -q '^patch ' "$base_keytxt" || \
			die "the base server $bindir/.. has no core patch series (an unpatched build); variants are built on the base's series, so PG_CONFIG must be a server built with it (make server)"
		! grep -q '^arch ' "$base_keytxt" || \
			die "the base server $bindir/.. is a cross build ($(sed -n 's/^arch //p' "$base_keytxt")); variants with patches are built for this machine only"
		[ -d "$top/patches/pg$major" ] || die "PostgreSQL $major has no core patch series in $top/patches/pg$major"
		series=$(ls "$top"/patches/pg"$major"/*.patch)
		[ "$(sha256sum $series | cut -d' ' -f1)" = "$(sed -n 's/^patch \([0-9a-f]*\) .*/\1/p' "$base_keytxt")" ] || \
			die "the base server $bindir/.. was built with another core patch series than $top/patches/pg$major; rebuild it first (make server)"
		# check every variant's patches before building any
		for i in "${!vname[@]}"; do
			[ -n "${vpatches[i]}" ] || continue
			mapfile -t plist < <(printf '%s' "${vpatches[i]}")
			tmp=$(mktemp -d /tmp/pg_lockstat-patch.XXXXXX)
			early_tmp=$tmp
			# the files the patches name (-p1), copied from the base's tree
			awk '/^(---|\+\+\+) / { f = $2; sub(/\r$/, "", f); if (f != "/dev/null") { sub(/^[^\/]*\//, "", f); print f } }' \
				"${plist[@]}" | sort -u | while read -r f; do
				[ -f "$base_src/$f" ] || continue
				mkdir -p "$tmp/$(dirname "$f")" && cp "$base_src/$f" "$tmp/$f"
			done
			for p in "${plist[@]}"; do
				# no fuzz: a hunk whose context lines do not all match
				# could land in the wrong place (offsets are fine)
				if ! out=$(patch -d "$tmp" -p1 --batch --forward --fuzz=0 -i "$p" 2>&1); then
					rm -rf "$tmp"
					why=$(awk '
						/^patching file / { f = substr($0, 15); gsub(/\047/, "", f) }
						/^Hunk #[0-9]+ FAILED/ { sub(/\.$/, "", $0); n++; printf "%s%s of %s", (n > 1 ? "; " : ""), $0, f }
						/^can.t find file to patch|Reversed \(or previously applied\)|malformed patch|Only garbage/ && !n { n++; printf "%s", $0 }
						END { if (!n) printf "patch failed" }' <<<"$out")
					echo "$me: patch -p1 --forward --fuzz=0 -i $p, after the series and the variant's patches before it:" >&2
					sed 's/^/    /' <<<"$out" >&2
					die "variant ${vname[i]}: $p does not apply after the core series of PostgreSQL $major: $why; nothing was built"
				fi
			done
			rm -rf "$tmp"
		done
		# what the base was built from
		build_env=(PG_MAJOR="$major")
		grep -q -- '--enable-cassert' "$base_keytxt" && build_env+=(CASSERT=1) || build_env+=(CASSERT=)
		build_env+=(EXTRA_CFLAGS="$(sed -n 's/^extra-cflags //p' "$base_keytxt")")
		cache=$(cd "$base_src/../../.." && pwd -P)
		if [ -O "$cache/builds" ]; then
			build_env+=(PG_CACHE_DIR="$cache")
		else
			# another user's cache: the base's tarball, extracted into ours
			sha=$(sed -n 's/^source tarball-sha256 //p' "$base_keytxt")
			tarball=""
			for st in "$cache"/src/*.stamp; do
				[ -n "$sha" ] && [ "$(sed -n 's/^sha256=//p' "$st" 2>/dev/null)" = "$sha" ] || continue
				tarball=$cache/downloads/$(sed -n 's/^tarball=//p' "$st")
			done
			[ -n "$tarball" ] && [ -r "$tarball" ] || \
				die "cannot find the source tarball the base server was built from (in $cache, not writable by $(id -un)); run make run as the user who built it"
			build_env+=(PG_SOURCE="$tarball")
		fi
	fi
	declare -A key_of=()	# build directory -> its build key, once built
	for i in "${!vname[@]}"; do
		if [ -z "${vpatches[i]}" ]; then
			vbin[i]=$bindir vkey[i]=${base_key:-unknown} vbuild[i]="the base server (PG_CONFIG)"
			continue
		fi
		mapfile -t plist < <(printf '%s' "${vpatches[i]}")
		h=$( { echo "$base_key"; sha256sum "${plist[@]}" | cut -d' ' -f1; } | sha256sum | cut -c1-12)
		vdir=$VARIANT_DIR/$h
		vbuild[i]="the series + $(for p in "${plist[@]}"; do printf '%s ' "$(basename "$p")"; done)"
		vbuild[i]=${vbuild[i]% }
		vbin[i]=$vdir/bin
		if [ -n "${key_of[$vdir]:-}" ]; then	# built for an earlier variant
			vkey[i]=${key_of[$vdir]}
			continue
		fi
		echo "$me: building variant ${vname[i]} (${vbuild[i]}) into $vdir" >&2
		blog=$(mktemp /tmp/pg_lockstat-build.XXXXXX)
		early_tmp=$blog
		rc=0
		env "${build_env[@]}" PATCHES="$series ${plist[*]}" STOCK= \
			scripts/build-server.sh "$vdir" 2>&1 | tee "$blog" | sed 's/^/    /' >&2 || rc=$?
		if [ $rc -ne 0 ]; then
			log_named=$(sed -n 's/.*(\(full \)\{0,1\}log: \([^)]*\)).*/\2/p' "$blog" | tail -n 1)
			rm -f "$blog"
			die "building variant ${vname[i]} failed${log_named:+; its build log is $log_named}; nothing was run"
		fi
		rm -f "$blog"
		vkey[i]=$(cat "$vdir/.pg_lockstat_build_key")
		key_of[$vdir]=${vkey[i]}
		[ "$("$vdir/bin/postgres" --version)" = "$("$bindir/postgres" --version)" ] || \
			die "variant ${vname[i]} was built from another PostgreSQL than the base: $("$vdir/bin/postgres" --version)"
		# pg_lockstat, built against this server's headers
		ext=$vdir-ext
		elog=$VARIANT_DIR/$h-ext.log
		# .pg_lockstat_ext_key: the server key this copy was built for,
		# and how ("sources 2": from the sources only; a directory
		# without it, or for another server, starts over)
		ext_key="sources 2 ${vkey[i]}"
		if [ "$(cat "$ext/.pg_lockstat_ext_key" 2>/dev/null)" != "$ext_key" ]; then
			rm -rf "$ext"
		fi
		mkdir -p "$ext"
		# the sources only, not the checkout's objects (built against the
		# base's headers); the copy keeps their times, so that a second
		# study recompiles only what changed
		tar -C "$top" --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
			--exclude=tools/pg_lockstat_top/pg_lockstat_top \
			-cf - Makefile pg_lockstat.control extension tools | tar -C "$ext" -xf - || \
			die "copying the pg_lockstat sources to $ext failed"
		echo "$me: installing pg_lockstat into variant ${vname[i]}'s server (log: $elog)" >&2
		env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$ext" PG_CONFIG="$vdir/bin/pg_config" install >"$elog" 2>&1 || \
			die "building pg_lockstat for variant ${vname[i]} failed; see $elog"
		echo "$ext_key" >"$ext/.pg_lockstat_ext_key"
	done
	if [ "$(id -u)" = 0 ]; then
		# the unprivileged second pass reads these
		[ ! -d "$VARIANT_DIR" ] || chmod -R a+rX "$VARIANT_DIR"
		RUN_STUDY_BUILDS=$(for i in "${!vname[@]}"; do echo "${vbin[i]} ${vkey[i]} ${vbuild[i]}"; done)
		export RUN_STUDY_BUILDS
	fi
fi

# --- as root, run the rest as the unprivileged user -----------------------
if [ "$(id -u)" = 0 ] && [ "${1:-}" != "--as-user" ]; then
	mkdir -p "$RUN_DIR"
	AS_USER_WRITABLE="$RUN_DIR" RUN_DIR="$RUN_DIR" exec scripts/as-user.sh "$self" --as-user
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
if [ -n "$workload_settings" ]; then
	{
		echo "# server-settings of the workload $WORKLOAD"
		echo "$workload_settings"
	} >>"$data/postgresql.conf"
fi
# the settings of the variant that runs, rewritten before each start
{
	echo "# the settings of the variant that runs (bench/run-study.sh)"
	echo "include 'variant.conf'"
} >>"$data/postgresql.conf"
: >"$data/variant.conf"

# start_server <label> [<variant number>]: start the server of that
# variant (default: the base server) with its settings in variant.conf
start_server() {
	local lines bin=$bindir
	at="server start ($1)"
	if [ -n "${2:-}" ]; then
		bin=${vbin[$2]}
		printf '%s' "${vsettings[$2]}" >"$data/variant.conf"
	else
		: >"$data/variant.conf"
	fi
	lines=0
	[ ! -f "$log" ] || lines=$(wc -l <"$log")
	# set first: a server that failed to start in time may still be running
	server_running=1
	if ! "$bin/pg_ctl" -D "$data" -l "$log" -w -t 120 start >/dev/null 9>&-; then
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
	echo "core patch: patches/pg$major $(sha256sum "$top"/patches/pg"$major"/*.patch | cut -c1-12 | tr '\n' ' ')"
	for i in "${!vname[@]}"; do
		echo "$noun ${vname[i]}: ${vbin[i]%/bin}, build ${vkey[i]}, ${vbuild[i]}"
	done
} >"$rundir/versions.txt"
if [ -n "$VARIANTS" ]; then compared="VARIANTS=\"$VARIANTS\""; else compared="STRATEGIES=\"$names\""; fi
echo "SCALE=$SCALE $compared CLIENTS=\"$CLIENTS\" DURATION=$DURATION WARMUP=$WARMUP WORKLOAD=$WORKLOAD REPEAT=$REPEAT SEED=$SEED THRESHOLD=$THRESHOLD THREADS=$THREADS" \
	>"$rundir/commands.txt"
if [ -n "$workload_settings" ]; then
	{
		echo "-- server-settings of the workload $WORKLOAD (in postgresql.conf)"
		echo "$workload_settings"
	} >"$rundir/settings.txt"
fi

start_server setup
at="CREATE EXTENSION pg_lockstat"
psql_q -c "CREATE EXTENSION pg_lockstat" || die "$at failed"
at="creating the result tables"
echo "strategy,clients,round,second,tps" >"$rundir/persec.csv"
psql_q -c "CREATE TABLE study_runs (strategy text, clients int, round int, position int, tps float8, seconds float8, transactions bigint)
	       ;CREATE TABLE study_locks (strategy text, clients int, round int, LIKE pg_lwlock_stats)
	       ;CREATE TABLE study_spins (strategy text, clients int, round int, LIKE pg_spinlock_stats)" || \
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

# --- the plan ----------------------------------------------------------------
at="drawing the strategy order"
order=$("$stats" order --noun "$noun" "$SEED" "$REPEAT" $names) || die "$at failed"
at="drawing the client order"
client_order=$("$stats" clients "$SEED" "$REPEAT" $CLIENTS) || die "$at failed"
mapfile -t round_clients <<<"$client_order"
nstrat=$(echo $names | wc -w)
nclients=$(echo $CLIENTS | wc -w)
# estimated seconds: a server start and stop about 3 s, a run about 1 s
# more than its DURATION (connections, counter reset and recording)
slot_cost=$(( 3 + WARMUP ))
run_cost=$(( DURATION + 1 ))
total_cost=$(( REPEAT * nstrat * (slot_cost + nclients * run_cost) ))
done_cost=0
hms() { printf '%dm%02ds' $(( $1 / 60 )) $(( $1 % 60 )); }

echo "pg_lockstat study: workload $WORKLOAD ($workload_args${workload_settings:+; ${workload_settings//$'\n'/, }}), scale $SCALE, ${DURATION}s per run, $nproc CPUs"
echo "plan: $REPEAT rounds x $nstrat ${noun/%y/ie}s x $nclients client counts ($CLIENTS) = $(( REPEAT * nstrat * nclients )) runs of ${DURATION}s;" \
	"$(( REPEAT * nstrat )) server starts, each followed by a ${WARMUP}s warm-up run at $max_clients clients that is not recorded;" \
	"baseline $base; $noun order seeded by SEED=$SEED; estimated $(hms "$total_cost")"
if [ -n "$VARIANTS" ]; then
	# the builds, each once, and what each variant runs
	declare -A build_no=()	# bindir -> its number in the plan
	for i in "${!vname[@]}"; do
		[ -z "${build_no[${vbin[i]}]:-}" ] || continue
		build_no[${vbin[i]}]=$(( ${#build_no[@]} + 1 ))
		echo "build ${build_no[${vbin[i]}]}: ${vbuild[i]}: ${vbin[i]%/bin} (build key ${vkey[i]})"
	done
	for i in "${!vname[@]}"; do
		st=${vsettings[i]%$'\n'}
		echo "variant ${vname[i]}: build ${build_no[${vbin[i]}]}${st:+, settings ${st//$'\n'/, }}"
	done
fi
r=0
while read -r round_order; do
	r=$(( r + 1 ))
	echo "round $r: $round_order; clients ${round_clients[r - 1]}"
done <<<"$order"
echo
started=$SECONDS

r=0
while read -r round_order; do
	r=$(( r + 1 ))
	echo "# round $r: $round_order; clients ${round_clients[r - 1]}" >>"$rundir/commands.txt"
	pos=0
	for s in $round_order; do
		pos=$(( pos + 1 ))
		for v in "${!vname[@]}"; do
			[ "${vname[v]}" != "$s" ] || break
		done
		start_server "$noun $s" "$v"
		# the server that runs is the variant's build, with its settings
		at="checking the server of $noun $s"
		pid=$(head -n 1 "$data/postmaster.pid" 2>/dev/null) || die "$at failed: no postmaster.pid"
		exe=$(readlink -f "/proc/$pid/exe" 2>/dev/null || true)
		if [ -n "$exe" ] && [ "$(head -c 4 "${vbin[v]}/postgres" | od -An -c | tr -d ' ')" = '177ELF' ]; then
			[ "$exe" = "$(readlink -f "${vbin[v]}/postgres")" ] || \
				die "$at failed: $exe runs, not ${vbin[v]}/postgres"
		fi
		at="checking the settings in force ($noun $s)"
		while read -r sname _ sval; do
			[ -n "$sname" ] || continue
			sval=${sval#\'}
			sval=${sval%\'}
			known=$(psql_q -c "SELECT count(*) FROM pg_settings WHERE name = '$sname'") || die "$at failed"
			[ "$known" = 1 ] || die "$at failed: the server has no setting $sname (see $log)"
			# pg_file_settings: whether the file's line is the value in
			# force (a session may still override it: application_name)
			state=$(psql_q -c "SELECT applied, coalesce(error, '') FROM pg_file_settings
				WHERE name = '$sname' AND sourcefile LIKE '%/variant.conf'") || die "$at failed"
			[ "$state" = "t|" ] || \
				die "$at failed: $sname = '$sval' is not in force${state:+ (${state#*|})}; see $log"
		done <<<"${vsettings[v]}"
		if [ -n "${vstrategy[v]}" ]; then
			inforce=$(psql_q -c "SELECT spin_strategy FROM pg_lockstat_status") || die "$at failed"
			[ "$inforce" = "${vstrategy[v]}" ] || die "$at failed: strategy ${vstrategy[v]} requested but $inforce in force"
		fi
		if [ $r = 1 ]; then
			# the settings each variant's server ran with
			at="saving the server settings ($noun $s)"
			{
				echo "-- $noun $s"
				psql_q -c "SELECT name, setting, unit, source FROM pg_settings WHERE source NOT IN ('default', 'override') ORDER BY name"
			} >>"$rundir/settings.txt" || die "$at failed"
		fi
		if [ "$WARMUP" -gt 0 ]; then
			j=${THREADS:-$(( max_clients < nproc ? max_clients : nproc ))}
			out=$rundir/pgbench-$s-warmup-$r.log
			cmd="pgbench -n $workload_args -c $max_clients -j $j -T $WARMUP postgres"
			echo "[$s] $cmd (warm-up)" >>"$rundir/commands.txt"
			at="pgbench ($noun $s, warm-up, round $r)"
			rc=0
			run_bg "$out" $cmd || rc=$?
			if [ $rc -ne 0 ]; then
				show_log "$out" 'error'
				die "$at failed (exit status $rc); see $out"
			fi
		fi
		done_cost=$(( done_cost + slot_cost ))
		for c in ${round_clients[r - 1]}; do
			j=${THREADS:-$(( c < nproc ? c : nproc ))}
			point="$noun $s, $c clients, round $r"
			at="pg_lockstat_reset() ($point)"
			psql_q -c "SELECT pg_lockstat_reset()" >/dev/null || die "$at failed"
			out=$rundir/pgbench-$s-$c-$r.log
			cmd="pgbench -n $workload_args -c $c -j $j -T $DURATION -P 1 postgres"
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
			xacts=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out" | head -n 1)
			[ -n "$xacts" ] || die "$at failed: no number of transactions in its output; see $out"
			elapsed=$(awk -v t0="$t0" -v t1="$t1" 'BEGIN { printf "%.3f", t1 - t0 }')
			# the per-second tps of -P 1: "progress: 1.0 s, 1234.5 tps, ..."
			awk -v s="$s" -v c="$c" -v r="$r" '
				/^progress: / { gsub(",", ""); print s "," c "," r "," $2 "," $4 }' \
				"$out" >>"$rundir/persec.csv" || die "recording the per-second tps ($point) failed"
			at="recording the results ($point)"
			psql_q -c "INSERT INTO study_locks SELECT '$s', $c, $r, * FROM pg_lwlock_stats" \
				-c "INSERT INTO study_spins SELECT '$s', $c, $r, * FROM pg_spinlock_stats" \
				-c "INSERT INTO study_runs VALUES ('$s', $c, $r, $pos, $tps, $elapsed, $xacts)" || \
				die "$at failed"
			done_cost=$(( done_cost + run_cost ))
			spent=$(( SECONDS - started ))
			left=$(( spent * (total_cost - done_cost) / (done_cost > 0 ? done_cost : 1) ))
			printf '%s: round %d/%d  %s %-9s clients %4d  %6.1f s  %10.1f tps  elapsed %s, remaining %s\n' \
				"$me" "$r" "$REPEAT" "$noun" "$s" "$c" "$elapsed" "$tps" "$(hms "$spent")" "$(hms "$left")" >&2
		done
		stop_server
	done
done <<<"$order"

start_server report
at="report"
psql_q -c "\\copy (SELECT * FROM study_runs ORDER BY round, position, clients) TO '$rundir/runs.csv' CSV HEADER" \
	-c "\\copy (SELECT * FROM study_locks ORDER BY strategy, clients, round, blocks DESC) TO '$rundir/locks.csv' CSV HEADER" \
	-c "\\copy (SELECT * FROM study_spins ORDER BY strategy, clients, round, contended DESC, spins DESC) TO '$rundir/spins.csv' CSV HEADER" || \
	die "$at failed: writing runs.csv, locks.csv and spins.csv"

echo
"$stats" --strategies "$names" --noun "$noun" --threshold "$THRESHOLD" \
	--points "$rundir/points.csv" --dat-dir "$rundir" "$rundir/runs.csv" || \
	die "$at failed: bench/study_stats.py on runs.csv"
if [ -n "$others" ]; then
	# (m) why: the lock counts per 1000 transactions, variant against base
	echo
	"$stats" mechanism --variants "$names" --csv "$rundir/mechanism.csv" \
		"$rundir/runs.csv" "$rundir/locks.csv" "$rundir/spins.csv" || \
		die "$at failed: bench/study_stats.py mechanism"
fi

for s in $names; do
	echo
	echo "(b) top 10 LWLocks by blocks: $noun $s, $max_clients clients, sum of $REPEAT rounds"
	psql -X -q -v ON_ERROR_STOP=1 -P footer=off -c "
		SELECT tranche AS lock, sum(sh_acquires + ex_acquires) AS acquires,
		       sum(blocks) AS \"Blk\", sum(spin_delays) AS \"SpinDelay\",
		       round((100 * sum(blocks) / nullif(sum(sum(blocks)) OVER (), 0))::numeric, 2) AS \"Blk %\",
		       round((100 * sum(spin_delays) / nullif(sum(sum(spin_delays)) OVER (), 0))::numeric, 2) AS \"SpinDelay %\",
		       round(sum(wait_time)::numeric, 1) AS \"wait ms\",
		       sum(sh_hold_samples + ex_hold_samples) AS \"hold samples\",
		       round((1000 * sum(sh_hold_time + ex_hold_time) /
		              nullif(sum(sh_hold_samples + ex_hold_samples), 0))::numeric, 2) AS \"mean hold us\",
		       CASE WHEN sum(sh_hold_samples + ex_hold_samples) > 0
		            THEN round((1000 * max(greatest(max_ex_hold_time, max_sh_hold_time)))::numeric, 1)
		       END AS \"max hold us\"
		FROM study_locks
		WHERE strategy = '$s' AND clients = $max_clients
		GROUP BY tranche
		ORDER BY 3 DESC, 4 DESC, 2 DESC
		LIMIT 10" || die "$at failed: table (b) of $s"
done
# (c) the spin-wait call sites of pg_spinlock_stats; tas_attempts and
# unlocked_skips are NULL outside s_lock() and under spin_strategy default
for s in $names; do
	echo
	echo "(c) top 10 spin-wait call sites by contended waits: $noun $s, $max_clients clients, sum of $REPEAT rounds"
	sites=$(psql_q -c "SELECT count(DISTINCT (file, line, func)) FROM study_spins
		WHERE strategy = '$s' AND clients = $max_clients AND contended > 0") || \
		die "$at failed: table (c) of $s"
	if [ "$sites" = 0 ]; then
		echo "no contended spin waits"
		continue
	fi
	psql -X -q -v ON_ERROR_STOP=1 -P footer=off -c "
		SELECT func, file || ':' || line AS site, sum(contended) AS contended,
		       sum(spins) AS spins, sum(delays) AS delays,
		       round(sum(wait_time)::numeric, 1) AS \"wait ms\",
		       sum(tas_attempts) AS \"TAS attempts\", sum(unlocked_skips) AS \"unlocked skips\",
		       round(sum(unlocked_skips)::numeric / nullif(sum(contended), 0), 2) AS \"skips/contended\"
		FROM study_spins
		WHERE strategy = '$s' AND clients = $max_clients
		GROUP BY func, file, line
		HAVING sum(contended) > 0
		ORDER BY 3 DESC, 4 DESC, 2
		LIMIT 10" || die "$at failed: table (c) of $s"
done
# per strategy: share of all blocks and of all spin delays of its top 5
# tranches (by blocks plus spin delays over the whole study), per client count
for s in $names; do
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
	xrange="[$(echo "$CLIENTS" | tr ' ' '\n' | sort -n | head -n 1)*0.8:$max_clients*1.25]"
	# the answer: each strategy's median tps ratio to the baseline in the
	# same round, with its 95% interval, against clients, and y = 1
	plot=""
	for s in $others; do
		plot="$plot${plot:+, }'$rundir/ratio-$s.dat' using 1:2:3:4 with yerrorlines title '$s / $base'"
		[ -s "$rundir/bimodal-$s.dat" ] &&
			plot="$plot, '$rundir/bimodal-$s.dat' using 1:2 with points pointtype 6 pointsize 3 title '$s: bimodal'"
	done
	if [ -n "$plot" ]; then
		if gnuplot -e "set terminal png size 900,600 noenhanced; set output '$rundir/ratio.png';
			set xrange $xrange;
			set title 'tps ratio to $base in the same round: median and 95% interval over $REPEAT rounds (pgbench $WORKLOAD, ${DURATION}s runs, $nproc CPUs)';
			set xlabel 'clients'; set ylabel 'tps ratio to $base'; set logscale x 2;
			set key top left; set grid; plot $plot, 1 with lines dashtype 2 linecolor 'black' title 'y = 1'" \
			2>"$rundir/gnuplot.log"; then
			plots="ratio.png"
		else
			rm -f "$rundir/ratio.png"
			warn "plotting ratio.png failed, no plot; see $rundir/gnuplot.log"
		fi
	fi
	# tps against clients, one line per strategy, with min-max bars
	plot=""
	for s in $names; do
		plot="$plot${plot:+, }'$rundir/tps-$s.dat' using 1:2:3:4 with yerrorlines title '$s'"
	done
	if gnuplot -e "set terminal png size 900,600 noenhanced; set output '$rundir/tps.png';
		set xrange $xrange; set yrange [0:*];
		set title 'pgbench $WORKLOAD, scale $SCALE, ${DURATION}s x $REPEAT rounds, $nproc CPUs';
		set xlabel 'clients'; set ylabel 'tps (median, min-max)'; set logscale x 2;
		set key top left; set grid; plot $plot" 2>>"$rundir/gnuplot.log"; then
		plots="$plots${plots:+, }tps.png"
	else
		rm -f "$rundir/tps.png"
		warn "plotting tps.png failed, no plot; see $rundir/gnuplot.log"
	fi
	# the per-second tps of every run of each point whose runs split into
	# two groups (points.csv: bifurcated), one line per round
	while IFS=, read -r s c; do
		png=collapse-$s-$c.png
		lines=""
		for r in $(awk -F, -v s="$s" -v c="$c" '$1 == s && $2 == c { print $3 }' "$rundir/persec.csv" | sort -un); do
			lines="$lines${lines:+, }'$rundir/persec.csv' using (strcol(1) eq '$s' && \$2 == $c && \$3 == $r ? \$4 : 1/0):5 every ::1 with lines title 'round $r'"
		done
		[ -n "$lines" ] || continue
		if gnuplot -e "set terminal png size 900,600 noenhanced; set output '$rundir/$png';
			set datafile separator ','; set title '$noun $s, $c clients: tps per second of each round (the runs split into two groups)';
			set xlabel 'second'; set ylabel 'tps'; set yrange [0:*]; set grid; set key outside right;
			plot $lines" 2>>"$rundir/gnuplot.log"; then
			plots="$plots${plots:+, }$png"
		else
			rm -f "$rundir/$png"
			warn "plotting $png failed, no plot; see $rundir/gnuplot.log"
		fi
	done < <(awk -F, 'NR > 1 && $7 == "t" { print $1 "," $2 }' "$rundir/points.csv")
	# lock shares: one image per strategy, blocks above, spin delays below
	for s in $names; do
		dat=$rundir/locks-$s.dat
		[ -s "$dat" ] || continue
		lines=""
		for r in $(cut -d' ' -f1 "$dat" | sort -un); do
			name=$(awk -v r="$r" '$1 == r { print $3; exit }' "$dat")
			lines="$lines${lines:+, }'$dat' using (\$1 == $r ? \$2 : 1/0):COL with linespoints title '$name'"
		done
		if gnuplot -e "set terminal png size 900,800 noenhanced; set output '$rundir/locks-$s.png';
			set multiplot layout 2,1 title 'top LWLocks, $noun $s: share per client count';
			set logscale x 2; set xrange $xrange;
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
echo "results: $rundir/ (runs.csv, points.csv, ${others:+mechanism.csv, }persec.csv, locks.csv, spins.csv, ${plots:+$plots, }settings.txt, machine.txt, versions.txt, commands.txt)"
