"""Named conversions between privacy notions; each cites the result it implements."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import singledispatch
from typing import NoReturn

import mpmath
import numpy as np

from accountant.core.rounding import LIBM_REL, round_up, sum_up
from accountant.core.types import UNIT_ROUNDOFF
from accountant.core.validation import check_count, check_real, check_reals
from accountant.notions.closed_forms import GaussianTradeoff
from accountant.notions.finite_loss import FiniteLossTradeoff
from accountant.notions.guarantees import (
    CLTGDP,
    FDP,
    GDP,
    RDP,
    ZCDP,
    ApproxDP,
    Approximate,
    Guarantee,
    PureDP,
    rdp_classic_epsilon,
)

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
        return g.to_approx_dp(check_real("delta", delta, low=0.0, high=1.0, high_open=True))
    assert eps is not None
    e = check_real("eps", eps, low=0.0, high=math.inf, high_open=True)
    return ApproxDP(e, g.delta(e))


def gdp_to_approx_dp(mu: float, *, delta: float | None = None,
                     eps: float | None = None) -> ApproxDP:
    """mu-GDP is (eps, delta(eps))-DP for all eps, with
    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) [@dong2022gaussian, Cor. 2.13].
    Give ``delta=`` for the smallest eps, or ``eps=`` for delta(eps)."""
    return _approx_dp_at(GDP(mu), delta, eps)


def half_square_up(name: str, x: float) -> float:
    """x^2/2 rounded up, or a ValueError naming ``name`` when it overflows a double."""
    limit = math.sqrt(2.0) * 2.0 ** 511.5  # x^2/2 < 2^1024
    v = check_real(name, x, low=0.0, high=limit, high_open=True)
    return sum_up([v], [v / 2.0])  # v / 2 is exact (no underflow concern: v^2/2 rounds up)


def gdp_to_zcdp(mu: float) -> ZCDP:
    """mu-GDP implies (mu^2/2)-zCDP: Renyi divergences are monotone under post-processing of the
    Gaussian pair (Blackwell), whose divergence of order a is a mu^2/2 [@dong2022gaussian, App. B]."""
    return ZCDP(half_square_up("mu", mu))


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
    return ZCDP(half_square_up("eps", eps))


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


#: Unit round-off of a double: the error bounds below count a few of them per operation.


def _renyi_one_way_up(losses: np.ndarray, q: np.ndarray, p_gap: float, rtol: float, atol: float,
                      order: float) -> float:
    """An upper bound on D_a(Q || P) = log(sum_i q_i e^{(a-1) l_i}) / (a-1) (its limit at a = 1,
    the KL divergence sum_i q_i l_i; max l_i at a = inf) for the exact pair whose Q-masses lie
    within a relative ``rtol`` of ``q`` (all finite, Q has no mass where P vanishes), whose
    losses l = log(q/p) lie within ``atol`` of ``losses``, and whose P puts ``p_gap`` (an upper
    bound) where Q vanishes.

    Near a = 1 the sum is written without cancellation: with c = a - 1, sum q = 1 and
    sum q e^{-l} = 1 - p_gap, sum q e^{cl} = 1 + c S, S = p_gap + sum q f_c(l), where
    f_c(l) = expm1(c l)/c + expm1(-l) >= 0 (convex, 0 at l = 0; f_0(l) = l + expm1(-l)), so
    D_a = log1p(c S)/c. Every term of S is non-negative and raised by a bound on its rounding
    error, each loss is moved to the end of its interval where the convex f_c is larger, and
    the masses are raised by rtol: an upper bound as computed in floating point, with no
    1/(a - 1) amplification of round-off. Far from a = 1 (c max|l| > 1) the sum is taken in log
    space (logsumexp over log q + c (l + atol)), its error bounded and added."""
    keep = q > 0.0
    l_, qm = losses[keep], q[keep]
    if l_.size == 0:
        return 0.0
    r = rtol + (l_.size + 4) * UNIT_ROUNDOFF
    lo = np.nextafter(l_ - atol, -np.inf)
    hi = np.nextafter(l_ + atol, np.inf)
    c = order - 1.0
    if c == math.inf:
        return float(np.nextafter(hi.max(), np.inf))
    if c * float(np.max(np.maximum(np.abs(lo), np.abs(hi)))) <= 1.0:
        worst = np.zeros_like(l_)
        for x in (lo, hi):
            a = np.expm1(c * x) / c if c > 0.0 else x
            b = np.expm1(-x)
            # two expm1 (LIBM_REL each), c x, the quotient and the sum (u each)
            v = np.maximum(a + b, 0.0) + (LIBM_REL + 4.0 * UNIT_ROUNDOFF) * (np.abs(a) + np.abs(b)
                                                                        + np.abs(x))
            worst = np.maximum(worst, v)
        s = (float(np.sum(qm * worst)) * (1.0 + r) + p_gap) * (1.0 + 2.0 * (l_.size + 2) * UNIT_ROUNDOFF)
        if c == 0.0:
            return math.nextafter(s, math.inf)
        val = math.log1p(math.nextafter(c * s, math.inf)) / c
    else:
        log_q = np.log(qm)
        ex = log_q + c * hi
        from scipy import special  # imported on use: scipy.special is slow to import

        lse = float(special.logsumexp(ex))
        # log q (LIBM_REL), c hi and the sum (u each); logsumexp: its exp terms (LIBM_REL
        # relative), the sum, and log (LIBM_REL of a value at most log n) and the final sum
        err = (LIBM_REL + 2.0 * UNIT_ROUNDOFF) * float(np.max(np.abs(log_q) + np.abs(c * hi))) + r \
            + (l_.size + 4) * UNIT_ROUNDOFF + LIBM_REL * (1.0 + math.log(l_.size)) \
            + 2.0 * UNIT_ROUNDOFF * abs(lse)
        val = (lse + err) / c
    return max(0.0, math.nextafter(val * (1.0 + LIBM_REL + 4.0 * UNIT_ROUNDOFF), math.inf))  # log1p, /c


def _finite_pair_renyi(f: FiniteLossTradeoff, order: float) -> float:
    """min(D_a(Q || P), D_a(P || Q)) of the pair (P, Q) of a finite-loss curve f = T(P, Q), each
    rounded up by ``_renyi_one_way_up``; inf where both directions have mass where the other
    law vanishes."""
    l_, q = f.losses, f.q_masses
    direct = math.inf if f.q_inf > 0.0 else _renyi_one_way_up(
        l_, q, f.p_ninf, f.mass_rtol, f.loss_atol, order)
    if f.p_ninf > 0.0:
        return direct
    with np.errstate(divide="ignore"):
        log_q = np.log(q)
        p = np.exp(log_q - l_)  # P-masses q e^{-l} <= 1: no overflow
    # their error: the losses', log's LIBM_REL |log q|, the difference's u |log q - l| and exp's
    held = q > 0.0
    arg = float(np.max(np.abs(log_q[held]) + np.abs(l_[held]))) if held.any() else 0.0
    rtol = f.mass_rtol + f.loss_atol + (LIBM_REL + 2.0 * UNIT_ROUNDOFF) * (1.0 + arg)
    reverse = _renyi_one_way_up(-l_, p, f.q_inf, rtol, f.loss_atol, order)
    return min(direct, reverse)


def finite_pair_rdp(f: FiniteLossTradeoff) -> RDP:
    """The exact RDP curve, at every order a >= 1 (order 1: the KL divergence), of f-DP for a
    finite-loss curve f = T(P, Q) (randomized response, (eps, 0)-DP, discrete Laplace, any
    ``FiniteLossTradeoff``): eps(a) = min(D_a(P || Q), D_a(Q || P)), rounded up.

    f-DP asks T(M(S), M(S')) >= f for both orders of neighbours [@dong2022gaussian, Def. 2.3]; then
    (M(S), M(S')) is a post-processing of (P, Q) [@dong2022gaussian, Thm 2.10], and, since
    T(M(S), M(S')) = T(M(S'), M(S))^{-1} >= f^{-1} = T(Q, P), also of (Q, P); Renyi divergences
    only shrink under post-processing [@mironov2017renyi, Prop. 2]. Both bounds hold, and the pair
    itself attains them when it is symmetric (randomized response), so the curve is exact there."""
    if not isinstance(f, FiniteLossTradeoff):
        raise TypeError(f"f must be a FiniteLossTradeoff, got {type(f).__name__}")
    if f.q_inf > 0.0 and f.p_ninf > 0.0:
        raise ValueError(f"{f!r} has mass at infinite loss in both directions (delta > 0): "
                         "no Renyi divergence of it is finite")
    return RDP.from_curve(lambda a: _finite_pair_renyi(f, check_real("order", a, low=1.0)))


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
def _(g: Approximate) -> RDP:
    raise ValueError(g.refusal())


@to_rdp.register
def _(g: PureDP) -> RDP:
    return pure_dp_to_rdp(g.eps)


@to_rdp.register
def _(g: FDP) -> RDP:
    f = g.tradeoff
    if isinstance(f, FiniteLossTradeoff):
        return finite_pair_rdp(f)
    if type(f) is GaussianTradeoff:
        return to_rdp(GDP(f.mu))
    raise TypeError(f"no RDP conversion is known for f-DP with {f!r} (finite-loss and Gaussian "
                    "curves have one)")


def _refuse_approximation(g: Approximate) -> NoReturn:
    raise ValueError(f"{g} is an approximation, not a bound: it implies no guarantee; {g.instead}")


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
def _(g: Approximate) -> GDP:
    _refuse_approximation(g)


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
def _(g: Approximate) -> ZCDP:
    _refuse_approximation(g)


@to_zcdp.register
def _(g: FDP) -> ZCDP:
    return gdp_to_zcdp(to_gdp(g).mu)


@to_zcdp.register
def _(g: PureDP) -> ZCDP:
    return pure_dp_to_zcdp(g.eps)
