#!/bin/bash
#
# fetch-source.sh - provide a pristine PostgreSQL source tree of one major
#
# Usage: fetch-source.sh [--cached] <cache_dir>
#
# With --cached, nothing is fetched, extracted or created, and no lock is
# taken: the tree that a run would use is printed if it is already there
# (PG_SOURCE's directory, the extracted tree of PG_SOURCE's tarball, or the
# newest tree extracted from apt), else the exit status is 3.  For
# "build-server.sh --plan", which says before a build what it would do.
#
# The major is PG_MAJOR (default 18).  Where the source comes from:
#   - PG_SOURCE set to a directory: that directory, after checking that its
#     configure script says PACKAGE_VERSION='<major>.x' and that it has not been
#     configured in place (config.status).  It is used as is, not copied.
#   - PG_SOURCE set to a tarball (.tar.bz2, .tar.gz, .tgz, .tar.xz): it is
#     extracted into <cache_dir>/src/ (once; identified by its SHA-256).
#   - otherwise: the newest postgresql-<major> source package that Debian's
#     archive offers in the suites $PG_APT_SUITES.  The archive URIs (and
#     their Signed-By keys) are taken from the machine's active apt sources
#     (the entries for the machine's own Debian release; the security
#     archive's entry serves the *-security suites of the list), and a
#     private apt configuration and state under <cache_dir>/apt is used: the
#     machine's apt configuration is neither read for lists nor modified.
#     Only the upstream tarball (postgresql-<major>_<ver>.orig.tar.*) is used;
#     Debian's patches are ignored.  It is extracted into
#     <cache_dir>/src/postgresql-<ver>/.  Once a tree has been extracted
#     completely (stamp file <cache_dir>/src/postgresql-<ver>.stamp) later
#     runs reuse it without touching the network.  If apt cannot reach the
#     archive, the newest tarball already in <cache_dir>/downloads is used,
#     with a warning.
#
# Environment:
#   PG_MAJOR           PostgreSQL major to fetch (default 18)
#   PG_SOURCE          optional; a source directory or tarball of that major
#   PG_APT_SUITES      suites to search (default "sid forky trixie-backports
#                      trixie trixie-security bookworm-backports bookworm
#                      bookworm-updates bookworm-security", the same for
#                      every major: the newest version found wins); suites
#                      the archive does not have are skipped
#   PG_SOURCE_REFRESH  if 1, ask apt for a newer version even when a tree
#                      was already extracted
#
# Output: the last (and only) line on stdout is the absolute path of the
#   source tree; progress and apt's output go to stderr.
#   Cache layout: <cache_dir>/apt/ (private apt config, lists, logs),
#   <cache_dir>/downloads/ (source packages), <cache_dir>/src/ (trees and
#   their .stamp files: version=, tarball=, sha256=, origin=).
# Exit status: 0 success; 1 failure (message on stderr); 2 usage error;
#   3 with --cached: the source is not there yet.
#
set -euo pipefail

me=fetch-source
die() { echo "$me: $*" >&2; exit 1; }
note() { echo "$me: $*" >&2; }

cached_only=0
if [ "${1:-}" = --cached ]; then
	cached_only=1
	shift
fi
if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: $0 [--cached] <cache_dir>" >&2
	exit 2
fi

major=${PG_MAJOR:-18}
case "$major" in
''|*[!0-9]*) echo "$me: PG_MAJOR must be a PostgreSQL major number such as 15, 17 or 18, not '$major'" >&2; exit 2 ;;
esac
suites=${PG_APT_SUITES:-sid forky trixie-backports trixie trixie-security bookworm-backports bookworm bookworm-updates bookworm-security}
pkg=postgresql-$major

umask 022
if [ $cached_only = 1 ]; then
	# Only read: a cache that does not exist holds nothing.  A tree's stamp
	# is written after its extraction, so a concurrent run is no danger.
	[ -d "$1" ] || exit 3
else
	mkdir -p "$1" || die "step 'create cache dir': cannot create $1"
fi
cache=$(cd "$1" && pwd -P)
srcdir=$cache/src
dldir=$cache/downloads
aptdir=$cache/apt
if [ $cached_only = 0 ]; then
	mkdir -p "$srcdir" "$dldir" "$aptdir" ||
		die "step 'create cache dir': cannot create directories under $cache"

	# Serialize concurrent runs on the same cache (extraction, apt state).
	exec 9>"$cache/fetch.lock"
	if ! flock -w 1800 9; then
		die "step 'lock': timed out waiting for $cache/fetch.lock"
	fi
fi

tmpdirs=()
cleanup() {
	local d
	for d in "${tmpdirs[@]+"${tmpdirs[@]}"}"; do
		rm -rf "$d"
	done
}
trap cleanup EXIT

# PACKAGE_VERSION of a source tree, from its configure script.
tree_version() {
	sed -n "s/^PACKAGE_VERSION='\\(.*\\)'\$/\\1/p" "$1/configure" 2>/dev/null | head -n 1
}

# Whether version $1 belongs to the requested major.
is_major() {
	case "$1" in
	"$major".*|"$major"beta*|"$major"rc*) return 0 ;;
	*) return 1 ;;
	esac
}

# Value of key $2 in stamp file $1.
stamp_get() {
	sed -n "s/^$2=//p" "$1" | head -n 1
}

# Newest of the Debian versions given as arguments.
newest_version() {
	local best="" v
	for v in "$@"; do
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v
		fi
	done
	printf '%s\n' "$best"
}

# The complete tree extracted from a tarball with SHA-256 $1, or nothing.
extracted_tree() {
	local stamp
	for stamp in "$srcdir"/*.stamp; do
		[ -f "$stamp" ] || continue
		if [ "$(stamp_get "$stamp" sha256)" = "$1" ] && [ -d "${stamp%.stamp}" ]; then
			printf '%s\n' "${stamp%.stamp}"
			return 0
		fi
	done
}

# The newest complete tree of the major extracted from apt, or nothing.
newest_apt_tree() {
	local stamp v best="" besttree=""
	for stamp in "$srcdir"/*.stamp; do
		if [ ! -f "$stamp" ] || [ ! -d "${stamp%.stamp}" ]; then
			continue
		fi
		[ "$(stamp_get "$stamp" origin)" = apt ] || continue
		v=$(stamp_get "$stamp" version)
		is_major "$v" || continue
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v besttree=${stamp%.stamp}
		fi
	done
	printf '%s\n' "$besttree"
}

# Extract tarball $1 (origin label $2) into $srcdir unless a complete tree
# from a tarball with the same SHA-256 is already there.  Prints the tree.
extract_tarball() {
	local tarball=$1 origin=$2 sha tmp top ver dest n tree
	sha=$(sha256sum "$tarball" | cut -d' ' -f1) ||
		die "step 'checksum': cannot read $tarball"
	tree=$(extracted_tree "$sha")
	if [ -n "$tree" ]; then
		note "reusing $(basename "$tree") (already extracted from $(basename "$tarball"))"
		printf '%s\n' "$tree"
		return 0
	fi
	[ $cached_only = 0 ] || exit 3

	note "extracting $(basename "$tarball")"
	tmp=$(mktemp -d "$srcdir/.extract.XXXXXX")
	tmpdirs+=("$tmp")
	# --no-same-owner/--no-same-permissions: as root, do not keep the
	# tarball's owners and modes; the tree must follow our umask (readable
	# by the unprivileged user that runs the tests).
	if ! tar -x -f "$tarball" -C "$tmp" --no-same-owner --no-same-permissions; then
		die "step 'extract': tar failed on $tarball"
	fi
	n=0
	for top in "$tmp"/*; do
		n=$((n + 1))
	done
	if [ "$n" -ne 1 ] || [ ! -f "$top/configure" ]; then
		die "step 'extract': $tarball does not contain a single PostgreSQL source directory"
	fi
	ver=$(tree_version "$top")
	is_major "$ver" ||
		die "step 'check version': $tarball contains PostgreSQL '${ver:-unknown}', not $major.x (PG_MAJOR=$major)"

	dest=$srcdir/postgresql-$ver
	if [ -e "$dest" ]; then
		if [ -f "$dest.stamp" ]; then
			# A complete tree of the same version but another tarball.
			dest=$srcdir/postgresql-$ver-${sha:0:12}
		fi
		# Leftover of an interrupted extraction (no stamp): replace it.
		[ -f "$dest.stamp" ] || rm -rf "$dest"
	fi
	mv "$top" "$dest" || die "step 'extract': cannot move the tree to $dest"
	{
		echo "version=$ver"
		echo "tarball=$(basename "$tarball")"
		echo "sha256=$sha"
		echo "origin=$origin"
	} >"$dest.stamp.tmp"
	mv "$dest.stamp.tmp" "$dest.stamp"
	note "extracted PostgreSQL $ver into $dest"
	printf '%s\n' "$dest"
}

# ----------------------------------------------------------------------
# PG_SOURCE given
# ----------------------------------------------------------------------
if [ -n "${PG_SOURCE:-}" ]; then
	if [ -d "$PG_SOURCE" ]; then
		tree=$(cd "$PG_SOURCE" && pwd -P)
		[ -f "$tree/configure" ] ||
			die "step 'check PG_SOURCE': $tree has no configure script; is it a PostgreSQL source tree?"
		ver=$(tree_version "$tree")
		is_major "$ver" ||
			die "step 'check PG_SOURCE': $tree is PostgreSQL '${ver:-unknown}' (configure's PACKAGE_VERSION), not $major.x (PG_MAJOR=$major)"
		if [ -f "$tree/config.status" ]; then
			die "step 'check PG_SOURCE': $tree has been configured in place (config.status exists); run 'make distclean' there or use a pristine tree"
		fi
		note "using PG_SOURCE=$tree (PostgreSQL $ver)"
		printf '%s\n' "$tree"
		exit 0
	fi
	if [ -f "$PG_SOURCE" ]; then
		case "$PG_SOURCE" in
		*.tar.bz2|*.tar.gz|*.tgz|*.tar.xz|*.tar) ;;
		*) die "step 'check PG_SOURCE': $PG_SOURCE is not a .tar.bz2, .tar.gz or .tar.xz tarball" ;;
		esac
		tarball=$(cd "$(dirname "$PG_SOURCE")" && pwd -P)/$(basename "$PG_SOURCE")
		extract_tarball "$tarball" PG_SOURCE
		exit 0
	fi
	die "step 'check PG_SOURCE': $PG_SOURCE is neither a directory nor a tarball"
fi

# ----------------------------------------------------------------------
# From Debian's archive via apt
# ----------------------------------------------------------------------

# Newest complete tree extracted earlier from apt: no network needed.
# (With --cached and PG_SOURCE_REFRESH=1, a run might find a newer one.)
if [ "${PG_SOURCE_REFRESH:-0}" != 1 ] || [ $cached_only = 1 ]; then
	besttree=$(newest_apt_tree)
	if [ -n "$besttree" ]; then
		note "using cached PostgreSQL $(stamp_get "$besttree.stamp" version) source (PG_SOURCE_REFRESH=1 checks for a newer one)"
		printf '%s\n' "$besttree"
		exit 0
	fi
	[ $cached_only = 0 ] || exit 3
fi

# The newest orig tarball already downloaded, or nothing.
newest_cached_tarball() {
	local f v best="" bestf=""
	for f in "$dldir"/"$pkg"_*.orig.tar.*; do
		[ -f "$f" ] || continue
		v=${f##*/"$pkg"_}
		v=${v%.orig.tar.*}
		if [ -z "$best" ] || dpkg --compare-versions "$v" gt "$best"; then
			best=$v bestf=$f
		fi
	done
	printf '%s\n' "$bestf"
}

fallback_to_cache() {
	local f
	f=$(newest_cached_tarball)
	if [ -z "$f" ]; then
		return 1
	fi
	note "WARNING: $1; using the newest tarball already in the cache: $f"
	extract_tarball "$f" apt
	exit 0
}

# --- the machine's Debian archive entries ---------------------------------
# shellcheck disable=SC1091
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") || codename=""
SL="" SP=""
eval "$(apt-config shell SL Dir::Etc::SourceList/f SP Dir::Etc::SourceParts/d)" ||
	die "step 'read apt sources': apt-config failed"
SP=${SP%/}
source_files=()
[ -n "$SL" ] && [ -f "$SL" ] && source_files+=("$SL")
if [ -n "$SP" ] && [ -d "$SP" ]; then
	for f in "$SP"/*.list "$SP"/*.sources; do
		[ -f "$f" ] && source_files+=("$f")
	done
fi
[ ${#source_files[@]} -gt 0 ] ||
	die "step 'read apt sources': no apt source files found (${SL:-sources.list}, ${SP:-sources.list.d}/*.list|*.sources); set PG_SOURCE=<PostgreSQL $major source dir or tarball>"

mkdir -p "$aptdir/etc/sources.list.d" "$aptdir/etc/preferences.d" \
	"$aptdir/state/lists/partial" "$aptdir/cache/archives/partial"
: >"$aptdir/etc/sources.list"
: >>"$aptdir/state/status"

# Turn every active entry for the machine's release (deb822 stanzas or
# one-line entries) into a deb822 deb-src stanza, keeping the URIs and the
# Signed-By value (a key file or an inline key block): the archive's entry
# gets the suites of $suites that are not *-security, the security
# archive's entry (its URI or suite says security) gets the *-security ones.
# shellcheck disable=SC2016
awk -v codename="$codename" -v suites="$suites" '
function archive_suite(s,    n, i, a) {
	n = split(s, a, /[ \t]+/)
	for (i = 1; i <= n; i++) {
		if (a[i] == "") continue
		if (codename != "" && (a[i] == codename || a[i] == codename "-security" || a[i] == codename "/updates")) return 1
		if (a[i] ~ /^(stable|oldstable|oldoldstable|testing|unstable|sid)(-security)?$/) return 1
		if (codename == "" && a[i] !~ /-(updates|backports|proposed-updates)$/) return 1
	}
	return 0
}
function pick(security,    n, i, a, out) {
	n = split(suites, a, /[ \t]+/)
	out = ""
	for (i = 1; i <= n; i++) {
		if (a[i] == "") continue
		if ((a[i] ~ /-security$/) != security) continue
		out = out (out == "" ? "" : " ") a[i]
	}
	return out
}
function emit(types, uris, s, enabled, signedby,    key, security, want) {
	if (tolower(enabled) == "no") return
	if ((" " types " ") !~ /[ \t]deb(-src)?[ \t]/) return
	if (uris == "" || uris ~ /^cdrom:/) return
	if (!archive_suite(s)) return
	security = (uris ~ /security/ || s ~ /-security|\/updates/) ? 1 : 0
	want = pick(security)
	if (want == "") return
	key = uris SUBSEP signedby
	if (key in seen) return
	seen[key] = 1
	print "Types: deb-src"
	print "URIs: " uris
	print "Suites: " want
	print "Components: main"
	if (signedby != "") print signedby
	print ""
}
function reset() {
	types = ""; uris = ""; ssuites = ""; enabled = ""; signedby = ""
	field = ""; any = 0
}
FNR == 1 {
	if (any) emit(types, uris, ssuites, enabled, signedby)
	reset()
	deb822 = (FILENAME ~ /\.sources$/)
}
deb822 {
	if ($0 ~ /^#/) next
	if ($0 ~ /^[ \t]*$/) {
		if (any) emit(types, uris, ssuites, enabled, signedby)
		reset()
		next
	}
	if ($0 ~ /^[ \t]/) {			# continuation line
		if (field == "signed-by") signedby = signedby "\n" $0
		else if (field == "uris") uris = uris " " $1
		else if (field == "suites") ssuites = ssuites " " $0
		else if (field == "types") types = types " " $0
		next
	}
	any = 1
	i = index($0, ":")
	if (i == 0) next
	field = tolower(substr($0, 1, i - 1))
	value = substr($0, i + 1)
	gsub(/^[ \t]+|[ \t]+$/, "", value)
	if (field == "types") types = value
	else if (field == "uris") uris = value
	else if (field == "suites") ssuites = value
	else if (field == "enabled") enabled = value
	else if (field == "signed-by") signedby = "Signed-By: " value
	next
}
{
	line = $0
	sub(/#.*/, "", line)
	if (line !~ /^[ \t]*deb(-src)?[ \t]/) next
	sub(/^[ \t]*/, "", line)
	split(line, w, /[ \t]+/)
	t = w[1]
	line = substr(line, length(t) + 1)
	sub(/^[ \t]*/, "", line)
	sb = ""
	if (substr(line, 1, 1) == "[") {
		j = index(line, "]")
		opts = substr(line, 2, j - 2)
		line = substr(line, j + 1)
		sub(/^[ \t]*/, "", line)
		n = split(opts, o, /[ \t]+/)
		for (k = 1; k <= n; k++)
			if (tolower(o[k]) ~ /^signed-by=/) sb = "Signed-By: " substr(o[k], 11)
	}
	split(line, w, /[ \t]+/)
	emit(t, w[1], w[2], "", sb)
}
END { if (any) emit(types, uris, ssuites, enabled, signedby) }
' "${source_files[@]}" >"$aptdir/etc/sources.list.d/pg_lockstat.sources.tmp" ||
	die "step 'read apt sources': cannot parse ${source_files[*]}"
mv "$aptdir/etc/sources.list.d/pg_lockstat.sources.tmp" "$aptdir/etc/sources.list.d/pg_lockstat.sources"

if [ ! -s "$aptdir/etc/sources.list.d/pg_lockstat.sources" ]; then
	fallback_to_cache "no Debian archive entry for release '${codename:-?}' in ${source_files[*]}" ||
		die "step 'read apt sources': found no Debian archive entry for release '${codename:-?}' in ${source_files[*]}; set PG_SOURCE=<PostgreSQL $major source dir or tarball>"
fi
uris=$(sed -n 's/^URIs: //p' "$aptdir/etc/sources.list.d/pg_lockstat.sources" | tr '\n' ' ')
uris=${uris% }

apt_opts=(
	-o "Dir::Etc::SourceList=$aptdir/etc/sources.list"
	-o "Dir::Etc::SourceParts=$aptdir/etc/sources.list.d"
	-o "Dir::Etc::Preferences=$aptdir/etc/preferences"
	-o "Dir::Etc::PreferencesParts=$aptdir/etc/preferences.d"
	-o "Dir::State=$aptdir/state"
	-o "Dir::State::status=$aptdir/state/status"
	-o "Dir::Cache=$aptdir/cache"
	-o "Acquire::Languages=none"
	-o "APT::Get::List-Cleanup=true"
)
if [ "$(id -u)" -ne 0 ]; then
	# Locking is only meaningful for the system's state; ours is private
	# and protected by fetch.lock.
	apt_opts+=(-o "Debug::NoLocking=true")
else
	# As root apt drops privileges to _apt for downloads; it could not
	# write into our cache directories.  Downloads are checked against the
	# signed archive indexes either way.
	apt_opts+=(-o "APT::Sandbox::User=root")
fi

note "searching $pkg in suites '$suites' of $uris"
update_log=$aptdir/update.log
apt-get "${apt_opts[@]}" -q update >"$update_log" 2>&1 || true
# apt-get update only warns when a host cannot be reached, and fails when a
# suite does not exist (e.g. no forky any more) even though the others were
# fetched: judge by what it says rather than by its exit status.
if grep -Eq '^(Err|E|W):' "$update_log"; then
	note "note: apt-get update reported problems (full log: $update_log):"
	grep -E '^(Err|E|W):' "$update_log" | head -n 6 | sed "s/^/$me:   /" >&2 || true
fi
reached=0
grep -Eq '^(Get|Hit):' "$update_log" && reached=1

versions=$(apt-cache "${apt_opts[@]}" showsrc --only-source "$pkg" 2>/dev/null |
	awk -v p="$pkg" '/^Package: / { cur = $2 } /^Version: / && cur == p { print $2 }' |
	sort -u) || versions=""
if [ -z "$versions" ]; then
	if [ "$reached" = 0 ]; then
		fallback_to_cache "apt-get update could not reach $uris" ||
			die "step 'apt-get update': could not reach $uris (log: $update_log) and nothing is cached in $dldir; set PG_SOURCE=<PostgreSQL $major source dir or tarball>"
	fi
	fallback_to_cache "no $pkg source package found" ||
		die "step 'find source package': no $pkg source package in suites '$suites' of $uris (from ${source_files[*]}); set PG_SOURCE=<PostgreSQL $major source dir or tarball>"
fi
note "$pkg sources listed: $(printf '%s' "$versions" | tr '\n' ' ')"

# Newest first.  An archive may list a version that it does not serve (a
# mirror without a suite's or the security archive's source files): then
# the next older version is tried, and the failures are reported.
ordered=$versions
sorted=()
while [ -n "$ordered" ]; do
	# shellcheck disable=SC2086
	best=$(newest_version $ordered)
	sorted+=("$best")
	# shellcheck disable=SC2086
	ordered=$(printf '%s\n' $ordered | grep -vxF "$best" || true)
done

failed=()
version=""
for candidate in "${sorted[@]}"; do
	upstream=${candidate#*:}
	upstream=${upstream%-*}
	# A complete tree of that upstream version may exist (PG_SOURCE_REFRESH=1).
	if [ -f "$srcdir/postgresql-$upstream.stamp" ] && [ -d "$srcdir/postgresql-$upstream" ] &&
		[ "$(stamp_get "$srcdir/postgresql-$upstream.stamp" origin)" = apt ]; then
		note "PostgreSQL $upstream is already extracted"
		printf '%s\n' "$srcdir/postgresql-$upstream"
		exit 0
	fi
	note "downloading $pkg=$candidate"
	if (cd "$dldir" && apt-get "${apt_opts[@]}" -q source --download-only "$pkg=$candidate") \
		>"$aptdir/download.log" 2>&1; then
		version=$candidate
		break
	fi
	why=$(grep -Eo '[0-9]{3} +[A-Za-z ]+' "$aptdir/download.log" | head -n 1)
	note "the archive lists $pkg $candidate but its download failed (${why:-see $aptdir/download-$candidate.log})"
	cp "$aptdir/download.log" "$aptdir/download-$candidate.log"
	failed+=("$candidate")
done
if [ -z "$version" ]; then
	fallback_to_cache "every listed $pkg source failed to download (${failed[*]})" ||
		die "step 'download': the archive lists $pkg ${failed[*]} in suites '$suites' of $uris, but none of them could be downloaded (logs: $aptdir/download-*.log); set PG_SOURCE=<PostgreSQL $major source dir or tarball> to use a local copy"
fi
[ ${#failed[@]} -eq 0 ] ||
	note "WARNING: using $pkg $version, not the newest listed version ${failed[0]}, which could not be downloaded"

tarball=""
for f in "$dldir"/"$pkg"_"$upstream".orig.tar.*; do
	case "$f" in *.asc) continue ;; esac
	[ -f "$f" ] && tarball=$f
done
[ -n "$tarball" ] ||
	die "step 'download': no ${pkg}_$upstream.orig.tar.* in $dldir after apt-get source"
extract_tarball "$tarball" apt
