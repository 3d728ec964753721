"""Poisson subsampling of a finite pair whose losses carry a declared error (``loss_atol``; the
discrete Laplace and Gaussian pairs): the mixed atoms are formed from the base's atoms, moved up
(pessimistic) or down (optimistic) by that error, and must still bound the exact mixed atoms,
masses within the declared ``mass_rtol`` and losses on the right side, in both directions.
Goldens: the pairs' exact pmfs in mpmath (40 digits) and the mixtures (P, (1-r)P + rQ),
((1-r)P + rQ, P) [@zhu2022optimal, Thm 11] formed from them."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from accountant import FiniteLossTradeoff, subsample
from accountant.notions.discrete_gaussian import discrete_gaussian_window
from accountant.pld.distribution import PLD
from accountant.pld.laws.finite import FiniteDirection
from accountant.pld.models.base import Pair
from accountant.pld.models.discrete import PAIR_GAUSSIAN_TAIL, DiscreteGaussianPair, DiscreteLaplacePair
from accountant.pld.models.finite import ApproxDPPair, RandomizedResponsePair
from accountant.pld.subsampling import SubsampledPair

mpf = mpmath.mpf
Atom = tuple[mpmath.mpf, mpmath.mpf]  # (P-mass, Q-mass) of one base atom


def laplace_atoms(b: float, shift: int) -> list[Atom]:
    """The discrete Laplace pair's atoms in the order of its curve (loss descending): y >= shift,
    y = shift - 1, ..., 1, and y <= 0 (P = DLap(b), Q = shift + DLap(b))."""
    t = mpmath.exp(-1 / mpf(b))
    z = (1 + t) / (1 - t)

    def ge(k: int) -> mpmath.mpf:  # P(X >= k), k >= 0
        return t ** k / (1 - t) / z

    top = (ge(shift), ge(0))
    mid = [(t ** y / z, t ** (shift - y) / z) for y in range(shift - 1, 0, -1)]
    return [top, *mid, (1 - ge(1), ge(shift))]


def gaussian_atoms(sigma: float, shift: int) -> list[Atom]:
    """The discrete Gaussian pair's atoms in the order of its curve: y from shift + m down to -m
    over its window (``discrete_gaussian_window``), P = N_Z(0, sigma^2), Q = shift + P."""
    s2 = Fraction(sigma) ** 2
    m = discrete_gaussian_window(s2, PAIR_GAUSSIAN_TAIL)
    big = shift + m + int(40 * sigma) + 10
    sig2 = mpf(s2.numerator) / s2.denominator
    w = {k: mpmath.exp(-mpf(k * k) / (2 * sig2)) for k in range(-big, big + 1)}
    z = mpmath.fsum(w.values())
    return [(w[y] / z, w[y - shift] / z) for y in range(shift + m, -m - 1, -1)]


def check_atoms(pair: Pair, base_q: np.ndarray, atoms: list[Atom], r: float) -> None:
    """Each direction's atom i is the mixture of base atom i (then the rest's atom): the
    pessimistic one at or above the exact loss with at least the exact mass less mass_rtol, the
    optimistic one at or below with at most the exact mass plus mass_rtol."""
    rem, add = SubsampledPair(pair, r).directions()
    rr = mpf(r)
    for d, sign in ((rem, 1), (add, -1)):
        assert isinstance(d, FiniteDirection)
        exact = [(sign * mpmath.log((1 - rr) + rr * q / p), (1 - rr) * p + rr * q if sign > 0 else p)
                 for p, q in atoms]
        rtol = d.mass_rtol
        for losses, masses, side in ((d.losses, d.q, 1), (d.opt_losses, d.opt_q, -1)):
            for i, (loss, mass) in enumerate(exact):
                if base_q[i] == 0.0:  # not held by the base: charged at +inf
                    continue
                held_l, held_m = mpf(float(losses[i])), mpf(float(masses[i]))
                assert side * (held_l - loss) >= 0, (i, side, float(held_l), float(loss))
                assert side * (held_m - mass) >= -rtol * mass, (i, side, float(held_m / mass - 1))


@given(st.floats(0.05, 3.0), st.integers(1, 6), st.floats(0.0, 20.0), st.integers(2, 9),
       st.floats(0.0, 0.5))
def test_finite_pairs_declare_their_masses_error(b: float, shift: int, eps: float, k: int,
                                                 delta: float) -> None:
    """A finite pair's directions carry its curve's declared mass error. The discrete Laplace
    pair dropped its 3 u shift / b + 4 LIBM_REL (the exponents k log r err by 3 u shift / b) and
    k-ary randomized response its 10 MACHINE_EPSILON, for the default 8 MACHINE_EPSILON: numpy's SIMD
    exp rounds an element differently with the array's alignment, and CI once measured a subsampled discrete
    Laplace atom (b 0.0608, shift 5) 2.5e-15 relative above its exact mass, 1.8e-15 allowed."""
    for pair, f in ((DiscreteLaplacePair(b, shift), FiniteLossTradeoff.discrete_laplace(b, shift)),
                    (RandomizedResponsePair(eps, k), FiniteLossTradeoff.randomized_response(eps, k)),
                    (ApproxDPPair(eps, delta), FiniteLossTradeoff.approx_dp(eps, delta))):
        direction = pair.directions()[0]
        assert direction.mass_rtol >= f.mass_rtol  # type: ignore[attr-defined]


@settings(max_examples=20, deadline=None)
@given(st.floats(0.05, 3.0), st.integers(1, 6), st.floats(0.01, 0.99))
# large shift / scale: the losses' error 2 u shift / b moved the P-masses by 4 u shift / b
# relatively (160 u here), against the 16 u charged, and the add losses by ~2 u shift / b
@example(0.1, 4, 0.5)
def test_subsampled_laplace_atoms(b: float, shift: int, r: float) -> None:
    f = FiniteLossTradeoff.discrete_laplace(b, shift)
    with mpmath.workdps(40):
        check_atoms(DiscreteLaplacePair(b, shift), f.q_masses, laplace_atoms(b, shift), r)


@settings(max_examples=10, deadline=None)
@given(st.floats(0.4, 3.0), st.integers(1, 5), st.floats(0.01, 0.99))
@example(0.5, 4, 0.5)  # shift 8 sigma: loss_atol ~ 2e-13 far above the masses' declared error
def test_subsampled_gaussian_atoms(sigma: float, shift: int, r: float) -> None:
    f = FiniteLossTradeoff.discrete_gaussian(Fraction(sigma) ** 2, shift, tail=PAIR_GAUSSIAN_TAIL)
    with mpmath.workdps(40):
        check_atoms(DiscreteGaussianPair(sigma, shift), f.q_masses, gaussian_atoms(sigma, shift), r)


def mixture_delta(atoms: list[Atom], r: float, eps: float, direction: str) -> mpmath.mpf:
    """H_{e^eps}(M || P) (remove) or H_{e^eps}(P || M) (add) summed over the base atoms: exact,
    the atoms pooling outcomes of one likelihood ratio."""
    rr, e = mpf(r), mpmath.exp(mpf(eps))
    pairs = [((1 - rr) * p + rr * q, p) for p, q in atoms]
    if direction == "add":
        pairs = [(b, a) for a, b in pairs]
    return mpmath.fsum(max(a - e * b, 0) for a, b in pairs)


@pytest.mark.parametrize(("pld", "atoms", "r"), [
    (PLD.from_pair(DiscreteLaplacePair(0.1, 4)), lambda: laplace_atoms(0.1, 4), 0.5),
    (PLD.discrete_gaussian(0.5, 4), lambda: gaussian_atoms(0.5, 4), 0.3),
], ids=["laplace", "gaussian"])
def test_subsampled_brackets_the_exact(pld: PLD, atoms, r: float) -> None:  # type: ignore[no-untyped-def]
    """Each direction's laws bracket the exact mixture's delta, from eps = 0 to the far tail."""
    sub = subsample(pld, r)
    with mpmath.workdps(40):
        base = atoms()
        tops = [math.log1p(r * math.expm1(float(mpmath.log(q / p)))) for p, q in base]
        for direction in ("remove", "add"):
            top = max(tops) if direction == "remove" else -math.log1p(-r)
            for eps in (0.0, 0.01, 0.1 * top, 0.5 * top, 0.9 * top, top * (1 - 1e-9)):
                exact = mixture_delta(base, r, eps, direction)
                lower = sub.law(direction, False).delta(eps)
                upper = sub.law(direction, True).delta(eps)
                assert lower <= exact <= upper, (direction, eps, lower, float(exact), upper)
