"""diffprivlib's LogisticRegression, LinearRegression, GaussianNB and PCA audited over many runs
(``verify.audit``) on the pairs of ``benchmarks.one_run.canary_pair``: D and D plus a canary the
model fitted on D gets wrong, the output the fitted model at the canary. Skipped where diffprivlib
does not import; seeded, so each verdict is fixed by its seed (and each holds at confidence 0.95
whatever the seed). A wrapper that fits at eps = 100 but claims eps = 1 must be refuted; the
declared eps must not be."""

from __future__ import annotations

import pytest

from accountant import PureDP
from benchmarks.one_run import canary_pair, diffprivlib_model
from verify import audit
from verify.audit import AuditReport

pytest.importorskip("diffprivlib.models",
                    reason="diffprivlib is not installed (pip install dpcert[thirdparty])")

SAMPLES = 60


def _audit(name: str, run_at: float, claimed: float) -> AuditReport:
    return audit(diffprivlib_model(name, run_at), [canary_pair(name)], PureDP(claimed), samples=SAMPLES,
                 seed=0, floating_point=False)


def test_logistic_regression_at_its_declared_epsilon_is_not_refuted() -> None:
    rep = _audit("logistic", 10.0, 10.0)
    assert not rep.violation
    assert rep.epsilon_lower <= 10.0


def test_logistic_regression_run_at_eps_100_but_claimed_1_is_refuted() -> None:
    rep = _audit("logistic", 100.0, 1.0)
    assert rep.violation
    assert rep.epsilon_lower > 1.0


def test_linear_regression_declared_is_kept_and_misdeclared_refuted() -> None:
    assert not _audit("linear", 10.0, 10.0).violation
    assert _audit("linear", 100.0, 1.0).violation


@pytest.mark.parametrize("name", ["gaussian_nb", "pca"])
def test_gaussian_nb_and_pca_declared_kept_and_misdeclared_refuted(name: str) -> None:
    """GaussianNB (the canary moves the class-0 mean from 0 to 1/3) and PCA (it turns the top
    component from the second axis to the first), as in benchmark section (h)."""
    declared = _audit(name, 10.0, 10.0)
    assert not declared.violation
    assert declared.epsilon_lower <= 10.0
    assert _audit(name, 100.0, 1.0).violation
