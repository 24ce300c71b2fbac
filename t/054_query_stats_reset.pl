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

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $gdb = `command -v gdb 2>/dev/null`;
chomp $gdb;
plan skip_all => 'gdb not available' unless $gdb;

my $node = LockStatTest::new_node('query_reset',
	"compute_query_id = on\nautovacuum = off\n");

# Stop the backend of session $h at $location (a gdb breakpoint) while it
# runs $sql; returns the debugger.
sub stop_reader
{
	my ($h, $location, $sql) = @_;
	my %g = (in => '', out => '');
	my $pid = $h->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	$g{run} = IPC::Run::start(
		[ $gdb, '-q', '-nx', '-p', $pid ],
		'<' => \$g{in},
		'>&' => \$g{out},
		IPC::Run::timeout(120));
	$g{in} .= "set breakpoint pending on\nset pagination off\n"
	  . "break $location\ncontinue\n";
	$g{run}->pump until $g{out} =~ /Continuing/;
	$g{attached} = $g{out} =~ /Breakpoint 1 at/;
	$h->query_until(qr/started/, "\\echo started\n$sql;\n\\echo done\n");
	$g{run}->pump until $g{out} =~ /Breakpoint 1,/;
	return \%g;
}

sub release_reader
{
	my ($g) = @_;
	$g->{in} .= "delete\ndetach\nquit\n";
	$g->{run}->finish;
}

# A reset in its own session, blocked on $tranche; returns the session.
sub blocked_reset
{
	my ($tranche) = @_;
	my $r = $node->background_psql('postgres');
	$r->query_until(qr/started/,
		"\\echo started\nSELECT pg_lockstat_reset() IS NOT NULL;\n\\echo done\n");
	$node->poll_query_until('postgres',
		qq{SELECT count(*) = 1 FROM pg_stat_activity
		   WHERE wait_event = '$tranche' AND query LIKE 'SELECT pg_lockstat_reset()%'})
	  or die "the reset did not block on $tranche";
	return $r;
}

# an entry in the shared table, so that a reader copies it under the lock
my ($holder, $waiter) = LockStatTest::block_waiter($node, 200000);
$holder->quit;
$waiter->quit;
$node->poll_query_until('postgres',
	'SELECT query_entries > 0 FROM pg_lockstat_status')
  or die 'no entry was folded into the shared table';

# 1. the reset blocks on the per-query lock
my $reader = $node->background_psql('postgres');
my $g = stop_reader($reader, 'lockstat_query_add_local',
	'SELECT count(*) FROM pg_lwlock_query_stats');
ok($g->{attached}, 'gdb stopped a reader copying the shared per-query table');
my $reset = blocked_reset('pg_lockstat_query');
pass('a reset blocks on the pg_lockstat_query lock');
release_reader($g);
$reader->query_until(qr/done/, '');
$reset->query_until(qr/done/, '');
$reset->quit;
$reader->quit;
LockStatTest::query_tranches_add_up($node, 'after a reset that blocked on pg_lockstat_query');

# 2. the reset blocks on the pg_lockstat lock
my $line;
open(my $fh, '<', 'extension/lockstat_shmem.c') or die $!;
while (<$fh>)
{
	if (/result = lockstat_state->stats_reset;/) { $line = $.; last; }
}
close $fh;
die 'lockstat_last_reset() not found' unless $line;
$reader = $node->background_psql('postgres');
$g = stop_reader($reader, "lockstat_shmem.c:$line",
	'SELECT stats_reset FROM pg_lockstat_status');
ok($g->{attached}, 'gdb stopped a reader of stats_reset, holding the pg_lockstat lock');
$reset = blocked_reset('pg_lockstat');
pass('a reset blocks on the pg_lockstat lock');
release_reader($g);
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
