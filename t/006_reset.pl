# Copyright (c) 2026, pg_lockstat developers
#
# Reset semantics under concurrency:
# - an acquisition that is blocked across a reset counts both its block and
#   its acquisition after the reset, so blocks never exceed acquisitions;
# - readers that keep reading do not starve a reset;
# - a read can be cancelled in the middle of its sum (gdb stops it there),
#   and leaves nothing held.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;
use LockStatTest::Gdb;

# a large table: 2049 rows per process
my $node = LockStatTest::new_node('reset',
	"pg_lockstat.max_tranches = 2048\nmax_connections = 200");

my $stats = q{SELECT sh_acquires, ex_acquires, blocks FROM pg_lwlock_stats
	WHERE tranche = 'lockstat_test'};

# the holder keeps the lock exclusively until released; the waiter blocks
# behind it; the reset happens while the waiter sleeps
my ($holder, $waiter) = LockStatTest::block_waiter($node);
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
LockStatTest::end_block($node, $holder, $waiter);

is($node->safe_psql('postgres', $stats),
	'1|0|1',
	'a block that straddles the reset is counted with its acquisition');

# four readers that read until told to stop must not starve a reset: the
# reset returns while all four are still reading (a starved reset would
# hang until the TAP timeout)
$node->safe_psql('postgres', 'CREATE UNLOGGED TABLE stop (what text)');
my @readers;
foreach my $i (1 .. 4)
{
	my $h = $node->background_psql('postgres');
	$h->query_until(qr/started/,
		"\\echo started\n"
		  . "DO \$\$BEGIN WHILE NOT EXISTS (SELECT FROM stop) LOOP "
		  . "PERFORM count(*) FROM pg_lwlock_stats; END LOOP; END\$\$;\n");
	push @readers, $h;
}
my $reading = q{SELECT count(*) FROM pg_stat_activity
	WHERE query LIKE 'DO $$BEGIN WHILE NOT EXISTS (SELECT FROM stop)%'
	  AND state = 'active'};
$node->poll_query_until('postgres', "SELECT ($reading) = 4")
  or die 'the readers did not start';
my $before = $node->safe_psql('postgres',
	'SELECT stats_reset FROM pg_lockstat_status');
my $after = $node->safe_psql('postgres',
	'SELECT pg_lockstat_reset()');
is($node->safe_psql('postgres', $reading),
	'4', 'a reset returns while four readers keep reading');
is($node->safe_psql('postgres',
		"SELECT stats_reset = '$after' AND stats_reset > '$before' FROM pg_lockstat_status"),
	't', 'and it took effect: stats_reset is the time it returned');
$node->safe_psql('postgres', "INSERT INTO stop VALUES ('readers')");
$_->quit foreach @readers;

$node->safe_psql('postgres', "SELECT lockstat_test_lwlock('exclusive', 7)");

# a read can be cancelled in the middle of its sum, and the session and
# the server go on: gdb stops the reader in the loop over the process
# slots, a cancel arrives, and the loop's interrupt check ends the read
SKIP:
{
	my $why = LockStatTest::Gdb::gdb_unavailable();
	skip $why, 3 if $why;

	my $reader = $node->background_psql('postgres', on_error_stop => 0);
	my $pid = $reader->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	my $g = LockStatTest::Gdb::gdb_attach($reader, 'lockstat_add_live_rows');
	$reader->query_until(qr/started/,
		"\\echo started\nSELECT count(*) FROM pg_lwlock_stats;\n\\echo done\n");
	LockStatTest::Gdb::gdb_wait($g, qr/Breakpoint 1,/);
	is($node->safe_psql('postgres', "SELECT pg_cancel_backend($pid)"),
		't', 'a cancel is sent to the reader stopped inside its sum');
	LockStatTest::Gdb::gdb_detach($g);
	$reader->query_until(qr/done/, '');
	like($reader->{stderr}, qr/canceling statement due to user request/,
		'the read is cancelled');
	$reader->{stderr} = '';
	my $tranches = $node->safe_psql('postgres',
		'SELECT count(*) FROM pg_lwlock_stats');
	is($reader->query_safe('SELECT count(*) FROM pg_lwlock_stats'),
		$tranches, 'the same session reads every tranche again at once');
	$reader->quit;
}

# nothing of the cancelled read stays held: processes still exit (they
# take exit_lock) and readers still sum
$node->safe_psql('postgres', 'SELECT 1') foreach 1 .. 3;
is($node->safe_psql('postgres',
		q{SELECT count(*) > 0 AND bool_and(tranche_id >= 0) FROM pg_lwlock_stats}),
	't', 'a fresh read after three more connections works');
is($node->safe_psql('postgres', $stats), '0|7|0',
	'and still shows the counts since the reset');

$node->stop;
done_testing();
