# Copyright (c) 2026, pg_lockstat developers
#
# Lifecycle: preloaded together with pg_stat_statements in both orders
# (both work, and pg_stat_statements' tranche appears by name), and DROP
# EXTENSION followed by CREATE EXTENSION.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $i = 0;
foreach my $order ('pg_lockstat,pg_stat_statements,lockstat_test',
	'pg_stat_statements,lockstat_test,pg_lockstat')
{
	my $node = PostgreSQL::Test::Cluster->new('with_pgss_' . ++$i);
	$node->init;
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = '$order'");
	$node->start;
	$node->safe_psql('postgres',
		'CREATE EXTENSION pg_lockstat; CREATE EXTENSION lockstat_test; CREATE EXTENSION pg_stat_statements;'
	);
	$node->safe_psql('postgres',
		q{SELECT pg_lockstat_reset(); SELECT pg_stat_statements_reset();
		  SELECT lockstat_test_lwlock('exclusive', 25)});

	is( $node->safe_psql(
			'postgres', q{
		SELECT ex_acquires FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'}),
		'25', "$order: pg_lockstat counts exactly");
	is( $node->safe_psql(
			'postgres', q{
		SELECT calls FROM pg_stat_statements
		WHERE query LIKE 'SELECT lockstat_test_lwlock%'}),
		'1', "$order: pg_stat_statements works");
	# pg_stat_statements takes its own LWLock for every statement it records
	is( $node->safe_psql(
			'postgres', q{
		SELECT count(*) FROM pg_lwlock_stats
		WHERE tranche = 'pg_stat_statements' AND tranche_id IS NOT NULL
		  AND sh_acquires + ex_acquires > 0}),
		'1', "$order: pg_stat_statements' tranche appears by name");

	# DROP EXTENSION and CREATE EXTENSION again: counting never stopped
	$node->safe_psql('postgres', 'DROP EXTENSION pg_lockstat');
	$node->safe_psql('postgres', q{SELECT lockstat_test_lwlock('exclusive', 5)});
	$node->safe_psql('postgres', 'CREATE EXTENSION pg_lockstat');
	is( $node->safe_psql(
			'postgres', q{
		SELECT ex_acquires FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'}),
		'30', "$order: counters survive DROP and CREATE EXTENSION");
	is( $node->safe_psql(
			'postgres', q{SELECT has_table_privilege('pg_read_all_stats',
			'pg_lwlock_stats', 'SELECT')}),
		't', "$order: privileges are set again by CREATE EXTENSION");
	$node->stop;
}

done_testing();
