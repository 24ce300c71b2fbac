"""Tests of lockstudy.tables: the numbers of a cell and the aligned
table every table of the report is laid out in."""

import math

from lockstudy.tables import fmt, half_up, table


def test_fmt():
    assert fmt(None) == "" and fmt(math.nan, 2) == ""
    assert fmt(2.5, 0) == "2" and fmt(1.25, 1) == "1.2"
    assert fmt(12.0, 2) == "12.00"


def test_half_up():
    assert half_up(None, 2) == ""
    assert half_up(0.125, 2) == "0.13" and half_up(-0.125, 2) == "-0.13"
    # 2.675 is 2.67499999... in binary; its shortest form 2.675 rounds up
    assert half_up(2.675, 2) == "2.68" and half_up(5.0, 2) == "5.00"
    assert half_up(0.0, 1) == "0.0" and half_up(1e-5, 2) == "0.00"
    assert half_up(5.4499999999999993, 1) == "5.5"


def test_table_widths_alignment_and_no_trailing_blanks():
    text = table(["name", "n"], [["a", "1"], ["abcdefg", "12345"]],
                 [False, True])
    assert text.split("\n") == [" name    |     n",
                                 "---------+-------",
                                 " a       |     1",
                                 " abcdefg | 12345"]


def test_table_of_no_rows():
    assert table(["x", "long"], [], [True, False]) == \
        " x | long\n---+------"


def test_empty_last_cell_leaves_no_blank():
    assert table(["a", "b"], [["x", ""]], [False, False]).split("\n")[2] \
        == " x |"
