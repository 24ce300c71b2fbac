"""Tests of lockstudy.model: what a study found, as one typed model.

A StudyResult survives its round trip through results.json: the same
objects, non-finite floats included; rendering the loaded model gives the
report the analysis gave (the kept eviction study, and the tps side of
every golden case, among them the shipped example studies); another
schema version is refused.  No server.
"""

import dataclasses
import json
import math
import os
import shutil

import pytest

from lockstudy import data, model, report, results

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
TOP = os.path.dirname(os.path.dirname(os.path.dirname(GOLDEN)))
EVICTION = os.path.join(GOLDEN, "locks-eviction")
with open(os.path.join(GOLDEN, "cases.json")) as _f:
    CASES = json.load(_f)


def _eviction(tmp_path) -> str:
    d = str(tmp_path)
    for name in ("runs.csv", "locks.csv", "spins.csv"):
        shutil.copy(os.path.join(EVICTION, name), d)
    with open(os.path.join(d, "machine.txt"), "w") as f:
        f.write("cpus: 2\n")
    return d


def test_round_trip_of_a_study(tmp_path):
    d = _eviction(tmp_path)
    text = results.report_text(d, None, 2.0)
    saved = model.load(os.path.join(d, results.RESULTS))
    # nan is not equal to itself: compared through their JSON
    assert model.to_json(saved) == \
        model.to_json(results.analyse(d, None, 2.0))
    assert saved.schema == model.SCHEMA_VERSION
    assert saved.meta.machine == ("cpus: 2",)
    assert saved.mechanism is not None and saved.mechanism.points
    assert results.render(saved) == text


def test_every_dataclass_is_frozen():
    p = model.DriftCell("a", 1, 1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.drift = 2.0


def test_non_finite_floats(tmp_path):
    row = model.MechanismRow("b", 1, "lwlock", "x", "blocks", 2, 0.0, 1.0,
                             math.inf, math.nan, -math.inf, 0.5, 0.5, 1.0,
                             "")
    meta = model.StudyMeta()
    tps = report.tps_result(
        [data.Run("a", 1, 1, 5.0), data.Run("b", 1, 1, 6.0)], None, 2.0)
    m = model.MechanismResult(("a", "b"), (), 0.95, False,
                              (model.MechanismPoint("b", 1, (1,), (row,)),))
    r = model.StudyResult(meta, (), tps, m, ())
    text = model.to_json(r)
    assert '"inf"' in text and '"nan"' in text and '"-inf"' in text
    back = model.from_json(text).mechanism.points[0].rows[0]
    assert back.ratio == math.inf and back.ci_high == -math.inf
    assert math.isnan(back.ci_low)
    assert math.isnan(model.from_json(text).tps.points[0].ratio_noise)


def test_another_schema_is_refused():
    with pytest.raises(model.SchemaError, match="schema 99"):
        model.from_json('{"schema": 99}')


@pytest.mark.filterwarnings("ignore:divide by zero encountered in log")
@pytest.mark.parametrize("name", sorted(CASES))
def test_tps_side_of_the_golden_cases(name):
    """The shipped examples (example*, williams, part16) and the synthetic
    cases: the text rendered from the model after its round trip is the
    golden text."""
    case = CASES[name]
    runs = data.read_runs(os.path.join(TOP, case["input"]))
    r = report.tps_result(runs, case.get("variants"),
                          case.get("threshold", 2.0),
                          case.get("confidence", 0.95),
                          case.get("correction", "bonferroni"))
    result = model.StudyResult(model.StudyMeta(), tuple(runs), r, None, ())
    back = model.from_json(model.to_json(result))
    assert back.runs == tuple(runs)
    with open(os.path.join(GOLDEN, name, "stdout.txt")) as f:
        assert report.tps_text(back.tps) == f.read()


def test_report_command_renders_the_saved_study(tmp_path, capsys):
    """python3 -m lockstudy report DIR: the report of the study's files,
    as rendered from the results.json it writes."""
    from lockstudy import __main__ as cli
    d = _eviction(tmp_path)
    assert cli.main(["report", d]) == 0
    printed = capsys.readouterr().out
    assert printed == results.render(model.load(os.path.join(
        d, results.RESULTS)))
    assert printed == results.report_text(d, None, 2.0)
