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

from accountant.validation import FloatArray

from .features import Batch, row_keys

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


def _count_table(keys_p: NDArray[Any], keys_q: NDArray[Any]) -> Callable[[NDArray[Any]], FloatArray]:
    """Smoothed log ratio of exact value counts, log((c_q + 1/2) / (c_p + 1/2)); unseen values get 0."""
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


def _declares(privacy_loss: Callable[[Any], FloatArray], p: Batch) -> bool:
    """Whether a ``privacy_loss`` attribute is a declaration: a base class's stub that raises
    NotImplementedError (no closed-form density) declares nothing."""
    try:
        privacy_loss(p.raw)
    except NotImplementedError:
        return False
    return True


def fit_scores(p: Batch, q: Batch, *, privacy_loss: Callable[[Any], FloatArray] | None,
               discrete: bool, rng: np.random.Generator, floating_point: bool = True,
               names: Sequence[str] = ()) -> list[Score]:
    """All score families that apply to these outputs, fitted on selection batches p and q.

    The generic families always run; a declared ``privacy_loss`` adds the likelihood-ratio score
    (family "declared"), and ``floating_point`` the IEEE-754 granularity score (family
    "representation", the only one that reads a double's binary representation)."""
    out: list[Score] = []
    if privacy_loss is not None and _declares(privacy_loss, p):
        pl = privacy_loss
        out.append(Score("likelihood ratio", lambda b: np.asarray(pl(b.raw), dtype=np.float64).ravel(),
                         fitted=False, family="declared"))
    if discrete or p.values is None:
        table = _count_table(p.keys, q.keys)
        out.append(Score("exact value counts", lambda b: table(b.keys)))
    if not discrete and p.cats is not None and q.cats is not None and \
            np.unique(np.concatenate([p.cats, q.cats])).size > 1:
        cats = _count_table(p.cats, q.cats)
        out.append(Score("output structure counts", lambda b: cats(_cats(b))))
    if p.values is None or q.values is None:
        return out
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
                edges = np.unique(np.quantile(pooled, np.linspace(0, 1, nbins + 1)[1:-1],
                                              method="inverted_cdf"))
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
                             describe=_granularity_region(bits, slots, p, q)))
    if not discrete or d > 1:
        out.append(_fit_logistic_score(p.values, q.values, rng))
    return out


def _bin(edges: FloatArray, v: NDArray[Any]) -> NDArray[np.int64]:
    """Histogram bin of each value; no value (NaN) is a bin of its own (-1)."""
    b = np.searchsorted(edges, v).astype(np.int64)
    return np.where(np.isnan(v), -1, b)


def _cats(b: Batch) -> NDArray[np.int64]:
    if b.cats is None:
        raise ValueError("mechanism returned structured outputs on one input and plain numbers on another")
    return b.cats


def _granularity_region(bits: Callable[[NDArray[Any]], FloatArray], slots: int, p: Batch,
                        q: Batch) -> Callable[[float, int], str] | None:
    """The granularity region in words: which exponents e of y = m 2^e (m odd) it contains."""
    if slots != 1 or p.values is None or q.values is None:
        return None
    seen = np.unique(lowest_bit_exponent(np.concatenate([p.values[:, 0], q.values[:, 0]])))
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
    fin = np.where(np.isfinite(both), both, np.nan)
    with np.errstate(over="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns, huge values
        center = np.nan_to_num(np.nanmedian(fin, axis=0))
        scale = np.nan_to_num(np.nanstd(fin, axis=0), nan=1.0, posinf=1.0)
    scale = np.where(scale > 0, scale, 1.0)
    quad = both.shape[1] <= MAX_COORDS
    missing = bool(np.isnan(both).any())
    w = fit_logistic(_logistic_features(both, center, scale, quad, missing), labels)

    def score(b: Batch) -> FloatArray:
        feats = _logistic_features(_vals(b), center, scale, quad, missing)
        return np.asarray(feats @ w, dtype=np.float64)

    return Score("logistic regression", score)
