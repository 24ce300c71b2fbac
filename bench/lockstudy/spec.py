"""The study's specification: what its checked parameters become.

Study holds the parameters of a study, Variant one server variant it
compares (the first the baseline), Workload what its runs run; params
makes them from the environment (variants and workloads parse VARIANTS,
STRATEGIES and WORKLOAD), and every refusal of theirs is a SpecError with
the message the user sees.  Calls no other module of the package.
"""

from dataclasses import dataclass
from typing import List, Optional, Tuple

# the name of the program in its messages
ME = "lockstudy"


class SpecError(Exception):
    """A parameter the study refuses; the message says which and why."""


@dataclass(frozen=True)
class Variant:
    """One server variant: patches are absolute paths, settings (name,
    value) pairs; strategy is its pg_lockstat.spin_strategy, if it sets
    one; unpatched, whether it runs the unpatched server of
    STOCK_PG_CONFIG (then without patches, and its settings have
    shared_preload_libraries, '' unless VARIANTS gives it)."""
    name: str
    patches: Tuple[str, ...] = ()
    settings: Tuple[Tuple[str, str], ...] = ()
    strategy: Optional[str] = None
    unpatched: bool = False

    def settings_lines(self) -> List[str]:
        """The settings as postgresql.conf lines."""
        return ["%s = '%s'" % s for s in self.settings]


@dataclass(frozen=True)
class Workload:
    """A workload: its name, the program that runs it ("pgbench" or
    "sysbench"), the program's options, the server settings of its
    script header ("name = value" lines) and the SQL statements of its
    "-- setup:" lines, run once after pgbench -i.  For pgbench the options
    of every run (-S, -f script, -M prepared, ...); for sysbench the oltp
    script, then --tables and --table-size, which its prepare and every
    run share."""
    name: str
    args: Tuple[str, ...]
    settings: Tuple[str, ...] = ()
    tool: str = "pgbench"
    setup: Tuple[str, ...] = ()

    @property
    def sysbench(self) -> bool:
        return self.tool == "sysbench"

    def describe(self) -> str:
        """Its options, and its settings if any, as the plan shows them."""
        text = " ".join(self.args)
        if self.sysbench:
            text = "sysbench " + text
        if self.settings:
            text += "; " + ", ".join(self.settings)
        return text


@dataclass(frozen=True)
class Study:
    """The checked parameters of a study."""
    pg_config: str
    bindir: str
    scale: int
    clients: Tuple[int, ...]
    duration: int
    warmup: int
    workload: Workload
    threads: Optional[int]
    repeat: int
    seed: int
    threshold: str
    run_dir: str
    variant_dir: str
    variants: Tuple[Variant, ...]
    # VARIANTS as given, or None for a study of STRATEGIES
    variants_given: Optional[str]
    # whether a warm-up round, not recorded, runs before the REPEAT rounds
    warmup_round: bool = True
    # whether variants that differ only in settings a reload changes share
    # a server start per round (module starts)
    shared_start: bool = False
    # the unpatched server's pg_config and bindir: empty unless a variant
    # is unpatched
    stock_pg_config: str = ""
    stock_bindir: str = ""
    # sysbench's --tables and --table-size: 0 unless the workload is
    # sysbench's
    sysbench_tables: int = 0
    sysbench_table_size: int = 0

    @property
    def names(self) -> List[str]:
        return [v.name for v in self.variants]

    @property
    def unpatched(self) -> List[str]:
        """The names of the variants that run the unpatched server."""
        return [v.name for v in self.variants if v.unpatched]

    @property
    def aa(self) -> bool:
        """Whether it is an A/A study: two variants or more, all one
        server with the same settings (lockstudy.floor)."""
        first = self.variants[0]
        return len(self.variants) > 1 and all(
            (v.patches, v.settings, v.strategy, v.unpatched)
            == (first.patches, first.settings, first.strategy,
                first.unpatched) for v in self.variants)

    @property
    def max_clients(self) -> int:
        return max(self.clients)

    def compared(self) -> str:
        """What the study compares, as commands.txt records it."""
        if self.variants_given is not None:
            return 'VARIANTS="%s"' % self.variants_given
        return 'STRATEGIES="%s"' % " ".join(self.names)

    def parameters(self) -> str:
        """The parameters as the first line of commands.txt; sysbench's
        tables at its end, for a sysbench workload only, then SHARED_START=1
        if it is set, then AA=1 for an A/A study."""
        text = ("SCALE=%d %s CLIENTS=\"%s\" DURATION=%d WARMUP=%d "
                "WARMUP_ROUND=%d WORKLOAD=%s REPEAT=%d SEED=%d THRESHOLD=%s "
                "THREADS=%s"
                % (self.scale, self.compared(),
                   " ".join(map(str, self.clients)), self.duration,
                   self.warmup, self.warmup_round, self.workload.name,
                   self.repeat, self.seed,
                   self.threshold,
                   "" if self.threads is None else self.threads))
        if self.workload.sysbench:
            text += " SYSBENCH_TABLES=%d SYSBENCH_TABLE_SIZE=%d" % (
                self.sysbench_tables, self.sysbench_table_size)
        if self.shared_start:
            text += " SHARED_START=1"
        if self.aa:
            text += " AA=1"
        return text
