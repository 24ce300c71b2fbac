"""Rounds checked: are a study's paired log ratios independent from round
to round?  Pure functions of numbers, no I/O.

Every interval of table (a) assumes rounds that are independent: a
carry-over from round to round (a variant's own slow drift, a server that
stays warm or cold) is not cancelled by pairing, and with an AR(1)
correlation of 0.5 between rounds a fifth of null studies got a false
verdict (issue 52's audit).  Two statistics of each point's log ratios,
in round order, look for it:
  - lag1: the lag-1 autocorrelation of their ranks (carry-over makes it
    positive);
  - change: Pettitt's statistic, max over t of |U_t|, U_t the sum of the
    signs of x_j - x_i over i <= t < j (a shift of level part way through
    the study).
Both are ranks only, so any shape of noise, a collapse's outlying runs
included, leaves their null distribution alone.  Their p-values come from
SERIAL_DRAWS permutations of the rounds (a fixed seed): per point, the
smaller of its two p-values, calibrated on the same permutations
(point_p); and study-wide, lag1 summed over every point (each times the
square root of its rounds), with one permutation of the rounds for the
whole study, which keeps the points' correlation with each other (the
baseline is in every ratio of its client count): study_p, one-sided.  A
point whose point_p is below POINT_ALPHA, or whose study's study_p is
below STUDY_ALPHA, is dependent, and its verdict is withheld
(lockstudy.stats): with 12 rounds no interval valid under dependence
(a block bootstrap, or the signed-rank interval of block means) reaches
the study's level.

Calls lockstudy.model.
"""

import math
from typing import Mapping, Optional, Sequence, Tuple

import numpy
from scipy import stats as scipy_stats

from .model import SerialCheck

# the level of each check: a point of independent rounds is flagged by
# its own check at most POINT_ALPHA of the time, a study of independent
# rounds by the study-wide one at most STUDY_ALPHA (chosen by simulation:
# with an AR(1) correlation of 0.5 over 12 rounds the two together flag
# over 90 % of studies at the defaults, test_simulation.py); the
# permutations and their seed; the fewest rounds a point's check looks at
POINT_ALPHA = 0.01
STUDY_ALPHA = 0.10
SERIAL_DRAWS = 2000
SERIAL_SEED = 52
SERIAL_MIN_ROUNDS = 5
# log ratios closer than this are ties (a part in a billion)
TIE = 1e-9


def _centred(r: numpy.ndarray) -> numpy.ndarray:
    """Ranks centred on their mean, each row."""
    return r - r.mean(axis=-1, keepdims=True)


def lag1(ranks: numpy.ndarray) -> numpy.ndarray:
    """The lag-1 autocorrelation of each row of ranks; 0 for a row of
    equal ranks."""
    r = _centred(numpy.atleast_2d(ranks))
    den = numpy.sum(r * r, axis=-1)
    num = numpy.sum(r[:, 1:] * r[:, :-1], axis=-1)
    with numpy.errstate(divide="ignore", invalid="ignore"):
        return numpy.where(den > 0, num / den, 0.0)


def change(ranks: numpy.ndarray
           ) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Pettitt's statistic K of each row of ranks and the rounds before
    its change (the t of the largest |U_t|, 1-based): U_t = 2 (sum of the
    ranks up to t) - t (n + 1)."""
    r = _centred(numpy.atleast_2d(ranks))
    u = 2 * numpy.cumsum(r, axis=-1)[:, :-1]
    k = numpy.abs(u)
    return k.max(axis=-1), k.argmax(axis=-1) + 1


def _upper_p(stat: numpy.ndarray) -> numpy.ndarray:
    """For a column of statistics, row 0 the observed and the rest the
    permutations, the share of rows whose value is at least each row's
    (with the row itself: a permutation p-value)."""
    s = numpy.sort(stat)
    above = len(s) - numpy.searchsorted(s, stat - 1e-12 * (1 + abs(stat)),
                                        side="left")
    return above / len(s)


def _min_p(a: numpy.ndarray, b: numpy.ndarray) -> float:
    """The permutation p-value of the smaller of two p-values: row 0 the
    observed statistics, the other rows the permutations'."""
    m = numpy.minimum(_upper_p(a), _upper_p(b))
    return float(numpy.mean(m <= m[0] + 1e-12))


def _orders(rounds: int) -> numpy.ndarray:
    """The identity order of the rounds, then SERIAL_DRAWS random ones."""
    rng = numpy.random.default_rng(SERIAL_SEED + rounds)
    perms = numpy.argsort(rng.random((SERIAL_DRAWS, rounds)), axis=1)
    return numpy.vstack([numpy.arange(rounds), perms])


def _permuted(row: numpy.ndarray, orders: numpy.ndarray) -> numpy.ndarray:
    """The ranks of a point's values (nan for a missing round) in each
    order of the study's rounds, its missing rounds left out.  Values
    within TIE of each other tie and get their mean rank: ratios of tps
    that differ by a float's rounding only are equal."""
    have = ~numpy.isnan(row)
    ranked = numpy.full(len(row), numpy.nan)
    ranked[have] = scipy_stats.rankdata(numpy.round(row[have] / TIE))
    x = ranked[orders]
    return x[~numpy.isnan(x)].reshape(len(orders), -1)


def check(series: Sequence[Mapping[int, float]]
          ) -> Tuple[Tuple[Optional[SerialCheck], ...], Optional[float]]:
    """The check of each point's log ratios (a mapping round -> log ratio,
    in any order) and study_p, one permutation of the study's rounds for
    every point; None for a point of fewer than SERIAL_MIN_ROUNDS rounds,
    and a study_p of None when none has as many."""
    rounds = sorted({r for s in series for r in s})
    col = {r: j for j, r in enumerate(rounds)}
    orders = _orders(len(rounds))
    out = []
    pooled = numpy.zeros(len(orders))
    for s in series:
        if len(s) < SERIAL_MIN_ROUNDS:
            out.append(None)
            continue
        row = numpy.full(len(rounds), numpy.nan)
        for r, v in s.items():
            row[col[r]] = v
        x = _permuted(row, orders)
        n = x.shape[1]
        a, (k, t) = lag1(x), change(x)
        pooled += a * math.sqrt(n)
        out.append(SerialCheck(float(a[0]), float(_upper_p(a)[0]),
                               float(_upper_p(k)[0]), int(t[0]),
                               _min_p(a, k)))
    if all(c is None for c in out):
        return tuple(out), None
    return tuple(out), float(_upper_p(pooled)[0])


def dependent(point: Optional[SerialCheck], study_p: Optional[float]
              ) -> bool:
    """Whether a point's rounds fail the check: its own point_p below
    POINT_ALPHA or the study's study_p below STUDY_ALPHA."""
    return (point is not None and point.point_p < POINT_ALPHA) \
        or (study_p is not None and study_p < STUDY_ALPHA)
