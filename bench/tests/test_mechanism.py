"""Tests of table (m): lockstudy.mechanism, its statistics, and the text
that lockstudy.report_locks.mechanism_text makes of them, on synthetic
studies (what t/035_study_mechanism.pl proved of bench/study_stats.py).

Every expected value is computed here from the counts and transactions
of the study, independently of the package: the rates per 1000
transactions of each run, the rounds paired with the baseline, the
per-round ratio (or the difference, where the baseline's rate is 0 in
some round), the median and its order-statistics interval (the ranks by
exact integer binomials: the fixture exact of conftest.py), the marker,
the size of the change and the order of the rows.  Proved here:
  - exactly twice the baseline's acquires per transaction, in runs of
    different numbers of transactions: ratio 2 in [2, 2], marked, first;
    equal rates: ratio 1, not marked; rows zero on both sides left out;
    two call sites of one function are two rows;
  - on noisy counts every row and the order as computed here; a round
    only one side ran is not paired; 3 times the acquires are marked;
  - a base rate of 0 in some rounds gives the difference; a tranche or
    call site absent from one side's runs counts 0;
  - identical variants over 200 data sets: the share of marked rows lies
    within binomial bounds around the nominal 1 - coverage;
  - below 6 rounds the interval is min-max and marks nothing;
  - points without rows or without a round in common, the order of the
    points;
  - the text: heading, columns, ratios and signed differences, the top
    rows (--top) and the line on the rows left out, the note below 6
    rounds, the lines of the points without rows or rounds.
The class Synth, the studies and expect() serve test_report_locks.py too,
which writes the studies as files (the variants, the CSV, bad input).
"""

import math
import random
import re
from fractions import Fraction
from typing import Dict, List, Sequence, Tuple

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


def expect(st: Synth, variants: Sequence[str], exact) -> List[Tuple]:
    """The expected points at 95%: (variant, clients, rounds, rows), the
    rows dicts of the columns of mechanism.csv in the expected order."""
    base = variants[0]
    tx = st.transactions()
    count = st.counts()
    out = []
    for v in variants[1:]:
        for c in sorted({c for (s, c, r) in tx if s == v}):
            rounds = sorted(r for (s, c2, r) in tx if s == v and c2 == c
                            and (base, c, r) in tx)
            keys = {k for r in rounds for s in (base, v)
                    for k in count.get((s, c, r), {})}
            rows = [row for row in (expect_row(tx, count, base, v, c, rounds,
                                               key, exact) for key in keys)
                    if row]
            rows.sort(key=lambda q: (-q["change"], q["kind"], q["name"],
                                     q["measure"]))
            out.append((v, c, rounds, rows))
    return out


def expect_row(tx, count, base, v, c, rounds, key, exact):
    """One expected row, None when it is zero on both sides."""
    def rate(s):
        return [1000 * count.get((s, c, r), {}).get(key, 0.0)
                / tx[(s, c, r)] for r in rounds]
    rb, rv = rate(base), rate(v)
    if all(x == 0 for x in rb + rv):
        return None
    ratio = all(x > 0 for x in rb)
    values = [a / b if ratio else a - b for a, b in zip(rv, rb)]
    med, lo, hi, cov, enough = exact.expect_ci(values)
    none = 1 if ratio else 0
    mb, mv = exact.median(rb), exact.median(rv)
    return {"variant": v, "clients": c, "kind": key[0], "name": key[1],
            "measure": key[2], "rounds": len(rounds), "base_median": mb,
            "variant_median": mv, "stat": "ratio" if ratio else "diff",
            "median": med, "ci_low": lo, "ci_high": hi, "coverage": cov,
            "change": abs(math.log((mv + 1) / (mb + 1))),
            "marker": "*" if enough and (lo > none or hi < none) else ""}


def assert_points(points, want) -> None:
    """The package's points are the expected ones: the same points, rows
    and order, words equal, numbers to 1e-12."""
    assert [(p.variant, p.clients, p.rounds) for p in points] == \
        [w[:3] for w in want]
    for p, w in zip(points, want):
        assert [(q.kind, q.name, q.measure) for q in p.rows] == \
            [(q["kind"], q["name"], q["measure"]) for q in w[3]]
        for q, e in zip(p.rows, w[3]):
            got = q._asdict()
            for k, x in e.items():
                if isinstance(x, float):
                    assert got[k] == pytest.approx(x, rel=1e-12, abs=1e-12), k
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
    A 0.2 but none in every fourth round, B 0.1 (differences of -100 in 9
    rounds, +100 in 3); Gone: acquires in A only; LockBufHdr contended in
    B only."""
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
    assert (doubled.stat, doubled.median, doubled.ci_low, doubled.ci_high,
            doubled.marker) == ("ratio", 2, 2, 2, "*")
    assert (doubled.base_median, doubled.variant_median) == \
        pytest.approx((3000, 6000), rel=1e-12)
    assert points[0].rows[0] is doubled
    for key in (("lwlock", "Equal", "acquires"), ("lwlock", "Equal", "blocks"),
                ("spin", "WaitBufHdrUnlocked bufmgr.c:6310", "spins")):
        row = q[("B", 1) + key]
        assert (row.stat, row.marker) == ("ratio", "")
        assert (row.median, row.ci_low, row.ci_high) == \
            pytest.approx((1, 1, 1), rel=1e-12)


def test_exact_rates_rows_left_out_and_call_sites(exact):
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
    assert_points(points, expect(st, ["A", "B"], exact))


def test_noise_every_row(exact):
    st = noise_study()
    points = analyse(st, ["A", "B", "C"])
    assert_points(points, expect(st, ["A", "B", "C"], exact))
    assert [(p.variant, p.clients) for p in points] == \
        [("B", 2), ("B", 8), ("C", 2), ("C", 8)]
    rows = [q for p in points for q in p.rows]
    assert {q.rounds for q in rows} == {12}
    assert {q.stat for q in rows} == {"ratio"}
    q = by_key(points)
    assert [q[("B", c, "lwlock", "LockManager", "acquires")].marker
            for c in (2, 8)] == ["*", "*"]


def test_noise_one_row_by_hand(exact):
    """ProcArray blocks of B at 8 clients: the 12 per-round ratios of the
    blocks per transaction, sorted; median and [x(3), x(10)]."""
    st = noise_study()
    tx = st.transactions()
    blocks = {(v, r): float(b) for v, c, r, t, sh, ex, b, w in st.locks
              if c == 8 and t == "ProcArray"}
    ratios = sorted((blocks[("B", r)] / tx[("B", 8, r)])
                    / (blocks[("A", r)] / tx[("A", 8, r)])
                    for r in range(1, 13))
    k, coverage, _ = exact.order_ci(12)
    assert (k, coverage) == (3, 1 - Fraction(2 * 79, 4096))
    points = analyse(st, ["A", "B", "C"])
    row = by_key(points)[("B", 8, "lwlock", "ProcArray", "blocks")]
    assert row.ci_low == pytest.approx(ratios[k - 1], rel=1e-12)
    assert row.ci_high == pytest.approx(ratios[12 - k], rel=1e-12)
    assert row.median == pytest.approx((ratios[5] + ratios[6]) / 2, rel=1e-12)
    assert row.coverage == pytest.approx(float(coverage), rel=1e-12)


def test_base_zero_gives_differences(exact):
    st = base_zero_study()
    points = analyse(st, ["A", "B"])
    assert_points(points, expect(st, ["A", "B"], exact))
    q = by_key(points)
    tx = st.transactions()
    blocks = {(v, r): float(b) for v, c, r, t, sh, ex, b, w in st.locks
              if t == "Sometimes"}
    diffs = [1000 * blocks[("B", r)] / tx[("B", 4, r)]
             - 1000 * blocks[("A", r)] / tx[("A", 4, r)] for r in range(1, 13)]
    sometimes = q[("B", 4, "lwlock", "Sometimes", "blocks")]
    assert sometimes.stat == "diff"
    assert sometimes.median == pytest.approx(exact.median(diffs), rel=1e-12)
    acquires = q[("B", 4, "lwlock", "Sometimes", "acquires")]
    assert (acquires.stat, acquires.median, acquires.marker) == \
        ("ratio", pytest.approx(1, rel=1e-12), "")
    gone = q[("B", 4, "lwlock", "Gone", "acquires")]
    assert (gone.stat, gone.variant_median, gone.median, gone.ci_low,
            gone.ci_high, gone.marker) == ("ratio", 0, 0, 0, 0, "*")
    assert gone.base_median == pytest.approx(200, rel=1e-12)
    fewer = q[("B", 4, "lwlock", "Fewer", "blocks")]
    assert (fewer.stat, fewer.marker) == ("diff", "")
    assert (fewer.base_median, fewer.variant_median, fewer.median,
            fewer.ci_low, fewer.ci_high) == \
        pytest.approx((200, 100, -100, -100, 100), rel=1e-9)
    site = q[("B", 4, "spin", "LockBufHdr bufmgr.c:6282", "contended")]
    assert (site.stat, site.base_median, site.marker) == ("diff", 0, "*")


def test_identical_variants_false_marks(exact):
    """200 data sets of 12 rounds, A and B alike, three tranches each with
    its own 30% noise, counts proportional to the transactions: the
    per-round ratios are exchangeable around 1, so [x(3), x(10)] misses 1
    with probability 2 * 79/4096 and the marked rows are Binomial(600,
    3.86%).  The bounds hold each tail at 1e-6; they exclude a module
    that never marks and an interval one rank narrower."""
    rng = random.Random(3504)
    st = Synth()
    for c in range(1, 201):
        for r in range(1, 13):
            for s in ("A", "B"):
                tx = 5000 + rng.randrange(10000)
                st.run(s, c, r, tx)
                for t, per in (("LockManager", 2), ("BufferMapping", 0.5),
                               ("ProcArray", 0.1)):
                    st.lock(s, c, r, t, int(noisy(rng, per * tx, 0.3) + 0.5))
    points = analyse(st, ["A", "B"])
    rows = [q for p in points for q in p.rows]
    assert len(rows) == 600
    assert_points(points, expect(st, ["A", "B"], exact))
    k, coverage, _ = exact.order_ci(12)
    nominal = 1 - coverage
    low, high = exact.binom_bounds(600, nominal, 1e-6)
    marked = sum(q.marker == "*" for q in rows)
    assert low <= marked <= high
    narrow = Fraction(2 * exact.below_rank(12, k + 1), 2 ** 12)
    assert low > 0 and 600 * narrow > high


def test_fewer_than_6_rounds_min_max_no_mark():
    (row,) = analyse(few_rounds_study(), ["A", "B"])[0].rows
    assert (row.rounds, row.stat, row.median, row.ci_low, row.ci_high,
            row.coverage, row.marker) == (5, "ratio", 2, 2, 2, 1 - 2 / 32, "")


def test_points_without_rows_or_common_rounds():
    points = analyse(empty_points_study(), ["C", "A", "B"])
    assert [(p.variant, p.clients, len(p.rounds), len(p.rows))
            for p in points] == [("A", 1, 6, 1), ("A", 2, 6, 0),
                                 ("A", 3, 0, 0), ("B", 1, 6, 1),
                                 ("B", 2, 6, 0)]


def test_helpers():
    assert mechanism.paired_values([2.0, 4.0], [3.0, 2.0]) == \
        ("ratio", 1.0, [1.5, 0.5])
    assert mechanism.paired_values([2.0, 0.0], [3.0, 2.0]) == \
        ("diff", 0.0, [1.0, 2.0])
    assert mechanism.change(0.0, 1.0) == pytest.approx(math.log(2))
    assert mechanism.change(3.0, 1.0) == pytest.approx(math.log(2))
    # a change from 0 to a rare event sorts below a doubling of a
    # frequent one
    assert mechanism.change(0.0, 0.5) < mechanism.change(100.0, 200.0)
    tx = {("A", 1, 1): 500.0, ("B", 1, 1): 2000.0, ("B", 1, 2): 10.0}
    counts = {("A", 1, 1): {("lwlock", "X", "blocks"): 5.0}}
    assert mechanism.paired_rounds(tx, "A", "B", 1) == [1]
    assert mechanism.rates(counts, tx, "A", 1, [1], ("lwlock", "X",
                                                     "blocks")) == [10.0]
    assert mechanism.rates(counts, tx, "B", 1, [1, 2], ("lwlock", "X",
                                                        "blocks")) == [0, 0]
    assert list(mechanism.COLUMNS) == [
        "variant", "clients", "kind", "name", "measure", "rounds",
        "base_median", "variant_median", "stat", "median", "ci_low",
        "ci_high", "coverage", "change", "marker"]


# --- the text of (m) --------------------------------------------------------

def text_of(points, base="A", top=10, csv_name="mechanism.csv"):
    return report_locks.mechanism_text(points, base, 0.95, top, csv_name)


def test_mechanism_text_exact_rates(exact):
    st = exact_study()
    text = text_of(analyse(st, ["A", "B"]))
    (want,) = expect(st, ["A", "B"], exact)
    lines = text.split("\n")
    assert lines[0].startswith(
        "(m) mechanism: B against A, 1 clients: per 1000 transactions, median "
        "over 12 rounds of the paired ratio (difference where the base is 0 "
        "in some round), 95%% interval not corrected for the %d rows: the "
        "table explains, the verdicts of table (a) decide; * the interval "
        "excludes no change" % len(want[3]))
    assert re.fullmatch(r" lock or call site +\| measure +\| +A \| +B \| "
                        r"ratio/diff \| +95% interval \| \*", lines[1])
    assert re.search(r"^ Doubled +\| acquires +\| +3000\.00 \| +6000\.00 \| "
                     r"+x2\.000 \| +\[2\.000, 2\.000\] \| \*$", text, re.M)
    assert re.search(r"^ WaitBufHdrUnlocked bufmgr\.c:6310 +\| spins +\| "
                     r"+300\.00 \| +300\.00 \| +x1\.000 \| "
                     r"+\[1\.000, 1\.000\] \|$", text, re.M)
    # no more rows than the table shows, no note on the rounds
    assert len(lines) == 3 + len(want[3]) + 1 and lines[-1] == ""


def test_mechanism_text_differences():
    text = text_of(analyse(base_zero_study(), ["A", "B"]))
    assert re.search(r"^ Gone +\| acquires +\| +200\.00 \| +0\.00 \| "
                     r"+x0\.000 \| +\[0\.000, 0\.000\] \| \*$", text, re.M)
    assert re.search(r"^ Fewer +\| blocks +\| +200\.00 \| +100\.00 \| "
                     r"+-100\.00 \| +\[-100\.00, \+100\.00\] \|$", text, re.M)
    # a positive difference with its sign
    assert re.search(r"^ Sometimes +\| blocks( +\| +[\d.]+){2} \| +\+[\d.]+ "
                     r"\| +\[[-+][\d.]+, \+[\d.]+\] \|( \*)?$", text, re.M)


def headings(text):
    return re.findall(r"^\(m\) mechanism: (\S+ against \S+, \d+) clients",
                      text, re.M)


def test_mechanism_top_and_more_rows(exact):
    st = noise_study()
    points = analyse(st, ["A", "B", "C"])
    want = expect(st, ["A", "B", "C"], exact)
    text = text_of(points)
    assert headings(text) == ["B against A, 2", "B against A, 8",
                              "C against A, 2", "C against A, 8"]
    blocks = text.split("\n\n")
    for block, w in zip(blocks, want):
        lines = block.strip("\n").split("\n")
        assert len(lines) == 3 + 10 + 1
        assert lines[-1] == "(%d more rows in mechanism.csv)" % (
            len(w[3]) - 10)
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
    assert text.endswith("\nfewer than 6 rounds: the intervals are min-max, "
                         "of coverage 93.8% only, and mark nothing\n")
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
