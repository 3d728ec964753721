"""The audit's lower bound on rho (zCDP): from a box by hand against mpmath, never above the truth over
seeds, and close to it at a million draws."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sst

import verify
from accountant import ZCDP, PureDP
from verify.audit import reports
from verify.audit import stats as audit_stats
from verify.audit.regions import bin_counts, log_ratio_weights
from verify.audit.renyi import ZCDP_ORDERS, gdp_mu_lower, rho_lower_bound, variational_renyi_lower
from verify.examples import GaussianMechanism


def point(alpha: tuple[float, float], beta: tuple[float, float], **renyi: float) -> reports.TestPoint:
    return reports.TestPoint(pair=0, direction=0, region="r", objective="eps", family="distributional", n=100,
                     rejections_null=0, rejections_alt=0, alpha=sum(alpha) / 2, beta=sum(beta) / 2,
                     alpha_lower=alpha[0], alpha_upper=alpha[1], beta_lower=beta[0], beta_upper=beta[1],
                     epsilon_lower=0.0, mu_lower=0.0, claim_margin=0.0, p_value=1.0,
                     renyi_order=renyi.get("order"), renyi_lower=renyi.get("lower"))


def mp_binary(p: float, q: float, a: float) -> float:
    p_, q_, a_ = mpmath.mpf(p), mpmath.mpf(q), mpmath.mpf(a)
    return float(mpmath.log(p_**a_ * q_**(1 - a_) + (1 - p_)**a_ * (1 - q_)**(1 - a_)) / (a_ - 1))


def test_a_box_by_hand() -> None:
    """P(A) in [0.02, 0.05], Q(A) = 1 - beta in [0.30, 0.40]: the separating corner is (0.05, 0.30),
    and rho >= max_a max(d_a(0.05, 0.3), d_a(0.3, 0.05)) / a, both directions, in mpmath."""
    want = max(max(mp_binary(0.05, 0.3, a), mp_binary(0.3, 0.05, a)) / a for a in ZCDP_ORDERS)
    got = rho_lower_bound([point((0.02, 0.05), (0.6, 0.7))])
    assert got == pytest.approx(want, rel=1e-11) and got <= want


def test_an_unseparated_box_and_a_renyi_point() -> None:
    assert rho_lower_bound([point((0.2, 0.5), (0.4, 0.7))]) == 0.0  # Q(A) in [0.3, 0.6] meets P(A)
    assert rho_lower_bound([point((0.2, 0.5), (0.4, 0.7), order=4.0, lower=1.0)]) == pytest.approx(0.25)
    assert rho_lower_bound([]) == 0.0


def test_never_above_the_truth_over_seeds() -> None:
    """GaussianMechanism(mu) is (mu^2/2)-zCDP (a lattice Gaussian calibrated to mu-GDP, whose zCDP level
    K^2/(2 s2) is at most mu^2/2). Over 12 seeded audits at confidence 0.95 the bound exceeds the truth
    in at most 2 (a binomial(12, 0.05) count reaches 3 with probability 0.02); with all boxes
    simultaneous, none is expected."""
    g, rho = GaussianMechanism(1.0), 0.5
    bounds = [verify.audit(g, [(0.0, 1.0)], ZCDP(rho), samples=5_000, seed=s, vectorised=True).rho_lower
              for s in range(12)]
    over = sum(b > rho for b in bounds)
    assert over <= 2


def test_a_clear_violation_gives_a_high_rho_and_a_pure_claim_reports_it_too() -> None:
    """A Gaussian of mu = 2 (rho = 2) claimed 0.1-zCDP: the bound is ten times the claim (1.15 at
    50,000 draws in one run); the bound is reported whatever the claim's notion."""
    g = GaussianMechanism(2.0)
    r = verify.audit(g, [(0.0, 1.0)], ZCDP(0.1), samples=20_000, seed=1, vectorised=True)
    assert r.violation and 1.0 < r.rho_lower <= 2.0
    assert "rho lower bound (zCDP)" in str(r) and r.to_dict()["rho_lower"] == r.rho_lower
    pure = verify.audit(g, [(0.0, 1.0)], PureDP(10.0), samples=20_000, seed=1, vectorised=True)
    assert 1.0 < pure.rho_lower <= 2.0 and np.isfinite(pure.rho_lower)


def mp_renyi(p: np.ndarray, q: np.ndarray, a: float) -> float:
    a_ = mpmath.mpf(a)
    f = mpmath.fsum(mpmath.mpf(float(x)) ** a_ * mpmath.mpf(float(y)) ** (1 - a_)
                    for x, y in zip(p, q, strict=True))
    return float(mpmath.log(f) / (a_ - 1))


def test_bernstein_bounds_coverage() -> None:
    """A skewed 5-valued variable, n = 60: over 4000 seeded samples each one-sided bound misses the mean
    at most at its level 0.1 (Maurer-Pontil is conservative: the test fails only if a binomial(4000, 0.1)
    count reaches the observed one with probability < 1e-3)."""
    w, p, n, gamma = np.array([0.0, 0.1, 0.2, 1.0, 5.0]), np.array([0.5, 0.2, 0.2, 0.09, 0.01]), 60, 0.1
    mean = float(w @ p)
    counts = np.random.default_rng(7).multinomial(n, p, size=4000)
    lo, hi = audit_stats.bernstein_bounds(np.broadcast_to(w, counts.shape), counts, n, gamma)
    for miss in (int(np.sum(lo > mean)), int(np.sum(hi < mean))):
        assert sst.binom.sf(miss - 1, 4000, gamma) >= 1e-3
    assert np.all(lo <= hi) and np.all(lo >= 0.0) and np.all(hi <= 5.0)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 12), st.floats(1.05, 16.0), st.integers(0, 10**6))
def test_variational_bound_at_the_true_masses_is_below_the_divergence(m: int, a: float, seed: int) -> None:
    """With the masses known (counts = n x masses, n huge) any weights g give at most D_a (Hoelder),
    whatever g is; at g = log(p/q) the bound is D_a up to the confidence width."""
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(m)), rng.dirichlet(np.ones(m))
    truth = mp_renyi(p, q, a)
    n = 10**15
    g = rng.normal(0.0, 2.0, m)
    assert variational_renyi_lower(p * n, n, q * n, n, g, [a], 0.05)[0] <= truth + 1e-9 * max(truth, 1.0)
    best = variational_renyi_lower(p * n, n, q * n, n, np.log(p / q), [a], 0.05)[0]
    assert best <= truth + 1e-9 * max(truth, 1.0)
    assert best >= truth - 1e-3 * max(truth, 1.0)


def test_variational_bound_coverage() -> None:
    """Weights fixed beforehand (the true log ratio, where the bound is tightest), 2000 seeded pairs of
    multinomial samples of n = 2000: the bound at level gamma = 0.05 per mean exceeds the true D_a in at
    most a 2 gamma share (binomial test at 1e-3), at every order tried."""
    p, q = np.array([0.4, 0.3, 0.2, 0.1]), np.array([0.1, 0.2, 0.3, 0.4])
    orders, n, gamma, reps = [1.05, 2.0, 8.0], 2000, 0.05, 2000
    rng = np.random.default_rng(11)
    g = np.log(p / q)
    truth = np.array([mp_renyi(p, q, a) for a in orders])
    over = np.zeros(len(orders), dtype=int)
    for _ in range(reps):
        low = variational_renyi_lower(rng.multinomial(n, p), n, rng.multinomial(n, q), n, g, orders, gamma)
        over += low > truth
    for o in over:
        assert sst.binom.sf(o - 1, reps, 2 * gamma) >= 1e-3, f"{over} of {reps} above the truth"


def test_variational_bound_tight_on_a_gaussian() -> None:
    """N(0, 1) against N(1, 1) (D_a = a / 2), 7e5 draws each, 64 equal-mass bins with weights from
    3e5 other draws: at order 1.05 the bound is within 6% of the truth and below it."""
    rng = np.random.default_rng(3)
    sel_p, sel_q = np.sort(rng.standard_normal(300_000)), np.sort(rng.standard_normal(300_000) + 1.0)
    edges = np.quantile(np.concatenate([sel_p, sel_q]), np.linspace(0, 1, 65)[1:-1])
    g = log_ratio_weights(bin_counts(edges, sel_p), sel_p.size, bin_counts(edges, sel_q), sel_q.size)
    kp = bin_counts(edges, np.sort(rng.standard_normal(700_000)))
    kq = bin_counts(edges, np.sort(rng.standard_normal(700_000) + 1.0))
    low = variational_renyi_lower(kp, 700_000, kq, 700_000, g, [1.05], 0.0025)[0]
    assert 0.94 * 1.05 / 2 < low < 1.05 / 2


def test_gdp_mu_from_rho() -> None:
    assert gdp_mu_lower(0.0) == 0.0
    assert gdp_mu_lower(0.5) < 1.0 and gdp_mu_lower(0.5) == pytest.approx(1.0, rel=1e-15)


def test_rho_bound_of_a_histogram_never_above_the_truth_over_seeds() -> None:
    """A 3-bin histogram with N(0, 4) noise per count (a record moved between two bins: Delta =
    (-1, 1, 0), rho = 2 / (2 * 4) = 0.25 for the pair) audited black-box at its true zCDP level,
    confidence 0.8, 12 seeds of 20,000 draws: the rho bound exceeds the truth in at most 7 (a
    binomial(12, 0.2) count reaches 8 with probability 6e-4; with all bounds simultaneous, none is
    expected); mu_lower (at least sqrt(2 rho_lower)) likewise stays at most the pair's mu, sqrt(2 rho),
    and the rho bound is informative (above a quarter of the truth)."""
    rho = 0.25

    def hist(x: list[float], rng: np.random.Generator, n: int) -> np.ndarray:
        return np.bincount(np.asarray(x, dtype=np.int64), minlength=3)[:3] + 2.0 * rng.standard_normal((n, 3))

    over = over_mu = 0
    for s in range(12):
        r = verify.audit(hist, [([0, 1, 2], [1, 1, 2])], ZCDP(rho), samples=20_000, seed=100 + s,
                         confidence=0.8, vectorised=True, floating_point=False)
        over += r.rho_lower > rho
        over_mu += r.mu_lower > math.sqrt(2 * rho)
        assert r.mu_lower >= gdp_mu_lower(r.rho_lower) > 0.5 * math.sqrt(2 * rho)
    assert over <= 7 and over_mu <= 7
