"""Tests of lockstudy.runner with a variant of the unpatched server, on
the fake server of test_runner.py (FakeRun): it runs its own build,
checked, the same runs, without the counter resets and recordings; the
plan and versions.txt name its build, versions.txt the unpatched
variants.  No server.
"""

import dataclasses

from lockstudy import builds, records, runner, spec
from test_runner import _lines, _planned, _rounds, _study


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
