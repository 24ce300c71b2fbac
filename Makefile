# Makefile for pg_lockstat
#
# Two ways to use it:
#
#   make, make test, make run            (no PG_CONFIG given)
#       Fetches PostgreSQL $(PG_MAJOR) (default 18; 15 is the other major
#       with a patch series) with apt's source download, applies
#       patches/pg$(PG_MAJOR)/*.patch, builds the server once (cached outside
#       the checkout), copies it to build/pg$(PG_MAJOR)/ and installs
#       pg_lockstat into it.  CASSERT=1 adds --enable-cassert;
#       PG_SOURCE=<dir or tarball> uses another source of that major.
#       "make PG_MAJOR=15 <target>" works for every target below;
#       "make test-all" runs "make test" for each of $(PG_MAJORS).
#
#   make PG_CONFIG=/path/to/pg_config [install|installcheck|test]
#       Plain PGXS build against a server that already has the core patch.
#
# Tests ("make test") and "make run" start servers; when invoked as root
# they run as the unprivileged user pglockstat (created if needed).

EXTENSION = pg_lockstat
MODULE_big = pg_lockstat
OBJS = \
	$(WIN32RES) \
	extension/pg_lockstat.o \
	extension/lockstat_guc.o \
	extension/lockstat_lwlock.o \
	extension/lockstat_lwlock_sum.o \
	extension/lockstat_hist.o \
	extension/lockstat_rows.o \
	extension/lockstat_views.o \
	extension/lockstat_views_lwlock.o \
	extension/lockstat_views_query.o \
	extension/lockstat_views_spin.o \
	extension/lockstat_srf.o \
	extension/lockstat_spin.o \
	extension/lockstat_spin_sum.o \
	extension/lockstat_reset.o \
	extension/lockstat_query.o \
	extension/lockstat_query_slots.o \
	extension/lockstat_query_table.o \
	extension/lockstat_core.o \
	extension/lockstat_delay.o \
	extension/lockstat_util.o
# The install script is made from a template and the counter table
# (scripts/counters.pl, at the end of this file).
DATA_built = extension/pg_lockstat--1.0.sql
PGFILEDESC = "pg_lockstat - LWLock and spinlock contention statistics"

# pg_regress tests in sql/ and expected/.  They need pg_lockstat and the
# test module lockstat_test preloaded: "make test" runs them on a temporary
# instance with test/pg_lockstat.conf.  "make installcheck" runs them against
# a running server that preloads both.
REGRESS = setup views guc tranche_range counts reset backend_stats backend_type_stats permissions
REGRESS_OPTS = --temp-config=$(srcdir)/test/pg_lockstat.conf
# The TAP tests in t/ need the test module and, as root, an unprivileged
# user: "make test" runs them through scripts/run-tests.sh, not PGXS.
# PYTEST=0 leaves out the study harness's pytest tests (bench/tests), which
# test no server: .ci/run runs them once, in its run on 18, not per major.
PYTEST ?= 1

# The major to build for, and the majors that have a patch series.
PG_MAJOR ?= 18
PG_MAJORS ?= 18 15
export PG_MAJOR
BUILD_DIR := $(CURDIR)/build/pg$(PG_MAJOR)
PG_CONFIG_OWN := $(BUILD_DIR)/bin/pg_config

ifeq ($(origin PG_CONFIG),undefined)
# ------------------------------------------------------------------------
# Own patched server under build/pg$(PG_MAJOR)
# ------------------------------------------------------------------------
.DEFAULT_GOAL := all

.PHONY: all server server-stock server-lwlock-stats install installcheck test-module test test-plan test-all test-cassert \
	test-exec-backend test-asan test-disable-spinlocks test-arch run bench-cost bench-observer bench-ceiling check-series clean distclean

# Objects built against one server variant (CASSERT=1, EXTRA_CFLAGS) must
# not be linked for another: rebuild when the server's build key changes.
all: server
	@if ! cmp -s $(BUILD_DIR)/.pg_lockstat_build_key build/.extension_build_key; then \
		rm -f $(OBJS) $(MODULE_big).so test/lockstat_test/*.o test/lockstat_test/*.so \
			tools/pg_lockstat_top/*.o tools/pg_lockstat_top/pg_lockstat_top; \
		cp $(BUILD_DIR)/.pg_lockstat_build_key build/.extension_build_key; \
	fi
	$(MAKE) PG_CONFIG=$(PG_CONFIG_OWN) all install test-module

server:
	scripts/build-server.sh $(BUILD_DIR)

install installcheck test-module: server
	$(MAKE) PG_CONFIG=$(PG_CONFIG_OWN) $@

# An unpatched build of the same source (cached too), for the test that
# preloading pg_lockstat into a server without the core patch fails cleanly,
# for the studies with an unpatched variant and for instruction-cost
# comparisons.  Built with the base's CASSERT and EXTRA_CFLAGS, so that
# "make test-cassert" (and the others) compares like with like: the study
# refuses a stock server configured otherwise than the base.
server-stock:
	STOCK=1 scripts/build-server.sh $(BUILD_DIR)-stock

# "make test" ends with "make test-arch" for $(TEST_ARCHES): both
# architectures on the default major, none on another major or on a
# variant build (CASSERT, EXTRA_CFLAGS).  "make test TEST_ARCHES=" leaves
# them out.
TEST_ARCHES ?= $(if $(filter 18,$(PG_MAJOR)),$(if $(CASSERT)$(EXTRA_CFLAGS)$(EXTRA_CONFIGURE),,$(TEST_ARCH_LIST)))

# "make test" first prints its plan (scripts/test-plan.sh): the servers it
# uses, each cached or to build (build-server.sh --plan), the suites, and
# the times measured on a 2-CPU machine.  "make test-plan" prints it alone.
# A plan that cannot be made does not stop the tests.
test-plan:
	-@BUILD_DIR=$(BUILD_DIR) REGRESS="$(REGRESS)" PYTEST=$(PYTEST) \
		PROVE_TESTS="$(PROVE_TESTS)" TEST_ARCHES="$(strip $(TEST_ARCHES))" \
		ARCH_REGRESS="$(ARCH_REGRESS)" ARCH_TESTS="$(ARCH_TESTS)" \
		ARCH_PARALLEL=$(ARCH_PARALLEL) \
		UPGRADE_FROM_PG_CONFIG="$(UPGRADE_FROM_PG_CONFIG)" scripts/test-plan.sh

test: test-plan all server-stock
	$(MAKE) PG_CONFIG=$(PG_CONFIG_OWN) \
		STOCK_PG_CONFIG=$(BUILD_DIR)-stock/bin/pg_config test
	$(if $(strip $(TEST_ARCHES)),$(MAKE) test-arch ARCH="$(strip $(TEST_ARCHES))" ARCH_SKIP_MISSING=1)

# "make test" for every major with a patch series (each major's servers are
# built and cached the first time), oldest first; the newest one also tests
# pg_upgrade into it from the next older major (t/032), with the server that
# that major's run installed pg_lockstat into.
test-all:
	@set -e; majors=$$(printf '%s\n' $(PG_MAJORS) | sort -n); \
	newest=$$(printf '%s\n' $$majors | tail -n 1); \
	previous=$$(printf '%s\n' $$majors | tail -n 2 | head -n 1); \
	for major in $$majors; do \
		if [ $$major = $$newest ] && [ $$previous != $$newest ]; then \
			echo "==== make PG_MAJOR=$$major test (with pg_upgrade from $$previous)"; \
			$(MAKE) PG_MAJOR=$$major \
				UPGRADE_FROM_PG_CONFIG=$(CURDIR)/build/pg$$previous/bin/pg_config test; \
		else \
			echo "==== make PG_MAJOR=$$major test"; \
			$(MAKE) PG_MAJOR=$$major test; \
		fi; \
	done

# The other architectures of the pgsql-hackers TAS_SPIN threads and of
# today's many-core servers: "make test-arch ARCH=ppc64le" (or
# aarch64; without ARCH both) cross-builds the patched server (cached, keyed
# by architecture), pg_lockstat, pg_lockstat_top and lockstat_test for it,
# and runs the tests below against that server under qemu-user, with this
# machine's initdb, pg_ctl, psql, pgbench and pg_regress
# (scripts/test-arch.sh, scripts/arch-wrap.sh).  Emulation proves
# behaviour and exact counts, never speed.
ARCHES := ppc64le aarch64
ARCH_REGRESS := $(REGRESS)
# Under emulation: the counts under contention per strategy (t/060), the
# strategies, concurrency, crash restart, reset, exactness, process kinds
# with a standby, pg_lockstat_top, the spin limits and backoff, spinlock
# call sites, whole spin waits, PostgreSQL's own core regression suite and
# the series' test module.
# The isolation suite passes under emulation too, but takes about 4
# minutes per architecture: ARCH_TESTS="$(ARCH_TESTS) t/033_core_isolation.pl"
# adds it.
ARCH_TESTS := t/060_contention_counts.pl t/001_strategies.pl t/002_concurrency.pl \
	t/004_crash.pl t/006_reset.pl t/007_exactness.pl t/009_process_kinds.pl \
	t/013_top.pl t/016_spin_tunables.pl t/019_spinlock_stats.pl \
	t/020_spin_wait_whole.pl t/031_core_regress.pl t/034_core_test_module.pl
# ARCH counts only when given on the command line (not an ARCH of the
# environment, common in build images); every architecture runs, and the
# target fails at the end if one failed.
TEST_ARCH_LIST = $(if $(filter command line,$(origin ARCH)),$(ARCH),$(ARCHES))
.PHONY: test-arch-args
test-arch-args:
	@if [ "$(PG_MAJOR)" != 18 ]; then \
		echo "test-arch runs on the default major, 18 (PG_MAJOR=$(PG_MAJOR) is not tested under emulation)" >&2; \
		exit 2; \
	fi; \
	for arch in $(TEST_ARCH_LIST); do \
		case " $(ARCHES) " in *" $$arch "*) ;; \
		*) echo "ARCH can be: $(ARCHES)" >&2; exit 2 ;; esac; \
	done

# test-arch-args first: a wrong ARCH or PG_MAJOR fails before any build.
# The architectures run at the same time (ARCH_PARALLEL=0: one after the
# other, with their output as it comes): on this 2-CPU machine both at once
# took 667 s, one after the other 916 s.  Their packages are installed
# first, in one apt-get, so that two installs never race for dpkg's lock;
# each one's output goes to build/test-arch-<arch>.log and is printed when
# all have ended.
ARCH_PARALLEL ?= 1
TEST_ARCH_ONE = PG_CONFIG=$(PG_CONFIG_OWN) ARCH_REGRESS="$(ARCH_REGRESS)" \
	ARCH_TESTS="$(ARCH_TESTS)" ARCH_SKIP_MISSING=$(ARCH_SKIP_MISSING) \
	scripts/test-arch.sh
test-arch: test-arch-args all
	@failed=; \
	if [ "$(ARCH_PARALLEL)" = 1 ]; then \
		DEPS_EXTRA="$$(for arch in $(TEST_ARCH_LIST); do scripts/arch-wrap.sh --packages $$arch; done)" \
			scripts/deps.sh >/dev/null 2>&1 || true; \
		for arch in $(TEST_ARCH_LIST); do \
			echo "==== make test-arch ARCH=$$arch: started (output in build/test-arch-$$arch.log)"; \
			rm -f build/test-arch-$$arch.status; \
			( $(TEST_ARCH_ONE) $$arch >build/test-arch-$$arch.log 2>&1; \
			  echo $$? >build/test-arch-$$arch.status ) & \
		done; \
		wait; \
		for arch in $(TEST_ARCH_LIST); do \
			echo "==== make test-arch ARCH=$$arch"; \
			cat build/test-arch-$$arch.log; \
			[ "$$(cat build/test-arch-$$arch.status 2>/dev/null)" = 0 ] || failed="$$failed $$arch"; \
		done; \
	else \
		for arch in $(TEST_ARCH_LIST); do \
			echo "==== make test-arch ARCH=$$arch"; \
			$(TEST_ARCH_ONE) $$arch || failed="$$failed $$arch"; \
		done; \
	fi; \
	if [ -n "$$failed" ]; then echo "test-arch: FAILED for$$failed" >&2; exit 1; fi

# Memory-safety variants, each a server build of its own and an unpatched
# one beside it (both cached; see server-stock): the whole
# suite on an --enable-cassert build, and on an EXEC_BACKEND build, where
# every child process re-executes the server and must re-attach shared
# memory and re-read the GUCs.  Not part of "make test".
test-cassert:
	$(MAKE) CASSERT=1 test

test-exec-backend:
	$(MAKE) EXTRA_CFLAGS=-DEXEC_BACKEND test

# AddressSanitizer: out-of-bounds and use-after-free in the server, the
# extension and the test module.  PostgreSQL frees memory contexts, not
# chunks, at exit, so leak detection is off.
test-asan:
	ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
	$(MAKE) EXTRA_CFLAGS="-fsanitize=address -fno-omit-frame-pointer" test

# PostgreSQL 15 configured with --disable-spinlocks, where spinlocks are
# semaphores with no lock word to test (Debian still builds 15 so on alpha):
# the series' test module, whose S_LOCK() runs under every strategy, and the
# strategy tests of pg_lockstat, which must fall back to TAS() there rather
# than raise an error inside SpinLockAcquire().  A server build of its own
# (cached); not part of "make test".
DISABLE_SPINLOCKS_TESTS = t/034_core_test_module.pl t/001_strategies.pl
test-disable-spinlocks:
	$(MAKE) PG_MAJOR=15 EXTRA_CONFIGURE=--disable-spinlocks all
	$(MAKE) PG_MAJOR=15 EXTRA_CONFIGURE=--disable-spinlocks \
		PG_CONFIG=$(CURDIR)/build/pg15/bin/pg_config REGRESS=none \
		PROVE_TESTS="$(DISABLE_SPINLOCKS_TESTS)" test

# An unpatched build with -DLWLOCK_STATS, the compile-time statistics that
# pg_lockstat replaces, for the cost comparison.
server-lwlock-stats:
	CASSERT= EXTRA_CFLAGS=-DLWLOCK_STATS STOCK=1 \
		scripts/build-server.sh $(BUILD_DIR)-lwlock-stats

bench-cost: all server-stock server-lwlock-stats
	$(MAKE) PG_CONFIG=$(PG_CONFIG_OWN) \
		STOCK_PG_CONFIG=$(BUILD_DIR)-stock/bin/pg_config \
		LWLOCK_STATS_PG_CONFIG=$(BUILD_DIR)-lwlock-stats/bin/pg_config \
		bench-cost

# throughput with pg_lockstat.track on and off on one contended lock, in
# ABBA pairs within one server start (bench/observer.sh)
bench-observer: all
	$(MAKE) PG_CONFIG=$(PG_CONFIG_OWN) bench-observer

# utilization and the ceiling against a lock of known hold time
# (bench/ceiling.sh)
bench-ceiling: all
	$(MAKE) PG_CONFIG=$(PG_CONFIG_OWN) bench-ceiling

# A study with an unpatched variant ("name: unpatched" in VARIANTS) runs
# the stock build of the same source beside the base: built first (cached),
# with the base's CASSERT and EXTRA_CFLAGS, unless STOCK_PG_CONFIG names
# another.
RUN_STOCK = $(if $(STOCK_PG_CONFIG),,$(filter unpatched,$(subst :, ,$(subst ;, ,$(VARIANTS)))))

run: all
	$(if $(RUN_STOCK),$(MAKE) server-stock)
	$(MAKE) PG_CONFIG=$(PG_CONFIG_OWN) \
		STOCK_PG_CONFIG=$(or $(STOCK_PG_CONFIG),$(BUILD_DIR)-stock/bin/pg_config) run

# Every prefix of the core patch series applies with git am and builds
# (about 15 minutes per major; not part of "make test").
check-series:
	scripts/check-series.sh

clean:
	rm -f $(OBJS) $(MODULE_big).so extension/*.bc $(COUNTERS_MADE)
	rm -rf results regression.diffs regression.out tmp_check log build/test build/test-* \
		$(foreach a,$(ARCHES),build/pg*-$(a)-ext*)
	rm -f tools/pg_lockstat_top/*.o tools/pg_lockstat_top/pg_lockstat_top
	rm -f test/lockstat_test/*.o test/lockstat_test/*.so test/lockstat_test/*.bc

distclean: clean
	rm -rf build

else
# ------------------------------------------------------------------------
# Plain PGXS
# ------------------------------------------------------------------------
# "clean" removes the Prometheus query file, made from the counter table,
# with the install script (DATA_built); pgxs.mk reads EXTRA_CLEAN when it is
# included
EXTRA_CLEAN = integrations/prometheus/pg_lockstat.yaml
PGXS := $(shell $(PG_CONFIG) --pgxs)
ifeq ($(PGXS),)
$(error cannot run "$(PG_CONFIG) --pgxs": set PG_CONFIG to the pg_config of a PostgreSQL server built with its series from patches/)
endif
include $(PGXS)

# PGXS tracks no header dependencies unless the server was configured with
# --enable-depend: rebuild every object when a shared header changes, so
# that no object keeps an old struct layout.  The internal headers of the
# per-query, LWLock and spin-wait modules too: their objects are few, and a
# list per header would be one more thing to keep in step.
$(filter-out $(WIN32RES),$(OBJS)): extension/lockstat.h extension/lockstat_compat.h extension/lockstat_counters.h \
	extension/lockstat_srf.h extension/lockstat_lwlock_internal.h extension/lockstat_query_internal.h \
	extension/lockstat_spin_internal.h

.PHONY: test test-module run bench-cost bench-observer bench-ceiling

# "all" makes the Prometheus query file too (its rule is at the end of
# this file)
all: integrations/prometheus/pg_lockstat.yaml

# The client pg_lockstat_top has a Makefile of its own (PGXS takes PROGRAM
# and MODULE_big from the same OBJS); it is built by "all" and installed
# into the server's bindir by "install".  A PG_CONFIG path is made absolute
# for the sub-make.
TOOL_MAKE = $(MAKE) -C tools/pg_lockstat_top \
	PG_CONFIG=$(if $(findstring /,$(PG_CONFIG)),$(abspath $(PG_CONFIG)),$(PG_CONFIG))
.PHONY: pg_lockstat_top install-pg_lockstat_top uninstall-pg_lockstat_top \
	clean-pg_lockstat_top
all: pg_lockstat_top
install: install-pg_lockstat_top
uninstall: uninstall-pg_lockstat_top
clean: clean-pg_lockstat_top
pg_lockstat_top:
	$(TOOL_MAKE) all
install-pg_lockstat_top:
	$(TOOL_MAKE) install
uninstall-pg_lockstat_top:
	$(TOOL_MAKE) uninstall
clean-pg_lockstat_top:
	$(TOOL_MAKE) clean

# "clean" cleans the test module too, which "test-module" builds
clean: clean-test-module
.PHONY: clean-test-module
clean-test-module:
	$(MAKE) -C test/lockstat_test PG_CONFIG=$(PG_CONFIG) clean

# The test-only module, installed into the server that the tests use.
test-module:
	$(MAKE) -C test/lockstat_test PG_CONFIG=$(PG_CONFIG) all install

test: all install test-module
	PG_CONFIG=$(PG_CONFIG) STOCK_PG_CONFIG=$(STOCK_PG_CONFIG) \
	UPGRADE_FROM_PG_CONFIG=$(UPGRADE_FROM_PG_CONFIG) PYTEST=$(PYTEST) \
	REGRESS="$(REGRESS)" scripts/run-tests.sh

# instructions per LWLock acquisition, with valgrind --tool=callgrind
bench-cost: all install
	PG_CONFIG=$(PG_CONFIG) STOCK_PG_CONFIG=$(STOCK_PG_CONFIG) \
	LWLOCK_STATS_PG_CONFIG=$(LWLOCK_STATS_PG_CONFIG) \
	bench/callgrind-cost.sh

# throughput with counting on and off on one contended lock
bench-observer: all install test-module
	PG_CONFIG=$(PG_CONFIG) WORKLOAD="$(OBSERVER_WORKLOAD)" \
	CLIENTS="$(OBSERVER_CLIENTS)" PAIRS="$(OBSERVER_PAIRS)" bench/observer.sh

# utilization and ceiling against a lock of known hold time; the
# benchmark's own variables (HOLD_US, THINK_MS, CEILING_CLIENTS as its
# CLIENTS, ROUNDS, RUN_SECONDS, DELAY_US, DELAY_MODE) pass through the environment
bench-ceiling: all install test-module
	PG_CONFIG=$(PG_CONFIG) $(if $(CEILING_CLIENTS),CLIENTS="$(CEILING_CLIENTS)") bench/ceiling.sh

# the study: the Python package bench/lockstudy, run by Debian's python3
# (numpy, scipy, psycopg2), its parameters from the make variables
# (STOCK_PG_CONFIG, for an unpatched variant, defaults to the stock build
# beside PG_CONFIG's: <build>-stock/bin/pg_config)
run: all install
	@PG_CONFIG=$(PG_CONFIG) STOCK_PG_CONFIG="$(STOCK_PG_CONFIG)" \
	SCALE="$(SCALE)" STRATEGIES="$(STRATEGIES)" VARIANTS="$(VARIANTS)" CLIENTS="$(CLIENTS)" \
	DURATION="$(DURATION)" WARMUP="$(WARMUP)" WARMUP_ROUND="$(WARMUP_ROUND)" \
	SHARED_START="$(SHARED_START)" AA="$(AA)" WORKLOAD="$(WORKLOAD)" THREADS="$(THREADS)" \
	SENSITIVITY="$(SENSITIVITY)" DELAY_US="$(DELAY_US)" \
	SYSBENCH_TABLES="$(SYSBENCH_TABLES)" SYSBENCH_TABLE_SIZE="$(SYSBENCH_TABLE_SIZE)" \
	REPEAT="$(REPEAT)" SEED="$(SEED)" THRESHOLD="$(THRESHOLD)" \
	PYTHONPATH="$(CURDIR)/bench" /usr/bin/python3 -m lockstudy run
endif

# ------------------------------------------------------------------------
# Made from the counter table, in both modes
# ------------------------------------------------------------------------
# The attributes of pg_lwlock_counters, the counter columns of
# pg_spinlock_stats() and their descriptions in the install script, and the
# counters' metrics in the Prometheus query file, are written from
# extension/lockstat_counters.h into their templates by scripts/counters.pl,
# which reads the table with the C preprocessor: PGXS's $(CPP), or make's
# "$(CC) -E" without PG_CONFIG (doc/layout.md, "Adding a counter").
PERL ?= perl
COUNTERS_MADE = extension/pg_lockstat--1.0.sql integrations/prometheus/pg_lockstat.yaml
COUNTERS_PL = $(PERL) scripts/counters.pl --cpp '$(CPP)' --header extension/lockstat_counters.h

extension/pg_lockstat--1.0.sql: extension/pg_lockstat--1.0.sql.in extension/lockstat_counters.h scripts/counters.pl
	$(COUNTERS_PL) sql $< >$@.tmp
	mv $@.tmp $@

integrations/prometheus/pg_lockstat.yaml: integrations/prometheus/pg_lockstat.yaml.in extension/lockstat_counters.h scripts/counters.pl
	$(COUNTERS_PL) prometheus $< >$@.tmp
	mv $@.tmp $@
