"""Tests of lockstudy.spec: the study's parameters, checked before anything
starts.

Every refusal of the parameter checks of bench/run-study.sh (its lines
1-250) has a case in REFUSALS with the message the user reads; each is
proved twice: spec.from_environment() raises SpecError with exactly that
text, and bench/run-study.sh itself, run on the same environment in a
throwaway copy of the checkout (where it can go no further than its
checks), dies with "run-study: error: " and the same text.  ACCEPTED lists
environments that both accept (the bash script then stops at the missing
bench/study_stats.py of the copy).  Then what the accepted parameters
become: the defaults, empty values counting as unset, the variants (patch
files relative to the caller's directory, then to the checkout; settings;
strategies), the workloads and their header lines, and the first line of
commands.txt, compared with what the bash code printed.  Unpatched
variants and STOCK_PG_CONFIG, which the bash code did not have, with
their refusals (UNPATCHED_REFUSALS, STOCK_REFUSALS).  The sysbench
workloads, which it did not have either: their names after the others in
the list of valid ones, SYSBENCH_TABLES and SYSBENCH_TABLE_SIZE, and the
refusals (SYSBENCH_REFUSALS; sysbench missing or without its PostgreSQL
driver, found through the environment's PATH).  No server: the
pg_config of these tests is a shell script printing a bindir of fake
programs, and their sysbench one that prints a --help.
"""

import dataclasses
import os
import pwd
import shutil
import subprocess

import pytest

from lockstudy import spec

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(os.path.dirname(HERE))
# the programs run-study.sh required in the bindir of PG_CONFIG
PROGRAMS = ("initdb", "pg_ctl", "postgres", "psql", "pgbench")
# its list of valid strategies, in its order
VALID_STRATEGIES = "default tas ttas_spin ttas ttas_backoff"

GOOD_PATCH = """\
--- a/src/f.c
+++ b/src/f.c
@@ -1 +1 @@
-a
+b
"""
OTHER_PATCH = GOOD_PATCH.replace("+b", "+c")
BAD_SETTINGS_SQL = """\
-- a script whose header has a bad server-settings line
-- server-settings: shared_buffers=1MB
SELECT 1;
"""


# the last commit of the bash harness
BASH_COMMIT = "4e541ba"


def _bash_script():
    """The text of bench/run-study.sh: the tree's, else that of the last
    commit of the bash harness; None without either (no git history)."""
    path = os.path.join(CHECKOUT, "bench", "run-study.sh")
    if os.path.isfile(path):
        with open(path) as f:
            return f.read()
    out = subprocess.run(["git", "-c", "safe.directory=*", "-C", CHECKOUT,
                          "show", BASH_COMMIT + ":bench/run-study.sh"],
                         capture_output=True, text=True)
    return out.stdout if out.returncode == 0 else None


BASH_SCRIPT = _bash_script()
needs_bash = pytest.mark.skipif(BASH_SCRIPT is None,
                                reason="bench/run-study.sh is gone")


def _write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


class Site:
    """A throwaway checkout (top: bench/workloads, a copy of run-study.sh
    without bench/study_stats.py), the caller's directory with patch
    files, and a fake server: pg_config prints bindir, whose programs
    exist."""

    def __init__(self, tmp):
        tmp = os.path.realpath(str(tmp))
        self.top = os.path.join(tmp, "top")
        self.caller = os.path.join(tmp, "caller")
        self.bindir = os.path.join(tmp, "pg", "bin")
        self.pg_config = os.path.join(self.bindir, "pg_config")
        workloads = os.path.join(self.top, "bench", "workloads")
        os.makedirs(workloads)
        for f in os.listdir(os.path.join(CHECKOUT, "bench", "workloads")):
            if f.endswith(".sql"):
                shutil.copy(os.path.join(CHECKOUT, "bench", "workloads", f),
                            workloads)
        _write(os.path.join(workloads, "bad-settings.sql"), BAD_SETTINGS_SQL)
        if BASH_SCRIPT is not None:
            _write(os.path.join(self.top, "bench", "run-study.sh"),
                   BASH_SCRIPT, 0o755)
        for prog in PROGRAMS:
            _write(os.path.join(self.bindir, prog), "#!/bin/sh\nexit 1\n",
                   0o755)
        _write(self.pg_config, '#!/bin/sh\n[ "$1" = --bindir ] || exit 1\n'
               'echo %s\n' % self.bindir, 0o755)
        # patch files: the caller's, the checkout's, and bad ones
        _write(os.path.join(self.caller, "good.patch"), GOOD_PATCH)
        _write(os.path.join(self.caller, "both.patch"), GOOD_PATCH)
        _write(os.path.join(self.top, "both.patch"), OTHER_PATCH)
        _write(os.path.join(self.top, "top-only.patch"), OTHER_PATCH)
        _write(os.path.join(self.caller, "empty.patch"), "")
        _write(os.path.join(self.caller, "nodiff.patch"),
               "--- a/src/f.c\n+++b/src/f.c\n +++ indented\n")
        os.makedirs(os.path.join(self.caller, "adir.patch"))
        _write(os.path.join(self.caller, "sp ace", "x.patch"), GOOD_PATCH)
        os.symlink(os.path.join(self.caller, "sp ace"),
                   os.path.join(self.caller, "spl"))
        os.makedirs(os.path.join(self.caller, "real"))
        _write(os.path.join(self.caller, "real", "r.patch"), GOOD_PATCH)
        os.symlink(os.path.join(self.caller, "real"),
                   os.path.join(self.caller, "lnk"))
        # a pg_config that fails, one that prints no bindir, one that
        # cannot be executed, and a server whose psql is missing
        _write(os.path.join(tmp, "failing", "pg_config"),
               "#!/bin/sh\nexit 2\n", 0o755)
        _write(os.path.join(tmp, "silent", "pg_config"), "#!/bin/sh\n",
               0o755)
        _write(os.path.join(tmp, "noexec", "pg_config"),
               "#!/bin/sh\necho %s\n" % self.bindir, 0o644)
        nopsql = os.path.join(tmp, "nopsql", "bin")
        for prog in PROGRAMS:
            if prog != "psql":
                _write(os.path.join(nopsql, prog), "#!/bin/sh\n", 0o755)
        _write(os.path.join(nopsql, "pg_config"),
               "#!/bin/sh\necho %s\n" % nopsql, 0o755)
        # pgbench present but not executable by anyone
        noxbench = os.path.join(tmp, "noxbench", "bin")
        for prog in PROGRAMS:
            _write(os.path.join(noxbench, prog), "#!/bin/sh\n",
                   0o644 if prog == "pgbench" else 0o755)
        _write(os.path.join(noxbench, "pg_config"),
               "#!/bin/sh\necho %s\n" % noxbench, 0o755)
        self.tmp = tmp

    def fill(self, text):
        return text.format(top=self.top, caller=self.caller,
                           bindir=self.bindir, pg_config=self.pg_config,
                           tmp=self.tmp)

    def env(self, given):
        """The environment of a case: PG_CONFIG the fake server's unless
        the case says otherwise (None: unset)."""
        env = {"PG_CONFIG": self.pg_config}
        for k, v in given.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = self.fill(v)
        return env

    def study(self, given, check_patches=True):
        return spec.from_environment(self.env(given), self.top, self.caller,
                                     check_patches)

    def bash(self, given, cwd=None):
        """run-study.sh on the environment of a case, called from the
        caller's directory (or cwd): its exit status and stderr."""
        env = {"PATH": "/usr/bin:/bin", "HOME": self.tmp, "LC_ALL": "C"}
        env.update(self.env(given))
        out = subprocess.run(["bash", os.path.join(self.top, "bench",
                                                   "run-study.sh")],
                             cwd=cwd or self.caller, env=env,
                             capture_output=True,
                             text=True, timeout=120,
                             stdin=subprocess.DEVNULL)
        return out.returncode, out.stderr


@pytest.fixture
def site(tmp_path):
    return Site(tmp_path)


def _shell_workloads(top):
    """The valid WORKLOAD names as run-study.sh listed them."""
    out = subprocess.run(
        "cd %s/bench/workloads && ls *.sql | sed 's/\\.sql$//' | tr '\\n' ' '"
        % top, shell=True, capture_output=True, text=True,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}, check=True).stdout
    return "select-only tpcb-like simple-update " + out.strip()


# the sysbench workloads, after the names of the bash code
SYSBENCH_NAMES = "sysbench-point-select sysbench-read-only sysbench-read-write"


# (id, environment, message); {top}, {caller}, {bindir}, {pg_config} and
# {tmp} are the site's; the message is run-study.sh's after its
# "run-study: error: "
REFUSALS = [
    ("pg_config-unset", {"PG_CONFIG": None},
     "PG_CONFIG must point to the pg_config of the patched server"),
    ("pg_config-empty", {"PG_CONFIG": ""},
     "PG_CONFIG must point to the pg_config of the patched server"),
    ("pg_config-missing", {"PG_CONFIG": "{tmp}/nowhere/pg_config"},
     'PG_CONFIG="{tmp}/nowhere/pg_config" cannot be run; it must point to '
     'the pg_config of the patched server'),
    ("pg_config-fails", {"PG_CONFIG": "{tmp}/failing/pg_config"},
     'PG_CONFIG="{tmp}/failing/pg_config" cannot be run; it must point to '
     'the pg_config of the patched server'),
    ("pg_config-not-executable", {"PG_CONFIG": "{tmp}/noexec/pg_config"},
     'PG_CONFIG="{tmp}/noexec/pg_config" cannot be run; it must point to '
     'the pg_config of the patched server'),
    ("pg_config-directory", {"PG_CONFIG": "{tmp}"},
     'PG_CONFIG="{tmp}" cannot be run; it must point to the pg_config of '
     'the patched server'),
    ("psql-missing", {"PG_CONFIG": "{tmp}/nopsql/bin/pg_config"},
     'PG_CONFIG="{tmp}/nopsql/bin/pg_config": {tmp}/nopsql/bin/psql is '
     'missing'),
    ("pgbench-not-executable", {"PG_CONFIG": "{tmp}/noxbench/bin/pg_config"},
     'PG_CONFIG="{tmp}/noxbench/bin/pg_config": {tmp}/noxbench/bin/pgbench '
     'is missing'),
    ("scale-zero", {"SCALE": "0"},
     'SCALE must be a positive integer, not "0"'),
    ("scale-word", {"SCALE": "ten"},
     'SCALE must be a positive integer, not "ten"'),
    ("scale-negative", {"SCALE": "-1"},
     'SCALE must be a positive integer, not "-1"'),
    ("scale-leading-zero", {"SCALE": "010"},
     'SCALE must be a positive integer, not "010"'),
    ("scale-blank", {"SCALE": " 10"},
     'SCALE must be a positive integer, not " 10"'),
    ("repeat-zero", {"REPEAT": "0"},
     'REPEAT must be a positive integer, not "0"'),
    ("repeat-fraction", {"REPEAT": "1.5"},
     'REPEAT must be a positive integer, not "1.5"'),
    ("duration-zero", {"DURATION": "0"},
     'DURATION must be a positive integer (seconds), not "0"'),
    ("duration-unit", {"DURATION": "5s"},
     'DURATION must be a positive integer (seconds), not "5s"'),
    ("warmup-negative", {"WARMUP": "-1"},
     'WARMUP must be 0 or a positive integer (seconds), not "-1"'),
    ("warmup-double-zero", {"WARMUP": "00"},
     'WARMUP must be 0 or a positive integer (seconds), not "00"'),
    ("seed-negative", {"SEED": "-1"},
     'SEED must be a non-negative integer, not "-1"'),
    ("seed-leading-zero", {"SEED": "01"},
     'SEED must be a non-negative integer, not "01"'),
    ("seed-19-digits", {"SEED": "1234567890123456789"},
     'SEED must be a non-negative integer, not "1234567890123456789"'),
    ("threshold-100", {"THRESHOLD": "100"},
     'THRESHOLD must be a percentage from 0 to below 100, not "100"'),
    ("threshold-trailing-dot", {"THRESHOLD": "2."},
     'THRESHOLD must be a percentage from 0 to below 100, not "2."'),
    ("threshold-leading-dot", {"THRESHOLD": ".5"},
     'THRESHOLD must be a percentage from 0 to below 100, not ".5"'),
    ("threshold-percent-sign", {"THRESHOLD": "2%"},
     'THRESHOLD must be a percentage from 0 to below 100, not "2%"'),
    ("threshold-negative", {"THRESHOLD": "-2"},
     'THRESHOLD must be a percentage from 0 to below 100, not "-2"'),
    ("clients-zero", {"CLIENTS": "1 0 8"},
     'CLIENTS must be positive integers, not "0"'),
    ("clients-comma", {"CLIENTS": "1,8"},
     'CLIENTS must be positive integers, not "1,8"'),
    ("threads-zero", {"THREADS": "0"},
     'THREADS must be a positive integer, not "0"'),
    ("threads-word", {"THREADS": "all"},
     'THREADS must be a positive integer, not "all"'),
    ("strategies-and-variants",
     {"STRATEGIES": "tas", "VARIANTS": "a; b"},
     "give STRATEGIES or VARIANTS, not both (a strategy is the setting "
     "pg_lockstat.spin_strategy=<strategy> of a variant)"),
    ("blank-strategies-and-variants",
     {"STRATEGIES": " ", "VARIANTS": "a; b"},
     "give STRATEGIES or VARIANTS, not both (a strategy is the setting "
     "pg_lockstat.spin_strategy=<strategy> of a variant)"),
    ("variant-name-upper", {"VARIANTS": "base; Onefl: work_mem=4MB"},
     'VARIANTS: bad variant name "Onefl" in " Onefl: work_mem=4MB" '
     '(lower-case letters, digits, _ and -, at most 31; the form is '
     '"name: patch-file ... setting=value ...; name: ...")'),
    ("variant-name-32", {"VARIANTS": "a" * 32},
     'VARIANTS: bad variant name "%s" in "%s" (lower-case letters, '
     'digits, _ and -, at most 31; the form is "name: patch-file ... '
     'setting=value ...; name: ...")' % ("a" * 32, "a" * 32)),
    ("variant-name-empty", {"VARIANTS": "base; : work_mem=4MB"},
     'VARIANTS: bad variant name "" in " : work_mem=4MB" (lower-case '
     'letters, digits, _ and -, at most 31; the form is "name: '
     'patch-file ... setting=value ...; name: ...")'),
    ("variant-name-blank-inside", {"VARIANTS": "my base"},
     'VARIANTS: bad variant name "my base" in "my base" (lower-case '
     'letters, digits, _ and -, at most 31; the form is "name: '
     'patch-file ... setting=value ...; name: ...")'),
    ("variant-name-leading-dash", {"VARIANTS": "-a"},
     'VARIANTS: bad variant name "-a" in "-a" (lower-case letters, '
     'digits, _ and -, at most 31; the form is "name: patch-file ... '
     'setting=value ...; name: ...")'),
    ("variant-twice", {"VARIANTS": "a; b; a: work_mem=4MB"},
     'VARIANTS: variant "a" appears twice'),
    ("setting-name-upper", {"VARIANTS": "a: Work_mem=4MB"},
     'VARIANTS: variant a: bad setting name "Work_mem" in "Work_mem=4MB" '
     '(name=value, the name in lower case)'),
    ("setting-value-empty", {"VARIANTS": "a: work_mem="},
     'VARIANTS: variant a: bad value in "work_mem=" (not empty, no quotes, '
     'backslashes or #)'),
    ("setting-value-quote", {"VARIANTS": "a: application_name=it's"},
     'VARIANTS: variant a: bad value in "application_name=it\'s" (not '
     'empty, no quotes, backslashes or #)'),
    ("setting-value-double-quote", {"VARIANTS": 'a: application_name=a"b'},
     'VARIANTS: variant a: bad value in "application_name=a"b" (not empty, '
     'no quotes, backslashes or #)'),
    ("setting-value-backslash", {"VARIANTS": "a: application_name=a\\b"},
     'VARIANTS: variant a: bad value in "application_name=a\\b" (not '
     'empty, no quotes, backslashes or #)'),
    ("setting-value-hash", {"VARIANTS": "a: application_name=a#b"},
     'VARIANTS: variant a: bad value in "application_name=a#b" (not '
     'empty, no quotes, backslashes or #)'),
    ("setting-twice", {"VARIANTS": "a: work_mem=4MB work_mem=8MB"},
     "VARIANTS: variant a sets work_mem twice"),
    ("setting-port", {"VARIANTS": "a: port=5433"},
     "VARIANTS: variant a: port is set by the study itself (its clients "
     "connect through it)"),
    ("setting-listen-addresses", {"VARIANTS": "a: listen_addresses=*"},
     "VARIANTS: variant a: listen_addresses is set by the study itself "
     "(its clients connect through it)"),
    ("setting-socket-dirs",
     {"VARIANTS": "a: unix_socket_directories=/tmp"},
     "VARIANTS: variant a: unix_socket_directories is set by the study "
     "itself (its clients connect through it)"),
    ("unknown-strategy", {"VARIANTS": "a: pg_lockstat.spin_strategy=mcs"},
     'VARIANTS: variant a: unknown strategy "mcs" (valid: %s)'
     % VALID_STRATEGIES),
    ("patch-not-found", {"VARIANTS": "a: nope.patch"},
     'VARIANTS: variant a: patch file "nope.patch" not found (relative to '
     '{caller} or to {top}); a setting is name=value, without spaces'),
    ("patch-absolute-not-found", {"VARIANTS": "a: {tmp}/nope.patch"},
     'VARIANTS: variant a: patch file "{tmp}/nope.patch" not found; a '
     'setting is name=value, without spaces'),
    ("setting-with-spaces", {"VARIANTS": "a: work_mem = 4MB"},
     'VARIANTS: variant a: patch file "work_mem" not found (relative to '
     '{caller} or to {top}); a setting is name=value, without spaces'),
    ("setting-name-digit", {"VARIANTS": "a: 9x=1"},
     'VARIANTS: variant a: patch file "9x=1" not found (relative to '
     '{caller} or to {top}); a setting is name=value, without spaces'),
    ("patch-directory", {"VARIANTS": "a: adir.patch"},
     'VARIANTS: variant a: patch file "adir.patch" is not a regular file'),
    ("patch-empty", {"VARIANTS": "a: empty.patch"},
     'VARIANTS: variant a: patch file "empty.patch" has no unified diff in '
     'it (no +++ line)'),
    ("patch-no-plus-line", {"VARIANTS": "a: nodiff.patch"},
     'VARIANTS: variant a: patch file "nodiff.patch" has no unified diff '
     'in it (no +++ line)'),
    ("patch-space-in-path", {"VARIANTS": "a: spl/x.patch"},
     'VARIANTS: variant a: the path of patch file "{caller}/sp ace/x.patch" '
     'has a space; move or link it elsewhere'),
    ("patch-twice", {"VARIANTS": "a: good.patch ./good.patch"},
     'VARIANTS: variant a lists patch file "./good.patch" twice'),
    ("patch-twice-absolute",
     {"VARIANTS": "a: good.patch {caller}/good.patch"},
     'VARIANTS: variant a lists patch file "{caller}/good.patch" twice'),
    ("variants-blank", {"VARIANTS": " ;  ; "}, "VARIANTS is empty"),
    ("variants-newlines", {"VARIANTS": "\n \n"}, "VARIANTS is empty"),
    ("strategy-unknown", {"STRATEGIES": "tas mcs"},
     'unknown strategy "mcs" in STRATEGIES (valid: %s)' % VALID_STRATEGIES),
    ("strategy-twice", {"STRATEGIES": "tas ttas tas"},
     'strategy "tas" appears twice in STRATEGIES'),
    ("strategies-blank", {"STRATEGIES": "  "}, "STRATEGIES is empty"),
    ("workload-bad-settings", {"WORKLOAD": "bad-settings"},
     'WORKLOAD bad-settings: bad server-settings line "shared_buffers=1MB" '
     '(name = value)'),
    # the checks come in the order of the bash code: the numbers, in the
    # order the user reads them, before PG_CONFIG runs; THREADS after it;
    # the variants before the workload
    ("order-scale-before-pg_config",
     {"SCALE": "x", "SEED": "y", "PG_CONFIG": "{tmp}/nowhere/pg_config"},
     'SCALE must be a positive integer, not "x"'),
    ("order-seed-before-clients", {"CLIENTS": "x", "SEED": "y"},
     'SEED must be a non-negative integer, not "y"'),
    ("order-threshold-before-clients", {"CLIENTS": "x", "THRESHOLD": "y"},
     'THRESHOLD must be a percentage from 0 to below 100, not "y"'),
    ("order-clients-before-pg_config",
     {"CLIENTS": "x", "PG_CONFIG": "{tmp}/nowhere/pg_config"},
     'CLIENTS must be positive integers, not "x"'),
    ("order-pg_config-before-threads",
     {"THREADS": "x", "PG_CONFIG": "{tmp}/nowhere/pg_config"},
     'PG_CONFIG="{tmp}/nowhere/pg_config" cannot be run; it must point to '
     'the pg_config of the patched server'),
    ("order-threads-before-variants", {"THREADS": "x", "VARIANTS": "A"},
     'THREADS must be a positive integer, not "x"'),
    ("order-variants-before-workload",
     {"VARIANTS": "a: port=1", "WORKLOAD": "nope"},
     "VARIANTS: variant a: port is set by the study itself (its clients "
     "connect through it)"),
]


def _ids(cases):
    return [c[0] for c in cases]


@pytest.mark.parametrize("name, given, message", REFUSALS,
                         ids=_ids(REFUSALS))
def test_refusal(site, name, given, message):
    with pytest.raises(spec.SpecError) as e:
        site.study(given)
    assert str(e.value) == site.fill(message)


@needs_bash
@pytest.mark.parametrize("name, given, message", REFUSALS,
                         ids=_ids(REFUSALS))
def test_refusal_is_the_bash_one(site, name, given, message):
    rc, err = site.bash(given)
    assert rc == 1
    assert err == "run-study: error: %s\n" % site.fill(message)


def test_unknown_workload(site):
    """The names of the bash code, then the sysbench workloads, which it
    did not have."""
    valid = _shell_workloads(site.top) + " " + SYSBENCH_NAMES
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
        % _shell_workloads(site.top)


def test_unreadable_patch(site, monkeypatch):
    path = os.path.join(site.caller, "secret.patch")
    _write(path, GOOD_PATCH, 0)
    if os.geteuid() == 0:
        # root reads every file: access(2) answers as for another user
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, m: False if (
            p == path and m == os.R_OK) else real(p, m))
    with pytest.raises(spec.SpecError) as e:
        site.study({"VARIANTS": "a: secret.patch"})
    assert str(e.value) == (
        'VARIANTS: variant a: patch file "secret.patch" cannot be read by %s'
        % pwd.getpwuid(os.geteuid()).pw_name)


def test_relative_hint_when_called_from_the_checkout(site):
    """Called from the checkout itself, the hint names one directory."""
    with pytest.raises(spec.SpecError) as e:
        spec.from_environment(site.env({"VARIANTS": "a: nope.patch"}),
                              site.top, site.top)
    assert str(e.value) == (
        'VARIANTS: variant a: patch file "nope.patch" not found (relative to '
        '%s); a setting is name=value, without spaces' % site.top)


@needs_bash
def test_relative_hint_when_called_from_the_checkout_in_bash(site):
    rc, err = site.bash({"VARIANTS": "a: nope.patch"}, cwd=site.top)
    assert (rc, err) == (1, 'run-study: error: VARIANTS: variant a: patch '
                            'file "nope.patch" not found (relative to %s); a '
                            'setting is name=value, without spaces\n'
                            % site.top)


def test_blank_clients_refused(site):
    """CLIENTS of blanks only: "CLIENTS is empty".  (run-study.sh let it
    through to a study of no client count: its [ -n "$CLIENTS" ] saw the
    blanks; refusing is the intent of its message.)"""
    with pytest.raises(spec.SpecError) as e:
        site.study({"CLIENTS": "   "})
    assert str(e.value) == "CLIENTS is empty"


@needs_bash
def test_blank_clients_passed_the_bash_checks(site):
    rc, err = site.bash({"CLIENTS": "   "})
    assert (rc, err) == (1, "run-study: error: %s/bench/study_stats.py is "
                            "missing\n" % site.top)


def test_pg_config_printing_no_bindir(site):
    pg_config = os.path.join(site.tmp, "silent", "pg_config")
    with pytest.raises(spec.SpecError) as e:
        site.study({"PG_CONFIG": pg_config})
    assert str(e.value) == (
        'PG_CONFIG="%s" cannot be run; it must point to the pg_config of '
        'the patched server' % pg_config)


@pytest.mark.parametrize("prog", PROGRAMS)
def test_each_program_is_required(site, prog):
    os.remove(os.path.join(site.bindir, prog))
    with pytest.raises(spec.SpecError) as e:
        site.study({})
    assert str(e.value) == 'PG_CONFIG="%s": %s/%s is missing' % (
        site.pg_config, site.bindir, prog)


# make passes its unset variables empty
ALL_EMPTY = {k: "" for k in (
    "SCALE", "REPEAT", "DURATION", "WARMUP", "WARMUP_ROUND", "SEED",
    "THRESHOLD", "CLIENTS", "THREADS", "STRATEGIES", "VARIANTS", "WORKLOAD",
    "RUN_DIR", "VARIANT_DIR", "SYSBENCH_TABLES", "SYSBENCH_TABLE_SIZE")}
NUMBERS = {"SCALE": "1", "REPEAT": "3", "DURATION": "60", "WARMUP": "0",
           "WARMUP_ROUND": "0", "SEED": "0", "THRESHOLD": "0",
           "CLIENTS": " 4  16\t64 ", "THREADS": "2"}
# three variants: none, a patch of the caller's, then the checkout's and
# both.patch, which both have (the caller's is taken); ";" and a newline
VARIANTS = ("base; onefl: good.patch work_mem=4MB\n"
            "x_1-2: top-only.patch both.patch pg_lockstat.spin_strategy=ttas"
            " ; ")
# environments both accept
ACCEPTED = [
    ("defaults", {}),
    ("all-empty", ALL_EMPTY),
    ("numbers", NUMBERS),
    ("seed-18-digits", {"SEED": "123456789012345678"}),
    ("threshold-fraction", {"THRESHOLD": "99.99"}),
    ("strategies", {"STRATEGIES": "default ttas_backoff"}),
    ("variants", {"VARIANTS": VARIANTS}),
    ("variants-absolute", {"VARIANTS": "a: {caller}/real/r.patch"}),
    ("variants-through-link", {"VARIANTS": "a: lnk/r.patch"}),
    ("variant-name-31", {"VARIANTS": "a" * 31}),
    ("variant-setting-odd-name", {"VARIANTS": "a: _x.y_1=on"}),
    ("workload-script", {"WORKLOAD": "eviction"}),
    ("workload-builtin", {"WORKLOAD": "simple-update"}),
]


@pytest.mark.parametrize("name, given", ACCEPTED, ids=_ids(ACCEPTED))
def test_accepted(site, name, given):
    assert isinstance(site.study(given), spec.Study)


@needs_bash
@pytest.mark.parametrize("name, given", ACCEPTED, ids=_ids(ACCEPTED))
def test_accepted_by_bash(site, name, given):
    """run-study.sh passes its checks: it stops at the statistics script,
    which the throwaway checkout lacks."""
    rc, err = site.bash(given)
    assert (rc, err) == (1, "run-study: error: %s/bench/study_stats.py is "
                            "missing\n" % site.top)


def test_defaults(site):
    s = site.study({})
    assert (s.pg_config, s.bindir) == (site.pg_config, site.bindir)
    assert (s.scale, s.repeat, s.duration, s.warmup) == (10, 12, 5, 3)
    assert s.warmup_round is True
    assert s.threshold == "2"
    assert s.clients == (1, 8, 64) and s.max_clients == 64
    assert s.threads is None
    assert 0 <= s.seed < 1000000
    assert s.run_dir == os.path.join(site.top, "build", "run")
    assert s.variant_dir == os.path.join(site.top, "build", "variants")
    assert s.workload == spec.Workload("select-only",
                                       ("-S", "-M", "prepared"))
    assert s.names == ["tas", "ttas_spin", "ttas"]
    assert s.variants_given is None
    for v in s.variants:
        assert v.patches == ()
        assert v.settings == (("pg_lockstat.spin_strategy", v.name),)
        assert v.strategy == v.name
        assert v.settings_lines() == ["pg_lockstat.spin_strategy = '%s'"
                                      % v.name]


def test_empty_values_count_as_unset(site):
    """make passes its unset variables empty."""
    a, b = site.study(dict(ALL_EMPTY, SEED="7")), site.study({"SEED": "7"})
    assert a == b


def test_seed_is_drawn_when_unset(site):
    seeds = {site.study({}).seed for _ in range(20)}
    assert all(0 <= s < 1000000 for s in seeds)
    assert len(seeds) > 1


def test_numbers(site):
    s = site.study(NUMBERS)
    assert (s.scale, s.repeat, s.duration, s.warmup, s.seed) == (
        1, 3, 60, 0, 0)
    assert s.warmup_round is False
    assert s.threshold == "0"
    assert s.clients == (4, 16, 64) and s.max_clients == 64
    assert s.threads == 2
    assert site.study({"SEED": "123456789012345678"}).seed == \
        123456789012345678
    assert site.study({"THRESHOLD": "99.99"}).threshold == "99.99"


def test_run_dir_and_variant_dir(site):
    s = site.study({"RUN_DIR": "/x/runs", "VARIANT_DIR": "/y/builds"})
    assert (s.run_dir, s.variant_dir) == ("/x/runs", "/y/builds")


def test_strategies(site):
    s = site.study({"STRATEGIES": " ttas_backoff\tdefault "})
    assert s.names == ["ttas_backoff", "default"]
    assert [v.strategy for v in s.variants] == ["ttas_backoff", "default"]
    assert s.variants_given is None
    assert s.compared() == 'STRATEGIES="ttas_backoff default"'


def test_variants(site):
    s = site.study({"VARIANTS": VARIANTS})
    assert s.names == ["base", "onefl", "x_1-2"]
    base, onefl, x = s.variants
    assert base == spec.Variant("base")
    assert onefl.patches == (os.path.join(site.caller, "good.patch"),)
    assert onefl.settings == (("work_mem", "4MB"),)
    assert onefl.strategy is None
    assert onefl.settings_lines() == ["work_mem = '4MB'"]
    # top-only.patch is the checkout's; both.patch the caller's, first
    assert x.patches == (os.path.join(site.top, "top-only.patch"),
                         os.path.join(site.caller, "both.patch"))
    assert x.settings == (("pg_lockstat.spin_strategy", "ttas"),)
    assert x.strategy == "ttas"
    assert s.variants_given == VARIANTS
    assert s.compared() == 'VARIANTS="%s"' % VARIANTS


def test_patch_paths(site):
    """Absolute paths, with the directory's links resolved and the file's
    name kept."""
    real = os.path.join(site.caller, "real", "r.patch")
    for item in (real, "lnk/r.patch", "real/../real/r.patch"):
        s = site.study({"VARIANTS": "a: " + item})
        assert s.variants[0].patches == (real,)
    os.symlink(real, os.path.join(site.caller, "alias.patch"))
    s = site.study({"VARIANTS": "a: alias.patch"})
    assert s.variants[0].patches == (os.path.join(site.caller,
                                                  "alias.patch"),)


def test_same_patch_in_two_variants(site):
    s = site.study({"VARIANTS": "a: good.patch; b: good.patch work_mem=1MB"})
    assert s.variants[0].patches == s.variants[1].patches


def test_unchecked_patches_are_kept_as_given(site):
    """The unprivileged second pass: the first read the patches."""
    s = site.study({"VARIANTS": "a: nope.patch work_mem=4MB; b"},
                   check_patches=False)
    assert s.variants[0].patches == ("nope.patch",)
    assert s.variants[0].settings == (("work_mem", "4MB"),)


def test_newline_separates_variants(site):
    a = site.study({"VARIANTS": "a: work_mem=1MB\nb: work_mem=2MB\n"})
    b = site.study({"VARIANTS": "a: work_mem=1MB; b: work_mem=2MB"})
    assert a.variants == b.variants and a.names == ["a", "b"]


def test_setting_values(site):
    s = site.study({"VARIANTS": "a: application_name=x=y,z "
                                "pg_lockstat.spin_strategy=default"})
    assert s.variants[0].settings == (
        ("application_name", "x=y,z"),
        ("pg_lockstat.spin_strategy", "default"))
    assert s.variants[0].strategy == "default"


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
    _write(script, "-- pgbench-options: -M prepared\n"
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


@pytest.mark.parametrize("line", ["shared_buffers =1MB", "Shared = 1",
                                  "shared_buffers =  1MB", " x = 1", "x ="])
def test_bad_server_settings_lines(site, line):
    _write(os.path.join(site.top, "bench", "workloads", "mine.sql"),
           "-- server-settings: %s\nSELECT 1;\n" % line)
    with pytest.raises(spec.SpecError) as e:
        site.study({"WORKLOAD": "mine"})
    assert str(e.value) == ('WORKLOAD mine: bad server-settings line "%s" '
                            '(name = value)' % line)


# the first line of commands.txt as run-study.sh wrote it, with
# WARMUP_ROUND, which it did not have, after WARMUP
BASH_PARAMETERS = r'''
if [ -n "$VARIANTS" ]; then compared="VARIANTS=\"$VARIANTS\""; else compared="STRATEGIES=\"$names\""; fi
echo "SCALE=$SCALE $compared CLIENTS=\"$CLIENTS\" DURATION=$DURATION WARMUP=$WARMUP WARMUP_ROUND=$WARMUP_ROUND WORKLOAD=$WORKLOAD REPEAT=$REPEAT SEED=$SEED THRESHOLD=$THRESHOLD THREADS=$THREADS"
'''  # noqa: E501


@pytest.mark.parametrize("given", [
    {"SEED": "42"},
    {"SCALE": "3", "STRATEGIES": "ttas tas", "CLIENTS": "2 4", "DURATION":
     "7", "WARMUP": "0", "WARMUP_ROUND": "0", "WORKLOAD": "eviction",
     "REPEAT": "6", "SEED": "0", "THRESHOLD": "2.5", "THREADS": "3"},
    {"SEED": "9", "VARIANTS": "base; onefl: good.patch work_mem=4MB"},
])
def test_parameters_line(site, given):
    s = site.study(given)
    env = {"PATH": "/usr/bin:/bin", "SCALE": str(s.scale),
           "VARIANTS": given.get("VARIANTS", ""), "names": " ".join(s.names),
           "CLIENTS": given.get("CLIENTS", "1 8 64"),
           "DURATION": given.get("DURATION", "5"),
           "WARMUP": given.get("WARMUP", "3"),
           "WARMUP_ROUND": given.get("WARMUP_ROUND", "1"),
           "WORKLOAD": given.get("WORKLOAD", "select-only"),
           "REPEAT": given.get("REPEAT", "12"), "SEED": given["SEED"],
           "THRESHOLD": given.get("THRESHOLD", "2"),
           "THREADS": given.get("THREADS", "")}
    expected = subprocess.run(["bash", "-c", BASH_PARAMETERS], env=env,
                              capture_output=True, text=True,
                              check=True).stdout
    assert s.parameters() + "\n" == expected


def test_study_by_hand():
    """Study.parameters() and compared() of a Study built directly."""
    s = spec.Study(
        pg_config="/p/bin/pg_config", bindir="/p/bin", scale=2,
        clients=(8, 1), duration=4, warmup=1,
        workload=spec.Workload("tpcb-like", ("-M", "prepared")), threads=None,
        repeat=2, seed=5, threshold="1.5", run_dir="/r", variant_dir="/v",
        variants=(spec.Variant("a"), spec.Variant("b")),
        variants_given="a;b")
    assert s.compared() == 'VARIANTS="a;b"'
    assert s.max_clients == 8
    assert s.parameters() == (
        'SCALE=2 VARIANTS="a;b" CLIENTS="8 1" DURATION=4 WARMUP=1 '
        'WARMUP_ROUND=1 WORKLOAD=tpcb-like REPEAT=2 SEED=5 THRESHOLD=1.5 '
        'THREADS=')
    # a warm-up round unless the study says otherwise
    assert s.warmup_round is True
    off = dataclasses.replace(s, warmup_round=False)
    assert "WARMUP=1 WARMUP_ROUND=0 WORKLOAD" in off.parameters()


# --- WARMUP_ROUND, which the bash harness did not have -----------------------

@pytest.mark.parametrize("text, expected", [
    ("1", True), ("0", False), ("", True), (None, True)])
def test_warmup_round(site, text, expected):
    given = {} if text is None else {"WARMUP_ROUND": text}
    assert site.study(given).warmup_round is expected


@pytest.mark.parametrize("text", ["2", "yes", "on", "00", "01", "-1", " 1",
                                  "1.0", "true"])
def test_warmup_round_refused(site, text):
    with pytest.raises(spec.SpecError) as e:
        site.study({"WARMUP_ROUND": text})
    assert str(e.value) == ('WARMUP_ROUND must be 1 (a warm-up round before '
                            'the first) or 0 (none), not "%s"' % text)


def test_warmup_round_checked_after_warmup(site):
    """The numbers are checked in the order the user reads them."""
    with pytest.raises(spec.SpecError) as e:
        site.study({"WARMUP": "x", "WARMUP_ROUND": "x"})
    assert str(e.value).startswith("WARMUP must be ")
    with pytest.raises(spec.SpecError) as e:
        site.study({"WARMUP_ROUND": "x", "SEED": "x"})
    assert str(e.value).startswith("WARMUP_ROUND must be ")


# --- SHARED_START ------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("1", True), ("0", False), ("", False), (None, False)])
def test_shared_start(site, text, expected):
    given = {} if text is None else {"SHARED_START": text}
    study = site.study(given)
    assert study.shared_start is expected
    # the parameters name it only when it is set, at their end
    assert study.parameters().endswith(" SHARED_START=1") is expected
    assert ("SHARED_START" in study.parameters()) is expected


@pytest.mark.parametrize("text", ["2", "yes", "on", "01", " 1", "true"])
def test_shared_start_refused(site, text):
    with pytest.raises(spec.SpecError) as e:
        site.study({"SHARED_START": text})
    assert str(e.value) == ('SHARED_START must be 1 (variants that differ '
                            'only in settings a reload changes share a '
                            'server start) or 0 (a start per variant), not '
                            '"%s"' % text)


# --- where the module and the bash code part ---------------------------------

def test_repeated_name_is_named_before_its_items(site):
    with pytest.raises(spec.SpecError) as e:
        site.study({"VARIANTS": "a; a: port=1"})
    assert str(e.value) == 'VARIANTS: variant "a" appears twice'


@needs_bash
def test_repeated_name_is_named_before_its_items_in_bash(site):
    rc, err = site.bash({"VARIANTS": "a; a: port=1"})
    assert (rc, err) == (1, 'run-study: error: VARIANTS: variant "a" '
                            'appears twice\n')


def test_dangling_link_in_caller_falls_back_to_checkout(site):
    os.symlink(os.path.join(site.tmp, "gone.patch"),
               os.path.join(site.caller, "top-only.patch"))
    s = site.study({"VARIANTS": "a: top-only.patch"})
    assert s.variants[0].patches == (os.path.join(site.top,
                                                  "top-only.patch"),)


@needs_bash
def test_dangling_link_in_caller_falls_back_to_checkout_in_bash(site):
    os.symlink(os.path.join(site.tmp, "gone.patch"),
               os.path.join(site.caller, "top-only.patch"))
    rc, err = site.bash({"VARIANTS": "a: top-only.patch"})
    assert (rc, err) == (1, "run-study: error: %s/bench/study_stats.py is "
                            "missing\n" % site.top)


# --- unpatched variants and STOCK_PG_CONFIG ----------------------------------

def _server(prefix):
    """A fake server installed in prefix, as the site's: its pg_config
    prints prefix/bin, whose programs exist.  Its pg_config."""
    bindir = os.path.join(prefix, "bin")
    for prog in PROGRAMS:
        _write(os.path.join(bindir, prog), "#!/bin/sh\nexit 1\n", 0o755)
    _write(os.path.join(bindir, "pg_config"),
           '#!/bin/sh\n[ "$1" = --bindir ] || exit 1\necho %s\n' % bindir,
           0o755)
    return os.path.join(bindir, "pg_config")


@pytest.fixture
def stock(site):
    """The site's stock server, where the Makefile puts it: beside the
    base's build, <build>-stock."""
    return _server(os.path.join(site.tmp, "pg-stock"))


@pytest.mark.parametrize("pg_config, expected", [
    ("/w/build/pg18/bin/pg_config", "/w/build/pg18-stock/bin/pg_config"),
    ("/w/build/pg18/bin/../bin/pg_config",
     "/w/build/pg18-stock/bin/pg_config"),
    ("build/pg15/bin/pg_config", "build/pg15-stock/bin/pg_config"),
    ("/usr/lib/postgresql/18/bin/pg_config",
     "/usr/lib/postgresql/18-stock/bin/pg_config"),
    ("/bin/pg_config", ""), ("bin/pg_config", ""), ("pg_config", ""),
    ("/w/pg18/pg_config", ""), ("/w/pg18/bin/pg_config18", ""),
    ("/w/pg18/sbin/pg_config", "")])
def test_default_stock_pg_config(pg_config, expected):
    assert spec.default_stock_pg_config(pg_config) == expected


def test_unpatched_variant(site, stock):
    s = site.study({"VARIANTS": "stock: unpatched; on; off: "
                                "pg_lockstat.track=off"})
    assert s.names == ["stock", "on", "off"]
    assert s.unpatched == ["stock"]
    assert s.variants[0] == spec.Variant(
        "stock", (), (("shared_preload_libraries", ""),), None, True)
    # it loads no library: that is the line variant.conf gets
    assert s.variants[0].settings_lines() == ["shared_preload_libraries = ''"]
    assert not any(v.unpatched for v in s.variants[1:])
    assert s.variants[2].settings == (("pg_lockstat.track", "off"),)
    # the stock build beside the base's
    assert (s.stock_pg_config, s.stock_bindir) == (
        stock, os.path.join(site.tmp, "pg-stock", "bin"))


def test_unpatched_variant_with_settings(site, stock):
    s = site.study({"VARIANTS": "a; b: work_mem=8MB unpatched "
                                "application_name=b"})
    assert s.variants[1] == spec.Variant(
        "b", (), (("shared_preload_libraries", ""), ("work_mem", "8MB"),
                  ("application_name", "b")), None, True)
    # a library of its own, that is not pg_lockstat, replaces the empty list
    s = site.study({"VARIANTS": "a; b: unpatched "
                                "shared_preload_libraries=pg_stat_statements"})
    assert s.variants[1].settings == (
        ("shared_preload_libraries", "pg_stat_statements"),)


def test_unpatched_baseline_and_two_unpatched(site, stock):
    s = site.study({"VARIANTS": "s1: unpatched; s2: unpatched; on"})
    assert s.unpatched == ["s1", "s2"]
    assert s.stock_pg_config == stock


def test_unpatched_in_the_second_pass(site, stock):
    """The unprivileged pass parses it the same way."""
    given = {"VARIANTS": "stock: unpatched; on", "SEED": "1"}
    assert site.study(given, check_patches=False) == site.study(given)


def test_stock_pg_config_given(site, stock):
    other = _server(os.path.join(site.tmp, "elsewhere"))
    s = site.study({"VARIANTS": "stock: unpatched; on",
                    "STOCK_PG_CONFIG": other})
    assert (s.stock_pg_config, s.stock_bindir) == (
        other, os.path.join(site.tmp, "elsewhere", "bin"))


def test_stock_pg_config_unused_without_an_unpatched_variant(site):
    """Without an unpatched variant STOCK_PG_CONFIG is not looked at (make
    run passes it always)."""
    for given in ({}, {"VARIANTS": "a; b: work_mem=1MB"}):
        s = site.study(dict(given, STOCK_PG_CONFIG="/nowhere/pg_config"))
        assert (s.stock_pg_config, s.stock_bindir) == ("", "")
        assert s.unpatched == []


def test_unpatched_is_not_a_patch_file(site, stock):
    """The keyword wins over a file of that name in the caller's
    directory; ./unpatched is the file."""
    _write(os.path.join(site.caller, "unpatched"), GOOD_PATCH)
    s = site.study({"VARIANTS": "a: unpatched; b: ./unpatched"})
    assert s.variants[0].unpatched and s.variants[0].patches == ()
    assert s.variants[1].patches == (os.path.join(site.caller,
                                                  "unpatched"),)


# (id, environment, message), as REFUSALS; the bash harness had no
# unpatched variants
UNPATCHED_REFUSALS = [
    ("unpatched-with-patch", {"VARIANTS": "a; b: unpatched good.patch"},
     'VARIANTS: variant b: "unpatched" and patch files together '
     '({caller}/good.patch); an unpatched variant runs the stock server of '
     'STOCK_PG_CONFIG as it is built, without the core series'),
    ("unpatched-after-patch", {"VARIANTS": "a; b: good.patch unpatched"},
     'VARIANTS: variant b: "unpatched" and patch files together '
     '({caller}/good.patch); an unpatched variant runs the stock server of '
     'STOCK_PG_CONFIG as it is built, without the core series'),
    ("unpatched-twice", {"VARIANTS": "a: unpatched unpatched"},
     'VARIANTS: variant a says "unpatched" twice'),
    ("unpatched-track", {"VARIANTS": "a; b: unpatched pg_lockstat.track=off"},
     "VARIANTS: variant b: pg_lockstat.track is a setting of pg_lockstat, "
     "which the unpatched server does not load"),
    ("unpatched-strategy",
     {"VARIANTS": "a: pg_lockstat.spin_strategy=tas unpatched"},
     "VARIANTS: variant a: pg_lockstat.spin_strategy is a setting of "
     "pg_lockstat, which the unpatched server does not load"),
    ("unpatched-preload",
     {"VARIANTS": "a; b: unpatched "
                  "shared_preload_libraries=pg_stat_statements,pg_lockstat"},
     "VARIANTS: variant b: the unpatched server cannot load pg_lockstat "
     "(shared_preload_libraries=pg_stat_statements,pg_lockstat)"),
    # the settings are checked as any variant's, before
    ("unpatched-bad-setting", {"VARIANTS": "a: unpatched port=1"},
     "VARIANTS: variant a: port is set by the study itself (its clients "
     "connect through it)"),
]
# refusals of STOCK_PG_CONFIG, with no stock server beside the base
STOCK_REFUSALS = [
    ("stock-default-missing", {"VARIANTS": "stock: unpatched; on"},
     'STOCK_PG_CONFIG="{tmp}/pg-stock/bin/pg_config" cannot be run; it '
     'must point to the pg_config of the unpatched server (make '
     'server-stock builds it)'),
    ("stock-given-missing", {"VARIANTS": "stock: unpatched; on",
                             "STOCK_PG_CONFIG": "{tmp}/nowhere/pg_config"},
     'STOCK_PG_CONFIG="{tmp}/nowhere/pg_config" cannot be run; it must '
     'point to the pg_config of the unpatched server (make server-stock '
     'builds it)'),
    ("stock-without-psql", {"VARIANTS": "on; stock: unpatched",
                            "STOCK_PG_CONFIG": "{tmp}/nopsql/bin/pg_config"},
     'STOCK_PG_CONFIG="{tmp}/nopsql/bin/pg_config": {tmp}/nopsql/bin/psql '
     'is missing'),
    ("stock-no-default", {"VARIANTS": "stock: unpatched; on",
                          "PG_CONFIG": "{tmp}/odd/pg_config"},
     'an unpatched variant runs the server of STOCK_PG_CONFIG, which has '
     'no default here: PG_CONFIG="{tmp}/odd/pg_config" is not '
     '<build>/bin/pg_config; set STOCK_PG_CONFIG to the pg_config of the '
     'unpatched server'),
]


@pytest.mark.parametrize("name, given, message", UNPATCHED_REFUSALS,
                         ids=_ids(UNPATCHED_REFUSALS))
def test_unpatched_refusal(site, stock, name, given, message):
    with pytest.raises(spec.SpecError) as e:
        site.study(given)
    assert str(e.value) == site.fill(message)


@pytest.mark.parametrize("name, given, message", STOCK_REFUSALS,
                         ids=_ids(STOCK_REFUSALS))
def test_stock_pg_config_refusal(site, name, given, message):
    # a server that is not installed as <build>/bin
    _write(os.path.join(site.tmp, "odd", "pg_config"),
           "#!/bin/sh\necho %s\n" % site.bindir, 0o755)
    with pytest.raises(spec.SpecError) as e:
        site.study(given)
    assert str(e.value) == site.fill(message)


# --- the sysbench workloads, which the bash harness did not have -------------

SYSBENCH_HELP = """\
Usage:
  sysbench [options]... [testname] [command]
Compiled-in database drivers:
  mysql - MySQL driver
  pgsql - PostgreSQL driver
"""


def _fake_sysbench(site, help_text=SYSBENCH_HELP, name="sb"):
    """A directory for PATH with a sysbench whose --help prints
    help_text."""
    path = os.path.join(site.tmp, name)
    _write(os.path.join(path, "sysbench"),
           "#!/bin/sh\n[ \"$1\" = --help ] || exit 1\ncat <<'EOF'\n%sEOF\n"
           % help_text, 0o755)
    return path


@pytest.mark.parametrize("name, script", [
    ("sysbench-point-select", "oltp_point_select"),
    ("sysbench-read-only", "oltp_read_only"),
    ("sysbench-read-write", "oltp_read_write")])
def test_sysbench_workloads(site, name, script):
    """4 tables by default, with the rows of pgbench_accounts at SCALE
    between them."""
    path = _fake_sysbench(site)
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
                    "PATH": _fake_sysbench(site)})
    assert s.sysbench_table_size == 1


def test_pgbench_workloads_are_pgbench_s(site):
    s = site.study({"WORKLOAD": "eviction"})
    assert s.workload.tool == "pgbench" and not s.workload.sysbench
    assert (s.sysbench_tables, s.sysbench_table_size) == (0, 0)
    assert "SYSBENCH" not in s.parameters()


def test_workload_names_end_with_sysbench_s(site):
    names = spec.workload_names(site.top)
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
                         ids=_ids(SYSBENCH_REFUSALS))
def test_sysbench_refusal(site, name, given, message):
    env = {"WORKLOAD": "sysbench-read-write", "PATH": _fake_sysbench(site)}
    env.update(given)
    os.makedirs(os.path.join(site.tmp, "empty"), exist_ok=True)
    with pytest.raises(spec.SpecError) as e:
        site.study(env)
    assert str(e.value) == site.fill(message)


def test_sysbench_without_its_postgresql_driver(site):
    path = _fake_sysbench(site, SYSBENCH_HELP.replace(
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
    path = _fake_sysbench(site)
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
                    "SCALE": "2", "PATH": _fake_sysbench(site)})
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
