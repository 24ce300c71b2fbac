# Copyright (c) 2026, pg_lockstat developers
#
# Faults in the middle of reads, resets and counting (SIGKILL is covered by
# 004, a cancel of a read that a debugger stopped in its sum by 006):
# - pg_cancel_backend() and pg_terminate_backend(), in 12 rounds at varying
#   delays, on sessions that loop over pg_lwlock_stats, loop over
#   pg_lockstat_reset() and pg_lockstat_status, run a long cross join of the
#   view, read it with \watch, or take the lockstat_test lock.  A cancelled
#   session reads and resets again at once; afterwards no session waits on
#   the pg_lockstat lock, pg_lockstat_reset() completes, and a fresh reader
#   gets exact counts for known lockstat_test acquisitions.
# - An immediate shutdown under such a load: the restart recovers, the views
#   work, stats_reset is later than the shutdown, counting starts from zero
#   and is exact, also with 4 concurrent writers that all slept behind a
#   holder of the lock.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use LockStatTest;

# many rows and slots, so that each read and reset takes a while
my $node = LockStatTest::new_node('faults',
	"pg_lockstat.max_tranches = 2048\nmax_connections = 100");

my $test_stats = q{SELECT coalesce(sum(sh_acquires), 0),
	coalesce(sum(ex_acquires), 0), coalesce(sum(blocks), 0)
	FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'};

# An underflow (a count below its reset's baseline) shows as a huge
# number: the view shows a uint64 above 2^63 as the largest bigint, never
# as a negative one.
my $insane = q{SELECT count(*) FROM pg_lwlock_stats
	WHERE sh_acquires > 1e15 OR ex_acquires > 1e15 OR blocks > 1e15
	   OR spin_delays > 1e15 OR dequeue_self > 1e15 OR wait_time > 1e9};

# The victims.  Each statement runs until it is signalled.
my %victims = (
	reader => q{DO $$ BEGIN LOOP
		PERFORM count(*), sum(blocks) FROM pg_lwlock_stats;
	END LOOP; END $$;},
	resetter => q{DO $$ BEGIN LOOP
		PERFORM pg_lockstat_reset();
		PERFORM * FROM pg_lockstat_status;
	END LOOP; END $$;},
	cross_join => q{SELECT count(*) FROM pg_lwlock_stats a,
		pg_lwlock_stats b, pg_lwlock_stats c, generate_series(1, 1000000000);},
	watch => LockStatTest::watch_sql(
		'SELECT * FROM pg_lwlock_stats, pg_lockstat_status'),
	writer => q{SELECT lockstat_test_lwlock('exclusive', 2000000000, 1);});
my @victim_names = sort keys %victims;

# the session that sends the signals
my $ctl = $node->background_psql('postgres');

# \watch runs one statement after the other: a cancel that arrives between
# two of them is ignored, so that victim is only terminated, and it may
# learn of the termination only as a lost connection.
my ($cancels, $cancels_seen, $terminates, $terminates_seen) = (0, 0, 0, 0);
my ($reuse_ok, $rounds_all_gone) = (0, 0);
my $num_rounds = 12;
foreach my $round (1 .. $num_rounds)
{
	my %h;
	my @terminated;
	foreach my $name (@victim_names)
	{
		my $h = $node->background_psql('postgres', on_error_stop => 0);
		my $pid = $h->query_safe('SELECT pg_backend_pid()');
		$h->query_until(qr/started/,
			"\\o /dev/null\n\\echo started\n$victims{$name}\n");
		$h{$name} = [ $h, $pid ];
	}
	my $pids = join(',', map { $h{$_}->[1] } @victim_names);
	$node->poll_query_until(
		'postgres',
		qq{SELECT count(*) = 5 FROM pg_stat_activity
		   WHERE pid IN ($pids)
		     AND (state = 'active' OR query LIKE '%FROM pg_lwlock_stats, pg_lockstat_status%')}
	) or die "round $round: victims did not start";

	# signal at a different moment of the reads each round
	usleep(1000 * (($round * 7) % 50));

	foreach my $i (0 .. $#victim_names)
	{
		my $name = $victim_names[$i];
		my ($h, $pid) = @{ $h{$name} };
		if ($name ne 'watch' && ($round + $i) % 2 == 0)
		{
			$cancels++;
			$ctl->query_safe("SELECT pg_cancel_backend($pid)");
			# the same session reads and resets again at once
			my ($out) = $h->query(
				qq{\\o\n} . q{SELECT count(*) >= 0 FROM pg_lwlock_stats
				  WHERE pg_lockstat_reset() IS NOT NULL});
			$cancels_seen++
			  if $h->{stderr} =~ /canceling statement due to user request/;
			$reuse_ok++ if $out eq 't';
			$h->quit;
		}
		else
		{
			$terminates++;
			push @terminated, $pid;
			$ctl->query_safe("SELECT pg_terminate_backend($pid)");
			$h->{run}->finish;
			my $expected =
			  $name eq 'watch'
			  ? qr/terminating connection due to administrator command|server closed the connection unexpectedly/
			  : qr/terminating connection due to administrator command/;
			$terminates_seen++ if $h->{stderr} =~ $expected;
		}
	}
	my $gone = join(',', @terminated);
	$rounds_all_gone++
	  if $node->poll_query_until('postgres',
		"SELECT count(*) = 0 FROM pg_stat_activity WHERE pid IN ($gone)");
}
$ctl->quit;
note "$cancels cancels, $terminates terminations";
is($cancels_seen, $cancels, 'every cancel interrupted a running statement');
is($reuse_ok, $cancels,
	'every cancelled session read and reset again at once');
is($terminates_seen, $terminates,
	'every terminated session was told so (or lost its connection, \\watch)');
is($rounds_all_gone, $num_rounds, 'every terminated backend exited');

is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_stat_activity
		  WHERE wait_event = 'pg_lockstat'}),
	'0',
	'afterwards no session waits on the pg_lockstat lock');

# a leaked lock would make these hang: the TAP timeout bounds the hang
my $timeout = $PostgreSQL::Test::Utils::timeout_default;
my $reset_at = $node->safe_psql('postgres', 'SELECT pg_lockstat_reset()',
	timeout => $timeout);
is( $node->safe_psql(
		'postgres',
		'SELECT stats_reset FROM pg_lockstat_status',
		timeout => $timeout),
	$reset_at,
	'pg_lockstat_reset() works after the faults');
$node->safe_psql(
	'postgres',
	q{SELECT lockstat_test_lwlock('exclusive', 1234),
	         lockstat_test_lwlock('shared', 567),
	         lockstat_test_lwlock('conditional', 89)});
is($node->safe_psql('postgres', $test_stats, timeout => $timeout),
	'567|1323|0', 'a fresh reader gets exact counts at once');
is($node->safe_psql('postgres', $insane),
	'0', 'no counter of any tranche is implausibly large (an underflow)');

# --- immediate shutdown under load --------------------------------------

my @load;
foreach my $name (qw(reader resetter writer writer))
{
	my $h = $node->background_psql('postgres', on_error_stop => 0);
	$h->query_until(qr/started/,
		"\\o /dev/null\n\\echo started\n$victims{$name}\n");
	push @load, $h;
}
$node->poll_query_until(
	'postgres',
	q{SELECT count(*) = 4 FROM pg_stat_activity
	  WHERE state = 'active' AND query LIKE ANY
	        (ARRAY['DO $$ BEGIN LOOP%', 'SELECT lockstat_test_lwlock(%'])}
) or die 'the load did not start';
$node->poll_query_until(
	'postgres',
	q{SELECT count(*) > 0 FROM pg_stat_activity
	  WHERE wait_event = 'lockstat_test'}) or die 'the writers did not contend';

my $before_stop = $node->safe_psql('postgres', 'SELECT clock_timestamp()');
my $logstart = -s $node->logfile;
$node->stop('immediate');
# each psql has lost its connection and exits
$_->{run}->finish foreach @load;
$node->start;

like(
	slurp_file($node->logfile, $logstart),
	qr/database system was not properly shut down; automatic recovery in progress/,
	'the start after an immediate shutdown ran crash recovery');
is( $node->safe_psql(
		'postgres',
		qq{SELECT stats_reset > '$before_stop' FROM pg_lockstat_status}),
	't',
	'stats_reset is later than the immediate shutdown');
is($node->safe_psql('postgres', $test_stats),
	'0|0|0', 'counters start from zero after the restart');
is($node->safe_psql('postgres', $insane),
	'0', 'no counter of any tranche is implausibly large after the restart');

$node->safe_psql(
	'postgres',
	q{SELECT lockstat_test_lwlock('exclusive', 1000),
	         lockstat_test_lwlock('shared', 500),
	         lockstat_test_lwlock('conditional', 300)});
is($node->safe_psql('postgres', $test_stats),
	'500|1300|0', 'counting is exact after the restart');

# 4 writers start while a holder has the lock, and it lets go once all 4
# sleep on it
my $holder = LockStatTest::hold_lwlock($node, 'exclusive');
my @writers;
foreach my $i (1 .. 4)
{
	my $h = $node->background_psql('postgres');
	$h->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_lwlock('exclusive', 3000, 1);\n"
	);
	push @writers, $h;
}
LockStatTest::wait_for_waiters($node, 4);
LockStatTest::release_holds($node);
my $failed = $holder->quit ? 0 : 1;
foreach my $h (@writers)
{
	$failed++ unless $h->quit;
}
is($failed, 0, 'the holder and 4 concurrent writers finished without error');
my ($sh, $ex, $blocks) =
  split /\|/, $node->safe_psql('postgres', $test_stats);
is("$sh|$ex", '500|13301',
	"4 concurrent writers x 3000 and the holder's one add exactly 12001 exclusive acquisitions");
cmp_ok($blocks, '>=', 4, 'each of the 4 writers that slept counted a block');
cmp_ok($blocks, '<=', $sh + $ex, 'blocks do not exceed acquisitions');

my $old_reset =
  $node->safe_psql('postgres', 'SELECT stats_reset FROM pg_lockstat_status');
is( $node->safe_psql(
		'postgres', qq{SELECT pg_lockstat_reset() > '$old_reset'}),
	't',
	'pg_lockstat_reset() works after the restart');
is($node->safe_psql('postgres', $test_stats),
	'0|0|0', 'and starts the counts from zero');

$node->stop;
done_testing();
