"""verify.one_run_audit: the one-run tests' validity (the rate of bounds above the truth), their
power, the certified numerics and the input checks.

Validity is checked two ways. Exactly, on the extremal mechanism: randomized response with
probability p = e^eps0 / (1 + e^eps0) of reporting the coin, guessing every one of r canaries from
its report, gives W ~ Binomial(r, p) correct guesses; the probability that a test's bound exceeds
eps0 is then a finite sum over W, computed here with scipy's pmf and compared with the test's level
(plus 1e-9 for the float sum). And by seeded simulation, for whole audits of mechanisms that meet
their claim: N runs, the count of runs whose bound exceeds the truth must stay below the 0.999
quantile of Binomial(N, 1 - confidence) (so a valid audit fails this check with probability <= 1e-3).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import verify
from accountant import GDP, PureDP
from verify.training import fdp, steinke
from verify.training.one_run import default_guesses


def logistic(eps: float) -> float:
    return 1.0 / (1.0 + math.exp(-eps))


@pytest.mark.parametrize(("eps0", "r", "delta"), [(0.5, 60, 0.0), (1.0, 100, 0.0), (2.0, 80, 0.0),
                                                  (1.0, 100, 1e-3)])
def test_steinke_rate_on_the_extremal_mechanism_is_at_most_its_level(eps0: float, r: int,
                                                                    delta: float) -> None:
    gamma = Fraction(1, 20)
    pmf = stats.binom.pmf(np.arange(r + 1), r, logistic(eps0))
    above = [steinke.epsilon_lower(r, v, r, delta, gamma) > eps0 for v in range(r + 1)]
    rate = float(pmf[np.array(above)].sum())
    assert rate <= 0.05 + 1e-9
    # and the test is not vacuous: it does reject eps0 for the top few counts
    assert any(above)


@pytest.mark.parametrize(("eps0", "m"), [(1.0, 60), (2.0, 40)])
def test_fdp_epsilon_rate_on_the_extremal_mechanism_is_at_most_its_level(eps0: float, m: int) -> None:
    tau = 0.05
    pmf = stats.binom.pmf(np.arange(m + 1), m, logistic(eps0))
    above = np.array([fdp.epsilon_lower(m, c, m, 0.0, tau) > eps0 for c in range(m + 1)])
    assert float(pmf[above].sum()) <= tau + 1e-9
    assert above.any()


def test_gdp_audit_false_refutation_rate_by_simulation() -> None:
    """mu-GDP per canary exactly (score = coin * mu + N(0, 1)), one pre-registered guess count, 200
    seeded runs: the runs with mu_lower > mu, or with the true claim GDP(mu) refuted, stay below the
    0.999 quantile of Binomial(200, 0.05) (= 21)."""
    mu, m, runs = 2.0, 100, 200
    claim = GDP(mu)
    bad_mu = bad_claim = 0
    for seed in range(runs):
        rng = np.random.default_rng(seed)
        coins = rng.integers(0, 2, m).astype(bool)
        scores = coins * mu + rng.standard_normal(m)
        k = 20
        ranked = coins[np.argsort(-scores, kind="stable")]
        c = int(ranked[:k].sum())
        bad_mu += bool(fdp.mu_screen(k, c, m, 0.05)[0] > mu)
        bad_claim += bool(fdp.claim_rejected(k, c, m, 0.05, claim.tradeoff)[0])
    tol = stats.binom.isf(1e-3, runs, 0.05)
    assert bad_mu <= tol
    assert bad_claim <= tol


def test_whole_audit_never_exceeds_the_truth_in_seeded_runs() -> None:
    """Randomized response at eps0 = 2 (a pure-DP mechanism), the default grid, 10 runs of m = 200:
    every bound stays below eps0 (the audit's error rate is <= 0.05 by construction; seeded)."""
    eps0, m = 2.0, 200
    p = logistic(eps0)
    worst = 0.0
    for seed in range(10):
        rng = np.random.default_rng(1000 + seed)
        coins = rng.integers(0, 2, m).astype(bool)
        report = rng.random(m) < p
        scores = np.where(report, coins, ~coins).astype(float) + 1e-3 * rng.standard_normal(m)
        worst = max(worst, verify.one_run_audit(scores, coins, confidence=0.95).epsilon_lower)
    assert 0.0 < worst <= eps0


def test_power_on_a_non_private_mechanism() -> None:
    """Scores that reveal the coins: 1,000 canaries give epsilon >= 4 and mu >= 1.3, and refute
    1-DP and GDP(1)."""
    rng = np.random.default_rng(7)
    coins = rng.integers(0, 2, 1000).astype(bool)
    r1 = verify.one_run_audit(coins.astype(float), coins, claim=PureDP(1.0))
    assert r1.epsilon_lower >= 4.0
    assert r1.mu_lower >= 1.3
    assert r1.claim_refuted
    assert verify.one_run_audit(coins.astype(float), coins, claim=GDP(1.0)).claim_refuted


def test_pure_bound_matches_its_closed_form_when_every_guess_is_right() -> None:
    """All r guesses right, delta = 0: the Steinke test rejects eps iff p^r <= gamma, so the bound is
    logit(gamma^(1/r)) (from below, within the dyadic grid of 2^-32 on p)."""
    r, gamma = 200, Fraction(1, 100)
    expected = math.log(0.01 ** (1 / r) / (1 - 0.01 ** (1 / r)))
    got = steinke.epsilon_lower(r, r, r, 0.0, gamma)
    assert got <= expected
    assert got >= expected - 1e-6


def test_certification_rejects_what_it_reports_and_not_above() -> None:
    r, v, m, gamma = 300, 200, 600, Fraction(1, 40)
    eps = steinke.epsilon_lower(r, v, m, 1e-4, gamma)
    assert eps > 0
    assert steinke.pvalue(r, v, m, eps, 1e-4) <= float(gamma) * (1 + 1e-9)
    assert steinke.pvalue(r, v, m, eps * 1.01, 1e-4) > float(gamma)


def test_report_fields_and_reproducibility() -> None:
    rng = np.random.default_rng(3)
    coins = rng.integers(0, 2, 500).astype(bool)
    scores = coins * 1.5 + rng.standard_normal(500)
    a = verify.one_run_audit(scores, coins, delta=1e-5, confidence=0.9)
    b = verify.one_run_audit(scores, coins, delta=1e-5, confidence=0.9)
    assert a.epsilon_lower == b.epsilon_lower
    assert a.mu_lower == b.mu_lower
    assert a.m == 500
    assert a.n_tests == 3 * len(default_guesses(500))
    assert a.level == pytest.approx(0.1 / a.n_tests)
    assert a.witness is not None
    assert a.correct <= a.guesses
    assert a.method in ("steinke", "fdp")
    assert "epsilon >=" in str(a)
    assert a.to_dict()["epsilon_lower"] == a.epsilon_lower
    one = verify.one_run_audit(scores, coins, delta=1e-5, confidence=0.9, guesses=[(100, 100)])
    assert one.n_tests == 3


def test_default_guesses_grid() -> None:
    g = default_guesses(1000)
    assert (500, 500) in g
    assert (500, 0) in g
    assert all(1 <= a + b <= 1000 for a, b in g)
    assert default_guesses(2) == ((1, 1),)


GOOD = np.array([0.1, 0.9, 0.3, 0.7])
COINS = np.array([False, True, False, True])


@pytest.mark.parametrize(("kwargs", "exc", "name"), [
    ({"scores": [0.5], "included": [True]}, ValueError, "m >= 2"),
    ({"scores": [], "included": np.array([], dtype=bool)}, ValueError, "m >= 2"),
    ({"scores": [0.1, float("nan"), 0.2, 0.3]}, ValueError, "scores must be finite"),
    ({"scores": [0.1, float("inf"), 0.2, 0.3]}, ValueError, "scores must be finite"),
    ({"scores": [0.1, 0.2, 0.3]}, ValueError, "same length"),
    ({"included": [0, 1, 0, 1]}, TypeError, "included must be a boolean"),
    ({"scores": ["a", "b", "c", "d"]}, TypeError, "scores must be"),
    ({"confidence": 1.0}, ValueError, "confidence"),
    ({"confidence": 0.0}, ValueError, "confidence"),
    ({"confidence": float("nan")}, ValueError, "confidence"),
    ({"delta": 1.0}, ValueError, "delta"),
    ({"delta": -1e-9}, ValueError, "delta"),
    ({"claim": 1.0}, TypeError, "claim"),
    ({"guesses": [(3, 3)]}, ValueError, "guesses"),
    ({"guesses": [(0, 0)]}, ValueError, "guesses"),
    ({"guesses": [3]}, TypeError, "guesses"),
    ({"guesses": []}, ValueError, "guesses"),
])
def test_bad_inputs_name_the_parameter(kwargs: dict[str, object], exc: type[Exception], name: str) -> None:
    args: dict[str, object] = {"scores": GOOD, "included": COINS, **kwargs}
    with pytest.raises(exc, match=name):
        verify.one_run_audit(**args)  # type: ignore[arg-type]


def test_all_coins_equal_is_noted_and_bounds_nothing() -> None:
    r = verify.one_run_audit(np.arange(10.0), np.ones(10, dtype=bool))
    assert r.epsilon_lower == 0.0
    assert r.notes
