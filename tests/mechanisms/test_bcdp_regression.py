"""Algorithm 3 of [@aliakbarpour2025enhancing]: the exact minimiser of the (possibly non-convex)
quadratic over a ball, the unbiased objective, the privacy declaration, and convergence to the
non-private least-squares solution (fixed seeds)."""

from __future__ import annotations

import numpy as np
import pytest

from accountant import BCDP, implies
from mechanisms.estimators.bcdp_regression import BCDPLeastSquares, ball_quadratic_minimum


@pytest.mark.parametrize("seed", range(6))
def test_ball_minimum_is_global(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(2, 2))
    h = (a + a.T) / 2  # indefinite in general
    b = rng.normal(size=2) * (0.0 if seed == 5 else 1.0)  # seed 5: the hard case b = 0
    r = float(rng.uniform(0.3, 2.0))
    theta = ball_quadratic_minimum(h, b, r)
    assert np.linalg.norm(theta) <= r * (1 + 1e-9)
    # brute force on a fine polar grid of the disc
    rad, ang = np.meshgrid(np.linspace(0, r, 400), np.linspace(0, 2 * np.pi, 800))
    pts = np.stack([rad * np.cos(ang), rad * np.sin(ang)], axis=-1).reshape(-1, 2)
    vals = 0.5 * np.einsum("ij,jk,ik->i", pts, h, pts) - pts @ b
    f = 0.5 * theta @ h @ theta - theta @ b
    assert f <= vals.min() + 1e-9


def test_regression_declares_prop4_bcdp_and_recovers_theta() -> None:
    target = BCDP((6.0, 10.0, 10.0), 0.1, 10.0)  # weak privacy, so 50 000 users suffice
    reg = BCDPLeastSquares.calibrated(target, radius=2.0, zeta="paper")
    assert implies(reg.guarantee(), target)
    assert reg.cdp_guarantee().c == pytest.approx(reg.c)
    rng = np.random.default_rng(4)
    n = 50_000
    z = rng.uniform(-1, 1, size=(n, 2))
    theta_true = np.array([0.6, -0.3])
    label = np.clip(z @ theta_true + rng.normal(0, 0.1, size=n), -1, 1)
    x = np.column_stack([z, label])
    exact = np.linalg.lstsq(z, label, rcond=None)[0]
    # the objective is unbiased: its mean over repeats is the non-private (H, b) (5 sigma, 20 repeats)
    hs, bs = zip(*(reg.objective(x, rng) for _ in range(20)), strict=True)
    h_mean, b_mean = np.mean(hs, axis=0), np.mean(bs, axis=0)
    h_se, b_se = np.std(hs, axis=0) / np.sqrt(20), np.std(bs, axis=0) / np.sqrt(20)
    assert (np.abs(h_mean - z.T @ z / n) < 5 * h_se + 1e-12).all()
    assert (np.abs(b_mean - label @ z / n) < 5 * b_se).all()
    errs = [np.linalg.norm(theta - exact) for theta in reg.sample(x, rng, size=3)]
    assert np.median(errs) < 0.2
    with pytest.raises(ValueError, match="records"):
        reg.sample(z, rng)
