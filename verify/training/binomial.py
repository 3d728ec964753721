"""Binomial tails T(j) = P(Binomial(r, p) >= j) with rigorous enclosures (interval arithmetic) and,
for screening, in floating point.

``tail_bounds`` runs the recurrence pmf(k + 1) = pmf(k) (r - k) / (k + 1) p / (1 - p) from
pmf(0) = (1 - p)^r in mpmath's interval arithmetic at 120 bits: every pmf value, every partial
sum and every ratio is an interval guaranteed to contain the real number (outward rounding), and
the functions return the upper ends. mpmath's exponent is unbounded, so nothing underflows.
``float_tails`` is scipy's survival function, used only to find candidates that are then checked.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
from scipy import stats

from accountant.core.types import FloatArray

__all__ = ["DYADIC_BITS", "dyadic_below", "float_tails", "tail_bounds"]

#: Bits of the dyadic success probability that is checked (its denominator is 2^DYADIC_BITS).
DYADIC_BITS = 32
#: Working precision of the interval arithmetic.
PREC = 120


def dyadic_below(p: float, bits: int = DYADIC_BITS) -> int:
    """The numerator a of the largest a / 2^bits <= p (p in [0, 1])."""
    return min(math.floor(p * (1 << bits)), (1 << bits) - 1)


def tail_bounds(r: int, v: int, a: int, bits: int = DYADIC_BITS) -> tuple[mpmath.mpf, mpmath.mpf]:
    """Upper bounds on T(v) and on max_{1 <= i <= v} (T(v - i) - T(v)) / i for Binomial(r, a / 2^bits),
    1 <= v <= r."""
    iv = mpmath.iv
    old = iv.prec
    iv.prec = PREC
    try:
        p = iv.mpf(a) / iv.mpf(1 << bits)  # exact: a dyadic of 32 bits
        q = 1 - p
        ratio = p / q
        x = q**r
        below = []  # pmf(0..v-1)
        tail = iv.mpf(0)
        for k in range(r + 1):
            if k < v:
                below.append(x)
            else:
                tail += x
            if k < r:
                x = x * (r - k) / (k + 1) * ratio
        best = mpmath.mpf(0)
        partial = iv.mpf(0)
        for i in range(1, v + 1):
            partial += below[v - i]
            best = max(best, (partial / i).b)
        return tail.b, best
    finally:
        iv.prec = old


def float_tails(r: int, p: float, upto: int) -> FloatArray:
    """P(Binomial(r, p) >= j) for j = 0..upto in floating point (screening only)."""
    j = np.arange(upto + 1)
    return np.asarray(stats.binom.sf(j - 1, r, p), dtype=np.float64)
