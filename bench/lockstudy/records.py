"""What a study writes: its directory, its lock, the rows of its runs.

The lock of RUN_DIR (one study at a time), the directory of a study, and
the Recorder, through which the runner writes every file of it: the rows
recorded after each run (kept in memory, written as runs.csv, locks.csv,
kinds.csv, spins.csv and spinkinds.csv at the end, in a fixed order), the
tps of each second (persec.csv), the commands (commands.txt) and the
metadata files machine.txt, versions.txt and settings.txt.

Calls builds, data (the line of versions.txt that the report reads) and
spec.
"""

import csv
import decimal
import fcntl
import io
import math
import os
import socket
import subprocess
import time
from typing import Dict, List, Sequence, TextIO, Tuple

from . import builds, data, spec

# the files of the views recorded after each run, besides runs.csv:
# pg_lwlock_stats, pg_lwlock_backend_type_stats, pg_spinlock_stats and
# pg_spinlock_backend_type_stats
FILES = ("locks", "kinds", "spins", "spinkinds")


class LockError(Exception):
    """RUN_DIR's lock or directory cannot be had; the message says why."""


def take_lock(run_dir: str) -> TextIO:
    """The lock of RUN_DIR, held until the study's process ends; the file
    keeps the holder's pid."""
    path = os.path.join(run_dir, ".lock")
    try:
        f = open(path, "a+")
    except OSError:
        raise LockError("cannot open the lock file %s" % path)
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.seek(0)
        holder = f.readline().strip()
        raise LockError(
            "another make run is in progress%s: lock %s is held; wait for it "
            "to end or interrupt it"
            % (" (pid %s)" % holder if holder else "", path))
    f.truncate(0)
    f.write("%d\n" % os.getpid())
    f.flush()
    return f


def new_rundir(run_dir: str) -> str:
    """build/run/<timestamp>, -2, -3, ... for a study of the same second."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path, n = os.path.join(run_dir, stamp), 1
    while os.path.exists(path):
        n += 1
        path = os.path.join(run_dir, "%s-%d" % (stamp, n))
    try:
        os.mkdir(path)
    except OSError:
        raise LockError("cannot create %s" % path)
    return path


# the header of persec.csv
PER_SECOND = "variant,clients,round,second,tps"


class Recorder:
    """The files of the study in rundir.  What the runs recorded is kept
    in memory until the study writes its CSVs (write()): the runs, and
    the CSV lines of pg_lwlock_stats and pg_spinlock_stats with the key
    they are sorted by; the text files and persec.csv are appended to as
    the study goes."""

    def __init__(self, rundir: str = ""):
        self.rundir = rundir
        self.runs: List[Tuple] = []
        self.header: Dict[str, str] = {}
        self.lines: Dict[str, List[Tuple[tuple, str]]] = {
            kind: [] for kind in FILES}

    def copy(self, cur, view: str, kind: str, key: Tuple[str, int, int],
             order: Sequence[str]) -> None:
        """The rows of a view as COPY writes them (PostgreSQL's own text of
        every value), each with its sort key: the run, then the columns of
        order, largest first."""
        sql = cur.mogrify("COPY (SELECT %s::text AS variant, %s::int AS "
                          "clients, %s::int AS round, * FROM " + view +
                          ") TO STDOUT WITH (FORMAT csv, HEADER)", key)
        buf = io.StringIO()
        cur.copy_expert(sql.decode(), buf)
        lines = buf.getvalue().splitlines()
        header = next(csv.reader([lines[0]]))
        self.header.setdefault(kind, lines[0])
        at = [header.index(c) for c in order]
        for line in lines[1:]:
            row = next(csv.reader([line]))
            self.lines[kind].append((key + tuple(-int(row[i] or 0)
                                                 for i in at), line))

    def headers(self, cur, views: Sequence[Tuple[str, str, Sequence[str]]]
                ) -> None:
        """The header line of each (view, kind, _) of views, as copy()
        writes it, from a COPY of none of its rows: the files have their
        columns even if no run records rows (a study of unpatched variants
        only)."""
        for view, kind, _ in views:
            buf = io.StringIO()
            cur.copy_expert("COPY (SELECT ''::text AS variant, 0::int AS "
                            "clients, 0::int AS round, * FROM " + view +
                            " LIMIT 0) TO STDOUT WITH (FORMAT csv, HEADER)",
                            buf)
            self.header.setdefault(kind, buf.getvalue().splitlines()[0])

    def append(self, name: str, lines: Sequence[str]) -> None:
        """Append the lines, each ending in a newline, to the file name."""
        with open(os.path.join(self.rundir, name), "a") as f:
            f.write("".join(line + "\n" for line in lines))

    def command(self, line: str) -> None:
        """A line of commands.txt: a command the study ran, or a comment."""
        self.append("commands.txt", [line])

    def start_per_second(self) -> None:
        """persec.csv with its header only."""
        with open(os.path.join(self.rundir, "persec.csv"), "w") as f:
            f.write(PER_SECOND + "\n")

    def per_second(self, key: Tuple[str, int, int],
                   seconds: Sequence[Tuple[str, str]]) -> None:
        """The tps of each second (second, tps) of the run of key (variant,
        clients, round), to persec.csv."""
        self.append("persec.csv", ["%s,%d,%d,%s,%s" % (key + (sec, t))
                                   for sec, t in seconds])

    def write(self) -> None:
        """runs.csv (by round, position, clients), locks.csv, kinds.csv,
        spins.csv and spinkinds.csv (by variant, clients, round, then the
        most blocks or contended)."""
        rundir = self.rundir
        runs = sorted(self.runs, key=lambda r: (r[2], r[3], r[1]))
        with open(os.path.join(rundir, "runs.csv"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["variant", "clients", "round", "position", "tps",
                        "seconds", "transactions"])
            w.writerows(runs)
        for kind in FILES:
            with open(os.path.join(rundir, kind + ".csv"), "w") as f:
                f.write(self.header.get(kind, "") + "\n")
                for _, line in sorted(self.lines[kind], key=lambda x: x[0]):
                    f.write(line + "\n")


def pg_float(text: str) -> str:
    """A number as PostgreSQL's float8 prints it (runs.csv had its values
    from a float8 column): the shortest digits that read back as the same
    double, as Python's repr finds them, but positional from 1e-4 to below
    1e15 and with an exponent of at least two digits outside, as
    float8out (d2s.c) writes them."""
    x = float(text)
    if x == 0:
        return "-0" if math.copysign(1.0, x) < 0 else "0"
    d = decimal.Decimal(repr(abs(x)))
    _, digits, exp = d.as_tuple()
    e = len(digits) + exp - 1
    sign = "-" if x < 0 else ""
    if -4 <= e < 15:
        return sign + format(d.normalize(), "f")
    ds = "".join(map(str, digits)).rstrip("0")
    return "%s%s%se%s%02d" % (sign, ds[0], "." + ds[1:] if len(ds) > 1
                              else "", "-" if e < 0 else "+", abs(e))


def machine_lines(nproc: int) -> List[str]:
    """machine.txt: the CPUs, the kernel, the memory, the host's name
    (which keys the machine's floors, lockstudy.floor)."""
    cpu = _first("/proc/cpuinfo", "model name").split(":", 1)[-1].strip()
    mem = _first("/proc/meminfo", "MemTotal").split(":", 1)[-1].strip()
    u = os.uname()
    return ["nproc: %d" % nproc, "cpu: " + cpu,
            "kernel: %s %s %s %s" % (u.sysname, u.release, u.version,
                                     u.machine),
            "memory: " + mem, "host: " + socket.gethostname()]


def versions_lines(study: spec.Study, top: str,
                   variant_builds: Sequence[builds.Build]) -> List[str]:
    """versions.txt: the server, pgbench (and sysbench, for a sysbench
    workload), this checkout, the core series
    (the start of each patch's SHA-256), each variant's build and, if
    any, the line naming the variants of the unpatched server."""
    major = builds.server_major(study.bindir)
    series = builds.series(top, major)
    lines = ["server: " + _output(["postgres", "--version"]),
             "pgbench: " + _output(["pgbench", "--version"]),
             "pg_lockstat: " + (_output(
                 ["git", "-c", "safe.directory=*", "-C", top, "describe",
                  "--always", "--dirty"]) or "unknown"),
             "core patch: patches/pg%s %s" % (major, "".join(
                 builds.sha256(p)[:12] + " " for p in series))]
    if study.workload.sysbench:
        lines.insert(2, "sysbench: " + _output(["sysbench", "--version"]))
    for v, b in zip(study.variants, variant_builds):
        lines.append("variant %s: %s, build %s, %s"
                     % (v.name, b.prefix, b.key, b.description))
    if study.unpatched:
        # what the report reads (data.read_unpatched)
        lines.append(data.UNPATCHED_LINE + " ".join(study.unpatched))
    return lines


def _first(path: str, prefix: str) -> str:
    try:
        with open(path) as f:
            return next((line.strip() for line in f
                         if line.startswith(prefix)), "")
    except OSError:
        return ""


def _output(cmd: List[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return ""
