"""Parameters computed as quotients (mu = Delta / sigma, eps = Delta / b, a scale 1 / a) are
rounded to the safe side (``div_up``, ``div_down``): a Laplace's top atom an ulp below its exact
place made delta exactly 0 where the truth is positive (the soundness campaign's near-atom probes,
``benchmarks/soundness.py``). Goldens: exact rationals, and the k-fold Laplace profile of
``references.LaplaceRef`` (mpmath)."""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st
from mpmath import mpf

from accountant import PLD, GaussianPair, div_up, subsampled_gaussian
from accountant._numeric import div_down

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from references import LaplaceRef

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
    assert Fraction(sub.base.mu) >= exact
