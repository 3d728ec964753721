"""Reading a grid law: the lower end of the epsilon bracket, the f-DP curve of a law, and the sensitivity
of epsilon to mu^2 on the mu-GDP curve.
"""

from __future__ import annotations

import math

import numpy as np

from accountant.core.hull import lower_convex_hull
from accountant.core.normal import log_ndtr, ndtr
from accountant.core.rounding import LIBM_REL
from accountant.core.search import narrow_bracket
from accountant.core.types import MACHINE_EPSILON
from accountant.notions.tradeoff import PiecewiseLinearTradeoff
from accountant.pld.grid.law import EPS_EXT, GridLaw


def clip01(x: float) -> float:
    return min(1.0, max(0.0, x))


def gdp_sensitivity(eps: float, delta: float) -> float:
    """d eps / d(mu^2) along (mu^2, eps) at the mu-GDP guarantee whose epsilon at delta is eps,
    with delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-eps/mu - mu/2) [@dong2022gaussian, Cor. 2.13]:
    d delta / d mu = phi(mu/2 - eps/mu) and d delta / d eps = -e^eps Phi(-eps/mu - mu/2), so
    d eps / d mu = phi(mu/2 - eps/mu) / (e^eps Phi(-eps/mu - mu/2)). mu is found by bisection in
    log mu (delta increases with mu). An estimate that sizes a grid (``PLD._pessimistic_finer``),
    never a bound."""
    def gdp_delta(mu: float) -> float:
        return float(ndtr(mu / 2 - eps / mu)
                     - math.exp(eps + float(log_ndtr(-eps / mu - mu / 2))))

    lo, hi = 1e-12, 1.0
    while gdp_delta(hi) < delta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e4:
            return 0.0
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if gdp_delta(mid) < delta:
            lo = mid
        else:
            hi = mid
    mu = math.sqrt(lo * hi)
    x = mu / 2 - eps / mu
    log_slope = (-0.5 * x * x - 0.5 * math.log(2.0 * math.pi) - eps
                 - float(log_ndtr(-eps / mu - mu / 2)))
    return math.exp(min(log_slope, 700.0)) / (2.0 * mu)


def lower_end(opt: GridLaw, delta: float, upper: float) -> float:
    """Largest eps found with delta_opt(eps) > delta: below the exact epsilon(delta)."""
    d_lo = opt.delta(0.0)
    if d_lo <= delta:
        return 0.0
    lo, hi = 0.0, upper if math.isfinite(upper) else 1.0
    d_hi = opt.delta(hi)
    while math.isinf(upper) and d_hi > delta:
        lo, d_lo, hi = hi, d_hi, 2 * hi + 1
        if hi > 1e6:
            return lo
        d_hi = opt.delta(hi)
    if d_hi > delta:  # upper is an upper bound on the exact epsilon, so delta_opt(upper) <= delta
        return hi
    return narrow_bracket(opt.delta, delta, (lo, d_lo), (hi, d_hi), 1e-13)[0]


def law_curve(law: GridLaw) -> PiecewiseLinearTradeoff:
    nz = law.masses > 0
    # the exact nodes shift + K h are computed within u (|K h| + |shift|) and the exact law lies
    # up to ``lag`` above them: moved up by both (and by the addition's rounding), the pair
    # dominates the exact one
    k_max = max(abs(law.offset), abs(law.offset + law.masses.size - 1 + law.cut))
    up = law.lag + 2.02 * MACHINE_EPSILON * (abs(law.shift) + k_max * law.h + law.lag)
    losses = np.concatenate([law.losses[nz], [law.top]]) + up
    q = np.concatenate([law.masses[nz], [law.top_mass]])
    order = np.argsort(-losses, kind="stable")
    losses, q = losses[order], q[order]
    p = q * np.exp(-losses)
    # the vertices (P-sum, 1 - Q-sum) over the losses above each one, summed in long double:
    # each sum within n u_ext of its value (recursive summation [@higham2002accuracy, Sec. 4.2]),
    # then rounded to double, and p within LIBM_REL + u/2 of q e^{-l} (numpy's exp, the
    # product; u = MACHINE_EPSILON). A vertex's beta errs by at most (n u_ext + u) Q, its alpha by
    # (n u_ext + LIBM_REL + u) P, which moves the curve (slope at most e^l
    # to its right, and P <= e^{-l} Q above the loss l) by at most as much: ``rounding`` covers
    # both (Q <= 1 + the margin; in double, with a plain sum of n terms, it was charged 1e-15,
    # while the sum can lose n u: a mass below half an ulp of the sum is dropped at each step)
    n = q.size + 2
    alphas = np.concatenate([[0.0], np.cumsum(p.astype(np.longdouble)).astype(np.float64)])
    betas = np.concatenate([[1.0 - law.inf], (1.0 - law.inf - np.cumsum(q.astype(np.longdouble))
                                              ).astype(np.float64)])
    rounding = (2.0 * n * EPS_EXT + LIBM_REL + 4.0 * MACHINE_EPSILON) * 1.01
    # delta <= raw + (s + r + t) / (1 - r - t) for each error model of the law (the curve is the
    # held law's: it moves by at most the error on delta); the tail-relative part counts too
    margin = min((s + r + t for s, r, t in law.error_models if r + t < 0.5), default=math.inf)
    betas = np.maximum(betas - 2 * margin * (1.0 + rounding) - rounding, 0.0)
    keep = np.concatenate([[True], np.diff(alphas) > 0])
    alphas, betas = alphas[keep], betas[keep]
    if alphas[-1] >= 1.0:
        alphas = alphas / alphas[-1]  # P-mass above 1 only by rounding; rescaling lowers beta
        betas = np.concatenate([betas[:-1], [0.0]])
    else:
        alphas = np.concatenate([alphas, [1.0]])
        betas = np.concatenate([betas, [0.0]])
    hx, hy = lower_convex_hull(alphas, np.minimum(betas, 1.0 - alphas))
    return PiecewiseLinearTradeoff(hx, np.minimum(hy, 1.0 - hx))
