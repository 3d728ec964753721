"""The optimistic construction: a grid law whose delta(eps) is at most the truth's, from cells whose
contents carry error bounds (lowered below the tangents, then convexified).
"""

from __future__ import annotations

import math

import numpy as np

from accountant.core.recurrence import linear_recurrence
from accountant.core.rounding import LIBM_REL, exp_rn, expm1_rn
from accountant.core.types import MACHINE_EPSILON, UNIT_ROUNDOFF
from accountant.pld.grid.cells import (
    CONSTRUCTION_REL,
    Cells,
    ContentErrors,
    node_exponentials,
    node_profile,
    node_values,
    relative_split,
)
from accountant.pld.grid.hull import convexify
from accountant.pld.grid.law import GridLaw


def optimistic_from_cells(cells: Cells, errors: ContentErrors) -> GridLaw:
    """Optimistic law from the contents of half cells (width h/2): a grid law whose profile lies
    below the tangents of the true one at the midpoints of the cells of width h.

    Error model (``GridLaw``, optimistic): if R's profile D satisfies D <= (1 + rel) delta + slack
    (delta the exact profile R stands for), the law's profile F~ satisfies F~ <= (1 + t) D + s at
    every eps, hence F~ <= (1 + t)(1 + rel) delta + (1 + t) slack + s: the law is returned with
    those. The proof works at the nodes, as F~ and the chords are linear in y = e^eps between
    them: with V_J = D_J - c_J (c the lowerings, at least what the tangents need), the chord of
    V lies below D on every cell [module docstring], and F~_J <= (1 + t) V_J + s gives
    F~ <= (1 + t) chord(V) + s <= (1 + t) D + s. Where a node is capped (its lowering limited to
    its computed profile), V_J = 0 <= D and F~_J is a rounding residue (absolute); at y = 0, V is
    R's Q-mass above the first node (the truth lies above the chord from there, as the mass
    below contributes (1 - y e^{-l})_+ >= 0).
    The rounding at a node: the cells of width h (q: 2 u, x: 6 u) and the split b (9 u) err
    relatively on terms of D~_J = sum_{C >= J} [q_C (1 - e^{g_J - g_C}) + b_C c_h e^{g_J - g_C}],
    which are all non-negative, and so do the masses m (3 roundings of non-negative terms), so
    the profile Dm of m is within 12 u of D~; the masses of F = Dm - c are
    M_i = m_i - E1 (c_{i+1} - c_i) + E2 (c_i - c_{i-1}) (E1 = 1/(e^h - 1), E2 = 1/(1 - e^{-h});
    at y = 0 the chord from R's mass: M_0's last term is c_0), within 3 u of m_i plus sigma_i =
    12 u (|E1 dc| + |E2 dc|), whose profile at J (``node_profile``) is charged at J; the hull
    (``convexify``) lowers F~ up to its charge, node by node (added to E_J); the final products
    round within u and clipped negatives add ``neg``. With E_J = (1 + gamma) node_J + cpart_J +
    hull_J (gamma = CONSTRUCTION_REL and
    ``errors.rel``), F~_J <= (1 + gamma)(D_J - c_J) + E_J + gamma c_J + (hull, neg), and
    ``relative_split`` turns E_J <= t' D_J + excess_J (D_J bounded below from the computed
    profile d) into t = gamma + t' and s = max_J (excess_J + t c_J) + (hull, neg).
    """
    h, j0, inf, shift = cells.h, cells.j0, cells.inf, cells.shift
    slack, rel, alt, bounds = cells.slack, cells.rel, cells.alt, errors.bounds
    qf, pnf, xf = cells.q, cells.pn, cells.x
    nodesf = cells.node_q if cells.node_q is not None else np.zeros(qf.size + 1)
    # two empty half cells on top: the top node then carries no lowering (the profile is flat
    # above it), so the law's atom at +inf stays exact
    n = (qf.size + 1) // 2 + 1
    pad = 2 * n - qf.size
    hf = 0.5 * h
    if bounds is None:  # exact contents: their own x and deficit
        bounds = (xf, np.maximum(math.exp(hf) * pnf - qf, 0.0), qf)
    node_err = np.zeros(n + 1)
    if errors.node is not None:
        given = errors.node[0::2]
        node_err[:given.size] = given[:n + 1]
    qf, pnf, xf, xf_up, def_up, qf_up = (np.concatenate([a, np.zeros(pad)])
                                         for a in (qf, pnf, xf, *bounds))
    nodesf = np.concatenate([nodesf, np.zeros(2 * n + 1 - nodesf.size)])
    if n * h > 700.0:
        # e^{loss} over the span overflows: the empty law (delta >= 0) is the optimistic bound
        return GridLaw(h, j0, np.zeros(n + 1), 0.0, 0.0, False, 0.0, shift)
    decay_f = exp_rn(-hf)
    # the contents of the cells of width h: the two halves and the atom at the midpoint
    lo_q, lo_pn, lo_x = qf[0::2], pnf[0::2], xf[0::2]
    hi_q, hi_pn, hi_x, mid = qf[1::2], pnf[1::2], xf[1::2], nodesf[1::2]
    q = lo_q + hi_q + mid
    pn = lo_pn + decay_f * (hi_pn + mid)
    x = lo_x + hi_x + -expm1_rn(-hf) * (hi_pn + mid)
    nodes = nodesf[0::2].copy()
    # (the arrays of half cells are large: each is dropped after its last use)
    del pnf, xf, lo_pn, lo_x, hi_pn, hi_x
    # connect-the-dots masses of the cell measure: its profile D interpolates the truth at nodes
    b = np.minimum(x / -expm1_rn(-h), q)
    m = np.zeros(n + 1)
    m[:-1] += q - b
    m[1:] += b
    m += nodes
    d, rec, floor = node_values(x, pn, nodes, h)
    del x, b
    # The profile D is convex in y = e^eps; on cell j it lies above T_j, its tangent at the
    # midpoint y_j e^{h/2} with slope -(P(L > mid) + theta P(L = mid)), theta = 1/(1 + e^{h/2})
    # (a subgradient; theta balances the two halves). T_j lies below D_j by the lower half's
    # excess x plus tanh(h/4) times the midpoint atom's Q-mass, and below D_{j+1} by the upper
    # half's deficit e^{h/2} pn - q plus the same. Lowering node j by the larger of the amounts of
    # its two cells puts the chord of every cell below that cell's tangent, hence below D; the
    # error is O(h^2), a quarter of a lowering by the whole cell's excess.
    # The lowerings are read from upper bounds of the halves' excess and deficit (``bounds``):
    # computed contents err by u times the tails, not u times the cell (``accountant.pld.laws.errors``).
    t_mid = math.tanh(0.5 * hf) * mid
    below_lo = xf_up[0::2] + t_mid
    below_hi = def_up[1::2] + t_mid
    # what each node's two cells ask of it: as the lower node of cell J, as the upper of J - 1
    need_lo = np.concatenate([below_lo, [0.0]])
    need_hi = np.concatenate([[0.0], below_hi])
    # computed contents (bounds not given): the deficit e^{h/2} pn - q, a difference, errs by up
    # to res times the half cell's q; the margin covers it
    ulps = np.concatenate([lo_q, [0.0]]) + np.concatenate([[0.0], hi_q + mid])
    margin = errors.res * ulps
    # A node cannot go below 0 (D >= the atom at +inf): where a cell's upper node cannot reach its
    # tangent, the cell's lower node is lowered by the whole cell's excess x_j instead, and the
    # cell asks nothing of its upper node. On a cell the profile lies above both end tangents,
    # which meet at the fraction t of it, at a gap (1 - t) x_j below the chord; a lowering
    # c_j >= x_j keeps the chord below them whatever c_{j+1} >= 0 [@doroshenko2022connect].
    # (the whole cell's excess lo_x + hi_q - e^{-h/2} hi_pn, bounded from the halves' bounds)
    # This happens near the top of a support, and in a cell holding most of the mass close to its
    # upper node (Poisson subsampling at small q piles its mass just above log(1 - q)): there the
    # upper half's deficit exceeds the profile at the upper node, which kept that demand and so
    # went to 0 (capped), with the lower bound: sigma 0.5, q = 1e-3, T = 2 at tol 1e-4 had the
    # bracket (0, 0.516) at delta 1e-5.
    short = need_hi[1:] * (1.0 + 1e-9) + margin[1:] > d[1:]
    x_up = (xf_up[0::2] + -math.expm1(-hf) * (qf_up[1::2] + mid) + decay_f * xf_up[1::2]) * (
        1.0 + 8.0 * MACHINE_EPSILON)
    need_lo[:-1] = np.where(short, np.maximum(need_lo[:-1], x_up), need_lo[:-1])
    need_hi[1:] = np.where(short, 0.0, need_hi[1:])
    # At the bottom of a support the profile is nearly linear in y: D_J exceeds the line
    # L(y) = Q - y P (the law's total masses; the profile's value and slope below its support)
    # only by the deficit of the mass below node J, room_J = sum_{l < g_J} (y_J e^{-l} - 1) q_l.
    # A lowering beyond room_J puts node J below L, and the hull then lowers every node below it
    # too, down to the fixed value at y = 0: the law loses mass there, which costs every copy at
    # first order (sigma 1, q 1e-4: a node 4.7e-6 low where room was 2.6e-6 lowered all nodes
    # below by 2.1e-6, most of the lower end's 72 tol at T 1e3). The tangent at a cell's lower
    # node (slope -P(L > g_J)) asks nothing of node J and of node J + 1 the whole cell's deficit
    # at y_{J+1}, def_B + e^{h/2} def_A + (e^{h/2} - 1)(q_A + mid) (halves A below, B above the
    # midpoint), at most room_{J+1}. The pairs of lowerings (of nodes J, J + 1) under which the
    # cell's chord lies below D form a convex set (the chord is linear in them), so the mix
    # (1 - lam) (midpoint's pair) + lam (lower tangent's pair) is one; where the midpoint asks
    # more of node J than room_J (an estimate from the contents: it only chooses), lam is the
    # least that asks room_J of it (taken where node J + 1 can reach its share).
    e_hf = math.exp(hf)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # e^{h/2} and its expm1 within LIBM_REL each, 4 roundings of non-negative terms
        def_whole = (def_up[1::2] + e_hf * def_up[0::2] + math.expm1(hf) * (qf_up[0::2] + mid)) * (
            1.0 + 2.0 * LIBM_REL + 8.0 * MACHINE_EPSILON)
        below_p = linear_recurrence(pn + nodes[:-1], math.exp(h))
        room = math.exp(h) * below_p - np.cumsum(q + nodes[:-1])  # room_{J+1}, J = 0 .. n - 1
        room = np.maximum(np.concatenate([[0.0], room[:-1]]), 0.0)  # room_J, J = 0 .. n - 1
        lam = np.clip(1.0 - room / need_lo[:-1], 0.0, 1.0)
        ask_hi = (1.0 - lam) * need_hi[1:] + lam * def_whole
        margin_mix = margin[1:] + lam * errors.res * e_hf * lo_q
        # (finite requests only: an infinite bound times 1 - lam = 0 would be NaN)
        mix = (~short & (need_lo[:-1] > room) & np.isfinite(need_lo[:-1])
               & np.isfinite(need_hi[1:]) & np.isfinite(def_whole)
               & (ask_hi * (1.0 + 1e-9) + margin_mix <= d[1:]))
    need_lo[:-1] = np.where(mix, (1.0 - lam) * need_lo[:-1], need_lo[:-1])
    need_hi[1:] = np.where(mix, ask_hi, need_hi[1:])
    margin[1:] = np.where(mix, margin_mix, margin[1:])
    need = np.maximum(need_lo, need_hi)
    wanted = need * (1.0 + 1e-9) + margin
    c = np.minimum(wanted, d)
    del (qf, lo_q, hi_q, mid, nodesf, xf_up, def_up, qf_up, bounds, t_mid, below_lo, below_hi, need_lo,
         need_hi, ulps, margin, short, x_up, def_whole, below_p, room, lam, ask_hi, margin_mix, mix, need, pn)
    # the node values: D~ (exact, from the contents) >= (d - its recursions' error (rec) - the
    # residues' profile) / (1 + rel), d the profile in the form sum_{c >= J} [x_c + pn_c
    # (1 - e^{g_J - g_c})] over the half cells, which differs from D~'s by their residues
    # q - x - pn weighted by 1 - e^{g_J - g_c}, at most the profile of the residues of the cells
    # of width h put on their upper nodes; D >= (D~ - node) / (1 + rel)
    resid = errors.res * node_profile(np.concatenate([[0.0], q]), h) * (1.0 + 1e-9)
    gamma = (1.0 + errors.rel) * (1.0 + CONSTRUCTION_REL) - 1.0
    low = (d * (1.0 - rec) - floor - resid - node_err) / (1.0 + errors.rel)
    # where capped, the node's value is Dm - d (a rounding residue: Dm within gamma of D~, D~
    # within the residues of d's exact value), and its reference value V_J is 0
    capped = wanted > d
    cap_err = np.where(capped, (gamma + rec) * d + floor + (1.0 + gamma) * resid, 0.0)
    # F = Dm - c by its masses (in units of y_{j0}; the profile is fixed at y = 0)
    e1, e2 = 1.0 / expm1_rn(h), 1.0 / -expm1_rn(-h)
    dc = np.diff(c)
    down = np.concatenate([e1 * dc, [0.0]])
    up = np.concatenate([[c[0]], e2 * dc])
    pre = (m - down) + up
    sigma = 12.0 * UNIT_ROUNDOFF * (np.abs(down) + np.abs(up)) * (1.0 + 1e-9)
    del dc, down, up, m
    cpart = node_profile(sigma, h)
    xs, xs_err = node_exponentials(n + 1, h)
    jumps, hull = convexify(xs, pre / xs, h, xs_err)
    masses = xs * jumps
    del pre, jumps, xs
    neg = float(-masses[masses < 0].sum())
    masses = np.maximum(masses, 0.0)
    # the nodes' error bounds E_J (y = 0 first: R's Q-mass above the first node, ``total``); the
    # hull's round-off node by node (relative where the profile allows it, ``relative_split``)
    u = UNIT_ROUNDOFF
    err = np.concatenate([[(1.0 + gamma) * errors.total + (1.0 + u) * float(np.sum(sigma))
                           + (1.0 + u) * hull.zero],
                          np.where(capped, 0.0, (1.0 + gamma) * node_err + (1.0 + u) * cpart)
                          + (1.0 + u) * hull.nodes])
    held = float(np.sum(q) + np.sum(nodes)) * (1.0 - MACHINE_EPSILON * (n + 4))
    low = np.concatenate([[held / (1.0 + errors.rel) - errors.total],
                          np.where(capped, 0.0, low)])
    lowered = np.concatenate([[0.0], np.where(capped, 0.0, c)])
    fixed = (1.0 + u) * (float(np.max(cap_err + cpart * capped)) + hull.sup) + 2.0 * neg
    # two splits: relative where it can (``relative_split``), and all absolute (t = gamma; what
    # suits large deltas); the reference's own model and its ``alt`` (or own) carry them
    t_rel, s_rel = relative_split(err, low, lowered)
    s_abs = float(np.max(np.maximum(err, 0.0)))
    models = []
    for t_nodes, s_split, (s_in, r_in) in ((t_rel, s_rel, (slack, rel)),
                                           (0.0, s_abs, alt or (slack, rel))):
        t = gamma + t_nodes
        s_own = (s_split + gamma * float(np.max(lowered)) + fixed) * (1.0 + 1e-9)
        models.append(((1.0 + t) * s_in + s_own, (1.0 + t) * (1.0 + r_in) - 1.0))
    (s1, r1), (s2, r2) = models
    return GridLaw(h, j0, masses, inf, s1, False, r1, shift, alt=(s2, r2, 0.0))
