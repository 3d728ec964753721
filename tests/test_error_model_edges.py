"""Roundings at the edges of the PLD accountant's error models (issue 14): each declared bound is
checked against the exact value (rationals, or mpmath at 40 digits) of what it bounds, on inputs
built to make the rounding matter, and under the worst libm the model allows (``libm_off``)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from accountant._plderror import TAIL_CAP, tail_split

positive = st.floats(1e-300, 1.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 1e-6), st.floats(-1e-3, 1.0)), min_size=1, max_size=20))
# the quotient 1e-16 / 0.7 rounds down: t 0.7 fell short of 1e-16 by 1.4e-33, and the excess,
# 1e-16 - fl(t 0.7) = 0 in floating point, did not charge it
@example([(1e-16, 0.7)])
def test_tail_split_holds_in_exact_arithmetic(rows: list[tuple[float, float]]) -> None:
    """``tail_split``: TB_j <= t max(low_j, 0) + X_j at every node in rationals (the exact tail
    sums are at least max(low_j, 0)), X_j >= 0, t <= TAIL_CAP, and X_j is all of TB_j where
    low_j <= 0."""
    tb, low = (np.array(c, dtype=np.float64) for c in zip(*rows, strict=True))
    t, excess = tail_split(tb, low)
    assert 0.0 <= t <= TAIL_CAP
    for b, lo, x in zip(tb.tolist(), low.tolist(), excess.tolist(), strict=True):
        assert x >= 0.0
        if lo <= 0.0:
            assert x == b
        assert Fraction(b) <= Fraction(t) * max(Fraction(lo), Fraction(0)) + Fraction(x), (b, lo, t, x)
