"""The adaptive neighbour search: valid neighbours, power where random pairs fail, validity.

The validity check follows tests/test_audit_validity.py: R audits at confidence 0.9 of a mechanism
whose true eps equals the claim on the pairs the search can reach; a one-sided exact binomial test
of H0: rate <= 0.1 fails only if P(Binomial(R, 0.1) >= V) < 0.001 (fixed seeds: deterministic).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import verify
from accountant import PureDP
from mechanisms import Domain
from verify import examples
from verify.neighbours import AdaptiveSearch

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

    def estimate(pairs: list[tuple[np.ndarray, np.ndarray]]) -> list[float]:
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
    mech = examples.NoiselessPTRMode(threshold=30)
    r = verify.audit(mech, verify.RandomSearch((0, 10, 100), count=10, integers=True), PureDP(1.0),
                     samples=10_000, seed=0)
    assert not r.violation  # no random pair crosses the data-dependent threshold
    r = verify.audit(mech, AdaptiveSearch((0, 10, 100), "replace", integers=True), PureDP(1.0),
                     samples=10_000, seed=0)
    assert r.violation and r.witness is not None
    # the witness pair releases on one side and refuses on the other: a gap of 32 against 30
    assert r.samples_total > 2 * 10_000 * r.candidate_pairs  # the exploration draws are counted


def test_false_violation_rate_with_adaptive_search() -> None:
    # the sum of records in [-1, 1] with Laplace noise for sensitivity 2 is exactly 1-DP on the
    # extreme pairs the search finds; selection on exploration draws must not inflate the bounds
    mech = examples.NoisySum(1.0, assumed_sensitivity=2.0)
    search = AdaptiveSearch((-1.0, 1.0, 3), "replace", budget=8, keep=2)
    reps, viol, above = 60, 0, 0
    for s in range(reps):
        r = verify.audit(mech, search, PureDP(1.0), samples=1000, confidence=CONF, seed=40_000 + s,
                         floating_point=False)
        viol += r.violation
        above += r.epsilon_lower > 1.0
    assert stats.binom.sf(viol - 1, reps, 1 - CONF) >= 1e-3, f"{viol}/{reps} false violations"
    assert stats.binom.sf(above - 1, reps, 1 - CONF) >= 1e-3
