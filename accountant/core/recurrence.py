"""The first-order linear recurrence y_i = x_i + a y_{i-1} (y_0 = x_0), summed in order."""

from __future__ import annotations

__all__ = ["linear_recurrence"]

import numpy as np

from accountant.core.types import FloatArray


def linear_recurrence(x: FloatArray, a: float) -> FloatArray:
    """y_i = x_i + a y_{i-1}, y_0 = x_0, computed in order: each step rounds the product a y_{i-1}
    and the sum once each (or once, fused), as the error bounds of its callers assume. It is the
    forward substitution of the unit lower bidiagonal system with -a below the diagonal, done by
    BLAS ``dtbsv`` (scipy.linalg.blas: cheap to import, where scipy.signal's ``lfilter``, the same
    recursion, costs a large import)."""
    from scipy.linalg import blas

    xs: FloatArray = np.ascontiguousarray(x, dtype=np.float64)
    if xs.size == 0:
        return xs
    band = np.empty((2, xs.size))
    band[0] = 1.0
    band[1] = -a
    out: FloatArray = np.asarray(blas.dtbsv(1, band, xs, lower=1, diag=1), dtype=np.float64)
    return out
