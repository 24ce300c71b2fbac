"""make run SENSITIVITY: the variants it makes, checked.

SENSITIVITY="WALWrite ProcArray" DELAY_US="0.5 2" makes the variants
"none" (no delay, the baseline) and, per tranche and delay d (us; a
tranche may give its own: SENSITIVITY="WALWrite:10,40 ProcArray:0.5,2"),
<tranche>-in-<d>, pg_lockstat.delay_mode = inside: d busy-waited inside
every hold of the tranche, and <tranche>-ctl-<d>, delay_mode = before:
the same d just before each acquisition, without the lock, the control
(the same CPU, nothing serialized).  VARIANTS of one variant gives the
baseline its name, and its patch files and settings to every variant
(VARIANTS="base: pg_lockstat.hold_sample_every=101").  A delay's "."
is written "p" in the name (0.5: 0p5) and a long tranche name is cut so
that the name fits VARIANTS' 31 characters.  The variants differ only in
reloadable settings, so under SHARED_START=1 (SENSITIVITY's default) a
round runs them all in one server start.

check_tranches() checks, before the rounds, that the server knows each
tranche the variants delay; the runner records the delays each run of a
delayed variant injected (INJECTED before and after it) in DELAYS_FILE,
which lockstudy.sensitivity reads for table (s).

Calls spec (SpecError, Variant) and data (number).
"""

import re
from typing import Callable, Dict, List, Sequence, Tuple

from .data import number
from .spec import SpecError, Variant

# the names of pg_lockstat.delay_mode's two values in the variants' names
MODES = (("inside", "in"), ("before", "ctl"))
BASELINE = "none"
NAME_MAX = 31
DELAY_MIN, DELAY_MAX = 0.1, 1000.0
SETTING = "pg_lockstat.delay_"
# the delays each run of a delayed variant injected (the study writes it)
DELAYS_FILE = "delays.csv"
DELAYS_HEADER = "variant,clients,round,injected_delays"
INJECTED = "SELECT injected_delays FROM pg_lockstat_status"


def _checked_delays(where: str, delays: Sequence[str]) -> List[str]:
    """A list of delays (us), checked; where names it in the messages."""
    for d in delays:
        # at most 3 decimals: the server shows the setting with 6
        # significant digits, and settings.txt must tell the delays apart
        x = number(d) if re.fullmatch(r"[0-9]{1,4}(\.[0-9]{1,3})?", d) \
            else None
        if x is None or not DELAY_MIN <= x <= DELAY_MAX:
            raise SpecError('%s: "%s" is not a delay from %g to %g '
                            "microseconds with at most 3 decimals"
                            % (where, d, DELAY_MIN, DELAY_MAX))
        if [number(e) for e in delays].count(x) > 1:
            raise SpecError("%s: delay %s appears twice" % (where, d))
    return list(delays)


def parse(tranches_text: str, delays_text: str
          ) -> List[Tuple[str, List[str]]]:
    """SENSITIVITY's tranches, each with its delays: its own
    (tranche:d1,d2,...) or else DELAY_US's; checked."""
    items = tranches_text.split()
    common = delays_text.split()
    if common:
        _checked_delays("DELAY_US", common)
    out: List[Tuple[str, List[str]]] = []
    if not items:
        raise SpecError("SENSITIVITY names no tranche")
    for item in items:
        t, colon, own = item.partition(":")
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]{0,62}", t):
            raise SpecError('SENSITIVITY: "%s" is not an LWLock tranche name '
                            "as pg_lwlock_stats.tranche shows it (letters, "
                            "digits and _)" % t)
        if t in [x for x, _ in out]:
            raise SpecError('SENSITIVITY: tranche "%s" appears twice' % t)
        if not (own if colon else common):
            raise SpecError("SENSITIVITY: tranche %s has no delays: give "
                            "DELAY_US, the delays in microseconds (from %g "
                            'to %g), for example DELAY_US="0.5 2", or its '
                            "own, %s:0.5,2" % (t, DELAY_MIN, DELAY_MAX, t))
        out.append((t, _checked_delays("SENSITIVITY: %s" % t, own.split(","))
                    if colon else _checked_delays("DELAY_US", common)))
    return out


def variant_name(tranche: str, short_mode: str, delay: str) -> str:
    """The name of the variant of tranche at delay in a mode ("in",
    "ctl"): lower case, the delay's "." as "p", the tranche cut to fit."""
    tail = "-%s-%s" % (short_mode, delay.replace(".", "p"))
    return tranche.lower()[:NAME_MAX - len(tail)] + tail


def variants_text(tranches: Sequence[Tuple[str, Sequence[str]]],
                  base: str = BASELINE, items: str = "") -> str:
    """The VARIANTS of the tranches and their delays (parse()), on a
    baseline named base with items, patch files and settings that every
    variant has (VARIANTS of one variant); SpecError if they set a
    delay or name the unpatched server."""
    items = " ".join(items.split())
    if not base.strip():
        raise SpecError("SENSITIVITY: the base of VARIANTS has no name")
    for x in items.split():
        if x == "unpatched" or x.startswith(SETTING):
            raise SpecError('SENSITIVITY: the base "%s" of VARIANTS must run '
                            "pg_lockstat without a delay of its own, not %s"
                            % (base.strip(), x))
    out = ["%s: %s" % (base.strip(), items) if items else base.strip()]
    made: Dict[str, str] = {base.strip(): "the base"}
    for t, delays in tranches:
        for d in delays:
            for mode, short in MODES:
                name = variant_name(t, short, d)
                if name in made:
                    raise SpecError(
                        "SENSITIVITY: %s at %s us and %s give the same "
                        'variant name "%s" (lower case, cut to %d '
                        "characters)" % (t, d, made[name], name, NAME_MAX))
                made[name] = "%s at %s us" % (t, d)
                out.append("%s: %s%stranche=%s %sus=%s %smode=%s" % (
                    variant_name(t, short, d), items + " " if items else "",
                    SETTING, t, SETTING, d, SETTING, mode))
    return "; ".join(out)


def check_tranches(sql: Callable[..., list],
                   variants: Sequence[Variant]) -> None:
    """Before the rounds, on the base server with pg_lockstat created:
    that the server knows each tranche the variants delay, by ALTER
    SYSTEM SET pg_lockstat.delay_tranche (which refuses an unknown one
    with 22023 and writes nothing), then RESET.  sql(what, query,
    params) runs a query and fails the study's step with the server's
    error."""
    for t in dict.fromkeys(dict(v.settings).get(SETTING + "tranche")
                           for v in variants if not v.unpatched):
        if t:
            what = "checking %stranche = '%s' (ALTER SYSTEM)" % (SETTING, t)
            sql(what, "ALTER SYSTEM SET %stranche = %%s" % SETTING, (t,))
            sql(what, "ALTER SYSTEM RESET %stranche" % SETTING)


def delayed(v: Variant) -> bool:
    """Whether variant v runs pg_lockstat with a delayed tranche."""
    return not v.unpatched and bool(dict(v.settings).get(SETTING + "tranche"))
