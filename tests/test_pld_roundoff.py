"""The round-off bounds of the PLD's convolutions hold (checked against extended precision)."""

from __future__ import annotations

import numpy as np
import pytest

from accountant._pldgrid import _fft_conv


def exact_convolution(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a * b in long double (64-bit mantissa on x86-64: ~2000x more precise than double)."""
    return np.convolve(a.astype(np.longdouble), b.astype(np.longdouble))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("direct", [True, False])
def test_convolution_error_is_within_its_bound(seed: int, direct: bool) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(50, 3000))
    # probability vectors with a bulk and tails spanning many orders of magnitude, as in a PLD
    a = np.exp(-0.5 * ((np.arange(n) - n / 2) / (n / 10)) ** 2) * rng.uniform(0.5, 1.5, n)
    b = np.exp(-np.abs(np.arange(n) - n / 3) / (n / 20)) * rng.uniform(0.5, 1.5, n)
    a, b = a / a.sum(), b / b.sum()
    limit = 10**9 if direct else 0
    out, rel, l1, _ = _fft_conv(a, b, 2 * n - 1, limit)
    exact = exact_convolution(a, b)
    excess = np.maximum(np.abs(out.astype(np.longdouble) - exact) - rel * exact, 0)
    assert float(excess.sum()) <= l1
    if direct:
        assert l1 == 0.0 and rel > 0.0  # direct sums of non-negative terms err only relatively
    else:
        assert rel == 0.0 and l1 > 0.0


def test_self_convolution_bound() -> None:
    rng = np.random.default_rng(7)
    a = rng.uniform(0, 1, 4000) ** 8
    a /= a.sum()
    out, _, l1, _ = _fft_conv(a, None, 2 * a.size - 1, 0)
    exact = exact_convolution(a, a)
    assert float(np.abs(out.astype(np.longdouble) - exact).sum()) <= l1
