"""One ordering of guarantees: does a guarantee ``g`` imply a ``target``?

``implication(g, target)`` dispatches on the target's type (``functools.singledispatch``: register
a new target type without editing this module) and answers only what it can prove from sound
figures: closed forms where they exist (GDP by mu, zCDP by rho), otherwise the upper bounds every
guarantee reports (``epsilon(delta)``, ``delta(eps)``) or its sound lower curve. "False" means "not
shown", never "shown false". An approximation (``Approximate``: ``CLTGDP``, ``AsymptoticDP``)
implies nothing and is refused.
The ledger, certification and calibration all ask this one question.

"""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch

import numpy as np

from accountant.notions.closed_forms import GaussianTradeoff
from accountant.notions.conversions import to_gdp, to_zcdp
from accountant.notions.guarantees import FDP, GDP, ZCDP, ApproxDP, Approximate, Guarantee, PureDP
from accountant.notions.tradeoff import PiecewiseLinearTradeoff, TradeoffFunction

#: Relative margin on a target curve evaluated in floating point before it is compared with a
#: bound (the closed-form curves are accurate to a few ulp).
CURVE_MARGIN = 1e-12


@dataclass(frozen=True)
class Implication:
    """Whether ``g`` was shown to imply the target, and the figure that decided it."""

    holds: bool
    detail: str

    def __bool__(self) -> bool:
        return self.holds


def implies(g: Guarantee, target: Guarantee) -> bool:
    """True when ``g`` is shown, soundly, to imply ``target`` (see ``implication``)."""
    return implication(g, target).holds


def implication(g: Guarantee, target: Guarantee) -> Implication:
    """Whether ``g`` implies ``target``, with the deciding figure (e.g. "eps = 1.2 at delta = 1e-6")."""
    for name, value in (("g", g), ("target", target)):
        if not isinstance(value, Guarantee):
            raise TypeError(f"{name} must be an accountant guarantee, got {type(value).__name__}")
        if isinstance(value, Approximate):
            raise TypeError(f"{name} is {value.what}, an approximation which implies nothing; "
                            f"{value.instead}")
    return _implication(target, g)


@singledispatch
def _implication(target: Guarantee, g: Guarantee) -> Implication:
    raise TypeError(f"no ordering is known for a {type(target).__name__} target; register one "
                    "with accountant.ordering.register_target")


register_target = _implication.register


def can_be_target(cls: type) -> bool:
    """Whether an ordering is registered for targets of this type (approximations never)."""
    return (not issubclass(cls, Approximate)
            and _implication.dispatch(cls) is not _implication.dispatch(object))


@_implication.register
def _(target: PureDP, g: Guarantee) -> Implication:
    return _approx_dp(g, target.eps, 0.0)


@_implication.register
def _(target: ApproxDP, g: Guarantee) -> Implication:
    return _approx_dp(g, target.eps, target.delta_)


def _approx_dp(g: Guarantee, eps: float, delta: float) -> Implication:
    """(eps, delta)-DP from g's sound figures: delta(eps) first (one evaluation, and the sharper
    figure where epsilon(delta) is found by a bisection with a tolerance), then epsilon(delta),
    which names the shortfall and may decide where g computes it otherwise. Where g's epsilon is
    the search over this same non-increasing profile (``Guarantee.epsilon``), delta(eps) > delta
    already puts epsilon(delta) above eps: the failure is named by delta(eps) and no search is run
    (calibration's bisections fail about half their steps)."""
    d = g.delta(eps)
    if d <= delta:
        return Implication(True, f"delta = {d:.6g} at eps = {eps:g}")
    if type(g).epsilon is Guarantee.epsilon:
        return Implication(False, f"delta = {d:.6g} > {delta:g} at eps = {eps:g}")
    e = g.epsilon(delta)
    return Implication(e <= eps, f"eps = {e:.6g} at delta = {delta:g}")


@_implication.register
def _(target: GDP, g: Guarantee) -> Implication:
    decided = _via_gdp(g, target.mu, str(target))
    return decided if decided is not None else _curve_above(g.tradeoff, GaussianTradeoff(target.mu),
                                                            str(target))


@_implication.register
def _(target: FDP, g: Guarantee) -> Implication:
    f = target.tradeoff
    if type(f) is GaussianTradeoff:
        decided = _via_gdp(g, f.mu, str(target))
        if decided is not None:
            return decided
    return _curve_above(g.tradeoff, f, f"f-DP with f = {f!r}")


@_implication.register
def _(target: ZCDP, g: Guarantee) -> Implication:
    try:
        rho = to_zcdp(g).rho
    except TypeError:
        return Implication(False, f"{g} (no zCDP bound is known for it)")
    return Implication(rho <= target.rho, f"rho = {rho:.6g}")


def _via_gdp(g: Guarantee, mu_target: float, name: str) -> Implication | None:
    """Decided by the closed-form GDP of g (``to_gdp``), or None when g has none."""
    try:
        mu = to_gdp(g).mu
    except TypeError:
        return None
    return Implication(mu <= mu_target, f"mu = {mu:.6g} against {name}")


def _curve_above(curve: TradeoffFunction, f: TradeoffFunction, name: str) -> Implication:
    """Whether a sound lower curve lies above a convex target f everywhere. On each segment of a
    piecewise-linear curve, curve - f is concave, so its minimum is at the knots: checking the knots
    (with f raised by CURVE_MARGIN, relatively, up to 1 - a) is a proof."""
    if curve is f:  # every guarantee implies itself
        return Implication(True, f"the same curve as {name}")
    if not isinstance(curve, PiecewiseLinearTradeoff):
        return Implication(False, f"no exact comparison of {curve!r} with {name}")
    a = np.asarray(curve.alphas, dtype=np.float64)
    # any trade-off function has f(a) <= 1 - a, so the margin never needs to exceed that
    gap = float(np.min(curve(a) - np.minimum(f(a) * (1.0 + CURVE_MARGIN), 1.0 - a)))
    return Implication(gap >= 0.0, f"smallest margin of the curve over {name}: {gap:.3g}")


__all__ = ["Implication", "can_be_target", "implication", "implies", "register_target"]
