"""The vector-answer targets of the adaptive search (tests and benchmarks): n = 1 answer of
dimension ``D`` = 4 in ``DOMAIN``, the privacy loss of a pair under each noise, and ``CASES``: per
target the norm of the answers' ball, the loss, its closed-form worst over the ball of radius 1 and
the search methods that reach it (derivations in ``tests/verify/test_audit_search_answers.py``)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from mechanisms import Domain

__all__ = ["CASES", "DOMAIN", "D", "Loss", "W", "l1_loss", "l2_loss", "weighted_loss"]

D = 4
DOMAIN = Domain(-5.0, 5.0, n=1, d=D, adjacency="replace")
W = np.array([1.0, 2.0, 3.0, 0.5])  # 1 / b_j of the anisotropic Laplace

Loss = Callable[[np.ndarray, np.ndarray], float]


def l1_loss(x: np.ndarray, x2: np.ndarray) -> float:
    return float(np.abs(x - x2).sum())


def l2_loss(x: np.ndarray, x2: np.ndarray) -> float:
    return float(np.linalg.norm(x - x2))


def weighted_loss(x: np.ndarray, x2: np.ndarray) -> float:
    return float((W * np.abs(x - x2)).sum())


# (norm, loss of a pair, its closed-form worst over the ball of radius 1, the methods that reach it)
CASES = {
    "laplace-l1": ("l1", l1_loss, 1.0, ("climb", "surrogate")),
    "gauss-l2": ("l2", l2_loss, 1.0, ("climb", "surrogate")),
    "gauss-l1-axis": ("l1", l2_loss, 1.0, ("climb", "surrogate")),
    "laplace-l1-noise-declared-l2": ("l2", l1_loss, math.sqrt(D), ("climb", "surrogate")),
    "laplace-linf": ("linf", l1_loss, float(D), ("climb", "surrogate")),
    "anisotropic-laplace-l2": ("l2", weighted_loss, float(np.linalg.norm(W)), ("surrogate",)),
}
