"""Helpers shared by the estimator tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from mechanisms import BOTTOM, Mechanism, refused


def encoded(mech: Mechanism) -> Callable[[Any, np.random.Generator, int], np.ndarray]:
    """A vectorised sampler returning rows [refused, value] (value 0 for a refusal): an injective
    post-processing of the outputs, so an audit of it bounds the mechanism's privacy loss from below."""

    def fn(x: Any, rng: np.random.Generator, size: int) -> np.ndarray:
        out = mech.sample(x, rng, size)
        r = refused(out)
        vals = np.array([0.0 if o is BOTTOM else float(o) for o in out])
        return np.stack([r.astype(np.float64), vals], axis=1)

    return fn


def median_block(j: int, n: int = 41) -> np.ndarray:
    """n records in [0, 1]: zeros, a block of 2j + 1 halves centred on the median, ones; the distance
    to a dataset whose median has local sensitivity above eta < 1/2 is then j."""
    m = (n + 1) // 2
    return np.array([0.0] * (m - 1 - j) + [0.5] * (2 * j + 1) + [1.0] * (n - m - j))


def drop_one_half(x: np.ndarray) -> np.ndarray:
    y: np.ndarray = x.copy()
    y[np.flatnonzero(y == 0.5)[0]] = 0.0
    return y
