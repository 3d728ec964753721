"""Refining tol below the default never gives a wider bracket: over random workloads (pure DP, GDP,
Laplace, Poisson-subsampled, composed), small deltas and eps = 0, the bracket at tol2 < tol1 <= the
default lies inside the bracket at tol1 (its lower end not lower, its upper end not higher), and
``epsilon``/``delta`` follow its upper end. tol is read on a ladder (``ladder_rung``): the rung
nearest tol sets the grid, and below the default's rung the bounds are the tightest over the rungs
from the default's down to it (at the default and above, one grid: brackets may cross).
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accountant import GDP, PLD, Guarantee, PureDP, compose, subsample
from accountant.pld.settings import DEFAULT_TOL, ladder_rung, rung_tol


@st.composite
def mechanisms(draw: st.DrawFn) -> Guarantee:
    kind = draw(st.sampled_from(["pure", "gdp", "laplace"]))
    base: Guarantee
    if kind == "pure":
        base = PureDP(draw(st.floats(0.05, 2.0)))
    elif kind == "gdp":
        base = GDP(draw(st.floats(0.1, 3.0)))
    else:
        base = PLD.laplace(draw(st.floats(0.5, 20.0)))
    if draw(st.booleans()):
        base = subsample(base, draw(st.floats(1e-3, 0.5)))
    return base


@st.composite
def workloads(draw: st.DrawFn) -> list[Guarantee]:
    items: list[Guarantee] = []
    for _ in range(draw(st.integers(1, 2))):
        items += [draw(mechanisms())] * draw(st.integers(1, 6))
    return items


#: tol1 from the default down to 16 times finer (tol2 is a fraction of it)
tols = st.floats(DEFAULT_TOL / 16, DEFAULT_TOL).map(lambda t: float(t))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), tols, st.floats(0.1, 0.9), st.floats(-12.0, -3.0),
       st.one_of(st.just(0.0), st.floats(0.0, 2.0)))
def test_smaller_tol_gives_a_bracket_inside(items: list[Guarantee], tol1: float, ratio: float,
                                             log_delta: float, eps: float) -> None:
    coarse = compose(items, method="pld", tol=tol1)
    fine = compose(items, method="pld", tol=tol1 * ratio)
    delta = 10.0 ** log_delta
    lo1, up1 = coarse.epsilon_bracket(delta)
    lo2, up2 = fine.epsilon_bracket(delta)
    assert lo1 <= lo2 and up2 <= up1, ((lo1, up1), (lo2, up2))
    assert lo2 <= up2
    assert fine.epsilon(delta) == up2 and coarse.epsilon(delta) == up1
    dlo1, dup1 = coarse.delta_bracket(eps)
    dlo2, dup2 = fine.delta_bracket(eps)
    assert dlo1 <= dlo2 and dup2 <= dup1, ((dlo1, dup1), (dlo2, dup2))
    assert dlo2 <= dup2
    assert fine.delta(eps) == min(1.0, dup2)


@given(st.floats(1e-9, 1.0), st.floats(1e-9, 1.0))
def test_the_ladder_is_monotone_and_near_tol(a: float, b: float) -> None:
    lo, hi = min(a, b), max(a, b)
    assert ladder_rung(lo) >= ladder_rung(hi)
    t = rung_tol(ladder_rung(lo))
    assert t <= 1.0 and t >= 1e-9
    if lo <= rung_tol(0):
        assert abs(math.log(t / lo, 4.0)) <= 0.5 + 1e-9


def test_the_default_tol_is_a_rung() -> None:
    assert rung_tol(ladder_rung(DEFAULT_TOL)) == DEFAULT_TOL
