# Copyright (c) 2026, pg_lockstat developers
#
# max_wait_time of pg_spinlock_stats covers every wait counted since the
# last reset, even when the reset runs while the wait is being added or
# while a reader reads: a site with contended > 0 never shows
# max_wait_time = 0.  Ways a reset could lose a wait's duration: a wait that
# began before the reset (and read the old reset epoch) but is counted after
# it; a reader that released the lock between the baselines and the
# counters (a reset in between started a new epoch that the reader did not
# look at).  And a reset or a read that meets a waiter stalled while the
# core adds its counts waits for it, up to 2 s, then fails with 55P03 before
# it has reset anything.
#
# The end of a wait is core code (finish_spin_delay() in s_lock.c, patch
# 0004), so the debugger stops the waiter at lines of the patched s_lock.c,
# found in the patch.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

use LockStatTest;

my $node = LockStatTest::new_node('spin_max_wait_reset',
	"pg_lockstat.spin_strategy = 'ttas'\n");

my $where = q{WHERE file = 'lockstat_test.c' AND func = 'lockstat_test_spinlock'};

# 1. Readers during resets in a tight loop and spinlock contention: no read
# may show contended waits without a longest wait, at any site (the test
# spinlock's and the LWLock wait-list lock's).  Before the fix, about one
# read in 20000 did, some 15 in 10 s on 2 cores.
{
	my @work = (
		(   q{DO $$DECLARE t timestamptz := clock_timestamp(); BEGIN
				WHILE clock_timestamp() < t + interval '10 s' LOOP
					PERFORM lockstat_test_spinlock(10000, 20); END LOOP; END$$;}
		) x 3,
		(   q{DO $$DECLARE t timestamptz := clock_timestamp(); BEGIN
				WHILE clock_timestamp() < t + interval '10 s' LOOP
					PERFORM pg_lockstat_reset(); END LOOP; END$$;}
		) x 2);
	my @h;
	foreach my $w (@work)
	{
		push @h, $node->background_psql('postgres');
		$h[-1]->query_until(qr/started/, "\\echo started\n$w\n");
	}
	my $bad = $node->safe_psql(
		'postgres', qq{
		CREATE TEMP TABLE bad (r text);
		DO \$\$DECLARE t timestamptz := clock_timestamp(); BEGIN
			WHILE clock_timestamp() < t + interval '10 s' LOOP
				INSERT INTO bad SELECT s::text FROM pg_spinlock_stats s
				WHERE contended > 0 AND max_wait_time = 0;
			END LOOP; END\$\$;
		SELECT count(*) FROM bad;});
	$_->quit foreach @h;
	is($bad, '0',
		'no read during resets shows contended waits with max_wait_time 0');
}

# 2. A wait stalled in finish_spin_delay() just before its counts are added,
# while a reset runs (a debugger holds it there; skipped without gdb).  The
# wait began before the reset, so it read the old epoch.
SKIP:
{
	my $gdb = `command -v gdb 2>/dev/null`;
	chomp $gdb;
	skip 'gdb not available', 2 unless $gdb;

	$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
	# stalled where the wait's duration is taken, before its counts
	my $st = LockStatTest::stall_waiter($node, $gdb,
		LockStatTest::s_lock_line(qr/INSTR_TIME_SET_CURRENT\(waited\);/));
	# the wait has ended and is about to be added: reset now
	$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
	LockStatTest::release_waiter($st);
	LockStatTest::end_stall($st);
	ok($st->{attached}, 'gdb stopped the waiter in finish_spin_delay()');

	is( $node->safe_psql(
			'postgres',
			"SELECT contended, max_wait_time > 0,
				max_wait_time * 1000 >= (SELECT max(bucket_lower_us)
					FROM pg_spinlock_wait_histogram $where)
			 FROM pg_spinlock_stats $where"),
		'1|t|t',
		'a wait added while a reset ran is in max_wait_time after it');
}

# 3. A waiter stalled inside the window where its entry's changecount is odd
# (a debugger holds it there; skipped without gdb).  A reset that meets it
# waits: one that waits past 2 s fails with 55P03 before it has reset
# anything, and one that the waiter releases after 0.5 s succeeds.
SKIP:
{
	my $gdb = `command -v gdb 2>/dev/null`;
	chomp $gdb;
	skip 'gdb not available', 6 unless $gdb;

	$node->safe_psql('postgres',
		"SELECT pg_lockstat_reset(); SELECT lockstat_test_lwlock('exclusive', 7)");
	my $stats_reset =
	  $node->safe_psql('postgres', 'SELECT stats_reset FROM pg_lockstat_status');

	# stalled where it counts the wait, inside the window
	my $st = LockStatTest::stall_waiter($node, $gdb,
		LockStatTest::s_lock_line(qr/c->contended\+\+;/));
	ok($st->{out} =~ /Breakpoint 1,/,
		'gdb stopped the waiter with its changecount odd');

	my ($ret, $stdout, $stderr) =
	  $node->psql('postgres',
		"\\set VERBOSITY verbose\nSELECT pg_lockstat_reset()");
	like(
		$stderr,
		qr/ERROR:  55P03: could not read pg_lockstat spin wait counters consistently/,
		'a reset that waits more than 2 s for the stalled waiter fails');
	is( $node->safe_psql(
			'postgres',
			"SELECT s.stats_reset = '$stats_reset' AND l.ex_acquires >= 7
			 FROM pg_lockstat_status s, pg_lwlock_stats l
			 WHERE l.tranche = 'lockstat_test'"),
		't',
		'the failed reset reset nothing: stats_reset and the LWLock counters kept');

	my ($rout, $rerr) = ('', '');
	my $r = IPC::Run::start(
		[
			$node->installed_command('psql'), '-XAtq', '-d',
			$node->connstr('postgres'), '-c',
			'SELECT pg_lockstat_reset() IS NOT NULL'
		],
		'>' => \$rout,
		'2>' => \$rerr,
		IPC::Run::timeout(60));
	usleep(500_000);
	LockStatTest::release_waiter($st);
	$r->finish;
	is($rout, "t\n", 'a reset that the waiter releases after 0.5 s succeeds');
	is($rerr, '', 'and reports no error');
	LockStatTest::end_stall($st);

	is( $node->safe_psql(
			'postgres',
			"SELECT (SELECT coalesce(sum(count), 0) FROM pg_spinlock_wait_histogram $where)
				= (SELECT coalesce(sum(contended), 0) FROM pg_spinlock_stats $where)"),
		't',
		'afterwards the histogram still adds up to contended');
}

done_testing();
