"""Tests of lockstudy.records: what a study writes.

new_rundir() takes -2, -3, ... after a directory of the same second;
take_lock() refuses a second study while another process holds the
lock, naming its pid, and frees it when that process dies; Recorder
writes runs.csv by round, position and clients and locks.csv/spins.csv
by variant, clients, round and the most blocks (contended, spins) first,
from the text a fake cursor's COPY gives, and headers() gives the files
their columns when no run records a row.  (pg_float(), the numbers as
PostgreSQL prints them, is test_records_float.py's.)  No server.
"""

import csv
import fcntl
import io
import os
import re
import subprocess
import sys

import pytest

from lockstudy import records, runner

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
from lockstudy import records, runner
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


def _take_as_ours(d):
    """The lock of d can be taken, and holds our pid."""
    lock = records.take_lock(d)
    try:
        with open(os.path.join(d, ".lock")) as f:
            assert f.read() == "%d\n" % os.getpid()
    finally:
        lock.close()


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
    _take_as_ours(d)


def test_a_dead_holders_lock_is_free(tmp_path):
    d = str(tmp_path)
    p = _holder(HOLDER, d)
    p.kill()
    p.wait(timeout=60)
    p.stdin.close()
    p.stdout.close()
    # the dead holder's pid is replaced by ours
    _take_as_ours(d)


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


SPIN_KIND_COLUMNS = ["backend_type"] + SPIN_COLUMNS
SPIN_KINDS = {
    ("ttas", 64, 2): [["client backend", "dynahash.c", 100,
                       "get_hash_entry", 5, 9, 0]],
    ("tas", 8, 10): [],
    ("tas", 64, 2): [["client backend", "lwlock.c", 800,
                      "LWLockWaitListLock", 29, 2, 0],
                     ["walwriter", "lwlock.c", 800, "LWLockWaitListLock",
                      1, 0, 0],
                     ["client backend", "dynahash.c", 100, "get_hash_entry",
                      3, 50, 0]],
    ("tas", 8, 2): [],
    ("ttas", 8, 1): [],
}
VIEWS = {"pg_lwlock_stats": (LOCK_COLUMNS, LOCKS),
         "pg_lwlock_backend_type_stats": (KIND_COLUMNS, KINDS),
         "pg_spinlock_stats": (SPIN_COLUMNS, SPINS),
         "pg_spinlock_backend_type_stats": (SPIN_KIND_COLUMNS, SPIN_KINDS)}


def _recorded():
    rec = records.Recorder()
    cur = FakeCursor(VIEWS)
    for key in LOCKS:
        for view, kind, order in runner.VIEWS:
            rec.copy(cur, view, kind, key, order)
    return rec, cur


def test_recorder_kinds_order(tmp_path):
    """kinds.csv: by run, then the most blocks; a run without rows has
    none."""
    rec, cur = _recorded()
    assert len(cur.queries) == 4 * len(LOCKS)
    rec.rundir = str(tmp_path)
    rec.write()
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
    assert len(cur.queries) == 4 * len(LOCKS)
    rec.rundir = str(tmp_path)
    rec.write()
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
    rec.rundir = str(tmp_path)
    rec.write()
    assert _lines(str(tmp_path / "spins.csv")) == [
        "variant,clients,round,file,line,func,contended,spins,delays",
        "tas,8,2,lwlock.c,800,LWLockWaitListLock,1,1,0",
        "tas,64,2,lwlock.c,800,LWLockWaitListLock,30,2,0",
        "tas,64,2,dynahash.c,100,get_hash_entry,3,50,0",
        "tas,64,2,bufmgr.c,7,WaitBufHdrUnlocked,3,10,1",
        "ttas,64,2,dynahash.c,100,get_hash_entry,5,9,0",
        ""]


def test_recorder_spinkinds_order(tmp_path):
    """spinkinds.csv: by run, then the most contended waits, then the
    most spins, whatever the kind of process."""
    rec, _ = _recorded()
    rec.rundir = str(tmp_path)
    rec.write()
    assert _lines(str(tmp_path / "spinkinds.csv")) == [
        "variant,clients,round,backend_type,file,line,func,contended,spins,"
        "delays",
        "tas,64,2,client backend,lwlock.c,800,LWLockWaitListLock,29,2,0",
        "tas,64,2,client backend,dynahash.c,100,get_hash_entry,3,50,0",
        "tas,64,2,walwriter,lwlock.c,800,LWLockWaitListLock,1,0,0",
        "ttas,64,2,client backend,dynahash.c,100,get_hash_entry,5,9,0",
        ""]


def test_recorder_runs_order(tmp_path):
    rec = records.Recorder()
    rec.runs = [("ttas", 64, 10, 1, "100.5", "5.01", 500),
                ("tas", 8, 2, 2, "80", "5.002", 400),
                ("tas", 64, 2, 2, "90", "5.1", 450),
                ("ttas", 8, 2, 1, "70", "5", 350),
                ("tas", 1, 10, 2, "10", "5.003", 50),
                ("ttas", 1, 1, 2, "11", "5", 55)]
    rec.rundir = str(tmp_path)
    rec.write()
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
    cur = FakeCursor(VIEWS)
    rec.headers(cur, runner.VIEWS)
    assert [q.split(" FROM ")[1] for q in cur.queries] == [
        "pg_lwlock_stats LIMIT 0) TO STDOUT WITH (FORMAT csv, HEADER)",
        "pg_lwlock_backend_type_stats LIMIT 0) TO STDOUT WITH (FORMAT csv, "
        "HEADER)",
        "pg_spinlock_stats LIMIT 0) TO STDOUT WITH (FORMAT csv, HEADER)",
        "pg_spinlock_backend_type_stats LIMIT 0) TO STDOUT WITH (FORMAT "
        "csv, HEADER)"]
    rec.rundir = str(tmp_path)
    rec.write()
    assert _lines(str(tmp_path / "locks.csv")) == [
        "variant,clients,round," + ",".join(LOCK_COLUMNS), ""]
    assert _lines(str(tmp_path / "kinds.csv")) == [
        "variant,clients,round," + ",".join(KIND_COLUMNS), ""]
    assert _lines(str(tmp_path / "spins.csv")) == [
        "variant,clients,round," + ",".join(SPIN_COLUMNS), ""]
    assert _lines(str(tmp_path / "spinkinds.csv")) == [
        "variant,clients,round," + ",".join(SPIN_KIND_COLUMNS), ""]
    # and the same header as the runs' rows give
    other, _ = _recorded()
    assert rec.header == other.header


def test_recorder_text_files_and_per_second(tmp_path):
    """Every file but the CSVs of the views goes through the recorder as
    the study runs: commands.txt, the metadata files, persec.csv."""
    rec = records.Recorder(str(tmp_path))
    rec.command("pgbench -c 1")
    rec.command("# round 1")
    rec.append("machine.txt", ["cpus: 2", "ram: 1G"])
    rec.start_per_second()
    rec.per_second(("tas", 4, 2), [("1.0", "100.5"), ("2.0", "99.0")])
    assert (tmp_path / "commands.txt").read_text() == \
        "pgbench -c 1\n# round 1\n"
    assert (tmp_path / "machine.txt").read_text() == "cpus: 2\nram: 1G\n"
    assert (tmp_path / "persec.csv").read_text() == (
        records.PER_SECOND + "\ntas,4,2,1.0,100.5\ntas,4,2,2.0,99.0\n")
