# Copyright (c) 2026, pg_lockstat developers
#
# A pg_lockstat_reset() that fails (55P03, a waiter stalled with its
# changecount odd) resets nothing: max_wait_time of pg_spinlock_stats keeps
# covering every wait counted since the last reset that succeeded.  Before
# the fix, the failed reset had raised the reset epoch before it gave up, so
# the next wait of each process started a new maximum, while the baselines,
# and so the waits counted, stayed those of the earlier reset: a long wait
# counted before the failed reset vanished from max_wait_time.  (A debugger
# stalls the waiters; skipped without gdb.)

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

use LockStatTest;

my $gdb = `command -v gdb 2>/dev/null`;
chomp $gdb;
plan skip_all => 'gdb not available' unless $gdb;

my $node = LockStatTest::new_node('spin_failed_reset',
	"pg_lockstat.spin_strategy = 'ttas'\n");

my $where = q{WHERE file = 'lockstat_test.c' AND func = 'lockstat_test_spinlock'};

# Short contended waits of session $w at the test site, against a holder
# that is not counted.
sub short_waits
{
	my ($w) = @_;
	my $holder = $node->background_psql('postgres');
	$holder->query_until(qr/started/,
		"\\echo started\nSET pg_lockstat.track = off;\n"
		  . "SELECT lockstat_test_spinlock(1000, 1000);\n");
	# let the holder start first
	$w->query_safe('SELECT pg_sleep(0.3)');
	$w->query_safe('SELECT lockstat_test_spinlock(50, 0)');
	$holder->quit;
}

my $line = LockStatTest::s_lock_line(qr/c->contended\+\+;/);
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my $w = $node->background_psql('postgres');

# 1. A long wait of W: it waits for the test spinlock while a stalled
# waiter holds it for 3 s.  Then short waits of W, so that the long one is
# not W's last.
my $st = LockStatTest::stall_waiter($node, $gdb, $line);
ok($st->{out} =~ /Breakpoint 1,/, 'gdb stopped the first waiter');
$w->query_until(qr/started/,
	"\\echo started\nSELECT lockstat_test_spinlock(1, 0);\n");
usleep(3_000_000);
LockStatTest::release_waiter($st);
LockStatTest::end_stall($st);
$w->query_safe('SELECT 1');
short_waits($w);

my ($contended_before, $max_before) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT contended, max_wait_time FROM pg_spinlock_stats $where");
cmp_ok($max_before, '>=', 2000, 'the long wait is in max_wait_time (ms)');

# 2. A reset that fails: another waiter is stalled with its changecount odd.
$st = LockStatTest::stall_waiter($node, $gdb, $line);
my ($ret, $stdout, $stderr) =
  $node->psql('postgres', "\\set VERBOSITY verbose\nSELECT pg_lockstat_reset()");
like($stderr, qr/ERROR:  55P03:/, 'the reset fails with 55P03');
LockStatTest::release_waiter($st);
LockStatTest::end_stall($st);

# 3. W waits again, briefly: still counted since the last good reset.
short_waits($w);
$w->quit;

my ($contended_after, $max_after) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT contended, max_wait_time FROM pg_spinlock_stats $where");
cmp_ok($contended_after, '>', $contended_before,
	'W waited again after the failed reset');
cmp_ok($max_after, '>=', $max_before,
	'after a failed reset, max_wait_time still covers the long wait');

is( $node->safe_psql(
		'postgres',
		"SELECT (SELECT sum(count) FROM pg_spinlock_wait_histogram $where)
			= (SELECT contended FROM pg_spinlock_stats $where)"),
	't',
	'the histogram adds up to contended');

done_testing();
