"""eps-bounded range (eps-BR): the privacy loss of every neighbouring pair varies by at most eps
over the outputs, sup_y L(y) - inf_y L(y) <= eps [@durfee2019practical, Sec. 4.2]. The exponential
mechanism with parameter eps is eps-BR [@durfee2019practical, Sec. 4.2]; eps-BR implies eps-DP and
eps-DP implies 2 eps-BR, so ``BoundedRange`` is a ``PureDP`` whose figures are tighter.

The worst cases are two-point pairs. With X = P/Q in [e^{t - eps}, e^t] (0 <= t <= eps) and
E_Q X = 1, any functional E_Q phi(X) with phi convex (x^a for a Renyi divergence of order a > 1,
x log x for the KL divergence, (x - e^eps')_+ for the hockey-stick divergence) is largest when Q
puts all its mass on the two ends (phi lies below its chord; the reduction of [@cesar2021bounding]):
one parameter t remains, and here it is maximised in closed form:

- delta(eps') = (1 - e^{(eps' - eps)/2})^2 / (1 - e^{-eps}) for 0 <= eps' <= eps (t = (eps + eps')/2),
  the profile of one eps-BR mechanism [@dong2020optimal];
- with c = e^{-eps}, K = (1 - c^a)/(1 - c), M = c (1 - c^{a-1})/(1 - c) and s = e^t, the Renyi sum is
  h(s) = K s^{a-1} - M s^a, unimodal in s with its maximum at s* = (a - 1) K / (a M), so
  D_a = log s* + (log K - log a)/(a - 1) (s* clipped to [1, e^eps]; it always lies inside);
- at order 1, s* = (e^eps - 1)/eps and KL = log((e^eps - 1)/eps) - 1 + eps/(e^eps - 1);
- at order infinity, eps.

D_a <= a eps^2/8, the zCDP bound of [@cesar2021bounding]; both are computed here, and
the curve is what ``to_rdp`` returns, so k exponential mechanisms compose by ``method="rdp"``
tightly (the exact composition ``method="exact"`` still treats them as pure DP).

"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import mpmath
import numpy as np

from accountant.compose.composition import compose_approx_dp_exact, register_composition
from accountant.compose.serialisation import register_guarantee
from accountant.core.rounding import round_up
from accountant.core.validation import check_real
from accountant.notions.conversions import half_square_up, to_rdp, to_zcdp
from accountant.notions.guarantees import RDP, ZCDP, ApproxDP, Guarantee, PureDP
from accountant.notions.ordering import Implication, register_target
from accountant.notions.tradeoff import PiecewiseLinearTradeoff, ProfileTradeoff

__all__ = ["BoundedRange", "bounded_range_delta", "bounded_range_rdp", "bounded_range_renyi"]


#: Digits of the mpmath evaluations (the results are rounded up with a relative margin of 1e-30).
_DPS = 50


_MARGIN = mpmath.mpf(10) ** -30


@dataclass(frozen=True)
class BoundedRange(PureDP):
    """eps-bounded range [@durfee2019practical, Sec. 4.2]: an eps-DP guarantee whose profile, RDP
    curve and zCDP level are those of the worst eps-BR pair (module docstring)."""

    def _delta(self, eps: float) -> float:
        return bounded_range_delta(self.eps, eps)

    @cached_property
    def tradeoff(self) -> PiecewiseLinearTradeoff:  # type: ignore[override]
        """The curve of the exact profile [@dong2022gaussian, Prop. 2.12] on 401 eps' in [0, eps]
        (f_{eps,0} is among its lines, from delta(eps) = 0), held by its sound piecewise-linear
        lower envelope so that curve comparisons (``implies`` with f-DP targets) are proofs."""
        return ProfileTradeoff(self._delta_checked, np.linspace(0.0, self.eps, 401),
                               label=f"the profile of {self}").lower_envelope()

    def __str__(self) -> str:
        return f"{self.eps:g}-BR"


def bounded_range_delta(eps: float, eps_prime: float) -> float:
    """delta(eps') of eps-BR, rounded up: (1 - e^{(eps' - eps)/2})^2 / (1 - e^{-eps}) for
    0 <= eps' <= eps, 0 above, and by the symmetry of the eps-BR class (L -> -L) and the identity
    E_g(P||Q) = 1 - g + g E_{1/g}(Q||P) below 0 [@dong2020optimal]."""
    eps = check_real("eps", eps, low=0.0, high=math.inf, high_open=True)
    e1 = check_real("eps_prime", eps_prime, low=-math.inf, high=math.inf)
    if eps == 0.0 or e1 >= eps:
        return 0.0
    with mpmath.workdps(_DPS):
        e, x = mpmath.mpf(eps), mpmath.mpf(e1)

        def upper(y: mpmath.mpf) -> mpmath.mpf:
            return mpmath.expm1((y - e) / 2) ** 2 / -mpmath.expm1(-e) if y < e else mpmath.mpf(0)

        val = upper(x) if x >= 0 else -mpmath.expm1(x) + mpmath.exp(x) * upper(-x)
        return min(1.0, round_up(val * (1 + _MARGIN)))


def bounded_range_renyi(eps: float, order: float) -> float:
    """The largest Renyi divergence of order a >= 1 between the output laws of an eps-BR
    mechanism on neighbours (module docstring: the closed form, KL at a = 1, eps at a = inf),
    evaluated at 50 digits and rounded up; tight (attained by a two-point pair)."""
    eps = check_real("eps", eps, low=0.0, high=math.inf, high_open=True)
    order = check_real("order", order, low=1.0)
    if order == math.inf or eps == 0.0:
        return eps
    with mpmath.workdps(_DPS):
        e, a = mpmath.mpf(eps), mpmath.mpf(order)
        one_m_c = -mpmath.expm1(-e)
        if a == 1:
            s = mpmath.expm1(e) / e
            val = mpmath.log(s) - 1 + e / mpmath.expm1(e)
        else:
            k = -mpmath.expm1(-a * e) / one_m_c
            m = mpmath.exp(-e) * -mpmath.expm1(-(a - 1) * e) / one_m_c
            s = min(max((a - 1) * k / (a * m), mpmath.mpf(1)), mpmath.exp(e))
            val = mpmath.log(k * s ** (a - 1) - m * s ** a) / (a - 1)
        return min(round_up(val * (1 + _MARGIN)), eps)


def bounded_range_rdp(eps: float) -> RDP:
    """The tight RDP curve of eps-BR at every order >= 1 (``bounded_range_renyi``)."""
    eps = check_real("eps", eps, low=0.0, high=math.inf, high_open=True)
    return RDP.from_curve(lambda a: bounded_range_renyi(eps, a))


@to_rdp.register
def _(g: BoundedRange) -> RDP:
    return bounded_range_rdp(g.eps)


@to_zcdp.register
def _(g: BoundedRange) -> ZCDP:
    """eps-BR is (eps^2/8)-zCDP [@cesar2021bounding], rounded up."""
    half = half_square_up("eps", g.eps)  # eps^2/2, rounded up
    rho = half / 4.0
    return ZCDP(rho if rho * 4.0 == half else math.nextafter(rho, math.inf))


@register_target
def _(target: BoundedRange, g: Guarantee) -> Implication:
    """eps-BR holds for an eps'-BR guarantee with eps' <= eps, and for eps'-DP with 2 eps' <= eps
    (the loss lies in [-eps', eps']); nothing else is shown."""
    if isinstance(g, BoundedRange):
        return Implication(g.eps <= target.eps, f"{g}")
    if type(g) is PureDP:
        return Implication(2.0 * g.eps <= target.eps, f"{g}: its loss ranges over 2 eps = {2 * g.eps:g}")
    return Implication(False, f"{g} states no bounded range")


register_guarantee(BoundedRange)


# k eps-BR mechanisms compose at least as well as k eps-DP ones: the pure-DP exact composition
# [@kairouz2015composition] covers them (mixed with (eps, delta)-DP too)
register_composition((BoundedRange, PureDP, ApproxDP), compose_approx_dp_exact)
