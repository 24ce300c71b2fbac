# Copyright (c) 2026, pg_lockstat developers
#
# pg_spinlock_stats: contended waits on the test spinlock (made certain by a
# holder that keeps it until the waiters spin) show up at lockstat_test's
# own call site, under each strategy; the probe counters
# add up exactly (tas_attempts + unlocked_skips = spins + contended) where
# s_lock() counts them, tas issues no unlocked read, default leaves them
# NULL; a reset empties the view; max_spin_sites bounds the table and
# dropped waits are counted.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $node = LockStatTest::new_node('spinlock_stats');

my $site = q{FROM pg_spinlock_stats
	WHERE file = 'lockstat_test.c' AND func = 'lockstat_test_spinlock'};

# 3 sessions x 3000 acquisitions of the test spinlock, each held 5 us: all
# three wait for a holder (not counted) that keeps the spinlock until they
# spin inside s_lock(), so that each has a contended wait whatever the
# machine's speed, then go on together from its release
sub contend
{
	# connected first, so that the hold lasts only while they start
	my @h = map { $node->background_psql('postgres') } 1 .. 3;
	my $holder = LockStatTest::hold_spinlock($node);
	my $since = LockStatTest::spin_waits($node);
	$_->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_spinlock(3000, 5);\n")
	  foreach @h;
	LockStatTest::wait_for_spin_waiters($node, $since, 3, release => 1);
	$_->quit foreach @h;
	$holder->quit;
}

foreach my $strategy (qw(tas ttas_spin ttas ttas_backoff default))
{
	$node->append_conf('postgresql.conf',
		"pg_lockstat.spin_strategy = '$strategy'");
	$node->restart;
	$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
	contend();

	is( $node->safe_psql('postgres',
			"SELECT count(*), sum(contended) >= 3, sum(spins) >= sum(contended) $site"),
		'1|t|t',
		"$strategy: one row for the call site, with the 3 sessions' contended waits and spins");
	note("$strategy: contended|spins|delays|tas_attempts|unlocked_skips = "
		  . $node->safe_psql('postgres',
			"SELECT contended, spins, delays, tas_attempts, unlocked_skips $site"));
	if ($strategy eq 'default')
	{
		is( $node->safe_psql('postgres',
				"SELECT tas_attempts IS NULL AND unlocked_skips IS NULL $site"),
			't',
			'default: probes are not counted (TAS_SPIN is the build\'s own)');
	}
	else
	{
		is( $node->safe_psql('postgres',
				"SELECT tas_attempts + unlocked_skips = spins + contended $site"),
			't',
			"$strategy: tas_attempts + unlocked_skips = spins + contended");
	}
	if ($strategy eq 'tas')
	{
		is($node->safe_psql('postgres', "SELECT unlocked_skips $site"),
			'0', 'tas: every probe is an atomic');
	}
}

# under default, s_lock() counts no probes anywhere
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_spinlock_stats WHERE tas_attempts IS NOT NULL}),
	'0',
	'default strategy: no site has probe counters');

# a reset empties the view
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is($node->safe_psql('postgres', "SELECT count(*) $site"),
	'0', 'a reset empties the call site');

# one call site per process: the test spinlock's waits are counted only in
# processes whose first contended site it is; the rest are dropped
$node->append_conf('postgresql.conf', "pg_lockstat.max_spin_sites = 1");
$node->restart;
is($node->safe_psql('postgres', 'SELECT max_spin_sites FROM pg_lockstat_status'),
	'1', 'max_spin_sites in force');
my $counted_or_dropped = q{SELECT
	(SELECT coalesce(sum(contended), 0) FROM pg_spinlock_stats)
	+ (SELECT spin_sites_dropped FROM pg_lockstat_status)};
my $before = $node->safe_psql('postgres', $counted_or_dropped);
contend();
cmp_ok($node->safe_psql('postgres', $counted_or_dropped) - $before,
	'>=', 3,
	'with one site per process, the 3 waits are counted or counted as dropped');

# privileges
$node->safe_psql('postgres', 'CREATE ROLE regress_nobody LOGIN');
my ($rc, $stdout, $stderr) = $node->psql('postgres',
	'SELECT count(*) FROM pg_spinlock_stats',
	extra_params => [ '-U', 'regress_nobody' ]);
like($stderr, qr/permission denied for view pg_spinlock_stats/,
	'a role without pg_read_all_stats cannot read the view');

done_testing();
