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
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import verify
from accountant import RDP, ZCDP
from verify import examples
from verify.audit import stats as audit_stats
from verify.audit.renyi import (
    binary_renyi,
    certified_min_renyi,
    claimed_renyi,
    multibin_renyi_lower,
    renyi_lower_bound,
)

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


# ---------------------------------------------------------------- multi-bin Renyi lower bounds


def _renyi(p: np.ndarray, q: np.ndarray, a: float) -> float:
    """D_a(p || q) in log space (no overflow at high orders)."""
    with np.errstate(divide="ignore"):
        t = a * np.log(p) + (1 - a) * np.log(q)
    return float(np.logaddexp.reduce(t) / (a - 1))


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 8), st.floats(1.1, 40.0), st.integers(0, 2**32 - 1))
def test_certified_minimum_is_below_every_feasible_point(m: int, a: float, seed: int) -> None:
    # a random box around a random point (p0, q0) of the simplex: the certificate is below D_a at
    # (p0, q0) and at points between it and the box's extreme feasible points
    rng = np.random.default_rng(seed)
    p0, q0 = rng.dirichlet(np.ones(m)), rng.dirichlet(np.ones(m))
    w = rng.uniform(0.0, 0.5, (4, m))
    box = (p0 * (1 - w[0]), np.minimum(p0 + w[1], 1.0), q0 * (1 - w[2]), np.minimum(q0 + w[3], 1.0))
    cert = float(certified_min_renyi(*box, [a])[0])
    assert cert <= _renyi(p0, q0, a) + 1e-12
    for _ in range(20):  # other feasible points: move mass between two coordinates within the box
        p, q = p0.copy(), q0.copy()
        for x, lo, hi in ((p, box[0], box[1]), (q, box[2], box[3])):
            i, j = rng.choice(m, 2, replace=False)
            t = rng.uniform(0, 1) * min(x[i] - lo[i], hi[j] - x[j])
            x[i] -= t
            x[j] += t
        assert cert <= _renyi(p, q, a) + 1e-12


@pytest.mark.parametrize("a", [1.5, 2.0, 8.0, 64.0])
def test_certified_minimum_is_tight_on_two_bins(a: float) -> None:
    # two bins: the set is a rectangle in (p_1, q_1); its minimum on a fine grid is an upper bound
    # on the true minimum, and the certificate is below it and within 1e-4 of it
    rng = np.random.default_rng(int(a * 10))
    for _ in range(5):
        p1, q1 = rng.uniform(0.05, 0.95, 2)
        w = rng.uniform(0.0, 0.2, 4)
        lo_p, hi_p = max(p1 - w[0], 0.0), min(p1 + w[1], 1.0)
        lo_q, hi_q = max(q1 - w[2], 0.0), min(q1 + w[3], 1.0)
        box = (np.array([lo_p, 1 - hi_p]), np.array([hi_p, 1 - lo_p]),
               np.array([lo_q, 1 - hi_q]), np.array([hi_q, 1 - lo_q]))
        gp, gq = np.meshgrid(np.linspace(lo_p, hi_p, 1501), np.linspace(lo_q, hi_q, 1501))
        grid = float(np.min(binary_renyi(gp, gq, a)))
        cert = float(certified_min_renyi(*box, [a])[0])
        assert cert <= grid + 1e-12
        assert cert >= grid - 1e-4 * max(1.0, grid)


def test_multibin_bound_coverage_simultaneous_over_orders() -> None:
    # all orders' bounds come from one confidence set: the chance that any of them exceeds the
    # binned truth is <= 2 gamma = 0.1; checked over R independent draws with the binomial test
    p = np.array([0.45, 0.25, 0.15, 0.10, 0.05])
    q = np.array([0.15, 0.20, 0.20, 0.20, 0.25])
    orders = np.array([1.5, 2.0, 4.0, 16.0])
    truth = np.array([_renyi(p, q, a) for a in orders])
    n, gamma, reps = 200, 0.05, 200
    rng = np.random.default_rng(7)
    over = 0
    for _ in range(reps):
        kp, kq = rng.multinomial(n, p), rng.multinomial(n, q)
        low = multibin_renyi_lower(kp, n, kq, n, p > q, orders, gamma)
        over += bool(np.any(low > truth))
    assert stats.binom.sf(over - 1, reps, 2 * gamma) >= 1e-3, f"{over}/{reps} bounds above the truth"


def test_zcdp_claim_refuted_by_the_multibin_test() -> None:
    r = verify.audit(examples.GaussianMechanism(1.0), [(0.0, 1.0)], ZCDP(0.3), samples=20_000, seed=0,
                     floating_point=False)
    assert r.violation and r.witness is not None and r.witness.family == "renyi"
    assert "bins: Renyi D_" in r.witness.region
    assert r.witness.renyi_lower is not None and r.witness.renyi_order is not None
    assert 0.3 * r.witness.renyi_order < r.witness.renyi_lower <= 0.5 * r.witness.renyi_order


class FourValues:
    """Outputs 0..3 with probabilities (4, 3, 2, 1)/10 on input 0 and reversed on input 1, drawn
    exactly (integer draws)."""

    P = np.array([4, 3, 2, 1]) / 10

    def __call__(self, x: int, rng: np.random.Generator, size: int) -> np.ndarray:
        u = rng.integers(0, 10, size)
        v = np.searchsorted(np.cumsum([4, 3, 2, 1]), u, side="right")
        return np.asarray(v if x == 0 else 3 - v, dtype=np.int64)


def test_false_violation_rate_multibin_at_the_exact_curve() -> None:
    # claimed at its exact Renyi curve (symmetric: D(P||Q) = D(Q||P)), the multi-bin tests (bins =
    # the four values) are as tight as a test can be; the audit still refutes at most 10%
    p = FourValues.P
    claim = RDP.from_curve(lambda a: _renyi(p, p[::-1], a))
    reps, viol, binned = 150, 0, 0
    for s in range(reps):
        r = verify.audit(FourValues(), [(0, 1)], claim, samples=1000, confidence=CONF, seed=60_000 + s,
                         vectorised=True)
        viol += r.violation
        binned += any("bins: Renyi" in t.region for t in r.points)
    assert binned >= 5, f"the multi-bin test was evaluated in {binned}/{reps} audits only"
    assert stats.binom.sf(viol - 1, reps, 1 - CONF) >= 1e-3, f"{viol}/{reps} false violations"
