"""Tests of lockstudy.stats on synthetic studies, without a server: what
a point's rounds resolve (the difference they would show with 80 %
power) and the rounds that would show equivalence, against the normal
approximation computed here beyond POWER_SIMULATED rounds; below them,
simulated: above that approximation and at most 1.6 times it, and the
fewest rounds whose power reaches 80 %; none without enough rounds or a
noise; neither from the ratio observed (no post-hoc power).
"""

import math
import statistics

import numpy
import pytest

from lockstudy import stats


def test_resolves_cases():
    # beyond POWER_SIMULATED rounds the normal approximation, computed
    # here; below, simulated intervals, above that approximation and at
    # most 1.6 times it (the signed-rank interval's discreteness); the
    # larger of the two sides (1 + d beyond 1.02, 1 - d beyond 0.98);
    # nothing below the rounds that reach the level or
    # without a noise
    z = statistics.NormalDist().inv_cdf
    for n, s in ((100, 0.1), (61, 0.05), (400, 0.2)):
        d = (z(0.975) + z(0.8)) * math.sqrt(math.pi / 3) * s / math.sqrt(n)
        assert stats.resolves(n, s, 0.02, 0.95) == pytest.approx(
            max(1.02 * math.exp(d) - 1, 1 - 0.98 * math.exp(-d)), rel=1e-9)
    for n in (6, 8, 12, 24, 48):
        d = (z(0.975) + z(0.8)) * math.sqrt(math.pi / 3) * 0.1 / math.sqrt(n)
        got = math.log(1 + stats.resolves(n, 0.1, 0.02, 0.95)) \
            - math.log(1.02)
        assert d <= got <= d * 1.6, n
    assert stats.resolves(5, 0.1, 0.02, 0.95) is None
    assert stats.resolves(12, float("nan"), 0.02, 0.95) is None
    assert stats.resolves(12, 0, 0.02, 0.95) == pytest.approx(0.02)
    # more rounds, less noise: a smaller difference
    assert stats.resolves(24, 0.1, 0.02, 0.95) \
        < stats.resolves(12, 0.1, 0.02, 0.95) \
        < stats.resolves(12, 0.2, 0.02, 0.95)


def test_rounds_equivalent_cases():
    # beyond POWER_SIMULATED rounds the normal approximation of TOST's
    # sample size at a true ratio of 1 (both ends inside: z of 1 - 0.2/2)
    z = statistics.NormalDist().inv_cdf
    for s in (0.1, 0.2):
        want = math.ceil(((z(0.975) + z(0.9)) * math.sqrt(math.pi / 3) * s
                          / math.log(1.02)) ** 2)
        assert stats.rounds_equivalent(s, 0.02, 0.95) == want
    # below it, the fewest simulated rounds whose power reaches 80%
    n = stats.rounds_equivalent(0.02, 0.02, 0.95)
    assert 6 < n <= stats.POWER_SIMULATED
    assert stats.equivalence_power(n, 0.02, 0.02, 0.95) >= 0.8
    assert stats.equivalence_power(n - 1, 0.02, 0.02, 0.95) < 0.8
    assert stats.rounds_equivalent(0.1, 0, 0.95) is None
    assert stats.rounds_equivalent(float("nan"), 0.02, 0.95) is None
    assert stats.rounds_equivalent(0, 0.02, 0.95) == 6


def test_resolves_beyond_the_study(study):
    # 5% in 20% noise over 9 rounds: not resolved, its rounds resolve
    # only a larger difference, and equivalence needs more rounds
    rng = numpy.random.default_rng(500)
    tps = study.grid(["tas", "ttas"], [2], 9, lambda s, c, r: 1000 * (
        1 if s == "tas" else 1.05) * (1 + 0.2 * rng.standard_normal()))
    p = stats.analyse(tps, ["tas", "ttas"], 0.02, 0.95)[1]
    assert p.verdict == "not resolved"
    assert p.resolves > 0.05 and p.rounds_equivalent > 9


def test_resolves_ignores_the_ratio(study):
    # the same log ratios shifted: the same noise, so the same numbers,
    # whatever the ratio observed (no post-hoc power); the tps are
    # rounded to 3 decimals, so the noise differs in its 7th digit
    rng = numpy.random.default_rng(501)
    noise = {r: 0.1 * rng.standard_normal() for r in range(1, 13)}
    got = []
    for effect in (0.9, 1.0, 1.02, 1.3):
        tps = study.grid(["a", "b"], [2], 12, lambda s, c, r: 1000 * (
            1 if s == "a" else effect * math.exp(noise[r])))
        p = stats.analyse(tps, ["a", "b"], 0.02, 0.95)[1]
        got.append((p.resolves, p.rounds_equivalent))
    assert all(x == pytest.approx(got[0], rel=1e-5) for x in got)
    assert len({n for _, n in got}) == 1
