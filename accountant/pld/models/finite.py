"""Finite pairs: randomized response, f_{eps,delta}, pairs given by loss laws, and the pair of any
trade-off curve [@dong2022gaussian, Prop. 2.2].
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import ArrayLike

from accountant.core.types import FloatArray
from accountant.core.validation import as_float_array, check_count, check_real
from accountant.notions.closed_forms import GaussianTradeoff, LaplaceTradeoff
from accountant.notions.finite_loss import FiniteLossTradeoff
from accountant.notions.tradeoff import PiecewiseLinearTradeoff, TradeoffFunction
from accountant.pld.laws.base import LossDirection
from accountant.pld.laws.finite import (
    FiniteDirection,
    curve_direction,
    density_direction,
    envelope_direction,
    knot_atoms,
    pmf_direction,
)
from accountant.pld.models.base import Pair
from accountant.pld.models.gaussian import GaussianPair
from accountant.pld.models.laplace import LaplacePair


@dataclass(frozen=True)
class RandomizedResponsePair(Pair):
    """k-ary randomized response keeping the truth w.p. e^eps / (e^eps + k - 1)."""

    eps: float
    k: int = 2
    kind: ClassVar[str | None] = "randomized_response"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", check_real("eps", self.eps, low=0.0, high=math.inf,
                                                   high_open=True))
        object.__setattr__(self, "k", check_count("k", self.k, low=2, high=10**9))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return curve_direction(FiniteLossTradeoff.randomized_response(self.eps, self.k)), None


@dataclass(frozen=True)
class ApproxDPPair(Pair):
    """The pair of f_{eps,delta}: randomized response with an atom of mass delta at infinite loss
    [@kairouz2015composition] (pure DP when delta = 0)."""

    eps: float
    delta: float = 0.0
    kind: ClassVar[str | None] = "approx_dp"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", check_real("eps", self.eps, low=0.0, high=math.inf,
                                                   high_open=True))
        object.__setattr__(self, "delta", check_real("delta", self.delta, low=0.0, high=1.0,
                                                     high_open=True))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return curve_direction(FiniteLossTradeoff.approx_dp(self.eps, self.delta)), None


@dataclass(frozen=True, eq=False)
class FinitePair(Pair):
    """A pair given by its loss directions (pmfs, densities, sampled curves): equal only to
    itself, and not serialisable. ``label`` says where it came from."""

    remove_direction: LossDirection
    add_direction: LossDirection | None = None
    label: str = "finite"

    def __post_init__(self) -> None:
        for name in ("remove_direction", "add_direction"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, LossDirection):
                raise TypeError(f"{name} must be a LossDirection, got {type(value).__name__}")
        if self.remove_direction is None:
            raise TypeError("remove_direction must be a LossDirection, got None")

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return self.remove_direction, self.add_direction

    def __repr__(self) -> str:
        return f"FinitePair({self.label})"


@dataclass(frozen=True)
class CurvePair(Pair):
    """The symmetric pair of a finite-loss or piecewise-linear curve [@dong2022gaussian, Prop. 2.2]:
    the curve's loss atoms (a finite-loss curve) or its knots' (a piecewise-linear one). Stored
    with its curve, so a PLD of f-DP guarantees is saved and reloaded with the guarantees."""

    curve: PiecewiseLinearTradeoff
    kind: ClassVar[str | None] = "curve"

    def __post_init__(self) -> None:
        if not isinstance(self.curve, PiecewiseLinearTradeoff):
            raise TypeError(f"curve must be a PiecewiseLinearTradeoff, got {type(self.curve).__name__}")

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        f = self.curve
        if isinstance(f, FiniteLossTradeoff):
            return curve_direction(f), None
        lo, qm, inf = knot_atoms(f.alphas, f.betas, True)
        olo, oqm, oinf = knot_atoms(f.alphas, f.betas, False)
        return FiniteDirection(lo, qm, inf, olo, oqm, oinf), None

    def __repr__(self) -> str:
        return f"CurvePair({self.curve!r})"


def tradeoff_pair(f: TradeoffFunction) -> Pair:
    """Dominating pair of f-DP (symmetric: it bounds both orders of neighbouring datasets);
    closed forms for Gaussian and Laplace curves, knots for piecewise-linear ones, otherwise the
    sound lower envelope and the chords of f (``envelope_direction``)."""
    if isinstance(f, GaussianTradeoff):
        return GaussianPair(f.mu)
    if isinstance(f, LaplaceTradeoff):
        return LaplacePair(f.eps)
    if isinstance(f, PiecewiseLinearTradeoff):
        return CurvePair(f)
    return FinitePair(envelope_direction(f), None, "sampled curve")


def pmfs_pair(p: ArrayLike, q: ArrayLike) -> FinitePair:
    """The pair of two pmfs on a common finite support (``PLD.from_pmfs``): remove = (p, q), add =
    (q, p)."""
    pa = as_float_array("p", p).ravel()
    qa = as_float_array("q", q).ravel()
    if pa.shape != qa.shape or pa.size == 0:
        raise ValueError("p and q must be non-empty arrays of the same length")
    for name, arr in (("p", pa), ("q", qa)):
        if (arr < 0).any() or abs(float(arr.sum()) - 1.0) > 1e-9:
            raise ValueError(f"{name} must be a pmf: non-negative and summing to 1")
    return FinitePair(pmf_direction(pa, qa), pmf_direction(qa, pa), "pmfs")


def densities_pair(p: Callable[[FloatArray], ArrayLike], q: Callable[[FloatArray], ArrayLike],
                   grid: ArrayLike) -> FinitePair:
    """The pair of two densities integrated on the cells of ``grid`` by Simpson's rule
    (``PLD.from_densities``, which states the directions' losses)."""
    x = np.unique(as_float_array("grid", grid).ravel())
    if x.size < 2 or not np.isfinite(x).all():
        raise ValueError("grid must hold at least two finite points")
    mid = (x[:-1] + x[1:]) / 2
    pv = [np.asarray(p(v), dtype=np.float64).reshape(v.shape) for v in (x, mid)]
    qv = [np.asarray(q(v), dtype=np.float64).reshape(v.shape) for v in (x, mid)]
    for name, (ends, mids) in (("p", pv), ("q", qv)):
        if (ends < 0).any() or (mids < 0).any() or not np.isfinite(ends).all():
            raise ValueError(f"{name} must be a finite non-negative density")
    w = np.diff(x) / 6
    pm = w * (pv[0][:-1] + 4 * pv[1] + pv[0][1:])
    qm = w * (qv[0][:-1] + 4 * qv[1] + qv[0][1:])
    with np.errstate(divide="ignore", invalid="ignore"):
        pts = [np.log(qv[0][:-1] / pv[0][:-1]), np.log(qv[1] / pv[1]),
               np.log(qv[0][1:] / pv[0][1:])]
    rem = density_direction(pm, qm, np.maximum.reduce(pts))
    add = density_direction(qm, pm, np.maximum.reduce([-t for t in pts]))
    return FinitePair(rem, add, "densities")
