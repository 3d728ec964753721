"""The integer-pair scalar samplers make exactly the draws of Canonne, Kamath & Steinke's algorithms
written with ``fractions.Fraction`` [@canonne2020discrete, Algorithms 1-3].

The reference below is a direct transcription of the algorithms in Fraction arithmetic (every
Bernoulli(p) is "uniform integer below p's reduced denominator is below its numerator", drawn with
``uniform_below``, the package's primitive). Run on generators with the same seed, the package's
samplers must return the same values and leave the generator in the same state: the same draws in
the same order, hence the same exact output law (checked against the pmf in ``test_mechanisms_samplers.py``).
"""

from __future__ import annotations

from fractions import Fraction
from math import isqrt

import numpy as np
import pytest

from mechanisms.samplers import (
    VEC_MIN_COUNT,
    bernoulli_exp_neg,
    discrete_gaussian,
    discrete_gaussian_array,
    discrete_laplace,
    discrete_laplace_array,
    uniform_below,
)


def ref_bernoulli(rng: np.random.Generator, p: Fraction) -> bool:
    return uniform_below(rng, p.denominator) < p.numerator


def ref_bexp(rng: np.random.Generator, gamma: Fraction) -> bool:
    if gamma > 1:
        whole = gamma.numerator // gamma.denominator
        for _ in range(whole):
            if not ref_bexp(rng, Fraction(1)):
                return False
        return ref_bexp(rng, gamma - whole)
    k = 1
    while ref_bernoulli(rng, gamma / k):
        k += 1
    return k % 2 == 1


def ref_laplace(rng: np.random.Generator, scale: Fraction) -> int:
    t, s = scale.numerator, scale.denominator
    while True:
        u = uniform_below(rng, t)
        if not ref_bexp(rng, Fraction(u, t)):
            continue
        v = 0
        while ref_bexp(rng, Fraction(1)):
            v += 1
        y = (u + t * v) // s
        negative = uniform_below(rng, 2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def ref_gaussian(rng: np.random.Generator, sigma2: Fraction) -> int:
    t = isqrt(sigma2.numerator // sigma2.denominator) + 1
    while True:
        y = ref_laplace(rng, Fraction(t))
        if ref_bexp(rng, (abs(y) - sigma2 / t) ** 2 / (2 * sigma2)):
            return y


def same_state(a: np.random.Generator, b: np.random.Generator) -> bool:
    return a.bit_generator.state == b.bit_generator.state


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1), Fraction(3, 7), Fraction(6, 4), Fraction(3),
                                   Fraction(41, 9), Fraction(10**12 + 1, 10**12)])
def test_bernoulli_exp_neg_draws(gamma: Fraction) -> None:
    for seed in range(40):
        a, b = np.random.default_rng(seed), np.random.default_rng(seed)
        assert bernoulli_exp_neg(a, gamma) == ref_bexp(b, gamma)
        assert same_state(a, b)


@pytest.mark.parametrize("scale", [Fraction(1), Fraction(1, 3), Fraction(7, 2), Fraction(83888),
                                   Fraction(10**15 + 7, 3)])
def test_discrete_laplace_draws(scale: Fraction) -> None:
    a, b = np.random.default_rng(11), np.random.default_rng(11)
    ours = [discrete_laplace(a, scale) for _ in range(200)]
    assert ours == [ref_laplace(b, scale) for _ in range(200)]
    assert same_state(a, b)
    count = VEC_MIN_COUNT - 1  # the array function's Python-integer path
    c, d = np.random.default_rng(12), np.random.default_rng(12)
    expected = [ref_laplace(d, scale) for _ in range(count)]
    assert discrete_laplace_array(c, scale, (count,)).tolist() == expected
    assert same_state(c, d)


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), Fraction(2), Fraction(9, 5), Fraction(4096**2),
                                    Fraction(2**90 + 1, 3)])
def test_discrete_gaussian_draws(sigma2: Fraction) -> None:
    a, b = np.random.default_rng(21), np.random.default_rng(21)
    ours = [discrete_gaussian(a, sigma2) for _ in range(100)]
    assert ours == [ref_gaussian(b, sigma2) for _ in range(100)]
    assert same_state(a, b)
    count = VEC_MIN_COUNT - 1
    c, d = np.random.default_rng(22), np.random.default_rng(22)
    assert discrete_gaussian_array(c, sigma2, (count,)).tolist() == [ref_gaussian(d, sigma2)
                                                                      for _ in range(count)]
    assert same_state(c, d)
