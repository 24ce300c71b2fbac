#!/usr/bin/python3
#
# study_stats.py - the statistics of "make run", from a runs.csv alone
#   (and, for the mechanism form, its locks.csv and spins.csv)
#
# Reads the runs.csv of a study (one row per pgbench run: strategy,
# clients, round, tps; other columns are ignored) and, per point (strategy
# and client count):
#   - the median tps over the rounds with its 95% confidence interval, its
#     min and max, its coefficient of variation (sample standard deviation
#     over mean) and whether the runs split into two groups (collapse, the
#     "good" and "bad" runs of the flexlock thread; column "bifurcated", and
#     "bad_runs", the runs of the lower group): at least 5 runs, and over
#     the splits of their sorted log tps into two groups of at least 2, the
#     largest distance between the groups' means over the pooled standard
#     deviation inside them above its 99th percentile for single-peaked
#     (log-normal) runs of the same number, simulated with a fixed seed
#     (split_statistic(), bimodal_threshold()): 1% false alarms per point;
#   - for every strategy but the baseline (the first of --strategies): the
#     ratio of its tps to the baseline's tps of the same round and client
#     count, and over the rounds the median ratio with its 95% confidence
#     interval and a verdict: "faster", "slower" or "no difference".
#
# Method.  The interval for a median is the distribution-free one from
# order statistics: with n values sorted, [x(k), x(n+1-k)] covers the
# median with probability 1 - 2 P(B <= k-1), B ~ Binomial(n, 1/2); k is
# the largest rank that keeps that coverage at least the confidence asked
# (scipy.stats.binom).  With fewer than 6 rounds no such k exists for 95%:
# the interval shown is then [min, max], its coverage (below the level) is
# reported and the verdict is "no difference".  The verdict is "faster"
# only if the whole interval of the ratio lies above 1 + threshold,
# "slower" only if it lies below 1 - threshold, else "no difference": an
# interval that includes 1 never gives another verdict.
#
# For a point without a verdict, "rounds needed" estimates how many rounds
# would resolve the observed median ratio at the observed noise: the
# median's standard error taken as sqrt(pi/2) s / sqrt(n) (its large-sample
# value for normal data; s the standard deviation of the log ratios), the
# interval as z times that around the log of the median (z from
# scipy.stats.norm), and n the smallest number of rounds whose interval
# clears the threshold, at least the minimum for the confidence level.
# "-" when the observed ratio is within the threshold: no number of rounds
# makes it a difference.
#
# Mechanism (the fourth form).  Each count of a run is taken per 1000
# transactions of that run (pgbench's transactions actually processed):
# 1000 count / transactions, a tranche or call site absent from a run
# counting 0.  Rates are paired by round as the tps are: over the rounds in
# which both the variant and the baseline ran at that client count, the
# per-round ratio variant / base if the base's rate is above 0 in every one
# of them, else the per-round difference variant - base; then the median
# of these and its order-statistics interval as above, at --confidence for
# each row, not corrected for the number of rows (with many rows some
# intervals exclude no change by chance: the table explains a verdict of
# table (a), it is not one), min-max below the minimum rounds.  A row is
# marked * when its interval (of coverage at least the level) lies wholly
# above or below 1 (ratio) or 0 (difference).  Rows zero in every paired
# run of both sides are left out; the others are sorted by the size of the
# change, |ln((median_v + 1) / (median_b + 1))|, median_v and median_b the
# medians of each side's rates over the paired rounds (ties: by kind, name,
# measure): the 1 (one event, or ms, per 1000 transactions) keeps a change
# from 0 to a rare event below a doubling of a frequent one.
#
# Usage: study_stats.py [options] runs.csv
#        study_stats.py order [--noun strategy|variant] SEED ROUNDS STRATEGY...
#        study_stats.py clients SEED ROUNDS CLIENTS...
#        study_stats.py mechanism [options] runs.csv locks.csv spins.csv
#   The second form prints the strategy order of each round, one round a
#   line: the rows of a Williams design for n strategies (a Latin square
#   whose first row is 0, 1, n-1, 2, n-2, ... and whose rows are its
#   rotations; for odd n also the reversed rows, a second square), with
#   the strategies assigned to the numbers by a shuffle drawn with Python's
#   random.Random(SEED), and the rows of each square taken in a shuffled
#   order, the squares too.  So within each block of n rounds every
#   strategy runs once in every position, and over each period (n rounds
#   for even n, 2n for odd n) every strategy runs right after every other
#   one equally often: each strategy, the baseline included, has the same
#   positions and the same predecessors.  With ROUNDS not a multiple of
#   the period, the last rounds are an unbalanced part of a period: a
#   warning on stderr says so.
#   The third form prints an order of the client counts for each round, one
#   round a line, each a shuffle drawn with random.Random("clients:SEED"),
#   so that no client count always runs first after the warm-up.
#   --strategies "A B C"  strategies in report order, the first one the
#                         baseline (default: order of first appearance)
#   --threshold PCT       the verdict threshold in percent (default 2)
#   --confidence C        confidence level (default 0.95): of each tps
#                         interval, and of the whole study's ratio
#                         intervals together
#   --correction K        bonferroni (default): with m comparisons (points
#                         of the other strategies), each ratio interval at
#                         1 - (1 - C) / m, so that the chance of any false
#                         verdict in the study is at most 1 - C (printed:
#                         the sum of the intervals' exact non-coverage);
#                         none: each at C
#   --points FILE         write the points as CSV
#   --dat-dir DIR         write gnuplot data: tps-<s>.dat (clients, median,
#                         min, max) and, for the other strategies,
#                         ratio-<s>.dat (clients, ratio, ci_low, ci_high)
#                         and, where some are bimodal, bimodal-<s>.dat
#                         (clients, ratio)
#   --noun N              strategy (default) or variant: what the report's
#                         headings and columns call the compared servers
# Output: table (a), the noise table, the drift table (per point, the
#   median tps of the last third of the rounds over that of the first
#   third: far from 1 means the machine drifted during the study) and, if
#   runs.csv has a position column, the median ratio of each strategy to
#   the baseline by the position it ran in within its round (all client
#   counts together: a trend means drift within rounds), on stdout.
#   The fourth form compares the LWLock and spin-wait counts of each variant
#   (the column strategy of the three files) with the baseline's, per client
#   count, per 1000 transactions (see Mechanism above).  runs.csv must have
#   the column transactions (> 0 in every run); each row of locks.csv
#   (tranche, sh_acquires, ex_acquires, blocks, wait_time in ms) and of
#   spins.csv (file, line, func, contended, spins) must belong to a run of
#   runs.csv.  The rows: per tranche (its name) the measures acquires
#   (sh_acquires + ex_acquires), blocks and wait_ms (wait_time); per
#   spin-wait call site ("func file:line") contended and spins.
#   --variants "A B C"    variants in report order, the first one the
#                         baseline (default: order of first appearance in
#                         runs.csv); at least 2, each with runs, and
#                         every variant of runs.csv (as --strategies)
#   --confidence C        confidence level of each interval (default 0.95)
#   --top N               rows shown per variant and client count (default
#                         10), by the size of the change
#   --csv FILE            write every row as CSV: variant, clients, kind
#                         (lwlock or spin), name, measure, rounds,
#                         base_median, variant_median (the medians of the
#                         rates), stat (ratio or diff), median, ci_low,
#                         ci_high, coverage, change (the sort key), marker
#   Output: for each variant but the baseline and each client count, the
#   table (m) of its top rows: lock or call site, measure, the baseline's
#   and the variant's median rate, the median ratio ("x2.013") or
#   difference ("+1.25"), its interval and the marker, with the number of
#   rows left out, on stdout.
# Exit status: 0; 1 on an unreadable or malformed runs.csv (locks.csv,
#   spins.csv) or bad options ("study_stats: error: ..." on stderr).
#

import argparse
import csv
import math
import os
import sys

import numpy
from scipy import stats

ME = "study_stats"


class InputError(Exception):
    pass


def read_runs(path, positions=None, transactions=None):
    """Rows of runs.csv as (strategy, clients, round, tps) tuples.  With a
    dict "positions", also the position column, if the file has one:
    positions[(strategy, clients, round)] = position.  With a dict
    "transactions", also the transactions column, which the file must then
    have, each a positive number: transactions[(strategy, clients, round)]
    = transactions."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            need = ("strategy", "clients", "round", "tps")
            if transactions is not None:
                need += ("transactions",)
            require_columns(path, reader, need)
            rows = []
            for line, r in enumerate(reader, start=2):
                try:
                    rows.append((r["strategy"], int(r["clients"]),
                                 int(r["round"]), float(r["tps"])))
                    if positions is not None and r.get("position"):
                        positions[rows[-1][:3]] = int(r["position"])
                except (TypeError, ValueError):
                    raise InputError("%s line %d: bad clients, round, "
                                     "position or tps" % (path, line))
                if transactions is not None:
                    t = number(r["transactions"])
                    if t is None or t <= 0:
                        raise InputError("%s line %d: transactions %s: not a "
                                         "positive number"
                                         % (path, line, r["transactions"]))
                    transactions[rows[-1][:3]] = t
    except OSError as e:
        raise InputError("cannot read %s: %s" % (path, e.strerror))
    if not rows:
        raise InputError("%s has no runs" % path)
    return rows


def require_columns(path, reader, need):
    """InputError naming the columns of "need" that the csv.DictReader
    "reader" of the file "path" lacks."""
    missing = [c for c in need if c not in (reader.fieldnames or [])]
    if missing:
        raise InputError("%s: missing column%s %s" % (
            path, "s" if len(missing) > 1 else "", ", ".join(missing)))


def number(text):
    """The finite number a CSV field holds, or None."""
    try:
        x = float(text)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def min_rounds(confidence):
    """The fewest values for which an order-statistics interval of the
    median reaches the confidence level."""
    n = 1
    while 1 - 2 * stats.binom.cdf(0, n, 0.5) < confidence:
        n += 1
    return n


def median_ci(values, confidence):
    """Median, interval (low, high) and its exact coverage.  The interval
    is [x(k), x(n+1-k)] for the largest k whose coverage is at least
    the confidence level; [min, max] and a lower coverage if none is."""
    x = numpy.sort(numpy.asarray(values, dtype=float))
    n = len(x)
    alpha = 1 - confidence
    k = 1
    while k < n + 1 - k and 2 * stats.binom.cdf(k, n, 0.5) <= alpha:
        k += 1
    coverage = 1 - 2 * stats.binom.cdf(k - 1, n, 0.5)
    return float(numpy.median(x)), float(x[k - 1]), float(x[n - k]), coverage


def cv(values):
    """Coefficient of variation: sample standard deviation over mean."""
    if len(values) < 2:
        return float("nan")
    return float(numpy.std(values, ddof=1) / numpy.mean(values))


BIMODAL_MIN_RUNS = 5
BIMODAL_FALSE_ALARMS = 0.01
# what the report calls the compared servers (--noun): "strategy", or
# "variant" for make run VARIANTS=
NOUN = "strategy"
# the floor of the mechanism table's sort key, per 1000 transactions
CHANGE_FLOOR = 1.0
BIMODAL_DRAWS = 20000


def split_statistic(logs):
    """For rows of sorted values (a 2-D array), the largest over the splits
    into a lower and an upper group of at least 2 values each of the
    distance between the groups' means over the pooled standard deviation
    inside the groups, and the size of the lower group at that split.  A
    single outlying run is not a group."""
    x = numpy.asarray(logs, dtype=float)
    n = x.shape[1]
    c1 = numpy.cumsum(x, axis=1)
    c2 = numpy.cumsum(x * x, axis=1)
    t1, t2 = c1[:, -1:], c2[:, -1:]
    i = numpy.arange(2, n - 1)				# size of the lower group
    s1_lo, s2_lo = c1[:, 1:-2], c2[:, 1:-2]
    s1_hi, s2_hi = t1 - s1_lo, t2 - s2_lo
    m_lo, m_hi = s1_lo / i, s1_hi / (n - i)
    ss = (s2_lo - s1_lo * m_lo) + (s2_hi - s1_hi * m_hi)
    sd = numpy.sqrt(numpy.maximum(ss, 0) / (n - 2))
    diff = m_hi - m_lo
    with numpy.errstate(divide="ignore", invalid="ignore"):
        g = numpy.where(sd > 1e-12 * numpy.maximum(1, numpy.abs(m_hi)),
                        diff / sd,
                        numpy.where(diff > 1e-12, numpy.inf, 0.0))
    best = numpy.argmax(g, axis=1)
    return g[numpy.arange(len(g)), best], best + 2


_bimodal_thresholds = {}


def bimodal_threshold(n):
    """The split statistic's 1 - BIMODAL_FALSE_ALARMS quantile for n runs of
    single-peaked (normal, in log tps) data: simulated, with a fixed seed so
    that it is the same in every run.  The statistic does not depend on the
    data's mean or spread."""
    if n not in _bimodal_thresholds:
        rng = numpy.random.default_rng(n)
        draws = numpy.sort(rng.standard_normal((BIMODAL_DRAWS, n)), axis=1)
        g, _ = split_statistic(draws)
        _bimodal_thresholds[n] = float(numpy.quantile(
            g, 1 - BIMODAL_FALSE_ALARMS))
    return _bimodal_thresholds[n]


def bimodal(values):
    """Whether the runs of a point fall into two groups (collapse), and how
    many runs are in the lower one: at least BIMODAL_MIN_RUNS runs, and the
    split statistic of their log tps above bimodal_threshold(n), which
    single-peaked data exceeds in BIMODAL_FALSE_ALARMS of the cases.
    Returns (flag, runs in the lower group, or 0)."""
    n = len(values)
    if n < BIMODAL_MIN_RUNS or min(values) <= 0:
        return False, 0
    logs = numpy.sort(numpy.log(numpy.asarray(values, dtype=float)))
    g, k = split_statistic(logs[numpy.newaxis, :])
    if g[0] > bimodal_threshold(n):
        return True, int(k[0])
    return False, 0


def verdict(low, high, threshold, enough):
    if not enough or low <= 1 <= high:
        return "no difference"
    if low > 1 + threshold:
        return "faster"
    if high < 1 - threshold:
        return "slower"
    return "no difference"


def rounds_needed(log_ratios, ratio, threshold, confidence):
    """Rounds that would resolve this median ratio at this noise, or None
    when the ratio is within the threshold."""
    if ratio >= 1:
        margin = math.log(ratio) - math.log(1 + threshold)
    else:
        margin = math.log(1 - threshold) - math.log(ratio)
    if margin <= 0:
        return None
    nmin = min_rounds(confidence)
    if len(log_ratios) < 2:
        return nmin
    s = float(numpy.std(log_ratios, ddof=1))
    z = float(stats.norm.ppf(1 - (1 - confidence) / 2))
    n = math.ceil((z * math.sqrt(math.pi / 2) * s / margin) ** 2)
    return max(n, nmin)


def comparisons(rows, strategies):
    """The number of ratio intervals of a study: the points of the other
    strategies that have at least one round in common with the baseline's
    point of the same client count."""
    have = {(s, c, r) for s, c, r, t in rows}
    base = strategies[0]
    return len({(s, c) for (s, c, r) in have
                 if s != base and s in strategies and (base, c, r) in have})


def analyse(rows, strategies, threshold, confidence,
            ratio_confidence=None):
    """One dict per point, in the order of strategies, then clients.  The
    tps intervals are at confidence, the ratio intervals at
    ratio_confidence (default: the same)."""
    if ratio_confidence is None:
        ratio_confidence = confidence
    tps = {}
    for s, c, r, t in rows:
        if (s, c, r) in tps:
            raise InputError("two runs for strategy %s, %d clients, round %d"
                             % (s, c, r))
        tps[(s, c, r)] = t
    base = strategies[0]
    points = []
    for s in strategies:
        for c in sorted({c for (s2, c, r) in tps if s2 == s}):
            rounds = sorted(r for (s2, c2, r) in tps if s2 == s and c2 == c)
            v = [tps[(s, c, r)] for r in rounds]
            med, lo, hi, cov = median_ci(v, confidence)
            split, bad = bimodal(v)
            p = {
                "strategy": s, "clients": c, "n": len(v), "median": med,
                "lo": min(v), "hi": max(v), "bifurcated": False,
                "bad_runs": 0, "fisher_p": None,
                "cv": cv(v), "tps_ci_low": lo, "tps_ci_high": hi,
                "coverage": cov, "ratio": None, "ci_low": None,
                "ci_high": None, "pairs": 0, "verdict": "",
                "rounds_needed": None,
            }
            p["bifurcated"], p["bad_runs"] = split, bad
            if s == base:
                p["verdict"] = "baseline"
            else:
                ratios = [tps[(s, c, r)] / tps[(base, c, r)] for r in rounds
                          if (base, c, r) in tps and tps[(base, c, r)] > 0]
                p["pairs"] = len(ratios)
                if ratios:
                    rmed, rlo, rhi, rcov = median_ci(ratios, ratio_confidence)
                    enough = rcov >= ratio_confidence
                    p.update(ratio=rmed, ci_low=rlo, ci_high=rhi,
                             coverage=rcov,
                             verdict=verdict(rlo, rhi, threshold, enough))
                    if p["verdict"] == "no difference":
                        p["rounds_needed"] = rounds_needed(
                            numpy.log(ratios), rmed, threshold,
                            ratio_confidence)
                else:
                    p["verdict"] = "no pairs"
            points.append(p)

    # collapse: compare the bad runs of each point with the baseline's
    for p in points:
        if p["strategy"] == base:
            continue
        b = [q for q in points
             if q["strategy"] == base and q["clients"] == p["clients"]]
        if not b:
            continue
        b = b[0]
        _, pval = stats.fisher_exact(
            [[p["bad_runs"], p["n"] - p["bad_runs"]],
             [b["bad_runs"], b["n"] - b["bad_runs"]]])
        p["fisher_p"] = float(pval)
        if (p["bifurcated"] or b["bifurcated"]) and p["verdict"] in (
                "faster", "slower", "no difference"):
            p["verdict"] = "bimodal"
            p["rounds_needed"] = None
    return points


def fmt(x, digits=0):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return "%.*f" % (digits, x)


def table(header, rows, right):
    """A psql-like aligned table: header, a rule, the rows."""
    w = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
         for i, h in enumerate(header)]
    def line(cells):
        return "|".join(" " + (c.rjust(w[i]) if right[i] else c.ljust(w[i]))
                        + " " for i, c in enumerate(cells)).rstrip()
    out = [line(header), "+".join("-" * (x + 2) for x in w)]
    out += [line(r) for r in rows]
    return "\n".join(out)


def report(points, strategies, threshold, confidence, ratio_confidence,
           ncomparisons, correction):
    base = strategies[0]
    nr = max(p["n"] for p in points)
    level = "%g%%" % (100 * confidence)
    rlevel = "%.4g%%" % (100 * ratio_confidence)
    print("(a) tps per client count: median over rounds and %s interval "
          "(order statistics); for each %s the ratio of its tps to %s's "
          "in the same round: median, %s interval, verdict (threshold %g%%); "
          "%d round%s; * bimodal (two groups of runs)"
          % (level, NOUN, base, rlevel, 100 * threshold, nr,
             "" if nr == 1 else "s"))
    rows = []
    for c in sorted({p["clients"] for p in points}):
        for p in [p for p in points if p["clients"] == c]:
            ratio = p["ratio"] is not None
            need = p["rounds_needed"]
            rows.append([
                str(c), p["strategy"],
                fmt(p["median"]) + (" *" if p["bifurcated"] else ""),
                fmt(p["tps_ci_low"]) + "-" + fmt(p["tps_ci_high"])
                if p["strategy"] == base else "",
                fmt(p["ratio"], 3) if ratio else "",
                fmt(p["ci_low"], 3) + "-" + fmt(p["ci_high"], 3)
                if ratio else "",
                p["verdict"],
                ("-" if need is None else str(need))
                if p["verdict"] == "no difference" else "",
            ])
    print(table(["clients", NOUN, "tps", level + " CI", "ratio",
                 rlevel + " CI", "verdict", "rounds needed"], rows,
                [True, False, True, True, True, True, False, True]))
    low = [p for p in points if p["ratio"] is not None
           and p["coverage"] < ratio_confidence]
    if low:
        print("fewer than %d rounds: the intervals are min-max, of coverage "
              "%.1f%% only, and give no verdict"
              % (min_rounds(ratio_confidence), 100 * low[0]["coverage"]))
    if ncomparisons > 0:
        # a false verdict needs an interval that misses the true ratio;
        # intervals too short to give a verdict give none
        bound = sum(1 - p["coverage"] for p in points
                    if p["ratio"] is not None
                    and p["coverage"] >= ratio_confidence)
        print("comparisons: %d; %s: each ratio interval at %s, so that the "
              "chance of at least one false verdict in the study is at most "
              "%.2f%% (the sum of the intervals' exact non-coverage)"
              % (ncomparisons, correction, rlevel, 100 * bound))
    print("rounds needed: rounds that would resolve the ratio observed, at "
          "the noise observed; - within the threshold")

    print()
    split = sorted({p["clients"] for p in points if p["bifurcated"]})
    if not split:
        print("collapse: no point's runs fall into two groups (split test "
              "in log tps, %g%% false alarms per point of single-peaked "
              "runs; needs %d runs)"
              % (100 * BIMODAL_FALSE_ALARMS, BIMODAL_MIN_RUNS))
    else:
        print("collapse: points whose runs fall into two groups (split test "
              "in log tps, %g%% false alarms per point): bad runs (the lower "
              "group) of each %s and of %s, and Fisher's exact test of "
              "the two counts; their ratios get the verdict bimodal"
              % (100 * BIMODAL_FALSE_ALARMS, NOUN, base))
        rows = []
        for c in split:
            b = [q for q in points if q["strategy"] == base
                 and q["clients"] == c]
            for p in points:
                if p["clients"] != c or p["strategy"] == base:
                    continue
                rows.append([str(c), p["strategy"],
                             "%d of %d" % (p["bad_runs"], p["n"]),
                             "%d of %d" % (b[0]["bad_runs"], b[0]["n"])
                             if b else "",
                             fmt(p["fisher_p"], 3)
                             if p["fisher_p"] is not None else ""])
            if len(strategies) == 1 and b:
                rows.append([str(c), base, "%d of %d" % (b[0]["bad_runs"],
                                                       b[0]["n"]), "", ""])
        print(table(["clients", NOUN, "bad runs", base + " bad runs",
                     "Fisher p"], rows, [True, False, True, True, True]))

    print()
    print("noise: coefficient of variation of tps across rounds (%)")
    rows = []
    for c in sorted({p["clients"] for p in points}):
        row = [str(c)]
        for s in strategies:
            q = [p for p in points if p["clients"] == c and p["strategy"] == s]
            row.append(fmt(100 * q[0]["cv"], 1) if q else "")
        rows.append(row)
    print(table(["clients"] + strategies, rows,
                [True] * (len(strategies) + 1)))


def drift_and_positions(rows, positions, strategies):
    """Print the drift table (per point, the median tps of the last third
    of its rounds over that of the first third) and, with positions, the
    median ratio to the baseline per position of the other strategy in its
    round, over all client counts."""
    tps = {(s, c, r): t for s, c, r, t in rows}
    clients = sorted({c for s, c, r, t in rows})
    print()
    print("drift: median tps of the last third of the rounds over the first "
          "third, per point")
    out = []
    for c in clients:
        row = [str(c)]
        for s in strategies:
            rounds = sorted(r for (s2, c2, r) in tps if s2 == s and c2 == c)
            k = len(rounds) // 3
            if k == 0:
                row.append("")
                continue
            first = numpy.median([tps[(s, c, r)] for r in rounds[:k]])
            last = numpy.median([tps[(s, c, r)] for r in rounds[-k:]])
            row.append(fmt(last / first, 3) if first > 0 else "")
        out.append(row)
    print(table(["clients"] + strategies, out, [True] * (len(strategies) + 1)))

    if not positions or len(strategies) < 2:
        return
    base = strategies[0]
    npos = max(positions.values())
    print()
    print("position: median ratio to %s in the same round by the position "
          "the %s ran in (number of ratios), all client counts"
          % (base, NOUN))
    out = []
    for s in strategies[1:]:
        by = {}
        for (s2, c, r), t in tps.items():
            b = tps.get((base, c, r))
            if s2 != s or not b or (s, c, r) not in positions:
                continue
            by.setdefault(positions[(s, c, r)], []).append(t / b)
        out.append([s] + ["%s (%d)" % (fmt(numpy.median(by[q]), 3),
                                        len(by[q])) if q in by else ""
                          for q in range(1, npos + 1)])
    print(table([NOUN] + ["position %d" % q
                                for q in range(1, npos + 1)],
                out, [False] + [True] * npos))


COLUMNS = ["strategy", "clients", "n", "median", "lo", "hi", "bifurcated",
           "cv", "tps_ci_low", "tps_ci_high", "pairs", "ratio", "ci_low",
           "ci_high", "coverage", "verdict", "rounds_needed", "bad_runs",
           "fisher_p"]


def write_points(points, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for p in points:
            row = []
            for k in COLUMNS:
                v = p[k]
                if isinstance(v, bool):
                    v = "t" if v else "f"
                elif isinstance(v, float):
                    v = "" if math.isnan(v) else "%.6g" % v if k in (
                        "cv", "ratio", "ci_low", "ci_high", "coverage",
                        "fisher_p") \
                        else "%.3f" % v
                elif v is None:
                    v = ""
                row.append(v)
            w.writerow(row)


def write_dat(points, strategies, directory):
    for s in strategies:
        mine = [p for p in points if p["strategy"] == s]
        split = [p for p in mine if p["verdict"] == "bimodal"
                 and p["ratio"] is not None]
        if split:
            with open("%s/bimodal-%s.dat" % (directory, s), "w") as f:
                for p in split:
                    f.write("%d %.6f\n" % (p["clients"], p["ratio"]))
        with open("%s/tps-%s.dat" % (directory, s), "w") as f:
            for p in mine:
                f.write("%d %.3f %.3f %.3f\n"
                        % (p["clients"], p["median"], p["lo"], p["hi"]))
        if s != strategies[0]:
            with open("%s/ratio-%s.dat" % (directory, s), "w") as f:
                for p in mine:
                    if p["ratio"] is not None:
                        f.write("%d %.6f %.6f %.6f\n" % (
                            p["clients"], p["ratio"], p["ci_low"],
                            p["ci_high"]))


def williams(n):
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


def order_period(n):
    """Rounds in one balanced period of the order for n strategies."""
    return n if n % 2 == 0 else 2 * n


def order(argv):
    """Print the strategy order of each round (see the header); a leading
    "--noun variant" (or "--noun strategy", the default) names what the
    warning speaks of."""
    import random
    plural = "strategies"
    if argv[:1] == ["--noun"] and argv[1:2] in (["strategy"], ["variant"]):
        plural = "variants" if argv[1] == "variant" else plural
        argv = argv[2:]
    if len(argv) < 3 or not argv[0].isdigit() or not argv[1].isdigit() \
            or int(argv[1]) < 1:
        print("usage: %s order [--noun strategy|variant] SEED ROUNDS "
              "STRATEGY..." % ME,
              file=sys.stderr)
        return 1
    rng = random.Random(int(argv[0]))
    rounds = int(argv[1])
    strategies = list(argv[2:])
    rng.shuffle(strategies)
    n = len(strategies)
    period = order_period(n)
    rows = []
    while len(rows) < rounds:
        squares = williams(n)
        rng.shuffle(squares)
        for square in squares:
            rng.shuffle(square)
            rows.extend(square)
    for row in rows[:rounds]:
        print(" ".join(strategies[k] for k in row))
    if n > 1 and rounds % period != 0:
        rest = rounds % period
        what = "predecessors" if rest % n == 0 else \
            "positions and predecessors"
        print("%s: warning: %d rounds are not a multiple of %d, the period of "
              "the balanced order for %d %s: over the last %d rounds "
              "the %s' %s are not balanced; use a multiple of %d"
              % (ME, rounds, period, n, plural, rest, plural, what, period),
              file=sys.stderr)
    return 0


def client_order(argv):
    """Print the order of the client counts of each round (see the
    header)."""
    import random
    if len(argv) < 3 or not argv[0].isdigit() or not argv[1].isdigit() \
            or int(argv[1]) < 1:
        print("usage: %s clients SEED ROUNDS CLIENTS..." % ME, file=sys.stderr)
        return 1
    rng = random.Random("clients:" + argv[0])
    for r in range(int(argv[1])):
        clients = list(argv[2:])
        rng.shuffle(clients)
        print(" ".join(clients))
    return 0


# --- mechanism: lock and spin counts per transaction, variant against base ---

# The measures of each kind of row: (name, columns summed), and the columns
# that name the row.
MECHANISM_KINDS = (
    ("lwlock", ("tranche",),
     (("acquires", ("sh_acquires", "ex_acquires")),
      ("blocks", ("blocks",)),
      ("wait_ms", ("wait_time",)))),
    ("spin", ("func", "file", "line"),
     (("contended", ("contended",)),
      ("spins", ("spins",)))),
)

MECHANISM_COLUMNS = ["variant", "clients", "kind", "name", "measure",
                     "rounds", "base_median", "variant_median", "stat",
                     "median", "ci_low", "ci_high", "coverage", "change",
                     "marker"]


def read_counts(path, kind, runs, counts):
    """Add the rows of locks.csv (kind "lwlock") or spins.csv (kind "spin")
    to counts[(strategy, clients, round)][(kind, name, measure)], summed
    over the rows of the same name in a run: the name is the tranche, or
    "func file:line" for a spin-wait call site.  Every row must belong to a
    run of runs (a dict keyed by (strategy, clients, round))."""
    names, measures = [(k[1], k[2]) for k in MECHANISM_KINDS
                       if k[0] == kind][0]
    need = ["strategy", "clients", "round"] + list(names)
    for m, cols in measures:
        need += [c for c in cols if c not in need]
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            require_columns(path, reader, need)
            for line, r in enumerate(reader, start=2):
                try:
                    run = (r["strategy"], int(r["clients"]), int(r["round"]))
                except (TypeError, ValueError):
                    raise InputError("%s line %d: bad clients or round"
                                     % (path, line))
                if run not in runs:
                    raise InputError("%s line %d: no run of %s, %d clients, "
                                     "round %d in runs.csv" % ((path, line)
                                                               + run))
                if kind == "lwlock":
                    name = r["tranche"]
                else:
                    name = "%s %s:%s" % (r["func"], r["file"], r["line"])
                mine = counts.setdefault(run, {})
                for m, cols in measures:
                    total = 0.0
                    for c in cols:
                        x = number(r[c])
                        if x is None or x < 0:
                            raise InputError("%s line %d: %s %s: not a "
                                             "non-negative number"
                                             % (path, line, c, r[c]))
                        total += x
                    key = (kind, name, m)
                    mine[key] = mine.get(key, 0.0) + total
    except OSError as e:
        raise InputError("cannot read %s: %s" % (path, e.strerror))


def mechanism_analyse(transactions, counts, variants, confidence):
    """One dict per variant other than the baseline and client count of
    that variant: its paired rounds and its rows, sorted by the size of the
    change.  Each row holds the columns of MECHANISM_COLUMNS."""
    base = variants[0]
    points = []
    for v in variants[1:]:
        for c in sorted({c for (s, c, r) in transactions if s == v}):
            rounds = sorted(r for (s, c2, r) in transactions
                            if s == v and c2 == c
                            and (base, c, r) in transactions)
            keys = set()
            for r in rounds:
                for s in (base, v):
                    keys.update(counts.get((s, c, r), {}))
            rows = []
            for key in keys:
                rate = {}
                for s in (base, v):
                    rate[s] = [1000 * counts.get((s, c, r), {}).get(key, 0.0)
                               / transactions[(s, c, r)] for r in rounds]
                rb, rv = rate[base], rate[v]
                if not any(rb) and not any(rv):
                    continue
                if all(x > 0 for x in rb):
                    stat, none = "ratio", 1.0
                    values = [a / b for a, b in zip(rv, rb)]
                else:
                    stat, none = "diff", 0.0
                    values = [a - b for a, b in zip(rv, rb)]
                med, lo, hi, cov = median_ci(values, confidence)
                mb, mv = float(numpy.median(rb)), float(numpy.median(rv))
                marked = cov >= confidence and (lo > none or hi < none)
                rows.append({
                    "variant": v, "clients": c, "kind": key[0],
                    "name": key[1], "measure": key[2],
                    "rounds": len(rounds), "base_median": mb,
                    "variant_median": mv, "stat": stat, "median": med,
                    "ci_low": lo, "ci_high": hi, "coverage": cov,
                    "change": abs(math.log((mv + CHANGE_FLOOR)
                                           / (mb + CHANGE_FLOOR))),
                    "marker": "*" if marked else "",
                })
            rows.sort(key=lambda q: (-q["change"], q["kind"], q["name"],
                                     q["measure"]))
            points.append({"variant": v, "clients": c, "rounds": rounds,
                           "rows": rows})
    return points


def rate_fmt(x, sign=False):
    """A rate per 1000 transactions: 2 decimals from 1 on, 2 significant
    digits below (at most 6 decimals)."""
    if x == 0 or abs(x) >= 1:
        digits = 2
    else:
        digits = min(6, 1 - math.floor(math.log10(abs(x))))
    return ("%+.*f" if sign else "%.*f") % (digits, x)


def mechanism_report(points, variants, confidence, top, csv_name):
    base = variants[0]
    level = "%g%%" % (100 * confidence)
    for i, p in enumerate(points):
        if i:
            print()
        where = "(m) mechanism: %s against %s, %d clients: " % (
            p["variant"], base, p["clients"])
        n = len(p["rounds"])
        if not n:
            print(where + "no round in which both ran")
            continue
        rows = p["rows"]
        if not rows:
            print(where + "no LWLock or spin-wait call site counted in the "
                  "%d round%s in common" % (n, "" if n == 1 else "s"))
            continue
        print(where + "per 1000 transactions, median over %d round%s of the "
              "paired ratio (difference where the base is 0 in some round), "
              "%s interval not corrected for the %d rows: the table "
              "explains, the verdicts of table (a) decide; * the interval "
              "excludes no change"
              % (n, "" if n == 1 else "s", level, len(rows)))
        out = []
        for q in rows[:top]:
            if q["stat"] == "ratio":
                stat = "x%.3f" % q["median"]
                ci = "[%.3f, %.3f]" % (q["ci_low"], q["ci_high"])
            else:
                stat = rate_fmt(q["median"], True)
                ci = "[%s, %s]" % (rate_fmt(q["ci_low"], True),
                                   rate_fmt(q["ci_high"], True))
            out.append([q["name"], q["measure"], rate_fmt(q["base_median"]),
                        rate_fmt(q["variant_median"]), stat, ci,
                        q["marker"]])
        print(table(["lock or call site", "measure", base, p["variant"],
                     "ratio/diff", level + " interval", "*"], out,
                    [False, False, True, True, True, True, False]))
        if len(rows) > top:
            print("(%d more rows %s)" % (
                len(rows) - top, "in " + csv_name if csv_name
                else "not shown; --csv FILE writes every row"))
        if rows[0]["coverage"] < confidence:
            print("fewer than %d rounds: the intervals are min-max, of "
                  "coverage %.1f%% only, and mark nothing"
                  % (min_rounds(confidence), 100 * rows[0]["coverage"]))


def write_mechanism(points, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(MECHANISM_COLUMNS)
        for p in points:
            for q in p["rows"]:
                w.writerow(["%.6g" % q[k] if isinstance(q[k], float)
                            else q[k] for k in MECHANISM_COLUMNS])


def mechanism(argv):
    """The mechanism form (see the header)."""
    ap = argparse.ArgumentParser(prog=ME + " mechanism")
    ap.add_argument("runs")
    ap.add_argument("locks")
    ap.add_argument("spins")
    ap.add_argument("--variants")
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--csv")
    a = ap.parse_args(argv)
    try:
        if not 0 < a.confidence < 1:
            raise InputError("--confidence must lie between 0 and 1")
        if a.top < 1:
            raise InputError("--top must be at least 1")
        transactions = {}
        rows = read_runs(a.runs, transactions=transactions)
        have = set()
        for r in rows:
            if r[:3] in have:
                raise InputError("two runs for strategy %s, %d clients, "
                                 "round %d" % r[:3])
            have.add(r[:3])
        variants, seen = report_order(rows, a.variants, "variants", a.runs)
        absent = [s for s in variants if s not in seen]
        if absent:
            raise InputError("%s has no runs of %s" % (a.runs,
                                                       " ".join(absent)))
        twice = [s for i, s in enumerate(variants) if s in variants[:i]]
        if twice:
            raise InputError("--variants names %s twice" % " ".join(twice))
        if len(variants) < 2:
            raise InputError("mechanism needs at least 2 variants, the "
                             "baseline and another; %s has %s only"
                             % (a.runs, " ".join(variants)))
        counts = {}
        read_counts(a.locks, "lwlock", transactions, counts)
        read_counts(a.spins, "spin", transactions, counts)
        points = mechanism_analyse(transactions, counts, variants,
                                   a.confidence)
    except InputError as e:
        print("%s: error: %s" % (ME, e), file=sys.stderr)
        return 1
    mechanism_report(points, variants, a.confidence, a.top,
                     os.path.basename(a.csv) if a.csv else None)
    if a.csv:
        write_mechanism(points, a.csv)
    return 0


def report_order(rows, given, what, path):
    """The names of the rows' first column in report order, and in their
    order of first appearance: the space-separated list "given" (option
    --<what>), or without it the order of appearance.  InputError if a
    name of the rows is not in the list."""
    seen = []
    for r in rows:
        if r[0] not in seen:
            seen.append(r[0])
    names = given.split() if given else seen
    unknown = [s for s in seen if s not in names]
    if unknown:
        raise InputError("%s has %s not in --%s: %s"
                         % (path, what, what, " ".join(unknown)))
    return names, seen


def main(argv):
    if argv and argv[0] == "order":
        return order(argv[1:])
    if argv and argv[0] == "clients":
        return client_order(argv[1:])
    if argv and argv[0] == "mechanism":
        return mechanism(argv[1:])
    ap = argparse.ArgumentParser(prog=ME)
    ap.add_argument("runs")
    ap.add_argument("--strategies")
    ap.add_argument("--threshold", type=float, default=2.0)
    ap.add_argument("--confidence", type=float, default=0.95)
    ap.add_argument("--correction", choices=("bonferroni", "none"),
                    default="bonferroni")
    ap.add_argument("--points")
    ap.add_argument("--dat-dir")
    ap.add_argument("--noun", choices=("strategy", "variant"),
                    default="strategy")
    a = ap.parse_args(argv)
    global NOUN
    NOUN = a.noun
    try:
        if not 0 <= a.threshold < 100:
            raise InputError("--threshold must be a percentage in [0, 100)")
        if not 0 < a.confidence < 1:
            raise InputError("--confidence must lie between 0 and 1")
        positions = {}
        rows = read_runs(a.runs, positions)
        strategies, seen = report_order(rows, a.strategies, "strategies",
                                        a.runs)
        if strategies[0] not in seen:
            raise InputError("%s has no runs of the baseline %s"
                             % (a.runs, strategies[0]))
        strategies = [s for s in strategies if s in seen]
        ncomparisons = comparisons(rows, strategies)
        ratio_confidence = a.confidence
        if a.correction == "bonferroni" and ncomparisons > 1:
            ratio_confidence = 1 - (1 - a.confidence) / ncomparisons
        points = analyse(rows, strategies, a.threshold / 100, a.confidence,
                         ratio_confidence)
    except InputError as e:
        print("%s: error: %s" % (ME, e), file=sys.stderr)
        return 1
    report(points, strategies, a.threshold / 100, a.confidence,
           ratio_confidence, ncomparisons,
           "Bonferroni" if a.correction == "bonferroni" else "no correction")
    drift_and_positions([r for r in rows if r[0] in strategies], positions,
                        strategies)
    if a.points:
        write_points(points, a.points)
    if a.dat_dir:
        write_dat(points, strategies, a.dat_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
