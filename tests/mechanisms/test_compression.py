"""Privacy by compression [@zhou2009differential]: the release and its truncation, the computed
privacy loss (PLD of chi-square directions) against Monte Carlo, the truncated release's bound
against sampled losses, Theorem 4.6 as an asymptotic figure, and PCA with the Zwald-Blanchard bound."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accountant import PLD, Guarantee
from mechanisms.compression import (
    C1,
    C2,
    C_TRUNCATION,
    CompressedRelease,
    compression_pld,
    covariance,
    normalise_columns,
    subspace_error,
    theorem_4_6,
    truncated_loss_bound,
    truncation_radius,
    zwald_blanchard_bound,
)


def databases(n: int, p: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Neighbours of Example 3.6: +-1 matrices, x2 = x1 with one bit of the first record flipped
    (flipping a whole record would not change X'X)."""
    rng = np.random.default_rng(seed)
    x1 = rng.choice([-1.0, 1.0], size=(n, p))
    x2 = x1.copy()
    x2[0, 0] = -x1[0, 0]
    return x1, x2


def log_ratio(y: np.ndarray, s_num: np.ndarray, s_den: np.ndarray) -> np.ndarray:
    """log f_num(Y) - log f_den(Y) for stacked releases Y (k, m, p), rows N(0, S)."""
    m = y.shape[1]
    _, ln = np.linalg.slogdet(s_num)
    _, ld = np.linalg.slogdet(s_den)
    g = np.linalg.inv(s_num) - np.linalg.inv(s_den)
    quad = np.einsum("kij,jl,kil->k", y, g, y)
    return np.asarray(-0.5 * m * (ln - ld) - 0.5 * quad)


def test_constants_and_normalisation() -> None:
    assert C1 == pytest.approx(2.5044, abs=1e-4) and C2 == pytest.approx(7.6885, abs=1e-4)
    assert C_TRUNCATION == pytest.approx(math.sqrt(2 * (C1 + C2)))
    x = normalise_columns(np.random.default_rng(0).normal(size=(50, 3)))
    assert np.allclose((x**2).sum(axis=0), 50)
    with pytest.raises(ValueError, match="all-zero column"):
        normalise_columns(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="m"):
        CompressedRelease(0)


def test_sign_flip_of_a_record_is_invisible() -> None:
    x1 = np.random.default_rng(0).choice([-1.0, 1.0], size=(20, 3))
    x2 = x1.copy()
    x2[0] = -x2[0]
    assert compression_pld(x1, x2, 10).epsilon(0.0) == 0.0


def test_release_rows_have_the_data_covariance() -> None:
    x, _ = databases(30, 3, 1)
    rel = CompressedRelease(m=20_000)
    y = rel.sample(x, np.random.default_rng(2))
    emp = y.T @ y / rel.m
    # entries of S = Y'Y/m have variance (s_jk^2 + s_jj s_kk)/m <= 2 max(s)^2 / m: 5 sigma
    s = covariance(x)
    assert np.abs(emp - s).max() < 5 * math.sqrt(2 * np.abs(s).max() ** 2 / rel.m)


def test_truncation_keeps_outputs_in_the_box() -> None:
    x, _ = databases(40, 2, 3)
    ref = covariance(x)
    rel = CompressedRelease(m=120, reference=ref)
    rng = np.random.default_rng(4)
    for _ in range(50):
        y = rel.sample(x, rng)
        assert np.abs(y.T @ y / 120 - ref).max() <= rel.radius(40, 2)
    with pytest.raises(RuntimeError, match="no draw"):
        CompressedRelease(m=5, reference=ref + 10.0, max_draws=3).sample(x, rng)


def test_computed_loss_matches_monte_carlo() -> None:
    n, p, m = 40, 2, 10
    x1, x2 = databases(n, p, 5)
    pld = compression_pld(x1, x2, m)
    assert isinstance(pld, PLD)
    rel = CompressedRelease(m)
    rng = np.random.default_rng(6)
    k = 20_000
    s1, s2 = covariance(x1), covariance(x2)
    eps_grid = (0.0, 0.1, 0.3)  # delta from 0.06 to 0.004: visible to 20 000 draws
    est = {e: [] for e in eps_grid}  # type: dict[float, list[tuple[float, float]]]
    for xq, sq, sp in ((x2, s2, s1), (x1, s1, s2)):  # both orders: (P, Q) = (x1, x2) and swapped
        y = np.stack([rel.sample(xq, rng) for _ in range(k)])
        loss = log_ratio(y, sq, sp)  # L = log q/p under Q
        for e in eps_grid:
            terms = np.maximum(0.0, -np.expm1(e - loss))  # delta(eps) = E_Q (1 - e^{eps - L})_+
            est[e].append((float(terms.mean()), float(terms.std()) / math.sqrt(k)))
    for e in eps_grid:
        mc, se = max(est[e])  # the PLD reports the worse order
        lo, hi = pld.delta_bracket(e)
        assert lo - 5 * se <= mc <= hi + 5 * se  # 5 sigma: error rate < 1e-6 per check (CLT)


def test_truncated_bound_covers_sampled_losses_and_theorem_is_asymptotic() -> None:
    n, p, m = 40, 2, 120
    x1, x2 = databases(n, p, 7)
    ref = covariance(x1)
    dmax = float(np.abs(covariance(x1) - covariance(x2)).max())
    bound = truncated_loss_bound(x1, x2, m, ref, dmax)
    assert math.isfinite(bound.value) and bound.renormalisation == pytest.approx(-math.log1p(-1 / n**2))
    rng = np.random.default_rng(8)
    rel = CompressedRelease(m, reference=ref, delta_max=dmax)
    for xj in (x1, x2):
        y = np.stack([rel.sample(xj, rng) for _ in range(300)])
        assert np.abs(log_ratio(y, covariance(x1), covariance(x2))).max() <= bound.box
    th = theorem_4_6(n, p, m, dmax, ref)
    assert not isinstance(th, Guarantee)
    assert "asymptotic" in str(th) and "not a bound" in str(th)
    assert next(name for name, _, _ in th.assumptions).startswith("Lemma 4.4")
    assert th.value == pytest.approx(sum(th.terms))
    assert truncation_radius(n, p, m, dmax) == pytest.approx(
        C_TRUNCATION * math.sqrt(math.log(2 * n * p) / m) + dmax)


def test_pca_on_compressed_data_within_zwald_blanchard() -> None:
    rng = np.random.default_rng(9)
    n, p, d = 1000, 5, 2
    scales = np.array([3.0, 2.0, 0.5, 0.4, 0.3])
    x = normalise_columns(rng.normal(size=(n, p)) * scales @ np.linalg.qr(rng.normal(size=(p, p)))[0])
    a = covariance(x)
    errors = {}
    for m in (100, 5000):
        y = CompressedRelease(m).sample(x, rng)
        b = y.T @ y / m - a
        err = subspace_error(a, a + b, d)
        zb = zwald_blanchard_bound(a, b, d)
        if zb is not None:
            assert err <= zb
        errors[m] = err
    assert errors[5000] < errors[100]
