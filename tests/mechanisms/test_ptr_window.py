"""PTR for the central-window mean: the local sensitivity and the distance bound against brute force
over small datasets, the distance's sensitivity 1, the guarantee, an audit (with an always-passing
test refuted) and the accuracy at n = 10000."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import verify
from mechanisms import BOTTOM
from mechanisms.estimators import (
    NoisyThresholdTest,
    ProposeTestRelease,
    PTRWindowMedian,
    central_window,
    window_distance,
    window_mean,
)
from tests.support.estimators import encoded

GRID = (0.0, 0.25, 0.5, 0.75, 1.0)


def _neighbours(x: tuple[float, ...]) -> set[tuple[float, ...]]:
    """Every dataset obtained by replacing one record with a grid value (the extremes of [0, 1] are on
    the grid, and the window mean is monotone in each record, so they reach the local sensitivity)."""
    return {tuple(sorted((*x[:i], v, *x[i + 1:]))) for i in range(len(x)) for v in GRID}


def _ls(x: tuple[float, ...], a: int, b: int) -> float:
    m = window_mean(np.array(x), a, b)
    return max(abs(window_mean(np.array(y), a, b) - m) for y in _neighbours(x))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(GRID), min_size=6, max_size=6), st.integers(0, 1), st.integers(0, 2))
def test_distance_bound_dominates_brute_force(xs: list[float], h: int, k: int) -> None:
    """U_k(x) (the least eta with d(x) > k) is at least the largest local sensitivity over datasets at
    distance <= k, enumerated on the grid."""
    x = tuple(sorted(xs))
    a, b = central_window(6, h)
    ball = {x}
    for _ in range(k):
        ball = set(itertools.chain.from_iterable(_neighbours(y) for y in ball)) | ball
    worst = max(_ls(y, a, b) for y in ball)
    if worst > 1e-9:  # d(x) <= k for any eta just below the worst local sensitivity
        assert window_distance(np.array(x), a, b, worst * (1 - 1e-6), 0.0, 1.0) <= k


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=15, max_size=15), st.integers(0, 14), st.integers(0, 40),
       st.sampled_from([0.01, 0.05, 0.2]), st.integers(0, 4))
def test_distance_has_sensitivity_one_and_passing_bounds_the_local_sensitivity(
        xs: list[int], i: int, v: int, eta: float, h: int) -> None:
    x = np.array(xs, dtype=float) / 40
    y = x.copy()
    y[i] = v / 40
    a, b = central_window(15, h)
    dx, dy = (window_distance(z, a, b, eta, 0.0, 1.0) for z in (x, y))
    assert abs(dx - dy) <= 1
    if dx >= 1:
        assert abs(window_mean(x, a, b) - window_mean(y, a, b)) <= eta


def test_guarantee_and_bad_input() -> None:
    e = 0.5 * (1 - 2.0**-12)
    g = PTRWindowMedian(-10.0, 10.0, 1000, e, 1e-6, eta=0.01, release_eps=e).guarantee()
    assert g.epsilon(1e-6) <= 1.0
    assert central_window(10, 100) == (1, 10) and central_window(11, 2) == (4, 8)
    for kw in ({"eta": 0.0}, {"eta": 30.0}, {"n": 0}, {"half_width": -1}, {"release_eps": math.nan},
               {"delta": 1.5}):
        args = {"lower": -10.0, "upper": 10.0, "n": 100, "eps": 0.5, "delta": 1e-6, "eta": 0.1, **kw}
        with pytest.raises(ValueError):
            PTRWindowMedian(**args)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="window"):
        window_distance(np.zeros(5), 3, 7, 0.1, 0.0, 1.0)


def test_audit_and_an_always_passing_test_refuted() -> None:
    """Witness: ten 0s and eleven 1s against eleven 0s and ten 1s; the window of 5 central ranks has
    means 0.6 and 0.4 (LS 1/5 > eta = 0.02), so d = 0: the mechanism refuses, and a variant whose
    test always passes releases means 10 noise scales apart."""
    x = np.array([0.0] * 10 + [1.0] * 11)
    y = np.array([0.0] * 11 + [1.0] * 10)
    good = PTRWindowMedian(0.0, 1.0, 21, 1.0, 1e-3, eta=0.02, half_width=2)
    r = verify.audit(encoded(good), [(x, y)], good.guarantee(), samples=300, seed=0, vectorised=True)
    assert not r.violation
    broken = ProposeTestRelease(good.distance, good.release, NoisyThresholdTest(1.0, -50.0))
    r = verify.audit(encoded(broken), [(x, y)], good.guarantee(), samples=300, seed=0, vectorised=True)
    assert r.violation


def test_accuracy_at_ten_thousand() -> None:
    """N(0, 1), n = 10000, (1, 1e-6), eta = 10/n: 12 releases, at most 2 refused (the proposal covers
    ~3x the local sensitivity out to distance 40: measured none), RMSE below 1.5x the median's
    sampling sd 1/(2 f(0) sqrt n) = 0.0125 (predicted ~1.02x)."""
    rng = np.random.default_rng(3)
    e = 0.5 * (1 - 2.0**-12)
    mech = PTRWindowMedian(-10.0, 10.0, 10_000, e, 1e-6, eta=1e-3, release_eps=e)
    out = [mech.sample(rng.normal(size=10_000), rng) for _ in range(12)]
    vals = [float(o) for o in out if o is not BOTTOM]
    assert len(vals) >= 10
    assert math.sqrt(np.mean(np.square(vals))) < 1.5 * 0.5 * math.sqrt(2 * math.pi) / 100
