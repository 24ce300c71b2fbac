"""lockstudy: the pgbench study of "make run", as one program.

A study compares variants of the server (a name, patch files applied after
the core series, server settings; a spin strategy is the setting
pg_lockstat.spin_strategy), the first the baseline, under pgbench (or
sysbench's oltp scripts) at a set of client counts, in interleaved rounds,
and reports the paired tps ratios with their intervals and verdicts, and
the lock counts that explain them.

The modules, each calling only those below it:
    __main__    the command line: run, report, compare, mechanism, order,
                clients
    results     a study directory into the model, results.json and the
                files drawn from it, the whole report, the end of a study
    plots       gnuplot images of a finished study, from its model
    runner      the study: the lock, rounds, pgbench runs, counter
                snapshots; records, then hands the directory over
    interrupts  the signals that stop a study
    progress    the estimate, what has run, the progress line
    plan        the orders of the rounds, the estimate, the plan's text
    records     what a study writes, every file: its directory, lock,
                recorded rows and metadata files
    cluster     the throwaway cluster: initdb, start, stop, settings in
                force, connections (psycopg2, whose errors it translates)
    builds      the variants' servers: patch check, scripts/build-server.sh
    params      the study's parameters from the environment, checked: the
                numbers, the servers, sysbench's tables
    variants    VARIANTS and STRATEGIES, checked
    workloads   WORKLOAD, checked: pgbench's, bench/workloads/, sysbench's
    spec        what the checked parameters become (Study, Variant,
                Workload), and SpecError
    pgbench     pgbench's command lines and output
    sysbench    sysbench's command lines and output (the sysbench-*
                workloads)
    report      table (a) to the position table: model, text, points.csv,
                plot data
    busiest     table (u), the busiest locks of each point and how each
                variant moved the baseline's: computed, text
    ceiling     make bench-ceiling's analysis: utilization and ceiling
                against a lock of known hold time
    report_locks  the lock side as text: (m), (b), (c), lock shares
    locktables  what (b), (c) and the lock shares show, computed
    mechanism   lock counts per transaction, variant against baseline
    starts      which variants share a server start (SHARED_START=1), and
                the order of a round by groups
    design      the order of the variants and client counts of each round
    drift       the drift and position tables' numbers and ranges
    stats       pure statistics: intervals, verdicts, the collapse test
    collapse    the split test on round-adjusted runs
    tables      text tables
    data        runs.csv, locks.csv, spins.csv
    model       what the study found, one typed model (results.json)
"""
