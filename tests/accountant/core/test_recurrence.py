"""``linear_recurrence``: y_i = x_i + a y_{i-1} against exact rational arithmetic (fractions), within
the per-step rounding its callers charge (a product and a sum, u each, on non-negative terms; the
underflow below the normal range, charged apart by the callers, is kept out)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant.core.recurrence import linear_recurrence
from accountant.core.types import MACHINE_EPSILON


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(st.just(0.0), st.floats(1e-100, 1e3)), max_size=40), st.floats(1e-3, 3.0))
def test_matches_the_exact_recurrence(xs: list[float], a: float) -> None:
    y = linear_recurrence(np.asarray(xs, dtype=np.float64), a)
    assert y.shape == (len(xs),)
    exact = Fraction(0)
    for i, x in enumerate(xs):
        exact = Fraction(x) + Fraction(a) * exact
        # n steps of two roundings each on non-negative terms: within 2 n u (1 + 2 n u) relative
        n = i + 1
        bound = 2 * n * MACHINE_EPSILON / 2 * (1 + 2 * n * MACHINE_EPSILON)
        assert abs(Fraction(float(y[i])) - exact) <= Fraction(bound) * exact


def test_large_input_is_in_order() -> None:
    x = np.zeros(100_000)
    x[0] = 1.0
    y = linear_recurrence(x, 0.5)
    assert y[0] == 1.0 and y[1] == 0.5 and y[1074] == 5e-324 and y[-1] == 0.0
