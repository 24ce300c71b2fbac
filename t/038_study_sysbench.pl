# Copyright (c) 2026, pg_lockstat developers
#
# "make run WORKLOAD=sysbench-..." (bench/lockstudy) on a real server, in
# miniature, with Debian's sysbench and its PostgreSQL driver:
#   - WORKLOAD=sysbench-point-select, 2 strategies x 2 client counts x 2
#     rounds after a warm-up round: sysbench's tables are made once, before
#     the first run (one prepare and VACUUM ANALYZE in commands.txt, its
#     log kept, no pgbench -i), 2 tables of 50000 rows at SCALE=1 and
#     SYSBENCH_TABLES=2; every run is sysbench's, one thread per client, in
#     its own log; runs.csv has each recorded run with its transactions,
#     persec.csv the tps of its seconds, locks.csv its lock counts; the
#     report has table (a), the mechanism table (m) and (b); versions.txt
#     names sysbench.
#   - WORKLOAD=sysbench-read-write, one variant, one round: its writes take
#     WALInsert exclusively.
#   - A sysbench run that fails (a wrapper on PATH that runs the real
#     sysbench's --help and prepare but fails every run) stops the study
#     naming the step, the exit status and the log, and shows the log's
#     FATAL line; no server is left and the data directory is removed.
#   - Refused before anything starts: sysbench missing from PATH (naming
#     the package), THREADS with a sysbench workload, a bad SYSBENCH_TABLES,
#     SYSBENCH_TABLES under a pgbench workload; an unknown WORKLOAD lists the
#     sysbench workloads among the valid ones.
# Without sysbench (apt-get install sysbench; scripts/deps.sh installs it)
# the test skips.

use strict;
use warnings FATAL => 'all';

use File::Basename qw(basename);
use PostgreSQL::Test::Utils;
use Test::More;
use LockStatTest;

my $sysbench;
foreach my $dir (split /:/, $ENV{PATH} // '')
{
	if (-x "$dir/sysbench")
	{
		$sysbench = "$dir/sysbench";
		last;
	}
}
plan skip_all => LockStatTest::tool_missing(
	'no sysbench on PATH (apt-get install sysbench; scripts/deps.sh installs it)')
  unless $sysbench;
plan skip_all =>
  LockStatTest::tool_missing("$sysbench has no PostgreSQL driver")
  unless `$sysbench --help 2>&1` =~ /^\s+pgsql - /m;

my @study = LockStatTest::study_command();
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my $tmp = PostgreSQL::Test::Utils::tempdir;

sub run_study
{
	my ($out, $err);
	my $ok = IPC::Run::run([ 'env', @_, @study, 'run' ], '>', \$out, '2>', \$err);
	return ($ok, $out, $err);
}

sub lines_of
{
	my ($path) = @_;
	return split /\n/, slurp_file($path);
}

# --- sysbench-point-select ---------------------------------------------------
my $run_dir = "$tmp/point";
my ($ok, $stdout, $stderr) = run_study(
	"PG_CONFIG=$pg_config", "RUN_DIR=$run_dir", 'SCALE=1',
	'SYSBENCH_TABLES=2', 'STRATEGIES=tas ttas', 'CLIENTS=1 2', 'DURATION=2',
	'REPEAT=2', 'WARMUP=1', 'SEED=7', 'WORKLOAD=sysbench-point-select');
ok($ok, 'a small sysbench study succeeds') or diag($stderr);
like($stdout,
	qr/^pg_lockstat study: workload sysbench-point-select \(sysbench oltp_point_select --tables=2 --table-size=50000\), 2s per run, \d+ CPUs$/m,
	'the plan names the workload, its script and its tables');
like($stdout,
	qr/^plan: 2 rounds x 2 variants x 2 client counts \(1 2\) = 8 runs of 2s, after a warm-up round of 4 runs that are not recorded; /m,
	'and the runs as for pgbench');
like($stderr, qr/^lockstudy: sysbench prepare: 2 tables of 50000 rows$/m,
	'the tables are made before the runs, and the study says so');
like($stderr,
	qr/^lockstudy: round 2\/2  variant ttas\s+clients\s+2\s+[\d.]+ s\s+[\d.]+ tps  elapsed \d+m\d\ds, remaining \d+m\d\ds$/m,
	'a progress line per run');

my ($dir) = glob("$run_dir/2*");
ok(defined $dir && -d $dir, 'the study directory');
$dir //= "$run_dir/none";

my $commands = slurp_file("$dir/commands.txt");
like($commands, qr/SYSBENCH_TABLES=2 SYSBENCH_TABLE_SIZE=50000$/m,
	'commands.txt: the parameters, with the tables');
my @prepare = $commands =~ /^(sysbench oltp_point_select .* prepare)$/mg;
is(scalar(@prepare), 1, 'the tables are made once for both variants');
like($prepare[0] // '',
	qr/^sysbench oltp_point_select --db-driver=pgsql --pgsql-host=\/\S+ --pgsql-port=\d+ --pgsql-user=\S+ --pgsql-db=postgres --tables=2 --table-size=50000 --threads=\d+ prepare$/,
	'by sysbench prepare, on the study\'s cluster');
like($commands, qr/^\Q$prepare[0]\E\nVACUUM ANALYZE\n/m,
	'then VACUUM ANALYZE, as pgbench -i ends');
ok(-s "$dir/sysbench-prepare.log", 'the prepare\'s log is kept');
ok(!-e "$dir/pgbench-init.log", 'and pgbench -i did not run');
# prepare's threads (one per table here, on 2 CPUs) print at the same time,
# and sysbench writes a line's text and its newline separately: one thread's
# line can end after another's text.  So each table's line is looked for
# anywhere in the log, not as a line of its own.
my $prepare_log = slurp_file("$dir/sysbench-prepare.log");
is( scalar(grep { index($prepare_log, "Creating table 'sbtest$_'...") >= 0 } (1, 2)),
	2, 'the prepare made both tables')
  or diag($prepare_log);
my @runs_cmd = $commands =~ /^\[(?:tas|ttas)\] (sysbench .* --report-interval=1 run)$/mg;
is(scalar(@runs_cmd), 8, 'commands.txt: the 8 recorded runs are sysbench runs');
like($runs_cmd[0] // '',
	qr/^sysbench oltp_point_select --db-driver=pgsql .* --tables=2 --table-size=50000 --threads=[12] --time=2 --report-interval=1 run$/,
	'one thread per client, DURATION seconds, the tps of each second');
like($commands,
	qr/^\[(tas|ttas)\] sysbench oltp_point_select .* --threads=2 --time=1 run \(warm-up\)$/m,
	'the warm-up runs: the highest client count, WARMUP seconds');
ok(-s "$dir/sysbench-$_.log", "the log sysbench-$_.log")
  foreach ('tas-1-1', 'ttas-2-2', 'tas-warmup-1', 'ttas-1-0');

my @runs = lines_of("$dir/runs.csv");
is(shift(@runs), 'variant,clients,round,position,tps,seconds,transactions',
	'runs.csv: its header');
is(scalar(@runs), 8, 'runs.csv: a row per recorded run');
is( scalar(grep { /^(tas|ttas),[12],[12],[12],[\d.]+,[\d.]+,[1-9]\d*$/ } @runs),
	8, 'each with its transactions, more than 0');
# sysbench's tps is its transactions over the time it ran, about 2 s
ok( !(grep { my @f = split /,/; $f[4] <= 0 || $f[6] / $f[4] < 1.5 || $f[6] / $f[4] > 2.6 } @runs),
	'the transactions of each run are its tps times about its 2 seconds')
  or diag(join("\n", @runs));

my @persec = lines_of("$dir/persec.csv");
is(shift(@persec), 'variant,clients,round,second,tps', 'persec.csv: its header');
ok(scalar(@persec) > 0, 'persec.csv has the tps of seconds of the runs: '
	  . scalar(@persec));
is(scalar(grep { !/^(tas|ttas),[12],[12],[12],\d+(\.\d+)?$/ } @persec),
	0, 'each row a second (1 or 2) of a recorded run, with its tps');
cmp_ok(scalar(@persec), '<=', 16, 'at most 2 seconds of each of the 8 runs');

like(slurp_file("$dir/locks.csv"), qr/^ttas,2,[12],\d+,BufferMapping,[1-9]\d*,/m,
	'locks.csv: the lock counts of the runs (BufferMapping, shared)');
like($stdout,
	qr/^\s+2 \| ttas\s+\|\s+\d+ \|\s+\| \d+\.\d{3} \| \d+\.\d{3}-\d+\.\d{3} \|\s+\d+\.\d{3} \|\s+\d+\.\d{3}-\d+\.\d{3} \| (not resolved|withheld: rounds dependent)\s*\|/m,
	'table (a): the ratio of ttas to tas, no verdict in 2 rounds');
like($stdout, qr/^\(m\) mechanism: ttas against tas, 2 clients: per 1000 transactions/m,
	'table (m): the lock counts per 1000 sysbench transactions');
like($stdout, qr/\(b\) top 10 LWLocks by blocks: variant ttas, 2 clients, sum of 2 rounds/,
	'table (b)');
ok(-s "$dir/$_", "$_ is written")
  foreach ('points.csv', 'mechanism.csv', 'tps.png', 'ratio.png');
like(slurp_file("$dir/versions.txt"), qr/^sysbench: sysbench 1\.\d+\.\d+/m,
	'versions.txt names sysbench');
ok(!-e "$dir/data", 'the data directory is removed');

# --- sysbench-read-write -----------------------------------------------------
($ok, $stdout, $stderr) = run_study(
	"PG_CONFIG=$pg_config", "RUN_DIR=$tmp/rw", 'SCALE=1', 'SYSBENCH_TABLES=1',
	'SYSBENCH_TABLE_SIZE=10000', 'STRATEGIES=default', 'CLIENTS=2',
	'DURATION=2', 'REPEAT=1', 'WARMUP=0', 'WARMUP_ROUND=0',
	'WORKLOAD=sysbench-read-write');
ok($ok, 'the read-write workload runs') or diag($stderr);
($dir) = glob("$tmp/rw/2*");
$dir //= "$tmp/rw/none";
like(slurp_file("$dir/runs.csv"), qr/^default,2,1,1,[\d.]+,[\d.]+,[1-9]\d*$/m,
	'its run has transactions');
like(slurp_file("$dir/locks.csv"), qr/^default,2,1,\d+,WALInsert,\d+,[1-9]\d*,/m,
	'and its writes take WALInsert exclusively');

# --- a sysbench run that fails -----------------------------------------------
my $wrap = "$tmp/wrap";
mkdir($wrap) or die $!;
append_to_file("$wrap/sysbench", <<"EOF");
#!/bin/sh
# the real sysbench for --help and prepare; every run fails
case " \$* " in
*" run "*) echo "FATAL: the test's sysbench fails every run"; exit 3 ;;
esac
exec $sysbench "\$@"
EOF
chmod(0755, "$wrap/sysbench") or die $!;
($ok, $stdout, $stderr) = run_study(
	"PATH=$wrap:$ENV{PATH}", "PG_CONFIG=$pg_config", "RUN_DIR=$tmp/fail",
	'SCALE=1', 'SYSBENCH_TABLES=1', 'SYSBENCH_TABLE_SIZE=1000',
	'STRATEGIES=default', 'CLIENTS=1', 'DURATION=1', 'REPEAT=1', 'WARMUP=0',
	'WARMUP_ROUND=0', 'WORKLOAD=sysbench-point-select');
ok(!$ok, 'a failing sysbench run fails the study');
($dir) = glob("$tmp/fail/2*");
$dir //= "$tmp/fail/none";
like($stderr,
	qr/^lockstudy: error: sysbench \(variant default, 1 clients, round 1\) failed \(exit status 3\); see \Q$dir\E\/sysbench-default-1-1\.log$/m,
	'the message names the step, the exit status and the log');
like($stderr, qr/^    FATAL: the test's sysbench fails every run$/m,
	'and shows the log\'s FATAL line');
like($stderr, qr/no server left running; data directory removed/,
	'no server is left');
ok(!-e "$dir/data", 'the data directory is removed');
ok(-s "$dir/sysbench-prepare.log", 'the prepare had run');

# --- refused before anything starts ------------------------------------------
my $empty = "$tmp/empty";
mkdir($empty) or die $!;
foreach my $bad (
	[
		[ "PATH=$empty", 'WORKLOAD=sysbench-read-only' ],
		qr/^lockstudy: error: WORKLOAD=sysbench-read-only runs sysbench, which is not on PATH: install Debian's package sysbench \(apt-get install sysbench; scripts\/deps\.sh installs it\)$/m,
		'sysbench missing'
	],
	[
		[ 'WORKLOAD=sysbench-read-only', 'THREADS=2' ],
		qr/^lockstudy: error: THREADS is pgbench -j; sysbench runs one thread per client/m,
		'THREADS with sysbench'
	],
	[
		[ 'WORKLOAD=sysbench-point-select', 'SYSBENCH_TABLES=0' ],
		qr/^lockstudy: error: SYSBENCH_TABLES must be a positive integer/m,
		'SYSBENCH_TABLES=0'
	],
	[
		[ 'WORKLOAD=select-only', 'SYSBENCH_TABLE_SIZE=100' ],
		qr/^lockstudy: error: SYSBENCH_TABLE_SIZE is for the sysbench workloads \(sysbench-point-select sysbench-read-only sysbench-read-write\), not WORKLOAD=select-only$/m,
		'SYSBENCH_TABLE_SIZE under pgbench'
	],
	[
		['WORKLOAD=nope'],
		qr/^lockstudy: error: unknown WORKLOAD "nope" \(valid: select-only tpcb-like simple-update .* sysbench-point-select sysbench-read-only sysbench-read-write\)$/m,
		'an unknown WORKLOAD'
	])
{
	my ($env, $re, $what) = @$bad;
	my $refused_dir = "$tmp/refused";
	($ok, $stdout, $stderr) = run_study("PG_CONFIG=$pg_config",
		"RUN_DIR=$refused_dir", 'SCALE=1', 'STRATEGIES=default', @$env);
	ok(!$ok, "$what: refused");
	like($stderr, $re, "$what: the message says why");
	ok(!-e $refused_dir, "$what: before anything starts");
}

done_testing();
