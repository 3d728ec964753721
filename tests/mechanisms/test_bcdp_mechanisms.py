"""The L2-ball channel of Duchi, Jordan & Wainwright (Mechanism 2) and M_mean (Mechanism 1, Theorem 2)
[@aliakbarpour2025enhancing]: radius, unbiasedness and variance (statistical tests at fixed seeds,
5-sigma bounds: error rate below 1e-6 per coordinate under the CLT), privacy declarations, and the
zeta rules against the min-delta baseline."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accountant import BCDP, LocalDP, baseline_zeta, implies, mean_cdp_vector
from mechanisms.local import BCDPMean, DuchiL2

FIG3 = (0.2, 0.2) + (2.0,) * 8


@pytest.mark.parametrize(("k", "alpha"), [(1, 0.5), (2, 1.0), (3, 1.0), (10, 0.2), (50, 3.0)])
def test_unbiased_radius_is_half_the_printed_one(k: int, alpha: float) -> None:
    ch = DuchiL2(alpha, 2.0, k)
    assert ch.printed_radius / ch.sphere_radius == pytest.approx(2.0, rel=1e-12)
    # closed forms of E|U_1|: 1 (k = 1), 2/pi (k = 2), 1/2 (k = 3)
    m = {1: 1.0, 2: 2 / math.pi, 3: 0.5}.get(k)
    if m is not None and alpha in (0.5, 1.0):
        assert ch.sphere_radius == pytest.approx(2.0 / (math.tanh(alpha / 2) * m), rel=1e-12)


@pytest.mark.parametrize("v", [[0.3, -0.5, 0.2], [0.0, 0.0, 0.0], [0.6, 0.0, -0.8], [1.0, 0.0, 0.0]])
def test_channel_is_unbiased_with_the_derived_variance(v: list[float]) -> None:
    ch = DuchiL2(1.0, 1.0, 3)
    x = np.array(v)
    n = 200_000
    z = ch.sample(x, np.random.default_rng(11), size=n)
    assert np.allclose(np.linalg.norm(z, axis=1), ch.sphere_radius, rtol=1e-12)
    var = ch.sphere_radius**2 / 3 - x**2  # E Z_j^2 = B^2/k exactly
    se = np.sqrt(var / n)
    assert (np.abs(z.mean(axis=0) - x) < 5 * se).all()
    assert np.allclose(z.var(axis=0), var, rtol=0.03)
    if np.linalg.norm(x) > 0:  # with the printed radius the mean would be 2v: 2 mean(z) is far from v
        far = np.abs(2 * z.mean(axis=0) - x) > 5 * 2 * se
        assert far[np.abs(x) > 0.1].all()


def test_hemisphere_coin_has_the_sampled_probability() -> None:
    ch = DuchiL2(0.7, 1.0, 4)
    x = np.array([0.0, 1.0, 0.0, 0.0])  # on the sphere: the sign S is always +, v_t = v
    n = 100_000
    z = ch.sample(x, np.random.default_rng(5), size=n)
    agree = int((z @ x > 0).sum())
    p = math.exp(ch.sampling_alpha) / (1 + math.exp(ch.sampling_alpha))
    assert ch.sampling_alpha <= 0.7 and ch.sampling_alpha == pytest.approx(0.7, abs=1e-15)
    assert abs(agree - n * p) < 5 * math.sqrt(n * p * (1 - p))
    assert ch.guarantee() == LocalDP(0.7)


def test_channel_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="alpha"):
        DuchiL2(0.0, 1.0, 3)
    with pytest.raises(ValueError, match="radius"):
        DuchiL2(1.0, math.nan, 3)
    with pytest.raises(ValueError, match="ball"):
        DuchiL2(1.0, 1.0, 2).sample([1.0, 1.0], np.random.default_rng(0))
    with pytest.raises(ValueError, match="shape"):
        DuchiL2(1.0, 1.0, 2).sample([0.1, 0.1, 0.1], np.random.default_rng(0))
    with pytest.raises(TypeError, match="rng"):
        DuchiL2(1.0, 1.0, 2).sample([0.1, 0.1], 3)  # type: ignore[arg-type]


def test_mean_mechanism_checks_its_channel_declares_the_layer_level() -> None:
    def weak(alpha: float, radius: float, dim: int) -> DuchiL2:
        return DuchiL2(2 * alpha, radius, dim)  # twice the level it is asked for

    with pytest.raises(ValueError, match="does not imply"):
        BCDPMean((0.5, 1.0), 0.1, weak)


def test_mean_mechanism_is_unbiased_with_its_declared_variance() -> None:
    m = BCDPMean((0.5, 0.5, 1.0, 2.0), 0.2)
    x = np.array([0.5, -1.0, 0.25, 1.0])
    n = 100_000
    est = m.sample(x, np.random.default_rng(8), size=n)
    # exact variance: sum_k w_k^2 (V_k - x_i^2) / W_i^2 <= the declared worst case
    layers = m._layers
    w2 = np.zeros(4)
    den = np.zeros(4)
    for start, w, _ in layers:
        w2[start:] += w * w
        den[start:] += w
    var = m.coordinate_variances() - x**2 * w2 / den**2
    assert (np.abs(est.mean(axis=0) - x) < 5 * np.sqrt(var / n)).all()
    assert np.allclose(est.var(axis=0), var, rtol=0.03)
    assert (var <= m.coordinate_variances()).all()


@pytest.mark.parametrize("q", [0.0, 0.1, 0.5, 1.0])
def test_calibrated_mean_meets_the_target(q: float) -> None:
    target = BCDP(FIG3, q, 2.0)
    for rule in ("paper", "minimax", 0.7):
        m = BCDPMean.calibrated(target, rule, n=10_000)
        assert implies(m.guarantee(), target)
        assert implies(m.closed_form_guarantee(), LocalDP(2.0))
    with pytest.raises(ValueError, match="needs n"):
        BCDPMean.calibrated(target, "minimax")
    with pytest.raises(ValueError, match="eps"):
        BCDPMean.calibrated(BCDP(FIG3, q), "paper")


def baseline(q: float) -> BCDPMean:
    """The min-delta LDP channel on the whole record (one layer, c = 0.2 1)."""
    return BCDPMean((0.2,) * 10, q)


@pytest.mark.parametrize("q", [0.0, 0.1, 0.3, 0.6, 0.9])
def test_minimised_zeta_never_worse_than_the_baseline(q: float) -> None:
    n = 10_000
    b = baseline(q)
    if q > 0:  # zeta* makes M_mean the 0.2-LDP channel
        assert mean_cdp_vector(FIG3, 2.0, q, baseline_zeta(FIG3, 2.0, q)) == pytest.approx(b.c)
    best = BCDPMean.calibrated(BCDP(FIG3, q, 2.0), "minimax", n=n)
    # zeta* is on the search grid; its c is rounded down by an ulp, hence the 1e-12
    assert best.worst_case_mse(n) <= b.worst_case_mse(n) * (1 + 1e-12)
    if q == 0.0:
        assert best.worst_case_mse(n) < 0.5 * b.worst_case_mse(n)


def test_minimised_zeta_beats_the_baseline_by_monte_carlo() -> None:
    # Figure 3's data (+-1 records) at q = 0 (independent bits), small n, 30 trials each
    n, trials, q = 500, 30, 0.0
    rng = np.random.default_rng(21)
    best = BCDPMean.calibrated(BCDP(FIG3, q, 2.0), "minimax", n=n)
    b = baseline(q)
    err: dict[str, list[float]] = {"best": [], "base": []}
    for _ in range(trials):
        x = 2.0 * rng.integers(0, 2, size=(n, 10)) - 1.0
        for name, mech in (("best", best), ("base", b)):
            err[name].append(float(np.sum((mech.sample(x, rng).mean(axis=0) - x.mean(axis=0)) ** 2)))
    mb, mbase = np.mean(err["best"]), np.mean(err["base"])
    se = math.hypot(np.std(err["best"]), np.std(err["base"])) / math.sqrt(trials)
    assert mb < mbase - 5 * se  # strictly better at q = 0 beyond Monte-Carlo error
