"""The discrete Gaussian pair's masses exp(-d^2/(2 sigma2) - log Z) are computed in floating point:
the argument's own error (a few u of its size, up to ~700) is amplified by exp into a relative
error of hundreds of u of the mass, far above the 8 u that finite pairs assume of masses given
without a declared bound. The curve declares it (``mass_rtol``, from ``gauss_masses``) and the
pairs' PLDs read it. Goldens: the exact masses of N_Z(0, sigma2) in mpmath (50 digits, Z summed
over all integers: the terms left out are below e^-1800) and exact k-fold deltas by enumeration."""

from __future__ import annotations

import bisect
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from accountant import FDP, FiniteLossTradeoff, subsample
from accountant.notions.discrete_gaussian import (
    GAUSS_UNHELD_MASS,
    discrete_gaussian_window,
    gauss_log_norm,
    gauss_masses,
)
from accountant.pld.distribution import PLD
from accountant.pld.laws.finite import MASS_RTOL, merge_near_zero, symmetric_direction
from accountant.pld.models.discrete import (
    PAIR_GAUSSIAN_TAIL,
    DiscreteGaussianPair,
    TruncatedDiscreteGaussianPair,
)

mpf = mpmath.mpf


def weights(s2: Fraction, lo: int, hi: int) -> dict[int, mpmath.mpf]:
    """e^{-k^2/(2 sigma2)} for lo <= k <= hi, sigma2 exact (call within workdps(50))."""
    sigma2 = mpf(s2.numerator) / s2.denominator
    return {k: mpmath.exp(-mpf(k * k) / (2 * sigma2)) for k in range(lo, hi + 1)}


def exact_pmf(s2: Fraction, reach: int, sds: int = 60) -> dict[int, mpmath.mpf]:
    """P(Y = k) for Y ~ N_Z(0, sigma2), |k| <= reach + sds sigma + 10 (Z over them: the terms left
    out are below e^{-sds^2/2} of it)."""
    big = reach + int(sds * math.sqrt(s2)) + 10
    w = weights(s2, -big, big)
    z = mpmath.fsum(w.values())
    return {k: v / z for k, v in w.items()}


def worst_relative(held: np.ndarray, exact: list[mpmath.mpf]) -> float:
    """The largest relative error of the held (non-zero) masses; every mass not held must be
    below GAUSS_UNHELD_MASS."""
    worst = mpf(0)
    for h, e in zip(held.tolist(), exact, strict=True):
        if h == 0.0:
            assert e < GAUSS_UNHELD_MASS
        else:
            worst = max(worst, abs(mpf(h) / e - 1))
    return float(worst)


def curve_errors(s2: Fraction, shift: int, tail: float) -> tuple[FiniteLossTradeoff, float]:
    """The curve, and the largest relative error of its Q- and P-masses (the P-masses are those
    its constructor computes, ``gauss_masses`` at y); checks that the losses lie within loss_atol
    and that q_inf and p_ninf hold the window's rest and the masses not held."""
    f = FiniteLossTradeoff.discrete_gaussian(s2, shift, tail=tail)
    m = discrete_gaussian_window(s2, tail)
    y = np.arange(-m, shift + m + 1)
    with mpmath.workdps(50):
        pmf = exact_pmf(s2, m + shift)
        sigma2 = mpf(s2.numerator) / s2.denominator
        # the curve holds the atoms sorted by loss, i.e. by y, descending
        q_exact = [pmf[int(k) - shift] for k in y[::-1]]
        p_exact = [pmf[int(k)] for k in y[::-1]]
        for held, k in zip(f.losses.tolist(), y[::-1].tolist(), strict=True):
            assert abs(mpf(held) - (2 * shift * k - shift * shift) / (2 * sigma2)) <= f.loss_atol
        err_q = worst_relative(f.q_masses, q_exact)
        log_z, log_z_err = gauss_log_norm(m, float(s2))
        p_held, _ = gauss_masses(y[::-1].astype(np.float64), float(s2), log_z, log_z_err)
        err_p = worst_relative(p_held, p_exact)
        unheld_q = mpmath.fsum(e for h, e in zip(f.q_masses.tolist(), q_exact, strict=True)
                               if h == 0.0)
        unheld_p = mpmath.fsum(e for h, e in zip(p_held.tolist(), p_exact, strict=True)
                               if h == 0.0)
        # the window's rest: Q outside is Y outside [-m - shift, m], P outside Y outside [-m, m + shift]
        q_rest = mpmath.fsum(v for j, v in pmf.items() if not -m - shift <= j <= m)
        p_rest = mpmath.fsum(v for j, v in pmf.items() if not -m <= j <= m + shift)
        assert f.q_inf >= q_rest + unheld_q
        assert f.p_ninf >= p_rest + unheld_p
    return f, max(err_q, err_p)


@settings(max_examples=25, deadline=None)
@given(st.fractions(Fraction(1, 20), Fraction(60), max_denominator=1000),
       st.integers(1, 4), st.sampled_from([PAIR_GAUSSIAN_TAIL, 40.0]))
# the largest errors found: exponents up to ~700 (tail 40), and the pair's 13-sigma window
@example(Fraction(9), 3, 40.0)
@example(Fraction(7, 10), 2, PAIR_GAUSSIAN_TAIL)
@example(Fraction(1, 20), 1, 40.0)  # sigma < 0.25: most masses below the normal range
def test_masses_within_declared_error(s2: Fraction, shift: int, tail: float) -> None:
    f, worst = curve_errors(s2, shift, tail)
    assert worst <= f.mass_rtol


@pytest.mark.parametrize(("s2", "shift", "tail"), [
    (Fraction(9), 3, 40.0), (Fraction(7, 10), 2, PAIR_GAUSSIAN_TAIL)])
def test_masses_err_beyond_the_undeclared_default(s2: Fraction, shift: int, tail: float) -> None:
    """The error is real: above MASS_RTOL (8 u), what the pair's PLD took of these masses before
    they declared their error (exponents up to 700 and 85: 330 u and 42 u measured)."""
    _, worst = curve_errors(s2, shift, tail)
    assert worst > MASS_RTOL


@pytest.mark.parametrize("sigma", [0.8, 3.0])
def test_pair_reads_the_declared_mass_error(sigma: float) -> None:
    d = DiscreteGaussianPair(sigma).directions()[0]
    f = FiniteLossTradeoff.discrete_gaussian(Fraction(sigma) ** 2, 1, tail=PAIR_GAUSSIAN_TAIL)
    assert d.mass_rtol == f.mass_rtol > MASS_RTOL  # type: ignore[attr-defined]
    assert d.opt_inf == 0.0 < d.inf  # type: ignore[attr-defined]


@settings(max_examples=15, deadline=None)
@given(st.floats(0.2, 6.0), st.integers(0, 60), st.integers(1, 3))
@example(0.2, 60, 1)  # exponents up to 45000: masses far below the normal range
@example(1.0, 30, 2)  # exponents up to 512
def test_truncated_masses_within_declared_error(sigma: float, bound: int, shift: int) -> None:
    d = TruncatedDiscreteGaussianPair(sigma, bound, shift).directions()[0]
    with mpmath.workdps(50):
        w = weights(Fraction(sigma) ** 2, -bound, bound)
        z = mpmath.fsum(w.values())
        y = range(shift - bound, bound + 1)
        exact = [w[k - shift] / z for k in y]
        worst = worst_relative(d.q, exact)  # type: ignore[attr-defined]
        assert worst <= d.mass_rtol  # type: ignore[attr-defined]
        rest = mpmath.fsum(w[k] for k in range(max(bound - shift + 1, -bound), bound + 1)) / z
        unheld = mpmath.fsum(e for h, e in zip(d.q.tolist(), exact, strict=True) if h == 0.0)  # type: ignore[attr-defined]
        assert d.opt_inf <= rest <= d.inf - unheld  # type: ignore[attr-defined]


def exact_delta(sigma: float, shift: int, k: int, epss: list[float]) -> list[mpmath.mpf]:
    """delta(eps) of k copies of the discrete Gaussian pair by enumeration: under Q the sum S of
    the k outputs has the k-fold convolution of shift + N_Z(0, sigma^2), and the loss is
    (2 shift S - k shift^2) / (2 sigma^2)."""
    s2 = Fraction(sigma) ** 2
    with mpmath.workdps(50):
        # |Y| up to 30 sigma: the mass left out (< e^-450) is far below the deltas read
        base = exact_pmf(s2, 0, 30)
        law = {0: mpf(1)}
        for _ in range(k):
            nxt: dict[int, mpmath.mpf] = {}
            for a, pa in law.items():
                for b, pb in base.items():
                    nxt[a + b + shift] = nxt.get(a + b + shift, mpf(0)) + pa * pb
            law = nxt
        sigma2 = mpf(s2.numerator) / s2.denominator
        out = []
        for eps in epss:
            terms = []
            for s, ps in law.items():
                gap = mpf(eps) - (2 * shift * s - k * shift * shift) / (2 * sigma2)
                if gap < 0:
                    terms.append(ps * -mpmath.expm1(gap))
            out.append(mpmath.fsum(terms))
        return out


@pytest.mark.parametrize(("sigma", "shift", "k"), [(0.9, 1, 3), (2.0, 1, 3), (1.3, 2, 2)])
def test_composed_delta_brackets_the_exact(sigma: float, shift: int, k: int) -> None:
    """Upper bound >= exact >= lower end, at eps from the bulk to the far tail (the top of the
    composed support is k (2 shift (shift + m) - shift^2) / (2 sigma^2), m ~ 13 sigma)."""
    pld = PLD.discrete_gaussian(sigma, shift).self_compose(k)
    m = discrete_gaussian_window(Fraction(sigma) ** 2, PAIR_GAUSSIAN_TAIL)
    top = k * (2 * shift * (shift + m) - shift * shift) / (2 * sigma * sigma)
    epss = [0.0, 0.5, 2.0, 0.3 * top, 0.5 * top, 0.7 * top, 0.9 * top]
    for eps, exact in zip(epss, exact_delta(sigma, shift, k, epss), strict=True):
        lower, upper = pld.delta_bracket(eps)
        assert lower <= exact <= upper, (eps, lower, float(exact), upper)
        assert upper == pld.delta(eps)


@pytest.mark.parametrize(("s2", "shift"), [(Fraction(9), 3), (Fraction(1), 1), (Fraction(30), 1)])
def test_curve_profile_holds_the_exact(s2: Fraction, shift: int) -> None:
    """The mechanisms' curve (a 40-sigma window) at eps just below its atoms: its profile is an
    upper bound down to the subnormal range. Before the masses' error was declared (and masses
    below 2^-1022 charged at +inf) it was below the exact delta near its top atoms, by 9.5% of
    1e-323 for (9, 3) at eps 38.83 and by 3e-3 of 1.6e-319 for (30, 1) at eps 6.95."""
    f = FiniteLossTradeoff.discrete_gaussian(s2, shift, tail=40.0)
    held = np.sort(f.losses[f.q_masses > 0])
    epss = [float(x) - d for x in np.concatenate([held[::7], held[-30:]]) for d in (1e-9, 1e-3)]
    with mpmath.workdps(50):
        pmf = exact_pmf(s2, 0)
        sigma2 = mpf(s2.numerator) / s2.denominator
        loss = {j: (2 * shift * (j + shift) - shift * shift) / (2 * sigma2) for j in pmf}
    # each term v (1 - e^{eps - l}) as v - e^eps (v e^{-l}), v e^{-l} formed once per atom: at 65
    # digits the three roundings of e^eps v e^{-l} cost at most ~3e-65 of v, i.e. 3e-56 of the term
    # where l - eps >= 1e-9 (the closest eps here), below the 50-digit expm1's own (eps - l rounds
    # within 1e-50 of |l| <= 50, up to 5e-41 of a 1e-9 gap)
    with mpmath.workdps(65):
        rows = sorted((loss[j], v, v * mpmath.exp(-loss[j])) for j, v in pmf.items())
        losses = [r[0] for r in rows]
        for eps in epss:
            big_e = mpmath.exp(eps)
            above = rows[bisect.bisect_right(losses, mpf(eps)):]  # loss > eps, compared exactly
            exact = mpmath.fsum(v - big_e * w for _, v, w in above)
            assert f.profile(eps) >= exact, (eps, f.profile(eps), float(exact))


@pytest.mark.parametrize("sigma", [0.7, 1.7])
def test_symmetric_direction_keeps_the_mass_error(sigma: float) -> None:
    """The symmetric pair built from the pair (sampling without replacement) holds its atoms at
    positive losses within its own declared mass error of the exact masses: at least them
    (pessimistic), at most them (optimistic). Before the pair's declared error was carried into
    it, pessimistic masses lay 41 and 43 (in units of 2^-52) below the exact ones, against 8."""
    d = DiscreteGaussianPair(sigma).directions()[0]
    sym = symmetric_direction(d)  # type: ignore[arg-type]
    s2 = Fraction(sigma) ** 2
    with mpmath.workdps(50):
        pmf = exact_pmf(s2, 0)
        for losses, masses, sign in ((sym.losses, sym.q, 1), (sym.opt_losses, sym.opt_q, -1)):
            pos = losses > 0
            for loss, held in zip(losses[pos].tolist(), masses[pos].tolist(), strict=True):
                y = round((loss * 2 * float(s2) + 1) / 2)
                assert sign * (mpf(held) - pmf[y - 1]) >= -sym.mass_rtol * pmf[y - 1]


def without_replacement_delta(sigma: float, shift: int, r: float, k: int,
                              epss: list[float]) -> list[mpmath.mpf]:
    """delta(eps) of k steps of the discrete Gaussian pair under sampling without replacement
    (rate r, replace-one): each step is C_r(f) = min(f_r, f_r^{-1})** [@dong2022gaussian,
    Thm 4.2], whose profile is the larger of those of (P, M) and (M, P), M = (1 - r) P + r Q.
    One step: that maximum summed over the integers. k steps: the symmetric pair of C_r(f) (the
    law of (P, M) on its positive losses, mirrored, the rest at 0; f is symmetric) enumerated."""
    s2 = Fraction(sigma) ** 2
    with mpmath.workdps(40):
        pmf = exact_pmf(s2, shift, 30)
        rr = mpf(r)
        pairs = [(pmf[y], (1 - rr) * pmf[y] + rr * pmf.get(y - shift, mpf(0))) for y in pmf]
        if k == 1:
            out = []
            for eps in epss:
                e = mpmath.exp(mpf(eps))
                out.append(max(mpmath.fsum(max(a - e * b, 0) for a, b in pairs),
                               mpmath.fsum(max(b - e * a, 0) for a, b in pairs)))
            return out
        atoms = [(mpmath.log(m / p), m) for p, m in pairs if m > p]
        atoms += [(-loss, m * mpmath.exp(-loss)) for loss, m in atoms]
        atoms.append((mpf(0), 1 - mpmath.fsum(m for _, m in atoms)))
        law = {mpf(0): mpf(1)}
        for _ in range(k):
            nxt: dict[mpmath.mpf, mpmath.mpf] = {}
            for a, pa in law.items():
                for b, pb in atoms:
                    nxt[a + b] = nxt.get(a + b, mpf(0)) + pa * pb
            law = nxt
        return [mpmath.fsum(v * -mpmath.expm1(mpf(eps) - loss) for loss, v in law.items()
                            if loss > eps) for eps in epss]


def check_without_replacement(sigma: float, shift: int, r: float, k: int) -> None:
    """The bracket of k steps holds the exact delta from eps = 0 to the far tail (the top of
    the subsampled support is log(1 - r + r e^{l_top}), l_top the pair's top loss)."""
    pld = subsample(PLD.discrete_gaussian(sigma, shift), r,
                    scheme="without_replacement").self_compose(k)
    m = discrete_gaussian_window(Fraction(sigma) ** 2, PAIR_GAUSSIAN_TAIL)
    top = k * math.log1p(r * math.expm1((2 * shift * (shift + m) - shift * shift)
                                        / (2 * sigma * sigma)))
    epss = [0.0, 0.02, 0.3, 0.2 * top, 0.5 * top, 0.8 * top, 0.95 * top]
    for eps, exact in zip(epss, without_replacement_delta(sigma, shift, r, k, epss), strict=True):
        lower, upper = pld.delta_bracket(eps)
        assert lower <= exact <= upper, (eps, lower, float(exact), upper)


@settings(max_examples=12, deadline=None)
@given(st.floats(0.4, 3.0), st.integers(1, 4), st.floats(0.01, 0.9))
@example(1.3, 2, 0.1)  # even shifts raised "could not build a symmetric dominating pair"
@example(0.8, 4, 0.5)
def test_without_replacement_brackets_the_exact(sigma: float, shift: int, r: float) -> None:
    """An even shift puts an atom at loss 0 (y = shift/2), moved up by the losses' declared error:
    at its moved copy it took twice its mass from the symmetric pair's unit mass."""
    check_without_replacement(sigma, shift, r, 1)


@pytest.mark.parametrize(("sigma", "shift", "r"), [(1.3, 2, 0.1), (0.7, 2, 0.3)])
def test_without_replacement_composed_brackets_the_exact(sigma: float, shift: int,
                                                          r: float) -> None:
    check_without_replacement(sigma, shift, r, 2)


def test_truncated_even_shift_without_replacement() -> None:
    """The truncated pair with an even sensitivity has the same atom at 0."""
    pld = subsample(PLD.from_pair(TruncatedDiscreteGaussianPair(1.3, 10, 2)), 0.1,
                    scheme="without_replacement")
    lower, upper = pld.delta_bracket(0.5)
    assert 0.0 < lower <= upper


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(1e-3, 5.0), min_size=0, max_size=4),
       st.lists(st.floats(1e-16, 1e-12), min_size=1, max_size=3),
       st.lists(st.floats(1e-3, 1.0), min_size=7, max_size=7), st.floats(0.0, 1.0))
@example([1.0], [1e-14], [0.3] * 7, 0.0)
@example([3.0], [1e-16], [1.0] * 7, 0.0)  # the charge below half an ulp of the mass at L
@example([], [4.4e-16], [0.65] * 7, 0.5)  # no atom above: charged at +inf
def test_merged_near_zero_atoms_dominate(far: list[float], near: list[float],
                                         masses: list[float], where: float) -> None:
    """``merge_near_zero``: the profile of the merged set is at least the given set's at every
    eps >= 0 (the doubles taken as exact; eps at 0, inside the near atoms' range, and below
    the atom charged)."""
    losses = np.asarray(far + near)
    q = np.asarray(masses[:losses.size])
    below = max(near)
    lm, qm, inf = merge_near_zero(losses, q, 0.0, below)
    assert (lm > below).all() and lm.size == len(far) and (inf > 0.0) == (not far)

    def profile(ls: np.ndarray, qs: np.ndarray, top: float, eps: mpmath.mpf) -> mpmath.mpf:
        return mpf(top) + mpmath.fsum(mpf(b) * -mpmath.expm1(eps - mpf(a))
                                      for a, b in zip(ls.tolist(), qs.tolist(), strict=True)
                                      if a > eps)

    with mpmath.workdps(50):
        epss = [mpf(0), mpf(where) * below]
        if far:
            epss.append(mpf(min(far)) * (1 - mpf(where) / 1000))
        for eps in epss:
            assert profile(lm, qm, inf, eps) >= profile(losses, q, 0.0, eps)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.05, 3.0), min_size=1, max_size=4), st.integers(0, 2**32 - 1),
       st.floats(0.01, 0.9))
# far from symmetric: the symmetrised curve's segment of slope -1 (loss 0) was held at 4.4e-16
# and counted twice, and the fallback raised "could not build a symmetric dominating pair"
@example([0.3, 2.0], 1, 0.1)
@example([0.2, 0.7, 1.5], 0, 0.1)
def test_far_from_symmetric_without_replacement(losses: list[float], seed: int,
                                                r: float) -> None:
    """A finite curve with all its losses positive (far from symmetric), subsampled without
    replacement: one step's upper bound holds the profile of C_r(f) at eps >= 0, the larger of
    those of (P, M) and (M, P), M = (1 - r) P + r Q [@dong2022gaussian, Thm 4.2]."""
    q = np.random.default_rng(seed).dirichlet(np.ones(len(losses)))
    p = q * np.exp(-np.asarray(losses))
    f = FiniteLossTradeoff.from_losses(losses, q, p_ninf=1.0 - math.fsum(p.tolist()))
    pld = subsample(FDP(f), r, scheme="without_replacement")
    with mpmath.workdps(40):
        rr = mpf(r)
        pm = [mpf(float(x)) for x in q * np.exp(-np.asarray(losses))] + [1 - mpf(math.fsum(p.tolist()))]
        qm = [mpf(float(x)) for x in q] + [mpf(0)]
        mm = [(1 - rr) * a + rr * b for a, b in zip(pm, qm, strict=True)]
        for eps in (0.0, 0.01, 0.1, 0.5, 1.0):
            e = mpmath.exp(mpf(eps))
            exact = max(mpmath.fsum(max(a - e * b, 0) for a, b in zip(mm, pm, strict=True)),
                        mpmath.fsum(max(b - e * a, 0) for a, b in zip(mm, pm, strict=True)))
            lower, upper = pld.delta_bracket(eps)
            assert lower <= upper and exact <= upper, (eps, lower, float(exact), upper)
