"""The study's specification: its parameters, checked before anything starts.

The parameters come from the environment, as "make run" passes its make
variables (an empty value counts as unset): PG_CONFIG, STOCK_PG_CONFIG,
SCALE, STRATEGIES, VARIANTS, VARIANT_DIR, CLIENTS, DURATION, WARMUP,
WARMUP_ROUND, SHARED_START, WORKLOAD, THREADS, REPEAT, SEED, THRESHOLD,
RUN_DIR, SYSBENCH_TABLES, SYSBENCH_TABLE_SIZE (doc/study.md describes
each).

A workload is run by pgbench (its built-in scripts and those of
bench/workloads/) or by sysbench (the oltp_* scripts of Debian's package,
with its PostgreSQL driver), which must then be on PATH.

A study compares variants, the first the baseline.  A variant has a name,
patch files applied after the project's core series (none: the server of
PG_CONFIG) and server settings; or it is "unpatched": the stock server of
STOCK_PG_CONFIG, without pg_lockstat (shared_preload_libraries = '').
STRATEGIES="a b" is the shorthand of
VARIANTS="a: pg_lockstat.spin_strategy=a; b: pg_lockstat.spin_strategy=b".

Every refusal raises SpecError with the message the user sees.  Calls no
other module of the package.
"""

import os
import pwd
import random
import re
import shutil
import subprocess
from dataclasses import dataclass
from typing import List, Mapping, Optional, Sequence, Tuple

# the name of the program in its messages
ME = "lockstudy"

STRATEGIES = ("default", "tas", "ttas_spin", "ttas", "ttas_backoff")
DEFAULT_STRATEGIES = "tas ttas_spin ttas"
# the pgbench workloads built into pgbench, and their options
BUILTIN_WORKLOADS = (("select-only", ("-S", "-M", "prepared")),
                     ("tpcb-like", ("-M", "prepared")),
                     ("simple-update", ("-N", "-M", "prepared")))
# the workloads of sysbench's own oltp scripts, and those scripts
SYSBENCH_WORKLOADS = (("sysbench-point-select", "oltp_point_select"),
                      ("sysbench-read-only", "oltp_read_only"),
                      ("sysbench-read-write", "oltp_read_write"))
# sysbench's tables by default: SYSBENCH_TABLES of them, holding together
# as many rows as pgbench_accounts at SCALE
SYSBENCH_DEFAULT_TABLES = 4
PGBENCH_ROWS_PER_SCALE = 100000
# the Debian package of sysbench, with its PostgreSQL driver built in
SYSBENCH_PACKAGE = "sysbench"
# settings that the study itself sets, since its clients connect through them
OWN_SETTINGS = ("port", "listen_addresses", "unix_socket_directories")
PROGRAMS = ("initdb", "pg_ctl", "postgres", "psql", "pgbench")
# the item of VARIANTS that makes a variant run the unpatched server
UNPATCHED = "unpatched"


class SpecError(Exception):
    """A parameter the study refuses; the message says which and why."""


@dataclass(frozen=True)
class Variant:
    """One server variant: patches are absolute paths, settings (name,
    value) pairs; strategy is its pg_lockstat.spin_strategy, if it sets
    one; unpatched, whether it runs the unpatched server of
    STOCK_PG_CONFIG (then without patches, and its settings have
    shared_preload_libraries, '' unless VARIANTS gives it)."""
    name: str
    patches: Tuple[str, ...] = ()
    settings: Tuple[Tuple[str, str], ...] = ()
    strategy: Optional[str] = None
    unpatched: bool = False

    def settings_lines(self) -> List[str]:
        """The settings as postgresql.conf lines."""
        return ["%s = '%s'" % s for s in self.settings]


@dataclass(frozen=True)
class Workload:
    """A workload: its name, the program that runs it ("pgbench" or
    "sysbench"), the program's options and the server settings of its
    script header ("name = value" lines).  For pgbench the options of
    every run (-S, -f script, -M prepared, ...); for sysbench the oltp
    script, then --tables and --table-size, which its prepare and every
    run share."""
    name: str
    args: Tuple[str, ...]
    settings: Tuple[str, ...] = ()
    tool: str = "pgbench"

    @property
    def sysbench(self) -> bool:
        return self.tool == "sysbench"

    def describe(self) -> str:
        """Its options, and its settings if any, as the plan shows them."""
        text = " ".join(self.args)
        if self.sysbench:
            text = "sysbench " + text
        if self.settings:
            text += "; " + ", ".join(self.settings)
        return text


@dataclass(frozen=True)
class Study:
    """The checked parameters of a study."""
    pg_config: str
    bindir: str
    scale: int
    clients: Tuple[int, ...]
    duration: int
    warmup: int
    workload: Workload
    threads: Optional[int]
    repeat: int
    seed: int
    threshold: str
    run_dir: str
    variant_dir: str
    variants: Tuple[Variant, ...]
    # VARIANTS as given, or None for a study of STRATEGIES
    variants_given: Optional[str]
    # whether a warm-up round, not recorded, runs before the REPEAT rounds
    warmup_round: bool = True
    # whether variants that differ only in settings a reload changes share
    # a server start per round (module starts)
    shared_start: bool = False
    # the unpatched server's pg_config and bindir: empty unless a variant
    # is unpatched
    stock_pg_config: str = ""
    stock_bindir: str = ""
    # sysbench's --tables and --table-size: 0 unless the workload is
    # sysbench's
    sysbench_tables: int = 0
    sysbench_table_size: int = 0

    @property
    def names(self) -> List[str]:
        return [v.name for v in self.variants]

    @property
    def unpatched(self) -> List[str]:
        """The names of the variants that run the unpatched server."""
        return [v.name for v in self.variants if v.unpatched]

    @property
    def max_clients(self) -> int:
        return max(self.clients)

    def compared(self) -> str:
        """What the study compares, as commands.txt records it."""
        if self.variants_given is not None:
            return 'VARIANTS="%s"' % self.variants_given
        return 'STRATEGIES="%s"' % " ".join(self.names)

    def parameters(self) -> str:
        """The parameters as the first line of commands.txt; sysbench's
        tables at its end, for a sysbench workload only, then SHARED_START=1
        if it is set."""
        text = ("SCALE=%d %s CLIENTS=\"%s\" DURATION=%d WARMUP=%d "
                "WARMUP_ROUND=%d WORKLOAD=%s REPEAT=%d SEED=%d THRESHOLD=%s "
                "THREADS=%s"
                % (self.scale, self.compared(),
                   " ".join(map(str, self.clients)), self.duration,
                   self.warmup, self.warmup_round, self.workload.name,
                   self.repeat, self.seed,
                   self.threshold,
                   "" if self.threads is None else self.threads))
        if self.workload.sysbench:
            text += " SYSBENCH_TABLES=%d SYSBENCH_TABLE_SIZE=%d" % (
                self.sysbench_tables, self.sysbench_table_size)
        if self.shared_start:
            text += " SHARED_START=1"
        return text


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
        "shared_start": _integer(env, "SHARED_START", "0", r"[01]",
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


def parse_setting(vname: str, item: str,
                  seen: Sequence[str]) -> Tuple[str, str]:
    """A setting item name=value of variant vname, checked."""
    name, value = item.split("=", 1)
    where = "VARIANTS: variant %s" % vname
    if not re.fullmatch(r"[a-z_][a-z0-9_.]*", name):
        raise SpecError('%s: bad setting name "%s" in "%s" (name=value, the '
                        'name in lower case)' % (where, name, item))
    if not value or re.search(r"['\\\"#]", value):
        raise SpecError('%s: bad value in "%s" (not empty, no quotes, '
                        'backslashes or #)' % (where, item))
    if name in seen:
        raise SpecError("VARIANTS: variant %s sets %s twice" % (vname, name))
    if name in OWN_SETTINGS:
        raise SpecError("%s: %s is set by the study itself (its clients "
                        "connect through it)" % (where, name))
    if name == "pg_lockstat.spin_strategy" and value not in STRATEGIES:
        raise SpecError('%s: unknown strategy "%s" (valid: %s)'
                        % (where, value, " ".join(STRATEGIES)))
    return name, value


def unpatched_settings(vname: str, patches: Sequence[str],
                       settings: Sequence[Tuple[str, str]]
                       ) -> Tuple[Tuple[str, str], ...]:
    """The settings of the unpatched variant vname, checked:
    shared_preload_libraries = '' first unless they set it.  The stock
    server has neither the core series nor pg_lockstat: SpecError for
    patch files, a pg_lockstat.* setting or a shared_preload_libraries
    that names pg_lockstat."""
    where = "VARIANTS: variant %s" % vname
    if patches:
        raise SpecError('%s: "%s" and patch files together (%s); an '
                        'unpatched variant runs the stock server of '
                        'STOCK_PG_CONFIG as it is built, without the core '
                        'series' % (where, UNPATCHED, " ".join(patches)))
    for name, value in settings:
        if name.startswith("pg_lockstat."):
            raise SpecError("%s: %s is a setting of pg_lockstat, which the "
                            "unpatched server does not load"
                            % (where, name))
        if name == "shared_preload_libraries" and "pg_lockstat" in [
                x.strip() for x in value.split(",")]:
            raise SpecError("%s: the unpatched server cannot load "
                            "pg_lockstat (shared_preload_libraries=%s)"
                            % (where, value))
    if "shared_preload_libraries" in [n for n, _ in settings]:
        return tuple(settings)
    return (("shared_preload_libraries", ""),) + tuple(settings)


def resolve_patch(vname: str, item: str, caller_pwd: str, top: str) -> str:
    """The absolute path of patch file item of variant vname: relative to
    the directory of the call, else to the checkout; checked."""
    where = "VARIANTS: variant %s" % vname
    hint = ""
    if os.path.isabs(item):
        path = item
    else:
        path = os.path.join(caller_pwd, item)
        hint = " (relative to %s%s)" % (
            caller_pwd, "" if caller_pwd == top else " or to " + top)
        if not os.path.exists(path):
            path = os.path.join(top, item)
    if not os.path.exists(path):
        raise SpecError('%s: patch file "%s" not found%s; a setting is '
                        'name=value, without spaces' % (where, item, hint))
    if not os.path.isfile(path):
        raise SpecError('%s: patch file "%s" is not a regular file'
                        % (where, item))
    if not os.access(path, os.R_OK):
        raise SpecError('%s: patch file "%s" cannot be read by %s'
                        % (where, item, pwd.getpwuid(os.geteuid()).pw_name))
    path = os.path.join(os.path.realpath(os.path.dirname(path)),
                        os.path.basename(path))
    if re.search(r"\s", path):
        raise SpecError('%s: the path of patch file "%s" has a space; move or '
                        'link it elsewhere' % (where, path))
    with open(path, "rb") as f:
        if not any(line.startswith(b"+++ ") for line in f):
            raise SpecError('%s: patch file "%s" has no unified diff in it '
                            '(no +++ line)' % (where, item))
    return path


def parse_variant(spec: str, caller_pwd: str, top: str,
                  check_patches: bool = True,
                  seen: Sequence[str] = ()) -> Variant:
    """One "name[: item ...]" of VARIANTS, after the variants named seen:
    each item "unpatched", a setting name=value or a patch file.  Without
    check_patches (the unprivileged pass, whose builds were made before)
    patch items are kept as given."""
    name, _, items = spec.partition(":")
    name = name.strip()
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,30}", name):
        raise SpecError('VARIANTS: bad variant name "%s" in "%s" (lower-case '
                        'letters, digits, _ and -, at most 31; the form is '
                        '"name: patch-file ... setting=value ...; name: ..."'
                        ')' % (name, spec))
    if name in seen:
        raise SpecError('VARIANTS: variant "%s" appears twice' % name)
    patches: List[str] = []
    settings: List[Tuple[str, str]] = []
    unpatched = False
    for item in items.split():
        if item == UNPATCHED:
            if unpatched:
                raise SpecError('VARIANTS: variant %s says "%s" twice'
                                % (name, UNPATCHED))
            unpatched = True
            continue
        if re.match(r"[A-Za-z_][A-Za-z0-9_.]*=", item):
            settings.append(parse_setting(name, item,
                                          [s for s, _ in settings]))
            continue
        path = resolve_patch(name, item, caller_pwd, top) \
            if check_patches else item
        if path in patches:
            raise SpecError('VARIANTS: variant %s lists patch file "%s" twice'
                            % (name, item))
        patches.append(path)
    if unpatched:
        return Variant(name, (), unpatched_settings(name, patches, settings),
                       None, True)
    strategy = dict(settings).get("pg_lockstat.spin_strategy")
    return Variant(name, tuple(patches), tuple(settings), strategy)


def parse_variants(text: str, caller_pwd: str, top: str,
                   check_patches: bool = True) -> Tuple[Variant, ...]:
    """VARIANTS: variants separated by ";" or newlines."""
    variants: List[Variant] = []
    for spec in text.replace("\n", ";").split(";"):
        if not spec.strip():
            continue
        variants.append(parse_variant(spec, caller_pwd, top, check_patches,
                                      [w.name for w in variants]))
    if not variants:
        raise SpecError("VARIANTS is empty")
    return tuple(variants)


def parse_strategies(text: str) -> Tuple[Variant, ...]:
    """STRATEGIES: each a variant that sets only its spin strategy."""
    variants: List[Variant] = []
    for s in text.split():
        if s not in STRATEGIES:
            raise SpecError('unknown strategy "%s" in STRATEGIES (valid: %s)'
                            % (s, " ".join(STRATEGIES)))
        if s in [v.name for v in variants]:
            raise SpecError('strategy "%s" appears twice in STRATEGIES' % s)
        variants.append(Variant(s, (), (("pg_lockstat.spin_strategy", s),),
                                s))
    if not variants:
        raise SpecError("STRATEGIES is empty")
    return tuple(variants)


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


def parse_workload(name: str, top: str,
                   sysbench: Tuple[int, int] = (0, 0)) -> Workload:
    """WORKLOAD: a built-in pgbench script, bench/workloads/<name>.sql,
    whose header may give "-- pgbench-options: ..." and
    "-- server-settings: name = value" lines, or one of sysbench's oltp
    scripts, on sysbench (tables, rows per table)."""
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
    return Workload(name, tuple(args), tuple(settings))


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
    variants_text = _get(env, "VARIANTS")
    if variants_text:
        if _get(env, "STRATEGIES"):
            raise SpecError("give STRATEGIES or VARIANTS, not both (a "
                            "strategy is the setting "
                            "pg_lockstat.spin_strategy=<strategy> of a "
                            "variant)")
        variants = parse_variants(variants_text, caller_pwd, top,
                                  check_patches)
    else:
        variants = parse_strategies(_get(env, "STRATEGIES",
                                         DEFAULT_STRATEGIES))
    stock_pg_config = stock_bindir = ""
    if any(v.unpatched for v in variants):
        stock_pg_config, stock_bindir = stock_server(env, pg_config)
    name = _get(env, "WORKLOAD", "select-only")
    tables = (0, 0)
    if name in dict(SYSBENCH_WORKLOADS):
        tables = sysbench_tables(env, numbers["scale"])
    workload = parse_workload(name, top, tables)
    if workload.sysbench:
        if threads_text:
            raise SpecError("THREADS is pgbench -j; sysbench runs one thread "
                            "per client (WORKLOAD=%s): leave THREADS unset"
                            % name)
        check_sysbench(name, env.get("PATH", os.defpath))
    else:
        for given in ("SYSBENCH_TABLES", "SYSBENCH_TABLE_SIZE"):
            if _get(env, given):
                raise SpecError("%s is for the sysbench workloads (%s), not "
                                "WORKLOAD=%s" % (given, " ".join(
                                    w for w, _ in SYSBENCH_WORKLOADS), name))
    return Study(
        pg_config=pg_config, bindir=bindir, workload=workload,
        sysbench_tables=tables[0], sysbench_table_size=tables[1],
        threads=int(threads_text) if threads_text else None,
        run_dir=_get(env, "RUN_DIR", os.path.join(top, "build", "run")),
        variant_dir=_get(env, "VARIANT_DIR",
                         os.path.join(top, "build", "variants")),
        variants=variants,
        variants_given=variants_text or None,
        stock_pg_config=stock_pg_config, stock_bindir=stock_bindir,
        **numbers)
