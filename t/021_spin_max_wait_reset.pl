# Copyright (c) 2026, pg_lockstat developers
#
# max_wait_time of pg_spinlock_stats covers every wait counted since the
# last reset, even when the reset runs while the wait is being added or
# while a reader reads: a site with contended > 0 never shows
# max_wait_time = 0.  Two ways a reset used to lose a wait's duration:
# the owner read the reset epoch before it made the entry's changecount odd
# (a wait stalled in between was counted after the reset, in the old
# epoch), and a reader released the lock between the baselines and the
# counters (a reset in between started a new epoch that the reader did not
# look at).  And a reset or a read that meets a waiter stalled while it
# adds its counts waits for it, up to 2 s, then fails with XX001 before it
# has reset anything (it used to fail after about 40 ms, half done).

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

# The line of lockstat_spin_wait() in extension/lockstat_spin.c that
# matches $pattern, for a breakpoint.
sub spin_wait_line
{
	my ($pattern) = @_;
	open(my $fh, '<', 'extension/lockstat_spin.c') or die $!;
	my ($line, $in) = (0, 0);
	while (<$fh>)
	{
		$in = 1 if /^lockstat_spin_wait\(/;
		if ($in && /$pattern/) { $line = $.; last; }
	}
	close $fh;
	die "$pattern not found in lockstat_spin_wait()" unless $line;
	return $line;
}

# A waiter session waits once for the test spinlock, which a holder session
# that is not counted keeps taken, and gdb stops the waiter at line $line of
# lockstat_spin.c when the wait ends.  Returns the stall: its gdb, input and
# output, holder and waiter.
sub stall_waiter
{
	my ($gdb, $line) = @_;
	my %st = (in => '', out => '');

	$st{holder} = $node->background_psql('postgres');
	$st{holder}->query_until(qr/started/,
		"\\echo started\nSET pg_lockstat.track = off;\n"
		  . "SELECT lockstat_test_spinlock(4000, 1000);\n");
	$st{waiter} = $node->background_psql('postgres');
	my $pid = $st{waiter}->query_safe('SELECT pg_backend_pid()');
	$pid =~ s/\D//g;

	$st{g} = IPC::Run::start(
		[ $gdb, '-q', '-nx', '-p', $pid ],
		'<' => \$st{in},
		'>&' => \$st{out},
		IPC::Run::timeout(120));
	$st{in} .= "set breakpoint pending on\nset pagination off\n"
	  . "break lockstat_spin.c:$line\ncontinue\n";
	$st{g}->pump until $st{out} =~ /Continuing/;
	$st{attached} = $st{out} =~ /Breakpoint 1 at/;
	$st{waiter}->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_spinlock(1, 0);\n");
	$st{g}->pump until $st{out} =~ /Breakpoint 1,/;
	return \%st;
}

# Let the stalled waiter go on, and end gdb.
sub release_waiter
{
	my ($st) = @_;
	$st->{in} .= "delete\ndetach\nquit\n";
	$st->{g}->finish;
}

# End the sessions of a stall.
sub end_stall
{
	my ($st) = @_;
	$st->{waiter}->quit;
	$st->{holder}->quit;
}

# 2. A wait stalled in lockstat_spin_wait() just before its counts are added,
# while a reset runs (a debugger holds it there; skipped without gdb).
SKIP:
{
	my $gdb = `command -v gdb 2>/dev/null`;
	chomp $gdb;
	skip 'gdb not available', 2 unless $gdb;

	$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
	# stalled at the first changecount increment
	my $st = stall_waiter($gdb, spin_wait_line(qr/c->changecount\+\+;/));
	# the wait has ended and is about to be added: reset now
	$node->safe_psql('postgres', 'SELECT pg_lockstat_reset()');
	release_waiter($st);
	end_stall($st);
	ok($st->{attached}, 'gdb stopped the waiter in lockstat_spin_wait()');

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
# waits: one that waits past 2 s fails with XX001 before it has reset
# anything, and one that the waiter releases after 0.5 s succeeds.  Before,
# both failed after about 40 ms, and the failed reset had already reset the
# LWLock counters.
SKIP:
{
	my $gdb = `command -v gdb 2>/dev/null`;
	chomp $gdb;
	skip 'gdb not available', 6 unless $gdb;

	$node->safe_psql('postgres',
		"SELECT pg_lockstat_reset(); SELECT lockstat_test_lwlock('exclusive', 7)");
	my $stats_reset =
	  $node->safe_psql('postgres', 'SELECT stats_reset FROM pg_lockstat_status');

	# stalled where it reads the epoch, inside the window
	my $st = stall_waiter($gdb, spin_wait_line(qr/epoch = pg_atomic_read_u64/));
	ok($st->{out} =~ /Breakpoint 1,/,
		'gdb stopped the waiter with its changecount odd');

	my ($ret, $stdout, $stderr) =
	  $node->psql('postgres', 'SELECT pg_lockstat_reset()');
	like(
		$stderr,
		qr/ERROR:  could not read pg_lockstat spin wait counters consistently/,
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
	release_waiter($st);
	$r->finish;
	is($rout, "t\n", 'a reset that the waiter releases after 0.5 s succeeds');
	is($rerr, '', 'and reports no error');
	end_stall($st);

	is( $node->safe_psql(
			'postgres',
			"SELECT (SELECT coalesce(sum(count), 0) FROM pg_spinlock_wait_histogram $where)
				= (SELECT coalesce(sum(contended), 0) FROM pg_spinlock_stats $where)"),
		't',
		'afterwards the histogram still adds up to contended');
}

done_testing();
