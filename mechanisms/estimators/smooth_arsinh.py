"""The float-safe lattice arsinh-normal release for smooth sensitivity [@bun2019average], with its
(1/2 eps^2)-CDP guarantee certified numerically.

The law. Z = sinh(sigma Y)/sigma, Y ~ N(0, 1), has density p(z) = phi(y)/sqrt(1 + sigma^2 z^2) at
y = arsinh(sigma z)/sigma. It is not a scale mixture: a change of scale is no shift of an integer
index, so the lattice argument of ``LatticeScaleMixture`` does not carry over. This release keeps the
continuous law and rounds it exactly instead.

The release (``LatticeArsinhNormal``). With the lattice gamma Z, the centre mu(x) = round(f(x)/gamma)
and the scale index Q(x) = ceil(m log2((g(x) + tau)/gamma)) of ``LatticeSmoothNoise``, A = 2^(Q/m)/s
and U uniform on [0, 1), the output is gamma (mu(x) + N) with

    N = round(A Z),  Z = sinh(sigma Y)/sigma,  Y = Phi^(-1)(U),

i.e. N = n iff Phi(y_(n - 1/2)) <= U < Phi(y_(n + 1/2)), y_c = arsinh(sigma c / A)/sigma. The sampler
reads U lazily, 64 bits at a time, as the dyadic interval [M 2^-b, (M + 1) 2^-b), and computes the two
thresholds of a candidate n in mpmath at b + 64 bits; it returns n only when the interval lies inside
[Phi(y_(n-1/2)), Phi(y_(n+1/2))) with a margin 2^-(b+34) on both sides (else it moves n or reads 64
more bits). So the draw has exactly the law of round(A Z) provided mpmath's erfc, log and sqrt are
accurate to 2^-(b+34) absolute at b + 64 bits (they carry guard bits and are accurate to a few ulps;
the margin is 2^30 ulps). No float enters the decision.

Privacy by data processing: mu(x) + N = round(mu(x) + A Z) is a post-processing of the continuous
release mu(x) + A Z, so it suffices to bound that one. With the intermediate R = (scale A(x), centre
mu(x')) of ``smooth_noise``:
- x against R is a shift of |mu(x) - mu(x')| <= 2^(Q/m) = s A lattice steps, i.e. at most s in Z's
  units: D_alpha(Z || Z + a) with |a| <= s (Z is symmetric, so neither the sign of a nor the order of
  the pair matters). Two bounds; the release takes the smaller eps_shift.
  Pure DP. log p is Lipschitz: |d/dz log p(z)| = arsinh(u)/(sigma sqrt(1 + u^2)) + sigma u/(1 + u^2)
  at u = sigma |z|, so the shift is pure eps_shift-DP, eps_shift = s L(sigma), L = the supremum of that
  function (``arsinh_shift_coefficient``). Each term is unimodal in u (the first rises while
  sqrt(1 + u^2) > u arsinh u, a decreasing function of u; the second peaks at u = 1), so on a cell
  [u_i, u_(i+1)] each is at most its value at the end nearer its peak, or its peak inside: L is
  bounded by the largest cell sum on a grid of [0, 64] (step 2^-12), and above 64 by its value at 64
  (both terms fall). Bun & Steinke's shift term s (4 + 3 sigma^2)/(6 sigma) bounds the first term's
  peak 0.6627 by 2/3 and adds the peaks of the two terms.
  Renyi of every order (``arsinh_shift_rho``): rho_shift(s) >= sup_(alpha > 1, |a| <= s)
  D_alpha(Z || Z + a)/alpha, eps_shift = sqrt(2 rho_shift). In Y's coordinates Z + a =
  sinh(sigma S_a(Y))/sigma, S_a(y) = arsinh(sinh(sigma y) + sigma a)/sigma, so with x = sinh(sigma y)
  and c = sigma a the log-likelihood ratio is
      l_a(y) = (S_(-a)(y)^2 - y^2)/2 - ln S_(-a)'(y),   -ln S_(-a)'(y) = ln(1 + c (c - 2x)/(1 + x^2))/2,
  the log-ratio ln p(z)/p(z - a) at z = sinh(sigma y)/sigma. For one a, D_alpha = K(lam)/lam with
  lam = alpha - 1 and K(lam) = ln E[e^(lam l_a(Y))], summed as the dilation's below (over the whole
  line: l_a is not even), with tails from l_a(y) <= min(a |y| + a^2/2 + sigma a/2, a L) (arsinh is
  1-Lipschitz, so |S_(-a)(y) - y| <= a; |d/dx ln(1 + x^2)/2| <= 1/2). The orders: K is convex with
  K(0) = 0 (a cumulant generating function), so on a cell [lam_i, lam_(i+1)] of a geometric grid
  (ratio 1.1, from 1e-3 to lam_max = 16/a) K lies below the chord A + B lam of the computed upper
  bounds, and D_alpha/alpha = K/(lam (lam + 1)) is at most the chord's maximum over the cell (at an
  end or at a root of B lam^2 + 2 A lam + A); below lam_0, K(lam) <= lam K(lam_0)/lam_0 gives
  D_alpha/alpha <= D_(1 + lam_0); above lam_max, D_alpha <= D_inf <= a L. The shifts: for one order,
  f(a) = (alpha - 1) D_alpha(Z || Z + a) = ln int p^alpha p(. - a)^(1 - alpha) has
      f''(a) = (alpha - 1) (-E_Q[psi'(Z - a)] + (alpha - 1) Var_Q psi(Z - a)) >= -(alpha - 1) K'
  (psi = (ln p)', Q proportional to p^alpha p(. - a)^(1 - alpha); psi and psi' are bounded), where
  psi'(z) = u arsinh u/(1 + u^2)^(3/2) - 1/(1 + u^2) + sigma^2 (u^2 - 1)/(1 + u^2)^2 <= K' =
  2/3^(3/2) + sigma^2/8 (``arsinh_log_convexity``; arsinh u <= u). So f + (alpha - 1) K' a^2/2 is
  convex, f on [a_j, a_(j+1)] is at most max(f(a_j), f(a_(j+1))) + (alpha - 1) K' (a_(j+1) - a_j)^2/8,
  and with a_j = j s/16 (s >= 1e-5; below, the pure bound): rho_shift(s) = max_j R_j + K' (s/16)^2/8,
  R_j the bound for the single shift a_j (from j = 16 down; the pure (a_j L)^2/2 once it is below the
  largest R so far, and f(0) = 0). As s -> 0, rho_shift/s^2 tends to I(sigma)/2, I the Fisher
  information of the location family (I = 0.747 at sigma = 1: the supremum over the orders is reached
  as alpha -> 1), against L^2 = 1.305 for the pure bound: eps_shift is at most 0.866 s at sigma = 1
  for s <= 0.1 (0.8646 s at s = 0.1; sqrt I = 0.8643), against 1.142 s. Like the dilation's, the
  figure is certified numerically: the trapezoid sums' error is estimated by the two steps, not
  proven (the tests check the sums against mpmath quadrature in z).
- R against x' is a dilation of Z by e^b, b = (Q(x') - Q(x)) h, |Q(x') - Q(x)| <= k, h = ln 2/m.
  In Y's coordinates e^b Z = sinh(sigma T_b(Y))/sigma with T_b(y) = arsinh(e^b sinh(sigma y))/sigma,
  so D_alpha(Z || e^b Z) = D_alpha(Y || T_b(Y)) and the log-likelihood ratio is
      l_b(y) = (T_(-b)(y)^2 - y^2)/2 - ln T_(-b)'(y),
      ln T_(-b)'(y) = -b + ln(1 + (1 - e^(-2b)) S/(1 + e^(-2b) S))/2,  S = sinh^2(sigma y)
  (l_b is even). The ratio of scales being a power of 2^(1/m), the k-step
  dilation is a chain of k one-step dilations (each pair e^(jh) Z, e^((j+1)h) Z is a rescaling of
  the pair Z, e^(+-h) Z, and a rescaling does not change a divergence); by the triangle-like
  inequality (Hoelder: if D_a(P||Q) <= a r1 and D_a(Q||R) <= a r2 for every a, then D_a(P||R) <=
  a (sqrt r1 + sqrt r2)^2 for every a) eps_dil = k eps_1 with
      eps_1^2/2 >= sup_(alpha > 1) max_(b = +-h) D_alpha(Z || e^b Z)/alpha   (``arsinh_dilation_step``).
  Certified on a geometric grid alpha_i (ratio 1.02) from 1.01 to ALPHA_MAX = 2000: D_alpha is
  non-decreasing in alpha, so on [alpha_i, alpha_(i+1)] D_alpha/alpha <= D_(alpha_(i+1))/alpha_i, and
  below 1.01, D_alpha/alpha <= D_1.01. Each D_alpha = ln(1 + E[expm1((alpha - 1) l_b(Y))])/(alpha - 1)
  is a trapezoid sum on the line (step 2^-6 and 2^-7; the integrand is analytic, the error
  exponentially small) over |y| <= Y_max, plus the analytic tail below, with |difference of the two
  steps| + 1e-12 of the sum of |terms| added and the result raised by 1e-9 relative (where
  E[e^((alpha-1) l_b)] >= e, the same in log space). The sums are float64; the tests check them
  against mpmath quadrature in z (above it, by 2e-9 relative) on the accepted grids and sigmas.
  Above ALPHA_MAX: for b = -h (x' has the smaller scale) 0 <= T_(-b)(|y|) - |y| <= h/sigma = delta
  (sinh(x + h) >= e^h sinh x for x >= 0) and T_(-b)' >= 1, so l_b(y) <= delta |y| + delta^2/2 and
  D_alpha <= alpha delta^2/2 + ln 2/(alpha - 1); for b = +h, T_(-b) contracts, T_(-b)' >= e^-b and
  l_b <= b, so D_alpha <= b.
  The same bounds give the tails of the sums beyond Y_max (Gaussian integrals, their log Phi from
  ``accountant.core.normal.log_ndtr``: within 7 u relative, far inside the 1e-9 margin).
Pure eps-DP is (eps^2/2)-zCDP [@bun2016concentrated]; both terms bound D_alpha/alpha for every
alpha, so by the triangle-like inequality the release is (1/2 eps^2)-CDP with eps = eps_shift +
eps_dil. Bun & Steinke's dilation term sqrt(t (t/sigma^2 + 1/sigma + 2)) grows like sqrt t; the
certified k eps_1 is linear in t (about 0.95 t at sigma = 2/sqrt 3: 0.29 at t = 0.3, where Bun &
Steinke's is 0.96).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import mpmath
import numpy as np
from numpy.typing import NDArray
from scipy import special

from accountant.core.normal import log_ndtr
from accountant.core.validation import check_real

from ..samplers import uniform_below
from .smooth_noise import NOISE_CLIP, ArsinhNormal, LatticeSmoothNoise
from .stability import float_up

__all__ = [
    "LatticeArsinhNormal",
    "arsinh_dilation_renyi",
    "arsinh_dilation_step",
    "arsinh_lattice_draw",
    "arsinh_log_convexity",
    "arsinh_shift_coefficient",
    "arsinh_shift_renyi",
    "arsinh_shift_rho",
]

#: The Renyi orders of the dilation certificate: a geometric grid of this ratio ...
ALPHA_RATIO = 1.02
#: ... from ALPHA_MIN to ALPHA_MAX (analytic bounds beyond).
ALPHA_MIN = 1.01
ALPHA_MAX = 2000.0
#: Largest sigma y the dilation's sums may reach: sinh(sigma y)^2 overflows float64 past 354.9.
SINH_ARG_MAX = 350.0
#: The trapezoid step (and half of it, for the error estimate) of the dilation integrals.
Y_STEP = 2.0**-6
#: The grid of the shift coefficient's bound covers u in [0, SHIFT_U_MAX] with this step.
SHIFT_U_MAX = 64.0
SHIFT_U_STEP = 2.0**-12
#: The shift's Renyi curve: orders 1 + lam, lam on a geometric grid of this ratio from SHIFT_LAM_MIN ...
SHIFT_LAM_RATIO = 1.1
SHIFT_LAM_MIN = 1e-3
#: ... at the shifts j s/SHIFT_CELLS, for SHIFT_S_MIN <= s (below, the pure-DP bound; a shift's
#: curve is computed for a >= SHIFT_A_MIN).
SHIFT_CELLS = 16
SHIFT_S_MIN = 1e-5
SHIFT_A_MIN = 1e-7
#: Relative margin on every numerically computed figure.
MARGIN = 1e-9
#: Bits of U read at a time, extra working bits of the thresholds, and the margin's distance (bits).
WORD_BITS = 64
GUARD_BITS = 64
MARGIN_BITS = 34


def _sigma(sigma: float) -> float:
    if not isinstance(sigma, (int, float)) or isinstance(sigma, bool) or not 0.1 <= sigma <= 3.0:
        raise ValueError(f"sigma must be a real in [0.1, 3], got {sigma!r}")
    return float(sigma)


def _log_grid(log_grid: int) -> int:
    """The grids the float64 certificate is checked for: 2^(1/16) to 2^(1/128) (coarser, sinh
    overflows at the largest orders; finer, float64 rounding approaches the margin)."""
    if not isinstance(log_grid, int) or isinstance(log_grid, bool) or not 16 <= log_grid <= 128:
        raise ValueError(f"log_grid must be an int in [16, 128] for the arsinh-normal release, "
                         f"got {log_grid!r}")
    return log_grid


@functools.cache
def arsinh_shift_coefficient(sigma: float) -> float:
    """L(sigma) >= sup_z |d/dz ln p(z)| for the arsinh-normal density (module docstring): shifting Z
    by a costs at most |a| L in max divergence. Rounded up."""
    sg = _sigma(sigma)
    u = np.arange(0.0, SHIFT_U_MAX + SHIFT_U_STEP / 2, SHIFT_U_STEP)
    first = np.arcsinh(u) / np.sqrt(1.0 + u * u)
    second = u / (1.0 + u * u)
    # the first term's peak: the root of sqrt(1 + u^2) = u arsinh u, where the term equals 1/u
    with mpmath.workdps(30):
        root = mpmath.findroot(lambda x: mpmath.sqrt(1 + x * x) - x * mpmath.asinh(x), 1.5)
        peak1 = float_up(1 / root * (1 + mpmath.mpf(10) ** -20))
    lo, hi = u[:-1], u[1:]
    up1 = np.where(hi <= float(root) * (1 - 1e-12), first[1:],
                   np.where(lo >= float(root) * (1 + 1e-12), first[:-1], peak1))
    up2 = np.where(hi <= 1.0, second[1:], np.where(lo >= 1.0, second[:-1], 0.5))
    cell = np.max(up1 / sg + sg * up2)
    tail = first[-1] / sg + sg * second[-1]
    return float_up(max(cell, tail) * (1 + MARGIN))


def _log_ratio(sigma: float, b: float, y: NDArray[np.float64]) -> NDArray[np.float64]:
    """l_b(y) = ln p_Y(y) / p_(T_b(Y))(y) (module docstring), for y >= 0, in float64."""
    x = sigma * y
    c = math.exp(-b)
    sh = np.sinh(x)
    shift = (np.arcsinh(c * sh) - x) / sigma  # T_(-b)(y) - y
    quad = shift * (shift + 2 * y) / 2
    big = sh * sh
    dlog = -b + 0.5 * np.log1p(-math.expm1(-2 * b) * big / (1 + c * c * big))
    out: NDArray[np.float64] = quad - dlog
    return out


def _log_tail(sigma: float, b: float, lam: float, y_max: float) -> float:
    """ln of a bound on E[exp(lam l_b(Y)) 1{|Y| > y_max}], from l_b <= delta |y| + delta^2/2 (b < 0)
    or l_b <= b (b > 0)."""
    if b > 0:
        return float(lam * b + math.log(2.0) + log_ndtr(-y_max))
    d = -b / sigma
    return float(math.log(2.0) + lam * d * d / 2 + lam * lam * d * d / 2 + log_ndtr(lam * d - y_max))


def _renyi_upper(lam: NDArray[np.float64], log_ratio: Callable[[NDArray[np.float64]], NDArray[np.float64]],
                 y_max: float, even: bool, log_tails: NDArray[np.float64]) -> NDArray[np.float64]:
    """Upper bounds on D_(1 + lam)(Y || Y') = ln E[exp(lam l(Y))]/lam, Y ~ N(0, 1), l = ``log_ratio``
    the log-likelihood ratio: trapezoid sums over |y| <= y_max at two steps (on [0, y_max], doubled,
    when l is even), their difference, 1e-12 of the sum of |terms|, the tails beyond y_max
    (``log_tails``, ln of a bound on E[exp(lam l) 1{|Y| > y_max}]) and a relative margin. Where
    E[e^(lam l)] < e the excess E[expm1(lam l)] is summed (no cancellation); above, in log space."""
    logs, sums = [], []
    for step in (Y_STEP, Y_STEP / 2):
        if even:
            y = np.arange(0.0, y_max, step)
            w = np.full(y.size, 2.0 * step)
            w[0] = step  # the line sum of an even integrand: twice the half-line, the centre once
        else:
            y = np.arange(-math.ceil(y_max / step), math.ceil(y_max / step) + 1) * step
            w = np.full(y.size, step)
        log_dens = np.log(w) - y * y / 2 - 0.5 * math.log(2 * math.pi)
        expo = lam[:, None] * log_ratio(y)[None, :]
        log_terms = log_dens[None, :] + expo
        top = log_terms.max(axis=1)
        logs.append(top + np.log(np.exp(log_terms - top[:, None]).sum(axis=1)))
        dens = np.exp(log_dens)[None, :]
        # dens expm1(expo); used only for the orders whose whole sum is below e (no term overflows)
        terms = np.where(expo < 1.0, dens * np.expm1(np.minimum(expo, 1.0)),
                         np.exp(np.minimum(log_terms, 2.0)) - dens)
        sums.append((terms.sum(axis=1), np.abs(terms).sum(axis=1)))
    (s1, a1), (s2, a2) = sums
    excess = (np.maximum(s1, s2) + np.abs(s1 - s2) + 1e-12 * np.maximum(a1, a2)
              + np.exp(np.minimum(log_tails, 2.0)))
    small = np.log1p(excess * (1 + MARGIN) + 1e-300)
    log_up = np.maximum(logs[0], logs[1]) + np.abs(logs[0] - logs[1]) + 1e-12
    large = np.logaddexp(log_up, log_tails) * (1 + MARGIN)
    out: NDArray[np.float64] = np.where(np.maximum(logs[0], logs[1]) < 1.0, small, large) / lam * (1 + MARGIN)
    return out


def _alphas(alphas: NDArray[np.float64], top: float = ALPHA_MAX) -> NDArray[np.float64]:
    a = np.asarray(alphas, dtype=np.float64)
    if a.ndim != 1 or a.size == 0 or not (np.all(a > 1) and np.all(a <= top)):
        raise ValueError(f"alphas must be a non-empty vector in (1, {top}]")
    return a


def arsinh_dilation_renyi(sigma: float, b: float, alphas: NDArray[np.float64]) -> NDArray[np.float64]:
    """Upper bounds on D_alpha(Z || e^b Z) at each alpha in ``alphas`` (in (1, ALPHA_MAX]), Z the
    arsinh-normal law with this sigma: trapezoid sums at two steps, their difference, a relative
    margin and the analytic tails (module docstring)."""
    sg = _sigma(sigma)
    if not (isinstance(b, float) and math.isfinite(b) and 0 < abs(b) <= 1):
        raise ValueError(f"b must be a float with 0 < |b| <= 1, got {b!r}")
    lam = _alphas(alphas) - 1.0
    top = 1.0 + (SINH_ARG_MAX - 40.0 * sg) / abs(b)  # sigma y_max <= SINH_ARG_MAX
    if float(lam.max()) + 1.0 > top:
        raise ValueError(f"alphas must be at most {top:.6g} for sigma={sigma!r} and b={b!r} (the sums "
                         f"reach sigma y = (alpha - 1) |b| + 40 sigma, where sinh^2 overflows past "
                         f"{SINH_ARG_MAX}), got {float(lam.max()) + 1.0!r}")
    y_max = float(lam.max()) * abs(b) / sg + 40.0
    log_tails = np.array([_log_tail(sg, b, float(lv), y_max) for lv in lam])
    return _renyi_upper(lam, functools.partial(_log_ratio, sg, b), y_max, True, log_tails)


def _shift_log_ratio(sigma: float, a: float, y: NDArray[np.float64]) -> NDArray[np.float64]:
    """l_a(y) = ln p_Y(y) / p_(S_a(Y))(y) (module docstring) in float64: with x = sinh(sigma y) and
    c = sigma a, sigma (S_(-a)(y) - y) = arsinh(x - c) - arsinh(x), taken as
    arsinh((x - c - x)(x - c + x)/((x - c) sqrt(1 + x^2) + x sqrt(1 + (x - c)^2))) where x - c and x
    have one sign (no cancellation), and -ln S_(-a)'(y) = ln(1 + c (c - 2x)/(1 + x^2))/2."""
    x = np.sinh(sigma * y)
    c = sigma * a
    p = x - c
    same = p * x > 0
    den = np.where(same, p * np.sqrt(1.0 + x * x) + x * np.sqrt(1.0 + p * p), 1.0)
    gap = np.where(same, np.arcsinh(np.where(same, -c * (p + x) / den, 0.0)), np.arcsinh(p) - np.arcsinh(x))
    d = gap / sigma
    out: NDArray[np.float64] = d * (d + 2 * y) / 2 + 0.5 * np.log1p(c * (c - 2 * x) / (1.0 + x * x))
    return out


def _shift(a: float) -> float:
    if not (isinstance(a, float) and math.isfinite(a) and SHIFT_A_MIN <= a <= 10):
        raise ValueError(f"a must be a float in [{SHIFT_A_MIN}, 10], got {a!r}")
    return a


def arsinh_shift_renyi(sigma: float, a: float, alphas: NDArray[np.float64]) -> NDArray[np.float64]:
    """Upper bounds on D_alpha(Z || Z + a) at each alpha in ``alphas`` (in (1, 1 + 16/a]), Z the
    arsinh-normal law with this sigma, SHIFT_A_MIN <= a <= 10: the sums of ``arsinh_dilation_renyi`` over the
    whole line (l_a is not even) and the tail from l_a(y) <= min(a |y| + a^2/2 + sigma a/2, a L(sigma))
    (module docstring)."""
    sg, aa = _sigma(sigma), _shift(a)
    lam = _alphas(alphas, 1.0 + 16.0 / aa) - 1.0
    y_max = float(lam.max()) * aa + 14.0
    log_tails = math.log(2.0) + np.minimum(
        lam * (aa * aa + sg * aa) / 2 + (lam * aa) ** 2 / 2 + log_ndtr(lam * aa - y_max),
        lam * aa * arsinh_shift_coefficient(sg) + log_ndtr(-y_max))
    return _renyi_upper(lam, functools.partial(_shift_log_ratio, sg, aa), y_max, False, log_tails)


def _chord_sup(lam: NDArray[np.float64], cgf: NDArray[np.float64]) -> float:
    """sup over lam in [lam_0, lam_last] of K(lam)/(lam (lam + 1)) for a convex K with K(lam_i) <=
    cgf_i: on each cell K is below the chord A + B lam of the bounds, and (A + B lam)/(lam (lam + 1))
    is at most its value at the cell's ends or at a root of B lam^2 + 2 A lam + A inside it."""
    lo, hi = lam[:-1], lam[1:]
    slope = (cgf[1:] - cgf[:-1]) / (hi - lo)
    icpt = cgf[:-1] - slope * lo
    best = float(np.max(cgf / (lam * (lam + 1))))
    disc = icpt * icpt - icpt * slope
    ok = (disc >= 0) & (slope != 0)
    root_d = np.sqrt(np.where(ok, disc, 0.0))
    for sign in (1.0, -1.0):
        r = (-icpt + sign * root_d) / np.where(ok, slope, 1.0)
        inside = ok & (r > lo) & (r < hi)
        if inside.any():
            ri = r[inside]
            best = max(best, float(np.max((icpt[inside] + slope[inside] * ri) / (ri * (ri + 1)))))
    return best * (1 + MARGIN)


def _shift_order_sup(sigma: float, a: float) -> float:
    """An upper bound on sup_(alpha > 1) D_alpha(Z || Z + a)/alpha (module docstring: the orders
    1 + lam, lam on a geometric grid of ratio SHIFT_LAM_RATIO from SHIFT_LAM_MIN to 16/a, convex
    interpolation of lam D_(1 + lam) between them, D_alpha <= a L(sigma) beyond)."""
    lam_max = 16.0 / a
    count = math.ceil(math.log(lam_max / SHIFT_LAM_MIN) / math.log(SHIFT_LAM_RATIO))
    lam: NDArray[np.float64] = SHIFT_LAM_MIN * SHIFT_LAM_RATIO ** np.arange(count + 1, dtype=np.float64)
    lam[-1] = lam_max
    cgf: NDArray[np.float64] = lam * arsinh_shift_renyi(sigma, a, lam + 1.0)
    below = float(cgf[0] / lam[0]) * (1 + MARGIN)  # K(lam) <= lam K(lam_0)/lam_0 below lam_0 (K(0) = 0)
    beyond = a * arsinh_shift_coefficient(sigma) / (1.0 + lam_max) * (1 + MARGIN)
    return max(below, _chord_sup(lam, cgf), beyond)


def arsinh_log_convexity(sigma: float) -> float:
    """K'(sigma) = 0.385 + sigma^2/8 >= sup_z d^2/dz^2 ln p(z) (module docstring), rounded up."""
    sg = _sigma(sigma)
    return float_up(mpmath.mpf(2) / mpmath.mpf(3) ** mpmath.mpf(1.5) + mpmath.mpf(sg) ** 2 / 8
                    + mpmath.mpf(10) ** -12)


@functools.cache
def arsinh_shift_rho(sigma: float, s: float) -> float:
    """rho_shift(s) >= sup over alpha > 1 and |a| <= s of D_alpha(Z || Z + a)/alpha (module
    docstring): the shift's Renyi curve bounded at a_j = j s/SHIFT_CELLS (by (a_j L)^2/2, pure DP,
    where that is below the largest figure so far, else numerically from j = SHIFT_CELLS down), plus
    K' (s/SHIFT_CELLS)^2/8 for the shifts between them. Rounded up."""
    sg = _sigma(sigma)
    ss = check_real("s", s, low=SHIFT_S_MIN, high=10.0)
    lip = arsinh_shift_coefficient(sg)
    worst = 0.0
    for j in range(SHIFT_CELLS, 0, -1):
        a = ss * j / SHIFT_CELLS
        if (a * lip) ** 2 / 2 <= worst:
            break  # the pure-DP bound covers every smaller shift
        worst = max(worst, _shift_order_sup(sg, a))
    return float_up((worst + arsinh_log_convexity(sg) * (ss / SHIFT_CELLS) ** 2 / 8) * (1 + MARGIN))


@functools.cache
def arsinh_dilation_step(sigma: float, log_grid: int) -> float:
    """eps_1 (rounded up): D_alpha(Z || e^(+-h) Z) <= alpha eps_1^2/2 for every alpha > 1, h = ln 2/m
    (module docstring: the grid of orders, the monotone interpolation and the bounds above
    ALPHA_MAX)."""
    sg = _sigma(sigma)
    _log_grid(log_grid)
    h = math.log(2.0) / log_grid
    count = math.ceil(math.log(ALPHA_MAX / ALPHA_MIN) / math.log(ALPHA_RATIO))
    alphas = np.minimum(ALPHA_MIN * ALPHA_RATIO ** np.arange(count + 1), ALPHA_MAX)
    alphas[-1] = ALPHA_MAX
    worst = 0.0
    for b in (h, -h):
        d = arsinh_dilation_renyi(sg, b, alphas)
        inner = np.concatenate([[d[0]], d[1:] / alphas[:-1]])  # sup of D_a/a on (1, a_0], [a_i, a_(i+1)]
        if b > 0:
            beyond = b / ALPHA_MAX
        else:
            delta = b / sg
            beyond = delta * delta / 2 + math.log(2.0) / (ALPHA_MAX * (ALPHA_MAX - 1))
        worst = max(worst, float(inner.max()), beyond * (1 + MARGIN))
    return float_up(math.sqrt(2 * worst) * (1 + MARGIN))


def _threshold(level_scale: mpmath.mpf, sigma: mpmath.mpf, c: mpmath.mpf) -> mpmath.mpf:
    """Phi(arsinh(sigma c / A)/sigma) at the current mpmath precision."""
    return mpmath.ncdf(mpmath.asinh(sigma * c / level_scale) / sigma)


def arsinh_lattice_draw(rng: np.random.Generator, level: int, log_grid: int, s: float, sigma: float) -> int:
    """One exact draw of round(A Z), A = 2^(level/m)/s, Z = sinh(sigma Y)/sigma (module docstring:
    U read lazily, the decision made with a margin)."""
    bits = WORD_BITS
    m_int = uniform_below(rng, 2**WORD_BITS)
    # a first guess in float64 (only the decision below must be exact); later guesses in mpmath
    y0 = float(special.ndtri((m_int + 0.5) / 2.0**WORD_BITS))
    guess = 2.0 ** (level / log_grid) / s * math.sinh(sigma * y0) / sigma
    n: int | None = round(guess) if abs(guess) < 2.0**62 else None
    while True:
        with mpmath.workprec(bits + GUARD_BITS):
            scale = mpmath.mpf(2) ** (mpmath.mpf(level) / log_grid) / mpmath.mpf(s)
            sg = mpmath.mpf(sigma)
            u_lo = mpmath.ldexp(mpmath.mpf(m_int), -bits)
            u_hi = mpmath.ldexp(mpmath.mpf(m_int + 1), -bits)
            margin = mpmath.ldexp(mpmath.mpf(1), -(bits + MARGIN_BITS))
            if n is None:
                y = mpmath.sqrt(2) * mpmath.erfinv(u_lo + u_hi - 1)
                n = int(mpmath.nint(scale * mpmath.sinh(sg * y) / sg))
            for _ in range(8):
                lo = _threshold(scale, sg, mpmath.mpf(n) - mpmath.mpf(1) / 2)
                hi = _threshold(scale, sg, mpmath.mpf(n) + mpmath.mpf(1) / 2)
                if lo + margin <= u_lo and u_hi + margin <= hi:
                    return max(-NOISE_CLIP, min(NOISE_CLIP, n))
                if u_hi + margin <= lo:
                    n -= 1
                elif hi + margin <= u_lo:
                    n += 1
                else:
                    break
            else:
                n = None
        bits += WORD_BITS
        m_int = (m_int << WORD_BITS) | uniform_below(rng, 2**WORD_BITS)


@dataclass(frozen=True)
class LatticeArsinhNormal(LatticeSmoothNoise):
    """The float-safe lattice arsinh-normal release (module docstring): given the scale index Q, an
    exact draw of round(A Z), A = 2^(Q/m)/s, Z = sinh(sigma Y)/sigma. (1/2 eps^2)-CDP with
    eps = k eps_1 (``arsinh_dilation_step``, certified numerically) + eps_shift, the smaller of
    sqrt(2 rho_shift(s)) (``arsinh_shift_rho``, certified numerically) and s L(sigma)
    (``arsinh_shift_coefficient``). The default sigma = 1 about minimises sd(Z) x eps_1 x eps_shift/s,
    the noise of a median at a given eps (h x 1.66 at 1, 1.63 at 0.9, 1.64 at 0.8, 1.76 at 1.1, 1.84 at
    Bun & Steinke's 2/sqrt 3; flat near its minimum)."""

    DEFAULT_SIGMA: ClassVar[float] = 1.0
    MIN_SIGMA: ClassVar[float] = 0.3

    def __post_init__(self) -> None:
        super().__post_init__()
        _log_grid(self.log_grid)

    @classmethod
    def smoothing_target(cls, eps: float, sigma: float, log_grid: int) -> float:
        """k h with k = the largest number of steps whose dilation term k eps_1 is at most eps/2."""
        h = math.log(2.0) / log_grid
        return h * max(1, math.floor(eps / 2 / arsinh_dilation_step(sigma, log_grid)))

    @functools.cached_property
    def dilation_step(self) -> float:
        return arsinh_dilation_step(self.sigma, self.log_grid)

    @functools.cached_property
    def dilation_epsilon(self) -> float:
        return float_up(self.k * mpmath.mpf(self.dilation_step))

    def _shift_bound(self, s: float) -> float:
        """The smaller of sqrt(2 rho_shift(s)) (``arsinh_shift_rho``, for s >= SHIFT_S_MIN) and the
        pure-DP s L(sigma)."""
        with mpmath.workdps(40):
            pure = mpmath.mpf(s) * mpmath.mpf(arsinh_shift_coefficient(self.sigma))
            if s < SHIFT_S_MIN:
                return float_up(pure)
            return float_up(min(pure, mpmath.sqrt(2 * mpmath.mpf(arsinh_shift_rho(self.sigma, s)))))

    @property
    def paper_epsilon(self) -> float:
        """Bun & Steinke's sqrt(t (t/sigma^2 + 1/sigma + 2)) + s (4 + 3 sigma^2)/(6 sigma) at t = k h."""
        return ArsinhNormal(self.sigma).epsilon(self.s, self.k * self.h)

    def noise(self, rng: np.random.Generator, level: int, size: int) -> NDArray[np.int64]:
        out = np.empty(size, dtype=np.int64)
        for i in range(size):
            out[i] = arsinh_lattice_draw(rng, level, self.log_grid, self.s, self.sigma)
        return out
