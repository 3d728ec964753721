"""A real Opacus training run audited through ``verify.canary_audit`` (needs the ``opacus`` extra:
skipped where torch or opacus does not import).

Opacus' ``PrivacyEngine`` trains a logistic regression with 256 Dirac canaries
(``tests/support/opacus_target.py``), claimed with dpcert's certified Poisson DP-SGD accountant for
the run (q = 1/8, sigma = 1, T = 40: eps <= 5.79 at delta = 1e-5). Five runs pooled (1,280 coins) at
confidence 0.95: the run as claimed is not refuted, and Opacus asked for a tenth of the claimed noise,
or for no clipping with the noise of the claimed clipping norm, is refuted. Seeded runs (numpy
generators, torch seeded from them, one thread): the verdicts are fixed by the seeds; the
false-refutation rate of the tests themselves is shown in test_one_run.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import verify
from accountant import OpacusAccountant
from tests.support.opacus_target import OpacusLogistic

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

DELTA = 1e-5
RUNS = 5


@pytest.fixture(scope="module", autouse=True)
def one_thread() -> None:
    torch.set_num_threads(1)


def audit(variant: str) -> verify.CanaryAuditReport:
    t = OpacusLogistic(variant=variant)  # type: ignore[arg-type]
    return verify.canary_audit(t.train, t.score, t.canaries(), np.random.default_rng(1),
                               data=t.background(np.random.default_rng(0)), claim=t.claim(),
                               delta=DELTA, runs=RUNS)


def test_the_claim_is_the_accountants_for_the_opacus_run() -> None:
    """The claim is what an Opacus loop accounted by dpcert's Opacus-interface accountant reports,
    and Opacus' own RDP accountant gives a larger (looser, also sound) epsilon for the same run."""
    from opacus.accountants import RDPAccountant

    t = OpacusLogistic()
    ours, theirs = OpacusAccountant(), RDPAccountant()
    for _ in range(t.steps):
        ours.step(noise_multiplier=t.noise_multiplier, sample_rate=t.sampling_rate)
        theirs.step(noise_multiplier=t.noise_multiplier, sample_rate=t.sampling_rate)
    eps = t.claim().epsilon(DELTA)
    assert ours.get_epsilon(DELTA) == pytest.approx(eps, rel=1e-6)
    assert eps < theirs.get_epsilon(DELTA)


def test_opacus_run_as_claimed_is_not_refuted() -> None:
    rep = audit("correct")
    assert rep.audit.m == RUNS * 256
    assert rep.epsilon_upper is not None
    assert 0.0 < rep.epsilon_lower < rep.epsilon_upper
    assert not rep.audit.claim_refuted
    assert not rep.refuted


@pytest.mark.parametrize("variant", ["low_noise", "no_clipping"])
def test_broken_opacus_runs_are_refuted(variant: str) -> None:
    rep = audit(variant)
    assert rep.audit.claim_refuted
    assert rep.refuted
    assert "REFUTES" in str(rep)


def test_the_trained_model_learns_and_the_canary_gradient_is_clipped() -> None:
    """The background task is learned (accuracy well above 1/2 on fresh data), and in the run as
    claimed the canary's logit stays below log(radius / C - 1), so its gradient's norm
    (1 - sigmoid(z)) radius stays above the clipping norm: every sampled canary step is clipped
    to exactly C, the sensitivity the claim accounts."""
    t = OpacusLogistic()
    rng = np.random.default_rng(3)
    w = t.train(np.vstack([t.background(rng), t.canaries()]), rng)
    test = t.background(np.random.default_rng(4))
    x, y = test[:, : t.features], test[:, -1]
    assert np.mean((x @ w[: t.features] > 0) == (y == 1)) > 0.6
    logits = t.radius * w[t.features:]
    assert np.all(logits < np.log(t.radius / t.max_grad_norm - 1.0))
