"""Tests of lockstudy.sensitivity: table (s) on synthetic studies whose
slopes, extrapolation and ceiling are worked out by hand (in the
comments) or by an independent least-squares fit, and on the kept study
doc/study.md quotes; the report of a saved study keeps its baseline.
"""

import csv
import math
import os
import random

import numpy
import pytest
from scipy import stats as scipy_stats

from lockstudy import delayvariants as dv, model, results, sensitivity as sn
from lockstudy.data import InputError, read_runs

def test_delays_in_force():
    lines = ["-- variant none", "pg_lockstat.delay_tranche|||default",
             "pg_lockstat.delay_us|0||default", "work_mem|4096|kB|x",
             "-- variant w-in", "pg_lockstat.delay_mode|inside||x",
             "pg_lockstat.delay_tranche|WALWrite||x",
             "pg_lockstat.delay_us|0.5||x",
             "-- variant w-ctl", "pg_lockstat.delay_mode|before||x",
             "pg_lockstat.delay_tranche|WALWrite||x",
             "pg_lockstat.delay_us|0.5||x",
             "-- variant zero", "pg_lockstat.delay_tranche|WALWrite||x",
             "-- server-settings of the workload x (in postgresql.conf)",
             "pg_lockstat.delay_us|3||x"]
    assert sn.delays_in_force(lines) == {
        "w-in": ("WALWrite", 0.5, "inside"),
        "w-ctl": ("WALWrite", 0.5, "before")}


# --- table (s) on synthetic studies -------------------------------------------

DELAYS = (100.0, 400.0)
SETTINGS = ["-- variant none"] + [
    line for d in DELAYS for mode, short in dv.MODES for line in (
        "-- variant w-%s-%g" % (short, d),
        "pg_lockstat.delay_tranche|W||configuration file",
        "pg_lockstat.delay_us|%g||configuration file" % d,
        "pg_lockstat.delay_mode|%s||configuration file" % mode)]
NAMES = ["none"] + ["w-%s-%g" % (short, d) for d in DELAYS
                    for _, short in dv.MODES]
HEAD = ["variant", "clients", "round", "tranche", "sh_acquires",
        "ex_acquires", "ex_hold_samples", "sh_hold_samples", "ex_hold_time",
        "sh_hold_time"]
# the other columns of locks.csv, 0 here, and spins.csv's (no rows)
OTHER = ["tranche_id", "blocks", "spin_delays", "dequeue_self", "wait_time",
         "max_wait_time", "max_ex_hold_time", "max_sh_hold_time", "blk_pct",
         "spin_delay_pct"]
SPINS = ("variant,clients,round,file,line,func,contended,spins,delays,"
         "wait_time,tas_attempts,unlocked_skips,max_wait_time\n")


def write_study(d, tps, rounds=4, clients=8, ex=0.1, sh=0.1, control=None):
    """runs.csv, locks.csv and settings.txt of a study in d: tps(v, r, a)
    the tps of variant v in round r, whose delays add a us per
    transaction; every run 10 s, tranche W taken ex and sh times per
    transaction (whole acquisitions per 10 transactions), in the
    baseline's runs held a mean 1 ms exclusive and 0.5 ms shared (10
    samples each).  With control (a factor), delays.csv too: the inside
    runs inject a delay per acquisition, the control runs control times
    as many; without, each delay variant's a is d (ex + sh)."""
    runs, locks, delays = [], [], []
    for r in range(1, rounds + 1):
        for v in NAMES:
            delay = 0.0 if v == "none" else float(v.rsplit("-", 1)[1])
            per = 1 if control is None or "-in-" in v else control
            x = tps(v, r, delay * (ex + sh) * per)
            xacts = 10 * round(x)	# acquisitions are whole numbers
            runs.append((v, clients, r, x, xacts))
            locks.append((v, clients, r, "W", round(sh * xacts),
                          round(ex * xacts), 10, 10, 10.0, 5.0))
            locks.append((v, clients, r, "Other", 0, 5, 1, 0, 1.0, 0))
            if v != "none":
                delays.append((v, clients, r,
                               per * (round(sh * xacts) + round(ex * xacts))))
    with open(os.path.join(d, "runs.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["variant", "clients", "round", "tps", "transactions"])
        w.writerows(runs)
    with open(os.path.join(d, "locks.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEAD + OTHER)
        w.writerows(row + (0,) * len(OTHER) for row in locks)
    with open(os.path.join(d, "spins.csv"), "w") as f:
        f.write(SPINS)
    with open(os.path.join(d, "settings.txt"), "w") as f:
        f.write("\n".join(SETTINGS) + "\n")
    if control is not None:
        with open(os.path.join(d, dv.DELAYS_FILE), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(dv.DELAYS_HEADER.split(","))
            w.writerows(delays)


def table_s(d, threshold=0.02):
    return sn.sensitivity(read_runs(os.path.join(d, "runs.csv"),
                                    need_transactions=True),
                          os.path.join(d, "locks.csv"), SETTINGS, NAMES,
                          threshold)


def exact(v, r, a):
    """Every round the same up to a factor of its own (which the paired
    slopes cancel): inside -0.1 % per us added per transaction, control
    -0.02 %."""
    b = {"none": 0, "in": -0.001, "ctl": -0.0002}[v.split("-")[1]
                                                    if "-" in v else v]
    return 1000 * (1 + r / 10) * math.exp(b * a)


def test_slopes_by_hand(tmp_path):
    """Added: 0.2 acquisitions per transaction x 100 and 400 us = 20 and
    80 us per transaction.  Slopes -0.001, -0.0002, effect -0.0008 per
    us, the same in every round (interval of width 0): lowers tps.  The
    baseline's hold per transaction: 0.1 x 1000 + 0.1 x 500 = 150 us; a
    10 % shorter hold: exp(0.0008 x 15) - 1 = 1.207 %.  Busy: 0.1
    exclusive acquisitions per transaction x 1 ms x 1000 to 1400 tps,
    over the rounds' time: A h / T = sum(0.1 x 10 x tps_r x 1 ms) /
    40 s = 0.1 x mean tps x 1e-3 = 0.125 (12.5 %), ceiling 1250 / 0.125
    = 10000 tps.  The bound at 400 us: ln(0.125 + 1250 x 0.1 x 4e-4) =
    ln(0.175) < 0, so the predicted slope is 0: steeper than predicted."""
    write_study(str(tmp_path), exact)
    s = table_s(str(tmp_path))
    assert (s.baseline, s.family, s.unpaired) == ("none", 1, ())
    assert s.confidence == pytest.approx(0.95)
    (row,) = s.rows
    assert (row.tranche, row.clients, row.rounds) == ("W", 8, 4)
    assert row.delays_us == DELAYS
    assert row.added_us == pytest.approx((20, 80))
    assert row.inside == pytest.approx((-0.001,) * 3)
    assert row.control == pytest.approx((-0.0002,) * 3)
    assert row.effect == pytest.approx((-0.0008,) * 3)
    assert row.verdict == "lowers tps"
    assert row.hold_us == pytest.approx(150)
    assert row.gain == pytest.approx((math.exp(0.012) - 1,) * 3)
    assert row.busy == pytest.approx(0.125)
    assert row.ceiling_tps == pytest.approx(10000)
    assert row.ceiling_slope == 0
    assert row.agreement == "steeper than predicted"
    # without delays.csv: the control taken to add what the inside run
    # adds, no delays per acquisition; 10 % removed along inside:
    # exp(0.001 x 15) - 1
    assert row.control_added_us == pytest.approx((20, 80))
    assert (row.inside_per_acquire, row.control_per_acquire) == (None, None)
    assert row.removed == pytest.approx((math.exp(0.015) - 1,) * 3)


def test_counted_delays(tmp_path):
    """With delays.csv: each run's own added time, d x its delays per
    transaction; a control that injects twice as many delays as the
    tranche has acquisitions (attempts that acquire nothing) adds 40 and
    160 us, and its slope is against those, not the inside run's."""
    write_study(str(tmp_path), exact, control=2)
    (row,) = table_s(str(tmp_path)).rows
    assert row.added_us == pytest.approx((20, 80))
    assert row.control_added_us == pytest.approx((40, 160))
    assert row.inside_per_acquire == pytest.approx(1)
    assert row.control_per_acquire == pytest.approx(2)
    assert row.inside == pytest.approx((-0.001,) * 3)
    assert row.control == pytest.approx((-0.0002,) * 3)
    assert row.effect == pytest.approx((-0.0008,) * 3)
    text = sn.sensitivity_text(table_s(str(tmp_path)), 0.02)
    assert "| 20.00 80.00 / 40.00 160.00 | 1.000 / 2.000 |" in text


def test_delays_file_refused(tmp_path):
    write_study(str(tmp_path), exact, control=1)
    path = os.path.join(str(tmp_path), dv.DELAYS_FILE)
    with open(path, "a") as f:
        f.write("w-in-100,8,9,-3\n")
    with pytest.raises(InputError) as e:
        table_s(str(tmp_path))
    assert str(e.value) == "%s line 18: injected_delays -3: not a " \
        "non-negative number" % path


def test_slopes_against_an_independent_fit(tmp_path):
    """With noise in every run: each round's slope is numpy's least
    squares through the origin, their mean and t interval scipy's."""
    rng = random.Random(7)
    noise = {}

    def noisy(v, r, a):
        noise[(v, r)] = math.exp(rng.gauss(0, 0.01))
        return exact(v, r, a) * noise[(v, r)]
    write_study(str(tmp_path), noisy, rounds=6)
    (row,) = table_s(str(tmp_path)).rows
    a = numpy.array([[20.0], [80.0]])
    per_round = []
    for r in range(1, 7):
        y = [math.log(exact("w-in-%g" % d, r, 0.2 * d)
                      * noise[("w-in-%g" % d, r)]
                      / (exact("w-ctl-%g" % d, r, 0.2 * d)
                         * noise[("w-ctl-%g" % d, r)])) for d in DELAYS]
        per_round.append(numpy.linalg.lstsq(a, numpy.array(y),
                                            rcond=None)[0][0])
    m = numpy.mean(per_round)
    half = scipy_stats.t.ppf(0.975, 5) * numpy.std(per_round, ddof=1) / \
        math.sqrt(6)
    assert row.effect == pytest.approx((m, m - half, m + half))
    assert row.effect[2] < 0 and row.verdict == "lowers tps"


@pytest.mark.parametrize("sd, verdict", [
    (0.001, "equivalent (±2% for 10% of the hold moved out)"),
    (0.3, "not resolved")])
def test_no_effect(tmp_path, sd, verdict):
    """Inside and control alike: with little noise the gain of a 10 %
    shorter hold lies within +-2 % (equivalent); with much, not
    resolved."""
    rng = random.Random(11)

    def same(v, r, a):
        b = 0 if v == "none" else -0.0002
        return 1000 * math.exp(b * a + rng.gauss(0, sd))
    write_study(str(tmp_path), same, rounds=6)
    (row,) = table_s(str(tmp_path)).rows
    assert row.effect[1] < 0 < row.effect[2]
    assert row.verdict == verdict


def test_ceiling_slope_by_hand():
    """busy 0.5 at 1000 tps, 1 exclusive acquisition per transaction:
    at d = 1000 us the bound is 1 / (0.0005 + 0.001) = 667 tps, ln(1.5)
    below; at 100 us ln(0.6) < 0: unchanged.  The slope through the
    origin against added 100 and 1000: -0.405 x 1000 / (100^2 + 1000^2)."""
    want = -math.log(1.5) * 1000 / (100 ** 2 + 1000 ** 2)
    assert sn.ceiling_slope((100, 1000), (100, 1000), 0.5, 1000, 1) == \
        pytest.approx(want)


def test_agreement():
    assert sn.agreement(-2, -1, -1.5, True) == "agrees"
    assert sn.agreement(-2, 1, -1.5, False) == "not resolved"
    assert sn.agreement(-2, -1, -0.5, True) == "steeper than predicted"
    assert sn.agreement(-2, -1, -3, True) == "shallower than predicted"
    assert sn.agreement(-2, -1, None, True) == "-"


def test_incomplete_rounds_and_unpaired(tmp_path):
    """A round without one of its runs is left out; a delayed variant
    whose other mode never ran is named, not compared; no delayed
    variant, or a delayed baseline: no table."""
    write_study(str(tmp_path), exact)
    path = os.path.join(str(tmp_path), "runs.csv")
    with open(path) as f:
        lines = f.read().splitlines()
    with open(path, "w") as f:
        f.write("\n".join(x for x in lines if not x.startswith(
            "w-ctl-400,8,2,")) + "\n")
    runs = read_runs(path, need_transactions=True)
    locks = os.path.join(str(tmp_path), "locks.csv")
    s = sn.sensitivity(runs, locks, SETTINGS, NAMES, 0.02)
    assert s.rows[0].rounds == 3
    odd = SETTINGS + ["-- variant w-in-7", "pg_lockstat.delay_tranche|W||x",
                      "pg_lockstat.delay_us|7||x",
                      "pg_lockstat.delay_mode|inside||x"]
    s = sn.sensitivity(runs, locks, odd, NAMES + ["w-in-7"], 0.02)
    assert s.unpaired == ("w-in-7",) and s.rows[0].delays_us == DELAYS
    assert "left out, without the variant of the other mode at the same " \
        "tranche and delay: w-in-7" in sn.sensitivity_text(s, 0.02)
    assert sn.sensitivity(runs, locks, SETTINGS[:1], NAMES, 0.02) is None
    assert sn.sensitivity(runs, locks, SETTINGS, NAMES[1:], 0.02) is None
    # a delayed variant first: the one variant without a delay is the
    # baseline of (s)
    s = sn.sensitivity(runs, locks, SETTINGS, NAMES[::-1], 0.02)
    assert s.baseline == "none" and s.rows[0].rounds == 3


def test_runs_left_out(tmp_path):
    """A round with a run of tps 0 (or below, or not a number) is left
    out, as is one in which a mode injected no delay; a tranche no run
    delayed says so.  No traceback (math.log(0) raised ValueError)."""
    d = str(tmp_path)
    write_study(d, exact, control=1)
    path = os.path.join(d, "runs.csv")
    with open(path) as f:
        text = f.read()
    lines = text.splitlines()
    for i, x in enumerate(lines):
        if x.startswith("w-in-100,8,2,"):
            f = x.split(",")
            lines[i] = ",".join(f[:3] + ["0"] + f[4:])
        if x.startswith("none,8,3,"):
            f = x.split(",")
            lines[i] = ",".join(f[:3] + ["-5"] + f[4:])
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    (row,) = table_s(d).rows
    assert row.rounds == 2 and row.effect == pytest.approx((-0.0008,) * 3)
    dpath = os.path.join(d, dv.DELAYS_FILE)
    with open(dpath) as f:
        head, *rows = f.read().splitlines()
    with open(dpath, "w") as f:
        f.write("\n".join([head] + [
            ",".join(x.split(",")[:3] + ["0"]) if x.split(",")[2] == "1"
            else x for x in rows]) + "\n")
    (row,) = table_s(d).rows
    assert row.rounds == 1 and row.verdict == "not resolved"
    with open(dpath, "w") as f:
        f.write("\n".join([head] + [",".join(x.split(",")[:3] + ["0"])
                                    for x in rows]) + "\n")
    (row,) = table_s(d).rows
    assert (row.rounds, row.verdict) == (0, sn.NEVER)
    assert "| not delayed: no delay injected" in sn.sensitivity_text(
        table_s(d), 0.02)


def test_report_and_results_json(tmp_path):
    """The study's report shows (s) and results.json keeps it."""
    d = str(tmp_path)
    write_study(d, exact)
    text = results.report_text(d, None, 2)
    assert "\n(s) sensitivity: how tps responds" in text
    assert (" W       |       8 |      4 |   100 400 | 20.00 80.00 / 20.00 "
            "80.00 |      - / - |        -0.1 |        -0.02 |                 "
            "-0.08 | [-0.08, -0.08] | lowers tps\n") in text
    assert "| lowers tps" in text and "+1.21% (extrapolated)" in text
    assert "steeper than predicted" in text
    saved = model.load(os.path.join(d, results.RESULTS))
    assert saved.sensitivity == results.analyse(d, None, 2).sensitivity
    assert saved.sensitivity.rows[0].verdict == "lowers tps"


def test_saved_study_keeps_its_baseline(tmp_path):
    """"lockstudy report DIR" takes the variants' order, and so the
    baseline, from commands.txt's first line, as the study gave them, not
    from the first run of runs.csv (here a delayed variant's, with which
    the report compared everything to w-in-100 and had no table (s))."""
    d = str(tmp_path)
    write_study(d, exact)
    path = os.path.join(d, "runs.csv")
    with open(path) as f:
        head, *rows = f.read().splitlines()
    rows.sort(key=lambda x: not x.startswith("w-in-100,"))
    with open(path, "w") as f:
        f.write("\n".join([head] + rows) + "\n")
    with open(os.path.join(d, "commands.txt"), "w") as f:
        f.write('SCALE=10 VARIANTS="%s" CLIENTS="8" DURATION=10\n'
                % "; ".join(n + (": work_mem=8MB" if n != "none" else "")
                            for n in NAMES))
    result = results.analyse(d, None, 2)
    assert list(result.tps.variants) == NAMES
    assert result.sensitivity.rows[0].verdict == "lowers tps"
    # STRATEGIES, and a name the runs lack, which is left out
    with open(os.path.join(d, "commands.txt"), "w") as f:
        f.write('SCALE=10 STRATEGIES="gone %s" CLIENTS="8"\n'
                % " ".join(NAMES))
    assert list(results.analyse(d, None, 2).tps.variants) == NAMES
    # a variant of the runs that the line does not name comes last
    with open(os.path.join(d, "commands.txt"), "w") as f:
        f.write('SCALE=10 STRATEGIES="none w-ctl-400" CLIENTS="8"\n')
    assert list(results.analyse(d, None, 2).tps.variants) == [
        "none", "w-ctl-400", "w-in-100", "w-ctl-100", "w-in-400"]


KEPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                    "results", "sensitivity-2026-12-07")


def test_kept_study():
    """The sensitivity study doc/study.md quotes, from its kept inputs:
    its numbers as the text gives them."""
    s = results.analyse(os.path.join(KEPT, "counted"), None, 2).sensitivity
    w, p = s.rows
    assert (w.tranche, p.tranche, s.baseline) == ("WALWrite", "ProcArray",
                                                  "base")
    assert "%.3f %.3f" % (w.inside_per_acquire, w.control_per_acquire) == \
        "1.000 3.100"
    assert ["%+.3g" % (100 * x) for x in w.effect] == \
        ["-0.295", "-0.363", "-0.226"]
    assert w.verdict == "lowers tps"
    assert ["%+.2f" % (100 * x) for x in w.gain] == ["+4.34", "+3.32", "+5.38"]
    assert w.agreement == "steeper than predicted"
    assert p.verdict == "equivalent (±2% for 10% of the hold moved out)"
    # before delays.csv: the control charged with the inside run's time
    u = results.analyse(os.path.join(KEPT, "uncounted"), None, 2).sensitivity
    assert u.rows[0].control_per_acquire is None
    assert u.rows[0].verdict == "raises tps"
