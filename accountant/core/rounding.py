"""Outward rounding of computed values: sums, quotients and elementary functions rounded up or down so
that an upper bound stays one, with the float64 library error ``LIBM_REL`` every bound reads.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from fractions import Fraction
from functools import lru_cache

import mpmath

from accountant.core.validation import check_real

#: Largest error, in ulp of the result, of the float64 elementary functions the accountant calls
#: (numpy's and math's exp, log, expm1, log1p, and what is built on them: logaddexp, expit): numpy's
#: SIMD kernels (SVML, on AVX-512 machines) err by up to 4 ulp (numpy PR 19478 documents the
#: maximum ULP error); glibc's are below 1 ulp. Every bound on such a result reads it.
LIBM_ULP = 4


#: The relative error that allows a result y: LIBM_ULP ulp(y) <= LIBM_ULP 2^-52 |y|.
LIBM_REL = LIBM_ULP * 2.0 ** -52


def round_up(value: mpmath.mpf) -> float:
    """The smallest double >= ``value`` (an mpmath number); at least the smallest subnormal when
    ``value`` > 0, so a positive quantity is never reported as 0."""
    f = float(value)
    if mpmath.mpf(f) < value:
        f = math.nextafter(f, math.inf)
    return math.nextafter(0.0, 1.0) if f == 0.0 and value > 0 else f


def sum_up(values: Iterable[float], weights: Iterable[float] | None = None) -> float:
    """The smallest double >= the exact sum of ``weights[i] * values[i]`` (non-negative
    weights), in rationals: for bounds that add up (basic composition, RDP per order, zCDP)."""
    vs = [float(v) for v in values]
    ws = [1.0] * len(vs) if weights is None else [float(w) for w in weights]
    if any(math.isinf(v) for v in vs) or any(math.isinf(w) for w in ws):
        return math.inf
    exact = sum((Fraction(v) * Fraction(w) for v, w in zip(vs, ws, strict=True)), Fraction(0))
    if exact >= Fraction(2) ** 1024:
        return math.inf
    f = float(exact)
    return math.nextafter(f, math.inf) if Fraction(f) < exact else f


@lru_cache(maxsize=256)
def exp_rn(x: float) -> float:
    """e^x rounded to nearest (mpmath at 40 digits): a scalar constant within u = 2^-53 of its
    value whatever the platform's libm, where LIBM_REL would be charged per use (the recursions of
    the optimistic construction multiply by e^{-h} once per grid point). Kept for the last 256
    arguments: a composition asks for the same few grid widths' constants many times."""
    with mpmath.workdps(40):
        return float(mpmath.exp(mpmath.mpf(x)))


@lru_cache(maxsize=256)
def expm1_rn(x: float) -> float:
    """e^x - 1 rounded to nearest (mpmath at 40 digits; kept as ``exp_rn``)."""
    with mpmath.workdps(40):
        return float(mpmath.expm1(mpmath.mpf(x)))


def div_up(numerator: float, denominator: float) -> float:
    """The smallest double >= numerator / denominator (numerator >= 0, denominator > 0, both
    finite), checked in rationals: a parameter computed as a quotient (mu = Delta / sigma,
    eps = Delta / b) must not round to the optimistic side (a Laplace's top atom an ulp low made
    delta 0 where the truth is 7e-19)."""
    a, b = _quotient_args(numerator, denominator)
    q = a / b
    if math.isinf(q):
        return q
    return math.nextafter(q, math.inf) if Fraction(q) * Fraction(b) < Fraction(a) else q


def div_down(numerator: float, denominator: float) -> float:
    """The largest double <= numerator / denominator (as ``div_up``): a noise scale computed as a
    quotient must not round up."""
    a, b = _quotient_args(numerator, denominator)
    q = a / b
    if math.isinf(q):
        return sys.float_info.max
    return math.nextafter(q, 0.0) if Fraction(q) * Fraction(b) > Fraction(a) else q


def _quotient_args(numerator: float, denominator: float) -> tuple[float, float]:
    return (check_real("numerator", numerator, low=0.0, high=math.inf, high_open=True),
            check_real("denominator", denominator, low=0.0, low_open=True, high=math.inf,
                       high_open=True))


def hypot_up(values: Iterable[float], weights: Iterable[int] | None = None) -> float:
    """The smallest double >= sqrt(sum weights[i] values[i]^2), the mu of composed GDP
    [@dong2022gaussian, Cor. 3.3], from the exact rational sum and a 50-digit square root."""
    vs = [Fraction(float(v)) for v in values]
    ws = [1] * len(vs) if weights is None else list(weights)
    exact = sum((v * v * w for v, w in zip(vs, ws, strict=True)), Fraction(0))
    with mpmath.workdps(50):
        f = round_up(mpmath.sqrt(mpmath.mpf(exact.numerator) / exact.denominator))
    while Fraction(f) ** 2 < exact:  # verified in rationals
        f = math.nextafter(f, math.inf)
    return f


def round_down(value: mpmath.mpf) -> float:
    """The largest double <= ``value`` (an mpmath number)."""
    f = float(value)
    return math.nextafter(f, -math.inf) if mpmath.mpf(f) > value else f
