"""Tests of lockstudy.variants: VARIANTS and STRATEGIES, checked.

Each refusal of the variants that bench/run-study.sh made has a case in
REFUSALS, proved as test_params.py proves its own: through
params.from_environment() and through run-study.sh (fakesite.py).  Then
what the variants become: patch files relative to the caller's directory,
then to the checkout, with their links resolved; settings; strategies;
where the module and the bash code part.  Unpatched variants, which the
bash code did not have, with their refusals (UNPATCHED_REFUSALS).
"""

import os
import pwd

import pytest

from fakesite import (GOOD_PATCH, VALID_STRATEGIES, VARIANTS,
                      assert_bash_refused, assert_refused, case_ids,
                      needs_bash, write)
from lockstudy import params, spec



# (id, environment, message); {top}, {caller}, {bindir}, {pg_config} and
# {tmp} are the site's; the message is run-study.sh's after its
# "run-study: error: "
REFUSALS = [
    ("variant-name-upper", {"VARIANTS": "base; Onefl: work_mem=4MB"},
     'VARIANTS: bad variant name "Onefl" in " Onefl: work_mem=4MB" '
     '(lower-case letters, digits, _ and -, at most 31; the form is '
     '"name: patch-file ... setting=value ...; name: ...")'),
    ("variant-name-32", {"VARIANTS": "a" * 32},
     'VARIANTS: bad variant name "%s" in "%s" (lower-case letters, '
     'digits, _ and -, at most 31; the form is "name: patch-file ... '
     'setting=value ...; name: ...")' % ("a" * 32, "a" * 32)),
    ("variant-name-empty", {"VARIANTS": "base; : work_mem=4MB"},
     'VARIANTS: bad variant name "" in " : work_mem=4MB" (lower-case '
     'letters, digits, _ and -, at most 31; the form is "name: '
     'patch-file ... setting=value ...; name: ...")'),
    ("variant-name-blank-inside", {"VARIANTS": "my base"},
     'VARIANTS: bad variant name "my base" in "my base" (lower-case '
     'letters, digits, _ and -, at most 31; the form is "name: '
     'patch-file ... setting=value ...; name: ...")'),
    ("variant-name-leading-dash", {"VARIANTS": "-a"},
     'VARIANTS: bad variant name "-a" in "-a" (lower-case letters, '
     'digits, _ and -, at most 31; the form is "name: patch-file ... '
     'setting=value ...; name: ...")'),
    ("variant-twice", {"VARIANTS": "a; b; a: work_mem=4MB"},
     'VARIANTS: variant "a" appears twice'),
    ("setting-name-upper", {"VARIANTS": "a: Work_mem=4MB"},
     'VARIANTS: variant a: bad setting name "Work_mem" in "Work_mem=4MB" '
     '(name=value, the name in lower case)'),
    ("setting-value-empty", {"VARIANTS": "a: work_mem="},
     'VARIANTS: variant a: bad value in "work_mem=" (not empty, no quotes, '
     'backslashes or #)'),
    ("setting-value-quote", {"VARIANTS": "a: application_name=it's"},
     'VARIANTS: variant a: bad value in "application_name=it\'s" (not '
     'empty, no quotes, backslashes or #)'),
    ("setting-value-double-quote", {"VARIANTS": 'a: application_name=a"b'},
     'VARIANTS: variant a: bad value in "application_name=a"b" (not empty, '
     'no quotes, backslashes or #)'),
    ("setting-value-backslash", {"VARIANTS": "a: application_name=a\\b"},
     'VARIANTS: variant a: bad value in "application_name=a\\b" (not '
     'empty, no quotes, backslashes or #)'),
    ("setting-value-hash", {"VARIANTS": "a: application_name=a#b"},
     'VARIANTS: variant a: bad value in "application_name=a#b" (not '
     'empty, no quotes, backslashes or #)'),
    ("setting-twice", {"VARIANTS": "a: work_mem=4MB work_mem=8MB"},
     "VARIANTS: variant a sets work_mem twice"),
    ("setting-port", {"VARIANTS": "a: port=5433"},
     "VARIANTS: variant a: port is set by the study itself (its clients "
     "connect through it)"),
    ("setting-listen-addresses", {"VARIANTS": "a: listen_addresses=*"},
     "VARIANTS: variant a: listen_addresses is set by the study itself "
     "(its clients connect through it)"),
    ("setting-socket-dirs",
     {"VARIANTS": "a: unix_socket_directories=/tmp"},
     "VARIANTS: variant a: unix_socket_directories is set by the study "
     "itself (its clients connect through it)"),
    ("unknown-strategy", {"VARIANTS": "a: pg_lockstat.spin_strategy=mcs"},
     'VARIANTS: variant a: unknown strategy "mcs" (valid: %s)'
     % VALID_STRATEGIES),
    ("patch-not-found", {"VARIANTS": "a: nope.patch"},
     'VARIANTS: variant a: patch file "nope.patch" not found (relative to '
     '{caller} or to {top}); a setting is name=value, without spaces'),
    ("patch-absolute-not-found", {"VARIANTS": "a: {tmp}/nope.patch"},
     'VARIANTS: variant a: patch file "{tmp}/nope.patch" not found; a '
     'setting is name=value, without spaces'),
    ("setting-with-spaces", {"VARIANTS": "a: work_mem = 4MB"},
     'VARIANTS: variant a: patch file "work_mem" not found (relative to '
     '{caller} or to {top}); a setting is name=value, without spaces'),
    ("setting-name-digit", {"VARIANTS": "a: 9x=1"},
     'VARIANTS: variant a: patch file "9x=1" not found (relative to '
     '{caller} or to {top}); a setting is name=value, without spaces'),
    ("patch-directory", {"VARIANTS": "a: adir.patch"},
     'VARIANTS: variant a: patch file "adir.patch" is not a regular file'),
    ("patch-empty", {"VARIANTS": "a: empty.patch"},
     'VARIANTS: variant a: patch file "empty.patch" has no unified diff in '
     'it (no +++ line)'),
    ("patch-no-plus-line", {"VARIANTS": "a: nodiff.patch"},
     'VARIANTS: variant a: patch file "nodiff.patch" has no unified diff '
     'in it (no +++ line)'),
    ("patch-space-in-path", {"VARIANTS": "a: spl/x.patch"},
     'VARIANTS: variant a: the path of patch file "{caller}/sp ace/x.patch" '
     'has a space; move or link it elsewhere'),
    ("patch-twice", {"VARIANTS": "a: good.patch ./good.patch"},
     'VARIANTS: variant a lists patch file "./good.patch" twice'),
    ("patch-twice-absolute",
     {"VARIANTS": "a: good.patch {caller}/good.patch"},
     'VARIANTS: variant a lists patch file "{caller}/good.patch" twice'),
    ("variants-blank", {"VARIANTS": " ;  ; "}, "VARIANTS is empty"),
    ("variants-newlines", {"VARIANTS": "\n \n"}, "VARIANTS is empty"),
    ("strategy-unknown", {"STRATEGIES": "tas mcs"},
     'unknown strategy "mcs" in STRATEGIES (valid: %s)' % VALID_STRATEGIES),
    ("strategy-twice", {"STRATEGIES": "tas ttas tas"},
     'strategy "tas" appears twice in STRATEGIES'),
    ("strategies-blank", {"STRATEGIES": "  "}, "STRATEGIES is empty"),
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


def test_unreadable_patch(site, monkeypatch):
    path = os.path.join(site.caller, "secret.patch")
    write(path, GOOD_PATCH, 0)
    if os.geteuid() == 0:
        # root reads every file: access(2) answers as for another user
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, m: False if (
            p == path and m == os.R_OK) else real(p, m))
    with pytest.raises(spec.SpecError) as e:
        site.study({"VARIANTS": "a: secret.patch"})
    assert str(e.value) == (
        'VARIANTS: variant a: patch file "secret.patch" cannot be read by %s'
        % pwd.getpwuid(os.geteuid()).pw_name)


def test_relative_hint_when_called_from_the_checkout(site):
    """Called from the checkout itself, the hint names one directory."""
    with pytest.raises(spec.SpecError) as e:
        params.from_environment(site.env({"VARIANTS": "a: nope.patch"}),
                              site.top, site.top)
    assert str(e.value) == (
        'VARIANTS: variant a: patch file "nope.patch" not found (relative to '
        '%s); a setting is name=value, without spaces' % site.top)


@needs_bash
def test_relative_hint_when_called_from_the_checkout_in_bash(site):
    rc, err = site.bash({"VARIANTS": "a: nope.patch"}, cwd=site.top)
    assert (rc, err) == (1, 'run-study: error: VARIANTS: variant a: patch '
                            'file "nope.patch" not found (relative to %s); a '
                            'setting is name=value, without spaces\n'
                            % site.top)


def test_strategies(site):
    s = site.study({"STRATEGIES": " ttas_backoff\tdefault "})
    assert s.names == ["ttas_backoff", "default"]
    assert [v.strategy for v in s.variants] == ["ttas_backoff", "default"]
    assert s.variants_given is None
    assert s.compared() == 'STRATEGIES="ttas_backoff default"'


def test_variants(site):
    s = site.study({"VARIANTS": VARIANTS})
    assert s.names == ["base", "onefl", "x_1-2"]
    base, onefl, x = s.variants
    assert base == spec.Variant("base")
    assert onefl.patches == (os.path.join(site.caller, "good.patch"),)
    assert onefl.settings == (("work_mem", "4MB"),)
    assert onefl.strategy is None
    assert onefl.settings_lines() == ["work_mem = '4MB'"]
    # top-only.patch is the checkout's; both.patch the caller's, first
    assert x.patches == (os.path.join(site.top, "top-only.patch"),
                         os.path.join(site.caller, "both.patch"))
    assert x.settings == (("pg_lockstat.spin_strategy", "ttas"),)
    assert x.strategy == "ttas"
    assert s.variants_given == VARIANTS
    assert s.compared() == 'VARIANTS="%s"' % VARIANTS


def test_patch_paths(site):
    """Absolute paths, with the directory's links resolved and the file's
    name kept."""
    real = os.path.join(site.caller, "real", "r.patch")
    for item in (real, "lnk/r.patch", "real/../real/r.patch"):
        s = site.study({"VARIANTS": "a: " + item})
        assert s.variants[0].patches == (real,)
    os.symlink(real, os.path.join(site.caller, "alias.patch"))
    s = site.study({"VARIANTS": "a: alias.patch"})
    assert s.variants[0].patches == (os.path.join(site.caller,
                                                  "alias.patch"),)


def test_same_patch_in_two_variants(site):
    s = site.study({"VARIANTS": "a: good.patch; b: good.patch work_mem=1MB"})
    assert s.variants[0].patches == s.variants[1].patches


def test_unchecked_patches_are_kept_as_given(site):
    """The unprivileged second pass: the first read the patches."""
    s = site.study({"VARIANTS": "a: nope.patch work_mem=4MB; b"},
                   check_patches=False)
    assert s.variants[0].patches == ("nope.patch",)
    assert s.variants[0].settings == (("work_mem", "4MB"),)


def test_newline_separates_variants(site):
    a = site.study({"VARIANTS": "a: work_mem=1MB\nb: work_mem=2MB\n"})
    b = site.study({"VARIANTS": "a: work_mem=1MB; b: work_mem=2MB"})
    assert a.variants == b.variants and a.names == ["a", "b"]


def test_setting_values(site):
    s = site.study({"VARIANTS": "a: application_name=x=y,z "
                                "pg_lockstat.spin_strategy=default"})
    assert s.variants[0].settings == (
        ("application_name", "x=y,z"),
        ("pg_lockstat.spin_strategy", "default"))
    assert s.variants[0].strategy == "default"


# --- where the module and the bash code part ---------------------------------

def test_repeated_name_is_named_before_its_items(site):
    with pytest.raises(spec.SpecError) as e:
        site.study({"VARIANTS": "a; a: port=1"})
    assert str(e.value) == 'VARIANTS: variant "a" appears twice'


@needs_bash
def test_repeated_name_is_named_before_its_items_in_bash(site):
    rc, err = site.bash({"VARIANTS": "a; a: port=1"})
    assert (rc, err) == (1, 'run-study: error: VARIANTS: variant "a" '
                            'appears twice\n')


def test_dangling_link_in_caller_falls_back_to_checkout(site):
    os.symlink(os.path.join(site.tmp, "gone.patch"),
               os.path.join(site.caller, "top-only.patch"))
    s = site.study({"VARIANTS": "a: top-only.patch"})
    assert s.variants[0].patches == (os.path.join(site.top,
                                                  "top-only.patch"),)


@needs_bash
def test_dangling_link_in_caller_falls_back_to_checkout_in_bash(site):
    os.symlink(os.path.join(site.tmp, "gone.patch"),
               os.path.join(site.caller, "top-only.patch"))
    rc, err = site.bash({"VARIANTS": "a: top-only.patch"})
    assert (rc, err) == (1, "run-study: error: %s/bench/study_stats.py is "
                            "missing\n" % site.top)


# --- unpatched variants ------------------------------------------------------

def test_unpatched_variant(site, stock):
    s = site.study({"VARIANTS": "stock: unpatched; on; off: "
                                "pg_lockstat.track=off"})
    assert s.names == ["stock", "on", "off"]
    assert s.unpatched == ["stock"]
    assert s.variants[0] == spec.Variant(
        "stock", (), (("shared_preload_libraries", ""),), None, True)
    # it loads no library: that is the line variant.conf gets
    assert s.variants[0].settings_lines() == ["shared_preload_libraries = ''"]
    assert not any(v.unpatched for v in s.variants[1:])
    assert s.variants[2].settings == (("pg_lockstat.track", "off"),)
    # the stock build beside the base's
    assert (s.stock_pg_config, s.stock_bindir) == (
        stock, os.path.join(site.tmp, "pg-stock", "bin"))


def test_unpatched_variant_with_settings(site, stock):
    s = site.study({"VARIANTS": "a; b: work_mem=8MB unpatched "
                                "application_name=b"})
    assert s.variants[1] == spec.Variant(
        "b", (), (("shared_preload_libraries", ""), ("work_mem", "8MB"),
                  ("application_name", "b")), None, True)
    # a library of its own, that is not pg_lockstat, replaces the empty list
    s = site.study({"VARIANTS": "a; b: unpatched "
                                "shared_preload_libraries=pg_stat_statements"})
    assert s.variants[1].settings == (
        ("shared_preload_libraries", "pg_stat_statements"),)


def test_unpatched_baseline_and_two_unpatched(site, stock):
    s = site.study({"VARIANTS": "s1: unpatched; s2: unpatched; on"})
    assert s.unpatched == ["s1", "s2"]
    assert s.stock_pg_config == stock


def test_unpatched_in_the_second_pass(site, stock):
    """The unprivileged pass parses it the same way."""
    given = {"VARIANTS": "stock: unpatched; on", "SEED": "1"}
    assert site.study(given, check_patches=False) == site.study(given)


def test_unpatched_is_not_a_patch_file(site, stock):
    """The keyword wins over a file of that name in the caller's
    directory; ./unpatched is the file."""
    write(os.path.join(site.caller, "unpatched"), GOOD_PATCH)
    s = site.study({"VARIANTS": "a: unpatched; b: ./unpatched"})
    assert s.variants[0].unpatched and s.variants[0].patches == ()
    assert s.variants[1].patches == (os.path.join(site.caller,
                                                  "unpatched"),)


# (id, environment, message), as REFUSALS; the bash harness had no
# unpatched variants
UNPATCHED_REFUSALS = [
    ("unpatched-with-patch", {"VARIANTS": "a; b: unpatched good.patch"},
     'VARIANTS: variant b: "unpatched" and patch files together '
     '({caller}/good.patch); an unpatched variant runs the stock server of '
     'STOCK_PG_CONFIG as it is built, without the core series'),
    ("unpatched-after-patch", {"VARIANTS": "a; b: good.patch unpatched"},
     'VARIANTS: variant b: "unpatched" and patch files together '
     '({caller}/good.patch); an unpatched variant runs the stock server of '
     'STOCK_PG_CONFIG as it is built, without the core series'),
    ("unpatched-twice", {"VARIANTS": "a: unpatched unpatched"},
     'VARIANTS: variant a says "unpatched" twice'),
    ("unpatched-track", {"VARIANTS": "a; b: unpatched pg_lockstat.track=off"},
     "VARIANTS: variant b: pg_lockstat.track is a setting of pg_lockstat, "
     "which the unpatched server does not load"),
    ("unpatched-strategy",
     {"VARIANTS": "a: pg_lockstat.spin_strategy=tas unpatched"},
     "VARIANTS: variant a: pg_lockstat.spin_strategy is a setting of "
     "pg_lockstat, which the unpatched server does not load"),
    ("unpatched-preload",
     {"VARIANTS": "a; b: unpatched "
                  "shared_preload_libraries=pg_stat_statements,pg_lockstat"},
     "VARIANTS: variant b: the unpatched server cannot load pg_lockstat "
     "(shared_preload_libraries=pg_stat_statements,pg_lockstat)"),
    # the settings are checked as any variant's, before
    ("unpatched-bad-setting", {"VARIANTS": "a: unpatched port=1"},
     "VARIANTS: variant a: port is set by the study itself (its clients "
     "connect through it)"),
]


@pytest.mark.parametrize("name, given, message", UNPATCHED_REFUSALS,
                         ids=case_ids(UNPATCHED_REFUSALS))
def test_unpatched_refusal(site, stock, name, given, message):
    assert_refused(site, given, message)
