"""The throwaway site of the parameter tests (test_params.py,
test_variants.py, test_workloads.py, test_spec.py): a checkout with
bench/workloads and a copy of the bash harness's bench/run-study.sh, the
caller's directory with patch files, and fake servers whose pg_config
prints a bindir of programs that exist; conftest.py makes its fixtures
site and stock.  Also what those tests share: the refusal checks, both
through params.from_environment() and through run-study.sh, whose
messages the module keeps, and a fake sysbench.  No server.
"""

import os
import shutil
import subprocess

import pytest

from lockstudy import params, spec

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


def write(path, text, mode=0o644):
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
        write(os.path.join(workloads, "bad-settings.sql"), BAD_SETTINGS_SQL)
        if BASH_SCRIPT is not None:
            write(os.path.join(self.top, "bench", "run-study.sh"),
                   BASH_SCRIPT, 0o755)
        for prog in PROGRAMS:
            write(os.path.join(self.bindir, prog), "#!/bin/sh\nexit 1\n",
                   0o755)
        write(self.pg_config, '#!/bin/sh\n[ "$1" = --bindir ] || exit 1\n'
               'echo %s\n' % self.bindir, 0o755)
        # patch files: the caller's, the checkout's, and bad ones
        write(os.path.join(self.caller, "good.patch"), GOOD_PATCH)
        write(os.path.join(self.caller, "both.patch"), GOOD_PATCH)
        write(os.path.join(self.top, "both.patch"), OTHER_PATCH)
        write(os.path.join(self.top, "top-only.patch"), OTHER_PATCH)
        write(os.path.join(self.caller, "empty.patch"), "")
        write(os.path.join(self.caller, "nodiff.patch"),
               "--- a/src/f.c\n+++b/src/f.c\n +++ indented\n")
        os.makedirs(os.path.join(self.caller, "adir.patch"))
        write(os.path.join(self.caller, "sp ace", "x.patch"), GOOD_PATCH)
        os.symlink(os.path.join(self.caller, "sp ace"),
                   os.path.join(self.caller, "spl"))
        os.makedirs(os.path.join(self.caller, "real"))
        write(os.path.join(self.caller, "real", "r.patch"), GOOD_PATCH)
        os.symlink(os.path.join(self.caller, "real"),
                   os.path.join(self.caller, "lnk"))
        # a pg_config that fails, one that prints no bindir, one that
        # cannot be executed, and a server whose psql is missing
        write(os.path.join(tmp, "failing", "pg_config"),
               "#!/bin/sh\nexit 2\n", 0o755)
        write(os.path.join(tmp, "silent", "pg_config"), "#!/bin/sh\n",
               0o755)
        write(os.path.join(tmp, "noexec", "pg_config"),
               "#!/bin/sh\necho %s\n" % self.bindir, 0o644)
        nopsql = os.path.join(tmp, "nopsql", "bin")
        for prog in PROGRAMS:
            if prog != "psql":
                write(os.path.join(nopsql, prog), "#!/bin/sh\n", 0o755)
        write(os.path.join(nopsql, "pg_config"),
               "#!/bin/sh\necho %s\n" % nopsql, 0o755)
        # pgbench present but not executable by anyone
        noxbench = os.path.join(tmp, "noxbench", "bin")
        for prog in PROGRAMS:
            write(os.path.join(noxbench, prog), "#!/bin/sh\n",
                   0o644 if prog == "pgbench" else 0o755)
        write(os.path.join(noxbench, "pg_config"),
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
        return params.from_environment(self.env(given), self.top,
                                       self.caller, check_patches)

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


def shell_workloads(top):
    """The valid WORKLOAD names as run-study.sh listed them."""
    out = subprocess.run(
        "cd %s/bench/workloads && ls *.sql | sed 's/\\.sql$//' | tr '\\n' ' '"
        % top, shell=True, capture_output=True, text=True,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C"}, check=True).stdout
    return "select-only tpcb-like simple-update " + out.strip()


# the sysbench workloads, after the names of the bash code
SYSBENCH_NAMES = "sysbench-point-select sysbench-read-only sysbench-read-write"

# three variants: none, a patch of the caller's, then the checkout's and
# both.patch, which both have (the caller's is taken); ";" and a newline
VARIANTS = ("base; onefl: good.patch work_mem=4MB\n"
            "x_1-2: top-only.patch both.patch pg_lockstat.spin_strategy=ttas"
            " ; ")


def case_ids(cases):
    return [c[0] for c in cases]


def assert_refused(site, given, message):
    """The study of environment given is refused with message (filled in
    with the site's directories)."""
    with pytest.raises(spec.SpecError) as e:
        site.study(given)
    assert str(e.value) == site.fill(message)


def assert_bash_refused(site, given, message):
    """run-study.sh refuses environment given with the same message."""
    rc, err = site.bash(given)
    assert rc == 1
    assert err == "run-study: error: %s\n" % site.fill(message)


def fake_server(prefix):
    """A fake server installed in prefix, as the site's: its pg_config
    prints prefix/bin, whose programs exist.  Its pg_config."""
    bindir = os.path.join(prefix, "bin")
    for prog in PROGRAMS:
        write(os.path.join(bindir, prog), "#!/bin/sh\nexit 1\n", 0o755)
    write(os.path.join(bindir, "pg_config"),
           '#!/bin/sh\n[ "$1" = --bindir ] || exit 1\necho %s\n' % bindir,
           0o755)
    return os.path.join(bindir, "pg_config")


SYSBENCH_HELP = """\
Usage:
  sysbench [options]... [testname] [command]
Compiled-in database drivers:
  mysql - MySQL driver
  pgsql - PostgreSQL driver
"""


def fake_sysbench(site, help_text=SYSBENCH_HELP, name="sb"):
    """A directory for PATH with a sysbench whose --help prints
    help_text."""
    path = os.path.join(site.tmp, name)
    write(os.path.join(path, "sysbench"),
           "#!/bin/sh\n[ \"$1\" = --help ] || exit 1\ncat <<'EOF'\n%sEOF\n"
           % help_text, 0o755)
    return path
