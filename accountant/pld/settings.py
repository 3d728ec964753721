"""Accuracy settings of the PLD: the target bracket width ``tol`` and the grid, tail and round-off budgets
it sets. Their measured effect on the benchmark workloads is in docs/measurements/pld_grid_constants.md.
"""

from __future__ import annotations

import math

from accountant.core.validation import check_real
from accountant.pld.grid.law import TAIL_BUDGET

#: Default accuracy: the tol the grid is set for (GRID_CONST), and the width both brackets
#: refine their lower end towards (OPTIMISTIC_COARSER, OPTIMISTIC_MORE); the widths measured
#: against it are in the docs (measurements, accounting).
DEFAULT_TOL = 3e-5
#: Smallest tol accepted (the grid is also limited by MIN_H and MAX_POINTS).
MIN_TOL = 1e-9
#: Grid constant: h0 = sqrt(tol / (GRID_CONST steps)). The discretisation error of a composition
#: of n steps grows like n h^2, so the bracket's width is a fixed fraction of tol.
GRID_CONST = 1.5
#: Narrowest and widest grid widths.
MIN_H = 2e-6
MAX_H = 0.05
#: Most grid points of one mechanism's initial law (2^19 doubles: 4 MiB per array); a coarser
#: grid is still sound, only looser.
MAX_POINTS = 2 ** 19

#: The screening law of a direction (``PLD.law(coarse=True)``) is on a grid 2^SCREEN_LEVELS
#: coarser: an upper bound too (any pessimistic grid gives one), about 4^SCREEN_LEVELS times
#: looser and far cheaper, used to rule out a direction that does not attain the maximum.
SCREEN_LEVELS = 5

#: Absolute charges a law may carry, by kind of law (precise or not): the Q-mass its tails cut
#: may move (pessimistic: up, to +inf or to its top) or drop (optimistic), over the sources' cuts
#: (split over the mechanisms) and the truncations of the compositions (``TAIL_BUDGET``), and the
#: round-off of the FFT products done without slicing (``ROUNDOFF_BUDGET``). A cut changes delta
#: by at most its mass, so the default laws serve deltas from DEFAULT_LAW_DELTA up (where the cuts
#: cost at most PRECISE_RATIO of delta) and the precise laws the smaller ones.
LAW_BUDGETS = {False: 1e-13, True: TAIL_BUDGET}
#: A delta below 1/PRECISE_RATIO times the round-off charge of the default laws is computed on
#: the precise laws (``PLD._precision``), whose FFT products take up to PRECISE_SLICES slices
#: (3 otherwise), added only while a product's remainder bound exceeds its share of the budget.
PRECISE_RATIO = 1e-4
PRECISE_SLICES = 6
DEFAULT_LAW_DELTA = 2.0 * LAW_BUDGETS[False] / PRECISE_RATIO
#: ``epsilon`` and ``epsilon_bracket`` at a delta know how much of it a cut may cost: their default
#: laws cut b = ``law_budget(delta, tol)`` (tails and plain-FFT round-off, as LAW_BUDGETS[False] does),
#: the largest LAW_BUDGETS[False] * CUT_LADDER^k (k <= CUT_LEVELS) at most CUT_RATIO * delta / 2, so
#: their charges (the sources' cuts, the truncations and the round-off, each at most about b) stay
#: within about CUT_RATIO of delta, below the 5e-5 the default laws accept at DEFAULT_LAW_DELTA.
#: Shorter sources, plain FFTs where sliced ones were needed: DP-SGD q = 0.004, T = 1e5 at delta 1e-5
#: cuts its single step at loss 2.22 instead of 2.91 (docs: measurements, PLD grid constants). Any cut
#: is sound (charged to the upper end, dropped from the lower end); ``delta``, ``delta_bracket`` and
#: ``tradeoff`` keep LAW_BUDGETS.
CUT_RATIO = 4e-5
CUT_LADDER = 4.0
CUT_LEVELS = 5
#: ... where the larger cut narrows the widest source by this fraction at least (``PLD._serving``):
#: otherwise (finite pairs, whose support is the same at every cut) the default laws serve epsilon
#: too, and a PLD asked both delta(eps) and epsilon(delta) builds one set of laws, not two.
CUT_GAIN = 0.05


def law_budget(delta: float, tol: float) -> float:
    """The cut budget b of the default laws serving epsilon at ``delta`` (``CUT_RATIO``, times
    tol / DEFAULT_TOL below the default tol: a cut moves epsilon by about its share of delta over
    |d log delta / d eps|, which a smaller tol must not see): a power of CUT_LADDER times
    LAW_BUDGETS[False] (so nearby deltas share their laws), never smaller."""
    base = LAW_BUDGETS[False]
    room = CUT_RATIO * delta * min(1.0, tol / DEFAULT_TOL) / (2.0 * base)
    if not room >= CUT_LADDER:  # nan and small deltas included
        return base
    k = min(CUT_LEVELS, math.floor(math.log(room, CUT_LADDER)))
    return base * CUT_LADDER ** (k if CUT_LADDER ** k <= room else k - 1)

#: The optimistic laws' grid is this much finer (nested: atoms stay on nodes) when their sources
#: stay within MAX_POINTS. 1: the lower end starts on the pessimistic grid, and the brackets
#: halve it (OPTIMISTIC_MORE) only where the bracket is wider than tol. The optimistic
#: construction errs more than connect-the-dots at equal h, but a law on any grid is a certified
#: lower bound, and the grid twice finer cost 2-4x the lower end's time on every bracket
#: (docs: measurements, PLD grid constants).
OPTIMISTIC_REFINE = 1
#: The brackets read their first lower end on the optimistic law whose sources are read
#: 2^OPTIMISTIC_COARSER times coarser than the pessimistic grid (and composed on the same grids
#: from there on): the cheapest law, 2-4x looser than one on the pessimistic grid; the finer
#: ones are built only where the bracket is wider than tol.
OPTIMISTIC_COARSER = 1
#: The brackets halve the optimistic grid up to this many more times while the bracket is
#: wider than tol: a source that piles its mass within a few cells (a Poisson-subsampled one at a
#: small rate) is lowered by O(h) times the cells' mass per copy until h is below the pile's
#: width. It stops after two halvings in a row that do not raise the lower end, and where the
#: composed law would pass REFINED_MAX_POINTS points (``refined_lower``).
#: (4 from OPTIMISTIC_REFINE = 1: the finest grid is the pessimistic one's / 16, as it was with 3
#: halvings from h / 2.)
OPTIMISTIC_MORE = 4
REFINED_MAX_POINTS = 2 ** 20


#: ``epsilon`` halves the pessimistic grid up to this many times where a small epsilon magnifies
#: its error (``PLD._pessimistic_finer``; also within MAX_POINTS and REFINED_MAX_POINTS)
PESSIMISTIC_MORE = 4


#: ``tol`` is read on the ladder DEFAULT_TOL * TOL_LADDER^(LADDER_TOP - j), j = 0, 1, ... (the
#: default on rung LADDER_TOP, the top rung below 1): the grid is set by the rung nearest tol (in
#: log, ``ladder_rung``), so consecutive rungs' grid widths differ by a factor of 2 (nested grids
#: where no bound of the width applies); below the default's rung the PLD's bounds at tol are the
#: tightest of the bounds at every rung from the default's down to tol's, so refining tol never
#: gives a wider bracket (``PLD._rungs``).
TOL_LADDER = 4.0
LADDER_TOP = 7


def ladder_rung(tol: float) -> int:
    """The rung j of the ladder a tol in (0, 1] is read at: the nearest in log (ties to the finer
    one), at least 0; a smaller tol never has a lower rung, and the rung's tol is within a factor
    TOL_LADDER^(1/2) of tol (below the top rung)."""
    return max(0, round(LADDER_TOP - math.log(tol / DEFAULT_TOL, TOL_LADDER) + 1e-9))


def rung_tol(rung: int) -> float:
    """The tol of a rung of the ladder: DEFAULT_TOL * TOL_LADDER^(LADDER_TOP - rung) (exact: a
    power of 2 times DEFAULT_TOL)."""
    return DEFAULT_TOL * TOL_LADDER ** (LADDER_TOP - rung)


def check_tol(tol: float) -> float:
    """The accuracy parameter ``tol``: a real in [MIN_TOL, 1]."""
    return check_real("tol", tol, low=MIN_TOL, high=1.0)


def grid_width(steps: float, tol: float, span: float = 0.0) -> float:
    """Width of the PLD grid for ``steps`` discretised steps at target bracket width ``tol``:
    h0 = sqrt(tol / (GRID_CONST steps)) (the discretisation error grows like steps h^2), kept
    within [MIN_H, MAX_H] and at least ``span`` / MAX_POINTS, so that no mechanism's initial law
    (its support ``span`` wide) needs more than MAX_POINTS nodes. Any width gives sound bounds."""
    h = math.sqrt(tol / (GRID_CONST * steps)) if steps > 0.0 else MAX_H
    return max(min(max(h, MIN_H), MAX_H), span / MAX_POINTS)


def max_coarsening(h: float) -> int:
    """The most coarsening levels of laws on a grid of width h: a law is never coarsened beyond
    MAX_H."""
    return max(0, int(math.log2(MAX_H / h)))
