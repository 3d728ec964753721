"""Numerical helpers shared by the accountant: validation, normal tails in log space, and
one-sided root finding that keeps the pessimistic end of its bracket."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

FloatArray = NDArray[np.float64]
T = TypeVar("T")

#: Relative tolerance of every ``epsilon(delta)`` search: the reported epsilon is at most this much
#: (relatively) above the smallest epsilon with ``delta(epsilon) <= delta``.
EPSILON_RTOL = 1e-12


def check_real(name: str, value: float, *, low: float = -math.inf, high: float = math.inf,
               low_open: bool = False, high_open: bool = False) -> float:
    """Return ``value`` as a float, or raise ``ValueError`` naming the parameter and its range."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    v = float(value)
    lo_ok = v > low if low_open else v >= low
    hi_ok = v < high if high_open else v <= high
    if math.isnan(v) or not (lo_ok and hi_ok):
        lb = "(" if low_open else "["
        rb = ")" if high_open else "]"
        raise ValueError(f"{name} must lie in {lb}{low}, {high}{rb}, got {value!r}")
    return v


def as_float_array(name: str, value: ArrayLike) -> FloatArray:
    """Convert to a float array and reject NaN with a message naming the parameter."""
    arr = np.asarray(value, dtype=np.float64)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    return arr


def as_alpha(alpha: ArrayLike) -> FloatArray:
    """Validate type I error levels: a float array with every entry in [0, 1]."""
    a = as_float_array("alpha", alpha)
    if ((a < 0.0) | (a > 1.0)).any():
        raise ValueError("alpha must lie in [0, 1]")
    return a


def log_normal_cdf(x: ArrayLike) -> FloatArray:
    """log Phi(x), accurate in both tails (scipy's log_ndtr)."""
    return np.asarray(special.log_ndtr(np.asarray(x, dtype=np.float64)), dtype=np.float64)


def gaussian_profile(mu: float, eps: ArrayLike) -> FloatArray:
    """Privacy profile of mu-GDP (Dong, Roth & Su 2022, Cor. 2.13; seed 004):

    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

    Both terms are formed in log space; where they agree to more than two digits the difference
    is recomputed with mpmath at 40 significant digits, so the relative error stays near machine
    precision even for large eps.
    """
    e = np.asarray(eps, dtype=np.float64)
    log_a = log_normal_cdf(-e / mu + mu / 2.0)
    log_b = e + log_normal_cdf(-e / mu - mu / 2.0)
    with np.errstate(invalid="ignore", over="ignore"):
        ratio_log = log_b - log_a
        out = np.exp(log_a) * -np.expm1(ratio_log)
    close = np.isfinite(ratio_log) & (ratio_log > math.log(0.99))
    if close.any():
        flat = out.reshape(-1)
        for i in np.flatnonzero(close.reshape(-1)):
            flat[i] = _gaussian_profile_mp(mu, float(e.reshape(-1)[i]))
    # a positive delta that underflows is reported as the smallest positive double, never as 0
    out = np.where(out <= 0.0, np.nextafter(0.0, 1.0), out)
    out = np.where(np.isposinf(e), 0.0, out)
    out = np.where(np.isneginf(e), 1.0, out)
    return np.asarray(np.clip(out, 0.0, 1.0), dtype=np.float64)


def _gaussian_profile_mp(mu: float, eps: float) -> float:
    with mpmath.workdps(40):
        m = mpmath.mpf(mu)
        x = mpmath.mpf(eps)
        val = mpmath.ncdf(-x / m + m / 2) - mpmath.exp(x) * mpmath.ncdf(-x / m - m / 2)
        return float(val)


def smallest_epsilon(delta_of: Callable[[float], float], delta: float, *,
                     eps_low: float = 0.0, eps_high: float | None = None,
                     rtol: float = EPSILON_RTOL) -> float:
    """Smallest eps >= eps_low with delta_of(eps) <= delta, for non-increasing ``delta_of``.

    Bisection that keeps the invariant ``delta_of(hi) <= delta``; the returned ``hi`` is therefore
    never optimistic, and exceeds the true minimum by at most ``rtol * max(1, hi)``.
    Returns ``math.inf`` when no finite eps reaches ``delta``.
    """
    if delta_of(eps_low) <= delta:
        return eps_low
    hi = max(1.0, eps_low + 1.0) if eps_high is None else eps_high
    lo = eps_low
    while delta_of(hi) > delta:
        lo = hi
        hi = 2.0 * hi + 1.0
        if hi > 1e6:
            return math.inf
    while hi - lo > rtol * max(1.0, abs(hi)):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if delta_of(mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def lower_convex_hull(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Vertices of the lower convex hull of points sorted by x (Andrew's monotone chain)."""
    hx: list[float] = []
    hy: list[float] = []
    for xi, yi in zip(x.tolist(), y.tolist(), strict=True):
        if hx and xi == hx[-1]:
            if yi >= hy[-1]:
                continue
            hx.pop()
            hy.pop()
        while len(hx) >= 2:
            cross = (hx[-1] - hx[-2]) * (yi - hy[-2]) - (hy[-1] - hy[-2]) * (xi - hx[-2])
            if cross <= 0.0:
                hx.pop()
                hy.pop()
            else:
                break
        hx.append(xi)
        hy.append(yi)
    return np.asarray(hx), np.asarray(hy)


def log_binomial_pmf(k: int, p_log: float, q_log: float) -> FloatArray:
    """log of C(k, l) p^(k-l) q^l for l = 0..k, given log p and log q."""
    ll = np.arange(k + 1, dtype=np.float64)
    log_choose = special.gammaln(k + 1.0) - special.gammaln(ll + 1.0) - special.gammaln(k - ll + 1.0)
    return np.asarray(log_choose + (k - ll) * p_log + ll * q_log, dtype=np.float64)
