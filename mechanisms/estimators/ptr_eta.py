"""The rule for the proposed local sensitivity eta of the PTR median [@avellamedina2025differentially,
"Propose-test-release", Prop.]: under Cond. M (X_1 has a unique median m and a density f >= L on
[m - r, m + r]),

    eta = 4 C_{tau,eps,delta} / (L n) + 4 log(2/tau) / (3 L n)

makes the PTR median release (the test passes, the output is the median plus (eta/eps) Laplace
noise) with probability at least 1 - tau. The slides print the condition as "eta <=" and leave
C_{tau,eps,delta} undefined; the test needs the distance to clear the threshold, so the rule is the
least eta the bound allows (a larger eta passes more often), and C is the slides' threshold plus the
Laplace quantile that the test's noise exceeds with probability tau/2:

    C_{tau,eps,delta} = 1 + log(2/delta)/eps + log(1/tau)/eps,

P(Lap(1/eps) < -log(1/tau)/eps) = tau/2 (the remaining tau/2 for the count of records within eta of
the median, by Bernstein's inequality: the 4 log(2/tau)/(3 L n) term). The rule uses public inputs
only (n, eps, delta, tau and the assumed L), so it costs no privacy;
``tests/mechanisms/test_ptr_eta.py`` measures the release probability it gives.

``PTRMedian(..., eta=MedianEtaRule(L, tau))`` applies it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from accountant.core.validation import check_count, check_real

__all__ = ["MedianEtaRule", "ptr_median_eta", "ptr_test_constant"]


def _unit(name: str, value: float) -> float:
    return check_real(name, value, low=0.0, high=1.0, low_open=True, high_open=True)


def _eps(eps: float) -> float:
    return check_real("eps", eps, low=0.0, high=1e6, low_open=True)


def ptr_test_constant(eps: float, delta: float, tau: float) -> float:
    """C_{tau,eps,delta} = 1 + (log(2/delta) + log(1/tau))/eps (module docstring), rounded up."""
    eps, delta, tau = _eps(eps), _unit("delta", delta), _unit("tau", tau)
    c = 1.0 + (math.log(2.0 / delta) + math.log(1.0 / tau)) / eps
    return math.nextafter(c, math.inf)


def ptr_median_eta(n: int, eps: float, delta: float, tau: float, density_lower_bound: float) -> float:
    """eta = 4 C_{tau,eps,delta} / (L n) + 4 log(2/tau) / (3 L n), L = ``density_lower_bound`` (f >= L
    near the median), rounded up."""
    n = check_count("n", n, low=1, high=10**12)
    big_l = check_real("density_lower_bound", density_lower_bound, low=0.0, high=1e12, low_open=True)
    c = ptr_test_constant(eps, delta, tau)
    eta = (4.0 * c + 4.0 * math.log(2.0 / tau) / 3.0) / (big_l * n)
    return math.nextafter(eta * (1.0 + 4.0 * 2.0**-52), math.inf)


@dataclass(frozen=True)
class MedianEtaRule:
    """The rule as a value ``PTRMedian`` accepts for ``eta``: ``rule(n, eps, delta)`` is
    ``ptr_median_eta(n, eps, delta, tau, density_lower_bound)``."""

    density_lower_bound: float
    tau: float = 0.05

    def __post_init__(self) -> None:
        check_real("density_lower_bound", self.density_lower_bound, low=0.0, high=1e12, low_open=True)
        _unit("tau", self.tau)

    def __call__(self, n: int, eps: float, delta: float) -> float:
        return ptr_median_eta(n, eps, delta, self.tau, self.density_lower_bound)
