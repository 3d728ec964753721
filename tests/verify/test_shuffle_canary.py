"""The white-box audit of shuffled DP-SGD claimed with the Poisson accountant (the construction of
the accountant's shuffle lower bound: every other gradient -C e_0, the canary +C e_0, the score the
log-likelihood ratio of each epoch's largest batch sum), and ``verify.power_ceiling``: what no
audit can refute. Seeded: each verdict is fixed by its seed and holds at confidence 0.95."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import verify
from accountant import GDP, ApproxDP, Guarantee, PureDP, dpsgd_pld, shuffle_max_cdf
from verify.training import GradientCanarySGD

SIGMA, Q, STEPS, SLOTS = 0.83, 1 / 16, 160, 64  # 10 epochs; the Poisson accountant: eps ~ 8 at 1e-5


def _target(variant: str = "shuffle_as_poisson") -> GradientCanarySGD:
    return GradientCanarySGD(1, SIGMA, Q, STEPS, variant=variant, slots=SLOTS)  # type: ignore[arg-type]


def test_max_llr_is_the_log_density_ratio_of_the_accountants_pair() -> None:
    """Against central differences (h = 1e-4, 40 digits) of the CDFs the accountant's lower bound uses."""
    t = GradientCanarySGD(1, SIGMA, 1 / 8, 8, variant="shuffle_as_poisson", slots=8)  # one epoch, b = 1
    for x in (-1.5, 0.3, 1.7, 3.2):
        outputs = np.full((8, 1), -10.0)
        outputs[3, 0] = x - 1.0  # batch sum over C, shifted by b = 1: x
        with mpmath.workdps(40):
            dens = [shuffle_max_cdf(x + 1e-4, SIGMA, 8, 8, s) - shuffle_max_cdf(x - 1e-4, SIGMA, 8, 8, s)
                    for s in (2, 1)]
            golden = float(mpmath.log(dens[0] / dens[1]))
        assert t.max_llr(outputs) == pytest.approx(golden, rel=1e-6, abs=1e-7)


def test_slots_leave_one_batch_short_each_epoch() -> None:
    """11 rows over 12 slots, b = 3, K = 4: row i is e_i, so a step's output (noise 1e-9) shows its batch."""
    t = GradientCanarySGD(11, 1e-9, 1 / 4, 8, variant="shuffle_as_poisson", slots=12)
    out = np.round(t.step_outputs(np.eye(11), np.random.default_rng(0)))
    assert sorted(out[:4].sum(axis=1).tolist()) == sorted(out[4:].sum(axis=1).tolist()) == [2, 3, 3, 3]
    for e in range(2):
        np.testing.assert_array_equal(out[4 * e:4 * e + 4].sum(axis=0), np.ones(11))  # each row once an epoch


def _audit(variant: str) -> verify.AuditReport:
    t = _target(variant)
    background, canary = t.adversarial_pair()
    target = _target()  # the score reads the shuffled epochs' structure whatever ran

    def mechanism(data: np.ndarray, rng: np.random.Generator) -> float:
        return target.max_llr(t.step_outputs(data, rng))

    return verify.audit(mechanism, [(background, np.vstack([background, canary]))], t.claim(), samples=50,
                        seed=0, floating_point=False, delta=1e-5)


def test_shuffled_dpsgd_claimed_as_poisson_at_eps_8_is_refuted_in_100_runs() -> None:
    rep = _audit("shuffle_as_poisson")
    assert _target().claim().epsilon(1e-5) == pytest.approx(7.98, abs=0.05)
    assert rep.violation
    assert rep.samples_total == 100


def test_poisson_dpsgd_with_the_same_canary_and_score_is_not_refuted() -> None:
    assert not _audit("correct").violation


def test_fixed_points_match_closed_forms() -> None:
    assert verify.tradeoff_fixed_point(ApproxDP(8.0, 1e-5)) == pytest.approx((1 - 1e-5) / (1 + math.exp(8)),
                                                                            rel=1e-9)
    assert verify.tradeoff_fixed_point(PureDP(2.0)) == pytest.approx(1 / (1 + math.exp(2)), rel=1e-9)
    assert verify.tradeoff_fixed_point(GDP(1.0)) == pytest.approx(float(mpmath.ncdf(-0.5)), rel=1e-9)


@pytest.mark.parametrize("claim", [ApproxDP(8.0, 1e-5), GDP(1.5), dpsgd_pld(Q, SIGMA, STEPS)])
def test_randomised_response_at_the_fixed_point_meets_the_claim(claim: object) -> None:
    """The step of the proof: RR with error p (curve through (0, 1), (p, p), (1, 0)) is f-DP."""
    assert isinstance(claim, Guarantee)
    p = verify.tradeoff_fixed_point(claim)
    a = np.linspace(0.0, 1.0, 2001)
    rr = np.where(a <= p, 1.0 - a * (1.0 - p) / p, p * (1.0 - a) / (1.0 - p))
    assert np.all(rr >= np.asarray(claim.tradeoff(a)) - 1e-12)


def test_power_ceiling_for_eps_8() -> None:
    c = ApproxDP(8.0, 1e-5)
    p = (1 - 1e-5) / (1 + math.exp(8))
    assert verify.power_ceiling(c, 100) == pytest.approx(0.05 * (1 - p) ** -100, rel=1e-9)
    assert verify.power_ceiling(c, 100) < 0.052
    assert verify.power_ceiling(c, 1000) < 0.07
    need = math.ceil(math.log(20) / -math.log1p(-p))
    assert need == 8932
    assert verify.power_ceiling(c, need - 1) < 1.0 <= verify.power_ceiling(c, need)
    # the exact binomial of the one-run test: all N guesses right has p-value (e^8/(1+e^8))^N
    assert (math.exp(8) / (1 + math.exp(8))) ** (need - 1) > 0.05
    assert verify.power_ceiling(dpsgd_pld(Q, SIGMA, STEPS), 100) == 1.0


def test_power_ceiling_bad_inputs() -> None:
    with pytest.raises(ValueError, match="draws"):
        verify.power_ceiling(GDP(1.0), 0)
    with pytest.raises(ValueError, match="confidence"):
        verify.power_ceiling(GDP(1.0), 10, confidence=1.5)
    with pytest.raises(TypeError, match="claim"):
        verify.power_ceiling(1.0, 10)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="slots"):
        GradientCanarySGD(1, 1.0, 1 / 4, 4, slots=6)
    with pytest.raises(ValueError, match="slots"):
        GradientCanarySGD(1, 1.0, 1 / 4, 4).adversarial_pair()
