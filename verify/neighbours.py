"""Neighbour search: which pairs of inputs to audit.

``AdaptiveSearch`` starts from structured candidates and moves toward pairs with a larger
estimated loss, on exploration draws of its own (see ``AdaptiveSearch``).
``PatternSearch`` gives the input patterns StatDP uses for mechanisms over a vector of query answers
[@ding2018detecting, Table 1]:
each answer moves by at most the sensitivity. ``RandomSearch`` draws random neighbouring datasets
from a declared domain under replace-one or add/remove-one adjacency. Both have ``pairs(rng)`` and
can be passed to ``verify.audit`` as ``neighbours``; the audit screens all pairs on its selection
half and spends its error budget only on the most promising.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from accountant.validation import FloatArray, check_count, check_real
from mechanisms import Domain

Adjacency = Literal["replace", "add_remove"]
#: Neighbouring pairs of datasets as the searches produce them.
FloatPair = tuple[FloatArray, FloatArray]
#: What an adaptive search is given: estimated privacy loss of each candidate pair.
Estimator = Callable[[Sequence[FloatPair]], Sequence[float]]
#: Largest dataset size (number of answers or records) of a generated pair.
MAX_N = 10**7


def _check_patterns(n: int, sensitivity: float, base: float) -> tuple[int, float, float]:
    n = check_count("n", n, low=1, high=MAX_N)
    s = check_real("sensitivity", sensitivity, low=0.0, high=math.inf, low_open=True, high_open=True)
    b = check_real("base", base, low=-math.inf, high=math.inf, low_open=True, high_open=True)
    if not math.isfinite(b + s):
        raise ValueError(f"base + sensitivity must be finite, got base = {base!r}, sensitivity = {s!r}")
    return n, s, b


def statdp_patterns(n: int, sensitivity: float = 1.0,
                    base: float = 0.0) -> list[tuple[FloatArray, FloatArray]]:
    """The StatDP patterns for n query answers: one above, one below, one above rest below, one below
    rest above, half-half, all above, all below, x-shape. Answers of ``data`` sit at ``base +
    sensitivity`` (x-shape: alternate blocks), and each answer of ``data2`` differs by at most
    ``sensitivity``."""
    n, s, base = _check_patterns(n, sensitivity, base)
    one = np.full(n, base + s)
    h = n // 2
    rest = np.arange(n) > 0

    def v(a: FloatArray) -> FloatArray:
        return np.asarray(a, dtype=np.float64)

    pats = [
        (one, v(one + s * (np.arange(n) == 0))),                      # one above
        (one, v(one - s * (np.arange(n) == 0))),                      # one below
        (one, v(np.where(rest, one - s, one + s))),                   # one above, rest below
        (one, v(np.where(rest, one + s, one - s))),                   # one below, rest above
        (one, v(np.where(np.arange(n) < h, one + s, one - s))),       # half above, half below
        (one, v(one + s)),                                            # all above
        (one, v(one - s)),                                            # all below
        (v(np.where(np.arange(n) < h, one, one - s)),
         v(np.where(np.arange(n) < h, one - s, one))),                # x-shape
    ]
    seen: list[tuple[FloatArray, FloatArray]] = []
    for a, b in pats:
        dup = any(np.array_equal(a, x) and np.array_equal(b, y) for x, y in seen)
        if not np.array_equal(a, b) and not dup:
            seen.append((a, b))
    return seen


@dataclass(frozen=True)
class PatternSearch:
    """StatDP's patterns for a vector of ``n`` query answers of the given sensitivity."""

    n: int
    sensitivity: float = 1.0
    base: float = 0.0

    def __post_init__(self) -> None:
        _check_patterns(self.n, self.sensitivity, self.base)

    def pairs(self, rng: np.random.Generator) -> list[tuple[FloatArray, FloatArray]]:
        return statdp_patterns(self.n, self.sensitivity, self.base)


def check_domain(domain: tuple[float, float, int]) -> tuple[float, float, int]:
    if not isinstance(domain, (tuple, list)) or len(domain) != 3:
        raise TypeError(f"domain must be a tuple (low, high, n), got {domain!r}")
    low = check_real("domain low", domain[0], low=-math.inf, high=math.inf, low_open=True, high_open=True)
    high = check_real("domain high", domain[1], low=low, high=math.inf, low_open=True, high_open=True)
    return low, high, check_count("domain size n", domain[2], low=1, high=MAX_N)


def check_adjacency(adjacency: str) -> Adjacency:
    if adjacency not in ("replace", "add_remove"):
        raise ValueError(f"adjacency must be 'replace' or 'add_remove', got {adjacency!r}")
    return adjacency  # type: ignore[return-value]


@dataclass(frozen=True)
class RandomSearch:
    """``count`` random neighbouring datasets of n values in [low, high]. Half of them use extreme
    values (low/high), where violations of sensitivity bounds usually show."""

    domain: tuple[float, float, int]
    adjacency: str = "replace"
    count: int = 10
    integers: bool = False

    def __post_init__(self) -> None:
        check_domain(self.domain)
        check_adjacency(self.adjacency)
        check_count("count", self.count, low=1, high=MAX_N)

    def pairs(self, rng: np.random.Generator) -> list[tuple[FloatArray, FloatArray]]:
        low, high, n = check_domain(self.domain)
        out = []
        for k in range(self.count):
            if k % 2 == 0:
                x = rng.choice([low, high], n)
            else:
                x = rng.uniform(low, high, n)
            if self.integers:
                x = np.round(x)
            i = int(rng.integers(n))
            if self.adjacency == "replace":
                x2 = x.copy()
                x2[i] = high if x[i] - low < high - x[i] else low
            else:
                x2 = np.delete(x, i)
            out.append((np.asarray(x, dtype=np.float64), np.asarray(x2, dtype=np.float64)))
        return out


SearchAdjacency = Literal["replace", "add_remove", "answers"]


@dataclass(frozen=True)
class AdaptiveSearch:
    """A search for the neighbouring pair with the largest privacy loss, adapted to the mechanism.

    domain: ``(low, high, n)`` (n records in [low, high]) or a scalar ``mechanisms.Domain`` with
    numeric bounds and n (its adjacency is used unless ``adjacency`` is given).
    adjacency: "replace" or "add_remove" (records), or "answers" (a vector of n query answers, each
    moving by at most ``sensitivity``, StatDP's setting [@ding2018detecting]).

    It starts from structured candidates (``pairs``: constant datasets and one-record changes from
    them, two-valued datasets, StatDP's patterns for answers), then spends ``budget`` estimates:
    a bisection along chains of neighbouring datasets from one constant dataset to another (a loss
    concentrated on one step of the chain, as at a data-dependent threshold, lies in the half whose
    end points differ more; group privacy bounds the rest), and hill climbing from the best pairs by
    one-record (one-answer) moves. ``verify.audit`` runs it on exploration draws independent of its
    selection and evaluation draws and audits the ``keep`` best pairs, so the search costs no error
    budget: any rule for choosing pairs keeps the evaluation's bounds valid.
    """

    domain: tuple[float, float, int] | Domain
    adjacency: str | None = None
    integers: bool = False
    sensitivity: float = 1.0
    budget: int = 48
    keep: int = 8

    def __post_init__(self) -> None:
        self._bounds()
        check_real("sensitivity", self.sensitivity, low=0.0, high=math.inf, low_open=True, high_open=True)
        check_count("budget", self.budget, low=1, high=MAX_N)
        check_count("keep", self.keep, low=1, high=MAX_N)
        if not isinstance(self.integers, bool):
            raise TypeError(f"integers must be True or False, got {self.integers!r}")

    def _bounds(self) -> tuple[float, float, int, SearchAdjacency]:
        dom = self.domain
        adj = self.adjacency
        if isinstance(dom, Domain):
            lo, hi = np.ravel(dom.lower), np.ravel(dom.upper)
            try:
                if lo.size != 1 or hi.size != 1:
                    raise TypeError
                low, high, n = float(lo[0]), float(hi[0]), int(dom.n)
            except (TypeError, ValueError):
                raise ValueError(f"domain must have numeric scalar bounds and n, got {dom!r}") from None
            if adj is None:
                adj = dom.adjacency
            low, high, n = check_domain((low, high, n))
        else:
            low, high, n = check_domain(dom)
        adj = "replace" if adj is None else adj
        if adj not in ("replace", "add_remove", "answers"):
            raise ValueError(f"adjacency must be 'replace', 'add_remove' or 'answers', got {adj!r}")
        if self.integers and math.ceil(low) > math.floor(high):
            raise ValueError(f"domain [{low}, {high}] contains no integer")
        if adj == "add_remove" and n < 2:
            raise ValueError(f"add_remove search needs n >= 2 records, got n = {n}")
        return low, high, n, adj  # type: ignore[return-value]

    def _values(self) -> list[float]:
        low, high, _, _ = self._bounds()
        vals = [low, high, (low + high) / 2]
        if self.integers:
            vals = [float(math.ceil(low)), float(math.floor(high)), float(round((low + high) / 2))]
        return list(dict.fromkeys(vals))

    def _fix(self, x: FloatArray) -> FloatArray:
        low, high, _, _ = self._bounds()
        x = np.clip(x, low, high)
        if self.integers:
            x = np.clip(np.round(x), math.ceil(low), math.floor(high))
        return np.asarray(x, dtype=np.float64)

    def pairs(self, rng: np.random.Generator) -> list[FloatPair]:
        """The structured candidates (all neighbouring under the adjacency)."""
        low, high, n, adj = self._bounds()
        vals = self._values()
        out: list[FloatPair] = []
        if adj == "answers":
            s = self.sensitivity
            for base in dict.fromkeys([low, (low + high) / 2 - s]):
                if base >= low and base + 2 * s <= high:
                    out += statdp_patterns(n, s, base)
            if not out:
                raise ValueError(f"domain [{low}, {high}] is narrower than 2 * sensitivity = {2 * s}")
            return _unique([(self._fix(a), self._fix(b)) for a, b in out])
        for c in vals:
            x = np.full(n, c)
            if adj == "replace":
                for v in vals:
                    if v != c:
                        x2 = x.copy()
                        x2[0] = v
                        out.append((x, x2))
            else:
                out.append((x, x[1:]))
        a, b = vals[0], vals[1]
        for j in sorted({n // 4, n // 2, (3 * n) // 4}):
            out.append(self._link(a, b, 2 * j if adj == "add_remove" else j))
        return _unique([(self._fix(p), self._fix(q)) for p, q in out])

    def _chain(self, a: float, b: float, i: int) -> FloatArray:
        """Dataset i of a chain of neighbours from all-a to all-b: replace one a by b per step
        ("replace"), or remove one a then add one b ("add_remove", so twice as many steps)."""
        _, _, n, adj = self._bounds()
        if adj == "replace":
            return np.asarray([b] * i + [a] * (n - i), dtype=np.float64)
        j, odd = divmod(i, 2)
        return np.asarray([b] * j + [a] * (n - j - odd), dtype=np.float64)

    def _chain_length(self) -> int:
        _, _, n, adj = self._bounds()
        return n if adj == "replace" else 2 * n

    def _link(self, a: float, b: float, i: int) -> FloatPair:
        """Step i of the chain, the larger dataset first (add_remove: x2 is x without one record;
        the audit tests both directions)."""
        x, x2 = self._chain(a, b, i), self._chain(a, b, i + 1)
        return (x2, x) if x2.size > x.size else (x, x2)

    def search(self, estimate: Estimator, rng: np.random.Generator) -> list[FloatPair]:
        """Structured candidates, chain bisection, then hill climbing, within ``budget`` estimates;
        returns the ``keep`` pairs with the largest estimated loss."""
        _, _, _, adj = self._bounds()
        pool: list[tuple[float, int, FloatPair]] = []
        spent = 0

        def run(cands: list[FloatPair]) -> list[float]:
            nonlocal spent
            cands = cands[: max(0, self.budget - spent)]
            if not cands:
                return []
            vals = [float(v) for v in estimate(cands)]
            spent += len(cands)
            return vals

        def add(cands: list[FloatPair], vals: list[float]) -> None:
            for p, v in zip(cands, vals, strict=False):
                pool.append((v, len(pool), p))

        starts = self.pairs(rng)
        add(starts, run(starts))
        if adj != "answers":
            vals = self._values()
            chains = [(vals[0], vals[1])]
            if len(vals) > 2:
                chains += [(vals[0], vals[2]), (vals[2], vals[1])]
            for a, b in chains:
                if spent >= self.budget:
                    break
                add(*self._bisect(a, b, run))
        while spent < self.budget:
            parents = [p for _, _, p in sorted(pool, key=lambda t: (-t[0], t[1]))[:4]]
            children = _unique([self._move(p, rng) for p in parents for _ in range(2)])
            if not children:
                break
            add(children, run(children))
        best = sorted(pool, key=lambda t: (-t[0], t[1]))
        return _unique([p for _, _, p in best])[: self.keep]

    def _bisect(self, a: float, b: float,
                run: Callable[[list[FloatPair]], list[float]]) -> tuple[list[FloatPair], list[float]]:
        """Narrow the segment of the all-a to all-b chain whose end points differ most, by halves,
        down to one step: a neighbouring pair (returned with its estimate)."""
        lo, hi = 0, self._chain_length()
        while hi - lo > 1:
            mid = (lo + hi) // 2
            halves = [(self._chain(a, b, lo), self._chain(a, b, mid)),
                      (self._chain(a, b, mid), self._chain(a, b, hi))]
            v = run([(self._fix(p), self._fix(q)) for p, q in halves])
            if len(v) < 2:
                return [], []
            lo, hi = (lo, mid) if v[0] >= v[1] else (mid, hi)
        link = self._link(a, b, lo)
        pair = (self._fix(link[0]), self._fix(link[1]))
        return [pair], run([pair])

    def _move(self, pair: FloatPair, rng: np.random.Generator) -> FloatPair:
        """A random neighbouring pair one record (answer) away from ``pair``."""
        low, high, _, adj = self._bounds()
        x, x2 = pair[0].copy(), pair[1].copy()
        pick = [*self._values(), float(rng.uniform(low, high))]
        v = pick[int(rng.integers(len(pick)))]
        if adj == "answers":
            k = int(rng.integers(x.size))
            s = self.sensitivity
            if rng.random() < 0.5:  # move answer k of both
                shift = v - x[k]
                x[k] += shift
                x2[k] += shift
            else:  # change how answer k differs
                x2[k] = x[k] + s * float(rng.choice([-1.0, 0.0, 1.0]))
            x, x2 = self._fix(x), self._fix(x2)
            if np.max(np.abs(x - x2)) > s or np.array_equal(x, x2):
                return pair
            return x, x2
        diff = _differing(x, x2, adj)
        u = int(rng.integers(3))
        if adj == "replace":
            if u == 0 or x.size == 1:  # the replaced record's new value
                x2[diff] = v
            elif u == 1:  # the replaced record's old value
                x[diff] = v
            else:  # another record, in both
                k = int(rng.integers(x.size - 1))
                k += k >= diff
                x[k] = x2[k] = v
        else:  # x2 is x without record ``diff``
            if u == 0 or x.size == 1:
                x[diff] = v
            else:
                k = int(rng.integers(x.size))
                x[k] = v
            x2 = np.delete(x, diff)
        x, x2 = self._fix(x), self._fix(x2)
        if adj == "replace" and (np.sum(x != x2) != 1):
            return pair
        return x, x2


def _differing(x: FloatArray, x2: FloatArray, adj: str) -> int:
    if adj == "replace":
        idx = np.flatnonzero(x != x2)
        return int(idx[0]) if idx.size else 0
    for i in range(x2.size):
        if x[i] != x2[i]:
            return i
    return x.size - 1


def _unique(pairs: Sequence[tuple[Any, Any]]) -> list[FloatPair]:
    seen: set[tuple[bytes, bytes, int, int]] = set()
    out: list[FloatPair] = []
    for a, b in pairs:
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
        k = (a.tobytes(), b.tobytes(), a.size, b.size)
        if k not in seen:
            seen.add(k)
            out.append((a, b))
    return out
