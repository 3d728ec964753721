"""The winsorised mean of block values, a subsample-and-aggregate aggregator with privately chosen
winsorisation bounds [@smith2011privacy; @dwork2014algorithmic, Sec. 7.1].

On m block values v_1, ..., v_m in [lower, upper] (replace-one: a changed row changes one value):

1. a = the ``quantile``-quantile and b = the (1 - ``quantile``)-quantile of the v_i, each by the
   exponential mechanism (``ExponentialQuantile``, eps_q = eps s / 2 each, s = ``bounds_share``),
   widened to the edges of their grid cells (so b - a >= (upper - lower)/bins > 0);
2. the mean of the v_i clipped to [a, b], whose L1 sensitivity given (a, b) is (b - a)/m, released by
   the catalogue's lattice ``Laplace`` calibrated to eps_m = eps (1 - s).

(a, b) is a released output, so step 2 is a mechanism chosen adaptively from it and the three steps
compose to ``PureDP(eps)``. The bounds track the spread of the block values (of order sd/sqrt(block
size) for block means) instead of [lower, upper]: the noise is (b - a)/(m eps_m) where the
``trimmed_mean_aggregator``'s is (upper - lower)/((m - 2k) eps).

Winsorising at fixed ranks (the k smallest set to v_(k+1), the k largest to v_(m-k)) with public bounds
would not help: one replaced value can move v_(m-k) across the whole range while k values sit at the
top, so its sensitivity is (k + 1)(upper - lower)/m, at least the trimmed mean's (upper - lower)/(m - 2k)
whenever m >= 2k + 2 (tests: exhaustive check that the bound is attained).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import Guarantee, PureDP, implies
from accountant.core.validation import check_count, check_real

from ..base import Mechanism, OutputSpec
from ..domain import Domain
from ..noise import Laplace
from ..queries import CustomQuery
from .release import float_slack
from .robust import ExponentialQuantile
from .stability import check_bounds, check_eps

__all__ = ["WinsorisedMean", "winsorised_mean"]

#: Symbols of the released winsorisation bounds in the declared sensitivity.
LOW, HIGH = sympy.symbols("a b", real=True)


def winsorised_mean(values: ArrayLike, low: float, high: float) -> float:
    """The mean of the values clipped to [low, high]."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    return float(np.clip(v, low, high).mean())


@dataclass(frozen=True)
class WinsorisedMean(Mechanism):
    """The winsorised mean of ``blocks`` values in [lower, upper] with private bounds (module
    docstring); ``PureDP(eps)`` under replace-one. ``sensitivity`` is (b - a)/m in the released bounds
    a, b (sympy symbols ``a``, ``b``); ``mean_mechanism(a, b)`` is the Laplace release for given bounds.
    """

    lower: float
    upper: float
    blocks: int
    eps: float
    quantile: float = 0.1
    bounds_share: float = 0.5
    bins: int = 4096

    def __post_init__(self) -> None:
        lo, hi = check_bounds(self.lower, self.upper)
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "blocks", check_count("blocks", self.blocks, low=2, high=10**8))
        object.__setattr__(self, "eps", check_eps(self.eps))
        object.__setattr__(self, "quantile", check_real("quantile", self.quantile, low=0.0, high=0.5,
                                                        low_open=True))
        object.__setattr__(self, "bounds_share", check_real("bounds_share", self.bounds_share, low=0.0,
                                                            high=1.0, low_open=True, high_open=True))
        object.__setattr__(self, "bins", check_count("bins", self.bins, low=2, high=2**24))

    @property
    def eps_bounds(self) -> float:
        """eps of each of the two quantile releases (rounded down)."""
        return math.nextafter(self.eps * self.bounds_share / 2.0, 0.0)

    @property
    def eps_mean(self) -> float:
        """eps of the Laplace release, eps - 2 ``eps_bounds`` rounded down (exactly: the three sum to
        at most eps)."""
        rest = Fraction(self.eps) - 2 * Fraction(self.eps_bounds)
        f = float(rest)
        return f if Fraction(f) <= rest else math.nextafter(f, 0.0)

    def bound_mechanisms(self) -> tuple[ExponentialQuantile, ExponentialQuantile]:
        """The exponential-mechanism quantiles giving a and b."""
        return tuple(ExponentialQuantile(self.lower, self.upper, self.blocks, self.eps_bounds, q, self.bins)
                     for q in (self.quantile, 1.0 - self.quantile))  # type: ignore[return-value]

    def mean_mechanism(self, low: float, high: float) -> Laplace:
        """The lattice Laplace on the mean of the values clipped to [low, high], L1 sensitivity
        (high - low)/m (times ``float_slack`` for the float mean), calibrated to ``PureDP(eps_mean)``."""
        return _mean_mechanism(self.blocks, self.eps_mean, float(low), float(high))

    @property
    def sensitivity(self) -> Any:
        """L1 sensitivity of the winsorised mean given the released bounds a < b: (b - a)/m."""
        return (HIGH - LOW) / self.blocks

    def guarantee(self) -> Guarantee:
        """``PureDP(eps)``: the parts are PureDP(eps_bounds) twice and PureDP(eps_mean), whose sum is
        at most eps in exact arithmetic (adaptive composition)."""
        return PureDP(self.eps)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("continuous", (), "a lattice multiple near the winsorised mean")

    def _values(self, data: ArrayLike) -> NDArray[np.float64]:
        return Domain(self.lower, self.upper, self.blocks, clip=True).validate(data)

    def bounds(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[np.float64]:
        """m private (a, b) pairs, shape (m, 2): the two quantile releases sorted, widened to the
        edges of their grid cells."""
        v = self._values(data)
        qa, qb = self.bound_mechanisms()
        half = (self.upper - self.lower) / self.bins / 2.0
        pairs = np.sort(np.stack([qa.sample(v, rng, size=m), qb.sample(v, rng, size=m)], axis=1), axis=1)
        lo = np.maximum(pairs[:, 0] - half, self.lower)
        hi = np.minimum(pairs[:, 1] + half, self.upper)
        return np.asarray(np.stack([lo, hi], axis=1), dtype=np.float64)

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        v = self._values(data)
        ab = self.bounds(v, rng, m)
        out = np.empty(m)
        uniq, inverse = np.unique(ab, axis=0, return_inverse=True)
        for i, (lo, hi) in enumerate(uniq.tolist()):
            idx = np.flatnonzero(inverse.reshape(-1) == i)
            out[idx] = self.mean_mechanism(lo, hi).sample(v, rng, size=idx.size)
        return out


@lru_cache(maxsize=4096)
def _mean_mechanism(blocks: int, eps_mean: float, low: float, high: float) -> Laplace:
    """``WinsorisedMean.mean_mechanism`` (cached: the released bounds lie on a grid and repeat). The
    scale is Delta/eps_mean enlarged by 1 + 2^-14/eps_mean, which covers the lattice's K1/t <=
    Delta/b + 2^-16 (``mechanisms.noise``); the declared closed form is checked against eps_mean."""
    width = sympy.Rational((Fraction(high) - Fraction(low)) * Fraction(float_slack(blocks, 1)))
    query = CustomQuery(Domain(low, high, blocks, clip=True), lambda v: winsorised_mean(v, low, high),
                        l1=width / blocks, name=f"mean of {blocks} values winsorised to [{low}, {high}]")
    eps = Fraction(eps_mean)
    scale = width / blocks / sympy.Rational(eps) * sympy.Rational(1 + Fraction(1, 2**14) / eps)
    mech = Laplace(query, scale)
    if not implies(mech.closed_form_guarantee(), PureDP(eps_mean)):
        raise AssertionError("the winsorised mean's Laplace release does not meet eps_mean")
    return mech
