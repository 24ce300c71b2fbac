"""Tests of lockstudy.runner with a sysbench workload, on the fake server
of test_runner.py (FakeRun): its prepare, once, then VACUUM ANALYZE; its
runs sysbench's, one thread per client, in sysbench's logs, recorded
from sysbench's output as pgbench's are; a run without a summary, and
one that dies, fail naming the step and the log; versions.txt names
sysbench.  No server.
"""

import dataclasses
import io
import os

import pytest

from lockstudy import builds, records, runner, spec
from test_runner import (SYSBENCH_OUTPUT, FakeRun, _lines, _planned, _rounds,
                         _study)

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- a sysbench workload -----------------------------------------------------

def _sysbench_study(warmup_round, **kw):
    """_study() under sysbench-point-select, 4 tables of 25000 rows."""
    return dataclasses.replace(
        _study(warmup_round, **kw),
        workload=spec.Workload("sysbench-point-select",
                               ("oltp_point_select", "--tables=4",
                                "--table-size=25000"), tool="sysbench"),
        sysbench_tables=4, sysbench_table_size=25000)


SYSBENCH_CONNECTION = ("--db-driver=pgsql --pgsql-host=/tmp/pg_lockstat-run.x "
                       "--pgsql-port=25000 --pgsql-user=%s --pgsql-db=postgres"
                       % runner._user())


def test_sysbench_plan(tmp_path):
    _, lines = _planned(True, tmp_path, study=_sysbench_study(True))
    assert lines[0] == (
        "pg_lockstat study: workload sysbench-point-select (sysbench "
        "oltp_point_select --tables=4 --table-size=25000), 5s per run, %d "
        "CPUs" % (os.cpu_count() or 1))


def test_sysbench_prepare(tmp_path):
    """The tables once, at most nproc tables at a time, then VACUUM
    ANALYZE; both in commands.txt."""
    s = FakeRun(_sysbench_study(True), str(tmp_path))
    s.nproc = 2
    s.prepare_sysbench()
    prepare = ("sysbench oltp_point_select %s --tables=4 --table-size=25000 "
               "--threads=2 prepare" % SYSBENCH_CONNECTION)
    assert s.events == [
        ("pgbench", "sysbench prepare", "sysbench-prepare.log", prepare),
        ("sql", "VACUUM ANALYZE (after sysbench prepare)")]
    assert _lines(str(tmp_path / "commands.txt")) == [
        prepare, "VACUUM ANALYZE", ""]


def test_sysbench_rounds(tmp_path, fake_cluster):
    """The runs of a sysbench study are sysbench's, one thread per client,
    in sysbench's logs, read as pgbench's are: tps, transactions and the
    tps of each second recorded; the warm-up runs without the reports of
    each second."""
    s = _rounds(True, tmp_path, study=_sysbench_study(True))
    runs = [e for e in s.events if e[0] == "pgbench"]
    assert len(runs) == 3 * 2 * (1 + 2)
    assert all(e[3].startswith("sysbench oltp_point_select " +
                               SYSBENCH_CONNECTION + " --tables=4 "
                               "--table-size=25000 --threads=")
               for e in runs)
    v, c = s.plan.rounds[0][0], s.plan.round_clients[0][0]
    assert runs[0][1:] == (
        "sysbench (variant %s, warm-up, warm-up round)" % v,
        "sysbench-%s-warmup-0.log" % v,
        "sysbench oltp_point_select %s --tables=4 --table-size=25000 "
        "--threads=8 --time=3 run" % SYSBENCH_CONNECTION)
    assert runs[1][1:] == (
        "sysbench (variant %s, %d clients, warm-up round)" % (v, c),
        "sysbench-%s-%d-0.log" % (v, c),
        "sysbench oltp_point_select %s --tables=4 --table-size=25000 "
        "--threads=%d --time=5 --report-interval=1 run"
        % (SYSBENCH_CONNECTION, c))
    assert sorted(e[2] for e in runs if "--report-interval=1" in e[3]) == \
        sorted("sysbench-%s-%d-%d.log" % (v, c, r) for v in "ab"
               for c in (1, 8) for r in (0, 1, 2))
    # runs.csv: the summary's tps and transactions
    assert sorted(run[:3] for run in s.recorder.runs) == sorted(
        (v, c, r) for v in "ab" for c in (1, 8) for r in (1, 2))
    assert {(run[4], run[6]) for run in s.recorder.runs} == {("250", 500)}
    # persec.csv: both seconds of every recorded run
    persec = [line for line in _lines(str(tmp_path / "persec.csv")) if line]
    assert len(persec) == 2 * 2 * 2 * 2
    assert sorted(line.split(",")[3:] for line in persec) == sorted(
        [["1", "249.00"], ["2", "251.00"]] * 8)
    # the counters as under pgbench
    assert sorted(e[1] for e in s.events if e[0] == "record") == sorted(
        (v, c, r) for v in "ab" for c in (1, 8) for r in (1, 2))
    assert s.progress.done == s.plan.total
    commands = _lines(str(tmp_path / "commands.txt"))
    assert "[%s] %s (warm-up, warm-up round)" % (v, runs[0][3]) in commands


class _NoSummary(FakeRun):
    """sysbench that exits 0 and prints only the lines of each second."""

    def benchmark(self, what, cmd, out):
        return SYSBENCH_OUTPUT.split("SQL statistics:")[0]


def test_sysbench_run_without_summary_fails(tmp_path, fake_cluster):
    s = _NoSummary(_sysbench_study(False), str(tmp_path))
    s.draw_plan()
    with pytest.raises(runner.cluster.StepError) as e:
        s.run_rounds()
    v, c = s.plan.rounds[0][0], s.plan.round_clients[0][0]
    assert str(e.value) == (
        "sysbench (variant %s, %d clients, round 1) failed: no tps in its "
        "output; see %s/sysbench-%s-%d-1.log" % (v, c, tmp_path, v, c))
    assert s.recorder.runs == []


def test_sysbench_failure_names_its_log(tmp_path, capsys):
    """A sysbench that dies (a missing table: sysbench 1.0.20 segfaults
    after its FATAL) fails the step with its exit status and log, and the
    lines shown are its FATAL and the server's ERROR."""
    fake = tmp_path / "sysbench"
    fake.write_text("#!/bin/sh\ncat %s\nkill -SEGV $$\n" % os.path.join(
        BENCH, "tests", "golden", "sysbench", "no-table.log"))
    fake.chmod(0o755)
    s = runner.StudyRun(_sysbench_study(False), "/top", [], io.StringIO())
    out = str(tmp_path / "sysbench-a-1-1.log")
    with pytest.raises(runner.cluster.StepError) as e:
        s.benchmark("sysbench (variant a, 1 clients, round 1)", [str(fake)],
                    out)
    assert str(e.value) == ("sysbench (variant a, 1 clients, round 1) "
                            "failed (exit status 139); see %s" % out)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "lockstudy: from %s:" % out
    assert err[1] == ('    FATAL: PQprepare() failed: ERROR:  relation '
                      '"sbtest5" does not exist')


def test_versions_txt_names_sysbench(monkeypatch):
    """sysbench's version after pgbench's, for a sysbench workload only."""
    monkeypatch.setattr(records.builds, "server_major", lambda b: "18")
    monkeypatch.setattr(records.builds, "series", lambda top, major: [])
    monkeypatch.setattr(records, "_output", lambda cmd: cmd[0] + " 1")
    b = builds.Build("/pg/bin", "k", "the base server (PG_CONFIG)")
    lines = records.versions_lines(_sysbench_study(True), "/top", [b, b])
    assert lines[:3] == ["server: postgres 1", "pgbench: pgbench 1",
                         "sysbench: sysbench 1"]
    lines = records.versions_lines(_study(True), "/top", [b, b])
    assert not any(line.startswith("sysbench") for line in lines)
