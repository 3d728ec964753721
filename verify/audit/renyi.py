"""Renyi tests of zCDP and RDP claims, in their own notion.

A region A (one of the audit's rejection regions) bins the outputs in two: by data processing,
D_a(M(x) || M(x')) >= d_a(P(A), Q(A)), the binary Renyi divergence
d_a(p, q) = log(p^a q^(1-a) + (1-p)^a (1-q)^(1-a)) / (a - 1) [@mironov2017renyi, Prop. 1 (data processing)].
For a > 1, h(q) = p^a q^(1-a) + (1-p)^a (1-q)^(1-a) is convex in q with its minimum (1) at q = p,
and the same holds in p, so d_a grows as p and q move apart on either side. With Clopper-Pearson
boxes p in [p_l, p_u], q in [q_l, q_u], the minimum of d_a over the box is therefore
d_a(p_l, q_u) when p_l > q_u, d_a(p_u, q_l) when q_l > p_u, else 0: a lower confidence bound on
D_a at the level of the box. A zCDP claim rho says D_a <= rho a for every a > 1
[@bun2016concentrated, Def. 1.1], an RDP claim D_a <= eps(a); either divergence direction counts,
since neighbouring is symmetric. The order a is chosen on the selection draws, with the region.

Every test box bounds rho too (``rho_lower_bound``): a rho-zCDP mechanism has D_a <= rho a at every
order, so d_a of the box's separating corner, over a, is a lower confidence bound on rho at the
box's level; a Renyi test's own bound on D_a gives D_a / a. All boxes hold together, so the largest
of these holds at the audit's confidence.

With m bins (``multibin_renyi_lower``), D_a(P || Q) >= D_a(p || q) for the bin masses p, q; per-bin
one-sided Clopper-Pearson bounds (Bonferroni) give a confidence set for (p, q), and the bound is a
certified minimum of D_a over that set (``certified_min_renyi``, Lagrange duality): more bins see
more of the divergence than two, at the price of a level divided by m per bin.

The variational test (``variational_renyi_lower``) needs two bounds only, whatever the number of
bins: for every function g of the output, D_a(P || Q) >= a/(a - 1) log E_P[e^((a-1) g)] -
log E_Q[e^(a g)] [@birrell2021variational], with equality at g = log dP/dQ; g is a log ratio of bin
masses estimated on the selection draws, and the two means get empirical Bernstein bounds on the
evaluation draws. Its error shrinks like the standard deviation of one statistic, where the box's
minimum moves every bin against the claim at once (an error summed over bins).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike

from accountant import RDP, ZCDP, Guarantee
from accountant.core.types import FloatArray

from . import stats
from .reports import TestPoint

#: Orders tried for an RDP claim given as a function.
ORDERS = (1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0, 64.0)
#: Orders tried for a zCDP claim and for the rho bound: low orders too, where D_a / a of a
#: Gaussian-like loss is estimated best (the variational test's error grows with the order).
ZCDP_ORDERS = (1.05, 1.1, *ORDERS)


def claimed_renyi(claim: Guarantee) -> tuple[FloatArray, FloatArray] | None:
    """(orders, claimed D_a at them) for a zCDP or RDP claim; None for other claims."""
    if isinstance(claim, ZCDP):
        orders = np.asarray(ZCDP_ORDERS)
        return orders, claim.rho * orders
    if isinstance(claim, RDP):
        orders = np.asarray(claim.orders if claim.curve is None else ORDERS, dtype=np.float64)
        return orders, np.asarray([claim.at(float(a)) for a in orders], dtype=np.float64)
    return None


def binary_renyi(p: ArrayLike, q: ArrayLike, order: ArrayLike) -> FloatArray:
    """d_a(Bern(p) || Bern(q)) for a > 1 (orders broadcast against p and q), in log space (inf when
    q = 0 < p or q = 1 > p)."""
    pp = np.asarray(p, dtype=np.float64)
    qq = np.asarray(q, dtype=np.float64)
    a = np.asarray(order, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(pp > 0, a * np.log(pp) + (1 - a) * np.log(qq), -np.inf)
        t2 = np.where(pp < 1, a * np.log1p(-pp) + (1 - a) * np.log1p(-qq), -np.inf)
        d = np.logaddexp(t1, t2) / (a - 1)
    return np.asarray(np.fmax(d, 0.0), dtype=np.float64)  # NaN as 0


def renyi_lower_bound(p_near: ArrayLike, q_near: ArrayLike, p_larger: ArrayLike,
                      order: ArrayLike) -> FloatArray:
    """Lower bound on max(D_a(P||Q), D_a(Q||P)) from one-sided bounds on P(A) and Q(A): with
    ``p_larger``, p_near = p_l (P(A) >= p_l) and q_near = q_u (Q(A) <= q_u); otherwise p_near = p_u and
    q_near = q_l. The minimum of each binary divergence over the box is at this corner when it
    separates P(A) from Q(A) in the expected direction; 0 when it does not."""
    pn, qn = np.asarray(p_near, dtype=np.float64), np.asarray(q_near, dtype=np.float64)
    larger = np.asarray(p_larger, dtype=bool)
    sep = np.where(larger, pn > qn, qn > pn)
    d = np.maximum(binary_renyi(pn, qn, order), binary_renyi(qn, pn, order))
    return np.asarray(np.where(sep, d, 0.0), dtype=np.float64)


def rho_lower_bound(points: Sequence[TestPoint]) -> float:
    """The largest rho a zCDP guarantee of the mechanism must have, at the boxes' joint confidence:
    over the points, D_a lower bound / a for a Renyi test, and for a curve test
    max over ``ZCDP_ORDERS`` of d_a(separating corner of its box) / a (module docstring), where the box is
    P(A) in [alpha_lower, alpha_upper] and Q(A) = 1 - beta in [1 - beta_upper, 1 - beta_lower].
    Shrunk by a relative ``ROUNDING_SLACK`` for the float evaluation of d_a."""
    best = 0.0
    orders = np.asarray(ZCDP_ORDERS)
    corners: list[tuple[float, float, bool]] = []
    for t in points:
        if t.renyi_order is not None and t.renyi_lower is not None:
            best = max(best, t.renyi_lower / t.renyi_order)
            continue
        q_lo, q_hi = 1.0 - t.beta_upper, 1.0 - t.beta_lower
        if t.alpha_lower > q_hi:
            corners.append((t.alpha_lower, q_hi, True))
        elif q_lo > t.alpha_upper:
            corners.append((t.alpha_upper, q_lo, False))
        # else the box does not separate P(A) from Q(A)
    if corners:  # all curve tests' corners at every order at once
        p_near, q_near, larger = (np.asarray(c)[:, None] for c in zip(*corners, strict=True))
        per_test = np.max(renyi_lower_bound(p_near, q_near, larger, orders) / orders, axis=1)
        for v in per_test.tolist():
            best = max(best, v)
    return best * (1.0 - ROUNDING_SLACK)


def gdp_mu_lower(rho_lower: float) -> float:
    """The least mu of any mu-GDP guarantee of a mechanism whose zCDP level is at least ``rho_lower``:
    a mu-GDP pair is a post-processing of (N(0, 1), N(mu, 1)) (Blackwell; [@dong2022gaussian]), so by
    data processing D_a <= a mu^2 / 2 at every order, i.e. (mu^2 / 2)-zCDP; hence mu >= sqrt(2 rho),
    rounded down."""
    return math.nextafter(math.sqrt(2.0 * rho_lower), 0.0) if rho_lower > 0.0 else 0.0


#: Largest spread of a * g over the bins in the variational test: g is clipped from below to
#: max(g) - VARIATIONAL_SPREAD / a (itself a choice of g), so no e^(a g) underflows.
VARIATIONAL_SPREAD = 700.0


def variational_renyi_lower(k_p: ArrayLike, n_p: int, k_q: ArrayLike, n_q: int, g: ArrayLike,
                            orders: ArrayLike, gamma: float) -> FloatArray:
    """Lower confidence bounds on D_a(P || Q), one per order a > 1 (each valid at its own order), from
    the counts k_p (of n_p draws from P) and k_q (of n_q from Q) of m bins and a weight g_i per bin,
    all fixed before these counts were drawn.

    For any g, writing A = E_P[e^((a-1) g)] = E_Q[(dP/dQ) e^((a-1) g)] and applying Hoelder's
    inequality with exponents a and a/(a - 1) to the factors dP/dQ and e^((a-1) g):
    A <= F^(1/a) B^((a-1)/a) with F = E_Q[(dP/dQ)^a] and B = E_Q[e^(a g)], so
    D_a = log F / (a - 1) >= a/(a - 1) log A - log B [@birrell2021variational], an equality at
    g = log(dP/dQ) + c; the bound is unchanged by the shift c.
    With A >= A_l and B <= B_u (``stats.bernstein_bounds``, each at level gamma: 2 gamma in all),
    D_a >= a/(a - 1) log A_l - log B_u (0 when A_l <= 0). Data processing is not needed: g is a
    function of the output through its bin. The weights are shifted so that max a g = 0 and clipped
    from below (``VARIATIONAL_SPREAD``): that is another g, so the bound stays valid. Float
    evaluation: e^((a-1) g) and e^(a g) agree with one real g to a relative 4e-13 (arguments below
    1500 in absolute value), inside the bounds' own slack; the logarithms lose ``ROUNDING_SLACK``
    of their size, subtracted."""
    kp = np.asarray(k_p, dtype=np.float64)
    kq = np.asarray(k_q, dtype=np.float64)
    a = np.atleast_1d(np.asarray(orders, dtype=np.float64))[:, None]
    gg = np.asarray(g, dtype=np.float64)[None, :]
    top = gg.max()
    gs = np.maximum(gg - top, -VARIATIONAL_SPREAD / a)  # (orders, m), at most 0
    a_lo = stats.bernstein_bounds(np.exp((a - 1.0) * gs), np.broadcast_to(kp, gs.shape), n_p, gamma)[0]
    b_hi = stats.bernstein_bounds(np.exp(a * gs), np.broadcast_to(kq, gs.shape), n_q, gamma)[1]
    aa = a[:, 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_a, log_b = np.log(a_lo), np.log(b_hi)
        d = aa / (aa - 1.0) * log_a - log_b
        d = d - ROUNDING_SLACK * (aa / (aa - 1.0) * np.abs(log_a) + np.abs(log_b))
    d = np.where(a_lo > 0.0, d, 0.0)
    return np.asarray(np.maximum(np.nan_to_num(d, nan=0.0, posinf=0.0, neginf=0.0), 0.0), dtype=np.float64)


#: Relative slack subtracted from a certified minimum (or a rho bound) for the rounding of its float
#: evaluation
#: (sums of at most a few hundred terms, each correct to a few ulps: far below 1e-12 relative;
#: the stationary points of ``_dual``'s edges are within ulps, h is flat there to first order).
ROUNDING_SLACK = 1e-12
#: Half-width, in log lam and log -mu, of the first search interval around (a, 1 - a).
SEARCH_HALF_WIDTH = 12.0


def _dual(u: FloatArray, v: FloatArray, a: FloatArray, log_s: FloatArray,
          box: tuple[FloatArray, ...]) -> FloatArray:
    """g(lam, mu) / S for lam = e^u, mu = -e^v, scale S = e^log_s (arrays, one entry per point),
    g(lam, mu) = lam + mu + sum_i min over box_i of h_i, h_i = p^a q^(1-a) - lam p - mu q; rounded
    down. Scaled so that high orders do not overflow (F can exceed 1e308).

    h is convex and positively homogeneous on each box, so its minimum over the box is attained on
    the box's boundary (an interior minimiser makes h zero on a ray through it, which meets the
    boundary): the least of four one-dimensional convex minima, each at its stationary point
    clipped to the edge: q = p ((a - 1) / -mu)^(1/a) on an edge of fixed p, p = q (lam / a)^(1/(a-1))
    on an edge of fixed q (q = 0 admits p = 0 only)."""
    p_lo, p_hi, q_lo, q_hi = box
    a_, ls = a[:, None], log_s[:, None]
    lam_s, mu_s = np.exp(u - log_s)[:, None], np.exp(v - log_s)[:, None]  # lam / S, -mu / S
    cq = np.exp((np.log(a_ - 1.0) - v[:, None]) / a_)
    cp = np.exp((u[:, None] - np.log(a_)) / (a_ - 1.0))

    def h(p: FloatArray, q: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            core = np.where(q > 0, np.exp(a_ * np.log(p) + (1.0 - a_) * np.log(q) - ls),
                            np.where(p > 0, np.inf, 0.0))
        return np.asarray(core - lam_s * p + mu_s * q, dtype=np.float64)

    m = np.minimum(
        np.minimum(h(p_lo, np.clip(p_lo * cq, q_lo, q_hi)), h(p_hi, np.clip(p_hi * cq, q_lo, q_hi))),
        np.minimum(h(np.clip(q_lo * cp, p_lo, p_hi), q_lo), h(np.clip(q_hi * cp, p_lo, p_hi), q_hi)))
    m = np.nan_to_num(m, nan=np.inf)
    lam1, mu1 = lam_s[:, 0], mu_s[:, 0]
    total = lam1 - mu1 + m.sum(axis=1)
    scale = lam1 + mu1 + np.abs(m).sum(axis=1) + lam1 * p_hi.sum() + mu1 * q_hi.sum() + np.exp(-log_s)
    return np.asarray(np.where(np.isfinite(total), total - ROUNDING_SLACK * scale, -np.inf),
                      dtype=np.float64)


def _zoom(fn: Callable[[FloatArray], FloatArray], centre: FloatArray, half: FloatArray,
          rounds: int) -> tuple[FloatArray, FloatArray]:
    """Maximise unimodal functions of one variable (one per row of ``centre``; ``fn`` maps an
    (rows, 9) array of arguments to values) by grids of 9 points, each round keeping the best
    point's two neighbours as the next interval (it contains the maximiser of a unimodal
    function). Returns (best argument, best value) per row."""
    grid = np.linspace(-1.0, 1.0, 9)
    rows = np.arange(centre.size)
    best_x, best_v = centre.copy(), np.full(centre.size, -np.inf)
    for _ in range(rounds):
        x = centre[:, None] + half[:, None] * grid
        v = fn(x)
        k = np.argmax(v, axis=1)
        better = v[rows, k] > best_v
        best_x = np.where(better, x[rows, k], best_x)
        best_v = np.where(better, v[rows, k], best_v)
        centre, half = x[rows, k], half / 4.0
    return best_x, best_v


def certified_min_renyi(p_lo: ArrayLike, p_hi: ArrayLike, q_lo: ArrayLike, q_hi: ArrayLike,
                        orders: ArrayLike, reference: tuple[ArrayLike, ArrayLike] | None = None,
                        rounds: int = 12) -> FloatArray:
    """Certified lower bounds, one per order a > 1, on min D_a(p || q) over p, q in their boxes
    intersected with the probability simplex.

    F(p, q) = sum_i p_i^a q_i^(1-a) is jointly convex for a > 1 (the perspective of t^a) and
    D_a = log(F) / (a - 1) is increasing in F. Lagrange duality on the two constraints sum p = 1,
    sum q = 1 [@boyd2004convex, Sec. 5.2]: for every (lam, mu), g(lam, mu) (``_dual``) is at most
    min F over the set (weak duality), and g separates into one exact two-variable minimum per bin.
    The concave g is maximised over lam > 0 > mu (where dF/dp > 0 > dF/dq) in (log lam, log -mu)
    around the gradient (a F0, (1 - a) F0) of F at a reference point (``reference``, else the
    normalised box centres), F0 = F there: an outer one-dimensional search over lam of the inner
    maximum over mu (both unimodal: g is concave and a partial maximum of a concave function is
    concave). Whatever point the search ends at, the value reported is g there (rounded down), so
    it is a lower bound whether or not the search converged."""
    a = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    box = tuple(np.clip(np.asarray(b, dtype=np.float64), 0.0, 1.0) for b in (p_lo, p_hi, q_lo, q_hi))
    if reference is None:
        pr, qr = 0.5 * (box[0] + box[1]), 0.5 * (box[2] + box[3])
    else:
        pr, qr = (np.clip(np.asarray(x, dtype=np.float64), lo, hi)
                  for x, lo, hi in ((reference[0], box[0], box[1]), (reference[1], box[2], box[3])))
    pr, qr = pr / pr.sum(), np.maximum(qr / qr.sum(), 1e-300)
    with np.errstate(divide="ignore"):
        terms = a[:, None] * np.log(pr) + (1.0 - a[:, None]) * np.log(qr)
    log_s = np.logaddexp.reduce(terms, axis=1)  # log F0 per order

    def inner(u: FloatArray) -> FloatArray:
        # u: (orders, 9) values of log lam; the maximum over log -mu of g / S at each
        rows = np.repeat(np.arange(a.size), u.shape[1])
        uf = u.ravel()

        def at(v: FloatArray) -> FloatArray:
            k = v.shape[1]
            r = np.repeat(rows, k)
            return _dual(np.repeat(uf, k), v.ravel(), a[r], log_s[r], box).reshape(v.shape)

        _, best = _zoom(at, np.log(a[rows] - 1.0) + log_s[rows], half[rows], rounds)
        return best.reshape(u.shape)

    # the minimum of F lies between 1 and F0: the multipliers' scale may be anywhere in between
    half = SEARCH_HALF_WIDTH + np.maximum(log_s, 0.0)
    _, g = _zoom(inner, np.log(a) + log_s, half, rounds)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = (log_s + np.log(g)) / (a - 1.0)
    return np.asarray(np.maximum(np.nan_to_num(d, nan=0.0, neginf=0.0), 0.0), dtype=np.float64)


def multibin_renyi_lower(k_p: ArrayLike, n_p: int, k_q: ArrayLike, n_q: int, larger: ArrayLike,
                         orders: ArrayLike, gamma: float, rounds: int = 12) -> FloatArray:
    """Lower confidence bounds on D_a(P || Q), one per order, from the bin counts k_p (of n_p draws
    from P) and k_q (of n_q from Q) of m bins fixed beforehand.

    By data processing D_a(P || Q) >= D_a(p || q) for the bin masses p, q. Each bin gets one one-sided
    Clopper-Pearson bound per distribution, oriented by ``larger`` (chosen before these counts were
    drawn): p_i >= p_l and q_i <= q_u where P's mass is expected larger, p_i <= p_u and q_i >= q_l
    elsewhere; each at level gamma / m, so by the union bound all 2m hold together with probability
    >= 1 - 2 gamma (the audit's two bounds per test; the set is larger than two-sided boxes but needs
    half the bounds, and the sum constraints supply the missing sides). Bonferroni needs no
    assumption on the joint law of the counts, and the per-bin Clopper-Pearson width grows only
    like sqrt(log(m / gamma)) in the bins that carry the divergence. The bound is then the
    certified minimum of D_a over the set intersected with the simplex (``certified_min_renyi``,
    its search cut after ``rounds``: fewer rounds give a lower, still valid, bound faster).
    """
    kp, kq = np.asarray(k_p, dtype=np.float64), np.asarray(k_q, dtype=np.float64)
    up = np.asarray(larger, dtype=bool)
    g = gamma / kp.size
    p_lo = np.where(up, stats.cp_lower(kp, n_p, g), 0.0)
    p_hi = np.where(up, 1.0, stats.cp_upper(kp, n_p, g))
    q_lo = np.where(up, 0.0, stats.cp_lower(kq, n_q, g))
    q_hi = np.where(up, stats.cp_upper(kq, n_q, g), 1.0)
    return certified_min_renyi(p_lo, p_hi, q_lo, q_hi, orders, reference=(kp / n_p, kq / n_q),
                               rounds=rounds)
