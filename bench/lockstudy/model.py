"""What a study found, as one typed model: the data that the statistics
fill and that the report, the tables, the CSVs and the plots only render.

pyperf's split is the pattern: this module holds the data (pyperf's
_bench), stats, mechanism and analysis compute it (_compare), report,
report_locks, results and plots show it (_cli).  Every class is a frozen
dataclass; a study's StudyResult is saved as results.json in its run
directory (save(), load()), with SCHEMA_VERSION, so that a saved study can
be rendered again, or read by other tools, without parsing text tables.

In results.json a float that is not finite is written as the string
"nan", "inf" or "-inf" (JSON has no such numbers); tuples are lists.

Calls no other module of the package but jsonio, which writes and reads
its dataclasses as JSON, and model_sensitivity, which holds table (s)'s.
"""

import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Optional, Tuple

from . import jsonio
# table (s)'s part of the model, in a module of its own
from .model_sensitivity import SensitivityResult, SensitivityRow  # noqa: F401
from .jsonio import decode_json, encode_json  # noqa: F401 (floor.py's)

# the version of results.json's layout: raised when a field changes its
# meaning or goes; a reader refuses another version
SCHEMA_VERSION = 4

RunKey = Tuple[str, int, int]		# (variant, clients, round)


@dataclass(frozen=True)
class RunRecord:
    """One run of runs.csv.  position and transactions are None when the
    file has no such column (or, for position, an empty field)."""
    variant: str
    clients: int
    round: int
    tps: float
    position: Optional[int] = None
    transactions: Optional[float] = None

    @property
    def key(self) -> RunKey:
        return (self.variant, self.clients, self.round)


@dataclass(frozen=True)
class PointResult:
    """One point (variant, clients) of table (a) and points.csv: its tps
    over the rounds and, for a variant but the baseline, its comparison
    with the baseline in the same rounds.  The fields are the columns of
    points.csv, in order."""
    variant: str
    clients: int
    n: int					# rounds
    median: float			# tps
    lo: float				# the smallest and largest tps
    hi: float
    bifurcated: bool		# the collapse test split its runs
    cv: float				# coefficient of variation of tps
    tps_ci_low: float		# the interval of the median tps
    tps_ci_high: float
    pairs: int				# rounds paired with the baseline
    ratio: Optional[float]	# Hodges-Lehmann ratio to the baseline
    ci_low: Optional[float]
    ci_high: Optional[float]
    coverage: float			# exact coverage of the ratio's interval
    # (the tps interval's for the baseline)
    verdict: str			# baseline, faster, slower, equivalent (±T),
    # not resolved, bimodal, withheld: rounds dependent, no pairs
    # the smallest difference (a fraction) its rounds resolve with 80 %
    # power at its ratio noise, None when they cannot give a verdict
    resolves: Optional[float]
    # the rounds that would show equivalence within the threshold with
    # 80 % power at its ratio noise
    rounds_equivalent: Optional[int]
    bad_runs: int
    # Fisher's exact test, one-sided, of more bad runs than the baseline's
    fisher_p: Optional[float]
    base_bad_runs: Optional[int]
    ratio_noise: float		# nan for the baseline
    # its runs at 0 tps, left out of the ratios and the collapse test
    zero_runs: int = 0
    # the mean log ratio as a ratio (the geometric mean of the paired
    # ratios), and its Student t interval at the ratio's level: a collapse
    # moves it where it leaves the Hodges-Lehmann estimate alone
    mean_ratio: Optional[float] = None
    mean_low: Optional[float] = None
    mean_high: Optional[float] = None
    # the check of its rounds for independence (SerialCheck's fields;
    # None when not checked) and whether they failed it, its own check
    # or the study's
    lag1: Optional[float] = None
    lag1_p: Optional[float] = None
    change_p: Optional[float] = None
    change_round: Optional[int] = None
    serial_p: Optional[float] = None
    dependent: bool = False


# the columns of points.csv, in order
POINT_COLUMNS = tuple(f.name for f in dataclasses.fields(PointResult))


@dataclass(frozen=True)
class SerialCheck:
    """The check of a point's rounds for independence (lockstudy.serial):
    the lag-1 autocorrelation of the ranks of its log ratios in round
    order and its one-sided permutation p-value, the p-value of Pettitt's
    change-point statistic and the rounds before the change it points
    at, and the permutation p-value of the smaller of the two."""
    lag1: float
    lag1_p: float
    change_p: float
    change_round: int
    point_p: float


@dataclass(frozen=True)
class Resolution:
    """What a number of rounds resolves at a ratio noise, with 80 % power:
    the smallest difference (a fraction) a verdict finds and the rounds
    that show equivalence within the threshold ("lockstudy resolution")."""
    rounds: int
    noise: float
    resolves: Optional[float]
    rounds_equivalent: Optional[int]


@dataclass(frozen=True)
class Comparisons:
    """The comparisons of a study's ratios together: their number, the
    correction and the level each ratio interval was taken at, the bound
    on the chance of a false verdict (the sum of the non-coverage of the
    intervals that gave a verdict), and the fewest rounds whose interval
    reaches that level; family, the comparisons the correction is over:
    count, or more when these are part of a larger family (compare
    --family)."""
    count: int
    correction: str			# bonferroni or none
    ratio_confidence: float
    false_verdict_bound: float
    min_rounds: int
    family: int


@dataclass(frozen=True)
class ChanceRange:
    """The range that chance gives a number of the drift or position
    table, and whether the number is outside it (not chance)."""
    low: float
    high: float
    outside: bool


@dataclass(frozen=True)
class DriftCell:
    """The drift of a point: median tps of the last third of the rounds
    over the first third, and its range (None when none was taken)."""
    variant: str
    clients: int
    drift: float
    chance: Optional[ChanceRange] = None


@dataclass(frozen=True)
class PositionCell:
    """The median ratio to the baseline of a variant's runs at one position
    in their round, over all client counts, the number of ratios and the
    range of the median."""
    variant: str
    position: int
    median: float
    n: int
    chance: Optional[ChanceRange] = None


@dataclass(frozen=True)
class SlotEffect:
    """SHARED_START's slot effect (lockstudy.slots): the tps of a run
    after the first in its server start over that of the first, from the
    runs of the variants that share a start, within each start; its log,
    the standard error of the log, the two-sided p-value of no effect,
    the runs and the residual degrees of freedom of the fit."""
    effect: float
    log_effect: float
    se: float
    p: float
    runs: int
    df: int


@dataclass(frozen=True)
class FirstSlotPoint:
    """A variant that shares a server start, against a baseline in
    another start, at one client count: its ratio (Hodges-Lehmann) and
    interval at the study's ratio level from the rounds where both ran
    first in their start only (None without such rounds), the rounds
    used, the share of the paired rounds where the variant ran after the
    first and where the baseline did, and the bias that the slot effect
    puts on table (a)'s ratio (a ratio: the effect to the power of the
    difference of the two shares)."""
    variant: str
    clients: int
    pairs: int
    ratio: Optional[float]
    ci_low: Optional[float]
    ci_high: Optional[float]
    coverage: float
    later: float
    base_later: float
    bias: Optional[float]


@dataclass(frozen=True)
class SlotResult:
    """The slot table of a study with shared server starts: the groups of
    variants that shared a start, the slot effect (None when no run
    followed another in its start), and the first-slot comparisons."""
    groups: Tuple[Tuple[str, ...], ...]
    effect: Optional[SlotEffect]
    points: Tuple[FirstSlotPoint, ...] = ()


@dataclass(frozen=True)
class FloorPoint:
    """One client count of an A/A study: the ratio of its second variant
    to its first (the same server), interval, ratio noise and verdict."""
    clients: int
    pairs: int
    ratio: Optional[float]
    ci_low: Optional[float]
    ci_high: Optional[float]
    ratio_noise: float
    verdict: str


@dataclass(frozen=True)
class Floor:
    """The floor an A/A study measured on its machine (lockstudy.floor):
    the host, the study (its directory's name), the first line of its
    commands.txt, its rounds, the level of its ratio intervals and the
    threshold; per client count its point; the median ratio noise, the
    largest distance of an interval's end from 1 (a fraction), what its
    rounds resolve at the median noise, and the false verdicts (faster or
    slower: every one is false) of its comparisons."""
    host: str
    study: str
    parameters: str
    rounds: int
    ratio_confidence: float
    threshold: float
    points: Tuple[FloorPoint, ...]
    noise: float
    half_width: float
    resolves: Optional[float]
    false_verdicts: int
    comparisons: int


@dataclass(frozen=True)
class MachineFloor:
    """The floor a study shows under table (a): the host, the directory
    of its floors, and the last floor recorded there (None: none)."""
    host: str
    where: str
    last: Optional[Floor]


@dataclass(frozen=True)
class TpsResult:
    """The tps side of a study: tables (a), collapse, noise, drift and
    position.  variants in report order, the first the baseline."""
    variants: Tuple[str, ...]
    threshold: float		# a fraction (0.02 for 2 %)
    confidence: float		# of each tps interval
    comparisons: Comparisons
    points: Tuple[PointResult, ...]
    drift: Tuple[DriftCell, ...]
    positions: Tuple[PositionCell, ...] = ()
    # the positions of the position table, 0 for none (runs without
    # positions, or a study of one variant)
    npos: int = 0
    # the study-wide check of the rounds for independence
    # (lockstudy.serial), None when no point has enough rounds
    serial_p: Optional[float] = None
    # SHARED_START's slot effect and the first-slot comparisons, None
    # without shared starts
    slots: Optional[SlotResult] = None
    # the study's own floor when it is an A/A study, and the machine's
    # last floor, shown under table (a) (None: not looked for)
    floor: Optional[Floor] = None
    machine_floor: Optional[MachineFloor] = None


@dataclass(frozen=True)
class MechanismRow:
    """One row of table (m) and of mechanism.csv, its columns in order."""
    variant: str
    clients: int
    kind: str				# lwlock or spin
    name: str				# tranche, or "func file:line"
    measure: str
    rounds: int				# the rounds paired
    base_rate: float		# per 1000 transactions, over the paired rounds
    variant_rate: float
    ratio: float			# variant_rate / base_rate, inf if base 0
    ci_low: float			# the interval of the ratio, the sign-flip
    ci_high: float			# test inverted; nan with too few events
    p: float				# the sign-flip test
    q: float				# min(1, K p), K the point's family
    change: float			# the sort key
    marker: str				# "*", "tps" (changed per transaction,
    # not per second) or ""
    # the events of each side over the paired rounds: its counts, or
    # those its measure is made of (the blocks of wait_ms, the contended
    # waits of spins)
    base_events: float = 0.0
    variant_events: float = 0.0
    # the sign-flip test of the counts per second, nan when not made
    p_second: float = math.nan


# the columns of mechanism.csv
MECHANISM_COLUMNS = tuple(f.name for f in dataclasses.fields(MechanismRow))


@dataclass(frozen=True)
class MechanismPoint:
    """A variant other than the baseline at one client count: the rounds
    paired with the baseline's and the rows, sorted by the change, the
    family of their correction and the tps ratio."""
    variant: str
    clients: int
    rounds: Tuple[int, ...]
    rows: Tuple[MechanismRow, ...]
    # Tarone's K: the rows that count in the correction of q
    family: int = 0
    # the variant's transactions per second over the baseline's, over
    # the paired rounds; nan when not known
    tps_ratio: float = math.nan


@dataclass(frozen=True)
class MechanismResult:
    """Table (m): the points of the variants of the patched server;
    variants in report order, the first the baseline; by_kind: the LWLock
    rows count the workload's processes only (kinds.csv); spin_by_kind:
    the spin-wait rows too (spinkinds.csv)."""
    variants: Tuple[str, ...]
    unpatched: Tuple[str, ...]
    confidence: float
    by_kind: bool
    points: Tuple[MechanismPoint, ...]
    spin_by_kind: bool = False


@dataclass(frozen=True)
class LockRow:
    """One tranche of table (b): sums over the rounds; the shares are of
    every tranche's blocks and spin delays, in percent (None where there
    are none); times in milliseconds and microseconds (None where the
    view had none)."""
    name: str
    acquires: Optional[int]
    blocks: Optional[int]
    spin_delays: Optional[int]
    blocks_pct: Optional[float]
    spin_delays_pct: Optional[float]
    wait_ms: Optional[float]
    hold_samples: Optional[int]
    mean_hold_us: Optional[float]
    max_hold_us: Optional[float]


@dataclass(frozen=True)
class SpinRow:
    """One spin-wait call site of table (c): sums over the rounds."""
    func: str
    site: str				# file:line
    contended: Optional[int]
    spins: Optional[int]
    delays: Optional[int]
    wait_ms: Optional[float]
    tas_attempts: Optional[int]
    unlocked_skips: Optional[int]
    skips_per_contended: Optional[float]


@dataclass(frozen=True)
class LockShare:
    """One line of a variant's lock-share plot: a top tranche's share of
    the blocks and spin delays of every tranche at a client count."""
    rank: int
    clients: int
    name: str
    blocks_pct: float
    spin_delays_pct: float


@dataclass(frozen=True)
class LockTables:
    """Tables (b) and (c) of a variant at the study's highest client
    count, and the lock shares of its plot; available False for a variant
    of the unpatched server, which has none of them."""
    variant: str
    clients: int
    rounds: int
    top: int
    available: bool
    locks: Tuple[LockRow, ...] = ()
    spins: Tuple[SpinRow, ...] = ()
    shares: Tuple[LockShare, ...] = ()


@dataclass(frozen=True)
class BusyLock:
    """A tranche of table (u) over a point's rounds: exclusive acquires and
    hold samples, mean sampled hold (us), busy (a fraction) and tps / busy;
    None without a sample (busy 0: no ceiling)."""
    name: str
    acquires: int
    hold_samples: Optional[int]
    mean_hold_us: Optional[float]
    busy: Optional[float]
    ceiling_tps: Optional[float]


@dataclass(frozen=True)
class BusyPoint:
    """Table (u) of a point: its rounds with lock counts, their seconds
    and tps, its busiest tranches (lockstudy.busiest) and versus, the
    baseline's busiest at this client count with this point's numbers."""
    variant: str
    clients: int
    rounds: int
    seconds: float
    tps: float
    locks: Tuple[BusyLock, ...] = ()
    versus: Tuple[BusyLock, ...] = ()	# () for the baseline


@dataclass(frozen=True)
class StudyMeta:
    """What the study's text files say: the machine, the versions, the
    commands and the settings, each a tuple of its lines (empty when the
    file is missing), and the variants of the unpatched server."""
    machine: Tuple[str, ...] = ()
    versions: Tuple[str, ...] = ()
    commands: Tuple[str, ...] = ()
    settings: Tuple[str, ...] = ()
    unpatched: Tuple[str, ...] = ()


@dataclass(frozen=True)
class StudyResult:
    """All a study found: its metadata, its runs, the tps side, table (m)
    (None with one variant), the lock tables of each variant, (u) and
    (s) (None without delayed variants)."""
    meta: StudyMeta
    runs: Tuple[RunRecord, ...]
    tps: TpsResult
    mechanism: Optional[MechanismResult]
    locks: Tuple[LockTables, ...]
    schema: int = SCHEMA_VERSION
    busiest: Tuple[BusyPoint, ...] = ()	# table (u)
    sensitivity: Optional[SensitivityResult] = None	# table (s)


class SchemaError(Exception):
    """A results.json this version cannot read."""


def to_json(result: StudyResult) -> str:
    """The text of results.json."""
    return jsonio.encode_json(result)


def from_json(text: str) -> StudyResult:
    """The StudyResult of a results.json's text; SchemaError for another
    schema version."""
    x = json.loads(text)
    if not isinstance(x, dict) or x.get("schema") != SCHEMA_VERSION:
        raise SchemaError("results.json: schema %r, this version reads %d"
                          % (x.get("schema") if isinstance(x, dict)
                             else None, SCHEMA_VERSION))
    return jsonio.decode(StudyResult, x)


def save(result: StudyResult, path: str) -> None:
    """Write results.json."""
    with open(path, "w") as f:
        f.write(to_json(result))


def load(path: str) -> StudyResult:
    """Read results.json."""
    with open(path) as f:
        return from_json(f.read())
