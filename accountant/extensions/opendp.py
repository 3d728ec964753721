"""OpenDP measurements: a measurement's privacy map read as a dpcert guarantee.

An OpenDP ``Measurement`` declares its privacy by a map from an input distance ``d_in`` to an output
distance in its output measure. ``from_opendp(measurement, d_in)`` evaluates the map and turns its
value into the guarantee of that measure: ``MaxDivergence`` -> ``PureDP``, ``ZeroConcentratedDivergence``
-> ``ZCDP``, ``Approximate(MaxDivergence)`` -> ``ApproxDP`` (or ``PureDP`` when delta = 0),
``SmoothedMaxDivergence`` (a privacy profile) -> ``FDP`` of the profile's trade-off curve
[@dong2022gaussian, Prop. 2.12], ``RenyiDivergence`` -> ``RDP`` at a fixed set of orders. OpenDP
(0.16) exposes no f-DP measure; other measures (user-defined divergences, approximate zCDP with
delta > 0) are refused with a ValueError naming them.

OpenDP is not imported: the measure is read by its name, so importing the accountant never loads
it. Each measure is translated by a function registered with ``register_opendp_measure``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from accountant.core.validation import check_real
from accountant.notions.guarantees import FDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP
from accountant.notions.tradeoff import ProfileTradeoff

#: A translator: the map's value (d_out) to a guarantee.
Translator = Callable[[Any], Guarantee]

_MEASURES: dict[str, Translator] = {}

#: The deltas at which a privacy profile's epsilon is read (1, 2 and 5 times 10^-k, k = 1..15),
#: written as decimal literals so that a user's delta of 1e-5 is one of them exactly.
PROFILE_DELTAS: tuple[float, ...] = tuple(sorted(
    (float(f"{m}e-{k}") for k in range(1, 16) for m in (1, 2, 5)), reverse=True))
#: Points of the profile read on a uniform eps grid from 0 to its eps at the smallest delta.
PROFILE_LINEAR_POINTS = 200
#: The Renyi orders at which a ``RenyiDivergence`` map is read.
RDP_ORDERS: tuple[float, ...] = (1.25, 1.5, 1.75, *(float(a) for a in range(2, 64)), 80.0, 96.0, 128.0,
                                 256.0, 512.0)


def register_opendp_measure(name: str) -> Callable[[Translator], Translator]:
    """Register the translation of an OpenDP output measure, by its name as ``str(measure)`` shows
    it (e.g. ``"MaxDivergence"``, ``"Approximate(MaxDivergence)"``)."""
    def deco(fn: Translator) -> Translator:
        _MEASURES[name] = fn
        return fn
    return deco


def measure_name(measure: Any) -> str:
    """The name of an OpenDP measure, ``Approximate<M>`` written as ``Approximate(M)`` whatever the
    OpenDP version."""
    return str(measure).replace("<", "(").replace(">", ")").replace(" ", "")


def from_opendp(measurement: Any, d_in: Any) -> Guarantee:
    """The dpcert guarantee an OpenDP measurement declares for inputs at distance ``d_in`` (in the
    measurement's ``input_metric``): its privacy map's value read in its output measure.

    The guarantee is what OpenDP declares (its map is trusted, as a declaration is); audit the
    measurement (``verify.adapters.OpenDPMeasurement``) to test it.

    >>> import opendp.prelude as dp
    >>> dp.enable_features("contrib")
    >>> space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    >>> from_opendp(dp.m.make_laplace(*space, scale=2.0), 1.0)
    PureDP(eps=0.5)
    >>> from_opendp(dp.m.make_gaussian(*space, scale=2.0), 1.0)
    ZCDP(rho=0.125)
    """
    measure = getattr(measurement, "output_measure", None)
    if measure is None or not callable(getattr(measurement, "map", None)):
        raise TypeError("measurement must be an OpenDP Measurement (with .map and .output_measure), "
                        f"got {type(measurement).__name__}")
    name = measure_name(measure)
    if name not in _MEASURES:
        kind = measure_name(getattr(measure, "type", name))
        shown = name if kind == name else f"{name} ({kind})"
        raise ValueError(f"OpenDP output measure {shown} is not supported by from_opendp (supported: "
                         f"{', '.join(sorted(_MEASURES))})")
    try:
        d_out = measurement.map(d_in)
    except Exception as exc:
        msg = " ".join(str(exc).split())
        raise ValueError(f"d_in = {d_in!r}: the measurement's privacy map refused it "
                         f"({type(exc).__name__}: {msg})") from exc
    return _MEASURES[name](d_out)


def _finite(name: str, value: Any) -> float:
    v = check_real(name, value, low=0.0)
    if v == math.inf:
        raise ValueError(f"{name} = inf: the measurement declares no finite privacy loss at this d_in")
    return v


@register_opendp_measure("MaxDivergence")
def _(d_out: Any) -> Guarantee:
    return PureDP(_finite("epsilon (MaxDivergence)", d_out))


@register_opendp_measure("ZeroConcentratedDivergence")
def _(d_out: Any) -> Guarantee:
    return ZCDP(_finite("rho (ZeroConcentratedDivergence)", d_out))


def _pair(name: str, d_out: Any) -> tuple[Any, float]:
    try:
        inner, delta = d_out
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected the map to return (d_out, delta), got {d_out!r}") from None
    return inner, check_real(f"delta ({name})", delta, low=0.0, high=1.0, high_open=True)


@register_opendp_measure("Approximate(MaxDivergence)")
@register_opendp_measure("FixedSmoothedMaxDivergence")  # OpenDP < 0.12's name for the same measure
def _(d_out: Any) -> Guarantee:
    eps, delta = _pair("Approximate(MaxDivergence)", d_out)
    eps = _finite("epsilon (Approximate(MaxDivergence))", eps)
    return PureDP(eps) if delta == 0.0 else ApproxDP(eps, delta)


@register_opendp_measure("Approximate(ZeroConcentratedDivergence)")
def _(d_out: Any) -> Guarantee:
    rho, delta = _pair("Approximate(ZeroConcentratedDivergence)", d_out)
    rho = _finite("rho (Approximate(ZeroConcentratedDivergence))", rho)
    if delta > 0.0:
        raise ValueError(f"Approximate(ZeroConcentratedDivergence) with delta = {delta:g} > 0: dpcert has "
                         "no approximate-zCDP guarantee; convert it in OpenDP first "
                         "(dp.c.make_zCDP_to_approxDP, then dp.c.make_fix_delta)")
    return ZCDP(rho)


@register_opendp_measure("SmoothedMaxDivergence")
def _(d_out: Any) -> Guarantee:
    return profile_guarantee(d_out, 0.0)


@register_opendp_measure("Approximate(SmoothedMaxDivergence)")
def _(d_out: Any) -> Guarantee:
    profile, delta = _pair("Approximate(SmoothedMaxDivergence)", d_out)
    return profile_guarantee(profile, delta)


@register_opendp_measure("RenyiDivergence")
def _(d_out: Any) -> Guarantee:
    if not callable(d_out):
        raise ValueError("RenyiDivergence: expected the map to return a curve alpha -> epsilon, "
                         f"got {d_out!r}")
    eps = tuple(_finite(f"RDP epsilon at order {a:g}", d_out(a)) for a in RDP_ORDERS)
    return RDP(RDP_ORDERS, eps)


@dataclass(frozen=True)
class StepProfile:
    """A privacy profile known at points (eps_i, delta_i), extended as a step function: for
    eps_i <= eps, (eps_i, delta_i)-DP implies (eps, delta_i)-DP, so delta(eps) <= min of delta_i
    over eps_i <= eps (1 below the first point). A sound upper bound on the profile it samples."""

    eps: tuple[float, ...]
    delta: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.eps) != len(self.delta) or not self.eps:
            raise ValueError("StepProfile needs as many eps as delta values, at least one")
        if any(b <= a for a, b in zip(self.eps, self.eps[1:], strict=False)):
            raise ValueError("StepProfile's eps must be strictly increasing")

    def __call__(self, eps: float) -> float:
        i = int(np.searchsorted(np.asarray(self.eps), eps, side="right")) - 1
        return 1.0 if i < 0 else min(self.delta[: i + 1])


def profile_guarantee(profile: Any, extra_delta: float) -> FDP:
    """f-DP from an OpenDP ``PrivacyProfile`` (``.epsilon(delta)``, ``.delta(epsilon)``) plus an
    additive ``extra_delta``: the profile is read at ``PROFILE_DELTAS`` and on a uniform eps grid,
    validated (values in [0, 1], eps >= 0) and kept as a ``StepProfile``; the curve is the tightest
    one those points imply [@dong2022gaussian, Prop. 2.12]."""
    if not (callable(getattr(profile, "epsilon", None)) and callable(getattr(profile, "delta", None))):
        raise ValueError(f"SmoothedMaxDivergence: expected a privacy profile, got {profile!r}")
    points: dict[float, float] = {}
    for d in PROFILE_DELTAS:
        try:
            e = profile.epsilon(d)
        except Exception:  # no finite epsilon at this delta
            continue
        e = check_real(f"the profile's epsilon at delta = {d:g}", e, low=0.0)
        if e < math.inf:
            points[e] = min(points.get(e, 1.0), d)
    top = max(points, default=1.0)
    for e in np.linspace(0.0, top, PROFILE_LINEAR_POINTS):
        d = check_real(f"the profile's delta at epsilon = {e:g}", profile.delta(float(e)), low=0.0, high=1.0)
        points[float(e)] = min(points.get(float(e), 1.0), d)
    eps = sorted(points)
    deltas = _with_extra([points[e] for e in eps], extra_delta)
    step = StepProfile(tuple(eps), tuple(deltas))
    return FDP(ProfileTradeoff(step, np.asarray(eps)))


def _with_extra(deltas: Sequence[float], extra: float) -> list[float]:
    if extra == 0.0:
        return list(deltas)
    return [min(1.0, math.nextafter(d + extra, math.inf)) for d in deltas]


__all__ = ["PROFILE_DELTAS", "RDP_ORDERS", "StepProfile", "from_opendp", "measure_name",
           "profile_guarantee", "register_opendp_measure"]
