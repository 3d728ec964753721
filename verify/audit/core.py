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

import math
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np

from accountant import Guarantee
from accountant.validation import FloatArray, check_count, check_real

from ..claims import claim_delta
from ..protocols import Auditable, Data, Neighbours, NeighbourSearch, Output, Pair
from . import stats
from .regions import (
    Candidate,
    Objective,
    checked_scores,
    claim_objectives,
    evaluate,
    halves,
    is_discrete,
    objective_values,
    region_masses,
    thresholds,
)
from .reports import AuditReport, TestPoint
from .sampling import Progress, Sampler, make_tasks, root_seed, sampling_mode, to_batch
from .scores import Score, fit_scores

#: Regions are chosen by the bound they would give at this multiple of the evaluation level: a
#: stricter level penalises small, noisy regions (the winner's curse over many thresholds).
SELECTION_LEVEL_FACTOR = 0.01
#: With ``progress=None`` a progress bar is shown on a terminal from this many draws per input.
AUTO_PROGRESS_DRAWS = 10_000_000
#: Most draws per input (and pairs) one audit takes.
MAX_SAMPLES = 10**12
#: Most worker processes an audit starts.
MAX_WORKERS = 4096


def audit(mechanism: Auditable, neighbours: Neighbours, claim: Guarantee, *, samples: int,
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
    d_report = claim_delta(claim) if delta is None else check_real("delta", delta, low=0.0, high=1.0,
                                                                     high_open=True)
    mode = sampling_mode(mechanism, vectorised)
    root = root_seed(seed)
    pairs = _as_pairs(neighbours, np.random.default_rng(
        np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, 2**31 + 1))))
    n_sel = max(2, round(samples * selection_fraction))
    n_eval = samples - n_sel
    if n_eval < 2:
        raise ValueError("samples is too small to split into selection and evaluation halves")
    objectives = claim_objectives(claim, d_report)
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
        best: dict[Objective, list[Candidate]] = {o: [] for o in objectives}
        shapes: list[tuple[int, ...] | None] = []
        for i in range(len(pairs)):
            bp = to_batch(sel_raw[(i, 0)], n_sel, None)
            shapes.append(_row_shape(sel_raw[(i, 0)]) if bp.values is not None else None)
            bq = to_batch(sel_raw[(i, 1)], n_sel, shapes[i])
            discrete = is_discrete(bp, bq)
            # fit scores on one part of the selection draws, choose thresholds on the other, so the
            # predicted power of a fitted region is not inflated by its own fit
            fit_p, pick_p = halves(bp)
            fit_q, pick_q = halves(bq)
            scores = fit_scores(fit_p, fit_q, privacy_loss=_loss_fn(mechanism, pairs[i], use_privacy_loss),
                                discrete=discrete, rng=fit_rng)
            fitted.append((scores, discrete))
            for si, sc in enumerate(scores):
                # a score that was not fitted may choose its threshold on all selection draws
                sp = checked_scores(sc, pick_p if sc.fitted else bp)
                sq = checked_scores(sc, pick_q if sc.fitted else bq)
                thr = thresholds(sp, sq)
                masses = region_masses(sp, sq, thr)
                for direction in (0, 1):
                    a_hat, r_hat = masses[2 * direction], masses[2 * direction + 1]
                    # the same bounds on the threshold-choice draws: a lucky extreme region with
                    # few events scores low, so the choice is robust to the winner's curse
                    a_up = stats.cp_upper(a_hat * sp.size, sp.size, gamma * SELECTION_LEVEL_FACTOR)
                    b_up = 1.0 - stats.cp_lower(r_hat * sq.size, sq.size, gamma * SELECTION_LEVEL_FACTOR)
                    for o in objectives:
                        vals = objective_values(o, a_up, b_up, d_report, f)
                        j = int(np.argmax(vals))
                        best[o].append(Candidate(float(vals[j]), i, si, direction, float(thr[j])))
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
                cache[c.score] = (checked_scores(scores[c.score], bp), checked_scores(scores[c.score], bq))
            sp, sq = cache[c.score]
            points.append(evaluate(c, o, scores[c.score].name, sp, sq, gamma, n_tests, d_report, f))

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


def _row_shape(chunks: list[Output]) -> tuple[int, ...] | None:
    c = chunks[0]
    if isinstance(c, np.ndarray):
        return tuple(c.shape[1:])
    try:
        a = np.asarray(c[0])
    except (ValueError, TypeError, IndexError):
        return None
    return tuple(a.shape) if a.dtype != object else None


def _loss_fn(mechanism: Auditable, pair: Pair, enabled: bool) -> Callable[[Output], FloatArray] | None:
    pl = getattr(mechanism, "privacy_loss", None)
    if not enabled or not callable(pl):
        return None
    x, x2 = pair
    return lambda y: pl(y, x2, x)


def _as_pairs(neighbours: Neighbours, rng: np.random.Generator) -> list[Pair]:
    found = neighbours.pairs(rng) if isinstance(neighbours, NeighbourSearch) else neighbours
    if isinstance(found, tuple) and len(found) == 2 and not isinstance(found[0], tuple):
        raise TypeError("neighbours must be a list of (data, data2) pairs; wrap a single pair in a list")
    try:
        pairs = [tuple(p) for p in found]
    except TypeError:
        raise TypeError("neighbours must be a list of (data, data2) pairs or a neighbour search") from None
    if not pairs:
        raise ValueError("neighbours must contain at least one (data, data2) pair")
    for p in pairs:
        if len(p) != 2:
            raise ValueError(f"each element of neighbours must be a (data, data2) pair, got {len(p)} items")
    return [(p[0], p[1]) for p in pairs]


def _short_repr(pair: Pair) -> str:
    def r(x: Data) -> str:
        if isinstance(x, np.ndarray):
            x = x.tolist()
        s = repr(x)
        return s if len(s) <= 60 else s[:57] + "..."

    return f"({r(pair[0])}, {r(pair[1])})"


def assert_private(mechanism: Auditable, claim: Guarantee, pair: Pair | Sequence[Pair], *,
                   samples: int = 20_000, confidence: float = 0.95, seed: int | None = 0,
                   **kwargs: Any) -> AuditReport:
    """Audit on one pair (or a list); raise AssertionError with the report if the claim is refuted.

    For property tests: ``@given(neighbouring(...))`` then ``assert_private(mech, claim, pair)``.
    Passing is not a proof of privacy (an audit is one-sided)."""
    pairs: Sequence[Pair] = [pair] if isinstance(pair, tuple) and len(pair) == 2 else pair
    report = audit(mechanism, pairs, claim, samples=samples, confidence=confidence, seed=seed, **kwargs)
    if report.violation:
        raise AssertionError(f"privacy claim refuted\n{report}")
    return report
