"""The exact k-fold Laplace profile (``accountant.pld.laplace_profile``) against independent
references: the full-sum closed form ``references.LaplaceRef`` (mpmath, the alternating Irwin-Hall
sums at enough digits) at small k, and the 150-digit W2 truths of ``benchmarks/accounting_truths.py``
(``LaplaceKFold``) at k = 100. Soundness is decided by evaluating the reference at the bounds."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mpf

from accountant import PLD
from accountant.pld.laplace_profile import MAX_COUNT, MAX_EPS0, LaplaceProfile
from benchmarks.accounting import TAIL_TRUTHS, WORKLOADS
from tests.support.references import LaplaceRef

W2 = WORKLOADS[1]


@pytest.mark.parametrize(("eps0", "k"), [(0.1, 1), (0.1, 4), (1.0, 5), (0.5, 8), (2.0, 3),
                                         (4.5, 2), (0.01, 6)])
def test_delta_enclosure_against_closed_form(eps0: float, k: int) -> None:
    profile, ref = LaplaceProfile(eps0, k), LaplaceRef(eps0, k)
    top = k * eps0
    for eps in (-1.1 * top, -0.7, 0.0, 0.3 * eps0, 0.25 * top, 0.5 * top, 0.8 * top, 0.999 * top):
        lo, up = profile.delta_bounds(eps)
        exact = ref.delta(mpf(eps))
        assert lo <= exact <= up, (eps0, k, eps)
        assert up - lo <= 1e-11 * float(exact) + 1e-18, (eps0, k, eps, up - lo)


@settings(max_examples=20, deadline=None)
@given(eps0=st.floats(0.02, 3.0), k=st.integers(1, 9), frac=st.floats(-0.2, 1.05))
def test_delta_enclosure_property(eps0: float, k: int, frac: float) -> None:
    eps = frac * k * eps0
    lo, up = LaplaceProfile(eps0, k).delta_bounds(eps)
    exact = LaplaceRef(eps0, k).delta(mpf(eps))
    assert lo <= exact <= up


@pytest.mark.parametrize(("eps0", "k", "delta"), [(0.5, 6, 1e-4), (1.0, 3, 1e-2), (0.2, 9, 1e-9),
                                                  (3.0, 2, 0.3)])
def test_epsilon_bracket_holds_the_exact_value(eps0: float, k: int, delta: float) -> None:
    lo, up = LaplaceProfile(eps0, k).epsilon_bracket(delta)
    ref = LaplaceRef(eps0, k)
    assert ref.delta(mpf(up)) <= delta  # the exact epsilon is at most up
    assert lo == 0.0 or ref.delta(mpf(lo)) > delta  # and above lo
    assert up - lo <= 1e-10 * max(1.0, up)


def test_w2_against_the_150_digit_truths() -> None:
    pld = PLD.laplace(10.0).self_compose(100)
    cases = [(W2.delta, W2.truth)] + [(d, v) for (name, d), v in TAIL_TRUTHS.items()
                                      if name == W2.name]
    assert len(cases) == 4
    for delta, truth in cases:
        lo, up = pld.epsilon_bracket(delta)
        assert lo <= truth <= up
        assert up - lo <= 2e-11
        assert pld.epsilon(delta) == up


def test_tol_does_not_move_a_served_composition() -> None:
    brackets = {PLD.laplace(10.0, tol=t).self_compose(100).epsilon_bracket(1e-6)
                for t in (1e-3, 3e-5, 1e-6, 1e-9)}
    assert len(brackets) == 1
    deltas = {PLD.laplace(10.0, tol=t).self_compose(100).delta_bracket(3.0) for t in (1e-3, 1e-8)}
    assert len(deltas) == 1


def test_ends_of_the_range() -> None:
    profile = LaplaceProfile(0.1, 100)
    top = math.fsum([0.1] * 100)
    lo, up = profile.epsilon_bracket(0.0)  # delta(eps) > 0 below k eps0 (the atom there)
    assert lo <= 100 * mpf(0.1) <= up and up - lo <= 1e-12
    assert abs(up - top) <= 1e-12
    assert profile.delta_bounds(up) == (0.0, 0.0)
    assert profile.delta_bounds(math.inf) == (0.0, 0.0)
    lo_d, up_d = profile.delta_bounds(-math.inf)
    assert lo_d <= 1.0 == up_d
    assert profile.epsilon_bracket(1.0) == (0.0, 0.0)


def test_served_range() -> None:
    assert LaplaceProfile(0.1, 100).serves(1e-5) and LaplaceProfile(0.1, 100).serves()
    # 1000 copies at eps0 = 0.1 carry ~50 continuous terms, more than MAX_TERMS leave out
    assert not LaplaceProfile(0.1, MAX_COUNT).serves(1e-5)
    assert not LaplaceProfile.fits(MAX_EPS0 * 2, 3) and not LaplaceProfile.fits(0.1, MAX_COUNT + 1)
    pld = PLD.laplace(10.0).self_compose(MAX_COUNT)
    assert pld._laplace_profile is not None and not pld._laplace_profile.serves(1e-5)


@pytest.mark.parametrize(("eps0", "k", "name"), [(0.0, 3, "eps0"), (math.nan, 3, "eps0"),
                                                 (-1.0, 3, "eps0"), (0.1, 0, "k"),
                                                 (0.1, MAX_COUNT + 1, "k")])
def test_bad_input(eps0: float, k: int, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        LaplaceProfile(eps0, k)


def test_near_the_atoms_of_an_inexact_eps0() -> None:
    # eps0 = 1/3 is held rounded up: the exact mechanism's profile must lie in the bracket just
    # below its atoms j eps0 too, where an atom an ulp too high is a large relative error
    pld = PLD.laplace(3.0).self_compose(4)
    ref = LaplaceRef(mpf(1) / 3, 4)  # the exact 1/3, not its double
    for j in (4, 2, 0, -2):
        atom = float(mpf(j) / 3)
        for gap in (0.0, 1e-15, 1e-12, 1e-9):
            eps = atom - gap * max(1.0, abs(atom))
            lo, up = pld.delta_bracket(eps)
            assert lo <= ref.delta(mpf(eps)) <= up, (j, gap)
