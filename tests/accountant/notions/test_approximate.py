"""Approximate guarantees (``Approximate``: ``CLTGDP``, ``AsymptoticDP``) never flow into a bound."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from accountant import (
    CLTGDP,
    GDP,
    ApproxDP,
    Approximate,
    AsymptoticDP,
    Guarantee,
    Ledger,
    PureDP,
    calibrate,
    compose,
    implication,
    pld_from_guarantee,
    to_gdp,
    to_rdp,
    to_zcdp,
)
from accountant.compose.ledger import Release
from accountant.notions.guarantees import GUARANTEES
from accountant.notions.ordering import can_be_target

ASYM = AsymptoticDP(1.0, 1e-5, "as n -> infinity")

REFUSING: list[tuple[str, Callable[[Guarantee], Any]]] = [
    ("compose exact", lambda g: compose([g, PureDP(1.0)])),
    ("compose pld", lambda g: compose([g, g], method="pld")),
    ("compose basic", lambda g: compose([g], method="basic")),
    ("compose advanced", lambda g: compose([g, g], method="advanced")),
    ("compose rdp", lambda g: compose([g], method="rdp")),
    ("to_rdp", to_rdp),
    ("to_gdp", to_gdp),
    ("to_zcdp", to_zcdp),
    ("to_approx_dp", lambda g: g.to_approx_dp(1e-6)),
    ("implication as g", lambda g: implication(g, ApproxDP(2.0, 1e-5))),
    ("implication as target", lambda g: implication(PureDP(0.1), g)),
    ("pld", pld_from_guarantee),
    ("ledger record", lambda g: Ledger().record(g)),
    ("ledger budget", lambda g: Ledger(budget=g)),
    ("release", lambda g: Release(g)),
    ("json", GUARANTEES.to_dict),
    ("calibrate", lambda g: calibrate(lambda s: GDP(1.0 / s), g, (0.1, 100.0))),
]


@pytest.mark.parametrize(("name", "path"), REFUSING, ids=[r[0] for r in REFUSING])
def test_asymptotic_refused_everywhere(name: str, path: Callable[[Guarantee], Any]) -> None:
    with pytest.raises((TypeError, ValueError), match=r"asymptotic|approximation|ordering"):
        path(ASYM)


def test_asymptotic_refused_by_clt_composition_too() -> None:
    # the CLT composes CLTGDPs; an asymptotic guarantee is not one
    with pytest.raises(ValueError, match="asymptotic"):
        compose([ASYM, GDP(1.0)], method="clt")


def test_clt_behaviour_kept() -> None:
    g = CLTGDP(1.0, gamma=0.01)
    assert isinstance(g, Approximate) and isinstance(g, GDP)
    assert "rigorous" in g.refusal()
    composed = compose([g, g], method="clt")
    assert isinstance(composed, CLTGDP)
    assert composed.mu == pytest.approx(math.sqrt(2.0))
    for _, path in REFUSING:
        with pytest.raises((TypeError, ValueError)):
            path(g)
    assert not can_be_target(CLTGDP) and not can_be_target(AsymptoticDP)


def test_asymptotic_states_its_claim() -> None:
    # what it states: f_{eps, delta}; the hypothesis is that statement as an ApproxDP, for audits
    assert ASYM.delta(1.0) == pytest.approx(1e-5)
    assert ASYM.delta(math.inf) == 1e-5
    assert ASYM.hypothesis() == ApproxDP(1.0, 1e-5)
    assert "asymptotic" in str(ASYM) and "n -> infinity" in ASYM.refusal()
    assert not isinstance(ASYM, ApproxDP)  # no ApproxDP code path can take it by subtype


@pytest.mark.parametrize(("eps", "delta", "when", "exc"), [
    (math.nan, 1e-5, "x", ValueError), (-1.0, 1e-5, "x", ValueError), (math.inf, 1e-5, "x", ValueError),
    (1.0, 1.0, "x", ValueError), (1.0, -1e-9, "x", ValueError), (1.0, 1e-5, "", TypeError),
    (1.0, 1e-5, 3, TypeError),
])
def test_asymptotic_bad_input(eps: float, delta: float, when: Any, exc: type[Exception]) -> None:
    with pytest.raises(exc, match=r"eps|delta|holds_when"):
        AsymptoticDP(eps, delta, when)
