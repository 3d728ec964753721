"""The lower convex hull of points given by increasing abscissae (Andrew's monotone chain)."""

from __future__ import annotations

import numpy as np

from accountant.core.types import FloatArray


def lower_convex_hull(x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Vertices of the lower convex hull of points sorted by x (Andrew's monotone chain)."""
    hx: list[float] = []
    hy: list[float] = []
    for xi, yi in zip(x.tolist(), y.tolist(), strict=True):
        if hx and xi == hx[-1]:
            if yi >= hy[-1]:
                continue
            hx.pop()
            hy.pop()
        while len(hx) >= 2:
            cross = (hx[-1] - hx[-2]) * (yi - hy[-2]) - (hy[-1] - hy[-2]) * (xi - hx[-2])
            if cross <= 0.0:
                hx.pop()
                hy.pop()
            else:
                break
        hx.append(xi)
        hy.append(yi)
    return np.asarray(hx), np.asarray(hy)
