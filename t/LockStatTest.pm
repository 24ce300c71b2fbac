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

# Start one session for each SQL text in @sqls, all waiting at a barrier (an
# advisory lock with key $key that a gate session holds) until every one of
# them is there, then let them go together.  Returns the sessions, still
# running their SQL; quit them to wait for the end.
sub start_together
{
	my ($node, $key, @sqls) = @_;
	my $gate = $node->background_psql('postgres');
	$gate->query_safe("SELECT pg_advisory_lock($key)");

	my @sessions;
	foreach my $sql (@sqls)
	{
		my $h = $node->background_psql('postgres');
		$h->query_until(qr/started/,
				"\\echo started\n"
			  . "SELECT pg_advisory_lock_shared($key);\n"
			  . "SELECT pg_advisory_unlock_shared($key);\n"
			  . "$sql\n");
		push @sessions, $h;
	}
	my $n = scalar(@sqls);
	$node->poll_query_until(
		'postgres',
		qq{SELECT count(*) = $n FROM pg_stat_activity
		   WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'}
	) or die 'sessions did not reach the barrier';
	$gate->query_safe("SELECT pg_advisory_unlock($key)");
	$gate->quit;
	return @sessions;
}

1;
