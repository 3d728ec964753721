"""verify.canary_audit and the DP-SGD targets: the harness records fair coins, trains, scores and
pools runs; the report puts the audit's lower bound beside the accountant's upper bound; a correct
DP-SGD is not refuted and broken ones are (seeded runs: the verdicts are fixed by the seeds; the
false-refutation rate of the tests themselves is shown in test_one_run.py)."""

from __future__ import annotations

import numpy as np
import pytest

import verify
from accountant import GDP, PureDP
from mechanisms.estimators.mestimation import HuberRegression
from verify.training import VARIANTS, GradientCanarySGD, dpsgd_canaries


def target(variant: str) -> GradientCanarySGD:
    return GradientCanarySGD(256, 1.0, 1 / 8, 40, variant=variant)  # type: ignore[arg-type]


def test_correct_dpsgd_is_not_refuted_and_the_gap_is_named() -> None:
    t = target("correct")
    rep = verify.canary_audit(t.train, t.score, t.canaries(256, norm=10.0), np.random.default_rng(1),
                              claim=t.claim(), delta=1e-5)
    assert not rep.refuted
    assert rep.epsilon_upper is not None
    assert rep.gap is not None
    assert 0.0 < rep.epsilon_lower < rep.epsilon_upper
    assert rep.gap == pytest.approx(rep.epsilon_upper - rep.epsilon_lower)
    assert "gap (upper - lower)" in str(rep)
    assert "consistent" in str(rep)


@pytest.mark.parametrize("variant", ["no_clipping", "noise_by_batch"])
def test_broken_dpsgd_is_refuted_in_five_pooled_runs(variant: str) -> None:
    t = target(variant)
    rep = verify.canary_audit(t.train, t.score, t.canaries(256, norm=10.0), np.random.default_rng(1),
                              claim=t.claim(), delta=1e-5, runs=5)
    assert rep.refuted
    assert rep.audit.claim_refuted
    assert rep.audit.m == 5 * 256
    assert "REFUTES" in str(rep)


def test_coins_are_recorded_fair_and_reproducible() -> None:
    t = target("correct")
    can = t.canaries(256)
    a = verify.canary_audit(t.train, t.score, can, np.random.default_rng(5), runs=2)
    b = verify.canary_audit(t.train, t.score, can, np.random.default_rng(5), runs=2)
    assert a.included == b.included
    assert a.scores == b.scores
    assert len(a.included) == 512
    # 512 fair coins: the count of heads lies within 4.5 standard deviations of 256 (p < 1e-5)
    assert abs(sum(a.included) - 256) < 4.5 * np.sqrt(128)
    assert a.epsilon_upper is None
    assert a.gap is None


def test_train_sees_exactly_the_included_canaries() -> None:
    seen: list[int] = []

    def train(data: list[int], rng: np.random.Generator) -> list[int]:
        seen.extend(data)
        return data

    rep = verify.canary_audit(train, lambda model, c: float(c in model), list(range(50)),
                              np.random.default_rng(0), data=[100, 101])
    assert seen[:2] == [100, 101]
    assert sorted(seen[2:]) == [i for i in range(50) if rep.included[i]]
    assert rep.audit.epsilon_lower > 0  # the scores reveal the coins


def test_scorers() -> None:
    theta = np.array([1.0, -2.0])
    assert verify.alignment_score(lambda c: c)(theta, np.array([1.0, 0.0])) == -1.0
    assert verify.loss_score(lambda model, c: 3.0)(None, None) == -3.0


def test_dpsgd_canaries_have_the_declared_gradient_direction() -> None:
    rows = dpsgd_canaries(8, 16)
    model = HuberRegression(16, c=1.0, design_bound=1.0)
    x, y = model.split(rows)
    g = model.per_example_gradients(np.zeros((1, 16)), x[None], y[None])[0]
    np.testing.assert_allclose(g, -x)
    np.testing.assert_allclose(x @ x.T, np.eye(8), atol=1e-12)
    with pytest.raises(ValueError, match="power of 2"):
        dpsgd_canaries(4, 12)


def test_variants_and_bad_inputs() -> None:
    assert "correct" in VARIANTS
    with pytest.raises(ValueError, match="variant"):
        GradientCanarySGD(4, 1.0, 0.5, 1, variant="wrong")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="sampling_rate"):
        GradientCanarySGD(4, 1.0, 1e-30, 1)
    t = target("correct")
    with pytest.raises(TypeError, match="rng"):
        verify.canary_audit(t.train, t.score, t.canaries(4), 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="m >= 2"):
        verify.canary_audit(t.train, t.score, t.canaries(256)[:1], np.random.default_rng(0))
    with pytest.raises(ValueError, match="runs"):
        verify.canary_audit(t.train, t.score, t.canaries(4), np.random.default_rng(0), runs=0)
    with pytest.raises(TypeError, match="claim"):
        verify.canary_audit(t.train, t.score, t.canaries(4), np.random.default_rng(0), claim=1.0)  # type: ignore[arg-type]


def test_claim_upper_bound_is_the_accountants() -> None:
    t = target("correct")
    rep = verify.canary_audit(t.train, t.score, t.canaries(64), np.random.default_rng(2), claim=GDP(1.0),
                              delta=1e-5)
    assert rep.epsilon_upper == GDP(1.0).epsilon(1e-5)


def test_diffprivlib_gaussian_nb_at_its_declared_epsilon_is_not_refuted() -> None:
    """A third-party trainer through the harness (skipped where diffprivlib does not import): seeded
    from the audit's generator, so the verdict is fixed by the seed."""
    models = pytest.importorskip("diffprivlib.models")
    import warnings

    d = 4
    rng0 = np.random.default_rng(0)
    background = np.column_stack([rng0.uniform(0, 1, (20, d)), rng0.integers(0, 2, 20)])
    canaries = np.zeros((d, d + 1))
    canaries[np.arange(d), np.arange(d)] = 1.0

    def train(data: np.ndarray, rng: np.random.Generator) -> object:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = models.GaussianNB(epsilon=1.0, bounds=(np.zeros(d), np.ones(d)),
                                      random_state=int(rng.integers(2**31)))
            return model.fit(data[:, :-1], data[:, -1].astype(int))

    def score(model: object, canary: np.ndarray) -> float:
        return float(model.theta_[0, int(np.argmax(canary[:-1]))])  # type: ignore[attr-defined]

    rep = verify.canary_audit(train, score, canaries, np.random.default_rng(1), data=background,
                              claim=PureDP(1.0), runs=10)
    assert not rep.refuted
    assert rep.epsilon_upper == 1.0
    assert rep.audit.m == 10 * d
