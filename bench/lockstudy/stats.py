"""The study's statistics: pure functions of numbers, no I/O.

The order-statistics interval of a median and its exact coverage (the
baseline's tps), the Hodges-Lehmann estimate of a paired ratio with the
interval of Wilcoxon's signed-rank test and its exact coverage, the
coefficient of variation and the ratio noise, the collapse test on
round-adjusted data (do a point's runs fall into a good and a bad group,
beyond what each round's effect on every variant explains?), the verdict
on a ratio interval (faster, slower, equivalent within the threshold, or
not resolved), the smallest difference a number of rounds resolves with
80 % power at a ratio noise and the rounds that would show equivalence
within the threshold (neither uses the ratio observed), and over a whole
study: the points of table (a) and the number of
comparisons.  The drift and position tables' numbers are lockstudy.drift's.

A study's tps are given as a mapping (variant, clients, round) -> tps, one
run per key: the caller (report) has read and checked the runs.  The
points are model.PointResult.  Calls lockstudy.collapse (the split test on
round-adjusted runs) and lockstudy.model.
"""

import functools
import math
from typing import (Any, Dict, Iterable, List, Mapping, Optional, Sequence,
                    Tuple)

import numpy
from scipy import stats as scipy_stats

from . import serial
from .collapse import collapse, point_residuals
from .model import PointResult, Resolution, RunKey

# a point while it is computed: the fields of PointResult
Point = Dict[str, Any]

# the level of Fisher's test below which two sides' counts of bad runs
# differ
COLLAPSE_ALPHA = 0.05
# the verdict of an interval that shows neither a difference beyond the
# threshold nor its absence within it
NOT_RESOLVED = "not resolved"
# the verdict of a point whose rounds fail the check for independence
WITHHELD = "withheld: rounds dependent"
# the power that "resolves" and "rounds for ±T" ask for, the most rounds
# up to which they are simulated, and the simulated draws
POWER = 0.8
POWER_SIMULATED = 60
POWER_DRAWS = 1000


@functools.lru_cache(maxsize=None)
def min_rounds(confidence: float) -> int:
    """The fewest values for which an order-statistics interval of the
    median, or a signed-rank interval, reaches the confidence level (both
    are the min-max interval, of coverage 1 - 2 / 2^n, at their widest)."""
    n = 1
    while 1 - 2 * scipy_stats.binom.cdf(0, n, 0.5) < confidence:
        n += 1
    return n


def median_ci(values: Sequence[float],
              confidence: float) -> Tuple[float, float, float, float]:
    """Median, interval (low, high) and its exact coverage.  The interval
    is [x(k), x(n+1-k)] for the largest k whose coverage is at least the
    confidence level; [min, max] and a lower coverage if none is."""
    x = numpy.sort(numpy.asarray(values, dtype=float))
    n = len(x)
    k, coverage = _order_rank(n, confidence)
    return float(numpy.median(x)), float(x[k - 1]), float(x[n - k]), coverage


@functools.lru_cache(maxsize=None)
def _order_rank(n: int, confidence: float) -> Tuple[int, float]:
    """The rank k of median_ci's interval of n values and its coverage."""
    alpha = 1 - confidence
    k = 1
    while k < n + 1 - k and 2 * scipy_stats.binom.cdf(k, n, 0.5) <= alpha:
        k += 1
    return k, float(1 - 2 * scipy_stats.binom.cdf(k - 1, n, 0.5))


@functools.lru_cache(maxsize=None)
def signed_rank_cdf(n: int) -> Tuple[float, ...]:
    """P(W <= w) for w = 0 .. n(n+1)/2, W Wilcoxon's signed-rank statistic
    of n values from a continuous distribution symmetric about 0 (the sum
    of the ranks of the positive ones): the number of subsets of 1 .. n
    with each sum, over 2^n."""
    # halved at each step, so that no count overflows (2^n does from
    # n = 1024); exact, since halving a double loses nothing until it
    # underflows, and only tails far below any level do
    probs = numpy.zeros(n * (n + 1) // 2 + 1)
    probs[0] = 1
    for i in range(1, n + 1):
        probs[i:] = probs[i:] + probs[:-i].copy()
        probs *= 0.5
    return tuple(numpy.cumsum(probs))


def hl_ci(values: Sequence[float],
          confidence: float) -> Tuple[float, float, float, float]:
    """Hodges-Lehmann estimate of the centre of symmetry of the values (the
    median of the n(n+1)/2 Walsh averages (x_i + x_j) / 2, i <= j), the
    interval of Wilcoxon's signed-rank test (low, high) and its exact
    coverage for a continuous symmetric distribution: [w(k), w(N+1-k)] of
    the N sorted Walsh averages, k the largest rank whose coverage
    1 - 2 P(W <= k - 1) is at least the confidence; [min, max] and its
    lower coverage if none is."""
    x = numpy.asarray(values, dtype=float)
    n = len(x)
    i, j = numpy.triu_indices(n)
    walsh = numpy.sort((x[i] + x[j]) / 2)
    big_n = len(walsh)
    k, coverage = _walsh_rank(n, confidence)
    return (float(numpy.median(walsh)), float(walsh[k - 1]),
            float(walsh[big_n - k]), coverage)


@functools.lru_cache(maxsize=None)
def _walsh_rank(n: int, confidence: float) -> Tuple[int, float]:
    """The rank k of hl_ci's interval of n values and its coverage."""
    cdf = signed_rank_cdf(n)
    big_n = n * (n + 1) // 2
    k = 1
    while k < big_n + 1 - k and 2 * cdf[k] <= 1 - confidence:
        k += 1
    return k, float(1 - 2 * cdf[k - 1])


def mean_ci(values: Sequence[float],
            confidence: float) -> Tuple[float, float, float]:
    """The mean of the values and its Student t interval (low, high) at
    the confidence level; nan below 2 values."""
    x = numpy.asarray(values, dtype=float)
    if len(x) < 2:
        return float("nan"), float("nan"), float("nan")
    m = float(numpy.mean(x))
    half = float(scipy_stats.t.ppf(1 - (1 - confidence) / 2, len(x) - 1)
                 * numpy.std(x, ddof=1) / math.sqrt(len(x)))
    return m, m - half, m + half


def cv(values: Sequence[float]) -> float:
    """Coefficient of variation: sample standard deviation over mean; nan
    below 2 values or at a mean of 0."""
    if len(values) < 2 or not numpy.mean(values) > 0:
        return float("nan")
    return float(numpy.std(values, ddof=1) / numpy.mean(values))


def ratio_noise(ratios: Sequence[float]) -> float:
    """The noise of paired ratios: the sample standard deviation of their
    logs (about their coefficient of variation); nan below 2 ratios."""
    if len(ratios) < 2:
        return float("nan")
    return float(numpy.std(numpy.log(ratios), ddof=1))


def equivalent_label(threshold: float) -> str:
    """The verdict of an interval inside [1 - threshold, 1 + threshold]."""
    return "equivalent (±%g%%)" % (100 * threshold)


def is_ratio_verdict(text: str) -> bool:
    """Whether a verdict is one the ratio's intervals gave (and so one that
    "bimodal" and WITHHELD replace): faster, slower, equivalent or not
    resolved."""
    return text in ("faster", "slower", NOT_RESOLVED) \
        or text.startswith("equivalent (")


def _inside(low: float, high: float, threshold: float) -> bool:
    """Whether [low, high] lies wholly inside (1 - threshold,
    1 + threshold)."""
    return 1 - threshold < low and high < 1 + threshold


def verdict(low: float, high: float, threshold: float, enough: bool,
            mean: Optional[Tuple[float, float]] = None) -> str:
    """The verdict on a ratio interval [low, high]: "faster" only if it
    lies wholly above 1 + threshold, "slower" only if wholly below
    1 - threshold, "equivalent (±T)" only if it lies wholly inside
    (1 - threshold, 1 + threshold), and so does mean, the interval of
    the mean ratio when given: the two one-sided tests of TOST on both,
    each at half the interval's non-coverage, so that a variant that
    loses throughput in a few collapsed runs, which the Hodges-Lehmann
    interval leaves out, is not equivalent; else (and always when the
    interval does not reach the confidence level, not enough) "not
    resolved": the rounds cannot tell."""
    if not enough:
        return NOT_RESOLVED
    if low > 1 + threshold:
        return "faster"
    if high < 1 - threshold:
        return "slower"
    if _inside(low, high, threshold) \
            and (mean is None or _inside(mean[0], mean[1], threshold)):
        return equivalent_label(threshold)
    return NOT_RESOLVED


def _z(confidence: float) -> float:
    """The two-sided normal quantile of a confidence level."""
    return float(scipy_stats.norm.ppf(1 - (1 - confidence) / 2))


# the Hodges-Lehmann estimate's large-sample standard error for normal
# data, in standard deviations of the log ratios times sqrt(n)
HL_SE = math.sqrt(math.pi / 3)


def _effect(n: int, confidence: float) -> Optional[float]:
    """The distance, in standard deviations of the log ratios, by which a
    true log ratio must lie beyond the threshold for n rounds to give a
    verdict with POWER: from simulated intervals (lower_ends) up to
    POWER_SIMULATED rounds, else from the normal approximation; None when
    n rounds cannot reach the level."""
    if n > POWER_SIMULATED:
        return (_z(confidence) + scipy_stats.norm.ppf(POWER)) * HL_SE \
            / math.sqrt(n)
    ends = lower_ends(n, confidence)
    if not ends:
        return None
    return -float(numpy.quantile(ends, 1 - POWER))


def resolves(n: int, noise: float, threshold: float,
             confidence: float) -> Optional[float]:
    """The smallest difference (a fraction) that n rounds at this ratio
    noise resolve with POWER: a true ratio of 1 + d, or of 1 - d, gives a
    faster, or slower, verdict in at least POWER of studies, the log
    ratios normal.  Depends on the rounds and the noise only, never on
    the ratio observed.  None when n rounds cannot reach the level or the
    noise is unknown."""
    e = _effect(n, confidence)
    if e is None or not noise >= 0:
        return None
    d = e * noise
    return max((1 + threshold) * math.exp(d) - 1,
               1 - (1 - threshold) * math.exp(-d))


def equivalence_power(n: int, noise: float, threshold: float,
                      confidence: float) -> float:
    """The share of simulated studies of n rounds at a true ratio of 1 and
    this ratio noise (normal log ratios) whose interval lies inside
    (1 - threshold, 1 + threshold); 0 when n rounds cannot reach the
    level."""
    ends = interval_ends(n, confidence)
    if ends is None:
        return 0.0
    if noise == 0:
        return 1.0 if threshold > 0 else 0.0
    lo, hi = ends
    inside = (lo * noise > math.log(1 - threshold)) \
        & (hi * noise < math.log(1 + threshold))
    return float(numpy.mean(inside))


def rounds_equivalent(noise: float, threshold: float,
                      confidence: float) -> Optional[int]:
    """The fewest rounds whose interval, at a true ratio of 1 and this
    ratio noise, is "equivalent (±threshold)" in at least POWER of
    studies: simulated (equivalence_power) up to POWER_SIMULATED rounds,
    beyond from the normal approximation n = ((z + z') HL_SE s / m)^2, z
    the interval's quantile, z' that of 1 - (1 - POWER) / 2 (both ends
    must stay inside), m = log(1 + threshold).  The ratio observed plays
    no part.  None for a threshold of 0 or an unknown noise."""
    if not threshold > 0 or not noise >= 0:
        return None
    z = _z(confidence) + scipy_stats.norm.ppf(1 - (1 - POWER) / 2)
    approx = math.ceil((z * HL_SE * noise / math.log(1 + threshold)) ** 2)
    if approx > POWER_SIMULATED:
        return approx
    for n in range(min_rounds(confidence), POWER_SIMULATED + 1):
        if equivalence_power(n, noise, threshold, confidence) >= POWER:
            return n
    return POWER_SIMULATED + 1


def resolution(rounds: Sequence[int], noises: Sequence[float],
               threshold: float, confidence: float
               ) -> Tuple[Resolution, ...]:
    """What each number of rounds resolves at each ratio noise (resolves),
    and the rounds that resolve ±threshold (rounds_equivalent): the table
    of doc/study.md, printed by "lockstudy resolution"."""
    return tuple(Resolution(n, s, resolves(n, s, threshold, confidence),
                            rounds_equivalent(s, threshold, confidence))
                 for s in noises for n in rounds)


@functools.lru_cache(maxsize=None)
def interval_ends(n: int, confidence: float
                  ) -> Optional[Tuple[numpy.ndarray, numpy.ndarray]]:
    """The ends (w(k), w(N+1-k)) of the signed-rank intervals of
    POWER_DRAWS sets of n standard normal values (a fixed seed), in the
    order of the sets; None when n values cannot reach the confidence
    level."""
    k, coverage = _walsh_rank(n, confidence)
    if coverage < confidence:
        return None
    rng = numpy.random.default_rng(5000 + n)
    x = rng.standard_normal((POWER_DRAWS, n))
    i, j = numpy.triu_indices(n)
    walsh = (x[:, i] + x[:, j]) / 2
    big_n = walsh.shape[1]
    part = numpy.partition(walsh, (k - 1, big_n - k), axis=1)
    return part[:, k - 1], part[:, big_n - k]


def lower_ends(n: int, confidence: float) -> Tuple[float, ...]:
    """The lower ends of interval_ends, sorted; empty when n values cannot
    reach the confidence level."""
    ends = interval_ends(n, confidence)
    return () if ends is None else tuple(numpy.sort(ends[0]))


def by_point(tps: Mapping[RunKey, float]) -> Dict[Tuple[str, int],
                                                  Dict[int, float]]:
    """The tps of each point (variant, clients), by round."""
    out: Dict[Tuple[str, int], Dict[int, float]] = {}
    for (s, c, r), t in tps.items():
        out.setdefault((s, c), {})[r] = t
    return out


def comparisons(keys: Iterable[RunKey], variants: Sequence[str]) -> int:
    """The number of ratio intervals of a study whose runs have the keys
    (variant, clients, round): the points of the variants other than the
    baseline (the first) that have at least one round in common with the
    baseline's point of the same client count."""
    have = set(keys)
    base = variants[0]
    return len({(s, c) for (s, c, r) in have
                if s != base and s in variants and (base, c, r) in have})


def analyse(tps: Mapping[RunKey, float], variants: Sequence[str],
            threshold: float, confidence: float,
            ratio_confidence: Optional[float] = None
            ) -> Tuple[PointResult, ...]:
    """The points of analyse_study."""
    return analyse_study(tps, variants, threshold, confidence,
                         ratio_confidence)[0]


def analyse_study(tps: Mapping[RunKey, float], variants: Sequence[str],
                  threshold: float, confidence: float,
                  ratio_confidence: Optional[float] = None
                  ) -> Tuple[Tuple[PointResult, ...], Optional[float]]:
    """The points, in the order of variants, then clients, and the
    study-wide check of the rounds' independence (serial.check's
    study_p).  The tps intervals are at confidence, the ratio intervals
    at ratio_confidence (default: the same); threshold is a fraction
    (0.02 for 2%)."""
    if ratio_confidence is None:
        ratio_confidence = confidence
    runs = by_point(tps)
    points = []
    for s in variants:
        for c in sorted(c for (s2, c) in runs if s2 == s):
            points.append(_point(runs, s, c, threshold, confidence,
                                 ratio_confidence, variants[0]))
    _collapse(points, runs, variants)
    study_p = _serial(points, runs, variants[0])
    return tuple(PointResult(**p) for p in points), study_p


def _log_ratios(runs: Mapping[Tuple[str, int], Mapping[int, float]],
                s: str, c: int, base: str) -> Dict[int, float]:
    """The log ratios of variant s to the baseline at c clients, by round:
    within a round, so that drift from round to round cancels; a round
    where either ran at 0 tps has none."""
    mine, b = runs[(s, c)], runs.get((base, c), {})
    return {r: math.log(mine[r] / b[r]) for r in sorted(mine)
            if r in b and b[r] > 0 and mine[r] > 0}


def _point(runs: Mapping[Tuple[str, int], Mapping[int, float]], s: str,
           c: int, threshold: float, confidence: float,
           ratio_confidence: float, base: str) -> Point:
    """The point of variant s at c clients, before the collapse test and
    the check of its rounds.  A run at 0 tps has no log: it is left out
    of the ratios (with its pair) and of the collapse test, and counted
    in zero_runs."""
    mine = runs[(s, c)]
    v = [mine[r] for r in sorted(mine)]
    med, lo, hi, cov = median_ci(v, confidence)
    p = dict(variant=s, clients=c, n=len(v), median=med, lo=min(v),
             hi=max(v), bifurcated=False, bad_runs=0, fisher_p=None,
             cv=cv(v), tps_ci_low=lo, tps_ci_high=hi, coverage=cov,
             ratio=None, ci_low=None, ci_high=None, pairs=0, verdict="",
             resolves=None, rounds_equivalent=None, base_bad_runs=None,
             ratio_noise=float("nan"),
             zero_runs=sum(not t > 0 for t in v))
    if s == base:
        p["verdict"] = "baseline"
        return p
    logs = list(_log_ratios(runs, s, c, base).values())
    p["pairs"] = len(logs)
    if not logs:
        p["verdict"] = "no pairs"
        return p
    est, rlo, rhi, rcov = hl_ci(logs, ratio_confidence)
    noise = ratio_noise(numpy.exp(logs))
    mean = None
    if len(logs) > 1:
        m, mlo, mhi = mean_ci(logs, ratio_confidence)
        mean = (math.exp(mlo), math.exp(mhi))
        p.update(mean_ratio=math.exp(m), mean_low=mean[0],
                 mean_high=mean[1])
    p.update(ratio=math.exp(est), ci_low=math.exp(rlo),
             ci_high=math.exp(rhi), coverage=rcov, ratio_noise=noise,
             verdict=verdict(math.exp(rlo), math.exp(rhi), threshold,
                             rcov >= ratio_confidence, mean),
             resolves=resolves(len(logs), noise, threshold,
                               ratio_confidence),
             rounds_equivalent=rounds_equivalent(noise, threshold,
                                                 ratio_confidence))
    return p


def _serial(points: List[Point],
            runs: Mapping[Tuple[str, int], Mapping[int, float]],
            base: str) -> Optional[float]:
    """The check of every ratio's rounds for independence (serial.check),
    one permutation of the rounds for the whole study; a point that fails
    it, its own check or the study's, is dependent and its verdict
    withheld (WITHHELD).  Returns the study-wide p-value."""
    mine = [p for p in points if p["ratio"] is not None]
    checks, study_p = serial.check(
        [_log_ratios(runs, p["variant"], p["clients"], base) for p in mine])
    for p, c in zip(mine, checks):
        if c is not None:
            p.update(lag1=c.lag1, lag1_p=c.lag1_p, change_p=c.change_p,
                     change_round=c.change_round, serial_p=c.point_p)
        p["dependent"] = serial.dependent(c, study_p)
        if p["dependent"] and (is_ratio_verdict(p["verdict"])
                               or p["verdict"] == "bimodal"):
            p["verdict"] = WITHHELD
    return study_p


def _collapse(points: List[Point],
              runs: Mapping[Tuple[str, int], Mapping[int, float]],
              variants: Sequence[str]) -> None:
    """The collapse test of every point on its round-adjusted runs, and
    for each variant against the baseline at the same client count the
    bad runs of both sides counted by one rule: below the boundary of the
    variant's split if it splits, else of the baseline's.  Fisher's exact
    test, one-sided, asks whether the variant has more bad runs than the
    baseline; where it finds so (p below COLLAPSE_ALPHA) the verdict is
    "bimodal", the variant collapsing more often than the baseline; else
    the verdict stands, and the bad runs are shown beside it (a baseline
    that collapses more is the baseline's fault, not the variant's)."""
    base = variants[0]
    res: Dict[int, Dict[str, Dict[int, float]]] = {}
    nvar: Dict[int, int] = {}
    for c in sorted({p["clients"] for p in points}):
        res[c], nvar[c] = point_residuals(runs, variants, c)
    bounds = {}
    for p in points:
        mine = list(res[p["clients"]].get(p["variant"], {}).values())
        flag, boundary = collapse(mine, nvar[p["clients"]])
        bounds[(p["variant"], p["clients"])] = boundary
        p["bifurcated"] = flag
        if flag:
            p["bad_runs"] = sum(x < boundary for x in mine)
    bases = {p["clients"]: p for p in points if p["variant"] == base}
    for p in points:
        b = bases.get(p["clients"])
        if p["variant"] == base or b is None:
            continue
        c = p["clients"]
        if not (p["bifurcated"] or b["bifurcated"]):
            p["base_bad_runs"] = 0
            continue
        boundary = bounds[(p["variant"], c)] if p["bifurcated"] \
            else bounds[(base, c)]
        mine = list(res[c].get(p["variant"], {}).values())
        theirs = list(res[c].get(base, {}).values())
        p["bad_runs"] = sum(x < boundary for x in mine)
        p["base_bad_runs"] = sum(x < boundary for x in theirs)
        _, pval = scipy_stats.fisher_exact(
            [[p["bad_runs"], len(mine) - p["bad_runs"]],
             [p["base_bad_runs"], len(theirs) - p["base_bad_runs"]]],
            alternative="greater")
        p["fisher_p"] = float(pval)
        if pval < COLLAPSE_ALPHA and is_ratio_verdict(p["verdict"]):
            p["verdict"] = "bimodal"
