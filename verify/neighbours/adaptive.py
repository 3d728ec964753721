"""The adaptive neighbour search: structured candidates, then a search toward the pair with the largest
estimated privacy loss, on exploration draws of its own (see ``AdaptiveSearch``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from accountant.core.types import ADJACENCIES, FloatArray
from accountant.core.validation import check_count, check_real
from mechanisms import Domain

from .answers import ANSWER_NORMS, AnswerBall
from .fixed import MAX_N, Estimator, FloatPair, check_domain, statdp_patterns
from .space import SearchSpace, differing_record, rows_differ, unique_pairs
from .surrogate import Surrogate

__all__ = ["ANTIPODAL_FRACTIONS", "CONFIRMATIONS", "SURROGATE_QUANTILES", "AdaptiveSearch", "SearchMethod"]

#: How the adaptive search moves after its structured start.
SearchMethod = Literal["climb", "surrogate"]
#: Quantile levels of each coordinate that describe a dataset to the surrogate.
SURROGATE_QUANTILES = (0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0)
#: Where the antipodal starts put the shared records: this fraction of the way from the centre
#: toward the opposite of the changed record.
ANTIPODAL_FRACTIONS = (0.25, 0.5)
#: How many of the best pairs the search estimates a second time on fresh draws before ranking them
#: by the mean of their two estimates (at least ``keep``, at most a sixth of the budget).
CONFIRMATIONS = 4


@dataclass(frozen=True)
class AdaptiveSearch:
    """A search for the neighbouring pair with the largest privacy loss, adapted to the mechanism.

    domain: ``(low, high, n)`` (n scalar records in [low, high]) or a ``mechanisms.Domain`` with
    numeric bounds and n (its adjacency is used unless ``adjacency`` is given); a Domain with
    d > 1 has vector records in its box, and the pairs are (n, d) arrays.
    adjacency: "replace" or "add_remove" (records), or "answers" (n query answers, each moving by
    at most ``sensitivity``, StatDP's setting [@ding2018detecting]; with a Domain of d > 1 each
    answer is a d-vector in the box and moves within the ball of radius ``sensitivity`` in ``norm``:
    every row k of the (n, d) pair has ||a_k - a'_k|| <= sensitivity).
    norm: "l1", "l2" or "linf", the norm of a vector answer's sensitivity (adjacency "answers").
    ball: ``("l1" | "l2", radius)``: records also lie in that ball around 0 (the box must contain
    0), as for clipped-norm vector sums.

    It starts from structured candidates (``pairs``: constant datasets of extreme and central
    records with one record changed, first to the opposite extreme; for vector records the box's
    corners, or the ball's points on the axes and the diagonal, and antipodal pairs (``_antipodal``:
    shared records at or toward the opposite of the changed record, where an aggregate clipped after
    summing moves most); two-valued datasets; StatDP's patterns for answers), then spends ``budget``
    estimates: a bisection along chains of neighbouring
    datasets from one constant dataset to another (a loss concentrated on one step of the chain, as
    at a data-dependent threshold, lies in the half whose end points differ more; group privacy
    bounds the rest), then, with ``method="climb"``, hill climbing from the best pairs by
    one-record (one-answer, one-coordinate) moves that stay in the domain and the adjacency (for
    vector records also every shared record to one random point between the centre and an
    extreme, a continuous move; for vector answers the shared answer moved, the difference rotated
    or rescaled up to the radius), or with
    ``method="surrogate"`` a DP-Finder-style search [@bichsel2018dpfinder]: a smooth surrogate
    (Gaussian-process regression) of the estimated loss as a function of the pair, optimised by
    local search over moves without drawing, its best candidates estimated on fresh draws and
    refitted. The last min(max(``CONFIRMATIONS``, keep), max(1, budget // 6)) estimates (4 by default)
    re-estimate the leading pairs on fresh draws, and pairs are ranked by the mean of their two
    estimates: a single estimate of the best of many pairs is biased upward (the winner's curse).
    keep: the pairs returned, best mean first (default 1: a runner-up within the exploration noise
    of the best, as a mirror image or a small rotation of it, would double the final audit's cost
    for a gain of at most that noise).
    ``verify.audit`` runs the search on exploration draws independent of its selection and
    evaluation draws (the event of each estimate is chosen on those draws) and audits the ``keep``
    best pairs, so the search costs no error budget: any rule for choosing pairs keeps the
    evaluation's bounds valid, and every evaluated test is counted in K.
    """

    domain: tuple[float, float, int] | Domain
    adjacency: str | None = None
    integers: bool = False
    sensitivity: float = 1.0
    budget: int = 24
    keep: int = 1
    ball: tuple[str, float] | None = None
    method: str = "climb"
    norm: str = "linf"
    _space: SearchSpace = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_real("sensitivity", self.sensitivity, low=0.0, high=math.inf, low_open=True, high_open=True)
        check_count("budget", self.budget, low=1, high=MAX_N)
        check_count("keep", self.keep, low=1, high=MAX_N)
        if not isinstance(self.integers, bool):
            raise TypeError(f"integers must be True or False, got {self.integers!r}")
        if self.method not in ("climb", "surrogate"):
            raise ValueError(f"method must be 'climb' or 'surrogate', got {self.method!r}")
        object.__setattr__(self, "_space", self._build())

    def _build(self) -> SearchSpace:
        dom = self.domain
        adj = self.adjacency
        if isinstance(dom, Domain):
            try:
                lo = np.array([float(a) for a in dom.lower], dtype=np.float64)
                hi = np.array([float(b) for b in dom.upper], dtype=np.float64)
                d, n = int(dom.d), int(dom.n)
            except (TypeError, ValueError):
                raise ValueError(f"domain must have numeric bounds, d and n, got {dom!r}") from None
            if lo.size == 1:
                lo, hi = np.full(d, lo[0]), np.full(d, hi[0])
            if adj is None:
                adj = dom.adjacency
            for j in range(d):
                check_domain((float(lo[j]), float(hi[j]), n))
            n = check_count("domain size n", n, low=1, high=MAX_N)
            scalar = d == 1
        else:
            low, high, n = check_domain(dom)
            lo, hi, scalar = np.array([low]), np.array([high]), True
        adj = "replace" if adj is None else adj
        if adj not in (*ADJACENCIES, "answers"):
            raise ValueError(f"adjacency must be 'replace', 'add_remove' or 'answers', got {adj!r}")
        if self.norm not in ANSWER_NORMS:
            raise ValueError(f"norm must be 'l1', 'l2' or 'linf', got {self.norm!r}")
        if self.norm != "linf" and adj != "answers":
            raise ValueError(f"norm {self.norm!r} is the norm of an answer's sensitivity; it needs "
                             f"adjacency 'answers', got {adj!r}")
        if adj == "answers" and not scalar:
            if self.integers:
                raise ValueError("integers: vector answers move continuously within the norm ball; "
                                 "integers=True is for scalar answers or records")
            narrow = np.flatnonzero(hi - lo < self.sensitivity)
            if narrow.size:
                j = int(narrow[0])
                raise ValueError(f"domain coordinate {j} spans [{lo[j]}, {hi[j]}], narrower than the "
                                 f"sensitivity {self.sensitivity}: no answer pair reaches the radius")
        if self.integers and np.any(np.ceil(lo) > np.floor(hi)):
            raise ValueError(f"domain [{lo.tolist()}, {hi.tolist()}] contains no integer")
        if adj == "add_remove" and n < 2:
            raise ValueError(f"add_remove search needs n >= 2 records, got n = {n}")
        ball = self.ball
        if ball is not None:
            if not isinstance(ball, (tuple, list)) or len(ball) != 2 or ball[0] not in ("l1", "l2"):
                raise ValueError(f"ball must be ('l1' or 'l2', radius), got {ball!r}")
            r = check_real("ball radius", ball[1], low=0.0, high=math.inf, low_open=True, high_open=True)
            if adj == "answers":
                raise ValueError("a ball constrains records; adjacency 'answers' has none")
            if np.any(lo > 0) or np.any(hi < 0):
                raise ValueError(f"a ball around 0 needs a box containing 0, got lower {lo.tolist()}, "
                                 f"upper {hi.tolist()}")
            if self.integers and r < 1:
                raise ValueError(f"ball radius {r} < 1 holds no nonzero integer record")
            ball = (str(ball[0]), r)
        return SearchSpace(lo, hi, n, adj, scalar, self.integers, ball)  # type: ignore[arg-type]

    # ----- structured candidates ---------------------------------------------------------------
    def pairs(self, rng: np.random.Generator) -> list[FloatPair]:
        """The structured candidates (all neighbouring under the adjacency)."""
        return [(self._space.out(a), self._space.out(b)) for a, b in self._starts()]

    def _starts(self) -> list[FloatPair]:
        sp = self._space
        out: list[FloatPair] = []
        if sp.adj == "answers" and not sp.scalar:
            return self._answer_ball().starts()
        if sp.adj == "answers":
            s, low, high = self.sensitivity, float(sp.lo[0]), float(sp.hi[0])
            for base in dict.fromkeys([low, (low + high) / 2 - s]):
                if base >= low and base + 2 * s <= high:
                    out += statdp_patterns(sp.n, s, base)
            if not out:
                raise ValueError(f"domain [{low}, {high}] is narrower than 2 * sensitivity = {2 * s}")
            return unique_pairs([(sp.fix(a[:, None]), sp.fix(b[:, None])) for a, b in out])
        recs = sp.records()
        consts = [np.tile(c, (sp.n, 1)) for c in recs]
        if sp.adj == "replace":
            changes = [(i, sp.opposite(c)) for i, c in enumerate(recs)]  # opposite extremes first
            # then every other record (scalars), or from the centre to every extreme (vectors)
            changes += [(i, v) for i, c in enumerate(recs) for v in recs
                        if (sp.d == 1 or i == 2) and not np.array_equal(v, c)]
            for i, v in changes:
                x2 = consts[i].copy()
                x2[0] = v
                if not np.array_equal(x2, consts[i]):
                    out.append((consts[i], x2))
        else:
            out += [(x, x[1:]) for x in consts]
        out += self._antipodal(recs)
        a, b = recs[0], recs[1]
        for j in sorted({sp.n // 4, sp.n // 2, (3 * sp.n) // 4}):
            out.append(self._link(a, b, 2 * j if sp.adj == "add_remove" else j))
        return unique_pairs([(sp.fix(p), sp.fix(q)) for p, q in out])

    def _answer_ball(self) -> AnswerBall:
        return AnswerBall(self._space, self.norm, self.sensitivity)

    def _antipodal(self, recs: list[FloatArray]) -> list[FloatPair]:
        """Vector records: pairs whose changed record and shared records point opposite ways, where a
        nonlinear aggregate (a sum clipped after summing, a projection) moves most. Replace: shared
        records at the centre, the changed record moved from an extreme c to its opposite; both
        adjacencies: shared records a fraction t of the way from the centre toward the opposite of
        c (t in ``ANTIPODAL_FRACTIONS``) with c the changed (removed) record."""
        sp = self._space
        if sp.d == 1 or sp.n < 2:
            return []
        mid = sp.record((sp.lo + sp.hi) / 2)
        out: list[FloatPair] = []
        for c in recs[:2]:
            opp = sp.opposite(c)
            if sp.adj == "replace":
                x = np.tile(mid, (sp.n, 1))
                x[0], x2 = c, x.copy()
                x2[0] = opp
                out.append((x, x2))
            for t in ANTIPODAL_FRACTIONS:
                x = np.tile(sp.record(mid + t * (opp - mid)), (sp.n, 1))
                x[0] = c
                if sp.adj == "replace":
                    x2 = x.copy()
                    x2[0] = x[1]
                    out.append((x, x2))
                else:
                    out.append((x, x[1:]))
        return out

    def _chain(self, a: FloatArray, b: FloatArray, i: int) -> FloatArray:
        """Dataset i of a chain of neighbours from all-a to all-b: replace one a by b per step
        ("replace"), or remove one a then add one b ("add_remove", so twice as many steps)."""
        n = self._space.n
        if self._space.adj == "replace":
            return np.asarray([b] * i + [a] * (n - i), dtype=np.float64)
        j, odd = divmod(i, 2)
        return np.asarray([b] * j + [a] * (n - j - odd), dtype=np.float64).reshape(-1, a.size)

    def _chain_length(self) -> int:
        return self._space.n if self._space.adj == "replace" else 2 * self._space.n

    def _link(self, a: FloatArray, b: FloatArray, i: int) -> FloatPair:
        """Step i of the chain, the larger dataset first (add_remove: x2 is x without one record;
        the audit tests both directions)."""
        x, x2 = self._chain(a, b, i), self._chain(a, b, i + 1)
        return (x2, x) if x2.shape[0] > x.shape[0] else (x, x2)

    # ----- the search ------------------------------------------------------------------------------
    def search(self, estimate: Estimator, rng: np.random.Generator) -> list[FloatPair]:
        """Structured candidates, chain bisection, then hill climbing or the surrogate search, within
        ``budget`` estimates, the last ``_confirmations()`` of them spent on second estimates of the
        best pairs; returns the ``keep`` pairs with the largest mean estimate (pairs estimated twice
        first)."""
        sp = self._space
        state = _State(self.budget, estimate, sp)
        confirm = self._confirmations()
        starts = self._starts()
        state.add(starts, state.run(starts))
        if sp.adj != "answers":
            recs = sp.records()
            chains = [(recs[0], recs[1])]
            if len(recs) > 2 and sp.d == 1:  # vector records: the budget goes to the antipodal starts
                chains += [(recs[0], recs[2]), (recs[2], recs[1])]
            for a, b in chains:
                if state.left() <= confirm:
                    break
                state.add(*self._bisect(a, b, state.run))
        top = self._surrogate(state, rng, confirm) if self.method == "surrogate" else []
        while self.method == "climb" and state.left() > confirm:
            parents = state.best(4)
            children = unique_pairs([self._move(p, rng) for p in parents for _ in range(2)])
            children = [c for c in children if state.key(c) not in state.seen] or children
            if not children:
                break
            children = children[: state.left() - confirm]
            state.add(children, state.run(children))
        top = top or state.best(confirm)
        state.add(top, state.run(top))
        return [(sp.out(a), sp.out(b)) for a, b in state.best(self.keep, average=True)]

    def _confirmations(self) -> int:
        """Second estimates the search reserves: ``CONFIRMATIONS`` or ``keep`` if larger, at most
        a sixth of the budget (at least one). A single estimate of the best of many pairs is biased
        upward (the winner's curse); the mean with a fresh one ranks the leaders without that bias,
        so the final audit needs no runner-up as a hedge against a lucky estimate."""
        return min(max(CONFIRMATIONS, self.keep), max(1, self.budget // 6))

    def _bisect(self, a: FloatArray, b: FloatArray,
                run: Callable[[list[FloatPair]], list[float]]) -> tuple[list[FloatPair], list[float]]:
        """Narrow the segment of the all-a to all-b chain whose end points differ most, by halves,
        down to one step: a neighbouring pair (returned with its estimate)."""
        fix = self._space.fix
        lo, hi = 0, self._chain_length()
        while hi - lo > 1:
            mid = (lo + hi) // 2
            halves = [(self._chain(a, b, lo), self._chain(a, b, mid)),
                      (self._chain(a, b, mid), self._chain(a, b, hi))]
            v = run([(fix(p), fix(q)) for p, q in halves])
            if len(v) < 2:
                return [], []
            lo, hi = (lo, mid) if v[0] >= v[1] else (mid, hi)
        link = self._link(a, b, lo)
        pair = (fix(link[0]), fix(link[1]))
        return [pair], run([pair])

    def _surrogate(self, state: _State, rng: np.random.Generator, confirm: int) -> list[FloatPair]:
        """The DP-Finder-style phase [@bichsel2018dpfinder, Sec. 4-5]: fit a smooth surrogate of the
        estimated loss over the pairs estimated so far, maximise an optimistic acquisition (mean +
        sd) by local search over moves (no draws), estimate the best few new pairs on fresh draws,
        refit, until ``confirm`` estimates are left; returns the ``confirm`` most promising pairs
        (by the larger of the surrogate's mean and the estimate) for ``search`` to confirm."""
        batch = 4
        while state.left() > confirm:
            gp = Surrogate.fit(np.array([self._features(p) for p in state.pairs]), np.array(state.values))
            cands = self._optimise(gp, state, rng)
            todo = [c for c in cands if state.key(c) not in state.seen][: min(batch, state.left() - confirm)]
            if not todo:
                todo = unique_pairs([self._random_pair(rng) for _ in range(batch)])[: state.left() - confirm]
            state.add(todo, state.run(todo))
        gp = Surrogate.fit(np.array([self._features(p) for p in state.pairs]), np.array(state.values))
        mean, _ = gp.predict(np.array([self._features(p) for p in state.pairs]))
        order = sorted(range(len(state.pairs)), key=lambda i: (-max(float(mean[i]), state.values[i]), i))
        return unique_pairs([state.pairs[i] for i in order])[:confirm]

    def _optimise(self, gp: Surrogate, state: _State, rng: np.random.Generator) -> list[FloatPair]:
        """Local maxima of the acquisition, by greedy moves from the best estimated pairs and from
        random pairs; returned best first."""
        starts = state.best(4) + [self._random_pair(rng) for _ in range(2)]
        found: list[tuple[float, int, FloatPair]] = []
        for s in starts:
            cur = s
            cur_v = float(gp.acquire(np.array([self._features(cur)]))[0])
            for _ in range(4):
                nb = unique_pairs([self._move(cur, rng) for _ in range(12)])
                vals = gp.acquire(np.array([self._features(p) for p in nb]))
                for v, p in zip(vals, nb, strict=True):
                    found.append((float(v), len(found), p))
                j = int(np.argmax(vals))
                if vals[j] <= cur_v:
                    break
                cur, cur_v = nb[j], float(vals[j])
        found.sort(key=lambda t: (-t[0], t[1]))
        return unique_pairs([p for _, _, p in found])

    def _random_pair(self, rng: np.random.Generator) -> FloatPair:
        """A random neighbouring pair: a random structured pair after a few random moves."""
        starts = self._starts()
        p = starts[int(rng.integers(len(starts)))]
        for _ in range(3):
            p = self._move(p, rng)
        return p

    def _features(self, pair: FloatPair) -> FloatArray:
        """What the surrogate sees of a pair: the answers and their changes ("answers"); else the
        changed record before and after, and per coordinate the mean and quantiles of the
        records the two datasets share."""
        x, x2 = pair
        sp = self._space
        if sp.adj == "answers":
            return np.concatenate([x.ravel(), (x2 - x).ravel()])
        k = differing_record(x, x2, sp.adj)
        old = x[k]
        new = x2[k] if sp.adj == "replace" else x[k]
        rest = np.delete(x, k, axis=0)
        if rest.shape[0] == 0:
            rest = x
        q = np.quantile(rest, SURROGATE_QUANTILES, axis=0).ravel()
        return np.concatenate([old, new, new - old, rest.mean(axis=0), q])

    def _move(self, pair: FloatPair, rng: np.random.Generator) -> FloatPair:
        """A random neighbouring pair one record (answer, coordinate) away from ``pair``."""
        sp = self._space
        if sp.adj == "answers" and not sp.scalar:
            return self._answer_ball().move(pair, rng)
        x, x2 = pair[0].copy(), pair[1].copy()
        recs = sp.records()
        pick = [*recs, sp.random_record(rng)]
        v = pick[int(rng.integers(len(pick)))]
        if sp.adj == "answers":
            k = int(rng.integers(x.shape[0]))
            s = self.sensitivity
            if rng.random() < 0.5:  # move answer k of both
                shift = v[0] - x[k, 0]
                x[k] += shift
                x2[k] += shift
            else:  # change how answer k differs
                x2[k] = x[k] + s * float(rng.choice([-1.0, 0.0, 1.0]))
            x, x2 = sp.fix(x), sp.fix(x2)
            if np.max(np.abs(x - x2)) > s or np.array_equal(x, x2):
                return pair
            return x, x2
        diff = differing_record(x, x2, sp.adj)
        u = int(rng.integers(5 if sp.d > 1 else 3))
        if u == 4:  # every shared record moved together (to one point, or scaled)
            if x.shape[0] == 1:
                return pair
            mid = (sp.lo + sp.hi) / 2
            old, new = x[diff].copy(), x2[diff].copy() if sp.adj == "replace" else x[diff].copy()
            if rng.random() < 0.5:  # toward an extreme: to a random point of the segment
                x[:] = mid + float(rng.uniform()) * (v - mid)
            else:  # a local refinement: scaled about the centre
                x[:] = mid + float(rng.uniform(0.5, 1.5)) * (x - mid)
            x[diff] = old
            x2 = x.copy()
            if sp.adj == "replace":
                x2[diff] = new
            else:
                x2 = np.delete(x, diff, axis=0)
        elif u == 3:  # one coordinate of the changed record, toward an end of its axis (or anywhere)
            j = int(rng.integers(sp.d))
            end = [sp.lo[j], sp.hi[j], -x[diff, j], float(rng.uniform(sp.lo[j], sp.hi[j]))]
            row = x2 if sp.adj == "replace" and rng.random() < 0.5 else x
            row[diff, j] = end[int(rng.integers(len(end)))]
            if sp.adj == "add_remove":
                x2 = np.delete(x, diff, axis=0)
        elif sp.adj == "replace":
            if u == 0 or x.shape[0] == 1:  # the replaced record's new value
                x2[diff] = v
            elif u == 1:  # the replaced record's old value
                x[diff] = v
            else:  # another record, in both
                k = int(rng.integers(x.shape[0] - 1))
                k += k >= diff
                x[k] = x2[k] = v
        else:  # x2 is x without record ``diff``
            if u == 0 or x.shape[0] == 1:
                x[diff] = v
            else:
                x[int(rng.integers(x.shape[0]))] = v
            x2 = np.delete(x, diff, axis=0)
        x, x2 = sp.fix(x), sp.fix(x2)
        if sp.adj == "replace" and int(np.sum(rows_differ(x, x2))) != 1:
            return pair
        return x, x2


class _State:
    """The estimates spent so far, per pair (internal (n, d) arrays)."""

    def __init__(self, budget: int, estimate: Estimator, sp: SearchSpace) -> None:
        self.budget, self.estimate, self.sp = budget, estimate, sp
        self.spent = 0
        self.pairs: list[FloatPair] = []
        self.values: list[float] = []
        self.seen: dict[tuple[bytes, bytes, int], list[float]] = {}

    @staticmethod
    def key(p: FloatPair) -> tuple[bytes, bytes, int]:
        return p[0].tobytes(), p[1].tobytes(), p[1].shape[0]

    def left(self) -> int:
        return self.budget - self.spent

    def run(self, cands: list[FloatPair]) -> list[float]:
        """Estimates of the candidates (as many as the budget allows), each on fresh draws."""
        cands = cands[: max(0, self.left())]
        if not cands:
            return []
        vals = [float(v) for v in self.estimate([(self.sp.out(a), self.sp.out(b)) for a, b in cands])]
        self.spent += len(cands)
        # an infinite or undefined estimate ranks first or last, but stays finite for the surrogate
        return [float(np.nan_to_num(v, nan=-1e3, posinf=1e3, neginf=-1e3)) for v in vals]

    def add(self, cands: list[FloatPair], vals: list[float]) -> None:
        for p, v in zip(cands, vals, strict=False):
            self.pairs.append(p)
            self.values.append(v)
            self.seen.setdefault(self.key(p), []).append(v)

    def best(self, k: int, average: bool = False) -> list[FloatPair]:
        """The k distinct pairs with the largest estimate (with ``average``: pairs estimated twice
        first, by the mean of their estimates, then the rest)."""
        def rank(i: int) -> tuple[int, float, int]:
            vs = self.seen[self.key(self.pairs[i])]
            if average:
                return (-min(len(vs), 2), -float(np.mean(vs)), i)
            return (0, -self.values[i], i)

        order = sorted(range(len(self.pairs)), key=rank)
        return unique_pairs([self.pairs[i] for i in order])[:k]

