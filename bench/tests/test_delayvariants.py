"""Tests of lockstudy.delayvariants: the variants of SENSITIVITY and
DELAY_US, their checks in the study's parameters, and the check of the
delayed tranches before round 1.
"""

import pytest

from lockstudy import delayvariants as sn, spec, variants

# --- the variants -----------------------------------------------------------


def test_variants_text():
    text = sn.variants_text(sn.parse("WALWrite ProcArray", "0.5 2"))
    vs = variants.parse_variants(text, "/", "/")
    assert [v.name for v in vs] == [
        "none", "walwrite-in-0p5", "walwrite-ctl-0p5", "walwrite-in-2",
        "walwrite-ctl-2", "procarray-in-0p5", "procarray-ctl-0p5",
        "procarray-in-2", "procarray-ctl-2"]
    assert vs[0].settings == ()
    assert vs[1].settings == (("pg_lockstat.delay_tranche", "WALWrite"),
                              ("pg_lockstat.delay_us", "0.5"),
                              ("pg_lockstat.delay_mode", "inside"))
    assert dict(vs[2].settings)["pg_lockstat.delay_mode"] == "before"


def test_long_tranche_name_is_cut():
    """A name is at most 31 characters, as VARIANTS allows."""
    name = sn.variant_name("SerializableFinishedList", "ctl", "0.25")
    assert name == "serializablefinishedli-ctl-0p25" and len(name) == 31
    text = sn.variants_text([("SerializableFinishedList", ["1000"])])
    assert [v.name for v in variants.parse_variants(text, "/", "/")][1:] \
        == ["serializablefinishedlis-in-1000",
            "serializablefinishedli-ctl-1000"]


@pytest.mark.parametrize("tranches, delays, message", [
    ("WALWrite walwrite", "1", 'SENSITIVITY: walwrite at 1 us and WALWrite '
     'at 1 us give the same variant name "walwrite-in-1" (lower case, cut '
     'to 31 characters)'),
    ("PerSessionRecordType PerSessionRecordTypmod", "100.125",
     "SENSITIVITY: PerSessionRecordTypmod at 100.125 us and "
     "PerSessionRecordType at 100.125 us give the same variant name "
     '"persessionrecordtyp-ctl-100p125" (lower case, cut to 31 characters)')])
def test_names_collide(tranches, delays, message):
    with pytest.raises(spec.SpecError) as e:
        sn.variants_text(sn.parse(tranches, delays))
    assert str(e.value) == message
    with pytest.raises(spec.SpecError) as e:
        sn.variants_text(sn.parse("WALWrite", "1"), " ")
    assert str(e.value) == "SENSITIVITY: the base of VARIANTS has no name"


def test_own_delays():
    """A tranche's own delays, the others DELAY_US's."""
    assert sn.parse("WALWrite:10,40 ProcArray", "0.5") == [
        ("WALWrite", ["10", "40"]), ("ProcArray", ["0.5"])]
    assert sn.parse("WALWrite:10", "") == [("WALWrite", ["10"])]
    names = [v.name for v in variants.parse_variants(sn.variants_text(
        sn.parse("WALWrite:10,40 ProcArray", "0.5")), "/", "/")]
    assert names == ["none", "walwrite-in-10", "walwrite-ctl-10",
                     "walwrite-in-40", "walwrite-ctl-40", "procarray-in-0p5",
                     "procarray-ctl-0p5"]


NO_DELAYS = ("SENSITIVITY: tranche %s has no delays: give DELAY_US, the "
             "delays in microseconds (from 0.1 to 1000), for example "
             'DELAY_US="0.5 2", or its own, %s:0.5,2')


@pytest.mark.parametrize("tranches, delays, message", [
    ("WALWrite", "", NO_DELAYS % ("WALWrite", "WALWrite")),
    (" ", "1", "SENSITIVITY names no tranche"),
    ("WALWrite:", "1", NO_DELAYS % ("WALWrite", "WALWrite")),
    ("A:1 B", "", NO_DELAYS % ("B", "B")),
    ("WALWrite:1,x", "", 'SENSITIVITY: WALWrite: "x" is not a delay from '
     '0.1 to 1000 microseconds with at most 3 decimals'),
    ("WALWrite:1,1.0", "", "SENSITIVITY: WALWrite: delay 1 appears twice"),
    ("WALWrite:1,,2", "", 'SENSITIVITY: WALWrite: "" is not a delay from '
     '0.1 to 1000 microseconds with at most 3 decimals'),
    ("WAL-Write:1", "", 'SENSITIVITY: "WAL-Write" is not an LWLock tranche '
     'name as pg_lwlock_stats.tranche shows it (letters, digits and _)'),
    ("WALWrite WALWrite", "1",
     'SENSITIVITY: tranche "WALWrite" appears twice'),
    ("WALWrite", "0.05", 'DELAY_US: "0.05" is not a delay from 0.1 to 1000 '
     'microseconds with at most 3 decimals'),
    ("WALWrite", "1001", 'DELAY_US: "1001" is not a delay from 0.1 to 1000 '
     'microseconds with at most 3 decimals'),
    ("WALWrite", "1e2", 'DELAY_US: "1e2" is not a delay from 0.1 to 1000 '
     'microseconds with at most 3 decimals'),
    ("WALWrite", "2 2.0", "DELAY_US: delay 2 appears twice"),
    ("WALWrite", "1.0000001", 'DELAY_US: "1.0000001" is not a delay from '
     '0.1 to 1000 microseconds with at most 3 decimals'),
    ("WALWrite:1", "abc", 'DELAY_US: "abc" is not a delay from 0.1 to 1000 '
     'microseconds with at most 3 decimals')])
def test_parse_refused(tranches, delays, message):
    with pytest.raises(spec.SpecError) as e:
        sn.parse(tranches, delays)
    assert str(e.value) == message


def test_study_parameters(site):
    """SENSITIVITY makes the study's variants and sets SHARED_START=1
    unless it is given; commands.txt's line records the VARIANTS it made,
    which run the same study again."""
    given = {"SENSITIVITY": "WALWrite", "DELAY_US": "2"}
    study = site.study(given)
    assert study.names == ["none", "walwrite-in-2", "walwrite-ctl-2"]
    assert study.shared_start
    assert 'VARIANTS="none; walwrite-in-2: ' in study.parameters()
    assert not site.study(dict(given, SHARED_START="0")).shared_start
    again = site.study({"VARIANTS": study.variants_given})
    assert again.variants == study.variants


def test_study_on_a_base(site):
    """VARIANTS of one variant names the baseline and gives every variant
    its settings."""
    study = site.study({"SENSITIVITY": "WALWrite:2", "VARIANTS":
                        " base:  pg_lockstat.hold_sample_every=101 ;"})
    assert study.names == ["base", "walwrite-in-2", "walwrite-ctl-2"]
    assert study.variants[0].settings == (
        ("pg_lockstat.hold_sample_every", "101"),)
    assert study.variants[2].settings == (
        ("pg_lockstat.hold_sample_every", "101"),
        ("pg_lockstat.delay_tranche", "WALWrite"),
        ("pg_lockstat.delay_us", "2"), ("pg_lockstat.delay_mode", "before"))
    plain = site.study({"SENSITIVITY": "WALWrite:2", "VARIANTS": "b"})
    assert plain.names[0] == "b" and plain.variants[0].settings == ()


@pytest.mark.parametrize("given, message", [
    ({"DELAY_US": "2"}, "DELAY_US is for SENSITIVITY, the tranches whose "
     "holds the study lengthens by each delay: give both"),
    ({"SENSITIVITY": "WALWrite", "DELAY_US": "2", "VARIANTS": "a; b"},
     "SENSITIVITY makes the variants, on the base of VARIANTS if it gives "
     "one (its name and its patches and settings, which every variant then "
     "has); VARIANTS gives 2"),
    ({"SENSITIVITY": "WALWrite", "DELAY_US": "2",
      "VARIANTS": "a: pg_lockstat.delay_us=3"},
     'SENSITIVITY: the base "a" of VARIANTS must run pg_lockstat without a '
     "delay of its own, not pg_lockstat.delay_us=3"),
    ({"SENSITIVITY": "WALWrite", "DELAY_US": "2", "VARIANTS": "s: unpatched"},
     'SENSITIVITY: the base "s" of VARIANTS must run pg_lockstat without a '
     "delay of its own, not unpatched"),
    ({"SENSITIVITY": "WALWrite", "DELAY_US": "2", "STRATEGIES": "tas"},
     "SENSITIVITY makes the variants (none, and per tranche and delay "
     "<tranche>-in-<d> and <tranche>-ctl-<d>); give SENSITIVITY or "
     "STRATEGIES, not both"),
    ({"SENSITIVITY": "WALWrite", "DELAY_US": "2", "AA": "1"},
     "SENSITIVITY makes the variants (none, and per tranche and delay "
     "<tranche>-in-<d> and <tranche>-ctl-<d>); give SENSITIVITY or "
     "AA, not both")])
def test_study_refused(site, given, message):
    with pytest.raises(spec.SpecError) as e:
        site.study(given)
    assert str(e.value) == message


def test_check_tranches():
    """Each tranche a variant of the patched server delays is set by
    ALTER SYSTEM (the server refuses an unknown one) and reset, once."""
    calls = []
    vs = variants.parse_variants(
        sn.variants_text(sn.parse("WALWrite ProcArray", "1 2"))
        + "; u: unpatched work_mem=8MB", "/", "/")
    vs += (spec.Variant("v", (), (("pg_lockstat.delay_tranche", "X"),),
                        unpatched=True),)
    sn.check_tranches(lambda what, q, p=(): calls.append((what, q, p)), vs)
    set_ = "ALTER SYSTEM SET pg_lockstat.delay_tranche = %s"
    reset = "ALTER SYSTEM RESET pg_lockstat.delay_tranche"
    assert [(q, p) for _, q, p in calls] == [
        (set_, ("WALWrite",)), (reset, ()), (set_, ("ProcArray",)),
        (reset, ())]
    assert calls[0][0] == "checking pg_lockstat.delay_tranche = 'WALWrite' " \
        "(ALTER SYSTEM)"
