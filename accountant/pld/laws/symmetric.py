"""The symmetric loss law with the privacy profile of a continuous law at eps >= 0
[@zhu2022optimal, Sec. 5]."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from accountant.core.types import MACHINE_EPSILON, FloatArray
from accountant.pld.grid.law import SOURCE_TAIL
from accountant.pld.laws.tail import TailDirection, widened_cells


@dataclass(frozen=True)
class SymmetricTailDirection(TailDirection):
    """The symmetric pair with the profile of a continuous pair ``base`` at eps >= 0 (see
    ``symmetric_direction``): base's law on losses > 0, its P-law there mirrored below 0 and the
    rest of the mass in an atom at 0. For g < 0, with c the continuous parts:
    Q(L > g) = Q_c(L > 0) + P_c(0 < L < -g) and P(L > g) = P_c(L > 0) + Q_c(0 < L < -g)."""

    base: TailDirection

    @property
    def q_inf(self) -> float:  # type: ignore[override]
        return self.base.q_inf

    @property
    def bounded(self) -> bool:  # type: ignore[override]
        return self.base.bounded  # the support is the base's top, mirrored

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        fq, sq, fp, sp = self.base.tails(np.abs(g))
        _, sq0, _, sp0 = (float(t[0]) for t in self.base.tails(np.zeros(1)))
        neg = g < 0
        return (np.where(neg, sp, fq), np.where(neg, sq0 + sp0 - sp, sq), np.where(neg, sq, fp),
                np.where(neg, sp0 + sq0 - sq, sp))

    def tail_accuracy(self, g: FloatArray,
                      dg: FloatArray) -> tuple[FloatArray, FloatArray]:
        # g >= 0: the base's; g < 0: two are the base's at |g| (swapped), the other two sums of
        # the base's tails at 0 and |g| (errors added, 4 roundings)
        rel, ab = self.base.tail_accuracy(np.abs(g), dg)
        rel0, ab0 = (float(t[0]) for t in self.base.tail_accuracy(np.zeros(1), np.zeros(1)))
        _, sq, _, sp = self.base.tails(np.abs(g))
        _, sq0, _, sp0 = (float(t[0]) for t in self.base.tails(np.zeros(1)))
        with np.errstate(invalid="ignore", over="ignore"):
            summed = ab + 2.0 * ab0 + (rel0 + 2.0 * MACHINE_EPSILON) * (sq0 + sp0) + rel * (sq + sp)
        return rel + MACHINE_EPSILON, np.asarray(np.where(g < 0, summed, ab), dtype=np.float64)

    def slope_bounds(self, g: FloatArray,
                     dg: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        # losses >= 0: the base's density; losses l < 0: f(l) = f_P(-l) = f_Q(-l) e^{l} of the
        # base, slope 1 - s(-l) (its cells reversed); a cell across 0 takes both parts' extremes
        pos = self.base.slope_bounds(np.maximum(g, 0.0), dg)
        neg_r = self.base.slope_bounds(np.maximum(-g, 0.0)[::-1], dg[::-1])
        if pos is None or neg_r is None:
            return None
        neg = (neg_r[0][::-1], neg_r[1][::-1])
        lo, hi = widened_cells(g, dg)
        with np.errstate(invalid="ignore"):
            n_lo = 1.0 - neg[1] - 2.0 * MACHINE_EPSILON * (np.abs(neg[1]) + 1.0)
            n_hi = 1.0 - neg[0] + 2.0 * MACHINE_EPSILON * (np.abs(neg[0]) + 1.0)
        has_pos, has_neg = hi > 0, lo < 0
        down = np.minimum(np.where(has_pos, pos[0], np.inf), np.where(has_neg, n_lo, np.inf))
        up = np.maximum(np.where(has_pos, pos[1], -np.inf), np.where(has_neg, n_hi, -np.inf))
        return (np.asarray(np.where(np.isnan(down), -np.inf, down), dtype=np.float64),
                np.asarray(np.where(np.isnan(up), np.inf, up), dtype=np.float64))

    def point_masses(self) -> tuple[FloatArray, FloatArray]:
        losses, q = self.base.point_masses()
        pos = losses > 0
        lp, qp = losses[pos], q[pos]
        pp = qp * np.exp(-lp)
        _, sq0, _, sp0 = (float(t[0]) for t in self.base.tails(np.zeros(1)))
        used = sq0 + sp0 + math.fsum(qp.tolist()) + math.fsum(pp.tolist()) + self.q_inf
        # the rest at 0, rounded up (extra Q-mass only raises delta)
        zero = max(0.0, 1.0 - used) + 8.0 * MACHINE_EPSILON * (2.0 + lp.size)
        return np.concatenate([lp, -lp, [0.0]]), np.concatenate([qp, pp, [zero]])

    def atom_error(self) -> FloatArray:
        # the base's positive atoms and their mirror images (negation is exact); 0 is exact
        losses = self.base.point_masses()[0]
        err = self.base.atom_error()[losses > 0]
        return np.concatenate([err, err, [0.0]])

    def point_mass_error(self) -> float:
        # the atom at 0: rounded up by 8 eps (2 + atoms), and 1 - used errs by the base's tails'
        # errors at 0 and the sums' rounding
        n = int(np.count_nonzero(self.base.point_masses()[0] > 0))
        _, sq0, _, sp0 = (float(t[0]) for t in self.base.tails(np.zeros(1)))
        rel0, ab0 = (float(t[0]) for t in self.base.tail_accuracy(np.zeros(1), np.zeros(1)))
        return (8.0 * MACHINE_EPSILON * (2.0 + n) + rel0 * (sq0 + sp0) + 2.0 * ab0
                + 8.0 * MACHINE_EPSILON) * 1.01

    def atoms(self) -> tuple[float, ...]:
        return tuple(float(a) for a in self.point_masses()[0])

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        hi = max(self.base.support(tail)[1], 0.0)
        return -hi, hi
