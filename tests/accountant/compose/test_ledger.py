"""Ledger: budget filter, reports, JSON round-trip."""

from __future__ import annotations

import math

import pytest

from accountant import (
    GDP,
    PLD,
    ZCDP,
    ApproxDP,
    BudgetExceededError,
    Ledger,
    PureDP,
    subsample,
)


def test_refuses_over_budget_release_and_stays_unchanged() -> None:
    ledger = Ledger(budget=ApproxDP(1.0, 1e-6))
    ledger.record(GDP(0.1), count=3, label="counts")
    before = ledger.spent_epsilon(1e-6)
    with pytest.raises(BudgetExceededError, match="exceed"):
        ledger.record(GDP(0.5), label="too much")
    assert len(ledger) == 1
    assert ledger.spent_epsilon(1e-6) == before
    # the composed value decides: GDP(sqrt(0.03 + x^2)) at delta 1e-6 must stay <= 1
    ledger.record(GDP(0.1), label="small")
    assert ledger.spent_epsilon(1e-6) <= 1.0


def test_budget_in_gdp_and_zcdp() -> None:
    # 0.75^2 + 1^2 = 1.25^2 exactly in binary (0.6 and 0.8 as doubles compose to just above 1)
    g = Ledger(budget=GDP(1.25))
    g.record(GDP(0.75))
    g.record(GDP(1.0))
    assert g.spent_gdp_mu() == pytest.approx(1.25)
    with pytest.raises(BudgetExceededError):
        g.record(GDP(0.01))
    z = Ledger(budget=ZCDP(0.5))
    z.record(ZCDP(0.2), count=2)
    assert z.spent_zcdp_rho() == pytest.approx(0.4)
    with pytest.raises(BudgetExceededError):
        z.record(ZCDP(0.2))


def test_reports_every_notion_that_applies() -> None:
    ledger = Ledger()
    ledger.record(PureDP(0.5), count=2)
    rep = ledger.report(1e-6)
    assert rep["pure_eps"] == pytest.approx(1.0)
    assert rep["zcdp_rho"] == pytest.approx(0.25)
    assert rep["epsilon"] <= 1.0 + 1e-9
    ledger.record(subsample(GDP(1.0), rate=0.02), count=50, label="dp-sgd")
    rep = ledger.report(1e-6)
    lo, up = rep["epsilon_bracket"]
    assert lo <= up == rep["epsilon"]
    assert "pure_eps" not in rep


def test_json_round_trip() -> None:
    ledger = Ledger(budget=ApproxDP(3.0, 1e-6))
    ledger.record(GDP(0.3), count=2, label="a")
    ledger.record(subsample(GDP(1.0), rate=0.01), count=100, label="sgd")
    ledger.record(PLD.laplace(5.0), label="lap")
    ledger.record(subsample(PureDP(1.0), rate=0.1), label="sub-pure")
    text = ledger.to_json()
    back = Ledger.from_json(text)
    assert back.to_json() == text
    assert [r.label for r in back.releases] == ["a", "sgd", "lap", "sub-pure"]
    assert back.spent_epsilon(1e-6) == pytest.approx(ledger.spent_epsilon(1e-6), rel=1e-12)
    assert isinstance(back.budget, ApproxDP) and back.budget.delta_ == 1e-6


def test_validation() -> None:
    with pytest.raises(TypeError, match="budget"):
        Ledger(budget="1.0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="count"):
        Ledger().record(GDP(1.0), count=0)
    ledger = Ledger()
    ledger.record(PLD.from_pmfs([0.5, 0.5], [0.4, 0.6]))
    with pytest.raises(TypeError, match="serialise"):
        ledger.to_json()
    assert math.isfinite(ledger.spent_epsilon(1e-3))
