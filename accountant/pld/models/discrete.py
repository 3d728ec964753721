"""Integer-valued noise: the discrete Laplace and discrete Gaussian pairs [@canonne2020discrete] and
the truncated discrete Gaussian.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

import numpy as np

from accountant.core.types import MACHINE_EPSILON
from accountant.core.validation import check_count, check_real
from accountant.notions.discrete_gaussian import GAUSS_UNHELD_MASS, gauss_log_norm, gauss_masses
from accountant.notions.finite_loss import FiniteLossTradeoff
from accountant.pld.laws.base import LossDirection
from accountant.pld.laws.finite import FiniteDirection, curve_direction
from accountant.pld.models.base import Pair

#: Window of ``DiscreteGaussianPair`` in standard deviations (the PLD grid cannot use more).
PAIR_GAUSSIAN_TAIL = 13.0


def check_int_sensitivity(sensitivity: int) -> int:
    return check_count("sensitivity", sensitivity, high=10**6)


@dataclass(frozen=True)
class DiscreteLaplacePair(Pair):
    """Discrete Laplace, P(X = x) proportional to e^{-|x|/scale} on the integers, with integer
    sensitivity [@canonne2020discrete, notation t = scale]; symmetric."""

    scale: float
    sensitivity: int = 1
    kind: ClassVar[str | None] = "discrete_laplace"

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_real("scale", self.scale, low=0.0, low_open=True,
                                                     high=math.inf, high_open=True))
        object.__setattr__(self, "sensitivity", check_int_sensitivity(self.sensitivity))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return curve_direction(FiniteLossTradeoff.discrete_laplace(self.scale,
                                                                   self.sensitivity)), None


@dataclass(frozen=True)
class DiscreteGaussianPair(Pair):
    """Discrete Gaussian, P(X = x) proportional to e^{-x^2/(2 sigma^2)} on the integers
    [@canonne2020discrete]; L = (2 x Delta - Delta^2)/(2 sigma^2) under Q = the shift; symmetric."""

    sigma: float
    sensitivity: int = 1
    kind: ClassVar[str | None] = "discrete_gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_real("sigma", self.sigma, low=0.0, low_open=True,
                                                     high=1e6))
        object.__setattr__(self, "sensitivity", check_int_sensitivity(self.sensitivity))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        # a 13-sigma window: the mass beyond it (< e^-84) and masses not held are charged at
        # L = +inf by the pessimistic set and dropped by the optimistic one; the masses err by the
        # curve's declared mass_rtol (``gauss_masses``)
        f = FiniteLossTradeoff.discrete_gaussian(Fraction(self.sigma) ** 2, self.sensitivity,
                                                 tail=PAIR_GAUSSIAN_TAIL)
        return curve_direction(f, opt_inf=0.0), None


@dataclass(frozen=True)
class TruncatedDiscreteGaussianPair(Pair):
    """The discrete Gaussian [@canonne2020discrete] restricted to {-m, ..., m} and renormalised
    (m = ``bound``), against its shift by the integer sensitivity Delta; symmetric (y -> Delta - y
    swaps them). Exact finite pair: L = (2 Delta y - Delta^2)/(2 sigma^2) on the overlap
    Delta - m <= y <= m, and the Q-mass at m < y <= m + Delta (where P is 0) at L = +inf.
    Losses are moved outward by their float error; the masses' error (``gauss_masses``) is
    declared, and masses below the normal range are charged at +inf (pessimistic) or dropped."""

    sigma: float
    bound: int
    sensitivity: int = 1
    kind: ClassVar[str | None] = "truncated_discrete_gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_real("sigma", self.sigma, low=0.0, low_open=True,
                                                     high=1e6))
        object.__setattr__(self, "bound", check_count("bound", self.bound, low=0, high=10**6))
        object.__setattr__(self, "sensitivity", check_int_sensitivity(self.sensitivity))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        m, d, s2 = self.bound, self.sensitivity, self.sigma ** 2
        log_z, log_z_err = gauss_log_norm(m, s2)  # the normaliser of the window, exactly
        y = np.arange(d - m, m + 1, dtype=np.float64)  # the overlap (empty when d > 2m)
        losses = (2.0 * d * y - float(d) ** 2) / (2.0 * s2)
        q, rtol = gauss_masses(y - d, s2, log_z, log_z_err)
        # Q-mass where P is 0: y - d in [max(m - d + 1, -m), m], summed correctly rounded; up
        # (pessimistic, with the masses not held) and down (optimistic) by its error
        out, r_out = gauss_masses(np.arange(max(m - d + 1, -m), m + 1, dtype=np.float64), s2,
                                  log_z, log_z_err)
        inf = math.fsum(out.tolist())
        unheld = (np.count_nonzero(q == 0.0) + np.count_nonzero(out == 0.0)) * GAUSS_UNHELD_MASS
        inf_up = min(1.0, math.nextafter(inf * (1.0 + r_out + 4.0 * MACHINE_EPSILON) + unheld, 1.0))
        inf_down = inf * (1.0 - r_out - 4.0 * MACHINE_EPSILON)
        # losses: 8 u max|L| (``FiniteLossTradeoff.discrete_gaussian``); masses: ``gauss_masses``
        atol = 4 * MACHINE_EPSILON * (float(np.abs(losses).max()) if losses.size else 0.0)
        return FiniteDirection(losses + atol, q, inf_up, losses - atol, q, inf_down, p_ninf=inf,
                                mass_rtol=rtol, loss_atol=atol), None
