"""RDP of the Poisson-subsampled Gaussian at fractional orders and at order 1, against mpmath
quadrature of the Renyi divergences of mu = (1-q) N(0, s^2) + q N(1, s^2) and mu0 = N(0, s^2) in
both directions [@mironov2019sampled, Sec. 3.3]."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mpf

from accountant import subsampled_gaussian_kl, subsampled_gaussian_rdp
from accountant.compose.subsampled_rdp import RDP_ORDERS


def renyi_both(q: float, s: float, a: float) -> tuple[mpf, mpf]:
    """(D_a(mu || mu0), D_a(mu0 || mu)) by mpmath quadrature at 30 digits, split at 0, at the
    crossing point z0 and a few s around it (the integrands are smooth; KL at a = 1)."""
    with mpmath.workdps(30):
        mq, ms, ma = mpf(q), mpf(s), mpf(a)

        def ratio(z: mpf) -> mpf:  # mu / mu0
            return 1 - mq + mq * mpmath.exp((2 * z - 1) / (2 * ms ** 2))

        z0 = ms ** 2 * mpmath.log(1 / mq - 1) + mpf(1) / 2
        pts = sorted({-mpmath.inf, mpf(0), z0, ma, mpmath.inf} | {z0 + k * ms for k in (-8, -3, 3, 8)})
        if a == 1:
            f = mpmath.quad(lambda z: mpmath.npdf(z, 0, ms) * ratio(z) * mpmath.log(ratio(z)), pts)
            r = mpmath.quad(lambda z: -mpmath.npdf(z, 0, ms) * mpmath.log(ratio(z)), pts)
            return f, r
        f = mpmath.quad(lambda z: mpmath.npdf(z, 0, ms) * ratio(z) ** ma, pts)
        r = mpmath.quad(lambda z: mpmath.npdf(z, 0, ms) * ratio(z) ** (1 - ma), pts)
        return mpmath.log(f) / (ma - 1), mpmath.log(r) / (ma - 1)


@settings(max_examples=10, deadline=None)  # ~1 s of quadrature each
@given(q=st.floats(1e-4, 0.95), s=st.floats(0.5, 10.0), a=st.floats(1.01, 40.0),
       t=st.sampled_from([1, 2250]))
def test_fractional_orders_bound_both_directions_tightly(q: float, s: float, a: float, t: int) -> None:
    fwd, rev = renyi_both(q, s, a)
    truth = max(fwd, rev)
    got = mpf(subsampled_gaussian_rdp(q, s, t, orders=(a,)).epsilons[0]) / t
    assert got >= truth
    assert got <= truth * (1 + mpf(10) ** -8) + mpf(10) ** -14


@pytest.mark.parametrize(("q", "s"), [(0.04, 1.5), (0.5, 1.0), (0.001, 0.8)])
def test_order_one_is_the_larger_kl_divergence(q: float, s: float) -> None:
    fwd, rev = renyi_both(q, s, 1.0)
    got = mpf(subsampled_gaussian_kl(q, s))
    assert got >= max(fwd, rev)
    assert got <= max(fwd, rev) * (1 + mpf(10) ** -8)
    # the Renyi divergence is non-decreasing in the order and continuous at 1
    near = subsampled_gaussian_rdp(q, s, 1, orders=(1.001, 1.5)).epsilons
    assert got <= near[0] <= near[1]
    assert near[0] <= float(got) * 1.01 + 1e-12


def test_fractional_orders_meet_the_integer_formula() -> None:
    """Just off an integer order the series meets the exact finite binomial sum."""
    for a in (2, 3, 8):
        exact = subsampled_gaussian_rdp(0.02, 1.2, 1, orders=(float(a),)).epsilons[0]
        below, above = subsampled_gaussian_rdp(0.02, 1.2, 1, orders=(a - 1e-7, a + 1e-7)).epsilons
        assert below <= exact * (1 + 1e-9) and exact <= above * (1 + 1e-9)
        assert math.isclose(below, exact, rel_tol=1e-5) and math.isclose(above, exact, rel_tol=1e-5)


def test_default_grid_has_fractional_orders_and_is_tighter() -> None:
    """The default grid (1.1 to 10.9 by 0.1, then integers) gives a smaller epsilon than its
    integer orders alone where the best order is small (sigma 0.7, q 0.02, 300 steps: -2%)."""
    assert 1.5 in RDP_ORDERS and 2.0 in RDP_ORDERS and 512.0 in RDP_ORDERS
    ints = tuple(a for a in RDP_ORDERS if a == int(a))
    full = subsampled_gaussian_rdp(0.02, 0.7, 300).epsilon(1e-5)
    assert full < 0.99 * subsampled_gaussian_rdp(0.02, 0.7, 300, orders=ints).epsilon(1e-5)


def test_bad_orders() -> None:
    with pytest.raises(ValueError, match="orders"):
        subsampled_gaussian_rdp(0.1, 1.0, 1, orders=(1.0,))  # order 1: subsampled_gaussian_kl
    with pytest.raises(ValueError, match="sampling_rate"):
        subsampled_gaussian_kl(0.0, 1.0)
    with pytest.raises(ValueError, match="orders"):
        subsampled_gaussian_rdp(0.1, 1.0, 1, orders=(math.nan,))
    with pytest.raises(TypeError, match="orders"):
        subsampled_gaussian_rdp(0.1, 1.0, 1, orders=("2",))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="orders"):
        subsampled_gaussian_rdp(0.1, 1.0, 1, orders=[])
