"""Statistical validity and power of verify.audit.

Validity: on correct mechanisms audited exactly AT their true privacy parameter, the audit must
declare a violation (equivalently, report a lower bound above the truth) with probability at most
1 - confidence. We run R independent audits (fixed seeds) at confidence 0.9 and apply a one-sided
exact binomial test of H0: rate <= 0.1; the test fails only if P(Binomial(R, 0.1) >= V) < 0.001.
So for a valid auditor each check fails with probability <= 0.001 (and, the seeds being fixed,
the outcome is deterministic). Power: every buggy mechanism of the benchmark is flagged at fixed
seeds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats

import verify
from accountant import GDP, Guarantee, PureDP
from tests.support.audit_fixtures import lattice_laplace
from verify import examples

CONF = 0.9
CHECK_LEVEL = 1e-3


def _excess_pvalue(violations: int, reps: int) -> float:
    return float(stats.binom.sf(violations - 1, reps, 1 - CONF))


def _rate(mech: Any, pair: tuple[Any, Any], claim: Guarantee, true_value: float, reps: int,
          samples: int, **kw: Any) -> tuple[int, int]:
    viol = above = 0
    for s in range(reps):
        r = verify.audit(mech, [pair], claim, samples=samples, confidence=CONF, seed=10_000 + s, **kw)
        viol += r.violation
        lower = r.mu_lower if isinstance(claim, GDP) else r.epsilon_lower
        above += lower > true_value
    return viol, above


class AnswerSlot:
    """Tight 1-DP with a NaN-padded output: randomized response (eps/2) chooses which of two slots
    holds the answer, the lattice Laplace (eps/2) release of x; the other slot is NaN. Its loss is
    eps exactly (slot 0 with a value in the upper tail), so the structure-and-value regions
    (category sets and conditional tails) are tested at their tightest."""

    def __init__(self, eps: float) -> None:
        self.rr = examples.RandomizedResponse(eps / 2)
        self.scale = 2.0 / eps

    def __call__(self, x: int, rng: np.random.Generator, size: int) -> np.ndarray:
        slot = np.asarray(self.rr.sample(x, rng, size)).ravel() == 1
        v = x + lattice_laplace(rng, self.scale, (size,))
        return np.stack([np.where(slot, v, np.nan), np.where(slot, np.nan, v)], axis=1)


@pytest.mark.parametrize(("name", "mech", "pair", "claim", "true", "kw"), [
    ("laplace at claim", examples.ScalarLaplace(1.0), (0.0, 1.0), PureDP(1.0), 1.0, {}),
    ("laplace, black box", examples.ScalarLaplace(1.0), (0.0, 1.0), PureDP(1.0), 1.0,
     {"use_privacy_loss": False}),
    ("randomized response", examples.RandomizedResponse(1.0), (0, 1), PureDP(1.0), 1.0, {}),
    ("gaussian", examples.GaussianMechanism(1.0), (0.0, 1.0), GDP(1.0), 1.0, {}),
    ("noisy max (exp)", examples.ReportNoisyMax(1.0), ([0.0, 0.0], [1.0, 0.0]), PureDP(1.0), 1.0, {}),
    ("answer slot (NaN-padded)", AnswerSlot(1.0), (0, 1), PureDP(1.0), 1.0, {"vectorised": True}),
])
def test_false_violation_rate_at_most_one_minus_confidence(name: str, mech: Any, pair: Any,
                                                           claim: Guarantee, true: float,
                                                           kw: dict[str, Any]) -> None:
    reps = 200
    viol, above = _rate(mech, pair, claim, true, reps, samples=2000, **kw)
    assert _excess_pvalue(viol, reps) >= CHECK_LEVEL, f"{name}: {viol}/{reps} false violations"
    assert _excess_pvalue(above, reps) >= CHECK_LEVEL, f"{name}: lower bound above truth {above}/{reps}"


def test_vector_outputs_validity_with_screening() -> None:
    # histogram with correct calibration; three candidate pairs screened, two evaluated
    mech = examples.NoisyHistogram(1.0)
    pairs = [([0, 1, 2], [1, 1, 2]), ([0, 0, 0], [3, 0, 0]), ([0, 1, 2], [0, 1, 2])]
    reps, viol = 100, 0
    for s in range(reps):
        r = verify.audit(mech, pairs, PureDP(1.0), samples=1000, confidence=CONF, seed=s, max_pairs=2)
        viol += r.violation
    assert _excess_pvalue(viol, reps) >= CHECK_LEVEL


def test_pure_claim_exactly_at_rr_many_repetitions() -> None:
    # RR is the extremal eps-DP pair, so the claim is tight: the audit's test is exactly at the curve.
    reps, viol = 400, 0
    mech = examples.RandomizedResponse(0.7)
    for s in range(reps):
        viol += verify.audit(mech, [(0, 1)], PureDP(0.7), samples=500, confidence=CONF, seed=s).violation
    assert _excess_pvalue(viol, reps) >= CHECK_LEVEL


@pytest.mark.parametrize("case", [c for c in examples.cases() if c.buggy], ids=lambda c: c.name)
@pytest.mark.parametrize("seed", [0, 1])
def test_buggy_mechanisms_flagged(case: examples.Case, seed: int) -> None:
    r = verify.audit(case.mechanism, case.pairs, case.claim, samples=100_000, seed=seed)
    assert r.violation, str(r)
    if case.true_eps is not None and math.isfinite(case.true_eps):
        # a lower bound: never above the truth (fails with probability <= 0.05 per case)
        assert r.epsilon_lower <= case.true_eps * (1 + 1e-9)


@pytest.mark.parametrize("case", [c for c in examples.cases() if not c.buggy], ids=lambda c: c.name)
def test_correct_mechanisms_not_flagged(case: examples.Case) -> None:
    # each fails with probability <= 0.05 for a valid auditor; fixed seed keeps it deterministic
    r = verify.audit(case.mechanism, case.pairs, case.claim, samples=50_000, seed=3)
    assert not r.violation, str(r)
    if case.true_eps is not None:
        assert r.epsilon_lower <= case.true_eps


def test_assert_private_raises_with_report() -> None:
    verify.assert_private(examples.GeometricMechanism(1.0), PureDP(1.0), (0, 1), samples=5000)
    with pytest.raises(AssertionError, match="refuted"):
        verify.assert_private(examples.GeometricMechanism(1.0), PureDP(0.2), (0, 1), samples=5000)


def test_epsilon_lower_increases_with_samples_on_laplace() -> None:
    lows = [verify.audit(examples.ScalarLaplace(1.0), [(0.0, 1.0)], PureDP(1.0), samples=n,
                         seed=0).epsilon_lower for n in (2_000, 200_000)]
    assert lows[0] < lows[1] <= 1.0
    assert lows[1] > 0.9
    assert np.isfinite(lows).all()
