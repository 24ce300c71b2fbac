"""Which variants share a server start (SHARED_START=1), and the order of
each round when some do.

Two variants of one build whose settings differ only in settings that a
reload changes (pg_settings.context neither postmaster nor internal:
pg_lockstat.track, pg_lockstat.hold_sample_every, work_mem, ...) need no
restart between them.  With SHARED_START=1 such variants form a group
that runs in one server start per round: the first with its settings
from the start, each next one after variant.conf is rewritten with its
settings and the server reloads them (pg_reload_conf()).  The runs of
one server start vary together (on the project's 2-CPU machine their tps
correlate r = 0.71-0.75, against r = 0.39 for two starts), so the ratios
within a group have about half the variance.  A variant of another build,
or one that differs from the others in a setting that needs a restart
(shared_preload_libraries, shared_buffers, ...), is a group of one, as
is every variant without SHARED_START.

The order of a round: the groups in a Williams order
(design.variant_order()), crossed with a Williams order within each
group drawn from a seed derived from the study's, so that each group
runs equally often in each place among the groups, crossed with each
of its variants' places within it (round_orders()).
When every variant is in one group, or every group has one variant, the
order is that of the study without SHARED_START.

Calls design.
"""

import math
import random
from typing import List, Mapping, Optional, Sequence, Tuple

from . import design

# pg_settings.context of the settings that only a restart changes
RESTART_CONTEXTS = ("postmaster", "internal")


def needs_restart(name: str, contexts: Mapping[str, str]) -> bool:
    """Whether setting name needs a server restart to change: its context
    (pg_settings.context, by name) is postmaster or internal, or the
    server does not know it (contexts lacks it)."""
    return contexts.get(name, "postmaster") in RESTART_CONTEXTS


def groups(variants: Sequence, bindirs: Sequence[str],
           contexts: Mapping[str, str]) -> List[Tuple[int, ...]]:
    """The variants, by index, in groups that can share a server start:
    the same server binary (bindirs[i], the unpatched flag) and the same
    settings that need a restart.  The groups in the order of their first
    variant, each in the variants' order."""
    keys: List[tuple] = []
    out: List[List[int]] = []
    for i, v in enumerate(variants):
        key = (bindirs[i], v.unpatched,
               tuple(sorted(s for s in v.settings
                            if needs_restart(s[0], contexts))))
        if key in keys:
            out[keys.index(key)].append(i)
        else:
            keys.append(key)
            out.append([i])
    return [tuple(g) for g in out]


def singletons(n: int) -> List[Tuple[int, ...]]:
    """n variants, each in a group of its own (no SHARED_START)."""
    return [(i,) for i in range(n)]


def round_orders(seed: int, rounds: int, names: Sequence[str],
                 units: Sequence[Tuple[int, ...]]
                 ) -> Tuple[List[List[List[str]]], Optional[str]]:
    """The order of each of the rounds, as a list of groups, each a list
    of variant names (units: the groups of indices into names), and a
    warning when rounds do not balance it (None when they do).

    With one unit, or units of one variant each, it is the order
    design.variant_order() draws from the seed, and its warning.
    Otherwise the order of the units (p rounds to a period) is crossed
    with the order within each group of k variants (a period of q_k
    rounds): round r takes row r of the units' order and row r // p of
    the group's, so that over p * q_k rounds every row of one meets
    every row of the other: each group runs equally often in each place
    among the groups, crossed with each of its variants' places within
    it.  (Drawn from the same seed, the two levels
    flipped together: "on" ran second in all 76 rounds of a study;
    independent draws would leave that to chance.)"""
    if len(units) == 1:
        rows, warning = design.variant_order(
            seed, rounds, [names[i] for i in units[0]])
        return [[row] for row in rows], warning
    labels = ["+".join(names[i] for i in g) for g in units]
    outer, warning = design.variant_order(seed, rounds, labels)
    if all(len(g) == 1 for g in units):
        return [[[label] for label in row] for row in outer], warning
    p = design.order_period(len(units))
    inner = {}
    period = p
    for g, label in zip(units, labels):
        members = [names[i] for i in g]
        inner[label], _ = design.variant_order(
            _derived(seed, "within " + label), (rounds + p - 1) // p,
            members)
        if len(g) > 1:
            period = math.lcm(period, p * design.order_period(len(g)))
    orders = [[inner[label][r // p] for label in outer[r]]
              for r in range(rounds)]
    if rounds % period == 0:
        return orders, None
    return orders, ("%d rounds are not a multiple of %d, the period of the "
                    "order of the shared server starts crossed with the "
                    "order within each: over the last %d rounds the "
                    "variants' places are not balanced; use a multiple "
                    "of %d" % (rounds, period, rounds % period, period))


def _derived(seed: int, what: str) -> int:
    """A seed for the draw what, derived from the study's seed."""
    return random.Random("%s:%d" % (what, seed)).randrange(10 ** 18)


def describe(names: Sequence[str], units: Sequence[Tuple[int, ...]]
             ) -> str:
    """The plan's line on SHARED_START=1: which variants share a start."""
    shared = [g for g in units if len(g) > 1]
    if not shared:
        return ("SHARED_START=1: no two variants can share a server start "
                "(each differs from the others in its server or in a "
                "setting that needs a restart)")
    return "SHARED_START=1: %s" % "; ".join(
        "variants %s share a server start per round, each after the first "
        "put in force by a reload" % ", ".join(names[i] for i in g)
        for g in shared)
