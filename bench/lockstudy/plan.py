"""The plan of a study: the order of every round, the estimate of its
time, and the text the study prints before its first run.

The variant order of the rounds comes from module starts (design's
Williams order, by groups of variants that share a server start when
SHARED_START=1), the client order of each round from
design.client_order(); a warm-up round, unless WARMUP_ROUND=0, takes
round 1's orders, so that the recorded rounds are those the seed gives
without it.  The estimate counts each server start with its warm-up run,
each reload of a shared start, and each run, the warm-up round's
included.

Calls builds, starts, design, spec.
"""

from dataclasses import dataclass
from typing import List, Mapping, Optional, Sequence, Tuple

from . import builds, design, spec, starts

# estimated seconds: a server start and stop about 3 s, a run about 1 s
# more than its DURATION (connections, counter reset and recording), a
# reload that puts the next variant of a shared start in force about 1 s
START_COST = 3
RUN_COST = 1
RELOAD_COST = 1


def hms(seconds: float) -> str:
    """A time as the plan and the progress lines show it: 12m05s."""
    s = int(seconds)
    return "%dm%02ds" % (s // 60, s % 60)


def order_text(groups: Sequence[Sequence[str]]) -> str:
    """A round's order as the plan and commands.txt show it: the variants
    in order, those of a shared server start in brackets."""
    return " ".join(g[0] if len(g) == 1 else "[%s]" % " ".join(g)
                    for g in groups)


def rounds_run(study: spec.Study) -> int:
    """The rounds that run: REPEAT, and the warm-up round unless
    WARMUP_ROUND=0."""
    return study.repeat + (1 if study.warmup_round else 0)


def costs(study: spec.Study) -> Tuple[int, int]:
    """Estimated seconds of a server start with its warm-up run, and of
    one run."""
    return START_COST + study.warmup, study.duration + RUN_COST


@dataclass
class Plan:
    """The orders of a study: groups, the variants (by index) that share a
    server start; round_groups, each round's order as groups of names;
    round_clients, each round's client order; the warm-up round's orders
    (empty without one); the estimated seconds of the whole study; the
    warning of an unbalanced order, or None."""
    groups: List[Tuple[int, ...]]
    round_groups: List[List[List[str]]]
    round_clients: List[List[int]]
    warmup_groups: List[List[str]]
    warmup_clients: List[int]
    total: int
    warning: Optional[str]

    @property
    def rounds(self) -> List[List[str]]:
        """Each round's variant order."""
        return [[name for g in groups for name in g]
                for groups in self.round_groups]

    @property
    def warmup_order(self) -> List[str]:
        return [name for g in self.warmup_groups for name in g]


def draw(study: spec.Study, bindirs: Sequence[str],
         contexts: Mapping[str, str]) -> Plan:
    """The orders and the estimate of study, whose variants run the
    servers of bindirs; contexts: pg_settings.context of their settings
    (used with SHARED_START=1)."""
    s = study
    groups = starts.groups(s.variants, bindirs, contexts) \
        if s.shared_start else starts.singletons(len(s.variants))
    round_groups, warning = starts.round_orders(s.seed, s.repeat, s.names,
                                                groups)
    round_clients = design.client_order(s.seed, s.repeat, list(s.clients))
    warmup_groups: List[List[str]] = []
    warmup_clients: List[int] = []
    if s.warmup_round:
        # round 1's orders: the warm-up round comes out of the same seeded
        # design and leaves the recorded rounds as they were
        warmup_groups = [list(g) for g in round_groups[0]]
        warmup_clients = list(round_clients[0])
    slot, run = costs(s)
    n, nc, ns = len(s.variants), len(s.clients), len(groups)
    rounds = rounds_run(s)
    total = rounds * (ns * slot + (n - ns) * RELOAD_COST + n * nc * run)
    return Plan(groups, round_groups, round_clients, warmup_groups,
                warmup_clients, total, warning)


def lines(study: spec.Study, p: Plan, variant_builds: Sequence,
          nproc: int) -> List[str]:
    """The plan as the study prints it: the workload, the runs, the
    server starts and the estimate (the warm-up round's included), which
    variants share a start, the builds, then the order of every round."""
    s = study
    n, nc = len(s.variants), len(s.clients)
    rounds = rounds_run(s)
    if s.warmup_round:
        warm = ("after a warm-up round of %d runs that are not recorded"
                % (n * nc))
    else:
        warm = "no warm-up round (WARMUP_ROUND=0)"
    out = [
        "pg_lockstat study: workload %s (%s)%s, %ds per run, %d CPUs"
        % (s.workload.name, s.workload.describe(),
           "" if s.workload.sysbench else ", scale %d" % s.scale,
           s.duration, nproc),
        "plan: %d rounds x %d variants x %d client counts (%s) = %d runs "
        "of %ds, %s; %d server starts, each followed by a %ds warm-up run "
        "at %d clients that is not recorded; baseline %s; variant order "
        "seeded by SEED=%d; estimated %s"
        % (s.repeat, n, nc, " ".join(map(str, s.clients)), s.repeat * n * nc,
           s.duration, warm, rounds * len(p.groups), s.warmup, s.max_clients,
           s.names[0], s.seed, hms(p.total))]
    if s.shared_start:
        out.append(starts.describe(s.names, p.groups))
    if s.variants_given is not None:
        out += builds.plan_lines(s.names, s.variants, variant_builds)
    if s.warmup_round:
        out.append("warm-up round: %s; clients %s; not recorded" % (
            order_text(p.warmup_groups), " ".join(map(str,
                                                      p.warmup_clients))))
    for r, groups in enumerate(p.round_groups):
        out.append("round %d: %s; clients %s" % (
            r + 1, order_text(groups),
            " ".join(map(str, p.round_clients[r]))))
    return out
