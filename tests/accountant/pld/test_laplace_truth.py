"""The exact k-fold Laplace profile behind the W2 tail truths (``benchmarks/accounting_truths.py``,
``LaplaceKFold``) against computations that share none of its algebra: quadrature of the pair's
densities in x (k = 1, both directions), nested quadrature of the convolution of the one-step loss
law (k = 2, 3), and the full-sum closed form ``references.LaplaceRef`` (k = 8, 20), which also checks
the bound on the dropped terms."""

from __future__ import annotations

import math

import mpmath
from mpmath import mpf
from scipy import integrate

from benchmarks.accounting_truths import LaplaceKFold, laplace_epsilon
from tests.support.references import LaplaceRef


def _x_space(b: mpf, eps: float, remove: bool) -> mpf:
    """int (p - e^eps q)_+ dx (remove) or int (q - e^eps p)_+ dx (add), p = Lap(0, b),
    q = Lap(1, b), split where the densities' ratio crosses e^eps."""
    def p(x: mpf) -> mpf:
        return mpmath.exp(-abs(x) / b) / (2 * b)

    def q(x: mpf) -> mpf:
        return mpmath.exp(-abs(x - 1) / b) / (2 * b)

    ee = mpmath.exp(eps)
    if remove:  # log(p/q) = (|x - 1| - |x|)/b > eps  <=>  x < (1 - b eps)/2
        cut = (1 - b * mpf(eps)) / 2
        return mpmath.quad(lambda x: p(x) - ee * q(x), [-mpmath.inf, min(cut, 0), cut])
    cut = (1 + b * mpf(eps)) / 2
    return mpmath.quad(lambda x: q(x) - ee * p(x), [cut, max(cut, 1), mpmath.inf])


def test_one_step_against_densities_both_directions() -> None:
    with mpmath.workdps(40):
        for b in (mpf(10), mpf(10) / 7):
            eps0 = float(1 / b)
            ref = LaplaceKFold(1 / b, 1)
            for eps in (-0.05, 0.0, 0.04, 0.3 * eps0, 0.99 * eps0):
                value = ref.delta(mpf(eps))
                for remove in (True, False):
                    assert abs(value - _x_space(b, eps, remove)) <= mpf(1e-30), (b, eps)


def _convolved(eps0: float, k: int, eps: float) -> float:
    """E[(1 - e^{eps - L_1 - ... - L_k})_+] by the recursion G_r(s) = E[G_{r-1}(s + L)]: the
    atoms (1/2 at +eps0, e^-eps0/2 at -eps0) and scipy's quad of the density e^{(l - eps0)/2}/4
    on (-eps0, eps0), split at the kinks of G_{r-1} (s + l = eps - t eps0)."""

    def g(r: int, s: float) -> float:
        if r == 0:
            return max(0.0, -math.expm1(eps - s))
        pts = [eps - t * eps0 - s for t in range(-r + 1, r)]
        inner = [x for x in pts if -eps0 < x < eps0]
        cont = integrate.quad(lambda x: g(r - 1, s + x) * math.exp((x - eps0) / 2) / 4, -eps0, eps0,
                              points=inner or None, epsabs=0.0, epsrel=1e-13, limit=200)[0]
        return 0.5 * g(r - 1, s + eps0) + 0.5 * math.exp(-eps0) * g(r - 1, s - eps0) + cont

    return g(k, 0.0)


def test_two_and_three_steps_against_nested_quadrature() -> None:
    with mpmath.workdps(40):
        for eps0, k, eps in ((0.7, 2, 0.2), (0.7, 2, 1.1), (0.7, 3, 0.5), (0.7, 3, 1.9),
                             (0.1, 3, 0.17)):
            exact = float(LaplaceKFold(eps0, k).delta(mpf(eps)))
            assert exact > 0
            assert abs(exact - _convolved(eps0, k, eps)) <= 1e-10 * exact, (eps0, k, eps)


def test_against_full_sum_and_dropped_bound() -> None:
    """k = 8: every term kept, equal to LaplaceRef to 1e-30; k = 20 with the terms of more than
    m_max continuous parts dropped (cut 1e-12): LaplaceRef lies in [value, value + dropped]."""
    with mpmath.workdps(60):
        e0 = mpf(1) / 10
        full = LaplaceKFold(e0, 8)
        assert full.m_max == 8 and full.dropped == 0
        for eps in (mpf("0.05"), mpf("0.33"), mpf("0.71")):
            exact = LaplaceRef(e0, 8).delta(eps)
            assert abs(full.delta(eps) - exact) <= mpf(1e-30) * exact
        cut = LaplaceKFold(e0, 20, cut=1e-12)
        assert cut.m_max < 20 and 0 < cut.dropped <= 1e-12
        for eps in (mpf("0.4"), mpf("1.3")):
            exact, value = LaplaceRef(e0, 20).delta(eps), cut.delta(eps)
            assert value <= exact <= value + cut.dropped
            assert exact - value > 0  # the dropped terms do contribute here: the bound is tested


def test_epsilon_inverts_delta() -> None:
    """laplace_epsilon's root has delta(eps) = target (k = 10: fast at 60 digits)."""
    eps = laplace_epsilon(10.0, 10, 1e-6, 0.5, dps=60)
    with mpmath.workdps(60):
        assert abs(LaplaceRef(mpf(1) / 10, 10).delta(eps) / mpf(1e-6) - 1) <= mpf(1e-25)
