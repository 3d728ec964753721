"""Named conversions between privacy notions; each cites the result it implements."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import singledispatch

import mpmath

from ._numeric import check_count, check_real, check_reals, round_up, sum_up
from .guarantees import CLTGDP, FDP, GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP, rdp_classic_epsilon
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
    "randomized_response_rdp",
    "randomized_response_renyi",
    "rdp_to_approx_dp",
    "rdp_to_approx_dp_classic",
    "to_gdp",
    "to_rdp",
    "to_zcdp",
    "tradeoff_to_profile",
    "zcdp_to_approx_dp",
    "zcdp_to_rdp",
]

DEFAULT_ORDERS: tuple[float, ...] = tuple(
    [1.0 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)) + [128.0, 256.0, 512.0, 1024.0]
)


def gdp_to_tradeoff(mu: float) -> GaussianTradeoff:
    """G_mu(a) = Phi(Phi^{-1}(1-a) - mu) [@dong2022gaussian, Def. 2.7]."""
    return GaussianTradeoff(check_real("mu", mu, low=0.0, high=math.inf, high_open=True))


def _approx_dp_at(g: Guarantee, delta: float | None, eps: float | None) -> ApproxDP:
    """(eps, delta)-DP implied by ``g`` at exactly one of ``delta=`` (the smallest eps) or
    ``eps=`` (the smallest delta): both are floats, so the caller must say which."""
    if (delta is None) == (eps is None):
        raise TypeError("give exactly one of delta= (to get the epsilon) or eps= (to get the "
                        "delta), as a keyword")
    if delta is not None:
        d = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
        e = g.epsilon(d)
        if e == math.inf:
            raise ValueError(f"{g} implies no (eps, delta)-DP with finite eps at delta = {d!r}; "
                             "delta must be larger")
        return ApproxDP(e, d)
    assert eps is not None
    e = check_real("eps", eps, low=0.0, high=math.inf, high_open=True)
    return ApproxDP(e, g.delta(e))


def gdp_to_approx_dp(mu: float, *, delta: float | None = None,
                     eps: float | None = None) -> ApproxDP:
    """mu-GDP is (eps, delta(eps))-DP for all eps, with
    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) [@dong2022gaussian, Cor. 2.13].
    Give ``delta=`` for the smallest eps, or ``eps=`` for delta(eps)."""
    return _approx_dp_at(GDP(mu), delta, eps)


def _half_square_up(name: str, x: float) -> float:
    """x^2/2 rounded up, or a ValueError naming ``name`` when it overflows a double."""
    limit = math.sqrt(2.0) * 2.0 ** 511.5  # x^2/2 < 2^1024
    v = check_real(name, x, low=0.0, high=limit, high_open=True)
    return sum_up([v], [v / 2.0])  # v / 2 is exact (no underflow concern: v^2/2 rounds up)


def gdp_to_zcdp(mu: float) -> ZCDP:
    """mu-GDP implies (mu^2/2)-zCDP: Renyi divergences are monotone under post-processing of the
    Gaussian pair (Blackwell), whose divergence of order a is a mu^2/2 [@dong2022gaussian, App. B]."""
    return ZCDP(_half_square_up("mu", mu))


def pure_dp_to_approx_dp(eps: float, *, delta: float | None = None,
                         eps_prime: float | None = None) -> ApproxDP:
    """eps-DP is (eps', delta)-DP with delta = (e^eps - e^eps')_+ / (1 + e^eps), the randomized
    response profile [@kairouz2015composition]. Give ``delta=`` or ``eps_prime=``."""
    return _approx_dp_at(PureDP(eps), delta, eps_prime)


def pure_dp_to_gdp(eps: float) -> GDP:
    """eps-DP implies mu-GDP with mu = 2 Phi^{-1}(e^eps / (1 + e^eps)), rounded up.

    f_{eps,0} is linear on [0, a*] and [a*, 1] with a* = 1/(1+e^eps), and G_mu is convex, so
    G_mu <= f_{eps,0} iff G_mu(a*) <= a*, which holds with equality at this mu [@dong2022gaussian, Sec. 2].
    With x = mu/2 this is erf(x/sqrt 2) = tanh(eps/2), solved with mpmath (for eps > 1 in the
    complementary tail, log Phi(-x) = -log(1 + e^eps)); the double returned is verified at 60
    digits to satisfy G_mu(a*) <= a*.
    """
    eps = check_real("eps", eps, low=0.0, high=math.inf, low_open=True, high_open=True)
    with mpmath.workdps(60):
        e = mpmath.mpf(eps)
        if eps <= 1.0:
            target = mpmath.tanh(e / 2)
            x = mpmath.sqrt(2) * mpmath.erfinv(target)

            def too_small(m: float) -> bool:
                return bool(mpmath.erf(mpmath.mpf(m) / 2 / mpmath.sqrt(2)) < target)
        else:
            log_a = -(e + mpmath.log1p(mpmath.exp(-e)))  # log a* = -log(1 + e^eps)
            # Newton on the concave, decreasing g(t) = log Phi(-t) - log a*, from the right of
            # the root (g(sqrt(-2 log a*)) < 0): the iterates decrease monotonically to it
            x = mpmath.sqrt(2 * -log_a)
            for _ in range(200):
                lg = _log_ncdf_neg(x)
                step = (lg - log_a) / mpmath.exp(-x * x / 2 - mpmath.log(2 * mpmath.pi) / 2 - lg)
                x += step  # g'(t) = -phi(t)/Phi(-t)
                if abs(step) < x * mpmath.mpf(10) ** -50:
                    break

            def too_small(m: float) -> bool:
                return bool(_log_ncdf_neg(mpmath.mpf(m) / 2) > log_a)
        mu = round_up(2 * x)
        while too_small(mu):
            mu = math.nextafter(mu, math.inf)
    return GDP(mu)


def _log_ncdf_neg(t: mpmath.mpf) -> mpmath.mpf:
    """log Phi(-t) for t > 0 at the working precision; beyond t = 1e3 by the asymptotic series
    log(phi(t)/t) + log(1 - 1/t^2 + 3/t^4 - ...), ten terms (error below 1e-60)."""
    if t < 1000:
        return mpmath.log(mpmath.ncdf(-t))
    series = mpmath.fsum((-1) ** k * mpmath.fac2(2 * k - 1) / t ** (2 * k) for k in range(1, 11))
    return -t * t / 2 - mpmath.log(t) - mpmath.log(2 * mpmath.pi) / 2 + mpmath.log1p(series)


def pure_dp_to_zcdp(eps: float) -> ZCDP:
    """eps-DP implies (eps^2/2)-zCDP [@bun2016concentrated, Prop. 1.4]."""
    return ZCDP(_half_square_up("eps", eps))


def randomized_response_renyi(eps: float, order: float, k: int = 2) -> float:
    """Renyi divergence of order a of k-ary randomized response (truth kept w.p.
    e^eps / (e^eps + k - 1)) on two inputs, exact: with Z = e^eps + k - 1,

        D_a = log((e^{a eps} + e^{(1-a) eps} + k - 2) / Z) / (a - 1),

    at order 1 its limit, the KL divergence eps (e^eps - 1) / Z, and eps at order infinity. For
    k = 2 this is the worst case for eps-DP [@mironov2017renyi, Prop. 5]; for k > 2 it is smaller
    than the binary bound. Evaluated with mpmath and rounded up."""
    eps = check_real("eps", eps, low=0.0, high=math.inf, high_open=True)
    order = check_real("order", order, low=1.0)
    k = check_count("k", k, low=2, high=10**9)
    if order == math.inf or eps == 0.0:
        return eps
    with mpmath.workdps(40):
        e, a = mpmath.mpf(eps), mpmath.mpf(order)
        log_z = e + mpmath.log1p((k - 1) * mpmath.exp(-e))  # log(e^eps + k - 1)
        if a == 1:
            val = e * -mpmath.expm1(-e) / (1 + (k - 1) * mpmath.exp(-e))
        else:
            log_num = a * e + mpmath.log1p(mpmath.exp((1 - 2 * a) * e) + (k - 2) * mpmath.exp(-a * e))
            val = (log_num - log_z) / (a - 1)
        return min(round_up(val * (1 + mpmath.mpf(10) ** -30)), eps)


def randomized_response_rdp(eps: float, k: int = 2) -> RDP:
    """The exact RDP curve of k-ary randomized response at every order a >= 1 (fractional orders
    and order 1, the KL divergence, included): ``randomized_response_renyi``."""
    eps = check_real("eps", eps, low=0.0, high=math.inf, high_open=True)
    k = check_count("k", k, low=2, high=10**9)
    return RDP.from_curve(lambda a: randomized_response_renyi(eps, a, k))


def pure_dp_to_rdp(eps: float, orders: Sequence[float] | None = None) -> RDP:
    """eps-DP implies the RDP of randomized response at every order [@mironov2017renyi, Prop. 5]."""
    eps = check_real("eps", eps, low=0.0, high=math.inf, high_open=True)
    if orders is None:
        return randomized_response_rdp(eps)
    os = check_reals("orders", orders, low=1.0, low_open=True)
    return RDP(orders=os, epsilons=tuple(randomized_response_renyi(eps, a) for a in os))


def zcdp_to_rdp(rho: float, orders: Sequence[float] | None = None) -> RDP:
    """rho-zCDP is (a, rho a)-RDP for every a > 1 [@bun2016concentrated, Def. 1.1], rounded up;
    at order infinity no bound (eps = inf) unless rho = 0."""
    z = ZCDP(rho)
    if orders is None:
        return z.to_rdp()
    os = check_reals("orders", orders, low=1.0, low_open=True)
    return RDP(orders=os, epsilons=tuple(0.0 if z.rho == 0.0 else sum_up([z.rho], [a])
                                         for a in os))


def zcdp_to_approx_dp(rho: float, *, delta: float | None = None,
                      eps: float | None = None) -> ApproxDP:
    """rho-zCDP to (eps, delta)-DP by the tight RDP conversion [@canonne2020discrete].
    Give ``delta=`` for the smallest eps, or ``eps=`` for delta(eps)."""
    return _approx_dp_at(ZCDP(rho), delta, eps)


def rdp_to_approx_dp(rdp: RDP, *, delta: float | None = None,
                     eps: float | None = None) -> ApproxDP:
    """RDP to (eps, delta)-DP, minimising the bound of [@canonne2020discrete, Prop. 12]
    eps = rdp(a) + log(1 - 1/a) - (log delta + log a)/(a - 1) over the orders.
    Give ``delta=`` for the smallest eps, or ``eps=`` for delta(eps)."""
    return _approx_dp_at(rdp, delta, eps)


def rdp_to_approx_dp_classic(rdp: RDP, *, delta: float) -> ApproxDP:
    """The classic conversion eps = rdp(a) + log(1/delta)/(a - 1) [@mironov2017renyi, Prop. 3];
    a baseline, looser than ``rdp_to_approx_dp``."""
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    orders = rdp.orders if rdp.curve is None else DEFAULT_ORDERS
    eps = min(rdp_classic_epsilon(a, rdp.at(a), delta) for a in orders)
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
def _(g: CLTGDP) -> RDP:
    raise ValueError(f"{g} is an approximation, not a bound: it has no RDP guarantee; "
                     "convert its .rigorous() guarantee instead")


@to_rdp.register
def _(g: PureDP) -> RDP:
    return pure_dp_to_rdp(g.eps)


def _refuse_approximation(g: CLTGDP) -> None:
    raise ValueError(f"{g} is an approximation, not a bound: it implies no guarantee; "
                     "convert its .rigorous() guarantee instead")


@singledispatch
def to_gdp(g: Guarantee) -> GDP:
    """The least mu-GDP that ``g`` implies in closed form (register more types with
    ``to_gdp.register``); a TypeError when none is known (compare curves with ``implies`` then)."""
    raise TypeError(f"no closed-form GDP is known for {type(g).__name__}")


@to_gdp.register
def _(g: GDP) -> GDP:
    if isinstance(g, CLTGDP):
        _refuse_approximation(g)
    return g


@to_gdp.register
def _(g: FDP) -> GDP:
    if type(g.tradeoff) is not GaussianTradeoff:
        raise TypeError(f"no closed-form GDP is known for f-DP with {g.tradeoff!r}")
    return GDP(g.tradeoff.mu)


@to_gdp.register
def _(g: PureDP) -> GDP:
    return pure_dp_to_gdp(g.eps)


@singledispatch
def to_zcdp(g: Guarantee) -> ZCDP:
    """The least rho-zCDP that ``g`` implies in closed form [@bun2016concentrated, Prop. 1.4]
    (register more types with ``to_zcdp.register``); a TypeError when none is known."""
    raise TypeError(f"no zCDP bound is known for {type(g).__name__}")


@to_zcdp.register
def _(g: ZCDP) -> ZCDP:
    return g


@to_zcdp.register
def _(g: GDP) -> ZCDP:
    return gdp_to_zcdp(to_gdp(g).mu)


@to_zcdp.register
def _(g: FDP) -> ZCDP:
    return gdp_to_zcdp(to_gdp(g).mu)


@to_zcdp.register
def _(g: PureDP) -> ZCDP:
    return pure_dp_to_zcdp(g.eps)
