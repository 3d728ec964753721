"""Finite pairs whose losses are computed in floating point (log(q / p) of two pmfs, the
subsampled loss log(1 - r + r e^l)): the pessimistic atoms must lie at or above the exact losses
and the optimistic ones at or below, since near an atom delta(eps) ~ q (l - eps) errs relatively
by the position error over l - eps. Goldens: exact sums in mpmath of the doubles given."""

from __future__ import annotations

import mpmath
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant import PureDP, compose, subsample
from accountant.pld import PLD

mpf = mpmath.mpf


def pmf_delta(p: list[float], q: list[float], eps: float) -> mpmath.mpf:
    """max over the two orders of sum (p - e^eps q)_+, the doubles taken as exact."""
    with mpmath.workdps(50):
        e = mpmath.exp(mpf(eps))
        return max(mpmath.fsum(max(mpf(a) - e * mpf(b), 0) for a, b in zip(x, y, strict=True))
                   for x, y in ((p, q), (q, p)))


def test_pmf_top_atom_rounded_up() -> None:
    """At eps = the computed top loss log(0.7 / 0.2) the exact delta is 2.9e-17 > 0 (the double
    lies below log 3.5); delta was 0 before the losses were moved outward."""
    p, q = [0.7, 0.3], [0.2, 0.8]
    g = PLD.from_pmfs(p, q)
    for eps in (1.2527629684953678, 1.2527629684953, 1.25276296849):
        true = pmf_delta(p, q, eps)
        low, up = g.delta_bracket(eps)
        assert mpf(low) <= true <= mpf(up), (eps, low, float(true), up)


def test_pmf_interior_eps() -> None:
    """(0.6, 0.4) against (0.4, 0.6) at eps = 0.4 (the top atom 0.0055 above): the delta was
    8.9e-15 below the exact value, more than the law's relative charge."""
    p, q = [0.6, 0.4], [0.4, 0.6]
    g = PLD.from_pmfs(p, q)
    for eps in (0.4, 0.405465108108164, 0.40546510810815):
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
