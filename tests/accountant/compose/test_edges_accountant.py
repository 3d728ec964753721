"""Issue 8, accountant side: soundness at the edges and bad input.

Every reference is independent of the code under test: closed forms evaluated with mpmath at
50+ digits, exact enumeration of finite pairs with mpmath, exact rational arithmetic.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable, Sequence
from fractions import Fraction
from itertools import product
from typing import Any

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant import (
    CLTGDP,
    FDP,
    GDP,
    RDP,
    ApproxDP,
    BudgetExceededError,
    GaussianTradeoff,
    Guarantee,
    LaplaceTradeoff,
    Ledger,
    Method,
    PiecewiseLinearTradeoff,
    PureDP,
    compose,
    compose_advanced,
    compose_basic,
    compose_clt,
    compose_rdp,
    gdp_to_approx_dp,
    gdp_to_tradeoff,
    gdp_to_zcdp,
    profile_to_tradeoff,
    pure_dp_to_approx_dp,
    pure_dp_to_gdp,
    pure_dp_to_rdp,
    pure_dp_to_zcdp,
    rdp_to_approx_dp,
    to_rdp,
    zcdp_to_approx_dp,
    zcdp_to_rdp,
)
from accountant.notions.conversions import randomized_response_renyi
from accountant.notions.finite_loss import FiniteLossTradeoff

DPS = 60


def mpf(x: float) -> mp.mpf:
    return mp.mpf(x)


# ----------------------------------------------------------------- exact finite pairs (mpmath)


def mp_product_pair(pairs: Sequence[tuple[float, float]]) -> tuple[list[tuple[mp.mpf, mp.mpf]],
                                                                     mp.mpf]:
    """Loss atoms (loss, Q-mass) and the Q-mass at +inf of the product of the randomized-response
    pairs of (eps_i, delta_i)-DP (Kairouz, Oh & Viswanath), enumerated exactly."""
    atoms = []
    for signs in product((1, -1), repeat=len(pairs)):
        loss, mass = mp.mpf(0), mp.mpf(1)
        for s, (e, d) in zip(signs, pairs, strict=True):
            ee = mpf(e)
            loss += s * ee
            mass *= (1 - mpf(d)) * (mp.exp(ee) if s == 1 else 1) / (1 + mp.exp(ee))
        atoms.append((loss, mass))
    no_atom = mp.mpf(1)
    for _, d in pairs:
        no_atom *= 1 - mpf(d)
    return atoms, 1 - no_atom


def mp_profile(atoms: list[tuple[mp.mpf, mp.mpf]], q_inf: mp.mpf, eps: float | mp.mpf
               ) -> mp.mpf:
    e = mp.mpf(eps)
    return q_inf + sum((q * (1 - mp.exp(e - lo)) for lo, q in atoms if lo > e), mp.mpf(0))


def mp_curve(atoms: list[tuple[mp.mpf, mp.mpf]], q_inf: mp.mpf, alpha: float) -> mp.mpf:
    """f(alpha) = max(0, max_l 1 - delta(l) - e^l alpha) (DRS Prop. 2.12 at the kinks)."""
    a = mpf(alpha)
    lines = (1 - mp_profile(atoms, q_inf, lo) - mp.exp(lo) * a for lo, _ in atoms)
    return max(mp.mpf(0), *lines)


# ============================================================ item 1: FDP of a steep callable


def pure_curve(e0: float) -> Callable[[np.ndarray], np.ndarray]:
    w = math.exp(e0)

    def f(a: np.ndarray) -> np.ndarray:
        return np.maximum(np.maximum(1.0 - w * a, (1.0 - a) / w), 0.0)

    return f


def mp_pure_profile(e0: float, eps: float) -> mp.mpf:
    with mp.workdps(DPS):
        atoms = [(mpf(e0), mp.exp(mpf(e0)) / (1 + mp.exp(mpf(e0)))),
                 (-mpf(e0), 1 / (1 + mp.exp(mpf(e0))))]
        return mp_profile(atoms, mp.mpf(0), eps)


def test_fdp_steep_callable_profile_is_an_upper_bound() -> None:
    g = FDP(pure_curve(70.0))
    for eps in [0.0, 1.0, 10.0, 50.0, 69.0, 69.9, 69.99, 70.0, 71.0, 300.0, 700.0]:
        truth = mp_pure_profile(70.0, eps)
        got = g.delta(eps)
        assert mpf(got) >= truth, (eps, got, truth)
        assert got - truth <= 1e-9, (eps, got, truth)  # and tight: the loss 70 is resolved
    # epsilon(1e-3): the exact value solves (e^70 - e^x)/(1 + e^70) = 1e-3
    with mp.workdps(DPS):
        truth_eps = mp.log(mp.exp(70) - mpf(1e-3) * (1 + mp.exp(70)))
    got_eps = g.epsilon(1e-3)
    assert truth_eps <= mpf(got_eps) <= truth_eps + mpf(1e-6)


@settings(max_examples=25, deadline=None)
@given(e0=st.floats(0.5, 690.0), frac=st.floats(0.0, 1.2))
def test_fdp_callable_profile_up_to_loss_690(e0: float, frac: float) -> None:
    eps = e0 * frac
    got = FDP(pure_curve(e0)).delta(eps)
    truth = mp_pure_profile(e0, eps)
    assert mpf(got) >= truth
    assert got - truth <= 1e-6


# ============================================================ item 2: RDP at order infinity


def mp_pure_epsilon(e0: float, delta: float) -> mp.mpf:
    """Smallest eps with (e^e0 - e^eps)/(1 + e^e0) <= delta (randomized response)."""
    with mp.workdps(DPS):
        e = mpf(e0)
        return max(mp.mpf(0), mp.log(mp.exp(e) - mpf(delta) * (1 + mp.exp(e))))


def test_rdp_at_order_infinity_is_pure_dp() -> None:
    got = RDP(orders=(math.inf,), epsilons=(1.0,)).epsilon(1e-5)
    truth = mp_pure_epsilon(1.0, 1e-5)
    assert truth <= mpf(got) <= truth + mpf(1e-9)
    d = RDP(orders=(math.inf,), epsilons=(1.0,)).delta(0.5)
    assert mpf(d) >= mp_pure_profile(1.0, 0.5)
    assert zcdp_to_rdp(0.1, [math.inf]).epsilon(1e-5) == math.inf


def test_rdp_with_order_infinity_terminates_and_is_sound() -> None:
    start = time.perf_counter()
    got = RDP(orders=(2.0, math.inf), epsilons=(1.0, 1.0)).epsilon(1e-5)
    assert time.perf_counter() - start < 5.0
    with mp.workdps(DPS):  # CKS (2020, Prop. 12) at order 2, and pure 1-DP at order infinity
        cks2 = 1 + mp.log(mp.mpf(1) / 2) - (mp.log(mpf(1e-5)) + mp.log(2))
    truth = min(cks2, mp_pure_epsilon(1.0, 1e-5))
    assert truth <= mpf(got) <= truth + mpf(1e-9)


# ============================================================ item 3: pure_dp_to_gdp


def mp_pure_to_gdp_mu(eps: float) -> mp.mpf:
    """mu with Phi(-mu/2) = 1/(1 + e^eps), by bisection at 60 digits (Phi(-x) is decreasing)."""
    with mp.workdps(DPS):
        p = 1 / (1 + mp.exp(mpf(eps)))
        lo, hi = mp.mpf(0), 2 * mp.sqrt(2 * (mpf(eps) + 1)) + 1
        for _ in range(230):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if mp.ncdf(-mid) > p else (lo, mid)
        return 2 * hi


@pytest.mark.parametrize("eps", [float(x) for x in np.logspace(-12, math.log10(700), 41)]
                         + [1e-8, 20.0, 36.7, 37.0, 300.0])
def test_pure_dp_to_gdp_is_rounded_up_and_tight(eps: float) -> None:
    mu = pure_dp_to_gdp(eps).mu
    truth = mp_pure_to_gdp_mu(eps)
    assert mpf(mu) >= truth, (eps, mu, truth)
    assert mpf(mu) - truth <= 4 * mpf(math.ulp(mu)), (eps, mu, truth)


# ============================================================ item 4: approximations


@pytest.mark.parametrize("method", ["exact", "pld", "basic", "advanced", "rdp"])
def test_clt_approximation_never_becomes_a_bound(method: Method) -> None:
    approx = CLTGDP(1.0, gamma=0.5)
    with pytest.raises((TypeError, ValueError), match=r"approximation|CLTGDP|PureDP"):
        compose([approx, approx], method=method)


def test_clt_approximation_refused_by_conversions_and_ledger() -> None:
    approx = CLTGDP(1.0, gamma=0.5)
    with pytest.raises(ValueError, match="approximation"):
        to_rdp(approx)
    with pytest.raises(ValueError, match="approximation"):
        Ledger().record(approx)
    with pytest.raises(TypeError, match="budget"):
        Ledger(budget=approx)
    assert isinstance(compose([approx, approx], method="clt"), CLTGDP)
    assert isinstance(compose([approx.rigorous()] * 2, method="pld"), Guarantee)


# ============================================================ item 5: GDP far tails


def mp_gdp_delta(mu: float, eps: float) -> mp.mpf:
    with mp.workdps(DPS):
        m, e = mpf(mu), mpf(eps)
        return mp.ncdf(-e / m + m / 2) - mp.exp(e) * mp.ncdf(-e / m - m / 2)


def gdp_cases(n: int, seed: int) -> list[tuple[float, float]]:
    rng = random.Random(seed)
    out = [(1.1773584121084695, 31.691439448455117), (0.5, 12.0), (0.014151762944794975,
                                                                   0.45055777318022505)]
    for _ in range(n):
        mu = 10 ** rng.uniform(-2.0, 1.5)
        z = rng.uniform(0.0, 38.0)  # far tails: delta down to ~1e-300
        eps = mu * (z + mu / 2) if rng.random() < 0.7 else rng.uniform(0.0, 60.0)
        out.append((mu, eps))
    return out


def test_gdp_delta_far_tail_never_below_the_truth() -> None:
    worst = 0.0
    for mu, eps in gdp_cases(300, 8):
        truth = mp_gdp_delta(mu, eps)
        got = GDP(mu).delta(eps)
        assert mpf(got) >= truth, (mu, eps, got, truth)
        if truth > mpf(1e-300):
            worst = max(worst, float((mpf(got) - truth) / truth))
    assert worst < 1e-9


def test_gdp_epsilon_never_below_the_truth() -> None:
    rng = random.Random(5)
    for _ in range(25):
        mu, delta = 10 ** rng.uniform(-1.0, 1.2), 10 ** rng.uniform(-15.0, -1.0)
        got = GDP(mu).epsilon(delta)
        # the truth lies where the exact profile crosses delta: just below got it exceeds delta
        below = math.nextafter(got * (1 - 1e-11), 0.0)
        assert mp_gdp_delta(mu, got) <= mpf(delta), (mu, delta, got)
        assert got == 0.0 or mp_gdp_delta(mu, below) > mpf(delta), (mu, delta, got)


# ============================================================ item 6: ledger


def ledger_json(count: Any) -> str:
    return json.dumps({"budget": {"type": "ApproxDP", "eps": 1.0, "delta": 1e-6},
                       "releases": [{"guarantee": {"type": "GDP", "mu": 0.1}, "count": count,
                                     "label": ""}]})


def test_ledger_refuses_a_json_ledger_over_budget() -> None:
    with pytest.raises(BudgetExceededError, match="over its budget"):
        Ledger.from_json(ledger_json(10000))
    assert Ledger.from_json(ledger_json(2)).releases[0].count == 2


@pytest.mark.parametrize("count", [2.7, 2.0, "2", True])
def test_ledger_refuses_non_integer_counts(count: Any) -> None:
    with pytest.raises(TypeError, match="count"):
        Ledger.from_json(ledger_json(count))
    with pytest.raises(TypeError, match="count"):
        Ledger().record(GDP(0.1), count=count)


def test_ledger_counts_accept_numpy_integers_and_refuse_huge_ones() -> None:
    ledger = Ledger(budget=ApproxDP(1.0, 1e-6))
    ledger.record(GDP(0.1), count=np.int64(2))
    mu = ledger.spent_gdp_mu()
    assert mu is not None and mpf(mu) >= mp.sqrt(2 * mpf(0.1) ** 2)
    for bad in (10**400, 0, -1, np.int64(0)):
        with pytest.raises(ValueError, match="count"):
            ledger.record(GDP(0.1), count=bad)


# ============================================================ item 7: outward rounding


def test_peer_golden_cases_are_not_optimistic() -> None:
    assert Fraction(compose([ApproxDP(1.0, 0.1), ApproxDP(2.0, 0.2)]).delta(3.0)) >= \
        1 - (1 - Fraction(0.1)) * (1 - Fraction(0.2))
    with mp.workdps(DPS):
        atoms, q_inf = mp_product_pair([(1.0, 0.0), (2.0, 0.0)])
        assert mpf(compose([PureDP(1.0), PureDP(2.0)]).tradeoff(0.1)) <= mp_curve(atoms, q_inf,
                                                                                  0.1)
    # GDP composes to the exact sqrt of the sum of squares, rounded up: 0.6 and 0.8 as doubles
    # give slightly more than 1
    mu = compose([GDP(0.6), GDP(0.8)]).mu
    assert Fraction(mu) ** 2 >= Fraction(0.6) ** 2 + Fraction(0.8) ** 2


guarantee_pairs = st.lists(
    st.tuples(st.floats(0.01, 5.0), st.sampled_from([0.0, 0.0, 1e-6, 0.01, 0.1])),
    min_size=1, max_size=4)


@settings(max_examples=60, deadline=None)
@given(pairs=guarantee_pairs, eps=st.floats(0.0, 12.0), alpha=st.floats(0.0, 1.0))
def test_exact_composition_is_rounded_outward(pairs: list[tuple[float, float]], eps: float,
                                              alpha: float) -> None:
    gs = [PureDP(e) if d == 0.0 else ApproxDP(e, d) for e, d in pairs]
    g = compose(gs)
    with mp.workdps(DPS):
        atoms, q_inf = mp_product_pair(pairs)
        truth = mp_profile(atoms, q_inf, eps)
        got = g.delta(eps)
        assert mpf(got) >= truth
        assert mpf(got) - truth <= mpf(1e-12) * truth + mpf(1e-14)
        assert mpf(g.tradeoff(alpha)) <= mp_curve(atoms, q_inf, alpha)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(1e-6, 40.0), order=st.floats(1.01, 500.0), rho=st.floats(1e-6, 10.0))
def test_rdp_values_are_rounded_up(eps: float, order: float, rho: float) -> None:
    with mp.workdps(DPS):
        e, a = mpf(eps), mpf(order)
        p = mp.exp(e) / (1 + mp.exp(e))
        q = 1 / (1 + mp.exp(e))
        truth = mp.log(p ** a * q ** (1 - a) + q ** a * p ** (1 - a)) / (a - 1)
        assert mpf(randomized_response_renyi(eps, order)) >= truth
        assert mpf(pure_dp_to_rdp(eps, [order]).at(order)) >= truth
    assert Fraction(zcdp_to_rdp(rho, [order]).at(order)) >= Fraction(rho) * Fraction(order)
    assert Fraction(pure_dp_to_zcdp(eps).rho) >= Fraction(eps) ** 2 / 2
    assert Fraction(gdp_to_zcdp(eps).rho) >= Fraction(eps) ** 2 / 2
    # the CKS conversion of one order, against its closed form at 60 digits
    r = RDP(orders=(order,), epsilons=(rho,))
    with mp.workdps(DPS):
        a = mpf(order)
        truth_delta = min(mp.mpf(1), mp.exp((a - 1) * (mpf(rho) - 1)) / a * (1 - 1 / a) ** (a - 1))
        assert mpf(r.delta(1.0)) >= truth_delta
        truth_eps = max(mp.mpf(0), mpf(rho) + mp.log(1 - 1 / a) - (mp.log(mpf(1e-6)) + mp.log(a))
                        / (a - 1))
        assert mpf(r.epsilon(1e-6)) >= truth_eps
        composed = compose_rdp([r, r], weights=[3, 2])
        assert Fraction(composed.at(order)) >= 5 * Fraction(rho)


@settings(max_examples=80, deadline=None)
@given(mu=st.floats(1e-3, 30.0), log_alpha=st.floats(-300.0, 0.0), eps=st.floats(-30.0, 30.0))
def test_closed_form_curves_are_rounded_down_and_profiles_up(mu: float, log_alpha: float,
                                                             eps: float) -> None:
    alpha = 10.0 ** log_alpha
    with mp.workdps(DPS):
        a, m = mpf(alpha), mpf(mu)
        # G_mu(a) = Phi(Phi^{-1}(1 - a) - mu), Phi^{-1}(1 - a) by bisection on the upper tail
        lo, hi = mp.mpf(-40), mp.mpf(40)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if mp.ncdf(-mid) > a else (lo, mid)
        assert mpf(GaussianTradeoff(mu)(alpha)) <= mp.ncdf(lo - m)
        # Laplace (DRS Sec. 2.3): 1 - e^m a, e^-m / (4a), e^-m (1 - a)
        w = mp.exp(-m)
        lap = 1 - a / w if a < w / 2 else (w / (4 * a) if a <= mp.mpf(1) / 2 else w * (1 - a))
        assert mpf(LaplaceTradeoff(mu)(alpha)) <= lap
        t = mpf(eps)
        lap_delta = (mp.mpf(0) if t >= m else 1 - mp.exp((t - m) / 2) if t >= -m
                     else 1 - mp.exp(t))
        assert mpf(LaplaceTradeoff(mu).profile(eps)) >= lap_delta


# ============================================================ item 8: large eps and bad input


def test_large_eps_is_legal_and_answered_in_log_space() -> None:
    g = PureDP(800.0)
    assert mpf(g.delta(1.0)) >= mp_pure_profile(800.0, 1.0)
    assert mp_pure_epsilon(800.0, 1e-5) <= mpf(g.epsilon(1e-5)) <= mp_pure_epsilon(800.0, 1e-5) \
        + mpf(1e-9)
    with mp.workdps(DPS):
        atoms, q_inf = mp_product_pair([(800.0, 0.0)])
        for alpha in [0.0, 1e-300, 0.3, 1.0]:
            assert mpf(g.tradeoff(alpha)) <= mp_curve(atoms, q_inf, alpha)
        atoms2, q2 = mp_product_pair([(800.0, 0.0), (800.0, 0.0)])
        two = compose([g, g])
        assert mpf(two.delta(1500.0)) >= mp_profile(atoms2, q2, 1500.0)
        assert mpf(two.epsilon(1e-5)) >= 1600 + mp.log(1 - mpf(1e-5)) - mpf(1e-9)
    assert ApproxDP(800.0, 1e-3).epsilon(1e-2) <= 800.0
    assert FiniteLossTradeoff.randomized_response(800.0, 5).profile(3.0) <= 1.0
    assert FiniteLossTradeoff.approx_dp(800.0, 0.1).profile(799.0) >= 0.1


BAD: list[tuple[str, Callable[[], object], type[Exception], str]] = [
    ("10**400 eps", lambda: PureDP(10**400), ValueError, "eps"),
    ("10**400 mu", lambda: GDP(10**400), ValueError, "mu"),
    ("10**400 delta", lambda: GDP(1.0).epsilon(10**400), ValueError, "delta"),
    ("pure_dp_to_zcdp overflow", lambda: pure_dp_to_zcdp(1e308), ValueError, "eps"),
    ("gdp_to_zcdp overflow", lambda: gdp_to_zcdp(1e308), ValueError, "mu"),
    ("CLTGDP gamma inf", lambda: CLTGDP(1.0, gamma=math.inf), ValueError, "gamma"),
    ("GaussianTradeoff inf", lambda: GaussianTradeoff(math.inf), ValueError, "mu"),
    ("gdp_to_tradeoff inf", lambda: gdp_to_tradeoff(math.inf), ValueError, "mu"),
    ("delta(True)", lambda: GDP(1.0).delta(True), TypeError, "eps"),
    ("delta('0.5')", lambda: GDP(1.0).delta("0.5"), TypeError, "eps"),  # type: ignore[arg-type]
    ("delta(None)", lambda: GDP(1.0).delta(None), TypeError,  # type: ignore[call-overload]
     "eps must be a real number or an array of reals, got NoneType"),
    ("delta([1, 'a'])", lambda: PureDP(1.0).delta([1, "a"]), TypeError, "eps"),  # type: ignore
    ("from_points str", lambda: PiecewiseLinearTradeoff.from_points(["0.1"], [0.5]), TypeError,
     "alphas"),
    ("eps_grid inf", lambda: profile_to_tradeoff(GDP(1.0).delta, eps_grid=math.inf), ValueError,
     "eps_grid"),
    ("eps_grid []", lambda: profile_to_tradeoff(GDP(1.0).delta, eps_grid=[]), ValueError,
     "eps_grid"),
    ("compose_basic []", lambda: compose_basic([]), ValueError, "at least one guarantee"),
    ("compose_advanced []", lambda: compose_advanced([]), ValueError, "at least one guarantee"),
    ("compose_clt []", lambda: compose_clt([]), ValueError, "at least one guarantee"),
    ("compose_rdp []", lambda: compose_rdp([]), ValueError, "at least one guarantee"),
    ("compose []", lambda: compose([]), ValueError, "at least one guarantee"),
    ("compose(0.5)", lambda: compose(0.5), TypeError,  # type: ignore[call-overload]
     "compose takes a list of guarantees"),
    ("compose(g)", lambda: compose(PureDP(0.1)), TypeError,  # type: ignore[call-overload]
     "compose takes a list of guarantees"),
    ("compose(g, g)", lambda: compose(PureDP(0.1), PureDP(0.2)), TypeError,  # type: ignore
     "positional"),
    ("gdp_to_approx_dp positional", lambda: gdp_to_approx_dp(1.0, 1e-6), TypeError,  # type: ignore
     "positional"),
    ("gdp_to_approx_dp neither", lambda: gdp_to_approx_dp(1.0), TypeError, "delta="),
    ("zcdp_to_approx_dp both", lambda: zcdp_to_approx_dp(0.1, delta=1e-6, eps=1.0), TypeError,
     "delta="),
    ("rdp_to_approx_dp positional",
     lambda: rdp_to_approx_dp(to_rdp(GDP(1.0)), 1e-6), TypeError, "positional"),  # type: ignore
    ("pure_dp_to_approx_dp positional", lambda: pure_dp_to_approx_dp(1.0, 0.5),  # type: ignore
     TypeError, "positional"),
    ("gdp_to_approx_dp delta=0", lambda: gdp_to_approx_dp(1.0, delta=0.0), ValueError, "delta"),
    ("RDP orders None", lambda: RDP(orders=None, epsilons=(1.0,)), TypeError,  # type: ignore
     "orders"),
    ("RDP orders nan", lambda: pure_dp_to_rdp(1.0, [math.nan]), ValueError, "orders"),
    ("compose_rdp weights", lambda: compose_rdp([to_rdp(GDP(1.0))], weights=[1, 2]), ValueError,
     "weights"),
    ("FiniteLossTradeoff losses", lambda: FiniteLossTradeoff.from_losses([math.nan], [1.0]),
     ValueError, "losses"),
]


@pytest.mark.parametrize(("name", "call", "exc", "words"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_a_clear_error(name: str, call: Callable[[], object], exc: type[Exception],
                                    words: str) -> None:
    with pytest.raises(exc, match=words.replace("(", r"\(").replace("[", r"\[")):
        call()


def test_pure_dp_to_gdp_at_the_largest_eps() -> None:
    mu = pure_dp_to_gdp(1e308).mu  # mu ~ 2 sqrt(2 eps): finite and rounded up
    with mp.workdps(DPS):
        t = mpf(mu) / 2  # Phi(-t) <= 1/(1 + e^eps), by the upper Mills bound phi(t)/t
        assert -t * t / 2 - mp.log(t * mp.sqrt(2 * mp.pi)) <= -mpf(1e308)
        t = mpf(math.nextafter(mu, 0.0) * (1 - 1e-14)) / 2  # and tight: a smaller mu fails, by
        assert -t * t / 2 - mp.log(t * mp.sqrt(2 * mp.pi)) + mp.log1p(-1 / t ** 2) > -mpf(1e308) \
            - mp.log1p(mp.exp(-mpf(1e308)))  # the lower Mills bound (1 - 1/t^2) phi(t)/t


def test_conversions_say_which_float_they_take() -> None:
    assert gdp_to_approx_dp(1.0, delta=1e-6).eps == GDP(1.0).epsilon(1e-6)
    assert gdp_to_approx_dp(1.0, eps=1.0).delta_ == GDP(1.0).delta(1.0)
    assert pure_dp_to_approx_dp(1.0, eps_prime=0.5).delta_ == PureDP(1.0).delta(0.5)
    assert pure_dp_to_approx_dp(1.0, delta=0.0).eps == 1.0
    assert zcdp_to_approx_dp(0.1, delta=1e-6).delta_ == 1e-6
