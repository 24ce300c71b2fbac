"""The study's statistics: pure functions of numbers, no I/O.

The order-statistics interval of a median and its exact coverage, the
coefficient of variation, the collapse test (do a point's runs fall into
two groups?), the verdict on a paired tps ratio and the rounds that would
resolve one, and over a whole study: the points of table (a), the number
of comparisons, the drift of each point and the ratio to the baseline by
position in the round.

A study's tps are given as a mapping (variant, clients, round) -> tps, one
run per key: the caller (report) has read and checked the runs.  Calls no
other module of the package.
"""

import functools
import math
from typing import (Any, Dict, Iterable, List, Mapping, Optional, Sequence,
                    Tuple)

import numpy
from scipy import stats as scipy_stats

RunKey = Tuple[str, int, int]		# (variant, clients, round)
Point = Dict[str, Any]

# the collapse test: the fewest runs it looks at, the share of single-peaked
# points it flags, and the simulated draws its threshold is taken from
BIMODAL_MIN_RUNS = 5
BIMODAL_FALSE_ALARMS = 0.01
BIMODAL_DRAWS = 20000
# the verdicts that a split point's ratio loses to "bimodal"
RATIO_VERDICTS = ("faster", "slower", "no difference")


def min_rounds(confidence: float) -> int:
    """The fewest values for which an order-statistics interval of the
    median reaches the confidence level."""
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
    alpha = 1 - confidence
    k = 1
    while k < n + 1 - k and 2 * scipy_stats.binom.cdf(k, n, 0.5) <= alpha:
        k += 1
    coverage = 1 - 2 * scipy_stats.binom.cdf(k - 1, n, 0.5)
    return float(numpy.median(x)), float(x[k - 1]), float(x[n - k]), coverage


def cv(values: Sequence[float]) -> float:
    """Coefficient of variation: sample standard deviation over mean."""
    if len(values) < 2:
        return float("nan")
    return float(numpy.std(values, ddof=1) / numpy.mean(values))


def split_statistic(logs: Sequence[Sequence[float]]
                    ) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """For rows of sorted values (a 2-D array), the largest over the splits
    into a lower and an upper group of at least 2 values each of the
    distance between the groups' means over the pooled standard deviation
    inside the groups, and the size of the lower group at that split.  A
    single outlying run is not a group."""
    x = numpy.asarray(logs, dtype=float)
    n = x.shape[1]
    # running sums give every split's group means and sums of squares at
    # once, for all rows
    c1 = numpy.cumsum(x, axis=1)
    c2 = numpy.cumsum(x * x, axis=1)
    t1, t2 = c1[:, -1:], c2[:, -1:]
    i = numpy.arange(2, n - 1)				# size of the lower group
    s1_lo, s2_lo = c1[:, 1:-2], c2[:, 1:-2]
    s1_hi, s2_hi = t1 - s1_lo, t2 - s2_lo
    m_lo, m_hi = s1_lo / i, s1_hi / (n - i)
    ss = (s2_lo - s1_lo * m_lo) + (s2_hi - s1_hi * m_hi)
    sd = numpy.sqrt(numpy.maximum(ss, 0) / (n - 2))
    diff = m_hi - m_lo
    # groups without spread: infinitely far apart if their means differ
    # (beyond rounding), else not apart at all
    with numpy.errstate(divide="ignore", invalid="ignore"):
        g = numpy.where(sd > 1e-12 * numpy.maximum(1, numpy.abs(m_hi)),
                        diff / sd,
                        numpy.where(diff > 1e-12, numpy.inf, 0.0))
    best = numpy.argmax(g, axis=1)
    return g[numpy.arange(len(g)), best], best + 2


@functools.lru_cache(maxsize=None)
def bimodal_threshold(n: int) -> float:
    """The split statistic's 1 - BIMODAL_FALSE_ALARMS quantile for n runs of
    single-peaked (normal, in log tps) data: simulated, with a fixed seed so
    that it is the same in every run.  The statistic does not depend on the
    data's mean or spread."""
    rng = numpy.random.default_rng(n)
    draws = numpy.sort(rng.standard_normal((BIMODAL_DRAWS, n)), axis=1)
    g, _ = split_statistic(draws)
    return float(numpy.quantile(g, 1 - BIMODAL_FALSE_ALARMS))


def bimodal(values: Sequence[float]) -> Tuple[bool, int]:
    """Whether the runs of a point fall into two groups (collapse), and how
    many runs are in the lower one: at least BIMODAL_MIN_RUNS runs, and the
    split statistic of their log tps above bimodal_threshold(n), which
    single-peaked data exceeds in BIMODAL_FALSE_ALARMS of the cases.
    Returns (flag, runs in the lower group, or 0)."""
    n = len(values)
    if n < BIMODAL_MIN_RUNS or min(values) <= 0:
        return False, 0
    logs = numpy.sort(numpy.log(numpy.asarray(values, dtype=float)))
    g, k = split_statistic(logs[numpy.newaxis, :])
    if g[0] > bimodal_threshold(n):
        return True, int(k[0])
    return False, 0


def verdict(low: float, high: float, threshold: float, enough: bool) -> str:
    """The verdict on a ratio interval [low, high]: "faster" only if it lies
    wholly above 1 + threshold, "slower" only if wholly below 1 - threshold,
    else (and always when the interval does not reach the confidence level,
    not enough) "no difference"."""
    if not enough or low <= 1 <= high:
        return "no difference"
    if low > 1 + threshold:
        return "faster"
    if high < 1 - threshold:
        return "slower"
    return "no difference"


def rounds_needed(log_ratios: Sequence[float], ratio: float,
                  threshold: float, confidence: float) -> Optional[int]:
    """Rounds that would resolve this median ratio at this noise, or None
    when the ratio is within the threshold.  The median's standard error is
    taken as sqrt(pi/2) s / sqrt(n), its large-sample value for normal
    data, s the standard deviation of the log ratios."""
    if ratio >= 1:
        margin = math.log(ratio) - math.log(1 + threshold)
    else:
        margin = math.log(1 - threshold) - math.log(ratio)
    if margin <= 0:
        return None
    nmin = min_rounds(confidence)
    if len(log_ratios) < 2:
        return nmin
    s = float(numpy.std(log_ratios, ddof=1))
    z = float(scipy_stats.norm.ppf(1 - (1 - confidence) / 2))
    n = math.ceil((z * math.sqrt(math.pi / 2) * s / margin) ** 2)
    return max(n, nmin)


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
            ratio_confidence: Optional[float] = None) -> List[Point]:
    """One dict per point, in the order of variants, then clients.  The tps
    intervals are at confidence, the ratio intervals at ratio_confidence
    (default: the same); threshold is a fraction (0.02 for 2%)."""
    if ratio_confidence is None:
        ratio_confidence = confidence
    runs = by_point(tps)
    points = []
    for s in variants:
        for c in sorted(c for (s2, c) in runs if s2 == s):
            points.append(_point(runs, s, c, threshold, confidence,
                                 ratio_confidence, variants[0]))
    _collapse(points, variants[0])
    return points


def _point(runs: Mapping[Tuple[str, int], Mapping[int, float]], s: str,
           c: int, threshold: float, confidence: float,
           ratio_confidence: float, base: str) -> Point:
    """The point of variant s at c clients, before the collapse test's
    comparison with the baseline."""
    mine = runs[(s, c)]
    rounds = sorted(mine)
    v = [mine[r] for r in rounds]
    med, lo, hi, cov = median_ci(v, confidence)
    split, bad = bimodal(v)
    p = {
        "variant": s, "clients": c, "n": len(v), "median": med,
        "lo": min(v), "hi": max(v), "bifurcated": split,
        "bad_runs": bad, "fisher_p": None,
        "cv": cv(v), "tps_ci_low": lo, "tps_ci_high": hi,
        "coverage": cov, "ratio": None, "ci_low": None,
        "ci_high": None, "pairs": 0, "verdict": "",
        "rounds_needed": None,
    }
    if s == base:
        p["verdict"] = "baseline"
        return p
    # ratios within a round, so that drift from round to round cancels
    b = runs.get((base, c), {})
    ratios = [mine[r] / b[r] for r in rounds if r in b and b[r] > 0]
    p["pairs"] = len(ratios)
    if not ratios:
        p["verdict"] = "no pairs"
        return p
    rmed, rlo, rhi, rcov = median_ci(ratios, ratio_confidence)
    p.update(ratio=rmed, ci_low=rlo, ci_high=rhi, coverage=rcov,
             verdict=verdict(rlo, rhi, threshold, rcov >= ratio_confidence))
    if p["verdict"] == "no difference":
        p["rounds_needed"] = rounds_needed(numpy.log(ratios), rmed,
                                           threshold, ratio_confidence)
    return p


def _collapse(points: List[Point], base: str) -> None:
    """Compare the bad runs of each point with the baseline's of the same
    client count (Fisher's exact test), and give a point whose runs or the
    baseline's split the verdict "bimodal": a ratio of two mixtures says
    nothing about either group."""
    bases = {p["clients"]: p for p in points if p["variant"] == base}
    for p in points:
        b = bases.get(p["clients"])
        if p["variant"] == base or b is None:
            continue
        _, pval = scipy_stats.fisher_exact(
            [[p["bad_runs"], p["n"] - p["bad_runs"]],
             [b["bad_runs"], b["n"] - b["bad_runs"]]])
        p["fisher_p"] = float(pval)
        if (p["bifurcated"] or b["bifurcated"]) \
                and p["verdict"] in RATIO_VERDICTS:
            p["verdict"] = "bimodal"
            p["rounds_needed"] = None


def drift(tps: Mapping[RunKey, float],
          variants: Sequence[str]) -> Dict[Tuple[str, int], float]:
    """Per point (variant, clients) of the variants, the median tps of the
    last third of its rounds over that of the first third: far from 1, the
    machine drifted during the study.  Points of fewer than 3 rounds, or
    whose first third's median is not positive, are left out."""
    out = {}
    for (s, c), mine in by_point(tps).items():
        rounds = sorted(mine)
        k = len(rounds) // 3
        if s not in variants or k == 0:
            continue
        first = numpy.median([mine[r] for r in rounds[:k]])
        last = numpy.median([mine[r] for r in rounds[-k:]])
        if first > 0:
            out[(s, c)] = float(last / first)
    return out


def position_ratios(tps: Mapping[RunKey, float],
                    positions: Mapping[RunKey, int],
                    variants: Sequence[str]
                    ) -> Dict[str, Dict[int, Tuple[float, int]]]:
    """For each variant but the baseline (the first), by the position it
    ran in within its round: the median ratio of its tps to the baseline's
    of the same round and client count, over all client counts, and the
    number of ratios.  A trend over the positions means drift within
    rounds.  Runs without a position, or whose baseline run is missing or
    at 0 tps, are left out."""
    base = variants[0]
    out = {}
    for s in variants[1:]:
        by: Dict[int, List[float]] = {}
        for (s2, c, r), t in tps.items():
            b = tps.get((base, c, r))
            if s2 != s or not b or (s, c, r) not in positions:
                continue
            by.setdefault(positions[(s, c, r)], []).append(t / b)
        out[s] = {q: (float(numpy.median(x)), len(x))
                  for q, x in by.items()}
    return out
