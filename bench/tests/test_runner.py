"""Tests of lockstudy.runner, the parts that need no server (the study's
lock, directory and records are test_records.py's, hms() test_plan.py's).

cluster.clean_environment() drops what run-study.sh's loop dropped.
draw_plan() (the plan kept as one object) and run_rounds() (the progress
of a Progress) on a fake server (FakeRun): the warm-up round runs every
variant at every client count in round 1's orders before round 1, is
counted in the plan's server starts and estimate, is marked in
commands.txt and the progress lines, and leaves nothing in the records;
WARMUP_ROUND=0 leaves it out.  With SHARED_START=1 the variants of a
group run in one start, the next after a reload with the checks of its
settings and none of the other's left, without a warm-up run, at the
positions of the round's order.  A variant of the unpatched server runs
its own build, checked, the same runs, without the counter resets and
recordings; the plan and versions.txt name its build, versions.txt the
unpatched variants.  A sysbench workload on the fake server: its
prepare, once, then VACUUM ANALYZE; its runs sysbench's, one thread per
client, in sysbench's logs, recorded from sysbench's output as pgbench's
are; a run without a summary, and one that dies, fail naming the step
and the log; versions.txt names sysbench.  finish() writes the CSVs and
hands the directory to the presentation it was given.  No server.
"""

import dataclasses
import io
import os
import re
import subprocess

import pytest

from lockstudy import builds, design, plan, records, runner, spec, starts

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


@pytest.fixture
def fake_cluster(monkeypatch):
    monkeypatch.setattr(runner.cluster, "check_settings",
                        lambda cur, label, v, log: None)
    monkeypatch.setattr(runner.cluster, "settings_in_force",
                        lambda cur: ["work_mem|4096|kB|default"])
    # the settings left from variant.conf after a reload: (label, names)
    resets = []
    monkeypatch.setattr(runner.cluster, "check_reset",
                        lambda cur, label, names, log:
                        resets.append((label, list(names))))
    return resets


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


# --- SHARED_START=1: variants that share a server start ---------------------

def _shared(warmup_round, tmp_path, repeat=2):
    """a and b (pg_lockstat.track = off) share a start; c (shared_buffers)
    needs its own; planned on a fake server whose contexts are given."""
    study = dataclasses.replace(
        _study(warmup_round, repeat=repeat), shared_start=True,
        variants_given="a; b: pg_lockstat.track=off; c: shared_buffers=16MB",
        variants=(spec.Variant("a"),
                  spec.Variant("b", (), (("pg_lockstat.track", "off"),)),
                  spec.Variant("c", (), (("shared_buffers", "16MB"),))))
    s = FakeRun(study, str(tmp_path))
    s.contexts = {"pg_lockstat.track": "superuser",
                  "shared_buffers": "postmaster"}
    s.draw_plan()
    return s, s.out.getvalue().split("\n")


def test_shared_start_plan(tmp_path):
    s, lines = _shared(True, tmp_path)
    assert s.plan.groups == [(0, 1), (2,)]
    # 3 rounds: 2 starts, each 3 s + its 3 s warm-up, one reload of 1 s,
    # 3 variants at 2 client counts of 5 s + 1 s
    total = 3 * (2 * (3 + 3) + 1 + 3 * 2 * (5 + 1))
    assert s.plan.total == total
    assert lines[1] == (
        "plan: 2 rounds x 3 variants x 2 client counts (1 8) = 12 runs of "
        "5s, after a warm-up round of 6 runs that are not recorded; 6 "
        "server starts, each followed by a 3s warm-up run at 8 clients "
        "that is not recorded; baseline a; variant order seeded by SEED=7; "
        "estimated %s" % plan.hms(total))
    assert lines[2] == ("SHARED_START=1: variants a, b share a server start "
                        "per round, each after the first put in force by a "
                        "reload")
    orders, _ = starts.round_orders(7, 2, ["a", "b", "c"],
                                           [(0, 1), (2,)])
    assert s.plan.round_groups == orders
    rounds = [line for line in lines if line.startswith("round ")]
    assert len(rounds) == 2
    for line, groups in zip(rounds, orders):
        assert re.fullmatch(r"round \d: (\[(a b|b a)\] c|c \[(a b|b a)\]); "
                            r"clients (1 8|8 1)", line), line
        assert line.split(";")[0].split(": ")[1] == " ".join(
            "[%s]" % " ".join(g) if len(g) > 1 else g[0] for g in groups)


def test_shared_start_without_it_plans_as_before(tmp_path):
    """The same variants without SHARED_START: a start per variant, in
    design.variant_order()'s order."""
    s, lines = _shared(True, tmp_path)
    study = dataclasses.replace(s.study, shared_start=False)
    plain = FakeRun(study, str(tmp_path))
    plain.contexts = s.contexts
    plain.draw_plan()
    assert plain.plan.groups == [(0,), (1,), (2,)]
    assert plain.plan.rounds == design.variant_order(7, 2, ["a", "b", "c"])[0]
    assert "; 9 server starts" in plain.out.getvalue()
    assert "SHARED_START" not in plain.out.getvalue()


def test_shared_start_rounds(tmp_path, fake_cluster):
    s, _ = _shared(True, tmp_path)
    s.run_rounds()
    ev = s.events
    assert len([e for e in ev if e[0] == "start"]) == 3 * 2
    assert len([e for e in ev if e[0] == "reload"]) == 3
    # each start to its stop: the variants of one group, the second after
    # a reload, the warm-up run after the start only
    spans, cur = [], None
    for e in ev:
        if e[0] == "start":
            cur = [e]
        elif e[0] == "stop":
            spans.append(cur)
            cur = None
        else:
            cur.append(e)
    flat = [g for r in [s.plan.warmup_groups] + s.plan.round_groups for g in r]
    assert len(spans) == len(flat)
    for span, group in zip(spans, flat):
        assert span[0][1:] == ("variant " + group[0], "/pg/bin")
        warmups = [e for e in span if e[0] == "pgbench" and "-P 1" not in
                   e[3]]
        assert [w[1].split(",")[0] for w in warmups] == [
            "pgbench (variant %s" % group[0]]
        # the warm-up run is the start's first
        assert [e for e in span if e[0] == "pgbench"][0] == warmups[0]
        assert [e[1] for e in span if e[0] == "reload"] == [
            "variant " + name for name in group[1:]]
        ran = [e[1].split(",")[0] for e in span
               if e[0] == "pgbench" and "-P 1" in e[3]]
        assert ran == ["pgbench (variant %s" % name for name in group
                       for _ in (1, 8)]
        if len(group) == 2:
            # the reload comes after the first variant's runs
            reload_at = [k for k, e in enumerate(span) if e[0] == "reload"]
            first_runs = [k for k, e in enumerate(span)
                          if e[0] == "pgbench" and "-P 1" in e[3]][:2]
            assert reload_at[0] > max(first_runs)
    # the checks after each reload: the other variant's settings are gone
    assert sorted(fake_cluster) == sorted(
        [("variant a", ["pg_lockstat.track"])] *
        sum(1 for g in flat if g == ["b", "a"]) +
        [("variant b", [])] * sum(1 for g in flat if g == ["a", "b"]))
    # the positions recorded are those of the round's order
    for r, groups in enumerate(s.plan.round_groups, start=1):
        order = [n for g in groups for n in g]
        for run in s.recorder.runs:
            if run[2] == r:
                assert run[3] == order.index(run[0]) + 1
    assert len(s.recorder.runs) == 2 * 3 * 2
    assert s.progress.done == s.plan.total
    # commands.txt: each round's order with the groups, each reload
    lines = _lines(str(tmp_path / "commands.txt"))
    reloads = [line for line in lines if "pg_reload_conf" in line]
    assert len(reloads) == 3
    assert all(re.fullmatch(r"\[a\] SELECT pg_reload_conf\(\) with "
                            r"variant\.conf: empty( \(warm-up round\))?|"
                            r"\[b\] SELECT pg_reload_conf\(\) with "
                            r"variant\.conf: pg_lockstat\.track = 'off'"
                            r"( \(warm-up round\))?", line)
               for line in reloads), reloads
    assert sum(line.endswith("(warm-up round)") for line in reloads) == 1
    assert [line for line in lines if line.startswith("# round 1: ")] == [
        "# round 1: %s; clients %s" % (
            plan.order_text(s.plan.round_groups[0]),
            " ".join(map(str, s.plan.round_clients[0])))]
    # settings.txt: each variant once, from round 1
    assert sorted(line for line in _lines(str(tmp_path / "settings.txt"))
                  if line.startswith("-- ")) == [
        "-- variant a", "-- variant b", "-- variant c"]


# --- a variant of the unpatched server ---------------------------------------

def test_unpatched_variant_runs_without_counters(tmp_path, fake_cluster):
    """b runs the unpatched server: its own binary, checked, and the same
    runs as a, but no counter reset before them and no recording after;
    its tps, transactions and seconds are recorded as a's."""
    s = _rounds(True, tmp_path, unpatched=("b",))
    # each start runs the variant's build, and checks that binary
    starts = [e for e in s.events if e[0] == "start"]
    assert sorted(set(starts)) == [("start", "variant a", "/pg/bin"),
                                   ("start", "variant b", "/stock/bin")]
    assert len(starts) == 3 * 2
    assert s.checked == [(e[1], e[2]) for e in starts]
    # the runs of both, the warm-up round's included
    runs = sorted(e[2] for e in s.events
                  if e[0] == "pgbench" and "-P 1" in e[3])
    assert runs == sorted("pgbench-%s-%d-%d.log" % (v, c, r)
                          for v in "ab" for c in (1, 8) for r in (0, 1, 2))
    # the resets and recordings of a only
    assert sorted(e[1] for e in s.events if e[0] == "sql") == sorted(
        "pg_lockstat_reset() (variant a, %d clients, %s)"
        % (c, runner.round_name(r)) for c in (1, 8) for r in (0, 1, 2))
    assert sorted(e[1] for e in s.events if e[0] == "record") == sorted(
        ("a", c, r) for c in (1, 8) for r in (1, 2))
    # runs.csv and persec.csv have both
    assert sorted(run[:3] for run in s.recorder.runs) == sorted(
        (v, c, r) for v in "ab" for c in (1, 8) for r in (1, 2))
    assert {run[6] for run in s.recorder.runs} == {500}
    persec = [line.split(",")[:3] for line in
              _lines(str(tmp_path / "persec.csv")) if line]
    assert sorted(persec) == sorted([v, str(c), str(r)] for v in "ab"
                                    for c in (1, 8) for r in (1, 2))
    assert s.progress.done == s.plan.total


def test_unpatched_baseline(tmp_path, fake_cluster):
    s = _rounds(False, tmp_path, unpatched=("a",))
    assert all("variant b" in e[1] for e in s.events if e[0] == "sql")
    assert {e[1][0] for e in s.events if e[0] == "record"} == {"b"}
    assert len(s.recorder.runs) == 2 * 2 * 2


def test_unpatched_variant_in_the_plan(tmp_path):
    study = _study(True, variants_given="a; b: unpatched", unpatched=("b",))
    study = dataclasses.replace(study, variants=(
        study.variants[0], spec.Variant(
            "b", (), (("shared_preload_libraries", ""),), None, True)))
    _, lines = _planned(True, tmp_path, study=study)
    assert lines[2:5] == [
        "build 1: the base server: /pg (build key k)",
        "build 2: the unpatched server (STOCK_PG_CONFIG): /stock (build key "
        "ks)",
        "variant a: build 1"]
    assert lines[5] == ("variant b: build 2, settings "
                        "shared_preload_libraries = ''")


def test_versions_txt_names_the_unpatched_variants(monkeypatch):
    monkeypatch.setattr(records.builds, "server_major", lambda b: "18")
    monkeypatch.setattr(records.builds, "series", lambda top, major: [])
    monkeypatch.setattr(records, "_output", lambda cmd: "out")
    b = builds.Build("/pg/bin", "k", "the base server (PG_CONFIG)")
    stock = builds.Build("/stock/bin", "ks", builds.STOCK_DESCRIPTION)
    study = _study(True, unpatched=("a", "b"))
    lines = records.versions_lines(study, "/top", [stock, stock])
    assert lines[-3:] == [
        "variant a: /stock, build ks, the unpatched server "
        "(STOCK_PG_CONFIG)",
        "variant b: /stock, build ks, the unpatched server "
        "(STOCK_PG_CONFIG)",
        "unpatched variants: a b"]
    lines = records.versions_lines(_study(True), "/top", [b, b])
    assert lines[-1] == "variant b: /pg, build k, the base server " \
        "(PG_CONFIG)"
    assert not any(line.startswith("unpatched") for line in lines)


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
