# Copyright (c) 2026, pg_lockstat developers
#
# The installation of the server under test, for pg_lockstat's TAP tests:
# the files that the scripts which made it leave in it
# (scripts/build-server.sh: .pg_lockstat_build_src; scripts/arch-wrap.sh:
# .pg_lockstat_arch and .pg_lockstat_native), and so the architecture that
# the server runs on, this machine's own or a guest's under qemu-user
# emulation (make test-arch).

package LockStatTest::Arch;

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils ();

# <install>/$name, the install being the server under test's (the parent of
# its bindir).
sub install_file
{
	my ($name) = @_;
	my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
	my $bindir = `$pg_config --bindir`;
	die "cannot run $pg_config --bindir" if $? != 0;
	chomp $bindir;
	return "$bindir/../$name";
}

# The one line of <install>/$name, or undef if there is no such file.
sub install_marker
{
	my ($name) = @_;
	my $f = install_file($name);
	return undef unless -f $f;
	my $line = PostgreSQL::Test::Utils::slurp_file($f);
	chomp $line;
	return $line;
}

# The architecture of the server under test when it is a cross-built one
# run under qemu-user ("ppc64le", "aarch64"; scripts/arch-wrap.sh writes
# <install>/.pg_lockstat_arch), else undef: the machine's own.
sub guest_arch
{
	return install_marker('.pg_lockstat_arch');
}

# Under emulation, the native installation whose front-end programs run
# the guest server (<install>/.pg_lockstat_native), else undef.
sub native_install
{
	return install_marker('.pg_lockstat_native');
}

# The GNU triple that version() names for the server under test: the guest
# architecture's under emulation, else this machine's.
sub server_triple_re
{
	my %cpu = (ppc64le => 'powerpc64le');
	my $arch = guest_arch() // `uname -m`;
	chomp $arch;
	my $cpu = $cpu{$arch} // $arch;
	return qr/ on \Q$cpu\E-[a-z]+-linux-gnu,/;
}

1;
