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
# it has reset anything; one that the waiter lets go while it waits
# succeeds.  Every step waits for a state (reads seen, a waiter inside
# s_lock(), a breakpoint hit, a statement ended), never for a time.
#
# The end of a wait is core code (finish_spin_delay() in s_lock.c, patch
# 0004), so the debugger stops the waiter at lines of the patched s_lock.c,
# found in the patch.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;
use LockStatTest::Gdb;

my $node = LockStatTest::new_node('spin_max_wait_reset',
	"pg_lockstat.spin_strategy = 'ttas'\n");

my $where = q{WHERE file = 'lockstat_test.c' AND func = 'lockstat_test_spinlock'};

# 1. Readers during resets in a tight loop and spinlock contention: no read
# may show contended waits without a longest wait, at any site (the test
# spinlock's and the LWLock wait-list lock's).  Before the fix, about one
# read in 20000 did, some 15 in 10 s on 2 cores.  The spinners and resetters
# run until a row in table stop tells them to end; the reader reads until it
# has read $min_reads times and
# $wanted of its reads have shown contended waits at some site, so that the
# amount of work, not a time, is the same on every machine; the bound is the
# TAP timeout, which the counts then show.  The spinners take the
# spinlock once per call, so that it is free between two of a spinner's
# acquisitions and the others' spinning takes it: thousands of waits a
# second, against a handful when each call takes it 1000 times in a row.
{
	my $wanted = 500;
	my $min_reads = 20000;
	my $timeout = $PostgreSQL::Test::Utils::timeout_default;
	$node->safe_psql('postgres', 'CREATE UNLOGGED TABLE stop (what text)');
	my @h;
	foreach my $w (
		(   q{PERFORM sum(lockstat_test_spinlock(1, 5))
			  FROM generate_series(1, 200);}
		) x 3,
		(q{PERFORM pg_lockstat_reset();}) x 2)
	{
		# they outlive the reader, whose bound is the TAP timeout
		push @h, $node->background_psql('postgres', timeout => 2 * $timeout);
		$h[-1]->query_until(qr/started/,
			"\\echo started\n"
			  . "DO \$\$BEGIN WHILE NOT EXISTS (SELECT FROM stop) LOOP $w "
			  . "END LOOP; END\$\$;\n");
	}
	my ($seen, $reads, $bad, $bad_rows) = split /\|/, $node->safe_psql(
		'postgres', qq{
		CREATE TEMP TABLE bad (r text);
		CREATE TEMP TABLE tally (seen int, reads int);
		DO \$\$DECLARE
			seen int := 0;
			reads int := 0;
			nc bigint;
			b text[];
			deadline timestamptz := clock_timestamp() + interval '$timeout s';
		BEGIN
			WHILE (seen < $wanted OR reads < $min_reads)
				  AND clock_timestamp() < deadline LOOP
				SELECT count(*) FILTER (WHERE contended > 0),
					   array_agg(s::text) FILTER (WHERE contended > 0
												  AND max_wait_time = 0)
				INTO nc, b FROM pg_spinlock_stats s;
				reads := reads + 1;
				IF nc > 0 THEN seen := seen + 1; END IF;
				IF b IS NOT NULL THEN INSERT INTO bad SELECT unnest(b); END IF;
			END LOOP;
			INSERT INTO tally VALUES (seen, reads);
		END\$\$;
		SELECT seen, reads, (SELECT count(*) FROM bad),
			   (SELECT string_agg(r, '; ') FROM (SELECT r FROM bad LIMIT 5) f)
		FROM tally;});
	$node->safe_psql('postgres', "INSERT INTO stop VALUES ('all')");
	$_->quit foreach @h;
	note("$reads reads, $seen of them with contended waits");
	cmp_ok($reads, '>=', $min_reads, "the reader read $min_reads times");
	cmp_ok($seen, '>=', $wanted,
		"$wanted of its reads during the resets saw contended waits");
	is($bad, '0',
		'no read during resets shows contended waits with max_wait_time 0')
	  or diag('such rows: ' . ($bad_rows // ''));
}

# 2. A wait stalled in finish_spin_delay() just before its counts are added,
# while a reset runs (a debugger holds it there; skipped without gdb).  The
# wait began before the reset, so it read the old epoch.
SKIP:
{
	my $why = LockStatTest::Gdb::gdb_unavailable();
	skip $why, 2 if $why;

	$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
	# stalled where the wait's duration is taken, before its counts (its
	# end was read by its last spin, before it took the lock)
	my $line = LockStatTest::Gdb::s_lock_line(
		qr/INSTR_TIME_SUBTRACT\(waited, spin_wait\.start\);/);
	my $st = LockStatTest::Gdb::stall_waiter($node, $line);
	# the wait has ended and is about to be added: reset now
	$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
	LockStatTest::Gdb::release_waiter($st);
	LockStatTest::Gdb::end_stall($st);
	my ($fn, $at) = $st->{hit} =~ /^Breakpoint 1, (\w+) .* at \S*s_lock\.c:(\d+)$/m;
	ok( ($fn // '') eq 's_lock_end_counted_wait'
		  && $at >= $line
		  && $at < LockStatTest::Gdb::s_lock_line(qr/c->changecount\+\+;/),
		'gdb stopped the waiter at the end of its wait, before its counts')
	  or diag("stopped at: $st->{hit}");

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
# anything, and one that the waiter releases while it waits succeeds.
SKIP:
{
	my $why = LockStatTest::Gdb::gdb_unavailable();
	skip $why, 7 if $why;

	$node->safe_psql('postgres',
		"SELECT pg_lockstat_reset(); SELECT lockstat_test_lwlock('exclusive', 7)");
	my $stats_reset =
	  $node->safe_psql('postgres', 'SELECT stats_reset FROM pg_lockstat_status');

	# stalled where it counts the wait, inside the window
	my $line = LockStatTest::Gdb::s_lock_line(qr/c->contended\+\+;/);
	my $st = LockStatTest::Gdb::stall_waiter($node, $line);
	my ($fn, $at) = $st->{hit} =~ /^Breakpoint 1, (\w+) .* at \S*s_lock\.c:(\d+)$/m;
	ok( ($fn // '') eq 's_lock_end_counted_wait'
		  && $at > LockStatTest::Gdb::s_lock_line(qr/c->changecount\+\+;/)
		  && $at <= LockStatTest::Gdb::s_lock_line(qr/c->last_wait_ns = wait_ns;/),
		'gdb stopped the waiter with its changecount odd')
	  or diag("stopped at: $st->{hit}");

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

	# A reset that the waiter releases while the reset waits for it.  gdb
	# stops the reset at its first wait for the stalled entry
	# (lockstat_retry_wait(), before it has read the clock), lets the waiter
	# finish, and lets the reset go on: its next copy is consistent.  No
	# step depends on how long another takes.
	my $r = $node->background_psql('postgres', on_error_stop => 0);
	my $rg = LockStatTest::Gdb::gdb_attach($r, 'lockstat_retry_wait');
	$r->query_until(qr/started/,
		"\\echo started\nSELECT pg_lockstat_reset() IS NOT NULL;\n");
	my $hit = LockStatTest::Gdb::gdb_wait($rg, qr/Breakpoint 1,[^\n]*\n/);
	like($hit, qr/Breakpoint 1, lockstat_retry_wait /,
		'the reset waits for the stalled waiter');
	LockStatTest::Gdb::release_waiter($st);
	# the waiter's statement has ended, so its counts are written
	$st->{waiter}->query_safe('SELECT 1');
	LockStatTest::Gdb::gdb_detach($rg);
	my ($rout, $rret) = $r->query("SELECT 'after'");
	is($rout, "t\nafter",
		'a reset that the waiter releases while the reset waits succeeds');
	is($rret, 0, 'and reports no error') or diag($r->{stderr});
	$r->quit;
	LockStatTest::Gdb::end_stall($st);

	is( $node->safe_psql(
			'postgres',
			"SELECT (SELECT coalesce(sum(count), 0) FROM pg_spinlock_wait_histogram $where)
				= (SELECT coalesce(sum(contended), 0) FROM pg_spinlock_stats $where)"),
		't',
		'afterwards the histogram still adds up to contended');
}

done_testing();
