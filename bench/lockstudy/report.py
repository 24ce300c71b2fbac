"""The tps side of the study's report, as text and files.

tps_result() computes, from the runs of runs.csv, what the tables show,
a model.TpsResult; tps_text() and the table functions only render it:
table (a) (per client count the baseline's
median tps and interval, every other variant's paired ratio with its
interval, verdict, ratio noise, the smallest difference its rounds
resolve and the rounds that would resolve the threshold), the lines on
the number of comparisons and their correction and on the verdicts,
the collapse table and the rounds' check (report_checks), the noise
table, the drift table and, when the runs have positions, the table of
the ratio by position, and the slot table of shared server starts;
and the files points.csv (one row per point) and
the gnuplot data tps-<v>.dat, ratio-<v>.dat and bimodal-<v>.dat.  The
text is the one bench/study_stats.py (at 4e541ba) printed with --noun
variant.

Calls stats, drift and slots (the numbers), model (what they fill),
floor (the line of the machine's floor under table (a)), report_checks
(the checks' tables), tables (their layout) and data (Run, InputError,
the checks of the runs against the variants).
"""

import csv
import math
import os
import types
from typing import (Dict, List, NamedTuple, Optional, Sequence,
                    Tuple)

from . import data, drift, floor, model, slots, stats
from .report_checks import NOUN, collapse_table, serial_table, slot_table
from .tables import fmt, pct, table

# the corrections for the number of comparisons, and their names in the text
CORRECTIONS = types.MappingProxyType({"bonferroni": "Bonferroni",
                                      "none": "no correction"})
# the columns of points.csv, in order
COLUMNS = model.POINT_COLUMNS
# the float columns of points.csv written to 6 significant digits; the
# other floats (tps) get 3 decimals
SIGNIFICANT = ("cv", "ratio", "ci_low", "ci_high", "coverage", "fisher_p",
               "ratio_noise", "resolves", "mean_ratio", "mean_low",
               "mean_high", "lag1", "lag1_p", "change_p", "serial_p")


class TpsReport(NamedTuple):
    """The report of a study's tps: its text (ending in a newline), the
    points (in report order), the variants in report order (the first the
    baseline), the number of comparisons and the confidence level each
    ratio interval was taken at, and the model all of it comes from."""
    text: str
    points: Tuple[model.PointResult, ...]
    variants: List[str]
    comparisons: int
    ratio_confidence: float
    result: model.TpsResult


def tps_report(runs: List[data.Run], variants: Optional[List[str]],
               threshold_pct: float, confidence: float = 0.95,
               correction: str = "bonferroni",
               source: str = "runs.csv",
               family: Optional[int] = None,
               shared: Sequence[Sequence[str]] = ()) -> TpsReport:
    """The report of the runs (tps_result), and its text (tps_text)."""
    r = tps_result(runs, variants, threshold_pct, confidence, correction,
                   source, family, shared)
    return TpsReport(tps_text(r), r.points, list(r.variants),
                     r.comparisons.count, r.comparisons.ratio_confidence, r)


def tps_result(runs: List[data.Run], variants: Optional[List[str]],
               threshold_pct: float, confidence: float = 0.95,
               correction: str = "bonferroni",
               source: str = "runs.csv",
               family: Optional[int] = None,
               shared: Sequence[Sequence[str]] = ()) -> model.TpsResult:
    """What the runs show: variants in report order, the first the
    baseline (None or empty: their order of first appearance; a variant
    listed without runs is left out, but not the baseline), the verdict
    threshold in percent, the confidence level of each tps interval and of
    the study's ratio intervals together, and the correction (bonferroni:
    with m comparisons each ratio interval at 1 - (1 - confidence) / m;
    none: each at confidence).  family: the comparisons the correction is
    over, when these are part of a larger family (a re-analysis of a
    study's runs with another baseline or other variants adds its
    comparisons to the study's): m is then family, which may not be
    below the comparisons of these runs; None: these runs' own.  shared:
    the groups of variants that shared a server start, for the slot table.
    InputError for a threshold, confidence, correction or family out of
    range, a variant of the runs not in the list, a baseline without runs,
    two runs of one variant, client count and round; source names the
    runs' file in its messages."""
    if not 0 <= threshold_pct < 100:
        raise data.InputError("--threshold must be a percentage in [0, 100)")
    if not 0 < confidence < 1:
        raise data.InputError("--confidence must lie between 0 and 1")
    if correction not in CORRECTIONS:
        raise data.InputError("--correction must be %s"
                              % " or ".join(CORRECTIONS))
    # the list is --variants on the command line, as in the mechanism form
    order, seen = data.report_order(runs, variants, "variants", source)
    if order[0] not in seen:
        raise data.InputError("%s has no runs of the baseline %s"
                              % (source, order[0]))
    order = [s for s in order if s in seen]
    ncomparisons = stats.comparisons((r.key for r in runs), order)
    family = _family(ncomparisons, family, source)
    ratio_confidence = confidence
    if correction == "bonferroni" and family > 1:
        ratio_confidence = 1 - (1 - confidence) / family
    index = data.index_runs(runs)
    tps = {k: r.tps for k, r in index.items()}
    threshold = threshold_pct / 100
    points, serial_p = stats.analyse_study(tps, order, threshold,
                                           confidence, ratio_confidence)
    positions = {k: r.position for k, r in index.items()
                 if r.position is not None}
    npos = max(positions.values()) if positions and len(order) > 1 else 0
    return model.TpsResult(
        tuple(order), threshold, confidence,
        _comparisons(points, ncomparisons, correction, ratio_confidence,
                     family), points,
        drift_cells(tps, order),
        position_cells(tps, positions, order) if npos else (), npos,
        serial_p, slots.slot_result(tps, positions, shared, order,
                                    ratio_confidence))


def _comparisons(points: Sequence[model.PointResult], count: int,
                 correction: str, ratio_confidence: float,
                 family: int) -> model.Comparisons:
    """The comparisons of the points, with the bound on a false verdict:
    one needs an interval that misses the true ratio; intervals too
    short to give a verdict, and withheld ones, give none."""
    bound = math.fsum(1 - p.coverage for p in points if p.ratio is not None
                      and p.coverage >= ratio_confidence
                      and not p.dependent)
    return model.Comparisons(count, correction, ratio_confidence, bound,
                             stats.min_rounds(ratio_confidence), family)


def _family(ncomparisons: int, family: Optional[int], source: str) -> int:
    """The comparisons of the family: the runs' own, or family when it is
    given and not fewer."""
    if family is None:
        return ncomparisons
    if family < max(ncomparisons, 1):
        raise data.InputError("--family %d is fewer than the %d comparisons "
                              "of %s" % (family, ncomparisons, source))
    return family


def drift_cells(tps: Dict[stats.RunKey, float],
                variants: Sequence[str]) -> Tuple[model.DriftCell, ...]:
    """Per point, the median tps of the last third of the rounds over that
    of the first third (stats.drift), with its null range
    (drift.drift_ranges)."""
    ranges = drift.drift_ranges(tps, variants)
    return tuple(model.DriftCell(s, c, x, _range(x, ranges.get((s, c))))
                 for (s, c), x in drift.drift(tps, variants).items())


def position_cells(tps: Dict[stats.RunKey, float],
                   positions: Dict[stats.RunKey, int],
                   variants: Sequence[str]
                   ) -> Tuple[model.PositionCell, ...]:
    """Per variant but the baseline, the median ratio to the baseline by
    the position it ran in within its round (drift.position_ratios), with
    the number of ratios and the range of the median under no effect of
    the position (drift.position_ranges); at least 2 variants."""
    by = drift.position_ratios(tps, positions, variants)
    ranges = drift.position_ranges(tps, positions, variants)
    return tuple(model.PositionCell(s, q, x, n, _range(
        x, ranges.get(s, {}).get(q)))
        for s in variants[1:] for q, (x, n) in sorted(by[s].items()))


def _range(x: float, rng: Optional[Tuple[float, float]]
           ) -> Optional[model.ChanceRange]:
    """The range chance gives x, and whether x is outside it."""
    if rng is None:
        return None
    return model.ChanceRange(rng[0], rng[1], not rng[0] <= x <= rng[1])


def tps_text(r: model.TpsResult) -> str:
    """The text of the tps side of the report, ending in a newline."""
    sections = [table_a(r), collapse_table(r.points, r.variants),
                serial_table(r), noise_table(r.points, r.variants),
                drift_table(r)]
    if r.npos:
        sections.append(position_table(r))
    if r.slots is not None:
        sections.append(slot_table(r))
    return "\n\n".join(sections) + "\n"


def _level(confidence: float, ratio: bool = False) -> str:
    """A confidence level in percent, as the headings show it."""
    return ("%.4g%%" if ratio else "%g%%") % (100 * confidence)


def table_a(r: model.TpsResult) -> str:
    """Table (a) and the lines under it: the min-max intervals, the runs
    at 0 tps, the comparisons and their correction, the verdicts and the
    columns of what the rounds resolve."""
    points, base, k = r.points, r.variants[0], r.comparisons
    nr = max(p.n for p in points)
    level, rlevel = (_level(r.confidence),
                     _level(k.ratio_confidence, True))
    margin = "±%g%%" % (100 * r.threshold)
    out = ["(a) tps per client count: median over rounds and %s interval "
           "(order statistics); for each %s the ratio of its tps to %s's "
           "in the same round: Hodges-Lehmann estimate, %s interval "
           "(Wilcoxon signed rank), the mean ratio and its interval "
           "(Student t), verdict (threshold %g%%) and the bad "
           "runs of a collapse (k/n low), the ratio noise, what its rounds "
           "resolve and the rounds that would resolve %s; %d round%s"
           % (level, NOUN, base, rlevel, 100 * r.threshold, margin, nr,
              "" if nr == 1 else "s")]
    rows = [_row_a(p, base) for c in sorted({p.clients for p in points})
            for p in points if p.clients == c]
    out.append(table(["clients", NOUN, "tps", level + " CI", "ratio",
                      rlevel + " CI", "mean", "mean CI", "verdict",
                      "noise", "resolves", "rounds for " + margin], rows,
                     [True, False, True, True, True, True, True, True,
                      False, True, True, True]))
    low = [p for p in points if p.ratio is not None
           and p.coverage < k.ratio_confidence]
    if low:
        out.append("fewer than %d rounds: the intervals are min-max, of "
                   "coverage %.1f%% only, and are not resolved"
                   % (k.min_rounds, 100 * low[0].coverage))
    zero = ["%s at %d clients %d" % (p.variant, p.clients, p.zero_runs)
            for p in points if p.zero_runs]
    if zero:
        out.append("runs at 0 tps, left out of the ratios (with the other "
                   "run of their round) and of the collapse test: "
                   + ", ".join(zero))
    if k.count > 0:
        out.append(_comparisons_line(k, rlevel))
    out.append(VERDICT_WORDS % dict(margin=margin, noun=NOUN,
                                    power=round(100 * stats.POWER)))
    out.extend(floor.lines(r))
    return "\n".join(out)


# the lines under table (a) that say what its verdicts and last columns
# mean
VERDICT_WORDS = (
    "verdict: faster or slower: the interval lies wholly beyond 1 "
    "%(margin)s; equivalent (%(margin)s): it and the mean's interval "
    "lie wholly inside it (the two one-sided tests of TOST on both, each "
    "at half the interval's non-coverage: a few collapsed runs, which "
    "the Hodges-Lehmann estimate leaves out, move the mean); not "
    "resolved: neither, so the rounds cannot tell, which is not \"no "
    "difference\"; withheld: rounds dependent: its rounds, or the "
    "study's, fail the check of the rounds below, so no interval holds\n"
    "noise: the ratio noise; resolves: the smallest difference that a "
    "verdict finds with %(power)d%% power in this many rounds at this "
    "noise (-: too few rounds for any verdict); rounds for "
    "%(margin)s: the rounds that would give equivalent (%(margin)s) "
    "with %(power)d%% power at this noise if the %(noun)s made no "
    "difference.  Neither uses the ratio observed")


def _comparisons_line(k: model.Comparisons, rlevel: str) -> str:
    """The number of comparisons, the family of the correction, and the
    bound on a false verdict."""
    of = (" of a family of %d (--family)" % k.family
          if k.family > k.count else "")
    return ("comparisons: %d%s; %s: each ratio interval at %s, so that the "
            "chance of at least one false verdict in the study is at most "
            "%.2f%% (the sum of the intervals' exact non-coverage); a "
            "re-analysis of these runs with another baseline or other "
            "%ss adds comparisons to the family: give its size with "
            "compare --family" % (k.count, of, CORRECTIONS[k.correction],
                                  rlevel, 100 * k.false_verdict_bound, NOUN))


def _row_a(p: model.PointResult, base: str) -> List[str]:
    """The cells of a point's row of table (a)."""
    ratio = p.ratio is not None
    return [
        str(p.clients), p.variant,
        fmt(p.median),
        fmt(p.tps_ci_low) + "-" + fmt(p.tps_ci_high)
        if p.variant == base else "",
        fmt(p.ratio, 3) if ratio else "",
        fmt(p.ci_low, 3) + "-" + fmt(p.ci_high, 3) if ratio else "",
        fmt(p.mean_ratio, 3),
        "" if p.mean_low is None
        else fmt(p.mean_low, 3) + "-" + fmt(p.mean_high, 3),
        p.verdict + _low(p),
        pct(p.ratio_noise, 1) if ratio else "",
        ("-" if p.resolves is None else "±" + pct(p.resolves, 1))
        if ratio else "",
        "" if p.rounds_equivalent is None else str(p.rounds_equivalent),
    ]


def _low(p: model.PointResult) -> str:
    """What a verdict cell says of a collapse: the point's bad runs where
    its runs or, for a variant, the baseline's split ("", else
    ", k/n low")."""
    if p.bifurcated or p.bad_runs:
        return ", %d/%d low" % (p.bad_runs, p.n)
    return ""


def _per_point_table(title: str, clients: Sequence[int],
                     variants: Sequence[str], cells: Dict) -> str:
    """A title and a table of one row per client count and one column per
    variant, cells[(variant, clients)] the text of a cell (empty when
    absent)."""
    rows = [[str(c)] + [cells.get((s, c), "") for s in variants]
            for c in clients]
    return title + "\n" + table(["clients"] + list(variants), rows,
                                [True] * (len(variants) + 1))


def noise_table(points: Sequence[model.PointResult],
                variants: Sequence[str]) -> str:
    """Per client count, the baseline's coefficient of variation of tps
    and each other variant's ratio noise, in percent."""
    cells = {}
    for p in points:
        x = p.cv if p.variant == variants[0] else p.ratio_noise
        if not math.isnan(x):
            cells[(p.variant, p.clients)] = fmt(100 * x, 1)
    return _per_point_table(
        "noise (%%): for %s the coefficient of variation of its tps across "
        "rounds; for each other %s the ratio noise, the standard deviation "
        "of the log of its paired ratios, which its interval and what its "
        "rounds resolve depend on" % (variants[0], NOUN),
        sorted({p.clients for p in points}), variants, cells)


def _in_range(x: float, rng: Optional[model.ChanceRange]) -> str:
    """A number with the range chance gives it, marked when outside."""
    if rng is None:
        return fmt(x, 3)
    return "%s [%s-%s]%s" % (fmt(x, 3), fmt(rng.low, 3), fmt(rng.high, 3),
                             " " + drift.MARK if rng.outside else "")


def _range_words() -> str:
    """How the drift and position tables' ranges are taken."""
    return ("[range that chance gives it, %g%% over the table together]; "
            "%s outside it" % (100 * drift.RANGE_CONFIDENCE, drift.MARK))


def drift_table(r: model.TpsResult) -> str:
    """Per point, its drift with its null range, marked outside it."""
    return _per_point_table(
        "drift: median tps of the last third of the rounds over the first "
        "third, per point %s" % _range_words(),
        sorted({p.clients for p in r.points}), r.variants,
        {(d.variant, d.clients): _in_range(d.drift, d.chance)
         for d in r.drift})


def position_table(r: model.TpsResult) -> str:
    """Per variant but the baseline, the median ratio to the baseline by
    the position it ran in within its round, the number of ratios and the
    range of the median under no effect of the position."""
    cells = {(q.variant, q.position): "%s (%d)" % (
        _in_range(q.median, q.chance), q.n)
        for q in r.positions}
    rows = [[s] + [cells.get((s, q), "") for q in range(1, r.npos + 1)]
            for s in r.variants[1:]]
    return ("position: median ratio to %s in the same round by the position "
            "the %s ran in (number of ratios), all client counts, each "
            "ratio centred on its client count's median ratio and the "
            "%s's median ratio put back %s\n"
            % (r.variants[0], NOUN, NOUN, _range_words())
            + table([NOUN] + ["position %d" % q
                              for q in range(1, r.npos + 1)],
                    rows, [False] + [True] * r.npos))


def resolution_text(cells: Sequence[model.Resolution], threshold: float,
                    confidence: float) -> str:
    """The table of stats.resolution: per ratio noise, what each number of
    rounds resolves, and the rounds that resolve ±threshold."""
    rounds = sorted({x.rounds for x in cells})
    margin = "±%g%%" % (100 * threshold)
    rows = []
    for s in sorted({x.noise for x in cells}):
        mine = {x.rounds: x for x in cells if x.noise == s}
        rows.append([pct(s, 0)]
                    + ["-" if mine[n].resolves is None
                       else "±" + pct(mine[n].resolves, 1) for n in rounds]
                    + [fmt(mine[rounds[0]].rounds_equivalent)])
    return ("the smallest difference that a verdict finds with %d%% power "
            "(interval at %s, threshold %g%%), by the ratio noise and the "
            "rounds; and the rounds that give equivalent (%s) with %d%% "
            "power when there is no difference\n"
            % (round(100 * stats.POWER), _level(confidence, True),
               100 * threshold, margin, round(100 * stats.POWER))
            + table(["ratio noise"] + ["%d rounds" % n for n in rounds]
                    + ["rounds for " + margin], rows,
                    [True] * (len(rounds) + 2)) + "\n")


def _csv_value(key: str, v) -> str:
    """A value of a point as points.csv writes it."""
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return "%.6g" % v if key in SIGNIFICANT else "%.3f" % v
    return "" if v is None else str(v)


def write_points(points: Sequence[model.PointResult], path: str) -> None:
    """Write the points as CSV, the columns of COLUMNS."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for p in points:
            w.writerow([_csv_value(k, getattr(p, k)) for k in COLUMNS])


def write_dat(points: Sequence[model.PointResult], variants: Sequence[str],
              directory: str) -> None:
    """Write the gnuplot data of each variant into directory: tps-<v>.dat
    (clients, median, min, max); for the variants but the baseline
    ratio-<v>.dat (clients, ratio, ci_low, ci_high) and, where some of its
    points are bimodal, bimodal-<v>.dat (clients, ratio)."""
    for s in variants:
        mine = [p for p in points if p.variant == s]
        split = [p for p in mine if p.verdict == "bimodal"
                 and p.ratio is not None]
        if split:
            _write_lines(directory, "bimodal-%s.dat" % s,
                         ["%d %.6f" % (p.clients, p.ratio)
                          for p in split])
        _write_lines(directory, "tps-%s.dat" % s,
                     ["%d %.3f %.3f %.3f" % (p.clients, p.median,
                                             p.lo, p.hi)
                      for p in mine])
        if s != variants[0]:
            _write_lines(directory, "ratio-%s.dat" % s,
                         ["%d %.6f %.6f %.6f" % (p.clients, p.ratio,
                                                 p.ci_low, p.ci_high)
                          for p in mine if p.ratio is not None])


def _write_lines(directory: str, name: str, lines: Sequence[str]) -> None:
    """Write the lines, each ending in a newline, to directory/name."""
    with open(os.path.join(directory, name), "w") as f:
        f.write("".join(line + "\n" for line in lines))
