"""Renyi DP of the Poisson-subsampled Gaussian [@mironov2019sampled]: exact integer orders, certified
series at fractional orders, and its KL divergence.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Callable, Sequence

import mpmath
import numpy as np

from accountant.core.normal import log_ndtr
from accountant.core.rounding import LIBM_REL, round_up
from accountant.core.types import MACHINE_EPSILON, FloatArray
from accountant.core.validation import check_count, check_real
from accountant.notions.guarantees import RDP

#: Orders of the RDP comparison: 1.1 to 10.9 by 0.1 (fractional orders tighten the bound by up to
#: 2% where the best order is small; ``benchmarks/rdp_orders.py`` measures it), then integers.
RDP_ORDERS: tuple[float, ...] = (*(1.0 + x / 10.0 for x in range(1, 100)), *map(float, range(11, 64)),
                                 80.0, 96.0, 128.0, 160.0, 192.0, 256.0, 384.0, 512.0)


def subsampled_gaussian_rdp(sampling_rate: float, noise_multiplier: float, steps: int = 1,
                            orders: Sequence[float] = RDP_ORDERS) -> RDP:
    """RDP of T Poisson-subsampled Gaussian steps [@mironov2019sampled; @abadi2016deep]: at an integer
    order a, eps(a) = T/(a-1) log sum_k C(a,k) (1-q)^{a-k} q^k e^{(k^2-k)/(2 sigma^2)}
    [@mironov2019sampled, Thm 5], summed in log space and rounded up by a bound on its float error; at
    a fractional order a > 1 the two-series bound of [@mironov2019sampled, Sec. 3.3]
    (``_log_a_fractional``), or, where 1/sigma^2 exceeds ``FRACTIONAL_SERIES_MAX``, the convex
    interpolation of the integer orders on either side (``_log_a_between_integers``). Order 1, the KL
    divergence, is ``subsampled_gaussian_kl`` (T steps: T times it). Both directions of the pair are
    covered: D_a(mu0 || mu) <= D_a(mu || mu0) [@mironov2019sampled, Sec. 3.2] (and
    tests/test_dpsgd_rdp.py checks both by quadrature)."""
    q, s, t = check_dpsgd_parameters(sampling_rate, noise_multiplier, steps)
    if not isinstance(orders, Sequence) or isinstance(orders, str) or not orders:
        raise TypeError(f"orders must be a non-empty sequence of reals > 1, got {orders!r}")
    eps = []
    for a in orders:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, float, np.integer, np.floating)):
            raise TypeError(f"orders must hold real numbers > 1, got {a!r}")
        a = check_real("orders", a, low=1.0, low_open=True, high=1e5)
        if a == math.floor(a):
            per_step = _log_a_integer(q, s, int(a)) / (a - 1)
        elif q == 1.0:  # the Gaussian mechanism itself: a / (2 sigma^2) [@mironov2017renyi, Prop. 7]
            per_step = a / (2.0 * s * s)
        elif 1.0 / (s * s) > FRACTIONAL_SERIES_MAX:
            per_step = _log_a_between_integers(q, s, a) / (a - 1)
        else:
            per_step = _log_a_fractional(q, s, a) / (a - 1)
        eps.append(math.nextafter(t * per_step * (1.0 + 4.0 * MACHINE_EPSILON), math.inf))
    return RDP(orders=tuple(float(a) for a in orders), epsilons=tuple(eps))


def _log_a_integer(q: float, s: float, a: int) -> float:
    """log A_a, A_a = sum_k C(a,k) (1-q)^{a-k} q^k e^{(k^2-k)/(2 s^2)} [@mironov2019sampled, Thm 5],
    rounded up. Since the binomial weights sum to 1, A_a - 1 = sum_{k>=2} C(a,k) (1-q)^{a-k} q^k
    expm1((k^2-k)/(2 s^2)), a sum of positive terms, taken in log space (no cancellation, so the
    bound stays tight when A_a - 1 is tiny); log A_a = log1p(A_a - 1). Each term's logarithm errs by
    a few ulp of the magnitudes it is made of, bounded by 16 ulp of their sum and added, as are the
    (a + 8) ulp of summing and the final log [@higham2002accuracy, Sec. 3.1]."""
    k = np.arange(2, a + 1, dtype=np.float64)
    log_1mq = math.log1p(-q) if q < 1.0 else -math.inf
    x = (k * k - k) / (2.0 * s * s)
    with np.errstate(over="ignore"):
        log_em1 = np.where(x < 30.0, np.log(np.expm1(np.minimum(x, 30.0))), x + np.log1p(-np.exp(-x)))
    from scipy import special  # imported on use: scipy.special is slow to import

    log_c = special.gammaln(a + 1.0) - special.gammaln(k + 1.0) - special.gammaln(a - k + 1.0)
    with np.errstate(invalid="ignore"):
        head = np.where(k == a, 0.0, (a - k) * log_1mq)
    terms = log_c + head + k * math.log(q) + log_em1
    lse = float(special.logsumexp(terms))
    parts = np.abs(log_c) + np.where(np.isfinite(head), np.abs(head), 0.0) + np.abs(k * math.log(q)) \
        + np.abs(log_em1) + x + 1.0
    err = 16.0 * MACHINE_EPSILON * (float(np.max(np.where(np.isfinite(terms), parts, 0.0))) + a + 8)
    # logaddexp(0, x) = log1p(e^x) for x < 0: exp's and log1p's LIBM_REL relatively, and a sum
    return math.nextafter(float(np.logaddexp(0.0, lse + err)) * (1.0 + 2.0 * LIBM_REL
                                                                  + 2.0 * MACHINE_EPSILON), math.inf)


#: The largest 1/sigma^2 at which a fractional order takes the series of ``_log_a_fractional``:
#: its head needs digits in proportion to 1/sigma^2 (0.5 s for the 99 fractional orders of
#: ``RDP_ORDERS`` at sigma = 0.1, 5 s at 0.05, 33 s at 0.03). Past it the orders take
#: ``_log_a_between_integers``, a looser bound from the integer orders on either side.
FRACTIONAL_SERIES_MAX = 200.0


def _log_a_between_integers(q: float, s: float, a: float) -> float:
    """An upper bound on log A_a at a fractional order a in (k, k+1) from the integer orders on
    either side: f(a) = log A_a = log E_{mu0}[(mu/mu0)^a] is convex in a (Hoelder's inequality;
    [@vanerven2014renyi]) with f(1) = 0, so f(a) <= (k+1-a) f(k) + (a-k) f(k+1). The weights are
    exact (Sterbenz), each f(k) is rounded up by ``_log_a_integer``, and the two products and
    their sum are rounded up."""
    k = math.floor(a)
    low = _log_a_integer(q, s, k) if k >= 2 else 0.0
    high = _log_a_integer(q, s, k + 1)
    return math.nextafter(((k + 1 - a) * low + (a - k) * high) * (1.0 + 4.0 * MACHINE_EPSILON),
                          math.inf)


#: Terms of each series summed before the alternating remainder is taken (multiplied by 4 up to
#: the cap until the first omitted term is below 1e-13 of the quantity sought; any count bounds).
_SERIES_START, _SERIES_CAP = 256, 2**20


#: Leading terms of the first fractional-order series summed in mpmath: those of size 1, a q and
#: a^2 q^2/2 that cancel down to A - 1 (the float error of the rest is O(a^3 q^3) u).
_HEAD = 3


def _log_half_erfcx(y: FloatArray) -> FloatArray:
    """log(erfcx(y)/2), erfcx(y) = e^{y^2} erfc(y); for y < 0 as y^2 + log Phi(-sqrt 2 y)."""
    from scipy import special  # imported on use: scipy.special is slow to import

    with np.errstate(over="ignore", divide="ignore"):
        pos = np.log(special.erfcx(np.maximum(y, 0.0))) - math.log(2.0)
        neg = y * y + log_ndtr(-math.sqrt(2.0) * np.minimum(y, 0.0))
    return np.asarray(np.where(y >= 0.0, pos, neg), dtype=np.float64)


def _split_point(q: float, s: float) -> tuple[float, float]:
    """(z0, log(1 - q')): a double z0 <= s^2 log((1-q)/q) + 1/2, the point where
    q N(1, s^2) = (1-q) N(0, s^2), lowered by a bound on its float error. The series below are
    exactly those of the rate q' with q'/(1-q') = e^{-(z0 - 1/2)/s^2}, q' >= q, whose divergences
    (both directions) are larger: the pair at rate q is a post-processing of the pair at q' (keep
    the sample w.p. q/q', else replace it by a fresh N(0, s^2) draw)."""
    # log((1-q)/q) as a difference, which does not overflow at q = 5e-324; each log errs by
    # LIBM_REL of itself, the difference by an ulp
    l1, l2 = math.log1p(-q), math.log(q)
    ell = l1 - l2
    z0 = s * s * ell + 0.5
    err = s * s * (6.0 * MACHINE_EPSILON * abs(ell) + 4.0 * MACHINE_EPSILON
                   + 2.0 * LIBM_REL * (abs(l1) + abs(l2))) + 2.0 * MACHINE_EPSILON * abs(z0)
    z0 = math.nextafter(z0 - 2.0 * err, -math.inf)
    return z0, -float(np.logaddexp(0.0, -(z0 - 0.5) / (s * s)))  # log(1 - q') = -log(1 + q'/(1-q'))


#: A series by its first n + 1 terms: (log|t_i|, error bound of that log, sign of t_i).
Terms = Callable[[int], tuple[FloatArray, FloatArray, FloatArray]]


def _series_bounds(term: Terms,
                   alt_from: int, tol: float, skip: int = 0) -> tuple[float, float, float]:
    """(lower, upper, shift): bounds on e^{-shift} sum_{i >= skip} t_i (shift = 0 unless the terms
    would overflow a double), where ``term(n)`` gives, for i = 0..n, log|t_i|,
    a bound on the float error of that logarithm, and the sign of t_i; from i = ``alt_from`` on the
    terms alternate in sign and decrease in size, so the remainder after n terms lies between 0 and
    t_n. The partial sums are taken from terms moved outward by their error bounds, with the
    summation error bounded and added. n grows (x4) until |t_n| <= tol (unshifted), up to
    ``_SERIES_CAP``."""
    u = MACHINE_EPSILON
    n = max(_SERIES_START, 2 * alt_from + 8, 2 * skip + 8)
    while True:
        logs, err, sign = term(n)
        logs, err, sign = logs[skip:], err[skip:], sign[skip:]
        top = float(np.max(logs + err))
        # e^shift is put back by the caller (in mpmath): neither overflow nor underflow (terms
        # flushed to zero or to subnormals would drop mass from an upper bound)
        shift = top if abs(top) > 600.0 else 0.0
        hi = np.exp(logs + err - shift) * (1.0 + LIBM_REL + 2.0 * u)  # exp, the sum, the product
        lo = np.exp(logs - err - shift) * (1.0 - LIBM_REL - 2.0 * u)
        up_terms = np.where(sign[:-1] > 0, hi[:-1], -lo[:-1])
        lo_terms = np.where(sign[:-1] > 0, lo[:-1], -hi[:-1])
        # the leading terms (where the large ones cancel) exactly rounded; the small tail by
        # np.sum, whose error is at most (tail length) u sum |tail| [@higham2002accuracy, Sec. 4.2]
        h = min(n - skip, 2 * alt_from + 16)
        slack = (n + 2) * u * float(np.sum(hi[h:-1]))
        body_up = math.fsum([*up_terms[:h].tolist(), float(np.sum(up_terms[h:])), slack])
        body_lo = math.fsum([*lo_terms[:h].tolist(), float(np.sum(lo_terms[h:])), -slack])
        last = float(hi[-1])
        if last == 0.0 or math.log(last) + shift <= math.log(tol) or n >= _SERIES_CAP:
            break
        n *= 4
    up = body_up + (last if sign[-1] > 0 else 0.0)
    low = body_lo - (last if sign[-1] < 0 else 0.0)
    return (math.nextafter(low - 2.0 * u * abs(low), -math.inf),
            math.nextafter(up + 2.0 * u * abs(up), math.inf), shift)


def _log_binomial_abs(a: float, n: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(log|C(a, i)|, a bound on its float error, sign of C(a, i)) for i = 0..n and a fractional
    a > 0, by the running sum of log|a - i| - log(i + 1) (its error summed alongside)."""
    u = MACHINE_EPSILON
    i = np.arange(n + 1, dtype=np.float64)
    step_a, step_b = np.log(np.abs(a - i[:-1])), np.log(i[1:])
    log_c = np.concatenate([[0.0], np.cumsum(step_a - step_b)])
    # each step: two logs (LIBM_REL), a - i and the difference (u each)
    err = np.concatenate([[0.0], np.cumsum((LIBM_REL + u) * (np.abs(step_a) + np.abs(step_b)
                                                             + 1.0))]) \
        + 2.0 * u * i * np.abs(log_c)
    fa = math.floor(a)
    sign = np.where((i <= fa + 1) | ((i - fa - 1) % 2 == 0), 1.0, -1.0)
    return log_c, err, sign


def subsampled_gaussian_kl(sampling_rate: float, noise_multiplier: float) -> float:
    """RDP at order 1 of one Poisson-subsampled Gaussian step: max(KL(mu || mu0), KL(mu0 || mu)),
    mu0 = N(0, s^2), mu = (1-q) mu0 + q N(1, s^2), rounded up.

    With r = e^{(z - z0)/s^2} = q N(1, s^2)/((1-q) N(0, s^2)) and the integrals split at z0 (r = 1),
    log(1 - q + q e^{(2z-1)/(2 s^2)}) = log(1-q) + log(1 + r) is expanded in r below z0 and in 1/r
    above, as in [@mironov2019sampled, Sec. 3.3]:

        KL(mu || mu0) = log(1-q) + (1-q) [G(1) + J + H(0) + sum_{k>=2} (-1)^k (G(k) + H(1-k))/(k(k-1))],
        KL(mu0 || mu) = -log(1-q) - [psi(z0/s)/s + sum_{k>=1} (-1)^{k+1} (G(k) + H(-k))/k],

    G(k) = int_{z<z0} N(0,s^2) r^k = e^{-z0^2/(2s^2)} erfcx((k - z0)/(s sqrt 2))/2, H(m) = int_{z>z0}
    N(0,s^2) r^m = e^{-z0^2/(2s^2)} erfcx((z0 - m)/(s sqrt 2))/2, J = int_{z>z0} N(0,s^2)(1 + r) log r
    = (psi(z0/s) + e^{(1 - 2 z0)/(2 s^2)} psi((z0 - 1)/s))/s and psi(w) = phi(w) - w Phi(-w) (in
    mpmath). Every series alternates with decreasing terms (r <= 1 below z0, 1/r <= 1 above), so
    ``_series_bounds`` brackets it; the bracket ends that make each KL largest are taken, and the
    assembly is in 50-digit mpmath, rounded up. (y log y and log are the limits of the
    Renyi integrands at order 1, so this is the a -> 1 limit of the fractional-order bound.)"""
    q, s, _ = check_dpsgd_parameters(sampling_rate, noise_multiplier, 1)
    if q == 1.0:
        return math.nextafter(1.0 / (2.0 * s * s) * (1.0 + 4.0 * MACHINE_EPSILON), math.inf)
    z0, _ = _split_point(q, s)
    u = MACHINE_EPSILON
    c0 = -z0 * z0 / (2.0 * s * s)
    fixed = 8.0 * u * (abs(c0) + 1.0)

    def series(first: int, shift: float, log_weight: Callable[[FloatArray], FloatArray],
               positive_parity: int) -> Terms:
        """Terms e^{c0} erfcx((k + shift)/(s sqrt 2))/2 w_k, k >= first, of sign + where
        k % 2 == positive_parity."""
        def term(n: int) -> tuple[FloatArray, FloatArray, FloatArray]:
            k = np.arange(first, first + n + 1, dtype=np.float64)
            y = (k + shift) / (s * math.sqrt(2.0))
            lh, lw = _log_half_erfcx(y), log_weight(k)
            err = fixed + 16.0 * u * (np.abs(lh) + y * y + np.abs(y) + np.abs(lw) + 1.0)
            return c0 + lh + lw, err, np.where(k % 2 == positive_parity, 1.0, -1.0)
        return term

    def over_kk1(k: FloatArray) -> FloatArray:
        return np.asarray(-np.log(k) - np.log(k - 1.0), dtype=np.float64)

    def over_k(k: FloatArray) -> FloatArray:
        return np.asarray(-np.log(k), dtype=np.float64)

    # KL(mu || mu0): sum_{k>=2} (-1)^k G(k)/(k(k-1)) and sum_{k>=2} (-1)^k H(1-k)/(k(k-1))
    fwd = (series(2, -z0, over_kk1, 0), series(2, z0 - 1.0, over_kk1, 0))
    # KL(mu0 || mu): sum_{k>=1} (-1)^{k+1} G(k)/k and sum_{k>=1} (-1)^{k+1} H(-k)/k
    rev = (series(1, -z0, over_k, 1), series(1, z0, over_k, 1))
    # stop the series at 1e-10 of a rough KL (chi^2/2 = q^2 expm1(1/s^2)/2); any stop is sound
    tol = 1e-10 * max(q * q * math.expm1(min(1.0 / (s * s), 700.0)) / 2.0, 1e-300)
    fwd_b = [_series_bounds(t, 0, tol) for t in fwd]
    rev_b = [_series_bounds(t, 0, tol) for t in rev]
    with mpmath.workdps(50):
        fwd_up = [mpmath.mpf(b[1]) * mpmath.exp(b[2]) for b in fwd_b]
        rev_lo = [mpmath.mpf(b[0]) * mpmath.exp(b[2]) for b in rev_b]
        zm, sm = mpmath.mpf(z0), mpmath.mpf(s)

        def psi(w: mpmath.mpf) -> mpmath.mpf:
            return mpmath.npdf(w) - w * mpmath.ncdf(-w)

        def half_erfcx(y: mpmath.mpf) -> mpmath.mpf:
            return mpmath.exp(-zm * zm / (2 * sm * sm)) * mpmath.erfc(y) * mpmath.exp(y * y) / 2

        lq = -mpmath.log1p(mpmath.exp(-(zm - mpmath.mpf(0.5)) / (sm * sm)))  # log(1 - q') exactly
        g_1 = half_erfcx((1 - zm) / (sm * mpmath.sqrt(2)))
        h_0 = half_erfcx(zm / (sm * mpmath.sqrt(2)))
        j = (psi(zm / sm) + mpmath.exp((1 - 2 * zm) / (2 * sm * sm)) * psi((zm - 1) / sm)) / sm
        forward = lq + mpmath.exp(lq) * (g_1 + j + h_0 + fwd_up[0] + fwd_up[1])
        reverse = -lq - (psi(zm / sm) / sm + rev_lo[0] + rev_lo[1])
        return max(0.0, round_up(max(forward, reverse) * (1 + mpmath.mpf(10) ** -30)))


def _log_a_fractional(q: float, s: float, a: float) -> float:
    """An upper bound on log A_a at a fractional order a > 1 [@mironov2019sampled, Sec. 3.3],
    A_a = E_{N(0,s^2)}[(1 - q + q e^{(2z-1)/(2 s^2)})^a]: the integral is split at z0, where
    the two addends are equal, and each side expanded by the binomial series in their ratio r <= 1:

        A_a = sum_i C(a,i) P [erfcx((i - z0)/(s sqrt 2)) + erfcx((z0 - a + i)/(s sqrt 2))] / 2,

    P = (1 - q)^a e^{-z0^2/(2 s^2)} (the Gaussian partial moments times (q/(1-q))^i, written with
    erfcx so that no two large exponents cancel). Past i = floor(a) + 1 the terms of each series
    alternate in sign and decrease in size (|C(a,i+1)/C(a,i)| = (i-a)/(i+1) < 1, and erfcx
    decreases): ``_series_bounds`` adds the first omitted term when positive. The leading terms
    (where those near 1 cancel down to A - 1) are summed in mpmath at a precision that grows with
    the cancellation, their rounding error bounded and added (``_head_excess``); in the rest each term's
    logarithm is raised by a bound on its float error (16 ulp of the magnitudes it is made of) and
    the summation error is added: an upper bound as computed, in floating point."""
    z0, log_1mq = _split_point(q, s)
    u = MACHINE_EPSILON
    log_p = a * log_1mq - z0 * z0 / (2.0 * s * s)
    fixed = 8.0 * u * (abs(a * log_1mq) + z0 * z0 / (2.0 * s * s) + 1.0)

    def series(shift: float) -> Terms:
        @functools.cache
        def term(n: int) -> tuple[FloatArray, FloatArray, FloatArray]:  # the rough pass is reused
            log_c, c_err, sign = _log_binomial_abs(a, n)
            y = (np.arange(n + 1, dtype=np.float64) + shift) / (s * math.sqrt(2.0))
            lh = _log_half_erfcx(y)
            err = c_err + fixed + 16.0 * u * (np.abs(lh) + y * y + np.abs(y) + 1.0)
            return log_c + log_p + lh, err, sign
        return term

    parts = (series(-z0), series(z0 - a))
    alt = math.floor(a) + 1
    excess, margin, dps = _head_excess(z0, s, a)
    with mpmath.workdps(dps):
        def rest(tol: float) -> mpmath.mpf:
            (_, up1, sh1), (_, up2, sh2) = (_series_bounds(parts[0], alt, tol, _HEAD),
                                            _series_bounds(parts[1], alt, tol))
            return mpmath.mpf(up1) * mpmath.exp(sh1) + mpmath.mpf(up2) * mpmath.exp(sh2)

        tol = 1e-13 * max(abs(float(excess + rest(math.inf))), 1e-300)
        total = excess + margin + rest(tol)
        # log1p and the product at dps >= 40 digits: far below the 1e-30 margin
        return max(0.0, round_up(mpmath.log1p(total) * (1 + mpmath.mpf(10) ** -30)))


#: Correct digits the head's excess is computed to (the precision grows until it has them) and
#: the precision's cap (at the cap the answer is still a bound: the margin is added).
_HEAD_DIGITS, _HEAD_MAX_DPS = 40, 3000


def _head_excess(z0: float, s: float, a: float) -> tuple[mpmath.mpf, mpmath.mpf, int]:
    """(excess, margin, dps): the first three terms (``_HEAD``) of the first series of
    ``_log_a_fractional`` minus 1, and a bound on its rounding error, at dps digits.

    With rho = q'/(1-q') = e^{-(z0 - 1/2)/s^2}, P = (1 + rho)^{-a} = (1-q')^a and E = e^{1/s^2},
    term i is C(a,i) P rho^i e^{(i^2-i)/(2s^2)} Phi((z0 - i)/s), so, writing Phi(x) = 1 - Phi(-x),

        head - 1 = P C(a,2) rho^2 (E - 1) - P R3 - P [Phi(-z0/s) + a rho Phi((1 - z0)/s)
                   + C(a,2) rho^2 E Phi((2 - z0)/s)],   R3 = (1+rho)^a - 1 - a rho - C(a,2) rho^2,

    the 1 removed analytically: A - 1 ~ a(a-1) q^2 (e^{1/s^2} - 1)/2 can be far below 1 (1e-60 at
    q = 1e-30, where summing the terms near 1 at a fixed precision would return 0). R3 is
    its binomial series sum_{k>=3} C(a,k) rho^k when a rho <= 1/2 (ratio of terms <= 1/2: the
    remainder is at most the last term), else the difference. Each piece errs by a few ulp, and by
    the rounding of its exponent (relative to the sizes it is made of) magnified by exp: charged
    to ``margin``; dps grows until the excess holds ``_HEAD_DIGITS`` digits beyond it."""
    dps = _HEAD_DIGITS + 10
    while True:
        with mpmath.workdps(dps):
            zm, sm, am = mpmath.mpf(z0), mpmath.mpf(s), mpmath.mpf(a)
            log_rho = -(zm - mpmath.mpf(0.5)) / (sm * sm)
            rho = mpmath.exp(log_rho)
            a_lq = -am * mpmath.log1p(rho)  # log P
            c2 = am * (am - 1) / 2
            unit = mpmath.mpf(10) ** (-dps)
            lead = c2 * mpmath.exp(a_lq + 2 * log_rho) * mpmath.expm1(1 / (sm * sm))
            margin = abs(lead) * (100 + 10 * (abs(a_lq) + 2 * abs(log_rho))) * unit
            if am * rho <= 0.5:
                term, r3, k = c2 * (am - 2) / 3 * rho ** 3, mpmath.mpf(0), 3
                while abs(term) > abs(r3) * unit and k < 100 * dps:
                    r3 += term
                    term *= (am - k) / (k + 1) * rho
                    k += 1
                r3_err = 2 * abs(term) + abs(r3) * 10 * k * unit
            else:
                r3 = mpmath.power(1 + rho, am) - 1 - am * rho - c2 * rho * rho
                r3_err = (mpmath.power(1 + rho, am) + 1 + am * rho + c2 * rho * rho) * 100 * unit
            p = mpmath.exp(a_lq)
            margin += p * (r3_err + abs(r3) * 10 * (abs(a_lq) + 1) * unit)
            tails = [mpmath.ncdf(-zm / sm), am * rho * mpmath.ncdf((1 - zm) / sm),
                     lead / (p * mpmath.expm1(1 / (sm * sm))) * mpmath.exp(1 / (sm * sm))
                     * mpmath.ncdf((2 - zm) / sm)]
            margin += p * mpmath.fsum(tails) * (100 + 10 * (abs(a_lq) + 2 * abs(log_rho)
                                                            + 1 / (sm * sm))) * unit
            excess = lead - p * r3 - p * mpmath.fsum(tails)
            if abs(excess) >= margin * mpmath.mpf(10) ** _HEAD_DIGITS or dps >= _HEAD_MAX_DPS:
                return excess, margin, dps  # (at the cap: still a bound, the margin added)
            lost = mpmath.log10(margin / abs(excess)) if excess != 0 else mpmath.mpf(dps)
            dps = min(_HEAD_MAX_DPS, dps + int(mpmath.ceil(lost)) + _HEAD_DIGITS + 10)


#: The least sampling rate accepted: the least normal double. A subnormal rate carries fewer
#: than 53 bits and its square underflows to 0 (the PLD of 5e-324 reported epsilon = inf, the RDP
#: took seconds); the guarantee at this rate covers every smaller one (the pair at a smaller rate
#: is a post-processing of this one).
MIN_SAMPLING_RATE = sys.float_info.min


def check_sampling_rate(q: float) -> float:
    """A validated Poisson sampling rate in [``MIN_SAMPLING_RATE``, 1]."""
    q = check_real("sampling_rate", q, low=0.0, high=1.0, low_open=True)
    if q < MIN_SAMPLING_RATE:
        raise ValueError(f"sampling_rate must lie in [{MIN_SAMPLING_RATE!r}, 1.0], got {q!r} (a "
                         f"subnormal rate): use sampling_rate={MIN_SAMPLING_RATE!r}, whose "
                         f"guarantee covers every smaller rate")
    return q


def check_dpsgd_parameters(q: float, s: float, t: int) -> tuple[float, float, int]:
    """Validated (sampling_rate, noise_multiplier, steps) of a DP-SGD run."""
    q = check_sampling_rate(q)
    s = check_real("noise_multiplier", s, low=0.0, low_open=True, high=1e100)
    return q, s, check_count("steps", t)
