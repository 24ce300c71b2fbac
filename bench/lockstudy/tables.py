"""Text tables of the report: the aligned form of the study's own tables,
and the output of psql (aligned with -P footer=off, and unaligned -At)
for the tables that psql printed before the report moved into Python.

Calls no other module of the package.
"""

import math
import unicodedata
from typing import List, Optional, Sequence


def fmt(x: Optional[float], digits: int = 0) -> str:
    """A number with that many decimals; empty for None and NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return "%.*f" % (digits, x)


def table(header: Sequence[str], rows: Sequence[Sequence[str]],
          right: Sequence[bool]) -> str:
    """A psql-like aligned table: header, a rule, the rows; right[i] says
    whether column i is right-aligned.  No trailing blanks."""
    w = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
         for i, h in enumerate(header)]

    def line(cells: Sequence[str]) -> str:
        return "|".join(" " + (c.rjust(w[i]) if right[i] else c.ljust(w[i]))
                        + " " for i, c in enumerate(cells)).rstrip()
    out: List[str] = [line(header), "+".join("-" * (x + 2) for x in w)]
    out += [line(r) for r in rows]
    return "\n".join(out)


# --- psql's output formats --------------------------------------------------
# What psql prints for a query result, so that tables once printed by psql
# are printed alike from Python: the aligned format with its default border
# 1 and -P footer=off, and the unaligned format of -At.  Cells are strings,
# None for NULL (printed empty, psql's default null display); psql's
# wrapping of cells that hold a newline is not emulated.

def display_width(text: str) -> int:
    """The columns a string takes on a terminal, as psql counts them for
    UTF-8: wide and full-width characters 2, combining marks 0, others 1."""
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _cell(value: Optional[str]) -> str:
    """A cell's text: NULL empty; a newline, which psql would wrap, refused."""
    text = "" if value is None else value
    if "\n" in text:
        raise ValueError("psql_aligned: a cell with a newline: %r" % text)
    return text


def psql_aligned(header: Sequence[str],
                 rows: Sequence[Sequence[Optional[str]]],
                 right: Sequence[bool]) -> str:
    """The text psql prints in its aligned format with -P footer=off: the
    header line, each name centred in its column (an odd space on its
    right) and followed by a blank, the last too; the rule; the rows, a
    right-aligned cell (right[i]: psql right-aligns numbers) padded on its
    left, a left-aligned one on its right, but for the last column, which
    is not padded on its right; then an empty line.  Every line ends with
    a newline."""
    cells = [[_cell(c) for c in r] for r in rows]
    last = len(header) - 1
    width = [max([display_width(h)] + [display_width(r[i]) for r in cells])
             for i, h in enumerate(header)]

    def head(i: int, name: str) -> str:
        space = width[i] - display_width(name)
        return " " * (space // 2 + 1) + name + " " * ((space + 1) // 2 + 1)

    def body(i: int, text: str) -> str:
        pad = " " * (width[i] - display_width(text))
        if right[i]:
            return " " + pad + text + ("" if i == last else " ")
        return " " + text + ("" if i == last else pad + " ")

    lines = ["|".join(head(i, h) for i, h in enumerate(header)),
             "+".join("-" * (w + 2) for w in width)]
    lines += ["|".join(body(i, c) for i, c in enumerate(r)) for r in cells]
    return "\n".join(lines) + "\n\n"


def psql_unaligned(rows: Sequence[Sequence[Optional[str]]],
                   separator: str = "|") -> str:
    """The text psql -At (unaligned, tuples only) prints, with -F separator:
    each row's cells joined by the separator, NULL empty, each row ended
    by a newline; nothing for no rows."""
    return "".join(separator.join("" if c is None else c for c in r) + "\n"
                   for r in rows)
