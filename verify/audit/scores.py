"""Score families: functions s(y) estimating the log likelihood ratio log q(y)/p(y) of the outputs
on the second input against the first, fitted on the selection half only. A region is
{s > t} (or {s < t} for the swapped pair), so the families cover the rejection regions of
DP-Sniper [@bichsel2021dpsniper, a classifier], StatDP [@ding2018detecting, thresholds on outputs]
and exact value counts, plus the IEEE-754 feature of Mironov [@mironov2012significance].
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accountant.validation import FloatArray

from .sampling import Batch, row_keys

#: Largest output dimension for per-coordinate families.
MAX_COORDS = 16
#: Rows used to fit the logistic regression.
MAX_FIT_ROWS = 200_000


@dataclass(frozen=True)
class Score:
    """A fitted score; ``fn`` maps a batch to scores (log q/p estimates for the pair as given)."""

    name: str
    fn: Callable[[Batch], FloatArray]
    #: False when the score does not depend on the draws (thresholds may use all selection draws)
    fitted: bool = True

    def __call__(self, batch: Batch) -> FloatArray:
        return self.fn(batch)


def _count_table(keys_p: NDArray[Any], keys_q: NDArray[Any]) -> Callable[[NDArray[Any]], FloatArray]:
    """Smoothed log ratio of exact value counts, log((c_q + 1/2) / (c_p + 1/2)); unseen values get 0."""
    if keys_p.dtype == object:
        cp, cq = Counter(keys_p.tolist()), Counter(keys_q.tolist())
        table = {k: float(np.log((cq.get(k, 0) + 0.5) / (cp.get(k, 0) + 0.5))) for k in cp.keys() | cq.keys()}

        def lookup_obj(keys: NDArray[Any]) -> FloatArray:
            return np.fromiter((table.get(k, 0.0) for k in keys.tolist()), dtype=np.float64, count=keys.size)

        return lookup_obj
    cats = np.unique(np.concatenate([keys_p, keys_q]))
    c_p = np.bincount(np.searchsorted(cats, keys_p), minlength=cats.size)
    c_q = np.bincount(np.searchsorted(cats, keys_q), minlength=cats.size)
    scores = np.log((c_q + 0.5) / (c_p + 0.5))

    def lookup(keys: NDArray[Any]) -> FloatArray:
        idx = np.minimum(np.searchsorted(cats, keys), cats.size - 1)
        return np.asarray(np.where(cats[idx] == keys, scores[idx], 0.0), dtype=np.float64)

    return lookup


def lowest_bit_exponent(y: NDArray[Any]) -> NDArray[np.int64]:
    """e with y = m 2^e, m an odd integer: the granularity of a double [@mironov2012significance].

    Zero maps to -2000, infinities and NaN to 2000.
    """
    y = np.asarray(y, dtype=np.float64)
    finite = np.isfinite(y) & (y != 0.0)
    m, ex = np.frexp(np.where(finite, y, 1.0))
    mant = np.abs(np.ldexp(m, 53)).astype(np.int64)
    low = mant & -mant
    _, lowexp = np.frexp(low.astype(np.float64))
    e = ex.astype(np.int64) - 53 + lowexp.astype(np.int64) - 1
    return np.where(finite, e, np.where(y == 0.0, -2000, 2000)).astype(np.int64)


def _logistic_features(v: NDArray[Any], center: FloatArray, scale: FloatArray, quad: bool,
                       missing: bool) -> FloatArray:
    """Standardised coordinates (and squares); with ``missing``, indicators of NaN ("no answer")
    coordinates and of the count of them."""
    x = np.asarray(v, dtype=np.float64)
    z = (x - center) / scale
    z = np.nan_to_num(z, nan=0.0, posinf=50.0, neginf=-50.0)
    z = np.clip(z, -50.0, 50.0)
    cols = [np.ones((z.shape[0], 1)), z]
    if quad:
        cols.append(z * z)
    if missing:
        nan = np.isnan(x).astype(np.float64)
        cols += [nan, nan.sum(axis=1, keepdims=True)]
    return np.concatenate(cols, axis=1)


def fit_logistic(x: FloatArray, y: FloatArray, ridge: float = 1e-3, iters: int = 25) -> FloatArray:
    """Ridge-penalised logistic regression by Newton's method (IRLS); returns the weights."""
    w = np.zeros(x.shape[1])
    lam = ridge * x.shape[0]
    pen = np.full(x.shape[1], lam)
    pen[0] = 0.0
    for _ in range(iters):
        eta = np.clip(x @ w, -30.0, 30.0)
        p = 1.0 / (1.0 + np.exp(-eta))
        grad = x.T @ (y - p) - pen * w
        hess = (x * (p * (1.0 - p))[:, None]).T @ x + np.diag(pen) + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hess, grad)
        w = w + step
        if np.max(np.abs(step)) < 1e-8:
            break
    return w


def fit_scores(p: Batch, q: Batch, *, privacy_loss: Callable[[Any], FloatArray] | None,
               discrete: bool, rng: np.random.Generator) -> list[Score]:
    """All score families that apply to these outputs, fitted on selection batches p and q."""
    out: list[Score] = []
    if privacy_loss is not None:
        pl = privacy_loss
        out.append(Score("likelihood ratio", lambda b: np.asarray(pl(b.raw), dtype=np.float64).ravel(),
                         fitted=False))
    if discrete or p.values is None:
        table = _count_table(p.keys, q.keys)
        out.append(Score("exact value counts", lambda b: table(b.keys)))
    if p.values is None or q.values is None:
        return out
    d = p.values.shape[1]
    is_float = p.values.dtype.kind == "f"
    if d <= MAX_COORDS:
        for j in range(d):
            out.append(Score(f"y[{j}]" if d > 1 else "y", _coord(j), fitted=False))
    # with the exact likelihood ratio declared, estimated ratios (histogram, classifier) can only
    # approximate it and would cost power; the coordinate and IEEE-754 families stay
    exact = privacy_loss is not None
    if is_float and not discrete:
        if d == 1 and not exact:
            pooled = np.concatenate([p.values[:, 0], q.values[:, 0]])
            nbins = int(np.clip(np.sqrt(pooled.size) / 8, 8, 256))
            edges = np.unique(np.quantile(pooled, np.linspace(0, 1, nbins + 1)[1:-1], method="inverted_cdf"))
            hist = _count_table(np.searchsorted(edges, p.values[:, 0]),
                                np.searchsorted(edges, q.values[:, 0]))
            out.append(Score(f"histogram ({edges.size + 1} bins)",
                             lambda b: hist(np.searchsorted(edges, _vals(b)[:, 0]))))
        if d <= MAX_COORDS:
            bits = _count_table(row_keys(lowest_bit_exponent(p.values)),
                                row_keys(lowest_bit_exponent(q.values)))
            out.append(Score("IEEE-754 granularity", lambda b: bits(row_keys(lowest_bit_exponent(_vals(b))))))
    if (not discrete or d > 1) and not exact:
        out.append(_fit_logistic_score(p.values, q.values, rng))
    return out


def _vals(b: Batch) -> NDArray[Any]:
    if b.values is None:
        raise ValueError("mechanism returned non-numeric outputs on one input and numeric on another")
    return b.values


def _coord(j: int) -> Callable[[Batch], FloatArray]:
    return lambda b: np.asarray(_vals(b)[:, j], dtype=np.float64)


def _fit_logistic_score(vp: NDArray[Any], vq: NDArray[Any], rng: np.random.Generator) -> Score:
    both = np.concatenate([vp, vq]).astype(np.float64)
    labels = np.concatenate([np.zeros(vp.shape[0]), np.ones(vq.shape[0])])
    if both.shape[0] > MAX_FIT_ROWS:
        idx = rng.choice(both.shape[0], MAX_FIT_ROWS, replace=False)
        both, labels = both[idx], labels[idx]
    fin = np.where(np.isfinite(both), both, np.nan)
    center = np.nan_to_num(np.nanmedian(fin, axis=0))
    scale = np.nan_to_num(np.nanstd(fin, axis=0), nan=1.0)
    scale = np.where(scale > 0, scale, 1.0)
    quad = both.shape[1] <= MAX_COORDS
    missing = bool(np.isnan(both).any())
    w = fit_logistic(_logistic_features(both, center, scale, quad, missing), labels)

    def score(b: Batch) -> FloatArray:
        feats = _logistic_features(_vals(b), center, scale, quad, missing)
        return np.asarray(feats @ w, dtype=np.float64)

    return Score("logistic regression", score)
