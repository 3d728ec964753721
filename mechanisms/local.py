"""Local randomizers: k-ary randomized response [@warner1965randomized; @kairouz2016extremal], the
L2-ball channel of Duchi, Jordan & Wainwright [@duchi2013local] and the per-coordinate (BCDP) mean
of Mechanism 1 [@aliakbarpour2025enhancing]."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import Any, Literal, Protocol

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray
from scipy import optimize

from accountant import (
    BCDP,
    FDP,
    CoordinateDP,
    FiniteLossTradeoff,
    Guarantee,
    LocalDP,
    PureDP,
    baseline_zeta,
    cdp_to_bcdp,
    implies,
    mean_cdp_vector,
)
from accountant.core.types import FloatArray
from accountant.core.validation import as_float_array, check_count, check_real, check_reals

from .base import Mechanism, OutputSpec, check_rng, check_size
from .samplers import bernoulli_exp_neg_vec

__all__ = ["BCDPMean", "ChannelFactory", "DuchiL2", "RandomizedResponse", "VectorChannel"]

#: The sampler's log-odds of flipping lie on the lattice 2^-LOG_ODDS_BITS Z ...
LOG_ODDS_BITS = 56
#: ... and are at least -LOG_ODDS_FLOOR (a flip has probability at least e^-64 > 1.6e-28 there),
#: so their integers fit int64.
LOG_ODDS_FLOOR = 64
#: Largest k: proposals are drawn with ``rng.integers``.
MAX_K = 2**62


@dataclass(frozen=True)
class RandomizedResponse(Mechanism):
    """k-ary randomized response on records in {0, ..., k-1}: keep the true value with probability
    e^eps/(e^eps + k - 1), otherwise report one of the k - 1 other values uniformly; eps-LDP.

    Applied record by record (``data`` may be one record or an array of records, each randomized
    independently). Neighbouring inputs differ in one record, so ``sensitivity`` is 1 (records
    changed). guarantee(): the exact curve ``FiniteLossTradeoff.randomized_response(eps, k)``;
    closed_form_guarantee(): ``PureDP(eps)``.

    Sampling is exact (a float threshold ``rng.random() < p`` realises ceil(p 2^53)/2^53: eps 36.04
    for a declared 36, and it never flips at eps >= 38). The report differs from the record with
    probability e^l/(1 + e^l), l = ``flip_log_odds``, a rational >= log(k - 1) - eps: propose "flip" or
    "keep" with a fair integer coin, accept the likelier one always and the other with probability
    exp(-|l|) (exact Bernoulli [@canonne2020discrete, Alg. 1]), repeat on rejection (at most 2 rounds
    expected); a flip reports a uniform other value (``rng.integers``). The law sampled is k-RR with
    eps' = ``sampling_eps`` = log(k - 1) - l <= eps (eps' = eps exactly when k = 2 and eps is on the
    lattice, e.g. an integer), at least as private as declared: k-RR with a smaller eps is a
    post-processing of k-RR with a larger one.
    """

    k: int
    eps: float

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)):
            raise TypeError(f"k must be an integer in [2, 2^62], got {self.k!r}")
        if not 2 <= self.k <= MAX_K:
            raise ValueError(f"k must be an integer in [2, 2^62], got {self.k!r}")
        object.__setattr__(self, "k", int(self.k))
        object.__setattr__(self, "eps", check_real("eps", self.eps, low=0.0, high=math.inf, high_open=True))

    @property
    def sensitivity(self) -> Any:
        return sympy.Integer(1)

    @cached_property
    def flip_log_odds(self) -> Fraction:
        """l = log P(flip)/P(keep) as sampled: log(k - 1) - eps rounded up to 2^-56 Z (log(k - 1) taken
        two ulps above math.log, exact 0 for k = 2), at least -64."""
        log_c = Fraction(0) if self.k == 2 else Fraction(
            math.nextafter(math.nextafter(math.log(self.k - 1), math.inf), math.inf))
        lam = max(log_c - Fraction(self.eps), Fraction(-LOG_ODDS_FLOOR))
        return Fraction(math.ceil(lam * 2**LOG_ODDS_BITS), 2**LOG_ODDS_BITS)

    @property
    def sampling_eps(self) -> float:
        """eps' = log(k - 1) - ``flip_log_odds`` <= eps: the privacy loss of the law sampled."""
        return math.log(self.k - 1) - float(self.flip_log_odds)

    @property
    def p_keep(self) -> float:
        """Probability of reporting the true value, 1/(1 + e^l) (= e^eps'/(e^eps' + k - 1))."""
        return math.exp(self._log_keep())

    def _log_keep(self) -> float:
        return -float(np.logaddexp(0.0, float(self.flip_log_odds)))

    def _log_other(self) -> float:
        """log P(report y | record x) for one y != x: l - log(1 + e^l) - log(k - 1)."""
        return float(self.flip_log_odds) + self._log_keep() - math.log(self.k - 1)

    def guarantee(self) -> Guarantee:
        return FDP(FiniteLossTradeoff.randomized_response(self.eps, self.k))

    def closed_form_guarantee(self) -> Guarantee:
        return PureDP(self.eps)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("discrete", (), f"one value in 0..{self.k - 1} per record")

    def _records(self, data: ArrayLike) -> NDArray[np.int64]:
        x = np.asarray(data)
        if x.dtype.kind not in "iuf" or (x.dtype.kind == "f" and not np.array_equal(x, np.round(x))):
            raise ValueError("records must be integers in 0..k-1")
        if x.size and (x.min() < 0 or x.max() >= self.k):
            bad = (x < 0) | (x >= self.k)
            raise ValueError(f"records must lie in 0..{self.k - 1}; offending values: "
                             f"{np.unique(x[bad])[:5].tolist()}")
        return x.astype(np.int64, copy=False)

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x = self._records(data)
        truth = np.broadcast_to(x, (m, *x.shape)).ravel()
        lam = self.flip_log_odds
        thin = abs(lam)  # the less likely proposal is accepted with probability exp(-|l|)
        flip = np.empty(truth.size, dtype=bool)
        pending = np.arange(truth.size)
        while pending.size:
            propose_flip = rng.integers(0, 2, size=pending.size) == 1
            thinned = propose_flip if lam < 0 else ~propose_flip
            accept = ~thinned
            idx = np.flatnonzero(thinned)
            accept[idx] = bernoulli_exp_neg_vec(rng, np.full(idx.size, thin.numerator, dtype=np.int64),
                                                np.full(idx.size, thin.denominator, dtype=np.int64))
            flip[pending[accept]] = propose_flip[accept]
            pending = pending[~accept]
        other = rng.integers(0, self.k - 1, size=truth.size)
        other += other >= truth  # uniform over the k - 1 values != the record
        return np.where(flip, other, truth).reshape((m, *x.shape))

    def sample(self, data: ArrayLike, rng: np.random.Generator, size: int | None = None) -> Any:
        """Randomize each record; outputs have the shape of ``data`` (stacked on axis 0 for ``size``)."""
        rng = check_rng(rng)
        m = check_size(size)
        out = self._sample(data, rng, m)
        return out[0] if size is None else out

    @cached_property
    def _log_probs(self) -> tuple[float, float]:
        """(log P(keep), log P(report one given other value)), computed once (frozen)."""
        return self._log_keep(), self._log_other()

    def log_pmf(self, y: ArrayLike, x: ArrayLike) -> FloatArray:
        """log P(report y | record x), elementwise, of the law sampled (``sampling_eps``)."""
        yy = np.asarray(y)
        keep, other = self._log_probs
        return np.where(yy == np.asarray(x), keep, other)

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        """Sum over records of log P(y_i | data_i) - log P(y_i | data2_i); y of the data's shape,
        optionally stacked on axis 0."""
        x1, x2 = self._records(data), self._records(data2)
        if x1.shape != x2.shape:
            raise ValueError(f"data and data2 must have the same shape, got {x1.shape} and {x2.shape}")
        yy = self._records(y)
        if yy.shape == x1.shape:
            yy = yy[None, ...]
        if yy.shape[1:] != x1.shape:
            raise ValueError(f"y must have shape {x1.shape} or (m, *{x1.shape}), got {yy.shape}")
        # per record, log_pmf(y_i, x1_i) - log_pmf(y_i, x2_i) is one of three differences of the two
        # log probabilities, indexed by [y_i == x1_i] - [y_i == x2_i] (0 where y_i equals both
        # records or neither: keep - keep = other - other = 0)
        keep, other = self._log_probs
        steps = np.array([other - keep, 0.0, keep - other])
        code = (yy == x1[None, ...]).view(np.int8) - (yy == x2[None, ...]).view(np.int8)
        diff = steps[(code + 1).reshape(code.shape[0], -1)]
        # one record: its term is the sum (no step is -0.0, which a sum would make +0.0)
        return np.asarray(diff[:, 0] if diff.shape[1] == 1 else diff.sum(axis=1), dtype=np.float64)

    def estimate_counts(self, reports: ArrayLike) -> FloatArray:
        """Unbiased estimate of the true category counts from n reports:
        (count_j - n q) / (p - q), with p = p_keep and q = P(report y | record x != y)."""
        y = self._records(reports).ravel()
        p = self.p_keep
        q = math.exp(self._log_other())
        if p == q:
            raise ValueError("eps = 0: the reports carry no information")
        counts = np.bincount(y, minlength=self.k).astype(np.float64)
        return (counts - y.size * q) / (p - q)


# --- the L2-ball channel and the per-coordinate mean [@aliakbarpour2025enhancing] -------------

#: Draws of ``rng.integers(0, 2^53)``: a double p in [1/2, 1] is a multiple of 2^-53, so
#: ``U < p 2^53`` is exactly Bern(p).
_DYADIC = 2**53


def _bernoulli_upper_half(rng: np.random.Generator, p: FloatArray) -> NDArray[np.bool_]:
    """Exact Bern(p) for doubles p in [1/2, 1] (each is k 2^-53 with k an integer)."""
    k = (p * _DYADIC).astype(np.int64)  # exact: p 2^53 is an integer below 2^53 + 1
    return np.asarray(rng.integers(0, _DYADIC, size=p.shape, dtype=np.int64) < k)


def _mean_abs_coordinate(k: int) -> float:
    """m_k = E|U_1| for U uniform on the unit sphere of R^k: Gamma(k/2) / (sqrt(pi) Gamma((k+1)/2))."""
    return math.exp(math.lgamma(k / 2) - math.lgamma((k + 1) / 2)) / math.sqrt(math.pi)


#: Smallest LDP level of ``DuchiL2`` (and smallest layer increment ``BCDPMean`` runs).
MIN_ALPHA = 1e-12


@dataclass(frozen=True)
class DuchiL2(Mechanism):
    """The alpha-LDP channel of Duchi, Jordan & Wainwright for records in the L2 ball of radius r in
    R^k [@duchi2013local; @aliakbarpour2025enhancing, Mechanism 2], unbiased.

    v_t = +- r v/||v|| with P(+) = 1/2 + ||v||/(2r) (so E v_t = v); then Z uniform on the sphere of
    radius B, in the hemisphere {z . v_t > 0} with probability p = e^alpha/(1 + e^alpha), else the
    other one. With m_k = E|U_1| (``_mean_abs_coordinate``) E[Z | v_t] = B (2p - 1) m_k v_t/r, so the
    unbiased radius is B = r / ((2p - 1) m_k) = r (e^alpha + 1)/(e^alpha - 1) sqrt(pi)
    Gamma((k+1)/2)/Gamma(k/2): half the radius printed in the box of Mechanism 2 (``printed_radius``,
    whose output has mean 2v). E[Z_j^2] = B^2/k whatever v (Z_j^2 is even and the two hemispheres
    are mirror images), so Var(Z_j) = B^2/k - v_j^2.

    Sampling: the hemisphere coin is the exact binary randomized response of ``RandomizedResponse``
    (log-odds on a 2^-56 lattice, ``sampling_alpha`` <= alpha, and B uses the p actually sampled);
    the sign S is an exact Bernoulli of the double 1/2 + ||v||/(2r) (it affects only the mean, not
    privacy); the direction is a Gaussian vector normalised in floats and then reflected into the
    chosen hemisphere, so the law of {u, -u} does not depend on v and each output z has probability
    p or 1 - p times that of its pair: the float law is sampling_alpha-LDP.
    """

    alpha: float
    radius: float
    dim: int

    def __post_init__(self) -> None:
        # below ~1e-12 the sphere's radius r/tanh(alpha/2) outgrows any useful double
        object.__setattr__(self, "alpha", check_real("alpha", self.alpha, low=MIN_ALPHA, high=700.0))
        object.__setattr__(self, "radius", check_real("radius", self.radius, low=0.0,
                                                      high=1e150, low_open=True))
        object.__setattr__(self, "dim", check_count("dim", self.dim, low=1, high=10**6))

    @cached_property
    def _coin(self) -> RandomizedResponse:
        return RandomizedResponse(2, self.alpha)

    @property
    def sampling_alpha(self) -> float:
        """The LDP level of the law sampled (<= alpha)."""
        return self._coin.sampling_eps

    @cached_property
    def sphere_radius(self) -> float:
        """The unbiased B for the hemisphere probability actually sampled."""
        lam = float(self._coin.flip_log_odds)  # = -sampling_alpha
        return self.radius / (math.tanh(-lam / 2.0) * _mean_abs_coordinate(self.dim))

    @property
    def printed_radius(self) -> float:
        """B as printed in [@aliakbarpour2025enhancing, Mechanism 2]: 2 ``sphere_radius`` (biased)."""
        k, a = self.dim, self.alpha
        return (math.sqrt(math.pi) * k * self.radius / math.tanh(a / 2.0)
                * math.exp(math.lgamma((k + 1) / 2) - math.lgamma(k / 2 + 1)))

    def coordinate_variance_bound(self) -> float:
        """max over the ball of Var(Z_j) = B^2/k (attained at v_j = 0)."""
        return self.sphere_radius**2 / self.dim

    @property
    def sensitivity(self) -> Any:
        return sympy.Integer(1)

    def guarantee(self) -> Guarantee:
        return LocalDP(self.alpha)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("continuous", (self.dim,),
                          f"a point on the sphere of radius {self.sphere_radius:.6g}")

    def _records(self, data: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """The records as (rows, k) and their norms."""
        x = as_float_array("data", data)
        if x.shape[-1:] != (self.dim,) or x.ndim > 2:
            raise ValueError(f"data must have shape ({self.dim},) or (n, {self.dim}), got {x.shape}")
        v = x.reshape(-1, self.dim)
        norms = np.sqrt(np.einsum("ij,ij->i", v, v))
        if not np.isfinite(norms).all() or (norms > self.radius * (1 + 1e-12)).any():
            raise ValueError(f"records must lie in the L2 ball of radius {self.radius}; largest norm "
                             f"{float(norms.max()):.6g}")
        return v, norms

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        shape = np.shape(data)
        v, norm = self._records(data)
        if m > 1:
            v, norm = np.tile(v, (m, 1)), np.tile(norm, m)
        rows = v.shape[0]
        # the sign S of v_t: only its product with the side of the draw matters below
        p_plus = np.minimum(0.5 + norm / (2.0 * self.radius), 1.0)
        sign_v = np.where(_bernoulli_upper_half(rng, p_plus), 1.0, -1.0)
        g = rng.standard_normal((rows, self.dim))
        gn = np.sqrt(np.einsum("ij,ij->i", g, g))
        while (gn == 0).any():  # probability 0, but a direction needs a non-zero vector
            bad = gn == 0
            g[bad] = rng.standard_normal((int(bad.sum()), self.dim))
            gn = np.sqrt(np.einsum("ij,ij->i", g, g))
        # side of g relative to v (the first axis when v = 0); the float dot of -g is exactly minus
        # that of g, so the decision for the pair {g, -g} is symmetric
        dot = np.where(norm > 0, np.einsum("ij,ij->i", g, v), g[:, 0])
        side = np.where(dot >= 0.0, 1.0, -1.0) * sign_v
        agree = self._coin.sample(np.ones(rows, dtype=np.int64), rng) == 1
        z = (self.sphere_radius * np.where(agree, side, -side) / gn)[:, None] * g
        return np.asarray(z.reshape((m, *shape)), dtype=np.float64)

    def sample(self, data: ArrayLike, rng: np.random.Generator, size: int | None = None) -> Any:
        """Privatise each record (shape (k,) or (n, k)); ``size`` stacks independent outputs."""
        rng = check_rng(rng)
        out = self._sample(data, rng, check_size(size))
        return out[0] if size is None else out


class VectorChannel(Protocol):
    """What Mechanism 1 needs of an LDP channel: unbiased outputs and a per-coordinate variance bound."""

    def sample(self, data: ArrayLike, rng: np.random.Generator, size: int | None = None) -> Any: ...

    def coordinate_variance_bound(self) -> float: ...

    def guarantee(self) -> Guarantee: ...


#: Builds an alpha-LDP channel for records in the L2 ball of radius r in R^k: (alpha, r, k).
ChannelFactory = Callable[[float, float, int], VectorChannel]

ZetaRule = Literal["minimax", "paper"]


def check_cdp_vector(c: Sequence[float]) -> tuple[float, ...]:
    """Mechanism 1's CDP vector: one level in [0, 700] per coordinate, non-decreasing, not all 0."""
    cs = check_reals("c", c, low=0.0, high=700.0)
    if not cs:
        raise ValueError("c must have one entry per coordinate, got ()")
    if any(b < a for a, b in itertools.pairwise(cs)):
        raise ValueError(f"c must be non-decreasing, got {list(cs)}")
    if cs[-1] == 0.0:
        raise ValueError("c must not be all zero (nothing would be released)")
    return cs


@dataclass(frozen=True)
class BCDPMean(Mechanism):
    """M_mean [@aliakbarpour2025enhancing, Mechanism 1] for records in [-1, 1]^d with a
    non-decreasing CDP vector c: layer k runs the (c_k - c_{k-1})-LDP ``channel`` on x_{k:d} (radius
    sqrt(d - k + 1)); coordinate i is estimated by the w-weighted mean of the layers k <= i,
    w_k = (c_k - c_{k-1})^2/(d - k + 1). Layers with an increment below ``MIN_ALPHA`` are not run
    (a coordinate covered by none is estimated by 0). The release is c-CDP and c_d-LDP (Theorem 2's
    proof), hence, under priors with dependence bound ``q`` on coordinates 1..d-1 (Assumption 1),
    BCDP with the vector of Prop. 4 (``guarantee()``). Unbiased whenever every coordinate is
    covered."""

    c: tuple[float, ...]
    q: float
    channel: ChannelFactory = DuchiL2

    def __post_init__(self) -> None:
        object.__setattr__(self, "c", check_cdp_vector(self.c))
        object.__setattr__(self, "q", check_real("q", self.q, low=0.0, high=1.0))
        if not callable(self.channel):
            raise TypeError("channel must be a callable (alpha, radius, dim) -> channel, got "
                            f"{self.channel!r}")
        _ = self._layers  # builds the channels and checks their declared levels

    @classmethod
    def calibrated(cls, target: BCDP, zeta: float | ZetaRule = "minimax", *, n: int | None = None,
                   channel: ChannelFactory = DuchiL2) -> BCDPMean:
        """Theorem 2's instance for a target delta-BCDP + eps-LDP (non-decreasing deltas, finite
        eps; q = the largest of q_1..q_{d-1}, Assumption 1). ``zeta``: a number in [0, 1], "paper" for
        the heuristic (1 + q)/2 of App. B.1, or "minimax" (default) for the zeta in [0, 1] that
        minimises ``worst_case_mse(n)`` over [-1, 1]^d for ``n`` users (required: with few users,
        leaving a coordinate out is cheaper than estimating it); that minimum is never above the
        baseline's, since
        ``accountant.baseline_zeta`` makes c = min(delta_1, eps) 1, the min-delta LDP channel."""
        if not isinstance(target, BCDP):
            raise TypeError(f"target must be a BCDP guarantee, got {type(target).__name__}")
        if math.isinf(target.eps):
            raise ValueError("target.eps must be finite: Mechanism 1 is also eps-LDP (Theorem 2)")
        q = max(target.qs[:-1], default=0.0)
        deltas, eps = target.deltas, target.eps

        def build(z: float) -> BCDPMean:
            return cls(mean_cdp_vector(deltas, eps, q, z), q, channel)

        if zeta == "paper":
            return build((1.0 + q) / 2.0)
        if zeta == "minimax":
            if n is None:
                raise ValueError("zeta='minimax' needs n, the number of users the mean is taken over")
            return _minimise_zeta(build, baseline_zeta(deltas, eps, q), check_count("n", n))
        if isinstance(zeta, str):
            raise ValueError(f"zeta must be a number in [0, 1], 'paper' or 'minimax', got {zeta!r}")
        return build(check_real("zeta", zeta, low=0.0, high=1.0))

    @property
    def dimension(self) -> int:
        return len(self.c)

    @cached_property
    def _layers(self) -> tuple[tuple[int, float, VectorChannel], ...]:
        """(start, weight, channel) of each layer with a positive increment."""
        out = []
        prev = 0.0
        d = self.dimension
        for k, ck in enumerate(self.c):
            inc = ck - prev
            prev = ck
            if inc >= MIN_ALPHA:  # a smaller increment (rounding) is not released: more private
                ch = self.channel(inc, math.sqrt(d - k), d - k)
                if not implies(ch.guarantee(), LocalDP(inc)):  # Theorem 2 composes these levels
                    raise ValueError(f"channel({inc!r}, ...) declares {ch.guarantee()}, which does not "
                                     f"imply the {inc:g}-LDP that layer {k + 1} needs")
                out.append((k, inc * inc / (d - k), ch))
        return tuple(out)

    def cdp_guarantee(self) -> CoordinateDP:
        """c-CDP and c_d-LDP (Theorem 2's proof)."""
        return CoordinateDP(self.c, self.c[-1])

    def guarantee(self) -> Guarantee:
        """The BCDP vector of Prop. 4 for dependence q on coordinates 1..d-1 (none assumed for d),
        with the LDP level c_d."""
        return cdp_to_bcdp(self.cdp_guarantee(), (self.q,) * (self.dimension - 1) + (1.0,))

    def closed_form_guarantee(self) -> Guarantee:
        return LocalDP(self.c[-1])

    @property
    def sensitivity(self) -> Any:
        return sympy.Integer(1)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("continuous", (self.dimension,), "an unbiased estimate of the record")

    def coordinate_variances(self) -> FloatArray:
        """Worst case over [-1, 1]^d of each coordinate's variance for one record: sum_k w_k^2 V_k /
        (sum_k w_k)^2 over the layers covering it, V_k the channel's ``coordinate_variance_bound``;
        inf for a coordinate no layer covers (it is estimated by 0, a bias)."""
        d = self.dimension
        num, den = np.zeros(d), np.zeros(d)
        for start, w, ch in self._layers:
            num[start:] += w * w * ch.coordinate_variance_bound()
            den[start:] += w
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(np.where(den > 0, num / den**2, math.inf), dtype=np.float64)

    def worst_case_mse(self, n: int) -> float:
        """max over n records in [-1, 1]^d of E||mean of the n outputs - mean of the records||^2
        (unprojected): the covered coordinates' variances over n (independent users), plus 1 (the
        largest squared mean) for each uncovered coordinate."""
        n = check_count("n", n)
        v = self.coordinate_variances()
        return float(v[np.isfinite(v)].sum() / n + np.isinf(v).sum())

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x = as_float_array("data", data)
        d = self.dimension
        if x.shape[-1:] != (d,) or x.ndim > 2 or (np.abs(x) > 1).any():
            raise ValueError(f"data must be records in [-1, 1]^{d}, shape ({d},) or (n, {d}); got "
                             f"shape {x.shape}")
        rows = np.broadcast_to(x.reshape(-1, d), (m, x.size // d, d)).reshape(-1, d)
        num = np.zeros(rows.shape)
        den = np.zeros(d)
        for start, w, ch in self._layers:
            num[:, start:] += w * np.asarray(ch.sample(rows[:, start:], rng))
            den[start:] += w
        est = np.divide(num, den, out=np.zeros_like(num), where=den > 0)
        return np.asarray(est.reshape((m, *x.shape)), dtype=np.float64)

    def sample(self, data: ArrayLike, rng: np.random.Generator, size: int | None = None) -> Any:
        """nu-hat for each record (shape (d,) or (n, d)); ``size`` stacks independent outputs."""
        rng = check_rng(rng)
        out = self._sample(data, rng, check_size(size))
        return out[0] if size is None else out


def _minimise_zeta(build: Callable[[float], BCDPMean], z_star: float, n: int) -> BCDPMean:
    """The instance of least ``worst_case_mse`` over zeta in (0, 1]: a grid of 100 points and
    zeta* (the baseline), then a bounded scalar search around the best grid point. The objective
    is piecewise smooth (rule (16) jumps where c_d crosses a delta_i), hence the grid first."""
    cache: dict[float, BCDPMean] = {}

    def mse(z: float) -> float:
        if z not in cache:
            cache[z] = build(z)
        return cache[z].worst_case_mse(n)

    grid = [i / 100 for i in range(1, 101)] + [z_star]  # zeta = 0 releases nothing when q > 0
    best = min(grid, key=mse)
    lo, hi = max(1e-3, best - 0.01), min(1.0, best + 0.01)
    res = optimize.minimize_scalar(mse, bounds=(lo, hi), method="bounded", options={"xatol": 1e-4})
    z = float(res.x)
    return cache[z] if mse(z) < mse(best) else cache[best]
