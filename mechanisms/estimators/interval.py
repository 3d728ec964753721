"""A private data-adaptive interval inside a public box [L, U], from a thresholded noisy histogram.

A noisy histogram over K equal bins of [L, U] (``statistics.noisy_histogram``: lattice Laplace noise of
scale b, Delta_1 = 1 under add/remove, 2 under replace-one) is PureDP(eps_1). Bins whose noisy count
exceeds ``threshold`` * b are occupied; the interval [lo, hi] spans the occupied bins widened on each
side by ``margin`` times half their span (rounded up to whole bins), within [L, U]; it is all of [L, U]
when no bin is occupied. [lo, hi] is a function of the noisy counts only (post-processing), so a
mechanism that clips its records into it and spends eps_2 on a release is (eps_1 + eps_2)-DP by
adaptive composition [@dwork2014algorithmic, Thm 3.16].

What the interval cannot see: the threshold hides bins with fewer than about ``threshold`` * b
records (b = Delta_1/eps_1), so records beyond [lo, hi] are clipped into it. The margin, proportional
to the occupied span, follows the scale of the tails; a point mass large enough to clear the
threshold keeps its bin inside. The estimators using the interval (``AdaptiveVariance``,
``AdaptiveMean``) state the clipping bias this leaves.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, cast

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import Guarantee, PureDP, compose
from accountant.core.validation import check_count, check_real

from ..base import Mechanism
from ..domain import Adjacency, Domain
from ..statistics import noisy_histogram
from .stability import check_bounds

__all__ = ["IntervalStage", "candidate_centres", "float_down", "histogram_scale", "interval_histogram",
           "occupied_interval", "split_budget"]

#: Budget shares of a stage-2 split are multiples of 1 / SHARE_UNITS (``split_budget``).
SHARE_UNITS = 64
#: Candidate centres of a stage-2 release: CENTRES equally spaced points of [lo, hi], ends included.
CENTRES = 33


def candidate_centres(lo: float, hi: float) -> NDArray[np.float64]:
    """The CENTRES equally spaced candidate centres of [lo, hi], ends included."""
    return np.asarray(lo + (hi - lo) * np.linspace(0.0, 1.0, CENTRES), dtype=np.float64)


def float_down(x: Fraction) -> float:
    """The largest double <= x."""
    v = float(x)
    return math.nextafter(v, -math.inf) if Fraction(v) > x else v


class IntervalStage:
    """The budget and the first stage of a two-stage estimator on a private interval (module
    docstring): eps_1 = ``interval_share`` eps, rounded down, on the noisy histogram of ``bins``
    equal bins of [lower, upper]; the release gets eps_2 = eps - eps_1, rounded down, so eps_1 + eps_2
    <= eps exactly. ``guarantee()`` composes PureDP(eps_1) and PureDP(eps_2) (the release may spend
    less); ``closed_form_guarantee()`` is PureDP(eps). Mixed into frozen dataclasses with these
    fields and an ``adjacency``; ``interval_share`` None (a field default) is resolved at
    construction to the estimator's default for its adjacency (``check_interval_fields``)."""

    lower: float
    upper: float
    eps: float
    n: int | None
    bins: int
    interval_share: float | None
    threshold: float
    margin: float
    adjacency: Adjacency

    def check_interval_fields(self, default_share: Mapping[Adjacency, float] | None = None) -> None:
        """Validate in place the bounds, ``adjacency``, ``n`` (required under replace-one, where
        it is public; under add/remove an optional public lower bound on the size), ``bins``,
        ``interval_share`` (None: ``default_share[adjacency]``), ``threshold`` and ``margin``."""
        lo, hi = check_bounds(self.lower, self.upper)
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        if self.adjacency not in ("replace", "add_remove"):
            raise ValueError(f"adjacency must be 'replace' or 'add_remove', got {self.adjacency!r}")
        if self.n is None:
            if self.adjacency == "replace":
                raise ValueError("n (the public dataset size) is required under adjacency='replace'")
        else:
            object.__setattr__(self, "n", check_count("n", self.n, low=1, high=10**12))
        object.__setattr__(self, "bins", check_count("bins", self.bins, low=2, high=4096))
        share = self.interval_share
        if share is None:
            if default_share is None:
                raise ValueError("interval_share is required (this estimator has no default)")
            share = default_share[self.adjacency]
        object.__setattr__(self, "interval_share", check_real(
            "interval_share", share, low=0.0, high=1.0, low_open=True, high_open=True))
        object.__setattr__(self, "threshold", check_real("threshold", self.threshold, low=0.0, high=1e6))
        object.__setattr__(self, "margin", check_real("margin", self.margin, low=0.0, high=1e6))

    @property
    def interval_eps(self) -> float:
        """eps_1 = interval_share * eps, rounded down."""
        share = cast(float, self.interval_share)  # a float once check_interval_fields has run
        return float_down(Fraction(self.eps) * Fraction(share))

    @property
    def release_eps(self) -> float:
        """eps_2 = eps - eps_1, rounded down (so eps_1 + eps_2 <= eps exactly)."""
        return float_down(Fraction(self.eps) - Fraction(self.interval_eps))

    @property
    def histogram(self) -> Mechanism:
        """The stage-1 noisy histogram (PureDP(eps_1))."""
        return interval_histogram(self.lower, self.upper, self.n, self.adjacency, self.bins,
                                  self.interval_eps)

    @property
    def sensitivity(self) -> Any:
        """Of the stage-1 histogram (the release's depends on the interval it picks)."""
        return self.histogram.sensitivity

    def guarantee(self) -> Guarantee:
        return compose([PureDP(self.interval_eps), PureDP(self.release_eps)])

    def closed_form_guarantee(self) -> Guarantee:
        return PureDP(self.eps)


@functools.lru_cache(maxsize=4096)
def _shares(eps: float, units: tuple[int, ...]) -> tuple[float, ...]:
    """eps * u / SHARE_UNITS for each u, rounded down."""
    return tuple(float_down(Fraction(eps) * Fraction(u, SHARE_UNITS)) for u in units)


def split_budget(eps: float, weights: ArrayLike) -> tuple[float, ...]:
    """eps split in proportion to the non-negative ``weights`` (not all 0): each share rounded down to a
    multiple of 1/SHARE_UNITS, at least 1/SHARE_UNITS, the largest lowered until the shares sum to
    <= 1; each budget eps * share rounded down, so the budgets sum to <= eps in exact arithmetic.

    With Laplace-like noise of scale Delta_i/eps_i on statistics q_i entering an estimate with
    first-order weights a_i = Delta_i |dT/dq_i|, the error variance 2 sum (a_i/eps_i)^2 under
    sum eps_i = eps is least at eps_i proportional to a_i^(2/3) (Lagrange): pass a_i^(2/3)."""
    w = np.asarray(weights, dtype=np.float64)
    units = np.maximum(np.floor(w / w.sum() * SHARE_UNITS), 1).astype(int)
    while units.sum() > SHARE_UNITS:
        units[int(np.argmax(units))] -= 1
    return _shares(eps, tuple(int(u) for u in units))


@functools.lru_cache(maxsize=64)
def interval_histogram(lower: float, upper: float, n: int | None, adjacency: Adjacency, bins: int,
                       eps: float) -> Mechanism:
    """The PureDP(eps) noisy histogram of ``bins`` equal bins of [lower, upper] (n fixed under
    replace-one, None for add/remove with unknown size)."""
    edges = np.linspace(lower, upper, bins + 1)
    edges[-1] = upper
    domain = Domain(lower, upper, adjacency=adjacency) if n is None else \
        Domain(lower, upper, n, adjacency=adjacency)
    return noisy_histogram(domain, PureDP(eps), tuple(edges.tolist()))


@functools.lru_cache(maxsize=64)
def histogram_scale(mech: Mechanism) -> float:
    """The Laplace scale b of a calibrated histogram, as a float."""
    return float(sympy.N(mech.scale, 20))  # type: ignore[attr-defined]


def occupied_interval(counts: NDArray[np.float64], scale: float, lower: float, upper: float,
                      threshold: float, margin: float) -> tuple[float, float, NDArray[np.intp]]:
    """(lo, hi, occupied bin indices) from one row of noisy counts of equal bins of [lower, upper]
    with noise scale ``scale`` (module docstring): post-processing of the counts only."""
    bins = counts.size
    occ = np.flatnonzero(counts > threshold * scale)
    if occ.size == 0:
        return lower, upper, occ
    width = (upper - lower) / bins
    pad = math.ceil(margin * (int(occ[-1]) + 1 - int(occ[0])) / 2)
    j0, j1 = max(int(occ[0]) - pad, 0), min(int(occ[-1]) + 1 + pad, bins)
    lo = lower + j0 * width if j0 > 0 else lower
    hi = lower + j1 * width if j1 < bins else upper
    return lo, hi, occ
