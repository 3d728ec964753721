"""Named conversions between privacy notions; each cites the result it implements."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import singledispatch

import numpy as np
from scipy import special

from ._numeric import check_real
from .guarantees import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP
from .tradeoff import GaussianTradeoff, profile_to_tradeoff, tradeoff_to_profile

__all__ = [
    "gdp_to_approx_dp",
    "gdp_to_tradeoff",
    "gdp_to_zcdp",
    "profile_to_tradeoff",
    "pure_dp_to_approx_dp",
    "pure_dp_to_gdp",
    "pure_dp_to_rdp",
    "pure_dp_to_zcdp",
    "randomized_response_renyi",
    "rdp_to_approx_dp",
    "rdp_to_approx_dp_classic",
    "to_rdp",
    "tradeoff_to_profile",
    "zcdp_to_approx_dp",
    "zcdp_to_rdp",
]

DEFAULT_ORDERS: tuple[float, ...] = tuple(
    [1.0 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)) + [128.0, 256.0, 512.0, 1024.0]
)


def gdp_to_tradeoff(mu: float) -> GaussianTradeoff:
    """G_mu(a) = Phi(Phi^{-1}(1-a) - mu) (DRS Def. 2.7)."""
    return GaussianTradeoff(check_real("mu", mu, low=0.0))


def gdp_to_approx_dp(mu: float, eps: float) -> ApproxDP:
    """mu-GDP is (eps, delta(eps))-DP for all eps, with
    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (DRS Cor. 2.13; seed 004)."""
    return ApproxDP(eps, GDP(mu).delta(eps))


def gdp_to_zcdp(mu: float) -> ZCDP:
    """mu-GDP implies (mu^2/2)-zCDP: Renyi divergences are monotone under post-processing of the
    Gaussian pair (Blackwell), whose divergence of order a is a mu^2/2 (DRS App. B)."""
    return ZCDP(check_real("mu", mu, low=0.0) ** 2 / 2.0)


def pure_dp_to_approx_dp(eps: float, eps_prime: float) -> ApproxDP:
    """eps-DP is (eps', delta)-DP with delta = (e^eps - e^eps')_+ / (1 + e^eps), the randomized
    response profile (Kairouz, Oh & Viswanath 2015)."""
    return ApproxDP(eps_prime, PureDP(eps).delta(eps_prime))


def pure_dp_to_gdp(eps: float) -> GDP:
    """eps-DP implies mu-GDP with mu = 2 Phi^{-1}(e^eps / (1 + e^eps)).

    f_{eps,0} is linear on [0, a*] and [a*, 1] with a* = 1/(1+e^eps), and G_mu is convex, so
    G_mu <= f_{eps,0} iff G_mu(a*) <= a*, which holds with equality at this mu (DRS Sec. 2).
    """
    eps = check_real("eps", eps, low=0.0, high=math.inf, low_open=True, high_open=True)
    mu = 2.0 * float(special.ndtri(1.0 / (1.0 + math.exp(-eps))))
    return GDP(math.nextafter(mu, math.inf))


def pure_dp_to_zcdp(eps: float) -> ZCDP:
    """eps-DP implies (eps^2/2)-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
    return ZCDP(check_real("eps", eps, low=0.0) ** 2 / 2.0)


def randomized_response_renyi(eps: float, order: float) -> float:
    """Renyi divergence of order a between the randomized-response pair, the worst case for
    eps-DP (Mironov 2017, Prop. 5): log(p^a q^(1-a) + q^a p^(1-a)) / (a - 1), p = e^eps/(1+e^eps)."""
    log_p = -math.log1p(math.exp(-eps))
    log_q = -math.log1p(math.exp(eps))
    terms = np.array([order * log_p + (1 - order) * log_q, order * log_q + (1 - order) * log_p])
    return min(max(float(special.logsumexp(terms)) / (order - 1.0), 0.0), eps)


def pure_dp_to_rdp(eps: float, orders: Sequence[float] | None = None) -> RDP:
    """eps-DP implies the RDP of randomized response at every order (Mironov 2017, Prop. 5)."""
    eps = check_real("eps", eps, low=0.0)
    if orders is None:
        return RDP.from_curve(lambda a: randomized_response_renyi(eps, a))
    return RDP(orders=tuple(orders),
               epsilons=tuple(randomized_response_renyi(eps, a) for a in orders))


def zcdp_to_rdp(rho: float, orders: Sequence[float] | None = None) -> RDP:
    """rho-zCDP is (a, rho a)-RDP for every a > 1 (Bun & Steinke 2016, Def. 1.1)."""
    z = ZCDP(rho)
    if orders is None:
        return z.to_rdp()
    return RDP(orders=tuple(orders), epsilons=tuple(z.rho * a for a in orders))


def zcdp_to_approx_dp(rho: float, delta: float) -> ApproxDP:
    """rho-zCDP to (eps, delta)-DP by the tight RDP conversion (Canonne, Kamath & Steinke 2020)."""
    return ZCDP(rho).to_approx_dp(delta)


def rdp_to_approx_dp(rdp: RDP, delta: float) -> ApproxDP:
    """RDP to (eps, delta)-DP, minimising the bound of Canonne, Kamath & Steinke (2020, Prop. 12)
    eps = rdp(a) + log(1 - 1/a) - (log delta + log a)/(a - 1) over the orders."""
    return rdp.to_approx_dp(delta)


def rdp_to_approx_dp_classic(rdp: RDP, delta: float) -> ApproxDP:
    """The classic conversion eps = rdp(a) + log(1/delta)/(a - 1) (Mironov 2017, Prop. 3);
    a baseline, looser than ``rdp_to_approx_dp``."""
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    orders = rdp.orders if rdp.curve is None else DEFAULT_ORDERS
    eps = min(rdp.at(a) + math.log(1.0 / delta) / (a - 1.0) for a in orders)
    return ApproxDP(eps, delta)


@singledispatch
def to_rdp(g: Guarantee) -> RDP:
    """The RDP curve implied by a guarantee (register more types with ``to_rdp.register``)."""
    raise TypeError(f"no RDP conversion is known for {type(g).__name__}")


@to_rdp.register
def _(g: RDP) -> RDP:
    return g


@to_rdp.register
def _(g: ZCDP) -> RDP:
    return g.to_rdp()


@to_rdp.register
def _(g: GDP) -> RDP:
    return gdp_to_zcdp(g.mu).to_rdp()


@to_rdp.register
def _(g: PureDP) -> RDP:
    return pure_dp_to_rdp(g.eps)
