"""The Laplace pair (Lap(0,1), Lap(eps,1)): atoms at +-eps, L = 2x - eps in between."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from accountant.core.rounding import LIBM_REL
from accountant.core.types import UNIT_ROUNDOFF, FloatArray
from accountant.core.validation import check_real
from accountant.pld.grid.law import SOURCE_TAIL
from accountant.pld.laws.base import LossDirection
from accountant.pld.laws.subsampled import subsample_tail
from accountant.pld.laws.tail import TailDirection
from accountant.pld.models.base import Pair


@dataclass(frozen=True)
class LaplaceDirection(TailDirection):
    """(Lap(0,1), Lap(eps,1)): atoms at +-eps, L = 2x - eps in between (symmetric)."""

    eps: float
    bounded = True

    def subsampled(self, rate: float, poisson: bool) -> tuple[LossDirection, LossDirection | None]:
        return subsample_tail(self, rate, poisson)

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        # the continuous part only (x in (0, eps)); its Q- and P-masses are both (1 - e^-eps)/2
        e = self.eps
        total = -0.5 * math.expm1(-e)
        gc = np.clip(g, -e, e)
        sq = np.where(g < -e, total, np.where(g < e, 0.5 * -np.expm1(-(e - gc) / 2), 0.0))
        sp = np.where(g < -e, total, np.where(g < e, 0.5 * math.exp(-e) * np.expm1((e - gc) / 2),
                                              0.0))
        return total - sq, sq, total - sp, sp

    def point_masses(self) -> tuple[FloatArray, FloatArray]:
        e = self.eps
        return np.array([-e, e]), np.array([0.5 * math.exp(-e), 0.5])

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        return -self.eps, self.eps

    def tail_accuracy(self, g: FloatArray,
                      dg: FloatArray) -> tuple[FloatArray, FloatArray]:
        # both densities of the continuous part are at most 1/4 in the loss: an argument error dg
        # moves a tail by at most a quarter of it, and only where the exact or the computed
        # argument lies in (-eps, eps) (outside, the tails are the constants 0 and ``total``);
        # eps - g rounds relatively (exactly near eps, Sterbenz), and so do the closed forms: sp =
        # e^-eps expm1(.) / 2 errs by two elementary functions' LIBM_REL, its argument's u (expm1
        # is at most as sensitive as its argument) and two products'; sq by less; total - sq
        # cancels within u total (g < 0)
        u = UNIT_ROUNDOFF
        band = (g > -self.eps - dg) & (g < self.eps + dg)
        ab = 0.3 * np.where(band, dg, 0.0) + np.where(g < 0.0, 2 * u * -math.expm1(-self.eps), 0.0)
        return np.full(g.shape, 2.0 * LIBM_REL + 4.0 * u), np.asarray(ab, dtype=np.float64)

    def slope_bounds(self, g: FloatArray,
                     dg: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        # under Lap(eps, 1) the continuous part x in (0, eps) has density e^{x - eps} / 2 and
        # L = 2x - eps: f(l) is proportional to e^{l/2} on (-eps, eps)
        e = self.eps
        lo, hi = self.widened(g, dg)
        return (np.where((lo < e) & (hi > e), -np.inf, 0.5),
                np.where((lo < -e) & (hi > -e), np.inf, 0.5))

    def atoms(self) -> tuple[float, ...]:
        return (-self.eps, self.eps)


@dataclass(frozen=True)
class LaplacePair(Pair):
    """(Lap(0,1), Lap(eps,1)) with eps = sensitivity / scale; symmetric."""

    eps: float
    kind: ClassVar[str | None] = "laplace"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", check_real("eps", self.eps, low=0.0, low_open=True,
                                                   high=700.0))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return LaplaceDirection(self.eps), None
