"""The order of the study's runs: which variant, and which client count,
runs when in each round.

Variants: the rows of a Williams design for n variants, a Latin square
whose first row is 0, 1, n-1, 2, n-2, ... and whose rows are its
rotations, and for odd n also the reversed rows, a second square.  The
variants are assigned to the numbers by a shuffle drawn from
random.Random(seed), the rows of each square are taken in a shuffled
order, the squares too.  So within each block of n rounds every variant
runs once in every position, and over each period (n rounds for even n,
2n for odd n) every variant runs right after every other one equally
often: each variant, the baseline included, has the same positions and
the same predecessors.

Client counts: a shuffle per round drawn from random.Random("clients:" +
the seed in decimal), so that no client count always runs first after the
warm-up.

The same seed gives the same orders as the order and clients forms of
bench/study_stats.py did (up to 4e541ba).  Calls no other module of the package.
"""

import random
from typing import List, Optional, Sequence, Tuple


def williams(n: int) -> List[List[List[int]]]:
    """The squares of a Williams design for n treatments: a list of one
    (even n) or two (odd n) Latin squares, each a list of n rows."""
    first = [0]
    low, high = 1, n - 1
    while len(first) < n:
        if len(first) % 2 == 1:
            first.append(low)
            low += 1
        else:
            first.append(high)
            high -= 1
    square = [[(x + i) % n for x in first] for i in range(n)]
    if n % 2 == 0:
        return [square]
    return [square, [list(reversed(row)) for row in square]]


def order_period(n: int) -> int:
    """Rounds in one balanced period of the order for n variants."""
    return n if n % 2 == 0 else 2 * n


def _check(seed: int, rounds: int, names: Sequence) -> None:
    """ValueError unless the seed is a non-negative integer, rounds at
    least 1 and names not empty (the old command line's usage)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError("the seed must be a non-negative integer")
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    if not names:
        raise ValueError("nothing to order")


def variant_order(seed: int, rounds: int, names: List[str]
                  ) -> Tuple[List[List[str]], Optional[str]]:
    """The variants' order in each of the rounds (see the module's
    docstring), and a warning when rounds is not a multiple of the period:
    the last rounds are then an unbalanced part of a period.  None when it
    is."""
    _check(seed, rounds, names)
    rng = random.Random(seed)
    names = list(names)
    rng.shuffle(names)
    n = len(names)
    rows: List[List[int]] = []
    while len(rows) < rounds:
        squares = williams(n)
        rng.shuffle(squares)
        for square in squares:
            rng.shuffle(square)
            rows.extend(square)
    order = [[names[k] for k in row] for row in rows[:rounds]]
    period = order_period(n)
    if n == 1 or rounds % period == 0:
        return order, None
    rest = rounds % period
    # a whole number of blocks of n rounds still balances the positions
    what = "predecessors" if rest % n == 0 else "positions and predecessors"
    return order, ("%d rounds are not a multiple of %d, the period of the "
                   "balanced order for %d variants: over the last %d rounds "
                   "the variants' %s are not balanced; use a multiple of %d"
                   % (rounds, period, n, rest, what, period))


def client_order(seed: int, rounds: int, clients: List[int]
                 ) -> List[List[int]]:
    """The order of the client counts in each of the rounds: each a
    shuffle, drawn from random.Random("clients:" + the seed in decimal)."""
    _check(seed, rounds, clients)
    rng = random.Random("clients:%d" % seed)
    out = []
    for _ in range(rounds):
        row = list(clients)
        rng.shuffle(row)
        out.append(row)
    return out
