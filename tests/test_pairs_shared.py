"""One privacy-loss model per mechanism family: the discrete Laplace mechanism, its pair and its
PLD read the accountant's ``FiniteLossTradeoff.discrete_laplace``."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accountant import FDP, PLD, DiscreteLaplacePair, FiniteLossTradeoff
from mechanisms import CustomQuery, DiscreteLaplace, Domain, discrete_laplace_tradeoff


@pytest.mark.parametrize(("scale", "shift"), [(1.0, 1), (2.5, 1), (0.7, 4)])
def test_discrete_laplace_model_is_written_once(scale: float, shift: int) -> None:
    f = FiniteLossTradeoff.discrete_laplace(scale, shift)
    m = discrete_laplace_tradeoff(shift, scale)
    assert np.array_equal(m.losses, f.losses) and np.array_equal(m.q_masses, f.q_masses)
    q = CustomQuery(Domain(0, 1, adjacency="add_remove"), lambda x: np.array([float(x.size)]), l1=shift)
    g = DiscreteLaplace(q, scale).guarantee()
    pld = PLD.from_pair(DiscreteLaplacePair(scale, shift))
    for eps in (0.0, 0.3 / scale, (shift - 0.5) / scale):
        lo, hi = pld.delta_bracket(eps)
        assert lo - 1e-12 <= g.delta(eps) <= hi + 1e-12


def test_discrete_laplace_closed_form() -> None:
    """Shift 1: losses +-1/b with Q-masses 1/(1+r), r/(1+r), r = e^-1/b, so delta(0) = (1-r)/(1+r)
    [@canonne2020discrete]."""
    for b in (0.5, 1.0, 4.0):
        r = math.exp(-1.0 / b)
        g = FDP(FiniteLossTradeoff.discrete_laplace(b, 1))
        assert g.delta(0.0) == pytest.approx((1 - r) / (1 + r), rel=1e-12)
        assert g.epsilon(0.0) == pytest.approx(1.0 / b, rel=1e-9)
