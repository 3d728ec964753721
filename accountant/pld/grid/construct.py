"""The seam between a loss law and the grid: cells of Q-mass with their split, placed on the nodes
(connect-the-dots [@doroshenko2022connect]), pessimistically or optimistically.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from accountant.core.types import MACHINE_EPSILON
from accountant.pld.grid.cells import Cells, ContentErrors
from accountant.pld.grid.law import GridLaw
from accountant.pld.grid.optimistic import optimistic_from_cells

#: Cells per node interval that the discretisation reads: the pessimistic one (connect the dots)
#: needs each cell's contents; the optimistic one also the contents of its two halves.
REFINE = {True: 1, False: 2}


def from_cells(cells: Cells, pessimistic: bool, errors: ContentErrors | None = None) -> GridLaw:
    """Grid law on the nodes g_j = (j0 + j) h + shift from ``cells`` (its contents, ``Cells``).

    Pessimistic: each cell's Q-mass is split between its two nodes so that both the mass and the
    cell's contribution x to delta at its lower node are kept (connect the dots
    [@doroshenko2022connect]); delta(eps) is then at least the cells' at every eps, and the mass
    above the last node goes to +inf. Optimistic: ``optimistic_from_cells``, whose contents err
    as ``errors`` says (by default a few ulp, the contents taken as exact).
    """
    q = np.maximum(cells.q, 0.0)
    x = np.clip(cells.x, 0.0, q)
    nodes = np.zeros(q.size + 1) if cells.node_q is None else np.maximum(cells.node_q, 0.0)
    held = replace(cells, q=q, x=x, pn=np.maximum(cells.pn, 0.0), node_q=nodes)
    if not pessimistic:
        return optimistic_from_cells(held, errors or ContentErrors(8.0 * MACHINE_EPSILON,
                                                                   16.0 * MACHINE_EPSILON))
    h = cells.h
    n = q.size
    # the share b of the cell's Q-mass sent to the upper node keeps both masses:
    # b (1 - e^{-h}) = x  [@doroshenko2022connect, connect-the-dots]
    b = np.minimum(x / -math.expm1(-h), q)
    m = np.zeros(n + 1)
    m[:-1] += q - b
    m[1:] += b
    m += nodes
    m[0] += cells.q_below
    # trailing empty nodes dropped: ``top`` is then the last node that carries mass
    nz = np.flatnonzero(m)
    m = m[:nz[-1] + 1] if nz.size else m[:1]
    return GridLaw(h, cells.j0, m, cells.inf + cells.q_above, cells.slack, True, 0.0, cells.shift)
