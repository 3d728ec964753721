"""The exact privacy profile of the k-fold Laplace pair, enclosed in floating point without a grid.

One Laplace loss (the pair (Lap(0, b), Lap(Delta, b)), eps0 = Delta / b) under P is an atom at
+eps0 of mass 1/2, an atom at -eps0 of mass e^-eps0 / 2, and on (-eps0, eps0) a density
proportional to e^{l/2} of mass gamma = (1 - e^-eps0) / 2 (``LaplaceDirection``). Written
l = eps0 (2 U - 1), U in (0, 1) has density e^{eps0 U} / Z, Z = (e^eps0 - 1) / eps0. The k-fold
loss is, over c continuous terms (Binomial(k, gamma)) and n of the k - c atoms at +eps0
(Binomial(k - c, 1 / (1 + e^-eps0))), L = eps0 (2 (n + Y) - k) with Y the sum of the c U's,
whose density is e^{eps0 y} M_c(y) / Z^c, M_c the Irwin-Hall density (the c-fold convolution of
the indicator of (0, 1)). So

    delta(eps) = E[(1 - e^{eps - L})_+] = sum_{c, n} w_{c,n} G_c(tau - n),
    G_c(y0) = int_{y > y0} (1 - e^{-2 eps0 (y - y0)}) e^{eps0 y} M_c(y) dy / Z^c,

with tau = (eps / eps0 + k) / 2. G_c(y0) is 0 for y0 >= c and 1 - e^{eps0 (2 y0 - c)} for
y0 <= 0 (E[e^{-eps0 (2 U - 1)}] = 1). In between, every term is a sum of non-negative numbers
(no alternating sums, hence no cancellation): on its piece [j, j + 1], M_c is a polynomial of
degree c - 1 whose Bernstein coefficients are non-negative (they follow from M_{c-1}'s by
M_c(y) = int_{y-1}^y M_{c-1}, partial sums of non-negative coefficients); a whole piece above y0
integrates against e^{+-eps0 u} by the series int_0^1 e^{a v} b_{i,n}(v) dv
= sum_m a^m / m! prod_{l <= m} (i + l) / (n + 1 + l) / (n + 1) (positive terms for a > 0; for
a = -eps0 the symmetry b_{i,n}(1 - v) = b_{n-i,n}(v) gives e^-eps0 times the a = eps0 value),
and the piece holding y0 is cut at its fractional part u0 by de Casteljau's algorithm (convex
combinations) and integrated against 2 sinh(a v), a = eps0 (1 - u0), by the odd terms of the same
series. All pieces of one c share u0 = frac(tau), so the cut is made once per c and evaluation.

A pair's eps0 is Delta / b rounded up, so upper ends are read at it and lower ends at the double
below it (the profile grows with eps0: the Laplace pairs are ordered by eps0).

Enclosure (``LaplaceProfile.delta_bounds``): tau is computed in rationals and rounded down, which
can only raise delta (G_c is non-increasing in y0); the lower bound at tau rounded up is below the
value at tau rounded down by at most 2 eps0 (tau_up - tau_down) times the mass above each y0
(|dG_c / dy0| <= 2 eps0 e^{eps0 (2 y0 - c)}, and <= 2 eps0 P(Y > y0)). Every computed term is
within a relative error rho of its exact value's non-negative parts (products, sums and series of
non-negative numbers, each a counted number of roundings, and LIBM_REL per elementary function;
each bound is stated where it is computed), and rho times the sum of the computed non-negative
parts, charged four times over, is added to the upper end and taken from the lower one. The terms
with more than ``c_max`` continuous parts are dropped: they add at most their mass
P(Binomial(k, gamma) > c_max) to the upper end. Errors are bounded in the absolute sense, relative
to the mass near the threshold: at the default search precision the bracket of epsilon is about
1e-11 wide on the 100-fold Laplace.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from accountant.core.rounding import LIBM_REL, exp_rn, expm1_rn
from accountant.core.search import EPSILON_RTOL
from accountant.core.types import UNIT_ROUNDOFF, FloatArray
from accountant.core.validation import check_count, check_real
from accountant.pld.models.base import Pair
from accountant.pld.models.laplace import LaplacePair

__all__ = ["LaplaceProfile", "laplace_profile"]

#: Most continuous terms summed (the cost grows like c_max^4 per evaluation); a composition that
#: needs more for a dropped mass of DROPPED_TARGET is left to the grid (``LaplaceProfile.fits``).
MAX_TERMS = 48
#: Largest eps0 and count served: the exponentials e^{2 eps0 c} and the binomial weights stay in
#: range (no overflow; the weights' underflow is charged).
MAX_EPS0 = 5.0
MIN_EPS0 = 1e-300
MAX_COUNT = 1000
#: The dropped mass the number of continuous terms is chosen for: at most this, and at most
#: DROPPED_RATIO times the delta asked for (``c_max``).
DROPPED_TARGET = 1e-30
DROPPED_RATIO = 1e-12
#: Series terms are summed until the next is below this fraction of the first.
SERIES_CUT = 1e-20
#: Smallest normal double: a weight computed below it may have lost its relative accuracy
#: (gradual underflow); each such weight is charged this much absolutely.
TINY = 2.0 ** -1022


def _binomial_pmf(m: int, p_big: float, ratio: float) -> tuple[FloatArray, float]:
    """The Binomial(m, .) pmf by the count of the unlikelier outcome, x = 0..m: p_big^m
    prod_{l <= x} (m - l + 1) / l * ratio, ratio = p_small / p_big <= 1; p_big >= 1/2, so
    p_big^m stays normal for m <= MAX_COUNT. With p_big and ratio within 3 u and 4 u of their
    values, each entry is within (10 m + 8) u + LIBM_REL (the power) relatively: the returned
    bound (3 u per power of p_big, 4 u per factor's ratio and 3 roundings per factor)."""
    steps = np.arange(1, m + 1, dtype=np.float64)
    factors = (m - steps + 1.0) / steps * ratio
    pmf = np.empty(m + 1)
    pmf[0] = p_big ** m
    pmf[1:] = pmf[0] * np.cumprod(factors)
    return pmf, (10 * m + 8) * UNIT_ROUNDOFF + LIBM_REL


def _series(a: float, i: FloatArray, n: FloatArray,
            a_rel: float = 0.0) -> tuple[FloatArray, FloatArray, float]:
    """(int_0^1 e^{a v} b_{i,n}(v) dv, int_0^1 2 sinh(a v) b_{i,n}(v) dv), a > 0, entrywise over
    arrays of i and n (0 <= i <= n), by the series of the module docstring (all terms, the odd
    ones twice), and a relative error bound of each: positive terms, each a few roundings from
    the last (5 per term in all), and the truncated tail, below twice the last odd term summed
    (the ratio of terms is below a / (m + 1) <= 1/2 there). An argument within ``a_rel`` of a
    (relatively) moves the m-th term by m a_rel: at most the number of terms times a_rel."""
    term = np.ones(i.shape)
    full = term.copy()
    odd = np.zeros(i.shape)
    m = 0
    while True:
        term = term * (a * (i + m + 1) / ((m + 1) * (n + m + 2)))
        m += 1
        full += term
        if m % 2 == 0:
            continue
        odd += 2.0 * term
        if m + 1 > 2 * a and float(np.max(term / np.maximum(odd, TINY))) <= SERIES_CUT:
            break
    return full / (n + 1), odd / (n + 1), (5 * m + 8) * UNIT_ROUNDOFF + m * a_rel + 4.0 * SERIES_CUT


@dataclass(frozen=True)
class _Tables:
    """What every evaluation with up to ``c_top`` continuous terms reads, for c = 1..c_top in
    rows c - 1: M_c's Bernstein coefficients on its pieces (c_top x c_top x c_top, degree c - 1,
    right-aligned: coefficient i of degree n at column c_top - 1 - n + i; zero elsewhere), the
    whole pieces' integrals against e^{+eps0 y} and e^{-eps0 y} over Z^c summed from each piece
    up (``up_suffix`` is P(Y >= j)), 1 / Z^c, the series' arguments i and n (right-aligned), the
    weights w_{c,n} (rows c = 0..c_top) and the relative error bounds of each row."""

    flat: FloatArray
    rows: tuple[NDArray[np.int64], NDArray[np.int64]]
    starts: list[int]
    up_suffix: FloatArray
    down_suffix: FloatArray
    inv_zc: FloatArray
    deg_i: FloatArray
    deg_n: FloatArray
    real: NDArray[np.bool_]
    weights: FloatArray
    rho_terms: FloatArray
    rho_weights: FloatArray
    dropped: float


@dataclass(frozen=True, eq=False)
class LaplaceProfile:
    """delta(eps) of the k-fold Laplace pair with eps0 = sensitivity / scale, enclosed from both
    sides (``delta_bounds``; module docstring); ``epsilon_bracket`` inverts it."""

    eps0: float
    k: int

    def __post_init__(self) -> None:
        check_real("eps0", self.eps0, low=0.0, low_open=True, high=MAX_EPS0)
        check_count("k", self.k)
        if self.k > MAX_COUNT:
            raise ValueError(f"k must be at most {MAX_COUNT}, got {self.k}")

    @staticmethod
    def fits(eps0: float, k: int) -> bool:
        """Whether eps0 and k are in the profile's range: eps0 in [MIN_EPS0, MAX_EPS0], k in [1,
        MAX_COUNT] (``serves`` then says whether a query is served)."""
        return MIN_EPS0 <= eps0 <= MAX_EPS0 and 1 <= k <= MAX_COUNT

    def serves(self, delta: float | None = None) -> bool:
        """Whether MAX_TERMS continuous terms leave a dropped mass of at most DROPPED_RATIO delta
        (an epsilon at ``delta``; delta 0 is exact) or DROPPED_TARGET (a delta: ``None``)."""
        if delta is not None and delta <= 0.0:
            return True
        dropped = DROPPED_TARGET if delta is None else DROPPED_RATIO * delta
        return self.c_max(dropped)[1] <= dropped

    @cached_property
    def _below(self) -> LaplaceProfile:
        """The profile at the double below eps0, which lower ends are read at: a pair's eps0 is
        Delta / b rounded up (``div_up``), so the mechanism's lies in (that double, eps0], and the
        profile grows with eps0 (the Laplace pairs are ordered by eps0)."""
        return LaplaceProfile(math.nextafter(self.eps0, 0.0), self.k)

    # ----- the weights -------------------------------------------------------------------------
    @cached_property
    def _constants(self) -> tuple[float, float, float, float]:
        """(gamma, 1 - gamma, e^-eps0, Z), each within 2 u of its value (mpmath, rounded to
        nearest, then one operation)."""
        e = self.eps0
        e_minus = exp_rn(-e)
        return -0.5 * expm1_rn(-e), 0.5 + 0.5 * e_minus, e_minus, expm1_rn(e) / e

    @cached_property
    def _count_pmf(self) -> tuple[FloatArray, float]:
        """P(c continuous terms), c = 0..k, and its relative error bound (gamma < 1/2)."""
        gamma, rest, _, _ = self._constants
        return _binomial_pmf(self.k, rest, gamma / rest)

    @cached_property
    def _dropped(self) -> FloatArray:
        """Bounds on P(count > c), c = 0..k: the pmf's entries within their rho, the sums within
        (k + 1) u, and a subnormal entry within TINY."""
        pmf, rho = self._count_pmf
        tails = np.append(np.cumsum(pmf[::-1])[::-1][1:], 0.0)  # P(count > c), computed
        bound: FloatArray = tails * (1.0 + rho + (self.k + 2) * UNIT_ROUNDOFF) + (self.k + 1) * TINY
        bound[-1] = 0.0
        return bound

    def c_max(self, dropped: float) -> tuple[int, float]:
        """(c, a bound on P(more than c continuous terms)): the fewest terms whose dropped mass is
        at most ``dropped``, or MAX_TERMS."""
        bound = self._dropped
        c = 0
        while c < min(self.k, MAX_TERMS) and bound[c] > dropped:
            c += 1
        return c, float(bound[c])

    # ----- the tables --------------------------------------------------------------------------
    def _tables(self, c_top: int) -> _Tables:
        """The tables for up to ``c_top`` continuous terms (cached)."""
        cache: dict[int, _Tables] = self.__dict__.setdefault("_table_cache", {})
        if c_top not in cache:
            cache[c_top] = self._build(c_top)
        return cache[c_top]

    def _build(self, top: int) -> _Tables:
        e, k, u = self.eps0, self.k, UNIT_ROUNDOFF
        _, rest, e_minus, z = self._constants
        count, rho_count = self._count_pmf
        weights = np.zeros((top + 1, k + 1))
        rho_weights = np.zeros(top + 1)
        for c in range(top + 1):
            # n of the k - c atoms at +eps0: their complement counted (P(-eps0) / P(+eps0) =
            # e^-eps0), reversed
            pmf, rho_pm = _binomial_pmf(k - c, 0.5 / rest, e_minus)
            weights[c, :k - c + 1] = count[c] * pmf[::-1]
            rho_weights[c] = rho_count + rho_pm + 4 * u
        size = max(top, 1)
        beta = np.zeros((size, size, size))
        deg_i = np.zeros((size, size))
        deg_n = np.zeros((size, size))
        cur = np.ones((1, 1))  # M_1 = 1 on [0, 1)
        for c in range(1, top + 1):
            if c > 1:
                d = c - 2  # M_c(j + u) = int_u^1 piece j-1 of M_{c-1} + int_0^u piece j
                lower = np.cumsum(cur, axis=1) / (d + 1)
                upper = np.cumsum(cur[:, ::-1], axis=1)[:, ::-1] / (d + 1)
                nxt = np.zeros((c, c))
                nxt[:c - 1, 1:] += lower
                nxt[1:, :c - 1] += upper
                cur = nxt
            beta[c - 1, :c, size - c:] = cur
            deg_i[c - 1, size - c:] = np.arange(c)
            deg_n[c - 1, :] = c - 1
        real = np.arange(size)[None, :] >= size - 1 - deg_n[:, :1]
        e_up, _, rho_up = _series(e, deg_i, deg_n)
        e_up = np.where(real, e_up, 0.0)
        e_down = np.zeros_like(e_up)
        for c in range(1, top + 1):  # int e^{-eps0 v} b_i = e^-eps0 int e^{eps0 v} b_{n-i}
            e_down[c - 1, size - c:] = e_minus * e_up[c - 1, size - c:][::-1]
        cs = np.arange(1, size + 1, dtype=np.float64)
        inv_zc = 1.0 / z ** cs
        j = np.arange(size, dtype=np.float64)
        up = np.exp(e * j)[None, :] * np.einsum("cji,ci->cj", beta, e_up) * inv_zc[:, None]
        down = np.exp(-e * j)[None, :] * np.einsum("cji,ci->cj", beta, e_down) * inv_zc[:, None]
        zeros = np.zeros((size, 1))
        up_suffix = np.hstack([np.cumsum(up[:, ::-1], axis=1)[:, ::-1], zeros])
        down_suffix = np.hstack([np.cumsum(down[:, ::-1], axis=1)[:, ::-1], zeros])
        # M_c's coefficients, the series, e^{+-eps0 j} (argument within u eps0 c), Z^c (c + 1
        # roundings of a value within 2 u, and the power's LIBM_REL), the dot products over i
        # and the sums over the pieces
        rho_terms = np.array([_beta_rho(c) for c in range(1, size + 1)]) + rho_up + 2 * LIBM_REL + (
            (2 * e + 8) * cs + 16) * u
        # the pieces (c, j), j < c, in rows by c: those of degree >= r from starts[r] on
        rc = np.concatenate([np.full(c, c) for c in range(1, top + 1)]) if top else np.zeros(0, int)
        rj = np.concatenate([np.arange(c) for c in range(1, top + 1)]) if top else np.zeros(0, int)
        flat = beta[rc - 1, rj] if top else np.zeros((0, size))
        starts = [int(np.searchsorted(rc, r + 1)) for r in range(size)]
        return _Tables(flat, (rc, rj), starts, up_suffix, down_suffix, inv_zc, deg_i, deg_n, real,
                       weights, rho_terms, rho_weights, float(self._dropped[top]))

    # ----- delta ---------------------------------------------------------------------------------
    def _tau(self, eps: float) -> tuple[float, float]:
        """(tau rounded down, tau rounded up), tau = (eps / eps0 + k) / 2, in rationals."""
        exact = (Fraction(eps) / Fraction(self.eps0) + self.k) / 2
        f = float(exact)
        lo = f if Fraction(f) <= exact else math.nextafter(f, -math.inf)
        hi = f if Fraction(f) >= exact else math.nextafter(f, math.inf)
        return lo, hi

    def delta_bounds(self, eps: float, dropped: float = DROPPED_TARGET) -> tuple[float, float]:
        """(lower, upper) bounds on the exact delta(eps), in [0, 1]; the continuous terms are cut
        where their mass is at most ``dropped`` (``c_max``), added to the upper end."""
        c = self.c_max(dropped)[0]
        below = self._below
        return below._bounds(eps, below._tables(c))[0], self._bounds(eps, self._tables(c))[1]

    def _bounds(self, eps: float, tab: _Tables) -> tuple[float, float, float]:
        """(lower, upper, slope): the bounds on delta(eps) and an estimate of -delta'(eps)."""
        e, k, u = self.eps0, self.k, UNIT_ROUNDOFF
        if not eps < Fraction(e) * k:
            return 0.0, 0.0, 0.0  # L <= k eps0
        if eps <= -Fraction(e) * k:  # L >= eps: delta = 1 - e^eps E_P[e^-L] = 1 - e^eps
            value = -math.expm1(eps)
            return value * (1.0 - 2.0 * LIBM_REL), min(1.0, value * (1.0 + 2.0 * LIBM_REL)), (
                math.exp(eps))
        tau, tau_hi = self._tau(eps)
        top = tab.weights.shape[0] - 1
        f0 = math.floor(tau)
        u0 = tau - f0  # exact
        v0 = 1.0 - u0
        n = np.arange(k + 1)
        j0 = f0 - n  # y0 = tau - n lies in [j0, j0 + 1)
        y0 = tau - n.astype(np.float64)  # exact
        # the sums over c and n: at most (c_max + 1)(k + 1) + 8 roundings each (any order of
        # summation) of sums whose terms are bounded by their non-negative parts
        sums = ((top + 1) * (k + 1) + 8) * u
        # y0 < 0: G = 1 - e^{eps0 (2 y0 - c)}, its argument within 3 u of its size
        below = j0 < 0
        cs = np.arange(top + 1, dtype=np.float64)
        arg = e * (2.0 * y0[below][None, :] - cs[:, None])
        g = -np.expm1(arg)
        wb = tab.weights[:, below]
        value = float(np.sum(wb * g))
        parts = float(np.sum(wb * (g * (tab.rho_weights[:, None] + LIBM_REL + sums)
                                   + 4 * u * np.abs(arg))))
        # |dG / dy0| <= 2 eps0 e^{eps0 (2 y0 - c)} (module docstring)
        moved = float(np.sum(wb * np.exp(arg)))
        # -d delta / d eps = E[e^{eps - L}; L > eps] = sum w e^{-2 eps0 (y - y0)} over y > y0:
        # an estimate that guides the search, never a bound
        slope = moved
        band = (j0 >= 0) & (j0 < top)
        if top >= 1 and band.any():
            size = tab.flat.shape[1]
            b = tab.flat.copy()
            for r in range(1, size):  # de Casteljau, right parts of every piece of degree >= r
                st = tab.starts[r]
                b[st:, :size - r] = v0 * b[st:, :size - r] + u0 * b[st:, 1:size - r + 1]
            a = e * v0
            full, s, rho_s = _series(a, tab.deg_i, tab.deg_n, 2.0 * u)
            s = np.where(tab.real, s, 0.0)
            partial = np.zeros((size, size))
            partial_neg = np.zeros((size, size))  # its e^{-2 eps0 (y - y0)} part (the slope)
            rc, rj = tab.rows
            factor = v0 * np.exp(e * (rj + u0)) * tab.inv_zc[rc - 1]
            partial[rc - 1, rj] = factor * np.sum(b * s[rc - 1], axis=1)
            partial_neg[rc - 1, rj] = factor * np.sum(
                b * np.where(tab.real, full - s, 0.0)[rc - 1], axis=1)
            jb = j0[band]
            growth = np.exp(2.0 * e * y0[band])
            pos = partial[:, jb] + tab.up_suffix[:, jb + 1]
            neg = growth[None, :] * tab.down_suffix[:, jb + 1]
            wi = tab.weights[1:, band]
            value += float(np.sum(wi * (pos - neg)))
            # the partial piece: de Casteljau (3 roundings a level, 1 - u0 within u), the odd
            # series at an argument within 2 u (``_series``), its dot product, the factor's
            # exponential (argument within 2 u of eps0 c) and 1 / Z^c; e^{2 eps0 y0} (argument
            # within u of 2 eps0 c)
            c1 = cs[1:]
            rho_row = (tab.rho_weights[1:] + tab.rho_terms + rho_s + (4 * c1 + 8) * u
                       + 3 * LIBM_REL + (6 * e * c1 + 48) * u + sums)
            parts += float(np.sum(rho_row[:, None] * wi * (pos + neg)))
            moved += float(np.sum(wi * tab.up_suffix[:, jb]))  # P(Y > y0) <= P(Y >= j0)
            slope += float(np.sum(wi * (neg + partial_neg[:, jb])))
        slack = 4.0 * parts * (1.0 + 1e-6) + (k + 2) * (top + 2) * TINY
        shift = 2.0 * e * (tau_hi - tau) * 1.01 * moved
        upper = math.nextafter((value + slack + tab.dropped) * (1.0 + 4 * u), math.inf)
        lower = (value - slack - shift) * (1.0 - 4 * u)
        return min(1.0, max(0.0, lower)), min(1.0, max(0.0, upper)), slope

    # ----- epsilon -------------------------------------------------------------------------------
    def epsilon(self, delta: float) -> float:
        """An upper bound on the exact epsilon(delta): an eps whose upper delta bound is at most
        delta, within EPSILON_RTOL of the smallest such eps."""
        return self._solve(delta, False)[1]

    def epsilon_bracket(self, delta: float) -> tuple[float, float]:
        """(lower, upper) bounds on the exact epsilon(delta): the upper end as ``epsilon``, the
        lower end an eps whose lower delta bound exceeds delta (0 when none does)."""
        return self._solve(delta, True)

    def _solve(self, delta: float, lower: bool) -> tuple[float, float]:
        """Newton's method on log delta from the Gaussian guess (``_guess``), kept inside the
        bracket of the points seen (bisection when a step leaves it), on the upper bound; then
        the ends are checked: the upper end is a point whose upper bound is at most delta, the
        lower end one whose lower bound exceeds delta (each moved outward until it is)."""
        top = _mul_up(self.eps0, self.k)
        if delta <= 0.0:  # the atom at k eps0 has mass 2^-k: delta(eps) > 0 below it
            return _mul_down(self._below.eps0, self.k), top
        tab = self._tables(self.c_max(max(DROPPED_RATIO * delta, TINY))[0])
        lo, hi = 0.0, top  # upper(lo) > delta >= upper(hi), once lo is seen
        x = self._guess(delta, top)
        ends = self._bounds(0.0, tab)
        if ends[1] <= delta:
            return 0.0, 0.0
        for _ in range(200):
            ends = self._bounds(x, tab)
            _, d_up, slope = ends
            if d_up > delta:
                lo = x
            else:
                hi = x
            tol = EPSILON_RTOL * max(1.0, x)
            nxt = 0.5 * (lo + hi)
            if d_up > 0.0 and slope > 0.0:
                newton = x + (math.log(d_up) - math.log(delta)) * d_up / slope
                if lo <= newton <= hi:
                    nxt = newton
            if abs(nxt - x) <= 0.25 * tol or hi - lo <= tol:
                break
            x = nxt
        # the root of the upper profile is within about 0.25 tol of nxt (or hi - lo <= tol)
        root = min(max(nxt, lo), hi)
        upper, probe, step = hi, root + 0.5 * tol, tol
        while probe < hi:
            if self._bounds(probe, tab)[1] <= delta:
                upper = probe
                break
            probe += step
            step *= 4.0
        if not lower:
            return 0.0, upper
        # the lower end, on the profile an ulp of eps0 below (``_below``): its lower bound's root
        # lies about (delta - that bound at the root) / slope below the root
        below = self._below
        btab = below._tables(len(tab.rho_weights) - 1)
        d_lo, _, slope = below._bounds(root, btab)
        if d_lo > delta:
            return root, upper
        gap = (delta - d_lo) / slope if slope > 0.0 else tol
        probe, step = root - gap - 0.5 * tol, gap + tol
        while probe > 0.0 and below._bounds(probe, btab)[0] <= delta:
            probe -= step
            step *= 4.0
        return max(0.0, probe), upper

    def _guess(self, delta: float, top: float) -> float:
        """Where the profile of a Gaussian loss with the composition's mean and variance crosses
        delta (bisection): the search's starting point, never a bound."""
        e = self.eps0
        gamma, _, e_minus, _ = self._constants
        u = np.linspace(0.0, 1.0, 201)
        dens = np.exp(e * u)
        dens /= dens.sum()
        cont = e * (2.0 * u - 1.0)
        mean = 0.5 * e - 0.5 * e_minus * e + gamma * float(np.dot(dens, cont))
        second = 0.5 * e * e * (1.0 + e_minus) + gamma * float(np.dot(dens, cont * cont))
        mu, s = self.k * mean, math.sqrt(max(self.k * (second - mean * mean), 1e-300))

        def gauss(x: float) -> float:
            a = 0.5 * math.erfc((x - mu) / (s * math.sqrt(2.0)))
            tail = 0.5 * math.erfc((x - mu + s * s) / (s * math.sqrt(2.0)))
            b = math.exp(min(700.0, x - mu + s * s / 2) + math.log(tail)) if tail > 0.0 else 0.0
            return a - b

        lo, hi = 0.0, top
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if gauss(mid) > delta else (lo, mid)
        return 0.5 * (lo + hi)


def _beta_rho(c: int) -> float:
    """Relative error bound of M_c's Bernstein coefficients: each level adds a cumulative sum of
    at most c non-negative terms, a division and an addition (c + 2 roundings)."""
    return sum(lv + 2 for lv in range(2, c + 1)) * UNIT_ROUNDOFF * 1.01


def _mul_up(a: float, k: int) -> float:
    exact = Fraction(a) * k
    f = float(exact)
    return f if Fraction(f) >= exact else math.nextafter(f, math.inf)


def _mul_down(a: float, k: int) -> float:
    exact = Fraction(a) * k
    f = float(exact)
    return f if Fraction(f) <= exact else math.nextafter(f, -math.inf)


def laplace_profile(factors: tuple[tuple[Pair, int], ...]) -> LaplaceProfile | None:
    """The profile of a composition (a PLD's factors) that is one Laplace pair composed k times,
    when eps0 and k are in range (``LaplaceProfile.fits``); None otherwise."""
    pair, k = factors[0]
    if len(factors) != 1 or not isinstance(pair, LaplacePair):
        return None
    return LaplaceProfile(pair.eps, k) if LaplaceProfile.fits(pair.eps, k) else None
