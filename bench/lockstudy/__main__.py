"""The command line of the study: python3 -m lockstudy <command>.

  run        the study that the environment describes (what make run runs)
  report     the whole report of a finished study, from its directory
  compare    table (a) and the tps tables, from a runs.csv alone
  mechanism  table (m), from runs.csv, locks.csv and spins.csv
  resolution what a number of rounds resolves at a ratio noise (the table
             of doc/study.md)
  pool       studies of one comparison combined by a random-effects
             meta-analysis
  order      the variant order of each round that a seed gives
  clients    the client order of each round that a seed gives

Started as root, "run" makes the builds as root (root's cache), then runs
the rest as the unprivileged user pglockstat: scripts/as-user.sh execs
this program again with --builds, the file where the first pass left the
builds.  Exit status: 0; 1 on a refused parameter or a failed step; 130,
143, 129 when interrupted by SIGINT, SIGTERM, SIGHUP.

"run" chains run -> analyse -> render: the runner records the study and
hands its directory to results.show_study; "report DIR" is analyse ->
render on the saved files (results.json written again).

Calls runner, results, report, report_locks, builds, params, spec, design,
data, interrupts, stats, pool.
"""

import argparse
import os
import signal
import sys
from typing import List, Optional

TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
NEEDS = ("the study needs /usr/bin/python3 with numpy, scipy and psycopg2 "
         "(apt-get install python3-scipy python3-psycopg2; scripts/deps.sh "
         "installs them)")

try:
    from . import (builds, data, design, interrupts, params, pool, report,
                   report_locks, results, runner, spec, stats)
except ModuleNotFoundError as e:
    if (e.name or "").split(".")[0] not in ("numpy", "scipy", "psycopg2"):
        raise
    print("lockstudy: error: %s: %s" % (NEEDS, e), file=sys.stderr)
    sys.exit(1)


def error(text: object) -> int:
    print("%s: error: %s" % (spec.ME, text), file=sys.stderr)
    return 1


def before_study(signum: int, frame) -> None:
    name, status = interrupts.SIGNALS[signum]
    print("%s: interrupted by SIG%s before the study; stopping"
          % (spec.ME, name), file=sys.stderr)
    sys.exit(status)


def as_user(study: "spec.Study", variant_builds: list) -> int:
    """Run the rest as the unprivileged user: save the builds where the
    second pass reads them, and exec it through scripts/as-user.sh."""
    os.makedirs(study.run_dir, exist_ok=True)
    path = os.path.join(study.run_dir, ".builds-%d.json" % os.getpid())
    builds.save(variant_builds, path)
    env = dict(os.environ, AS_USER_WRITABLE=study.run_dir,
               RUN_DIR=study.run_dir,
               PYTHONPATH=os.path.join(TOP, "bench"))
    cmd = [os.path.join(TOP, "scripts", "as-user.sh"), sys.executable, "-m",
           "lockstudy", "run", "--builds", path]
    os.execve(cmd[0], cmd, env)
    return 1


def cmd_run(a: argparse.Namespace) -> int:
    caller_pwd = os.getcwd()
    os.chdir(TOP)
    for s in interrupts.SIGNALS:
        signal.signal(s, before_study)
    try:
        study = params.from_environment(os.environ, TOP, caller_pwd,
                                        check_patches=a.builds is None)
        if a.builds is not None:
            variant_builds = builds.load(a.builds, len(study.variants))
            os.remove(a.builds)
        else:
            variant_builds = builds.build_all(study, TOP)
    except (spec.SpecError, builds.BuildError) as e:
        return error(e)
    if os.geteuid() == 0:
        return as_user(study, variant_builds)
    # the runner records; its presentation, given here, analyses the
    # study's files and reports and plots them
    nproc = os.cpu_count() or 1
    return runner.run(study, TOP, variant_builds, sys.stdout,
                      lambda rundir: results.show_study(
                          rundir, study, nproc, sys.stdout)).status


def cmd_report(a: argparse.Namespace) -> int:
    results.print_report(a.directory,
                         a.variants.split() if a.variants else None,
                         a.threshold, sys.stdout)
    return 0


def cmd_compare(a: argparse.Namespace) -> int:
    r = report.tps_report(data.read_runs(a.runs),
                          a.variants.split() if a.variants else None,
                          a.threshold, a.confidence, a.correction,
                          source=a.runs, family=a.family,
                          shared=[g.split() for g in (a.shared or "").
                                  split(";") if g.split()])
    sys.stdout.write(r.text)
    if a.points:
        report.write_points(r.points, a.points)
    if a.dat_dir:
        report.write_dat(r.points, r.variants, a.dat_dir)
    return 0


def cmd_resolution(a: argparse.Namespace) -> int:
    level = 1 - (1 - a.confidence) / a.comparisons
    threshold = a.threshold / 100
    sys.stdout.write(report.resolution_text(stats.resolution(
        [positive(n) for n in a.rounds.split()],
        [float(s) / 100 for s in a.noise.split()], threshold, level),
        threshold, level))
    return 0


def cmd_pool(a: argparse.Namespace) -> int:
    sys.stdout.write(pool.pool_text(pool.pool(
        a.studies, a.variants.split() if a.variants else None, a.clients,
        a.confidence)))
    return 0


def cmd_mechanism(a: argparse.Namespace) -> int:
    text, points = report_locks.mechanism_report(
        data.read_runs(a.runs, need_transactions=True), a.locks, a.spins,
        a.variants.split() if a.variants else None, a.confidence, a.top,
        os.path.basename(a.csv) if a.csv else None, runs_path=a.runs,
        unpatched=a.unpatched.split() if a.unpatched else (),
        kinds_path=a.kinds, spin_kinds_path=a.spin_kinds)
    sys.stdout.write(text)
    if a.csv:
        report_locks.write_mechanism(points, a.csv)
    return 0


def cmd_order(a: argparse.Namespace) -> int:
    rows, warning = design.variant_order(a.seed, a.rounds, a.variants)
    for row in rows:
        print(" ".join(row))
    if warning:
        print("%s: warning: %s" % (spec.ME, warning), file=sys.stderr)
    return 0


def cmd_clients(a: argparse.Namespace) -> int:
    for row in design.client_order(a.seed, a.rounds, a.clients):
        print(" ".join(map(str, row)))
    return 0


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError("not a positive integer: %s" % text)
    return int(text)


def non_negative(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError("not a non-negative integer: %s"
                                         % text)
    return int(text)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=spec.ME,
                                 description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("run", help="the study of the environment (make run)")
    p.add_argument("--builds", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_run)
    p = sub.add_parser("report", help="the report of a study directory")
    p.add_argument("directory")
    p.add_argument("--variants", help="report order, the first the baseline")
    p.add_argument("--threshold", type=float, default=2.0)
    p.set_defaults(func=cmd_report)
    p = sub.add_parser("compare", help="the tps tables of a runs.csv")
    p.add_argument("runs")
    p.add_argument("--variants", help="report order, the first the baseline")
    p.add_argument("--threshold", type=float, default=2.0,
                   help="verdict threshold in percent (2)")
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--correction", choices=("bonferroni", "none"),
                   default="bonferroni")
    p.add_argument("--family", type=positive,
                   help="the comparisons of the family these runs belong "
                   "to, for the Bonferroni correction (default: their own)")
    p.add_argument("--shared", help="the variants that shared a server "
                   "start (SHARED_START=1), groups separated by ';': the "
                   "slot table")
    p.add_argument("--points", help="write the points as CSV")
    p.add_argument("--dat-dir", help="write the gnuplot data here")
    p.set_defaults(func=cmd_compare)
    p = sub.add_parser("resolution", help="what rounds resolve at a noise")
    p.add_argument("--rounds", default="12 24 48")
    p.add_argument("--noise", default="5 10 20",
                   help="ratio noise in percent")
    p.add_argument("--threshold", type=float, default=2.0)
    p.add_argument("--comparisons", type=positive, default=6,
                   help="the Bonferroni family (6: 3 variants, 3 client "
                   "counts)")
    p.add_argument("--confidence", type=float, default=0.95)
    p.set_defaults(func=cmd_resolution)
    p = sub.add_parser("mechanism", help="table (m) of a study's CSVs")
    for f in ("runs", "locks", "spins"):
        p.add_argument(f)
    p.add_argument("--variants", help="report order, the first the baseline")
    p.add_argument("--confidence", type=float, default=0.95)
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--csv", help="write every row as CSV")
    p.add_argument("--unpatched", help="the variants that ran the "
                   "unpatched server (no pg_lockstat): not available")
    p.add_argument("--kinds", help="the study's kinds.csv: LWLock rows "
                   "of client backends and parallel workers only")
    p.add_argument("--spin-kinds", help="the study's spinkinds.csv: "
                   "spin-wait rows of client backends and parallel workers "
                   "only")
    p.set_defaults(func=cmd_mechanism)
    _more_parsers(sub)
    return ap


def _more_parsers(sub) -> None:
    """The commands after mechanism: pool, order and clients."""
    p = sub.add_parser("pool", help="studies of one comparison combined "
                       "(random effects)")
    p.add_argument("studies", nargs="+", help="study directories, "
                   "runs.csv files, or published intervals "
                   "LABEL=RATIO:LOW:HIGH[@LEVEL]")
    p.add_argument("--variants", help="the baseline and the variant "
                   "(default: the first two of the first study)")
    p.add_argument("--clients", type=positive, help="the client count "
                   "(default: the one the studies have in common)")
    p.add_argument("--confidence", type=float, default=0.95)
    p.set_defaults(func=cmd_pool)
    p = sub.add_parser("order", help="the variant order of each round")
    p.add_argument("seed", type=non_negative)
    p.add_argument("rounds", type=positive)
    p.add_argument("variants", nargs="+")
    p.set_defaults(func=cmd_order)
    p = sub.add_parser("clients", help="the client order of each round")
    p.add_argument("seed", type=non_negative)
    p.add_argument("rounds", type=positive)
    p.add_argument("clients", nargs="+", type=positive)
    p.set_defaults(func=cmd_clients)


def main(argv: Optional[List[str]] = None) -> int:
    a = parser().parse_args(argv)
    try:
        return a.func(a)
    except data.InputError as e:
        return error(e)


if __name__ == "__main__":
    sys.exit(main())
