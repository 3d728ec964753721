"""Cells of structure x first-number bins (the score that sees Roth's sparse vector releasing noisy
answers): exact keys per chunk, and no new false alarm on the correct sparse vector.

The refutation of the buggy sparse vector needs about 10^6 draws per input (refuted on seeds 0, 1, 2
at 10^6, eps >= 1.27, 1.21, 1.10; not at 4 x 10^5), too slow for a unit test: it is the ``svt``
section of ``python -m benchmarks.audit``.
"""

from __future__ import annotations

import numpy as np

import verify
from accountant import PureDP
from verify.audit.features import Layout
from verify.audit.scores import cell_keys, fit_scores
from verify.examples import SparseVector


def test_cell_keys_against_a_direct_count() -> None:
    """Keys are (category, value bin) pairs, no number a bin of its own; counts per key of two chunks
    add up to the counts of the whole (what a streaming evaluation sums)."""
    rng = np.random.default_rng(0)
    cats = rng.integers(0, 5, 1000)
    v = np.where(rng.random(1000) < 0.2, np.nan, rng.normal(size=1000))
    edges = np.array([-1.0, 0.0, 0.5])
    keys = cell_keys(cats, v, edges)
    for c, x, k in zip(cats[:200], v[:200], keys[:200], strict=True):
        b = 0 if np.isnan(x) else 1 + sum(x >= e for e in edges)
        assert k == c * (edges.size + 2) + b
    whole = np.bincount(keys, minlength=25)
    parts = np.bincount(cell_keys(cats[:400], v[:400], edges), minlength=25) + \
        np.bincount(cell_keys(cats[400:], v[400:], edges), minlength=25)
    assert np.array_equal(whole, parts)


def test_correct_sparse_vector_not_refuted_with_the_cells_score() -> None:
    """The correct sparse vector (Alg. 1), every output featurised with NaN-for-unanswered patterns as
    structure: at 20,000 draws the cells score is fitted and no test refutes the true claim."""
    r = verify.audit(SparseVector(1.0), [([0.0] * 10, [1.0] * 10)], PureDP(1.0), samples=20_000, seed=0)
    assert not r.violation


def test_noisy_answer_sparse_vector_gets_the_cells_score() -> None:
    """On the buggy sparse vector's NaN-padded outputs (missing patterns are the structure: where it
    stopped) the cells score is fitted, and its fitted ratio favours data for late stops with low
    answers: among negative answers, those from the fourth query on score below those at the
    first three (log ratio of data2 over data: late low answers are likelier under data = 0^10)."""
    rng = np.random.default_rng(1)
    mech = SparseVector(1.0, variant="noisy_answer")
    n = 20_000
    _, bp, bq = Layout.fit([mech.sample([0.0] * 10, rng, n)], [mech.sample([1.0] * 10, rng, n)], n)
    scores = {s.name: s for s in fit_scores(bp, bq, privacy_loss=None, discrete=False, rng=rng)}
    cells = [s for name, s in scores.items() if name.startswith("structure x first-number cells")]
    assert len(cells) == 1
    s_all = cells[0](bp)
    assert s_all.shape == (n,) and np.isfinite(s_all).all()
    stop = np.argmax(~np.isnan(np.asarray(bp.values)), axis=1)
    low = np.nan_to_num(np.asarray(bp.values)[np.arange(n), stop], nan=np.inf) < 0.0
    assert np.count_nonzero(low & (stop >= 3)) >= 20
    assert s_all[low & (stop >= 3)].mean() < s_all[low & (stop < 3)].mean()
