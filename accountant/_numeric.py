"""Numerical helpers shared by the accountant: normal tails in log space, outward rounding, and
one-sided root finding that keeps the pessimistic end of its bracket."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import TypeVar

import mpmath
import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from .core.types import FloatArray as FloatArray
from .core.validation import as_alpha as as_alpha
from .core.validation import as_float_array as as_float_array
from .core.validation import check_count as check_count
from .core.validation import check_real as check_real
from .core.validation import check_reals as check_reals

T = TypeVar("T")

#: Largest error, in ulp of the result, of the float64 elementary functions the accountant calls
#: (numpy's and math's exp, log, expm1, log1p, and what is built on them: logaddexp, expit): numpy's
#: SIMD kernels (SVML, on AVX-512 machines) err by up to 4 ulp (numpy PR 19478 documents the
#: maximum ULP error); glibc's are below 1 ulp. Every bound on such a result reads it.
LIBM_ULP = 4
#: The relative error that allows a result y: LIBM_ULP ulp(y) <= LIBM_ULP 2^-52 |y|.
LIBM_REL = LIBM_ULP * 2.0 ** -52

#: Relative tolerance of every ``epsilon(delta)`` search: the reported epsilon is at most this much
#: (relatively) above the smallest epsilon with ``delta(epsilon) <= delta``.
EPSILON_RTOL = 1e-12


def gaussian_profile(mu: float, eps: ArrayLike) -> FloatArray:
    """Privacy profile of mu-GDP [@dong2022gaussian, Cor. 2.13], rounded up:

    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

    Each value is evaluated with mpmath (``_gaussian_profile_mp``) and rounded up to a double:
    scipy's ``log_ndtr`` is off by up to ~5e-14 per unit of |log Phi| in the far tail, which the
    exponential turns into relative errors of 1e-12 and more.
    """
    e = np.asarray(eps, dtype=np.float64)
    flat = [1.0 if x == -math.inf else 0.0 if x == math.inf else _gaussian_profile_mp(mu, x)
            for x in e.reshape(-1).tolist()]
    return np.asarray(flat, dtype=np.float64).reshape(e.shape)


def _gaussian_profile_mp(mu: float, eps: float) -> float:
    """One value of ``gaussian_profile``: the two terms at a working precision raised until at
    least 30 significant digits survive their cancellation, then inflated by 1e-25 relative (far
    above mpmath's error at that precision) and rounded up to a double."""
    dps = 40
    while True:
        with mpmath.workdps(dps):
            m, x = mpmath.mpf(mu), mpmath.mpf(eps)
            x_a, x_b = -x / m + m / 2, -x / m - m / 2
            if x_a < -40:  # delta < Phi(x_a) < 1e-349: below every positive double
                return math.nextafter(0.0, 1.0)
            # beyond |t| = 1e8, Phi(t) is 0 or 1 within e^-(5e15): 1 overstates Phi(x_a); for
            # Phi(x_b), 0 errs upward and 1 (then eps < 0, delta ~ 1 - e^eps) by far less than the
            # relative 1e-25 added below
            a = mpmath.ncdf(x_a) if x_a < 1e8 else mpmath.mpf(1)
            b = mpmath.ncdf(x_b) if abs(x_b) < 1e8 else mpmath.mpf(x_b > 0)
            val = a - mpmath.exp(x) * b
            if val > 0 and val * mpmath.mpf(10) ** (dps - 30) >= a:
                return round_up(val * (1 + mpmath.mpf(10) ** -25))
        if dps > 2000:  # mu below ~1e-900: cannot happen for a double mu > 0 with finite eps
            raise ArithmeticError(f"no precision resolves the GDP profile at mu={mu!r}, eps={eps!r}")
        dps *= 2


def round_up(value: mpmath.mpf) -> float:
    """The smallest double >= ``value`` (an mpmath number); at least the smallest subnormal when
    ``value`` > 0, so a positive quantity is never reported as 0."""
    f = float(value)
    if mpmath.mpf(f) < value:
        f = math.nextafter(f, math.inf)
    return math.nextafter(0.0, 1.0) if f == 0.0 and value > 0 else f


def sum_up(values: Iterable[float], weights: Iterable[float] | None = None) -> float:
    """The smallest double >= the exact sum of ``weights[i] * values[i]`` (non-negative
    weights), in rationals: for bounds that add up (basic composition, RDP per order, zCDP)."""
    vs = [float(v) for v in values]
    ws = [1.0] * len(vs) if weights is None else [float(w) for w in weights]
    if any(math.isinf(v) for v in vs) or any(math.isinf(w) for w in ws):
        return math.inf
    exact = sum((Fraction(v) * Fraction(w) for v, w in zip(vs, ws, strict=True)), Fraction(0))
    if exact >= Fraction(2) ** 1024:
        return math.inf
    f = float(exact)
    return math.nextafter(f, math.inf) if Fraction(f) < exact else f


def exp_rn(x: float) -> float:
    """e^x rounded to nearest (mpmath at 40 digits): a scalar constant within u = 2^-53 of its
    value whatever the platform's libm, where LIBM_REL would be charged per use (the recursions of
    the optimistic construction multiply by e^{-h} once per grid point)."""
    with mpmath.workdps(40):
        return float(mpmath.exp(mpmath.mpf(x)))


def expm1_rn(x: float) -> float:
    """e^x - 1 rounded to nearest (mpmath at 40 digits; see ``exp_rn``)."""
    with mpmath.workdps(40):
        return float(mpmath.expm1(mpmath.mpf(x)))


def div_up(numerator: float, denominator: float) -> float:
    """The smallest double >= numerator / denominator (numerator >= 0, denominator > 0, both
    finite), checked in rationals: a parameter computed as a quotient (mu = Delta / sigma,
    eps = Delta / b) must not round to the optimistic side (a Laplace's top atom an ulp low made
    delta 0 where the truth is 7e-19)."""
    a, b = _quotient_args(numerator, denominator)
    q = a / b
    if math.isinf(q):
        return q
    return math.nextafter(q, math.inf) if Fraction(q) * Fraction(b) < Fraction(a) else q


def div_down(numerator: float, denominator: float) -> float:
    """The largest double <= numerator / denominator (as ``div_up``): a noise scale computed as a
    quotient must not round up."""
    a, b = _quotient_args(numerator, denominator)
    q = a / b
    if math.isinf(q):
        return sys.float_info.max
    return math.nextafter(q, 0.0) if Fraction(q) * Fraction(b) > Fraction(a) else q


def _quotient_args(numerator: float, denominator: float) -> tuple[float, float]:
    return (check_real("numerator", numerator, low=0.0, high=math.inf, high_open=True),
            check_real("denominator", denominator, low=0.0, low_open=True, high=math.inf,
                       high_open=True))


def hypot_up(values: Iterable[float], weights: Iterable[int] | None = None) -> float:
    """The smallest double >= sqrt(sum weights[i] values[i]^2), the mu of composed GDP
    [@dong2022gaussian, Cor. 3.3], from the exact rational sum and a 50-digit square root."""
    vs = [Fraction(float(v)) for v in values]
    ws = [1] * len(vs) if weights is None else list(weights)
    exact = sum((v * v * w for v, w in zip(vs, ws, strict=True)), Fraction(0))
    with mpmath.workdps(50):
        f = round_up(mpmath.sqrt(mpmath.mpf(exact.numerator) / exact.denominator))
    while Fraction(f) ** 2 < exact:  # verified in rationals
        f = math.nextafter(f, math.inf)
    return f


def round_down(value: mpmath.mpf) -> float:
    """The largest double <= ``value`` (an mpmath number)."""
    f = float(value)
    return math.nextafter(f, -math.inf) if mpmath.mpf(f) > value else f


def smallest_epsilon(delta_of: Callable[[float], float], delta: float, *,
                     eps_low: float = 0.0, eps_high: float | None = None,
                     rtol: float = EPSILON_RTOL) -> float:
    """Smallest eps >= eps_low with delta_of(eps) <= delta, for non-increasing ``delta_of``.

    The returned eps is one where ``delta_of(eps) <= delta`` was evaluated, so it is never
    optimistic, and it exceeds the true minimum by at most ``rtol * max(1, eps)``
    (``narrow_bracket``). Returns ``math.inf`` when no finite eps reaches ``delta``.
    """
    d_low = delta_of(eps_low)
    if d_low <= delta:
        return eps_low
    hi = max(1.0, eps_low + 1.0) if eps_high is None else eps_high
    lo = eps_low
    d_hi = delta_of(hi)
    while d_hi > delta:
        lo, d_low = hi, d_hi
        hi = 2.0 * hi + 1.0 if hi < 1e6 else hi * 1e10  # legal eps go up to ~1e300
        if hi > 1e300:
            return math.inf
        d_hi = delta_of(hi)
    return narrow_bracket(delta_of, delta, (lo, d_low), (hi, d_hi), rtol)[1]


def narrow_bracket(f: Callable[[float], float], target: float, low: tuple[float, float],
                   high: tuple[float, float], rtol: float) -> tuple[float, float]:
    """Narrow (lo, hi), given with their values f(lo) > target >= f(hi) for a non-increasing f,
    to hi - lo <= rtol * max(1, |hi|); every end returned was evaluated on its side.

    Each step aims by the secant through the last two aims, in log f (a privacy profile falls
    about exponentially), then evaluates a second point a quarter of the secant's step past the
    aim, on the side the aim turned out not to be: the aim errs by less than that once the secant
    converges, so the bracket closes around the root from both sides. An aim outside the bracket,
    a value of 0, or a step that left more than 0.6 of the bracket makes the next step a
    bisection, so it never takes much more than bisection. On the accounting workloads at delta
    1e-3, 1e-5 and 1e-8: 15-23 evaluations in all, where bisection took 43-46."""
    ends = [list(low), list(high)]  # [x, f(x)] of lo and hi
    last = [low, high]

    def probe(x: float, secant: bool) -> bool:
        """Evaluate f at x and move the end on its side; whether that was the lower end. The
        secant runs through the aims (and bisections), not the second points."""
        value = f(x)
        if math.isnan(value):
            raise ValueError(f"the privacy profile is NaN at eps={x!r}")
        if secant:
            last[:] = [last[1], (x, value)]
        ends[value <= target][:] = [x, value]
        return value > target

    bisect = False
    while True:
        (lo, _), (hi, _) = ends
        width, tol = hi - lo, rtol * max(1.0, abs(hi))
        mid = 0.5 * (lo + hi)
        if width <= tol or mid <= lo or mid >= hi:
            return lo, hi
        (x0, v0), (x1, v1) = last
        aim, margin = mid, 0.0
        if not bisect and min(v0, v1) > 0.0 and target > 0.0:
            g0, g1 = math.log(v0) - math.log(target), math.log(v1) - math.log(target)
            step = g1 * (x1 - x0) / (g1 - g0) if g1 != g0 else math.nan
            if lo <= x1 - step <= hi:  # (not for nan) an aim on an end: kept 0.25 tol inside
                aim = min(max(x1 - step, lo + 0.25 * tol), hi - 0.25 * tol)
                margin = max(0.25 * tol, 0.25 * abs(step))
        nxt = aim + margin if probe(aim, True) else aim - margin
        if margin > 0.0 and ends[0][0] < nxt < ends[1][0]:
            probe(nxt, False)
        bisect = ends[1][0] - ends[0][0] > 0.6 * width


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
