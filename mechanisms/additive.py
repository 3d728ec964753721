"""Additive-noise mechanisms: q(D) + Z with Z Laplace, Gaussian, discrete Laplace or discrete
Gaussian, each calibrated to the sensitivity its query derives.

Guarantees (Delta: the sensitivity of the noise's norm; b, sigma: the scale actually used):

- Laplace: ``FDP(LaplaceTradeoff(Delta_1/b))`` (Dong, Roth & Su 2022, Sec. 2.3); it implies, and is
  tighter than, ``PureDP(Delta_1/b)`` (Dwork, McSherry, Nissim & Smith 2006). For a vector query a
  shift of L1 norm Delta_1 spread over several coordinates yields a product of Laplace curves that
  lies above the single-coordinate curve (checked numerically in the tests), so the 1-d curve is the
  worst case.
- Gaussian: ``GDP(Delta_2/sigma)``, exact for every dimension by rotation invariance (DRS Thm 2.7).
- Discrete Laplace (pmf proportional to exp(-|k|/b) on Z): its privacy loss for an integer shift D
  takes the finitely many values (2m - D)/b, so its curve is held exactly as a
  ``FiniteLossTradeoff``; it implies ``PureDP(D/b)``.
- Discrete Gaussian: ``ZCDP(Delta_2^2/(2 sigma^2))`` (Canonne, Kamath & Steinke 2020, Thm 4; the
  multivariate product case by additivity of Renyi divergence over independent coordinates).

The continuous samplers use numpy's floating-point Laplace and normal draws: they realise the
textbook mechanisms, whose floating-point implementation is open to Mironov's (2012) attack; deploy
the discrete versions, whose samplers are exact (``samplers``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, ClassVar, TypeVar

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import FDP, GDP, ZCDP, ApproxDP, FiniteLossTradeoff, Guarantee, LaplaceTradeoff, PureDP

from .base import Mechanism, OutputKind, OutputSpec
from .calibration import gaussian_sigma, laplace_scale
from .domain import as_expr, free_names, is_numeric, to_float_up
from .queries import Norm, Query
from .samplers import discrete_gaussian_array, discrete_laplace_array

__all__ = ["DiscreteGaussian", "DiscreteLaplace", "Gaussian", "Laplace", "discrete_laplace_tradeoff"]

FloatArray = NDArray[np.float64]


def _bind_expr(expr: Any, values: dict[str, Any]) -> Any:
    subs = {s: as_expr(str(s), values[str(s)]) for s in getattr(expr, "free_symbols", set())
            if str(s) in values}
    return expr.subs(subs) if subs else expr


def meets(g: Guarantee, implied: Guarantee, target: Guarantee) -> bool:
    """Whether a declared guarantee ``g`` (with its closed-form ``implied`` guarantee) meets ``target``,
    compared on the target's own terms."""
    if isinstance(target, PureDP):
        return isinstance(implied, PureDP) and implied.eps <= target.eps
    if isinstance(target, ApproxDP):
        return g.delta(target.eps) <= target.delta_
    if isinstance(target, GDP):
        return isinstance(g, GDP) and g.mu <= target.mu
    if isinstance(target, ZCDP):
        if isinstance(implied, ZCDP):
            return implied.rho <= target.rho
        if isinstance(implied, PureDP):
            return implied.eps**2 / 2.0 <= target.rho
        return isinstance(implied, GDP) and implied.mu**2 / 2.0 <= target.rho
    return False


AdditiveT = TypeVar("AdditiveT", bound="_Additive")

#: Most ulp-sized nudges ``_ensure_target`` applies before giving up.
MAX_NUDGES = 64


def _ensure_target(mech: AdditiveT, target: Guarantee) -> AdditiveT:
    """Floating-point rounding of a declared guarantee (its ratio Delta/scale is rounded up) can miss
    a target met exactly by the closed-form scale by an ulp; when the parameters are numeric, nudge the
    scale up (relative 1e-15 per step) until the declared guarantee meets the target."""
    if not (is_numeric(mech.scale) and is_numeric(mech.sensitivity)):
        return mech
    for _ in range(MAX_NUDGES):
        if meets(mech.guarantee(), mech.standard_guarantee(), target):
            return mech
        bumped = Fraction(math.nextafter(float(mech.scale) * (1.0 + 1e-15), math.inf))
        mech = replace(mech, scale=sympy.Rational(bumped.numerator, bumped.denominator))
    raise ArithmeticError(f"could not meet {target} after {MAX_NUDGES} nudges of the noise scale")


def _rational_up(name: str, expr: Any) -> Fraction:
    """An exact rational >= expr: expr itself when rational, else its float rounded up."""
    if isinstance(expr, sympy.Rational):
        return Fraction(int(expr.p), int(expr.q))
    return Fraction(to_float_up(name, expr))


@dataclass(frozen=True)
class _Additive(Mechanism):
    """q(D) + noise; ``scale`` is the noise parameter (sympy, symbolic until bound)."""

    query: Query
    scale: Any

    norm: ClassVar[Norm] = "l1"
    kind: ClassVar[OutputKind] = "continuous"
    scale_name: ClassVar[str] = "scale"

    def __post_init__(self) -> None:
        if not isinstance(self.query, Query):
            raise TypeError(f"query must be a mechanisms Query, got {type(self.query).__name__}")
        s = as_expr(self.scale_name, self.scale)
        if is_numeric(s) and not bool(s > 0):
            raise ValueError(f"{self.scale_name} must be > 0, got {self.scale!r}")
        object.__setattr__(self, "scale", s)

    # ----- declaration ------------------------------------------------------------------------
    @property
    def sensitivity(self) -> Any:
        return self.query.sensitivity(self.norm)

    def bind(self, **values: Any) -> _Additive:
        """Bind the query's and the scale's symbols by name."""
        names = {str(s) for s in self.query.free_symbols} | set(free_names(self.scale))
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"unknown symbol(s) {unknown}; this mechanism's symbols are {sorted(names)}")
        qvals = {k: v for k, v in values.items() if k in {str(s) for s in self.query.free_symbols}}
        return replace(self, query=self.query._bind(qvals), scale=_bind_expr(self.scale, values))

    def _delta(self) -> float:
        return to_float_up(f"sensitivity ({self.norm})", self.sensitivity)

    def _scale(self) -> float:
        if not is_numeric(self.scale):
            raise ValueError(f"{self.scale_name} = {self.scale} still depends on "
                             f"{', '.join(free_names(self.scale))}; bind them first")
        return float(self.scale)

    def _ratio_up(self) -> float:
        """Delta / scale, with the scale the sampler actually uses (a float), rounded up."""
        return to_float_up("Delta/scale", self.sensitivity / sympy.Rational(self._scale()))

    @property
    def output(self) -> OutputSpec:
        k = self.query.output_dim
        if not is_numeric(k):
            raise ValueError(f"output dimension {k} is symbolic; bind it first")
        shape: tuple[int, ...] = () if int(k) == 1 else (int(k),)
        support = "R" if self.kind == "continuous" else "Z"
        return OutputSpec(self.kind, shape, support if not shape else f"{support}^{shape[0]}")

    def explain(self) -> str:
        try:
            declared = str(self.guarantee())
        except ValueError as exc:
            declared = f"not yet numeric ({exc})"
        return (f"{type(self).__name__} noise, {self.scale_name} = {self.scale}, calibrated to "
                f"Delta_{self.norm[1:]} of\n{self.query.explain()}\n  guarantee: {declared}")

    def _repr_latex_(self) -> str:
        return (rf"$\text{{{type(self).__name__}}}:\ {self.scale_name} = {sympy.latex(self.scale)},\quad "
                rf"\Delta = {sympy.latex(self.sensitivity)}$")

    # ----- sampling -----------------------------------------------------------------------------
    def _values(self, data: ArrayLike) -> FloatArray:
        return self.query(data)

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[Any]:
        raise NotImplementedError

    def _log_density(self, z: FloatArray) -> FloatArray:
        """Log density (up to a constant) of the noise at each row of z, summed over coordinates."""
        raise NotImplementedError

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        f = self._values(data)
        out = np.asarray(f[None, :] + self._noise(rng, (m, f.size)))
        return out.reshape((m, *self.output.shape))

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        """log p_data(y) - log p_data2(y) for outputs y stacked on axis 0 (or a single output)."""
        shape = self.output.shape
        arr = self._validate_pair(y, shape).reshape(-1, max(1, math.prod(shape)))
        f1, f2 = self._values(data), self._values(data2)
        return self._log_density(arr - f1[None, :]) - self._log_density(arr - f2[None, :])


# ============================================================================ continuous


@dataclass(frozen=True)
class Laplace(_Additive):
    """q(D) + Lap(b)^k (Dwork, McSherry, Nissim & Smith 2006); ``Laplace(query, scale=b)``.

    guarantee(): ``FDP(LaplaceTradeoff(Delta_1/b))``; standard_guarantee(): ``PureDP(Delta_1/b)``.
    """

    norm: ClassVar[Norm] = "l1"

    @classmethod
    def calibrated(cls, query: Query, target: Guarantee) -> Laplace:
        """The Laplace mechanism meeting ``target`` with the least noise (``calibration``)."""
        return _ensure_target(cls(query, laplace_scale(query.l1, target)), target)

    def guarantee(self) -> Guarantee:
        return FDP(LaplaceTradeoff(self._ratio_up()))

    def standard_guarantee(self) -> Guarantee:
        return PureDP(self._ratio_up())

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[Any]:
        return rng.laplace(0.0, self._scale(), size=shape)

    def _log_density(self, z: FloatArray) -> FloatArray:
        return np.asarray(-np.abs(z).sum(axis=1) / self._scale(), dtype=np.float64)


@dataclass(frozen=True)
class Gaussian(_Additive):
    """q(D) + N(0, sigma^2 I); ``Gaussian(query, sigma)``; guarantee ``GDP(Delta_2/sigma)``.

    ``Gaussian.calibrated(query, target, method)`` solves sigma for GDP and zCDP in closed form and
    for (eps, delta) by the analytic Gaussian mechanism (Balle & Wang 2018) or, as a baseline,
    the classic formula (Dwork & Roth Thm A.1, eps < 1 only).
    """

    norm: ClassVar[Norm] = "l2"
    scale_name: ClassVar[str] = "sigma"

    @property
    def sigma(self) -> Any:
        return self.scale

    @classmethod
    def calibrated(cls, query: Query, target: Guarantee, method: str = "analytic") -> Gaussian:
        return _ensure_target(cls(query, gaussian_sigma(query.l2, target, method=method)),
                              target)

    def guarantee(self) -> Guarantee:
        if self._delta() == 0.0:
            return PureDP(0.0)
        return GDP(self._ratio_up())

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[Any]:
        return rng.normal(0.0, self._scale(), size=shape)

    def _log_density(self, z: FloatArray) -> FloatArray:
        return np.asarray(-(z**2).sum(axis=1) / (2.0 * self._scale() ** 2), dtype=np.float64)


# ============================================================================ discrete


def discrete_laplace_tradeoff(shift: int, scale: float) -> FiniteLossTradeoff:
    """Exact T(P, Q) for P = DLap(b), Q = shift + DLap(b), pmf proportional to exp(-|k|/b) on Z.

    With r = exp(-1/b) the loss log(q/p)(y) is shift/b for y >= shift (Q-mass 1/(1+r)), -shift/b for
    y <= 0 (Q-mass r^shift/(1+r)) and (2y - shift)/b in between (Q-mass (1-r) r^(shift-y)/(1+r)).
    """
    if isinstance(shift, bool) or not isinstance(shift, int) or shift < 0:
        raise ValueError(f"shift must be a non-negative int, got {shift!r}")
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale!r}")
    if shift == 0:
        return FiniteLossTradeoff.from_losses([0.0], [1.0])
    log_r = -1.0 / scale
    m = np.arange(1, shift)
    losses = np.concatenate([[shift / scale, -shift / scale], (2 * m - shift) / scale])
    log_norm = -math.log1p(math.exp(log_r))  # log 1/(1+r)
    q = np.concatenate([[math.exp(log_norm), math.exp(shift * log_r + log_norm)],
                        -math.expm1(log_r) * np.exp((shift - m) * log_r + log_norm)])
    return FiniteLossTradeoff.from_losses(losses, q)


class _DiscreteMixin(_Additive):
    kind: ClassVar[OutputKind] = "discrete"

    def _values(self, data: ArrayLike) -> FloatArray:
        f = self.query(data)
        if not np.array_equal(f, np.round(f)):
            raise ValueError(f"{type(self).__name__} needs an integer-valued query; "
                             f"{self.query.describe()} returned {f[:5].tolist()}")
        return f

    def _integer_delta(self) -> int:
        """Largest integer shift allowed by the sensitivity (integer-valued queries move by integers)."""
        return math.floor(self._delta())


@dataclass(frozen=True)
class DiscreteLaplace(_DiscreteMixin):
    """q(D) + Z, Z with pmf proportional to exp(-|k|/b) on Z^k (the two-sided geometric; Ghosh,
    Roughgarden & Sundararajan 2009), sampled exactly (CKS 2020, Alg. 2). ``scale`` b is rational
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
            f = _rational_up("scale", sympy.nsimplify(b) if isinstance(b, sympy.Float) else b)
            b = sympy.Rational(f.numerator, f.denominator)
        return _ensure_target(cls(query, b), target)

    def _fraction(self) -> Fraction:
        self._scale()
        return _rational_up("scale", self.scale)

    def guarantee(self) -> Guarantee:
        return FDP(discrete_laplace_tradeoff(self._integer_delta(), float(self._fraction())))

    def standard_guarantee(self) -> Guarantee:
        b = self._fraction()
        return PureDP(to_float_up("Delta/scale", sympy.Rational(self._integer_delta() * b.denominator,
                                                                b.numerator)))

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[Any]:
        return discrete_laplace_array(rng, self._fraction(), shape)

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        f = self._values(data).astype(np.int64)
        out = np.asarray(f[None, :] + self._noise(rng, (m, f.size)))
        return out.reshape((m, *self.output.shape))

    def _log_density(self, z: FloatArray) -> FloatArray:
        return np.asarray(-np.abs(z).sum(axis=1) / float(self._fraction()), dtype=np.float64)


@dataclass(frozen=True)
class DiscreteGaussian(_DiscreteMixin):
    """q(D) + Z, Z with pmf proportional to exp(-k^2/(2 sigma^2)) on Z^k, sampled exactly
    (Canonne, Kamath & Steinke 2020, Alg. 3); guarantee ``ZCDP(Delta_2^2/(2 sigma^2))`` (CKS Thm 4).
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
            raise ValueError(f"DiscreteGaussian is calibrated to ZCDP targets (CKS 2020 Thm 4), got "
                             f"{type(target).__name__}")
        return _ensure_target(cls(query, gaussian_sigma(query.l2, target)), target)

    def _sigma2(self) -> Fraction:
        self._scale()
        return _rational_up("sigma^2", sympy.nsimplify(self.scale**2) if isinstance(self.scale, sympy.Float)
                            else sympy.simplify(self.scale**2))

    def guarantee(self) -> Guarantee:
        s2 = self._sigma2()  # the variance parameter the sampler uses (>= sigma^2)
        return ZCDP(to_float_up("rho", self.sensitivity**2 * s2.denominator / (2 * s2.numerator)))

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[Any]:
        return discrete_gaussian_array(rng, self._sigma2(), shape)

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        f = self._values(data).astype(np.int64)
        out = np.asarray(f[None, :] + self._noise(rng, (m, f.size)))
        return out.reshape((m, *self.output.shape))

    def _log_density(self, z: FloatArray) -> FloatArray:
        return np.asarray(-(z**2).sum(axis=1) / (2.0 * float(self._sigma2())), dtype=np.float64)
