"""Distributional privacy over a set of databases [@zhou2009differential, Def. 2.3-2.4, Thm 2.5].

For a set S_n = {X_1, X_2, ...} of databases of n records (n x p, columns normalised, eq. (4)), a
distance V between databases and a constraint delta, a release A (a law f_X on outputs given X) is

- (alpha, delta)-distributionally private on S_n when f_{X_i}(out) <= e^alpha f_{X_j}(out) for every
  output and every X_i, X_j in S_n with V(X_i, X_j) <= delta, *however many rows they differ in*
  (Def. 2.4);
- (alpha, delta)-differentially private on S_n (Def. 2.3) when the same holds for the pairs that
  differ in exactly one row; hence distributional privacy implies it (Thm 2.5).

V is the paper's covariance distance V(X_i, X_j) = max_{l,k} |Sigma_i(l,k) - Sigma_j(l,k)|,
Sigma = X'X/n (eq. (6)); Delta_max(S_n) is its largest value over the set.

The release is compression with truncation (``compression.CompressedRelease`` with a reference
covariance: Procedures 4.1, 4.2), whose sup log density ratio for one pair is bounded by
``compression.truncated_loss_bound`` (the box relaxation: an upper bound). ``distributional_privacy``
takes the largest over the constrained pairs of S_n, enumerated exactly (pairs with equal covariances
counted once: the release's law depends on X only through Sigma). So ``alpha`` is an upper bound on
the smallest alpha of Def. 2.4 for that set, and ``differential_alpha`` one for Def. 2.3.
The untruncated release (no reference) has an unbounded ratio unless the covariances are equal.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numpy.typing import ArrayLike

from accountant.core.types import FloatArray
from accountant.core.validation import as_float_array, check_count, check_real

from .compression import covariance, truncated_loss_bound

__all__ = ["DistributionalPrivacy", "covariance_distance", "distributional_privacy", "set_delta_max"]


def _database(i: int, x: ArrayLike) -> FloatArray:
    a = as_float_array(f"databases[{i}]", x)
    if a.ndim != 2 or 0 in a.shape or not np.isfinite(a).all():
        raise ValueError(f"databases[{i}] must be a finite non-empty n x p array, got shape {a.shape}")
    return a


def _databases(databases: ArrayLike | list[ArrayLike]) -> list[FloatArray]:
    dbs = [_database(i, x) for i, x in enumerate(databases)]  # type: ignore[arg-type]
    if len(dbs) < 2:
        raise ValueError(f"databases must hold at least two databases, got {len(dbs)}")
    shape = dbs[0].shape
    for i, d in enumerate(dbs):
        if d.shape != shape:
            raise ValueError(f"databases must all be n x p = {shape}; databases[{i}] is {d.shape}")
    return dbs


def covariance_distance(x1: ArrayLike, x2: ArrayLike) -> float:
    """V(X_1, X_2) = max_{l,k} |Sigma_1(l,k) - Sigma_2(l,k)|, Sigma = X'X/n [@zhou2009differential,
    eq. (6)]."""
    return float(np.abs(covariance(x1) - covariance(x2)).max())


def set_delta_max(databases: ArrayLike | list[ArrayLike]) -> float:
    """The largest covariance distance between two databases of the set (a value of Delta_max(S_n)
    that satisfies eq. (6))."""
    sig = [covariance(d) for d in _databases(databases)]
    return max(float(np.abs(a - b).max()) for a, b in combinations(sig, 2))


@dataclass(frozen=True)
class DistributionalPrivacy:
    """The result of ``distributional_privacy``: ``alpha`` (Def. 2.4, over every constrained pair) and
    ``differential_alpha`` (Def. 2.3, over the constrained pairs differing in exactly one row; -inf
    when there is none), both upper bounds; ``worst_pair`` the indices of a pair attaining ``alpha``;
    ``pairs`` the number of constrained pairs (and ``neighbour_pairs`` of those differing in one row);
    ``delta_max`` the truncation's Delta_max used."""

    alpha: float
    differential_alpha: float
    worst_pair: tuple[int, int]
    pairs: int
    neighbour_pairs: int
    delta_max: float


def distributional_privacy(databases: ArrayLike | list[ArrayLike], m: int, reference: ArrayLike,
                           max_distance: float = math.inf,
                           delta_max: float | None = None) -> DistributionalPrivacy:
    """(alpha, max_distance)-distributional privacy of the truncated compression release (m rows,
    Procedure 4.1 around ``reference`` with ``delta_max``, default ``set_delta_max(databases)``)
    over the set ``databases``: the largest ``truncated_loss_bound`` over the pairs with
    V <= ``max_distance``, by exact enumeration (module docstring). Databases are grouped by their
    covariance (the release's law depends on nothing else), so the bound is computed once per pair of
    distinct covariances; the pairs differing in one row are found by comparing every pair of
    databases."""
    dbs = np.stack(_databases(databases))
    m = check_count("m", m, high=10**7)
    bound = check_real("max_distance", max_distance, low=0.0, high=math.inf)
    sig = np.einsum("inp,inq->ipq", dbs, dbs) / dbs.shape[1]
    classes, first, label, count = np.unique(sig.reshape(len(dbs), -1), axis=0, return_index=True,
                                             return_inverse=True, return_counts=True)
    label = label.ravel()
    dist = np.abs(classes[:, None, :] - classes[None, :, :]).max(axis=2)
    dmax = float(dist.max()) if delta_max is None else check_real(
        "delta_max", delta_max, low=0.0, high=math.inf, high_open=True)
    allowed = dist <= bound
    k = len(classes)
    loss = np.full((k, k), -math.inf)
    for a in range(k):
        loss[a, a] = 0.0  # equal covariances: equal laws
        for b in range(a + 1, k):
            if allowed[a, b]:
                loss[a, b] = loss[b, a] = truncated_loss_bound(dbs[first[a]], dbs[first[b]], m, reference,
                                                               dmax).value
    present = allowed.copy()
    np.fill_diagonal(present, np.diag(allowed) & (count >= 2))  # a pair within one class needs two
    pairs = int(np.triu(np.outer(count, count) * allowed, 1).sum() + (count * (count - 1) // 2).sum())
    if pairs == 0:
        raise ValueError(f"no two databases are within max_distance = {bound!r} of each other")
    best = int(np.argmax(np.where(present, loss, -math.inf)))
    ca, cb = divmod(best, k)
    alpha = float(loss[ca, cb])
    ia = int(first[ca])
    ib = int(first[cb]) if ca != cb else int(np.flatnonzero(label == ca)[1])
    diff_alpha, neighbours = -math.inf, 0
    for i in range(len(dbs) - 1):
        rest = dbs[i + 1:]
        one_row = np.flatnonzero(np.any(rest != dbs[i], axis=2).sum(axis=1) == 1) + i + 1
        ok = one_row[allowed[label[i], label[one_row]]]
        neighbours += ok.size
        if ok.size:
            diff_alpha = max(diff_alpha, float(loss[label[i], label[ok]].max()))
    return DistributionalPrivacy(alpha, diff_alpha, (min(ia, ib), max(ia, ib)), pairs, neighbours, dmax)
