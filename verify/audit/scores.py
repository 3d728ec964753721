"""Score families: functions s(y) estimating the log likelihood ratio log q(y)/p(y) of the outputs
on the second input against the first, fitted on the selection half only. A region is
{s > t} (or {s < t} for the swapped pair), so the families cover the rejection regions of
DP-Sniper [@bichsel2021dpsniper, a classifier], StatDP [@ding2018detecting, thresholds on outputs]
and exact value counts, plus the IEEE-754 feature of Mironov [@mironov2012significance].
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from accountant.core.types import FloatArray

from .features import Batch, row_keys
from .stats import order_statistics

#: Largest output dimension for per-coordinate families.
MAX_COORDS = 16
#: Rows used to fit the logistic regression.
MAX_FIT_ROWS = 200_000


#: Score families, each a test of its own with its own share of the error budget: the generic
#: distributional tests (regions are intervals, boxes, exact values of discrete outputs, structure
#: categories), the mechanism's declared likelihood ratio, and the IEEE-754 representation test.
Family = Literal["distributional", "declared", "representation", "renyi"]
FAMILIES: tuple[Family, ...] = ("distributional", "declared", "representation", "renyi")


@dataclass(frozen=True)
class Score:
    """A fitted score; ``fn`` maps a batch to scores (log q/p estimates for the pair as given)."""

    name: str
    fn: Callable[[Batch], FloatArray]
    #: False when the score does not depend on the draws (thresholds may use all selection draws)
    fitted: bool = True
    family: Family = "distributional"
    #: the region {s > t} (direction 0) or {s < t} (direction 1) in words, when known
    describe: Callable[[float, int], str] | None = None

    def __call__(self, batch: Batch) -> FloatArray:
        return self.fn(batch)


#: Widest range of int64 keys (largest seen minus smallest) a count table looks up by offset in an
#: array of that length rather than by binary search (bins, exponents, categories).
DENSE_KEYS = 1 << 16


@dataclass(frozen=True)
class _CountTable:
    """Smoothed log ratio of exact value counts, log((c_q + 1/2) / (c_p + 1/2)), of the values
    ``seen`` (sorted) in the fit draws; unseen values get 0."""

    seen: NDArray[Any]
    scores: FloatArray
    #: for int64 keys within DENSE_KEYS of each other: the score of every key from seen[0] on (0
    #: for the unseen ones), so a lookup is an offset
    dense: FloatArray | None = None

    def __call__(self, keys: NDArray[Any]) -> FloatArray:
        if self.dense is not None and keys.dtype == np.int64:
            # |key - seen[0]| < 2^64, so a wrapped difference never falls in [0, DENSE_KEYS)
            at = keys - self.seen[0]
            inside = (at >= 0) & (at < self.dense.size)
            return np.asarray(np.where(inside, self.dense[np.where(inside, at, 0)], 0.0), dtype=np.float64)
        idx = np.minimum(np.searchsorted(self.seen, keys), self.seen.size - 1)
        return np.asarray(np.where(self.seen[idx] == keys, self.scores[idx], 0.0), dtype=np.float64)


def _count_table(keys_p: NDArray[Any], keys_q: NDArray[Any]) -> _CountTable:
    both = np.concatenate([keys_p, keys_q])
    lo = int(both.min()) if both.dtype == np.int64 and both.size else 0
    if both.dtype == np.int64 and both.size and int(both.max()) - lo < DENSE_KEYS:
        # keys in a narrow range: counted by offset, looked up by offset
        all_p = np.bincount(keys_p - lo, minlength=int(both.max()) - lo + 1)
        all_q = np.bincount(keys_q - lo, minlength=all_p.size)
        at = np.flatnonzero(all_p + all_q)
        c_p, c_q, cats = all_p[at], all_q[at], at + lo
        scores = np.log((c_q + 0.5) / (c_p + 0.5))
        dense = np.zeros(all_p.size)
        dense[at] = scores
        return _CountTable(cats, scores, dense)
    cats = np.unique(both)
    c_p = np.bincount(np.searchsorted(cats, keys_p), minlength=cats.size)
    c_q = np.bincount(np.searchsorted(cats, keys_q), minlength=cats.size)
    return _CountTable(cats, np.log((c_q + 0.5) / (c_p + 0.5)))


def lowest_bit_exponent(y: NDArray[Any]) -> NDArray[np.int64]:
    """e with y = m 2^e, m an odd integer: the granularity of a double [@mironov2012significance].

    Zero maps to -2000, infinities and NaN to 2000.
    """
    bits = np.ascontiguousarray(y, dtype=np.float64).view(np.int64)
    field = (bits >> 52) & 0x7FF  # biased exponent: 0 subnormal or zero, 2047 inf or NaN
    m = bits & ((1 << 52) - 1)
    m |= (field != 0).astype(np.int64) << 52  # the integer significand: y = +-m 2^(max(field, 1) - 1075)
    low = (m & -m).astype(np.float64)  # its lowest set bit, a power of 2 (exact)
    e = np.maximum(field, 1) - 1075 + ((low.view(np.int64) >> 52) - 1023)
    return np.asarray(np.where(field == 2047, 2000, np.where(m == 0, -2000, e)), dtype=np.int64)


def _logistic_features(v: NDArray[Any], center: FloatArray, scale: FloatArray, quad: bool,
                       missing: bool) -> FloatArray:
    """Standardised coordinates (and squares); with ``missing``, indicators of NaN ("no answer")
    coordinates and of the count of them."""
    x = np.asarray(v, dtype=np.float64)
    n, d = x.shape
    out = np.empty((n, 1 + d * (2 if quad else 1) + (d + 1 if missing else 0)))
    out[:, 0] = 1.0
    z = out[:, 1: 1 + d]
    np.divide(x - center, scale, out=z)
    np.clip(z, -50.0, 50.0, out=z)  # infinities to +-50
    np.copyto(z, 0.0, where=np.isnan(z))
    if quad:
        np.multiply(z, z, out=out[:, 1 + d: 1 + 2 * d])
    if missing:
        nan = out[:, out.shape[1] - d - 1: -1]
        np.copyto(nan, np.isnan(x))
        np.sum(nan, axis=1, out=out[:, -1])
    return out


#: Most features for which the logistic regression's products (rows of thin matrices) are summed
#: by numpy's own loops (``einsum``) rather than BLAS, whose threads cost more than such sums on a
#: busy machine; wider feature matrices go to BLAS.
THIN_FEATURES = 8


def _times(x: FloatArray, w: FloatArray) -> FloatArray:
    """x @ w, each row's sum taken the same way whatever the number of rows."""
    return np.asarray(np.einsum("ij,j->i", x, w) if x.shape[1] <= THIN_FEATURES else x @ w,
                      dtype=np.float64)


def fit_logistic(x: FloatArray, y: FloatArray, ridge: float = 1e-3, iters: int = 25) -> FloatArray:
    """Ridge-penalised logistic regression by Newton's method (IRLS); returns the weights."""
    w = np.zeros(x.shape[1])
    lam = ridge * x.shape[0]
    pen = np.full(x.shape[1], lam)
    pen[0] = 0.0
    thin = x.shape[1] <= THIN_FEATURES
    cols = np.ascontiguousarray(x.T) if thin else x  # the features as rows: each a contiguous run
    ridge_matrix, jitter = np.diag(pen), 1e-9 * np.eye(x.shape[1])
    for _ in range(iters):
        eta = np.clip(_times(x, w), -30.0, 30.0)
        p = 1.0 / (1.0 + np.exp(-eta))
        if thin:
            grad = np.einsum("ij,i->j", x, y - p) - pen * w
            weighted = cols * (p * (1.0 - p))
            gram = np.empty((x.shape[1], x.shape[1]))
            for i in range(x.shape[1]):
                for j in range(i + 1):
                    gram[i, j] = gram[j, i] = np.einsum("k,k->", weighted[i], cols[j])
        else:
            grad = x.T @ (y - p) - pen * w
            gram = (x * (p * (1.0 - p))[:, None]).T @ x
        hess = gram + ridge_matrix + jitter
        step = np.linalg.solve(hess, grad)
        w = w + step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w


def _several(a: NDArray[Any]) -> bool:
    """Whether a non-empty array holds two different values."""
    return bool(np.any(a != a[0]))


#: The key under which a batch's memo holds the declared ``privacy_loss`` of its outputs.
LOSS_MEMO = "privacy loss"


def declared_losses(privacy_loss: Callable[[Any], FloatArray], p: Batch, q: Batch) -> bool:
    """Whether a ``privacy_loss`` attribute is a declaration (a base class's stub that raises
    NotImplementedError, no closed-form density, declares nothing); when it is, its values on the
    outputs of both batches are kept in their memos (``LOSS_MEMO``), where the likelihood-ratio
    score reads them. Outputs that are arrays of one dtype and row shape are passed in one call
    (the loss is a function of each output alone, so the values are those of two calls)."""
    pr, qr = p.raw, q.raw
    one = (isinstance(pr, np.ndarray) and isinstance(qr, np.ndarray) and pr.ndim >= 1 and qr.ndim >= 1
           and pr.dtype == qr.dtype and pr.shape[1:] == qr.shape[1:])
    try:
        if one:
            both = np.asarray(privacy_loss(np.concatenate([pr, qr])), dtype=np.float64).ravel()
            if both.size == p.n + q.n:
                p.memo[LOSS_MEMO], q.memo[LOSS_MEMO] = both[: p.n], both[p.n:]
                return True
        # separately (the score's own size check then names a wrong count)
        p.memo[LOSS_MEMO] = np.asarray(privacy_loss(pr), dtype=np.float64).ravel()
        q.memo[LOSS_MEMO] = np.asarray(privacy_loss(qr), dtype=np.float64).ravel()
    except NotImplementedError:
        return False
    return True


def _loss_score(privacy_loss: Callable[[Any], FloatArray]) -> Callable[[Batch], FloatArray]:
    """The declared likelihood ratio of a batch's outputs (from its memo when already computed)."""
    def score(b: Batch) -> FloatArray:
        if LOSS_MEMO in b.memo:
            kept: FloatArray = b.memo[LOSS_MEMO]
            return kept
        return np.asarray(privacy_loss(b.raw), dtype=np.float64).ravel()

    return score


def fit_scores(p: Batch, q: Batch, *, privacy_loss: Callable[[Any], FloatArray] | None,
               discrete: bool, rng: np.random.Generator, floating_point: bool = True,
               names: Sequence[str] = ()) -> list[Score]:
    """All score families that apply to these outputs, fitted on selection batches p and q.

    The generic families always run; a declared ``privacy_loss`` (``declared_losses`` tells a
    declaration from a stub) adds the likelihood-ratio score (family "declared"), and
    ``floating_point`` the IEEE-754 granularity score (family "representation", the only one that
    reads a double's binary representation)."""
    out: list[Score] = []
    if privacy_loss is not None:
        out.append(Score("likelihood ratio", _loss_score(privacy_loss), fitted=False, family="declared"))
    if discrete or p.values is None:
        table = _count_table(p.keys, q.keys)
        out.append(Score("exact value counts", lambda b: table(b.keys)))
    if not discrete and p.cats is not None and q.cats is not None and \
            _several(np.concatenate([p.cats, q.cats])):
        cats = _count_table(p.cats, q.cats)
        out.append(Score("output structure counts", lambda b: cats(_cats(b))))
    if p.values is None or q.values is None:
        return out
    if not discrete and p.cats is not None and q.cats is not None and p.values.dtype.kind == "f":
        out += _conditional_tail_scores(p, q)
        out += _category_set_scores(p, q)
        out += _category_value_cells(p, q)
    d = p.values.shape[1]
    names = list(names) or ([f"y[{j}]" for j in range(d)] if d > 1 else ["y"])
    is_float = p.values.dtype.kind == "f"
    if d <= MAX_COORDS:
        for j in range(d):
            if is_float and (np.isnan(p.values[:, j]).any() or np.isnan(q.values[:, j]).any()):
                # "no value" (absent, None, NaN, a category) is neither 0 nor any other number:
                # once below every number, once above
                out.append(Score(f"{names[j]} (no value = -inf)", _coord(j, -np.inf), fitted=False))
                out.append(Score(f"{names[j]} (no value = +inf)", _coord(j, np.inf), fitted=False))
            else:
                out.append(Score(names[j], _coord(j, None), fitted=False))
    if is_float and not discrete:
        if d == 1:
            pooled = np.concatenate([p.values[:, 0], q.values[:, 0]])
            pooled = pooled[~np.isnan(pooled)]
            if pooled.size:
                nbins = int(np.clip(np.sqrt(pooled.size) / 8, 8, 256))
                # numpy's inverted-CDF quantiles, read from one sort (np.quantile partitions once
                # per level)
                edges = np.unique(order_statistics(np.sort(pooled), np.linspace(0, 1, nbins + 1)[1:-1]))
                hist = _count_table(_bin(edges, p.values[:, 0]), _bin(edges, q.values[:, 0]))
                out.append(Score(f"histogram ({edges.size + 1} bins)",
                                 lambda b: hist(_bin(edges, _vals(b)[:, 0]))))
        slots = min(p.slots, q.slots)
        if floating_point and 0 < slots <= MAX_COORDS:
            bits = _count_table(row_keys(lowest_bit_exponent(p.values[:, :slots])),
                                row_keys(lowest_bit_exponent(q.values[:, :slots])))
            out.append(Score("IEEE-754 granularity",
                             lambda b: bits(row_keys(lowest_bit_exponent(_vals(b)[:, :slots]))),
                             family="representation",
                             describe=_granularity_region(bits, slots)))
    if not discrete or d > 1:
        out.append(_fit_logistic_score(p.values, q.values, rng))
    return out


#: Numbers per output (the first, second, ... present one) that get conditional tail scores.
MAX_RANKS = 2


def _nth_number(b: Batch, m: int) -> FloatArray:
    """The m-th number present in each output (slot columns in order; NaN when it has fewer),
    computed once per batch."""
    key = ("nth number", m)
    if key not in b.memo:
        v = np.asarray(_vals(b)[:, : b.slots], dtype=np.float64)
        if v.shape[1] == 1:  # one slot: its number, or none
            out = v[:, 0] if m == 0 else np.full(v.shape[0], np.nan)
        else:
            present = ~np.isnan(v)
            at = present & (np.cumsum(present, axis=1) == m + 1)
            col = np.argmax(at, axis=1)
            out = np.where(at.any(axis=1), v[np.arange(v.shape[0]), col], np.nan)
        b.memo[key] = out
    result: FloatArray = b.memo[key]
    return result


def _nth_order(b: Batch, m: int) -> NDArray[np.intp]:
    """The permutation sorting a batch's m-th numbers (NaN last), computed once per batch."""
    key = ("nth order", m)
    if key not in b.memo:
        b.memo[key] = np.argsort(_nth_number(b, m))
    order: NDArray[np.intp] = b.memo[key]
    return order


def _conditional_tail_scores(p: Batch, q: Batch) -> list[Score]:
    """Joint regions over an output's structure and the numbers in it: for the m-th number y_m of
    an output in structure category c, s = log((C_q + 1/2) / (C_p + 1/2)) with C counting the fit
    draws of each input in category c with the m-th number at or below y_m (lower tail) or at or
    above it (upper tail); outputs without an m-th number get their category's count ratio, unseen
    categories 0. A region {s > t} is then a union over categories of tails with a high estimated
    ratio, e.g. "answered at query k >= 6 with a value below ~1" for a sparse vector releasing noisy
    answers, where single-coordinate thresholds see one category at a time. With one structure (plain
    numbers, none absent) there is no joint region: the score is a fitted function of y_m alone,
    whose regions the thresholds on y_m, the histogram and the logistic score already cover, so the
    family is empty (where it won the selection there, the evaluation draws bounded it below the
    region that replaced it: the winner's curse of a score fitted on half the draws)."""
    out: list[Score] = []
    ranks = min(MAX_RANKS, p.slots, q.slots)
    both_cats = np.concatenate([_cats(p), _cats(q)])
    if not _several(both_cats):
        return out  # one structure: the m-th number's tail ratio alone (coordinate thresholds cover it)
    for m in range(ranks):
        vp, vq = _nth_number(p, m), _nth_number(q, m)
        if np.isnan(vp).all() and np.isnan(vq).all():
            break
        cats = np.unique(both_cats)
        pooled = np.sort(np.concatenate([vp[~np.isnan(vp)], vq[~np.isnan(vq)]]))
        label = "first" if m == 0 else f"number {m + 1}"
        for side in ("lower", "upper"):
            fn = _tail_table(cats, pooled, p, q, side == "lower", m)
            out.append(Score(f"{label} number given the structure ({side} tail)", fn))
    return out


#: Sizes of the category sets (the categories most likely under one input) that get a threshold
#: on their first number (Fibonacci-spaced, so few scores cover sets of every scale).
CATEGORY_SET_SIZES = (1, 2, 3, 5, 8, 13, 21)


def _category_set_scores(p: Batch, q: Batch) -> list[Score]:
    """Joint regions over presence and value with one common threshold: the structure categories
    holding a number are ordered by their fitted count ratio (smoothed as in ``_count_table``), and
    for the first j of them (either ordering, j in ``CATEGORY_SET_SIZES``) the score is the output's
    first number inside the set and +inf (or -inf) outside, so {s < t} (or {s > t}) is "in the set
    and below (above) t". Category ratios rest on many draws, so these coarse regions are less
    noisy than per-category tails (``_conditional_tail_scores``): e.g. "answered at one of the last
    queries, with a value below t" for a sparse vector releasing noisy answers."""
    cp, cq = _cats(p), _cats(q)
    if not _several(np.concatenate([cp, cq])):
        return []  # one structure: no two of them hold a number
    vp, vq = _nth_number(p, 0), _nth_number(q, 0)
    numbered = np.unique(np.concatenate([cp[~np.isnan(vp)], cq[~np.isnan(vq)]]))
    if numbered.size < 2:
        return []
    n_p = np.bincount(np.searchsorted(numbered, cp[np.isin(cp, numbered)]), minlength=numbered.size)
    n_q = np.bincount(np.searchsorted(numbered, cq[np.isin(cq, numbered)]), minlength=numbered.size)
    ratio = np.log((n_q + 0.5) / (n_p + 0.5))
    out: list[Score] = []
    for likely, order in (("data", np.argsort(ratio, kind="stable")),
                          ("data2", np.argsort(-ratio, kind="stable"))):
        for j in CATEGORY_SET_SIZES:
            if j >= numbered.size:
                break
            members = np.sort(numbered[order[:j]])
            for side, off in (("below", np.inf), ("above", -np.inf)):
                out.append(Score(f"first number in the {j} structure(s) most likely under {likely} "
                                 f"(regions: in them and {side} t)", _in_set(members, off)))
    return out


#: Value bins per structure category of the cell score (equal-mass cuts of the pooled first numbers).
CELL_VALUE_BINS = 8


def cell_keys(cats: NDArray[np.int64], v: FloatArray, edges: FloatArray) -> NDArray[np.int64]:
    """The cell of each output: its structure category and the bin of its first number among those
    cut at ``edges`` (no number: a bin of its own), one integer key per output, so the counts of a
    chunk of outputs per cell are a ``np.unique`` / ``np.bincount`` of the keys."""
    b = np.where(np.isnan(v), 0, np.searchsorted(edges, np.nan_to_num(v), "right") + 1)
    return np.asarray(cats * (edges.size + 2) + b, dtype=np.int64)


def _category_value_cells(p: Batch, q: Batch) -> list[Score]:
    """Joint regions over structure and value as unions of cells: each output's cell is its structure
    category crossed with the bin of its first number (``CELL_VALUE_BINS`` equal-mass bins of the
    pooled fit numbers), scored by the smoothed log ratio of the fit draws' cell counts
    (``_count_table``); {s > t} is the union of the cells most likely under the second input. Where
    the likelihood ratio is a staircase over (category, value), e.g. "answered at query k with a
    value below t_k" with t_k growing in k for a sparse vector releasing noisy answers, the union
    of cells follows it where one threshold per category set (``_category_set_scores``) cannot."""
    if not _several(np.concatenate([_cats(p), _cats(q)])):
        return []
    vp, vq = _nth_number(p, 0), _nth_number(q, 0)
    pooled = np.concatenate([vp[~np.isnan(vp)], vq[~np.isnan(vq)]])
    if pooled.size == 0:
        return []
    edges = np.unique(order_statistics(np.sort(pooled), np.linspace(0.0, 1.0, CELL_VALUE_BINS + 1)[1:-1]))
    table = _count_table(cell_keys(_cats(p), vp, edges), cell_keys(_cats(q), vq, edges))
    return [Score(f"structure x first-number cells ({edges.size + 1} value bins)",
                  lambda b: table(cell_keys(_cats(b), _nth_number(b, 0), edges)))]


def _in_set(members: NDArray[np.int64], off: float) -> Callable[[Batch], FloatArray]:
    def score(b: Batch) -> FloatArray:
        v = _nth_number(b, 0)
        inside = np.isin(_cats(b), members) & ~np.isnan(v)
        return np.asarray(np.where(inside, v, off), dtype=np.float64)

    return score


def _tail_table(cats: NDArray[np.int64], pooled: FloatArray, p: Batch, q: Batch, lower: bool,
                m: int) -> Callable[[Batch], FloatArray]:
    """The fitted conditional tail score (see ``_conditional_tail_scores``) on fit batches p and q:
    each draw becomes the integer key (category index, rank of its number among the pooled fit
    numbers), so the counts of draws in the same category on the same side are binary searches
    (the draws taken in the order of their numbers, so the searches run in order)."""
    width = pooled.size + 2
    side: Literal["left", "right"] = "right" if lower else "left"

    Ints = NDArray[np.int64]

    def keys(b: Batch) -> tuple[Ints, NDArray[np.bool_], NDArray[np.bool_], NDArray[np.intp]]:
        c, v, order = _cats(b), _nth_number(b, m), _nth_order(b, m)
        ci = np.minimum(np.searchsorted(cats, c), cats.size - 1)
        known = cats[ci] == c
        r = _search(pooled, np.nan_to_num(v), side, order)
        has = ~np.isnan(v)
        return ci * width + np.where(has, r + 1, 0), known, has, order

    kp, _, hp, _ = keys(p)
    kq, _, hq, _ = keys(q)
    sp, sq = np.sort(kp[hp]), np.sort(kq[hq])
    cat_p = np.bincount(np.searchsorted(cats, _cats(p)), minlength=cats.size)
    cat_q = np.bincount(np.searchsorted(cats, _cats(q)), minlength=cats.size)
    # where each category's keys start (lower tails: ranks from 1) or end (upper tails), per input
    bound = np.arange(cats.size, dtype=np.int64) * width + 1 if lower else \
        (np.arange(cats.size, dtype=np.int64) + 1) * width
    edge_p, edge_q = np.searchsorted(sp, bound, "left"), np.searchsorted(sq, bound, "left")

    def count(srt: Ints, edge: Ints, k: Ints, ci: Ints, order: NDArray[np.intp]) -> Ints:
        if lower:  # same category, number (rank) in [1, r]
            return _search(srt, k, "right", order) - edge[ci]
        return edge[ci] - _search(srt, k, "left", order)

    def score(b: Batch) -> FloatArray:
        k, known, has, order = keys(b)
        ci = k // width
        n_p = np.where(has, count(sp, edge_p, k, ci, order), cat_p[ci]).astype(np.float64)
        n_q = np.where(has, count(sq, edge_q, k, ci, order), cat_q[ci]).astype(np.float64)
        return np.asarray(np.where(known, np.log((n_q + 0.5) / (n_p + 0.5)), 0.0), dtype=np.float64)

    return score


def _search(ref: NDArray[Any], v: NDArray[Any], side: Literal["left", "right"],
            order: NDArray[np.intp]) -> NDArray[np.int64]:
    """``np.searchsorted(ref, v, side)`` with the queries taken in ``order`` (a permutation that
    sorts them, or nearly): the same result, but successive binary searches touch nearby memory."""
    out = np.empty(v.shape[0], dtype=np.int64)
    out[order] = np.searchsorted(ref, v[order], side)
    return out


def _bin(edges: FloatArray, v: NDArray[Any]) -> NDArray[np.int64]:
    """Histogram bin of each value; no value (NaN) is a bin of its own (-1)."""
    b = np.searchsorted(edges, v).astype(np.int64)
    return np.where(np.isnan(v), -1, b)


def _cats(b: Batch) -> NDArray[np.int64]:
    if b.cats is None:
        raise ValueError("mechanism returned structured outputs on one input and plain numbers on another")
    return b.cats


def _granularity_region(bits: _CountTable, slots: int) -> Callable[[float, int], str] | None:
    """The granularity region in words: which exponents e of y = m 2^e (m odd) it contains (of
    those seen in the fit draws, the keys of the one-slot table)."""
    if slots != 1:
        return None
    seen = bits.seen
    s = bits(seen)

    def describe(t: float, direction: int) -> str:
        inside = (s > t) if direction == 0 else (s < t)
        return "outputs y = m 2^e (m odd) with e in " + _ranges(seen, inside)

    return describe


def _ranges(seen: NDArray[np.int64], inside: NDArray[np.bool_]) -> str:
    def name(e: int) -> str:
        return {-2000: "{y = 0}", 2000: "{inf, nan}"}.get(e, str(e))

    parts, i = [], 0
    while i < seen.size:
        if not inside[i]:
            i += 1
            continue
        j = i
        while j + 1 < seen.size and inside[j + 1] and abs(int(seen[j + 1])) != 2000:
            j += 1
        a, b = int(seen[i]), int(seen[j])
        parts.append(name(a) if a == b else f"[{name(a)}, {name(b)}]")
        i = j + 1
    text = " U ".join(parts) if parts else "{}"
    lo = [int(e) for e in seen[inside] if abs(int(e)) != 2000]
    hi = [int(e) for e in seen[~inside] if abs(int(e)) != 2000]
    if lo and hi and max(lo) < min(hi):
        text += f" (among observed outputs: those that are not multiples of 2^{min(hi)})"
    return text


def _vals(b: Batch) -> NDArray[Any]:
    if b.values is None:
        raise ValueError("mechanism returned non-numeric outputs on one input and numeric on another")
    return b.values


def _coord(j: int, missing: float | None) -> Callable[[Batch], FloatArray]:
    if missing is None:
        return lambda b: np.asarray(_vals(b)[:, j], dtype=np.float64)
    return lambda b: np.nan_to_num(np.asarray(_vals(b)[:, j], dtype=np.float64), nan=missing,
                                   posinf=np.inf, neginf=-np.inf)


def _fit_logistic_score(vp: NDArray[Any], vq: NDArray[Any], rng: np.random.Generator) -> Score:
    both = np.concatenate([vp, vq]).astype(np.float64)
    labels = np.concatenate([np.zeros(vp.shape[0]), np.ones(vq.shape[0])])
    if both.shape[0] > MAX_FIT_ROWS:
        idx = rng.choice(both.shape[0], MAX_FIT_ROWS, replace=False)
        both, labels = both[idx], labels[idx]
    finite = bool(np.isfinite(both).all())
    fin = both if finite else np.where(np.isfinite(both), both, np.nan)
    with np.errstate(over="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns, huge values
        # without NaN, numpy's nan-functions return median and std bit for bit (a test), at a
        # fraction of their cost
        center = np.nan_to_num(np.median(fin, axis=0) if finite else np.nanmedian(fin, axis=0))
        scale = np.nan_to_num(np.std(fin, axis=0) if finite else np.nanstd(fin, axis=0), nan=1.0, posinf=1.0)
    scale = np.where(scale > 0, scale, 1.0)
    quad = both.shape[1] <= MAX_COORDS
    missing = bool(np.isnan(both).any())
    w = fit_logistic(_logistic_features(both, center, scale, quad, missing), labels)

    def score(b: Batch) -> FloatArray:
        return _times(_logistic_features(_vals(b), center, scale, quad, missing), w)

    return Score("logistic regression", score)
