"""Tests of table (m): the rows of lockstudy.mechanism on synthetic
studies (its statistics against a brute force are
test_mechanism_stats.py's, the rows of a side without events
test_mechanism_events.py's, the text that
lockstudy.report_locks.mechanism_text makes of them
test_mechanism_text.py's, the simulations test_mechanism_sim.py's).

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
    the interval holds the ratio.
The class Synth, the studies, the statistics computed here and expect()
serve test_mechanism_stats.py, test_mechanism_events.py and
test_mechanism_text.py too, and test_report_locks.py, which writes the
studies as files (the variants, the CSV, bad input).
"""

import dataclasses
import itertools
import math
import random
from fractions import Fraction
from typing import Dict, List, Sequence, Tuple

import numpy
import pytest

from lockstudy import mechanism


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


# --- the rows of the studies ------------------------------------------------

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
