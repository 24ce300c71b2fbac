"""Tests of lockstudy.params: the study's parameters from the environment,
checked before anything starts.

Every refusal of the parameter checks of bench/run-study.sh (its lines
1-250) has a case in REFUSALS here, in test_variants.py or in
test_workloads.py, with the message the user reads; each is proved twice:
params.from_environment() raises SpecError with exactly that text, and
bench/run-study.sh itself, run on the same environment in a throwaway
copy of the checkout (fakesite.py, where it can go no further than its
checks), dies with "run-study: error: " and the same text.  ACCEPTED
lists environments that both accept (the bash script then stops at the
missing bench/study_stats.py of the copy).  Then what the accepted
parameters become: the defaults, empty values counting as unset, the
numbers, WARMUP_ROUND and SHARED_START, which the bash code did not
have, and STOCK_PG_CONFIG with its refusals (STOCK_REFUSALS).  No
server: the pg_config of these tests is a shell script printing a bindir
of fake programs.
"""

import os

import pytest

from fakesite import (PROGRAMS, VARIANTS, assert_bash_refused,
                      assert_refused, case_ids, fake_server, needs_bash,
                      write)
from lockstudy import params, spec



# (id, environment, message); {top}, {caller}, {bindir}, {pg_config} and
# {tmp} are the site's; the message is run-study.sh's after its
# "run-study: error: "
REFUSALS = [
    ("pg_config-unset", {"PG_CONFIG": None},
     "PG_CONFIG must point to the pg_config of the patched server"),
    ("pg_config-empty", {"PG_CONFIG": ""},
     "PG_CONFIG must point to the pg_config of the patched server"),
    ("pg_config-missing", {"PG_CONFIG": "{tmp}/nowhere/pg_config"},
     'PG_CONFIG="{tmp}/nowhere/pg_config" cannot be run; it must point to '
     'the pg_config of the patched server'),
    ("pg_config-fails", {"PG_CONFIG": "{tmp}/failing/pg_config"},
     'PG_CONFIG="{tmp}/failing/pg_config" cannot be run; it must point to '
     'the pg_config of the patched server'),
    ("pg_config-not-executable", {"PG_CONFIG": "{tmp}/noexec/pg_config"},
     'PG_CONFIG="{tmp}/noexec/pg_config" cannot be run; it must point to '
     'the pg_config of the patched server'),
    ("pg_config-directory", {"PG_CONFIG": "{tmp}"},
     'PG_CONFIG="{tmp}" cannot be run; it must point to the pg_config of '
     'the patched server'),
    ("psql-missing", {"PG_CONFIG": "{tmp}/nopsql/bin/pg_config"},
     'PG_CONFIG="{tmp}/nopsql/bin/pg_config": {tmp}/nopsql/bin/psql is '
     'missing'),
    ("pgbench-not-executable", {"PG_CONFIG": "{tmp}/noxbench/bin/pg_config"},
     'PG_CONFIG="{tmp}/noxbench/bin/pg_config": {tmp}/noxbench/bin/pgbench '
     'is missing'),
    ("scale-zero", {"SCALE": "0"},
     'SCALE must be a positive integer, not "0"'),
    ("scale-word", {"SCALE": "ten"},
     'SCALE must be a positive integer, not "ten"'),
    ("scale-negative", {"SCALE": "-1"},
     'SCALE must be a positive integer, not "-1"'),
    ("scale-leading-zero", {"SCALE": "010"},
     'SCALE must be a positive integer, not "010"'),
    ("scale-blank", {"SCALE": " 10"},
     'SCALE must be a positive integer, not " 10"'),
    ("repeat-zero", {"REPEAT": "0"},
     'REPEAT must be a positive integer, not "0"'),
    ("repeat-fraction", {"REPEAT": "1.5"},
     'REPEAT must be a positive integer, not "1.5"'),
    ("duration-zero", {"DURATION": "0"},
     'DURATION must be a positive integer (seconds), not "0"'),
    ("duration-unit", {"DURATION": "5s"},
     'DURATION must be a positive integer (seconds), not "5s"'),
    ("warmup-negative", {"WARMUP": "-1"},
     'WARMUP must be 0 or a positive integer (seconds), not "-1"'),
    ("warmup-double-zero", {"WARMUP": "00"},
     'WARMUP must be 0 or a positive integer (seconds), not "00"'),
    ("seed-negative", {"SEED": "-1"},
     'SEED must be a non-negative integer, not "-1"'),
    ("seed-leading-zero", {"SEED": "01"},
     'SEED must be a non-negative integer, not "01"'),
    ("seed-19-digits", {"SEED": "1234567890123456789"},
     'SEED must be a non-negative integer, not "1234567890123456789"'),
    ("threshold-100", {"THRESHOLD": "100"},
     'THRESHOLD must be a percentage from 0 to below 100, not "100"'),
    ("threshold-trailing-dot", {"THRESHOLD": "2."},
     'THRESHOLD must be a percentage from 0 to below 100, not "2."'),
    ("threshold-leading-dot", {"THRESHOLD": ".5"},
     'THRESHOLD must be a percentage from 0 to below 100, not ".5"'),
    ("threshold-percent-sign", {"THRESHOLD": "2%"},
     'THRESHOLD must be a percentage from 0 to below 100, not "2%"'),
    ("threshold-negative", {"THRESHOLD": "-2"},
     'THRESHOLD must be a percentage from 0 to below 100, not "-2"'),
    ("clients-zero", {"CLIENTS": "1 0 8"},
     'CLIENTS must be positive integers, not "0"'),
    ("clients-comma", {"CLIENTS": "1,8"},
     'CLIENTS must be positive integers, not "1,8"'),
    ("threads-zero", {"THREADS": "0"},
     'THREADS must be a positive integer, not "0"'),
    ("threads-word", {"THREADS": "all"},
     'THREADS must be a positive integer, not "all"'),
    ("strategies-and-variants",
     {"STRATEGIES": "tas", "VARIANTS": "a; b"},
     "give STRATEGIES or VARIANTS, not both (a strategy is the setting "
     "pg_lockstat.spin_strategy=<strategy> of a variant)"),
    ("blank-strategies-and-variants",
     {"STRATEGIES": " ", "VARIANTS": "a; b"},
     "give STRATEGIES or VARIANTS, not both (a strategy is the setting "
     "pg_lockstat.spin_strategy=<strategy> of a variant)"),
    # the checks come in the order of the bash code: the numbers, in the
    # order the user reads them, before PG_CONFIG runs; THREADS after it;
    # the variants before the workload
    ("order-scale-before-pg_config",
     {"SCALE": "x", "SEED": "y", "PG_CONFIG": "{tmp}/nowhere/pg_config"},
     'SCALE must be a positive integer, not "x"'),
    ("order-seed-before-clients", {"CLIENTS": "x", "SEED": "y"},
     'SEED must be a non-negative integer, not "y"'),
    ("order-threshold-before-clients", {"CLIENTS": "x", "THRESHOLD": "y"},
     'THRESHOLD must be a percentage from 0 to below 100, not "y"'),
    ("order-clients-before-pg_config",
     {"CLIENTS": "x", "PG_CONFIG": "{tmp}/nowhere/pg_config"},
     'CLIENTS must be positive integers, not "x"'),
    ("order-pg_config-before-threads",
     {"THREADS": "x", "PG_CONFIG": "{tmp}/nowhere/pg_config"},
     'PG_CONFIG="{tmp}/nowhere/pg_config" cannot be run; it must point to '
     'the pg_config of the patched server'),
    ("order-threads-before-variants", {"THREADS": "x", "VARIANTS": "A"},
     'THREADS must be a positive integer, not "x"'),
    ("order-variants-before-workload",
     {"VARIANTS": "a: port=1", "WORKLOAD": "nope"},
     "VARIANTS: variant a: port is set by the study itself (its clients "
     "connect through it)"),
]


@pytest.mark.parametrize("name, given, message", REFUSALS,
                         ids=case_ids(REFUSALS))
def test_refusal(site, name, given, message):
    assert_refused(site, given, message)


@needs_bash
@pytest.mark.parametrize("name, given, message", REFUSALS,
                         ids=case_ids(REFUSALS))
def test_refusal_is_the_bash_one(site, name, given, message):
    assert_bash_refused(site, given, message)


def test_blank_clients_refused(site):
    """CLIENTS of blanks only: "CLIENTS is empty".  (run-study.sh let it
    through to a study of no client count: its [ -n "$CLIENTS" ] saw the
    blanks; refusing is the intent of its message.)"""
    with pytest.raises(spec.SpecError) as e:
        site.study({"CLIENTS": "   "})
    assert str(e.value) == "CLIENTS is empty"


@needs_bash
def test_blank_clients_passed_the_bash_checks(site):
    rc, err = site.bash({"CLIENTS": "   "})
    assert (rc, err) == (1, "run-study: error: %s/bench/study_stats.py is "
                            "missing\n" % site.top)


def test_pg_config_printing_no_bindir(site):
    pg_config = os.path.join(site.tmp, "silent", "pg_config")
    with pytest.raises(spec.SpecError) as e:
        site.study({"PG_CONFIG": pg_config})
    assert str(e.value) == (
        'PG_CONFIG="%s" cannot be run; it must point to the pg_config of '
        'the patched server' % pg_config)


@pytest.mark.parametrize("prog", PROGRAMS)
def test_each_program_is_required(site, prog):
    os.remove(os.path.join(site.bindir, prog))
    with pytest.raises(spec.SpecError) as e:
        site.study({})
    assert str(e.value) == 'PG_CONFIG="%s": %s/%s is missing' % (
        site.pg_config, site.bindir, prog)


# make passes its unset variables empty
ALL_EMPTY = {k: "" for k in (
    "SCALE", "REPEAT", "DURATION", "WARMUP", "WARMUP_ROUND", "SEED",
    "THRESHOLD", "CLIENTS", "THREADS", "STRATEGIES", "VARIANTS", "WORKLOAD",
    "RUN_DIR", "VARIANT_DIR", "SYSBENCH_TABLES", "SYSBENCH_TABLE_SIZE")}
NUMBERS = {"SCALE": "1", "REPEAT": "3", "DURATION": "60", "WARMUP": "0",
           "WARMUP_ROUND": "0", "SEED": "0", "THRESHOLD": "0",
           "CLIENTS": " 4  16\t64 ", "THREADS": "2"}
# VARIANTS: three variants (fakesite.py)
# environments both accept
ACCEPTED = [
    ("defaults", {}),
    ("all-empty", ALL_EMPTY),
    ("numbers", NUMBERS),
    ("seed-18-digits", {"SEED": "123456789012345678"}),
    ("threshold-fraction", {"THRESHOLD": "99.99"}),
    ("strategies", {"STRATEGIES": "default ttas_backoff"}),
    ("variants", {"VARIANTS": VARIANTS}),
    ("variants-absolute", {"VARIANTS": "a: {caller}/real/r.patch"}),
    ("variants-through-link", {"VARIANTS": "a: lnk/r.patch"}),
    ("variant-name-31", {"VARIANTS": "a" * 31}),
    ("variant-setting-odd-name", {"VARIANTS": "a: _x.y_1=on"}),
    ("workload-script", {"WORKLOAD": "eviction"}),
    ("workload-builtin", {"WORKLOAD": "simple-update"}),
]


@pytest.mark.parametrize("name, given", ACCEPTED, ids=case_ids(ACCEPTED))
def test_accepted(site, name, given):
    assert isinstance(site.study(given), spec.Study)


@needs_bash
@pytest.mark.parametrize("name, given", ACCEPTED, ids=case_ids(ACCEPTED))
def test_accepted_by_bash(site, name, given):
    """run-study.sh passes its checks: it stops at the statistics script,
    which the throwaway checkout lacks."""
    rc, err = site.bash(given)
    assert (rc, err) == (1, "run-study: error: %s/bench/study_stats.py is "
                            "missing\n" % site.top)


def test_defaults(site):
    s = site.study({})
    assert (s.pg_config, s.bindir) == (site.pg_config, site.bindir)
    assert (s.scale, s.repeat, s.duration, s.warmup) == (10, 12, 5, 3)
    assert s.warmup_round is True
    assert s.threshold == "2"
    assert s.clients == (1, 8, 64) and s.max_clients == 64
    assert s.threads is None
    assert 0 <= s.seed < 1000000
    assert s.run_dir == os.path.join(site.top, "build", "run")
    assert s.variant_dir == os.path.join(site.top, "build", "variants")
    assert s.workload == spec.Workload("select-only",
                                       ("-S", "-M", "prepared"))
    assert s.names == ["tas", "ttas_spin", "ttas"]
    assert s.variants_given is None
    for v in s.variants:
        assert v.patches == ()
        assert v.settings == (("pg_lockstat.spin_strategy", v.name),)
        assert v.strategy == v.name
        assert v.settings_lines() == ["pg_lockstat.spin_strategy = '%s'"
                                      % v.name]


def test_empty_values_count_as_unset(site):
    """make passes its unset variables empty."""
    a, b = site.study(dict(ALL_EMPTY, SEED="7")), site.study({"SEED": "7"})
    assert a == b


def test_seed_is_drawn_when_unset(site):
    seeds = {site.study({}).seed for _ in range(20)}
    assert all(0 <= s < 1000000 for s in seeds)
    assert len(seeds) > 1


def test_numbers(site):
    s = site.study(NUMBERS)
    assert (s.scale, s.repeat, s.duration, s.warmup, s.seed) == (
        1, 3, 60, 0, 0)
    assert s.warmup_round is False
    assert s.threshold == "0"
    assert s.clients == (4, 16, 64) and s.max_clients == 64
    assert s.threads == 2
    assert site.study({"SEED": "123456789012345678"}).seed == \
        123456789012345678
    assert site.study({"THRESHOLD": "99.99"}).threshold == "99.99"


def test_run_dir_and_variant_dir(site):
    s = site.study({"RUN_DIR": "/x/runs", "VARIANT_DIR": "/y/builds"})
    assert (s.run_dir, s.variant_dir) == ("/x/runs", "/y/builds")


# --- WARMUP_ROUND, which the bash harness did not have -----------------------

@pytest.mark.parametrize("text, expected", [
    ("1", True), ("0", False), ("", True), (None, True)])
def test_warmup_round(site, text, expected):
    given = {} if text is None else {"WARMUP_ROUND": text}
    assert site.study(given).warmup_round is expected


@pytest.mark.parametrize("text", ["2", "yes", "on", "00", "01", "-1", " 1",
                                  "1.0", "true"])
def test_warmup_round_refused(site, text):
    with pytest.raises(spec.SpecError) as e:
        site.study({"WARMUP_ROUND": text})
    assert str(e.value) == ('WARMUP_ROUND must be 1 (a warm-up round before '
                            'the first) or 0 (none), not "%s"' % text)


def test_warmup_round_checked_after_warmup(site):
    """The numbers are checked in the order the user reads them."""
    with pytest.raises(spec.SpecError) as e:
        site.study({"WARMUP": "x", "WARMUP_ROUND": "x"})
    assert str(e.value).startswith("WARMUP must be ")
    with pytest.raises(spec.SpecError) as e:
        site.study({"WARMUP_ROUND": "x", "SEED": "x"})
    assert str(e.value).startswith("WARMUP_ROUND must be ")


# --- SHARED_START ------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("1", True), ("0", False), ("", False), (None, False)])
def test_shared_start(site, text, expected):
    given = {} if text is None else {"SHARED_START": text}
    study = site.study(given)
    assert study.shared_start is expected
    # the parameters name it only when it is set, at their end
    assert study.parameters().endswith(" SHARED_START=1") is expected
    assert ("SHARED_START" in study.parameters()) is expected


@pytest.mark.parametrize("text", ["2", "yes", "on", "01", " 1", "true"])
def test_shared_start_refused(site, text):
    with pytest.raises(spec.SpecError) as e:
        site.study({"SHARED_START": text})
    assert str(e.value) == ('SHARED_START must be 1 (variants that differ '
                            'only in settings a reload changes share a '
                            'server start) or 0 (a start per variant), not '
                            '"%s"' % text)


# --- AA (issue 52: the machine's floor) ------------------------------------

def test_aa(site):
    """AA=1 is VARIANTS="a; b": the base server twice, an A/A study,
    whose parameters end in AA=1; VARIANTS of one server with the same
    settings are one too."""
    study = site.study({"AA": "1"})
    assert study.names == ["a", "b"] and study.aa
    assert study.variants_given == "a; b"
    assert study.parameters().endswith(' AA=1')
    assert 'VARIANTS="a; b"' in study.parameters()
    same = site.study({"VARIANTS": "x: work_mem=8MB; y: work_mem=8MB"})
    assert same.aa and same.parameters().endswith(" AA=1")
    for given in ({}, {"AA": "0"}, {"VARIANTS": "x; y: work_mem=8MB"}):
        study = site.study(given)
        assert not study.aa and "AA=" not in study.parameters()


@pytest.mark.parametrize("given, message", [
    ({"AA": "2"}, 'AA must be 1 (an A/A study: the base server twice, '
     'VARIANTS="a; b") or 0, not "2"'),
    ({"AA": "1", "VARIANTS": "x; y"}, 'AA=1 runs VARIANTS="a; b", the base '
     'server twice; give AA=1 or VARIANTS, not both (an A/A study of other '
     'settings: VARIANTS="a: <settings>; b: <the same settings>")'),
    ({"AA": "1", "STRATEGIES": "tas ttas"}, 'AA=1 runs VARIANTS="a; b", the '
     'base server twice; give AA=1 or STRATEGIES, not both (an A/A study '
     'of other settings: VARIANTS="a: <settings>; b: <the same '
     'settings>")')])
def test_aa_refused(site, given, message):
    with pytest.raises(spec.SpecError) as e:
        site.study(given)
    assert str(e.value) == message


# --- STOCK_PG_CONFIG, which the bash harness did not have -------------------

@pytest.mark.parametrize("pg_config, expected", [
    ("/w/build/pg18/bin/pg_config", "/w/build/pg18-stock/bin/pg_config"),
    ("/w/build/pg18/bin/../bin/pg_config",
     "/w/build/pg18-stock/bin/pg_config"),
    ("build/pg15/bin/pg_config", "build/pg15-stock/bin/pg_config"),
    ("/usr/lib/postgresql/18/bin/pg_config",
     "/usr/lib/postgresql/18-stock/bin/pg_config"),
    ("/bin/pg_config", ""), ("bin/pg_config", ""), ("pg_config", ""),
    ("/w/pg18/pg_config", ""), ("/w/pg18/bin/pg_config18", ""),
    ("/w/pg18/sbin/pg_config", "")])
def test_default_stock_pg_config(pg_config, expected):
    assert params.default_stock_pg_config(pg_config) == expected


def test_stock_pg_config_given(site, stock):
    other = fake_server(os.path.join(site.tmp, "elsewhere"))
    s = site.study({"VARIANTS": "stock: unpatched; on",
                    "STOCK_PG_CONFIG": other})
    assert (s.stock_pg_config, s.stock_bindir) == (
        other, os.path.join(site.tmp, "elsewhere", "bin"))


def test_stock_pg_config_unused_without_an_unpatched_variant(site):
    """Without an unpatched variant STOCK_PG_CONFIG is not looked at (make
    run passes it always)."""
    for given in ({}, {"VARIANTS": "a; b: work_mem=1MB"}):
        s = site.study(dict(given, STOCK_PG_CONFIG="/nowhere/pg_config"))
        assert (s.stock_pg_config, s.stock_bindir) == ("", "")
        assert s.unpatched == []


# refusals of STOCK_PG_CONFIG, with no stock server beside the base
STOCK_REFUSALS = [
    ("stock-default-missing", {"VARIANTS": "stock: unpatched; on"},
     'STOCK_PG_CONFIG="{tmp}/pg-stock/bin/pg_config" cannot be run; it '
     'must point to the pg_config of the unpatched server (make '
     'server-stock builds it)'),
    ("stock-given-missing", {"VARIANTS": "stock: unpatched; on",
                             "STOCK_PG_CONFIG": "{tmp}/nowhere/pg_config"},
     'STOCK_PG_CONFIG="{tmp}/nowhere/pg_config" cannot be run; it must '
     'point to the pg_config of the unpatched server (make server-stock '
     'builds it)'),
    ("stock-without-psql", {"VARIANTS": "on; stock: unpatched",
                            "STOCK_PG_CONFIG": "{tmp}/nopsql/bin/pg_config"},
     'STOCK_PG_CONFIG="{tmp}/nopsql/bin/pg_config": {tmp}/nopsql/bin/psql '
     'is missing'),
    ("stock-no-default", {"VARIANTS": "stock: unpatched; on",
                          "PG_CONFIG": "{tmp}/odd/pg_config"},
     'an unpatched variant runs the server of STOCK_PG_CONFIG, which has '
     'no default here: PG_CONFIG="{tmp}/odd/pg_config" is not '
     '<build>/bin/pg_config; set STOCK_PG_CONFIG to the pg_config of the '
     'unpatched server'),
]


@pytest.mark.parametrize("name, given, message", STOCK_REFUSALS,
                         ids=case_ids(STOCK_REFUSALS))
def test_stock_pg_config_refusal(site, name, given, message):
    # a server that is not installed as <build>/bin
    write(os.path.join(site.tmp, "odd", "pg_config"),
           "#!/bin/sh\necho %s\n" % site.bindir, 0o755)
    assert_refused(site, given, message)
