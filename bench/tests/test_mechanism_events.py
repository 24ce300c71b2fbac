"""Tests of table (m) where a side has no events, or too few, on the
synthetic studies of test_mechanism.py: each expected value computed
there (expect(), the sign-flip p in fractions), independently of the
package.  Proved here:
  - a base of 0 in some rounds is no special case; a tranche or call site
    absent from one side's runs counts 0: ratio 0, or infinite, without an
    error, and too few events for an interval.
The text that shows the events in place of a ratio is
test_mechanism_text.py's.
"""

import math

import pytest

from lockstudy import mechanism
from test_mechanism import (Synth, analyse, assert_points, base_zero_study,
                            by_key, expect, flip_p_exact)


def test_base_zero_no_special_case():
    st = base_zero_study()
    points = analyse(st, ["A", "B"])
    assert_points(points, expect(st, ["A", "B"]))
    q = by_key(points)
    tx = st.transactions()
    a = {r: tx[("A", 4, r)] for r in range(1, 13)}
    fewer = q[("B", 4, "lwlock", "Fewer", "blocks")]
    assert fewer.base_rate == pytest.approx(
        1000 * sum(a[r] / 5 for r in a if r % 4) / sum(a.values()),
        rel=1e-12)
    assert fewer.variant_rate == pytest.approx(100, rel=1e-12)
    blocks = {(v, r): int(b) for v, c, r, t, sh, ex, b, w in st.locks
              if t == "Fewer"}
    assert fewer.p == float(flip_p_exact(
        [blocks[("A", r)] for r in a], [int(a[r]) for r in a],
        [blocks[("B", r)] for r in a],
        [int(tx[("B", 4, r)]) for r in a]))
    # half the rate in 9 rounds, more in 3: no mark
    assert fewer.p > 0.05 and fewer.marker == ""
    sometimes = q[("B", 4, "lwlock", "Sometimes", "blocks")]
    assert (sometimes.ratio > 2, sometimes.marker) == (True, "*")
    acquires = q[("B", 4, "lwlock", "Sometimes", "acquires")]
    assert (acquires.ratio, acquires.p, acquires.marker) == (1, 1, "")


def test_ratio_zero_and_infinite():
    """Gone: acquires in A only, ratio 0; LockBufHdr: contended in B only,
    an infinite ratio, marked, without an error; too few events on a
    side for an interval, so none (nan, and the text shows the events);
    its CSV says inf."""
    points = analyse(base_zero_study(), ["A", "B"])
    q = by_key(points)
    gone = q[("B", 4, "lwlock", "Gone", "acquires")]
    assert (gone.variant_rate, gone.ratio, gone.p, gone.marker,
            gone.variant_events) == (0, 0, 1 / 2048, "*", 0)
    assert math.isnan(gone.ci_low) and math.isnan(gone.ci_high)
    assert gone.base_rate == pytest.approx(200, rel=1e-12)
    assert mechanism.few_events(gone)
    site = q[("B", 4, "spin", "LockBufHdr bufmgr.c:6282", "contended")]
    assert (site.base_rate, site.ratio, site.p, site.marker,
            site.base_events) == (0, math.inf, 1 / 2048, "*", 0)
    assert math.isnan(site.ci_low) and math.isnan(site.ci_high)
    assert site.variant_rate > 0 and site.change > 0
    # a rare event that one side lacks in every round but one
    st = Synth()
    for r in range(1, 13):
        for s in ("A", "B"):
            st.run(s, 1, r, 1000)
            st.lock(s, 1, r, "Rare", 0, 0, r == 1 and s == "A")
            st.lock(s, 1, r, "Often", 0, 0, 5 if s == "B" else r == 2)
    q = by_key(analyse(st, ["A", "B"]))
    rare = q[("B", 1, "lwlock", "Rare", "blocks")]
    assert (rare.ratio, rare.p, rare.marker, rare.base_events,
            rare.variant_events) == (0, 1, "", 1, 0)
    often = q[("B", 1, "lwlock", "Often", "blocks")]
    assert (often.ratio, often.marker, often.base_events,
            often.variant_events) == (60, "*", 1, 60)
    assert math.isnan(often.ci_low) and mechanism.few_events(often)
