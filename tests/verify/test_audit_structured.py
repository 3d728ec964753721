"""Structured outputs (None, NaN, sentinels, lists, tuples, dicts, mixes) and the two findings
(floating-point representation apart from the distribution of the outputs as real numbers).

Validity checks follow tests/test_audit_validity.py: R audits at confidence 0.9 of a mechanism
audited exactly at its true privacy parameter; a one-sided exact binomial test of H0: rate <= 0.1
fails only if P(Binomial(R, 0.1) >= V) < 0.001 (fixed seeds, so deterministic).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import verify
from accountant import PureDP
from verify import cli, examples
from verify.audit.features import Layout, skeleton

CONF = 0.9
CHECK_LEVEL = 1e-3


def _excess_pvalue(violations: int, reps: int) -> float:
    return float(stats.binom.sf(violations - 1, reps, 1 - CONF))


class ForeignRefusal:
    """A third party's PTR-style bottom (not ``mechanisms.Refusal``): a typed sentinel, hashable."""

    def __repr__(self) -> str:
        return "Refusal()"


REFUSE = ForeignRefusal()


def test_none_against_int_is_refuted_not_a_crash() -> None:
    r = verify.audit(lambda x, rng: 0 if x == 0 else None, [(0, 1)], PureDP(1.0), samples=1000, seed=0)
    assert r.violation and r.epsilon_lower > 4


@pytest.mark.parametrize("fn", [
    lambda x, rng: [x + rng.laplace(0, .1)] if rng.random() < .5 else [],
    lambda x, rng: {"v": x + rng.laplace(0, .1)},
    lambda x, rng: (x + rng.laplace(0, .1), "label"),
    lambda x, rng: REFUSE if rng.random() < .3 else {"a": [x + rng.laplace(0, .1), None]},
], ids=["variable list", "dict", "tuple with string", "sentinel or nested"])
def test_numbers_inside_structures_are_seen(fn: Any) -> None:
    # each is 10-DP (Laplace scale 0.1, sensitivity 1) claimed 1-DP: refuted as real numbers
    r = verify.audit(fn, [(0.0, 1.0)], PureDP(1.0), samples=4000, seed=0, floating_point=False)
    assert r.violation and r.distributional.violation and r.representation is None
    assert 1.0 < r.epsilon_lower <= 10.0


def test_none_nan_and_sentinels_are_categories_of_their_own() -> None:
    for a, b in [(None, math.nan), (math.nan, 0.0), (None, 0), (REFUSE, None), ("no", None),
                 ([None], [math.nan]), ({"k": None}, {"k": 0.0}), ([], [0.0])]:
        r = verify.audit(lambda x, rng, a=a, b=b: a if x == 0 else b, [(0, 1)], PureDP(1.0), samples=400,
                         seed=0)
        assert r.violation, (a, b)
    # the same category on both inputs: nothing to see
    r = verify.audit(lambda x, rng: [None, REFUSE, "s"], [(0, 1)], PureDP(1.0), samples=400, seed=0)
    assert not r.violation and r.epsilon_lower == 0.0


def test_featurised_columns_and_lengths() -> None:
    nums: list[float] = []
    s = skeleton({"b": [1, None, math.nan], "a": 2.5, "c": "x"}, nums)
    assert nums == [1.0, 2.5]  # dict keys in their order
    lay, _, _ = Layout.fit([[[1.0], [], [2.0, 3.0]]], [[{"k": 1}, None, "s"]], 3)
    assert not lay.numeric and lay.column_names() == ["y[0]", "y[1]", "y['k']", "len(y)"]
    b = lay.batch([[[], [5.0, 6.0]]], 2)
    assert b.values is not None and b.values.shape == (2, 4)
    assert np.isnan(b.values[0, :3]).all() and b.values[0, 3] == 0 and b.values[1].tolist()[:2] == [5.0, 6.0]
    assert s != skeleton({"b": [1, None, 0.0], "a": 2.5, "c": "x"}, [])  # NaN is not a number slot


json_like = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=True) | st.text(max_size=3)
    | st.just(REFUSE),
    lambda kids: st.lists(kids, max_size=3) | st.tuples(kids, kids)
    | st.dictionaries(st.sampled_from(["a", "b", 1]), kids, max_size=3),
    max_leaves=8)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.lists(json_like, min_size=1, max_size=4), st.lists(json_like, min_size=1, max_size=4))
def test_any_mix_of_outputs_is_audited(out0: list[Any], out1: list[Any]) -> None:
    def fn(x: int, rng: np.random.Generator) -> Any:
        outs = out0 if x == 0 else out1
        return outs[int(rng.integers(len(outs)))]

    r = verify.audit(fn, [(0, 1)], PureDP(1.0), samples=100, seed=0)
    assert r.n_tests >= 1 and math.isfinite(r.p_value)


def test_two_findings_apart_in_report_json_and_cli(capsys: pytest.CaptureFixture[str]) -> None:
    # a float-naive Laplace with the right scale: the algorithm is 1-DP, its doubles are not
    r = verify.audit(examples.TextbookLaplace(1.0), [(0.0, 1.0)], PureDP(1.0), samples=20_000, seed=0)
    assert r.violation and r.representation is not None and r.representation.violation
    assert not r.distributional.violation and r.distributional.epsilon_lower <= 1.0
    assert r.representation.epsilon_lower > 3 and r.epsilon_lower == r.representation.epsilon_lower
    w = r.representation.witness
    # the witness in words: which doubles y = m 2^e the region holds (at 20k draws two regions tie,
    # the Sterbenz one "not multiples of 2^-53" and e in [-53, -40]; either is the event)
    assert w is not None and "IEEE-754 granularity: outputs y = m 2^e (m odd) with e in" in w.region
    text = str(r)
    assert "distributional finding" in text and "representation finding" in text
    d = json.loads(r.to_json())
    assert d["representation"]["violation"] is True and d["distributional"]["violation"] is False
    # the wrong sensitivity is a finding of the algorithm, with or without floating point
    r2 = verify.audit(examples.NoisySum(1.0, assumed_sensitivity=1.0), [([-1.0], [1.0])], PureDP(1.0),
                      samples=20_000, seed=0)
    assert r2.distributional.violation and r2.representation is not None and not r2.representation.violation
    code = cli.main(["audit", "textbook-float-laplace-eps-1", "--samples", "20000", "--no-floating-point"])
    out = capsys.readouterr().out
    assert code == 0 and "not tested (floating_point=False)" in out
    code = cli.main(["audit", "textbook-float-laplace-eps-1", "--samples", "20000", "--json"])
    assert code == 1 and json.loads(capsys.readouterr().out)["representation"]["violation"] is True


def test_no_floating_point_test_reads_representation() -> None:
    r = verify.audit(examples.TextbookLaplace(1.0), [(0.0, 1.0)], PureDP(1.0), samples=20_000, seed=1,
                     floating_point=False)
    assert r.representation is None and all(p.family != "representation" for p in r.points)
    assert not any("IEEE" in p.region for p in r.points)
    with pytest.raises(TypeError, match="floating_point"):
        verify.audit(examples.TextbookLaplace(1.0), [(0.0, 1.0)], PureDP(1.0), samples=100,
                     floating_point="no")  # type: ignore[arg-type]


def test_false_violation_rate_float_naive_laplace_without_floating_point() -> None:
    # the float-naive sampler IS the Laplace mechanism as real numbers (eps = 1 exactly):
    # with floating_point=False the audit may refute 1-DP at most 10% of the time
    reps, viol, above = 200, 0, 0
    for s in range(reps):
        r = verify.audit(examples.TextbookLaplace(1.0), [(0.0, 1.0)], PureDP(1.0), samples=2000,
                         confidence=CONF, seed=20_000 + s, floating_point=False)
        viol += r.violation
        above += r.epsilon_lower > 1.0
    assert _excess_pvalue(viol, reps) >= CHECK_LEVEL, f"{viol}/{reps} false violations"
    assert _excess_pvalue(above, reps) >= CHECK_LEVEL


class StructuredRelease:
    """Tight eps-DP with structured outputs: randomized response (eps/2) on whether to answer;
    no answer is None, an answer is a dict holding the lattice Laplace (eps/2) release of x."""

    def __init__(self, eps: float) -> None:
        self.rr = examples.RandomizedResponse(eps / 2)
        self.lap = examples.ScalarLaplace(eps / 2)

    def __call__(self, x: int, rng: np.random.Generator, size: int) -> list[Any]:
        answer = np.asarray(self.rr.sample(x, rng, size)).ravel() == 1
        vals = np.asarray(self.lap.sample(float(x), rng, size))
        return [{"v": float(v), "n": [1, 2]} if a else None for a, v in zip(answer, vals, strict=True)]


def test_false_violation_rate_structured_outputs() -> None:
    mech = StructuredRelease(1.0)
    reps, viol, above = 150, 0, 0
    for s in range(reps):
        r = verify.audit(mech, [(0, 1)], PureDP(1.0), samples=1000, confidence=CONF, seed=30_000 + s,
                         vectorised=True)
        viol += r.violation
        above += r.epsilon_lower > 1.0
    assert _excess_pvalue(viol, reps) >= CHECK_LEVEL, f"{viol}/{reps} false violations"
    assert _excess_pvalue(above, reps) >= CHECK_LEVEL
    # and its power: claimed at half its loss, refuted
    assert verify.audit(mech, [(0, 1)], PureDP(0.5), samples=40_000, seed=0, vectorised=True).violation
