"""One calibration: the parameter at which a mechanism's guarantee just implies a target.

In the manner of dp_accounting's ``calibrate_dp_mechanism``: given ``make_guarantee(x)``, the
certified guarantee of a mechanism with parameter ``x`` (a noise scale, a sampling rate, a number
of steps), a ``target`` and a bracket, one bisection on ``implies(make_guarantee(x), target)``
keeps the end that is shown to imply the target (the *safe* end) and the end that is not, and
returns the safe end: the least noise, or the largest rate or number of steps, within ``tol``.
The answer is therefore sound by construction (it was checked with ``implies``), whatever the
rounding of the figures, and never more than a relative ``tol`` from the boundary when the
guarantee is monotone in ``x``.

Example (DP-SGD, Abadi et al. 2016): the noise multiplier for (2, 1e-5)-DP after 1000 Poisson
subsampled steps at rate 0.01, accounted exactly by the PLD of the subsampled Gaussian
[@zhu2022optimal]::

    >>> from accountant import ApproxDP, calibrate, subsampled_gaussian
    >>> sigma = calibrate(lambda s: subsampled_gaussian(s, 0.01).self_compose(1000),
    ...                   ApproxDP(2.0, 1e-5), (0.3, 10.0), tol=1e-4)
    >>> 0.9 < sigma < 1.0
    True

"""

from __future__ import annotations

import math
from collections.abc import Callable

from accountant.core.search import bisect_count
from accountant.core.validation import check_real
from accountant.notions.guarantees import Guarantee
from accountant.notions.ordering import implies

#: Default relative tolerance of the float bisection.
DEFAULT_TOL = 1e-9


__all__ = ["DEFAULT_TOL", "calibrate", "calibrate_count"]


def _ordered(bracket: tuple[float, float], check: Callable[[str, float], float]) -> tuple[float, float]:
    """The bracket's ends, each checked by ``check``, with lo < hi."""
    if not isinstance(bracket, (tuple, list)) or len(bracket) != 2:
        raise TypeError(f"bracket must be a pair (lo, hi), got {bracket!r}")
    lo, hi = check("bracket[0]", bracket[0]), check("bracket[1]", bracket[1])
    if not lo < hi:
        raise ValueError(f"bracket must be (lo, hi) with lo < hi, got {bracket!r}")
    return lo, hi


def _finite(name: str, x: float) -> float:
    return check_real(name, x, low=-math.inf, high=math.inf, low_open=True, high_open=True)


def _int(name: str, x: float) -> float:
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"{name} must be an int, got {type(x).__name__}")
    return x


def _ends(ok: Callable[[float], bool], lo: float, hi: float,
          increasing: bool | None) -> tuple[float, float]:
    """(safe, unsafe): the bracket end shown to imply the target and the one not shown to."""
    def at_end(x: float) -> bool:
        try:
            return ok(x)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"bracket end {x!r} is outside the parameter's range: {exc}") from exc

    ok_lo, ok_hi = at_end(lo), at_end(hi)
    if increasing is None:
        if ok_lo == ok_hi:
            what = "both ends imply" if ok_lo else "neither end implies"
            raise ValueError(f"bracket ({lo!r}, {hi!r}): {what} the target, so it does not "
                             "contain the boundary; widen or move the bracket")
        increasing = ok_lo
    safe, unsafe = (lo, hi) if increasing else (hi, lo)
    ok_safe, ok_unsafe = (ok_lo, ok_hi) if increasing else (ok_hi, ok_lo)
    side = "lower" if increasing else "upper"
    if not ok_safe:
        raise ValueError(f"the {side} end of the bracket, {safe!r}, does not imply the target: no "
                         "parameter in the bracket does (widen it, or check the direction `increasing`)")
    if ok_unsafe:
        raise ValueError(f"the other end of the bracket, {unsafe!r}, also implies the target: the "
                         "boundary is outside the bracket; widen it")
    return safe, unsafe


def calibrate(make_guarantee: Callable[[float], Guarantee], target: Guarantee,
              bracket: tuple[float, float], *, increasing: bool | None = None,
              tol: float = DEFAULT_TOL) -> float:
    """The least (or largest) x in ``bracket`` with ``implies(make_guarantee(x), target)``.

    ``increasing``: whether the privacy loss grows with x (a sampling rate: the largest x is
    returned) or not (a noise scale: the least x); None infers it from which end of the bracket
    implies the target. Exactly one end must imply it (``ValueError`` otherwise). The bisection
    stops when the ends are within a relative ``tol``; the returned value is the safe end, which
    implies the target, rounded on the safe side by construction. On a positive bracket the
    midpoint is geometric while the ends are more than a factor 2 apart.
    """
    lo, hi = _ordered(bracket, _finite)
    tol = check_real("tol", tol, low=0.0, high=1.0, low_open=True, high_open=True)

    def ok(x: float) -> bool:
        return implies(make_guarantee(x), target)

    safe, unsafe = _ends(ok, lo, hi, increasing)
    while abs(unsafe - safe) > tol * max(abs(safe), abs(unsafe)):
        # geometric midpoint while the ends are far apart on a positive bracket (a noise scale
        # searched over decades), arithmetic near the answer
        far = min(safe, unsafe) > 0.0 and max(safe, unsafe) > 2.0 * min(safe, unsafe)
        mid = math.sqrt(safe) * math.sqrt(unsafe) if far else 0.5 * (safe + unsafe)
        if mid in (safe, unsafe):
            break
        if ok(mid):
            safe = mid
        else:
            unsafe = mid
    return safe


def calibrate_count(make_guarantee: Callable[[int], Guarantee], target: Guarantee,
                    bracket: tuple[int, int], *, increasing: bool | None = None) -> int:
    """``calibrate`` on integers (a number of steps or compositions): the least (or largest) n in
    ``bracket`` whose guarantee implies ``target``; exact (the ends end one apart)."""
    lo, hi = _ordered(bracket, _int)

    def ok(x: float) -> bool:
        return implies(make_guarantee(int(x)), target)

    s, u = _ends(ok, lo, hi, increasing)
    return bisect_count(ok, int(s), int(u))
