"""LDP / BDP / CDP / BCDP guarantees [@aliakbarpour2025enhancing]: Propositions 1, 3, 4 and 6 against
exact enumeration over finite priors, the c-vector of Theorem 2, and the refusal to compose BCDP
(Example 2), with the enumeration and the sampled check of verify.bcdp."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant import (
    BCDP,
    BayesianDP,
    BCDPCompositionError,
    CoordinateDP,
    Ledger,
    LocalDP,
    PureDP,
    baseline_zeta,
    bcdp_cdp_vector,
    cdp_to_bcdp,
    compose,
    guarantee_from_dict,
    guarantee_to_dict,
    implies,
    ldp_to_bcdp,
    ldp_to_bdp,
    mean_cdp_vector,
)
from verify.bcdp import (
    FinitePrior,
    enumerate_bcdp,
    enumerate_cdp,
    enumerate_ldp,
    sampled_bcdp_check,
)

TOL = 1e-12


def product_rr(eps: tuple[float, ...]):  # type: ignore[no-untyped-def]
    """Independent binary randomized response on each coordinate (eps_i = 0: the bit is not
    released); output y in {0,1}^d indexed as an integer; exactly eps-CDP."""
    d = len(eps)
    keep = np.array([math.exp(e) / (1 + math.exp(e)) for e in eps])
    ys = (np.arange(2**d)[:, None] >> np.arange(d)[None, :]) & 1

    def channel(x: np.ndarray) -> np.ndarray:
        same = ys[None, :, :] == x[:, None, :].astype(int)
        return np.asarray(np.prod(np.where(same, keep, 1 - keep), axis=2), dtype=np.float64)

    return channel


def random_channel(rng: np.random.Generator, d: int, k: int):  # type: ignore[no-untyped-def]
    table = rng.uniform(0.05, 1.0, size=(2**d, k))
    table /= table.sum(axis=1, keepdims=True)

    def channel(x: np.ndarray) -> np.ndarray:
        idx = (x.astype(int) << np.arange(d)).sum(axis=1)
        return np.asarray(table[idx], dtype=np.float64)

    return channel


# --- types, validation, serialisation ---------------------------------------------------------


def test_bad_input_names_the_parameter() -> None:
    with pytest.raises(ValueError, match="eps"):
        LocalDP(-1.0)
    with pytest.raises(ValueError, match="q"):
        BCDP((1.0, 2.0), 1.5)
    with pytest.raises(ValueError, match="one entry per coordinate"):
        BCDP((1.0, 2.0), (0.1,))
    with pytest.raises(ValueError, match="deltas"):
        BCDP((math.nan,))
    with pytest.raises(ValueError, match="at least one"):
        CoordinateDP(())
    with pytest.raises(TypeError, match="q"):
        BCDP((1.0,), "0.1")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-decreasing"):
        mean_cdp_vector((1.0, 0.5), 2.0, 0.1, 0.5)
    with pytest.raises(ValueError, match="zeta"):
        mean_cdp_vector((0.5, 1.0), 2.0, 0.1, 1.5)


def test_round_trip_and_whole_record_curves() -> None:
    for g in (LocalDP(0.5), BayesianDP(0.3), CoordinateDP((0.1, 0.2), 0.25),
              BCDP((0.2, 2.0), (0.1, 1.0), 2.0), BCDP((0.2, 0.3), 0.5)):
        assert guarantee_from_dict(guarantee_to_dict(g)) == g
    # LDP levels answer as pure DP; a BCDP without an LDP level protects no whole record (Example 1)
    assert LocalDP(1.0).epsilon(0.0) == pytest.approx(1.0)
    assert CoordinateDP((0.1, 0.2)).ldp_level == pytest.approx(0.3)
    assert BCDP((0.2, 0.3), 0.5).epsilon(0.5) == math.inf
    assert not implies(BCDP((0.2, 0.3), 0.5), PureDP(100.0))


# --- Propositions 1, 3, 4 against enumeration ------------------------------------------------


@pytest.mark.parametrize("q", [0.0, 0.3, 0.7, 1.0])
def test_prior_of_appendix_b1_has_dependence_q(q: float) -> None:
    prior = FinitePrior.appendix_b1(3, q)
    assert prior.dependence() == pytest.approx((q,) * 3, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("q", [0.0, 0.25, 0.6, 1.0])
def test_propositions_1_3_4_bound_the_enumerated_bcdp(seed: int, q: float) -> None:
    rng = np.random.default_rng(seed)
    channel = random_channel(rng, 3, 4)
    grid = FinitePrior.uniform_bits(3)  # the mechanism's LDP and CDP levels, over every record
    eps = enumerate_ldp(grid, channel)
    c = enumerate_cdp(grid, channel)
    prior = FinitePrior.appendix_b1(3, q)
    got = enumerate_bcdp(prior, channel)
    # Prop. 3 (and Prop. 1: BDP on the prior's support is at most the LDP level)
    assert max(got) <= eps + TOL
    assert ldp_to_bcdp(LocalDP(eps), 3).deltas == (eps,) * 3
    assert ldp_to_bdp(LocalDP(eps)) == BayesianDP(eps)
    # Prop. 4, part 1 (c alone) and part 2 (c with the LDP level)
    for known in (math.inf, eps):
        bound = cdp_to_bcdp(CoordinateDP(c, known), q).deltas
        assert all(x <= b + TOL for x, b in zip(got, bound, strict=True))


@pytest.mark.parametrize("q", [0.0, 0.2, 0.5, 0.9])
def test_cdp_mechanism_leaks_through_correlation_as_prop4_says(q: float) -> None:
    # release only x_2 by randomized response: c = (0, e), yet under the prior x_1 leaks
    e = 1.5
    channel = product_rr((0.0, e))
    prior = FinitePrior.appendix_b1(2, q)
    got = enumerate_bcdp(prior, channel)
    big = math.exp(e)  # closed form: P(y=1 | x1=1) / P(y=1 | x1=0)
    golden = math.log(((1 + q) * big + 1 - q) / ((1 - q) * big + 1 + q))
    assert got[0] == pytest.approx(golden, rel=1e-12, abs=1e-15)
    assert got[0] <= cdp_to_bcdp(CoordinateDP((0.0, e)), q).deltas[0] + TOL
    assert (got[0] > 0) == (q > 0)


# --- Proposition 6: the linear programme ------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(0.05, 3.0), min_size=2, max_size=3), st.floats(0.0, 1.0))
def test_prop6_vector_meets_the_target(deltas: list[float], q: float) -> None:
    c = bcdp_cdp_vector(deltas, q)
    assert all(x >= 0 for x in c)
    assert all(x <= t for x, t in zip(cdp_to_bcdp(CoordinateDP(c), q).deltas, deltas, strict=True))


@pytest.mark.parametrize("q", [0.1, 0.5, 1.0])
def test_prop6_vector_is_bcdp_by_enumeration(q: float) -> None:
    deltas = (0.3, 0.8, 2.0)
    c = bcdp_cdp_vector(deltas, q)
    a = np.array([[1 / deltas[i] if i == j else 1 / math.log1p(math.expm1(deltas[i]) / q)
                   for j in range(3)] for i in range(3)])
    assert (a @ np.array(c) <= 1 + 1e-9).all()
    got = enumerate_bcdp(FinitePrior.appendix_b1(3, q), product_rr(c))
    assert all(x <= t + TOL for x, t in zip(got, deltas, strict=True))


def test_prop6_infeasible_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="infeasible"):
        bcdp_cdp_vector((0.2, 0.2, 2.0), 0.5, lower=(0.15, 0.15, 1.0))
    with pytest.raises(ValueError, match="infeasible"):
        bcdp_cdp_vector((0.0, 1.0), 0.5, lower=(0.1, 0.0))
    assert bcdp_cdp_vector((0.0, 1.0), 0.5) == (0.0, 0.0)  # a zero delta silences x_1 and, via q, x_2
    assert bcdp_cdp_vector((0.5, 1.0), 0.0) == pytest.approx((0.5, 1.0))  # independent: c = delta


# --- Theorem 2's c-vector ----------------------------------------------------------------------

FIG3 = (0.2, 0.2) + (2.0,) * 8


@pytest.mark.parametrize("q", [0.05, 0.3, 0.9])
def test_theorem2_vector(q: float) -> None:
    for zeta in (0.25, 0.5, (1 + q) / 2, 1.0):
        c = mean_cdp_vector(FIG3, 2.0, q, zeta)
        assert all(b >= a for a, b in itertools.pairwise(c))
        cd = min(math.log((math.exp(zeta * 0.2) + q - 1) / q), 2.0)
        assert c[-1] == pytest.approx(cd, rel=1e-12)
        if 0.2 < cd < 2.0:  # the first term of (16) binds and c_d > delta_1: c_1 = (1 - zeta) delta_1
            assert c[0] == pytest.approx((1 - zeta) * 0.2, abs=1e-12)
        if cd <= 0.2:  # c_d <= every delta_i: c = c_d 1
            assert c == pytest.approx((cd,) * 10, rel=1e-12)
        bcdp = cdp_to_bcdp(CoordinateDP(c, c[-1]), (q,) * 9 + (1.0,))
        assert all(x <= t for x, t in zip(bcdp.deltas, FIG3, strict=True))
        assert implies(bcdp, BCDP(FIG3, q, 2.0))
    # zeta* = log(1 + q(e^delta_1 - 1)) / delta_1 gives the baseline c = delta_1 1
    star = baseline_zeta(FIG3, 2.0, q)
    assert star == pytest.approx(math.log1p(q * math.expm1(0.2)) / 0.2, rel=1e-14)
    assert mean_cdp_vector(FIG3, 2.0, q, star) == pytest.approx((0.2,) * 10, rel=1e-12)
    # independent coordinates: c = min(delta, eps)
    assert mean_cdp_vector(FIG3, 2.0, 0.0, 0.5) == pytest.approx(FIG3)


# --- ordering and composition -----------------------------------------------------------------


def test_ordering() -> None:
    t = BCDP((0.2, 0.5), 0.3)
    assert implies(LocalDP(0.2), t) and not implies(LocalDP(0.3), t)  # Prop. 3
    assert implies(CoordinateDP((0.01, 0.1)), t)  # Prop. 4
    assert not implies(CoordinateDP((0.15, 0.3)), t)
    assert implies(BCDP((0.1, 0.4), 0.5), t) and not implies(BCDP((0.1, 0.4), 0.2), t)  # q too small
    assert not implies(BCDP((0.1, 0.4), 0.5), BCDP((0.2, 0.5), 0.3, eps=1.0))  # no LDP level
    assert implies(LocalDP(0.4), BayesianDP(0.5)) and implies(LocalDP(0.4), CoordinateDP((0.5, 0.4)))
    assert implies(LocalDP(0.4), PureDP(0.4))  # eps-LDP per record is eps-DP under replacement


def test_composition_of_ldp_and_cdp_and_refusal_for_bcdp() -> None:
    assert compose([LocalDP(0.5), LocalDP(0.25)]) == LocalDP(0.75)
    cdp = compose([CoordinateDP((0.1, 0.2)), CoordinateDP((0.1, 0.2))])
    assert isinstance(cdp, CoordinateDP) and cdp.c == pytest.approx((0.2, 0.4))
    g = BCDP((0.2, 1.0), 0.1, 1.0)
    assert compose([g]) is g
    for gs in ([g, g], [g, PureDP(1.0)]):
        with pytest.raises(BCDPCompositionError, match="Example 2"):
            compose(gs)
    ledger = Ledger(budget=BCDP((0.5, 2.0), 0.1, 2.0))
    ledger.record(g, label="first")
    with pytest.raises(BCDPCompositionError, match="do not compose"):
        ledger.record(g, label="second")


# --- Example 2 and the sampled check ----------------------------------------------------------


def example2_sampler(copies: int):  # type: ignore[no-untyped-def]
    def sampler(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        b = x.astype(int)
        outs = []
        for _ in range(copies):
            first = rng.integers(0, 2, size=b.shape[0]) == 0
            outs.append(np.where(first[:, None], np.stack([b[:, 0] ^ b[:, 1], b[:, 2]], axis=1),
                                 np.stack([b[:, 1], b[:, 0] ^ b[:, 2]], axis=1)))
        return np.concatenate(outs, axis=1)
    return sampler


def example2_channel(copies: int):  # type: ignore[no-untyped-def]
    ys = list(itertools.product((0, 1), repeat=2 * copies))

    def one(b: np.ndarray) -> list[tuple[int, int]]:
        return [(b[0] ^ b[1], b[2]), (b[1], b[0] ^ b[2])]

    def channel(x: np.ndarray) -> np.ndarray:
        out = np.zeros((x.shape[0], len(ys)))
        for r, rec in enumerate(x.astype(int)):
            for branches in itertools.product(one(rec), repeat=copies):
                out[r, ys.index(tuple(v for pair in branches for v in pair))] += 0.5**copies
        return out
    return channel


def test_example2_composition_failure_is_detected() -> None:
    prior = FinitePrior.uniform_bits(3)
    assert enumerate_bcdp(prior, example2_channel(1))[0] == 0.0
    assert enumerate_bcdp(prior, example2_channel(2))[0] == math.inf
    rng = np.random.default_rng(2)
    # error level 1e-3 per call: a false refutation of a true claim has probability <= 1e-3
    one = sampled_bcdp_check(prior, example2_sampler(1), (0.0, 0.0, 0.0), 4000, rng)
    assert not one[0].refuted
    two = sampled_bcdp_check(prior, example2_sampler(2), (0.0, 0.0, 0.0), 4000, rng)
    assert two[0].refuted and two[0].lower > 3.0


def test_sampled_check_refutes_cdp_read_as_bcdp_under_correlation() -> None:
    e = 2.0
    keep = math.exp(e) / (1 + math.exp(e))

    def release_x2(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        # randomized response on x_2 through an exact integer coin (keep = e^2/(1+e^2) ~ 0.8808)
        k = rng.integers(0, 10**6, size=x.shape[0]) < round(keep * 10**6)
        return np.where(k, x[:, 1], 1 - x[:, 1])

    claim = (0.0, e)  # "c-CDP with c_1 = 0, so coordinate 1 is safe": false under correlation
    correlated = sampled_bcdp_check(FinitePrior.appendix_b1(2, 0.8), release_x2, claim, 4000,
                                    np.random.default_rng(3))
    assert correlated[0].refuted
    independent = sampled_bcdp_check(FinitePrior.appendix_b1(2, 0.0), release_x2, claim, 4000,
                                     np.random.default_rng(4))
    assert not independent[0].refuted


@pytest.mark.parametrize("seed", range(3))
def test_theorem1_tests_on_every_region_match_the_enumerated_level(seed: int) -> None:
    """Theorem 1: (pi, M) is delta-BCDP iff e^{delta_i} alpha + beta >= 1 for every rejection region
    R and values a, a' (alpha = P(R | x_i = a), beta = 1 - P(R | x_i = a')). Checked over all 2^4
    regions of a 4-output mechanism: it holds at the enumerated delta_i and fails just below it."""
    rng = np.random.default_rng(seed)
    channel = random_channel(rng, 3, 4)
    prior = FinitePrior.appendix_b1(3, 0.4)
    pmf = channel(prior.support)
    deltas = enumerate_bcdp(prior, channel)
    regions = np.array(list(itertools.product((0, 1), repeat=4)), dtype=bool)
    for i, d_i in enumerate(deltas):
        cond = prior.conditional_weights(i) @ pmf  # (values, outputs)
        worst = math.inf
        for r in regions:
            mass = cond[:, r].sum(axis=1)
            for a, b in itertools.permutations(range(cond.shape[0]), 2):
                worst = min(worst, math.exp(d_i) * mass[a] + (1 - mass[b]) - 1)
        assert worst >= -1e-12
        below = min(math.exp(d_i - 1e-3) * cond[a, r].sum() + 1 - cond[b, r].sum() - 1
                    for r in regions for a, b in itertools.permutations(range(cond.shape[0]), 2))
        assert below < 0
