"""``accountant.core.normal``: Phi and log Phi against mpmath at 50 digits over the whole range the
accountant reads (the far lower tail in log space included), the float and array paths alike, the
special values, and the pair (Phi(z), Phi(-z))."""

from __future__ import annotations

import math
import sys

import mpmath
import numpy as np
import pytest

from accountant.core.normal import log_ndtr, ndtr, ndtr_pair
from accountant.core.types import UNIT_ROUNDOFF as U

mpf = mpmath.mpf


def points() -> np.ndarray:
    """A grid and random points on [-37.5, 40], dense near the region boundaries |z| = 0.663 and
    5.657 (t = 0.46875 and 4)."""
    rng = np.random.default_rng(11)
    return np.concatenate([np.linspace(-37.5, 40.0, 1501), rng.uniform(-37.5, 10.0, 800),
                           rng.uniform(-1.0, 1.0, 300), rng.uniform(0.6, 0.7, 100),
                           -rng.uniform(0.6, 0.7, 100), -rng.uniform(5.5, 5.8, 100),
                           rng.uniform(5.5, 5.8, 100)])


def rel_errors(values: np.ndarray, exact: list[mpmath.mpf]) -> np.ndarray:
    return np.array([float(abs(mpf(float(v)) - e) / abs(e)) for v, e in zip(values, exact, strict=True)])


def test_ndtr_is_within_7_u_of_mpmath() -> None:
    z = points()
    with mpmath.workdps(50):
        exact = [mpmath.ncdf(mpf(v)) for v in z.tolist()]
        err = rel_errors(ndtr(z), exact)
        scalar = rel_errors(np.array([float(ndtr(v)) for v in z.tolist()]), exact)
    assert err.max() <= 7.0 * U, (err.max() / U, z[err.argmax()])
    assert scalar.max() <= 7.0 * U, (scalar.max() / U, z[scalar.argmax()])
    assert err.max() >= 1.0 * U  # the check can fail: the errors are not all zero


def test_ndtr_below_the_normal_range_errs_by_subnormal_ulps() -> None:
    """Where Phi(z) < 5e-308 the value is subnormal or 0, within 3 subnormal ulp of the exact one
    (far below ``UNDERFLOW``, the absolute error the tails' bounds allow there)."""
    z = np.linspace(-45.0, -37.5, 801)
    with mpmath.workdps(50):
        worst = max(float(abs(mpf(float(v)) - mpmath.ncdf(mpf(x))))
                    for v, x in zip(ndtr(z).tolist(), z.tolist(), strict=True))
    assert worst <= 3 * math.ulp(0.0)
    assert ndtr(np.array([-38.0]))[0] > 0.0 and float(ndtr(-45.0)) == 0.0


def test_log_ndtr_is_within_7_u_of_mpmath_down_to_the_far_tail() -> None:
    z = np.concatenate([-np.geomspace(1.0, 1e60, 300), [-1e100, -1e150], points()[points() < 30.0]])
    with mpmath.workdps(50):
        exact = [mpmath.log1p(-mpmath.ncdf(-mpf(v))) if v > 0 else mpmath.log(mpmath.ncdf(mpf(v)))
                 for v in z.tolist()]
        err = rel_errors(log_ndtr(z), exact)
        scalar = rel_errors(np.array([float(log_ndtr(v)) for v in z.tolist()]), exact)
    assert err.max() <= 7.0 * U, (err.max() / U, z[err.argmax()])
    assert scalar.max() <= 7.0 * U, (scalar.max() / U, z[scalar.argmax()])


def test_special_values() -> None:
    z = np.array([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e300, -1e300, sys.float_info.min])
    phi = ndtr(z)
    assert math.isnan(phi[0]) and phi[1] == 1.0 and phi[2] == 0.0 and phi[3] == phi[4] == 0.5
    assert phi[5] == 1.0 and phi[6] == 0.0 and phi[7] == 0.5
    log_phi = log_ndtr(z)
    assert math.isnan(log_phi[0]) and log_phi[1] == 0.0 and log_phi[2] == -math.inf
    assert log_phi[3] == math.log(0.5) and log_phi[5] == 0.0 and log_phi[6] == -math.inf
    for i, v in enumerate(z.tolist()):  # the float path agrees on every special value
        assert np.array_equal(ndtr(v), phi[i], equal_nan=True)
        assert np.array_equal(log_ndtr(v), log_phi[i], equal_nan=True)


@pytest.mark.parametrize("shape", [(0,), (5,), (3, 4), (20_000,)])
def test_pair_is_phi_at_z_and_at_minus_z(shape: tuple[int, ...]) -> None:
    """(Phi(z), Phi(-z)) of one evaluation equal ndtr at z and at -z, in any shape (and across the
    chunks of a large array)."""
    z = np.random.default_rng(2).uniform(-40.0, 40.0, shape)
    below, above = ndtr_pair(z)
    assert below.shape == above.shape == shape
    assert np.array_equal(below, ndtr(z)) and np.array_equal(above, ndtr(-z))
    assert np.all((below >= 0.0) & (below <= 1.0))
