"""The rates and lower bounds of mechanisms.rates against their papers' formulas.

Each function is checked against the formula recomputed here in another form (numpy, the paper's
special cases) and against a number worked by hand; hypothesis checks how each scales in n, eps, d,
s and sigma (the only thing an order-only rate asserts); bad inputs are refused naming the
parameter."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant import mean_cdp_vector
from mechanisms import (
    BCDPMean,
    Rate,
    bcdp_least_squares_rate,
    bcdp_mean_corollary_rate,
    bcdp_mean_rate,
    mean_lower_rate,
    sparse_mean_lower_rate,
    sparse_mean_rate,
    truncated_mean_rate,
)


def _r2(c: list[float]) -> float:
    """r^2 of Theorem 2 / Theorem 3 with numpy: cumulative sums of the weighted squared increments."""
    a = np.asarray(c, dtype=float)
    d = a.size
    inner = np.cumsum(np.diff(a, prepend=0.0) ** 2 / (d - np.arange(d)))
    return float(np.sum(1.0 / inner))


# ----------------------------------------------------------------------------- worked by hand

def test_hand_worked_values() -> None:
    """ln 100 = 4.605170, ln 20 = 2.995732, ln 1e4 = 9.210340 (sqrt 3.034854), ln 1000 = 6.907755
    (sqrt 2.628261), ln 1e6 = 13.815511 (sqrt 3.716922):
    Thm 13: sqrt(5 * 4.605170 / 1000) = 0.151743 and 5 * 2.995732 * 3.034854 / 1000 = 0.045458;
    Thm 14: 0.151743 + 5 * 4.605170 * 3.034854 / 1000 = 0.151743 + 0.069880; unbounded: the second
    term times 2.628261 = 0.183663;
    Thm 15 (sigma 2, d 4, n 1e4, eps 1/2): 2 (0.02 + 4 * 3.716922 / 5000) = 0.045947;
    (17) with c = (1/2, 1): inner sums 0.25/2 = 0.125 and 0.125 + 0.25 = 0.375, r^2 = 8 + 8/3,
    over n = 100: 0.106667; c = 1 (d = 4): d^2 / (n eps^2) = 0.16;
    Cor. 1 (d 10, k 2, delta 0.2, eps 2): (20/0.04 + 64/4)/1000 = 0.516; q = 1/2 > q* = 0.0164:
    c_d = ln((e^0.1 - 0.5)/0.5) = 0.190903, 64 / (8 * 0.04/10 + 0.090903^2) = 1589.54, total 2.08954;
    (22) c = 1 (d 4), R = 1, n = 1e6: 2 * ln 4 / 1000 * (16 + 4 * 4) = 0.0887228; n = 100: capped
    at 2 * d = 8."""
    assert sparse_mean_lower_rate(1000, 100, 5, 1.0, 1e-4).value == pytest.approx(0.151743 + 0.045458,
                                                                                    abs=2e-6)
    assert sparse_mean_rate(1000, 100, 5, 1.0, 1e-4).value == pytest.approx(0.221623, abs=2e-6)
    assert sparse_mean_rate(1000, 100, 5, 1.0, 1e-4, bounded=False).value == pytest.approx(
        0.151743 + 0.183663, abs=2e-6)
    assert truncated_mean_rate(10_000, 4, 0.5, 1e-6, sigma=2.0).value == pytest.approx(0.045947, abs=2e-6)
    assert mean_lower_rate(10_000, 4, 0.5, 1e-6, sigma=2.0).value == pytest.approx(0.045947, abs=2e-6)
    assert bcdp_mean_rate(100, [0.5, 1.0]).value == pytest.approx(0.106667, abs=1e-6)
    assert bcdp_mean_rate(100, [1.0] * 4).value == pytest.approx(0.16, rel=1e-12)
    assert bcdp_mean_corollary_rate(1000, 10, 2, 0.2, 2.0, 0.0).value == pytest.approx(0.516, rel=1e-12)
    cor = bcdp_mean_corollary_rate(1000, 10, 2, 0.2, 2.0, 0.5)
    assert cor.value == pytest.approx(2.08954, abs=1e-5)
    assert "(19)" in cor.theorem
    assert bcdp_least_squares_rate(10**6, [1.0] * 4, 1.0).value == pytest.approx(0.0887228, abs=1e-7)
    assert bcdp_least_squares_rate(100, [1.0] * 4, 1.0).value == 8.0


def test_rate_records_direction_theorem_and_hypotheses() -> None:
    lo = sparse_mean_lower_rate(1000, 100, 5, 1.0, 1e-4)
    up = sparse_mean_rate(1000, 100, 5, 1.0, 1e-4, bounded=False)
    assert isinstance(lo, Rate) and lo.direction == "lower" and "Theorem 13" in lo.theorem
    assert up.direction == "upper" and "Theorem 14" in up.theorem
    assert any("sqrt(log n)" in a for a in up.assumes)
    assert ">~" in str(lo) and "up to a constant" in str(lo)
    with pytest.raises(AttributeError):
        lo.value = 0.0  # type: ignore[misc]


# --------------------------------------------------------------------- recomputed independently

@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 10**8), d=st.integers(2, 10**5), s_frac=st.floats(0.0, 1.0),
       eps=st.floats(0.01, 10.0), sigma=st.floats(0.1, 10.0), log_delta=st.floats(1.0, 40.0))
def test_cai_wang_zhang_formulas(n: int, d: int, s_frac: float, eps: float, sigma: float,
                                 log_delta: float) -> None:
    """Thms 13-15 and the slides' classical lower bound, written here as sigma times a statistical
    term plus a privacy term, in log space."""
    s = 1 + int(s_frac * (d - 2))
    delta = math.exp(-log_delta) / n  # < 1/n, as Thm 13 needs
    if delta < math.exp(-1.5 * eps * n) / n:
        return
    ld = math.log(1 / delta)
    stat_sparse = math.exp(0.5 * (math.log(s) + math.log(math.log(d)) - math.log(n)))
    assert sparse_mean_lower_rate(n, d, s, eps, delta, sigma).value == pytest.approx(
        sigma * (stat_sparse + math.exp(math.log(s) + math.log(math.log(d / s)) + 0.5 * math.log(ld)
                                        - math.log(n) - math.log(eps))), rel=1e-9)
    for bounded, extra in ((True, 1.0), (False, math.log(n))):
        assert sparse_mean_rate(n, d, s, eps, delta, sigma, bounded).value == pytest.approx(
            sigma * (stat_sparse + s * math.log(d) * math.sqrt(ld * extra) / (n * eps)), rel=1e-9)
        assert truncated_mean_rate(n, d, eps, delta, sigma, bounded).value == pytest.approx(
            sigma * (math.sqrt(d / n) + d * math.sqrt(ld * extra) / (n * eps)), rel=1e-9)
    lower = mean_lower_rate(n, d, eps, delta, sigma).value
    assert lower == truncated_mean_rate(n, d, eps, delta, sigma).value


@settings(max_examples=60, deadline=None)
@given(c=st.lists(st.floats(0.01, 20.0), min_size=1, max_size=30), n=st.integers(1, 10**9),
       radius=st.floats(0.01, 100.0))
def test_bcdp_formulas(c: list[float], n: int, radius: float) -> None:
    c = sorted(c)
    d = len(c)
    assert bcdp_mean_rate(n, c).value == pytest.approx(min(_r2(c) / n, d), rel=1e-9)
    if d >= 2:
        r2 = _r2(c)
        inner = min(math.log(d) / math.sqrt(n) * (r2 + math.sqrt(r2) * d), d)
        assert bcdp_least_squares_rate(n, c, radius).value == pytest.approx(
            (radius**2 + radius) * inner, rel=1e-9)


def test_bcdp_mean_rate_is_the_ldp_rate_at_c_constant() -> None:
    """The paper's remark after Theorem 2: c = eps 1 gives d^2 / (n eps^2) (the eps-LDP rate)."""
    for d, eps, n in ((3, 0.5, 10**4), (20, 2.0, 10**6), (1, 1.0, 7)):
        assert bcdp_mean_rate(n, [eps] * d).value == pytest.approx(d * d / (n * eps * eps), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(d=st.integers(2, 40), k_frac=st.floats(0.0, 1.0), delta=st.floats(0.01, 1.0),
       ratio=st.floats(2.01, 20.0), q=st.floats(0.0, 1.0))
def test_corollary_1_is_eq_17_simplified(d: int, k_frac: float, delta: float, ratio: float, q: float) -> None:
    """Corollary 1 is eq. (17) at the c of (16) with zeta = 1/2, with the first k levels replaced by
    their worst case delta/2 (a factor <= 4) and eps >= 2 delta used once: (17) / Cor. 1 in
    [1/4, 4] for n large enough that the cap at d is inactive."""
    k = 1 + int(k_frac * (d - 1))
    eps = ratio * delta
    c = mean_cdp_vector([delta] * k + [eps] * (d - k), eps, q, 0.5)
    n = 10**12
    r = bcdp_mean_rate(n, c).value / bcdp_mean_corollary_rate(n, d, k, delta, eps, q).value
    assert 0.25 <= r <= 4.0 + 1e-9, (r, c)


def test_corollary_1_with_every_coordinate_sensitive() -> None:
    """k = d: no eps-coordinates, both forms are d^2 / (n delta^2) (found by hypothesis as 0/0)."""
    for q in (0.0, 0.5, 1.0):
        assert bcdp_mean_corollary_rate(100, 4, 4, 0.5, 2.0, q).value == pytest.approx(16 / (100 * 0.25))


# ------------------------------------------------------------------------------------ scaling

@settings(max_examples=60, deadline=None)
@given(n=st.integers(4, 10**8), d=st.integers(3, 10**5), s_frac=st.floats(0.0, 1.0),
       eps=st.floats(0.05, 5.0), log_delta=st.floats(2.0, 30.0))
def test_scaling_of_the_mean_rates(n: int, d: int, s_frac: float, eps: float, log_delta: float) -> None:
    """Each rate is sigma (a n^-1/2 + b n^-1 eps^-1): doubling n divides it by a factor in
    [sqrt 2, 2], doubling eps by one in [1, 2], doubling sigma multiplies it by 2. The upper rates
    are within log d / log(d/s) (Thm 14 against Thm 13) and sqrt(log n) (the unbounded case) of the
    lower bounds: "rate-optimal up to a logarithmic factor"."""
    s = 1 + int(s_frac * (d - 2))
    delta = math.exp(-log_delta) / (2 * n)
    if delta < math.exp(-1.5 * eps * n) / n:
        return
    fns: list[Callable[..., Rate]] = [
        lambda n_, e_, sg: sparse_mean_lower_rate(n_, d, s, e_, delta, sg),
        lambda n_, e_, sg: sparse_mean_rate(n_, d, s, e_, delta, sg),
        lambda n_, e_, sg: sparse_mean_rate(n_, d, s, e_, delta, sg, bounded=False),
        lambda n_, e_, sg: truncated_mean_rate(n_, d, e_, delta, sg),
        lambda n_, e_, sg: mean_lower_rate(n_, d, e_, delta, sg)]
    for f in fns:
        v = f(n, eps, 1.0).value
        assert v / math.sqrt(2) * (1 + 1e-12) >= f(2 * n, eps, 1.0).value >= v / 2 * (1 - 1e-12)
        assert v * (1 + 1e-12) >= f(n, 2 * eps, 1.0).value >= v / 2 * (1 - 1e-12)
        assert f(n, eps, 2.0).value == pytest.approx(2 * v, rel=1e-12)
    lower = sparse_mean_lower_rate(n, d, s, eps, delta).value
    upper = sparse_mean_rate(n, d, s, eps, delta).value
    assert lower <= upper * (1 + 1e-12) <= lower * math.log(d) / math.log(d / s) * (1 + 1e-9)
    unb = sparse_mean_rate(n, d, s, eps, delta, bounded=False).value
    assert upper <= unb <= upper * math.sqrt(math.log(n)) * (1 + 1e-12)
    # more coordinates, more support: never easier
    assert sparse_mean_lower_rate(n, d + 1, s, eps, delta).value >= lower * (1 - 1e-12)
    t = truncated_mean_rate(n, d, eps, delta).value
    t2 = truncated_mean_rate(n, 2 * d, eps, delta).value
    assert math.sqrt(2) * t * (1 - 1e-12) <= t2 <= 2 * t * (1 + 1e-12)


@settings(max_examples=60, deadline=None)
@given(c=st.lists(st.floats(0.01, 5.0), min_size=2, max_size=20), n=st.integers(1, 10**6))
def test_scaling_of_the_bcdp_rates(c: list[float], n: int) -> None:
    """(17): r^2 / n halves when n doubles and is divided by 4 when c doubles (until the cap d);
    (22): the uncapped part is divided by sqrt 2 when n doubles."""
    c = sorted(c)
    d = len(c)
    v = bcdp_mean_rate(n, c).value
    if v < d:
        assert bcdp_mean_rate(2 * n, c).value == pytest.approx(v / 2, rel=1e-12)
    assert bcdp_mean_rate(n, [2 * x for x in c]).value == pytest.approx(min(_r2(c) / (4 * n), d), rel=1e-9)
    big = 10**8 * n  # uncapped (mostly)
    w = bcdp_least_squares_rate(big, c, 1.0).value
    if w < 2 * d:  # (R^2 + R) d is the cap
        assert bcdp_least_squares_rate(2 * big, c, 1.0).value == pytest.approx(w / math.sqrt(2), rel=1e-9)


# ------------------------------------------------------------------------------------ a finding

def test_eq_17_misses_the_channel_floor_at_large_levels() -> None:
    """eq. (17) takes from Duchi et al. a per-coordinate variance O(1) ((d-k+1)/alpha^2 ^ 1) for the
    alpha-LDP L2 channel on a ball of radius sqrt(d-k+1); the channel's exact variance is B^2/(d-k+1)
    with B ~ r sqrt(pi (d-k+1)/2) / tanh(alpha/2), which tends to a positive constant times (d-k+1)
    as alpha grows, not to 0. So no constant makes (17) an upper bound for all c: BCDPMean's exact
    worst-case MSE (``worst_case_mse``) over (17) grows like c^2 at c = c 1, d = 5 (here from < 7 at
    c <= 1 to > 300 at c = 16)."""
    ratios = {eps: BCDPMean((eps,) * 5, 0.0).worst_case_mse(1000) / bcdp_mean_rate(1000, (eps,) * 5).value
              for eps in (0.25, 0.5, 1.0, 4.0, 16.0)}
    assert max(ratios[e] for e in (0.25, 0.5, 1.0)) < 7.0
    assert ratios[16.0] > 300.0
    assert ratios[16.0] / ratios[4.0] > 0.8 * 16  # ~ c^2 between c = 4 and 16


# ----------------------------------------------------------------------------------- bad input

BAD: list[tuple[Callable[[], Any], type[Exception], str]] = [
    (lambda: sparse_mean_lower_rate(1000, 100, 5, 1.0, 1e-3), ValueError, r"delta must be < 1/n"),
    (lambda: sparse_mean_lower_rate(10, 100, 5, 1.0, 1e-9), ValueError, r"delta must be >= n\^-1"),
    (lambda: sparse_mean_lower_rate(1000, 100, 100, 1.0, 1e-6), ValueError, r"s must be .* 99"),
    (lambda: sparse_mean_lower_rate(1000, 1, 1, 1.0, 1e-6), ValueError, r"d must be an integer in \[2"),
    (lambda: sparse_mean_rate(1000, 100, 101, 1.0, 1e-6), ValueError, r"s must be an integer in \[1, 100\]"),
    (lambda: sparse_mean_rate(1, 100, 1, 1.0, 1e-6, bounded=False), ValueError, "n must be >= 2"),
    (lambda: sparse_mean_rate(10, 100, 1, 1.0, 1e-6, bounded=1), TypeError, "bounded must be a bool"),  # type: ignore[arg-type]
    (lambda: truncated_mean_rate(1000, 1, math.nan, 1e-6), ValueError, r"eps must lie in \(0.0"),
    (lambda: truncated_mean_rate(1000, 1, -1.0, 1e-6), ValueError, "eps must lie"),
    (lambda: truncated_mean_rate(1000, 1, 1.0, 0.0), ValueError, r"delta must lie in \(0.0, 1.0\)"),
    (lambda: truncated_mean_rate(1000, 1, 1.0, 1e-6, sigma=math.inf), ValueError, "sigma must lie"),
    (lambda: truncated_mean_rate(0, 1, 1.0, 1e-6), ValueError, r"n must be an integer in \[1"),
    (lambda: truncated_mean_rate(1000.0, 1, 1.0, 1e-6), TypeError, "n must be an integer"),  # type: ignore[arg-type]
    (lambda: mean_lower_rate(1000, 1, 1.0, 1.0), ValueError, "delta must lie"),
    (lambda: mean_lower_rate(10**16, 1, 1.0, 1e-6), ValueError, "n must be an integer"),
    (lambda: mean_lower_rate(1000, 1, "1", 1e-6), TypeError, "eps must be a real number"),  # type: ignore[arg-type]
    (lambda: bcdp_mean_rate(10, [1.0, 0.5]), ValueError, "c must be non-decreasing"),
    (lambda: bcdp_mean_rate(10, []), ValueError, "c must have one entry"),
    (lambda: bcdp_mean_rate(10, [0.0, 0.0]), ValueError, "c must not be all zero"),
    (lambda: bcdp_mean_rate(10, [-1.0]), ValueError, r"c must lie in \[0.0, 700.0\]"),
    (lambda: bcdp_mean_rate(10, "ab"), TypeError, "c must be a sequence"),  # type: ignore[arg-type]
    (lambda: bcdp_mean_corollary_rate(10, 5, 2, 0.5, 1.0, 0.1), ValueError, r"eps must be > 2 delta"),
    (lambda: bcdp_mean_corollary_rate(10, 5, 6, 0.1, 1.0, 0.1), ValueError, r"k must be .*\[1, 5"),
    (lambda: bcdp_mean_corollary_rate(10, 5, 2, 0.1, 1.0, 1.5), ValueError, r"q must lie in \[0.0, 1.0\]"),
    (lambda: bcdp_least_squares_rate(10, [1.0], 1.0), ValueError, "c must have d >= 2 entries"),
    (lambda: bcdp_least_squares_rate(10, [1.0, 1.0], 0.0), ValueError, "theta_radius must lie"),
]


@pytest.mark.parametrize(("make", "exc", "match"), BAD)
def test_bad_input(make: Callable[[], Any], exc: type[Exception], match: str) -> None:
    with pytest.raises(exc, match=match):
        make()


def test_the_slides_gross_error_bound_cannot_hold_as_printed() -> None:
    """The slides print E|A(F_n) - T(F)| >~ gamma(T, F) / eps for every (eps, delta)-DP A, with no n.
    The clipped mean T(F) = E clip(X, -10, 10) has gamma = sup_x |clip(x) - T(F)| = 10 at N(0, 1), so
    the bound would be 10 at eps = 1 for every n; the Laplace clipped mean's mean absolute error is
    0.032 at n = 1e3 and 0.008 at n = 1e4 (100 datasets, one release each, seed 0), falling
    like n^-1/2: no constant c > 0 makes c gamma / eps a lower bound. dpcert has no function for
    this bound."""
    from accountant import PureDP
    from mechanisms import Domain, Laplace, Mean

    rng = np.random.default_rng(0)
    gamma_over_eps = 10.0 / 1.0
    errs = []
    for n in (1000, 10_000):
        mech = Laplace.calibrated(Mean(Domain(-10.0, 10.0, n, clip=True)), PureDP(1.0))
        errs.append(float(np.mean([abs(float(mech.sample(rng.normal(size=n), rng))) for _ in range(100)])))
    assert errs[1] < 0.002 * gamma_over_eps
    assert errs[0] / errs[1] > 2.0
