"""Claims across studies: "lockstudy pool" combines studies of one
comparison by a random-effects meta-analysis.

One study's interval says nothing of how the next study on the same
machine will come out: two starts of a server, or two days, differ more
than the rounds of one study (issue 52's audit: five -S 2-client studies
of the defaults against stock disagree beyond their intervals,
heterogeneity p = 0.05).  So a claim about the cost "on this kind of
machine" pools the studies: each study's mean log ratio of the variant
to the baseline over its paired rounds, with its standard error sd /
sqrt(rounds); DerSimonian and Laird's estimate of the variance tau^2 of
the true log ratios between studies (from Cochran's Q); the pooled log
ratio weighted by 1 / (se^2 + tau^2) with its normal interval, and the
Hartung-Knapp interval (a t on k - 1 degrees of freedom of the weighted
spread), which holds its level better with few studies; Cochran's test
of no heterogeneity and I^2.  A published interval without its runs
(LABEL=RATIO:LOW:HIGH[@LEVEL]) enters as the log-symmetric interval of
its level.

Studies that do not compare the same thing are refused: each must have
the baseline and the variant at the client count, and where their files
say so (a study directory's commands.txt and versions.txt), the same
workload and the same variants of the unpatched server; the same runs
twice are refused too.  Differences of the variants' settings, of the
run time or the rounds are listed under the result, not refused: the
heterogeneity they cause is what tau^2 measures.

Calls data (runs.csv, versions.txt), tables and model (nothing of it:
the pooled result is this module's, not part of a study's results.json).
"""

import hashlib
import math
import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy
from scipy import stats as scipy_stats

from . import data
from .tables import fmt, table

# a published interval on the command line: LABEL=RATIO:LOW:HIGH[@LEVEL]
INTERVAL = re.compile(r"^([^=/]+)=([0-9.]+):([0-9.]+):([0-9.]+)"
                      r"(?:@([0-9.]+))?$")


@dataclass(frozen=True)
class PoolStudy:
    """One study of the pool: its name (the path or label), its paired
    rounds (None for a published interval), its log ratio and standard
    error, its workload and the unpatched ones of the two variants (None
    where unknown), the definitions of the two variants in its VARIANTS
    (empty where unknown), the first line of its commands.txt."""
    name: str
    rounds: Optional[int]
    log_ratio: float
    se: float
    workload: Optional[str] = None
    unpatched: Optional[Tuple[str, ...]] = None
    definitions: Tuple[str, ...] = ()
    parameters: str = ""


@dataclass(frozen=True)
class Pooled:
    """The pool of studies of variant against baseline at clients: the
    fixed-effect and random-effects (DerSimonian-Laird) log ratios with
    their standard errors, tau^2, Cochran's Q with its degrees of freedom
    and p-value, I^2, the Hartung-Knapp standard error and t quantile,
    the confidence of the intervals and the notes on what differs."""
    variant: str
    baseline: str
    clients: int
    studies: Tuple[PoolStudy, ...]
    fixed: float
    fixed_se: float
    estimate: float
    se: float
    tau2: float
    q: float
    df: int
    p: float
    i2: float
    hk_se: float
    hk_t: float
    confidence: float
    notes: Tuple[str, ...] = ()

    def interval(self) -> Tuple[float, float]:
        """The random-effects interval, as ratios."""
        z = scipy_stats.norm.ppf(1 - (1 - self.confidence) / 2)
        return (math.exp(self.estimate - z * self.se),
                math.exp(self.estimate + z * self.se))

    def hk_interval(self) -> Tuple[float, float]:
        """The Hartung-Knapp interval, as ratios."""
        return (math.exp(self.estimate - self.hk_t * self.hk_se),
                math.exp(self.estimate + self.hk_t * self.hk_se))


def random_effects(y: Sequence[float], se: Sequence[float]
                   ) -> Dict[str, float]:
    """DerSimonian and Laird's random-effects meta-analysis of estimates
    y with standard errors se: fixed, fixed_se, q, df, p, tau2, i2,
    estimate, se, and hk_se (Hartung and Knapp's), at least 2 of them."""
    y, v = numpy.asarray(y, dtype=float), numpy.asarray(se, dtype=float) ** 2
    w = 1 / v
    fixed = float(numpy.sum(w * y) / numpy.sum(w))
    q = float(numpy.sum(w * (y - fixed) ** 2))
    df = len(y) - 1
    c = float(numpy.sum(w) - numpy.sum(w * w) / numpy.sum(w))
    tau2 = max(0.0, (q - df) / c)
    ws = 1 / (v + tau2)
    mu = float(numpy.sum(ws * y) / numpy.sum(ws))
    hk = float(numpy.sum(ws * (y - mu) ** 2) / df / numpy.sum(ws))
    return dict(fixed=fixed, fixed_se=math.sqrt(1 / numpy.sum(w)), q=q,
                df=df, p=float(scipy_stats.chi2.sf(q, df)), tau2=tau2,
                i2=max(0.0, (q - df) / q) if q > 0 else 0.0, estimate=mu,
                se=math.sqrt(1 / numpy.sum(ws)), hk_se=math.sqrt(hk))


def _text_file(directory: str, name: str) -> List[str]:
    try:
        with open(os.path.join(directory, name), errors="replace") as f:
            return f.read().splitlines()
    except OSError:
        return []


def _definitions(parameters: str, names: Sequence[str]) -> Tuple[str, ...]:
    """The definitions of the variants names in the VARIANTS="..." of a
    commands.txt's first line (empty without it)."""
    m = re.search(r'VARIANTS="([^"]*)"', parameters)
    if not m:
        return ()
    items = {d.split(":")[0].strip(): d.strip() for d in m.group(1).split(";")}
    return tuple(items.get(n, n) for n in names)


def study_of(path: str, baseline: str, variant: str,
             clients: int) -> PoolStudy:
    """The PoolStudy of a study directory (its runs.csv and text files) or
    of a runs.csv; InputError when it lacks the two variants at the
    client count, or has fewer than 2 paired rounds."""
    directory = path if os.path.isdir(path) else None
    runs_path = os.path.join(path, "runs.csv") if directory else path
    tps = {r.key: r.tps for r in data.index_runs(data.read_runs(runs_path)
                                                 ).values()}
    logs = [math.log(tps[(variant, clients, r)] / tps[(baseline, clients,
                                                        r)])
            for (v, c, r) in sorted(tps) if (v, c) == (variant, clients)
            and tps[(v, c, r)] > 0 and tps.get((baseline, c, r), 0) > 0]
    if len(logs) < 2:
        raise data.InputError(
            "%s does not compare %s with %s at %d clients (%d paired "
            "rounds; it has %s at %s clients)" % (
                path, variant, baseline, clients, len(logs),
                " ".join(sorted({k[0] for k in tps})),
                " ".join(map(str, sorted({k[1] for k in tps})))))
    x = numpy.asarray(logs)
    out = PoolStudy(path, len(x), float(numpy.mean(x)),
                    float(numpy.std(x, ddof=1) / math.sqrt(len(x))))
    if directory is None:
        return out
    first = (_text_file(directory, "commands.txt") or [""])[0]
    m = re.search(r"\bWORKLOAD=(\S+)", first)
    unpatched = data.read_unpatched(os.path.join(directory, "versions.txt"))
    known = os.path.exists(os.path.join(directory, "versions.txt"))
    return PoolStudy(
        path, out.rounds, out.log_ratio, out.se, m.group(1) if m else None,
        tuple(n for n in (baseline, variant) if n in unpatched)
        if known else None, _definitions(first, (baseline, variant)), first)


def interval_study(text: str) -> Optional[PoolStudy]:
    """The PoolStudy of a published interval LABEL=RATIO:LOW:HIGH[@LEVEL]
    (LEVEL in percent, 95 by default): its log ratio, and the standard
    error of the log-symmetric interval of its level; None when text is
    not one."""
    m = INTERVAL.match(text)
    if not m:
        return None
    ratio, low, high = (float(m.group(i)) for i in (2, 3, 4))
    level = float(m.group(5) or 95) / 100
    if not (0 < low <= ratio <= high and 0 < level < 1):
        raise data.InputError("%s: not RATIO:LOW:HIGH with LOW <= RATIO <= "
                              "HIGH and a level in (0, 100)" % text)
    z = scipy_stats.norm.ppf(1 - (1 - level) / 2)
    return PoolStudy(m.group(1), None, math.log(ratio),
                     (math.log(high) - math.log(low)) / (2 * z))


def _same(studies: Sequence[PoolStudy], paths: Sequence[str]
          ) -> Tuple[str, ...]:
    """InputError for studies that do not compare the same thing: another
    workload, other variants of the unpatched server, or the same runs
    twice; the notes on what else differs."""
    for what in ("workload", "unpatched"):
        seen = {getattr(s, what) for s in studies} - {None}
        if len(seen) > 1:
            raise data.InputError("the studies do not compare the same "
                                  "thing: their %s differ (%s)" % (
                                      what, "; ".join(
                                          "%s: %s" % (s.name,
                                                      getattr(s, what))
                                          for s in studies)))
    digests: Dict[str, str] = {}
    for p in paths:
        runs = os.path.join(p, "runs.csv") if os.path.isdir(p) else p
        with open(runs, "rb") as f:
            d = hashlib.sha256(f.read()).hexdigest()
        if d in digests:
            raise data.InputError("%s and %s hold the same runs"
                                  % (digests[d], p))
        digests[d] = p
    notes = []
    unknown = [s.name for s in studies if s.workload is None]
    if unknown:
        notes.append("not checked, as their files do not say (a runs.csv "
                     "without its study's commands.txt and versions.txt, "
                     "or a published interval): the workload and the "
                     "unpatched variants of " + ", ".join(unknown))
    if len({s.definitions for s in studies if s.definitions}) > 1:
        notes.append("the variants' definitions differ: " + "; ".join(
            "%s: %s" % (s.name, " / ".join(s.definitions))
            for s in studies if s.definitions))
    return tuple(notes)


def pool(inputs: Sequence[str], variants: Optional[Sequence[str]],
         clients: Optional[int], confidence: float = 0.95) -> Pooled:
    """The pool of the studies of inputs (study directories, runs.csv
    files, published intervals): variants the baseline and the variant
    (None: the first two of the first study's runs), clients the client
    count (None: the one every study of runs has).  InputError for fewer
    than 2 studies, or studies that do not compare the same thing."""
    if len(inputs) < 2:
        raise data.InputError("pool needs at least 2 studies")
    if not 0 < confidence < 1:
        raise data.InputError("--confidence must lie between 0 and 1")
    paths = [x for x in inputs if interval_study(x) is None]
    baseline, variant, clients = _comparison(paths, variants, clients)
    studies = [interval_study(x) or study_of(x, baseline, variant, clients)
               for x in inputs]
    notes = _same(studies, paths)
    r = random_effects([s.log_ratio for s in studies],
                       [s.se for s in studies])
    return Pooled(variant, baseline, clients, tuple(studies),
                  confidence=confidence, notes=notes,
                  hk_t=float(scipy_stats.t.ppf(1 - (1 - confidence) / 2,
                                               r["df"])), **r)


def _comparison(paths: Sequence[str], variants: Optional[Sequence[str]],
                clients: Optional[int]) -> Tuple[str, str, int]:
    """The baseline, the variant and the client count of the pool."""
    if not paths:
        raise data.InputError("pool needs at least one study's runs, or "
                              "--variants and --clients")
    runs = [data.read_runs(os.path.join(p, "runs.csv") if os.path.isdir(p)
                           else p) for p in paths]
    if not variants:
        variants = data.report_order(runs[0], None, "variants", paths[0])[0]
    if len(variants) < 2:
        raise data.InputError("--variants: the baseline and the variant")
    if clients is None:
        common = set.intersection(*({r.clients for r in rs} for rs in runs))
        if len(common) != 1:
            raise data.InputError("give --clients: the studies have %s in "
                                  "common" % (" ".join(map(str, sorted(
                                      common))) or "no client count"))
        clients = common.pop()
    return variants[0], variants[1], clients


def pool_text(p: Pooled) -> str:
    """The pool's table and the lines under it."""
    level = "%g%%" % (100 * p.confidence)
    z = scipy_stats.norm.ppf(1 - (1 - p.confidence) / 2)
    weights = [1 / (s.se ** 2 + p.tau2) for s in p.studies]
    rows = [[s.name, "" if s.rounds is None else str(s.rounds),
             fmt(math.exp(s.log_ratio), 3),
             fmt(math.exp(s.log_ratio - z * s.se), 3) + "-"
             + fmt(math.exp(s.log_ratio + z * s.se), 3),
             fmt(100 * w / sum(weights), 1)]
            for s, w in zip(p.studies, weights)]
    lo, hi = p.interval()
    hlo, hhi = p.hk_interval()
    out = ["pool: %s against %s at %d clients, %d studies: each study's "
           "mean log ratio over its paired rounds with its standard error "
           "(sd / sqrt(rounds)), a published interval as the log-symmetric "
           "interval of its level; random effects (DerSimonian-Laird)"
           % (p.variant, p.baseline, p.clients, len(p.studies)),
           table(["study", "rounds", "ratio", level + " CI", "weight %"],
                 rows, [False, True, True, True, True]),
           "pooled: %s [%s, %s] (%s, random effects); Hartung-Knapp "
           "interval [%s, %s] (t on %d df: holds its level better with "
           "few studies); fixed effect %s" % (
               fmt(math.exp(p.estimate), 3), fmt(lo, 3), fmt(hi, 3), level,
               fmt(hlo, 3), fmt(hhi, 3), p.df,
               fmt(math.exp(p.fixed), 3)),
           "heterogeneity: Cochran's Q = %.2f on %d df, p = %.3f; tau^2 = "
           "%.3g (tau %.2f%%: the spread of the studies' true ratios); "
           "I^2 = %.0f%%" % (p.q, p.df, p.p, p.tau2,
                             100 * math.sqrt(p.tau2), 100 * p.i2)]
    out += ["note: " + n for n in p.notes]
    return "\n".join(out) + "\n"
