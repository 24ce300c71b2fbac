"""Tests of lockstudy.report_locks: table (m) and mechanism.csv from the
study's files (the text of (b), (c) and the lock shares is tested with
their numbers, in test_locktables.py; (m) of the workload's kinds of
process, from kinds.csv and spinkinds.csv, in test_report_locks_kinds.py).

Golden files (golden/locks-eviction/README says how they were made): a
real study run with the code of 4e541ba.  Table (m) of that study is no
longer the study's own (the rate ratio of sums since issue 33 replaced
its medians of per-round ratios): m-rates.txt and mechanism-rates.csv pin
what the package prints and writes, every row checked against
test_mechanism.py's own computation, the rows the same as in the study's
mechanism.csv.  The studies of test_mechanism.py give the text of (m), its
CSV and every bad input's message.  Variants of the unpatched server: one
"not available" line in place of their (m), and of all (m) when the
baseline is one.
"""

import csv
import dataclasses
import os
import re
import subprocess

import pytest

from lockstudy import report_locks as rl
from lockstudy.data import InputError, read_runs
from test_mechanism import (Synth, assert_points, base_zero_study,
                            empty_points_study, expect, expect_counts,
                            noise_study)

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
EVICTION = os.path.join(GOLDEN, "locks-eviction")
SYNTHETIC = os.path.join(GOLDEN, "locks-synthetic")


def golden(directory, name):
    with open(os.path.join(directory, name), newline="") as f:
        return f.read()


def mechanism(paths, variants=None, top=10, csv_name="mechanism.csv",
              confidence=0.95):
    """(m) of the files (runs, locks, spins), as a study reads them."""
    runs = read_runs(paths[0], need_transactions=True)
    return rl.mechanism_report(runs, paths[1], paths[2], variants,
                               confidence, top, csv_name, runs_path=paths[0])


def eviction_paths(directory=EVICTION):
    return [os.path.join(directory, n)
            for n in ("runs.csv", "locks.csv", "spins.csv")]


# --- the real study ---------------------------------------------------------

def split_report(text):
    """(m), then (b) and (c), of report.txt."""
    i = text.index("\n(b) top")
    return text[:i], text[i:]


def test_golden_mechanism_text_and_csv(tmp_path):
    for variants in (["tas", "ttas"], None):
        text, points = mechanism(eviction_paths(), variants)
        assert text == golden(EVICTION, "m-rates.txt")
    rl.write_mechanism(points, str(tmp_path / "mechanism.csv"))
    assert golden(str(tmp_path), "mechanism.csv") == \
        golden(EVICTION, "mechanism-rates.csv")
    # every row as computed in test_mechanism.py
    runs = read_runs(os.path.join(EVICTION, "runs.csv"),
                     need_transactions=True)
    transactions = rl.run_transactions(runs, "runs.csv")
    counts = {}
    rl.read_counts(os.path.join(EVICTION, "locks.csv"), "lwlock",
                   transactions, counts)
    rl.read_counts(os.path.join(EVICTION, "spins.csv"), "spin",
                   transactions, counts)
    assert_points(points, expect_counts(transactions, counts,
                                        ["tas", "ttas"],
                                        rl.run_seconds(runs)))
    # the rows the study's own mechanism.csv had, of as many rounds

    def rows(name):
        with open(os.path.join(EVICTION, name), newline="") as f:
            return {tuple(r[:6]) for r in csv.reader(f)
                    if r[0] != "variant"}
    assert rows("mechanism-rates.csv") == rows("mechanism.csv")


# the last commit of mechanism-rates.csv before issue 52 point 5
BEFORE_POINT_5 = "a0bf98e"


def test_golden_numbers_as_before_point_5():
    """mechanism-rates.csv made again for issue 52 point 5: every row's
    rates, ratio, p and sort key as in the file of a0bf98e (git), only the
    interval, q, marker and the new columns changed."""
    out = subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", os.path.join(GOLDEN, ".."),
         "show", BEFORE_POINT_5 + ":./golden/locks-eviction/"
         "mechanism-rates.csv"], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("no git history (%s)" % BEFORE_POINT_5)
    kept = ("variant", "clients", "kind", "name", "measure", "rounds",
            "base_rate", "variant_rate", "ratio", "p", "change")

    def rows(lines):
        r = list(csv.DictReader(lines))
        return sorted(tuple(x[c] for c in kept) for x in r)
    assert rows(out.stdout.splitlines()) == \
        rows(golden(EVICTION, "mechanism-rates.csv").splitlines())


# --- table (m): the files ---------------------------------------------------

LOCK_HEADER = ["variant", "clients", "round", "tranche_id", "tranche",
               "sh_acquires", "ex_acquires", "blocks", "spin_delays",
               "dequeue_self", "wait_time", "sh_hold_samples",
               "ex_hold_samples", "sh_hold_time", "ex_hold_time",
               "max_wait_time", "max_ex_hold_time", "max_sh_hold_time",
               "blk_pct", "spin_delay_pct"]
SPIN_HEADER = ["variant", "clients", "round", "file", "line", "func",
               "contended", "spins", "delays", "wait_time", "tas_attempts",
               "unlocked_skips", "max_wait_time"]


def write_study(st, directory):
    """The paths of the study's runs.csv, locks.csv and spins.csv,
    written in directory."""
    paths = [os.path.join(str(directory), n)
             for n in ("runs.csv", "locks.csv", "spins.csv")]
    position = {}
    with open(paths[0], "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["variant", "clients", "round", "position", "tps",
                    "seconds", "transactions"])
        for v, c, r, tx in st.runs:
            position[(c, r)] = position.get((c, r), 0) + 1
            w.writerow([v, c, r, position[(c, r)], "%.6f" % (int(tx) / 5),
                        "5.0", tx])
    ids = {}
    with open(paths[1], "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(LOCK_HEADER)
        for v, c, r, t, sh, ex, blocks, wait in st.locks:
            ids.setdefault(t, 100 + len(ids))
            w.writerow([v, c, r, ids[t], t, sh, ex, blocks, 0, 0, wait,
                        0, 0, 0, 0, 0, 0, 0, "", ""])
    with open(paths[2], "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(SPIN_HEADER)
        for row in st.spins:
            w.writerow(list(row) + [0, 0, "", "", 0])
    return paths


def seconds_of(directory):
    """The length of each run of the study written in directory."""
    return rl.run_seconds(read_runs(os.path.join(str(directory), "runs.csv"),
                                    need_transactions=True))


def headings(text):
    return re.findall(r"^\(m\) mechanism: (\S+ against \S+), \d+ clients",
                      text, re.M)


def test_mechanism_variants_order(tmp_path):
    """--variants C B A: C the baseline, B then A; without it, the order of
    first appearance in runs.csv (C, A, B in empty_points_study)."""
    st = noise_study()
    text, points = mechanism(write_study(st, tmp_path), ["C", "B", "A"])
    assert headings(text) == ["B against C"] * 2 + ["A against C"] * 2
    assert_points(points, expect(st, ["C", "B", "A"], seconds_of(tmp_path)))
    (tmp_path / "2").mkdir()
    text, _ = mechanism(write_study(empty_points_study(), tmp_path / "2"))
    assert headings(text) == ["A against C"] * 3 + ["B against C"] * 2


# --- variants of the unpatched server ----------------------------------------

NOT_AVAILABLE = "not available: %s runs the unpatched server (no pg_lockstat)"


def test_not_available():
    assert rl.not_available("stock") == NOT_AVAILABLE % "stock"


def test_mechanism_of_an_unpatched_variant(tmp_path):
    """B runs the unpatched server: one line where its tables were, A's
    tables and points as without it (its counts in the files ignored)."""
    st = noise_study()
    paths = write_study(st, tmp_path)
    _, full = mechanism(paths, ["C", "B", "A"])
    runs = read_runs(paths[0], need_transactions=True)
    text, points = rl.mechanism_report(runs, paths[1], paths[2],
                                       ["C", "B", "A"],
                                       csv_name="mechanism.csv",
                                       unpatched=["B"])
    a = [p for p in full if p.variant == "A"]
    assert repr(list(points)) == repr(a) and len(a) == 2
    assert text == ("(m) mechanism: B against C: %s\n\n" % (
        NOT_AVAILABLE % "B")) + rl.mechanism_text(a, "C", 0.95, 10,
                                                  "mechanism.csv") + \
        rl.chance_line(a) + rl.counted_line(False)
    # where B comes in the order, its line comes
    text, _ = rl.mechanism_report(runs, paths[1], paths[2], ["C", "A", "B"],
                                  csv_name="mechanism.csv", unpatched=["B"])
    assert text.endswith("\n\n(m) mechanism: B against C: %s\n"
                         % (NOT_AVAILABLE % "B") + rl.chance_line(a) +
                         rl.counted_line(False))
    # every variant but the baseline unpatched: one line each, no points
    text, points = rl.mechanism_report(runs, paths[1], paths[2],
                                       ["C", "B", "A"], unpatched=["A", "B"])
    assert points == ()
    assert text == "".join("(m) mechanism: %s against C: %s\n%s" % (
        v, NOT_AVAILABLE % v, sep) for v, sep in (("B", "\n"), ("A", "")))


def test_mechanism_command_with_unpatched(tmp_path, capsys):
    """python3 -m lockstudy mechanism --unpatched B: the same text."""
    from lockstudy.__main__ import main
    paths = write_study(noise_study(), tmp_path)
    runs = read_runs(paths[0], need_transactions=True)
    want, _ = rl.mechanism_report(runs, paths[1], paths[2], ["C", "B", "A"],
                                  unpatched=["B"])
    assert main(["mechanism", "--variants", "C B A", "--unpatched", "B"] +
                paths) == 0
    assert capsys.readouterr().out == want


def test_mechanism_of_an_unpatched_baseline(tmp_path):
    """No table (m) in the study: one line, and locks.csv and spins.csv
    are not read."""
    st = noise_study()
    paths = write_study(st, tmp_path)
    runs = read_runs(paths[0], need_transactions=True)
    for unpatched in (["C"], ["C", "A"]):
        text, points = rl.mechanism_report(
            runs, "/nowhere/locks.csv", "/nowhere/spins.csv",
            ["C", "B", "A"], unpatched=unpatched)
        assert points == ()
        assert text == ("(m) mechanism: %s; it is the baseline, so no "
                        "variant has a table (m)\n" % (NOT_AVAILABLE % "C"))
    # the options and runs.csv are still checked
    with pytest.raises(InputError):
        rl.mechanism_report(runs, paths[1], paths[2], ["C"],
                            unpatched=["C"])



def test_write_mechanism(tmp_path):
    st = base_zero_study()
    _, points = mechanism(write_study(st, tmp_path))
    path = str(tmp_path / "mechanism.csv")
    rl.write_mechanism(points, path)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == list(rl.COLUMNS)
    want = [q for p in points for q in p.rows]
    assert len(rows) == 1 + len(want)
    for got, q in zip(rows[1:], want):  # numbers to 6 significant digits
        assert got == [("%.6g" if isinstance(x, float) else "%s") % x
                       for x in dataclasses.astuple(q)]


@pytest.mark.parametrize("x,sign,want", [
    (0, 0, "0.00"), (1, 0, "1.00"), (1234.567, 0, "1234.57"),
    (0.25, 0, "0.25"), (0.0123, 0, "0.012"), (0.00001234, 0, "0.000012"),
    (1.2e-9, 0, "0.000000"), (0.5, 1, "+0.50"), (-0.067, 1, "-0.067"),
    (-100, 1, "-100.00"), (0, 1, "+0.00")])
def test_rate_fmt(x, sign, want):
    """2 decimals from 1 on, 2 significant digits below, at most 6."""
    assert rl.rate_fmt(x, sign) == want


# --- bad input --------------------------------------------------------------

def error_study():
    st = Synth()
    for r in range(1, 7):
        for s in ("A", "B"):
            st.run(s, 1, r, 1000)
            st.lock(s, 1, r, "LockManager", 10)
            st.spin(s, 1, r, "lwlock.c", 1145, "LWLockWaitListLock", 1, 2)
    return st


def set_field(lines, line, column, value):
    """lines with field column (from 0) of line (from 1) set to value."""
    cells = lines[line - 1].split(",")
    cells[column] = value
    return lines[:line - 1] + [",".join(cells)] + lines[line:]


def drop_column(lines, column):
    return [",".join(c for i, c in enumerate(x.split(",")) if i != column)
            for x in lines]


R, L, S = 0, 1, 2		# runs.csv, locks.csv, spins.csv
ERRORS = [
    (R, lambda x: x[:1], {}, "{R} has no runs"),
    (L, None, {}, "cannot read {L}: No such file or directory"),
    (S, None, {}, "cannot read {S}: No such file or directory"),
    (R, None, {}, "cannot read {R}: No such file or directory"),
    (R, lambda x: drop_column(x, 6), {}, "{R}: missing column transactions"),
    (L, lambda x: drop_column(x, 7), {}, "{L}: missing column blocks"),
    (S, lambda x: drop_column(x, 6), {}, "{S}: missing column contended"),
    (R, lambda x: set_field(x, 4, 6, "0"), {}, "{R} line 4: transactions 0: "
     "not a positive number"),
    (R, lambda x: set_field(x, 4, 6, "-5"), {}, "{R} line 4: transactions "
     "-5: not a positive number"),
    (R, lambda x: set_field(x, 3, 6, "many"), {}, "{R} line 3: transactions "
     "many: not a positive number"),
    (R, lambda x: set_field(x, 3, 1, "one"), {},
     "{R} line 3: bad clients, round, position or tps"),
    (L, lambda x: set_field(x, 6, 7, "x"), {},
     "{L} line 6: blocks x: not a non-negative number"),
    (L, lambda x: set_field(x, 6, 10, ""), {},
     "{L} line 6: wait_time : not a non-negative number"),
    (S, lambda x: set_field(x, 2, 7, "-1"), {},
     "{S} line 2: spins -1: not a non-negative number"),
    (L, lambda x: set_field(x, 2, 2, "r"), {}, "{L} line 2: bad clients or "
     "round"),
    (L, lambda x: x + ["A,1,7,100,LockManager,1,0,0,0,0,0,0,0,0,0,0,0,0,,"],
     {}, "{L} line 14: no run of A, 1 clients, round 7 in runs.csv"),
    (R, lambda x: x + [x[1]], {}, "two runs for variant A, 1 clients, "
     "round 1"),
    (None, None, {"variants": ["A", "B", "X"]}, "{R} has no runs of X"),
    (None, None, {"variants": ["A"]}, "{R} has variants not in --variants: "
     "B"),
    (R, lambda x: [y for y in x if not y.startswith("B,")], {},
     "mechanism needs at least 2 variants, the baseline and another; {R} "
     "has A only"),
    (None, None, {"variants": ["A", "B", "A"]}, "--variants names A twice"),
    (None, None, {"top": 0}, "--top must be at least 1"),
    (None, None, {"confidence": 1.5}, "--confidence must lie between 0 and "
     "1"),
    (None, None, {"confidence": 0}, "--confidence must lie between 0 and 1"),
]


@pytest.mark.parametrize("which,edit,options,message", ERRORS)
def test_bad_input(tmp_path, which, edit, options, message):
    paths = write_study(error_study(), tmp_path)
    if which is not None and edit is None:
        os.remove(paths[which])
    elif which is not None:
        with open(paths[which]) as f:
            lines = f.read().split("\n")[:-1]
        with open(paths[which], "w") as f:
            f.write("".join(x + "\n" for x in edit(lines)))
    with pytest.raises(InputError) as e:
        mechanism(paths, **options)
    assert str(e.value) == message.format(R=paths[0], L=paths[1],
                                          S=paths[2])


def test_the_error_study_itself_is_fine(tmp_path):
    _, points = mechanism(write_study(error_study(), tmp_path))
    assert [(q.measure, q.ratio, q.p) for q in points[0].rows] == \
        [(m, 1.0, 1.0) for m in ("acquires", "contended", "spins")]


def test_runs_without_transactions(tmp_path):
    paths = write_study(error_study(), tmp_path)
    runs = read_runs(paths[0])
    with pytest.raises(InputError) as e:
        rl.mechanism_report(runs, paths[1], paths[2], runs_path=paths[0])
    assert str(e.value) == "%s: missing column transactions" % paths[0]
