"""Exact samplers for integer noise [@canonne2020discrete, Algorithms 1-3].

Every random decision is a comparison of a uniform random *integer* with an integer: Bernoulli(p)
for a rational p = a/b draws U uniform on {0, ..., b-1} and returns U < a. Parameters are
``fractions.Fraction`` and all arithmetic is on Python integers, so the output law is exactly the
stated pmf (up to the quality of the Generator's bits); no floating-point rounding enters, and the
attack of Mironov [@mironov2012significance] on floating-point Laplace noise does not apply.

The array functions run the same algorithms vectorised on int64 arrays when the parameters' integers
are small enough for every product to stay below 2^62 (checked), and otherwise loop over draws with
Python integers (roughly 10-50 microseconds per draw). numpy's own geometric and Laplace draws go
through floating-point logarithms and are not used.
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import isqrt

import numpy as np
from numpy.typing import NDArray

from accountant.core.types import FloatArray
from accountant.core.validation import check_count

__all__ = [
    "bernoulli_exp_neg",
    "bernoulli_exp_neg_vec",
    "bernoulli_rational",
    "discrete_gaussian",
    "discrete_gaussian_array",
    "discrete_laplace",
    "discrete_laplace_array",
    "exp_weighted_indices",
    "floor_log2",
    "from_lattice",
    "geometric_array",
    "to_lattice",
    "uniform_below",
]

_INT64_LIMIT = 2**63 - 1
#: Largest discrete Laplace scale / discrete Gaussian variance of the array samplers (int64 draws).
ARRAY_MAX_SCALE = 2**52
ARRAY_MAX_SIGMA2 = 2**100
#: Largest number of draws of one array call.
ARRAY_MAX_SIZE = 2**40


def as_rational(name: str, value: object) -> Fraction:
    """``value`` (a Fraction, an int or a finite float, taken at its exact binary value) as a Fraction;
    ``TypeError``/``ValueError`` naming ``name`` otherwise."""
    if isinstance(value, Fraction):
        return value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a rational number (int, finite float or fractions.Fraction), "
                        f"got {type(value).__name__} {value!r}")
    if isinstance(value, (float, np.floating)) and not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return Fraction(int(value)) if isinstance(value, (int, np.integer)) else Fraction(float(value))


def _positive(name: str, value: object, high: int | None = None) -> Fraction:
    f = as_rational(name, value)
    if f <= 0 or (high is not None and f > high):
        shown = value if not isinstance(value, int) or abs(value) < 10**30 else \
            f"a {len(str(value))}-digit int"
        raise ValueError(f"{name} must be > 0{'' if high is None else f' and <= 2^{high.bit_length() - 1}'}, "
                         f"got {shown}")
    return f


def check_shape(shape: object) -> tuple[int, ...]:
    """A shape: a non-negative int or a tuple of them, at most ``ARRAY_MAX_SIZE`` elements in all."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) and not isinstance(shape, (bool, np.bool_)) \
        else shape
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"shape must be a tuple of non-negative ints, got {type(shape).__name__} {shape!r}")
    out = tuple(check_count("shape", d, low=0, high=ARRAY_MAX_SIZE) for d in dims)
    if math.prod(out) > ARRAY_MAX_SIZE:
        raise ValueError(f"shape {out} has more than 2^40 elements")
    return out


def uniform_below(rng: np.random.Generator, n: int) -> int:
    """A uniform integer on {0, ..., n - 1}, for any positive Python int ``n`` (rejection on 64-bit
    words beyond the range numpy's ``integers`` accepts)."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if n <= _INT64_LIMIT:
        return int(rng.integers(0, n))
    bits = (n - 1).bit_length()
    words = -(-bits // 64)
    while True:
        raw = rng.integers(0, 2**64, size=words, dtype=np.uint64, endpoint=False)
        value = 0
        for w in raw.tolist():
            value = (value << 64) | int(w)
        value >>= words * 64 - bits
        if value < n:
            return value


def bernoulli_rational(rng: np.random.Generator, p: Fraction) -> bool:
    """Bernoulli(p) for rational p in [0, 1], exactly."""
    p = as_rational("p", p)
    if not 0 <= p <= 1:
        raise ValueError(f"p must lie in [0, 1], got {p}")
    return uniform_below(rng, p.denominator) < p.numerator


# The scalar algorithms below run on Python integers (a rational a/b as the pair (a, b)); the public
# functions validate their Fraction arguments once and call them. Bernoulli(a/b) reduces a/b to lowest
# terms first, so each draw is the one ``bernoulli_rational`` makes for the same Fraction.

def _bernoulli_ratio(rng: np.random.Generator, a: int, b: int) -> bool:
    """Bernoulli(a/b) for integers 0 <= a <= b, b > 0: U uniform below b/g is below a/g, g = gcd(a, b)."""
    g = math.gcd(a, b)
    return uniform_below(rng, b // g) < a // g


def _bexp_unit(rng: np.random.Generator, a: int, b: int) -> bool:
    """Bernoulli(exp(-a/b)) for integers 0 <= a <= b, b > 0 (``bernoulli_exp_neg`` for gamma <= 1)."""
    k = 1
    while _bernoulli_ratio(rng, a, b * k):
        k += 1
    return k % 2 == 1


def _bexp(rng: np.random.Generator, a: int, b: int) -> bool:
    """Bernoulli(exp(-a/b)) for integers a >= 0, b > 0 (``bernoulli_exp_neg``)."""
    if a > b:
        whole = a // b
        for _ in range(whole):
            if not _bexp_unit(rng, 1, 1):
                return False
        return _bexp_unit(rng, a - whole * b, b)
    return _bexp_unit(rng, a, b)


def _discrete_laplace_int(rng: np.random.Generator, t: int, s: int) -> int:
    """``discrete_laplace`` with scale t/s, for integers t, s >= 1."""
    while True:
        u = uniform_below(rng, t)
        if not _bexp_unit(rng, u, t):
            continue
        v = 0
        while _bexp_unit(rng, 1, 1):
            v += 1
        y = (u + t * v) // s
        negative = uniform_below(rng, 2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def _discrete_gaussian_int(rng: np.random.Generator, p: int, q: int) -> int:
    """``discrete_gaussian`` with sigma2 = p/q, for integers p, q >= 1: the acceptance exponent
    (|Y| - sigma2/t)^2/(2 sigma2) is (q t |Y| - p)^2 / (2 p q t^2)."""
    t = isqrt(p // q) + 1
    den = 2 * p * q * t * t
    while True:
        y = _discrete_laplace_int(rng, t, 1)
        a = q * t * abs(y) - p
        if _bexp(rng, a * a, den):
            return y


def bernoulli_exp_neg(rng: np.random.Generator, gamma: Fraction) -> bool:
    """Bernoulli(exp(-gamma)) for rational gamma >= 0, exactly [@canonne2020discrete, Algorithm 1].

    For gamma in [0, 1]: draw A_k ~ Bernoulli(gamma/k) for k = 1, 2, ... until the first A_K = 0 and
    return [K odd]; P(K > k) = gamma^k/k!, so P(K odd) = sum (-gamma)^j/j! = exp(-gamma).
    For gamma > 1: exp(-gamma) = exp(-1)^floor(gamma) exp(-(gamma - floor(gamma))).
    """
    gamma = as_rational("gamma", gamma)
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, got {gamma}")
    return _bexp(rng, gamma.numerator, gamma.denominator)


def discrete_laplace(rng: np.random.Generator, scale: Fraction) -> int:
    """Y with P(Y = y) proportional to exp(-|y|/scale) on the integers [@canonne2020discrete, Algorithm 2].

    With scale = t/s: U uniform on {0..t-1} kept with probability exp(-U/t) and V geometric
    (P(V = v) proportional to e^-v) make X = U + tV with P(X = x) proportional to exp(-x/t);
    Y = floor(X/s) then has P(Y = y) proportional to exp(-y s/t); a fair sign is attached, rejecting
    the negative zero.
    """
    scale = _positive("scale", scale)
    return _discrete_laplace_int(rng, scale.numerator, scale.denominator)


def discrete_gaussian(rng: np.random.Generator, sigma2: Fraction) -> int:
    """Y with P(Y = y) proportional to exp(-y^2/(2 sigma2)) on the integers [@canonne2020discrete, Alg. 3].

    Proposals Y ~ discrete Laplace with scale t = floor(sigma) + 1 are accepted with probability
    exp(-(|Y| - sigma2/t)^2/(2 sigma2)), a rational exponent, so the acceptance is exact.
    """
    sigma2 = _positive("sigma2", sigma2)
    return _discrete_gaussian_int(rng, sigma2.numerator, sigma2.denominator)


# ----------------------------------------------------------------------------- vectorised path
#
# The same algorithms run on numpy int64 arrays: Bernoulli(a/b) is still "uniform integer below b is
# below a", drawn with Generator.integers (exact uniform integers by rejection), so the law is
# unchanged. The path is taken only when every product formed stays below 2^62 (checked before each
# draw); otherwise the Python-integer loop above is used.

_VEC_LIMIT = 2**62
#: Largest denominator (and scale numerator) for which the vectorised path is used.
VEC_MAX_DENOMINATOR = 2**40
#: Largest acceptance denominator 2 p q t^2 of the vectorised discrete Gaussian: its Bernoulli chain
#: draws below den * k and hands any element with k >= 2^62 // den to Python integers, so every
#: product stays below 2^62; 2^60 leaves k up to 4 (the chain rarely passes k = 3) on the int64 path.
VEC_MAX_GAUSSIAN_DENOMINATOR = 2**60
#: Fewest draws the vectorised path takes: below it the Python-integer loop is faster (a few
#: Bernoulli draws per sample against dozens of numpy calls whatever the size).
VEC_MIN_COUNT = 16


def _bexp_unit_vec(rng: np.random.Generator, num: NDArray[np.int64],
                   den: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Bernoulli(exp(-num/den)) elementwise for 0 <= num <= den [@canonne2020discrete, Alg. 1, vectorised]:
    round k draws Bernoulli(num/(den k)) for every element still running (all of them at the same k),
    an element stops at its first failure with the answer "k odd"."""
    result = np.zeros(num.size, dtype=bool)
    idx = np.arange(num.size)  # the running elements, with their num and den
    n, d = num, den
    k = 1
    safe_below = _VEC_LIMIT // int(den.max()) if den.size else 0  # den k < 2^62 for every k below
    while idx.size:
        if k >= safe_below:
            unsafe = k >= _VEC_LIMIT // d
            for j in np.flatnonzero(unsafe).tolist():  # astronomically rare: exact Python ints
                kk = k
                while bernoulli_rational(rng, Fraction(int(n[j]), int(d[j]) * kk)):
                    kk += 1
                result[int(idx[j])] = kk % 2 == 1
            keep = ~unsafe
            idx, n, d = idx[keep], n[keep], d[keep]
            if idx.size == 0:
                break
        cont = rng.integers(0, d * k) < n
        if k % 2 == 1:
            result[idx[~cont]] = True
        idx, n, d = idx[cont], n[cont], d[cont]
        k += 1
    return result


def _int_array(name: str, value: object) -> NDArray[np.int64]:
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu" or arr.ndim != 1:
        raise TypeError(f"{name} must be a 1-d array of int64 integers, got {arr.dtype} with shape "
                        f"{arr.shape}")
    if arr.dtype.kind == "u" and arr.size and int(arr.max()) > _INT64_LIMIT:
        raise ValueError(f"{name} must fit int64")
    return arr.astype(np.int64)


def bernoulli_exp_neg_vec(rng: np.random.Generator, num: NDArray[np.int64],
                          den: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Bernoulli(exp(-num/den)) elementwise for int64 arrays num >= 0, 0 < den < 2^62 (exact)."""
    num, den = _int_array("num", num), _int_array("den", den)
    if num.shape != den.shape:
        raise ValueError(f"num and den must have the same shape, got {num.shape} and {den.shape}")
    if (num < 0).any() or (den <= 0).any() or (den >= _VEC_LIMIT).any():
        raise ValueError("need num >= 0 and 0 < den < 2^62")
    whole = num // den
    frac = num - whole * den
    ok = np.ones(num.size, dtype=bool)
    remaining = whole.copy()
    alive = remaining > 0
    while alive.any():
        idx = np.flatnonzero(alive)
        ones = np.ones(idx.size, dtype=np.int64)
        ok[idx[~_bexp_unit_vec(rng, ones, ones)]] = False
        remaining[idx] -= 1
        alive = ok & (remaining > 0)
    idx = np.flatnonzero(ok)
    ok[idx] = _bexp_unit_vec(rng, frac[idx], den[idx])
    return ok


#: Proposals drawn per pending output in one round of ``exp_weighted_indices``.
EXP_WEIGHTED_BATCH = 2048


def exp_weighted_indices(rng: np.random.Generator, s: Fraction, d: NDArray[np.int64],
                         m: int) -> NDArray[np.int64]:
    """m independent indices r in 0..len(d)-1 with P(r) = exp(-s d_r) / sum_j exp(-s d_j), exactly:
    uniform proposals (``rng.integers``) accepted by an exact Bernoulli(exp(-s d_r))
    (``bernoulli_exp_neg_vec``), drawn in batches of min(``EXP_WEIGHTED_BATCH``, 2 len(d)) per pending
    output (the first accepted proposal of an i.i.d. sequence has the same law as one at a time).
    Needs d >= 0 with min d = 0 (else a round may accept nothing for long), s.numerator max(d) < 2^62
    and s.denominator < 2^62. Expected proposals per output: len(d) / sum_r exp(-s d_r)."""
    d = np.asarray(d, dtype=np.int64)
    if d.ndim != 1 or d.size == 0 or (d < 0).any():
        raise ValueError("d must be a non-empty 1-d array of non-negative integers")
    if s < 0 or s.denominator >= _VEC_LIMIT or s.numerator * int(d.max()) >= _VEC_LIMIT:
        raise ValueError(f"need s >= 0, s's denominator < 2^62 and s.numerator * max(d) < 2^62, got s = {s}")
    out = np.empty(m, dtype=np.int64)
    pending = np.arange(m)
    batch = min(EXP_WEIGHTED_BATCH, 2 * d.size)
    while pending.size:
        prop = rng.integers(0, d.size, size=(pending.size, batch))
        acc = bernoulli_exp_neg_vec(rng, (s.numerator * d[prop]).reshape(-1),
                                    np.full(prop.size, s.denominator, dtype=np.int64)).reshape(prop.shape)
        hit = acc.any(axis=1)
        first = np.argmax(acc, axis=1)
        out[pending[hit]] = prop[hit, first[hit]]
        pending = pending[~hit]
    return out


def _geometric_e_vec(rng: np.random.Generator, size: int) -> NDArray[np.int64]:
    """V with P(V = v) = (1 - 1/e) e^-v: count Bernoulli(exp(-1)) successes before a failure."""
    v = np.zeros(size, dtype=np.int64)
    alive = np.ones(size, dtype=bool)
    while alive.any():
        idx = np.flatnonzero(alive)
        ones = np.ones(idx.size, dtype=np.int64)
        b = _bexp_unit_vec(rng, ones, ones)
        v[idx[b]] += 1
        alive[idx[~b]] = False
    return v


def _one_sided_vec(rng: np.random.Generator, t: int, m: int) -> NDArray[np.int64]:
    """Up to m draws of X >= 0 with P(X = x) proportional to exp(-x/t) [@canonne2020discrete, Alg. 2 before
    the division and the sign]: U uniform on {0..t-1} kept with probability exp(-U/t), X = U + t V with
    V ~ Geometric(1 - 1/e)."""
    u = rng.integers(0, t, size=m)
    u = u[bernoulli_exp_neg_vec(rng, u, np.full(m, t, dtype=np.int64))]
    v = _geometric_e_vec(rng, u.size)
    if (v > (_VEC_LIMIT - t) // t).any():
        raise OverflowError("a discrete Laplace draw exceeded the int64 range")
    return np.asarray(u + t * v, dtype=np.int64)


def _discrete_laplace_vec(rng: np.random.Generator, t: int, s: int, count: int) -> NDArray[np.int64]:
    """[@canonne2020discrete, Algorithm 2] on arrays: P(y) proportional to exp(-|y| s/t)."""
    out = np.empty(count, dtype=np.int64)
    filled = 0
    while filled < count:
        y = _one_sided_vec(rng, t, count - filled + 16) // s
        negative = rng.integers(0, 2, size=y.size) == 1
        vals = np.where(negative, -y, y)[~(negative & (y == 0))]
        take = min(vals.size, count - filled)
        out[filled:filled + take] = vals[:take]
        filled += take
    return out


def geometric_array(rng: np.random.Generator, t: int, shape: tuple[int, ...]) -> NDArray[np.int64]:
    """An array of independent exact draws of X >= 0 with P(X = x) proportional to exp(-x/t), for an
    integer 1 <= t <= ``VEC_MAX_DENOMINATOR`` (the one-sided geometric law)."""
    t = check_count("t", t, low=1, high=VEC_MAX_DENOMINATOR)
    shape = check_shape(shape)
    count = math.prod(shape)
    out = np.empty(count, dtype=np.int64)
    filled = 0
    while filled < count:
        x = _one_sided_vec(rng, t, count - filled + 16)
        take = min(x.size, count - filled)
        out[filled:filled + take] = x[:take]
        filled += take
    return out.reshape(shape)


def _discrete_gaussian_vec(rng: np.random.Generator, sigma2: Fraction, count: int) -> NDArray[np.int64]:
    """[@canonne2020discrete, Algorithm 3] on arrays; the acceptance exponent (q t |Y| - p)^2 / (2 p q t^2)
    for sigma2 = p/q is formed with Python integers, then split into whole and fractional parts."""
    p, q = sigma2.numerator, sigma2.denominator
    t = isqrt(p // q) + 1
    den = 2 * p * q * t * t
    out = np.empty(count, dtype=np.int64)
    filled = 0
    while filled < count:
        m = count - filled + 16
        y = _discrete_laplace_vec(rng, t, 1, m)
        a = np.abs(y).astype(object) * (q * t) - p
        num = a * a
        whole = np.asarray(num // den, dtype=np.int64)
        frac = np.asarray(num % den, dtype=np.int64)
        # exp(-(whole + frac/den)) = exp(-1)^whole * exp(-frac/den): two exact stages
        keep = bernoulli_exp_neg_vec(rng, whole, np.ones(m, dtype=np.int64))
        idx = np.flatnonzero(keep)
        keep[idx] = _bexp_unit_vec(rng, frac[idx], np.full(idx.size, den, dtype=np.int64))
        vals = y[keep]
        take = min(vals.size, count - filled)
        out[filled:filled + take] = vals[:take]
        filled += take
    return out


def discrete_laplace_array(rng: np.random.Generator, scale: Fraction,
                           shape: tuple[int, ...]) -> NDArray[np.int64]:
    """An array of independent exact discrete Laplace draws (vectorised when scale = t/s has
    t, s <= ``VEC_MAX_DENOMINATOR`` and there are at least ``VEC_MIN_COUNT`` draws, else the
    Python-integer loop); scale at most 2^52."""
    scale = _positive("scale", scale, ARRAY_MAX_SCALE)
    shape = check_shape(shape)
    count = math.prod(shape)
    if (count >= VEC_MIN_COUNT and scale.numerator <= VEC_MAX_DENOMINATOR
            and scale.denominator <= VEC_MAX_DENOMINATOR):
        return _discrete_laplace_vec(rng, scale.numerator, scale.denominator, count).reshape(shape)
    t, s = scale.numerator, scale.denominator
    out = np.fromiter((_discrete_laplace_int(rng, t, s) for _ in range(count)), dtype=np.int64, count=count)
    return out.reshape(shape)


def discrete_gaussian_array(rng: np.random.Generator, sigma2: Fraction,
                            shape: tuple[int, ...]) -> NDArray[np.int64]:
    """An array of independent exact discrete Gaussian draws (vectorised when 2 p q t^2 <=
    ``VEC_MAX_GAUSSIAN_DENOMINATOR`` for sigma2 = p/q, t = floor(sigma) + 1, and there are at least
    ``VEC_MIN_COUNT`` draws, else the Python-integer loop); sigma2 at most 2^100."""
    sigma2 = _positive("sigma2", sigma2, ARRAY_MAX_SIGMA2)
    shape = check_shape(shape)
    count = math.prod(shape)
    t = isqrt(sigma2.numerator // sigma2.denominator) + 1
    if (count >= VEC_MIN_COUNT
            and 2 * sigma2.numerator * sigma2.denominator * t * t <= VEC_MAX_GAUSSIAN_DENOMINATOR):
        return _discrete_gaussian_vec(rng, sigma2, count).reshape(shape)
    p, q = sigma2.numerator, sigma2.denominator
    out = np.fromiter((_discrete_gaussian_int(rng, p, q) for _ in range(count)), dtype=np.int64, count=count)
    return out.reshape(shape)


# ----------------------------------------------------------------------------- the lattice 2^e Z
#
# Float-safe release [@mironov2012significance]: values are rounded to the lattice 2^e Z, exact integer noise
# is added to the lattice index, and the sum is mapped back to a double. Dividing and multiplying by a
# power of two is exact, and every integer of magnitude <= 2^53 is a double, so every output is an
# exact multiple of 2^e and the set of reachable outputs does not depend on the input.

#: Largest lattice index magnitude accepted for a rounded input (the noise is added to it).
LATTICE_INPUT_LIMIT = 2**52
#: Largest lattice index magnitude of an output (integers up to 2^53 are exact doubles).
LATTICE_OUTPUT_LIMIT = 2**53


def floor_log2(x: Fraction) -> int:
    """floor(log2 x) for a rational x > 0, exactly."""
    x = Fraction(x)
    if x <= 0:
        raise ValueError(f"x must be > 0, got {x}")
    p, q = x.numerator, x.denominator
    e = p.bit_length() - q.bit_length()
    below = (p < q << e) if e >= 0 else (p << -e < q)
    return e - 1 if below else e


def _check_exponent(e: int) -> None:
    if not -1022 <= e <= 1023 - 54:
        raise ValueError(f"the lattice spacing 2^{e} is outside the range where 2^e Z is exact in doubles")


def to_lattice(values: FloatArray, e: int) -> NDArray[np.int64]:
    """round(values / 2^e) as int64 (half to even; any rounding within 1/2 is covered by the shift
    bounds of ``mechanisms.additive``). Raises ValueError for non-finite values or indices beyond
    ``LATTICE_INPUT_LIMIT`` (where the noise could leave the exactly representable range)."""
    _check_exponent(e)
    v = np.ldexp(np.asarray(values, dtype=np.float64), -e)  # exact: a power-of-two scaling
    if not np.isfinite(v).all() or (np.abs(v) > LATTICE_INPUT_LIMIT).any():
        raise ValueError(f"query value(s) too large for the lattice 2^{e} Z: |q/2^{e}| must be <= 2^52 "
                         f"(max |q| = {float(np.max(np.abs(values))):.6g})")
    return np.rint(v).astype(np.int64)


def from_lattice(index: NDArray[np.int64], e: int) -> FloatArray:
    """index * 2^e as exact doubles; raises OverflowError when some |index| > 2^53 (not exact)."""
    _check_exponent(e)
    idx = np.asarray(index, dtype=np.int64)
    if (np.abs(idx) > LATTICE_OUTPUT_LIMIT).any():
        raise OverflowError("a lattice output exceeded 2^53 grid steps and is not exactly representable")
    return np.ldexp(idx.astype(np.float64), e)
