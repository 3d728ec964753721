"""The optimistic discretisation of a continuous source (issue 14, ``optimistic_from_cells``,
``accountant/_plderror.py``): its profile minus its charge must lie below the exact profile
Q(L > eps) - e^eps P(L > eps) everywhere. The computed cell contents err by u times the tails,
not u times the cells, so the charge bounds the node profiles through their telescoped tails
(``optimistic_node_error``, with the direction's ``profile_error``), and the lowerings are read
from upper bounds of the halves' excess and deficit (slope bounds, ``deficit_share``).
Goldens are mpmath computations from each model's definition."""

from __future__ import annotations

import math
import sys

import mpmath
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant.core.normal import ndtr
from accountant.pld.grid.law import GridLaw
from accountant.pld.laws.errors import cell_errors, deficit_share, ndtr_accuracy, product_error
from accountant.pld.laws.subsampled import SubsampledTailDirection
from accountant.pld.laws.symmetric import SymmetricTailDirection
from accountant.pld.laws.tail import TailDirection
from accountant.pld.models.gaussian import GaussianDirection
from accountant.pld.models.laplace import LaplaceDirection
from accountant.pld.models.mixture import MixtureDirection
from tests.support.tails import (
    PerturbedGaussian,
    assert_tail_errors_hold,
    exact_profile,
    model_tails,
    nodes_of,
    sample_points,
)

mpf = mpmath.mpf
U = 2.0 ** -53




def check_below(law: GridLaw, d: TailDirection, points: np.ndarray) -> None:
    for eps in points.tolist():
        got = law.delta(float(eps))
        exact = exact_profile(d, float(eps))
        assert got <= exact, (d, eps, got, float(exact), law.slack)




# ============================ the deficit share of the tilted law ================================


def tilted_deficit(a: float, w: float) -> mpmath.mpf:
    """E[e^{w - t}] - 1 for t of density proportional to e^{a t} on (0, w)."""
    with mpmath.workdps(60):
        a_, w_ = mpf(a), mpf(w)

        def m(c: mpmath.mpf) -> mpmath.mpf:
            return w_ if c == 0 else mpmath.expm1(c * w_) / c

        return mpmath.exp(w_) * m(a_ - 1) / m(a_) - 1


@settings(max_examples=200, deadline=None)
@given(a=st.one_of(st.floats(-1e7, 1e7), st.floats(-30.0, 30.0)), log_w=st.floats(-7.0, 0.0))
def test_deficit_share_bounds_the_tilted_law(a: float, log_w: float) -> None:
    """``deficit_share`` is at least the exact deficit of the tilted law and within its pads of
    it (midpoint rule 2 w^3 / 1000, the tilted mean's rounding, 8 u)."""
    w = 10.0 ** log_w
    got = float(deficit_share(np.array([a]), w)[0])
    exact = tilted_deficit(a, w)
    assert got >= exact, (a, w, got, exact)
    pad = (1 + exact) * (0.003 * w ** 3 + w * (300 + abs(a - 0.5) * w) * U) + 10 * U * exact
    assert got <= exact + pad, (a, w, got, exact)


def test_deficit_share_edges() -> None:
    """Slope -inf or NaN (no lower bound) gives the largest deficit e^w - 1; +inf (all mass at
    the top) gives 0 up to the midpoint rule's pad."""
    w = 0.01
    got = deficit_share(np.array([-np.inf, np.nan, np.inf]), w)
    assert got[0] >= math.expm1(w) and got[1] >= math.expm1(w)
    assert 0.0 <= got[2] <= w ** 3 / 500


# ============================ per-tail errors and the profile's error =============================


def test_ndtr_own_value_accuracy_covers_ndtr() -> None:
    """``ndtr_accuracy(own_value=True)`` (no argument error) covers ndtr's error against mpmath,
    with its 16 u for values at z >= 0 (measured at most 1.6 u there) and down to z = -37.5."""
    rng = np.random.default_rng(5)
    z = np.concatenate([np.linspace(0.0, 40.0, 801), rng.uniform(0.0, 10.0, 400),
                        rng.uniform(-37.5, 0.0, 200)])
    bound = ndtr_accuracy(z, np.zeros_like(z), own_value=True)
    with mpmath.workdps(40):
        for zi, vi, bi in zip(z, ndtr(z), bound, strict=True):
            exact = mpmath.ncdf(mpmath.mpf(float(zi)))
            assert abs(mpmath.mpf(float(vi)) - exact) <= bi * float(vi), zi




@settings(max_examples=15, deadline=None)
@given(mu=st.floats(0.3, 3.0), log_h=st.floats(-5.5, -2.0), seed=st.integers(0, 1000))
def test_gaussian_tail_errors_hold(mu: float, log_h: float, seed: int) -> None:
    """Each of the Gaussian's four computed tails is within its own ``tail_errors`` bound of the
    exact tail at the exact node j h (mpmath), including the tails near 1."""
    d = GaussianDirection(mu)
    h = 10.0 ** log_h
    assert_tail_errors_hold(d, h, nodes_of(d, h, np.random.default_rng(seed), 60))




def test_tail_errors_of_selected_tails_are_those_of_all_four() -> None:
    """``tail_errors(..., which)`` (what ``profile_error`` asks for: two of the four tails) gives
    each listed tail the bound it has among all four (the mpmath check above), in order."""
    h = 1e-3
    for d in (GaussianDirection(0.9), LaplaceDirection(1.0),
              SubsampledTailDirection(GaussianDirection(0.9), 0.01, "remove")):
        lo, hi = d.support()
        j = np.arange(math.floor(lo / h) - 1, math.ceil(hi / h) + 2, dtype=np.float64)
        g, dg = j * h, product_error(j, h)
        tails = d.tails(g)
        full = d.tail_errors(g, dg, tails)
        for which in ((1, 3), (0, 2), (3, 0), (2,)):
            part = d.tail_errors(g, dg, tails, which)
            assert len(part) == len(which)
            for i, e in zip(which, part, strict=True):
                assert np.array_equal(e, full[i]), (d, which, i)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.1, 40.0))
def test_own_value_accuracy_from_the_symmetric_one(seed: int, scale: float) -> None:
    """``ndtr_accuracy(own_value=True, symmetric=...)`` re-evaluates only the entries where the
    own-value bound differs from the symmetric one: bitwise the same bound as evaluating all of
    them, at z and at -z (the symmetric bound at -z is that at z), non-finite entries included."""
    rng = np.random.default_rng(seed)
    z = np.concatenate([rng.normal(0.0, scale, 2000),
                        [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-300, -1e-300, 38.0, -38.0,
                         -0.5, 0.5]])
    dz = np.abs(z) * 1e-15 + rng.uniform(0.0, 1e-9, z.size)
    dz[:6] = [0.0, np.inf, np.nan, 0.0, 1e-3, 2.0]
    dz[-2:] = -1.0  # not a valid error bound, but the identity needs no sign of dz
    with np.errstate(all="ignore"):
        sym = ndtr_accuracy(z, dz)
        for w in (z, -z):
            whole = ndtr_accuracy(w, dz, own_value=True)
            assert whole.tobytes() == ndtr_accuracy(w, dz, own_value=True,
                                                    symmetric=sym).tobytes()


def assert_profile_error_covers(d: TailDirection, j: np.ndarray, h: float,
                                tails: tuple[np.ndarray, ...], bound: np.ndarray) -> None:
    """|sq~ - e^g sp~ - D| <= bound at the nodes g = j h, D the exact profile (mpmath)."""
    sq, sp, _, _ = model_tails(d)
    with mpmath.workdps(40):
        for i in range(j.size):
            e = mpf(int(j[i])) * mpf(h)
            got = mpf(float(tails[1][i])) - mpmath.exp(e) * mpf(float(tails[3][i]))
            exact = sq(e) - mpmath.exp(e) * sp(e)
            exact = max(exact, mpf(0))  # above the support: mpmath's stand-in for l = -inf
            assert abs(got - exact) <= bound[i], (d, h, j[i], float(got - exact), bound[i])


@settings(max_examples=20, deadline=None)
@given(mu=st.floats(0.3, 2.0), rate=st.floats(0.001, 0.5), log_h=st.floats(-5.5, -2.0),
       direction=st.sampled_from(["remove", "add"]), seed=st.integers(0, 1000))
def test_subsampled_profile_error_holds(mu: float, rate: float, log_h: float, direction: str,
                                        seed: int) -> None:
    """A subsampled Gaussian's ``profile_error`` bounds |sq~ - e^g sp~ - D| at the exact nodes
    (mpmath), near log(1 - r), at the median and at the top."""
    d = SubsampledTailDirection(GaussianDirection(mu), rate, direction)  # type: ignore[arg-type]
    h = 10.0 ** log_h
    j = nodes_of(d, h, np.random.default_rng(seed), 60)
    g = j * h
    dg = product_error(j, h)
    tails = d.tails(g)
    errors = cell_errors(g, tails, d.tail_accuracy(g, dg))
    assert_profile_error_covers(d, j, h, tails, d.profile_error(g, dg, tails, errors))


def test_dpsgd_profile_error_is_that_of_one_mixed_tail() -> None:
    """At W4's source (mu 1/1.1, r 0.004, its width) the remove direction's profile errs by a few
    u of its tails (their rounding), where the tails' own error bounds added give up to 2e-12
    (near log(1 - r), where the base loss is ill-conditioned)."""
    d = SubsampledTailDirection(GaussianDirection(1 / 1.1), 0.004, "remove")
    h = math.sqrt(2e-10)
    lo, hi = d.support(1e-24)
    j = np.arange(math.floor(lo / h) - 1, math.ceil(hi / h) + 2, dtype=np.float64)
    g = j * h
    dg = product_error(j, h)
    tails = d.tails(g)
    errors = cell_errors(g, tails, d.tail_accuracy(g, dg))
    bound = d.profile_error(g, dg, tails, errors)
    assert float(np.max(bound)) < 8 * U
    assert float(np.max(errors.dsq + np.exp(g) * errors.dsp)) > 100 * float(np.max(bound))


# ============================ the optimistic source below the truth ==============================




@settings(max_examples=12, deadline=None)
@given(mu=st.floats(0.5, 2.0), log_h=st.floats(-4.0, -2.5), seed=st.integers(0, 1000),
       kind=st.sampled_from(["gauss", "remove", "add"]), rate=st.floats(0.01, 0.5))
def test_charge_covers_tails_within_their_declared_accuracy(mu: float, log_h: float, seed: int,
                                                            kind: str, rate: float) -> None:
    """Tails moved by up to their declared accuracy (1e-11, far above 8 u) raise the node
    profiles by about 1e-11 of the tails: the optimistic law's charge covers that, and it stays
    below the exact (unmoved) profile at nodes and midpoints (with the old flat 8 u charge it
    does not); also as the base of a subsampled pair (whose profile error is r times the
    base's)."""
    d: TailDirection = PerturbedGaussian(mu)
    exact: TailDirection = GaussianDirection(mu)
    if kind != "gauss":
        d = SubsampledTailDirection(PerturbedGaussian(mu), rate, kind)  # type: ignore[arg-type]
        exact = SubsampledTailDirection(GaussianDirection(mu), rate, kind)  # type: ignore[arg-type]
    h = 10.0 ** log_h
    law = d.discretize(h, False, 1e-24)
    # each error model charges it (as a relative bound r, or an absolute one s: s + r is the
    # charge at delta = 1)
    for slack, rel, _ in law.error_models:
        assert slack + rel > (1e-12 if kind == "gauss" else 1e-12 * rate), law.error_models
    rng = np.random.default_rng(seed)
    pts = sample_points(law, rng, 60)
    # and where the profile is large: at nodes and midpoints of the lowest fifth of the support
    lo, hi = d.support(1e-24)
    j = np.floor((lo + 0.2 * (hi - lo) * rng.random(30)) / h)
    pts = np.concatenate([pts, j * h, (j + 0.5) * h])
    check_below(law, exact, pts)


def directions() -> st.SearchStrategy[TailDirection]:
    mu = st.floats(0.3, 2.0)
    rate = st.floats(0.002, 0.3)
    gauss = st.builds(GaussianDirection, mu)
    lap = st.builds(LaplaceDirection, st.floats(0.2, 2.0))
    sub = st.builds(SubsampledTailDirection, gauss, rate, st.sampled_from(["remove", "add"]))
    sym = st.builds(lambda b, r: SymmetricTailDirection(SubsampledTailDirection(b, r, "remove")),
                    gauss, rate)
    mix = st.builds(lambda m, r: MixtureDirection((0.0,), (1.0,), (0.0, m), (1.0 - r, r)),
                    mu, rate)
    return st.one_of(gauss, lap, sub, sym, mix)


@settings(max_examples=12, deadline=None)
@given(d=directions(), log_h=st.floats(-4.0, -1.5), seed=st.integers(0, 1000))
def test_optimistic_source_is_below_the_truth(d: TailDirection, log_h: float,
                                              seed: int) -> None:
    """The optimistic law of a source, its charge included, is below the exact profile at
    sampled nodes and midpoints, for every direction type (atoms included)."""
    law = d.discretize(10.0 ** log_h, False, 1e-24)
    check_below(law, d, sample_points(law, np.random.default_rng(seed), 40))


def test_dpsgd_optimistic_sources_are_below_the_truth() -> None:
    """W3 T=1e4's and W4's sources (both directions) at the benchmark widths, where the halves'
    contents err by up to 4e-14: below the exact profile at sampled nodes and midpoints, and
    charged less than 6e-15 absolutely in either error model (the profile-relative model charges
    the node errors relatively, ``test_pld_optimistic_relative``)."""
    for mu, rate, h in ((1.0, 0.01, math.sqrt(2e-9)), (1 / 1.1, 0.004, math.sqrt(2e-10))):
        for direction in ("remove", "add"):
            d = SubsampledTailDirection(GaussianDirection(mu), rate, direction)
            law = d.discretize(h, False, 1e-24)
            assert all(s < 6e-15 for s, _, _ in law.error_models), (mu, direction, law)
            check_below(law, d, sample_points(law, np.random.default_rng(3), 80))


def test_profile_error_covers_flushed_tails() -> None:
    """At mu 38 the P-tail Phi(-g/mu - mu/2) leaves the normal range near g = 709.7 (subnormal,
    2.4e-310; a library ndtr may flush it to 0), where e^g times it is O(1): the per-tail errors
    and the profile's error allow for it (UNDERFLOW)."""
    d = GaussianDirection(38.0)
    h = 1e-3
    j = np.arange(709_600, 709_800, 7, dtype=np.float64)
    g = j * h
    dg = product_error(j, h)
    tails = d.tails(g)
    assert np.all(tails[3] < sys.float_info.min)
    errs = d.tail_errors(g, dg, tails)
    bound = d.profile_error(g, dg, tails, cell_errors(g, tails, d.tail_accuracy(g, dg)))
    sq, sp, _, _ = model_tails(d)
    with mpmath.workdps(40):
        for i in range(g.size):
            e = mpf(int(j[i])) * mpf(h)
            assert abs(mpf(float(tails[3][i])) - sp(e)) <= errs[3][i], j[i]
            got = mpf(float(tails[1][i])) - mpmath.exp(e) * mpf(float(tails[3][i]))
            exact = sq(e) - mpmath.exp(e) * sp(e)
            assert abs(got - exact) <= bound[i], (j[i], float(got - exact), bound[i])


def test_profile_error_is_finite_where_e_to_the_g_overflows() -> None:
    """Beyond g = 709.8 e^g overflows while the P-tail is flushed to 0: the profile's error (e^g
    times the P-tail's, in log space and at most e^g (sp~ + sp) by Mills' ratio) stays finite,
    below 0.05, and covers the exact |computed - exact| profile (mpmath)."""
    for mu in (30.0, 38.0):
        d = GaussianDirection(mu)
        h = 1e-2
        j = np.arange(70_500, 76_000, 250, dtype=np.float64)
        g = j * h
        dg = product_error(j, h)
        tails = d.tails(g)
        bound = d.profile_error(g, dg, tails, cell_errors(g, tails, d.tail_accuracy(g, dg)))
        assert np.all(bound < 0.05), (mu, bound.max())
        assert_profile_error_covers(d, j, h, tails, bound)


def test_large_mu_gaussian_lower_end_is_tight() -> None:
    """For GDP mu 30 the loss's bulk (N(450, 900)) reaches past g = 709.8, where e^g overflows:
    the optimistic law's charge stays tiny and the bracket's lower end is within 1e-6 relative of
    the exact epsilon(1e-5) (mpmath bisection of Phi(-e/mu + mu/2) - e^e Phi(-e/mu - mu/2)). Its
    optimistic law lies below the exact profile at sampled nodes and midpoints."""
    from accountant import PLD

    mu = 30.0
    d = GaussianDirection(mu)
    law = d.discretize(0.05, False)
    assert min(s for s, _, _ in law.error_models) < 1e-10, law.error_models
    check_below(law, d, sample_points(law, np.random.default_rng(5), 40))
    with mpmath.workdps(40):
        m = mpf(mu)

        def delta(e: mpmath.mpf) -> mpmath.mpf:
            return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)

        lo, hi = mpf(500), mpf(700)
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if delta(mid) > mpf("1e-5") else (lo, mid)
        exact = float(lo)
    lower, upper = PLD.gaussian(1 / mu).epsilon_bracket(1e-5)
    assert 0.0 < lower <= exact <= upper, (lower, exact, upper)
    assert exact - lower <= 1e-6 * exact, (lower, exact)
