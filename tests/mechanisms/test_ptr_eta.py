"""The slides' rule for the PTR median's eta: the formula, and the release probability it promises."""

from __future__ import annotations

import math
from typing import Any

import mpmath
import numpy as np
import pytest
from scipy import stats

from mechanisms import MedianEtaRule, PTRMedian, ptr_median_eta, ptr_test_constant


def test_constant_and_rule_closed_form() -> None:
    with mpmath.workdps(30):
        for n, eps, delta, tau, big_l in ((2000, 1.0, 1e-6, 0.1, 0.35), (50, 0.3, 1e-3, 0.5, 2.0)):
            c = 1 + (mpmath.log(2 / mpmath.mpf(delta)) + mpmath.log(1 / mpmath.mpf(tau))) / eps
            eta = 4 * c / (big_l * n) + 4 * mpmath.log(2 / mpmath.mpf(tau)) / (3 * big_l * n)
            got_c, got_eta = ptr_test_constant(eps, delta, tau), ptr_median_eta(n, eps, delta, tau, big_l)
            assert float(c) <= got_c <= float(c) * (1 + 1e-14)  # rounded up
            assert float(eta) <= got_eta <= float(eta) * (1 + 1e-14)
    rule = MedianEtaRule(0.35, tau=0.1)
    assert rule(2000, 1.0, 1e-6) == ptr_median_eta(2000, 1.0, 1e-6, 0.1, 0.35)


def test_ptr_median_takes_the_rule() -> None:
    rule = MedianEtaRule(0.35, tau=0.1)
    by_rule = PTRMedian(-10, 10, 2000, 1.0, 1e-6, rule)
    by_value = PTRMedian(-10, 10, 2000, 1.0, 1e-6, rule(2000, 1.0, 1e-6))
    assert by_rule.release.sensitivity == by_value.release.sensitivity
    assert by_rule.guarantee() == by_value.guarantee()


@pytest.mark.parametrize(("n", "eps", "delta", "tau", "threshold"), [
    (2000, 1.0, 1e-6, 0.1, None),
    (500, 1.0, 1e-6, 0.1, "slides"),
])
def test_rule_releases_with_probability_at_least_one_minus_tau(n: int, eps: float, delta: float, tau: float,
                                                                threshold: str | None) -> None:
    # Cond. M for N(0, 1) with r = 1/2: f >= L = phi(1/2) on [-1/2, 1/2]. Over 80 seeded datasets the
    # exact failure probability of the test (given the data) averages below tau with a 4-SE margin
    # (the slides' claim; the test fails if the rule were too small by a factor 4: see below)
    big_l = float(stats.norm.pdf(0.5))
    thr = None if threshold is None else 1 + math.log(2 / delta) / eps
    rng = np.random.default_rng(11)

    def failure(eta: float) -> tuple[float, float]:
        ptr = PTRMedian(-10, 10, n, eps, delta, eta, threshold=thr)
        fails = [1.0 - float(ptr.test.pass_probability(int(ptr.distance(rng.standard_normal(n)))))
                 for _ in range(80)]
        return float(np.mean(fails)), float(np.std(fails) / math.sqrt(len(fails)))

    eta = ptr_median_eta(n, eps, delta, tau, big_l)
    assert eta <= 0.5  # within Cond. M's interval
    mean, se = failure(eta)
    assert mean + 4 * se <= tau
    # the rule is not vacuous: a quarter of it fails often
    mean_q, se_q = failure(eta / 4)
    assert mean_q - 4 * se_q > 0.0


@pytest.mark.parametrize(("kw", "match"), [
    ({"eps": 0.0}, "eps"), ({"eps": math.nan}, "eps"), ({"delta": 0.0}, "delta"), ({"delta": 1.0}, "delta"),
    ({"tau": 0.0}, "tau"), ({"tau": 1.0}, "tau"), ({"density_lower_bound": 0.0}, "density_lower_bound"),
    ({"density_lower_bound": math.inf}, "density_lower_bound"), ({"n": 0}, "n"),
])
def test_bad_input(kw: dict[str, Any], match: str) -> None:
    args: dict[str, Any] = {"n": 100, "eps": 1.0, "delta": 1e-6, "tau": 0.1, "density_lower_bound": 0.3, **kw}
    with pytest.raises(ValueError, match=match):
        ptr_median_eta(**args)
    if "n" not in kw and "eps" not in kw and "delta" not in kw:
        with pytest.raises(ValueError, match=match):
            MedianEtaRule(args["density_lower_bound"], args["tau"])
