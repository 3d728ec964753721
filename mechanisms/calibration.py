"""Noise calibration: the smallest noise scale meeting a target guarantee.

Closed forms are returned as sympy expressions in the sensitivity (so they stay symbolic until
bound); the analytic Gaussian mechanism is solved numerically on the accountant's GDP profile.

=========================  ==========================================================  =======================
noise / target             scale                                                       source
=========================  ==========================================================  =======================
Laplace, PureDP(eps)       b = Delta_1 / eps                                           [@dwork2006calibrating]
Laplace, ApproxDP(eps, d)  b = Delta_1 / (eps - 2 log(1 - d)), from the Laplace curve  [@dong2022gaussian]
Laplace, ZCDP(rho)         b = Delta_1 / sqrt(2 rho), since eps-DP => eps^2/2-zCDP     [@bun2016concentrated]
Gaussian, GDP(mu)          sigma = Delta_2 / mu                                        [@dong2022gaussian]
Gaussian, ZCDP(rho)        sigma = Delta_2 / sqrt(2 rho)                               [@bun2016concentrated]
Gaussian, ApproxDP         smallest sigma with GDP(Delta_2/sigma).delta(eps) <= delta  [@balle2018improving]
=========================  ==========================================================  =======================

Sources, in order: [@dong2022gaussian, Sec. 2.3 and Thm 2.7]; [@bun2016concentrated, Prop. 1.4 and 1.6];
[@balle2018improving, Thm 8].
"""

from __future__ import annotations

import math
import sys
from functools import singledispatch
from typing import Any

import numpy as np
import sympy
from scipy import optimize

from accountant import CLTGDP, GDP, ZCDP, ApproxDP, Guarantee, PureDP, calibrate
from accountant.core.normal import log_ndtr
from accountant.core.types import MACHINE_EPSILON
from accountant.core.validation import check_real

from .domain import as_expr, is_numeric, to_float_up

#: Relative margin under the target delta kept by the analytic Gaussian calibration.
PROFILE_MARGIN = 1e-10

__all__ = [
    "analytic_gaussian_sigma",
    "classic_gaussian_sigma",
    "gaussian_sigma",
    "gaussian_sigma_for",
    "laplace_scale",
    "laplace_scale_for",
]


def _target_name(target: object) -> str:
    return type(target).__name__


def _sensitivity(name: str, value: Any) -> Any:
    """A sensitivity as a sympy expression: symbolic, or a finite number > 0 (``ValueError`` for 0,
    which needs no noise)."""
    expr = as_expr(name, value)
    if is_numeric(expr) and not bool(expr > 0):
        if expr == 0:
            raise ValueError(f"the sensitivity {name} is 0: the query does not depend on any one record "
                             "(e.g. a count of all records under replace-one, where n is public); release "
                             "it without noise")
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return expr


def laplace_scale(l1: Any, target: Guarantee) -> Any:
    """Laplace scale b (sympy) for L1 sensitivity ``l1`` meeting ``target`` (see module table).

    The ApproxDP form inverts the Laplace privacy profile [@dong2022gaussian, Sec. 2.3]
    delta(eps) = 1 - exp((eps - Delta/b)/2) on [-Delta/b, Delta/b], so it is exact, not a bound.
    GDP targets are refused: Laplace noise is not calibrated to a Gaussian curve here.
    Rules live in ``laplace_scale_for`` (``functools.singledispatch`` on the target type), where a
    new guarantee type can be registered.
    """
    return laplace_scale_for(target, l1)


@singledispatch
def laplace_scale_for(target: Guarantee, l1: Any) -> Any:
    """Laplace scale for a target guarantee type (register new types here)."""
    raise ValueError(f"Laplace noise is calibrated to PureDP, ApproxDP or ZCDP targets, got "
                     f"{_target_name(target)}; use Gaussian noise for a GDP target")


@laplace_scale_for.register
def _(target: PureDP, l1: Any) -> Any:
    if target.eps == 0.0:
        raise ValueError("eps = 0 cannot be met by Laplace noise of finite scale")
    return _sensitivity("l1", l1) / as_expr("eps", target.eps)


@laplace_scale_for.register
def _(target: ApproxDP, l1: Any) -> Any:
    if target.eps == 0.0 and target.delta_ == 0.0:
        raise ValueError("(0, 0)-DP cannot be met by Laplace noise of finite scale")
    eps0 = as_expr("eps", target.eps) - 2 * sympy.log(1 - as_expr("delta", target.delta_))
    return _sensitivity("l1", l1) / eps0


@laplace_scale_for.register
def _(target: ZCDP, l1: Any) -> Any:
    if target.rho == 0.0:
        raise ValueError("rho = 0 cannot be met by Laplace noise of finite scale")
    return _sensitivity("l1", l1) / sympy.sqrt(2 * as_expr("rho", target.rho))


def gaussian_sigma(l2: Any, target: Guarantee, method: str = "analytic") -> Any:
    """Gaussian standard deviation for L2 sensitivity ``l2`` meeting ``target`` (see module table).

    ApproxDP targets use ``method="analytic"`` [@balle2018improving] (numeric, needs a numeric
    sensitivity) or ``method="classic"`` [@dwork2014algorithmic, Thm A.1] (valid only for eps < 1).
    PureDP targets raise: no Gaussian noise gives pure DP. Rules live in ``gaussian_sigma_for``
    (singledispatch on the target type).
    """
    if method not in ("analytic", "classic"):
        raise ValueError(f"method must be 'analytic' or 'classic', got {method!r}")
    return gaussian_sigma_for(target, l2, method)


@singledispatch
def gaussian_sigma_for(target: Guarantee, l2: Any, method: str) -> Any:
    """Gaussian sigma for a target guarantee type (register new types here)."""
    raise ValueError("Gaussian noise is calibrated to GDP, ZCDP or ApproxDP targets, "
                     f"got {_target_name(target)}")


@gaussian_sigma_for.register
def _(target: GDP, l2: Any, method: str) -> Any:
    if isinstance(target, CLTGDP):
        raise ValueError("a CLT approximation is not a guarantee to calibrate to; use GDP(mu)")
    return _sensitivity("l2", l2) / as_expr("mu", target.mu)


@gaussian_sigma_for.register
def _(target: ZCDP, l2: Any, method: str) -> Any:
    if target.rho == 0.0:
        raise ValueError("rho = 0 cannot be met by Gaussian noise of finite variance")
    return _sensitivity("l2", l2) / sympy.sqrt(2 * as_expr("rho", target.rho))


@gaussian_sigma_for.register
def _(target: ApproxDP, l2: Any, method: str) -> Any:
    l2 = _sensitivity("l2", l2)
    if method == "classic":
        return classic_gaussian_sigma(l2, target.eps, target.delta_)
    if not is_numeric(l2):
        raise ValueError(f"the analytic Gaussian calibration is numeric: bind the sensitivity {l2} first")
    return sympy.Float(analytic_gaussian_sigma(to_float_up("l2", l2), target.eps, target.delta_), 17)


@gaussian_sigma_for.register
def _(target: PureDP, l2: Any, method: str) -> Any:
    raise ValueError("Gaussian noise cannot give pure DP (PureDP target): its privacy loss is "
                     "unbounded; use Laplace noise, or target ApproxDP/GDP/ZCDP")


def classic_gaussian_sigma(l2: Any, eps: float, delta: float) -> Any:
    """sigma = sqrt(2 ln(1.25/delta)) Delta_2 / eps [@dwork2014algorithmic, Thm A.1]. A baseline.

    The theorem holds only for 0 < eps < 1; outside that range this raises ``ValueError``.
    """
    eps = check_real("eps", eps)
    if not (0.0 < eps < 1.0):
        raise ValueError(f"the classic Gaussian calibration needs 0 < eps < 1 (Dwork & Roth Thm A.1), "
                         f"got eps = {eps!r}; use the analytic calibration")
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    return (sympy.sqrt(2 * sympy.log(sympy.Rational(5, 4) / as_expr("delta", delta)))
            * _sensitivity("l2", l2) / as_expr("eps", eps))


def analytic_gaussian_sigma(l2: float, eps: float, delta: float) -> float:
    """Smallest sigma with (eps, delta)-DP for L2 sensitivity ``l2`` [@balle2018improving, Thm 8].

    The Gaussian mechanism is exactly mu-GDP with mu = l2/sigma, and mu -> delta_mu(eps) is
    increasing; ``accountant.calibrate`` finds the least sigma whose reported GDP(l2/sigma, rounded
    up) implies (eps, delta (1 - PROFILE_MARGIN))-DP, so the result is never optimistic.
    """
    l2 = check_real("l2", l2, low=0.0, high=math.inf, high_open=True)
    target = ApproxDP(eps, delta)
    if l2 == 0.0:
        return 0.0
    if target.delta_ == 0.0:
        raise ValueError("Gaussian noise cannot give (eps, 0)-DP; delta must be > 0")

    # The profile is evaluated in floating point (relative error ~1e-15, not exactly monotone at the
    # last digit); a relative margin keeps the reported guarantee below delta after rounding.
    goal = ApproxDP(target.eps, target.delta_ * (1.0 - PROFILE_MARGIN))

    def declared(sigma: float) -> GDP:
        """The figure Gaussian.guarantee() reports: mu = l2/sigma rounded up."""
        return GDP(math.nextafter(l2 / sigma, math.inf))

    # a float estimate narrows the bracket (each evaluation of the rounded-up profile is an mpmath
    # computation, slow at extreme mu); calibrate still checks both ends, and the wide bracket is
    # the fallback
    estimate = l2 / _gdp_mu_estimate(goal.eps, goal.delta_)
    brackets = [(estimate * (1 - w), estimate * (1 + w)) for w in (1e-6, 1e-3) if math.isfinite(estimate)]
    brackets.append((l2 / 1e6, min(l2 * 1e300, sys.float_info.max)))
    for lo, hi in brackets:
        try:
            return calibrate(declared, goal, (lo, hi), increasing=False, tol=MACHINE_EPSILON)
        except ValueError as exc:
            error = exc
    raise ValueError(f"no Gaussian sigma in [l2 1e-6, l2 1e300] is the boundary of ({eps}, {delta})-DP; "
                     f"check eps and delta ({error})") from None


def _gdp_mu_estimate(eps: float, delta: float) -> float:
    """mu with delta_mu(eps) ~ delta in floating point [@dong2022gaussian, Cor. 2.13] (an estimate
    only: it sets the bracket of the sound calibration); nan when the root is not bracketed."""

    def gap(log_mu: float) -> float:
        mu = math.exp(log_mu)
        a = float(log_ndtr(-eps / mu + mu / 2))
        b = eps + float(log_ndtr(-eps / mu - mu / 2))
        with np.errstate(divide="ignore"):  # b = a (delta = 0 in doubles): -inf, below any target
            return float(a + np.log1p(-np.exp(min(b - a, 0.0)))) - math.log(delta)

    try:
        return math.exp(optimize.brentq(gap, -30.0, 10.0, xtol=1e-14))
    except ValueError:
        return math.nan
