"""The study's parameters, from the environment, checked before anything
starts.

The parameters come from the environment, as "make run" passes its make
variables (an empty value counts as unset): PG_CONFIG, STOCK_PG_CONFIG,
SCALE, STRATEGIES, VARIANTS, VARIANT_DIR, CLIENTS, DURATION, WARMUP,
WARMUP_ROUND, SHARED_START, AA, SENSITIVITY, DELAY_US, WORKLOAD, THREADS,
REPEAT, SEED, THRESHOLD, RUN_DIR, SYSBENCH_TABLES, SYSBENCH_TABLE_SIZE
(doc/study.md describes each).  Here: the numbers, the servers of
PG_CONFIG and STOCK_PG_CONFIG and sysbench's tables; variants (VARIANTS,
STRATEGIES), delayvariants (SENSITIVITY, DELAY_US) and workloads
(WORKLOAD) parse theirs.

Every refusal raises SpecError with the message the user sees, checked in
the order the user reads the parameters.  Calls variants, delayvariants,
workloads and spec.
"""

import os
import random
import re
import subprocess
from typing import Mapping, Tuple

from . import delayvariants, variants, workloads
from .spec import SpecError, Study, Variant, Workload

DEFAULT_STRATEGIES = "tas ttas_spin ttas"
# what AA=1 runs: an A/A study, the base server twice (lockstudy.floor)
AA_VARIANTS = "a; b"
# sysbench's tables by default: SYSBENCH_TABLES of them, holding together
# as many rows as pgbench_accounts at SCALE
SYSBENCH_DEFAULT_TABLES = 4
PGBENCH_ROWS_PER_SCALE = 100000
# the programs of a server's bindir that the study runs
PROGRAMS = ("initdb", "pg_ctl", "postgres", "psql", "pgbench")


def _get(env: Mapping[str, str], name: str, default: str = "") -> str:
    """A parameter; empty counts as unset, as make passes unset variables."""
    return env.get(name) or default


def _integer(env: Mapping[str, str], name: str, default: str,
             pattern: str, what: str) -> int:
    text = _get(env, name, default)
    if not re.fullmatch(pattern, text):
        raise SpecError('%s must be %s, not "%s"' % (name, what, text))
    return int(text)


def _numbers(env: Mapping[str, str]) -> dict:
    """The numeric parameters, checked in the order the user reads them."""
    pos = r"[1-9][0-9]*"
    out = {
        "scale": _integer(env, "SCALE", "10", pos, "a positive integer"),
        "repeat": _integer(env, "REPEAT", "12", pos, "a positive integer"),
        "duration": _integer(env, "DURATION", "5", pos,
                             "a positive integer (seconds)"),
        "warmup": _integer(env, "WARMUP", "3", r"0|[1-9][0-9]*",
                           "0 or a positive integer (seconds)"),
        "warmup_round": _integer(env, "WARMUP_ROUND", "1", r"[01]",
                                 "1 (a warm-up round before the first) or "
                                 "0 (none)") == 1,
        "shared_start": _integer(env, "SHARED_START",
                                 "1" if _get(env, "SENSITIVITY") else "0",
                                 r"[01]",
                                 "1 (variants that differ only in settings "
                                 "a reload changes share a server start) or "
                                 "0 (a start per variant)") == 1,
        "seed": _integer(env, "SEED", str(random.SystemRandom().randrange(
            1000000)), r"0|[1-9][0-9]{0,17}", "a non-negative integer"),
    }
    threshold = _get(env, "THRESHOLD", "2")
    if not re.fullmatch(r"[0-9]{1,2}(\.[0-9]+)?", threshold):
        raise SpecError('THRESHOLD must be a percentage from 0 to below 100, '
                        'not "%s"' % threshold)
    out["threshold"] = threshold
    clients = _get(env, "CLIENTS", "1 8 64").split()
    if not clients:
        raise SpecError("CLIENTS is empty")
    for c in clients:
        if not re.fullmatch(pos, c):
            raise SpecError('CLIENTS must be positive integers, not "%s"' % c)
    out["clients"] = tuple(int(c) for c in clients)
    return out


def server_bindir(pg_config: str, parameter: str = "PG_CONFIG",
                  server: str = "the patched server") -> str:
    """The bindir of the server of pg_config, with every program the study
    runs; parameter and server name it in the messages."""
    bad = ('%s="%s" cannot be run; it must point to the pg_config of %s'
           % (parameter, pg_config, server))
    try:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True,
                             text=True)
    except OSError:
        raise SpecError(bad)
    if out.returncode != 0 or not out.stdout.strip():
        raise SpecError(bad)
    bindir = out.stdout.strip()
    for prog in PROGRAMS:
        if not os.access(os.path.join(bindir, prog), os.X_OK):
            raise SpecError('%s="%s": %s/%s is missing'
                            % (parameter, pg_config, bindir, prog))
    return bindir


def default_stock_pg_config(pg_config: str) -> str:
    """STOCK_PG_CONFIG's default: <build>-stock/bin/pg_config for a
    PG_CONFIG <build>/bin/pg_config, where the Makefile puts the stock
    build beside a build (make server-stock); "" for another PG_CONFIG."""
    bindir, prog = os.path.split(os.path.normpath(pg_config))
    build, bin_name = os.path.split(bindir)
    if prog != "pg_config" or bin_name != "bin" or \
            os.path.basename(build) == "":
        return ""
    return os.path.join(build + "-stock", "bin", "pg_config")


def stock_server(env: Mapping[str, str], pg_config: str) -> Tuple[str, str]:
    """The pg_config and bindir of the unpatched server, for a study with
    an unpatched variant: STOCK_PG_CONFIG, by default the stock build
    beside PG_CONFIG's."""
    stock = _get(env, "STOCK_PG_CONFIG") or \
        default_stock_pg_config(pg_config)
    if not stock:
        raise SpecError('an unpatched variant runs the server of '
                        'STOCK_PG_CONFIG, which has no default here: '
                        'PG_CONFIG="%s" is not <build>/bin/pg_config; set '
                        'STOCK_PG_CONFIG to the pg_config of the unpatched '
                        'server' % pg_config)
    return stock, server_bindir(
        stock, "STOCK_PG_CONFIG",
        "the unpatched server (make server-stock builds it)")


def sysbench_tables(env: Mapping[str, str], scale: int) -> Tuple[int, int]:
    """SYSBENCH_TABLES and SYSBENCH_TABLE_SIZE: by default 4 tables
    holding together the rows of pgbench_accounts at SCALE (100000 per
    unit)."""
    pos = r"[1-9][0-9]{0,8}"
    tables = _integer(env, "SYSBENCH_TABLES", str(SYSBENCH_DEFAULT_TABLES),
                      pos, "a positive integer (sysbench --tables)")
    size = _integer(env, "SYSBENCH_TABLE_SIZE", str(max(
        1, PGBENCH_ROWS_PER_SCALE * scale // tables)), pos,
        "a positive integer (sysbench --table-size, rows per table)")
    return tables, size



def _sensitivity_text(env: Mapping[str, str]) -> str:
    """The VARIANTS of SENSITIVITY and DELAY_US (lockstudy.delayvariants),
    on the base of VARIANTS if it gives one variant; SENSITIVITY refuses
    STRATEGIES, AA=1 and VARIANTS of more variants.  "" without
    SENSITIVITY, which DELAY_US then must not be given without."""
    if not _get(env, "SENSITIVITY"):
        if _get(env, "DELAY_US"):
            raise SpecError("DELAY_US is for SENSITIVITY, the tranches whose "
                            "holds the study lengthens by each delay: give "
                            "both")
        return ""
    for given in ("STRATEGIES", "AA"):
        if _get(env, given) and _get(env, given) != "0":
            raise SpecError("SENSITIVITY makes the variants (none, and per "
                            "tranche and delay <tranche>-in-<d> and "
                            "<tranche>-ctl-<d>); give SENSITIVITY or %s, not "
                            "both" % given)
    base = [x.strip() for x in
            _get(env, "VARIANTS").replace("\n", ";").split(";") if x.strip()]
    if len(base) > 1:
        raise SpecError("SENSITIVITY makes the variants, on the base of "
                        "VARIANTS if it gives one (its name and its patches "
                        "and settings, which every variant then has); "
                        "VARIANTS gives %d" % len(base))
    return delayvariants.variants_text(delayvariants.parse(
        _get(env, "SENSITIVITY"), _get(env, "DELAY_US")), *(
            base[0].partition(":")[::2] if base else ()))


def _variants_text(env: Mapping[str, str]) -> str:
    """VARIANTS, or AA_VARIANTS under AA=1, which refuses VARIANTS and
    STRATEGIES, or the variants of SENSITIVITY."""
    made = _sensitivity_text(env)
    if made:
        return made
    aa = _integer(env, "AA", "0", r"[01]", "1 (an A/A study: the base "
                  "server twice, VARIANTS=\"%s\") or 0" % AA_VARIANTS)
    if not aa:
        return _get(env, "VARIANTS")
    for given in ("VARIANTS", "STRATEGIES"):
        if _get(env, given):
            raise SpecError("AA=1 runs VARIANTS=\"%s\", the base server "
                            "twice; give AA=1 or %s, not both (an A/A "
                            "study of other settings: VARIANTS=\"a: "
                            "<settings>; b: <the same settings>\")"
                            % (AA_VARIANTS, given))
    return AA_VARIANTS


def _variants(env: Mapping[str, str], top: str, caller_pwd: str,
              check_patches: bool) -> Tuple[Variant, ...]:
    """The variants of VARIANTS (or AA=1), else of STRATEGIES; not
    both."""
    variants_text = _variants_text(env)
    if not variants_text:
        return variants.parse_strategies(_get(env, "STRATEGIES",
                                              DEFAULT_STRATEGIES))
    if _get(env, "STRATEGIES"):
        raise SpecError("give STRATEGIES or VARIANTS, not both (a "
                        "strategy is the setting "
                        "pg_lockstat.spin_strategy=<strategy> of a "
                        "variant)")
    return variants.parse_variants(variants_text, caller_pwd, top,
                                   check_patches)


def _workload(env: Mapping[str, str], top: str, scale: int,
              threads_text: str) -> Tuple[Workload, Tuple[int, int]]:
    """WORKLOAD and sysbench's (tables, rows per table), (0, 0) for a
    pgbench workload: a sysbench workload needs sysbench on the
    environment's PATH and refuses THREADS; a pgbench one refuses
    SYSBENCH_TABLES and SYSBENCH_TABLE_SIZE."""
    name = _get(env, "WORKLOAD", "select-only")
    tables = (0, 0)
    if name in dict(workloads.SYSBENCH_WORKLOADS):
        tables = sysbench_tables(env, scale)
    workload = workloads.parse_workload(name, top, tables)
    if workload.sysbench:
        if threads_text:
            raise SpecError("THREADS is pgbench -j; sysbench runs one thread "
                            "per client (WORKLOAD=%s): leave THREADS unset"
                            % name)
        workloads.check_sysbench(name, env.get("PATH", os.defpath))
    else:
        sysbench_names = " ".join(w for w, _ in workloads.SYSBENCH_WORKLOADS)
        for given in ("SYSBENCH_TABLES", "SYSBENCH_TABLE_SIZE"):
            if _get(env, given):
                raise SpecError("%s is for the sysbench workloads (%s), not "
                                "WORKLOAD=%s" % (given, sysbench_names, name))
    return workload, tables


def from_environment(env: Mapping[str, str], top: str, caller_pwd: str,
                     check_patches: bool = True) -> Study:
    """The study that the environment asks for, checked."""
    pg_config = _get(env, "PG_CONFIG")
    if not pg_config:
        raise SpecError("PG_CONFIG must point to the pg_config of the "
                        "patched server")
    numbers = _numbers(env)
    bindir = server_bindir(pg_config)
    threads_text = _get(env, "THREADS")
    if threads_text and not re.fullmatch(r"[1-9][0-9]*", threads_text):
        raise SpecError('THREADS must be a positive integer, not "%s"'
                        % threads_text)
    study_variants = _variants(env, top, caller_pwd, check_patches)
    stock_pg_config = stock_bindir = ""
    if any(v.unpatched for v in study_variants):
        stock_pg_config, stock_bindir = stock_server(env, pg_config)
    workload, tables = _workload(env, top, numbers["scale"], threads_text)
    return Study(
        pg_config=pg_config, bindir=bindir, workload=workload,
        sysbench_tables=tables[0], sysbench_table_size=tables[1],
        threads=int(threads_text) if threads_text else None,
        run_dir=_get(env, "RUN_DIR", os.path.join(top, "build", "run")),
        variant_dir=_get(env, "VARIANT_DIR",
                         os.path.join(top, "build", "variants")),
        variants=study_variants,
        variants_given=_variants_text(env) or None,
        stock_pg_config=stock_pg_config, stock_bindir=stock_bindir,
        **numbers)
