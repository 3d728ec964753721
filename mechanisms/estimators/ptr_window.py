"""Propose-test-release for the central-window mean, a median estimator whose local sensitivity
stays near one order-statistic spacing out to the distances PTR must test
[@dwork2009differential; @dwork2014algorithmic, Sec. 7.2].

Why not the median itself. PTR proposes a bound eta on the local sensitivity, refuses unless the
distance to a dataset violating it, plus Lap(1/eps_t), exceeds a threshold T with P(pass | distance
0) <= delta, i.e. T ~ ln(1/(2 delta))/eps_t, and releases the statistic plus Lap(eta/eps_r). For the
median the largest local sensitivity at distance k is a window of k + 1 spacings 1/(n f) (f the
density at the median), so a proposal that passes at least half the time needs eta >= (T + 1)/(n f),
and the release's standard deviation is at least sqrt 2 ln(1/(2 delta)) / (eps_t eps_r n f) >=
sqrt 2 * 4 ln(1/(2 delta)) / (eps^2 n f) for eps_t + eps_r = eps: 74 spacings at (1, 1e-6), whatever
the split, threshold or proposal rule. Against the sampling error 1/(2 f sqrt n) of the median, the
RMSE ratio sqrt(1 + (148/sqrt n)^2) is 1.79 at n = 1e4 and reaches 1.5 only at n ~ 1.75e4 (before
the excess of the maximum over windows and any refusals).

The central-window mean. With r = ceil(q n) and a half-width h, a = max(1, r - h), b = min(n, r + h),
W = b - a + 1, the statistic is m(x) = (1/W) sum_{i=a..b} x_(i) of the data clipped to [lower, upper]
(x_(0) = lower, x_(n+1) = upper). For a law with a density near its median it estimates the median
with bias Q''(1/2) (W/n)^2 / 24 (Q the quantile function; zero for a symmetric law) and about
the median's variance (a little less for unimodal symmetric laws).
- Local sensitivity. Replacing one record moves every order statistic one place at most, all in the
  same direction, so the sum over the window telescopes: LS(x) = max(x_(b+1) - x_(a), x_(b) -
  x_(a-1)) / W.
- Distance. A dataset y at distance <= k has y_(i) in [x_(i-k), x_(i+k)] (indices clipped to 0..n+1),
  so U_k(x) = max(x_(b+1+k) - x_(a-k), x_(b+k) - x_(a-1-k)) / W bounds its local sensitivity;
  U_k is non-decreasing in k and a neighbour x' has U_k(x') <= U_{k+1}(x). Hence d(x) = min{k : U_k(x)
  > eta'} has sensitivity 1, and d(x) >= 1 implies LS(x) <= eta'. So U_k grows like (W + 2k + 1)/(W n f):
  with W >> T the proposal needs only about one spacing.
- Floats. The order statistics are the data's doubles; differences are compared with eta' = (eta -
  2^-50 M)(1 - 2^-40) (M = max(|lower|, |upper|)), which absorbs the rounding of the subtraction (a
  monotone rounding keeps both properties of d) and of the mean (math.fsum then one division: at most
  2^-52 M each), so neighbours that pass have released means within eta; the release is the lattice
  ``Laplace`` of scale eta/eps_r, which declares a query of sensitivity eta evaluated in floating point.
The release is ``ProposeTestRelease(d, Laplace, NoisyThresholdTest.for_delta(eps_t, delta))``:
``ApproxDP(eps_t + eps_r (1 + O(2^-16)), test.delta(0))``.
"""

from __future__ import annotations

import math

import numpy as np
import sympy
from numpy.typing import ArrayLike

from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real

from ..domain import Domain
from ..noise import Laplace
from ..queries import CustomQuery
from .smooth_sensitivity import quantile_rank
from .stability import (
    NoisyThresholdTest,
    ProposeTestRelease,
    check_bounds,
    check_delta,
    check_eps,
    padded_sorted,
)

__all__ = ["PTRWindowMedian", "central_window", "window_distance", "window_mean"]


def central_window(n: int, half_width: int, q: float = 0.5) -> tuple[int, int]:
    """(a, b): the ranks max(1, r - h) and min(n, r + h) around r = ceil(q n) (1-based)."""
    n = check_count("n", n, low=1, high=10**9)
    h = check_count("half_width", half_width, low=0, high=10**9)
    r = quantile_rank(n, check_real("q", q, low=0.0, high=1.0, low_open=True, high_open=True))
    return max(1, r - h), min(n, r + h)


def window_mean(x: ArrayLike, a: int, b: int) -> float:
    """The mean of the order statistics x_(a..b) (1-based), by math.fsum and one division."""
    v = np.sort(np.asarray(x, dtype=np.float64).reshape(-1))
    return math.fsum(v[a - 1:b].tolist()) / (b - a + 1)


def window_distance(x: ArrayLike, a: int, b: int, eta: float, lower: float, upper: float) -> int:
    """d(x) = min{k >= 0 : U_k(x) > eta'} of the module docstring (n + 1 when no k qualifies), with
    eta' = (eta - 2^-50 M)(1 - 2^-40), M = max(|lower|, |upper|)."""
    lo, hi = check_bounds(lower, upper)
    xs = padded_sorted(x, lo, hi)
    n = xs.size - 2
    if not 1 <= a <= b <= n:
        raise ValueError(f"the window must satisfy 1 <= a <= b <= n = {n}, got a = {a}, b = {b}")
    eta = check_real("eta", eta, low=0.0, high=hi - lo, low_open=True)
    limit = (eta - 2.0**-50 * max(abs(lo), abs(hi))) * (1.0 - 2.0**-40) * (b - a + 1)
    if limit <= 0:
        return 0
    ks = np.arange(0, n + 1)
    top = np.maximum(xs[np.minimum(b + 1 + ks, n + 1)] - xs[np.maximum(a - ks, 0)],
                     xs[np.minimum(b + ks, n + 1)] - xs[np.maximum(a - 1 - ks, 0)])
    over = top > limit
    return int(np.argmax(over)) if over.any() else n + 1


def PTRWindowMedian(lower: float, upper: float, n: int, eps: float, delta: float, eta: float,
                    half_width: int | None = None, q: float = 0.5,
                    release_eps: float | None = None) -> ProposeTestRelease:
    """PTR for the central-window mean (module docstring): the test at ``eps`` (threshold the least
    with P(pass | d = 0) <= delta), the release the lattice ``Laplace`` of scale eta/``release_eps``
    (default ``eps``) on the mean of the 2 ``half_width`` + 1 central order statistics (default
    half_width = ceil(n/40), a window of 5% of the data). Guarantee ``ApproxDP(eps + release_eps
    (1 + O(2^-16)), test.delta(0))``."""
    lo, hi = check_bounds(lower, upper)
    n = check_count("n", n, low=1, high=10**9)
    eps = check_eps(eps)
    delta = check_delta(delta)
    rel = eps if release_eps is None else check_eps(release_eps, "release_eps")
    eta = check_real("eta", eta, low=0.0, high=hi - lo, low_open=True)
    h = math.ceil(n / 40) if half_width is None else check_count("half_width", half_width, low=0, high=n)
    a, b = central_window(n, h, q)
    domain = Domain(lo, hi, n, clip=True)
    query = CustomQuery(domain, lambda v: window_mean(v, a, b), l1=sympy.nsimplify(eta),
                        name=f"mean of the order statistics {a}..{b} (proposed local sensitivity {eta})")
    release = Laplace(query, sympy.nsimplify(eta) / sympy.Rational(rel))

    def distance(x: FloatArray) -> float:
        return float(window_distance(domain.validate(x), a, b, eta, lo, hi))

    return ProposeTestRelease(distance, release, NoisyThresholdTest.for_delta(eps, delta))
