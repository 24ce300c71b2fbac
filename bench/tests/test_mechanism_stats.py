"""Tests of the statistics of table (m), lockstudy.mechanism's, against
the brute force of test_mechanism.py, computed independently of the
package.  Proved here:
  - the sign-flip test by brute force in fractions, the sample of flips
    above 16 rounds against the exact p, Tarone's K by hand, the interval
    by brute force (zeros on either side, 1 to 12 rounds) and its sample
    of subsets above 16 rounds against all of them;
  - the rounds a row needs to be marked with K rows; points without rows
    or without a round in common, the order of the points;
  - the module's helpers (the change, the paired rounds, the counts and
    rates of rounds, the ratio, the columns of mechanism.csv).
"""

import itertools
import math
import random

import numpy
import pytest

from lockstudy import mechanism
from test_mechanism import (all_flips, analyse, empty_points_study,
                            few_rounds_study, flip_p, flip_p_exact,
                            interval_by_subsets, tarone_by_hand, weighted)


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
