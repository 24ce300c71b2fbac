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

# A holder session takes the lockstat_test LWLock exclusively for $hold_us
# microseconds, and a waiter session asks for it once in shared mode.
# Returns (holder, waiter) once the waiter sleeps behind the holder; quitting
# both lets the waiter have the lock.
sub block_waiter
{
	my ($node, $hold_us) = @_;
	my $holder = $node->background_psql('postgres');
	my $waiter = $node->background_psql('postgres');

	$holder->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_lwlock('exclusive', 1, $hold_us);\n");
	$node->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE query LIKE 'SELECT lockstat_test_lwlock(''exclusive''%' AND state = 'active'})
	  or die 'holder did not start';
	$waiter->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_lwlock('shared', 1);\n");
	$node->poll_query_until('postgres',
		q{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE wait_event = 'lockstat_test'})
	  or die 'waiter did not block';
	return ($holder, $waiter);
}

1;
