"""Tests of lockstudy.floor: the floor an A/A study measures, where the
machine's floors are kept, and the line under table (a) that shows the
last one, or says there is none.

Simulated A/A studies (two variants of one server, 1, 8 and 64 clients,
12 rounds, 10 % ratio noise, 200 studies) check what a floor says: its
ratio noise within 30 % of the truth in at least 90 % of studies (the
median of three noises of 12 rounds, each about 21 % off), and a
false verdict in at most 5 % of them (the study's Bonferroni bound).
(The package at 667e9a1 had no floor, so no test of it fails there but
by its absence.)
"""

import dataclasses
import math
import os
import shutil

import numpy
import pytest

from lockstudy import data, floor, model, report, results, stats

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
EVICTION = os.path.join(GOLDEN, "locks-eviction")
LEVEL = 1 - 0.05 / 3


def _aa_runs(rng, noise=0.1, rounds=12, clients=(1, 8, 64)):
    """An A/A study's runs: a and b the same server, each run's log tps
    noise / sqrt 2 about its round's level."""
    runs = []
    for r in range(1, rounds + 1):
        level = 0.1 * rng.standard_normal()
        for q, v in enumerate("ab" if r % 2 else "ba", start=1):
            for c in clients:
                runs.append(data.Run(v, c, r, 1000.0 * c * math.exp(
                    level + noise / math.sqrt(2) * rng.standard_normal()),
                    q))
    return runs


def _floor(runs, study="20261208-101010"):
    tps = report.tps_result(runs, ["a", "b"], 2.0)
    return floor.measure(tps, "h", study, "SCALE=10 ... AA=1")


def test_measure():
    f = _floor(_aa_runs(numpy.random.default_rng(1)))
    assert (f.host, f.study, f.rounds, f.comparisons) == (
        "h", "20261208-101010", 12, 3)
    assert f.ratio_confidence == pytest.approx(LEVEL)
    assert [p.clients for p in f.points] == [1, 8, 64]
    assert f.noise == sorted(p.ratio_noise for p in f.points)[1]
    assert f.half_width == max(max(p.ci_high - 1, 1 - p.ci_low)
                               for p in f.points)
    assert f.resolves == stats.resolves(12, f.noise, 0.02, f.ratio_confidence)
    assert f.false_verdicts == sum(p.verdict in ("faster", "slower")
                                   for p in f.points)


def test_simulated_floors():
    rng = numpy.random.default_rng(2)
    floors = [_floor(_aa_runs(rng)) for _ in range(200)]
    near = numpy.mean([abs(f.noise / 0.1 - 1) <= 0.3 for f in floors])
    false = numpy.mean([f.false_verdicts > 0 for f in floors])
    assert near >= 0.9 and false <= 0.05


def test_kept_and_last(tmp_path):
    run = tmp_path / "run"
    (run / "20261208-101010-2").mkdir(parents=True)
    (run / "20261208-101010-10").mkdir()
    f = _floor(_aa_runs(numpy.random.default_rng(3)), "20261208-101010-2")
    store = str(run / "floors" / "h")
    assert floor.where(str(run / "20261208-101010-2"), "h") == store
    assert floor.last(store) is None
    path = floor.save(f, str(run / "20261208-101010-2"))
    assert path == os.path.join(store, "20261208-101010-2.json")
    with open(run / "20261208-101010-2" / floor.FLOOR_FILE) as fh:
        assert model.decode_json(model.Floor, fh.read()) == f
    assert floor.last(store) == f
    # the last by the study's name, its numbers as numbers; a file that
    # cannot be read passed over
    g = _floor(_aa_runs(numpy.random.default_rng(4)), "20261208-101010-10")
    floor.save(g, str(run / "20261208-101010-10"))
    assert floor.last(store) == g
    with open(os.path.join(store, "20261209-000000.json"), "w") as fh:
        fh.write("{")
    assert floor.last(store) == g
    # a host's name is kept as a file name
    assert floor.where(str(run / "x"), "a/b c").endswith("floors/a_b_c")


def test_lines():
    f = _floor(_aa_runs(numpy.random.default_rng(5)))
    tps = report.tps_result(_aa_runs(numpy.random.default_rng(6)),
                            ["a", "b"], 2.0)
    assert floor.lines(tps) == ()
    none = model.MachineFloor("h", "/r/floors/h", None)
    assert floor.lines(model_replace(tps, machine_floor=none)) == (
        "floor: no A/A study kept for this machine (h) in /r/floors/h: make "
        "run AA=1 measures the differences its noise alone makes",)
    last = model.MachineFloor("h", "/r/floors/h", f)
    text = floor.lines(model_replace(tps, machine_floor=last))[0]
    assert text.startswith("floor: the last A/A study of this machine (h, "
                           "study 20261208-101010, SCALE=10 ... AA=1): "
                           "ratio noise %.1f%% (median over its 3 "
                           "comparisons), intervals (98.33%%) reaching "
                           "±%.1f%% from 1; at that noise its 12 rounds "
                           "resolve ±%.1f%%; %d false verdict"
                           % (100 * f.noise, 100 * f.half_width,
                              100 * f.resolves, f.false_verdicts))
    own = floor.lines(model_replace(tps, floor=f, machine_floor=last))[0]
    assert own.startswith("floor: this is an A/A study (every variant the "
                          "same server): ratio noise ")
    assert own.endswith("; kept as the floor of h in /r/floors/h")


def model_replace(tps, **kw):
    return dataclasses.replace(tps, **kw)


def _study(d, commands, host="testhost"):
    """A study directory of the kept eviction study's files, with a
    commands.txt and a machine.txt naming the host."""
    os.makedirs(d)
    for name in ("runs.csv", "locks.csv", "spins.csv"):
        shutil.copy(os.path.join(EVICTION, name), d)
    with open(os.path.join(d, "commands.txt"), "w") as f:
        f.write(commands + "\n")
    with open(os.path.join(d, "machine.txt"), "w") as f:
        f.write("nproc: 2\nhost: %s\n" % host)
    return d


def test_a_study_records_and_shows_the_floor(tmp_path):
    """An A/A study (commands.txt's parameters end in AA=1) writes its
    floor into floor.json, results.json and RUN_DIR/floors/<host>/; a
    later study of that host shows it under table (a), one of another
    host says it has none."""
    aa = _study(str(tmp_path / "20261208-090000"),
                'SCALE=10 VARIANTS="a; b" ... THREADS= AA=1')
    text = results.report_text(aa, None, 2.0)
    kept = os.path.join(str(tmp_path), "floors", "testhost",
                        "20261208-090000.json")
    assert os.path.exists(kept)
    assert os.path.exists(os.path.join(aa, "floor.json"))
    saved = model.load(os.path.join(aa, "results.json")).tps
    assert saved.floor is not None and saved.floor.host == "testhost"
    assert saved.machine_floor.last == saved.floor
    assert "\nfloor: this is an A/A study (every variant the same server)" \
        in text
    # the line that names the study's files names floor.json
    assert results.listed(model.load(os.path.join(aa, "results.json")),
                          [])[-1] == floor.FLOOR_FILE
    other = _study(str(tmp_path / "20261208-100000"), "SCALE=10 ...")
    text = results.report_text(other, None, 2.0)
    assert not os.path.exists(os.path.join(other, "floor.json"))
    line = ("floor: the last A/A study of this machine (testhost, study "
            "20261208-090000, SCALE=10 VARIANTS=\"a; b\" ... THREADS= "
            "AA=1): ratio noise ")
    # under table (a): after the lines on the verdicts, before collapse
    assert text.index("\nnoise: the ratio noise;") < text.index(line) \
        < text.index("\ncollapse: ")
    elsewhere = _study(str(tmp_path / "20261208-110000"), "SCALE=10 ...",
                       host="elsewhere")
    assert ("\nfloor: no A/A study kept for this machine (elsewhere) in "
            "%s: make run AA=1" % os.path.join(str(tmp_path), "floors",
                                                 "elsewhere")
            ) in results.report_text(elsewhere, None, 2.0)
