"""Simulations of the targets of the study's method, with fixed seeds and
without a server: each checks that lockstudy.stats meets its target, and
that the module before these rules (bench/lockstudy/stats.py at 70c6d42,
read from git; skipped without the history) misses it, so that a test
that passes proves the new rule and not the data.

  - collapse: at the defaults (3 variants, 1, 8 and 64 clients, 12
    rounds, 6 comparisons), at most 5% of null studies get any bimodal
    verdict under log-normal 10% noise, noise of skewness -0.9, Student's
    t with 3 degrees of freedom, and 2 of 12 rounds 20% slow for every
    variant; at least 90% of studies find a variant whose 3 of 12 runs
    fall to 60% (5% noise);
  - ratio intervals: the signed-rank interval holds its exact coverage at
    every number of rounds from 2 to 30, and at 35 and 40, and at 10% ratio noise resolves
    a 20 / 15 / 10% difference in at least 93 / 70 / 24% of studies;
  - rounds needed: at that many rounds the rule gives a verdict with
    about 80% power.
"""

import dataclasses
import importlib.util
import math
import os
import subprocess
import sys

import numpy
import pytest

from lockstudy import stats

VARIANTS = ["a", "b", "c"]
CLIENTS = [1, 8, 64]
ROUNDS = 12
LEVEL = 1 - 0.05 / 6				# the defaults' ratio level
OLD = "70c6d42"


@pytest.fixture(scope="module")
def old_stats():
    """The statistics module of commit OLD, loaded from git."""
    top = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    try:
        text = subprocess.run(
            ["git", "-c", "safe.directory=*", "-C", top, "show",
             OLD + ":bench/lockstudy/stats.py"],
            check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("no git history with %s" % OLD)
    spec = importlib.util.spec_from_loader("old_stats", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(text, "old_stats.py", "exec"), module.__dict__)
    sys.modules.pop("old_stats", None)
    return module


def _noise(kind, rng, shape):
    """Log tps noise of 10% of one kind (5% for the slow rounds)."""
    if kind == "skewed":
        k = 4 / 0.81				# gamma of skewness 0.9
        return -0.1 * (rng.gamma(k, 1.0, shape) - k) / math.sqrt(k)
    if kind == "t3":
        return 0.1 * rng.standard_t(3, shape) / math.sqrt(3)
    if kind == "slow rounds":
        return 0.05 * rng.standard_normal(shape)
    return (0.05 if kind == "collapse" else 0.1) * rng.standard_normal(shape)


def _study(kind, rng):
    """One study's tps; under "slow rounds" 2 of its rounds run at 80%
    for every variant; under "collapse" b's runs at 8 clients fall to
    60% in 3 of its rounds."""
    e = _noise(kind, rng, (len(VARIANTS), len(CLIENTS), ROUNDS))
    slow = numpy.zeros(ROUNDS)
    if kind == "slow rounds":
        slow[rng.choice(ROUNDS, 2, replace=False)] = math.log(0.8)
    low = set(rng.choice(ROUNDS, 3, replace=False)) \
        if kind == "collapse" else set()
    return {(v, c, r + 1): 1000.0 * c * math.exp(
        e[i, j, r] + slow[r]
        + (math.log(0.6) if (v, c) == ("b", 8) and r in low else 0))
        for i, v in enumerate(VARIANTS) for j, c in enumerate(CLIENTS)
        for r in range(ROUNDS)}


def _studies(module, kind, n, seed):
    """Of n simulated studies, how many get any bimodal verdict, and how
    many flag b at 8 clients."""
    rng = numpy.random.default_rng(seed)
    bimodal = found = 0
    for _ in range(n):
        # the old module's points are dicts, the package's PointResult
        points = [p if isinstance(p, dict) else dataclasses.asdict(p)
                  for p in module.analyse(_study(kind, rng), VARIANTS, 0.02,
                                          0.95, LEVEL)]
        bimodal += any(p["verdict"] == "bimodal" for p in points)
        found += any(p["bifurcated"] for p in points
                     if (p["variant"], p["clients"]) == ("b", 8))
    return bimodal, found


NULL_KINDS = ["log-normal", "skewed", "t3", "slow rounds"]


@pytest.mark.parametrize("kind", NULL_KINDS)
def test_null_studies_rarely_bimodal(kind):
    bimodal, _ = _studies(stats, kind, 200, 11)
    assert bimodal <= 10, kind


@pytest.mark.parametrize("kind", NULL_KINDS)
def test_old_rule_bimodal_too_often(old_stats, kind):
    bimodal, _ = _studies(old_stats, kind, 200, 11)
    assert bimodal > 10, kind


def test_collapse_found():
    _, found = _studies(stats, "collapse", 100, 12)
    assert found >= 90


def _verdicts(ci, n, ratio, noise, draws, seed, level=LEVEL):
    """Of draws sets of n log ratios (normal noise about log ratio), the
    share of verdicts in the direction of the ratio, by the interval
    function ci (hl_ci or median_ci of log ratios) at the level."""
    rng = numpy.random.default_rng(seed)
    want = "faster" if ratio > 1 else "slower"
    hits = 0
    for _ in range(draws):
        x = math.log(ratio) + noise * rng.standard_normal(n)
        _, lo, hi, cov = ci(x, level)
        hits += stats.verdict(math.exp(lo), math.exp(hi), 0.02,
                              cov >= level) == want
    return hits / draws


POWER = [(1.2, 0.93), (1.15, 0.70), (1.1, 0.24)]


@pytest.mark.parametrize("ratio, least", POWER)
def test_interval_power(ratio, least):
    assert _verdicts(stats.hl_ci, ROUNDS, ratio, 0.1, 1000, 21) >= least


@pytest.mark.parametrize("ratio, least", POWER)
def test_old_interval_power(old_stats, ratio, least):
    assert _verdicts(old_stats.median_ci, ROUNDS, ratio, 0.1, 1000,
                     21) < least


@pytest.mark.parametrize("kind", ["normal", "t3", "skewed pairs"])
def test_interval_coverage_every_n(kind, exact):
    # 300 sets per number of rounds; the misses are within binomial
    # bounds of the exact coverage whose upper tail holds 1e-6 (the
    # intervals are exact for any continuous symmetric distribution; the
    # difference of two runs of one skewed distribution is symmetric)
    from fractions import Fraction
    rng = numpy.random.default_rng(31)
    for n in list(range(2, 31)) + [35, 40]:
        if kind == "normal":
            x = rng.standard_normal((300, n))
        elif kind == "t3":
            x = rng.standard_t(3, (300, n))
        else:
            x = rng.gamma(2, 1.0, (300, n)) - rng.gamma(2, 1.0, (300, n))
        results = [stats.hl_ci(row, LEVEL) for row in x]
        coverage = results[0][3]
        misses = sum(not lo <= 0 <= hi for _, lo, hi, _ in results)
        _, most = exact.binom_bounds(300, Fraction(1 - coverage).
                                     limit_denominator(2 ** 40), 1e-6)
        assert misses <= most, (kind, n, misses)
        assert (coverage >= LEVEL) == (n >= stats.min_rounds(LEVEL))


CASES = [(1.1, 0.1), (1.05, 0.05), (1.2, 0.15), (0.9, 0.1)]


def _needed_power(module, ci, ratio, noise):
    """The power of the rule at the rounds module's rounds_needed asks
    for, from 200 log ratios of exactly that noise: 1000 simulated
    studies."""
    rng = numpy.random.default_rng(41)
    z = rng.standard_normal(200)
    logs = math.log(ratio) + noise * (z - z.mean()) / z.std(ddof=1)
    n = module.rounds_needed(logs, ratio, 0.02, LEVEL)
    return _verdicts(ci, n, ratio, noise, 1000, 42)


@pytest.mark.parametrize("ratio, noise", CASES)
def test_rounds_needed_power(ratio, noise):
    assert 0.78 <= _needed_power(stats, stats.hl_ci, ratio, noise) <= 0.95


@pytest.mark.parametrize("ratio, noise", CASES)
def test_old_rounds_needed_power(old_stats, ratio, noise):
    assert _needed_power(old_stats, old_stats.median_ci, ratio, noise) < 0.78
