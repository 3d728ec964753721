"""Exact binomial confidence bounds and the lower bounds on privacy parameters they imply.

Clopper & Pearson [@clopper1934use]: for k successes in n trials, the one-sided upper bound at level gamma
is the (1 - gamma) quantile of Beta(k + 1, n - k) (1 when k = n), the lower bound the gamma quantile
of Beta(k, n - k + 1) (0 when k = 0). Both hold with probability >= 1 - gamma for every p.

Means of bounded variables: the empirical Bernstein bound of Maurer & Pontil
[@maurer2009empirical, Thm 4] (``bernstein_bounds``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special, stats

from accountant.core.types import FloatArray


def cp_upper(k: ArrayLike, n: ArrayLike, gamma: float) -> FloatArray:
    """One-sided Clopper-Pearson upper bound on p at error level ``gamma`` in (0, 1) (k may be
    fractional, for a prediction): the (1 - gamma) quantile of Beta(k + 1, n - k), 1 when k >= n.
    The quantile is ``scipy.special.betainccinv``, the function ``scipy.stats.beta.isf`` calls,
    without its per-call argument handling."""
    g = _level(gamma)
    if isinstance(k, _SCALARS) and isinstance(n, _SCALARS):  # one bound: no array operations
        ks, ns = float(k), float(n)
        if not (ks < ns and ks + 1.0 > 0.0):
            return np.asarray(1.0)
        qs = float(special.betainccinv(ks + 1.0, ns - ks, g))
        return np.asarray(1.0 if qs != qs else min(max(qs, 0.0), 1.0))
    kk = np.asarray(k, dtype=np.float64)
    nn = np.asarray(n, dtype=np.float64)
    a, b = kk + 1.0, nn - kk
    q = special.betainccinv(a, b, g)
    # outside the parameters' range (k >= n, or a quantile that fails numerically at a tiny
    # gamma), 1 is the always-valid upper bound
    out = np.where((kk < nn) & (a > 0.0) & (b > 0.0) & ~np.isnan(q), q, 1.0)
    return np.asarray(np.clip(out, 0.0, 1.0), dtype=np.float64)


def cp_lower(k: ArrayLike, n: ArrayLike, gamma: float) -> FloatArray:
    """One-sided Clopper-Pearson lower bound on p at error level ``gamma`` in (0, 1): the gamma
    quantile of Beta(k, n - k + 1), 0 when k = 0 (the quantile function ``scipy.stats.beta.ppf``
    calls, without its per-call argument handling)."""
    g = _level(gamma)
    if isinstance(k, _SCALARS) and isinstance(n, _SCALARS):
        ks, ns = float(k), float(n)
        if not (ks > 0.0 and ns - ks + 1.0 > 0.0):
            return np.asarray(0.0)
        qs = float(_BETA_PPF(g, ks, ns - ks + 1.0))
        return np.asarray(0.0 if qs != qs else min(max(qs, 0.0), 1.0))
    kk = np.asarray(k, dtype=np.float64)
    nn = np.asarray(n, dtype=np.float64)
    a, b = kk, nn - kk + 1.0
    q = _BETA_PPF(g, a, b)
    out = np.where((kk > 0.0) & (b > 0.0) & ~np.isnan(q), q, 0.0)
    return np.asarray(np.clip(out, 0.0, 1.0), dtype=np.float64)


#: The gamma quantile of Beta(a, b) as (gamma, a, b) -> x: what ``scipy.stats.beta.ppf`` evaluates
#: inside (Boost's quantile; ``scipy.special.betaincinv`` differs from it at extreme levels).
_BETA_PPF: Callable[..., Any] = stats.beta._ppf

#: Python and numpy scalars: a bound of one count is computed without array operations.
_SCALARS = (int, float, np.integer, np.floating)


def _level(gamma: float) -> float:
    """``gamma`` as a float in (0, 1), else ValueError."""
    g = float(gamma)
    if not 0.0 < g < 1.0:
        raise ValueError(f"gamma must lie in (0, 1), got {gamma!r}")
    return g


#: Shares of the way from k / n to Wilson's bound at which ``cp_upper_below`` and ``cp_lower_above``
#: try their value (the first certified is kept).
TOWARDS_WILSON = (0.9, 0.6)
#: Relative and absolute slack on z^2 in ``_kl_certified`` against rounding in 2 n H (whose
#: absolute error is below 1e-8 for n <= 10^6).
KL_SLACK = (1e-9, 1e-6)


def _kl_certified(k: FloatArray, n: int, x: FloatArray, z: float) -> NDArray[np.bool_]:
    """Whether 2 n H(k / n, x) <= z^2 (with ``KL_SLACK``), H(a, x) = a log(a / x) + (1 - a)
    log((1 - a) / (1 - x)) the relative entropy of Bernoulli laws; False where x is outside (0, 1).
    By Zubkov and Serov [@zubkov2013complete], for integer 0 <= k < n and 0 < x < 1,
    Phi(sign(k / n - x) sqrt(2 n H(k / n, x))) <= P(Bin(n, x) <= k)
    <= Phi(sign((k + 1) / n - x) sqrt(2 n H((k + 1) / n, x))), so with z = Phi^-1(1 - gamma) the
    check bounds a binomial tail at x by gamma (``cp_upper_below``, ``cp_lower_above``)."""
    a = k / n
    inside = (x > 0.0) & (x < 1.0)
    xs = np.where(inside, x, 0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        h = special.rel_entr(a, xs) + special.rel_entr(1.0 - a, 1.0 - xs)
    rel, absolute = KL_SLACK
    return np.asarray(inside & (2.0 * n * h * (1.0 + rel) + absolute <= z * z), dtype=bool)


def cp_upper_below(k: ArrayLike, n: int, gamma: float,
                   towards: tuple[float, ...] = TOWARDS_WILSON) -> FloatArray:
    """A value at most ``cp_upper(k, n, gamma)`` without an incomplete beta function: the first of
    k / n + t (w - k / n), t in ``towards`` (w Wilson's upper bound), certified below the
    Clopper-Pearson bound U, else floor(k) / n (the same bound at x = floor(k) / n, where H = 0:
    the binomial median), 0 where k >= n (U = 1) or gamma >= 1/2.
    U is where P(Bin(n, x) <= k) falls to gamma, decreasing in x and increasing in k (for real
    k, I_{1-x}(n - k, k + 1)), so x <= U when P(Bin(n, x) <= floor(k)) >= gamma, which for
    x >= floor(k) / n the lower bound of ``_kl_certified`` gives when 2 n H(floor(k) / n, x) <= z^2,
    z = Phi^-1(1 - gamma) > 0 (gamma < 1/2)."""
    kk = np.asarray(k, dtype=np.float64).ravel()  # (shape restored at the end)
    p = kk / n
    inner = kk < n
    z = -float(special.ndtri(gamma))
    if not z > 0.0:
        return np.zeros(np.shape(k))
    w = _wilson_side(kk, n, gamma, upper=True)
    k0 = np.floor(kk)
    out = np.where(inner, k0 / n, 0.0)
    todo = np.flatnonzero(inner)  # the regions not yet certified, each tried at the next share
    for t in towards:
        if not todo.size:
            break
        pt, k0t = p[todo], k0[todo]
        x = pt + t * (w[todo] - pt)
        ok = (x >= k0t / n) & _kl_certified(k0t, n, x, z)
        out[todo[ok]] = x[ok]
        todo = todo[~ok]
    return np.asarray(out, dtype=np.float64).reshape(np.shape(k))


def cp_lower_above(k: ArrayLike, n: int, gamma: float,
                   towards: tuple[float, ...] = TOWARDS_WILSON) -> FloatArray:
    """A value at least ``cp_lower(k, n, gamma)`` without an incomplete beta function: the first of
    k / n - t (k / n - w), t in ``towards`` (w Wilson's lower bound), certified above the
    Clopper-Pearson bound L, else ceil(k) / n where k <= n (H = 0 there), else 1 (also where
    gamma >= 1/2); 0 where k <= 0 (L = 0). L is where
    P(Bin(n, x) >= k) = 1 - P(Bin(n, x) <= k - 1) rises to gamma, increasing in x and decreasing
    in k, so x >= L when P(Bin(n, x) <= ceil(k) - 1) <= 1 - gamma, which for x <= ceil(k) / n the
    upper bound of ``_kl_certified`` gives when 2 n H(ceil(k) / n, x) <= z^2."""
    kk = np.asarray(k, dtype=np.float64).ravel()  # (shape restored at the end)
    p = kk / n
    inner = (kk > 0) & (kk <= n)
    z = -float(special.ndtri(gamma))
    if not z > 0.0:
        return np.asarray(np.where(kk > 0, 1.0, 0.0), dtype=np.float64).reshape(np.shape(k))
    w = _wilson_side(kk, n, gamma, upper=False)
    k1 = np.ceil(kk)
    out = np.where(kk > 0, np.where(inner, k1 / n, 1.0), 0.0)
    todo = np.flatnonzero(inner)
    for t in towards:
        if not todo.size:
            break
        pt, k1t = p[todo], k1[todo]
        x = pt - t * (pt - w[todo])
        ok = (x <= k1t / n) & _kl_certified(k1t, n, x, z)
        out[todo[ok]] = x[ok]
        todo = todo[~ok]
    return np.asarray(out, dtype=np.float64).reshape(np.shape(k))


def wilson_bounds(k: ArrayLike, n: ArrayLike, gamma: float) -> tuple[FloatArray, FloatArray]:
    """Wilson's score interval [@wilson1927probable]: (lower, upper) on p from k successes in n at
    one-sided level ``gamma`` each, by the normal approximation. Not a certified bound (its coverage
    is approximate): the adaptive search ranks candidate pairs by it, where no bound is claimed and
    the exact quantiles of Clopper-Pearson would cost most of the time."""
    kk = np.asarray(k, dtype=np.float64)
    return _wilson_side(kk, n, gamma, upper=False), _wilson_side(kk, n, gamma, upper=True)


def _wilson_side(kk: FloatArray, n: ArrayLike, gamma: float, upper: bool) -> FloatArray:
    """One end of ``wilson_bounds`` (k as a float array)."""
    nn = np.broadcast_to(np.asarray(n, dtype=np.float64), kk.shape)
    z = float(special.ndtri(1.0 - gamma))
    p = kk / nn
    centre = p + z * z / (2 * nn)
    half = z * np.sqrt(p * (1.0 - p) / nn + z * z / (4 * nn * nn))
    scale = 1.0 + z * z / nn
    # min/max: p inside despite rounding
    end = np.maximum((centre + half) / scale, p) if upper else np.minimum((centre - half) / scale, p)
    return np.asarray(np.clip(end, 0.0, 1.0), dtype=np.float64)


#: Relative inflation of the empirical Bernstein half-width, and relative deflation (inflation) of
#: the lower (upper) bound, for the float evaluation of sums of at most a few hundred terms
#: (relative error below 1e-13).
BERNSTEIN_SLACK = 1e-10


def bernstein_bounds(values: ArrayLike, counts: ArrayLike, n: int,
                     gamma: float) -> tuple[FloatArray, FloatArray]:
    """One-sided bounds (lower, upper) on E[X], each at error level ``gamma``, for a variable X with
    values in [min values, max values] drawn n times i.i.d., observed ``counts[..., i]`` times at
    ``values[..., i]`` (rows: independent problems). Maurer & Pontil [@maurer2009empirical, Thm 4],
    for Z in [0, 1] and n >= 2: P(E Z > mean + sqrt(2 V ln(2/gamma) / n) + 7 ln(2/gamma) / (3 (n - 1)))
    <= gamma, V the unbiased sample variance; applied to (X - lo) / R and to (hi - X) / R, R = hi - lo.
    Widened by ``BERNSTEIN_SLACK`` for rounding."""
    w = np.asarray(values, dtype=np.float64)
    k = np.asarray(counts, dtype=np.float64)
    lo, hi = w.min(axis=-1), w.max(axis=-1)
    mean = (k * w).sum(axis=-1) / n
    var = np.maximum((k * (w - mean[..., None]) ** 2).sum(axis=-1) / (n - 1), 0.0)
    log_term = math.log(2.0 / gamma)
    half = (np.sqrt(2.0 * var * log_term / n) + 7.0 * (hi - lo) * log_term / (3.0 * (n - 1)))
    half = half * (1.0 + BERNSTEIN_SLACK) + BERNSTEIN_SLACK * np.abs(mean)
    lower = np.maximum(mean - half, lo)
    upper = np.minimum(mean + half, hi)
    return (np.asarray(lower - BERNSTEIN_SLACK * np.abs(lower), dtype=np.float64),
            np.asarray(upper + BERNSTEIN_SLACK * np.abs(upper), dtype=np.float64))


def order_statistics(sorted_x: FloatArray, levels: ArrayLike) -> FloatArray:
    """Empirical quantiles of a sorted sample by the inverted empirical CDF (Hyndman and Fan's
    definition 1, numpy's ``inverted_cdf``): at level p the ceil(n p)-th smallest value, the
    smallest at p = 0."""
    idx = np.ceil(sorted_x.size * np.asarray(levels, dtype=np.float64)) - 1.0
    out: FloatArray = sorted_x[np.maximum(idx, 0.0).astype(np.intp)]
    return out


def eps_lower_bound(alpha_upper: ArrayLike, beta_upper: ArrayLike, delta: float) -> FloatArray:
    """Largest eps refuted by a test whose errors satisfy alpha <= alpha_upper, beta <= beta_upper.

    (eps, delta)-DP requires 1 - beta <= e^eps alpha + delta and, for the complementary test of
    the swapped pair, 1 - alpha <= e^eps beta + delta [@wasserman2010statistical;
    @kairouz2015composition]. Returns max of log((1 - delta - beta_u)/alpha_u) and its mirror, at least 0.
    """
    a = np.asarray(alpha_upper, dtype=np.float64)
    b = np.asarray(beta_upper, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        e1 = np.log(np.maximum(1.0 - delta - b, 0.0)) - np.log(a)
        e2 = np.log(np.maximum(1.0 - delta - a, 0.0)) - np.log(b)
    return _at_least_zero(np.fmax(e1, e2))


def mu_lower_bound(alpha_upper: ArrayLike, beta_upper: ArrayLike) -> FloatArray:
    """Largest mu refuted: G_mu(a) = Phi(Phi^{-1}(1 - a) - mu) is decreasing in mu, so beta_u < G_mu(alpha_u)
    for every mu < Phi^{-1}(1 - alpha_u) - Phi^{-1}(beta_u) [@dong2022gaussian, Def. 2.7]."""
    a = np.asarray(alpha_upper, dtype=np.float64)
    b = np.asarray(beta_upper, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = -special.ndtri(a) - special.ndtri(b)
    return _at_least_zero(mu)


def _at_least_zero(x: FloatArray) -> FloatArray:
    """max(x, 0) with NaN as 0 and +inf as the largest double (as ``np.nan_to_num`` then
    ``np.maximum(., 0)``, without their per-call cost)."""
    return np.asarray(np.minimum(np.fmax(x, 0.0), _LARGEST), dtype=np.float64)


_LARGEST = float(np.finfo(np.float64).max)


def binomial_tail_pvalue(k: int, n: int, p: float) -> float:
    """P(Binomial(n, p) >= k): a one-sided exact test of H0: rate <= p."""
    return float(stats.binom.sf(k - 1, n, p))


def bisect_level(margin: Callable[[float], float], lo: float = 1e-300, hi: float = 0.5,
                 iters: int = 24) -> float:
    """Smallest per-bound level gamma in [lo, hi] at which a test refutes its claim, i.e.
    ``margin(gamma) > 0`` (1.0 if it never does), up to a factor exp(log(hi / lo) / 2^iters) (4e-5
    relative by default), rounded up: exactly the result of the bisection in log gamma.
    ``margin(gamma) > 0`` must be monotone, false below some level and true above it (bounds
    tighten as gamma grows), so each level evaluated decides every bisection step on its side.
    Regula falsi steps (Illinois) in sqrt(-log gamma), in which a Clopper-Pearson bound is nearly
    linear, first close the bracket (last level not refuting, first refuting) to about the
    bisection's resolution; the bisection then evaluates ``margin`` only at the midpoints inside
    it, or within ``BISECT_GUARD`` of its ends: about 10 evaluations in all instead of 26. A first
    evaluation at ``PROBE_SHARE`` of ``hi`` that does not refute is the bracket's lower end (no
    level below it refutes); one that refutes is its upper end, and ``lo`` and ``RELIABLE_LEVEL``
    are evaluated as the lower end. Where the first refuting level is below ``RELIABLE_LEVEL``, or
    a level decided by monotonicity does not refute when evaluated, every step is evaluated (the
    plain bisection)."""
    m_a = margin(hi)
    if not m_a > 0.0:
        return 1.0
    g_no, g_yes = lo, hi  # margin(g_no) <= 0 < margin(g_yes)
    probe = hi * PROBE_SHARE
    probed = max(lo, RELIABLE_LEVEL) < probe < hi
    m_b = margin(probe) if probed else 1.0
    if m_b > 0.0:
        if probed:
            g_yes, m_a = probe, m_b
        m_b = margin(lo)
        if m_b > 0.0:
            return lo
        if lo < RELIABLE_LEVEL < g_yes:
            m_b = margin(RELIABLE_LEVEL)
            if m_b > 0.0:
                return _plain_bisection(margin, lo, hi, iters)
            g_no = RELIABLE_LEVEL
    else:  # no refutation at the probe, above RELIABLE_LEVEL: none below it either (monotone)
        g_no = probe
    llo, lhi = math.log(lo), math.log(hi)
    # regula falsi in u = sqrt(-log g) (u decreases as g grows): u_a refutes, u_b does not
    u_a, u_b = math.sqrt(-math.log(g_yes)), math.sqrt(-math.log(g_no))
    resolution = (lhi - llo) / 2.0 ** iters
    side = 0
    inferred = False  # whether the level returned was decided without evaluating margin there
    for _ in range(SECANT_STEPS):
        if u_b * u_b - u_a * u_a < resolution:
            break
        if math.isfinite(m_a) and math.isfinite(m_b) and m_a > m_b:
            u = u_b - m_b * (u_b - u_a) / (m_b - m_a)
            if not u_a < u < u_b:
                u = 0.5 * (u_a + u_b)
        else:
            u = 0.5 * (u_a + u_b)
        g = math.exp(-u * u)
        if not g_no < g < g_yes:
            break
        m = margin(g)
        if m > 0.0:
            u_a, m_a, g_yes = u, m, g
            if side == 1:
                m_b *= 0.5  # Illinois: the stale end's value halved
            side = 1
        else:
            u_b, m_b, g_no = u, m, g
            if side == -1:
                m_a *= 0.5
            side = -1
    for _ in range(iters):
        mid = 0.5 * (llo + lhi)
        g = math.exp(mid)
        if g < g_no * (1.0 - BISECT_GUARD):
            refuted = False
        elif g > g_yes * (1.0 + BISECT_GUARD):
            refuted = True
        else:
            refuted = margin(g) > 0.0
            if refuted:
                g_yes = g
            else:
                g_no = g
        if refuted:
            lhi, inferred = mid, g != g_yes
        else:
            llo = mid
    if inferred and not margin(math.exp(lhi)) > 0.0:
        # decided by a level outside the guard band, against this one: margin(gamma) > 0 is
        # not monotone here (special functions' noise at extreme levels); the plain bisection
        return _plain_bisection(margin, lo, hi, iters)
    return math.exp(lhi)


def _plain_bisection(margin: Callable[[float], float], lo: float, hi: float, iters: int) -> float:
    """The bisection in log gamma on its own, every midpoint evaluated (``bisect_level``)."""
    llo, lhi = math.log(lo), math.log(hi)
    for _ in range(iters):
        mid = 0.5 * (llo + lhi)
        if margin(math.exp(mid)) > 0.0:
            lhi = mid
        else:
            llo = mid
    return math.exp(lhi)


#: Regula falsi steps ``bisect_level`` takes before bisecting.
SECANT_STEPS = 8
#: ``bisect_level`` first evaluates ``margin`` at this share of its upper end: where the test does
#: not refute there, no lower level refutes (above ``RELIABLE_LEVEL`` the margin is monotone in
#: the level), so the levels near 1e-300 and ``RELIABLE_LEVEL`` need no evaluation.
PROBE_SHARE = 1e-3
#: Relative distance from the bracket's ends within which ``bisect_level`` evaluates a midpoint
#: rather than deciding it by monotonicity (a margin against rounding in the special functions,
#: whose quantiles are monotone in the level to about 1e-15 relative above ``RELIABLE_LEVEL``).
BISECT_GUARD = 1e-7
#: Below this level the quantiles are not reliably monotone in it (by about 1e-8 relative near
#: 1e-250, and Boost's root finding gives up near 1e-300): ``bisect_level`` bisects every step.
RELIABLE_LEVEL = 1e-200
