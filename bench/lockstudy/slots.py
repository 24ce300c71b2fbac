"""SHARED_START's slot effect: does a run after the first in its server
start run faster or slower than the first?  Pure functions of numbers,
no I/O.

With SHARED_START=1 the variants of one server that differ only in
settings a reload changes run in one server start per round, each after
the first put in force by a reload (lockstudy.starts).  A variant of a
start of its own (stock, for one) always runs first after its start; a
variant of a shared start runs first in some rounds and after another in
the others.  So every ratio of a shared variant to a baseline of another
start carries the effect of running later in a start (time since the
start, a reload, a warmer cache), times the share of its rounds it ran
later: in study H of bench/results/tps-cost-2026-12-06.md the second run
of a start was about 1 % faster (issue 52's audit), which put about
+0.5 % on each shared/stock ratio.

slot_effect() estimates it from the runs of the shared starts only,
within each start (so the start's own level, the largest noise on the
project's machine, cancels): log tps = the start's level (per group,
client count and round) + the variant's level (per client count) +
the effect if the run is not the first of its start, fitted by least
squares, with the standard error of the effect from the residuals and a
t test.  first_slot_points() gives each shared variant's ratio to a
baseline of another start from the rounds where both ran first only
(neither carries the effect), beside the bias that table (a)'s ratio
carries.

A study's tps and positions are mappings (variant, clients, round) ->
tps, and -> position in the round, as to lockstudy.stats; the groups
come from commands.txt (shared_groups()) or the command line.  Calls
lockstudy.stats (hl_ci) and lockstudy.model.
"""

import math
import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy
from scipy import stats as scipy_stats

from .model import FirstSlotPoint, RunKey, SlotEffect, SlotResult
from .stats import hl_ci, min_rounds

# a round's line in commands.txt, and a shared start in it
ROUND_LINE = re.compile(r"^# (?:round \d+|warm-up round): (.*); clients ")
BRACKETS = re.compile(r"\[([^\]]+)\]")

Groups = Sequence[Sequence[str]]


def shared_groups(commands: Sequence[str]) -> Tuple[Tuple[str, ...], ...]:
    """The groups of variants that shared a server start, from the lines
    of commands.txt that give each round's order ("# round 3: stock [on
    off]; clients 2"): each bracketed list, its names sorted, in the
    order of first appearance; none for a study without shared starts."""
    out: List[Tuple[str, ...]] = []
    for line in commands:
        m = ROUND_LINE.match(line)
        for g in BRACKETS.findall(m.group(1)) if m else ():
            key = tuple(sorted(g.split()))
            if key not in out:
                out.append(key)
    return tuple(out)


def slots(positions: Mapping[RunKey, int], groups: Groups
          ) -> Dict[RunKey, int]:
    """The slot of each run in its server start: 0 for the first, 1 for
    the next, ...: the rank of its position among those of its group's
    variants at its client count and round; 0 for a variant of no
    group."""
    group_of = {v: tuple(g) for g in groups for v in g}
    out = {}
    for (v, c, r), q in positions.items():
        mates = group_of.get(v, (v,))
        out[(v, c, r)] = sum(positions.get((u, c, r), q) < q for u in mates)
    return out


def _design(tps: Mapping[RunKey, float], slot: Mapping[RunKey, int],
            groups: Groups) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """The least-squares design of slot_effect: its first column whether
    the run followed another in its start, then a column per start
    (group, clients, round) and per (variant, clients); and the log
    tps."""
    rows, y = [], []
    for g in groups:
        for (v, c, r), t in sorted(tps.items()):
            if v in g and t > 0 and (v, c, r) in slot:
                rows.append((float(slot[(v, c, r)] > 0),
                             (tuple(g), c, r), (v, c)))
                y.append(math.log(t))
    starts = {k: i for i, k in enumerate(sorted({x[1] for x in rows}))}
    levels = {k: i for i, k in enumerate(sorted({x[2] for x in rows}))}
    x = numpy.zeros((len(rows), 1 + len(starts) + len(levels)))
    for i, (later, start, level) in enumerate(rows):
        x[i, 0] = later
        x[i, 1 + starts[start]] = 1
        x[i, 1 + len(starts) + levels[level]] = 1
    return x, numpy.asarray(y)


def slot_effect(tps: Mapping[RunKey, float],
                positions: Mapping[RunKey, int],
                groups: Groups) -> Optional[SlotEffect]:
    """The effect on tps of running after the first in a server start,
    from the runs of the groups of at least two variants, within each
    start; None when no run followed another, or no degree of freedom is
    left to estimate its error."""
    shared = [g for g in groups if len(g) > 1]
    x, y = _design(tps, slots(positions, shared), shared)
    if not len(y) or not x[:, 0].any() or x[:, 0].all():
        return None
    coef, _, rank, _ = numpy.linalg.lstsq(x, y, rcond=None)
    df = len(y) - rank
    resid = y - x @ coef
    if df < 1:
        return None
    cov = numpy.linalg.pinv(x.T @ x)[0, 0] * float(resid @ resid) / df
    # the fit without the effect's column: if it spans the same space,
    # the effect cannot be told from the levels
    if numpy.linalg.matrix_rank(x[:, 1:]) == rank or not cov > 0:
        return None
    b, se = float(coef[0]), math.sqrt(cov)
    return SlotEffect(math.exp(b), b, se,
                      float(2 * scipy_stats.t.sf(abs(b) / se, df)),
                      len(y), int(df))


def first_slot_points(tps: Mapping[RunKey, float],
                      positions: Mapping[RunKey, int], groups: Groups,
                      variants: Sequence[str], ratio_confidence: float,
                      effect: Optional[SlotEffect]
                      ) -> Tuple[FirstSlotPoint, ...]:
    """Each variant of a shared start against the baseline (the first of
    variants) where the baseline runs in another start, per client count:
    its ratio from the rounds where both ran first in their start
    (hl_ci), the shares of the paired rounds each ran after the first,
    and the bias that table (a)'s ratio carries from the effect."""
    slot = slots(positions, groups)
    base = variants[0]
    group_of = {v: tuple(g) for g in groups for v in g}
    out = []
    for v in variants[1:]:
        if len(group_of.get(v, ())) < 2 or base in group_of[v]:
            continue
        for c in sorted({c for (u, c, _) in tps if u == v}):
            out.append(_first_slot_point(tps, slot, v, base, c,
                                         ratio_confidence, effect))
    return tuple(out)


def _first_slot_point(tps: Mapping[RunKey, float],
                      slot: Mapping[RunKey, int], v: str, base: str,
                      c: int, level: float,
                      effect: Optional[SlotEffect]) -> FirstSlotPoint:
    """The FirstSlotPoint of variant v against base at c clients."""
    paired = [r for (u, c2, r) in sorted(tps) if u == v and c2 == c
              and tps[(v, c, r)] > 0 and tps.get((base, c, r), 0) > 0
              and (v, c, r) in slot and (base, c, r) in slot]
    first = [math.log(tps[(v, c, r)] / tps[(base, c, r)]) for r in paired
             if slot[(v, c, r)] == 0 and slot[(base, c, r)] == 0]

    def later(u: str) -> float:
        return (sum(slot[(u, c, r)] > 0 for r in paired) / len(paired)
                if paired else float("nan"))
    ratio = low = high = None
    coverage = 0.0
    if first:
        est, lo, hi, coverage = hl_ci(first, level)
        ratio, low, high = math.exp(est), math.exp(lo), math.exp(hi)
    share, base_share = later(v), later(base)
    bias = None
    if effect is not None and paired:
        bias = math.exp(effect.log_effect * (share - base_share))
    return FirstSlotPoint(v, c, len(first), ratio, low, high, coverage,
                          share, base_share, bias)


def slot_result(tps: Mapping[RunKey, float],
                positions: Mapping[RunKey, int], groups: Groups,
                variants: Sequence[str], ratio_confidence: float
                ) -> Optional[SlotResult]:
    """The slot table's model: None unless some group of the variants has
    two of them with positions."""
    shared = tuple(tuple(v for v in g if v in variants) for g in groups)
    shared = tuple(g for g in shared if len(g) > 1)
    if not shared or not positions:
        return None
    effect = slot_effect(tps, positions, shared)
    return SlotResult(shared, effect, first_slot_points(
        tps, positions, shared, variants, ratio_confidence, effect))


def enough(point: FirstSlotPoint, ratio_confidence: float) -> bool:
    """Whether a first-slot interval reaches the study's level."""
    return point.pairs >= min_rounds(ratio_confidence)
