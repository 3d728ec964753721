"""Float-to-lattice noise: ``Laplace`` and ``Gaussian`` releases that are exact multiples of a
power-of-two lattice, so the declared guarantee covers what is sampled in floating point.

Float safety. Adding floating-point Laplace or Gaussian draws to a double is not private: the set of
reachable doubles depends on the input [@mironov2012significance]. ``Laplace`` and ``Gaussian`` therefore
sample on a lattice by default (``sampler="grid"``): with gamma = 2^e a power of two chosen from the scale,

    output = gamma * (round(q(D)/gamma) + Z),   Z exact integer noise (``samplers``),

Z ~ discrete Laplace with integer parameter t = ceil(b/gamma) (``LAPLACE_GRID_BITS``: gamma ~ b 2^-16)
or discrete Gaussian with integer variance s2 = ceil(sigma^2/gamma^2) (``GAUSSIAN_GRID_BITS``:
gamma ~ sigma 2^-12, so the exact vectorised sampler applies). Every output is an exact double
multiple of gamma and the output law is a shift, by an integer number of grid steps, of one
input-independent pmf. Rounding moves each coordinate by at most gamma/2, so neighbours differ by an
integer shift vector k with |k_j| <= |Delta_j|/gamma + 1, hence ||k||_1 <= K1 = floor(Delta_1/gamma) + d
and ||k||_2^2 <= K2 = floor((Delta_2/gamma + sqrt(d))^2) (K2 = (floor(Delta_2/gamma) + 1)^2 for d = 1).
The declared guarantees are those of the lattice pair, exactly (Delta: the query's sensitivity, which
must hold for the query as evaluated in floating point):

- Laplace, d = 1: ``FDP(laplace_curve(K1, t))``, the exact curve of (DLap(t), K1 + DLap(t))
  (K1 + 1 loss values; above ``LAPLACE_CURVE_MAX`` only the pure DP below). It is NOT dominated by
  ``LaplaceTradeoff(K1/t)``: both profiles agree at the loss values l_j = (2j - K1)/t but the discrete
  one is above in between (tests). It is dominated by ``LaplaceTradeoff((K1 + 2)/t)``: the discrete
  profile is non-increasing, so on [l_j, l_{j+1}) it is at most its value at l_j, the continuous
  profile at eps = K1/t there, which is the (K1 + 2)/t profile at l_j + 2/t > eps (calibration to
  (eps, delta) uses this). d > 1: ``PureDP(K1/t)`` (the log pmf ratio is at most ||k||_1/t).
  closed form: ``PureDP(K1/t)``.
- Gaussian, d = 1: ``FDP(gaussian_curve(k, s2))``, the exact curve of
  (N_Z(0, s2), N_Z(k, s2)), k = floor(Delta_2/gamma) + 1, on |y| <= k + 40 sqrt(s2) with the tails moved
  to the atoms at +-infinity (pessimistic); closed form: ``GDP(k (1 + 2^-16)/sqrt(s2))`` when the curve is
  verified above that Gaussian curve at every knot (which suffices: a piecewise-linear curve minus a
  convex one is concave between knots), else ``ZCDP(k^2/(2 s2))``. d > 1: ``ZCDP(K2/(2 s2))``
  [@canonne2020discrete, Thm 4, additive over coordinates]; GDP is not claimed.
- Both curves are monotone in the shift (monotone likelihood ratio), so the worst shift is the bound.

``sampler="float"`` keeps the textbook floating-point construction (numpy's ``laplace``/``normal``
added to the answer) with the guarantees of the real-valued mechanisms: ``FDP(LaplaceTradeoff(
Delta_1/b))`` [@dong2022gaussian, Sec. 2.3] (the 1-d curve for vectors: see the spread-shift test)
and ``GDP(Delta_2/sigma)`` [@dong2022gaussian, Thm 2.7]. It is NOT private as implemented
[@mironov2012significance] (``verify.audit``
refutes it through its IEEE-754 granularity region) and exists only for comparisons and audits.

"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import (
    FDP,
    GDP,
    ZCDP,
    ApproxDP,
    Guarantee,
    LaplaceTradeoff,
    PureDP,
    calibrate,
    discrete_gaussian_is_gdp,
)
from accountant.core.types import FloatArray

from ..base import OutputSpec
from ..calibration import gaussian_sigma, laplace_scale
from ..domain import is_numeric
from ..queries import Norm, Query
from ..samplers import discrete_gaussian_array, discrete_laplace_array, floor_log2, from_lattice, to_lattice
from .additive import (
    GAUSS_CURVE_MAX,
    LAPLACE_CURVE_MAX,
    AdditiveMechanism,
    ensure_target,
    float_up,
    gaussian_curve,
    gaussian_curve_size,
    laplace_curve,
    rational_up,
    sqrt_up,
)

__all__ = ["Gaussian", "Laplace"]

Sampler = Literal["grid", "float"]
#: Lattice spacing of the grid samplers: gamma = 2^(floor(log2 scale) - bits).
LAPLACE_GRID_BITS = 16
GAUSSIAN_GRID_BITS = 12
#: Relative margin of the GDP parameter verified for the 1-d lattice Gaussian.
GDP_MARGIN = Fraction(1, 2**16)


@dataclass(frozen=True, repr=False)
class _Continuous(AdditiveMechanism):
    """Laplace / Gaussian: ``sampler="grid"`` (default, float-safe) or ``"float"`` (unsafe
    [@mironov2012significance])."""

    sampler: Sampler = "grid"
    grid_bits: ClassVar[int] = LAPLACE_GRID_BITS

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.sampler not in ("grid", "float"):
            raise ValueError(f"sampler must be 'grid' (float-safe) or 'float' (unsafe, for comparisons), "
                             f"got {self.sampler!r}")

    def _dim(self) -> int:
        k = self.query.output_dim
        if not is_numeric(k):
            raise ValueError(f"output dimension {k} is symbolic; bind it first")
        return int(k)

    def _exact_scale(self) -> Fraction:
        if not is_numeric(self.scale):
            self._scale()  # raises, naming the free symbols
        return rational_up(self.scale_name, self.scale)

    def grid_exponent(self) -> int:
        """e with gamma = 2^e = 2^(floor(log2 scale) - grid_bits): the lattice of the grid sampler."""
        return floor_log2(self._exact_scale()) - self.grid_bits

    def _gamma(self) -> Fraction:
        return Fraction(2) ** self.grid_exponent()

    def _sensitivity_exact(self) -> Fraction:
        return rational_up(f"sensitivity ({self.norm})", self.sensitivity)

    @property
    def output(self) -> OutputSpec:
        return self._output_spec

    @cached_property
    def _output_spec(self) -> OutputSpec:
        spec = super().output
        if self.sampler == "float" or not is_numeric(self.scale):
            return spec
        lattice = f"2^{self.grid_exponent()} Z"
        support = lattice if not spec.shape else f"({lattice})^{spec.shape[0]}"
        return OutputSpec(spec.kind, spec.shape, support)

    def explain(self) -> str:
        note = ("lattice sampler (float-safe)" if self.sampler == "grid"
                else "floating-point sampler (NOT float-safe, Mironov 2012)")
        return f"{super().explain()}\n  sampler: {note}"

    # lattice noise -----------------------------------------------------------------------------
    @cached_property
    def _lattice(self) -> tuple[int, Fraction, tuple[int, ...]]:
        """(e, the integer noise's parameter, the output shape) of the grid sampler, computed on the
        first release and kept: the mechanism is frozen, so they cannot change."""
        return self.grid_exponent(), self._noise_parameter(), self.output.shape

    def _noise_parameter(self) -> Fraction:
        """The parameter of the integer noise added to the lattice index."""
        raise NotImplementedError

    def _lattice_noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[np.int64]:
        raise NotImplementedError

    def _lattice_log_pmf(self, z: FloatArray) -> FloatArray:
        """Log pmf (up to a constant) of the integer noise at each row of z, summed over coordinates."""
        raise NotImplementedError

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        if self.sampler == "float":
            return super()._sample(data, rng, m)
        e, _, shape = self._lattice
        idx = to_lattice(self._values(data), e)
        out = from_lattice(idx[None, :] + self._lattice_noise(rng, (m, idx.size)), e)
        return out.reshape((m, *shape))

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        """log p_data(y) - log p_data2(y): a density ratio for ``sampler="float"``, the pmf ratio on the
        lattice for ``sampler="grid"`` (outputs off the lattice have probability 0 under both)."""
        if self.sampler == "float":
            return super().privacy_loss(y, data, data2)
        shape = self.output.shape
        arr = self._validate_pair(y, shape).reshape(-1, max(1, math.prod(shape)))
        e = self._lattice[0]
        n = np.ldexp(arr, -e)
        r1 = to_lattice(self._loss_values(data), e).astype(np.float64)
        r2 = to_lattice(self._loss_values(data2), e).astype(np.float64)
        return self._lattice_log_pmf(n - r1[None, :]) - self._lattice_log_pmf(n - r2[None, :])

    # calibration -------------------------------------------------------------------------------
    @classmethod
    def _grid_factor(cls, ratio: Any, dim: Any, margin: Fraction, extra: int = 0) -> Any:
        """c >= 1 such that scale c * b0 absorbs the lattice rounding: the lattice ratio
        (shift bound + extra)/(lattice scale) is <= Delta/(c b0) + w with w = 2^-bits * (d for L1,
        sqrt(d) for L2, plus ``extra`` grid steps), and (Delta/(c b0) + w)(1 + margin) <= Delta/b0 = ratio
        when c = 1 / (1/(1 + margin) - w/ratio); a relative 2^-40 more covers rounding up to doubles."""
        w = sympy.Rational(1, 2**cls.grid_bits) * ((dim if cls.norm == "l1" else sympy.sqrt(dim)) + extra)
        m = sympy.Rational(margin.numerator, margin.denominator)
        denom = 1 / (1 + m) - w / ratio
        if is_numeric(denom) and not bool(denom > 0):
            raise ValueError(f"the target needs a ratio Delta/scale = {ratio} below the lattice resolution; "
                             "use a weaker target")
        return (1 + sympy.Rational(1, 2**40)) / denom


_ContT = TypeVar("_ContT", bound="_Continuous")


def _grid_calibrate(cls: type[_ContT], query: Query, base_scale: Any, target: Guarantee,
                    margin: Fraction, extra: int = 0) -> _ContT:
    """The grid mechanism with scale c * base_scale (``_Continuous._grid_factor``), then, when numeric,
    checked against ``target`` and increased to the least scale that meets it (``_ensure_target``)."""
    sens = query.sensitivity(cls.norm)
    ratio = sens / base_scale
    scale = base_scale * cls._grid_factor(ratio, query.output_dim, margin, extra)
    mech = cls(query, scale, sampler="grid")
    if not (is_numeric(mech.scale) and is_numeric(mech.sensitivity) and is_numeric(query.output_dim)):
        return mech
    # the factor assumed the coarsest lattice (gamma = scale 2^-bits); with the actual gamma the
    # lattice ratio is <= (Delta + w gamma)/scale, so c = (1 + margin)(1 + w gamma/Delta)(1 + 2^-40)
    gamma, delta = mech._gamma(), mech._sensitivity_exact()
    d = mech._dim()
    if delta > 0:
        w = (Fraction(d) if cls.norm == "l1" else sqrt_up(Fraction(d))) + extra
        exact = (rational_up("scale", base_scale) * (1 + margin) * (1 + w * gamma / delta)
                 * (1 + Fraction(1, 2**40)))
        refined = replace(mech, scale=sympy.Rational(exact.numerator, exact.denominator))
        if refined._gamma() == gamma:
            mech = refined
    return ensure_target(mech, target)



@dataclass(frozen=True, repr=False)
class Laplace(_Continuous):
    """q(D) + Laplace noise of scale b; ``Laplace(query, scale=b, sampler="grid")``.

    The default sampler releases gamma (round(q/gamma) + Z), Z ~ DLap(t), t = ceil(b/gamma) (module
    docstring); guarantee() ``FDP(laplace_curve(K1, t))`` for d = 1, ``PureDP(K1/t)`` for d > 1;
    closed_form_guarantee() ``PureDP(K1/t)``. ``sampler="float"``: Lap(b) in floating point (unsafe),
    ``FDP(LaplaceTradeoff(Delta_1/b))`` / ``PureDP(Delta_1/b)`` [@dwork2006calibrating].
    """

    norm: ClassVar[Norm] = "l1"
    grid_bits: ClassVar[int] = LAPLACE_GRID_BITS

    @classmethod
    def calibrated(cls, query: Query, target: Guarantee, sampler: Sampler = "grid") -> Laplace:
        """The Laplace mechanism meeting ``target`` with the least noise (``calibration``); the grid
        sampler's scale is enlarged by a relative ~d 2^-16/(Delta/b) to absorb the rounding (and for
        d > 1, where only pure DP is declared, (eps, delta) targets are met as eps-DP)."""
        if sampler == "float":
            return ensure_target(cls(query, laplace_scale(query.l1, target), sampler="float"), target)
        d = query.output_dim
        base_target = target
        if isinstance(target, ApproxDP) and not (is_numeric(d) and int(d) == 1):
            base_target = PureDP(target.eps)
        # (eps, delta) targets are solved on the Laplace curve; the lattice curve is below
        # LaplaceTradeoff((K1 + 2)/t) (module docstring), hence two extra grid steps
        extra = 2 if isinstance(target, ApproxDP) else 0
        return _grid_calibrate(cls, query, laplace_scale(query.l1, base_target), target, Fraction(0), extra)

    def lattice_scale(self) -> int:
        """t = ceil(b/gamma): the discrete Laplace parameter of the grid sampler (in grid steps)."""
        return math.ceil(self._exact_scale() / self._gamma())

    def lattice_shift(self) -> int:
        """K1 = floor(Delta_1/gamma) + d (0 when Delta_1 = 0): a bound on the L1 norm of the shift."""
        delta = self._sensitivity_exact()
        return 0 if delta == 0 else math.floor(delta / self._gamma()) + self._dim()

    def _lattice_ratio(self) -> float:
        return float_up(Fraction(self.lattice_shift(), self.lattice_scale()))

    def guarantee(self) -> Guarantee:
        if self.sampler == "float":
            return FDP(LaplaceTradeoff(self._ratio_up()))
        k = self.lattice_shift()
        if self._dim() == 1 and k <= LAPLACE_CURVE_MAX:
            return FDP(laplace_curve(k, float(self.lattice_scale())))
        return PureDP(self._lattice_ratio())

    def closed_form_guarantee(self) -> Guarantee:
        return PureDP(self._ratio_up() if self.sampler == "float" else self._lattice_ratio())

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[Any]:
        return rng.laplace(0.0, self._scale(), size=shape)

    def _log_density(self, z: FloatArray) -> FloatArray:
        return np.asarray(-np.abs(z).sum(axis=1) / self._scale(), dtype=np.float64)

    def _noise_parameter(self) -> Fraction:
        return Fraction(self.lattice_scale())

    def _lattice_noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[np.int64]:
        return discrete_laplace_array(rng, self._lattice[1], shape)

    def _lattice_log_pmf(self, z: FloatArray) -> FloatArray:
        return np.asarray(-np.abs(z).sum(axis=1) / float(self._lattice[1]), dtype=np.float64)


@dataclass(frozen=True, repr=False)
class Gaussian(_Continuous):
    """q(D) + Gaussian noise of standard deviation sigma; ``Gaussian(query, sigma, sampler="grid")``.

    The default sampler releases gamma (round(q/gamma) + Z), Z ~ N_Z(0, s2), s2 = ceil(sigma^2/gamma^2)
    (module docstring); guarantee() the exact lattice curve for d = 1 (closed form: a verified GDP, else
    zCDP), ``ZCDP(K2/(2 s2))`` for d > 1. ``sampler="float"``: N(0, sigma^2) in floating point (unsafe),
    ``GDP(Delta_2/sigma)``.

    ``Gaussian.calibrated(query, target, method)`` solves sigma for GDP and zCDP in closed form and
    for (eps, delta) by the analytic Gaussian mechanism [@balle2018improving] or, as a baseline,
    the classic formula [@dwork2014algorithmic, Thm A.1, eps < 1 only]; the grid sampler enlarges it by a
    relative ~sqrt(d) 2^-12/(Delta/sigma) + 2^-16. GDP targets need d = 1 with the grid sampler.
    """

    norm: ClassVar[Norm] = "l2"
    scale_name: ClassVar[str] = "sigma"
    grid_bits: ClassVar[int] = GAUSSIAN_GRID_BITS

    @property
    def sigma(self) -> Any:
        return self.scale

    @classmethod
    def calibrated(cls, query: Query, target: Guarantee, method: str = "analytic",
                   sampler: Sampler = "grid") -> Gaussian:
        base = gaussian_sigma(query.l2, target, method=method)
        if sampler == "float":
            return ensure_target(cls(query, base, sampler="float"), target)
        d = query.output_dim
        scalar = is_numeric(d) and int(d) == 1
        if isinstance(target, GDP) and not scalar:
            raise ValueError("GDP is not claimed for the lattice Gaussian in d > 1 (only zCDP): "
                             "calibrate to a ZCDP or ApproxDP target, or use sampler='float' (unsafe)")
        if not scalar and not isinstance(target, ZCDP):
            # d > 1 declares zCDP: solve on the largest rho whose zCDP implies the target
            rho = calibrate(ZCDP, target, (1e-12, 1e6), increasing=True, tol=2.0**-40)
            base = gaussian_sigma(query.l2, ZCDP(rho))
        return _grid_calibrate(cls, query, base, target, GDP_MARGIN if scalar else Fraction(0))

    def _exact_sigma2(self) -> Fraction:
        return self._exact_scale() ** 2

    def grid_exponent(self) -> int:
        return floor_log2(self._exact_sigma2()) // 2 - self.grid_bits  # floor(log2 sigma) - bits

    def lattice_variance(self) -> int:
        """s2 = ceil(sigma^2/gamma^2): the discrete Gaussian variance parameter (in grid steps^2)."""
        return math.ceil(self._exact_sigma2() / self._gamma() ** 2)

    def lattice_shift(self) -> int:
        """For d = 1, k = floor(Delta_2/gamma) + 1 bounds the shift (0 when Delta_2 = 0)."""
        delta = self._sensitivity_exact()
        return 0 if delta == 0 else math.floor(delta / self._gamma()) + 1

    def lattice_shift2(self) -> int:
        """K2 >= ||k||_2^2: k^2 for d = 1, floor((Delta_2/gamma + sqrt(d))^2) otherwise."""
        d = self._dim()
        if d == 1:
            return self.lattice_shift() ** 2
        delta = self._sensitivity_exact()
        return 0 if delta == 0 else math.floor((delta / self._gamma() + sqrt_up(Fraction(d))) ** 2)

    def _lattice_zcdp(self) -> ZCDP:
        return ZCDP(float_up(Fraction(self.lattice_shift2(), 2 * self.lattice_variance())))

    def guarantee(self) -> Guarantee:
        if self.sampler == "float":
            return PureDP(0.0) if self._sensitivity_up() == 0.0 else GDP(self._ratio_up())
        if self.lattice_shift2() == 0:
            return PureDP(0.0)
        k, s2 = self.lattice_shift(), Fraction(self.lattice_variance())
        if self._dim() > 1 or gaussian_curve_size(k, s2) > GAUSS_CURVE_MAX:
            return self._lattice_zcdp()
        return FDP(gaussian_curve(k, s2))

    def closed_form_guarantee(self) -> Guarantee:
        g = self.guarantee()
        if self.sampler == "float" or not isinstance(g, FDP):
            return g
        k, s2 = self.lattice_shift(), self.lattice_variance()
        mu2 = Fraction(k * k, s2) * (1 + GDP_MARGIN) ** 2
        mu = math.sqrt(float(mu2))
        while Fraction(mu) ** 2 < mu2:
            mu = math.nextafter(mu, math.inf)
        return GDP(mu) if discrete_gaussian_is_gdp(k, s2, mu) else self._lattice_zcdp()

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[Any]:
        return rng.normal(0.0, self._scale(), size=shape)

    def _log_density(self, z: FloatArray) -> FloatArray:
        return np.asarray(-(z**2).sum(axis=1) / (2.0 * self._scale() ** 2), dtype=np.float64)

    def _noise_parameter(self) -> Fraction:
        return Fraction(self.lattice_variance())

    def _lattice_noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[np.int64]:
        return discrete_gaussian_array(rng, self._lattice[1], shape)

    def _lattice_log_pmf(self, z: FloatArray) -> FloatArray:
        return np.asarray(-(z**2).sum(axis=1) / (2.0 * self.lattice_variance()), dtype=np.float64)


