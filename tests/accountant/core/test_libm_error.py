"""The elementary functions' error model (``LIBM_ULP``): numpy's exp, log, expm1 and log1p may err
by up to 4 ulp (its SVML kernels on AVX-512 machines, numpy PR 19478), glibc's by less than one.
Bounds that assumed about one ulp under-reported on such machines. The machine running the tests
may have either, so the worst case is simulated: every result of those functions moved by
LIBM_ULP ulp in all (``libm_off``: the results of this machine's functions, within an ulp, moved
LIBM_ULP - 1 ulp in one direction). Goldens: mpmath (40 digits)."""

from __future__ import annotations

import math

import mpmath
from hypothesis import example, given, settings
from hypothesis import strategies as st

from accountant import FiniteLossTradeoff
from accountant.pld.distribution import PLD
from tests.support.libm import libm_off

mpf = mpmath.mpf




def two_point_delta(p: list[float], q: list[float], eps: float) -> mpmath.mpf:
    """max over the two orders of sum (a - e^eps b)_+, the doubles taken as exact."""
    with mpmath.workdps(40):
        e = mpmath.exp(mpf(eps))
        return max(mpmath.fsum(max(mpf(a) - e * mpf(b), 0) for a, b in zip(x, y, strict=True))
                   for x, y in ((p, q), (q, p)))


@settings(max_examples=20, deadline=None)
@given(st.floats(1e-12, 1e-4), st.floats(0.05, 0.95), st.sampled_from([-math.inf, math.inf]))
# loss log(0.5 / 1e-9) = 20.03: log's 3.5 ulp there (1.2e-14) exceeded the 2 u (1 + |l|)
# (9.3e-15) by which the pmfs' losses were moved, and delta just below the top atom was 0
@example(1e-9, 0.5, -math.inf)
def test_pmf_top_atom_with_libm_error(a: float, b: float, direction: float) -> None:
    """``log_ratio``: at eps just below the exact top loss the bracket holds the exact delta."""
    p, q = [a, 1.0 - a], [b, 1.0 - b]
    with mpmath.workdps(40):
        top = mpmath.log(mpf(b) / mpf(a))
    eps = math.nextafter(float(top), -math.inf) if float(top) >= top else float(top)
    exact = two_point_delta(p, q, eps)
    with libm_off(direction):
        low, up = PLD.from_pmfs(p, q).delta_bracket(eps)
    assert mpf(low) <= exact <= mpf(up), (eps, low, float(exact), up)


def laplace_masses(b: float, shift: int) -> list[mpmath.mpf]:
    """The discrete Laplace curve's Q-masses (y >= shift, y = shift - 1 .. 1, y <= 0), exact."""
    t = mpmath.exp(-1 / mpf(b))
    z = (1 + t) / (1 - t)
    mid = [t ** (shift - y) / z for y in range(shift - 1, 0, -1)]
    return [1 / (1 - t) / z, *mid, t ** shift / (1 - t) / z]


@settings(max_examples=30, deadline=None)
@given(st.floats(0.02, 5.0), st.integers(1, 12), st.sampled_from([0.0, -math.inf, math.inf]))
# the exponent (shift - y) log r + log_norm errs by ~3 u shift / b: 9.6e-15 relatively here on
# any machine, above the 8 u (1.8e-15) the masses were taken to err by (covered before only
# because the curve adds its losses' error, 2 u shift / b, to the masses')
@example(0.05, 12, 0.0)
def test_discrete_laplace_masses_within_declared_error(b: float, shift: int,
                                                       direction: float) -> None:
    """The curve's masses within its declared error, with this machine's functions and with
    their error at LIBM_ULP in either direction."""
    if direction == 0.0:
        f = FiniteLossTradeoff.discrete_laplace(b, shift)
    else:
        with libm_off(direction):
            f = FiniteLossTradeoff.discrete_laplace(b, shift)
    with mpmath.workdps(40):
        for held, exact in zip(f.q_masses.tolist(), laplace_masses(b, shift), strict=True):
            assert abs(mpf(held) / exact - 1) <= f.mass_rtol, (held, float(exact), f.mass_rtol)
