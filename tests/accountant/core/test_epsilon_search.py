"""The epsilon search (``_numeric.smallest_epsilon``, ``narrow_bracket``): every epsilon returned is
one where delta(eps) <= delta was evaluated, within rtol of the exact crossing, on smooth, kinked,
flat and vanishing profiles; golden crossings are closed forms."""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant import GDP
from accountant.core.search import EPSILON_RTOL, bisect_count, narrow_bracket, smallest_epsilon

# (a, parameter) -> value: delta(eps, a), or the exact crossing of a target t
Profile = Callable[[float, float], float]

PROFILES: dict[str, tuple[Profile, Profile | None]] = {
    # name: (delta(eps), exact crossing of a target)
    "exponential": (lambda e, a: math.exp(-a * e), lambda t, a: -math.log(t) / a),
    "gaussian tail": (lambda e, a: math.exp(-a * e * e), lambda t, a: math.sqrt(-math.log(t) / a)),
    "linear to 0": (lambda e, a: max(0.0, 1.0 - a * e), lambda t, a: (1.0 - t) / a),
    "staircase": (lambda e, a: 0.5 ** math.floor(a * e), None),
}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(PROFILES)), st.floats(0.01, 50.0), st.floats(1e-15, 0.9))
def test_the_epsilon_found_is_evaluated_and_within_rtol(name: str, a: float, target: float) -> None:
    delta_of, crossing = PROFILES[name]
    seen: dict[float, float] = {}

    def f(e: float) -> float:
        seen[e] = delta_of(e, a)
        return seen[e]

    eps = smallest_epsilon(f, target)
    assert seen[eps] <= target  # never optimistic: checked where it is returned
    if crossing is not None:
        exact = crossing(target, a)
        assert exact <= eps * (1 + 1e-15) + 1e-300
        assert eps - exact <= 1.01 * EPSILON_RTOL * max(1.0, eps)
    else:  # the staircase reaches target at the first step k with 0.5^k <= target
        assert eps == pytest.approx(math.ceil(math.log2(1 / target) - 1e-12) / a, rel=1e-11)
    # bisection took about 40 steps after the doubling search; the secant in log delta needs far
    # fewer where log delta is smooth, and falls back to bisection where delta is 0 or flat (at
    # most about twice as many)
    assert len(seen) <= (25 if name in ("exponential", "gaussian tail") else 100)


def test_fewer_evaluations_than_bisection_on_a_gdp_profile() -> None:
    count = [0]

    def f(e: float) -> float:
        count[0] += 1
        return GDP(2.0).delta(e)

    eps = smallest_epsilon(f, 1e-5)
    assert eps == pytest.approx(GDP(2.0).epsilon(1e-5), rel=1e-11)
    assert count[0] <= 20  # bisection: 45


def test_narrow_bracket_keeps_each_end_on_its_side() -> None:
    # a kink at 1 and a flat part: the ends straddle the crossing of 0.3 at 1.4
    def f(e: float) -> float:
        return 1.0 if e < 1.0 else max(0.0, 1.0 - 0.5 * e)

    lo, hi = narrow_bracket(f, 0.3, (0.0, 1.0), (3.0, 0.0), 1e-13)
    assert f(lo) > 0.3 >= f(hi)
    assert hi - lo <= 1e-13 * max(1.0, hi) and lo <= 1.4 <= hi


def test_a_nan_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="NaN at eps"):
        smallest_epsilon(lambda e: math.nan if 0.0 < e < 1.0 else (1.0 if e == 0.0 else 0.0), 0.5)


@given(st.integers(-10**6, 10**6), st.integers(1, 10**6), st.integers(1, 10**6), st.booleans())
def test_bisect_count_finds_the_change(change: int, below: int, above: int, up: bool) -> None:
    """ok holds from ``change`` on (or up to it when ``up`` is False): with rel = 0 the search ends
    exactly at the change, from any pair of ends on either side."""
    def ok(n: int) -> bool:
        return n >= change if up else n <= change

    good, bad = (change + above, change - below) if up else (change - below, change + above)
    assert bisect_count(ok, good, bad) == change


def test_bisect_count_with_a_relative_gap() -> None:
    """rel = 0.01 stops within 1% of the change, on the side where ok holds."""
    got = bisect_count(lambda n: n >= 123_457, 10**7, 1, rel=0.01)
    assert 123_457 <= got <= 123_457 * 1.011
