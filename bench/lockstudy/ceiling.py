"""The ground truth of utilization and ceiling (bench/ceiling.sh): runs
of one lock whose hold time is known, read from runs.csv, against what
pg_lwlock_utilization reports.

Each transaction of the benchmark sleeps on the client (think time), then
holds the lockstat_test LWLock exclusively for hold_us microseconds,
busy-waiting, so every hold lasts hold_us to within a clock read.  A run
is one client count for a fixed time after a reset; runs.csv has per run
its round, clients, pgbench's tps and the lockstat_test row of
pg_lwlock_utilization (mode exclusive) read after it: acquires, samples,
busy, busy_se_max, ceiling_factor.

Two checks, each an interval over the rounds and a verdict that says
only what the interval shows (stats.verdict, at a margin):
  - utilization: busy against X h, X the run's tps and h the known hold,
    the ratio busy / (X h) at the lowest client count; and per run
    whether |busy - X h| is within twice busy_se_max, the sampling error
    the view states;
  - ceiling: the ceiling predicted at the lowest client count, X / busy
    (the view's ceiling_factor times tps), against the tps measured at
    each higher count in the same round; at the highest count, where the
    lock is saturated, the measured tps should reach the prediction.

Calls stats, data (number, InputError) and tables.
"""

import argparse
import csv
import math
import sys
from statistics import median
from typing import Dict, List, Optional, Sequence, Tuple

from . import stats
from .data import InputError, number, require_columns
from .tables import table

COLUMNS = ("round", "clients", "tps", "acquires", "samples", "busy",
           "busy_se_max", "ceiling_factor")
# the margin of both verdicts: "equivalent (±5%)" is "agrees within 5 %"
MARGIN = 0.05

Run = Dict[str, float]


def read_runs(path: str) -> List[Run]:
    """The runs of runs.csv, each a dict of COLUMNS' numbers (those after
    tps None where the run had no timed hold of the lock: no row in the
    view).
    Raises InputError naming the file and line of a bad field."""
    runs = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        require_columns(path, reader.fieldnames, COLUMNS)
        for line, r in enumerate(reader, start=2):
            run = {}
            for c in COLUMNS:
                x = number(r[c]) if r[c] != "" else None
                if x is None and (r[c] != "" or c in COLUMNS[:3]):
                    raise InputError("%s line %d: %s %r: not a number"
                                     % (path, line, c, r[c]))
                run[c] = x
            runs.append(run)
    if not runs:
        raise InputError("%s: no runs" % path)
    return runs


def by_round(runs: Sequence[Run]) -> Dict[int, Dict[int, Run]]:
    """round: clients: run."""
    out: Dict[int, Dict[int, Run]] = {}
    for r in runs:
        out.setdefault(int(r["round"]), {})[int(r["clients"])] = r
    return out


def utilization_ratio(run: Run, hold_us: float) -> Optional[float]:
    """busy / (X h): the reported utilization over the known one; None
    without a timed hold or at 0 tps."""
    known = run["tps"] * hold_us / 1e6
    if run["busy"] is None or known <= 0:
        return None
    return run["busy"] / known


def within_error(run: Run, hold_us: float) -> Optional[bool]:
    """Whether |busy - X h| <= 2 busy_se_max; None without a timed
    hold."""
    if run["busy"] is None or run["busy_se_max"] is None:
        return None
    return abs(run["busy"] - run["tps"] * hold_us / 1e6) \
        <= 2 * run["busy_se_max"]


def ceiling_ratios(rounds: Dict[int, Dict[int, Run]], low: int,
                   clients: int) -> List[float]:
    """Per round that ran both counts with a timed hold and some tps at
    low: the tps at clients over the ceiling predicted at low (its tps /
    busy)."""
    out = []
    for runs in rounds.values():
        base, run = runs.get(low), runs.get(clients)
        if base is None or run is None or not base["busy"] \
                or not base["tps"] > 0:
            continue
        out.append(run["tps"] / (base["tps"] / base["busy"]))
    return out


def interval(ratios: Sequence[float], confidence: float
             ) -> Tuple[float, float, float, str]:
    """Hodges-Lehmann estimate of the ratios (on the log scale) with the
    signed-rank interval, and the verdict at MARGIN (the mean's t
    interval must agree, as in the study); "not resolved" below the
    rounds the confidence needs."""
    logs = [math.log(r) for r in ratios]
    est, low, high, coverage = stats.hl_ci(logs, confidence)
    _, mlow, mhigh = stats.mean_ci(logs, confidence)
    enough = coverage >= confidence
    lo, hi = math.exp(low), math.exp(high)
    mean = (math.exp(mlow), math.exp(mhigh)) if len(logs) > 1 else None
    return (math.exp(est), lo, hi,
            stats.verdict(lo, hi, MARGIN, enough, mean))


def report(runs: Sequence[Run], hold_us: float, confidence: float) -> str:
    """The text of the two checks."""
    rounds = by_round(runs)
    counts = sorted({int(r["clients"]) for r in runs})
    low, high = counts[0], counts[-1]
    ideal = 1e6 / hold_us
    rows = []
    for c in counts:
        cr = [r for r in runs if int(r["clients"]) == c]
        util = [u for u in (utilization_ratio(r, hold_us) for r in cr)
                if u is not None]
        inside = [w for w in (within_error(r, hold_us) for r in cr)
                  if w is not None]
        busy = [r["busy"] for r in cr if r["busy"] is not None]
        ceil = ceiling_ratios(rounds, low, c)
        rows.append([str(c), str(len(cr)),
                     "%.1f" % median([r["tps"] for r in cr]),
                     "%.3f" % median(busy) if busy else "-",
                     "%.3f" % median(util) if util else "-",
                     "%d of %d" % (sum(inside), len(inside)),
                     "%.3f" % median(ceil) if ceil else "-"])
    out = [table(("clients", "runs", "median tps", "median busy",
                  "busy / (X h)", "within 2 se", "tps / predicted ceiling"),
                 rows, (True,) * 7), ""]
    out.append("hold h = %g us (busy-waited): the lock cannot pass %.1f "
               "tps (1 / h)" % (hold_us, ideal))
    lows = [u for u in (utilization_ratio(r, hold_us) for r in runs
                        if int(r["clients"]) == low) if u is not None]
    if len(lows) >= 2:
        est, lo, hi, v = interval(lows, confidence)
        out.append("utilization at %d client%s: busy / (X h) %.3f "
                   "[%.3f, %.3f] over %d rounds: %s"
                   % (low, "" if low == 1 else "s", est, lo, hi, len(lows),
                      _said(v, "the reported utilization is X h")))
    # a run at 0 tps has no log ratio: it is in the table, not the interval
    ratios = [r for r in ceiling_ratios(rounds, low, high) if r > 0]
    if high != low and len(ratios) >= 2:
        est, lo, hi, v = interval(ratios, confidence)
        out.append("ceiling: tps at %d clients over the ceiling predicted "
                   "at %d: %.3f [%.3f, %.3f] over %d rounds: %s"
                   % (high, low, est, lo, hi, len(ratios),
                      _said(v, "throughput saturates at the predicted "
                               "ceiling")))
    out.append("(Hodges-Lehmann estimate, signed-rank interval at %g %%; "
               "verdicts at ±%g %%)" % (100 * confidence, 100 * MARGIN))
    return "\n".join(out)


def _said(verdict: str, claim: str) -> str:
    """A verdict on a ratio to the truth in words."""
    if verdict == "faster":
        return "above, by more than %g %%" % (100 * MARGIN)
    if verdict == "slower":
        return "below, by more than %g %%" % (100 * MARGIN)
    if verdict.startswith("equivalent"):
        return "%s within %g %%" % (claim, 100 * MARGIN)
    return "not resolved at ±%g %%" % (100 * MARGIN)


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(
        prog="python3 -m lockstudy.ceiling",
        description="Utilization and ceiling against a hold of known "
                    "length (bench/ceiling.sh's runs.csv).")
    p.add_argument("runs")
    p.add_argument("--hold-us", type=float, required=True)
    p.add_argument("--confidence", type=float, default=0.95)
    a = p.parse_args(argv)
    try:
        print(report(read_runs(a.runs), a.hold_us, a.confidence))
    except (InputError, OSError) as e:
        print("lockstudy.ceiling: error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
