"""Hypothesis properties of trade-off functions, guarantees, conversions and composition."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant import (
    FDP,
    GDP,
    ZCDP,
    ApproxDP,
    FiniteLossTradeoff,
    GaussianTradeoff,
    Guarantee,
    LaplaceTradeoff,
    Method,
    PiecewiseLinearTradeoff,
    PureDP,
    TradeoffFunction,
    compose,
    pure_dp_to_gdp,
)
from accountant.notions.tradeoff import check_tradeoff_values, default_alpha_grid

eps_st = st.floats(min_value=0.01, max_value=5.0)
mu_st = st.floats(min_value=0.05, max_value=6.0)
delta_st = st.floats(min_value=1e-10, max_value=0.3)


@st.composite
def convex_curves(draw: st.DrawFn) -> PiecewiseLinearTradeoff:
    """Random convex trade-off curves: knots from sorted random slopes."""
    n = draw(st.integers(min_value=1, max_value=8))
    slopes = sorted(draw(st.lists(st.floats(min_value=-20.0, max_value=-0.01), min_size=n, max_size=n)))
    widths = np.array(draw(st.lists(st.floats(min_value=0.01, max_value=1.0), min_size=n, max_size=n)))
    widths = widths / widths.sum()
    alphas = np.concatenate([[0.0], np.cumsum(widths)])
    alphas[-1] = 1.0
    drops = -np.array(slopes) * widths
    betas = np.concatenate([[0.0], np.cumsum(drops[::-1])])[::-1]
    scale = min(1.0, float(np.min((1.0 - alphas[:-1]) / np.maximum(betas[:-1], 1e-300))))
    return PiecewiseLinearTradeoff(alphas, betas * scale)


@st.composite
def tradeoffs(draw: st.DrawFn) -> TradeoffFunction:
    kind = draw(st.sampled_from(["gauss", "laplace", "approx", "rr", "pwl"]))
    if kind == "gauss":
        return GaussianTradeoff(draw(mu_st))
    if kind == "laplace":
        return LaplaceTradeoff(draw(eps_st))
    if kind == "approx":
        return FiniteLossTradeoff.approx_dp(draw(eps_st), draw(delta_st))
    if kind == "rr":
        return FiniteLossTradeoff.randomized_response(draw(eps_st), draw(st.integers(2, 10)))
    return draw(convex_curves())


@st.composite
def guarantees(draw: st.DrawFn) -> Guarantee:
    kind = draw(st.sampled_from(["pure", "approx", "gdp", "zcdp", "laplace", "pwl"]))
    if kind == "pure":
        return PureDP(draw(eps_st))
    if kind == "approx":
        return ApproxDP(draw(eps_st), draw(delta_st))
    if kind == "gdp":
        return GDP(draw(mu_st))
    if kind == "zcdp":
        return ZCDP(draw(st.floats(min_value=0.001, max_value=5.0)))
    if kind == "laplace":
        return FDP(LaplaceTradeoff(draw(eps_st)))
    return FDP(draw(convex_curves()))


GRID = default_alpha_grid(n_linear=401, n_log=60)


@settings(max_examples=60, deadline=None)
@given(tradeoffs())
def test_every_curve_and_derived_curve_is_a_tradeoff_function(f: TradeoffFunction) -> None:
    for g in [f, f.inverse(), f.symmetrize(), f.lower_envelope()]:
        check_tradeoff_values(GRID, g(GRID))


@settings(max_examples=60, deadline=None)
@given(tradeoffs())
def test_lower_envelope_is_below_and_profile_above(f: TradeoffFunction) -> None:
    env = f.lower_envelope()
    assert (env(GRID) <= f(GRID) + 1e-12).all()
    eps = np.linspace(-2.0, 8.0, 41)
    assert (env.profile(eps) >= f.profile(eps) - 1e-12).all()


@settings(max_examples=60, deadline=None)
@given(tradeoffs(), st.floats(min_value=-3.0, max_value=6.0))
def test_profile_is_the_conjugate_sup(f: TradeoffFunction, eps: float) -> None:
    # delta(eps) = sup_a 1 - f(a) - e^eps a: a grid sup is a lower bound and must come close.
    a = np.concatenate([GRID, np.linspace(0, 1, 20001)])
    grid_sup = float(np.max(1.0 - f(a) - math.exp(eps) * a))
    d = f.profile(eps)
    assert d >= grid_sup - 1e-12
    assert d <= grid_sup + 2e-3 * math.exp(max(eps, 0.0))


@settings(max_examples=80, deadline=None)
@given(guarantees(), st.floats(min_value=1e-9, max_value=0.5))
def test_epsilon_inverts_delta_and_is_never_optimistic(g: Guarantee, delta: float) -> None:
    eps = g.epsilon(delta)
    if math.isinf(eps):
        assert g.delta(1e6) > delta
        return
    assert g.delta(eps) <= delta  # never optimistic
    if eps > 1e-6:  # and tight: slightly smaller eps no longer reaches delta
        assert g.delta(eps * (1 - 1e-6)) > delta * (1 - 1e-9)


@settings(max_examples=60, deadline=None)
@given(guarantees(), st.floats(min_value=0.0, max_value=10.0), st.floats(min_value=0.0, max_value=10.0))
def test_delta_is_non_increasing_in_eps(g: Guarantee, e1: float, e2: float) -> None:
    lo, hi = sorted([e1, e2])
    assert g.delta(hi) <= g.delta(lo) + 1e-15


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=0.01, max_value=5.0), st.floats(min_value=0.01, max_value=5.0),
       st.floats(min_value=0.0, max_value=8.0))
def test_conversions_are_monotone(a: float, b: float, eps: float) -> None:
    lo, hi = sorted([a, b])
    assert pure_dp_to_gdp(lo).mu <= pure_dp_to_gdp(hi).mu
    assert GDP(lo).delta(eps) <= GDP(hi).delta(eps) + 1e-15
    assert ZCDP(lo).epsilon(1e-6) <= ZCDP(hi).epsilon(1e-6) + 1e-9
    assert PureDP(lo).delta(eps) <= PureDP(hi).delta(eps) + 1e-15


@settings(max_examples=40, deadline=None)
@given(st.floats(min_value=0.01, max_value=4.0))
def test_pure_dp_to_gdp_is_valid_and_tight(eps: float) -> None:
    mu = pure_dp_to_gdp(eps).mu
    a = np.linspace(0, 1, 2001)
    assert (GaussianTradeoff(mu)(a) <= PureDP(eps).tradeoff(a) + 1e-12).all()
    a_star = 1 / (1 + math.exp(eps))
    assert GaussianTradeoff(mu * (1 - 1e-6))(a_star) > PureDP(eps).tradeoff(a_star)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 1.0), st.floats(0.0, 1e-4)), min_size=2, max_size=8),
       st.randoms(use_true_random=False))
def test_composition_is_order_invariant(pairs: list[tuple[float, float]], rnd: object) -> None:
    gs: list[Guarantee] = [ApproxDP(e, d) if d > 0 else PureDP(e) for e, d in pairs]
    shuffled = list(gs)
    shuffled.reverse()
    methods: list[Method] = ["exact", "basic", "advanced", "clt"]
    for method in methods:
        if method == "clt" and any(isinstance(g, ApproxDP) for g in gs):
            continue
        a = compose(gs, method=method)
        b = compose(shuffled, method=method)
        for t in [0.1, 1.0, 3.0]:
            assert math.isclose(a.delta(t), b.delta(t), rel_tol=1e-9, abs_tol=1e-15)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from([0.01, 0.05, 0.1, 0.3, 0.5, 1.0]), min_size=1, max_size=3),
       st.integers(1, 30),
       st.floats(min_value=1e-9, max_value=1e-2))
def test_exact_composition_never_looser_than_advanced(eps_list: list[float], reps: int,
                                                      delta: float) -> None:
    once: list[Guarantee] = [PureDP(e) for e in eps_list]
    gs = once * reps
    exact = compose(gs).epsilon(delta)
    assert exact <= compose(gs, method="advanced").epsilon(delta) + 1e-12
    assert exact <= compose(gs, method="basic").epsilon(delta) + 1e-12
    assert exact <= compose(gs, method="rdp").epsilon(delta) + 1e-9


@settings(max_examples=30, deadline=None)
@given(st.lists(mu_st, min_size=1, max_size=10))
def test_gdp_composition_is_root_sum_of_squares(mus: list[float]) -> None:
    g = compose([GDP(m) for m in mus])
    assert isinstance(g, GDP)
    assert math.isclose(g.mu, math.sqrt(sum(m * m for m in mus)), rel_tol=1e-12)
