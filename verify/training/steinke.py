"""The one-run test of Steinke, Nasr & Jagielski [@steinke2023privacy, main theorem].

m canaries, each included independently with probability 1/2; after one run an auditor guesses
"in" or "out" for r of them (abstaining on the rest) and W of the guesses are correct. If the run is
(eps, delta)-DP with respect to each canary, then for every v, with p = e^eps / (1 + e^eps) and
T(j) = P(Binomial(r, p) >= j),

    P(W >= v) <= T(v) + 2 m delta max_{1 <= i <= v} (T(v - i) - T(v)) / i     (the second term is 0
                                                                             when delta = 0).

Call the right side g_eps(v). Rejecting "(eps, delta)-DP" when g_eps(W) <= gamma is a level-gamma test
(the event lies in {W >= v*}, v* the least v with g_eps(v) <= gamma). Since (eps, delta)-DP implies
(eps', delta)-DP for every eps' >= eps, P(W >= v) <= inf_{eps' >= eps} g_eps'(v), so the event
{some eps' > eps0 has g_eps'(W) <= gamma} also has probability <= gamma under (eps0, delta)-DP: any
single eps' the test rejects is a lower bound on eps at level gamma, whether or not g is monotone.

``epsilon_lower`` finds the largest rejected eps by bisection in floating point (``float_tails``),
then checks one eps' below it rigorously: p' is a dyadic rational below the candidate's p, the
tails are enclosed by interval arithmetic (``tail_bounds``), g is rounded up and gamma down, and the
eps' reported is log(p' / (1 - p')) rounded down. The reported bound is one the test truly rejects.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from .binomial import DYADIC_BITS, PREC, dyadic_below, float_tails, tail_bounds

__all__ = ["certify", "epsilon_lower", "pvalue", "rejects_certified", "screen"]

#: Upper end of the epsilon search (p = e^40 / (1 + e^40) is 1 in double precision).
EPS_MAX = 36.0


def _logistic(eps: float) -> float:
    return 1.0 / (1.0 + math.exp(-eps))


def pvalue(r: int, v: int, m: int, eps: float, delta: float) -> float:
    """g_eps(v) in floating point (for screening and display; not the certified check)."""
    if v <= 0:
        return 1.0
    if v > r:
        return 0.0
    t = float_tails(r, _logistic(eps), v)
    g = float(t[v])
    if delta > 0.0:
        i = np.arange(1, v + 1)
        g += 2.0 * m * delta * float(np.max((t[v - i] - t[v]) / i))
    return min(g, 1.0)


def rejects_certified(r: int, v: int, m: int, a: int, delta: float, gamma: Fraction,
                    bits: int = DYADIC_BITS) -> bool:
    """g(v) <= gamma for p = a / 2^bits, on rigorous upper bounds of the tails (``tail_bounds``);
    gamma and delta enter as exact rationals, rounded in the direction that makes rejection harder."""
    if v > r:
        return True
    if v <= 0:
        return gamma >= 1
    tail, spread = tail_bounds(r, v, a, bits)
    with mpmath.workprec(PREC):
        g = mpmath.mpf(tail)
        if delta > 0.0:
            # 2 m delta * spread rounded up; gamma rounded down
            g = mpmath.fadd(g, mpmath.fmul(mpmath.fmul(2 * m, delta, rounding="u"), spread, rounding="u"),
                            rounding="u")
        level = mpmath.fdiv(gamma.numerator, gamma.denominator, rounding="d")
        return bool(g <= level)


def _logit_down(a: int, bits: int) -> float:
    """A double <= log(a / (2^bits - a))."""
    with mpmath.workprec(120):
        x = mpmath.log(mpmath.mpf(a) / (mpmath.mpf(2) ** bits - a))
        return max(0.0, float(x) - 1e-12 * max(1.0, abs(float(x))))


def screen(r: int, v: int, m: int, delta: float, level: float) -> float:
    """The largest eps with g_eps(v) <= level by bisection in floating point (0 if none): a candidate
    for ``certify``, not a bound."""
    if r <= 0 or v <= r / 2 or pvalue(r, v, m, 0.0, delta) > level:
        return 0.0
    lo, hi = 0.0, EPS_MAX
    if pvalue(r, v, m, hi, delta) <= level:
        return hi
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if pvalue(r, v, m, mid, delta) <= level:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-7:
            break
    return lo


def certify(r: int, v: int, m: int, delta: float, gamma: Fraction, candidate: float) -> float:
    """An eps <= ``candidate`` that the test rejects at level gamma on rigorous tail bounds, rounded down
    (0 if eight steps of 0.1% below the candidate all fail)."""
    eps = candidate
    for _ in range(8):
        a = dyadic_below(_logistic(eps))
        if a > 1 << (DYADIC_BITS - 1) and rejects_certified(r, v, m, a, delta, gamma):
            return _logit_down(a, DYADIC_BITS)
        eps *= 0.999
    return 0.0


def epsilon_lower(r: int, v: int, m: int, delta: float, gamma: Fraction) -> float:
    """The largest eps the test rejects at level gamma with v correct of r guesses (0 if none),
    screened in floating point and certified (module docstring)."""
    return certify(r, v, m, delta, gamma, screen(r, v, m, delta, float(gamma)))
