# Copyright (c) 2026, pg_lockstat developers
#
# The study harness behind "make run" (bench/run-study.sh), in miniature:
# it prints the tps table and the top-10 lock tables with real counts,
# saves the CSVs, leaves no server running, refuses bad parameters with a
# message naming the parameter, and refuses a second run while one holds
# the lock.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;
use Cwd qw(getcwd);

my $script = getcwd() . '/bench/run-study.sh';
my $run_dir = PostgreSQL::Test::Utils::tempdir;
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';

my @env = (
	"PG_CONFIG=$pg_config", "RUN_DIR=$run_dir",
	'SCALE=1', 'STRATEGIES=tas ttas',
	'CLIENTS=1 2', 'DURATION=1', 'REPEAT=2');

my ($stdout, $stderr);
my $ok = IPC::Run::run([ 'env', @env, $script ], '>', \$stdout, '2>', \$stderr);
ok($ok, 'a small study succeeds') or diag($stderr);
like($stdout, qr/\(a\) tps by clients and spin strategy/, 'prints table (a)');
like($stdout, qr/^\s+clients \|\s+tas\s+\|\s+ttas\s*$/m,
	'table (a) has a column per strategy');
like(
	$stdout,
	qr/^\s+2 \|\s+\d+ \(\d+-\d+\)( \*)? \|\s+\d+ \(\d+-\d+\)( \*)?\s*$/m,
	'table (a) has the median and min-max for 2 clients');
like(
	$stdout,
	qr/\(b\) top 10 LWLocks by blocks: strategy ttas, 2 clients/,
	'prints table (b) for the highest client count');
like($stdout, qr/^\s+BufferMapping\s+\|\s+[1-9]\d*\s+\|/m,
	'table (b) shows real locks with nonzero acquisitions');
like($stderr, qr/strategy ttas\s+clients\s+2\s+run 2\/2\s+[\d.]+ s\s+[\d.]+ tps/,
	'a progress line per run');

my @studies = glob("$run_dir/2*");
is(scalar(@studies), 1, 'one study directory');
my $runs = slurp_file("$studies[0]/runs.csv");
is(scalar(() = $runs =~ /^(tas|ttas),/mg), 8, 'runs.csv has a row per run');
like(slurp_file("$studies[0]/locks.csv"), qr/^ttas,2,2,\d+,BufferMapping,/m,
	'locks.csv has the lock deltas of each run');
like(slurp_file("$studies[0]/points.csv"), qr/^ttas,2,2,[\d.]+,[\d.]+,[\d.]+,[tf]$/m,
	'points.csv has median, min, max and the bifurcation flag');
foreach my $f ('settings.txt', 'machine.txt', 'versions.txt', 'commands.txt')
{
	ok(-s "$studies[0]/$f", "$f is saved");
}
like(
	slurp_file("$studies[0]/settings.txt"),
	qr/^-- strategy tas\n(.*\n)*pg_lockstat\.spin_strategy\|tas\|.*\n(.*\n)*-- strategy ttas\n(.*\n)*pg_lockstat\.spin_strategy\|ttas\|/m,
	'settings.txt has each strategy\'s server settings');
like(slurp_file("$studies[0]/commands.txt"), qr/^\[ttas\] pgbench -n -S -M prepared -c 2 /m,
	'commands.txt has the exact pgbench commands');
open(my $png, '<:raw', "$studies[0]/tps.png") or die "no tps.png: $!";
read($png, my $magic, 8);
close($png);
is($magic, "\x89PNG\r\n\x1a\n", 'tps.png is a PNG image');
foreach my $strategy ('tas', 'ttas')
{
	ok(-s "$studies[0]/locks-$strategy.png",
		"locks-$strategy.png (lock shares per client count) is drawn");
}
ok(!-e "$studies[0]/data", 'the cluster data directory is removed');

# a workload script of bench/workloads: sinval traffic shows in SInvalWrite
my $sinval_dir = PostgreSQL::Test::Utils::tempdir;
($stdout, $stderr) = ('', '');
ok( IPC::Run::run(
		[
			'env', "PG_CONFIG=$pg_config", "RUN_DIR=$sinval_dir", 'SCALE=1',
			'STRATEGIES=default', 'CLIENTS=2', 'DURATION=1', 'REPEAT=1',
			'WORKLOAD=sinval', $script
		],
		'>', \$stdout, '2>', \$stderr),
	'the sinval workload runs') or diag($stderr);
my ($sinval_study) = glob("$sinval_dir/2*");
like(slurp_file("$sinval_study/locks.csv"), qr/^default,2,1,\d+,SInvalWrite,0,[1-9]\d*,/m,
	'the sinval workload takes SInvalWrite exclusively');

foreach my $bad ('CLIENTS=1 x', 'STRATEGIES=bogus', 'DURATION=0', 'WORKLOAD=nope',
	'SCALE=-1', 'REPEAT=0')
{
	my ($out, $err);
	my $ret = IPC::Run::run([ 'env', @env, $bad, $script ], '>', \$out, '2>', \$err);
	my ($name) = $bad =~ /^(\w+)=/;
	ok(!$ret, "$bad is refused");
	like($err, qr/run-study: error: .*$name/, "the message names $name");
}

# a second study while one holds the lock is refused
open(my $lock, '>', "$run_dir/.lock") or die $!;
flock($lock, 2) or die $!;
my ($out, $err);
ok(!IPC::Run::run([ 'env', @env, $script ], '>', \$out, '2>', \$err),
	'a second study is refused while one runs');
like($err, qr/another make run is in progress/, 'and says so');
close($lock);

done_testing();
