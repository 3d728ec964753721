"""The discrete Gaussian [@canonne2020discrete]: its window, normaliser and masses with certified
relative errors, and the exact check of a discrete Gaussian against mu-GDP.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from accountant.core.normal import log_ndtr
from accountant.core.rounding import LIBM_REL
from accountant.core.types import UNIT_ROUNDOFF, FloatArray
from accountant.core.validation import check_count, check_real

#: Window of the discrete Gaussian curve, in standard deviations on each side (tails < e^-800).
DISCRETE_GAUSSIAN_TAIL = 40.0


#: Largest variance for which a discrete Gaussian curve is built (a window of ~2^25 atoms).
DISCRETE_GAUSSIAN_MAX_SIGMA2 = 2**30


def check_sigma2(sigma2: float | Fraction, high: float | None = DISCRETE_GAUSSIAN_MAX_SIGMA2) -> Fraction:
    if isinstance(sigma2, bool) or not isinstance(sigma2, (int, float, Fraction)):
        raise TypeError(f"sigma2 must be a real number or a Fraction, got {type(sigma2).__name__}")
    if (isinstance(sigma2, float) and not math.isfinite(sigma2)) or sigma2 <= 0:
        raise ValueError(f"sigma2 must be finite and > 0, got {str(sigma2)[:40]}")
    if high is not None and sigma2 > high:
        raise ValueError(f"sigma2 must be <= {high} for an exact curve (use the zCDP bound beyond), "
                         f"got {str(sigma2)[:40]}")
    return Fraction(sigma2)


def discrete_gaussian_window(sigma2: float | Fraction, tail: float = DISCRETE_GAUSSIAN_TAIL) -> int:
    """m = ceil(tail sigma) (+1): the half-width of the window of ``FiniteLossTradeoff.discrete_gaussian``,
    whose curve has 2 m + shift + 1 loss atoms."""
    return math.isqrt(math.ceil(check_sigma2(sigma2, None) * Fraction(tail) ** 2)) + 1


#: gamma_3 / (1 - gamma_3) [@higham2002accuracy, Lemma 3.1]: a = j^2 / (2 s2) with s2 = sigma2
#: rounded, j*j and the quotient rounded (doubling is exact) errs by gamma_3 a / (1 - gamma_3)
#: relative to the computed a.
_GAMMA_3 = 3.0 * UNIT_ROUNDOFF / (1.0 - 3.0 * UNIT_ROUNDOFF)
_GAUSS_EXPONENT_REL = _GAMMA_3 / (1.0 - _GAMMA_3)


#: Bound on an exact mass whose computed value is below the normal range (2^-1022): exp is not
#: relatively accurate there, so such masses are not held (0) and charged at +-inf instead.
GAUSS_UNHELD_MASS = 2.0 ** -1020


def gauss_log_norm(m: int, s2: float) -> tuple[float, float]:
    """log Z for Z = sum_{|j| <= m} exp(-j^2/(2 sigma2)) (s2: sigma2 rounded to a double), and a
    bound on the absolute error of the value returned [@higham2002accuracy, Lemma 3.1].

    Z = 1 + 2 S with S = sum_{j=1}^m e^{-a_j}: each computed term errs relatively by at most
    gamma_3' a_j (the exponent, ``_GAUSS_EXPONENT_REL``) plus LIBM_REL (exp), or absolutely by
    2^-1070 when it is subnormal; S is summed correctly rounded (``math.fsum``, u); log1p has
    slope <= 1 on [0, inf) and adds LIBM_REL of its value. The error sum is taken with 0.1% margin
    for its own rounding."""
    j = np.arange(1, m + 1, dtype=np.float64)
    a = j * j / (2.0 * s2)
    t = np.exp(-a)
    s = math.fsum(t.tolist())
    err_s = 1.001 * (float(np.sum(t * (_GAUSS_EXPONENT_REL * a + LIBM_REL))) + UNIT_ROUNDOFF * s) \
        + m * 2.0 ** -1070
    log_z = math.log1p(2.0 * s)
    return log_z, 1.001 * (2.0 * err_s + LIBM_REL * log_z)


def gauss_masses(d: FloatArray, s2: float, log_z: float, log_z_err: float,
                 excess: float = 0.0) -> tuple[FloatArray, float]:
    """The masses exp(-d^2/(2 sigma2) - log Z) at the integers ``d`` (log Z from ``gauss_log_norm``
    with its error ``log_z_err``; ``excess`` bounds Z'/Z - 1 when the masses stand for
    exp(-d^2/(2 sigma2)) / Z' with a larger normaliser Z'), and r: every mass returned is within
    r relatively of the exact one, except those below the normal range, returned as 0, whose
    exact values are below ``GAUSS_UNHELD_MASS``.

    Why: the argument -a - log_z (a = d^2/(2 s2)) errs absolutely by
    eta(a) = gamma_3' a + u (a + log_z) + log_z_err [@higham2002accuracy, Lemma 3.1; the
    subtraction's rounding is relative to a + log_z], so the mass by a factor e^{+-eta}, times
    exp's LIBM_REL, times Z'/Z in [1, 1 + excess]: r = expm1(eta(max a) + LIBM_REL + excess),
    with 0.1% margin. For a ~ 700 eta is ~ 4 u a, some 2800 u: far above the 8 u that finite pairs assume
    of masses given without a declared error."""
    a = d * d / (2.0 * s2)
    mass = np.exp(-a - log_z)
    mass = np.where(mass >= 2.0 ** -1022, mass, 0.0)
    top = float(a.max()) if a.size else 0.0
    eta = _GAUSS_EXPONENT_REL * top + UNIT_ROUNDOFF * (top + log_z) * (1.0 + 2.0 * UNIT_ROUNDOFF) + log_z_err
    return mass, 1.001 * math.expm1(eta + 1.001 * LIBM_REL + excess)


def discrete_gaussian_points(sigma2: Fraction, shift: int,
                              tail: float) -> tuple[NDArray[np.int64], float, float, float, float]:
    """Support window [-m, shift + m], sigma2 as a float, log Z of N_Z(0, sigma2) summed over
    [-m, m] with its error bound (``gauss_log_norm``; the rest is below exp(-tail^2/2)
    relatively), and an upper bound on Q's mass outside the window, 2 P(Y > m).

    sum_{y > m} e^{-y^2/(2 sigma2)} <= e^{-m^2/(2 sigma2)} e^{-m/sigma2} / (1 - e^{-m/sigma2});
    the bound computed leaves out the factor e^{-m/sigma2}, so it exceeds the sum by a factor
    e^{m/sigma2} >= 1 + tail/sigma >= 1 + 3e-5 (sigma2 <= 2^30): far more than the rounding of its
    log (~1e-12) and of exp (LIBM_REL). Below 2^-1022 (log below -708) exp is not relatively
    accurate; the rest is then below 2^-1020, which is used."""
    m = discrete_gaussian_window(sigma2, tail)
    s2 = float(sigma2)
    log_z, log_z_err = gauss_log_norm(m, s2)
    log_tail = math.log(2.0) - (m * m) / (2.0 * s2) - math.log(-math.expm1(-m / s2)) - log_z
    outside = 2.0 ** -1020 if log_tail < -708.0 else math.exp(log_tail)
    return np.arange(-m, shift + m + 1, dtype=np.int64), s2, log_z, log_z_err, outside


def discrete_gaussian_is_gdp(shift: int, sigma2: int | Fraction, mu: float) -> bool:
    """Whether the curve of (N_Z(0, sigma2), shift + N_Z(0, sigma2)) lies above G_mu
    [@dong2022gaussian, Def. 2.7], decided more finely than the generic knot comparison of
    ``accountant.implies``: the tails are summed in log space.

    The exact curve is piecewise linear with knots (alpha_y, beta_y) = (P(Y >= y), Q(Y < y)), y in Z,
    and G_mu is convex, so G_mu <= curve everywhere iff at every knot. Each knot is compared on the
    side that is accurate in doubles: beta_y >= Phi(z - mu) where beta_y <= 1/2, else
    1 - beta_y <= Phi(mu - z), with z = Phi^{-1}(1 - alpha_y) taken from the smaller of alpha_y and
    1 - alpha_y. Knots whose tails underflow doubles (below 1e-300, beyond 40 sigma) are not compared.
    """
    return _discrete_gaussian_is_gdp(check_count("shift", shift, low=0), check_sigma2(sigma2),
                                     check_real("mu", mu, low=0.0, high=math.inf, high_open=True))


@lru_cache(maxsize=64)
def _discrete_gaussian_is_gdp(shift: int, sigma2: Fraction, mu: float) -> bool:
    if shift == 0:
        return True
    y, s2, log_z, _, _ = discrete_gaussian_points(sigma2, shift, DISCRETE_GAUSSIAN_TAIL)
    m = -int(y[0])
    # log P(Y = j) for j in [-m - shift - 1, shift + m]
    j = np.arange(-m - shift - 1, shift + m + 1, dtype=np.float64)
    lp = -(j * j) / (2.0 * s2) - log_z
    le = np.logaddexp.accumulate(lp)  # log P(Y <= j)
    ge = np.logaddexp.accumulate(lp[::-1])[::-1]  # log P(Y >= j)
    iy = y + m + shift + 1  # index of j = y
    log_alpha = ge[iy]  # P(Y >= y)
    log_one_minus_alpha = le[iy - 1]  # P(Y <= y - 1)
    log_beta = le[iy - shift - 1]  # Q(Y < y) = P(Y <= y - shift - 1)
    log_power = ge[iy - shift]  # Q(Y >= y) = P(Y >= y - shift)
    floor_ = math.log(1e-300)
    ok = (log_alpha > floor_) & (log_one_minus_alpha > floor_) & (log_beta > floor_) & (log_power > floor_)
    small_alpha = log_alpha < math.log(0.5)
    from scipy import special  # imported on use: scipy.special is slow to import

    z = np.where(small_alpha, -special.ndtri(np.exp(np.where(small_alpha, log_alpha, 0.0))),
                 special.ndtri(np.exp(np.where(small_alpha, 0.0, log_one_minus_alpha))))
    low_beta = log_beta <= math.log(0.5)
    good = np.where(low_beta, log_beta >= log_ndtr(z - mu), log_power <= log_ndtr(mu - z))
    return bool(np.all(good | ~ok))
