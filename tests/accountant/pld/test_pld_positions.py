"""Positions of a grid law's masses in floating point: an atom's place in its cell t = l - g
(``deposit_atoms``), the nodes shift + K h as ``GridLaw.raw_delta`` computes them, and the top of
the support. A pessimistic law's reported delta must bound the exact profile, so each rounding
must move the masses up (or be charged); near an atom delta(eps) ~ q (l - eps), so an ulp of
position is a large relative error there. Goldens: exact sums in mpmath of the doubles given."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from accountant.pld.distribution import PLD
from accountant.pld.grid.coarsen import coarsen
from accountant.pld.grid.law import GridLaw
from accountant.pld.laws.finite import finite_direction
from accountant.pld.models.discrete import TruncatedDiscreteGaussianPair

mpf = mpmath.mpf


def atoms_delta(losses: list[float], q: list[float], eps: float) -> mpmath.mpf:
    """sum q_i (1 - e^{eps - l_i})_+ of atoms at the doubles given, taken as exact."""
    with mpmath.workdps(60):
        e = mpf(eps)
        return mpmath.fsum(mpf(m) * max(1 - mpmath.exp(e - mpf(x)), 0)
                           for x, m in zip(losses, q, strict=True))


def held_profile(law: GridLaw, eps: float) -> mpmath.mpf:
    """The exact profile of a pessimistic law's masses at the exact nodes shift + K h, read at
    eps - lag (``GridLaw.lag``), in mpmath."""
    with mpmath.workdps(60):
        e = mpf(eps) - mpf(law.lag)
        total = mpf(law.inf)
        for i, m in enumerate(law.masses.tolist()):
            if m > 0:
                node = mpf(law.shift) + (law.offset + i) * mpf(law.h)
                total += mpf(m) * max(1 - mpmath.exp(e - node), 0)
        return total


@settings(max_examples=40, deadline=None)
@given(st.floats(1e-4, 1e-2), st.floats(-3.0, 3.0), st.floats(1e-3, 0.05), st.integers(-1, 1))
@example(h=0.0001862563096737242, low=-0.5031682441231058, gap=0.040600477270455,
         node=0)  # held 2.8e-11 relative below the truth before the atom's place was moved up
def test_atom_in_a_cell_is_split_at_or_above_itself(h: float, low: float, gap: float,
                                                   node: int) -> None:
    """A finite pair with an atom inside a cell, at the nodes around it (where connect-the-dots
    is exact): the held masses' exact profile, and the reported delta, are at least the truth.
    The atom above carries little mass, so the atom in the cell makes most of delta there."""
    losses, q = [low, low + gap], [1.0 - 1e-12, 1e-12]
    law = finite_direction(losses, q).discretize(h, True)
    k = math.floor((low - law.shift) / h) + node
    for eps in (law.shift + k * h, math.nextafter(law.shift + k * h, -math.inf)):
        true = atoms_delta(losses, q, eps)
        assert held_profile(law, eps) >= true, (eps, float(true))
        assert mpf(law.delta(eps)) >= true, (eps, law.delta(eps), float(true))


@settings(max_examples=40, deadline=None)
@given(st.floats(1e-4, 1e-2), st.floats(-3.0, 3.0), st.floats(1e-3, 0.05), st.integers(-2, 2))
@example(h=0.0001862563096737242, low=-0.5031682441231058, gap=0.040600477270455,
         node=0)  # the unshifted sum was 4.8e-12 relative below the held masses' exact profile
def test_raw_delta_bounds_the_held_profile(h: float, low: float, gap: float, node: int) -> None:
    """The reported delta at (and an ulp off) the nodes bounds the exact profile of the held
    masses at the exact nodes shift + K h, which ``raw_delta`` computes with rounding (below the
    top atom: from there on the exact delta is 0, ``GridLaw.support_top``)."""
    law = finite_direction([low, low + gap], [0.5, 0.5]).discretize(h, True)
    k = math.floor((low - law.shift) / h) + node
    base = law.shift + k * h
    for eps in (base, math.nextafter(base, -math.inf), math.nextafter(base, math.inf)):
        if eps < law.support_top:
            assert mpf(law.delta(eps)) >= held_profile(law, eps), eps


def rr_delta(e0: float, k: int, eps: float) -> mpmath.mpf:
    """Exact profile of k-fold binary randomized response at e0 (a binomial sum)."""
    with mpmath.workdps(60):
        a = mpmath.exp(mpf(e0))
        keep = a / (1 + a)
        e = mpf(eps)
        return mpmath.fsum(mpmath.binomial(k, j) * keep ** j * (1 - keep) ** (k - j)
                           * max(1 - mpmath.exp(e - (2 * j - k) * mpf(e0)), 0)
                           for j in range(k + 1))


@settings(max_examples=25, deadline=None)
@given(st.floats(0.01, 2.0), st.integers(1, 40), st.integers(0, 6))
@example(e0=0.18044184261581248, k=7, ulps=1)  # delta 0 at the computed top, exact 7.9e-19
@example(e0=0.11764657816322087, k=31, ulps=1)  # the atom's node an ulp below it: 0, exact 3.4e-25
def test_randomized_response_just_below_the_top(e0: float, k: int, ulps: int) -> None:
    """k-fold randomized response a few ulp below k e0, the top of its support: the computed top
    of the grid may lie an ulp below the exact one, and the atom's node below the atom (h = e0 /
    3 rounded): delta there must not be reported 0."""
    g = PLD.randomized_response(e0).self_compose(k)
    eps = math.nextafter(k * e0, math.inf)
    for _ in range(ulps + 1):
        eps = math.nextafter(eps, -math.inf)
    true = rr_delta(e0, k, eps)
    low, up = g.delta_bracket(eps)
    assert mpf(low) <= true <= mpf(up), (eps, low, float(true), up)



@settings(max_examples=40, deadline=None)
@given(st.floats(5e-324, 1e-300), st.floats(1e-3, 1.0), st.floats(1e-6, 1.0))
@example(mass=5e-324, h=0.5, below=1e-3)  # reported 0, exact 4.9e-327 (the product underflows)
def test_subnormal_masses_are_not_lost(mass: float, h: float, below: float) -> None:
    """A pessimistic law with a tiny mass on its top node, a little below it: products that
    underflow are charged, so the reported delta bounds the exact profile."""
    law = GridLaw(h, 0, np.array([0.0, mass]), 0.0, 0.0, True)
    eps = h - below * h
    with mpmath.workdps(60):
        true = mpf(mass) * (1 - mpmath.exp(mpf(eps) - mpf(h)))
    assert mpf(law.delta(eps)) >= true, (law.delta(eps), float(true))


@settings(max_examples=60, deadline=None)
@given(st.floats(1e-300, 0.5), st.floats(0.0, 0.5), st.floats(0.0, 0.4), st.floats(0.0, 0.4),
       st.floats(0.1, 0.9))
@example(mass=1.401298464324817e-45, slack=0.5, rel=0.0, tail=0.0, at=0.5)  # the sum rounded down
def test_delta_rounds_its_error_models_up(mass: float, slack: float, rel: float, tail: float,
                                          at: float) -> None:
    """The reported delta is at least (exact profile + slack) / (1 - rel - tail), the bound the
    error models state (``GridLaw.delta``): its own sum and quotient round up."""
    law = GridLaw(1.0, 0, np.array([0.0, mass]), 0.0, slack, True, rel, tail=tail)
    with mpmath.workdps(60):
        bound = (held_profile(law, at) + mpf(slack)) / (1 - mpf(rel) - mpf(tail))
    assert mpf(law.delta(at)) >= min(bound, mpf(1)), (law.delta(at), float(bound))


@settings(max_examples=40, deadline=None)
@given(st.floats(1e-3, 0.05), st.sampled_from([3, 5, 6, 7]), st.integers(1, 3000),
       st.integers(1, 3))
@example(h=0.04644377250260344, factor=6, node=2903, ulps=1)  # reported 0, exact 3.0e-14
def test_coarsening_by_a_rounded_width_keeps_the_bound(h: float, factor: int, node: int,
                                                       ulps: int) -> None:
    """A pessimistic point mass at node K = node * factor, coarsened by a factor that is not a
    power of two: the new width factor * h rounds, which moves the new node K / factor by K / factor
    roundings. Just below the old point the coarse law still bounds its exact profile."""
    law = GridLaw(h, node * factor, np.array([0.5]), 0.0, 0.0, True)
    coarse = coarsen(law, factor)
    with mpmath.workdps(60):
        real = node * factor * mpf(h)
    eps = float(real)
    for _ in range(ulps):
        eps = math.nextafter(eps, -math.inf)
    with mpmath.workdps(60):
        true = mpf(0.5) * max(1 - mpmath.exp(mpf(eps) - real), 0)
    assert mpf(coarse.delta(eps)) >= true, (coarse.delta(eps), float(true))


def tdg_composed(sigma: float, m: int, d: int, k: int) -> list[tuple[mpmath.mpf, mpmath.mpf]]:
    """The truncated discrete Gaussian pair (sigma, bound m, sensitivity d) composed k times, by
    exact enumeration in mpmath (40 digits): (Q-mass, P-mass) of each loss, with P the discrete
    Gaussian on {-m..m} and Q its shift by d (the loss is linear in the sum of the outcomes in
    both supports; outcomes outside P's give loss +inf, P-mass 0; outside Q's nothing to delta,
    so they are left out)."""
    with mpmath.workdps(40):
        s2 = mpf(sigma) ** 2
        ys = range(-m, m + d + 1)
        w = {y: mpmath.exp(-mpf(y) ** 2 / (2 * s2)) if abs(y) <= m else mpf(0) for y in ys}
        z = mpmath.fsum(w.values())
        p = {y: w[y] / z for y in ys}
        q = {y: p.get(y - d, mpf(0)) for y in ys}
        law: dict[tuple[int, int], tuple[mpmath.mpf, mpmath.mpf]] = {(0, 0): (mpf(1), mpf(1))}
        for _ in range(k):
            nxt: dict[tuple[int, int], tuple[mpmath.mpf, mpmath.mpf]] = {}
            for (sy, out), (qa, pa) in law.items():
                for y in ys:
                    if q[y] == 0:
                        continue
                    key = (sy + y, out) if abs(y) <= m else (sy, out + 1)
                    qb, pb = nxt.get(key, (mpf(0), mpf(0)))
                    nxt[key] = (qb + qa * q[y], pb + pa * p[y])
            law = nxt
        return list(law.values())


def pair_delta(law: list[tuple[mpmath.mpf, mpmath.mpf]], eps: float) -> mpmath.mpf:
    """H_{e^eps}(Q || P) = sum (Q - e^eps P)_+ of a finite law (mpmath, 40 digits)."""
    with mpmath.workdps(40):
        g = mpmath.exp(mpf(eps))
        return mpmath.fsum(max(qa - g * pa, 0) for qa, pa in law)


@settings(max_examples=15, deadline=None)
@given(st.floats(0.3, 1.5), st.integers(2, 7), st.integers(1, 3), st.integers(2, 3))
@example(sigma=0.42206866829410183, m=7, d=3, k=3)  # lower end 4e-14 above the truth
def test_optimistic_atoms_put_on_nodes_above_them_are_lagged(sigma: float, m: int, d: int,
                                                            k: int) -> None:
    """The losses (2 d y - d^2) / (2 sigma^2) of a truncated discrete Gaussian lie on a lattice
    only up to rounding, so the optimistic law puts atoms up to 1e-9 h below a node on it: up to
    1e-12 above themselves. Just below a composed atom (a fraction of a cell, between nodes) the
    exact profile is about q (l - eps), and the lower end must stay below it there; charged
    relatively at the nodes, the move was 1e-9 relative above the truth 7.4e-4 below the atom."""
    pld = PLD.from_pair(TruncatedDiscreteGaussianPair(sigma, m, d), count=k)
    law = tdg_composed(sigma, m, d, k)
    h = pld._optimistic("remove", 1e-10).h
    one = [(2 * d * y - d * d) / (2 * sigma * sigma) for y in range(d - m, m + 1)]
    atoms = {sum(c) for c in itertools.product(one, repeat=k) if sum(c) > 0}
    for atom in sorted(atoms):
        for frac in (1e-3, 0.03, 0.3):
            eps = atom - frac * h
            true = pair_delta(law, eps)
            if eps > 0 and true > 1e-250:
                lower = pld.delta_bracket(eps)[0]
                assert mpf(lower) <= true, (atom, frac, lower, float(true))
