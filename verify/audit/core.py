"""Black-box audits: refute a privacy claim, or bound the privacy loss from below, by testing.

A mechanism satisfies f-DP exactly when every test between its outputs on neighbouring inputs has
errors (alpha, beta) with beta >= f(alpha) [@wasserman2010statistical; @dong2022gaussian, Def. 2.3].
The audit draws outputs on each pair, chooses rejection regions {s > t} on a selection part of
the draws (30% by default, at most ``sampling.MAX_SELECTION_DRAWS`` per input; scores: exact
likelihood ratio, exact value counts, thresholds on coordinates, histograms, IEEE-754
granularity, logistic regression), and bounds
alpha = P(reject | data) and beta = P(accept | data2) on the independent evaluation part with exact
Clopper-Pearson bounds on its region counts (folded in chunk by chunk where the draws are made,
``streaming``). Regions are chosen to maximise the bound they would give (computed with the
same formula on the selection draws, at a stricter level so small noisy regions lose).
Outputs of any type are featurised (``features``). Each pair is tested by several families, each
a test of its own: the generic distributional family (outputs as real numbers: intervals, boxes,
exact values of discrete outputs, structure categories, always run), for zCDP and RDP claims a
Renyi test on the same regions (``renyi``), the declared likelihood
ratio (when the mechanism declares ``privacy_loss``: it adds a test, never replaces one) and, with
``floating_point=True``, the IEEE-754 representation family; the report keeps the representation
finding apart from the distributional one. With K tests (families x evaluated pairs x objectives)
and 2 bounds per test, each bound is taken at level (1 - confidence) / (2K) (Bonferroni), so all
reported bounds hold together with probability >= confidence. A claim is
refuted when some box corner (alpha_u, beta_u) lies strictly below the claimed curve; since f
is non-increasing, beta <= beta_u < f(alpha_u) <= f(alpha) then contradicts the claim.
An audit is one-sided: it never certifies that a mechanism is private.
"""

from __future__ import annotations

import itertools
import math
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import Any

import numpy as np

from accountant import Guarantee
from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real
from accountant.notions.tradeoff import TradeoffFunction

from ..claims import claim_delta
from ..protocols import (
    AdaptiveNeighbourSearch,
    Auditable,
    Data,
    NeighbouringPair,
    Neighbours,
    NeighbourSearch,
    Output,
)
from . import stats
from .features import Layout
from .regions import (
    Candidate,
    Objective,
    SelectionBounds,
    SortedScores,
    checked_scores,
    claim_objectives,
    evaluate,
    evaluate_renyi,
    evaluate_renyi_bins,
    exploration_objective,
    halves,
    is_discrete,
    objective_values,
    region_masses,
    renyi_bins,
    renyi_values,
    thresholds,
    value_at,
)
from .renyi import claimed_renyi, gdp_mu_lower, rho_lower_bound
from .reports import AuditReport, Finding, TestPoint
from .sampling import Progress, Sampler, follows_seed, make_tasks, root_seed, sampling_mode, split_draws
from .scores import FAMILIES, Family, Score, declared_losses, fit_scores
from .streaming import ChosenTests, count_evaluation

#: Regions are chosen by the bound they would give at this multiple of the evaluation level: a
#: stricter level penalises small, noisy regions (the winner's curse over many thresholds).
SELECTION_LEVEL_FACTOR = 0.01
#: Draws per input on which an adaptive search estimates each candidate pair: samples // divisor up
#: to 51,200 samples, then sqrt(EXPLORE_ROOT * samples) (the same there: 1280), at least EXPLORE_MIN
#: and at most the selection draws. A ranking needs less precision than the final bound, so the
#: exploration grows as the square root of the samples and its share of the audit's draws falls
#: (24 estimates: 30% of the final audit's draws at 2 * 10^5 samples, 14% at 10^6, 1.4% at 10^8).
EXPLORE_DIVISOR = 40
EXPLORE_ROOT = 32
EXPLORE_MIN = 1000
#: Thresholds per score an exploration estimate tries (the audit's own screening tries up to 400).
EXPLORE_THRESHOLDS = 64
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
          progress: bool | None = None, use_privacy_loss: bool = True,
          floating_point: bool = True) -> AuditReport:
    """Audit ``mechanism`` against ``claim`` on neighbouring inputs.

    mechanism: a dpcert mechanism (``.sample(data, rng, size)``, optional ``.privacy_loss``) or a
      callable ``(data, rng) -> output`` (a number, array, None, string, sentinel, or lists, tuples
      and dicts of these, any mix across draws), or with
      ``vectorised=True`` a callable ``(data, rng, size)`` stacking outputs on axis 0.
    neighbours: a list of ``(data, data2)`` pairs, or a search (``verify.neighbours``) with a
      ``pairs(rng)`` method; an adaptive search (``AdaptiveSearch``, with ``search``) estimates
      candidate pairs on exploration draws of their own first (``exploration_draws`` per input each:
      samples // 40 up to 51,200 samples, sqrt(32 samples) beyond).
      With several pairs, all are screened on the selection draws and the ``max_pairs`` most
      promising are evaluated (the selection is inside the error budget).
    claim: any accountant guarantee; refuted when a test's confidence box lies below its curve.
    samples: draws per input of each pair (``selection_fraction`` of them choose the regions).
    delta: where ``epsilon_lower`` is reported (default: the claim's delta, else 0).
    selection_fraction: share of the draws used to fit scores and choose regions (the rest bound
      the errors); max_pairs: pairs carried from screening to evaluation.
    progress: a progress bar on stderr (default: on a terminal, for long audits).
    use_privacy_loss: add the test on the mechanism's declared ``privacy_loss`` when it has one.
    floating_point: also test which doubles come out (the representation finding); False reads
      outputs as real numbers only, so the verdict judges the algorithm apart from floating point.
    workers / executor: draw in processes, or on any ``concurrent.futures.Executor`` (e.g. a Dask
      ``client.get_executor()``); the mechanism must then be picklable. The selection half is at
      most ``MAX_SELECTION_DRAWS`` per input; the evaluation half is counted where it is drawn
      (``streaming``), so memory does not grow with ``samples``. Results depend on ``seed`` only,
      not on the number of workers or the executor.
    Returns an ``AuditReport``; every bound in it holds with probability >= ``confidence``.
    """
    t0 = time.perf_counter()
    if not isinstance(claim, Guarantee):
        raise TypeError(f"claim must be an accountant guarantee, got {type(claim).__name__}")
    samples = check_count("samples", samples, low=4, high=MAX_SAMPLES)
    confidence = check_real("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    check_real("selection_fraction", selection_fraction, low=0.0, high=1.0, low_open=True, high_open=True)
    check_count("max_pairs", max_pairs, low=1, high=MAX_SAMPLES)
    if not isinstance(floating_point, bool):
        raise TypeError(f"floating_point must be True or False, got {floating_point!r}")
    if workers is not None:
        check_count("workers", workers, low=1, high=MAX_WORKERS)
    d_report = claim_delta(claim) if delta is None else check_real("delta", delta, low=0.0, high=1.0,
                                                                     high_open=True)
    mode = sampling_mode(mechanism, vectorised)
    root = root_seed(seed)
    n_sel, n_eval = split_draws(samples, selection_fraction)
    if n_eval < 2:
        raise ValueError("samples is too small to split into selection and evaluation halves")
    objectives = claim_objectives(claim, d_report)
    f = claim.tradeoff
    fit_rng = np.random.default_rng(np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, 2**31)))
    # the level at which regions are compared on the selection draws (any level keeps validity;
    # this one anticipates the evaluation level of every family's tests)
    renyi = claimed_renyi(claim)
    gamma_sel = (1.0 - confidence) / (2 * max_pairs * len(objectives) * len(FAMILIES))
    gamma_sel *= SELECTION_LEVEL_FACTOR
    search_rng = np.random.default_rng(
        np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, 2**31 + 1)))
    explored = 0
    if not isinstance(neighbours, list) and isinstance(neighbours, AdaptiveNeighbourSearch):
        # (a list of pairs is no search, and the protocol check is slow) the search sees
        # exploration draws only (own seeds): the pairs it returns are chosen independently of
        # the selection and evaluation draws below
        n_explore = exploration_draws(samples, n_sel)
        explore_obj = exploration_objective(objectives)
        calls = itertools.count()

        def estimate(cands: Sequence[NeighbouringPair]) -> list[float]:
            nonlocal explored
            cands = [(p[0], p[1]) for p in cands]
            sub = np.random.SeedSequence(root.entropy,
                                         spawn_key=(*root.spawn_key, 2**31 + 2, next(calls)))
            raw = Sampler(mechanism, mode, cands, sub, workers, executor, Progress(0, False)).run(
                [t for i in range(len(cands)) for t in make_tasks(i, 0, n_explore)])
            explored += 2 * n_explore * len(cands)
            out = []
            for i, pair in enumerate(cands):
                sc = _screen(raw[(i, 0)], raw[(i, 1)], n_explore, i, [explore_obj], gamma_sel, d_report, f,
                             _loss_fn(mechanism, pair, use_privacy_loss), fit_rng, floating_point, None,
                             exact=False)
                out.append(max(c.value for cs in sc.best.values() for c in cs))
            return out

        pairs = _as_pairs(neighbours.search(estimate, search_rng), search_rng)
    else:
        pairs = _as_pairs(neighbours, search_rng)
    m = min(max_pairs, len(pairs))
    # reproducibility is checked, not trusted: an adapter that declares seeded=False is believed
    # (it can only add a warning), any other mechanism is drawn twice on one seed
    seeded = (getattr(mechanism, "seeded", True) is not False
              and follows_seed(mechanism, mode, pairs[0][0], root))

    if progress is None:  # automatic: long audits on an interactive terminal
        progress = sys.stderr.isatty() and samples * len(pairs) >= AUTO_PROGRESS_DRAWS
    bar = Progress(2 * n_sel * len(pairs), progress)
    sampler = Sampler(mechanism, mode, pairs, root, workers, executor, bar)
    try:
        sel_raw = sampler.run([t for i in range(len(pairs)) for t in make_tasks(i, 0, n_sel)])
        screened = [_screen(sel_raw[(i, 0)], sel_raw[(i, 1)], n_sel, i, objectives, gamma_sel, d_report, f,
                            _loss_fn(mechanism, pairs[i], use_privacy_loss), fit_rng, floating_point, renyi)
                    for i in range(len(pairs))]
        del sel_raw
        # per family, the m pairs whose best region promises most on the main objective
        chosen: dict[Family, list[int]] = {}
        for fam in FAMILIES:
            main = _objectives(fam, objectives)[0]
            value = {i: max(c.value for c in sc.best[(fam, main)])
                     for i, sc in enumerate(screened) if sc.best.get((fam, main))}
            if value:
                ranked = sorted(value, key=lambda i: (-value[i], i))[:m]
                lead = [max(screened[i].best[(fam, main)], key=lambda c: c.value) for i in ranked]
                chosen[fam] = ranked[:_split(lead, main, gamma_sel * max_pairs, d_report, f)]
        evaluated = sorted({i for v in chosen.values() for i in v})
        # per evaluated pair, its tests (family, objective, region) in a fixed order; the
        # evaluation draws are folded into the regions' counts where they are drawn
        tests = {i: [(fam, o, max(screened[i].best[(fam, o)], key=lambda c: c.value))
                     for fam, pairs_f in chosen.items() if i in pairs_f
                     for o in _objectives(fam, objectives)] for i in evaluated}
        bar.add_total(2 * n_eval * len(evaluated))
        counts = count_evaluation(sampler, 1, n_eval, {
            i: ChosenTests(screened[i].layout, {c.score: screened[i].scores[c.score] for _, _, c in t},
                           tuple(c for _, _, c in t)) for i, t in tests.items()})
    finally:
        bar.close()

    n_tests = sum(len(v) * len(_objectives(fam, objectives)) for fam, v in chosen.items())
    gamma = (1.0 - confidence) / (2 * n_tests)
    points: list[TestPoint] = []
    for i in evaluated:
        for (fam, o, c), kp, kq in zip(tests[i], counts[(i, 0)], counts[(i, 1)], strict=True):
            score = screened[i].scores[c.score]
            if fam == "renyi" and renyi is not None:
                claimed = float(renyi[1][int(np.flatnonzero(renyi[0] == c.order)[0])])
                test = evaluate_renyi_bins if c.edges else evaluate_renyi
                points.append(test(c, score, kp, kq, n_eval, gamma, n_tests, claimed))
            else:
                points.append(evaluate(c, o, score, kp, kq, n_eval, gamma, n_tests, d_report, f))

    dist = _finding("distributional", [p for p in points if p.family != "representation"])
    rep = _finding("representation", [p for p in points if p.family == "representation"]) \
        if "representation" in chosen else None
    witness = _witness(points)
    rho_low = rho_lower_bound(points)
    notes = []
    if mode == "scalar" and samples * len(pairs) > 10**6:
        notes.append("plain callable: pass vectorised=True with a (data, rng, size) sampler for speed")
    if not seeded:
        how = getattr(mechanism, "seeding", "")
        if not (isinstance(how, str) and how):
            how = ("two runs of the mechanism on one seed gave different outputs (it draws from a "
                   "random source of its own)")
        notes.append(f"not reproducible from the seed: {how}; the bounds hold all the same "
                     "(the draws are independent)")
    if floating_point and rep is None:
        notes.append("no floating-point outputs: the representation test does not apply")
    return AuditReport(
        claim=claim, violation=any(p.claim_margin > 0.0 for p in points), confidence=float(confidence),
        epsilon_lower=max(p.epsilon_lower for p in points), delta=d_report,
        mu_lower=max(max(p.mu_lower for p in points), gdp_mu_lower(rho_low)), rho_lower=rho_low,
        p_value=min(p.p_value for p in points),
        witness=witness, points=tuple(points), distributional=dist, representation=rep,
        floating_point=floating_point, seeded=seeded,
        pairs=tuple(_short_repr(pairs[i]) for i in range(len(pairs))), candidate_pairs=len(pairs),
        samples_per_input=samples,
        samples_total=explored + 2 * (n_sel * len(pairs) + n_eval * len(evaluated)),
        n_tests=n_tests, seconds=time.perf_counter() - t0, notes=tuple(notes))


def exploration_draws(samples: int, n_sel: int) -> int:
    """Draws per input of each exploration estimate of an adaptive search (``EXPLORE_DIVISOR``,
    ``EXPLORE_ROOT``, ``EXPLORE_MIN``)."""
    grown = min(samples // EXPLORE_DIVISOR, math.isqrt(EXPLORE_ROOT * samples))
    return min(n_sel, max(EXPLORE_MIN, grown))


@dataclass
class _Screened:
    """One pair after screening: its layout, fitted scores and best region per (family, objective)."""

    layout: Layout
    scores: list[Score]
    best: dict[tuple[Family, Objective], list[Candidate]]


def _screen(chunks_p: list[Output], chunks_q: list[Output], n: int, pair: int,
            objectives: list[Objective], gamma_sel: float, d_report: float, f: TradeoffFunction,
            loss: Callable[[Output], FloatArray] | None, fit_rng: np.random.Generator,
            floating_point: bool, renyi: tuple[FloatArray, FloatArray] | None,
            exact: bool = True) -> _Screened:
    """Fit scores on one part of the selection draws and choose thresholds on the other, so the
    predicted power of a fitted region is not inflated by its own fit. Regions are valued by
    Clopper-Pearson bounds, or with ``exact=False`` (an adaptive search's ranking, which claims no
    bound) by Wilson's approximate ones on EXPLORE_THRESHOLDS thresholds per score, far cheaper."""
    layout, bp, bq = Layout.fit(chunks_p, chunks_q, n)
    discrete = is_discrete(bp, bq)
    if loss is not None and not declared_losses(loss, bp, bq):
        loss = None  # a stub: no closed-form density
    fit_p, pick_p = halves(bp)
    fit_q, pick_q = halves(bq)
    scores = fit_scores(fit_p, fit_q, privacy_loss=loss, discrete=discrete, rng=fit_rng,
                        floating_point=floating_point, names=layout.column_names())
    best: dict[tuple[Family, Objective], list[Candidate]] = {}
    # per score and direction: (score, direction, thresholds, null and alternative masses)
    groups: list[tuple[int, int, FloatArray, FloatArray, FloatArray]] = []
    for si, sc in enumerate(scores):
        # a score that was not fitted may choose its threshold on all selection draws
        sp = checked_scores(sc, pick_p if sc.fitted else bp)
        sq = checked_scores(sc, pick_q if sc.fitted else bq)
        srt = SortedScores.of(sp, sq)
        thr = thresholds(srt) if exact else thresholds(srt, EXPLORE_THRESHOLDS)
        masses = region_masses(srt, thr)
        groups += [(si, direction, thr, masses[2 * direction], masses[2 * direction + 1])
                   for direction in (0, 1)]
        if renyi is not None and sc.family != "representation":
            vals, order, direction_r = renyi_values(srt, thr, gamma_sel, *renyi)
            j = int(np.argmax(vals))
            best.setdefault(("renyi", "renyi"), []).append(
                Candidate(float(vals[j]), pair, si, int(direction_r[j]), float(thr[j]), float(order[j])))
            binned = renyi_bins(srt, pair, si, gamma_sel, *renyi)
            if binned is not None:
                best[("renyi", "renyi")].append(binned)
    # the bounds these frequencies would give on all n selection draws (so a fitted score, whose
    # thresholds are chosen on half of them, competes on equal terms with the others) at a
    # stricter level: a lucky extreme region with few events scores low, so the choice is robust
    # to the winner's curse
    n_t = n
    chosen: dict[Objective, list[tuple[int, float]]] = {}
    if exact:  # Clopper-Pearson bounds of the regions that can win, all groups together
        bounds = SelectionBounds([(a_hat * n_t, r_hat * n_t) for _, _, _, a_hat, r_hat in groups],
                                 n_t, gamma_sel)
        chosen = {o: bounds.best(o, d_report, f) for o in objectives}
    for g, (si, direction, thr, a_hat, r_hat) in enumerate(groups):
        if not exact:
            a_up = stats.wilson_bounds(a_hat * n_t, n_t, gamma_sel)[1]
            b_up = 1.0 - stats.wilson_bounds(r_hat * n_t, n_t, gamma_sel)[0]
        for o in objectives:
            if exact:
                j, value = chosen[o][g]
            else:
                vals = objective_values(o, a_up, b_up, d_report, f)
                j = int(np.argmax(vals))
                value = float(vals[j])
            best.setdefault((scores[si].family, o), []).append(
                Candidate(value, pair, si, direction, float(thr[j]),
                          counts=(float(a_hat[j] * n_t), float(r_hat[j] * n_t), n_t, n_t)))
    return _Screened(layout, scores, best)


def _split(lead: list[Candidate], obj: Objective, gamma: float, delta: float, f: TradeoffFunction) -> int:
    """How many of a family's ranked pairs to evaluate: the k whose best region promises most when
    the family's share of the error budget (per-bound level ``gamma`` for one pair) is split k ways;
    a pair that screening shows cannot win no longer halves the level of the one that can. Chosen on
    the selection draws only, so it costs no error budget."""
    best_k, best_v = len(lead), -np.inf
    if best_k == 1 or any(c.counts is None for c in lead):
        return best_k  # (one pair: nothing to split)
    for k in range(1, len(lead) + 1):
        v = max(value_at(c, obj, gamma / k, delta, f) for c in lead[:k])
        if v > best_v:
            best_k, best_v = k, v
    return best_k


def _objectives(family: Family, objectives: list[Objective]) -> list[Objective]:
    """The objectives a family is tested on (a Renyi test has its own)."""
    return ["renyi"] if family == "renyi" else objectives


def _finding(kind: str, points: list[TestPoint]) -> Finding:
    w = _witness(points)
    return Finding(kind=kind, violation=any(p.claim_margin > 0.0 for p in points),
                   epsilon_lower=max((p.epsilon_lower for p in points), default=0.0),
                   mu_lower=max((p.mu_lower for p in points), default=0.0),
                   p_value=min((p.p_value for p in points), default=1.0), witness=w, n_tests=len(points))


def _witness(points: list[TestPoint]) -> TestPoint | None:
    if not points:
        return None
    if any(p.claim_margin > 0.0 for p in points):
        return max(points, key=lambda p: (p.claim_margin > 0.0, -p.p_value, p.claim_margin))
    return max(points, key=lambda p: p.epsilon_lower)


def _loss_fn(mechanism: Auditable, pair: NeighbouringPair,
             enabled: bool) -> Callable[[Output], FloatArray] | None:
    pl = getattr(mechanism, "privacy_loss", None)
    if not enabled or not callable(pl):
        return None
    x, x2 = pair
    return lambda y: pl(y, x2, x)


def _as_pairs(neighbours: Neighbours, rng: np.random.Generator) -> list[NeighbouringPair]:
    found = neighbours if isinstance(neighbours, list) or not isinstance(neighbours, NeighbourSearch) \
        else neighbours.pairs(rng)
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


def _short_repr(pair: NeighbouringPair) -> str:
    def r(x: Data) -> str:
        if isinstance(x, np.ndarray):
            x = x.tolist()
        s = repr(x)
        return s if len(s) <= 60 else s[:57] + "..."

    return f"({r(pair[0])}, {r(pair[1])})"


def assert_private(mechanism: Auditable, claim: Guarantee,
                   pair: NeighbouringPair | Sequence[NeighbouringPair], *, samples: int = 20_000,
                   confidence: float = 0.95, seed: int | None = 0,
                   **kwargs: Any) -> AuditReport:
    """Audit on one pair (or a list); raise AssertionError with the report if the claim is refuted.

    For property tests: ``@given(neighbouring(...))`` then ``assert_private(mech, claim, pair)``.
    Passing is not a proof of privacy (an audit is one-sided)."""
    pairs: Sequence[NeighbouringPair] = [pair] if isinstance(pair, tuple) and len(pair) == 2 else pair
    report = audit(mechanism, pairs, claim, samples=samples, confidence=confidence, seed=seed, **kwargs)
    if report.violation:
        raise AssertionError(f"privacy claim refuted\n{report}")
    return report
