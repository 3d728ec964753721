"""Additive-noise mechanisms: q(D) + Z with Z Laplace, Gaussian, discrete Laplace or discrete
Gaussian, each calibrated to the sensitivity its query derives.

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

- Laplace, d = 1: ``FDP(discrete_laplace_tradeoff(K1, t))``, the exact curve of (DLap(t), K1 + DLap(t))
  (K1 + 1 loss values; above ``LAPLACE_CURVE_MAX`` only the pure DP below). It is NOT dominated by
  ``LaplaceTradeoff(K1/t)``: both profiles agree at the loss values l_j = (2j - K1)/t but the discrete
  one is above in between (tests). It is dominated by ``LaplaceTradeoff((K1 + 2)/t)``: the discrete
  profile is non-increasing, so on [l_j, l_{j+1}) it is at most its value at l_j, the continuous
  profile at eps = K1/t there, which is the (K1 + 2)/t profile at l_j + 2/t > eps (calibration to
  (eps, delta) uses this). d > 1: ``PureDP(K1/t)`` (the log pmf ratio is at most ||k||_1/t).
  standard: ``PureDP(K1/t)``.
- Gaussian, d = 1: ``FDP(discrete_gaussian_tradeoff(k, s2))``, the exact curve of
  (N_Z(0, s2), N_Z(k, s2)), k = floor(Delta_2/gamma) + 1, on |y| <= k + 40 sqrt(s2) with the tails moved
  to the atoms at +-infinity (pessimistic); standard: ``GDP(k (1 + 2^-16)/sqrt(s2))`` when the curve is
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

Discrete mechanisms on integer-valued queries: discrete Laplace (pmf proportional to exp(-|k|/b) on
Z) with its exact ``FiniteLossTradeoff`` (it implies ``PureDP(D/b)``), and discrete Gaussian with the
exact truncated curve for scalar queries (``discrete_gaussian_tradeoff``) and the standard guarantee
``ZCDP(Delta_2^2/(2 sigma^2))`` [@canonne2020discrete, Thm 4].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray
from scipy import special

from accountant import (
    FDP,
    GDP,
    ZCDP,
    ApproxDP,
    FiniteLossTradeoff,
    Guarantee,
    LaplaceTradeoff,
    PureDP,
    calibrate,
    implies,
)
from accountant.validation import check_count, check_real

from .base import Mechanism, OutputKind, OutputSpec
from .calibration import gaussian_sigma, laplace_scale
from .domain import as_expr, free_names, is_numeric, to_float_up
from .queries import Norm, Query
from .samplers import (
    discrete_gaussian_array,
    discrete_laplace_array,
    floor_log2,
    from_lattice,
    to_lattice,
)

__all__ = ["DiscreteGaussian", "DiscreteLaplace", "Gaussian", "Laplace", "discrete_gaussian_tradeoff",
           "discrete_laplace_tradeoff"]

Sampler = Literal["grid", "float"]
#: Lattice spacing of the grid samplers: gamma = 2^(floor(log2 scale) - bits).
LAPLACE_GRID_BITS = 16
#: Largest shift K1 for which the scalar lattice Laplace declares its exact (K1 + 1)-loss curve.
LAPLACE_CURVE_MAX = 2**22
GAUSSIAN_GRID_BITS = 12
#: The truncated discrete Gaussian pair keeps |y| <= shift + GAUSS_TAIL * sqrt(s2).
GAUSS_TAIL = 40
#: Largest window (number of support points) for which an exact discrete Gaussian curve is built;
#: beyond it only zCDP is declared.
GAUSS_CURVE_MAX = 2**22
#: Relative margin of the GDP parameter verified for the 1-d lattice Gaussian.
GDP_MARGIN = Fraction(1, 2**16)

FloatArray = NDArray[np.float64]


def _bind_expr(expr: Any, values: dict[str, Any]) -> Any:
    subs = {s: as_expr(str(s), values[str(s)]) for s in getattr(expr, "free_symbols", set())
            if str(s) in values}
    return expr.subs(subs) if subs else expr


AdditiveT = TypeVar("AdditiveT", bound="_Additive")

#: Widest relative increase of a closed-form scale searched for the target: the closed form misses
#: only by the rounding of the declared figures (and the grid sampler's lattice).
ROUNDING_ROOM = 2.0**-16


def _declared(mech: _Additive, target: Guarantee) -> Guarantee:
    """The declared guarantee to compare with ``target``: the exact one, or else the closed form it
    implies (``standard_guarantee``: a verified GDP or a zCDP, which a curve cannot show in floats)."""
    g = mech.guarantee()
    return g if implies(g, target) else mech.standard_guarantee()


def _float_down(expr: Any) -> float:
    """The greatest double <= a numeric sympy expression."""
    x = _rational_up("scale", expr)
    v = float(x)
    return math.nextafter(v, -math.inf) if Fraction(v) > x else v


def _ensure_target(mech: AdditiveT, target: Guarantee) -> AdditiveT:
    """``mech`` when its declared guarantee implies ``target``; else, when the parameters are numeric,
    the least scale in [scale, scale (1 + ROUNDING_ROOM)] whose guarantee does (``accountant.calibrate``:
    the closed-form scale can miss the target by the rounding of the declared figures)."""
    if not (is_numeric(mech.scale) and is_numeric(mech.sensitivity)) or implies(_declared(mech, target),
                                                                                 target):
        return mech

    def at(x: float) -> AdditiveT:
        f = Fraction(x)
        return replace(mech, scale=sympy.Rational(f.numerator, f.denominator))

    s = _float_down(mech.scale)
    if implies(_declared(at(s), target), target):  # the float below can round the other way
        return at(s)
    x = calibrate(lambda v: _declared(at(v), target), target, (s, s * (1.0 + ROUNDING_ROOM)),
                  increasing=False, tol=2.0**-52)
    return at(x)


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


def _float_up(x: Fraction) -> float:
    """The least double >= x."""
    v = float(x)
    return math.nextafter(v, math.inf) if Fraction(v) < x else v


def _sqrt_up(x: Fraction, bits: int = 40) -> Fraction:
    """A rational >= sqrt(x), within 2^-bits."""
    return Fraction(math.isqrt(math.ceil(x * 4**bits)) + 1, 2**bits)


@dataclass(frozen=True)
class _Continuous(_Additive):
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
        self._scale()
        return _rational_up(self.scale_name, self.scale)

    def grid_exponent(self) -> int:
        """e with gamma = 2^e = 2^(floor(log2 scale) - grid_bits): the lattice of the grid sampler."""
        return floor_log2(self._exact_scale()) - self.grid_bits

    def _gamma(self) -> Fraction:
        return Fraction(2) ** self.grid_exponent()

    def _sensitivity_exact(self) -> Fraction:
        return _rational_up(f"sensitivity ({self.norm})", self.sensitivity)

    @property
    def output(self) -> OutputSpec:
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
    def _lattice_noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[np.int64]:
        raise NotImplementedError

    def _lattice_log_pmf(self, z: FloatArray) -> FloatArray:
        """Log pmf (up to a constant) of the integer noise at each row of z, summed over coordinates."""
        raise NotImplementedError

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        if self.sampler == "float":
            return super()._sample(data, rng, m)
        e = self.grid_exponent()
        idx = to_lattice(self._values(data), e)
        out = from_lattice(idx[None, :] + self._lattice_noise(rng, (m, idx.size)), e)
        return out.reshape((m, *self.output.shape))

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        """log p_data(y) - log p_data2(y): a density ratio for ``sampler="float"``, the pmf ratio on the
        lattice for ``sampler="grid"`` (outputs off the lattice have probability 0 under both)."""
        if self.sampler == "float":
            return super().privacy_loss(y, data, data2)
        shape = self.output.shape
        arr = self._validate_pair(y, shape).reshape(-1, max(1, math.prod(shape)))
        e = self.grid_exponent()
        n = np.ldexp(arr, -e)
        r1 = to_lattice(self._values(data), e).astype(np.float64)
        r2 = to_lattice(self._values(data2), e).astype(np.float64)
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
        w = (Fraction(d) if cls.norm == "l1" else _sqrt_up(Fraction(d))) + extra
        exact = (_rational_up("scale", base_scale) * (1 + margin) * (1 + w * gamma / delta)
                 * (1 + Fraction(1, 2**40)))
        refined = replace(mech, scale=sympy.Rational(exact.numerator, exact.denominator))
        if refined._gamma() == gamma:
            mech = refined
    return _ensure_target(mech, target)



@dataclass(frozen=True)
class Laplace(_Continuous):
    """q(D) + Laplace noise of scale b; ``Laplace(query, scale=b, sampler="grid")``.

    The default sampler releases gamma (round(q/gamma) + Z), Z ~ DLap(t), t = ceil(b/gamma) (module
    docstring); guarantee() ``FDP(discrete_laplace_tradeoff(K1, t))`` for d = 1, ``PureDP(K1/t)`` for d > 1;
    standard_guarantee() ``PureDP(K1/t)``. ``sampler="float"``: Lap(b) in floating point (unsafe),
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
            return _ensure_target(cls(query, laplace_scale(query.l1, target), sampler="float"), target)
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
        return _float_up(Fraction(self.lattice_shift(), self.lattice_scale()))

    def guarantee(self) -> Guarantee:
        if self.sampler == "float":
            return FDP(LaplaceTradeoff(self._ratio_up()))
        k = self.lattice_shift()
        if self._dim() == 1 and k <= LAPLACE_CURVE_MAX:
            return FDP(discrete_laplace_tradeoff(k, float(self.lattice_scale())))
        return PureDP(self._lattice_ratio())

    def standard_guarantee(self) -> Guarantee:
        return PureDP(self._ratio_up() if self.sampler == "float" else self._lattice_ratio())

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[Any]:
        return rng.laplace(0.0, self._scale(), size=shape)

    def _log_density(self, z: FloatArray) -> FloatArray:
        return np.asarray(-np.abs(z).sum(axis=1) / self._scale(), dtype=np.float64)

    def _lattice_noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[np.int64]:
        return discrete_laplace_array(rng, Fraction(self.lattice_scale()), shape)

    def _lattice_log_pmf(self, z: FloatArray) -> FloatArray:
        return np.asarray(-np.abs(z).sum(axis=1) / self.lattice_scale(), dtype=np.float64)


@dataclass(frozen=True)
class Gaussian(_Continuous):
    """q(D) + Gaussian noise of standard deviation sigma; ``Gaussian(query, sigma, sampler="grid")``.

    The default sampler releases gamma (round(q/gamma) + Z), Z ~ N_Z(0, s2), s2 = ceil(sigma^2/gamma^2)
    (module docstring); guarantee() the exact lattice curve for d = 1 (standard: a verified GDP, else
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
            return _ensure_target(cls(query, base, sampler="float"), target)
        d = query.output_dim
        scalar = is_numeric(d) and int(d) == 1
        if isinstance(target, GDP) and not scalar:
            raise ValueError("GDP is not claimed for the lattice Gaussian in d > 1 (only zCDP): "
                             "calibrate to a ZCDP or ApproxDP target, or use sampler='float' (unsafe)")
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
        return 0 if delta == 0 else math.floor((delta / self._gamma() + _sqrt_up(Fraction(d))) ** 2)

    def _lattice_zcdp(self) -> ZCDP:
        return ZCDP(_float_up(Fraction(self.lattice_shift2(), 2 * self.lattice_variance())))

    def guarantee(self) -> Guarantee:
        if self.sampler == "float":
            return PureDP(0.0) if self._delta() == 0.0 else GDP(self._ratio_up())
        if self.lattice_shift2() == 0:
            return PureDP(0.0)
        k, s2 = self.lattice_shift(), Fraction(self.lattice_variance())
        if self._dim() > 1 or _gauss_curve_size(k, s2) > GAUSS_CURVE_MAX:
            return self._lattice_zcdp()
        return FDP(discrete_gaussian_tradeoff(k, s2))

    def standard_guarantee(self) -> Guarantee:
        g = self.guarantee()
        if self.sampler == "float" or not isinstance(g, FDP):
            return g
        k, s2 = self.lattice_shift(), self.lattice_variance()
        mu2 = Fraction(k * k, s2) * (1 + GDP_MARGIN) ** 2
        mu = math.sqrt(float(mu2))
        while Fraction(mu) ** 2 < mu2:
            mu = math.nextafter(mu, math.inf)
        return GDP(mu) if lattice_gaussian_is_gdp(k, s2, mu) else self._lattice_zcdp()

    def _noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[Any]:
        return rng.normal(0.0, self._scale(), size=shape)

    def _log_density(self, z: FloatArray) -> FloatArray:
        return np.asarray(-(z**2).sum(axis=1) / (2.0 * self._scale() ** 2), dtype=np.float64)

    def _lattice_noise(self, rng: np.random.Generator, shape: tuple[int, int]) -> NDArray[np.int64]:
        return discrete_gaussian_array(rng, Fraction(self.lattice_variance()), shape)

    def _lattice_log_pmf(self, z: FloatArray) -> FloatArray:
        return np.asarray(-(z**2).sum(axis=1) / (2.0 * self.lattice_variance()), dtype=np.float64)


# ============================================================================ discrete


def discrete_laplace_tradeoff(shift: int, scale: float) -> FiniteLossTradeoff:
    """Exact T(P, Q) for P = DLap(b), Q = shift + DLap(b): the accountant's model
    ``FiniteLossTradeoff.discrete_laplace(b, shift)`` (that of ``DiscreteLaplacePair``), cached;
    shift is at most ``LAPLACE_CURVE_MAX`` (one loss atom per lattice step)."""
    return _discrete_laplace_tradeoff(check_count("shift", shift, low=0, high=LAPLACE_CURVE_MAX),
                                      check_real("scale", scale, low=0.0, high=math.inf, low_open=True,
                                                 high_open=True))


@lru_cache(maxsize=64)
def _discrete_laplace_tradeoff(shift: int, scale: float) -> FiniteLossTradeoff:
    return FiniteLossTradeoff.discrete_laplace(scale, shift)


def _gauss_curve_size(shift: int, sigma2: Fraction) -> int:
    """Number of support points of the truncated pair (``discrete_gaussian_tradeoff``)."""
    return 2 * (math.isqrt(math.ceil(sigma2 * GAUSS_TAIL**2)) + 1) + shift + 1


def _gauss_window(shift: int, sigma2: Fraction) -> tuple[NDArray[np.int64], float, float, float]:
    """Support window [-m, shift + m] with m = ceil(GAUSS_TAIL sigma), sigma2 as a float, log Z of
    N_Z(0, sigma2) (summed over [-m, m]: the rest is below exp(-GAUSS_TAIL^2/2)), and an upper bound on
    log P(Y > m) = log P(Y < -m)."""
    m = math.isqrt(math.ceil(sigma2 * GAUSS_TAIL**2)) + 1
    s2 = float(sigma2)
    j = np.arange(-m, m + 1, dtype=np.float64)
    log_z = float(special.logsumexp(-(j * j) / (2.0 * s2)))
    # sum_{y > m} exp(-y^2/(2 s2)) <= exp(-m^2/(2 s2)) / (1 - exp(-m/s2)), and Z >= 1
    log_tail = -(m * m) / (2.0 * s2) - math.log(-math.expm1(-m / s2)) - log_z
    return np.arange(-m, shift + m + 1, dtype=np.int64), s2, log_z, log_tail


@lru_cache(maxsize=64)
def discrete_gaussian_tradeoff(shift: int, sigma2: Fraction) -> FiniteLossTradeoff:
    """T(P, Q) for P = N_Z(0, sigma2), Q = shift + N_Z(0, sigma2) (pmf proportional to
    exp(-y^2/(2 sigma2)) on Z [@canonne2020discrete]), exact on the window |y| <= shift + 40 sigma where the
    loss log(q/p)(y) = (2 shift y - shift^2)/(2 sigma2); the Q-mass outside the window is put on L = +inf
    (``q_inf``) and the P-mass outside on L = -inf (``p_ninf``): the pair is a post-processing of
    this one, so the curve is a sound lower bound (pessimistic by less than exp(-800))."""
    if isinstance(shift, bool) or not isinstance(shift, int) or shift < 0:
        raise ValueError(f"shift must be a non-negative int, got {shift!r}")
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValueError(f"sigma2 must be > 0, got {sigma2}")
    if shift == 0:
        return FiniteLossTradeoff.from_losses([0.0], [1.0])
    y, s2, log_z, log_tail = _gauss_window(shift, sigma2)
    yf = y.astype(np.float64)
    losses = (2.0 * shift * yf - float(shift) ** 2) / (2.0 * s2)
    q = np.exp(-((yf - shift) ** 2) / (2.0 * s2) - log_z)
    outside = 2.0 * math.exp(log_tail)
    return FiniteLossTradeoff.from_losses(losses, q, q_inf=outside, p_ninf=outside)


@lru_cache(maxsize=64)
def lattice_gaussian_is_gdp(shift: int, sigma2: int | Fraction, mu: float) -> bool:
    """Whether the curve of (N_Z(0, sigma2), shift + N_Z(0, sigma2)) lies above G_mu
    [@dong2022gaussian, Def. 2.7].

    The exact curve is piecewise linear with knots (alpha_y, beta_y) = (P(Y >= y), Q(Y < y)), y in Z,
    and G_mu is convex, so G_mu <= curve everywhere iff at every knot. Each knot is compared on the
    side that is accurate in doubles: beta_y >= Phi(z - mu) where beta_y <= 1/2, else
    1 - beta_y <= Phi(mu - z), with z = Phi^{-1}(1 - alpha_y) taken from the smaller of alpha_y and
    1 - alpha_y, all tails summed in log space. Knots whose tails underflow doubles (below 1e-300,
    beyond 40 sigma) are not compared.
    """
    sigma2 = Fraction(sigma2)
    if shift == 0:
        return True
    y, s2, log_z, _ = _gauss_window(shift, sigma2)
    m = -int(y[0])
    # log P(Y = j) for j in [-m - shift - 1, shift + m]
    j = np.arange(-m - shift - 1, shift + m + 1, dtype=np.float64)
    lp = -(j * j) / (2.0 * s2) - log_z
    le = np.logaddexp.accumulate(lp)  # log P(Y <= j)
    ge = np.logaddexp.accumulate(lp[::-1])[::-1]  # log P(Y >= j)
    off = m + shift + 1  # index of j = y - shift - 1 ... j[i] = i - off
    iy = y + off  # index of j = y
    log_alpha = ge[iy]  # P(Y >= y)
    log_one_minus_alpha = le[iy - 1]  # P(Y <= y - 1)
    log_beta = le[iy - shift - 1]  # Q(Y < y) = P(Y <= y - shift - 1)
    log_power = ge[iy - shift]  # Q(Y >= y) = P(Y >= y - shift)
    floor_ = math.log(1e-300)
    ok = (log_alpha > floor_) & (log_one_minus_alpha > floor_) & (log_beta > floor_) & (log_power > floor_)
    small_alpha = log_alpha < math.log(0.5)
    z = np.where(small_alpha, -special.ndtri(np.exp(np.where(small_alpha, log_alpha, 0.0))),
                 special.ndtri(np.exp(np.where(small_alpha, 0.0, log_one_minus_alpha))))
    low_beta = log_beta <= math.log(0.5)
    good = np.where(low_beta, log_beta >= special.log_ndtr(z - mu), log_power <= special.log_ndtr(mu - z))
    return bool(np.all(good | ~ok))


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

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        f = self._values(data).astype(np.int64)  # exact integer arithmetic: no floating-point leak
        out = np.asarray(f[None, :] + self._noise(rng, (m, f.size)))
        return out.reshape((m, *self.output.shape))


@dataclass(frozen=True)
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

    def _log_density(self, z: FloatArray) -> FloatArray:
        return np.asarray(-np.abs(z).sum(axis=1) / float(self._fraction()), dtype=np.float64)


@dataclass(frozen=True)
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
        return _ensure_target(cls(query, gaussian_sigma(query.l2, target)), target)

    def _sigma2(self) -> Fraction:
        self._scale()
        return _rational_up("sigma^2", sympy.nsimplify(self.scale**2) if isinstance(self.scale, sympy.Float)
                            else sympy.simplify(self.scale**2))

    def guarantee(self) -> Guarantee:
        """For a scalar query with a curve of at most ``GAUSS_CURVE_MAX`` points: the exact curve
        ``discrete_gaussian_tradeoff(floor(Delta_2), sigma^2)`` (integer queries shift by integers),
        which implies the zCDP of ``standard_guarantee()``; otherwise that zCDP."""
        k = self._integer_delta()
        s2 = self._sigma2()
        if k > 0 and self._dim() == 1 and _gauss_curve_size(k, s2) <= GAUSS_CURVE_MAX:
            return FDP(discrete_gaussian_tradeoff(k, s2))
        return self.standard_guarantee()

    def standard_guarantee(self) -> Guarantee:
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
