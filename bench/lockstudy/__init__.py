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
    runner      the study: the lock, signals, rounds, pgbench runs, counter
                snapshots, progress, the saved files
    plan        the orders of the rounds, the estimate, the plan's text
    plots       gnuplot images of a finished study
    records     what a study writes: its directory, lock, recorded rows and
                metadata files
    cluster     the throwaway cluster: initdb, start, stop, settings in
                force, connections (psycopg2)
    builds      the variants' servers: patch check, scripts/build-server.sh
    spec        the study's parameters, VARIANTS and STRATEGIES, checked
    pgbench     pgbench's command lines and output
    sysbench    sysbench's command lines and output (the sysbench-*
                workloads)
    results     the whole report of a study directory, in order
    report      table (a) to the position table, points.csv, plot data
    report_locks  the lock side: (m), (b), (c), lock shares, as text
    locktables  what (b), (c) and the lock shares show, computed
    model       what the study found, one typed model (results.json)
    drift       the drift and position tables' numbers and ranges
    mechanism   lock counts per transaction, variant against baseline
    starts      which variants share a server start (SHARED_START=1), and
                the order of a round by groups
    design      the order of the variants and client counts of each round
    stats       pure statistics: intervals, verdicts, the collapse test
    tables      text tables
    data        runs.csv, locks.csv, spins.csv
"""
