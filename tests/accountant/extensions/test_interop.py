"""Interop: the Opacus-interface accountant, dp_accounting DpEvent trees, the incremental ledger.

References are independent: dp_accounting's own PLD and RDP accountants (another implementation),
closed forms (randomized response, tree aggregation as a Gaussian), and our fresh PLD composition.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pytest

from accountant import (
    GDP,
    ZCDP,
    ApproxDP,
    BudgetExceededError,
    Ledger,
    OpacusAccountant,
    compose,
    dpsgd_epsilon,
    dpsgd_pld,
    from_dp_event,
    implies,
    subsampled_gaussian,
)

dpa = pytest.importorskip("dp_accounting")


# ------------------------------------------------------------------------------ Opacus


def test_opacus_interface_history_and_epsilon() -> None:
    acct = OpacusAccountant()
    assert len(acct) == 0 and acct.get_epsilon(1e-5) == 0.0 and acct.mechanism() == "dpcert-pld"
    for _ in range(300):
        acct.step(noise_multiplier=1.0, sample_rate=0.01)
    for _ in range(200):
        acct.step(noise_multiplier=0.8, sample_rate=0.02)
    acct.step(noise_multiplier=1.0, sample_rate=0.01)
    assert acct.history == [(1.0, 0.01, 300), (0.8, 0.02, 200), (1.0, 0.01, 1)] and len(acct) == 501
    ref = compose([subsampled_gaussian(1.0, 0.01)] * 301 + [subsampled_gaussian(0.8, 0.02)] * 200)
    assert acct.get_epsilon(1e-5) == pytest.approx(ref.epsilon(1e-5), abs=1e-4)
    lo, hi = acct.get_epsilon_bracket(1e-5)
    assert lo <= hi == acct.get_epsilon(1e-5)


def test_opacus_single_phase_equals_dpsgd_epsilon() -> None:
    acct = OpacusAccountant()
    for _ in range(1000):
        acct.step(noise_multiplier=1.0, sample_rate=0.01)
    assert acct.get_epsilon(1e-5) == dpsgd_epsilon(0.01, 1.0, 1000, 1e-5).epsilon_upper


def test_opacus_state_dict_and_hook() -> None:
    acct = OpacusAccountant()
    hook = acct.get_optimizer_hook_fn(sample_rate=0.01)
    optim = SimpleNamespace(noise_multiplier=1.1, accumulated_iterations=2)
    for _ in range(5):
        hook(optim)  # Opacus calls it after each optimiser step
    assert acct.history == [(1.1, 0.02, 5)]
    state = acct.state_dict()
    assert state == {"history": [(1.1, 0.02, 5)], "mechanism": "dpcert-pld"}
    other = OpacusAccountant()
    other.load_state_dict(state)
    assert other.history == acct.history and other.get_epsilon(1e-5) == acct.get_epsilon(1e-5)
    bad_states: list[tuple[dict[str, Any], str]] = [
        ({}, "empty"), ({"history": []}, "mechanism"),
        ({"history": [], "mechanism": "rdp"}, "rdp"),
        ({"history": [(1.0, 2.0, 3)], "mechanism": "dpcert-pld"}, "sample_rate"),
        ({"history": [(1.0,)], "mechanism": "dpcert-pld"}, "history")]
    for bad, word in bad_states:
        with pytest.raises(ValueError, match=word):
            OpacusAccountant().load_state_dict(bad)
    with pytest.raises(ValueError, match="noise_multiplier"):
        acct.step(noise_multiplier=0.0, sample_rate=0.1)


# ------------------------------------------------------------------------------ DpEvent


def theirs(event: object, delta: float) -> float:
    from dp_accounting.pld import pld_privacy_accountant

    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
    acc.compose(event)
    return float(acc.get_epsilon(delta))


@pytest.mark.parametrize("event", [
    dpa.GaussianDpEvent(2.0),
    dpa.LaplaceDpEvent(3.0),
    dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0)), 500),
    dpa.ComposedDpEvent([dpa.GaussianDpEvent(3.0), dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(20.0), 10),
                         dpa.NoOpDpEvent()]),
    dpa.PoissonSampledDpEvent(0.1, dpa.LaplaceDpEvent(1.0)),
    dpa.SelfComposedDpEvent(dpa.dp_event.DiscreteLaplaceDpEvent(0.5, 2), 3),
])
def test_dp_events_agree_with_dp_accounting(event: object) -> None:
    ours = from_dp_event(event).epsilon(1e-6)
    assert ours == pytest.approx(theirs(event, 1e-6), abs=5e-3)


def test_randomized_response_and_tree_closed_forms() -> None:
    rr = from_dp_event(dpa.RandomizedResponseDpEvent(noise_parameter=0.5, num_buckets=2))
    assert math.log(3.0) <= rr.epsilon(0.0) <= math.log(3.0) * (1 + 1e-9)  # e^eps = 1 + k(1-p)/p
    tree = from_dp_event(dpa.SingleEpochTreeAggregationDpEvent(noise_multiplier=2.0, step_counts=[8, 3]))
    assert isinstance(tree, GDP) and tree.mu == pytest.approx(1.0, rel=1e-15) and tree.mu >= 1.0
    assert from_dp_event(dpa.dp_event.ZCDpEvent(0.1)) == ZCDP(0.1)
    zc = from_dp_event(dpa.dp_event.ZCDpEvent(rho=0.1, xi=0.05))
    from dp_accounting.rdp import rdp_privacy_accountant

    acc = rdp_privacy_accountant.RdpAccountant()
    acc.compose(dpa.dp_event.ZCDpEvent(rho=0.1, xi=0.05))
    assert zc.epsilon(1e-6) == pytest.approx(acc.get_epsilon(1e-6), rel=0.05)
    assert from_dp_event(dpa.SelfComposedDpEvent(dpa.NoOpDpEvent(), 5)).epsilon(0.0) == 0.0
    wor = from_dp_event(dpa.SampledWithoutReplacementDpEvent(1000, 10, dpa.GaussianDpEvent(1.0)))
    assert 0.0 < wor.epsilon(1e-5) < GDP(1.0).epsilon(1e-5)


@pytest.mark.parametrize(("event", "word"), [
    (dpa.NonPrivateDpEvent(), "NonPrivateDpEvent"),
    (dpa.UnsupportedDpEvent(), "UnsupportedDpEvent"),
    (dpa.SampledWithReplacementDpEvent(100, 10, dpa.GaussianDpEvent(1.0)), "SampledWithReplacement"),
    (dpa.ComposedDpEvent([dpa.GaussianDpEvent(1.0), dpa.dp_event.RepeatAndSelectDpEvent(
        dpa.GaussianDpEvent(1.0), 2.0, 1.0)]), "RepeatAndSelectDpEvent"),
    (dpa.dp_event.MixtureOfGaussiansDpEvent(1.0, [1.0], [1.0]), "MixtureOfGaussians"),
    (dpa.GaussianDpEvent(0.0), "noise_multiplier"),
    (dpa.PoissonSampledDpEvent(1.5, dpa.GaussianDpEvent(1.0)), "sampling_probability"),
])
def test_unsupported_events_are_clear_errors(event: object, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        from_dp_event(event)


def test_not_an_event() -> None:
    with pytest.raises(TypeError, match="DpEvent"):
        from_dp_event(GDP(1.0))


# ------------------------------------------------------------------------------ ledger


def test_incremental_ledger_matches_fresh_composition() -> None:
    budget = ApproxDP(1.2, 1e-5)
    ledger = Ledger(budget=budget)
    epoch = dpsgd_pld(0.01, 1.0, 100)
    recorded = 0
    with pytest.raises(BudgetExceededError):
        for _ in range(50):
            ledger.record(epoch, label="epoch")
            recorded += 1
            fresh = dpsgd_epsilon(0.01, 1.0, 100 * recorded, 1e-5)
            spent = ledger.spent_epsilon(1e-5)
            assert fresh.epsilon_lower <= spent <= fresh.epsilon_upper + 1e-4  # sound and tight
    # the same decision as the fresh (non-incremental) check: the next epoch does not fit
    assert implies(dpsgd_pld(0.01, 1.0, 100 * recorded), budget)
    assert not implies(dpsgd_pld(0.01, 1.0, 100 * (recorded + 1)), budget)
    assert len(ledger) == recorded
    again = Ledger.from_json(ledger.to_json())
    assert again.spent_epsilon(1e-5) == pytest.approx(ledger.spent_epsilon(1e-5), abs=1e-4)
