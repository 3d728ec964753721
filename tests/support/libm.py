"""The worst elementary-function error of the accountant's model, simulated: ``libm_off`` moves every
result of numpy's and math's exp, log, expm1 and log1p by LIBM_ULP - 1 ulp in one direction."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from accountant.core.rounding import LIBM_ULP

NAMES = ("exp", "log", "expm1", "log1p")


@contextmanager
def libm_off(direction: float) -> Iterator[None]:
    """numpy's and math's exp, log, expm1, log1p return their value moved LIBM_ULP - 1 ulp
    towards ``direction`` (+inf or -inf) while in the block: an error of up to LIBM_ULP ulp."""
    saved: dict[tuple[Any, str], Callable[..., Any]] = {}

    def moved_np(f: Callable[..., Any]) -> Callable[..., Any]:
        def g(x: Any, *args: Any, **kwargs: Any) -> Any:
            y = f(x, *args, **kwargs)
            for _ in range(LIBM_ULP - 1):
                y = np.where(np.isfinite(y), np.nextafter(y, direction), y)
            return y if np.ndim(y) else y[()]
        return g

    def moved_math(f: Callable[..., float]) -> Callable[..., float]:
        def g(x: float, *args: float) -> float:  # math.log(x, base) too
            y = f(x, *args)
            for _ in range(LIBM_ULP - 1):
                y = math.nextafter(y, direction) if math.isfinite(y) else y
            return y
        return g

    try:
        for name in NAMES:
            saved[(np, name)] = getattr(np, name)
            saved[(math, name)] = getattr(math, name)
            setattr(np, name, moved_np(getattr(np, name)))
            setattr(math, name, moved_math(getattr(math, name)))
        yield
    finally:
        for (mod, name), f in saved.items():
            setattr(mod, name, f)
