"""JointExp (several quantiles in one exponential mechanism): its exact law against enumeration and
against the single-quantile mechanism, the utility's sensitivity, the sampler's law (chi-square), a
black-box audit of the sampler with a broken variant, and accuracy against independent exponential
mechanisms at eps/2 each (exact laws on a small grid; sampled on normal data)."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

import verify
from accountant import PureDP
from mechanisms.estimators import (
    ExponentialQuantile,
    JointExponentialIQR,
    JointExponentialQuantiles,
)
from mechanisms.estimators.joint_quantiles import TARGET_BITS


def _tv(e: np.ndarray, seqs: np.ndarray) -> np.ndarray:
    """Total variation of the rank-error path 0, E_1(r_1), .., E_m(r_m), 0, written out (not the module's)."""
    out = np.zeros(len(seqs), dtype=np.int64)
    for i, r in enumerate(seqs):
        path = [0] + [int(e[j, r[j]]) for j in range(len(r))] + [0]
        out[i] = sum(abs(b - a) for a, b in itertools.pairwise(path))
    return out


def test_one_quantile_is_the_exponential_quantile() -> None:
    """With one quantile the joint utility is -2|L(c) - qn| (out and back): the law is the
    single-quantile exponential mechanism's at the same eps, to the two lattices' rounding (< 1e-5; the
    targets q n are multiples of 1/4, so their rounding does not enter)."""
    rng = np.random.default_rng(0)
    for q in (0.25, 0.5, 0.75):
        x = rng.random(11)
        joint = JointExponentialQuantiles(0.0, 1.0, 11, 1.0, qs=(q,), bins=16)
        _, lp = joint.log_probabilities(x)
        single = ExponentialQuantile(0.0, 1.0, 11, 1.0, q=q, bins=16).log_probabilities(x)
        assert np.max(np.abs(lp - single)) < 1e-5


def test_law_is_the_exponential_mechanism_on_sorted_sequences() -> None:
    """log P(r) = -s TV(r) - log Z over the non-decreasing sequences, recomputed from the counts by hand;
    on neighbouring pairs the log-probability ratio stays <= eps and comes within a factor 2 of it."""
    rng = np.random.default_rng(1)
    mech = JointExponentialQuantiles(0.0, 1.0, 9, 1.0, qs=(0.25, 0.75), bins=8)
    x = rng.random(9)
    seqs, lp = mech.log_probabilities(x)
    assert len(seqs) == math.comb(8 + 1, 2) and (np.diff(seqs, axis=1) >= 0).all()
    below = np.array([np.sum(x <= c) for c in mech.candidates])
    targets = [round(0.25 * 9 * 2**TARGET_BITS), round(0.75 * 9 * 2**TARGET_BITS)]
    e = np.array([below * 2**TARGET_BITS - t for t in targets])
    logits = -float(mech.factor) * _tv(e, seqs)
    assert np.allclose(lp, logits - special.logsumexp(logits), atol=1e-12)
    assert float(mech.factor) <= 1.0 / 2 ** (TARGET_BITS + 2) < float(mech.factor) * (1 + 2.0**-19)
    worst = 0.0
    for _ in range(60):
        x = rng.random(9)
        y = x.copy()
        y[rng.integers(9)] = rng.choice([0.0, 1.0])
        worst = max(worst, float(np.max(np.abs(mech.log_probabilities(x)[1] - mech.log_probabilities(y)[1]))))
    assert 0.5 < worst <= 1.0


@given(st.lists(st.integers(0, 20), min_size=6, max_size=6), st.integers(0, 5), st.integers(0, 20),
       st.sampled_from([(0.5,), (0.25, 0.75), (0.1, 0.5, 0.9)]))
@settings(max_examples=60, deadline=None)
def test_utility_sensitivity_is_two_records(xs: list[int], i: int, v: int, qs: tuple[float, ...]) -> None:
    """Replacing one record moves -TV by at most 2 records (2^(B+1) units) for every output."""
    mech = JointExponentialQuantiles(0.0, 1.0, 6, 1.0, qs=qs, bins=6)
    x = np.array(xs, dtype=float) / 20
    y = x.copy()
    y[i] = v / 20
    seqs, _ = mech.log_probabilities(x)
    gap = np.abs(_tv(mech.errors(x), seqs) - _tv(mech.errors(y), seqs))
    assert gap.max() <= 2 * 2**TARGET_BITS


def test_sampler_draws_the_law() -> None:
    """The rejection sampler's draws follow the enumerated law (chi-square, level 1e-4), for two and three
    quantiles."""
    rng = np.random.default_rng(2)
    for qs, bins in (((0.25, 0.75), 8), ((0.2, 0.5, 0.8), 6)):
        mech = JointExponentialQuantiles(0.0, 1.0, 10, 1.0, qs=qs, bins=bins)
        x = rng.random(10)
        seqs, lp = mech.log_probabilities(x)
        draws = mech.sample_indices(x, rng, 20_000)
        count = Counter(map(tuple, draws.tolist()))
        observed = np.array([count.get(tuple(s), 0) for s in seqs.tolist()])
        assert observed.sum() == 20_000
        expected = 20_000 * np.exp(lp)
        keep = expected > 5
        scaled = expected[keep] * observed[keep].sum() / expected[keep].sum()
        assert stats.chisquare(observed[keep], scaled).pvalue > 1e-4
        assert observed[~keep].sum() <= max(20.0, 3 * expected[~keep].sum())


def _pair() -> tuple[np.ndarray, np.ndarray]:
    x = np.linspace(0.05, 0.95, 9)
    y = x.copy()
    y[0] = 0.99  # every count below 0.99 drops by one
    return x, y


def test_audit_passes_the_mechanism_and_refutes_a_broken_one() -> None:
    """The black-box audit (privacy-loss test included) finds no violation of PureDP(1) on a hard pair;
    the same mechanism built with 4 eps (the utility's sensitivity declared as 1/2) is refuted: its exact
    log ratio on the pair exceeds 1 and the audit finds it from draws."""
    x, y = _pair()
    good = JointExponentialQuantiles(0.0, 1.0, 9, 1.0, qs=(0.25, 0.75), bins=8)
    r = verify.audit(good, [(x, y)], good.guarantee(), samples=20_000, seed=0)
    assert not r.violation
    broken = JointExponentialQuantiles(0.0, 1.0, 9, 4.0, qs=(0.25, 0.75), bins=8)
    assert np.max(np.abs(broken.log_probabilities(x)[1] - broken.log_probabilities(y)[1])) > 1.0
    r = verify.audit(broken, [(x, y)], good.guarantee(), samples=20_000, seed=0)
    assert r.violation


def test_joint_beats_independent_quartiles_exactly_on_a_small_grid() -> None:
    """Exact mean squared errors of the IQR (all outputs enumerated, 60 bins, n = 40 draws of N(0, 1)
    clipped to [-3, 3], eps = 1): JointExp's is below that of two independent exponential mechanisms at
    eps/2 each (the product of their exact laws) and than the grid's own IQR error plus nothing."""
    rng = np.random.default_rng(5)
    x = np.clip(rng.normal(size=40), -3, 3)
    joint = JointExponentialQuantiles(-3.0, 3.0, 40, 1.0, qs=(0.25, 0.75), bins=60)
    seqs, lp = joint.log_probabilities(x)
    c = joint.candidates
    iqr = float(np.quantile(x, 0.75) - np.quantile(x, 0.25))
    mse_joint = float(np.sum(np.exp(lp) * (c[seqs[:, 1]] - c[seqs[:, 0]] - iqr) ** 2))
    p25 = np.exp(ExponentialQuantile(-3.0, 3.0, 40, 0.5, q=0.25, bins=60).log_probabilities(x))
    p75 = np.exp(ExponentialQuantile(-3.0, 3.0, 40, 0.5, q=0.75, bins=60).log_probabilities(x))
    mse_indep = float(np.sum(p25[:, None] * p75[None, :] * (c[None, :] - c[:, None] - iqr) ** 2))
    assert mse_joint < 0.9 * mse_indep


def test_iqr_accuracy_on_normal_data() -> None:
    """IQR of 2000 N(0, 1) draws (eps = 1, 2^14 bins on [-10, 10]): each quartile's rank error is a few
    1/eps, a few 1e-3 in value; within 0.05 of the sample IQR in >= 95% of 60 releases; the output
    is a non-negative grid difference and the guarantee PureDP(1)."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=2000)
    mech = JointExponentialIQR(-10.0, 10.0, 2000, 1.0, bins=2**14)
    out = mech.sample(x, rng, size=60)
    iqr = np.quantile(x, 0.75) - np.quantile(x, 0.25)
    assert np.mean(np.abs(out - iqr) < 0.05) >= 0.95
    assert (out >= 0).all() and mech.guarantee() == PureDP(1.0)
    quart = mech.quartiles.sample(x, rng, size=20)
    assert quart.shape == (20, 2) and (quart[:, 0] <= quart[:, 1]).all()


@pytest.mark.parametrize("qs, kind", [
    ((0.75, 0.25), ValueError), ((0.5, 0.5), ValueError), ((), ValueError),
    (tuple(np.linspace(0.1, 0.9, 5)), ValueError), ((0.0, 0.5), ValueError),
    ((0.5, math.nan), ValueError), (0.5, TypeError), ("0.5", TypeError)])
def test_bad_quantiles_are_refused(qs: object, kind: type) -> None:
    with pytest.raises(kind, match="qs"):
        JointExponentialQuantiles(0.0, 1.0, 10, 1.0, qs=qs)  # type: ignore[arg-type]


def test_outputs_off_the_grid_or_unsorted_are_refused() -> None:
    mech = JointExponentialQuantiles(0.0, 1.0, 9, 1.0, qs=(0.25, 0.75), bins=8)
    x, y = _pair()
    c = mech.candidates
    with pytest.raises(ValueError, match="candidates"):
        mech.privacy_loss([0.3, c[5]], x, y)
    with pytest.raises(ValueError, match="non-decreasing"):
        mech.privacy_loss([c[5], c[2]], x, y)
    assert mech.privacy_loss([c[2], c[5]], x, y).shape == (1,)
    with pytest.raises(ValueError, match="outputs"):
        JointExponentialQuantiles(0.0, 1.0, 9, 1.0, qs=(0.25, 0.75), bins=4096).log_probabilities(x)
