"""Subsampled mechanisms against direct numerical integration of the hockey-stick divergence."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, stats

from accountant import GDP, PLD, PureDP, compose, dpsgd_clt_mu, dpsgd_epsilon, subsample

W3_TRUTH = 1.8282367  # DP-SGD q = 0.01, sigma = 1, T = 1000, delta = 1e-5 (issue 3)


def _densities(q: float, sigma: float) -> tuple:
    p = stats.norm(0.0, sigma).pdf
    mix = lambda x: (1 - q) * p(x) + q * stats.norm(1.0, sigma).pdf(x)  # noqa: E731
    return p, mix


def _hockey(num, den, eps: float, sigma: float) -> float:
    """int (num - e^eps den)_+ dx for two Gaussian mixtures, split at the crossing point."""
    g = lambda x: num(x) - math.exp(eps) * den(x)  # noqa: E731
    lo, hi = -40 * sigma, 40 * sigma
    xs = np.linspace(lo, hi, 4001)
    vals = g(xs)
    roots = [optimize.brentq(g, xs[i], xs[i + 1], xtol=1e-14)
             for i in np.flatnonzero(np.sign(vals[:-1]) != np.sign(vals[1:]))]
    pts = [lo, *roots, hi]
    total = 0.0
    for a, b in itertools.pairwise(pts):
        val, _ = integrate.quad(g, a, b, epsabs=1e-14, epsrel=1e-12, limit=200)
        total += max(val, 0.0)
    return total


@pytest.mark.parametrize("q,sigma,eps", [(0.1, 1.0, 0.2), (0.05, 0.8, 0.5), (0.3, 2.0, 0.1)])
def test_subsampled_gaussian_single_step_matches_quadrature(q: float, sigma: float,
                                                            eps: float) -> None:
    p, mix = _densities(q, sigma)
    truth = max(_hockey(mix, p, eps, sigma), _hockey(p, mix, eps, sigma))
    pld = subsample(GDP(1 / sigma), rate=q, scheme="poisson")
    lo, up = pld.delta_bracket(eps)
    assert lo - 1e-12 <= truth <= up + 1e-12
    assert up - truth < 1e-3 * truth + 1e-9


def test_subsampled_gaussian_two_steps_matches_numeric_convolution() -> None:
    # delta_2(eps) = int Q(x) delta_1(eps - L(x)) dx, with delta_1 itself by quadrature
    q, sigma, eps = 0.2, 1.0, 0.3
    p, mix = _densities(q, sigma)

    def d1_remove(t: float) -> float:
        # {mix > e^t p} = {x > x*}: closed form by monotone likelihood ratio
        if math.exp(t) <= 1 - q:
            return -math.expm1(t)
        xs = sigma ** 2 * math.log((math.expm1(t) + q) / q) + 0.5
        return float((1 - q) * stats.norm.sf(xs / sigma) + q * stats.norm.sf((xs - 1) / sigma)
                     - math.exp(t) * stats.norm.sf(xs / sigma))

    assert d1_remove(0.4) == pytest.approx(_hockey(mix, p, 0.4, sigma), rel=1e-9)

    loss = lambda x: math.log(mix(x) / p(x))  # noqa: E731
    outer, _ = integrate.quad(lambda x: mix(x) * d1_remove(eps - loss(x)), -12, 13,
                              epsabs=1e-12, limit=100)
    pld = subsample(GDP(1 / sigma), rate=q).self_compose(2)
    lo, up = pld.law("remove", False).delta(eps), pld.law("remove", True).delta(eps)
    assert lo - 1e-9 <= outer <= up + 1e-9
    lo_all, up_all = pld.delta_bracket(eps)
    assert lo_all <= up_all and up_all >= up


def test_dpsgd_helper_w3() -> None:
    acc = dpsgd_epsilon(0.01, 1.0, 1000, 1e-5)
    assert acc.epsilon_lower <= W3_TRUTH <= acc.epsilon_upper
    assert acc.epsilon_upper - W3_TRUTH < 1e-4
    assert acc.clt_mu == pytest.approx(0.01 * math.sqrt(1000 * math.expm1(1.0)))
    assert acc.clt_is_approximate
    assert acc.rdp_epsilon >= acc.epsilon_lower
    assert acc.epsilon == acc.epsilon_upper
    assert dpsgd_clt_mu(0.01, 1.0, 1000) == acc.clt_mu


def test_compose_repeated_subsampled_items_is_grouped() -> None:
    step = subsample(GDP(1.0), rate=0.01, scheme="poisson")
    c = compose([step] * 500)
    assert isinstance(c, PLD) and len(c.factors) == 1 and c.factors[0][1] == 500
    assert c.epsilon(1e-5) >= c.epsilon_bracket(1e-5)[0]


def test_subsampled_pure_dp_amplification() -> None:
    eps, q = 1.0, 0.3
    amplified = math.log1p(q * math.expm1(eps))  # Balle, Barthe & Gaboardi 2018
    pld = subsample(PureDP(eps), rate=q)
    # the loss atom at the amplified eps lies between grid points: the bound is within a grid step
    assert amplified - 1e-9 <= pld.epsilon(1e-12) <= amplified + 0.005
    assert pld.epsilon_bracket(1e-12)[0] <= amplified + 1e-12
    assert pld.delta(amplified + 0.005) <= 1e-12


@settings(max_examples=10, deadline=None)
@given(mu=st.floats(0.3, 2.0), eps=st.floats(0.0, 2.0))
def test_rate_one_is_the_mechanism(mu: float, eps: float) -> None:
    a = subsample(GDP(mu), rate=1.0)
    lo, up = a.delta_bracket(eps)
    assert lo <= GDP(mu).delta(eps) <= up


def test_without_replacement_uses_the_same_pairs() -> None:
    a = subsample(GDP(1.0), rate=0.1, scheme="without_replacement")
    b = subsample(GDP(1.0), rate=0.1, scheme="poisson")
    assert a.epsilon(1e-5) == pytest.approx(b.epsilon(1e-5), rel=1e-12)


def test_validation() -> None:
    with pytest.raises(ValueError, match="rate"):
        subsample(GDP(1.0), rate=0.0)
    with pytest.raises(ValueError, match="scheme"):
        subsample(GDP(1.0), rate=0.1, scheme="shuffle")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="single mechanism"):
        subsample(PLD.gaussian(1.0).self_compose(2), rate=0.1)
    with pytest.raises(ValueError, match="steps"):
        dpsgd_epsilon(0.01, 1.0, 0, 1e-5)
