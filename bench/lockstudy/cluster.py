"""The study's throwaway cluster: initdb, start, stop, settings in force.

One data directory serves every variant: before each start, variant.conf
(included at the end of postgresql.conf) is rewritten with the variant's
settings, and the variant's own pg_ctl starts its own postgres.  After a
start, check_binary() proves that the running postmaster is the variant's
binary and check_settings() that each of its settings is in force.  An
unpatched variant's postgres is the stock build's, on the same data
directory (initdb'ed by the base, of the same version), its variant.conf
overriding postgresql.conf's shared_preload_libraries = 'pg_lockstat'
with ''.  Variants that share a server start (SHARED_START=1) change
variant.conf and reload (reload()) instead of restarting.  The study
talks to the server through psycopg2, and step() is the one place where
the driver's errors become StepError.

Calls spec (the variant).  Raises StepError with the user's message.
"""

import contextlib
import os
import re
import subprocess
import sys
import time
from typing import Iterator, List, Optional, Sequence

import psycopg2

from . import spec


# seconds a reload may take before the study gives up: only a bound on a
# hang, since the wait is for the reload itself (pg_conf_load_time())
RELOAD_TIMEOUT = 120


class StepError(Exception):
    """A step of the study failed; the message names it."""


@contextlib.contextmanager
def step(what: str) -> Iterator[None]:
    """The one place where the database driver's errors become the
    study's: within, an error of psycopg2 prints the server's error as
    psql prints it and raises StepError("<what> failed")."""
    try:
        yield
    except psycopg2.Error as e:
        text = getattr(e, "pgerror", None) or str(e)
        sys.stderr.write(text if text.endswith("\n") else text + "\n")
        raise StepError("%s failed" % what)


def close(conn) -> None:
    """Close a connection, whatever state it is in."""
    try:
        conn.close()
    except psycopg2.Error:
        pass


def clean_environment(bindir: str) -> None:
    """libpq settings of the caller's environment (PGUSER, PGOPTIONS,
    PGSERVICE, ...) must not reach the throwaway cluster; the study's own
    programs come first on PATH."""
    for name in list(os.environ):
        if name.startswith("PG") and name != "PG_CONFIG":
            del os.environ[name]
    os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")


def show_log(path: str, pattern: str = "", text: Optional[str] = None
             ) -> None:
    """Up to 4 lines of a log, indented, on stderr: the first that match the
    (lower-case) regular expression pattern ignoring case, if it is given
    and some do, else the last lines.  text: the part of the file to show
    (default: all of it)."""
    if text is None:
        try:
            with open(path, errors="replace") as f:
                text = f.read()
        except OSError:
            return
    lines = text.splitlines()
    if not lines:
        return
    hits = [line for line in lines
            if pattern and re.search(pattern, line.lower())]
    print("%s: from %s:" % (spec.ME, path), file=sys.stderr)
    for line in hits[:4] if hits else lines[-4:]:
        print("    " + line, file=sys.stderr)


def run_logged(cmd: Sequence[str], out: str) -> int:
    """Run a command, its output to the file out, and wait for it; its exit
    status, 128 + N if signal N killed it, as a shell reports it.  If the
    wait is interrupted (a signal's exception), the command is stopped
    before the exception goes on, so nothing outlives the study."""
    with open(out, "w") as f:
        proc = subprocess.Popen(list(cmd), stdout=f, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        try:
            rc = proc.wait()
        except BaseException:
            proc.terminate()
            proc.wait()
            raise
    return 128 - rc if rc < 0 else rc


class Cluster:
    """The cluster of a study in rundir: data directory, socket, port."""

    def __init__(self, rundir: str, sock: str, port: int, bindir: str):
        self.rundir = rundir
        self.data = os.path.join(rundir, "data")
        self.log = os.path.join(rundir, "server.log")
        self.sock = sock
        self.port = port
        self.bindir = bindir
        # set before a start: a server that failed to start in time may
        # still be running
        self.running = False

    def initdb(self) -> None:
        log = os.path.join(self.rundir, "initdb.log")
        rc = run_logged([os.path.join(self.bindir, "initdb"), "-D",
                         self.data, "-A", "trust", "-N"], log)
        if rc != 0:
            show_log(log, "error")
            raise StepError("initdb failed (exit status %d); see %s"
                            % (rc, log))

    def configure(self, max_connections: int,
                  workload: spec.Workload) -> None:
        """The study's settings, the workload's, and the include of the
        variant's settings, rewritten before each start."""
        lines = ["# written by bench/lockstudy (make run)",
                 "listen_addresses = ''",
                 "port = %d" % self.port,
                 "unix_socket_directories = '%s'" % self.sock,
                 "max_connections = %d" % max_connections,
                 "shared_preload_libraries = 'pg_lockstat'"]
        if workload.settings:
            lines.append("# server-settings of the workload %s"
                         % workload.name)
            lines += list(workload.settings)
        lines += ["# the settings of the variant that runs (bench/lockstudy)",
                  "include 'variant.conf'"]
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n".join(lines) + "\n")
        self._variant_conf([])

    def _variant_conf(self, lines: Sequence[str]) -> None:
        with open(os.path.join(self.data, "variant.conf"), "w") as f:
            f.write("".join(line + "\n" for line in lines))

    def start(self, label: str, bindir: Optional[str] = None,
              settings: Sequence[str] = ()) -> None:
        """Start the server of bindir (default: the base) with the
        settings in variant.conf; label names the start in messages."""
        bindir = bindir or self.bindir
        self._variant_conf(settings)
        try:
            with open(self.log, errors="replace") as f:
                before = len(f.read())
        except OSError:
            before = 0
        self.running = True
        rc = subprocess.call([os.path.join(bindir, "pg_ctl"), "-D",
                              self.data, "-l", self.log, "-w", "-t", "120",
                              "start"], stdout=subprocess.DEVNULL,
                             stdin=subprocess.DEVNULL)
        if rc != 0:
            with open(self.log, errors="replace") as f:
                show_log(self.log, text=f.read()[before:])
            raise StepError("server start (%s) failed; see %s"
                            % (label, self.log))

    def reload(self, label: str, conn, settings: Sequence[str]):
        """Put settings in variant.conf and reload the running server
        through conn (pg_reload_conf()); a new connection, made once the
        postmaster has reloaded: its pg_conf_load_time() is later than
        before the reload, so it runs with the new settings.  conn is
        closed.  label names the reload in messages."""
        self._variant_conf(settings)
        with conn.cursor() as cur:
            cur.execute("SELECT pg_conf_load_time()")
            before = cur.fetchone()[0]
            cur.execute("SELECT pg_reload_conf()")
        conn.close()
        deadline = time.monotonic() + RELOAD_TIMEOUT
        while True:
            new = self.connect()
            try:
                with new.cursor() as cur:
                    cur.execute("SELECT pg_conf_load_time() > %s",
                                (before,))
                    reloaded = cur.fetchone()[0]
            except BaseException:
                new.close()
                raise
            if reloaded:
                return new
            new.close()
            if time.monotonic() > deadline:
                raise StepError("reloading the configuration (%s) failed: "
                                "the server did not reload within %d s; "
                                "see %s" % (label, RELOAD_TIMEOUT, self.log))
            time.sleep(0.05)

    def stop(self) -> None:
        rc = subprocess.call([os.path.join(self.bindir, "pg_ctl"), "-D",
                              self.data, "-m", "fast", "-w", "stop"],
                             stdout=subprocess.DEVNULL)
        if rc != 0:
            raise StepError("server stop failed; see %s" % self.log)
        self.running = False

    def stop_immediate(self) -> bool:
        """Stop a server that may run, at once: its data is thrown away.
        Whether no server is left (pg_ctl status 3: not running, 4: no
        data directory)."""
        pg_ctl = os.path.join(self.bindir, "pg_ctl")
        subprocess.call([pg_ctl, "-D", self.data, "-m", "immediate", "-w",
                         "-t", "60", "stop"], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL)
        st = subprocess.call([pg_ctl, "-D", self.data, "status"],
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        if st in (3, 4):
            self.running = False
        return not self.running

    def connect(self):
        """A connection to the database postgres, in autocommit mode."""
        conn = psycopg2.connect(host=self.sock, port=self.port,
                                dbname="postgres")
        conn.autocommit = True
        return conn

    def check_binary(self, label: str, bindir: str) -> None:
        """That the running postmaster is bindir's postgres (where
        /proc/<pid>/exe can be read and the binary is not a script)."""
        at = "checking the server of %s" % label
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                pid = f.readline().strip()
        except OSError:
            raise StepError("%s failed: no postmaster.pid" % at)
        try:
            exe = os.path.realpath(os.readlink("/proc/%s/exe" % pid))
        except OSError:
            return
        binary = os.path.join(bindir, "postgres")
        with open(binary, "rb") as f:
            if f.read(4) != b"\x7fELF":
                return
        if exe != os.path.realpath(binary):
            raise StepError("%s failed: %s runs, not %s" % (at, exe, binary))


def check_settings(cur, label: str, variant: spec.Variant,
                   log: str) -> None:
    """That each setting of the variant is in force from variant.conf
    (a session may still override it: application_name), and its spin
    strategy the one pg_lockstat uses."""
    at = "checking the settings in force (%s)" % label
    for name, value in variant.settings:
        cur.execute("SELECT count(*) FROM pg_settings WHERE name = %s",
                    (name,))
        if cur.fetchone()[0] != 1:
            raise StepError("%s failed: the server has no setting %s (see %s)"
                            % (at, name, log))
        cur.execute("SELECT applied, coalesce(error, '') FROM "
                    "pg_file_settings WHERE name = %s AND sourcefile LIKE "
                    "'%%/variant.conf'", (name,))
        row = cur.fetchone()
        if not row or not row[0] or row[1]:
            why = " (%s)" % row[1] if row and row[1] else ""
            raise StepError("%s failed: %s = '%s' is not in force%s; see %s"
                            % (at, name, value, why, log))
    if variant.strategy:
        cur.execute("SELECT spin_strategy FROM pg_lockstat_status")
        inforce = cur.fetchone()[0]
        if inforce != variant.strategy:
            raise StepError("%s failed: strategy %s requested but %s in force"
                            % (at, variant.strategy, inforce))


def check_reset(cur, label: str, names: Sequence[str], log: str) -> None:
    """After a reload: that none of the settings names (those of the other
    variants of a shared server start) is still set from variant.conf."""
    at = "checking the settings in force (%s)" % label
    for name in names:
        cur.execute("SELECT coalesce(sourcefile, '') FROM pg_settings "
                    "WHERE name = %s", (name,))
        row = cur.fetchone()
        if row and row[0].endswith("/variant.conf"):
            raise StepError("%s failed: %s is still set from variant.conf "
                            "after the reload; see %s" % (at, name, log))


def settings_in_force(cur) -> List[str]:
    """The server's settings that are not defaults, as "name|setting|unit|
    source" lines (settings.txt)."""
    cur.execute("SELECT name, setting, unit, source FROM pg_settings WHERE "
                "source NOT IN ('default', 'override') ORDER BY name")
    return ["|".join("" if x is None else str(x) for x in row)
            for row in cur.fetchall()]
