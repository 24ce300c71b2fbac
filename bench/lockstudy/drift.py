"""The drift of a study's points over its rounds, and the ratio to the
baseline by the position a variant ran in within its round, each with the
range chance gives it: pure functions of numbers, no I/O.

A study's tps are given as a mapping (variant, clients, round) -> tps, as
to lockstudy.stats.  Calls lockstudy.stats (by_point) and lockstudy.model.
"""

import functools
import math
from typing import Dict, List, Mapping, Sequence, Tuple

import numpy

from .model import RunKey
from .stats import by_point

# the level of the drift and position tables' null ranges, over all the
# cells of one table together (Bonferroni), and the draws they are
# simulated from
RANGE_CONFIDENCE = 0.95
RANGE_DRAWS = 4000
# the mark of a number outside the range chance gives it
MARK = "*"


def successive_noise(values: Sequence[float]) -> float:
    """The noise of a series of log tps from its successive differences,
    sqrt(sum (x[i+1] - x[i])^2 / (2 (n - 1))): a slow drift barely moves
    it; nan below 2 values."""
    x = numpy.asarray(values, dtype=float)
    if len(x) < 2:
        return float("nan")
    return float(math.sqrt(numpy.sum(numpy.diff(x) ** 2)
                           / (2 * (len(x) - 1))))


@functools.lru_cache(maxsize=None)
def drift_quantile(k: int, level: float) -> float:
    """The level quantile of |median(last k) - median(first k)| of 3k
    values of standard normal noise, scaled by their successive_noise:
    the null distribution of a point's log drift over its noise.
    Simulated with a fixed seed."""
    rng = numpy.random.default_rng(7000 + k)
    x = rng.standard_normal((RANGE_DRAWS, 3 * k))
    d = numpy.abs(numpy.median(x[:, -k:], axis=1)
                  - numpy.median(x[:, :k], axis=1))
    s = numpy.sqrt(numpy.sum(numpy.diff(x, axis=1) ** 2, axis=1)
                   / (2 * (3 * k - 1)))
    return float(numpy.quantile(d / s, level))


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


def drift_ranges(tps: Mapping[RunKey, float], variants: Sequence[str]
                 ) -> Dict[Tuple[str, int], Tuple[float, float]]:
    """Per point of drift(), the range of its drift under no drift at the
    point's noise (successive_noise of its log tps in round order), at
    RANGE_CONFIDENCE over the table's points together (Bonferroni): a
    drift outside it is not chance.  Points with a run at 0 tps are left
    out."""
    d = drift(tps, variants)
    if not d:
        return {}
    level = 1 - (1 - RANGE_CONFIDENCE) / len(d)
    runs = by_point(tps)
    out = {}
    for key in d:
        mine = runs[key]
        values = [mine[r] for r in sorted(mine)]
        if min(values) <= 0:
            continue
        s = successive_noise(numpy.log(values))
        q = drift_quantile(len(values) // 3, level) * s
        out[key] = (math.exp(-q), math.exp(q))
    return out


def _log_ratios(tps: Mapping[RunKey, float],
                positions: Mapping[RunKey, int], variants: Sequence[str]
                ) -> Dict[str, List[Tuple[int, int, float]]]:
    """Per variant but the baseline (the first), its log ratios to the
    baseline of the same round and client count, each with its position
    and client count, (position, clients, log ratio), in round order.
    Runs without a position, or whose baseline run is missing, or either
    at 0 tps, have none."""
    base = variants[0]
    out: Dict[str, List[Tuple[int, int, float]]] = {s: [] for s in
                                                    variants[1:]}
    for (s, c, r), t in sorted(tps.items(), key=lambda x: (x[0][2],
                                                           x[0][1])):
        b = tps.get((base, c, r))
        if s in out and b and b > 0 and t > 0 and (s, c, r) in positions:
            out[s].append((positions[(s, c, r)], c, math.log(t / b)))
    return out


def _centred(mine: Sequence[Tuple[int, int, float]]
             ) -> Tuple[float, List[Tuple[int, float]]]:
    """The median of a variant's log ratios over all client counts, and
    each one's position with its distance from the median of its own
    client count: centred per client count, so that a ratio that depends
    on the client count is not read as an effect of the position (issue
    52: uncentred, 9.5 to 18 % of position tables of such studies had a
    mark)."""
    by: Dict[int, List[float]] = {}
    for _, c, x in mine:
        by.setdefault(c, []).append(x)
    centre = {c: float(numpy.median(v)) for c, v in by.items()}
    return (float(numpy.median([x for _, _, x in mine])),
            [(q, x - centre[c]) for q, c, x in mine])


def position_ratios(tps: Mapping[RunKey, float],
                    positions: Mapping[RunKey, int],
                    variants: Sequence[str]
                    ) -> Dict[str, Dict[int, Tuple[float, int]]]:
    """For each variant but the baseline (the first), by the position it
    ran in within its round: its ratio to the baseline of the same round
    and client count, centred per client count (_centred), over all
    client counts: exp(M + the median of the centred log ratios at the
    position), M the median of all its log ratios; and the number of
    ratios.  A trend over the positions means drift within rounds."""
    out = {}
    for s, mine in _log_ratios(tps, positions, variants).items():
        if not mine:
            out[s] = {}
            continue
        centre, centred = _centred(mine)
        out[s] = {q: (math.exp(centre + float(numpy.median(
            [x for q2, x in centred if q2 == q]))),
            sum(q2 == q for q2, _ in centred))
            for q in sorted({q for q, _ in centred})}
    return out


@functools.lru_cache(maxsize=None)
def median_quantile(n: int, level: float) -> float:
    """The level quantile of |median| of n values of standard normal
    noise: the null spread of a median of n, in units of the noise.
    Simulated with a fixed seed."""
    rng = numpy.random.default_rng(9000 + n)
    x = rng.standard_normal((RANGE_DRAWS, n))
    return float(numpy.quantile(numpy.abs(numpy.median(x, axis=1)), level))


def position_ranges(tps: Mapping[RunKey, float],
                    positions: Mapping[RunKey, int],
                    variants: Sequence[str]
                    ) -> Dict[str, Dict[int, Tuple[float, float]]]:
    """For each entry of position_ratios, the range of its median under no
    effect of the position, at the variant's noise: about the median of
    all its log ratios M, exp(M +- q s), s the standard deviation of its
    log ratios centred per client count and q the median_quantile of as
    many values as the entry has, at RANGE_CONFIDENCE over the table's
    entries together (Bonferroni).  An entry outside it is not chance."""
    by = {s: mine for s, mine in _log_ratios(tps, positions,
                                             variants).items() if mine}
    entries = sum(len({q for q, _, _ in mine}) for mine in by.values())
    if not entries:
        return {}
    level = 1 - (1 - RANGE_CONFIDENCE) / entries
    out: Dict[str, Dict[int, Tuple[float, float]]] = {}
    for s, mine in by.items():
        if len(mine) < 2:
            continue
        centre, centred = _centred(mine)
        sd = float(numpy.std([x for _, x in centred], ddof=1))
        out[s] = {}
        for q in sorted({q for q, _ in centred}):
            n = sum(q2 == q for q2, _ in centred)
            half = median_quantile(n, level) * sd
            out[s][q] = (math.exp(centre - half), math.exp(centre + half))
    return out
