"""Issue 27: DP-SGD as Opacus users write it (epochs, batch size, dataset size), and the
Opacus-style accountant's keywords and ``get_privacy_spent``."""

from __future__ import annotations

import math
from typing import Any

import pytest

from accountant import (
    ApproxDP,
    OpacusAccountant,
    dpsgd_epsilon,
    dpsgd_noise_multiplier,
    dpsgd_pld,
    dpsgd_schedule,
    implies,
    subsampled_gaussian_rdp,
)
from accountant.notions.guarantees import rdp_epsilon


def test_schedule_from_epochs_batch_and_dataset_size() -> None:
    assert dpsgd_schedule(epochs=3, batch_size=100, dataset_size=1000) == (0.1, 30)
    assert dpsgd_schedule(0.01, epochs=2) == (0.01, 200)  # 1/0.01 is 100 steps, not 101
    assert dpsgd_schedule(epochs=1, batch_size=256, dataset_size=60_000) == (256 / 60_000, 235)  # up
    assert dpsgd_schedule(0.1, 7) == (0.1, 7)
    # both forms of a parameter are accepted when they agree
    assert dpsgd_schedule(0.1, 30, epochs=3, batch_size=100, dataset_size=1000) == (0.1, 30)


@pytest.mark.parametrize("kwargs, match", [
    ({"sampling_rate": 0.2, "steps": 5, "batch_size": 100, "dataset_size": 1000}, "inconsistent sampling"),
    ({"sampling_rate": 0.1, "steps": 5, "epochs": 3}, "inconsistent length"),
    ({"steps": 5, "batch_size": 100}, "batch_size and dataset_size go together"),
    ({"steps": 5, "dataset_size": 100}, "batch_size and dataset_size go together"),
    ({"epochs": 1, "batch_size": 2000, "dataset_size": 1000},
     r"batch_size must be an integer in \[1, 1000\]"),
    ({"epochs": 1, "batch_size": 10.5, "dataset_size": 1000}, "batch_size must be an integer"),
    ({"epochs": -1, "batch_size": 10, "dataset_size": 1000}, "epochs"),
    ({"epochs": math.nan, "sampling_rate": 0.1}, "epochs"),
    ({"sampling_rate": 0.1}, "give steps, or epochs"),
    ({"steps": 3}, "give sampling_rate"),
])
def test_schedule_refusals(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises((TypeError, ValueError), match=match):
        dpsgd_schedule(**kwargs)


def test_dpsgd_epsilon_takes_epochs_and_batch_size() -> None:
    by_rate = dpsgd_epsilon(0.1, 1.0, 30, 1e-5, also=())
    by_epochs = dpsgd_epsilon(noise_multiplier=1.0, epochs=3, batch_size=100, dataset_size=1000,
                              delta=1e-5, also=())
    assert by_epochs.steps == 30 and by_epochs.epsilon_upper == by_rate.epsilon_upper
    with pytest.raises(ValueError, match="inconsistent"):
        dpsgd_epsilon(0.2, 1.0, delta=1e-5, epochs=3, batch_size=100, dataset_size=1000)
    with pytest.raises(TypeError, match="delta"):
        dpsgd_epsilon(0.1, 1.0, 30)


def test_comparisons_only_on_request() -> None:
    plain = dpsgd_epsilon(0.1, 1.0, 30, 1e-5, also=())
    assert plain.clt_mu is None and plain.clt_epsilon is None and plain.rdp_epsilon is None
    both = dpsgd_epsilon(0.1, 1.0, 30, 1e-5)  # the Python default keeps both
    assert both.clt_mu is not None and both.rdp_epsilon is not None
    assert both.epsilon_upper == plain.epsilon_upper
    only_rdp = dpsgd_epsilon(0.1, 1.0, 30, 1e-5, also=("rdp",))
    assert only_rdp.rdp_epsilon == both.rdp_epsilon and only_rdp.clt_mu is None
    with pytest.raises(ValueError, match="also"):
        dpsgd_epsilon(0.1, 1.0, 30, 1e-5, also=("prv",))


def test_noise_multiplier_takes_epochs_and_batch_size() -> None:
    sigma = dpsgd_noise_multiplier(2.0, 1e-5, epochs=2, batch_size=50, dataset_size=1000, rtol=1e-2)
    assert sigma == dpsgd_noise_multiplier(2.0, 1e-5, 0.05, 40, rtol=1e-2)
    assert implies(dpsgd_pld(0.05, sigma, 40), ApproxDP(2.0, 1e-5))
    with pytest.raises(ValueError, match="inconsistent length"):
        dpsgd_noise_multiplier(2.0, 1e-5, 0.05, 41, epochs=2)


def test_opacus_accountant_refuses_unknown_keywords() -> None:
    acct = OpacusAccountant()
    acct.step(noise_multiplier=1.0, sample_rate=0.01)
    with pytest.raises(TypeError, match="alphas"):
        acct.get_epsilon(1e-5, alphas=[2.0])  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="delta_error"):
        acct.get_epsilon(1e-5, delta_error=1e-8)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="poisson"):
        acct.get_epsilon(1e-5, poisson=False)
    with pytest.raises(ValueError, match="tol"):
        acct.get_epsilon(1e-5, eps_error=0.0)
    assert acct.get_epsilon(1e-5, poisson=True) == acct.get_epsilon(1e-5)


def test_eps_error_is_the_pld_accuracy() -> None:
    acct = OpacusAccountant()
    for _ in range(300):
        acct.step(noise_multiplier=1.0, sample_rate=0.02)
    fine, coarse = acct.get_epsilon(1e-5, eps_error=1e-4), acct.get_epsilon(1e-5, eps_error=0.1)
    assert fine <= coarse  # both sound; the coarser grid is looser
    assert fine == dpsgd_epsilon(0.02, 1.0, 300, 1e-5, tol=1e-4, also=()).epsilon_upper


def test_get_privacy_spent_is_eps_and_best_alpha() -> None:
    acct = OpacusAccountant()
    assert acct.get_privacy_spent(1e-5)[0] == 0.0 and math.isnan(acct.get_privacy_spent(1e-5)[1])
    for _ in range(500):
        acct.step(noise_multiplier=1.0, sample_rate=0.01)
    for _ in range(100):
        acct.step(noise_multiplier=2.0, sample_rate=0.02)
    eps, alpha = acct.get_privacy_spent(1e-5)
    assert eps == acct.get_epsilon(1e-5)
    # best_alpha: the order minimising the RDP bound of the same steps (computed independently)
    orders = [1 + k / 10 for k in range(1, 100)] + [float(a) for a in range(12, 64)]
    a1 = subsampled_gaussian_rdp(0.01, 1.0, 500, orders=orders).epsilons
    a2 = subsampled_gaussian_rdp(0.02, 2.0, 100, orders=orders).epsilons
    best = min(orders, key=lambda o: rdp_epsilon(o, a1[orders.index(o)] + a2[orders.index(o)], 1e-5))
    assert alpha == best and isinstance(alpha, float)
    rdp_eps = min(rdp_epsilon(o, x + y, 1e-5) for o, x, y in zip(orders, a1, a2, strict=True))
    assert eps <= rdp_eps  # the PLD bound is at least as tight as the RDP one
    eps2, alpha2 = acct.get_privacy_spent(1e-5, alphas=[2.0, 4.0, 8.0])
    assert eps2 == eps and alpha2 in (2.0, 4.0, 8.0)
    with pytest.raises(ValueError, match="alphas"):
        acct.get_privacy_spent(1e-5, alphas=[0.5])
