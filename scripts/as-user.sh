#!/bin/bash
#
# as-user.sh - run a command as an unprivileged user when invoked as root
#
# PostgreSQL refuses to run as root, and CI runs as root.  So:
#   - not root: exec the command as is;
#   - root: make sure the system user "pglockstat" exists (created with home
#     /var/lib/pglockstat if missing), grant it search permission (o+x) on
#     the parents of the current directory that lack it (a checkout under
#     /root, say), saying so, make the directories listed in
#     AS_USER_WRITABLE exist and belong to it (chown -R), check that it can
#     reach the current directory, and exec the command as that user with
#     setpriv (its uid, gid and groups; no capabilities).  The environment is
#     passed through unchanged, PATH included, except HOME=/var/lib/pglockstat,
#     USER=LOGNAME=pglockstat, SHELL=<the user's shell> and PG_CACHE_DIR:
#     a build cache that root chose (scripts/build-server.sh) is root's, and
#     the user cannot write it, so the servers that the command builds as
#     the user (make run's variants, t/036) go to a cache of its own inside
#     it, PG_CACHE_DIR=<root's PG_CACHE_DIR>/as-pglockstat, created and
#     given to the user: emptying root's cache empties both.  Without
#     PG_CACHE_DIR the user's builds go to its default cache
#     (/var/lib/pglockstat/.cache/pg_lockstat).
#
#     setpriv execs the command in place: it keeps this process's pid, and
#     a signal sent to it (kill, or Ctrl-C to the process group) reaches the
#     command itself, whose traps can clean up.  runuser instead stays as a
#     root parent that ignores SIGINT sent to it alone and SIGKILLs the
#     command 2 seconds after passing on a SIGTERM.
#
# Usage: as-user.sh <command> [args...]
# Environment:
#   AS_USER_WRITABLE  optional, space-separated directories that the command
#                     must be able to write (created if missing); only
#                     used as root
#   AS_USER_NAME      optional, the user to run as (default pglockstat)
# Output: whatever the command prints; this script's own messages go to
#   stderr.
# Exit status: the command's exit status; 1 if the user cannot be set up or
#   cannot reach the current directory; 2 usage error.
#
set -euo pipefail

me=as-user
die() { echo "$me: $*" >&2; exit 1; }

if [ $# -eq 0 ]; then
	echo "usage: $0 <command> [args...]" >&2
	exit 2
fi

if [ "$(id -u)" -ne 0 ]; then
	exec "$@"
fi

user=${AS_USER_NAME:-pglockstat}
home=/var/lib/$user

# --- the user ----------------------------------------------------------------
if ! getent passwd "$user" >/dev/null; then
	echo "$me: creating system user $user (home $home)" >&2
	if ! useradd --system --create-home --home-dir "$home" --shell /bin/bash "$user"; then
		# Another run may have created it at the same time.
		getent passwd "$user" >/dev/null ||
			die "step 'create user': useradd $user failed"
	fi
fi
home=$(getent passwd "$user" | cut -d: -f6)
if [ ! -d "$home" ]; then
	if ! mkdir -p "$home" || ! chown "$user": "$home"; then
		die "step 'create user': cannot create the home directory $home of $user"
	fi
fi

# --- reaching the checkout ------------------------------------------------------
# A checkout under /root (mode 700) is out of the user's reach.  Grant search
# permission (o+x: enter, not list) on each parent directory that lacks it,
# and say so.
reach_dir() {
	local target=$1 dir
	dir=$target
	while [ "$dir" != / ]; do
		dir=$(dirname "$dir")
		if ! runuser -u "$user" -- test -x "$dir"; then
			echo "$me: granting search permission on $dir to other users (chmod o+x), so that $user can reach $target" >&2
			chmod o+x "$dir" || die "step 'reach checkout': chmod o+x $dir failed"
		fi
	done
}
reach_dir "$(pwd -P)"

# --- writable directories -------------------------------------------------------
for dir in ${AS_USER_WRITABLE:-}; do
	mkdir -p "$dir" || die "step 'writable dirs': cannot create $dir"
	abs=$(cd "$dir" && pwd -P)
	# Refuse to hand over / or a top-level directory such as /tmp or /home.
	case "$abs" in
	/|/*/*) ;;
	*) abs=/ ;;
	esac
	[ "$abs" != / ] ||
		die "step 'writable dirs': refusing to chown '$dir' to $user (AS_USER_WRITABLE='$AS_USER_WRITABLE')"
	chown -R "$user": "$abs" || die "step 'writable dirs': chown -R $user $abs failed"
	if ! runuser -u "$user" -- test -w "$abs" -a -x "$abs"; then
		die "step 'writable dirs': $abs belongs to $user but $user cannot reach it; its parent directories must be searchable (chmod o+x) by $user"
	fi
done

# --- the build cache ------------------------------------------------------------
# root's PG_CACHE_DIR holds root's builds; the user gets a directory of its
# own inside it (see above)
if [ -n "${PG_CACHE_DIR:-}" ]; then
	mkdir -p "$PG_CACHE_DIR" || die "step 'build cache': cannot create $PG_CACHE_DIR"
	usercache=$(cd "$PG_CACHE_DIR" && pwd -P)/as-$user
	if ! mkdir -p "$usercache" || ! chown "$user": "$usercache"; then
		die "step 'build cache': cannot create $usercache for $user"
	fi
	if ! runuser -u "$user" -- test -w "$usercache" -a -x "$usercache"; then
		die "step 'build cache': $user cannot write $usercache; the directories above it must be searchable (chmod o+x) by $user"
	fi
	PG_CACHE_DIR=$usercache
	export PG_CACHE_DIR
fi

# --- the current directory ------------------------------------------------------
# An absolute path, so that the search permission of every parent counts.
cwd=$(pwd -P)
if ! runuser -u "$user" -- test -r "$cwd" -a -x "$cwd"; then
	die "step 'check access': user $user cannot read $cwd.  The checkout and all of its parent directories must be readable and searchable by $user (e.g. chmod o+rx on each, or clone into a directory such as /tmp or /srv)"
fi
case "$1" in
*/*)
	if ! runuser -u "$user" -- test -x "$1"; then
		die "step 'check access': user $user cannot execute $1 (check the permissions of the file and of its parent directories)"
	fi
	;;
esac

shell=$(getent passwd "$user" | cut -d: -f7)
exec setpriv --reuid="$(id -u "$user")" --regid="$(id -g "$user")" --init-groups \
	--inh-caps=-all -- env HOME="$home" USER="$user" LOGNAME="$user" \
	SHELL="${shell:-/bin/sh}" PATH="$PATH" "$@"
