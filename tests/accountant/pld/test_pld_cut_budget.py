"""The cut budget of the laws serving ``epsilon`` at a delta (``law_budget``): larger cuts where delta
allows them, still certified bounds around independent truths, and nested brackets across tols."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from accountant import GDP, compose, subsample
from accountant.pld.settings import (
    CUT_LADDER,
    CUT_LEVELS,
    CUT_RATIO,
    DEFAULT_TOL,
    LAW_BUDGETS,
    law_budget,
)

#: DP-SGD q = 0.01, sigma = 1, T = 1000 at delta 1e-5 (benchmark W3): the Laplace inversion of
#: ``benchmarks/accounting_truths.py`` (1.82823667) and the issue-3 truth to 7 decimals
W3_TRUTH = 1.82823667


@given(st.floats(1e-30, 1.0), st.floats(1e-9, 1.0))
def test_budget_is_a_rung_of_the_ladder_within_its_share_of_delta(delta: float, tol: float) -> None:
    """b = LAW_BUDGETS[False] * CUT_LADDER^k, 0 <= k <= CUT_LEVELS, at most CUT_RATIO * delta / 2
    (times tol / DEFAULT_TOL below the default tol) unless k = 0; k is the largest such."""
    base = LAW_BUDGETS[False]
    b = law_budget(delta, tol)
    k = round(math.log(b / base, CUT_LADDER))
    assert b == base * CUT_LADDER ** k and 0 <= k <= CUT_LEVELS
    share = CUT_RATIO * delta * min(1.0, tol / DEFAULT_TOL) / 2.0
    assert k == 0 or b <= share
    assert k == CUT_LEVELS or b * CUT_LADDER > share
    # a larger delta or tol never cuts less
    assert law_budget(min(1.0, 2.0 * delta), tol) >= b and law_budget(delta, min(1.0, 2.0 * tol)) >= b


def test_budget_edges() -> None:
    assert law_budget(0.0, DEFAULT_TOL) == LAW_BUDGETS[False]
    assert law_budget(math.nan, DEFAULT_TOL) == LAW_BUDGETS[False]
    assert law_budget(1e-5, DEFAULT_TOL) == LAW_BUDGETS[False] * 4 ** 5  # 1.024e-10 <= 2e-10
    assert law_budget(1e-5, 1e-8) == LAW_BUDGETS[False]  # a fine tol keeps the default cut


def test_cut_laws_bracket_the_truth_within_tol(monkeypatch: pytest.MonkeyPatch) -> None:
    """W3 T=1e3 at delta 1e-5: the bracket is read on laws cutting 1.024e-10 (the law cache holds
    them, keyed by their budget), it holds the independent truth, its upper end is within tol of
    it, and both ends are within 1e-6 of the bracket on the default cut (LAW_BUDGETS[False]): the
    larger cut moves delta by about 1e-10 only."""
    from accountant.pld import distribution

    pld = compose([subsample(GDP(1.0), 0.01)] * 1000)
    lo, up = pld.epsilon_bracket(1e-5)
    assert {k[-1] for k in pld.__dict__["_law_cache"]} == {law_budget(1e-5, pld.tol), LAW_BUDGETS[True]}
    assert lo <= W3_TRUTH - 5e-9 and W3_TRUTH + 5e-9 <= up <= W3_TRUTH + pld.tol
    monkeypatch.setattr(distribution, "law_budget", lambda delta, tol: LAW_BUDGETS[False])
    default = compose([subsample(GDP(1.0), 0.01)] * 1000)
    lo0, up0 = default.epsilon_bracket(1e-5)
    assert {k[-1] for k in default.__dict__["_law_cache"]} == {LAW_BUDGETS[False], LAW_BUDGETS[True]}
    assert abs(up - up0) <= 1e-6 and abs(lo - lo0) <= 1e-6


@pytest.mark.parametrize("q", [0.01, 0.2])
def test_brackets_nest_across_tols_with_their_cuts(q: float) -> None:
    """Below the default tol each rung cuts by its own tol (law_budget(1e-5, rung tol): 1.024e-10,
    2.56e-11, 6.4e-12 at the rungs of 3e-5, 7.5e-6, 1.9e-6) and the bracket at a tol is the
    intersection down to its rung: a smaller tol never widens it."""
    plds = [compose([subsample(GDP(1.0), q)] * 100, tol=t) for t in (3e-5, 7.5e-6, 1.9e-6)]
    brackets = [pld.epsilon_bracket(1e-5) for pld in plds]
    assert plds[0]._serving(1e-5) is not plds[0]  # read on the cut laws
    for (lo1, up1), (lo2, up2) in itertools.pairwise(brackets):
        assert lo1 <= lo2 <= up2 <= up1
    assert len({law_budget(1e-5, t) for t in (3e-5, 7.5e-6, 1.9e-6)}) == 3
    assert np.isfinite(brackets[-1]).all()


def test_finite_pairs_keep_one_set_of_laws() -> None:
    """A finite pair's support is the same at every cut: epsilon at 1e-5 reads the default laws,
    the ones ``delta`` reads too (one set of laws, not two)."""
    from accountant import PLD

    pld = PLD.from_pmfs([0.3, 0.5, 0.2], [0.15, 0.3, 0.55]).self_compose(5)
    assert pld._serving(1e-5) is pld
    pld.delta(1.0)
    pld.epsilon_bracket(1e-5)
    assert {k[-1] for k in pld.__dict__["_law_cache"]} <= {LAW_BUDGETS[False], LAW_BUDGETS[True]}
