"""The whole report of a finished study, from the files in its directory.

analyse() reads the study's files (runs.csv, locks.csv, kinds.csv,
spins.csv and the text files) and returns what the study found, a
model.StudyResult; save() writes it as results.json and the files drawn
from it: points.csv, mechanism.csv and the plot data (tps-, ratio-,
bimodal- and locks-<variant>.dat); report_text() renders it.  Printed,
in order: table (a) with the comparisons, the collapse, noise, drift and
position tables; (m) the mechanism, when there are two variants or more;
(b) the top LWLocks and (c) the top spin-wait call sites of each variant
at the highest client count; (u) the busiest locks of each point; (s)
the sensitivity to each delayed tranche's hold, when variants delay one.  The
study runs it at its end; "python3 -m lockstudy report DIR" runs it again
on a saved study, without a server.
The variants that versions.txt names as running the unpatched server get
table (a) as any other, and in place of (m), (b), (c), (u) and their
lock shares a line saying that these are not available.

show_study() is what a study shows at its end: the report, the plots
and the line that names its files.

An A/A study's floor is written as floor.json and kept as its machine's
(lockstudy.floor); every study's table (a) shows the machine's last.

Calls report, report_locks, locktables, busiest, sensitivity, plots,
model, spec, data, floor and slots.
"""

import dataclasses
import os
from typing import List, Optional, Sequence, TextIO, Tuple

from . import (busiest, data, floor, locktables, model, plots, report,
               report_locks, sensitivity, slots, spec)

# the text files of a study, and the field of StudyMeta each fills
META_FILES = (("machine.txt", "machine"), ("versions.txt", "versions"),
              ("commands.txt", "commands"), ("settings.txt", "settings"))
RESULTS = "results.json"


def _lines(path: str) -> Tuple[str, ...]:
    """The lines of a text file; none if it is missing."""
    try:
        with open(path, errors="replace") as f:
            return tuple(f.read().splitlines())
    except OSError:
        return ()


def read_meta(directory: str) -> model.StudyMeta:
    """The study's text files and its unpatched variants."""
    return model.StudyMeta(
        **{field: _lines(os.path.join(directory, name))
           for name, field in META_FILES},
        unpatched=tuple(data.read_unpatched(
            os.path.join(directory, "versions.txt"))))


def analyse(directory: str, variants: Optional[List[str]],
            threshold_pct: float) -> model.StudyResult:
    """What the study in directory found; variants in report order (None:
    the study's, from commands.txt, else their order of first appearance),
    the verdict threshold in percent."""
    def path(name: str) -> str:
        return os.path.join(directory, name)

    runs = data.read_runs(path("runs.csv"), need_transactions=True)
    meta = read_meta(directory)
    if not variants:
        variants = data.study_order(meta.commands, runs)
    tps = report.tps_result(runs, variants, threshold_pct,
                            shared=slots.shared_groups(meta.commands))
    own = floor.measure(tps, floor.host(meta),
                        os.path.basename(os.path.abspath(directory)),
                        meta.commands[0]) if floor.is_aa(meta) else None
    tps = dataclasses.replace(tps, floor=own, machine_floor=floor.
                              machine_floor(directory, meta, own))
    mechanism = None
    if len(tps.variants) > 1:
        # studies from before kinds.csv (spinkinds.csv): every process's
        # LWLock (spin-wait) counts
        kinds = path("kinds.csv")
        spin_kinds = path("spinkinds.csv")
        mechanism = report_locks.mechanism_result(
            runs, path("locks.csv"), path("spins.csv"), tps.variants,
            unpatched=meta.unpatched,
            kinds_path=kinds if os.path.exists(kinds) else None,
            spin_kinds_path=spin_kinds if os.path.exists(spin_kinds)
            else None)
    locks = locktables.lock_tables(
        path("locks.csv"), path("spins.csv"), tps.variants,
        max(r.clients for r in runs), max(r.round for r in runs),
        meta.unpatched)
    return model.StudyResult(
        meta, tuple(runs), tps, mechanism, locks,
        busiest=busiest.busiest(runs, path("locks.csv"), tps.variants,
                                meta.unpatched),
        sensitivity=sensitivity.sensitivity(
            runs, path("locks.csv"), meta.settings, tps.variants,
            threshold_pct / 100))


def save(result: model.StudyResult, directory: str) -> None:
    """results.json, points.csv, mechanism.csv and the plot data."""
    def path(name: str) -> str:
        return os.path.join(directory, name)

    model.save(result, path(RESULTS))
    if result.tps.floor is not None:
        floor.save(result.tps.floor, directory)
    report.write_points(result.tps.points, path("points.csv"))
    report.write_dat(result.tps.points, result.tps.variants, directory)
    if result.mechanism is not None:
        report_locks.write_mechanism(result.mechanism.points,
                                     path("mechanism.csv"))
    for t in result.locks:
        with open(path("locks-%s.dat" % t.variant), "w") as f:
            f.write(report_locks.lock_shares(t))


def render(result: model.StudyResult) -> str:
    """The text of the report."""
    parts = [report.tps_text(result.tps)]
    if result.mechanism is not None:
        parts.append(report_locks.mechanism_report_text(
            result.mechanism, csv_name="mechanism.csv"))
    return ("\n".join(parts) + report_locks.top_tables(result.locks)
            + busiest.busiest_text(result.busiest, result.tps.variants,
                                   result.meta.unpatched)
            + sensitivity.sensitivity_text(result.sensitivity,
                                           result.tps.threshold))


def report_text(directory: str, variants: Optional[List[str]],
                threshold_pct: float) -> str:
    """The report of the study in directory, and its files written."""
    result = analyse(directory, variants, threshold_pct)
    save(result, directory)
    return render(result)


def listed(result: model.StudyResult, plots: Sequence[str]) -> List[str]:
    """The files of a study that the line "results:" names."""
    return (["runs.csv", "points.csv"]
            + (["mechanism.csv"] if result.mechanism is not None else [])
            + ["persec.csv", "locks.csv", "spins.csv"]
            + ([sensitivity.DELAYS_FILE] if result.sensitivity is not None
               else []) + list(plots)
            + ["settings.txt", "machine.txt", "versions.txt",
               "commands.txt", RESULTS]
            + ([floor.FLOOR_FILE] if result.tps.floor is not None else []))


def show_study(directory: str, study: spec.Study, nproc: int,
               out: TextIO) -> None:
    """What the end of a study shows (after its runs, given to the
    runner): analyse it, save results.json and its other files, print
    the report, draw the plots, and name the files."""
    out.write("\n")
    result = analyse(directory, study.names, float(study.threshold))
    save(result, directory)
    out.write(render(result))
    out.flush()
    made = plots.draw(directory, study, nproc, result)
    out.write("\nresults: %s/ (%s)\n"
              % (directory, ", ".join(listed(result, made))))
    out.flush()


def print_report(directory: str, variants: Optional[List[str]],
                 threshold_pct: float, out: TextIO) -> None:
    """Print the report of the study in directory, writing its files."""
    out.write(report_text(directory, variants, threshold_pct))
    out.flush()
