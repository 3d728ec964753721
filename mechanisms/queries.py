"""Query primitives whose L1, L2 and L-infinity sensitivities are derived symbolically (sympy).

Every query holds its ``Domain`` (records, size, adjacency) and derives

    Delta_p = sup over neighbouring datasets D ~ D' of || q(D) - q(D') ||_p,     p in {1, 2, inf}

from it. For the coordinate-separable primitives (sum, mean, variance) one record moves coordinate
j by at most c_j and the worst cases of all coordinates are attained together (a corner of the box),
so Delta_1 = sum c_j, Delta_2 = sqrt(sum c_j^2), Delta_inf = max c_j exactly. Combinations (vector of
queries, linear combinations) use the triangle inequality and are upper bounds; ``exact`` says which.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

import numpy as np
import sympy
from numpy.typing import ArrayLike

from accountant.core.types import FloatArray
from accountant.core.validation import as_float_array

from .domain import Domain, as_expr, is_numeric

__all__ = [
    "Count",
    "CustomQuery",
    "Histogram",
    "LinearCombination",
    "Mean",
    "Norm",
    "Query",
    "Sensitivity",
    "Sum",
    "Variance",
    "VectorQuery",
]

Norm = Literal["l1", "l2", "linf"]


@dataclass(frozen=True)
class Sensitivity:
    """The three sensitivities of a query, the steps of their derivation, and whether they are exact
    (attained by some neighbouring pair) or upper bounds."""

    l1: Any
    l2: Any
    linf: Any
    steps: tuple[str, ...] = ()
    exact: bool = True

    def norm(self, p: Norm) -> Any:
        if p not in ("l1", "l2", "linf"):
            raise ValueError(f"norm must be one of 'l1', 'l2', 'linf', got {p!r}")
        return {"l1": self.l1, "l2": self.l2, "linf": self.linf}[p]


def separable(c: Sequence[Any], d: Any) -> tuple[Any, Any, Any]:
    """(Delta_1, Delta_2, Delta_inf) when coordinate j moves by at most c_j, all attainable together.

    ``c`` has one entry per coordinate, or a single entry shared by the ``d`` coordinates.
    """
    if len(c) == 1:
        c0 = c[0]
        if d == 1:
            return c0, c0, c0
        return sympy.simplify(d * c0), sympy.simplify(sympy.sqrt(d) * c0), c0
    return (sympy.simplify(sympy.Add(*c)), sympy.simplify(sympy.sqrt(sympy.Add(*[ci**2 for ci in c]))),
            sympy.Max(*c))


class Query(ABC):
    """A deterministic function of a dataset with declared domain and derived sensitivities."""

    domain: Domain

    # ----- to implement -----------------------------------------------------------------------
    @abstractmethod
    def _derive(self) -> Sensitivity:
        """The symbolic sensitivities and the steps of their derivation."""

    @abstractmethod
    def evaluate(self, x: FloatArray) -> FloatArray:
        """q on data already validated by the domain; a 1-d array of ``output_dim`` values."""

    @property
    @abstractmethod
    def output_dim(self) -> Any:
        """Number of real outputs (an int or a sympy expression)."""

    @abstractmethod
    def describe(self) -> str:
        """A short noun phrase, e.g. 'mean'."""

    # ----- provided -----------------------------------------------------------------------------
    @property
    def monotone(self) -> bool:
        """True when, between neighbours, every coordinate moves in the same direction (counts and
        histograms under add/remove); report-noisy-max may then use half the noise."""
        return False

    @cached_property
    def sensitivities(self) -> Sensitivity:
        return self._derive()

    @property
    def l1(self) -> Any:
        """L1 sensitivity (sympy)."""
        return self.sensitivities.l1

    @property
    def l2(self) -> Any:
        """L2 sensitivity (sympy)."""
        return self.sensitivities.l2

    @property
    def linf(self) -> Any:
        """L-infinity sensitivity (sympy)."""
        return self.sensitivities.linf

    def sensitivity(self, norm: Norm = "l1") -> Any:
        return self.sensitivities.norm(norm)

    def __call__(self, data: ArrayLike) -> FloatArray:
        """Validate ``data`` against the domain and evaluate the query."""
        out = np.asarray(self.evaluate(self.domain.validate(data)), dtype=np.float64).reshape(-1)
        if is_numeric(self.output_dim) and out.size != int(self.output_dim):
            raise ValueError(f"{self.describe()} returned {out.size} values, declared {self.output_dim}")
        return out

    def _exprs(self) -> dict[str, Any]:
        """Own sympy-valued fields (besides the domain) that ``bind`` must substitute."""
        return {}

    @property
    def free_symbols(self) -> set[Any]:
        out = set(self.domain.free_symbols)
        for e in self._exprs().values():
            out |= getattr(e, "free_symbols", set())
        return out

    def bind(self, **values: Any) -> Query:
        """Substitute numbers for symbols by name, e.g. ``q.bind(n=100, a=0, b=1)``."""
        names = {str(s) for s in self.free_symbols}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"unknown symbol(s) {unknown}; this query's symbols are {sorted(names)}")
        return self._bind(values)

    def _bind(self, values: dict[str, Any]) -> Query:
        dom_names = {str(s) for s in self.domain.free_symbols}
        new_domain = self.domain.bind(**{k: v for k, v in values.items() if k in dom_names})
        changes: dict[str, Any] = {"domain": new_domain}
        for name, e in self._exprs().items():
            subs = {s: as_expr(str(s), values[str(s)]) for s in getattr(e, "free_symbols", set())
                    if str(s) in values}
            changes[name] = e.subs(subs) if subs else e
        return replace(self, **changes)  # type: ignore[type-var]

    def explain(self) -> str:
        """A readable derivation of the three sensitivities."""
        s = self.sensitivities
        kind = "exact" if s.exact else "upper bounds (triangle inequality)"
        lines = [f"{self.describe()} of {self.domain.describe()}"]
        lines += [f"  {step}" for step in s.steps]
        lines.append(f"  Delta_1 = {s.l1},  Delta_2 = {s.l2},  Delta_inf = {s.linf}   [{kind}]")
        return "\n".join(lines)

    def _repr_latex_(self) -> str:
        s = self.sensitivities
        return (rf"$\text{{{self.describe()}}}:\quad \Delta_1 = {sympy.latex(s.l1)},\quad "
                rf"\Delta_2 = {sympy.latex(s.l2)},\quad \Delta_\infty = {sympy.latex(s.linf)}$")


def _adj_phrase(domain: Domain) -> str:
    return "replacing one record" if domain.adjacency == "replace" else "adding or removing one record"


def _need_n(domain: Domain, what: str) -> Any:
    if domain.n is None:
        raise ValueError(f"a {what} needs the dataset size: declare Domain(..., n=...) "
                         "(a number or a sympy Symbol)")
    return domain.n


# ============================================================================ primitives


@dataclass(frozen=True)
class Count(Query):
    """Number of records (optionally those satisfying ``predicate``, a vectorised record -> bool).

    add/remove: Delta = 1. replace-one: Delta = 1 with a predicate, 0 without (n is public).
    """

    domain: Domain
    predicate: Callable[[FloatArray], ArrayLike] | None = field(default=None, compare=False)

    @property
    def output_dim(self) -> int:
        return 1

    @property
    def monotone(self) -> bool:
        return self.domain.adjacency == "add_remove"

    def describe(self) -> str:
        return "count" if self.predicate is None else "predicate count"

    def _derive(self) -> Sensitivity:
        if self.domain.adjacency == "add_remove":
            one = sympy.Integer(1)
            return Sensitivity(one, one, one, (f"{_adj_phrase(self.domain)} changes the count by 1",))
        if self.predicate is None:
            zero = sympy.Integer(0)
            return Sensitivity(zero, zero, zero, ("replacing one record keeps the number of records n",))
        one = sympy.Integer(1)
        return Sensitivity(one, one, one, ("replacing one record changes the predicate count by at most 1",))

    def evaluate(self, x: FloatArray) -> FloatArray:
        if self.predicate is None:
            return np.array([float(x.shape[0])])
        hits = np.asarray(self.predicate(x))
        if hits.shape != (x.shape[0],):
            raise ValueError(f"predicate must return one boolean per record, got shape {hits.shape}")
        return np.array([float(np.count_nonzero(hits))])


@dataclass(frozen=True)
class Sum(Query):
    """Coordinate-wise sum of the records.

    replace-one: c_j = upper_j - lower_j; add/remove: c_j = max(|lower_j|, |upper_j|).
    """

    domain: Domain

    @property
    def output_dim(self) -> Any:
        return self.domain.d

    def describe(self) -> str:
        return "sum"

    def _derive(self) -> Sensitivity:
        dom = self.domain
        if dom.adjacency == "replace":
            c = dom.widths
            step = "replacing x by x' moves sum_j by x'_j - x_j, at most upper_j - lower_j"
        else:
            c = dom.magnitudes
            step = "adding or removing x moves sum_j by x_j, at most max(|lower_j|, |upper_j|)"
        l1, l2, linf = separable(c, dom.d)
        return Sensitivity(l1, l2, linf, (step, f"per coordinate: c = {list(c)}"))

    def evaluate(self, x: FloatArray) -> FloatArray:
        return np.atleast_1d(x.sum(axis=0))


@dataclass(frozen=True)
class Mean(Query):
    """Coordinate-wise mean of the records.

    replace-one (n records): c_j = (upper_j - lower_j)/n. add/remove (at least n records): the mean
    of D + {x} differs from that of D (m records) by (x - mean(D))/(m + 1), so c_j =
    (upper_j - lower_j)/(n + 1) with n the public lower bound on the smaller dataset's size.
    """

    domain: Domain

    @property
    def output_dim(self) -> Any:
        return self.domain.d

    def describe(self) -> str:
        return "mean"

    def _derive(self) -> Sensitivity:
        dom = self.domain
        n = _need_n(dom, "mean")
        if dom.adjacency == "replace":
            c = tuple(sympy.simplify(w / n) for w in dom.widths)
            step = "replacing x by x' moves mean_j by (x'_j - x_j)/n, at most (upper_j - lower_j)/n"
        else:
            c = tuple(sympy.simplify(w / (n + 1)) for w in dom.widths)
            step = ("adding x to m >= n records moves mean_j by (x_j - mean_j)/(m + 1), "
                    "at most (upper_j - lower_j)/(n + 1)")
        l1, l2, linf = separable(c, dom.d)
        return Sensitivity(l1, l2, linf, (step, f"per coordinate: c = {list(c)}"))

    def evaluate(self, x: FloatArray) -> FloatArray:
        return np.atleast_1d(x.mean(axis=0))


@dataclass(frozen=True)
class Variance(Query):
    """Coordinate-wise plug-in variance (1/m) sum (x_i - mean)^2.

    With w = upper - lower, replace-one: c = w^2 (n - 1)/n^2, attained by moving one record from one
    end to the other with the rest at that end. add/remove: V(D + x) - V(D) =
    (m (x - mean)^2/(m + 1) - V(D))/(m + 1), at most w^2 m/(m + 1)^2, decreasing in m >= 1, so
    c = w^2 n/(n + 1)^2.
    """

    domain: Domain

    @property
    def output_dim(self) -> Any:
        return self.domain.d

    def describe(self) -> str:
        return "variance"

    def _derive(self) -> Sensitivity:
        dom = self.domain
        n = _need_n(dom, "variance")
        if dom.adjacency == "replace":
            c = tuple(sympy.factor(w**2 * (n - 1) / n**2) for w in dom.widths)
            step = ("replacing x by x' moves V by (x'-x)((x+x')(n-1)/n - 2R/n)/n (R: sum of the others),"
                    " at most w^2 (n-1)/n^2")
        else:
            c = tuple(sympy.factor(w**2 * n / (n + 1) ** 2) for w in dom.widths)
            step = ("adding x to m records moves V by (m (x - mean)^2/(m+1) - V)/(m+1), "
                    "at most w^2 m/(m+1)^2 <= w^2 n/(n+1)^2")
        l1, l2, linf = separable(c, dom.d)
        return Sensitivity(l1, l2, linf, (step, f"per coordinate: c = {list(c)}"))

    def evaluate(self, x: FloatArray) -> FloatArray:
        return np.atleast_1d(x.var(axis=0))


@dataclass(frozen=True)
class Histogram(Query):
    """Counts of records per bin.

    Scalar records with ``edges`` (k + 1 increasing values, numpy.histogram's half-open bins, so each
    record lies in at most one bin), or ``membership``: a vectorised map from records to an (n, k)
    0/1 matrix whose rows have at most ``max_bins_per_record`` = s ones (checked on the data).

    add/remove: the count vector moves by a 0/1 vector with at most s ones: Delta_1 = s,
    Delta_2 = sqrt(s), Delta_inf = 1. replace-one: a record leaves at most s bins and enters at most s
    others: Delta_1 = 2s, Delta_2 = sqrt(2s), Delta_inf = 1 (attained when k >= 2s).
    """

    domain: Domain
    edges: tuple[float, ...] | None = None
    membership: Callable[[FloatArray], ArrayLike] | None = field(default=None, compare=False)
    k: int | None = None
    max_bins_per_record: int = 1

    def __post_init__(self) -> None:
        if (self.edges is None) == (self.membership is None):
            raise ValueError("give exactly one of edges (disjoint bins) or membership (a callable)")
        if self.edges is not None:
            e = as_float_array("edges", self.edges)
            if e.ndim != 1 or e.size < 2 or not (np.diff(e) > 0).all():
                raise ValueError(f"edges must be at least 2 strictly increasing numbers, got {self.edges!r}")
            if self.domain.d != 1:
                raise ValueError("edges define bins of scalar records; use membership for vector records")
            if self.max_bins_per_record != 1:
                raise ValueError("bins given by edges are disjoint: max_bins_per_record must be 1")
            object.__setattr__(self, "edges", tuple(float(v) for v in e))
            object.__setattr__(self, "k", e.size - 1)
        elif not (isinstance(self.k, int) and self.k >= 1):
            raise ValueError(f"k (the number of bins) must be a positive int with membership, got {self.k!r}")
        s = self.max_bins_per_record
        if isinstance(s, bool) or not isinstance(s, int) or s < 1:
            raise ValueError(f"max_bins_per_record must be an integer >= 1, got {s!r}")

    @property
    def output_dim(self) -> int:
        assert self.k is not None
        return self.k

    @property
    def monotone(self) -> bool:
        return self.domain.adjacency == "add_remove"

    def describe(self) -> str:
        return f"histogram over {self.k} bins"

    def _derive(self) -> Sensitivity:
        s = sympy.Integer(self.max_bins_per_record)
        disj = "disjoint bins: each record lies in at most one bin" if s == 1 else \
            f"each record lies in at most s = {s} bins"
        if self.domain.adjacency == "add_remove":
            return Sensitivity(s, sympy.sqrt(s), sympy.Integer(1),
                               (disj, "adding or removing one record changes at most s counts by 1"))
        return Sensitivity(2 * s, sympy.sqrt(2 * s), sympy.Integer(1),
                           (disj, "replacing one record lowers at most s counts by 1 and raises at "
                                  "most s others by 1 (attained when k >= 2s)"),
                           exact=self.k is not None and self.k >= 2 * self.max_bins_per_record)

    def evaluate(self, x: FloatArray) -> FloatArray:
        if self.edges is not None:
            counts, _ = np.histogram(x, bins=np.asarray(self.edges))
            return counts.astype(np.float64)
        assert self.membership is not None
        m = np.asarray(self.membership(x), dtype=np.float64)
        if m.shape != (x.shape[0], self.k):
            raise ValueError(f"membership must return an (n, k) = ({x.shape[0]}, {self.k}) matrix, "
                             f"got shape {m.shape}")
        if not np.isin(m, (0.0, 1.0)).all():
            raise ValueError("membership must return 0/1 entries")
        over = np.flatnonzero(m.sum(axis=1) > self.max_bins_per_record)
        if over.size:
            raise ValueError(f"records {over[:5].tolist()} lie in more than max_bins_per_record = "
                             f"{self.max_bins_per_record} bins")
        return np.asarray(m.sum(axis=0), dtype=np.float64)


# ============================================================================ combinations


def _same_domain(queries: Sequence[Query]) -> Domain:
    if not queries:
        raise ValueError("queries must not be empty")
    for q in queries:
        if not isinstance(q, Query):
            raise TypeError(f"queries must be Query objects, got {type(q).__name__}")
    dom = queries[0].domain
    for q in queries[1:]:
        if q.domain != dom:
            raise ValueError("all queries must be declared on the same domain")
    return dom


@dataclass(frozen=True)
class VectorQuery(Query):
    """The concatenation (q_1(D), ..., q_m(D)).

    Delta_1 <= sum Delta_1(q_i), Delta_2 <= sqrt(sum Delta_2(q_i)^2), Delta_inf <= max Delta_inf(q_i):
    each part is bounded separately, so these are upper bounds.
    """

    queries: tuple[Query, ...]
    domain: Domain = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "queries", tuple(self.queries))
        object.__setattr__(self, "domain", _same_domain(self.queries))

    @property
    def output_dim(self) -> Any:
        return sympy.Add(*[sympy.sympify(q.output_dim) for q in self.queries])

    def describe(self) -> str:
        return "vector (" + ", ".join(q.describe() for q in self.queries) + ")"

    def _derive(self) -> Sensitivity:
        ss = [q.sensitivities for q in self.queries]
        steps = tuple(f"{q.describe()}: Delta = ({s.l1}, {s.l2}, {s.linf})" for q, s in zip(self.queries, ss,
                                                                                          strict=True))
        return Sensitivity(sympy.simplify(sympy.Add(*[s.l1 for s in ss])),
                           sympy.simplify(sympy.sqrt(sympy.Add(*[s.l2**2 for s in ss]))),
                           sympy.Max(*[s.linf for s in ss]),
                           (*steps, "combined part by part (triangle inequality)"), exact=False)

    def evaluate(self, x: FloatArray) -> FloatArray:
        return np.concatenate([np.atleast_1d(q.evaluate(x)) for q in self.queries])

    def _bind(self, values: dict[str, Any]) -> Query:
        parts = tuple(q._bind({k: v for k, v in values.items() if k in {str(s) for s in q.free_symbols}})
                      for q in self.queries)
        return VectorQuery(parts)

    @property
    def free_symbols(self) -> set[Any]:
        out: set[Any] = set()
        for q in self.queries:
            out |= q.free_symbols
        return out


@dataclass(frozen=True)
class LinearCombination(Query):
    """sum_i c_i q_i(D) for queries of equal output dimension.

    Delta_p <= sum_i |c_i| Delta_p(q_i) (triangle inequality; an upper bound).
    """

    queries: tuple[Query, ...]
    coefficients: tuple[Any, ...]
    domain: Domain = field(init=False)

    def __post_init__(self) -> None:
        qs = tuple(self.queries)
        if not isinstance(self.coefficients, (tuple, list, np.ndarray)):
            raise TypeError(f"coefficients must be a sequence (one per query), got "
                            f"{type(self.coefficients).__name__} {self.coefficients!r}")
        cs = tuple(as_expr(f"coefficients[{i}]", c) for i, c in enumerate(self.coefficients))
        if len(qs) != len(cs):
            raise ValueError(f"coefficients: need one per query, got {len(cs)} for {len(qs)} queries")
        dims = {sympy.sympify(q.output_dim) for q in qs}
        if len(dims) > 1:
            raise ValueError(f"queries must have equal output dimension, got {sorted(map(str, dims))}")
        object.__setattr__(self, "queries", qs)
        object.__setattr__(self, "coefficients", cs)
        object.__setattr__(self, "domain", _same_domain(qs))

    @property
    def output_dim(self) -> Any:
        return self.queries[0].output_dim

    def describe(self) -> str:
        pairs = zip(self.coefficients, self.queries, strict=True)
        return " + ".join(f"({c})*{q.describe()}" for c, q in pairs)

    def _derive(self) -> Sensitivity:
        ss = [q.sensitivities for q in self.queries]
        cs = [sympy.Abs(c) for c in self.coefficients]

        def comb(norm: Norm) -> Any:
            return sympy.simplify(sympy.Add(*[c * s.norm(norm) for c, s in zip(cs, ss, strict=True)]))

        return Sensitivity(comb("l1"), comb("l2"), comb("linf"),
                           ("|sum c_i (q_i(D) - q_i(D'))| <= sum |c_i| Delta(q_i)",), exact=False)

    def evaluate(self, x: FloatArray) -> FloatArray:
        cs = [float(c) for c in self.coefficients]
        parts = [c * np.atleast_1d(q.evaluate(x)) for c, q in zip(cs, self.queries, strict=True)]
        return np.asarray(np.sum(parts, axis=0), dtype=np.float64)

    def _exprs(self) -> dict[str, Any]:
        return {}

    def _bind(self, values: dict[str, Any]) -> Query:
        parts = tuple(q._bind({k: v for k, v in values.items() if k in {str(s) for s in q.free_symbols}})
                      for q in self.queries)
        cs = tuple(c.subs({s: as_expr(str(s), values[str(s)]) for s in c.free_symbols if str(s) in values})
                   for c in self.coefficients)
        return LinearCombination(parts, cs)

    @property
    def free_symbols(self) -> set[Any]:
        out: set[Any] = set()
        for q in self.queries:
            out |= q.free_symbols
        for c in self.coefficients:
            out |= c.free_symbols
        return out


@dataclass(frozen=True)
class CustomQuery(Query):
    """A user-supplied query ``fn(records) -> values`` with a declared sensitivity (sympy).

    Norms not declared are bounded from the declared ones with Delta_inf <= Delta_2 <= Delta_1,
    Delta_1 <= sqrt(k) Delta_2 <= k Delta_inf (k = output_dim). The declaration is the user's claim;
    ``verify`` can audit it.
    """

    domain: Domain
    fn: Callable[[FloatArray], ArrayLike] = field(compare=False)
    output_dim_: int = 1
    l1_: Any = None
    l2_: Any = None
    linf_: Any = None
    name: str = "custom query"
    monotone_: bool = False

    def __init__(self, domain: Domain, fn: Callable[[FloatArray], ArrayLike], output_dim: int = 1, *,
                 l1: Any = None, l2: Any = None, linf: Any = None, name: str = "custom query",
                 monotone: bool = False) -> None:
        if not callable(fn):
            raise TypeError(f"fn must be callable, got {type(fn).__name__}")
        if isinstance(output_dim, bool) or not isinstance(output_dim, int) or output_dim < 1:
            raise ValueError(f"output_dim must be a positive int, got {output_dim!r}")
        if l1 is None and l2 is None and linf is None:
            raise ValueError("declare at least one of l1, l2, linf (a number or a sympy expression)")
        object.__setattr__(self, "domain", domain)
        object.__setattr__(self, "fn", fn)
        object.__setattr__(self, "output_dim_", output_dim)
        for nm, v in (("l1_", l1), ("l2_", l2), ("linf_", linf)):
            e = None if v is None else as_expr(nm.rstrip("_"), v)
            if e is not None and is_numeric(e) and not bool(e >= 0):
                raise ValueError(f"{nm.rstrip('_')} must be >= 0, got {v!r}")
            object.__setattr__(self, nm, e)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "monotone_", bool(monotone))

    @property
    def output_dim(self) -> int:
        return self.output_dim_

    @property
    def monotone(self) -> bool:
        """As declared by the user (``monotone=True``: all outputs move in the same direction)."""
        return self.monotone_

    def describe(self) -> str:
        return self.name

    def _exprs(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("l1_", "l2_", "linf_") if getattr(self, k) is not None}

    def _bind(self, values: dict[str, Any]) -> Query:
        dom_names = {str(s) for s in self.domain.free_symbols}
        dom = self.domain.bind(**{k: v for k, v in values.items() if k in dom_names})

        def sub(e: Any) -> Any:
            if e is None:
                return None
            return e.subs({s: as_expr(str(s), values[str(s)]) for s in e.free_symbols if str(s) in values})

        return CustomQuery(dom, self.fn, self.output_dim_, l1=sub(self.l1_), l2=sub(self.l2_),
                           linf=sub(self.linf_), name=self.name, monotone=self.monotone_)

    def _derive(self) -> Sensitivity:
        k = sympy.Integer(self.output_dim_)
        given = {"l1": self.l1_, "l2": self.l2_, "linf": self.linf_}
        cand: dict[str, list[Any]] = {"l1": [], "l2": [], "linf": []}
        if given["l1"] is not None:
            cand["l2"].append(given["l1"])
            cand["linf"].append(given["l1"])
        if given["l2"] is not None:
            cand["l1"].append(sympy.sqrt(k) * given["l2"])
            cand["linf"].append(given["l2"])
        if given["linf"] is not None:
            cand["l1"].append(k * given["linf"])
            cand["l2"].append(sympy.sqrt(k) * given["linf"])
        out = {p: given[p] if given[p] is not None else sympy.Min(*cand[p]) for p in given}
        steps = tuple(f"Delta_{p[1:] if p != 'linf' else 'inf'} declared by the user" for p in given
                      if given[p] is not None)
        derived = [p for p in given if given[p] is None]
        if derived:
            steps += (f"{', '.join(derived)} bounded by norm inequalities in dimension {k}",)
        return Sensitivity(out["l1"], out["l2"], out["linf"], steps, exact=not derived)

    def evaluate(self, x: FloatArray) -> FloatArray:
        return np.asarray(self.fn(x), dtype=np.float64).reshape(-1)
