"""Tests of lockstudy.runner, the parts that need no server (the study's
lock, directory and records are test_records.py's, hms() test_plan.py's;
SHARED_START=1 is test_runner_shared.py's, a variant of the unpatched
server test_runner_unpatched.py's, a sysbench workload
test_runner_sysbench.py's).

cluster.clean_environment() drops what run-study.sh's loop dropped.
draw_plan() (the plan kept as one object) and run_rounds() (the progress
of a Progress) on a fake server (FakeRun): the warm-up round runs every
variant at every client count in round 1's orders before round 1, is
counted in the plan's server starts and estimate, is marked in
commands.txt and the progress lines, and leaves nothing in the records;
WARMUP_ROUND=0 leaves it out.  finish() writes the CSVs and hands the
directory to the presentation it was given; a workload's setup
statements run once, after pgbench -i.  No server.  FakeRun, _study()
and the helpers of the plan and the rounds serve the other
test_runner_*.py modules too; the fixture fake_cluster (conftest.py)
stands in for the checks of lockstudy.cluster that need a server.
"""

import dataclasses
import io
import os
import re
import subprocess

import pytest

from lockstudy import builds, design, plan, runner, spec


def _lines(path):
    with open(path, newline="") as f:
        return f.read().split("\n")


# --- clean_environment -------------------------------------------------------

@pytest.fixture
def saved_environ():
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def test_clean_environment_as_the_bash_loop(saved_environ):
    given = {"PATH": "/usr/bin:/bin", "HOME": "/home/x",
             "PG_CONFIG": "/pg/bin/pg_config", "PGUSER": "u",
             "PGOPTIONS": "-c work_mem=1MB", "PGSERVICE": "s",
             "PGHOST": "/sock", "PGPORT": "1", "PGDATABASE": "d",
             "PG_MAJOR": "18", "PG_COLOR": "always", "PG": "bare",
             "MYPG": "kept", "XPGUSER": "kept", "pguser": "kept"}
    bash = subprocess.run(
        ["bash", "-c", 'for v in $(compgen -e | grep \'^PG\' || true); do '
         '[ "$v" = PG_CONFIG ] || unset "$v"; done; '
         'export PATH="/pg/bin:$PATH"; env -0'],
        env=given, capture_output=True, text=True, check=True).stdout
    expected = dict(kv.split("=", 1) for kv in bash.split("\0") if kv)
    expected = {k: v for k, v in expected.items() if k in given}
    os.environ.clear()
    os.environ.update(given)
    runner.cluster.clean_environment("/pg/bin")
    assert dict(os.environ) == expected
    assert sorted(expected) == ["HOME", "MYPG", "PATH", "PG_CONFIG",
                                "XPGUSER", "pguser"]
    assert expected["PATH"] == "/pg/bin:/usr/bin:/bin"


# --- the plan and the rounds, the warm-up round's included -------------------

def _study(warmup_round, repeat=2, warmup=3, variants_given=None,
           unpatched=()):
    """A study of the variants a and b at 1 and 8 clients, seed 7; those
    of unpatched run the unpatched server."""
    names = ("a", "b")
    return spec.Study(
        pg_config="/pg/bin/pg_config", bindir="/pg/bin", scale=1,
        clients=(1, 8), duration=5, warmup=warmup,
        workload=spec.Workload("select-only", ("-S", "-M", "prepared")),
        threads=None, repeat=repeat, seed=7, threshold="2", run_dir="/r",
        variant_dir="/v",
        variants=tuple(spec.Variant(n, unpatched=n in unpatched)
                       for n in names),
        variants_given=variants_given, warmup_round=warmup_round,
        stock_pg_config="/stock/bin/pg_config" if unpatched else "",
        stock_bindir="/stock/bin" if unpatched else "")


# what the fake pgbench prints: its tps, transactions and one second
PGBENCH_OUTPUT = ("progress: 1.0 s, 99.5 tps, lat 1.000 ms stddev 0.100, "
                  "0 failed\nnumber of transactions actually processed: "
                  "500\ntps = 100.000000 (without initial connection time)"
                  "\n")
# and the fake sysbench: two seconds, then its summary
SYSBENCH_OUTPUT = (
    "[ 1s ] thds: 8 tps: 249.00 qps: 249.00 (r/w/o: 249.00/0.00/0.00) lat "
    "(ms,95%): 0.05 err/s: 0.00 reconn/s: 0.00\n"
    "[ 2s ] thds: 8 tps: 251.00 qps: 251.00 (r/w/o: 251.00/0.00/0.00) lat "
    "(ms,95%): 0.05 err/s: 0.00 reconn/s: 0.00\n"
    "SQL statistics:\n"
    "    transactions:                        500    (250.00 per sec.)\n"
    "    queries:                             500    (250.00 per sec.)\n")


class _Cursor:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Server:
    """The cluster and the connection of a fake run; the binary checks go
    to the list checked."""
    log = "/dev/null"
    sock = "/tmp/pg_lockstat-run.x"
    port = 25000

    def __init__(self, checked=None):
        self.checked = checked

    def check_binary(self, label, bindir):
        self.checked.append((label, bindir))

    def cursor(self):
        return _Cursor()

    def close(self):
        pass


class FakeRun(runner.StudyRun):
    """A StudyRun without a server: the starts, stops, queries, pgbench
    (or sysbench) runs and recordings it would make are listed in events,
    in order, and pgbench prints PGBENCH_OUTPUT, sysbench
    SYSBENCH_OUTPUT."""

    def __init__(self, study, rundir):
        b = builds.Build("/pg/bin", "k", "the base server")
        stock = builds.Build("/stock/bin", "ks", builds.STOCK_DESCRIPTION)
        super().__init__(study, "/top", [stock if v.unpatched else b
                                         for v in study.variants],
                         io.StringIO())
        self.rundir = rundir
        # the binary checks after each start: (label, bindir)
        self.checked = []
        self.cluster = _Server(self.checked)
        self.events = []

    def start(self, label, i=None):
        self.events.append(("start", label, None if i is None else
                            self.builds[i].bindir))
        self.conn = _Server()

    def stop(self):
        self.events.append(("stop",))
        self.conn = None

    def reload(self, label, i):
        self.events.append(("reload", label))
        self.conn = _Server()

    def sql(self, what, query, params=()):
        self.events.append(("sql", what))
        return []

    def benchmark(self, what, cmd, out):
        self.events.append(("pgbench", what, os.path.basename(out),
                            " ".join(cmd)))
        return SYSBENCH_OUTPUT if cmd[0] == "sysbench" else PGBENCH_OUTPUT

    def record(self, point, key):
        self.events.append(("record", key))

def _planned(warmup_round, tmp_path, study=None, **kw):
    s = FakeRun(study or _study(warmup_round, **kw), str(tmp_path))
    s.draw_plan()
    return s, s.out.getvalue().split("\n")


def test_plan_with_the_warm_up_round(tmp_path):
    s, lines = _planned(True, tmp_path)
    order, _ = design.variant_order(7, 2, ["a", "b"])
    clients = design.client_order(7, 2, [1, 8])
    # 3 rounds of 2 variants: each start 3 s + its 3 s warm-up, each of
    # the 2 runs 5 s + 1 s
    total = 3 * 2 * (3 + 3 + 2 * (5 + 1))
    assert s.plan.total == total
    assert lines[1] == (
        "plan: 2 rounds x 2 variants x 2 client counts (1 8) = 8 runs of "
        "5s, after a warm-up round of 4 runs that are not recorded; 6 "
        "server starts, each followed by a 3s warm-up run at 8 clients "
        "that is not recorded; baseline a; variant order seeded by SEED=7; "
        "estimated %s" % plan.hms(total))
    # the warm-up round in round 1's orders, then the rounds as before
    assert lines[2:] == [
        "warm-up round: %s; clients %s; not recorded"
        % (" ".join(order[0]), " ".join(map(str, clients[0]))),
        "round 1: %s; clients %s" % (" ".join(order[0]),
                                     " ".join(map(str, clients[0]))),
        "round 2: %s; clients %s" % (" ".join(order[1]),
                                     " ".join(map(str, clients[1]))),
        "", ""]
    assert (s.plan.rounds, s.plan.round_clients) == (order, clients)
    assert (s.plan.warmup_order, s.plan.warmup_clients) == \
        (order[0], clients[0])


def test_plan_without_the_warm_up_round(tmp_path):
    s, lines = _planned(False, tmp_path)
    total = 2 * 2 * (3 + 3 + 2 * (5 + 1))
    assert s.plan.total == total
    assert lines[1] == (
        "plan: 2 rounds x 2 variants x 2 client counts (1 8) = 8 runs of "
        "5s, no warm-up round (WARMUP_ROUND=0); 4 server starts, each "
        "followed by a 3s warm-up run at 8 clients that is not recorded; "
        "baseline a; variant order seeded by SEED=7; estimated %s"
        % plan.hms(total))
    assert [line.split(":")[0] for line in lines[2:]] == [
        "round 1", "round 2", "", ""]
    assert (s.plan.warmup_order, s.plan.warmup_clients) == ([], [])


def test_plan_lists_the_builds_before_the_warm_up_round(tmp_path):
    _, lines = _planned(True, tmp_path, variants_given="a; b")
    assert [line.split(":")[0] for line in lines[2:]] == [
        "build 1", "variant a", "variant b", "warm-up round", "round 1",
        "round 2", "", ""]


def _rounds(warmup_round, tmp_path, **kw):
    s, _ = _planned(warmup_round, tmp_path, **kw)
    s.run_rounds()
    return s


def test_warm_up_round_runs_like_round_1_and_records_nothing(
        tmp_path, fake_cluster, capsys):
    s = _rounds(True, tmp_path)
    first = [(name, c) for name in s.plan.rounds[0]
             for c in s.plan.round_clients[0]]
    # the measured pgbench runs, by their log: round 0 is the warm-up round
    runs = [e[2] for e in s.events
            if e[0] == "pgbench" and "-P 1" in e[3]]
    assert runs == (
        ["pgbench-%s-%d-0.log" % p for p in first] +
        ["pgbench-%s-%d-1.log" % p for p in first] +
        ["pgbench-%s-%d-2.log" % (name, c) for name in s.plan.rounds[1]
         for c in s.plan.round_clients[1]])
    # a server start per variant and round, the warm-up round's included,
    # each followed by its warm-up run
    starts = [i for i, e in enumerate(s.events) if e[0] == "start"]
    assert len(starts) == 3 * 2
    assert [s.events[i + 1][1] for i in starts[:2]] == [
        "pgbench (variant %s, warm-up, warm-up round)" % name
        for name in s.plan.rounds[0]]
    assert s.events[starts[2] + 1][1] == (
        "pgbench (variant %s, warm-up, round 1)" % s.plan.rounds[0][0])
    # the counters are reset before every run; the warm-up round's steps
    # name it
    warm = s.events[:starts[2]]
    assert [e[1] for e in warm if e[0] == "sql"] == [
        "pg_lockstat_reset() (variant %s, %d clients, warm-up round)" % p
        for p in first]
    assert [e[1] for e in warm if e[0] == "pgbench" and "-P 1" in e[3]] == [
        "pgbench (variant %s, %d clients, warm-up round)" % p
        for p in first]
    # nothing of it recorded: the recordings, runs.csv's rows and
    # persec.csv's are those of rounds 1 and 2
    assert not any(e[0] == "record" for e in warm)
    assert sorted(e[1] for e in s.events if e[0] == "record") == sorted(
        (name, c, r) for r in (1, 2) for name in ("a", "b") for c in (1, 8))
    assert sorted(run[:3] for run in s.recorder.runs) == sorted(
        (name, c, r) for r in (1, 2) for name in ("a", "b") for c in (1, 8))
    persec = [line.split(",") for line in
              _lines(str(tmp_path / "persec.csv")) if line]
    assert sorted(row[:3] for row in persec) == sorted(
        [name, str(c), str(r)] for r in (1, 2) for name in ("a", "b")
        for c in (1, 8))
    # the estimate counted it: done reaches the total
    assert s.progress.done == s.plan.total
    # progress lines: 4 of the warm-up round, then 4 per round
    progress = [line for line in capsys.readouterr().err.splitlines()
                if "  variant " in line]
    assert [line.split("  variant")[0] for line in progress] == (
        ["lockstudy: warm-up round"] * 4 + ["lockstudy: round 1/2"] * 4 +
        ["lockstudy: round 2/2"] * 4)
    assert re.fullmatch(
        r"lockstudy: warm-up round  variant %s\s+clients\s+%d\s+[\d.]+ s\s+"
        r"100\.0 tps  elapsed \d+m\d\ds, remaining \d+m\d\ds"
        % first[0], progress[0]), progress[0]


def test_warm_up_round_in_commands_txt(tmp_path, fake_cluster):
    s = _rounds(True, tmp_path)
    lines = [line for line in _lines(str(tmp_path / "commands.txt"))
             if line]
    order = " ".join(s.plan.rounds[0])
    clients = " ".join(map(str, s.plan.round_clients[0]))
    assert lines[0] == "# warm-up round: %s; clients %s (not recorded)" % (
        order, clients)
    # then per variant its warm-up run and its runs, all marked
    v, c = s.plan.rounds[0][0], s.plan.round_clients[0][0]
    assert lines[1] == ("[%s] pgbench -n -S -M prepared -c 8 -j %d -T 3 "
                        "postgres (warm-up, warm-up round)"
                        % (v, min(8, s.nproc)))
    assert lines[2] == ("[%s] pgbench -n -S -M prepared -c %d -j %d -T 5 "
                        "-P 1 postgres (warm-up round)"
                        % (v, c, min(c, s.nproc)))
    warm = lines[1:lines.index("# round 1: %s; clients %s" % (order,
                                                              clients))]
    assert len(warm) == 2 * (1 + 2)
    assert all(line.endswith(" (warm-up round)") or
               line.endswith(" (warm-up, warm-up round)") for line in warm)
    # the rounds' lines are as without it
    assert not any("warm-up round" in line
                   for line in lines[1 + len(warm):])


def test_without_the_warm_up_round(tmp_path, fake_cluster, capsys):
    s = _rounds(False, tmp_path)
    assert len([e for e in s.events if e[0] == "start"]) == 2 * 2
    assert not any("warm-up round" in e[1] for e in s.events
                   if e[0] in ("sql", "pgbench"))
    assert s.progress.done == s.plan.total
    lines = _lines(str(tmp_path / "commands.txt"))
    assert lines[0].startswith("# round 1: ")
    assert not any("warm-up round" in line for line in lines)
    assert "warm-up round" not in capsys.readouterr().err


def test_settings_txt_from_round_1_only(tmp_path, fake_cluster):
    """settings.txt has each variant's settings once, with or without a
    warm-up round before."""
    for warm, sub in ((True, "w"), (False, "n")):
        d = tmp_path / sub
        d.mkdir()
        s = _rounds(warm, d)
        assert _lines(str(d / "settings.txt")) == [
            "-- variant " + s.plan.rounds[0][0], "work_mem|4096|kB|default",
            "-- variant " + s.plan.rounds[0][1], "work_mem|4096|kB|default",
            ""]


def test_no_warm_up_runs_at_warmup_0(tmp_path, fake_cluster):
    """WARMUP=0: the warm-up round still runs every client count, without
    the warm-up run after each start."""
    s = _rounds(True, tmp_path, warmup=0)
    assert not any(e[0] == "pgbench" and "-P 1" not in e[3]
                   for e in s.events)
    assert len([e for e in s.events if e[0] == "pgbench"]) == 3 * 2 * 2


# --- finish() and the workload's setup --------------------------------------

def test_finish_records_then_hands_the_directory_over(tmp_path):
    """finish() writes the CSVs through the recorder and hands the study's
    directory to the presentation it was given; it prints nothing."""
    s = FakeRun(_study(False), str(tmp_path))
    shown = []
    s.present = lambda rundir: shown.append(
        (rundir, os.path.exists(os.path.join(rundir, "runs.csv"))))
    s.finish()
    assert shown == [(str(tmp_path), True)]
    assert s.out.getvalue() == ""


def test_workload_setup_after_pgbench_init(tmp_path, monkeypatch):
    """The statements of a workload's "-- setup:" lines run once, on the
    base server after pgbench -i, each named in its step and recorded in
    commands.txt."""
    study = dataclasses.replace(_study(True), workload=spec.Workload(
        "mine", ("-f", "/top/bench/workloads/mine.sql"),
        setup=("CREATE EXTENSION lockstat_test", "SELECT 1")))
    s = FakeRun(study, str(tmp_path))
    monkeypatch.setattr(s.recorder, "headers", lambda cur, views: None)
    s.setup()
    assert s.events == [
        ("start", "setup", None),
        ("sql", "CREATE EXTENSION pg_lockstat"),
        ("pgbench", "pgbench -i", "pgbench-init.log",
         "pgbench -i -q -s 1 postgres"),
        ("sql", "the workload's setup: CREATE EXTENSION lockstat_test"),
        ("sql", "the workload's setup: SELECT 1"),
        ("stop",)]
    assert _lines(str(tmp_path / "commands.txt")) == [
        "CREATE EXTENSION lockstat_test", "SELECT 1", ""]
