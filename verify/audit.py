"""Black-box audits: refute a privacy claim, or bound the privacy loss from below, by testing.

A mechanism satisfies f-DP exactly when every test between its outputs on neighbouring inputs has
errors (alpha, beta) with beta >= f(alpha) [@wasserman2010statistical; @dong2022gaussian, Def. 2.3].
The audit draws outputs on each pair, chooses rejection regions {s > t} on a selection part of
the draws (30% by default; scores: exact likelihood ratio, exact value counts, thresholds on
coordinates, histograms, IEEE-754 granularity, logistic regression), and bounds
alpha = P(reject | data) and beta = P(accept | data2) on the independent evaluation part with exact
Clopper-Pearson bounds. Regions are chosen to maximise the bound they would give (computed with the
same formula on the selection draws, at a stricter level so small noisy regions lose).
With K tests and 2 bounds per test, each bound is taken at level (1 - confidence) / (2K)
(Bonferroni), so all reported bounds hold together with probability >= confidence. A claim is
refuted when some box corner (alpha_u, beta_u) lies strictly below the claimed curve; since f
is non-increasing, beta <= beta_u < f(alpha_u) <= f(alpha) then contradicts the claim.
An audit is one-sided: it never certifies that a mechanism is private.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from accountant import GDP, ApproxDP, Guarantee, PureDP, check_real
from accountant._numeric import check_count
from accountant.tradeoff import TradeoffFunction

from . import _stats
from ._sampling import (
    Batch,
    Progress,
    Sampler,
    make_tasks,
    pooled_unique_count,
    root_seed,
    sampling_mode,
    to_batch,
)
from ._scores import Score, fit_scores

if TYPE_CHECKING:
    from matplotlib.axes import Axes

FloatArray = NDArray[np.float64]
Objective = Literal["eps", "mu", "claim"]

#: Outputs with at most this many distinct values (or this share of the sample) are counted exactly.
DISCRETE_MAX_VALUES = 256
DISCRETE_MAX_SHARE = 0.02
#: Regions are chosen by the bound they would give at this multiple of the evaluation level: a
#: stricter level penalises small, noisy regions (the winner's curse over many thresholds).
SELECTION_LEVEL_FACTOR = 0.01
#: With ``progress=None`` a progress bar is shown on a terminal from this many draws per input.
AUTO_PROGRESS_DRAWS = 10_000_000
#: Most draws per input (and pairs) one audit takes.
MAX_SAMPLES = 10**12
#: Most worker processes an audit starts.
MAX_WORKERS = 4096


@dataclass(frozen=True)
class TestPoint:
    """One evaluated test: region {score > threshold} (direction 0: H0 = M(data), H1 = M(data2);
    direction 1: the swapped pair), its empirical errors and their simultaneous confidence box."""

    pair: int
    direction: int
    region: str
    objective: str
    n: int
    rejections_null: int
    rejections_alt: int
    alpha: float
    beta: float
    alpha_lower: float
    alpha_upper: float
    beta_lower: float
    beta_upper: float
    epsilon_lower: float
    mu_lower: float
    claim_margin: float
    p_value: float


@dataclass(frozen=True)
class AuditReport:
    """Result of ``audit``. ``violation`` is True when the claim is refuted at ``confidence``;
    ``epsilon_lower`` (at ``delta``) and ``mu_lower`` hold at ``confidence`` together with it."""

    claim: Guarantee
    violation: bool
    confidence: float
    epsilon_lower: float
    delta: float
    mu_lower: float
    p_value: float
    witness: TestPoint | None
    points: tuple[TestPoint, ...]
    pairs: tuple[str, ...]
    candidate_pairs: int
    samples_per_input: int
    samples_total: int
    n_tests: int
    seconds: float
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "claim":
                v = str(v)
            elif f.name == "witness":
                v = None if v is None else asdict(v)
            elif f.name == "points":
                v = [asdict(p) for p in v]
            d[f.name] = v
        return d

    def to_json(self, **kwargs: Any) -> str:
        """The report as JSON (infinite bounds as the string "inf")."""
        return json.dumps(_json_safe(self.to_dict()), **kwargs)

    def __str__(self) -> str:
        verdict = "VIOLATION: claim refuted" if self.violation else "no violation found (not a certificate)"
        lines = [
            f"audit of claim {self.claim} at confidence {self.confidence:g}: {verdict}",
            f"  epsilon lower bound (delta={self.delta:g}): {self.epsilon_lower:.4g}",
            f"  mu lower bound (GDP): {self.mu_lower:.4g}",
            f"  adjusted p-value: {self.p_value:.3g}   tests: {self.n_tests}   "
            f"pairs screened: {self.candidate_pairs}",
            f"  samples: {self.samples_per_input} per input, {self.samples_total} in all, "
            f"{self.seconds:.2f} s",
        ]
        w = self.witness
        if w is not None:
            lines.append(f"  witness: pair {w.pair} {self.pairs[w.pair] if w.pair < len(self.pairs) else ''} "
                         f"direction {w.direction}, region {w.region}")
            lines.append(f"    alpha = {w.alpha:.4g} <= {w.alpha_upper:.4g}, beta = {w.beta:.4g} <= "
                         f"{w.beta_upper:.4g} (n = {w.n})")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def plot(self, ax: Axes | None = None) -> Axes:
        """Empirical points with confidence boxes against the claimed trade-off curve."""
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 5))
        a = np.linspace(0.0, 1.0, 501)
        ax.plot(a, self.claim.tradeoff(a), label=f"claim {self.claim}")
        for p in self.points:
            ax.add_patch(Rectangle((p.alpha_lower, p.beta_lower), p.alpha_upper - p.alpha_lower,
                                   p.beta_upper - p.beta_lower, fill=False, color="C3"))
            ax.plot([p.alpha], [p.beta], "o", color="C3" if p is not self.witness else "C1")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("type I error alpha")
        ax.set_ylabel("type II error beta")
        ax.set_title("violation" if self.violation else "no violation found")
        ax.legend()
        return ax


def _json_safe(o: Any) -> Any:
    if isinstance(o, dict):
        return {k: _json_safe(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_json_safe(v) for v in o]
    if isinstance(o, float) and not math.isfinite(o):
        return str(o)
    return o


# ------------------------------------------------------------------------------------ audit


def default_delta(claim: Guarantee) -> float:
    if isinstance(claim, ApproxDP):
        return claim.delta_
    return 0.0


def _objectives(claim: Guarantee, delta: float) -> list[Objective]:
    if isinstance(claim, PureDP | ApproxDP) and delta == default_delta(claim):
        return ["eps"]
    if isinstance(claim, GDP):
        return ["mu", "eps"]
    return ["claim", "eps"]


@dataclass(frozen=True)
class _Candidate:
    value: float
    pair: int
    score: int
    direction: int
    threshold: float


def _region_masses(sp: FloatArray, sq: FloatArray, thr: FloatArray) -> tuple[FloatArray, ...]:
    """Per threshold: (null mass, alternative mass) of {s > t} (direction 0) and, for the
    swapped pair, of {s < t} (direction 1)."""
    sps, sqs = np.sort(sp), np.sort(sq)
    n_p, n_q = sps.size, sqs.size
    a0 = (n_p - np.searchsorted(sps, thr, "right")) / n_p
    r0 = (n_q - np.searchsorted(sqs, thr, "right")) / n_q
    a1 = np.searchsorted(sqs, thr, "left") / n_q
    r1 = np.searchsorted(sps, thr, "left") / n_p
    return a0, r0, a1, r1


def _thresholds(sp: FloatArray, sq: FloatArray, max_thresholds: int = 400) -> FloatArray:
    pooled = np.concatenate([sp, sq])
    pooled = pooled[~np.isnan(pooled)]
    u = np.unique(pooled)
    if u.size <= max_thresholds:
        return u
    levels = np.concatenate([np.linspace(0.0, 1.0, max_thresholds - 8)[1:-1],
                             [1e-5, 1e-4, 1e-3, 3e-3, 1 - 3e-3, 1 - 1e-3, 1 - 1e-4, 1 - 1e-5]])
    return np.unique(np.quantile(pooled, levels, method="inverted_cdf"))


def _objective_values(obj: Objective, a_up: FloatArray, b_up: FloatArray, delta: float,
                      f: TradeoffFunction) -> FloatArray:
    if obj == "eps":
        return _stats.eps_lower_bound(a_up, b_up, delta)
    if obj == "mu":
        return _stats.mu_lower_bound(a_up, b_up)
    return np.asarray(f(a_up), dtype=np.float64) - b_up


def _is_discrete(p: Batch, q: Batch) -> bool:
    if p.values is None or p.values.dtype.kind in "biu":
        return True
    u = pooled_unique_count(p, q)
    return u <= DISCRETE_MAX_VALUES or u <= DISCRETE_MAX_SHARE * (p.n + q.n)


def audit(mechanism: Any, neighbours: Any, claim: Guarantee, *, samples: int,
          confidence: float = 0.95, seed: int | np.random.SeedSequence | None = None,
          vectorised: bool = False, delta: float | None = None, selection_fraction: float = 0.3,
          max_pairs: int = 3, workers: int | None = None, executor: Executor | None = None,
          progress: bool | None = None, use_privacy_loss: bool = True) -> AuditReport:
    """Audit ``mechanism`` against ``claim`` on neighbouring inputs.

    mechanism: a dpcert mechanism (``.sample(data, rng, size)``, optional ``.privacy_loss``) or a
      callable ``(data, rng) -> output`` (float, int, tuple, list or array), or with
      ``vectorised=True`` a callable ``(data, rng, size)`` stacking outputs on axis 0.
    neighbours: a list of ``(data, data2)`` pairs, or a search (``verify.neighbours``) with a
      ``pairs(rng)`` method. With several pairs, all are screened on the selection draws and the
      ``max_pairs`` most promising are evaluated (the selection is inside the error budget).
    claim: any accountant guarantee; refuted when a test's confidence box lies below its curve.
    samples: draws per input of each pair (``selection_fraction`` of them choose the regions).
    delta: where ``epsilon_lower`` is reported (default: the claim's delta, else 0).
    selection_fraction: share of the draws used to fit scores and choose regions (the rest bound
      the errors); max_pairs: pairs carried from screening to evaluation.
    progress: a progress bar on stderr (default: on a terminal, for long audits).
    workers / executor: draw in processes, or on any ``concurrent.futures.Executor`` (e.g. a Dask
      ``client.get_executor()``); the mechanism must then be picklable. Results depend on ``seed``
      only, not on the number of workers.
    Returns an ``AuditReport``; every bound in it holds with probability >= ``confidence``.
    """
    t0 = time.perf_counter()
    if not isinstance(claim, Guarantee):
        raise TypeError(f"claim must be an accountant guarantee, got {type(claim).__name__}")
    samples = check_count("samples", samples, low=4, high=MAX_SAMPLES)
    confidence = check_real("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    check_real("selection_fraction", selection_fraction, low=0.0, high=1.0, low_open=True, high_open=True)
    check_count("max_pairs", max_pairs, low=1, high=MAX_SAMPLES)
    if workers is not None:
        check_count("workers", workers, low=1, high=MAX_WORKERS)
    d_report = default_delta(claim) if delta is None else check_real("delta", delta, low=0.0, high=1.0,
                                                                     high_open=True)
    mode = sampling_mode(mechanism, vectorised)
    root = root_seed(seed)
    pairs = _as_pairs(neighbours, np.random.default_rng(
        np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, 2**31 + 1))))
    n_sel = max(2, round(samples * selection_fraction))
    n_eval = samples - n_sel
    if n_eval < 2:
        raise ValueError("samples is too small to split into selection and evaluation halves")
    objectives = _objectives(claim, d_report)
    m = min(max_pairs, len(pairs))
    n_tests = m * len(objectives)
    gamma = (1.0 - confidence) / (2 * n_tests)
    f = claim.tradeoff
    fit_rng = np.random.default_rng(np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, 2**31)))

    if progress is None:  # automatic: long audits on an interactive terminal
        progress = sys.stderr.isatty() and samples * len(pairs) >= AUTO_PROGRESS_DRAWS
    bar = Progress(2 * n_sel * len(pairs), progress)
    sampler = Sampler(mechanism, mode, pairs, root, workers, executor, bar)
    try:
        sel_raw = sampler.run([t for i in range(len(pairs)) for t in make_tasks(i, 0, n_sel)])
        fitted: list[tuple[list[Score], bool]] = []
        best: dict[Objective, list[_Candidate]] = {o: [] for o in objectives}
        shapes: list[tuple[int, ...] | None] = []
        for i in range(len(pairs)):
            bp = to_batch(sel_raw[(i, 0)], n_sel, None)
            shapes.append(_row_shape(sel_raw[(i, 0)]) if bp.values is not None else None)
            bq = to_batch(sel_raw[(i, 1)], n_sel, shapes[i])
            discrete = _is_discrete(bp, bq)
            # fit scores on one part of the selection draws, choose thresholds on the other, so the
            # predicted power of a fitted region is not inflated by its own fit
            fit_p, pick_p = _halves(bp)
            fit_q, pick_q = _halves(bq)
            scores = fit_scores(fit_p, fit_q, privacy_loss=_loss_fn(mechanism, pairs[i], use_privacy_loss),
                                discrete=discrete, rng=fit_rng)
            fitted.append((scores, discrete))
            for si, sc in enumerate(scores):
                # a score that was not fitted may choose its threshold on all selection draws
                sp = _checked_scores(sc, pick_p if sc.fitted else bp)
                sq = _checked_scores(sc, pick_q if sc.fitted else bq)
                thr = _thresholds(sp, sq)
                masses = _region_masses(sp, sq, thr)
                for direction in (0, 1):
                    a_hat, r_hat = masses[2 * direction], masses[2 * direction + 1]
                    # the same bounds on the threshold-choice draws: a lucky extreme region with
                    # few events scores low, so the choice is robust to the winner's curse
                    a_up = _stats.cp_upper(a_hat * sp.size, sp.size, gamma * SELECTION_LEVEL_FACTOR)
                    b_up = 1.0 - _stats.cp_lower(r_hat * sq.size, sq.size, gamma * SELECTION_LEVEL_FACTOR)
                    for o in objectives:
                        vals = _objective_values(o, a_up, b_up, d_report, f)
                        j = int(np.argmax(vals))
                        best[o].append(_Candidate(float(vals[j]), i, si, direction, float(thr[j])))
        del sel_raw
        main = objectives[0]
        pair_value: dict[int, float] = {}
        for c in best[main]:
            pair_value[c.pair] = max(pair_value.get(c.pair, -math.inf), c.value)
        chosen = sorted(pair_value, key=lambda i: (-pair_value[i], i))[:m]
        bar.add_total(2 * n_eval * len(chosen))
        eval_raw = sampler.run([t for i in chosen for t in make_tasks(i, 1, n_eval)])
    finally:
        bar.close()

    points: list[TestPoint] = []
    for i in chosen:
        bp = to_batch(eval_raw[(i, 0)], n_eval, shapes[i])
        bq = to_batch(eval_raw[(i, 1)], n_eval, shapes[i])
        scores, _ = fitted[i]
        cache: dict[int, tuple[FloatArray, FloatArray]] = {}
        for o in objectives:
            c = max((c for c in best[o] if c.pair == i), key=lambda c: c.value)
            if c.score not in cache:
                cache[c.score] = (_checked_scores(scores[c.score], bp), _checked_scores(scores[c.score], bq))
            sp, sq = cache[c.score]
            points.append(_evaluate(c, o, scores[c.score].name, sp, sq, gamma, n_tests, d_report, f))

    eps_lower = max(p.epsilon_lower for p in points)
    mu_lower = max(p.mu_lower for p in points)
    violation = any(p.claim_margin > 0.0 for p in points)
    p_value = min(p.p_value for p in points)
    if violation:
        witness = max(points, key=lambda p: (p.claim_margin > 0.0, -p.p_value, p.claim_margin))
    else:
        witness = max(points, key=lambda p: p.epsilon_lower)
    notes = []
    if mode == "scalar" and samples * len(pairs) > 10**6:
        notes.append("plain callable: pass vectorised=True with a (data, rng, size) sampler for speed")
    return AuditReport(
        claim=claim, violation=violation, confidence=float(confidence), epsilon_lower=eps_lower,
        delta=d_report, mu_lower=mu_lower, p_value=p_value, witness=witness, points=tuple(points),
        pairs=tuple(_short_repr(pairs[i]) for i in range(len(pairs))), candidate_pairs=len(pairs),
        samples_per_input=samples, samples_total=2 * (n_sel * len(pairs) + n_eval * len(chosen)),
        n_tests=n_tests, seconds=time.perf_counter() - t0, notes=tuple(notes))


def _evaluate(c: _Candidate, o: Objective, name: str, sp: FloatArray, sq: FloatArray, gamma: float,
              n_tests: int, delta: float, f: TradeoffFunction) -> TestPoint:
    n = sp.size
    if c.direction == 0:
        k_null, k_alt = int(np.sum(sp > c.threshold)), int(np.sum(sq > c.threshold))
        region = f"{name} > {c.threshold:.6g}"
    else:
        k_null, k_alt = int(np.sum(sq < c.threshold)), int(np.sum(sp < c.threshold))
        region = f"{name} < {c.threshold:.6g}"

    def box(g: float) -> tuple[float, float]:
        a_u = float(_stats.cp_upper(k_null, n, g))
        b_u = 1.0 - float(_stats.cp_lower(k_alt, n, g))
        return a_u, b_u

    a_u, b_u = box(gamma)
    a_l = float(_stats.cp_lower(k_null, n, gamma))
    b_l = 1.0 - float(_stats.cp_upper(k_alt, n, gamma))
    margin = float(f(a_u)) - b_u

    def refuted(g: float) -> bool:
        au, bu = box(g)
        return bool(bu < float(f(au)))

    level = _stats.bisect_level(refuted)
    return TestPoint(
        pair=c.pair, direction=c.direction, region=region, objective=o, n=n,
        rejections_null=k_null, rejections_alt=k_alt, alpha=k_null / n, beta=1.0 - k_alt / n,
        alpha_lower=a_l, alpha_upper=a_u, beta_lower=b_l, beta_upper=b_u,
        epsilon_lower=float(_stats.eps_lower_bound(a_u, b_u, delta)),
        mu_lower=float(_stats.mu_lower_bound(a_u, b_u)), claim_margin=margin,
        p_value=min(1.0, 2 * n_tests * level))


def _halves(b: Batch) -> tuple[Batch, Batch]:
    h = b.n // 2

    def part(sl: slice) -> Batch:
        raw = b.raw[sl] if isinstance(b.raw, (np.ndarray, list)) else b.raw
        return Batch(None if b.values is None else b.values[sl], b.keys[sl], raw)

    return part(slice(0, h)), part(slice(h, b.n))


def _checked_scores(sc: Score, b: Batch) -> FloatArray:
    s = np.asarray(sc(b), dtype=np.float64).ravel()
    if s.size != b.n:
        raise ValueError(f"score {sc.name!r} returned {s.size} values for {b.n} outputs "
                         "(mechanism.privacy_loss must be vectorised over outputs)")
    return np.nan_to_num(s, nan=0.0)


def _row_shape(chunks: list[Any]) -> tuple[int, ...] | None:
    c = chunks[0]
    if isinstance(c, np.ndarray):
        return tuple(c.shape[1:])
    try:
        a = np.asarray(c[0])
    except (ValueError, TypeError, IndexError):
        return None
    return tuple(a.shape) if a.dtype != object else None


def _loss_fn(mechanism: Any, pair: tuple[Any, Any], enabled: bool) -> Any:
    pl = getattr(mechanism, "privacy_loss", None)
    if not enabled or not callable(pl):
        return None
    x, x2 = pair
    return lambda y: pl(y, x2, x)


def _as_pairs(neighbours: Any, rng: np.random.Generator) -> list[tuple[Any, Any]]:
    if hasattr(neighbours, "pairs") and callable(neighbours.pairs):
        neighbours = neighbours.pairs(rng)
    if isinstance(neighbours, tuple) and len(neighbours) == 2 and not isinstance(neighbours[0], tuple):
        raise TypeError("neighbours must be a list of (data, data2) pairs; wrap a single pair in a list")
    try:
        pairs = [tuple(p) for p in neighbours]
    except TypeError:
        raise TypeError("neighbours must be a list of (data, data2) pairs or a neighbour search") from None
    if not pairs:
        raise ValueError("neighbours must contain at least one (data, data2) pair")
    for p in pairs:
        if len(p) != 2:
            raise ValueError(f"each element of neighbours must be a (data, data2) pair, got {len(p)} items")
    return [(p[0], p[1]) for p in pairs]


def _short_repr(pair: tuple[Any, Any]) -> str:
    def r(x: Any) -> str:
        if isinstance(x, np.ndarray):
            x = x.tolist()
        s = repr(x)
        return s if len(s) <= 60 else s[:57] + "..."

    return f"({r(pair[0])}, {r(pair[1])})"


def assert_private(mechanism: Any, claim: Guarantee, pair: tuple[Any, Any] | Sequence[tuple[Any, Any]], *,
                   samples: int = 20_000, confidence: float = 0.95, seed: int | None = 0,
                   **kwargs: Any) -> AuditReport:
    """Audit on one pair (or a list); raise AssertionError with the report if the claim is refuted.

    For property tests: ``@given(neighbouring(...))`` then ``assert_private(mech, claim, pair)``.
    Passing is not a proof of privacy (an audit is one-sided)."""
    pairs: Any = [pair] if isinstance(pair, tuple) and len(pair) == 2 else pair
    report = audit(mechanism, pairs, claim, samples=samples, confidence=confidence, seed=seed, **kwargs)
    if report.violation:
        raise AssertionError(f"privacy claim refuted\n{report}")
    return report
