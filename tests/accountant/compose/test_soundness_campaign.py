"""A seeded subset of the soundness campaign (issue 8; ``benchmarks/soundness.py``).

Every family of the campaign runs a few dozen random workloads against its independent reference
(mpmath closed forms, exact enumeration, quadrature; ``tests/support/references.py``) through the
campaign's own checker, and must show zero under-reports, zero lower bounds above the truth and
zero crashes. The references themselves are checked against second, independent computations.
"""

from __future__ import annotations

import math

import mpmath
import pytest
from mpmath import mpf

from benchmarks import soundness as S
from tests.support import references as R
from tests.support.rdp_reference import SubsampledGaussianRdpRef

SEED = 20261123

#: workloads per family in the test suite (the full campaign runs ~10,000)
COUNTS = {
    "gdp": 70,
    "approxdp": 70,
    "pmf": 22,
    "rr": 22,
    "laplace": 18,
    "poisson": 24,
    "wor": 26,
    "mix": 12,
    "peers": 12,
    "logistic": 16,
    "rdpfrac": 3,  # ~10 s each: 80-digit quadratures
    "tolmono": 4,  # one composition at three tols at or below the default: ~1 s each, ~6 s DP-SGD
}

#: families that fail today on this subset (issue 8 items being fixed concurrently); strict, so
#: the mark turns into a failure as soon as the family is sound
KNOWN: dict[str, str] = {}


def _param(family: str) -> object:
    if family in KNOWN:
        return pytest.param(family, marks=pytest.mark.xfail(
            strict=True, reason=f"issue 8: {KNOWN[family]} - fixed in progress"))
    return family


@pytest.mark.parametrize("family", [_param(f) for f in S.FAMILIES])
def test_family_is_sound(family: str) -> None:
    res = S.run([family], 1.0, SEED, jobs=1, counts={family: COUNTS[family]})[family]
    assert res.workloads == COUNTS[family]
    detail = "\n".join(res.failures[:5] + res.crash_list[:5])
    assert res.under == 0, f"under-reports:\n{detail}"
    assert res.lower == 0, f"lower bounds above the truth:\n{detail}"
    assert res.crashes == 0, f"crashes:\n{detail}"
    assert res.wider == 0, f"a smaller tol gave a wider bracket:\n{detail}"


def test_issue_example_mixed_directions() -> None:
    """The issue's pipeline: one remove and one add step of WOR-subsampled 2.14-DP."""
    w = S.make_workload("wor", SEED, 0)
    assert "2.139791757171395" in w.code
    assert w.ref is not None
    assert float(w.ref.delta(mpf(0.5))) == pytest.approx(0.0274888, abs=1e-7)
    res = S.check(w)
    assert res.sound, res.failures + res.crash_list


# ------------------------------------------------------------------------------------------------
# the checker catches what it must


def test_checker_flags_under_report_lower_bound_and_crash() -> None:
    w = S.Workload("gdp", "GDP(0.999)", R.GaussianRef(1.0), [0.5, 2.0], [1e-6])
    res = S.check(w)
    assert res.under == 3 and res.crashes == 0
    # a lower bound above the truth: the truth of GDP(1) is below PLD.gaussian(1/1.01)'s brackets
    w = S.Workload("gdp", "PLD.gaussian(1 / 1.01)", R.GaussianRef(1.0), [0.5], [1e-3])
    res = S.check(w)
    assert res.lower >= 1
    res = S.check(S.Workload("gdp", "GDP(-1.0)", R.GaussianRef(1.0), [0.5], []))
    assert res.crashes == 1 and "GDP(-1.0)" in res.crash_list[0]


def test_checker_flags_one_ulp_below_an_exact_value() -> None:
    exact = R.PairRef.approx_dp(1.0, 0.1).product(R.PairRef.approx_dp(2.0, 0.2))
    true = exact.delta(mpf(3.0))  # every finite loss is <= 3: only the atom, 1 - 0.9 * 0.8
    assert abs(true - (1 - (1 - mpf(0.1)) * (1 - mpf(0.2)))) < mpf(10) ** -45
    below = math.nextafter(float(true), 0.0)
    assert mpf(below) < true - exact.rtol * true


# ------------------------------------------------------------------------------------------------
# the references against second, independent computations


def test_laplace_reference_against_quadrature() -> None:
    """k-fold Laplace closed form = quadrature of the (k-1)-fold one against one Laplace loss, split
    at the kinks (the atoms' sums)."""
    e0 = mpf(0.7)
    for k in (1, 2):
        cont = R.LaplaceRef(e0, k)
        for eps in (mpf(0.3), mpf(1.0), mpf(1.9)):
            with mpmath.workdps(30):
                v = mpf(0)
                for t, qa in ((1, mpf(1) / 2), (-1, mpmath.exp(-e0) / 2)):
                    v += qa * cont.delta(eps - e0 * t)
                cuts = {(eps - e0 * n) / e0 for n in range(-k - 1, k + 2)}
                pts = sorted({mpf(-1), mpf(1)} | {c for c in cuts if -1 < c < 1})
                v += mpmath.quad(lambda t, c=cont, e=eps: e0 / 4 * mpmath.exp(e0 * (t - 1) / 2)
                                 * c.delta(e - e0 * t), pts)
            exact = R.LaplaceRef(e0, k + 1).delta(eps)
            assert abs(exact - v) <= mpf(1e-25) * max(exact, mpf(1e-30))
    # one Laplace: 1 - e^{(eps - eps0)/2}
    assert R.LaplaceRef(mpf(2), 1).delta(mpf(1)) == pytest.approx(1 - math.exp(-0.5), rel=1e-15)


def test_binomial_reference_against_enumeration() -> None:
    for eps, t in ((0.3, 7), (1.2, 40)):
        a, b = R.binomial_rr(eps, t), R.PairRef.randomized_response(eps, 2).power(t)
        for e in (0.0, 0.5, 2.0):
            assert abs(a.delta(mpf(e)) - b.delta(mpf(e))) < mpf(10) ** -45
        assert abs(a.epsilon(mpf(1e-6)) - b.epsilon(mpf(1e-6))) < mpf(10) ** -40


def test_gaussian_references_against_quadrature() -> None:
    mu, rate = 1.3, 0.2
    rem, add = R.subsample_steps(R.GaussianBase(mu), rate)
    m, r = mpf(mu), mpf(rate)
    def mix(x: mpf) -> mpf:
        return (1 - r) * mpmath.npdf(x) + r * mpmath.npdf(x - m)

    for eps in (mpf(0), mpf(0.5)):
        e = mpmath.exp(eps)

        def f_rem(x: mpf, e: mpf = e) -> mpf:
            return mix(x) - e * mpmath.npdf(x)

        def f_add(x: mpf, e: mpf = e) -> mpf:
            return mpmath.npdf(x) - e * mix(x)

        for step, f, lam in ((rem, f_rem, (e - (1 - r)) / r), (add, f_add, (1 / e - (1 - r)) / r)):
            # the sign change of f: likelihood ratio e^{mu x - mu^2/2} = lam
            x0 = (mpmath.log(lam) + m * m / 2) / m if lam > 0 else mpf(0)
            v = mpmath.quad(lambda x, f=f: max(f(x), 0), [-mpmath.inf, x0, mpmath.inf])
            assert abs(step.delta(eps) - v) < mpf(10) ** -12

    g = R.GaussianRef(1.0)
    v = mpmath.quad(lambda x: max(mpmath.npdf(x - 1) - mpmath.exp(1) * mpmath.npdf(x), 0),
                    [-mpmath.inf, 1.5, mpmath.inf])
    assert abs(g.delta(mpf(1)) - v) < mpf(10) ** -15
    # a remove step then an add step, in either order (the product pair is the same)
    a = R.ComposedRef(add, step=rem).delta(mpf(1))
    b = R.ComposedRef(rem, step=add).delta(mpf(1))
    assert abs(a - b) < mpf(10) ** -15 * a


def test_issue_numbers() -> None:
    base = R.PairRef.randomized_response(S.ISSUE_EPS, 2)._pruned()
    rem, add = R.subsample_pair(base, S.ISSUE_RATE)
    pair = rem.product(add)
    assert float(pair.delta(mpf(0.5))) == pytest.approx(0.0274888, abs=1e-7)
    assert float(pair.epsilon(mpf(0.02))) == pytest.approx(0.5518, abs=1e-4)


def test_swapped_pair_keeps_its_atom() -> None:
    """An outcome with q = 0 < p is the atom at infinity of the swapped pair: products and powers
    must keep it (the add step of subsampled (eps, delta)-DP, swapped, is the remove step)."""
    rem, add = R.subsample_pair(R.PairRef.approx_dp(10.0, 1e-9), 0.1)
    for k in (1, 3):
        assert add.power(k).swapped().delta_inf() == rem.power(k).delta_inf() > 0
    assert add.product(add).swapped().delta_inf() == rem.product(rem).delta_inf()


def test_checker_flags_rdp_under_report() -> None:
    """The rdpfrac check has no absolute tolerance: the old 5e-324 at q = 1e-30 (exact 1.29e-60,
    issue 28) is an under-report."""
    w = S.Workload("rdpfrac", "RDP(orders=(1.5,), epsilons=(5e-324,))",
                   None, [], [], orders=[1.5],
                   rdp_ref=SubsampledGaussianRdpRef(1e-30, 1.0))
    res = S.check(w)
    assert res.under == 1 and res.crashes == 0
    w = S.Workload("rdpfrac", "subsampled_gaussian_rdp(1e-30, 1.0, 1, orders=(1.5,))",
                   None, [], [], orders=[1.5],
                   rdp_ref=SubsampledGaussianRdpRef(1e-30, 1.0))
    assert S.check(w).sound
