"""Issue 27: every guarantee the mechanism catalogue and the estimators declare is saved by a ledger.

The walk covers every exported ``Mechanism`` (``mechanisms`` and ``mechanisms.estimators``) and the
factories that return one: each is built, its declared ``guarantee()`` recorded in a ledger, the
ledger saved to JSON and reloaded, and the reloaded ledger must report the same spent epsilon. A new
mechanism fails ``test_every_mechanism_is_in_the_walk`` until it is added here.
"""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import mechanisms
import mechanisms.estimators
from accountant import (
    BCDP,
    CLTGDP,
    FDP,
    GDP,
    PLD,
    RDP,
    ApproxDP,
    Approximate,
    CallableTradeoff,
    FiniteLossTradeoff,
    GaussianTradeoff,
    Ledger,
    PureDP,
    compose,
    guarantee_from_dict,
    guarantee_to_dict,
)
from mechanisms import (
    ADist,
    ASamp,
    Count,
    CustomQuery,
    Domain,
    ExponentialQuantile,
    HuberLocation,
    Laplace,
    LogisticRegression,
    Mean,
    Mechanism,
    NoisyThresholdTest,
    RandomizedResponse,
    Sum,
    VectorQuery,
)
from mechanisms.estimators import BCDPLeastSquares


def _dom() -> Domain:
    return Domain(0, 1, n=10)


def _scores() -> CustomQuery:
    return CustomQuery(Domain(-1, 1), lambda x: np.array([0.0, 1.0, 2.0]) + x[0], 3, linf=1.0)


#: One or more instances per exported mechanism (several where the guarantee's type depends on the
#: arguments: lattice or float samplers, a curve or its closed form).
BUILDERS: dict[str, Callable[[], list[Mechanism]]] = {
    "ADist": lambda: [ADist(lambda v: 0.0, lambda v: 3.0, 1.0, 1e-6, integer=True)],
    "ASamp": lambda: [ASamp(lambda v: float(v.sum() > 0), 1.0, 1e-3, q=0.02, m=2000)],
    "AboveThreshold": lambda: [mechanisms.AboveThreshold(_scores(), 0.5, 1.0)],
    "BCDPLeastSquares": lambda: [BCDPLeastSquares.calibrated(BCDP((6.0, 10.0, 10.0), 0.1, 10.0),
                                                             radius=2.0, zeta="paper")],
    "BCDPMean": lambda: [mechanisms.BCDPMean((0.1, 0.5), q=0.2)],
    "DPSGD": lambda: [mechanisms.DPSGD(LogisticRegression(2), 100, 1.0, 0.1, 5)],
    "DiscreteGaussian": lambda: [mechanisms.DiscreteGaussian(Count(_dom()), 2.0),
                                 mechanisms.DiscreteGaussian(Sum(Domain(0, 3, n=10)), 2.0),
                                 mechanisms.DiscreteGaussian(VectorQuery((Count(_dom()), Count(_dom()))),
                                                             2.0)],
    "DiscreteLaplace": lambda: [mechanisms.DiscreteLaplace(Count(_dom()), 2.0),
                                mechanisms.DiscreteLaplace(Sum(Domain(0, 3, n=10)), 2.0)],
    "DuchiL2": lambda: [mechanisms.DuchiL2(1.0, 1.0, 3)],
    "ExponentialMechanism": lambda: [mechanisms.ExponentialMechanism(_scores(), 1.0)],
    "ExponentialQuantile": lambda: [ExponentialQuantile(-2.0, 4.0, 100, 1.0, q=0.5, bins=600)],
    "JointExponentialQuantiles": lambda: [mechanisms.JointExponentialQuantiles(-2.0, 4.0, 100, 1.0,
                                                                              qs=(0.1, 0.5, 0.9))],
    "JointExponentialIQR": lambda: [mechanisms.JointExponentialIQR(-2.0, 4.0, 100, 1.0, bins=600)],
    "Gaussian": lambda: [mechanisms.Gaussian(Mean(_dom()), 1.0),
                         mechanisms.Gaussian(Mean(_dom()), 1.0, sampler="float"),
                         mechanisms.Gaussian.calibrated(Mean(Domain(0, 1, n=100)), GDP(0.5))],
    "Laplace": lambda: [Laplace(Mean(_dom()), 1.0), Laplace(Mean(_dom()), 1.0, sampler="float")],
    "NoisyGD": lambda: [mechanisms.NoisyGD(HuberLocation(), 100, 1.0, 5, step=1.0)],
    "NoisyNewton": lambda: [mechanisms.NoisyNewton(HuberLocation(), 100, 1.0, 5, step=1.0)],
    "PTRMedian": lambda: [mechanisms.PTRMedian(0.0, 1.0, 100, 1.0, 1e-6, 0.01, q=0.5)],
    "Peeling": lambda: [mechanisms.Peeling(_scores(), 2, 1.0, 1e-5)],
    "Pipeline": lambda: [mechanisms.Pipeline((Laplace(Mean(_dom()), 1.0), RandomizedResponse(2, 1.0)))],
    "PrivateMax": lambda: [mechanisms.PrivateMax(_scores(), 1.0)],
    "ProposeTestRelease": lambda: [mechanisms.ProposeTestRelease(
        lambda v: 3.0, Laplace(Mean(_dom()), 1.0), NoisyThresholdTest(1.0, 5.0), release_delta=0.0)],
    "RandomizedResponse": lambda: [RandomizedResponse(3, 1.0)],
    "ReportNoisyMax": lambda: [mechanisms.ReportNoisyMax(_scores(), 1.0)],
    "ScaleIQR": lambda: [mechanisms.ScaleIQR(1.0, 1e-6)],
    "AdaptiveVariance": lambda: [mechanisms.AdaptiveVariance(-2.0, 4.0, 1.0, "add_remove")],
    "AdaptiveMean": lambda: [mechanisms.AdaptiveMean(-2.0, 4.0, 1.0, 100),
                             mechanisms.AdaptiveMean(-2.0, 4.0, 1.0, adjacency="add_remove")],
    "SmoothSensitivityMedian": lambda: [mechanisms.SmoothSensitivityMedian(0.0, 1.0, 100, 1.0, 1e-6, q=0.5)],
    "SmoothLLNQuantile": lambda: [mechanisms.SmoothLLNQuantile(0.0, 1.0, 100, 0.5, q=0.5),
                                  mechanisms.SmoothLLNQuantile(0.0, 1.0, 100, 0.5, law="arsinh-normal")],
    "SmoothLaplaceQuantile": lambda: [mechanisms.SmoothLaplaceQuantile(0.0, 1.0, 100, 1.0, 1e-6, q=0.5)],
    "Staircase": lambda: [mechanisms.Staircase(Mean(_dom()), 1.0)],
    "SmoothLLNTrimmedMean": lambda: [mechanisms.SmoothLLNTrimmedMean(0.0, 1.0, 100, 0.5, trim=10),
                                     mechanisms.SmoothLLNTrimmedMean(0.0, 1.0, 100, 0.5,
                                                                     law="arsinh-normal")],
    "AdaptivePTRMedian": lambda: [mechanisms.AdaptivePTRMedian(0.0, 1.0, 100, 1.0, 1e-6)],
    "SparseMean": lambda: [mechanisms.SparseMean(1.0, 50, 100, 3, 1.0, 1e-6)],
    "SmoothSensitivityVector": lambda: [mechanisms.coordinate_quantile_release(0.0, 1.0, 100, 3, 1.0, 1e-6)],
    "WinsorisedMean": lambda: [mechanisms.WinsorisedMean(-2.0, 4.0, 100, 1.0)],
    "LocalGradientRandomiser": lambda: [mechanisms.LocalGradientRandomiser(1, 1.0, 2.0),
                                        mechanisms.LocalGradientRandomiser(3, 1.0, 2.0)],
    "LocalNoisyGD": lambda: [mechanisms.LocalNoisyGD(HuberLocation(), 100, 1.0, 5, step=1.0)],
    "SubsampleAndAggregate": lambda: [mechanisms.SubsampleAndAggregate(
        np.mean, 10, ExponentialQuantile(-2.0, 4.0, 10, 1.0))],
    "TruncatedMean": lambda: [mechanisms.TruncatedMean(1.0, 5, 100, 1.0, 1e-6)],
    # factories returning a mechanism
    "calibrated": lambda: [mechanisms.calibrated(Mean(_dom()), PureDP(1.0)),
                           mechanisms.calibrated(Mean(_dom()), GDP(1.0), noise="gaussian")],
    "clipped_count": lambda: [mechanisms.clipped_count(Domain(0, 1, adjacency="add_remove"), PureDP(1.0))],
    "clipped_mean": lambda: [mechanisms.clipped_mean(_dom(), PureDP(1.0))],
    "clipped_sum": lambda: [mechanisms.clipped_sum(_dom(), PureDP(1.0))],
    "clipped_variance": lambda: [mechanisms.clipped_variance(_dom(), PureDP(1.0))],
    "compose_mechanisms": lambda: [mechanisms.compose_mechanisms([Laplace(Mean(_dom()), 1.0),
                                                                  RandomizedResponse(2, 1.0)])],
    "trimmed_mean_aggregator": lambda: [mechanisms.estimators.trimmed_mean_aggregator(0.0, 1.0, 20, 0.1,
                                                                                      PureDP(1.0))],
    "noisy_histogram": lambda: [mechanisms.noisy_histogram(_dom(), PureDP(1.0), edges=(0.0, 0.5, 1.0))],
}

#: Deltas the spent epsilon is compared at (the estimators' own deltas reach 1e-3).
DELTAS = (1e-2, 1e-6)


def _exports() -> dict[str, Any]:
    out = {}
    for pkg in (mechanisms, mechanisms.estimators):
        for name in pkg.__all__:
            out[name] = getattr(pkg, name)
    return out


def _returns_mechanism(obj: Any) -> bool:
    if not inspect.isfunction(obj):
        return False
    ret = inspect.signature(obj).return_annotation
    return isinstance(ret, str) and ret.split(".")[-1] in {"Mechanism", "Pipeline"}


#: Mechanisms whose declared guarantee is not a bound (an ``accountant.Approximate``): a ledger must
#: refuse them, and does (``test_approximate_guarantees_are_refused_by_the_ledger``).
NOT_BOUNDS: dict[str, Callable[[], list[Mechanism]]] = {
    "OneShotMEstimator": lambda: [mechanisms.OneShotMEstimator(HuberLocation(), 100, 1.0, 1e-5)],
}


def test_every_mechanism_is_in_the_walk() -> None:
    wanted = {name for name, obj in _exports().items()
              if (isinstance(obj, type) and issubclass(obj, Mechanism) and not inspect.isabstract(obj))
              or _returns_mechanism(obj)}
    assert wanted - set(BUILDERS) - set(NOT_BOUNDS) == set(), "add the new mechanisms to BUILDERS"
    assert {"calibrated", "noisy_histogram", "compose_mechanisms", "Pipeline", "DPSGD"} <= wanted


def _count(g: Any) -> int:
    return 1 if isinstance(g, BCDP) else 2  # BCDP guarantees do not compose (compose refuses them)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_declared_guarantee_survives_a_saved_ledger(name: str) -> None:
    for mech in BUILDERS[name]():
        g = mech.guarantee()
        ledger = Ledger()
        ledger.record(g, count=_count(g), label=name)
        text = ledger.to_json()
        json.loads(text)  # plain JSON
        assert len(text) < 20_000, f"{name}: {len(text)} bytes (a curve stored atom by atom?)"
        again = Ledger.from_json(text)
        assert type(again.releases[0].guarantee) is type(g)
        for delta in DELTAS:
            assert again.spent_epsilon(delta) == ledger.spent_epsilon(delta), (name, g, delta)


@pytest.mark.parametrize("name", sorted(NOT_BOUNDS))
def test_approximate_guarantees_are_refused_by_the_ledger(name: str) -> None:
    for mech in NOT_BOUNDS[name]():
        g = mech.guarantee()
        assert isinstance(g, Approximate)
        with pytest.raises(ValueError, match="not a bound"):
            Ledger().record(g, label=name)
        with pytest.raises(TypeError, match="asymptotic"):
            guarantee_to_dict(g)


def test_the_issue_example() -> None:
    """The issue's example: a calibrated Gaussian's exact (discrete Gaussian curve) guarantee."""
    g = mechanisms.Gaussian.calibrated(Mean(Domain(0, 1, n=100)), GDP(0.5)).guarantee()
    assert isinstance(g, FDP) and isinstance(g.tradeoff, FiniteLossTradeoff)
    ledger = Ledger()
    ledger.record(g, count=3)
    again = Ledger.from_json(ledger.to_json())
    assert again.spent_epsilon(1e-5) == ledger.spent_epsilon(1e-5)
    assert math.isfinite(again.spent_epsilon(1e-5))


def test_curves_round_trip_exactly() -> None:
    for f in (GaussianTradeoff(0.7), FiniteLossTradeoff.discrete_laplace(3.0, 2),
              FiniteLossTradeoff.randomized_response(1.0, 3), FiniteLossTradeoff.approx_dp(1.0, 1e-6),
              FiniteLossTradeoff.discrete_gaussian(7.5, 2),
              FiniteLossTradeoff.randomized_response(1.0, 3).inverse(),  # no recipe: its atoms
              GaussianTradeoff(1.0).lower_envelope()):
        g = FDP(f)
        back = guarantee_from_dict(json.loads(json.dumps(guarantee_to_dict(g))))
        assert isinstance(back, FDP) and type(back.tradeoff) is type(f)
        eps = np.linspace(0.0, 3.0, 13)
        assert np.array_equal(back.delta(eps), g.delta(eps))


def test_an_approx_dp_recipe_is_stored_in_one_form_whatever_the_caller_passed() -> None:
    """The recipe of ``FiniteLossTradeoff.approx_dp`` holds the validated floats, the form in which
    ``ApproxDP`` itself is stored: one JSON text for 3, 3.0 and numpy scalars, in either call order
    (the curve cache keys 3 and 3.0 alike: a recipe keeping the caller's type would depend on which
    caller came first), -0.0 stored as 0.0, and the JSON rebuilds the same curve."""
    for eps, forms in ((3, (3, 3.0, np.int64(3), np.float64(3.0), np.float32(3.0))),
                       (5, (np.float32(5.0), np.float64(5.0), np.int64(5), 5.0, 5))):
        texts = {json.dumps(guarantee_to_dict(FDP(FiniteLossTradeoff.approx_dp(e, d))))
                 for e in forms for d in (0, 0.0, np.int64(0), -0.0)}
        assert texts == {json.dumps({"type": "FDP", "curve": {"type": "finite_loss",
                                                              "recipe": ["approx_dp", float(eps), 0.0]}})}
        stored = guarantee_to_dict(ApproxDP(eps, 0))
        assert stored["eps"] == eps and type(stored["eps"]) is float
        back = guarantee_from_dict(json.loads(texts.pop()))
        grid = np.linspace(0.0, 6.0, 13)
        assert isinstance(back, FDP)
        assert np.array_equal(back.delta(grid), FDP(FiniteLossTradeoff.approx_dp(eps, 0)).delta(grid))
    assert json.dumps(FiniteLossTradeoff.approx_dp(-0.0, 0.25).recipe) == '["approx_dp", 0.0, 0.25]'


def test_a_pld_of_curves_round_trips() -> None:
    g = compose([FDP(FiniteLossTradeoff.randomized_response(1.0)), GDP(0.5)], method="pld")
    assert isinstance(g, PLD)
    back = guarantee_from_dict(json.loads(json.dumps(guarantee_to_dict(g))))
    assert back.epsilon(1e-6) == g.epsilon(1e-6)


def _my_curve(a: Any) -> Any:
    return np.maximum(0.0, 1.0 - 2.0 * np.asarray(a))


@pytest.mark.parametrize("g, words", [
    (FDP(_my_curve), ("Python function", "lower_envelope()")),
    (FDP(compose([PureDP(0.1)] * 5, method="advanced").tradeoff), ("Python function", "lower_envelope()")),
    (RDP.from_curve(lambda a: 0.5 * a), ("tabulate", "orders")),
    (CLTGDP(1.0, 0.01), ("approximation", "bound")),
])
def test_what_cannot_be_stored_says_why_and_what_to_do(g: Any, words: tuple[str, ...]) -> None:
    with pytest.raises(TypeError) as info:
        guarantee_to_dict(g)
    msg = str(info.value)
    assert all(w in msg for w in words), msg
    assert "<function" not in msg and "0x" not in msg, msg


def test_the_advice_works() -> None:
    """``FDP(f.lower_envelope())`` of a user's curve is stored, and is a sound (weaker) guarantee."""
    g = FDP(_my_curve)
    assert isinstance(g.tradeoff, CallableTradeoff)
    stored = FDP(g.tradeoff.lower_envelope())
    back = guarantee_from_dict(json.loads(json.dumps(guarantee_to_dict(stored))))
    assert back.epsilon(1e-6) >= g.epsilon(1e-6) - 1e-9
