"""Bun & Steinke's smooth-sensitivity noise: the closed forms against mpmath and against numerically
integrated Renyi divergences, the lattice Laplace-log-normal release's certified epsilon against the
paper's closed form, the trimmed mean's local sensitivity against brute force, audits (with broken
variants refuted), accuracy against the 1/n rate, and the PTR median with a private proposal."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special

import verify
from accountant import ZCDP, ApproxDP
from mechanisms import BOTTOM
from mechanisms.estimators import (
    AdaptivePTRMedian,
    ArsinhNormal,
    ExponentialQuantile,
    LaplaceLogNormal,
    LatticeLLN,
    PTRMedian,
    SmoothLLNQuantile,
    SmoothLLNTrimmedMean,
    UniformLogNormal,
    cdp_epsilon_for,
)
from tests.support.estimators import encoded

# ------------------------------------------------------------------------------ the closed forms


def test_closed_forms_against_mpmath() -> None:
    """Each law's epsilon is the paper's formula (computed here at 30 digits), rounded up by at most
    a few ulps; the variances likewise."""
    mpmath.mp.dps = 30
    for sg, s, t in [(0.45, 0.1, 0.05), (1.0, 0.3, 0.2), (2.0, 0.01, 0.4)]:
        S, T, G = mpmath.mpf(s), mpmath.mpf(t), mpmath.mpf(sg)
        lln = T / G + mpmath.exp(1.5 * G * G) * S
        asn = mpmath.sqrt(T * (T / G**2 + 1 / G + 2)) + S * (4 + 3 * G**2) / (6 * G)
        for got, want in [(LaplaceLogNormal(sg).epsilon(s, t), lln), (ArsinhNormal(sg).epsilon(s, t), asn),
                          (LaplaceLogNormal(sg).variance, 2 * mpmath.exp(2 * G * G))]:
            assert want <= got <= want * (1 + 1e-15)
        asn_var = mpmath.expm1(2 * G * G) / (2 * G * G)
        assert asn_var <= ArsinhNormal(sg).variance <= asn_var * (1 + 1e-15)
        if sg >= math.sqrt(2):
            uln = T / G + mpmath.exp(1.5 * G * G) * mpmath.sqrt(2 / mpmath.pi) * S / G
            assert uln <= UniformLogNormal(sg).epsilon(s, t) <= uln * (1 + 1e-15)
            uln_var = mpmath.exp(2 * G * G) / 3
            assert uln_var <= UniformLogNormal(sg).variance <= uln_var * (1 + 1e-15)
    with pytest.raises(ValueError, match="sigma"):
        UniformLogNormal(1.0)


def test_lln_optimal_sigma_minimises_the_variance() -> None:
    """The root of 5 (eps/t) sigma^3 - 5 sigma^2 - 1 minimises e^(5 sigma^2)/(eps - t/sigma)^2 over a
    fine grid of sigma (within the grid step)."""
    for eps, t in [(0.3, 0.05), (1.0, 0.2), (2.0, 0.01)]:
        best = LaplaceLogNormal.optimal_sigma(eps, t)
        assert abs(5 * eps / t * best**3 - 5 * best**2 - 1) < 1e-9
        grid = np.linspace(t / eps * 1.001, 3.0, 200_000)
        obj = 5 * grid**2 - 2 * np.log(eps - t / grid)
        assert abs(grid[np.argmin(obj)] - best) < 2e-4


def _renyi_on_grid(p: np.ndarray, q: np.ndarray, dz: float, alpha: float) -> float:
    return math.log(float(np.sum(p**alpha * q ** (1 - alpha))) * dz) / (alpha - 1)


Density = Callable[[np.ndarray], np.ndarray]


def _densities() -> dict[str, tuple[Callable[[float], Density], Any]]:
    """Closed-form densities: ULN p(z) = e^(sigma^2/2)/2 * Phi_bar(ln|z|/sigma + sigma); arsinh-normal
    phi(arsinh(sigma z)/sigma)/sqrt(1 + sigma^2 z^2); LLN by 32-point Gauss-Hermite in Y."""
    yh, wh = np.polynomial.hermite_e.hermegauss(32)
    wh = wh / wh.sum()

    def lln(sg: float) -> Density:
        def p(v: np.ndarray) -> np.ndarray:
            sc = np.exp(sg * yh)[None, :]
            return np.asarray((wh[None, :] * np.exp(-np.abs(v)[:, None] / sc) / (2 * sc)).sum(axis=1))
        return p

    def uln(sg: float) -> Density:
        def p(v: np.ndarray) -> np.ndarray:
            with np.errstate(divide="ignore"):
                return np.asarray(0.5 * math.exp(sg**2 / 2) * 0.5 * special.erfc(
                    (np.log(np.abs(v)) / sg + sg) / math.sqrt(2)))
        return p

    def asn(sg: float) -> Density:
        def p(v: np.ndarray) -> np.ndarray:
            return np.asarray(np.exp(-np.arcsinh(sg * v) ** 2 / (2 * sg**2)) / math.sqrt(2 * math.pi)
                              / np.sqrt(1 + sg**2 * v**2))
        return p

    return {"lln": (lln, LaplaceLogNormal), "uln": (uln, UniformLogNormal), "asinh": (asn, ArsinhNormal)}


@pytest.mark.parametrize("law, sigma, half", [("lln", 0.45, 100.0), ("uln", math.sqrt(2), 400.0),
                                              ("asinh", 2 / math.sqrt(3), 400.0)])
def test_closed_forms_bound_the_renyi_divergence(law: str, sigma: float, half: float) -> None:
    """D_alpha(Z || a + e^b Z) integrated on a grid (step 2.5e-3 on [-half, half]; the grid error is
    far below the margins seen, the largest ratio to the bound being ~0.55) stays below
    alpha eps(s, t)^2 / 2 at |a| = s, |b| = t, alpha in {2, 5}."""
    dz = 2.5e-3
    z = np.arange(-half, half, dz) + dz / 2
    make, cls = _densities()[law]
    p = make(sigma)
    pz = p(z)
    for s, t in [(0.2, 0.0), (0.05, 0.1), (0.3, 0.3)]:
        eps = cls(sigma).epsilon(s, t)
        for a, b in itertools.product((s, -s), (t, -t)):
            qz = p((z - a) * math.exp(-b)) * math.exp(-b)
            for alpha in (2.0, 5.0):
                assert _renyi_on_grid(pz, qz, dz, alpha) <= alpha * eps**2 / 2


# ------------------------------------------------------------------------- the lattice release


@pytest.mark.parametrize("eps", [0.1, 0.2207, 0.5, 1.0])
def test_lattice_lln_epsilon_is_the_closed_form_rounded_up(eps: float) -> None:
    """The certified epsilon is at least Bun & Steinke's t/sigma + e^(3 sigma^2/2) s at the grid's
    t = k ln2/m and sigma = ln2/m sqrt(v) (recomputed here in mpmath) and exceeds it by < 1e-6
    relative; the calibration meets its target."""
    rel = LatticeLLN.for_epsilon(eps)
    mpmath.mp.dps = 30
    h = mpmath.log(2) / rel.log_grid
    sg = h * mpmath.sqrt(rel.v)
    paper = rel.k * h / sg + mpmath.exp(1.5 * sg**2) * mpmath.mpf(rel.s)
    assert paper <= rel.epsilon <= paper * (1 + 1e-6)
    assert rel.epsilon <= eps and rel.epsilon > eps * (1 - 1e-5)
    assert rel.guarantee() == ZCDP(rel.guarantee().rho) and rel.guarantee().rho >= rel.epsilon**2 / 2


def test_scale_index_is_the_exact_ceiling() -> None:
    """2^((Q-1)/m) < (g + tau)/gamma <= 2^(Q/m), checked in rationals."""
    rel = LatticeLLN.for_epsilon(0.3)
    for g in (Fraction(2**12), Fraction(2**12) + Fraction(1, 3), Fraction(5**20, 3**11), Fraction(2**40)):
        q = rel.scale_index(g, 0)
        assert g**rel.log_grid <= Fraction(2) ** q < g**rel.log_grid * 2
    with pytest.raises(ValueError, match="2\\^12"):
        rel.scale_index(Fraction(100), 0)


def test_lattice_lln_noise_law() -> None:
    """E|N| = 2^(Q/m) E|X| E[e^(sigma Y)] / s = 2^(Q/m) e^(sigma^2/2)/s: 2000 draws within 10% (the
    mean's relative sd is ~2.7%); the discrete Gaussian moment bound used in the proof,
    E[2^(-2K/m)] <= e^(2 h^2 v), holds for the exact pmf."""
    rel = LatticeLLN.for_epsilon(0.3)
    rng = np.random.default_rng(3)
    q = rel.scale_index(Fraction(2**20), 0)
    n = rel.noise(rng, q, 2000)
    want = 2 ** (q / rel.log_grid) * math.exp(rel.sigma_grid**2 / 2) / rel.s
    assert abs(np.abs(n).mean() / want - 1) < 0.1
    mpmath.mp.dps = 30
    ks = range(-40 * int(math.sqrt(rel.v)), 40 * int(math.sqrt(rel.v)))
    w = [mpmath.exp(-mpmath.mpf(k) ** 2 / (2 * rel.v)) for k in ks]
    mgf = mpmath.fsum(wi * mpmath.mpf(2) ** (-2 * mpmath.mpf(k) / rel.log_grid)
                      for wi, k in zip(w, ks, strict=True))
    h = mpmath.log(2) / rel.log_grid
    assert mgf / mpmath.fsum(w) <= mpmath.exp(2 * h * h * rel.v)


# ------------------------------------------------------------------------------ the estimators


def _brute_trimmed_ls(y: tuple[float, ...], m: int, grid: list[float]) -> float:
    def tm(v: tuple[float, ...]) -> float:
        s = sorted(v)
        return sum(s[m:len(s) - m]) / (len(s) - 2 * m)
    base = tm(y)
    return max(abs(tm((*y[:i], g, *y[i + 1:])) - base) for i in range(len(y)) for g in grid)


@given(st.lists(st.integers(0, 4), min_size=5, max_size=5), st.integers(0, 2))
@settings(max_examples=25, deadline=None)
def test_trimmed_mean_local_sensitivity_at_distance_is_brute_force(xs: list[int], k: int) -> None:
    """A^(k)(x) = max over datasets at distance <= k of their local sensitivity, enumerated on the
    grid {0, 1/4, ..., 1} (which holds both ends of the domain, the extreme replacements)."""
    grid = [i / 4 for i in range(5)]
    x = tuple(v / 4 for v in xs)
    mech = SmoothLLNTrimmedMean(0.0, 1.0, 5, 0.5, trim=1)
    frontier = {x}
    seen = {x}
    for _ in range(k):
        frontier = {(*y[:i], g, *y[i + 1:]) for y in frontier for i in range(5) for g in grid} - seen
        seen |= frontier
    brute = max(_brute_trimmed_ls(y, 1, grid) for y in seen)
    assert mech.local_sensitivity_at_distance(np.array(x), [k])[0] == pytest.approx(brute, abs=1e-12)


def test_smooth_lln_rates_in_n() -> None:
    """The smooth sensitivity of the median and of the 10%-trimmed mean of N(0, 1) samples falls like
    1/n: from n = 1000 to 8000 by a factor > 5 (8 for exact 1/n)."""
    rng = np.random.default_rng(4)
    for cls in (SmoothLLNQuantile, SmoothLLNTrimmedMean):
        s = [cls(-10.0, 10.0, n, 0.3).smooth_sensitivity(rng.normal(size=n)) for n in (1000, 8000)]
        assert s[0] / s[1] > 5


def test_smooth_lln_median_accuracy() -> None:
    """At n = 20000, eps = 0.3: 40 releases have RMSE below 3x the non-private median's sd
    1/(2 f(0) sqrt n) = 0.0089 (measured ~1.5x; the 40-draw RMSE rarely exceeds its mean by 2x)."""
    rng = np.random.default_rng(5)
    mech = SmoothLLNQuantile(-10.0, 10.0, 20_000, 0.3)
    err = [mech.sample(rng.normal(size=20_000), rng) for _ in range(40)]
    assert math.sqrt(np.mean(np.square(err))) < 3 * 0.5 * math.sqrt(2 * math.pi) / math.sqrt(20_000)


def test_outputs_on_the_lattice_and_bad_input() -> None:
    rng = np.random.default_rng(6)
    mech = SmoothLLNTrimmedMean(-1.0, 1.0, 50, 0.5)
    out = mech.sample(rng.uniform(-1, 1, 50), rng, size=20)
    k = np.ldexp(out, -mech.exponent)
    assert np.array_equal(k, np.round(k)) and mech.trim == 5
    bads: list[dict[str, Any]] = [{"eps": float("nan")}, {"eps": -1.0}, {"n": 0}, {"lower": 2.0},
                                  {"sigma": 5.0}]
    for bad in bads:
        kw: dict[str, Any] = {"lower": -1.0, "upper": 1.0, "n": 50, "eps": 0.5, **bad}
        with pytest.raises((ValueError, TypeError)):
            SmoothLLNQuantile(**kw)
    with pytest.raises(ValueError, match="trim"):
        SmoothLLNTrimmedMean(-1.0, 1.0, 50, 0.5, trim=25)
    with pytest.raises(ValueError, match="n"):
        mech.sample(np.zeros(49), rng)


def test_cdp_epsilon_for_converts_back() -> None:
    e = cdp_epsilon_for(1.0, 1e-6)
    assert ZCDP(e * e / 2).epsilon(1e-6) <= 1.0 < ZCDP((e * 1.001) ** 2 / 2).epsilon(1e-6)
    m = SmoothLLNQuantile.for_approx_dp(-10.0, 10.0, 100, 1.0, 1e-6)
    assert m.guarantee().epsilon(1e-6) <= 1.0 and m.claimed().rho <= m.guarantee().rho


def _two_clusters() -> tuple[np.ndarray, np.ndarray]:
    """x: three halves at the median (LS 0); y: one moved to 0 (LS 1/2)."""
    return (np.array([0.0] * 9 + [0.5] * 3 + [1.0] * 9), np.array([0.0] * 10 + [0.5] * 2 + [1.0] * 9))


@dataclass(frozen=True)
class _LocalMedian(SmoothLLNQuantile):
    """Broken: t = 50 makes the smooth sensitivity the local one."""

    @property
    def smoothing(self) -> float:
        return 50.0


def _implied(g: ZCDP, delta: float = 1e-3) -> ApproxDP:
    """The (eps, delta) the declared zCDP implies: refuting it refutes the declaration (and the
    audit skips the slower Renyi tests)."""
    return ApproxDP(g.epsilon(delta), delta)


def test_lln_median_audit_and_the_local_sensitivity_refuted() -> None:
    """No violation of the (eps, 1e-3) implied by the declared (1/2 eps^2)-CDP (eps = 0.5) on the
    two-cluster witness; the variant scaled to the local sensitivity (0 on x: only tau's noise) is
    refuted on it."""
    x, y = _two_clusters()
    good = SmoothLLNQuantile(0.0, 1.0, 21, 0.5, resolution=2.0**-8)
    r = verify.audit(good, [(x, y)], _implied(good.guarantee()), samples=500, seed=0)
    assert not r.violation
    broken = _LocalMedian(0.0, 1.0, 21, 0.5, resolution=2.0**-8)
    assert broken.smooth_sensitivity(x) < 1e-20 < good.smooth_sensitivity(x)
    r = verify.audit(broken, [(x, y)], _implied(good.guarantee()), samples=400, seed=0)
    assert r.violation


def test_lln_trimmed_mean_audit() -> None:
    """Witness: one record moved from the trimmed tail to the far end (the mean moves by 1/(n - 2m))."""
    x = np.array([0.0] * 10 + [1.0] * 10)
    y = x.copy()
    y[0] = 1.0
    mech = SmoothLLNTrimmedMean(0.0, 1.0, 20, 1.0, trim=2, resolution=2.0**-8)
    r = verify.audit(mech, [(x, y)], _implied(mech.guarantee()), samples=500, seed=0)
    assert not r.violation


# ------------------------------------------------------------------------- PTR with a proposal


def test_ptr_guarantee_depends_on_eta_only_through_its_mantissa() -> None:
    """The fact the adaptive composition uses: PTRMedian's guarantee at eta and at eta 2^j agree."""
    for mant in (1.0, 2.0**0.25, 2.0**0.5, 2.0**0.75):
        gs = {PTRMedian(-10.0, 10.0, 1000, 0.45, 1e-6, eta=math.ldexp(mant, j)).guarantee()
              for j in (-20, -9, -2, 0, 3)}
        assert len(gs) == 1


def test_adaptive_ptr_guarantee_and_proposal() -> None:
    mech = AdaptivePTRMedian(-10.0, 10.0, 1000, 1.0, 1e-6)
    g = mech.guarantee()
    assert g.eps <= 1.0 and g.delta_ <= 1e-6  # type: ignore[attr-defined]
    assert mech.factor is not None
    for iqr in (1e-9, 0.37, 1.35, 7.0, 100.0):
        eta = mech.proposal(iqr)
        raw = mech.factor * max(iqr, 20.0 / mech.bins) / mech.n
        assert eta <= 20.0 and (eta >= raw or eta > 20.0 / 2**0.25)
        assert any(math.frexp(eta)[0] == math.frexp(m)[0] for m in (1.0, 2.0**0.25, 2.0**0.5, 2.0**0.75))
    assert isinstance(mech.quartile(0.25), ExponentialQuantile)


def test_adaptive_ptr_audit_and_accuracy() -> None:
    """Audit on the block witness (no violation of the declared (eps, delta)); at n = 10000 the
    released medians of N(0, 1) data are within 0.15 of the truth (noise sd ~0.03) and refused at
    most 6 times in 12 (measured: about 1 in 10)."""
    x = np.array([0.0] * 18 + [0.5] * 5 + [1.0] * 18)
    y = x.copy()
    y[18] = 0.0
    mech = AdaptivePTRMedian(0.0, 1.0, 41, 1.0, 1e-3, factor=2000.0)
    r = verify.audit(encoded(mech), [(x, y)], mech.guarantee(), samples=300, seed=0, vectorised=True)
    assert not r.violation
    rng = np.random.default_rng(8)
    big = AdaptivePTRMedian(-10.0, 10.0, 10_000, 1.0, 1e-6)
    out = [big.sample(rng.normal(size=10_000), rng) for _ in range(12)]
    vals = [o for o in out if o is not BOTTOM]
    assert len(vals) >= 6 and max(abs(v) for v in vals) < 0.15
