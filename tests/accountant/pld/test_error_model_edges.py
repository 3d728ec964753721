"""Roundings at the edges of the PLD accountant's error models (issue 14), and of a profile's
trade-off curve: each declared bound is checked against the exact value (rationals, or mpmath at
40 digits) of what it bounds, on inputs built to make the rounding matter, and under the worst
libm the model allows (``libm_off``)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import accountant.pld.grid.coarsen as coarsening
from accountant import GDP, ProfileTradeoff
from accountant.compose.composition import advanced_composition_profile
from accountant.core.rounding import LIBM_REL, exp_rn, expm1_rn
from accountant.notions.closed_forms import GaussianTradeoff
from accountant.pld.grid.atoms import atom_content_bounds, deposit_atoms
from accountant.pld.grid.cells import Cells, ContentErrors, node_values
from accountant.pld.grid.coarsen import coarsen
from accountant.pld.grid.construct import from_cells
from accountant.pld.grid.law import GridLaw
from accountant.pld.laws.errors import TAIL_CAP, tail_split
from tests.support.libm import libm_off

mpf = mpmath.mpf

@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 1e-6), st.floats(-1e-3, 1.0)), min_size=1, max_size=20))
# the quotient 1e-16 / 0.7 rounds down: t 0.7 fell short of 1e-16 by 1.4e-33, and the excess,
# 1e-16 - fl(t 0.7) = 0 in floating point, did not charge it
@example([(1e-16, 0.7)])
def test_tail_split_holds_in_exact_arithmetic(rows: list[tuple[float, float]]) -> None:
    """``tail_split``: TB_j <= t max(low_j, 0) + X_j at every node in rationals (the exact tail
    sums are at least max(low_j, 0)), X_j >= 0, t <= TAIL_CAP, and X_j is all of TB_j where
    low_j <= 0."""
    tb, low = (np.array(c, dtype=np.float64) for c in zip(*rows, strict=True))
    t, excess = tail_split(tb, low)
    assert 0.0 <= t <= TAIL_CAP
    for b, lo, x in zip(tb.tolist(), low.tolist(), excess.tolist(), strict=True):
        assert x >= 0.0
        if lo <= 0.0:
            assert x == b
        assert Fraction(b) <= Fraction(t) * max(Fraction(lo), Fraction(0)) + Fraction(x), (b, lo, t, x)


#: cells of width 2^-10 with atoms at t = k 2^-40 above their lower node: l = c h + t and
#: l - c h are exact, so the places deposit_atoms computes are the exact ones
HC = 2.0 ** -10
PLACES = 2 ** 30


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(2, PLACES - 2), st.floats(1e-6, 1.0)),
                min_size=1, max_size=12),
       st.sampled_from([-np.inf, np.inf]))
# an atom 2 / 2^30 of the cell below the upper node: its deficit e^h pn - q cancels to 1.9e-12
# of its mass, and the computed difference, padded by 8 u of itself, was 6e-4 relative below it
# with exp 3 ulp low
@example([(1, PLACES - 2, 0.5)], -np.inf)
def test_atom_content_bounds_hold(atoms: list[tuple[int, int, float]], direction: float) -> None:
    """``atom_content_bounds`` bounds each cell's exact excess, upper deficit and Q-mass of the
    atoms (mpmath, 40 digits) from above, under the worst libm of the error model, and is
    within 64 LIBM_REL of the cell's Q-mass of them."""
    cells, ks, qm = zip(*atoms, strict=True)
    losses = np.array([c * HC + k * (HC / PLACES) for c, k in zip(cells, ks, strict=True)])
    size = 4
    q, pn, x, nodes = np.zeros(size), np.zeros(size), np.zeros(size), np.zeros(size + 1)
    with libm_off(direction):
        deposit_atoms(HC, 0, losses, np.array(qm), q, pn, x, nodes, False)
        x_up, def_up, q_up = atom_content_bounds(HC, q, pn, x, len(atoms))
    assert not nodes.any()
    with mpmath.workdps(40):
        for c in range(size):
            here = [(mpf(k) / PLACES * mpf(HC), mpf(m))
                    for cc, k, m in zip(cells, ks, qm, strict=True) if cc == c]
            xe = mpmath.fsum(m * -mpmath.expm1(-t) for t, m in here)
            de = mpmath.fsum(m * mpmath.expm1(mpf(HC) - t) for t, m in here)
            qe = mpmath.fsum(m for _, m in here)
            for bound, exact in ((x_up[c], xe), (def_up[c], de), (q_up[c], qe)):
                assert mpf(float(bound)) >= exact, (c, float(bound), float(exact))
                assert mpf(float(bound)) <= exact + 64 * LIBM_REL * qe


def capture_coarsening(law: GridLaw, factor: int, direction: float,
                       monkeypatch: pytest.MonkeyPatch) -> tuple[GridLaw, dict[str, Any]]:
    """``coarsen`` under the worst libm of the model, with the contents it hands ``from_cells``
    and the deficit e^{H/2} pn - q the optimistic construction computes from them (by its own
    formula, under the same libm)."""
    seen: dict[str, Any] = {}
    original = from_cells

    def spy(cells: Cells, pessimistic: bool, errors: ContentErrors | None = None) -> GridLaw:
        seen.update(h=cells.h, j0=cells.j0, q=cells.q.copy(), pn=cells.pn.copy(),
                    x=cells.x.copy(), errors=errors,
                    deficit=math.exp(0.5 * cells.h) * cells.pn - cells.q)
        return original(cells, pessimistic, errors)

    monkeypatch.setattr(coarsening, "from_cells", spy)
    with libm_off(direction):
        out = coarsen(law, factor)
    monkeypatch.undo()
    return out, seen


def exact_contents(law: GridLaw, factor: int) -> dict[int, tuple[mpmath.mpf, ...]]:
    """(q, pn, x) of each new cell (half cell for an optimistic law) with points inside, by its
    absolute index, for the points at their exact places: old point K at K h, cells of width
    factor h / r from 0 (mpmath, 40 digits)."""
    r = 2 if not law.pessimistic else 1
    out: dict[int, tuple[mpmath.mpf, ...]] = {}
    with mpmath.workdps(40):
        for i, m in enumerate(law.masses.tolist()):
            pos = r * (law.offset + i)  # in units h / r
            cell, k = divmod(pos, factor)
            if m > 0 and k:
                t = k * mpf(law.h) / r
                q, pn, x = out.get(cell, (mpf(0), mpf(0), mpf(0)))
                out[cell] = (q + m, pn + m * mpmath.exp(-t), x + m * -mpmath.expm1(-t))
    return out


def laws(least: float) -> st.SearchStrategy[tuple[list[float], int, float, int, float]]:
    """(masses, offset, h, factor, libm direction); masses 0 or at least ``least``."""
    mass = st.one_of(st.just(0.0), st.floats(least, 1.0))
    return st.tuples(st.lists(mass, min_size=2, max_size=60).filter(any), st.integers(-50, 50),
                     st.sampled_from([1e-3, 0.0123, 0.05, 0.5, 2.0]),
                     st.sampled_from([2, 3, 4, 5, 8, 16]), st.sampled_from([-np.inf, np.inf]))


@settings(max_examples=40, deadline=None)
@given(laws(1e-250))  # the normal range (below it the masses are dropped)
# h 2 coarsened by 8: half cells of width 8 with points up to 6 above their lower node; the
# deficit's terms are e^8 ~ 3000 times the Q-mass, and their rounding under a 4-ulp exp (2.1e-13,
# about 1100 u of q) exceeded the (factor + 10) u allowed
@example(([1.0, 0.5, 0.25, 0.125, 1.0], 0, 2.0, 8, -np.inf))
def test_optimistic_coarsening_contents_within_their_errors(
        case: tuple[list[float], int, float, int, float]) -> None:
    """The contents an optimistic coarsening hands its construction are within ``rel`` of the
    exact ones, and q - x - pn and the computed deficit within ``res`` q of theirs (0 and the
    exact deficit), under the worst libm of the model."""
    masses, offset, h, factor, direction = case
    law = GridLaw(h, offset, np.array(masses), 0.0, 0.0, False)
    with pytest.MonkeyPatch.context() as mp:
        out, seen = capture_coarsening(law, factor, direction, mp)
    if not seen:  # every mass below the normal range was dropped: the empty law
        assert not out.masses.any()
        return
    errors, base = seen["errors"], 2 * seen["j0"]
    exact = exact_contents(law, factor)
    with mpmath.workdps(40):
        grow = mpmath.exp(mpf(seen["h"]) / 2)
        for i in range(seen["q"].size):
            q, pn, x = exact.get(base + i, (mpf(0), mpf(0), mpf(0)))
            got = [mpf(float(seen[k][i])) for k in ("q", "pn", "x")]
            for held, value in zip(got, (q, pn, x), strict=True):
                assert abs(held - value) <= errors.rel * value, (i, float(held), float(value))
            assert abs(got[0] - got[1] - got[2]) <= errors.res * q
            deficit = mpf(float(seen["deficit"][i]))
            assert abs(deficit - (grow * pn - q)) <= errors.res * q, (
                i, float(deficit - (grow * pn - q)), float(errors.res * q))


@settings(max_examples=40, deadline=None)
@given(laws(5e-324))
@example(([1.0, 5e-324, 0.5], 0, 1e-3, 3, -np.inf))  # an underflowing product
# a subnormal mass split by connect-the-dots: the quotient by 1 - e^{-2h} (2e-3) made its absolute
# round-off 215 subnormal units where the slack allowed 160
@example(([0.0, 1.1125369292536007e-308], 0, 1e-3, 2, -np.inf))
def test_pessimistic_coarsening_round_off_is_tail_relative(
        case: tuple[list[float], int, float, int, float]) -> None:
    """A pessimistic coarsening of exact masses errs on each tail sum of the exact coarsening
    (connect-the-dots of the exact contents onto the nodes J factor h) by at most its ``tail``
    times that tail sum plus its ``slack`` (where masses underflow), under the worst libm of the
    model."""
    masses, offset, h, factor, direction = case
    law = GridLaw(h, offset, np.array(masses), 0.0, 0.0, True)
    with pytest.MonkeyPatch.context() as mp:
        out, _ = capture_coarsening(law, factor, direction, mp)
    assert out.lag == 0.0 or factor not in (2, 4, 8, 16)
    with mpmath.workdps(40):
        big = factor * mpf(h)
        exact: dict[int, mpmath.mpf] = {}
        for cell, (q, _, x) in exact_contents(law, factor).items():
            b = x / -mpmath.expm1(-big)
            exact[cell] = exact.get(cell, mpf(0)) + q - b
            exact[cell + 1] = exact.get(cell + 1, mpf(0)) + b
        for i, m in enumerate(masses):
            cell, k = divmod(offset + i, factor)
            if not k:
                exact[cell] = exact.get(cell, mpf(0)) + m
        held = {out.offset + i: mpf(m) for i, m in enumerate(out.masses.tolist())}
        nodes = sorted(set(exact) | set(held))
        tail_exact, tail_held = mpf(0), mpf(0)
        for j in reversed(nodes):
            tail_exact += exact.get(j, mpf(0))
            tail_held += held.get(j, mpf(0))
            assert abs(tail_held - tail_exact) <= out.tail * tail_exact + out.slack, (
                j, float(tail_held - tail_exact), float(out.tail * tail_exact))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0), st.floats(0.0, 1.0)),
                min_size=1, max_size=40), st.floats(0.0, 1.0), st.floats(1e-7, 0.5),
       st.sampled_from([-np.inf, np.inf]))
# 1 - e^{-h} taken as 1 - fl(e^{-h}) is 5.3e-11 relative above its value at this h (it cancels):
# the node below a lone top atom had d 5.3e-11 relative above its value, 4.4e-15 allowed there
@example([(0.0, 0.0, 0.0)], 1.0, 1.0395694851129115e-06, np.inf)
@example([(0.0, 0.0, 0.0)], 5e-324, 0.5, np.inf)  # an underflowing product: d_0 = 0
# a lone top atom 40 cells up, e^{-h} just above 1/2 (where an ulp is largest relatively)
@example([(0.0, 0.0, 0.0)] * 40, 1.0, 0.69, -np.inf)
def test_node_values_within_their_error(cells: list[tuple[float, float, float]], top: float,
                                        h: float, direction: float) -> None:
    """``node_values``: |d_j - D_j| <= rec_j D_j + floor at every node, D the profile of the
    contents in exact arithmetic (mpmath, 40 digits), under the worst libm of the model."""
    x, pn, nodes = (np.array(c, dtype=np.float64) for c in zip(*cells, strict=True))
    nodes = np.append(nodes, top)
    with libm_off(direction):
        d, rec, floor = node_values(x, pn, nodes, h)
    n = x.size
    with mpmath.workdps(40):
        decay = mpmath.exp(-mpf(h))
        w = [mpf(0)] * (n + 2)
        for j in range(n, -1, -1):
            w[j] = (mpf(float(pn[j])) if j < n else mpf(0)) + mpf(float(nodes[j])) + decay * w[j + 1]
        exact = mpf(0)
        for j in range(n, -1, -1):
            if j < n:
                exact += mpf(float(x[j])) + (1 - decay) * w[j + 1]
            assert abs(mpf(float(d[j])) - exact) <= float(rec[j]) * exact + floor, (
                j, float(d[j] - exact), float(rec[j] * exact))


@settings(max_examples=40, deadline=None)
@given(st.floats(0.2, 3.0), st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12),
       st.sampled_from([-np.inf, np.inf]))
@example(1.0, [0.01, 0.1, 0.3, 0.5], -np.inf)
def test_profile_tradeoff_lies_below_the_exact_curve(mu: float, alphas: list[float],
                                                     direction: float) -> None:
    """``ProfileTradeoff``: beta(alpha) <= max_i max(0, 1 - delta_i - e^{eps_i} alpha,
    e^{-eps_i} (1 - delta_i - alpha)) in exact arithmetic (mpmath, 40 digits), delta_i the
    doubles the profile returns, under the worst libm of the model."""
    grid = np.linspace(0.0, 4.0, 17)
    deltas = {e: GDP(mu).delta(e) for e in grid.tolist()}  # before the libm is moved
    with libm_off(direction):
        beta = ProfileTradeoff(deltas.__getitem__, grid)(np.array(alphas))
    with mpmath.workdps(40):
        lines = [(mpmath.exp(mpf(e)), 1 - mpf(d)) for e, d in deltas.items()]
        for a, b in zip(alphas, np.atleast_1d(beta).tolist(), strict=True):
            exact = max([mpf(0)] + [max(c - k * mpf(a), (c - mpf(a)) / k) for k, c in lines])
            assert mpf(b) <= exact, (a, b, float(mpf(b) - exact))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(1e-3, 1.0), st.floats(0.0, 1e-6)), min_size=1, max_size=30),
       st.floats(0.0, 1.0), st.sampled_from([-np.inf, np.inf]))
@example([(0.1, 1e-7)] * 50, 0.5, -np.inf)
def test_advanced_composition_profile_is_an_upper_bound(pairs: list[tuple[float, float]],
                                                        frac: float, direction: float) -> None:
    """``advanced_composition_profile`` at or above delta' + sum delta_i (its exact value, or 1
    or sum delta_i where the formula gives those; mpmath, 40 digits), under the worst libm of
    the model."""
    with mpmath.workdps(40):
        s1 = mpmath.fsum(mpf(e) * mpmath.expm1(mpf(e)) for e, _ in pairs)
        s2 = mpmath.fsum(mpf(e) ** 2 for e, _ in pairs)
        total = mpmath.fsum(mpf(e) for e, _ in pairs)
        eps = float(s1 + frac * (total - s1)) if s1 < total else float(total)
        e = mpf(eps)
        dsum = mpmath.fsum(mpf(d) for _, d in pairs)
        exact = (dsum if e >= total else mpf(1) if e <= s1
                 else dsum + mpmath.exp(-((e - s1) ** 2) / (2 * s2)))
    with libm_off(direction):
        got = advanced_composition_profile(pairs)(eps)
    assert mpf(got) >= min(exact, mpf(1)), (eps, got, float(exact))


@settings(max_examples=40, deadline=None)
@given(st.floats(-30.0, -1e-300), st.sampled_from([-np.inf, np.inf]))
@example(-0.1, -np.inf)
def test_identity_tradeoff_profile_rounds_up(eps: float, direction: float) -> None:
    """GaussianTradeoff(0)'s profile 1 - e^eps (eps < 0) at or above its exact value (mpmath),
    under the worst libm of the model."""
    with libm_off(direction):
        got = GaussianTradeoff(0.0).profile(eps)
    with mpmath.workdps(40):
        assert mpf(got) >= -mpmath.expm1(mpf(eps)), (eps, got)


@settings(max_examples=60, deadline=None)
@given(st.floats(-700.0, 700.0))
def test_scalar_constants_are_rounded_to_nearest(x: float) -> None:
    """``exp_rn`` and ``expm1_rn`` (the optimistic construction's scalar constants) are the
    doubles nearest to e^x and e^x - 1 (mpmath, 60 digits): computed in mpmath's arbitrary
    precision, they do not depend on the libm (libm_off cannot wrap mpmath's internal calls)."""
    got = (exp_rn(x), expm1_rn(x))
    with mpmath.workdps(60):
        for value, exact in zip(got, (mpmath.exp(mpf(x)), mpmath.expm1(mpf(x))), strict=True):
            gap = abs(mpf(value) - exact)
            for other in (math.nextafter(value, math.inf), math.nextafter(value, -math.inf)):
                assert gap <= abs(mpf(other) - exact)
