"""Text tables of the report: numbers with their decimals, and the
aligned form that every table of the report is laid out in.

Calls no other module of the package.
"""

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import List, Optional, Sequence


def fmt(x: Optional[float], digits: int = 0) -> str:
    """A number with that many decimals; empty for None and NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return "%.*f" % (digits, x)


def pct(x: Optional[float], digits: int = 0) -> str:
    """A fraction as a percentage with that many decimals and a % sign;
    empty for None and NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    return "%.*f%%" % (digits, 100 * x)


def half_up(x: Optional[float], digits: int) -> str:
    """A number with that many decimals: its 15 significant digits (a sum
    of floats 5.4499999999999993 is 5.45) rounded half away from zero
    (0.125 to 0.13, where "%.2f" gives 0.12), as the SQL that once printed
    tables (b) and (c) rounded; empty for None."""
    if x is None:
        return ""
    return str(Decimal("%.15g" % x).quantize(Decimal(1).scaleb(-digits),
                                             rounding=ROUND_HALF_UP))


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
