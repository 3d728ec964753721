"""Local randomizers: k-ary randomized response [@warner1965randomized; @kairouz2016extremal]."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import FDP, FiniteLossTradeoff, Guarantee, PureDP
from accountant.validation import check_real

from .base import Mechanism, OutputSpec, check_rng, check_size
from .samplers import bernoulli_exp_neg_vec

__all__ = ["RandomizedResponse"]

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

    @property
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
        if x.dtype.kind not in "iuf" or not np.array_equal(x, np.round(x)):
            raise ValueError("records must be integers in 0..k-1")
        bad = (x < 0) | (x >= self.k)
        if np.any(bad):
            raise ValueError(f"records must lie in 0..{self.k - 1}; offending values: "
                             f"{np.unique(x[bad])[:5].tolist()}")
        return x.astype(np.int64)

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

    def log_pmf(self, y: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
        """log P(report y | record x), elementwise, of the law sampled (``sampling_eps``)."""
        yy = np.asarray(y)
        return np.where(yy == np.asarray(x), self._log_keep(), self._log_other())

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> NDArray[np.float64]:
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
        diff = self.log_pmf(yy, x1[None, ...]) - self.log_pmf(yy, x2[None, ...])
        return np.asarray(diff.reshape(diff.shape[0], -1).sum(axis=1), dtype=np.float64)

    def estimate_counts(self, reports: ArrayLike) -> NDArray[np.float64]:
        """Unbiased estimate of the true category counts from n reports:
        (count_j - n q) / (p - q), with p = p_keep and q = P(report y | record x != y)."""
        y = self._records(reports).ravel()
        p = self.p_keep
        q = math.exp(self._log_other())
        if p == q:
            raise ValueError("eps = 0: the reports carry no information")
        counts = np.bincount(y, minlength=self.k).astype(np.float64)
        return (counts - y.size * q) / (p - q)
