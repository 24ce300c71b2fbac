"""The package against fixed files: the tps report's text, points.csv and
plot data of fixed runs, and the old bench/study_stats.py's round and
client orders for the same seed and its error messages.

How the golden files under golden/ were made, by /usr/bin/python3 (numpy
1.24.2, scipy 1.10.1):
  - golden/<case>/ for each case of golden/cases.json: by this package
    when issue 33 changed the method (the Hodges-Lehmann ratio and its
    signed-rank interval, the collapse test on round-adjusted runs, the
    drift and position ranges), from report.tps_report of the case's
    input and options: stdout.txt its text, then write_points and
    write_dat.  They pin the text against unintended change; that its
    numbers are right is test_stats.py's, test_collapse.py's and
    test_report.py's part, which compute them independently.  (The
    files before were the old code's, commit 4e541ba, and the package
    reproduced them byte for byte up to 70c6d42.)
  - orders.json: the stdout and stderr of the old code (commit 4e541ba,
    git show 4e541ba:bench/study_stats.py > /tmp/old_study_stats.py)
        old_study_stats.py order --noun variant SEED ROUNDS NAME ...
        old_study_stats.py clients SEED ROUNDS CLIENTS ...
  - errors.json: the stderr (exit status 1) of old_study_stats.py
    --noun variant [options] runs.csv, run in a directory holding the
    case's runs.csv (or, for content null, none); the message naming
    --strategies now names --variants.
The inputs of the cases example*, williams and part16 are the kept studies
of bench/results/.  golden/inputs/mixed-runs.csv and solo-runs.csv are
synthetic (numpy.random.default_rng(20261203)), made to reach what those
do not: collapse in a variant and in the baseline (the collapse table),
a baseline run at 0 tps, points of 4 rounds beside points of 9 (min-max
intervals), a point without a baseline ("no pairs"), a listed variant
without runs, and a study of one variant with the new column name and no
position column.
  - Issue 52 regenerated golden/<case>/ once, by the same calls, when the
    verdicts became faster / slower / equivalent (±T) / not resolved and
    "rounds needed" gave way to the noise, what the rounds resolve and
    the rounds for ±T; test_numbers_agree_with_the_goldens_before_52
    checks every number against the files before (git, a31a8ab).
  - Issue 52 point 6 regenerated the stdout.txt files once, by the same
    calls, when the position table came to centre each ratio on its
    client count's; test_only_the_position_table_moved checks that
    nothing else moved (git, a0bf98e).
"""

import csv
import io
import json
import os
import re
import subprocess

import pytest

from lockstudy import data, design, report

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
TOP = os.path.dirname(os.path.dirname(os.path.dirname(GOLDEN)))


def _load(name):
    with open(os.path.join(GOLDEN, name)) as f:
        return json.load(f)


CASES = _load("cases.json")
ORDERS = _load("orders.json")
ERRORS = _load("errors.json")


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


# the old code warns the same, on stderr, where a variant ran at 0 tps in
# a round: the log of that ratio is -inf
@pytest.mark.filterwarnings("ignore:divide by zero encountered in log")
@pytest.mark.parametrize("name", sorted(CASES))
def test_tps_report(name, tmp_path):
    case = CASES[name]
    golden = os.path.join(GOLDEN, name)
    runs = data.read_runs(os.path.join(TOP, case["input"]))
    r = report.tps_report(runs, case.get("variants"),
                          case.get("threshold", 2.0),
                          case.get("confidence", 0.95),
                          case.get("correction", "bonferroni"))
    assert r.text == _read(os.path.join(golden, "stdout.txt"))
    report.write_points(r.points, str(tmp_path / "points.csv"))
    report.write_dat(r.points, r.variants, str(tmp_path))
    written = sorted(os.listdir(tmp_path))
    assert written == sorted(set(os.listdir(golden)) - {"stdout.txt"})
    for f in written:
        assert _read(str(tmp_path / f)) == _read(os.path.join(golden, f)), f


def _lines(rows) -> str:
    return "".join(" ".join(str(x) for x in row) + "\n" for row in rows)


@pytest.mark.parametrize("case", ORDERS["order"],
                         ids=lambda c: "%d-%d-%d" % (c["seed"], c["rounds"],
                                                     len(c["names"])))
def test_variant_order(case):
    rows, warning = design.variant_order(case["seed"], case["rounds"],
                                         case["names"])
    assert _lines(rows) == case["stdout"]
    assert ("" if warning is None else
            "study_stats: warning: " + warning + "\n") == case["stderr"]


@pytest.mark.parametrize("case", ORDERS["clients"],
                         ids=lambda c: "%d-%d" % (c["seed"], c["rounds"]))
def test_client_order(case):
    assert case["stderr"] == ""
    assert _lines(design.client_order(case["seed"], case["rounds"],
                                      case["clients"])) == case["stdout"]


def test_some_orders_warn():
    # the golden orders include rounds that are, and are not, a whole
    # number of periods
    assert {c["stderr"] == "" for c in ORDERS["order"]} == {True, False}


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c["stderr"][20:60])
def test_errors(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if case["content"] is not None:
        (tmp_path / "runs.csv").write_text(case["content"])
    args = case["args"]
    with pytest.raises(data.InputError) as e:
        report.tps_report(data.read_runs("runs.csv"), args.get("variants"),
                          args.get("threshold", 2.0),
                          args.get("confidence", 0.95))
    # the changes: the old tps form's option --strategies is --variants
    # now, as it was in the old mechanism form, and a run belongs to a
    # variant
    want = case["stderr"].replace("has strategies not in --strategies",
                                  "has variants not in --variants")
    want = want.replace("two runs for strategy", "two runs for variant")
    assert "study_stats: error: %s\n" % e.value == want


# the commit whose golden files are the last before issue 52's verdicts
BEFORE_52 = "a31a8ab"
# the verdicts that issue 52 left as they were
KEPT = ("baseline", "faster", "slower", "bimodal", "no pairs")


def _old_golden(commit: str, name: str, file: str):
    """A case's golden file as it was at commit, from git; None outside a
    git checkout with that commit."""
    try:
        return subprocess.run(
            ["git", "-c", "safe.directory=*", "-C", TOP, "show",
             "%s:bench/tests/golden/%s/%s" % (commit, name, file)],
            check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def _old_points(name: str, commit: str = BEFORE_52):
    """The rows of a case's points.csv at commit, from git; None outside
    a git checkout with that commit."""
    text = _old_golden(commit, name, "points.csv")
    return None if text is None else list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_numbers_agree_with_the_goldens_before_52(name):
    """Issue 52 changed the verdict words and the columns after them, not
    the numbers: every column of the old points.csv but rounds_needed is
    the same; a verdict other than "no difference" stays; "no difference"
    became "not resolved", or "equivalent (±T)" where the interval lies
    inside the threshold."""
    old = _old_points(name)
    if old is None:
        pytest.skip("not a git checkout with commit %s" % BEFORE_52)
    with open(os.path.join(GOLDEN, name, "points.csv")) as f:
        new = list(csv.DictReader(f))
    threshold = CASES[name].get("threshold", 2.0) / 100
    assert len(new) == len(old)
    for o, n in zip(old, new):
        for k in o:
            # fisher_p became one-sided later: the test below
            if k not in ("rounds_needed", "verdict", "fisher_p"):
                assert n[k] == o[k], (name, k)
        if o["verdict"].split(",")[0] in KEPT:
            assert n["verdict"] == o["verdict"]
            continue
        assert o["verdict"].startswith("no difference")
        inside = (1 - threshold < float(o["ci_low"])
                  and float(o["ci_high"]) < 1 + threshold)
        equivalent = "equivalent (±%g%%)" % (100 * threshold)
        assert n["verdict"] in (o["verdict"].replace(
            "no difference", "not resolved"), o["verdict"].replace(
            "no difference", equivalent) if inside else None), \
            (name, n["variant"])


# the commit whose golden files are the last before issue 52 points 2
# and 3 (the mean ratio, the one-sided collapse test, the rounds' check)
BEFORE_52_MEAN = "feaa403"


@pytest.mark.parametrize("name", sorted(CASES))
def test_numbers_agree_with_the_goldens_before_52_mean(name):
    """Points 2 and 3 added columns and changed fisher_p to one-sided;
    every old column but fisher_p and verdict is the same.  fisher_p is
    empty where it was; where the variant has the larger share of bad
    runs it is at most the two-sided one it was, else at least 0.5.  A
    verdict stays, but for "withheld: rounds dependent" (a point whose
    rounds fail the check), "not resolved" for an old "equivalent" whose
    mean interval reaches the threshold, and a ratio verdict for an old
    "bimodal" whose one-sided p is not below 0.05."""
    old = _old_points(name, BEFORE_52_MEAN)
    if old is None:
        pytest.skip("not a git checkout with commit %s" % BEFORE_52_MEAN)
    with open(os.path.join(GOLDEN, name, "points.csv")) as f:
        new = list(csv.DictReader(f))
    threshold = CASES[name].get("threshold", 2.0) / 100
    assert len(new) == len(old)
    for o, n in zip(old, new):
        for k in o:
            if k not in ("fisher_p", "verdict"):
                assert n[k] == o[k], (name, k)
        assert (n["fisher_p"] == "") == (o["fisher_p"] == "")
        if o["fisher_p"]:
            base = [b for b in new if b["clients"] == n["clients"]
                    and b["verdict"] == "baseline"][0]
            more = int(n["bad_runs"]) * int(base["n"]) > \
                int(n["base_bad_runs"]) * int(n["n"])
            assert (float(n["fisher_p"]) <= float(o["fisher_p"]) + 1e-6
                    if more else float(n["fisher_p"]) >= 0.5)
        if n["verdict"] == o["verdict"] or n["dependent"] == "t":
            continue
        if o["verdict"].startswith("equivalent"):
            assert n["verdict"].startswith("not resolved")
            assert not (1 - threshold < float(n["mean_low"])
                        and float(n["mean_high"]) < 1 + threshold)
        else:
            assert o["verdict"].startswith("bimodal")
            assert float(n["fisher_p"]) >= 0.05


# the commit whose golden files are the last before the position table
# was centred per client count (issue 52 point 6)
BEFORE_CENTRED = "a0bf98e"


@pytest.mark.parametrize("name", sorted(CASES))
def test_only_the_position_table_moved(name):
    """Every line of stdout.txt is as it was, but the position table's
    heading and its rows' medians; their ranges and counts stay, but in
    mixed-reorder, whose a ran at 0 tps once (at position 3): that ratio
    of 0, which has no log, is left out now, as table (a) leaves it."""
    old = _old_golden(BEFORE_CENTRED, name, "stdout.txt")
    if old is None:
        pytest.skip("not a git checkout with commit %s" % BEFORE_CENTRED)
    new = _read(os.path.join(GOLDEN, name, "stdout.txt"))
    cut = "\nposition: "
    assert new.split(cut)[0] == old.split(cut)[0]
    if cut not in old:
        assert new == old
        return
    strip = re.compile(r"\d\.\d{3} (\[)")
    rows = [[strip.sub(r"\1", x) for x in text.split(cut)[1].splitlines()[1:]]
            for text in (new, old)]
    if name == "mixed-reorder":
        assert rows[1][2].endswith("| [0.897-1.354] (13)")
        rows[1][2] = rows[1][2][:-len("[0.897-1.354] (13)")] \
            + "[0.891-1.363] (12)"
    assert rows[0] == rows[1]
