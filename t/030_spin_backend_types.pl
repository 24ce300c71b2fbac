# Copyright (c) 2026, pg_lockstat developers
#
# pg_spinlock_backend_type_stats: a contended spin wait is counted under the
# kind of process that waited.  One wait of a client backend and one of a
# parallel worker at the test spinlock's call site (both certain: a holder
# keeps the spinlock until both spin) show as one wait under each kind,
# exactly; per call site the kinds add up to pg_spinlock_stats, column by
# column, and the longest wait is the largest of the kinds'; the counts of
# processes that have exited stay; a reset empties the view, and a wait
# after it counts under its own kind only (the reset baseline is kept per
# kind); a role without pg_read_all_stats is refused.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $node = LockStatTest::new_node('spin_backend_types');

my $at_site = q{file = 'lockstat_test.c' AND func = 'lockstat_test_spinlock'};
my $kinds = qq{SELECT backend_type, contended FROM pg_spinlock_backend_type_stats
	WHERE $at_site ORDER BY backend_type};

# One spin wait for the test spinlock in each session of @sql (psql input
# that ends with the call of lockstat_test_spinlock(1)): a holder, not
# counted, keeps the spinlock until all of them spin, then lets them go.
# Returns once every session's statement has finished.
sub one_wait_each
{
	my @sql = @_;
	my @h = map { $node->background_psql('postgres') } @sql;
	my $holder = LockStatTest::hold_spinlock($node);
	my $since = LockStatTest::spin_waits($node);
	$h[$_]->query_until(qr/started/, "\\echo started\n$sql[$_]\n")
	  foreach 0 .. $#h;
	LockStatTest::wait_for_spin_waiters($node, $since, scalar(@h),
		release => 1);
	$_->quit foreach @h;
	$holder->quit;
	return;
}

my $in_client = 'SELECT lockstat_test_spinlock(1);';
my $in_worker =
  LockStatTest::single_copy_gather_sql() . 'SELECT lockstat_test_spinlock(1);';

$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
one_wait_each($in_client, $in_worker);

is($node->safe_psql('postgres', $kinds),
	"client backend|1\nparallel worker|1",
	'one wait under each kind of process, the worker and the session exited');

# The kinds add up to the site's row of pg_spinlock_stats, every counter
# column (those of the counter table, between func and max_wait_time), and
# max_wait_time is the largest of theirs.  Only these sessions wait at this
# call site, so both views read the same waits.  The counts are compared
# exactly; a time (double precision milliseconds, of integer nanoseconds)
# within a relative 1e-12, the rounding of a sum of two milliseconds against
# the milliseconds of their sum.
my @counters = map { [ split /\|/ ] } split /\n/, $node->safe_psql(
	'postgres', q{
	SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
	WHERE attrelid = 'pg_spinlock_stats'::regclass AND attnum > 3
	  AND attname <> 'max_wait_time' ORDER BY attnum});
cmp_ok(scalar(@counters), '>=', 6, 'the counter columns of pg_spinlock_stats');
my $differ = join ' OR ', 's.max_wait_time IS DISTINCT FROM k.max_wait_time',
  map {
	my ($c, $type) = @$_;
	$type eq 'double precision'
	  ? "abs(s.$c - k.$c) > 1e-12 * greatest(abs(s.$c), 1e-6)"
	  : "s.$c IS DISTINCT FROM k.$c"
  } @counters;
is( $node->safe_psql(
		'postgres', qq{
	WITH k AS (
		SELECT file, line, func,
			   } . join(', ', map { "sum($_->[0]) AS $_->[0]" } @counters) . qq{,
			   max(max_wait_time) AS max_wait_time
		FROM pg_spinlock_backend_type_stats WHERE $at_site
		GROUP BY file, line, func)
	SELECT count(*), count(*) FILTER (WHERE $differ)
	FROM pg_spinlock_stats s JOIN k USING (file, line, func)
	WHERE s.$at_site}),
	'1|0',
	'per call site, the kinds add up to pg_spinlock_stats, column by column');

# A reset: the view is empty, and a wait after it is counted under its kind
# alone, with nothing left of the other kind's counts before the reset.
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
is($node->safe_psql('postgres', $kinds), '', 'a reset empties the view');
one_wait_each($in_worker);
is($node->safe_psql('postgres', $kinds),
	'parallel worker|1', 'after the reset, the one new wait under its kind');
one_wait_each($in_client, $in_client);
is($node->safe_psql('postgres', $kinds),
	"client backend|2\nparallel worker|1",
	'two more waits of client backends');

# the same audience as pg_spinlock_stats
$node->safe_psql('postgres', 'CREATE ROLE nobody LOGIN');
my ($ret, $stdout, $stderr) = $node->psql(
	'postgres',
	"\\set VERBOSITY verbose\nSELECT count(*) FROM pg_spinlock_backend_type_stats",
	extra_params => [ '-U', 'nobody' ]);
like($stderr, qr/ERROR:  42501: permission denied/,
	'a role without pg_read_all_stats is refused (42501)');
$node->safe_psql('postgres', 'GRANT pg_read_all_stats TO nobody');
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) > 0 FROM pg_spinlock_backend_type_stats WHERE $at_site",
		extra_params => [ '-U', 'nobody' ]),
	't',
	'a member of pg_read_all_stats reads it');

$node->stop;
done_testing();
