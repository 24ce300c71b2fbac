"""pytest setup of the study harness's tests: bench/ on sys.path, so that
the tests import the package lockstudy; and what several test files share.

The fixture exact holds the statistics that the tests compute on their
own, independently of the package (no numpy, no scipy): the
order-statistics interval of a median by exact integer binomials
(math.comb), the signed-rank interval and Hodges-Lehmann estimate from
the Walsh averages and an integer count of the signed-rank statistic's
distribution, binomial acceptance bounds, Fisher's exact test, the split
statistic by brute force.  The fixture study builds synthetic studies.
The fixtures site and stock are the fake checkout and servers of the
parameter tests (fakesite.py).  The fixture fake_cluster stands in for
the checks of lockstudy.cluster that need a server, in the runs on the
fake server of test_runner.py and the test_runner_*.py modules.  The
fixture audited imports the modules of the package at AUDITED, the
commit issue 52's audit ran, from git, so that a simulation test can
show that the package before it missed its target (skipped without the
history).
"""

import importlib
import importlib.util
import io
import math
import os
import statistics
import subprocess
import sys
import tarfile
from fractions import Fraction
from typing import Callable, Dict, List, Sequence, Tuple

import pytest

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, BENCH)

from lockstudy import data, runner  # noqa: E402  (needs the path above)

import fakesite  # noqa: E402  (imports lockstudy)

GOLDEN = os.path.join(BENCH, "tests", "golden")


class Exact:
    """Statistics computed independently of the package."""

    @staticmethod
    def below_rank(n: int, k: int) -> int:
        """2^n P(B <= k - 1) for B ~ Binomial(n, 1/2), in integers."""
        return sum(math.comb(n, i) for i in range(k))

    @staticmethod
    def order_ci(n: int, confidence: Fraction = Fraction(19, 20)
                 ) -> Tuple[int, Fraction, bool]:
        """The rank k of the order-statistics interval [x(k), x(n+1-k)] of
        the median of n values: the largest k <= n + 1 - k whose coverage
        1 - 2 P(B <= k - 1) is at least the confidence, 1 (min-max) when
        even k = 1 falls short.  Returns k, the exact coverage and whether
        it reaches the confidence."""
        def coverage(k):
            return 1 - Fraction(2 * Exact.below_rank(n, k), 2 ** n)
        k = 1
        while k + 1 <= n + 1 - (k + 1) and coverage(k + 1) >= confidence:
            k += 1
        return k, coverage(k), coverage(k) >= confidence

    @staticmethod
    def median(values: Sequence[float]) -> float:
        x = sorted(values)
        n = len(x)
        return x[n // 2] if n % 2 else (x[n // 2 - 1] + x[n // 2]) / 2

    @staticmethod
    def expect_ci(values: Sequence[float],
                  confidence: Fraction = Fraction(19, 20)
                  ) -> Tuple[float, float, float, float, bool]:
        """Median, interval, coverage and whether it reaches the level."""
        x = sorted(values)
        k, cov, enough = Exact.order_ci(len(x), confidence)
        return Exact.median(x), x[k - 1], x[len(x) - k], float(cov), enough

    @staticmethod
    def verdict(low: float, high: float, threshold: float,
                enough: bool, mean: Tuple[float, float] = (1, 1)) -> str:
        """The verdict on a ratio interval and mean, the interval of the
        mean ratio, which equivalence needs inside the threshold too."""
        if enough and low > 1 + threshold:
            return "faster"
        if enough and high < 1 - threshold:
            return "slower"
        if enough and 1 - threshold < min(low, mean[0]) \
                and max(high, mean[1]) < 1 + threshold:
            return "equivalent (±%g%%)" % (100 * threshold)
        return "not resolved"

    @staticmethod
    def binom_pmf(N: int, p: Fraction) -> List[Fraction]:
        """The exact probabilities of 0 .. N under Binomial(N, p)."""
        a, b = p.numerator, p.denominator
        return [Fraction(math.comb(N, i) * a ** i * (b - a) ** (N - i),
                         b ** N) for i in range(N + 1)]

    @staticmethod
    def binom_bounds(N: int, p: Fraction, tail: float) -> Tuple[int, int]:
        """The acceptance interval [L, U] of Binomial(N, p): P(X < L) and
        P(X > U) each at most tail."""
        pmf = Exact.binom_pmf(N, p)
        low, acc = 0, Fraction(0)
        while acc + pmf[low] <= tail:
            acc += pmf[low]
            low += 1
        high, acc = N, Fraction(0)
        while acc + pmf[high] <= tail:
            acc += pmf[high]
            high -= 1
        return low, high

    @staticmethod
    def binom_mass(N: int, p: Fraction, low: int, high: int) -> float:
        """P(low <= X <= high) for X ~ Binomial(N, p)."""
        return float(sum(Exact.binom_pmf(N, p)[low:high + 1]))

    @staticmethod
    def fisher_greater(a: int, b: int, c: int, d: int) -> Fraction:
        """Fisher's exact test of [[a, b], [c, d]], one-sided: the
        probability of the tables of the same margins whose first cell is
        at least a."""
        row, col, n = a + b, a + c, a + b + c + d
        return sum(Fraction(math.comb(col, x) * math.comb(n - col, row - x),
                            math.comb(n, row))
                   for x in range(a, min(row, col) + 1))

    @staticmethod
    def fisher_p(a: int, b: int, c: int, d: int) -> Fraction:
        """Fisher's exact test of [[a, b], [c, d]], two-sided: the sum of
        the probabilities of the tables of the same margins no more likely
        than this one."""
        row, col, n = a + b, a + c, a + b + c + d

        def prob(x):
            return Fraction(math.comb(col, x) * math.comb(n - col, row - x),
                            math.comb(n, row))
        here = prob(a)
        return sum(prob(x) for x in range(max(0, row + col - n),
                                          min(row, col) + 1)
                   if prob(x) <= here)

    @staticmethod
    def split_g(values: Sequence[float]) -> Tuple[float, int]:
        """The split statistic of the values by brute force: over the
        splits of the sorted values into a lower group of 2 to n/2 and an
        upper group of the rest, the largest distance between the groups'
        means over their pooled standard deviation, and the lower group's
        size there (the first such)."""
        x = sorted(values)
        n = len(x)
        best = (-1.0, 0)
        for i in range(2, n // 2 + 1):
            lo, hi = x[:i], x[i:]
            m_lo, m_hi = statistics.fmean(lo), statistics.fmean(hi)
            ss = sum((v - m_lo) ** 2 for v in lo) + \
                sum((v - m_hi) ** 2 for v in hi)
            sd = math.sqrt(ss / (n - 2))
            scale = max(1, abs(m_hi), abs(m_lo))
            if sd > 1e-9 * scale:
                g = (m_hi - m_lo) / sd
            else:
                g = math.inf if m_hi - m_lo > 1e-9 * scale else 0.0
            if g > best[0]:
                best = (g, i)
        return best

    @staticmethod
    def signed_rank_counts(n: int) -> List[int]:
        """The number of subsets of the ranks 1 .. n with each sum 0 ..
        n(n+1)/2, by recursion over the ranks in integers: 2^n P(W = w)
        for Wilcoxon's signed-rank statistic under symmetry."""
        counts = [1]
        for i in range(1, n + 1):
            grown = counts + [0] * i
            for w, c in enumerate(counts):
                grown[w + i] += c
            counts = grown
        return counts

    @staticmethod
    def signed_rank_ci(values: Sequence[float],
                       confidence: Fraction = Fraction(19, 20)
                       ) -> Tuple[float, float, float, Fraction, bool]:
        """Hodges-Lehmann estimate (median of the Walsh averages), the
        signed-rank interval [w(k), w(N+1-k)] of the sorted Walsh averages
        for the largest k whose coverage 1 - 2 P(W <= k - 1) is at least
        the confidence (k = 1 when none is), its exact coverage and
        whether it reaches the confidence."""
        x = list(values)
        n = len(x)
        walsh = sorted((x[i] + x[j]) / 2 for i in range(n)
                       for j in range(i, n))
        big_n = len(walsh)
        counts = Exact.signed_rank_counts(n)

        def coverage(k):
            return 1 - Fraction(2 * sum(counts[:k]), 2 ** n)
        k = 1
        while k + 1 <= big_n + 1 - (k + 1) and coverage(k + 1) >= confidence:
            k += 1
        return (Exact.median(walsh), walsh[k - 1], walsh[big_n - k],
                coverage(k), coverage(k) >= confidence)


@pytest.fixture
def exact() -> type:
    return Exact


class Study:
    """Synthetic studies: tps by (variant, clients, round), and runs."""

    @staticmethod
    def grid(variants: Sequence[str], clients: Sequence[int], rounds: int,
             tps: Callable[[str, int, int], float]
             ) -> Dict[Tuple[str, int, int], float]:
        """tps(variant, clients, round) of every point and round, rounded
        to the 3 decimals of runs.csv, in the order a study runs them."""
        return {(s, c, r): round(float(tps(s, c, r)), 3)
                for r in range(1, rounds + 1) for s in variants
                for c in clients}

    @staticmethod
    def runs(tps: Dict[Tuple[str, int, int], float],
             positions: bool = True) -> List[data.Run]:
        """The runs of a grid of tps; the position of a variant in its
        round is its rank among the round's variants, in the grid's order
        (without positions, None)."""
        order: Dict[Tuple[int, int], List[str]] = {}
        out = []
        for (s, c, r), t in tps.items():
            seen = order.setdefault((c, r), [])
            seen.append(s)
            out.append(data.Run(s, c, r, t, len(seen) if positions else None))
        return out


@pytest.fixture
def study() -> type:
    return Study


@pytest.fixture
def site(tmp_path) -> fakesite.Site:
    """The throwaway checkout, caller's directory and fake server of the
    parameter tests (fakesite.py)."""
    return fakesite.Site(tmp_path)


@pytest.fixture
def stock(site) -> str:
    """The site's stock server, where the Makefile puts it: beside the
    base's build, <build>-stock.  Its pg_config."""
    return fakesite.fake_server(os.path.join(site.tmp, "pg-stock"))


@pytest.fixture
def fake_cluster(monkeypatch):
    monkeypatch.setattr(runner.cluster, "check_settings",
                        lambda cur, label, v, log: None)
    monkeypatch.setattr(runner.cluster, "settings_in_force",
                        lambda cur: ["work_mem|4096|kB|default"])
    # the settings left from variant.conf after a reload: (label, names)
    resets = []
    monkeypatch.setattr(runner.cluster, "check_reset",
                        lambda cur, label, names, log:
                        resets.append((label, list(names))))
    return resets


# the package the audit of issue 52 ran
AUDITED = "667e9a1"


def package_at(commit: str, tmp: str) -> str:
    """The package bench/lockstudy of commit, imported from a copy under
    tmp as lockstudy_<commit> (its modules import each other
    relatively); its name.  Skipped without the history."""
    top = os.path.dirname(BENCH)
    try:
        tar = subprocess.run(
            ["git", "-c", "safe.directory=*", "-C", top, "archive", commit,
             "bench/lockstudy"], check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("no git history with %s" % commit)
    with tarfile.open(fileobj=io.BytesIO(tar)) as f:
        f.extractall(tmp)
    name = "lockstudy_" + commit
    where = os.path.join(tmp, "bench", "lockstudy")
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(where, "__init__.py"),
        submodule_search_locations=[where])
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    return name


@pytest.fixture(scope="session")
def audited(tmp_path_factory) -> Callable:
    """A function of a module's name (stats, drift, ...) that returns
    that module of the package at AUDITED."""
    name = package_at(AUDITED, str(tmp_path_factory.mktemp("audited")))
    yield lambda module: importlib.import_module(name + "." + module)
    for m in [m for m in sys.modules if m.split(".")[0] == name]:
        del sys.modules[m]
