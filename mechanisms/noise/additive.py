"""The additive-noise base: q(D) + Z with the noise parameter ``scale`` (symbolic until bound),
its calibration to a target guarantee (``ensure_target``), and the cached exact curves of the
integer noises the mechanisms declare (the accountant's ``FiniteLossTradeoff.discrete_laplace`` and
``FiniteLossTradeoff.discrete_gaussian``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any, ClassVar, TypeVar

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import (
    FiniteLossTradeoff,
    Guarantee,
    calibrate,
    discrete_gaussian_window,
    implies,
)
from accountant.core.types import MACHINE_EPSILON, FloatArray

from ..base import Mechanism, OutputKind, OutputSpec
from ..domain import as_expr, free_names, is_numeric, to_float_up
from ..queries import Norm, Query

#: The discrete Gaussian curve keeps |y| <= shift + GAUSS_TAIL * sqrt(s2) (tails below e^-800).
GAUSS_TAIL = 40.0
#: Largest window (number of support points) for which an exact discrete Gaussian curve is built;
#: beyond it only zCDP is declared.
GAUSS_CURVE_MAX = 2**22
#: Largest shift for which an exact discrete Laplace curve (one loss atom per lattice step) is built.
LAPLACE_CURVE_MAX = 2**22


@lru_cache(maxsize=64)
def laplace_curve(shift: int, scale: float) -> FiniteLossTradeoff:
    """T(DLap(scale), shift + DLap(scale)): ``FiniteLossTradeoff.discrete_laplace``, cached."""
    return FiniteLossTradeoff.discrete_laplace(scale, shift)


@lru_cache(maxsize=64)
def gaussian_curve(shift: int, sigma2: Fraction) -> FiniteLossTradeoff:
    """T(N_Z(0, sigma2), shift + N_Z(0, sigma2)) on a GAUSS_TAIL-sigma window:
    ``FiniteLossTradeoff.discrete_gaussian``, cached."""
    return FiniteLossTradeoff.discrete_gaussian(sigma2, shift, tail=GAUSS_TAIL)


def gaussian_curve_size(shift: int, sigma2: Fraction) -> int:
    """Number of loss atoms of ``gaussian_curve(shift, sigma2)``."""
    return 2 * discrete_gaussian_window(sigma2, GAUSS_TAIL) + shift + 1


def _bind_expr(expr: Any, values: dict[str, Any]) -> Any:
    subs = {s: as_expr(str(s), values[str(s)]) for s in getattr(expr, "free_symbols", set())
            if str(s) in values}
    return expr.subs(subs) if subs else expr


AdditiveT = TypeVar("AdditiveT", bound="AdditiveMechanism")

#: Widest relative increase of a closed-form scale searched for the target: the closed form misses
#: only by the rounding of the declared figures (and the grid sampler's lattice).
ROUNDING_ROOM = 2.0**-16


def _declared(mech: AdditiveMechanism, target: Guarantee) -> Guarantee:
    """The declared guarantee to compare with ``target``: the exact one, or else the closed form it
    implies (``closed_form_guarantee``: a verified GDP or a zCDP, which a curve cannot show in floats)."""
    g = mech.guarantee()
    return g if implies(g, target) else mech.closed_form_guarantee()


def _float_down(expr: Any) -> float:
    """The greatest double <= a numeric sympy expression."""
    x = rational_up("scale", expr)
    v = float(x)
    return math.nextafter(v, -math.inf) if Fraction(v) > x else v


def ensure_target(mech: AdditiveT, target: Guarantee) -> AdditiveT:
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
                  increasing=False, tol=MACHINE_EPSILON)
    return at(x)


@lru_cache(maxsize=256)
def rational_up(name: str, expr: Any) -> Fraction:
    """An exact rational >= expr: expr itself when rational, else its float rounded up (cached: a
    mechanism reads its scale on every draw)."""
    if isinstance(expr, sympy.Rational):
        return Fraction(int(expr.p), int(expr.q))
    return Fraction(to_float_up(name, expr))


#: ``privacy_loss`` keeps the query values of inputs of at most this many numbers, of the last
#: ``KEPT_VALUES`` inputs.
KEPT_VALUES_SIZE = 64
KEPT_VALUES = 8


@dataclass(frozen=True, repr=False)
class AdditiveMechanism(Mechanism):
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

    def __repr__(self) -> str:
        """The scale as a 7-digit float (the exact rational is ``.scale``)."""
        scale = f"{float(self.scale):.7g}" if is_numeric(self.scale) else str(self.scale)
        extra = "".join(f", {f}={getattr(self, f)!r}" for f in ("sampler",) if hasattr(self, f))
        return f"{type(self).__name__}({self.query!r}, {self.scale_name}={scale}{extra})"

    # ----- declaration ------------------------------------------------------------------------
    @property
    def sensitivity(self) -> Any:
        return self.query.sensitivity(self.norm)

    def bind(self, **values: Any) -> AdditiveMechanism:
        """Bind the query's and the scale's symbols by name."""
        names = {str(s) for s in self.query.free_symbols} | set(free_names(self.scale))
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"unknown symbol(s) {unknown}; this mechanism's symbols are {sorted(names)}")
        qvals = {k: v for k, v in values.items() if k in {str(s) for s in self.query.free_symbols}}
        return replace(self, query=self.query._bind(qvals), scale=_bind_expr(self.scale, values))

    def _sensitivity_up(self) -> float:
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

    @cached_property
    def _kept_values(self) -> dict[tuple[str, tuple[int, ...], bytes], FloatArray]:
        """Query values of small inputs already validated (``_loss_values``), by dtype, shape and bytes."""
        return {}

    def _loss_values(self, data: ArrayLike) -> FloatArray:
        """``_values(data)`` (validated query values), kept for numeric arrays of at most
        ``KEPT_VALUES_SIZE`` numbers (the last ``KEPT_VALUES`` inputs): ``privacy_loss`` is evaluated
        on the same neighbouring inputs many times (an audit's batches), and the query's validation
        costs more than the values. The query is a function of the data, so a kept value is the
        value; the arrays kept are read-only copies."""
        if not (isinstance(data, np.ndarray) and data.dtype.kind in "iuf" and data.size <= KEPT_VALUES_SIZE):
            return self._values(data)
        key = (data.dtype.str, data.shape, data.tobytes())
        kept = self._kept_values.get(key)
        if kept is None:
            kept = np.array(self._values(data), dtype=np.float64)
            kept.flags.writeable = False
            if len(self._kept_values) >= KEPT_VALUES:
                self._kept_values.clear()
            self._kept_values[key] = kept
        return kept

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
        f1, f2 = self._loss_values(data), self._loss_values(data2)
        return self._log_density(arr - f1[None, :]) - self._log_density(arr - f2[None, :])


# ============================================================================ continuous

def float_up(x: Fraction) -> float:
    """The least double >= x."""
    v = float(x)
    return math.nextafter(v, math.inf) if Fraction(v) < x else v


def sqrt_up(x: Fraction, bits: int = 40) -> Fraction:
    """A rational >= sqrt(x), within 2^-bits."""
    return Fraction(math.isqrt(math.ceil(x * 4**bits)) + 1, 2**bits)
