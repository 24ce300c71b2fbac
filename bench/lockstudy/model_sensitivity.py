"""Table (s)'s part of the study's model (lockstudy.model): what
lockstudy.sensitivity computes, saved in results.json under
"sensitivity".

Calls no other module of the package.
"""

from dataclasses import dataclass
from typing import Optional, Tuple


@dataclass(frozen=True)
class SensitivityRow:
    """A row of table (s) (lockstudy.sensitivity): a tranche at a client
    count, its complete rounds, the delays (us), the mean hold added per
    transaction at each (us); the slopes of ln tps per us added per
    transaction as (mean, low, high): inside and control against the
    baseline, and inside minus control (effect); the baseline's hold per
    transaction (us), the extrapolated gain of a 10 % shorter hold as
    (estimate, low, high) fractions, busy and ceiling as in (u), the
    asymptotic bound's slope; the hold added per transaction by the
    control, the delays per acquisition of the tranche in the inside and
    in the control runs (None without delays.csv), and the gain if 10 %
    of the hold were removed (along the inside slope)."""
    tranche: str
    clients: int
    rounds: int
    delays_us: Tuple[float, ...]
    added_us: Tuple[float, ...]
    inside: Tuple[float, ...]
    control: Tuple[float, ...]
    effect: Tuple[float, ...]
    verdict: str
    hold_us: Optional[float]
    gain: Optional[Tuple[float, ...]]
    busy: Optional[float]
    ceiling_tps: Optional[float]
    ceiling_slope: Optional[float]
    agreement: str
    control_added_us: Tuple[float, ...] = ()
    inside_per_acquire: Optional[float] = None
    control_per_acquire: Optional[float] = None
    removed: Optional[Tuple[float, ...]] = None


@dataclass(frozen=True)
class SensitivityResult:
    """Table (s): the baseline, each interval's confidence after
    Bonferroni over family rows, the rows, and the delayed variants left
    out for want of the other mode."""
    baseline: str
    confidence: float
    family: int
    rows: Tuple[SensitivityRow, ...] = ()
    unpaired: Tuple[str, ...] = ()
