# Copyright (c) 2026, pg_lockstat developers
#
# pg_lockstat_top run step by step, for its TAP tests (t/013, t/053): the
# program gated between its samples, and sessions that make blocked calls
# on the lockstat_test LWLock between two samples.

package LockStatTest::Top;

use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Utils ();

use LockStatTest;

# pg_lockstat_top run step by step, whatever its interval and the machine's
# speed.  Each sample of the program reads pg_lockstat_status (the time,
# stats_reset) and then the counters (pg_lwlock_stats first) in one
# transaction (tools/pg_lockstat_top/sample.c).  A gate session holds one of
# those views in ACCESS EXCLUSIVE mode, so that the next sample waits for it
# in pg_stat_activity (wait_event_type "Lock") at that point:
#   'sample':   pg_lockstat_status: before the sample reads anything;
#   'counters': pg_lwlock_stats: after its time and stats_reset, before its
#               counters.
# start_gated_top() starts $top with @args (its application_name is
# pg_lockstat_top_gated) and returns once its first sample, the baseline,
# waits at the 'sample' gate.  gated_top_pass($t, $next) lets the waiting
# sample go on and, unless $next is undef, returns once the following
# sample waits at gate $next: what the test does between two calls happens
# between those two samples.  The gate behind the sample let through is
# closed before it goes: a second session asks for the lock on
# pg_lockstat_status and waits in the queue behind the sample, which gets
# it first and keeps it to its end; so when that lock is granted the sample
# has ended, and a Lock wait seen after that is the next sample's.
# finish_gated_top($t) waits for the program's end (after the last pass,
# with $next undef, -n must be reached) and returns its exit code, stdout
# and stderr.
sub start_gated_top
{
	my ($node, $top, @args) = @_;
	my $t = { stdout => '', stderr => '' };
	return start_gated($node, $t, [ $top, @args ],
		'<' => \undef,
		'>' => \$t->{stdout},
		'2>' => \$t->{stderr});
}

# The same on a terminal of $rows by $cols: $top runs on a pseudo-terminal
# whose window size stty sets before it starts (IO::Pty is needed), and
# what it draws collects in $t->{stdout}; see screen().
sub start_gated_screen
{
	my ($node, $top, $rows, $cols, @args) = @_;
	my $t = { stdout => '', stderr => '', keys => '' };
	return start_gated(
		$node, $t,
		[
			'sh', '-c', 'stty rows "$1" cols "$2" && shift 2 && exec "$@"',
			'sh', $rows, $cols, $top, @args
		],
		'<pty<' => \$t->{keys},
		'>pty>' => \$t->{stdout});
}

# The last screen that pg_lockstat_top drew in $text, the output of a
# program run on a terminal: the lines of its last full redraw (from the
# cursor's move home to the clear below), escape sequences and carriage
# returns removed.
sub screen
{
	my ($text) = @_;
	my @frames = $text =~ /\e\[H((?:(?!\e\[H).)*?)\e\[J/sg;
	return () unless @frames;
	my $frame = $frames[-1] =~ s/\e\[[0-9;?]*[A-Za-z]//gr =~ s/\r//gr;
	return split /\n/, $frame;
}

# start_gated_top() and start_gated_screen(): start command @$cmd with the
# IPC::Run redirections @io, and its gates.
sub start_gated
{
	my ($node, $t, $cmd, @io) = @_;
	$t->{at} = 'sample';
	($t->{ctl}) = LockStatTest::lasting_session($node);
	foreach my $gate ('a', 'b', 'counters')
	{
		($t->{$gate}, $t->{"${gate}_pid"}) =
		  LockStatTest::lasting_session($node);
	}
	$t->{held} = 'a';
	$t->{a}->query_safe(
		'BEGIN; LOCK TABLE pg_lockstat_status IN ACCESS EXCLUSIVE MODE;');
	$t->{timer} = IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
	{
		local $ENV{PGAPPNAME} = 'pg_lockstat_top_gated';
		$t->{run} = IPC::Run::start($cmd, @io, $t->{timer});
	}
	gated_top_wait($t);
	return $t;
}

# Wait until the sample of gated pg_lockstat_top $t waits at the closed
# gate; dies at once if the program has ended.
sub gated_top_wait
{
	my ($t) = @_;
	LockStatTest::poll_session(
		$t->{ctl},
		q{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE application_name = 'pg_lockstat_top_gated'
		    AND wait_event_type = 'Lock'},
		"pg_lockstat_top did not reach the '$t->{at}' gate",
		sub {
			$t->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
			$t->{run}->pump_nb;
			die "pg_lockstat_top ended before the '$t->{at}' gate:\n"
			  . "$t->{stdout}$t->{stderr}"
			  unless $t->{run}->pumpable;
		});
	return;
}

# Let the sample of gated pg_lockstat_top $t that waits at the gate go on;
# unless $next is undef, return once the following sample waits at gate
# $next ('sample' or 'counters'), see start_gated_top().
sub gated_top_pass
{
	my ($t, $next) = @_;
	my $lock = 'BEGIN; LOCK TABLE %s IN ACCESS EXCLUSIVE MODE;';
	die "unknown gate $next"
	  if defined $next && $next ne 'sample' && $next ne 'counters';

	# the gate behind the waiting sample: queued after it
	my $behind;
	if (defined $next)
	{
		$behind = $t->{held} eq 'a' ? 'b' : 'a';
		$t->{$behind}->query_until(qr/gate queued/,
			"\\echo gate queued\n"
			  . sprintf($lock, 'pg_lockstat_status')
			  . "\n\\echo gate closed\n");
		LockStatTest::poll_session($t->{ctl},
			qq{SELECT wait_event_type = 'Lock' FROM pg_stat_activity
			   WHERE pid = $t->{"${behind}_pid"}},
			'the next gate did not queue for its lock');
	}

	# let the waiting sample go on
	if ($t->{at} eq 'counters')
	{
		$t->{counters}->query_safe('COMMIT');
	}
	else
	{
		$t->{ $t->{held} }->query_safe('COMMIT');
	}
	$t->{held} = '';
	if (!defined $next)
	{
		$t->{at} = 'open';
		return;
	}

	# the sample has ended once the gate behind it holds its lock
	$t->{$behind}->query_until(qr/gate closed/, '');
	$t->{held} = $behind;
	if ($next eq 'counters')
	{
		$t->{counters}->query_safe(sprintf($lock, 'pg_lwlock_stats'));
		$t->{$behind}->query_safe('COMMIT');
		$t->{held} = '';
	}
	$t->{at} = $next;
	gated_top_wait($t);
	return;
}

# After the last gated_top_pass($t, undef): wait for the end of
# pg_lockstat_top $t and its gate sessions; returns its exit code, stdout
# and stderr.
sub finish_gated_top
{
	my ($t) = @_;
	die 'pg_lockstat_top still waits at a gate' unless $t->{at} eq 'open';
	$t->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
	$t->{run}->finish;
	$_->quit foreach @$t{qw(ctl a b counters)};
	return ($t->{run}->result(0), $t->{stdout}, $t->{stderr});
}

# Sessions that make blocked calls on the lockstat_test LWLock on demand, in
# a few round trips and with no new connection, for tests that repeat them
# between the samples of gated_top_pass(): a holder, one waiter session for
# each entry of @sets (SET commands that it runs first, '' for none) and a
# control session.  lwlock_block($b) returns once every waiter sleeps behind
# the holder, lwlock_unblock($b) once the holder has let go and each
# waiter's call has returned.  A round counts in tranche lockstat_test one
# exclusive acquisition (the holder's, at lwlock_block) and, per waiter, one
# shared acquisition and one blocked call (at lwlock_unblock); a waiter's
# call is "SELECT lockstat_test_lwlock('shared', 1, 0)" (its normalized
# text in pg_stat_statements: lockstat_test_lwlock($1, $2, $3)).
# lwlock_blocker_modes($b, $hold, $wait) changes the holder's mode and the
# waiters' from 'exclusive' and 'shared'.  lwlock_blocker_quit($b) ends the
# sessions.
sub lwlock_blocker
{
	my ($node, @sets) = @_;
	my $b = {
		waiters => [],
		waiter_pids => [],
		hold_mode => 'exclusive',
		wait_mode => 'shared'
	};
	($b->{ctl}) = LockStatTest::lasting_session($node);
	($b->{holder}, $b->{holder_pid}) = LockStatTest::lasting_session($node);
	foreach my $set (@sets)
	{
		my ($h, $pid) = LockStatTest::lasting_session($node);
		$h->query_safe($set) if $set ne '';
		push @{ $b->{waiters} }, $h;
		push @{ $b->{waiter_pids} }, $pid;
	}
	return $b;
}

# Let the holder of lwlock_blocker() $b hold the lock in mode $hold and its
# waiters ask for it in mode $wait ('shared' or 'exclusive') from the next
# lwlock_block($b) on.  With a shared holder and exclusive waiters a round is
# a convoy: the holder's release wakes one waiter, whose release wakes the
# next, and so on, each waiter having got the lock by being woken.
sub lwlock_blocker_modes
{
	my ($b, $hold, $wait) = @_;
	$b->{hold_mode} = $hold;
	$b->{wait_mode} = $wait;
	return;
}

# Make the waiters of lwlock_blocker() $b sleep behind its holder: returns
# once they all wait for the lockstat_test LWLock.
sub lwlock_block
{
	my ($b) = @_;
	my $n = scalar(@{ $b->{waiters} });
	my $pids = join(', ', @{ $b->{waiter_pids} });

	$b->{holder}->query_until(qr/hold started/,
		"\\echo hold started\nSELECT lockstat_test_lwlock_hold('$b->{hold_mode}');\n"
		  . "\\echo hold ended\n");
	LockStatTest::poll_session($b->{ctl},
		qq{SELECT count(*) = 1 FROM pg_stat_activity
		   WHERE pid = $b->{holder_pid} AND wait_event_type = 'Extension'},
		'the holder did not take the lockstat_test LWLock');
	foreach my $h (@{ $b->{waiters} })
	{
		$h->query_until(qr/call started/,
			"\\echo call started\nSELECT lockstat_test_lwlock('$b->{wait_mode}', 1, 0);\n"
			  . "\\echo call ended\n");
	}
	LockStatTest::poll_session($b->{ctl},
		qq{SELECT count(*) = $n FROM pg_stat_activity
		   WHERE pid IN ($pids) AND wait_event = 'lockstat_test'},
		"$n waiters did not block on the lockstat_test LWLock");
	return;
}

# End the block of lwlock_block($b): returns once the holder has let go and
# every waiter's call has returned, its blocked call counted.
sub lwlock_unblock
{
	my ($b) = @_;
	$b->{ctl}->query_safe('SELECT lockstat_test_release()');
	$b->{holder}->query_until(qr/hold ended/, '');
	$_->query_until(qr/call ended/, '') foreach @{ $b->{waiters} };
	return;
}

# End the sessions of lwlock_blocker() $b (after lwlock_unblock).
sub lwlock_blocker_quit
{
	my ($b) = @_;
	$_->quit foreach ($b->{ctl}, $b->{holder}, @{ $b->{waiters} });
	return;
}

1;
