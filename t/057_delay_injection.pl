# Copyright (c) 2026, pg_lockstat developers
#
# Delay injection (pg_lockstat.delay_tranche, delay_us, delay_mode): off by
# default; the refusals (an unknown tranche, a spinlock's call site, a delay
# out of range, a session SET of a reload setting, a non-superuser's ALTER
# SYSTEM); inside, every hold of the tranche lasts the delay or more and one
# delay is counted per acquisition of the tranche and none for other
# tranches; a failed conditional acquisition gets a delay before it (the
# control) and none inside (no hold), which tells where the delay runs
# without timing it; delay_us = 0 turns it off again.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;

my $node = LockStatTest::new_node('delay_injection');

sub injected
{
	return $node->safe_psql('postgres',
		'SELECT injected_delays FROM pg_lockstat_status');
}

# ALTER SYSTEM the three settings, reload, and wait until a new session
# has them in force.
sub set_delay
{
	my ($tranche, $us, $mode) = @_;
	$node->safe_psql('postgres',
		qq{ALTER SYSTEM SET pg_lockstat.delay_tranche = '$tranche';
		   ALTER SYSTEM SET pg_lockstat.delay_us = $us;
		   ALTER SYSTEM SET pg_lockstat.delay_mode = '$mode';
		   SELECT pg_reload_conf();});
	$node->poll_query_until('postgres',
		qq{SELECT current_setting('pg_lockstat.delay_tranche') = '$tranche'
				  AND current_setting('pg_lockstat.delay_us')::float8 = $us
				  AND current_setting('pg_lockstat.delay_mode') = '$mode'})
	  or die "the delay settings did not take effect";
	return;
}

# --- defaults ---------------------------------------------------------------

is( $node->safe_psql(
		'postgres',
		q{SELECT current_setting('pg_lockstat.delay_tranche'),
				 current_setting('pg_lockstat.delay_us'),
				 current_setting('pg_lockstat.delay_mode')}),
	'|0|inside',
	'defaults: no tranche, no delay, inside');
$node->safe_psql('postgres', q{SELECT lockstat_test_lwlock('exclusive', 10)});
is(injected(), '0', 'no delay injected while unset');

# --- refusals ---------------------------------------------------------------

my ($ret, $out, $err) = $node->psql('postgres',
	q{ALTER SYSTEM SET pg_lockstat.delay_tranche = 'no_such_tranche'},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/22023: unknown LWLock tranche "no_such_tranche"/,
	'an unknown tranche is refused (22023)');
($ret, $out, $err) = $node->psql('postgres',
	q{ALTER SYSTEM SET pg_lockstat.delay_tranche = 'LockBufHdr'});
like(
	$err,
	qr/unknown LWLock tranche "LockBufHdr".*HINT:  Only LWLocks can be delayed: a spinlock's holder must not wait\./s,
	'a spinlock call site is refused, and the hint says why');
($ret, $out, $err) = $node->psql('postgres',
	q{ALTER SYSTEM SET pg_lockstat.delay_us = 0.05},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/22023: invalid value for parameter "pg_lockstat.delay_us": 0.05.*must be 0 or between 0.1 and 1000/s,
	'a delay below 0.1 us is refused (22023)');
($ret, $out, $err) = $node->psql('postgres',
	q{ALTER SYSTEM SET pg_lockstat.delay_us = 1001});
like($err, qr/1001 is outside the valid range/, 'a delay above 1000 us is refused');
($ret, $out, $err) = $node->psql('postgres',
	q{SET pg_lockstat.delay_us = 1},
	extra_params => [ '-v', 'VERBOSITY=verbose' ]);
like($err, qr/55P02: parameter "pg_lockstat.delay_us" cannot be changed now/,
	'a session cannot SET it: every process of an experiment delays alike (55P02)');
$node->safe_psql('postgres', 'CREATE ROLE plain LOGIN');
($ret, $out, $err) = $node->psql('postgres',
	q{ALTER SYSTEM SET pg_lockstat.delay_us = 1},
	extra_params => [ '-U', 'plain', '-v', 'VERBOSITY=verbose' ]);
like($err, qr/42501: permission denied to set parameter "pg_lockstat.delay_us"/,
	'a non-superuser cannot ALTER SYSTEM it (42501)');
is(injected(), '0', 'nothing injected by the refused settings');

# --- inside -------------------------------------------------------------------

set_delay('lockstat_test', 1000, 'inside');
$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
my $before = injected();
$node->safe_psql('postgres',
	q{SET pg_lockstat.hold_sample_every = 1;
	  SELECT lockstat_test_lwlock('exclusive', 20);});
is(injected() - $before, 20,
	'inside: one delay per acquisition of the tranche, none for the other LWLocks the statement took');
is( $node->safe_psql(
		'postgres',
		q{SELECT sum(count), coalesce(sum(count) FILTER (WHERE bucket_upper_us <= 512), 0)
		  FROM pg_lwlock_hold_histogram
		  WHERE tranche = 'lockstat_test' AND mode = 'exclusive'}),
	'20|0',
	'inside: every timed hold of the tranche lasted the delay of 1000 us or more');

# A failed conditional acquisition: no hold, so no delay inside it.
my $holder = LockStatTest::hold_lwlock($node, 'exclusive');
$before = injected();
is($node->safe_psql('postgres', q{SELECT lockstat_test_lwlock('conditional', 5)}),
	'0', 'inside: the five conditional attempts fail while the lock is held');
is(injected() - $before, 0, 'inside: a failed attempt gets no delay');
LockStatTest::release_holds($node);
$holder->quit;

# --- before (the control) ------------------------------------------------------

set_delay('lockstat_test', 1000, 'before');
$holder = LockStatTest::hold_lwlock($node, 'exclusive');
$before = injected();
is($node->safe_psql('postgres', q{SELECT lockstat_test_lwlock('conditional', 5)}),
	'0', 'before: the five conditional attempts fail while the lock is held');
is(injected() - $before, 5,
	'before: each attempt gets its delay before it, the lock not held');
LockStatTest::release_holds($node);
$holder->quit;
$before = injected();
$node->safe_psql('postgres', q{SELECT lockstat_test_lwlock('exclusive', 7)});
is(injected() - $before, 7, 'before: one delay per acquisition of the tranche');

# --- off again -----------------------------------------------------------------

set_delay('lockstat_test', 0, 'inside');
$before = injected();
$node->safe_psql('postgres', q{SELECT lockstat_test_lwlock('exclusive', 10)});
is(injected() - $before, 0, 'delay_us = 0: no delay');

$node->stop;
done_testing();
