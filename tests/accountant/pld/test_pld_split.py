"""The pessimistic split of a continuous source's cells (issue 14, ``accountant/_plderror.py``):
connect-the-dots sends b = (q - e^g p) / (1 - e^{-h}) of each cell up; the source sends an upper
bound of it, computed without the cancellation of that difference, and its error charges (the
tail-relative one and the absolute fallback) must cover the held law's error against the exact
connect-the-dots law. Goldens are mpmath computations from each model's definition."""

from __future__ import annotations

import math

import mpmath
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant.pld.laws.errors import cell_errors, product_error, up_share
from accountant.pld.laws.subsampled import SubsampledTailDirection
from accountant.pld.laws.symmetric import SymmetricTailDirection
from accountant.pld.laws.tail import TailDirection
from accountant.pld.models.gaussian import GaussianDirection
from accountant.pld.models.laplace import LaplaceDirection
from accountant.pld.models.mixture import MixtureDirection
from tests.support.tails import model_tails

mpf = mpmath.mpf



# ============================ mpmath references ==================================================


def tilted_share(a: float, h: float) -> mpmath.mpf:
    """E[1 - e^{-t}] / (1 - e^{-h}) for t of density proportional to e^{a t} on (0, h)."""
    with mpmath.workdps(60):
        a_, h_ = mpf(a), mpf(h)

        def m(c: mpmath.mpf) -> mpmath.mpf:
            return h_ if c == 0 else mpmath.expm1(c * h_) / c

        return (1 - m(a_ - 1) / m(a_)) / -mpmath.expm1(-h_)








def log_density_slope(d: TailDirection, l_: float) -> mpmath.mpf:
    """(log f)'(l) = sq''(l) / sq'(l), f = -sq' the density of L under Q."""
    sq = model_tails(d)[0]
    with mpmath.workdps(50):
        d1 = mpmath.diff(sq, mpf(l_), 1)
        return mpmath.diff(sq, mpf(l_), 2) / d1 if d1 != 0 else mpmath.nan  # f = 0: no slope


def ctd_tail_sums(d: TailDirection, h: float, j0: int,
                  nodes: list[int]) -> dict[int, tuple[mpmath.mpf, mpmath.mpf, mpmath.mpf]]:
    """At node j (index from j0): the exact connect-the-dots law's tail sum M_j = Q(L > g_j) +
    b_{j-1}, the cell's q_{j-1} and its x_{j-1} = q - e^g p (no atoms)."""
    sq, sp, fq, fp = model_tails(d)
    out = {}
    with mpmath.workdps(60):  # differences of the smaller tails: 60 digits are ample
        for j in nodes:
            g0, g1 = mpf(j0 + j - 1) * mpf(h), mpf(j0 + j) * mpf(h)
            q = sq(g0) - sq(g1) if sq(g0) < 0.5 else fq(g1) - fq(g0)
            p = sp(g0) - sp(g1) if sp(g0) < 0.5 else fp(g1) - fp(g0)
            x = q - mpmath.exp(g0) * p
            out[j] = (sq(g1) + x / -mpmath.expm1(-mpf(h)), q, x)
    return out


# ============================ the share of the tilted law ========================================


@settings(max_examples=200, deadline=None)
@given(a=st.one_of(st.floats(-1e7, 1e7), st.floats(-30.0, 30.0)), log_h=st.floats(-7.0, 0.0))
def test_up_share_bounds_the_tilted_law(a: float, log_h: float) -> None:
    """``up_share`` is at least the exact share of the tilted law and within h^2 / 500 + 1e-13
    of it (the midpoint rule and the rounding pads)."""
    h = 10.0 ** log_h
    got = float(up_share(np.array([a]), h)[0])
    exact = tilted_share(a, h)
    assert got >= exact, (a, h, got, exact)
    assert got <= exact + h * h / 500 + 1e-13, (a, h, got, exact)


# ============================ slope bounds against the models' densities =========================


def directions() -> st.SearchStrategy[TailDirection]:
    mu = st.floats(0.3, 3.0)
    rate = st.floats(0.001, 0.5)
    eps = st.floats(0.2, 3.0)
    gauss = st.builds(GaussianDirection, mu)
    lap = st.builds(LaplaceDirection, eps)
    base = st.one_of(gauss, lap)
    sub = st.builds(SubsampledTailDirection, base, rate, st.sampled_from(["remove", "add"]))
    sym = st.builds(lambda b, r: SymmetricTailDirection(SubsampledTailDirection(b, r, "remove")),
                    base, rate)
    mix = st.builds(lambda m, r, rev: (lambda d: d.reverse() if rev else d)(
        MixtureDirection((0.0,), (1.0,), (0.0, m), (1.0 - r, r))), mu, rate, st.booleans())
    return st.one_of(gauss, lap, sub, sym, mix)


@settings(max_examples=60, deadline=None)
@given(d=directions(), where=st.floats(0.02, 0.98), log_h=st.floats(-5.0, -1.0),
       inside=st.floats(0.0, 1.0))
def test_slope_bounds_contain_the_density_slope(d: TailDirection, where: float, log_h: float,
                                                inside: float) -> None:
    """The declared bounds of (log f)' on a cell contain the slope of the model's density (mpmath,
    differentiated from the tails) at a point of the cell where the density is positive."""
    lo_s, hi_s = d.support(1e-12)
    h = 10.0 ** log_h
    lo = lo_s + where * (hi_s - lo_s)
    l_ = lo + inside * h
    if isinstance(d, LaplaceDirection) and not -d.eps < l_ < d.eps:
        return
    if isinstance(d, SymmetricTailDirection) and abs(l_) < 1e-10:
        return  # the density's kink at 0 (mpmath's difference stencil would straddle it)
    bounds = d.slope_bounds(np.array([lo, lo + h]), np.zeros(2))
    assert bounds is not None
    a, b = float(bounds[0][0]), float(bounds[1][0])
    slope = log_density_slope(d, l_)
    if not mpmath.isfinite(slope):
        return
    tol = 1e-20 * (1 + abs(slope))  # mpmath's differentiation at 50 digits
    assert a - tol <= slope <= b + tol, (d, lo, h, l_, a, float(slope), b)


# ============================ the split and the charges against connect-the-dots ================


def check_source(d: TailDirection, h: float, n_sample: int, seed: int) -> None:
    """The pessimistic law of ``d`` on width h against the exact connect-the-dots law at sampled
    nodes: its tail sums are at least M_j (1 - tail) - slack and at least M_j - fallback (the
    charges hold), and at most M_j (1 + tail) + slack + the split's overshoot q (b - a) h (1 + h)
    / 12 + q h^2 / 400 (b - a the slope bounds' spread; d share / d slope <= Var(t) / (1 - e^{-h})
    <= h (1 + h) / 12), the split being an upper bound of b within that."""
    law = d.discretize(h, True, 1e-24)
    n = law.masses.size - 1
    held = np.cumsum(law.masses[::-1].astype(np.longdouble))[::-1] + law.inf
    rng = np.random.default_rng(seed)
    # nodes with mass on both sides: where the tails are large and the cells small
    nodes = sorted({int(j) for j in rng.integers(1, n, n_sample)})
    exact = ctd_tail_sums(d, h, law.offset, nodes)
    g = (law.offset + np.asarray(nodes, dtype=np.float64)) * h
    pairs = np.stack([g - h, g], axis=1).ravel()  # the cells ending at the sampled nodes
    bounds = d.slope_bounds(pairs, np.zeros_like(pairs))
    assert bounds is not None
    spread = np.nan_to_num(bounds[1][0::2] - bounds[0][0::2], posinf=1e300)
    for i, j in enumerate(nodes):
        m, q, _ = exact[j]
        got = mpf(float(held[j]))
        assert got >= m * (1 - mpf(law.tail)) - mpf(law.slack), (j, got - m, m)
        if law.fallback_slack is not None:
            assert got >= m - mpf(law.fallback_slack), (j, got - m, law.fallback_slack)
        over = q * (min(1.0, float(spread[i]) * h * (1 + h) / 12) + h * h / 400)
        assert got <= m * (1 + mpf(law.tail)) + mpf(law.slack) + over + 1e-300, (j, got - m, over)


def test_dpsgd_sources_at_the_benchmark_width() -> None:
    """W3 T=1e4's and W4's source (subsampled Gaussian, remove) at the benchmark's widths
    (4.5e-5, 1.4e-5), where x = q - e^g p computed as a difference errs by up to 1.9e-5 of b
    (8e-14 on a tail sum): the held law is an upper bound within its charges, and the absolute
    fallback charge, which was 8u, covers the error (it fails at 8u: up to 1.8e-13 at W4)."""
    check_source(SubsampledTailDirection(GaussianDirection(1.0), 0.01, "remove"),
                 math.sqrt(2e-9), 150, 1)
    check_source(SubsampledTailDirection(GaussianDirection(1 / 1.1), 0.004, "remove"),
                 math.sqrt(2e-10), 150, 2)


def test_coarse_sources() -> None:
    """A Gaussian and a subsampled Gaussian source on a coarse grid (h 0.05, where the split's
    overshoot is largest) against the exact connect-the-dots law at every node."""
    for d in (GaussianDirection(1.3), SubsampledTailDirection(GaussianDirection(0.9), 0.02,
                                                               "remove")):
        check_source(d, 0.05, 10**4, 0)


@settings(max_examples=12, deadline=None)
@given(mu=st.floats(0.3, 2.0), rate=st.floats(0.002, 0.3), log_h=st.floats(-4.5, -2.0),
       kind=st.sampled_from(["gauss", "remove", "add", "mixture", "mixture reversed"]),
       seed=st.integers(0, 1000))
def test_split_and_charges_hold(mu: float, rate: float, log_h: float, kind: str,
                                seed: int) -> None:
    """The same checks over model parameters and widths (the mixtures: a sensitivity 0 or mu
    with probabilities 1 - rate, rate)."""
    d: TailDirection = GaussianDirection(mu)
    if kind in ("remove", "add"):
        d = SubsampledTailDirection(GaussianDirection(mu), rate, kind)  # type: ignore[arg-type]
    elif kind.startswith("mixture"):
        mix = MixtureDirection((0.0,), (1.0,), (0.0, mu), (1.0 - rate, rate))
        d = mix.reverse() if kind.endswith("reversed") else mix
    check_source(d, 10.0 ** log_h, 25 if kind.startswith("mixture") else 40, seed)


def test_difference_error_bound_covers_the_cancellation() -> None:
    """``cell_errors``' bound on x = q - e^g p as differenced (the fallback split of a direction
    declaring no slope bounds) covers its true error against mpmath on W4's source, where that
    error is far above u x (the cancellation the slope bounds avoid)."""
    d = SubsampledTailDirection(GaussianDirection(1 / 1.1), 0.004, "remove")
    h = math.sqrt(2e-10)
    j = np.sort(np.concatenate([np.arange(-200, 4000, 7), np.arange(-199, 4001, 7)]))
    g = j.astype(np.float64) * h  # pairs of consecutive nodes
    tails = d.tails(g)
    fq, sq, fp, sp = tails
    accuracy = d.tail_accuracy(g, product_error(j.astype(np.float64), h))
    dx = cell_errors(g, tails, accuracy).dx
    worst = 0.0
    for i in range(0, g.size - 1, 2):
        q = sq[i] - sq[i + 1] if sq[i] <= 0.5 else fq[i + 1] - fq[i]
        p = sp[i] - sp[i + 1] if sp[i] <= 0.5 else fp[i + 1] - fp[i]
        x = q - math.exp(g[i]) * p
        exact = ctd_tail_sums(d, h, 0, [int(j[i + 1])])[int(j[i + 1])][2]
        err = abs(mpf(x) - exact)
        assert err <= dx[i], (g[i], err, dx[i])
        worst = max(worst, float(err / exact))
    assert worst > 1e-9  # the cancellation is real: 1e7 u relative and more (3.8e-8 measured)


def test_chi2_accuracy_model_covers_scipy() -> None:
    """scipy's chi-square tails err by at most (|c log x| + x + |lgamma c| + 64) u (c = k/2,
    x = s/2) against mpmath; ``_VarianceDirection.tail_accuracy`` charges 4 times that."""
    from scipy import stats

    rng = np.random.default_rng(5)
    u = np.finfo(np.float64).eps / 2
    with mpmath.workdps(40):
        for k in (1, 2, 3, 7, 40, 300, 1000, 10000):
            chi = stats.chi2(k)
            lo, hi = chi.ppf(1e-30), chi.isf(1e-30)
            s = np.concatenate([rng.uniform(lo, hi, 40), np.geomspace(max(lo, 1e-300), hi, 40)])
            c = k / 2
            for si, cdf, sf in zip(s, chi.cdf(s), chi.sf(s), strict=True):
                x = si / 2
                model = (abs(c * math.log(x)) + x + abs(math.lgamma(c)) + 64.0) * u
                lower = mpmath.gammainc(mpf(c), 0, mpf(float(x)), regularized=True)
                upper = mpmath.gammainc(mpf(c), mpf(float(x)), mpmath.inf, regularized=True)
                for got, exact in ((cdf, lower), (sf, upper)):
                    if exact > 1e-300:
                        assert abs(mpf(float(got)) - exact) <= model * exact, (k, si, got)


def test_p_tails_flushed_to_zero_inside_the_support() -> None:
    """For mu = 38 the P-tail Phi(-g/mu - mu/2) leaves the normal range (below 2.4e-310: subnormal,
    or 0 where a library ndtr flushes it, as scipy's does for z < -37.68) at g ~ 709.7, inside the
    bulk of L ~ N(722, 38^2), where e^g times it is O(1).
    The cell whose upper node's tail is flushed reads its P-mass as the whole tail, so x = q - e^g p
    is computed as 0; a relative accuracy model does not cover a flushed 0, and the split taken
    from x sent none of that cell's mass up. The pessimistic profile must stay above the exact one
    (closed form in mpmath) and epsilon must not fall below the exact epsilon there."""
    from accountant import PLD

    mu = 38.0
    pld = PLD.gaussian(1.0 / mu, tol=1e-3)

    def exact(eps: float) -> mpmath.mpf:
        with mpmath.workdps(50):
            e, m = mpf(eps), mpf(mu)
            return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)

    for eps in np.linspace(700.0, 712.0, 49):
        assert pld.delta(float(eps)) >= exact(float(eps)), eps
    target = float(exact(709.5))
    assert exact(pld.epsilon(target)) <= target
