"""Composition on the grid: self-composition by repeated squaring with coarsening, and composition of
several laws.
"""

from __future__ import annotations

import math
from dataclasses import replace

from accountant.pld.grid.convolve import convolve, to_grid
from accountant.pld.grid.law import ROUNDOFF_BUDGET, TAIL_BUDGET, GridLaw

#: Squarings before the first coarsening of a self-composition (``coarsening_level``). A law
#: standing for m copies, coarsened to h, is used k/m times, and its connect-the-dots error is
#: largest while the law is narrow and far from Gaussian, so coarsening waits 2^COARSEN_DELAY
#: copies.
COARSEN_DELAY = 4


def coarsening_level(steps: float, max_level: int) -> int:
    """Level of the grid (width h0 * 2^level) of a law standing for ``steps`` discretised steps:
    floor((floor(log2 steps) - COARSEN_DELAY) / 2), so that the point count stays about constant
    once coarsening starts (the law's spread grows like sqrt m) and each level's error, O(h^2)
    used k/m times, about the same as the steps' own. A copy whose atoms sit on the nodes counts
    for its continuous Q-mass only (``self_compose``'s ``weight``): its copies add little error,
    and a coarsening would add far more."""
    if not steps >= 1.0:
        return 0
    return min(max(math.frexp(steps)[1] - 1 - COARSEN_DELAY, 0) // 2, max_level)


def self_compose(law: GridLaw, k: int, max_level: int, max_slices: int = 3,
                 tail_budget: float = TAIL_BUDGET,
                 roundoff_budget: float = ROUNDOFF_BUDGET, weight: float = 1.0,
                 plan: float | None = None) -> GridLaw:
    """k-fold composition by repeated squaring (O(N log N log k)); the object standing for m
    copies is moved to the grid of width h0 * 2^``coarsening_level(m * weight)``, ``weight`` the
    discretised steps one copy stands for (``coarsening_level``). Its truncations move or
    drop about ``tail_budget`` of mass in all (``TAIL_BUDGET``), and its products done by plain
    FFT add at most ``roundoff_budget`` of round-off (``ROUNDOFF_BUDGET``). ``plan``: the h0 the
    levels count from (default: the law's width; a law read on a grid coarser than ``plan`` is
    coarsened only once a level's grid is wider than its own)."""
    if law.fallback_slack is not None:
        # both charges of the source are carried; each delta uses the smaller result
        law = replace(law, fallback_slack=None, alt=(law.fallback_slack, law.rel, 0.0))
    h0 = law.h if plan is None else plan
    result: GridLaw | None = None
    base = law
    m = 1
    kk = k
    # round-off allowed in plain FFTs: the budget in all, split over the 2 L products; a
    # product at the m-copy level is used k/m times
    share = roundoff_budget / (2 * k.bit_length())
    while True:
        if kk & 1:
            if result is None:
                result = base
            else:
                h = max(result.h, base.h)
                result = convolve(to_grid(result, h), to_grid(base, h), tail_budget / 64, share,
                                  max_slices)
        kk >>= 1
        if kk == 0:
            break
        m *= 2
        # a tail dropped here is used k/m times: keep each level's share of delta near the budget
        base = convolve(base, base, tail_budget * m / (64 * k), share * m / k, max_slices)
        target = h0 * 2 ** coarsening_level(m * weight, max_level)
        if target > base.h:
            base = to_grid(base, target)
    assert result is not None
    return result


def compose_laws(laws: list[GridLaw], tail_budget: float = TAIL_BUDGET) -> GridLaw:
    """Composition of laws on nested grids (the coarsest grid is used)."""
    h = max(law.h for law in laws)
    acc = to_grid(laws[0], h)
    for law in laws[1:]:
        acc = convolve(acc, to_grid(law, h), tail_budget / 64)
    return acc
