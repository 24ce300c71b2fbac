# Copyright (c) 2026, pg_lockstat developers
#
# The study harness behind "make run" (bench/lockstudy), in miniature:
# it prints the plan, runs a warm-up round that it does not record, then
# rounds of every variant in the order that SEED replays, prints table
# (a) with the baseline's tps and the other variant's ratio, interval and
# verdict, the noise, the top-10 lock tables with real counts and the
# spin-wait tables, saves the CSVs and plots, leaves no server running,
# refuses bad parameters with a message naming the parameter, and refuses
# a second run while one holds the lock.  WORKLOAD=eviction applies its
# server settings; a workload's setup line runs once, and table (c) shows
# the one contended spin wait that lockstat_test_spin_rendezvous() makes
# on purpose (no retry, no chance); a bench/workloads script reaches its
# locks.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;
use Cwd qw(getcwd);
use LockStatTest;

my @study = LockStatTest::study_command();
my $run_dir = PostgreSQL::Test::Utils::tempdir;
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';

my @env = (
	"PG_CONFIG=$pg_config", "RUN_DIR=$run_dir",
	'SCALE=1', 'STRATEGIES=tas ttas',
	'CLIENTS=1 2', 'DURATION=1', 'REPEAT=2', 'WARMUP=1', 'SEED=7');

my ($stdout, $stderr);
my $ok = IPC::Run::run([ 'env', @env, @study, 'run' ], '>', \$stdout, '2>', \$stderr);
ok($ok, 'a small study succeeds') or diag($stderr);
like($stdout,
	qr/^plan: 2 rounds x 2 variants x 2 client counts \(1 2\) = 8 runs of 1s, after a warm-up round of 4 runs that are not recorded; 6 server starts, each followed by a 1s warm-up run at 2 clients that is not recorded; baseline tas; variant order seeded by SEED=7; estimated \d+m\d\ds$/m,
	'prints the plan, the warm-up round and its server starts included');
my ($order_out, $order_err);
IPC::Run::run([ 'env', @study, 'order', 7, 2, 'tas', 'ttas' ],
	'>', \$order_out, '2>', \$order_err) or die $order_err;
my @order = split /\n/, $order_out;
IPC::Run::run([ 'env', @study, 'clients', 7, 2, 1, 2 ],
	'>', \$order_out, '2>', \$order_err) or die $order_err;
my @clients = split /\n/, $order_out;
like($stdout,
	qr/^warm-up round: \Q$order[0]; clients $clients[0]\E; not recorded\nround 1: \Q$order[0]; clients $clients[0]\E\nround 2: \Q$order[1]; clients $clients[1]\E$/m,
	'the round order and the client order of each round are the ones that SEED=7 gives, the warm-up round in round 1\'s');
like($stdout, qr/^\(a\) tps per client count: .* ratio of its tps to tas's in the same round: Hodges-Lehmann estimate, 97\.5% interval \(Wilcoxon signed rank\), the mean ratio and its interval \(Student t\), verdict \(threshold 2%\) and the bad runs of a collapse \(k\/n low\), the ratio noise, what its rounds resolve and the rounds that would resolve \S+; 2 rounds/m,
	'prints table (a), naming the baseline, the corrected level (2 comparisons) and the threshold');
like(
	$stdout,
	qr/^\s+2 \| tas\s+\|\s+\d+ \|\s+\d+-\d+ \|\s+\|\s+\|\s+\|\s+\| baseline\s+\|\s+\|\s+\|$/m,
	'table (a): the baseline\'s median tps and its interval for 2 clients');
like(
	$stdout,
	qr/^\s+2 \| ttas\s+\|\s+\d+ \|\s+\|\s+\d+\.\d{3} \|\s+\d+\.\d{3}-\d+\.\d{3} \|\s+\d+\.\d{3} \|\s+\d+\.\d{3}-\d+\.\d{3} \| not resolved\s+\|\s+[\d.]+% \|\s+- \|\s+\d+$/m,
	'table (a): the ratio, its interval and, with 2 rounds, "not resolved", its noise, nothing resolved and the rounds for the threshold');
like($stdout, qr/^fewer than 7 rounds: the intervals are min-max, of coverage 50\.0% only, and are not resolved$/m,
	'table (a) says why 2 rounds resolve nothing');
like($stdout,
	qr/^comparisons: 2; Bonferroni: each ratio interval at 97\.5%, so that the chance of at least one false verdict in the study is at most 0\.00%/m,
	'and the number of comparisons and the bound (none can be false without a verdict)');
like($stdout, qr/^noise \(%\): for tas the coefficient of variation of its tps across rounds; for each other variant the ratio noise, .*\n\s+clients \|\s+tas \|\s+ttas\n.*\n\s+1 \|\s+[\d.]+ \|\s+[\d.]+\n\s+2 \|/m,
	'the noise table: the baseline\'s tps CV, the ratio noise of the other');
like(
	$stdout,
	qr/\(b\) top 10 LWLocks by blocks: variant ttas, 2 clients, sum of 2 rounds/,
	'prints table (b) for the highest client count');
like($stdout, qr/^\s+BufferMapping\s+\|\s+[1-9]\d*\s+\|/m,
	'table (b) shows real locks with nonzero acquisitions');
like(
	$stdout,
	qr/^\s+lock\s+\|\s+acquires \|.*\|\s+wait ms \|\s+hold samples \|\s+mean hold us \|\s+max hold us\s*$/m,
	'table (b) has the sampled holds: their number, mean and longest hold');
like($stdout,
	qr/^\(c\) top 10 spin-wait call sites by contended waits: variant ttas, 2 clients, sum of 2 rounds\n(no contended spin waits|\s+func\s+\|\s+site\s+\|\s+contended \|\s+spins \|\s+delays \|\s+wait ms \|\s+TAS attempts \|\s+unlocked skips \|\s+skips\/contended\s*)$/m,
	'prints table (c) for the highest client count');
like($stderr,
	qr/^lockstudy: round 2\/2  variant ttas\s+clients\s+2\s+[\d.]+ s\s+[\d.]+ tps  elapsed \d+m\d\ds, remaining \d+m\d\ds$/m,
	'a progress line per run, with elapsed and remaining time');
my @progress = $stderr =~ /^lockstudy: (warm-up round|round [12]\/2)  variant /mg;
is("@progress", join(' ', ('warm-up round') x 4, ('round 1/2') x 4, ('round 2/2') x 4),
	'progress lines: the 4 runs of the warm-up round, then 4 per round');

my @studies = glob("$run_dir/2*");
is(scalar(@studies), 1, 'one study directory');
my $runs = slurp_file("$studies[0]/runs.csv");
like($runs, qr/^variant,clients,round,position,tps,seconds,transactions\n/,
	'runs.csv has the round, the position and the transactions');
is(scalar(() = $runs =~ /^(tas|ttas),[12],[12],[12],[\d.]+,[\d.]+,[1-9]\d*$/mg), 8, 'runs.csv has a row per run');
is(scalar(() = $runs =~ /\n/g), 1 + 8, 'and none of the warm-up round');
# pgbench's tps is its transactions over the DURATION = 1 s it ran
ok( !(grep { my @f = split /,/; $f[6] / $f[4] < 0.8 || $f[6] / $f[4] > 1.2 } grep { /^t/ } split /\n/, $runs),
	'the transactions of each run are its tps times its second');
foreach my $r (1, 2)
{
	my @in = split / /, $order[ $r - 1 ];
	foreach my $pos (1, 2)
	{
		my $s = $in[ $pos - 1 ];
		like($runs, qr/^$s,2,$r,$pos,/m, "round $r: $s ran in position $pos");
	}
}
my $locks = slurp_file("$studies[0]/locks.csv");
like($locks, qr/^ttas,2,2,\d+,BufferMapping,/m,
	'locks.csv has the lock deltas of each run');
my $kinds = slurp_file("$studies[0]/kinds.csv");
like($kinds,
	qr/^variant,clients,round,backend_type,tranche_id,tranche,sh_acquires,ex_acquires,blocks,/,
	'kinds.csv has the pg_lwlock_backend_type_stats columns');
like($kinds, qr/^ttas,2,2,client backend,\d+,BufferMapping,/m,
	'kinds.csv has the client backends\' lock deltas of each run');
unlike($locks . $kinds . slurp_file("$studies[0]/spins.csv"), qr/^\w+,\d+,0,/m,
	'locks.csv, kinds.csv and spins.csv have no row of round 0, the warm-up round');
my @starts = slurp_file("$studies[0]/server.log") =~ /starting PostgreSQL /g;
is(scalar(@starts), 1 + 3 * 2,
	'the server started for the setup and for each variant in the warm-up round and in each round');
ok(-s "$studies[0]/pgbench-$_-0.log", "the warm-up round's log $_ is kept")
  foreach ('tas-1', 'tas-2', 'ttas-1', 'ttas-2', 'tas-warmup', 'ttas-warmup');
like(slurp_file("$studies[0]/spins.csv"),
	qr/^variant,clients,round,file,line,func,contended,spins,delays,wait_time,tas_attempts,unlocked_skips,max_wait_time\n/,
	'spins.csv has the pg_spinlock_stats columns');
like(slurp_file("$studies[0]/spinkinds.csv"),
	qr/^variant,clients,round,backend_type,file,line,func,contended,spins,delays,wait_time,tas_attempts,unlocked_skips,max_wait_time\n/,
	'spinkinds.csv has the pg_spinlock_backend_type_stats columns');
my $points = slurp_file("$studies[0]/points.csv");
like($points, qr/^variant,clients,n,median,lo,hi,bifurcated,cv,tps_ci_low,tps_ci_high,pairs,ratio,ci_low,ci_high,coverage,verdict,resolves,rounds_equivalent,bad_runs,fisher_p,base_bad_runs,ratio_noise,zero_runs,mean_ratio,mean_low,mean_high,lag1,lag1_p,change_p,change_round,serial_p,dependent\n/,
	"points.csv has the columns ratio, ci_low, ci_high and verdict, resolves and rounds_equivalent, then bad_runs, fisher_p, base_bad_runs, ratio_noise and zero_runs, the mean ratio and the rounds' check");
like($points, qr/^ttas,2,2,[\d.]+,[\d.]+,[\d.]+,f,[\d.e+-]+,[\d.]+,[\d.]+,2,[\d.]+,[\d.]+,[\d.]+,0\.5,not resolved,,\d+,0,,0,[\d.e+-]+,0,[\d.e+-]+,[\d.e+-]+,[\d.e+-]+,,,,,,f$/m,
	'points.csv: median, min, max, no collapse (2 runs), noise, the ratio with its interval and verdict, no bad runs on either side, no Fisher test, the ratio noise');
foreach my $f ('settings.txt', 'machine.txt', 'versions.txt', 'commands.txt')
{
	ok(-s "$studies[0]/$f", "$f is saved");
}
like(
	slurp_file("$studies[0]/settings.txt"),
	qr/^-- variant (tas|ttas)\n(.*\n)*pg_lockstat\.spin_strategy\|\1\|.*\n(.*\n)*-- variant (?!\1)(tas|ttas)\n(.*\n)*pg_lockstat\.spin_strategy\|\4\|/m,
	'settings.txt has each variant\'s server settings');
my $commands = slurp_file("$studies[0]/commands.txt");
like($commands, qr/^\[ttas\] pgbench -n -S -M prepared -c 2 /m,
	'commands.txt has the exact pgbench commands');
like($commands, qr/^\[ttas\] pgbench -n -S -M prepared -c 2 -j \d+ -T 1 postgres \(warm-up\)$/m,
	'and the warm-up runs');
like($commands, qr/^SCALE=1 .* WARMUP=1 WARMUP_ROUND=1 .* REPEAT=2 SEED=7 THRESHOLD=2 /m, 'and the parameters');
# the warm-up round: before round 1, in round 1's orders, every command
# marked
my ($warm) = $commands =~ /^(# warm-up round: .*?)^# round 1: /ms;
like($warm // '', qr/\A# warm-up round: \Q$order[0]; clients $clients[0]\E \(not recorded\)\n/,
	'commands.txt has the warm-up round, in round 1\'s orders, marked not recorded');
my @warm = split /\n/, $warm // '';
is(scalar(grep { /^\[\w+\] pgbench .* -T 1 -P 1 postgres \(warm-up round\)$/ } @warm), 4,
	'and its 4 runs, marked');
is(scalar(grep { /^\[\w+\] pgbench .* -T 1 postgres \(warm-up, warm-up round\)$/ } @warm), 2,
	'and the warm-up run after each of its 2 server starts');
is(scalar(@warm), 1 + 4 + 2, 'and nothing else');
# each round's measured runs, per variant, in that round's client order
my ($round, @seen) = (0);
foreach my $line (split /\n/, $commands)
{
	$round = $1 if $line =~ /^# round (\d+):/;
	push @{ $seen[$round] }, $1
	  if $line =~ /^\[\w+\] pgbench .* -c (\d+) -j \d+ -T 1 -P 1 postgres$/;
}
is( join('; ', map { "@{ $seen[$_] }" } 1, 2),
	join('; ', map { "$clients[$_ - 1] $clients[$_ - 1]" } 1, 2),
	'the runs of each round follow its client order, for both variants');
# the per-second tps of -P 1: a header, then rows of a run of the study
# (variant, clients, round), a second of the run (at most DURATION = 1)
# and a tps
my @persec = split /\n/, slurp_file("$studies[0]/persec.csv");
is(shift(@persec), 'variant,clients,round,second,tps', 'persec.csv: its header');
is( scalar(grep { !/^(tas|ttas),(1|2),(1|2),1(\.0)?,\d+(\.\d+)?$/ } @persec),
	0, 'persec.csv: every row is a second of one of the runs, with its tps');
cmp_ok(scalar(@persec), '<=', 8, 'persec.csv: at most one second of each of the 8 runs of 1 s');
foreach my $png ('tps.png', 'ratio.png')
{
	open(my $fh, '<:raw', "$studies[0]/$png") or die "no $png: $!";
	read($fh, my $magic, 8);
	close($fh);
	is($magic, "\x89PNG\r\n\x1a\n", "$png is a PNG image");
}
like(slurp_file("$studies[0]/ratio-ttas.dat"), qr/^1 [\d.]+ [\d.]+ [\d.]+\n2 [\d.]+ [\d.]+ [\d.]+\n$/,
	'ratio.png is drawn from the ratio and interval per client count');
foreach my $variant ('tas', 'ttas')
{
	ok(-s "$studies[0]/locks-$variant.png",
		"locks-$variant.png (lock shares per client count) is drawn");
}
ok(!-e "$studies[0]/data", 'the cluster data directory is removed');

# WORKLOAD=eviction: its shared_buffers = 1MB is applied and recorded.  One
# run says so; whether buffer replacement happens to contend is chance, and
# is not asserted here (the contended wait of table (c) is made below).
my $evict_dir = PostgreSQL::Test::Utils::tempdir;
($stdout, $stderr) = ('', '');
ok( IPC::Run::run(
		[
			'env', "PG_CONFIG=$pg_config", "RUN_DIR=$evict_dir", 'SCALE=1',
			'STRATEGIES=ttas', 'CLIENTS=2', 'DURATION=1', 'REPEAT=1',
			'WARMUP=0', 'WARMUP_ROUND=0', 'WORKLOAD=eviction', @study, 'run'
		],
		'>', \$stdout, '2>', \$stderr),
	'the eviction workload runs') or diag($stderr);
like($stdout, qr/^pg_lockstat study: workload eviction \(-f \S+eviction\.sql -M prepared; shared_buffers = 1MB\)/m,
	'the study names the workload and its server settings');
my ($evict_study) = glob("$evict_dir/2*");
like(slurp_file("$evict_study/settings.txt"),
	qr/^-- server-settings of the workload eviction \(in postgresql\.conf\)\nshared_buffers = 1MB\n(.*\n)*shared_buffers\|128\|8kB\|configuration file$/m,
	'settings.txt records the workload\'s settings, and the server ran with them');

# A contended spin wait in table (c), made on purpose rather than waited for
# by chance: a workload of a checkout's copy (symbolic links, as t/014 makes
# it) calls lockstat_test_spin_rendezvous(), which lockstat_test, preloaded
# through the script's server-settings line and created by its setup line,
# defines.  Its first two calls since the server started meet: the first
# holds the test spinlock until the second has begun to wait for it (the
# module's spin-wait hook counts that wait at its first spin in s_lock(),
# where pg_lockstat marks it contended), and every later call returns at
# once.  So the run of 2 clients, the first after its server start (no
# warm-up), has exactly one contended wait at lst_rendezvous_wait()'s call
# site, on any machine.  THREADS=1: pgbench's one thread sends both
# clients' first calls in its first pass, so that the second comes before
# the second of DURATION is over however slow the machine is; a wait of
# either call for the other is bounded by 300 s (an error naming what it
# waited for), a bound on a hang only.
my $rdv_top = PostgreSQL::Test::Utils::tempdir;
mkdir("$rdv_top/bench") or die;
mkdir("$rdv_top/bench/workloads") or die;
symlink(getcwd() . '/bench/lockstudy', "$rdv_top/bench/lockstudy") or die;
symlink(getcwd() . "/$_", "$rdv_top/$_") or die foreach ('scripts', 'patches');
append_to_file(
	"$rdv_top/bench/workloads/spin-rendezvous.sql",
	"-- one contended wait for lockstat_test's spinlock, made on purpose\n"
	  . "-- server-settings: shared_preload_libraries = 'pg_lockstat,lockstat_test'\n"
	  . "-- setup: CREATE EXTENSION lockstat_test\n"
	  . "-- pgbench-options: -M prepared\n"
	  . "SELECT lockstat_test_spin_rendezvous();\n");
my $rdv_dir = PostgreSQL::Test::Utils::tempdir;
($stdout, $stderr) = ('', '');
ok( IPC::Run::run(
		[
			'env', "PG_CONFIG=$pg_config", "RUN_DIR=$rdv_dir",
			'SCALE=1', 'STRATEGIES=ttas', 'CLIENTS=2', 'THREADS=1',
			'DURATION=1', 'REPEAT=1', 'WARMUP=0', 'WARMUP_ROUND=0',
			'WORKLOAD=spin-rendezvous',
			LockStatTest::study_command($rdv_top), 'run'
		],
		'>', \$stdout, '2>', \$stderr),
	'the rendezvous workload runs') or diag($stderr);
my ($rdv_study) = glob("$rdv_dir/2*");
like(slurp_file("$rdv_study/commands.txt"),
	qr/^CREATE EXTENSION lockstat_test\n(.*\n)*# round 1: /m,
	'its setup line ran once, before round 1');
my ($table_c) = $stdout =~ /^(\(c\) top 10 spin-wait call sites by contended waits: variant ttas, 2 clients, sum of 1 rounds\n(?:.+\n)+)/m;
like($table_c // '',
	qr/^\s+lst_rendezvous_wait\s+\|\s+lockstat_test_rendezvous\.c:\d+\s+\|\s+1\s+\|/m,
	'table (c) shows the contended wait of the rendezvous, exactly one')
  or diag($table_c // $stdout);
my @rdv_rows = grep { /^ttas,2,1,lockstat_test_rendezvous\.c,/ }
  split /\n/, slurp_file("$rdv_study/spins.csv");
is(scalar(@rdv_rows), 1,
	'spins.csv has one call site of lockstat_test_rendezvous.c (the holder never waits)');
like($rdv_rows[0] // '', qr/^ttas,2,1,lockstat_test_rendezvous\.c,\d+,lst_rendezvous_wait,1,/,
	'at lst_rendezvous_wait(): one contended wait');
my @rdv_kinds = grep { /^ttas,2,1,[^,]+,lockstat_test_rendezvous\.c,/ }
  split /\n/, slurp_file("$rdv_study/spinkinds.csv");
is(scalar(@rdv_kinds), 1,
	'spinkinds.csv has that call site once, under one kind of process');
like($rdv_kinds[0] // '',
	qr/^ttas,2,1,client backend,lockstat_test_rendezvous\.c,\d+,lst_rendezvous_wait,1,/,
	'the wait of a client backend, as table (m) reads it');

# a workload script of bench/workloads: sinval traffic shows in SInvalWrite
my $sinval_dir = PostgreSQL::Test::Utils::tempdir;
($stdout, $stderr) = ('', '');
ok( IPC::Run::run(
		[
			'env', "PG_CONFIG=$pg_config", "RUN_DIR=$sinval_dir", 'SCALE=1',
			'STRATEGIES=default', 'CLIENTS=2', 'DURATION=1', 'REPEAT=1',
			'WARMUP=0', 'WARMUP_ROUND=0', 'WORKLOAD=sinval', @study, 'run'
		],
		'>', \$stdout, '2>', \$stderr),
	'the sinval workload runs') or diag($stderr);
my ($sinval_study) = glob("$sinval_dir/2*");
like(slurp_file("$sinval_study/locks.csv"), qr/^default,2,1,\d+,SInvalWrite,0,[1-9]\d*,/m,
	'the sinval workload takes SInvalWrite exclusively');

foreach my $bad ('CLIENTS=1 x', 'STRATEGIES=bogus', 'STRATEGIES=tas ttas tas', 'DURATION=0',
	'WORKLOAD=nope', 'SCALE=-1', 'REPEAT=0', 'WARMUP=-1', 'WARMUP_ROUND=2', 'SEED=x', 'THRESHOLD=100')
{
	my ($out, $err);
	my $ret = IPC::Run::run([ 'env', @env, $bad, @study, 'run' ], '>', \$out, '2>', \$err);
	my ($name) = $bad =~ /^(\w+)=/;
	ok(!$ret, "$bad is refused");
	like($err, qr/lockstudy: error: .*$name/, "the message names $name");
}

# a second study while one holds the lock is refused
open(my $lock, '>', "$run_dir/.lock") or die $!;
flock($lock, 2) or die $!;
my ($out, $err);
ok(!IPC::Run::run([ 'env', @env, @study, 'run' ], '>', \$out, '2>', \$err),
	'a second study is refused while one runs');
like($err, qr/another make run is in progress/, 'and says so');
close($lock);

done_testing();
