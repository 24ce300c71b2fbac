"""sysbench as the study runs it: its command lines, and what its output says.

The workloads sysbench-point-select, sysbench-read-only and
sysbench-read-write run the oltp scripts of Debian's sysbench 1.0 with
its PostgreSQL driver.  Their tables are made once per study (prepare,
on the one data directory that every variant runs on), then each run is
"sysbench <script> ... --threads=<clients> --time=<seconds>
--report-interval=1 run": one thread, and so one connection, per client.
A transaction is one sysbench event: for oltp_point_select one SELECT
in autocommit, for oltp_read_only BEGIN, 14 queries and COMMIT, for
oltp_read_write BEGIN, 18 queries and COMMIT; the transaction count of
the run is the summary's "transactions:", its tps the "per sec." beside
it, and the tps of each second those of the lines "[ 1s ] thds: 2 tps:
...".  The functions that read the output have the signatures of
pgbench's, so that the runner reads either program's the same way.

Calls no other module of the package.
"""

import re
from typing import List, Optional, Sequence, Tuple


def connection(host: str, port: int, user: str, dbname: str) -> List[str]:
    """The driver's options: the socket directory (libpq takes a host
    that starts with "/" for one), the port, the user (sysbench's default
    is sbtest) and the database.  The study's cluster trusts local
    connections: no password."""
    return ["--db-driver=pgsql", "--pgsql-host=" + host,
            "--pgsql-port=%d" % port, "--pgsql-user=" + user,
            "--pgsql-db=" + dbname]


def command(workload_args: Sequence[str], conn: Sequence[str], clients: int,
            seconds: int, progress: bool) -> List[str]:
    """The sysbench command of one run: workload_args are the script and
    its table options (spec.Workload.args), conn the driver's options;
    with progress, --report-interval=1 (the tps of every second)."""
    args = list(workload_args)
    cmd = ["sysbench"] + args[:1] + list(conn) + args[1:] + [
        "--threads=%d" % clients, "--time=%d" % seconds]
    if progress:
        cmd.append("--report-interval=1")
    return cmd + ["run"]


def prepare_command(workload_args: Sequence[str], conn: Sequence[str],
                    threads: int) -> List[str]:
    """The command that makes the tables of the study and fills them,
    threads tables at a time."""
    args = list(workload_args)
    return ["sysbench"] + args[:1] + list(conn) + args[1:] + [
        "--threads=%d" % threads, "prepare"]


def prepare_threads(tables: int, nproc: int) -> int:
    """sysbench prepare's threads: each makes every threads-th table, so
    no more than the tables, nor than the CPUs."""
    return max(1, min(tables, nproc))


def tps(output: str) -> Optional[str]:
    """The tps of a run as sysbench printed it in its summary:
    "    transactions:   133570 (44338.12 per sec.)" gives "44338.12"."""
    m = re.search(r"^\s+transactions:\s+[0-9]+\s+\(([0-9.]+) per sec\.\)",
                  output, re.M)
    return m.group(1) if m else None


def transactions(output: str) -> Optional[int]:
    """The transactions of the summary's "transactions:" line."""
    m = re.search(r"^\s+transactions:\s+([0-9]+)\s", output, re.M)
    return int(m.group(1)) if m else None


def per_second(output: str) -> List[Tuple[str, str]]:
    """The (second, tps) of each line of --report-interval=1:
    "[ 1s ] thds: 2 tps: 46343.22 qps: ..." gives ("1", "46343.22")."""
    out = []
    for line in output.splitlines():
        m = re.match(r"\[ ([0-9]+)s \] thds: [0-9]+ tps: ([0-9.]+) ", line)
        if m:
            out.append((m.group(1), m.group(2)))
    return out

