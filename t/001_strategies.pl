# Copyright (c) 2026, pg_lockstat developers
#
# Every pg_lockstat.spin_strategy boots, pg_lockstat_status reports the
# strategy that the server core actually uses, and a contended spinlock
# works under each of them: two sessions that wait for a held test spinlock
# (certain contention, whatever the machine's speed) lose no increment made
# under it.  An unknown strategy stops the server with a message listing
# the valid values.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $node = LockStatTest::new_node('strategies');

foreach my $strategy (qw(default tas ttas_spin ttas ttas_backoff))
{
	is(LockStatTest::restart_with_strategy($node, $strategy),
		$strategy, "spin_strategy $strategy is in force after restart");
	is($node->safe_psql('postgres', 'SHOW pg_lockstat.spin_strategy'),
		$strategy, "SHOW reports $strategy");

	# two sessions wait for the test spinlock while a holder keeps it, then
	# contend for it, holding it briefly
	my $before =
	  $node->safe_psql('postgres', 'SELECT lockstat_test_spin_counter()');
	# (connected first, so that the hold lasts only while they start)
	my @h;
	foreach my $i (1 .. 2)
	{
		push @h,
		  $node->background_psql('postgres', on_error_stop => 1);
	}
	my $holder = LockStatTest::hold_spinlock($node);
	my $since = LockStatTest::spin_waits($node);
	foreach my $h (@h)
	{
		$h->query_until(qr/started/,
			"\\echo started\nSELECT lockstat_test_spinlock(2000, 2);\n");
	}
	LockStatTest::wait_for_spin_waiters($node, $since, 2, release => 1);
	foreach my $h (@h)
	{
		$h->quit;
	}
	$holder->quit;
	is( $node->safe_psql('postgres', 'SELECT lockstat_test_spinlock(10)'),
		'10', "spinlock still usable under $strategy");
	is( $node->safe_psql('postgres', 'SELECT lockstat_test_spin_counter()'),
		$before + 1 + 2 * 2000 + 10,
		"$strategy: no increment under the spinlock lost (1 hold + 2 x 2000 + 10)");
}

# an unknown strategy refuses to start, naming the valid values
$node->stop;
$node->append_conf('postgresql.conf',
	"pg_lockstat.spin_strategy = 'fastest'");
my $logstart = -s $node->logfile;
my $ret = $node->start(fail_ok => 1);
ok(!$ret, 'server refuses to start with an unknown spin_strategy');
my $log = slurp_file($node->logfile, $logstart);
like(
	$log,
	qr/invalid value for parameter "pg_lockstat.spin_strategy": "fastest"/,
	'log names the parameter and the bad value');
like(
	$log,
	qr/Available values: default, tas, ttas_spin, ttas, ttas_backoff\./,
	'log lists the valid values');

# an invalid pg_lockstat.max_tranches would size shared memory wrongly:
# it stops the server too, instead of a WARNING and the default
foreach my $bad ('10', 'abc', '70000')
{
	$node->append_conf('postgresql.conf',
		"pg_lockstat.spin_strategy = 'ttas'\npg_lockstat.max_tranches = '$bad'");
	$logstart = -s $node->logfile;
	ok(!$node->start(fail_ok => 1),
		"server refuses to start with max_tranches = '$bad'");
	like(
		slurp_file($node->logfile, $logstart),
		qr/FATAL:  .*"pg_lockstat.max_tranches"/,
		"the FATAL message names pg_lockstat.max_tranches ('$bad')");
}
$node->append_conf('postgresql.conf', "pg_lockstat.max_tranches = 200");

# and starts again once the values are fixed
$node->append_conf('postgresql.conf', "pg_lockstat.spin_strategy = 'ttas'");
$node->start;
is( $node->safe_psql(
		'postgres', 'SELECT spin_strategy, max_tranches FROM pg_lockstat_status'),
	'ttas|200',
	'server starts again with valid settings, and they are in force');
$node->stop;

done_testing();
