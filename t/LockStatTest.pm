# Copyright (c) 2026, pg_lockstat developers
#
# Helpers shared by pg_lockstat's TAP tests.

package LockStatTest;

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;

# A started node that preloads pg_lockstat and lockstat_test, with both
# extensions created in database "postgres".  $extra_conf is appended to
# postgresql.conf before the start.
sub new_node
{
	my ($name, $extra_conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);

	$node->init;
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'pg_lockstat,lockstat_test'\n"
		  . ($extra_conf // ''));
	$node->start;
	$node->safe_psql('postgres',
		'CREATE EXTENSION pg_lockstat; CREATE EXTENSION lockstat_test;');
	return $node;
}

1;
