# Copyright (c) 2026, pg_lockstat developers
#
# "make run VARIANTS=..." (bench/lockstudy) with an unpatched variant: the
# stock server of the same source (STOCK_PG_CONFIG, as "make test" builds
# it), without the core series or pg_lockstat, beside the patched one.
#   - A tiny study of "stock: unpatched; on": both run every round on the
#     one data directory; the plan names the stock build and its empty
#     shared_preload_libraries; versions.txt names the variant's build
#     and the unpatched variants; runs.csv has both, locks.csv and
#     spins.csv the patched one's rows only; the stock server ran with no
#     library and no pg_lockstat setting (settings.txt); table (a) has the
#     patched server's ratio to stock; (m), (b), (c) and the lock shares
#     say "not available" for stock, (m) once for the study since stock is
#     the baseline; the report again with "on" as the baseline has the
#     not-available line of stock's (m).
#   - The check that the running postmaster is the variant's own binary
#     holds for it: a stock installation whose pg_ctl starts the patched
#     postgres stops the study, naming both binaries.
#   - Refused before anything starts: patch files or a pg_lockstat setting
#     in an unpatched variant, a STOCK_PG_CONFIG that cannot be run, and
#     the base server given as STOCK_PG_CONFIG.
# Without STOCK_PG_CONFIG (set by "make test") there is nothing to test.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;
use Cwd qw(getcwd realpath);
use LockStatTest;

my $stock_pg_config = $ENV{STOCK_PG_CONFIG};
plan skip_all => 'STOCK_PG_CONFIG is not set: no unpatched server to test'
  unless $stock_pg_config;

my @study = LockStatTest::study_command();
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $run_dir = "$tmp/run";

sub bindir_of
{
	my ($config) = @_;
	my $dir = `$config --bindir`;
	die "cannot run $config --bindir" if $? != 0;
	chomp $dir;
	return $dir;
}
my $bindir = bindir_of($pg_config);
my $stock_bindir = bindir_of($stock_pg_config);
(my $stock_prefix = $stock_bindir) =~ s{/bin$}{};

my @env = (
	"PG_CONFIG=$pg_config", "STOCK_PG_CONFIG=$stock_pg_config",
	"RUN_DIR=$run_dir", 'SCALE=1', 'CLIENTS=1', 'DURATION=1', 'REPEAT=2',
	'WARMUP=0', 'SEED=5', 'STRATEGIES=');

sub run_study
{
	my ($out, $err);
	my $ok = IPC::Run::run([ 'env', @env, @_, @study, 'run' ],
		'>', \$out, '2>', \$err);
	return ($ok, $out, $err);
}

sub studies { return sort glob("$run_dir/2*"); }

sub csv_variants
{
	my ($file) = @_;
	my %n;
	my @lines = split /\n/, slurp_file($file);
	shift @lines;
	$n{ (split /,/, $_)[0] }++ foreach @lines;
	return \%n;
}

my $not_available =
  'not available: stock runs the unpatched server \(no pg_lockstat\)';

# --- refused before anything starts ---------------------------------------
append_to_file("$tmp/x.patch", "--- a/f.c\n+++ b/f.c\n@@ -1 +1 @@\n-a\n+b\n");
foreach my $bad (
	[
		[ "VARIANTS=stock: unpatched $tmp/x.patch; on" ],
		qr/^lockstudy: error: VARIANTS: variant stock: "unpatched" and patch files together \(\S*\/x\.patch\)/m
	],
	[
		[ 'VARIANTS=on; stock: unpatched pg_lockstat.track=off' ],
		qr/^lockstudy: error: VARIANTS: variant stock: pg_lockstat\.track is a setting of pg_lockstat, which the unpatched server does not load$/m
	],
	[
		[ 'VARIANTS=stock: unpatched; on', "STOCK_PG_CONFIG=$tmp/nowhere/pg_config" ],
		qr/^lockstudy: error: STOCK_PG_CONFIG="\Q$tmp\E\/nowhere\/pg_config" cannot be run; it must point to the pg_config of the unpatched server/m
	],
	[
		[ 'VARIANTS=stock: unpatched; on', "STOCK_PG_CONFIG=$pg_config" ],
		qr/^lockstudy: error: the unpatched server \S+ \(STOCK_PG_CONFIG\) is the base server itself \(PG_CONFIG\)/m
	])
{
	my ($args, $re) = @$bad;
	my ($ok, $out, $err) = run_study(@$args);
	ok(!$ok, "$args->[-1]: refused");
	like($err, $re, "$args->[-1]: the message says why");
}
is(scalar(my @none = studies()), 0, 'no cluster was made for any of them');

# --- stock against the patched server ---------------------------------------
my ($ok, $out, $err) = run_study('VARIANTS=stock: unpatched; on');
ok($ok, 'a study of the unpatched server against the patched one succeeds')
  or diag($err);
like($out,
	qr/^build 1: the unpatched server \(STOCK_PG_CONFIG\): \Q$stock_prefix\E \(build key [\w.-]+\)\nbuild 2: the base server \(PG_CONFIG\): \S+ \(build key [\w.-]+\)\nvariant stock: build 1, settings shared_preload_libraries = ''\nvariant on: build 2$/m,
	'the plan names the stock build, and the empty library list of its variant');
my ($study) = studies();
my $versions = slurp_file("$study/versions.txt");
like($versions,
	qr/^variant stock: \Q$stock_prefix\E, build [\w.-]+, the unpatched server \(STOCK_PG_CONFIG\)$/m,
	'versions.txt names the stock build');
like($versions, qr/^unpatched variants: stock$/m,
	'and the unpatched variant, for the report');

# both ran every round, each the binary of its own build: the study checks
# that after every start and would have stopped
is_deeply(csv_variants("$study/runs.csv"), { stock => 2, on => 2 },
	'runs.csv has both variants in both rounds');
my @starts = slurp_file("$study/server.log") =~ /starting (PostgreSQL [^\n]*)/g;
is(scalar(@starts), 1 + 2 * 3,
	'the server started for the setup and for each variant in each of the 3 rounds');
my $settings = slurp_file("$study/settings.txt");
my ($stock_settings) = $settings =~ /^-- variant stock\n((?:[^-].*\n)*)/m;
my ($on_settings) = $settings =~ /^-- variant on\n((?:[^-].*\n)*)/m;
like($stock_settings, qr/^shared_preload_libraries\|\|\|configuration file$/m,
	'the stock server ran with no library preloaded');
unlike($stock_settings, qr/^pg_lockstat\./m, 'and without pg_lockstat settings');
like($on_settings, qr/^shared_preload_libraries\|pg_lockstat\|\|configuration file$/m,
	'the patched one with pg_lockstat');

my $locks = csv_variants("$study/locks.csv");
ok(!$locks->{stock}, 'locks.csv has no rows of stock');
ok($locks->{on}, 'and rows of on');
ok(!csv_variants("$study/spins.csv")->{stock}, 'spins.csv has no rows of stock');
my $kinds = csv_variants("$study/kinds.csv");
ok(!$kinds->{stock}, 'kinds.csv has no rows of stock');
ok($kinds->{on}, 'and rows of on');

like($out,
	qr/^\s+1 \| on\s+\|\s+\d+ \|\s+\| \d+\.\d{3} \| \d+\.\d{3}-\d+\.\d{3} \|\s+\d+\.\d{3} \|\s+\d+\.\d{3}-\d+\.\d{3} \| (not resolved|withheld: rounds dependent)\s*\|/m,
	'table (a) has the ratio of the patched server to stock');
like($out,
	qr/^\(m\) mechanism: $not_available; it is the baseline, so no variant has a table \(m\)$/m,
	'(m) is not available for the study: its baseline is unpatched');
like($out, qr/^\(b\) top LWLocks: $not_available$/m, '(b) says so for stock');
like($out, qr/^\(c\) top spin-wait call sites: $not_available$/m,
	'(c) too');
like($out, qr/^\(b\) top 10 LWLocks by blocks: variant on, 1 clients, sum of 2 rounds$/m,
	'(b) of the patched variant is there');
like(slurp_file("$study/locks-stock.dat"), qr/^# $not_available$/,
	'the lock shares of stock say so');
ok(!-e "$study/locks-stock.png", 'and have no plot');

# the report again, the patched server the baseline
my ($rep_out, $rep_err);
IPC::Run::run([ 'env', @study, 'report', $study, '--variants', 'on stock' ],
	'>', \$rep_out, '2>', \$rep_err)
  or die "lockstudy report failed: $rep_err";
like($rep_out, qr/^\(m\) mechanism: stock against on: $not_available$/m,
	'with on as the baseline, stock\'s (m) says it is not available');
like($rep_out,
	qr/^\s+1 \| stock\s+\|\s+\d+ \|\s+\| \d+\.\d{3} \| \d+\.\d{3}-\d+\.\d{3} \|\s+\d+\.\d{3} \|\s+\d+\.\d{3}-\d+\.\d{3} \| (not resolved|withheld: rounds dependent)\s*\|/m,
	'and table (a) has stock\'s ratio to on');

# --- the binary check holds for the stock server ----------------------------
# a copy of the stock installation (relocatable) whose pg_ctl starts the
# patched server's postgres
my $fake = "$tmp/fake-stock";
mkdir $fake or die "mkdir $fake: $!";
system('cp', '-a', glob("$stock_prefix/*"), glob("$stock_prefix/.pg_lockstat_build_*"), "$fake/") == 0
  or die "cannot copy $stock_prefix";
unlink("$fake/bin/pg_ctl") or die $!;
append_to_file("$fake/bin/pg_ctl", "#!/bin/sh\nexec '$bindir/pg_ctl' \"\$@\"\n");
chmod(0755, "$fake/bin/pg_ctl") or die $!;
($ok, $out, $err) = run_study('VARIANTS=on; stock: unpatched',
	"STOCK_PG_CONFIG=$fake/bin/pg_config");
ok(!$ok, 'a stock pg_ctl that starts another postgres: the study fails');
my $real = realpath("$bindir/postgres");
like($err,
	qr/^lockstudy: error: checking the server of variant stock failed: \Q$real\E runs, not \Q$fake\E\/bin\/postgres$/m,
	'naming the binary that runs and the stock one');
like($err, qr/^lockstudy: no server left running; data directory removed/m,
	'and no server is left running');

done_testing();
