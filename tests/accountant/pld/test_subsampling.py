"""Subsampled mechanisms against direct numerical integration of the hockey-stick divergence."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, stats

from accountant import GDP, PLD, Guarantee, PureDP, compose, dpsgd_clt_mu, dpsgd_epsilon, subsample

W3_TRUTH = 1.8282367  # DP-SGD q = 0.01, sigma = 1, T = 1000, delta = 1e-5 (issue 3)

# a density evaluated pointwise, at a float or elementwise on an array
Density = Callable[[Any], Any]


def _densities(q: float, sigma: float) -> tuple[Density, Density]:
    p = stats.norm(0.0, sigma).pdf
    mix = lambda x: (1 - q) * p(x) + q * stats.norm(1.0, sigma).pdf(x)  # noqa: E731
    return p, mix


def _hockey(num: Density, den: Density, eps: float, sigma: float) -> float:
    """int (num - e^eps den)_+ dx for two Gaussian mixtures, split at the crossing point."""
    def g(x: Any) -> Any:
        return num(x) - math.exp(eps) * den(x)

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

    def loss(x: float) -> float:
        return math.log(mix(x) / p(x))

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
    assert acc.rdp_epsilon is not None
    assert acc.rdp_epsilon >= acc.epsilon_lower
    assert acc.epsilon() == acc.epsilon_upper
    assert acc.epsilon(1e-6) >= acc.epsilon()  # any delta, from the same composed PLD
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


def _mixed_pipeline_delta(eps0: float, r: float, n_remove: int, n_add: int, eps: float) -> float:
    """Exact delta(eps) (mpmath, 50 digits) of a pipeline realising both directions under
    replace-one adjacency: n_remove steps M(S) = RR_eps0(1[x' in S]) and n_add steps
    M(S) = RR_eps0(1[x in S]), each on its own sample without replacement of rate r; x is the
    record of D, x' that of D'. Max over both orders of (D, D')."""
    with mpmath.workdps(50):
        e0, rr, ee = mpmath.mpf(eps0), mpmath.mpf(r), mpmath.exp(mpmath.mpf(eps))
        a = 1 / (1 + mpmath.exp(e0))  # P(report 1 | bit 0)
        b = rr * (1 - a) + (1 - rr) * a  # P(report 1 | bit 1 w.p. r)
        best = mpmath.mpf(0)
        for first, second in ((a, b), (b, a)):
            # remove steps: D -> RR(0) always, D' -> mixture; add steps the other way round
            total = mpmath.mpf(0)
            for u in range(n_remove + 1):
                for v in range(n_add + 1):
                    w = mpmath.binomial(n_remove, u) * mpmath.binomial(n_add, v)
                    pd = (first ** u * (1 - first) ** (n_remove - u)
                          * second ** v * (1 - second) ** (n_add - v))
                    pd2 = (second ** u * (1 - second) ** (n_remove - u)
                           * first ** v * (1 - first) ** (n_add - v))
                    total += w * max(pd - ee * pd2, 0)
            best = max(best, total)
        return float(best)


def test_without_replacement_mixed_directions_issue_example() -> None:
    # issue 8: composing the remove and add directions apart under-reported this pipeline
    eps0, r = 2.139791757171395, 0.10505877641111733
    truth = _mixed_pipeline_delta(eps0, r, 1, 1, 0.5)
    assert truth == pytest.approx(0.0274888, abs=1e-7)
    g = subsample(PureDP(eps0), r, scheme="without_replacement")
    two = compose([g, g])
    assert two.delta(0.5) >= truth
    assert two.epsilon(0.02) >= 0.5518


@settings(max_examples=25, deadline=None)
@given(eps0=st.floats(0.05, 4.0), r=st.floats(0.01, 0.9), k=st.integers(1, 6),
       frac=st.floats(0.0, 1.0), eps=st.floats(0.0, 3.0))
def test_without_replacement_covers_every_mix_of_directions(eps0: float, r: float, k: int,
                                                             frac: float, eps: float) -> None:
    n_remove = round(frac * k)
    truth = _mixed_pipeline_delta(eps0, r, n_remove, k - n_remove, eps)
    g = subsample(PureDP(eps0), r, scheme="without_replacement")
    assert g.self_compose(k).delta(eps) >= truth


@pytest.mark.parametrize("base", [GDP(1.0), PureDP(1.0)])
def test_without_replacement_single_step_and_composition(base: Guarantee) -> None:
    # one step: at eps >= 0 the symmetric curve C_r(f) has the profile of the worse direction,
    # which is the Poisson pair's; composed, the symmetric pair is at least as loose
    wor = subsample(base, rate=0.1, scheme="without_replacement")
    poi = subsample(base, rate=0.1, scheme="poisson")
    for eps in (0.0, 0.05, 0.1, 0.15):
        lo_w, up_w = wor.delta_bracket(eps)
        lo_p, up_p = poi.delta_bracket(eps)
        assert lo_w <= up_p + 1e-12 and lo_p <= up_w + 1e-12
    assert wor.self_compose(50).epsilon(1e-5) >= poi.self_compose(50).epsilon_bracket(1e-5)[0]


def test_subsample_laplace_sources() -> None:
    # issue 8: a Laplace PLD or curve could not be subsampled (TypeError)
    from accountant import FDP, LaplaceTradeoff

    for g in (PLD.laplace(1.0), FDP(LaplaceTradeoff(1.0))):
        for scheme in ("poisson", "without_replacement"):
            s = subsample(g, 0.1, scheme=scheme)
            # amplification of 1-DP by sampling: log(1 + r (e - 1)) is the tight pure bound
            pure = math.log1p(0.1 * math.expm1(1.0))
            lo, up = s.epsilon_bracket(1e-9)
            # an atom off the grid costs at most one grid step in epsilon
            assert lo <= pure <= up + 1e-6 and up <= pure + s._grid[0]


def test_validation() -> None:
    with pytest.raises(ValueError, match="rate"):
        subsample(GDP(1.0), rate=0.0)
    with pytest.raises(ValueError, match="scheme"):
        subsample(GDP(1.0), rate=0.1, scheme="shuffle")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="single mechanism"):
        subsample(PLD.gaussian(1.0).self_compose(2), rate=0.1)
    with pytest.raises(ValueError, match="steps"):
        dpsgd_epsilon(0.01, 1.0, 0, 1e-5)
