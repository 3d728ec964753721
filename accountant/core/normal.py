"""The standard normal distribution function Phi and its logarithm, vectorised in numpy, from Cody's
rational Chebyshev approximations of erf and erfc [@cody1969rational].

With t = |z| / sqrt 2, Phi(-|z|) = erfc(t) / 2 and

- for t <= 0.46875, Phi(z) = 1/2 + sign(z) erf(t) / 2, erf(t) = t P1(t^2) / Q1(t^2);
- for 0.46875 < t <= 4, erfc(t) = e^{-t^2} R(t) with R = P2 / Q2 (degree 8);
- for t > 4, R(t) = (1 / sqrt pi - s P3(s) / Q3(s)) / t, s = 1 / t^2,

each approximating its function to at least 18 significant digits [@cody1969rational], far below
the float64 rounding u = 2^-53. The factor e^{-t^2} = e^{-z^2 / 2} carries the only large
condition number, z^2 relative per unit of relative argument error; it is formed without that
amplification: zh = |z| truncated to 20 fractional bits makes zh^2 / 2 exact, and
e^{-z^2/2} = exp(-zh^2 / 2) e^{-d}, d = (|z| - zh)(|z| + zh) / 2 < 4e-5 (|z| <= 40), with e^{-d}
from its Taylor polynomial (truncation below 10^-19). The float error is then that of one exp
(the platform's, ``LIBM_REL``), the polynomials' Horner steps, and t's rounding (t errs by 1.62 u
relative, and t |(log R)'(t)| < 1 for t > 0, R being e^{t^2} erfc(t)): a few u, independent of z,
where scipy's ``ndtr`` (erfc at the rounded argument z / sqrt 2) errs by up to 2.1 z^2 u. The
upper tail is 1 - Phi(-|z|). One float (``ndtr(0.3)``) goes through the same formulas in
Python floats (math's exp), without numpy's per-call cost.

Measured against mpmath at 50 digits (tests/accountant/core/test_normal.py): ``ndtr`` within
6.6 u relative on [-37.5, 40] (below -37.5, Phi(z) < 5e-308 leaves the normal range: there the
error is absolute, at most 3 subnormal ulp, and ``ndtr`` is 0 below about -38.5), ``log_ndtr``
within 7 u relative on [-1e150, 30] (beyond 30, log Phi(z) is below 1e-197 in modulus and
-Phi(-z) to within its square)."""

from __future__ import annotations

__all__ = ["log_ndtr", "ndtr", "ndtr_pair"]

import math
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from accountant.core.types import FloatArray

#: Coefficients of [@cody1969rational] (as in his CALERF): erf on t <= 0.46875 (P1, Q1: highest
#: degree last in P1's leading term's place), erfc e^{t^2} on (0.46875, 4] (P2, Q2) and beyond (P3, Q3).
_P1 = (1.85777706184603153e-1, 3.16112374387056560e0, 1.13864154151050156e2, 3.77485237685302021e2,
       3.20937758913846947e3)
_Q1 = (1.0, 2.36012909523441209e1, 2.44024637934444173e2, 1.28261652607737228e3,
       2.84423683343917062e3)
_P2 = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e0, 6.61191906371416295e1,
       2.98635138197400131e2, 8.81952221241769090e2, 1.71204761263407058e3, 2.05107837782607147e3,
       1.23033935479799725e3)
_Q2 = (1.0, 1.57449261107098347e1, 1.17693950891312499e2, 5.37181101862009858e2,
       1.62138957456669019e3, 3.29079923573345963e3, 4.36261909014324716e3, 3.43936767414372164e3,
       1.23033935480374942e3)
_P3 = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
       1.60837851487422766e-2, 6.58749161529837803e-4)
_Q3 = (1.0, 2.56852019228982242e0, 1.87295284992346047e0, 5.27905102951428412e-1,
       6.05183413124413191e-2, 2.33520497626869185e-3)

_INV_SQRT_PI = 5.6418958354775628695e-1
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_MID_T = 4.0
#: |z| below which erf's approximation is used (t = |z| / sqrt 2 <= 0.46875)
_SMALL_A = 0.46875 * math.sqrt(2.0)
#: |z| beyond which Phi(-|z|) < 4e-350 rounds to 0 (and Phi(|z|) to 1)
_FLUSH = 40.0
_SPLIT = 2.0**20


Real = TypeVar("Real", float, FloatArray)


def _horner(coefficients: tuple[float, ...], x: Real) -> Real:
    """sum_k c_k x^(n-k) by Horner's rule (each step: one product, one sum; in place on arrays)."""
    acc = x * coefficients[0] + coefficients[1]
    if isinstance(acc, np.ndarray):
        for c in coefficients[2:]:
            acc *= x
            acc += c
        return acc
    for c in coefficients[2:]:
        acc = acc * x + c
    return acc


def _small_erf(t: Real) -> Real:
    """erf(t) for |t| <= 0.46875."""
    y = t * t
    return t * _horner(_P1, y) / _horner(_Q1, y)


def _mid_ratio(t: Real) -> Real:
    """R(t) = e^{t^2} erfc(t) for 0.46875 < t <= 4."""
    return _horner(_P2, t) / _horner(_Q2, t)


def _far_ratio(t: Real) -> Real:
    """R(t) for t > 4."""
    s = 1.0 / (t * t)
    return (_INV_SQRT_PI - s * _horner(_P3, s) / _horner(_Q3, s)) / t


def _split(a: Real) -> tuple[Real, Real]:
    """(e^{-d}, h) with e^{-a^2/2} = e^{-h} e^{-d} for 0 <= a <= 40: h = zh^2 / 2 exact for zh = a
    truncated to 20 fractional bits, e^{-d} from its Taylor polynomial (d < 4e-5: the next term,
    d^4 / 24, is below 1e-19)."""
    zh = np.trunc(a * _SPLIT) / _SPLIT
    d = 0.5 * ((a - zh) * (a + zh))
    return 1.0 - d * (1.0 - d * (0.5 - d * (1.0 / 6.0))), 0.5 * (zh * zh)


def _part(mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.intp] | slice | None:
    """Where ``mask`` holds: all (a slice), none (None), or the indices."""
    if mask.all():
        return slice(None)
    if not mask.any():
        return None
    return np.flatnonzero(mask)


def _half_ratio(a: FloatArray) -> FloatArray:
    """R(t) / 2 at t = a / sqrt 2 > 0.46875, elementwise (in (0, 0.28])."""
    t = a * _INV_SQRT2
    r = np.empty_like(a)
    mid = t <= _MID_T
    part = _part(mid)
    if part is not None:
        r[part] = _mid_ratio(t[part])
    part = _part(~mid)
    if part is not None:
        with np.errstate(over="ignore", under="ignore"):
            r[part] = _far_ratio(t[part])
    r *= 0.5
    return r


def _halves(x: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(Phi(-|x|), Phi(|x|)) elementwise, |x| capped at _FLUSH."""
    a = np.minimum(np.abs(x), _FLUSH)
    small = a <= _SMALL_A
    lo, up = np.empty_like(a), np.empty_like(a)
    part = _part(small)
    if part is not None:
        e = 0.5 * _small_erf(a[part] * _INV_SQRT2)
        lo[part] = 0.5 - e
        up[part] = 0.5 + e
    part = _part(~small)
    if part is not None:
        ap = a[part]
        e_d, h = _split(ap)
        with np.errstate(under="ignore"):
            tail = np.exp(-h) * (_half_ratio(ap) * e_d)  # Phi(-a)
        lo[part] = tail
        up[part] = 1.0 - tail
    return lo, up


def _halves_float(x: float) -> tuple[float, float]:
    """``_halves`` of one float, by the same formulas (math's exp)."""
    a = min(abs(x), _FLUSH)
    if a <= _SMALL_A:
        e = 0.5 * _small_erf(a * _INV_SQRT2)
        return 0.5 - e, 0.5 + e
    if not a <= _FLUSH:  # NaN
        return math.nan, math.nan
    t = a * _INV_SQRT2
    e_d, h = _split(a)
    r = _mid_ratio(t) if t <= _MID_T else _far_ratio(t)
    tail = math.exp(-float(h)) * (0.5 * r * float(e_d))
    return tail, 1.0 - tail


#: Entries evaluated at a time (their temporaries stay in cache)
_CHUNK = 8192


def ndtr_pair(z: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """(Phi(z), Phi(-z)) elementwise, from one evaluation of the lower tail Phi(-|z|) (the upper
    one is 1 minus it): each as ``ndtr`` computes it."""
    x = np.asarray(z, dtype=np.float64)
    if x.size == 1:
        v = float(x.reshape(-1)[0])
        lo, up = _halves_float(v)
        below = v < 0.0
        return np.full(x.shape, lo if below else up), np.full(x.shape, up if below else lo)
    flat = x.reshape(-1)
    pos, neg = np.empty_like(flat), np.empty_like(flat)
    for i in range(0, flat.size, _CHUNK):
        chunk = flat[i:i + _CHUNK]
        lo_a, up_a = _halves(chunk)
        below_a = chunk < 0.0
        pos[i:i + _CHUNK] = np.where(below_a, lo_a, up_a)
        neg[i:i + _CHUNK] = np.where(below_a, up_a, lo_a)
    return pos.reshape(x.shape), neg.reshape(x.shape)


def ndtr(z: npt.ArrayLike) -> FloatArray:
    """Phi(z), the standard normal distribution function, elementwise (NaN stays NaN; 0 and 1 at
    -inf and +inf); relative error a few u (module docstring), absolute below one subnormal ulp
    where Phi(z) is subnormal. Phi(-|z|) is computed, and Phi(|z|) = 1 - Phi(-|z|)."""
    return ndtr_pair(z)[0]


def _log_lower_float(a: float) -> float:
    """log Phi(-a) for one float a > 0.46875 sqrt 2 (``log_ndtr``)."""
    t = a * _INV_SQRT2
    r = _mid_ratio(t) if t <= _MID_T else _far_ratio(t)
    return math.log(0.5 * r) - 0.5 * (a * a)


def log_ndtr(z: npt.ArrayLike) -> FloatArray:
    """log Phi(z) elementwise, accurate in the far lower tail (log(R(t) / 2) - z^2 / 2: no exp, no
    cap on |z|; a^2's rounding errs by u relative to log Phi) and near 1 (log1p(-Phi(-|z|)));
    -inf at -inf, 0 at +inf, NaN at NaN."""
    x = np.asarray(z, dtype=np.float64)
    if x.size == 1:
        v = float(x.reshape(-1)[0])
        if v < -_SMALL_A and v > -math.inf:
            val = _log_lower_float(-v)
        elif v == -math.inf:
            val = -math.inf
        else:
            lo, up = _halves_float(v)
            val = math.log(up if v >= 0.0 else lo) if abs(v) <= _SMALL_A else math.log1p(-lo)
        return np.full(x.shape, val)
    out = np.empty_like(x)
    a = np.abs(x)
    small = a <= _SMALL_A
    if small.any():
        lo_s, up_s = _halves(x[small])
        out[small] = np.log(np.where(x[small] >= 0.0, up_s, lo_s))
    lower = ~small & (x < 0.0) & np.isfinite(x)
    if lower.any():
        al = a[lower]
        with np.errstate(over="ignore"):
            out[lower] = np.log(_half_ratio(al)) - 0.5 * (al * al)
    upper = ~small & ~lower & (x != -np.inf)
    if upper.any():
        out[upper] = np.log1p(-_halves(x[upper])[0])
    out[x == -np.inf] = -np.inf
    return out
