"""Tests of lockstudy.stats on synthetic studies, without a server.

Every expected value is computed here independently of the module (the
fixture exact: ranks and coverages by exact integer binomials and
integer counts of the signed-rank statistic, medians, Walsh averages,
Fisher's test, the split statistic by brute force), or is a fact of the
data's construction.  They prove that:
  - the baseline's tps interval is the order-statistics one, and every
    ratio is the Hodges-Lehmann estimate with the signed-rank interval of
    its log ratios, for every number of rounds from 3 to 30, with its
    exact coverage; below the minimum rounds it is min-max, no verdict;
  - over 1000 null data sets at threshold 0 the rate of "faster" and of
    "slower" verdicts is the interval's exact one, within binomial bounds;
  - on random data sets every median, interval, coverage and verdict is
    the one computed here;
  - ratios are paired within a round, so that drift cancels;
  - ties, the threshold and the verdicts (equivalent within it, not
    resolved), the signed-rank distribution at 1024 rounds and more, runs
    at 0 tps counted, the comparisons, drift and position with their null
    ranges.
What the rounds resolve and the rounds that would show equivalence are
test_stats_resolves.py's, the collapse test is in test_collapse.py, the
simulations of the targets of the method in test_simulation.py.
"""

import math
import statistics
from fractions import Fraction

import numpy
import pytest
from scipy import stats as scipy_stats

from lockstudy import stats

THREE = ["tas", "ttas_spin", "ttas"]
CLIENTS = [1, 2, 8, 64]


def test_exact_ranks_are_the_published_ones(exact):
    # the independent computation against published tables of the ranks
    assert {n: exact.order_ci(n)[0] for n in (6, 8, 9, 17, 20, 30)} == \
        {6: 1, 8: 1, 9: 2, 17: 5, 20: 6, 30: 10}


@pytest.mark.parametrize("confidence", ["9/10", "19/20", "99/100", "199/200"])
def test_min_rounds(confidence):
    level = Fraction(confidence)
    # the fewest n whose min-max interval, of coverage 1 - 2 / 2^n, reaches
    # the level
    want = min(n for n in range(1, 64) if 1 - Fraction(2, 2 ** n) >= level)
    assert stats.min_rounds(float(level)) == want


def test_median_ci_every_n(exact):
    rng = numpy.random.default_rng(1)
    for n in range(3, 31):
        values = list(rng.permutation(n) * 7.5 + 100)
        med, lo, hi, cov = stats.median_ci(values, 0.95)
        assert (med, lo, hi) == pytest.approx(exact.expect_ci(values)[:3])
        assert cov == pytest.approx(float(exact.order_ci(n)[1]), abs=1e-12)


def test_signed_rank_distribution(exact):
    # the published critical values of the signed-rank test (two-sided
    # 5%: the largest w with P(W <= w) <= 0.025) and the brute force
    assert {n: max(w for w, p in enumerate(stats.signed_rank_cdf(n))
                   if p <= 0.025) for n in (6, 10, 15, 20)} == \
        {6: 0, 10: 8, 15: 25, 20: 52}
    for n in range(1, 21):
        counts = exact.signed_rank_counts(n)
        cum = [sum(counts[:w + 1]) / 2 ** n for w in range(len(counts))]
        assert list(stats.signed_rank_cdf(n)) == pytest.approx(cum,
                                                               abs=1e-15)


@pytest.mark.parametrize("level", ["19/20", "119/120", "199/200"])
def test_hl_ci_every_n(exact, level):
    rng = numpy.random.default_rng(2)
    for n in range(2, 31):
        values = list(rng.standard_normal(n) * 0.1)
        est, lo, hi, cov = stats.hl_ci(values, float(Fraction(level)))
        w_est, w_lo, w_hi, w_cov, _ = exact.signed_rank_ci(values,
                                                          Fraction(level))
        assert (est, lo, hi) == pytest.approx((w_est, w_lo, w_hi),
                                              rel=1e-12, abs=1e-15), n
        assert cov == pytest.approx(float(w_cov), abs=1e-12), n


def test_cv_and_ratio_noise():
    rng = numpy.random.default_rng(2)
    values = list(1000 + 50 * rng.standard_normal(12))
    assert stats.cv(values) == pytest.approx(
        statistics.stdev(values) / statistics.fmean(values), rel=1e-12)
    assert math.isnan(stats.cv([5.0]))
    ratios = [v / 1000 for v in values]
    assert stats.ratio_noise(ratios) == pytest.approx(
        statistics.stdev([math.log(r) for r in ratios]), rel=1e-12)
    assert math.isnan(stats.ratio_noise([1.1]))


def _expected_ratio(exact, ratios, confidence=Fraction(19, 20)):
    """The ratio, interval, coverage and whether it reaches the level,
    from the log ratios by the exact signed-rank interval."""
    est, lo, hi, cov, enough = exact.signed_rank_ci(
        [math.log(r) for r in ratios], confidence)
    return math.exp(est), math.exp(lo), math.exp(hi), float(cov), enough


def _mean_interval(ratios, confidence):
    """The Student t interval of the mean log ratio, as ratios."""
    logs = [math.log(r) for r in ratios]
    m, n = statistics.fmean(logs), len(logs)
    half = scipy_stats.t.ppf(1 - (1 - confidence) / 2, n - 1) \
        * statistics.stdev(logs) / math.sqrt(n)
    return math.exp(m - half), math.exp(m + half)


def test_ranks_and_coverage_3_to_30(exact):
    # One point per number of rounds n (clients = n).  The baseline's tps
    # are 1000 (100 + 2 j), j a permutation of 1..n over the rounds: a
    # drift of up to 60%; ttas's are those times (1000 + i) / 1000, i
    # another permutation: the ratios are 1.001 .. 1.00n, in an order
    # unrelated to the drift's.
    rng = numpy.random.default_rng(700)
    tps, ratios = {}, {}
    for n in range(3, 31):
        j, i = rng.permutation(n) + 1, rng.permutation(n) + 1
        for r in range(n):
            tps[("tas", n, r + 1)] = 1000.0 * (100 + 2 * j[r])
            tps[("ttas", n, r + 1)] = float((100 + 2 * j[r]) * (1000 + i[r]))
        ratios[n] = [tps[("ttas", n, r + 1)] / tps[("tas", n, r + 1)]
                     for r in range(n)]
    points = {(p.variant, p.clients): p
              for p in stats.analyse(tps, ["tas", "ttas"], 0, 0.95)}
    for n in range(3, 31):
        k, coverage, enough = exact.order_ci(n)
        base, other = points[("tas", n)], points[("ttas", n)]
        assert (base.median, base.tps_ci_low, base.tps_ci_high) == \
            (1000 * (100 + n + 1), 1000 * (100 + 2 * k),
             1000 * (100 + 2 * (n + 1 - k))), n
        assert base.coverage == pytest.approx(float(coverage), abs=1e-12)
        ratio, lo, hi, cov, enough = _expected_ratio(exact, ratios[n])
        assert (other.ratio, other.ci_low, other.ci_high) == \
            pytest.approx((ratio, lo, hi), rel=1e-12), n
        assert other.coverage == pytest.approx(cov, abs=1e-12)
        assert other.verdict == ("faster" if enough else "not resolved")
        assert enough == (n >= 6)


def test_null_false_verdict_rate(exact):
    # 1000 data sets of 9 rounds, one per client count: tas and ttas alike,
    # 2% noise each over a 15% drift per round that they share.  The log
    # ratios are symmetric about 0, so "faster" (w(k) > 0) has probability
    # P(W <= k - 1) exactly, and so has "slower".  Each count is checked
    # against binomial bounds whose tails hold 2.5e-8 each.
    rng = numpy.random.default_rng(600)
    sets, rounds = 1000, 9
    drift = 1 + 0.15 * rng.standard_normal((sets, rounds))
    noise = 1 + 0.02 * rng.standard_normal((2, sets, rounds))
    tps = {(s, c + 1, r + 1): float(abs(100000 * drift[c, r]
                                        * noise[i, c, r]))
           for i, s in enumerate(("tas", "ttas"))
           for c in range(sets) for r in range(rounds)}
    points = [p for p in stats.analyse(tps, ["tas", "ttas"], 0, 0.95)
              if p.variant == "ttas"]
    # counted by interval: a collapse may change the verdict
    faster = sum(p.ci_low > 1 for p in points)
    slower = sum(p.ci_high < 1 for p in points)
    counts = exact.signed_rank_counts(rounds)
    k = 1
    while 1 - Fraction(2 * sum(counts[:k + 1]), 2 ** rounds) >= \
            Fraction(19, 20):
        k += 1
    side = Fraction(sum(counts[:k]), 2 ** rounds)
    narrow = Fraction(sum(counts[:k + 4]), 2 ** rounds)
    assert side == Fraction(10, 512)
    lo_all, hi_all = exact.binom_bounds(sets, 2 * side, 2.5e-8)
    lo_side, hi_side = exact.binom_bounds(sets, side, 2.5e-8)
    assert lo_all <= faster + slower <= hi_all
    assert lo_side <= faster <= hi_side
    assert lo_side <= slower <= hi_side
    # the power of these checks: they pass an interval 4 ranks (of the 45
    # Walsh averages) narrower with a negligible probability
    assert exact.binom_mass(sets, 2 * narrow, lo_all, hi_all) < 1e-6


@pytest.mark.parametrize("threshold", [0, 1, 2, 5])
def test_random_points(exact, threshold):
    # 80 data sets (one per client count) of 3 to 30 rounds, random
    # effects within +-10%, noise 0.5% to 10.5% over a 20% drift
    rng = numpy.random.default_rng(400 + threshold)
    tps, values = {}, {}
    for c in range(1, 81):
        n = int(rng.integers(3, 31))
        effect = dict(tas=1, ttas_spin=rng.uniform(0.9, 1.1),
                      ttas=rng.uniform(0.9, 1.1))
        noise = rng.uniform(0.005, 0.105)
        for r in range(1, n + 1):
            drift = 1 + 0.2 * rng.standard_normal()
            for s in THREE:
                t = round(1000 * effect[s] * abs(
                    drift * (1 + noise * rng.standard_normal())) + 1, 3)
                tps[(s, c, r)] = t
                values.setdefault((s, c), []).append(t)
    seen = {}
    for p in stats.analyse(tps, THREE, threshold / 100, 0.95):
        mine = values[(p.variant, p.clients)]
        if p.variant == "tas":
            med, lo, hi, cov, _ = exact.expect_ci(mine)
            assert (p.median, p.tps_ci_low, p.tps_ci_high,
                    p.coverage) == pytest.approx((med, lo, hi, cov),
                                                    rel=1e-12)
            continue
        base = values[("tas", p.clients)]
        ratio, lo, hi, cov, enough = _expected_ratio(
            exact, [a / b for a, b in zip(mine, base)])
        assert (p.ratio, p.ci_low, p.ci_high, p.coverage) == \
            pytest.approx((ratio, lo, hi, cov), rel=1e-12)
        mean = _mean_interval([a / b for a, b in zip(mine, base)], 0.95)
        assert (p.mean_low, p.mean_high) == pytest.approx(mean, rel=1e-9)
        want = exact.verdict(lo, hi, threshold / 100, enough, mean)
        # a point whose rounds fail the check (test_serial.py) gives none
        assert p.verdict in ((stats.WITHHELD,) if p.dependent
                             else (want, "bimodal"))
        seen[want] = seen.get(want, 0) + 1
    # the data sets span all verdicts (of the intervals, withheld or not)
    assert seen.get("faster", 0) > 5 and seen.get("slower", 0) > 5
    assert seen.get("not resolved", 0) > 20


def test_drift_cancels(study):
    # a 25% drift from round to round, shared by the variants of a round;
    # ttas 5% faster, ttas_spin 5% slower, 0.3% noise: only ratios within
    # a round resolve the 5%, the tps intervals overlap widely
    rng = numpy.random.default_rng(12)
    drift = {(c, r): 1 + 0.25 * rng.standard_normal()
             for c in CLIENTS for r in range(1, 10)}
    effect = dict(tas=1, ttas_spin=0.95, ttas=1.05)
    tps = study.grid(THREE, CLIENTS, 9, lambda s, c, r: 1000 * c * effect[s]
                     * drift[(c, r)] * (1 + 0.003 * rng.standard_normal()))
    p = {(q.variant, q.clients): q
         for q in stats.analyse(tps, THREE, 0.02, 0.95)}
    for c in CLIENTS:
        base = p[("tas", c)]
        assert p[("ttas", c)].tps_ci_low < base.tps_ci_high
        assert p[("ttas_spin", c)].tps_ci_high > base.tps_ci_low
        assert p[("ttas", c)].verdict == "faster"
        assert p[("ttas_spin", c)].verdict == "slower"
        assert 1.04 <= p[("ttas", c)].ci_low <= p[("ttas", c)].ci_high \
            <= 1.06
        assert 0.94 <= p[("ttas_spin", c)].ci_low \
            <= p[("ttas_spin", c)].ci_high <= 0.96


@pytest.mark.parametrize("permille, want", [
    # all ratios 1.05: the interval [1.05, 1.05]
    ([1050] * 9, "1.050 1.050 faster"),
    # 1.00 in 4 of 9 rounds, 1.10 in the rest: 10 of the 45 Walsh
    # averages are 1, the interval [w(6), w(40)] reaches 1
    ([1000, 1000, 1000, 1000, 1100, 1100, 1100, 1100, 1100],
     "1.000 1.100 not resolved"),
    # 1.00 in 2 of 9 rounds: 3 Walsh averages at 1, w(6) above
    ([1000, 1000, 1100, 1100, 1100, 1100, 1100, 1100, 1100],
     "1.049 1.100 faster"),
])
def test_ties(exact, permille, want):
    # ratios in permille, 9 rounds in a shuffled order, over a baseline
    # drifting by 3% steps
    rng = numpy.random.default_rng(800)
    j, q = rng.permutation(9) + 1, rng.permutation(permille)
    tps = {}
    for r in range(9):
        tps[("tas", 1, r + 1)] = 1000.0 * (100 + 3 * j[r])
        tps[("ttas", 1, r + 1)] = float((100 + 3 * j[r]) * q[r])
    p = stats.analyse(tps, ["tas", "ttas"], 0, 0.95)[1]
    assert "%.3f %.3f %s" % (p.ci_low, p.ci_high, p.verdict) == want


def test_all_equal(study):
    tps = study.grid(["tas", "ttas"], [5], 9, lambda s, c, r: 1000)
    base, other = stats.analyse(tps, ["tas", "ttas"], 0, 0.95)
    assert (base.median, base.tps_ci_low, base.tps_ci_high,
            base.cv, base.bifurcated) == (1000, 1000, 1000, 0, False)
    assert (other.ratio, other.ci_low, other.ci_high,
            other.verdict, other.ratio_noise) == \
        (1, 1, 1, "not resolved", 0)


def test_identical_variants(study):
    # exactly the same tps within each round, 20% drift between rounds
    rng = numpy.random.default_rng(11)
    drift = {(c, r): 1 + 0.2 * rng.standard_normal()
             for c in CLIENTS for r in range(1, 10)}
    tps = study.grid(THREE, CLIENTS, 9,
                     lambda s, c, r: 1000 * c * drift[(c, r)])
    points = stats.analyse(tps, THREE, 0.02, 0.95)
    assert [(p.variant, p.verdict) for p in points] == \
        [("tas", "baseline")] * 4 + \
        [(s, "equivalent (±2%)") for s in THREE[1:] for _ in CLIENTS]
    # no noise: any difference beyond the threshold is resolved, and the
    # fewest rounds that reach the level show equivalence
    assert all((p.ratio, p.ci_low, p.ci_high, p.resolves,
                p.rounds_equivalent) == pytest.approx((1, 1, 1, 0.02, 6))
               for p in points[4:])
    assert not any(p.bifurcated for p in points)


@pytest.mark.parametrize("rounds", [6, 9, 15])
def test_clear_difference(study, rounds):
    # 20% faster and 20% slower, 1% noise over a 10% drift
    rng = numpy.random.default_rng(200 + rounds)
    drift = {(c, r): 1 + 0.1 * rng.standard_normal()
             for c in CLIENTS for r in range(1, rounds + 1)}
    effect = dict(tas=1, ttas_spin=1.2, ttas=0.8)
    tps = study.grid(THREE, CLIENTS, rounds, lambda s, c, r: 1000 * c
                     * effect[s] * drift[(c, r)]
                     * (1 + 0.01 * rng.standard_normal()))
    for p in stats.analyse(tps, THREE, 0.02, 0.95):
        if p.variant == "tas":
            continue
        want = effect[p.variant]
        assert p.verdict == ("faster" if want > 1 else "slower")
        assert abs(p.ratio - want) <= 0.03
        assert p.ci_low <= want * 1.01 and p.ci_high >= want * 0.99


def test_too_few_rounds(study):
    # 5 rounds of a 30% difference: min-max, coverage 1 - 2/2^5, no verdict
    order = {1: 3, 2: 1, 3: 5, 4: 2, 5: 4}      # no trend over the rounds
    tps = study.grid(THREE, [8], 5, lambda s, c, r: (
        1000 if s == "tas" else 1300) + order[r])
    p = stats.analyse(tps, THREE, 0.02, 0.95)[1]
    # the ratios 1 + 300 / (1000 + j)
    assert (p.ci_low, p.ci_high) == pytest.approx((1305 / 1005,
                                                         1301 / 1001))
    assert p.coverage == pytest.approx(1 - 2 / 2 ** 5, abs=1e-12)
    assert p.verdict == "not resolved"
    # 5 rounds resolve nothing, whatever the noise
    assert p.resolves is None and p.rounds_equivalent >= 6


def test_threshold(study):
    # a clear 1.5% difference: within the default 2%, beyond 1%
    tps = study.grid(["tas", "ttas"], [2], 9, lambda s, c, r: (
        1000 if s == "tas" else 1015) * (1 + r / 1000))
    p = stats.analyse(tps, ["tas", "ttas"], 0.02, 0.95)[1]
    assert p.verdict == "equivalent (±2%)"
    assert stats.analyse(tps, ["tas", "ttas"], 0.01, 0.95)[1].verdict \
        == "faster"


@pytest.mark.parametrize("low, high, threshold, enough, want", [
    (0.99, 1.2, 0, True, "not resolved"),       # holds 1
    (1.0, 1.2, 0, True, "not resolved"),        # reaches 1 at an end
    (1.01, 1.2, 0, True, "faster"),
    (1.01, 1.2, 0.02, True, "not resolved"),    # reaches into the threshold
    (1.03, 1.2, 0.02, True, "faster"),
    (0.8, 0.97, 0.02, True, "slower"),
    (0.8, 0.99, 0.02, True, "not resolved"),
    (1.5, 2.0, 0.02, False, "not resolved"),    # coverage below the level
    (0.985, 1.015, 0.02, True, "equivalent (±2%)"),     # inside
    (0.98, 1.015, 0.02, True, "not resolved"),  # reaches the bound
    (0.99, 1.03, 0.05, True, "equivalent (±5%)"),
    (0.99, 1.01, 0.02, False, "not resolved"),  # inside, below the level
    (1.0, 1.0, 0, True, "not resolved"),        # ±0 is never shown
])
def test_verdict(low, high, threshold, enough, want):
    assert stats.verdict(low, high, threshold, enough) == want


def test_signed_rank_cdf_many_rounds():
    # 2^n overflows a double from n = 1024: the distribution is still
    # one, and near its centre it is the normal approximation's
    for n in (1024, 1100):
        cdf = stats.signed_rank_cdf(n)
        mean, sd = n * (n + 1) / 4, math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
        assert cdf[-1] == pytest.approx(1, abs=1e-12)
        for w in (int(mean - 2 * sd), int(mean), int(mean + sd)):
            assert cdf[w] == pytest.approx(
                statistics.NormalDist(mean, sd).cdf(w + 0.5), abs=1e-4)
    x = numpy.random.default_rng(7).standard_normal(1100)
    est, lo, hi, cov = stats.hl_ci(x, 0.95)
    assert lo < est < hi and cov == pytest.approx(0.95, abs=1e-3)


def test_pairs(study):
    tps = study.grid(["a", "b"], [1, 2], 9, lambda s, c, r: 1000 + r)
    tps[("a", 2, 4)] = 0.0          # a baseline run at 0 tps pairs nothing
    del tps[("a", 1, 9)]            # nor does a missing one
    tps.update({("b", 64, r): 5000.0 for r in (1, 2)})
    p = {(q.variant, q.clients): q
         for q in stats.analyse(tps, ["a", "b"], 0.02, 0.95)}
    assert p[("b", 1)].pairs == 8 and p[("b", 2)].pairs == 8
    assert p[("b", 1)].n == 9
    assert (p[("b", 64)].verdict, p[("b", 64)].pairs,
            p[("b", 64)].ratio, p[("b", 64)].fisher_p) == \
        ("no pairs", 0, None, None)
    assert [(q.variant, q.clients) for q in p.values()] == \
        [("a", 1), ("a", 2), ("b", 1), ("b", 2), ("b", 64)]


def test_variant_at_zero_tps(study):
    # a variant that ran at 0 tps in some rounds: those rounds pair
    # nothing, and a variant at 0 tps in every round has no pairs (no
    # crash on a log of 0)
    tps = study.grid(["a", "b", "c"], [1], 9, lambda s, c, r: 1000 + r)
    for r in (2, 5):
        tps[("b", 1, r)] = 0.0
    for r in range(1, 10):
        tps[("c", 1, r)] = 0.0
    p = {q.variant: q for q in stats.analyse(tps, ["a", "b", "c"],
                                                0.02, 0.95)}
    assert p["b"].pairs == 7 and p["b"].ratio == pytest.approx(1)
    assert (p["c"].pairs, p["c"].verdict) == (0, "no pairs")
    # and they are counted, not dropped silently
    assert (p["a"].zero_runs, p["b"].zero_runs, p["c"].zero_runs) == \
        (0, 2, 9)


def test_comparisons():
    keys = [("a", 1, 1), ("b", 1, 1), ("c", 1, 2), ("a", 2, 1), ("b", 2, 1),
            ("d", 1, 1)]
    # (b, 1) and (b, 2) pair with a; c ran in another round; d is not
    # a variant of the study
    assert stats.comparisons(keys, ["a", "b", "c"]) == 2
    assert stats.comparisons(keys, ["a"]) == 0


def test_no_mutable_module_globals():
    # the constants are numbers, strings and tuples: no state between calls
    for name, value in vars(stats).items():
        if name.isupper():
            assert isinstance(value, (int, float, str, tuple)), name
