"""Closed-form trade-off curves: the Gaussian G_mu and the Laplace curve [@dong2022gaussian], with the
Gaussian privacy profile rounded up.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import numpy as np
from numpy.typing import ArrayLike

from accountant.core.normal import log_ndtr, ndtr
from accountant.core.rounding import LIBM_REL, round_up
from accountant.core.types import UNIT_ROUNDOFF, FloatArray
from accountant.core.validation import check_real
from accountant.notions.tradeoff import CURVES, LossMoments, TradeoffFunction


def gaussian_profile(mu: float, eps: ArrayLike) -> FloatArray:
    """Privacy profile of mu-GDP [@dong2022gaussian, Cor. 2.13], rounded up:

    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

    Each value is evaluated with mpmath (``_gaussian_profile_mp``) and rounded up to a double: a
    float log Phi errs in the far tail by a few u per unit of |log Phi| (scipy's ``log_ndtr`` by up
    to ~5e-14), which the exponential turns into relative errors of 1e-13 and more, and the
    difference of the two terms cancels.
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


#: The absolute error of ``ndtr`` where Phi is subnormal (3 ulps of 0.0) and a product's rounding.
_SUBNORMAL_SLACK = 4.0 * math.ulp(0.0)


@dataclass(frozen=True)
class GaussianTradeoff(TradeoffFunction):
    """G_mu(a) = Phi(Phi^{-1}(1 - a) - mu) = T(N(0,1), N(mu,1)) [@dong2022gaussian, Def. 2.7]."""

    mu: float

    def __post_init__(self) -> None:
        check_real("mu", self.mu, low=0.0, high=math.inf, high_open=True)

    def _beta(self, alpha: FloatArray) -> FloatArray:
        # Phi^{-1}(1 - a) = -ndtri(a) keeps accuracy for tiny a. Rounded down: an error of ulps
        # of |z| + mu in x becomes a relative error of phi(x)/Phi(x) times it in ndtr(x) (itself
        # within 7 u); against mpmath at 50 digits the error stays below 4.4 u (1 + (|z| + mu)
        # phi(x)/Phi(x)) (alpha from 5e-324 to 1 - 2^-53, mu from 1e-3 to 40:
        # tests/accountant/notions/test_gaussian_rounding.py), and 16 of those are taken off.
        # Where Phi(x) is subnormal the error is absolute (ndtr's 3 subnormal ulps, the product's
        # rounding half of one): 4 subnormal ulps more are taken off.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            from scipy import special  # imported on use: scipy.special is slow to import

            z = special.ndtri(alpha)
            x = -z - self.mu
            hazard = np.exp(-0.5 * x * x - 0.5 * math.log(2.0 * math.pi) - log_ndtr(x))
            scale = np.where(np.isfinite(z), 1.0 + (np.abs(z) + self.mu) * hazard, 0.0)
            beta = ndtr(x) * (1.0 - 16.0 * UNIT_ROUNDOFF * scale) - _SUBNORMAL_SLACK
        return np.asarray(np.maximum(beta, 0.0), dtype=np.float64)

    def _profile(self, eps: FloatArray) -> FloatArray:
        if self.mu == 0.0:  # 1 - e^eps below 0: expm1's LIBM_REL and the product, rounded up
            return np.where(eps >= 0.0, 0.0, np.minimum(
                -np.expm1(np.minimum(eps, 0.0)) * (1.0 + LIBM_REL + 2.0 * UNIT_ROUNDOFF), 1.0))
        return gaussian_profile(self.mu, eps)

    @property
    def is_symmetric(self) -> bool:
        return True

    def inverse(self) -> TradeoffFunction:
        return self

    def loss_moments(self) -> LossMoments:
        m = self.mu
        return LossMoments(kl=m * m / 2, kappa2=m * m + m**4 / 4,
                           kappa3=2.0 * math.sqrt(2.0 / math.pi) * m**3)

    def __repr__(self) -> str:
        return f"G_{self.mu:g}"


@dataclass(frozen=True)
class LaplaceTradeoff(TradeoffFunction):
    """Laplace mechanism with Delta/b = eps: T(Lap(0,1), Lap(eps,1)) [@dong2022gaussian, Sec. 2.3].

    f(a) = 1 - e^eps a on [0, e^-eps/2], e^-eps/(4a) on [e^-eps/2, 1/2], e^-eps (1 - a) after.
    """

    eps: float

    def __post_init__(self) -> None:
        check_real("eps", self.eps, low=0.0, high=math.inf, high_open=True)

    def _beta(self, alpha: FloatArray) -> FloatArray:
        e = self.eps
        w = math.exp(-e)
        with np.errstate(divide="ignore"):
            mid = w / (4.0 * alpha)
        beta = np.where(alpha < w / 2, 1.0 - alpha / w, np.where(alpha <= 0.5, mid, w * (1 - alpha)))
        # each branch within exp's LIBM_REL and three roundings
        return np.asarray(beta * (1.0 - LIBM_REL - 4.0 * UNIT_ROUNDOFF), dtype=np.float64)

    def _profile(self, eps: FloatArray) -> FloatArray:
        # delta(t) = 1 - e^{(t - eps)/2} on [-eps, eps], 0 above, 1 - e^t below.
        e = self.eps
        mid = -np.expm1((np.minimum(eps, e) - e) / 2.0)
        out = np.where(eps >= e, 0.0, np.where(eps >= -e, mid, -np.expm1(np.minimum(eps, 0.0))))
        # expm1's LIBM_REL, its argument's u (expm1 on (-inf, 0] is at most as sensitive), and the
        # product: rounded up
        return np.asarray(out * (1.0 + LIBM_REL + 4.0 * UNIT_ROUNDOFF), dtype=np.float64)

    @property
    def is_symmetric(self) -> bool:
        return True

    def inverse(self) -> TradeoffFunction:
        return self

    def loss_moments(self) -> LossMoments:
        # Under P = Lap(0,1): L = -eps for y < 0 (mass 1/2), eps for y > eps (mass e^-eps/2),
        # 2y - eps in between (density e^-y / 2).
        e = self.eps

        from scipy import integrate  # imported on use: slow to import

        def moment(g: Callable[[float], float]) -> float:
            body, _ = integrate.quad(lambda y: g(2 * y - e) * math.exp(-y) / 2, 0.0, e)
            return 0.5 * g(-e) + 0.5 * math.exp(-e) * g(e) + body

        mean = moment(lambda v: v)
        return LossMoments(kl=-mean, kappa2=moment(lambda v: v * v),
                           kappa3=moment(lambda v: abs(v - mean) ** 3))

    def __repr__(self) -> str:
        return f"Laplace(eps={self.eps:g})"


CURVES.register(GaussianTradeoff, "gaussian")


CURVES.register(LaplaceTradeoff, "laplace")
