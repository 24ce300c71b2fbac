"""Table (u) of the report, the busiest locks of each point (variant,
client count): from locks.csv and runs.csv into the model
(model.BusyPoint), and its text.

The operational law at today's hold times: a lock held exclusively a
share U of the time caps throughput at tps / U.  Per tranche of a point,
summed over its rounds: the exclusive acquisitions A, the exclusive hold
samples S and their time H (pg_lwlock_stats' ex_acquires,
ex_hold_samples, ex_hold_time); busy U = A x (H / S) / T, T the seconds
of the point's runs (each run's transactions over its tps, as (m)
takes them: report_locks.run_seconds); the ceiling X / U, X the point's
tps (its transactions over T).  A tranche of several locks (the
partitions of BufferMapping, LockManager) sums its locks: its U is their
mean number of exclusive holds in progress, and X / U is the ceiling of
the tranche taken as one lock, below each of its locks' own.

Only the runs with rows in locks.csv count; a locks.csv without the hold
columns (a study before them) gives no busy and no ceiling ("-").  The
three tranches with the highest busy are shown, then, if fewer have a
sample, those of the most exclusive acquisitions.

How a variant moved them: a point of a variant but the baseline (the
first variant), where the baseline has a point at its client count,
keeps the baseline's shown tranches with its own numbers
(BusyPoint.versus; a tranche it never acquired exclusively: A 0, no
sample), and its table is followed by theirs beside the baseline's.
Descriptive, each side over its own rounds, with no test: busy rests on
sampled hold times, not exact counts, so it is not among (m)'s rows.

Calls model, data, report_locks (run_seconds, not_available) and tables.
"""

from typing import Dict, List, Optional, Sequence, Tuple

from .data import InputError, Run, number, read_rows
from .model import BusyLock, BusyPoint
from .report_locks import not_available, run_seconds
from .tables import half_up, table

# the tranches shown per point
TOP_BUSY = 3
# the columns read: ex_acquires is required, the hold columns are not
HOLD_COLUMNS = ("ex_hold_samples", "ex_hold_time")
HEADER = ("lock", "ex acquires", "ex hold samples", "mean ex hold us",
          "Busy %", "ceiling tps")

Sums = Dict[str, List[Optional[float]]]		# tranche: [A, S, H]


def _field(path: str, line: int, r: Dict[str, str],
           column: str) -> Optional[float]:
    """A non-negative number of a row; None where the file has no such
    column or the field is empty."""
    text = r.get(column)
    if text is None or text == "":
        return None
    x = number(text)
    if x is None or x < 0:
        raise InputError("%s line %d: %s %s: not a non-negative number"
                         % (path, line, column, text))
    return x


def _add(a: Optional[float], b: Optional[float]) -> Optional[float]:
    """a + b, None if either is (a hold sum with a field missing)."""
    return None if a is None or b is None else a + b


def read_sums(path: str, seconds: Dict) -> Tuple[Dict, Dict]:
    """Per point, the sums of each tranche (Sums) over the runs of
    seconds that have rows in locks.csv, and those runs."""
    sums: Dict = {}
    counted: Dict = {}
    for line, run, r in read_rows(path, ("tranche", "ex_acquires")):
        if run not in seconds:
            continue
        point = run[:2]
        counted.setdefault(point, set()).add(run)
        a = _field(path, line, r, "ex_acquires") or 0
        s, h = (_field(path, line, r, c) for c in HOLD_COLUMNS)
        mine = sums.setdefault(point, {}).setdefault(r["tranche"],
                                                     [0, 0, 0.0])
        mine[:] = [mine[0] + int(a), _add(mine[1], s), _add(mine[2], h)]
    return sums, counted


def busy_lock(name: str, a: int, s: Optional[float], h: Optional[float],
              t: float, tps: float) -> BusyLock:
    """One tranche of (u): A, S and H (ms) over T seconds at tps."""
    if not s or h is None:
        return BusyLock(name, a, None if s is None else int(s), None, None,
                        None)
    busy = a * (h / s) / 1000 / t
    return BusyLock(name, a, int(s), 1000 * h / s, busy,
                    tps / busy if busy > 0 else None)


def busy_point(variant: str, clients: int, runs: Sequence[Run],
               tranches: Sums, top: int = TOP_BUSY,
               versus: Sequence[str] = ()) -> BusyPoint:
    """The BusyPoint of a point's runs (those with lock rows, each with
    transactions and tps) and its tranches' sums; versus: the names of
    the baseline's busiest at its client count (BusyPoint.versus)."""
    t = sum(r.transactions / r.tps for r in runs)
    tps = sum(r.transactions for r in runs) / t
    locks = [busy_lock(n, a, s, h, t, tps)
             for n, (a, s, h) in tranches.items() if a > 0]
    locks.sort(key=lambda x: (x.busy is None, -(x.busy or 0), -x.acquires,
                              x.name))
    return BusyPoint(variant, clients, len(runs), t, tps, tuple(locks[:top]),
                     tuple(busy_lock(n, *tranches.get(n, (0, 0, 0.0)), t,
                                     tps) for n in versus))


def busiest(runs: Sequence[Run], locks_path: str, variants: Sequence[str],
            unpatched: Sequence[str] = (),
            top: int = TOP_BUSY) -> Tuple[BusyPoint, ...]:
    """Table (u) of every point of the patched variants with lock rows,
    in the order of variants (the first the baseline), then of the client
    counts, each but the baseline's with the baseline's tranches at its
    client count (versus).  runs: runs.csv read with need_transactions."""
    patched = [v for v in variants if v not in unpatched]
    if not patched:
        return ()
    seconds = run_seconds(runs)
    by_key = {r.key: r for r in runs}
    sums, counted = read_sums(locks_path, seconds)
    base: Dict[int, Tuple[str, ...]] = {}	# clients: its tranches' names
    out: List[BusyPoint] = []
    for v in patched:
        for c in sorted(c for (w, c) in sums if w == v):
            p = busy_point(v, c, [by_key[k] for k in sorted(counted[(v, c)])],
                           sums[(v, c)], top,
                           () if v == variants[0] else base.get(c, ()))
            if v == variants[0]:
                base[c] = tuple(x.name for x in p.locks)
            out.append(p)
    return tuple(out)


# --- the text -------------------------------------------------------------

WORDS = ("(u) busiest locks, per point: the %d LWLock tranches with the "
         "highest exclusive utilization over the point's rounds.  The "
         "operational law at today's hold times: a lock held a share U of "
         "the time caps throughput at tps / U.  Busy %% = exclusive "
         "acquisitions x mean sampled exclusive hold / the runs' time "
         "(each run's transactions over its tps); ceiling tps = the "
         "point's tps (its transactions over that time) / busy.  A "
         "tranche of several locks sums its locks (its busy is their mean "
         "number of exclusive holds in progress), so its ceiling is the "
         "tranche's taken as one lock.  Under each point of a variant "
         "but the baseline, \"moved\": the baseline's tranches shown at "
         "that client count, their Busy %% and ceiling tps in the baseline "
         "and in the variant, each over its own rounds; descriptive, no "
         "test (busy rests on sampled hold times).  \"-\": no exclusive "
         "hold sample (or no hold columns in locks.csv).\n")


def _cells(x: BusyLock) -> List[str]:
    """The cells of a row of (u)."""
    return [x.name, str(x.acquires),
            "-" if x.hold_samples is None else str(x.hold_samples),
            "-" if x.mean_hold_us is None else half_up(x.mean_hold_us, 2),
            "-" if x.busy is None else half_up(100 * x.busy, 2),
            "-" if x.ceiling_tps is None else half_up(x.ceiling_tps, 0)]


def _both(b: Optional[float], v: Optional[float], digits: int,
          scale: float = 1) -> List[str]:
    """The baseline's and the variant's cells of a number of "moved"."""
    return ["-" if x is None else half_up(scale * x, digits) for x in (b, v)]


def moved_text(p: BusyPoint, base: BusyPoint) -> str:
    """How variant p moved the busiest tranches of base (the baseline's
    point at its client count): a heading, then a row per tranche of
    p.versus, its Busy % and ceiling tps in base and in p; an empty line.
    Nothing when p has none."""
    if not p.versus:
        return ""
    b = {x.name: x for x in base.locks}
    rows = [[x.name] + _both(b[x.name].busy, x.busy, 2, 100)
            + _both(b[x.name].ceiling_tps, x.ceiling_tps, 0)
            for x in p.versus]
    header = ("lock", "%s Busy %%" % base.variant, "%s Busy %%" % p.variant,
              "%s ceiling tps" % base.variant,
              "%s ceiling tps" % p.variant)
    return ("(u) busiest locks moved: %s against %s, %d clients "
            "(descriptive, no test: hold times are sampled)\n"
            % (p.variant, base.variant, p.clients)
            + table(header, rows, [False] + [True] * 4) + "\n\n")


def point_text(p: BusyPoint) -> str:
    """The heading and table of a point, then an empty line."""
    head = ("(u) busiest locks: variant %s, %d clients, %d round%s, %s s, "
            "%s tps\n" % (p.variant, p.clients, p.rounds,
                          "" if p.rounds == 1 else "s",
                          half_up(p.seconds, 3), half_up(p.tps, 0)))
    if not p.locks:
        return head + "no exclusive acquisitions\n\n"
    return head + table(HEADER, [_cells(x) for x in p.locks],
                        [False] + [True] * 5) + "\n\n"


def busiest_text(points: Sequence[BusyPoint], variants: Sequence[str],
                 unpatched: Sequence[str] = (), top: int = TOP_BUSY) -> str:
    """Table (u): an empty line, its words, then per variant the table
    of each of its points, each but the baseline's followed by how it
    moved the baseline's tranches (moved_text), or for a variant of the
    unpatched server one line (for the baseline saying, when another
    variant has lock counts, that no point is compared with it); each
    followed by an empty line."""
    base = {p.clients: p for p in points if variants and
            p.variant == variants[0]}

    def unpatched_line(v: str) -> str:
        return "(u) busiest locks: %s%s\n\n" % (not_available(v), (
            "; it is the baseline, so no variant's busiest locks are "
            "compared with it" if v == variants[0] and
            any(w not in unpatched for w in variants) else ""))
    return "\n" + WORDS % top + "".join(
        unpatched_line(v) if v in unpatched
        else "".join(point_text(p) + (moved_text(p, base[p.clients])
                                      if p.clients in base else "")
                     for p in points if p.variant == v)
        for v in variants)
