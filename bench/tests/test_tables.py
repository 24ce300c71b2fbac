"""Tests of the psql emulation of lockstudy.tables: psql_aligned() and
psql_unaligned() against what psql 18 itself printed for small queries
(golden/locks-psql/cases.json, made by make-cases.py there: the header,
cells and alignment of each case written by hand from its query, the
output psql's), and their rules case by case: widths, centring, NULL,
alignment, zero rows."""

import json
import os

import pytest

from lockstudy.tables import display_width, psql_aligned, psql_unaligned

CASES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden",
                     "locks-psql", "cases.json")


def load_cases():
    with open(CASES, encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize("case", load_cases(), ids=lambda c: c["name"])
def test_what_psql_printed(case):
    if case["form"] == "aligned":
        got = psql_aligned(case["header"], case["rows"], case["right"])
    else:
        got = psql_unaligned(case["rows"], " ")
    assert got == case["output"]


def split_lines(text):
    """The lines of an aligned table, the final empty line checked off."""
    assert text.endswith("\n\n")
    return text[:-2].split("\n")


def test_widths_are_the_widest_cell_or_header():
    header = ["name", "n"]
    rows = [["a", "1"], ["abcdefg", "12345"], [None, "3"]]
    lines = split_lines(psql_aligned(header, rows, [False, True]))
    # the rule: a dash for each column of width plus the two blanks
    assert lines[1] == "-" * (7 + 2) + "+" + "-" * (5 + 2)
    # every line up to its last cell is as wide as the rule's columns
    for line in lines[2:]:
        first, second = line.split("|")
        assert len(first) == 7 + 2 and len(second) == 5 + 1


@pytest.mark.parametrize("width,name", [(8, "ab"), (7, "ab"), (5, "abcde"),
                                        (6, "x")])
def test_header_centred_odd_space_right(width, name):
    rows = [["v" * width]]
    head = psql_aligned([name], rows, [False]).split("\n")[0]
    space = width - len(name)
    left = space // 2
    assert head == " " * (1 + left) + name + " " * (1 + space - left)
    assert len(head) == width + 2


def test_alignment_and_last_column():
    rows = [["ab", "1", "x"], ["a", "22", "yyy"]]
    lines = split_lines(psql_aligned(["t", "n", "last"], rows,
                                     [False, True, False]))
    assert lines[2] == " ab |  1 | x"
    assert lines[3] == " a  | 22 | yyy"
    rows = [["x", "1"], ["y", "333"]]
    lines = split_lines(psql_aligned(["t", "n"], rows, [False, True]))
    # a right-aligned last column is padded on its left only
    assert lines[2] == " x |   1"
    assert lines[3] == " y | 333"


def test_null_is_empty_and_padded_like_any_cell():
    rows = [[None, None, None], ["abc", "12", "1.5"]]
    lines = split_lines(psql_aligned(["a", "b", "c"], rows,
                                     [False, True, True]))
    assert lines[2] == "     |    |    "
    assert lines[2].split("|") == [" " * 5, " " * 4, " " * 4]
    rows = [["1", None]]
    assert split_lines(psql_aligned(["n", "t"], rows,
                                    [True, False]))[2] == " 1 | "


def test_zero_rows():
    out = psql_aligned(["first", "n"], [], [False, True])
    assert out == " first | n \n-------+---\n\n"


def test_display_width():
    assert display_width("abc") == 3
    assert display_width("\u65e5\u672c") == 4			# wide
    assert display_width("e\u0301") == 1				# combining
    assert display_width("") == 0


def test_a_newline_in_a_cell_is_refused():
    with pytest.raises(ValueError):
        psql_aligned(["a"], [["two\nlines"]], [False])


def test_unaligned():
    assert psql_unaligned([["1", "a", None], ["2", "b", "x"]], " ") \
        == "1 a \n2 b x\n"
    assert psql_unaligned([["1", "2"]]) == "1|2\n"
    assert psql_unaligned([], " ") == ""
