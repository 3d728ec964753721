"""Smooth-sensitivity release of vector statistics f : X^n -> R^p [@nissim2007smooth, Sec. 2, Lemma 2.10;
@avellamedina2025differentially, "weaker notions of sensitivity"].

The framework. LS_2(f, x) = max over neighbours x' of ||f(x) - f(x')||_2. A function S is a xi-smooth
upper bound on LS_2 when S(x) >= LS_2(f, x) for every x and S(x) <= e^xi S(x') for neighbours
[@nissim2007smooth, Def. 2.1]. Releasing f(x) + S(x)/alpha Z with Z ~ N(0, I_p) is (eps, delta)-DP when
the p-dimensional Gaussian is (alpha, beta)-admissible and xi <= beta [@nissim2007smooth, Lemma 2.6];
by [@nissim2007smooth, Lemma 2.10] it is for alpha = eps / (5 sqrt(2 ln(2/delta))) and beta = eps /
(4 (p + ln(2/delta))) (eps, delta in (0, 1)). The slides take xi <= eps / (4 (p + 2 log(2/delta))) <=
beta, which is the xi used here.

Float safety: the release is, exactly as ``robust.SmoothSensitivityMedian``'s for p = 1, on a public
lattice gamma Z^p, gamma = 2^e, e = floor(log2 tau) - 12 - ceil(ceil(log2 p) / 2) (so sqrt(p) gamma
<= tau 2^-12) for a public resolution tau:

    gamma * (round(f(x)/gamma) + N),   N ~ N_Z(0, s2(x))^p,  s2(x) = ceil(sigma(x)^2 / gamma^2),
    sigma(x) = (S(x) + tau) / alpha.

Rounding moves f by at most sqrt(p) gamma / 2 in L2, so the rounded values of neighbours differ by
at most LS_2 + sqrt(p) gamma <= S(x) + tau = alpha sigma(x), and S + tau is xi-smooth when S is: the
sliding step of [@nissim2007smooth, Lemma 2.5] applies. The product of discrete Gaussians has the
continuous log-ratio at every lattice point and the projection of N on any direction is sub-Gaussian
with the same variance proxy [@canonne2020discrete, Prop. 19, coordinate by coordinate]; each
coordinate's normaliser is sqrt(2 pi s2) within a relative 2 e^(-2 pi^2 s2), and the ceiling changes
s2 by a relative 1/s2 <= alpha^2 2^-24: with eps <= 1 and p <= 10^4 both are below the slack
xi 2^-10 kept from xi (``XI_SLACK``), which covers the dilation step.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import ApproxDP, Guarantee
from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real

from ..base import Mechanism, OutputSpec
from ..domain import Domain
from ..samplers import discrete_gaussian_array, floor_log2, from_lattice, to_lattice
from .smooth_sensitivity import LATTICE_BITS, median_smooth_sensitivity, slides_smoothing
from .stability import check_delta

__all__ = ["SmoothSensitivityVector", "coordinate_quantile_release"]

#: Largest dimension accepted (the slack argument of the module docstring needs p <= 10^4).
MAX_DIM = 10_000


@dataclass(frozen=True)
class SmoothSensitivityVector(Mechanism):
    """f(x) + (S(x) + tau)/alpha N_Z(0, I_p) on the public lattice of the module docstring.

    ``statistic(x)`` returns f(x), a vector of length ``dim``; ``smooth_bound(x, xi)`` returns a
    xi-smooth upper bound on the local L2 sensitivity of f at x (the caller's obligation; the
    catalogue's instance is ``coordinate_quantile_release``); ``domain`` validates (and clips) the data;
    ``global_bound`` is the global L2 sensitivity (the ``sensitivity`` shown; S never needs to exceed
    it). xi = eps / (4 (p + 2 ln(2/delta))) (1 - 2^-10), alpha = eps / (5 sqrt(2 ln(2/delta))).
    Guarantee ``ApproxDP(eps, delta)`` [@nissim2007smooth, Lemmas 2.6, 2.10], for eps in (0, 1].
    ``xi`` overrides the smoothing parameter (a value above the one above voids the guarantee).
    """

    statistic: Callable[[FloatArray], ArrayLike] = field(compare=False)
    smooth_bound: Callable[[FloatArray, float], float] = field(compare=False)
    domain: Domain
    dim: int
    eps: float
    delta: float
    global_bound: float
    resolution: float
    xi: float | None = None

    def __post_init__(self) -> None:
        if not callable(self.statistic) or not callable(self.smooth_bound):
            raise TypeError("statistic and smooth_bound must be callable")
        if not isinstance(self.domain, Domain):
            raise TypeError(f"domain must be a Domain, got {type(self.domain).__name__}")
        object.__setattr__(self, "dim", check_count("dim", self.dim, low=1, high=MAX_DIM))
        object.__setattr__(self, "eps", check_real("eps", self.eps, low=0.0, high=1.0, low_open=True))
        object.__setattr__(self, "delta", check_delta(self.delta))
        object.__setattr__(self, "global_bound", check_real("global_bound", self.global_bound, low=0.0,
                                                            high=1e300, low_open=True))
        object.__setattr__(self, "resolution", check_real("resolution", self.resolution, low=1e-150,
                                                          high=self.global_bound))
        if self.xi is not None:
            object.__setattr__(self, "xi", check_real("xi", self.xi, low=0.0, high=1e6, low_open=True))

    @property
    def smoothing(self) -> float:
        """xi used for S: eps / (4 (p + 2 ln(2/delta))) less the relative slack, unless overridden."""
        if self.xi is not None:
            return self.xi
        return slides_smoothing(self.eps, self.delta, self.dim)

    @property
    def alpha(self) -> float:
        """alpha = eps / (5 sqrt(2 ln(2/delta))), rounded down."""
        return math.nextafter(self.eps / (5.0 * math.sqrt(2.0 * math.log(2.0 / self.delta))), 0.0)

    @property
    def exponent(self) -> int:
        """e of the release lattice gamma = 2^e: sqrt(p) gamma <= 2^-12 tau."""
        half_log_p = ((self.dim - 1).bit_length() + 1) // 2  # 2^half_log_p >= sqrt(p)
        return floor_log2(Fraction(self.resolution)) - LATTICE_BITS - half_log_p

    @property
    def sensitivity(self) -> Any:
        """The global L2 sensitivity (the smooth one is data-dependent)."""
        return sympy.nsimplify(self.global_bound)

    def guarantee(self) -> Guarantee:
        return ApproxDP(self.eps, self.delta)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("discrete", (self.dim,), f"2^{self.exponent} Z^{self.dim}")

    def _data(self, data: ArrayLike) -> FloatArray:
        return self.domain.validate(data)

    def value(self, data: ArrayLike) -> FloatArray:
        """f(x), checked to be a finite vector of length ``dim``."""
        v = np.asarray(self.statistic(self._data(data)), dtype=np.float64).reshape(-1)
        if v.shape != (self.dim,) or not np.isfinite(v).all():
            raise ValueError(f"statistic must return {self.dim} finite values, got {v!r}")
        return v

    def smooth_sensitivity(self, data: ArrayLike) -> float:
        """S(x), capped at ``global_bound`` (the cap keeps it a xi-smooth upper bound)."""
        s = float(self.smooth_bound(self._data(data), self.smoothing))
        if not s >= 0.0:
            raise ValueError(f"smooth_bound must return a number >= 0, got {s!r}")
        return min(s, self.global_bound)

    def lattice_variance(self, data: ArrayLike) -> int:
        """s2(x) = ceil(((S(x) + tau) / (alpha gamma))^2)."""
        s = Fraction(self.smooth_sensitivity(data)) + Fraction(self.resolution)
        gamma = Fraction(2) ** self.exponent
        return math.ceil((s / (Fraction(self.alpha) * gamma)) ** 2)

    def noise_scale(self, data: ArrayLike) -> float:
        """The noise standard deviation per coordinate, sqrt(s2(x)) gamma ~ (S(x) + tau)/alpha."""
        return math.ldexp(math.sqrt(self.lattice_variance(data)), self.exponent)

    def _center_and_variance(self, data: ArrayLike) -> tuple[NDArray[np.int64], int]:
        return to_lattice(self.value(data), self.exponent), self.lattice_variance(data)

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        """log p_data(y) - log p_data2(y) of the two product discrete Gaussians on the lattice; each
        coordinate's normaliser is sqrt(2 pi s2) within a relative 2 e^(-2 pi^2 s2) (s2 >= 2^24)."""
        arr = self._validate_pair(y, (self.dim,))
        k = np.ldexp(arr, -self.exponent)
        if not np.array_equal(k, np.round(k)):
            raise ValueError("outputs must lie on the release lattice")
        (c1, v1), (c2, v2) = self._center_and_variance(data), self._center_and_variance(data2)
        q1 = ((k - c1) ** 2).sum(axis=1)
        q2 = ((k - c2) ** 2).sum(axis=1)
        return np.asarray(-q1 / (2.0 * v1) + q2 / (2.0 * v2) - 0.5 * self.dim * math.log(v1 / v2),
                          dtype=np.float64)

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        center, s2 = self._center_and_variance(data)
        noise = discrete_gaussian_array(rng, Fraction(s2), (m, self.dim))
        return from_lattice(center[None, :] + noise, self.exponent)


def coordinate_quantile_release(lower: float, upper: float, n: int, dim: int, eps: float, delta: float,
                                q: float = 0.5, resolution: float | None = None,
                                xi: float | None = None) -> SmoothSensitivityVector:
    """The coordinate-wise q-quantile (default: the lower median) of n records in [lower, upper]^dim
    (clipped), released by ``SmoothSensitivityVector``. S(x) = ||(S_1(x), ..., S_p(x))||_2 with S_j the
    exact xi-smooth sensitivity of coordinate j's order statistic (``median_smooth_sensitivity``): one
    replaced record moves coordinate j by at most LS_j <= S_j, so LS_2 <= S; and S_j(x) <= e^xi S_j(x')
    for every j gives S(x) <= e^xi S(x'). Global L2 sensitivity sqrt(p) (upper - lower); default
    resolution (upper - lower) 2^-24."""
    lo = check_real("lower", lower, low=-1e150, high=1e150)
    hi = check_real("upper", upper, low=-1e150, high=1e150)
    if not lo < hi:
        raise ValueError(f"lower must be < upper, got lower = {lower!r}, upper = {upper!r}")
    dim = check_count("dim", dim, low=1, high=MAX_DIM)
    domain = Domain(lo, hi, n, d=dim, clip=True)
    rank = max(1, math.ceil(Fraction(check_real("q", q, low=0.0, high=1.0, low_open=True, high_open=True))
                            * check_count("n", n, low=1, high=10**9)))

    def columns(x: FloatArray) -> FloatArray:
        return np.asarray(x.reshape(x.shape[0], -1), dtype=np.float64)

    def statistic(x: FloatArray) -> FloatArray:
        return np.asarray(np.sort(columns(x), axis=0)[rank - 1], dtype=np.float64)

    def smooth_bound(x: FloatArray, smoothing: float) -> float:
        c = columns(x)
        per = [median_smooth_sensitivity(c[:, j], smoothing, lo, hi, rank) for j in range(dim)]
        return math.sqrt(math.fsum(s * s for s in per)) * (1.0 + 2.0**-50)

    width = hi - lo
    global_bound = math.sqrt(dim) * width * (1.0 + 2.0**-50)
    return SmoothSensitivityVector(statistic, smooth_bound, domain, dim, eps, delta, global_bound,
                                   width * 2.0**-24 if resolution is None else resolution, xi)
