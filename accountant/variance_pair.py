"""The privacy-loss model of a change of variance: P = N(0, lam I_k), Q = N(0, I_k).

With S = ||y||^2, L = log q/p = (k/2) log lam + (1/lam - 1) S / 2; S ~ chi^2_k under Q and
lam chi^2_k under P, so the tails of L are chi-square tails. The other order is the same model
with 1/lam (rescale y by lam^{-1/2}). Released rows of a Gaussian random projection Phi X of two
databases are such a product over the generalised eigen-directions of their covariances
[@zhou2009differential, eq. (11)]; the PLD composes the directions with certified error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ._numeric import FloatArray
from ._pldgrid import SOURCE_TAIL
from .pairs import LossDirection, Pair, _TailDirection
from .validation import check_count, check_real

__all__ = ["GaussianVariancePair"]


@dataclass(frozen=True)
class _VarianceDirection(_TailDirection):
    lam: float
    dof: int

    @property
    def _ab(self) -> tuple[float, float]:
        """L = a + b S."""
        return 0.5 * self.dof * math.log(self.lam), 0.5 * (1.0 / self.lam - 1.0)

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        a, b = self._ab
        t = (g - a) / b  # L > g  <=>  S > t (b > 0), S < t (b < 0)
        from scipy import stats  # imported on use: slow to import

        chi = stats.chi2(self.dof)
        below_q, above_q = chi.cdf(t), chi.sf(t)
        below_p, above_p = chi.cdf(t / self.lam), chi.sf(t / self.lam)
        if b > 0:
            return (np.asarray(below_q, dtype=np.float64), np.asarray(above_q, dtype=np.float64),
                    np.asarray(below_p, dtype=np.float64), np.asarray(above_p, dtype=np.float64))
        return (np.asarray(above_q, dtype=np.float64), np.asarray(below_q, dtype=np.float64),
                np.asarray(above_p, dtype=np.float64), np.asarray(below_p, dtype=np.float64))

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        a, b = self._ab
        from scipy import stats  # imported on use: slow to import

        chi = stats.chi2(self.dof)
        s_lo, s_hi = float(chi.ppf(tail)), float(chi.isf(tail))
        lo, hi = sorted((a + b * s_lo, a + b * s_hi))
        return lo, hi


@dataclass(frozen=True)
class GaussianVariancePair(Pair):
    """(N(0, ratio I_dof), N(0, I_dof)) and, for the other order, the same with 1/ratio."""

    ratio: float
    dof: int
    kind: ClassVar[str | None] = "gaussian_variance"

    def __post_init__(self) -> None:
        r = check_real("ratio", self.ratio, low=0.0, high=1e12, low_open=True)
        if r == 1.0:
            raise ValueError("ratio must differ from 1 (equal variances lose nothing)")
        object.__setattr__(self, "ratio", r)
        object.__setattr__(self, "dof", check_count("dof", self.dof, high=10**8))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return _VarianceDirection(self.ratio, self.dof), _VarianceDirection(1.0 / self.ratio, self.dof)
