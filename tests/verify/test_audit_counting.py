"""The audit's counting primitives agree with their definitions: scores are sorted once and counted
by binary search, and that must not change what is counted (each count checked against a direct
count over the draws)."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant import PureDP
from verify.audit.features import Batch, Layout, missing_pattern, pooled_unique_count
from verify.audit.regions import (
    REFINED_TOWARDS,
    Objective,
    SelectionBounds,
    SortedScores,
    bin_counts,
    objective_values,
    region_masses,
    thresholds,
)
from verify.audit.scores import DENSE_KEYS, fit_scores, lowest_bit_exponent
from verify.audit.stats import (
    TOWARDS_WILSON,
    cp_lower,
    cp_lower_above,
    cp_upper,
    cp_upper_below,
    eps_lower_bound,
    mu_lower_bound,
    order_statistics,
)

small_floats = st.integers(-40, 40).map(lambda k: k / 4)  # many ties, as lattice outputs have


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=60),
       st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20))
def test_order_statistics_are_numpys_inverted_cdf(x: list[float], levels: list[float]) -> None:
    a = np.asarray(x)
    expected = np.quantile(a, levels, method="inverted_cdf")
    assert np.array_equal(order_statistics(np.sort(a), levels), expected)


@settings(max_examples=100, deadline=None)
@given(st.lists(small_floats, min_size=1, max_size=80), st.lists(small_floats, min_size=1, max_size=80))
def test_region_masses_count_every_threshold(p: list[float], q: list[float]) -> None:
    sp, sq = np.asarray(p), np.asarray(q)
    s = SortedScores.of(sp, sq)
    thr = thresholds(s)
    assert np.array_equal(thr, np.unique(np.concatenate([sp, sq])))  # few values: all of them
    a0, r0, a1, r1 = region_masses(s, thr)
    for j, t in enumerate(thr):
        assert a0[j] == np.mean(sp > t) and r0[j] == np.mean(sq > t)
        assert a1[j] == np.mean(sq < t) and r1[j] == np.mean(sp < t)


def test_thresholds_of_many_values_are_pooled_quantiles() -> None:
    rng = np.random.default_rng(3)
    sp, sq = rng.standard_normal(5000), rng.standard_normal(3000) + 0.5
    thr = thresholds(SortedScores.of(sp, sq), max_thresholds=50)
    pooled = np.concatenate([sp, sq])
    levels = np.concatenate([np.linspace(0.0, 1.0, 42)[1:-1],
                             [1e-5, 1e-4, 1e-3, 3e-3, 1 - 3e-3, 1 - 1e-3, 1 - 1e-4, 1 - 1e-5]])
    assert np.array_equal(thr, np.unique(np.quantile(pooled, levels, method="inverted_cdf")))


@settings(max_examples=100, deadline=None)
@given(st.lists(small_floats, min_size=1, max_size=80), st.lists(small_floats, min_size=1, max_size=6))
def test_bin_counts_put_a_score_on_an_edge_above_it(s: list[float], cuts: list[float]) -> None:
    x, edges = np.asarray(s), np.unique(cuts)
    counts = bin_counts(edges, np.sort(x))
    bounds = np.concatenate([[-math.inf], edges, [math.inf]])
    direct = [int(np.sum((x >= lo) & (x < hi))) for lo, hi in itertools.pairwise(bounds)]
    assert counts.tolist() == direct


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=200), st.lists(st.integers(0, 30), max_size=200),
       st.integers(0, 40))
def test_pooled_unique_count_with_a_limit(a: list[int], b: list[int], limit: int) -> None:
    pa = Batch(None, np.asarray(a, dtype=np.int64), None)
    pb = Batch(None, np.asarray(b, dtype=np.int64), None)
    u = len(set(a) | set(b))
    assert pooled_unique_count(pa, pb) == u
    assert pooled_unique_count(pa, pb, limit=limit) == (u if u <= limit else None)


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 62), st.integers(1, 30), st.integers(0, 2**32 - 1))
def test_missing_pattern_sets_bit_j_for_a_missing_coordinate_j(d: int, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, d))
    v[rng.random((n, d)) < 0.4] = np.nan
    expected = [sum(1 << j for j in range(d) if math.isnan(row[j])) for row in v]
    assert missing_pattern(v).tolist() == expected


def test_layout_canonicalises_zero_and_nan() -> None:
    payload_nan = np.array([0x7FF8_0000_0000_0001], dtype=np.int64).view(np.float64)[0]
    arr = np.array([[-0.0], [payload_nan], [1.5], [-np.nan]])
    _, bp, _ = Layout.fit([arr], [arr.copy()], 4)
    assert bp.values is not None
    bits = bp.values.view(np.int64)[:, 0].tolist()
    canonical = np.array([np.nan]).view(np.int64)[0]
    assert bits == [0, canonical, np.array([1.5]).view(np.int64)[0], canonical]


def _nth(row: np.ndarray, m: int) -> float:
    present = [x for x in row if not math.isnan(x)]
    return present[m] if m < len(present) else math.nan


def _tail_by_definition(fit: np.ndarray, fit2: np.ndarray, row: np.ndarray, m: int, lower: bool) -> float:
    """log((C_q + 1/2) / (C_p + 1/2)), C counting fit draws of the row's structure (NaN pattern) with
    the m-th number at or below (lower) or at or above it; the structure's count without an m-th
    number; 0 for a structure not seen in the fit draws."""
    def cat(r: np.ndarray) -> tuple[bool, ...]:
        return tuple(bool(math.isnan(x)) for x in r)

    c, y = cat(row), _nth(row, m)
    seen = {cat(r) for r in fit} | {cat(r) for r in fit2}
    if c not in seen:
        return 0.0

    def count(draws: np.ndarray) -> int:
        same = [r for r in draws if cat(r) == c]
        if math.isnan(y):
            return len(same)
        vals = [_nth(r, m) for r in same]
        return sum(1 for v in vals if not math.isnan(v) and (v <= y if lower else v >= y))

    return math.log((count(fit2) + 0.5) / (count(fit) + 0.5))


def _draws(rng: np.random.Generator, n: int, d: int, shift: float) -> np.ndarray:
    v = np.round((rng.standard_normal((n, d)) + shift) * 4) / 4  # ties
    v[rng.random((n, d)) < 0.3] = np.nan  # structures: which coordinates are absent
    return v


def test_conditional_tail_scores_need_two_structures() -> None:
    """With one structure (plain numbers, none absent) the tail of a number given the structure is
    a fitted function of that number alone: the family is empty."""
    rng = np.random.default_rng(8)
    fp, fq = rng.standard_normal((300, 1)), rng.standard_normal((300, 1)) + 0.7
    _, bp, bq = Layout.fit([fp], [fq], 300)
    scores = fit_scores(bp, bq, privacy_loss=None, discrete=False, rng=np.random.default_rng(0))
    assert not [sc for sc in scores if "given the structure" in sc.name]
    assert [sc.name for sc in scores if sc.name == "y"]  # the threshold on the number itself


def test_conditional_tail_scores_count_by_definition() -> None:
    rng = np.random.default_rng(7)
    for d in (1, 3):
        fp, fq, ev = _draws(rng, 300, d, 0.0), _draws(rng, 300, d, 0.7), _draws(rng, 200, d, 0.3)
        ev[0] = np.nan  # a structure the fit draws may lack: all absent
        layout, bp, bq = Layout.fit([fp], [fq], 300)
        scores = fit_scores(bp, bq, privacy_loss=None, discrete=False, rng=np.random.default_rng(0))
        tails = {sc.name: sc for sc in scores if "given the structure" in sc.name}
        assert len(tails) == (2 if d == 1 else 4)
        batch = layout.batch([ev], 200)
        for name, sc in tails.items():
            m = 0 if name.startswith("first") else 1
            got = sc(batch)
            want = [_tail_by_definition(fp, fq, row, m, "lower" in name) for row in ev]
            assert np.allclose(got, want, rtol=0, atol=1e-12), name


def _lowest_bit_by_definition(y: float) -> int:
    """e with y = m 2^e, m an odd integer, from the exact rational value of y."""
    if y == 0.0:
        return -2000
    if not math.isfinite(y):
        return 2000
    num, den = abs(y).as_integer_ratio()  # den a power of 2; num odd when den > 1
    e = -(den.bit_length() - 1)
    while num % 2 == 0:
        num //= 2
        e += 1
    return e


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=200))
def test_lowest_bit_exponent_on_every_kind_of_double(patterns: list[int]) -> None:
    """Any bit pattern: normal, subnormal, zero, infinite and NaN doubles of both signs."""
    y = np.array(patterns, dtype=np.int64).view(np.float64)
    extra = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 2.2250738585072014e-308,
                      2.225073858507201e-308, 1.0, 3.0, 2.0**1023 * 1.5, np.finfo(np.float64).max])
    y = np.concatenate([y, extra, -extra])
    got = lowest_bit_exponent(y)
    assert got.dtype == np.int64
    assert got.tolist() == [_lowest_bit_by_definition(float(v)) for v in y]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=60),
       st.lists(st.integers(-50, 50), min_size=1, max_size=60),
       st.lists(st.integers(-2**62, 2**62), min_size=1, max_size=30), st.booleans())
def test_exact_value_counts_look_up_every_key(kp: list[int], kq: list[int], queries: list[int],
                                              wide: bool) -> None:
    """The exact value count score of integer outputs is the smoothed log count ratio of a value
    seen in the fit draws and 0 for any other value, whether its table looks values up by offset (a
    range narrower than DENSE_KEYS) or by binary search (a wider one)."""
    n = min(len(kp), len(kq))
    p, q = np.array(kp[:n], dtype=np.int64), np.array(kq[:n], dtype=np.int64)
    if wide:
        p[0] = 2 * DENSE_KEYS
    layout, bp, bq = Layout.fit([p], [q], n)
    scores = fit_scores(bp, bq, privacy_loss=None, discrete=True, rng=np.random.default_rng(0))
    exact = next(sc for sc in scores if sc.name == "exact value counts")
    keys = np.concatenate([np.array(queries, dtype=np.int64), p, q, p + 1, q - 1,
                           np.array([np.iinfo(np.int64).min, np.iinfo(np.int64).max], dtype=np.int64)])
    got = exact(layout.batch([keys], keys.size))
    for k, g in zip(keys.tolist(), got.tolist(), strict=True):
        c_p, c_q = int(np.sum(p == k)), int(np.sum(q == k))
        want = math.log((c_q + 0.5) / (c_p + 0.5)) if c_p + c_q else 0.0
        assert g == want


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 400), st.integers(0, 400)), min_size=1, max_size=120),
                min_size=1, max_size=4),
       st.sampled_from(["eps", "mu", "claim"]), st.sampled_from([1e-2, 1e-4, 1e-7]))
def test_selection_bounds_pick_what_every_bound_picks(groups: list[list[tuple[int, int]]], obj: str,
                                                      gamma: float) -> None:
    """The region and value ``SelectionBounds.best`` returns per group, bounding only the regions
    that can win, are those of every region of the group bounded (the first of the largest
    values), with groups of at most and of more than FIRST_BOUNDS regions bounded together."""
    n = 400
    f = PureDP(1.0).tradeoff
    arrays = [(np.array([c[0] for c in g], dtype=np.float64), np.array([c[1] for c in g], dtype=np.float64))
              for g in groups]
    got = SelectionBounds(arrays, n, gamma).best(obj, 0.0, f)  # type: ignore[arg-type]
    for (k_null, k_alt), (j, value) in zip(arrays, got, strict=True):
        a_up = cp_upper(k_null, n, gamma)
        b_up = 1.0 - cp_lower(k_alt, n, gamma)
        every = objective_values(obj, a_up, b_up, 0.0, f)  # type: ignore[arg-type]
        assert j == int(np.argmax(every)) and value == float(every[j])


def test_selection_bounds_refine_the_regions_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """On threshold regions of two shifted Laplace laws (tails e^-t against e^-(t-1), smooth in t,
    so many regions are close to the best after the first comparison) the closer lower bounds
    leave fewer regions to bound exactly, and the choice is that of every region bounded."""
    import importlib

    stats_module = importlib.import_module("verify.audit.stats")  # the module regions reads
    regions_module = importlib.import_module("verify.audit.regions")
    n, gamma = 3000, 1e-5
    t = np.linspace(-6.0, 6.0, 400)
    tail = np.where(t > 0, 0.5 * np.exp(-t), 1.0 - 0.5 * np.exp(t))
    tail_q = np.where(t > 1, 0.5 * np.exp(1.0 - t), 1.0 - 0.5 * np.exp(t - 1.0))
    groups = [(np.round(tail * n), np.round(tail_q * n)), (np.round(tail * n) + 1, np.round(tail_q * n))]
    f = PureDP(1.0).tradeoff
    bounded: list[int] = []

    def counting(k: np.ndarray, m: int, g: float) -> np.ndarray:
        bounded.append(np.size(k))
        return cp_upper(k, m, g)

    monkeypatch.setattr(stats_module, "cp_upper", counting)
    objs: tuple[Objective, ...] = ("eps", "mu", "claim")
    for obj in objs:
        counts = []
        for refine_min in (regions_module.REFINE_MIN, 10**9):  # with and without the closer bounds
            monkeypatch.setattr(regions_module, "REFINE_MIN", refine_min)
            bounded.clear()
            got = SelectionBounds(groups, n, gamma).best(obj, 0.0, f)
            counts.append(sum(bounded))
            for (k_null, k_alt), (j, value) in zip(groups, got, strict=True):
                every = objective_values(obj, cp_upper(k_null, n, gamma), 1.0 - cp_lower(k_alt, n, gamma),
                                         0.0, f)
                assert j == int(np.argmax(every)) and value == float(every[j])
        assert 0 < counts[0] <= counts[1] and (obj != "eps" or counts[0] < counts[1]), counts


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10**7), st.floats(0.0, 1.0), st.sampled_from([0.25, 1e-2, 1e-5, 1e-9, 1e-15]))
def test_cheap_bounds_lie_inside_clopper_pearson(n: int, share: float, gamma: float) -> None:
    """cp_upper_below never exceeds the Clopper-Pearson upper bound and cp_lower_above is never
    below the lower bound (k fractional, as the selection's predictions are: 0 or at least 1)."""
    k = np.array([max(share * n, 1.0), math.floor(share * n), 0.0, float(n), max(n - 1.0, 0.0), 1.0])
    for towards in (TOWARDS_WILSON, REFINED_TOWARDS, (1.2, 1.05)):  # also beyond Wilson's bound
        assert np.all(cp_upper_below(k, n, gamma, towards) <= cp_upper(k, n, gamma))
        assert np.all(cp_lower(k, n, gamma) <= cp_lower_above(k, n, gamma, towards))


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 10**7), st.floats(0.0, 1.0), st.sampled_from([0.4, 1e-2, 1e-5, 1e-9, 1e-15, 1e-300]))
def test_clopper_pearson_bounds_are_the_beta_quantiles(n: int, share: float, gamma: float) -> None:
    """cp_upper is scipy's (1 - gamma) quantile of Beta(k + 1, n - k) (1 at k >= n) and cp_lower its
    gamma quantile of Beta(k, n - k + 1) (0 at k = 0), bit for bit, for integer and fractional k,
    as arrays and as scalars."""
    from scipy import stats

    half = round(2 * share * n) / 2  # the selection's predictions: counts or halves of them
    k = np.array([half, math.floor(share * n), 0.0, float(n), max(n - 1.0, 0.0), 1.0, n + 0.5, n + 2.0])
    inner_u, inner_l = k < n, k > 0
    up = np.ones(k.size)
    up[inner_u] = stats.beta.isf(gamma, k[inner_u] + 1.0, n - k[inner_u])
    low = np.zeros(k.size)
    with np.errstate(invalid="ignore"):
        low[inner_l] = stats.beta.ppf(gamma, k[inner_l], n - k[inner_l] + 1.0)  # NaN where n - k + 1 <= 0
    up, low = np.clip(np.nan_to_num(up, nan=1.0), 0, 1), np.clip(np.nan_to_num(low, nan=0.0), 0, 1)
    assert np.array_equal(cp_upper(k, n, gamma), up) and np.array_equal(cp_lower(k, n, gamma), low)
    for i in range(k.size):
        assert float(cp_upper(float(k[i]), n, gamma)) == up[i] and float(cp_lower(k[i], n, gamma)) == low[i]


def test_clopper_pearson_level_outside_the_unit_interval_is_refused() -> None:
    for bad in (0.0, 1.0, -0.1, math.nan):
        try:
            cp_upper(1, 10, bad)
        except ValueError as exc:
            assert "gamma" in str(exc)
        else:
            raise AssertionError(f"cp_upper accepted gamma = {bad}")


def test_privacy_bounds_read_nan_as_zero_and_infinity_as_the_largest_double() -> None:
    """eps and mu bounds: at least 0, NaN (a 0/0 region) as 0, an unbounded one as the largest double."""
    big = float(np.finfo(np.float64).max)
    eps = eps_lower_bound(np.array([0.0, 0.5, math.nan, 0.1]),
                          np.array([0.5, 0.5, math.nan, 1 - math.e * 0.1]), 0.0)
    assert eps[0] == big and eps[1] == 0.0 and eps[2] == 0.0 and math.isclose(eps[3], 1.0, rel_tol=1e-12)
    mu = mu_lower_bound(np.array([0.0, 0.5, math.nan, 0.9]), np.array([0.5, 0.5, 0.5, 0.9]))
    assert mu[0] == big and mu[1] == 0.0 and mu[2] == 0.0 and mu[3] == 0.0


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 2000), st.integers(1, 4), st.integers(0, 2**32 - 1),
       st.sampled_from([1e-6, 1.0, 1e6, 1e300]))
def test_median_and_std_without_nan_are_the_nan_functions(n: int, d: int, seed: int, scale: float) -> None:
    """The logistic score centres and scales by np.median / np.std when no value is NaN or
    infinite, in place of np.nanmedian / np.nanstd: the same numbers, bit for bit (columns of
    both numpy code paths of nanmedian: below and above 600 rows)."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.standard_cauchy((n, d)) * 8) / 8 * scale  # ties, huge values (std overflows)
    with np.errstate(over="ignore", invalid="ignore"):
        assert np.array_equal(np.median(x, axis=0), np.nanmedian(x, axis=0), equal_nan=True)
        assert np.array_equal(np.std(x, axis=0), np.nanstd(x, axis=0), equal_nan=True)


def test_declared_losses_in_one_call_are_the_two_calls() -> None:
    """``declared_losses`` passes both inputs' outputs to ``privacy_loss`` in one call when they
    are arrays of one kind: each output's value is the one of a call on its own batch; a stub
    raising NotImplementedError declares nothing; outputs of other kinds are passed per batch."""
    from verify.audit.scores import LOSS_MEMO, declared_losses
    from verify.examples import GeometricMechanism, RandomizedResponse, ScalarLaplace

    rng = np.random.default_rng(3)
    for mech, (x, x2) in ((ScalarLaplace(1.0), (0.0, 1.0)), (RandomizedResponse(1.0), (0, 1)),
                          (GeometricMechanism(1.0), (0, 1))):
        yp, yq = mech.sample(x, rng, 300), mech.sample(x2, rng, 200)
        p = Batch(None, np.zeros(300), yp)
        q = Batch(None, np.zeros(200), yq)
        loss = functools.partial(lambda m, a, b, y: m.privacy_loss(y, b, a), mech, x, x2)
        assert declared_losses(loss, p, q)
        assert np.array_equal(p.memo[LOSS_MEMO], np.ravel(mech.privacy_loss(yp, x2, x)))
        assert np.array_equal(q.memo[LOSS_MEMO], np.ravel(mech.privacy_loss(yq, x2, x)))

    def stub(y: object) -> np.ndarray:
        raise NotImplementedError

    p, q = Batch(None, np.zeros(2), np.zeros(2)), Batch(None, np.zeros(2), np.zeros(2))
    assert not declared_losses(stub, p, q) and LOSS_MEMO not in p.memo
    calls: list[int] = []

    def per_output(y: list[float]) -> np.ndarray:
        calls.append(len(y))
        return np.array([2.0 * v for v in y])

    p, q = Batch(None, np.zeros(3), [1.0, 2.0, 3.0]), Batch(None, np.zeros(2), [4.0, 5.0])
    assert declared_losses(per_output, p, q) and calls == [3, 2]  # lists: one call per batch
    assert np.array_equal(q.memo[LOSS_MEMO], [8.0, 10.0])
