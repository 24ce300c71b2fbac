"""The study's files: runs.csv, locks.csv and spins.csv, read and checked,
and the variants that versions.txt says ran the unpatched server.

One row of runs.csv is one pgbench run: variant, clients, round, position
(in its round), tps, seconds, transactions.  locks.csv and spins.csv hold
the pg_lwlock_stats and pg_spinlock_stats rows of each run, keyed by the
same variant, clients and round.  Files written before the column was
renamed call it "strategy"; both names are read.

Every malformed file raises InputError with a message that names the file,
and the line where there is one; so do two runs of one variant, client
count and round (index_runs()) and a variant missing from the list of
variants given (report_order()).  Calls model (RunRecord).
"""

import csv
import dataclasses
import math
import re
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .model import RunKey, RunRecord

# the columns of runs.csv, in the order the study writes them
RUNS_COLUMNS = ["variant", "clients", "round", "position", "tps", "seconds",
                "transactions"]
# the name of the first column in files written before it was renamed
LEGACY_VARIANT = "strategy"

# the line of versions.txt that names the variants that ran the unpatched
# server, their names after it separated by spaces
UNPATCHED_LINE = "unpatched variants: "


class InputError(Exception):
    """A file or an option that the study cannot use; the message says why."""


# one run of runs.csv
Run = RunRecord


def number(text) -> Optional[float]:
    """The finite number a CSV field holds, or None."""
    try:
        x = float(text)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


def require_columns(path: str, fieldnames: Optional[List[str]],
                    need: Iterable[str]) -> None:
    """InputError naming the columns of need that fieldnames lacks."""
    missing = [c for c in need if c not in (fieldnames or [])]
    if missing:
        raise InputError("%s: missing column%s %s" % (
            path, "s" if len(missing) > 1 else "", ", ".join(missing)))


def _variant_column(fieldnames: Optional[List[str]]) -> str:
    """The name of the variant column of a file: variant, or strategy in
    files written before the rename."""
    names = fieldnames or []
    if "variant" not in names and LEGACY_VARIANT in names:
        return LEGACY_VARIANT
    return "variant"


def read_runs(path: str, need_transactions: bool = False) -> List[Run]:
    """The rows of runs.csv, in file order.  With need_transactions, the
    file must have the column transactions, each a positive number."""
    rows = []
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            vcol = _variant_column(reader.fieldnames)
            need = [vcol, "clients", "round", "tps"]
            if need_transactions:
                need.append("transactions")
            require_columns(path, reader.fieldnames, need)
            for line, r in enumerate(reader, start=2):
                rows.append(_run_of(path, line, r, vcol, need_transactions))
    except OSError as e:
        raise InputError("cannot read %s: %s" % (path, e.strerror))
    if not rows:
        raise InputError("%s has no runs" % path)
    return rows


def _run_of(path: str, line: int, r: Dict[str, str], vcol: str,
            need_transactions: bool) -> Run:
    """One row of runs.csv as a Run."""
    try:
        position = int(r["position"]) if r.get("position") else None
        run = Run(r[vcol], int(r["clients"]), int(r["round"]),
                  float(r["tps"]), position)
    except (TypeError, ValueError):
        raise InputError("%s line %d: bad clients, round, position or tps"
                         % (path, line))
    if need_transactions:
        t = number(r["transactions"])
        if t is None or t <= 0:
            raise InputError("%s line %d: transactions %s: not a positive "
                             "number" % (path, line, r["transactions"]))
        run = dataclasses.replace(run, transactions=t)
    return run


Row = Tuple[int, RunKey, Dict[str, str]]


def read_rows(path: str, need: Iterable[str]) -> List[Row]:
    """The rows of locks.csv or spins.csv: (line, run key, the row as a
    dict of its fields), the file required to have the columns of need
    besides variant, clients and round."""
    out = []
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            vcol = _variant_column(reader.fieldnames)
            require_columns(path, reader.fieldnames,
                            [vcol, "clients", "round"] + list(need))
            for line, r in enumerate(reader, start=2):
                try:
                    key = (r[vcol], int(r["clients"]), int(r["round"]))
                except (TypeError, ValueError):
                    raise InputError("%s line %d: bad clients or round"
                                     % (path, line))
                out.append((line, key, r))
    except OSError as e:
        raise InputError("cannot read %s: %s" % (path, e.strerror))
    return out


def index_runs(runs: Iterable[Run]) -> Dict[RunKey, Run]:
    """The runs by their key (variant, clients, round); InputError on two
    runs of the same key."""
    out: Dict[RunKey, Run] = {}
    for run in runs:
        if run.key in out:
            raise InputError("two runs for variant %s, %d clients, round %d"
                             % run.key)
        out[run.key] = run
    return out


def report_order(runs: Iterable[Run], given: Optional[Sequence[str]],
                 what: str, path: str) -> Tuple[List[str], List[str]]:
    """The variants in report order, and in their order of first appearance
    in runs: the list given (option --<what>), or without it (None or
    empty) the order of appearance.  InputError if a variant of the runs
    of the file path is not in the list given."""
    seen: List[str] = []
    for run in runs:
        if run.variant not in seen:
            seen.append(run.variant)
    names = list(given) if given else list(seen)
    unknown = [s for s in seen if s not in names]
    if unknown:
        raise InputError("%s has %s not in --%s: %s"
                         % (path, what, what, " ".join(unknown)))
    return names, seen


def study_order(commands: Sequence[str], runs: Iterable[Run]
                ) -> Optional[List[str]]:
    """The variants in the order the study gave them, the first its
    baseline, from the first line of its commands.txt (VARIANTS="..." or
    STRATEGIES="..."), those that have runs, then any other variant of
    the runs in its order of appearance; None when the line names none of
    them (a study before the line, a bare runs.csv)."""
    m = re.search(r'\b(VARIANTS|STRATEGIES)="([^"]*)"',
                  commands[0] if commands else "")
    if not m:
        return None
    if m.group(1) == "STRATEGIES":
        names = m.group(2).split()
    else:
        names = [x.partition(":")[0].strip()
                 for x in m.group(2).replace("\n", ";").split(";")]
    seen = list(dict.fromkeys(r.variant for r in runs))
    order = [n for n in dict.fromkeys(names) if n in seen]
    # a variant with runs that the line does not name comes last
    return order + [v for v in seen if v not in order] if order else None


def read_unpatched(path: str) -> List[str]:
    """The variants that ran the unpatched server (no pg_lockstat), from
    the line UNPATCHED_LINE of versions.txt at path; none without that
    line or without the file (a study before unpatched variants, or
    copied without it)."""
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    return [name for line in lines if line.startswith(UNPATCHED_LINE)
            for name in line[len(UNPATCHED_LINE):].split()]
