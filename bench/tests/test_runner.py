"""Tests of lockstudy.runner, the parts that need no server (the study's
lock, directory and records have moved on to lockstudy.records, and are
tested here with runner's hms() and clean_environment()).

pg_float() prints a number as PostgreSQL's float8out does (shortest
round-trip digits; fixed-point for decimal exponents from -4 to 14, else
d.ddde+XX), checked against a reference written here from
src/common/d2s.c's rules; hms() as run-study.sh's printf; new_rundir()
takes -2, -3, ... after a directory of the same second; take_lock()
refuses a second study while another process holds the lock, naming its
pid, and frees it when that process dies; Recorder writes runs.csv by
round, position and clients and locks.csv/spins.csv by variant, clients,
round and the most blocks (contended, spins) first, from the text a fake
cursor's COPY gives; clean_environment() drops what run-study.sh's loop
dropped.  plan() and run_rounds() on a fake server (FakeRun): the
warm-up round runs every variant at every client count in round 1's
orders before round 1, is counted in the plan's server starts and
estimate, is marked in commands.txt and the progress lines, and leaves
nothing in the records; WARMUP_ROUND=0 leaves it out.  A variant of the
unpatched server runs its own build, checked, the same runs, without the
counter resets and recordings; the plan and versions.txt name its build,
versions.txt the unpatched variants; Recorder.headers() gives the files
their columns when no run records a row.  A sysbench workload on the fake
server: its prepare, once, then VACUUM ANALYZE; its runs sysbench's, one
thread per client, in sysbench's logs, recorded from sysbench's output
as pgbench's are; a run without a summary, and one that dies, fail
naming the step and the log; versions.txt names sysbench.  No server.
"""

import csv
import dataclasses
import decimal
import fcntl
import io
import math
import os
import random
import re
import struct
import subprocess
import sys

import pytest

from lockstudy import builds, design, records, runner, spec

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- pg_float ----------------------------------------------------------------

def float8out(x):
    """PostgreSQL's float8out with extra_float_digits = 1 (the default):
    the shortest digits that read back as x (Python's repr has them too),
    laid out as src/common/d2s.c's to_chars() does.  (Above 1e16 PG's Ryu
    keeps the exact digits of some integers, 1.8014398509481992e+16 for
    repr's 1.801439850948199e+16; no tps or run time gets there.)"""
    if x == 0:
        return "-0" if math.copysign(1, x) < 0 else "0"
    sign = "-" if x < 0 else ""
    t = decimal.Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, t.digits)).rstrip("0")
    exp = len(t.digits) + t.exponent - 1
    if -4 <= exp < 15:
        if exp < 0:
            return sign + "0." + "0" * (-exp - 1) + digits
        whole = digits[:exp + 1].ljust(exp + 1, "0")
        frac = digits[exp + 1:]
        return sign + whole + ("." + frac if frac else "")
    return "%s%s%se%s%02d" % (sign, digits[0],
                              "." + digits[1:] if len(digits) > 1 else "",
                              "-" if exp < 0 else "+", abs(exp))


@pytest.mark.parametrize("text, expected", [
    ("5.010", "5.01"), ("5.0", "5"), ("5", "5"), ("5.000", "5"),
    ("13646.339097", "13646.339097"), ("13646.339000", "13646.339"),
    ("0.000", "0"), ("0.100", "0.1"), ("100.000", "100"),
    ("1234.500000", "1234.5"), ("0.0001", "0.0001"), ("0.00001", "1e-05"),
    ("0.000012", "1.2e-05"), ("123456789012345", "123456789012345"),
    ("99999999999999.9", "99999999999999.9"), ("1e16", "1e+16"),
    ("0.1234567890123456789", "0.12345678901234568"),
    ("12345678901234567890", "1.2345678901234567e+19")])
def test_pg_float(text, expected):
    assert float8out(float(text)) == expected  # the reference itself
    assert records.pg_float(text) == expected


# (the bits of a double, float8out's text) from PostgreSQL 18's
# src/test/regress/expected/float8.out
FLOAT8_OUT = [
    ("3ee4f8b588e368f1", "1e-05"),
    ("3f1a36e2eb1c432c", "9.999999999999999e-05"),
    ("3f1a36e2eb1c432d", "0.0001"),
    ("3f847ae147ae147a", "0.009999999999999998"),
    ("3feffffffffffff0", "0.9999999999999982"),
    ("3ff0000000000001", "1.0000000000000002"), ("3ff3333333333333", "1.2"),
    ("4024000000000000", "10"), ("4059000000000001", "100.00000000000001"),
    ("405edd3c07fb4c93", "123.4567890123456"), ("40f86a0000000000", "100000"),
    ("419d6f34540ca453", "123456789.0123456"),
    ("42d6bcc41e900000", "100000000000000"),
    ("42dc12218377de66", "123456789012345.6"),
    ("430c6bf52633ffff", "999999999999999.9"), ("4341c37937e08000", "1e+16"),
    ("4376345785d8a000", "1e+17")]
# those from 1e15 on, where the module fails
FLOAT8_OUT_FROM_1E15 = [
    ("430c6bf526340000", "1e+15"),
    ("430c6bf526340001", "1.0000000000000001e+15"),
    ("4341c37937e07fff", "9.999999999999998e+15")]


def _double(bits):
    return struct.unpack(">d", bytes.fromhex(bits))[0]


@pytest.mark.parametrize("bits, expected", FLOAT8_OUT)
def test_pg_float_as_postgresql_regression_output(bits, expected):
    x = _double(bits)
    assert float8out(x) == expected
    assert records.pg_float(repr(x)) == expected


@pytest.mark.parametrize("bits, expected", FLOAT8_OUT_FROM_1E15)
def test_pg_float_as_postgresql_regression_output_from_1e15(bits, expected):
    x = _double(bits)
    assert float8out(x) == expected
    assert records.pg_float(repr(x)) == expected


def test_pg_float_of_what_the_study_records():
    """tps as pgbench prints it (%f) and the seconds of a run (%.3f)."""
    rng = random.Random(20240101)
    for _ in range(2000):
        for text in ("%f" % rng.uniform(0, 200000),
                     "%.3f" % rng.uniform(0, 100),
                     "%f" % rng.randrange(100000)):
            assert records.pg_float(text) == float8out(float(text)), text


@pytest.mark.parametrize("text, expected", [
    ("1e15", "1e+15"), ("1234567890123456", "1.234567890123456e+15"),
    ("1234567890123456.5", "1.2345678901234565e+15"), ("-0.0", "-0")])
def test_pg_float_from_1e15(text, expected):
    assert float8out(float(text)) == expected
    assert records.pg_float(text) == expected


# --- hms ---------------------------------------------------------------------

def _bash_hms(seconds):
    return subprocess.run(
        ["bash", "-c", "hms() { printf '%dm%02ds' $(( $1 / 60 )) "
         "$(( $1 % 60 )); }; hms " + str(seconds)], capture_output=True,
        text=True, check=True).stdout


@pytest.mark.parametrize("seconds", [0, 5, 59, 60, 61, 599, 3599, 3600,
                                     36061])
def test_hms(seconds):
    assert runner.hms(seconds) == _bash_hms(seconds)
    # the study's clock is a float: its whole seconds
    assert runner.hms(seconds + 0.999) == _bash_hms(seconds)


def test_hms_values():
    assert runner.hms(0) == "0m00s"
    assert runner.hms(125.5) == "2m05s"
    assert runner.hms(3600) == "60m00s"


# --- new_rundir --------------------------------------------------------------

def test_new_rundir_stamp(tmp_path):
    path = records.new_rundir(str(tmp_path))
    assert os.path.isdir(path)
    assert os.path.dirname(path) == str(tmp_path)
    assert re.fullmatch(r"\d{8}-\d{6}", os.path.basename(path))


def test_new_rundir_collisions(tmp_path, monkeypatch):
    monkeypatch.setattr(records.time, "strftime",
                        lambda fmt: "20240102-030405")
    d = str(tmp_path)
    made = [records.new_rundir(d) for _ in range(3)]
    assert made == [os.path.join(d, "20240102-030405"),
                    os.path.join(d, "20240102-030405-2"),
                    os.path.join(d, "20240102-030405-3")]
    assert all(os.path.isdir(p) for p in made)
    # a file of that name is taken too
    open(os.path.join(d, "20240102-030405-4"), "w").close()
    assert records.new_rundir(d) == os.path.join(d, "20240102-030405-5")


def test_new_rundir_without_run_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(records.time, "strftime",
                        lambda fmt: "20240102-030405")
    missing = str(tmp_path / "missing")
    with pytest.raises(records.LockError) as e:
        records.new_rundir(missing)
    assert str(e.value) == "cannot create %s/20240102-030405" % missing


# --- take_lock ---------------------------------------------------------------

HOLDER = r"""
import sys
sys.path.insert(0, sys.argv[1])
from lockstudy import records
lock = records.take_lock(sys.argv[2])
print("locked", flush=True)
sys.stdin.read()
"""
# a holder of the flock that writes no pid
SILENT_HOLDER = r"""
import fcntl, sys
f = open(sys.argv[2] + "/.lock", "a")
fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
print("locked", flush=True)
sys.stdin.read()
"""


def _holder(code, run_dir):
    """A child process holding the lock of run_dir, once it says so."""
    p = subprocess.Popen([sys.executable, "-c", code, BENCH, run_dir],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    assert p.stdout.readline() == "locked\n"
    return p


def _message(run_dir, pid):
    return ("another make run is in progress%s: lock %s/.lock is held; wait "
            "for it to end or interrupt it"
            % (" (pid %d)" % pid if pid else "", run_dir))


def test_second_lock_refused_with_the_holders_pid(tmp_path):
    d = str(tmp_path)
    p = _holder(HOLDER, d)
    try:
        with open(os.path.join(d, ".lock")) as f:
            assert f.read() == "%d\n" % p.pid
        with pytest.raises(records.LockError) as e:
            records.take_lock(d)
        assert str(e.value) == _message(d, p.pid)
        # the refusal leaves the holder's pid in place
        with open(os.path.join(d, ".lock")) as f:
            assert f.read() == "%d\n" % p.pid
    finally:
        p.stdin.close()
        p.wait(timeout=60)
    lock = records.take_lock(d)
    try:
        with open(os.path.join(d, ".lock")) as f:
            assert f.read() == "%d\n" % os.getpid()
    finally:
        lock.close()


def test_a_dead_holders_lock_is_free(tmp_path):
    d = str(tmp_path)
    p = _holder(HOLDER, d)
    p.kill()
    p.wait(timeout=60)
    p.stdin.close()
    p.stdout.close()
    lock = records.take_lock(d)
    try:
        # the dead holder's pid is replaced by ours
        with open(os.path.join(d, ".lock")) as f:
            assert f.read() == "%d\n" % os.getpid()
    finally:
        lock.close()


def test_holder_without_pid(tmp_path):
    d = str(tmp_path)
    p = _holder(SILENT_HOLDER, d)
    try:
        with pytest.raises(records.LockError) as e:
            records.take_lock(d)
        assert str(e.value) == _message(d, None)
    finally:
        p.stdin.close()
        p.wait(timeout=60)


def test_lock_is_held_until_closed_and_not_inherited(tmp_path):
    d = str(tmp_path)
    lock = records.take_lock(d)
    try:
        # the servers the study starts must not hold it
        assert not os.get_inheritable(lock.fileno())
        with open(os.path.join(d, ".lock")) as other:
            with pytest.raises(OSError):
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        lock.close()
    with open(os.path.join(d, ".lock")) as other:
        fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_lock_file_cannot_be_opened(tmp_path):
    missing = str(tmp_path / "missing")
    with pytest.raises(records.LockError) as e:
        records.take_lock(missing)
    assert str(e.value) == "cannot open the lock file %s/.lock" % missing


# --- Recorder ----------------------------------------------------------------

LOCK_COLUMNS = ["tranche", "sh_acquires", "ex_acquires", "blocks",
                "spin_delays"]
SPIN_COLUMNS = ["file", "line", "func", "contended", "spins", "delays"]


class FakeCursor:
    """A cursor whose COPY ... TO STDOUT writes CSV as PostgreSQL does:
    the header, then the rows of the view for the run the query names."""

    def __init__(self, views):
        self.views = views
        self.queries = []

    def mogrify(self, query, params):
        assert query.count("%s") == 3
        return (query % tuple("'%s'" % p if isinstance(p, str) else str(p)
                              for p in params)).encode()

    def copy_expert(self, sql, f):
        self.queries.append(sql)
        m = re.fullmatch(r"COPY \(SELECT '(.*)'::text AS variant, (\d+)::int "
                         r"AS clients, (\d+)::int AS round, \* FROM (\w+)"
                         r"( LIMIT 0)?\) TO STDOUT WITH \(FORMAT csv, "
                         r"HEADER\)", sql)
        assert m, sql
        variant, clients, rnd, view, none = m.groups()
        if none:
            variant, clients, rnd = "none", "-1", "-1"
        columns, rows = self.views[view]
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["variant", "clients", "round"] + columns)
        for row in rows.get((variant, int(clients), int(rnd)), []):
            w.writerow([variant, clients, rnd] + row)


# the rows of the views, by run, in no particular order
LOCKS = {
    ("ttas", 64, 2): [["BufferMapping", 10, 5, 7, 1],
                      ["lock, odd \"name\"", 1, 1, 300, 0]],
    ("tas", 8, 10): [["WALInsert", 0, 9, 2, 0], ["ProcArray", 4, 4, 40, 3]],
    ("tas", 64, 2): [["BufferMapping", 10, 5, 1000, 4],
                     ["ProcArray", 1, 2, 0, 0]],
    ("tas", 8, 2): [["ProcArray", 5, 5, 5, 0], ["BufferMapping", 6, 6, 60, 2],
                    ["WALInsert", 7, 7, 600, 1]],
    ("ttas", 8, 1): [["XidGen", 1, 1, 11, 0]],
}
KIND_COLUMNS = ["backend_type", "tranche", "sh_acquires", "ex_acquires",
                "blocks"]
KINDS = {
    ("ttas", 64, 2): [["walwriter", "BufferMapping", 0, 1, 0],
                      ["client backend", "BufferMapping", 10, 4, 7]],
    ("tas", 64, 2): [["client backend", "BufferMapping", 10, 5, 1000]],
    ("tas", 8, 2): [["checkpointer", "WALInsert", 0, 3, 1],
                    ["client backend", "WALInsert", 7, 7, 600]],
}
SPINS = {
    ("ttas", 64, 2): [["dynahash.c", 100, "get_hash_entry", 5, 9, 0]],
    ("tas", 8, 10): [],
    ("tas", 64, 2): [["bufmgr.c", 7, "WaitBufHdrUnlocked", 3, 10, 1],
                     ["dynahash.c", 100, "get_hash_entry", 3, 50, 0],
                     ["lwlock.c", 800, "LWLockWaitListLock", 30, 2, 0]],
    ("tas", 8, 2): [["lwlock.c", 800, "LWLockWaitListLock", 1, 1, 0]],
    ("ttas", 8, 1): [],
}


def _recorded():
    rec = records.Recorder()
    cur = FakeCursor({"pg_lwlock_stats": (LOCK_COLUMNS, LOCKS),
                      "pg_lwlock_backend_type_stats": (KIND_COLUMNS, KINDS),
                      "pg_spinlock_stats": (SPIN_COLUMNS, SPINS)})
    for key in LOCKS:
        rec.copy(cur, "pg_lwlock_stats", "locks", key, ["blocks"])
        rec.copy(cur, "pg_lwlock_backend_type_stats", "kinds", key,
                 ["blocks"])
        rec.copy(cur, "pg_spinlock_stats", "spins", key,
                 ["contended", "spins"])
    return rec, cur


def test_recorder_kinds_order(tmp_path):
    """kinds.csv: by run, then the most blocks; a run without rows has
    none."""
    rec, cur = _recorded()
    assert len(cur.queries) == 3 * len(LOCKS)
    rec.write(str(tmp_path))
    assert _lines(str(tmp_path / "kinds.csv")) == [
        "variant,clients,round,backend_type,tranche,sh_acquires,"
        "ex_acquires,blocks",
        "tas,8,2,client backend,WALInsert,7,7,600",
        "tas,8,2,checkpointer,WALInsert,0,3,1",
        "tas,64,2,client backend,BufferMapping,10,5,1000",
        "ttas,64,2,client backend,BufferMapping,10,4,7",
        "ttas,64,2,walwriter,BufferMapping,0,1,0",
        ""]


def _lines(path):
    with open(path, newline="") as f:
        return f.read().split("\n")


def test_recorder_locks_order(tmp_path):
    rec, cur = _recorded()
    assert len(cur.queries) == 3 * len(LOCKS)
    rec.write(str(tmp_path))
    assert _lines(str(tmp_path / "locks.csv")) == [
        "variant,clients,round,tranche,sh_acquires,ex_acquires,blocks,"
        "spin_delays",
        "tas,8,2,WALInsert,7,7,600,1",
        "tas,8,2,BufferMapping,6,6,60,2",
        "tas,8,2,ProcArray,5,5,5,0",
        "tas,8,10,ProcArray,4,4,40,3",
        "tas,8,10,WALInsert,0,9,2,0",
        "tas,64,2,BufferMapping,10,5,1000,4",
        "tas,64,2,ProcArray,1,2,0,0",
        "ttas,8,1,XidGen,1,1,11,0",
        'ttas,64,2,"lock, odd ""name""",1,1,300,0',
        "ttas,64,2,BufferMapping,10,5,7,1",
        ""]


def test_recorder_spins_order(tmp_path):
    rec, _ = _recorded()
    rec.write(str(tmp_path))
    assert _lines(str(tmp_path / "spins.csv")) == [
        "variant,clients,round,file,line,func,contended,spins,delays",
        "tas,8,2,lwlock.c,800,LWLockWaitListLock,1,1,0",
        "tas,64,2,lwlock.c,800,LWLockWaitListLock,30,2,0",
        "tas,64,2,dynahash.c,100,get_hash_entry,3,50,0",
        "tas,64,2,bufmgr.c,7,WaitBufHdrUnlocked,3,10,1",
        "ttas,64,2,dynahash.c,100,get_hash_entry,5,9,0",
        ""]


def test_recorder_runs_order(tmp_path):
    rec = records.Recorder()
    rec.runs = [("ttas", 64, 10, 1, "100.5", "5.01", 500),
                ("tas", 8, 2, 2, "80", "5.002", 400),
                ("tas", 64, 2, 2, "90", "5.1", 450),
                ("ttas", 8, 2, 1, "70", "5", 350),
                ("tas", 1, 10, 2, "10", "5.003", 50),
                ("ttas", 1, 1, 2, "11", "5", 55)]
    rec.write(str(tmp_path))
    assert _lines(str(tmp_path / "runs.csv")) == [
        "variant,clients,round,position,tps,seconds,transactions",
        "ttas,1,1,2,11,5,55",
        "ttas,8,2,1,70,5,350",
        "tas,8,2,2,80,5.002,400",
        "tas,64,2,2,90,5.1,450",
        "ttas,64,10,1,100.5,5.01,500",
        "tas,1,10,2,10,5.003,50",
        ""]


def test_recorder_copy_keeps_copy_text():
    """A row is kept as COPY wrote it, quoting and all."""
    rec, _ = _recorded()
    kept = [line for _, line in rec.lines["locks"]]
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(
        ["ttas", 64, 2, 'lock, odd "name"', 1, 1, 300, 0])
    assert out.getvalue().rstrip("\n") in kept
    assert rec.header["locks"].startswith("variant,clients,round,tranche")


def test_recorder_headers_without_rows(tmp_path):
    """The header lines read at the setup: a study whose runs record no
    row (its variants all unpatched) still writes files with columns."""
    rec = records.Recorder()
    cur = FakeCursor({"pg_lwlock_stats": (LOCK_COLUMNS, LOCKS),
                      "pg_lwlock_backend_type_stats": (KIND_COLUMNS, KINDS),
                      "pg_spinlock_stats": (SPIN_COLUMNS, SPINS)})
    rec.headers(cur, runner.VIEWS)
    assert [q.split(" FROM ")[1] for q in cur.queries] == [
        "pg_lwlock_stats LIMIT 0) TO STDOUT WITH (FORMAT csv, HEADER)",
        "pg_lwlock_backend_type_stats LIMIT 0) TO STDOUT WITH (FORMAT csv, "
        "HEADER)",
        "pg_spinlock_stats LIMIT 0) TO STDOUT WITH (FORMAT csv, HEADER)"]
    rec.write(str(tmp_path))
    assert _lines(str(tmp_path / "locks.csv")) == [
        "variant,clients,round," + ",".join(LOCK_COLUMNS), ""]
    assert _lines(str(tmp_path / "kinds.csv")) == [
        "variant,clients,round," + ",".join(KIND_COLUMNS), ""]
    assert _lines(str(tmp_path / "spins.csv")) == [
        "variant,clients,round," + ",".join(SPIN_COLUMNS), ""]
    # and the same header as the runs' rows give
    other, _ = _recorded()
    assert rec.header == other.header


# --- clean_environment -------------------------------------------------------

@pytest.fixture
def saved_environ():
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


def test_clean_environment_as_the_bash_loop(saved_environ):
    given = {"PATH": "/usr/bin:/bin", "HOME": "/home/x",
             "PG_CONFIG": "/pg/bin/pg_config", "PGUSER": "u",
             "PGOPTIONS": "-c work_mem=1MB", "PGSERVICE": "s",
             "PGHOST": "/sock", "PGPORT": "1", "PGDATABASE": "d",
             "PG_MAJOR": "18", "PG_COLOR": "always", "PG": "bare",
             "MYPG": "kept", "XPGUSER": "kept", "pguser": "kept"}
    bash = subprocess.run(
        ["bash", "-c", 'for v in $(compgen -e | grep \'^PG\' || true); do '
         '[ "$v" = PG_CONFIG ] || unset "$v"; done; '
         'export PATH="/pg/bin:$PATH"; env -0'],
        env=given, capture_output=True, text=True, check=True).stdout
    expected = dict(kv.split("=", 1) for kv in bash.split("\0") if kv)
    expected = {k: v for k, v in expected.items() if k in given}
    os.environ.clear()
    os.environ.update(given)
    runner.clean_environment("/pg/bin")
    assert dict(os.environ) == expected
    assert sorted(expected) == ["HOME", "MYPG", "PATH", "PG_CONFIG",
                                "XPGUSER", "pguser"]
    assert expected["PATH"] == "/pg/bin:/usr/bin:/bin"


# --- the plan and the rounds, the warm-up round's included -------------------

def _study(warmup_round, repeat=2, warmup=3, variants_given=None,
           unpatched=()):
    """A study of the variants a and b at 1 and 8 clients, seed 7; those
    of unpatched run the unpatched server."""
    names = ("a", "b")
    return spec.Study(
        pg_config="/pg/bin/pg_config", bindir="/pg/bin", scale=1,
        clients=(1, 8), duration=5, warmup=warmup,
        workload=spec.Workload("select-only", ("-S", "-M", "prepared")),
        threads=None, repeat=repeat, seed=7, threshold="2", run_dir="/r",
        variant_dir="/v",
        variants=tuple(spec.Variant(n, unpatched=n in unpatched)
                       for n in names),
        variants_given=variants_given, warmup_round=warmup_round,
        stock_pg_config="/stock/bin/pg_config" if unpatched else "",
        stock_bindir="/stock/bin" if unpatched else "")


# what the fake pgbench prints: its tps, transactions and one second
PGBENCH_OUTPUT = ("progress: 1.0 s, 99.5 tps, lat 1.000 ms stddev 0.100, "
                  "0 failed\nnumber of transactions actually processed: "
                  "500\ntps = 100.000000 (without initial connection time)"
                  "\n")
# and the fake sysbench: two seconds, then its summary
SYSBENCH_OUTPUT = (
    "[ 1s ] thds: 8 tps: 249.00 qps: 249.00 (r/w/o: 249.00/0.00/0.00) lat "
    "(ms,95%): 0.05 err/s: 0.00 reconn/s: 0.00\n"
    "[ 2s ] thds: 8 tps: 251.00 qps: 251.00 (r/w/o: 251.00/0.00/0.00) lat "
    "(ms,95%): 0.05 err/s: 0.00 reconn/s: 0.00\n"
    "SQL statistics:\n"
    "    transactions:                        500    (250.00 per sec.)\n"
    "    queries:                             500    (250.00 per sec.)\n")


class _Cursor:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Server:
    """The cluster and the connection of a fake run; the binary checks go
    to the list checked."""
    log = "/dev/null"
    sock = "/tmp/pg_lockstat-run.x"
    port = 25000

    def __init__(self, checked=None):
        self.checked = checked

    def check_binary(self, label, bindir):
        self.checked.append((label, bindir))

    def cursor(self):
        return _Cursor()

    def close(self):
        pass


class FakeRun(runner.StudyRun):
    """A StudyRun without a server: the starts, stops, queries, pgbench
    (or sysbench) runs and recordings it would make are listed in events,
    in order, and pgbench prints PGBENCH_OUTPUT, sysbench
    SYSBENCH_OUTPUT."""

    def __init__(self, study, rundir):
        b = builds.Build("/pg/bin", "k", "the base server")
        stock = builds.Build("/stock/bin", "ks", builds.STOCK_DESCRIPTION)
        super().__init__(study, "/top", [stock if v.unpatched else b
                                         for v in study.variants],
                         io.StringIO())
        self.rundir = rundir
        # the binary checks after each start: (label, bindir)
        self.checked = []
        self.cluster = _Server(self.checked)
        self.events = []

    def start(self, label, i=None):
        self.events.append(("start", label, None if i is None else
                            self.builds[i].bindir))
        self.conn = _Server()

    def stop(self):
        self.events.append(("stop",))
        self.conn = None

    def sql(self, what, query, params=()):
        self.events.append(("sql", what))
        return []

    def benchmark(self, what, cmd, out):
        self.events.append(("pgbench", what, os.path.basename(out),
                            " ".join(cmd)))
        return SYSBENCH_OUTPUT if cmd[0] == "sysbench" else PGBENCH_OUTPUT

    def record(self, point, key):
        self.events.append(("record", key))


@pytest.fixture
def fake_cluster(monkeypatch):
    monkeypatch.setattr(runner.cluster, "check_settings",
                        lambda cur, label, v, log: None)
    monkeypatch.setattr(runner.cluster, "settings_in_force",
                        lambda cur: ["work_mem|4096|kB|default"])


def _planned(warmup_round, tmp_path, study=None, **kw):
    s = FakeRun(study or _study(warmup_round, **kw), str(tmp_path))
    s.plan()
    return s, s.out.getvalue().split("\n")


def test_plan_with_the_warm_up_round(tmp_path):
    s, lines = _planned(True, tmp_path)
    order, _ = design.variant_order(7, 2, ["a", "b"])
    clients = design.client_order(7, 2, [1, 8])
    # 3 rounds of 2 variants: each start 3 s + its 3 s warm-up, each of
    # the 2 runs 5 s + 1 s
    total = 3 * 2 * (3 + 3 + 2 * (5 + 1))
    assert s.total == total
    assert lines[1] == (
        "plan: 2 rounds x 2 variants x 2 client counts (1 8) = 8 runs of "
        "5s, after a warm-up round of 4 runs that are not recorded; 6 "
        "server starts, each followed by a 3s warm-up run at 8 clients "
        "that is not recorded; baseline a; variant order seeded by SEED=7; "
        "estimated %s" % runner.hms(total))
    # the warm-up round in round 1's orders, then the rounds as before
    assert lines[2:] == [
        "warm-up round: %s; clients %s; not recorded"
        % (" ".join(order[0]), " ".join(map(str, clients[0]))),
        "round 1: %s; clients %s" % (" ".join(order[0]),
                                     " ".join(map(str, clients[0]))),
        "round 2: %s; clients %s" % (" ".join(order[1]),
                                     " ".join(map(str, clients[1]))),
        "", ""]
    assert (s.rounds, s.round_clients) == (order, clients)
    assert (s.warmup_order, s.warmup_clients) == (order[0], clients[0])


def test_plan_without_the_warm_up_round(tmp_path):
    s, lines = _planned(False, tmp_path)
    total = 2 * 2 * (3 + 3 + 2 * (5 + 1))
    assert s.total == total
    assert lines[1] == (
        "plan: 2 rounds x 2 variants x 2 client counts (1 8) = 8 runs of "
        "5s, no warm-up round (WARMUP_ROUND=0); 4 server starts, each "
        "followed by a 3s warm-up run at 8 clients that is not recorded; "
        "baseline a; variant order seeded by SEED=7; estimated %s"
        % runner.hms(total))
    assert [line.split(":")[0] for line in lines[2:]] == [
        "round 1", "round 2", "", ""]
    assert (s.warmup_order, s.warmup_clients) == ([], [])


def test_plan_lists_the_builds_before_the_warm_up_round(tmp_path):
    _, lines = _planned(True, tmp_path, variants_given="a; b")
    assert [line.split(":")[0] for line in lines[2:]] == [
        "build 1", "variant a", "variant b", "warm-up round", "round 1",
        "round 2", "", ""]


def _rounds(warmup_round, tmp_path, **kw):
    s, _ = _planned(warmup_round, tmp_path, **kw)
    s.run_rounds()
    return s


def test_warm_up_round_runs_like_round_1_and_records_nothing(
        tmp_path, fake_cluster, capsys):
    s = _rounds(True, tmp_path)
    first = [(name, c) for name in s.rounds[0] for c in s.round_clients[0]]
    # the measured pgbench runs, by their log: round 0 is the warm-up round
    runs = [e[2] for e in s.events
            if e[0] == "pgbench" and "-P 1" in e[3]]
    assert runs == (
        ["pgbench-%s-%d-0.log" % p for p in first] +
        ["pgbench-%s-%d-1.log" % p for p in first] +
        ["pgbench-%s-%d-2.log" % (name, c) for name in s.rounds[1]
         for c in s.round_clients[1]])
    # a server start per variant and round, the warm-up round's included,
    # each followed by its warm-up run
    starts = [i for i, e in enumerate(s.events) if e[0] == "start"]
    assert len(starts) == 3 * 2
    assert [s.events[i + 1][1] for i in starts[:2]] == [
        "pgbench (variant %s, warm-up, warm-up round)" % name
        for name in s.rounds[0]]
    assert s.events[starts[2] + 1][1] == (
        "pgbench (variant %s, warm-up, round 1)" % s.rounds[0][0])
    # the counters are reset before every run; the warm-up round's steps
    # name it
    warm = s.events[:starts[2]]
    assert [e[1] for e in warm if e[0] == "sql"] == [
        "pg_lockstat_reset() (variant %s, %d clients, warm-up round)" % p
        for p in first]
    assert [e[1] for e in warm if e[0] == "pgbench" and "-P 1" in e[3]] == [
        "pgbench (variant %s, %d clients, warm-up round)" % p
        for p in first]
    # nothing of it recorded: the recordings, runs.csv's rows and
    # persec.csv's are those of rounds 1 and 2
    assert not any(e[0] == "record" for e in warm)
    assert sorted(e[1] for e in s.events if e[0] == "record") == sorted(
        (name, c, r) for r in (1, 2) for name in ("a", "b") for c in (1, 8))
    assert sorted(run[:3] for run in s.recorder.runs) == sorted(
        (name, c, r) for r in (1, 2) for name in ("a", "b") for c in (1, 8))
    persec = [line.split(",") for line in
              _lines(str(tmp_path / "persec.csv")) if line]
    assert sorted(row[:3] for row in persec) == sorted(
        [name, str(c), str(r)] for r in (1, 2) for name in ("a", "b")
        for c in (1, 8))
    # the estimate counted it: done reaches the total
    assert s.done == s.total
    # progress lines: 4 of the warm-up round, then 4 per round
    progress = [line for line in capsys.readouterr().err.splitlines()
                if "  variant " in line]
    assert [line.split("  variant")[0] for line in progress] == (
        ["lockstudy: warm-up round"] * 4 + ["lockstudy: round 1/2"] * 4 +
        ["lockstudy: round 2/2"] * 4)
    assert re.fullmatch(
        r"lockstudy: warm-up round  variant %s\s+clients\s+%d\s+[\d.]+ s\s+"
        r"100\.0 tps  elapsed \d+m\d\ds, remaining \d+m\d\ds"
        % first[0], progress[0]), progress[0]


def test_warm_up_round_in_commands_txt(tmp_path, fake_cluster):
    s = _rounds(True, tmp_path)
    lines = [line for line in _lines(str(tmp_path / "commands.txt"))
             if line]
    order = " ".join(s.rounds[0])
    clients = " ".join(map(str, s.round_clients[0]))
    assert lines[0] == "# warm-up round: %s; clients %s (not recorded)" % (
        order, clients)
    # then per variant its warm-up run and its runs, all marked
    v, c = s.rounds[0][0], s.round_clients[0][0]
    assert lines[1] == ("[%s] pgbench -n -S -M prepared -c 8 -j %d -T 3 "
                        "postgres (warm-up, warm-up round)"
                        % (v, min(8, s.nproc)))
    assert lines[2] == ("[%s] pgbench -n -S -M prepared -c %d -j %d -T 5 "
                        "-P 1 postgres (warm-up round)"
                        % (v, c, min(c, s.nproc)))
    warm = lines[1:lines.index("# round 1: %s; clients %s" % (order,
                                                              clients))]
    assert len(warm) == 2 * (1 + 2)
    assert all(line.endswith(" (warm-up round)") or
               line.endswith(" (warm-up, warm-up round)") for line in warm)
    # the rounds' lines are as without it
    assert not any("warm-up round" in line
                   for line in lines[1 + len(warm):])


def test_without_the_warm_up_round(tmp_path, fake_cluster, capsys):
    s = _rounds(False, tmp_path)
    assert len([e for e in s.events if e[0] == "start"]) == 2 * 2
    assert not any("warm-up round" in e[1] for e in s.events
                   if e[0] in ("sql", "pgbench"))
    assert s.done == s.total
    lines = _lines(str(tmp_path / "commands.txt"))
    assert lines[0].startswith("# round 1: ")
    assert not any("warm-up round" in line for line in lines)
    assert "warm-up round" not in capsys.readouterr().err


def test_settings_txt_from_round_1_only(tmp_path, fake_cluster):
    """settings.txt has each variant's settings once, with or without a
    warm-up round before."""
    for warm, sub in ((True, "w"), (False, "n")):
        d = tmp_path / sub
        d.mkdir()
        s = _rounds(warm, d)
        assert _lines(str(d / "settings.txt")) == [
            "-- variant " + s.rounds[0][0], "work_mem|4096|kB|default",
            "-- variant " + s.rounds[0][1], "work_mem|4096|kB|default", ""]


def test_no_warm_up_runs_at_warmup_0(tmp_path, fake_cluster):
    """WARMUP=0: the warm-up round still runs every client count, without
    the warm-up run after each start."""
    s = _rounds(True, tmp_path, warmup=0)
    assert not any(e[0] == "pgbench" and "-P 1" not in e[3]
                   for e in s.events)
    assert len([e for e in s.events if e[0] == "pgbench"]) == 3 * 2 * 2


# --- a variant of the unpatched server ---------------------------------------

def test_unpatched_variant_runs_without_counters(tmp_path, fake_cluster):
    """b runs the unpatched server: its own binary, checked, and the same
    runs as a, but no counter reset before them and no recording after;
    its tps, transactions and seconds are recorded as a's."""
    s = _rounds(True, tmp_path, unpatched=("b",))
    # each start runs the variant's build, and checks that binary
    starts = [e for e in s.events if e[0] == "start"]
    assert sorted(set(starts)) == [("start", "variant a", "/pg/bin"),
                                   ("start", "variant b", "/stock/bin")]
    assert len(starts) == 3 * 2
    assert s.checked == [(e[1], e[2]) for e in starts]
    # the runs of both, the warm-up round's included
    runs = sorted(e[2] for e in s.events
                  if e[0] == "pgbench" and "-P 1" in e[3])
    assert runs == sorted("pgbench-%s-%d-%d.log" % (v, c, r)
                          for v in "ab" for c in (1, 8) for r in (0, 1, 2))
    # the resets and recordings of a only
    assert sorted(e[1] for e in s.events if e[0] == "sql") == sorted(
        "pg_lockstat_reset() (variant a, %d clients, %s)"
        % (c, runner.round_name(r)) for c in (1, 8) for r in (0, 1, 2))
    assert sorted(e[1] for e in s.events if e[0] == "record") == sorted(
        ("a", c, r) for c in (1, 8) for r in (1, 2))
    # runs.csv and persec.csv have both
    assert sorted(run[:3] for run in s.recorder.runs) == sorted(
        (v, c, r) for v in "ab" for c in (1, 8) for r in (1, 2))
    assert {run[6] for run in s.recorder.runs} == {500}
    persec = [line.split(",")[:3] for line in
              _lines(str(tmp_path / "persec.csv")) if line]
    assert sorted(persec) == sorted([v, str(c), str(r)] for v in "ab"
                                    for c in (1, 8) for r in (1, 2))
    assert s.done == s.total


def test_unpatched_baseline(tmp_path, fake_cluster):
    s = _rounds(False, tmp_path, unpatched=("a",))
    assert all("variant b" in e[1] for e in s.events if e[0] == "sql")
    assert {e[1][0] for e in s.events if e[0] == "record"} == {"b"}
    assert len(s.recorder.runs) == 2 * 2 * 2


def test_unpatched_variant_in_the_plan(tmp_path):
    study = _study(True, variants_given="a; b: unpatched", unpatched=("b",))
    study = dataclasses.replace(study, variants=(
        study.variants[0], spec.Variant(
            "b", (), (("shared_preload_libraries", ""),), None, True)))
    _, lines = _planned(True, tmp_path, study=study)
    assert lines[2:5] == [
        "build 1: the base server: /pg (build key k)",
        "build 2: the unpatched server (STOCK_PG_CONFIG): /stock (build key "
        "ks)",
        "variant a: build 1"]
    assert lines[5] == ("variant b: build 2, settings "
                        "shared_preload_libraries = ''")


def test_versions_txt_names_the_unpatched_variants(monkeypatch):
    monkeypatch.setattr(records.builds, "server_major", lambda b: "18")
    monkeypatch.setattr(records.builds, "series", lambda top, major: [])
    monkeypatch.setattr(records, "_output", lambda cmd: "out")
    b = builds.Build("/pg/bin", "k", "the base server (PG_CONFIG)")
    stock = builds.Build("/stock/bin", "ks", builds.STOCK_DESCRIPTION)
    study = _study(True, unpatched=("a", "b"))
    lines = records.versions_lines(study, "/top", [stock, stock])
    assert lines[-3:] == [
        "variant a: /stock, build ks, the unpatched server "
        "(STOCK_PG_CONFIG)",
        "variant b: /stock, build ks, the unpatched server "
        "(STOCK_PG_CONFIG)",
        "unpatched variants: a b"]
    lines = records.versions_lines(_study(True), "/top", [b, b])
    assert lines[-1] == "variant b: /pg, build k, the base server " \
        "(PG_CONFIG)"
    assert not any(line.startswith("unpatched") for line in lines)


# --- a sysbench workload -----------------------------------------------------

def _sysbench_study(warmup_round, **kw):
    """_study() under sysbench-point-select, 4 tables of 25000 rows."""
    return dataclasses.replace(
        _study(warmup_round, **kw),
        workload=spec.Workload("sysbench-point-select",
                               ("oltp_point_select", "--tables=4",
                                "--table-size=25000"), tool="sysbench"),
        sysbench_tables=4, sysbench_table_size=25000)


SYSBENCH_CONNECTION = ("--db-driver=pgsql --pgsql-host=/tmp/pg_lockstat-run.x "
                       "--pgsql-port=25000 --pgsql-user=%s --pgsql-db=postgres"
                       % runner._user())


def test_sysbench_plan(tmp_path):
    _, lines = _planned(True, tmp_path, study=_sysbench_study(True))
    assert lines[0] == (
        "pg_lockstat study: workload sysbench-point-select (sysbench "
        "oltp_point_select --tables=4 --table-size=25000), 5s per run, %d "
        "CPUs" % (os.cpu_count() or 1))


def test_sysbench_prepare(tmp_path):
    """The tables once, at most nproc tables at a time, then VACUUM
    ANALYZE; both in commands.txt."""
    s = FakeRun(_sysbench_study(True), str(tmp_path))
    s.nproc = 2
    s.prepare_sysbench()
    prepare = ("sysbench oltp_point_select %s --tables=4 --table-size=25000 "
               "--threads=2 prepare" % SYSBENCH_CONNECTION)
    assert s.events == [
        ("pgbench", "sysbench prepare", "sysbench-prepare.log", prepare),
        ("sql", "VACUUM ANALYZE (after sysbench prepare)")]
    assert _lines(str(tmp_path / "commands.txt")) == [
        prepare, "VACUUM ANALYZE", ""]


def test_sysbench_rounds(tmp_path, fake_cluster):
    """The runs of a sysbench study are sysbench's, one thread per client,
    in sysbench's logs, read as pgbench's are: tps, transactions and the
    tps of each second recorded; the warm-up runs without the reports of
    each second."""
    s = _rounds(True, tmp_path, study=_sysbench_study(True))
    runs = [e for e in s.events if e[0] == "pgbench"]
    assert len(runs) == 3 * 2 * (1 + 2)
    assert all(e[3].startswith("sysbench oltp_point_select " +
                               SYSBENCH_CONNECTION + " --tables=4 "
                               "--table-size=25000 --threads=")
               for e in runs)
    v, c = s.rounds[0][0], s.round_clients[0][0]
    assert runs[0][1:] == (
        "sysbench (variant %s, warm-up, warm-up round)" % v,
        "sysbench-%s-warmup-0.log" % v,
        "sysbench oltp_point_select %s --tables=4 --table-size=25000 "
        "--threads=8 --time=3 run" % SYSBENCH_CONNECTION)
    assert runs[1][1:] == (
        "sysbench (variant %s, %d clients, warm-up round)" % (v, c),
        "sysbench-%s-%d-0.log" % (v, c),
        "sysbench oltp_point_select %s --tables=4 --table-size=25000 "
        "--threads=%d --time=5 --report-interval=1 run"
        % (SYSBENCH_CONNECTION, c))
    assert sorted(e[2] for e in runs if "--report-interval=1" in e[3]) == \
        sorted("sysbench-%s-%d-%d.log" % (v, c, r) for v in "ab"
               for c in (1, 8) for r in (0, 1, 2))
    # runs.csv: the summary's tps and transactions
    assert sorted(run[:3] for run in s.recorder.runs) == sorted(
        (v, c, r) for v in "ab" for c in (1, 8) for r in (1, 2))
    assert {(run[4], run[6]) for run in s.recorder.runs} == {("250", 500)}
    # persec.csv: both seconds of every recorded run
    persec = [line for line in _lines(str(tmp_path / "persec.csv")) if line]
    assert len(persec) == 2 * 2 * 2 * 2
    assert sorted(line.split(",")[3:] for line in persec) == sorted(
        [["1", "249.00"], ["2", "251.00"]] * 8)
    # the counters as under pgbench
    assert sorted(e[1] for e in s.events if e[0] == "record") == sorted(
        (v, c, r) for v in "ab" for c in (1, 8) for r in (1, 2))
    assert s.done == s.total
    commands = _lines(str(tmp_path / "commands.txt"))
    assert "[%s] %s (warm-up, warm-up round)" % (v, runs[0][3]) in commands


class _NoSummary(FakeRun):
    """sysbench that exits 0 and prints only the lines of each second."""

    def benchmark(self, what, cmd, out):
        return SYSBENCH_OUTPUT.split("SQL statistics:")[0]


def test_sysbench_run_without_summary_fails(tmp_path, fake_cluster):
    s = _NoSummary(_sysbench_study(False), str(tmp_path))
    s.plan()
    with pytest.raises(runner.cluster.StepError) as e:
        s.run_rounds()
    v, c = s.rounds[0][0], s.round_clients[0][0]
    assert str(e.value) == (
        "sysbench (variant %s, %d clients, round 1) failed: no tps in its "
        "output; see %s/sysbench-%s-%d-1.log" % (v, c, tmp_path, v, c))
    assert s.recorder.runs == []


def test_sysbench_failure_names_its_log(tmp_path, capsys):
    """A sysbench that dies (a missing table: sysbench 1.0.20 segfaults
    after its FATAL) fails the step with its exit status and log, and the
    lines shown are its FATAL and the server's ERROR."""
    fake = tmp_path / "sysbench"
    fake.write_text("#!/bin/sh\ncat %s\nkill -SEGV $$\n" % os.path.join(
        BENCH, "tests", "golden", "sysbench", "no-table.log"))
    fake.chmod(0o755)
    s = runner.StudyRun(_sysbench_study(False), "/top", [], io.StringIO())
    out = str(tmp_path / "sysbench-a-1-1.log")
    with pytest.raises(runner.cluster.StepError) as e:
        s.benchmark("sysbench (variant a, 1 clients, round 1)", [str(fake)],
                    out)
    assert str(e.value) == ("sysbench (variant a, 1 clients, round 1) "
                            "failed (exit status 139); see %s" % out)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "lockstudy: from %s:" % out
    assert err[1] == ('    FATAL: PQprepare() failed: ERROR:  relation '
                      '"sbtest5" does not exist')


def test_versions_txt_names_sysbench(monkeypatch):
    """sysbench's version after pgbench's, for a sysbench workload only."""
    monkeypatch.setattr(records.builds, "server_major", lambda b: "18")
    monkeypatch.setattr(records.builds, "series", lambda top, major: [])
    monkeypatch.setattr(records, "_output", lambda cmd: cmd[0] + " 1")
    b = builds.Build("/pg/bin", "k", "the base server (PG_CONFIG)")
    lines = records.versions_lines(_sysbench_study(True), "/top", [b, b])
    assert lines[:3] == ["server: postgres 1", "pgbench: pgbench 1",
                         "sysbench: sysbench 1"]
    lines = records.versions_lines(_study(True), "/top", [b, b])
    assert not any(line.startswith("sysbench") for line in lines)
