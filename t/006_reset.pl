# Copyright (c) 2026, pg_lockstat developers
#
# Reset semantics under concurrency:
# - an acquisition that is blocked across a reset counts both its block and
#   its acquisition after the reset, so blocks never exceed acquisitions;
# - readers that keep reading do not starve a reset, and a long read can be
#   cancelled (statement_timeout).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use LockStatTest;

# a large table, so that reading it takes a while: 2049 rows per process
my $node = LockStatTest::new_node('reset',
	"pg_lockstat.max_tranches = 2048\nmax_connections = 200");

my $stats = q{SELECT sh_acquires, ex_acquires, blocks FROM pg_lwlock_stats
	WHERE tranche = 'lockstat_test'};

# holder takes the lock exclusively for 1.5 s; waiter blocks behind it;
# the reset happens while the waiter sleeps
my ($holder, $waiter) = LockStatTest::block_waiter($node, 1000000);
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$holder->quit;
$waiter->quit;

is($node->safe_psql('postgres', $stats),
	'1|0|1',
	'a block that straddles the reset is counted with its acquisition');

# four readers in a loop must not starve a reset
my @readers;
foreach my $i (1 .. 4)
{
	my $h = $node->background_psql('postgres');
	$h->query_until(qr/started/,
		"\\echo started\n"
		  . LockStatTest::watch_sql('SELECT count(*) FROM pg_lwlock_stats',
			count => 400));
	push @readers, $h;
}
my $t0 = time();
my $ok = $node->safe_psql('postgres',
	"SET statement_timeout = '10s'; SELECT pg_lockstat_reset() IS NOT NULL");
my $elapsed = time() - $t0;
is($ok, 't', 'reset succeeds while readers keep reading');
cmp_ok($elapsed, '<', 10, "reset took ${elapsed}s, under the timeout");

# a read is cancelled by statement_timeout, and the next read works at once
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	"SET statement_timeout = '1ms'; SELECT count(*) FROM pg_lwlock_stats, generate_series(1, 100)");
like($stderr, qr/canceling statement due to statement timeout/,
	'statement_timeout cancels a read');

$_->quit foreach @readers;
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_lwlock_stats WHERE blocks < 0 OR sh_acquires < 0}),
	'0', 'a fresh read right after works, nothing negative');

$node->stop;
done_testing();
