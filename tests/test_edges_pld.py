"""Issue 8, PLD edges: legal parameters give a sound answer within a memory cap, never a crash."""

from __future__ import annotations

import math
import tracemalloc

import mpmath
import pytest

from accountant import GDP, PureDP, compose, dpsgd_epsilon


def _gdp_delta(mu: float, eps: float) -> float:
    with mpmath.workdps(60):
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        return float(mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2))


def test_huge_gaussian_with_pure_dp_does_not_crash() -> None:
    # was IndexError: the loss span (~5e7) overflowed e^loss and emptied the grid law
    g = compose([GDP(1e4), PureDP(1.0)], method="pld")
    lo, up = g.delta_bracket(10.0)
    assert lo <= up
    assert up >= _gdp_delta(1e4, 10.0)  # composing with more mechanisms only raises delta
    assert g.epsilon(1e-5) >= GDP(1e4).epsilon(1e-5) or math.isinf(g.epsilon(1e-5))


def _gdp_epsilon(mu: float, delta: float) -> float:
    """epsilon(delta) of mu-GDP by mpmath root finding (60 digits), e^eps Phi(.) in log space."""
    with mpmath.workdps(60):
        m, d = mpmath.mpf(mu), mpmath.mpf(delta)

        def f(e: mpmath.mpf) -> mpmath.mpf:
            return (mpmath.ncdf(-e / m + m / 2)
                    - mpmath.exp(e + mpmath.log(mpmath.ncdf(-e / m - m / 2))) - d)

        lo, hi = m * m / 2, m * m / 2 + 20 * m  # f(lo) > 0 > f(hi)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        return float(lo)


@pytest.mark.parametrize("steps", [1, 10])
def test_dpsgd_tiny_noise_is_sound_within_memory(steps: int) -> None:
    # was a 2.7 GiB allocation: the grid is coarsened so that one law has at most 2^19 points.
    # It also was unsound (7091 for a true ~5e5): the subsampled loss overflowed e^g above 709.
    tracemalloc.start()
    try:
        acc = dpsgd_epsilon(0.5, 1e-3, steps, 1e-5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 30
    assert acc.epsilon_lower <= acc.epsilon_upper
    assert math.isinf(acc.clt_mu)  # e^{1/sigma^2} overflows: no approximation, not a crash
    # one step's loss log(1 - r + r e^B) >= B + log r with B the Gaussian loss, so
    # delta(eps) >= r delta_GDP(eps - log r): epsilon >= epsilon_GDP(delta / r) + log r
    reference = _gdp_epsilon(1000.0, 1e-5 / 0.5) + math.log(0.5)
    assert acc.epsilon_upper >= reference
    if steps == 1:
        assert acc.epsilon_upper <= reference + 1.0
