"""``linear_recurrence``: y_i = x_i + a y_{i-1} against exact rational arithmetic (fractions), within
the rounding its callers charge (on non-negative terms, at most 2 (i + 1) roundings of u per term
at entry i: the in-order count and one more; the underflow below the normal range, charged apart by
the callers, is kept out), in order for small inputs and by blocks for large ones."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant.core.recurrence import IN_ORDER, linear_recurrence
from accountant.core.types import MACHINE_EPSILON


def assert_within_bound(xs: list[float], a: float, y: np.ndarray) -> None:
    """|y_i - exact_i| <= gamma_{2(i+1)} exact_i, gamma_m <= m u (1 + m u) for m u < 1/2."""
    assert y.shape == (len(xs),)
    exact = Fraction(0)
    fa = Fraction(a)
    for i, x in enumerate(xs):
        exact = Fraction(x) + fa * exact
        m = 2 * (i + 1)
        bound = m * MACHINE_EPSILON / 2 * (1 + m * MACHINE_EPSILON)
        assert abs(Fraction(float(y[i])) - exact) <= Fraction(bound) * exact


@settings(max_examples=30, deadline=None)
@given(st.lists(st.one_of(st.just(0.0), st.floats(1e-100, 1e3)), max_size=40), st.floats(1e-3, 3.0))
def test_matches_the_exact_recurrence_in_order(xs: list[float], a: float) -> None:
    assert_within_bound(xs, a, linear_recurrence(np.asarray(xs, dtype=np.float64), a))


@settings(max_examples=12, deadline=None)
@given(st.integers(IN_ORDER + 1, 700), st.floats(0.9, 1.1), st.integers(0, 2**32 - 1))
def test_matches_the_exact_recurrence_by_blocks(n: int, a: float, seed: int) -> None:
    """Blocks (and the carries between them) of PLD-like inputs: a near 1, wide dynamic range."""
    rng = np.random.default_rng(seed)
    xs = (rng.uniform(0.0, 1.0, n) ** 8 * (rng.uniform(0.0, 1.0, n) < 0.9)).tolist()
    assert_within_bound(xs, a, linear_recurrence(np.asarray(xs), a))


@pytest.mark.parametrize("a", [1e-100, 1e-5, 0.5, 1.0, 4.0, 1e-200])
def test_block_length_keeps_the_power_normal(a: float) -> None:
    """Far from 1, the blocks shorten (a^B within e^{+-600}) or the sum goes in order (|log a| >
    300): still within the bound, without overflow or underflow of a^B."""
    rng = np.random.default_rng(1)
    xs = rng.uniform(0.0, 1.0, 300).tolist()
    assert_within_bound(xs, a, linear_recurrence(np.asarray(xs), a))


def test_large_input_decays_exactly() -> None:
    """Powers of 1/2 are exact: the blocked evaluation reaches the smallest subnormal at 1074
    and 0 after it, as in order."""
    x = np.zeros(100_000)
    x[0] = 1.0
    y = linear_recurrence(x, 0.5)
    assert y[0] == 1.0 and y[1] == 0.5 and y[1074] == 5e-324 and y[1075] == 0.0 and y[-1] == 0.0
    assert np.array_equal(y[:1075], 0.5 ** np.arange(1075))
