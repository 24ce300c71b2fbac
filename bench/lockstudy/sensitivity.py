"""Table (s) of the report: how tps responds when one LWLock tranche is
held longer, from the runs of the variants that make run SENSITIVITY
makes (lockstudy.delayvariants) or any VARIANTS that set the delay.

Table (s) reads which variants delayed what from the settings in force
(settings.txt), so that any study whose VARIANTS set the delay gets it;
the study records the delays each run of a delayed variant injected
(pg_lockstat_status.injected_delays after the run minus before it) in
delays.csv.  Per tranche and client count, in each round where the
baseline and both modes of every delay ran:
- a, the time a run's delays add per transaction: d times its injected
  delays per transaction (without delays.csv, d times the tranche's
  acquisitions per transaction in the inside run, for both); and the
  delays per acquisition of the tranche, a check of n d: 1 inside (each
  acquisition delayed once), above 1 in the control where attempts
  acquire nothing (LWLockAcquireOrWait() that only waits);
- the least-squares slope through the origin of ln tps against the
  run's own a, over the delays: inside against the baseline and control
  against the baseline, and inside minus control, what a microsecond
  costs spent inside the lock beyond what it costs outside it, the
  lock's own effect; each slope's mean over the rounds with its Student
  t interval, Bonferroni over the table's rows.  Shown in % of tps per us
  per transaction.
- the verdict on inside minus control: "lowers tps" (interval below 0),
  "raises tps" (above 0), "equivalent" when the extrapolated gain of
  moving 10 % of the hold out of the lock (below) lies within
  +-THRESHOLD, else "not resolved".
- the extrapolations: H, the tranche's hold per transaction in the
  baseline (acquisitions x mean sampled hold, both modes), and
  exp(-slope x 0.1 H) - 1, the tps gain if the line went on below zero
  delay: along inside minus control, a tenth of the hold's work moved
  out of the lock; along inside, a tenth of it removed.  Extrapolations,
  and labelled so.
- what the ceiling says: U = X n h from the baseline's exclusive holds
  (as table (u)); the asymptotic bound tps <= 1 / (n (h + d)), with
  tps = X at no delay, gives ln tps(d) - ln X = -max(0, ln(U + X n d)),
  and its slope through the origin against the inside runs' a.
  "agrees" when that slope lies in the interval of inside minus control
  and the verdict is resolved ("not resolved" when it is not); else the
  measured response is steeper (the lock costs tps before it
  saturates) or shallower (it saturates later than the bound: for a
  tranche of several locks, taken as one lock, the bound is low).

Calls delayvariants, model_sensitivity, data, stats, busiest (busy_lock)
and tables.
"""

import math
import os
import re
from typing import Dict, List, Optional, Sequence, Tuple

from . import stats
from .busiest import busy_lock
from .data import InputError, Run, number, read_rows
from .model_sensitivity import SensitivityResult, SensitivityRow
from .delayvariants import DELAYS_FILE, SETTING
from .tables import half_up, table

# the verdict of a tranche whose runs injected no delay (never acquired)
NEVER = "not delayed: no delay injected"
# the shorter hold the extrapolation is of
SHORTER = 0.1
Delay = Tuple[str, float, str]		# (tranche, d in us, mode)


# --- what ran -------------------------------------------------------------

def read_injected(path: str) -> Dict[Tuple[str, int, int], float]:
    """delays.csv: the delays each run injected (pg_lockstat_status.
    injected_delays after the run minus before it), by run; none for a
    study without the file."""
    out: Dict[Tuple[str, int, int], float] = {}
    if not os.path.exists(path):
        return out
    for line, run, r in read_rows(path, ("injected_delays",)):
        x = number(r["injected_delays"])
        if x is None or x < 0:
            raise InputError("%s line %d: injected_delays %s: not a "
                             "non-negative number"
                             % (path, line, r["injected_delays"]))
        out[run] = x
    return out


def delays_in_force(settings: Sequence[str]) -> Dict[str, Delay]:
    """Per variant of settings.txt ("-- variant NAME", then "name|setting|
    unit|source" lines) whose settings in force name a tranche and a delay
    above 0: (tranche, d, mode)."""
    found: Dict[str, Dict[str, str]] = {}
    mine: Optional[Dict[str, str]] = None
    for line in settings:
        if line.startswith("-- "):
            m = re.fullmatch(r"-- variant (\S+)", line)
            mine = found.setdefault(m.group(1), {}) if m else None
        elif mine is not None and line.startswith(SETTING):
            name, _, rest = line.partition("|")
            mine[name[len(SETTING):]] = rest.split("|")[0]
    out = {}
    for v, s in found.items():
        d = number(s.get("us", ""))
        if s.get("tranche") and d:
            out[v] = (s["tranche"], d, s.get("mode", "inside"))
    return out


Counts = Dict[Tuple[str, int, int], Dict[str, List[float]]]
FIELDS = ("ex_acquires", "sh_acquires", "ex_hold_samples", "sh_hold_samples",
          "ex_hold_time", "sh_hold_time")


def read_counts(path: str, tranches: Sequence[str]) -> Counts:
    """Per run of locks.csv, the FIELDS of each of tranches (0 where
    empty)."""
    out: Counts = {}
    for line, run, r in read_rows(path, ("tranche", "ex_acquires")):
        out.setdefault(run, {})
        if r["tranche"] not in tranches:
            continue
        row = []
        for f in FIELDS:
            x = number(r.get(f) or "0")
            if x is None or x < 0:
                raise InputError("%s line %d: %s %s: not a non-negative "
                                 "number" % (path, line, f, r.get(f)))
            row.append(x)
        out[run][r["tranche"]] = row
    return out


# --- the numbers ----------------------------------------------------------

def slope(a: Sequence[float], y: Sequence[float]) -> float:
    """The least-squares slope through the origin of y against a; nan
    when every a is 0."""
    sxx = sum(x * x for x in a)
    return sum(x * v for x, v in zip(a, y)) / sxx if sxx > 0 else math.nan


def ceiling_slope(added: Sequence[float], delays: Sequence[float],
                  busy: float, tps: float, ex_per_xact: float) -> float:
    """The slope through the origin, against the added holds per
    transaction (us), of the asymptotic bound's ln tps(d) - ln tps(0) =
    -max(0, ln(busy + tps x ex_per_xact x d)) at the delays (us)."""
    y = [-max(0.0, math.log(busy + tps * ex_per_xact * d * 1e-6))
         for d in delays]
    return slope(added, y)


def _hold_per_xact(rows: Sequence[List[float]], xacts: float
                   ) -> Optional[float]:
    """The hold per transaction (us) of runs' rows of a tranche: per mode,
    acquisitions x mean sampled hold; None for a mode acquired without
    a sample."""
    a_ex, a_sh, s_ex, s_sh, h_ex, h_sh = (sum(r[i] for r in rows)
                                          for i in range(6))
    if (a_ex and not s_ex) or (a_sh and not s_sh):
        return None
    return 1000 * ((a_ex * h_ex / s_ex if s_ex else 0)
                   + (a_sh * h_sh / s_sh if s_sh else 0)) / xacts


def gain(b: float, hold: Optional[float]) -> Optional[float]:
    """The tps gain (a fraction) of a hold SHORTER shorter, extrapolated
    along slope b (per us per transaction) from hold (us per transaction)."""
    if hold is None or math.isnan(b):
        return None
    return math.exp(-b * SHORTER * hold) - 1


def verdict(low: float, high: float, gains: Tuple[Optional[float], ...],
            threshold: float) -> str:
    """The verdict on inside minus control (its interval [low, high]);
    gains: the extrapolated gain's interval ends."""
    if math.isnan(low) or math.isnan(high):
        return stats.NOT_RESOLVED
    if high < 0:
        return "lowers tps"
    if low > 0:
        return "raises tps"
    if None not in gains and all(abs(g) < threshold for g in gains):
        return "equivalent (±%g%% for 10%% of the hold moved out)" % (
            100 * threshold)
    return stats.NOT_RESOLVED


def agreement(low: float, high: float, predicted: Optional[float],
              resolved: bool) -> str:
    """Whether the ceiling's predicted slope lies in [low, high], the
    interval of inside minus control; resolved: whether its verdict is
    (an interval that holds nearly every slope holds the prediction too,
    and says nothing)."""
    if predicted is None or math.isnan(predicted) or math.isnan(low):
        return "-"
    if low <= predicted <= high:
        return "agrees" if resolved else stats.NOT_RESOLVED
    return "steeper than predicted" if high < predicted else \
        "shallower than predicted"


def _zeros() -> List[float]:
    return [0.0] * len(FIELDS)


def _round(t: str, c: int, r: int, ds: Sequence[float], names: Dict,
           by_key: Dict, counts: Counts, injected: Dict
           ) -> Optional[Tuple[List[float], ...]]:
    """Round r of tranche t at c clients, against the baseline's run
    by_key's base: per delay (ds), the hold added per transaction by the
    inside run and by the control's, ln tps over the baseline's of each,
    and the delays each injected and the acquisitions of t in each; None
    if a run is missing or has no tps above 0 (it stays out)."""
    base = by_key.get((names["base"], c, r))
    keys = [((names[(t, d)]["inside"], c, r),
             (names[(t, d)]["before"], c, r)) for d in ds]
    if base is None or any(k not in by_key for p in keys for k in p) or \
            not all(math.isfinite(x.tps) and x.tps > 0 for x in
                    [base] + [by_key[k] for p in keys for k in p]):
        return None
    out: Tuple[List[float], ...] = ([], [], [], [], [], [], [], [])
    for d, (ki, kc) in zip(ds, keys):
        acquired = [sum(counts.get(k, {}).get(t, _zeros())[:2])
                    for k in (ki, kc)]
        # without delays.csv, each acquisition of the inside run is taken
        # as delayed once, and the control's delays per transaction as
        # the inside run's
        inside = injected.get(ki, acquired[0])
        control = injected.get(kc, inside / by_key[ki].transactions
                               * by_key[kc].transactions)
        for j, k, count in ((0, ki, inside), (1, kc, control)):
            run = by_key[k]
            out[j].append(d * count / run.transactions)
            out[2 + j].append(math.log(run.tps / base.tps))
            out[4 + j].append(count)
            out[6 + j].append(acquired[j])
    return out


def _row(t: str, c: int, ds: Sequence[float], names: Dict,
         by_key: Dict, counts: Counts, injected: Dict, threshold: float,
         confidence: float) -> Optional[SensitivityRow]:
    """The row of tranche t at c clients, delays ds, the variants names
    ((t, d) -> {mode: variant}, "base" -> the baseline); None without a
    complete round."""
    rounds = sorted({r for (v, cl, r) in by_key
                     if v == names["base"] and cl == c})
    complete = [(r, x) for r in rounds for x in
                [_round(t, c, r, ds, names, by_key, counts, injected)]
                if x is not None]
    if not complete:
        return None
    # a round in which either mode injected no delay has no slope: out
    per_round = [(r, x) for r, x in complete if sum(x[0]) and sum(x[1])]
    never = not per_round
    per_round = per_round or complete
    b = [(slope(x[0], x[2]), slope(x[1], x[3])) for _, x in per_round]
    inside, control, effect = (stats.mean_ci(v, confidence) for v in (
        [i for i, _ in b], [k for _, k in b], [i - k for i, k in b]))
    base_runs = [by_key[(names["base"], c, r)] for r, _ in per_round]
    rows = [counts.get(x.key, {}).get(t, _zeros()) for x in base_runs]
    xacts = sum(x.transactions for x in base_runs)
    seconds = sum(x.transactions / x.tps for x in base_runs)
    hold = _hold_per_xact(rows, xacts)
    a_ex, s_ex, h_ex = (sum(x[i] for x in rows) for i in (0, 2, 4))
    busy = busy_lock(t, int(a_ex), s_ex, h_ex, seconds, xacts / seconds)

    def mean_of(i: int) -> Tuple[float, ...]:
        return tuple(sum(x[i][j] for _, x in per_round) / len(per_round)
                     for j in range(len(ds)))

    def per_acquire(n: int, acq: int) -> Optional[float]:
        """Delays per acquisition of t, None without delays.csv."""
        got = sum(sum(x[acq]) for _, x in per_round)
        return sum(sum(x[n]) for _, x in per_round) / got \
            if got and injected else None

    added = mean_of(0)
    predicted = None if not busy.busy else ceiling_slope(
        added, ds, busy.busy, xacts / seconds, a_ex / xacts)
    # the estimate, then the interval's ends, low to high (a steeper
    # slope, a larger gain)
    gains, removed = ((gain(m[0], hold), gain(m[2], hold), gain(m[1], hold))
                      for m in (effect, inside))
    said = NEVER if never else verdict(effect[1], effect[2], gains[1:],
                                       threshold)
    return SensitivityRow(
        t, c, 0 if never else len(per_round), tuple(ds), added, inside, control, effect,
        said, hold, None if gains[0] is None else gains, busy.busy,
        busy.ceiling_tps, predicted,
        agreement(effect[1], effect[2], predicted,
                  said != stats.NOT_RESOLVED),
        mean_of(1), per_acquire(4, 6), per_acquire(5, 7),
        None if removed[0] is None else removed)


def sensitivity(runs: Sequence[Run], locks_path: str,
                settings: Sequence[str], variants: Sequence[str],
                threshold: float, confidence: float = 0.95
                ) -> Optional[SensitivityResult]:
    """Table (s) of a study against its baseline, the first of variants,
    or if that one has a delay in force, the one variant without; None
    when no variant has a delay, or none or several lack one.
    runs: runs.csv read with need_transactions; settings: settings.txt's
    lines; threshold: THRESHOLD as a fraction."""
    delayed = delays_in_force(settings)
    plain = [v for v in variants if v not in delayed]
    if not plain or len(plain) == len(variants):
        return None
    # the report's baseline, or, if it has a delay, the one variant
    # without (a saved study reported in another order)
    base = variants[0] if variants[0] not in delayed else \
        (plain[0] if len(plain) == 1 else None)
    if base is None:
        return None
    names: Dict[Tuple[str, float], Dict[str, str]] = {}
    for v in variants:
        if v in delayed:
            t, d, mode = delayed[v]
            names.setdefault((t, d), {})[mode] = v
    complete = [k for k, m in names.items() if set(m) == {"inside", "before"}]
    unpaired = tuple(v for k, m in names.items() if k not in complete
                     for v in m.values())
    tranches = list(dict.fromkeys(t for t, _ in complete))
    counts = read_counts(locks_path, tranches) if tranches else {}
    by_key = {r.key: r for r in runs}
    clients = sorted({r.clients for r in runs if r.variant == base})
    cells = [(t, c, sorted(d for u, d in complete if u == t))
             for t in tranches for c in clients]
    family = max(1, len(cells))
    level = 1 - (1 - confidence) / family
    names["base"] = base
    injected = read_injected(os.path.join(os.path.dirname(locks_path),
                                          DELAYS_FILE))
    rows = [_row(t, c, ds, names, by_key, counts, injected, threshold,
                 level) for t, c, ds in cells]
    return SensitivityResult(base, level, family,
                             tuple(x for x in rows if x is not None),
                             unpaired)


# --- the text -------------------------------------------------------------

WORDS = (
    "(s) sensitivity: how tps responds when one LWLock tranche is held "
    "longer.  Per tranche and client count, the variants that busy-wait d "
    "inside every hold of the tranche (inside) and just before each "
    "acquisition attempt without the lock (control: CPU, nothing "
    "serialized), paired per round with %s.  Added = d x the delays the "
    "run injected (pg_lockstat_status.injected_delays) per transaction, "
    "inside / control (us per transaction, mean of the rounds); "
    "delays/acq = the delays per acquisition of the tranche, inside / "
    "control (inside: 1, each acquisition delayed once; control: above 1 "
    "where attempts acquire nothing, as LWLockAcquireOrWait()'s that "
    "only wait).  Slopes: of ln tps against the run's own added time, "
    "through the origin, per round, in %% of tps per us per transaction; "
    "their mean over the rounds with its t interval at %s (Bonferroni "
    "over %d row%s).  Inside - control: what a us costs held inside the "
    "lock beyond what it costs outside, the lock's own effect.  Verdict: "
    "\"lowers tps\" or \"raises tps\" where the interval excludes 0; "
    "\"equivalent\" where the gain of moving 10%% of the hold out lies "
    "within ±%s%%; else \"not resolved\".\n")
WORDS_2 = (
    "(s) what it means: hold = the tranche's hold per transaction in "
    "%s (acquisitions x mean sampled hold, both modes, us).  The tps gain "
    "if the lines went on below zero delay, extrapolations beyond the "
    "measured range, with their intervals: \"10%% moved out\", a tenth "
    "of the hold's work done outside the lock instead (along inside - "
    "control); \"10%% removed\", a tenth of it no longer done (along "
    "inside).  Busy %% and ceiling tps as in (u), from %s's exclusive "
    "holds; \"ceiling's slope\": the slope, through the same added "
    "holds, of the asymptotic bound tps <= 1 / (n (h + d)) with tps "
    "unchanged until the bound is reached; \"agrees\" when it lies in the "
    "interval of inside - control and the verdict is resolved (\"not "
    "resolved\" when it is not).\n")
HEADER = ("tranche", "clients", "rounds", "delays us", "added us/xact",
          "delays/acq", "inside %/us", "control %/us",
          "inside - control %/us", "interval", "verdict")
HEADER_2 = ("tranche", "clients", "hold us/xact", "10% moved out",
            "interval", "10% removed", "interval", "Busy %", "ceiling tps",
            "ceiling's slope %/us", "agreement")


def _g(x: Optional[float]) -> str:
    """A slope per us as % per us, 3 significant digits; "-" for None or
    nan."""
    if x is None or math.isnan(x):
        return "-"
    return "%+.3g" % (100 * x) if x else "0"


def _delays(xs: Sequence[float]) -> str:
    return " ".join("%g" % x for x in xs)


def _per(x: Optional[float]) -> str:
    return "-" if x is None else half_up(x, 3)


def _cells(x: SensitivityRow) -> List[str]:
    return [x.tranche, str(x.clients), str(x.rounds), _delays(x.delays_us),
            " / ".join(" ".join(half_up(a, 2) for a in added) for added in
                       (x.added_us, x.control_added_us)),
            "%s / %s" % (_per(x.inside_per_acquire),
                         _per(x.control_per_acquire)),
            _g(x.inside[0]), _g(x.control[0]), _g(x.effect[0]),
            "[%s, %s]" % (_g(x.effect[1]), _g(x.effect[2])), x.verdict]


def _pct(x: Optional[float]) -> str:
    return "-" if x is None else "%+.2f%%" % (100 * x)


def _gain_cells(g: Optional[Tuple[float, ...]]) -> List[str]:
    if g is None:
        return ["-", "-"]
    return [_pct(g[0]) + " (extrapolated)",
            "[%s, %s]" % (_pct(g[1]), _pct(g[2]))]


def _cells_2(x: SensitivityRow) -> List[str]:
    return [x.tranche, str(x.clients),
            "-" if x.hold_us is None else half_up(x.hold_us, 2)] + \
        _gain_cells(x.gain) + _gain_cells(x.removed) + [
            "-" if x.busy is None else half_up(100 * x.busy, 2),
            "-" if x.ceiling_tps is None else half_up(x.ceiling_tps, 0),
            _g(x.ceiling_slope), x.agreement]


def sensitivity_text(s: Optional[SensitivityResult],
                     threshold: float) -> str:
    """Table (s) after an empty line, its words and its two tables; the
    delayed variants without their other mode named; "" for None."""
    if s is None:
        return ""
    out = "\n" + WORDS % (s.baseline, "%.4g%%" % (100 * s.confidence),
                          s.family, "" if s.family == 1 else "s",
                          "%g" % (100 * threshold))
    if s.rows:
        out += table(HEADER, [_cells(x) for x in s.rows],
                     [False] + [True] * 9 + [False]) + "\n\n" + \
            WORDS_2 % (s.baseline, s.baseline) + \
            table(HEADER_2, [_cells_2(x) for x in s.rows],
                  [False] + [True] * 9 + [False]) + "\n"
    else:
        out += "no tranche has a round with the baseline and both modes " \
            "of each of its delays\n"
    if s.unpaired:
        out += ("(s) left out, without the variant of the other mode at "
                "the same tranche and delay: %s\n" % ", ".join(s.unpaired))
    return out
