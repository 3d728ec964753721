"""DP-SGD calibration: noise multiplier, sampling rate and steps for a target (eps, delta).

Soundness: the answer implies the target by the sound PLD bound at the default grid. Tightness: a
parameter a little on the unsafe side is shown NOT to reach the target by the PLD's *lower* bound
(so the answer is provably within that margin of the truth). Golden values: full-batch DP-SGD is
a Gaussian mechanism (sqrt(T)/sigma-GDP), whose exact (eps, delta) curve is the analytic Gaussian
formula delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), solved here with mpmath.
"""

from __future__ import annotations

import math

import mpmath
import pytest

from accountant import (
    ApproxDP,
    dpsgd_epsilon,
    dpsgd_noise_multiplier,
    dpsgd_pld,
    dpsgd_sampling_rate,
    dpsgd_steps,
    implies,
)


def analytic_gaussian_mu(eps: float, delta: float) -> float:
    mp = mpmath.mp.clone()
    mp.dps = 40

    def gap(mu: mpmath.mpf) -> mpmath.mpf:
        return mp.ncdf(-eps / mu + mu / 2) - mp.exp(eps) * mp.ncdf(-eps / mu - mu / 2) - delta

    return float(mp.findroot(gap, (mp.mpf("0.01"), mp.mpf(20)), solver="bisect"))


@pytest.mark.parametrize(("eps", "delta", "steps"), [(1.0, 1e-5, 10), (3.0, 1e-6, 1)])
def test_full_batch_matches_analytic_gaussian(eps: float, delta: float, steps: int) -> None:
    sigma = dpsgd_noise_multiplier(eps, delta, 1.0, steps)
    exact = math.sqrt(steps) / analytic_gaussian_mu(eps, delta)
    assert exact <= sigma <= exact * (1 + 3e-3)  # never below the truth (sound), within rtol + grid


def test_noise_multiplier_sound_and_tight() -> None:
    q, t, eps, delta = 0.01, 1000, 3.0, 1e-5
    sigma = dpsgd_noise_multiplier(eps, delta, q, t)
    assert implies(dpsgd_pld(q, sigma, t), ApproxDP(eps, delta))  # the default (fine) grid agrees
    assert dpsgd_epsilon(q, sigma * (1 - 5e-3), t, delta).epsilon_lower > eps  # provably too little


def test_noise_multiplier_against_dp_accounting() -> None:
    """An independent accountant (Google's PLD) agrees that the answer meets the target, tightly."""
    dpa = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    q, t, eps, delta = 0.01, 1000, 2.0, 1e-5
    sigma = dpsgd_noise_multiplier(eps, delta, q, t)

    def theirs(s: float) -> float:
        acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-4)
        acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(s)), t)
        return float(acc.get_epsilon(delta))

    assert eps - 1e-2 < theirs(sigma) <= eps + 1e-3
    assert theirs(sigma * (1 - 1e-2)) > eps


def test_sampling_rate_and_steps_sound_and_tight() -> None:
    eps, delta, sigma = 2.0, 1e-5, 1.0
    q = dpsgd_sampling_rate(eps, delta, sigma, 500)
    assert implies(dpsgd_pld(q, sigma, 500), ApproxDP(eps, delta))
    assert dpsgd_epsilon(q * 1.01, sigma, 500, delta).epsilon_lower > eps
    t = dpsgd_steps(eps, delta, 0.01, sigma)
    assert implies(dpsgd_pld(0.01, sigma, t), ApproxDP(eps, delta))
    assert dpsgd_epsilon(0.01, sigma, math.ceil(t * 1.01), delta).epsilon_lower > eps


def test_edges() -> None:
    assert dpsgd_sampling_rate(50.0, 1e-5, 1.0, 10) == 1.0  # full batches already fit
    assert dpsgd_steps(0.01, 1e-10, 0.5, 0.5) == 0  # not even one step fits
    assert dpsgd_steps(5.0, 1e-5, 0.001, 5.0, max_steps=1000) == 1000


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"target_epsilon": -1.0}, "target_epsilon"),
    ({"target_epsilon": math.nan}, "target_epsilon"),
    ({"delta": 2.0}, "delta"),
    ({"sampling_rate": 0.0}, "sampling_rate"),
    ({"steps": 0}, "steps"),
    ({"rtol": 0.5}, "rtol"),
])
def test_bad_input_names_the_parameter(kwargs: dict[str, float], word: str) -> None:
    args = {"target_epsilon": 1.0, "delta": 1e-5, "sampling_rate": 0.01, "steps": 10, **kwargs}
    with pytest.raises(ValueError, match=word):
        dpsgd_noise_multiplier(**args)  # type: ignore[arg-type]
