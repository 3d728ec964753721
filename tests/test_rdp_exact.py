"""Exact RDP of k-ary randomized response at fractional orders and order 1 (issue 14), against
mpmath enumeration of the two output laws."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mpf

from accountant import RDP, PureDP, randomized_response_rdp, to_rdp
from accountant.conversions import randomized_response_renyi


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
