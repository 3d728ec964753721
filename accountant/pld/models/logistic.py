"""The logistic pair (Logistic(0, 1), Logistic(a, 1)): noise with density f(x) = s(x) s(-x), s the
logistic sigmoid, added to a query of sensitivity a (in units of the noise scale).

The logistic density is log-concave, so the privacy loss L(x) = log f(x - a) - log f(x) increases
in x, from -a to a (a bounded, continuous loss with no atoms). Solving e^{L(x)} = e^g gives the one
threshold

    x*(g) = log(expm1((a + g) / 2)) - log(-expm1((g - a) / 2)),   -a < g < a,

so {L > g} = {X > x*(g)} and the four tails are sigmoids: Q(L > g) = s(a - x*), Q(L <= g) =
s(x* - a), P(L > g) = s(-x*), P(L <= g) = s(x*). The pair is symmetric (x -> a - x swaps P and Q).

The tails' error bound is an interval evaluation: the exact threshold of any g' within dg of g
lies in [x*(g - dg) - rho, x*(g + dg) + rho] (x* increases in g; rho bounds the rounding of the
computed x*), each tail is monotone in x*, so its exact value lies between its values at the two
ends (computed, and widened by the sigmoid's own rounding).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import special

from accountant.core.rounding import LIBM_REL
from accountant.core.types import UNIT_ROUNDOFF, FloatArray
from accountant.core.validation import check_real
from accountant.pld.grid.law import SOURCE_TAIL
from accountant.pld.laws.base import LossDirection
from accountant.pld.laws.subsampled import subsample_tail
from accountant.pld.laws.tail import TailDirection
from accountant.pld.models.base import Pair


@dataclass(frozen=True)
class LogisticDirection(TailDirection):
    """(Logistic(0, 1), Logistic(a, 1)): L = log f(x - a) - log f(x), increasing from -a to a."""

    a: float
    bounded = True

    def subsampled(self, rate: float, poisson: bool) -> tuple[LossDirection, LossDirection | None]:
        return subsample_tail(self, rate, poisson)

    def _threshold(self, g: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(x*(g), rho): the computed threshold (-inf for g <= -a, +inf for g >= a) and a bound
        on its distance to the exact threshold of the same double g. With s1 = (g + a)/2 and
        s2 = (g - a)/2 (one rounding each, u relative; halving is exact): log expm1(s1) moves by
        at most u (|s1| + 1) under s1's rounding (its slope in s1 is e^s / expm1(s) <= 1 + 1/s),
        log(-expm1(s2)) by at most u (its slope is 1 / expm1(-s2) <= 1 / |s2|), each expm1 and
        log errs by LIBM_REL of its value, and the difference rounds by u |x*|."""
        a = self.a
        s1, s2 = 0.5 * (g + a), 0.5 * (g - a)
        inside = (g > -a) & (g < a)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            log1 = np.log(np.expm1(s1))
            log2 = np.log(-np.expm1(s2))
            x = np.where(inside, log1 - log2, np.where(g >= a, np.inf, -np.inf))
            rho = (2.0 * LIBM_REL + UNIT_ROUNDOFF * (np.abs(s1) + 3.0)
                   + LIBM_REL * (np.abs(log1) + np.abs(log2)) + UNIT_ROUNDOFF * np.abs(x)) * 1.05
        return (np.asarray(x, dtype=np.float64),
                np.asarray(np.where(inside, rho, 0.0), dtype=np.float64))

    def _tails_at(self, x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """(Q(X <= x), Q(X > x), P(X <= x), P(X > x)) for X ~ Logistic(a) under Q, Logistic(0)
        under P."""
        a = self.a
        with np.errstate(invalid="ignore"):
            up, down = a - x, x - a
        return (np.asarray(special.expit(down), dtype=np.float64),
                np.asarray(special.expit(up), dtype=np.float64),
                np.asarray(special.expit(x), dtype=np.float64),
                np.asarray(special.expit(-x), dtype=np.float64))

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        return self._tails_at(self._threshold(g)[0])

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        return -self.a, self.a

    def tail_accuracy(self, g: FloatArray,
                      dg: FloatArray) -> tuple[FloatArray, FloatArray]:
        # the exact argument g' lies in [g - dg, g + dg] (widened by 4 u |g| and a subnormal for
        # its own rounding); its exact threshold in [x_lo, x_hi]; each tail, monotone in x*, lies
        # between its exact values there, which the computed ones bound within the sigmoid's
        # rounding: expit errs by LIBM_REL and two roundings, and its argument's rounding (u of
        # it) moves it relatively by at most that much (the log-sigmoid has slope at most 1)
        with np.errstate(invalid="ignore"):
            pad = np.abs(dg) + 4.0 * UNIT_ROUNDOFF * np.abs(g) + 5e-324
            x_lo_c, rho_lo = self._threshold(g - pad)
            x_hi_c, rho_hi = self._threshold(g + pad)
            x_lo, x_hi = x_lo_c - rho_lo, x_hi_c + rho_hi
        x = self._threshold(g)[0]
        here = self._tails_at(x)
        at_lo, at_hi = self._tails_at(x_lo), self._tails_at(x_hi)

        def rounding(arg: FloatArray) -> FloatArray:
            with np.errstate(invalid="ignore"):
                r = LIBM_REL + 4.0 * UNIT_ROUNDOFF + 2.0 * UNIT_ROUNDOFF * np.abs(arg)
            return np.asarray(np.where(np.isfinite(r), r, 0.0), dtype=np.float64)

        args = (x - self.a, self.a - x, x, -x)
        rel = np.zeros(g.shape)
        ab = np.zeros(g.shape)
        for i, increasing in enumerate((True, False, True, False)):
            hi_end, lo_end = (at_hi[i], at_lo[i]) if increasing else (at_lo[i], at_hi[i])
            r_here = rounding(args[i])
            with np.errstate(invalid="ignore"):
                moved = (args[i] + (x_lo - x), args[i] + (x_hi - x))
            r_ends = np.maximum(rounding(moved[0]), rounding(moved[1]))
            top = hi_end * (1.0 + 1.01 * r_ends)  # the exact tail is at most this
            bottom = lo_end * (1.0 - 1.01 * r_ends)  # and at least this
            t = here[i]
            dev = np.maximum(np.maximum(top - t, t - bottom), 0.0) + r_here * t
            dev = np.where(np.isnan(dev), 1.0, dev)
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(t > 0.0, dev / t, 0.0)
            rel = np.maximum(rel, ratio)
            ab = np.maximum(ab, np.where(t > 0.0, 0.0, dev))
        return (np.asarray(rel * (1.0 + 1e-9), dtype=np.float64),
                np.asarray(ab, dtype=np.float64))


@dataclass(frozen=True)
class LogisticPair(Pair):
    """The logistic mechanism: f(D) + Logistic(0, scale) noise, with a = sensitivity / scale
    (round it up: ``accountant.div_up``); symmetric."""

    a: float
    kind: ClassVar[str | None] = "logistic"

    def __post_init__(self) -> None:
        object.__setattr__(self, "a", check_real("a", self.a, low=0.0, low_open=True, high=700.0))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return LogisticDirection(self.a), None


__all__ = ["LogisticDirection", "LogisticPair"]
