"""Symbolic sensitivities against hand derivations, and against brute force on small instances."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from mechanisms import (
    Adjacency,
    Count,
    CustomQuery,
    Domain,
    Histogram,
    LinearCombination,
    Mean,
    Sum,
    Variance,
    VectorQuery,
)

n = sympy.Symbol("n", positive=True, integer=True)
a, b = sympy.symbols("a b", real=True)
d = sympy.Symbol("d", positive=True, integer=True)


def same(x: object, y: object) -> bool:
    return bool(sympy.simplify(sympy.sympify(x) - sympy.sympify(y)) == 0)


# ----------------------------------------------------------------------------- hand derivations

HAND = {
    # (query class, adjacency) -> per-coordinate c for scalar records in [a, b]
    (Sum, "replace"): b - a,
    (Sum, "add_remove"): sympy.Max(sympy.Abs(a), sympy.Abs(b)),
    (Mean, "replace"): (b - a) / n,
    (Mean, "add_remove"): (b - a) / (n + 1),
    (Variance, "replace"): (b - a) ** 2 * (n - 1) / n**2,
    (Variance, "add_remove"): (b - a) ** 2 * n / (n + 1) ** 2,
}


@pytest.mark.parametrize(("cls", "adj"), list(HAND))
def test_scalar_primitives_match_hand_derivation(cls: type[Sum | Mean | Variance], adj: Adjacency) -> None:
    q = cls(Domain(a, b, n=n, adjacency=adj))
    c = HAND[(cls, adj)]
    assert same(q.l1, c) and same(q.l2, c) and same(q.linf, c)


@pytest.mark.parametrize(("cls", "adj"), list(HAND))
def test_vector_primitives_symbolic_dimension(cls: type[Sum | Mean | Variance], adj: Adjacency) -> None:
    q = cls(Domain(a, b, n=n, d=d, adjacency=adj))
    c = HAND[(cls, adj)]
    assert same(q.l1, d * c)
    assert same(q.l2, sympy.sqrt(d) * c)
    assert same(q.linf, c)


def test_bind_symbolic_dimension() -> None:
    q = Mean(Domain(a, b, n=n, d=d)).bind(d=3, a=0, b=2, n=4)
    assert q.l1 == sympy.Rational(3, 2) and same(q.l2, sympy.sqrt(3) / 2) and q.linf == sympy.Rational(1, 2)
    assert np.allclose(q(np.ones((4, 3))), 1.0)


def test_per_coordinate_bounds() -> None:
    q = Sum(Domain([0, -1, 0], [1, 1, 4]))
    assert q.l1 == 7 and same(q.l2, sympy.sqrt(1 + 4 + 16)) and q.linf == 4
    qa = Sum(Domain([0, -3], [1, 1], adjacency="add_remove"))
    assert qa.l1 == 4 and same(qa.l2, sympy.sqrt(10)) and qa.linf == 3


def test_count_both_adjacencies() -> None:
    dom_r = Domain(0, 1, n=n)
    assert Count(dom_r).l1 == 0  # n is public under replace-one
    assert Count(dom_r, predicate=lambda x: x > 0.5).l1 == 1
    dom_a = Domain(0, 1, adjacency="add_remove")
    assert Count(dom_a).l1 == 1 and Count(dom_a, lambda x: x > 0.5).l2 == 1
    assert Count(dom_a).monotone and not Count(dom_r).monotone


@pytest.mark.parametrize(("adj", "s", "l1", "l2"), [
    ("add_remove", 1, 1, 1), ("replace", 1, 2, sympy.sqrt(2)),
    ("add_remove", 3, 3, sympy.sqrt(3)), ("replace", 3, 6, sympy.sqrt(6))])
def test_histogram_sensitivity(adj: str, s: int, l1: int, l2: object) -> None:
    dom = Domain(0, 10, adjacency=adj)  # type: ignore[arg-type]
    if s == 1:
        q = Histogram(dom, edges=tuple(range(11)))
    else:
        q = Histogram(dom, membership=lambda x: np.ones((x.shape[0], 8)) * 0, k=8, max_bins_per_record=s)
    assert q.l1 == l1 and same(q.l2, l2) and q.linf == 1


def test_combinations_are_triangle_bounds() -> None:
    dom = Domain(a, b, n=n)
    v = VectorQuery((Sum(dom), Mean(dom)))
    assert same(v.l1, (b - a) + (b - a) / n)
    assert same(v.l2, sympy.sqrt((b - a) ** 2 + (b - a) ** 2 / n**2))
    assert not v.sensitivities.exact
    lc = LinearCombination((Sum(dom), Mean(dom)), (2, -3))
    assert same(lc.l1, 2 * (b - a) + 3 * (b - a) / n)
    assert v.output_dim == 2


def test_custom_query_norm_completion() -> None:
    dom = Domain(0, 1, n=10)
    q = CustomQuery(dom, lambda x: np.array([x.max(), x.min()]), 2, l2=sympy.Rational(1, 2))
    assert q.l2 == sympy.Rational(1, 2)
    assert same(q.l1, sympy.sqrt(2) / 2)  # L1 <= sqrt(k) L2
    assert q.linf == sympy.Rational(1, 2)
    assert not q.sensitivities.exact
    with pytest.raises(ValueError, match="declare at least one"):
        CustomQuery(dom, lambda x: x, 1)
    t = sympy.Symbol("t", positive=True)
    qt = CustomQuery(Domain(0, 1), lambda x: np.array([x.sum()]), linf=t).bind(t=3)
    assert qt.linf == 3


def test_bind_explain_latex() -> None:
    q = Mean(Domain(a, b, n=n))
    text = q.explain()
    assert "Delta_1" in text and "replace" in text
    assert q._repr_latex_().startswith("$") and r"\Delta_1" in q._repr_latex_()
    qb = q.bind(n=100, a=0, b=2)
    assert qb.l1 == sympy.Rational(1, 50)
    with pytest.raises(ValueError, match="unknown symbol"):
        q.bind(m=3)


# ----------------------------------------------------------------------------- brute force

def _neighbours(vals: list[float], size: int, adj: str) -> list[tuple[np.ndarray, np.ndarray]]:
    pairs = []
    for data in itertools.product(vals, repeat=size):
        x = np.array(data)
        if adj == "replace":
            for i, v in itertools.product(range(size), vals):
                y = x.copy()
                y[i] = v
                pairs.append((x, y))
        else:
            for v in vals:
                pairs.append((x, np.append(x, v)))
    return pairs


@pytest.mark.parametrize("adj", ["replace", "add_remove"])
@pytest.mark.parametrize("cls", [Sum, Mean, Variance, Count])
def test_brute_force_attains_exact_sensitivity(cls: type, adj: str) -> None:
    """On a grid of records in [-1, 2] (which contains the box corners) the largest change over
    neighbouring pairs equals the derived sensitivity: it is neither optimistic nor loose."""
    size = 4
    vals = [-1.0, 0.0, 0.5, 2.0]
    dom = Domain(-1, 2, n=size, adjacency=adj)  # type: ignore[arg-type]
    q = cls(dom, lambda x: x > 0.2) if cls is Count else cls(dom)
    worst = max(abs(float(q(x)[0]) - float(q(y)[0])) for x, y in _neighbours(vals, size, adj))
    assert worst == pytest.approx(float(q.l1), rel=1e-12, abs=1e-12)


def test_brute_force_histogram_replace() -> None:
    dom = Domain(0, 3, n=3)
    q = Histogram(dom, edges=(0, 1, 2, 3))
    worst = max(np.abs(q(x) - q(y)).sum() for x, y in _neighbours([0.5, 1.5, 2.5], 3, "replace"))
    assert worst == float(q.l1) == 2.0


# ----------------------------------------------------------------------------- validation

def test_domain_validation_messages() -> None:
    with pytest.raises(ValueError, match="coordinate 0 has lower = 1, upper = 0"):
        Domain(1, 0)
    with pytest.raises(ValueError, match="adjacency"):
        Domain(0, 1, adjacency="swap")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"n must be an integer in \[1, 10\^15\]"):
        Domain(0, 1, n=0)
    with pytest.raises(ValueError, match="needs the dataset size"):
        Mean(Domain(0, 1)).l1  # noqa: B018


def test_out_of_domain_raises_or_clips() -> None:
    q = Sum(Domain(0, 1, n=3))
    with pytest.raises(ValueError, match=r"record 1: 1\.5"):
        q([0.2, 1.5, 0.3])
    qc = Sum(Domain(0, 1, n=3, clip=True))
    assert qc([0.2, 1.5, -0.3])[0] == pytest.approx(1.2)


def test_wrong_shapes_and_sizes_raise() -> None:
    q = Mean(Domain(0, 1, n=3, d=2))
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        q(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="fixes n = 3"):
        q(np.zeros((4, 2)))
    qa = Mean(Domain(0, 1, n=3, adjacency="add_remove"))
    with pytest.raises(ValueError, match="at least n = 3"):
        qa([0.1, 0.2])
    assert qa([0.1, 0.2, 0.3, 0.4])[0] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="bind"):
        Sum(Domain(a, b))([0.1])


# ----------------------------------------------------------------------------- property: never optimistic

@st.composite
def neighbouring_case(draw: st.DrawFn) -> tuple[Domain, np.ndarray, np.ndarray]:
    adj: Adjacency = draw(st.sampled_from(["replace", "add_remove"]))
    d = draw(st.integers(1, 3))
    size = draw(st.integers(2, 6))
    lo = np.array(draw(st.lists(st.integers(-5, 4), min_size=d, max_size=d)), dtype=float)
    width = np.array(draw(st.lists(st.integers(1, 6), min_size=d, max_size=d)), dtype=float)
    hi = lo + width
    unit = st.floats(0.0, 1.0)
    x = lo + width * np.array(draw(st.lists(st.lists(unit, min_size=d, max_size=d), min_size=size,
                                            max_size=size)))
    new = lo + width * np.array(draw(st.lists(unit, min_size=d, max_size=d)))
    if adj == "replace":
        y = x.copy()
        y[draw(st.integers(0, size - 1))] = new
    else:
        y = np.vstack([x, new])
    dom = Domain(lo.tolist(), hi.tolist(), n=size, adjacency=adj) if d > 1 else \
        Domain(float(lo[0]), float(hi[0]), n=size, adjacency=adj)
    if d == 1:
        x, y = x[:, 0], y[:, 0]
    return dom, x, y


@settings(max_examples=150, deadline=None)
@given(case=neighbouring_case())
def test_derived_sensitivities_are_never_optimistic(case: tuple[Domain, np.ndarray, np.ndarray]) -> None:
    dom, x, y = case
    queries = [Sum(dom), Mean(dom), Variance(dom), Count(dom, lambda r: np.atleast_2d(r.T).T[:, 0] > 0),
               VectorQuery((Sum(dom), Mean(dom))), LinearCombination((Mean(dom), Variance(dom)), (2, -1))]
    for q in queries:
        diff = q(x) - q(y)
        for p, norm in (("l1", 1), ("l2", 2), ("linf", np.inf)):
            bound = float(q.sensitivity(p))  # type: ignore[arg-type]
            assert np.linalg.norm(diff, ord=norm) <= bound * (1 + 1e-9) + 1e-12, (q.describe(), p)
