# Copyright (c) 2026, pg_lockstat developers
#
# A pg_lockstat_reset() that fails (55P03, a waiter stalled with its
# changecount odd) resets nothing: max_wait_time of pg_spinlock_stats keeps
# covering every wait counted since the last reset that succeeded.  Before
# the fix, the failed reset had raised the reset epoch before it gave up, so
# the next wait of each process started a new maximum, while the baselines,
# and so the waits counted, stayed those of the earlier reset: a long wait
# counted before the failed reset vanished from max_wait_time.  (A debugger
# stalls the waiters; skipped without gdb.)  Every step waits for a state
# (a holder that holds, a waiter inside s_lock(), a breakpoint hit); the one
# time waited for is the long wait's own length, measured from the moment
# the wait was seen to have begun.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

use LockStatTest;
use LockStatTest::Gdb;

my $no_gdb = LockStatTest::Gdb::gdb_unavailable();
plan skip_all => $no_gdb if $no_gdb;

my $node = LockStatTest::new_node('spin_failed_reset',
	"pg_lockstat.spin_strategy = 'ttas'\n");

my $where = q{WHERE file = 'lockstat_test.c' AND func = 'lockstat_test_spinlock'};

# A short contended wait of session $w at the test site, against a holder
# that is not counted: W waits until the holder, which held the test
# spinlock before W asked for it, lets it go as soon as W spins (within a
# millisecond or so).  Then W takes the spinlock 49 more times, uncontended:
# so this wait is W's last.
sub short_waits
{
	my ($w) = @_;
	my $holder = LockStatTest::hold_spinlock($node);
	my $since = LockStatTest::spin_waits($node);
	$w->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_spinlock(50, 0);\n");
	LockStatTest::wait_for_spin_waiters($node, $since, 1, release => 1);
	$w->query_safe('SELECT 1');
	$holder->quit;
}

# gdb stopped the waiter of stall $st inside the window where its entry's
# changecount is odd
sub stopped_odd
{
	my ($st, $what) = @_;
	my ($fn, $at) = $st->{hit} =~ /^Breakpoint 1, (\w+) .* at \S*s_lock\.c:(\d+)$/m;
	ok( ($fn // '') eq 's_lock_end_counted_wait'
		  && $at > LockStatTest::Gdb::s_lock_line(qr/c->changecount\+\+;/)
		  && $at <= LockStatTest::Gdb::s_lock_line(qr/c->last_wait_ns = wait_ns;/),
		"gdb stopped $what with its changecount odd")
	  or diag("stopped at: $st->{hit}");
}

my $line = LockStatTest::Gdb::s_lock_line(qr/c->contended\+\+;/);
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my $w = $node->background_psql('postgres');

# 1. A long wait of W: it waits for the test spinlock while a stalled
# waiter holds it, 2.5 s from the moment W is seen spinning (its wait began
# before that, a few instructions before its start time is read: so it
# lasts at least 2.5 s, whatever the machine's speed).  Then a short wait of
# W, so that the long one is not W's last.
my $long_s = 2.5;
my $st = LockStatTest::Gdb::stall_waiter($node, $line);
stopped_odd($st, 'the first waiter');
my $since = LockStatTest::spin_waits($node);
$w->query_until(qr/started/,
	"\\echo started\nSELECT lockstat_test_spinlock(1, 0);\n");
LockStatTest::wait_for_spin_waiters($node, $since, 1);
my $seen = Time::HiRes::time();
# the one wait for a time: the length of the wait under test
while ((my $left = $seen + $long_s - Time::HiRes::time()) > 0)
{
	Time::HiRes::sleep($left);
}
LockStatTest::Gdb::release_waiter($st);
LockStatTest::Gdb::end_stall($st);
$w->query_safe('SELECT 1');
short_waits($w);

my ($contended_before, $max_before) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT contended, max_wait_time FROM pg_spinlock_stats $where");
cmp_ok($max_before, '>=', $long_s * 1000 - 500,
	"the long wait of at least $long_s s is in max_wait_time (ms)");
note("the long wait: max_wait_time $max_before ms");

# 2. A reset that fails: another waiter is stalled with its changecount odd.
$st = LockStatTest::Gdb::stall_waiter($node, $line);
stopped_odd($st, 'the second waiter');
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT pg_lockstat_reset()");
like($stderr, qr/ERROR:  55P03:/, 'the reset fails with 55P03');
LockStatTest::Gdb::release_waiter($st);
LockStatTest::Gdb::end_stall($st);

# 3. W waits again, briefly: still counted since the last good reset.
short_waits($w);
$w->quit;

my ($contended_after, $max_after) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT contended, max_wait_time FROM pg_spinlock_stats $where");
# one wait of the second stalled waiter, one of W: no other session takes
# the test spinlock, and the holders are not counted
is($contended_after - $contended_before, 2,
	'W waited again after the failed reset, counted with the stalled waiter\'s wait');
cmp_ok($max_after, '>=', $max_before,
	'after a failed reset, max_wait_time still covers the long wait');

is( $node->safe_psql(
		'postgres',
		"SELECT (SELECT sum(count) FROM pg_spinlock_wait_histogram $where)
			= (SELECT contended FROM pg_spinlock_stats $where)"),
	't',
	'the histogram adds up to contended');

done_testing();
