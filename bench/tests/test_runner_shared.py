"""Tests of lockstudy.runner with SHARED_START=1, on the fake server of
test_runner.py (FakeRun): the plan's groups, starts, estimate and round
orders, and without SHARED_START the same variants planned as before;
the variants of a group run in one start, the next after a reload with
the checks of its settings and none of the other's left, without a
warm-up run, at the positions of the round's order.  No server.
"""

import dataclasses
import re

from lockstudy import design, plan, spec, starts
from test_runner import FakeRun, _lines, _study


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


def _check_start_spans(s):
    """Each server start to its stop: the variants of one group, the
    second after a reload, the warm-up run after the start only.  Returns
    the groups in the order they ran (warm-up round first)."""
    spans, cur = [], None
    for e in s.events:
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
    return flat


def test_shared_start_rounds(tmp_path, fake_cluster):
    s, _ = _shared(True, tmp_path)
    s.run_rounds()
    ev = s.events
    assert len([e for e in ev if e[0] == "start"]) == 3 * 2
    assert len([e for e in ev if e[0] == "reload"]) == 3
    flat = _check_start_spans(s)
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
