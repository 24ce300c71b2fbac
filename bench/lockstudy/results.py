"""The whole report of a finished study, from the files in its directory.

Prints, in order: table (a) with the comparisons, the collapse, noise,
drift and position tables; (m) the mechanism, when there are two variants
or more; (b) the top LWLocks and (c) the top spin-wait call sites of each
variant at the highest client count.  Writes points.csv, mechanism.csv and
the plot data (tps-, ratio-, bimodal- and locks-<variant>.dat).  The study
runs it at its end; "python3 -m lockstudy report DIR" runs it again on a
saved study, without a server.  The variants that versions.txt names as
running the unpatched server get table (a) as any other, and in place of
(m), (b), (c) and their lock shares a line saying that these are not
available.

Calls report, report_locks and data.
"""

import os
from typing import List, Optional, TextIO

from . import data, report, report_locks


def report_text(directory: str, variants: Optional[List[str]],
                threshold_pct: float) -> str:
    """The report of the study in directory, and its files written."""
    def path(name: str) -> str:
        return os.path.join(directory, name)

    runs = data.read_runs(path("runs.csv"), need_transactions=True)
    tps = report.tps_report(runs, variants, threshold_pct)
    report.write_points(tps.points, path("points.csv"))
    report.write_dat(tps.points, tps.variants, directory)
    parts = [tps.text]
    names = tps.variants
    unpatched = data.read_unpatched(path("versions.txt"))
    if len(names) > 1:
        # studies from before kinds.csv: every process's LWLock counts
        kinds = path("kinds.csv")
        text, points = report_locks.mechanism_report(
            runs, path("locks.csv"), path("spins.csv"), names,
            csv_name="mechanism.csv", unpatched=unpatched,
            kinds_path=kinds if os.path.exists(kinds) else None)
        report_locks.write_mechanism(points, path("mechanism.csv"))
        parts.append(text)
    locks = report_locks.read_locks(path("locks.csv"))
    spins = report_locks.read_spins(path("spins.csv"))
    clients = max(r.clients for r in runs)
    rounds = max(r.round for r in runs)
    for v in names:
        with open(path("locks-%s.dat" % v), "w") as f:
            if v in unpatched:
                # a comment to gnuplot, and no plot (plots.lock_plots)
                f.write("# %s\n" % report_locks.not_available(v))
            else:
                f.write(report_locks.lock_shares(locks, v))
    return "\n".join(parts) + report_locks.top_tables(
        locks, spins, names, clients, rounds, unpatched)


def print_report(directory: str, variants: Optional[List[str]],
                 threshold_pct: float, out: TextIO) -> None:
    """Print the report of the study in directory, writing its files."""
    out.write(report_text(directory, variants, threshold_pct))
    out.flush()
