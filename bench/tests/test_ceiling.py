"""Tests of lockstudy.ceiling, the analysis of bench/ceiling.sh: reading
its runs.csv, the utilization against the known hold, the ceiling
predicted at the lowest client count against the tps at the others, the
verdicts at +-5 %, and the report's text.  Every expected number is
worked by hand from the rows written here.
"""

import math
import os
import subprocess

import pytest

from lockstudy import ceiling
from lockstudy.data import InputError

HEADER = "round,clients,tps,acquires,samples,busy,busy_se_max,ceiling_factor\n"


def _write(tmp_path, lines):
    p = tmp_path / "runs.csv"
    p.write_text(HEADER + "".join(line + "\n" for line in lines))
    return str(p)


def _run(rnd, clients, tps, busy, se=0.01):
    return {"round": rnd, "clients": clients, "tps": tps,
            "acquires": tps * 10, "samples": tps, "busy": busy,
            "busy_se_max": se,
            "ceiling_factor": None if busy is None else 1 / busy}


def test_read_runs(tmp_path):
    path = _write(tmp_path, ["1,1,100.0,1000,100,0.2,0.004,5.0",
                             "1,8,480.5,,,,,"])
    runs = ceiling.read_runs(path)
    assert runs[0] == {"round": 1, "clients": 1, "tps": 100.0,
                       "acquires": 1000, "samples": 100, "busy": 0.2,
                       "busy_se_max": 0.004, "ceiling_factor": 5.0}
    # a run without a timed hold (no row in the view): every field empty
    assert runs[1]["busy"] is None and runs[1]["acquires"] is None
    assert runs[1]["tps"] == 480.5


@pytest.mark.parametrize("line, message", [
    ("1,1,,1000,100,0.2,0.004,5.0", "line 2: tps ''"),
    ("1,1,100,1000,100,x,0.004,5.0", "line 2: busy 'x'"),
    ("1,,100,1000,100,0.2,0.004,5.0", "line 2: clients ''"),
])
def test_read_runs_bad_field(tmp_path, line, message):
    with pytest.raises(InputError, match=message):
        ceiling.read_runs(_write(tmp_path, [line]))


def test_read_runs_missing_column_and_empty(tmp_path):
    p = tmp_path / "runs.csv"
    p.write_text("round,clients,tps\n1,1,100\n")
    with pytest.raises(InputError, match="acquires"):
        ceiling.read_runs(str(p))
    with pytest.raises(InputError, match="no runs"):
        ceiling.read_runs(_write(tmp_path, []))


def test_utilization_ratio_and_error():
    # X h = 100 tps x 2000 us = 0.2; busy 0.19 is 0.95 of it, 0.01 off
    run = _run(1, 1, 100.0, 0.19, se=0.006)
    assert ceiling.utilization_ratio(run, 2000) == pytest.approx(0.95)
    assert ceiling.within_error(run, 2000) is True		# 0.01 <= 0.012
    run["busy_se_max"] = 0.004
    assert ceiling.within_error(run, 2000) is False		# 0.01 > 0.008
    none = _run(1, 1, 100.0, None)
    assert ceiling.utilization_ratio(none, 2000) is None
    assert ceiling.within_error(none, 2000) is None
    assert ceiling.utilization_ratio(_run(1, 1, 0.0, 0.1), 2000) is None


def test_ceiling_ratios():
    rounds = ceiling.by_round([
        _run(1, 1, 100.0, 0.2), _run(1, 8, 480.0, 0.97),	# 480 / 500
        _run(2, 1, 90.0, 0.18), _run(2, 8, 475.0, 0.96),	# 475 / 500
        _run(3, 8, 470.0, 0.95),			# no 1-client run
        _run(4, 1, 100.0, None), _run(4, 8, 470.0, 0.95),  # no sample
        _run(5, 1, 0.0, 0.1), _run(5, 8, 470.0, 0.95),	# no tps at 1
    ])
    assert ceiling.ceiling_ratios(rounds, 1, 8) == pytest.approx(
        [0.96, 0.95])
    # at the count of the prediction itself the ratio is its busy
    assert ceiling.ceiling_ratios(rounds, 1, 1) == pytest.approx([0.2, 0.18])


def test_interval_verdicts():
    # six rounds: the signed-rank interval reaches 95 % (coverage 0.969)
    near = [0.99, 1.0, 1.01, 0.995, 1.005, 1.0]
    est, lo, hi, v = ceiling.interval(near, 0.95)
    assert lo <= est <= hi and 0.95 < lo and hi < 1.05
    assert v == "equivalent (±5%)"
    assert ceiling._said(v, "it holds") == "it holds within 5 %"
    low = [0.70, 0.72, 0.71, 0.69, 0.73, 0.70]
    v = ceiling.interval(low, 0.95)[3]
    assert v == "slower"
    assert ceiling._said(v, "x") == "below, by more than 5 %"
    # the Walsh averages of (log 0.9, log 1.1): the interval spans both
    est, lo, hi, v = ceiling.interval([0.9, 1.1], 0.95)
    assert (lo, hi) == pytest.approx((0.9, 1.1))
    assert est == pytest.approx(math.sqrt(0.99))
    assert v == "not resolved"		# two rounds cannot reach 95 %
    assert ceiling._said(v, "x") == "not resolved at ±5 %"


def test_report():
    runs = []
    for r in range(1, 7):
        runs.append(_run(r, 1, 100.0, 0.2, se=0.001))		# X h = 0.2
        runs.append(_run(r, 8, 490.0 + r, 0.98, se=0.0005))
    text = ceiling.report(runs, 2000, 0.95)
    lines = text.splitlines()
    assert lines[0].split("|")[-1].strip() == "tps / predicted ceiling"
    # 1 client: busy / (X h) = 1; prediction 100 / 0.2 = 500 tps
    assert [c.strip() for c in lines[2].split("|")] == [
        "1", "6", "100.0", "0.200", "1.000", "6 of 6", "0.200"]
    # 8 clients: tps 491..496, median 493.5; busy / (X h) = 0.98 /
    # (tps x 0.002): 0.98 / 0.987 = 0.993 at the median; 493.5 / 500
    assert [c.strip() for c in lines[3].split("|")] == [
        "8", "6", "493.5", "0.980", "0.993", "0 of 6", "0.987"]
    assert "the lock cannot pass 500.0 tps (1 / h)" in text
    # a saturated run at 0 tps is in the table, and left out of the
    # interval (it has no log ratio) instead of failing the report
    stalled = runs + [_run(7, 1, 100.0, 0.2), _run(7, 8, 0.0, None)]
    assert "over 6 rounds: throughput saturates" in \
        ceiling.report(stalled, 2000, 0.95)
    assert ("utilization at 1 client: busy / (X h) 1.000 [1.000, 1.000] "
            "over 6 rounds: the reported utilization is X h within 5 %"
            in text)
    assert ("ceiling: tps at 8 clients over the ceiling predicted at 1: "
            "0.987 [0.982, 0.992] over 6 rounds: throughput saturates at "
            "the predicted ceiling within 5 %" in text)


@pytest.mark.parametrize("env, message", [
    ({"HOLD_US": "0"}, "HOLD_US must be at least 1"),
    ({"HOLD_US": "2000000"}, "HOLD_US must be at most 1000000"),
    ({"ROUNDS": "x"}, 'ROUNDS must be a whole number, not "x"'),
    ({"RUN_SECONDS": "0"}, "RUN_SECONDS must be at least 1"),
    ({"THINK_MS": "-1"}, 'THINK_MS must be a whole number, not "-1"'),
    ({"CLIENTS": "1 0"}, 'CLIENTS must be positive whole numbers, not "0"'),
    ({"DELAY_US": "1001"}, "DELAY_US must be at most 1000"),
    ({"DELAY_US": "0.5"}, 'DELAY_US must be a whole number, not "0.5"'),
    ({"DELAY_MODE": "after"}, 'DELAY_MODE must be inside or before, not "after"'),
    ({"PG_CONFIG": "/nonexistent/pg_config"},
     'cannot run "/nonexistent/pg_config --bindir"'),
])
def test_ceiling_sh_refuses(env, message):
    """bench/ceiling.sh refuses a bad parameter with a message, before
    anything starts."""
    script = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "ceiling.sh")
    full = dict(os.environ, PG_CONFIG="/nonexistent/pg_config")
    full.update(env)
    p = subprocess.run([script], env=full, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 1
    assert p.stderr.startswith("ceiling: error: " + message)
