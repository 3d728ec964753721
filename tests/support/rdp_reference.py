"""An independent reference for the Renyi divergence of the Poisson-subsampled Gaussian (issue 28):
mpmath quadrature at ``DPS`` digits, written without any code of ``accountant``.

With mu0 = N(0, s^2), mu = (1 - q) mu0 + q N(1, s^2) and y(x) = mu(x)/mu0(x) - 1 over q, i.e.
y = expm1((2x - 1)/(2 s^2)), the ratio is 1 + q y and E_{mu0}[y] = 0, so

    D_a(mu || mu0) = log(1 + E[(1 + q y)^a - 1 - a q y]) / (a - 1),   x ~ N(0, s^2),

the a q y term removed analytically. The integrand g(w) = (1 + w)^a - 1 - a w (w = q y >= -1) is
convex with g(0) = g'(0) = 0, so it is nonnegative: the quadrature has nothing to cancel. Near
w = 0 it is the binomial series sum_{k>=2} C(a,k) w^k (|w| < 1e-6: 16 terms, the remainder below
1e-90 of the sum); elsewhere (1 + w)^a - 1 - a w directly, at ``DPS`` + 20 digits (it loses at most
12 of them). [@mironov2019sampled, Sec. 3.2]: D_a(mu0 || mu) <= D_a(mu || mu0), so this direction
is the RDP of one step.

The quadrature is tanh-sinh on intervals split where the integrand changes shape (0, the peak of
q^2 y^2 mu0 at x = 2, the peak of (q y)^a mu0 at x = a, the crossing z0 = s^2 log(1/q - 1) + 1/2
where q y ~ 1, and a few s around them); mpmath's error estimate, relative to the integral, is
checked against ``RTOL`` (the tests also compare it with the exact binomial sum at integer orders
and with a second quadrature at a higher degree).
"""

from __future__ import annotations

import functools

import mpmath
from mpmath import mpf

#: digits of the quadrature
DPS = 80
#: a bound on the reference's own relative error (the quadrature's estimate is checked against it)
RTOL = 1e-30


def _g(w: mpf, a: mpf) -> mpf:
    """(1 + w)^a - 1 - a w, without cancellation."""
    if abs(w) < mpf(10) ** -6:
        term, total = a * (a - 1) / 2 * w * w, mpf(0)
        for k in range(2, 18):
            total += term
            term *= (a - k) / (k + 1) * w
        return total
    with mpmath.extradps(20):
        return mpmath.power(1 + w, a) - 1 - a * w


def excess_moment(q: float, s: float, a: float, method: str = "gauss-legendre") -> mpf:
    """E_{N(0,s^2)}[(1 + q y)^a - 1 - a q y] = A_a - 1, y = expm1((2x - 1)/(2 s^2)), by quadrature
    at ``DPS`` digits (``method`` on the finite pieces, tanh-sinh on the two infinite ends); raises
    ArithmeticError when the quadrature's own error estimate exceeds ``RTOL`` / 10 of the value.
    mpmath's quadratures stop at an absolute error of 10^-DPS, so the integrand is divided by its
    leading term C(a,2) q^2 (e^{1/s^2} - 1) first (values down to 1e-60 and below keep their
    digits)."""
    with mpmath.workdps(DPS):
        ma = mpf(a)
        scale = ma * (ma - 1) / 2 * mpf(q) ** 2 * mpmath.expm1(1 / mpf(s) ** 2)
    for dps, degree in ((20, 6), (DPS, 10)):  # a rough pass finds the size, then the real one
        with mpmath.workdps(dps):
            value, err = _integral(q, s, a, method, degree, scale)
        scale *= value
    if not err <= RTOL / 10 * value:
        raise ArithmeticError(f"quadrature error {mpmath.nstr(err, 5)} at value "
                              f"{mpmath.nstr(value, 5)} (q={q!r}, s={s!r}, a={a!r})")
    return scale


def _integral(q: float, s: float, a: float, method: str, degree: int,
              scale: mpf) -> tuple[mpf, mpf]:
    """(value, error estimate) of the integral divided by ``scale``."""
    mq, ms, ma = mpf(q), mpf(s), mpf(a)
    two_s2 = 2 * ms * ms

    def f(x: mpf) -> mpf:
        return mpmath.npdf(x, 0, ms) * _g(mq * mpmath.expm1((2 * x - 1) / two_s2), ma) / scale

    centres = [mpf(0), mpf(2), ma]
    if mq < 1:
        centres.append(ms * ms * mpmath.log(1 / mq - 1) + mpf(1) / 2)
    pts = sorted({c + 2 * k * ms for c in centres for k in range(-8, 9)})
    grid = [pts[0]]
    for p in pts[1:]:
        if p - grid[-1] > ms / 2:
            grid.append(p)
    # pieces of width <= 4 s (around the centres) by ``method``; the gaps between far centres (the
    # integrand there is below 1e-50 of the total: 16 s from every peak) and the two infinite
    # ends by tanh-sinh, which clusters its nodes at the ends where such a piece has its mass
    value, err = mpf(0), mpf(0)
    for lo, hi in zip([-mpmath.inf, *grid], [*grid, mpmath.inf], strict=True):
        short = mpmath.isfinite(lo) and mpmath.isfinite(hi) and hi - lo <= 4 * ms
        v, e = mpmath.quad(f, [lo, hi], method=method if short else "tanh-sinh", error=True,
                           maxdegree=degree)
        value, err = value + v, err + e
    return value, err


@functools.cache  # a pure function of its floats; tests ask for the same point more than once
def rdp_exact(q: float, s: float, a: float) -> mpf:
    """D_a(mu || mu0) of one Poisson-subsampled Gaussian step (rate q, noise multiplier s, order
    a > 1), to relative ``RTOL``."""
    with mpmath.workdps(DPS):
        return mpmath.log1p(excess_moment(q, s, a)) / (mpf(a) - 1)


def rdp_integer_order(q: float, s: float, a: int) -> mpf:
    """The same at an integer order by the finite binomial sum [@mironov2019sampled, Thm 5],
    A_a - 1 = sum_{k>=2} C(a,k) (1-q)^{a-k} q^k expm1((k^2 - k)/(2 s^2)) (the k = 0, 1 terms and 1
    cancel exactly): a second, independent computation to check the quadrature against."""
    with mpmath.workdps(DPS):
        mq, ms = mpf(q), mpf(s)
        total = mpmath.fsum(mpmath.binomial(a, k) * (1 - mq) ** (a - k) * mq ** k
                            * mpmath.expm1(mpf(k * k - k) / (2 * ms * ms)) for k in range(2, a + 1))
        return mpmath.log1p(total) / (a - 1)


class SubsampledGaussianRdpRef:
    """The RDP curve of ``steps`` Poisson-subsampled Gaussian steps, for the soundness campaign
    (``benchmarks/soundness.py``, family rdpfrac): ``at(a)`` = steps x ``rdp_exact``."""

    rtol: float = RTOL

    def __init__(self, q: float, s: float, steps: int = 1) -> None:
        self.q, self.s, self.steps = q, s, steps

    def at(self, order: float) -> mpf:
        with mpmath.workdps(DPS):
            return self.steps * rdp_exact(self.q, self.s, order)
