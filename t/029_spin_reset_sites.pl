# Copyright (c) 2026, pg_lockstat developers
#
# The reset baseline of pg_spinlock_stats is kept per call site name, for at
# most max(256, 4 x pg_lockstat.max_spin_sites) names.  With
# max_spin_sites = 64 (256 names): four sessions register 60 call sites each
# (lockstat_test_spin_sites()) and pg_lockstat_reset() succeeds; a fifth
# registers 64 more, and the reset fails with 53400 and resets nothing: the
# LWLock counts and stats_reset stay as they were.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $node = LockStatTest::new_node('spin_reset_sites',
	"pg_lockstat.max_spin_sites = 64\n");
my $test_row = q{FROM pg_lwlock_stats WHERE tranche = 'lockstat_test'};

# Sessions at once, so that each has a table of call sites of its own: a
# session's table holds 64 entries, of its own waits and these names.
my @sessions = map { $node->background_psql('postgres') } 1 .. 5;
my $registered = 0;
for my $i (0 .. 3)
{
	$registered += $sessions[$i]->query_safe(
		'SELECT lockstat_test_spin_sites(' . (1000 + 100 * $i) . ', 60)');
}
cmp_ok($registered, '>=', 200, "four sessions registered $registered names");
is($node->safe_psql('postgres', 'SELECT pg_lockstat_reset() IS NOT NULL'),
	't', 'a reset with at most 256 names succeeds');

$node->safe_psql('postgres', q{SELECT lockstat_test_lwlock('exclusive', 300)});
my $reset_before = $node->safe_psql('postgres',
	'SELECT stats_reset FROM pg_lockstat_status');
is($sessions[4]->query_safe('SELECT lockstat_test_spin_sites(5000, 64)'),
	'64', 'a fifth session registers 64 names more');

my ($stdout, $stderr);
my $rc = $node->psql('postgres', 'SELECT pg_lockstat_reset()',
	stdout => \$stdout, stderr => \$stderr,
	extra_params => [ '-v', 'VERBOSITY=sqlstate' ]);
isnt($rc, 0, 'the reset fails');
like($stderr, qr/53400/, 'with SQLSTATE 53400');
$node->psql('postgres', 'SELECT pg_lockstat_reset()', stderr => \$stderr);
like($stderr,
	qr/too many spin wait call sites to reset.*\n.*DETAIL:.*call sites.*\n.*HINT:.*pg_lockstat\.max_spin_sites/,
	'the message names the limit and the setting to raise');
is( $node->safe_psql(
		'postgres',
		qq{SELECT ex_acquires, (SELECT stats_reset FROM pg_lockstat_status) = '$reset_before'
		   $test_row}),
	'300|t',
	'the failed reset left the LWLock counts and stats_reset as they were');
is($node->safe_psql('postgres', 'SELECT count(*) >= 0 FROM pg_spinlock_stats'),
	't', 'pg_spinlock_stats is still read');

$_->quit for @sessions;
$node->stop;
done_testing();
