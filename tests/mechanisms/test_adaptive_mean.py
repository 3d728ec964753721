"""AdaptiveMean: the composed guarantee and its split, the stage-2 sensitivity against the hand formula,
privacy by audits of the sampler on a worst-case neighbouring pair (seeded; a variant clipping to the
non-private data range is refuted on the same kind of pair), accuracy against the non-private mean's
rate and against the staircase mean on the whole box, and bad input."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import sympy
from numpy.typing import ArrayLike, NDArray

import verify
from accountant import PureDP
from mechanisms import AdaptiveMean, Domain, Mean, Staircase
from mechanisms.estimators import occupied_interval

# ----------------------------------------------------------------------------- guarantee


def test_guarantee_is_the_composition_of_the_two_stages_within_eps() -> None:
    m = AdaptiveMean(-10.0, 10.0, 1.0, 1000)
    assert m.interval_eps + m.release_eps <= 1.0
    assert m.interval_eps == pytest.approx(0.4) and m.release_eps == pytest.approx(0.6)
    assert m.closed_form_guarantee() == PureDP(1.0)
    assert m.guarantee().epsilon(0.0) <= 1.0 + 1e-9  # the exact composition, its numerics rounded up
    assert m.histogram.guarantee().epsilon(0.0) <= m.interval_eps + 1e-12
    for counts in (np.zeros(20), np.r_[np.zeros(8), [80.0, 400.0, 400.0, 80.0], np.zeros(8)]):
        lo, hi = m.interval(counts)
        assert -10.0 <= lo < hi <= 10.0
        rel = m.release(lo, hi)
        assert rel.guarantee().epsilon(0.0) <= m.release_eps  # stage 2 never exceeds eps_2
    assert m.interval(np.zeros(20)) == (-10.0, 10.0)  # nothing occupied: the whole box


def test_stage_two_sensitivity_is_the_width_over_n_in_sympy() -> None:
    """The release's sensitivity is derived by ``queries.Mean`` (replace-one: (hi - lo)/n), exact."""
    lo, hi, n = sympy.symbols("lo hi n", positive=True)
    assert sympy.simplify(Mean(Domain(lo, hi, n, clip=True)).l1 - (hi - lo) / n) == 0
    rel = AdaptiveMean(-10.0, 10.0, 1.0, 1000).release(-4.0, 6.0)
    assert sympy.nsimplify(rel.sensitivity) == sympy.Rational(10, 1000)


def test_interval_rule_by_hand() -> None:
    """Bins of width 1 on [-10, 10], noise scale 2: occupied bins (count > 7) 8..11 ([-2, 2]), span
    4 bins, margin 0.25 -> pad ceil(0.5) = 1 bin each side: [-3, 3]; an isolated occupied bin at the
    top end keeps the top end (a point mass stays inside): span 12 bins, pad ceil(1.5) = 2: [-4, 10]."""
    h = np.r_[np.zeros(8), [10.0, 50.0, 50.0, 10.0], np.zeros(8)]
    assert occupied_interval(h, 2.0, -10.0, 10.0, 3.5, 0.25)[:2] == (-3.0, 3.0)
    h[-1] = 20.0
    assert occupied_interval(h, 2.0, -10.0, 10.0, 3.5, 0.25)[:2] == (-4.0, 10.0)


# ----------------------------------------------------------------------------- privacy


def _pair() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Ten records at 0.01 (one at 0), and the same with one record moved to the box's end: the
    largest move of the clipped mean, and of the histogram's counts."""
    x = np.r_[np.zeros(1), np.full(9, 0.01)]
    return x, np.r_[np.full(9, 0.01), 4.0]


def test_audit_finds_no_violation_on_a_worst_case_pair() -> None:
    x, y = _pair()
    m = AdaptiveMean(-4.0, 4.0, 1.0, 10, bins=4)
    r = verify.audit(m, [(x, y)], m.guarantee(), samples=2000, seed=0)
    assert not r.violation


@dataclass(frozen=True)
class NonPrivateInterval(AdaptiveMean):
    """Broken on purpose: clips to the data's own range [min, max] (the 0 and 1 quantiles, not
    private) and releases the clipped mean with the stage-2 staircase, declared with the same
    guarantee. The noise scale then reveals the data's range."""

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x = np.asarray(data, dtype=np.float64)
        rel = Staircase(Mean(Domain(float(x.min()), float(x.max()), self.n, clip=True)), self.release_eps)
        return np.asarray(rel.sample(x, rng, size=m), dtype=np.float64).reshape(m)


def test_audit_refutes_an_interval_from_non_private_quantiles() -> None:
    """On the same pair, x's range is 0.01 wide (noise scale ~0.002) and y's 4 (scale ~0.7): a release
    near x's mean is about 100 times likelier under x. The audit has the power to see it."""
    x, y = _pair()
    broken = NonPrivateInterval(-4.0, 4.0, 1.0, 10, bins=4)
    r = verify.audit(broken, [(x, y)], AdaptiveMean(-4.0, 4.0, 1.0, 10, bins=4).guarantee(),
                     samples=1000, seed=0)
    assert r.violation


# ----------------------------------------------------------------------------- accuracy


def test_error_is_at_the_non_private_rate_and_below_the_whole_box_staircase() -> None:
    """N(0, 1) data, n = 4000, declared box [-10, 10]. Around the sample mean, the releases' RMSE is at
    most 0.9 of the staircase mean's on the whole box (closed form sqrt(2 * 0.959) * 20/(n eps) =
    0.00692; the interval is mostly [-4, 4], noise 8/20 of the box's at eps_2 = 0.6, so about 0.67,
    plus the spread of the clipped mean over the intervals drawn: 0.80 at this seed) and at most half
    the non-private standard error 1/sqrt(n) = 0.0158 (0.35 at this seed: the private error is
    O(1/(n eps)), below the sampling rate n^(-1/2)); the releases' mean is within 4 standard errors
    of the sample mean (clipping at a symmetric interval leaves no first-order bias).
    400 releases, seed fixed."""
    n = 4000
    x = np.random.default_rng(11).normal(size=n)
    out = np.asarray(AdaptiveMean(-10.0, 10.0, 1.0, n).sample(x, np.random.default_rng(12), size=400))
    err = out - x.mean()
    rmse = math.sqrt(float(np.mean(err**2)))
    assert rmse <= 0.9 * math.sqrt(2 * 0.959) * 20 / n
    assert rmse <= 0.5 / math.sqrt(n)
    assert abs(err.mean()) <= 4 * err.std(ddof=1) / math.sqrt(err.size)


def test_a_point_mass_at_the_bound_stays_inside() -> None:
    """5% of n = 2000 records at 10 (the contaminated law of the benchmark): the atom's bin clears the
    threshold (100 records against 3.5 * 5 = 17.5) so the interval keeps 10 and the releases' mean is
    within 4 standard errors of the sample mean (no clipping bias)."""
    g = np.random.default_rng(13)
    x = np.clip(np.where(g.random(2000) < 0.05, 100.0, g.normal(size=2000)), -10.0, 10.0)
    m = AdaptiveMean(-10.0, 10.0, 1.0, 2000)
    out = np.asarray(m.sample(x, np.random.default_rng(14), size=400))
    err = out - x.mean()
    assert abs(err.mean()) <= 4 * err.std(ddof=1) / math.sqrt(err.size)


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"eps": 0.0}, "eps"),
    ({"eps": math.nan}, "eps"),
    ({"lower": 1.0, "upper": 1.0}, "lower must be < upper"),
    ({"n": 0}, "n"),
    ({"bins": 1}, "bins"),
    ({"interval_share": 1.0}, "interval_share"),
    ({"threshold": -1.0}, "threshold"),
    ({"margin": math.inf}, "margin"),
])
def test_bad_input_is_named(kwargs: dict[str, object], match: str) -> None:
    base: dict[str, object] = {"lower": -1.0, "upper": 1.0, "eps": 1.0, "n": 10}
    with pytest.raises((ValueError, TypeError), match=match):
        AdaptiveMean(**{**base, **kwargs})  # type: ignore[arg-type]


def test_data_of_the_wrong_size_is_refused() -> None:
    with pytest.raises(ValueError, match="fixes n = 10"):
        AdaptiveMean(-1.0, 1.0, 1.0, 10).sample(np.zeros(11), np.random.default_rng(0))
