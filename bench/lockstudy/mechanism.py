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
  - the events of each side over the paired rounds: its counts, or for a
    measure that is not a count of independent events (EVENTS_OF) those
    of the measure that is (the blocks of a tranche's wait_ms, the
    contended waits of a call site's spins).  With fewer than MIN_EVENTS
    on either side the row has no interval (few_events()): the report
    shows its events rather than a ratio;
  - p, of an exact paired sign-flip test over the rounds: with no effect,
    the variant's and the baseline's rates of one round (counts per
    transaction) are exchangeable, so the statistic is computed for every
    way of swapping the two within some rounds, 2^n ways for n rounds
    (above MAX_EXACT_ROUNDS rounds a fixed sample of MONTE_CARLO_FLIPS
    ways, the identity among them), and p is the share at least as large
    as the observed one.  The statistic is |ln((e_v + 0.5) / (e_b +
    0.5))|, e a side's rates weighted by each round's mean transactions
    and summed (its counts, on the scale of the two sides' mean
    transactions); since a swap leaves e_v + e_b as it is, this is the
    test of |e_v - e_b|, and the 0.5 (CONTINUITY) only keeps the
    logarithm finite.  Rates, not whole runs, are swapped so that a
    variant that only runs more transactions per run, at equal rates, is
    not found different;
  - q = min(1, K p), Bonferroni over the K rows of the point that can
    reach p <= Q_MARK / K at all (Tarone: a row's least p, over the
    swaps, is that of its most extreme arrangement; a row counted in too
    few rounds cannot reach it and is left out of K).  A row is marked
    when q <= Q_MARK.  Whatever the dependence between the rows, the
    expected number of rows marked by chance is then at most Q_MARK per
    point: Benjamini-Hochberg, used before, bounds the share of chance
    marks among the marks, and rows that move together (a run with more
    contention blocks more in every tranche) came marked in clusters;
  - the same test per second of each run (seconds: transactions / tps):
    a marked row is marked "tps" rather than "*" when its count per
    second is not also different at q <= Q_MARK, that is when its ratio
    per transaction is within noise of 1 / (the tps ratio), as a count at
    a fixed rate per second (a statistics flush, a background process's
    work) is;
  - an interval of the rate ratio at the confidence level asked: the one
    of the sign-flip test inverted.  For a ratio r, the rounds' weighted
    rates of the variant divided by r are exchangeable with the
    baseline's, and a one-sided test rejects r at (1 - confidence) / 2;
    the p of that test only grows (or only falls) with r, so the bounds
    are order statistics of the ratio of the two sides' weighted rates
    summed over every subset of the rounds (flip_interval()), as the
    signed-rank interval of table (a) is one of Walsh averages.  Its
    coverage is exact, at least the level asked, as far as the two sides
    of a round are exchangeable (the bootstrap interval used before held
    a null ratio in 86 / 91 / 93 % of rows at 6 / 12 / 24 rounds).
Rows zero in every paired run of both sides are left out; the others are
sorted by the size of the change, |ln((rate_v + 1) / (rate_b + 1))| (ties
by kind, name, measure): the 1 (one event, or ms, per 1000 transactions)
keeps a change from 0 to a rare event below a doubling of a frequent one.

Calls lockstudy.model (RunKey, MechanismRow, MechanismPoint).
"""

import functools
import math
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy

from .model import (MECHANISM_COLUMNS, MechanismPoint, MechanismRow,
                    RunKey)

# the floor of the sort key, per 1000 transactions
CHANGE_FLOOR = 1.0
# a row is marked at this q or below; the bound on the expected chance
# marks of a point
Q_MARK = 0.05
# the statistic of the sign-flip test adds this many events to each side
CONTINUITY = 0.5
# the sign-flip test: every flip up to this many rounds, else a sample
MAX_EXACT_ROUNDS = 16
MONTE_CARLO_FLIPS = 20000
FLIP_SEED = 3302
# a row with fewer events than this on either side has no interval
MIN_EVENTS = 10
# the measure whose counts are the events of a measure that is not a
# count of independent events
EVENTS_OF = {"wait_ms": "blocks", "spins": "contended"}
# a statistic within this much of the observed one counts as at least as
# large (equal values computed by different sums)
TIE = 1e-9
# the flips of one batch of rows times its rows, at most
BATCH = 1 << 20

CountKey = Tuple[str, str, str]			# (kind, name, measure)
Counts = Dict[RunKey, Dict[CountKey, float]]


# one row of table (m), one point (model)
Row = MechanismRow
Point = MechanismPoint
# the columns of mechanism.csv
COLUMNS = MECHANISM_COLUMNS


class Side(NamedTuple):
    """One side of a point over its paired rounds: counts and events of
    shape (rounds, rows), transactions and seconds of shape (rounds,);
    seconds None when not known."""
    counts: numpy.ndarray
    transactions: numpy.ndarray
    events: numpy.ndarray
    seconds: Optional[numpy.ndarray] = None


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


def weighted_rates(base_counts: numpy.ndarray, base_tx: numpy.ndarray,
                   variant_counts: numpy.ndarray, variant_tx: numpy.ndarray
                   ) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Each side's rate of each round (counts per transaction) times the
    round's weight, the mean of its two runs' transactions: the base's and
    the variant's, each of the shape of the counts, (rounds, rows)."""
    cb = numpy.asarray(base_counts, dtype=float)
    cv = numpy.asarray(variant_counts, dtype=float)
    tb = numpy.asarray(base_tx, dtype=float)
    tv = numpy.asarray(variant_tx, dtype=float)
    weight = ((tb + tv) / 2)[:, None]
    return weight * cb / tb[:, None], weight * cv / tv[:, None]


def flip_test(base_counts: numpy.ndarray, base_tx: numpy.ndarray,
              variant_counts: numpy.ndarray, variant_tx: numpy.ndarray
              ) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The paired sign-flip test of each row: counts of shape (rounds,
    rows), transactions of shape (rounds,).  What a flip swaps are the
    two weighted rates of a round (weighted_rates()): with e_v their sum
    over the rounds for the variant, e_b for the baseline, the statistic
    is |ln((e_v + CONTINUITY) / (e_b + CONTINUITY))|.  Returns p, the
    share of the flips (flips()) whose statistic is at least the
    observed one (to TIE), and the least p the row's values can give
    (that of their most extreme arrangement), each of shape (rows,)."""
    eb, ev = weighted_rates(base_counts, base_tx, variant_counts, variant_tx)
    n, k = eb.shape
    f = flips(n)
    # with flip f, e_v is e_v + f . (b - v) and e_b the rest of both,
    # which no flip changes
    both = eb.sum(axis=0) + ev.sum(axis=0) + 2 * CONTINUITY
    p, least = numpy.empty(k), numpy.empty(k)
    for s in _batches(k, len(f)):
        v = ev[:, s].sum(axis=0) + CONTINUITY + f @ (eb[:, s] - ev[:, s])
        t = numpy.abs(numpy.log(v / (both[s] - v)))
        p[s] = numpy.mean(t >= t[0] - TIE, axis=0)
        least[s] = numpy.mean(t >= t.max(axis=0) - TIE, axis=0)
    return p, least


def sign_flip_p(base_counts: numpy.ndarray, base_tx: numpy.ndarray,
                variant_counts: numpy.ndarray, variant_tx: numpy.ndarray
                ) -> numpy.ndarray:
    """The two-sided p of the paired sign-flip test of each row
    (flip_test()), shape (rows,)."""
    return flip_test(base_counts, base_tx, variant_counts, variant_tx)[0]


def tarone_family(least: Sequence[float]) -> int:
    """Tarone's K of rows whose least p are least: the smallest K >= 1
    such that at most K rows can reach p <= Q_MARK / K (0 for no rows).
    A row that cannot is never marked at q = K p, so it need not count:
    the expected number of rows marked by chance stays at most Q_MARK."""
    x = numpy.asarray(least, dtype=float)
    for k in range(1, len(x) + 1):
        if numpy.count_nonzero(x <= Q_MARK / k) <= k:
            return k
    return 0


@functools.lru_cache(maxsize=None)
def subsets(n: int) -> numpy.ndarray:
    """The subsets of n rounds that flip_interval() sums over, shape (n,
    N), 1 where a round is in: the flips of flips() and their
    complements, so every subset up to MAX_EXACT_ROUNDS rounds, the empty
    one first.  Read-only."""
    f = flips(n)
    s = numpy.vstack([f, 1 - f]).T.copy()
    s.flags.writeable = False
    return s


def flip_interval(base_counts: numpy.ndarray, base_tx: numpy.ndarray,
                  variant_counts: numpy.ndarray, variant_tx: numpy.ndarray,
                  confidence: float) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The interval (low, high) of the rate ratio of each row, counts of
    shape (rounds, rows), transactions (rounds,); each of shape (rows,).
    It is the sign-flip test of flip_test() inverted, one side at a time
    at a = (1 - confidence) / 2.  With x and y the variant's and the
    base's weighted rates (weighted_rates()), a ratio r is rejected as too
    low when among all N subsets S of the rounds (subsets()) at most a N
    have sum_S x <= r sum_S y; so low is the k-th smallest of the
    subsets' ratios sum_S x / sum_S y, k = floor(a N) + 1, a subset whose
    two sums are 0 counting as 0, and high the k-th largest, such a
    subset counting as inf.  With few rounds low is 0 and high inf: at 2
    rounds, say, no ratio can be rejected."""
    eb, ev = weighted_rates(base_counts, base_tx, variant_counts, variant_tx)
    k = eb.shape[1]
    s = subsets(eb.shape[0])
    rank = math.floor((1 - confidence) / 2 * s.shape[1]) + 1
    low, high = numpy.empty(k), numpy.empty(k)
    for b in _batches(k, s.shape[1]):
        x, y = ev[:, b].T @ s, eb[:, b].T @ s
        none = (x == 0) & (y == 0)
        r = ratio(numpy.where(none, 1.0, y), x)
        r[none] = 0.0
        low[b] = numpy.partition(r, rank - 1, axis=1)[:, rank - 1]
        r[none] = numpy.inf
        high[b] = numpy.partition(r, -rank, axis=1)[:, -rank]
    return low, high


def min_mark_rounds(family: int = 1) -> int:
    """The fewest rounds whose sign-flip test can give p <= Q_MARK /
    family, a row's q at most Q_MARK with K = family: the smallest p of
    n rounds is 2 / 2^n."""
    n = 1
    while 2.0 ** (1 - n) > Q_MARK / max(family, 1):
        n += 1
    return n


def few_events(row: Row) -> bool:
    """Whether a row has too few events on a side for an interval."""
    return min(row.base_events, row.variant_events) < MIN_EVENTS


def change(base_rate: float, variant_rate: float) -> float:
    """The size of the change between two rates per 1000 transactions,
    the sort key of the rows."""
    return abs(math.log((variant_rate + CHANGE_FLOOR)
                        / (base_rate + CHANGE_FLOOR)))


def sort_key(row: Row) -> Tuple[float, str, str, str]:
    """The order of the rows: the largest change first, then by kind,
    name and measure."""
    return (-row.change, row.kind, row.name, row.measure)


def _marker(q: float, q_second: float) -> str:
    """The mark of a row of those q per transaction and per second (nan
    when not known): "*", "tps" when only the count per transaction
    differs, or none."""
    if q > Q_MARK:
        return ""
    return "tps" if q_second > Q_MARK else "*"


def per_second_p(base: Side, variant: Side) -> numpy.ndarray:
    """The p of the sign-flip test of each row on its counts per second
    (flip_test()), nan without the seconds of both sides."""
    if base.seconds is None or variant.seconds is None:
        return numpy.full(base.counts.shape[1], numpy.nan)
    return sign_flip_p(base.counts, base.seconds, variant.counts,
                       variant.seconds)


def compare(point: Tuple[str, int, List[int]], keys: Sequence[CountKey],
            base: Side, variant: Side, confidence: float
            ) -> Tuple[List[Row], int]:
    """The rows of the count keys of a point (variant, clients, rounds),
    in the order of keys, and Tarone's K of the point, from each side's
    counts, events, transactions and seconds in the paired rounds, no key
    zero on both sides."""
    v, clients, rounds = point
    cb, tb, cv, tv = (base.counts, base.transactions, variant.counts,
                      variant.transactions)
    rb, rv = rates(cb, tb), rates(cv, tv)
    ratios = ratio(rb, rv)
    low, high = flip_interval(cb, tb, cv, tv, confidence)
    p, least = flip_test(cb, tb, cv, tv)
    family = tarone_family(least)
    q = numpy.minimum(1.0, family * p)
    p_second = per_second_p(base, variant)
    q_second = numpy.minimum(1.0, family * p_second)
    eb, ev = base.events.sum(axis=0), variant.events.sum(axis=0)
    few = numpy.minimum(eb, ev) < MIN_EVENTS
    low[few], high[few] = numpy.nan, numpy.nan
    return [Row(v, clients, key[0], key[1], key[2], len(rounds),
                float(rb[i]), float(rv[i]), float(ratios[i]),
                float(low[i]), float(high[i]), float(p[i]), float(q[i]),
                change(float(rb[i]), float(rv[i])),
                _marker(q[i], q_second[i]),
                float(eb[i]), float(ev[i]), float(p_second[i]))
            for i, key in enumerate(keys)], family


def _side(runs: Tuple[Dict[RunKey, float], Counts,
                      Optional[Dict[RunKey, float]]],
          variant: str, clients: int, rounds: Sequence[int],
          keys: Sequence[CountKey]) -> Side:
    """One side of a point over the paired rounds, from (transactions,
    counts, seconds) per run; no seconds unless every run has them."""
    transactions, counts, seconds = runs
    at = [(variant, clients, r) for r in rounds]
    events = [(k, n, EVENTS_OF.get(m, m)) for k, n, m in keys]
    sec = None
    if seconds is not None and all(x in seconds for x in at):
        sec = numpy.array([seconds[x] for x in at], dtype=float)
    return Side(round_counts(counts, variant, clients, rounds, keys),
                numpy.array([transactions[x] for x in at], dtype=float),
                round_counts(counts, variant, clients, rounds, events), sec)


def tps_ratio(base: Side, variant: Side) -> float:
    """The variant's transactions per second over the baseline's, each
    summed over the paired rounds; nan without their seconds."""
    if base.seconds is None or variant.seconds is None or \
            not len(base.seconds):
        return math.nan
    return float((variant.transactions.sum() / variant.seconds.sum())
                 / (base.transactions.sum() / base.seconds.sum()))


def _point(runs: Tuple[Dict[RunKey, float], Counts,
                       Optional[Dict[RunKey, float]]],
           base: str, v: str, c: int, confidence: float) -> Point:
    """The point of variant v at c clients against the base (analyse())."""
    transactions, counts, _ = runs
    rounds = paired_rounds(transactions, base, v, c)
    keys = sorted({k for r in rounds for s in (base, v)
                   for k in counts.get((s, c, r), {})})
    sides = [_side(runs, s, c, rounds, keys) for s in (base, v)]
    used = [i for i in range(len(keys))
            if sides[0].counts[:, i].any() or sides[1].counts[:, i].any()]
    rows: List[Row] = []
    family = 0
    if used:
        rows, family = compare(
            (v, c, rounds), [keys[i] for i in used],
            *(x._replace(counts=x.counts[:, used], events=x.events[:, used])
              for x in sides), confidence)
    rows.sort(key=sort_key)
    return Point(v, c, tuple(rounds), tuple(rows), family,
                 tps_ratio(*sides))


def analyse(transactions: Dict[RunKey, float], counts: Counts,
            variants: Sequence[str], confidence: float,
            seconds: Optional[Dict[RunKey, float]] = None) -> List[Point]:
    """The points of table (m): for each variant but the baseline (the
    first), in that order, and each of its client counts, ascending, the
    rows of every count key of the paired runs not zero on both sides.
    transactions: per run; counts: per run, per key, absent keys 0;
    confidence: the level of the intervals; seconds: the length of each
    run (None: no test per second, no row marked "tps")."""
    runs = (transactions, counts, seconds)
    return [_point(runs, variants[0], v, c, confidence)
            for v in variants[1:]
            for c in sorted({c for (s, c, r) in transactions if s == v})]
