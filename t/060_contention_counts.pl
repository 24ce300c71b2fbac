# Copyright (c) 2026, pg_lockstat developers
#
# Exact counts under contention, under every spin strategy, on the
# architecture the server was built for: this test runs natively in
# "make test" and, with the same assertions, against the ppc64le and
# aarch64 builds under qemu-user in "make test-arch", where TAS, TAS_SPIN
# and the spin delay are the other architectures' own code.  Per strategy,
# after a restart and a reset, 3 sessions each take the test spinlock 20000
# times (held 10 us, one call of lockstat_test_spinlock() per acquisition,
# so that the lock is free between two of a session's acquisitions and the
# others' spinning takes it), starting while a holder keeps it
# (lockstat_test_spinlock_hold, not counted) until all three spin inside
# s_lock(); then 3 sessions take the test LWLock exclusively 3000 times
# each (held 2 us), starting while a holder keeps it exclusively
# (lockstat_test_lwlock_hold) until all three sleep on it.  So both kinds
# of contention are certain, at any speed of the machine or the emulator:
# - the server is the one built for that architecture (version()), and
#   initdb warned of nothing (under emulation it once could not find the
#   time zone names and chose GMT);
# - pg_lockstat_status reports the strategy;
# - the test module's counter, incremented under the spinlock, rose by
#   exactly 60001 (the hold's one and the sessions' 60000): the strategy's
#   probes exclude each other;
# - at least 3 spinlock waits (the sessions' first) show up at the test
#   module's call site, and the probe counters add up (tas_attempts +
#   unlocked_skips = spins + contended); tas issues no unlocked read;
#   default leaves them NULL;
# - pg_lwlock_stats counts exactly 9001 exclusive (the hold's one and the
#   sessions' 9000) and no shared acquisitions of the lockstat_test tranche,
#   with at least 3 blocks (the sessions' first) and at most one per
#   acquisition;
# - a reset zeroes the tranche and the call site.
# The counts are printed (diag), with the architecture.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;
use LockStatTest::Arch;

my $arch = LockStatTest::Arch::guest_arch() // 'native ' . `uname -m`;
chomp $arch;
# qemu-user's CPU model, when test-arch.sh chooses one
$arch .= " ($ENV{QEMU_CPU})" if defined $ENV{QEMU_CPU};
my $sessions = 3;
my $spin_n = 20000;
my $lwlock_n = 3000;

my $node = LockStatTest::new_node('contention_counts');

like($node->safe_psql('postgres', 'SELECT version()'),
	LockStatTest::Arch::server_triple_re(),
	"the server is built for $arch");
unlike(slurp_file($PostgreSQL::Test::Utils::test_logfile),
	qr/initdb: warning/, 'initdb warned of nothing');

my $site = q{FROM pg_spinlock_stats
	WHERE file = 'lockstat_test.c' AND func = 'lockstat_test_spinlock'};
my $tranche = q{FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'};

# Make each of the sessions @$h run $sql; returns once each has sent it.
sub send_sql
{
	my ($h, $sql) = @_;
	$_->query_until(qr/started/, "\\echo started\n$sql\n") foreach @$h;
	return;
}

foreach my $strategy (qw(default tas ttas_spin ttas ttas_backoff))
{
	is(LockStatTest::restart_with_strategy($node, $strategy),
		$strategy, "$strategy: in force after restart");

	$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
	my $before =
	  $node->safe_psql('postgres', 'SELECT lockstat_test_spin_counter()');
	# connected first, so that the hold lasts only while they start
	my @h = map { $node->background_psql('postgres') } 1 .. $sessions;
	my $holder = LockStatTest::hold_spinlock($node);
	my $since = LockStatTest::spin_waits($node);
	send_sql(\@h,
		"SELECT sum(lockstat_test_spinlock(1, 10)) "
		  . "FROM generate_series(1, $spin_n);");
	LockStatTest::wait_for_spin_waiters($node, $since, $sessions,
		release => 1);
	$_->quit foreach @h;
	$holder->quit;

	@h = map { $node->background_psql('postgres') } 1 .. $sessions;
	$holder = LockStatTest::hold_lwlock($node, 'exclusive');
	send_sql(\@h, "SELECT lockstat_test_lwlock('exclusive', $lwlock_n, 2);");
	LockStatTest::wait_for_waiters($node, $sessions);
	LockStatTest::release_holds($node);
	$_->quit foreach @h;
	$holder->quit;

	# less the hold's one
	my $taken =
	  $node->safe_psql('postgres', 'SELECT lockstat_test_spin_counter()')
	  - $before - 1;
	is($taken, $sessions * $spin_n,
		"$strategy: the counter incremented under the spinlock lost nothing");

	# NULL probe counters are empty fields: keep them (limit -1)
	my ($contended, $spins, $delays, $tas, $skips) = split /\|/,
	  $node->safe_psql('postgres',
		"SELECT contended, spins, delays, tas_attempts, unlocked_skips $site"),
	  -1;
	if (!defined $contended)
	{
		fail("$strategy: no row for lockstat_test's call site");
		next;
	}
	# the sessions' first waits; how many more is timing (3 to 29726 were
	# seen per strategy under emulation before the holder)
	cmp_ok($contended, '>=', $sessions,
		"$strategy: the sessions' contended waits at lockstat_test's call site");
	if ($strategy eq 'default')
	{
		ok($tas eq '' && $skips eq '',
			'default: probes are not counted (TAS_SPIN is the build\'s own)');
	}
	else
	{
		is($tas + $skips, $spins + $contended,
			"$strategy: tas_attempts + unlocked_skips = spins + contended");
	}
	is($skips, '0', 'tas: every probe is an atomic') if $strategy eq 'tas';

	my ($sh, $ex, $blocks) = map { $_ // 'no row' } split /\|/,
	  $node->safe_psql('postgres',
		"SELECT sh_acquires, ex_acquires, blocks $tranche");
	is("$sh|$ex", '0|' . (1 + $sessions * $lwlock_n),
		"$strategy: exactly the exclusive acquisitions made (the hold's and the sessions'), no shared one");
	ok($blocks =~ /^\d+$/ && $blocks >= $sessions && $blocks <= $ex,
		"$strategy: the sessions' blocks on the LWLock, at most one per acquisition")
	  or diag("blocks $blocks, ex_acquires $ex");

	diag(sprintf(
			"%s, %s: spinlock %d x %d taken %d (contended %s, spins %s, "
			  . "delays %s, tas_attempts %s, unlocked_skips %s); "
			  . "LWLock ex_acquires %s, sh_acquires %s, blocks %s",
			$arch, $strategy, $sessions, $spin_n, $taken, $contended,
			$spins, $delays, $tas eq '' ? 'NULL' : $tas,
			$skips eq '' ? 'NULL' : $skips, $ex, $sh, $blocks));
}

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is( $node->safe_psql(
		'postgres',
		"SELECT coalesce(sum(sh_acquires + ex_acquires + blocks), 0) $tranche"),
	'0',
	'a reset zeroes the tranche');
is($node->safe_psql('postgres', "SELECT count(*) $site"),
	'0', 'a reset empties the call site');

$node->stop;
unlike(slurp_file($node->logfile),
	qr/PANIC:|stuck spinlock|terminated by signal|uncaught target signal/,
	'no PANIC, no stuck spinlock, no process killed');

done_testing();
