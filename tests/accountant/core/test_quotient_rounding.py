"""Parameters computed as quotients (mu = Delta / sigma, eps = Delta / b, a scale 1 / a) are
rounded to the safe side (``div_up``, ``div_down``): a Laplace's top atom an ulp below its exact
place made delta exactly 0 where the truth is positive (the soundness campaign's near-atom probes,
``benchmarks/soundness.py``). Goldens: exact rationals, and the k-fold Laplace profile of
``references.LaplaceRef`` (mpmath)."""

from __future__ import annotations

import math
import sys
from fractions import Fraction

from hypothesis import example, given, settings
from hypothesis import strategies as st
from mpmath import mpf

from accountant import PLD, GaussianPair, MixtureGaussianPair, SubsampledPair, div_up, subsampled_gaussian
from accountant.core.rounding import div_down
from accountant.pld.models.mixture import MixtureDirection
from tests.support.references import GaussianMixtureRef, LaplaceRef

positive = st.floats(1e-300, 1e300, allow_nan=False, allow_infinity=False)


@given(positive, positive)
def test_div_up_and_down_are_the_nearest_safe_doubles(a: float, b: float) -> None:
    exact = Fraction(a) / Fraction(b)
    up, down = div_up(a, b), div_down(a, b)
    if math.isfinite(up):
        assert Fraction(up) >= exact > Fraction(math.nextafter(up, -math.inf))
    if 0.0 < down < sys.float_info.max:
        assert Fraction(down) <= exact < Fraction(math.nextafter(down, math.inf))
    assert Fraction(down) <= exact


def _below(x: Fraction) -> float:
    """The largest double <= x."""
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


@settings(max_examples=40, deadline=None)
@given(st.floats(0.05, 100.0), st.integers(1, 3))
@example(24.874072844359056, 1)  # delta 0.0 at eps = 0.04020250347649762, exact 7.05e-19
@example(0.9058233348059229, 5)  # delta 0.0 at eps = 5.519840136455829, exact 7.18e-18
def test_laplace_top_atom_is_not_rounded_down(scale: float, k: int) -> None:
    """At the largest double at or below the k-fold Laplace's top atom k / b (exact), the exact
    delta is positive or 0; the reported one must not be below it."""
    pld = PLD.laplace(scale).self_compose(k) if k > 1 else PLD.laplace(scale)
    eps = _below(Fraction(k) / Fraction(scale))
    true = LaplaceRef(1 / mpf(scale), k).delta(mpf(eps))
    assert mpf(pld.delta(eps)) >= true, (eps, pld.delta(eps), float(true))


@given(st.floats(1e-2, 1e3), st.floats(1e-3, 1e2))
def test_gaussian_mu_is_rounded_up(sigma: float, sensitivity: float) -> None:
    """PLD.gaussian's and subsampled_gaussian's mu are at least Delta / sigma, exactly."""
    exact = Fraction(sensitivity) / Fraction(sigma)
    (pair, _), = PLD.gaussian(sigma, sensitivity).factors
    assert isinstance(pair, GaussianPair) and Fraction(pair.mu) >= exact
    (sub, _), = subsampled_gaussian(sigma, 0.5, sensitivity).factors
    assert isinstance(sub, SubsampledPair) and isinstance(sub.base, GaussianPair)
    assert Fraction(sub.base.mu) >= exact


@given(st.floats(1e-2, 1e2), st.lists(st.floats(0.0, 1e2), min_size=1, max_size=3))
def test_mixture_means_are_rounded_up(sigma: float, sens: list[float]) -> None:
    """MixtureGaussianPair's means are at least s_i / sigma, exactly (delta grows with each)."""
    sens = [*sens, 1.0]
    pair = MixtureGaussianPair(sigma, tuple(sens), tuple([1.0 / len(sens)] * len(sens)))
    rem, _ = pair.directions()
    assert isinstance(rem, MixtureDirection)
    for mean, s in zip(rem.q_means, sens, strict=True):
        assert Fraction(mean) >= Fraction(s) / Fraction(sigma)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.one_of(st.just(0.0), st.floats(1e-3, 3.0)), min_size=1, max_size=3),
       st.integers(0, 2), st.floats(-1.0, 3.0))
def test_mixture_delta_grows_with_each_mean(means: list[float], j: int, eps: float) -> None:
    """What makes rounding the means up safe: the exact delta (mpmath, ``GaussianMixtureRef``) of
    (N(0, 1), sum_i w_i N(m_i, 1)) and of its reverse does not decrease when one m_j grows. (The
    reference's root finding does not end on a subnormal mean: means are 0 or >= 1e-3.)"""
    means = [*means, 1.0]
    j = j % len(means)
    w = mpf(1) / len(means)
    bigger = [m + 0.25 if i == j else m for i, m in enumerate(means)]
    qa, qb = [(mpf(m), w) for m in means], [(mpf(m), w) for m in bigger]
    p0, e = [(mpf(0), mpf(1))], mpf(eps)
    assert GaussianMixtureRef(p0, qb).delta(e) >= GaussianMixtureRef(p0, qa).delta(e)
    assert (GaussianMixtureRef([(-m, x) for m, x in qb], p0).delta(e)
            >= GaussianMixtureRef([(-m, x) for m, x in qa], p0).delta(e))
