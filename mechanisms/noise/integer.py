"""Integer noise for integer-valued queries: discrete Laplace (pmf proportional to exp(-|k|/b) on Z)
with its exact ``FiniteLossTradeoff`` (it implies ``PureDP(D/b)``), and discrete Gaussian with the
exact truncated curve for scalar queries and the closed-form guarantee
``ZCDP(Delta_2^2/(2 sigma^2))`` [@canonne2020discrete, Thm 4]. Both are sampled exactly
(``mechanisms.samplers``) and added in integer arithmetic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import (
    FDP,
    ZCDP,
    Guarantee,
    PureDP,
)
from accountant.core.types import FloatArray

from ..base import OutputKind
from ..calibration import gaussian_sigma, laplace_scale
from ..domain import is_numeric, to_float_up
from ..queries import Norm, Query
from ..samplers import discrete_gaussian_array, discrete_laplace_array
from .additive import (
    GAUSS_CURVE_MAX,
    AdditiveMechanism,
    ensure_target,
    gaussian_curve,
    gaussian_curve_size,
    laplace_curve,
    rational_up,
)

__all__ = ["DiscreteGaussian", "DiscreteLaplace"]


class _DiscreteMixin(AdditiveMechanism):
    kind: ClassVar[OutputKind] = "discrete"

    def _values(self, data: ArrayLike) -> FloatArray:
        f = self.query(data)
        if not np.array_equal(f, np.round(f)):
            raise ValueError(f"{type(self).__name__} needs an integer-valued query; "
                             f"{self.query.describe()} returned {f[:5].tolist()}")
        return f

    def _integer_delta(self) -> int:
        """Largest integer shift allowed by the sensitivity (integer-valued queries move by integers)."""
        return math.floor(self._sensitivity_up())

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        f = self._values(data).astype(np.int64)  # exact integer arithmetic: no floating-point leak
        out = np.asarray(f[None, :] + self._noise(rng, (m, f.size)))
        return out.reshape((m, *self.output.shape))


@dataclass(frozen=True, repr=False)
class DiscreteLaplace(_DiscreteMixin):
    """q(D) + Z, Z with pmf proportional to exp(-|k|/b) on Z^k (the two-sided geometric
    [@ghosh2009universally]), sampled exactly [@canonne2020discrete, Alg. 2]. ``scale`` b is rational
    (a float is taken at its exact binary value). Needs an integer-valued query.
    """

    norm: ClassVar[Norm] = "l1"

    @classmethod
    def calibrated(cls, query: Query, target: Guarantee) -> DiscreteLaplace:
        """b = Delta_1/eps for PureDP(eps) (rounded up to a rational when not rational); ZCDP via
        eps-DP => eps^2/2-zCDP."""
        if not isinstance(target, (PureDP, ZCDP)):
            raise ValueError(f"DiscreteLaplace is calibrated to PureDP or ZCDP targets, got "
                             f"{type(target).__name__}")
        b = laplace_scale(query.l1, target)
        if is_numeric(b):
            f = rational_up("scale", sympy.nsimplify(b) if isinstance(b, sympy.Float) else b)
            b = sympy.Rational(f.numerator, f.denominator)
        return ensure_target(cls(query, b), target)

    def _fraction(self) -> Fraction:
        self._scale()
        return rational_up("scale", self.scale)

    def guarantee(self) -> Guarantee:
        return FDP(laplace_curve(self._integer_delta(), float(self._fraction())))

    def closed_form_guarantee(self) -> Guarantee:
        b = self._fraction()
        return PureDP(to_float_up("Delta/scale", sympy.Rational(self._integer_delta() * b.denominator,
                                                                b.numerator)))

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[Any]:
        return discrete_laplace_array(rng, self._fraction(), shape)

    @cached_property
    def _scale_float(self) -> float:
        """float(b) of the exact scale, computed once (the mechanism is frozen)."""
        return float(self._fraction())

    def _log_density(self, z: FloatArray) -> FloatArray:
        return np.asarray(-np.abs(z).sum(axis=1) / self._scale_float, dtype=np.float64)


@dataclass(frozen=True, repr=False)
class DiscreteGaussian(_DiscreteMixin):
    """q(D) + Z, Z with pmf proportional to exp(-k^2/(2 sigma^2)) on Z^k, sampled exactly
    [@canonne2020discrete, Alg. 3]; guarantee ``ZCDP(Delta_2^2/(2 sigma^2))`` [@canonne2020discrete, Thm 4].
    sigma^2 is used exactly when rational, else rounded up to a rational (more noise than declared).
    """

    norm: ClassVar[Norm] = "l2"
    scale_name: ClassVar[str] = "sigma"

    @property
    def sigma(self) -> Any:
        return self.scale

    @classmethod
    def calibrated(cls, query: Query, target: Guarantee) -> DiscreteGaussian:
        """sigma = Delta_2/sqrt(2 rho) for a ZCDP(rho) target (the only family proven for it here)."""
        if not isinstance(target, ZCDP):
            raise ValueError(f"DiscreteGaussian is calibrated to ZCDP targets, got "
                             f"{type(target).__name__}")
        return ensure_target(cls(query, gaussian_sigma(query.l2, target)), target)

    def _sigma2(self) -> Fraction:
        self._scale()
        return rational_up("sigma^2", sympy.nsimplify(self.scale**2) if isinstance(self.scale, sympy.Float)
                            else sympy.simplify(self.scale**2))

    def guarantee(self) -> Guarantee:
        """For a scalar query with a curve of at most ``GAUSS_CURVE_MAX`` points: the exact curve
        ``gaussian_curve(floor(Delta_2), sigma^2)`` (integer queries shift by integers),
        which implies the zCDP of ``closed_form_guarantee()``; otherwise that zCDP."""
        k = self._integer_delta()
        s2 = self._sigma2()
        if k > 0 and self._dim() == 1 and gaussian_curve_size(k, s2) <= GAUSS_CURVE_MAX:
            return FDP(gaussian_curve(k, s2))
        return self.closed_form_guarantee()

    def closed_form_guarantee(self) -> Guarantee:
        s2 = self._sigma2()  # the variance parameter the sampler uses (>= sigma^2)
        return ZCDP(to_float_up("rho", self.sensitivity**2 * s2.denominator / (2 * s2.numerator)))

    def _dim(self) -> int:
        k = self.query.output_dim
        if not is_numeric(k):
            raise ValueError(f"output dimension {k} is symbolic; bind it first")
        return int(k)

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[Any]:
        return discrete_gaussian_array(rng, self._sigma2(), shape)

    def _log_density(self, z: FloatArray) -> FloatArray:
        return np.asarray(-(z**2).sum(axis=1) / (2.0 * float(self._sigma2())), dtype=np.float64)
