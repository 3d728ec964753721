"""Neighbour search and the hypothesis strategy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings

import verify
from accountant import PureDP
from verify import examples
from verify.strategies import neighbouring


def test_statdp_patterns_are_sensitivity_neighbours() -> None:
    pats = verify.statdp_patterns(6, sensitivity=1.0)
    assert len(pats) == 8
    for a, b in pats:
        assert a.shape == b.shape == (6,)
        assert np.max(np.abs(a - b)) <= 1.0 and not np.array_equal(a, b)
    with pytest.raises(ValueError, match="n must"):
        verify.statdp_patterns(0)


def test_random_search_pairs() -> None:
    rng = np.random.default_rng(0)
    for adj in ("replace", "add_remove"):
        for x, x2 in verify.RandomSearch((0.0, 1.0, 5), adj, count=6).pairs(rng):
            assert x.min() >= 0 and x.max() <= 1
            if adj == "replace":
                assert x2.shape == x.shape and np.sum(x != x2) <= 1
            else:
                assert x2.size == x.size - 1
    with pytest.raises(ValueError, match="adjacency"):
        verify.RandomSearch((0.0, 1.0, 5), "swap")
    with pytest.raises(ValueError, match="domain"):
        verify.RandomSearch((1.0, 0.0, 5))


def test_pattern_search_finds_noisy_max_value_bug() -> None:
    mech = examples.ReportNoisyMax(1.0, "laplace", return_value=True)
    r = verify.audit(mech, verify.PatternSearch(5), PureDP(1.0), samples=40_000, seed=0, floating_point=False)
    # only the pair screening shows can win is tested (af0cf90)
    assert r.violation and r.candidate_pairs == 8 and r.n_tests == 1


def test_random_search_finds_wrong_sensitivity() -> None:
    mech = examples.NoisySum(1.0, assumed_sensitivity=1.0)
    r = verify.audit(mech, verify.RandomSearch((-1.0, 1.0, 3), count=8), PureDP(1.0), samples=40_000,
                     seed=0)
    assert r.violation


class ClippedMean:
    """Mean of n values clipped to [0, 1], Laplace noise for sensitivity 1/n (replace-one)."""

    def __init__(self, eps: float, n: int, scale_factor: float = 1.0) -> None:
        self.eps, self.n, self.f = eps, n, scale_factor

    def sample(self, data: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        m = float(np.clip(np.asarray(data), 0.0, 1.0).mean())
        g = examples.GRID
        z = examples.two_sided_geometric(rng, self.f / (self.n * self.eps * g), (size or 1,))
        return (np.round(m / g) + z) * g


@settings(max_examples=8, deadline=None, derandomize=True)
@given(neighbouring((0.0, 1.0, 4), "replace"))
def test_property_correct_mean_not_refuted(pair: tuple[np.ndarray, np.ndarray]) -> None:
    x, x2 = pair
    assert x.shape == x2.shape == (4,) and np.sum(x != x2) <= 1
    # valid for every pair: each example fails with probability <= 0.01
    verify.assert_private(ClippedMean(1.0, 4), PureDP(1.0), pair, samples=4000, confidence=0.99)


def test_property_buggy_mean_refuted_on_extreme_pair() -> None:
    buggy = ClippedMean(1.0, 4, scale_factor=0.25)  # noise for sensitivity 1/(4n): 4x too little
    with pytest.raises(AssertionError, match="refuted"):
        verify.assert_private(buggy, PureDP(1.0), (np.zeros(4), np.array([1.0, 0, 0, 0])), samples=20_000)


@settings(max_examples=5, deadline=None, derandomize=True)
@given(neighbouring((0, 10, 3), "add_remove", integers=True))
def test_add_remove_strategy(pair: tuple[np.ndarray, np.ndarray]) -> None:
    x, x2 = pair
    assert x2.size == x.size - 1 and np.all(x == np.round(x))
