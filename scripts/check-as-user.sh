#!/bin/bash
#
# check-as-user.sh - check, as root, what scripts/as-user.sh hands to the
# unprivileged user besides the command: a build cache it can write.
#
# The TAP tests run as that user, so they cannot see how root started
# them; .ci/run runs this check first, as root.  With PG_CACHE_DIR set to
# a new directory of root's (mode 755, as scripts/build-server.sh makes
# it), the command must run as the user with PG_CACHE_DIR=<it>/as-<user>,
# a directory the user owns and can create files in; without PG_CACHE_DIR
# it must get none.  (Before as-user.sh did this, a .ci/run with
# PG_CACHE_DIR failed in t/036: the user could not take the cache's lock
# to build a variant.)
#
# Usage: check-as-user.sh      (as root; not root: says so, exit status 0)
# Output: one line per check, "ok" or "not ok"; the reason on stderr.
# Exit status: 0 if every check passed or not root; 1 otherwise.
#
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
	echo "check-as-user: skipped, not root (as-user.sh only changes users as root)"
	exit 0
fi

user=${AS_USER_NAME:-pglockstat}
status=0
check() {
	if [ "$2" = "$3" ]; then
		echo "ok - $1"
	else
		echo "not ok - $1"
		echo "check-as-user: $1: got '$2', expected '$3'" >&2
		status=1
	fi
}

tmp=$(mktemp -d /var/tmp/check-as-user.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
cache=$tmp/cache
mkdir "$cache"

got=$(PG_CACHE_DIR=$cache scripts/as-user.sh sh -c \
	'echo "$(id -un) $PG_CACHE_DIR"; mkdir "$PG_CACHE_DIR/builds" && echo made') || true
check "the command runs as $user with a cache of its own inside root's" \
	"$(echo "$got" | head -n 1)" "$user $cache/as-$user"
check "$user can create a directory there" "$(echo "$got" | sed -n 2p)" made
check "the directory belongs to $user" \
	"$(stat -c %U "$cache/as-$user/builds" 2>/dev/null || echo missing)" "$user"
check "root's cache itself stays root's" "$(stat -c %U "$cache")" root

got=$(env -u PG_CACHE_DIR scripts/as-user.sh sh -c 'echo "${PG_CACHE_DIR-unset}"') || true
check "without PG_CACHE_DIR the command gets none" "$got" unset

exit $status
