"""Local randomizers: k-ary randomized response (Warner 1965; Kairouz, Oh & Viswanath 2016)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import FDP, FiniteLossTradeoff, Guarantee, PureDP, check_real

from .base import Mechanism, OutputSpec, check_rng, check_size

__all__ = ["RandomizedResponse"]


@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    """k-ary randomized response on records in {0, ..., k-1}: keep the true value with probability
    e^eps/(e^eps + k - 1), otherwise report one of the k - 1 other values uniformly; eps-LDP.

    Applied record by record (``data`` may be one record or an array of records, each randomized
    independently). Neighbouring inputs differ in one record, so ``sensitivity`` is 1 (records
    changed). guarantee(): the exact curve ``FiniteLossTradeoff.randomized_response(eps, k)``;
    standard_guarantee(): ``PureDP(eps)``. The keep/flip decision compares a float uniform with a
    float probability (not an exact sampler).
    """

    k: int
    eps: float

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 2:
            raise ValueError(f"k must be an integer >= 2, got {self.k!r}")
        object.__setattr__(self, "k", int(self.k))
        object.__setattr__(self, "eps", check_real("eps", self.eps, low=0.0, high=math.inf, high_open=True))

    @property
    def sensitivity(self) -> Any:
        return sympy.Integer(1)

    @property
    def p_keep(self) -> float:
        """Probability of reporting the true value, e^eps / (e^eps + k - 1)."""
        return 1.0 / (1.0 + (self.k - 1) * math.exp(-self.eps))

    def guarantee(self) -> Guarantee:
        return FDP(FiniteLossTradeoff.randomized_response(self.eps, self.k))

    def standard_guarantee(self) -> Guarantee:
        return PureDP(self.eps)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("discrete", (), f"one value in 0..{self.k - 1} per record")

    def _records(self, data: ArrayLike) -> NDArray[np.int64]:
        x = np.asarray(data)
        if x.dtype.kind not in "iuf" or not np.array_equal(x, np.round(x)):
            raise ValueError("records must be integers in 0..k-1")
        bad = (x < 0) | (x >= self.k)
        if np.any(bad):
            raise ValueError(f"records must lie in 0..{self.k - 1}; offending values: "
                             f"{np.unique(x[bad])[:5].tolist()}")
        return x.astype(np.int64)

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x = self._records(data)
        keep = rng.random((m, *x.shape)) < self.p_keep
        other = rng.integers(0, self.k - 1, size=(m, *x.shape))
        other = other + (other >= x[None, ...])  # uniform over the k - 1 values != x
        return np.where(keep, x[None, ...], other).astype(np.int64)

    def sample(self, data: ArrayLike, rng: np.random.Generator, size: int | None = None) -> Any:
        """Randomize each record; outputs have the shape of ``data`` (stacked on axis 0 for ``size``)."""
        rng = check_rng(rng)
        m = check_size(size)
        out = self._sample(data, rng, m)
        return out[0] if size is None else out

    def log_pmf(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        """log P(report y | record x), elementwise."""
        yy = np.asarray(y)
        log_keep = math.log(self.p_keep)
        log_other = math.log1p(-self.p_keep) - math.log(self.k - 1)
        return np.where(yy == np.asarray(x), log_keep, log_other)

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> NDArray[np.float64]:
        """Sum over records of log P(y_i | data_i) - log P(y_i | data2_i); y of the data's shape,
        optionally stacked on axis 0."""
        x1, x2 = self._records(data), self._records(data2)
        if x1.shape != x2.shape:
            raise ValueError(f"data and data2 must have the same shape, got {x1.shape} and {x2.shape}")
        yy = self._records(y)
        if yy.shape == x1.shape:
            yy = yy[None, ...]
        if yy.shape[1:] != x1.shape:
            raise ValueError(f"y must have shape {x1.shape} or (m, *{x1.shape}), got {yy.shape}")
        diff = self.log_pmf(yy, x1[None, ...]) - self.log_pmf(yy, x2[None, ...])
        return np.asarray(diff.reshape(diff.shape[0], -1).sum(axis=1), dtype=np.float64)

    def estimate_counts(self, reports: ArrayLike) -> NDArray[np.float64]:
        """Unbiased estimate of the true category counts from n reports:
        (count_j - n q) / (p - q), with p = p_keep and q = (1 - p)/(k - 1)."""
        y = self._records(reports).ravel()
        p = self.p_keep
        q = (1.0 - p) / (self.k - 1)
        if p == q:
            raise ValueError("eps = 0: the reports carry no information")
        counts = np.bincount(y, minlength=self.k).astype(np.float64)
        return (counts - y.size * q) / (p - q)
