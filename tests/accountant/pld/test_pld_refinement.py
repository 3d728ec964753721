"""The refinement of a bracket's lower end (``refined_lower``), shared by ``delta_bracket`` and
``epsilon_bracket``: which levels it reads, when it stops, and that ``delta_bracket``'s lower end,
refined while wider than the rung's tol, stays below the exact value (mpmath reference)."""

from __future__ import annotations

import pytest
from mpmath import mpf

from accountant import GDP, PLD, subsample
from accountant.pld.refinement import refined_lower
from accountant.pld.settings import OPTIMISTIC_COARSER, OPTIMISTIC_MORE, ladder_rung, rung_tol
from tests.support.references import GaussianBase, MaxRef, subsample_steps


def _run(values: dict[int, float], upper: float, tol: float,
         fits_up_to: int = OPTIMISTIC_MORE) -> tuple[float, list[int]]:
    """refined_lower on made-up reads; returns (result, levels read)."""
    seen: list[int] = []

    def read(level: int) -> float:
        seen.append(level)
        return values[level]

    out = refined_lower(read, lambda level: level, lambda level: level <= fits_up_to, upper, tol)
    return out, seen


def test_a_bracket_within_tol_reads_one_law() -> None:
    assert _run({-OPTIMISTIC_COARSER: 0.95}, 1.0, 0.1) == (0.95, [-OPTIMISTIC_COARSER])


def test_a_step_halves_as_often_as_takes_the_width_to_half_tol() -> None:
    # width 10 tol: ceil(log_4(20)) = 3 halvings from the first level
    lo, seen = _run({-1: 0.0, 2: 0.99}, 1.0, 0.1)
    assert seen == [-1, 2] and lo == 0.99


def test_no_gain_tries_the_finest_grid_once() -> None:
    lo, seen = _run({-1: 0.0, 2: 0.0, 4: 0.5}, 1.0, 0.1)
    assert seen == [-1, 2, 4] and lo == 0.5
    lo, seen = _run({-1: 0.1, 2: 0.05, 4: 0.02}, 1.0, 0.1)  # never lower than the best read
    assert seen == [-1, 2, 4] and lo == 0.1


def test_levels_that_do_not_fit_are_skipped() -> None:
    lo, seen = _run({-1: 0.0, 0: 0.4}, 1.0, 0.1, fits_up_to=0)
    assert seen == [-1, 0] and lo == 0.4


MU, RATE = 2.3465958445914032, 0.011274110252259625


@pytest.mark.parametrize("tol", [1e-4, 1e-5, 1e-6])
def test_delta_bracket_at_zero_is_certified_and_within_tol(tol: float) -> None:
    """Issue 28's subsampled Gaussian at eps = 0: the lower end was read on the grid-h law only
    (1.24 tol wide at tol 1e-6, 2.75 at 1e-4); refined, it is within its rung's tol and below the
    exact delta (mpmath, 50 digits)."""
    exact = MaxRef(list(subsample_steps(GaussianBase(MU), RATE))).delta(mpf(0))
    pld = subsample(GDP(MU), RATE, tol=tol)
    assert isinstance(pld, PLD)
    lo, up = pld.delta_bracket(0.0)
    assert mpf(lo) <= exact <= mpf(up)
    assert up - lo <= rung_tol(ladder_rung(tol))
