"""Tests of lockstudy.starts: which variants share a server start
(SHARED_START=1) and the order of each round when some do.

Groups: variants of one server whose settings differ only in settings of
a reloadable context share a group; a setting of context postmaster or
internal, or one the server does not know, splits them unless its value
is the same; another build or the unpatched server never shares.  The
order: each round runs every variant once, a group's variants next to
each other; with every variant in one group, or every group of one, it
is design.variant_order()'s; the groups' positions and the positions
within each group are balanced as a Williams design balances them; the
warnings say which level is unbalanced.
"""

from collections import Counter

import pytest

from lockstudy import design, spec, starts

CONTEXTS = {"pg_lockstat.track": "superuser",
            "pg_lockstat.hold_sample_every": "superuser",
            "pg_lockstat.min_delay_us": "sighup",
            "work_mem": "user",
            "shared_buffers": "postmaster",
            "pg_lockstat.spin_strategy": "postmaster",
            "block_size": "internal"}


def _v(name, *settings, unpatched=False):
    return spec.Variant(name, (), tuple(s.split("=", 1) for s in settings),
                        None, unpatched)


def test_reloadable_settings_share_a_start():
    vs = [_v("on"), _v("off", "pg_lockstat.track=off"),
          _v("nohold", "pg_lockstat.hold_sample_every=0"),
          _v("slow", "pg_lockstat.min_delay_us=100", "work_mem=64MB")]
    assert starts.groups(vs, ["/pg"] * 4, CONTEXTS) == [(0, 1, 2, 3)]


@pytest.mark.parametrize("setting", ["shared_buffers=16MB",
                                     "pg_lockstat.spin_strategy=tas",
                                     "block_size=4096",
                                     "no_such.setting=1"])
def test_a_setting_that_needs_a_restart_splits(setting):
    vs = [_v("a"), _v("b", setting), _v("c", "pg_lockstat.track=off")]
    assert starts.groups(vs, ["/pg"] * 3, CONTEXTS) == [(0, 2), (1,)]


def test_the_same_restart_setting_does_not_split():
    vs = [_v("a", "shared_buffers=16MB"),
          _v("b", "pg_lockstat.track=off", "shared_buffers=16MB"),
          _v("c", "shared_buffers=32MB"),
          _v("d", "shared_buffers=32MB", "work_mem=1MB")]
    assert starts.groups(vs, ["/pg"] * 4, CONTEXTS) == [(0, 1), (2, 3)]


def test_other_servers_never_share():
    vs = [_v("a"), _v("b"), _v("p"), _v("stock", unpatched=True),
          _v("stock2", "work_mem=1MB", unpatched=True)]
    bindirs = ["/pg", "/pg", "/variants/x", "/stock", "/stock"]
    assert starts.groups(vs, bindirs, CONTEXTS) == [(0, 1), (2,), (3, 4)]
    assert starts.groups(vs, bindirs, {}) == [(0, 1), (2,), (3,), (4,)]


def _check_rounds(orders, names, units):
    by_name = {names[i]: g for g in units for i in g}
    for groups in orders:
        flat = [n for g in groups for n in g]
        assert sorted(flat) == sorted(names)
        # each group of the round is one of the units, whole
        assert sorted(sorted(by_name[g[0]]) for g in groups) == sorted(
            sorted(u) for u in units)
        for g in groups:
            assert sorted(names.index(n) for n in g) == sorted(by_name[g[0]])


@pytest.mark.parametrize("seed", [0, 7, 12345])
@pytest.mark.parametrize("names", [["a"], ["a", "b"], ["a", "b", "c"],
                                   ["a", "b", "c", "d", "e"]])
def test_without_groups_the_order_is_designs(seed, names):
    units = starts.singletons(len(names))
    orders, warning = starts.round_orders(seed, 12, names, units)
    expected, expected_warning = design.variant_order(seed, 12, names)
    assert [[n for g in r for n in g] for r in orders] == expected
    assert all(len(g) == 1 for r in orders for g in r)
    assert warning == expected_warning


@pytest.mark.parametrize("rounds", [6, 7])
def test_one_group_of_all_is_designs_order(rounds):
    names = ["on", "off", "nohold"]
    orders, warning = starts.round_orders(5, rounds, names, [(0, 1, 2)])
    expected, expected_warning = design.variant_order(5, rounds, names)
    assert orders == [[r] for r in expected]
    assert warning == expected_warning
    assert (warning is None) == (rounds == 6)


def _positions(orders, name):
    """For each round: the position of name's group among the round's
    groups, and name's position within its group."""
    out = []
    for r in orders:
        for k, g in enumerate(r):
            if name in g:
                out.append((k, g.index(name)))
    return out


def test_mixed_groups_are_crossed():
    names = ["stock", "on", "off", "nohold", "sb"]
    units = [(0,), (1, 2, 3), (4,)]
    # 3 units (period 6) crossed with a group of 3 (period 6): 6 * 6 = 36
    orders, warning = starts.round_orders(11, 36, names, units)
    assert warning is None
    assert starts.round_orders(11, 18, names, units)[1].startswith(
        "18 rounds are not a multiple of 36, ")
    _check_rounds(orders, names, units)
    # every variant of the group: each place of the group among the 3
    # crossed with each of its 3 places within it, 4 times
    for name in ("on", "off", "nohold"):
        assert Counter(_positions(orders, name)) == {
            (k, j): 4 for k in range(3) for j in range(3)}
    for name in ("stock", "sb"):
        assert Counter(_positions(orders, name)) == {
            (k, 0): 12 for k in range(3)}
    # the order of the units is design's for the seed
    outer, _ = design.variant_order(11, 36, ["stock", "on+off+nohold",
                                             "sb"])
    assert [["+".join(g) if len(g) == 1 else "on+off+nohold"
             for g in r] for r in orders] == outer


@pytest.mark.parametrize("seed", range(20))
def test_places_of_groups_and_within_groups_are_balanced(seed):
    """A group of two beside one variant: over each period stock runs
    first and last equally often, on and off first, second and third as
    the crossing of their group's place with their place in it gives
    (with one seed at both levels "on" ran second in all 76 rounds of a
    study); two groups of two: each variant once in each place."""
    names = ["stock", "on", "off"]
    orders, warning = starts.round_orders(seed, 8, names, [(0,), (1, 2)])
    assert warning is None
    for block in (orders[:4], orders[4:]):
        flat = [[n for g in r for n in g] for r in block]
        assert Counter(r.index("stock") for r in flat) == {0: 2, 2: 2}
        for name in ("on", "off"):
            assert Counter(r.index(name) for r in flat) == {0: 1, 1: 2,
                                                             2: 1}
    names = ["a", "b", "c", "d"]
    orders, warning = starts.round_orders(seed, 4, names, [(0, 1), (2, 3)])
    assert warning is None
    flat = [[n for g in r for n in g] for r in orders]
    for name in names:
        assert sorted(r.index(name) for r in flat) == [0, 1, 2, 3]


def test_warning_of_an_unbalanced_crossing():
    names = ["stock", "on", "off"]
    # 2 units (period 2) crossed with a group of 2 (period 2): 4 rounds
    _, warning = starts.round_orders(3, 6, names, [(0,), (1, 2)])
    assert warning == (
        "6 rounds are not a multiple of 4, the period of the order of the "
        "shared server starts crossed with the order within each: over the "
        "last 2 rounds the variants' places are not balanced; use a "
        "multiple of 4")
    assert starts.round_orders(3, 8, names, [(0,), (1, 2)])[1] is None


def test_describe():
    names = ["stock", "on", "off", "a", "b"]
    assert starts.describe(names, [(0,), (1, 2), (3, 4)]) == (
        "SHARED_START=1: variants on, off share a server start per round, "
        "each after the first put in force by a reload; variants a, b "
        "share a server start per round, each after the first put in force "
        "by a reload")
    assert starts.describe(names[:2], [(0,), (1,)]).startswith(
        "SHARED_START=1: no two variants can share a server start")


def test_needs_restart():
    assert not starts.needs_restart("work_mem", CONTEXTS)
    assert not starts.needs_restart("pg_lockstat.min_delay_us", CONTEXTS)
    assert starts.needs_restart("shared_buffers", CONTEXTS)
    assert starts.needs_restart("block_size", CONTEXTS)
    assert starts.needs_restart("unknown", CONTEXTS)
