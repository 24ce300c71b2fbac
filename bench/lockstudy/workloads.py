"""WORKLOAD: the workload of a study's runs, checked.

A workload is run by pgbench (its built-in scripts and those of
bench/workloads/) or by sysbench (the oltp_* scripts of Debian's package,
with its PostgreSQL driver), which must then be on PATH.

Every refusal raises SpecError with the message the user sees.  Calls
spec (the types).
"""

import os
import re
import shutil
import subprocess
from typing import List, Optional, Tuple

from .spec import SpecError, Workload

# the pgbench workloads built into pgbench, and their options
BUILTIN_WORKLOADS = (("select-only", ("-S", "-M", "prepared")),
                     ("tpcb-like", ("-M", "prepared")),
                     ("simple-update", ("-N", "-M", "prepared")))
# the workloads of sysbench's own oltp scripts, and those scripts
SYSBENCH_WORKLOADS = (("sysbench-point-select", "oltp_point_select"),
                      ("sysbench-read-only", "oltp_read_only"),
                      ("sysbench-read-write", "oltp_read_write"))
# the Debian package of sysbench, with its PostgreSQL driver built in
SYSBENCH_PACKAGE = "sysbench"


def workload_names(top: str) -> List[str]:
    """The valid WORKLOAD names: pgbench's own, then bench/workloads/, then
    sysbench's."""
    scripts = sorted(f[:-4] for f in os.listdir(os.path.join(
        top, "bench", "workloads"))
        if re.fullmatch(r"[a-z0-9-]+\.sql", f))
    return [w for w, _ in BUILTIN_WORKLOADS] + scripts + \
        [w for w, _ in SYSBENCH_WORKLOADS]


def check_sysbench(name: str, path: Optional[str]) -> None:
    """That the sysbench of PATH (path) can run WORKLOAD name: it is there
    and has the PostgreSQL driver (sysbench --help lists "pgsql - ...")."""
    where = "WORKLOAD=%s runs sysbench" % name
    install = ("install Debian's package %s (apt-get install %s; "
               "scripts/deps.sh installs it)"
               % (SYSBENCH_PACKAGE, SYSBENCH_PACKAGE))
    prog = shutil.which("sysbench", path=path)
    if prog is None:
        raise SpecError("%s, which is not on PATH: %s" % (where, install))
    try:
        out = subprocess.run([prog, "--help"], capture_output=True,
                             text=True, timeout=60,
                             stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.TimeoutExpired):
        raise SpecError("%s, but %s --help cannot be run: %s"
                        % (where, prog, install))
    if not re.search(r"^\s+pgsql - ", out, re.M):
        raise SpecError("%s, but %s has no PostgreSQL driver (pgsql is not "
                        "among the drivers of its --help): %s"
                        % (where, prog, install))



def parse_workload(name: str, top: str,
                   sysbench: Tuple[int, int] = (0, 0)) -> Workload:
    """WORKLOAD: a built-in pgbench script, bench/workloads/<name>.sql,
    whose header may give "-- pgbench-options: ...",
    "-- server-settings: name = value" and "-- setup: <SQL statement>"
    lines, or one of sysbench's oltp scripts, on sysbench (tables, rows per
    table)."""
    builtin = dict(BUILTIN_WORKLOADS)
    if name in builtin:
        return Workload(name, builtin[name])
    if name in dict(SYSBENCH_WORKLOADS):
        return Workload(name, (dict(SYSBENCH_WORKLOADS)[name],
                               "--tables=%d" % sysbench[0],
                               "--table-size=%d" % sysbench[1]),
                        tool="sysbench")
    script = os.path.join(top, "bench", "workloads", name + ".sql")
    if not re.fullmatch(r"[a-z0-9-]+", name) or not os.path.isfile(script):
        raise SpecError('unknown WORKLOAD "%s" (valid: %s)'
                        % (name, " ".join(workload_names(top))))
    args = ["-f", script]
    settings = []
    setup = []
    with open(script) as f:
        for line in f.read().splitlines():
            if line.startswith("-- pgbench-options: "):
                args += line[len("-- pgbench-options: "):].split()
            elif line.startswith("-- server-settings: "):
                setting = line[len("-- server-settings: "):]
                if not re.fullmatch(r"[a-z_][a-z0-9_.]* = [^ ].*", setting):
                    raise SpecError('WORKLOAD %s: bad server-settings line '
                                    '"%s" (name = value)' % (name, setting))
                settings.append(setting)
            elif line.startswith("-- setup: "):
                setup.append(line[len("-- setup: "):])
    return Workload(name, tuple(args), tuple(settings),
                    setup=tuple(setup))
