"""DPSGD trains with the batch sampler its guarantee names: the batches it draws have the
sampler's law (exact counts, seeded chi-square tests at level 1e-3), and the guarantee is the
accountant's upper bound for that sampler (a hair above, for the lattice noise)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from accountant import dpsgd_epsilon
from mechanisms.estimators import DPSGD, LogisticRegression

MODEL = LogisticRegression(2)


def test_fixed_batches_are_uniform_subsets_of_b() -> None:
    n, q, steps = 50, 0.1, 4000
    est = DPSGD(MODEL, n, 1.0, q, steps, sampler="fixed")
    counts = np.zeros(n)
    pairs = 0
    for batch in est.batches(n, np.random.default_rng(11)):
        assert batch.size == 5 and np.unique(batch).size == 5
        counts[batch] += 1
        pairs += int(0 in batch and 1 in batch)
    # each slot is in a batch w.p. b/n: uniform counts
    assert stats.chisquare(counts).pvalue > 1e-3
    # drawn without replacement: P(0 and 1 both in) = b(b-1)/(n(n-1)), not (b/n)^2
    p = 5 * 4 / (n * (n - 1))
    assert stats.binomtest(pairs, steps, p).pvalue > 1e-3


def test_shuffled_epochs_are_uniform_permutations() -> None:
    n, q, steps = 12, 0.25, 4 * 3000
    est = DPSGD(MODEL, n, 1.0, q, steps, sampler="shuffle")
    where = np.zeros(4)  # the batch of slot 0 in each epoch
    batches = list(est.batches(n, np.random.default_rng(12)))
    for e in range(0, steps, 4):
        epoch = batches[e:e + 4]
        assert sorted(np.concatenate(epoch).tolist()) == list(range(n))  # each slot once an epoch
        where[[0 in b for b in epoch].index(True)] += 1
    assert stats.chisquare(where).pvalue > 1e-3


def test_empty_slots_hold_no_record() -> None:
    """A dataset with fewer rows than n: the missing slots are left out of their batches."""
    est = DPSGD(MODEL, 20, 1.0, 0.25, 8, sampler="shuffle")
    batches = list(est.batches(19, np.random.default_rng(3)))
    assert sum(b.size for b in batches[:4]) == 19 and all(b.max(initial=0) < 19 for b in batches)


def test_poisson_batches_are_unchanged() -> None:
    """The Poisson batches consume the generator as before: the same indices as the mask."""
    est = DPSGD(MODEL, 100, 1.0, 0.125, 3)
    got = list(est.batches(100, np.random.default_rng(5)))
    rng = np.random.default_rng(5)
    for b in got:
        mask = rng.integers(0, 8, size=100, dtype=np.int64) < 1
        assert np.array_equal(b, np.flatnonzero(mask))


@pytest.mark.parametrize("sampler", ["shuffle", "fixed"])
def test_guarantee_is_the_samplers_upper_bound(sampler: str) -> None:
    steps = 30 if sampler == "shuffle" else 10
    est = DPSGD(MODEL, 100, 1.0, 0.1, steps, sampler=sampler)  # type: ignore[arg-type]
    ours = est.guarantee().epsilon(1e-5)
    acct = dpsgd_epsilon(0.1, 1.0, steps, 1e-5, sampler=sampler, also=())  # type: ignore[arg-type]
    assert acct.epsilon_upper <= ours <= acct.epsilon_upper * 1.01
    assert acct.epsilon_lower <= ours


def test_a_fit_runs_with_each_sampler() -> None:
    rng = np.random.default_rng(7)
    x = rng.uniform(-0.5, 0.5, size=(40, 2))
    y = (rng.random(40) < 0.5).astype(float)
    for sampler in ("poisson", "fixed", "shuffle"):
        fit = DPSGD(MODEL, 40, 2.0, 0.25, 8, sampler=sampler).fit(np.column_stack([x, y]), rng)
        assert np.all(np.isfinite(fit.estimate))


def test_bad_samplers_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match="sampler must be one of poisson, fixed, shuffle"):
        DPSGD(MODEL, 100, 1.0, 0.1, 5, sampler="shuffled")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"sampling_rate \* n must be a whole number"):
        DPSGD(MODEL, 100, 1.0, 0.015, 5, sampler="fixed")
    with pytest.raises(ValueError, match="1/sampling_rate must be a whole number"):
        DPSGD(MODEL, 100, 1.0, 0.03, 5, sampler="shuffle")
    est = DPSGD(MODEL, 10, 1.0, 0.5, 2, sampler="fixed")
    with pytest.raises(ValueError, match="rows must be an integer in"):
        next(est.batches(11, np.random.default_rng(0)))
