"""White-box certification."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import verify
from accountant import FDP, GDP, ZCDP, ApproxDP, Guarantee, PureDP
from accountant.notions.closed_forms import GaussianTradeoff, LaplaceTradeoff
from verify import examples


def test_laplace_pure_claims() -> None:
    c = verify.certify(examples.ScalarLaplace(1.0), PureDP(1.0))
    assert c.holds and 1.0 - 2.0**-15 < c.epsilon <= 1.0  # the lattice Laplace, calibrated to 1-DP
    c = verify.certify(examples.ScalarLaplace(1.0), PureDP(0.99))
    assert not c.holds and c.verdict == "not implied"
    assert verify.certify(examples.ScalarLaplace(1.0), ApproxDP(0.9, 0.05)).holds  # 1 - e^-0.05 < 0.05


def test_gaussian_claims() -> None:
    g = examples.GaussianMechanism(1.0)
    assert verify.certify(g, GDP(1.0)).holds
    assert not verify.certify(g, GDP(0.99)).holds
    eps = GDP(1.0).epsilon(1e-5)
    assert verify.certify(g, ApproxDP(eps, 1e-5)).holds
    assert not verify.certify(g, ApproxDP(eps * 0.99, 1e-5)).holds
    assert verify.certify(g, ZCDP(0.5)).holds


def test_curve_comparison_with_witness() -> None:
    lap = examples.ScalarLaplace(1.0)
    assert verify.certify(lap, GDP(2.0)).holds
    c = verify.certify(lap, GDP(1.0))
    assert not c.holds and c.witness_alpha is not None
    a = c.witness_alpha
    assert LaplaceTradeoff(1.0)(a) < GaussianTradeoff(1.0)(a)


def test_guarantee_and_pld_inputs() -> None:
    assert verify.certify(GDP(0.5), FDP(GaussianTradeoff(0.6))).holds

    class WithPld:
        def guarantee(self) -> Guarantee:
            return PureDP(2.0)

        def pld(self) -> Guarantee:
            return FDP(LaplaceTradeoff(1.0))

    c = verify.certify(WithPld(), PureDP(1.0))
    assert c.holds and "Laplace" in str(c.guarantee)
    d = json.loads(c.to_json())
    assert d["holds"] is True and d["claim"] == "1-DP"
    assert "HOLDS" in str(c)


def test_bad_inputs() -> None:
    with pytest.raises(TypeError, match="guarantee"):
        verify.certify(lambda x, rng: x, PureDP(1.0))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="claim"):
        verify.certify(examples.ScalarLaplace(1.0), 1.0)  # type: ignore[arg-type]

    class Bad:
        def guarantee(self) -> float:
            return 1.0

    with pytest.raises(TypeError, match="guarantee"):
        verify.certify(Bad(), PureDP(1.0))  # type: ignore[arg-type]


@settings(max_examples=25, deadline=None)
@given(st.floats(0.2, 3.0), st.floats(0.2, 3.0))
def test_curve_path_is_sound_for_gdp(mu_m: float, mu_c: float) -> None:
    # the generic curve comparison must never certify a claim the mechanism does not satisfy
    c = verify.certify(FDP(GaussianTradeoff(mu_m)), FDP(GaussianTradeoff(mu_c)))
    if c.holds:
        assert mu_m <= mu_c * (1 + 1e-6)
    if mu_m < mu_c * 0.99:
        assert c.holds


def test_approximation_certifies_nothing() -> None:
    """A CLT GDP is an approximation, not a bound (issue 8): it never certifies a claim."""
    from accountant import CLTGDP

    c = verify.certify(CLTGDP(0.5, gamma=0.01), GDP(1.0))
    assert not c.holds and "approximate" in c.method
    assert verify.certify(GDP(0.5), GDP(1.0)).holds


def test_zcdp_claims_by_parameter() -> None:
    """mu-GDP => mu^2/2-zCDP and eps-DP => eps^2/2-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
    assert verify.certify(GDP(1.0), ZCDP(0.5 + 1e-15)).holds
    assert not verify.certify(GDP(1.0), ZCDP(0.49)).holds
    assert verify.certify(PureDP(1.0), ZCDP(0.5 + 1e-15)).holds
