"""Rejection regions {score > t}: choosing thresholds on selection draws, and evaluating a chosen
region on the independent evaluation draws with exact Clopper-Pearson boxes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from accountant import GDP, ApproxDP, Guarantee, PureDP
from accountant.core.types import FloatArray
from accountant.notions.tradeoff import TradeoffFunction

from ..claims import claim_delta
from . import stats
from .features import Batch, pooled_unique_count
from .renyi import multibin_renyi_lower, renyi_lower_bound, variational_renyi_lower
from .reports import TestPoint
from .scores import Score

Objective = Literal["eps", "mu", "claim", "renyi"]

#: Outputs with at most this many distinct values (or this share of the sample) are counted exactly.
DISCRETE_MAX_VALUES = 256
DISCRETE_MAX_SHARE = 0.02


def claim_objectives(claim: Guarantee, delta: float) -> list[Objective]:
    """What regions are chosen to maximise: the epsilon bound when it decides an (eps, delta) claim
    at the reported delta, the GDP mu bound for a GDP claim, else the margin below the claim's curve
    (with the epsilon bound reported in every case)."""
    if isinstance(claim, PureDP | ApproxDP) and delta == claim_delta(claim):
        return ["eps"]
    if isinstance(claim, GDP):
        return ["mu", "eps"]
    return ["claim", "eps"]


def exploration_objective(objectives: list[Objective]) -> Objective:
    """What an adaptive neighbour search ranks candidate pairs by: the claim's first objective when
    it is a bound (eps, mu), else the GDP mu bound, which needs no evaluation of the claim's
    trade-off curve (costly for zCDP and Renyi claims) and grows with the distance between the two
    output laws as the margin below any claimed curve does."""
    return "mu" if objectives[0] == "claim" else objectives[0]


@dataclass(frozen=True)
class Candidate:
    value: float
    pair: int
    score: int
    direction: int
    threshold: float
    #: the Renyi order of a Renyi test (0 for curve tests)
    order: float = 0.0
    #: a curve test's region counts on the threshold-choice draws (rejections of each input, draws)
    counts: tuple[float, float, int, int] | None = None
    #: a multi-bin Renyi test: the inner bin edges of the score, and per bin whether the first
    #: distribution's mass is the larger (direction 0: D_a(M(data) || M(data2)), 1: swapped)
    edges: tuple[float, ...] = ()
    larger: tuple[bool, ...] = ()
    #: a variational Renyi test (``renyi.variational_renyi_lower``): the weight g of each bin
    weights: tuple[float, ...] = ()

    def count(self, s: FloatArray) -> NDArray[np.int64]:
        """The integer counts this region's test reads from scores ``s`` of some draws of one input,
        additive over draws (the counts of a union of chunks are the sum of the chunks' counts, so
        the evaluation draws are counted chunk by chunk, ``streaming``): for a multi-bin test its
        bin counts, else the draws in {s > t} and in {s < t}."""
        if self.edges:
            return bin_counts(np.asarray(self.edges, dtype=np.float64), np.sort(s))
        return np.array([np.count_nonzero(s > self.threshold), np.count_nonzero(s < self.threshold)],
                        dtype=np.int64)


@dataclass(frozen=True)
class SortedScores:
    """A score's values on the draws of the two inputs, each sorted once: every count below (of a
    region {s > t}, {s < t} or of a bin) is a binary search in these."""

    p: FloatArray
    q: FloatArray

    @classmethod
    def of(cls, sp: FloatArray, sq: FloatArray) -> SortedScores:
        return cls(np.sort(sp), np.sort(sq))

    @cached_property
    def pooled(self) -> FloatArray:
        """Both samples in one sorted array, NaN left out (np.sort puts NaN last)."""
        both = np.sort(np.concatenate([self.p, self.q]), kind="stable")  # a merge of two sorted runs
        out: FloatArray = both[: both.size - int(np.count_nonzero(np.isnan(both)))]
        return out


def region_masses(s: SortedScores, thr: FloatArray) -> tuple[FloatArray, ...]:
    """Per threshold: (null mass, alternative mass) of {s > t} (direction 0) and, for the
    swapped pair, of {s < t} (direction 1)."""
    n_p, n_q = s.p.size, s.q.size
    a0 = (n_p - np.searchsorted(s.p, thr, "right")) / n_p
    r0 = (n_q - np.searchsorted(s.q, thr, "right")) / n_q
    a1 = np.searchsorted(s.q, thr, "left") / n_q
    r1 = np.searchsorted(s.p, thr, "left") / n_p
    return a0, r0, a1, r1


def thresholds(s: SortedScores, max_thresholds: int = 400) -> FloatArray:
    """The thresholds tried: every distinct pooled score when there are at most ``max_thresholds``,
    else the pooled scores at evenly spaced levels and at levels near 0 and 1 (distinct ones)."""
    pooled = s.pooled
    new = np.ones(pooled.size, dtype=bool)
    np.not_equal(pooled[1:], pooled[:-1], out=new[1:])
    if np.count_nonzero(new) <= max_thresholds:
        return pooled[new]
    levels = np.concatenate([np.linspace(0.0, 1.0, max_thresholds - 8)[1:-1],
                             [1e-5, 1e-4, 1e-3, 3e-3, 1 - 3e-3, 1 - 1e-3, 1 - 1e-4, 1 - 1e-5]])
    return np.unique(stats.order_statistics(pooled, levels))


def objective_values(obj: Objective, a_up: FloatArray, b_up: FloatArray, delta: float,
                      f: TradeoffFunction) -> FloatArray:
    if obj == "eps":
        return stats.eps_lower_bound(a_up, b_up, delta)
    if obj == "mu":
        return stats.mu_lower_bound(a_up, b_up)
    return np.asarray(f(a_up), dtype=np.float64) - b_up


#: Regions (most promising first) whose Clopper-Pearson bounds ``SelectionBounds`` computes
#: before it drops the regions that cannot win.
FIRST_BOUNDS = 8
#: When more than this many regions are left after the first comparison, ``SelectionBounds``
#: tries closer lower bounds on them (``REFINED_TOWARDS``) before computing their quantiles.
REFINE_MIN = 8
#: Shares of the way to Wilson's bound at which the closer lower bounds are tried (the first
#: certified is kept; ``stats.cp_upper_below``): about 0.98 of the way to the exact bound.
REFINED_TOWARDS = (1.0, 0.97, 0.9)


class SelectionBounds:
    """The regions' upper bounds (alpha_u, beta_u) on the selection draws, computed only for the
    regions that can have the largest objective value in their group (one group per score and
    direction, all bounded together: the cost of a few calls is per call, not per region): every
    objective is non-increasing in both bounds, so a region whose value at lower bounds of
    (alpha_u, beta_u) is below the best value found in its group is dropped unbounded. The lower
    bounds (``stats.cp_upper_below``, ``stats.cp_lower_above``) cost a few arithmetic operations
    each, the quantiles an inversion of the incomplete beta function; the regions left after a
    first comparison get closer lower bounds (``REFINED_TOWARDS``) and are compared again (on the
    Laplace audit at 10^4 draws, 190 regions left, 8 after it); a group of at most
    ``FIRST_BOUNDS`` regions is bounded in full, without lower bounds. ``best`` returns per group the
    region ``np.argmax`` picks over all its regions (the first of the largest values) and its value,
    as if every bound were computed."""

    def __init__(self, groups: Sequence[tuple[FloatArray, FloatArray]], n: int, gamma: float) -> None:
        sizes = np.array([k.size for k, _ in groups], dtype=np.intp)
        self.starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        self.k_null = np.concatenate([k for k, _ in groups]).astype(np.float64)
        self.k_alt = np.concatenate([k for _, k in groups]).astype(np.float64)
        self.n, self.gamma = n, gamma
        self.group = np.repeat(np.arange(sizes.size), sizes)
        self.a_up = np.ones(self.k_null.size)
        self.b_up = np.ones(self.k_null.size)
        self.done = np.zeros(self.k_null.size, dtype=bool)
        self.full = (sizes <= FIRST_BOUNDS)[self.group]  # regions of small groups: all bounded
        self.a_below, self.b_below = self.a_up.copy(), self.b_up.copy()
        self.refined = np.zeros(self.k_null.size, dtype=bool)  # closer lower bounds computed
        cheap = ~self.full
        if cheap.any():
            self.a_below[cheap] = stats.cp_upper_below(self.k_null[cheap], n, gamma)
            self.b_below[cheap] = 1.0 - stats.cp_lower_above(self.k_alt[cheap], n, gamma)

    def _compute(self, idx: NDArray[np.intp]) -> None:
        idx = idx[~self.done[idx]]
        if idx.size:
            self.a_up[idx] = stats.cp_upper(self.k_null[idx], self.n, self.gamma)
            self.b_up[idx] = 1.0 - stats.cp_lower(self.k_alt[idx], self.n, self.gamma)
            self.done[idx] = True

    def _values(self, obj: Objective, delta: float, f: TradeoffFunction) -> FloatArray:
        """The objective's value of every bounded region, -inf for the others."""
        idx = np.flatnonzero(self.done)
        vals = np.full(self.k_null.size, -np.inf)
        vals[idx] = objective_values(obj, self.a_up[idx], self.b_up[idx], delta, f)
        return vals

    def best(self, obj: Objective, delta: float, f: TradeoffFunction) -> list[tuple[int, float]]:
        """Per group, (index of the region within it, value)."""
        self._compute(np.flatnonzero(self.full))
        hope = objective_values(obj, self.a_below, self.b_below, delta, f)
        # the FIRST_BOUNDS most promising regions of each group bounded first
        order = np.lexsort((-hope, self.group))
        rank = np.arange(order.size) - self.starts[self.group[order]]
        self._compute(order[rank < FIRST_BOUNDS])
        top = np.maximum.reduceat(self._values(obj, delta, f), self.starts[:-1])[self.group]
        # a margin far above rounding: a dropped region's value is below its group's best one
        floor = top - 1e-9 * np.abs(top) - 1e-12
        left = np.flatnonzero(~(hope < floor) & ~self.done)  # NaN: computed
        if left.size > REFINE_MIN:
            # closer lower bounds for the regions left (the larger of two lower bounds is one;
            # once per region, whatever the objective), then the same test
            new = left[~self.refined[left]]
            a_closer = stats.cp_upper_below(self.k_null[new], self.n, self.gamma, REFINED_TOWARDS)
            b_closer = 1.0 - stats.cp_lower_above(self.k_alt[new], self.n, self.gamma, REFINED_TOWARDS)
            self.a_below[new] = np.maximum(self.a_below[new], a_closer)
            self.b_below[new] = np.maximum(self.b_below[new], b_closer)
            self.refined[new] = True
            closer = objective_values(obj, self.a_below[left], self.b_below[left], delta, f)
            left = left[~(closer < floor[left])]
        self._compute(left)
        vals = self._values(obj, delta, f)
        out = []
        for lo, hi in zip(self.starts[:-1], self.starts[1:], strict=True):
            j = int(np.argmax(vals[lo:hi]))
            out.append((j, float(vals[lo + j])))
        return out


def value_at(c: Candidate, obj: Objective, gamma: float, delta: float, f: TradeoffFunction) -> float:
    """A curve-test candidate's value recomputed from its counts with its bounds at level gamma."""
    if c.counts is None:
        return c.value
    k_null, k_alt, n_null, n_alt = c.counts
    a_up = stats.cp_upper(k_null, n_null, gamma)
    b_up = 1.0 - stats.cp_lower(k_alt, n_alt, gamma)
    return float(objective_values(obj, a_up, b_up, delta, f))


def is_discrete(p: Batch, q: Batch) -> bool:
    """Whether the outputs are counted exactly: no numbers, integers, or at most
    max(DISCRETE_MAX_VALUES, DISCRETE_MAX_SHARE x draws) distinct outputs in the pooled draws."""
    if p.values is None or p.values.dtype.kind in "biu":
        return True
    return pooled_unique_count(p, q, limit=max(DISCRETE_MAX_VALUES, DISCRETE_MAX_SHARE * (p.n + q.n))) \
        is not None


def evaluate(c: Candidate, o: Objective, score: Score, kp: NDArray[np.int64], kq: NDArray[np.int64], n: int,
             gamma: float, n_tests: int, delta: float, f: TradeoffFunction) -> TestPoint:
    """Bound the errors of the chosen region from its counts (``Candidate.count``) on the n
    evaluation draws of each input (kp: data's outputs, kq: data2's), each bound at level ``gamma``."""
    if c.direction == 0:
        k_null, k_alt = int(kp[0]), int(kq[0])
        region = f"{score.name} > {c.threshold:.6g}"
    else:
        k_null, k_alt = int(kq[1]), int(kp[1])
        region = f"{score.name} < {c.threshold:.6g}"
    if score.describe is not None:
        region = f"{score.name}: {score.describe(c.threshold, c.direction)}"

    def box(g: float) -> tuple[float, float]:
        a_u = float(stats.cp_upper(k_null, n, g))
        b_u = 1.0 - float(stats.cp_lower(k_alt, n, g))
        return a_u, b_u

    a_u, b_u = box(gamma)
    a_l = float(stats.cp_lower(k_null, n, gamma))
    b_l = 1.0 - float(stats.cp_upper(k_alt, n, gamma))
    margin = f(a_u) - b_u

    def margin_at(g: float) -> float:
        au, bu = box(g)
        return f(au) - bu

    level = stats.bisect_level(margin_at)
    return TestPoint(
        pair=c.pair, direction=c.direction, region=region, objective=o, family=score.family, n=n,
        rejections_null=k_null, rejections_alt=k_alt, alpha=k_null / n, beta=1.0 - k_alt / n,
        alpha_lower=a_l, alpha_upper=a_u, beta_lower=b_l, beta_upper=b_u,
        epsilon_lower=float(stats.eps_lower_bound(a_u, b_u, delta)),
        mu_lower=float(stats.mu_lower_bound(a_u, b_u)), claim_margin=margin,
        p_value=min(1.0, 2 * n_tests * level))


def renyi_values(s: SortedScores, thr: FloatArray, gamma: float,
                 orders: FloatArray, claimed: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per threshold t, on the selection draws: the largest margin (Renyi lower bound minus claim)
    over the orders, the order attaining it, and the direction (0: P(s > t) > Q(s > t) expected)."""
    a, r = region_masses(s, thr)[:2]
    n_p, n_q = s.p.size, s.q.size
    kp, kq = a * n_p, r * n_q
    best = np.full(thr.size, -np.inf)
    order = np.full(thr.size, orders[0])
    direction = np.where(a >= r, 0, 1)
    pl, pu = stats.cp_lower(kp, n_p, gamma), stats.cp_upper(kp, n_p, gamma)
    ql, qu = stats.cp_lower(kq, n_q, gamma), stats.cp_upper(kq, n_q, gamma)
    # one pair of one-sided bounds per direction: (p_l, q_u) when P(A) is the larger, else (p_u, q_l)
    p_b = np.where(direction == 0, pl, pu)
    q_b = np.where(direction == 0, qu, ql)
    for o, c in zip(orders, claimed, strict=True):
        v = renyi_lower_bound(p_b, q_b, direction == 0, float(o)) - c
        better = v > best
        best = np.where(better, v, best)
        order = np.where(better, o, order)
    return best, order, direction


def evaluate_renyi(c: Candidate, score: Score, kp: NDArray[np.int64], kq: NDArray[np.int64], n: int,
                   gamma: float, n_tests: int, claimed: float) -> TestPoint:
    """The Renyi test of region {s > t} at order c.order from its counts on the n evaluation draws
    of each input: two one-sided bounds (the direction fixed on the selection draws), each at level
    ``gamma``."""
    k_p, k_q = int(kp[0]), int(kq[0])

    def bounds(g: float) -> tuple[float, float]:
        if c.direction == 0:
            return float(stats.cp_lower(k_p, n, g)), float(stats.cp_upper(k_q, n, g))
        return float(stats.cp_upper(k_p, n, g)), float(stats.cp_lower(k_q, n, g))

    def lower(g: float) -> float:
        p_b, q_b = bounds(g)
        return float(renyi_lower_bound(p_b, q_b, c.direction == 0, c.order))

    low = lower(gamma)
    p_b, q_b = bounds(gamma)
    level = stats.bisect_level(lambda g: lower(g) - claimed)
    region = f"{score.name} > {c.threshold:.6g}: Renyi D_{c.order:g} >= {low:.4g} (claim: <= {claimed:.4g})"
    return TestPoint(
        pair=c.pair, direction=c.direction, region=region, objective="renyi", family="renyi", n=n,
        rejections_null=k_p, rejections_alt=k_q, alpha=k_p / n, beta=1.0 - k_q / n,
        alpha_lower=p_b if c.direction == 0 else 0.0, alpha_upper=p_b if c.direction == 1 else 1.0,
        beta_lower=1.0 - q_b if c.direction == 0 else 0.0,
        beta_upper=1.0 - q_b if c.direction == 1 else 1.0,
        epsilon_lower=0.0, mu_lower=0.0, claim_margin=low - claimed,
        p_value=min(1.0, 2 * n_tests * level), renyi_order=c.order, renyi_lower=low)


#: Bin counts tried by the multi-bin Renyi test (equal-mass bins of a score on the selection draws).
RENYI_BINS = (4, 8, 16)
#: Bin counts tried by the variational Renyi test, as long as the selection draws hold at least
#: ``VARIATIONAL_MIN_PER_BIN`` per bin and input (its two bounds do not widen with the bins).
VARIATIONAL_BINS = (8, 16, 32, 64)
VARIATIONAL_MIN_PER_BIN = 200


def bin_counts(edges: FloatArray, s: FloatArray) -> NDArray[np.int64]:
    """Counts of sorted scores s in the bins cut at ``edges`` (a score equal to an edge goes above it)."""
    below = np.searchsorted(s, edges, "left")  # scores below each edge
    return np.diff(below, prepend=0, append=s.size).astype(np.int64)


def log_ratio_weights(k1: NDArray[np.int64], n1: int, k2: NDArray[np.int64], n2: int) -> FloatArray:
    """The variational test's weights: log((k1 + 1/2) / n1) - log((k2 + 1/2) / n2) per bin, the
    smoothed log ratio of bin masses (the optimal g for the binned outputs)."""
    return np.asarray(np.log((k1 + 0.5) / n1) - np.log((k2 + 0.5) / n2), dtype=np.float64)


def renyi_bins(s: SortedScores, pair: int, score: int, gamma: float, orders: FloatArray,
               claimed: FloatArray) -> Candidate | None:
    """On the selection draws: the multi-bin Renyi test (bins of the score at equal-mass cuts of the
    pooled draws; the box test ``multibin_renyi_lower`` with bin count in ``RENYI_BINS`` or the
    variational test ``variational_renyi_lower`` with bin count in ``VARIATIONAL_BINS``; divergence
    direction; order) with the largest margin of its lower bound at level ``gamma`` over the
    claim. The variational test's weights and value come from the same draws (a plug-in: the
    evaluation draws alone certify the bound)."""
    pooled = s.pooled
    low = pooled[0]
    n_p, n_q = s.p.size, s.q.size
    best: Candidate | None = None
    tried: set[tuple[bool, tuple[float, ...]]] = set()
    plans = [(m, False) for m in RENYI_BINS] + [(m, True) for m in VARIATIONAL_BINS
                                                if min(n_p, n_q) >= VARIATIONAL_MIN_PER_BIN * m]
    for m, variational in plans:
        edges = np.unique(stats.order_statistics(pooled, np.linspace(0.0, 1.0, m + 1)[1:-1]))
        edges = edges[edges > low]  # a cut at the least score leaves a bin below it empty
        if edges.size < 2 or (variational, tuple(edges)) in tried:  # two bins: the binary test's
            continue  # region, at a better level; few distinct scores: the same bins again
        tried.add((variational, tuple(edges)))
        cp, cq = bin_counts(edges, s.p), bin_counts(edges, s.q)
        sides = ((cp, n_p, cq, n_q), (cq, n_q, cp, n_p))
        for direction, (k1, n1, k2, n2) in enumerate(sides):
            larger = k1 / n1 > k2 / n2
            if not larger.any() or larger.all():
                continue
            weights: tuple[float, ...] = ()
            if variational:
                g = log_ratio_weights(k1, n1, k2, n2)
                lower = variational_renyi_lower(k1, n1, k2, n2, g, orders, gamma)
                weights = tuple(float(x) for x in g)
            else:  # a coarse search (fewer rounds: a lower bound still) is enough to rank the choices
                lower = multibin_renyi_lower(k1, n1, k2, n2, larger, orders, gamma, rounds=5)
            vals = lower - claimed
            j = int(np.argmax(vals))
            if best is None or vals[j] > best.value:
                best = Candidate(float(vals[j]), pair, score, direction, 0.0, float(orders[j]),
                                 edges=tuple(float(e) for e in edges),
                                 larger=tuple(bool(x) for x in larger), weights=weights)
    return best


def evaluate_renyi_bins(c: Candidate, score: Score, kp: NDArray[np.int64], kq: NDArray[np.int64], n: int,
                        gamma: float, n_tests: int, claimed: float) -> TestPoint:
    """The multi-bin Renyi test chosen on the selection draws, from its bin counts kp, kq on the n
    evaluation draws of each input (``renyi_bins_point``)."""
    return renyi_bins_point(c, score.name, kp, kq, gamma, n_tests, claimed)


def renyi_bins_point(c: Candidate, name: str, counts_p: NDArray[np.int64], counts_q: NDArray[np.int64],
                     gamma: float, n_tests: int, claimed: float) -> TestPoint:
    """A multi-bin Renyi test from its bin counts on the evaluation draws of data (counts_p) and
    data2 (counts_q): the box test's 2m one-sided bounds at level gamma / m each, or the variational
    test's two bounds at level gamma each (2 gamma in all, as every test)."""
    cp, cq = np.asarray(counts_p, dtype=np.int64), np.asarray(counts_q, dtype=np.int64)
    n_p, n_q = int(cp.sum()), int(cq.sum())
    k1, n1, k2, n2 = (cp, n_p, cq, n_q) if c.direction == 0 else (cq, n_q, cp, n_p)

    def lower(g: float, rounds: int = 12) -> float:
        if c.weights:
            return float(variational_renyi_lower(k1, n1, k2, n2, c.weights, [c.order], g)[0])
        return float(multibin_renyi_lower(k1, n1, k2, n2, c.larger, [c.order], g, rounds)[0])

    low = lower(gamma)
    # the p-value from a coarser search: a lower bound at each level, so the p-value is larger
    level = stats.bisect_level(lambda g: lower(g, 5) - claimed)
    first, second = ("M(data)", "M(data2)") if c.direction == 0 else ("M(data2)", "M(data)")
    kind = "; variational bound" if c.weights else ""
    region = (f"{name} in {len(c.edges) + 1} bins: Renyi D_{c.order:g}({first} || {second}) >= "
              f"{low:.4g} (claim: <= {claimed:.4g}{kind})")
    return TestPoint(
        pair=c.pair, direction=c.direction, region=region, objective="renyi", family="renyi", n=n_p,
        rejections_null=0, rejections_alt=0, alpha=math.nan, beta=math.nan, alpha_lower=0.0,
        alpha_upper=1.0, beta_lower=0.0, beta_upper=1.0, epsilon_lower=0.0, mu_lower=0.0,
        claim_margin=low - claimed, p_value=min(1.0, 2 * n_tests * level), renyi_order=c.order,
        renyi_lower=low)


def halves(b: Batch) -> tuple[Batch, Batch]:
    h = b.n // 2

    def part(sl: slice) -> Batch:
        raw = b.raw[sl] if isinstance(b.raw, (np.ndarray, list)) else b.raw
        return Batch(None if b.values is None else b.values[sl], b.keys[sl], raw,
                     None if b.cats is None else b.cats[sl], b.slots)

    return part(slice(0, h)), part(slice(h, b.n))


def checked_scores(sc: Score, b: Batch) -> FloatArray:
    s = np.asarray(sc(b), dtype=np.float64).ravel()
    if s.size != b.n:
        raise ValueError(f"score {sc.name!r} returned {s.size} values for {b.n} outputs "
                         "(mechanism.privacy_loss must be vectorised over outputs)")
    return s if np.isfinite(s).all() else np.nan_to_num(s, nan=0.0)


