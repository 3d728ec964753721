"""Issue 9, step 3: a new guarantee type plugs in by registration, without editing the library.

The toy notion is total variation: TV(t) bounds |P(S) - Q(S)| by t, i.e. (0, t)-DP, whose curve is
f_{0,t}; k releases compose exactly to 1 - prod(1 - t_i) (Kairouz, Oh & Viswanath 2015 at eps = 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import pytest

from accountant import (
    FiniteLossTradeoff,
    Guarantee,
    Implication,
    Ledger,
    PureDP,
    compose,
    guarantee_from_dict,
    guarantee_to_dict,
    implies,
    register_composition,
    register_guarantee,
    register_target,
)


@dataclass(frozen=True)
class TotalVariation(Guarantee):
    t: float

    @cached_property
    def tradeoff(self) -> FiniteLossTradeoff:
        return FiniteLossTradeoff.approx_dp(0.0, self.t)

    def _delta(self, eps: float) -> float:
        return self.tradeoff.profile(eps)


register_guarantee(TotalVariation)
register_composition(TotalVariation,
                     lambda gs: TotalVariation(1.0 - math.prod(1.0 - g.t for g in gs)))


@register_target
def _(target: TotalVariation, g: Guarantee) -> Implication:
    d = g.delta(0.0)  # a sound upper bound on the total variation of g's pairs
    return Implication(d <= target.t, f"total variation {d:.4g}")


def test_compose_uses_the_registered_closed_form() -> None:
    out = compose([TotalVariation(0.1), TotalVariation(0.2)])
    assert isinstance(out, TotalVariation) and out.t == pytest.approx(0.28, abs=1e-15)
    # mixed with another notion it falls back to the numeric PLD of its (registered) curve
    mixed = compose([TotalVariation(0.1), PureDP(0.5)])
    assert mixed.delta(0.5) >= TotalVariation(0.1).delta(0.5)


def test_ledger_serialises_and_orders_the_new_type() -> None:
    ledger = Ledger(budget=TotalVariation(0.3))
    ledger.record(TotalVariation(0.1), count=2, label="tv")
    with pytest.raises(ValueError, match="total variation"):
        ledger.record(TotalVariation(0.2), label="too much")
    back = Ledger.from_json(ledger.to_json())
    assert isinstance(back.budget, TotalVariation) and len(back) == 1
    assert guarantee_from_dict(guarantee_to_dict(TotalVariation(0.05))) == TotalVariation(0.05)
    assert implies(PureDP(0.1), TotalVariation(0.05))  # TV of 0.1-DP is tanh(0.05) = 0.04996
    assert not implies(PureDP(0.2), TotalVariation(0.05))


def test_unregistered_types_say_how_to_register() -> None:
    @dataclass(frozen=True)
    class Unknown(TotalVariation):
        pass

    with pytest.raises(TypeError, match="register_guarantee"):
        guarantee_to_dict(Unknown(0.1))
    with pytest.raises(ValueError, match="unknown guarantee type"):
        guarantee_from_dict({"type": "Nope"})
