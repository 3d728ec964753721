"""Exact samplers (Canonne, Kamath & Steinke 2020).

The Bernoulli primitives are checked *exactly*: a scripted generator enumerates every sequence of
uniform integers the algorithm can draw (up to a depth), each weighted by its exact rational
probability, and the resulting probability of ``True`` is compared with the exact rational value of
the truncated series. The integer samplers are checked on their pmf by chi-square at alpha = 1e-3
(fixed seeds).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from scipy import stats

from mechanisms import samplers
from mechanisms.samplers import (
    bernoulli_exp_neg,
    bernoulli_exp_neg_vec,
    bernoulli_rational,
    discrete_gaussian_array,
    discrete_laplace_array,
    uniform_below,
)

ALPHA = 1e-3


class _NeedChoice(Exception):
    def __init__(self, high: int) -> None:
        self.high = high


class ScriptedRng:
    """Stands in for a Generator: ``integers(0, high)`` returns the next scripted value, or asks the
    enumerator to branch over all ``high`` values."""

    def __init__(self, script: list[int]) -> None:
        self.script = script
        self.pos = 0
        self.highs: list[int] = []

    def integers(self, low: int, high: Any, *args: Any, **kwargs: Any) -> Any:
        assert low == 0
        is_array = np.ndim(high) > 0
        h = int(np.asarray(high).reshape(-1)[0]) if is_array else int(high)
        if is_array:
            assert np.size(high) == 1, "the enumerator handles one element at a time"
        if self.pos == len(self.script):
            raise _NeedChoice(h)
        v = self.script[self.pos]
        self.highs.append(h)
        self.pos += 1
        return np.array([v]) if is_array else v


def enumerate_outcomes(fn: Callable[[Any], bool], max_draws: int) -> tuple[Fraction, Fraction]:
    """(exact P(fn returns True along paths of <= max_draws draws), mass of the longer paths)."""
    p_true = Fraction(0)
    truncated = Fraction(0)
    stack: list[tuple[list[int], Fraction]] = [([], Fraction(1))]
    while stack:
        script, weight = stack.pop()
        rng = ScriptedRng(script)
        try:
            result = fn(rng)
        except _NeedChoice as need:
            if len(script) == max_draws:
                truncated += weight
            else:
                stack.extend(([*script, v], weight / need.high) for v in range(need.high))
            continue
        if result:
            p_true += weight
    return p_true, truncated


def series_odd_k(gamma: Fraction, kmax: int) -> Fraction:
    """P(K odd and K <= kmax) with P(K > k) = gamma^k / k!: the exact truncated value."""
    def tail(k: int) -> Fraction:
        return gamma**k / math.factorial(k)

    return sum((tail(k - 1) - tail(k) for k in range(1, kmax + 1) if k % 2 == 1), Fraction(0))


def test_bernoulli_rational_is_exact() -> None:
    for p in (Fraction(0), Fraction(1), Fraction(3, 7), Fraction(5, 12)):
        def draw(rng: Any, p: Fraction = p) -> bool:
            return bernoulli_rational(rng, p)

        got, trunc = enumerate_outcomes(draw, 1)
        assert trunc == 0 and got == p


@pytest.mark.parametrize(("gamma", "depth"), [(Fraction(1), 8), (Fraction(1, 2), 6), (Fraction(2, 3), 5)])
def test_bernoulli_exp_neg_tree_is_exact(gamma: Fraction, depth: int) -> None:
    got, trunc = enumerate_outcomes(lambda rng: bernoulli_exp_neg(rng, gamma), depth)
    assert got == series_odd_k(gamma, depth)  # exact rational equality
    assert trunc == gamma**depth / math.factorial(depth)
    # hence |P(True) - exp(-gamma)| <= truncated mass
    assert abs(float(got) - math.exp(-float(gamma))) <= float(trunc)


@pytest.mark.parametrize(("gamma", "depth"), [(Fraction(1), 8), (Fraction(2, 3), 5)])
def test_vectorised_bernoulli_exp_neg_tree_is_exact(gamma: Fraction, depth: int) -> None:
    def run(rng: Any) -> bool:
        num = np.array([gamma.numerator], dtype=np.int64)
        den = np.array([gamma.denominator], dtype=np.int64)
        return bool(bernoulli_exp_neg_vec(rng, num, den)[0])

    got, trunc = enumerate_outcomes(run, depth)
    assert got == series_odd_k(gamma, depth)
    assert trunc == gamma**depth / math.factorial(depth)


def test_vectorised_bernoulli_statistical() -> None:
    rng = np.random.default_rng(9)
    num = np.repeat(np.array([0, 1, 7, 5], dtype=np.int64), 20_000)
    den = np.repeat(np.array([1, 3, 3, 2], dtype=np.int64), 20_000)
    hits = bernoulli_exp_neg_vec(rng, num, den).reshape(4, -1).sum(axis=1)
    assert hits[0] == 20_000
    for h, g in zip(hits[1:], (1 / 3, 7 / 3, 5 / 2), strict=True):
        assert stats.binomtest(int(h), 20_000, math.exp(-g)).pvalue > ALPHA


def test_bernoulli_exp_neg_above_one_factorises() -> None:
    """gamma = 3/2: exp(-1) then exp(-1/2); enumerate both stages to depth 4 each."""
    gamma = Fraction(3, 2)
    got, trunc = enumerate_outcomes(lambda rng: bernoulli_exp_neg(rng, gamma), 8)
    lower = series_odd_k(Fraction(1), 4) * series_odd_k(Fraction(1, 2), 4)
    assert got >= lower
    assert abs(float(got) - math.exp(-1.5)) <= float(trunc)
    assert trunc < Fraction(1, 20)


def test_bernoulli_exp_neg_statistical() -> None:
    rng = np.random.default_rng(3)
    for gamma in (Fraction(1, 3), Fraction(7, 3), Fraction(0)):
        hits = sum(bernoulli_exp_neg(rng, gamma) for _ in range(20_000))
        p = math.exp(-float(gamma))
        if p == 1.0:
            assert hits == 20_000
        else:
            assert stats.binomtest(hits, 20_000, p).pvalue > ALPHA


def test_uniform_below_large_bounds() -> None:
    rng = np.random.default_rng(4)
    n = 3 * 2**70 + 5
    draws = [uniform_below(rng, n) for _ in range(3000)]
    assert all(0 <= v < n for v in draws)
    # the top bits are uniform: the fraction below n/3 is 1/3 (binomial test, alpha 1e-3)
    below = sum(v < n // 3 for v in draws)
    assert stats.binomtest(below, 3000, 1 / 3).pvalue > ALPHA
    with pytest.raises(ValueError):
        uniform_below(rng, 0)


def _chi_square_pmf(draws: np.ndarray, log_w: Callable[[np.ndarray], np.ndarray]) -> float:
    full = np.arange(-400, 401)
    w = np.exp(log_w(full.astype(float)))
    pmf = w / w.sum()
    counts = np.array([np.sum(draws == k) for k in full])
    expected = pmf * draws.size
    keep = expected >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    return float(stats.chisquare(obs, exp).pvalue)


# Fraction(0.3) has a 2^54 denominator: it exercises the Python-integer path; the others the
# vectorised one.
@pytest.mark.parametrize("scale", [Fraction(1, 3), Fraction(3, 2), Fraction(7), Fraction(0.3)])
def test_discrete_laplace_pmf(scale: Fraction) -> None:
    draws = discrete_laplace_array(np.random.default_rng(7), scale, (3_000 if scale.denominator > 2**40
                                                                      else 50_000,))
    assert _chi_square_pmf(draws, lambda y: -np.abs(y) / float(scale)) > ALPHA


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), Fraction(2), Fraction(40), Fraction(0.7) ** 2 * 9])
def test_discrete_gaussian_pmf(sigma2: Fraction) -> None:
    draws = discrete_gaussian_array(np.random.default_rng(8), sigma2, (3_000 if sigma2.denominator > 2**40
                                                                        else 50_000,))
    assert _chi_square_pmf(draws, lambda y: -(y**2) / (2 * float(sigma2))) > ALPHA


def test_sampler_parameter_validation() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError):
        samplers.discrete_laplace(rng, Fraction(0))
    with pytest.raises(ValueError):
        samplers.discrete_gaussian(rng, Fraction(-1))
    with pytest.raises(ValueError):
        bernoulli_exp_neg(rng, Fraction(-1, 2))
    with pytest.raises(ValueError):
        bernoulli_rational(rng, Fraction(3, 2))
