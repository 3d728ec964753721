"""Data domains and adjacency relations: the declaration every sensitivity is derived from.

A ``Domain`` says what one record is (a scalar or a vector of ``d`` coordinates, each in a box
``[lower_j, upper_j]``), how many records a dataset holds (``n``, a number or a sympy symbol) and
which datasets are neighbours (``adjacency``):

- ``"replace"``: same size ``n``, one record replaced by another (bounded DP).
- ``"add_remove"``: one record added or removed (unbounded DP). ``n`` is then a public *lower bound*
  on the dataset size: the guarantee covers neighbouring pairs whose smaller dataset has at least
  ``n`` records, which is what a mean or a variance needs to be defined.

Bounds, ``n`` and ``d`` may be sympy symbols; ``bind`` substitutes numbers for them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
import sympy
from numpy.typing import ArrayLike

from accountant.core.types import ADJACENCIES, Adjacency, FloatArray
from accountant.core.validation import as_float_array

__all__ = ["ADJACENCIES", "Adjacency", "Domain", "as_expr", "free_names", "to_float_up"]

#: Most offending values quoted in an out-of-domain error.
MAX_QUOTED = 5

class _Unsized:
    """The default of ``Domain.n``: no size declared (stored as ``None``). Passing ``n=None``
    explicitly is refused, so that a missing size is a decision, not an accident."""

    def __repr__(self) -> str:
        return "<no size declared>"


UNSIZED: Any = _Unsized()


def as_expr(name: str, value: Any) -> Any:
    """A sympy expression from a number, a ``Fraction`` or a sympy object.

    Floats are converted through their shortest decimal representation (``0.1`` -> ``1/10``, which
    maps back to the same float) so derivations stay readable.
    """
    if isinstance(value, bool):
        raise TypeError(f"{name} must be a number or a sympy expression, got bool {value!r}")
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, (int, np.integer)):
        return sympy.Integer(int(value))
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{name} must be finite, got {value!r}")
        return sympy.Rational(repr(v))
    raise TypeError(f"{name} must be a number or a sympy expression, got {type(value).__name__} {value!r}")


def free_names(expr: Any) -> list[str]:
    """Sorted names of the free symbols of a sympy expression."""
    return sorted(str(s) for s in getattr(expr, "free_symbols", set()))


def is_numeric(expr: Any) -> bool:
    return not getattr(expr, "free_symbols", set())


def to_float_up(name: str, expr: Any) -> float:
    """A float never below the exact value of a closed (symbol-free) expression.

    Used for sensitivities: a sensitivity rounded down would understate the noise needed.
    """
    if not is_numeric(expr):
        raise ValueError(f"{name} = {expr} still depends on {', '.join(free_names(expr))}; "
                         "bind them first, e.g. .bind(n=100, a=0, b=1)")
    exact = sympy.N(expr, 40)
    if not exact.is_real:
        raise ValueError(f"{name} = {expr} is not a real number")
    v = float(exact)
    if sympy.Float(v, 40) < exact:
        v = math.nextafter(v, math.inf)
    return v


def _bind_expr(expr: Any, values: Mapping[str, Any]) -> Any:
    subs = {s: as_expr(str(s), values[str(s)]) for s in getattr(expr, "free_symbols", set())
            if str(s) in values}
    return expr.subs(subs) if subs else expr


#: The largest numeric dataset size n and dimension d (beyond it no float holds 1/n and its
#: neighbours apart, and the calibrations' float arithmetic overflows).
MAX_COUNT = 10**15


def _shown(value: Any) -> str:
    """repr, or the digit count of a huge integer."""
    if isinstance(value, int) and abs(value) >= 10**30:
        return f"an integer with {len(str(abs(value)))} digits"
    return repr(value)


@dataclass(frozen=True)
class Domain:
    """Records in a box, ``n`` records per dataset, and an adjacency relation.

    ``lower``/``upper`` are one value (every coordinate) or one value per coordinate (then ``d`` is
    their length). ``n`` is the dataset size (``"replace"``) or its public lower bound
    (``"add_remove"``), an integer in [1, 10^15] or a sympy symbol; omit it when no query needs it
    (the attribute is then ``None``; an explicit ``n=None`` is refused). With ``clip=True`` records
    are clipped into the box before any query; otherwise a record outside it raises ``ValueError``.
    """

    lower: Any = 0
    upper: Any = 1
    n: Any = UNSIZED
    d: Any = 1
    adjacency: Adjacency = "replace"
    clip: bool = False

    def __post_init__(self) -> None:
        if self.adjacency not in ADJACENCIES:
            raise ValueError(f"adjacency must be one of {ADJACENCIES}, got {self.adjacency!r}")
        if not isinstance(self.clip, bool):
            raise TypeError(f"clip must be a bool, got {self.clip!r}")
        lo = self._coords("lower", self.lower)
        hi = self._coords("upper", self.upper)
        d = as_expr("d", self.d)
        if len(lo) > 1 or len(hi) > 1:
            k = max(len(lo), len(hi))
            if (len(lo) not in (1, k)) or (len(hi) not in (1, k)):
                raise ValueError(f"lower and upper must have the same length, got {len(lo)} and {len(hi)}")
            if self.d != 1 and d != k:
                raise ValueError(f"d = {self.d} does not match the {k} per-coordinate bounds")
            d = sympy.Integer(k)
            lo = lo * k if len(lo) == 1 else lo
            hi = hi * k if len(hi) == 1 else hi
        if is_numeric(d) and not (d.is_integer and 1 <= d <= MAX_COUNT):
            raise ValueError(f"d must be a positive integer at most {MAX_COUNT:.0e} or a symbol, got "
                             f"{_shown(self.d)}")
        for j, (a, b) in enumerate(zip(lo, hi, strict=True)):
            if is_numeric(a) and is_numeric(b) and not bool(a < b):
                raise ValueError(f"lower must be < upper in every coordinate; coordinate {j} has "
                                 f"lower = {a}, upper = {b}")
        if self.n is None:
            raise TypeError("n must be an integer in [1, 10^15] or a sympy symbol, got None; omit n "
                            "when no query needs the dataset size")
        n = None if self.n is UNSIZED else as_expr("n", self.n)
        if n is not None and is_numeric(n) and not (n.is_integer and 1 <= n <= MAX_COUNT):
            raise ValueError(f"n must be an integer in [1, 10^15] or a sympy symbol, got "
                             f"{_shown(self.n)}")
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "n", n)

    @staticmethod
    def _coords(name: str, value: Any) -> tuple[Any, ...]:
        if isinstance(value, (tuple, list, np.ndarray)):
            vals = tuple(as_expr(f"{name}[{j}]", v) for j, v in enumerate(value))
            if not vals:
                raise ValueError(f"{name} must not be empty")
            return vals
        return (as_expr(name, value),)

    # ----- derived quantities -------------------------------------------------------------------
    @property
    def uniform(self) -> bool:
        """True when one pair of bounds stands for every coordinate (always so for symbolic d)."""
        return len(self.lower) == 1

    @property
    def widths(self) -> tuple[Any, ...]:
        """upper_j - lower_j per coordinate (one entry when the domain is uniform)."""
        return tuple(sympy.simplify(b - a) for a, b in zip(self.lower, self.upper, strict=True))

    @property
    def magnitudes(self) -> tuple[Any, ...]:
        """max(|lower_j|, |upper_j|): the largest effect of adding one record on a coordinate sum."""
        return tuple(sympy.Max(sympy.Abs(a), sympy.Abs(b)) for a, b in zip(self.lower, self.upper,
                                                                            strict=True))

    @property
    def free_symbols(self) -> set[Any]:
        out: set[Any] = set()
        for e in (*self.lower, *self.upper, self.d, self.n):
            out |= getattr(e, "free_symbols", set())
        return out

    @property
    def is_bound(self) -> bool:
        return not self.free_symbols

    def bind(self, **values: Any) -> Domain:
        """Substitute numbers for symbols by name, e.g. ``domain.bind(n=100, a=0, b=1)``."""
        names = {str(s) for s in self.free_symbols}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"unknown symbol(s) {unknown}; this domain's symbols are {sorted(names)}")
        lo = tuple(_bind_expr(a, values) for a in self.lower)
        hi = tuple(_bind_expr(b, values) for b in self.upper)
        d = _bind_expr(self.d, values)
        return replace(self, lower=lo if len(lo) > 1 else lo[0], upper=hi if len(hi) > 1 else hi[0],
                       n=UNSIZED if self.n is None else _bind_expr(self.n, values), d=d)

    def clipped(self) -> Domain:
        """The same declaration with ``clip=True``."""
        return replace(self, n=UNSIZED if self.n is None else self.n, clip=True)

    def describe(self) -> str:
        """One line: records, size and adjacency."""
        if self.uniform:
            box = f"[{self.lower[0]}, {self.upper[0]}]"
            rec = box if self.d == 1 else f"{box}^{self.d}"
        else:
            rec = " x ".join(f"[{a}, {b}]" for a, b in zip(self.lower, self.upper, strict=True))
        size = "" if self.n is None else (f", n = {self.n} records" if self.adjacency == "replace"
                                          else f", at least n = {self.n} records")
        adj = "replace-one" if self.adjacency == "replace" else "add/remove-one"
        clip = ", clipped into the box" if self.clip else ""
        return f"records in {rec}{size}, adjacency {adj}{clip}"

    # ----- data validation ------------------------------------------------------------------------
    @cached_property
    def _bounds(self) -> tuple[FloatArray, FloatArray, int]:
        """(lower, upper, d) as floats, computed on the first validation and kept (the domain is frozen;
        the arrays are read-only)."""
        if not self.is_bound:
            raise ValueError(f"the domain still has free symbols {sorted(map(str, self.free_symbols))};"
                             " bind them before evaluating a query on data")
        d = int(self.d)
        lo = np.array([float(a) for a in self.lower], dtype=np.float64)
        hi = np.array([float(b) for b in self.upper], dtype=np.float64)
        if lo.size == 1:
            lo, hi = np.full(d, lo[0]), np.full(d, hi[0])
        lo.flags.writeable = False
        hi.flags.writeable = False
        return lo, hi, d

    def validate(self, data: ArrayLike) -> FloatArray:
        """Data as an ``(n,)`` (d = 1) or ``(n, d)`` float array, checked against the declaration.

        Raises ``ValueError`` for a wrong shape, a size that contradicts ``n``, NaN, or (unless
        ``clip``) a value outside the box, naming the offending values.
        """
        lo, hi, d = self._bounds
        x = as_float_array("data", data)  # rejects NaN
        if d == 1:
            if x.ndim == 2 and x.shape[1] == 1:
                x = x[:, 0]
            if x.ndim != 1:
                raise ValueError(f"data must be a 1-d array of scalar records, got shape {x.shape}")
        elif x.ndim != 2 or x.shape[1] != d:
            raise ValueError(f"data must have shape (n, {d}), got shape {x.shape}")
        self._check_size(x.shape[0])
        lo_b = lo[0] if d == 1 else lo
        hi_b = hi[0] if d == 1 else hi
        if self.clip:
            return np.asarray(np.clip(x, lo_b, hi_b), dtype=np.float64)
        bad = (x < lo_b) | (x > hi_b)
        if bad.any():
            rows = np.flatnonzero(bad if d == 1 else bad.any(axis=1))
            quoted = ", ".join(f"record {i}: {x[i].tolist()}" for i in rows[:MAX_QUOTED])
            more = f" (and {rows.size - MAX_QUOTED} more)" if rows.size > MAX_QUOTED else ""
            raise ValueError(f"{rows.size} record(s) outside the declared domain {self.describe()}: "
                             f"{quoted}{more}; declare clip=True to clip them instead")
        return x

    def _check_size(self, size: int) -> None:
        if self.n is None:
            return
        if not is_numeric(self.n):
            raise ValueError(f"n = {self.n} is symbolic; bind it before evaluating a query on data")
        n = int(self.n)
        if self.adjacency == "replace" and size != n:
            raise ValueError(f"the declaration fixes n = {n} records (replace-one), got {size}")
        if self.adjacency == "add_remove" and size < n:
            raise ValueError(f"the declaration needs at least n = {n} records (add/remove), got {size}")
