"""Unit tests of validation, conversions, the CLT and the baselines."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from accountant import (
    CLTGDP,
    FDP,
    GDP,
    RDP,
    ZCDP,
    ApproxDP,
    FiniteLossTradeoff,
    GaussianTradeoff,
    LaplaceTradeoff,
    PiecewiseLinearTradeoff,
    PureDP,
    compose,
    gdp_to_approx_dp,
    gdp_to_zcdp,
    profile_to_tradeoff,
    pure_dp_to_rdp,
    rdp_to_approx_dp,
    rdp_to_approx_dp_classic,
    to_rdp,
    zcdp_to_approx_dp,
)

# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: PureDP(-0.1), "eps"),
        (lambda: PureDP(float("nan")), "eps"),
        (lambda: ApproxDP(1.0, 1.0), "delta"),
        (lambda: ApproxDP(1.0, -1e-9), "delta"),
        (lambda: ApproxDP(-1.0, 1e-5), "eps"),
        (lambda: GDP(0.0), "mu"),
        (lambda: GDP(-1.0), "mu"),
        (lambda: GDP(float("nan")), "mu"),
        (lambda: ZCDP(-0.5), "rho"),
        (lambda: RDP(orders=(0.5,), epsilons=(1.0,)), "orders"),
        (lambda: RDP(orders=(2.0,), epsilons=(-1.0,)), "epsilons"),
    ],
)
def test_bad_parameters_raise_naming_the_parameter(make: object, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        make()  # type: ignore[operator]


def test_guarantees_are_immutable() -> None:
    g = GDP(1.0)
    with pytest.raises(AttributeError):
        g.mu = 2.0  # type: ignore[misc]


def test_bad_alpha_and_delta_raise() -> None:
    with pytest.raises(ValueError, match="alpha"):
        GaussianTradeoff(1.0)(1.5)
    with pytest.raises(ValueError, match="alpha"):
        GaussianTradeoff(1.0)(np.array([0.1, float("nan")]))
    with pytest.raises(ValueError, match="delta"):
        GDP(1.0).epsilon(1.5)


@pytest.mark.parametrize(
    "fn",
    [
        lambda a: 1 - a + 0.1,  # above 1 - alpha
        lambda a: a * 0.5,  # increasing
        lambda a: np.where(a < 0.5, 1 - a, 0.0),  # not convex (not continuous)
        lambda a: np.sqrt(np.maximum(1 - 2 * a, 0)) * 0.5,  # concave part
    ],
)
def test_fdp_rejects_curves_that_are_not_tradeoff_functions(fn: object) -> None:
    with pytest.raises(ValueError, match="trade-off function"):
        FDP(fn)  # type: ignore[arg-type]


def test_piecewise_linear_rejects_non_convex_points() -> None:
    with pytest.raises(ValueError, match="convex"):
        # slopes -0.8, -1.6, -0.6 do not increase
        PiecewiseLinearTradeoff(np.array([0.0, 0.25, 0.5, 1.0]), np.array([0.9, 0.7, 0.3, 0.0]))


def test_scalar_and_array_inputs() -> None:
    f = PureDP(1.0).tradeoff
    assert isinstance(f(0.1), float)
    out = f(np.array([[0.0, 0.5], [0.25, 1.0]]))
    assert out.shape == (2, 2)
    assert isinstance(GDP(1.0).delta(1.0), float)
    assert GDP(1.0).delta(np.array([0.0, 1.0])).shape == (2,)


# ----------------------------------------------------------------------------- curves


def test_approx_dp_curve_formula() -> None:
    eps, delta = 0.7, 0.01
    a = np.linspace(0, 1, 1001)
    expected = np.maximum.reduce([np.zeros_like(a), 1 - delta - math.exp(eps) * a,
                                  math.exp(-eps) * (1 - delta - a)])
    np.testing.assert_allclose(ApproxDP(eps, delta).tradeoff(a), expected, atol=1e-14)


def test_kary_randomized_response_curve_and_profile() -> None:
    eps, k = 1.2, 5
    f = FiniteLossTradeoff.randomized_response(eps, k)
    z = math.exp(eps) + k - 1
    # Q on (x, x', others) = (1, e^eps, k-2)/z; P swaps the first two: delta(t) = sum (q - e^t p)_+
    for t in [0.0, 0.3, 1.0]:
        q = [1 / z, math.exp(eps) / z, (k - 2) / z]
        p = [math.exp(eps) / z, 1 / z, (k - 2) / z]
        expected = sum(max(qi - math.exp(t) * pi, 0.0) for qi, pi in zip(q, p, strict=True))
        assert math.isclose(f.profile(t), expected, rel_tol=1e-12, abs_tol=1e-16)
    assert f.is_symmetric


def test_roc_curve_is_the_lower_hull() -> None:
    f = PiecewiseLinearTradeoff.from_roc([0.1, 0.2, 0.5], [0.5, 0.55, 0.95])
    # (0.2, 0.45) lies above the chord from (0.1, 0.5) to (0.5, 0.05): it is not a vertex
    assert f(0.2) < 0.45
    assert math.isclose(f(0.1), 0.5) and math.isclose(f(0.5), 0.05)


def test_inverse_and_symmetrisation_of_an_asymmetric_pair() -> None:
    # P = (0.5, 0.5), Q = (0.9, 0.1): T(P, Q) is asymmetric
    f = FiniteLossTradeoff.from_losses([math.log(0.9 / 0.5), math.log(0.1 / 0.5)], [0.9, 0.1])
    inv = f.inverse()
    a = np.linspace(0, 1, 101)
    # f^{-1}(f(a)) = a where f is strictly decreasing
    strict = f(a) > 0
    np.testing.assert_allclose(inv(f(a[strict])), a[strict], atol=1e-12)
    assert not f.is_symmetric
    s = f.symmetrize()
    assert (s(a) <= np.minimum(f(a), inv(a)) + 1e-12).all()
    np.testing.assert_allclose(s(a), s.inverse()(a), atol=1e-12)


def test_conjugate_matches_definition() -> None:
    f = LaplaceTradeoff(1.0)
    a = np.linspace(0, 1, 200001)
    for y in [-5.0, -1.0, -0.3, 0.5]:
        assert math.isclose(float(f.conjugate(y)), float(np.max(y * a - f(a))), abs_tol=1e-8)


def test_profile_to_tradeoff_round_trip() -> None:
    g = GDP(1.0)
    f = profile_to_tradeoff(g.delta, np.linspace(-5, 8, 400))
    a = np.linspace(0, 1, 2001)
    assert (f(a) <= g.tradeoff(a) + 1e-12).all()  # a valid lower bound
    assert np.max(g.tradeoff(a) - f(a)) < 5e-3  # and a close one


def test_callable_fdp_profile_is_a_sound_upper_bound() -> None:
    g = FDP(lambda a: GaussianTradeoff(1.5)(a))
    for eps in [0.0, 0.5, 1.0, 2.0, 4.0]:
        exact = GDP(1.5).delta(eps)
        got = g.delta(eps)
        assert exact <= got <= exact * 1.02 + 1e-13


# ----------------------------------------------------------------------------- conversions


def test_gdp_conversions() -> None:
    assert gdp_to_approx_dp(1.0, eps=1.0).delta_ == GDP(1.0).delta(1.0)
    assert gdp_to_zcdp(2.0).rho == 2.0
    # for the Gaussian mechanism zCDP is looser than GDP but not by much
    for mu in [0.5, 1.0, 3.0]:
        exact = GDP(mu).epsilon(1e-6)
        via_rdp = ZCDP(mu * mu / 2).epsilon(1e-6)
        assert exact <= via_rdp <= exact * 1.25


def test_tight_rdp_conversion_beats_classic_and_is_sound() -> None:
    rdp = to_rdp(GDP(1.0))
    for delta in [1e-3, 1e-6, 1e-9]:
        tight = rdp_to_approx_dp(rdp, delta=delta).eps
        classic = rdp_to_approx_dp_classic(rdp, delta=delta).eps
        assert tight < classic
        assert tight >= GDP(1.0).epsilon(delta)  # GDP is exact for the Gaussian: RDP can't beat it


@pytest.mark.parametrize(("rho", "eps"), [(0.5, 1.0), (0.3, 0.0), (1e-3, 3.0), (4.0, 0.1), (3.0, 0.14),
                                         (0.05, 2.0), (2.0, 8.0), (1e-5, 0.5)])
def test_zcdp_delta_is_the_minimised_conversion_and_sound(rho: float, eps: float) -> None:
    # delta(eps) = min_a exp((a-1)(rho a - eps)) (1 - 1/a)^(a-1) / a [@canonne2020discrete, Prop. 12]
    # over the searched orders a = 1 + e^t, t in [-12, log 1e6], minimised by golden section in
    # mpmath (the exponent is convex in a); the Gaussian mechanism is exactly rho-zCDP, so its
    # exact profile is below
    def log_delta(t: mp.mpf) -> mp.mpf:
        a = 1 + mp.exp(t)
        return (a - 1) * (rho * a - eps) + (a - 1) * mp.log(1 - 1 / a) - mp.log(a)

    with mp.workdps(40):
        lo, hi = mp.mpf(-12), mp.log(mp.mpf(10) ** 6)
        r = (mp.sqrt(5) - 1) / 2
        for _ in range(300):
            m1, m2 = hi - r * (hi - lo), lo + r * (hi - lo)
            if log_delta(m1) < log_delta(m2):
                hi = m2
            else:
                lo = m1
        truth = mp.exp(log_delta((lo + hi) / 2))
        got = ZCDP(rho).delta(eps)
        assert mp.mpf(got) >= truth  # rounded up
        # and the minimum, not an order near it (below the normal range: a few subnormal steps)
        assert mp.mpf(got) <= truth * (1 + mp.mpf(1e-9)) + mp.mpf(2) ** -1070
    assert got >= GDP(math.sqrt(2 * rho)).delta(eps)


def test_zcdp_to_approx_dp_matches_mpmath_minimisation() -> None:
    rho, delta = 0.3, 1e-6
    # eps = min_a rho a + log(1 - 1/a) - (log delta + log a)/(a - 1), minimised with mpmath
    def obj(a: mp.mpf) -> mp.mpf:
        return rho * a + mp.log(1 - 1 / a) - (mp.log(delta) + mp.log(a)) / (a - 1)
    a_star = mp.findroot(lambda a: mp.diff(obj, a), 10)
    truth = obj(a_star)
    got = zcdp_to_approx_dp(rho, delta=delta).eps
    assert mp.mpf(got) >= truth - mp.mpf(1e-12)
    assert got - float(truth) < 1e-8


def test_pure_dp_to_rdp_is_the_randomized_response_divergence() -> None:
    eps, a = 0.8, 3.0
    p = mp.exp(eps) / (1 + mp.exp(eps))
    q = 1 - p
    truth = mp.log(p**a * q ** (1 - a) + q**a * p ** (1 - a)) / (a - 1)
    assert math.isclose(pure_dp_to_rdp(eps, [a]).at(a), float(truth), rel_tol=1e-12)


def test_pure_dp_and_approx_dp_profiles() -> None:
    eps = 1.0
    for t in [0.0, 0.4, 0.99]:
        expected = (math.exp(eps) - math.exp(t)) / (1 + math.exp(eps))
        assert math.isclose(PureDP(eps).delta(t), expected, rel_tol=1e-12)
        assert math.isclose(ApproxDP(eps, 1e-4).delta(t), 1e-4 + (1 - 1e-4) * expected, rel_tol=1e-12)
    assert PureDP(eps).delta(1.0) == 0.0
    assert ApproxDP(eps, 1e-4).epsilon(1e-5) == math.inf
    assert PureDP(eps).epsilon(0.0) == eps


# ----------------------------------------------------------------------------- composition


def test_composition_dispatch_and_errors() -> None:
    assert compose([ZCDP(0.1), ZCDP(0.2)]) == ZCDP(0.1 + 0.2)
    r = compose([ZCDP(0.1), RDP(orders=(2.0, 4.0), epsilons=(0.1, 0.3))])
    assert isinstance(r, RDP) and math.isclose(r.at(4.0), 0.7)
    with pytest.raises(ValueError, match="at least one"):
        compose([])
    with pytest.raises(ValueError, match="method"):
        compose([GDP(1.0)], method="magic")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="to_approx_dp"):
        compose([GDP(1.0), PureDP(1.0)], method="basic")
    with pytest.raises(TypeError):
        compose([1.0])  # type: ignore[list-item]


def test_mixed_notions_compose_via_rdp_and_clt() -> None:
    gs = [GDP(0.5), PureDP(0.3), ZCDP(0.05)]
    rdp = compose(gs, method="rdp")
    assert isinstance(rdp, RDP)
    # RDP adds: the composed bound is at least the loosest component's
    assert rdp.epsilon(1e-6) >= GDP(0.5).epsilon(1e-6)


def test_basic_composition() -> None:
    g = compose([ApproxDP(0.5, 1e-6), PureDP(0.2)], method="basic")
    assert isinstance(g, ApproxDP)
    assert math.isclose(g.eps, 0.7) and g.delta_ == 1e-6


def test_advanced_composition_formula() -> None:
    k, eps0, dp = 50, 0.1, 1e-6
    g = compose([PureDP(eps0)] * k, method="advanced")
    expected = math.sqrt(2 * k * math.log(1 / dp)) * eps0 + k * eps0 * math.expm1(eps0)
    got = g.epsilon(dp)
    assert expected - 1e-9 <= got <= expected * (1 + 1e-9) + 1e-9


def test_clt_brackets_the_exact_composition() -> None:
    # DRS Thm 3.5: G_mu(a + gamma) - gamma <= f^{(x)n}(a) <= G_mu(a - gamma) + gamma
    for eps0, k in [(0.1, 100), (0.3, 50), (0.05, 400)]:
        exact = compose([PureDP(eps0)] * k).tradeoff
        approx = compose([PureDP(eps0)] * k, method="clt")
        assert isinstance(approx, CLTGDP)
        g, gam = GaussianTradeoff(approx.mu), approx.gamma
        a = np.linspace(0, 1, 1001)
        lower = np.maximum(g(np.clip(a + gam, 0, 1)) - gam, 0)
        upper = g(np.clip(a - gam, 0, 1)) + gam
        assert (lower <= exact(a) + 1e-12).all() and (exact(a) <= upper + 1e-12).all()
        # the rigorous side is a valid guarantee, looser than the exact one
        assert approx.rigorous().epsilon(1e-3) >= compose([PureDP(eps0)] * k).epsilon(1e-3)


def test_clt_mu_for_gaussians_is_exact() -> None:
    approx = compose([GDP(0.3)] * 10, method="clt")
    assert math.isclose(approx.mu, math.sqrt(10) * 0.3, rel_tol=1e-12)


def test_clt_of_laplace_matches_drs_example() -> None:
    # DRS: k-fold eps/sqrt(k) pure DP tends to mu-GDP with mu = sqrt(k) * kl / ... -> for
    # Laplace with eps_i = 1/sqrt(k): mu -> sqrt(2) * ... ; check against the moments computed by quad
    k, eps0 = 100, 0.1
    approx = compose([FDP(LaplaceTradeoff(eps0))] * k, method="clt")
    kl = eps0 + math.exp(-eps0) - 1  # KL(Lap(0,1) || Lap(eps,1))
    m = LaplaceTradeoff(eps0).loss_moments()
    assert math.isclose(m.kl, kl, rel_tol=1e-9)
    assert math.isclose(approx.mu, 2 * k * kl / math.sqrt(k * (m.kappa2 - kl**2)), rel_tol=1e-12)


def test_exact_composition_refuses_huge_supports() -> None:
    gs = [PureDP(0.01 * (i + 1)) for i in range(40)]
    with pytest.raises(ValueError, match=r"pld|clt"):
        compose(gs)
