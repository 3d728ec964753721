"""Profile-relative error bounds of optimistic (lower-bound) PLD laws (issue 14,
``_pldgrid`` module docstring point 4): each error model (s, r) of an optimistic law states
delta_held(eps) <= (1 + r) delta_exact(eps) + s at every eps, sources charge their node errors
relatively where the profile allows it (``relative_split``), and composition and coarsening keep
the models. Goldens: mpmath sums and closed forms (Gaussian profiles), exact rationals."""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import mpmath
import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from accountant.pld.grid.cells import OPT_REL_REF, node_profile, relative_split
from accountant.pld.grid.composition import self_compose
from accountant.pld.grid.convolve import to_grid
from accountant.pld.grid.law import GridLaw
from accountant.pld.laws.subsampled import SubsampledTailDirection
from accountant.pld.laws.tail import TailDirection
from accountant.pld.models.gaussian import GaussianDirection
from tests.support.libm import libm_off
from tests.support.tails import (
    PerturbedGaussian,
    assert_tail_errors_hold,
    exact_profile,
    nodes_of,
    sample_points,
)

mpf = mpmath.mpf


def raw_bounds(law: GridLaw, eps: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Rigorous (lower, upper) bounds of the held law's own profile at eps, the masses at their
    exact nodes shift + (offset + i) h: each term m (1 - e^{eps - l}) with eps - l moved by
    its rounding bound 4 u (|eps| + |l| + 1) either way and 4 u on the term, summed exactly:
    math.fsum is the correctly rounded (within half an ulp) sum of the float terms, so one ulp
    outward of it brackets their exact sum (as rigorous as a high-precision sum, and ~1000x
    faster than mpmath.fsum over 10^5 mpf terms)."""
    nz = np.flatnonzero(law.masses)
    m = law.masses[nz]
    loss = law.shift + (law.offset + nz) * law.h
    u = 2.0 ** -53
    arg = eps - loss
    pad = 4 * u * (abs(eps) + np.abs(loss) + 1.0)
    hi = m * -np.expm1(np.minimum(arg - pad, 0.0)) * (1 + 4 * u)
    lo = m * -np.expm1(np.minimum(arg + pad, 0.0)) * (1 - 4 * u)
    low = math.nextafter(math.fsum(lo[lo > 0].tolist()), -math.inf)
    high = math.nextafter(math.fsum(hi[hi > 0].tolist()), math.inf)
    with mpmath.workdps(40):
        return mpf(law.inf) + mpf(max(low, 0.0)), mpf(law.inf) + mpf(high)


def check_models(law: GridLaw, exact: object, points: np.ndarray,
                 raw: object = raw_bounds) -> list[mpmath.mpf]:
    """Each error model (s, r) of ``law``: raw <= (1 + r) exact + s at the points (raw's upper
    bound); returns, per point, raw - s_own - exact (raw's lower bound: positive where the own
    model's relative part is needed)."""
    gaps = []
    for eps in points.tolist():
        raw_lo, raw_hi = raw(law, eps)  # type: ignore[operator]
        truth = exact(eps)  # type: ignore[operator]
        for slack, rel, tail in law.error_models:
            assert tail == 0.0
            assert raw_hi <= (1 + mpf(rel)) * truth + mpf(slack), (
                eps, float(raw_hi - truth), rel, slack)
        gaps.append(raw_lo - mpf(law.slack) - truth)
    return gaps


# ============================ the split of a node error ==========================================


floats = st.floats(-1e-10, 1e-6, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(floats, st.floats(-1e-3, 1.0), st.floats(0.0, 1e-3)), min_size=1,
                max_size=30))
def test_relative_split_holds_in_exact_arithmetic(rows: list[tuple[float, float, float]]) -> None:
    """err_J + t lowered_J <= t max(low_J, 0) + s at every node, in exact rational arithmetic
    (the split's own rounding included), and the nodes with max(low, 0) - lowered >= OPT_REL_REF
    are charged relatively: their err_J - t a_J <= 0 up to that rounding."""
    err, low, lowered = (np.array(c, dtype=np.float64) for c in zip(*rows, strict=True))
    t, s = relative_split(err, low, lowered)
    assert t >= 0.0 and s >= 0.0
    tf, sf = Fraction(t), Fraction(s)
    for e, lo, c in rows:
        a = max(Fraction(lo), Fraction(0)) - Fraction(c)
        assert Fraction(e) - tf * a <= sf, (e, lo, c, t, s)
        if float(a) >= OPT_REL_REF:
            slop = (Fraction(4 * 2.0 ** -52) * (abs(Fraction(e)) + tf * (abs(Fraction(lo)) + Fraction(c)))
                    + Fraction(4 * sys.float_info.min))
            assert Fraction(e) - tf * a <= slop


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=40), st.floats(1e-5, 0.5),
       st.integers(-30, 0), st.sampled_from([-np.inf, np.inf]))
@example([0.0, 5e-324], 0.5, 0, np.inf)  # an underflowing product (found by hypothesis in CI)
# the top mass 40 nodes up, e^{-h} just above 1/2 (where an ulp is largest relatively)
@example([0.0] * 39 + [1.0], 0.69, 0, -np.inf)
def test_node_profile_bounds_the_profile(mu: list[float], h: float, scale: int,
                                         direction: float) -> None:
    """node_profile is an upper bound of sum_{i > J} mu_i (1 - e^{(J - i) h}) at every node J
    (mpmath), within 1e-9 of it, under the worst libm of the model."""
    m = np.array(mu) * 10.0 ** scale
    with libm_off(direction):
        got = node_profile(m, h)
    with mpmath.workdps(40):
        for j in range(m.size):
            exact = mpmath.fsum(mpf(float(m[i])) * -mpmath.expm1(mpf(j - i) * mpf(h))
                                for i in range(j + 1, m.size))
            assert exact <= mpf(float(got[j])) <= exact * (1 + mpf("1e-9")) + mpf("1e-300"), j


# ============================ sources: each model below the truth ================================


@settings(max_examples=12, deadline=None)
@given(mu=st.floats(0.3, 3.0), rate=st.floats(1e-4, 0.5), log_h=st.floats(-5.0, -2.0),
       direction=st.sampled_from(["remove", "add"]), seed=st.integers(0, 1000))
def test_subsampled_tail_errors_hold(mu: float, rate: float, log_h: float, direction: str,
                                     seed: int) -> None:
    """Each of a subsampled Gaussian's four computed tails is within its own ``tail_errors``
    bound (from the base's per-tail bounds, mixed) of the exact tail at the exact node j h
    (mpmath), the tails near 1 included (the total Q-mass of an optimistic source is read from
    the upper Q-tail at its first node, near 1)."""
    d = SubsampledTailDirection(GaussianDirection(mu), rate, direction)  # type: ignore[arg-type]
    h = 10.0 ** log_h
    assert_tail_errors_hold(d, h, nodes_of(d, h, np.random.default_rng(seed), 40))


def directions() -> st.SearchStrategy[TailDirection]:
    mu = st.floats(0.5, 2.0)
    gauss = st.builds(PerturbedGaussian, mu)
    sub = st.builds(SubsampledTailDirection, gauss, st.floats(0.01, 0.5),
                    st.sampled_from(["remove", "add"]))
    return st.one_of(gauss, sub)


def exact_of(d: TailDirection) -> TailDirection:
    """The unperturbed direction of a perturbed one."""
    if isinstance(d, SubsampledTailDirection):
        return SubsampledTailDirection(GaussianDirection(d.base.mu), d.rate,  # type: ignore[attr-defined]
                                       d.direction)
    return GaussianDirection(d.mu)  # type: ignore[attr-defined]


@settings(max_examples=8, deadline=None)
@given(d=directions(), log_h=st.floats(-4.0, -2.5), seed=st.integers(0, 1000))
def test_each_model_of_a_perturbed_source_is_below_the_truth(d: TailDirection, log_h: float,
                                                            seed: int) -> None:
    """Tails moved by up to their declared accuracy (1e-11 of themselves, in the directions that
    raise the node profiles): every error model of the optimistic law, the profile-relative one
    and the absolute one, holds against the exact (unmoved) profile at nodes and midpoints."""
    exact = exact_of(d)
    law = d.discretize(10.0 ** log_h, False, 1e-24)
    assert law.alt is not None
    check_models(law, lambda e: exact_profile(exact, e), sample_points(
        law, np.random.default_rng(seed), 25))


def test_the_relative_part_is_needed() -> None:
    """The moved tails raise the law's profile above the exact one by more than the own model's
    absolute part at midpoints of the bulk (where the chords touch the tangents): without its
    relative part the law would not be a lower bound (and it is one with it; the absolute model
    holds too)."""
    d = PerturbedGaussian(1.0)
    law = d.discretize(1e-3, False, 1e-24)
    assert law.slack < 1e-18 < 1e-12 < law.rel
    pts = (np.arange(-500, 500, 7) + 0.5) * 1e-3
    gaps = check_models(law, lambda e: exact_profile(GaussianDirection(1.0), e), pts)
    assert max(gaps) > 0, max(gaps)


# ============================ composition and coarsening keep the models ========================


def gaussian_profile(mu: float):  # type: ignore[no-untyped-def]
    """Phi(-e/mu + mu/2) - e^e Phi(-e/mu - mu/2), the Gaussian pair's profile (mpmath)."""
    def delta(eps: float) -> mpmath.mpf:
        with mpmath.workdps(40):
            e, m = mpf(eps), mpf(mu)
            return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)
    return delta


def test_composed_perturbed_gaussian_stays_within_its_models() -> None:
    """64 copies of a Gaussian source whose tails are moved by 1e-5 of themselves (its declared
    accuracy), composed by repeated squaring with coarsenings: each model of the composed
    optimistic law holds against the exact profile of the composition (the Gaussian pair with
    mu sqrt(64)), and the own model's relative part is about 64 times the source's (relative
    errors compose additively, point 4) and is needed: the raw profile minus its absolute part
    exceeds the truth somewhere."""
    mu, k = 0.25, 64
    d = PerturbedGaussian(mu, rel=1e-5)
    src = d.discretize(2e-3, False, 1e-24)
    law = self_compose(src, k, 4, 2)
    assert law.h > src.h  # coarsened on the way
    assert 30 * src.rel <= law.rel <= 100 * src.rel, (src.rel, law.rel)
    total = mu * math.sqrt(k)
    eps = np.linspace(-1.0, total * total / 2 + 5 * total, 40) + 0.37 * law.h
    gaps = check_models(law, gaussian_profile(total), eps)
    assert max(gaps) > 0


def exact_raw(law: GridLaw, eps: float) -> mpmath.mpf:
    """A law's profile at eps summed in mpmath (40 digits), the masses at their exact nodes."""
    with mpmath.workdps(40):
        e = mpf(eps)
        out = mpf(law.inf)
        for i in np.flatnonzero(law.masses).tolist():
            loss = mpf(law.shift) + (law.offset + i) * mpf(law.h)
            if loss > e:
                out += mpf(float(law.masses[i])) * -mpmath.expm1(e - loss)
        return out


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=3, max_size=60), st.integers(-40, 0),
       st.floats(0.003, 0.2), st.sampled_from([2, 3, 8]))
def test_optimistic_coarsening_within_its_models(mu: list[float], scale: int, h: float,
                                                 factor: int) -> None:
    """The optimistic coarsening of a law taken as exact (slack and rel 0): each model of the
    result bounds its profile by the input's (mpmath), the construction's own rounding included
    (relative to the input's node profiles, with the hull's and the capped nodes' residues)."""
    m = np.array(mu)
    m[-1] = max(m[-1], 0.1)
    m = m * 10.0 ** (scale * np.linspace(0.0, 1.0, m.size))
    fine = GridLaw(h, -7, m, 0.0, 0.0, False)
    coarse = to_grid(fine, factor * h)
    lo, hi = float(fine.losses[0]), float(fine.losses[-1])
    eps = np.concatenate([np.linspace(lo - 0.1, hi + 0.1, 50), coarse.losses[::3]])
    check_models(coarse, lambda e: exact_raw(fine, e), eps,
                 lambda law, e: (exact_raw(law, e),) * 2)


def test_dpsgd_lower_end_pays_little_for_round_off() -> None:
    """DP-SGD with q 0.01, sigma 1, 1e4 steps (the benchmark's W3 T=1e4) at the default tol: the
    bracket's lower end is within 1% of tol (3e-7) of the lower end read from the same optimistic
    masses with no error charge at all (an absolute charge per copy cost 1.6e-6 there: 1e4 copies
    of 5e-15 on delta 1e-5). What it pays is the law's round-off charge, a share of the cut budget
    of the laws serving delta 1e-5 (``law_budget``: 1.024e-10; 1.6e-7 in epsilon, 0.5% of tol)."""
    from accountant import GDP, compose, subsample
    from accountant.pld.readout import lower_end
    from accountant.pld.settings import OPTIMISTIC_COARSER

    pld = compose([subsample(GDP(1.0), rate=0.01, scheme="poisson")] * 10_000)
    lower, upper = pld.epsilon_bracket(1e-5)
    # the bracket's law: its first (within tol here), sources read 2^OPTIMISTIC_COARSER coarser
    view = pld._serving(1e-5)  # the laws serving delta 1e-5 (their cut: ``law_budget``)
    opt = view.law(view._worst_direction(upper), pessimistic=False, finer=-OPTIMISTIC_COARSER)
    bare = GridLaw(opt.h, opt.offset, opt.masses, opt.inf, 0.0, False, 0.0, opt.shift)
    assert 0.0 <= lower_end(bare, 1e-5, upper) - lower < 0.01 * pld.tol


def test_dpsgd_lower_end_at_small_delta_uses_the_precise_law() -> None:
    """W3 T=1e4 at delta 1e-12: the optimistic law's absolute FFT round-off (2.5e-14) exceeds
    1e-4 of delta, so the bracket reads the precise optimistic law (operands split into up to
    PRECISE_SLICES slices): its lower end is within 1e-3 of the truth (10.346689837630745, mpmath,
    ``benchmarks/accounting.py`` TAIL_TRUTHS; the default law's is 6e-3 below it) and below it,
    and the delta bracket at that epsilon holds 1e-12."""
    from accountant import GDP, compose, subsample

    pld = compose([subsample(GDP(1.0), rate=0.01, scheme="poisson")] * 10_000)
    truth = 10.346689837630745
    lower, upper = pld.epsilon_bracket(1e-12)
    assert lower <= truth <= upper
    assert truth - lower < 1e-3, truth - lower
    d_lo, d_up = pld.delta_bracket(truth)
    assert d_lo <= 1e-12 * (1 + 1e-9) and d_up >= 1e-12 * (1 - 1e-9), (d_lo, d_up)
    assert d_lo > 0.9e-12, d_lo
