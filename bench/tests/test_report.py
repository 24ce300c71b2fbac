"""Tests of lockstudy.report: the text of the tps report, points.csv and the
plot data, on synthetic studies.  The numbers in the expected text are
computed here (exact binomials, statistics' medians and deviations) or
follow from the data's construction; that the whole text is the old one
is test_golden.py's part.  Also: the correction for the number of
comparisons keeps null studies' false verdicts under its bound, and every
bad input raises InputError with the old message."""

import dataclasses
import math
import re
import statistics
from fractions import Fraction

import numpy
import pytest

from lockstudy import data, report, stats
from lockstudy.data import InputError, Run

THREE = ["tas", "ttas_spin", "ttas"]
CLIENTS = [1, 2, 8, 64]


# a permutation of the rounds 1 .. 12, so that a level "+ MIX[r]" has no
# trend over the rounds, which the rounds' check would flag
MIX = {r: (5 * r) % 13 for r in range(1, 13)}


def tps_report(study, tps, variants, threshold=2, **kw):
    return report.tps_report(study.runs(tps), variants, threshold, **kw)


def test_table_a_identical_variants(study):
    rng = numpy.random.default_rng(11)
    drift = {(c, r): 1 + 0.2 * rng.standard_normal()
             for c in CLIENTS for r in range(1, 10)}
    r = tps_report(study, study.grid(THREE, CLIENTS, 9, lambda s, c, r: 1000
                                     * c * drift[(c, r)]), THREE)
    assert re.search(r"^\(a\) tps per client count: .*for each variant the "
                     r"ratio of its tps to tas's in the same round", r.text,
                     re.M)
    # a ratio of 1 without noise: equivalent; its 9 rounds resolve any
    # difference beyond the threshold, and the fewest rounds that reach
    # the level (here 9, at 1 - 0.05 / 8) show equivalence
    assert re.search(r"^\s+64 \| ttas\s+\|\s+\d+ \|\s+\| 1\.000 \| "
                     r"1\.000-1\.000 \| 1\.000 \| 1\.000-1\.000 \| equivalent \(±2%\) \|\s+0\.0% \|"
                     r"\s+±2\.0% \|\s+9$", r.text, re.M)
    assert r.variants == THREE
    assert r.text.endswith("\n") and not r.text.endswith("\n\n")
    assert [p.variant for p in r.points] == \
        [s for s in THREE for _ in CLIENTS]


def test_too_few_rounds_line(study):
    r = tps_report(study, study.grid(THREE, [8], 5, lambda s, c, r: (
        1000 if s == "tas" else 1300) + MIX[r]), THREE, correction="none")
    coverage = 1 - Fraction(2, 2 ** 5)
    assert ("\nfewer than 6 rounds: the intervals are min-max, of coverage "
            "%.1f%% only, and are not resolved\n" % (100 * coverage)) \
        in r.text
    # its rounds resolve nothing; at no noise, 6 rounds show equivalence
    assert re.search(r"^\s+8 \| ttas_spin .*\| not resolved \|\s+0\.\d% \|"
                     r"\s+- \|\s+6$", r.text, re.M)


def test_within_threshold(study):
    tps = study.grid(["tas", "ttas"], [2], 9, lambda s, c, r: (
        1000 if s == "tas" else 1015) * (1 + r / 1000))
    text = tps_report(study, tps, ["tas", "ttas"]).text
    assert re.search(r"^\s+2 \| ttas\s+\|\s+\d+ \|\s+\| 1\.015 \| "
                     r"1\.015-1\.015 \| 1\.015 \| 1\.015-1\.015 \| equivalent \(±2%\) \|", text, re.M)
    assert "verdict (threshold 2%)" in text
    assert "| faster " in tps_report(study, tps, ["tas", "ttas"], 1).text


def _noise_study(study, rng, clients, rounds=12):
    return study.grid(["a", "b", "c"], clients, rounds,
                      lambda s, c, r: 1000 * math.exp(
                          0.1 * rng.standard_normal()))


def _signed_rank_coverage(exact, n, level):
    """The exact coverage of the signed-rank interval of n values at the
    level, and its rank k."""
    counts = exact.signed_rank_counts(n)
    k = 1
    while 1 - Fraction(2 * sum(counts[:k + 1]), 2 ** n) >= level:
        k += 1
    return k, 1 - Fraction(2 * sum(counts[:k]), 2 ** n)


def test_bonferroni(study, exact):
    # 3 variants x 4 client counts: 8 comparisons, each ratio interval at
    # 1 - 0.05 / 8, [w(6), w(73)] of the 78 Walsh averages; with no
    # correction each is at 95%, [w(14), w(65)] (the published critical
    # values of the signed-rank test at n = 12: 13 at 5%)
    tps = _noise_study(study, numpy.random.default_rng(2201), CLIENTS)
    level = Fraction(1) - Fraction(1, 20) / 8
    k, coverage = _signed_rank_coverage(exact, 12, level)
    assert k == 6
    r = tps_report(study, tps, None)
    assert (r.comparisons, r.ratio_confidence) == (8, 1 - 0.05 / 8)
    assert ("\ncomparisons: 8; Bonferroni: each ratio interval at %.2f%%, so "
            "that the chance of at least one false verdict in the study is "
            "at most %.2f%% (the sum of the intervals' exact non-coverage); "
            "a re-analysis of these runs with another baseline or other "
            "variants adds comparisons to the family: give its size with "
            "compare --family\n"
            % (100 * level, 100 * 8 * (1 - coverage))) in r.text
    assert "Hodges-Lehmann estimate, 99.38% interval (Wilcoxon signed " \
        "rank)" in r.text
    assert [p.coverage for p in r.points if p.variant != "a"] == \
        pytest.approx([float(coverage)] * 8, abs=1e-12)
    k, coverage = _signed_rank_coverage(exact, 12, Fraction(19, 20))
    assert k == 14
    r = tps_report(study, tps, None, correction="none")
    assert r.ratio_confidence == 0.95
    assert "\ncomparisons: 8; no correction: each ratio interval at 95%, " \
        in r.text
    assert [p.coverage for p in r.points if p.variant != "a"] == \
        pytest.approx([float(coverage)] * 8, abs=1e-12)


def test_one_comparison_is_not_corrected(study):
    tps = study.grid(["a", "b"], [1], 9, lambda s, c, r: 1000.0 + r)
    r = tps_report(study, tps, None)
    assert (r.comparisons, r.ratio_confidence) == (1, 0.95)
    assert "comparisons: 1; Bonferroni: each ratio interval at 95%" in r.text


def test_null_studies(study):
    # all three variants alike, 10% noise, threshold 0, so that any
    # interval that excludes 1 is a false verdict.  With the correction:
    # 6 intervals of 1 - 26/4096 each, a bound of 3.8% per study; 6 or more
    # false studies of 40 has probability under 0.2%.  Without: about 21%.
    rng = numpy.random.default_rng(2202)
    false = {"bonferroni": 0, "none": 0}
    for _ in range(40):
        tps = _noise_study(study, rng, [1, 8, 64])
        for correction in false:
            r = tps_report(study, tps, None, 0, correction=correction)
            false[correction] += any(p.verdict in ("faster", "slower")
                                     for p in r.points)
    assert false["bonferroni"] <= 5
    assert false["none"] > false["bonferroni"]


def _split_study(study):
    # ttas splits at 16 clients (5 of 12 runs at 600, spread over the
    # rounds), tas is clean
    def tps(s, c, r):
        if s == "tas":
            return 1000 + MIX[r]
        return 599 + MIX[r] if c == 16 and r in (2, 4, 7, 9, 12) \
            else 1500 + MIX[r]
    return study.grid(["tas", "ttas"], [4, 16], 12, tps)


def test_collapse_table(study, exact):
    r = tps_report(study, _split_study(study), ["tas", "ttas"])
    assert "\ncollapse: points whose runs fall into a good and a bad group " \
        "(split test of each point's log tps after each round's effect " \
        "(the other variants' median in that round), at most 1% false " \
        "alarms per point of single-peaked runs (normal, skewed or " \
        "heavy-tailed); needs 5 runs): the bad runs of each variant and of " \
        "tas, both below the boundary of the variant's split, " in r.text
    assert re.search(r"^\s+16 \| ttas\s+\|\s+5 of 12 \|\s+0 of 12 \|"
                     r"\s+%.3f$" % exact.fisher_greater(5, 7, 0, 12), r.text,
                     re.M)
    # in table (a): 5 of 12 against 0 of 12 differ (one-sided p < 0.05),
    # so the verdict is bimodal, with the bad runs; the mean ratio, which
    # the collapsed runs pull down, beside the Hodges-Lehmann one
    assert exact.fisher_greater(5, 7, 0, 12) < Fraction(1, 20)
    assert re.search(r"^\s+16 \| ttas\s+\|\s+\d+ \|\s+\| [\d.]+ \| "
                     r"[\d.-]+ \| [\d.]+ \| [\d.-]+ \| bimodal, 5/12 low\s+\|",
                     r.text, re.M)
    assert re.search(r"^\s+16 \| tas\s+\|\s+1006 \|", r.text, re.M)
    clean = tps_report(study, study.grid(["tas", "ttas"], [4], 9,
                                         lambda s, c, r: 1000 + r), None)
    assert "\ncollapse: no point's runs fall into two groups (split test " \
        "of each point's log tps after each round's effect (the other " \
        "variants' median in that round), at most 1% false alarms per " \
        "point of single-peaked runs (normal, skewed or heavy-tailed); " \
        "needs 5 runs)\n" in clean.text


def test_collapse_beside_the_verdict(study, exact):
    # 3 of 12 runs at 60%: flagged, but 3 of 12 against 0 of 12 is not a
    # difference (p = 0.22), so the verdict stands with the bad runs
    def tps(s, c, r):
        return 1000 + MIX[r] if s == "tas" else (
            599 + MIX[r] if r in (2, 6, 10) else 1500 + MIX[r])
    r = tps_report(study, study.grid(["tas", "ttas"], [16], 12, tps),
                   ["tas", "ttas"])
    assert exact.fisher_greater(3, 9, 0, 12) > Fraction(1, 20)
    assert re.search(r"^\s+16 \| ttas\s+\|.*\| (not resolved|faster), "
                     r"3/12 low \|", r.text, re.M)


def test_collapse_table_of_the_baseline_alone(study):
    tps = study.grid(["solo"], [4, 16], 9, lambda s, c, r: (
        500 if c == 16 and r <= 4 else 1000) + r)
    r = tps_report(study, tps, None)
    assert re.search(r"^\s+16 \| solo\s+\|\s+4 of 9 \|\s+\|$", r.text, re.M)
    assert not re.search(r"^\s+4 \| solo\s+\|\s+\d+ of", r.text, re.M)
    # one variant: no comparisons, no position table
    assert "comparisons:" not in r.text and "position:" not in r.text


def test_noise_table(study):
    base = [100, 101, 102, 130, 131]
    tps = study.grid(["tas", "ttas"], [16], 5, lambda s, c, r: (
        base[r - 1] if s == "tas" else 100 + r))
    text = tps_report(study, tps, ["tas", "ttas"]).text
    cv = "%.1f" % (100 * statistics.stdev(base) / statistics.fmean(base))
    noise = "%.1f" % (100 * statistics.stdev(
        [math.log((100 + r) / base[r - 1]) for r in range(1, 6)]))
    assert re.search(r"^noise \(%%\): for tas the coefficient of variation of "
                     r"its tps across rounds; for each other variant the "
                     r"ratio noise, .*\n.*\n.*\n\s+16 \|\s+%s \|\s+%s$"
                     % (re.escape(cv), re.escape(noise)), text, re.M)
    # one symbol, one meaning: no mark of a collapse in the tps column
    assert re.search(r"^\s+16 \| tas\s+\|\s+102 \|", text, re.M)


def _drift_runs():
    # 6 rounds; a grows by 100 a round (1100 .. 1600); b runs first in odd
    # rounds, 10% faster there, and second in even rounds, as fast as a
    runs = []
    for r in range(1, 7):
        first = r % 2 == 1
        runs.append(Run("a", 1, r, 1000.0 + 100 * r, 2 if first else 1))
        runs.append(Run("b", 1, r, (1000.0 + 100 * r)
                        * (1.1 if first else 1.0), 1 if first else 2))
    return runs


def test_drift_and_position_tables():
    text = report.tps_report(_drift_runs(), ["a", "b"], 2).text
    # (1500, 1600) over (1100, 1200) for a; (1650, 1600) over (1210, 1200);
    # a grows in even steps, so its noise and range are tight: marked
    assert re.search(r"^drift: median tps of the last third of the rounds "
                     r"over the first third, per point \[range that chance "
                     r"gives it, 95%% over the table together\]; \* "
                     r"outside it\n\s*clients \|\s+a \|\s+b\n[-+]+\n"
                     r"\s+1 \| %.3f \[[\d.]+-[\d.]+\] \* \| %.3f "
                     r"\[[\d.]+-[\d.]+\]( \*)?$"
                     % (1550 / 1150, 1625 / 1205), text, re.M)
    assert "\nposition: median ratio to a in the same round by the position " \
        "the variant ran in (number of ratios), all client counts, each " \
        "ratio centred on its client count's median ratio and the " \
        "variant's median ratio put back [range that chance gives it, 95% " \
        "over the table together]; * outside it\n" in text
    assert re.search(r"^ variant \|\s+position 1 \|\s+position 2\n[-+]+\n "
                     r"b\s+\|\s+1\.100 \[[\d.]+-[\d.]+\]( \*)? \(3\) \|"
                     r"\s+1\.000 \[[\d.]+-[\d.]+\]( \*)? \(3\)$", text,
                     re.M)
    # no position column: no position table
    runs = [dataclasses.replace(r, position=None) for r in _drift_runs()]
    assert "position:" not in report.tps_report(runs, None, 2).text


def test_variants(study):
    tps = study.grid(["b", "a", "c"], [1], 9, lambda s, c, r: 1000.0 + r)
    # None: the order of first appearance
    assert tps_report(study, tps, None).variants == ["b", "a", "c"]
    # a variant listed without runs is left out
    r = tps_report(study, tps, ["c", "x", "a", "b"])
    assert r.variants == ["c", "a", "b"]
    assert [p.variant for p in r.points] == ["c", "a", "b"]
    assert "ratio of its tps to c's" in r.text


RUNS = [Run("tas", 1, 1, 5.0), Run("ttas", 1, 1, 6.0)]


@pytest.mark.parametrize("runs, kw, message", [
    (RUNS + [Run("tas", 1, 1, 7.0)], {},
     "two runs for variant tas, 1 clients, round 1"),
    (RUNS, dict(variants=["ttas_spin", "tas", "ttas"]),
     "runs.csv has no runs of the baseline ttas_spin"),
    (RUNS, dict(variants=["tas"]),
     "runs.csv has variants not in --variants: ttas"),
    (RUNS, dict(variants=["x"], source="/tmp/s/runs.csv"),
     "/tmp/s/runs.csv has variants not in --variants: tas ttas"),
    (RUNS, dict(threshold_pct=100),
     "--threshold must be a percentage in [0, 100)"),
    (RUNS, dict(threshold_pct=-0.5),
     "--threshold must be a percentage in [0, 100)"),
    (RUNS, dict(threshold_pct=math.nan),
     "--threshold must be a percentage in [0, 100)"),
    (RUNS, dict(confidence=1), "--confidence must lie between 0 and 1"),
    (RUNS, dict(confidence=0), "--confidence must lie between 0 and 1"),
    (RUNS, dict(correction="holm"), "--correction must be bonferroni or none"),
])
def test_errors(runs, kw, message):
    args = dict(variants=None, threshold_pct=2)
    args.update(kw)
    with pytest.raises(InputError) as e:
        report.tps_report(runs, **args)
    assert str(e.value) == message


def test_write_points(study, tmp_path, exact):
    r = tps_report(study, _split_study(study), ["tas", "ttas"])
    path = tmp_path / "points.csv"
    report.write_points(r.points, str(path))
    lines = path.read_text().split("\n")
    assert lines[0] == "variant,clients,n,median,lo,hi,bifurcated,cv," \
        "tps_ci_low,tps_ci_high,pairs,ratio,ci_low,ci_high,coverage," \
        "verdict,resolves,rounds_equivalent,bad_runs,fisher_p," \
        "base_bad_runs,ratio_noise,zero_runs,mean_ratio,mean_low," \
        "mean_high,lag1,lag1_p,change_p,change_round,serial_p,dependent"
    assert lines[-1] == "" and len(lines) == 2 + len(r.points)
    rows = [dict(zip(lines[0].split(","), x.split(","))) for x in lines[1:-1]]
    base, split = rows[1], rows[3]
    # tas at 16 clients: tps 1001 .. 1012 (MIX); ttas: 5 of 12 runs split
    # off
    assert (base["variant"], base["clients"], base["n"], base["median"],
            base["lo"], base["hi"], base["bifurcated"], base["verdict"],
            base["ratio"], base["fisher_p"], base["base_bad_runs"]) == \
        ("tas", "16", "12", "1006.500", "1001.000", "1012.000", "f",
         "baseline", "", "", "")
    bad = (2, 4, 7, 9, 12)
    logs = [math.log(((599 if r in bad else 1500) + MIX[r])
                     / (1000 + MIX[r])) for r in range(1, 13)]
    est = exact.signed_rank_ci(logs)[0]
    assert (split["bifurcated"], split["bad_runs"], split["base_bad_runs"],
            split["verdict"], split["pairs"], split["ratio"],
            split["fisher_p"], split["zero_runs"], split["mean_ratio"],
            split["dependent"]) == \
        ("t", "5", "0", "bimodal", "12", "%.6g" % math.exp(est),
         "%.6g" % float(exact.fisher_greater(5, 7, 0, 12)), "0",
         "%.6g" % math.exp(statistics.fmean(logs)), "f")
    assert float(split["ratio_noise"]) == pytest.approx(
        statistics.stdev(logs), rel=1e-5)
    values = [(599 if r in bad else 1500) + MIX[r] for r in range(1, 13)]
    assert float(split["cv"]) == pytest.approx(
        statistics.stdev(values) / statistics.fmean(values), rel=1e-5)


def test_write_dat(study, tmp_path, exact):
    r = tps_report(study, _split_study(study), ["tas", "ttas"])
    report.write_dat(r.points, r.variants, str(tmp_path))
    assert (tmp_path / "tps-tas.dat").read_text() == \
        "4 1006.500 1001.000 1012.000\n16 1006.500 1001.000 1012.000\n"
    p = {q.clients: q for q in r.points if q.variant == "ttas"}
    assert (tmp_path / "ratio-ttas.dat").read_text() == "".join(
        "%d %.6f %.6f %.6f\n" % (c, p[c].ratio, p[c].ci_low,
                                p[c].ci_high) for c in (4, 16))
    # the collapse that differs from the baseline's makes the ratio bimodal
    assert (tmp_path / "bimodal-ttas.dat").read_text() == \
        "16 %.6f\n" % p[16].ratio
    assert sorted(f.name for f in tmp_path.iterdir()) == \
        ["bimodal-ttas.dat", "ratio-ttas.dat", "tps-tas.dat", "tps-ttas.dat"]


def test_report_of_data_read(tmp_path):
    # the runs as data.read_runs gives them, old column name and all
    path = tmp_path / "runs.csv"
    path.write_text("strategy,clients,round,position,tps,seconds\n" + "".join(
        "%s,1,%d,%d,%d,5.0\n" % (s, r, i + 1, 1000 + MIX[r] + 100 * i)
        for r in range(1, 7) for i, s in enumerate(["x", "y"])))
    r = report.tps_report(data.read_runs(str(path)), None, 2)
    assert r.variants == ["x", "y"]
    assert r.points[1].verdict == "faster"
    assert re.search(r"^ y\s+\|\s+\|\s+[\d.]+ \[[\d.]+-[\d.]+\]( \*)? "
                     r"\(6\)$", r.text, re.M)


def test_no_mutable_module_globals():
    mutable = [k for k, v in vars(report).items() if not k.startswith("__")
               and isinstance(v, (dict, list, set, bytearray))]
    assert mutable == []


def test_runs_at_zero_tps_are_said(study):
    # a run at 0 tps has no log ratio: it is left out, and the text says
    # which points lost runs and how many, not silently
    tps = study.grid(["a", "b"], [1, 8], 9, lambda s, c, r: 1000.0 + r)
    tps[("b", 8, 3)] = tps[("b", 8, 7)] = 0.0
    tps[("a", 1, 2)] = 0.0
    r = tps_report(study, tps, None)
    assert ("\nruns at 0 tps, left out of the ratios (with the other run of "
            "their round) and of the collapse test: a at 1 clients 1, b at "
            "8 clients 2\n") in r.text
    assert "runs at 0 tps" not in tps_report(
        study, study.grid(["a", "b"], [1], 9, lambda s, c, r: 1000.0 + r),
        None).text


def test_family_of_a_re_analysis(study):
    # a re-analysis of one comparison out of a study of 6 takes the
    # study's level when given the family, and says so
    tps = _noise_study(study, numpy.random.default_rng(2203), [8])
    runs = study.runs({k: v for k, v in tps.items() if k[0] in "ab"})
    alone = report.tps_report(runs, ["b", "a"], 2)
    assert (alone.comparisons, alone.ratio_confidence) == (1, 0.95)
    r = report.tps_report(runs, ["b", "a"], 2, family=6)
    assert (r.comparisons, r.ratio_confidence) == (1, 1 - 0.05 / 6)
    assert r.result.comparisons.family == 6
    assert "\ncomparisons: 1 of a family of 6 (--family); Bonferroni: " \
        "each ratio interval at 99.17%," in r.text
    with pytest.raises(InputError, match="--family 1 is fewer than the 2 "
                       "comparisons of runs.csv"):
        report.tps_report(study.runs(tps), None, 2, family=1)


def test_resolution_text():
    cells = stats.resolution([12, 24], [0.05, 0.1], 0.02, 1 - 0.05 / 6)
    text = report.resolution_text(cells, 0.02, 1 - 0.05 / 6)
    want = {(x.rounds, x.noise): x for x in cells}
    assert text.startswith("the smallest difference that a verdict finds "
                           "with 80% power (interval at 99.17%, threshold "
                           "2%)")
    for s in (0.05, 0.1):
        assert re.search(r"^\s+%d%% \|\s+±%.1f%% \|\s+±%.1f%% \|\s+%d$" % (
            100 * s, 100 * want[(12, s)].resolves,
            100 * want[(24, s)].resolves, want[(12, s)].rounds_equivalent),
            text, re.M), s


def test_resolution_and_family_commands(study, tmp_path, capsys):
    from lockstudy import __main__ as cli
    assert cli.main(["resolution", "--rounds", "12 24", "--noise", "10",
                     "--comparisons", "6"]) == 0
    assert capsys.readouterr().out == report.resolution_text(
        stats.resolution([12, 24], [0.1], 0.02, 1 - 0.05 / 6), 0.02,
        1 - 0.05 / 6)
    path = tmp_path / "runs.csv"
    path.write_text("variant,clients,round,tps\n" + "".join(
        "%s,1,%d,%d\n" % (s, r, 1000 + r) for r in range(1, 10)
        for s in "ab"))
    assert cli.main(["compare", str(path), "--family", "4"]) == 0
    assert "comparisons: 1 of a family of 4 (--family)" \
        in capsys.readouterr().out
