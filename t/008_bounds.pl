# Copyright (c) 2026, pg_lockstat developers
#
# Bounds: more tranches than pg_lockstat.max_tranches holds (including
# tranches registered after start-up with LWLockNewTrancheId), max_tranches
# and max_connections at their extremes, and counters near and beyond 2^63.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

# --- max_tranches at its minimum: every extension tranche overflows -------
# The range of max_tranches depends on the major (the first tranche ID for
# extensions: 95 on 18, 75 on 15); pg_settings shows it.
my $node = LockStatTest::new_node('bounds');
my ($min_tranches, $max_tranches) = split /\|/, $node->safe_psql('postgres',
	q{SELECT min_val, max_val FROM pg_settings
	  WHERE name = 'pg_lockstat.max_tranches'});
$node->append_conf('postgresql.conf',
	"pg_lockstat.max_tranches = $min_tranches\n");
$node->restart;

is($node->safe_psql('postgres', 'SELECT max_tranches FROM pg_lockstat_status'),
	$min_tranches, "max_tranches at its minimum, $min_tranches");

# The overflow row also holds pg_lockstat's own tranche, whose lock readers
# take shared and resets exclusive: compare exclusive counts before and after.
my $overflow_ex =
  q{SELECT coalesce(sum(ex_acquires), 0) FROM pg_lwlock_stats WHERE tranche = 'overflow'};
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my $before = $node->safe_psql('postgres', $overflow_ex);
$node->safe_psql('postgres',
	q{SELECT lockstat_test_lwlock('exclusive', 100),
	         lockstat_test_dynamic_tranches(20, 10)});
my ($ret, $stdout, $stderr) = $node->psql('postgres', qq{
	SELECT tranche_id IS NULL, ex_acquires - $before FROM pg_lwlock_stats
	WHERE tranche = 'overflow';
	SELECT count(*) FROM pg_lwlock_stats WHERE tranche = 'overflow'});
is($stdout, "t|300\n1",
	'named and dynamic tranches beyond the table are summed in one overflow row'
);
my @warnings = ($stderr =~ /WARNING:  some LWLock tranches are not counted separately/g);
is(scalar(@warnings), 1, 'the overflow warns once per backend');
like($stderr, qr/HINT:  Raise "pg_lockstat.max_tranches"/,
	'the warning says what to do');
is( $node->safe_psql(
		'postgres',
		qq{SELECT count(*) FROM pg_lwlock_stats
		  WHERE tranche_id >= $min_tranches OR tranche_id < 0}),
	'0',
	'no row beyond the table');

# tranche IDs keep growing after start-up; still no out-of-bounds access
$node->safe_psql('postgres',
	'SELECT lockstat_test_dynamic_tranches(1000, 1)');
is($node->safe_psql('postgres', $overflow_ex) - $before,
	1300, '1000 more dynamic tranches are counted in the overflow row too');
$node->stop;

# --- counters near 2^63: never negative, saturate at the bigint maximum ----
$node = LockStatTest::new_node('counters');
$node->safe_psql('postgres', q{SELECT lockstat_test_lwlock('shared', 1)});
my $tid = $node->safe_psql('postgres',
	q{SELECT tranche_id FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'});
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my $near = '9223372036854775800';    # 2^63 - 8
is( $node->safe_psql(
		'postgres', qq{
	SELECT lockstat_test_raise_counter($tid, $near);
	SELECT lockstat_test_lwlock('shared', 5);
	SELECT sh_acquires FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'}),
	"\n5\n9223372036854775805",
	'a counter just below 2^63 is exact');
is( $node->safe_psql(
		'postgres', qq{
	SELECT lockstat_test_lwlock('shared', 10);
	SELECT sh_acquires FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'}),
	"10\n9223372036854775807",
	'beyond 2^63 - 1 the value saturates at the bigint maximum, not negative');
is( $node->safe_psql(
		'postgres', qq{
	SELECT pg_lockstat_reset() IS NOT NULL;
	SELECT lockstat_test_lwlock('shared', 3);
	SELECT sh_acquires FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'}),
	"t\n3\n3",
	'after a reset the huge counter counts from zero again');
($ret, $stdout, $stderr) = $node->psql('postgres',
	"SELECT lockstat_test_lwlock('shared', 5); SELECT lockstat_test_raise_counter($tid, 1)");
like($stderr, qr/counters never go down/, 'the setter cannot lower a counter');
$node->stop;

# --- max_connections at its minimum and at 2000; max_tranches at its max ---
foreach my $conf (
	[
		'min connections',
		"max_connections = 1\nsuperuser_reserved_connections = 0\n"
		  . (LockStatTest::server_major() >= 16 ? "reserved_connections = 0\n" : '')
		  . "max_wal_senders = 0"
	],
	[ '2000 connections', "max_connections = 2000" ],
	[ 'max tranches', "max_connections = 10\npg_lockstat.max_tranches = $max_tranches" ])
{
	my ($label, $extra) = @$conf;
	my $n = LockStatTest::new_node("size_" . ($label =~ s/ /_/gr), $extra);
	is( $n->safe_psql(
			'postgres', q{
		SELECT pg_lockstat_reset() IS NOT NULL;
		SELECT lockstat_test_lwlock('exclusive', 42);
		SELECT ex_acquires FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'}),
		"t\n42\n42",
		"$label: counting is exact");
	cmp_ok(
		$n->safe_psql('postgres', 'SELECT process_slots FROM pg_lockstat_status'),
		'>', 0, "$label: process slots exist");
	$n->stop;
}

done_testing();
