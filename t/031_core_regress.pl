# Copyright (c) 2026, pg_lockstat developers
#
# PostgreSQL's own core regression suite (parallel schedule), from the
# source tree that the server under test was built from, against that
# server with pg_lockstat preloaded, pg_lockstat.track = on and a spin
# strategy other than the default (ttas_backoff), every LWLock hold timed
# (pg_lockstat.hold_sample_every = 1): the core patch and the
# extension must change no result of the server's own tests, and
# pg_lockstat counts meanwhile.  It runs under emulation too (make
# test-arch).  See LockStatTest::run_core_suite(); the isolation suite is
# t/033.

use strict;
use warnings FATAL => 'all';

use Test::More;

use LockStatTest;

LockStatTest::run_core_suite('regress', 1_000_000, 1);

done_testing();
