"""The adaptive neighbour search: valid neighbours, power where random pairs fail, validity.

The validity check follows tests/test_audit_validity.py: R audits at confidence 0.9 of a mechanism
whose true eps equals the claim on the pairs the search can reach; a one-sided exact binomial test
of H0: rate <= 0.1 fails only if P(Binomial(R, 0.1) >= V) < 0.001 (fixed seeds: deterministic).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any, Literal

import numpy as np
import pytest
from scipy import stats

import verify
from accountant import PureDP
from mechanisms import Domain
from mechanisms.samplers import discrete_laplace_array
from tests.support.audit_fixtures import NoiselessPTRMode
from verify.neighbours import AdaptiveSearch, FloatPair

CONF = 0.9


def _is_neighbour(x: np.ndarray, x2: np.ndarray, adjacency: str, s: float = 1.0) -> bool:
    if adjacency == "replace":
        return x.shape == x2.shape and int(np.sum(x != x2)) == 1
    if adjacency == "add_remove":
        return x2.size == x.size - 1 and any(np.array_equal(np.delete(x, i), x2) for i in range(x.size))
    return x.shape == x2.shape and bool(np.max(np.abs(x - x2)) <= s) and not np.array_equal(x, x2)


@pytest.mark.parametrize("adjacency", ["replace", "add_remove", "answers"])
def test_every_pair_the_search_returns_is_a_neighbouring_pair(adjacency: str) -> None:
    search = AdaptiveSearch((0.0, 4.0, 6), adjacency, integers=True, budget=40, keep=40)
    rng = np.random.default_rng(0)
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def estimate(pairs: Sequence[FloatPair]) -> list[float]:
        seen.extend(pairs)
        return [float(rng.random()) for _ in pairs]  # any estimate: the moves must stay neighbours

    out = search.search(estimate, rng)
    assert 0 < len(out) <= 40 and len(seen) <= 40
    for x, x2 in out + search.pairs(rng):
        assert _is_neighbour(x, x2, adjacency), (x, x2)
        assert x.min() >= 0 and x.max() <= 4 and np.all(x == np.round(x))


def test_domain_object_and_bad_input() -> None:
    s = AdaptiveSearch(Domain(0, 10, n=5, adjacency="add_remove"))
    assert all(x2.size == 4 for _, x2 in s.pairs(np.random.default_rng(0)))
    with pytest.raises(ValueError, match="adjacency"):
        AdaptiveSearch((0.0, 1.0, 3), "swap")
    with pytest.raises(ValueError, match="domain"):
        AdaptiveSearch((1.0, 0.0, 3))
    with pytest.raises(ValueError, match="budget"):
        AdaptiveSearch((0.0, 1.0, 3), budget=0)
    with pytest.raises(ValueError, match="integer"):
        AdaptiveSearch((0.2, 0.8, 3), integers=True)


def test_noiseless_ptr_found_by_adaptive_search_missed_by_random_pairs() -> None:
    mech = NoiselessPTRMode(threshold=30)
    r = verify.audit(mech, verify.RandomSearch((0, 10, 100), count=10, integers=True), PureDP(1.0),
                     samples=10_000, seed=0)
    assert not r.violation  # no random pair crosses the data-dependent threshold
    r = verify.audit(mech, AdaptiveSearch((0, 10, 100), "replace", integers=True), PureDP(1.0),
                     samples=10_000, seed=0)
    assert r.violation and r.witness is not None
    # the witness pair releases on one side and refuses on the other: a gap of 32 against 30
    # the exploration draws are counted: beyond screening every candidate (30% of the draws, the
    # default selection_fraction) and evaluating the one tested pair (the other 70%)
    assert r.n_tests == 1
    assert r.samples_total > 2 * (3_000 * r.candidate_pairs + 7_000)


# ------------------------------------------------------------------ vector records, surrogate search


def half_laplace(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Discrete Laplace noise with P(k) proportional to 2^-|k|: the difference of two geometric(1/2)
    counts, each the number of trailing zero bits of a uniform nonzero 62-bit integer (so a
    geometric law conditioned on < 62: total variation below 2^-61 from the exact law, far below
    what 1000 draws can see). Exact integer arithmetic and fast, so validity tests stay cheap."""

    def geometric(n: int) -> np.ndarray:
        u = rng.integers(0, 2**62, n, dtype=np.int64)
        while np.any(u == 0):
            u[u == 0] = rng.integers(0, 2**62, int(np.sum(u == 0)), dtype=np.int64)
        return np.frexp((u & -u).astype(np.float64))[1] - 1  # exact: u & -u is a power of two

    n = int(np.prod(shape))
    return np.asarray(geometric(n) - geometric(n), dtype=np.float64).reshape(shape)


class VectorSum:
    """Sum of n integer records in {0, 1}^d plus noise per coordinate: exact discrete Laplace for L1
    sensitivity ``assumed_l1`` at ``eps`` (d is right: replace-one moves every coordinate by 1; 1 is
    the bug of forgetting the dimension, true eps = d eps on opposite corners), or with
    ``half=True`` the ratio-1/2 discrete Laplace, exactly d ln 2-DP (tight on opposite corners)."""

    def __init__(self, eps: float, d: int, assumed_l1: int, half: bool = False) -> None:
        self.d, self.scale, self.half = d, Fraction(assumed_l1) / Fraction(eps), half

    def sample(self, data: np.ndarray, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        x = np.clip(np.round(np.asarray(data, dtype=np.float64)), 0, 1).reshape(-1, self.d)
        shape = (size or 1, self.d)
        z = half_laplace(rng, shape) if self.half else discrete_laplace_array(rng, self.scale, shape)
        return np.asarray(x.sum(axis=0) + z)


class IntegerSum:
    """Sum of records in [-1, 1], rounded to integers, plus the ratio-1/2 discrete Laplace noise:
    exactly ln(2) * 2-DP on the extreme replace-one pairs the search finds (the sum moves by 2)."""

    def sample(self, data: np.ndarray, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        x = np.clip(np.round(np.asarray(data, dtype=np.float64)), -1, 1)
        return np.asarray(x.sum() + half_laplace(rng, (size or 1,)))


class AnswerTotal:
    """The total of a vector answer plus Laplace noise of scale 1 / (2 ln 2): exactly 2 ln 2-DP on
    answer pairs within the l1 ball of radius 1 whose difference has all coordinates of one sign
    (the total moves by 1), as the search's all-ones and axis starts have."""

    def sample(self, data: np.ndarray, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
        return np.asarray(float(np.sum(data)) + rng.laplace(0.0, 1 / (2 * math.log(2)), size or 1))


def _in_domain(x: np.ndarray, lo: float, hi: float, ball: tuple[str, float] | None) -> bool:
    ok = bool(np.all(x >= lo) and np.all(x <= hi))
    if ball is not None:
        size = np.abs(x).sum(axis=1) if ball[0] == "l1" else np.sqrt((x * x).sum(axis=1))
        ok &= bool(np.all(size <= ball[1]))
    return ok


@pytest.mark.parametrize("method", ["climb", "surrogate"])
@pytest.mark.parametrize(("adjacency", "ball", "integers"), [
    ("replace", None, False), ("add_remove", None, True), ("replace", ("l2", 1.0), False),
    ("add_remove", ("l1", 2.0), True), ("replace", ("l1", 1.5), False),
])
def test_vector_records_every_pair_is_a_neighbour_inside_the_domain(
        method: str, adjacency: Literal["replace", "add_remove"], ball: tuple[str, float] | None,
        integers: bool) -> None:
    n, d = 5, 3
    search = AdaptiveSearch(Domain(-1, 2, n=n, d=d, adjacency=adjacency), ball=ball, integers=integers,
                            budget=40, keep=40, method=method)
    rng = np.random.default_rng(1)
    seen: list[tuple[np.ndarray, np.ndarray]] = []

    def estimate(pairs: Sequence[FloatPair]) -> list[float]:
        seen.extend(pairs)  # adversarial estimates: the moves must stay neighbours in the domain
        return [float(rng.exponential()) for _ in pairs]

    out = search.search(estimate, rng)
    assert 0 < len(out) <= 40 and len(seen) <= 40
    # (the bisection also estimates pairs of datasets further apart; what is returned must be neighbours)
    for x, x2 in out + search.pairs(rng):
        assert x.shape == (n, d)
        assert _in_domain(x, -1, 2, ball) and _in_domain(x2, -1, 2, ball)
        if integers:
            assert np.all(x == np.round(x)) and np.all(x2 == np.round(x2))
        if adjacency == "replace":
            assert x2.shape == (n, d) and int(np.sum(np.any(x != x2, axis=1))) == 1, (x, x2)
        else:
            assert x2.shape == (n - 1, d)
            assert any(np.array_equal(np.delete(x, i, axis=0), x2) for i in range(n)), (x, x2)


def test_vector_structured_candidates_hold_opposite_corners_and_ball_extremes() -> None:
    rng = np.random.default_rng(0)
    box = AdaptiveSearch(Domain(0, 1, n=4, d=3)).pairs(rng)
    zeros, corner = np.zeros((4, 3)), np.zeros((4, 3))
    corner[0] = 1.0
    assert any(np.array_equal(a, zeros) and np.array_equal(b, corner) for a, b in box)
    l2 = AdaptiveSearch(Domain(-1, 1, n=2, d=2), ball=("l2", 1.0)).pairs(rng)
    e0 = np.array([[1.0, 0.0], [1.0, 0.0]])
    flip = np.array([[-1.0, 0.0], [1.0, 0.0]])
    assert any(np.array_equal(a, e0) and np.array_equal(b, flip) for a, b in l2)
    with pytest.raises(ValueError, match="narrower than the sensitivity"):
        AdaptiveSearch(Domain(0, 1, n=4, d=3), "answers", sensitivity=2.0)
    with pytest.raises(ValueError, match="box containing 0"):
        AdaptiveSearch(Domain(1, 2, n=4, d=3), ball=("l2", 1.0))
    with pytest.raises(ValueError, match="ball"):
        AdaptiveSearch(Domain(0, 1, n=4, d=3), ball=("linf", 1.0))
    with pytest.raises(ValueError, match="method"):
        AdaptiveSearch((0.0, 1.0, 3), method="anneal")


def test_vector_mean_wrong_sensitivity_caught_correct_one_not_flagged() -> None:
    dom = Domain(0, 1, n=4, d=3)
    buggy, right = VectorSum(1.0, 3, assumed_l1=1), VectorSum(1.0, 3, assumed_l1=3)
    one_coordinate = [(np.zeros((4, 3)), np.array([[1.0, 0, 0], [0, 0, 0], [0, 0, 0], [0, 0, 0]]))]
    r = verify.audit(buggy, one_coordinate, PureDP(1.0), samples=20_000, seed=0, floating_point=False)
    assert not r.violation  # a change along one axis alone is exactly 1-DP even for the bug
    search = AdaptiveSearch(dom, integers=True, budget=24, keep=4)
    r = verify.audit(buggy, search, PureDP(1.0), samples=20_000, seed=0, floating_point=False)
    assert r.violation and 1.0 < r.epsilon_lower <= 3.0  # true eps 3 on opposite corners
    r = verify.audit(right, search, PureDP(1.0), samples=20_000, seed=0, floating_point=False)
    assert not r.violation and r.epsilon_lower <= 1.0


def test_surrogate_search_finds_noiseless_ptr() -> None:
    r = verify.audit(NoiselessPTRMode(threshold=30),
                     AdaptiveSearch((0, 10, 100), "replace", integers=True, method="surrogate"),
                     PureDP(1.0), samples=10_000, seed=0)
    assert r.violation and r.witness is not None


@pytest.mark.parametrize(("name", "mech", "search"), [
    # all are exactly 2 ln 2-DP on the extreme pairs the search starts from (opposite corners);
    # selection on exploration draws must not inflate the bounds
    ("hill climbing, scalar records", IntegerSum(),
     AdaptiveSearch((-1.0, 1.0, 3), "replace", budget=8, keep=2)),
    ("vector records", VectorSum(1.0, 2, assumed_l1=2, half=True),
     AdaptiveSearch(Domain(0, 1, n=3, d=2), integers=True, budget=8, keep=2)),
    ("surrogate", IntegerSum(),
     AdaptiveSearch((-1, 1, 3), "replace", integers=True, budget=8, keep=2, method="surrogate")),
    ("vector answers", AnswerTotal(),
     AdaptiveSearch(Domain(-2, 2, n=1, d=3), "answers", norm="l1", budget=8, keep=2)),
])
def test_false_violation_rate_with_adaptive_search(name: str, mech: Any,
                                                           search: AdaptiveSearch) -> None:
    reps, viol, above = 60, 0, 0
    eps = 2 * math.log(2)
    for s in range(reps):
        r = verify.audit(mech, search, PureDP(eps), samples=1000, confidence=CONF, seed=50_000 + s,
                         floating_point=False)
        viol += r.violation
        above += r.epsilon_lower > eps
    assert stats.binom.sf(viol - 1, reps, 1 - CONF) >= 1e-3, f"{name}: {viol}/{reps} false violations"
    assert stats.binom.sf(above - 1, reps, 1 - CONF) >= 1e-3, f"{name}: {above}/{reps} above the truth"


def test_l1_ball_records_sum_with_half_the_sensitivity_caught() -> None:
    # integer records in the l1 ball of radius 2 in Z^2; replace-one moves the sum by up to 2r = 4
    # in l1 (a record from (2, 0) to (-2, 0)); noise for l1 sensitivity 2 is the bug (true eps 2)
    dom = Domain(-2, 2, n=3, d=2)

    def ball_sum(data: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
        x = np.asarray(data, dtype=np.float64).reshape(-1, 2)
        assert np.all(np.abs(x).sum(axis=1) <= 2)  # the search stays in the ball
        return np.asarray(x.sum(axis=0) + discrete_laplace_array(rng, Fraction(2), (size, 2)))

    search = AdaptiveSearch(dom, integers=True, ball=("l1", 2.0), budget=12, keep=3)
    r = verify.audit(ball_sum, search, PureDP(1.0), samples=20_000, seed=0, vectorised=True,
                     floating_point=False)
    assert r.violation and 1.0 < r.epsilon_lower <= 2.0
