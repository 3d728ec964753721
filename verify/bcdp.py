"""Per-coordinate privacy checked on finite priors [@aliakbarpour2025enhancing].

For a prior on finitely many records and a mechanism with finitely many outputs (or a finite
partition of its outputs, a post-processing, Prop. 5), the BCDP level of coordinate i is

    delta_i = max over y, a, a' of log P(M(x) = y | x_i = a) / P(M(x) = y | x_i = a'),

because P(R | x_i in S) is a sum over y in R and an average over a in S (a ratio of sums is at most
the largest ratio of terms), and Theorem 1 reads it as the eps of the test between x_i = a and
x_i = a'. ``enumerate_bcdp`` computes it from the mechanism's output pmf (float arithmetic:
enumeration, not a certified bound); ``sampled_bcdp_check`` is the black-box version, an audit: it
picks (y, a, a') on one half of the samples and bounds the ratio below on the other half with exact
Clopper-Pearson bounds [@clopper1934use], so it can refute a claimed delta_i at a stated error level
and never certifies one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real, check_reals

from .audit.stats import cp_lower, cp_upper

__all__ = [
    "BCDPCheck",
    "FinitePrior",
    "enumerate_bcdp",
    "enumerate_cdp",
    "enumerate_ldp",
    "sampled_bcdp_check",
]

#: A mechanism's output law on a finite prior's support: (m, d) records -> (m, k) pmf rows.
Channel = Callable[[FloatArray], FloatArray]
#: A black-box mechanism: (n, d) records and a Generator -> n outputs (rows, stacked on axis 0).
Sampler = Callable[[FloatArray, np.random.Generator], ArrayLike]


@dataclass(frozen=True)
class FinitePrior:
    """A prior on finitely many records: ``support`` (m, d) and ``probs`` (m,), positive, sum 1."""

    support: FloatArray
    probs: FloatArray

    def __post_init__(self) -> None:
        x = np.asarray(self.support, dtype=np.float64)
        p = np.asarray(self.probs, dtype=np.float64)
        if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
            raise ValueError(f"support must be an (m, d) array of records, got shape {x.shape}")
        if p.shape != (x.shape[0],):
            raise ValueError(f"probs must have one entry per record ({x.shape[0]}), got {p.shape}")
        if not np.isfinite(x).all() or not np.isfinite(p).all() or (p <= 0).any() \
                or abs(p.sum() - 1.0) > 1e-9:
            raise ValueError("probs must be positive and sum to 1, and the support finite")
        object.__setattr__(self, "support", x)
        object.__setattr__(self, "probs", p / p.sum())

    @property
    def dimension(self) -> int:
        return int(self.support.shape[1])

    @classmethod
    def appendix_b1(cls, d: int, q: float, values: tuple[float, float] = (0.0, 1.0)) -> FinitePrior:
        """Z ~ Bern(1/2); x = (Z, ..., Z) with probability q, else d i.i.d. Bern(1/2) bits
        [@aliakbarpour2025enhancing, App. B.1, eqs. (59)-(60)], bits mapped to ``values``; its
        dependence bound (eq. (13)) is q for every coordinate."""
        d = check_count("d", d, low=1, high=20)
        q = check_real("q", q, low=0.0, high=1.0)
        bits = (np.arange(2**d)[:, None] >> np.arange(d)[None, :]) & 1
        same = (bits == bits[:, :1]).all(axis=1)
        probs = (1.0 - q) / 2**d + np.where(same, q / 2.0, 0.0)
        keep = probs > 0
        return cls(np.asarray(values, dtype=np.float64)[bits[keep]], probs[keep])

    @classmethod
    def uniform_bits(cls, d: int) -> FinitePrior:
        """d independent Bern(1/2) bits (q = 0)."""
        return cls.appendix_b1(d, 0.0)

    def values(self, i: int) -> FloatArray:
        return np.unique(self.support[:, i])

    def conditional_weights(self, i: int) -> FloatArray:
        """(v, m): row a is the law of the record given x_i = values(i)[a]."""
        onehot = self.support[None, :, i] == self.values(i)[:, None]
        w = onehot * self.probs[None, :]
        return np.asarray(w / w.sum(axis=1, keepdims=True), dtype=np.float64)

    def dependence(self) -> tuple[float, ...]:
        """q_i = max over S, S' of TV(pi_{x_-i | x_i in S}, pi_{x_-i | x_i in S'}) (eq. (13)); TV is
        jointly convex, so singletons S = {a}, S' = {a'} attain it."""
        out = []
        for i in range(self.dimension):
            rest = np.delete(self.support, i, axis=1)
            _, key = np.unique(rest, axis=0, return_inverse=True)
            w = self.conditional_weights(i)
            marg = np.zeros((w.shape[0], int(key.max()) + 1))
            np.add.at(marg.T, key.ravel(), w.T)
            tv = 0.5 * np.abs(marg[:, None, :] - marg[None, :, :]).sum(axis=2)
            out.append(float(tv.max()))
        return tuple(out)


def _pmf(prior: FinitePrior, channel: Channel) -> FloatArray:
    pmf = np.asarray(channel(prior.support), dtype=np.float64)
    if pmf.ndim != 2 or pmf.shape[0] != prior.support.shape[0]:
        raise ValueError(f"channel must return an (m, k) pmf for the m = {prior.support.shape[0]} "
                         f"records, got shape {pmf.shape}")
    if (pmf < 0).any() or np.abs(pmf.sum(axis=1) - 1.0).max() > 1e-9:
        raise ValueError("channel rows must be probability vectors")
    return pmf


def _max_log_ratio(rows: FloatArray) -> float:
    """max over y and row pairs of log rows[a, y] / rows[b, y] (inf where only one is 0)."""
    hi, lo = rows.max(axis=0), rows.min(axis=0)
    live = hi > 0
    if (lo[live] == 0).any():
        return math.inf
    return float(np.max(np.log(hi[live]) - np.log(lo[live]), initial=0.0))


def enumerate_bcdp(prior: FinitePrior, channel: Channel) -> tuple[float, ...]:
    """Each coordinate's BCDP level under ``prior`` (Def. 4), by enumeration (module docstring)."""
    pmf = _pmf(prior, channel)
    return tuple(_max_log_ratio(prior.conditional_weights(i) @ pmf) for i in range(prior.dimension))


def enumerate_ldp(prior: FinitePrior, channel: Channel) -> float:
    """The LDP level on the prior's support (Def. 1): max over y and records of the log ratio."""
    return _max_log_ratio(_pmf(prior, channel))


def enumerate_cdp(prior: FinitePrior, channel: Channel) -> tuple[float, ...]:
    """The CDP vector on the prior's support (Def. 3): records that differ only in coordinate i."""
    pmf = _pmf(prior, channel)
    out = []
    for i in range(prior.dimension):
        _, key = np.unique(np.delete(prior.support, i, axis=1), axis=0, return_inverse=True)
        key = key.ravel()
        out.append(max(_max_log_ratio(pmf[key == k]) for k in np.unique(key)))
    return tuple(out)


@dataclass(frozen=True)
class BCDPCheck:
    """The sampled check of one coordinate: the best (output cell, a, a') chosen on the first half,
    and on the second half ``lower``, a lower confidence bound on log P(cell | x_i = a) /
    P(cell | x_i = a') holding with probability >= 1 - ``gamma``; ``refuted`` when it exceeds the
    claimed delta."""

    coordinate: int
    values: tuple[float, float]
    cell: tuple[float, ...]
    counts: tuple[int, int]
    n: int
    lower: float
    claimed: float
    gamma: float

    @property
    def refuted(self) -> bool:
        return self.lower > self.claimed


def _draw(prior: FinitePrior, i: int, a: int, n: int, rng: np.random.Generator) -> FloatArray:
    w = prior.conditional_weights(i)[a]
    idx = rng.choice(w.size, size=n, p=w)
    return prior.support[idx]


def _cells(out: ArrayLike, n: int) -> FloatArray:
    y = np.asarray(out, dtype=np.float64).reshape(n, -1)
    return y


def sampled_bcdp_check(prior: FinitePrior, mechanism: Sampler, claimed: Sequence[float], n: int,
                       rng: np.random.Generator, *, gamma: float = 1e-3,
                       cells: Callable[[FloatArray], ArrayLike] | None = None,
                       ) -> tuple[BCDPCheck, ...]:
    """Test a claimed BCDP vector by sampling: for each coordinate i and each pair of its values,
    n records from the prior given x_i = a (drawn by index: the prior's masses are the law sampled,
    the check does not certify) go through ``mechanism``; outputs (mapped through ``cells``, a
    finite partition, when given) are counted. Half the draws choose the likeliest-to-refute
    (cell, a, a'), the other half bound its log ratio below at level gamma / d (Bonferroni over
    coordinates; each of the two binomial bounds at half of that)."""
    claim = check_reals("claimed", claimed, low=0.0)
    d = prior.dimension
    if len(claim) != d:
        raise ValueError(f"claimed must have one entry per coordinate ({d}), got {len(claim)}")
    n = check_count("n", n, low=2)
    gamma = check_real("gamma", gamma, low=0.0, high=1.0, low_open=True, high_open=True)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    half = n // 2
    level = gamma / d / 2.0
    results = []
    for i in range(d):
        vals = prior.values(i)
        outs = []
        for a in range(vals.size):
            y = np.asarray(mechanism(_draw(prior, i, a, n, rng), rng))
            if cells is not None:
                y = np.asarray(cells(y))
            outs.append(_cells(y, n))
        cellset, inv = np.unique(np.concatenate(outs), axis=0, return_inverse=True)
        inv = inv.ravel().reshape(vals.size, n)
        k = cellset.shape[0]
        sel = np.stack([np.bincount(r[:half], minlength=k) for r in inv])
        ev = np.stack([np.bincount(r[half:], minlength=k) for r in inv])
        # selection: the largest smoothed log ratio on the first half
        score = np.log(sel[:, None, :] + 0.5) - np.log(sel[None, :, :] + 0.5)
        a, b, c = (int(j) for j in np.unravel_index(int(np.argmax(score)), score.shape))
        m = n - half
        lo = float(cp_lower(ev[a, c], m, level))
        hi = float(cp_upper(ev[b, c], m, level))
        lower = math.log(lo / hi) if lo > 0 else -math.inf
        results.append(BCDPCheck(i, (float(vals[a]), float(vals[b])), tuple(cellset[c].tolist()),
                                 (int(ev[a, c]), int(ev[b, c])), m, max(lower, 0.0), claim[i], gamma))
    return tuple(results)
