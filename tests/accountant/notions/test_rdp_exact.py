"""Exact RDP of k-ary randomized response at fractional orders and order 1 (issue 14), and of any
f-DP with a finite-loss curve (``to_rdp`` of the RR mechanism's guarantee), against mpmath
enumeration of the two output laws."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mpf

from accountant import (
    FDP,
    RDP,
    FiniteLossTradeoff,
    GaussianTradeoff,
    LaplaceTradeoff,
    PureDP,
    compose,
    finite_pair_rdp,
    randomized_response_rdp,
    to_rdp,
)
from accountant.notions.conversions import randomized_response_renyi
from mechanisms import RandomizedResponse


def renyi_truth(eps: float, k: int, a: float) -> mpf:
    """D_a(P || Q) by enumeration: P keeps input x, Q keeps x' (each w.p. e^eps / Z)."""
    with mpmath.workdps(60):
        e = mpf(eps)
        z = mpmath.exp(e) + k - 1
        p = [mpmath.exp(e) / z, 1 / z] + [1 / z] * (k - 2)
        q = [1 / z, mpmath.exp(e) / z] + [1 / z] * (k - 2)
        if a == 1:
            return mpmath.fsum(pi * mpmath.log(pi / qi) for pi, qi in zip(p, q, strict=True))
        s = mpmath.fsum(pi ** a * qi ** (1 - a) for pi, qi in zip(p, q, strict=True))
        return mpmath.log(s) / (a - 1)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(1e-4, 30.0), k=st.integers(2, 1000), a=st.floats(1.0, 200.0))
def test_kary_rr_renyi_is_exact_and_rounded_up(eps: float, k: int, a: float) -> None:
    truth = renyi_truth(eps, k, a)
    ours = randomized_response_renyi(eps, a, k)
    assert mpf(ours) >= truth
    assert mpf(ours) <= truth * (1 + mpf(10) ** -12) + mpf(10) ** -300


@pytest.mark.parametrize("a", [1.0, 1.5, 2.5, 5.0, 32.75])
def test_kary_rr_is_below_the_binary_bound(a: float) -> None:
    eps = 1.0
    binary = to_rdp(PureDP(eps)).at(a)
    for k in (3, 10, 100):
        exact = randomized_response_rdp(eps, k).at(a)
        assert exact < binary
        assert math.isclose(exact, float(renyi_truth(eps, k, a)), rel_tol=1e-12)
    assert randomized_response_rdp(eps, 2).at(a) == binary


def test_order_one_is_the_kl_divergence() -> None:
    eps, k = 2.0, 5
    kl = eps * math.expm1(eps) / (math.exp(eps) + k - 1)
    assert math.isclose(randomized_response_rdp(eps, k).at(1.0), kl, rel_tol=1e-14)
    assert randomized_response_rdp(eps, k).at(1.0) >= kl
    # the curve is continuous at order 1
    assert math.isclose(randomized_response_rdp(eps, k).at(1.0 + 1e-9), kl, rel_tol=1e-6)


def test_exact_curve_gives_a_smaller_epsilon_for_kary_rr() -> None:
    rdp = randomized_response_rdp(1.0, 10)
    assert isinstance(rdp, RDP)
    assert rdp.epsilon(1e-6) < to_rdp(PureDP(1.0)).epsilon(1e-6)


@pytest.mark.parametrize(("args", "exc"), [((1.0, 1), ValueError), ((math.nan, 3), ValueError),
                                           ((-1.0, 3), ValueError), ((1.0, 2.5), TypeError)])
def test_bad_input(args: tuple[float, int], exc: type[Exception]) -> None:
    with pytest.raises(exc):
        randomized_response_rdp(*args)


# --------------------------------------------- finite pairs: to_rdp of an f-DP with a finite curve


def pair_renyi_truth(p: list[mpf], q: list[mpf], a: float) -> mpf:
    """D_a(P || Q) of two pmfs by enumeration at 60 digits (KL at a = 1)."""
    with mpmath.workdps(60):
        if a == 1:
            return mpmath.fsum(pi * mpmath.log(pi / qi) for pi, qi in zip(p, q, strict=True) if pi > 0)
        s = mpmath.fsum(pi ** a * qi ** (1 - a) for pi, qi in zip(p, q, strict=True))
        return mpmath.log(s) / (a - 1)


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(1e-3, 20.0), k=st.integers(2, 50),
       a=st.one_of(st.just(1.0), st.floats(1.0, 1.01), st.floats(1.0, 300.0)))
def test_to_rdp_of_the_rr_mechanism_is_exact(eps: float, k: int, a: float) -> None:
    rdp = to_rdp(RandomizedResponse(k, eps).guarantee())
    truth = renyi_truth(eps, k, a)
    got = mpf(rdp.at(a))
    assert got >= truth
    assert got <= truth * (1 + mpf(10) ** -11) + mpf(10) ** -14


weights = st.lists(st.floats(1e-6, 1.0), min_size=2, max_size=6)


@settings(max_examples=60, deadline=None)
@given(wp=weights, wq=weights, a=st.one_of(st.just(1.0), st.floats(1.0, 1.001), st.floats(1.0, 100.0)))
def test_finite_pair_rdp_bounds_both_directions_and_is_tight(wp: list[float], wq: list[float],
                                                            a: float) -> None:
    n = min(len(wp), len(wq))
    p = np.array(wp[:n]) / sum(wp[:n])
    q = np.array(wq[:n]) / sum(wq[:n])
    losses = np.log(q) - np.log(p)
    # the pair is the one of the doubles p, q normalised exactly; the doubles are within 4 ulp of it
    f = FiniteLossTradeoff.from_losses(losses, q, p_masses=p, mass_rtol=2.0**-50,
                                       loss_atol=2.0**-50 * (1 + float(np.max(np.abs(losses)))))
    with mpmath.workdps(60):
        pm = [mpf(x) / mpmath.fsum(mpf(y) for y in p) for x in p]
        qm = [mpf(x) / mpmath.fsum(mpf(y) for y in q) for x in q]
        truth = min(pair_renyi_truth(pm, qm, a), pair_renyi_truth(qm, pm, a))
    got = mpf(finite_pair_rdp(f).at(a))
    assert got >= truth
    assert got <= truth * (1 + mpf(10) ** -9) + mpf(10) ** -12


@pytest.mark.parametrize(("scale", "shift", "a"), [(1.0, 1, 1.0), (2.0, 3, 1.5), (0.7, 2, 8.0)])
def test_discrete_laplace_rdp_against_enumeration(scale: float, shift: int, a: float) -> None:
    with mpmath.workdps(60):
        r = mpmath.exp(-1 / mpf(scale))
        z = (1 + r) / (1 - r)
        ys = range(-60 * int(scale + 1) - shift, 60 * int(scale + 1) + 2 * shift)
        p = [r ** abs(y) / z for y in ys]
        q = [r ** abs(y - shift) / z for y in ys]
        truth = pair_renyi_truth(p, q, a)  # symmetric pair: one direction
    got = mpf(to_rdp(FDP(FiniteLossTradeoff.discrete_laplace(scale, shift))).at(a))
    assert truth <= got <= truth * (1 + mpf(10) ** -10)


def test_finite_pair_order_infinity_and_composition() -> None:
    g = RandomizedResponse(4, 1.5).guarantee()
    assert to_rdp(g).at(math.inf) >= 1.5
    assert to_rdp(g).at(math.inf) <= 1.5 * (1 + 1e-15)
    composed = compose([g] * 7, method="rdp")
    assert composed.at(3.0) >= 7 * to_rdp(g).at(3.0)
    assert math.isclose(composed.at(3.0), 7 * float(renyi_truth(1.5, 4, 3.0)), rel_tol=1e-12)
    # exact RR composes to a smaller epsilon than its pure-DP bound
    assert composed.epsilon(1e-6) < compose([PureDP(1.5)] * 7, method="rdp").epsilon(1e-6)


def test_finite_pair_rdp_refuses_what_it_cannot_bound() -> None:
    with pytest.raises(ValueError, match="both directions"):
        finite_pair_rdp(FiniteLossTradeoff.approx_dp(1.0, 1e-6))
    with pytest.raises(TypeError, match="no RDP conversion"):
        to_rdp(FDP(LaplaceTradeoff(1.0)))
    with pytest.raises(TypeError, match="FiniteLossTradeoff"):
        finite_pair_rdp(GaussianTradeoff(1.0))  # type: ignore[arg-type]
