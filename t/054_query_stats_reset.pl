# Copyright (c) 2026, pg_lockstat developers
#
# pg_lockstat_reset() and its own blocked calls, with pg_lwlock_query_stats
# (compute_query_id = on); skipped without gdb.  A debugger stops a reader:
# - inside the copy of the shared per-query table, holding the
#   "pg_lockstat_query" lock shared: a reset blocks on that lock, and once
#   the reader goes on, every tranche's rows add up to pg_lwlock_stats, the
#   tranche pg_lockstat_query included (that block counts before the reset
#   in both views);
# - inside pg_lockstat_status, holding the "pg_lockstat" lock shared: a
#   reset blocks on that lock, and afterwards that block is in both views,
#   under the reset's queryid in pg_lwlock_query_stats, and every tranche
#   adds up.
# Before the reset emptied the per-query counts first, holding their lock
# around its sum, a block of the reset on either lock counted after the
# reset in pg_lwlock_stats but was dropped from pg_lwlock_query_stats.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use LockStatTest;
use LockStatTest::Gdb;

my $no_gdb = LockStatTest::Gdb::gdb_unavailable();
plan skip_all => $no_gdb if $no_gdb;

my $node = LockStatTest::new_node('query_reset',
	"compute_query_id = on\nautovacuum = off\n");

# Stop the backend of session $h at $location (a gdb breakpoint) while it
# runs $sql; returns the debugger once the backend is stopped there.
# gdb_attach() dies if it cannot set the breakpoint, and the wait for the
# stop is bounded by the TAP timeout.
sub stop_reader
{
	my ($h, $location, $sql) = @_;
	my $g = LockStatTest::Gdb::gdb_attach($h, $location);
	$h->query_until(qr/started/, "\\echo started\n$sql;\n\\echo done\n");
	LockStatTest::Gdb::gdb_wait($g, qr/Breakpoint 1,/);
	return $g;
}

# A reset in its own session, which must block on the lock of tranche
# $tranche (the test fails if it does not within the TAP timeout); returns
# the session.  The wait for the block polls in one session: while the
# stopped reader holds its lock, a backend that exits waits for that lock
# (it folds its per-query counts), so a new connection for every poll would
# use up the connection slots if the reset did not block.
sub blocked_reset
{
	my ($tranche) = @_;
	my $poller = $node->background_psql('postgres');
	$poller->set_query_timer_restart();
	my $r = $node->background_psql('postgres');
	$r->query_until(qr/started/,
		"\\echo started\nSELECT pg_lockstat_reset() IS NOT NULL;\n\\echo done\n");
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	my $blocked;
	until (($blocked = $poller->query_safe(
				qq{SELECT count(*) = 1 FROM pg_stat_activity
				   WHERE wait_event = '$tranche'
				     AND query LIKE 'SELECT pg_lockstat_reset()%'})) eq 't'
		  || time() > $deadline)
	{
		usleep(100_000);
	}
	is($blocked, 't', "a reset blocks on the $tranche lock");
	$poller->quit;
	return $r;
}

# an entry in the shared table, so that a reader copies it under the lock
my ($holder, $waiter) = LockStatTest::block_waiter($node);
LockStatTest::end_block($node, $holder, $waiter);
$node->poll_query_until('postgres',
	'SELECT query_entries > 0 FROM pg_lockstat_status')
  or die 'no entry was folded into the shared table';

# 1. the reset blocks on the per-query lock
my $reader = $node->background_psql('postgres');
my $g = stop_reader($reader, 'lockstat_query_add_local',
	'SELECT count(*) FROM pg_lwlock_query_stats');
my $reset = blocked_reset('pg_lockstat_query');
LockStatTest::Gdb::gdb_detach($g);
$reader->query_until(qr/done/, '');
$reset->query_until(qr/done/, '');
$reset->quit;
$reader->quit;
LockStatTest::query_tranches_add_up($node, 'after a reset that blocked on pg_lockstat_query');

# 2. the reset blocks on the pg_lockstat lock
my $line;
open(my $fh, '<', 'extension/lockstat_lwlock_sum.c') or die $!;
while (<$fh>)
{
	if (/result = lockstat_state->stats_reset;/) { $line = $.; last; }
}
close $fh;
die 'lockstat_last_reset() not found' unless $line;
$reader = $node->background_psql('postgres');
$g = stop_reader($reader, "lockstat_lwlock_sum.c:$line",
	'SELECT stats_reset FROM pg_lockstat_status');
$reset = blocked_reset('pg_lockstat');
LockStatTest::Gdb::gdb_detach($g);
$reader->query_until(qr/done/, '');
$reset->query_until(qr/done/, '');
$reset->quit;
$reader->quit;
is( $node->safe_psql(
		'postgres', q{
SELECT (SELECT blocks >= 1 FROM pg_lwlock_stats WHERE tranche = 'pg_lockstat'),
       (SELECT sum(blocks) >= 1 FROM pg_lwlock_query_stats
        WHERE tranche = 'pg_lockstat' AND queryid IS NOT NULL)}),
	't|t',
	"the reset's block on the pg_lockstat lock counts after the reset in both views");
LockStatTest::query_tranches_add_up($node, 'after a reset that blocked on pg_lockstat');

done_testing();
