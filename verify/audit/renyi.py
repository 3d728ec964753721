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
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from accountant import RDP, ZCDP, Guarantee
from accountant.validation import FloatArray

#: Orders tried for a zCDP claim or an RDP claim given as a function.
ORDERS = (1.25, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0, 64.0)


def claimed_renyi(claim: Guarantee) -> tuple[FloatArray, FloatArray] | None:
    """(orders, claimed D_a at them) for a zCDP or RDP claim; None for other claims."""
    if isinstance(claim, ZCDP):
        orders = np.asarray(ORDERS)
        return orders, claim.rho * orders
    if isinstance(claim, RDP):
        orders = np.asarray(claim.orders if claim.curve is None else ORDERS, dtype=np.float64)
        return orders, np.asarray([claim.at(float(a)) for a in orders], dtype=np.float64)
    return None


def binary_renyi(p: ArrayLike, q: ArrayLike, order: float) -> FloatArray:
    """d_a(Bern(p) || Bern(q)) for a > 1, in log space (inf when q = 0 < p or q = 1 > p)."""
    pp = np.asarray(p, dtype=np.float64)
    qq = np.asarray(q, dtype=np.float64)
    a = float(order)
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(pp > 0, a * np.log(pp) + (1 - a) * np.log(qq), -np.inf)
        t2 = np.where(pp < 1, a * np.log1p(-pp) + (1 - a) * np.log1p(-qq), -np.inf)
        d = np.logaddexp(t1, t2) / (a - 1)
    return np.asarray(np.maximum(np.nan_to_num(d, nan=0.0, posinf=np.inf), 0.0), dtype=np.float64)


def renyi_lower_bound(p_near: ArrayLike, q_near: ArrayLike, p_larger: ArrayLike, order: float) -> FloatArray:
    """Lower bound on max(D_a(P||Q), D_a(Q||P)) from one-sided bounds on P(A) and Q(A): with
    ``p_larger``, p_near = p_l (P(A) >= p_l) and q_near = q_u (Q(A) <= q_u); otherwise p_near = p_u and
    q_near = q_l. The minimum of each binary divergence over the box is at this corner when it
    separates P(A) from Q(A) in the expected direction; 0 when it does not."""
    pn, qn = np.asarray(p_near, dtype=np.float64), np.asarray(q_near, dtype=np.float64)
    larger = np.asarray(p_larger, dtype=bool)
    sep = np.where(larger, pn > qn, qn > pn)
    d = np.maximum(binary_renyi(pn, qn, order), binary_renyi(qn, pn, order))
    return np.asarray(np.where(sep, d, 0.0), dtype=np.float64)
