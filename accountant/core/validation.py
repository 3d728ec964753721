"""Validation of user input, shared by the three packages: every check raises ``TypeError`` or
``ValueError`` naming the parameter, its value and the allowed range."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike

from .types import FloatArray


def check_real(name: str, value: float, *, low: float = -math.inf, high: float = math.inf,
               low_open: bool = False, high_open: bool = False) -> float:
    """Return ``value`` as a float, or raise ``ValueError`` naming the parameter and its range."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    lb = "(" if low_open else "["
    rb = ")" if high_open else "]"
    try:
        v = float(value)
    except OverflowError:
        raise ValueError(f"{name} must lie in {lb}{low}, {high}{rb} and fit a float, got an "
                         f"integer with {len(str(abs(int(value))))} digits") from None
    lo_ok = v > low if low_open else v >= low
    hi_ok = v < high if high_open else v <= high
    if math.isnan(v) or not (lo_ok and hi_ok):
        raise ValueError(f"{name} must lie in {lb}{low}, {high}{rb}, got {value!r}")
    return v


def check_count(name: str, value: int, *, low: int = 1, high: int = 10**15) -> int:
    """Return ``value`` as an int (Python or numpy integer, not bool) in [low, high], or raise
    ``TypeError``/``ValueError`` naming the parameter and its range."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    v = int(value)
    if not low <= v <= high:
        shown = repr(v) if abs(v) < 10**30 else f"an integer with {len(str(abs(v)))} digits"
        raise ValueError(f"{name} must be an integer in [{low}, {high}], got {shown}")
    return v


def check_reals(name: str, values: Iterable[float], *, low: float = -math.inf,
                high: float = math.inf, low_open: bool = False,
                high_open: bool = False) -> tuple[float, ...]:
    """A sequence of reals, each checked by ``check_real`` under the sequence's name."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of real numbers, got "
                        f"{type(values).__name__} {values!r}")
    return tuple(check_real(name, v, low=low, high=high, low_open=low_open, high_open=high_open)
                 for v in values)


def as_float_array(name: str, value: ArrayLike) -> FloatArray:
    """Convert reals (a number or an array of them) to a float array; reject bool, str, None and
    other non-numbers with ``TypeError`` and NaN or out-of-float-range ints with ``ValueError``."""
    raw = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
    if raw.dtype == object:
        items = raw.ravel().tolist()
        for x in items:
            if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
                raise TypeError(f"{name} must be a real number or an array of reals, got "
                                f"{type(x).__name__} {x!r}")
            check_real(name, float(x) if not isinstance(x, int) else x)  # huge ints
    elif raw.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real number or an array of reals, got an array of "
                        f"dtype {raw.dtype}")
    arr = np.asarray(raw, dtype=np.float64)
    if np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    return arr


def as_alpha(alpha: ArrayLike) -> FloatArray:
    """Validate type I error levels: a float array with every entry in [0, 1]."""
    a = as_float_array("alpha", alpha)
    if ((a < 0.0) | (a > 1.0)).any():
        raise ValueError("alpha must lie in [0, 1]")
    return a


__all__ = ["as_alpha", "as_float_array", "check_count", "check_real", "check_reals"]
