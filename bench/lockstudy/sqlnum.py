"""The arithmetic of the SQL that tables (b) and (c) and the lock shares
were once computed with, so that the report prints the same digits.

sum(bigint) is numeric, exact: Decimal (in the default context, exact
below 10^28).  sum(double precision) is a float8 sum, added in the order
of the rows (the file's, which for one variant, client count and name is
the order of the rounds, the order in which the study inserted them),
and a float8 cast to numeric goes through its 15 significant digits
(float8_numeric).  round(numeric, n) rounds
half away from zero and keeps n decimals.  numeric / numeric: computed
here to 60 digits, PostgreSQL's to at least 16 significant ones, then
rounded to 2 decimals; both give the exact quotient's rounding while
the divisor is below 10^12 (a quotient that is no tie lies at least
1 / (200 divisor) from one).  NULL is None: a sum of NULLs only is NULL.

Calls no other module of the package.
"""

from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple


def sql_sum(values: Iterable[Any]) -> Any:
    """sum(): the total of the values not NULL, in their order; NULL if
    there are none."""
    total = None
    for x in values:
        if x is not None:
            total = x if total is None else total + x
    return total


def sql_add(a: Any, b: Any) -> Any:
    """a + b, NULL if either is."""
    return None if a is None or b is None else a + b


def float8_numeric(x: Optional[float]) -> Optional[Decimal]:
    """A float8 cast to numeric: its 15 significant digits."""
    return None if x is None else Decimal("%.15g" % x)


def pg_round(x: Optional[Decimal], digits: int) -> Optional[Decimal]:
    """round(numeric, digits): half away from zero, digits decimals."""
    if x is None:
        return None
    return x.quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP,
                      context=Context(prec=80))


def numeric_text(x: Optional[Decimal]) -> Optional[str]:
    """A numeric as PostgreSQL prints it: no exponent; NULL None."""
    return None if x is None else format(x, "f")


def descending(x: Any) -> Tuple:
    """Sort key of ORDER BY x DESC: NULLs first."""
    return (0,) if x is None else (1, -x)


def group_by(rows: Iterable[Dict[str, Any]],
             key: Callable[[Dict[str, Any]], Any]) -> Dict[Any, List[Dict]]:
    """GROUP BY: the rows of each key, in their order."""
    groups: Dict[Any, List[Dict]] = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    return groups


def sql_max(values: Iterable[Any]) -> Any:
    """max() and greatest(): the largest value not NULL; NULL if none."""
    return max((x for x in values if x is not None), default=None)


def quotient(a: Optional[Decimal],
             b: Optional[Decimal]) -> Optional[Decimal]:
    """round(a / nullif(b, 0), 2) in numeric."""
    if a is None or b is None or b == 0:
        return None
    return pg_round(Context(prec=60).divide(a, b), 2)


def percent(part: Optional[Decimal],
            total: Optional[Decimal]) -> Optional[Decimal]:
    """round(100 * part / nullif(total, 0), 2) in numeric."""
    return quotient(None if part is None else 100 * part, total)


def float_round(x: Optional[float], digits: int) -> Optional[str]:
    """round(x::numeric, digits) of a float8, as text."""
    return numeric_text(pg_round(float8_numeric(x), digits))


def coalesce0(x: Optional[Decimal]) -> Decimal:
    """coalesce(x, 0)."""
    return Decimal(0) if x is None else x
