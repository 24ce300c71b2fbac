"""Tests of lockstudy.pgbench: the command lines of the study's runs and
what pgbench's output says.

The command lines are those run-study.sh ran ("pgbench -n <workload> -c
<clients> -j <threads> -T <seconds> [-P 1] postgres"), and the checkout's
pgbench 18 accepts every one of them: run against a socket directory that
does not exist, it gets past its options to the connection.  The parsers
read output in pgbench 18's format (the printf formats of
src/bin/pgbench/pgbench.c: the -P 1 progress lines on stderr, then the
summary on stdout), and give what run-study.sh's sed and awk took from
the same text, run here on it.  No server.
"""

import os
import subprocess

import pytest

from lockstudy import pgbench

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))


def _pgbench() -> str:
    """The pgbench of the server under test (PG_CONFIG, which make test
    sets), else the checkout's build of 18."""
    pg_config = os.environ.get("PG_CONFIG")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True,
                             text=True)
        if out.returncode == 0:
            return os.path.join(out.stdout.strip(), "pgbench")
    return os.path.join(CHECKOUT, "build", "pg18", "bin", "pgbench")


PGBENCH = _pgbench()

# a run of "pgbench -n -S -M prepared -c 8 -j 2 -T 5 -P 1 postgres" as the
# study's log has it: stderr (unbuffered, the progress lines) first, then
# stdout (buffered to the file until exit)
SELECT_ONLY = """\
progress: 1.0 s, 13512.9 tps, lat 0.590 ms stddev 0.211, 0 failed
progress: 2.0 s, 13702.1 tps, lat 0.583 ms stddev 0.198, 0 failed
progress: 3.0 s, 13655.4 tps, lat 0.585 ms stddev 0.202, 0 failed
progress: 4.0 s, 13671.0 tps, lat 0.584 ms stddev 0.207, 0 failed
progress: 5.0 s, 13688.0 tps, lat 0.584 ms stddev 0.205, 0 failed
pgbench (18.6)
transaction type: <builtin: select only>
scaling factor: 10
query mode: prepared
number of clients: 8
number of threads: 2
maximum number of tries: 1
duration: 5 s
number of transactions actually processed: 68234
number of failed transactions: 0 (0.000%)
latency average = 0.586 ms
latency stddev = 0.204 ms
initial connection time = 12.345 ms
tps = 13646.339097 (without initial connection time)
"""

# a script workload with retries and a progress second that is late
# (-P prints the elapsed time, "2.1 s"), a client error on stderr in the
# middle, and the per-script statistics after the total
SCRIPT_RUN = """\
progress: 1.0 s, 2201.0 tps, lat 3.611 ms stddev 1.020, 0 failed, 0 retried, \
0 retries
pgbench: error: client 3 script 0 aborted in command 2 query 0: ERROR:  \
deadlock detected
progress: 2.1 s, 1999.5 tps, lat 3.790 ms stddev 1.113, 2 failed, 1 retried, \
3 retries
pgbench (18.6)
transaction type: multiple scripts
scaling factor: 10
query mode: prepared
number of clients: 8
number of threads: 8
maximum number of tries: 3
duration: 2 s
number of transactions actually processed: 4301
number of failed transactions: 2 (0.046%)
number of transactions retried: 1 (0.023%)
total number of retries: 3
latency average = 3.700 ms
latency stddev = 1.070 ms
initial connection time = 4.002 ms
tps = 2150.226187 (without initial connection time)
SQL script 1: /work/main/bench/workloads/wal-insert.sql
 - weight: 1 (targets 50.0% of total)
 - 2150 transactions (50.0% of total)
 - number of transactions actually processed: 2149 (tps = 1074.512345)
 - number of failed transactions: 1 (0.047%)
"""

# pgbench -t (transactions per client): "processed: <n>/<n>"
BY_TRANSACTIONS = """\
pgbench (18.6)
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: simple
number of clients: 10
number of threads: 1
maximum number of tries: 1
number of transactions per client: 100
number of transactions actually processed: 1000/1000
number of failed transactions: 0 (0.000%)
latency average = 1.234 ms
initial connection time = 20.000 ms
tps = 8103.727714 (without initial connection time)
"""

# every client aborted: no transaction, so no statistics and no tps
ABORTED = """\
pgbench (18.6)
pgbench: error: client 0 script 0 aborted in command 1 query 0: ERROR:  \
relation "pgbench_accounts" does not exist
LINE 1: SELECT abalance FROM pgbench_accounts WHERE aid = $1;
                             ^
pgbench: error: Run was aborted; the above results are incomplete.
transaction type: <builtin: select only>
scaling factor: 1
query mode: prepared
number of clients: 1
number of threads: 1
maximum number of tries: 1
duration: 5 s
number of transactions actually processed: 0
"""

SAMPLES = {"select-only": SELECT_ONLY, "script": SCRIPT_RUN,
           "by-transactions": BY_TRANSACTIONS, "aborted": ABORTED}


def _bash(script, text):
    """run-study.sh's parse of an output file, run on text."""
    return subprocess.run(["bash", "-c", script], input=text,
                          capture_output=True, text=True, check=True,
                          env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}).stdout


def _bash_tps(text):
    return _bash(r"sed -n 's/^tps = \([0-9.]*\) .*/\1/p' | head -n 1",
                 text).strip()


def _bash_xacts(text):
    return _bash(r"sed -n 's/^number of transactions actually processed: "
                 r"\([0-9]*\).*/\1/p' | head -n 1", text).strip()


def _bash_persec(text):
    out = _bash(r"""awk '/^progress: / { gsub(",", ""); print $2 "," $4 }'""",
                text)
    return [tuple(line.split(",")) for line in out.splitlines()]


@pytest.mark.parametrize("workload, clients, threads, seconds, progress, "
                         "expected", [
                             (("-S", "-M", "prepared"), 8, 2, 5, True,
                              "pgbench -n -S -M prepared -c 8 -j 2 -T 5 -P 1 "
                              "postgres"),
                             (("-S", "-M", "prepared"), 64, 4, 3, False,
                              "pgbench -n -S -M prepared -c 64 -j 4 -T 3 "
                              "postgres"),
                             (("-M", "prepared"), 1, 1, 60, True,
                              "pgbench -n -M prepared -c 1 -j 1 -T 60 -P 1 "
                              "postgres"),
                             ((), 2, 2, 1, False,
                              "pgbench -n -c 2 -j 2 -T 1 postgres")])
def test_command(workload, clients, threads, seconds, progress, expected):
    assert pgbench.command(workload, clients, threads, seconds,
                           progress) == expected.split()


def test_command_keeps_a_path_with_blanks_whole():
    cmd = pgbench.command(("-f", "/a b/x.sql", "-M", "prepared"), 2, 1, 5,
                          True)
    assert cmd[2:4] == ["-f", "/a b/x.sql"]
    assert cmd[-1] == "postgres"


def test_command_is_a_new_list():
    args = ["-S"]
    cmd = pgbench.command(args, 1, 1, 1, False)
    cmd.append("x")
    assert args == ["-S"]


@pytest.mark.skipif(not os.access(PGBENCH, os.X_OK),
                    reason="no pgbench (PG_CONFIG, build/pg18)")
@pytest.mark.parametrize("workload", [
    ("-S", "-M", "prepared"), ("-M", "prepared"), ("-N", "-M", "prepared"),
    ("-f", os.path.join(CHECKOUT, "bench", "workloads", "eviction.sql"),
     "-M", "prepared")])
@pytest.mark.parametrize("progress", [True, False])
def test_pgbench_accepts_the_command(tmp_path, workload, progress):
    """pgbench 18 parses the options (and the script) and goes on to
    connect, to a socket directory that does not exist."""
    cmd = pgbench.command(workload, 4, 2, 1, progress)
    out = subprocess.run([PGBENCH] + cmd[1:], capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL,
                         env={"PATH": "/usr/bin:/bin",
                              "PGHOST": str(tmp_path / "nosocket"),
                              "PGPORT": "5432", "PGCONNECT_TIMEOUT": "5"})
    assert out.returncode == 1
    assert "could not create connection for setup" in out.stderr
    assert "invalid option" not in out.stderr


@pytest.mark.parametrize("clients, given, nproc, expected", [
    (8, None, 4, 4), (2, None, 4, 2), (4, None, 4, 4), (1, None, 64, 1),
    (8, 16, 4, 16), (64, 1, 4, 1)])
def test_threads(clients, given, nproc, expected):
    """THREADS, else the smaller of clients and nproc (run-study.sh's
    ${THREADS:-$(( c < nproc ? c : nproc ))})."""
    assert pgbench.threads(clients, given, nproc) == expected


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_tps_as_the_bash_code_read_it(name):
    text = SAMPLES[name]
    assert (pgbench.tps(text) or "") == _bash_tps(text)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_transactions_as_the_bash_code_read_them(name):
    text = SAMPLES[name]
    got = pgbench.transactions(text)
    assert ("" if got is None else str(got)) == _bash_xacts(text)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_per_second_as_the_bash_code_read_it(name):
    text = SAMPLES[name]
    assert pgbench.per_second(text) == _bash_persec(text)


def test_values():
    assert pgbench.tps(SELECT_ONLY) == "13646.339097"
    assert pgbench.transactions(SELECT_ONLY) == 68234
    assert pgbench.per_second(SELECT_ONLY) == [
        ("1.0", "13512.9"), ("2.0", "13702.1"), ("3.0", "13655.4"),
        ("4.0", "13671.0"), ("5.0", "13688.0")]
    # the total, not the per-script line's "(tps = ...)"
    assert pgbench.tps(SCRIPT_RUN) == "2150.226187"
    assert pgbench.transactions(SCRIPT_RUN) == 4301
    assert pgbench.per_second(SCRIPT_RUN) == [("1.0", "2201.0"),
                                              ("2.1", "1999.5")]
    assert pgbench.transactions(BY_TRANSACTIONS) == 1000
    assert pgbench.tps(BY_TRANSACTIONS) == "8103.727714"


def test_an_aborted_run_has_no_tps():
    assert pgbench.tps(ABORTED) is None
    assert pgbench.transactions(ABORTED) == 0
    assert pgbench.per_second(ABORTED) == []


def test_empty_output():
    assert pgbench.tps("") is None
    assert pgbench.transactions("") is None
    assert pgbench.per_second("") == []


def test_only_lines_that_start_so():
    text = ("x tps = 1.5 (without initial connection time)\n"
            " - number of transactions actually processed: 7 (tps = 3.5)\n"
            "  progress: 1.0 s, 5.0 tps, lat 1.000 ms stddev 0.1, 0 failed\n")
    assert pgbench.tps(text) is None
    assert pgbench.transactions(text) is None
    assert pgbench.per_second(text) == []


def test_the_first_tps_line_counts():
    text = ("tps = 10.000000 (without initial connection time)\n"
            "tps = 20.000000 (without initial connection time)\n")
    assert pgbench.tps(text) == "10.000000"


def test_reconnecting_run():
    """pgbench -C prints "tps = ... (including reconnection times)"."""
    text = ("average connection time = 1.234 ms\n"
            "tps = 512.000100 (including reconnection times)\n")
    assert pgbench.tps(text) == "512.000100" == _bash_tps(text)


def test_progress_with_timestamps():
    """--progress-timestamp: the epoch time, 3 decimals."""
    line = ("progress: 1712345678.123 s, 998.0 tps, lat 8.016 ms stddev "
            "0.530, 0 failed\n")
    assert pgbench.per_second(line) == [("1712345678.123", "998.0")] == \
        _bash_persec(line)


def test_a_cut_progress_line_is_left_out():
    """A line cut short (pgbench killed while writing it) gives no
    second without its tps (run-study.sh's awk wrote "3.0," for it)."""
    assert pgbench.per_second("progress: 3.0 s\nprogress: 4.0 s, 9.5 tps, "
                              "lat 1.0 ms stddev 0.1, 0 failed\n") == [
        ("4.0", "9.5")]
