"""The logistic loss model (``accountant.pld.models.logistic``), added as one file: its PLD, its
trade-off curve and its subsampling bracket the exact values computed independently in mpmath
from the closed form of the loss threshold, and it round-trips through serialisation."""

from __future__ import annotations

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mpf

from accountant import PLD, guarantee_from_dict, guarantee_to_dict, subsample
from accountant.pld.models.logistic import LogisticPair

DPS = 40


def sigmoid(y: mpf) -> mpf:
    return 1 / (1 + mpmath.exp(-y))


def threshold(a: mpf, g: mpf) -> mpf:
    """The x with f(x - a) / f(x) = e^g for the logistic density f = s(x) s(-x), solved anew:
    with t = e^x the ratio is e^{-a} (1 + t)^2 / (1 + t e^{-a})^2, so sqrt(e^g) (1 + t e^{-a}) =
    e^{-a/2} (1 + t)."""
    c = mpmath.exp(g / 2)
    t = (c - mpmath.exp(-a / 2)) / (mpmath.exp(-a / 2) - c * mpmath.exp(-a))
    return mpmath.log(t)


def loss(a: mpf, x: mpf) -> mpf:
    def f(y: mpf) -> mpf:
        return sigmoid(y) * sigmoid(-y)

    return mpmath.log(f(x - a) / f(x))


def exact_delta(a: float, eps: float, rate: float = 1.0, order: str = "remove") -> mpf:
    """delta(eps) of (P, (1-r)P + rQ) ("remove") or ((1-r)P + rQ, P) ("add"), P = Logistic(0),
    Q = Logistic(a), by integrating (B - e^eps A)_+ over the half-line where it is positive
    (the likelihood ratio is monotone; its end found in mpmath and checked against the loss)."""
    with mpmath.workdps(DPS):
        am, e, r = mpf(a), mpf(eps), mpf(rate)
        # region of the remove order: 1 - r + r e^L > e^eps; of the add order: 1 - r + r e^L
        # < e^-eps. L spans (-a, a)
        if order == "remove":
            target = (mpmath.exp(e) - 1 + r) / r
        else:
            target = (mpmath.exp(-e) - 1 + r) / r
        if target <= 0:
            g = -mpmath.inf
        else:
            g = mpmath.log(target)
        def p_tail(x: mpf) -> mpf:  # P(X > x)
            return sigmoid(-x)

        def q_tail(x: mpf) -> mpf:  # Q(X > x)
            return sigmoid(a - x)

        if order == "remove":
            if g >= am:
                return mpf(0)
            x = -mpmath.inf if g <= -am else threshold(am, g)
            mix = (1 - r) * p_tail(x) + r * q_tail(x)
            return mix - mpmath.exp(e) * p_tail(x)
        # add: A = mix, B = P, region L < g: x < x*(g)
        if g <= -am:
            return mpf(0)
        x = mpmath.inf if g >= am else threshold(am, g)
        mix_below = (1 - r) * (1 - p_tail(x)) + r * (1 - q_tail(x))
        return (1 - p_tail(x)) - mpmath.exp(e) * mix_below


def test_threshold_solves_the_loss_equation() -> None:
    with mpmath.workdps(DPS):
        for a, g in ((0.3, 0.1), (2.0, -1.5), (7.0, 6.9)):
            x = threshold(mpf(a), mpf(g))
            assert abs(loss(mpf(a), x) - g) < mpf(10) ** -30


@settings(max_examples=25, deadline=None)
@given(st.floats(0.01, 8.0), st.floats(0.0, 0.999))
def test_pld_brackets_the_exact_profile(a: float, frac: float) -> None:
    eps = frac * a
    lo, hi = PLD.from_pair(LogisticPair(a)).delta_bracket(eps)
    exact = exact_delta(a, eps)
    assert lo <= exact <= hi


@pytest.mark.parametrize(("a", "rate", "eps"), [(1.0, 0.01, 0.005), (3.0, 0.1, 0.2),
                                                 (0.5, 0.5, 0.1), (5.0, 0.001, 0.0)])
def test_poisson_subsampling_brackets_both_orders(a: float, rate: float, eps: float) -> None:
    pld = subsample(PLD.from_pair(LogisticPair(a)), rate)
    lo, hi = pld.delta_bracket(eps)
    exact = max(exact_delta(a, eps, rate, "remove"), exact_delta(a, eps, rate, "add"))
    assert lo <= exact <= hi
    # composed, the certified bracket is as narrow as the grid promises (tol sets it; measured
    # 0.28-0.78 tol for 100 steps of these four)
    composed = pld.self_compose(100)
    e_lo, e_hi = composed.epsilon_bracket(1e-6)
    assert 0.0 <= e_hi - e_lo <= 2.0 * composed.tol


def test_two_fold_composition_brackets_the_quadrature() -> None:
    """delta_2(eps) = E_Q[delta_1(eps - L(X))], X ~ Logistic(a) (a one-dimensional quadrature
    of the exact one-step profile, extended to negative arguments by 1 - e^t for t <= -a)."""
    a, eps = 1.5, 1.2
    with mpmath.workdps(30):
        am = mpf(a)

        def one(t: mpf) -> mpf:
            if t <= -am:
                return 1 - mpmath.exp(t)
            return exact_delta(a, float(t)) if t < am else mpf(0)

        def q_density(x: mpf) -> mpf:
            return sigmoid(x - am) * sigmoid(am - x)

        # the integrand is 0 where L(x) <= eps - a, i.e. below the threshold at eps - a
        start = threshold(am, mpf(eps) - am)
        two = mpmath.quad(lambda x: q_density(x) * one(mpf(eps) - loss(am, x)),
                          [start, am, am + 40])
    lo, hi = PLD.from_pair(LogisticPair(a), count=2).delta_bracket(eps)
    assert lo - 1e-12 <= two <= hi + 1e-12


def test_curve_lies_below_the_exact_tradeoff() -> None:
    """The PLD's f-DP curve is a lower bound of the exact curve: at each threshold x the
    Neyman-Pearson test {X > x} has type I error P(X > x) and type II Q(X <= x)."""
    a = 2.0
    curve = PLD.from_pair(LogisticPair(a)).tradeoff
    with mpmath.workdps(DPS):
        for x in (-3.0, -1.0, 0.0, 0.7, 1.9, 4.0):
            alpha, beta = sigmoid(-mpf(x)), 1 - sigmoid(mpf(a) - x)
            assert float(curve(float(alpha))) <= beta + 1e-15


def test_serialises_and_validates() -> None:
    pld = PLD.from_pair(LogisticPair(0.8), count=3)
    back = guarantee_from_dict(guarantee_to_dict(pld))
    assert isinstance(back, PLD) and back.epsilon(1e-6) == pld.epsilon(1e-6)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="a must lie in"):
            LogisticPair(bad)
