# Copyright (c) 2026, pg_lockstat developers
#
# pg_lwlock_instance_stats: each lock of the fixed main LWLock array is
# counted on its own, exactly, with its partition number; pg_lwlock_stats
# shows the same acquisitions under the tranche; a hot partition stands out
# in tranche_acquire_pct; a reset clears the instance rows too.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $node = LockStatTest::new_node('instance_stats');

# AutoFile (main array index 35 on PostgreSQL 18) is taken only by ALTER
# SYSTEM, so its counts are ours alone.  A lock has a row once it is taken:
# take it, then the row must be there and name the tranche.
my $autofile = 35;
$node->safe_psql('postgres',
	"SELECT lockstat_test_main_lwlock($autofile, 'shared', 1)");
is( $node->safe_psql(
		'postgres',
		"SELECT coalesce(string_agg(tranche, ','), 'no row')
		 FROM pg_lwlock_instance_stats WHERE main_index = $autofile"),
	'AutoFile',
	'main array index 35 is AutoFile');
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
$node->safe_psql('postgres',
	"SELECT lockstat_test_main_lwlock($autofile, 'exclusive', 1234)");
$node->safe_psql('postgres',
	"SELECT lockstat_test_main_lwlock($autofile, 'shared', 56)");
is( $node->safe_psql(
		'postgres',
		"SELECT tranche, partition IS NULL, main_index, ex_acquires, sh_acquires, blocks
		 FROM pg_lwlock_instance_stats WHERE main_index = $autofile"),
	"AutoFile|t|$autofile|1234|56|0",
	'an individual LWLock: exact counts, no partition');
is( $node->safe_psql(
		'postgres',
		q{SELECT ex_acquires, sh_acquires FROM pg_lwlock_stats
		  WHERE tranche = 'AutoFile'}),
	'1234|56',
	'pg_lwlock_stats shows the same counts under the tranche');

# a partition of BufferMapping and one of LockManager, found through the
# view's own main_index and partition
my $bm_offset = $node->safe_psql(
	'postgres',
	q{SELECT DISTINCT main_index - partition FROM pg_lwlock_instance_stats
	  WHERE tranche = 'BufferMapping'});
like($bm_offset, qr/^\d+$/, 'one BufferMapping offset in the main array');
my $lm_offset = $bm_offset + 128;
my $p = 77;
$node->safe_psql('postgres',
	"SELECT lockstat_test_main_lwlock($bm_offset + $p, 'shared', 100000)");
$node->safe_psql('postgres',
	"SELECT lockstat_test_main_lwlock($lm_offset + 15, 'exclusive', 321)");
is( $node->safe_psql(
		'postgres',
		qq{SELECT sh_acquires >= 100000, tranche_acquire_pct > 50
		   FROM pg_lwlock_instance_stats
		   WHERE tranche = 'BufferMapping' AND partition = $p}),
	't|t',
	'a hot BufferMapping partition stands out');
is( $node->safe_psql(
		'postgres',
		q{SELECT min(partition) >= 0, max(partition) <= 127,
				 count(*) = count(DISTINCT partition)
		  FROM pg_lwlock_instance_stats WHERE tranche = 'BufferMapping'}),
	't|t|t',
	'BufferMapping partitions are numbered 0 to 127, one row each');
is( $node->safe_psql(
		'postgres',
		q{SELECT tranche, ex_acquires >= 321, main_index
		  FROM pg_lwlock_instance_stats
		  WHERE tranche = 'LockManager' AND partition = 15}),
	"LockManager|t|" . ($lm_offset + 15),
	'the last LockManager partition');
# partitions read first, the tranche total afterwards: never less
foreach my $tranche ('BufferMapping', 'LockManager')
{
	my $parts = $node->safe_psql('postgres',
		"SELECT sum(sh_acquires + ex_acquires) FROM pg_lwlock_instance_stats
		 WHERE tranche = '$tranche'");
	my $total = $node->safe_psql('postgres',
		"SELECT sh_acquires + ex_acquires FROM pg_lwlock_stats
		 WHERE tranche = '$tranche'");
	cmp_ok($total, '>=', $parts,
		"$tranche: the tranche total includes its partitions ($total >= $parts)");
}

# pg_lwlock_backend_stats shows a process's main-array locks under their
# tranche, never as rows of their own
my $bg = $node->background_psql('postgres');
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->query_safe("SELECT lockstat_test_main_lwlock($autofile, 'exclusive', 77)");
is( $node->safe_psql(
		'postgres',
		"SELECT tranche_id, ex_acquires FROM pg_lwlock_backend_stats
		 WHERE pid = $pid AND tranche = 'AutoFile'"),
	"$autofile|77",
	'the backend view counts the lock under its tranche');
is( $node->safe_psql(
		'postgres',
		q{SELECT count(*) FROM pg_lwlock_backend_stats
		  WHERE tranche_id >= (SELECT max_tranches FROM pg_lockstat_status)}),
	'0',
	'the backend view has no row beyond the tranche rows');
$bg->quit;

# bad arguments of the test function
my ($rc, $stdout, $stderr) = $node->psql('postgres',
	"SELECT lockstat_test_main_lwlock(-1, 'shared', 1)");
like($stderr, qr/main_index must be between 0 and \d+/, 'index below range');
($rc, $stdout, $stderr) = $node->psql('postgres',
	"SELECT lockstat_test_main_lwlock(100000, 'shared', 1)");
like($stderr, qr/main_index must be between 0 and \d+/, 'index above range');

# a reset clears the instance rows
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM pg_lwlock_instance_stats WHERE main_index = $autofile"),
	'0',
	'after a reset the lock has no row until it is taken again');

done_testing();
