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

from accountant.core.types import UNIT_ROUNDOFF, FloatArray
from accountant.core.validation import check_count, check_real
from accountant.pld.grid.law import SOURCE_TAIL
from accountant.pld.laws.base import LossDirection
from accountant.pld.laws.tail import TailDirection
from accountant.pld.models.base import Pair


@dataclass(frozen=True)
class _VarianceDirection(TailDirection):
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

    def tail_accuracy(self, g: FloatArray,
                      dg: FloatArray) -> tuple[FloatArray, FloatArray]:
        # scipy's chi2 (cephes' igam/igamc) forms x^c e^{-x} / Gamma(c) as exp(c log x - x -
        # lgamma(c)), c = k/2, x = s/2: its error is about u times that exponent's terms
        # (measured against mpmath within (|c log x| + x + |lgamma c| + 64) u for k = 1 to 1e4,
        # tests/test_pld_split.py), charged 4 times. The argument s = (g - a)/b errs by dg/|b|
        # plus the roundings of a, b (b cancels for lam near 1), g - a and the quotient; then
        # |d log T / ds| <= 1/2 + (c + 1)/s for both tails of chi^2_k (F(s) >= f(s) s / c;
        # the hazard is at most 1/2 for c >= 1, and 1/2 + 1/(2s) for c = 1/2 by Mills' ratio).
        # Within ds of 0 the tails change by at most F(s + ds) (absolute, twice the computed).
        u = UNIT_ROUNDOFF
        a, b = self._ab
        lam, c = self.lam, 0.5 * self.dof
        t = (g - a) / b
        rel_b = u * (1.0 / lam + 1.0) / abs(1.0 / lam - 1.0) + 3.0 * u
        ds = (dg + 2.0 * u * (np.abs(g) + 2.0 * abs(a))) / abs(b) + np.abs(t) * (rel_b + 2.0 * u)
        from scipy import stats  # imported on use: slow to import

        chi = stats.chi2(self.dof)
        rel = np.zeros_like(g)
        ab = np.zeros_like(g)
        for s, d in ((t, ds), (t / lam, ds / lam + 2.0 * u * np.abs(t / lam))):
            x = np.maximum(s, 1e-300) / 2.0
            own = 4.0 * u * (np.abs(c * np.log(x)) + x + abs(math.lgamma(c)) + 64.0)
            with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
                arg = np.expm1(d * (0.5 + (c + 1.0) / (s - d))) * 1.01
            near = s - d <= 0.0
            arg = np.where(near, 0.0, arg)
            # outside the support (s + d <= 0) the tails are exact
            rel = np.maximum(rel, np.where(s + d <= 0.0, 8.0 * u, own + arg))
            ab = np.maximum(ab, np.where(near & (s + d > 0.0),
                                         2.0 * chi.cdf(np.maximum(s, 0.0) + d), 0.0))
        return rel, np.asarray(ab, dtype=np.float64)

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
        # [1e-12, 1e12]: the other order uses 1 / ratio, which must lie in the same range
        r = check_real("ratio", self.ratio, low=1e-12, high=1e12)
        if r == 1.0:
            raise ValueError("ratio must differ from 1 (equal variances lose nothing)")
        object.__setattr__(self, "ratio", r)
        object.__setattr__(self, "dof", check_count("dof", self.dof, high=10**8))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return _VarianceDirection(self.ratio, self.dof), _VarianceDirection(1.0 / self.ratio, self.dof)


__all__ = ["GaussianVariancePair"]
