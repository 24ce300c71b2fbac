#!/bin/bash
#
# arch-wrap.sh - make a cross-built (guest) PostgreSQL installation usable
# from this machine without binfmt_misc: its server runs under qemu-user,
# everything else is this machine's own program.
#
# Usage:
#   arch-wrap.sh <arch> <guest_dir> <native_dir>
#   arch-wrap.sh --triple <arch>      print the GNU triple (powerpc64le-linux-gnu)
#   arch-wrap.sh --packages <arch>    print the Debian packages it needs
#   arch-wrap.sh --qemu <arch>        print the qemu-user command line prefix
#
# <arch> is ppc64le or aarch64.  <guest_dir> is an installation made by
# scripts/build-server.sh with PG_ARCH=<arch>; <native_dir> is the native
# installation of the same PostgreSQL version (build/pg<major>).
#
# What it does to <guest_dir> (idempotent; run again after installing more
# guest programs, e.g. the extension's pg_lockstat_top):
#   - every guest executable bin/<name> (an ELF file of <arch>'s machine
#     type) is renamed bin/<name>.<arch>;
#   - postgres, pg_config and pg_lockstat_top become shell wrappers that run
#     bin/<name>.<arch> under qemu-<arch>-static -L /usr/<triple>, with
#     the wrapper's own path as the guest's argv[0]: the server records
#     that path in postmaster.opts, which "pg_ctl restart" runs again.  The
#     guest server finds its share/ and lib/ relative to bin/, as natively;
#     its postmaster forks children without exec, so one qemu process per
#     server process emulates the whole server;
#   - every other program of <native_dir>/bin (initdb, pg_ctl, psql,
#     pgbench, pg_dump, ...) is copied into bin/, with its run path set to
#     <native_dir>/lib by patchelf (its own $ORIGIN/../lib would find the
#     guest's libpq).  initdb and pg_ctl look for "postgres" next to
#     themselves, so they run the guest server: initdb's bootstrap runs
#     under emulation too;
#   - the PGXS pg_regress is replaced the same way by the native one;
#   - share/postgresql/timezone links to /usr/share/zoneinfo, the time
#     zone data the guest server was built to use, where the native initdb
#     looks for it;
#   - <guest_dir>/.pg_lockstat_arch holds <arch>, .pg_lockstat_native the
#     absolute <native_dir>: LockStatTest::Arch (t/LockStatTest/Arch.pm)
#     reads them.
# The native programs and the guest server talk over the Unix socket and
# the data directory only: both ends must be of the same PostgreSQL version
# (checked: initdb and pg_ctl compare "postgres -V" with their own), and
# the cluster files are the same on these little-endian LP64 machines.
#
# Exit status: 0 success; 1 failure (message names what failed); 2 usage.
#
set -euo pipefail

me='arch-wrap'
die() { echo "$me: $*" >&2; exit 1; }
usage() {
	echo "usage: $0 <arch> <guest_dir> <native_dir> | --triple|--packages|--qemu <arch>" >&2
	exit 2
}

# Per architecture: GNU triple, Debian's name for it, qemu-user binary, ELF
# e_machine (little-endian hex bytes at offset 18).
arch_facts() {
	case "$1" in
	ppc64le) triple=powerpc64le-linux-gnu debarch=ppc64el qemu=qemu-ppc64le-static machine="15 00" ;;
	aarch64) triple=aarch64-linux-gnu debarch=arm64 qemu=qemu-aarch64-static machine="b7 00" ;;
	*) die "unknown architecture '$1': it can be ppc64le or aarch64" ;;
	esac
}

case "${1:-}" in
--triple | --packages | --qemu)
	[ $# -eq 2 ] || usage
	arch_facts "$2"
	case "$1" in
	--triple) echo "$triple" ;;
	--packages) echo "gcc-$triple libc6-dev-$debarch-cross qemu-user-static patchelf tzdata" ;;
	--qemu) echo "$qemu -L /usr/$triple" ;;
	esac
	exit 0
	;;
esac
[ $# -eq 3 ] || usage
arch=$1
arch_facts "$arch"
guest=$(cd "$2" && pwd -P) || die "no guest installation $2"
native=$(cd "$3" && pwd -P) || die "no native installation $3"
[ "$guest" != "$native" ] || die "the guest and the native installation are the same directory $guest"
[ -d "$guest/bin" ] || die "$guest/bin does not exist"
[ -x "$native/bin/initdb" ] || die "$native/bin/initdb does not exist: $native is not a PostgreSQL installation"
command -v "$qemu" >/dev/null || die "$qemu is not installed (as root: apt-get install -y qemu-user-static)"
command -v patchelf >/dev/null || die "patchelf is not installed (as root: apt-get install -y patchelf)"

# The programs that run as guest programs under emulation.
guest_programs="postgres pg_config pg_lockstat_top"

elf_machine() {
	[ "$(od -An -tx1 -N4 "$1" 2>/dev/null | tr -d ' ')" = 7f454c46 ] || return 1
	od -An -tx1 -j18 -N2 "$1" | sed 's/^ *//'
}
is_guest_elf() { [ -f "$1" ] && [ "$(elf_machine "$1" || true)" = "$machine" ]; }

# <file> becomes <file>.<arch> if it is a guest program.
rename_guest() {
	if is_guest_elf "$1"; then
		mv -f "$1" "$1.$arch" || die "cannot rename $1"
	fi
}

# A copy of the native program $1 at $2 that loads the native libraries.
native_copy() {
	cp -f "$1" "$2.tmp" && patchelf --set-rpath "$native/lib" "$2.tmp" &&
		mv -f "$2.tmp" "$2" || die "cannot copy $1 to $2 with the run path $native/lib"
}

for f in "$guest"/bin/*; do
	case "$f" in *."$arch") continue ;; esac
	[ -L "$f" ] && continue
	rename_guest "$f"
done

for p in $guest_programs; do
	[ -f "$guest/bin/$p.$arch" ] || continue
	cat >"$guest/bin/$p.tmp" <<EOF
#!/bin/sh
# $p of PostgreSQL built for $arch, run under qemu-user (scripts/arch-wrap.sh)
exec $qemu -L /usr/$triple -0 "\$0" "\$(dirname "\$0")/$p.$arch" "\$@"
EOF
	chmod 755 "$guest/bin/$p.tmp"
	mv -f "$guest/bin/$p.tmp" "$guest/bin/$p"
done

for f in "$native"/bin/*; do
	name=$(basename "$f")
	case " $guest_programs " in *" $name "*) continue ;; esac
	[ ! -L "$f" ] && [ -f "$f" ] && [ -x "$f" ] && elf_machine "$f" >/dev/null || continue
	native_copy "$f" "$guest/bin/$name"
done

# The native initdb looks up the default time zone's name in
# share/postgresql/timezone; the guest server, built --with-system-tzdata,
# reads /usr/share/zoneinfo and has no such directory (initdb warned and
# chose GMT).
tzdir=$guest/share/postgresql/timezone
if [ ! -e "$tzdir" ]; then
	ln -s /usr/share/zoneinfo "$tzdir" || die "cannot link $tzdir to /usr/share/zoneinfo"
fi

regress=lib/postgresql/pgxs/src/test/regress/pg_regress
if [ -f "$guest/$regress" ]; then
	rename_guest "$guest/$regress"
	native_copy "$native/$regress" "$guest/$regress"
fi

printf '%s\n' "$arch" >"$guest/.pg_lockstat_arch"
printf '%s\n' "$native" >"$guest/.pg_lockstat_native"

# The guest server must start under emulation and be the version of the
# native programs.
want=$("$native/bin/postgres" -V) || die "$native/bin/postgres -V failed"
have=$("$guest/bin/postgres" -V) || die "$guest/bin/postgres -V failed under $qemu"
[ "$have" = "$want" ] ||
	die "the guest server is '$have' but the native programs are of '$want'"
echo "$me: $guest/bin runs $have for $arch under $qemu"
