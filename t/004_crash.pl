# Copyright (c) 2026, pg_lockstat developers
#
# A backend killed with SIGKILL while it holds the lockstat_test LWLock: the
# postmaster reinitialises shared memory, pg_lockstat reinitialises with it,
# and the views work afterwards.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $node = LockStatTest::new_node('crash', "restart_after_crash = on");

my $reset_before =
  $node->safe_psql('postgres', 'SELECT stats_reset FROM pg_lockstat_status');

# a backend that holds the test lock (until released, which never comes):
# killed only once pg_stat_activity shows it holding
my $h = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $h->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
$h->query_until(qr/started/,
	"\\echo started\nSELECT lockstat_test_lwlock_hold('exclusive');\n");
$node->poll_query_until('postgres',
	qq{SELECT count(*) = 1 FROM pg_stat_activity
	   WHERE pid = $pid AND wait_event_type = 'Extension'})
  or die 'the backend did not take the test lock';

my $log_offset = -s $node->logfile;
kill 'KILL', $pid;
# psql loses its connection and exits
$h->{run}->finish;

# Wait for the crash-restart cycle to begin, then to finish.  Polling alone
# could succeed before the postmaster noticed the SIGKILL.
$node->wait_for_log(qr/all server processes terminated; reinitializing/,
	$log_offset);
$node->poll_query_until('postgres', 'SELECT 1', '1')
  or die 'server did not come back after SIGKILL';

my $log = slurp_file($node->logfile, $log_offset);
like($log, qr/terminated by signal 9/, 'the kill was seen as a crash');

is($node->safe_psql('postgres',
		qq{SELECT count(*) FROM pg_lockstat_status WHERE stats_reset > '$reset_before'}),
	'1', 'pg_lockstat reinitialised with shared memory');
$node->safe_psql('postgres', q{SELECT lockstat_test_lwlock('exclusive', 10)});
is($node->safe_psql('postgres',
		q{SELECT ex_acquires FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'}),
	'10', 'counting starts afresh after the restart');

$node->stop;
done_testing();
