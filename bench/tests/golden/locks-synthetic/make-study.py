#!/usr/bin/python3
"""Writes locks.csv and spins.csv of a synthetic study (seeded: the same
files every time) for the golden test of tables (b), (c) and the lock
shares, made to reach the corners of the SQL that printed them: a tranche
with a blank in its name, tranches at some client counts only, more than
10 tranches and more than 5 at the top, shares that end in a 5 at the
third decimal, float8 sums whose 15 digits round otherwise than their
binary value would, hold times without samples, counts whose sums pass
2^53, NULL TAS attempts beside non-NULL ones, and a variant without
contended spin waits at the highest client count.  Columns as the study
writes them, the first named variant.
"""

import csv
import random

VARIANTS = ("base", "exp", "calm")
CLIENTS = (2, 16)
ROUNDS = 4
TRANCHES = ("BufferMapping", "LockManager", "ProcArray", "WALInsert",
            "XidGen", "CLogControl", "SInvalWrite", "buffer content",
            "Autovacuum", "CommitTs", "MultiXactGen", "OidGen")
LOCK_HEADER = ["variant", "clients", "round", "tranche_id", "tranche",
               "sh_acquires", "ex_acquires", "blocks", "spin_delays",
               "dequeue_self", "wait_time", "sh_hold_samples",
               "ex_hold_samples", "sh_hold_time", "ex_hold_time",
               "max_wait_time", "max_ex_hold_time", "max_sh_hold_time",
               "blk_pct", "spin_delay_pct"]
SPIN_HEADER = ["variant", "clients", "round", "file", "line", "func",
               "contended", "spins", "delays", "wait_time", "tas_attempts",
               "unlocked_skips", "max_wait_time"]
SITES = (("lwlock.c", "1145", "LWLockWaitListLock"),
         ("bufmgr.c", "6282", "LockBufHdr"),
         ("bufmgr.c", "6310", "WaitBufHdrUnlocked"),
         ("dynahash.c", "1050", "hash_search_with_hash_value"),
         ("s_lock.c", "42", "SpinWait"))


def lock_row(rng, v, c, r, i, name):
    """One row of locks.csv; some fields fixed to reach a corner."""
    if name == "OidGen" and c == 16:
        return None  # only at 2 clients
    blocks = rng.choice((0, 0, 1, 3, 7, 40)) * (i % 4)
    spins = rng.choice((0, 0, 0, 2, 5))
    sh = rng.randrange(0, 50000)
    if name == "BufferMapping":
        sh = 9 * 10 ** 15 + rng.randrange(1000)  # sums past 2^53
    if v == "exp" and c == 16:
        # of 800 blocks and 800 spin delays a round: shares of 0.125%,
        # 0.875%, 0.375%, which round half away from zero
        blocks, spins = {"BufferMapping": (1, 3), "LockManager": (7, 1),
                         "ProcArray": (792, 796)}.get(name, (0, 0))
    samples = 0 if name in ("XidGen", "OidGen") else rng.randrange(0, 300)
    wait = rng.choice((0.05, 0.1, 0.25, 0.35, 0.15, 1e-5, 2.675))
    hold = rng.choice((0.001, 0.0125, 0.1, 0.35)) * samples
    mx = rng.choice((0.0, 0.00025, 0.0035, 0.35))
    return [v, c, r, 100 + i, name, sh, rng.randrange(0, 9000), blocks,
            spins, 0, repr(wait), samples // 2, samples - samples // 2,
            repr(hold / 2), repr(hold / 2), repr(wait), repr(mx),
            repr(mx / 2), "", ""]


def spin_row(rng, v, c, r, site):
    """One row of spins.csv; calm has no contended waits at 16 clients."""
    contended = 0 if v == "calm" and c == 16 else rng.randrange(0, 9)
    tas = "" if site[2] in ("LockBufHdr", "WaitBufHdrUnlocked") or \
        (site[2] == "SpinWait" and r % 2) else rng.randrange(0, 50)
    skips = "" if tas == "" else rng.randrange(0, 20)
    return [v, c, r] + list(site) + [contended, contended * rng.randrange(
        1, 30), rng.randrange(0, 3), repr(rng.choice((0.0, 0.05, 0.25))),
        tas, skips, repr(0.001)]


def main():
    rng = random.Random(20261203)
    with open("locks.csv", "w", newline="") as lf, \
            open("spins.csv", "w", newline="") as sf:
        locks, spins = csv.writer(lf), csv.writer(sf)
        locks.writerow(LOCK_HEADER)
        spins.writerow(SPIN_HEADER)
        for v in VARIANTS:
            for c in CLIENTS:
                for r in range(1, ROUNDS + 1):
                    for i, name in enumerate(TRANCHES):
                        row = lock_row(rng, v, c, r, i, name)
                        if row:
                            locks.writerow(row)
                    for site in SITES:
                        spins.writerow(spin_row(rng, v, c, r, site))


if __name__ == "__main__":
    main()
