"""The statistics of table (m): lock counts per transaction, each variant
against the baseline.  Pure functions of numbers, no I/O.

A row is one count (kind, name, measure) of a point (a variant at a client
count), over the paired rounds: the rounds in which both the variant and
the baseline ran at that client count, a tranche or call site absent from
a run counting 0.  Every row has one statistic, the rate ratio of sums:
each side's counts summed over the paired rounds, per 1000 of its
transactions summed over the same rounds (pgbench's transactions actually
processed), the variant's rate over the baseline's; infinite where only
the baseline's sum is 0.  Beside it:
  - p, of an exact paired sign-flip test over the rounds: with no effect,
    the variant's and the baseline's rates of one round (counts per
    transaction) are exchangeable, so the statistic is computed for every
    way of swapping the two within some rounds, 2^n ways for n rounds
    (above MAX_EXACT_ROUNDS rounds a fixed sample of MONTE_CARLO_FLIPS
    ways, the identity among them), and p is the share at least as large
    as the observed one.  The statistic is |ln((e_v + 0.5) / (e_b +
    0.5))|, e a side's rates weighted by each round's mean transactions
    and summed (its counts, on the scale of the two sides' mean
    transactions), the 0.5 (CONTINUITY) keeping zeros finite.  Rates,
    not whole runs, are swapped so that a variant that only runs more
    transactions per run, at equal rates, is not found different.  The
    smallest p is 2 / 2^n: below min_mark_rounds() rounds no row can be
    marked;
  - q, the Benjamini-Hochberg adjusted p over the rows of the point; a row
    is marked * when q <= Q_MARK.  On average over studies at most Q_MARK
    of the marked rows are marked by chance (for independent or positively
    dependent rows);
  - an interval of the rate ratio at the confidence level asked: the
    percentile interval of a bootstrap over the paired rounds (the rounds
    resampled with replacement, BOOTSTRAP_RESAMPLES times, a fixed seed),
    both sides of a round kept together.
Rows zero in every paired run of both sides are left out; the others are
sorted by the size of the change, |ln((rate_v + 1) / (rate_b + 1))| (ties
by kind, name, measure): the 1 (one event, or ms, per 1000 transactions)
keeps a change from 0 to a rare event below a doubling of a frequent one.

Calls lockstudy.model (RunKey, MechanismRow, MechanismPoint).
"""

import functools
import math
from typing import Dict, List, Sequence, Tuple

import numpy

from .model import (MECHANISM_COLUMNS, MechanismPoint, MechanismRow,
                    RunKey)

# the floor of the sort key, per 1000 transactions
CHANGE_FLOOR = 1.0
# a row is marked * at this Benjamini-Hochberg q or below
Q_MARK = 0.05
# the statistic of the sign-flip test adds this many events to each side
CONTINUITY = 0.5
# the sign-flip test: every flip up to this many rounds, else a sample
MAX_EXACT_ROUNDS = 16
MONTE_CARLO_FLIPS = 20000
FLIP_SEED = 3302
# the bootstrap of the interval
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 3304
# a statistic within this much of the observed one counts as at least as
# large (equal values computed by different sums)
TIE = 1e-9
# the flips or resamples of one batch of rows times its rows, at most
BATCH = 1 << 20

CountKey = Tuple[str, str, str]			# (kind, name, measure)
Counts = Dict[RunKey, Dict[CountKey, float]]


# one row of table (m), one point (model)
Row = MechanismRow
Point = MechanismPoint
# the columns of mechanism.csv
COLUMNS = MECHANISM_COLUMNS


def paired_rounds(transactions: Dict[RunKey, float], base: str,
                  variant: str, clients: int) -> List[int]:
    """The rounds, ascending, in which both the variant and the baseline
    ran at that client count."""
    return sorted(r for (v, c, r) in transactions
                  if v == variant and c == clients
                  and (base, c, r) in transactions)


def round_counts(counts: Counts, variant: str, clients: int,
                 rounds: Sequence[int], keys: Sequence[CountKey]
                 ) -> numpy.ndarray:
    """The counts of the keys in those rounds of the variant at that
    client count, shape (rounds, keys), 0 where a run did not count
    one."""
    return numpy.array([[counts.get((variant, clients, r), {}).get(k, 0.0)
                         for k in keys] for r in rounds],
                       dtype=float).reshape(len(rounds), len(keys))


def rates(counts: numpy.ndarray, transactions: numpy.ndarray
          ) -> numpy.ndarray:
    """The rate of sums per 1000 transactions: counts, shape (rounds,) or
    (rounds, rows), summed over the rounds, over the transactions, shape
    (rounds,), summed; shape () or (rows,)."""
    return 1000 * numpy.sum(counts, axis=0) / numpy.sum(transactions)


def ratio(base_rate: numpy.ndarray, variant_rate: numpy.ndarray
          ) -> numpy.ndarray:
    """variant_rate / base_rate, elementwise: inf where only the base is
    0, nan where both are."""
    with numpy.errstate(divide="ignore", invalid="ignore"):
        return numpy.true_divide(variant_rate, base_rate)


@functools.lru_cache(maxsize=None)
def flips(n: int) -> numpy.ndarray:
    """The flips of the sign-flip test of n rounds, shape (flips, n), 1
    where the two sides of a round are swapped, the identity first.  Up
    to MAX_EXACT_ROUNDS rounds, the 2^(n-1) flips that leave the last
    round as it is: a flip and its complement (every round swapped the
    other way) give one statistic, so these weigh as all 2^n.  Above, the
    identity then MONTE_CARLO_FLIPS - 1 flips drawn with seed FLIP_SEED.
    Read-only."""
    if n <= MAX_EXACT_ROUNDS:
        f = (numpy.arange(2 ** max(n - 1, 0))[:, None]
             >> numpy.arange(n)) & 1
    else:
        rng = numpy.random.default_rng(FLIP_SEED)
        f = numpy.vstack([numpy.zeros((1, n), dtype=int),
                          rng.integers(0, 2, (MONTE_CARLO_FLIPS - 1, n))])
    f = f.astype(float)
    f.flags.writeable = False
    return f


def _batches(rows: int, per_row: int) -> List[slice]:
    """Slices of the rows, each at most BATCH // per_row rows (one at
    least)."""
    step = max(1, BATCH // max(1, per_row))
    return [slice(i, min(i + step, rows)) for i in range(0, rows, step)]


def sign_flip_p(base_counts: numpy.ndarray, base_tx: numpy.ndarray,
                variant_counts: numpy.ndarray, variant_tx: numpy.ndarray
                ) -> numpy.ndarray:
    """The two-sided p of the paired sign-flip test of each row: counts of
    shape (rounds, rows), transactions of shape (rounds,); shape (rows,).
    What a flip swaps are the two rates of a round, counts per
    transaction, each round weighted by the mean of its two runs'
    transactions: with e_v = sum over the rounds of weight x rate of the
    variant, e_b that of the baseline (counts on a common scale), the
    statistic is |ln((e_v + CONTINUITY) / (e_b + CONTINUITY))|.  p is the
    share of the flips (flips()) whose statistic is at least the observed
    one (to TIE)."""
    cb = numpy.asarray(base_counts, dtype=float)
    cv = numpy.asarray(variant_counts, dtype=float)
    tb = numpy.asarray(base_tx, dtype=float)
    tv = numpy.asarray(variant_tx, dtype=float)
    n, k = cb.shape
    f = flips(n)
    weight = ((tb + tv) / 2)[:, None]
    eb = weight * cb / tb[:, None]
    ev = weight * cv / tv[:, None]
    # with flip f, e_v is e_v + f . (b - v) and e_b the rest of both,
    # which no flip changes
    both = eb.sum(axis=0) + ev.sum(axis=0) + 2 * CONTINUITY
    p = numpy.empty(k)
    for s in _batches(k, len(f)):
        v = ev[:, s].sum(axis=0) + CONTINUITY + f @ (eb[:, s] - ev[:, s])
        t = numpy.abs(numpy.log(v / (both[s] - v)))
        p[s] = numpy.mean(t >= t[0] - TIE, axis=0)
    return p


def bh_q(p: Sequence[float]) -> numpy.ndarray:
    """The Benjamini-Hochberg adjusted p (q) of each of m p-values, shape
    (m,): q(i) = min over j with p(j) >= p(i) of m p(j) / rank(j), at most
    1."""
    p = numpy.asarray(p, dtype=float)
    m = len(p)
    order = numpy.argsort(p, kind="stable")
    scaled = p[order] * m / numpy.arange(1, m + 1)
    q = numpy.empty(m)
    q[order] = numpy.minimum(
        numpy.minimum.accumulate(scaled[::-1])[::-1], 1.0)
    return q


@functools.lru_cache(maxsize=None)
def resamples(n: int) -> numpy.ndarray:
    """The bootstrap of n rounds: shape (BOOTSTRAP_RESAMPLES, n), how many
    times each round is drawn in each resample (each row sums to n),
    drawn with seed BOOTSTRAP_SEED.  Read-only."""
    rng = numpy.random.default_rng(BOOTSTRAP_SEED)
    drawn = rng.integers(0, n, (BOOTSTRAP_RESAMPLES, n))
    w = numpy.zeros((BOOTSTRAP_RESAMPLES, n))
    numpy.add.at(w, (numpy.arange(BOOTSTRAP_RESAMPLES)[:, None], drawn), 1)
    w.flags.writeable = False
    return w


def _percentiles(r: numpy.ndarray, a: float
                 ) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The order statistics of ranks floor(a (B - 1)) + 1 and ceil((1 -
    a) (B - 1)) + 1 of each row of r, shape (rows, resamples), B its
    values other than nan; nan for a row of nan only."""
    low, high = numpy.full(len(r), numpy.nan), numpy.full(len(r), numpy.nan)
    full = ~numpy.isnan(r).any(axis=1)
    last = r.shape[1] - 1
    ranks = [math.floor(a * last), math.ceil((1 - a) * last)]
    if full.any():
        x = numpy.partition(r[full], ranks, axis=1)
        low[full], high[full] = x[:, ranks[0]], x[:, ranks[1]]
    for i in numpy.flatnonzero(~full):
        x = numpy.sort(r[i][~numpy.isnan(r[i])])
        if len(x):
            low[i] = x[math.floor(a * (len(x) - 1))]
            high[i] = x[math.ceil((1 - a) * (len(x) - 1))]
    return low, high


def bootstrap_ci(base_counts: numpy.ndarray, base_tx: numpy.ndarray,
                 variant_counts: numpy.ndarray, variant_tx: numpy.ndarray,
                 confidence: float) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The percentile interval (low, high) of the rate ratio of each row,
    counts of shape (rounds, rows), transactions (rounds,); each of shape
    (rows,).  Over the resamples (resamples()) whose ratio is defined (not
    0/0), B of them, low and high are the order statistics of ranks
    floor(a (B - 1)) + 1 and ceil((1 - a) (B - 1)) + 1, a = (1 -
    confidence) / 2; inf where only the base's sums are 0, nan when no
    resample is defined."""
    cb = numpy.asarray(base_counts, dtype=float)
    cv = numpy.asarray(variant_counts, dtype=float)
    n, k = cb.shape
    w = resamples(n)
    ttb = w @ numpy.asarray(base_tx, dtype=float)
    ttv = w @ numpy.asarray(variant_tx, dtype=float)
    a = (1 - confidence) / 2
    low, high = numpy.empty(k), numpy.empty(k)
    for s in _batches(k, len(w)):
        r = ratio((w @ cb[:, s]) / ttb[:, None],
                  (w @ cv[:, s]) / ttv[:, None]).T
        low[s], high[s] = _percentiles(r, a)
    return low, high


def min_mark_rounds() -> int:
    """The fewest rounds whose sign-flip test can give p <= Q_MARK: the
    smallest p of n rounds is 2 / 2^n."""
    n = 1
    while 2.0 ** (1 - n) > Q_MARK:
        n += 1
    return n


def change(base_rate: float, variant_rate: float) -> float:
    """The size of the change between two rates per 1000 transactions,
    the sort key of the rows."""
    return abs(math.log((variant_rate + CHANGE_FLOOR)
                        / (base_rate + CHANGE_FLOOR)))


def sort_key(row: Row) -> Tuple[float, str, str, str]:
    """The order of the rows: the largest change first, then by kind,
    name and measure."""
    return (-row.change, row.kind, row.name, row.measure)


def compare(point: Tuple[str, int, List[int]], keys: Sequence[CountKey],
            base: Tuple[numpy.ndarray, numpy.ndarray],
            variant: Tuple[numpy.ndarray, numpy.ndarray],
            confidence: float) -> List[Row]:
    """The rows of the count keys of a point (variant, clients, rounds),
    in the order of keys, from each side's (counts, transactions) in the
    paired rounds: counts of shape (rounds, keys), transactions (rounds,),
    no key zero on both sides."""
    v, clients, rounds = point
    (cb, tb), (cv, tv) = base, variant
    rb, rv = rates(cb, tb), rates(cv, tv)
    ratios = ratio(rb, rv)
    low, high = bootstrap_ci(cb, tb, cv, tv, confidence)
    p = sign_flip_p(cb, tb, cv, tv)
    q = bh_q(p)
    return [Row(v, clients, key[0], key[1], key[2], len(rounds),
                float(rb[i]), float(rv[i]), float(ratios[i]),
                float(low[i]), float(high[i]), float(p[i]), float(q[i]),
                change(float(rb[i]), float(rv[i])),
                "*" if q[i] <= Q_MARK else "")
            for i, key in enumerate(keys)]


def analyse(transactions: Dict[RunKey, float], counts: Counts,
            variants: Sequence[str], confidence: float) -> List[Point]:
    """The points of table (m): for each variant but the baseline (the
    first), in that order, and each of its client counts, ascending, the
    rows of every count key of the paired runs not zero on both sides.
    transactions: per run; counts: per run, per key, absent keys 0;
    confidence: the level of the intervals."""
    base = variants[0]
    points = []
    for v in variants[1:]:
        for c in sorted({c for (s, c, r) in transactions if s == v}):
            rounds = paired_rounds(transactions, base, v, c)
            keys = sorted({k for r in rounds for s in (base, v)
                           for k in counts.get((s, c, r), {})})
            sides = []
            for s in (base, v):
                sides.append((round_counts(counts, s, c, rounds, keys),
                              numpy.array([transactions[(s, c, r)]
                                           for r in rounds])))
            used = [i for i in range(len(keys))
                    if sides[0][0][:, i].any() or sides[1][0][:, i].any()]
            rows = []
            if used:
                rows = compare((v, c, rounds), [keys[i] for i in used],
                               (sides[0][0][:, used], sides[0][1]),
                               (sides[1][0][:, used], sides[1][1]),
                               confidence)
            rows.sort(key=sort_key)
            points.append(Point(v, c, tuple(rounds), tuple(rows)))
    return points
