"""Issue 8, PLD edges: legal parameters give a sound answer within a memory cap, never a crash."""

from __future__ import annotations

import math
import tracemalloc

import mpmath
import numpy as np
import pytest

from accountant import GDP, PLD, PureDP, compose, dpsgd_epsilon


def _gdp_delta(mu: float, eps: float) -> float:
    with mpmath.workdps(60):
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        return float(mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2))


def test_huge_gaussian_with_pure_dp_does_not_crash() -> None:
    # was IndexError: the loss span (~5e7) overflowed e^loss and emptied the grid law
    g = compose([GDP(1e4), PureDP(1.0)], method="pld")
    lo, up = g.delta_bracket(10.0)
    assert lo <= up
    assert up >= _gdp_delta(1e4, 10.0)  # composing with more mechanisms only raises delta
    assert g.epsilon(1e-5) >= GDP(1e4).epsilon(1e-5) or math.isinf(g.epsilon(1e-5))


def _gdp_epsilon(mu: float, delta: float) -> float:
    """epsilon(delta) of mu-GDP by mpmath root finding (60 digits), e^eps Phi(.) in log space."""
    with mpmath.workdps(60):
        m, d = mpmath.mpf(mu), mpmath.mpf(delta)

        def f(e: mpmath.mpf) -> mpmath.mpf:
            return (mpmath.ncdf(-e / m + m / 2)
                    - mpmath.exp(e + mpmath.log(mpmath.ncdf(-e / m - m / 2))) - d)

        lo, hi = m * m / 2, m * m / 2 + 20 * m  # f(lo) > 0 > f(hi)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        return float(lo)


@pytest.mark.parametrize("steps", [1, 10])
def test_dpsgd_tiny_noise_is_sound_within_memory(steps: int) -> None:
    # was a 2.7 GiB allocation: the grid is coarsened so that one law has at most 2^19 points.
    # It also was unsound (7091 for a true ~5e5): the subsampled loss overflowed e^g above 709.
    tracemalloc.start()
    try:
        acc = dpsgd_epsilon(0.5, 1e-3, steps, 1e-5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 30
    assert acc.epsilon_lower <= acc.epsilon_upper
    assert acc.clt_mu is not None
    assert math.isinf(acc.clt_mu)  # e^{1/sigma^2} overflows: no approximation, not a crash
    # one step's loss log(1 - r + r e^B) >= B + log r with B the Gaussian loss, so
    # delta(eps) >= r delta_GDP(eps - log r): epsilon >= epsilon_GDP(delta / r) + log r
    reference = _gdp_epsilon(1000.0, 1e-5 / 0.5) + math.log(0.5)
    assert acc.epsilon_upper >= reference
    if steps == 1:
        assert acc.epsilon_upper <= reference + 1.0


def test_pmf_atoms_on_the_grid_give_exact_zero() -> None:
    # issue 8: RR against a uniform law had delta(1) = 7.3e-4 where the exact value is 0; the grid
    # is now shifted so that the top loss is a node
    from fractions import Fraction

    k, e = 4, 1.0
    z = math.exp(e) + k - 1
    p = np.array([math.exp(e) / z] + [1 / z] * (k - 1))
    q = np.full(k, 1 / k)
    g = PLD.from_pmfs(p, q)
    top = max(float(np.log(q / p).max()), float(np.log(p / q).max()))
    assert g.delta(1.0) == 0.0  # both directions' losses are below 1
    assert top <= g.epsilon(0.0) <= top + 1e-9
    # delta at 0.5 by exact enumeration over the support (both orders)
    exact = max(sum(max(Fraction(a) - Fraction(math.exp(0.5)) * Fraction(b), Fraction(0))
                    for a, b in zip(x, y, strict=True)) for x, y in ((q, p), (p, q)))
    lo, up = g.delta_bracket(0.5)
    assert lo <= float(exact) <= up and up - float(exact) < 1e-12


@pytest.mark.parametrize("eps,k,count", [(1.0, 10, 5), (0.3, 2, 40), (math.log(81.0), 10, 1)])
def test_pure_compositions_reach_delta_zero(eps: float, k: int, count: int) -> None:
    # issue 8: the round-off slack kept delta above 0, so epsilon(0) was +inf; the exact value of
    # count-fold eps-RR is count * eps
    g = PLD.randomized_response(eps, k).self_compose(count)
    assert count * eps <= g.epsilon(0.0) <= count * eps * (1 + 1e-9)
    assert g.delta(count * eps) == 0.0


def test_laplace_composition_finite_far_tail() -> None:
    # issue 8: epsilon(1e-10) of 100-fold Laplace(1) was +inf (round-off floor above 1e-10)
    assert 81.0 < PLD.laplace(1.0).self_compose(100).epsilon(1e-10) <= 100.0


def test_pld_bad_input() -> None:
    from accountant import subsampled_gaussian

    g = PLD.gaussian(1.0)
    lo, up = g.delta_bracket(-math.inf)  # was OverflowError
    assert up == 1.0 and lo > 1.0 - 1e-12
    with pytest.raises(ValueError, match="k must be an integer in"):
        g.self_compose(10**400)
    with pytest.raises(TypeError, match="sensitivity"):
        subsampled_gaussian(1.0, 0.1, sensitivity=True)
    with pytest.raises(ValueError, match="sensitivity"):
        PLD.discrete_laplace(1.0, sensitivity=10**400)
    assert PLD.randomized_response(5e-324).epsilon(1e-5) == 0.0  # was ZeroDivisionError


def test_subsampled_gaussian_rdp_is_rounded_up() -> None:
    # issue 8: subsampled_gaussian_rdp(0.01, 2.5, 50, orders=(5,)) was 2.3e-14 (relative) low
    from accountant import subsampled_gaussian_rdp

    rng = np.random.default_rng(8)
    for _ in range(120):
        q, s = 10 ** rng.uniform(-4, -0.01), 10 ** rng.uniform(-0.5, 1.0)
        a, t = int(rng.choice([2, 3, 5, 8, 16, 64, 256])), int(rng.choice([1, 50, 1000]))
        got = subsampled_gaussian_rdp(q, s, t, orders=(a,)).epsilons[0]
        with mpmath.workdps(60):
            mq, ms = mpmath.mpf(q), mpmath.mpf(s)
            total = mpmath.fsum(mpmath.binomial(a, k) * (1 - mq) ** (a - k) * mq ** k
                                * mpmath.exp((k * k - k) / (2 * ms * ms)) for k in range(a + 1))
            exact = t * mpmath.log(total) / (a - 1)
        assert mpmath.mpf(got) >= exact
        assert got <= float(exact) * (1 + 1e-3) + 1e-300


@pytest.mark.parametrize("scheme", ["poisson", "without_replacement"])
def test_subsampled_pure_dp_reaches_delta_zero(scheme: str) -> None:
    # issue 8 campaign: subsampled pure DP is pure DP, but rounding charged at +inf made
    # epsilon(0) infinite; the exact pure bound of k Poisson steps is k log(1 + r (e^eps - 1))
    from accountant import subsample

    eps0, r, k = 0.571200920118752, 0.14613951279162382, 193
    g = subsample(PureDP(eps0), r, scheme=scheme).self_compose(k)  # type: ignore[arg-type]
    pure = k * math.log1p(r * math.expm1(eps0))
    assert pure <= g.epsilon(0.0) <= pure + 0.01
