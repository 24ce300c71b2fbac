# Copyright (c) 2026, pg_lockstat developers
#
# pg_lockstat_top, the live client, run gated
# (LockStatTest::Top::start_gated_top: each of its samples waits for the
# test's go, so that the test decides what happens between two samples, on a
# machine of any speed):
# - batch mode: the columns, nonzero rates for the lockstat_test tranche
#   from one blocked call per interval, the active backends;
# - CSV across a reset before a sample and one between a sample's status and
#   its counters: every number parses and none is negative, exactly the
#   intervals with a reset are marked, and each interval's counts are those
#   since the reset;
# - Busy % and Ceil tps, in batch mode and CSV: a busy share above 0 and at
#   most 100 % for holds of the test lock inside one interval, equal to the
#   estimated hold time over the interval, a ceiling of tps over it where
#   there were transactions, and 0 and no ceiling without activity;
# - extension missing, role without pg_read_all_stats, library not
#   preloaded, server unreachable: one line saying what to do, exit code 2;
# - bad options: exit code 1, a message naming the option and what it takes;
#   --help and --version;
# - SIGINT and SIGTERM in batch mode: a normal exit with code 0, also while
#   a sample waits for a lock (the query is cancelled);
# - a server restart during a run: the gap is marked and the run goes on;
# - the spinlock call-site section of pg_spinlock_stats: a contended wait
#   for the test spinlock in every interval;
# - on a terminal (a pty): keys change the sort, "q" and Ctrl-C restore the
#   terminal;
# - on terminals of 80x24 and 160x50: every section keeps its heading and a
#   share of the rows, nothing goes past the window, and a section cut
#   short says how many rows it left out; "?" shows a legend of every
#   column and key, which fits 80x24.

use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use LockStatTest;
use LockStatTest::Counters;
use LockStatTest::Top;

# every hold timed, so that each interval's holds of the test lock are
# samples of the hold section
my $node = LockStatTest::new_node('top',
	"pg_lockstat.hold_sample_every = 1\n");
my $top = $node->config_data('--bindir') . '/pg_lockstat_top';
ok(-x $top, 'pg_lockstat_top is installed in the server bindir');

my $connstr = $node->connstr('postgres');

# Run pg_lockstat_top to its end; returns exit code, stdout, stderr.
sub run_top
{
	my ($stdout, $stderr) = ('', '');
	IPC::Run::run(
		[ $top, @_ ],
		'<' => \undef,
		'>' => \$stdout,
		'2>' => \$stderr,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	return ($? >> 8, $stdout, $stderr);
}

# Split batch output into its reports (one per header line).
sub reports
{
	my ($out) = @_;
	my @blocks = split /^(?=\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  strategy )/m,
	  $out;
	return grep { /^\d{4}-/ } @blocks;
}

# The rate columns of a table, as pg_lockstat_top is compiled with the
# counter table (tools/pg_lockstat_top/columns.c): the top_labels of the
# counters of $kind with a top_name, in the table's order, but those of the
# sampled holds.
my @counters = LockStatTest::Counters::counters();

sub rate_columns
{
	my ($kind) = @_;
	my %seen;
	return grep { !$seen{$_}++ }
	  map { $_->{top_label} }
	  grep {
		$_->{kind} eq $kind
		  && $_->{top_name} ne ''
		  && $_->{top_name} !~ /^hold_(?:samples|time)$/
	  } @counters;
}
# the shares of all tranches' blocks and spin delays, headed so that they do
# not read as blocks per acquisition, and beside the share of blocks the
# interval's busy share and the throughput ceiling it sets
my @tranche_columns = (rate_columns('lwlock'), 'Blk share', 'Busy %',
	'Ceil tps', 'Delay share');
my @site_columns = rate_columns('spin');
my $columns_1_0 = qr{^(?:Acq/s|Blk/s|SpinDelay/s|Wait ms/s|Contended/s|Spins/s|Delays/s)$};
is( join(' ', grep { /$columns_1_0/ } @tranche_columns),
	'Acq/s Blk/s SpinDelay/s Wait ms/s',
	'the rate columns of the tranches that the table gives have those of 1.0, in order');
my $header_re = qr/^Tranche\s+@{[ join('\s+', map { quotemeta } @tranche_columns) ]}$/m;

# The values of the row named $name of a table of report $r (the first such
# row), by the headings @columns.
sub row_values
{
	my ($r, $name, @columns) = @_;
	my %v;
	@v{@columns} = split ' ', $1 if $r =~ /^\Q$name\E\s+(.*)$/m;
	return \%v;
}

# --- batch mode, one blocked call per interval ------------------------------
# pg_lockstat_top runs gated (LockStatTest::Top::start_gated_top): between two
# of its samples a waiter's blocked call ends (lwlock_unblock), and the next
# holder and waiter are left in place (lwlock_block), so that each sample also
# sees them as active backends ("active" is 2 or more: gate sessions may be
# active too).  Every report has the acquisitions, the block and the wait of
# one call, however slow the machine.
my $t = LockStatTest::Top::start_gated_top($node, $top, '--batch', '-n', '3',
	'-i', '0.1', '-d', $connstr);
my $blocker = LockStatTest::Top::lwlock_blocker($node, '');
LockStatTest::Top::lwlock_block($blocker);
foreach my $k (1 .. 3)
{
	LockStatTest::Top::gated_top_pass($t, 'sample');
	LockStatTest::Top::lwlock_unblock($blocker);
	LockStatTest::Top::lwlock_block($blocker);
}
LockStatTest::Top::gated_top_pass($t, undef);
my ($rc, $out, $err) = LockStatTest::Top::finish_gated_top($t);
LockStatTest::Top::lwlock_unblock($blocker);
is($rc, 0, 'batch run of 3 reports exits with 0');
is($err, '', 'nothing on stderr');
my @reports = reports($out);
is(scalar(@reports), 3, 'three reports');
my ($with_rates, $with_active, $with_holds, $with_hold_header) = (0, 0, 0, 0);

foreach my $r (@reports)
{
	like(
		$r,
		qr/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  strategy default  interval \d+\.\d\d s  tps (\d+\.\d|-)  active \d+$/m,
		'header line: time, strategy, interval, tps, active backends');
	like($r, $header_re, 'column names');
	my $v = row_values($r, 'lockstat_test', @tranche_columns);
	$with_rates++
	  if ($v->{'Acq/s'} // '') =~ /^\d+\.\d$/
	  && $v->{'Blk/s'} =~ /^\d+\.\d$/
	  && $v->{'SpinDelay/s'} =~ /^\d+\.\d$/
	  && $v->{'Wait ms/s'} =~ /^\d+\.\d\d$/
	  && $v->{'Acq/s'} > 0
	  && $v->{'Blk/s'} > 0
	  && $v->{'Wait ms/s'} > 0;
	$with_active++ if $r =~ /active ([2-9]|\d\d)$/m;
	$with_hold_header++
	  if $r =~ /^Sampled holds\s+Samples\s+Hold us\s+Held ms\/s$/m;
	$with_holds++
	  if $r =~ /^lockstat_test\s+[1-9]\d*\s+(\d+\.\d\d)\s+\d+\.\d\d$/m
	  && $1 > 0;
}
is($with_hold_header, 3, 'every report has the section of sampled holds');
cmp_ok($with_holds, '>=', 1,
	'the holds of lockstat_test show as samples with a mean hold time')
  or diag($out);
is($with_rates, 3,
	'every report has nonzero acquisitions, blocks and wait for lockstat_test'
) or diag($out);
is($with_active, 3,
	'the holder and the waiter count as active backends in every report')
  or diag($out);
ok( (grep { (row_values($_, 'lockstat_test', @tranche_columns)->{'Blk share'} // '') =~ /^\d+\.\d\d$/ } @reports),
	'lockstat_test has a share of the blocks');

# --- CSV across resets ---------------------------------------------------------
# Gated too, with a reset at two points of a sample: before it reads
# anything (report 2: stats_reset moved), and between its status and its
# counters (report 4: the counters went down; report 5: stats_reset
# moved).  Each interval has one round of the blocker, but that of report 4
# comes before the reset, which leaves tranche lockstat_test no row there.
my @gate = (undef, 'sample', 'sample', 'sample', 'counters', 'sample',
	'sample');
my ($reset) = LockStatTest::lasting_session($node);
$t = LockStatTest::Top::start_gated_top($node, $top, '--csv', '-n', '6', '-i',
	'0.1', '-t', '0', '-d', $connstr);
foreach my $k (1 .. 6)
{
	LockStatTest::Top::gated_top_pass($t, $gate[$k]);
	$reset->query_safe('SELECT pg_lockstat_reset()') if $k == 2;
	LockStatTest::Top::lwlock_block($blocker);
	LockStatTest::Top::lwlock_unblock($blocker);
	$reset->query_safe('SELECT pg_lockstat_reset()') if $k == 4;
}
LockStatTest::Top::gated_top_pass($t, undef);
($rc, $out, $err) = LockStatTest::Top::finish_gated_top($t);
$reset->quit;
LockStatTest::Top::lwlock_blocker_quit($blocker);
is($rc, 0, 'CSV run exits with 0');
my @lines = split /\n/, $out;
# the columns of the CSV output as they have been since 1.0, in this order;
# a counter that the table adds to top adds its own (its count and rate)
my @csv_columns = qw(timestamp interval_s reset tranche_id tranche
  sh_acquires ex_acquires blocks spin_delays wait_time_ms
  acquires_per_s blocks_per_s spin_delays_per_s wait_ms_per_s
  blk_pct spin_delay_pct hold_samples hold_time_ms mean_hold_us);
my @header = split /,/, shift(@lines);
my %col = map { $header[$_] => $_ } 0 .. $#header;
is( join(',', grep { exists $col{$_} } @csv_columns),
	join(',', @csv_columns),
	'CSV header row: the columns of 1.0');
is( join(',', map { $col{$_} } @csv_columns),
	join(',', sort { $a <=> $b } map { $col{$_} } @csv_columns),
	'CSV header row: in their order');
my ($bad, $negative, $holds_bad, $hold_rows) = (0, 0, 0, 0);
my (@timestamps, %reset_of, %lockstat_of);
# fields that may be empty: no tranche ID (the overflow row), no share, no
# hold sample
my %may_be_empty = map { $col{$_} => 1 }
  qw(tranche_id blk_pct spin_delay_pct mean_hold_us ex_est_hold_time_ms
  busy_pct tps ceiling_tps);

foreach my $line (@lines)
{
	my @f = split /,/, $line, -1;
	my %f;
	@f{@header} = @f;
	if (@f != @header || $f[0] !~ /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d/)
	{
		$bad++;
		diag("bad CSV row: $line");
		next;
	}
	push @timestamps, $f{timestamp} unless exists $reset_of{ $f{timestamp} };
	$reset_of{ $f{timestamp} } .= $f{reset};
	# every hold timed, and each round's holds released within it: as many
	# samples as acquisitions, with a mean hold time
	if ($f{tranche} eq 'lockstat_test')
	{
		$lockstat_of{ $f{timestamp} } = "$f{sh_acquires} $f{ex_acquires} $f{blocks}";
		$hold_rows++;
		$holds_bad++
		  unless $f{hold_samples} == $f{sh_acquires} + $f{ex_acquires}
		  && $f{mean_hold_us} ne ''
		  && $f{mean_hold_us} > 0;
	}
	foreach my $i (1 .. $#f)
	{
		next if $i == $col{tranche} || ($f[$i] eq '' && $may_be_empty{$i});
		if ($f[$i] !~ /^\d+(\.\d+)?$/)
		{
			$negative++;
			diag("not a non-negative number in field $header[$i]: $line");
		}
	}
}
is($bad, 0, 'every CSV row has a field per column and a timestamp');
cmp_ok($hold_rows, '>=', 1, 'rows of lockstat_test');
is($holds_bad, 0,
	'each row of lockstat_test has as many hold samples as acquisitions, and a mean hold time'
);
is($negative, 0, 'no negative (or unparsable) number');
is(scalar(@timestamps), 6, 'six intervals');
# one reset flag per interval, if all of its rows agree
my @flags = map { $reset_of{$_} =~ /^(0+|1+)$/ ? substr($1, 0, 1) : 'mixed' }
  @timestamps;
is("@flags", '0 1 0 1 1 0',
	'the intervals with a reset are marked, and only those');
is( join(',', map { $lockstat_of{$_} // 'none' } @timestamps),
	'1 1 1,1 1 1,1 1 1,none,1 1 1,1 1 1',
	'lockstat_test: sh_acquires, ex_acquires and blocks of each round, counted since the reset'
);

# --- Busy % and Ceil tps ----------------------------------------------------
# Gated, two intervals: in the first a session takes the test LWLock
# exclusively 20 times for 2 ms each, every hold timed, and makes its
# transaction's count visible in pg_stat_database before the next sample
# (pg_stat_force_next_flush(): flushed before the session goes idle); the
# second has no activity on the lock.  The holds all lie within the first
# interval, so its busy share is above 0 and at most 100 % on any machine;
# the ceiling is the interval's tps over it, shown since that interval had
# transactions.  Without activity the share is 0 and there is no ceiling.
# Returns the output of the run in @mode (--batch or --csv).
sub busy_run
{
	my (@mode) = @_;
	my $t = LockStatTest::Top::start_gated_top($node, $top, @mode, '-n', '2',
		'-i', '0.1', '-t', '0', '-d', $connstr);
	LockStatTest::Top::gated_top_pass($t, 'sample');
	$node->safe_psql('postgres',
		"SET pg_lockstat.hold_sample_every = 1; "
		  . "SELECT lockstat_test_lwlock('exclusive', 20, 2000); "
		  . "SELECT pg_stat_force_next_flush();");
	LockStatTest::Top::gated_top_pass($t, 'sample');
	LockStatTest::Top::gated_top_pass($t, undef);
	my ($rc, $out, $err) = LockStatTest::Top::finish_gated_top($t);
	is($rc, 0, "busy share, @mode: exit code 0");
	return $out;
}

@reports = reports(busy_run('--batch'));
is(scalar(@reports), 2, 'busy share, batch: two reports');
my @busy = map { row_values($_, 'lockstat_test', @tranche_columns) } @reports;
like($busy[0]->{'Busy %'} // '', qr/^\d+\.\d\d$/,
	'batch: lockstat_test has a busy share in the interval of its holds');
ok($busy[0]->{'Busy %'} > 0 && $busy[0]->{'Busy %'} <= 100,
	'batch: that busy share is above 0 and at most 100 %')
  or diag("@reports");
like($busy[0]->{'Ceil tps'}, qr/^\d+$/,
	'batch: a ceiling in the interval with transactions');
is( ($busy[1]->{'Busy %'} // '') . ' ' . ($busy[1]->{'Ceil tps'} // ''),
	'0.00 -', 'batch: without activity, a busy share of 0 and no ceiling')
  or diag("@reports");

@lines = split /\n/, busy_run('--csv');
@header = split /,/, shift(@lines);
is( join(',', @header[ -4 .. -1 ]),
	'ex_est_hold_time_ms,busy_pct,tps,ceiling_tps',
	'CSV: the busy share and the ceiling with what they come from, last');
my (@test_rows, $ceiling_bad);
foreach my $line (@lines)
{
	my %f;
	@f{@header} = split /,/, $line, -1;
	push @test_rows, \%f if $f{tranche} eq 'lockstat_test';
	# a ceiling only where the busy share and tps are above 0, and then
	# their ratio, but for the last digits, which the rounding of the three
	# changes (and a busy share too small to compare as printed)
	my $ceiling = $f{ceiling_tps};
	my $both = $f{busy_pct} ne '' && $f{tps} ne '' && $f{tps} > 0;
	my $want = $both && $f{busy_pct} > 0 ? 100 * $f{tps} / $f{busy_pct} : 0;
	next
	  if ($ceiling eq '' && !($both && $f{busy_pct} > 0))
	  || ($ceiling ne '' && $both && $f{busy_pct} < 0.1)
	  || ($ceiling ne '' && $want > 0
		&& abs($ceiling - $want) <=
		0.1 + $want * (0.06 / $f{tps} + 0.006 / $f{busy_pct}));
	$ceiling_bad++;
	diag("ceiling not tps / busy: $line");
}
is($ceiling_bad // 0, 0, 'CSV: every ceiling is tps over the busy share, and only there');
is(scalar(@test_rows), 2, 'CSV: lockstat_test has a row in both intervals');
my ($busy, $quiet) = @test_rows;
my $computed = $busy->{ex_est_hold_time_ms} / (10 * $busy->{interval_s});
ok( $busy->{ex_est_hold_time_ms} > 0
	  && abs($busy->{busy_pct} - $computed) <=
	  0.006 + ($computed * 0.001 + 0.0001) / $busy->{interval_s},
	'CSV: the busy share is the estimated hold time over the interval')
  or diag(join(',', map { "$_=$busy->{$_}" } @header));
ok($busy->{busy_pct} > 0 && $busy->{busy_pct} <= 100,
	'CSV: the busy share is above 0 and at most 100 %');
ok($busy->{tps} > 0 && $busy->{ceiling_tps} ne '',
	'CSV: the interval with the transaction has tps and a ceiling');
is("$quiet->{ex_est_hold_time_ms} $quiet->{busy_pct} $quiet->{ceiling_tps}",
	'0.000 0.00 ', 'CSV: without activity, nothing held and no ceiling');

# --- setup errors: exit 2 with one line saying what to do --------------------
$node->safe_psql('postgres', 'CREATE DATABASE regress_nolockstat');
($rc, $out, $err) =
  run_top('--batch', '-n', '1', '-d', $node->connstr('regress_nolockstat'));
is($rc, 2, 'extension missing: exit code 2');
like(
	$err,
	qr/^pg_lockstat_top: error: extension "pg_lockstat" is not installed in database "regress_nolockstat": run CREATE EXTENSION pg_lockstat; in it/,
	'extension missing: says to CREATE EXTENSION');
is(scalar(split /\n/, $err), 1, 'extension missing: one line');

$node->safe_psql('postgres', 'CREATE ROLE regress_top_plain LOGIN');
($rc, $out, $err) =
  run_top('--batch', '-n', '1', '-d', $connstr, '-U', 'regress_top_plain');
is($rc, 2, 'role without pg_read_all_stats: exit code 2');
like(
	$err,
	qr/^pg_lockstat_top: error: role "regress_top_plain" may not read the pg_lockstat views: GRANT pg_read_all_stats TO "regress_top_plain";/,
	'role without pg_read_all_stats: says what to GRANT');
is(scalar(split /\n/, $err), 1, 'permission denied: one line');
is($out, '', 'permission denied: nothing on stdout');

$node->safe_psql('postgres', 'GRANT pg_read_all_stats TO regress_top_plain');
($rc, $out, $err) = run_top(
	'--batch', '-n', '1', '-i',
	'0.2', '-d', $connstr, '-U',
	'regress_top_plain');
is($rc, 0, 'after the GRANT the role can run it');
like($out, $header_re, 'after the GRANT: a report');

($rc, $out, $err) =
  run_top('--batch', '-n', '1', '-h', $node->host, '-p', '1', '-d',
	'postgres');
is($rc, 2, 'no server: exit code 2');
like(
	$err,
	qr/^pg_lockstat_top: error: connection to server .* failed/,
	'no server: libpq says why');

# --- bad options: exit 1 ---------------------------------------------------------
foreach my $args (
	[ '-i', '0' ],
	[ '-i', 'abc' ],
	[ '-i', '0.01' ],
	[ '-n', '0' ],
	[ '-t', '-1' ],
	[ '-s', 'name' ],
	['--bogus'],
	[ 'db1', 'db2' ])
{
	($rc, $out, $err) = run_top(@$args, '-d', $connstr);
	is($rc, 1, "bad option @$args: exit code 1");
	like(
		$err,
		qr/Try "pg_lockstat_top --help" for more information/,
		"bad option @$args: hint");
}
like(
	(run_top('-s', 'name'))[2],
	qr/invalid sort key "name": use blocks, wait, spin_delays or acquires/,
	'bad sort key: names the valid keys');
($rc, $out, $err) = run_top('--help');
is($rc, 0, '--help exits with 0');
like(
	$out,
	qr/^Usage:\n  pg_lockstat_top \[OPTION\]\.\.\. \[DBNAME\]/m,
	'--help shows the usage');
like(
	$out,
	qr/Exit status: 0 when done, 1 for bad options, 2 when/,
	'--help documents the exit codes');
($rc, $out, $err) = run_top('--version');
is($rc, 0, '--version exits with 0');
like($out, qr/^pg_lockstat_top \(pg_lockstat\) \d+\.\d+$/, '--version');

# option arguments are checked to the letter: no empty or trailing text, the
# messages name the option and what it takes, and -? anywhere is --help
foreach my $case (
	[
		[ '-t', '' ],
		qr/invalid value "" for -t\/--top: must be an integer of at least 0/
	],
	[
		[ '-n', '2 ' ],
		qr/invalid value "2 " for -n\/--count: must be an integer of at least 1/
	],
	[
		[ '-n', '1x' ],
		qr/invalid value "1x" for -n\/--count: must be an integer of at least 1/
	],
	[
		[ '-i', '0' ],
		qr/invalid interval "0": must be a number of seconds from 0\.1 to 86400/
	],
	[
		[ '-i', '' ],
		qr/invalid interval "": must be a number of seconds from 0\.1 to 86400/
	])
{
	my ($args, $message) = @$case;
	($rc, $out, $err) = run_top(@$args, '-d', $connstr);
	is($rc, 1, "bad option argument '@$args': exit code 1");
	like($err, qr/^pg_lockstat_top: error: $message\n/,
		"bad option argument '@$args': the message");
	is($out, '', "bad option argument '@$args': nothing on stdout");
}
($rc, $out, $err) = run_top('-d', $connstr, '-?');
is($rc, 0, '-? after other options exits with 0');
like($out, qr/^Usage:/m, '-? after other options shows the usage');

# --- the spinlock call-site section (pg_spinlock_stats) -----------------------
# One contended wait for the test spinlock: a session holds it, another
# waits for it; returns once the hold has ended after the wait began
# (wait_for_spin_waiters, which counts it on every major) and the waiter's
# call has returned, its wait counted at the call site of
# lockstat_test_spinlock().
sub contended_spin_wait
{
	my $since = LockStatTest::spin_waits($node);
	my $holder = LockStatTest::hold_spinlock($node);
	my $waiter = $node->background_psql('postgres');
	$waiter->query_until(qr/started/,
		"\\echo started\nSELECT lockstat_test_spinlock(1, 0);\n");
	LockStatTest::wait_for_spin_waiters($node, $since, 1, release => 1);
	$waiter->quit;
	$holder->quit;
	return;
}

# pg_lockstat_top runs gated, and between two samples one session waits for
# the test spinlock that another holds (LockStatTest::hold_spinlock): the
# hold ends once the wait has begun (wait_for_spin_waiters, which counts it
# on every major), and the waiter's call has returned, its wait counted at
# the call site of lockstat_test_spinlock(), before the next sample.
$t = LockStatTest::Top::start_gated_top($node, $top, '--batch', '-n', '2',
	'-i', '0.1', '-d', $connstr);
foreach my $k (1 .. 2)
{
	LockStatTest::Top::gated_top_pass($t, 'sample');
	contended_spin_wait();
}
LockStatTest::Top::gated_top_pass($t, undef);
($rc, $out, $err) = LockStatTest::Top::finish_gated_top($t);
is($rc, 0, 'with the spinlock view: exit code 0');
is( join(' ', grep { /$columns_1_0/ } @site_columns),
	'Contended/s Spins/s Delays/s Wait ms/s',
	'the rate columns of the call sites that the table gives have those of 1.0, in order');
like(
	$out,
	qr/^Spinlock call site\s+@{[ join('\s+', map { quotemeta } @site_columns) ]}$/m,
	'spinlock section shown');
is( scalar(
		grep {
			my ($site) = /^(lockstat_test\.c:\d+ lockstat_test_spinlock)\s/m;
			my $v = defined $site ? row_values($_, $site, @site_columns) : {};
			($v->{'Contended/s'} // '') =~ /^\d+\.\d$/
			  && $v->{'Contended/s'} > 0
			  && $v->{'Spins/s'} > 0
			  && $v->{'Wait ms/s'} =~ /^\d+\.\d\d$/
		} reports($out)),
	2,
	'every report has the test spinlock\'s call site with nonzero contended waits and spins'
) or diag($out);

# --- a terminal: full screen, keys, q and Ctrl-C ---------------------------------
SKIP:
{
	skip 'IO::Pty is not installed', 9 unless eval { require IO::Pty; 1 };

	foreach my $stop ('q', "\x03")
	{
		my ($in, $screen) = ('', '');
		my $timer =
		  IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default);
		my $h = IPC::Run::start(
			[ $top, '-i', '0.3', '-d', $connstr ],
			'<pty<' => \$in,
			'>pty>' => \$screen,
			$timer);
		$h->pump
		  until $screen =~ /Tranche +Acq\/s/ || $timer->is_expired;
		$in .= 'a';
		$h->pump until $screen =~ /sort: acquires/ || $timer->is_expired;
		$in .= $stop;
		$h->finish;
		my $name = $stop eq 'q' ? 'q' : 'Ctrl-C';
		is($h->result(0), 0, "terminal: $name exits with 0");
		like(
			$screen,
			qr/sort: acquires/,
			"terminal: key a sorts by acquisitions ($name)");
		like($screen, qr/\e\[\?25h\e\[\?1049l$/,
			"terminal: $name restores the screen and the cursor");
	}

	# Before the first report (a 600 s interval, so none comes), a sort key
	# and a window size change each redraw the screen at once: the main
	# loop acts on the events that the wait returns.
	my ($in, $screen) = ('', '');
	my $timer = IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default);
	my $h = IPC::Run::start(
		[ $top, '-i', '600', '-d', $connstr ],
		'<pty<' => \$in,
		'>pty>' => \$screen,
		$timer);
	my $titles = sub { scalar(() = $screen =~ /pg_lockstat_top \S+ on /g) };
	$h->pump
	  until $screen =~ /waiting 600\.00 s/ || $timer->is_expired;
	# the redrawn screen may arrive in pieces (seen under qemu-user): wait
	# for all of it, not for its first line
	my $redrawn = qr/sort: wait .*\n.*\n?.*waiting 600\.00 s/s;
	$in .= 'w';
	$h->pump until $screen =~ $redrawn || $timer->is_expired;
	like($screen, $redrawn,
		'terminal: a sort key before the first report redraws the waiting screen');
	my $before = $titles->();
	$h->signal('WINCH');
	$h->pump until $titles->() > $before || $timer->is_expired;
	cmp_ok($titles->(), '>', $before,
		'terminal: a window size change redraws the screen');
	$in .= 'q';
	$h->finish;
	is($h->result(0), 0, 'terminal: q before the first report exits with 0');
}

# --- the screen sized to the window, cut with a mark; the legend ------------
# pg_lockstat_top runs gated on terminals of 80x24 and 160x50 with -t 10.
# Before its one report, ten waiters, each under a role of its own, block on
# the test LWLock (ten query rows and ten blocker rows: a row's key has the
# user) and one contended spin wait happens: every section has rows, and
# those of the queries and blockers are more than 24 lines can show.  Each
# section must keep its heading and a row, nothing may go past the window,
# and a section cut short must end with "... N more rows", N the rows left
# out of its top 10.
SKIP:
{
	skip 'IO::Pty is not installed', 29 unless eval { require IO::Pty; 1 };

	my @roles = map { "regress_top_role$_" } 1 .. 10;
	$node->safe_psql('postgres',
		join('', map { "CREATE ROLE $_; GRANT EXECUTE ON FUNCTION lockstat_test_lwlock(text, integer, integer, boolean) TO $_;" } @roles));
	my $waiters =
	  LockStatTest::Top::lwlock_blocker($node, map { "SET ROLE $_" } @roles);
	my %heading = (
		tranches => qr/^Tranche /,
		holds => qr/^Sampled holds /,
		queries => qr/^Wait ms\/s .* Query$/,
		blockers => qr/^Wait ms\/s .* Waiter \/ holder \/ root holder$/,
		sites => qr/^Spinlock call site /);
	my @order = qw(tranches holds queries blockers sites);

	foreach my $size ([ 24, 80 ], [ 50, 160 ])
	{
		my ($rows, $cols) = @$size;
		my $t = LockStatTest::Top::start_gated_screen($node, $top, $rows,
			$cols, '-n', '1', '-i', '0.1', '-t', '10', '-d', $connstr);
		LockStatTest::Top::gated_top_pass($t, 'sample');
		LockStatTest::Top::lwlock_block($waiters);
		LockStatTest::Top::lwlock_unblock($waiters);
		contended_spin_wait();
		LockStatTest::Top::gated_top_pass($t, undef);
		my ($rc, $out) = LockStatTest::Top::finish_gated_top($t);
		my @screen = LockStatTest::Top::screen($out);
		my $shown = join("\n", @screen);
		is($rc, 0, "${cols}x$rows: exit code 0");
		cmp_ok(scalar(@screen), '<=', $rows, "${cols}x$rows: the screen fits the window")
		  or diag($shown);
		is(scalar(grep { length($_) > $cols } @screen), 0,
			"${cols}x$rows: no line is wider than the window");
		unlike($shown, qr/^\.\.\. \d+ more lines$/m,
			"${cols}x$rows: the report is not cut at the bottom");

		# the lines of each section, by its heading
		my (%section, $in);
		foreach my $line (@screen)
		{
			($in) = grep { $line =~ $heading{$_} } @order
			  if grep { $line =~ $heading{$_} } @order;
			push @{ $section{$in} }, $line if defined $in;
		}
		is( join(' ', grep { $section{$_} } @order),
			"@order", "${cols}x$rows: every section is shown, in order")
		  or diag($shown);
		my (%rows, %more);
		foreach my $s (@order)
		{
			my @lines = @{ $section{$s} // [] };
			shift @lines;
			$more{$s} = pop(@lines) =~ /^\.\.\. (\d+) more rows?$/ ? $1 : 0
			  if @lines && $lines[-1] =~ /^\.\.\. \d+ more rows?$/;
			$more{$s} //= 0;
			$rows{$s} = scalar(@lines) / ($s eq 'blockers' ? 3 : 1);
		}
		is(scalar(grep { $rows{$_} >= 1 } @order),
			5, "${cols}x$rows: every section shows at least one row")
		  or diag($shown);
		is($rows{queries} + $more{queries},
			10, "${cols}x$rows: the queries shown and the mark make the top 10")
		  or diag($shown);
		is($rows{blockers} + $more{blockers},
			10, "${cols}x$rows: the blockers shown and the mark make the top 10")
		  or diag($shown);
		like(
			join("\n", @{ $section{sites} // [] }),
			qr/^lockstat_test\.c:\d+ lockstat_test_spinlock /m,
			"${cols}x$rows: the spinlock section shows the test spinlock's call site"
		) or diag($shown);
		if ($rows == 24)
		{
			cmp_ok($more{queries} * $more{blockers}, '>', 0,
				'80x24: the queries and the blockers are cut, each with its mark');
		}
		else
		{
			is($more{sites}, 0, '160x50: the spinlock section is shown whole')
			  or diag($shown);
		}
	}
	LockStatTest::Top::lwlock_blocker_quit($waiters);

	# the legend: "?" shows it at once (a 600 s interval, so no report
	# comes), in 80x24; "?" again goes back
	my ($keys, $screen) = ('', '');
	my $timer = IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default);
	my $h = IPC::Run::start(
		[
			'sh', '-c', 'stty rows 24 cols 80 && exec "$@"',
			'sh', $top, '-i', '600', '-d', $connstr
		],
		'<pty<' => \$keys,
		'>pty>' => \$screen,
		$timer);
	$h->pump until $screen =~ /waiting 600\.00 s/ || $timer->is_expired;
	$keys .= '?';
	$h->pump
	  until $screen =~ /\.\.\. N more rows: .*\e\[J/s || $timer->is_expired;
	my @legend = LockStatTest::Top::screen($screen);
	my $legend = join("\n", @legend);
	cmp_ok(scalar(@legend), '<=', 24, 'legend: fits 24 lines') or diag($legend);
	is(scalar(grep { length($_) > 80 } @legend), 0,
		'legend: no line is wider than 80 columns') or diag($legend);
	unlike($legend, qr/^\.\.\. \d+ more lines$/m, 'legend: not cut');
	my @explained = (
		'Tranche', @tranche_columns, 'Sampled holds', 'Samples', 'Hold us',
		'Held ms/s', 'Wait ms/s', 'Blk/s', 'Top tranche', 'Query',
		'(no query ID)', '(residual', 'Waiter / holder / root holder',
		'holder:', 'root:', 'Spinlock call site', @site_columns,
		'... N more rows');
	is( join(', ', grep { index($legend, $_) < 0 } @explained),
		'', 'legend: every column of every section is explained');
	like($legend, qr/^Keys: b w s a sort tranches by blocks, wait, spin delays, acquisitions;$/m,
		'legend: the sort keys');
	like($legend, qr/\? shows or hides this legend; q quits/,
		'legend: the keys ? and q');
	like($legend, qr/track_utility/,
		'legend: why a prepared COMMIT can have no query ID');
	$keys .= '?';
	$h->pump
	  until (LockStatTest::Top::screen($screen))[2] =~ /^waiting 600\.00 s/
	  || $timer->is_expired;
	like(join("\n", LockStatTest::Top::screen($screen)),
		qr/^waiting 600\.00 s/m, 'legend: "?" again goes back');
	$keys .= 'q';
	$h->finish;
	is($h->result(0), 0, 'legend: q exits with 0');
}

# --- SIGINT and SIGTERM in batch mode: a clean stop with exit code 0 ------------
# The signal comes while the program waits or while a sample's query runs;
# either way it exits normally (not killed by the signal) after the reports
# so far.  A cancelled query says so on stderr, as in psql, and nothing else.
foreach my $signal ('INT', 'TERM')
{
	my ($stdout, $stderr) = ('', '');
	my $timer = IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default);
	my $h = IPC::Run::start(
		[ $top, '--batch', '-i', '0.2', '-d', $connstr ],
		'<' => \undef,
		'>' => \$stdout,
		'2>' => \$stderr,
		$timer);
	$h->pump until scalar(reports($stdout)) >= 2 || $timer->is_expired;
	$h->signal($signal);
	$h->finish;
	is($h->full_result(0), 0,
		"SIG$signal in batch mode: exits normally with exit code 0");
	cmp_ok(scalar(reports($stdout)), '>=', 2,
		"SIG$signal in batch mode: the reports before it");
	like($stderr, qr/\A(Cancel request sent\n)?\z/,
		"SIG$signal in batch mode: nothing else on stderr");
}

# --- a stop signal cancels a sample that waits ----------------------------------
# A session holds pg_lwlock_stats in ACCESS EXCLUSIVE mode, so that the next
# sample waits for the lock.  SIGINT or SIGTERM must cancel that query and
# end the program with exit code 0 while the lock is still held (without
# the cancel it would wait until the timer kills the test), and its own
# cancel is no failed sample.
foreach my $signal ('INT', 'TERM')
{
	my ($stdout, $stderr) = ('', '');
	my $timer = IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default);
	my $h = IPC::Run::start(
		[ $top, '--batch', '-i', '0.2', '-d', $connstr ],
		'<' => \undef,
		'>' => \$stdout,
		'2>' => \$stderr,
		$timer);
	$h->pump until $stdout =~ /Tranche / || $timer->is_expired;
	my $locker = $node->background_psql('postgres');
	$locker->query_safe(
		'BEGIN; LOCK TABLE pg_lwlock_stats IN ACCESS EXCLUSIVE MODE;');
	$node->poll_query_until(
		'postgres',
		q{SELECT count(*) = 1 FROM pg_stat_activity
		  WHERE query LIKE '%.pg_lockstat_status s,%'
		    AND wait_event_type = 'Lock'}
	) or die 'pg_lockstat_top did not wait for the lock';
	$h->signal($signal);
	$h->finish;
	is($h->full_result(0), 0,
		"SIG$signal during a waiting sample: exit code 0");
	like($stderr, qr/\A(Cancel request sent\n)?\z/,
		"SIG$signal during a waiting sample: nothing else on stderr");
	unlike($stdout, qr/^-- sample failed/m,
		"SIG$signal during a waiting sample: no failed sample reported");
	$locker->quit;
}

# Four batch reports every 0.5 s, with $event run after the first one.
# Returns the exit code and stdout.
sub top_across
{
	my ($event) = @_;
	my ($stdout, $stderr) = ('', '');
	my $timer = IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default);
	my $h = IPC::Run::start(
		[ $top, '--batch', '-n', '4', '-i', '0.5', '-d', $connstr ],
		'<' => \undef,
		'>' => \$stdout,
		'2>' => \$stderr,
		$timer);
	$h->pump until $stdout =~ /Tranche / || $timer->is_expired;
	$event->();
	$h->finish;
	return ($h->result(0), $stdout);
}

# --- a server restart during a run ------------------------------------------------
{
	my ($rc, $stdout) = top_across(sub { $node->restart; });
	is($rc, 0, 'restart: the run completes with exit code 0');
	like(
		$stdout,
		qr/^-- connection lost at \d\d:\d\d:\d\d: .*; retrying every 0\.50 s$/m,
		'restart: the gap is marked');
	like(
		$stdout,
		qr/^-- reconnected at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d after \d+\.\d s; new baseline\n\n\d{4}-\d\d-\d\d .* strategy /m,
		'restart: reports go on after reconnecting');
	is(scalar(reports($stdout)), 4, 'restart: all four reports');
}

# --- a crash restart during a run ------------------------------------------------
# The backend of pg_lockstat_top is terminated by the crash: the first failed
# sample must already be reported as a lost connection, not as a failed
# sample followed by a lost connection one interval later.
$node->append_conf('postgresql.conf', 'restart_after_crash = on');
$node->reload;
$node->poll_query_until('postgres',
	"SELECT current_setting('restart_after_crash') = 'on'")
  or die 'restart_after_crash is not on after the reload';
{
	my ($rc, $stdout) = top_across(
		sub {
			my $pid = $node->safe_psql('postgres',
				"SELECT pid FROM pg_stat_activity WHERE backend_type = 'background writer'");
			kill 'KILL', $pid;
		});
	is($rc, 0, 'crash: the run completes with exit code 0');
	like(
		$stdout,
		qr/^-- connection lost at \d\d:\d\d:\d\d: .*; retrying every 0\.50 s$/m,
		'crash: the gap is marked');
	unlike($stdout, qr/^-- sample failed/m,
		'crash: the terminated connection is reported as lost at once');
	is(scalar(reports($stdout)), 4, 'crash: all four reports');
	$node->poll_query_until('postgres', 'SELECT true')
	  or die 'server did not come back after the crash';
}

# --- the extension dropped during a run ------------------------------------------
{
	my ($stdout, $stderr) = ('', '');
	my $timer = IPC::Run::timer($PostgreSQL::Test::Utils::timeout_default);
	my $h = IPC::Run::start(
		[ $top, '--batch', '-i', '0.3', '-d', $connstr ],
		'<' => \undef,
		'>' => \$stdout,
		'2>' => \$stderr,
		$timer);
	$h->pump until $stdout =~ /Tranche / || $timer->is_expired;
	$node->safe_psql('postgres', 'DROP EXTENSION pg_lockstat');
	$h->finish;
	is($h->result(0), 2, 'extension dropped during a run: exit code 2');
	like(
		$stderr,
		qr/extension "pg_lockstat" is not installed in database "postgres"/,
		'extension dropped during a run: says so');
	$node->safe_psql('postgres', 'CREATE EXTENSION pg_lockstat');
}

# --- library not preloaded ----------------------------------------------------------
$node->append_conf('postgresql.conf', "shared_preload_libraries = ''\n");
$node->restart;
($rc, $out, $err) = run_top('--batch', '-n', '1', '-d', $connstr);
is($rc, 2, 'library not preloaded: exit code 2');
is( $err,
	"pg_lockstat_top: error: pg_lockstat is not loaded by the server: add pg_lockstat to shared_preload_libraries and restart the server\n",
	'library not preloaded: one line saying what to do');

$node->stop;
done_testing();
