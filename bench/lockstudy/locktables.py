"""What tables (b) and (c) and the lock-share plots show, computed from
locks.csv and spins.csv into the model (model.LockTables).

(b): per tranche of a variant at a client count, the sums over the rounds
of its acquires, blocks and spin delays, their shares of every tranche's,
the wait time and the sampled holds (their number, mean and longest); the
top tranches by blocks, then spin delays, then acquires, then name.  (c):
per spin-wait call site with contended waits, the sums of its contended
waits, spins, delays, wait time, TAS attempts and unlocked skips, and the
skips per contended wait; the top sites by contended waits, then spins,
then "file:line", then function.  The lock shares: for each of the
variant's top tranches by blocks plus spin delays over the whole study
(then by name), at each client count, its share of every tranche's
blocks and spin delays there.

Counts are Python ints (exact), times floats summed in the order of the
file's rows; an empty field is None, a sum of Nones only is None, as SQL's
sum() of NULLs.  Calls data and model.
"""

from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, \
    Tuple

from .data import InputError, RunKey, number, read_rows
from .model import LockRow, LockShare, LockTables, SpinRow

# The columns of locks.csv and spins.csv that the tables read: text,
# bigint (read as int) and double precision (read as float).
LOCK_COLUMNS = (("tranche",),
                ("sh_acquires", "ex_acquires", "blocks", "spin_delays",
                 "sh_hold_samples", "ex_hold_samples"),
                ("wait_time", "sh_hold_time", "ex_hold_time",
                 "max_ex_hold_time", "max_sh_hold_time"))
SPIN_COLUMNS = (("func", "file", "line"),
                ("contended", "spins", "delays", "tas_attempts",
                 "unlocked_skips"),
                ("wait_time",))
# the rows of (b) and (c) shown, and the tranches of a lock-share plot
TOP = 10
TOP_SHARES = 5

StatRows = List[Tuple[RunKey, Dict[str, Any]]]


def read_stats(path: str, columns: Tuple[Tuple[str, ...], ...]) -> StatRows:
    """The rows of locks.csv or spins.csv as (run, fields): the text
    columns as they are, the bigint ones as int, the double precision
    ones as float, an empty field None."""
    texts, ints, floats = columns
    out = []
    for line, run, r in read_rows(path, texts + ints + floats):
        fields: Dict[str, Any] = {c: r[c] for c in texts}
        for c in ints + floats:
            x = number(r[c]) if r[c] != "" else None
            if r[c] != "" and (x is None or c in ints and not x.is_integer()):
                raise InputError("%s line %d: %s %s: not a number"
                                 % (path, line, c, r[c]))
            fields[c] = x if x is None or c in floats else int(x)
        out.append((run, fields))
    return out


def total(values: Iterable[Any]) -> Any:
    """The sum of the values not None, in their order; None if none."""
    out = None
    for x in values:
        if x is not None:
            out = x if out is None else out + x
    return out


def _add(a: Any, b: Any) -> Any:
    """a + b, None if either is."""
    return None if a is None or b is None else a + b


def _share(part: Optional[int], whole: Optional[int]) -> Optional[float]:
    """part of whole in percent; None where whole is None or 0."""
    if part is None or not whole:
        return None
    return 100 * part / whole


def _descending(x: Any) -> Tuple:
    """Sort key of the most first, None before all."""
    return (0,) if x is None else (1, -x)


def _group(rows: Iterable[Dict[str, Any]],
           key: Callable[[Dict[str, Any]], Any]) -> Dict[Any, List[Dict]]:
    """The rows of each key, in their order."""
    groups: Dict[Any, List[Dict]] = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    return groups


def _of(rows: StatRows, variant: str, clients: int) -> List[Dict[str, Any]]:
    """The fields of the rows of a variant at a client count."""
    return [r for (v, c, _), r in rows if v == variant and c == clients]


def _lock_row(name: str, g: List[Dict[str, Any]]) -> LockRow:
    """One tranche of (b) before its shares, from its rows."""
    samples = total(_add(r["sh_hold_samples"], r["ex_hold_samples"])
                    for r in g)
    hold = total(_add(r["sh_hold_time"], r["ex_hold_time"]) for r in g)
    longest = max((x for r in g for x in (r["max_ex_hold_time"],
                                          r["max_sh_hold_time"])
                   if x is not None), default=None)
    return LockRow(
        name, total(_add(r["sh_acquires"], r["ex_acquires"]) for r in g),
        total(r["blocks"] for r in g), total(r["spin_delays"] for r in g),
        None, None, total(r["wait_time"] for r in g), samples,
        1000 * hold / samples if hold is not None and samples else None,
        1000 * longest if samples and longest is not None else None)


def lock_rows(rows: StatRows, variant: str, clients: int,
              top: int = TOP) -> Tuple[LockRow, ...]:
    """The rows of (b) of a variant at a client count, in order."""
    sums = [_lock_row(n, g) for n, g in _group(
        _of(rows, variant, clients), lambda r: r["tranche"]).items()]
    blocks = total(s.blocks for s in sums)
    spins = total(s.spin_delays for s in sums)
    sums.sort(key=lambda s: (_descending(s.blocks),
                             _descending(s.spin_delays),
                             _descending(s.acquires), s.name))
    return tuple(_with_shares(s, blocks, spins) for s in sums[:top])


def _with_shares(s: LockRow, blocks: Optional[int],
                 spins: Optional[int]) -> LockRow:
    """s with its shares of every tranche's blocks and spin delays."""
    return LockRow(s.name, s.acquires, s.blocks, s.spin_delays,
                   _share(s.blocks, blocks), _share(s.spin_delays, spins),
                   s.wait_ms, s.hold_samples, s.mean_hold_us, s.max_hold_us)


def spin_rows(rows: StatRows, variant: str, clients: int,
              top: int = TOP) -> Tuple[SpinRow, ...]:
    """The rows of (c) of a variant at a client count, in order: the call
    sites with contended waits."""
    out = []
    for (func, file, line), g in _group(
            _of(rows, variant, clients),
            lambda r: (r["func"], r["file"], r["line"])).items():
        s = {c: total(r[c] for r in g) for c in SPIN_COLUMNS[1]
             + SPIN_COLUMNS[2]}
        if not s["contended"]:
            continue
        skips = s["unlocked_skips"]
        out.append(SpinRow(func, "%s:%s" % (file, line), s["contended"],
                           s["spins"], s["delays"], s["wait_time"],
                           s["tas_attempts"], skips,
                           None if skips is None
                           else skips / s["contended"]))
    out.sort(key=lambda s: (_descending(s.contended), _descending(s.spins),
                            s.site, s.func))
    return tuple(out[:top])


def shares(rows: StatRows, variant: str,
           top: int = TOP_SHARES) -> Tuple[LockShare, ...]:
    """The lines of the variant's lock-share plot."""
    per = {k: (total(r["blocks"] for r in g),
               total(r["spin_delays"] for r in g))
           for k, g in _group((dict(r, clients=c) for (v, c, _), r in rows
                               if v == variant),
                              lambda r: (r["clients"], r["tranche"])).items()}
    score: Dict[str, Any] = {}
    for (_, name), (b, s) in per.items():
        score[name] = total((score.get(name), _add(b, s)))
    ranked = sorted(score, key=lambda n: (_descending(score[n]), n))
    wholes = {c: [total(per[k][i] for k in per if k[0] == c)
                  for i in (0, 1)] for c, _ in per}
    return tuple(
        LockShare(rank, c, name,
                  *(_share(per[(c, name)][i], wholes[c][i]) or 0.0
                    for i in (0, 1)))
        for rank, name in enumerate(ranked[:top], start=1)
        for c in sorted(c for (c, n) in per if n == name))


def lock_tables(locks_path: str, spins_path: str, variants: Sequence[str],
                clients: int, rounds: int,
                unpatched: Sequence[str] = ()) -> Tuple[LockTables, ...]:
    """(b), (c) and the lock shares of each variant, at the client count
    (the study's highest; rounds: its rounds, named in the headings); a
    variant of unpatched has none."""
    locks = read_stats(locks_path, LOCK_COLUMNS)
    spins = read_stats(spins_path, SPIN_COLUMNS)
    return tuple(
        LockTables(v, clients, rounds, TOP, False) if v in unpatched
        else LockTables(v, clients, rounds, TOP, True,
                        lock_rows(locks, v, clients),
                        spin_rows(spins, v, clients), shares(locks, v))
        for v in variants)
