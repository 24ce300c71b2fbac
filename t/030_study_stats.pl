# Copyright (c) 2026, pg_lockstat developers
#
# The statistics of "make run" (bench/study_stats.py) on synthetic
# runs.csv files, without a server.  Every expected value is computed here,
# independently of the module: the order-statistics ranks and coverages by
# exact integer arithmetic (binomial coefficients of Pascal's triangle),
# the intervals, medians and verdicts from the tps written to runs.csv.
# The file proves that:
#   - for every number of rounds from 3 to 30, the interval of the median
#     (of the tps and of the ratios) is [x(k), x(n+1-k)] with k the largest
#     rank of coverage at least 95%, and its coverage is the exact one;
#     below 6 rounds it is [min, max] and gives no verdict;
#   - over 1000 null data sets (identical strategies, noise and drift) at
#     threshold 0, the rate of "faster" and of "slower" verdicts is the
#     nominal one of the interval (1 - coverage, 3.9% at 9 rounds), within
#     binomial bounds that a correct module leaves with probability under
#     1e-6, and that an interval narrower by one rank leaves surely;
#   - on random data sets of 3 to 30 rounds at thresholds 0, 1, 2 and 5%,
#     every reported median, interval, coverage and verdict is the one
#     computed here from the runs;
#   - ratios are taken within a round, so that round-to-round drift far
#     larger than the effect cancels;
#   - ties (equal values at an end of the interval, all values equal) keep
#     the ranks, and an interval that reaches 1 at an end gives no verdict;
#   - the collapse test: clean splits and splits at the example's noise
#     are flagged with their bad runs, single-peaked data at 12 % noise at
#     the calibrated rate of about 1 %; a split point's ratio is "bimodal",
#     with Fisher's exact test of the bad runs against the baseline's;
#   - the threshold, "rounds needed", the tables, points.csv, the plot data,
#     the errors, the Bonferroni correction, drift and position, and the
#     seeded round and client orders.
# STUDY_STATS names another copy of the module to test (default
# bench/study_stats.py of the current directory), e.g. a deliberately
# broken one, to see the checks fail.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Utils;
use Test::More;
use Cwd qw(getcwd);
use List::Util qw(max min sum);
use LockStatTest::Stats;

my $stats = $ENV{STUDY_STATS} // getcwd() . '/bench/study_stats.py';
my $dir = PostgreSQL::Test::Utils::tempdir;
my $n_csv = 0;

# The arguments in a random order (Fisher-Yates, from srand's sequence).
sub shuffled
{
	my @x = @_;
	for (my $i = $#x; $i > 0; $i--)
	{
		my $j = int(rand($i + 1));
		@x[ $i, $j ] = @x[ $j, $i ];
	}
	return @x;
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

# Write a runs.csv of the rows [strategy, clients, round, tps]: points may
# have different numbers of rounds.
sub write_rows
{
	my ($rows) = @_;
	my $path = sprintf('%s/runs-%03d.csv', $dir, ++$n_csv);
	open(my $f, '>', $path) or die "$path: $!";
	print $f "strategy,clients,round,tps\n";
	print $f join(',', @$_), "\n" foreach @$rows;
	close($f);
	return $path;
}

# Run the module: (exit status, stdout, stderr, points by "strategy/clients").
# Each interval is checked at the confidence asked (--correction none)
# unless @opts name a correction: the Bonferroni correction has its own
# checks below.
sub analyse
{
	my ($runs, @opts) = @_;
	push @opts, '--correction', 'none' unless grep { $_ eq '--correction' } @opts;
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

# --- the expected values, computed here ------------------------------------------
# The expected columns of a strategy's point, from its tps and the
# baseline's tps of the same rounds (strings as written to runs.csv), at a
# threshold in percent.
sub expect_ratio
{
	my ($base, $tps, $threshold) = @_;
	my ($med, $lo, $hi, $cov, $enough) =
	  expect_ci(map { $tps->[$_] / $base->[$_] } 0 .. $#$base);
	my $t = $threshold / 100;
	my $verdict =
		!$enough ? 'no difference'
	  : $lo > 1 + $t ? 'faster'
	  : $hi < 1 - $t ? 'slower'
	  :                'no difference';
	return {
		n => scalar @$tps, ratio => $med, ci_low => $lo, ci_high => $hi,
		coverage => $cov, verdict => $verdict };
}

# The expected tps columns of a point.
sub expect_tps
{
	my ($med, $lo, $hi, $cov) = expect_ci(@_);
	return {
		n => scalar @_, median => $med, tps_ci_low => $lo,
		tps_ci_high => $hi, coverage => $cov };
}

# The columns of a point of points.csv that differ from the expected ones:
# words exactly, numbers to the 6 significant digits written (coverage to
# 1e-6).
sub mismatches
{
	my ($q, $want) = @_;
	return ('missing') unless $q;
	my @bad;
	foreach my $col (sort keys %$want)
	{
		my ($got, $w) = ($q->{$col} // '', $want->{$col});
		my $ok =
		  $col =~ /^(verdict|bifurcated)$/ ? $got eq $w
		  : $got ne ''
		  && abs($got - $w) <= ($col eq 'coverage' ? 1e-6 : 6e-6 * abs($w));
		push @bad, "$col $got, expected $w" unless $ok;
	}
	return @bad;
}

# P(L <= X <= U) for X ~ Binomial(N, q).
sub binom_mass
{
	my ($N, $q, $L, $U) = @_;
	my @pmf = binom_pmf($N, $q);
	return sum(@pmf[ $L .. $U ]);
}

# The computation above against published tables of the ranks.
is(join(' ', map { my ($k) = order_ci($_); "$_:$k" } 6, 8, 9, 17, 20, 30),
	'6:1 8:1 9:2 17:5 20:6 30:10',
	'the ranks computed here are those of the tables (n = 9: x(2), n = 30: x(10))');

my @three = ('tas', 'ttas_spin', 'ttas');
my @clients = (1, 2, 8, 64);
my ($status, $out, $err, $p);

# --- the ranks and coverage of the interval, 3 to 30 rounds --------------------------
# One point per number of rounds n (clients = n).  The baseline's tps are
# 1000 (100 + 2 j) for j a permutation of 1..n over the rounds: a drift of
# up to 60%; ttas's tps are the baseline's of the same round times
# (1000 + i) / 1000, i another permutation: the ratios are exactly
# 1.001 .. 1.00n, in an order unrelated to the drift's.
srand(700);
my (@rows, %want);
foreach my $n (3 .. 30)
{
	my @j = shuffled(1 .. $n);
	my @i = shuffled(1 .. $n);
	my (@base, @other);
	foreach my $r (1 .. $n)
	{
		push @base, 1000 * (100 + 2 * $j[ $r - 1 ]);
		push @other, (100 + 2 * $j[ $r - 1 ]) * (1000 + $i[ $r - 1 ]);
		push @rows, [ 'tas', $n, $r, $base[-1] ], [ 'ttas', $n, $r, $other[-1] ];
	}
	my ($k, $coverage, $enough) = order_ci($n);
	$want{"tas/$n"} = {
		median => 1000 * (100 + ($n + 1)), tps_ci_low => 1000 * (100 + 2 * $k),
		tps_ci_high => 1000 * (100 + 2 * ($n + 1 - $k)), coverage => $coverage };
	my ($m, $lo, $hi) = expect_ci(@other);
	$want{"ttas/$n"} = {
		ratio => 1 + ($n + 1) / 2000, ci_low => 1 + $k / 1000,
		ci_high => 1 + ($n + 1 - $k) / 1000, coverage => $coverage,
		tps_ci_low => $lo, tps_ci_high => $hi,
		verdict => $enough ? 'faster' : 'no difference' };
}
($status, $out, $err, $p) = analyse(write_rows(\@rows), '--strategies', 'tas ttas', '--threshold', '0');
is($status, 0, 'ranks: the module succeeds') or diag($err);
foreach my $n (3 .. 30)
{
	my ($k, $coverage, $enough) = order_ci($n);
	my @bad = map { my $s = $_; map { "$s: $_" } mismatches($p->{"$s/$n"}, $want{"$s/$n"}) }
	  ('tas', 'ttas');
	ok(!@bad,
		sprintf('%d rounds: interval [x(%d), x(%d)] of coverage %.6f for the tps and the paired ratios; %s',
			$n, $k, $n + 1 - $k, $coverage,
			$enough ? '"faster" at threshold 0' : 'min-max, below 95%: "no difference"'))
	  or diag(join("\n", @bad));
}

# --- the false-verdict rate on null data ---------------------------------------------
# 1000 data sets of 9 rounds, one per client count: tas and ttas have the
# same distribution, 2% noise each over a 15% drift per round that they
# share.  The ratios are then exchangeable around 1, so "faster" (x(2) > 1)
# has probability P(B <= 1) = 10/512 exactly, and so has "slower", B ~
# Binomial(9, 1/2).  Each count is checked against the binomial bounds
# whose tails hold at most 2.5e-8 each: a correct module fails one of the 3
# checks with probability under 1.5e-7.  An interval of x(3)..x(7) makes
# each side 46/512, x(3)..x(9) makes "faster" 46/512.
srand(600);
my ($sets, $rounds) = (1000, 9);
@rows = ();
foreach my $c (1 .. $sets)
{
	foreach my $r (1 .. $rounds)
	{
		my $drift = 1 + 0.15 * gauss();
		push @rows, [ $_, $c, $r, sprintf('%.3f', 100000 * abs($drift * (1 + 0.02 * gauss()))) ]
		  foreach ('tas', 'ttas');
	}
}
($status, $out, $err, $p) = analyse(write_rows(\@rows), '--strategies', 'tas ttas', '--threshold', '0');
is($status, 0, 'null data: the module succeeds') or diag($err);
my %null = (faster => 0, slower => 0, 'no difference' => 0);
$null{ $p->{"ttas/$_"}{verdict} // 'missing' }++ foreach 1 .. $sets;
my ($k9) = order_ci($rounds);
my $side = below_rank($rounds, $k9) / 2**$rounds;
my $side_narrow = below_rank($rounds, $k9 + 1) / 2**$rounds;
my ($lo_all, $hi_all) = binom_bounds($sets, 2 * $side, 2.5e-8);
my ($lo_side, $hi_side) = binom_bounds($sets, $side, 2.5e-8);
my $false = $null{faster} + $null{slower};
ok($lo_all <= $false && $false <= $hi_all,
	sprintf('null data, 9 rounds, threshold 0: %d false verdicts in %d, within [%d, %d] around the nominal %.2f%% (an interval one rank narrower: %.1f%%)',
		$false, $sets, $lo_all, $hi_all, 100 * 2 * $side, 100 * 2 * $side_narrow));
ok($lo_side <= $null{faster} && $null{faster} <= $hi_side,
	sprintf('null data: %d "faster", within [%d, %d] around %.2f%%',
		$null{faster}, $lo_side, $hi_side, 100 * $side));
ok($lo_side <= $null{slower} && $null{slower} <= $hi_side,
	sprintf('null data: %d "slower", within [%d, %d] around %.2f%%',
		$null{slower}, $lo_side, $hi_side, 100 * $side));
# The power of these checks: the probability that they pass a wrong interval.
my $pass_narrow = binom_mass($sets, 2 * $side_narrow, $lo_all, $hi_all);
my $pass_shifted = binom_mass($sets, $side_narrow, $lo_side, $hi_side);
ok($pass_narrow < 1e-12 && $pass_shifted < 1e-5,
	sprintf('these checks pass an interval of x(3)..x(7) with probability %.1g, one of x(3)..x(9) with probability %.1g',
		$pass_narrow, $pass_shifted));

# --- round drift cancels: ratios are paired by round --------------------------------
# A 25% drift from round to round, the same for all strategies of a round;
# ttas is 5% faster and ttas_spin 5% slower than tas in every round, with
# 0.3% noise.  Only ratios within a round resolve the 5%: the intervals of
# the tps themselves overlap widely.
srand(12);
my %drift;
my $runs = write_runs(
	\@three, \@clients, 9,
	sub {
		my ($s, $c, $r) = @_;
		$drift{"$c/$r"} //= 1 + 0.25 * gauss();
		my $effect = { tas => 1, ttas_spin => 0.95, ttas => 1.05 }->{$s};
		return 1000 * $c * $effect * $drift{"$c/$r"} * (1 + 0.003 * gauss());
	});
($status, $out, $err, $p) = analyse($runs, '--strategies', "@three");
ok( !(grep { $p->{"ttas/$_"}{tps_ci_low} >= $p->{"tas/$_"}{tps_ci_high}
		  || $p->{"ttas_spin/$_"}{tps_ci_high} <= $p->{"tas/$_"}{tps_ci_low} } @clients),
	'drift: the tps intervals of ttas and of ttas_spin overlap those of tas');
is(join(' ', map { $p->{"ttas/$_"}{verdict} } @clients),
	'faster faster faster faster', 'drift: 5% faster in 25% drift, 9 rounds: "faster" at every client count');
is(join(' ', map { $p->{"ttas_spin/$_"}{verdict} } @clients),
	'slower slower slower slower', 'drift: 5% slower: "slower" at every client count');
ok( !(grep { $p->{"ttas/$_"}{ci_low} < 1.04 || $p->{"ttas/$_"}{ci_high} > 1.06
		  || $p->{"ttas_spin/$_"}{ci_low} < 0.94 || $p->{"ttas_spin/$_"}{ci_high} > 0.96 } @clients),
	'drift: the ratio intervals lie within 1.05 +- 0.01 and 0.95 +- 0.01');

# --- ties and equal values ------------------------------------------------------------
# Ratios in permille, 9 rounds in a shuffled order, over a baseline
# drifting by 3% steps; [x(2), x(8)] as written.
srand(800);
@rows = ();
my @ties = (
	[ 1, [ 1000, 1000, 1010, 1020, 1030, 1040, 1050, 1060, 1070 ], '1.000 1.060 no difference',
		'x(1) = x(2) = 1: the interval reaches 1 at its end: "no difference"' ],
	[ 2, [ 930, 940, 950, 960, 970, 980, 990, 1000, 1000 ], '0.940 1.000 no difference',
		'x(8) = x(9) = 1: "no difference"' ],
	[ 3, [ 1010, 1020, 1020, 1030, 1050, 1060, 1070, 1070, 1090 ], '1.020 1.070 faster',
		'x(2) = x(3) and x(7) = x(8): the ends are still x(2) and x(8)' ],
	[ 4, [ 1050, 1050, 1050, 1050, 1050, 1050, 1050, 1050, 1050 ], '1.050 1.050 faster',
		'all ratios 1.05: the interval [1.05, 1.05], "faster"' ]);
foreach my $case (@ties)
{
	my ($c, $ratios) = @$case;
	my @j = shuffled(1 .. 9);
	my @q = shuffled(@$ratios);
	foreach my $r (1 .. 9)
	{
		push @rows, [ 'tas', $c, $r, 1000 * (100 + 3 * $j[ $r - 1 ]) ],
		  [ 'ttas', $c, $r, (100 + 3 * $j[ $r - 1 ]) * $q[ $r - 1 ] ];
	}
}
# all tps equal, in every round and for both strategies
push @rows, map { ([ 'tas', 5, $_, 1000 ], [ 'ttas', 5, $_, 1000 ]) } 1 .. 9;
($status, $out, $err, $p) = analyse(write_rows(\@rows), '--strategies', 'tas ttas', '--threshold', '0');
foreach my $case (@ties)
{
	my ($c, undef, $expect, $name) = @$case;
	my $q = $p->{"ttas/$c"};
	is(sprintf('%.3f %.3f %s', $q->{ci_low}, $q->{ci_high}, $q->{verdict}), $expect,
		"ties at threshold 0: $name");
}
is(join(' ', map { $p->{'tas/5'}{$_} } qw(median tps_ci_low tps_ci_high cv bifurcated)),
	'1000.000 1000.000 1000.000 0 f',
	'all tps equal: median and interval 1000, no variation, not bifurcated');
is(join(' ', map { $p->{'ttas/5'}{$_} } qw(ratio ci_low ci_high verdict)),
	'1 1 1 no difference', 'all tps equal: ratio and interval 1, "no difference"');

# --- identical strategies: exactly the same tps within each round -------------
srand(11);
%drift = ();
$runs = write_runs(
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
ok(!(grep { $_->{ratio} ne '' && ($_->{ratio} != 1 || $_->{ci_low} != 1 || $_->{ci_high} != 1) } values %$p),
	'identical strategies: every ratio and both ends of its interval are 1');
like($out, qr/^\(a\) tps per client count: .*ratio of its tps to tas's in the same round/m,
	'table (a) names the baseline');
like($out, qr/^\s+64 \| ttas\s+\|\s+\d+ \|\s+\| 1\.000 \| 1\.000-1\.000 \| no difference \|\s+-$/m,
	'table (a): ratio, interval, verdict, and no rounds can resolve a ratio of 1');

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

# --- random data: every interval and verdict is the one computed here ------------
# 4 thresholds; at each, 80 data sets (one per client count) of 3 to 30
# rounds, random effects within +-10%, noise 0.5% to 10.5% over a 20%
# drift.  Every point's median ratio, interval, coverage and verdict, and
# the baseline's median tps and interval, must be those computed here from
# the tps written: the ranks of order_ci, "faster" only above 1 + threshold,
# "slower" only below 1 - threshold, none below 6 rounds.
srand(400);
my ($points_seen, $with_one, $split_points) = (0, 0, 0);
my (%verdicts, @wrong);
foreach my $threshold (0, 1, 2, 5)
{
	@rows = ();
	%want = ();
	foreach my $c (1 .. 80)
	{
		my $n = 3 + int(rand(28));
		my %effect = (tas => 1, ttas_spin => 0.9 + 0.2 * rand(), ttas => 0.9 + 0.2 * rand());
		my $noise = 0.005 + 0.1 * rand();
		my %v;
		foreach my $r (1 .. $n)
		{
			my $drift = 1 + 0.2 * gauss();
			foreach my $s (@three)
			{
				my $t = sprintf('%.3f', 1000 * $effect{$s} * abs($drift * (1 + $noise * gauss())) + 1);
				push @rows, [ $s, $c, $r, $t ];
				push @{ $v{$s} }, $t;
			}
		}
		$want{"tas/$c"} = expect_tps(@{ $v{tas} });
		$want{"$_/$c"} = expect_ratio($v{tas}, $v{$_}, $threshold) foreach ('ttas_spin', 'ttas');
	}
	($status, $out, $err, $p) =
	  analyse(write_rows(\@rows), '--strategies', "@three", '--threshold', $threshold);
	foreach my $key (sort keys %want)
	{
		# a point whose runs, or the baseline's, split into two groups (the
		# collapse test, about 1 % of single-peaked points each, checked
		# below) has the verdict bimodal instead
		my ($c) = $key =~ m{/(\d+)$};
		$want{$key}{verdict} = 'bimodal'
		  if $key !~ m{^tas/} && $p->{$key} && $p->{"tas/$c"}
		  && ($p->{$key}{bifurcated} eq 't' || $p->{"tas/$c"}{bifurcated} eq 't')
		  && exists $want{$key}{verdict};
		$split_points++ if $key !~ m{^tas/} && ($want{$key}{verdict} // '') eq 'bimodal';
		push @wrong, map { "threshold $threshold%, $key: $_" } mismatches($p->{$key}, $want{$key});
		next if $key =~ m{^tas/} || !$p->{$key};
		$points_seen++;
		$verdicts{ $p->{$key}{verdict} }++;
		$with_one++ if $p->{$key}{ci_low} <= 1 && 1 <= $p->{$key}{ci_high};
	}
}
is($points_seen, 640, 'random data: 640 points analysed');
cmp_ok($split_points, '<=', 50,
	"of which $split_points are bimodal (the strategy's or the baseline's runs split; about 2 x 1 % expected, here with round-to-round drift of 20 %)");
ok($with_one > 100, "of which $with_one have an interval that includes 1");
ok(($verdicts{faster} // 0) > 50 && ($verdicts{slower} // 0) > 50,
	'and others have verdicts: ' . join(', ', map { "$_ $verdicts{$_}" } sort keys %verdicts));
is(scalar(@wrong), 0,
	'random data: every median, interval, coverage and verdict is the one computed here from the runs (so an interval that includes 1 never gives a verdict)')
  or diag(join("\n", grep { defined } @wrong[ 0 .. 9 ]));

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
ok(($p->{'ttas/2'}{rounds_needed} || 0) > 9, 'more rounds than were run');

# --- bifurcation, noise, points.csv and the plot data --------------------------
my @split = (100, 101, 102, 130, 131);
$runs = write_runs([ 'tas', 'ttas' ], [16], 5,
	sub { my ($s, $c, $r) = @_; return $s eq 'tas' ? $split[ $r - 1 ] : 100 + $r; });
($status, $out, $err, $p) = analyse($runs, '--strategies', 'tas ttas', '--dat-dir', $dir);
is($p->{'tas/16'}{bifurcated}, 't', 'two separated groups of runs are flagged bimodal');
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
	qr/^strategy,clients,n,median,lo,hi,bifurcated,cv,tps_ci_low,tps_ci_high,pairs,ratio,ci_low,ci_high,coverage,verdict,rounds_needed,bad_runs,fisher_p\n/,
	'points.csv has the columns ratio, ci_low, ci_high and verdict');
is(slurp_file("$dir/tps-tas.dat"), "16 102.000 100.000 131.000\n", 'tps-tas.dat: clients, median, min, max');
like(slurp_file("$dir/ratio-ttas.dat"), qr/^16 [\d.]+ [\d.]+ [\d.]+\n$/, 'ratio-ttas.dat: clients, ratio, interval');
ok(!-e "$dir/ratio-tas.dat", 'no ratio data for the baseline');


# --- collapse: the split test --------------------------------------------------------
# One strategy, one data set per client count, the runs in a shuffled round
# order.  The test is calibrated at 1 % false alarms on single-peaked data
# at each number of runs, and needs 5 runs.
srand(900);
@rows = ();
my $bc = 0;
my %bif_kind;
sub add_bif
{
	my ($kind, @v) = @_;
	$bc++;
	my @r = shuffled(1 .. @v);
	my @t = map { sprintf('%.3f', $_) } @v;
	push @rows, [ 'tas', $bc, $r[$_], $t[$_] ] foreach 0 .. $#v;
	$bif_kind{$bc} = $kind;
	return $bc;
}
my @bif_exact = (
	[ [ 100, 200 ], 'f', 0, '2 runs, however far apart' ],
	[ [ 100, 100.5, 150, 151 ], 'f', 0, '4 runs in two groups: under 5 runs' ],
	[ [ 1000, 1001, 1002, 1500, 1501 ], 't', 3, '5 runs, 3 of them 33% lower' ],
	[ [ map { 1000 + 10 * $_ } 1 .. 9 ], 'f', 0, 'evenly spread runs' ],
	[ [ (1000) x 9 ], 'f', 0, 'all equal' ]);
my @bif_exact_c = map { add_bif('exact', @{ $_->[0] }) } @bif_exact;
# Clean splits, 1% noise: 3 of 9 runs at 60% of the tps, 4 of 8 at 70%,
# 3 of 5 at 130% (2 bad runs).
foreach (1 .. 20)
{
	add_bif('split 3', (map { 600 * (1 + 0.01 * gauss()) } 1 .. 3), map { 1000 * (1 + 0.01 * gauss()) } 1 .. 6);
}
foreach (1 .. 10)
{
	add_bif('split 4', (map { 700 * (1 + 0.01 * gauss()) } 1 .. 4), map { 1000 * (1 + 0.01 * gauss()) } 1 .. 4);
	add_bif('split 2', (map { 1300 * (1 + 0.01 * gauss()) } 1 .. 3), map { 1000 * (1 + 0.01 * gauss()) } 1 .. 2);
}
# The example's noise: 3 of 9 runs at 60%, 4% noise inside the groups (a
# spread of about 12%); and single-peaked runs at 12% noise, 9 and 5 runs.
foreach (1 .. 100)
{
	add_bif('noisy split', (map { 600 * exp(0.04 * gauss()) } 1 .. 3), map { 1000 * exp(0.04 * gauss()) } 1 .. 6);
}
foreach my $n ((9) x 200, (5) x 100)
{
	add_bif("single $n", map { 1000 * exp(0.12 * gauss()) } 1 .. $n);
}
($status, $out, $err, $p) = analyse(write_rows(\@rows), '--strategies', 'tas');
is($status, 0, 'collapse: the module succeeds') or diag($err);
foreach my $i (0 .. $#bif_exact)
{
	my ($v, $flag, $bad, $name) = @{ $bif_exact[$i] };
	is( join(' ', map { $p->{"tas/$bif_exact_c[$i]"}{$_} } qw(bifurcated bad_runs)),
		"$flag $bad",
		"collapse: $name: " . ($flag eq 't' ? "flagged, $bad bad runs" : 'not flagged'));
}
my (%flagged, %bad_right);
foreach (1 .. $bc)
{
	my $q = $p->{"tas/$_"};
	next unless ($q->{bifurcated} // '') eq 't';
	$flagged{ $bif_kind{$_} }++;
	$bad_right{ $bif_kind{$_} }++
	  if $bif_kind{$_} =~ /^split (\d)$/ && $q->{bad_runs} == $1;
}
is(($flagged{'split 3'} // 0) + ($flagged{'split 4'} // 0) + ($flagged{'split 2'} // 0),
	40, 'collapse: 40 clean splits (3 of 9 runs at 60%, 4 of 8 at 70%, 3 of 5 at 130%; 1% noise) all flagged');
is(($bad_right{'split 3'} // 0) + ($bad_right{'split 4'} // 0) + ($bad_right{'split 2'} // 0),
	40, 'collapse: and in each the lower group is the bad runs (3, 4, 2)');
# detection at the example's noise: 99 % in the simulation of the design
cmp_ok($flagged{'noisy split'} // 0, '>=', 90,
	'collapse: 3 of 9 runs at 60% with 4% noise inside the groups: flagged in '
	  . ($flagged{'noisy split'} // 0) . ' of 100');
# false alarms: Binomial(200, 1%) and Binomial(100, 1%) exceed 7 and 5 with
# probability under 0.2 %
cmp_ok($flagged{'single 9'} // 0, '<=', 7,
	'collapse: single-peaked, 9 runs at 12% noise: flagged in '
	  . ($flagged{'single 9'} // 0) . ' of 200 (calibrated at 1%)');
cmp_ok($flagged{'single 5'} // 0, '<=', 5,
	'collapse: single-peaked, 5 runs at 12% noise: flagged in '
	  . ($flagged{'single 5'} // 0) . ' of 100');

# The verdict: a strategy whose point splits (3 of 9 runs at 60%) against
# a clean baseline is "bimodal", never faster or slower, however clear its
# ratio; Fisher's exact test of 3 of 9 against 0 of 9 gives (84 + 84) / 816.
{
	my @low = (600, 601, 602);
	my $f = write_runs([ 'tas', 'ttas' ], [ 4, 16 ], 9,
		sub {
			my ($s, $c, $r) = @_;
			return 1000 + $r if $s eq 'tas';
			return $c == 16 && $r <= 3 ? $low[ $r - 1 ] : 1500 + $r;
		});
	my ($st, $o, $e, $q) = analyse($f, '--strategies', 'tas ttas');
	is( join(' ', map { $q->{"ttas/16"}{$_} } qw(bifurcated bad_runs verdict)),
		't 3 bimodal', 'collapse: the split point is bimodal, 3 bad runs');
	is(sprintf('%.4f', $q->{'ttas/16'}{fisher_p}), sprintf('%.4f', 168 / 816),
		'collapse: Fisher p of 3 of 9 against 0 of 9');
	is($q->{'ttas/4'}{verdict}, 'faster', 'collapse: the clean point keeps its verdict');
	like($o, qr/^\s+16 \| ttas\s+\|\s+3 of 9 \|\s+0 of 9 \|\s+0\.206$/m,
		'collapse: the report lists the split point with both counts and p');
}

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

# --- the correction for the number of comparisons -----------------------------
# 3 strategies x 4 client counts: 8 comparisons.  Bonferroni puts each ratio
# interval at 1 - 0.05 / 8 = 99.375 %: at 12 rounds [x(1), x(12)] (coverage
# 1 - 2/4096; [x(2), x(11)] would cover 1 - 26/4096 = 99.365 % only), and
# the bound on a false verdict is the sum of the 8 non-coverages, 0.39 %.
# With --correction none each is at 95 %: [x(3), x(10)].
{
	srand(2201);
	my @s3 = ('a', 'b', 'c');
	my $f = write_runs(\@s3, [ 1, 2, 8, 64 ], 12,
		sub { 1000 * exp(0.1 * gauss()) });
	my ($status, $out, $err, $p) = analyse($f, '--correction', 'bonferroni');
	is($status, 0, 'bonferroni: the module runs') or diag($err);
	like($out,
		qr/^comparisons: 8; Bonferroni: each ratio interval at 99\.38%, so that the chance of at least one false verdict in the study is at most 0\.39% \(the sum of the intervals' exact non-coverage\)$/m,
		'bonferroni: 8 comparisons, each at 99.38 %, the bound 0.39 %');
	is( join(' ', map { sprintf('%.6f', $p->{"b/$_"}{coverage}) } 1, 2, 8, 64),
		join(' ', (sprintf('%.6f', 1 - 2 / 4096)) x 4),
		'bonferroni: each interval is [x(1), x(12)], coverage 1 - 2/4096');
	my (undef, $out_none, undef, $pn) = analyse($f, '--correction', 'none');
	is(sprintf('%.6f', $pn->{'b/1'}{coverage}), sprintf("%.6f", 1 - 2 * 79 / 4096),
		'none: each interval at 95 %, [x(3), x(10)]');
	like($out_none, qr/^comparisons: 8; no correction: each ratio interval at 95%/m,
		'none: says there is no correction');

	# Null studies (all three strategies alike, 10 % noise, threshold 0, so
	# that any interval that excludes 1 is a false verdict): the share of
	# studies with a false verdict stays under the bound with the correction
	# and exceeds it without.
	my ($false_bonf, $false_none) = (0, 0);
	foreach my $k (1 .. 40)
	{
		my $null = write_runs(\@s3, [ 1, 8, 64 ], 12,
			sub { 1000 * exp(0.1 * gauss()) });
		my (undef, undef, undef, $pb) =
		  analyse($null, '--threshold', 0, '--correction', 'bonferroni');
		my (undef, undef, undef, $pz) =
		  analyse($null, '--threshold', 0, '--correction', 'none');
		$false_bonf++
		  if grep { $_->{verdict} =~ /^(faster|slower)$/ } values %$pb;
		$false_none++
		  if grep { $_->{verdict} =~ /^(faster|slower)$/ } values %$pz;
	}
	# with the correction: 6 intervals of 1 - 26/4096 each, a bound of 3.8 %
	# per study; 6 or more false studies of 40 has probability under 0.2 %.
	# Without: 6 of 96.1 %, about 21 % of the studies.
	cmp_ok($false_bonf, '<=', 5,
		"null studies with a false verdict, Bonferroni: $false_bonf of 40 (bound 3.8 %)");
	cmp_ok($false_none, '>', $false_bonf,
		"and more without the correction: $false_none of 40");
}

# --- drift and position ------------------------------------------------------------
# 6 rounds; the baseline's tps grows by 100 a round (1100 .. 1600); b runs
# first in odd rounds, 10 % faster there, and second in even rounds, as
# fast as the baseline.  Drift: (1500, 1600) over (1100, 1200) for a is
# 1550 / 1150; for b, (1650, 1600) over (1210, 1200) is 1625 / 1205.
{
	my $path = sprintf('%s/runs-%03d.csv', $dir, ++$n_csv);
	open(my $f, '>', $path) or die "$path: $!";
	print $f "strategy,clients,round,position,tps,seconds\n";
	foreach my $r (1 .. 6)
	{
		my $base = 1000 + 100 * $r;
		my $first = $r % 2;
		printf $f "a,1,%d,%d,%.3f,1.0\n", $r, $first ? 2 : 1, $base;
		printf $f "b,1,%d,%d,%.3f,1.0\n", $r, $first ? 1 : 2,
		  $base * ($first ? 1.1 : 1.0);
	}
	close($f);
	my ($status, $out) = analyse($path, '--strategies', 'a b');
	is($status, 0, 'drift and position: the module runs');
	like(
		$out,
		qr/^drift: median tps of the last third of the rounds over the first third, per point\n\s*clients \|\s+a \|\s+b\n[-+]+\n\s+1 \| 1\.348 \| 1\.349$/m,
		'drift: the last third over the first, per point (1550/1150, 1625/1205)');
	like(
		$out,
		qr/^\s*b\s+\|\s+1\.100 \(3\) \|\s+1\.000 \(3\)$/m,
		'position: b is 1.100 in its 3 rounds in position 1, 1.000 in position 2');
	my ($status2, $out2) = analyse(write_rows([ [ 'a', 1, 1, 100 ], [ 'b', 1, 1, 100 ] ]), '--strategies', 'a b');
	unlike($out2, qr/^position:/m, 'position: no table without a position column');
}

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

# The Williams design: for 2 to 6 strategies and each REPEAT that is a
# multiple of its period (n for even n, 2n for odd n), every strategy runs
# equally often in every position and right after every other strategy
# equally often; no warning then, and one naming the period otherwise.
sub order_err
{
	my ($out, $err);
	IPC::Run::run([ $stats, 'order', @_ ], '>', \$out, '2>', \$err) or die $err;
	return ([ map { [ split / / ] } split /\n/, $out ], $err);
}
my ($unbalanced, $warned_wrongly) = (0, 0);
foreach my $n (2 .. 6)
{
	my @names = map { "s$_" } 1 .. $n;
	my $period = $n % 2 ? 2 * $n : $n;
	foreach my $k (1 .. 3)
	{
		my ($rounds, $err) = order_err(100 + $n * 10 + $k, $k * $period, @names);
		$warned_wrongly++ if $err ne '';
		my (%pos, %after);
		foreach my $row (@$rounds)
		{
			$pos{"$row->[$_] $_"}++ foreach 0 .. $#$row;
			$after{"$row->[$_ - 1] $row->[$_]"}++ foreach 1 .. $#$row;
		}
		my @p = values %pos;
		my @a = values %after;
		$unbalanced++
		  unless @p == $n * $n
		  && !grep { $_ != $k * $period / $n } @p
		  and @a == $n * ($n - 1)
		  && !grep { $_ != $k * $period / $n } @a;
	}
}
is($unbalanced, 0,
	'order: over whole periods every strategy has every position and every predecessor equally often (2 to 6 strategies, 1 to 3 periods)'
);
is($warned_wrongly, 0, 'order: no warning for a whole number of periods');
my (undef, $err9) = order_err(411481, 9, @three);
like(
	$err9,
	qr/^study_stats: warning: 9 rounds are not a multiple of 6, the period of the balanced order for 3 strategies: over the last 3 rounds the strategies' predecessors are not balanced; use a multiple of 6$/m,
	'order: 9 rounds of 3 strategies get a warning naming the period and what is unbalanced'
);
my (undef, $err8) = order_err(411481, 8, @three);
like($err8, qr/last 2 rounds the strategies' positions and predecessors are not balanced/,
	'order: and 8 rounds one about positions too');
my ($rounds9v, $err9v) = order_err('--noun', 'variant', 411481, 9, @three);
my ($rounds9) = order_err(411481, 9, @three);
like($err9v, qr/balanced order for 3 variants: over the last 3 rounds the variants' predecessors/,
	'order --noun variant: the warning speaks of variants');
is(join(';', map { "@$_" } @$rounds9v), join(';', map { "@$_" } @$rounds9),
	'order --noun variant: and the order is the same');

# client counts: a permutation per round, replayed by the seed, and not
# the same order in every round
sub clients
{
	my ($out, $err);
	IPC::Run::run([ $stats, 'clients', @_ ], '>', \$out, '2>', \$err) or die $err;
	return [ map { [ split / / ] } split /\n/, $out ];
}
my $co = clients(411481, 12, 1, 2, 8, 64);
is(scalar(@$co), 12, 'clients: one line per round');
is( scalar(grep { join(' ', sort { $a <=> $b } @$_) ne '1 2 8 64' } @$co),
	0, 'clients: each round runs every client count once');
is_deeply(clients(411481, 12, 1, 2, 8, 64), $co, 'clients: the same seed replays it');
my %firsts = map { $_->[0] => 1 } @$co;
cmp_ok(scalar(keys %firsts), '>', 1,
	'clients: not the same client count first in every round');

done_testing();
