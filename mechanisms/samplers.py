"""Exact samplers for integer noise (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for
differential privacy", Algorithms 1-3).

Every random decision is a comparison of a uniform random *integer* with an integer: Bernoulli(p)
for a rational p = a/b draws U uniform on {0, ..., b-1} and returns U < a. Parameters are
``fractions.Fraction`` and all arithmetic is on Python integers, so the output law is exactly the
stated pmf (up to the quality of the Generator's bits); no floating-point rounding enters, and the
attack of Mironov (2012) on floating-point Laplace noise does not apply.

The batch functions loop in Python over draws: exactness was preferred over speed (roughly
10-50 microseconds per draw). numpy's own geometric/Laplace draws go through floating-point logs and
are not used.
"""

from __future__ import annotations

from fractions import Fraction
from math import isqrt

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "bernoulli_exp_neg",
    "bernoulli_rational",
    "discrete_gaussian",
    "discrete_gaussian_array",
    "discrete_laplace",
    "discrete_laplace_array",
    "uniform_below",
]

_INT64_LIMIT = 2**63 - 1


def uniform_below(rng: np.random.Generator, n: int) -> int:
    """A uniform integer on {0, ..., n - 1}, for any positive Python int ``n`` (rejection on 64-bit
    words beyond the range numpy's ``integers`` accepts)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if n <= _INT64_LIMIT:
        return int(rng.integers(0, n))
    bits = (n - 1).bit_length()
    words = -(-bits // 64)
    while True:
        raw = rng.integers(0, 2**64, size=words, dtype=np.uint64, endpoint=False)
        value = 0
        for w in raw.tolist():
            value = (value << 64) | int(w)
        value >>= words * 64 - bits
        if value < n:
            return value


def bernoulli_rational(rng: np.random.Generator, p: Fraction) -> bool:
    """Bernoulli(p) for rational p in [0, 1], exactly."""
    if not 0 <= p <= 1:
        raise ValueError(f"p must lie in [0, 1], got {p}")
    return uniform_below(rng, p.denominator) < p.numerator


def bernoulli_exp_neg(rng: np.random.Generator, gamma: Fraction) -> bool:
    """Bernoulli(exp(-gamma)) for rational gamma >= 0, exactly (CKS 2020, Algorithm 1).

    For gamma in [0, 1]: draw A_k ~ Bernoulli(gamma/k) for k = 1, 2, ... until the first A_K = 0 and
    return [K odd]; P(K > k) = gamma^k/k!, so P(K odd) = sum (-gamma)^j/j! = exp(-gamma).
    For gamma > 1: exp(-gamma) = exp(-1)^floor(gamma) exp(-(gamma - floor(gamma))).
    """
    gamma = Fraction(gamma)
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma}")
    if gamma > 1:
        whole = gamma.numerator // gamma.denominator
        one = Fraction(1)
        for _ in range(whole):
            if not bernoulli_exp_neg(rng, one):
                return False
        return bernoulli_exp_neg(rng, gamma - whole)
    k = 1
    while bernoulli_rational(rng, gamma / k):
        k += 1
    return k % 2 == 1


def discrete_laplace(rng: np.random.Generator, scale: Fraction) -> int:
    """Y with P(Y = y) proportional to exp(-|y|/scale) on the integers (CKS 2020, Algorithm 2).

    With scale = t/s: U uniform on {0..t-1} kept with probability exp(-U/t) and V geometric
    (P(V = v) proportional to e^-v) make X = U + tV with P(X = x) proportional to exp(-x/t);
    Y = floor(X/s) then has P(Y = y) proportional to exp(-y s/t); a fair sign is attached, rejecting
    the negative zero.
    """
    scale = Fraction(scale)
    if scale <= 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    t, s = scale.numerator, scale.denominator
    one = Fraction(1)
    while True:
        u = uniform_below(rng, t)
        if not bernoulli_exp_neg(rng, Fraction(u, t)):
            continue
        v = 0
        while bernoulli_exp_neg(rng, one):
            v += 1
        y = (u + t * v) // s
        negative = uniform_below(rng, 2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def discrete_gaussian(rng: np.random.Generator, sigma2: Fraction) -> int:
    """Y with P(Y = y) proportional to exp(-y^2/(2 sigma2)) on the integers (CKS 2020, Algorithm 3).

    Proposals Y ~ discrete Laplace with scale t = floor(sigma) + 1 are accepted with probability
    exp(-(|Y| - sigma2/t)^2/(2 sigma2)), a rational exponent, so the acceptance is exact.
    """
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValueError(f"sigma2 must be > 0, got {sigma2}")
    t = isqrt(sigma2.numerator // sigma2.denominator) + 1  # floor(sqrt(sigma2)) + 1
    shift = sigma2 / t
    while True:
        y = discrete_laplace(rng, Fraction(t))
        if bernoulli_exp_neg(rng, (abs(y) - shift) ** 2 / (2 * sigma2)):
            return y


def discrete_laplace_array(rng: np.random.Generator, scale: Fraction,
                           shape: tuple[int, ...]) -> NDArray[np.int64]:
    """An array of independent exact discrete Laplace draws."""
    count = int(np.prod(shape, dtype=np.int64))
    out = np.fromiter((discrete_laplace(rng, scale) for _ in range(count)), dtype=np.int64, count=count)
    return out.reshape(shape)


def discrete_gaussian_array(rng: np.random.Generator, sigma2: Fraction,
                            shape: tuple[int, ...]) -> NDArray[np.int64]:
    """An array of independent exact discrete Gaussian draws."""
    count = int(np.prod(shape, dtype=np.int64))
    out = np.fromiter((discrete_gaussian(rng, sigma2) for _ in range(count)), dtype=np.int64, count=count)
    return out.reshape(shape)
