"""Renyi tests of zCDP/RDP claims: the binary divergence, the soundness of its lower confidence
bound (exact coverage by enumeration), power where the curve tests have none, validity.

The validity check follows tests/test_audit_validity.py: R audits at confidence 0.9 of randomized
response claimed at its exact Renyi curve; a one-sided exact binomial test of H0: rate <= 0.1
fails only if P(Binomial(R, 0.1) >= V) < 0.001 (fixed seeds: deterministic).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import stats

import verify
from accountant import RDP, ZCDP
from verify import examples
from verify.audit import stats as audit_stats
from verify.audit.renyi import binary_renyi, claimed_renyi, renyi_lower_bound

CONF = 0.9


@pytest.mark.parametrize(("p", "q", "a"), [(0.3, 0.1, 2.0), (0.1, 0.3, 1.25), (0.999, 0.5, 8.0),
                                           (1e-6, 0.2, 3.0), (0.5, 0.5, 4.0)])
def test_binary_renyi_against_mpmath(p: float, q: float, a: float) -> None:
    mp = mpmath.mpf
    want = mpmath.log(mp(p) ** a * mp(q) ** (1 - a) + (1 - mp(p)) ** a * (1 - mp(q)) ** (1 - a)) / (a - 1)
    assert math.isclose(float(binary_renyi(p, q, a)), float(want), rel_tol=1e-9, abs_tol=1e-15)
    assert float(binary_renyi(0.5, 0.0, 2.0)) == math.inf


@pytest.mark.parametrize(("p", "q", "a"), [(0.3, 0.1, 2.0), (0.6, 0.4, 8.0), (0.05, 0.2, 1.5)])
def test_lower_bound_coverage_exact(p: float, q: float, a: float) -> None:
    # enumerate every outcome (k_p, k_q) of n draws per input: the bound exceeds the true binary
    # divergence with probability at most 2 gamma (its two one-sided bounds), for either direction
    n, gamma = 60, 0.05
    truth = max(float(binary_renyi(p, q, a)), float(binary_renyi(q, p, a)))
    k = np.arange(n + 1)
    kp, kq = np.meshgrid(k, k, indexing="ij")
    prob = np.outer(stats.binom.pmf(k, n, p), stats.binom.pmf(k, n, q))
    for larger in (True, False):
        if larger:
            pb, qb = audit_stats.cp_lower(kp, n, gamma), audit_stats.cp_upper(kq, n, gamma)
        else:
            pb, qb = audit_stats.cp_upper(kp, n, gamma), audit_stats.cp_lower(kq, n, gamma)
        low = renyi_lower_bound(pb, qb, larger, a)
        assert prob[low > truth].sum() <= 2 * gamma + 1e-12


def test_claimed_curves() -> None:
    orders, eps = claimed_renyi(ZCDP(0.5))  # type: ignore[misc]
    assert np.allclose(eps, 0.5 * orders)
    orders, eps = claimed_renyi(RDP(orders=(2.0, 4.0), epsilons=(0.1, 0.3)))  # type: ignore[misc]
    assert orders.tolist() == [2.0, 4.0] and eps.tolist() == [0.1, 0.3]


def test_rdp_claim_refuted_by_the_renyi_test_only() -> None:
    # the mu = 1 Gaussian has D_2 = 1; the claim D_2 <= 0.5 converts to a curve the tests cannot
    # refute at this size, the Renyi test does
    g = examples.GaussianMechanism(1.0)
    r = verify.audit(g, [(0.0, 1.0)], RDP(orders=(2.0,), epsilons=(0.5,)), samples=20_000, seed=0,
                     floating_point=False)
    assert r.violation and r.witness is not None and r.witness.family == "renyi"
    assert r.witness.renyi_order == 2.0 and r.witness.renyi_lower is not None
    assert 0.5 < r.witness.renyi_lower <= 1.0
    assert "Renyi D_2" in str(r)


def test_false_violation_rate_renyi_at_the_exact_curve() -> None:
    eps = 1.0
    p = math.exp(eps) / (1 + math.exp(eps))
    claim = RDP.from_curve(lambda a: float(binary_renyi(p, 1 - p, a)))  # RR's exact Renyi curve
    mech = examples.RandomizedResponse(eps)
    reps, viol = 150, 0
    for s in range(reps):
        r = verify.audit(mech, [(0, 1)], claim, samples=1000, confidence=CONF, seed=50_000 + s,
                         use_privacy_loss=False)
        viol += r.violation
    assert stats.binom.sf(viol - 1, reps, 1 - CONF) >= 1e-3, f"{viol}/{reps} false violations"
