"""``node_exponentials`` keeps the longest array it computed for a grid width: what it returns from the
kept array is bit for bit what it computes afresh (each entry alone), read-only, and the cache stays
bounded; the error bound holds against mpmath."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from accountant.pld.grid import cells
from accountant.pld.grid.cells import EXPONENTIALS_KEPT, node_exponentials


def fresh(size: int, h: float) -> np.ndarray:
    ld = np.arange(size, dtype=np.longdouble) * np.longdouble(h)
    return np.asarray(np.exp(ld).astype(np.float64))


@pytest.mark.parametrize("h", [1.4142135623730951e-05, 2.0 ** -12, 0.013])
def test_kept_prefix_is_the_fresh_array(h: float) -> None:
    cells._exponentials.clear()
    long, err_long = node_exponentials(5000, h)
    short, err_short = node_exponentials(1234, h)  # read from the kept array
    assert np.array_equal(short, fresh(1234, h)) and np.array_equal(long, fresh(5000, h))
    assert err_short < err_long  # the bound is the size's own
    with pytest.raises(ValueError):
        short[0] = 2.0
    longer, _ = node_exponentials(7000, h)  # computed again, longer
    assert np.array_equal(longer, fresh(7000, h))


def test_error_bound_against_mpmath() -> None:
    h = 0.0123
    xs, xi = node_exponentials(300, h)
    mpmath.mp.prec = 120
    for i in range(0, 300, 7):
        exact = mpmath.exp(i * mpmath.mpf(h))
        assert abs(mpmath.mpf(float(xs[i])) - exact) <= xi * exact


def test_cache_is_bounded() -> None:
    cells._exponentials.clear()
    for k in range(3 * EXPONENTIALS_KEPT):
        node_exponentials(100, 1e-3 * (k + 1))
    assert len(cells._exponentials) == EXPONENTIALS_KEPT
    node_exponentials(cells.EXPONENTIALS_MAX + 1, 1e-6)  # too long to keep
    assert 1e-6 not in cells._exponentials
