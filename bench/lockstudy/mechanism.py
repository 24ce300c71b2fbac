"""The statistics of table (m): lock counts per transaction, each variant
against the baseline.  Pure functions of numbers, no I/O.

Each count of a run is taken per 1000 transactions of that run (pgbench's
transactions actually processed), a tranche or call site absent from a run
counting 0.  Rates are paired by round as the tps are: over the rounds in
which both the variant and the baseline ran at that client count, the
per-round ratio variant / base if the base's rate is above 0 in every one
of them, else the per-round difference variant - base; then the median of
these and its order-statistics interval at the confidence level asked, for
each row on its own (not corrected for the number of rows: the table
explains a verdict of table (a), it is not one), min-max below the minimum
rounds.  A row is marked * when its interval, of coverage at least the
level, lies wholly above or below 1 (ratio) or 0 (difference).  Rows zero
in every paired run of both sides are left out; the others are sorted by
the size of the change, |ln((median_v + 1) / (median_b + 1))|, median_v
and median_b the medians of each side's rates over the paired rounds (ties
by kind, name, measure): the 1 (one event, or ms, per 1000 transactions)
keeps a change from 0 to a rare event below a doubling of a frequent one.

Calls lockstudy.stats (median_ci) and lockstudy.data (the type RunKey).
"""

import math
from typing import Dict, Iterable, List, NamedTuple, Sequence, Tuple

import numpy

from .data import RunKey
from .stats import median_ci

# the floor of the sort key, per 1000 transactions
CHANGE_FLOOR = 1.0

CountKey = Tuple[str, str, str]			# (kind, name, measure)
Counts = Dict[RunKey, Dict[CountKey, float]]


class Row(NamedTuple):
    """One row of table (m) and of mechanism.csv, its columns in order."""
    variant: str
    clients: int
    kind: str				# lwlock or spin
    name: str				# tranche, or "func file:line"
    measure: str
    rounds: int				# the rounds paired
    base_median: float		# the medians of the rates of each side
    variant_median: float
    stat: str				# ratio or diff
    median: float
    ci_low: float
    ci_high: float
    coverage: float
    change: float			# the sort key
    marker: str				# "*" or ""


# the columns of mechanism.csv
COLUMNS = Row._fields


class Point(NamedTuple):
    """A variant other than the baseline at one client count: the rounds
    paired with the baseline's and the rows, sorted by the change."""
    variant: str
    clients: int
    rounds: List[int]
    rows: List[Row]


def paired_rounds(transactions: Dict[RunKey, float], base: str,
                  variant: str, clients: int) -> List[int]:
    """The rounds, ascending, in which both the variant and the baseline
    ran at that client count."""
    return sorted(r for (v, c, r) in transactions
                  if v == variant and c == clients
                  and (base, c, r) in transactions)


def rates(counts: Counts, transactions: Dict[RunKey, float], variant: str,
          clients: int, rounds: Iterable[int], key: CountKey) -> List[float]:
    """The count of key per 1000 transactions in each of those rounds of
    the variant at that client count, 0 where the run did not count it."""
    return [1000 * counts.get((variant, clients, r), {}).get(key, 0.0)
            / transactions[(variant, clients, r)] for r in rounds]


def paired_values(base_rates: Sequence[float],
                  variant_rates: Sequence[float]
                  ) -> Tuple[str, float, List[float]]:
    """(stat, its value of no change, the per-round values): the ratios
    variant / base if every base rate is above 0, else the differences
    variant - base."""
    if all(x > 0 for x in base_rates):
        return "ratio", 1.0, [v / b for v, b in zip(variant_rates,
                                                    base_rates)]
    return "diff", 0.0, [v - b for v, b in zip(variant_rates, base_rates)]


def change(base_median: float, variant_median: float) -> float:
    """The size of the change, the sort key of the rows."""
    return abs(math.log((variant_median + CHANGE_FLOOR)
                        / (base_median + CHANGE_FLOOR)))


def sort_key(row: Row) -> Tuple[float, str, str, str]:
    """The order of the rows: the largest change first, then by kind,
    name and measure."""
    return (-row.change, row.kind, row.name, row.measure)


def compare(point: Tuple[str, int, List[int]], key: CountKey,
            base_rates: Sequence[float], variant_rates: Sequence[float],
            confidence: float) -> Row:
    """The row of one count key of a point (variant, clients, rounds)
    from the rates of both sides in the paired rounds."""
    variant, clients, rounds = point
    stat, none, values = paired_values(base_rates, variant_rates)
    med, low, high, coverage = median_ci(values, confidence)
    mb = float(numpy.median(base_rates))
    mv = float(numpy.median(variant_rates))
    marked = coverage >= confidence and (low > none or high < none)
    return Row(variant, clients, key[0], key[1], key[2], len(rounds), mb, mv,
               stat, med, low, high, coverage, change(mb, mv),
               "*" if marked else "")


def analyse(transactions: Dict[RunKey, float], counts: Counts,
            variants: Sequence[str], confidence: float) -> List[Point]:
    """The points of table (m): for each variant but the baseline (the
    first), in that order, and each of its client counts, ascending, the
    rows of every count key of the paired runs not zero on both sides."""
    base = variants[0]
    points = []
    for v in variants[1:]:
        for c in sorted({c for (s, c, r) in transactions if s == v}):
            rounds = paired_rounds(transactions, base, v, c)
            keys = {k for r in rounds for s in (base, v)
                    for k in counts.get((s, c, r), {})}
            rows = []
            for key in keys:
                rb = rates(counts, transactions, base, c, rounds, key)
                rv = rates(counts, transactions, v, c, rounds, key)
                if any(rb) or any(rv):
                    rows.append(compare((v, c, rounds), key, rb, rv,
                                        confidence))
            rows.sort(key=sort_key)
            points.append(Point(v, c, rounds, rows))
    return points
