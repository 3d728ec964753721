"""Batch samplers of DP-SGD: the no-amplification bound of shuffling against its closed form, the
shuffled maximum's law against quadrature and simulation, its lower bound against the exact
one-epoch value, lower <= upper, monotonicity, the Poisson path unchanged, dp_accounting's
fixed-size figure, and refusals."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from accountant import (
    GDP,
    batches_per_epoch,
    check_sampler,
    dpsgd_epsilon,
    dpsgd_pld,
    sampler_bounds,
    shuffle_gdp,
    shuffle_max_cdf,
    shuffle_max_pmfs,
)


def _gdp_epsilon(mu: float, delta: float) -> float:
    """The exact epsilon of mu-GDP at delta, solved in mpmath from
    delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    m = mpmath.mpf(mu)
    def gap(e: mpmath.mpf) -> mpmath.mpf:
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2) - delta

    return float(mpmath.findroot(gap, 10.0))


def test_shuffle_upper_is_gdp_of_the_epochs() -> None:
    g = shuffle_gdp(0.01, 1.0, 1000)
    assert g.mu == pytest.approx(math.sqrt(10), rel=1e-15) and g.mu >= math.sqrt(10)
    assert g.epsilon(1e-5) == pytest.approx(_gdp_epsilon(math.sqrt(10), 1e-5), rel=1e-9)
    assert round(g.epsilon(1e-5), 4) == 17.8566
    # a partial last epoch counts as a full one; the rate only sets the epoch length
    assert shuffle_gdp(0.01, 1.0, 1001).mu == pytest.approx(math.sqrt(11))
    assert shuffle_gdp(0.5, 2.0, 1).mu == pytest.approx(0.5)


def _density(x: mpmath.mpf, s: float, k: int, m: int, shift: int) -> mpmath.mpf:
    """d/dx of the max's CDF, derived by hand: the shifted coordinate's density times the others'
    CDF, plus each unshifted coordinate's density times the rest's CDF."""
    def phi(u: mpmath.mpf) -> mpmath.mpf:
        return mpmath.npdf(u / s) / s

    def cdf(u: mpmath.mpf) -> mpmath.mpf:
        return mpmath.ncdf(u / s)

    w = mpmath.mpf(m) / k
    shifted = phi(x - shift) * cdf(x) ** (m - 1) + (m - 1) * cdf(x - shift) * phi(x) * cdf(x) ** (m - 2)
    return w * shifted + (1 - w) * m * phi(x) * cdf(x) ** (m - 1)


@pytest.mark.parametrize(("s", "k", "m"), [(1.0, 4, 4), (0.7, 10, 3), (2.0, 1, 1), (1.3, 20, 20)])
def test_shuffled_max_cdf_is_the_integral_of_its_density(s: float, k: int, m: int) -> None:
    for shift in (1, 2):
        for a, b in ((-3.0, -1.0), (-1.0, 0.5), (0.5, 2.0), (2.0, 4.5)):
            by_quad = mpmath.quad(lambda u, h=shift: _density(u, s, k, m, h), mpmath.linspace(a, b, 4))
            ours = shuffle_max_cdf(b, s, k, m, shift) - shuffle_max_cdf(a, s, k, m, shift)
            assert float(ours) == pytest.approx(float(by_quad), rel=1e-9, abs=1e-30)
        assert float(shuffle_max_cdf(-60.0 * s, s, k, m, shift)) < 1e-300
        assert float(shuffle_max_cdf(60.0 * s + 2, s, k, m, shift)) == 1.0


def test_shuffled_max_cells_have_the_simulated_law() -> None:
    """Seeded simulation of the epoch (a uniform position of K, m released) against the cell
    masses: a chi-square test at level 1e-3 for each law."""
    rng = np.random.default_rng(2026)
    s, k, m, n = 1.0, 5, 4, 200_000
    edges, p, q = shuffle_max_pmfs(s, k, m, cells=10)
    assert p.sum() == pytest.approx(1.0, abs=1e-12) and q.sum() == pytest.approx(1.0, abs=1e-12)
    for shift, masses in ((2, p), (1, q)):
        z = rng.normal(0.0, s, size=(n, m))
        pos = rng.integers(0, k, size=n)
        hit = pos < m
        z[np.flatnonzero(hit), pos[hit]] += shift
        counts = np.bincount(np.searchsorted(edges, z.max(axis=1), side="left"), minlength=masses.size)
        expected = masses * n
        big = expected > 5  # pool the far tails
        obs = np.append(counts[big], counts[~big].sum())
        exp = np.append(expected[big], expected[~big].sum())
        assert stats.chisquare(obs, exp).pvalue > 1e-3


def _one_epoch_epsilon(s: float, k: int, delta: float) -> float:
    """The exact epsilon of the one-epoch max pair (both orders), in mpmath: the likelihood ratio
    of the max is increasing, so each order's delta(eps) is read at the crossing point."""
    def cdf(x: mpmath.mpf, shift: int) -> mpmath.mpf:
        return shuffle_max_cdf(float(x), s, k, k, shift)

    def dens(x: mpmath.mpf, shift: int) -> mpmath.mpf:
        return _density(x, s, k, k, shift)

    def delta_at(e: mpmath.mpf) -> mpmath.mpf:
        up = mpmath.findroot(lambda x: mpmath.log(dens(x, 2)) - mpmath.log(dens(x, 1)) - e, (-20.0, 40.0),
                             solver="illinois")
        pq = (1 - cdf(up, 2)) - mpmath.exp(e) * (1 - cdf(up, 1))
        down = mpmath.findroot(lambda x: mpmath.log(dens(x, 1)) - mpmath.log(dens(x, 2)) - e, (-30.0, 10.0),
                               solver="illinois")
        qp = cdf(down, 1) - mpmath.exp(e) * cdf(down, 2)
        return max(pq, qp)

    return float(mpmath.findroot(lambda e: delta_at(e) - delta, (0.5, 6.0), solver="illinois"))


def test_shuffle_lower_bound_is_below_and_near_the_exact_one_epoch_value() -> None:
    with mpmath.workdps(30):
        exact = _one_epoch_epsilon(1.0, 4, 1e-3)
    b = sampler_bounds("shuffle", 0.25, 1.0, 4)
    lower = b.epsilon_lower(1e-3)
    assert exact * 0.99 <= lower <= exact <= b.epsilon_upper(1e-3)


def test_shuffle_headline_bracket() -> None:
    acct = dpsgd_epsilon(0.01, 1.0, 1000, 1e-5, sampler="shuffle")
    poisson = dpsgd_epsilon(0.01, 1.0, 1000, 1e-5, also=())
    assert acct.sampler == "shuffle" and acct.adjacency == "add_remove"
    assert 9.3 <= acct.epsilon_lower <= acct.epsilon_upper == shuffle_gdp(0.01, 1.0, 1000).epsilon(1e-5)
    assert acct.epsilon_lower > 5 * poisson.epsilon_upper  # the gap of the construction
    assert acct.clt_epsilon is None and acct.rdp_epsilon is None
    assert acct.epsilon(1e-6) >= GDP(math.sqrt(10)).epsilon(1e-6)


@settings(max_examples=3, deadline=None)
@given(st.sampled_from([2, 4, 5]), st.floats(0.6, 2.0), st.integers(1, 12))
def test_shuffle_lower_is_below_upper(k: int, s: float, steps: int) -> None:
    b = sampler_bounds("shuffle", 1.0 / k, s, steps)
    assert b.epsilon_lower(1e-5) <= b.epsilon_upper(1e-5)


def test_shuffle_bounds_fall_with_noise_and_grow_with_epochs() -> None:
    def pair(s: float, steps: int) -> tuple[float, float]:
        b = sampler_bounds("shuffle", 0.5, s, steps)
        return b.epsilon_lower(1e-5), b.epsilon_upper(1e-5)

    lo1, up1 = pair(1.0, 2)
    lo2, up2 = pair(1.5, 2)
    lo3, up3 = pair(1.0, 6)
    assert lo2 < lo1 and up2 < up1 and lo3 > lo1 and up3 > up1


def test_poisson_path_is_unchanged() -> None:
    default = dpsgd_epsilon(0.01, 1.1, 100, 1e-5, also=("clt",))
    named = dpsgd_epsilon(0.01, 1.1, 100, 1e-5, also=("clt",), sampler="poisson")
    assert (default.epsilon_lower, default.epsilon_upper, default.clt_epsilon) == \
        (named.epsilon_lower, named.epsilon_upper, named.clt_epsilon)
    assert (default.epsilon_lower, default.epsilon_upper) == dpsgd_pld(0.01, 1.1, 100).epsilon_bracket(1e-5)
    assert default.sampler == "poisson" and default.adjacency == "add_remove"


def test_fixed_against_dp_accounting() -> None:
    """dp_accounting's RDP bound for sampling without replacement (replace-one; its noise
    multiplier is relative to the replace-one sensitivity, 2C here, so sigma/2) is a looser
    sound bound: ours is below it and our lower bound below ours."""
    dpa = pytest.importorskip("dp_accounting")
    q, s, t, n = 0.01, 1.0, 30, 10_000
    acc = dpa.rdp.RdpAccountant(neighboring_relation=dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(dpa.SelfComposedDpEvent(
        dpa.SampledWithoutReplacementDpEvent(n, round(q * n), dpa.GaussianDpEvent(s / 2)), t))
    theirs = acc.get_epsilon(1e-5)
    acct = dpsgd_epsilon(q, s, t, 1e-5, sampler="fixed")
    assert acct.adjacency == "replace"
    assert acct.epsilon_lower <= acct.epsilon_upper <= theirs


def test_bad_sampler_inputs_are_named() -> None:
    with pytest.raises(ValueError, match="sampler must be one of poisson, fixed, shuffle, got 'shufle'"):
        dpsgd_epsilon(0.01, 1.0, 10, 1e-5, sampler="shufle")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sampler must be one of"):
        check_sampler(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"1/sampling_rate must be a whole number .* sampling_rate=0.03"):
        dpsgd_epsilon(0.03, 1.0, 10, 1e-5, sampler="shuffle")
    with pytest.raises(ValueError, match="batch size dividing the dataset size"):
        dpsgd_epsilon(noise_multiplier=1.0, batch_size=300, dataset_size=10_000, epochs=1, delta=1e-5,
                      sampler="shuffle")
    assert batches_per_epoch(100 / 10_000) == 100
    with pytest.raises(ValueError, match="noise_multiplier"):
        shuffle_gdp(0.5, -1.0, 3)


def test_opacus_style_accountant_with_a_sampler() -> None:
    from accountant import OpacusAccountant

    acct = OpacusAccountant(sampler="shuffle")
    for _ in range(30):
        acct.step(noise_multiplier=1.0, sample_rate=0.1)
    one = dpsgd_epsilon(0.1, 1.0, 30, 1e-5, sampler="shuffle")
    assert acct.get_epsilon(1e-5) == pytest.approx(one.epsilon_upper, rel=1e-12)
    assert acct.get_epsilon_bracket(1e-5) == pytest.approx((one.epsilon_lower, one.epsilon_upper), rel=1e-12)
    acct.step(noise_multiplier=2.0, sample_rate=0.1)  # a second segment: one more (partial) epoch
    assert acct.get_epsilon(1e-5) == pytest.approx(GDP(math.sqrt(3 + 0.25)).epsilon(1e-5), rel=1e-9)
    state = acct.state_dict()
    assert state["sampler"] == "shuffle"
    with pytest.raises(ValueError, match="sampler 'shuffle' cannot be loaded"):
        OpacusAccountant().load_state_dict(state)
    with pytest.raises(ValueError, match="1/sampling_rate must be a whole number"):
        acct.step(noise_multiplier=1.0, sample_rate=0.3)
    with pytest.raises(ValueError, match="poisson must be False or None"):
        acct.get_epsilon(1e-5, poisson=True)
    with pytest.raises(ValueError, match="sampler must be one of"):
        OpacusAccountant(sampler="uniform")  # type: ignore[arg-type]
