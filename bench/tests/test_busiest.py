"""Tests of lockstudy.busiest: table (u), the busiest locks of each point,
on synthetic locks rows whose busy and ceiling are worked out by hand
(below, in the comments), and on the kept eviction study, whose (u) is
pinned by golden/locks-eviction/busiest.txt (its README says how it was
made).
"""

import csv
import os

import pytest

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
HEAD = ["variant", "clients", "round", "tranche", "sh_acquires",
        "ex_acquires", "ex_hold_samples", "ex_hold_time"]


def write_study(d, locks=LOCKS, head=HEAD):
    """runs.csv and locks.csv of the rows in d (the columns of head, any
    other 0); their paths."""
    runs, lpath = os.path.join(d, "runs.csv"), os.path.join(d, "locks.csv")
    with open(runs, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["variant", "clients", "round", "tps", "transactions"])
        w.writerows(RUNS)
    with open(lpath, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(head)
        for v, c, r, name, a, s, h in locks:
            row = dict(zip(HEAD, (v, c, r, name, 7, a, s, h)))
            w.writerow([row.get(k, 0) for k in head])
    return runs, lpath


def points(tmp_path, **kw):
    runs, lpath = write_study(str(tmp_path), **kw)
    return bz.busiest(read_runs(runs, need_transactions=True), lpath,
                      ["a"])


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
    """The model gains (u) and results.json keeps it; one without it (a
    study saved before) reads as none."""
    d = str(tmp_path)
    write_study(d, head=HEAD + [c for cols in lt.LOCK_COLUMNS for c in cols
                                if c not in HEAD])
    with open(os.path.join(d, "spins.csv"), "w") as f:
        f.write("variant,clients,round,func,file,line,contended,spins,"
                "delays,wait_time,tas_attempts,unlocked_skips\n")
    r = results.analyse(d, None, 2.0)
    assert r.busiest == bz.busiest(
        read_runs(os.path.join(d, "runs.csv"), need_transactions=True),
        os.path.join(d, "locks.csv"), ["a"])
    assert [x.name for x in r.busiest[0].locks] == ["P", "W", "R"]
    back = model.from_json(model.to_json(r))
    assert back.busiest == r.busiest
    assert results.render(back).endswith(
        bz.busiest_text(r.busiest, ["a"]))
    old = model.to_json(r).replace('"busiest"', '"ignored"')
    assert model.from_json(old).busiest == ()


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
