"""Tests of table (m): lockstudy.mechanism, its statistics, and the text
that lockstudy.report_locks.mechanism_text makes of them, on synthetic
studies (the simulations are test_mechanism_sim.py's).

Every expected value is computed here from the counts and transactions
of the study, independently of the package: the rounds paired with the
baseline, each side's rate of sums per 1000 transactions and their ratio,
the p of the sign-flip test over all 2^n flips (made here by
itertools.product, each side's rates picked by numpy.where; in exact
fractions on small cases), each row's least p, Tarone's K and q = K p by
their definitions, the events, the marker, the size of the change and
the order of the rows.  The interval, the test inverted, is computed here
from every subset of the rounds (itertools.product), and in fractions on
one row.  Proved here:
  - exactly twice the baseline's acquires per transaction, in runs of
    different numbers of transactions: ratio 2 in [2, 2], p the smallest
    (1/2048 of 12 rounds), marked, first; equal rates: ratio 1, p 1, not
    marked; rows zero on both sides left out; two call sites of one
    function are two rows;
  - on noisy counts every row and the order as computed here; a round
    only one side ran is not paired; 3 times the acquires are marked;
    the interval holds the ratio;
  - a base of 0 in some rounds is no special case; a tranche or call site
    absent from one side's runs counts 0: ratio 0, or infinite, without an
    error, and too few events for an interval;
  - the sign-flip test by brute force in fractions, the sample of flips
    above 16 rounds against the exact p, Tarone's K by hand, the interval
    by brute force (zeros on either side, 1 to 12 rounds) and its sample
    of subsets above 16 rounds against all of them;
  - the rounds a row needs to be marked with K rows; points without rows
    or without a round in common, the order of the points;
  - the text: heading, columns, ratios, events in place of a ratio, p and
    q, the top rows (--top) and the line on the rows left out, the line
    on the marks, the note when no row can be marked, the lines of the
    points without rows or rounds.
The class Synth, the studies and expect() serve test_report_locks.py too,
which writes the studies as files (the variants, the CSV, bad input).
"""

import dataclasses
import itertools
import math
import random
import re
from fractions import Fraction
from typing import Dict, List, Sequence, Tuple

import numpy
import pytest

from lockstudy import mechanism, report_locks


class Synth:
    """A synthetic study: its runs, LWLock rows and spin rows, each number
    kept as the text written to the CSVs, so that the package and the
    computation here read the same numbers."""

    def __init__(self) -> None:
        self.runs: List[Tuple[str, int, int, str]] = []
        self.locks: List[Tuple] = []
        self.spins: List[Tuple] = []

    def run(self, v: str, c: int, r: int, tx: int) -> None:
        self.runs.append((v, c, r, str(tx)))

    def lock(self, v: str, c: int, r: int, tranche: str, sh: float = 0,
             ex: float = 0, blocks: float = 0, wait: float = 0.0) -> None:
        self.locks.append((v, c, r, tranche, "%d" % sh, "%d" % ex,
                           "%d" % blocks, "%.3f" % wait))

    def spin(self, v: str, c: int, r: int, file: str, line: int, func: str,
             contended: float = 0, spins: float = 0) -> None:
        self.spins.append((v, c, r, file, str(line), func,
                           "%d" % contended, "%d" % spins))

    def transactions(self) -> Dict[Tuple[str, int, int], float]:
        return {(v, c, r): float(tx) for v, c, r, tx in self.runs}

    def counts(self) -> Dict:
        """counts[run][(kind, name, measure)], summed here."""
        out: Dict = {}

        def add(run, key, x):
            mine = out.setdefault(run, {})
            mine[key] = mine.get(key, 0.0) + x
        for v, c, r, t, sh, ex, blocks, wait in self.locks:
            add((v, c, r), ("lwlock", t, "acquires"), float(sh) + float(ex))
            add((v, c, r), ("lwlock", t, "blocks"), float(blocks))
            add((v, c, r), ("lwlock", t, "wait_ms"), float(wait))
        for v, c, r, file, line, func, contended, spins in self.spins:
            name = "%s %s:%s" % (func, file, line)
            add((v, c, r), ("spin", name, "contended"), float(contended))
            add((v, c, r), ("spin", name, "spins"), float(spins))
        return out


# --- the statistics computed here -------------------------------------------

def all_flips(n: int) -> numpy.ndarray:
    """All 2^n flips of n rounds, 1 where a round is swapped."""
    return numpy.array(list(itertools.product((0, 1), repeat=n)),
                       dtype=bool).reshape(-1, n)


def weighted(cb, tb, cv, tv):
    """Per round the two rates (counts per transaction), weighted by the
    round's mean transactions: the variant's, the base's."""
    cb, tb, cv, tv = (numpy.asarray(x, dtype=float) for x in (cb, tb, cv,
                                                                tv))
    w = (tb + tv) / 2
    return w * cv / tv, w * cb / tb


def flip_stats(cb, tb, cv, tv, flips=None) -> numpy.ndarray:
    """The statistic |ln((e_v + 0.5) / (e_b + 0.5))| of every flip, each
    side's weighted rates picked by numpy.where."""
    x, y = weighted(cb, tb, cv, tv)
    f = all_flips(len(x)) if flips is None else flips.astype(bool)
    ev = numpy.where(f, y, x).sum(axis=1)
    eb = numpy.where(f, x, y).sum(axis=1)
    return numpy.abs(numpy.log((ev + 0.5) / (eb + 0.5)))


def flip_p(cb, tb, cv, tv, flips=None) -> float:
    """The sign-flip p of one row by brute force: the share of the flips
    whose statistic is at least the observed one."""
    x, y = weighted(cb, tb, cv, tv)
    observed = abs(math.log((x.sum() + 0.5) / (y.sum() + 0.5)))
    t = flip_stats(cb, tb, cv, tv, flips)
    return float(numpy.mean(t >= observed - 1e-9))


def least_p(cb, tb, cv, tv) -> float:
    """The least p the row's values can give: the share of the flips at
    the largest statistic."""
    t = flip_stats(cb, tb, cv, tv)
    return float(numpy.mean(t >= t.max() - 1e-9))


def flip_p_exact(cb, tb, cv, tv) -> Fraction:
    """The sign-flip p in fractions, counts and transactions integers:
    |ln(a / b)| >= |ln(c / d)| as max(a/b, b/a) >= max(c/d, d/c), ties
    exact."""
    n = len(cb)
    w = [Fraction(tb[i] + tv[i], 2) for i in range(n)]
    x = [w[i] * Fraction(cv[i], tv[i]) for i in range(n)]
    y = [w[i] * Fraction(cb[i], tb[i]) for i in range(n)]
    half = Fraction(1, 2)

    def stat(flip):
        ev = sum((y if s else x)[i] for i, s in enumerate(flip)) + half
        eb = sum((x if s else y)[i] for i, s in enumerate(flip)) + half
        return max(ev / eb, eb / ev)
    observed = stat((0,) * n)
    flips = list(itertools.product((0, 1), repeat=n))
    return Fraction(sum(stat(f) >= observed for f in flips), len(flips))


def tarone_by_hand(least: Sequence[float]) -> int:
    """Tarone's K by its definition: the least K >= 1 with at most K
    rows whose least p is at most 0.05 / K."""
    return min(k for k in range(1, len(least) + 1)
               if sum(x <= 0.05 / k for x in least) <= k)


def div(a: float, b: float) -> float:
    """a / b, inf for a > 0 = b, nan for 0 / 0."""
    if b == 0:
        return math.inf if a > 0 else math.nan
    return a / b


def interval_by_subsets(cb, tb, cv, tv, confidence=0.95, subsets=None):
    """The sign-flip test inverted, by its definition: over every subset
    S of the rounds (itertools.product), the two sides' weighted rates
    summed and their ratio; low the k-th smallest, 0 / 0 counting as 0,
    high the k-th largest, 0 / 0 counting as inf, k = floor(a N) + 1,
    a = (1 - confidence) / 2 and N the number of subsets."""
    x, y = weighted(cb, tb, cv, tv)
    s = all_flips(len(x)) if subsets is None else subsets
    sums = [(float(x[f].sum()), float(y[f].sum())) for f in s]
    k = math.floor((1 - confidence) / 2 * len(sums)) + 1
    low = sorted(0.0 if a == b == 0 else div(a, b) for a, b in sums)
    high = sorted(math.inf if a == b == 0 else div(a, b) for a, b in sums)
    return low[k - 1], high[-k]


def rate(counts: Sequence[float], tx: Sequence[float]) -> float:
    return 1000 * sum(counts) / sum(tx)


def expect(st: Synth, variants: Sequence[str], seconds=None) -> List[Tuple]:
    """The expected points at 95% of a synthetic study."""
    return expect_counts(st.transactions(), st.counts(), variants, seconds)


def expect_counts(tx, count, variants: Sequence[str],
                  seconds=None) -> List[Tuple]:
    """The expected points at 95%: (variant, clients, rounds, rows), the
    rows dicts of the columns of mechanism.csv in the expected order."""
    base = variants[0]
    out = []
    for v in variants[1:]:
        for c in sorted({c for (s, c, r) in tx if s == v}):
            rounds = sorted(r for (s, c2, r) in tx if s == v and c2 == c
                            and (base, c, r) in tx)
            keys = {k for r in rounds for s in (base, v)
                    for k in count.get((s, c, r), {})}
            rows = [row for row in (
                expect_row((tx, count, seconds), (base, v, c, rounds), key)
                for key in keys) if row]
            family = tarone_by_hand([x.pop("least") for x in rows])
            for row in rows:
                row["q"] = min(1.0, family * row["p"])
                # nan without seconds: never above
                second = family * row["p_second"]
                row["marker"] = "" if row["q"] > 0.05 else \
                    "tps" if second > 0.05 else "*"
            rows.sort(key=lambda q: (-q["change"], q["kind"], q["name"],
                                     q["measure"]))
            out.append((v, c, rounds, rows))
    return out


def expect_row(study, point, key):
    """One expected row, but q and marker, with its least p; None when it
    is zero on both sides."""
    tx, count, seconds = study
    base, v, c, rounds = point
    events = (key[0], key[1], {"wait_ms": "blocks",
                               "spins": "contended"}.get(key[2], key[2]))

    def side(s, k=key, of=tx):
        return ([count.get((s, c, r), {}).get(k, 0.0) for r in rounds],
                [of[(s, c, r)] for r in rounds])
    (cb, tb), (cv, tv) = side(base), side(v)
    if not any(cb) and not any(cv):
        return None
    rb, rv = rate(cb, tb), rate(cv, tv)
    low, high = interval_by_subsets(cb, tb, cv, tv)
    eb, ev = sum(side(base, events)[0]), sum(side(v, events)[0])
    if min(eb, ev) < 10:
        low = high = math.nan
    p_second = math.nan if seconds is None else \
        flip_p(cb, side(base, of=seconds)[1], cv, side(v, of=seconds)[1])
    return {"variant": v, "clients": c, "kind": key[0], "name": key[1],
            "measure": key[2], "rounds": len(rounds), "base_rate": rb,
            "variant_rate": rv, "ratio": div(rv, rb), "ci_low": low,
            "ci_high": high, "p": flip_p(cb, tb, cv, tv),
            "least": least_p(cb, tb, cv, tv),
            "change": abs(math.log((rv + 1) / (rb + 1))),
            "base_events": eb, "variant_events": ev, "p_second": p_second}


def assert_points(points, want) -> None:
    """The package's points are the expected ones: the same points, rows
    and order, words equal, numbers to 1e-12."""
    assert [(p.variant, p.clients, list(p.rounds)) for p in points] == \
        [w[:3] for w in want]
    for p, w in zip(points, want):
        assert [(q.kind, q.name, q.measure) for q in p.rows] == \
            [(q["kind"], q["name"], q["measure"]) for q in w[3]]
        for q, e in zip(p.rows, w[3]):
            got = dataclasses.asdict(q)
            assert set(got) == set(e)
            for k, x in e.items():
                if isinstance(x, float):
                    assert got[k] == pytest.approx(x, rel=1e-12, abs=1e-12,
                                                   nan_ok=True), k
                else:
                    assert got[k] == x, k


def analyse(st: Synth, variants: Sequence[str]):
    return mechanism.analyse(st.transactions(), st.counts(), variants, 0.95)


def by_key(points) -> Dict:
    return {(p.variant, p.clients, q.kind, q.name, q.measure): q
            for p in points for q in p.rows}


# --- the studies ------------------------------------------------------------

def exact_study() -> Synth:
    """12 rounds of A (the baseline) and B at 1 client, B's runs about
    twice as long as A's (so its raw counts are about 4 times A's).  Per
    transaction: Doubled 3 acquires in A, 6 in B; Equal 0.5 acquires and
    0.1 blocks in both; Zero all zeros; the call sites bufmgr.c:6310 and
    bufmgr.c:6282, two functions of one file, equal in both."""
    rng = random.Random(3501)
    st = Synth()
    for r in range(1, 13):
        for s in ("A", "B"):
            tx = 10 * ((1000 if s == "A" else 2000) + rng.randrange(1000))
            k = 1 if s == "A" else 2
            st.run(s, 1, r, tx)
            st.lock(s, 1, r, "Doubled", 2 * k * tx, k * tx)
            st.lock(s, 1, r, "Equal", tx // 2, 0, tx // 10, tx / 50000)
            st.lock(s, 1, r, "Zero")
            st.spin(s, 1, r, "bufmgr.c", 6310, "WaitBufHdrUnlocked",
                    tx // 10, 3 * tx // 10)
            st.spin(s, 1, r, "bufmgr.c", 6282, "LockBufHdr", tx // 5, 0)
    return st


def noisy(rng: random.Random, mean: float, sd: float) -> float:
    """mean times log-normal noise of that sd."""
    return mean * math.exp(sd * rng.gauss(0, 1))


def noise_study() -> Synth:
    """A, B and C at 2 and 8 clients, 12 rounds, and a round 13 of B
    alone with 100 times the counts (it must not be paired); per tranche
    a rate times the variant's effect times 20% noise."""
    rng = random.Random(3502)
    mu = {"LockManager": 800, "BufferMapping": 300, "ProcArray": 40,
          "WALInsert": 10, "XidGen": 120}
    effect = {"A": {}, "B": {"LockManager": 3, "BufferMapping": 1.1,
                             "WALInsert": 1 / 3},
              "C": {"BufferMapping": 0.9, "ProcArray": 2, "XidGen": 1.05}}
    st = Synth()
    for c in (2, 8):
        for r in range(1, 14):
            for s in ("A", "B", "C"):
                if r == 13 and s != "B":
                    continue
                tx = 5000 + rng.randrange(10000)
                x = (100 if r == 13 else 1) * tx / 1000
                st.run(s, c, r, tx)
                for t in sorted(mu):
                    rate = x * mu[t] * effect[s].get(t, 1)
                    st.lock(s, c, r, t, *(int(noisy(rng, share * rate, 0.2)
                                              + 0.5)
                                          for share in (0.7, 0.3, 0.05)),
                            noisy(rng, rate / 1000, 0.3))
                st.spin(s, c, r, "lwlock.c", 1145, "LWLockWaitListLock",
                        int(noisy(rng, 2 * x, 0.3) * (2 if s == "B" else 1)),
                        int(noisy(rng, 3 * x, 0.3)))
                st.spin(s, c, r, "s_lock.c", 42, "SpinWait",
                        int(noisy(rng, 0.5 * x, 0.3) + 0.5), 0)
    return st


def base_zero_study() -> Synth:
    """A and B at 4 clients, 12 rounds.  Sometimes: A blocks 0.1 per
    transaction but none in every third round, B 0.2 in 10% noise; Fewer:
    A 0.2 but none in every fourth round, B 0.1; Gone: acquires in A
    only; LockBufHdr contended in B only."""
    rng = random.Random(3503)
    st = Synth()
    for r in range(1, 13):
        for s in ("A", "B"):
            tx = 10 * (500 + rng.randrange(1000))
            st.run(s, 4, r, tx)
            if s == "A":
                st.lock(s, 4, r, "Sometimes", tx, 0, tx // 10 if r % 3 else 0)
                st.lock(s, 4, r, "Gone", tx // 10, tx // 10)
                st.lock(s, 4, r, "Fewer", 0, 0, tx // 5 if r % 4 else 0)
            else:
                st.lock(s, 4, r, "Sometimes", tx, 0,
                        int(noisy(rng, tx / 5, 0.1)))
                st.lock(s, 4, r, "Fewer", 0, 0, tx // 10)
                st.spin(s, 4, r, "bufmgr.c", 6282, "LockBufHdr",
                        int(tx / 20 * (1 + rng.random())))
    return st


def few_rounds_study() -> Synth:
    """5 rounds of A and B at 16 clients, B twice A's acquires."""
    st = Synth()
    for r in range(1, 6):
        for s in ("A", "B"):
            tx = 1000 * (r if s == "A" else 10 - r)
            st.run(s, 16, r, tx)
            st.lock(s, 16, r, "Doubled", (1 if s == "A" else 2) * tx)
    return st


def empty_points_study() -> Synth:
    """C, A and B in that order; at 1 client acquires, at 2 only zeros,
    at 3 A alone."""
    st = Synth()
    for r in range(1, 7):
        for s in ("C", "A", "B"):
            for c in (1, 2, 3):
                if c == 3 and s != "A":
                    continue
                st.run(s, c, r, 1000 + r)
                st.lock(s, c, r, "LockManager", 10 * r if c == 1 else 0)
    return st


# --- the statistics ---------------------------------------------------------

def test_exact_rates():
    st = exact_study()
    points = analyse(st, ["A", "B"])
    q = by_key(points)
    doubled = q[("B", 1, "lwlock", "Doubled", "acquires")]
    rows = len(points[0].rows)
    assert rows == 7
    # K = 2: Doubled, and Equal's wait_ms, whose 3 decimals make its two
    # sides unequal, can reach p <= 0.05 / 2
    assert points[0].family == 2
    assert (doubled.ratio, doubled.ci_low, doubled.ci_high, doubled.p,
            doubled.q, doubled.marker) == (2, 2, 2, 1 / 2048, 2 / 2048,
                                           "*")
    assert (doubled.base_rate, doubled.variant_rate) == \
        pytest.approx((3000, 6000), rel=1e-12)
    assert points[0].rows[0] is doubled
    for key in (("lwlock", "Equal", "acquires"), ("lwlock", "Equal", "blocks"),
                ("spin", "WaitBufHdrUnlocked bufmgr.c:6310", "spins")):
        row = q[("B", 1) + key]
        assert (row.ratio, row.ci_low, row.ci_high, row.p, row.q,
                row.marker) == (1, 1, 1, 1, 1, "")


def test_exact_rates_rows_left_out_and_call_sites():
    st = exact_study()
    points = analyse(st, ["A", "B"])
    names = {(q.name, q.measure) for q in points[0].rows}
    for absent in (("Zero", "acquires"), ("Zero", "blocks"),
                   ("Doubled", "blocks"), ("Doubled", "wait_ms"),
                   ("LockBufHdr bufmgr.c:6282", "spins")):
        assert absent not in names
    assert sorted(q.name for q in points[0].rows if q.kind == "spin") == \
        ["LockBufHdr bufmgr.c:6282", "WaitBufHdrUnlocked bufmgr.c:6310",
         "WaitBufHdrUnlocked bufmgr.c:6310"]
    assert_points(points, expect(st, ["A", "B"]))


def test_noise_every_row():
    st = noise_study()
    points = analyse(st, ["A", "B", "C"])
    assert_points(points, expect(st, ["A", "B", "C"]))
    assert [(p.variant, p.clients) for p in points] == \
        [("B", 2), ("B", 8), ("C", 2), ("C", 8)]
    rows = [q for p in points for q in p.rows]
    assert {q.rounds for q in rows} == {12}
    assert all(q.ci_low <= q.ratio <= q.ci_high for q in rows)
    q = by_key(points)
    for c in (2, 8):
        assert q[("B", c, "lwlock", "LockManager", "acquires")].marker == "*"
        assert q[("C", c, "lwlock", "ProcArray", "blocks")].marker == "*"
        assert q[("C", c, "lwlock", "LockManager", "acquires")].marker == ""


def test_noise_one_row_by_hand():
    """ProcArray blocks of B at 8 clients: the rates of sums from the
    study's numbers, p in fractions over the 4096 flips, the interval by
    a loop over the resamples."""
    st = noise_study()
    tx = st.transactions()
    blocks = {(v, r): int(b) for v, c, r, t, sh, ex, b, w in st.locks
              if c == 8 and t == "ProcArray"}
    rounds = range(1, 13)
    cb = [blocks[("A", r)] for r in rounds]
    cv = [blocks[("B", r)] for r in rounds]
    tb = [int(tx[("A", 8, r)]) for r in rounds]
    tv = [int(tx[("B", 8, r)]) for r in rounds]
    points = analyse(st, ["A", "B", "C"])
    row = by_key(points)[("B", 8, "lwlock", "ProcArray", "blocks")]
    rb = Fraction(1000 * sum(cb), sum(tb))
    rv = Fraction(1000 * sum(cv), sum(tv))
    assert (row.base_rate, row.variant_rate, row.ratio) == \
        pytest.approx((float(rb), float(rv), float(rv / rb)), rel=1e-12)
    assert row.p == float(flip_p_exact(cb, tb, cv, tv))
    # the interval: the 4096 subsets' ratios of weighted rates in
    # fractions, the 103rd from each end; the empty one, 0 / 0, is the
    # first from both, so among the others the 102nd
    w = [Fraction(tb[i] + tv[i], 2) for i in range(12)]
    x = [w[i] * Fraction(cv[i], tv[i]) for i in range(12)]
    y = [w[i] * Fraction(cb[i], tb[i]) for i in range(12)]
    ratios = sorted(
        sum(x[i] for i in range(12) if f[i]) / sum(y[i] for i in range(12)
                                                  if f[i])
        for f in itertools.product((0, 1), repeat=12) if any(f))
    assert math.floor(0.025 * 4096) + 1 == 103
    assert (row.ci_low, row.ci_high) == \
        pytest.approx((float(ratios[101]), float(ratios[-102])),
                      rel=1e-12)
    assert row.ci_low <= row.ratio <= row.ci_high


def test_base_zero_no_special_case():
    st = base_zero_study()
    points = analyse(st, ["A", "B"])
    assert_points(points, expect(st, ["A", "B"]))
    q = by_key(points)
    tx = st.transactions()
    a = {r: tx[("A", 4, r)] for r in range(1, 13)}
    fewer = q[("B", 4, "lwlock", "Fewer", "blocks")]
    assert fewer.base_rate == pytest.approx(
        1000 * sum(a[r] / 5 for r in a if r % 4) / sum(a.values()),
        rel=1e-12)
    assert fewer.variant_rate == pytest.approx(100, rel=1e-12)
    blocks = {(v, r): int(b) for v, c, r, t, sh, ex, b, w in st.locks
              if t == "Fewer"}
    assert fewer.p == float(flip_p_exact(
        [blocks[("A", r)] for r in a], [int(a[r]) for r in a],
        [blocks[("B", r)] for r in a],
        [int(tx[("B", 4, r)]) for r in a]))
    # half the rate in 9 rounds, more in 3: no mark
    assert fewer.p > 0.05 and fewer.marker == ""
    sometimes = q[("B", 4, "lwlock", "Sometimes", "blocks")]
    assert (sometimes.ratio > 2, sometimes.marker) == (True, "*")
    acquires = q[("B", 4, "lwlock", "Sometimes", "acquires")]
    assert (acquires.ratio, acquires.p, acquires.marker) == (1, 1, "")


def test_ratio_zero_and_infinite():
    """Gone: acquires in A only, ratio 0; LockBufHdr: contended in B only,
    an infinite ratio, marked, without an error; too few events on a
    side for an interval, so none (nan, and the text shows the events);
    its CSV says inf."""
    points = analyse(base_zero_study(), ["A", "B"])
    q = by_key(points)
    gone = q[("B", 4, "lwlock", "Gone", "acquires")]
    assert (gone.variant_rate, gone.ratio, gone.p, gone.marker,
            gone.variant_events) == (0, 0, 1 / 2048, "*", 0)
    assert math.isnan(gone.ci_low) and math.isnan(gone.ci_high)
    assert gone.base_rate == pytest.approx(200, rel=1e-12)
    assert mechanism.few_events(gone)
    site = q[("B", 4, "spin", "LockBufHdr bufmgr.c:6282", "contended")]
    assert (site.base_rate, site.ratio, site.p, site.marker,
            site.base_events) == (0, math.inf, 1 / 2048, "*", 0)
    assert math.isnan(site.ci_low) and math.isnan(site.ci_high)
    assert site.variant_rate > 0 and site.change > 0
    # a rare event that one side lacks in every round but one
    st = Synth()
    for r in range(1, 13):
        for s in ("A", "B"):
            st.run(s, 1, r, 1000)
            st.lock(s, 1, r, "Rare", 0, 0, r == 1 and s == "A")
            st.lock(s, 1, r, "Often", 0, 0, 5 if s == "B" else r == 2)
    q = by_key(analyse(st, ["A", "B"]))
    rare = q[("B", 1, "lwlock", "Rare", "blocks")]
    assert (rare.ratio, rare.p, rare.marker, rare.base_events,
            rare.variant_events) == (0, 1, "", 1, 0)
    often = q[("B", 1, "lwlock", "Often", "blocks")]
    assert (often.ratio, often.marker, often.base_events,
            often.variant_events) == (60, "*", 1, 60)
    assert math.isnan(often.ci_low) and mechanism.few_events(often)


def test_interval_by_brute_force():
    """Small studies, zeros on one side or both among them, the interval
    of every subset of the rounds by its definition here against the
    package's, each row alone as among others; no ratio can be rejected
    at 1 or 2 rounds ([0, inf]); a lower level, a narrower interval."""
    rng = random.Random(3312)
    for n in (1, 2, 3, 5, 6, 7, 12):
        tb = [rng.randrange(50, 150) for _ in range(n)]
        tv = [rng.randrange(50, 150) for _ in range(n)]
        rows = [([rng.choice((0, 0, 1, 3, 20)) for _ in range(n)],
                 [rng.choice((0, 1, 2, 40)) for _ in range(n)])
                for _ in range(6)] + [([0] * n, [7] * n), ([5] * n, [0] * n)]
        cb = numpy.array([r[0] for r in rows], dtype=float).T
        cv = numpy.array([r[1] for r in rows], dtype=float).T
        low, high = mechanism.flip_interval(cb, tb, cv, tv, 0.95)
        for i, (b, v) in enumerate(rows):
            want = interval_by_subsets(b, tb, v, tv)
            assert (low[i], high[i]) == pytest.approx(want, rel=1e-12), \
                (n, i)
            one = mechanism.flip_interval(cb[:, i:i + 1], tb, cv[:, i:i + 1],
                                          tv, 0.95)
            assert (one[0][0], one[1][0]) == (low[i], high[i])
            if n <= 2:
                assert (low[i], high[i]) == (0, math.inf)
        low90, high90 = mechanism.flip_interval(cb, tb, cv, tv, 0.9)
        assert (low90 >= low).all() and (high90 <= high).all()


def test_interval_sampled_above_16_rounds():
    """17 rounds: the bounds from the 40000 sampled subsets lie, among
    the ratios of all 131072 subsets, within 4 standard errors of the
    2.5 % and 97.5 % points."""
    rng = numpy.random.default_rng(3313)
    n = 17
    tb, tv = rng.integers(900, 1100, (2, n)).astype(float)
    cb = rng.poisson([20, 200], (n, 2)).astype(float)
    cv = rng.poisson([24, 180], (n, 2)).astype(float)
    low, high = mechanism.flip_interval(cb, tb, cv, tv, 0.95)
    f = all_flips(n)[1:]
    se = math.sqrt(0.025 * 0.975 / (2 * mechanism.MONTE_CARLO_FLIPS))
    for i in range(2):
        x, y = weighted(cb[:, i], tb, cv[:, i], tv)
        r = (f @ x) / (f @ y)
        assert abs(numpy.mean(r < low[i]) - 0.025) < 4 * se
        assert abs(numpy.mean(r > high[i]) - 0.025) < 4 * se


def test_sign_flip_by_brute_force():
    """Small studies, zeros and ties among them, every flip in fractions
    against the package; and the package's p of several rows at once is
    that of each row alone."""
    rng = random.Random(3305)
    for n in (1, 2, 3, 5, 6, 7):
        tb = [rng.randrange(50, 150) for _ in range(n)]
        tv = [rng.randrange(50, 150) for _ in range(n)]
        rows = [([rng.choice((0, 0, 1, 3, 20)) for _ in range(n)],
                 [rng.choice((0, 1, 2, 40)) for _ in range(n)])
                for _ in range(6)]
        # equal transactions and counts swapped in one round: a tie
        rows.append(([4] * n, [4] * (n - 1) + [9]))
        cb = numpy.array([r[0] for r in rows], dtype=float).T
        cv = numpy.array([r[1] for r in rows], dtype=float).T
        got = mechanism.sign_flip_p(cb, tb, cv, tv)
        for i, (b, v) in enumerate(rows):
            want = flip_p_exact(b, tb, v, tv)
            assert got[i] == float(want), (n, i)
            assert mechanism.sign_flip_p(cb[:, i:i + 1], tb, cv[:, i:i + 1],
                                         tv)[0] == got[i]
    assert mechanism.sign_flip_p(numpy.array([[3.0]]), [10], [[3.0]],
                                 [10])[0] == 1


def test_flips():
    f = mechanism.flips(4)
    assert f.shape == (8, 4) and not f[0].any() and not f[:, 3].any()
    # every flip of the first 3 rounds, the last never swapped: a flip and
    # its complement give one statistic
    assert {tuple(x) for x in f.astype(int)} == \
        {x + (0,) for x in itertools.product((0, 1), repeat=3)}
    assert not f.flags.writeable
    big = mechanism.flips(17)
    assert big.shape == (mechanism.MONTE_CARLO_FLIPS, 17)
    assert not big[0].any() and set(numpy.unique(big)) == {0, 1}
    assert abs(big[1:].mean() - 0.5) < 0.01
    assert mechanism.flips(16).shape == (2 ** 15, 16)


def test_sign_flip_sampled_above_16_rounds():
    """17 rounds: the package's p from its 20000 flips lies within 4
    standard errors of the exact p over all 131072 flips, here."""
    rng = numpy.random.default_rng(3306)
    n = 17
    tb = rng.integers(900, 1100, n).astype(float)
    tv = rng.integers(900, 1100, n).astype(float)
    cb = rng.poisson(20, (n, 3)).astype(float)
    cv = rng.poisson([[20, 24, 30]] * n).astype(float)
    got = mechanism.sign_flip_p(cb, tb, cv, tv)
    f = all_flips(n)
    for i in range(3):
        want = flip_p(cb[:, i], tb, cv[:, i], tv, f)
        se = math.sqrt(want * (1 - want) / mechanism.MONTE_CARLO_FLIPS)
        assert abs(got[i] - want) <= 4 * se + 1e-4, i
        assert got[i] >= 1 / mechanism.MONTE_CARLO_FLIPS


def test_tarone_by_hand():
    """K: 3 rows of least p 1/2048 and 10 that cannot reach 0.05 give
    K = 3 (at K = 2, 3 rows reach 0.025); no row can reach 0.05, K = 1;
    random least p against the definition here."""
    assert mechanism.tarone_family([1 / 2048] * 3 + [1.0] * 10) == 3
    assert mechanism.tarone_family([0.5, 0.2]) == 1
    assert mechanism.tarone_family([]) == 0
    rng = random.Random(3307)
    for m in (1, 3, 10, 41):
        least = [rng.choice((1 / 2048, 1 / 512, 0.01, 0.2, 1.0,
                             rng.random() / 10)) for _ in range(m)]
        assert mechanism.tarone_family(least) == tarone_by_hand(least)


def test_subsets():
    """Every subset of the rounds once up to 16 rounds, the empty one
    first; above, the sampled flips and their complements."""
    s = mechanism.subsets(4)
    assert s.shape == (4, 16) and not s[:, 0].any()
    assert {tuple(x) for x in s.T.astype(int)} == \
        set(itertools.product((0, 1), repeat=4))
    assert not s.flags.writeable
    big = mechanism.subsets(17)
    assert big.shape == (17, 2 * mechanism.MONTE_CARLO_FLIPS)
    assert (big[:, :mechanism.MONTE_CARLO_FLIPS]
            + big[:, mechanism.MONTE_CARLO_FLIPS:] == 1).all()


def test_fewer_than_6_rounds_no_mark():
    # with K rows, 2 / 2^n <= 0.05 / K: 6 rounds for 1, 11 for 40, 12
    # for 52 (2^10 = 1024 < 52 / 0.05 = 1040)
    assert [mechanism.min_mark_rounds(k) for k in (1, 2, 40, 52)] == \
        [6, 7, 11, 12]
    (row,) = analyse(few_rounds_study(), ["A", "B"])[0].rows
    # the interval, the 1st of 32 subsets from each end, is the empty
    # one's: below 6 rounds it cannot exclude a ratio either
    assert (row.rounds, row.ratio, row.ci_low, row.ci_high, row.p, row.q,
            row.marker) == (5, 2, 0, math.inf, 1 / 16, 1 / 16, "")


def test_points_without_rows_or_common_rounds():
    points = analyse(empty_points_study(), ["C", "A", "B"])
    assert [(p.variant, p.clients, len(p.rounds), len(p.rows))
            for p in points] == [("A", 1, 6, 1), ("A", 2, 6, 0),
                                 ("A", 3, 0, 0), ("B", 1, 6, 1),
                                 ("B", 2, 6, 0)]


def test_helpers():
    assert mechanism.change(0.0, 1.0) == pytest.approx(math.log(2))
    assert mechanism.change(3.0, 1.0) == pytest.approx(math.log(2))
    # a change from 0 to a rare event sorts below a doubling of a
    # frequent one
    assert mechanism.change(0.0, 0.5) < mechanism.change(100.0, 200.0)
    tx = {("A", 1, 1): 500.0, ("B", 1, 1): 2000.0, ("B", 1, 2): 10.0}
    counts = {("A", 1, 1): {("lwlock", "X", "blocks"): 5.0}}
    assert mechanism.paired_rounds(tx, "A", "B", 1) == [1]
    key = ("lwlock", "X", "blocks")
    assert mechanism.round_counts(counts, "A", 1, [1], [key]).tolist() == \
        [[5.0]]
    assert mechanism.round_counts(counts, "B", 1, [1, 2], [key]).tolist() \
        == [[0.0], [0.0]]
    assert mechanism.round_counts(counts, "B", 1, [1, 2], []).shape == (2, 0)
    assert float(mechanism.rates(numpy.array([5.0, 3.0]),
                                 numpy.array([500.0, 300.0]))) == 10
    assert list(mechanism.ratio(numpy.array([2.0, 0.0, 0.0, 4.0]),
                                numpy.array([3.0, 1.0, 0.0, 0.0]))) == \
        pytest.approx([1.5, math.inf, math.nan, 0.0], nan_ok=True)
    assert list(mechanism.COLUMNS) == [
        "variant", "clients", "kind", "name", "measure", "rounds",
        "base_rate", "variant_rate", "ratio", "ci_low", "ci_high", "p", "q",
        "change", "marker", "base_events", "variant_events", "p_second"]


# --- the text of (m) --------------------------------------------------------

def text_of(points, base="A", top=10, csv_name="mechanism.csv"):
    return report_locks.mechanism_text(points, base, 0.95, top, csv_name)


def test_mechanism_text_exact_rates():
    st = exact_study()
    text = text_of(analyse(st, ["A", "B"]))
    (want,) = expect(st, ["A", "B"])
    lines = text.split("\n")
    assert lines[0] == (
        "(m) mechanism: B against A, 1 clients: per 1000 transactions over "
        "the 12 rounds both ran, each side's counts summed over its "
        "transactions; ratio of the two rates with its 95% interval, the "
        "test inverted; p of the exact paired sign-flip test; q = K p, K = "
        "2 of the 7 rows (Tarone: at most K rows can reach p <= 0.05 / K); "
        "* q <= 0.05")
    assert re.fullmatch(r" lock or call site +\| measure +\| +A \| +B \| "
                        r"+ratio \| +95% interval \| +p \| +q \| \*",
                        lines[1])
    assert re.search(r"^ Doubled +\| acquires +\| +3000\.00 \| +6000\.00 \| "
                     r"+x2\.000 \| +\[2\.000, 2\.000\] \| 0\.0005 \| "
                     r"0\.0010 \| \*$", text, re.M)
    assert re.search(r"^ WaitBufHdrUnlocked bufmgr\.c:6310 +\| spins +\| "
                     r"+300\.00 \| +300\.00 \| +x1\.000 \| "
                     r"+\[1\.000, 1\.000\] \| 1\.0000 \| 1\.0000 \|$", text,
                     re.M)
    # every row, the line on the marks, no note on the rounds
    assert len(lines) == 3 + len(want[3]) + 2 and lines[-1] == ""
    assert lines[-2] == "1 of 7 rows marked *; expected chance marks at " \
        "most 0.05 (where nothing changed)"


def test_mechanism_text_zero_and_new():
    """A side without events: its events in place of the ratio, no
    interval, and the line that says why."""
    text = text_of(analyse(base_zero_study(), ["A", "B"]))
    assert re.search(r"^ Gone +\| acquires +\| +200\.00 \| +0\.00 \| "
                     r"+22146 vs 0 events \| +- \| 0\.0005 \| "
                     r"0\.0020 \| \*$", text, re.M)
    assert re.search(r"^ LockBufHdr bufmgr\.c:6282 +\| contended +\| "
                     r"+0\.00 \| +[\d.]+ \| +0 vs 8754 events \| +- \| "
                     r"0\.0005 \| 0\.0020 \| \*$", text, re.M)
    assert text.endswith(
        "\n\"b vs v events\": the two sides' events over the rounds (for "
        "spins its contended, for wait_ms its blocks), where one has fewer "
        "than 10, too few for a ratio and its interval; p and q hold all "
        "the same\n")
    assert "events" not in text_of(analyse(exact_study(), ["A", "B"]))


def headings(text):
    return re.findall(r"^\(m\) mechanism: (\S+ against \S+, \d+) clients",
                      text, re.M)


def test_mechanism_top_and_more_rows():
    st = noise_study()
    points = analyse(st, ["A", "B", "C"])
    want = expect(st, ["A", "B", "C"])
    text = text_of(points)
    assert headings(text) == ["B against A, 2", "B against A, 8",
                              "C against A, 2", "C against A, 8"]
    blocks = text.split("\n\n")
    for block, w, p in zip(blocks, want, points):
        lines = block.strip("\n").split("\n")
        assert len(lines) == 3 + 10 + 2
        assert lines[-2] == "(%d more rows in mechanism.csv)" % (
            len(w[3]) - 10)
        marked = sum(q["marker"] == "*" for q in w[3])
        assert marked and lines[-1] == (
            "%d of %d rows marked *; expected chance marks at most 0.05 "
            "(where nothing changed)" % (marked, len(w[3])))
    text3 = text_of(points, top=3)
    for block, w in zip(text3.split("\n\n"), want):
        lines = block.strip("\n").split("\n")
        assert [re.match(r" (.*?) +\| (\w+)", x).groups()
                for x in lines[3:6]] == [(q["name"], q["measure"])
                                         for q in w[3][:3]]
        assert lines[6] == "(%d more rows in mechanism.csv)" % (len(w[3]) - 3)
    assert "more rows" not in text_of(points, top=100)
    text = text_of(points, csv_name=None)
    assert "(%d more rows not shown; --csv FILE writes every row)" % (
        len(want[0][3]) - 10) in text


def test_mechanism_fewer_rounds_and_empty_points():
    text = text_of(analyse(few_rounds_study(), ["A", "B"]))
    assert "K = 1 of the 1 row (Tarone: at most K rows can reach p <= " \
        "0.05 / K); * q <= 0.05\n" in text
    assert text.endswith("\n0 of 1 row marked *; expected chance marks at "
                         "most 0.05 (where nothing changed)\nno row can be "
                         "marked: the smallest p of 5 rounds, 0.0625, is "
                         "above 0.05 / K; with every row in K, 6 rounds "
                         "could mark one\n")
    points = analyse(empty_points_study(), ["C", "A", "B"])
    text = text_of(points, base="C")
    assert headings(text) == ["A against C, 1", "A against C, 2",
                              "A against C, 3", "B against C, 1",
                              "B against C, 2"]
    assert "\n(m) mechanism: A against C, 2 clients: no LWLock or spin-wait " \
        "call site counted in the 6 rounds in common\n\n" in text
    assert "\n(m) mechanism: A against C, 3 clients: no round in which both " \
        "ran\n\n" in text
    assert sum(len(p.rows) for p in points) == 2


def test_mechanism_text_sampled_flips():
    st = Synth()
    for r in range(1, 18):
        for s in ("A", "B"):
            st.run(s, 1, r, 1000 + r)
            st.lock(s, 1, r, "LockManager", 10 * r + (s == "B"))
    text = text_of(analyse(st, ["A", "B"]))
    assert "; p of the paired sign-flip test on 20000 sampled flips; " \
        in text
