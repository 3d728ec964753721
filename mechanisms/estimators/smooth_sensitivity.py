"""Smooth sensitivity [@nissim2007smooth] of order statistics, and what every smooth-sensitivity
release shares: the public release lattice (never moved by the data), the clipped data, the rank of
the order statistic and its smooth sensitivity, and the fields of an (eps, delta) release.

S_xi(x) = max_k e^(-k xi) A^(k)(x), with A^(k)(x) the largest local sensitivity at distance <= k
[@nissim2007smooth, Def. 2.2, Prop. 2.4]: an upper bound on the local sensitivity that changes by at
most a factor e^xi between neighbours. Each release's noise and its proof are in its own module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy
from numpy.typing import ArrayLike

from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real

from ..base import OutputSpec
from ..domain import Domain
from ..samplers import floor_log2
from .stability import check_bounds, check_delta, check_quantile_fields, padded_sorted

__all__ = [
    "LATTICE_BITS",
    "XI_SLACK",
    "ApproxSmoothOrderStatistic",
    "LatticeSmoothRelease",
    "SmoothOrderStatistic",
    "median_smooth_sensitivity",
    "quantile_rank",
    "slides_smoothing",
    "smooth_sensitivity",
]

#: Relative slack kept from xi for the lattice rounding of the release (module docstring).
XI_SLACK = 2.0**-10


def slides_smoothing(eps: float, delta: float, dim: int = 1) -> float:
    """The smoothing xi of a smooth-sensitivity release with Gaussian noise in ``dim`` dimensions:
    eps / (4 (dim + 2 ln(2/delta))), at most Nissim, Raskhodnikova & Smith's beta
    = eps / (4 (dim + ln(2/delta))) (Lemma 2.10), less the relative slack ``XI_SLACK``."""
    return eps / (4.0 * (dim + 2.0 * math.log(2.0 / delta))) * (1.0 - XI_SLACK)
#: The release lattice is 2^-LATTICE_BITS finer than the resolution tau.
LATTICE_BITS = 12


class LatticeSmoothRelease:
    """What a smooth-sensitivity release of a statistic of data clipped to [lower, upper] shares with
    the others: the public resolution tau (``resolution``, default (upper - lower) 2^-24), the public
    release lattice gamma Z with gamma = 2^e <= tau 2^-``LATTICE_BITS`` (the lattice never moves with
    the data), and the clipped data. Mixed into frozen dataclasses with the fields ``lower``,
    ``upper``, ``n`` and ``resolution``."""

    lower: float
    upper: float
    n: int
    resolution: float | None

    def check_resolution(self) -> None:
        """Validate ``resolution`` in place: in (0, upper - lower], or None."""
        if self.resolution is not None:
            object.__setattr__(self, "resolution", check_real("resolution", self.resolution, low=0.0,
                                                              high=self.upper - self.lower, low_open=True))

    @property
    def tau(self) -> float:
        return self.resolution if self.resolution is not None else (self.upper - self.lower) * 2.0**-24

    @property
    def exponent(self) -> int:
        """e of the public release lattice gamma = 2^e."""
        return floor_log2(Fraction(self.tau)) - LATTICE_BITS

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("discrete", (), f"2^{self.exponent} Z")

    def _data(self, data: ArrayLike) -> FloatArray:
        return Domain(self.lower, self.upper, self.n, clip=True).validate(data)


class SmoothOrderStatistic(LatticeSmoothRelease):
    """A ``LatticeSmoothRelease`` of the rank-ceil(q n) order statistic: its rank, its global
    sensitivity upper - lower, and its smooth sensitivity at the subclass's ``smoothing``."""

    q: float
    if TYPE_CHECKING:  # each release defines its own rule; declared here for the type checker only

        @property
        def smoothing(self) -> float: ...

    @property
    def rank(self) -> int:
        return quantile_rank(self.n, self.q)

    @property
    def sensitivity(self) -> Any:
        """The global sensitivity of the clipped order statistic (the smooth one is data-dependent)."""
        return sympy.nsimplify(self.upper) - sympy.nsimplify(self.lower)

    def smooth_sensitivity(self, data: ArrayLike) -> float:
        return median_smooth_sensitivity(self._data(data), self.smoothing, self.lower, self.upper, self.rank)


def quantile_rank(n: int, q: float) -> int:
    """The 1-based rank max(1, ceil(q n)) of the q-quantile (the lower median for q = 1/2)."""
    return max(1, math.ceil(Fraction(q) * n))


def smooth_sensitivity(ls_at_distance: Any, xi: float, k_max: int, global_bound: float,
                       chunk: int = 256) -> float:
    """S_xi(x) = max_{0 <= k <= k_max} e^(-k xi) A^(k)(x) [@nissim2007smooth, Def. 2.2, Prop. 2.4] for a
    user-supplied, vectorised ``ls_at_distance(k_array)`` = A^(k)(x) (the largest local sensitivity at
    distance <= k). Terms with e^(-k xi) global_bound <= the running maximum are skipped (A^(k) <=
    global_bound), so the work is O(log(global_bound / S) / xi) evaluations of A."""
    xi = check_real("xi", xi, low=0.0, high=1e6, low_open=True)
    k_max = check_count("k_max", k_max, low=0, high=2**62)
    best = 0.0
    start = 0
    while start <= k_max:
        if best > 0 and math.exp(-start * xi) * global_bound <= best:
            break
        ks = np.arange(start, min(k_max, start + chunk - 1) + 1)
        vals = np.exp(-ks * xi) * np.asarray(ls_at_distance(ks), dtype=np.float64)
        best = max(best, float(vals.max()))
        start += chunk
    return best


def median_smooth_sensitivity(x: ArrayLike, xi: float, lower: float, upper: float,
                              rank: int | None = None) -> float:
    """The xi-smooth sensitivity of the rank-th order statistic (default: the lower median) of data
    clipped to [lower, upper], exactly, by the O(n log n) algorithm of [@nissim2007smooth, Sec. 3.1]:
    S = max over i <= rank <= j, i < j of (x_j - x_i) e^(-xi (j - i - 1)) (x_0 = lower, x_{n+1} = upper).
    The maximising j is non-decreasing in i (the objective log(x_j - x_i) - xi j is Monge), so a
    divide and conquer over i; pairs with j - i - 1 > log((upper - lower)/LS)/xi are never better
    than the local sensitivity and are pruned."""
    lo, hi = check_bounds(lower, upper)
    xi = check_real("xi", xi, low=0.0, high=1e6, low_open=True)
    xs = padded_sorted(x, lo, hi)
    n = xs.size - 2
    r = quantile_rank(n, 0.5) if rank is None else check_count("rank", rank, low=1, high=n)
    ls0 = float(max(xs[r] - xs[r - 1], xs[r + 1] - xs[r]))
    ratio = (hi - lo) / ls0 if ls0 > 0 else math.inf
    reach = n + 1 if not ratio < 2.0**1000 else min(n + 1, int(math.log(ratio) / xi) + 2)
    i_lo, j_hi = max(0, r - reach), min(n + 1, r + reach)
    best = ls0
    stack = [(i_lo, r, r, j_hi)]
    while stack:
        a, b, c, d = stack.pop()
        if a > b:
            continue
        i = (a + b) // 2
        js = np.arange(max(c, i + 1), d + 1)
        if js.size == 0:
            stack.append((a, i - 1, c, d))
            continue
        vals = (xs[js] - xs[i]) * np.exp(-xi * (js - i - 1))
        jbest = int(js[int(np.argmax(vals))])
        best = max(best, float(vals.max()))
        stack.append((a, i - 1, c, jbest))
        stack.append((i + 1, b, jbest, d))
    return best


@dataclass(frozen=True)
class ApproxSmoothOrderStatistic(SmoothOrderStatistic):
    """A ``SmoothOrderStatistic`` released for (eps, delta): the fields its releases share, in their
    constructors' order, and their checks (subclasses add their noise parameters after them)."""

    lower: float
    upper: float
    n: int
    eps: float
    delta: float
    q: float = 0.5
    resolution: float | None = None

    def __post_init__(self) -> None:
        check_quantile_fields(self)
        object.__setattr__(self, "delta", check_delta(self.delta))
        self.check_resolution()
