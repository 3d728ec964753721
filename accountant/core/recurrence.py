"""The first-order linear recurrence y_i = x_i + a y_{i-1} (y_0 = x_0), evaluated in blocks with the
rounding of an in-order evaluation but for one step per term."""

from __future__ import annotations

__all__ = ["linear_recurrence"]

import math
from fractions import Fraction

import numpy as np

from accountant.core.types import FloatArray

#: Inputs up to this size are summed in order, one float at a time.
IN_ORDER = 64

#: Largest |log a| times the block length: a^B stays far inside the normal range (e^{+-600}).
MAX_LOG_POWER = 600.0


def linear_recurrence(x: FloatArray, a: float) -> FloatArray:
    """y_i = x_i + a y_{i-1}, y_0 = x_0, by blocks of B consecutive entries (B about sqrt(n / 16):
    2 B vector steps and n / B scalar ones):

    1. within each block, z_k = x_k + a z_{k-1} from z = 0 at its start, all blocks at once (one
       product and one sum per step, rounded once each, as in order);
    2. the block ends c_b = z_end(b) + A c_{b-1}, in order, with A = a^B computed exactly
       (fractions) and rounded to nearest, once;
    3. y_k = z_k + w_k in block b, with w_k = a w_{k-1} from w_{-1} = c_{b-1} (one product per
       step, then the sum).

    Rounding. Each term x_j reaches y_i (i >= j) multiplied by a^{i-j} and by at most
    2 (i - j) + 2 factors 1 + d, |d| <= u = 2^-53: in one block the in-order count 2 (i - j) + 1
    (or less) and step 3's sum; across blocks 2 (B - 1 - k0) + 1 to the end of its own block
    (position k0), the carry's sum, 3 per block crossed (A, the product, the sum) and k + 2 into
    position k of block b', against the in-order 2 (i - j) + 1, which is at least as many but for
    one. So for non-negative x and a the result errs by at most gamma_{2(i+1)} relative at entry i
    [@higham2002accuracy, Lemma 3.1], one rounding more per term than an in-order evaluation.

    Underflow. Below the normal range a product errs absolutely instead, by at most half the
    smallest subnormal (a sum of doubles there is exact); y_i depends on at most 2 (i + 1) rounded
    products (steps 1 and 3 and the carries), each weighted by a product of a's (at most 1 for
    a <= 1). B is capped so that a^B lies within e^{+-600}: a normal number.

    Small inputs, and a with |log a| > 300 (no block of 2 fits), are summed in order."""
    xs: FloatArray = np.ascontiguousarray(x, dtype=np.float64)
    n = xs.size
    log_a = abs(math.log(a)) if a > 0.0 else math.inf
    block = min(max(2, math.isqrt(n // 16)), math.floor(MAX_LOG_POWER / log_a) if log_a > 0.0 else n)
    if n <= IN_ORDER or block < 2:
        out = xs.tolist()
        for i in range(1, n):
            out[i] = out[i] + a * out[i - 1]
        return np.asarray(out, dtype=np.float64).reshape(n)
    blocks = -(-n // block)
    z = np.zeros(blocks * block)
    z[:n] = xs
    z = np.ascontiguousarray(z.reshape(blocks, block).T)  # row k: position k of every block
    for k in range(1, block):
        z[k] += a * z[k - 1]
    power = float(Fraction(a) ** block)  # a^B rounded to nearest
    ends = z[block - 1].tolist()
    for b in range(1, blocks):
        ends[b] = ends[b] + power * ends[b - 1]
    w = np.asarray(ends[:-1], dtype=np.float64)
    for k in range(block):
        w = a * w
        z[k, 1:] += w
    out_blocks: FloatArray = np.ascontiguousarray(z.T).reshape(-1)[:n]
    return out_blocks
