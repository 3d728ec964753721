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


#: Share of the way from k / n to Wilson's bound at which ``cp_upper_below`` and ``cp_lower_above``
#: try their value.
TOWARDS_WILSON = 0.9


def cp_upper_below(k: ArrayLike, n: int, gamma: float) -> FloatArray:
    """A value at most ``cp_upper(k, n, gamma)``, far cheaper: the first of k / n + TOWARDS_WILSON
    (w - k / n) (w Wilson's upper bound) and k / n certified below the Clopper-Pearson bound U, else
    0. The regularised incomplete beta function I_x(k + 1, n - k), increasing in x, is 1 - gamma
    at U, so x <= U when I_x <= 1 - gamma (one evaluation, no inversion)."""
    kk = np.asarray(k, dtype=np.float64)
    p = kk / n
    inner = kk < n
    a, b = kk + 1.0, np.maximum(n - kk, 1.0)

    def below(x: FloatArray, at: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """Where ``at``: whether I_x(a, b) <= 1 - gamma (False elsewhere)."""
        ok = np.zeros(kk.shape, dtype=bool)
        with np.errstate(invalid="ignore"):
            ok[at] = special.betainc(a[at], b[at], x[at]) <= 1.0 - gamma
        return ok

    x = p + TOWARDS_WILSON * (wilson_bounds(kk, n, gamma)[1] - p)
    at_x = below(x, inner)
    at_p = below(p, inner & ~at_x)  # k / n where the first value is not certified
    return np.asarray(np.where(at_x, x, np.where(at_p, p, 0.0)), dtype=np.float64)


def cp_lower_above(k: ArrayLike, n: int, gamma: float) -> FloatArray:
    """A value at least ``cp_lower(k, n, gamma)``: the first of k / n - TOWARDS_WILSON (k / n - w)
    (w Wilson's lower bound) and k / n certified above the Clopper-Pearson bound L (I_x(k, n - k +
    1) is gamma at L, so x >= L when I_x >= gamma), else 1; 0 where k = 0 (L = 0)."""
    kk = np.asarray(k, dtype=np.float64)
    p = kk / n
    a, b = np.maximum(kk, 1.0), n - kk + 1.0

    def above(x: FloatArray, at: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """Where ``at``: whether I_x(a, b) >= gamma (False elsewhere)."""
        ok = np.zeros(kk.shape, dtype=bool)
        with np.errstate(invalid="ignore"):
            ok[at] = special.betainc(a[at], b[at], x[at]) >= gamma
        return ok

    x = p - TOWARDS_WILSON * (p - wilson_bounds(kk, n, gamma)[0])
    inner = kk > 0
    at_x = above(x, inner)
    at_p = above(p, inner & ~at_x)
    out = np.where(at_x, x, np.where(at_p, p, 1.0))
    return np.asarray(np.where(inner, out, 0.0), dtype=np.float64)


def wilson_bounds(k: ArrayLike, n: ArrayLike, gamma: float) -> tuple[FloatArray, FloatArray]:
    """Wilson's score interval [@wilson1927probable]: (lower, upper) on p from k successes in n at
    one-sided level ``gamma`` each, by the normal approximation. Not a certified bound (its coverage
    is approximate): the adaptive search ranks candidate pairs by it, where no bound is claimed and
    the exact quantiles of Clopper-Pearson would cost most of the time."""
    kk = np.asarray(k, dtype=np.float64)
    nn = np.broadcast_to(np.asarray(n, dtype=np.float64), kk.shape)
    z = float(special.ndtri(1.0 - gamma))
    p = kk / nn
    centre = p + z * z / (2 * nn)
    half = z * np.sqrt(p * (1.0 - p) / nn + z * z / (4 * nn * nn))
    scale = 1.0 + z * z / nn
    lo = np.clip(np.minimum((centre - half) / scale, p), 0.0, 1.0)  # min/max: p inside despite rounding
    hi = np.clip(np.maximum((centre + half) / scale, p), 0.0, 1.0)
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


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


def bisect_level(is_refuted: Callable[[float], bool], lo: float = 1e-300, hi: float = 0.5,
                 iters: int = 24) -> float:
    """Smallest per-bound level gamma in [lo, hi] at which ``is_refuted(gamma)`` is True (1.0 if it
    never is), up to a factor exp(log(hi / lo) / 2^iters) (4e-5 relative by default), rounded up.
    ``is_refuted`` must be monotone: bounds tighten as gamma grows."""
    f = is_refuted
    if not f(hi):
        return 1.0
    if f(lo):
        return lo
    llo, lhi = math.log(lo), math.log(hi)
    for _ in range(iters):
        mid = 0.5 * (llo + lhi)
        if f(math.exp(mid)):
            lhi = mid
        else:
            llo = mid
    return math.exp(lhi)
