"""The one-shot private M-estimator: its release, its asymptotic guarantee, and an audit of it."""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
import pytest
from scipy import optimize, stats

from accountant import AsymptoticDP, Ledger, compose
from mechanisms import (
    HuberLocation,
    HuberRegression,
    OneShotMEstimator,
    compose_mechanisms,
    one_shot_noise_factor,
)
from verify import audit, certify

C = 1.345


def huber_root(x: np.ndarray, c: float = C) -> float:
    """The Huber location estimate by bracketing the root of sum psi_c(x_i - t) (decreasing in t)."""
    return float(optimize.brentq(lambda t: float(np.clip(x - t, -c, c).sum()), x.min() - 1, x.max() + 1,
                                 xtol=1e-13))


def test_noise_factor_closed_form() -> None:
    with mpmath.workdps(30):
        for n, eps, delta in ((100, 1.0, 1e-5), (1000, 0.5, 1e-6), (2, 3.0, 0.1)):
            ref = 5 * mpmath.sqrt(2 * mpmath.log(n) * mpmath.log(1 / mpmath.mpf(delta))) / (eps * n)
            assert one_shot_noise_factor(n, eps, delta) == pytest.approx(float(ref), rel=1e-13)


def test_fit_is_the_huber_estimate_and_its_gross_error_sensitivity() -> None:
    rng = np.random.default_rng(5)
    for n, scale in ((30, 1.0), (200, 2.0)):
        x = rng.standard_normal(n) * scale + 0.3
        mech = OneShotMEstimator(HuberLocation(C, scale), n, 1.0, 1e-5)
        theta, gamma = mech.fit(x)
        t = scale * huber_root(x / scale)
        assert theta[0] == pytest.approx(t, abs=1e-8)
        # sup_x |IF| = c scale / (share of residuals within c scale)
        inside = np.mean(np.abs(x - t) <= C * scale)
        assert gamma == pytest.approx(C * scale / inside, rel=1e-12)


def test_regression_gamma_is_b_over_the_least_eigenvalue() -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (150, 2))
    y = x @ np.array([1.0, -2.0]) + rng.standard_normal(150)
    model = HuberRegression(2, design_bound=2.0)
    mech = OneShotMEstimator(model, 150, 1.0, 1e-5)
    theta, gamma = mech.fit(np.column_stack([x, y]))
    r = y - x @ theta
    assert abs(float(np.clip(r, -C, C) @ x[:, 0])) < 1e-8  # the estimating equation holds
    m_n = (x * (np.abs(r) <= C)[:, None]).T @ x / 150
    assert gamma == pytest.approx(C * 2.0 / np.linalg.eigvalsh(m_n)[0], rel=1e-9)


def test_floor_keeps_gamma_finite() -> None:
    x = np.array([-50.0] * 5 + [50.0] * 5)  # no residual within c
    mech = OneShotMEstimator(HuberLocation(), 10, 1.0, 1e-5)
    assert mech.fit(x)[1] == pytest.approx(C * 10)  # lambda floored at Bbar/n = 1/10


def test_samples_follow_the_declared_gaussian() -> None:
    # mean and sd of 20000 draws: |z| < 4.5 (two-sided error < 1e-5 each)
    x = np.random.default_rng(2).standard_normal(40)
    mech = OneShotMEstimator(HuberLocation(), 40, 1.0, 1e-5)
    theta, _ = mech.fit(x)
    sd = mech.scale(x)
    out = mech.sample(x, np.random.default_rng(3), size=20_000)[:, 0]
    m = out.size
    assert abs(out.mean() - theta[0]) / (sd / math.sqrt(m)) < 4.5
    chi = float(np.sum((out - theta[0]) ** 2) / sd**2)
    assert stats.chi2.sf(chi, m) > 1e-5 and stats.chi2.cdf(chi, m) > 1e-5


def test_releases_lie_on_a_public_lattice_below_the_least_noise_scale() -> None:
    """2^e <= 2^-12 s_min < 2^(e + 1), s_min = factor B / max(Bbar, floor) <= the noise sd on any
    data, and every output on 2^e Z."""
    mech = OneShotMEstimator(HuberLocation(), 30, 1.0, 1e-5)
    model = mech.model
    s_min = mech.noise_factor * model.grad_bound / max(model.hess_bound, mech.floor)
    assert 2.0**mech.exponent <= s_min / 2**12 < 2.0 ** (mech.exponent + 1)
    rng = np.random.default_rng(5)
    for x in (rng.standard_normal(30), np.r_[np.zeros(2), np.full(28, 50.0)]):
        assert mech.scale(x) >= s_min
        _, v = mech.lattice(x)
        assert math.sqrt(v) * 2.0**mech.exponent == pytest.approx(mech.scale(x), rel=1e-6)
        k = mech.sample(x, np.random.default_rng(6), size=1000) / 2.0**mech.exponent
        assert np.array_equal(k, np.round(k))


def test_privacy_loss_is_the_log_ratio_of_the_two_releases() -> None:
    """Against scipy's normal densities at the lattice points (a pmf is the density times the
    lattice step, up to a relative 2 e^(-2 pi^2 v))."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal(25)
    x2 = x.copy()
    x2[0] = 10.0
    mech = OneShotMEstimator(HuberLocation(), 25, 1.0, 1e-5)
    y = mech.sample(x, rng, size=7)
    g = 2.0**mech.exponent
    (c1, v1), (c2, v2) = mech.lattice(x), mech.lattice(x2)
    expected = (stats.norm.logpdf(y[:, 0], c1[0] * g, math.sqrt(v1) * g)
                - stats.norm.logpdf(y[:, 0], c2[0] * g, math.sqrt(v2) * g))
    np.testing.assert_allclose(mech.privacy_loss(y, x, x2), expected, rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="lattice"):
        mech.privacy_loss(y + g / 2, x, x2)


def test_guarantee_is_asymptotic_and_never_accounted() -> None:
    mech = OneShotMEstimator(HuberLocation(), 100, 1.0, 1e-5)
    g = mech.guarantee()
    assert isinstance(g, AsymptoticDP) and (g.eps, g.delta_) == (1.0, 1e-5)
    for f in (lambda: compose([g, g]), lambda: Ledger().record(g), lambda: mech.pld(),
              lambda: compose_mechanisms([mech, mech]).guarantee(), lambda: g.to_approx_dp(1e-5)):
        with pytest.raises((TypeError, ValueError), match="asymptotic"):
            f()
    # a certificate never says the asymptotic statement implies even itself
    assert not certify(mech, g.hypothesis()).holds


def test_audit_refutes_it_on_adversarial_neighbours() -> None:
    # two residuals within c, the rest at +-50; moving one central record out halves M_n and doubles
    # the noise scale: the claimed (1, 1e-5) is refuted (the audit's false-alarm rate is <= 5%)
    n = 20
    x = np.concatenate([np.full(9, -50.0), np.zeros(2), np.full(9, 50.0)])
    x2 = x.copy()
    x2[9] = 50.0
    mech = OneShotMEstimator(HuberLocation(), n, 1.0, 1e-5)
    assert mech.scale(x2) == pytest.approx(2 * mech.scale(x))
    rep = audit(mech, [(x, x2)], mech.guarantee().hypothesis(), samples=20_000, seed=7, floating_point=False)
    assert rep.violation and rep.epsilon_lower > 1.0


@pytest.mark.parametrize(("kw", "exc", "match"), [
    ({"model": "huber"}, TypeError, "model"),
    ({"n": 1}, ValueError, "n"),
    ({"eps": math.nan}, ValueError, "eps"),
    ({"eps": 0.0}, ValueError, "eps"),
    ({"delta": 0.0}, ValueError, "delta"),
    ({"delta": 1.0}, ValueError, "delta"),
    ({"curvature_floor": -1.0}, ValueError, "curvature_floor"),
    ({"iterations": 0}, ValueError, "iterations"),
])
def test_bad_input(kw: dict[str, Any], exc: type[Exception], match: str) -> None:
    args: dict[str, Any] = {"model": HuberLocation(), "n": 10, "eps": 1.0, "delta": 1e-5, **kw}
    with pytest.raises(exc, match=match):
        OneShotMEstimator(**args)


def test_bad_data() -> None:
    mech = OneShotMEstimator(HuberLocation(), 10, 1.0, 1e-5)
    with pytest.raises(ValueError, match="n = 10"):
        mech.sample(np.zeros(9), np.random.default_rng(0))
    with pytest.raises(ValueError, match="NaN"):
        mech.sample(np.r_[np.zeros(9), np.nan], np.random.default_rng(0))
