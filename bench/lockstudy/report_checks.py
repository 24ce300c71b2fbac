"""The tables of the tps report that check what table (a) assumes: the
collapse table (do a point's runs fall into a good and a bad group, and
does the variant have more bad runs than the baseline?) and the table of
the rounds' check for independence (lockstudy.serial), and the slot
table of shared server starts (lockstudy.slots).  They render
model.TpsResult's points only: no arithmetic.

Calls collapse and serial (their constants), model, stats (the verdicts'
constants) and tables (the layout).
"""

from typing import Optional, Sequence

from . import collapse, model, serial, stats
from .tables import fmt, pct, table

NOUN = "variant"


def _runs_of(n: Optional[int], of: int) -> str:
    """Bad runs of runs, as the collapse table shows them."""
    return "" if n is None else "%d of %d" % (n, of)


def collapse_table(points: Sequence[model.PointResult],
                   variants: Sequence[str]) -> str:
    """The collapse test's result: a line when no point's runs split, else
    per client count where some do, each variant's bad runs and the
    baseline's, counted by one rule, and Fisher's exact test, one-sided,
    of more bad runs in the variant."""
    base = variants[0]
    false_alarms = 100 * collapse.BIMODAL_FALSE_ALARMS
    how = ("split test of each point's log tps after each round's effect "
           "(the other %ss' median in that round), at most %g%% false "
           "alarms per point of single-peaked runs (normal, skewed or "
           "heavy-tailed); needs %d runs" % (NOUN, false_alarms,
                                            collapse.BIMODAL_MIN_RUNS))
    split = sorted({p.clients for p in points if p.bifurcated})
    if not split:
        return "collapse: no point's runs fall into two groups (%s)" % how
    bases = {p.clients: p for p in points if p.variant == base}
    rows = []
    for c in split:
        b = bases.get(c)
        rows += [[str(c), p.variant, _runs_of(p.bad_runs, p.n),
                  _runs_of(p.base_bad_runs, b.n) if b else "",
                  fmt(p.fisher_p, 3)]
                 for p in points if p.clients == c
                 and p.variant != base]
        # a study of the baseline alone still shows its split points
        if len(variants) == 1 and b:
            rows.append([str(c), base, _runs_of(b.bad_runs, b.n),
                         "", ""])
    return ("collapse: points whose runs fall into a good and a bad group "
            "(%s): the bad runs of each %s and of %s, both below the "
            "boundary of the %s's split, or of %s's where only it splits, "
            "and Fisher's exact test, one-sided, of more bad runs in the "
            "%s; below p = %g the verdict is bimodal, else the bad runs "
            "are shown beside it\n"
            % (how, NOUN, base, NOUN, base, NOUN, stats.COLLAPSE_ALPHA)
            + table(["clients", NOUN, "bad runs", base + " bad runs",
                     "Fisher p"], rows, [True, False, True, True, True]))


def _p(x: Optional[float]) -> str:
    """A p-value of the rounds' check, or empty."""
    return fmt(x, 3)


def serial_table(r: model.TpsResult) -> str:
    """The check of the rounds for independence: the study-wide p-value,
    and per point the lag-1 autocorrelation of the ranks of its log
    ratios, its p-value, the change point's p-value and round, and the
    point's own p-value; the points that fail are marked."""
    how = ("ranks of each ratio's log ratios in round order, %d "
           "permutations of the rounds; a point fails when its p is below "
           "%g or the study's below %g, and its verdict is withheld"
           % (serial.SERIAL_DRAWS, serial.POINT_ALPHA, serial.STUDY_ALPHA))
    if r.serial_p is None:
        return ("rounds checked: no ratio has the %d rounds the check of "
                "independence needs (%s)" % (serial.SERIAL_MIN_ROUNDS, how))
    rows = [[str(p.clients), p.variant, fmt(p.lag1, 2), _p(p.lag1_p),
             _p(p.change_p),
             "" if p.change_round is None else str(p.change_round),
             _p(p.serial_p), "*" if p.dependent else ""]
            for p in r.points if p.ratio is not None]
    return ("rounds checked: are the paired log ratios independent from "
            "round to round?  lag-1: their lag-1 autocorrelation (of "
            "ranks) and its one-sided p; change: Pettitt's change-point "
            "test, p and the rounds before the change; p: the smaller of "
            "the two, calibrated; * failed.  Study-wide, lag-1 summed "
            "over the points: p = %s (%s)\n" % (_p(r.serial_p), how)
            + table(["clients", NOUN, "lag-1", "lag-1 p", "change p",
                     "after round", "p", "*"], rows,
                    [True, False, True, True, True, True, True, False]))


def slot_table(r: model.TpsResult) -> str:
    """SHARED_START's slot effect and, for each variant of a shared start
    against a baseline of another, its ratio from the rounds where both
    ran first in their start, and the bias table (a)'s ratio carries."""
    s = r.slots
    groups = "; ".join("[%s]" % " ".join(g) for g in s.groups)
    if s.effect is None:
        head = ("slot: no run of the shared starts (%s) followed another in "
                "its start at a client count, so their slot effect cannot "
                "be estimated" % groups)
    else:
        e = s.effect
        head = ("slot: in the shared server starts (%s), a run after the "
                "first in its start against the first, within each start "
                "(least squares over the starts' runs: the start's level, "
                "the %s's, and this effect): x%s, %+.2f%% (se %.2f%%, p = "
                "%s, %d runs)"
                % (groups, NOUN, fmt(e.effect, 4), 100 * e.log_effect,
                   100 * e.se, fmt(e.p, 3), e.runs))
    if not s.points:
        return head
    base, level = r.variants[0], r.comparisons.ratio_confidence
    rows = [[str(p.clients), p.variant, fmt(p.ratio, 3),
             "" if p.ratio is None
             else fmt(p.ci_low, 3) + "-" + fmt(p.ci_high, 3),
             str(p.pairs), pct(p.later, 0), pct(p.base_later, 0),
             "" if p.bias is None else "%+.2f%%" % (100 * (p.bias - 1))]
            for p in s.points]
    return (head + "\n%s always runs first in its start, a %s of a shared "
            "one only in some rounds: the ratio to %s from the rounds "
            "where both ran first (Hodges-Lehmann, interval at %s, no "
            "verdict; fewer than %d such rounds reach that level), the "
            "share of the paired rounds each ran after the first, and the "
            "bias that the slot effect puts on table (a)'s ratio (the "
            "effect to the power of the difference of the shares)\n"
            % (base, NOUN, base, "%.4g%%" % (100 * level),
               stats.min_rounds(level))
            + table(["clients", NOUN, "first-slot ratio",
                     "%.4g%% CI" % (100 * level), "rounds",
                     "after first", base + " after first", "bias in (a)"],
                    rows, [True, False, True, True, True, True, True,
                           True]))
