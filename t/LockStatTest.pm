# Copyright (c) 2026, pg_lockstat developers
#
# Helpers shared by pg_lockstat's TAP tests: the server under test (its
# major and its core patch series), nodes that preload pg_lockstat and
# lockstat_test, PostgreSQL's own suites run against such a node, and the
# load that the tests count: holds of the lockstat_test LWLock and spinlock
# and the sessions that wait behind them, readers and resetters, sessions
# let go together, background sessions that poll.  The other concerns have
# modules of their own; each uses only modules listed before it:
#   LockStatTest/Arch.pm        the installation of the server under test
#                               and the architecture it runs on
#   LockStatTest.pm             (this file)
#   LockStatTest/Gdb.pm         backends stopped at a gdb breakpoint
#   LockStatTest/Top.pm         pg_lockstat_top run step by step
#   LockStatTest/Upgrade.pm     a database that uses pg_lockstat, carried
#                               to another server
#   LockStatTest/Prometheus.pm  the Prometheus exporter and its scrape
#   LockStatTest/Json.pm        JSON files as python3 reads them
# Nothing is exported: a test names each helper with its package, as
# LockStatTest::new_node() or LockStatTest::Gdb::gdb_attach().

package LockStatTest;

use strict;
use warnings FATAL => 'all';

use Cwd ();
use Test::More ();
use Time::HiRes ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils ();

use LockStatTest::Arch;

# The command of the study harness behind "make run" (bench/lockstudy,
# run by Debian's python3), for "env": the package's directory on
# PYTHONPATH, then the program; the subcommand (run, order, ...) follows.
# $top (default: the current directory, the checkout) is where the package
# is found, and so the checkout the study takes its workloads and scripts
# from.
sub study_command
{
	my ($top) = @_;
	$top //= Cwd::getcwd();
	return ("PYTHONPATH=$top/bench", '/usr/bin/python3', '-m', 'lockstudy');
}

# The major version of the server under test (from PG_CONFIG, which
# scripts/run-tests.sh sets, else the pg_config on PATH), e.g. 15 or 18.
sub server_major
{
	my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
	my $version = `$pg_config --version`;
	die "cannot run $pg_config --version" if $? != 0;
	$version =~ /PostgreSQL (\d+)/ or die "unexpected pg_config --version: $version";
	return $1;
}

# The core patch series of the server under test, e.g. "patches/pg18".
sub patch_dir
{
	return 'patches/pg' . server_major();
}

# The SET commands that make the planner put a single-copy Gather with one
# planned worker on top of a parallel-safe plan.  The setting is
# debug_parallel_query from 16 on, force_parallel_mode before.
sub single_copy_gather_sql
{
	my $guc = server_major() >= 16 ? 'debug_parallel_query' : 'force_parallel_mode';
	return "SET $guc = on;\nSET parallel_setup_cost = 0;\n"
	  . "SET parallel_tuple_cost = 0;\nSET max_parallel_workers_per_gather = 1;\n";
}

# psql input that runs the statement $sql over and over, as "\watch" does:
# every $interval seconds, $count times if given, until it returns no row
# if $until_empty, else until the session ends.  PostgreSQL 17's psql has
# these \watch options (count and min_rows); before, a DO block does the
# same, one transaction per round (COMMIT), so that other sessions see each
# round's effects at once.
sub watch_sql
{
	my ($sql, %opts) = @_;
	my $interval = $opts{interval} // 0;
	$sql =~ s/\s+\z//;
	if (server_major() >= 17)
	{
		my $watch = "\\watch interval=$interval";
		$watch .= " count=$opts{count}" if defined $opts{count};
		$watch .= ' min_rows=1' if $opts{until_empty};
		return "$sql\n$watch\n";
	}
	my $stop = join(' OR ',
		($opts{until_empty} ? ("n_rows = 0") : ()),
		(defined $opts{count} ? ("rounds >= $opts{count}") : ()));
	$stop = 'false' if $stop eq '';
	return "DO \$watch\$DECLARE n_rows bigint; rounds int := 0; BEGIN LOOP "
	  . "EXECUTE \$sql\$$sql\$sql\$; GET DIAGNOSTICS n_rows = ROW_COUNT; "
	  . "rounds := rounds + 1; COMMIT; EXIT WHEN $stop; "
	  . "PERFORM pg_sleep($interval); END LOOP; END \$watch\$;\n";
}

# A private copy of the unpatched installation of STOCK_PG_CONFIG (bin, lib
# and share; the builds are relocatable) with pg_lockstat installed into it
# from the patched server found on PATH, as a user would install it; the
# same on every major (extension_control_path, which would spare the copy,
# is new in 18).  Returns its prefix, for install_path.
sub unpatched_install
{
	my ($stock_pg_config) = @_;
	my $stock_prefix = `$stock_pg_config --bindir`;
	chomp $stock_prefix;
	$stock_prefix =~ s{/bin$}{};
	my $pkglibdir = `pg_config --pkglibdir`;
	chomp $pkglibdir;
	my $sharedir = `pg_config --sharedir`;
	chomp $sharedir;

	my $install =
	  Cwd::realpath(PostgreSQL::Test::Utils::tempdir) . '/unpatched';
	mkdir $install or die "mkdir $install: $!";
	for my $dir (qw(bin lib share))
	{
		system('cp', '-a', "$stock_prefix/$dir", "$install/$dir") == 0
		  or die "cannot copy $stock_prefix/$dir";
	}
	my $to_pkglibdir = `$install/bin/pg_config --pkglibdir`;
	chomp $to_pkglibdir;
	my $to_sharedir = `$install/bin/pg_config --sharedir`;
	chomp $to_sharedir;
	die "the copy of $stock_prefix is not relocated: $to_pkglibdir"
	  unless $to_pkglibdir =~ m{^\Q$install\E/};
	system('cp', "$pkglibdir/pg_lockstat.so", "$to_pkglibdir/") == 0
	  or die 'cannot install pg_lockstat.so';
	system('cp', glob("$sharedir/extension/pg_lockstat*"),
		"$to_sharedir/extension/") == 0
	  or die 'cannot install the pg_lockstat extension files';
	return $install;
}

# Assert that every tranche's rows of pg_lwlock_query_stats add up to its
# blocks and wait_time in pg_lwlock_stats, at a moment when no process of
# the server is in a blocked call: the two views are read one after the
# other, so a call that ends in between (a background process's rare block)
# is in one read only.  So this reads again, 0.1 s apart, until they agree
# or the TAP timeout has passed (a lasting difference, which is a fault).
# Every reset that this must hold across must have run while no process
# could end a blocked call (see t/055).  The failure names the tranches
# with both block counts.
sub query_tranches_add_up
{
	my ($node, $what) = @_;
	my $bad;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	for (my $try = 1;; $try++)
	{
		# the reader's own sampled holds between its reads of the views would
		# show in the later read only: it times none
		$bad = $node->safe_psql(
			'postgres', q{
SET pg_lockstat.hold_sample_every = 0;
SELECT coalesce(string_agg(tranche || ' ' || coalesce(s.blocks, 0) || '/' ||
                           coalesce(q.blocks, 0) || '/' ||
                           coalesce(b.blocks, 0) || ' holds ' ||
                           coalesce(s.sh_hold_samples + s.ex_hold_samples, 0) ||
                           '/' || coalesce(q.holds, 0), ', '), 'none')
FROM pg_lwlock_stats s
FULL JOIN (SELECT tranche, sum(blocks) AS blocks, sum(wait_time) AS wait_time,
                  sum(sh_hold_samples) AS sh_hold_samples,
                  sum(ex_hold_samples) AS ex_hold_samples,
                  sum(sh_hold_samples + ex_hold_samples) AS holds,
                  sum(sh_hold_time) AS sh_hold_time,
                  sum(ex_hold_time) AS ex_hold_time,
                  max(max_sh_hold_time) AS max_sh_hold_time,
                  max(max_ex_hold_time) AS max_ex_hold_time
           FROM pg_lwlock_query_stats GROUP BY tranche) q USING (tranche)
FULL JOIN (SELECT tranche, sum(blocks) AS blocks, sum(wait_time) AS wait_time
           FROM pg_lwlock_blockers GROUP BY tranche) b USING (tranche)
WHERE coalesce(s.blocks, 0) <> coalesce(q.blocks, 0)
   OR coalesce(s.blocks, 0) <> coalesce(b.blocks, 0)
   OR round(coalesce(s.wait_time, 0)::numeric, 6)
      <> round(coalesce(q.wait_time, 0)::numeric, 6)
   OR round(coalesce(s.wait_time, 0)::numeric, 6)
      <> round(coalesce(b.wait_time, 0)::numeric, 6)
   OR coalesce(s.sh_hold_samples, 0) <> coalesce(q.sh_hold_samples, 0)
   OR coalesce(s.ex_hold_samples, 0) <> coalesce(q.ex_hold_samples, 0)
   OR round(coalesce(s.sh_hold_time, 0)::numeric, 6)
      <> round(coalesce(q.sh_hold_time, 0)::numeric, 6)
   OR round(coalesce(s.ex_hold_time, 0)::numeric, 6)
      <> round(coalesce(q.ex_hold_time, 0)::numeric, 6)
   OR coalesce(s.max_sh_hold_time, 0) <> coalesce(q.max_sh_hold_time, 0)
   OR coalesce(s.max_ex_hold_time, 0) <> coalesce(q.max_ex_hold_time, 0)});
		last if $bad eq 'none' || time() > $deadline;
		Test::More::note("$what: tranches not adding up at try $try: $bad")
		  if $try <= 3 || $try % 100 == 0;
		Time::HiRes::usleep(100_000);
	}
	Test::More::is($bad, 'none',
		"$what: every tranche's rows of pg_lwlock_query_stats and pg_lwlock_blockers add up to pg_lwlock_stats (blocks, waits, hold samples, hold times, longest holds)"
	);
}

# Wait until no process of $node other than the caller's next connection
# is a client backend, except the sessions whose backend PIDs are in @keep:
# the backends of sessions and connections that ended have exited.
sub wait_for_exits
{
	my ($node, @keep) = @_;
	my $keep = @keep ? join(', ', @keep) : '0';
	$node->poll_query_until('postgres', qq{
SELECT count(*) = 0 FROM pg_stat_activity
WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
  AND pid NOT IN ($keep)})
	  or die 'the backends of ended sessions did not exit';
	return;
}

# The reader/resetter pattern of the concurrency tests (t/025, t/051, t/052):
# the test has created a table stop (what text) and a procedure
# reader(session int) that reads until stop holds 'readers'.  This starts
# $n reader sessions and, unless $no_resetter, one that resets every 20 ms
# until stop holds 'resetter'.  Returns the reader sessions and the
# resetter session (undef without one); end them with end_session() after
# the INSERT into stop.
sub start_readers
{
	my ($node, $n, $no_resetter) = @_;
	my @readers;
	foreach my $session (1 .. $n)
	{
		my $h = $node->background_psql('postgres');
		$h->query_until(qr/started/, "\\echo started\nCALL reader($session);\n");
		push @readers, $h;
	}
	return (\@readers, undef) if $no_resetter;
	$node->safe_psql(
		'postgres', q{
CREATE PROCEDURE resetter() LANGUAGE plpgsql AS $$
BEGIN
	WHILE NOT EXISTS (SELECT FROM stop WHERE what = 'resetter') LOOP
		PERFORM pg_lockstat_reset();
		PERFORM pg_sleep(0.02);
	END LOOP;
END $$;});
	my $resetter = $node->background_psql('postgres');
	$resetter->query_until(qr/started/, "\\echo started\nCALL resetter();\n");
	return (\@readers, $resetter);
}

# End background session $h, whose last command (a CALL that reads or
# resets in a loop, say) may have run far longer than the TAP timeout, and
# return true if psql ended without error.  The session's timer started
# with that command, so psql's exit is awaited on a timer restarted now:
# the timeout bounds the wait for this end, not the whole run of the
# command, which takes as long as the machine needs (for example a pgbench
# phase under ASan).
sub end_session
{
	my ($h) = @_;
	$h->set_query_timer_restart;
	# the line comes once the command before it has returned, or never if
	# psql stopped at an error; then quit() returns false
	$h->query_until(qr/session ends\n/, "\\echo session ends\n");
	return $h->quit;
}

# The number of reads in table reads (session, n, reset_before, reset_after,
# and column $column) that show less in $column than the previous read of
# the same session, both taken under the same reset: 0 when counts never go
# down between resets.
sub reads_that_shrank
{
	my ($node, $column) = @_;
	return $node->safe_psql(
		'postgres', qq{
SELECT count(*) FROM reads a JOIN reads b
  ON b.session = a.session AND b.n = a.n + 1
WHERE a.reset_before = a.reset_after AND b.reset_before = b.reset_after
  AND a.reset_after = b.reset_before AND b.$column < a.$column});
}

# A started node that preloads pg_lockstat and lockstat_test, with both
# extensions created in database "postgres".  $extra_conf is appended to
# postgresql.conf before the start.
# A test that needs a tool this machine lacks (gdb, sysbench, the
# Prometheus exporter) skips with $why, which says how to install it; with
# LOCKSTAT_REQUIRE_ALL set, as .ci/run sets it (CI installs every tool as
# root), it fails instead, so that no check passes there by being skipped.
# Returns $why (undef: nothing missing).
sub tool_missing
{
	my ($why) = @_;
	die "$why; LOCKSTAT_REQUIRE_ALL is set, so a missing tool fails the test\n"
	  if defined $why && $ENV{LOCKSTAT_REQUIRE_ALL};
	return $why;
}

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

# Restarts $node under pg_lockstat.spin_strategy $strategy and returns the
# strategy that pg_lockstat_status reads back from the core.
sub restart_with_strategy
{
	my ($node, $strategy) = @_;
	$node->append_conf('postgresql.conf',
		"pg_lockstat.spin_strategy = '$strategy'");
	$node->restart;
	return $node->safe_psql('postgres',
		'SELECT spin_strategy FROM pg_lockstat_status');
}

# The source trees of the server under test, for the suites and tests that
# they hold: ($src, the tree it was built from, as scripts/build-server.sh
# names it in <install>/.pg_lockstat_build_src, and $prog_src, the tree whose
# programs (pg_regress and the like) run here: $src itself, or under
# emulation (make test-arch) the native tree of the same version).  A server
# installed some other way skips the test (skip_all).
sub build_trees
{
	my $src = LockStatTest::Arch::install_marker('.pg_lockstat_build_src');
	Test::More::plan(skip_all => 'no .pg_lockstat_build_src: '
		  . 'the server was not built by scripts/build-server.sh')
	  unless defined $src;
	my $prog_src = $src;
	if (defined LockStatTest::Arch::guest_arch())
	{
		my $native = LockStatTest::Arch::native_install()
		  // Test::More::BAIL_OUT('a guest installation without .pg_lockstat_native');
		$prog_src = PostgreSQL::Test::Utils::slurp_file(
			"$native/.pg_lockstat_build_src");
		chomp $prog_src;
	}
	return ($src, $prog_src);
}

# Runs one of PostgreSQL's own suites, $suite 'regress' (the core
# regression suite, parallel schedule, 20 at a time, as "make
# installcheck-parallel") or 'isolation' (as "make -C src/test/isolation
# installcheck"), from the source tree that the server under test was built
# from, against that server with pg_lockstat preloaded,
# pg_lockstat.track = on and a strategy other than the default
# (ttas_backoff).  Then checks that pg_lockstat counted meanwhile (LWLocks
# of at least 10 tranches, more than $min_acquires acquisitions) and that
# no server process crashed.  With $hold_every, pg_lockstat.hold_sample_every
# is set to it, and the hold samples must be at least 9 in 10 of the
# acquisitions over $hold_every (exactly that in idle processes; fewer by the
# holds in progress and those that an exit ended after the process gave up
# its counters) and no more.  The trees are those of build_trees(): under
# emulation the suite's data and regress.so come from the guest's, and the
# programs that run it (pg_regress, pg_isolation_regress, isolationtester)
# from the native one.
sub run_core_suite
{
	my ($suite, $min_acquires, $hold_every) = @_;
	my %dir = (
		regress => 'src/test/regress',
		isolation => 'src/test/isolation');
	my %program = (
		regress => 'pg_regress',
		isolation => 'pg_isolation_regress');
	my %schedule = (
		regress => 'parallel_schedule',
		isolation => 'isolation_schedule');
	die "unknown suite $suite" unless $dir{$suite};

	my ($src, $prog_src) = build_trees();
	my $suite_dir = "$src/$dir{$suite}";
	my $program = "$prog_src/$dir{$suite}/$program{$suite}";
	my @needed = ($program, "$suite_dir/$schedule{$suite}");
	push @needed, "$suite_dir/regress.so" if $suite eq 'regress';
	push @needed, "$prog_src/$dir{$suite}/isolationtester"
	  if $suite eq 'isolation';
	foreach my $f (@needed)
	{
		Test::More::BAIL_OUT("$f is missing from the build tree") unless -e $f;
	}

	my $node = PostgreSQL::Test::Cluster->new("core_$suite");
	$node->init;
	$node->append_conf(
		'postgresql.conf', q{
shared_preload_libraries = 'pg_lockstat'
pg_lockstat.track = on
pg_lockstat.spin_strategy = 'ttas_backoff'
max_connections = 30
log_statement = none
});
	$node->append_conf('postgresql.conf',
		"pg_lockstat.hold_sample_every = $hold_every")
	  if defined $hold_every;
	$node->start;
	Test::More::is($node->safe_psql('postgres', 'SHOW pg_lockstat.spin_strategy'),
		'ttas_backoff', 'the server runs under ttas_backoff');

	my @args = ("--schedule=$suite_dir/$schedule{$suite}");
	push @args, "--dlpath=$suite_dir", '--max-concurrent-tests=20'
	  if $suite eq 'regress';
	run_regress($node, $program, $suite_dir, "PostgreSQL's $suite suite passes",
		@args);

	# pg_lockstat counted all along: the suite's sessions acquired LWLocks
	# of many tranches.
	$node->safe_psql('postgres', 'CREATE EXTENSION pg_lockstat');
	my ($counting, $tranches, $acquires) = split /\|/, $node->safe_psql(
		'postgres', q{
		SELECT s.counting, count(*), sum(l.ex_acquires + l.sh_acquires)
		FROM pg_lockstat_status s, pg_lwlock_stats l
		WHERE l.ex_acquires + l.sh_acquires > 0
		GROUP BY s.counting});
	Test::More::is($counting // 'no row', 't',
		"pg_lockstat counted during the $suite suite");
	Test::More::cmp_ok($tranches // 0, '>=', 10,
		'LWLocks of at least 10 tranches were acquired');
	Test::More::cmp_ok($acquires // 0, '>', $min_acquires,
		"more than $min_acquires LWLock acquisitions counted");
	Test::More::note("$suite: $acquires LWLock acquisitions of $tranches tranches")
	  if defined $acquires;
	if (defined $hold_every)
	{
		my ($samples, $expected) = split /\|/, $node->safe_psql(
			'postgres', qq{
			SELECT sum(ex_hold_samples + sh_hold_samples),
				   (sum(ex_acquires + sh_acquires) / $hold_every)::bigint
			FROM pg_lwlock_stats});
		Test::More::ok($samples * 10 >= $expected * 9 && $samples <= $expected,
			"with hold_sample_every = $hold_every, $samples hold samples of $expected expected");
	}

	$node->stop;
	no_crash($node);
	return;
}

# Runs $program (pg_regress or pg_isolation_regress, of a build tree) against
# $node with the tests of $dir and the further arguments @args (a schedule,
# or test names), and passes as $name if it succeeds, else shows the start
# of its regression.diffs.  pg_regress looks for expected files in the
# current directory unless told otherwise (--expecteddir, 16 and later;
# before, under --inputdir): it runs in a temporary directory, never in the
# checkout, whose expected/ holds pg_lockstat's own tests.
sub run_regress
{
	my ($node, $program, $dir, $name, @args) = @_;
	my $out = PostgreSQL::Test::Utils::tempdir;
	chdir $out or die "chdir $out: $!";
	unshift @args, '--host=' . $node->host, '--port=' . $node->port,
	  '--bindir=' . LockStatTest::Arch::install_file('bin'),
	  "--inputdir=$dir", "--outputdir=$out";
	unshift @args, "--expecteddir=$dir" if server_major() >= 16;
	my $rc = system($program, @args);
	Test::More::ok($rc == 0, $name) or do
	{
		my @lines = -f "$out/regression.diffs"
		  ? split(/\n/, PostgreSQL::Test::Utils::slurp_file("$out/regression.diffs"))
		  : ('no regression.diffs');
		Test::More::diag(join("\n", @lines[ 0 .. ($#lines < 199 ? $#lines : 199) ]));
	};
	return;
}

# Passes if no server process of $node crashed: its log shows no process
# ended by a signal or an exception, no PANIC and no signal that the
# emulator could not pass on.
sub no_crash
{
	my ($node) = @_;
	Test::More::unlike(PostgreSQL::Test::Utils::slurp_file($node->logfile),
		qr{terminated\ by\ signal|PANIC:|was\ terminated\ by\ exception
		  |uncaught\ target\ signal}x,
		'no server process crashed');
	return;
}

# A holder session takes the lockstat_test LWLock exclusively and keeps it
# until released (lockstat_test_lwlock_hold), and a waiter session asks for
# it once in shared mode.  Returns (holder, waiter) once the waiter sleeps
# behind the holder, however long that takes: end_block() lets the waiter
# have the lock and ends both.
sub block_waiter
{
	my ($node) = @_;
	my $holder = hold_lwlock($node, 'exclusive');
	my $waiter = $node->background_psql('postgres');
	$waiter->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_lwlock('shared', 1);\n");
	wait_for_waiters($node, 1);
	return ($holder, $waiter);
}

# A session that holds the lockstat_test LWLock in $mode until
# release_holds(), returned once it holds it (its wait event "Extension"
# shows that).  A new session, or $holder, whose backend PID is $pid and
# whose previous hold has ended.
sub hold_lwlock
{
	my ($node, $mode, $holder, $pid) = @_;
	if (!defined $holder)
	{
		$holder = $node->background_psql('postgres');
		$pid = $holder->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	}
	return start_hold($node, $holder, $pid,
		"SELECT lockstat_test_lwlock_hold('$mode');", 'the lock');
}

# Let session $holder (backend PID $pid) run $sql, a hold of the test
# module, and return it once the hold shows wait event "Extension".
sub start_hold
{
	my ($node, $holder, $pid, $sql, $what) = @_;
	$holder->query_until(qr/started/, "\\echo started\n$sql\n");
	$node->poll_query_until('postgres',
		qq{SELECT count(*) = 1 FROM pg_stat_activity
		   WHERE pid = $pid AND wait_event_type = 'Extension'})
	  or die "the holder did not take $what";
	return $holder;
}

# Wait until $n sessions sleep for the lockstat_test LWLock.
sub wait_for_waiters
{
	my ($node, $n) = @_;
	$node->poll_query_until('postgres',
		qq{SELECT count(*) >= $n FROM pg_stat_activity
		   WHERE wait_event = 'lockstat_test'})
	  or die "$n waiters did not block on the lockstat_test LWLock";
	return;
}

# End every lockstat_test_lwlock_hold() and lockstat_test_spinlock_churn()
# call of $node's sessions.
sub release_holds
{
	my ($node) = @_;
	$node->safe_psql('postgres', 'SELECT lockstat_test_release()');
	return;
}

# Release the holder of block_waiter() and end both sessions: the waiter has
# its lock and has finished when this returns.
sub end_block
{
	my ($node, $holder, $waiter) = @_;
	release_holds($node);
	$holder->quit;
	$waiter->quit;
	return;
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

# A session that holds the test spinlock (lockstat_test_spinlock_hold) until
# release_holds(), returned once it holds it (its wait event "Extension"
# shows that): every session that takes the test spinlock meanwhile waits
# inside s_lock() until the release.  The holder's own wait for the
# spinlock, if it had one, is not counted (pg_lockstat.track = off).  The
# hold gives up by itself after 30 s (57014), before its waiters' stuck
# spinlock PANIC: release it as soon as the waiters wait.
sub hold_spinlock
{
	my ($node) = @_;
	my $holder = $node->background_psql('postgres');
	my $pid = $holder->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	return start_hold($node, $holder, $pid,
		"SET pg_lockstat.track = off;\nSELECT lockstat_test_spinlock_hold();",
		'the test spinlock');
}

# The number of contended waits for the test spinlock that have begun since
# the server started (lockstat_test_spin_waits(), counted at a wait's first
# spin, on every major): read it before starting waiters, for
# wait_for_spin_waiters().
sub spin_waits
{
	my ($node) = @_;
	return $node->safe_psql('postgres', 'SELECT lockstat_test_spin_waits()');
}

# Wait until $n contended waits for the test spinlock have begun since
# spin_waits() returned $since: while hold_spinlock() holds it, that many
# waiters are spinning or sleeping inside s_lock() and will count a
# contended wait each.  The check runs in the server every millisecond,
# and with release => 1 the same statement then calls
# lockstat_test_release(), so that the hold ends within a millisecond or so
# of the last waiter's start (holds are bounded, see hold_spinlock()).
# Dies if the waits have not begun within the TAP timeout (a hang).
sub wait_for_spin_waiters
{
	my ($node, $since, $n, %opts) = @_;
	my $target = $since + $n;
	my $timeout = $PostgreSQL::Test::Utils::timeout_default;
	my $release = $opts{release} ? 'PERFORM lockstat_test_release();' : '';
	$node->safe_psql(
		'postgres', qq{
DO \$\$
DECLARE
	deadline timestamptz := clock_timestamp() + interval '$timeout s';
BEGIN
	WHILE lockstat_test_spin_waits() < $target LOOP
		IF clock_timestamp() > deadline THEN
			RAISE EXCEPTION '% of $n spin waits for the test spinlock began',
				lockstat_test_spin_waits() - $since;
		END IF;
		PERFORM pg_sleep(0.001);
	END LOOP;
	$release
END\$\$;});
	return;
}

# Run $sql, a query returning one boolean, on background session $h again
# and again, 10 ms apart, until it returns true; $each, if given, runs
# before each try (to die early).  Dies with $what after the TAP timeout (a
# hang).  Unlike poll_query_until, no new connection per try.
sub poll_session
{
	my ($h, $sql, $what, $each) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	for (;;)
	{
		$each->() if $each;
		return if $h->query_safe($sql) eq 't';
		die "$what (after $PostgreSQL::Test::Utils::timeout_default s)"
		  if time() > $deadline;
		Time::HiRes::usleep(10_000);
	}
}

# A background session of $node for polls and steps repeated many times:
# its TAP timeout restarts at each query.  Returns it and its backend PID.
sub lasting_session
{
	my ($node) = @_;
	my $h = $node->background_psql('postgres');
	$h->set_query_timer_restart;
	my $pid = $h->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	return ($h, $pid);
}

1;
