# Copyright (c) 2026, pg_lockstat developers
#
# Exact counts under concurrency: 4 sessions x 10000 exclusive acquisitions
# of the lockstat_test LWLock, started behind a session that holds the lock
# until all 4 sleep on it, give ex_acquires = 40000 exactly and at least 4
# blocks, one per session that slept.  Counts of exited backends are kept;
# pg_lockstat.track can be switched off for every process with a reload.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $node = LockStatTest::new_node('concurrency');

my $stats_query = q{
	SELECT coalesce(sum(sh_acquires), 0), coalesce(sum(ex_acquires), 0),
	       coalesce(sum(blocks), 0), coalesce(sum(wait_time), 0) > 0
	FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'};

# 4 sessions, each 10000 exclusive acquisitions held 1 us, started while
# another session holds the lock: each sleeps on its first acquisition
# until the holder lets go, once all 4 sleep.  The holder's acquisition
# comes before the reset, so only the 4 sessions' count.
my $holder = LockStatTest::hold_lwlock($node, 'exclusive');
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my @sessions;
foreach my $i (1 .. 4)
{
	my $h = $node->background_psql('postgres', on_error_stop => 1);
	$h->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_lwlock('exclusive', 10000, 1);\n");
	push @sessions, $h;
}
LockStatTest::wait_for_waiters($node, 4);
LockStatTest::release_holds($node);
ok($holder->quit, 'the holder ended without error');
is(scalar(grep { !$_->quit } @sessions), 0, 'the 4 sessions ended without error');

my ($sh, $ex, $blocks, $has_wait) =
  split /\|/, $node->safe_psql('postgres', $stats_query);
is($ex, 40000, '4 sessions x 10000 exclusive acquisitions count 40000');
is($sh, 0, 'no shared acquisitions counted');
cmp_ok($blocks, '>=', 4, 'each of the 4 sessions that slept counted a block');
cmp_ok($blocks, '<=', $ex, 'blocks do not exceed acquisitions');
is($has_wait, 't', 'blocked acquisitions have wait time');

# all four backends have exited; their counts stay
$node->safe_psql('postgres', q{SELECT lockstat_test_lwlock('shared', 100)});
($sh, $ex) = split /\|/, $node->safe_psql('postgres', $stats_query);
is($ex, 40000, 'counts of exited backends are kept');
is($sh, 100, 'a later, also exited, backend adds to them');

# track off for everyone with ALTER SYSTEM and a reload
$node->safe_psql('postgres', 'ALTER SYSTEM SET pg_lockstat.track = off');
$node->reload;
# wait until a new backend sees the setting
$node->poll_query_until('postgres', 'SELECT NOT track FROM pg_lockstat_status')
  or die 'reload of pg_lockstat.track timed out';
$node->safe_psql('postgres', q{SELECT lockstat_test_lwlock('exclusive', 500)});
($sh, $ex) = split /\|/, $node->safe_psql('postgres', $stats_query);
is($ex, 40000, 'nothing counted with pg_lockstat.track = off');

$node->safe_psql('postgres', 'ALTER SYSTEM RESET pg_lockstat.track');
$node->reload;
$node->poll_query_until('postgres', 'SELECT track FROM pg_lockstat_status')
  or die 'reload of pg_lockstat.track timed out';
$node->safe_psql('postgres', q{SELECT lockstat_test_lwlock('exclusive', 5)});
($sh, $ex) = split /\|/, $node->safe_psql('postgres', $stats_query);
is($ex, 40005, 'counting resumes with pg_lockstat.track = on');

$node->stop;
done_testing();
