# Copyright (c) 2026, pg_lockstat developers
#
# A blocked LWLock call that ends while pg_lockstat_reset() runs counts on
# the same side of the reset in pg_lwlock_stats, pg_lwlock_query_stats and
# pg_lwlock_wait_histogram, so that per tranche the three still add up.
# t/051 once saw "LockManager 142/143": the reset summed a process's
# counters for its baseline at one moment and moved its per-query table to
# the new generation at another, and the core stores a blocked call's
# block a few instructions apart from the hook that counts the call per
# query (since the series counts a blocked LWLockAcquire at its release,
# the store comes just before the hook).  The reset now takes each
# process's cut at a moment when the process writes nothing and its
# counters agree with its hook's (lockstat_reset.c).  gdb
# (installed by scripts/deps.sh) makes each of the two interleavings that
# broke it happen for sure:
# 1. the waiter stops after the core stored the block and before its hook
#    counted the call, and a reset starts: the reset waits (wait event
#    "Extension") until the waiter goes on, and the call counts before the
#    reset in all three views (without the wait: counted before the reset
#    in pg_lwlock_stats only);
# 2. the reset stops after it started the new generation and before it
#    took any process's cut, and a waiter's whole blocked call runs: the
#    call counts before the reset in all three (before the fix: after the
#    reset in pg_lwlock_query_stats only, the order of t/051's failure).
# Each time, a blocked call after the reset counts once in all three.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;
use LockStatTest::Gdb;

my $no_gdb = LockStatTest::Gdb::gdb_unavailable();
plan skip_all => $no_gdb if $no_gdb;

my $node = LockStatTest::new_node('query_reset_cut',
	"compute_query_id = on\nautovacuum = off\n");

# blocks of the test tranche in pg_lwlock_stats, pg_lwlock_query_stats
# and pg_lwlock_wait_histogram
my $three = q{
SELECT coalesce((SELECT blocks FROM pg_lwlock_stats
                 WHERE tranche = 'lockstat_test'), 0)
       || '/' ||
       (SELECT coalesce(sum(blocks), 0) FROM pg_lwlock_query_stats
        WHERE tranche = 'lockstat_test')
       || '/' ||
       (SELECT coalesce(sum(count), 0) FROM pg_lwlock_wait_histogram
        WHERE tranche = 'lockstat_test')};

my $waiting_query = q{
SELECT count(*) FROM pg_stat_activity
WHERE query LIKE 'SELECT lockstat_test_lwlock(''shared''%' AND state = 'active'};
# the resetting session: state/wait event type, or "none" before it started
my $reset_query = q{
SELECT coalesce(max(state || '/' || coalesce(wait_event_type, '-')), 'none')
FROM pg_stat_activity
WHERE query LIKE 'SELECT pg_lockstat_reset() IS NOT NULL%'};

# one more blocked call, after the reset: it counts once in all three
sub one_more_block
{
	my ($what) = @_;
	my ($holder, $waiter) = LockStatTest::block_waiter($node);
	LockStatTest::end_block($node, $holder, $waiter);
	is($node->safe_psql('postgres', $three), '1/1/1',
		"$what: the next blocked call counts once in all three views");
}

# --- 1. the hook ran, the core's store of the block did not yet -------------

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my $holder = LockStatTest::hold_lwlock($node, 'exclusive');
my $waiter = $node->background_psql('postgres');
my $g = LockStatTest::Gdb::gdb_attach($waiter, 'lockstat_query_record_wait');
$waiter->query_until(qr/started/,
	"\\echo started\nSELECT lockstat_test_lwlock('shared', 1);\n\\echo done\n");
LockStatTest::wait_for_waiters($node, 1);
LockStatTest::release_holds($node);
# at the hook's start: the core has stored the block, the hook counts next
LockStatTest::Gdb::gdb_wait($g, qr/Breakpoint 1,/);
my $resetter = $node->background_psql('postgres');
$resetter->query_until(qr/started/,
	"\\echo started\nSELECT pg_lockstat_reset() IS NOT NULL;\n\\echo done\n");
# the reset either waits for the waiter or (wrongly) ends without it
$node->poll_query_until('postgres',
	"SELECT ($reset_query) = 'active/Extension' OR ($reset_query) LIKE 'idle%'")
  or die 'the reset neither waited nor ended';
is($node->safe_psql('postgres', $reset_query), 'active/Extension',
	'1: the reset waits while the waiter stands between the store and its hook');
is($node->safe_psql('postgres', $waiting_query), '1',
	'1: and the waiter is still stopped there');
LockStatTest::Gdb::gdb_detach($g);
$waiter->query_until(qr/done/, '');
$resetter->query_until(qr/done/, '');
$resetter->quit;
$waiter->quit;
$holder->quit;
is($node->safe_psql('postgres', $three), '0/0/0',
	'1: the call counts before the reset in all three views');
one_more_block('1');

# --- 2. the reset started a generation; a whole call ran; then the cuts ------

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$holder = LockStatTest::hold_lwlock($node, 'exclusive');
$waiter = $node->background_psql('postgres');
$waiter->query_until(qr/started/,
	"\\echo started\nSELECT lockstat_test_lwlock('shared', 1);\n\\echo done\n");
LockStatTest::wait_for_waiters($node, 1);
$resetter = $node->background_psql('postgres');
# the first slot's cut starts by holding its owner off
$g = LockStatTest::Gdb::gdb_attach($resetter, 'lockstat_query_slot_hold');
$resetter->query_until(qr/started/,
	"\\echo started\nSELECT pg_lockstat_reset() IS NOT NULL;\n\\echo done\n");
LockStatTest::Gdb::gdb_wait($g, qr/Breakpoint 1,/);
LockStatTest::release_holds($node);
$waiter->query_until(qr/done/, '');
is($node->safe_psql('postgres', $reset_query), 'active/-',
	'2: the waiter blocked, woke and finished while the reset stood before its cuts');
LockStatTest::Gdb::gdb_detach($g);
$resetter->query_until(qr/done/, '');
$resetter->quit;
$waiter->quit;
$holder->quit;
is($node->safe_psql('postgres', $three), '0/0/0',
	'2: the call counts before the reset in all three views');
one_more_block('2');

LockStatTest::query_tranches_add_up($node, 'at the end');

$node->stop;
done_testing();
