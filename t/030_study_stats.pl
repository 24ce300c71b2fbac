# Copyright (c) 2026, pg_lockstat developers
#
# The statistics of "make run" (bench/study_stats.py) on synthetic
# runs.csv files, without a server: identical strategies give "no
# difference" at every point; a 20% difference with small noise gives
# "faster" or "slower"; an interval that includes 1 never gives another
# verdict, whatever the data; the order-statistics intervals take the ranks
# of the binomial rule; too few rounds give no verdict; the threshold, the
# bifurcation flag, the plot data, the errors and the seeded round order.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;
use Cwd qw(getcwd);

my $stats = getcwd() . '/bench/study_stats.py';
my $dir = PostgreSQL::Test::Utils::tempdir;
my $n_csv = 0;

# A gaussian deviate (Box-Muller), for the synthetic noise.
sub gauss
{
	my ($u1, $u2) = (1 - rand(), rand());
	return sqrt(-2 * log($u1)) * cos(6.283185307179586 * $u2);
}

# Write a runs.csv: $tps->($strategy, $clients, $round) for every point.
sub write_runs
{
	my ($strategies, $clients, $rounds, $tps) = @_;
	my $path = sprintf('%s/runs-%03d.csv', $dir, ++$n_csv);
	open(my $f, '>', $path) or die "$path: $!";
	print $f "strategy,clients,round,position,tps,seconds\n";
	foreach my $r (1 .. $rounds)
	{
		my $pos = 0;
		foreach my $s (@$strategies)
		{
			$pos++;
			printf $f "%s,%d,%d,%d,%.3f,1.0\n", $s, $_, $r, $pos,
			  $tps->($s, $_, $r)
			  foreach @$clients;
		}
	}
	close($f);
	return $path;
}

# Run the module: (exit status, stdout, stderr, points by "strategy/clients").
sub analyse
{
	my ($runs, @opts) = @_;
	my $points = "$runs.points.csv";
	unlink($points);
	my ($out, $err) = ('', '');
	IPC::Run::run([ $stats, @opts, '--points', $points, $runs ],
		'>', \$out, '2>', \$err);
	my $status = $? >> 8;
	my %p;
	if (-e $points)
	{
		my @lines = split /\n/, slurp_file($points);
		my @cols = split /,/, shift @lines;
		foreach (@lines)
		{
			my @v = split /,/, $_, -1;
			my %row;
			@row{@cols} = @v;
			$p{"$row{strategy}/$row{clients}"} = \%row;
		}
	}
	return ($status, $out, $err, \%p);
}

my @three = ('tas', 'ttas_spin', 'ttas');
my @clients = (1, 2, 8, 64);
my ($status, $out, $err, $p);

# --- identical strategies: exactly the same tps within each round -------------
srand(11);
my %drift;
my $runs = write_runs(
	\@three, \@clients, 9,
	sub {
		my ($s, $c, $r) = @_;
		$drift{"$c/$r"} //= 1 + 0.2 * gauss();
		return 1000 * $c * $drift{"$c/$r"};
	});
($status, $out, $err, $p) = analyse($runs, '--strategies', "@three");
is($status, 0, 'identical strategies: the module succeeds') or diag($err);
is(scalar(grep { $_->{verdict} eq 'no difference' } values %$p),
	8, 'identical strategies: "no difference" at all 8 points');
is(scalar(grep { $_->{verdict} eq 'baseline' && $_->{strategy} eq 'tas' } values %$p),
	4, 'the first of --strategies is the baseline at each client count');
ok(!(grep { $_->{ratio} ne '' && $_->{ratio} != 1 } values %$p),
	'identical strategies: every ratio is 1, round drift cancelled');
like($out, qr/^\(a\) tps per client count: .*ratio of its tps to tas's in the same round/m,
	'table (a) names the baseline');
like($out, qr/^\s+64 \| ttas\s+\|\s+\d+ \|\s+\| 1\.000 \| 1\.000-1\.000 \| no difference \|\s+-$/m,
	'table (a): ratio, interval, verdict, and no rounds can resolve a ratio of 1');

# --- identical in distribution: independent noise and drift -------------------
foreach my $seed (1 .. 5)
{
	srand(100 + $seed);
	%drift = ();
	$runs = write_runs(
		\@three, \@clients, 9,
		sub {
			my ($s, $c, $r) = @_;
			$drift{"$c/$r"} //= 1 + 0.15 * gauss();
			return 1000 * $c * $drift{"$c/$r"} * (1 + 0.02 * gauss());
		});
	($status, $out, $err, $p) = analyse($runs, '--strategies', "@three");
	my @other = grep { $_->{verdict} ne 'baseline' } values %$p;
	is(scalar(grep { $_->{verdict} eq 'no difference' } @other), 8,
		"same distribution, 2% noise, 15% drift (data set $seed): \"no difference\" at all 8 points");
}

# --- a 20% difference with small noise ---------------------------------------
foreach my $rounds (6, 9, 15)
{
	srand(200 + $rounds);
	%drift = ();
	$runs = write_runs(
		\@three, \@clients, $rounds,
		sub {
			my ($s, $c, $r) = @_;
			$drift{"$c/$r"} //= 1 + 0.1 * gauss();
			my $effect = { tas => 1, ttas_spin => 1.2, ttas => 0.8 }->{$s};
			return 1000 * $c * $effect * $drift{"$c/$r"} * (1 + 0.01 * gauss());
		});
	($status, $out, $err, $p) = analyse($runs, '--strategies', "@three");
	is(scalar(grep { $p->{"ttas_spin/$_"}{verdict} eq 'faster' } @clients), 4,
		"20% faster, 1% noise, $rounds rounds: \"faster\" at every client count");
	is(scalar(grep { $p->{"ttas/$_"}{verdict} eq 'slower' } @clients), 4,
		"20% slower, 1% noise, $rounds rounds: \"slower\" at every client count");
	ok( !(grep { abs($p->{"ttas_spin/$_"}{ratio} - 1.2) > 0.03
			  || abs($p->{"ttas/$_"}{ratio} - 0.8) > 0.03 } @clients),
		"$rounds rounds: median ratios within 0.03 of 1.2 and 0.8");
	ok( !(grep { $p->{"ttas_spin/$_"}{ci_low} > 1.2 || $p->{"ttas_spin/$_"}{ci_high} < 1.2 }
			@clients),
		"$rounds rounds: the intervals of the faster strategy hold 1.2");
}

# --- too few rounds: no verdict, however clear --------------------------------
$runs = write_runs(\@three, [8], 5,
	sub { my ($s, $c, $r) = @_; return ($s eq 'tas' ? 1000 : 1300) + $r; });
($status, $out, $err, $p) = analyse($runs, '--strategies', "@three");
is($p->{'ttas_spin/8'}{verdict}, 'no difference', '5 rounds of a 30% difference: "no difference"');
is($p->{'ttas_spin/8'}{coverage}, '0.9375', '5 rounds: the min-max coverage is 1 - 2/2^5');
is($p->{'ttas_spin/8'}{rounds_needed}, '6', '5 rounds: 6 rounds needed');
like($out, qr/^fewer than 6 rounds: the intervals are min-max, of coverage 93\.8% only, and give no verdict$/m,
	'table (a) says why');

# --- the ranks of the order-statistics interval --------------------------------
# ratios 1.01 .. 1.09 in a shuffled round order; n = 9: [x(2), x(8)],
# coverage 1 - 2 (1 + 9) / 2^9; n = 20: [x(6), x(15)]
foreach my $case ([ 9, 1.05, 1.02, 1.08, '0.960938' ], [ 20, 1.105, 1.06, 1.15, '0.958611' ])
{
	my ($n, $med, $lo, $hi, $cov) = @$case;
	srand(300 + $n);
	my @perm = sort { rand() <=> 0.5 } 1 .. $n;
	my @ratio = map { 1 + $_ / 100 } sort { $a <=> $b } @perm;
	my %of_round;
	@of_round{ 1 .. $n } = map { 1 + $_ / 100 } @perm;
	$runs = write_runs([ 'tas', 'ttas' ], [4], $n,
		sub { my ($s, $c, $r) = @_; return 500 * ($s eq 'tas' ? 1 : $of_round{$r}); });
	($status, $out, $err, $p) = analyse($runs, '--strategies', 'tas ttas', '--threshold', '1');
	my $q = $p->{'ttas/4'};
	is(sprintf('%.4f %.4f %.4f', $q->{ratio}, $q->{ci_low}, $q->{ci_high}),
		sprintf('%.4f %.4f %.4f', $med, $lo, $hi),
		"$n rounds: median $med, interval [x(" . ($n == 9 ? 2 : 6) . "), x(" . ($n == 9 ? 8 : 15) . ")]");
	is($q->{coverage}, $cov, "$n rounds: coverage $cov");
	is($q->{verdict}, 'faster', "$n rounds: interval above 1 + 1%: \"faster\"");
}

# --- an interval that includes 1 never gives a verdict ------------------------
srand(400);
my ($points_seen, $with_one, $bad) = (0, 0, 0);
my %verdicts;
foreach my $set (1 .. 40)
{
	my $rounds = 3 + int(rand(13));
	my %effect = (tas => 1, ttas_spin => 0.9 + 0.2 * rand(), ttas => 0.9 + 0.2 * rand());
	my $noise = 0.005 + 0.1 * rand();
	my $threshold = (0, 1, 2, 5)[ $set % 4 ];
	%drift = ();
	$runs = write_runs(
		\@three, \@clients, $rounds,
		sub {
			my ($s, $c, $r) = @_;
			$drift{"$c/$r"} //= 1 + 0.2 * gauss();
			return 1000 * $effect{$s} * abs($drift{"$c/$r"} * (1 + $noise * gauss())) + 1;
		});
	($status, $out, $err, $p) = analyse($runs, '--strategies', "@three", '--threshold', $threshold);
	foreach my $q (grep { $_->{verdict} ne 'baseline' } values %$p)
	{
		$points_seen++;
		$verdicts{ $q->{verdict} }++;
		my $t = $threshold / 100;
		if ($q->{ci_low} <= 1 && 1 <= $q->{ci_high})
		{
			$with_one++;
			$bad++ if $q->{verdict} ne 'no difference';
		}
		$bad++ if $q->{verdict} eq 'faster' && !($q->{ci_low} > 1 + $t);
		$bad++ if $q->{verdict} eq 'slower' && !($q->{ci_high} < 1 - $t);
		$bad++ if $rounds < 6 && $q->{verdict} ne 'no difference';
	}
}
is($points_seen, 320, '40 random data sets: 320 points analysed');
ok($with_one > 30, "of which $with_one have an interval that includes 1");
ok(($verdicts{faster} // 0) > 10 && ($verdicts{slower} // 0) > 10,
	'and others have verdicts: ' . join(', ', map { "$_ $verdicts{$_}" } sort keys %verdicts));
is($bad, 0, 'an interval that includes 1 is always "no difference"; "faster" and "slower" clear the threshold; fewer than 6 rounds give no verdict');

# --- the threshold ------------------------------------------------------------
$runs = write_runs([ 'tas', 'ttas' ], [2], 9,
	sub { my ($s, $c, $r) = @_; return ($s eq 'tas' ? 1000 : 1015) * (1 + $r / 1000); });
($status, $out, $err, $p) = analyse($runs, '--strategies', 'tas ttas');
is($p->{'ttas/2'}{verdict}, 'no difference', 'a clear 1.5% difference within the default 2% threshold: "no difference"');
is($p->{'ttas/2'}{rounds_needed}, '', 'and no number of rounds resolves it');
like($out, qr/^\s+2 \| ttas\s+\|\s+\d+ \|\s+\| 1\.015 \| 1\.015-1\.015 \| no difference \|\s+-$/m,
	'table (a) shows "-" for the rounds needed');
($status, $out, $err, $p) = analyse($runs, '--strategies', 'tas ttas', '--threshold', '1');
is($p->{'ttas/2'}{verdict}, 'faster', 'the same at a 1% threshold: "faster"');

# rounds needed for a 5% difference in 20% noise: more than the 9 run
srand(500);
$runs = write_runs([ 'tas', 'ttas' ], [2], 9,
	sub { my ($s, $c, $r) = @_; return 1000 * ($s eq 'tas' ? 1 : 1.05) * (1 + 0.2 * gauss()); });
($status, $out, $err, $p) = analyse($runs, '--strategies', 'tas ttas');
is($p->{'ttas/2'}{verdict}, 'no difference', '5% in 20% noise over 9 rounds: "no difference"');
like($p->{'ttas/2'}{rounds_needed}, qr/^\d+$/, 'rounds needed: ' . $p->{'ttas/2'}{rounds_needed});
ok($p->{'ttas/2'}{rounds_needed} > 9, 'more rounds than were run');

# --- bifurcation, noise, points.csv and the plot data --------------------------
my @split = (100, 101, 102, 130, 131);
$runs = write_runs([ 'tas', 'ttas' ], [16], 5,
	sub { my ($s, $c, $r) = @_; return $s eq 'tas' ? $split[ $r - 1 ] : 100 + $r; });
($status, $out, $err, $p) = analyse($runs, '--strategies', 'tas ttas', '--dat-dir', $dir);
is($p->{'tas/16'}{bifurcated}, 't', 'two separated groups of runs are flagged bifurcated');
is($p->{'ttas/16'}{bifurcated}, 'f', 'evenly spread runs are not');
like($out, qr/^\s+16 \| tas\s+\|\s+102 \* \|/m, 'table (a) marks it with *');
# the sample standard deviation over the mean, in percent
sub cv_pct
{
	my $mean = 0;
	$mean += $_ / @_ foreach @_;
	my $ss = 0;
	$ss += ($_ - $mean)**2 foreach @_;
	return sprintf('%.1f', 100 * sqrt($ss / (@_ - 1)) / $mean);
}
my ($cv_tas, $cv_ttas) = (cv_pct(@split), cv_pct(map { 100 + $_ } 1 .. 5));
like($out, qr/^noise: coefficient of variation of tps across rounds \(%\)\n.*\n.*\n\s+16 \|\s+\Q$cv_tas\E \|\s+\Q$cv_ttas\E$/m,
	"the noise table has the coefficient of variation of each point ($cv_tas, $cv_ttas)");
like(slurp_file("$runs.points.csv"),
	qr/^strategy,clients,n,median,lo,hi,bifurcated,cv,tps_ci_low,tps_ci_high,pairs,ratio,ci_low,ci_high,coverage,verdict,rounds_needed\n/,
	'points.csv has the columns ratio, ci_low, ci_high and verdict');
is(slurp_file("$dir/tps-tas.dat"), "16 102.000 100.000 131.000\n", 'tps-tas.dat: clients, median, min, max');
like(slurp_file("$dir/ratio-ttas.dat"), qr/^16 [\d.]+ [\d.]+ [\d.]+\n$/, 'ratio-ttas.dat: clients, ratio, interval');
ok(!-e "$dir/ratio-tas.dat", 'no ratio data for the baseline');

# --- errors -------------------------------------------------------------------
append_to_file("$dir/nocol.csv", "strategy,clients,tps\ntas,1,5\n");
($status, $out, $err) = analyse("$dir/nocol.csv");
is($status, 1, 'a runs.csv without a round column: exit status 1');
like($err, qr/^study_stats: error: \S+nocol\.csv: missing column round$/m, 'naming the column');
($status, $out, $err) = analyse("$dir/missing.csv");
like($err, qr/^study_stats: error: cannot read \S+missing\.csv/m, 'a missing runs.csv');
append_to_file("$dir/twice.csv", "strategy,clients,round,tps\ntas,1,1,5\ntas,1,1,6\n");
($status, $out, $err) = analyse("$dir/twice.csv");
like($err, qr/two runs for strategy tas, 1 clients, round 1/, 'two runs of one point and round');
($status, $out, $err) = analyse($runs, '--strategies', 'ttas_spin tas ttas');
like($err, qr/has no runs of the baseline ttas_spin/, 'a baseline without runs');
($status, $out, $err) = analyse($runs, '--strategies', 'tas');
like($err, qr/has strategies not in --strategies: ttas/, 'a strategy not listed');

# --- the round order ------------------------------------------------------------
sub order
{
	my ($out, $err);
	IPC::Run::run([ $stats, 'order', @_ ], '>', \$out, '2>', \$err) or die $err;
	return [ map { [ split / / ] } split /\n/, $out ];
}
my $o = order(42, 9, @three);
is(scalar(@$o), 9, 'order: one line per round');
is_deeply(order(42, 9, @three), $o, 'order: the same seed replays the same order');
ok(join(';', map { "@$_" } @{ order(43, 9, @three) }) ne join(';', map { "@$_" } @$o),
	'order: another seed gives another order');
my $balanced = 1;
foreach my $block (0 .. 2)
{
	foreach my $pos (0 .. 2)
	{
		my %in = map { $o->[ 3 * $block + $_ ][$pos] => 1 } 0 .. 2;
		$balanced = 0 unless keys %in == 3;
	}
}
ok($balanced, 'order: in each block of 3 rounds every strategy runs once in every position');

done_testing();
