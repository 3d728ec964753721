"""Smooth sensitivity with discrete Laplace noise, calibrated directly for (eps, delta) by a certified
bound on the hockey-stick divergence (no detour through concentrated DP): the bound
``laplace_smooth_delta``, the parameter choice ``laplace_smooth_parameters`` and the q-quantile
release ``SmoothLaplaceQuantile`` [@nissim2007smooth, Def. 2.2, Sec. 3.1 for the smooth sensitivity].

The release. With S the beta-smooth sensitivity of the statistic m (computed at beta (1 - 2^-10), the
relative slack of ``robust.XI_SLACK`` covering float rounding), a public resolution tau and the public
lattice gamma Z (gamma = 2^e <= tau 2^-12), the output is gamma (round(m(x)/gamma) + N), N ~ DLap(c(x)),
P(N = j) = tanh(1/(2c)) e^(-|j|/c), with c(x) = (S(x) + tau)/(alpha gamma) rounded up to a rational of
relative excess <= 2^-30. Every output is a multiple of gamma for every input.

Admissible pairs. For neighbours x, x' write c = c(x), c' = c(x') = e^b c and Delta the difference of
the rounded centres. The smooth sensitivity gives |b| <= beta (the slack absorbs the rounding of c);
the two statistics differ by at most LS(x) and by at most LS(x') (each is the other's neighbour),
so |Delta| <= min(LS(x), LS(x'))/gamma + 1 <= alpha min(c, c') (tau >= gamma); and c, c' >= c_min =
2^12 / alpha.

The bound. The privacy loss at output j is L(j) = nu - |j|/c + |j - Delta|/c', nu = ln tanh(1/(2c))
- ln tanh(1/(2c')).
- b >= 0: tanh(u)/u decreases, so nu <= b; |j - Delta| <= |j| + |Delta| and |Delta|/c' <= alpha e^(-b)
  give L <= b + alpha e^(-b) <= max(alpha, beta + alpha e^(-beta)): required <= eps (no delta here).
- b = -beta' < 0: tanh u <= u and tanh v >= v (1 - v^2/3) give nu <= -beta' + lambda, lambda =
  -ln(1 - 1/(12 c_min^2)); with kappa' = e^(beta') - 1, on the side of j opposite to Delta
  L <= alpha - beta' + lambda + kappa' |j|/c, and on Delta's side L <= alpha for |j| < |Delta| and
  L <= -beta' + lambda + kappa' |j|/c beyond.
The hockey stick is sum_j P(j) (1 - e^(eps - L(j)))_+ and grows with L, so it is at most, per side,
tanh(1/(2c)) sum_{j >= 0} e^(-j/c) (1 - e^(-kappa' (j/c - t0)))_+ with t0 = (eps - a)/kappa' (a the
side's constant). The summand is unimodal, so the sum is at most its integral c e^(-t0) kappa'/(1 +
kappa') plus its maximum e^(-t0) kappa'/e; with tanh(1/(2c)) <= 1/(2c),

    delta <= (kappa / (2 (1 + kappa))) (1 + (1 + kappa)/(e c_min))
             (e^(-(eps - alpha + beta - lambda)/kappa) + e^(-(eps + beta - lambda)/kappa)),
    kappa = e^beta - 1,

each factor increasing in beta' ((a + x)/(e^x - 1) decreases in x), so beta' = beta is the worst
case. ``laplace_smooth_delta`` evaluates it in mpmath, rounded up; ``tests/mechanisms/
test_smooth_laplace.py`` checks it against the exact hockey stick of discrete Laplace pairs.

Choice of (alpha, beta). For an order statistic of a law with density f, the largest local
sensitivity at distance k grows like (k + 1)/(n f), so S ~ e^(beta - 1)/(beta n f) and the noise
scale S/alpha ~ e^beta / (e alpha beta n f). ``laplace_smooth_parameters`` minimises e^beta /
(alpha beta) subject to the bound: at (1, 1e-6) alpha = 0.54, beta = 0.049, so the noise's standard
deviation is about sqrt 2 e^beta / (e alpha beta) = 20.5 spacings 1/(n f), against 31 for Nissim,
Raskhodnikova & Smith's Laplace constants (alpha, beta) = (eps/2, eps/(2 ln(2/delta))) and about 170
for the Laplace-log-normal release at the concentrated-DP eps 0.22 that (1, 1e-6) converts to.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

from accountant import ApproxDP, Guarantee
from accountant.core.validation import check_real

from ..base import Mechanism
from ..samplers import LATTICE_OUTPUT_LIMIT, discrete_laplace_array, floor_log2, from_lattice, to_lattice
from .smooth_sensitivity import LATTICE_BITS, XI_SLACK, ApproxSmoothOrderStatistic
from .stability import check_delta, check_eps, float_up

__all__ = ["SmoothLaplaceQuantile", "laplace_smooth_delta", "laplace_smooth_parameters"]

#: The noise scale c is rounded up to a rational of relative excess at most 2^-SCALE_BITS.
SCALE_BITS = 30
_DPS = 40


def laplace_smooth_delta(eps: float, alpha: float, beta: float, scale_min: float) -> float:
    """An upper bound (mpmath, rounded up) on the delta at ``eps`` of the discrete Laplace release
    with (alpha, beta) admissible pairs and noise scales >= ``scale_min`` (module docstring).
    Raises ValueError when the pure part max(alpha, beta + alpha e^(-beta)) exceeds eps."""
    eps = check_eps(eps)
    alpha = check_real("alpha", alpha, low=0.0, high=1e6, low_open=True)
    beta = check_real("beta", beta, low=0.0, high=1.0, low_open=True)
    cmin = check_real("scale_min", scale_min, low=1.0, high=1e300)
    with mpmath.workdps(_DPS):
        a, b, e, c = mpmath.mpf(alpha), mpmath.mpf(beta), mpmath.mpf(eps), mpmath.mpf(cmin)
        if max(a, b + a * mpmath.exp(-b)) > e:
            raise ValueError(f"alpha = {alpha!r}, beta = {beta!r}: max(alpha, beta + alpha e^-beta) "
                             f"exceeds eps = {eps!r}")
        kappa = mpmath.expm1(b)
        lam = -mpmath.log1p(-1 / (12 * c * c))
        front = kappa / (2 * (1 + kappa)) * (1 + (1 + kappa) / (mpmath.e * c))
        tails = mpmath.exp(-(e - a + b - lam) / kappa) + mpmath.exp(-(e + b - lam) / kappa)
        bound = front * tails
        return min(1.0, float_up(bound * (1 + mpmath.mpf(2) ** -100)))


def _scale_min(alpha: float) -> float:
    """c_min = 2^LATTICE_BITS / alpha: c = (S + tau)/(alpha gamma) with tau >= 2^12 gamma."""
    return 2.0**LATTICE_BITS / alpha


def _float_bound(eps: float, alpha: float, beta: float) -> float:
    """The bound of the module docstring in floats (for the search only; the result is certified)."""
    if max(alpha, beta + alpha * math.exp(-beta)) > eps:
        return math.inf
    c = _scale_min(alpha)
    kappa = math.expm1(beta)
    lam = -math.log1p(-1.0 / (12.0 * c * c))
    front = kappa / (2.0 * (1.0 + kappa)) * (1.0 + (1.0 + kappa) / (math.e * c))
    return front * (math.exp(-(eps - alpha + beta - lam) / kappa) + math.exp(-(eps + beta - lam) / kappa))


def _largest_alpha(eps: float, delta: float, beta: float) -> float:
    """The largest alpha (to 2^-40 relative) with the float bound <= delta, 0.0 if none."""
    lo, hi = 0.0, eps
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _float_bound(eps, mid, beta) <= delta else (lo, mid)
        if hi - lo <= lo * 2.0**-40:
            break
    return lo


@functools.lru_cache(maxsize=64)
def laplace_smooth_parameters(eps: float, delta: float) -> tuple[float, float]:
    """(alpha, beta) minimising e^beta / (alpha beta) (the noise scale of an order statistic, module
    docstring) subject to ``laplace_smooth_delta`` <= delta: beta on the grid (1 + 1/256)^j, alpha the
    largest the bound allows for it (the bound increases with alpha), searched in floats and then
    lowered until the certified bound is <= delta."""
    eps, delta = check_eps(eps), check_delta(delta)
    best: tuple[float, float, float] | None = None
    beta = min(eps, 1.0) * 1e-4
    while beta < min(1.0, eps):
        alpha = _largest_alpha(eps, delta, beta)
        if alpha > 0:
            cost = math.exp(beta) / (alpha * beta)
            if best is None or cost < best[0]:
                best = (cost, alpha, beta)
            elif cost > 2 * best[0]:
                break
        beta *= 1.0 + 1.0 / 256
    if best is None:
        raise ValueError(f"no (alpha, beta) reaches delta = {delta!r} at eps = {eps!r}")
    _, alpha, beta = best
    while laplace_smooth_delta(eps, alpha, beta, _scale_min(alpha)) > delta:
        alpha *= 1.0 - 2.0**-30
    return alpha, beta


@dataclass(frozen=True)
class SmoothLaplaceQuantile(ApproxSmoothOrderStatistic, Mechanism):
    """The smooth-sensitivity q-quantile (default the median) with discrete Laplace noise calibrated
    for (eps, delta) directly (module docstring): data clipped to [lower, upper], the rank-ceil(q n)
    order statistic rounded to the public lattice plus DLap((S_beta(x) + tau)/(alpha gamma)).
    ``alpha`` and ``beta`` default to ``laplace_smooth_parameters(eps, delta)``. Guarantee
    ``ApproxDP(eps, laplace_smooth_delta(eps, alpha, beta, 2^12/alpha))`` (<= delta for the default
    parameters)."""

    alpha: float | None = None
    beta: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.alpha is None and self.beta is None:
            a, b = laplace_smooth_parameters(self.eps, self.delta)
        elif self.alpha is not None and self.beta is not None:
            a = check_real("alpha", self.alpha, low=0.0, high=self.eps, low_open=True)
            b = check_real("beta", self.beta, low=0.0, high=1.0, low_open=True)
        else:
            raise ValueError("give both alpha and beta, or neither")
        object.__setattr__(self, "alpha", a)
        object.__setattr__(self, "beta", b)
        self.declared_delta  # noqa: B018 - raises now if (alpha, beta) break the pure part

    @cached_property
    def declared_delta(self) -> float:
        assert self.alpha is not None and self.beta is not None
        return laplace_smooth_delta(self.eps, self.alpha, self.beta, _scale_min(self.alpha))

    @property
    def smoothing(self) -> float:
        """The beta at which S is computed: beta less the relative slack ``XI_SLACK``."""
        assert self.beta is not None
        return self.beta * (1.0 - XI_SLACK)

    def guarantee(self) -> Guarantee:
        return ApproxDP(self.eps, self.declared_delta)

    def noise_scale(self, data: ArrayLike) -> Fraction:
        """c(x) = (S(x) + tau)/(alpha gamma), rounded up to a rational of relative excess <= 2^-30."""
        assert self.alpha is not None
        exact = ((Fraction(self.smooth_sensitivity(data)) + Fraction(self.tau))
                 / (Fraction(self.alpha) * Fraction(2) ** self.exponent))
        den = 2 ** max(0, SCALE_BITS - floor_log2(exact))
        return Fraction(math.ceil(exact * den), den)

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x = self._data(data)
        e = self.exponent
        centre = int(to_lattice(np.array([np.sort(x)[self.rank - 1]]), e)[0])
        noise = discrete_laplace_array(rng, self.noise_scale(x), (m,))
        # clipping the index to the exactly representable range is post-processing
        return from_lattice(np.clip(centre + noise, -LATTICE_OUTPUT_LIMIT, LATTICE_OUTPUT_LIMIT), e)
