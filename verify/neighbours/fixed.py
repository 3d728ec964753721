"""Searches that do not adapt to the mechanism, and the checks of a declared domain and adjacency.

``PatternSearch`` gives the input patterns StatDP uses for mechanisms over a vector of query answers
[@ding2018detecting, Table 1]: each answer moves by at most the sensitivity. ``RandomSearch`` draws
random neighbouring datasets from a declared domain under replace-one or add/remove-one adjacency.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from accountant.core.types import ADJACENCIES, Adjacency, FloatArray
from accountant.core.validation import check_count, check_real

__all__ = ["MAX_N", "Estimator", "FloatPair", "PatternSearch", "RandomSearch", "check_adjacency",
           "check_domain", "statdp_patterns"]

#: Neighbouring pairs of datasets as the searches produce them.
FloatPair = tuple[FloatArray, FloatArray]
#: What an adaptive search is given: estimated privacy loss of each candidate pair.
Estimator = Callable[[Sequence[FloatPair]], Sequence[float]]
#: Largest dataset size (number of answers or records) of a generated pair.
MAX_N = 10**7


def _check_patterns(n: int, sensitivity: float, base: float) -> tuple[int, float, float]:
    n = check_count("n", n, low=1, high=MAX_N)
    s = check_real("sensitivity", sensitivity, low=0.0, high=math.inf, low_open=True, high_open=True)
    b = check_real("base", base, low=-math.inf, high=math.inf, low_open=True, high_open=True)
    if not math.isfinite(b + s):
        raise ValueError(f"base + sensitivity must be finite, got base = {base!r}, sensitivity = {s!r}")
    return n, s, b


def statdp_patterns(n: int, sensitivity: float = 1.0,
                    base: float = 0.0) -> list[tuple[FloatArray, FloatArray]]:
    """The StatDP patterns for n query answers: one above, one below, one above rest below, one below
    rest above, half-half, all above, all below, x-shape. Answers of ``data`` sit at ``base +
    sensitivity`` (x-shape: alternate blocks), and each answer of ``data2`` differs by at most
    ``sensitivity``."""
    n, s, base = _check_patterns(n, sensitivity, base)
    one = np.full(n, base + s)
    h = n // 2
    rest = np.arange(n) > 0

    def v(a: FloatArray) -> FloatArray:
        return np.asarray(a, dtype=np.float64)

    pats = [
        (one, v(one + s * (np.arange(n) == 0))),                      # one above
        (one, v(one - s * (np.arange(n) == 0))),                      # one below
        (one, v(np.where(rest, one - s, one + s))),                   # one above, rest below
        (one, v(np.where(rest, one + s, one - s))),                   # one below, rest above
        (one, v(np.where(np.arange(n) < h, one + s, one - s))),       # half above, half below
        (one, v(one + s)),                                            # all above
        (one, v(one - s)),                                            # all below
        (v(np.where(np.arange(n) < h, one, one - s)),
         v(np.where(np.arange(n) < h, one - s, one))),                # x-shape
    ]
    seen: list[tuple[FloatArray, FloatArray]] = []
    for a, b in pats:
        dup = any(np.array_equal(a, x) and np.array_equal(b, y) for x, y in seen)
        if not np.array_equal(a, b) and not dup:
            seen.append((a, b))
    return seen


@dataclass(frozen=True)
class PatternSearch:
    """StatDP's patterns for a vector of ``n`` query answers of the given sensitivity."""

    n: int
    sensitivity: float = 1.0
    base: float = 0.0

    def __post_init__(self) -> None:
        _check_patterns(self.n, self.sensitivity, self.base)

    def pairs(self, rng: np.random.Generator) -> list[tuple[FloatArray, FloatArray]]:
        return statdp_patterns(self.n, self.sensitivity, self.base)


def check_domain(domain: tuple[float, float, int]) -> tuple[float, float, int]:
    """A scalar domain ``(low, high, n)`` checked: finite low < high, 1 <= n <= MAX_N."""
    if not isinstance(domain, (tuple, list)) or len(domain) != 3:
        raise TypeError(f"domain must be a tuple (low, high, n), got {domain!r}")
    low = check_real("domain low", domain[0], low=-math.inf, high=math.inf, low_open=True, high_open=True)
    high = check_real("domain high", domain[1], low=low, high=math.inf, low_open=True, high_open=True)
    return low, high, check_count("domain size n", domain[2], low=1, high=MAX_N)


def check_adjacency(adjacency: str) -> Adjacency:
    """``adjacency`` when it is one of ``ADJACENCIES`` (``ValueError`` otherwise)."""
    if adjacency not in ADJACENCIES:
        raise ValueError(f"adjacency must be 'replace' or 'add_remove', got {adjacency!r}")
    return adjacency


@dataclass(frozen=True)
class RandomSearch:
    """``count`` random neighbouring datasets of n values in [low, high]. Half of them use extreme
    values (low/high), where violations of sensitivity bounds usually show."""

    domain: tuple[float, float, int]
    adjacency: str = "replace"
    count: int = 10
    integers: bool = False

    def __post_init__(self) -> None:
        check_domain(self.domain)
        check_adjacency(self.adjacency)
        check_count("count", self.count, low=1, high=MAX_N)

    def pairs(self, rng: np.random.Generator) -> list[tuple[FloatArray, FloatArray]]:
        low, high, n = check_domain(self.domain)
        out = []
        for k in range(self.count):
            if k % 2 == 0:
                x = rng.choice([low, high], n)
            else:
                x = rng.uniform(low, high, n)
            if self.integers:
                x = np.round(x)
            i = int(rng.integers(n))
            if self.adjacency == "replace":
                x2 = x.copy()
                x2[i] = high if x[i] - low < high - x[i] else low
            else:
                x2 = np.delete(x, i)
            out.append((np.asarray(x, dtype=np.float64), np.asarray(x2, dtype=np.float64)))
        return out

