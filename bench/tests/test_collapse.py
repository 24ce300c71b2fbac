"""Tests of the collapse test of lockstudy.stats, without a server: the
residuals after each round's effect, the split statistic against a brute
force, its threshold's calibration on several shapes of single-peaked
noise, the bad runs of both sides counted by one rule, and when the
verdict becomes bimodal.  The rates over whole simulated studies are in
test_simulation.py."""

import math
from fractions import Fraction

import numpy
import pytest

from lockstudy import collapse, stats


def test_round_residuals_two_variants():
    # with two variants, a residual is the paired log ratio, centred on
    # each side's median: the baseline's the ratio's negative
    rng = numpy.random.default_rng(1)
    logs = rng.standard_normal((2, 9))
    res = collapse.round_residuals(logs)
    centred = logs - numpy.median(logs, axis=1, keepdims=True)
    assert res[1] == pytest.approx(centred[1] - centred[0], abs=1e-12)
    assert res[0] == pytest.approx(centred[0] - centred[1], abs=1e-12)


def test_round_residuals_remove_a_slow_round():
    # a round 20% slow for every variant leaves the residuals as they
    # were, but for a constant per variant (its median moved), which the
    # split statistic does not see
    rng = numpy.random.default_rng(2)
    logs = 0.05 * rng.standard_normal((3, 12))
    slow = logs.copy()
    slow[:, [2, 7]] += math.log(0.8)
    diff = collapse.round_residuals(slow) - collapse.round_residuals(logs)
    assert diff == pytest.approx(diff[:, :1] + numpy.zeros((3, 12)),
                                 abs=1e-12)
    g = [collapse.split_statistic(numpy.sort(collapse.round_residuals(x),
                                          axis=1))[0] for x in (logs, slow)]
    assert g[0] == pytest.approx(g[1], rel=1e-9)


def test_round_residuals_keep_a_variants_bad_runs_its_own():
    # three variants: one's bad runs do not move the others' residuals
    # beyond half their depth, and its own keep their full depth
    logs = numpy.zeros((3, 12))
    logs[1, [0, 4, 8]] = math.log(0.6)
    res = collapse.round_residuals(logs)
    assert res[1, [0, 4, 8]] == pytest.approx([math.log(0.6)] * 3)
    assert numpy.all(res[[0, 2]] >= 0)


def test_round_residuals_missing_runs():
    # a run missing (nan) stays missing; a round where only one variant
    # ran has no effect to remove; one variant alone: only centred
    logs = numpy.array([[1.0, 2.0, 3.0, numpy.nan],
                        [1.5, 2.5, numpy.nan, 0.0]])
    res = collapse.round_residuals(logs)
    assert math.isnan(res[0, 3]) and math.isnan(res[1, 2])
    assert res[0, 2] == pytest.approx(3.0 - 2.0)
    assert res[1, 3] == pytest.approx(0.0 - 1.5)
    solo = collapse.round_residuals(numpy.array([[1.0, 2.0, 4.0]]))
    assert solo[0] == pytest.approx([-1.0, 0.0, 2.0])


def test_split_statistic_is_the_brute_force_one(exact):
    rng = numpy.random.default_rng(4)
    for n in (5, 6, 9, 14, 30):
        rows = numpy.sort(rng.standard_normal((20, n)) * rng.uniform(
            0.1, 3, (20, 1)) + numpy.where(rng.random((20, n)) < 0.3, 2, 0),
            axis=1)
        g, k = collapse.split_statistic(rows)
        want = [exact.split_g(row) for row in rows]
        assert list(g) == pytest.approx([w[0] for w in want], rel=1e-9)
        assert list(k) == [w[1] for w in want]
    # no spread inside the groups: infinitely apart, or not at all
    g, k = collapse.split_statistic([[1.0, 1, 2, 2, 2], [3.0, 3, 3, 3, 3]])
    assert (list(g), list(k)) == ([math.inf, 0.0], [2, 2])


@pytest.mark.parametrize("variants", [1, 2, 3])
def test_threshold_calibration(variants):
    # single-peaked runs of another seed, of each shape the threshold is
    # taken over, exceed it in at most about 1% of the points: 4000 points
    # each, Binomial(4000, 1%) exceeds 65 with probability under 1e-4; and
    # the shape that sets it comes near 1%
    for n in (5, 12):
        t = collapse.bimodal_threshold(n, variants)
        rates = []
        for draws in collapse.null_noise((4000, variants, n), 424242 + n):
            res = collapse.round_residuals(draws)[:, 0, :]
            g, _ = collapse.split_statistic(numpy.sort(res, axis=1))
            rates.append(int(numpy.sum(g > t)))
        assert max(rates) <= 65, (n, variants, rates)
        assert max(rates) >= 15, (n, variants, rates)


def test_threshold_is_cached():
    collapse.bimodal_threshold.cache_clear()
    first = collapse.bimodal_threshold(7, 2)
    assert collapse.bimodal_threshold(7, 2) == first
    assert collapse.bimodal_threshold.cache_info().hits == 1
    # more variants than it is simulated for reuse the largest
    assert collapse.bimodal_threshold(7, 40) == collapse.bimodal_threshold(
        7, collapse.BIMODAL_MAX_VARIANTS)


@pytest.mark.parametrize("values, want", [
    ([100, 200], (False, 0)),                       # 2 runs, however apart
    ([100, 100.5, 150, 151], (False, 0)),           # under 5 runs
    ([1000, 1001, 1002, 1500, 1501, 1502], (True, 3)),   # 3 of 6 lower
    ([1000, 1001, 1500, 1501, 1502], (True, 2)),    # 2 of 5 lower
    ([1000, 1001, 1002, 1500, 1501], (False, 0)),   # 3 of 5: the majority
    ([1000 + 10 * i for i in range(1, 10)], (False, 0)),  # evenly spread
    ([1000] * 9, (False, 0)),                       # all equal
    ([0, 1, 2, 1000, 1001, 1002], (False, 0)),      # a run at 0 tps
])
def test_bimodal_cases(values, want):
    assert collapse.bimodal(values) == want
    # the test is of log tps: it does not depend on the scale
    assert collapse.bimodal([7.5 * v for v in values]) == want


def test_collapse_boundary():
    flag, boundary = collapse.collapse([-0.5, -0.52, 0.0, 0.01, -0.01, 0.02,
                                     0.0, -0.02, 0.01])
    assert flag and boundary == pytest.approx((-0.5 - 0.02) / 2)
    flag, boundary = collapse.collapse([0.0, 0.01, -0.01, 0.02])
    assert not flag and math.isnan(boundary)


def _study(study, low, rounds=12, noise=0.01, slow=(), seed=5,
           variants=("tas", "ttas")):
    """Two or more variants at one client count, 1% noise; low maps a
    variant to the rounds it runs at 60% in; the rounds of slow run at
    80% for every variant."""
    rng = numpy.random.default_rng(seed)

    def tps(s, c, r):
        t = 1000 * math.exp(noise * rng.standard_normal())
        t *= 0.6 if r in low.get(s, ()) else 1
        return t * (0.8 if r in slow else 1)
    return study.grid(list(variants), [8], rounds, tps)


def _points(tps, variants=("tas", "ttas")):
    return {p.variant: p for p in stats.analyse(tps, list(variants),
                                                   0.02, 0.95)}


def test_a_variants_collapse_by_one_rule(study, exact):
    # 5 of 12 rounds low for ttas: its bad runs 5, the baseline's 0 below
    # the same boundary; Fisher's one-sided p under 0.05: bimodal
    p = _points(_study(study, {"ttas": (1, 3, 5, 7, 9)}))
    t = p["ttas"]
    assert (t.bifurcated, t.bad_runs, t.base_bad_runs,
            t.verdict) == (True, 5, 0, "bimodal")
    assert t.fisher_p == pytest.approx(
        float(exact.fisher_greater(5, 7, 0, 12)))
    assert not p["tas"].bifurcated


def test_a_collapse_that_does_not_differ_keeps_the_verdict(study, exact):
    # 3 of 12 low: found, but 3 of 12 against 0 of 12 (p = 0.22) is no
    # difference in how often they collapse; the verdict stays, with the
    # bad runs
    p = _points(_study(study, {"ttas": (2, 6, 10)}))
    t = p["ttas"]
    assert (t.bifurcated, t.bad_runs, t.base_bad_runs) == \
        (True, 3, 0)
    assert t.fisher_p == pytest.approx(
        float(exact.fisher_greater(3, 9, 0, 12)))
    assert exact.fisher_greater(3, 9, 0, 12) > Fraction(1, 20)
    assert stats.is_ratio_verdict(t.verdict)


def test_the_baselines_collapse(study):
    # the baseline low in 3 of 12: its point is flagged with 3 bad runs,
    # each variant counts 0 below the baseline's boundary
    p = _points(_study(study, {"tas": (1, 5, 9)},
                       variants=("tas", "ttas", "x")), ("tas", "ttas", "x"))
    assert (p["tas"].bifurcated, p["tas"].bad_runs) == (True, 3)
    for s in ("ttas", "x"):
        assert (p[s].bifurcated, p[s].bad_runs,
                p[s].base_bad_runs) == (False, 0, 3)
        assert stats.is_ratio_verdict(p[s].verdict)


def test_same_collapse_on_both_sides(study):
    # both low in the same 5 rounds (a slow machine, not a variant): the
    # round's effect removes it, nothing is flagged
    low = (1, 4, 7, 8, 11)
    p = _points(_study(study, {"tas": low, "ttas": low}))
    assert not p["tas"].bifurcated and not p["ttas"].bifurcated
    assert p["ttas"].verdict == "equivalent (±2%)"


@pytest.mark.parametrize("seed", range(5))
def test_slow_rounds_for_everyone_are_no_collapse(study, seed):
    # 2 of 12 rounds 20% slow for all three variants, 1% noise: the old
    # test on raw tps flagged every such point
    variants = ("tas", "ttas", "x")
    p = _points(_study(study, {}, slow=(3, 9), seed=seed,
                       variants=variants), variants)
    assert not any(q.bifurcated for q in p.values())
    assert all(q.verdict != "bimodal" for q in p.values())
