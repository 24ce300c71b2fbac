"""Tests of lockstudy.results: the whole report of a study directory.

On the files of the kept eviction study (golden/locks-eviction: tas and
ttas, 1 and 4 clients, 6 rounds): without versions.txt, or with one that
names no unpatched variant, the report is table (a) and the rest of the
tps report, then (m) as m-rates.txt, then (b) and (c) as report.txt,
then (u) as busiest.txt.
With versions.txt naming a variant that ran the unpatched server (its
rows taken out of locks.csv and spins.csv, as such a study writes them):
table (a) unchanged, and one "not available" line where its (m), (b),
(c) and (u) were, a comment as its locks-<variant>.dat and a
mechanism.csv of the other variants; an unpatched baseline, or only
unpatched variants (files of the header only), likewise.  No server.
"""

import dataclasses
import io
import os
import re
import shutil

import test_plots

from lockstudy import (busiest, data, floor, locktables, report,
                       report_locks, results)

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
EVICTION = os.path.join(GOLDEN, "locks-eviction")
NOT_AVAILABLE = "not available: %s runs the unpatched server (no pg_lockstat)"
VERSIONS = ("server: postgres (PostgreSQL) 18.6\n"
            "variant tas: /b/pg18, build k, the base server (PG_CONFIG)\n")


def _read(path):
    with open(path, newline="") as f:
        return f.read()


def _study(tmp_path, unpatched=(), versions=True):
    """A study directory of the eviction study's files, the rows of the
    variants of unpatched left out of locks.csv and spins.csv, and a
    versions.txt naming them (none: without versions.txt)."""
    d = str(tmp_path)
    shutil.copy(os.path.join(EVICTION, "runs.csv"), d)
    for name in ("locks.csv", "spins.csv"):
        lines = _read(os.path.join(EVICTION, name)).splitlines(True)
        with open(os.path.join(d, name), "w") as f:
            f.write("".join(line for line in lines
                            if line.split(",")[0] not in unpatched))
    if versions:
        with open(os.path.join(d, "versions.txt"), "w") as f:
            f.write(VERSIONS + "".join(
                "variant %s: /b/pg18-stock, build ks, the unpatched server "
                "(STOCK_PG_CONFIG)\n" % v for v in unpatched))
            if unpatched:
                f.write(data.UNPATCHED_LINE + " ".join(unpatched) + "\n")
    return d


def _tps_text(d):
    """The tps report of the study in d, with the line of its machine's
    floor that a study directory has under table (a) (test_floor.py)."""
    r = report.tps_result(data.read_runs(os.path.join(d, "runs.csv")),
                          None, 2.0)
    return report.tps_text(dataclasses.replace(
        r, machine_floor=floor.machine_floor(d, results.read_meta(d),
                                             None)))


def _top_tables(d, unpatched):
    """(b), (c) and (u) of the study in d."""
    runs = data.read_runs(os.path.join(d, "runs.csv"),
                          need_transactions=True)
    return report_locks.top_tables(locktables.lock_tables(
        os.path.join(d, "locks.csv"), os.path.join(d, "spins.csv"),
        ["tas", "ttas"], 4, 6, unpatched)) + busiest.busiest_text(
            busiest.busiest(runs, os.path.join(d, "locks.csv"),
                            ["tas", "ttas"], unpatched),
            ["tas", "ttas"], unpatched)


def test_report_without_unpatched_variants(tmp_path):
    golden = _read(os.path.join(EVICTION, "report.txt"))
    tables = golden[golden.index("\n(b) top"):]
    for i, versions in enumerate((False, True)):
        (tmp_path / str(i)).mkdir()
        d = _study(tmp_path / str(i), versions=versions)
        text = results.report_text(d, None, 2.0)
        assert text == (_tps_text(d) + "\n" +
                        _read(os.path.join(EVICTION, "m-rates.txt")) +
                        tables + _read(os.path.join(EVICTION,
                                                    "busiest.txt")))
        for v in ("tas", "ttas"):
            assert _read(os.path.join(d, "locks-%s.dat" % v)) == \
                _read(os.path.join(EVICTION, "locks-%s.dat" % v))


def test_report_of_an_unpatched_variant(tmp_path):
    d = _study(tmp_path, ["ttas"])
    text = results.report_text(d, None, 2.0)
    assert text == (_tps_text(d) + "\n(m) mechanism: ttas against tas: "
                    "%s\n" % (NOT_AVAILABLE % "ttas") +
                    _top_tables(d, ["ttas"]))
    # table (a) has its ratio as without the line in versions.txt
    assert re.search(r"\n       4 \| ttas    \| 63732 \|             \| "
                     r"1\.061 \| 0\.662-1\.701 \| [\d.]+ \| [\d.-]+ \| "
                     r"not resolved \|", text)
    assert ("\n(b) top LWLocks: %s\n" % (NOT_AVAILABLE % "ttas")) in text
    assert ("\n(c) top spin-wait call sites: %s\n"
            % (NOT_AVAILABLE % "ttas")) in text
    assert "(b) top 10 LWLocks by blocks: variant tas, 4 clients" in text
    assert _read(os.path.join(d, "locks-ttas.dat")) == \
        "# %s\n" % (NOT_AVAILABLE % "ttas")
    assert _read(os.path.join(d, "locks-tas.dat")) == \
        _read(os.path.join(EVICTION, "locks-tas.dat"))
    assert _read(os.path.join(d, "mechanism.csv")) == \
        ",".join(report_locks.COLUMNS) + "\n"


def test_report_of_an_unpatched_baseline(tmp_path):
    d = _study(tmp_path, ["tas"])
    text = results.report_text(d, None, 2.0)
    assert text == (_tps_text(d) + "\n(m) mechanism: %s; it is the "
                    "baseline, so no variant has a table (m)\n"
                    % (NOT_AVAILABLE % "tas") + _top_tables(d, ["tas"]))
    assert "(b) top 10 LWLocks by blocks: variant ttas, 4 clients" in text
    assert _read(os.path.join(d, "locks-tas.dat")).startswith("# not ")


def test_report_of_unpatched_variants_only(tmp_path):
    """locks.csv and spins.csv of their header only, as the study writes
    them when no run records a row."""
    d = _study(tmp_path, ["tas", "ttas"])
    assert _read(os.path.join(d, "locks.csv")).count("\n") == 1
    text = results.report_text(d, None, 2.0)
    assert text.startswith(_tps_text(d) + "\n(m) mechanism: %s;"
                           % (NOT_AVAILABLE % "tas"))
    assert text.endswith("".join(
        "\n(%s) %s: %s\n" % (t, what, NOT_AVAILABLE % v)
        for t, what in (("b", "top LWLocks"),
                        ("c", "top spin-wait call sites"))
        for v in ("tas", "ttas")) + "\n" + busiest.WORDS % 3 + "".join(
            "(u) busiest locks: %s\n\n" % (NOT_AVAILABLE % v)
            for v in ("tas", "ttas")))


def test_read_unpatched(tmp_path):
    path = str(tmp_path / "versions.txt")
    assert data.read_unpatched(path) == []
    with open(path, "w") as f:
        f.write(VERSIONS)
    assert data.read_unpatched(path) == []
    with open(path, "a") as f:
        f.write("unpatched variants: s1 s2\n")
    assert data.read_unpatched(path) == ["s1", "s2"]


def test_report_reads_kinds_csv(tmp_path):
    """A study with kinds.csv: its (m) counts the LWLocks of client
    backends and parallel workers only, and says so; a kinds.csv whose
    client backend rows are locks.csv's gives the golden table, with the
    line that names kinds.csv, whatever the background rows hold."""
    d = _study(tmp_path)
    with open(os.path.join(EVICTION, "locks.csv"), newline="") as f:
        lines = f.read().splitlines()
    head = lines[0].split(",")
    with open(os.path.join(d, "kinds.csv"), "w") as f:
        f.write(",".join(head[:3] + ["backend_type"] + head[3:]) + "\n")
        for line in lines[1:]:
            cells = line.split(",")
            f.write(",".join(cells[:3] + ["client backend"] + cells[3:]) +
                    "\n")
            # the walwriter's counts: ignored by (m)
            f.write(",".join(cells[:3] + ["walwriter"] + cells[3:5] +
                             ["999999"] * 3 + cells[8:]) + "\n")
    assert head[5:8] == ["sh_acquires", "ex_acquires", "blocks"]
    text = results.report_text(d, None, 2.0)
    m = _read(os.path.join(EVICTION, "m-rates.txt"))
    m = m[:-len(report_locks.counted_line(False))] + \
        report_locks.counted_line(True)
    golden = _read(os.path.join(EVICTION, "report.txt"))
    assert text == (_tps_text(d) + "\n" + m +
                    golden[golden.index("\n(b) top"):] +
                    _read(os.path.join(EVICTION, "busiest.txt")))


def test_report_reads_spinkinds_csv(tmp_path):
    """A study with kinds.csv and spinkinds.csv: its (m) counts the spin
    waits of client backends and parallel workers only too, and says so;
    a spinkinds.csv whose client backend rows are spins.csv's gives the
    golden table whatever the background rows hold, and results.json
    keeps that it did (spin_by_kind)."""
    d = _study(tmp_path)
    for name, kinds, at in (("locks.csv", "kinds.csv", 5),
                            ("spins.csv", "spinkinds.csv", 6)):
        lines = _read(os.path.join(EVICTION, name)).splitlines()
        head = lines[0].split(",")
        with open(os.path.join(d, kinds), "w") as f:
            f.write(",".join(head[:3] + ["backend_type"] + head[3:]) + "\n")
            for line in lines[1:]:
                cells = line.split(",")
                f.write(",".join(cells[:3] + ["client backend"] + cells[3:])
                        + "\n")
                # the walwriter's counts: ignored by (m)
                f.write(",".join(cells[:3] + ["walwriter"] + cells[3:at] +
                                 ["999999"] * 3 + cells[at + 3:]) + "\n")
    assert _read(os.path.join(EVICTION, "spins.csv")).split(",")[6:9] == \
        ["contended", "spins", "delays"]
    text = results.report_text(d, None, 2.0)
    m = _read(os.path.join(EVICTION, "m-rates.txt"))
    m = m[:-len(report_locks.counted_line(False))] + \
        report_locks.counted_line(True, True)
    golden = _read(os.path.join(EVICTION, "report.txt"))
    assert text == (_tps_text(d) + "\n" + m +
                    golden[golden.index("\n(b) top"):] +
                    _read(os.path.join(EVICTION, "busiest.txt")))
    result = results.analyse(d, None, 2.0)
    assert result.mechanism.by_kind and result.mechanism.spin_by_kind


def test_show_study(tmp_path, monkeypatch):
    """The end of a study: an empty line, the report, the plots of the
    model, the line that names the files, results.json among them."""
    d = _study(tmp_path)
    drawn = []
    monkeypatch.setattr(results.plots, "draw",
                        lambda rundir, study, nproc, result:
                        drawn.append(result) or ["tps.png"])
    study = dataclasses.replace(test_plots._study(), clients=(1, 4))
    out = io.StringIO()
    results.show_study(d, study, 2, out)
    text = out.getvalue()
    assert text == ("\n" + results.render(drawn[0]) + "\nresults: %s/ "
                    "(runs.csv, points.csv, mechanism.csv, persec.csv, "
                    "locks.csv, spins.csv, tps.png, settings.txt, "
                    "machine.txt, versions.txt, commands.txt, results.json)"
                    "\n" % d)
    assert os.path.exists(os.path.join(d, "results.json"))
