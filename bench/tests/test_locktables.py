"""Tests of lockstudy.locktables: what tables (b) and (c) and the lock
shares show, computed into the model, and their text (report_locks).

Golden files (golden/locks-*/README says how each was made): the lock
side of a real study (locks-eviction) and of a synthetic one
(locks-synthetic), as the queries of 4e541ba computed them in SQL and
psql printed them, regenerated once in the layout of table (a) when the
tables moved into Python: test_numbers_agree_with_the_psql_goldens checks
that every number agrees with the psql ones (read from git at 667e9a1) to
the digits printed.  On small random studies every number is also
computed here, in fractions.
"""

import csv
import os
import random
import subprocess
from fractions import Fraction

import pytest

from lockstudy import locktables as lt
from lockstudy import model
from lockstudy import report_locks as rl
from lockstudy.data import InputError

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
EVICTION = os.path.join(GOLDEN, "locks-eviction")
SYNTHETIC = os.path.join(GOLDEN, "locks-synthetic")
TOP = os.path.dirname(os.path.dirname(os.path.dirname(GOLDEN)))
# the last commit whose goldens psql printed
PSQL_GOLDENS = "667e9a1"
NOT_AVAILABLE = "not available: %s runs the unpatched server (no pg_lockstat)"


def golden(directory, name):
    with open(os.path.join(directory, name), newline="") as f:
        return f.read()


def tables(directory, variants, clients, rounds, unpatched=()):
    return lt.lock_tables(os.path.join(directory, "locks.csv"),
                          os.path.join(directory, "spins.csv"), variants,
                          clients, rounds, unpatched)


def eviction_tables():
    return tables(EVICTION, ["tas", "ttas"], 4, 6)


def synthetic_tables(unpatched=()):
    return tables(SYNTHETIC, ["base", "exp", "calm"], 16, 4, unpatched)


# --- the golden files ------------------------------------------------------

def test_golden_top_tables_and_lock_shares():
    want = golden(EVICTION, "report.txt")
    t = eviction_tables()
    assert rl.top_tables(t) == want[want.index("\n(b) top"):]
    for x in t:
        assert rl.lock_shares(x) == golden(EVICTION,
                                           "locks-%s.dat" % x.variant)


def test_golden_synthetic():
    t = synthetic_tables()
    assert rl.top_tables(t) == golden(SYNTHETIC, "tables.txt")
    for x in t:
        assert rl.lock_shares(x) == golden(SYNTHETIC,
                                           "locks-%s.dat" % x.variant)


def test_golden_with_the_new_column_name(tmp_path):
    """The study's files with their first column renamed variant."""
    for name in ("locks.csv", "spins.csv"):
        text = golden(EVICTION, name)
        assert text.startswith("strategy,")
        (tmp_path / name).write_text("variant" + text[len("strategy"):])
    assert tables(str(tmp_path), ["tas", "ttas"], 4, 6) == eviction_tables()


def _old(path):
    """A golden file as psql printed it, from git; None outside a git
    checkout holding that commit."""
    try:
        return subprocess.run(
            ["git", "-C", TOP, "show", "%s:%s" % (PSQL_GOLDENS, path)],
            check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def _cells(text, separator):
    """The lines of a table's text as lists of cells, rules and empty
    lines left out."""
    return [[c.strip() for c in line.split(separator)]
            for line in text.split("\n")
            if line.strip() and not set(line) <= set("-+")]


def _agree(old, new):
    """The same word, or numbers that agree to the digits old printed."""
    if old == new:
        return True
    try:
        a, b = float(old), float(new)
    except ValueError:
        return False
    digits = len(old.split(".")[1]) if "." in old else 0
    return abs(a - b) <= 0.5 * 10 ** -digits + 1e-9


@pytest.mark.parametrize("path,separator", [
    ("locks-eviction/report.txt", "|"),
    ("locks-eviction/locks-tas.dat", " "),
    ("locks-eviction/locks-ttas.dat", " "),
    ("locks-synthetic/tables.txt", "|"),
    ("locks-synthetic/locks-base.dat", " "),
    ("locks-synthetic/locks-exp.dat", " "),
    ("locks-synthetic/locks-calm.dat", " ")])
def test_numbers_agree_with_the_psql_goldens(path, separator):
    old = _old("bench/tests/golden/" + path)
    if old is None:
        pytest.skip("not a git checkout with commit %s" % PSQL_GOLDENS)
    new = golden(GOLDEN, path)
    old_cells, new_cells = _cells(old, separator), _cells(new, separator)
    assert [len(r) for r in old_cells] == [len(r) for r in new_cells]
    for o, n in zip(old_cells, new_cells):
        assert all(_agree(a, b) for a, b in zip(o, n)), (o, n)


def test_top_tables_of_an_unpatched_variant():
    t = synthetic_tables(["exp"])
    base, exp, calm = t
    assert not exp.available and exp.locks == () and exp.shares == ()
    assert rl.top_tables(t) == (
        "\n" + rl.top_locks(base) +
        "\n(b) top LWLocks: %s\n" % (NOT_AVAILABLE % "exp") +
        "\n" + rl.top_locks(calm) +
        "\n" + rl.top_spins(base) +
        "\n(c) top spin-wait call sites: %s\n" % (NOT_AVAILABLE % "exp") +
        "\n" + rl.top_spins(calm))
    assert rl.lock_shares(exp) == "# %s\n" % (NOT_AVAILABLE % "exp")
    assert (base, calm) == (synthetic_tables()[0], synthetic_tables()[2])


# --- computed here ----------------------------------------------------------

def small_study(rng):
    """Rows of locks.csv and spins.csv of 2 variants, 2 client counts and
    3 rounds, as dicts of text fields; tas_attempts sometimes NULL."""
    locks, spins = [], []
    for v in ("p", "q"):
        for c in (1, 8):
            for r in (1, 2, 3):
                for t in ("A b", "Cc", "Dd", "Ee", "Ff", "Gg"):
                    samples = rng.choice((0, 3, 10))
                    locks.append({
                        "variant": v, "clients": c, "round": r, "tranche": t,
                        "sh_acquires": rng.randrange(10 ** 6),
                        "ex_acquires": rng.randrange(10 ** 3),
                        "blocks": rng.choice((0, 1, 2, 5, 40)),
                        "spin_delays": rng.choice((0, 0, 3)),
                        "wait_time": rng.choice((0.1, 0.25, 0.35, 1e-3)),
                        "sh_hold_samples": samples, "ex_hold_samples":
                        1 if samples else 0, "sh_hold_time": rng.choice(
                            (0.0125, 0.1)) * samples, "ex_hold_time": 0.05,
                        "max_ex_hold_time": rng.choice((0.00025, 0.35)),
                        "max_sh_hold_time": 0.001})
                for line, func in ((10, "f"), (20, "g"), (30, "f")):
                    spins.append({
                        "variant": v, "clients": c, "round": r, "file": "x.c",
                        "line": line, "func": func,
                        "contended": rng.choice((0, 1, 7)),
                        "spins": rng.randrange(100), "delays": 1,
                        "wait_time": rng.choice((0.05, 0.15)),
                        "tas_attempts": "" if func == "g" or r == 2
                        else rng.randrange(30),
                        "unlocked_skips": "" if func == "g" else 5})
    return locks, spins


def write_dicts(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path



def float_sum(values):
    total = 0.0
    for x in values:
        total = total + x
    return total


def expect_locks(rows, v, c):
    """(b) computed here: the fields of each tranche, in order."""
    mine = [r for r in rows if r["variant"] == v and r["clients"] == c]
    sums = {}
    for n in sorted({r["tranche"] for r in mine}):
        g = [r for r in mine if r["tranche"] == n]
        samples = sum(r["sh_hold_samples"] + r["ex_hold_samples"] for r in g)
        hold = float_sum(r["sh_hold_time"] + r["ex_hold_time"] for r in g)
        longest = max(max(r["max_ex_hold_time"], r["max_sh_hold_time"])
                      for r in g)
        sums[n] = [n, sum(r["sh_acquires"] + r["ex_acquires"] for r in g),
                   sum(r["blocks"] for r in g),
                   sum(r["spin_delays"] for r in g), None, None,
                   float_sum(r["wait_time"] for r in g), samples,
                   1000 * hold / samples if samples else None,
                   1000 * longest if samples else None]
    blk = sum(s[2] for s in sums.values())
    spin = sum(s[3] for s in sums.values())
    for s in sums.values():
        s[4] = float(Fraction(100 * s[2], blk)) if blk else None
        s[5] = float(Fraction(100 * s[3], spin)) if spin else None
    return sorted(sums.values(),
                  key=lambda s: (-s[2], -s[3], -s[1], s[0]))[:10]


def expect_spins(rows, v, c):
    """(c) computed here: the fields of each call site, in order."""
    mine = [r for r in rows if r["variant"] == v and r["clients"] == c]
    out = []
    for site in sorted({(r["func"], r["file"], r["line"]) for r in mine}):
        g = [r for r in mine if (r["func"], r["file"], r["line"]) == site]
        contended = sum(r["contended"] for r in g)
        tas = [r["tas_attempts"] for r in g if r["tas_attempts"] != ""]
        skips = [r["unlocked_skips"] for r in g if r["unlocked_skips"] != ""]
        if contended > 0:
            out.append([site[0], "%s:%s" % site[1:], contended,
                        sum(r["spins"] for r in g),
                        sum(r["delays"] for r in g),
                        float_sum(r["wait_time"] for r in g),
                        sum(tas) if tas else None,
                        sum(skips) if skips else None,
                        float(Fraction(sum(skips), contended))
                        if skips else None])
    out.sort(key=lambda x: (-x[2], -x[3], x[1], x[0]))
    return out[:10]


def same(got, want):
    """A model row's fields equal the ones computed here, floats to 1e-12."""
    assert len(got) == len(want)
    for x, y in zip(got, want):
        assert x == (pytest.approx(y, rel=1e-12)
                     if isinstance(y, float) else y)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_top_tables_computed_here(tmp_path, seed):
    locks, spins = small_study(random.Random(seed))
    lrows = lt.read_stats(write_dicts(str(tmp_path / "locks.csv"), locks),
                          lt.LOCK_COLUMNS)
    srows = lt.read_stats(write_dicts(str(tmp_path / "spins.csv"), spins),
                          lt.SPIN_COLUMNS)
    for v in ("p", "q"):
        for c in (1, 8):
            got = lt.lock_rows(lrows, v, c)
            want = expect_locks(locks, v, c)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                same([getattr(g, f) for f in g.__dataclass_fields__], w)
            got = lt.spin_rows(srows, v, c)
            want = expect_spins(spins, v, c)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                same([getattr(g, f) for f in g.__dataclass_fields__], w)
            t = model.LockTables(v, c, 3, 10, True, spins=got)
            assert rl.top_spins(t).endswith(
                "rounds\nno contended spin waits\n") == (want == [])


def expect_shares(rows, v):
    """The lock shares computed here: (rank, clients, name, blk%, spin%)."""
    per = {}
    for r in rows:
        if r["variant"] == v:
            b, s = per.get((r["clients"], r["tranche"]), (0, 0))
            per[(r["clients"], r["tranche"])] = (b + r["blocks"],
                                                 s + r["spin_delays"])
    score = {}
    for (c, n), (b, s) in per.items():
        score[n] = score.get(n, 0) + b + s
    out = []
    for rank, n in enumerate(sorted(score, key=lambda n: (-score[n], n))[:5],
                             1):
        for c in sorted(c for (c, m) in per if m == n):
            cells = [rank, c, n]
            for i in (0, 1):
                whole = sum(x[i] for (c2, _), x in per.items() if c2 == c)
                cells.append(float(Fraction(100 * per[(c, n)][i], whole))
                             if whole else 0.0)
            out.append(cells)
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_lock_shares_computed_here(tmp_path, seed):
    locks, _ = small_study(random.Random(seed))
    lrows = lt.read_stats(write_dicts(str(tmp_path / "locks.csv"), locks),
                          lt.LOCK_COLUMNS)
    for v in ("p", "q"):
        got = lt.shares(lrows, v)
        want = expect_shares(locks, v)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same([g.rank, g.clients, g.name, g.blocks_pct,
                  g.spin_delays_pct], w)
    assert lt.shares(lrows, "absent") == ()


def test_stat_rows_errors(tmp_path):
    locks, spins = small_study(random.Random(4))
    locks[2]["blocks"] = "x"
    path = write_dicts(str(tmp_path / "locks.csv"), locks)
    with pytest.raises(InputError) as e:
        lt.read_stats(path, lt.LOCK_COLUMNS)
    assert str(e.value) == "%s line 4: blocks x: not a number" % path
    locks[2]["blocks"] = "1.5"
    path = write_dicts(str(tmp_path / "locks.csv"), locks)
    with pytest.raises(InputError) as e:
        lt.read_stats(path, lt.LOCK_COLUMNS)
    assert str(e.value) == "%s line 4: blocks 1.5: not a number" % path
    # a whole number written with a fraction or an exponent is that number
    # (it raised ValueError from int() before)
    locks[2]["blocks"], locks[3]["blocks"] = "1100.0", "2e3"
    path = write_dicts(str(tmp_path / "locks.csv"), locks)
    rows = lt.read_stats(path, lt.LOCK_COLUMNS)
    assert (rows[2][1]["blocks"], rows[3][1]["blocks"]) == (1100, 2000)
    assert all(type(f["blocks"]) is int for _, f in rows)
    for r in spins:
        del r["delays"]
    path = write_dicts(str(tmp_path / "spins.csv"), spins)
    with pytest.raises(InputError) as e:
        lt.read_stats(path, lt.SPIN_COLUMNS)
    assert str(e.value) == "%s: missing column delays" % path


def test_no_mutable_module_globals():
    for name, value in vars(lt).items():
        if name.isupper():
            assert isinstance(value, (int, float, str, tuple)), name
