"""The audit planner (``verify.samples_needed``, ``verify.audit_power``): its power against a brute-force
double sum over both binomial counts, its samples against simulated audits, and its refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sps

import verify
from accountant import GDP, ApproxDP, PureDP
from verify.audit.stats import cp_lower, cp_upper
from verify.cli import main
from verify.examples import RandomizedResponse


def brute_power(claim: PureDP, n: int, gamma: float, alpha: float, beta: float) -> float:
    """P(beta_u < f(alpha_u)) summed over every k_a, the k_r condition found by bisection on the
    Clopper-Pearson lower bound itself (no duality, no tail cut, no bins)."""
    k_a = np.arange(n + 1, dtype=np.float64)
    need = 1.0 - np.asarray(claim.tradeoff(cp_upper(k_a, n, gamma)))  # refute iff cp_lower(k_r) > need
    lo, hi = np.full(k_a.shape, -1.0), np.full(k_a.shape, float(n + 1))  # cp_lower(lo) <= need < cp_lower(hi)
    while np.any(hi - lo > 1):
        mid = np.floor((lo + hi) / 2)
        above = cp_lower(np.maximum(mid, 0.0), n, gamma) > need
        hi, lo = np.where(above, mid, hi), np.where(above, lo, mid)
    return float(np.sum(sps.binom.pmf(k_a, n, alpha) * sps.binom.sf(hi - 1.0, n, 1.0 - beta)))


@pytest.mark.parametrize(("n", "tol"), [(40, 1e-9), (121, 1e-9), (300, 1e-9), (20_000, 2e-3)])
def test_power_is_the_double_sum(n: int, tol: float) -> None:
    """The plan's power at its region equals the sum over both counts computed without its
    shortcuts: to 1e-9 where it sums every count (n <= ~1,000 here), to 2e-3 where it bins the
    counts (n = 20,000); for the pure-DP claim against randomized response's kink."""
    claim, truth = PureDP(1.0), PureDP(1.5)
    samples = round(n / 0.7)
    plan = verify.plan_audit(claim, truth, samples, tests=2)
    n_eval = samples - max(2, round(samples * 0.3))
    exact = brute_power(claim, n_eval, plan.level, plan.alpha, plan.beta)
    assert plan.power == pytest.approx(exact, abs=tol)
    assert plan.level == pytest.approx(0.05 / 4)


def test_samples_needed_reaches_its_power_and_not_much_earlier() -> None:
    for claim, truth, power in [(PureDP(1.0), PureDP(1.5), 0.5), (GDP(1.0), GDP(1.3), 0.8),
                                (ApproxDP(1.0, 1e-6), PureDP(2.0), 0.9)]:
        n = verify.samples_needed(claim, truth, power=power)
        assert verify.audit_power(claim, truth, n) >= power
        assert verify.audit_power(claim, truth, math.floor(n * 0.9)) < power


def test_a_larger_violation_needs_fewer_draws_and_more_confidence_more() -> None:
    claim = GDP(1.0)
    needs = [verify.samples_needed(claim, GDP(mu)) for mu in (1.1, 1.3, 2.0)]
    assert needs[0] > needs[1] > needs[2]
    assert verify.samples_needed(claim, GDP(1.3), confidence=0.999) > needs[1]


def test_the_plan_against_simulated_audits() -> None:
    """Binary randomized response at eps 1.5 attains the 1.5-DP curve's kink; audited against a
    1-DP claim with n50 = samples_needed(power=0.5) draws: over 40 seeds each, the refutation rate at
    n50 / 2 is at most 0.3 (plan: 0.19), at 2 n50 at least 0.6 (plan: 0.91), and at n50 within
    [0.25, 0.75] (plan: 0.50). A binomial(40, p) count misses such a window by chance with
    probability below 1% at the planned p; the plan's idealisation (the best region is found) is
    what the windows allow for."""
    rr, claim = RandomizedResponse(1.5), PureDP(1.0)
    tests = verify.audit(rr, [(0, 1)], claim, samples=200, seed=0).n_tests
    n50 = verify.samples_needed(claim, PureDP(1.5), tests=tests)

    def rate(samples: int) -> float:
        return float(np.mean([verify.audit(rr, [(0, 1)], claim, samples=samples, seed=s).violation
                              for s in range(40)]))

    assert rate(n50 // 2) <= 0.3
    assert 0.25 <= rate(n50) <= 0.75
    assert rate(2 * n50) >= 0.6


def test_refusals_name_the_parameter() -> None:
    with pytest.raises(ValueError, match="satisfies claim"):
        verify.samples_needed(PureDP(1.0), PureDP(0.5))
    assert verify.audit_power(PureDP(1.0), PureDP(0.5), 10_000) == 0.0
    with pytest.raises(ValueError, match="confidence"):
        verify.samples_needed(PureDP(1.0), PureDP(2.0), confidence=1.0)
    with pytest.raises(ValueError, match="power"):
        verify.samples_needed(PureDP(1.0), PureDP(2.0), power=math.nan)
    with pytest.raises(TypeError, match="truth"):
        verify.samples_needed(PureDP(1.0), 2.0)  # type: ignore[arg-type]
    with pytest.raises((TypeError, ValueError), match="samples"):
        verify.audit_power(PureDP(1.0), PureDP(2.0), 0)
    with pytest.raises((TypeError, ValueError), match="tests"):
        verify.audit_power(PureDP(1.0), PureDP(2.0), 100, tests=0)
    with pytest.raises(ValueError, match="more than"):
        verify.samples_needed(PureDP(1.0), PureDP(1.0 + 1e-9))


def test_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["power", "--claim", "pure:1", "--truth", "pure:1.5", "--json"]) == 0
    out = capsys.readouterr().out
    assert f'"samples": {verify.samples_needed(PureDP(1.0), PureDP(1.5))}' in out
    assert main(["power", "--claim", "pure:1", "--truth", "pure:0.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "satisfies claim" in err
