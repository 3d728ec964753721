"""One privacy-loss model per mechanism family: the discrete Laplace mechanism, its pair and its
PLD read the accountant's ``FiniteLossTradeoff.discrete_laplace``; the discrete Gaussian mechanism
and ``DiscreteGaussianPair`` read ``FiniteLossTradeoff.discrete_gaussian`` (different windows)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from accountant import FDP, PLD, DiscreteGaussianPair, DiscreteLaplacePair, FiniteLossTradeoff
from mechanisms import CustomQuery, DiscreteGaussian, DiscreteLaplace, Domain


@pytest.mark.parametrize(("scale", "shift"), [(1.0, 1), (2.5, 1), (0.7, 4)])
def test_discrete_laplace_model_is_written_once(scale: float, shift: int) -> None:
    f = FiniteLossTradeoff.discrete_laplace(scale, shift)
    q = CustomQuery(Domain(0, 1, adjacency="add_remove"), lambda x: np.array([float(x.size)]), l1=shift)
    g = DiscreteLaplace(q, scale).guarantee()
    assert isinstance(g, FDP) and isinstance(g.tradeoff, FiniteLossTradeoff)
    assert np.array_equal(g.tradeoff.losses, f.losses) and np.array_equal(g.tradeoff.q_masses, f.q_masses)
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


@pytest.mark.parametrize(("sigma", "shift"), [(1.0, 1), (2.5, 2), (0.8, 3)])
def test_discrete_gaussian_model_is_written_once(sigma: float, shift: int) -> None:
    """The mechanism's 40-sigma curve and the pair's 13-sigma PLD agree (within the pair's bracket
    and its e^-84 tail charge)."""
    q = CustomQuery(Domain(0, 1, adjacency="add_remove"), lambda x: np.array([float(x.size)]), l2=shift)
    g = DiscreteGaussian(q, sigma).guarantee()
    assert isinstance(g, FDP) and isinstance(g.tradeoff, FiniteLossTradeoff)
    pld = PLD.from_pair(DiscreteGaussianPair(sigma, shift))
    for eps in (0.0, 0.5, 2.0):
        lo, hi = pld.delta_bracket(eps)
        assert lo - 1e-12 <= g.delta(eps) <= hi + 1e-12
