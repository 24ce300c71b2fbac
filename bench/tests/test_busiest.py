"""Tests of lockstudy.busiest: table (u), the busiest locks of each point
and how a variant moved the baseline's, on synthetic locks rows whose
busy and ceiling are worked out by hand (below, in the comments), and on
the kept eviction study, whose (u) is pinned by
golden/locks-eviction/busiest.txt (its README says how it was made).
"""

import csv
import json
import os
import re

import pytest
import test_golden

from lockstudy import busiest as bz
from lockstudy import locktables as lt
from lockstudy import model, results
from lockstudy.data import InputError, read_runs

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
EVICTION = os.path.join(GOLDEN, "locks-eviction")
NOT_AVAILABLE = "not available: %s runs the unpatched server (no pg_lockstat)"

# runs: (variant, clients, round, tps, transactions): seconds 10 each
RUNS = [("a", 2, 1, 100.0, 1000), ("a", 2, 2, 50.0, 500),
        ("a", 4, 1, 200.0, 2000),
        # a run without lock rows: not counted
        ("a", 4, 2, 1000.0, 10000)]
# locks rows: (variant, clients, round, tranche, ex_acquires,
# ex_hold_samples, ex_hold_time ms)
LOCKS = [
    # a, 2 clients: T = 20 s, tps = 1500 / 20 = 75
    # W: A 1000, S 20, H 4 ms: mean 0.2 ms, busy 1000 * 0.0002 / 20 = 1 %,
    # ceiling 75 / 0.01 = 7500
    ("a", 2, 1, "W", 400, 10, 2.0), ("a", 2, 2, "W", 600, 10, 2.0),
    # P: A 2000, S 4, H 1.2 ms: mean 0.3 ms, busy 3 %, ceiling 2500
    ("a", 2, 1, "P", 1500, 3, 0.9), ("a", 2, 2, "P", 500, 1, 0.3),
    # R: A 10, S 1, H 0.001 ms: busy 10 * 1e-6 / 20 = 0.00005 %, ceiling
    # 150000000
    ("a", 2, 1, "R", 10, 1, 0.001),
    # Q: no sample, left out by R's busy; S: shared only, never shown
    ("a", 2, 2, "Q", 5000, 0, 0.0), ("a", 2, 1, "S", 0, 0, 0.0),
    # a, 4 clients: T = 10 s, tps 200; V: A 100, mean 5 ms, busy
    # 100 * 0.005 / 10 = 5 %, ceiling 4000; then the unsampled by acquires
    ("a", 4, 1, "V", 100, 2, 10.0), ("a", 4, 1, "Y", 70, 0, 0.0),
    ("a", 4, 1, "X", 70, 0, 0.0), ("a", 4, 1, "Z", 9, 0, 0.0),
]
# a variant b against the baseline a (the first variant)
RUNS_B = RUNS + [("b", 2, 1, 100.0, 2000), ("b", 2, 2, 100.0, 2000),
                 ("b", 4, 1, 400.0, 4000), ("b", 8, 1, 100.0, 1000)]
LOCKS_B = LOCKS + [
    # b, 2 clients: T = 40 s, tps = 4000 / 40 = 100
    # P: A 1000, S 10, H 2 ms: mean 0.2 ms, busy 1000 * 0.0002 / 40 =
    # 0.5 %, ceiling 100 / 0.005 = 20000
    ("b", 2, 1, "P", 600, 6, 1.2), ("b", 2, 2, "P", 400, 4, 0.8),
    # W: A 8000, S 10, H 5 ms: mean 0.5 ms, busy 4 / 40 = 10 %, ceiling
    # 1000
    ("b", 2, 1, "W", 8000, 10, 5.0),
    # N: b's only: A 100, mean 0.2 ms, busy 0.05 %; R (a's third): none
    ("b", 2, 2, "N", 100, 1, 0.2),
    # b, 4 clients: T = 10 s, tps 400; V: A 200, mean 1 ms, busy
    # 200 * 0.001 / 10 = 2 %, ceiling 400 / 0.02 = 20000; X (no sample
    # in a): A 50, mean 0.5 ms, busy 0.25 %, ceiling 160000; Y: none
    ("b", 4, 1, "V", 200, 4, 4.0), ("b", 4, 1, "X", 50, 5, 2.5),
    # b, 8 clients, where a has no point: W busy 100 * 0.001 / 10 = 1 %
    ("b", 8, 1, "W", 100, 1, 1.0),
]
HEAD = ["variant", "clients", "round", "tranche", "sh_acquires",
        "ex_acquires", "ex_hold_samples", "ex_hold_time"]


def write_study(d, locks=LOCKS, head=HEAD, runs_rows=RUNS):
    """runs.csv and locks.csv of the rows in d (the columns of head, any
    other 0); their paths."""
    runs, lpath = os.path.join(d, "runs.csv"), os.path.join(d, "locks.csv")
    with open(runs, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["variant", "clients", "round", "tps", "transactions"])
        w.writerows(runs_rows)
    with open(lpath, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(head)
        for v, c, r, name, a, s, h in locks:
            row = dict(zip(HEAD, (v, c, r, name, 7, a, s, h)))
            w.writerow([row.get(k, 0) for k in head])
    return runs, lpath


def points(tmp_path, variants=("a",), unpatched=(), **kw):
    runs, lpath = write_study(str(tmp_path), **kw)
    return bz.busiest(read_runs(runs, need_transactions=True), lpath,
                      list(variants), list(unpatched))


def moved(tmp_path, variants=("a", "b"), unpatched=()):
    """The points of the study of a and b."""
    return points(tmp_path, variants, unpatched, locks=LOCKS_B,
                  runs_rows=RUNS_B)


def test_busy_and_ceiling_by_hand(tmp_path):
    p2, p4 = points(tmp_path)
    assert (p2.variant, p2.clients, p2.rounds) == ("a", 2, 2)
    assert p2.seconds == pytest.approx(20) and p2.tps == pytest.approx(75)
    assert [x.name for x in p2.locks] == ["P", "W", "R"]
    want = {"P": (2000, 4, 300, 0.03, 2500), "W": (1000, 20, 200, 0.01, 7500),
            "R": (10, 1, 1, 5e-7, 1.5e8)}
    for x in p2.locks:
        a, s, us, busy, ceiling = want[x.name]
        assert (x.acquires, x.hold_samples) == (a, s)
        assert x.mean_hold_us == pytest.approx(us)
        assert x.busy == pytest.approx(busy)
        assert x.ceiling_tps == pytest.approx(ceiling)
    # the run without lock rows is not counted
    assert (p4.rounds, p4.seconds, p4.tps) == (1, 10.0, 200.0)
    assert [x.name for x in p4.locks] == ["V", "X", "Y"]
    assert p4.locks[0].busy == pytest.approx(0.05)
    assert p4.locks[0].ceiling_tps == pytest.approx(4000)
    assert p4.locks[1] == model.BusyLock("X", 70, 0, None, None, None)


def test_text(tmp_path):
    text = bz.busiest_text(points(tmp_path), ["a", "u"], ["u"])
    assert text == "\n" + bz.WORDS % 3 + (
        "(u) busiest locks: variant a, 2 clients, 2 rounds, 20.000 s, "
        "75 tps\n"
        " lock | ex acquires | ex hold samples | mean ex hold us | Busy % "
        "| ceiling tps\n"
        "------+-------------+-----------------+-----------------+--------"
        "+-------------\n"
        " P    |        2000 |               4 |          300.00 |   3.00 "
        "|        2500\n"
        " W    |        1000 |              20 |          200.00 |   1.00 "
        "|        7500\n"
        " R    |          10 |               1 |            1.00 |   0.00 "
        "|   150000000\n\n"
        "(u) busiest locks: variant a, 4 clients, 1 round, 10.000 s, "
        "200 tps\n"
        " lock | ex acquires | ex hold samples | mean ex hold us | Busy % "
        "| ceiling tps\n"
        "------+-------------+-----------------+-----------------+--------"
        "+-------------\n"
        " V    |         100 |               2 |         5000.00 |   5.00 "
        "|        4000\n"
        " X    |          70 |               0 |               - |      - "
        "|           -\n"
        " Y    |          70 |               0 |               - |      - "
        "|           -\n\n"
        "(u) busiest locks: " + NOT_AVAILABLE % "u" + "\n\n")
    assert "caps throughput at tps / U" in text
    assert "A tranche of several locks sums its locks" in text


def test_old_locks_csv_without_hold_columns(tmp_path):
    p2 = points(tmp_path, head=HEAD[:6])[0]
    assert [x.name for x in p2.locks] == ["Q", "P", "W"]
    assert all(x.busy is None and x.ceiling_tps is None
               and x.hold_samples is None for x in p2.locks)
    assert (" Q    |        5000 |               - |               - "
            "|      - |           -\n") in bz.point_text(p2)


def test_bad_field_and_unpatched(tmp_path):
    with pytest.raises(InputError, match="line 2: ex_acquires -1"):
        points(tmp_path, locks=[("a", 2, 1, "W", -1, 0, 0.0)])
    runs, lpath = write_study(str(tmp_path))
    assert bz.busiest(read_runs(runs, need_transactions=True), lpath,
                      ["a"], ["a"]) == ()


def test_results_json_keeps_it(tmp_path):
    """The model gains (u), with b's versus, and results.json keeps it;
    one without it (a study saved before) reads as none, one without
    versus as points without."""
    d = str(tmp_path)
    write_study(d, head=HEAD + [c for cols in lt.LOCK_COLUMNS for c in cols
                                if c not in HEAD], locks=LOCKS_B,
                runs_rows=RUNS_B)
    with open(os.path.join(d, "spins.csv"), "w") as f:
        f.write("variant,clients,round,func,file,line,contended,spins,"
                "delays,wait_time,tas_attempts,unlocked_skips\n")
    r = results.analyse(d, None, 2.0)
    assert r.busiest == bz.busiest(
        read_runs(os.path.join(d, "runs.csv"), need_transactions=True),
        os.path.join(d, "locks.csv"), ["a", "b"])
    assert [x.name for x in r.busiest[0].locks] == ["P", "W", "R"]
    assert [x.name for x in r.busiest[2].versus] == ["P", "W", "R"]
    back = model.from_json(model.to_json(r))
    assert back.busiest == r.busiest
    assert results.render(back).endswith(
        bz.busiest_text(r.busiest, ["a", "b"]))
    old = model.to_json(r).replace('"busiest"', '"ignored"')
    assert model.from_json(old).busiest == ()
    x = json.loads(model.to_json(r))
    for p in x["busiest"]:
        del p["versus"]
    assert [p.versus for p in model.from_json(json.dumps(x)).busiest] == \
        [()] * 5


def test_golden_eviction():
    """The kept study's (u): the package's own (README)."""
    runs = read_runs(os.path.join(EVICTION, "runs.csv"),
                     need_transactions=True)
    p = bz.busiest(runs, os.path.join(EVICTION, "locks.csv"),
                   ["tas", "ttas"])
    with open(os.path.join(EVICTION, "busiest.txt")) as f:
        assert bz.busiest_text(p, ["tas", "ttas"]) == f.read()
    # LockFastPath of tas at 4 clients, by hand from the CSVs
    a = s = h = 0
    with open(os.path.join(EVICTION, "locks.csv")) as f:
        for r in csv.DictReader(f):
            if (r["strategy"], r["clients"], r["tranche"]) == \
                    ("tas", "4", "LockFastPath"):
                a += int(r["ex_acquires"])
                s += int(r["ex_hold_samples"])
                h += float(r["ex_hold_time"])
    mine = [q for q in runs if q.key[:2] == ("tas", 4)]
    t = sum(q.transactions / q.tps for q in mine)
    x = [q for q in p if (q.variant, q.clients) == ("tas", 4)][0]
    assert x.locks[0].name == "LockFastPath"
    assert x.locks[0].busy == pytest.approx(a * h / s / 1000 / t)
    assert x.locks[0].ceiling_tps == pytest.approx(
        sum(q.transactions for q in mine) / t / (a * h / s / 1000 / t))


# --- how a variant moved the baseline's busiest ----------------------------

def test_versus_by_hand(tmp_path):
    """b's points keep a's busiest at their client count with b's own
    numbers (LOCKS_B's comments); a's keep none."""
    a2, a4, b2, b4, b8 = moved(tmp_path)
    assert [(p.variant, p.clients) for p in (a2, a4, b2, b4, b8)] == \
        [("a", 2), ("a", 4), ("b", 2), ("b", 4), ("b", 8)]
    assert a2.versus == a4.versus == ()
    assert b2.seconds == pytest.approx(40) and b2.tps == pytest.approx(100)
    assert [x.name for x in b2.locks] == ["W", "P", "N"]
    assert [x.name for x in b2.versus] == ["P", "W", "R"]
    want = {"P": (1000, 10, 0.005, 20000), "W": (8000, 10, 0.1, 1000)}
    for x in b2.versus[:2]:
        a, s, busy, ceiling = want[x.name]
        assert (x.acquires, x.hold_samples) == (a, s)
        assert x.busy == pytest.approx(busy)
        assert x.ceiling_tps == pytest.approx(ceiling)
    # R: no lock row of b's at 2 clients
    assert b2.versus[2] == model.BusyLock("R", 0, 0, None, None, None)
    assert [x.name for x in b4.versus] == ["V", "X", "Y"]
    assert b4.versus[0].busy == pytest.approx(0.02)
    assert b4.versus[0].ceiling_tps == pytest.approx(20000)
    assert b4.versus[1].busy == pytest.approx(0.0025)
    assert b4.versus[1].ceiling_tps == pytest.approx(160000)
    assert b4.versus[2] == model.BusyLock("Y", 0, 0, None, None, None)
    # no point of a at 8 clients
    assert b8.versus == () and b8.locks[0].busy == pytest.approx(0.01)


def _cells(line):
    return [c.strip() for c in line.split("|")]


def test_moved_text(tmp_path):
    text = bz.busiest_text(moved(tmp_path), ["a", "b"])
    assert "descriptive, no test (busy rests on sampled hold times)" in text
    assert text.count("(u) busiest locks moved:") == 2
    # under b's table at 2 clients
    b2 = bz.point_text(moved(tmp_path)[2])
    assert (b2 +
            "(u) busiest locks moved: b against a, 2 clients (descriptive, "
            "no test: hold times are sampled)\n"
            " lock | a Busy % | b Busy % | a ceiling tps | b ceiling tps\n"
            "------+----------+----------+---------------+---------------\n"
            " P    |     3.00 |     0.50 |          2500 |         20000\n"
            " W    |     1.00 |    10.00 |          7500 |          1000\n"
            " R    |     0.00 |        - |     150000000 |             -\n\n"
            "(u) busiest locks: variant b, 4 clients") in text
    head = ("(u) busiest locks moved: b against a, 4 clients (descriptive, "
            "no test: hold times are sampled)\n")
    rows = text[text.index(head) + len(head):].split("\n\n")[0]
    assert [_cells(r) for r in rows.splitlines()[2:]] == [
        ["V", "5.00", "2.00", "4000", "20000"],
        # X: a had no sample; Y: neither had one (b no row)
        ["X", "-", "0.25", "-", "160000"],
        ["Y", "-", "-", "-", "-"]]
    # b at 8 clients: no point of a to move
    assert text.endswith(bz.point_text(moved(tmp_path)[4]))


def test_moved_with_unpatched_variants(tmp_path):
    """An unpatched variant: its one line, nothing moved; an unpatched
    baseline: nothing moved, and its line says so while another variant
    has lock counts."""
    text = bz.busiest_text(moved(tmp_path), ["a", "b", "u"], ["u"])
    assert text.endswith("(u) busiest locks: " + NOT_AVAILABLE % "u" +
                         "\n\n")
    assert "moved: u" not in text and text.count("moved: b against a") == 2
    (tmp_path / "u").mkdir()
    p = moved(tmp_path / "u", ["u", "a", "b"], ["u"])
    assert [x.versus for x in p] == [()] * 5
    assert [x.locks for x in p] == [x.locks for x in moved(tmp_path)]
    text = bz.busiest_text(p, ["u", "a", "b"], ["u"])
    assert "(u) busiest locks moved:" not in text
    assert text.startswith("\n" + bz.WORDS % 3 + "(u) busiest locks: " +
                           NOT_AVAILABLE % "u" + "; it is the baseline, so "
                           "no variant's busiest locks are compared with "
                           "it\n\n(u) busiest locks: variant a, 2 clients")
    assert bz.busiest_text((), ["u", "v"], ["u", "v"]) == \
        "\n" + bz.WORDS % 3 + "".join(
            "(u) busiest locks: %s\n\n" % (NOT_AVAILABLE % v) for v in "uv")


# busiest.txt before (u) showed how a variant moved the baseline's busiest
BEFORE_MOVED = "966d07d"


def test_golden_eviction_moved():
    """ttas's moved tables in busiest.txt: their numbers are those of the
    points' own tables (ttas's busiest are tas's there), and the rest is
    the busiest.txt of before, but for the words."""
    with open(os.path.join(EVICTION, "busiest.txt")) as f:
        text = f.read()
    blocks = [b.split("\n", 2)[2] if b.startswith("\n(u) busiest locks, ")
              else b for b in text.split("\n\n")]
    # (variant, clients): {lock: [Busy %, ceiling tps]} of each point
    own = {tuple(b.split(", ")[:2]):
           {_cells(r)[0]: _cells(r)[4:] for r in b.splitlines()[3:]}
           for b in blocks if b.startswith("(u) busiest locks: variant ")}
    moves = [b for b in blocks if b.startswith("(u) busiest locks moved:")]
    assert [m.splitlines()[0].split(" (")[0] for m in moves] == [
        "(u) busiest locks moved: ttas against tas, %d clients" % c
        for c in (1, 4)]
    for m, c in zip(moves, (1, 4)):
        tas = own[("(u) busiest locks: variant tas", "%d clients" % c)]
        ttas = own[("(u) busiest locks: variant ttas", "%d clients" % c)]
        assert [_cells(r)[0] for r in m.splitlines()[3:]] == list(tas)
        for r in m.splitlines()[3:]:
            name, tb, vb, tc, vc = _cells(r)
            assert [tb, tc] == tas[name] and [vb, vc] == ttas[name]
    old = test_golden._old_golden(BEFORE_MOVED, "locks-eviction",
                                  "busiest.txt")
    if old is None:
        pytest.skip("not a git checkout with commit %s" % BEFORE_MOVED)
    start = "(u) busiest locks: variant"
    assert re.sub(r"\(u\) busiest locks moved:.*?\n\n", "",
                  text[text.index(start):], flags=re.S) == \
        old[old.index(start):]
