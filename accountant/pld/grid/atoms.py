"""Atoms on the grid: finite losses deposited on nodes, pessimistically up and optimistically down."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np

from accountant.core.rounding import LIBM_REL
from accountant.core.types import MACHINE_EPSILON, UNIT_ROUNDOFF, FloatArray
from accountant.pld.grid.cells import Cells, ContentErrors
from accountant.pld.grid.construct import REFINE, from_cells
from accountant.pld.grid.law import GridLaw


def deposit_atoms(h: float, j0: int, losses: FloatArray, qm: FloatArray, q: FloatArray,
                  pn: FloatArray, x: FloatArray, nodes: FloatArray, pessimistic: bool,
                  shift: float = 0.0) -> float:
    """Add atoms (losses, Q-masses) to the cells and nodes of a grid starting at node j0 (in
    place), on the grid {shift + j h}. An atom within 1e-9 h of a node is put on it. Returned:
    the law's ``GridLaw.lag``, how far an atom may be held on the wrong side of its loss: below
    it for a pessimistic law, above it for an optimistic one.

    An atom's place in its cell, t = l - g, is computed within dt = 1.01 u (|l| + 2 h) (u =
    MACHINE_EPSILON) of the exact one: l - shift rounds within u/2 of |l|, the node g = c h within u/2
    of |c h| <= |l| + h, the difference and a pessimistic law's addition of dt within u/2 of h
    each. A pessimistic law takes t + dt, at or above the exact place: the connect-the-dots share
    sent up grows with t, so a t rounded low would split the atom below itself, and delta at the
    cell's lower node (where the split is exact) would fall below the truth (hypothesis: a finite
    pair's atom at -0.503 on h 1.9e-4, 2.8e-11 relative). An optimistic law keeps the computed t,
    up to dt above the exact place. An atom put on a node may lie on the wrong side of it (a
    pessimistic law's above it, by up to t + dt, or t + dt - h; an optimistic law's below it):
    the lag is the largest such gap, taken in exact rational arithmetic (few atoms lie on
    nodes), so an atom exactly on its node keeps delta exactly 0 at and above it.

    A lag, not a charge on the profile: a move of E costs the profile about q E just below the
    atom, where the exact profile may be as small as the atom's own share q (l - eps). Charged
    relatively at the nodes (the atom's share there is at least q (1 - e^{-h})), a bound would fail
    between them, where the exact profile can be far smaller. A lag costs eps itself, wherever it
    is read (``raw_delta``); charged to the absolute slack instead, it would add a few ulp per
    copy and put the smallest deltas out of reach."""
    keep = qm > 0
    given, qm = losses[keep], qm[keep]
    losses = given - shift
    cell = np.ceil(losses / h).astype(np.int64) - 1
    dt = 1.01 * MACHINE_EPSILON * (np.abs(losses) + 2.0 * h)
    raw = losses - cell * h + (dt if pessimistic else 0.0)
    t = np.clip(raw, 0.0, h)
    top = t >= h * (1 - 1e-9)
    bottom = t <= h * 1e-9
    on = top | bottom
    node = np.where(top, cell + 1, cell) - j0
    nodes += np.bincount(node[on], weights=qm[on], minlength=nodes.size)
    off = ~on
    idx = cell[off] - j0
    q += np.bincount(idx, weights=qm[off], minlength=q.size)
    pn += np.bincount(idx, weights=qm[off] * np.exp(-t[off]), minlength=q.size)
    x += np.bincount(idx, weights=qm[off] * -np.expm1(-t[off]), minlength=q.size)
    # a pessimistic law must not move mass down, an optimistic one up: the atoms put on a node
    # on the wrong side of them set the lag, and an optimistic law's atoms in cells their dt
    moved = np.where(top, h, np.where(bottom, 0.0, t)) - raw
    lag = Fraction(0) if pessimistic or not off.any() else Fraction(float(dt[off].max()))
    for i in np.flatnonzero(on & ((moved < 0.0) if pessimistic else (moved > 0.0))).tolist():
        place = (int(j0) + int(node[i])) * Fraction(h) + Fraction(shift)
        gap = Fraction(float(given[i])) - place
        lag = max(lag, gap if pessimistic else -gap)
    return math.nextafter(float(lag), math.inf) if lag > 0 else 0.0


def atom_content_bounds(h: float, q: FloatArray, pn: FloatArray, x: FloatArray,
                        count: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Upper bounds of the exact excess x, upper deficit e^h pn - q and Q-mass q of cells of
    width h holding atoms at their computed places, from the contents ``deposit_atoms`` summed
    (``optimistic_from_cells`` reads them as ``bounds``): each content is a sum of at most
    ``count`` terms qm, qm e^{-t} or qm (1 - e^{-t}) (numpy's exp and expm1, LIBM_REL; the
    product, u/2) added within (count - 1) u/2, so within rho = LIBM_REL + (count + 2) u/2 of the
    exact one. The deficit is a difference of nearly equal terms for an atom just below the
    upper node (it cancels to about (h - t) qm), where a relative pad on the computed difference
    does not bound its rounding: each term is rounded outward by its own error (e^h from libm,
    LIBM_REL; the product and the difference, u/2 each) instead."""
    u = UNIT_ROUNDOFF
    rho = (LIBM_REL + (count + 2) * u) * 1.01
    grow = math.exp(h)
    with np.errstate(over="ignore", invalid="ignore"):
        ahead = grow * pn
        pad = (LIBM_REL + 2.0 * rho + 2.0 * u) * (ahead + q) * 1.01
        deficit = (np.maximum(ahead - q, 0.0) + pad) * (1.0 + 4.0 * u)
    return (np.asarray(x * (1.0 + rho), dtype=np.float64),
            np.asarray(np.where(np.isnan(deficit), np.inf, deficit), dtype=np.float64),
            np.asarray(q * (1.0 + rho), dtype=np.float64))


def from_atoms(h: float, losses: FloatArray, qm: FloatArray, *, inf: float, q_above: float,
               pessimistic: bool, slack: float = 0.0, shift: float = 0.0,
               rel: float = 0.0) -> GridLaw:
    """Discretise a finite Q-law (atoms ``losses`` with Q-masses ``qm``) onto the grid
    {shift + j h}; an optimistic law's masses may err by ``slack`` and ``rel`` (its profile within
    1 + rel of the exact one, plus slack); a pessimistic law's by ``slack`` only (its relative
    errors are the caller's to charge, as ``GridLaw.tail``)."""
    if pessimistic and rel:
        raise ValueError(f"rel must be 0 for a pessimistic law (charge it as its tail), got {rel}")
    keep = qm > 0
    losses, qm = losses[keep], qm[keep]
    if losses.size == 0:
        return GridLaw(h, 0, np.zeros(1), inf + (q_above if pessimistic else 0.0), slack, pessimistic,
                       0.0, shift)
    rel_losses = losses - shift
    j0 = math.floor(float(rel_losses.min()) / h) - 1
    r = REFINE[pessimistic]
    n = r * (math.ceil(float(rel_losses.max()) / h) + 1 - j0)
    q, pn, x, nodes = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n + 1)
    lag = deposit_atoms(h / r, r * j0, losses, qm, q, pn, x, nodes, pessimistic, shift)
    if pessimistic:
        # (the split's and the masses' roundings are the caller's to charge: ``FinitePair``)
        law = from_cells(Cells(h, j0, q, pn, x, inf=inf, q_above=q_above, node_q=nodes,
                               shift=shift, slack=slack), pessimistic=True)
        # no finite mass of the exact law lies above its largest atom
        return replace(law, lag=lag, support_top=float(losses.max()))
    # optimistic: the contents are sums of at most qm.size products, each within LIBM_REL + u/2
    # (numpy's exp and expm1, the product): within LIBM_REL + (qm.size + 2) u/2 <= rel of the
    # exact ones, and |q - x - pn| <= res q; the lowerings read the contents' upper bounds
    # (``atom_content_bounds``: the deficit cancels for an atom just below a node, and its terms
    # are e^{h/2} times q, which res did not cover for more than about 300 atoms in a cell of a
    # grid of width 0.05, or on grids wider than 1); the atoms' places are covered by the lag
    law = from_cells(Cells(h, j0, q, pn, x, inf=inf, q_above=q_above, node_q=nodes, shift=shift,
                           slack=slack, rel=rel), pessimistic=False,
                     errors=ContentErrors(LIBM_REL + (qm.size + 4) * MACHINE_EPSILON,
                                          LIBM_REL + (qm.size + 6) * MACHINE_EPSILON,
                                          bounds=atom_content_bounds(h / r, q, pn, x, qm.size)))
    return replace(law, lag=lag)


def atom_quantum(atoms: list[float]) -> float | None:
    """A common quantum a with every atom an integer multiple of it, when one is small."""
    vals = [abs(a) for a in atoms if a != 0.0]
    if not vals or any(not math.isfinite(v) for v in vals):
        return None
    base = min(vals)
    for k in range(1, 13):
        qa = base / k
        ratios = np.asarray(vals) / qa
        if np.allclose(ratios, np.round(ratios), rtol=0, atol=1e-9):
            return qa
    return None
