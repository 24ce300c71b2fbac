"""Table (m) by simulation: lockstudy.mechanism.analyse on synthetic
studies with fixed seeds, no server, against the modules of earlier
commits read from git (issue 52 point 5; the statistics audit at 667e9a1,
../shared/reviews/study-statistics-audit.md, section (c)).

The studies are those of the audit: points of B against A, per point 40
rows whose rates per 1000 transactions are log-uniform over 0.01 .. 1000,
each run about 100000 transactions (10 % log-normal), its counts Poisson
of the rate times gamma noise of 10 % per run and row; one case changes
one thing.  Proved here, each number seen in a comment:
  - null studies: at most 0.25 rows marked per point, and a variant that
    only runs more transactions is no effect; the rule of 70c6d42
    (medians of per-round ratios) marks more;
  - rows that share a per-run factor (log-normal, sd 30 %), as rows of
    one run do when it has more contention: at most 0.25 chance marks
    per point, where the Benjamini-Hochberg marks of 667e9a1 give more
    (their marks come in clusters);
  - the interval holds a null ratio in at least 94 % of the rows with
    enough events at 6, 12 and 24 rounds, where the bootstrap interval
    of 667e9a1 holds it in fewer;
  - a quarter of the rows counting at a rate per second, B at 0.80 times
    A's tps: at most 0.25 rows marked * per point, the rows that differ
    per transaction marked tps, where 667e9a1 marks about 4 per point;
  - a doubled rate is still marked in most points.
"""

import importlib.util
import os
import subprocess
from typing import Dict

import numpy
import pytest

from lockstudy import mechanism

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
# the last commit of the rule of medians of per-round ratios
MEDIANS_COMMIT = "70c6d42"
# the commit the statistics audit read: Benjamini-Hochberg and bootstrap
AUDITED_COMMIT = "667e9a1"
# the length of every run, seconds
SECONDS = 60.0


def module_at(commit: str):
    """lockstudy.mechanism of that commit, as a module of the package
    (lockstudy.mechanism_<commit>); None without git history."""
    where = commit + ":bench/lockstudy/mechanism.py"
    out = subprocess.run(["git", "-c", "safe.directory=*", "-C", CHECKOUT,
                          "show", where], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    spec = importlib.util.spec_from_loader("lockstudy.mechanism_" + commit,
                                           loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(out.stdout, where, "exec"), module.__dict__)
    return module


MEDIANS = module_at(MEDIANS_COMMIT)
AUDITED = module_at(AUDITED_COMMIT)


def simulated(seed: int, points: int, rounds: int = 12, effect: float = 1.0,
              effect_rate: float = 1.0, speed: float = 1.0,
              transactions: float = 1e5, factor: float = 0.0,
              per_second: int = 0):
    """(transactions, counts, seconds) of points A against B at clients
    1 .. points: each run about that many transactions (times speed for
    B) in SECONDS.  With effect, row 0 has effect_rate, and B effect times
    that; with factor, every count of a run times one log-normal factor
    of that sd; rows 0 .. per_second - 1 count at a rate per second, as
    many per run as A's transactions would give them whatever the run's
    transactions."""
    rng = numpy.random.default_rng(seed)
    tx: Dict = {}
    counts: Dict = {}
    shape = 100.0						# gamma of CV 10%
    for c in range(1, points + 1):
        rates = 10 ** rng.uniform(-2, 3, 40)
        if effect != 1:
            rates[0] = effect_rate
        for r in range(1, rounds + 1):
            for s in ("A", "B"):
                t = float(round(transactions * (speed if s == "B" else 1)
                                * rng.lognormal(0, 0.1)))
                tx[(s, c, r)] = t
                size = numpy.full(40, t)
                size[:per_second] = transactions
                mu = rates * size / 1000 * rng.gamma(shape, 1 / shape, 40)
                if factor:
                    mu *= rng.lognormal(0, factor)
                if s == "B":
                    mu[0] *= effect
                x = rng.poisson(mu)
                counts[(s, c, r)] = {("lwlock", "T%02d" % i, "blocks"):
                                     float(x[i]) for i in range(40) if x[i]}
    return tx, counts, {k: SECONDS for k in tx}


def points_of(module, study):
    """The points of the study by the module (the seconds only to the
    package's own, which takes them)."""
    tx, counts, seconds = study
    if module is mechanism:
        return module.analyse(tx, counts, ["A", "B"], 0.95, seconds)
    return module.analyse(tx, counts, ["A", "B"], 0.95)


def marks_per_point(module, study) -> float:
    """The rows marked per point, * and tps alike."""
    points = points_of(module, study)
    return sum(q.marker != "" for p in points for q in p.rows) / \
        len(points)


def coverage(module, study, rounds: int) -> float:
    """The share of the rows whose interval holds 1, of those with at
    least 2 MIN_EVENTS events a side by their rates (every one of them
    given an interval by the package)."""
    points = points_of(module, study)
    rows = [q for p in points for q in p.rows
            if min(q.base_rate, q.variant_rate) * rounds * 100
            >= 2 * mechanism.MIN_EVENTS]
    assert not any(numpy.isnan(q.ci_low) for q in rows)
    return sum(q.ci_low <= 1 <= q.ci_high for q in rows) / len(rows)


def test_null_studies_few_chance_marks():
    """100 null points: at most 0.25 marked rows per point (0.06 seen, *
    and tps together; at most 0.05 expected).
    A variant that runs 1.5 times the transactions at the same rates is
    no effect either, even in runs of 1000 transactions, where most rows
    count a few events (0.025 seen)."""
    assert marks_per_point(mechanism, simulated(3309, 100)) <= 0.25
    assert marks_per_point(mechanism, simulated(
        3310, 40, speed=1.5, transactions=1e3)) <= 0.25


@pytest.mark.skipif(MEDIANS is None, reason="no git history (70c6d42)")
def test_null_studies_old_rule_marks_more():
    """The first 40 of those null points under the rule of 70c6d42: more
    than 0.25 marked rows per point (1.35 seen, 0.075 by the package), so
    that the test above fails on it."""
    study = simulated(3309, 40)
    assert marks_per_point(MEDIANS, study) > 0.25
    assert marks_per_point(mechanism, study) <= 0.25


@pytest.mark.skipif(AUDITED is None, reason="no git history (667e9a1)")
def test_correlated_rows_few_chance_marks():
    """150 null points whose rows share a per-run factor of sd 30 %: at
    most 0.25 chance marks per point (0.027 seen), where 667e9a1's
    Benjamini-Hochberg gives more (0.42 seen; the audit 0.36 over 2000)."""
    study = simulated(3314, 150, factor=0.3)
    assert marks_per_point(mechanism, study) <= 0.25
    assert marks_per_point(AUDITED, study) > 0.25


@pytest.mark.skipif(AUDITED is None, reason="no git history (667e9a1)")
@pytest.mark.parametrize("rounds, points", [(6, 60), (12, 40), (24, 30)])
def test_interval_coverage(rounds, points):
    """The 95 % interval holds the null ratio 1 in at least 94 % of the
    rows with 20 events a side (6 rounds 96.4 %, 12 rounds 94.6 %, 24
    rounds 95.7 % seen, 95.4 % over 4000 rows), where 667e9a1's bootstrap
    interval holds it in fewer (86.7 % and 91.1 % seen; the audit 86 / 91
    / 93 %).  At 24 rounds the bootstrap's 93 % lies too near 94 % to be
    told apart in the rows a test can afford (94.2 % seen over 600), so
    it is not asked to fail there."""
    study = simulated(3315 + rounds, points, rounds=rounds)
    assert coverage(mechanism, study, rounds) >= 0.94
    if rounds < 24:
        assert coverage(AUDITED, study, rounds) < 0.94


@pytest.mark.skipif(AUDITED is None, reason="no git history (667e9a1)")
def test_per_second_rows_track_tps():
    """10 of 40 rows at a rate per second, B at 0.80 times A's
    transactions in as many seconds, so those rows read x1.25 per
    transaction: at most 0.25 rows marked * per point (0 seen), those of
    them that differ marked tps (1.7 per point seen), the other rows
    marked at most 0.25 times per point (0.017 seen: one chance mark, tps
    since its count per second differs less);
    667e9a1 marks them * (3.9 per point seen)."""
    study = simulated(3316, 60, speed=0.8, per_second=10)
    points = points_of(mechanism, study)
    rows = [q for p in points for q in p.rows]
    per_second = {"T%02d" % i for i in range(10)}
    assert sum(q.marker == "*" for q in rows) <= 0.25 * len(points)
    assert sum(q.marker == "tps" and q.name in per_second
               for q in rows) >= len(points)
    assert sum(q.marker != "" and q.name not in per_second
               for q in rows) <= 0.25 * len(points)
    assert abs(numpy.mean([p.tps_ratio for p in points]) - 0.8) < 0.01
    assert marks_per_point(AUDITED, study) > 0.25


def test_doubled_rate_is_marked():
    """30 points whose row 0 has 1 event per 1000 transactions in A and 2
    in B, among 39 null rows: marked in most (all seen)."""
    points = points_of(mechanism, simulated(3311, 30, effect=2.0))
    found = [q.marker == "*" for p in points for q in p.rows
             if q.name == "T00"]
    assert len(found) == 30 and sum(found) >= 0.9 * 30
