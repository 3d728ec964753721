"""Behaviour of verify.audit: interface, report, inputs, determinism, output kinds."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import verify
from accountant import GDP, ZCDP, ApproxDP, PureDP
from verify import examples
from verify.audit.scores import lowest_bit_exponent
from verify.audit.stats import cp_lower, cp_upper, eps_lower_bound, mu_lower_bound

LAPLACE = examples.ScalarLaplace(1.0)  # calibrated once (a calibration per draw is slow)


def laplace_fn(data: float, rng: np.random.Generator) -> float:
    """A plain (non-vectorised) callable on the lattice 2^-20 Z, eps = 1."""
    return float(LAPLACE.sample(data, rng))


def test_acceptance_interface_plain_callable() -> None:
    r = verify.audit(laplace_fn, [(0.0, 1.0)], PureDP(1.0), samples=4000, confidence=0.95, seed=0)
    assert isinstance(r, verify.AuditReport)
    assert r.violation is False
    assert 0.0 <= r.epsilon_lower <= 1.0
    assert r.samples_per_input == 4000 and r.samples_total == 8000
    assert r.witness is not None and r.points


def test_violation_report_contents() -> None:
    r = verify.audit(LAPLACE, [(0.0, 1.0)], PureDP(0.3), samples=20_000, seed=1)
    assert r.violation and r.epsilon_lower > 0.3
    w = r.witness
    assert w is not None and w.claim_margin > 0 and w.p_value <= 0.05
    assert w.alpha <= w.alpha_upper and w.beta <= w.beta_upper
    assert "VIOLATION" in str(r)
    d = json.loads(r.to_json())
    assert d["violation"] is True and d["claim"] == "0.3-DP"
    assert math.isclose(d["epsilon_lower"], r.epsilon_lower)


def test_same_seed_same_report_and_workers_do_not_change_it() -> None:
    mech = examples.GeometricMechanism(1.0)
    a = verify.audit(mech, [(0, 1)], PureDP(1.0), samples=3000, seed=7)
    b = verify.audit(mech, [(0, 1)], PureDP(1.0), samples=3000, seed=7)
    c = verify.audit(mech, [(0, 1)], PureDP(1.0), samples=3000, seed=7, workers=2)
    assert a.epsilon_lower == b.epsilon_lower == c.epsilon_lower
    assert a.points == c.points


def test_vectorised_callable_and_mechanism_protocol_agree_in_kind() -> None:
    mech = examples.RandomizedResponse(1.0)

    def fn(x: int, rng: np.random.Generator, size: int) -> np.ndarray:
        out: np.ndarray = mech.sample(x, rng, size)
        return out

    r1 = verify.audit(fn, [(0, 1)], PureDP(1.0), samples=20_000, seed=0, vectorised=True)
    r2 = verify.audit(mech, [(0, 1)], PureDP(1.0), samples=20_000, seed=0, use_privacy_loss=False)
    assert r1.epsilon_lower == r2.epsilon_lower
    assert 0.8 < r1.epsilon_lower <= 1.0


def test_tuple_and_list_outputs_are_counted_exactly() -> None:
    def rr_pair(x: int, rng: np.random.Generator) -> tuple[int, str]:
        keep = rng.random() < math.e / (1 + math.e)
        return (x if keep else 1 - x, "tag")

    r = verify.audit(rr_pair, [(0, 1)], PureDP(0.5), samples=6000, seed=0)
    # the tuple is featurised: its number is a coordinate, its string a category
    assert r.violation and r.witness is not None and r.witness.region.startswith(("y[0]", "exact"))

    def svt_list(x: list[float], rng: np.random.Generator) -> list[bool]:
        return [bool(v + rng.laplace(0, 1) > 0.5) for v in x]

    r = verify.audit(svt_list, [([0.0, 0.0], [1.0, 1.0])], PureDP(0.5), samples=4000, seed=0)
    assert r.violation  # two Laplace(1) answers of sensitivity 1: eps = 2


def test_fp_textbook_sampler_flagged_exact_sampler_not() -> None:
    r = verify.audit(examples.textbook_laplace, [(0.0, 1.0)], PureDP(1.0), samples=20_000, seed=0)
    assert r.violation and r.epsilon_lower > 3
    assert r.witness is not None and "IEEE-754" in r.witness.region
    r = verify.audit(examples.ScalarLaplace(1.0), [(0.0, 1.0)], PureDP(1.0), samples=20_000, seed=0)
    assert not r.violation


def test_lowest_bit_exponent() -> None:
    y = np.array([1.0, 0.5, 3.0, 0.75, 2.0**-60, 0.0, np.inf, 1.0 + 2.0**-52])
    assert lowest_bit_exponent(y).tolist() == [0, -1, 0, -2, -60, -2000, 2000, -52]


def test_gdp_and_generic_claims() -> None:
    g = examples.GaussianMechanism(1.0)
    r = verify.audit(g, [(0.0, 1.0)], GDP(0.5), samples=20_000, seed=0)
    # three tests (generic, declared likelihood ratio, IEEE-754) for two objectives (mu, eps)
    assert r.violation and r.mu_lower > 0.5 and r.n_tests == 6 == len(r.points)
    assert {p.family for p in r.points} == {"distributional", "declared", "representation"}
    r = verify.audit(g, [(0.0, 1.0)], GDP(0.5), samples=20_000, seed=0, floating_point=False,
                     use_privacy_loss=False)
    assert r.violation and r.n_tests == 2 and r.representation is None
    r = verify.audit(g, [(0.0, 1.0)], ZCDP(0.05), samples=20_000, seed=0)
    assert r.violation  # 1-GDP is exactly 0.5-zCDP (and no better)
    r = verify.audit(g, [(0.0, 1.0)], ApproxDP(1.0, 1e-3), samples=20_000, seed=0)
    assert r.delta == 1e-3


def test_screening_several_pairs_keeps_budget() -> None:
    mech = examples.NoisySum(1.0, assumed_sensitivity=1.0)
    pairs = [([0.0], [0.1]), ([0.0], [0.2]), ([-1.0], [1.0]), ([0.0], [0.0]), ([0.5], [0.6])]
    r = verify.audit(mech, pairs, PureDP(1.0), samples=20_000, seed=0, max_pairs=2, floating_point=False)
    # screening keeps max_pairs = 2 pairs, and evaluates only the one it shows can win (halving the
    # level for the runner-up would lower the bound of the winner): one test, at the full level
    assert r.n_tests == 1 == len(r.points) and r.candidate_pairs == 5
    assert r.violation and r.witness is not None and r.witness.pair == 2


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"samples": 2}, "samples"),
    ({"samples": 100, "confidence": 1.5}, "confidence"),
    ({"samples": 100, "selection_fraction": 1.0}, "selection_fraction"),
    ({"samples": 100, "delta": 1.0}, "delta"),
    ({"samples": 100, "seed": -1}, "seed"),
])
def test_bad_parameters_named(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        verify.audit(laplace_fn, [(0.0, 1.0)], PureDP(1.0), **kwargs)  # type: ignore[arg-type]


def test_bad_inputs() -> None:
    with pytest.raises(TypeError, match="claim"):
        verify.audit(laplace_fn, [(0.0, 1.0)], 1.0, samples=100)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="mechanism"):
        verify.audit(3, [(0.0, 1.0)], PureDP(1.0), samples=100)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="neighbours"):
        verify.audit(laplace_fn, [], PureDP(1.0), samples=100)
    with pytest.raises(TypeError, match="neighbours"):
        verify.audit(laplace_fn, (0.0, 1.0), PureDP(1.0), samples=100)  # type: ignore[arg-type]

    def ragged(x: float, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.zeros((size, 2)) if x == 0 else np.zeros((size, 3))

    # outputs of different shapes are comparable (their lengths differ): refuted, not an error
    assert verify.audit(ragged, [(0.0, 1.0)], PureDP(1.0), samples=100, vectorised=True).violation

    class Opaque:
        __hash__ = None  # type: ignore[assignment]

    with pytest.raises(ValueError, match=r"mechanism.*cannot be compared.*Opaque"):
        verify.audit(lambda x, rng: Opaque(), [(0.0, 1.0)], PureDP(1.0), samples=100)

    def short(x: float, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.zeros(size - 1)

    with pytest.raises(ValueError, match="mechanism"):
        verify.audit(short, [(0.0, 1.0)], PureDP(1.0), samples=100, vectorised=True)


def test_bound_helpers() -> None:
    assert cp_upper(10, 10, 0.05)[()] == 1.0 and cp_lower(0, 10, 0.05)[()] == 0.0
    # k = 0: upper bound 1 - gamma^(1/n)
    assert math.isclose(float(cp_upper(0, 100, 0.05)), 1 - 0.05 ** (1 / 100), rel_tol=1e-9)
    assert math.isclose(float(eps_lower_bound(0.1, 1 - math.e * 0.1, 0.0)), 1.0, rel_tol=1e-12)
    assert float(eps_lower_bound(0.5, 0.5, 0.0)) == 0.0
    assert math.isclose(float(mu_lower_bound(0.3085375387259869, 0.3085375387259869)), 1.0, rel_tol=1e-9)


def test_fdp_claim_and_plot() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from accountant import FDP
    from accountant.notions.closed_forms import GaussianTradeoff

    r = verify.audit(examples.GaussianMechanism(1.0), [(0.0, 1.0)], FDP(GaussianTradeoff(0.6)),
                     samples=20_000, seed=0, floating_point=False)
    assert r.violation and r.n_tests == 4 and r.witness is not None and r.witness.claim_margin > 0
    ax = r.plot()
    assert ax.get_xlabel() == "type I error alpha"


def test_json_handles_infinite_bounds() -> None:
    r = verify.audit(examples.textbook_laplace, [(0.0, 1.0)], PureDP(1.0), samples=2000, seed=0,
                     delta=0.0)
    d = json.loads(r.to_json())
    assert isinstance(d["points"], list) and d["points"][0]["n"] == r.points[0].n


@pytest.mark.parametrize("p", [0.001, 0.05, 0.3, 0.5, 0.77, 0.999])
def test_clopper_pearson_exact_coverage(p: float) -> None:
    # exact coverage, summing the binomial pmf: P(upper >= p) >= 1 - gamma and P(lower <= p) >= 1 - gamma
    from scipy import stats

    n, gamma = 60, 0.05
    k = np.arange(n + 1)
    pmf = stats.binom.pmf(k, n, p)
    assert pmf[cp_upper(k, n, gamma) >= p].sum() >= 1 - gamma - 1e-12
    assert pmf[cp_lower(k, n, gamma) <= p].sum() >= 1 - gamma - 1e-12


def test_nan_outputs_are_one_value_and_object_arrays_are_counted() -> None:
    def maybe(x: float, rng: np.random.Generator, size: int) -> np.ndarray:
        answered = rng.random(size) < (0.8 if x else 0.2)
        return np.where(answered, 1.0, np.nan)

    r = verify.audit(maybe, [(0.0, 1.0)], PureDP(1.0), samples=4000, seed=0, vectorised=True)
    assert r.violation and 1.0 < r.epsilon_lower <= math.log(4)  # true eps = log 4

    def objs(x: int, rng: np.random.Generator, size: int) -> np.ndarray:
        out = np.empty(size, dtype=object)
        out[:] = ["a" if u < (0.8 if x else 0.2) else "b" for u in rng.random(size)]
        return out

    r = verify.audit(objs, [(0, 1)], PureDP(1.0), samples=4000, seed=0, vectorised=True)
    assert r.violation and r.epsilon_lower <= math.log(4)


class DeclaresTheIntendedLoss:
    """Samples a 4-DP Laplace but declares no privacy loss at all (a wrong declaration: the
    declared-ratio test has no power, so only the generic tests can see the leak)."""

    def sample(self, data: float, rng: np.random.Generator, size: int) -> np.ndarray:
        return np.asarray(examples.ScalarLaplace(4.0).sample(data, rng, size))

    def privacy_loss(self, y: np.ndarray, data: float, data2: float) -> np.ndarray:
        return np.zeros(np.asarray(y).shape[0])


def test_declared_privacy_loss_adds_a_test_and_removes_none() -> None:
    mech = DeclaresTheIntendedLoss()
    r = verify.audit(mech, [(0.0, 1.0)], PureDP(1.0), samples=20_000, seed=0, floating_point=False)
    families = {p.family for p in r.points}
    assert families == {"distributional", "declared"} and r.n_tests == 2
    # the declared ratio is the wrong one; the generic tests see the 4-DP outputs
    assert r.violation and r.witness is not None and r.witness.family == "distributional"
    r = verify.audit(mech, [(0.0, 1.0)], PureDP(1.0), samples=20_000, seed=0, floating_point=False,
                     use_privacy_loss=False)
    assert r.n_tests == 1 and r.violation


def test_a_mechanism_without_a_closed_form_loss_is_audited_by_the_generic_tests() -> None:
    """The catalogue's AboveThreshold inherits the base ``privacy_loss`` stub (NotImplementedError):
    the audit reads it as no declaration instead of crashing (fails with probability <= 0.05)."""
    from mechanisms import AboveThreshold, CustomQuery, Domain

    q = CustomQuery(Domain(-1, 1), lambda x: np.array([0.0, 1.0, 2.0]) + x[0], 3, linf=1.0)
    r = verify.audit(AboveThreshold(q, 1.0, 1.0), [([0.0], [1.0])], PureDP(1.0), samples=20_000, seed=0)
    assert not r.violation and 0.0 < r.epsilon_lower <= 1.0
