"""The one ordering of guarantees (issue 9): implies(g, target), sound and extensible."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field as dataclass_field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant import (
    CLTGDP,
    FDP,
    GDP,
    PLD,
    ZCDP,
    ApproxDP,
    FiniteLossTradeoff,
    GaussianTradeoff,
    Guarantee,
    PureDP,
    compose,
    implication,
    implies,
    pure_dp_to_gdp,
)
from accountant.notions.ordering import Implication, register_target


def test_closed_forms() -> None:
    assert implies(GDP(0.5), GDP(0.5)) and not implies(GDP(0.51), GDP(0.5))
    mu = pure_dp_to_gdp(1.0).mu  # tight: eps-DP is exactly mu(eps)-GDP at its kink
    assert implies(PureDP(1.0), GDP(mu)) and not implies(PureDP(1.0), GDP(mu * 0.999))
    assert implies(GDP(1.0), ZCDP(0.5 * (1 + 1e-15))) and not implies(GDP(1.0), ZCDP(0.49))
    assert implies(PureDP(1.0), ZCDP(0.5 * (1 + 1e-15))) and not implies(ApproxDP(1.0, 1e-9), ZCDP(9.0))
    assert implies(GDP(1.0), FDP(GaussianTradeoff(1.0)))


def test_numeric_orderings_use_sound_bounds() -> None:
    run = compose([PureDP(0.1)] * 100)  # exact epsilon(1e-5) = 4.30679...
    assert implies(run, ApproxDP(4.3068, 1e-5)) and not implies(run, ApproxDP(4.3067, 1e-5))
    assert implies(PureDP(0.3), PureDP(0.3)) and not implies(ApproxDP(0.1, 1e-9), PureDP(5.0))
    # a PLD's sound lower curve against G_mu, checked at its knots (a proof: curve - G_mu is
    # concave on each segment)
    pld = PLD.gaussian(1.0).self_compose(4)  # exactly 2-GDP
    # piecewise linear, compared at its knots; the curve is rounded down, so a target touching it
    # (f(0) = 1 for both) is not shown: the targets leave room of 1e-9 in delta
    pure = FDP(FiniteLossTradeoff.approx_dp(1.0))
    assert implies(pure, FDP(FiniteLossTradeoff.approx_dp(1.0, 1e-9)))
    assert implies(pure, FDP(FiniteLossTradeoff.approx_dp(1.2, 1e-9)))
    assert not implies(pure, FDP(FiniteLossTradeoff.approx_dp(0.9, 1e-9)))
    # a numeric bound carries a round-off floor in delta, so it never proves mu-GDP (whose delta
    # vanishes as eps grows): "not shown", with the deciding margin
    verdict = implication(pld, GDP(3.0))
    assert isinstance(verdict, Implication) and not verdict and "margin" in verdict.detail


@settings(max_examples=60, deadline=None)
@given(m1=st.floats(0.1, 3.0), m2=st.floats(0.1, 3.0), eps=st.floats(0.0, 8.0))
def test_implication_is_sound(m1: float, m2: float, eps: float) -> None:
    # whenever g is said to imply the target, g's delta is below the target's at every eps
    if implies(GDP(m1), GDP(m2)):
        assert GDP(m1).delta(eps) <= GDP(m2).delta(eps)
    if implies(PureDP(m1), ApproxDP(m2, 1e-6)):
        assert PureDP(m1).delta(m2) <= 1e-6


def test_approximations_imply_nothing() -> None:
    with pytest.raises(TypeError, match="approximation"):
        implies(CLTGDP(1.0, gamma=0.1), GDP(2.0))
    with pytest.raises(TypeError, match="approximation"):
        implies(GDP(1.0), CLTGDP(2.0, gamma=0.1))
    with pytest.raises(TypeError, match="guarantee"):
        implies(GDP(1.0), 2.0)  # type: ignore[arg-type]


@dataclass(frozen=True)
class _TotalVariation(Guarantee):
    """A toy notion (total variation at most t, i.e. (0, t)-DP), registered from outside."""

    t: float

    def _delta(self, eps: float) -> float:
        return self.t

    @property
    def tradeoff(self) -> FDP:  # type: ignore[override]
        raise NotImplementedError


def test_a_new_target_type_plugs_in_by_registration() -> None:
    @register_target
    def _(target: _TotalVariation, g: Guarantee) -> Implication:
        d = g.delta(0.0)
        return Implication(d <= target.t, f"delta(0) = {d:.3g}")

    assert implies(GDP(0.1), _TotalVariation(0.05)) and not implies(GDP(1.0), _TotalVariation(0.05))


@dataclass(frozen=True)
class CountedGDP(GDP):
    """GDP whose profile evaluations are counted (its epsilon is the base search)."""

    calls: list[float] = dataclass_field(default_factory=list, compare=False, hash=False)

    def _delta(self, eps: float) -> float:
        self.calls.append(eps)
        return super()._delta(eps)


def test_a_failed_delta_decides_without_the_epsilon_search() -> None:
    # epsilon(delta) of GDP is the search over the same profile: once delta(eps) > delta it can
    # only exceed eps, so the verdict is read from one evaluation (calibration fails half its steps)
    g = CountedGDP(1.0)
    verdict = implication(g, ApproxDP(1.0, 1e-5))
    assert not verdict and g.calls == [1.0]
    assert verdict.detail == f"delta = {GDP(1.0).delta(1.0):.6g} > 1e-05 at eps = 1"
    # a guarantee whose epsilon is its own computation still runs it: PureDP names the shortfall
    assert implication(PureDP(2.0), ApproxDP(1.0, 1e-5)).detail.startswith("eps = 1.99999 at delta")


@settings(max_examples=40, deadline=None)
@given(mu=st.floats(0.05, 6.0), eps=st.floats(0.0, 20.0), log_delta=st.floats(-14.0, -0.5))
def test_the_short_verdict_is_the_long_one(mu: float, eps: float, log_delta: float) -> None:
    # the verdict without the search equals the one that also ran it (delta(eps), then epsilon)
    g, delta = GDP(mu), 10.0 ** log_delta
    both = g.delta(eps) <= delta or g.epsilon(delta) <= eps
    assert implies(g, ApproxDP(eps, delta)) == both
