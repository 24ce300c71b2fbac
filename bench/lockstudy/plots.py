"""The plots of a finished study, drawn by gnuplot from its model (what
to draw) and the data files that results.save wrote from it.

ratio.png: each variant's median tps ratio to the baseline with its
interval, against clients (ratio-<v>.dat, bimodal-<v>.dat); tps.png: tps
against clients with min-max bars (tps-<v>.dat); collapse-<v>-<c>.png: the
per-second tps of every round of each point whose runs split into two
groups (persec.csv); locks-<v>.png: the lock shares of the top tranches
per client count (locks-<v>.dat; none for a variant without them, as an
unpatched variant).

Not fatal: the tables are printed and the CSVs saved by then, so a missing
or failing gnuplot is a warning and the study succeeds.  Calls spec and
model.
"""

import csv
import os
import shutil
import subprocess
import sys
from typing import List, Sequence

from . import model, spec


def warn(text: str) -> None:
    print("%s: warning: %s" % (spec.ME, text), file=sys.stderr)


class Plotter:
    """gnuplot in one study directory; made lists the images drawn."""

    def __init__(self, rundir: str):
        self.rundir = rundir
        self.log = os.path.join(rundir, "gnuplot.log")
        self.made: List[str] = []

    def path(self, name: str) -> str:
        return os.path.join(self.rundir, name)

    def draw(self, png: str, script: str) -> None:
        with open(self.log, "a") as log:
            rc = subprocess.call(["gnuplot", "-e", script], stderr=log,
                                 stdout=subprocess.DEVNULL)
        if rc == 0:
            self.made.append(png)
        else:
            if os.path.exists(self.path(png)):
                os.remove(self.path(png))
            warn("plotting %s failed, no plot; see %s" % (png, self.log))


def head(png: str, rundir: str, height: int = 600) -> str:
    """The start of every script: the terminal and the output file."""
    return ("set terminal png size 900,%d noenhanced; set output '%s'; "
            % (height, os.path.join(rundir, png)))


def ratio_plot(p: Plotter, study: spec.Study, xrange: str, nproc: int,
               result: model.StudyResult) -> None:
    base = study.names[0]
    curves = []
    bimodal_variants = {q.variant for q in result.tps.points
                        if q.verdict == "bimodal" and q.ratio is not None}
    for v in study.names[1:]:
        curves.append("'%s' using 1:2:3:4 with yerrorlines title '%s / %s'"
                      % (p.path("ratio-%s.dat" % v), v, base))
        bimodal = p.path("bimodal-%s.dat" % v)
        if v in bimodal_variants:
            curves.append("'%s' using 1:2 with points pointtype 6 pointsize "
                          "3 title '%s: bimodal'" % (bimodal, v))
    if not curves:
        return
    p.draw("ratio.png", head("ratio.png", p.rundir) + (
        "set xrange %s; set title 'tps ratio to %s in the same round: median "
        "and 95%% interval over %d rounds (%s, %ds runs, %d CPUs)'; "
        "set xlabel 'clients'; set ylabel 'tps ratio to %s'; set logscale x "
        "2; set key top left; set grid; plot %s, 1 with lines dashtype 2 "
        "linecolor 'black' title 'y = 1'"
        % (xrange, base, study.repeat, workload_title(study),
           study.duration, nproc, base, ", ".join(curves))))


def tps_plot(p: Plotter, study: spec.Study, xrange: str, nproc: int) -> None:
    curves = ["'%s' using 1:2:3:4 with yerrorlines title '%s'"
              % (p.path("tps-%s.dat" % v), v) for v in study.names]
    p.draw("tps.png", head("tps.png", p.rundir) + (
        "set xrange %s; set yrange [0:*]; set title '%s, %s, "
        "%ds x %d rounds, %d CPUs'; set xlabel 'clients'; set ylabel 'tps "
        "(median, min-max)'; set logscale x 2; set key top left; set grid; "
        "plot %s" % (xrange, workload_title(study), data_title(study),
                     study.duration, study.repeat, nproc, ", ".join(curves))))


def workload_title(study: spec.Study) -> str:
    """The workload in a title: "pgbench select-only", or the name of a
    sysbench workload, which says sysbench."""
    w = study.workload
    return w.name if w.sysbench else "pgbench " + w.name


def data_title(study: spec.Study) -> str:
    """The data set in a title: "scale 10", or sysbench's tables."""
    if study.workload.sysbench:
        return "%d tables of %d rows" % (study.sysbench_tables,
                                         study.sysbench_table_size)
    return "scale %d" % study.scale


def collapse_plots(p: Plotter, result: model.StudyResult) -> None:
    """One image per point whose runs split: a line per round."""
    split = [(q.variant, str(q.clients)) for q in result.tps.points
             if q.bifurcated]
    with open(p.path("persec.csv"), newline="") as f:
        persec = list(csv.DictReader(f))
    data = p.path("persec.csv")
    for v, c in split:
        rounds = sorted({int(r["round"]) for r in persec
                         if r["variant"] == v and r["clients"] == c})
        if not rounds:
            continue
        png = "collapse-%s-%s.png" % (v, c)
        lines = ["'%s' using (strcol(1) eq '%s' && $2 == %s && $3 == %d ? "
                 "$4 : 1/0):5 every ::1 with lines title 'round %d'"
                 % (data, v, c, r, r) for r in rounds]
        p.draw(png, head(png, p.rundir) + (
            "set datafile separator ','; set title 'variant %s, %s clients: "
            "tps per second of each round (the runs split into two groups)'; "
            "set xlabel 'second'; set ylabel 'tps'; set yrange [0:*]; set "
            "grid; set key outside right; plot %s" % (v, c,
                                                      ", ".join(lines))))


def lock_plots(p: Plotter, tables: Sequence[model.LockTables],
               xrange: str) -> None:
    """Blocks above, spin delays below, one line per top tranche."""
    for t in tables:
        if not t.shares:
            continue
        v = t.variant
        dat = p.path("locks-%s.dat" % v)
        ranks = {x.rank: x.name.replace(" ", "_") for x in t.shares}
        lines = ["'%s' using ($1 == %d ? $2 : 1/0):COL with linespoints "
                 "title '%s'" % (dat, r, name)
                 for r, name in sorted(ranks.items())]
        png = "locks-%s.png" % v
        plot = ", ".join(lines)
        p.draw(png, head(png, p.rundir, 800) + (
            "set multiplot layout 2,1 title 'top LWLocks, variant %s: share "
            "per client count'; set logscale x 2; set xrange %s; set yrange "
            "[0:100]; set grid; set key outside right; set ylabel 'Blk %%'; "
            "plot %s; set xlabel 'clients'; set ylabel 'SpinDelay %%'; plot "
            "%s; unset multiplot" % (v, xrange, plot.replace("COL", "4"),
                                     plot.replace("COL", "5"))))


def draw(rundir: str, study: spec.Study, nproc: int,
         result: model.StudyResult) -> List[str]:
    """Every plot of the study; the names of the images drawn."""
    if shutil.which("gnuplot") is None:
        warn("gnuplot not found, no plots (apt-get install gnuplot-nox)")
        return []
    p = Plotter(rundir)
    xrange = "[%d*0.8:%d*1.25]" % (min(study.clients), study.max_clients)
    ratio_plot(p, study, xrange, nproc, result)
    tps_plot(p, study, xrange, nproc)
    collapse_plots(p, result)
    lock_plots(p, result.locks, xrange)
    return p.made
