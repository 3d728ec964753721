"""Convexification of a node profile: the lower convex hull of the jumps, in passes, with its error bounds."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from accountant.core.hull import lower_convex_hull
from accountant.core.types import MACHINE_EPSILON, FloatArray
from accountant.pld.grid.cells import node_profile
from accountant.pld.grid.law import EPS_EXT


class HullErrors(NamedTuple):
    """Round-off bounds of ``convexify`` on the profile P(y) = sum_i jumps_i (xs_i - y)_+ of its
    result: ``nodes[k]`` at y = xs_k, ``zero`` at y = 0, plus ``sup`` at every y."""

    nodes: FloatArray
    zero: float
    sup: float


def convexify(xs: FloatArray, jumps: FloatArray, h: float,
               xs_err: float = 0.0) -> tuple[FloatArray, HullErrors]:
    """``hull_passes`` for a law's masses xs_i jumps_i on nodes y_i = xs_i (1 + xi_i), xs_i
    computed as e^{i h} within |xi_i| <= ``xs_err``: the hull is taken for knots xs, and the law's
    profile at node y_k is sum_{i > k} jumps_i (1 + xi_i)(y_i - y_k) = F(xs_k) + y_k sum_{i > k}
    jumps_i (xi_k - xi_i), F the function of knots xs; so the hull's change of jumps, dj, moves
    the profile at node k by F's change (the passes' bound) plus at most 2 xs_err (1 + xs_err)^2
    xs_k sum_{i > k} |dj_i|.

    The passes' bound sum_{i > k} w_i (xs_i - xs_k) (``hull_passes``) is evaluated by
    ``node_profile`` with exact exponentials e^{(k - i) h} in place of xs_k / xs_i (within
    2 xs_err of it, so 2 xs_err (1 + xs_err)^2 xs_k sum_{i > k} w_i is added)."""
    out, w, sup = hull_passes(xs, jumps)
    n = xs.size
    nodes = np.zeros(n)
    zero = 0.0
    if w.any():
        wx = w * xs
        tail_w = np.concatenate([np.cumsum(w[::-1])[::-1][1:], [0.0]])
        nodes = (node_profile(wx * (1.0 + 4.0 * MACHINE_EPSILON), h) * (1.0 + 1e-9)
                 + (2.0 * xs_err + 4.0 * MACHINE_EPSILON) * (1.0 + xs_err) ** 2 * xs * tail_w * 1.01)
        zero = float(np.sum(wx)) * (1.0 + 1e-9)
    if xs_err > 0.0:
        dj = np.abs(out - jumps)
        tail_dj = np.concatenate([np.cumsum(dj[::-1])[::-1][1:], [0.0]])
        nodes = nodes + 2.0 * xs_err * (1.0 + xs_err) ** 2 * xs * tail_dj * (1.0 + 1e-9)
    return out, HullErrors(np.asarray(nodes, dtype=np.float64), zero, sup)


def hull_passes(xs: FloatArray, jumps: FloatArray) -> tuple[FloatArray, FloatArray, float]:
    """Lower convex hull of a piecewise-linear function given by its slope jumps at ``xs`` (its
    value at 0 fixed): each vertex with a negative jump (a concave kink) is replaced by the chord of
    its kept neighbours, which lowers the function; every other kink of each run of adjacent ones
    is removed at once (a run of r kinks takes about log2(r) passes; before, one pass per kink,
    and lattice laws on fine grids have runs of hundreds). If kinks remain after
    CONVEXIFY_PASSES passes the hull of the kept vertices is taken at once (``hull_jumps``).

    Returns the jumps, weights w >= 0 and a bound ``sup``: the round-off of the passes errs on the
    function P(y) = sum_i jumps_i (xs_i - y)_+ by at most sum_i w_i (xs_i - y)_+ at every y, and
    the hull taken at once (when it is) by ``sup`` more. A move of a share s from a kink to its
    neighbours l < r errs on the jumps at l and r by at most 12 u |s| in all (w to 3 u, 1 - w to
    3 u absolute, the products, the sums of the shares and the additions' share), an error on P
    within 12 u |s| (xs_r - y)_+, plus 2 u |j| at each node it changes (the two additions to its
    old jump): those are added to w at r and at the nodes changed. A chord replaces P on [l, r]
    by the line through its values at l and r; applied to the error bound it moves w_cur to l and
    r in the same shares, which keeps the bound outside (l, r) and makes it the line inside, so
    the bound holds node by node through the passes (the rounded shares change it by at most
    3 u w_cur (xs_r - y)_+, added at r). Before, the passes' round-off was one absolute charge
    (up to 1e4 u of the function's scale where shares travel far to the right; hypothesis found
    2.6e-12 of it), which set the floor of an optimistic law's lower bound at small deltas. The
    hull taken at once is 1-Lipschitz in the sup norm only: there the passes' bound is folded
    into ``sup`` at its largest, y = 0."""
    u = 0.5 * MACHINE_EPSILON
    j = jumps.copy()
    w_err = np.zeros(j.size)
    kept = np.ones(j.size, dtype=bool)
    for _ in range(CONVEXIFY_PASSES):
        idx = np.flatnonzero(kept)
        neg = j[idx] < 0.0
        if not neg.any():
            break
        # every other kink of each run of adjacent concave kinks (its 1st, 3rd, ...): their kept
        # neighbours stay, so the chords are independent and a run halves at each pass
        ar = np.arange(idx.size)
        run_start = np.maximum.accumulate(np.where(neg & ~np.concatenate([[False], neg[:-1]]),
                                                   ar, 0))
        pos = np.flatnonzero(neg & ((ar - run_start) % 2 == 0) & (ar < idx.size - 1))
        if pos.size == 0:
            # only the last node is left (a rounding-level negative): clipped by the caller,
            # which adds it to the slack
            break
        cur = idx[pos]
        right = idx[pos + 1]
        left_pos = pos - 1
        x_left = np.where(left_pos >= 0, xs[idx[np.maximum(left_pos, 0)]], 0.0)
        wt = (xs[right] - xs[cur]) / (xs[right] - x_left)
        share = j[cur]
        has_left = left_pos >= 0
        left = idx[left_pos[has_left]]
        touched = np.concatenate([left, right])
        w_cur = w_err[cur]
        moved = (12.0 * u * np.abs(share) + 4.0 * u * w_cur) * (1.0 + 1e-9)
        w_err += np.bincount(touched, weights=2.0 * u * np.abs(j[touched]), minlength=j.size)
        w_err += np.bincount(left, weights=w_cur[has_left] * wt[has_left], minlength=j.size)
        w_err += np.bincount(right, weights=w_cur * (1.0 - wt) + moved, minlength=j.size)
        w_err[cur] = 0.0
        j += np.bincount(left, weights=share[has_left] * wt[has_left], minlength=j.size)
        j += np.bincount(right, weights=share * (1.0 - wt), minlength=j.size)
        j[cur] = 0.0
        kept[cur] = False
    else:
        # the values are sums of at most 2 n terms of size <= sum |j| xs, summed in extended
        # precision (recursive summation: error below 2 n u_ext of it [@higham2002accuracy,
        # Sec. 4.2]) and rounded to double (u of it); the hull's choices only lower them
        bound = 4.0 * j.size * EPS_EXT + 4.0 * MACHINE_EPSILON
        sup = float(np.sum(w_err * xs)) + bound * float(np.sum(np.abs(j) * xs))
        return hull_jumps(xs, j, kept), np.zeros(j.size), sup * (1.0 + 1e-9)
    # the weights' own sums (non-negative terms, a few per node and pass) round up by the margin
    return np.asarray(j, dtype=np.float64), w_err * (1.0 + 1e-9), 0.0


#: vectorised passes of ``convexify`` before it takes the hull vertex by vertex
CONVEXIFY_PASSES = 64


def hull_jumps(xs: FloatArray, jumps: FloatArray, kept: FloatArray) -> FloatArray:
    """The slope jumps of the lower convex hull, over 0 and the kept nodes, of the function of
    ``convexify`` (slope -sum_{xs_i > y} jumps_i, flat beyond the last node), by Andrew's
    monotone chain. Its values above the flat end are sums from the top (each node's is the
    next one's plus the segment's drop), so small values near the top keep their digits; they are
    summed in long double (``EPS_EXT``)."""
    idx = np.flatnonzero(kept)
    jk, xk = jumps[idx].astype(np.longdouble), xs[idx].astype(np.longdouble)
    slope = np.cumsum(jk[::-1])[::-1]  # -(slope) left of each kept node
    drops = np.diff(xk) * slope[1:]
    f = np.concatenate([np.cumsum(drops[::-1])[::-1], [0.0]])
    first = f[0] + xk[0] * slope[0]
    hx, hy = lower_convex_hull(np.concatenate([[0.0], xs[idx]]),
                               np.concatenate([[first], f]).astype(np.float64))
    slopes = np.concatenate([np.diff(hy) / np.diff(hx), [0.0]])
    out = np.zeros(jumps.size)
    out[np.searchsorted(xs, hx[1:])] = np.diff(slopes)
    return out
