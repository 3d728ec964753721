"""Coarsening of a grid law to a grid k times wider, and truncation of its negligible tails, both on
the safe side.
"""

from __future__ import annotations

import math
import sys
from dataclasses import replace
from fractions import Fraction

import numpy as np

from accountant.core.rounding import LIBM_REL
from accountant.core.types import UNIT_ROUNDOFF, FloatArray
from accountant.pld.grid.cells import Cells, ContentErrors
from accountant.pld.grid.construct import REFINE, from_cells
from accountant.pld.grid.law import TAIL_MASS, GridLaw, sum_rounding

#: Widest span (in loss) of an optimistic law the coarsening keeps (``coarsen``): the
#: construction's e^{loss} over the span must stay finite (700 overflows)
OPTIMISTIC_SPAN = 690.0


def coarsen(law: GridLaw, factor: int) -> GridLaw:
    """Re-discretise a law onto the grid of width factor * h (its nodes are nodes of the old grid).

    The contents of each new cell (half cell for an optimistic law), q, pn and x, are sums of
    at most factor - 1 terms m, m e^{-t} and m (1 - e^{-t}) (u = 2^-53, the unit roundoff;
    t = k h / r: a product, within u/2
    relative, which moves e^{-t} by at most t u/2 and 1 - e^{-t} by at most u/2 relative; numpy's
    exp and expm1 within LIBM_REL; the product u/2) added within (factor - 2) u/2, so each is
    within rho = LIBM_REL + (factor + H + 1) u/2 of the exact one (``coarsening_errors``).

    Pessimistic: each old point goes to the two nodes around it with the share sent up
    increasing in its position, so the map is monotone and keeps tail-relative errors (and
    entrywise relative ones) of its input [module docstring, point 3]. Its own round-off is
    tail-relative too: the held tail sums at node j are sum_{c >= j} q_c + b_{j-1} + the node
    atoms above (the split b_c - b_c telescopes), with q_c within rho, b = x / (1 - e^{-H})
    within rho + LIBM_REL + u (the expm1 and the quotient) and the three additions forming a
    node's mass 3 u: rho + LIBM_REL + 4 u of the tail in all.

    Optimistic: the optimistic construction applied to the held law as a mechanism; its profile
    lies below the held one up to its own round-off, stated relatively to the held profile
    (``optimistic_from_cells``), so the held law's error models carry over [module docstring,
    point 4].
    """
    if factor == 1:
        return law
    nz = np.flatnonzero(law.masses > 0)
    if nz.size and not law.pessimistic and (nz[-1] - nz[0]) * law.h > OPTIMISTIC_SPAN:
        # the optimistic construction works in y = e^eps over the span, which overflows past 700
        # (it then returned the empty law, which lost every copy's delta: a PureDP(13) subsampled
        # at 0.54, 124 times, spans 1500 and had the bracket (0, 996) at delta 1e-3). Dropping
        # the lowest masses keeps an optimistic law's bounds (module docstring, point 4) and the
        # profile above the kept span's bottom
        first = int(nz[-1]) - math.floor(OPTIMISTIC_SPAN / law.h)
        law = replace(law, offset=law.offset + first, masses=law.masses[first:].copy())
        nz = np.flatnonzero(law.masses > 0)
    # the error models above are relative; they hold where every product, sum and difference
    # of the contents and of the masses formed lies in the normal range, which masses at least
    # ``normal`` ensure (each term is at least m e^{-H} (1 - e^{-h / r})). Below it, each
    # operation errs absolutely by at most half the smallest subnormal: an optimistic law drops
    # such masses (sound, point 4 of the module docstring), a pessimistic one charges them to
    # its slack (at most 8 roundings per point and node, each entering two masses, and the
    # quotient x / (1 - e^{-factor h}) of connect-the-dots multiplying an absolute error by up
    # to 1 / (1 - e^{-factor h}))
    r = REFINE[law.pessimistic]
    least = math.exp(-law.h * factor) * -math.expm1(-law.h / r)
    normal = 4.0 * sys.float_info.min / least if least > 0.0 else math.inf
    if nz.size and float(law.masses[nz].min()) < normal:
        if law.pessimistic:
            spread = min(1.0, -math.expm1(-law.h * factor))
            underflow = 16.0 * (law.masses.size + 2 * (law.masses.size // factor + 3)) * math.ulp(0.0)
            underflow = math.nextafter(underflow / spread, math.inf)
            law = replace(law, slack=law.slack + underflow,
                          alt=None if law.alt is None else (law.alt[0] + underflow, *law.alt[1:]))
        else:
            law = replace(law, masses=np.where(law.masses >= normal, law.masses, 0.0))
            nz = np.flatnonzero(law.masses > 0)
    if nz.size == 0:
        return GridLaw(law.h * factor, 0, np.zeros(1), law.inf + law.top_mass, law.slack,
                       law.pessimistic, law.rel, law.shift, tail=law.tail, lag=law.lag,
                       support_top=law.support_top)
    # in units u = h / r of the cells read (r = REFINE): old node i at i r, a cell every factor;
    # the first and last points with mass set the new grid (cell c = ceil(i / factor) - 1)
    first, last = int(nz[0]), int(nz[-1])
    i0, i1 = (law.offset + first) * r, (law.offset + last) * r
    big_h = law.h * factor
    j0 = (-((-i0) // factor) - 1) // r
    n = r * ((-((-i1) // factor) - 1) // r + 2 - j0)
    # the points laid out in rows of ``factor`` positions: row c holds new node c (column 0) and
    # the points inside cell c after it, in order, so the column sums below add each cell's
    # contents from 0 in the order of a scatter-add (bincount) over the points; empty positions
    # add exact zeros
    dense = np.zeros((n + 1) * factor)
    start = i0 - r * j0 * factor
    part = law.masses[first:last + 1]
    dense[start:start + r * part.size:r] = np.where(part > 0, part, 0.0)
    rows = dense.reshape(n + 1, factor)
    nodes = rows[:, 0].copy()
    # a point's place in its cell, k h / r: e^{-t} and 1 - e^{-t} from a table of the factor values
    t = -(np.arange(factor) * (law.h / r))
    decay, share = np.exp(t), -np.expm1(t)
    col = rows[:n, 1]
    q, pn, x = col.copy(), col * decay[1], col * share[1]
    for k in range(2, factor):
        col = rows[:n, k]
        q += col
        pn += col * decay[k]
        x += col * share[k]
    # connect-the-dots splits each cell by non-negative weights: relative errors carry over. Its
    # round-off is tail-relative for a pessimistic law (docstring). Optimistic: the construction
    # bounds its profile against the held law's (``optimistic_from_cells``) from the contents'
    # errors (``coarsening_errors``)
    own_tail, content_errors = coarsening_errors(factor, big_h)
    out = from_cells(Cells(big_h, j0, q, pn, x, inf=law.inf, node_q=nodes, shift=law.shift,
                           slack=law.slack, rel=law.rel,
                           alt=None if law.alt is None else (law.alt[0], law.alt[1])),
                     law.pessimistic, content_errors)
    cut = max(0, math.ceil((law.top - out.top) / out.h - 1e-9))
    # a width factor * h that rounds (factor not a power of two) puts new node J at J times the
    # rounding from the old points it stands for: a lag (none for the powers of two of
    # ``self_compose``; hypothesis found a coarsening by 6 at node 17418 reporting delta 0 an ulp
    # below the old point, exact 3.0e-14)
    drift = abs(Fraction(big_h) - factor * Fraction(law.h))
    lag = law.lag
    if drift:
        k = max(abs(j0), abs(j0 + out.masses.size + cut))
        lag = math.nextafter(float(Fraction(law.lag) + k * drift), math.inf)
    if not law.pessimistic:
        return replace(out, cut=cut, lag=lag, support_top=law.support_top)
    tail = law.tail + own_tail
    alt = None if law.alt is None else (law.alt[0], law.alt[1], law.alt[2] + own_tail)
    # the top atom moves up to the new top
    return GridLaw(out.h, out.offset, out.masses, out.inf, out.slack, out.pessimistic, law.rel,
                   law.shift, law.top_mass, cut, tail, alt=alt, lag=lag,
                   support_top=law.support_top)


def coarsening_errors(factor: int, big_h: float) -> tuple[float, ContentErrors]:
    """The round-off of ``coarsen`` onto the grid of width H = ``big_h``: the tail-relative bound
    of a pessimistic law's own round-off, and how an optimistic law's contents err (``rel`` and
    ``res`` of ``ContentErrors``). Each content is within rho of the exact one (``coarsen``). The
    connect-the-dots profile of the contents is a sum of them with non-negative weights (rel =
    rho), and so is the Q-mass; exactly q = x + pn, so |q - x - pn| <= 2 rho q; the deficit
    e^{H/2} pn - q that the construction computes (e^{H/2} from libm, LIBM_REL; the product and
    the difference, u/2 each, the latter of at most e^{H/2} q since pn <= q) errs by at most
    (rho + e^{H/2} (rho + LIBM_REL + 2 u)) q: ``res`` is the larger, padded. (With exp and
    expm1 taken to 1 ulp this was (factor + 8) u and (factor + 10) u; numpy's LIBM_ULP ulp and the
    factor e^{H/2} of the deficit's terms exceed the latter: by 1.4x at factor 2, small H.)"""
    u = UNIT_ROUNDOFF
    rho = (LIBM_REL + (factor + big_h + 1.0) * u) * 1.01
    grow = math.exp(0.5 * big_h) if big_h < 1400.0 else math.inf
    res = (rho + grow * (rho + LIBM_REL + 2.0 * u)) * 1.01
    return (rho + LIBM_REL + 4.0 * u) * 1.01, ContentErrors(rho, res)


def tail_count(m: FloatArray, tail: float, floor: float) -> int:
    """How many leading entries of m have running sum at most ``tail`` (> 0), entries at or below
    ``floor`` (>= 0) counted as 0: np.searchsorted(np.cumsum(sig), tail, side="right") with sig
    those entries. The running sum is taken block by block (carried into the next block: the same
    sequential sums as np.cumsum) and only as far as needed (the cuts lie in the far tails); while
    it is 0, entries counted as 0 keep it exactly 0 and are skipped unsummed (a composed law's
    tail below its round-off floor can be half of it)."""
    start, block, carry = 0, 4096, 0.0
    while start < m.size:
        part = m[start:start + block]
        keep = part > floor
        if carry == 0.0:
            if not keep.any():
                start, block = start + part.size, 2 * block
                continue
            first = int(np.argmax(keep))
            if first > 0:
                start, block = start + first, 4096
                continue
        run = np.cumsum(np.concatenate([[carry], np.where(keep, part, 0.0)]))[1:]
        k = int(np.searchsorted(run, tail, side="right"))
        if k < run.size:
            return start + k
        start, block, carry = start + run.size, 2 * block, float(run[-1])
    return m.size


def truncate(law: GridLaw, tail: float = TAIL_MASS, floor: float = 0.0) -> GridLaw:
    """Drop tails of mass at most ``tail``: pessimistically the upper tail goes to +inf and the
    lower tail up to the first kept point; optimistically both are dropped. Entries at or below
    ``floor`` (the round-off level of the last convolution, already in the slack) count as zero
    when the cut points are chosen; the mass moved is the actual one."""
    m = law.masses
    if m.size <= 2:
        return law
    lo = tail_count(m, tail, floor)
    hi = m.size - tail_count(m[::-1], tail, floor)
    lo = min(lo, m.size - 1)
    hi = max(hi, lo + 1)
    if lo == 0 and hi == m.size:
        return law
    kept = m[lo:hi].copy()
    below = float(m[:lo].sum())
    above = float(m[hi:].sum())
    cut = law.cut + m.size - hi
    if law.pessimistic:
        # moving mass up to a fixed point is monotone: tail-relative errors are kept; the sums
        # moved round relatively, an error within their share of the tail sums
        kept[0] += below
        more = sum_rounding(m.size)
        alt = None if law.alt is None else (law.alt[0], law.alt[1], law.alt[2] + more)
        return GridLaw(law.h, law.offset + lo, kept, law.inf, law.slack, True, law.rel, law.shift,
                       law.top_mass + above, cut, law.tail + more, alt=alt, lag=law.lag,
                       support_top=law.support_top)
    # dropping mass lowers the profile: the one-sided bounds of an optimistic law are kept
    return GridLaw(law.h, law.offset + lo, kept, law.inf, law.slack, False, law.rel, law.shift,
                   0.0, cut, alt=law.alt, lag=law.lag, support_top=law.support_top)
