"""Streaming audits: the evaluation half is counted chunk by chunk where it is drawn, so the driver
holds counts only, and the report depends on the seed alone (not on workers, executor or how the
chunks are grouped into tasks)."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant import GDP, ZCDP, PureDP
from verify import audit
from verify.audit import streaming
from verify.audit.regions import Candidate
from verify.audit.sampling import CHUNK, MAX_SELECTION_DRAWS, split_draws


def laplace(x: float, rng: np.random.Generator, size: int) -> np.ndarray:
    return x + rng.laplace(0.0, 1.0, size)


def gaussian(x: float, rng: np.random.Generator, size: int) -> np.ndarray:
    return x + rng.normal(0.0, 1.0, size)


def answer_or_none(x: float, rng: np.random.Generator, size: int) -> list[Any]:
    """Featurised outputs: None, a number, a dict, or one of 10^4 strings (rare ones are structures
    first seen in some chunk of the evaluation draws)."""
    y = x + rng.laplace(0.0, 1.0, size)
    u = rng.integers(0, 100, size)
    k = rng.integers(0, 10_000, size)
    return [None if c == 0 else {"v": float(v)} if c == 1 else f"code {m}" if c == 2 else float(v)
            for c, v, m in zip(u, y, k, strict=True)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=60), st.integers(0, 60),
       st.floats(-5, 5), st.lists(st.floats(-5, 5), min_size=0, max_size=5))
def test_region_counts_add_over_chunks(values: list[float], cut: int, t: float, edges: list[float]) -> None:
    """Counts of all draws are the sum of the counts of any split of them (what streaming relies on),
    and they are the counts the bounds read: draws above, below the threshold; draws per bin."""
    s = np.asarray(values)
    e = tuple(sorted(set(edges)))
    binned = Candidate(0.0, 0, 0, 0, 0.0, edges=e, larger=(True,) * (len(e) + 1))
    for c in (Candidate(0.0, 0, 0, 0, t), binned):
        whole = c.count(s)
        assert np.array_equal(whole, c.count(s[:cut]) + c.count(s[cut:]))
        assert int(whole.sum()) == (s.size if c.edges else int(np.sum(s != c.threshold)))
    if e:
        assert np.array_equal(Candidate(0.0, 0, 0, 0, 0.0, edges=e).count(s),
                              np.bincount(np.searchsorted(np.asarray(e), s, "right"), minlength=len(e) + 1))


def test_selection_is_capped_and_the_rest_evaluates() -> None:
    assert split_draws(1000, 0.3) == (300, 700)
    assert split_draws(10**9, 0.3) == (MAX_SELECTION_DRAWS, 10**9 - MAX_SELECTION_DRAWS)


def _same(a: Any, b: Any) -> None:
    assert a.points == b.points
    assert (a.epsilon_lower, a.mu_lower, a.rho_lower, a.p_value, a.violation) == \
        (b.epsilon_lower, b.mu_lower, b.rho_lower, b.p_value, b.violation)


@pytest.mark.parametrize("mech, claim, samples", [
    (laplace, PureDP(1.0), 3 * CHUNK + 1000),
    (gaussian, ZCDP(0.5), CHUNK + 10_000),  # a Renyi test (and its bins) as well
])
def test_report_depends_on_the_seed_only(monkeypatch: pytest.MonkeyPatch, mech: Any, claim: Any,
                                         samples: int) -> None:
    """Serially in tasks of 16 chunks, and over two processes (the scores pickled by value) in
    tasks of one chunk: the same report."""
    kw: dict[str, Any] = dict(samples=samples, seed=3, vectorised=True, selection_fraction=0.1,
              floating_point=mech is laplace)
    serial = audit(mech, [(0.0, 1.0)], claim, **kw)
    assert serial.points and all(p.n == samples - split_draws(samples, 0.1)[0] for p in serial.points)
    monkeypatch.setattr(streaming, "TASK_CHUNKS", 1)
    _same(serial, audit(mech, [(0.0, 1.0)], claim, workers=2, **kw))
    if mech is laplace:
        other = audit(mech, [(0.0, 1.0)], claim, **{**kw, "seed": 4})
        assert other.points != serial.points  # the comparison can tell seeds apart


def test_featurised_outputs_do_not_depend_on_task_size(monkeypatch: pytest.MonkeyPatch) -> None:
    kw: dict[str, Any] = dict(samples=CHUNK + 20_000, seed=5, vectorised=True, selection_fraction=0.1,
                              floating_point=False)
    serial = audit(answer_or_none, [(0.0, 1.0)], GDP(1.0), **kw)
    monkeypatch.setattr(streaming, "TASK_CHUNKS", 1)
    _same(serial, audit(answer_or_none, [(0.0, 1.0)], GDP(1.0), **kw))


def test_dask_executor_equals_in_process() -> None:
    distributed = pytest.importorskip("distributed")
    kw: dict[str, Any] = dict(samples=2 * CHUNK + 5000, seed=7, vectorised=True, selection_fraction=0.1)
    local = audit(laplace, [(0.0, 1.0), (0.0, -1.0)], PureDP(1.0), **kw)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        remote = audit(laplace, [(0.0, 1.0), (0.0, -1.0)], PureDP(1.0), executor=client.get_executor(), **kw)
    _same(local, remote)


def test_driver_memory_stays_far_below_the_draws() -> None:
    """At 3e6 draws per input the evaluation draws alone would take 2 x 2.99e6 doubles (48 MB) on the
    driver; counted where they are drawn, the driver's peak Python/numpy allocation (tracemalloc:
    numpy reports its buffers to it) is a small fraction of that."""
    samples = 3_000_000
    n_eval = split_draws(samples, 0.005)[1]
    held = 2 * n_eval * 8
    tracemalloc.start()
    try:
        r = audit(laplace, [(0.0, 1.0)], PureDP(1.0), samples=samples, seed=0, vectorised=True,
                  selection_fraction=0.005, floating_point=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.samples_total == 2 * samples and all(p.n == n_eval for p in r.points)
    # x + Laplace(1) at distance 1 is exactly 1-DP (as real numbers): not refuted, and the bound
    # from all the evaluation draws is close to the truth
    assert not r.violation and 0.9 < r.epsilon_lower <= 1.0, r.epsilon_lower
    assert peak < held / 6, (peak, held)
