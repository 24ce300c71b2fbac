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


def _ratios_by_position(tps: Mapping[RunKey, float],
                        positions: Mapping[RunKey, int],
                        variants: Sequence[str]
                        ) -> Dict[str, Dict[int, Dict[int, List[float]]]]:
    """The ratios of position_ratios, by variant, position and round."""
    base = variants[0]
    out = {}
    for s in variants[1:]:
        by: Dict[int, Dict[int, List[float]]] = {}
        for (s2, c, r), t in sorted(tps.items()):
            b = tps.get((base, c, r))
            if s2 != s or not b or (s, c, r) not in positions:
                continue
            by.setdefault(positions[(s, c, r)], {}).setdefault(
                r, []).append(t / b)
        out[s] = by
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
    out = {}
    for s, by in _ratios_by_position(tps, positions, variants).items():
        out[s] = {}
        for q, rounds in by.items():
            x = [v for r in sorted(rounds) for v in rounds[r]]
            out[s][q] = (float(numpy.median(x)), len(x))
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
    all its ratios M, exp(log M +- q s), s the standard deviation of its
    log ratios about their median at each client count and q the
    median_quantile of as many values as the entry has, at
    RANGE_CONFIDENCE over the table's entries together (Bonferroni).  An
    entry outside it is not chance."""
    by = _ratios_by_position(tps, positions, variants)
    entries = sum(len(x) for x in by.values())
    if not entries:
        return {}
    level = 1 - (1 - RANGE_CONFIDENCE) / entries
    base = variants[0]
    out: Dict[str, Dict[int, Tuple[float, float]]] = {}
    for s, mine in by.items():
        logs: Dict[int, List[float]] = {}
        for (s2, c, r), t in tps.items():
            b = tps.get((base, c, r))
            if s2 == s and b and t > 0 and (s, c, r) in positions:
                logs.setdefault(c, []).append(math.log(t / b))
        every = [x for c in logs for x in logs[c]]
        centred = [x - float(numpy.median(logs[c])) for c in logs
                   for x in logs[c]]
        if len(every) < 2:
            continue
        centre = float(numpy.median(every))
        sd = float(numpy.std(centred, ddof=1))
        out[s] = {}
        for q, rounds in mine.items():
            n = sum(len(x) for x in rounds.values())
            half = median_quantile(n, level) * sd
            out[s][q] = (math.exp(centre - half), math.exp(centre + half))
    return out
