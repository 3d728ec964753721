"""The vector smooth-sensitivity release: the declared constants against the slides' and NRS's
statement, the smooth bound checked exhaustively on a small grid, the float-safe lattice, an audit of
the release (and of a broken instance), and its accuracy against the closed form p s2 gamma^2."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import verify
from accountant import ApproxDP
from mechanisms import SmoothSensitivityVector, coordinate_quantile_release

GRID = (0.0, 0.5, 1.0)


def test_constants_are_the_papers() -> None:
    """xi = eps/(4(p + 2 ln(2/delta))) (slides) less 2^-10, below NRS's beta = eps/(4(p + ln(2/delta)));
    alpha = eps/(5 sqrt(2 ln(2/delta))); guarantee (eps, delta)."""
    for p, eps, delta in [(2, 1.0, 1e-6), (5, 0.5, 1e-3), (40, 0.1, 1e-9)]:
        m = coordinate_quantile_release(0.0, 1.0, 11, p, eps, delta)
        slides = eps / (4 * (p + 2 * math.log(2 / delta)))
        assert m.smoothing == pytest.approx(slides * (1 - 2**-10), rel=1e-14) and m.smoothing < slides
        assert m.smoothing < eps / (4 * (p + math.log(2 / delta)))
        assert m.alpha <= eps / (5 * math.sqrt(2 * math.log(2 / delta)))
        assert m.guarantee() == ApproxDP(eps, delta)
        assert math.sqrt(p) * 2.0**m.exponent <= m.resolution * 2.0**-12


def _ls2(x: np.ndarray, stat) -> float:  # type: ignore[no-untyped-def]
    f = stat(x)
    best = 0.0
    for i in range(x.shape[0]):
        for v in itertools.product(GRID, repeat=x.shape[1]):
            y = x.copy()
            y[i] = v
            best = max(best, float(np.linalg.norm(stat(y) - f)))
    return best


def test_smooth_bound_is_a_smooth_upper_bound_exhaustively() -> None:
    """Every dataset of 3 records in {0, 1/2, 1}^2 (729): S(x) >= LS_2(x) (brute force over the
    grid's neighbours) and S(x) <= e^xi S(x') for every neighbour x' (xi = 0.3, so the ratio bites)."""
    m = coordinate_quantile_release(0.0, 1.0, 3, 2, 1.0, 1e-6, xi=0.3)
    datasets = [np.array(c, dtype=float).reshape(3, 2) for c in itertools.product(GRID, repeat=6)]
    s = {d.tobytes(): m.smooth_sensitivity(d) for d in datasets}
    for x in datasets:
        sx = s[x.tobytes()]
        assert sx >= _ls2(x, m.value) - 1e-12
        for i in range(3):
            for v in itertools.product(GRID, repeat=2):
                y = x.copy()
                y[i] = v
                assert sx <= math.exp(0.3) * s[y.tobytes()] * (1 + 1e-12)


def _pair() -> tuple[np.ndarray, np.ndarray]:
    """Coordinate medians with local sensitivity 0 at x and 1/2 at its neighbour y."""
    x = np.array([[0.0, 0.5, 0.5, 0.5, 1.0]] * 2).T
    y = np.array([[0.0, 0.0, 0.5, 0.5, 1.0]] * 2).T
    return x, y


def test_audit_of_the_release_and_of_a_broken_smoothing() -> None:
    """The release at (1, 1e-6) on the pair above: no violation (1500 draws per input, 95%). Broken:
    xi = 50 makes S the local sensitivity (1e-22 at x, 0.71 at y): the noise scales differ by 10^20
    and the audit refutes (eps lower bound 5.7 at 2000 draws in development)."""
    x, y = _pair()
    m = coordinate_quantile_release(0.0, 1.0, 5, 2, 1.0, 1e-6)
    assert not verify.audit(m, [(x, y)], m.guarantee(), samples=1500, seed=0).violation
    bad = coordinate_quantile_release(0.0, 1.0, 5, 2, 1.0, 1e-6, xi=50.0)
    assert bad.smooth_sensitivity(x) < 1e-20 < 0.7 < bad.smooth_sensitivity(y)
    assert verify.audit(bad, [(x, y)], bad.guarantee(), samples=1500, seed=0).violation


def test_outputs_on_the_lattice_and_privacy_loss_consistent() -> None:
    x, y = _pair()
    m = coordinate_quantile_release(0.0, 1.0, 5, 2, 1.0, 1e-6)
    out = m.sample(x, np.random.default_rng(0), size=50)
    k = np.ldexp(out, -m.exponent)
    assert np.array_equal(k, np.round(k))
    assert np.allclose(m.privacy_loss(out, x, x), 0.0)
    assert np.allclose(m.privacy_loss(out, x, y), -m.privacy_loss(out, y, x))


def test_accuracy_matches_the_closed_form() -> None:
    """n = 10^4 records N(1/2, 0.1^2) in [0, 1]^3, eps = 1, delta = 1e-6: 400 releases; the mean of
    ||out - median||^2 / (s2 gamma^2) is chi^2_{3 * 400}/400 (up to the rounding of the median, a
    2^-37 effect): inside its 99.9% interval. The noise per coordinate is about (S + tau)/alpha with S
    of order the spacing of the data near the median times 1/xi: 0.062 here (0.62 at n = 10^3)."""
    rng = np.random.default_rng(3)
    d = rng.normal(0.5, 0.1, size=(10_000, 3))
    m = coordinate_quantile_release(0.0, 1.0, 10_000, 3, 1.0, 1e-6)
    scale = m.noise_scale(d)
    assert scale == pytest.approx((m.smooth_sensitivity(d) + m.resolution) / m.alpha, rel=1e-6)
    assert scale < 0.1
    out = m.sample(d, rng, size=400)
    ss = float((((out - np.median(d, axis=0)) / scale) ** 2).sum())
    lo, hi = float(stats.chi2.ppf(0.0005, 1200)), float(stats.chi2.ppf(0.9995, 1200))
    assert lo < ss < hi


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match="eps"):
        coordinate_quantile_release(0.0, 1.0, 5, 2, 2.0, 1e-6)
    with pytest.raises(ValueError, match="dim"):
        coordinate_quantile_release(0.0, 1.0, 5, 0, 1.0, 1e-6)
    with pytest.raises(TypeError, match="callable"):
        SmoothSensitivityVector(1, 2, None, 2, 1.0, 1e-6, 1.0, 1e-3)  # type: ignore[arg-type]
    m = coordinate_quantile_release(0.0, 1.0, 5, 2, 1.0, 1e-6)
    with pytest.raises(ValueError):
        m.sample(np.zeros((4, 2)), np.random.default_rng(0))
