"""Tests of lockstudy.cluster, the parts that need no server: show_log()
and run_logged().

show_log() prints what run-study.sh's show_log printed for the same file
and pattern (that bash function is run here on it): "lockstudy: from
<file>:", then at most 4 lines indented by 4 blanks, the first that match
the pattern ignoring case if some do, else the last ones; nothing for an
empty or missing file.  run_logged() returns the command's exit status
with its output and errors in the file, its stdin /dev/null; and when an
exception (a signal's) interrupts the wait, the command is terminated and
reaped before the exception goes on: the test raises from a SIGALRM
handler once the wait has begun, and finds the child killed by SIGTERM.
No server.
"""

import os
import signal
import subprocess
import time

import pytest

from lockstudy import cluster

# run-study.sh's show_log, with the new program name
BASH_SHOW_LOG = r"""
me=lockstudy
show_log() {
    [ -s "$1" ] || return 0
    echo "$me: from $1:"
    awk -v pat="${2:-}" '
        pat != "" && tolower($0) ~ pat && n < 4 { m[n++] = $0 }
        { last[NR % 4] = $0 }
        END {
            if (n) for (i = 0; i < n; i++) print "    " m[i]
            else for (i = NR - 3; i <= NR; i++) if (i > 0) print "    " last[i % 4]
        }' "$1"
} >&2
show_log "$@"
"""  # noqa: E501

INITDB_LOG = """\
The files belonging to this database system will be owned by user "x".
This user must also own the server process.

initdb: error: directory "/r/data" exists but is not empty
initdb: hint: If you want to create a new database system, either remove \
or empty the directory "/r/data" or run initdb with an argument other \
than "/r/data".
"""
PGBENCH_LOG = """\
pgbench (18.6)
pgbench: error: client 0 script 0 aborted in command 1 query 0: ERROR:  x
pgbench: error: client 1 script 0 aborted in command 1 query 0: ERROR:  y
pgbench: error: client 2 script 0 aborted in command 1 query 0: ERROR:  z
pgbench: error: client 3 script 0 aborted in command 1 query 0: ERROR:  w
pgbench: error: client 4 script 0 aborted in command 1 query 0: ERROR:  v
pgbench: error: Run was aborted; the above results are incomplete.
transaction type: <builtin: select only>
"""
SERVER_LOG = """\
2024-01-01 00:00:00 UTC LOG:  starting PostgreSQL 18.6
2024-01-01 00:00:00 UTC LOG:  listening on Unix socket "/tmp/s/.s.PGSQL.1"
2024-01-01 00:00:00 UTC FATAL:  could not load library "pg_lockstat.so"
2024-01-01 00:00:00 UTC LOG:  database system is shut down
"""
LOGS = {
    "initdb": INITDB_LOG, "pgbench": PGBENCH_LOG, "server": SERVER_LOG,
    "two-lines": "first\nsecond\n", "one-line": "only line\n",
    "no-final-newline": "a\nb\nc\nd\ne", "blank-lines": "\n\n\n",
    "six": "".join("line %d\n" % i for i in range(1, 7)),
}
PATTERNS = ["error", "", "fatal|panic", "no such thing", "line [25]"]


def _bash(path, pattern):
    return subprocess.run(["bash", "-c", BASH_SHOW_LOG, "bash", path, pattern],
                          capture_output=True, text=True, check=True,
                          env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}).stderr


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("log", sorted(LOGS))
def test_show_log_as_the_bash_function(tmp_path, capsys, log, pattern):
    path = _write(str(tmp_path / (log + ".log")), LOGS[log])
    cluster.show_log(path, pattern)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == _bash(path, pattern)


def test_show_log_matching_lines_first(tmp_path, capsys):
    path = _write(str(tmp_path / "initdb.log"), INITDB_LOG)
    cluster.show_log(path, "error")
    assert capsys.readouterr().err == (
        "lockstudy: from %s:\n"
        '    initdb: error: directory "/r/data" exists but is not empty\n'
        % path)


def test_show_log_at_most_four(tmp_path, capsys):
    path = _write(str(tmp_path / "pgbench.log"), PGBENCH_LOG)
    cluster.show_log(path, "error")
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "lockstudy: from %s:" % path
    assert err[1:] == ["    pgbench: error: client %d script 0 aborted in "
                       "command 1 query 0: ERROR:  %s" % (i, c)
                       for i, c in enumerate("xyzw")]


def test_show_log_else_the_last_four(tmp_path, capsys):
    path = _write(str(tmp_path / "server.log"), SERVER_LOG)
    cluster.show_log(path, "error")
    assert capsys.readouterr().err == "lockstudy: from %s:\n%s" % (
        path, "".join("    " + line + "\n"
                      for line in SERVER_LOG.splitlines()[-4:]))
    path = _write(str(tmp_path / "six.log"), LOGS["six"])
    cluster.show_log(path)
    assert capsys.readouterr().err.splitlines()[1:] == [
        "    line 3", "    line 4", "    line 5", "    line 6"]


def test_show_log_ignores_case(tmp_path, capsys):
    path = _write(str(tmp_path / "server.log"), SERVER_LOG)
    cluster.show_log(path, "fatal")
    assert capsys.readouterr().err.splitlines()[1:] == [
        "    " + SERVER_LOG.splitlines()[2]]


@pytest.mark.parametrize("pattern", ["", "error"])
def test_show_log_of_nothing(tmp_path, capsys, pattern):
    empty = _write(str(tmp_path / "empty.log"), "")
    cluster.show_log(empty, pattern)
    cluster.show_log(str(tmp_path / "missing.log"), pattern)
    assert capsys.readouterr().err == ""
    assert _bash(empty, pattern) == _bash(str(tmp_path / "missing.log"),
                                          pattern) == ""


def test_show_log_of_a_part(tmp_path, capsys):
    """text: the part of the log a failed start wrote; the log is
    named."""
    path = _write(str(tmp_path / "server.log"), "old 1\nold 2\n")
    cluster.show_log(path, text="new 1\nnew 2\n")
    assert capsys.readouterr().err == (
        "lockstudy: from %s:\n    new 1\n    new 2\n" % path)
    cluster.show_log(path, text="")
    assert capsys.readouterr().err == ""


# --- run_logged --------------------------------------------------------------

def test_run_logged_status_and_output(tmp_path):
    out = str(tmp_path / "out.log")
    rc = cluster.run_logged(["sh", "-c", "echo to stdout; echo to stderr >&2;"
                             " exit 3"], out)
    assert rc == 3
    with open(out) as f:
        assert sorted(f.read().splitlines()) == ["to stderr", "to stdout"]
    assert cluster.run_logged(["true"], out) == 0
    with open(out) as f:
        assert f.read() == ""  # the file is written anew


def test_run_logged_stdin_is_dev_null(tmp_path):
    out = str(tmp_path / "out.log")
    assert cluster.run_logged(["readlink", "/proc/self/fd/0"], out) == 0
    with open(out) as f:
        assert f.read() == "/dev/null\n"


class Stop(Exception):
    pass


def test_run_logged_terminates_the_child_when_interrupted(tmp_path):
    """SIGALRM every 50 ms until the wait for the child has begun; then
    the handler raises (as the study's SIGINT handler does)."""
    waiting = []

    def handler(signum, frame):
        f = frame
        while f is not None and f.f_code is not subprocess.Popen.wait.__code__:
            f = f.f_back
        if f is None:
            return  # not waiting yet: the timer rings again
        waiting.append(f.f_locals["self"])
        signal.setitimer(signal.ITIMER_REAL, 0)
        raise Stop()

    old = signal.signal(signal.SIGALRM, handler)
    start = time.monotonic()
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
        with pytest.raises(Stop):
            cluster.run_logged(["sleep", "100"], str(tmp_path / "out.log"))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    proc = waiting[0]
    # terminated (SIGTERM), and reaped: no process of that pid is left
    assert proc.returncode == -signal.SIGTERM
    with pytest.raises(ProcessLookupError):
        os.kill(proc.pid, 0)
    assert time.monotonic() - start < 90


def test_run_logged_status_of_a_killed_command(tmp_path):
    out = str(tmp_path / "out.log")
    assert cluster.run_logged(["sh", "-c", "kill -TERM $$"], out) == 143
