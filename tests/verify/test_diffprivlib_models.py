"""diffprivlib's LogisticRegression audited over many runs (``verify.audit``) on the pair of
``benchmarks.one_run.logistic_pair``: D and D plus a misclassified canary, the output the fitted
model's decision value at the canary. Skipped where diffprivlib does not import; seeded, so each
verdict is fixed by its seed (and each holds at confidence 0.95 whatever the seed)."""

from __future__ import annotations

import pytest

from accountant import PureDP
from benchmarks.one_run import diffprivlib_logistic, logistic_pair
from verify import audit

pytest.importorskip("diffprivlib.models",
                    reason="diffprivlib is not installed (pip install dpcert[thirdparty])")

SAMPLES = 60


def test_logistic_regression_at_its_declared_epsilon_is_not_refuted() -> None:
    rep = audit(diffprivlib_logistic(10.0), [logistic_pair()], PureDP(10.0), samples=SAMPLES, seed=0,
                floating_point=False)
    assert not rep.violation
    assert rep.epsilon_lower <= 10.0


def test_logistic_regression_run_at_eps_100_but_claimed_1_is_refuted() -> None:
    rep = audit(diffprivlib_logistic(100.0), [logistic_pair()], PureDP(1.0), samples=SAMPLES, seed=0,
                floating_point=False)
    assert rep.violation
    assert rep.epsilon_lower > 1.0
