# Copyright (c) 2026, pg_lockstat developers
#
# "make run SENSITIVITY=..." (bench/lockstudy) on the real server, in
# miniature: the delay variants it makes run in one server start per
# round, each put in force by a reload, and the report has table (s).
#   - SENSITIVITY with STRATEGIES, DELAY_US without SENSITIVITY, a delay
#     out of range: refused before anything starts.
#   - A tranche the server does not know stops the study after the setup,
#     before round 1, with the server's own error (ALTER SYSTEM SET
#     pg_lockstat.delay_tranche refuses it), and nothing measured.
#   - The study of WALWrite and ProcArray under tpcb-like: a shared start
#     per round (reloads in commands.txt), delays.csv with a row per
#     measured run of each delayed variant, each with delays injected (the
#     counts the view gives, not the machine's speed), and table (s) with a
#     row per tranche in the report and in results.json.  What the verdicts
#     say depends on the machine; only that each is one of the four is
#     checked.

use strict;
use warnings FATAL => 'all';
use utf8;

use PostgreSQL::Test::Utils;
use Test::More;
use JSON::PP;
use LockStatTest;

my @study = LockStatTest::study_command();
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $run_dir = "$tmp/run";

my @env = (
	"PG_CONFIG=$pg_config", "RUN_DIR=$run_dir", 'SCALE=1', 'CLIENTS=1',
	'DURATION=1', 'REPEAT=2', 'WARMUP=0', 'WARMUP_ROUND=0', 'SEED=7',
	'STRATEGIES=', 'VARIANTS=', 'WORKLOAD=tpcb-like');

sub run_study
{
	my ($out, $err);
	my $ok = IPC::Run::run([ 'env', @env, @_, @study, 'run' ],
		'>', \$out, '2>', \$err);
	return ($ok, $out, $err);
}

sub studies { return sort glob("$run_dir/2*"); }

# --- refused before anything starts -------------------------------------------
foreach my $bad (
	[
		[ 'SENSITIVITY=WALWrite:1', 'STRATEGIES=tas' ],
		qr/give SENSITIVITY or STRATEGIES, not both/
	],
	[ ['DELAY_US=1'], qr/DELAY_US is for SENSITIVITY/ ],
	[
		['SENSITIVITY=WALWrite:2000'],
		qr/SENSITIVITY: WALWrite: "2000" is not a delay from 0\.1 to 1000 microseconds/
	])
{
	my ($args, $re) = @$bad;
	my ($ok, $out, $err) = run_study(@$args);
	ok(!$ok, "@$args is refused");
	like($err, qr/^lockstudy: error: .*$re/m, "@$args: the message says why");
}
is(scalar(my @none = studies()), 0, 'no cluster was made');

# --- a tranche the server does not know ---------------------------------------
my ($ok, $out, $err) = run_study('SENSITIVITY=NoSuchTranche:1');
ok(!$ok, 'an unknown tranche: the study fails');
like($err, qr/unknown LWLock tranche "NoSuchTranche"/,
	"the server's error is shown");
like($err,
	qr/checking pg_lockstat\.delay_tranche = 'NoSuchTranche' \(ALTER SYSTEM\) failed/,
	'the step is named');
my ($failed) = studies();
ok(defined $failed && !-s "$failed/runs.csv",
	'it stopped before any run was measured');
unlike(slurp_file("$failed/commands.txt"), qr/^# round 1/m,
	'no round began');

# --- a sensitivity study ---------------------------------------------------------
($ok, $out, $err) = run_study('SENSITIVITY=WALWrite:1 ProcArray:0.5');
ok($ok, 'the study of WALWrite and ProcArray runs') or diag($err);
my ($dir) = grep { $_ ne $failed } studies();
my $commands = slurp_file("$dir/commands.txt");
like($commands, qr/ SHARED_START=1$/m, 'SHARED_START=1 by default');
like(
	$commands,
	qr/^\[walwrite-ctl-1\] SELECT pg_reload_conf\(\) with variant\.conf: pg_lockstat\.delay_tranche = 'WALWrite', pg_lockstat\.delay_us = '1', pg_lockstat\.delay_mode = 'before'$/m,
	'a delay variant is put in force by a reload');

my @delays = split /\n/, slurp_file("$dir/delays.csv");
is(shift @delays, 'variant,clients,round,injected_delays',
	"delays.csv's header");
my %rows;
foreach (@delays)
{
	my ($v, $c, $r, $n) = split /,/;
	$rows{"$v/$r"} = $n;
}
is_deeply(
	[ sort keys %rows ],
	[
		map {
			my $v = $_;
			map { "$v/$_" } 1, 2
		} qw(procarray-ctl-0p5 procarray-in-0p5 walwrite-ctl-1 walwrite-in-1)
	],
	'a row per measured run of each delayed variant, none for the baseline'
);
is(scalar(grep { $_ > 0 } values %rows),
	8, 'every delayed run injected delays');

like($out, qr/^\(s\) sensitivity: how tps responds/m, 'the report has (s)');
like($out, qr/^ WALWrite  \|       1 \|      2 \|/m, "WALWrite's row");
like($out, qr/^ ProcArray \|       1 \|      2 \|/m, "ProcArray's row");
like($out, qr/^results: .*delays\.csv/m, 'delays.csv is listed');

my $json = decode_json(slurp_file("$dir/results.json"));
my $s = $json->{sensitivity};
is($s->{baseline}, 'none', 'the baseline is the variant without delay');
is_deeply([ map { $_->{tranche} } @{ $s->{rows} } ],
	[ 'WALWrite', 'ProcArray' ], 'a row per tranche in results.json');
foreach my $row (@{ $s->{rows} })
{
	like($row->{verdict},
		qr/^(lowers tps|raises tps|equivalent \(±2% for 10% of the hold moved out\)|not resolved)$/,
		"$row->{tranche}: the verdict is one of the four");
	ok($row->{inside_per_acquire} > 0,
		"$row->{tranche}: delays per acquisition inside counted");
}

done_testing();
