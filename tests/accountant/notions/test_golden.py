"""Golden values computed independently with mpmath (closed forms re-derived at 50 digits)."""

from __future__ import annotations

import itertools
import math

import mpmath as mp
import numpy as np
import pytest

from accountant import (
    GDP,
    ApproxDP,
    GaussianTradeoff,
    LaplaceTradeoff,
    PureDP,
    compose,
)

mp.mp.dps = 50


def mp_gdp_delta(mu: float, eps: float) -> mp.mpf:
    m, e = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)


def mp_gdp_epsilon(mu: float, delta: float) -> mp.mpf:
    """Solve delta(eps) = delta by bisection at 50 digits (delta(eps) is decreasing)."""
    m = mp.mpf(mu)
    lo, hi = mp.mpf(0), mp.mpf(200)
    for _ in range(200):
        mid = (lo + hi) / 2
        if mp.ncdf(-mid / m + m / 2) - mp.exp(mid) * mp.ncdf(-mid / m - m / 2) > delta:
            lo = mid
        else:
            hi = mid
    return hi


MUS = [0.5, 1.0, 2.0, 3.0]
DELTAS = [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8]


@pytest.mark.parametrize("mu", MUS)
def test_gdp_delta_matches_mpmath(mu: float) -> None:
    for eps in [0.0, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 40.0]:
        truth = mp_gdp_delta(mu, eps)
        got = GDP(mu).delta(eps)
        if truth < mp.mpf("1e-300"):
            assert got >= 0.0
            continue
        assert abs(mp.mpf(got) - truth) / truth < 1e-9, (mu, eps, got, truth)


@pytest.mark.parametrize("mu", MUS)
def test_gdp_epsilon_matches_mpmath_and_is_rounded_up(mu: float) -> None:
    for delta in DELTAS:
        truth = mp_gdp_epsilon(mu, delta)
        got = GDP(mu).epsilon(delta)
        if truth < mp.mpf("1e-30"):
            assert got <= 1e-9
            continue
        rel = (mp.mpf(got) - truth) / truth
        assert rel >= -1e-15, (mu, delta, got, truth)  # never optimistic
        assert rel <= 1e-9, (mu, delta, got, truth)


def test_gdp_epsilon_tail_case() -> None:
    # the example: GDP(3).epsilon(1e-8)
    truth = mp_gdp_epsilon(3.0, 1e-8)
    got = GDP(3.0).epsilon(1e-8)
    assert mp.mpf(got) >= truth and (mp.mpf(got) - truth) / truth < 1e-9


@pytest.mark.parametrize("mu", [0.5, 1.0, 3.0])
def test_gaussian_curve_matches_mpmath(mu: float) -> None:
    alphas = [1e-12, 1e-9, 1e-6, 1e-3, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.999]
    f = GaussianTradeoff(mu)
    for a in alphas:
        # Phi^{-1}(1 - a) = -Phi^{-1}(a) = sqrt(2) erfinv(1 - 2a)
        z = -mp.sqrt(2) * mp.erfinv(2 * mp.mpf(a) - 1)
        truth = mp.ncdf(z - mu)
        assert abs(mp.mpf(f(a)) - truth) <= 1e-13 * max(truth, mp.mpf(1e-3)), (mu, a)


def mp_laplace_cdf(x: mp.mpf) -> mp.mpf:
    return mp.exp(x) / 2 if x < 0 else 1 - mp.exp(-x) / 2


def mp_laplace_quantile(u: mp.mpf) -> mp.mpf:
    return mp.log(2 * u) if u < mp.mpf(0.5) else -mp.log(2 * (1 - u))


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 3.0])
def test_laplace_curve_matches_distribution(eps: float) -> None:
    # T(Lap(0,1), Lap(eps,1))(a) = F(F^{-1}(1 - a) - eps), computed from the Laplace cdf directly
    f = LaplaceTradeoff(eps)
    for a in np.concatenate([np.logspace(-10, -1, 10), np.linspace(0.05, 0.95, 19)]):
        truth = mp_laplace_cdf(mp_laplace_quantile(1 - mp.mpf(float(a))) - eps)
        assert abs(mp.mpf(f(float(a))) - truth) < 1e-12, (eps, a)


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.5])
def test_laplace_profile_matches_integral(eps: float) -> None:
    # delta(t) = int (q - e^t p)_+ with p = Lap(0,1), q = Lap(eps,1); integrated with mpmath.
    f = LaplaceTradeoff(eps)
    for t in [-3.0, -0.5, 0.0, 0.2, eps / 2, eps * 0.9]:
        def integrand(y: mp.mpf, t: float = t) -> mp.mpf:
            p = mp.exp(-abs(y)) / 2
            q = mp.exp(-abs(y - eps)) / 2
            return max(q - mp.exp(t) * p, 0)
        kink = mp.mpf(eps + t) / 2  # where q = e^t p
        points = sorted({-mp.inf, mp.mpf(0), mp.mpf(eps), kink, mp.inf})
        truth = mp.quad(integrand, points)
        assert abs(mp.mpf(f.profile(t)) - truth) < 1e-10, (eps, t)


def mp_kov_delta(eps0: float, k: int, eps: float, delta0: float = 0.0) -> mp.mpf:
    """Kairouz, Oh & Viswanath (2015) Thm 3.3: optimal k-fold composition of (eps0, delta0)-DP."""
    e0 = mp.mpf(eps0)
    s = mp.mpf(0)
    for i in range(k + 1):
        term = mp.exp((k - i) * e0) - mp.exp(eps + i * e0)
        if term > 0:
            s += mp.binomial(k, i) * term
    body = s / (1 + mp.exp(e0)) ** k
    return 1 - (1 - mp.mpf(delta0)) ** k * (1 - body)


@pytest.mark.parametrize(("eps0", "k"), [(0.1, 100), (0.5, 20), (1.0, 7), (0.05, 400)])
def test_homogeneous_pure_dp_composition_matches_kov(eps0: float, k: int) -> None:
    g = compose([PureDP(eps0)] * k)
    for eps in [0.0, 0.5, 1.0, 2.0, 4.0]:
        truth = mp_kov_delta(eps0, k, eps)
        got = mp.mpf(g.delta(eps))
        assert abs(got - truth) <= 1e-10 * truth + 1e-300, (eps0, k, eps)


def test_homogeneous_approx_dp_composition_matches_kov() -> None:
    g = compose([ApproxDP(0.2, 1e-6)] * 30)
    for eps in [0.5, 1.0, 2.0]:
        truth = mp_kov_delta(0.2, 30, eps, 1e-6)
        assert abs(mp.mpf(g.delta(eps)) - truth) <= 1e-10 * truth


def test_heterogeneous_pure_dp_composition_matches_brute_force() -> None:
    eps_list = [0.1, 0.25, 0.4, 0.1, 0.7, 0.05, 0.3, 0.25]
    g = compose([PureDP(e) for e in eps_list])
    for t in [0.0, 0.3, 0.8, 1.5]:
        # enumerate every outcome of the product of randomized-response pairs
        truth = mp.mpf(0)
        for signs in itertools.product([1, -1], repeat=len(eps_list)):
            q = mp.mpf(1)
            p = mp.mpf(1)
            for s, e in zip(signs, eps_list, strict=True):
                w = mp.exp(e) / (1 + mp.exp(e))
                q *= w if s == 1 else 1 - w
                p *= 1 - w if s == 1 else w
            truth += max(q - mp.exp(t) * p, 0)
        assert abs(mp.mpf(g.delta(t)) - truth) <= 1e-12, t


def test_pure_dp_epsilon_of_composition_is_rounded_up() -> None:
    g = compose([PureDP(0.1)] * 100)
    eps = g.epsilon(1e-5)
    assert mp_kov_delta(0.1, 100, eps) <= mp.mpf(1e-5)
    assert mp_kov_delta(0.1, 100, eps * (1 - 1e-9)) > mp.mpf(1e-5)
    assert math.isfinite(eps)
