"""``GaussianTradeoff``'s curve is rounded down: G_mu(alpha) = Phi(-Phi^{-1}(alpha) - mu) computed in
floats (``accountant.core.normal.ndtr`` at scipy's ``ndtri``) never exceeds the value at 50 digits, on
a dense grid of alpha (from the smallest subnormal to 1 - 2^-53) and mu (1e-3 to 40), and the margin
taken off (16 u (1 + (|z| + mu) phi(x)/Phi(x)), x = -z - mu) is measured against the float error it
covers."""

from __future__ import annotations

import math
import sys

import mpmath
import numpy as np
from scipy import special

from accountant import GaussianTradeoff
from accountant.core.normal import log_ndtr, ndtr
from accountant.core.types import UNIT_ROUNDOFF as U

mpf = mpmath.mpf
SUBNORMAL_ULP = mpf(math.ulp(0.0))


def z_exact(alpha: float) -> mpmath.mpf:
    """Phi^{-1}(alpha) for the double alpha at the working precision: Newton's method on
    log Phi(z) = log alpha (or log Phi(-z) = log(1 - alpha) above 1/2, 1 - alpha exact in mpmath),
    from a float start, until the step is below 1e-45 (1 + |z|)."""
    lower = alpha <= 0.5
    target = mpmath.log(mpf(alpha)) if lower else mpmath.log(1 - mpf(alpha))
    z = mpf(float(special.ndtri(alpha)))
    for _ in range(60):
        c = mpmath.ncdf(z if lower else -z)
        step = (mpmath.log(c) - target) / (mpmath.npdf(z) / c * (1 if lower else -1))
        z -= step
        if abs(step) < mpf(10) ** -45 * (1 + abs(z)):
            return z
    raise AssertionError(f"Newton did not converge at alpha={alpha!r}")


def alphas() -> np.ndarray:
    rng = np.random.default_rng(7)
    return np.unique(np.concatenate([
        [5e-324, 1e-320, 1e-315, 1e-310, sys.float_info.min, 1e-307],
        np.geomspace(1e-300, 0.5, 70), 1.0 - np.geomspace(2.0**-53, 0.5, 40),
        rng.uniform(0.0, 1.0, 20)]))


def worst(alpha: np.ndarray, mus: np.ndarray) -> tuple[float, float, float, int]:
    """Over the grid: the largest (curve - exact) / exact in u where the exact value is a normal
    double, the largest curve - exact in subnormal ulps (2^-1074) where it is subnormal, the
    largest float error of the unrounded Phi(x) in units of u (1 + (|z| + mu) phi(x)/Phi(x)) (the
    margin's unit), and the number of points with a positive exact value."""
    top_rel, top_abs, top_raw, count = -math.inf, -math.inf, 0.0, 0
    with mpmath.workdps(50):
        zs = [z_exact(float(a)) for a in alpha]
        for mu in mus.tolist():
            got = GaussianTradeoff(mu)(alpha)
            z = special.ndtri(alpha)
            x = -z - mu
            raw = ndtr(x)
            with np.errstate(over="ignore"):
                unit = U * (1.0 + (np.abs(z) + mu) * np.exp(-0.5 * x * x - 0.5 * math.log(2 * math.pi)
                                                              - log_ndtr(x)))
            for g, r, un, ze in zip(got.tolist(), raw.tolist(), unit.tolist(), zs, strict=True):
                exact = mpmath.ncdf(-ze - mpf(mu))
                if exact == 0:
                    continue
                count += 1
                if exact >= sys.float_info.min:
                    top_rel = max(top_rel, float((mpf(g) - exact) / exact) / U)
                    top_raw = max(top_raw, float(abs(mpf(r) - exact) / exact) / un)
                else:
                    top_abs = max(top_abs, float((mpf(g) - exact) / SUBNORMAL_ULP))
    return top_rel, top_abs, top_raw, count


def test_gaussian_curve_is_rounded_down_over_alpha_and_mu() -> None:
    """Measured: the unrounded value errs by at most 4.31 of the margin's units (alpha = 0.8972,
    mu = 0.00533: 13.9 u at a unit of 3.2 u; 16 units are taken off), and the rounded curve is
    nowhere above the exact value, the subnormal values included (the absolute 4-ulp slack)."""
    alpha = alphas()
    top_rel, top_abs, top_raw, count = worst(alpha, np.geomspace(1e-3, 40.0, 20))
    assert count > 2500
    assert top_rel <= 0.0, top_rel
    assert top_abs <= 0.0, top_abs
    assert 1.0 <= top_raw <= 8.0, top_raw  # measured 4.31: the margin (16) covers it 3.7 times over


def test_gaussian_curve_is_rounded_down_where_it_is_subnormal() -> None:
    """alpha near 1 and mu from 25 to 40: Phi(x) at x ~ -37 to -48, from the bottom of the normal
    range through the subnormals to 0. Before the absolute slack the curve was 0.503 subnormal ulp
    above the exact value (alpha = 0.99997..., mu = 34.25: 9.5e-321 against 9.496e-321)."""
    alpha = np.unique(np.concatenate([1.0 - np.geomspace(2.0**-53, 1e-3, 40), [0.9999709587856017]]))
    top_rel, top_abs, _, count = worst(alpha, np.linspace(25.0, 40.0, 61))
    assert count > 1000
    assert top_rel <= 0.0, top_rel
    assert top_abs <= 0.0, top_abs
