# Copyright (c) 2026, pg_lockstat developers
#
# Backends stopped at a gdb breakpoint, for pg_lockstat's TAP tests: gdb
# attached to the backend of a session (t/006, t/021, t/027, t/054, t/055), and
# the stall of a spin waiter at the end of its wait (t/021, t/026).  A test
# that needs gdb skips for the reason that gdb_unavailable() gives.

package LockStatTest::Gdb;

use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Utils ();

use LockStatTest;
use LockStatTest::Arch;

# gdb, for the tests that stop a backend at a breakpoint: its path, or
# undef.  scripts/deps.sh installs it (as root; otherwise it prints the
# command), so a test that needs it skips only for a user who did not.
sub gdb_path
{
	my $gdb = `command -v gdb 2>/dev/null`;
	chomp $gdb;
	return $gdb eq '' ? undef : $gdb;
}

# Why the tests that stop a backend at a gdb breakpoint cannot run here, or
# undef if they can: gdb missing (only a user who did not run make as root
# lacks it), or a server under qemu-user emulation, where gdb would debug
# the emulator rather than the guest's code.
sub gdb_unavailable
{
	return LockStatTest::tool_missing(
		'gdb is not installed (as root: apt-get install gdb)')
	  unless gdb_path();
	my $arch = LockStatTest::Arch::guest_arch();
	return "the server runs under qemu-user emulation ($arch): gdb would attach to the emulator, not to the guest's server code"
	  if defined $arch;
	return undef;
}

# Attach gdb to the backend of background session $h, set a breakpoint at
# $location and let the backend go on.  Returns the debugger; gdb_wait()
# waits for its output, gdb_send() gives it a command, gdb_detach() ends it.
# The bound on every wait is the TAP timeout (a hang, not a slow machine).
# $pid, the backend's PID, is asked of the session unless given (a session
# that is running a command cannot answer).
sub gdb_attach
{
	my ($h, $location, $pid) = @_;
	my $gdb = gdb_path() or die 'gdb is not installed';
	my %g = (in => '', out => '');
	$pid //= $h->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	$g{timer} = IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
	$g{run} = IPC::Run::start(
		[ $gdb, '-q', '-nx', '-p', $pid ],
		'<' => \$g{in},
		'>&' => \$g{out},
		$g{timer});
	# a cancel or statement timeout that reaches the stopped backend is
	# passed on to it, not taken by gdb
	$g{in} .= "set breakpoint pending on\nset pagination off\n"
	  . "handle SIGINT SIGALRM SIGUSR1 nostop noprint pass\n"
	  . "break $location\ncontinue\n";
	my $seen = gdb_wait(\%g, qr/Continuing/);
	die "gdb set no breakpoint at $location:\n$seen"
	  unless $seen =~ /Breakpoint 1 at/;
	return \%g;
}

# Wait until gdb's output since the last wait matches $re; returns that
# output up to the match.
sub gdb_wait
{
	my ($g, $re) = @_;
	$g->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
	# A breakpoint on a line of code that the compiler inlined into several
	# functions has a location in each, and gdb (13 and later) names the
	# location it stopped at: "Breakpoint 1.2, ...".  Callers match
	# "Breakpoint 1, ...", whichever location it was.
	for (;;)
	{
		$g->{out} =~ s/\bBreakpoint (\d+)\.\d+,/Breakpoint $1,/g;
		if ($g->{out} =~ $re)
		{
			# @+ is the match's, within this block only
			my $seen = substr($g->{out}, 0, $+[0]);
			$g->{out} = substr($g->{out}, $+[0]);
			return $seen;
		}
		$g->{run}->pump;
	}
}

# Give gdb a command, and wait for output matching $re if given; returns
# that output (gdb_wait()), or '' without $re.
sub gdb_send
{
	my ($g, $cmd, $re) = @_;
	$g->{in} .= "$cmd\n";
	return defined $re ? gdb_wait($g, $re) : '';
}

# Remove the breakpoints, let the backend go on and end gdb.
sub gdb_detach
{
	my ($g) = @_;
	$g->{in} .= "delete\ndetach\nquit\n";
	$g->{run}->finish;
	return;
}

# Debugger stalls of a spin waiter at the end of its wait, for the tests of
# the reset protocol (t/021, t/026).

# The line of the patched s_lock.c that matches $pattern, among the lines
# that the last patch of the server's series (LockStatTest::patch_dir)
# touching s_lock.c adds: its hunks count the lines of the file as that
# patch leaves it, which is the final file.
sub s_lock_line
{
	my ($pattern) = @_;
	my ($last) = grep {
		my $f = $_;
		open(my $fh, '<', $f) or die $!;
		my $touches = grep { m{^\+\+\+ b/src/backend/storage/lmgr/s_lock\.c} } <$fh>;
		close $fh;
		$touches;
	} reverse sort glob(LockStatTest::patch_dir() . '/*.patch');
	die 'no patch touches s_lock.c' unless $last;

	open(my $fh, '<', $last) or die $!;
	my ($in, $n) = (0, 0);
	while (<$fh>)
	{
		if (/^\+\+\+ b\/(\S+)/) { $in = $1 eq 'src/backend/storage/lmgr/s_lock.c'; next; }
		next unless $in;
		if (/^@@ -\d+(?:,\d+)? \+(\d+)/) { $n = $1; next; }
		next if /^-/;
		if (/^[+ ]/)
		{
			if (/^\+/ && /$pattern/) { close $fh; return $n; }
			$n++;
		}
	}
	close $fh;
	die "$pattern not found among the lines that $last adds to s_lock.c";
}

# A waiter session of $node waits once for the test spinlock, which a holder
# session that is not counted keeps taken (LockStatTest::hold_spinlock)
# until the waiter spins, and gdb stops the waiter at line $line of s_lock.c
# once it has the spinlock and its wait ends (the breakpoint's line must be
# on that path).
# gdb is attached before the holder takes the spinlock, so the hold lasts
# only from the holder's start to the waiter's first spin, whatever the
# speed of the machine.  Returns the stall: its gdb (gdb_attach), holder,
# waiter, and hit, gdb's line that reports the breakpoint.  The waiter then
# holds the test spinlock until release_waiter().
sub stall_waiter
{
	my ($node, $line) = @_;
	my %st;

	$st{waiter} = $node->background_psql('postgres');
	$st{g} = gdb_attach($st{waiter}, "s_lock.c:$line");
	$st{holder} = LockStatTest::hold_spinlock($node);
	my $since = LockStatTest::spin_waits($node);
	$st{waiter}->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_spinlock(1, 0);\n");
	LockStatTest::wait_for_spin_waiters($node, $since, 1, release => 1);
	$st{hit} = gdb_wait($st{g}, qr/Breakpoint 1,[^\n]*\n/);
	$st{hit} =~ s/.*(Breakpoint 1,)/$1/s;
	return \%st;
}

# Let the stalled waiter go on (it releases the test spinlock), and end gdb.
sub release_waiter
{
	my ($st) = @_;
	gdb_detach($st->{g});
	return;
}

# End the sessions of a stall, after release_waiter().
sub end_stall
{
	my ($st) = @_;
	$st->{waiter}->quit;
	$st->{holder}->quit;
	return;
}

1;
