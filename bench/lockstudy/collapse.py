"""The collapse test of the study: do a point's runs fall into a good and
a bad group, beyond what each round's effect on every variant explains?
Pure functions of numbers, no I/O.

The residuals of log tps after each variant's level and each round's
effect (taken from the other variants), the split statistic of sorted
values, its threshold simulated over several shapes of single-peaked
noise, the test of one point's residuals and its boundary between the
groups, and the residuals of every variant of one client count.
lockstudy.stats counts the bad runs of both sides and makes the verdict.
Calls no other module of the package.
"""

import functools
import math
import warnings
from typing import Dict, List, Mapping, Sequence, Tuple

import numpy

# the collapse test: the fewest runs it looks at, the share of points of
# single-peaked runs it flags (at most, over the shapes of noise it is
# calibrated on) and the simulated draws its threshold is taken from
BIMODAL_MIN_RUNS = 5
BIMODAL_FALSE_ALARMS = 0.01
BIMODAL_DRAWS = 10000
# the least distance between the means of the two groups, in log tps
# (5 %): closer groups are not a collapse
BIMODAL_MIN_DEPTH = -math.log(0.95)
# the most variants the threshold is simulated for; more reuse it
BIMODAL_MAX_VARIANTS = 6


def round_residuals(logs: numpy.ndarray) -> numpy.ndarray:
    """Residuals of log tps after each variant's level and each round's
    effect.  logs has the shape (..., variants, rounds), nan where a
    variant did not run in a round.  Each variant's values are centred on
    their median; a round's effect on a variant is taken from the others,
    the median of their centred values in that round (0 where no other
    variant ran in it: nothing tells the round from the variant).  So with
    two variants a residual is the paired log ratio, centred; a slowdown
    of a round that hits every variant alike is removed exactly (but for
    a constant per variant, where it moved the variant's median, which
    the split statistic does not see), and a variant's own bad runs stay
    its own."""
    centred = _centred(logs)
    out = numpy.empty_like(centred)
    for v in range(logs.shape[-2]):
        out[..., v, :] = _residual(centred, v)
    return out


def _median_of(x: numpy.ndarray):
    """numpy's median, or its much slower nanmedian where x has a nan."""
    return numpy.nanmedian if numpy.isnan(x).any() else numpy.median


def _centred(logs: numpy.ndarray) -> numpy.ndarray:
    """logs centred on each variant's median over the rounds."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return logs - _median_of(logs)(logs, axis=-1, keepdims=True)


def _residual(centred: numpy.ndarray, v: int) -> numpy.ndarray:
    """The residuals of variant v (round_residuals) from the centred logs
    of all variants."""
    if centred.shape[-2] == 1:
        return centred[..., v, :]
    others = numpy.delete(centred, v, axis=-2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        effect = _median_of(others)(others, axis=-2)
    return centred[..., v, :] - numpy.nan_to_num(effect, nan=0.0)


def split_statistic(sorted_rows: Sequence[Sequence[float]]
                    ) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """For rows of sorted values (a 2-D array), the largest over the splits
    into a lower group of 2 to n/2 values and an upper group of the rest
    of the distance between the groups' means over the pooled standard
    deviation inside the groups, and the size of the lower group at that
    split.  A single outlying run is not a group, and the lower group is
    the smaller one: a collapse is a minority of slow runs."""
    x = numpy.asarray(sorted_rows, dtype=float)
    n = x.shape[1]
    c1 = numpy.cumsum(x, axis=1)
    c2 = numpy.cumsum(x * x, axis=1)
    t1, t2 = c1[:, -1:], c2[:, -1:]
    i = numpy.arange(2, n // 2 + 1)			# size of the lower group
    s1_lo, s2_lo = c1[:, i - 1], c2[:, i - 1]
    s1_hi, s2_hi = t1 - s1_lo, t2 - s2_lo
    m_lo, m_hi = s1_lo / i, s1_hi / (n - i)
    ss = (s2_lo - s1_lo * m_lo) + (s2_hi - s1_hi * m_hi)
    sd = numpy.sqrt(numpy.maximum(ss, 0) / (n - 2))
    diff = m_hi - m_lo
    # groups without spread: infinitely far apart if their means differ
    # (beyond rounding), else not apart at all
    scale = numpy.maximum(1, numpy.maximum(numpy.abs(m_hi),
                                           numpy.abs(m_lo)))
    with numpy.errstate(divide="ignore", invalid="ignore"):
        g = numpy.where(sd > 1e-12 * scale, diff / sd,
                        numpy.where(diff > 1e-12 * scale, numpy.inf, 0.0))
    best = numpy.argmax(g, axis=1)
    return g[numpy.arange(len(g)), best], best + 2


def null_noise(shape: Tuple[int, ...], seed: int) -> List[numpy.ndarray]:
    """Draws of single-peaked noise of the given shape from each shape of
    noise the collapse test is calibrated on: normal, skewed to the left
    (a negated gamma of skewness -0.9), and heavy-tailed (Student's t with
    3 degrees of freedom)."""
    rng = numpy.random.default_rng(seed)
    shape_k = 4 / 0.81
    return [rng.standard_normal(shape),
            -rng.gamma(shape_k, 1.0, shape),
            rng.standard_t(3, shape)]


@functools.lru_cache(maxsize=None)
def bimodal_threshold(n: int, variants: int = 1) -> float:
    """The threshold of the split statistic of n round-adjusted runs of a
    point whose client count has that many variants: the largest over the
    shapes of null_noise of its 1 - BIMODAL_FALSE_ALARMS quantile, so that
    single-peaked runs of any of them are flagged at most that often.
    Simulated with a fixed seed, so the same in every run; the statistic
    depends neither on the data's level nor on its spread."""
    k = max(1, min(variants, BIMODAL_MAX_VARIANTS))
    quantiles = []
    for draws in null_noise((BIMODAL_DRAWS, k, n), 1000 * k + n):
        res = _residual(_centred(draws), 0)
        g, _ = split_statistic(numpy.sort(res, axis=1))
        quantiles.append(float(numpy.quantile(g, 1 - BIMODAL_FALSE_ALARMS)))
    return max(quantiles)


def collapse(residuals: Sequence[float],
             variants: int = 1) -> Tuple[bool, float]:
    """Whether a point's round-adjusted runs (round_residuals, one variant)
    fall into a smaller lower group and the rest: at least
    BIMODAL_MIN_RUNS runs and the split statistic above
    bimodal_threshold, the groups' means at least BIMODAL_MIN_DEPTH apart
    (a split of runs 1 % apart is no collapse, however clean).  Returns
    (flag, boundary): the boundary between the groups, the midpoint
    between the highest of the lower group and the lowest of the upper
    one (nan when not flagged); a run below it is a bad run."""
    x = numpy.sort(numpy.asarray(residuals, dtype=float))
    n = len(x)
    if n < BIMODAL_MIN_RUNS:
        return False, float("nan")
    g, k = split_statistic(x[numpy.newaxis, :])
    i = int(k[0])
    deep = numpy.mean(x[i:]) - numpy.mean(x[:i]) >= BIMODAL_MIN_DEPTH
    if g[0] > bimodal_threshold(n, variants) and deep:
        return True, float((x[i - 1] + x[i]) / 2)
    return False, float("nan")


def bimodal(values: Sequence[float]) -> Tuple[bool, int]:
    """The collapse test of one point's tps on their own (no round
    adjustment): (flag, runs in the lower group, or 0)."""
    if len(values) < BIMODAL_MIN_RUNS or min(values) <= 0:
        return False, 0
    logs = numpy.log(numpy.asarray(values, dtype=float))
    flag, boundary = collapse(logs - numpy.median(logs))
    if not flag:
        return False, 0
    return True, int(numpy.sum(logs - numpy.median(logs) < boundary))


def point_residuals(runs: Mapping[Tuple[str, int], Mapping[int, float]],
                    variants: Sequence[str], clients: int
                    ) -> Tuple[Dict[str, Dict[int, float]], int]:
    """The round-adjusted log tps (round_residuals) of every variant's
    runs at one client count, by variant and round (runs at 0 tps left
    out), and the number of variants that ran at that client count."""
    have = [s for s in variants if (s, clients) in runs]
    rounds = sorted({r for s in have for r, t in runs[(s, clients)].items()
                     if t > 0})
    logs = numpy.full((len(have), len(rounds)), numpy.nan)
    for i, s in enumerate(have):
        for j, r in enumerate(rounds):
            t = runs[(s, clients)].get(r, 0)
            if t > 0:
                logs[i, j] = math.log(t)
    res = round_residuals(logs) if rounds else logs
    return ({s: {r: float(res[i, j]) for j, r in enumerate(rounds)
                 if not numpy.isnan(res[i, j])}
             for i, s in enumerate(have)}, len(have))
