"""Finite pairs whose losses are computed in floating point (log(q / p) of two pmfs, log s of a
piecewise-linear curve's slopes, the subsampled loss log(1 - r + r e^l)): the pessimistic atoms
must lie at or above the exact losses and the optimistic ones at or below, since near an atom
delta(eps) ~ q (l - eps) errs relatively by the position error over l - eps. Goldens: exact
sums in mpmath of the doubles given."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant import PureDP, compose, subsample
from accountant.notions.tradeoff import PiecewiseLinearTradeoff
from accountant.pld.distribution import PLD
from accountant.pld.laws.tail import TailDirection

mpf = mpmath.mpf


def pmf_delta(p: list[float], q: list[float], eps: float) -> mpmath.mpf:
    """max over the two orders of sum (p - e^eps q)_+, the doubles taken as exact."""
    with mpmath.workdps(50):
        e = mpmath.exp(mpf(eps))
        return max(mpmath.fsum(max(mpf(a) - e * mpf(b), 0) for a, b in zip(x, y, strict=True))
                   for x, y in ((p, q), (q, p)))


@pytest.mark.parametrize(("p", "q", "epss"), [
    # at eps = the computed top loss log(0.7 / 0.2) the exact delta is 2.9e-17 > 0 (the double
    # lies below log 3.5); delta was 0 before the losses were moved outward
    ([0.7, 0.3], [0.2, 0.8], (1.2527629684953678, 1.2527629684953, 1.25276296849)),
    # (0.6, 0.4) against (0.4, 0.6) at eps = 0.4 (the top atom 0.0055 above): the delta was
    # 8.9e-15 below the exact value, more than the law's relative charge
    ([0.6, 0.4], [0.4, 0.6], (0.4, 0.405465108108164, 0.40546510810815)),
], ids=["top-atom", "interior"])
def test_pmf_bracket_holds_the_exact_delta(p: list[float], q: list[float],
                                           epss: tuple[float, ...]) -> None:
    g = PLD.from_pmfs(p, q)
    for eps in epss:
        true = pmf_delta(p, q, eps)
        low, up = g.delta_bracket(eps)
        assert mpf(low) <= true <= mpf(up), (eps, low, float(true), up)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.05, 0.95), st.floats(0.05, 0.95), st.floats(-1e-9, 1e-9),
       st.sampled_from([0, 1]))
def test_pmf_near_atoms(a: float, b: float, off: float, which: int) -> None:
    """Two-outcome pmfs at eps just off either (positive) loss: the bracket holds the exact
    delta."""
    p, q = [a, 1.0 - a], [b, 1.0 - b]
    atoms = [abs(float(mpmath.log(mpf(x) / mpf(y)))) for x, y in zip(p, q, strict=True)]
    eps = atoms[which] + off
    true = pmf_delta(p, q, eps)
    low, up = PLD.from_pmfs(p, q).delta_bracket(eps)
    assert mpf(low) <= true <= mpf(up), (eps, low, float(true), up)


def test_without_replacement_mixed_loss() -> None:
    """Found by benchmarks/soundness.py --seed 5: a replace-one subsample of PureDP(0.0126) at
    rate 0.138; its mixed loss 0.00175 cancels in logaddexp (error ~u of the operands, 0.15 and
    2), so the old 4 u |l| outward move left delta(0) 1.1e-15 relatively below the exact value.
    Exact: the max over (P, M) and (M, P), M = (1 - r) P + r Q [@zhu2022optimal, Sec. 5]."""
    eps0, r = 0.012564194252916836, 0.13843137072225742
    g = compose([subsample(PureDP(eps0), r, scheme="without_replacement")])
    with mpmath.workdps(50):
        e0, rr = mpmath.exp(mpf(eps0)), mpf(r)
        a = e0 / (1 + e0)
        pp, qq = [a, 1 - a], [1 - a, a]
        mm = [(1 - rr) * x + rr * y for x, y in zip(pp, qq, strict=True)]
        for eps in (0.0, 0.001, 0.0017):
            e = mpmath.exp(mpf(eps))
            true = max(mpmath.fsum(max(x - e * y, 0) for x, y in zip(s, t, strict=True))
                       for s, t in ((pp, mm), (mm, pp)))
            low, up = g.delta_bracket(eps)
            assert mpf(low) <= true <= mpf(up), (eps, low, float(true), up)


def knots_delta(alphas: list[float], betas: list[float], eps: float) -> mpmath.mpf:
    """max_i (1 - beta_i - e^eps alpha_i) of the knots taken as exact (the curve's profile)."""
    with mpmath.workdps(50):
        e = mpmath.exp(mpf(eps))
        return max(max(1 - mpf(b) - e * mpf(a) for a, b in zip(alphas, betas, strict=True)),
                   mpf(0))


def test_piecewise_linear_top_loss() -> None:
    """A 3-knot curve whose steepest slope's computed log lies below the exact one: at eps
    1.2e-15 below it (the finite part of delta ~1e-15 on top of 1 - f(0)) delta was 1.4e-18
    below the exact value."""
    alphas = [0.0, 0.20825184472808692, 1.0]
    betas = [0.9822306700801786, 0.13470565957492509, 0.0]
    g = PLD.from_tradeoff(PiecewiseLinearTradeoff(np.array(alphas), np.array(betas)))
    for eps in (1.403572210493988, 1.403572210492989):
        true = knots_delta(alphas, betas, eps)
        low, up = g.delta_bracket(eps)
        assert mpf(low) <= true <= mpf(up), (eps, low, float(true), up)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(-3.0, 3.0), min_size=1, max_size=4), st.floats(0.5, 1.0),
       st.integers(0, 2**32 - 1), st.sampled_from([0.0, 1e-15, 1e-12, -1e-16]))
def test_piecewise_linear_near_atoms(log_slopes: list[float], b0: float, seed: int,
                                     off: float) -> None:
    """Random convex curves, at eps just below (or at) each computed loss log s: the bracket holds
    the exact profile of the knots."""
    rng = np.random.default_rng(seed)
    s = np.sort(np.exp(np.asarray(log_slopes)))[::-1]
    a = np.concatenate([[0.0], np.cumsum(rng.dirichlet(np.ones(s.size)))])
    a[-1] = 1.0
    drop = s * np.diff(a)
    b = np.maximum(np.concatenate([[b0], b0 - np.cumsum(drop / drop.sum() * b0)]), 0.0)
    try:
        f = PiecewiseLinearTradeoff(a, b)
    except ValueError:
        return
    g = PLD.from_tradeoff(f)
    alphas, betas = f.alphas.tolist(), f.betas.tolist()
    for slope in (-np.diff(f.betas) / np.diff(f.alphas)).tolist():
        if slope <= 1.0:
            continue
        eps = math.log(slope) - off
        true = knots_delta(alphas, betas, eps)
        low, up = g.delta_bracket(eps)
        assert mpf(low) <= true <= mpf(up), (eps, low, float(true), up)


def test_discrete_laplace_top_loss() -> None:
    """PLD.discrete_laplace(scale t): two atoms at +-1/t, and 1/t is rounded once
    (FiniteLossTradeoff's ``loss_atol``, which the PLD's pair did not read). Exact profile for
    eps < 1/t: (1 - e^{eps - 1/t}) / (1 + e^{-1/t}) [@canonne2020discrete]. At eps = the double
    1/0.7 the delta was 0 (exact 4.8e-17)."""
    for t in (0.7, 1.3, 3.0, 7.77):
        g = PLD.discrete_laplace(t)
        with mpmath.workdps(40):
            loss = 1 / mpf(t)
        for eps in (1.0 / t, 1.0 / t - 2e-16, 1.0 / t - 1e-15, 0.5 / t):
            with mpmath.workdps(40):
                true = max((1 - mpmath.exp(mpf(eps) - loss)) / (1 + mpmath.exp(-loss)), mpf(0))
            low, up = g.delta_bracket(eps)
            assert mpf(low) <= true <= mpf(up), (t, eps, low, float(true), up)


@settings(max_examples=200, deadline=None)
@given(st.floats(1e-4, 0.999), st.floats(1e-3, 20.0))
def test_subsampled_tail_atoms_are_moved_outward_by_their_rounding(r: float, eps: float) -> None:
    # the atoms of a Poisson-subsampled Laplace pair sit at +-log(1 - r + r e^{+-eps}) (remove)
    # and their mirror images (symmetrised), computed by a cancelling logaddexp: the positions a
    # pessimistic law deposits must lie at or above the exact losses (mpmath, 50 digits), an
    # optimistic law's at or below
    g = subsample(PLD.laplace(1.0, eps), r)
    assert isinstance(g, PLD)
    pair = g.factors[0][0]
    for d in (pair.remove, pair.add):
        if d is None:
            continue
        assert isinstance(d, TailDirection)
        losses, _ = d.point_masses()
        err = d.atom_error()
        exact = _exact_atoms(d, r, eps)
        with mpmath.workdps(50):
            for lo, e, x in zip(losses, err, exact, strict=True):
                assert mpmath.mpf(float(lo + e)) >= x
                assert mpmath.mpf(float(lo - e)) <= x


def _exact_atoms(d: object, r: float, eps: float) -> list[mpmath.mpf]:
    """The exact atom losses of a subsampled Laplace direction, in ``point_masses`` order."""
    from accountant.pld.laws.subsampled import SubsampledTailDirection
    from accountant.pld.laws.symmetric import SymmetricTailDirection

    with mpmath.workdps(50):
        def mixed(sub: SubsampledTailDirection) -> list[mpmath.mpf]:
            base = [mpmath.mpf(float(b)) for b in sub.base.point_masses()[0]]
            out = [mpmath.log(1 - mpmath.mpf(r) + mpmath.mpf(r) * mpmath.exp(b)) for b in base]
            return out if sub.direction == "remove" else [-x for x in out]

        if isinstance(d, SymmetricTailDirection):
            assert isinstance(d.base, SubsampledTailDirection)
            base = mixed(d.base)
            pos = [x for x, b in zip(base, d.base.point_masses()[0], strict=True) if b > 0]
            return [*pos, *[-x for x in pos], mpmath.mpf(0)]
        assert isinstance(d, SubsampledTailDirection)
        return mixed(d)
