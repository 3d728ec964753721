"""The lattice staircase mechanism: gamma* against a direct minimisation of the variance, the exact
sampler against its pmf (chi-square), the privacy loss enumerated on a neighbouring pair (bounded by
and attaining eps_r), an audit of the sampler, its variance against the closed form (the accuracy
rate: 0.959 of Laplace's at eps = 1), and bad inputs."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import integrate, optimize, stats

import verify
from accountant import PureDP
from mechanisms import Domain, Mean, Staircase
from mechanisms.noise.staircase import staircase_array, staircase_gamma, staircase_variance_ratio


def _variance_by_quadrature(eps: float, g: float) -> float:
    """E Z^2 of the continuous staircase (Delta = 1) by summing numerical integrals stair by stair."""
    b = math.exp(-eps)
    norm = 2 * sum(b**j * (g + (1 - g) * b) for j in range(400))
    total = 0.0
    for j in range(80):
        total += b**j * integrate.quad(lambda z: z * z, j, j + g)[0]
        total += b ** (j + 1) * integrate.quad(lambda z: z * z, j + g, j + 1)[0]
    return 2 * total / norm


@pytest.mark.parametrize("eps", [0.5, 1.0, 3.0])
def test_gamma_star_minimises_the_variance(eps: float) -> None:
    """The closed-form variance ratio agrees with quadrature, and gamma* is the quadrature's argmin."""
    g = staircase_gamma(eps)
    assert staircase_variance_ratio(eps, g) == pytest.approx(_variance_by_quadrature(eps, g) * eps**2 / 2,
                                                             rel=1e-9)
    best = optimize.minimize_scalar(lambda x: _variance_by_quadrature(eps, x), bounds=(1e-4, 1 - 1e-4),
                                    method="bounded", options={"xatol": 1e-6})
    assert g == pytest.approx(best.x, abs=1e-4)
    assert staircase_variance_ratio(eps) < 1.0  # below the Laplace mechanism's 2/eps^2


@pytest.mark.parametrize(("eps", "stair", "centre"), [(Fraction(1, 2), 3, 2), (Fraction(3, 4), 4, 1)])
def test_sampler_follows_its_pmf(eps: Fraction, stair: int, centre: int) -> None:
    """100000 draws: chi-square against P(z) proportional to exp(-eps t(z)) on |z| <= 25 plus the
    tail (false-alarm rate 1e-3 each); eps = 3/4 exercises T = floor(X/3)."""
    rng = np.random.default_rng(5)
    z = staircase_array(rng, eps, stair, centre, (100_000,))
    support = np.arange(-25, 26)
    weight = np.exp(-float(eps) * np.floor((np.abs(support) + stair - centre) / stair))
    b = math.exp(-float(eps))
    total = 2 * centre - 1 + 2 * stair * b / (1 - b)  # 2g - 1 points at level 0, 2K at every level t >= 1
    p = np.append(weight / total, 1 - weight.sum() / total)
    counts = np.append([np.count_nonzero(z == v) for v in support], np.count_nonzero(np.abs(z) > 25))
    assert stats.chisquare(counts, p * z.size).pvalue > 1e-3


def test_small_eps_is_sampled_quickly_and_centred() -> None:
    """eps = 2^-20 (stairs ~ 2^20 wide, T ~ 10^6): 2000 draws, mean within 4 standard errors of 0 (the
    sampler's work does not grow with 1/eps)."""
    rng = np.random.default_rng(8)
    z = staircase_array(rng, Fraction(1, 2**20), 7, 3, (2000,)).astype(np.float64)
    assert abs(z.mean()) < 4 * z.std() / math.sqrt(z.size)
    assert np.median(np.abs(z)) > 7 * 2**18  # about ln 2 / eps stairs of 7 points


def test_privacy_loss_is_bounded_by_eps_and_attains_it() -> None:
    """Means of 10 values in [0, 1] differing by one record at the extremes: over a window of lattice
    outputs the loss lies in [-eps_r, eps_r] and reaches both ends."""
    m = Staircase(Mean(Domain(0.0, 1.0, 10, clip=True)), 1.0)
    x, y = np.zeros(10), np.append(np.zeros(9), 1.0)
    e = m.lattice_exponent
    window = np.ldexp(np.arange(-4 * m.stair, 5 * m.stair, 97, dtype=np.float64), e)
    loss = m.privacy_loss(window, x, y)
    assert float(m.eps_exact) <= 1.0 and m.guarantee() == PureDP(float(m.eps_exact))
    assert np.max(np.abs(loss)) <= float(m.eps_exact) + 1e-12
    assert np.max(loss) == pytest.approx(float(m.eps_exact))
    assert np.min(loss) == pytest.approx(-float(m.eps_exact))


def test_audit_of_the_sampler() -> None:
    """verify.audit on the extreme pair: no violation of the declared PureDP(1); a claim of PureDP(0.4)
    is refuted (the audit has power at these draws)."""
    m = Staircase(Mean(Domain(0.0, 1.0, 10, clip=True)), 1.0)
    x, y = np.zeros(10), np.append(np.zeros(9), 1.0)
    assert not verify.audit(m, [(x, y)], PureDP(1.0), samples=20_000, seed=0).violation
    assert verify.audit(m, [(x, y)], PureDP(0.4), samples=20_000, seed=0).violation


def test_variance_matches_the_rate() -> None:
    """Released means of a fixed dataset (n = 100, [-10, 10], eps = 1): 40000 draws' variance within
    4 standard errors of staircase_variance_ratio(1) * 2 (Delta/eps)^2 (lattice rounding aside), so
    below the Laplace mechanism's 2 (Delta/eps)^2 by about 4%."""
    rng = np.random.default_rng(3)
    x = rng.uniform(-10, 10, size=100)
    m = Staircase(Mean(Domain(-10.0, 10.0, 100, clip=True)), 1.0)
    out = m.sample(x, rng, size=40_000) - x.mean()
    laplace = 2 * (20 / 100) ** 2
    expected = staircase_variance_ratio(1.0) * laplace
    v = float(np.mean(out**2))
    se = float(np.std(out**2, ddof=1)) / math.sqrt(out.size)
    assert abs(v - expected) < 4 * se
    assert expected < 0.96 * laplace


@pytest.mark.parametrize("eps", [0.0, -1.0, math.nan, math.inf, 1e3])
def test_bad_eps(eps: float) -> None:
    with pytest.raises(ValueError, match="eps"):
        Staircase(Mean(Domain(0.0, 1.0, 10)), eps)


def test_bad_query_and_sampler_arguments() -> None:
    with pytest.raises(TypeError, match="query"):
        Staircase("mean", 1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="1-d"):
        Staircase(Mean(Domain([0.0, 0.0], [1.0, 1.0], 10)), 1.0)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="centre"):
        staircase_array(rng, Fraction(1), 3, 4, (2,))
    with pytest.raises(ValueError, match="eps"):
        staircase_array(rng, 1.0, 3, 2, (2,))  # type: ignore[arg-type]
