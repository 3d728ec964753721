"""The staircase mechanism [@geng2016optimal] on a power-of-two lattice: the pure eps-DP additive noise
of least variance for a real query of L1 sensitivity Delta (d = 1).

Continuous law: density proportional to exp(-eps j) on |z| in [j Delta, (j + gamma) Delta) and
exp(-eps (j + 1)) on [(j + gamma) Delta, (j + 1) Delta), j = 0, 1, ...; shifting z by at most Delta
moves it by at most one stair, so the density ratio is at most e^eps. With b = e^-eps the variance
is minimised at gamma* = -b/(1 - b) + (b - 2b^2 + 2b^4 - b^5)^(1/3) / (2^(1/3) (1 - b)^2)
(Geng & Viswanath's optimum for the cost z^2 [@geng2016optimal]; the tests check it against a
direct minimisation); at eps = 1 it is 0.959 of the Laplace mechanism's 2 (Delta/eps)^2, and the
ratio falls as eps grows (0.69 at eps = 3).

Float-safe release (as ``Laplace``'s grid sampler): the answer is rounded to the lattice
2^e Z, e = floor(log2(Delta/eps)) - ``STAIRCASE_GRID_BITS``, and integer noise Z is added, so the
output is 2^e (round(q/2^e) + Z). Rounding moves an answer by at most half a step, so neighbours'
lattice indices differ by at most K = floor(Delta/2^e) + 1 steps. Z has pmf proportional to
exp(-eps_r t(z)), t(z) = floor((|z| + K - g)/K): stairs of K lattice points, the central one
{|z| < g} of 2g - 1 points (1 <= g <= K, g = round(gamma* K)). For |s| <= K, ||z + s| - |z|| <= K,
so t(z + s) and t(z) differ by at most 1 and the pmf ratio is at most exp(eps_r): the release is
``PureDP(eps_r)`` whatever g, with eps_r = eps rounded down to a multiple of 2^-30 (an exact rational,
so the sampler is exact).

Exact sampler (integers only): with eps_r = a/b in lowest terms, X >= 0 with P(X = x) proportional to
exp(-x/b) (``samplers.geometric_array``, exact [@canonne2020discrete, Alg. 2]) gives the stair index
T = floor(X/a), P(T = t) proportional to sum_{x = ta}^{ta + a - 1} exp(-x/b), i.e. to exp(-eps_r t)
(expected work O(1) for every eps, as the discrete Laplace's); T = 0 is kept
with probability (2g - 1)/(2K) (a uniform integer below 2K compared with 2g - 1), T >= 1 always (each
stair t >= 1 has 2K points, the central one 2g - 1), else redrawn; then Z is uniform on the stair's
points. So P(Z = z) is proportional to exp(-eps_r t(z)), exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accountant import Guarantee, PureDP
from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real

from ..base import Mechanism, OutputSpec
from ..domain import is_numeric, to_float_up
from ..queries import Query
from ..samplers import check_shape, floor_log2, from_lattice, geometric_array, to_lattice

__all__ = ["Staircase", "staircase_array", "staircase_gamma", "staircase_variance_ratio"]

#: Lattice spacing: 2^(floor(log2(Delta/eps)) - STAIRCASE_GRID_BITS), as ``Laplace``'s grid.
STAIRCASE_GRID_BITS = 16
#: eps_r = floor(eps 2^EPS_BITS) / 2^EPS_BITS.
EPS_BITS = 30


def staircase_gamma(eps: float) -> float:
    """gamma*(eps): the share of each stair at the lower level that minimises the variance
    [@geng2016optimal] (module docstring)."""
    eps = check_real("eps", eps, low=0.0, high=700.0, low_open=True)
    b = math.exp(-eps)
    root = (b - 2 * b**2 + 2 * b**4 - b**5) ** (1.0 / 3.0)
    return float(min(1.0, max(0.0, -b / (1 - b) + root / (2.0 ** (1.0 / 3.0) * (1 - b) ** 2))))


def staircase_variance_ratio(eps: float, gamma: float | None = None) -> float:
    """Variance of the continuous staircase (Delta = 1) over the Laplace mechanism's 2/eps^2: with
    b = e^-eps, E Z^2 = sum_j [b^j ((j + g)^3 - j^3) + b^(j+1) ((j + 1)^3 - (j + g)^3)] / (3 c),
    c = (g + (1 - g) b)/(1 - b) the half-normaliser, summed in closed form through
    S_k = sum_j j^k b^j (k <= 2; the cubes cancel)."""
    eps = check_real("eps", eps, low=0.0, high=700.0, low_open=True)
    g = staircase_gamma(eps) if gamma is None else check_real("gamma", gamma, low=0.0, high=1.0)
    b = math.exp(-eps)
    s0 = 1 / (1 - b)
    s1 = b / (1 - b) ** 2
    s2 = b * (1 + b) / (1 - b) ** 3
    # (j + g)^3 - j^3 = 3g j^2 + 3g^2 j + g^3; (j + 1)^3 - (j + g)^3 = 3(1 - g) j^2 + 3(1 - g^2) j + 1 - g^3
    inner = 3 * g * s2 + 3 * g * g * s1 + g**3 * s0
    outer = b * (3 * (1 - g) * s2 + 3 * (1 - g * g) * s1 + (1 - g**3) * s0)
    c = (g + (1 - g) * b) / (1 - b)
    return (inner + outer) / (3 * c) / (2 / eps**2)


def staircase_array(rng: np.random.Generator, eps: Fraction, stair: int, centre: int,
                    shape: tuple[int, ...]) -> NDArray[np.int64]:
    """Independent exact draws of Z with P(Z = z) proportional to exp(-eps t(z)),
    t(z) = floor((|z| + stair - centre)/stair) (module docstring); eps a positive rational with
    numerator and denominator below 2^40, 1 <= centre <= stair <= 2^40."""
    if not isinstance(eps, Fraction) or eps <= 0 or eps.numerator >= 2**40 or eps.denominator >= 2**40:
        raise ValueError(f"eps must be a positive Fraction with numerator and denominator below 2^40, "
                         f"got {eps!r}")
    stair = check_count("stair", stair, low=1, high=2**40)
    centre = check_count("centre", centre, low=1, high=stair)
    shape = check_shape(shape)
    count = math.prod(shape)
    out = np.empty(count, dtype=np.int64)
    filled = 0
    while filled < count:
        m = count - filled
        t = geometric_array(rng, eps.denominator, (m,)) // eps.numerator
        u = rng.integers(0, 2 * stair, size=m)
        keep = (t > 0) | (u < 2 * centre - 1)
        t, u = t[keep], u[keep]
        z = np.where(t == 0, u - (centre - 1),
                     np.where(u < stair, 1, -1) * (centre + (t - 1) * stair + u % stair))
        out[filled:filled + z.size] = z
        filled += z.size
    return out.reshape(shape)


@dataclass(frozen=True)
class Staircase(Mechanism):
    """q(D) + staircase noise, ``PureDP(eps_r)`` (module docstring): the pure-DP additive release of
    least variance; ``Staircase(query, eps)`` for a 1-d query with numeric L1 sensitivity Delta.
    ``sensitivity`` is the query's (sympy); ``guarantee()`` is ``PureDP(eps_r)``, eps_r <= eps."""

    query: Query
    eps: float

    def __post_init__(self) -> None:
        if not isinstance(self.query, Query):
            raise TypeError(f"query must be a mechanisms Query, got {type(self.query).__name__}")
        object.__setattr__(self, "eps", check_real("eps", self.eps, low=2.0**-20, high=64.0))
        k = self.query.output_dim
        if not is_numeric(k) or int(k) != 1:
            raise ValueError(f"Staircase releases a 1-d query, got output dimension {k}")
        if not is_numeric(self.sensitivity) or not float(self.sensitivity) > 0:
            raise ValueError(f"the query's L1 sensitivity must be a positive number, got {self.sensitivity}")

    @property
    def sensitivity(self) -> Any:
        return self.query.l1

    @cached_property
    def _constants(self) -> tuple[int, int, int, Fraction]:
        """(e, K, g, eps_r): lattice exponent, stair width and central half-width in lattice steps,
        and the exact per-stair exponent."""
        delta = Fraction(to_float_up("Delta", self.sensitivity))
        eps_r = Fraction(math.floor(Fraction(self.eps) * 2**EPS_BITS), 2**EPS_BITS)
        e = floor_log2(delta / eps_r) - STAIRCASE_GRID_BITS
        k = math.floor(delta / Fraction(2) ** e) + 1
        g = min(k, max(1, round(staircase_gamma(float(eps_r)) * k)))
        return e, k, g, eps_r

    @property
    def lattice_exponent(self) -> int:
        return self._constants[0]

    @property
    def stair(self) -> int:
        """K = floor(Delta/2^e) + 1: the stair width in lattice steps (the shift bound)."""
        return self._constants[1]

    @property
    def centre(self) -> int:
        """g: the central stair is {|z| < g}."""
        return self._constants[2]

    @property
    def eps_exact(self) -> Fraction:
        """eps_r: the exponent per stair, the declared eps."""
        return self._constants[3]

    def guarantee(self) -> Guarantee:
        return PureDP(float(self.eps_exact))

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("continuous", (), f"2^{self.lattice_exponent} Z")

    def lattice_log_pmf(self, z: ArrayLike) -> FloatArray:
        """log P(Z = z) + constant: -eps_r t(z)."""
        _, k, g, eps_r = self._constants
        arr = np.abs(np.asarray(z, dtype=np.float64))
        return np.asarray(-float(eps_r) * np.floor((arr + k - g) / k), dtype=np.float64)

    def _index(self, data: ArrayLike) -> int:
        return int(to_lattice(self.query(data), self.lattice_exponent)[0])

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        e, k, g, eps_r = self._constants
        return from_lattice(self._index(data) + staircase_array(rng, eps_r, k, g, (m,)), e)

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        """log p_data(y) - log p_data2(y) on the lattice (outputs off it have probability 0 under both)."""
        arr = self._validate_pair(y, ()).reshape(-1)
        n = np.ldexp(arr, -self.lattice_exponent)
        return self.lattice_log_pmf(n - self._index(data)) - self.lattice_log_pmf(n - self._index(data2))
