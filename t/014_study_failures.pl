# Copyright (c) 2026, pg_lockstat developers
#
# How the study harness behind "make run" (bench/lockstudy) fails.  A
# failing step (initdb, server start, pgbench, recording the counters) or a
# bad PG_CONFIG ends with exit status 1 and "lockstudy: error: <step>
# failed"; an interrupt stops a running pgbench at once and exits 130
# (SIGINT, to the process group as Ctrl-C sends it or to the script alone)
# or 143 (SIGTERM).  Every time, no server or pgbench is left running, the
# data directory is removed, the logs stay and the lock is free: a second
# study during a run is refused, naming the running one, and the study
# after all these failures runs.  A failing gnuplot is only a warning.
# The studies run without the warm-up round (WARMUP_ROUND=0), so that each
# step fails where it names round 1, but for two of the warm-up round: a
# run of it that fails, and an interrupt during it.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;
use Cwd qw(getcwd);
use Fcntl qw(:flock);
use POSIX ();
use Time::HiRes qw(usleep);
use LockStatTest;

my $top = getcwd();
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my $run_dir = PostgreSQL::Test::Utils::tempdir;
my @env = (
	"PG_CONFIG=$pg_config", "RUN_DIR=$run_dir", 'SCALE=1',
	'STRATEGIES=default', 'CLIENTS=1', 'DURATION=1', 'REPEAT=1', 'WARMUP=0',
	'WARMUP_ROUND=0');

# The harness takes workloads from its own bench/workloads only: a copy of
# the tree (symbolic links) whose bench/workloads also has failing scripts.
my $fake_top = PostgreSQL::Test::Utils::tempdir;
mkdir("$fake_top/bench") or die;
mkdir("$fake_top/bench/workloads") or die;
symlink("$top/bench/lockstudy", "$fake_top/bench/lockstudy") or die;
symlink("$top/$_", "$fake_top/$_") or die foreach ('scripts', 'patches');
foreach my $w (glob("$top/bench/workloads/*.sql"))
{
	symlink($w, "$fake_top/bench/workloads/" . (split m{/}, $w)[-1]) or die;
}
append_to_file("$fake_top/bench/workloads/divzero.sql",
	"-- fails at its first statement\nSELECT 1/0;\n");
append_to_file("$fake_top/bench/workloads/dropext.sql",
	"-- pgbench succeeds, then recording pg_lwlock_stats fails\n"
	  . "DROP EXTENSION IF EXISTS pg_lockstat;\n");

# Processes, zombies excepted (a zombie has exited), from /proc: pid =>
# [ppid, command line].
sub processes
{
	my %p;
	opendir(my $d, '/proc') or die "/proc: $!";
	foreach my $pid (grep { /^\d+$/ } readdir($d))
	{
		open(my $f, '<', "/proc/$pid/stat") or next;
		my $stat = <$f>;
		close($f);
		next unless defined $stat;
		my ($state, $ppid) = $stat =~ /\) (\S) (\d+)/ or next;
		next if $state eq 'Z' || $state eq 'X';
		open($f, '<', "/proc/$pid/cmdline") or next;
		my $cmd = do { local $/; <$f> } // '';
		close($f);
		$cmd =~ s/\0/ /g;
		$p{$pid} = [ $ppid, $cmd ];
	}
	closedir($d);
	return \%p;
}

sub alive { my $p = processes(); return exists $p->{ $_[0] }; }

# Wait until $pid has exited (a zombie has), or the TAP timeout has passed:
# a process that the script stopped may still be on its way out when the
# script exits.  True if it has exited.
sub gone
{
	my ($pid) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	usleep(50_000) while alive($pid) && time() < $deadline;
	return !alive($pid);
}

# Command lines of running processes that name $run_dir (the postmaster's
# -D) or $fake_top (pgbench -f of a workload), once there are none or the
# TAP timeout has passed: the server's processes may still be exiting when
# the script that stopped the server exits.
sub left_running
{
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (1)
	{
		my $p = processes();
		my @left = grep { /\Q$run_dir\E|\Q$fake_top\E/ }
		  map { $p->{$_}[1] } grep { $_ != $$ } keys %$p;
		return @left if !@left || time() >= $deadline;
		usleep(50_000);
	}
}

sub lock_free
{
	open(my $fh, '>>', "$run_dir/.lock") or die "$run_dir/.lock: $!";
	my $free = flock($fh, LOCK_EX | LOCK_NB);
	close($fh);
	return $free;
}

sub studies { return glob("$run_dir/2*"); }

# Run a study to its end, with the package of the checkout $top (the real
# one, or the copy with failing workloads): (exit status, stdout, stderr,
# its directory).
sub run_study
{
	my ($package_top, @more) = @_;
	my %before = map { $_ => 1 } studies();
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'env', @env, @more, LockStatTest::study_command($package_top), 'run' ],
		'<', \undef, '>', \$out, '2>', \$err);
	my $status = $? >> 8;
	my ($dir) = grep { !$before{$_} } studies();
	return ($status, $out, $err, $dir);
}

# What every failure leaves: nothing running, no data directory, the logs,
# a free lock.
sub left_clean
{
	my ($what, $dir, @logs) = @_;
	is(join("\n", left_running()), '', "$what: no server or pgbench left running");
	ok(defined $dir && !-e "$dir/data", "$what: the data directory is removed");
	ok(defined $dir && -s "$dir/$_", "$what: $_ is kept") foreach @logs;
	ok(lock_free(), "$what: the lock is released");
}

my ($status, $out, $err, $dir);

# --- parameter: a PG_CONFIG that cannot be run -------------------------------
($status, $out, $err) = run_study($top, 'PG_CONFIG=/nonexistent/pg_config');
is($status, 1, 'a PG_CONFIG that cannot be run: exit status 1');
like($err, qr/^lockstudy: error: PG_CONFIG="\/nonexistent\/pg_config" cannot be run/m,
	'the message names PG_CONFIG');
is(scalar(my @none = studies()), 0, 'nothing is started');

# --- initdb fails (a locale that does not exist) -------------------------------
($status, $out, $err, $dir) =
  run_study($top, 'LC_ALL=xx_XX.nonexistent', 'LANG=xx_XX.nonexistent');
is($status, 1, 'initdb fails: exit status 1');
like($err, qr/^lockstudy: error: initdb failed \(exit status 1\); see \S+initdb\.log$/m,
	'initdb fails: the message names the step');
like($err, qr/^    initdb: error: invalid locale settings/m, 'and quotes the reason');
left_clean('initdb fails', $dir, 'initdb.log');

# --- the server does not start -------------------------------------------------
# max_connections is CLIENTS + 10, and the server accepts at most 262143
($status, $out, $err, $dir) = run_study($top, 'CLIENTS=300000');
is($status, 1, 'the server does not start: exit status 1');
like($err, qr/^lockstudy: error: server start \(setup\) failed; see \S+server\.log$/m,
	'the server does not start: the message names the step');
like($err, qr/^    .*"max_connections"/m, 'and quotes the server log');
left_clean('the server does not start', $dir, 'server.log', 'initdb.log');

# --- pgbench fails -------------------------------------------------------------
($status, $out, $err, $dir) = run_study($fake_top, 'WORKLOAD=divzero');
is($status, 1, 'pgbench fails: exit status 1');
like($err,
	qr/^lockstudy: error: pgbench \(variant default, 1 clients, round 1\) failed \(exit status 2\); see \S+pgbench-default-1-1\.log$/m,
	'pgbench fails: the message names the step and the round');
like($err, qr/^    pgbench: error: .*division by zero/m, 'and quotes the error');
left_clean('pgbench fails', $dir, 'pgbench-default-1-1.log', 'server.log');
like(slurp_file("$dir/server.log"), qr/received immediate shutdown request/,
	'pgbench fails: the running server was stopped (immediate shutdown)');

# --- the warm-up run fails ------------------------------------------------------
($status, $out, $err, $dir) =
  run_study($fake_top, 'WORKLOAD=divzero', 'WARMUP=1');
is($status, 1, 'the warm-up run fails: exit status 1');
like($err,
	qr/^lockstudy: error: pgbench \(variant default, warm-up, round 1\) failed \(exit status 2\); see \S+pgbench-default-warmup-1\.log$/m,
	'the warm-up run fails: the message names the step and the round');
left_clean('the warm-up run fails', $dir, 'pgbench-default-warmup-1.log', 'server.log');

# --- a run of the warm-up round fails ------------------------------------------
($status, $out, $err, $dir) =
  run_study($fake_top, 'WORKLOAD=divzero', 'WARMUP_ROUND=1');
is($status, 1, 'a run of the warm-up round fails: exit status 1');
like($err,
	qr/^lockstudy: error: pgbench \(variant default, 1 clients, warm-up round\) failed \(exit status 2\); see \S+pgbench-default-1-0\.log$/m,
	'a run of the warm-up round fails: the message names the step and the warm-up round');
left_clean('a run of the warm-up round fails', $dir, 'pgbench-default-1-0.log', 'server.log');
ok(defined $dir && !-e "$dir/runs.csv", 'a run of the warm-up round fails: no runs.csv');

# --- recording the counters (psql) fails ---------------------------------------
($status, $out, $err, $dir) = run_study($fake_top, 'WORKLOAD=dropext');
is($status, 1, 'recording the counters fails: exit status 1');
like($err, qr/^ERROR:  relation "pg_lwlock_stats" does not exist/m, 'psql says why');
like($err,
	qr/^lockstudy: error: recording the results \(variant default, 1 clients, round 1\) failed$/m,
	'recording the counters fails: the message names the step');
left_clean('recording the counters fails', $dir, 'server.log');

# --- interrupted while pgbench runs --------------------------------------------
# $how: 'group' signals the process group (Ctrl-C in a terminal), 'script'
# the script alone, whose pgbench, started in the background, does not get
# it.  pgbench would run for an hour: the study must stop it at once.
sub interrupt
{
	my ($sig, $how, $expect, $round, @more) = @_;
	my $what = "SIG$sig to the " . ($how eq 'group' ? 'process group' : 'script alone')
	  . " ($round)";
	my %before = map { $_ => 1 } studies();
	my ($sout, $serr) = ('', '');
	# a bound on a hang, restarted for the end of the study below
	my $timer = IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
	my $h = IPC::Run::start(
		[ 'env', @env, 'DURATION=3600', @more, LockStatTest::study_command($top), 'run' ],
		'<', \undef, '>', \$sout, '2>', \$serr,
		init => sub {
			# a process group of its own, and signals as a terminal has them
			POSIX::setsid();
			$SIG{$_} = 'DEFAULT' foreach qw(INT TERM HUP QUIT);
			POSIX::sigprocmask(POSIX::SIG_SETMASK(), POSIX::SigSet->new());
		},
		$timer);

	# the script's pid is in the lock file; wait for its benchmark pgbench
	my ($pid, $pgbench, $dir);
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (time() < $deadline && !defined $pgbench && $h->pumpable)
	{
		eval { $h->pump_nb; };
		($dir) = grep { !$before{$_} } studies();
		$pid = $1 if !defined $pid && -s "$run_dir/.lock" && slurp_file("$run_dir/.lock") =~ /^(\d+)$/m
		  && $dir;
		if (defined $pid)
		{
			my $p = processes();
			($pgbench) = grep {
				$p->{$_}[0] == $pid && $p->{$_}[1] =~ /^pgbench -n .* -T 3600 -P 1 postgres/
			} keys %$p;
		}
		usleep(50_000) unless defined $pgbench;
	}
	ok(defined $pgbench, "$what: pgbench runs")
	  or do { $h->kill_kill; diag($serr); return; };
	my ($postmaster) = slurp_file("$dir/data/postmaster.pid") =~ /^(\d+)/;

	if ($how eq 'group')
	{
		# meanwhile, a second study is refused, naming the running one
		my ($st2, $out2, $err2) = run_study($top);
		is($st2, 1, 'a second study while one runs: exit status 1');
		like($err2, qr/^lockstudy: error: another make run is in progress \(pid $pid\)/m,
			'a second study while one runs: refused, naming the running one');
	}

	$timer->start($PostgreSQL::Test::Utils::timeout_default);
	kill($sig, $how eq 'group' ? -$pid : $pid) or die "kill $sig: $!";
	eval { $h->finish; };
	is($@, '', "$what: the study ends at once, without waiting for pgbench")
	  or $h->kill_kill;
	my $raw = $h->full_result(0);
	is(($raw & 127) ? "signal " . ($raw & 127) : "exit status " . ($raw >> 8),
		"exit status $expect", "$what: exit status $expect");
	like($serr, qr/^lockstudy: interrupted by SIG$sig during pgbench \(variant default, 1 clients, $round\); stopping$/m,
		"$what: says so, naming the step");
	ok(gone($pgbench), "$what: pgbench is stopped");
	ok(gone($postmaster), "$what: the server is stopped");
	left_clean($what, $dir, 'server.log');

	# if not, leave nothing behind for the next tests
	kill('KILL', $pgbench) if alive($pgbench);
	kill('QUIT', $postmaster) if alive($postmaster);
}

interrupt('INT', 'group', 130, 'round 1');
interrupt('INT', 'script', 130, 'round 1');
interrupt('TERM', 'script', 143, 'round 1');
interrupt('INT', 'script', 130, 'warm-up round', 'WARMUP_ROUND=1');

# --- after all that, a study runs; gnuplot failing is only a warning ----------
my $bin = PostgreSQL::Test::Utils::tempdir;
append_to_file("$bin/gnuplot", "#!/bin/sh\necho 'gnuplot: simulated failure' >&2\nexit 1\n");
chmod(0755, "$bin/gnuplot") or die;
($status, $out, $err, $dir) = run_study($top, "PATH=$bin:$ENV{PATH}");
is($status, 0, 'a study after the failures runs, and a failing gnuplot is not fatal')
  or diag($err);
like($err, qr/^lockstudy: warning: plotting tps\.png failed, no plot; see \S+gnuplot\.log$/m,
	'a failing gnuplot: a warning');
ok(-s "$dir/runs.csv" && !-e "$dir/tps.png", 'the CSVs are saved, no tps.png');
like($out, qr/^results: \S+ \(runs\.csv, points\.csv, persec\.csv, locks\.csv, spins\.csv, settings\.txt, /m,
	'the results line lists no plot');
left_clean('a successful study', $dir);

done_testing();
