# Copyright (c) 2026, pg_lockstat developers
#
# "make run SHARED_START=1" (bench/lockstudy) on a real server, in
# miniature: variants that differ only in settings a reload changes run in
# one server start per round, the next one's settings put in force by
# pg_reload_conf(); a variant that needs a restart (shared_buffers) still
# gets its own start.
#   - The plan says which variants share a start and counts the starts;
#     the server log has that many starts and a reload per shared start.
#   - The reload takes effect both ways within one start: the client
#     backends of the variant with pg_lockstat.track = off count nothing
#     (kinds.csv), those of the variant at the defaults count their
#     acquisitions, in rounds where on runs first and in rounds where
#     off does (4 rounds: the order within the start changes every 2).
#   - commands.txt has each reload; settings.txt each variant's settings;
#     runs.csv the positions of the order the plan printed.
#   - Bad SHARED_START is refused before anything starts.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;
use LockStatTest;

my @study = LockStatTest::study_command();
my $run_dir = PostgreSQL::Test::Utils::tempdir;
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';

my @env = (
	"PG_CONFIG=$pg_config", "RUN_DIR=$run_dir",
	'SCALE=1', 'CLIENTS=1', 'DURATION=1', 'REPEAT=4', 'WARMUP=0',
	'SEED=7', 'SHARED_START=1',
	'VARIANTS=on; off: pg_lockstat.track=off; sb: shared_buffers=16MB');

my ($stdout, $stderr);
my $ok =
  IPC::Run::run([ 'env', @env, @study, 'run' ], '>', \$stdout, '2>', \$stderr);
ok($ok, 'a study with SHARED_START=1 succeeds') or diag($stderr);
like($stdout,
	qr/^plan: 4 rounds x 3 variants x 1 client counts \(1\) = 12 runs of 1s, after a warm-up round of 3 runs that are not recorded; 10 server starts, /m,
	'the plan counts two server starts per round: on and off share one, sb has its own');
like($stdout,
	qr/^SHARED_START=1: variants on, off share a server start per round, each after the first put in force by a reload$/m,
	'the plan says which variants share a start');
my @rounds = $stdout =~ /^round [1-4]: (.*); clients 1$/mg;
is(scalar(@rounds), 4, 'the plan prints the order of the 4 rounds');
like($_, qr/^(\[on off\] sb|\[off on\] sb|sb \[on off\]|sb \[off on\])$/,
	"round order \"$_\": on and off together, in brackets")
  foreach @rounds;

my @studies = glob("$run_dir/2*");
is(scalar(@studies), 1, 'one study directory');
my $dir = $studies[0];
my $log = slurp_file("$dir/server.log");
is(scalar(() = $log =~ /starting PostgreSQL /g),
	1 + 5 * 2, 'the server started for the setup and twice in each round');
is(scalar(() = $log =~ /received SIGHUP, reloading configuration files/g),
	5, 'and reloaded once in each round, for the second variant of the shared start');

# the client backends' acquisitions of each run, from kinds.csv
my @kinds = split /\n/, slurp_file("$dir/kinds.csv");
my @head = split /,/, shift @kinds;
my %col = map { $head[$_] => $_ } 0 .. $#head;
my %acquired;
foreach (@kinds)
{
	my @f = split /,/;
	next unless $f[ $col{backend_type} ] eq 'client backend';
	$acquired{"$f[0] $f[2]"} +=
	  $f[ $col{sh_acquires} ] + $f[ $col{ex_acquires} ];
}
my %firsts = map { /\[(\w+)/; $1 => 1 } @rounds;
is(join(' ', sort keys %firsts), 'off on',
	'on runs first in the shared start of some rounds, off in others');
foreach my $r (1 .. 4)
{
	my ($first) = $rounds[ $r - 1 ] =~ /\[(\w+)/;
	ok(($acquired{"on $r"} // 0) > 0,
		"round $r (first of the shared start: $first): the client backends of on count acquisitions"
	);
	is($acquired{"off $r"} // 0,
		0, "round $r: those of off, with track = off by the reload, count none");
}

my $runs = slurp_file("$dir/runs.csv");
foreach my $r (1 .. 4)
{
	my @order = grep { $_ ne '' } split /[\[\] ]+/, $rounds[ $r - 1 ];
	foreach my $pos (1 .. 3)
	{
		my $v = $order[ $pos - 1 ];
		like($runs, qr/^$v,1,$r,$pos,/m, "round $r: $v ran in position $pos");
	}
}
my $commands = slurp_file("$dir/commands.txt");
my @reloads = $commands =~ /^(\[\w+\] SELECT pg_reload_conf\(\) .*)$/mg;
is(scalar(@reloads), 5, 'commands.txt has the reload of each shared start');
like($_,
	qr/^(\[on\] SELECT pg_reload_conf\(\) with variant\.conf: empty|\[off\] SELECT pg_reload_conf\(\) with variant\.conf: pg_lockstat\.track = 'off')( \(warm-up round\))?$/,
	"reload line \"$_\" names the settings it put in force")
  foreach @reloads;
like($commands, qr/^SCALE=1 .* SHARED_START=1$/m,
	'the parameters end with SHARED_START=1');
like(slurp_file("$dir/settings.txt"),
	qr/^-- variant off\n(.*\n)*pg_lockstat\.track\|off\|\|configuration file$/m,
	'settings.txt has the settings in force after the reload');
ok(!-e "$dir/data", 'the data directory is removed');

# a value the server refuses, put in force by a reload: the study stops
# at once, naming the setting and the server's reason, with no server left
# (a seed whose round 1 runs "bad" second, after the reload)
my $seed;
foreach my $try (0 .. 50)
{
	my ($o, $e);
	IPC::Run::run([ 'env', @study, 'order', $try, 1, 'on', 'bad' ],
		'>', \$o, '2>', \$e) or die $e;
	if ($o =~ /^on bad$/m) { $seed = $try; last; }
}
ok(defined $seed, 'a seed whose round 1 runs on, then bad');
my $bad_dir = "$run_dir/bad";
my ($bout, $berr);
my $bad_ok = IPC::Run::run(
	[
		'env', @env, "RUN_DIR=$bad_dir", "SEED=$seed", 'WARMUP_ROUND=0',
		'REPEAT=1', 'VARIANTS=on; bad: pg_lockstat.hold_sample_every=-1',
		@study, 'run'
	],
	'>', \$bout, '2>', \$berr);
ok(!$bad_ok, 'a reloaded variant whose value the server refuses stops the study');
like($berr,
	qr/^lockstudy: error: checking the settings in force \(variant bad\) failed: pg_lockstat\.hold_sample_every = '-1' is not in force \(setting could not be applied\); see /m,
	'naming the setting and why, after its reload');
like($bout, qr/^round 1: \[on bad\]; clients 1$/m, 'in the shared start of round 1');
my ($bad_study) = glob("$bad_dir/2*");
ok(!-e "$bad_study/data", 'and no data directory is left');
like(slurp_file("$bad_study/server.log"), qr/received SIGHUP, reloading configuration files/,
	'the server did reload');

# bad SHARED_START: refused before anything starts
my ($out, $err);
IPC::Run::run([ 'env', @env, 'SHARED_START=yes', @study, 'run' ],
	'>', \$out, '2>', \$err);
like($err,
	qr/^lockstudy: error: SHARED_START must be 1 \(variants that differ only in settings a reload changes share a server start\) or 0 \(a start per variant\), not "yes"$/m,
	'SHARED_START=yes is refused, naming the parameter');
my @after = glob("$run_dir/2*");
is(scalar(@after), 1, 'and no study directory is made');

done_testing();
