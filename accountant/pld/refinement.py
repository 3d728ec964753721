"""The refinement of a bracket's lower end: certified lower bounds read on optimistic laws whose grids are
halved while the bracket is wider than the rung's tol.

Each optimistic law (any grid) gives a certified lower bound on the exact value, so the largest of those
read is one too; the loop only decides which laws to build. The discretisation error of an optimistic law
falls about 4x per halving of its grid (it adds about steps h^2 to the variance of the composed loss), so
from a bracket of width w a step halves the grid as often as takes w to tol / 2: ceil(log_4(2 w / tol)).
The result depends only on the reads, the upper end and tol (never on the tol the user asked for): the
rungs' brackets are then the same in every ladder, and their intersection is nested across tols.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable

from accountant.pld.settings import OPTIMISTIC_COARSER, OPTIMISTIC_MORE


def refined_lower(read: Callable[[int], float], grid: Callable[[int], Hashable],
                  fits: Callable[[int], bool], upper: float, tol: float) -> float:
    """The largest of the lower ends ``read(level)`` on the optimistic laws of the levels visited.

    ``level`` -OPTIMISTIC_COARSER is the cheapest law (its sources read 2^OPTIMISTIC_COARSER coarser
    than the pessimistic grid), 0 the pessimistic grid, k > 0 that grid halved k times. It starts at
    -OPTIMISTIC_COARSER and, while ``upper`` - lower > tol and below OPTIMISTIC_MORE, steps to the
    level that should take the width to tol / 2 (capped at the finest level that ``fits``; OPTIMISTIC_MORE
    after a step with no gain). It stops where the next level's ``grid`` is the current one's (the
    sources cannot be read finer), and after a second step in a row with no gain. No rate of
    convergence is assumed from a step's gain: on a Poisson-subsampled Logistic pair composed 100
    times two halvings gained 0.5 tol and the next two 2 tol more. ``read`` and ``fits`` are called
    only for the levels visited: a bracket within tol at the first read builds no more laws.
    """
    level = -OPTIMISTIC_COARSER
    lower, stalled = read(level), False
    while upper - lower > tol and level < OPTIMISTIC_MORE:
        step = max(1, math.ceil(math.log((upper - lower) / (0.5 * tol), 4.0)))
        finer = OPTIMISTIC_MORE if stalled else min(level + step, OPTIMISTIC_MORE)
        while finer > level and not fits(finer):
            finer -= 1
        if finer == level or grid(finer) == grid(level):
            break
        finer_lower = read(finer)
        if finer_lower <= lower and stalled:
            break
        stalled = finer_lower <= lower  # no gain: once more, on the finest grid
        lower, level = max(lower, finer_lower), finer
    return lower


__all__ = ["refined_lower"]
