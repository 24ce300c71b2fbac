"""pgbench as the study runs it: its command lines, and what its output says.

Calls no other module of the package.
"""

import re
from typing import List, Optional, Sequence, Tuple


def command(workload_args: Sequence[str], clients: int, threads: int,
            seconds: int, progress: bool) -> List[str]:
    """The pgbench command of one run against the database postgres; with
    progress, -P 1 (the tps of every second)."""
    cmd = ["pgbench", "-n"] + list(workload_args) + [
        "-c", str(clients), "-j", str(threads), "-T", str(seconds)]
    if progress:
        cmd += ["-P", "1"]
    return cmd + ["postgres"]


def threads(clients: int, given: Optional[int], nproc: int) -> int:
    """pgbench -j: THREADS, else the smaller of clients and CPUs."""
    return given if given is not None else min(clients, nproc)


def tps(output: str) -> Optional[str]:
    """The tps of a run as pgbench printed it ("tps = 1234.5 (...)")."""
    m = re.search(r"^tps = ([0-9.]+) ", output, re.M)
    return m.group(1) if m else None


def transactions(output: str) -> Optional[int]:
    """pgbench's "number of transactions actually processed"."""
    m = re.search(r"^number of transactions actually processed: ([0-9]+)",
                  output, re.M)
    return int(m.group(1)) if m else None


def per_second(output: str) -> List[Tuple[str, str]]:
    """The (second, tps) of each progress line of -P 1:
    "progress: 1.0 s, 1234.5 tps, lat ..." gives ("1.0", "1234.5")."""
    out = []
    for line in output.splitlines():
        if line.startswith("progress: "):
            fields = line.replace(",", "").split()
            if len(fields) >= 4:
                out.append((fields[1], fields[3]))
    return out
