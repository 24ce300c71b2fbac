"""Tests of lockstudy.sysbench: the command lines of the study's sysbench
runs and what sysbench's output says.

The parsers read output that Debian's sysbench 1.0.20 printed here
(golden/sysbench/, whose README says how each file was made): runs of
oltp_point_select and oltp_read_write with --report-interval=1, a
warm-up run without it, and two failures, a missing table and no
server.  The command lines are checked as lists, and the installed
sysbench accepts them: run against a socket directory that does not
exist, it gets past its options and its script to the connection (skipped
without sysbench).  No server.
"""

import os
import shutil
import subprocess

import pytest

from lockstudy import sysbench

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "golden", "sysbench")
CONN = ["--db-driver=pgsql", "--pgsql-host=/tmp/pg_lockstat-run.ab12",
        "--pgsql-port=25432", "--pgsql-user=pglockstat",
        "--pgsql-db=postgres"]
ARGS = ("oltp_read_only", "--tables=4", "--table-size=250000")


def _sample(name):
    with open(os.path.join(SAMPLES, name)) as f:
        return f.read()


def test_connection():
    assert sysbench.connection("/tmp/pg_lockstat-run.ab12", 25432,
                               "pglockstat", "postgres") == CONN


def test_command():
    assert sysbench.command(ARGS, CONN, 8, 5, True) == (
        ["sysbench", "oltp_read_only"] + CONN +
        ["--tables=4", "--table-size=250000", "--threads=8", "--time=5",
         "--report-interval=1", "run"])


def test_warm_up_command():
    assert sysbench.command(ARGS, CONN, 64, 3, False) == (
        ["sysbench", "oltp_read_only"] + CONN +
        ["--tables=4", "--table-size=250000", "--threads=64", "--time=3",
         "run"])


def test_prepare_command():
    assert sysbench.prepare_command(ARGS, CONN, 2) == (
        ["sysbench", "oltp_read_only"] + CONN +
        ["--tables=4", "--table-size=250000", "--threads=2", "prepare"])


def test_commands_are_new_lists():
    args, conn = list(ARGS), list(CONN)
    sysbench.command(args, conn, 1, 1, True).append("x")
    sysbench.prepare_command(args, conn, 1).append("x")
    assert (args, conn) == (list(ARGS), CONN)


@pytest.mark.parametrize("tables, nproc, expected", [
    (4, 2, 2), (1, 8, 1), (16, 8, 8), (3, 3, 3), (1, 1, 1)])
def test_prepare_threads(tables, nproc, expected):
    assert sysbench.prepare_threads(tables, nproc) == expected


def test_point_select():
    text = _sample("point-select.log")
    assert sysbench.tps(text) == "26587.36"
    assert sysbench.transactions(text) == 79950
    assert sysbench.per_second(text) == [
        ("1", "18540.53"), ("2", "29989.54"), ("3", "31305.98")]


def test_read_write():
    """The summary's transactions, not its queries or read/write counts;
    an ignored error (a deadlock, retried) leaves them as they are."""
    text = _sample("read-write.log")
    assert sysbench.tps(text) == "504.23"
    assert sysbench.transactions(text) == 1555
    assert sysbench.per_second(text) == [
        ("1", "364.08"), ("2", "584.71"), ("3", "593.72")]


def test_warm_up_run():
    """Without --report-interval: the summary alone."""
    text = _sample("warmup.log")
    assert sysbench.tps(text) == "888.25"
    assert sysbench.transactions(text) == 894
    assert sysbench.per_second(text) == []


@pytest.mark.parametrize("name", ["no-table.log", "no-server.log"])
def test_failed_runs_have_no_tps(name):
    """A failed run has no summary: no tps and no transactions, which the
    runner reports as a failure even where sysbench exits 0."""
    text = _sample(name)
    assert "FATAL: " in text
    assert sysbench.tps(text) is None
    assert sysbench.transactions(text) is None
    assert sysbench.per_second(text) == []


def test_empty_output():
    assert sysbench.tps("") is None
    assert sysbench.transactions("") is None
    assert sysbench.per_second("") == []


def test_seconds_past_nine():
    """sysbench prints "[ %.0fs ]": no padding past 9 seconds."""
    text = ("[ 9s ] thds: 64 tps: 900.10 qps: 900.10 (r/w/o: 900.10/0.00/"
            "0.00) lat (ms,95%): 1.00 err/s: 0.00 reconn/s: 0.00\n"
            "[ 10s ] thds: 64 tps: 0.00 qps: 0.00 (r/w/o: 0.00/0.00/0.00) "
            "lat (ms,95%): 0.00 err/s: 0.00 reconn/s: 0.00\n"
            "[ 120s ] thds: 64 tps: 1000.00 qps: 1000.00 (r/w/o: 1000.00/"
            "0.00/0.00) lat (ms,95%): 1.00 err/s: 0.00 reconn/s: 0.00\n")
    assert sysbench.per_second(text) == [("9", "900.10"), ("10", "0.00"),
                                         ("120", "1000.00")]


def test_only_lines_that_start_so():
    text = (" [ 1s ] thds: 2 tps: 5.00 qps: 5.00 ...\n"
            "transactions:                        7      (3.50 per sec.)\n"
            "    queries:                             7      (3.50 per "
            "sec.)\n")
    assert sysbench.per_second(text) == []
    assert sysbench.tps(text) is None
    assert sysbench.transactions(text) is None


SYSBENCH = shutil.which("sysbench")


@pytest.mark.skipif(SYSBENCH is None, reason="no sysbench (apt-get install "
                    "sysbench)")
@pytest.mark.parametrize("script", ["oltp_point_select", "oltp_read_only",
                                    "oltp_read_write"])
@pytest.mark.parametrize("progress", [True, False])
def test_sysbench_accepts_the_command(tmp_path, script, progress):
    """sysbench 1.0 takes the options and finds the script, and goes on
    to connect, to a socket directory that does not exist."""
    conn = sysbench.connection(str(tmp_path / "nosocket"), 5432,
                               "pglockstat", "postgres")
    cmd = sysbench.command((script, "--tables=4", "--table-size=100"), conn,
                           2, 1, progress)
    out = subprocess.run([SYSBENCH] + cmd[1:], capture_output=True,
                         text=True, timeout=60, stdin=subprocess.DEVNULL,
                         env={"PATH": "/usr/bin:/bin"})
    text = out.stdout + out.stderr
    assert out.returncode != 0
    assert "FATAL: Connection to database failed" in text
    assert "nosocket/.s.PGSQL.5432" in text
    assert "invalid option" not in text and "unknown option" not in text
