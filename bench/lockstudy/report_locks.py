"""The lock side of the study's report: table (m) and mechanism.csv, from
runs.csv, locks.csv and spins.csv; tables (b) and (c) and the lock shares
of the plots (locks-<variant>.dat), from locks.csv and spins.csv.

(m) compares each variant's LWLock and spin-wait counts per 1000
transactions with the baseline's; lockstudy.mechanism holds its
statistics, and mechanism_result() fills the model with them.  (b), (c)
and the lock shares are lockstudy.locktables' model.LockTables, which
top_tables() and lock_shares() render: their tables are laid out as
table (a) is (tables.table).

A variant of the unpatched server has no pg_lockstat counts: where its
(m), (b) and (c) would be, one line says "not available: <variant> runs
the unpatched server (no pg_lockstat)" (not_available()), and so does its
locks-<variant>.dat, as a comment; with an unpatched baseline, (m) is one
such line for the whole study.

The public API:
    mechanism_result(runs, locks_path, spins_path, variants=None,
                     confidence=0.95, runs_path="runs.csv", unpatched=(),
                     kinds_path=None, spin_kinds_path=None)
        -> model.MechanismResult: reads locks.csv (or kinds.csv) and
        spins.csv (or spinkinds.csv), checks the options and the
        variants
    mechanism_report_text(result, top=10, csv_name=None) -> its text
    mechanism_report(...) -> (text, points): both
    mechanism_text(points, base, confidence, top, csv_name, variants=None,
                   unpatched=()) -> the text of the tables (m)
    write_mechanism(points, path): mechanism.csv
    top_locks(tables) -> (b), top_spins(tables) -> (c)
    top_tables(tables) -> the (b) of every variant, then the (c) of every
        variant
    lock_shares(tables) -> locks-<variant>.dat
    not_available(variant) -> the line of an unpatched variant

Calls lockstudy.mechanism, lockstudy.model, lockstudy.tables (table,
half_up) and lockstudy.data.
"""

import csv
import dataclasses
import math
from typing import (Any, Dict, Iterable, List, Optional, Sequence,
                    Tuple)

from .data import (InputError, Run, RunKey, index_runs, number,
                   read_rows, report_order)
from .mechanism import (COLUMNS, EVENTS_OF, MAX_EXACT_ROUNDS, MIN_EVENTS,
                        MONTE_CARLO_FLIPS, Q_MARK, Counts, Point, Row,
                        analyse, few_events, min_mark_rounds)
from .model import LockTables, MechanismResult
from .tables import half_up, table

# The rows of (m), per kind: the columns that name a row, and each measure
# with the columns summed into it.
MECHANISM_KINDS = (
    ("lwlock", ("tranche",),
     (("acquires", ("sh_acquires", "ex_acquires")),
      ("blocks", ("blocks",)),
      ("wait_ms", ("wait_time",)))),
    ("spin", ("func", "file", "line"),
     (("contended", ("contended",)),
      ("spins", ("spins",)))),
)

# The kinds of process (pg_lwlock_backend_type_stats.backend_type and
# pg_spinlock_backend_type_stats.backend_type) whose counts are the
# workload's: the LWLock rows of (m) count only these from kinds.csv, the
# spin-wait rows from spinkinds.csv.  The others (checkpointer,
# autovacuum, walwriter, ...) work at a rate per second whatever the
# workload does, so their counts per transaction only mirror the tps.
WORKLOAD_KINDS = ("client backend", "parallel worker")

# the column names of (b) and (c)
LOCK_HEADER = ("lock", "acquires", "Blk", "SpinDelay", "Blk %",
               "SpinDelay %", "wait ms", "hold samples", "mean hold us",
               "max hold us")
SPIN_HEADER = ("func", "site", "contended", "spins", "delays", "wait ms",
               "TAS attempts", "unlocked skips", "skips/contended")

def not_available(variant: str) -> str:
    """What the lock tables say of a variant of the unpatched server."""
    return ("not available: %s runs the unpatched server (no pg_lockstat)"
            % variant)


# --- (m) -------------------------------------------------------------------

def read_counts(path: str, kind: str, transactions: Dict[RunKey, float],
                counts: Counts,
                backend_types: Optional[Sequence[str]] = None) -> None:
    """Add the rows of locks.csv or kinds.csv (kind "lwlock") or spins.csv
    or spinkinds.csv (kind "spin") to counts[run][(kind, name, measure)],
    summed over the rows of one name in a run: the tranche, or "func
    file:line" for a spin-wait call site.  With backend_types, only the
    rows whose column backend_type is one of them (kinds.csv,
    spinkinds.csv).  Every row must belong to a
    run of transactions and hold non-negative numbers."""
    names, measures = [k[1:] for k in MECHANISM_KINDS if k[0] == kind][0]
    need = list(names) + (["backend_type"] if backend_types is not None
                          else [])
    for _, cols in measures:
        need += [c for c in cols if c not in need]
    for line, run, r in read_rows(path, need):
        if backend_types is not None and \
                r["backend_type"] not in backend_types:
            continue
        if run not in transactions:
            raise InputError("%s line %d: no run of %s, %d clients, round %d "
                             "in runs.csv" % ((path, line) + run))
        name = r["tranche"] if kind == "lwlock" else \
            "%s %s:%s" % (r["func"], r["file"], r["line"])
        mine = counts.setdefault(run, {})
        for measure, cols in measures:
            total = 0.0
            for c in cols:
                x = number(r[c])
                if x is None or x < 0:
                    raise InputError("%s line %d: %s %s: not a non-negative "
                                     "number" % (path, line, c, r[c]))
                total += x
            key = (kind, name, measure)
            mine[key] = mine.get(key, 0.0) + total


def run_transactions(runs: Iterable[Run],
                     runs_path: str) -> Dict[RunKey, float]:
    """The transactions of each run; InputError for two runs of one key
    or a run without them (runs.csv read without need_transactions)."""
    out: Dict[RunKey, float] = {}
    for key, run in index_runs(runs).items():
        if run.transactions is None:
            raise InputError("%s: missing column transactions" % runs_path)
        out[key] = run.transactions
    return out


def run_seconds(runs: Iterable[Run]) -> Dict[RunKey, float]:
    """The length of each run of some tps, its transactions over its
    tps (runs.csv read with need_transactions)."""
    return {r.key: r.transactions / r.tps for r in runs
            if r.transactions is not None and r.tps > 0}


def mechanism_variants(runs: Sequence[Run], given: Optional[Sequence[str]],
                       runs_path: str) -> List[str]:
    """The variants of (m) in report order, the first the baseline: given
    (option --variants), or the order of first appearance in runs.csv.
    InputError unless they are at least 2, each named once, with runs,
    and every variant of runs.csv among them."""
    names, seen = report_order(runs, given, "variants", runs_path)
    absent = [v for v in names if v not in seen]
    if absent:
        raise InputError("%s has no runs of %s" % (runs_path,
                                                   " ".join(absent)))
    twice = [v for i, v in enumerate(names) if v in names[:i]]
    if twice:
        raise InputError("--variants names %s twice" % " ".join(twice))
    if len(names) < 2:
        raise InputError("mechanism needs at least 2 variants, the baseline "
                         "and another; %s has %s only"
                         % (runs_path, " ".join(names)))
    return names


def mechanism_report(runs: Sequence[Run], locks_path: str, spins_path: str,
                     variants: Optional[Sequence[str]] = None,
                     confidence: float = 0.95, top: int = 10,
                     csv_name: Optional[str] = None,
                     runs_path: str = "runs.csv",
                     unpatched: Sequence[str] = (),
                     kinds_path: Optional[str] = None,
                     spin_kinds_path: Optional[str] = None
                     ) -> Tuple[str, Tuple[Point, ...]]:
    """Table (m) of a study (mechanism_result): its text (every line ended
    by a newline, mechanism_report_text) and its points (for
    write_mechanism).  top: rows shown per table; csv_name: the name of
    the CSV of every row, for the line under a table cut short.
    InputError on bad options or files."""
    if top < 1:
        raise InputError("--top must be at least 1")
    m = mechanism_result(runs, locks_path, spins_path, variants, confidence,
                         runs_path, unpatched, kinds_path, spin_kinds_path)
    return mechanism_report_text(m, top, csv_name), m.points


def mechanism_result(runs: Sequence[Run], locks_path: str, spins_path: str,
                     variants: Optional[Sequence[str]] = None,
                     confidence: float = 0.95, runs_path: str = "runs.csv",
                     unpatched: Sequence[str] = (),
                     kinds_path: Optional[str] = None,
                     spin_kinds_path: Optional[str] = None
                     ) -> MechanismResult:
    """The model of table (m).  runs: the runs of runs.csv, read with
    need_transactions (runs_path names the file in messages); variants:
    the option --variants as a list (None: the order of first
    appearance); unpatched: the variants of the unpatched server, which
    have no points (an unpatched baseline: no points at all; locks.csv and
    spins.csv are then not read); kinds_path: kinds.csv, the
    pg_lwlock_backend_type_stats rows of each run, from which the LWLock
    rows count the WORKLOAD_KINDS only (None: the LWLock rows count every
    process, from locks.csv); spin_kinds_path: spinkinds.csv, the
    pg_spinlock_backend_type_stats rows of each run, likewise for the
    spin-wait rows (None: every process, from spins.csv).  InputError on
    bad options or files."""
    if not 0 < confidence < 1:
        raise InputError("--confidence must lie between 0 and 1")
    transactions = run_transactions(runs, runs_path)
    names = mechanism_variants(runs, variants, runs_path)
    unpatched = tuple(v for v in names if v in unpatched)
    if names[0] in unpatched:
        return MechanismResult(tuple(names), unpatched, confidence,
                               kinds_path is not None, (),
                               spin_kinds_path is not None)
    counts: Counts = {}
    if kinds_path is not None:
        read_counts(kinds_path, "lwlock", transactions, counts,
                    WORKLOAD_KINDS)
    else:
        read_counts(locks_path, "lwlock", transactions, counts)
    if spin_kinds_path is not None:
        read_counts(spin_kinds_path, "spin", transactions, counts,
                    WORKLOAD_KINDS)
    else:
        read_counts(spins_path, "spin", transactions, counts)
    points = analyse(transactions, counts,
                     [v for v in names if v not in unpatched], confidence,
                     run_seconds(runs))
    return MechanismResult(tuple(names), unpatched, confidence,
                           kinds_path is not None, tuple(points),
                           spin_kinds_path is not None)


def mechanism_report_text(m: MechanismResult, top: int = 10,
                          csv_name: Optional[str] = None) -> str:
    """The text of table (m) (mechanism_text) and the line under it that
    says whose counts it shows."""
    text = mechanism_text(m.points, m.variants[0], m.confidence, top,
                          csv_name, m.variants, m.unpatched)
    if m.points:
        text += chance_line(m.points) + counted_line(m.by_kind,
                                                      m.spin_by_kind)
    return text


def chance_line(points: Sequence[Point]) -> str:
    """The line under the tables (m) that says how many marks chance
    gives the study."""
    n = sum(1 for p in points if p.rows)
    return ("Chance marks: at most %g expected in a point where nothing "
            "changed, whatever the dependence between its rows (q = K p), "
            "so at most %.2f over the %d point%s of this study with "
            "rows.\n" % (Q_MARK, Q_MARK * n, n, "" if n == 1 else "s"))


def counted_line(by_kind: bool, spin_by_kind: bool = False) -> str:
    """The line under the tables (m) that says whose counts they show:
    by_kind, the LWLock rows' are the workload's kinds of process only
    (kinds.csv); spin_by_kind, the spin-wait rows' (spinkinds.csv)."""
    workload = " and ".join(k + "s" for k in WORKLOAD_KINDS)
    if by_kind and spin_by_kind:
        return ("LWLock and spin-wait rows: the %s only (kinds.csv, "
                "spinkinds.csv); the background processes' counts, at a "
                "rate per second, are left out.\n" % workload)
    if spin_by_kind:
        return ("LWLock rows: every process, background processes included "
                "(this study has no kinds.csv).  Spin-wait rows: the %s "
                "only (spinkinds.csv).\n" % workload)
    if by_kind:
        return ("LWLock rows: the %s only (kinds.csv); the background "
                "processes' counts, at a rate per second, are left out. "
                "Spin-wait rows: every process (pg_spinlock_stats keeps no "
                "kind of process), so a rate per second of theirs can show "
                "as a change per transaction: tps marks it.\n"
                % " and ".join(k + "s" for k in WORKLOAD_KINDS))
    return ("LWLock rows: every process, background processes included "
            "(this study has no kinds.csv).  Spin-wait rows: every "
            "process.\n")


def rate_fmt(x: float, sign: bool = False) -> str:
    """A rate per 1000 transactions: 2 decimals from 1 on, 2 significant
    digits below (at most 6 decimals); with sign, a + before a positive
    one."""
    if x == 0 or abs(x) >= 1:
        digits = 2
    else:
        digits = min(6, 1 - math.floor(math.log10(abs(x))))
    return ("%+.*f" if sign else "%.*f") % (digits, x)


def ratio_fmt(x: float) -> str:
    """A rate ratio: x and 3 decimals, "new" if infinite (the base's rate
    is 0), "-" if undefined."""
    if math.isnan(x):
        return "-"
    return "new" if math.isinf(x) else "x%.3f" % x


def _bound_fmt(x: float) -> str:
    """A bound of the interval of a rate ratio."""
    if math.isnan(x):
        return "-"
    return "inf" if math.isinf(x) else "%.3f" % x


def _row_cells(q: Row) -> List[str]:
    """The cells of one row of (m): its events in place of the ratio and
    no interval when they are too few."""
    if few_events(q):
        shown = ["%.0f vs %.0f events" % (q.base_events, q.variant_events),
                 "-"]
    else:
        shown = [ratio_fmt(q.ratio), "[%s, %s]" % (_bound_fmt(q.ci_low),
                                                   _bound_fmt(q.ci_high))]
    return [q.name, q.measure, rate_fmt(q.base_rate),
            rate_fmt(q.variant_rate)] + shown + ["%.4f" % q.p,
                                                 "%.4f" % q.q, q.marker]


def _rows(n: int) -> str:
    """n rows, or 1 row."""
    return "%d row%s" % (n, "" if n == 1 else "s")


def _notes(p: Point, base: str, shown: Sequence[Row]) -> List[str]:
    """The lines under a table (m): the rows marked, the tps ratio and
    what tps marks, and what a row of events means."""
    marked = sum(q.marker == "*" for q in p.rows)
    tps = sum(q.marker == "tps" for q in p.rows)
    lines = ["%d of %s marked *%s; expected chance marks at most %g "
             "(where nothing changed)" % (marked, _rows(len(p.rows)),
                                          ", %d tps" % tps if tps else "",
                                          Q_MARK)]
    if not math.isnan(p.tps_ratio):
        lines.append(
            "tps: %s's tps is x%.3f %s's, so a count at a fixed rate per "
            "second reads x%.3f per 1000 transactions; a row at q <= %g "
            "whose count per second does not differ too (its own q > %g) "
            "is marked tps, not *" % (p.variant, p.tps_ratio, base,
                                   1 / p.tps_ratio, Q_MARK, Q_MARK))
    if any(few_events(q) for q in shown):
        lines.append(
            "\"b vs v events\": the two sides' events over the rounds (%s), "
            "where one has fewer than %d, too few for a ratio and its "
            "interval; p and q hold all the same"
            % (", ".join("for %s its %s" % x for x in
                         sorted(EVENTS_OF.items())), MIN_EVENTS))
    return lines


def _point_text(p: Point, base: str, confidence: float, top: int,
                csv_name: Optional[str]) -> List[str]:
    """The lines of the table (m) of one point."""
    level = "%g%%" % (100 * confidence)
    where = "(m) mechanism: %s against %s, %d clients: " % (
        p.variant, base, p.clients)
    n = len(p.rounds)
    plural = "" if n == 1 else "s"
    if not n:
        return [where + "no round in which both ran"]
    if not p.rows:
        return [where + "no LWLock or spin-wait call site counted in the "
                "%d round%s in common" % (n, plural)]
    test = "exact paired sign-flip test" if n <= MAX_EXACT_ROUNDS else \
        "paired sign-flip test on %d sampled flips" % MONTE_CARLO_FLIPS
    lines = [where + "per 1000 transactions over the %d round%s both ran, "
             "each side's counts summed over its transactions; ratio of "
             "the two rates with its %s interval, the test inverted; p of "
             "the %s; q = K p, K = %d of the %s (Tarone: at most K rows "
             "can reach p <= %g / K); * q <= %g"
             % (n, plural, level, test, p.family, _rows(len(p.rows)),
                Q_MARK, Q_MARK)]
    lines += table(["lock or call site", "measure", base, p.variant,
                    "ratio", level + " interval", "p", "q", "*"],
                   [_row_cells(q) for q in p.rows[:top]],
                   [False, False, True, True, True, True, True, True,
                    False]).split("\n")
    if len(p.rows) > top:
        lines.append("(%d more rows %s)" % (
            len(p.rows) - top, "in " + csv_name if csv_name
            else "not shown; --csv FILE writes every row"))
    lines += _notes(p, base, p.rows[:top])
    if n < min_mark_rounds(p.family):
        lines.append("no row can be marked: the smallest p of %d rounds, "
                     "%.4g, is above %g / K; with every row in K, %d "
                     "rounds could mark one" % (
                         n, 2.0 ** (1 - n), Q_MARK,
                         min_mark_rounds(len(p.rows))))
    return lines


def mechanism_text(points: Sequence[Point], base: str, confidence: float,
                   top: int, csv_name: Optional[str],
                   variants: Optional[Sequence[str]] = None,
                   unpatched: Sequence[str] = ()) -> str:
    """The tables (m) of the points, an empty line between two; every
    line ends with a newline.  variants (the baseline first) and
    unpatched, if given: for each variant of the unpatched server, in the
    order of variants, one line where its tables would be; for an
    unpatched baseline one line only."""
    if base in unpatched:
        return ("(m) mechanism: %s; it is the baseline, so no variant has "
                "a table (m)\n" % not_available(base))
    if variants is None:
        variants = [base] + list(dict.fromkeys(p.variant for p in points))
    blocks = []
    for v in variants[1:]:
        if v in unpatched:
            blocks.append("(m) mechanism: %s against %s: %s"
                          % (v, base, not_available(v)))
            continue
        blocks += ["\n".join(_point_text(p, base, confidence, top,
                                         csv_name))
                   for p in points if p.variant == v]
    if not blocks:
        return ""
    return "\n\n".join(blocks) + "\n"


def write_mechanism(points: Sequence[Point], path: str) -> None:
    """mechanism.csv: every row of every point, the columns of
    lockstudy.mechanism.COLUMNS, numbers to 6 significant digits (an
    infinite ratio or bound inf, an undefined one nan)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for p in points:
            for q in p.rows:
                w.writerow(["%.6g" % x if isinstance(x, float) else x
                            for x in dataclasses.astuple(q)])


# --- (b), (c) and the lock shares ------------------------------------------

def _cells(values: Sequence[Any], digits: Sequence[int]) -> List[str]:
    """The cells of a row of (b) or (c): a count as it is, a float with
    digits[i] decimals (rounded half away from zero), nothing for None."""
    return [half_up(x, d) if isinstance(x, float) else
            "" if x is None else str(x) for x, d in zip(values, digits)]


def top_locks(t: LockTables) -> str:
    """Table (b) of a variant, its heading first, then an empty line."""
    return ("(b) top %d LWLocks by blocks: variant %s, %d clients, sum of %d "
            "rounds\n" % (t.top, t.variant, t.clients, t.rounds)
            + table(LOCK_HEADER,
                    [_cells(dataclasses.astuple(r),
                            (0, 0, 0, 0, 2, 2, 1, 0, 2, 1)) for r in t.locks],
                    [False] + [True] * 9) + "\n\n")


def top_spins(t: LockTables) -> str:
    """Table (c) of a variant, its heading first, then an empty line; "no
    contended spin waits" if none."""
    heading = ("(c) top %d spin-wait call sites by contended waits: variant "
               "%s, %d clients, sum of %d rounds\n"
               % (t.top, t.variant, t.clients, t.rounds))
    if not t.spins:
        return heading + "no contended spin waits\n"
    return heading + table(
        SPIN_HEADER, [_cells(dataclasses.astuple(r),
                             (0, 0, 0, 0, 0, 1, 0, 0, 2)) for r in t.spins],
        [False, False] + [True] * 7) + "\n\n"


def top_tables(tables: Sequence[LockTables]) -> str:
    """What the report prints after (m): the (b) of every variant, then
    the (c) of every variant, each after an empty line; for a variant of
    the unpatched server, one line in place of each."""
    return ("".join("\n" + (top_locks(t) if t.available else
                            "(b) top LWLocks: %s\n" % not_available(t.variant))
                    for t in tables)
            + "".join("\n" + (top_spins(t) if t.available else
                              "(c) top spin-wait call sites: %s\n"
                              % not_available(t.variant))
                      for t in tables))


def lock_shares(t: LockTables) -> str:
    """locks-<variant>.dat, the data of the lock-share plot: "rank clients
    name blk% spin%" per line, the name's blanks made _, the shares with 2
    decimals; for a variant of the unpatched server a comment to gnuplot
    saying so (and plots.lock_plots draws nothing)."""
    if not t.available:
        return "# %s\n" % not_available(t.variant)
    return "".join("%d %d %s %s %s\n" % (
        x.rank, x.clients, x.name.replace(" ", "_"),
        half_up(x.blocks_pct, 2), half_up(x.spin_delays_pct, 2))
        for x in t.shares)
