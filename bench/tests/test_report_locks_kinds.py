"""Tests of lockstudy.report_locks with the kinds of process: table (m)
of the kept eviction study (test_report_locks.py's) counts only the
workload's processes, the client backends and parallel workers, when
kinds.csv gives its LWLock rows by kind of process and spinkinds.csv its
spin-wait rows.  Kinds that add up to locks.csv (spins.csv) give its
table, a checkpointer's huge counts change nothing, a file with only
background processes leaves no row of its side, a file without the
column backend_type is refused, and python3 -m lockstudy mechanism with
--kinds and --spin-kinds prints what mechanism_report gives; the line
under the tables says which rows count which processes.
"""

import csv

import pytest

from lockstudy import report_locks as rl
from lockstudy.data import InputError, read_runs
from test_report_locks import eviction_paths, mechanism


# --- kinds.csv: the LWLock rows of the workload's processes -----------------

def _kinds_csv(locks_path, path, split,
               counters=("sh_acquires", "ex_acquires", "blocks")):
    """kinds.csv made of locks.csv (or spinkinds.csv of spins.csv, with
    its counters): each row's counts split between the kinds of split
    (name -> share, the last kind gets the rest, so that the kinds add up
    to the row exactly), and a "checkpointer" row of huge counts for every
    row, which (m) must leave out."""
    with open(locks_path, newline="") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames
        rows = list(reader)
    out = [fields[:3] + ["backend_type"] + fields[3:]]
    for r in rows:
        left = {c: int(r[c]) for c in counters}
        wait = float(r["wait_time"])
        for i, (kind, share) in enumerate(split):
            row = dict(r)
            for c in counters:
                n = left[c] if i == len(split) - 1 else int(r[c]) * share // 1
                row[c] = str(int(n))
                left[c] -= int(n)
            row["wait_time"] = repr(wait if i == len(split) - 1 else 0.0)
            out.append([row[f] for f in fields[:3]] + [kind] +
                       [row[f] for f in fields[3:]])
        huge = dict(r)
        for c in counters:
            huge[c] = str(10 ** 9 + int(r[c]) * 7)
        huge["wait_time"] = "12345.5"
        out.append([huge[f] for f in fields[:3]] + ["checkpointer"] +
                   [huge[f] for f in fields[3:]])
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(out)


SPIN_COUNTERS = ("contended", "spins")


@pytest.mark.parametrize("split", [(("client backend", 1),),
                                   (("client backend", 0.5),
                                    ("parallel worker", 1))])
def test_mechanism_counts_workload_kinds_only(tmp_path, split):
    """With kinds.csv, the LWLock rows sum the client backends and parallel
    workers only: kinds that add up to locks.csv give its table, and the
    background processes' counts (checkpointer here) change nothing."""
    paths = eviction_paths()
    kinds = str(tmp_path / "kinds.csv")
    _kinds_csv(paths[1], kinds, split)
    runs = read_runs(paths[0], need_transactions=True)
    text, points = rl.mechanism_report(runs, paths[1], paths[2],
                                       ["tas", "ttas"],
                                       csv_name="mechanism.csv",
                                       runs_path=paths[0], kinds_path=kinds)
    want, want_points = mechanism(paths, ["tas", "ttas"])
    # nan is not equal to itself: compared through their text
    assert repr(points) == repr(want_points)
    assert text == want[:-len(rl.counted_line(False))] + \
        rl.counted_line(True)
    assert rl.counted_line(True).startswith(
        "LWLock rows: the client backends and parallel workers only")


def test_mechanism_kinds_of_the_background_only(tmp_path):
    """A kinds.csv with only background processes' rows: no LWLock row
    left in (m), only the spin-wait rows."""
    paths = eviction_paths()
    kinds = str(tmp_path / "kinds.csv")
    _kinds_csv(paths[1], kinds, (("walwriter", 1),))
    runs = read_runs(paths[0], need_transactions=True)
    _, points = rl.mechanism_report(runs, paths[1], paths[2],
                                    ["tas", "ttas"], kinds_path=kinds)
    assert len(points) == 2
    assert {r.kind for p in points for r in p.rows} == {"spin"}


def test_mechanism_kinds_without_backend_type(tmp_path):
    """kinds.csv must have the column backend_type."""
    paths = eviction_paths()
    runs = read_runs(paths[0], need_transactions=True)
    with pytest.raises(InputError) as e:
        rl.mechanism_report(runs, paths[1], paths[2], ["tas", "ttas"],
                            kinds_path=paths[1])
    assert "backend_type" in str(e.value) and paths[1] in str(e.value)


def test_mechanism_command_with_kinds(tmp_path, capsys):
    """python3 -m lockstudy mechanism --kinds kinds.csv: the same text as
    mechanism_report with kinds_path."""
    from lockstudy.__main__ import main
    paths = eviction_paths()
    kinds = str(tmp_path / "kinds.csv")
    _kinds_csv(paths[1], kinds, (("client backend", 0.3),
                                 ("parallel worker", 1)))
    runs = read_runs(paths[0], need_transactions=True)
    want, _ = rl.mechanism_report(runs, paths[1], paths[2], ["tas", "ttas"],
                                  runs_path=paths[0], kinds_path=kinds)
    assert want.endswith(rl.counted_line(True))
    assert main(["mechanism", "--variants", "tas ttas", "--kinds", kinds] +
                paths) == 0
    assert capsys.readouterr().out == want


# --- spinkinds.csv: the spin-wait rows of the workload's processes ----------

@pytest.mark.parametrize("split", [(("client backend", 1),),
                                   (("client backend", 0.5),
                                    ("parallel worker", 1))])
def test_mechanism_counts_workload_kinds_of_spin_waits(tmp_path, split):
    """With spinkinds.csv too, the spin-wait rows sum the client backends
    and parallel workers only: kinds that add up to spins.csv give its
    rows, the checkpointer's huge counts change nothing, and the line
    under the tables names both files."""
    paths = eviction_paths()
    kinds = str(tmp_path / "kinds.csv")
    spin_kinds = str(tmp_path / "spinkinds.csv")
    _kinds_csv(paths[1], kinds, split)
    _kinds_csv(paths[2], spin_kinds, split, SPIN_COUNTERS)
    runs = read_runs(paths[0], need_transactions=True)
    text, points = rl.mechanism_report(runs, paths[1], paths[2],
                                       ["tas", "ttas"],
                                       csv_name="mechanism.csv",
                                       runs_path=paths[0], kinds_path=kinds,
                                       spin_kinds_path=spin_kinds)
    want, want_points = mechanism(paths, ["tas", "ttas"])
    assert any(r.kind == "spin" for p in points for r in p.rows)
    # nan is not equal to itself: compared through their text
    assert repr(points) == repr(want_points)
    assert text == want[:-len(rl.counted_line(False))] + \
        rl.counted_line(True, True)
    assert rl.counted_line(True, True).startswith(
        "LWLock and spin-wait rows: the client backends and parallel "
        "workers only (kinds.csv, spinkinds.csv)")


def test_mechanism_spin_kinds_of_the_background_only(tmp_path):
    """A spinkinds.csv with only background processes' rows: no spin-wait
    row left in (m); without kinds.csv the LWLock rows count every
    process, and the line says so."""
    paths = eviction_paths()
    spin_kinds = str(tmp_path / "spinkinds.csv")
    _kinds_csv(paths[2], spin_kinds, (("walwriter", 1),), SPIN_COUNTERS)
    runs = read_runs(paths[0], need_transactions=True)
    text, points = rl.mechanism_report(runs, paths[1], paths[2],
                                       ["tas", "ttas"],
                                       spin_kinds_path=spin_kinds)
    assert points and {r.kind for p in points for r in p.rows} == {"lwlock"}
    assert text.endswith(rl.counted_line(False, True))
    assert rl.counted_line(False, True).startswith(
        "LWLock rows: every process, background processes included")


def test_mechanism_spin_kinds_without_backend_type(tmp_path):
    """spinkinds.csv must have the column backend_type."""
    paths = eviction_paths()
    runs = read_runs(paths[0], need_transactions=True)
    with pytest.raises(InputError) as e:
        rl.mechanism_report(runs, paths[1], paths[2], ["tas", "ttas"],
                            spin_kinds_path=paths[2])
    assert "backend_type" in str(e.value) and paths[2] in str(e.value)


def test_mechanism_command_with_spin_kinds(tmp_path, capsys):
    """python3 -m lockstudy mechanism --kinds ... --spin-kinds ...: the
    same text as mechanism_report with both paths."""
    from lockstudy.__main__ import main
    paths = eviction_paths()
    kinds = str(tmp_path / "kinds.csv")
    spin_kinds = str(tmp_path / "spinkinds.csv")
    split = (("client backend", 0.3), ("parallel worker", 1))
    _kinds_csv(paths[1], kinds, split)
    _kinds_csv(paths[2], spin_kinds, split, SPIN_COUNTERS)
    runs = read_runs(paths[0], need_transactions=True)
    want, _ = rl.mechanism_report(runs, paths[1], paths[2], ["tas", "ttas"],
                                  runs_path=paths[0], kinds_path=kinds,
                                  spin_kinds_path=spin_kinds)
    assert want.endswith(rl.counted_line(True, True))
    assert main(["mechanism", "--variants", "tas ttas", "--kinds", kinds,
                 "--spin-kinds", spin_kinds] + paths) == 0
    assert capsys.readouterr().out == want
