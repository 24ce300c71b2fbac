# Copyright (c) 2026, pg_lockstat developers
#
# The statistics that the tests of bench/study_stats.py compute on their
# own, independently of the module (t/030, t/035): gaussian noise, the
# order-statistics interval of a median by exact integer arithmetic, and
# binomial acceptance bounds for rates over many simulated data sets.

package LockStatTest::Stats;

use strict;
use warnings FATAL => 'all';

use Exporter qw(import);
use List::Util qw(sum);
our @EXPORT = qw(gauss below_rank order_ci median_of expect_ci binom_pmf binom_bounds);

# Binomial coefficients C(n, i), n <= 30, exact in integers.
my @choose = ([1]);
foreach my $n (1 .. 30)
{
	$choose[$n] =
	  [ map { ($_ > 0 ? $choose[ $n - 1 ][ $_ - 1 ] : 0) + ($_ < $n ? $choose[ $n - 1 ][$_] : 0) }
		  0 .. $n ];
}

# A gaussian deviate (Box-Muller), for the synthetic noise.
sub gauss
{
	my ($u1, $u2) = (1 - rand(), rand());
	return sqrt(-2 * log($u1)) * cos(6.283185307179586 * $u2);
}

# P(B <= k - 1) for B ~ Binomial(n, 1/2), as the integer sum_{i<k} C(n, i)
# over 2^n.
sub below_rank
{
	my ($n, $k) = @_;
	return sum(0, map { $choose[$n][$_] } 0 .. $k - 1);
}

# The order-statistics interval of the median at 95% for n values: the
# largest k with k <= n + 1 - k and coverage 1 - 2 P(B <= k - 1) >= 0.95,
# i.e. 40 sum_{i<k} C(n, i) <= 2^n in integers; k = 1 (min-max) when even
# k = 1 falls short.  Returns (k, coverage, whether it reaches 95%).
sub order_ci
{
	my ($n) = @_;
	my $k = 1;
	$k++ while $k + 1 <= $n - $k && 40 * below_rank($n, $k + 1) <= 2**$n;
	my $tail = below_rank($n, $k);
	return ($k, (2**$n - 2 * $tail) / 2**$n, 40 * $tail <= 2**$n ? 1 : 0);
}

sub median_of
{
	my @x = sort { $a <=> $b } @_;
	my $n = @x;
	return $n % 2 ? $x[ ($n - 1) / 2 ] : ($x[ $n / 2 - 1 ] + $x[ $n / 2 ]) / 2;
}

# Median, interval, coverage and whether it reaches 95%, of the values.
sub expect_ci
{
	my @x = sort { $a <=> $b } @_;
	my ($k, $coverage, $enough) = order_ci(scalar @x);
	return (median_of(@x), $x[ $k - 1 ], $x[ @x - $k ], $coverage, $enough);
}

# The probabilities of 0 .. N under Binomial(N, p).
sub binom_pmf
{
	my ($N, $p) = @_;
	my @pmf = ((1 - $p)**$N);
	push @pmf, $pmf[-1] * ($N - $#pmf) / ($#pmf + 1) * $p / (1 - $p)
	  while @pmf <= $N;
	return @pmf;
}

# The acceptance interval [L, U] of Binomial(N, p): P(X < L) and P(X > U)
# each at most $tail.
sub binom_bounds
{
	my ($N, $p, $tail) = @_;
	my @pmf = binom_pmf($N, $p);
	my ($L, $U, $acc) = (0, $N, 0);
	$acc += $pmf[ $L++ ] while $acc + $pmf[$L] <= $tail;
	$acc = 0;
	$acc += $pmf[ $U-- ] while $acc + $pmf[$U] <= $tail;
	return ($L, $U);
}

1;
