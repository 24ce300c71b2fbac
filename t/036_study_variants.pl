# Copyright (c) 2026, pg_lockstat developers
#
# "make run VARIANTS=..." (bench/lockstudy) with real builds, in
# miniature.  A tiny patch, made here from the base server's own patched
# source so that it fits every major, takes ProcArrayLock a second time in
# GetSnapshotData(): one more shared acquisition per snapshot.
#   - A patch that does not apply (a context line changed) stops the study
#     before any build, naming the patch, the hunk and the file; so do bad
#     VARIANTS (names, settings, files) and STRATEGIES given with VARIANTS.
#   - The base against the patched variant: the patched server is built
#     (scripts/build-server.sh, cached by the hash of its patches) with
#     pg_lockstat installed into it, before the first run; the plan shows
#     both builds; each variant's runs ran its own build; and the mechanism
#     table and mechanism.csv show the patch's effect, exact counting that
#     needs no fast machine: ProcArray acquisitions per 1000 transactions
#     twice the base's.
#   - An A/A study, two variants with the same patch and settings, is one
#     build and says "not resolved" or "equivalent (±2%)", never
#     faster or slower.
#   - A build that fails (a patch that makes configure fail) stops the study
#     before any cluster, naming the build log; a variant's setting that
#     the server does not take stops the study, naming the setting.
# The builds go to the cache of the user running the test (in CI, the
# unprivileged user's home): the first run of this file on a machine builds
# one server, 2 to 5 minutes; later runs find it in the cache.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;
use Cwd qw(getcwd);
use File::Basename qw(basename);
use LockStatTest;

my $top = getcwd();
my @study = LockStatTest::study_command();
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $run_dir = "$tmp/run";
my $variant_dir = "$tmp/variants";

my $bindir = `$pg_config --bindir`;
chomp $bindir;
my $base_src = slurp_file("$bindir/../.pg_lockstat_build_src");
chomp $base_src;

# The tiny patch: diff -u of procarray.c before and after the change.
my $file = 'src/backend/storage/ipc/procarray.c';
my $orig = slurp_file("$base_src/$file");
(my $changed = $orig) =~
  s/(going to set MyProc->xmin\.\n\t \*\/\n\tLWLockAcquire\(ProcArrayLock, LW_SHARED\);\n)/$1\tLWLockRelease(ProcArrayLock);\n\tLWLockAcquire(ProcArrayLock, LW_SHARED);\n/
  or die "no GetSnapshotData anchor in $base_src/$file";
mkdir("$tmp/a") && mkdir("$tmp/b") or die $!;
append_to_file("$tmp/a/procarray.c", $orig);
append_to_file("$tmp/b/procarray.c", $changed);
my $diff;
IPC::Run::run(
	[
		'diff', '-u', '--label', "a/$file", '--label', "b/$file",
		"$tmp/a/procarray.c", "$tmp/b/procarray.c"
	],
	'>', \$diff);
like($diff, qr/^\+\tLWLockRelease\(ProcArrayLock\);$/m, 'the test patch is made');
my $patch = "$tmp/procarray-twice.patch";
append_to_file($patch, $diff);
# the same with its last context line before the change altered: no fuzz
# may let it apply elsewhere
(my $bad_diff = $diff) =~ s/^ \tLWLockAcquire\(ProcArrayLock, LW_SHARED\);$/ \tLWLockAcquire(ProcArrayLock, LW_EXCLUSIVE);/m
  or die;
my $bad_patch = "$tmp/procarray-stale.patch";
append_to_file($bad_patch, $bad_diff);
my ($hunk_line) = $diff =~ /^@@ -(\d+),/m;

my @env = (
	"PG_CONFIG=$pg_config", "RUN_DIR=$run_dir", "VARIANT_DIR=$variant_dir",
	'SCALE=1', 'CLIENTS=1', 'DURATION=1', 'REPEAT=2', 'WARMUP=0', 'SEED=5',
	'STRATEGIES=');

sub run_study
{
	my ($out, $err);
	my $ok = IPC::Run::run([ 'env', @env, @_, @study, 'run' ], '>', \$out, '2>', \$err);
	return ($ok, $out, $err);
}

sub studies { return sort glob("$run_dir/2*"); }

# --- refused before anything starts ------------------------------------------
my ($ok, $out, $err) = run_study("VARIANTS=base; stale: $bad_patch");
ok(!$ok, 'a patch that does not apply: the study fails');
like($err,
	qr/^lockstudy: error: variant stale: \Q$bad_patch\E does not apply after the core series of PostgreSQL \d+: Hunk #1 FAILED at $hunk_line of \Q$file\E; nothing was built$/m,
	'the message names the patch, the hunk and the file');
unlike($err, qr/building variant|build-server/, 'no build was started');
ok(!-e $variant_dir, 'nothing was written for the builds');
is(scalar(my @none = studies()), 0, 'no cluster was made');

append_to_file("$tmp/empty.patch", '');
mkdir("$tmp/sp ace") or die;
append_to_file("$tmp/sp ace/x.patch", $diff);
foreach my $bad (
	[ 'VARIANTS=Base', qr/bad variant name "Base"/ ],
	[ 'VARIANTS=a; a', qr/variant "a" appears twice/ ],
	[ "VARIANTS=a; b: $tmp/missing.patch", qr/variant b: patch file "\Q$tmp\E\/missing\.patch" not found/ ],
	[ 'VARIANTS=a; b: pg_lockstat.spin_strategy=bogus', qr/variant b: unknown strategy "bogus"/ ],
	[ 'VARIANTS=a; b: Work_Mem=1MB', qr/variant b: bad setting name "Work_Mem"/ ],
	[ "VARIANTS=a; b: work_mem='1MB'", qr/variant b: bad value/ ],
	[ 'VARIANTS=a; b: work_mem=1MB work_mem=2MB', qr/variant b sets work_mem twice/ ],
	[ ' ; ', qr/VARIANTS is empty/, 1 ],
	# a newline separates variants too: the second line is checked
	[ "VARIANTS=base\n b: $tmp/missing.patch", qr/variant b: patch file "\Q$tmp\E\/missing\.patch" not found/ ],
	[ "VARIANTS=a; b: $tmp", qr/variant b: patch file "\Q$tmp\E" is not a regular file/ ],
	[ "VARIANTS=a; b: $tmp/empty.patch", qr/variant b: patch file "\Q$tmp\E\/empty\.patch" has no unified diff in it/ ],
	[ "VARIANTS=a; b: $patch $patch", qr/variant b lists patch file "\Q$patch\E" twice/ ],
	[ 'VARIANTS=a; b: port=5999', qr/variant b: port is set by the study itself/ ],
	[ 'VARIANTS=a; b: work_mem=64 MB', qr/variant b: patch file "MB" not found .*; a setting is name=value, without spaces/ ])
{
	my ($arg, $re, $raw) = @$bad;
	($ok, $out, $err) = run_study($raw ? "VARIANTS=$arg" : $arg);
	ok(!$ok, "$arg is refused");
	like($err, qr/^lockstudy: error: VARIANTS.*$re|^lockstudy: error: $re/m, "$arg: the message says why");
}
# a patch in a directory whose path has a space, relative to the call's
# directory: build-server.sh could not take it
{
	my ($o, $e);
	IPC::Run::run([ 'env', @env, 'VARIANTS=a; b: x.patch', @study, 'run' ],
		'>', \$o, '2>', \$e, init => sub { chdir("$tmp/sp ace") or die $!; });
	like($e, qr/^lockstudy: error: VARIANTS: variant b: the path of patch file "\Q$tmp\E\/sp ace\/x\.patch" has a space/m,
		'a patch path with a space is refused before any build');
}
# a stale patch after a good one in CRLF line ends: only the stale one is
# refused (patch strips the CRs, and so must the list of files it touches)
(my $crlf = $diff) =~ s/\n/\r\n/g;
append_to_file("$tmp/crlf.patch", $crlf);
($ok, $out, $err) = run_study("VARIANTS=base; c: $tmp/crlf.patch; stale: $bad_patch");
like($err, qr/^lockstudy: error: variant stale: /m, 'a patch with CRLF line ends passes the check');
# a caller's RUN_STUDY_BUILDS is not taken for the result of builds
($ok, $out, $err) = run_study("VARIANTS=base; t: $tmp/missing.patch",
	"RUN_STUDY_BUILDS=$bindir k1 the base\n$bindir k2 fake");
like($err, qr/variant t: patch file "\Q$tmp\E\/missing\.patch" not found/,
	'RUN_STUDY_BUILDS from the caller is ignored: the patch is still checked');
if ($ENV{STOCK_PG_CONFIG})
{
	($ok, $out, $err) = run_study("VARIANTS=base; t: $patch", "PG_CONFIG=$ENV{STOCK_PG_CONFIG}");
	like($err, qr/has no core patch series \(an unpatched build\)/,
		'patched variants on an unpatched base: the message says so');
}
($ok, $out, $err) = run_study('VARIANTS=a; b', 'STRATEGIES=tas ttas');
ok(!$ok, 'STRATEGIES and VARIANTS together are refused');
like($err, qr/give STRATEGIES or VARIANTS, not both/, 'and the message says so');
is(scalar(my @none2 = studies()), 0, 'no cluster was made for any of them');

# --- the base against the patched variant ------------------------------------
($ok, $out, $err) = run_study("VARIANTS=base; twice: $patch");
ok($ok, 'a study of the base against a patched variant succeeds') or diag($err);
like($err,
	qr/lockstudy: building variant twice \(the series \+ procarray-twice\.patch\) into \Q$variant_dir\E\/\w+\n(.*\n)*lockstudy: installing pg_lockstat into variant twice's server(.*\n)*lockstudy: cluster in /,
	'the variant is built, and pg_lockstat installed into it, before the cluster is made');
my ($vdir) = $err =~ /into (\Q$variant_dir\E\/\w+)\n/;
# compiled against the variant's own headers, not linked from the
# checkout's objects (which a copy of the tree would carry along)
like(slurp_file("$vdir-ext.log"), qr/ -c -o extension\/lockstat_lwlock\.o extension\/lockstat_lwlock\.c/,
	'pg_lockstat is compiled for the variant');
like($out,
	qr/^build 1: the base server \(PG_CONFIG\): \S+ \(build key [\w.-]+\)\nbuild 2: the series \+ procarray-twice\.patch: \Q$vdir\E \(build key [\w.-]+\)\nvariant base: build 1\nvariant twice: build 2$/m,
	'the plan shows both builds and which variant runs which');
my ($study) = studies();
like(slurp_file("$study/versions.txt"),
	qr/^variant twice: \Q$vdir\E, build [\w.-]+, the series \+ procarray-twice\.patch$/m,
	'versions.txt names the build of each variant');
like(slurp_file("$study/commands.txt"), qr/^SCALE=1 VARIANTS="base; twice: \Q$patch\E" CLIENTS="1" /,
	'commands.txt has the variants as given');
like(slurp_file("$study/settings.txt"), qr/^-- variant base\n(.*\n)*-- variant twice$/m,
	'settings.txt has the settings of each variant');
my @starts = slurp_file("$study/server.log") =~ /starting (PostgreSQL [^\n]*)/g;
is(scalar(@starts), 1 + 2 * (1 + 2),
	'the server started for the setup and for each variant in the warm-up round and in each of the 2 rounds (the report needs none)');

like($out,
	qr/^\(m\) mechanism: twice against base, 1 clients: per 1000 transactions over the 2 rounds both ran/m,
	'the mechanism table is printed');
like($out,
	qr/^LWLock and spin-wait rows: the client backends and parallel workers only \(kinds\.csv, spinkinds\.csv\); the background processes' counts, at a rate per second, are left out\.$/m,
	'its LWLock and spin-wait rows count the client backends, from kinds.csv and spinkinds.csv');
like($out,
	qr/^Chance marks: at most 0\.05 expected in a point where nothing changed, whatever the dependence between its rows \(q = K p\), so at most 0\.05 over the 1 point of this study with rows\.$/m,
	'the chance marks expected in the study are stated');
like($out, qr/^ ProcArray\s+\| acquires \|\s+[\d.]+ \|\s+[\d.]+ \|\s+x(1\.9\d\d|2\.0\d\d) \|/m,
	'and shows ProcArray acquisitions per transaction doubled');
my %rows;
foreach my $line (split /\n/, slurp_file("$study/mechanism.csv"))
{
	my @f = split /,/, $line;
	$rows{"$f[0]/$f[1]/$f[2]/$f[3]/$f[4]"} = \@f;
}
my $pa = $rows{'twice/1/lwlock/ProcArray/acquires'};
ok($pa, 'mechanism.csv has the ProcArray acquisitions of the variant');
# one more acquisition per snapshot, at least one snapshot per
# transaction; the client backends' only (kinds.csv)
ok($pa->[8] > 1.9 && $pa->[8] < 2.1,
	"its rate ratio lies near 2: $pa->[8] (base $pa->[6], variant $pa->[7] per 1000 transactions)");
# 2 rounds: the sign-flip test inverted cannot exclude any ratio
ok($pa->[9] == 0 && $pa->[10] eq 'inf',
	"its interval over 2 rounds is [0, inf]: [$pa->[9], $pa->[10]]");
ok($pa->[15] >= 10 && $pa->[16] >= 10,
	"and it has the events for one: $pa->[15] and $pa->[16]");
ok($pa->[6] >= 1000, "the base takes at least one per transaction: $pa->[6] per 1000");
my $runs = slurp_file("$study/runs.csv");
like($runs, qr/^variant,clients,round,position,tps,seconds,transactions\n(twice|base),/,
	'runs.csv has the transactions of each run');
like($out, qr/^results: .*mechanism\.csv/m, 'the results line names mechanism.csv');

# --- an A/A study: the same patch twice is one build ---------------------------
# Its pg_lockstat copy is made again if it is not stamped as made from the
# sources for this server: here one with a stale object newer than its
# source, as a copy that carried the checkout's objects along left it
unlink("$vdir-ext/.pg_lockstat_ext_key") or die $!;
append_to_file("$vdir-ext/extension/lockstat_lwlock.o", 'not an object');
utime(undef, undef, "$vdir-ext/extension/lockstat_lwlock.o") or die $!;
($ok, $out, $err) = run_study("VARIANTS=x: $patch; y: $patch pg_lockstat.hold_sample_every=4999");
ok($ok, 'an A/A study succeeds') or diag($err);
like($out, qr/^build 1: the series \+ procarray-twice\.patch: \Q$vdir\E /m,
	'it runs the build made before');
unlike($out, qr/^build 2/m, 'and only that one');
like($out, qr/^variant x: build 1\nvariant y: build 1, settings pg_lockstat\.hold_sample_every = '4999'$/m,
	'both variants run it, y with its setting');
unlike($err, qr/build-server: building/, 'nothing was built again');
like(slurp_file("$vdir-ext.log"), qr/ -c -o extension\/lockstat_lwlock\.o extension\/lockstat_lwlock\.c/,
	'but a pg_lockstat copy not stamped for it is compiled again');
my $aa = (studies())[-1];
my ($aa_point) = grep { /^y,1,/ } split /\n/, slurp_file("$aa/points.csv");
like($aa_point, qr/,(not resolved|equivalent \([^)]*\)|withheld: rounds dependent),/,
	'the A/A point says "not resolved" or "equivalent" (or its rounds failed the check)');
like(slurp_file("$aa/settings.txt"),
	qr/^-- variant y\n(.*\n)*pg_lockstat\.hold_sample_every\|4999\|\|configuration file$/m,
	'and y ran with its setting');

# --- a build that fails ------------------------------------------------------
# a patch that applies, to configure, and makes it fail at once: the build
# stops within seconds and is not cached
my $conf = slurp_file("$base_src/configure");
(my $conf_bad = $conf) =~ s/\A(#! \/bin\/sh\n)/$1echo "configure stopped by the test patch" >&2; exit 1\n/
  or die "configure does not start with #! /bin/sh";
append_to_file("$tmp/a/configure", $conf);
append_to_file("$tmp/b/configure", $conf_bad);
IPC::Run::run(
	[
		'diff', '-u', '--label', 'a/configure', '--label', 'b/configure',
		"$tmp/a/configure", "$tmp/b/configure"
	],
	'>', \$diff);
my $conf_patch = "$tmp/configure-fails.patch";
append_to_file($conf_patch, $diff);
($ok, $out, $err) = run_study("VARIANTS=base; nobuild: $conf_patch");
ok(!$ok, 'a build that fails: the study fails');
like($err,
	qr/^lockstudy: error: building variant nobuild failed; its build log is (\S+\/build\.log); nothing was run$/m,
	'naming the build log');
my ($blog) = $err =~ /its build log is (\S+\/build\.log);/;
like(slurp_file($blog // '/dev/null'), qr/configure stopped by the test patch/,
	'which has the reason');
is(scalar(my @after = studies()), 2, 'and no cluster was made for it');
ok(!(grep { -O $_ } glob('/tmp/pg_lockstat-patch.* /tmp/pg_lockstat-build.*')),
	'no temporary files of the checks or builds are left');

# --- a setting the server does not take -------------------------------------
# a setting that psql overrides in its session is still in force from the file
($ok, $out, $err) = run_study('VARIANTS=a; b: application_name=variant_b');
ok($ok, 'a setting that the client overrides (application_name) is accepted') or diag($err);
($ok, $out, $err) = run_study('VARIANTS=a; b: pg_lockstat.no_such_setting=1');
ok(!$ok, 'a setting unknown to the server: the study fails');
like($err, qr/^lockstudy: error: checking the settings in force \(variant b\) failed: the server has no setting pg_lockstat\.no_such_setting/m,
	'naming the setting');
($ok, $out, $err) = run_study('VARIANTS=a; b: work_mem=lots');
ok(!$ok, 'a bad value: the study fails');
like($err, qr/^lockstudy: error: server start \(variant b\) failed; see \S+server\.log$/m,
	'at the server start of that variant');
like($err, qr/work_mem/, 'and quotes the server log');

done_testing();
