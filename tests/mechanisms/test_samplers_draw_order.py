"""The integer-pair scalar samplers make exactly the draws of Canonne, Kamath & Steinke's algorithms
written with ``fractions.Fraction`` [@canonne2020discrete, Algorithms 1-3].

The reference below is a direct transcription of the algorithms in Fraction arithmetic (every
Bernoulli(p) is "uniform integer below p's reduced denominator is below its numerator", drawn with
``uniform_below``, the package's primitive). Run on generators with the same seed, the package's
samplers must return the same values and leave the generator in the same state: the same draws in
the same order, hence the same exact output law (checked against the pmf in ``test_mechanisms_samplers.py``).
The lattice mechanisms keep their constants after the first release; their releases must stay the
lattice release computed from the public constants.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from math import isqrt
from typing import Any

import numpy as np
import pytest

from accountant import ZCDP, PureDP
from mechanisms import Domain, Gaussian, Laplace, Mean
from mechanisms.samplers import (
    VEC_MIN_COUNT,
    bernoulli_exp_neg,
    discrete_gaussian,
    discrete_gaussian_array,
    discrete_laplace,
    discrete_laplace_array,
    from_lattice,
    to_lattice,
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


def release_by_hand(mech: Any, x: np.ndarray, seed: int, m: int) -> np.ndarray:
    """gamma (round(q/gamma) + Z) from the mechanism's public lattice constants, computed afresh."""
    e = mech.grid_exponent()
    idx = to_lattice(mech.query(x), e)
    rng = np.random.default_rng(seed)
    if isinstance(mech, Laplace):
        z = discrete_laplace_array(rng, Fraction(mech.lattice_scale()), (m, idx.size))
    else:
        z = discrete_gaussian_array(rng, Fraction(mech.lattice_variance()), (m, idx.size))
    return from_lattice(idx[None, :] + z, e).reshape((m, *mech.output.shape))


@pytest.mark.parametrize("make", [
    lambda n, d: Laplace.calibrated(Mean(Domain(-10, 10, n, d=d, clip=True)), PureDP(1.0)),
    lambda n, d: Gaussian.calibrated(Mean(Domain(-10, 10, n, d=d, clip=True)), ZCDP(0.5)),
])
@pytest.mark.parametrize("d", [1, 3])
def test_mechanism_release_is_the_lattice_release(make: Any, d: int) -> None:
    """The constants kept on the (frozen) mechanism after its first release are those its public
    methods compute: repeated releases equal the release written out by hand, draw for draw, and a
    ``replace``d scale gets its own constants."""
    mech = make(200, d)
    x = np.random.default_rng(0).normal(size=(200, d) if d > 1 else 200)
    rng = np.random.default_rng(5)
    first = [mech.sample(x, rng) for _ in range(3)]  # the calls after the first use the kept constants
    by_hand = release_by_hand(mech, x, 5, 1)[0]
    assert np.array_equal(first[0], by_hand)
    rng2 = np.random.default_rng(5)
    for i, y in enumerate(first):
        assert np.array_equal(mech.sample(x, rng2), y), i
    assert np.array_equal(mech.sample(x, np.random.default_rng(9), size=4), release_by_hand(mech, x, 9, 4))
    wider = replace(mech, scale=mech.scale * 1000)
    assert wider.grid_exponent() > mech.grid_exponent()
    assert np.array_equal(wider.sample(x, np.random.default_rng(3), size=2), release_by_hand(wider, x, 3, 2))
    assert mech == replace(mech) and hash(mech) == hash(replace(mech))
