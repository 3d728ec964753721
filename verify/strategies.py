"""Hypothesis strategies for property tests of privacy claims.

    from hypothesis import given, settings
    from verify.strategies import neighbouring

    @settings(max_examples=10, deadline=None)
    @given(neighbouring((0.0, 1.0, 5), "replace"))
    def test_mean_is_private(pair):
        verify.assert_private(my_mechanism, PureDP(1.0), pair, samples=20_000)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from accountant.core.types import FloatArray

from .neighbours.fixed import check_adjacency, check_domain

__all__ = ["neighbouring"]


def neighbouring(domain: tuple[float, float, int], adjacency: str = "replace", *,
                 integers: bool = False) -> st.SearchStrategy[tuple[FloatArray, FloatArray]]:
    """Pairs (x, x2) of neighbouring datasets of ``n`` values in [low, high] (domain = (low, high, n)).

    adjacency "replace": x2 is x with one value replaced; "add_remove": x2 is x with one value
    removed (so len(x2) = n - 1). ``integers`` draws whole numbers. Shrinks towards simple data."""
    low, high, n = check_domain(domain)
    adj = check_adjacency(adjacency)
    if integers:
        lo_i, hi_i = int(np.ceil(low)), int(np.floor(high))
        if lo_i > hi_i:
            raise ValueError(f"domain {domain!r} contains no integer")
        value: st.SearchStrategy[Any] = st.integers(lo_i, hi_i)
    else:
        value = st.floats(low, high, allow_nan=False, allow_infinity=False)

    @st.composite
    def draw(d: st.DrawFn) -> tuple[FloatArray, FloatArray]:
        x = np.asarray(d(st.lists(value, min_size=n, max_size=n)), dtype=np.float64)
        i = d(st.integers(0, n - 1))
        if adj == "replace":
            x2 = x.copy()
            x2[i] = d(value)
        else:
            x2 = np.delete(x, i)
        return x, x2

    return draw()
