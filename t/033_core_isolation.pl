# Copyright (c) 2026, pg_lockstat developers
#
# PostgreSQL's own isolation suite, from the source tree that the server
# under test was built from, against that server with pg_lockstat
# preloaded, pg_lockstat.track = on and a spin strategy other than the
# default (ttas_backoff): the core patch and the extension must change no
# result of the server's own concurrency tests, and pg_lockstat counts
# meanwhile.  It passes under emulation too, but is not in make test-arch
# by default (about 4 minutes per architecture; see the Makefile's
# ARCH_TESTS).  See LockStatTest::run_core_suite(); the core regression
# suite is t/031.

use strict;
use warnings FATAL => 'all';

use Test::More;

use LockStatTest;

LockStatTest::run_core_suite('isolation', 1_000_000);

done_testing();
