# Copyright (c) 2026, pg_lockstat developers
#
# Helpers shared by pg_lockstat's TAP tests.

package LockStatTest;

use strict;
use warnings FATAL => 'all';

use Cwd ();
use HTTP::Tiny;
use Cwd ();
use IPC::Run;
use Test::More ();
use Time::HiRes ();
use JSON::PP;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils ();
use PostgreSQL::Test::Utils;

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

# The architecture of the server under test when it is a cross-built one
# run under qemu-user ("ppc64le", "aarch64"; scripts/arch-wrap.sh writes
# <install>/.pg_lockstat_arch), else undef: the machine's own.
sub guest_arch
{
	return install_marker('.pg_lockstat_arch');
}

# Under emulation, the native installation whose front-end programs run
# the guest server (<install>/.pg_lockstat_native), else undef.
sub native_install
{
	return install_marker('.pg_lockstat_native');
}

# The one line of <install>/$name, or undef if there is no such file.
sub install_marker
{
	my ($name) = @_;
	my $f = install_file($name);
	return undef unless -f $f;
	my $line = PostgreSQL::Test::Utils::slurp_file($f);
	chomp $line;
	return $line;
}

# The GNU triple that version() names for the server under test: the guest
# architecture's under emulation, else this machine's.
sub server_triple_re
{
	my %cpu = (ppc64le => 'powerpc64le');
	my $arch = guest_arch() // `uname -m`;
	chomp $arch;
	my $cpu = $cpu{$arch} // $arch;
	return qr/ on \Q$cpu\E-[a-z]+-linux-gnu,/;
}

# <install>/$name, the install being the server under test's (the parent of
# its bindir).
sub install_file
{
	my ($name) = @_;
	my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
	my $bindir = `$pg_config --bindir`;
	die "cannot run $pg_config --bindir" if $? != 0;
	chomp $bindir;
	return "$bindir/../$name";
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
		$bad = $node->safe_psql(
			'postgres', q{
SELECT coalesce(string_agg(tranche || ' ' || coalesce(s.blocks, 0) || '/' ||
                           coalesce(q.blocks, 0), ', '), 'none')
FROM pg_lwlock_stats s
FULL JOIN (SELECT tranche, sum(blocks) AS blocks, sum(wait_time) AS wait_time
           FROM pg_lwlock_query_stats GROUP BY tranche) q USING (tranche)
WHERE coalesce(s.blocks, 0) <> coalesce(q.blocks, 0)
   OR round(coalesce(s.wait_time, 0)::numeric, 6)
      <> round(coalesce(q.wait_time, 0)::numeric, 6)});
		last if $bad eq 'none' || time() > $deadline;
		Test::More::note("$what: tranches not adding up at try $try: $bad")
		  if $try <= 3 || $try % 100 == 0;
		Time::HiRes::usleep(100_000);
	}
	Test::More::is($bad, 'none',
		"$what: every tranche's rows add up to pg_lwlock_stats");
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
# resetter session (undef without one); quit them after the INSERT into
# stop.
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

# Runs one of PostgreSQL's own suites, $suite 'regress' (the core
# regression suite, parallel schedule, 20 at a time, as "make
# installcheck-parallel") or 'isolation' (as "make -C src/test/isolation
# installcheck"), from the source tree that the server under test was built
# from, against that server with pg_lockstat preloaded,
# pg_lockstat.track = on and a strategy other than the default
# (ttas_backoff).  Then checks that pg_lockstat counted meanwhile (LWLocks
# of at least 10 tranches, more than $min_acquires acquisitions) and that
# no server process crashed.  The source tree is the one
# scripts/build-server.sh names in <install>/.pg_lockstat_build_src; a
# server installed some other way skips the test (skip_all).  Under
# emulation (make test-arch) the suite's data and regress.so come from the
# guest's build tree, and the programs that run it (pg_regress,
# pg_isolation_regress, isolationtester) from the native one of the same
# version.
sub run_core_suite
{
	my ($suite, $min_acquires) = @_;
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

	my $src = install_marker('.pg_lockstat_build_src');
	Test::More::plan(skip_all => 'no .pg_lockstat_build_src: '
		  . 'the server was not built by scripts/build-server.sh')
	  unless defined $src;
	my $prog_src = $src;
	if (defined guest_arch())
	{
		my $native = native_install()
		  // Test::More::BAIL_OUT('a guest installation without .pg_lockstat_native');
		$prog_src = PostgreSQL::Test::Utils::slurp_file(
			"$native/.pg_lockstat_build_src");
		chomp $prog_src;
	}
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
	$node->start;
	Test::More::is($node->safe_psql('postgres', 'SHOW pg_lockstat.spin_strategy'),
		'ttas_backoff', 'the server runs under ttas_backoff');

	# pg_regress looks for expected files in the current directory unless
	# told otherwise (--expecteddir, 16 and later; before, under
	# --inputdir): run it in a temporary directory, never in the checkout,
	# whose expected/ holds pg_lockstat's own tests.
	my $out = PostgreSQL::Test::Utils::tempdir;
	chdir $out or die "chdir $out: $!";
	my $bindir = install_file('bin');
	my @args = ('--host=' . $node->host, '--port=' . $node->port,
		"--bindir=$bindir", "--inputdir=$suite_dir", "--outputdir=$out",
		"--schedule=$suite_dir/$schedule{$suite}");
	push @args, "--expecteddir=$suite_dir" if server_major() >= 16;
	push @args, "--dlpath=$suite_dir", '--max-concurrent-tests=20'
	  if $suite eq 'regress';
	my $rc = system($program, @args);
	Test::More::ok($rc == 0, "PostgreSQL's $suite suite passes") or do
	{
		my @lines = -f "$out/regression.diffs"
		  ? split(/\n/, PostgreSQL::Test::Utils::slurp_file("$out/regression.diffs"))
		  : ('no regression.diffs');
		Test::More::diag(join("\n", @lines[ 0 .. ($#lines < 199 ? $#lines : 199) ]));
	};

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

	$node->stop;
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

# gdb, for the tests that stop a backend at a breakpoint: its path, or
# undef.  scripts/deps.sh installs it (as root; otherwise it prints the
# command), so a test that needs it skips only for a user who did not.
sub gdb_path
{
	my $gdb = `command -v gdb 2>/dev/null`;
	chomp $gdb;
	return $gdb eq '' ? undef : $gdb;
}

# Why the tests that stop a backend at a gdb breakpoint cannot run here, or
# undef if they can: gdb missing (only a user who did not run make as root
# lacks it), or a server under qemu-user emulation, where gdb would debug
# the emulator rather than the guest's code.
sub gdb_unavailable
{
	return 'gdb is not installed (as root: apt-get install gdb)'
	  unless gdb_path();
	my $arch = guest_arch();
	return "the server runs under qemu-user emulation ($arch): gdb would attach to the emulator, not to the guest's server code"
	  if defined $arch;
	return undef;
}

# Attach gdb to the backend of background session $h, set a breakpoint at
# $location and let the backend go on.  Returns the debugger; gdb_wait()
# waits for its output, gdb_send() gives it a command, gdb_detach() ends it.
# The bound on every wait is the TAP timeout (a hang, not a slow machine).
sub gdb_attach
{
	my ($h, $location) = @_;
	my $gdb = gdb_path() or die 'gdb is not installed';
	my %g = (in => '', out => '');
	my $pid = $h->query_safe('SELECT pg_backend_pid()') =~ s/\D//gr;
	$g{timer} = IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
	$g{run} = IPC::Run::start(
		[ $gdb, '-q', '-nx', '-p', $pid ],
		'<' => \$g{in},
		'>&' => \$g{out},
		$g{timer});
	# a cancel or statement timeout that reaches the stopped backend is
	# passed on to it, not taken by gdb
	$g{in} .= "set breakpoint pending on\nset pagination off\n"
	  . "handle SIGINT SIGALRM SIGUSR1 nostop noprint pass\n"
	  . "break $location\ncontinue\n";
	my $seen = gdb_wait(\%g, qr/Continuing/);
	die "gdb set no breakpoint at $location:\n$seen"
	  unless $seen =~ /Breakpoint 1 at/;
	return \%g;
}

# Wait until gdb's output since the last wait matches $re; returns that
# output up to the match.
sub gdb_wait
{
	my ($g, $re) = @_;
	$g->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
	$g->{run}->pump until $g->{out} =~ $re;
	my $seen = substr($g->{out}, 0, $+[0]);
	$g->{out} = substr($g->{out}, $+[0]);
	return $seen;
}

# Give gdb a command, and wait for output matching $re if given.
sub gdb_send
{
	my ($g, $cmd, $re) = @_;
	$g->{in} .= "$cmd\n";
	gdb_wait($g, $re) if defined $re;
	return;
}

# Remove the breakpoints, let the backend go on and end gdb.
sub gdb_detach
{
	my ($g) = @_;
	$g->{in} .= "delete\ndetach\nquit\n";
	$g->{run}->finish;
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

# The members of extension pg_lockstat in database $dbname, one line each,
# sorted: the object, its privileges for roles other than the owner
# ("default" if never granted or revoked), its initial privileges as
# pg_init_privs records them (what pg_dump compares with), its comment and
# its definition (for a function, the C symbol too).  Every column of the
# extension's views is a line of its own.  For comparing two installations.
sub extension_members
{
	my ($node, $dbname) = @_;

	return $node->safe_psql(
		$dbname, q{
WITH member AS (
    SELECT d.classid, d.objid
    FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
    WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
      AND e.extname = 'pg_lockstat'
      AND d.classid IN ('pg_proc'::regclass, 'pg_class'::regclass)),
obj AS (
    SELECT m.classid, m.objid, 0 AS objsubid,
           coalesce(p.proacl, c.relacl) AS acl,
           coalesce(p.proowner, c.relowner) AS owner,
           CASE WHEN p.oid IS NOT NULL
                THEN p.prosrc || ': ' || pg_get_functiondef(p.oid)
                ELSE pg_get_viewdef(c.oid)
           END AS definition
    FROM member m
    LEFT JOIN pg_proc p ON m.classid = 'pg_proc'::regclass AND p.oid = m.objid
    LEFT JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
    UNION ALL
    SELECT m.classid, a.attrelid, a.attnum, a.attacl, c.relowner,
           format_type(a.atttypid, a.atttypmod)
    FROM member m
    JOIN pg_class c ON m.classid = 'pg_class'::regclass AND c.oid = m.objid
    JOIN pg_attribute a ON a.attrelid = c.oid
    WHERE a.attnum > 0 AND NOT a.attisdropped)
SELECT pg_describe_object(o.classid, o.objid, o.objsubid)
       || ' | ' || CASE WHEN o.acl IS NULL THEN 'default'
                        ELSE (SELECT coalesce(string_agg(g, ' ' ORDER BY g),
                                              'owner only')
                              FROM (SELECT CASE WHEN x.grantee = 0 THEN 'PUBLIC'
                                                ELSE x.grantee::regrole::text
                                           END || ':' || x.privilege_type
                                    FROM aclexplode(o.acl) AS x
                                    WHERE x.grantee <> o.owner) AS a(g))
                   END
       || ' | init ' || coalesce(i.privtype::text || ' ' || i.initprivs::text, 'none')
       || ' | ' || coalesce(d.description, '(no comment)')
       || ' | ' || o.definition
FROM obj o
LEFT JOIN pg_description d
  ON d.classoid = o.classid AND d.objoid = o.objid AND d.objsubid = o.objsubid
LEFT JOIN pg_init_privs i
  ON i.classoid = o.classid AND i.objoid = o.objid AND i.objsubid = o.objsubid
ORDER BY 1});
}

# A plain-format dump of database $dbname ("all" for pg_dumpall) of $node
# into $file, made with the given node's tools, without statistics (which
# pg_dump dumps from 18 on) and with a fixed \restrict key, so that two
# dumps can be compared as text.  Returns the dump's text.
sub dump_for_comparison
{
	my ($node, $dbname, $file) = @_;
	my @cmd =
	  $dbname eq 'all'
	  ? ('pg_dumpall', '--dbname' => $node->connstr('postgres'))
	  : ('pg_dump', '--dbname' => $node->connstr($dbname));

	$node->command_ok(
		[
			@cmd, '--no-sync',
			(server_major() >= 18 ? ('--no-statistics') : ()),
			'--restrict-key=lockstat',
			'--file' => $file
		],
		"plain dump of $dbname on " . $node->name);
	return PostgreSQL::Test::Utils::slurp_file($file);
}

# The roles that app_database() grants to.  Roles are cluster objects,
# which pg_dump leaves to pg_dumpall: a server that a dump of such a
# database is restored into needs them first.
our $app_roles = q{
CREATE ROLE lockstat_reader LOGIN;
CREATE ROLE lockstat_resetter LOGIN;
CREATE ROLE lockstat_monitor LOGIN IN ROLE pg_monitor;
};

# Make database $dbname on $node use pg_lockstat as an application might:
# the extension in schema "lockstat", privileges changed from the install
# script's (GRANTs to lockstat_reader and lockstat_resetter, a REVOKE from
# pg_read_all_stats), a user view public.lwlock_acquires and an
# SQL-standard function public.lwlock_acquires_total() over pg_lwlock_stats
# and a table public.lwlock_snapshot filled from it.  The roles of
# $app_roles must exist.
sub app_database
{
	my ($node, $dbname) = @_;

	$node->safe_psql('postgres', "CREATE DATABASE $dbname");
	$node->safe_psql(
		$dbname, q{
CREATE SCHEMA lockstat;
CREATE EXTENSION pg_lockstat SCHEMA lockstat;
GRANT USAGE ON SCHEMA lockstat
    TO lockstat_reader, lockstat_resetter, lockstat_monitor;
GRANT SELECT ON lockstat.pg_lwlock_stats TO lockstat_reader;
GRANT EXECUTE ON FUNCTION lockstat.pg_lwlock_stats() TO lockstat_reader;
GRANT EXECUTE ON FUNCTION lockstat.pg_lockstat_reset() TO lockstat_resetter;
REVOKE SELECT ON lockstat.pg_spinlock_stats FROM pg_read_all_stats;

CREATE VIEW public.lwlock_acquires AS
    SELECT tranche, sh_acquires + ex_acquires AS acquires, blocks
    FROM lockstat.pg_lwlock_stats;
COMMENT ON VIEW public.lwlock_acquires IS 'acquisitions per tranche';
GRANT SELECT ON public.lwlock_acquires TO lockstat_reader;

CREATE FUNCTION public.lwlock_acquires_total() RETURNS numeric
LANGUAGE sql STABLE
BEGIN ATOMIC
    SELECT sum(sh_acquires + ex_acquires) FROM lockstat.pg_lwlock_stats;
END;

CREATE TABLE public.lwlock_snapshot AS
    SELECT now() AS taken, tranche, sh_acquires, ex_acquires
    FROM lockstat.pg_lwlock_stats;
});
}

# On $node, which preloads pg_lockstat and lockstat_test and has the
# extension lockstat_test in database "postgres", and database $dbname made
# by app_database(): lockstat_resetter resets, a superuser takes the test
# lock exclusively $n times, and lockstat_reader reads.  Returns what the
# reader sees: "<ex_acquires in pg_lwlock_stats> <acquires in the user's
# view>" for tranche lockstat_test, and psql's stderr.
sub app_count
{
	my ($node, $dbname, $n) = @_;
	my ($ret, $stdout, $stderr) = $node->psql(
		$dbname,
		'SELECT lockstat.pg_lockstat_reset() IS NOT NULL',
		extra_params => [ '-U', 'lockstat_resetter' ]);
	die "reset as lockstat_resetter failed: $stderr" if $stdout ne 't';

	$node->safe_psql('postgres', "SELECT lockstat_test_lwlock('exclusive', $n)");
	($ret, $stdout, $stderr) = $node->psql(
		$dbname,
		q{SELECT l.ex_acquires || ' ' || a.acquires
		  FROM lockstat.pg_lwlock_stats l
		  JOIN public.lwlock_acquires a USING (tranche)
		  WHERE tranche = 'lockstat_test'},
		extra_params => [ '-U', 'lockstat_reader' ]);
	return ($stdout, $stderr);
}

# Debugger stalls of a spin waiter at the end of its wait, for the tests of
# the reset protocol (t/021, t/026).

# The line of the patched s_lock.c that matches $pattern, among the lines
# that the last patch of the server's series (patch_dir) touching s_lock.c
# adds: its hunks count
# the lines of the file as that patch leaves it, which is the final file.
sub s_lock_line
{
	my ($pattern) = @_;
	my ($last) = grep {
		my $f = $_;
		open(my $fh, '<', $f) or die $!;
		my $touches = grep { m{^\+\+\+ b/src/backend/storage/lmgr/s_lock\.c} } <$fh>;
		close $fh;
		$touches;
	} reverse sort glob(patch_dir() . '/*.patch');
	die 'no patch touches s_lock.c' unless $last;

	open(my $fh, '<', $last) or die $!;
	my ($in, $n) = (0, 0);
	while (<$fh>)
	{
		if (/^\+\+\+ b\/(\S+)/) { $in = $1 eq 'src/backend/storage/lmgr/s_lock.c'; next; }
		next unless $in;
		if (/^@@ -\d+(?:,\d+)? \+(\d+)/) { $n = $1; next; }
		next if /^-/;
		if (/^[+ ]/)
		{
			if (/^\+/ && /$pattern/) { close $fh; return $n; }
			$n++;
		}
	}
	close $fh;
	die "$pattern not found among the lines that $last adds to s_lock.c";
}

# A waiter session of $node waits once for the test spinlock, which a holder
# session that is not counted keeps taken (hold_spinlock) until the waiter
# spins, and gdb stops the waiter at line $line of s_lock.c once it has the
# spinlock and its wait ends (the breakpoint's line must be on that path).
# gdb is attached before the holder takes the spinlock, so the hold lasts
# only from the holder's start to the waiter's first spin, whatever the
# speed of the machine.  Returns the stall: its gdb (gdb_attach), holder,
# waiter, and hit, gdb's line that reports the breakpoint.  The waiter then
# holds the test spinlock until release_waiter().
sub stall_waiter
{
	my ($node, $line) = @_;
	my %st;

	$st{waiter} = $node->background_psql('postgres');
	$st{g} = gdb_attach($st{waiter}, "s_lock.c:$line");
	$st{holder} = hold_spinlock($node);
	my $since = spin_waits($node);
	$st{waiter}->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_spinlock(1, 0);\n");
	wait_for_spin_waiters($node, $since, 1, release => 1);
	$st{hit} = gdb_wait($st{g}, qr/Breakpoint 1,[^\n]*\n/);
	$st{hit} =~ s/.*(Breakpoint 1,)/$1/s;
	return \%st;
}

# Let the stalled waiter go on (it releases the test spinlock), and end gdb.
sub release_waiter
{
	my ($st) = @_;
	gdb_detach($st->{g});
	return;
}

# End the sessions of a stall, after release_waiter().
sub end_stall
{
	my ($st) = @_;
	$st->{waiter}->quit;
	$st->{holder}->quit;
	return;
}

# Debian's Prometheus exporter for PostgreSQL, run on the query file of
# integrations/prometheus, for the tests of the monitoring integrations
# (t/040, t/041).

our $exporter_bin = '/usr/bin/prometheus-postgres-exporter';
our $query_file = 'integrations/prometheus/pg_lockstat.yaml';

# Debian's python3 and the text-format parser of the Prometheus Python
# client (python3-prometheus-client): the samples of a /metrics body on
# stdin, as a JSON list of {family, type, name, labels, value} on stdout,
# each value as Python's repr() of the float (round-trip exact, and "nan" or
# "inf" where JSON has no number).
my $python = '/usr/bin/python3';
my $parse_py = q{
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        out.append({"family": family.name, "type": family.type,
                    "name": s.name, "labels": s.labels,
                    "value": repr(float(s.value))})
json.dump(out, sys.stdout)
};

my @exporters;

# Why the exporter tests cannot run on this machine, or undef if they can:
# the exporter binary and the Python parser are Debian packages, which
# scripts/deps.sh installs when make runs as root (it fails the build if
# it cannot), so only a build by another user can lack them.
sub exporter_missing
{
	my @missing;
	push @missing, 'prometheus-postgres-exporter' unless -x $exporter_bin;
	my ($out, $err) = ('', '');
	push @missing, 'python3-prometheus-client'
	  unless -x $python
	  && IPC::Run::run([ $python, '-c', 'import prometheus_client.parser' ],
		'<', \undef, '>', \$out, '2>', \$err);
	return undef unless @missing;
	return "Debian packages missing: @missing; "
	  . "run as root: apt-get install -y @missing";
}

# The exporter's version line ("postgres_exporter, version 0.11.1 ...").
sub exporter_version
{
	my ($out, $err) = ('', '');
	IPC::Run::run([ $exporter_bin, '--version' ],
		'<', \undef, '>', \$out, '2>', \$err);
	my ($line) = grep { /version/ } split /\n/, $out . $err;
	return $line // 'unknown';
}

# Start an exporter of our own for database "postgres" of $node, connecting
# as $role over the node's socket, with the query file and nothing of the
# machine's: it listens on a free port of 127.0.0.1 (never the Debian
# service's 9187), and its environment is only PATH, HOME (a directory of
# the test's own) and DATA_SOURCE_NAME, so that no PG_EXPORTER_* or
# DATA_SOURCE_* setting and no PG* variable of libpq reaches it
# (/etc/default/prometheus-postgres-exporter is read by the Debian service
# alone).  Only the query file's metrics, unless $opts{default_metrics}: then
# also the exporter's own, as the Debian service runs it.  Output goes to
# exporter_<name>.log in the test's log directory.  Returns {url, log,
# harness} once /metrics answers; dies after 60 s otherwise.
sub start_exporter
{
	my ($node, $role, %opts) = @_;
	my $name = $opts{name} // $role;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $log = "$PostgreSQL::Test::Utils::log_path/exporter_$name.log";
	my $dsn = sprintf('host=%s port=%d user=%s dbname=postgres sslmode=disable',
		$node->host, $node->port, $role);
	my @cmd = (
		$exporter_bin, "--web.listen-address=127.0.0.1:$port",
		"--extend.query-path=" . Cwd::abs_path($query_file),
		'--log.level=info');
	push @cmd,
	  qw(--disable-default-metrics --disable-settings-metrics
	  --no-collector.database --no-collector.bgwriter)
	  unless $opts{default_metrics};

	my $h;
	{
		local %ENV = (
			PATH => '/usr/bin:/bin',
			HOME => PostgreSQL::Test::Utils::tempdir("exporter_$name"),
			DATA_SOURCE_NAME => $dsn);
		$h = IPC::Run::start(\@cmd, '<', \undef, '>>', $log, '2>>', $log);
	}
	my $exp = { url => "http://127.0.0.1:$port/metrics", log => $log, harness => $h };
	push @exporters, $exp;

	my $http = HTTP::Tiny->new(timeout => 10);
	my $deadline = time + 60;
	until ($http->get($exp->{url})->{success})
	{
		die "exporter $name did not answer at $exp->{url} within 60 s:\n"
		  . PostgreSQL::Test::Utils::slurp_file($log)
		  if time > $deadline;
		select(undef, undef, undef, 0.1);
	}
	return $exp;
}

# Stop an exporter that start_exporter() started (SIGTERM, SIGKILL after
# 5 s) and wait for it.  Exporters still running when the test ends are
# stopped the same way.
sub stop_exporter
{
	my ($exp) = @_;
	return unless $exp->{harness};
	$exp->{harness}->kill_kill(grace => 5);
	delete $exp->{harness};
}

END
{
	stop_exporter($_) foreach @exporters;
}

# GET the exporter's /metrics.  Returns the body, and the samples as the
# Prometheus client's parser reads them: a list of {family, type, name,
# labels, value}.  Dies if the request or the parse fails.
sub scrape
{
	my ($exp) = @_;
	my $r = HTTP::Tiny->new(timeout => 30)->get($exp->{url});
	die "GET $exp->{url}: $r->{status} $r->{reason}\n$r->{content}"
	  unless $r->{success};
	my ($out, $err) = ('', '');
	IPC::Run::run([ $python, '-c', $parse_py ],
		'<', \$r->{content}, '>', \$out, '2>', \$err)
	  or die "the Prometheus client cannot parse $exp->{url}: $err";
	return ($r->{content}, JSON::PP->new->decode($out));
}

# The keys that occur twice in one object of the JSON file $file, space
# separated ("" if none), as Debian's python3 json module reads it: JSON::PP
# keeps the last value and says nothing.  Dies if python3 cannot parse the
# file.
my $dup_py = q{
import json, sys
dups = []
def pairs(kv):
    seen = set()
    for k, _ in kv:
        if k in seen:
            dups.append(k)
        seen.add(k)
    return dict(kv)
with open(sys.argv[1], encoding="utf-8") as f:
    json.load(f, object_pairs_hook=pairs)
print(" ".join(dups))
};

sub json_duplicate_keys
{
	my ($file) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ $python, '-c', $dup_py, $file ],
		'<', \undef, '>', \$out, '2>', \$err)
	  or die "python3 cannot parse $file: $err";
	chomp $out;
	return $out;
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

# pg_lockstat_top run step by step, whatever its interval and the machine's
# speed.  Each sample of the program reads pg_lockstat_status (the time,
# stats_reset) and then the counters (pg_lwlock_stats first) in one
# transaction (tools/pg_lockstat_top/sample.c).  A gate session holds one of
# those views in ACCESS EXCLUSIVE mode, so that the next sample waits for it
# in pg_stat_activity (wait_event_type "Lock") at that point:
#   'sample':   pg_lockstat_status: before the sample reads anything;
#   'counters': pg_lwlock_stats: after its time and stats_reset, before its
#               counters.
# start_gated_top() starts $top with @args (its application_name is
# pg_lockstat_top_gated) and returns once its first sample, the baseline,
# waits at the 'sample' gate.  gated_top_pass($t, $next) lets the waiting
# sample go on and, unless $next is undef, returns once the following
# sample waits at gate $next: what the test does between two calls happens
# between those two samples.  The gate behind the sample let through is
# closed before it goes: a second session asks for the lock on
# pg_lockstat_status and waits in the queue behind the sample, which gets
# it first and keeps it to its end; so when that lock is granted the sample
# has ended, and a Lock wait seen after that is the next sample's.
# finish_gated_top($t) waits for the program's end (after the last pass,
# with $next undef, -n must be reached) and returns its exit code, stdout
# and stderr.
sub start_gated_top
{
	my ($node, $top, @args) = @_;
	my $t = { stdout => '', stderr => '', at => 'sample' };
	($t->{ctl}) = lasting_session($node);
	foreach my $gate ('a', 'b', 'counters')
	{
		($t->{$gate}, $t->{"${gate}_pid"}) = lasting_session($node);
	}
	$t->{held} = 'a';
	$t->{a}->query_safe(
		'BEGIN; LOCK TABLE pg_lockstat_status IN ACCESS EXCLUSIVE MODE;');
	$t->{timer} = IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default);
	{
		local $ENV{PGAPPNAME} = 'pg_lockstat_top_gated';
		$t->{run} = IPC::Run::start(
			[ $top, @args ],
			'<' => \undef,
			'>' => \$t->{stdout},
			'2>' => \$t->{stderr},
			$t->{timer});
	}
	gated_top_wait($t);
	return $t;
}

# Wait until the sample of gated pg_lockstat_top $t waits at the closed
# gate; dies at once if the program has ended.
sub gated_top_wait
{
	my ($t) = @_;
	poll_session(
		$t->{ctl},
		q{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE application_name = 'pg_lockstat_top_gated'
		    AND wait_event_type = 'Lock'},
		"pg_lockstat_top did not reach the '$t->{at}' gate",
		sub {
			$t->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
			$t->{run}->pump_nb;
			die "pg_lockstat_top ended before the '$t->{at}' gate:\n"
			  . "$t->{stdout}$t->{stderr}"
			  unless $t->{run}->pumpable;
		});
	return;
}

# Let the sample of gated pg_lockstat_top $t that waits at the gate go on;
# unless $next is undef, return once the following sample waits at gate
# $next ('sample' or 'counters'), see start_gated_top().
sub gated_top_pass
{
	my ($t, $next) = @_;
	my $lock = 'BEGIN; LOCK TABLE %s IN ACCESS EXCLUSIVE MODE;';
	die "unknown gate $next"
	  if defined $next && $next ne 'sample' && $next ne 'counters';

	# the gate behind the waiting sample: queued after it
	my $behind;
	if (defined $next)
	{
		$behind = $t->{held} eq 'a' ? 'b' : 'a';
		$t->{$behind}->query_until(qr/gate queued/,
			"\\echo gate queued\n"
			  . sprintf($lock, 'pg_lockstat_status')
			  . "\n\\echo gate closed\n");
		poll_session($t->{ctl},
			qq{SELECT wait_event_type = 'Lock' FROM pg_stat_activity
			   WHERE pid = $t->{"${behind}_pid"}},
			'the next gate did not queue for its lock');
	}

	# let the waiting sample go on
	if ($t->{at} eq 'counters')
	{
		$t->{counters}->query_safe('COMMIT');
	}
	else
	{
		$t->{ $t->{held} }->query_safe('COMMIT');
	}
	$t->{held} = '';
	if (!defined $next)
	{
		$t->{at} = 'open';
		return;
	}

	# the sample has ended once the gate behind it holds its lock
	$t->{$behind}->query_until(qr/gate closed/, '');
	$t->{held} = $behind;
	if ($next eq 'counters')
	{
		$t->{counters}->query_safe(sprintf($lock, 'pg_lwlock_stats'));
		$t->{$behind}->query_safe('COMMIT');
		$t->{held} = '';
	}
	$t->{at} = $next;
	gated_top_wait($t);
	return;
}

# After the last gated_top_pass($t, undef): wait for the end of
# pg_lockstat_top $t and its gate sessions; returns its exit code, stdout
# and stderr.
sub finish_gated_top
{
	my ($t) = @_;
	die 'pg_lockstat_top still waits at a gate' unless $t->{at} eq 'open';
	$t->{timer}->start($PostgreSQL::Test::Utils::timeout_default);
	$t->{run}->finish;
	$_->quit foreach @$t{qw(ctl a b counters)};
	return ($t->{run}->result(0), $t->{stdout}, $t->{stderr});
}

# Sessions that make blocked calls on the lockstat_test LWLock on demand, in
# a few round trips and with no new connection, for tests that repeat them
# between the samples of gated_top_pass(): a holder, one waiter session for
# each entry of @sets (SET commands that it runs first, '' for none) and a
# control session.  lwlock_block($b) returns once every waiter sleeps behind
# the holder, lwlock_unblock($b) once the holder has let go and each
# waiter's call has returned.  A round counts in tranche lockstat_test one
# exclusive acquisition (the holder's, at lwlock_block) and, per waiter, one
# shared acquisition and one blocked call (at lwlock_unblock); a waiter's
# call is "SELECT lockstat_test_lwlock('shared', 1, 0)" (its normalized
# text in pg_stat_statements: lockstat_test_lwlock($1, $2, $3)).
# lwlock_blocker_quit($b) ends the sessions.
sub lwlock_blocker
{
	my ($node, @sets) = @_;
	my $b = { waiters => [], waiter_pids => [] };
	($b->{ctl}) = lasting_session($node);
	($b->{holder}, $b->{holder_pid}) = lasting_session($node);
	foreach my $set (@sets)
	{
		my ($h, $pid) = lasting_session($node);
		$h->query_safe($set) if $set ne '';
		push @{ $b->{waiters} }, $h;
		push @{ $b->{waiter_pids} }, $pid;
	}
	return $b;
}

# Make the waiters of lwlock_blocker() $b sleep behind its holder: returns
# once they all wait for the lockstat_test LWLock.
sub lwlock_block
{
	my ($b) = @_;
	my $n = scalar(@{ $b->{waiters} });
	my $pids = join(', ', @{ $b->{waiter_pids} });

	$b->{holder}->query_until(qr/hold started/,
		"\\echo hold started\nSELECT lockstat_test_lwlock_hold('exclusive');\n"
		  . "\\echo hold ended\n");
	poll_session($b->{ctl},
		qq{SELECT count(*) = 1 FROM pg_stat_activity
		   WHERE pid = $b->{holder_pid} AND wait_event_type = 'Extension'},
		'the holder did not take the lockstat_test LWLock');
	foreach my $h (@{ $b->{waiters} })
	{
		$h->query_until(qr/call started/,
			"\\echo call started\nSELECT lockstat_test_lwlock('shared', 1, 0);\n"
			  . "\\echo call ended\n");
	}
	poll_session($b->{ctl},
		qq{SELECT count(*) = $n FROM pg_stat_activity
		   WHERE pid IN ($pids) AND wait_event = 'lockstat_test'},
		"$n waiters did not block on the lockstat_test LWLock");
	return;
}

# End the block of lwlock_block($b): returns once the holder has let go and
# every waiter's call has returned, its blocked call counted.
sub lwlock_unblock
{
	my ($b) = @_;
	$b->{ctl}->query_safe('SELECT lockstat_test_release()');
	$b->{holder}->query_until(qr/hold ended/, '');
	$_->query_until(qr/call ended/, '') foreach @{ $b->{waiters} };
	return;
}

# End the sessions of lwlock_blocker() $b (after lwlock_unblock).
sub lwlock_blocker_quit
{
	my ($b) = @_;
	$_->quit foreach ($b->{ctl}, $b->{holder}, @{ $b->{waiters} });
	return;
}

1;
