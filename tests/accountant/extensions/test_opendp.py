"""accountant.from_opendp: an OpenDP measurement's privacy map as a dpcert guarantee.

The reference is OpenDP's own map (another implementation): a pure-DP or zCDP map's value is the
guarantee's parameter; a privacy profile's epsilon at a delta is reproduced (never below it), and
its delta(eps) is never below OpenDP's anywhere. Validation and refusals are tested on duck-typed
fakes, so they run without OpenDP; the rest skips when OpenDP is not installed.
"""

from __future__ import annotations

import math
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from accountant import FDP, RDP, ZCDP, ApproxDP, PureDP, from_opendp
from accountant.extensions.opendp import PROFILE_DELTAS, StepProfile


def fake(measure: str, d_out: Any, kind: str | None = None) -> SimpleNamespace:
    """A duck-typed measurement: its measure prints as ``measure``, its map returns ``d_out``."""
    return SimpleNamespace(output_measure=FakeMeasure(measure, kind or measure), map=lambda d_in: d_out)


class FakeMeasure:
    def __init__(self, name: str, kind: str) -> None:
        self.name, self.type = name, kind

    def __str__(self) -> str:
        return self.name


# ---- validation and refusals (no OpenDP needed) --------------------------------------------------

@pytest.mark.parametrize("measure", ["MaxDivergence", "ZeroConcentratedDivergence"])
@pytest.mark.parametrize("bad", [math.nan, -1.0, math.inf])
def test_bad_map_values_are_refused(measure: str, bad: float) -> None:
    with pytest.raises(ValueError, match=r"epsilon|rho"):
        from_opendp(fake(measure, bad), 1.0)


def test_non_numbers_are_type_errors() -> None:
    with pytest.raises(TypeError, match="epsilon"):
        from_opendp(fake("MaxDivergence", "1.0"), 1.0)


def test_approximate_measures_validate_delta() -> None:
    assert from_opendp(fake("Approximate(MaxDivergence)", (1.0, 1e-6)), 1) == ApproxDP(1.0, 1e-6)
    assert from_opendp(fake("Approximate<MaxDivergence>", (1.0, 0.0)), 1) == PureDP(1.0)
    for bad in [(1.0, 1.0), (1.0, -1e-9), (1.0, math.nan), 1.0, (1.0, 2.0, 3.0)]:
        with pytest.raises((ValueError, TypeError), match=r"delta|Approximate"):
            from_opendp(fake("Approximate(MaxDivergence)", bad), 1)


def test_approximate_zcdp_with_delta_is_refused_with_a_hint() -> None:
    assert from_opendp(fake("Approximate(ZeroConcentratedDivergence)", (0.5, 0.0)), 1) == ZCDP(0.5)
    with pytest.raises(ValueError, match="make_zCDP_to_approxDP"):
        from_opendp(fake("Approximate(ZeroConcentratedDivergence)", (0.5, 1e-6)), 1)


def test_unsupported_measure_and_non_measurement() -> None:
    with pytest.raises(ValueError, match=r"MyDivergence \(ExtrinsicDivergence\) is not supported"):
        from_opendp(fake("MyDivergence", 1.0, kind="ExtrinsicDivergence"), 1.0)
    with pytest.raises(TypeError, match="OpenDP Measurement"):
        from_opendp(lambda x: x, 1.0)


def test_a_refused_d_in_is_a_value_error_naming_it() -> None:
    def refuse(d_in: Any) -> float:
        raise RuntimeError("inferred type is String,\n expected f64")

    m = SimpleNamespace(output_measure=FakeMeasure("MaxDivergence", "MaxDivergence"), map=refuse)
    with pytest.raises(ValueError, match=r"d_in = 'x'.*inferred type is String, expected f64"):
        from_opendp(m, "x")


def test_renyi_curve_is_read_at_the_orders() -> None:
    g = from_opendp(fake("RenyiDivergence", lambda a: 0.5 * a), 1.0)
    assert isinstance(g, RDP)
    assert all(e == pytest.approx(0.5 * a, rel=1e-15) for a, e in zip(g.orders, g.epsilons, strict=True))
    # the zCDP it is: same epsilon at a delta up to the orders' resolution, never below
    assert ZCDP(0.5).epsilon(1e-5) <= g.epsilon(1e-5) <= 1.01 * ZCDP(0.5).epsilon(1e-5)
    with pytest.raises(ValueError, match="order"):
        from_opendp(fake("RenyiDivergence", lambda a: math.nan), 1.0)


def test_step_profile_is_an_upper_bound_of_its_points() -> None:
    s = StepProfile((0.0, 1.0, 2.0), (0.5, 0.1, 0.2))  # a non-monotone table: the running minimum
    assert [s(x) for x in (-1.0, 0.0, 0.5, 1.0, 1.5, 2.5, math.inf)] == [1.0, 0.5, 0.5, 0.1, 0.1, 0.1, 0.1]
    with pytest.raises(ValueError, match="increasing"):
        StepProfile((1.0, 1.0), (0.5, 0.1))


def test_importing_and_translating_does_not_load_opendp() -> None:
    code = ("import sys\nfrom types import SimpleNamespace\nfrom accountant import from_opendp\n"
            "class M:\n    type = 'MaxDivergence'\n    def __str__(self): return 'MaxDivergence'\n"
            "print(from_opendp(SimpleNamespace(output_measure=M(), map=lambda d: 1.0), 1))\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('opendp', 'diffprivlib', 'pydp', 'dp_accounting')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["1-DP", "[]"]


# ---- against OpenDP's own maps -------------------------------------------------------------------

@pytest.mark.parametrize("scale", [0.1, 1.0, 3.7])
@pytest.mark.parametrize("d_in", [0.5, 1.0, 2.0])
def test_pure_and_zcdp_maps_are_the_parameters(dp: Any, space: Any, scale: float, d_in: float) -> None:
    lap = dp.m.make_laplace(*space, scale=scale)
    gau = dp.m.make_gaussian(*space, scale=scale)
    assert from_opendp(lap, d_in) == PureDP(lap.map(d_in))
    assert from_opendp(gau, d_in) == ZCDP(gau.map(d_in))
    geo = dp.m.make_laplace(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=scale)
    assert from_opendp(geo, 1) == PureDP(geo.map(1))


def test_randomized_response(dp: Any) -> None:
    rr = dp.m.make_randomized_response_bool(0.75)
    g = from_opendp(rr, 1)
    assert g == PureDP(rr.map(1))
    assert g.eps >= math.log(3)  # OpenDP rounds up


def test_fixed_approximate_dp(dp: Any, space: Any) -> None:
    fixed = dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*space, scale=1.0)), 1e-5)
    eps, delta = fixed.map(1.0)
    assert from_opendp(fixed, 1.0) == ApproxDP(eps, delta)


@pytest.mark.parametrize("scale", [0.5, 1.0, 4.0])
def test_privacy_profile_matches_opendp_and_is_never_below_it(dp: Any, space: Any, scale: float) -> None:
    m = dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(*space, scale=scale))
    profile = m.map(1.0)
    g = from_opendp(m, 1.0)
    assert isinstance(g, FDP)
    for d in [1e-3, 1e-5, 1e-6, 1e-9, 5e-12]:  # each one of PROFILE_DELTAS: read exactly
        assert d in PROFILE_DELTAS
        ref = profile.epsilon(d)
        assert ref <= g.epsilon(d) <= ref * (1 + 1e-9) + 1e-12
    # between the points read, a step upper bound: never below OpenDP's delta, close to it
    for e in np.linspace(0.0, profile.epsilon(1e-12), 97)[1:]:
        ref = profile.delta(float(e))
        assert ref <= g.delta(float(e)) <= max(2.0 * ref, ref + 0.02)
    # the trade-off curve implies the profile back (Dong, Roth & Su, Prop. 2.12)
    assert g.epsilon(3e-7) >= profile.epsilon(3e-7)


def test_approximate_profile_adds_its_delta(dp: Any, space: Any) -> None:
    gau = dp.m.make_gaussian(*space, scale=1.0)
    m = dp.c.make_zCDP_to_approxDP(dp.c.make_approximate(gau))
    profile, delta = m.map(1.0)
    g = from_opendp(m, 1.0)
    for d in [1e-5, 1e-7]:
        assert g.epsilon(d + delta) >= profile.epsilon(d)
    assert g.delta(1.0) >= profile.delta(1.0) + delta


def test_user_divergence_is_refused(dp: Any, space: Any) -> None:
    dp.enable_features("honest-but-curious")
    m = dp.m.make_user_measurement(*space, dp.user_divergence("MyDivergence"), lambda x: x, lambda d: d)
    with pytest.raises(ValueError, match=r"MyDivergence .* not supported by from_opendp"):
        from_opendp(m, 1.0)


def test_a_wrong_d_in_type_is_a_value_error(dp: Any, space: Any) -> None:
    with pytest.raises(ValueError, match="d_in = 'one'"):
        from_opendp(dp.m.make_laplace(*space, scale=1.0), "one")


def test_docstring_example(dp: Any) -> None:
    import doctest

    from accountant.extensions import opendp

    assert doctest.testmod(opendp).failed == 0
