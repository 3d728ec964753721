"""Smooth-sensitivity estimators with Bun & Steinke's noise [@bun2019average]: the q-quantile (median
by default) and the trimmed mean, each released by a lattice scale mixture of ``smooth_noise``
(float-safe, (1/2 eps^2)-CDP, declared as ``ZCDP``): ``law="laplace-log-normal"`` (the default,
``LatticeLLN``), ``law="uniform-log-normal"`` (``LatticeULN``, about half the noise sd at the same
eps for the median) or ``law="arsinh-normal"`` (``LatticeArsinhNormal``, the continuous law rounded
exactly, its guarantee certified numerically).

The smooth sensitivity g is computed at t (1 - 2^-10) for the release's t (the relative slack keeps
the float-computed g t-smooth, as in ``robust``); the release adds the public resolution tau to g
(which covers the rounding of the statistic to the lattice gamma Z, gamma <= tau 2^-12, and the
statistic's own float rounding, at most a few ulps).

Trimmed mean [@bun2019average]: with m records trimmed at each end, T(x) = (1/(n - 2m)) sum of the
order statistics x_(m+1..n-m) of data clipped to [lower, upper]. Replacing one record moves the
window by one place, so LS(y) = max(y_(n-m+1) - y_(m+1), y_(n-m) - y_(m)) / (n - 2m); a dataset y at
distance <= k has y_(i) in [x_(i-k), x_(i+k)] (x_(i) = lower for i <= 0, upper for i > n), so the
largest local sensitivity at distance <= k is A^(k) = max_{0 <= l <= k+1} (x_(n-m+1+k-l) - x_(m+1-l))
/ (n - 2m), and g = max_k e^(-k t) A^(k) [@nissim2007smooth, Prop. 2.4].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import ZCDP
from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real

from ..base import Mechanism
from ..samplers import LATTICE_OUTPUT_LIMIT, from_lattice, to_lattice
from .smooth_arsinh import LatticeArsinhNormal
from .smooth_noise import LatticeLLN, LatticeSmoothNoise, LatticeULN, cdp_rho
from .smooth_sensitivity import XI_SLACK, LatticeSmoothRelease, SmoothOrderStatistic, smooth_sensitivity
from .stability import check_bounds, padded_sorted

__all__ = ["NOISE_LAWS", "SmoothLLNQuantile", "SmoothLLNTrimmedMean", "cdp_epsilon_for"]

#: The noise laws a smooth-sensitivity release accepts, by name.
NOISE_LAWS: dict[str, type[LatticeSmoothNoise]] = {
    "laplace-log-normal": LatticeLLN,
    "uniform-log-normal": LatticeULN,
    "arsinh-normal": LatticeArsinhNormal,
}


def cdp_epsilon_for(eps: float, delta: float) -> float:
    """The largest CDP eps (to 2^-30 relative) whose (1/2 eps^2)-zCDP converts to (eps, delta)-DP
    by ``ZCDP.epsilon`` (the conversion of [@canonne2020discrete, Prop. 12])."""
    eps = check_real("eps", eps, low=0.0, high=100.0, low_open=True)
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    lo, hi = 0.0, 2.0 * eps + 2.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if cdp_rho(mid).epsilon(delta) <= eps:
            lo = mid
        else:
            hi = mid
        if hi - lo <= lo * 2.0**-30:
            break
    if lo == 0.0:
        raise ValueError(f"no CDP eps converts to ({eps!r}, {delta!r})-DP")
    return lo


@dataclass(frozen=True)
class _LLNRelease(LatticeSmoothRelease, Mechanism):
    """Shared release: statistic(x) + g(x) Z / s on the public lattice, Z the lattice law ``law``
    (``NOISE_LAWS``) with spread ``sigma`` (None: the law's default), (1/2 eps^2)-CDP."""

    lower: float
    upper: float
    n: int
    eps: float
    resolution: float | None = None
    sigma: float | None = None
    law: str = "laplace-log-normal"

    def _validate(self) -> None:
        lo, hi = check_bounds(self.lower, self.upper)
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "n", check_count("n", self.n, low=1, high=10**9))
        object.__setattr__(self, "eps", check_real("eps", self.eps, low=0.0, high=5.0, low_open=True))
        if self.sigma is not None:
            object.__setattr__(self, "sigma", check_real("sigma", self.sigma, low=0.05, high=2.0))
        if not isinstance(self.law, str) or self.law not in NOISE_LAWS:
            raise ValueError(f"law must be one of {sorted(NOISE_LAWS)}, got {self.law!r}")
        self.check_resolution()

    @cached_property
    def noise(self) -> LatticeSmoothNoise:
        return NOISE_LAWS[self.law].for_epsilon(self.eps, self.sigma)

    @property
    def smoothing(self) -> float:
        """The t of the smooth sensitivity: the release's, less the relative slack ``XI_SLACK``."""
        return self.noise.smoothing * (1.0 - XI_SLACK)

    def guarantee(self) -> ZCDP:
        """(1/2 eps'^2)-CDP, eps' = the release's certified epsilon (<= eps)."""
        return self.noise.guarantee()

    def claimed(self) -> ZCDP:
        """Bun & Steinke's closed form for the law at the release's parameters (``paper_epsilon``)."""
        return cdp_rho(self.noise.paper_epsilon)

    def statistic(self, data: ArrayLike) -> float:
        raise NotImplementedError

    def smooth_sensitivity(self, data: ArrayLike) -> float:
        raise NotImplementedError

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x = self._data(data)
        e = self.exponent
        noise = self.noise
        level = noise.scale_index(Fraction(self.smooth_sensitivity(x)) + Fraction(self.tau), e)
        centre = int(to_lattice(np.array([self.statistic(x)]), e)[0])
        # clipping the index to the exactly representable range is post-processing
        idx = np.clip(centre + noise.noise(rng, level, m), -LATTICE_OUTPUT_LIMIT, LATTICE_OUTPUT_LIMIT)
        return from_lattice(idx, e)


@dataclass(frozen=True)
class SmoothLLNQuantile(SmoothOrderStatistic, _LLNRelease):
    """The smooth-sensitivity q-quantile (default the median) with lattice Laplace-log-normal (or,
    ``law="uniform-log-normal"``, uniform-log-normal, or ``law="arsinh-normal"``, arsinh-normal) noise
    [@bun2019average; @nissim2007smooth, Sec. 3.1 for g]: data clipped to [lower, upper], the
    rank-ceil(q n) order statistic plus g(x) Z / s. ``guarantee()`` is (1/2 eps'^2)-CDP with
    eps' <= ``eps`` certified for the lattice (``LatticeLLN``, ``LatticeULN``,
    ``LatticeArsinhNormal``); ``for_approx_dp`` picks eps for an (eps, delta) target."""

    q: float = 0.5

    def __post_init__(self) -> None:
        self._validate()
        object.__setattr__(self, "q", check_real("q", self.q, low=0.0, high=1.0, low_open=True,
                                                 high_open=True))

    @classmethod
    def for_approx_dp(cls, lower: float, upper: float, n: int, eps: float, delta: float,
                      q: float = 0.5, law: str = "laplace-log-normal") -> SmoothLLNQuantile:
        return cls(lower, upper, n, cdp_epsilon_for(eps, delta), law=law, q=q)

    def statistic(self, data: ArrayLike) -> float:
        return float(np.sort(self._data(data))[self.rank - 1])


@dataclass(frozen=True)
class SmoothLLNTrimmedMean(_LLNRelease):
    """The trimmed mean (``trim`` records cut at each end) with lattice Laplace-log-normal (or
    ``law="uniform-log-normal"``, ``law="arsinh-normal"``) noise scaled to its smooth sensitivity
    (module docstring) [@bun2019average]. ``trim`` defaults to floor(n/10)."""

    trim: int | None = None

    def __post_init__(self) -> None:
        self._validate()
        trim = self.n // 10 if self.trim is None else self.trim
        object.__setattr__(self, "trim", check_count("trim", trim, low=0, high=max(0, (self.n - 1) // 2)))

    @classmethod
    def for_approx_dp(cls, lower: float, upper: float, n: int, eps: float, delta: float,
                      trim: int | None = None, law: str = "laplace-log-normal") -> SmoothLLNTrimmedMean:
        return cls(lower, upper, n, cdp_epsilon_for(eps, delta), law=law, trim=trim)

    @property
    def kept(self) -> int:
        assert self.trim is not None
        return self.n - 2 * self.trim

    @property
    def sensitivity(self) -> Any:
        return (sympy.nsimplify(self.upper) - sympy.nsimplify(self.lower)) / self.kept

    def statistic(self, data: ArrayLike) -> float:
        assert self.trim is not None
        v = np.sort(self._data(data))
        return math.fsum(v[self.trim:self.n - self.trim].tolist()) / self.kept

    def local_sensitivity_at_distance(self, data: ArrayLike, k: ArrayLike) -> FloatArray:
        """A^(k)(x) of the module docstring, for an array of distances k."""
        assert self.trim is not None
        xs = padded_sorted(self._data(data), self.lower, self.upper)
        n, m = self.n, self.trim
        out = []
        for kk in np.atleast_1d(np.asarray(k, dtype=np.int64)).tolist():
            ls = np.arange(0, kk + 2)
            top = xs[np.clip(n - m + 1 + kk - ls, 0, n + 1)]
            bot = xs[np.clip(m + 1 - ls, 0, n + 1)]
            out.append(float((top - bot).max()) / self.kept)
        return np.asarray(out, dtype=np.float64)

    def smooth_sensitivity(self, data: ArrayLike) -> float:
        x = self._data(data)
        return smooth_sensitivity(lambda ks: self.local_sensitivity_at_distance(x, ks), self.smoothing,
                                  self.n + 1, (self.upper - self.lower) / self.kept, chunk=16)
