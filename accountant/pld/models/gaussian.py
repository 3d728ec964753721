"""The Gaussian pair (N(0,1), N(mu,1)): L = mu x - mu^2/2 [@koskela2020computing]."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from accountant.core.normal import ndtr_pair
from accountant.core.types import UNIT_ROUNDOFF, FloatArray
from accountant.core.validation import check_real
from accountant.pld.grid.law import SOURCE_TAIL
from accountant.pld.laws.base import LossDirection
from accountant.pld.laws.errors import UNDERFLOW, CellErrors, ndtr_accuracy, scaled_up
from accountant.pld.laws.subsampled import subsample_tail
from accountant.pld.laws.tail import TailDirection, linear_slopes, z_of_tail
from accountant.pld.models.base import Pair


@dataclass(frozen=True)
class GaussianDirection(TailDirection):
    """(N(0,1), N(mu,1)): L = mu x - mu^2/2, symmetric [@koskela2020computing]."""

    mu: float

    def subsampled(self, rate: float, poisson: bool) -> tuple[LossDirection, LossDirection | None]:
        return subsample_tail(self, rate, poisson)

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        zq = g / self.mu - self.mu / 2
        zp = g / self.mu + self.mu / 2
        (fq, sq), (fp, sp) = ndtr_pair(zq), ndtr_pair(zp)
        return fq, sq, fp, sp

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        m, z = self.mu, z_of_tail(tail)
        return m * (-z + m / 2), m * (z + m / 2)

    def _arguments(self, g: FloatArray,
                   dg: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """z = g / mu -+ mu / 2 and their error: dg / mu, the quotient's and the sum's rounding."""
        u = UNIT_ROUNDOFF
        with np.errstate(invalid="ignore"):
            zq = g / self.mu - self.mu / 2
            zp = g / self.mu + self.mu / 2
            dz = (dg / self.mu + 2 * u * (np.abs(g / self.mu) + self.mu)) * 1.01
        return zq, zp, np.where(np.isfinite(g), dz, 0.0)

    def _accuracies(self, g: FloatArray, dg: FloatArray) -> tuple[FloatArray, ...]:
        """(zq, zp, dz, ndtr_accuracy at zq, at zp) for nodes g within dg of exact ones; the last
        call's result is kept for the ``tail_errors`` that reads the nodes ``tail_accuracy`` did,
        which drops it (5 arrays of the grid: fresh memory for the later passes costs more than
        it saves)."""
        memo = self.__dict__.get("_memo")
        if memo is not None and memo[0] is g and memo[1] is dg:
            return tuple(memo[2])
        zq, zp, dz = self._arguments(g, dg)
        out = (zq, zp, dz, ndtr_accuracy(zq, dz), ndtr_accuracy(zp, dz))
        self.__dict__["_memo"] = (g, dg, out)
        return out

    def tail_accuracy(self, g: FloatArray,
                      dg: FloatArray) -> tuple[FloatArray, FloatArray]:
        _, _, _, acc_q, acc_p = self._accuracies(g, dg)
        rel = np.maximum(acc_q, acc_p)
        return rel, np.zeros_like(rel)

    def tail_errors(self, g: FloatArray, dg: FloatArray, tails: tuple[FloatArray, ...],
                    which: tuple[int, ...] = (0, 1, 2, 3)) -> tuple[FloatArray, ...]:
        # each tail Phi(+-z) at its own argument: a tail near 1 hardly moves (``ndtr_accuracy``;
        # the symmetric bound at +-z is that at z)
        zq, zp, dz, acc_q, acc_p = self._accuracies(g, dg)
        self.__dict__.pop("_memo", None)
        signed = (1.0, -1.0, 1.0, -1.0)
        return tuple(np.asarray(ndtr_accuracy(signed[i] * (zq if i < 2 else zp), dz,
                                              own_value=True, symmetric=acc_q if i < 2 else acc_p)
                                * tails[i] + UNDERFLOW, dtype=np.float64)
                     for i in which)

    def profile_error(self, g: FloatArray, dg: FloatArray, tails: tuple[FloatArray, ...],
                      errors: CellErrors) -> FloatArray:
        # the two upper tails' own errors (``tail_errors``): near the bottom both are near 1.
        # e^g dsp in log space (``scaled_up``), and at most e^g (sp~ + sp): for zp > 1, Mills'
        # ratio sp = Phi(-zp) <= phi(zp) / zp bounds the exact tail where ndtr flushed it (its
        # error bound UNDERFLOW, times e^g > e^709, would be large)
        dsq, dsp = self.tail_errors(g, dg, tails, (1, 3))
        _, zp, dz = self._arguments(g, dg)
        z = zp - dz
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            mills = np.where(z > 1.0, np.exp(g + dg - 0.5 * z * z - np.log(z)
                                             - 0.5 * math.log(2.0 * math.pi)), np.inf)
            esp = np.minimum(scaled_up(g, dsp), scaled_up(g, tails[3]) + mills)
            own = dsq + esp * (1.0 + 1e-6)
        default = super().profile_error(g, dg, tails, errors)
        return np.asarray(np.where(np.isnan(own), default, np.minimum(own, default)),
                          dtype=np.float64)

    def slope_bounds(self, g: FloatArray,
                     dg: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        # L ~ N(mu^2/2, mu^2) under Q: (log f)'(l) = 1/2 - l / mu^2, decreasing; 4 roundings
        return linear_slopes(0.5, -1.0 / (self.mu * self.mu), *self.widened(g, dg))


@dataclass(frozen=True)
class GaussianPair(Pair):
    """(N(0,1), N(mu,1)) with mu = sensitivity / sigma; symmetric [@koskela2020computing]."""

    mu: float
    kind: ClassVar[str | None] = "gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_real("mu", self.mu, low=0.0, low_open=True, high=1e4))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return GaussianDirection(self.mu), None
