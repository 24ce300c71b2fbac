"""Tests of lockstudy.design: the Williams design and the seeded orders.

The balance is counted here from the rows returned: for 2 to 6 variants
over 1 to 3 periods every variant runs equally often in every position and
right after every other one; each block of n rounds is a Latin square;
rounds that are not a whole number of periods get a warning naming the
period and what is unbalanced.  That the orders are the old ones for the
same seed is test_golden.py's part.
"""

from collections import Counter

import pytest

from lockstudy import design

THREE = ["tas", "ttas_spin", "ttas"]


@pytest.mark.parametrize("n", range(1, 8))
def test_williams_squares(n):
    squares = design.williams(n)
    assert len(squares) == (1 if n % 2 == 0 else 2)
    # the first row is 0, 1, n-1, 2, n-2, ...
    assert squares[0][0] == [0] + [(j + 1) // 2 if j % 2 else n - j // 2
                                   for j in range(1, n)]
    for square in squares:
        # a Latin square: every treatment once in every row and column
        assert all(sorted(row) == list(range(n)) for row in square)
        assert all(sorted(col) == list(range(n)) for col in zip(*square))
    # over the squares, every ordered pair of treatments adjacent equally
    # often: once per square for even n, twice over the two for odd n
    pairs = Counter((row[i - 1], row[i]) for square in squares
                    for row in square for i in range(1, n))
    assert len(pairs) == n * (n - 1)
    assert set(pairs.values()) == ({2 if n % 2 else 1} if n > 1 else set())


@pytest.mark.parametrize("n, period", [(1, 2), (2, 2), (3, 6), (4, 4),
                                       (5, 10), (6, 6)])
def test_order_period(n, period):
    assert design.order_period(n) == period


@pytest.mark.parametrize("n", range(2, 7))
@pytest.mark.parametrize("periods", [1, 2, 3])
def test_variant_order_balance(n, periods):
    names = ["s%d" % i for i in range(1, n + 1)]
    rounds = periods * (n if n % 2 == 0 else 2 * n)
    rows, warning = design.variant_order(100 + 10 * n + periods, rounds,
                                         names)
    assert warning is None
    assert len(rows) == rounds
    positions = Counter((s, i) for row in rows for i, s in enumerate(row))
    after = Counter((row[i - 1], row[i]) for row in rows
                    for i in range(1, n))
    each = rounds // n
    assert len(positions) == n * n and set(positions.values()) == {each}
    assert len(after) == n * (n - 1) and set(after.values()) == {each}
    # within each block of n rounds every variant once in every position
    for b in range(0, rounds, n):
        assert all(sorted(col) == sorted(names) for col in zip(*rows[b:b + n]))


def test_variant_order_replays():
    rows, _ = design.variant_order(42, 9, THREE)
    assert len(rows) == 9
    assert all(sorted(row) == sorted(THREE) for row in rows)
    assert design.variant_order(42, 9, list(THREE))[0] == rows
    assert design.variant_order(43, 9, THREE)[0] != rows
    # the names given are not shuffled in place
    names = list(THREE)
    design.variant_order(42, 9, names)
    assert names == THREE


@pytest.mark.parametrize("rounds, what", [
    (9, "over the last 3 rounds the variants' predecessors are not "
        "balanced"),
    (8, "over the last 2 rounds the variants' positions and predecessors "
        "are not balanced"),
    (3, "over the last 3 rounds the variants' predecessors are not "
        "balanced"),
])
def test_variant_order_warning(rounds, what):
    rows, warning = design.variant_order(411481, rounds, THREE)
    assert len(rows) == rounds
    assert warning == ("%d rounds are not a multiple of 6, the period of the "
                       "balanced order for 3 variants: %s; use a multiple "
                       "of 6" % (rounds, what))


def test_variant_order_one_variant():
    assert design.variant_order(5, 3, ["solo"]) == ([["solo"]] * 3, None)


def test_variant_order_even_rest():
    # 4 variants, 6 rounds: one period of 4 and 2 rounds of the next
    _, warning = design.variant_order(7, 6, ["a", "b", "c", "d"])
    assert "the last 2 rounds the variants' positions and predecessors" in \
        warning and "multiple of 4," in warning


def test_client_order():
    rows = design.client_order(411481, 12, [1, 2, 8, 64])
    assert len(rows) == 12
    assert all(sorted(row) == [1, 2, 8, 64] for row in rows)
    assert design.client_order(411481, 12, [1, 2, 8, 64]) == rows
    assert design.client_order(411482, 12, [1, 2, 8, 64]) != rows
    # not the same client count first in every round
    assert len({row[0] for row in rows}) > 1


@pytest.mark.parametrize("call", [design.variant_order, design.client_order])
@pytest.mark.parametrize("seed, rounds, names", [
    (-1, 3, [1, 2]), (1, 0, [1, 2]), (1, 3, []), ("1", 3, [1, 2]),
])
def test_bad_arguments(call, seed, rounds, names):
    with pytest.raises(ValueError):
        call(seed, rounds, names)


def test_no_mutable_module_globals():
    mutable = [k for k, v in vars(design).items() if not k.startswith("__")
               and isinstance(v, (dict, list, set, bytearray))]
    assert mutable == []
