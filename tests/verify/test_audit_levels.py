"""The p-value's level search and the selection's cheap bounds: ``bisect_level`` returns exactly what
the plain bisection in log gamma returns (each midpoint evaluated), with fewer evaluations; the
binomial inequality that certifies ``cp_upper_below`` and ``cp_lower_above`` holds against scipy's
binomial distribution function."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special
from scipy import stats as sps

from accountant import GDP, PureDP
from verify.audit.stats import PROBE_SHARE, bisect_level, cp_lower, cp_upper


def plain_bisection(refutes: Callable[[float], bool], lo: float = 1e-300, hi: float = 0.5,
                    iters: int = 24) -> float:
    """The reference: every step of the bisection in log gamma evaluated."""
    if not refutes(hi):
        return 1.0
    if refutes(lo):
        return lo
    llo, lhi = math.log(lo), math.log(hi)
    for _ in range(iters):
        mid = 0.5 * (llo + lhi)
        if refutes(math.exp(mid)):
            lhi = mid
        else:
            llo = mid
    return math.exp(lhi)


def box_margin(k_null: int, k_alt: int, n: int, f: Callable[[float], float],
               calls: list[float]) -> Callable[[float], float]:
    """The curve test's margin at level g: f(alpha_u) - beta_u (> 0: the claim is refuted)."""
    def margin(g: float) -> float:
        calls.append(g)
        a_u = float(cp_upper(k_null, n, g))
        b_u = 1.0 - float(cp_lower(k_alt, n, g))
        return f(a_u) - b_u

    return margin


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([50, 3000, 70_000, 1_000_000]), st.floats(0.0, 0.3), st.floats(0.0, 1.0),
       st.floats(0.05, 3.0), st.booleans())
def test_bisect_level_is_the_plain_bisection(n: int, null_share: float, alt_share: float, param: float,
                                             gdp: bool) -> None:
    """Same level, bit for bit, on Clopper-Pearson boxes of PureDP and GDP claims, including
    refutations far below 1e-200 (where every step is evaluated)."""
    f = (GDP(param) if gdp else PureDP(param)).tradeoff
    k_null = round(null_share * n)
    k_alt = k_null + round(alt_share * (n - k_null))
    calls: list[float] = []
    margin = box_margin(k_null, k_alt, n, f, calls)
    assert bisect_level(margin) == plain_bisection(lambda g: margin(g) > 0.0)


def test_bisect_level_evaluates_fewer_levels() -> None:
    """On refuting boxes whose level lies between 1e-200 and 1/2, at most 18 evaluations each and
    at most 13 on average (the plain bisection takes 26); at most 10 where the level is above the
    probe (hi * PROBE_SHARE), whose evaluation then spares those at 1e-300 and RELIABLE_LEVEL."""
    rng = np.random.default_rng(3)
    f = PureDP(1.0).tradeoff
    counts: list[int] = []
    while len(counts) < 60:
        n = 7000
        k_null = int(rng.integers(0, 1500))
        k_alt = int(rng.integers(k_null, n))
        calls: list[float] = []
        level = bisect_level(box_margin(k_null, k_alt, n, f, calls))
        if 1e-200 < level < 1.0:
            counts.append(len(calls))
            assert level <= 0.5 * PROBE_SHARE or len(calls) <= 10
    assert max(counts) <= 18 and np.mean(counts) <= 13
    shallow: list[int] = []
    for k_alt in range(2000, 3000, 40):  # levels above the probe: PureDP(1) nearly refuted
        calls = []
        level = bisect_level(box_margin(1000, k_alt, 7000, f, calls))
        if 0.5 * PROBE_SHARE < level < 1.0:
            shallow.append(len(calls))
            assert 1e-200 not in calls and 1e-300 not in calls
    assert shallow and max(shallow) <= 10


@given(st.floats(-690.0, -0.7))
def test_bisect_level_on_a_step(log_t: float) -> None:
    """A margin that jumps from -1 to 1 at t: the plain bisection's level."""
    t = math.exp(log_t)
    assert bisect_level(lambda g: 1.0 if g > t else -1.0) == plain_bisection(lambda g: g > t)


@given(st.floats(-400.0, -2.0), st.floats(1e-7, 1e-3))
def test_bisect_level_refutes_where_it_says(log_t: float, hole: float) -> None:
    """A margin that is not monotone (false again on a narrow band above t): the level returned is
    one at which the test refutes, as the plain bisection's is."""
    t = math.exp(log_t)
    lo_hole = t * 1.3

    def margin(g: float) -> float:
        return 1.0 if g > t and not lo_hole <= g <= lo_hole * (1.0 + hole) else -1.0

    level = bisect_level(margin)
    assert margin(level) > 0.0


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 2000), st.floats(0.0, 1.0), st.floats(1e-6, 1.0 - 1e-6))
def test_binomial_distribution_function_between_signed_root_bounds(n: int, share: float, x: float) -> None:
    """Zubkov and Serov: Phi(sign(k/n - x) sqrt(2n H(k/n, x))) <= P(Bin(n, x) <= k) <=
    Phi(sign((k+1)/n - x) sqrt(2n H((k+1)/n, x))) for 0 <= k < n, H the Bernoulli relative entropy
    (checked against scipy's binomial distribution function, with 1e-12 relative slack for its
    rounding)."""
    k = min(int(share * n), n - 1)

    def phi(j: int) -> float:
        a = j / n
        h = float(special.rel_entr(a, x) + special.rel_entr(1.0 - a, 1.0 - x))
        return float(special.ndtr(math.copysign(math.sqrt(max(2.0 * n * h, 0.0)), a - x)))

    cdf = float(sps.binom.cdf(k, n, x))
    assert phi(k) <= cdf * (1.0 + 1e-12) + 1e-300
    assert cdf <= phi(k + 1) * (1.0 + 1e-12) + 1e-300
