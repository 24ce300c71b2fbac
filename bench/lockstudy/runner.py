"""The study itself: rounds of pgbench runs on a throwaway cluster.

On a cluster of its own: initialise pgbench (pgbench -i), or for a
sysbench workload make sysbench's tables (sysbench prepare, then VACUUM
ANALYZE, as pgbench -i ends), once: every variant runs on that one data
directory.  Then run REPEAT rounds.  A
round runs every variant once, in the order module plan draws:
start the variant's server with its settings, one warm-up pgbench run that
is not recorded, then for each client count, in the round's shuffled
order, reset the pg_lockstat counters, run pgbench and record its tps,
its transactions, its per-second tps and the pg_lwlock_stats and
pg_spinlock_stats rows.  Then the files runs.csv, locks.csv, spins.csv;
then the study hands its directory to the presentation that run() was
given (the caller's: lockstudy.__main__ analyses, reports and plots), and
run() returns the directory.  A sysbench workload's runs are sysbench's, in
the same places (module sysbench), and read the same way.

With SHARED_START=1, variants that differ only in settings a reload
changes run in one server start per round (module starts): the first as
above, each next one after its settings are put in force by
pg_reload_conf(), without a warm-up run, then its client counts.

A variant of the unpatched server (no pg_lockstat) runs the same way but
resets and records no counters: its runs have no rows in locks.csv and
spins.csv.

Before round 1, unless WARMUP_ROUND=0, a warm-up round runs the same way
in round 1's variant and client orders, but records nothing: its runs are
in commands.txt (marked) and in the logs of round 0, not in the CSVs, so
that no round the report analyses is the study's first (a first round
ran slow for every variant, issue 33).

One study at a time per RUN_DIR (a lock file).  SIGINT, SIGTERM and SIGHUP
stop a running pgbench at once.  However the study ends, the server is
stopped (immediate shutdown after a failure: the data is thrown away) and
the data directory removed; the logs stay.

Every file of the study is written through its records.Recorder; the
driver's errors become StepError in cluster.step() only; the ETA is
progress.Progress's.

Calls records, progress, interrupts, cluster, builds, spec, pgbench,
sysbench, plan and delayvariants (the check of the delayed tranches).
"""

import os
import pwd
import random
import subprocess
import sys
import tempfile
import time
from typing import (Callable, List, NamedTuple, Optional, Sequence, TextIO,
                    Tuple)

from . import (builds, cluster, delayvariants, pgbench, plan, progress,
               records, spec, sysbench)
from .interrupts import Interrupted, catch_signals, ignore_signals

WARMUP_ROUND = 0     # the warm-up round's number, in the runner and logs
# the views recorded after each run: (view, file, sort columns, largest first)
VIEWS = (("pg_lwlock_stats", "locks", ("blocks",)),
         ("pg_lwlock_backend_type_stats", "kinds", ("blocks",)),
         ("pg_spinlock_stats", "spins", ("contended", "spins")),
         ("pg_spinlock_backend_type_stats", "spinkinds",
          ("contended", "spins")))


def round_name(r: int) -> str:
    """Round r in messages: "round 3", or "warm-up round" for round 0."""
    return "warm-up round" if r == WARMUP_ROUND else "round %d" % r


class StudyRun:
    """One study, from its cluster to its report.  at names the step that
    runs, for the messages of failures and interruptions."""

    def __init__(self, study: spec.Study, top: str,
                 variant_builds: Sequence[builds.Build], out: TextIO,
                 present: Callable[[str], None] = lambda rundir: None):
        self.study = study
        self.top = top
        self.builds = list(variant_builds)
        self.out = out
        self.present = present
        self.at = "setting up the study"
        self.nproc = os.cpu_count() or 1
        self.cluster: Optional[cluster.Cluster] = None
        self.conn = None
        # every file of the study is written through it
        self.recorder = records.Recorder()
        # the orders of the rounds (module plan), once drawn
        self.plan: Optional[plan.Plan] = None
        # pg_settings.context of the variants' settings (SHARED_START=1)
        self.contexts: dict = {}
        # the program of the workload: pgbench or sysbench, whose output
        # the functions of its module read
        self.tool = sysbench if study.workload.sysbench else pgbench
        self.tool_name = study.workload.tool
        self.progress = progress.Progress()

    @property
    def rundir(self) -> str:
        """The study's directory ("" before it is made)."""
        return self.recorder.rundir

    @rundir.setter
    def rundir(self, path: str) -> None:
        self.recorder.rundir = path

    def say(self, text: str) -> None:
        print("%s: %s" % (spec.ME, text), file=sys.stderr, flush=True)

    def path(self, name: str) -> str:
        return os.path.join(self.rundir, name)

    # --- the cluster ---------------------------------------------------

    def make_cluster(self) -> None:
        self.rundir = records.new_rundir(self.study.run_dir)
        # unix socket paths are limited to about 100 bytes: keep it short
        sock = tempfile.mkdtemp(prefix="pg_lockstat-run.", dir="/tmp")
        port = random.randrange(20000, 40000)
        self.cluster = cluster.Cluster(self.rundir, sock, port,
                                       self.study.bindir)
        os.environ.update(PGHOST=sock, PGPORT=str(port),
                          PGDATABASE="postgres",
                          PGUSER=_user())
        self.say("cluster in %s (port %d)" % (self.rundir, port))
        self.at = "initdb"
        self.cluster.initdb()
        self.cluster.configure(self.study.max_clients + 10,
                               self.study.workload)

    def start(self, label: str, i: Optional[int] = None) -> None:
        """Start the base server, or the i-th variant's, and connect."""
        self.at = "server start (%s)" % label
        if i is None:
            self.cluster.start(label)
        else:
            self.cluster.start(label, self.builds[i].bindir,
                               self.study.variants[i].settings_lines())
        self.conn = self.cluster.connect()

    def stop(self) -> None:
        self.at = "server stop"
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        self.cluster.stop()

    def sql(self, what: str, query: str, params: tuple = ()) -> list:
        """Run a query; its rows.  A failure prints the server's error and
        names the step."""
        self.at = what
        with cluster.step(what), self.conn.cursor() as cur:
            cur.execute(query, params)
            return cur.fetchall() if cur.description else []

    def benchmark(self, what: str, cmd: List[str], out: str) -> str:
        """Run pgbench or sysbench, its output to out; its output."""
        self.at = what
        rc = cluster.run_logged(cmd, out)
        if rc != 0:
            # sysbench's messages start with FATAL, the server's ERROR
            cluster.show_log(out, "fatal|error" if self.study.workload.sysbench
                             else "error")
            raise cluster.StepError("%s failed (exit status %d); see %s"
                                    % (what, rc, out))
        with open(out, errors="replace") as f:
            return f.read()

    def command(self, clients: int, seconds: int, progress: bool
                ) -> List[str]:
        """The command of one run of the workload, at clients clients for
        seconds seconds; with progress, the tps of every second."""
        s = self.study
        if s.workload.sysbench:
            return sysbench.command(s.workload.args,
                                    self.sysbench_connection(), clients,
                                    seconds, progress)
        return pgbench.command(s.workload.args, clients,
                               pgbench.threads(clients, s.threads,
                                               self.nproc),
                               seconds, progress)

    def sysbench_connection(self) -> List[str]:
        """sysbench's options to connect to the study's cluster."""
        return sysbench.connection(self.cluster.sock, self.cluster.port,
                                   _user(), "postgres")

    # --- metadata ------------------------------------------------------

    def write_metadata(self) -> None:
        """machine.txt, versions.txt, commands.txt and settings.txt (the
        workload's part)."""
        self.recorder.append("machine.txt",
                             records.machine_lines(self.nproc))
        self.recorder.append("versions.txt", records.versions_lines(
            self.study, self.top, self.builds))
        self.recorder.command(self.study.parameters())
        w = self.study.workload
        if w.settings:
            self.recorder.append("settings.txt", [
                "-- server-settings of the workload %s (in postgresql.conf)"
                % w.name] + list(w.settings))

    def setup(self) -> None:
        """The extension, the workload's tables and setup, on the base."""
        self.start("setup")
        self.sql("CREATE EXTENSION pg_lockstat",
                 "CREATE EXTENSION pg_lockstat")
        delayvariants.check_tranches(self.sql, self.study.variants)
        self.at = "reading the columns of the pg_lockstat views"
        with cluster.step(self.at), self.conn.cursor() as cur:
            self.recorder.headers(cur, VIEWS)
        self.recorder.start_per_second()
        if any(delayvariants.delayed(v) for v in self.study.variants):
            self.recorder.append(delayvariants.DELAYS_FILE,
                                 [delayvariants.DELAYS_HEADER])
        if self.study.shared_start:
            names = sorted({n for v in self.study.variants
                            for n, _ in v.settings})
            self.contexts = dict(self.sql(
                "reading the contexts of the variants' settings",
                "SELECT name, context FROM pg_settings WHERE name = ANY(%s)",
                (names,)))
        if self.study.workload.sysbench:
            self.prepare_sysbench()
        else:
            self.say("pgbench -i -s %d" % self.study.scale)
            self.benchmark("pgbench -i", ["pgbench", "-i", "-q", "-s",
                                          str(self.study.scale), "postgres"],
                           self.path("pgbench-init.log"))
        for query in self.study.workload.setup:
            self.recorder.command(query)
            self.sql("the workload's setup: %s" % query, query)
        self.stop()

    def prepare_sysbench(self) -> None:
        """sysbench's tables, once for every variant (they share the data
        directory), then VACUUM ANALYZE, as pgbench -i ends: the visibility
        map and statistics are made before the first run, not by autovacuum
        during the first rounds."""
        s = self.study
        cmd = sysbench.prepare_command(
            s.workload.args, self.sysbench_connection(),
            sysbench.prepare_threads(s.sysbench_tables, self.nproc))
        self.say("sysbench prepare: %d tables of %d rows"
                 % (s.sysbench_tables, s.sysbench_table_size))
        self.recorder.command(" ".join(cmd))
        self.recorder.command("VACUUM ANALYZE")
        self.benchmark("sysbench prepare", cmd,
                       self.path("sysbench-prepare.log"))
        self.sql("VACUUM ANALYZE (after sysbench prepare)", "VACUUM ANALYZE")

    # --- the plan ------------------------------------------------------

    def draw_plan(self) -> None:
        """Draw the orders of the rounds (module plan) and print the
        plan."""
        s = self.study
        self.at = "drawing the variant order"
        p = plan.draw(s, [b.bindir for b in self.builds], self.contexts)
        if p.warning:
            print("%s: warning: %s" % (spec.ME, p.warning), file=sys.stderr)
        self.plan = p
        self.progress = progress.Progress(p.total)
        print("\n".join(plan.lines(s, p, self.builds, self.nproc)) + "\n",
              file=self.out, flush=True)

    # --- the rounds ----------------------------------------------------

    def run_rounds(self) -> None:
        """The warm-up round, if any, then the rounds."""
        p = self.plan
        self.progress.started()
        todo = [(r, groups, p.round_clients[r - 1])
                for r, groups in enumerate(p.round_groups, start=1)]
        if self.study.warmup_round:
            todo.insert(0, (WARMUP_ROUND, p.warmup_groups,
                            p.warmup_clients))
        for r, groups, clients in todo:
            self.recorder.command("# %s: %s; clients %s%s" % (
                round_name(r), plan.order_text(groups),
                " ".join(map(str, clients)),
                " (not recorded)" if r == WARMUP_ROUND else ""))
            pos = 1
            for group in groups:
                self.run_group(r, pos, group, clients)
                pos += len(group)

    def run_group(self, r: int, pos: int, group: Sequence[str],
                  clients: Sequence[int]) -> None:
        """The runs of the variants of group, which share a server start,
        in round r (0: the warm-up round), the first at position pos, each
        at the client counts in that order; then the server stops."""
        for k, name in enumerate(group):
            i = self.study.names.index(name)
            if k == 0:
                self.start_variant(r, i)
            else:
                self.reload_variant(r, i, [self.study.names.index(g)
                                           for g in group])
            for c in clients:
                self.run_point(r, pos + k, i, c)
        self.stop()

    def check_variant(self, r: int, i: int) -> None:
        """That the i-th variant's server and settings are in force; in
        round 1 its settings go to settings.txt."""
        v = self.study.variants[i]
        label = "variant " + v.name
        self.at = "checking the server of " + label
        self.cluster.check_binary(label, self.builds[i].bindir)
        self.at = "checking the settings in force (%s)" % label
        with self.conn.cursor() as cur:
            cluster.check_settings(cur, label, v, self.cluster.log)
            if r == 1:
                # the settings each variant's server ran with
                self.recorder.append("settings.txt", ["-- " + label] +
                                     cluster.settings_in_force(cur))

    def reload_variant(self, r: int, i: int, group: Sequence[int]) -> None:
        """Put the i-th variant's settings in force on the running server
        of its group (the variants group, by index): variant.conf
        rewritten, pg_reload_conf(), a new connection once the server has
        reloaded; then the checks of a start, and that no setting of
        another variant of the group is left from variant.conf."""
        s = self.study
        v = s.variants[i]
        label = "variant " + v.name
        conf = ", ".join(v.settings_lines()) or "empty"
        warm = " (warm-up round)" if r == WARMUP_ROUND else ""
        self.recorder.command(
            "[%s] SELECT pg_reload_conf() with variant.conf: %s%s"
            % (v.name, conf, warm))
        self.reload(label, i)
        self.check_variant(r, i)
        others = sorted({n for j in group for n, _ in s.variants[j].settings}
                        - {n for n, _ in v.settings})
        with self.conn.cursor() as cur:
            cluster.check_reset(cur, label, others, self.cluster.log)
        self.progress.ran(plan.RELOAD_COST)

    def reload(self, label: str, i: int) -> None:
        """Rewrite variant.conf with the i-th variant's settings, reload,
        and connect anew once the server has."""
        self.at = "reloading the configuration (%s)" % label
        self.conn = self.cluster.reload(
            label, self.conn, self.study.variants[i].settings_lines())

    def start_variant(self, r: int, i: int) -> None:
        """Start the i-th variant's server in round r (0: the warm-up
        round), check it, and run its warm-up run."""
        s = self.study
        v = s.variants[i]
        warm = r == WARMUP_ROUND
        label = "variant " + v.name
        self.start(label, i)
        self.check_variant(r, i)
        if s.warmup > 0:
            cmd = self.command(s.max_clients, s.warmup, False)
            self.recorder.command("[%s] %s (warm-up%s)" % (
                v.name, " ".join(cmd), ", warm-up round" if warm else ""))
            self.benchmark("%s (%s, warm-up, %s)"
                           % (self.tool_name, label, round_name(r)), cmd,
                           self.path("%s-%s-warmup-%d.log"
                                     % (self.tool_name, v.name, r)))
        self.progress.ran(plan.costs(self.study)[0])

    def run_point(self, r: int, pos: int, i: int, c: int) -> None:
        """One pgbench (or sysbench) run: variant i, c clients, round r;
        recorded unless r is the warm-up round, which runs it the same way
        (the counters reset, the program's options, its log) but keeps
        only the log.  An unpatched variant has no counters to reset or
        record."""
        s = self.study
        name = s.names[i]
        lockstat = not s.variants[i].unpatched
        warm = r == WARMUP_ROUND
        point = "variant %s, %d clients, %s" % (name, c, round_name(r))
        if lockstat:
            self.sql("pg_lockstat_reset() (%s)" % point,
                     "SELECT pg_lockstat_reset()")
        delays = self.injected(i, point)
        cmd = self.command(c, s.duration, True)
        self.recorder.command("[%s] %s%s" % (
            name, " ".join(cmd), " (warm-up round)" if warm else ""))
        tool = self.tool_name
        out = self.path("%s-%s-%d-%d.log" % (tool, name, c, r))
        t0 = time.monotonic()
        text = self.benchmark("%s (%s)" % (tool, point), cmd, out)
        elapsed = time.monotonic() - t0
        tps, xacts = self.tool.tps(text), self.tool.transactions(text)
        if tps is None:
            raise cluster.StepError("%s (%s) failed: no tps in its "
                                    "output; see %s" % (tool, point, out))
        if xacts is None:
            raise cluster.StepError("%s (%s) failed: no number of "
                                    "transactions in its output; see %s"
                                    % (tool, point, out))
        if not warm:
            self.recorder.per_second((name, c, r),
                                     self.tool.per_second(text))
            if lockstat:
                self.record(point, (name, c, r))
            if delays is not None:
                self.recorder.append(delayvariants.DELAYS_FILE, [
                    "%s,%d,%d,%d" % (name, c, r,
                                     self.injected(i, point) - delays)])
            self.recorder.runs.append((name, c, r, pos,
                                       records.pg_float(tps),
                                       records.pg_float("%.3f" % elapsed),
                                       xacts))
        self.progress.ran(plan.costs(self.study)[1])
        self.say(self.progress.line(
            "warm-up round" if warm else "round %d/%d" % (r, s.repeat),
            name, c, elapsed, float(tps)))

    def injected(self, i: int, point: str) -> Optional[int]:
        """The delays injected since the server started, for a variant
        that delays (delayvariants.delayed()); None for another."""
        if not delayvariants.delayed(self.study.variants[i]):
            return None
        return self.sql("reading the injected delays (%s)" % point,
                        delayvariants.INJECTED)[0][0]

    def record(self, point: str, key: Tuple[str, int, int]) -> None:
        """The counters of the run, as the views show them."""
        self.at = "recording the results (%s)" % point
        with cluster.step(self.at), self.conn.cursor() as cur:
            for view, kind, order in VIEWS:
                self.recorder.copy(cur, view, kind, key, order)

    # --- the end -------------------------------------------------------

    def finish(self) -> None:
        """The CSVs of the runs, then the presentation of the study."""
        self.at = "report"
        self.recorder.write()
        self.present(self.rundir)

    def cleanup(self, failed: bool) -> int:
        """Stop what runs, remove the cluster, keep the logs.  0, or 1 if
        the server could not be stopped."""
        if self.conn is not None:
            cluster.close(self.conn)
        c = self.cluster
        if c is not None and c.running and not c.stop_immediate():
            print("%s: error: could not stop the server of %s (see %s); stop "
                  "it with: pg_ctl -D %s -m immediate stop"
                  % (spec.ME, c.data, c.log, c.data), file=sys.stderr)
            return 1
        if c is not None:
            subprocess.call(["rm", "-rf", c.sock, c.data])
        if failed and self.rundir:
            print("%s: no server left running; data directory removed; logs "
                  "in %s/" % (spec.ME, self.rundir), file=sys.stderr)
        return 0


def _user() -> str:
    return pwd.getpwuid(os.geteuid()).pw_name


class Outcome(NamedTuple):
    """How a study ended: its exit status (0 on success) and its
    directory ("" if none was made)."""
    status: int
    rundir: str


def run(study: spec.Study, top: str, variant_builds: Sequence[builds.Build],
        out: TextIO = sys.stdout,
        present: Callable[[str], None] = lambda rundir: None) -> Outcome:
    """Run the study, record its files and hand its directory to present:
    status 0 on success; 1 after a failure, with "lockstudy: error: <step>
    failed ..." on stderr; 130, 143 or 129 after SIGINT, SIGTERM or
    SIGHUP; and the study's directory."""
    catch_signals()
    cluster.clean_environment(study.bindir)
    s = StudyRun(study, top, variant_builds, out, present)
    status = 0
    lock = None
    try:
        try:
            os.makedirs(study.run_dir, exist_ok=True)
        except OSError:
            raise cluster.StepError("cannot create RUN_DIR %s"
                                    % study.run_dir)
        lock = records.take_lock(study.run_dir)
        s.make_cluster()
        s.write_metadata()
        s.setup()
        s.draw_plan()
        s.run_rounds()
        s.finish()
    except (cluster.StepError, records.LockError) as e:
        print("%s: error: %s" % (spec.ME, e), file=sys.stderr)
        status = 1
    except Interrupted as e:
        print("%s: interrupted by SIG%s during %s; stopping"
              % (spec.ME, e.name, s.at), file=sys.stderr)
        status = e.status
    except Exception as e:
        # a failure the steps above do not name: say where, and clean up
        print("%s: error: %s failed (%s: %s)" % (spec.ME, s.at,
                                                 type(e).__name__, e),
              file=sys.stderr)
        status = 1
    finally:
        ignore_signals()
        status = s.cleanup(status != 0) or status
        if lock is not None:
            lock.close()
    return Outcome(status, s.rundir)
