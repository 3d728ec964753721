"""The adaptive search's last step and the audit's exploration size.

- ``exploration_draws``: samples // 40 per input up to 51,200 samples, sqrt(32 samples) beyond, at
  least 1000 and at most the selection draws (checked against the closed form).
- The confirmation: the last min(max(4, keep), budget // 6) estimates re-estimate the leaders (the
  best single estimates) on fresh draws, and the pair returned is the one with the best mean of its
  two estimates; a pair whose first estimate was lucky (the winner's curse) loses to a better pair.
The search is run on the clip-after-sum step (``ClipAfterSumStep``: 2 gradients in [-2.5, 2.5]^2,
sigma 2, C 1, add/remove; worst mu 3 / sigma = 1.5, closed form in its docstring) with the exact mu
of each pair as the estimate.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest

from mechanisms import Domain
from tests.support.audit_fixtures import ClipAfterSumStep
from verify.audit.core import exploration_draws
from verify.neighbours import AdaptiveSearch, FloatPair
from verify.neighbours.adaptive import CONFIRMATIONS

MECH = ClipAfterSumStep(sigma=2.0, clip=1.0, d=2)
DOMAIN = Domain(-2.5, 2.5, n=2, d=2, adjacency="add_remove")
WORST_MU = 1.5
true_mu = MECH.mu


@pytest.mark.parametrize(("samples", "want"), [
    (4_000, 1000), (40_000, 1000), (51_200, 1280), (200_000, 2529), (10**6, 5656), (10**8, 56568),
])
def test_exploration_draws_follow_the_schedule(samples: int, want: int) -> None:
    assert exploration_draws(samples, samples) == want
    assert want == max(1000, min(samples // 40, math.isqrt(32 * samples)))
    assert exploration_draws(samples, 500) == 500  # never more than the selection draws


def _key(p: FloatPair) -> tuple[bytes, bytes]:
    return np.asarray(p[0]).tobytes(), np.asarray(p[1]).tobytes()


@pytest.mark.parametrize("seed", [0, 1])
def test_search_spends_its_budget_and_returns_the_best_confirmed_mean(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    calls: list[tuple[tuple[bytes, bytes], float]] = []

    def estimate(cands: Sequence[FloatPair]) -> list[float]:
        out = [true_mu(x, x2) + 0.05 * float(rng.normal()) for x, x2 in cands]
        calls.extend(zip([_key(p) for p in cands], out, strict=True))
        return out

    search = AdaptiveSearch(DOMAIN)
    found = search.search(estimate, np.random.default_rng(seed))
    assert len(found) == 1 and len(calls) == search.budget
    confirm = min(max(CONFIRMATIONS, search.keep), search.budget // 6)
    first, last = calls[:-confirm], calls[-confirm:]
    seen = dict(first[::-1])  # the (only) first estimate of each pair estimated before
    # the last estimates re-estimate the pairs with the largest first estimates
    leaders = sorted(seen, key=lambda k: -seen[k])[:confirm]
    assert sorted(k for k, _ in last) == sorted(leaders)
    means = {k: (seen[k] + v) / 2 for k, v in last}
    assert _key(found[0]) == max(means, key=lambda k: means[k])


def test_a_lucky_first_estimate_does_not_win() -> None:
    """Every pair's first estimate is its exact mu except one weak pair's, inflated above the worst;
    later estimates are exact. Ranked by a single estimate it would be returned; the mean with a
    fresh estimate ranks it below a strong pair."""
    lucky: list[tuple[bytes, bytes]] = []
    counted: dict[tuple[bytes, bytes], int] = {}

    def estimate(cands: Sequence[FloatPair]) -> list[float]:
        out = []
        for p in cands:
            k = _key(p)
            counted[k] = counted.get(k, 0) + 1
            mu = true_mu(*p)
            if not lucky and mu < 0.8 * WORST_MU:
                lucky.append(k)
            out.append(WORST_MU + 0.2 if k in lucky and counted[k] == 1 else mu)
        return out

    found = AdaptiveSearch(DOMAIN).search(estimate, np.random.default_rng(0))
    assert lucky and counted[lucky[0]] >= 2  # the lucky pair led and was estimated again
    assert _key(found[0]) != lucky[0]
    assert true_mu(*found[0]) >= 0.95 * WORST_MU
