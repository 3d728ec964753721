"""Several quantiles in one exponential mechanism: JointExp [@gillenwater2021differentially] on a public
grid, sampled exactly.

Data x_1..x_n clipped to [lower, upper]; quantiles 0 < q_1 < ... < q_m < 1; the candidates c_0 < ...
< c_{K-1} are the K midpoints of a public grid of [lower, upper]. An output is a non-decreasing
sequence of candidates c_{r_1} <= ... <= c_{r_m}. With L(c) = #{i : x_i <= c}, the gaps g_j = L(c_{r_j}) -
L(c_{r_{j-1}}) (L(c_{r_0}) = 0, L(c_{r_{m+1}}) = n) and the target counts t_j = q_j n (t_0 = 0, t_{m+1} =
n), the utility is

    u(x, r) = - sum_{j=1}^{m+1} | g_j - (t_j - t_{j-1}) | = - sum_{j=1}^{m+1} | e_j - e_{j-1} |,

e_j = L(c_{r_j}) - t_j (e_0 = e_{m+1} = 0): minus the total variation of the rank errors along the path
0, e_1, .., e_m, 0. Replacing one record moves it from one gap to another: two terms change, each by
at most 1, so u has sensitivity 2 under replace-one [@gillenwater2021differentially, the utility's
sensitivity lemma, stated for swapping one record], and the exponential mechanism
P(r) proportional to exp(eps u / 4) is ``PureDP(eps)``. The paper's continuous version spreads each
output uniformly within the data intervals (the volume of a sorted k-tuple in one interval, l^k/k!);
on a grid the non-decreasing sequences of grid points, each counted once, play that role, and every
output is a public grid point (no floating-point output leaks).

Exactness. The targets are rounded to t_j = round(2^B q_j n) / 2^B (public constants, B =
``TARGET_BITS``), so E_j = 2^B e_j and U = 2^B u are integers and U has sensitivity 2^(B+1); the factor
per unit of U is the dyadic s <= eps / 2^(B+2) (``factor``), so exp(2 s 2^(B+1)) <= e^eps holds for what is
sampled. The paper samples by dynamic programming over intervals with float normalisers (an inverted
float CDF); here the law is sampled exactly by rejection instead. Since the path 0, e_1, .., e_m, 0 goes
out to every e_j and back, its total variation TV >= 2 max_j |E_j| >= (2/m) sum_j |E_j|, so

    exp(-s TV) 1[r sorted] = prod_j exp(-(2s/m) |E_j(r_j)|) * exp(-(s/m) (m TV - 2 sum_j |E_j|)) 1[r sorted]

with the last factor in [0, 1]: propose r_1..r_m independently, r_j with probability proportional to
exp(-(2s/m) |E_j|) (``samplers.exp_weighted_indices``: a single-quantile exponential mechanism each),
and accept with the exact Bernoulli(exp(-(s/m)(m TV - 2 sum |E_j|))) when the sequence is
non-decreasing. Accepted proposals have exactly the law proportional to exp(-s TV) on non-decreasing
sequences. For m = 2 the proposal is the pair of independent exponential mechanisms at eps/2 each (factor
eps/4 per rank) and the acceptance exp(-s |E_2 - E_1|) is what the joint mechanism adds: the two rank
errors are pulled together, so their difference (the error of q_2 - q_1 in ranks) shrinks. The acceptance
rate falls fast with m (the bound TV >= (2/m) sum |E_j| loosens): on 1000 N(0, 1) records at eps = 1
it was 0.35 for the quartiles, 0.09 for (0.25, 0.5, 0.75), 0.012 for (0.1, 0.25, 0.75, 0.9) and 0.002
for five quantiles; m is at most ``MAX_QUANTILES``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray
from scipy import special

from accountant import Guarantee, PureDP
from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real

from ..base import Mechanism, OutputSpec
from ..domain import Domain
from ..samplers import bernoulli_exp_neg_vec, exp_weighted_indices, floor_log2
from .stability import check_bounds, check_eps

__all__ = ["JointExponentialIQR", "JointExponentialQuantiles"]

#: Targets q_j n are rounded to multiples of 2^-TARGET_BITS.
TARGET_BITS = 2
#: Most quantiles released jointly (the rejection sampler's acceptance falls fast with m).
MAX_QUANTILES = 4
#: The factor s keeps about FACTOR_BITS significant bits (rounded down) and is at most 2^FACTOR_BITS.
FACTOR_BITS = 20
#: ... on a lattice no finer than 2^-55 (the acceptance denominators s.denominator m stay below 2^62).
MAX_FACTOR_DENOMINATOR_BITS = 55
#: Most outputs ``log_probabilities`` enumerates.
MAX_ENUMERATED = 2**20


def _check_quantiles(qs: object) -> tuple[float, ...]:
    if isinstance(qs, (str, bytes)) or not hasattr(qs, "__iter__"):
        raise TypeError(f"qs must be a sequence of quantiles in (0, 1), got {qs!r}")
    vals = tuple(check_real("qs", q, low=0.0, high=1.0, low_open=True, high_open=True) for q in qs)
    if not 1 <= len(vals) <= MAX_QUANTILES:
        raise ValueError(f"qs must hold 1 to {MAX_QUANTILES} quantiles, got {len(vals)}")
    if any(b <= a for a, b in itertools.pairwise(vals)):
        raise ValueError(f"qs must be strictly increasing, got {vals}")
    return vals


@dataclass(frozen=True)
class JointExponentialQuantiles(Mechanism):
    """JointExp [@gillenwater2021differentially] for the quantiles ``qs`` on ``bins`` midpoints of a
    public grid of [lower, upper] (module docstring): output the non-decreasing candidates (c_{r_1},
    .., c_{r_m}) with probability proportional to exp(eps u / 4), u = -(total variation of the rank
    errors), utility sensitivity 2 under replace-one (n records, public n). ``PureDP(eps)``; sampled
    exactly (module docstring)."""

    lower: float
    upper: float
    n: int
    eps: float
    qs: tuple[float, ...] = (0.25, 0.75)
    bins: int = 4096

    def __post_init__(self) -> None:
        lo, hi = check_bounds(self.lower, self.upper)
        object.__setattr__(self, "lower", lo)
        object.__setattr__(self, "upper", hi)
        object.__setattr__(self, "n", check_count("n", self.n, low=1, high=10**9))
        object.__setattr__(self, "eps", check_eps(self.eps))
        object.__setattr__(self, "qs", _check_quantiles(self.qs))
        object.__setattr__(self, "bins", check_count("bins", self.bins, low=2, high=2**24))

    @property
    def m(self) -> int:
        return len(self.qs)

    @property
    def candidates(self) -> FloatArray:
        w = (self.upper - self.lower) / self.bins
        return np.asarray(self.lower + (np.arange(self.bins) + 0.5) * w, dtype=np.float64)

    @property
    def targets(self) -> NDArray[np.int64]:
        """2^B t_j = round(2^B q_j n), j = 1..m (exact rationals, ties to even)."""
        return np.array([round(Fraction(q) * self.n * 2**TARGET_BITS) for q in self.qs], dtype=np.int64)

    @property
    def factor(self) -> Fraction:
        """s: exp(-s TV) per unit of U = 2^B u; eps / 2^(B+2) rounded down to FACTOR_BITS significant bits,
        on a lattice no finer than 2^-55, at most 2^FACTOR_BITS (a smaller s only strengthens the
        guarantee)."""
        exact = Fraction(self.eps) / 2 ** (TARGET_BITS + 2)
        bits = min(MAX_FACTOR_DENOMINATOR_BITS, max(0, FACTOR_BITS - floor_log2(exact)))
        return min(Fraction(math.floor(exact * 2**bits), 2**bits), Fraction(2**FACTOR_BITS))

    @property
    def sensitivity(self) -> Any:
        """Of the utility u (in records), under replace-one."""
        return sympy.Integer(2)

    def guarantee(self) -> Guarantee:
        return PureDP(self.eps)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("discrete", (self.m,), f"non-decreasing midpoints of {self.bins} bins of "
                                                 f"[{self.lower}, {self.upper}]")

    def errors(self, data: ArrayLike) -> NDArray[np.int64]:
        """E[j, r] = 2^B (L(c_r) - t_j): the scaled rank error of candidate r as quantile j."""
        x = np.sort(Domain(self.lower, self.upper, self.n, clip=True).validate(data))
        below = np.searchsorted(x, self.candidates, side="right").astype(np.int64)
        return (below[None, :] << TARGET_BITS) - self.targets[:, None]

    def log_probabilities(self, data: ArrayLike) -> tuple[NDArray[np.int64], FloatArray]:
        """Every output (non-decreasing index sequences, rows) and its log-probability under the law
        sampled, by enumeration (at most ``MAX_ENUMERATED`` outputs: small grids, for tests and audits)."""
        if math.comb(self.bins + self.m - 1, self.m) > MAX_ENUMERATED:
            raise ValueError(f"{self.bins} bins and {self.m} quantiles give more than {MAX_ENUMERATED} "
                             "outputs to enumerate")
        seqs = np.array(list(itertools.combinations_with_replacement(range(self.bins), self.m)),
                        dtype=np.int64).reshape(-1, self.m)
        tv = _total_variation(self.errors(data), seqs)
        logits = -float(self.factor) * tv.astype(np.float64)
        return seqs, np.asarray(logits - special.logsumexp(logits), dtype=np.float64)

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        c = self.candidates
        arr = self._validate_pair(y, (self.m,))
        idx = np.searchsorted(c, arr)
        if (idx >= c.size).any() or not np.array_equal(c[np.minimum(idx, c.size - 1)], arr):
            raise ValueError("outputs must be candidates of this mechanism")
        if (np.diff(idx, axis=1) < 0).any():
            raise ValueError("outputs must be non-decreasing")
        seqs, lp = self.log_probabilities(data)
        _, lq = self.log_probabilities(data2)
        # position of a non-decreasing sequence among the combinations with replacement, by lookup
        where = {tuple(s): i for i, s in enumerate(seqs.tolist())}
        pos = np.array([where[tuple(r)] for r in idx.tolist()], dtype=np.int64)
        return np.asarray(lp[pos] - lq[pos], dtype=np.float64)

    def sample_indices(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[np.int64]:
        """m draws of (r_1, .., r_m), shape (m, len(qs)), by the exact rejection sampler (module
        docstring)."""
        e = self.errors(data)
        k = self.m
        s = self.factor
        prop = Fraction(2 * s.numerator, s.denominator * k)  # 2s/m per unit of |E_j|
        dist = np.abs(e)
        dist = dist - dist.min(axis=1, keepdims=True)
        out = np.empty((m, k), dtype=np.int64)
        pending = np.arange(m)
        while pending.size:
            r = np.stack([exp_weighted_indices(rng, prop, dist[j], pending.size) for j in range(k)], axis=1)
            slack = k * _total_variation(e, r) - 2 * np.abs(e[np.arange(k)[None, :], r]).sum(axis=1)
            ordered = (np.diff(r, axis=1) >= 0).all(axis=1)
            acc = np.zeros(pending.size, dtype=bool)
            idx = np.flatnonzero(ordered)
            acc[idx] = bernoulli_exp_neg_vec(rng, s.numerator * slack[idx],
                                             np.full(idx.size, s.denominator * k, dtype=np.int64))
            out[pending[acc]] = r[acc]
            pending = pending[~acc]
        return out

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        return self.candidates[self.sample_indices(data, rng, m)]


def _total_variation(e: NDArray[np.int64], seqs: NDArray[np.int64]) -> NDArray[np.int64]:
    """sum_{j=1}^{m+1} |E_j - E_{j-1}| (E_0 = E_{m+1} = 0) of each row of candidate indices."""
    k = e.shape[0]
    path = e[np.arange(k)[None, :], seqs]
    zero = np.zeros((seqs.shape[0], 1), dtype=np.int64)
    return np.asarray(np.abs(np.diff(np.concatenate([zero, path, zero], axis=1), axis=1)).sum(axis=1),
                      dtype=np.int64)


@dataclass(frozen=True)
class JointExponentialIQR(Mechanism):
    """The interquartile range c_{r_2} - c_{r_1} of one ``JointExponentialQuantiles`` draw of the quartiles
    (0.25, 0.75) [@gillenwater2021differentially]: post-processing, ``PureDP(eps)`` under replace-one."""

    lower: float
    upper: float
    n: int
    eps: float
    bins: int = 4096

    def __post_init__(self) -> None:
        object.__setattr__(self, "bins", self.quartiles.bins)
        object.__setattr__(self, "n", self.quartiles.n)
        object.__setattr__(self, "eps", self.quartiles.eps)
        object.__setattr__(self, "lower", self.quartiles.lower)
        object.__setattr__(self, "upper", self.quartiles.upper)

    @property
    def quartiles(self) -> JointExponentialQuantiles:
        return JointExponentialQuantiles(self.lower, self.upper, self.n, self.eps, (0.25, 0.75), self.bins)

    @property
    def sensitivity(self) -> Any:
        return self.quartiles.sensitivity

    def guarantee(self) -> Guarantee:
        return self.quartiles.guarantee()

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("discrete", (), f"a difference of two of {self.bins} grid midpoints, >= 0")

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        q = self.quartiles.sample(data, rng, size=m)
        return np.asarray(q[:, 1] - q[:, 0], dtype=np.float64)
