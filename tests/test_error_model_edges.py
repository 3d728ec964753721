"""Roundings at the edges of the PLD accountant's error models (issue 14): each declared bound is
checked against the exact value (rationals, or mpmath at 40 digits) of what it bounds, on inputs
built to make the rounding matter, and under the worst libm the model allows (``libm_off``)."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from accountant._numeric import LIBM_REL
from accountant._plderror import TAIL_CAP, tail_split
from accountant._pldgrid import atom_content_bounds, deposit_atoms
from tests.test_libm_error import libm_off

mpf = mpmath.mpf

positive = st.floats(1e-300, 1.0, allow_nan=False, allow_infinity=False)


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
