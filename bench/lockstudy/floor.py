"""The machine's floor: what an A/A study measures, where it is kept, and
the line under table (a) that shows it.

An A/A study compares a server with itself (make run AA=1, which is
VARIANTS="a; b"; or any VARIANTS whose variants are one build with the
same settings): every difference it finds is the machine's noise.  Its
floor is the ratio noise of its paired ratios, how far from 1 its
intervals reach, what its rounds resolve at that noise, and its false
verdicts (faster, slower or bimodal: each one false).  It is kept in the
study's directory (floor.json, and in results.json) and, for the
machine, in RUN_DIR/floors/<host>/<study>.json, RUN_DIR the directory
that holds the study's (build/run by default) and host the name in the
study's machine.txt.  Every later study on that host (its report, or
"lockstudy report" of it) shows the last floor kept there under table
(a), or says that none is.

Calls model, stats (what the rounds resolve) and tables.
"""

import glob
import os
import re
import socket
from typing import List, Optional, Sequence

from . import model, stats
from .tables import pct

# the token of commands.txt's first line that marks an A/A study
AA_TOKEN = "AA=1"
FLOORS = "floors"
FLOOR_FILE = "floor.json"
# the verdicts that claim a difference: in an A/A study each is false
CLAIMS = ("faster", "slower", "bimodal")


def is_aa(meta: model.StudyMeta) -> bool:
    """Whether the study is an A/A study: its parameters (commands.txt's
    first line) end in AA=1."""
    return bool(meta.commands) and AA_TOKEN in meta.commands[0].split()


def host(meta: model.StudyMeta) -> str:
    """The study's host: its machine.txt's "host:" line, else (studies
    before it) this machine's name."""
    for line in meta.machine:
        if line.startswith("host: "):
            return line[len("host: "):].strip()
    return socket.gethostname()


def where(directory: str, name: str) -> str:
    """The directory of host name's floors, beside the study's
    directory: RUN_DIR/floors/<host>."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", name) or "unknown"
    return os.path.join(os.path.dirname(os.path.abspath(directory)),
                        FLOORS, safe)


def measure(tps: model.TpsResult, name: str, study: str,
            parameters: str) -> model.Floor:
    """The floor of an A/A study's tps result, on host name; study its
    directory's name, parameters its commands.txt's first line."""
    k = tps.comparisons
    mine = [p for p in tps.points if p.ratio is not None]
    points = tuple(model.FloorPoint(p.clients, p.pairs, p.ratio, p.ci_low,
                                    p.ci_high, p.ratio_noise, p.verdict)
                   for p in mine)
    noises = sorted(p.ratio_noise for p in mine if p.ratio_noise >= 0)
    noise = (noises[(len(noises) - 1) // 2] + noises[len(noises) // 2]) / 2 \
        if noises else float("nan")
    rounds = max((p.pairs for p in mine), default=0)
    return model.Floor(
        name, study, parameters, rounds, k.ratio_confidence, tps.threshold,
        points, noise,
        max((max(p.ci_high - 1, 1 - p.ci_low) for p in mine),
            default=float("nan")),
        stats.resolves(rounds, noise, tps.threshold, k.ratio_confidence),
        sum(p.verdict.split(",")[0] in CLAIMS for p in mine), len(mine))


def save(floor: model.Floor, directory: str) -> str:
    """Write the floor into the study's directory (floor.json) and keep
    it as the machine's (where()); returns the latter's path."""
    text = model.encode_json(floor)
    with open(os.path.join(directory, FLOOR_FILE), "w") as f:
        f.write(text)
    store = where(directory, floor.host)
    os.makedirs(store, exist_ok=True)
    path = os.path.join(store, floor.study + ".json")
    with open(path, "w") as f:
        f.write(text)
    return path


def _order(path: str) -> List:
    """The sort key of a floor's file: its study's name (a timestamp,
    and -2, -3 for a study of the same second) with numbers as numbers."""
    return [int(x) if x.isdigit() else x
            for x in re.split(r"(\d+)", os.path.basename(path))]


def last(store: str) -> Optional[model.Floor]:
    """The last floor kept in store (by its study's name, a timestamp);
    None when there is none.  A file that cannot be read is passed
    over."""
    for path in sorted(glob.glob(os.path.join(store, "*.json")),
                       key=_order, reverse=True):
        try:
            with open(path) as f:
                return model.decode_json(model.Floor, f.read())
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None


def machine_floor(directory: str, meta: model.StudyMeta,
                  own: Optional[model.Floor]) -> model.MachineFloor:
    """The floor a study shows: its own if it is an A/A study, else the
    last one kept for its host."""
    name = host(meta)
    store = where(directory, name)
    return model.MachineFloor(name, store, own if own else last(store))


def describe(f: model.Floor) -> str:
    """What a floor measured, in words."""
    resolves = "" if f.resolves is None else (
        "; at that noise its %d rounds resolve ±%s" % (f.rounds,
                                                      pct(f.resolves, 1)))
    return ("ratio noise %s (median over its %d comparison%s), intervals "
            "(%s) reaching ±%s from 1%s; %d false verdict%s (faster, "
            "slower or bimodal) of %d" % (
                pct(f.noise, 1), f.comparisons,
                "" if f.comparisons == 1 else "s",
                "%.4g%%" % (100 * f.ratio_confidence), pct(f.half_width, 1),
                resolves, f.false_verdicts,
                "" if f.false_verdicts == 1 else "s", f.comparisons))


def lines(tps: model.TpsResult) -> Sequence[str]:
    """The lines under table (a): the study's own floor, or the last
    floor of its machine, or that there is none; nothing when none was
    looked for (a runs.csv without its study's directory)."""
    m = tps.machine_floor
    if m is None:
        return ()
    if tps.floor is not None:
        return ("floor: this is an A/A study (every variant the same "
                "server): %s; kept as the floor of %s in %s"
                % (describe(tps.floor), m.host, m.where),)
    if m.last is None:
        return ("floor: no A/A study kept for this machine (%s) in %s: "
                "make run AA=1 measures the differences its noise alone "
                "makes" % (m.host, m.where),)
    f = m.last
    return ("floor: the last A/A study of this machine (%s, study %s, %s): "
            "%s; differences within it are what the machine gives a "
            "server against itself" % (m.host, f.study, f.parameters,
                                       describe(f)),)
