# Copyright (c) 2026, pg_lockstat developers
#
# The spin-and-sleep limits of s_lock.c are reloadable settings: the values
# in force, as the server core reads them, follow a reload; a minimum above
# its maximum is refused, on reload and by ALTER SYSTEM, and the old values
# stay in force; such a pair in postgresql.conf stops the server at start.
# ttas_backoff with a small cap keeps a contended spinlock exact.  With
# 1 us delays, a wait that sleeps more than the 1000 delays after which
# s_lock() checks for a stuck spinlock is not declared stuck before its
# minute.  The contention is certain: a holder keeps the test spinlock
# (lockstat_test_spinlock_hold) until the waiters spin inside s_lock().

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes ();

use LockStatTest;

my $limits_query =
  q{SELECT min_spins_per_delay || ' ' || max_spins_per_delay || ' ' ||
		   min_delay_us || ' ' || max_delay_us || ' ' || backoff_max_pauses
	FROM pg_lockstat_status};

my $node = LockStatTest::new_node('spin_tunables');

is($node->safe_psql('postgres', $limits_query),
	'10 1000 1000 1000000 64',
	'defaults in force are the former compile-time constants');

# a reload changes the values in force in new and in running sessions
my $session = $node->background_psql('postgres', on_error_stop => 1);
$node->append_conf('postgresql.conf',
	"pg_lockstat.min_delay_us = 2000\n"
	  . "pg_lockstat.max_spins_per_delay = 500\n"
	  . "pg_lockstat.backoff_max_pauses = 8\n");
$node->reload;
ok( $node->poll_query_until(
		'postgres', $limits_query, '10 500 2000 1000000 8'),
	'a reload puts the new limits in force (new session)');
# the running session takes the new values at its next command
$session->query_safe('SELECT 1');
is($session->query_safe($limits_query),
	'10 500 2000 1000000 8', 'a running session has them too');
$session->quit;

# a minimum above the maximum in force is refused on reload; the log says
# why and the old value stays in force
my $logstart = -s $node->logfile;
$node->append_conf('postgresql.conf', "pg_lockstat.min_delay_us = 5000000\n");
$node->reload;
ok( $node->wait_for_log(
		qr/"pg_lockstat.min_delay_us" \(5000000\) must not be greater than "pg_lockstat.max_delay_us" \(1000000\)/,
		$logstart),
	'the reload logs the refused minimum and both values');
is($node->safe_psql('postgres', $limits_query),
	'10 500 2000 1000000 8', 'the old values stay in force');
is($node->safe_psql('postgres', 'SHOW pg_lockstat.min_delay_us'),
	'2000', 'SHOW agrees with what is in force');

# moving both limits past each other: the maximum first, then the minimum
$node->append_conf('postgresql.conf', "pg_lockstat.min_delay_us = 2000\n"
	  . "pg_lockstat.max_delay_us = 8000000\n");
$node->reload;
ok( $node->poll_query_until(
		'postgres', 'SELECT max_delay_us FROM pg_lockstat_status', '8000000'),
	'a larger maximum is taken first');
$node->append_conf('postgresql.conf', "pg_lockstat.min_delay_us = 5000000\n");
$node->reload;
ok( $node->poll_query_until(
		'postgres', 'SELECT min_delay_us FROM pg_lockstat_status', '5000000'),
	'then a minimum above the old maximum');

# ALTER SYSTEM checks against the values in force and writes nothing
my ($rc, $stdout, $stderr) = $node->psql('postgres',
	'ALTER SYSTEM SET pg_lockstat.min_spins_per_delay = 501');
isnt($rc, 0, 'ALTER SYSTEM refuses a minimum above the maximum in force');
like(
	$stderr,
	qr/invalid value for parameter "pg_lockstat.min_spins_per_delay": 501.*DETAIL:  "pg_lockstat.min_spins_per_delay" \(501\) must not be greater than "pg_lockstat.max_spins_per_delay" \(500\)\..*HINT:  To move both limits past each other, change "pg_lockstat.max_spins_per_delay" first and reload, then "pg_lockstat.min_spins_per_delay"\./s,
	'the error names both settings and says what to do');
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_file_settings
		  WHERE name = 'pg_lockstat.min_spins_per_delay'}),
	'0',
	'nothing was written to postgresql.auto.conf');

# ttas_backoff with a cap of 2 pauses, and the shortest limits: a contended
# spinlock still protects its counter exactly
$node->append_conf('postgresql.conf',
	"pg_lockstat.spin_strategy = 'ttas_backoff'\n"
	  . "pg_lockstat.backoff_max_pauses = 2\n"
	  . "pg_lockstat.min_spins_per_delay = 1\n"
	  . "pg_lockstat.max_spins_per_delay = 1\n"
	  . "pg_lockstat.min_delay_us = 1\n"
	  . "pg_lockstat.max_delay_us = 10\n");
$node->restart;
is( $node->safe_psql(
		'postgres', "SELECT spin_strategy || ' ' || backoff_max_pauses || ' ' || max_delay_us FROM pg_lockstat_status"),
	'ttas_backoff 2 10',
	'ttas_backoff and the limits are in force after restart');
my $site = q{FROM pg_spinlock_stats
	WHERE file = 'lockstat_test.c' AND func = 'lockstat_test_spinlock'};
my $before =
  $node->safe_psql('postgres', 'SELECT lockstat_test_spin_counter()');
# 3 sessions wait for the held spinlock, then take it 3000 times each,
# together from the release on
# (connected first, so that the hold lasts only while they start)
my @h = map { $node->background_psql('postgres', on_error_stop => 1) } 1 .. 3;
my $holder = LockStatTest::hold_spinlock($node);
my $since = LockStatTest::spin_waits($node);
$_->query_until(qr/started/,
	"\\echo started\nSELECT lockstat_test_spinlock(3000, 1);\n")
  foreach @h;
LockStatTest::wait_for_spin_waiters($node, $since, 3, release => 1);
$_->quit foreach @h;
$holder->quit;
cmp_ok($node->safe_psql('postgres', "SELECT coalesce(sum(contended), 0) $site"),
	'>=', 3, 'ttas_backoff: each of the 3 sessions had a contended wait');
is($node->safe_psql('postgres', 'SELECT lockstat_test_spinlock(10)'),
	'10', 'the spinlock is usable after contention under ttas_backoff');
is( $node->safe_psql('postgres', 'SELECT lockstat_test_spin_counter()'),
	$before + 9011,
	'no increment under the spinlock was lost (1 hold + 3 x 3000 contended + 10)'
);

# the shortest delays, 1 us, under long holds: a thousand delays pass in
# milliseconds, but a wait is declared stuck (PANIC) only after a minute.
# Rounds of a hold and 3 waiters, each hold kept twice as long as the one
# before once the waiters spin (from 50 ms, at most 25.6 s: within the
# hold's 30 s bound and the waiters' minute), until the waits of a round
# have slept more than 1001 delays each on average, so that one of them
# slept more than the 1000 delays after which s_lock() checks the time: the
# state waited for is that count, the holds' lengths only its steps.
$node->append_conf('postgresql.conf',
	"pg_lockstat.spin_strategy = 'default'\n"
	  . "pg_lockstat.max_spins_per_delay = 1000\n"
	  . "pg_lockstat.min_spins_per_delay = 10\n"
	  . "pg_lockstat.max_delay_us = 1\n"
	  . "pg_lockstat.min_delay_us = 1\n");
$node->restart;
$before = $node->safe_psql('postgres', 'SELECT lockstat_test_spin_counter()');
my $logpos = -s $node->logfile;
@h = map { $node->background_psql('postgres', on_error_stop => 0) } 1 .. 3;
my ($rounds, $contended, $delays) = (0, 0, 0);
for (my $hold_s = 0.05; $hold_s <= 25.6; $hold_s *= 2)
{
	my $counts = "SELECT coalesce(sum(contended), 0) || '|' || "
	  . "coalesce(sum(delays), 0) $site";
	my ($c0, $d0) = split /\|/, $node->safe_psql('postgres', $counts);
	$holder = LockStatTest::hold_spinlock($node);
	$since = LockStatTest::spin_waits($node);
	$_->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_spinlock(1, 0);\n")
	  foreach @h;
	LockStatTest::wait_for_spin_waiters($node, $since, 3);
	Time::HiRes::sleep($hold_s);
	LockStatTest::release_holds($node);
	$_->query_safe('SELECT 1') foreach @h;
	$holder->quit;
	$rounds++;
	my ($c1, $d1) = split /\|/, $node->safe_psql('postgres', $counts);
	($contended, $delays) = ($c1 - $c0, $d1 - $d0);
	note("round $rounds, hold of $hold_s s after the waiters spun: "
		  . "$contended contended waits, $delays delays");
	last if $delays > 1001 * $contended;
}
$_->quit foreach @h;
cmp_ok($contended, '>=', 3, 'the 3 waiters of the last round had contended waits');
cmp_ok($delays, '>', 1001 * $contended,
	'and one of them slept more than 1000 delays of 1 us');
unlike(slurp_file($node->logfile, $logpos), qr/stuck spinlock/,
	'1 us delays under long holds: no stuck-spinlock PANIC');
is( $node->safe_psql('postgres', 'SELECT lockstat_test_spin_counter()'),
	$before + 4 * $rounds,
	"and every acquisition completed (a hold and 3 waiters in each of $rounds rounds)");

# a minimum above its maximum in postgresql.conf stops the server at start
$node->stop;
$node->append_conf('postgresql.conf', "pg_lockstat.min_spins_per_delay = 50\n"
	  . "pg_lockstat.max_spins_per_delay = 20\n");
$logstart = -s $node->logfile;
ok(!$node->start(fail_ok => 1),
	'the server refuses to start with min_spins_per_delay > max_spins_per_delay');
like(
	slurp_file($node->logfile, $logstart),
	qr/FATAL:  "pg_lockstat.min_spins_per_delay" must not be greater than "pg_lockstat.max_spins_per_delay"\n.*DETAIL:  "pg_lockstat.min_spins_per_delay" is 50 and "pg_lockstat.max_spins_per_delay" is 20\./,
	'the log names both settings and values');

done_testing();
