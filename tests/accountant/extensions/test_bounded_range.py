"""eps-bounded range: the tight Renyi divergence, KL and profile of ``BoundedRange`` against a
brute-force maximisation over the two-point worst-case family in mpmath, random many-outcome eps-BR
pairs, and the exponential mechanism's exact sampled law; its zCDP level, ordering and composition."""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mpf

from accountant import (
    ZCDP,
    BoundedRange,
    PureDP,
    bounded_range_delta,
    bounded_range_renyi,
    compose,
    guarantee_from_dict,
    guarantee_to_dict,
    implies,
    to_rdp,
    to_zcdp,
)
from accountant.notions.conversions import randomized_response_renyi
from mechanisms import CustomQuery, Domain, ExponentialMechanism

MP = mpmath.mp.clone()
MP.dps = 40


def _two_point(eps: float, t: Any) -> tuple[Any, Any]:
    """Q-masses (w, 1 - w) at likelihood ratios P/Q = e^t and e^(t - eps), E_Q[P/Q] = 1."""
    e = MP.mpf(eps)
    w = (MP.exp(-t) - MP.exp(-e)) / (1 - MP.exp(-e))
    return w, 1 - w


def _brute_max(fn: Any, eps: float, start: float = 0.0) -> Any:
    """max of fn(t) over t in [start, eps]: a 200-point grid, then golden-section search on the
    bracket around the best point (fn is unimodal there), 80 steps."""
    e, t0 = MP.mpf(eps), MP.mpf(start)
    grid = [t0 + (e - t0) * i / 200 for i in range(201)]
    vals = [fn(t) for t in grid]
    i = max(range(201), key=lambda j: vals[j])
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, 200)]
    g = (MP.sqrt(5) - 1) / 2
    for _ in range(80):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if fn(a) < fn(b):
            lo = a
        else:
            hi = b
    return max(max(vals), fn((lo + hi) / 2))


def brute_renyi(eps: float, a: float) -> Any:
    def d(t: Any) -> Any:
        w, v = _two_point(eps, t)
        e = MP.mpf(eps)
        if a == 1:  # KL = E_Q[X log X]
            return w * MP.exp(t) * t + v * MP.exp(t - e) * (t - e)
        return MP.log(w * MP.exp(a * t) + v * MP.exp(a * (t - e))) / (a - 1)
    return _brute_max(d, eps)


def brute_delta(eps: float, e1: float) -> Any:
    def d(t: Any) -> Any:
        w, v = _two_point(eps, t)
        e = MP.mpf(eps)
        return w * max(MP.exp(t) - MP.exp(e1), 0) + v * max(MP.exp(t - e) - MP.exp(e1), 0)
    return _brute_max(d, eps, max(e1, 0.0))  # below t = e1 >= 0 both parts vanish


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(1e-3, 30.0),
       a=st.one_of(st.just(1.0), st.floats(1.0, 1.01), st.floats(1.0, 500.0)))
def test_renyi_is_the_maximum_over_the_two_point_family(eps: float, a: float) -> None:
    truth = brute_renyi(eps, a)
    got = mpf(bounded_range_renyi(eps, a))
    assert got >= truth
    assert got <= truth * (1 + mpf(10) ** -12) + mpf(10) ** -30
    # the eps^2/8 zCDP bound and the pure-DP (randomized response) curve lie above it
    assert got <= a * eps * eps / 8 * (1 + 1e-12)
    assert got <= randomized_response_renyi(eps, a) * (1 + 1e-12)


@settings(max_examples=30, deadline=None)
@given(eps=st.floats(1e-3, 30.0), frac=st.floats(-2.0, 1.2))
def test_profile_is_the_maximum_over_the_two_point_family(eps: float, frac: float) -> None:
    e1 = frac * eps
    got = mpf(bounded_range_delta(eps, e1))
    if e1 >= 0:
        truth = brute_delta(eps, e1)
    else:  # the reverse pair: the class is closed under L -> -L
        truth = 1 - MP.exp(e1) + MP.exp(e1) * brute_delta(eps, -e1)
    assert got >= truth
    assert got <= truth * (1 + mpf(10) ** -12) + mpf(10) ** -300
    assert got <= PureDP(eps).delta(e1) * (1 + 1e-12) + 1e-300


def test_order_one_and_infinity_closed_forms() -> None:
    for eps in (0.01, 1.0, 7.0):
        kl = math.log(math.expm1(eps) / eps) - 1 + eps / math.expm1(eps)
        assert math.isclose(bounded_range_renyi(eps, 1.0), kl, rel_tol=1e-9)
        assert bounded_range_renyi(eps, math.inf) == eps
        # continuous at order 1 and increasing in the order
        assert math.isclose(bounded_range_renyi(eps, 1 + 1e-9), kl, rel_tol=1e-6)
        vals = [bounded_range_renyi(eps, a) for a in (1.0, 1.5, 2.0, 10.0, 1e3, 1e6)]
        assert vals == sorted(vals) and vals[-1] <= eps


@settings(max_examples=40, deadline=None)
@given(eps=st.floats(0.01, 10.0), q=st.lists(st.floats(1e-3, 1.0), min_size=2, max_size=6),
       pos=st.lists(st.floats(0.0, 1.0), min_size=6, max_size=6),
       a=st.one_of(st.just(1.0), st.floats(1.0, 50.0)))
def test_random_bounded_range_pairs_lie_below(eps: float, q: list[float], pos: list[float],
                                               a: float) -> None:
    """Q random, P proportional to Q e^{eps u_i} with u in [0, 1]: the loss log P/Q ranges over at
    most eps. Both Renyi divergences and the profile stay below the eps-BR figures."""
    with mpmath.workdps(40):
        qm = [mpf(x) for x in q]
        qm = [x / mpmath.fsum(qm) for x in qm]
        pm = [x * mpmath.exp(mpf(eps) * mpf(u)) for x, u in zip(qm, pos, strict=False)]
        pm = [x / mpmath.fsum(pm) for x in pm]

        def renyi(p: list[Any], r: list[Any]) -> Any:
            if a == 1:
                return mpmath.fsum(x * mpmath.log(x / y) for x, y in zip(p, r, strict=True))
            return mpmath.log(mpmath.fsum(x ** a * y ** (1 - a) for x, y in zip(p, r, strict=True))) / (a - 1)

        bound = mpf(bounded_range_renyi(eps, a))
        assert renyi(pm, qm) <= bound and renyi(qm, pm) <= bound
        for e1 in (0.0, 0.3 * eps, 0.8 * eps, -0.5 * eps):
            hs = mpmath.fsum(max(x - mpmath.exp(e1) * y, 0) for x, y in zip(pm, qm, strict=True))
            assert hs <= mpf(bounded_range_delta(eps, e1))


def _exact_law(em: ExponentialMechanism, scores: np.ndarray) -> list[Any]:
    s, d = em.sampling_exponents(scores)
    w = [MP.exp(-MP.mpf(s.numerator) * int(di) / s.denominator) for di in d]
    total = MP.fsum(w)
    return [x / total for x in w]


@pytest.mark.parametrize("monotone", [False, True])
def test_exponential_mechanism_as_sampled_is_bounded_range(monotone: bool) -> None:
    """The exact sampled law on neighbouring score vectors (random, and the extreme moves that
    approach the bound): the loss ranges over at most eps, and the Renyi divergences stay below
    the declared guarantee's RDP curve."""
    rng = np.random.default_rng(7)
    eps, sens, k = 1.3, 0.4, 5
    em = ExponentialMechanism(CustomQuery(Domain(-1e6, 1e6), lambda x: x, k, linf=sens,
                                          monotone=monotone), eps=eps)
    g = em.guarantee()
    assert g == BoundedRange(eps)
    rdp = to_rdp(g)
    widest = MP.mpf(0)
    for trial in range(40):
        u = rng.uniform(-3, 3, size=k)
        move = rng.uniform(0, sens, size=k) if monotone else rng.uniform(-sens, sens, size=k)
        if trial % 2 == 0:
            move = np.full(k, sens * (1 - 1e-9))
            if not monotone:
                move[: k // 2] *= -1
        p, p2 = _exact_law(em, u), _exact_law(em, u + move)
        loss = [MP.log(x) - MP.log(y) for x, y in zip(p, p2, strict=True)]
        widest = max(widest, max(loss) - min(loss))
        for a in (1.0, 2.0, 7.5):
            for x, y in ((p, p2), (p2, p)):
                if a == 1:
                    div = MP.fsum(xi * MP.log(xi / yi) for xi, yi in zip(x, y, strict=True))
                else:
                    terms = (xi ** a * yi ** (1 - a) for xi, yi in zip(x, y, strict=True))
                    div = MP.log(MP.fsum(terms)) / (a - 1)
                assert div <= rdp.at(a)
    assert widest <= eps
    assert widest > 0.9 * eps  # the extreme moves approach the range


def test_composition_of_exponential_mechanisms_by_rdp() -> None:
    """k eps-BR steps: the tight RDP curve beats the pure-DP curve and the eps^2/8 zCDP bound."""
    em = BoundedRange(1.0)
    k, delta = 50, 1e-6
    tight = compose([em] * k, method="rdp").epsilon(delta)
    zcdp = compose([to_zcdp(em)] * k).epsilon(delta)
    pure = compose([PureDP(1.0)] * k, method="rdp").epsilon(delta)
    assert tight < zcdp < pure
    assert math.isclose(compose([em] * k, method="rdp").at(2.0), k * bounded_range_renyi(1.0, 2.0),
                        rel_tol=1e-14)


def test_zcdp_ordering_and_serialisation() -> None:
    g = BoundedRange(2.0)
    assert to_zcdp(g) == ZCDP(0.5)
    assert implies(g, PureDP(2.0)) and implies(g, ZCDP(0.5)) and not implies(g, ZCDP(0.49))
    assert not implies(PureDP(2.0), g) and implies(PureDP(1.0), g)
    assert implies(BoundedRange(1.5), g) and not implies(BoundedRange(2.5), g)
    assert guarantee_from_dict(guarantee_to_dict(g)) == g
    # the profile is exact: delta(0) = tanh(eps/4), below pure DP's tanh(eps/2)
    assert math.isclose(g.delta(0.0), math.tanh(0.5), rel_tol=1e-12)
    assert g.epsilon(1e-3) < PureDP(2.0).epsilon(1e-3)
    assert g.delta(2.0) == 0.0 and g.epsilon(0.0) == 2.0


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="eps"):
        BoundedRange(-1.0)
    with pytest.raises(ValueError, match="order"):
        bounded_range_renyi(1.0, 0.5)
    with pytest.raises(ValueError, match="eps_prime"):
        bounded_range_delta(1.0, math.nan)


def test_curve_is_a_sound_envelope_above_pure_dp() -> None:
    """The f-DP curve lies below the curve of the exact profile (its profile is an upper bound on
    delta) and above f_{eps,0} up to the envelope's margins."""
    for eps in (0.3, 2.0):
        g = BoundedRange(eps)
        a = np.linspace(0.0, 1.0, 201)
        assert np.all(g.tradeoff(a) >= PureDP(eps).tradeoff(a) - 1e-12)
        for e1 in (0.0, 0.25 * eps, 0.75 * eps):
            assert g.delta(e1) <= g.tradeoff.profile(e1) <= g.delta(e1) + 1e-5
