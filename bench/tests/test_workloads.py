"""Tests of lockstudy.workloads: WORKLOAD, checked.

The refusals of workloads that bench/run-study.sh made (REFUSALS, proved
as in test_params.py) and its list of valid names; the checkout's scripts
with their header lines, read as the bash code's sed read them, and the
workloads built into pgbench.  The sysbench workloads, which the bash
code did not have: their names after the others in the list of valid
ones, SYSBENCH_TABLES and SYSBENCH_TABLE_SIZE, and the refusals
(SYSBENCH_REFUSALS; sysbench missing or without its PostgreSQL driver,
found through the environment's PATH, whose sysbench here is a script
that prints a --help).
"""

import os
import shutil
import subprocess

import pytest

from fakesite import (CHECKOUT, SYSBENCH_HELP, SYSBENCH_NAMES,
                      assert_bash_refused, assert_refused, case_ids,
                      fake_sysbench, needs_bash, shell_workloads, write)
from lockstudy import spec, workloads



# (id, environment, message); {top}, {caller}, {bindir}, {pg_config} and
# {tmp} are the site's; the message is run-study.sh's after its
# "run-study: error: "
REFUSALS = [
    ("workload-bad-settings", {"WORKLOAD": "bad-settings"},
     'WORKLOAD bad-settings: bad server-settings line "shared_buffers=1MB" '
     '(name = value)'),
]


@pytest.mark.parametrize("name, given, message", REFUSALS,
                         ids=case_ids(REFUSALS))
def test_refusal(site, name, given, message):
    assert_refused(site, given, message)


@needs_bash
@pytest.mark.parametrize("name, given, message", REFUSALS,
                         ids=case_ids(REFUSALS))
def test_refusal_is_the_bash_one(site, name, given, message):
    assert_bash_refused(site, given, message)


def test_unknown_workload(site):
    """The names of the bash code, then the sysbench workloads, which it
    did not have."""
    valid = shell_workloads(site.top) + " " + SYSBENCH_NAMES
    for name in ("nope", "Eviction", "../workloads/eviction", "eviction.sql",
                 "sysbench", "oltp_read_only", "sysbench-write-only"):
        with pytest.raises(spec.SpecError) as e:
            site.study({"WORKLOAD": name})
        assert str(e.value) == 'unknown WORKLOAD "%s" (valid: %s)' % (name,
                                                                      valid)
    assert "eviction" in valid.split() and "bad-settings" in valid.split()


@needs_bash
def test_unknown_workload_is_the_bash_one(site):
    rc, err = site.bash({"WORKLOAD": "nope"})
    # the bash list ended in the blank of tr '\n' ' '
    assert rc == 1
    assert err == 'run-study: error: unknown WORKLOAD "nope" (valid: %s )\n' \
        % shell_workloads(site.top)


def _sed(expr, path):
    return subprocess.run(["sed", "-n", expr, path], capture_output=True,
                          text=True, check=True).stdout


@pytest.mark.parametrize("name", sorted(
    f[:-4] for f in os.listdir(os.path.join(CHECKOUT, "bench", "workloads"))
    if f.endswith(".sql")))
def test_workload_scripts(site, name):
    """The checkout's scripts: -f and the pgbench-options of the header,
    its server settings, as the bash code's sed read them."""
    script = os.path.join(site.top, "bench", "workloads", name + ".sql")
    w = site.study({"WORKLOAD": name}).workload
    assert w.name == name
    assert w.args == tuple(["-f", script] + _sed(
        "s/^-- pgbench-options: //p", script).split())
    assert w.settings == tuple(_sed("s/^-- server-settings: //p",
                                    script).splitlines())


def test_eviction_workload(site):
    w = site.study({"WORKLOAD": "eviction"}).workload
    script = os.path.join(site.top, "bench", "workloads", "eviction.sql")
    assert w.args == ("-f", script, "-M", "prepared")
    assert w.settings == ("shared_buffers = 1MB",)
    assert w.describe() == "-f %s -M prepared; shared_buffers = 1MB" % script


@pytest.mark.parametrize("name, args", [
    ("select-only", ("-S", "-M", "prepared")),
    ("tpcb-like", ("-M", "prepared")),
    ("simple-update", ("-N", "-M", "prepared"))])
def test_builtin_workloads(site, name, args):
    w = site.study({"WORKLOAD": name}).workload
    assert w == spec.Workload(name, args, ())
    assert w.describe() == " ".join(args)


def test_workload_header_lines(site):
    script = os.path.join(site.top, "bench", "workloads", "mine.sql")
    write(script, "-- pgbench-options: -M prepared\n"
           "-- pgbench-options: --max-tries=3\n"
           "-- server-settings: shared_buffers = 16MB\n"
           "-- server-settings: wal_buffers = 1MB   \n"
           "--server-settings: not = a header line\n"
           "SELECT 1; -- server-settings: nor = this\n")
    w = site.study({"WORKLOAD": "mine"}).workload
    assert w.args == ("-f", script, "-M", "prepared", "--max-tries=3")
    assert w.settings == ("shared_buffers = 16MB", "wal_buffers = 1MB   ")
    assert w.describe() == ("-f %s -M prepared --max-tries=3; shared_buffers"
                            " = 16MB, wal_buffers = 1MB   " % script)
    assert w.setup == ()


def test_workload_setup_lines(site):
    """"-- setup:" lines: SQL statements, in their order, run once after
    pgbench -i (module runner); not in the options or the settings."""
    script = os.path.join(site.top, "bench", "workloads", "mine.sql")
    write(script, "-- setup: CREATE EXTENSION lockstat_test\n"
           "-- server-settings: shared_buffers = 16MB\n"
           "-- setup: SELECT 1; SELECT 2\n"
           "--setup: not a header line\n"
           "SELECT 1; -- setup: nor this\n")
    w = site.study({"WORKLOAD": "mine"}).workload
    assert w.setup == ("CREATE EXTENSION lockstat_test", "SELECT 1; SELECT 2")
    assert w.args == ("-f", script)
    assert w.settings == ("shared_buffers = 16MB",)


@pytest.mark.parametrize("line", ["shared_buffers =1MB", "Shared = 1",
                                  "shared_buffers =  1MB", " x = 1", "x ="])
def test_bad_server_settings_lines(site, line):
    write(os.path.join(site.top, "bench", "workloads", "mine.sql"),
           "-- server-settings: %s\nSELECT 1;\n" % line)
    with pytest.raises(spec.SpecError) as e:
        site.study({"WORKLOAD": "mine"})
    assert str(e.value) == ('WORKLOAD mine: bad server-settings line "%s" '
                            '(name = value)' % line)


# --- the sysbench workloads, which the bash harness did not have -------------

@pytest.mark.parametrize("name, script", [
    ("sysbench-point-select", "oltp_point_select"),
    ("sysbench-read-only", "oltp_read_only"),
    ("sysbench-read-write", "oltp_read_write")])
def test_sysbench_workloads(site, name, script):
    """4 tables by default, with the rows of pgbench_accounts at SCALE
    between them."""
    path = fake_sysbench(site)
    s = site.study({"WORKLOAD": name, "PATH": path})
    assert s.workload == spec.Workload(
        name, (script, "--tables=4", "--table-size=250000"), (), "sysbench")
    assert s.workload.sysbench
    assert s.workload.describe() == (
        "sysbench %s --tables=4 --table-size=250000" % script)
    assert (s.sysbench_tables, s.sysbench_table_size) == (4, 250000)
    s = site.study({"WORKLOAD": name, "PATH": path, "SCALE": "1",
                    "SYSBENCH_TABLES": "3"})
    assert (s.sysbench_tables, s.sysbench_table_size) == (3, 33333)
    assert s.workload.args == (script, "--tables=3", "--table-size=33333")
    s = site.study({"WORKLOAD": name, "PATH": path, "SYSBENCH_TABLES": "1",
                    "SYSBENCH_TABLE_SIZE": "5000"})
    assert s.workload.args == (script, "--tables=1", "--table-size=5000")
    # make passes unset variables empty
    s = site.study({"WORKLOAD": name, "PATH": path, "SYSBENCH_TABLES": "",
                    "SYSBENCH_TABLE_SIZE": ""})
    assert (s.sysbench_tables, s.sysbench_table_size) == (4, 250000)


def test_sysbench_table_size_at_least_one_row(site):
    s = site.study({"WORKLOAD": "sysbench-read-only", "SCALE": "1",
                    "SYSBENCH_TABLES": "300000",
                    "PATH": fake_sysbench(site)})
    assert s.sysbench_table_size == 1


def test_pgbench_workloads_are_pgbench_s(site):
    s = site.study({"WORKLOAD": "eviction"})
    assert s.workload.tool == "pgbench" and not s.workload.sysbench
    assert (s.sysbench_tables, s.sysbench_table_size) == (0, 0)
    assert "SYSBENCH" not in s.parameters()


def test_workload_names_end_with_sysbench_s(site):
    names = workloads.workload_names(site.top)
    assert names[:3] == ["select-only", "tpcb-like", "simple-update"]
    assert " ".join(names[-3:]) == SYSBENCH_NAMES
    assert "eviction" in names


SYSBENCH_REFUSALS = [
    ("tables-zero", {"SYSBENCH_TABLES": "0"},
     'SYSBENCH_TABLES must be a positive integer (sysbench --tables), not '
     '"0"'),
    ("tables-text", {"SYSBENCH_TABLES": "four"},
     'SYSBENCH_TABLES must be a positive integer (sysbench --tables), not '
     '"four"'),
    ("size-negative", {"SYSBENCH_TABLE_SIZE": "-5"},
     'SYSBENCH_TABLE_SIZE must be a positive integer (sysbench '
     '--table-size, rows per table), not "-5"'),
    ("size-huge", {"SYSBENCH_TABLE_SIZE": "10000000000"},
     'SYSBENCH_TABLE_SIZE must be a positive integer (sysbench '
     '--table-size, rows per table), not "10000000000"'),
    ("threads", {"THREADS": "2"},
     'THREADS is pgbench -j; sysbench runs one thread per client '
     '(WORKLOAD=sysbench-read-write): leave THREADS unset'),
    ("not-installed", {"PATH": "{tmp}/empty"},
     "WORKLOAD=sysbench-read-write runs sysbench, which is not on PATH: "
     "install Debian's package sysbench (apt-get install sysbench; "
     "scripts/deps.sh installs it)"),
]


@pytest.mark.parametrize("name, given, message", SYSBENCH_REFUSALS,
                         ids=case_ids(SYSBENCH_REFUSALS))
def test_sysbench_refusal(site, name, given, message):
    env = {"WORKLOAD": "sysbench-read-write", "PATH": fake_sysbench(site)}
    env.update(given)
    os.makedirs(os.path.join(site.tmp, "empty"), exist_ok=True)
    assert_refused(site, env, message)


def test_sysbench_without_its_postgresql_driver(site):
    path = fake_sysbench(site, SYSBENCH_HELP.replace(
        "  pgsql - PostgreSQL driver\n", ""))
    with pytest.raises(spec.SpecError) as e:
        site.study({"WORKLOAD": "sysbench-point-select", "PATH": path})
    assert str(e.value) == (
        "WORKLOAD=sysbench-point-select runs sysbench, but %s/sysbench has "
        "no PostgreSQL driver (pgsql is not among the drivers of its "
        "--help): install Debian's package sysbench (apt-get install "
        "sysbench; scripts/deps.sh installs it)" % path)


def test_sysbench_not_executable(site):
    """A sysbench on PATH that no one may run is not found."""
    path = fake_sysbench(site)
    os.chmod(os.path.join(path, "sysbench"), 0o644)
    with pytest.raises(spec.SpecError) as e:
        site.study({"WORKLOAD": "sysbench-point-select", "PATH": path})
    assert "runs sysbench, which is not on PATH" in str(e.value)


@pytest.mark.parametrize("given", [{"SYSBENCH_TABLES": "4"},
                                   {"SYSBENCH_TABLE_SIZE": "1000"}])
def test_sysbench_settings_need_a_sysbench_workload(site, given):
    """Not silently left unused under pgbench."""
    name = list(given)[0]
    for workload in ("select-only", "eviction"):
        with pytest.raises(spec.SpecError) as e:
            site.study(dict(given, WORKLOAD=workload))
        assert str(e.value) == (
            "%s is for the sysbench workloads (%s), not WORKLOAD=%s"
            % (name, SYSBENCH_NAMES, workload))


def test_sysbench_checked_after_an_unknown_workload(site):
    """An unknown WORKLOAD is named first, whatever else is set."""
    with pytest.raises(spec.SpecError) as e:
        site.study({"WORKLOAD": "nope", "SYSBENCH_TABLES": "0",
                    "PATH": os.path.join(site.tmp, "empty")})
    assert str(e.value).startswith('unknown WORKLOAD "nope" (valid: ')


def test_sysbench_parameters_line(site):
    s = site.study({"WORKLOAD": "sysbench-read-only", "SEED": "3",
                    "SCALE": "2", "PATH": fake_sysbench(site)})
    assert s.parameters() == (
        'SCALE=2 STRATEGIES="tas ttas_spin ttas" CLIENTS="1 8 64" '
        'DURATION=5 WARMUP=3 WARMUP_ROUND=1 WORKLOAD=sysbench-read-only '
        'REPEAT=12 SEED=3 THRESHOLD=2 THREADS= SYSBENCH_TABLES=4 '
        'SYSBENCH_TABLE_SIZE=50000')


@pytest.mark.skipif(shutil.which("sysbench") is None,
                    reason="no sysbench (apt-get install sysbench)")
def test_the_installed_sysbench_passes(site):
    """Debian's sysbench has the PostgreSQL driver."""
    s = site.study({"WORKLOAD": "sysbench-point-select",
                    "PATH": "/usr/bin:/bin"})
    assert s.workload.sysbench
