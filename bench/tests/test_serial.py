"""Tests of lockstudy.serial, the rounds' check for independence.

The statistics are computed here by brute force (ranks by counting,
Pettitt's U_t as a double sum of signs); the permutation p-values are
checked against their level on independent rounds and against a trend.
The targets of the method (AR(1) 0.5 flagged, false alarms on
independent rounds) are test_simulation.py's.
"""

import math

import numpy
import pytest

from lockstudy import serial


def _ranks(x):
    """Mean ranks, 1-based, by counting."""
    return [sum(y < v for y in x) + (sum(y == v for y in x) + 1) / 2
            for v in x]


def _lag1(x):
    r = _ranks(x)
    m = sum(r) / len(r)
    return sum((a - m) * (b - m) for a, b in zip(r, r[1:])) \
        / sum((a - m) ** 2 for a in r)


def _pettitt(x):
    n = len(x)
    u = [sum(math.copysign(1, x[j] - x[i]) if x[j] != x[i] else 0
             for i in range(t) for j in range(t, n)) for t in range(1, n)]
    k = max(abs(v) for v in u)
    return k, [abs(v) for v in u].index(k) + 1


@pytest.mark.parametrize("seed", range(5))
def test_statistics_by_brute_force(seed):
    rng = numpy.random.default_rng(seed)
    x = list(rng.standard_normal(int(rng.integers(5, 20))))
    ranks = numpy.array(_ranks(x))
    assert serial.lag1(ranks)[0] == pytest.approx(_lag1(x))
    k, t = serial.change(ranks)
    assert (k[0], t[0]) == pytest.approx(_pettitt(x))


def test_ties_and_equal_values():
    # ratios equal but for a float's rounding are ties: no trend, p 1
    checks, study_p = serial.check([{r: 1e-13 * r for r in range(1, 10)}])
    c = checks[0]
    assert (c.lag1, c.lag1_p, c.change_p, c.point_p, study_p) == \
        (0, 1, 1, 1, 1)


def test_trend_fails_and_short_points_are_not_checked():
    checks, study_p = serial.check([{r: 0.01 * r for r in range(1, 13)},
                                    {r: 0.0 for r in range(1, 5)}])
    assert checks[0].change_p < 0.01 and checks[0].lag1_p < 0.01
    assert serial.dependent(checks[0], study_p)
    assert checks[1] is None


def test_level_on_independent_rounds():
    # 400 points of 12 independent rounds: each p-value is a permutation
    # p-value, so P(p <= a) <= a; the counts within 3 binomial standard
    # errors of the levels
    rng = numpy.random.default_rng(81)
    p = numpy.array([[c.lag1_p, c.change_p, c.point_p]
                     for c in (serial.check([{r + 1: v for r, v in
                                              enumerate(row)}])[0][0]
                               for row in rng.standard_normal((400, 12)))])
    for level in (0.01, 0.05, 0.1):
        most = 400 * level + 3 * math.sqrt(400 * level * (1 - level))
        assert all(numpy.sum(p[:, i] <= level) <= most for i in range(3))
