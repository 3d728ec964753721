"""accountant.calibrate: one bisection keeping the safe end, checked against closed forms."""

from __future__ import annotations

import doctest
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import accountant
from accountant import (
    FDP,
    GDP,
    ZCDP,
    ApproxDP,
    LaplaceTradeoff,
    PureDP,
    calibrate,
    calibrate_count,
    compose,
    implies,
    subsampled_gaussian,
)


@given(st.floats(0.05, 5.0), st.floats(0.1, 10.0))
@settings(max_examples=40, deadline=None)
def test_gaussian_sigma_for_gdp_is_delta_over_mu(mu: float, sens: float) -> None:
    """GDP(Delta/sigma) implies GDP(mu) iff sigma >= Delta/mu (Dong, Roth & Su 2022, Thm 2.7)."""
    sigma = calibrate(lambda s: GDP(sens / s), GDP(mu), (1e-3, 1e3))
    exact = sens / mu
    assert implies(GDP(sens / sigma), GDP(mu))
    assert exact <= sigma <= exact * (1 + 1e-9)
    assert not implies(GDP(sens / (sigma * (1 - 1e-6))), GDP(mu))


@given(st.floats(0.05, 5.0), st.floats(0.1, 10.0))
@settings(max_examples=40, deadline=None)
def test_laplace_scale_for_pure_dp_is_delta_over_eps(eps: float, sens: float) -> None:
    """The Laplace curve with ratio Delta/b is eps-DP iff b >= Delta/eps (Dwork et al. 2006)."""
    b = calibrate(lambda s: FDP(LaplaceTradeoff(sens / s)), PureDP(eps), (sens / 100, sens * 100))
    assert implies(FDP(LaplaceTradeoff(sens / b)), PureDP(eps))
    assert sens / eps * (1 - 1e-8) <= b <= sens / eps * (1 + 1e-8)
    assert not implies(FDP(LaplaceTradeoff(sens / (b * (1 - 1e-6)))), PureDP(eps))


@given(st.floats(0.1, 4.0), st.integers(1, 50))
@settings(max_examples=30, deadline=None)
def test_rate_is_largest_and_steps_are_most(mu: float, k: int) -> None:
    """Increasing parameters: the largest mu and the most GDP compositions (sqrt(k) mu)."""
    target = GDP(mu)
    x = calibrate(GDP, target, (1e-6, 10.0), increasing=True)
    assert implies(GDP(x), target) and not implies(GDP(x * (1 + 1e-6)), target)
    n = calibrate_count(lambda t: compose([GDP(mu / math.sqrt(k))] * t), target, (1, 4 * k + 1))
    assert n in (k - 1, k) and implies(compose([GDP(mu / math.sqrt(k))] * n), target)  # k - 1: rounding
    assert not implies(compose([GDP(mu / math.sqrt(k))] * (n + 1)), target)


def test_zcdp_and_approx_dp_targets() -> None:
    """Gaussian sigma for rho-zCDP is Delta/sqrt(2 rho) (Bun & Steinke 2016, Prop. 1.6); for
    (eps, delta) the analytic Gaussian sigma (Balle & Wang 2018) satisfies its profile."""
    sigma = calibrate(lambda s: ZCDP(1.0 / (2 * s * s)), ZCDP(0.5), (0.1, 10.0))
    assert sigma == pytest.approx(1.0, rel=1e-8) and sigma >= 1.0
    target = ApproxDP(1.0, 1e-5)
    s = calibrate(lambda x: GDP(1.0 / x), target, (0.1, 100.0))
    assert GDP(1.0 / s).delta(1.0) <= 1e-5 < GDP(1.0 / (s * (1 - 1e-6))).delta(1.0)


def test_dpsgd_noise_multiplier() -> None:
    """DP-SGD (Abadi et al. 2016): the least noise multiplier for (2, 1e-5)-DP after 1000 steps at
    q = 0.01, by the PLD of the subsampled Gaussian; the RDP account needs more noise."""
    q, steps, target = 0.01, 1000, ApproxDP(2.0, 1e-5)

    def make(s: float) -> accountant.PLD:
        return subsampled_gaussian(s, q).self_compose(steps)

    sigma = calibrate(make, target, (0.3, 10.0), tol=1e-6)
    assert make(sigma).epsilon(1e-5) <= 2.0
    assert make(sigma * (1 - 1e-5)).epsilon(1e-5) > 2.0
    rdp_epsilon = accountant.dpsgd_epsilon(q, sigma, steps, 1e-5).rdp_epsilon
    assert rdp_epsilon is not None and rdp_epsilon > 2.0


def test_bracket_errors() -> None:
    with pytest.raises(ValueError, match="neither end"):
        calibrate(lambda s: GDP(1.0 / s), GDP(1.0), (0.1, 0.5))
    with pytest.raises(ValueError, match="both ends"):
        calibrate(lambda s: GDP(1.0 / s), GDP(1.0), (2.0, 5.0))
    with pytest.raises(ValueError, match="does not imply the target"):
        calibrate(lambda s: GDP(1.0 / s), GDP(1.0), (0.1, 5.0), increasing=True)
    with pytest.raises(ValueError, match="lo < hi"):
        calibrate(lambda s: GDP(1.0 / s), GDP(1.0), (5.0, 0.1))
    with pytest.raises(ValueError, match="bracket"):
        calibrate(lambda s: GDP(1.0 / s), GDP(1.0), (0.1, math.inf))
    with pytest.raises(TypeError, match="bracket"):
        calibrate_count(lambda n: GDP(float(n)), GDP(1.0), (0, 2.5))  # type: ignore[arg-type]


def test_docstring_example() -> None:
    from accountant.compose import calibration

    assert doctest.testmod(calibration).failed == 0
