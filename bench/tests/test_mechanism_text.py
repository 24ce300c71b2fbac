"""Tests of the text of table (m), lockstudy.report_locks.mechanism_text,
on the synthetic studies of test_mechanism.py, every row as computed
there (expect()).  Proved here:
  - the text: heading, columns, ratios, events in place of a ratio, p and
    q, the top rows (--top) and the line on the rows left out, the line
    on the marks, the note when no row can be marked, the lines of the
    points without rows or rounds.
"""

import re

from lockstudy import report_locks
from test_mechanism import (Synth, analyse, base_zero_study,
                            empty_points_study, exact_study, expect,
                            few_rounds_study, noise_study)


def text_of(points, base="A", top=10, csv_name="mechanism.csv"):
    return report_locks.mechanism_text(points, base, 0.95, top, csv_name)


def test_mechanism_text_exact_rates():
    st = exact_study()
    text = text_of(analyse(st, ["A", "B"]))
    (want,) = expect(st, ["A", "B"])
    lines = text.split("\n")
    assert lines[0] == (
        "(m) mechanism: B against A, 1 clients: per 1000 transactions over "
        "the 12 rounds both ran, each side's counts summed over its "
        "transactions; ratio of the two rates with its 95% interval, the "
        "test inverted; p of the exact paired sign-flip test; q = K p, K = "
        "2 of the 7 rows (Tarone: at most K rows can reach p <= 0.05 / K); "
        "* q <= 0.05")
    assert re.fullmatch(r" lock or call site +\| measure +\| +A \| +B \| "
                        r"+ratio \| +95% interval \| +p \| +q \| \*",
                        lines[1])
    assert re.search(r"^ Doubled +\| acquires +\| +3000\.00 \| +6000\.00 \| "
                     r"+x2\.000 \| +\[2\.000, 2\.000\] \| 0\.0005 \| "
                     r"0\.0010 \| \*$", text, re.M)
    assert re.search(r"^ WaitBufHdrUnlocked bufmgr\.c:6310 +\| spins +\| "
                     r"+300\.00 \| +300\.00 \| +x1\.000 \| "
                     r"+\[1\.000, 1\.000\] \| 1\.0000 \| 1\.0000 \|$", text,
                     re.M)
    # every row, the line on the marks, no note on the rounds
    assert len(lines) == 3 + len(want[3]) + 2 and lines[-1] == ""
    assert lines[-2] == "1 of 7 rows marked *; expected chance marks at " \
        "most 0.05 (where nothing changed)"


def test_mechanism_text_zero_and_new():
    """A side without events: its events in place of the ratio, no
    interval, and the line that says why."""
    text = text_of(analyse(base_zero_study(), ["A", "B"]))
    assert re.search(r"^ Gone +\| acquires +\| +200\.00 \| +0\.00 \| "
                     r"+22146 vs 0 events \| +- \| 0\.0005 \| "
                     r"0\.0020 \| \*$", text, re.M)
    assert re.search(r"^ LockBufHdr bufmgr\.c:6282 +\| contended +\| "
                     r"+0\.00 \| +[\d.]+ \| +0 vs 8754 events \| +- \| "
                     r"0\.0005 \| 0\.0020 \| \*$", text, re.M)
    assert text.endswith(
        "\n\"b vs v events\": the two sides' events over the rounds (for "
        "spins its contended, for wait_ms its blocks), where one has fewer "
        "than 10, too few for a ratio and its interval; p and q hold all "
        "the same\n")
    assert "events" not in text_of(analyse(exact_study(), ["A", "B"]))


def headings(text):
    return re.findall(r"^\(m\) mechanism: (\S+ against \S+, \d+) clients",
                      text, re.M)


def test_mechanism_top_and_more_rows():
    st = noise_study()
    points = analyse(st, ["A", "B", "C"])
    want = expect(st, ["A", "B", "C"])
    text = text_of(points)
    assert headings(text) == ["B against A, 2", "B against A, 8",
                              "C against A, 2", "C against A, 8"]
    blocks = text.split("\n\n")
    for block, w, p in zip(blocks, want, points):
        lines = block.strip("\n").split("\n")
        assert len(lines) == 3 + 10 + 2
        assert lines[-2] == "(%d more rows in mechanism.csv)" % (
            len(w[3]) - 10)
        marked = sum(q["marker"] == "*" for q in w[3])
        assert marked and lines[-1] == (
            "%d of %d rows marked *; expected chance marks at most 0.05 "
            "(where nothing changed)" % (marked, len(w[3])))
    text3 = text_of(points, top=3)
    for block, w in zip(text3.split("\n\n"), want):
        lines = block.strip("\n").split("\n")
        assert [re.match(r" (.*?) +\| (\w+)", x).groups()
                for x in lines[3:6]] == [(q["name"], q["measure"])
                                         for q in w[3][:3]]
        assert lines[6] == "(%d more rows in mechanism.csv)" % (len(w[3]) - 3)
    assert "more rows" not in text_of(points, top=100)
    text = text_of(points, csv_name=None)
    assert "(%d more rows not shown; --csv FILE writes every row)" % (
        len(want[0][3]) - 10) in text


def test_mechanism_fewer_rounds_and_empty_points():
    text = text_of(analyse(few_rounds_study(), ["A", "B"]))
    assert "K = 1 of the 1 row (Tarone: at most K rows can reach p <= " \
        "0.05 / K); * q <= 0.05\n" in text
    assert text.endswith("\n0 of 1 row marked *; expected chance marks at "
                         "most 0.05 (where nothing changed)\nno row can be "
                         "marked: the smallest p of 5 rounds, 0.0625, is "
                         "above 0.05 / K; with every row in K, 6 rounds "
                         "could mark one\n")
    points = analyse(empty_points_study(), ["C", "A", "B"])
    text = text_of(points, base="C")
    assert headings(text) == ["A against C, 1", "A against C, 2",
                              "A against C, 3", "B against C, 1",
                              "B against C, 2"]
    assert "\n(m) mechanism: A against C, 2 clients: no LWLock or spin-wait " \
        "call site counted in the 6 rounds in common\n\n" in text
    assert "\n(m) mechanism: A against C, 3 clients: no round in which both " \
        "ran\n\n" in text
    assert sum(len(p.rows) for p in points) == 2


def test_mechanism_text_sampled_flips():
    st = Synth()
    for r in range(1, 18):
        for s in ("A", "B"):
            st.run(s, 1, r, 1000 + r)
            st.lock(s, 1, r, "LockManager", 10 * r + (s == "B"))
    text = text_of(analyse(st, ["A", "B"]))
    assert "; p of the paired sign-flip test on 20000 sampled flips; " \
        in text
