"""Issue 14, pairs the peers express: mixtures of Gaussians, the truncated discrete Gaussian,
Poisson subsampling of an asymmetric pair, and Poisson subsampling under replace-one adjacency.

Goldens are independent of the accountant: mpmath roots and normal tails for the monotone
Gaussian-mixture losses, exact sums over finite supports, and exact enumeration of every
neighbouring dataset of a tiny domain for the replace-one claim.
"""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from accountant import (
    GDP,
    PLD,
    GaussianPair,
    MixtureGaussianPair,
    SubsampledPair,
    TruncatedDiscreteGaussianPair,
    guarantee_from_dict,
    guarantee_to_dict,
    subsample,
    subsampled_gaussian,
)
from accountant.pld.laws.base import Direction
from tests.support import references as R

REMOVE: Direction = "remove"
ADD: Direction = "add"


# ----------------------------------------------------------------------------- goldens

def _mix_delta(p: list[tuple[float, float]], q: list[tuple[float, float]], eps: float) -> float:
    """H_{e^eps}(Q || P) for unit-variance mixtures with an increasing loss (the campaign's
    mpmath reference ``GaussianMixtureRef``, itself checked against quadrature below)."""
    ref = R.GaussianMixtureRef([(mpmath.mpf(m), mpmath.mpf(w)) for m, w in p],
                               [(mpmath.mpf(m), mpmath.mpf(w)) for m, w in q])
    return float(ref.delta(mpmath.mpf(eps)))


def test_mixture_reference_against_quadrature_and_the_subsampled_step() -> None:
    rem, _ = R.subsample_steps(R.GaussianBase(1.3), 0.2)
    p = [(0.0, 1.0)]
    q = [(0.0, 0.5), (1.0, 0.3), (2.5, 0.2)]
    for eps in (-0.5, 0.0, 0.4, 1.5):
        e = mpmath.mpf(eps)
        assert _mix_delta(p, [(0.0, 0.8), (1.3, 0.2)], eps) == pytest.approx(
            float(rem.delta(e)), rel=1e-15)

        def f(x: mpmath.mpf, e: mpmath.mpf = e) -> mpmath.mpf:
            dq = mpmath.fsum(w * mpmath.npdf(x, m, 1) for m, w in q)
            return max(dq - mpmath.exp(e) * mpmath.npdf(x, 0, 1), 0)

        def loss(x: mpmath.mpf, e: mpmath.mpf = e) -> mpmath.mpf:
            dq = mpmath.fsum(w * mpmath.npdf(x, m, 1) for m, w in q)
            return mpmath.log(dq / mpmath.npdf(x, 0, 1)) - e

        cut = [mpmath.findroot(loss, 1.0)] if loss(-10) < 0 else []  # where the integrand kinks
        quad = mpmath.quad(f, sorted([-mpmath.inf, -5, 0, 5, mpmath.inf, *cut]))
        assert _mix_delta(p, q, eps) == pytest.approx(float(quad), rel=1e-8)


def _pmf_delta(a: np.ndarray, b: np.ndarray, eps: float) -> float:
    """H_{e^eps}(a || b) = sum (a - e^eps b)_+ on a finite support, with mpmath."""
    g = mpmath.e ** mpmath.mpf(eps)
    return float(mpmath.fsum(max(mpmath.mpf(x) - g * mpmath.mpf(y), 0) for x, y in zip(a, b, strict=False)))


def _in_bracket(bracket: tuple[float, float], truth: float, slack: float = 1e-12) -> None:
    lo, up = bracket
    assert lo - slack <= truth <= up + slack, (lo, truth, up)


# ----------------------------------------------------------------------------- 1. mixtures

MIXTURES = [
    (1.0, (0.0, 1.0), (0.9, 0.1)),
    (0.8, (0.0, 1.0, 2.0), (0.81, 0.18, 0.01)),
    (2.0, (0.5, 1.5, 3.0), (0.2, 0.5, 0.3)),
]


@pytest.mark.parametrize("sigma,sens,probs", MIXTURES)
def test_mixture_both_directions_against_mpmath(sigma: float, sens: tuple[float, ...],
                                                probs: tuple[float, ...]) -> None:
    pld = PLD.from_pair(MixtureGaussianPair(sigma, sens, probs))
    p0 = [(0.0, 1.0)]
    mix = [(s / sigma, w) for s, w in zip(sens, probs, strict=True)]
    # add: (mix, N(0)), reflected x -> -x so that its loss increases
    mix_r = [(-m, w) for m, w in mix]
    for eps in (0.0, 0.25, 1.0, 2.5):
        rem, add = _mix_delta(p0, mix, eps), _mix_delta(mix_r, p0, eps)
        for d, truth in ((REMOVE, rem), (ADD, add)):
            lo = pld.law(d, pessimistic=False).delta(eps)
            up = pld.law(d).delta(eps)
            _in_bracket((lo, up), truth)
            assert up - truth < 1e-4
        _in_bracket(pld.delta_bracket(eps), max(rem, add))


def test_mixture_is_the_subsampled_gaussian() -> None:
    """Sensitivities (0, 1) with probs (1 - q, q) are dp_accounting's encoding of DP-SGD."""
    a = PLD.from_pair(MixtureGaussianPair(1.1, (0.0, 1.0), (0.99, 0.01)), count=50)
    b = subsampled_gaussian(1.1, 0.01).self_compose(50)
    ea, eb = a.epsilon_bracket(1e-5), b.epsilon_bracket(1e-5)
    assert ea[0] <= eb[1] and eb[0] <= ea[1]
    assert abs(ea[1] - eb[1]) < 2e-4


def test_mixture_refuses_mixed_signs_and_bad_probs() -> None:
    with pytest.raises(ValueError, match="sensitivities"):
        MixtureGaussianPair(1.0, (-1.0, 1.0), (0.5, 0.5))
    with pytest.raises(ValueError, match="probs must sum to 1"):
        MixtureGaussianPair(1.0, (0.0, 1.0), (0.5, 0.6))
    with pytest.raises(ValueError, match="at least one sensitivity"):
        MixtureGaussianPair(1.0, (0.0, 1.0), (1.0, 0.0))
    with pytest.raises(ValueError, match="same length"):
        MixtureGaussianPair(1.0, (0.0, 1.0), (1.0,))


@settings(max_examples=12, deadline=None)
@given(st.floats(0.5, 3.0), st.lists(st.integers(0, 300).map(lambda k: k / 100), min_size=1,
                                      max_size=3), st.floats(0.0, 3.0))
def test_mixture_bracket_contains_truth(sigma: float, sens: list[float], eps: float) -> None:
    sens = [*sens, 1.0]
    w = [1.0 / len(sens)] * len(sens)
    pld = PLD.from_pair(MixtureGaussianPair(sigma, tuple(sens), tuple(w)))
    mix = [(s / sigma, x) for s, x in zip(sens, w, strict=True)]
    truth = max(_mix_delta([(0.0, 1.0)], mix, eps),
                _mix_delta([(-m, x) for m, x in mix], [(0.0, 1.0)], eps))
    _in_bracket(pld.delta_bracket(eps), truth)


# ----------------------------------------------------------------------------- 2. truncated DG

def _tdg(sigma: float, m: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """P and Q on {-m, ..., m + d} (mpmath, ``references.truncated_discrete_gaussian``)."""
    ref = R.truncated_discrete_gaussian(sigma, m, d)
    return np.array(ref.p, dtype=object), np.array(ref.q, dtype=object)


@pytest.mark.parametrize("sigma,m,d", [(1.0, 3, 1), (2.5, 6, 2), (3.0, 2, 5), (0.7, 0, 1)])
def test_truncated_discrete_gaussian_exact(sigma: float, m: int, d: int) -> None:
    pld = PLD.from_pair(TruncatedDiscreteGaussianPair(sigma, m, d), count=2)
    p, q = _tdg(sigma, m, d)
    # two-fold composition by enumeration of the product support
    p2 = np.array([a * b for a, b in itertools.product(p, p)], dtype=object)
    q2 = np.array([a * b for a, b in itertools.product(q, q)], dtype=object)
    for eps in (0.0, 0.3, 1.0, 3.0, 50.0):
        _in_bracket(pld.delta_bracket(eps), _pmf_delta(q2, p2, eps))


def test_truncated_tends_to_the_discrete_gaussian() -> None:
    wide = PLD.from_pair(TruncatedDiscreteGaussianPair(2.0, 40, 1)).epsilon(1e-6)
    full = PLD.discrete_gaussian(2.0).epsilon(1e-6)
    assert abs(wide - full) < 1e-6
    # a narrow truncation has Q-mass where P has none: delta(inf) = P(Y = m)
    narrow = PLD.from_pair(TruncatedDiscreteGaussianPair(2.0, 3, 1))
    p, _ = _tdg(2.0, 3, 1)
    assert narrow.delta(1e3) == pytest.approx(float(p[-2]), rel=1e-12)


# ----------------------------------------------------------------------------- 3. asymmetric

def _pmf_pair(n: int) -> st.SearchStrategy[tuple[list[int], list[int]]]:
    weights = st.lists(st.integers(0, 20), min_size=n, max_size=n).filter(lambda v: sum(v) > 0)
    return st.tuples(weights, weights)


def _normalise(v: list[int]) -> np.ndarray:
    a = np.asarray(v, dtype=np.float64)
    return np.asarray(a / a.sum(), dtype=np.float64)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 5).flatmap(_pmf_pair), st.floats(0.01, 0.99), st.floats(0.0, 3.0))
def test_asymmetric_pmfs_subsampled_both_directions(ab: tuple[list[int], list[int]], rate: float,
                                                    eps: float) -> None:
    p, q = _normalise(ab[0]), _normalise(ab[1])
    pld = subsample(PLD.from_pmfs(p, q), rate)
    mix = (1 - rate) * p + rate * q
    # remove: (P, mix), delta = H(mix || P); add: (mix, P), delta = H(P || mix)
    rem, add = _pmf_delta(mix, p, eps), _pmf_delta(p, mix, eps)
    _in_bracket((pld.law("remove", False).delta(eps), pld.law("remove").delta(eps)), rem)
    _in_bracket((pld.law("add", False).delta(eps), pld.law("add").delta(eps)), add)
    # monotone in the rate: the truth at a smaller rate is below the bound at a larger one
    small = subsample(PLD.from_pmfs(p, q), rate / 2)
    assert small.delta_bracket(eps)[0] <= pld.delta(eps) + 1e-12


def test_asymmetric_pmfs_subsampled_composed_against_enumeration() -> None:
    p = np.array([0.6, 0.3, 0.1, 0.0])
    q = np.array([0.1, 0.2, 0.3, 0.4])  # Q-mass where P is 0: an atom at +inf
    rate = 0.2
    pld = subsample(PLD.from_pmfs(p, q), rate).self_compose(3)
    mix = (1 - rate) * p + rate * q
    p3 = np.array([x * y * z for x, y, z in itertools.product(p, p, p)])
    m3 = np.array([x * y * z for x, y, z in itertools.product(mix, mix, mix)])
    for eps in (0.0, 0.1, 0.5, 1.0, 2.0):
        rem, add = _pmf_delta(m3, p3, eps), _pmf_delta(p3, m3, eps)
        _in_bracket(pld.delta_bracket(eps), max(rem, add))
        assert pld.delta(eps) - max(rem, add) < 1e-3
        for d, truth in ((REMOVE, rem), (ADD, add)):  # each direction composed on its own
            _in_bracket((pld.law(d, False).delta(eps), pld.law(d).delta(eps)), truth)
    # the two directions differ (the add law is not the remove law's mirror image)
    assert abs(pld.law("add").delta(0.1) - pld.law("remove").delta(0.1)) > 0.01


def test_asymmetric_densities_match_the_mixture_pair() -> None:
    """P = N(0,1), Q = (N(0,1) + N(1.5,1))/2 by densities, subsampled at 0.4, is the mixture
    pair with sensitivities (0, 1.5) and probs (0.8, 0.2): compare both with mpmath."""
    from scipy import stats

    p = stats.norm(0, 1).pdf
    q = lambda x: 0.5 * stats.norm(0, 1).pdf(x) + 0.5 * stats.norm(1.5, 1).pdf(x)  # noqa: E731
    dens = subsample(PLD.from_densities(p, q, np.linspace(-14, 16, 6001)), 0.4)
    pair = PLD.from_pair(MixtureGaussianPair(1.0, (0.0, 1.5), (0.8, 0.2)))
    mix = [(0.0, 0.8), (1.5, 0.2)]
    for eps in (0.0, 0.2, 0.6):
        truth = max(_mix_delta([(0.0, 1.0)], mix, eps),
                    _mix_delta([(-m, w) for m, w in mix], [(0.0, 1.0)], eps))
        _in_bracket(pair.delta_bracket(eps), truth)
        lo, up = dens.delta_bracket(eps)
        assert lo - 1e-7 <= truth <= up + 1e-7  # Simpson quadrature of the cells
        assert up - truth < 1e-3


def test_subsampling_asymmetric_without_replacement_is_refused() -> None:
    g = PLD.from_pmfs([0.5, 0.5], [0.2, 0.8])
    with pytest.raises(ValueError, match="asymmetric"):
        subsample(g, 0.1, "without_replacement")


# ----------------------------------------------------------------------------- 4. replace-one

def _replace_truth(mu: float, rate: float, eps: float) -> float:
    keep = [(0.0, 1 - rate)]
    return _mix_delta([*keep, (-mu, rate)], [*keep, (mu, rate)], eps)


@pytest.mark.parametrize("mu,rate", [(1.0, 0.1), (0.5, 0.5), (2.0, 0.02)])
def test_replace_pair_against_mpmath(mu: float, rate: float) -> None:
    pld = subsample(GDP(mu), rate, adjacency="replace")
    assert pld.directions == ("remove",)  # symmetric
    for eps in (0.0, 0.3, 1.0, 2.0):
        truth = _replace_truth(mu, rate, eps)
        _in_bracket(pld.delta_bracket(eps), truth)
        assert pld.delta(eps) - truth < 1e-4


def _mixture_hockey(a: list[tuple[float, float]], b: list[tuple[float, float]], sigma: float,
                    eps: float) -> float:
    """H_{e^eps}(A || B) for two Gaussian mixtures on a fine grid (error far below 1e-9)."""
    x = np.linspace(-12 * sigma - 4, 12 * sigma + 4, 120_001)
    dens = [sum(w * np.exp(-((x - m) ** 2) / (2 * sigma**2)) for m, w in mix)
            / (sigma * math.sqrt(2 * math.pi)) for mix in (a, b)]
    f = np.maximum(dens[0] - math.exp(eps) * dens[1], 0.0)
    return float(np.sum((f[1:] + f[:-1]) / 2) * (x[1] - x[0]))


def _subsampled_sum(records: tuple[int, ...], rate: float) -> list[tuple[float, float]]:
    """The law of sum_{i in S} x_i over a Poisson sample S: (value, probability) atoms."""
    out: dict[int, float] = {}
    for keep in itertools.product((0, 1), repeat=len(records)):
        w = math.prod(rate if k else 1 - rate for k in keep)
        s = sum(x for x, k in zip(records, keep, strict=True) if k)
        out[s] = out.get(s, 0.0) + w
    return sorted((float(s), w) for s, w in out.items())


def test_replace_dominates_every_neighbouring_dataset_of_a_tiny_domain() -> None:
    """DP-SGD-like sum query: records in {-1, 0, 1} (clipping norm 1), Gaussian noise sigma,
    Poisson rate q, datasets of 2 records; every replace-one neighbouring pair, both orders."""
    sigma, rate = 1.0, 0.3
    pld = subsampled_gaussian(sigma, rate, adjacency="replace")
    add_remove = subsampled_gaussian(sigma, rate)
    for eps in (0.0, 0.5, 1.0):
        worst = 0.0
        for d in itertools.product((-1, 0, 1), repeat=2):
            for i, v in itertools.product(range(2), (-1, 0, 1)):
                d2 = tuple(v if j == i else x for j, x in enumerate(d))
                if d2 == d:
                    continue
                a = [(m, w) for m, w in _subsampled_sum(d, rate)]
                b = [(m, w) for m, w in _subsampled_sum(d2, rate)]
                worst = max(worst, _mixture_hockey(a, b, sigma, eps))
        lo, up = pld.delta_bracket(eps)
        assert worst <= up + 1e-9
        assert worst >= lo - 1e-9  # attained: the pair is tight (records -1 and +1)
        # the pitfall: add/remove accounting under-reports replace-one neighbours
        assert add_remove.delta(eps) < worst - 1e-3


def test_replace_claim_on_a_discrete_mechanism_exactly() -> None:
    """The same structure with exact rational arithmetic: sum of records in {-1, 0, 1} plus
    centred Binomial(4, 1/2) noise, Poisson rate 1/3, datasets of up to 3 records. The worst
    replace-one pair is the one with records -1 and +1 alone: (1-q)Z + qZ_{-1} vs (1-q)Z + qZ_{+1}."""
    rate = Fraction(1, 3)
    noise = {k - 2: Fraction(math.comb(4, k), 16) for k in range(5)}

    def law(records: tuple[int, ...]) -> dict[int, Fraction]:
        out: dict[int, Fraction] = {}
        for keep in itertools.product((0, 1), repeat=len(records)):
            w = math.prod((rate if k else 1 - rate for k in keep), start=Fraction(1))
            s = sum(x for x, k in zip(records, keep, strict=True) if k)
            for z, pz in noise.items():
                out[s + z] = out.get(s + z, Fraction(0)) + w * pz
        return out

    def hockey(a: dict[int, Fraction], b: dict[int, Fraction], g: Fraction) -> Fraction:
        return sum((max(a.get(k, Fraction(0)) - g * b.get(k, Fraction(0)), Fraction(0))
                    for k in set(a) | set(b)), Fraction(0))

    pair = (law((1,)), law((-1,)))
    for g in (Fraction(1), Fraction(3, 2), Fraction(3)):
        bound = hockey(*pair, g)
        worst = Fraction(0)
        for n in (1, 2, 3):
            for d in itertools.product((-1, 0, 1), repeat=n):
                for i, v in itertools.product(range(n), (-1, 0, 1)):
                    d2 = tuple(v if j == i else x for j, x in enumerate(d))
                    worst = max(worst, hockey(law(d), law(d2), g))
        assert worst == bound


def test_replace_combinations_refused_clearly() -> None:
    with pytest.raises(ValueError, match="Gaussian mechanism"):
        subsample(PLD.from_pmfs([0.5, 0.5], [0.2, 0.8]), 0.1, adjacency="replace")
    with pytest.raises(ValueError, match="without replacement is supported under"):
        subsample(GDP(1.0), 0.1, "without_replacement", adjacency="add_remove")
    with pytest.raises(ValueError, match="adjacency must be"):
        subsample(GDP(1.0), 0.1, adjacency="swap")  # type: ignore[arg-type]
    # rate 1 keeps every record: contributions -Delta and +Delta, a Gaussian of 2 mu
    full = subsample(GDP(0.7), 1.0, adjacency="replace").epsilon(1e-6)
    assert full == pytest.approx(PLD.gaussian(1.0, 1.4).epsilon(1e-6), rel=1e-12)


# ----------------------------------------------------------------------------- serialisation

@pytest.mark.parametrize("pair", [
    MixtureGaussianPair(1.5, (0.0, 1.0, 2.0), (0.5, 0.3, 0.2)),
    TruncatedDiscreteGaussianPair(2.0, 7, 2),
    SubsampledPair(GaussianPair(0.8), 0.05, "poisson", "replace"),
    SubsampledPair(MixtureGaussianPair(1.0, (1.0,), (1.0,)), 0.1),
])
def test_new_pairs_round_trip_through_json(pair: object) -> None:
    pld = PLD.from_pair(pair, count=3)  # type: ignore[arg-type]
    back = guarantee_from_dict(json.loads(json.dumps(guarantee_to_dict(pld))))
    assert isinstance(back, PLD)
    assert back.factors == pld.factors
    assert back.epsilon(1e-6) == pld.epsilon(1e-6)
