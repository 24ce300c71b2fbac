"""Tests of lockstudy.plots: the gnuplot images of a finished study.

On a small study directory written here (tps-, ratio-, bimodal- and
locks-<variant>.dat, persec.csv) and its model (a split point), draw()
with the real gnuplot makes ratio.png, tps.png, collapse-<v>-<c>.png and
locks-<v>.png, in run-study.sh's order, each a PNG (its signature) of the
size the script asks for (900x600, 900x800 for the lock shares), and
nothing else; none of the lock shares of an unpatched variant, whose
file says they are not available.  Without gnuplot on PATH: the warning
and no image.  With a gnuplot that fails (a script on PATH, which even
leaves a partial file behind): a warning per image naming gnuplot.log,
where gnuplot's errors went, and no image left.  The titles name the
workload's program and data (pgbench's scale, sysbench's tables).  No
server.
"""

import dataclasses
import os
import shutil
import struct

import pytest

from lockstudy import model, plots, spec

PNG = b"\x89PNG\r\n\x1a\n"
GNUPLOT = shutil.which("gnuplot")
needs_gnuplot = pytest.mark.skipif(GNUPLOT is None, reason="no gnuplot")
POINTS_HEADER = ("variant,clients,n,median,lo,hi,bifurcated,cv,tps_ci_low,"
                 "tps_ci_high,pairs,ratio,ci_low,ci_high,coverage,verdict,"
                 "rounds_needed,bad_runs,fisher_p")


def _study(names=("tas", "ttas"), clients=(1, 8, 64)):
    return spec.Study(
        pg_config="/pg/bin/pg_config", bindir="/pg/bin", scale=10,
        clients=clients, duration=5, warmup=3,
        workload=spec.Workload("select-only", ("-S", "-M", "prepared")),
        threads=None, repeat=4, seed=1, threshold="2", run_dir="/r",
        variant_dir="/v",
        variants=tuple(spec.Variant(n, (), (("pg_lockstat.spin_strategy",
                                            n),), n) for n in names),
        variants_given=None)


def _write(d, name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)


def _study_dir(d, names=("tas", "ttas")):
    """The files of a finished study of names at 1, 8 and 64 clients,
    4 rounds: ttas's runs at 8 clients split into two groups."""
    for i, v in enumerate(names):
        _write(d, "tps-%s.dat" % v, "".join(
            "%d %.3f %.3f %.3f\n" % (c, t, t * 0.9, t * 1.1)
            for c, t in ((1, 20000 + i), (8, 90000 + i), (64, 70000 + i))))
        if i:
            _write(d, "ratio-%s.dat" % v, "1 1.001000 0.990000 1.012000\n"
                   "8 0.870000 0.700000 1.050000\n"
                   "64 1.100000 1.050000 1.150000\n")
        _write(d, "locks-%s.dat" % v,
               "1 1 BufferMapping 60.00 10.00\n1 8 BufferMapping 70.00 "
               "20.00\n1 64 BufferMapping 80.00 30.00\n2 1 ProcArray 40.00 "
               "90.00\n2 8 ProcArray 30.00 80.00\n2 64 ProcArray 20.00 "
               "70.00\n")
    _write(d, "bimodal-%s.dat" % names[-1], "8 0.870000\n")
    rows = [POINTS_HEADER]
    for v in names:
        for c in (1, 8, 64):
            split = "t" if (v, c) == (names[-1], 8) else "f"
            rows.append("%s,%d,4,1000.000,900.000,1100.000,%s,0.01,,,4,1,"
                        "0.9,1.1,0.95,no difference,,0,0.5" % (v, c, split))
    _write(d, "points.csv", "\n".join(rows) + "\n")
    lines = ["variant,clients,round,second,tps"]
    for v in names:
        for c in (1, 8, 64):
            for r in range(1, 5):
                for s in range(1, 6):
                    tps = 50000.0 if r % 2 else 90000.0
                    lines.append("%s,%d,%d,%d.0,%.1f" % (v, c, r, s,
                                                         tps + s))
    _write(d, "persec.csv", "\n".join(lines) + "\n")


def _result(names=("tas", "ttas"), split=True, shares=True,
            unavailable=()):
    """The model of the study of _study_dir: what to draw.  split: ttas's
    runs at 8 clients split (a bimodal verdict); shares: the lock shares
    of locks-<v>.dat, but for the variants unavailable."""
    nan = float("nan")
    points = tuple(model.PointResult(
        v, c, 4, 1000.0, 900.0, 1100.0, split and (v, c) == (names[-1], 8),
        0.01, nan, nan, 4, 1.0, 0.9, 1.1, 0.95,
        "bimodal" if split and (v, c) == (names[-1], 8) else
        "not resolved", None, None, 0, 0.5, None, nan)
        for v in names for c in (1, 8, 64))
    tps = model.TpsResult(tuple(names), 0.02, 0.95,
                          model.Comparisons(0, "bonferroni", 0.95, 0.0, 6,
                                            0),
                          points, ())
    locks = tuple(model.LockTables(
        v, 64, 4, 10, v not in unavailable, shares=tuple(
            model.LockShare(rank, c, name, 50.0, 50.0)
            for rank, name in ((1, "BufferMapping"), (2, "ProcArray"))
            for c in (1, 8, 64)) if shares and v not in unavailable else ())
        for v in names)
    return model.StudyResult(model.StudyMeta(), (), tps, None, locks)


def _png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == PNG, path
    assert head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def _pngs(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".png"))


@needs_gnuplot
def test_draw_makes_the_pngs(tmp_path, capsys):
    d = str(tmp_path)
    _study_dir(d)
    made = plots.draw(d, _study(), 4, _result())
    assert made == ["ratio.png", "tps.png", "collapse-ttas-8.png",
                    "locks-tas.png", "locks-ttas.png"]
    assert _pngs(d) == sorted(made)
    for png in made:
        assert _png_size(os.path.join(d, png)) == (
            (900, 800) if png.startswith("locks-") else (900, 600))
    assert "warning" not in capsys.readouterr().err


@needs_gnuplot
def test_draw_of_the_baseline_alone(tmp_path):
    """No ratio without a second variant; no split point, no collapse
    image; an empty lock-share file, no lock image."""
    d = str(tmp_path)
    _study_dir(d, names=("tas",))
    _write(d, "points.csv", POINTS_HEADER + "\n")
    _write(d, "locks-tas.dat", "")
    made = plots.draw(d, _study(names=("tas",)), 2,
                      _result(("tas",), split=False, shares=False))
    assert made == ["tps.png"]
    assert _pngs(d) == ["tps.png"]


@needs_gnuplot
def test_no_lock_image_of_an_unpatched_variant(tmp_path, capsys):
    """The lock-share file of a variant of the unpatched server holds one
    comment line, not available: no image of it, and no warning."""
    d = str(tmp_path)
    _study_dir(d)
    _write(d, "locks-ttas.dat", "# not available: ttas runs the unpatched "
           "server (no pg_lockstat)\n")
    made = plots.draw(d, _study(), 4, _result(unavailable=("ttas",)))
    assert made == ["ratio.png", "tps.png", "collapse-ttas-8.png",
                    "locks-tas.png"]
    assert _pngs(d) == sorted(made)
    assert "warning" not in capsys.readouterr().err


@needs_gnuplot
def test_split_point_without_per_second_rows(tmp_path):
    d = str(tmp_path)
    _study_dir(d)
    _write(d, "persec.csv", "variant,clients,round,second,tps\n")
    made = plots.draw(d, _study(), 4, _result())
    assert "collapse-ttas-8.png" not in made
    assert not os.path.exists(os.path.join(d, "collapse-ttas-8.png"))


def test_no_gnuplot_on_path(tmp_path, monkeypatch, capsys):
    d = str(tmp_path / "study")
    os.mkdir(d)
    _study_dir(d)
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert plots.draw(d, _study(), 4, _result()) == []
    assert capsys.readouterr().err == (
        "lockstudy: warning: gnuplot not found, no plots (apt-get install "
        "gnuplot-nox)\n")
    assert _pngs(d) == []
    assert not os.path.exists(os.path.join(d, "gnuplot.log"))


# a gnuplot that starts the image it is asked for, complains and fails
FAILING_GNUPLOT = r"""#!/bin/sh
out=$(printf '%s\n' "$2" | sed -n "s/.*set output '\([^']*\)'.*/\1/p")
printf 'partial' >"$out"
echo "gnuplot: fake failure for $(basename "$out")" >&2
exit 1
"""


def test_failing_gnuplot(tmp_path, monkeypatch, capsys):
    d = str(tmp_path / "study")
    os.mkdir(d)
    _study_dir(d)
    fake = tmp_path / "fake-bin"
    fake.mkdir()
    with open(str(fake / "gnuplot"), "w") as f:
        f.write(FAILING_GNUPLOT)
    os.chmod(str(fake / "gnuplot"), 0o755)
    monkeypatch.setenv("PATH", "%s:/usr/bin:/bin" % fake)
    assert plots.draw(d, _study(), 4, _result()) == []
    log = os.path.join(d, "gnuplot.log")
    images = ["ratio.png", "tps.png", "collapse-ttas-8.png", "locks-tas.png",
              "locks-ttas.png"]
    assert capsys.readouterr().err == "".join(
        "lockstudy: warning: plotting %s failed, no plot; see %s\n"
        % (png, log) for png in images)
    # no partial image is left; gnuplot's complaints are in the log
    assert _pngs(d) == []
    with open(log) as f:
        assert f.read() == "".join("gnuplot: fake failure for %s\n" % png
                                   for png in images)


@needs_gnuplot
def test_gnuplot_errors_go_to_the_log(tmp_path, capsys):
    """A plot gnuplot refuses (its only data file empty): the warning, the
    log with gnuplot's message, no file of that image (gnuplot had opened
    it), the other images still drawn."""
    d = str(tmp_path)
    _study_dir(d, names=("tas",))
    _write(d, "points.csv", POINTS_HEADER + "\n")
    _write(d, "tps-tas.dat", "")
    made = plots.draw(d, _study(names=("tas",)), 4,
                      _result(("tas",), split=False))
    assert made == ["locks-tas.png"]
    assert _pngs(d) == ["locks-tas.png"]
    log = os.path.join(d, "gnuplot.log")
    assert capsys.readouterr().err == (
        "lockstudy: warning: plotting tps.png failed, no plot; see %s\n"
        % log)
    with open(log) as f:
        assert "tps-tas.dat" in f.read()


def test_titles_name_the_program_and_the_data():
    """pgbench's workload and scale; a sysbench workload, whose name says
    sysbench, and its tables."""
    s = _study()
    assert (plots.workload_title(s), plots.data_title(s)) == (
        "pgbench select-only", "scale 10")
    s = dataclasses.replace(s, workload=spec.Workload(
        "sysbench-read-only", ("oltp_read_only", "--tables=4",
                               "--table-size=250000"), tool="sysbench"),
        sysbench_tables=4, sysbench_table_size=250000)
    assert (plots.workload_title(s), plots.data_title(s)) == (
        "sysbench-read-only", "4 tables of 250000 rows")
