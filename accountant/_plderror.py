"""Tail-relative error bounds of a continuous source's pessimistic discretisation.

A ``_TailDirection`` computes the four tails Q(L <= g), Q(L > g), P(L <= g), P(L > g) at the nodes
g_j and differences them into cell masses; ``from_cells`` splits each cell between its two nodes
(b_c sent up). The held tail sum at node j is then

    M~_j = sum_{c >= j} q~_c + q_above~ + b~_{j-1} + (atoms at or above node j),

and the cell masses telescope: sum_{c >= j} q~_c + q_above~ = sq~_j up to the rounding of each
difference (where the upper tail is differenced), so its error is that of one computed tail, which
is *relative* to the tail (``tail_accuracy``: ``ndtr`` and the closed forms are relative-accurate,
argument rounding included). Only b~_{j-1} carries an error divided by the cell's 1 - e^{-h}
(b = (q - e^g p) / (1 - e^{-h}) cancels), bounded by the cell's mass as well. The bound TB_j on
|M~_j - M_j| is computed entry by entry, and the source's tail coefficient is
t = max_j TB_j / (M~_j - TB_j), capped at ``TAIL_CAP``; where a node exceeds t M_j, the excess
X_j goes to the absolute slack: clamping the error's tail sums to +-X_j leaves a measure of l1 norm
at most 2 sum_j X_j [module docstring of ``_pldgrid``, point 3].
"""

from __future__ import annotations

import math

import numpy as np

from ._numeric import FloatArray
from ._pldgrid import EPS_MACH, GridLaw

U = EPS_MACH / 2.0
#: Largest tail coefficient a source may carry (k copies cost about k * TAIL_CAP relative on delta;
#: ``self_compose`` falls back to the absolute charge when that is above TAIL_COMPOSED_MAX); a node
#: whose bound exceeds it is charged to the absolute slack instead.
TAIL_CAP = 1e-6


def product_error(j: FloatArray, h: float) -> FloatArray:
    """|j h - fl(j h)| exactly, for integers j (as doubles) and a double h: Dekker's product with
    Veltkamp's splitting [@dekker1971floating], exact barring overflow and underflow."""
    def split(a: FloatArray) -> tuple[FloatArray, FloatArray]:
        c = 134217729.0 * a  # 2^27 + 1
        hi = c - (c - a)
        return hi, a - hi

    jh, jl = split(np.asarray(j, dtype=np.float64))
    hh, hl = split(np.full(1, h))
    p = j * h
    err = ((jh * hh - p) + jh * hl + jl * hh) + jl * hl
    return np.asarray(np.abs(err), dtype=np.float64)


def ndtr_accuracy(z: FloatArray, dz: FloatArray) -> FloatArray:
    """Relative error bound, relative to the computed value, of ``scipy.special.ndtr`` evaluated at
    a computed argument within dz of the exact z: its own error (measured against mpmath: at most
    1.6 z^2 u + 16 u down to z = -37.5; charged (2 z^2 + 16) u, tests/test_pld_tails.py) and the
    argument's,
    |log Phi(z + d) - log Phi(z)| <= d (|z| + d + 1) (the log-derivative phi/Phi is at most |z| + 1
    [@birnbaum1942inequality])."""
    az = np.abs(z)
    with np.errstate(invalid="ignore", over="ignore"):
        arg = np.where(dz > 0, dz * (az + dz + 1.0), 0.0)
        rel = np.expm1(arg) * 1.01 + (2.0 * az * az + 16.0) * U
        rel = rel / np.maximum(1.0 - rel, 0.0)  # relative to the computed value
    return np.asarray(np.where(np.isfinite(z), rel, 8.0 * U), dtype=np.float64)


def source_tail_law(law: GridLaw, g: FloatArray, tails: tuple[FloatArray, ...],
                    accuracy: tuple[FloatArray, FloatArray], cells_q: FloatArray,
                    cells_atoms: FloatArray, node_atoms: FloatArray, base_slack: float) -> GridLaw:
    """The pessimistic ``law`` of a tail source with its error stated tail-relatively (module
    docstring). ``tails`` = (fq, sq, fp, sp) at the nodes g, ``accuracy`` = (rel, abs) with
    |T~ - T| <= rel T~ + abs for each of them; ``cells_q`` the cell masses differenced from the
    tails (before atoms), ``cells_atoms``/``node_atoms`` the atoms' Q-masses deposited in cells and
    on nodes; ``base_slack`` the absolute error of the law not covered here (atoms moved)."""
    fq, sq, fp, sp = tails
    rel, ab = accuracy
    h = law.h
    n = cells_q.size  # cells; n + 1 nodes
    if law.masses.size > n + 1:
        return law
    def err(t: FloatArray) -> FloatArray:
        # |T~ - T| <= rel T~ + abs; always |T~ - T| <= 1 + T~ (T is a probability)
        with np.errstate(over="ignore", invalid="ignore"):
            bound = rel * np.abs(t) + ab
        return np.asarray(np.minimum(np.where(np.isnan(bound), np.inf, bound), 1.0 + np.abs(t)),
                          dtype=np.float64)

    dsq, dfq, dsp, dfp = err(sq), err(fq), err(sp), err(fp)
    upper = sq[:-1] <= 0.5
    q_hat = np.where(upper, sq[:-1] - sq[1:], fq[1:] - fq[:-1])
    # entrywise: difference of two tails; the rounding of the difference; the clip at 0
    d_cell = np.where(upper, dsq[:-1] + dsq[1:], dfq[:-1] + dfq[1:])
    round_q = U * np.abs(q_hat) + np.maximum(-q_hat, 0.0)
    dq = d_cell + round_q + 8.0 * U * cells_atoms
    p_hat = np.where(sp[:-1] <= 0.5, sp[:-1] - sp[1:], fp[1:] - fp[:-1])
    dp = np.where(sp[:-1] <= 0.5, dsp[:-1] + dsp[1:], dfp[:-1] + dfp[1:]) + U * np.abs(p_hat)
    gl = g[:-1]
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        # e^g p: its rounding (arguments up to |g| + |log p|) and e^g times p's error
        pn = np.exp(gl + np.log(np.maximum(p_hat, 0.0)))
        lp = np.abs(np.log(np.maximum(np.abs(p_hat), 1e-300)))
        dpn = np.exp(gl + np.log(dp)) * (1.0 + 1e-6) + 4.0 * U * (np.abs(gl) + lp + 2.0) * pn
    dpn = np.where(np.isfinite(dpn), dpn, np.inf) + dq  # the clip to [q e^{-h}, q]
    c_h = -math.expm1(-h)
    q_held = cells_q + cells_atoms
    # b = min(x / (1 - e^{-h}), q) with x = q - e^g p clipped to [0, q]; atoms' x rounds relatively
    b_err = np.minimum(((3.0 * dq + dpn) / c_h + 8.0 * U * q_held) * (1.0 + 1e-6) + 16.0 * U * cells_atoms,
                       q_held + dq)
    # tail sums of the cells' errors: telescoped on the top run of upper-branch cells
    lower_idx = np.flatnonzero(~upper)
    jstar = int(lower_idx[-1]) + 1 if lower_idx.size else 0
    crude = np.where(np.arange(n) < jstar, d_cell, 0.0)
    rev = np.concatenate([np.cumsum((crude + round_q + 8.0 * U * cells_atoms)[::-1])[::-1], [0.0]])
    tq = rev + dsq[np.maximum(np.arange(n + 1), jstar)]
    tq[0] += dfq[0]  # q_below, on node 0
    node_rev = np.cumsum(node_atoms[::-1])[::-1]
    masses = np.concatenate([law.masses, np.zeros(n + 1 - law.masses.size)])  # trailing empty
    held = np.cumsum(masses[::-1])[::-1] + law.inf
    tb = tq + np.concatenate([[0.0], b_err]) + 8.0 * U * node_rev + 8.0 * U * held
    tb = np.append(tb, dsq[-1] + 8.0 * U * law.inf)  # the atom at +inf
    held = np.append(held, law.inf)
    low = held - tb
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(low > 0, tb / low, 0.0)  # where low <= 0, all of tb is excess
    t = min(TAIL_CAP, float(ratio.max()))
    excess = np.where(low > 0, np.maximum(tb - t * low, 0.0), tb)
    slack = base_slack + 2.0 * float(excess.sum()) * (1.0 + 1e-9)
    if not math.isfinite(slack) or slack >= law.slack:
        return law
    return GridLaw(law.h, law.offset, law.masses, law.inf, slack, True, law.rel, law.shift,
                   law.top_mass, law.cut, law.tail + t, law.slack)
