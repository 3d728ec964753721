"""Independent references for the soundness campaign (issue 8): privacy profiles computed without
any code of ``accountant``, in mpmath at ``DPS`` significant digits.

A reference answers ``delta(eps)`` for any real eps (negative values are needed to compose a
reference with a discrete one) and states ``rtol``, a bound on its own relative rounding error.

- ``PairRef``: a pair of pmfs on a finite set (plus a Q-atom where P is 0), listed outcome by
  outcome: delta(eps) = atom + sum_{q > e^eps p} (q - e^eps p), exact up to mpmath rounding
  (every term and every mass is computed at ``DPS`` digits); products and k-fold powers are exact
  enumerations (the k-fold power by the multinomial over count vectors).
- ``binomial_rr``: the T-fold binary randomized response, T up to 1e6: the binomial count of
  "truthful" answers, enumerated in mpmath over the window where its pmf exceeds 1e-70 (the
  dropped mass, < 1e-65, is charged to ``rtol``'s absolute part).
- ``GaussianRef``: the closed form Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).
- ``LaplaceRef``: the exact k-fold Laplace profile. With t = L/eps0, one Laplace loss has Q-law
  e^{eps0 (t-1)/2} nu(dt), nu = (delta_1 + delta_-1)/2 + (eps0/4) Leb(-1, 1); so the k-fold sum s
  has Q-law e^{eps0 (s-k)/2} nu^{*k}(ds), where nu^{*k} mixes a binomial sum of +-1 atoms with the
  Irwin-Hall law of j uniforms, a piecewise polynomial: delta is a finite sum of integrals of
  exponentials against truncated powers, evaluated in closed form with enough extra digits to
  absorb the alternating sum's cancellation.
- ``MonotoneStep``: one mixture step A = a1 P0 + a2 Q0, B = b1 P0 + b2 Q0 of a base pair with a
  monotone likelihood ratio (Gaussian N(0,1)/N(mu,1); one Laplace loss in the variable t): the
  integrand (B - e^eps A) changes sign once, so delta is a closed form in the base's survival
  functions. Subsampling (Poisson remove/add; without replacement, either direction) is such a
  mixture.
- ``ComposedRef``: a continuous reference composed with a discrete one,
  delta(eps) = atom + sum_j q_j delta_c(eps - L_j) (exact), or with one ``MonotoneStep``,
  delta(eps) = integral delta_c(eps - L_1(x)) dB_1(x) by mpmath quadrature (``rtol`` from
  a stated 1e-10: agreement with independent computations is ~1e-15 and
  better).
- ``MaxRef``: the larger of two directions (the truth of a pipeline is the max over the two
  orders of its neighbouring datasets).

``epsilon_exact`` inverts a profile: the smallest eps >= 0 with delta(eps) <= target (exact on the
segments of a discrete profile, bisection to relative 1e-14 otherwise; used only to report the
excess: soundness is decided by evaluating the reference at the bound under test).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import mpmath
from mpmath import mp, mpf

DPS = 50
mp.dps = DPS

Mpf = mpf  # alias for annotations
ZERO = mpf(0)
ONE = mpf(1)


class Ref(Protocol):
    rtol: float

    def delta(self, eps: mpf) -> mpf: ...

    def delta_inf(self) -> mpf:
        """Limit of delta(eps) as eps -> infinity (the Q-mass where P is 0)."""
        ...


def mpf_of(x: float) -> mpf:
    """The exact value of a float (mpf of a float is exact at DPS >= 17)."""
    return mpf(x)


# ------------------------------------------------------------------------------------------------
# finite pairs


@dataclass
class PairRef:
    """A pair (P, Q) of pmfs on a finite set: outcome i has masses p[i], q[i] (mpf); outcomes with
    q > 0 = p form the atom at +infinity."""

    p: list[mpf]
    q: list[mpf]
    rtol: float = 1e-40
    _sorted: tuple[list[mpf], list[mpf], list[mpf], mpf] | None = field(default=None, repr=False)

    @staticmethod
    def from_floats(p: Sequence[float], q: Sequence[float]) -> PairRef:
        return PairRef([mpf_of(x) for x in p], [mpf_of(x) for x in q])

    @staticmethod
    def randomized_response(eps: float, k: int = 2) -> PairRef:
        """k-ary randomized response on inputs 0 and 1 (truth kept w.p. e^eps / (e^eps + k - 1));
        only the outputs 0, 1 and 'other' matter (all others have the same masses)."""
        e = mpmath.exp(mpf_of(eps))
        z = e + k - 1
        p = [e / z, ONE / z, (k - 2) / z]
        q = [ONE / z, e / z, (k - 2) / z]
        return PairRef(p, q)

    @staticmethod
    def approx_dp(eps: float, delta: float) -> PairRef:
        """The dominating pair of (eps, delta)-DP (Kairouz, Oh & Viswanath 2015)."""
        e = mpmath.exp(mpf_of(eps))
        d = mpf_of(delta)
        return PairRef([d, (1 - d) * e / (1 + e), (1 - d) / (1 + e), ZERO],
                       [ZERO, (1 - d) / (1 + e), (1 - d) * e / (1 + e), d])

    def swapped(self) -> PairRef:
        return PairRef(self.q, self.p, self.rtol)

    def mix(self, a: tuple[mpf, mpf], b: tuple[mpf, mpf]) -> PairRef:
        """The pair (a0 P + a1 Q, b0 P + b1 Q)."""
        return PairRef([a[0] * p + a[1] * q for p, q in zip(self.p, self.q, strict=True)],
                       [b[0] * p + b[1] * q for p, q in zip(self.p, self.q, strict=True)],
                       self.rtol)

    def product(self, other: PairRef) -> PairRef:
        p = [x * y for x in self.p for y in other.p]
        q = [x * y for x in self.q for y in other.q]
        return PairRef(p, q, max(self.rtol, other.rtol))._pruned()

    def power(self, k: int) -> PairRef:
        """The k-fold product, by the multinomial over count vectors (exact)."""
        n = len(self.p)
        lp = [mpmath.log(x) if x > 0 else None for x in self.p]
        lq = [mpmath.log(x) if x > 0 else None for x in self.q]
        logfact = [mpmath.loggamma(i + 1) for i in range(k + 1)]
        ps: list[mpf] = []
        qs: list[mpf] = []
        for counts in _compositions(k, n):
            base = logfact[k] - mpmath.fsum(logfact[c] for c in counts)
            ps.append(_masses(base, counts, lp))
            qs.append(_masses(base, counts, lq))
        return PairRef(ps, qs, self.rtol)._pruned()

    def _pruned(self) -> PairRef:
        """Drop outcomes of mass 0 under both laws (an outcome with q = 0 < p is kept: it is the
        atom at +infinity of the swapped pair)."""
        keep = [i for i in range(len(self.p)) if self.q[i] > 0 or self.p[i] > 0]
        return PairRef([self.p[i] for i in keep], [self.q[i] for i in keep], self.rtol)

    @property
    def size(self) -> int:
        return len(self.p)

    def _table(self) -> tuple[list[mpf], list[mpf], list[mpf], mpf]:
        """Finite losses in decreasing order with cumulative Q- and P-masses, and the atom."""
        if self._sorted is None:
            atom = mpmath.fsum(q for p, q in zip(self.p, self.q, strict=True) if p == 0 and q > 0)
            rows = sorted(((mpmath.log(q) - mpmath.log(p), q, p)
                           for p, q in zip(self.p, self.q, strict=True) if p > 0 and q > 0),
                          key=lambda r: -r[0])
            losses = [r[0] for r in rows]
            cq, cp = [ZERO], [ZERO]
            for _, q, p in rows:
                cq.append(cq[-1] + q)
                cp.append(cp[-1] + p)
            self._sorted = (losses, cq, cp, atom)
        return self._sorted

    def delta_inf(self) -> mpf:
        return self._table()[3]

    def delta(self, eps: mpf) -> mpf:
        losses, cq, cp, atom = self._table()
        j = _count_above(losses, eps)  # outcomes with loss > eps
        if j == 0:
            return atom
        return atom + max(ZERO, cq[j] - mpmath.exp(eps) * cp[j])

    def epsilon(self, target: mpf) -> mpf:
        """Smallest eps >= 0 with delta(eps) <= target (exact on the profile's segments)."""
        losses, cq, cp, atom = self._table()
        if target < atom:
            return mpf("inf")
        if self.delta(ZERO) <= target:
            return ZERO
        # delta(losses[j]) uses the j outcomes above losses[j]; find the first j with
        # delta(losses[j]) <= target (j = len: the smallest loss, below which delta > target)
        lo, hi = 0, len(losses)  # delta(losses[lo]) <= target (lo = 0: the largest loss)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if atom + cq[mid] - mpmath.exp(losses[mid]) * cp[mid] <= target:
                lo = mid
            else:
                hi = mid
        # on [losses[lo+1], losses[lo]] the lo+1 top outcomes count
        j = lo + 1
        return max(ZERO, mpmath.log((atom + cq[j] - target) / cp[j]))


def _count_above(desc: list[mpf], x: mpf) -> int:
    """Number of entries of the decreasing list ``desc`` that are > x."""
    lo, hi = 0, len(desc)
    while lo < hi:
        mid = (lo + hi) // 2
        if desc[mid] > x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _compositions(k: int, n: int) -> Iterator[tuple[int, ...]]:
    if n == 1:
        yield (k,)
        return
    for c in range(k + 1):
        for rest in _compositions(k - c, n - 1):
            yield (c, *rest)


def _masses(base: mpf, counts: tuple[int, ...], logs: list[mpf | None]) -> mpf:
    s = base
    for c, lg in zip(counts, logs, strict=True):
        if c == 0:
            continue
        if lg is None:
            return ZERO
        s += c * lg
    return mpmath.exp(s)


def binomial_rr(eps: float, t: int) -> PairRef:
    """T-fold binary randomized response: the count a of outputs 1 is Bin(T, w) under Q and
    Bin(T, 1 - w) under P, w = e^eps/(1+e^eps); loss eps (2a - T). Only a > T/2 (loss > 0) is
    kept, and there only the window where the Q-pmf exceeds 1e-70: exact for eps >= 0 up to the
    dropped mass (< 1e-65, absolute)."""
    e0 = mpf_of(eps)
    lw = -mpmath.log1p(mpmath.exp(-e0))
    l1w = -mpmath.log1p(mpmath.exp(e0))
    mode = min(t, math.floor((t + 1) * float(mpmath.exp(lw))))
    start = max(mode, t // 2 + 1)

    def logpmf(a: int) -> mpf:
        return (mpmath.loggamma(t + 1) - mpmath.loggamma(a + 1) - mpmath.loggamma(t - a + 1)
                + a * lw + (t - a) * l1w)

    floor_ = mpf(10) ** -70
    ps: list[mpf] = []
    qs: list[mpf] = []
    ratio_up = mpmath.exp(lw - l1w)  # pmf(a+1)/pmf(a) = (T-a)/(a+1) * w/(1-w)
    # upward from start
    q = mpmath.exp(logpmf(start))
    a = start
    while a <= t:
        ps.append(q * mpmath.exp(-e0 * (2 * a - t)))
        qs.append(q)
        if q < floor_ and a > mode:
            break
        q = q * (t - a) / (a + 1) * ratio_up
        a += 1
    # downward from start - 1 while loss > 0
    a = start - 1
    q = mpmath.exp(logpmf(a)) if a > t // 2 else ZERO
    while 2 * a - t > 0:
        ps.append(q * mpmath.exp(-e0 * (2 * a - t)))
        qs.append(q)
        if q < floor_:
            break
        q = q * a / (t - a + 1) / ratio_up
        a -= 1
    return PairRef(ps, qs, rtol=1e-40)


# ------------------------------------------------------------------------------------------------
# continuous references


@dataclass
class GaussianRef:
    """mu-GDP: the pair (N(0,1), N(mu,1))."""

    mu: float
    rtol: float = 1e-35

    def delta(self, eps: mpf) -> mpf:
        m = mpf_of(self.mu)
        a = mpmath.ncdf(-eps / m + m / 2)
        b = mpmath.ncdf(-eps / m - m / 2)
        return max(ZERO, a - mpmath.exp(eps) * b)

    def delta_inf(self) -> mpf:
        return ZERO


@dataclass
class LaplaceRef:
    """k-fold Laplace mechanism with eps0 = sensitivity / scale (see the module docstring)."""

    eps0: float
    k: int
    rtol: float = 1e-35

    def delta_inf(self) -> mpf:
        return ZERO

    def delta(self, eps: mpf) -> mpf:
        k = self.k
        c_ = self.eps0 / 2
        extra = int(k * (2 + math.log10(4 * k) + max(0.0, -math.log10(c_)))) + 20
        with mp.workdps(DPS + extra):
            e0 = mpf_of(self.eps0)
            s0 = eps / e0  # loss > eps  <=>  s > s0
            if s0 >= k:
                return ZERO
            c = e0 / 2
            # delta = e^{-k c} * integral over s > s0 of (e^{c s} - e^{eps} e^{-c s}) dnu^{*k}(s)
            total = ZERO
            ee = mpmath.exp(eps)
            for j in range(k + 1):
                wj = mpmath.binomial(k, j) * (e0 / 4) ** j / mpf(2) ** (k - j)
                for m_ in range(k - j + 1):
                    a = 2 * m_ - (k - j)  # the atoms' sum
                    w = wj * mpmath.binomial(k - j, m_)
                    if j == 0:
                        if a > s0:
                            total += w * (mpmath.exp(c * a) - ee * mpmath.exp(-c * a))
                        continue
                    # integral over u in (-j, j), u > s0 - a, of (e^{c(a+u)} - ee e^{-c(a+u)})
                    # against Leb^{*j}(du)
                    lo = s0 - a
                    if lo >= j:
                        continue
                    total += w * (mpmath.exp(c * a) * _exp_irwin_hall(c, j, lo)
                                  - ee * mpmath.exp(-c * a) * _exp_irwin_hall(-c, j, lo))
            return +max(ZERO, mpmath.exp(-k * c) * total)


def _exp_irwin_hall(lam: mpf, j: int, lo: mpf) -> mpf:
    """Integral over u in (max(lo, -j), j) of e^{lam u} against Leb^{*j}(du) on (-1, 1)^j, whose
    density is sum_i (-1)^i C(j, i) (u + j - 2i)_+^{j-1} / (j-1)!."""
    n = j - 1
    lo = max(lo, mpf(-j))
    total = ZERO
    for i in range(j + 1):
        shift = j - 2 * i  # w = u + shift >= 0
        w0 = max(lo + shift, ZERO)
        w1 = mpf(j + shift)  # u = j
        if w0 >= w1:
            continue
        # integral of e^{lam (w - shift)} w^n dw over (w0, w1)
        val = _exp_poly_integral(lam, n, w0, w1) * mpmath.exp(-lam * shift)
        total += (-1) ** i * mpmath.binomial(j, i) * val
    return total / mpmath.factorial(n)


def _exp_poly_integral(lam: mpf, n: int, w0: mpf, w1: mpf) -> mpf:
    """Integral of e^{lam w} w^n over (w0, w1): F(w) = e^{lam w} sum_r (-1)^r n!/(n-r)! w^{n-r}
    / lam^{r+1}."""
    def f(w: mpf) -> mpf:
        s = ZERO
        coef = ONE
        for r in range(n + 1):
            s += (-1) ** r * coef * w ** (n - r) / lam ** (r + 1)
            coef *= n - r
        return mpmath.exp(lam * w) * s
    return f(w1) - f(w0)


# ------------------------------------------------------------------------------------------------
# one mixture step of a base pair with a monotone likelihood ratio


class MonotoneBase(Protocol):
    def log_lr(self, x: mpf) -> mpf: ...          # log dQ0/dP0 at x, increasing
    def x_of_log_lr(self, y: mpf) -> mpf: ...     # inverse (may return +-inf)
    def surv_p(self, x: mpf) -> mpf: ...          # P0(X > x)
    def surv_q(self, x: mpf) -> mpf: ...          # Q0(X > x)
    def cdf_p(self, x: mpf) -> mpf: ...           # P0(X <= x), to full relative precision
    def cdf_q(self, x: mpf) -> mpf: ...           # Q0(X <= x)


@dataclass
class GaussianBase:
    mu: float

    def log_lr(self, x: mpf) -> mpf:
        m = mpf_of(self.mu)
        return m * x - m * m / 2

    def x_of_log_lr(self, y: mpf) -> mpf:
        m = mpf_of(self.mu)
        return (y + m * m / 2) / m

    def surv_p(self, x: mpf) -> mpf:
        return mpmath.ncdf(-x)

    def surv_q(self, x: mpf) -> mpf:
        return mpmath.ncdf(mpf_of(self.mu) - x)

    def cdf_p(self, x: mpf) -> mpf:
        return mpmath.ncdf(x)

    def cdf_q(self, x: mpf) -> mpf:
        return mpmath.ncdf(x - mpf_of(self.mu))


@dataclass
class LaplaceBase:
    """One Laplace loss in the variable t = L / eps0 in [-1, 1] (atoms at the ends)."""

    eps0: float

    def log_lr(self, x: mpf) -> mpf:
        return mpf_of(self.eps0) * min(max(x, -ONE), ONE)

    def x_of_log_lr(self, y: mpf) -> mpf:
        return y / mpf_of(self.eps0)

    def surv_p(self, x: mpf) -> mpf:
        e0 = mpf_of(self.eps0)
        if x < -1:
            return ONE
        if x >= 1:
            return ZERO
        return mpmath.exp(-e0 * (x + 1) / 2) / 2

    def surv_q(self, x: mpf) -> mpf:
        e0 = mpf_of(self.eps0)
        if x < -1:
            return ONE
        if x >= 1:
            return ZERO
        return 1 - mpmath.exp(e0 * (x - 1) / 2) / 2

    def cdf_p(self, x: mpf) -> mpf:
        return 1 - self.surv_p(x)  # >= 1/2 from t = -1 on: no loss of relative precision

    def cdf_q(self, x: mpf) -> mpf:
        e0 = mpf_of(self.eps0)
        if x < -1:
            return ZERO
        if x >= 1:
            return ONE
        return mpmath.exp(e0 * (x - 1) / 2) / 2



@dataclass
class LogisticBase:
    """Logistic noise: P0 = Logistic(0, 1), Q0 = Logistic(a, 1), densities s(x) s(-x) shifted (s the
    sigmoid); log dQ0/dP0 increases from -a to a."""

    a: float

    def log_lr(self, x: mpf) -> mpf:
        a = mpf_of(self.a)

        def log_f(y: mpf) -> mpf:
            return -mpmath.log1p(mpmath.exp(-y)) - mpmath.log1p(mpmath.exp(y))

        return log_f(x - a) - log_f(x)

    def x_of_log_lr(self, y: mpf) -> mpf:
        a = mpf_of(self.a)
        if y <= -a:
            return mpf("-inf")
        if y >= a:
            return mpf("inf")
        # sqrt(e^y) (1 + t e^{-a}) = e^{-a/2} (1 + t), t = e^x
        return mpmath.log(mpmath.expm1((a + y) / 2)) - mpmath.log(-mpmath.expm1((y - a) / 2))

    def surv_p(self, x: mpf) -> mpf:
        return 1 / (1 + mpmath.exp(x))

    def surv_q(self, x: mpf) -> mpf:
        return 1 / (1 + mpmath.exp(x - mpf_of(self.a)))

    def cdf_p(self, x: mpf) -> mpf:
        return 1 / (1 + mpmath.exp(-x))

    def cdf_q(self, x: mpf) -> mpf:
        return 1 / (1 + mpmath.exp(mpf_of(self.a) - x))


@dataclass
class MonotoneStep:
    """The pair (A, B) = (a0 P0 + a1 Q0, b0 P0 + b1 Q0) of a monotone base."""

    base: GaussianBase | LaplaceBase | LogisticBase
    a: tuple[mpf, mpf]
    b: tuple[mpf, mpf]
    rtol: float = 1e-35

    def delta_inf(self) -> mpf:
        return ZERO  # the pairs used here have no atom at infinity

    def delta(self, eps: mpf) -> mpf:
        ee = mpmath.exp(eps)
        c1 = self.b[0] - ee * self.a[0]  # coefficient of P0
        c2 = self.b[1] - ee * self.a[1]  # coefficient of Q0; integrand = dP0 (c1 + c2 LR)
        if c1 >= 0 and c2 >= 0:
            return c1 + c2
        if c1 <= 0 and c2 <= 0:
            return ZERO
        x = self.base.x_of_log_lr(mpmath.log(-c1 / c2))
        if c2 > 0:  # positive above x
            v = c1 * self.base.surv_p(x) + c2 * self.base.surv_q(x)
        else:
            # the CDFs to full relative precision: c2 can be as large as e^eps
            v = c1 * self.base.cdf_p(x) + c2 * self.base.cdf_q(x)
        return max(ZERO, v)

    def kinks(self) -> list[mpf]:
        """Where delta(eps) is not smooth: the limits log(b0/a0), log(b1/a1) of the loss."""
        out = []
        for a, b in zip(self.a, self.b, strict=True):
            if a > 0 and b > 0:
                out.append(mpmath.log(b / a))
        return out

    def x_of_loss(self, y: mpf) -> mpf | None:
        """The x with loss(x) = y, if any."""
        ey = mpmath.exp(y)
        num, den = self.b[0] - ey * self.a[0], ey * self.a[1] - self.b[1]
        if den == 0 or num / den <= 0:
            return None
        return self.base.x_of_log_lr(mpmath.log(num / den))

    def loss(self, x: mpf) -> mpf:
        lr = mpmath.exp(self.base.log_lr(x))
        return mpmath.log((self.b[0] + self.b[1] * lr) / (self.a[0] + self.a[1] * lr))


@dataclass
class GaussianMixtureRef:
    """(P, Q) = (sum_i a_i N(s_i, 1), sum_j b_j N(t_j, 1)) with min t >= max s: the loss
    log(q/p)(x) increases, so for every eps delta = Q(X > x) - e^eps P(X > x) at the x where the
    loss is eps (bisection in mpmath; x = -inf below the loss range, delta = 0 above it)."""

    p: list[tuple[mpf, mpf]]  # (mean, weight)
    q: list[tuple[mpf, mpf]]
    rtol: float = 1e-30

    def delta_inf(self) -> mpf:
        return ZERO

    def _loss(self, x: mpf) -> mpf:
        def log_dens(mix: list[tuple[mpf, mpf]]) -> mpf:
            terms = [mpmath.log(w) - (x - m) ** 2 / 2 for m, w in mix]
            top = max(terms)
            return top + mpmath.log(mpmath.fsum(mpmath.exp(t - top) for t in terms))
        return log_dens(self.q) - log_dens(self.p)

    def delta(self, eps: mpf) -> mpf:
        means = [m for m, _ in self.p + self.q]
        lo, hi = min(means) - 40, max(means) + 40
        if self._loss(lo) >= eps:
            return max(ZERO, 1 - mpmath.exp(eps))
        top_p, top_q = max(m for m, _ in self.p), max(m for m, _ in self.q)
        if top_q == top_p:  # the loss is bounded above by its limit at +inf
            limit = mpmath.log(mpmath.fsum(w for m, w in self.q if m == top_q)
                               / mpmath.fsum(w for m, w in self.p if m == top_p))
            if eps >= limit:
                return ZERO
        while self._loss(hi) <= eps:  # unbounded (or below the limit): the root is finite
            hi = 2 * hi + 40
        for _ in range(DPS * 4):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self._loss(mid) < eps else (lo, mid)
        x = lo

        def tail(mix: list[tuple[mpf, mpf]]) -> mpf:
            return mpmath.fsum(w * mpmath.ncdf(m - x) for m, w in mix)
        return max(ZERO, tail(self.q) - mpmath.exp(eps) * tail(self.p))


def truncated_discrete_gaussian(sigma: float, m: int, d: int) -> PairRef:
    """The discrete Gaussian on {-m, ..., m} (renormalised) and its shift by d, as a finite pair
    on {-m, ..., m + d}."""
    s2 = mpf_of(sigma) ** 2
    w = [mpmath.exp(-mpf(k) ** 2 / (2 * s2)) for k in range(-m, m + 1)]
    z = mpmath.fsum(w)
    p = [w[y + m] / z if y <= m else ZERO for y in range(-m, m + d + 1)]
    q = [w[y - d + m] / z if y - d >= -m else ZERO for y in range(-m, m + d + 1)]
    return PairRef(p, q)


def subsample_steps(base: GaussianBase | LaplaceBase | LogisticBase,
                    rate: float) -> tuple[MonotoneStep, MonotoneStep]:
    """(remove, add): (P0, (1-r) P0 + r Q0) and ((1-r) P0 + r Q0, P0)."""
    r = mpf_of(rate)
    mix = (1 - r, r)
    return MonotoneStep(base, (ONE, ZERO), mix), MonotoneStep(base, mix, (ONE, ZERO))


def subsample_pair(base: PairRef, rate: float) -> tuple[PairRef, PairRef]:
    """(remove, add) mixtures of a finite pair."""
    r = mpf_of(rate)
    mix = (1 - r, r)
    return base.mix((ONE, ZERO), mix), base.mix(mix, (ONE, ZERO))


# ------------------------------------------------------------------------------------------------
# compositions of references


@dataclass
class ComposedRef:
    """A continuous reference ``cont`` composed with a discrete pair (exact sum) or with one
    Gaussian- or Laplace-base ``MonotoneStep`` (quadrature)."""

    cont: GaussianRef | LaplaceRef | MonotoneStep
    disc: PairRef | None = None
    step: MonotoneStep | None = None
    rtol: float = 1e-35

    def __post_init__(self) -> None:
        if self.step is not None:
            self.rtol = 1e-10  # quadrature (checked against splits at the kinks, see the tests)
        else:
            self.rtol = max(self.cont.rtol, self.disc.rtol if self.disc else 0.0)

    def delta_inf(self) -> mpf:
        return self.disc.delta_inf() if self.disc is not None else ZERO

    def delta(self, eps: mpf) -> mpf:
        if self.disc is not None:
            losses, cq, _, atom = self.disc._table()
            total = atom
            for j, lo in enumerate(losses):
                qj = cq[j + 1] - cq[j]
                total += qj * self.cont.delta(eps - lo)
            return total
        assert self.step is not None
        return self._quad(eps)

    def _quad(self, eps: mpf) -> mpf:
        step = self.step
        assert step is not None
        cont = self.cont
        with mp.workdps(30):
            if isinstance(step.base, GaussianBase):
                mu = mpf_of(step.base.mu)

                def f(x: mpf) -> mpf:
                    dens = step.b[0] * mpmath.npdf(x) + step.b[1] * mpmath.npdf(x - mu)
                    if dens == 0:
                        return ZERO
                    return dens * cont.delta(eps - step.loss(x))

                pts = {mpf("-inf"), mpf(-8), ZERO, mu / 2, mu, mu + 8, mpf("inf")}
                # the inner profile has kinks where its loss bounds are crossed: split there
                for kink in cont.kinks() if isinstance(cont, MonotoneStep) else ():
                    x = step.x_of_loss(eps - kink)
                    if x is not None:
                        pts.add(x)
                v = mpmath.quad(f, sorted(pts))
            elif isinstance(step.base, LaplaceBase):
                e0 = mpf_of(step.base.eps0)
                # atoms at t = +-1 and densities on (-1, 1) of P0 and Q0 (see LaplaceBase)
                atoms = ((ONE, mpmath.exp(-e0) / 2, ONE / 2), (-ONE, ONE / 2, mpmath.exp(-e0) / 2))
                v = ZERO
                for t, pa, qa in atoms:
                    v += (step.b[0] * pa + step.b[1] * qa) * cont.delta(eps - step.loss(t))

                def g(t: mpf) -> mpf:
                    dens = e0 / 4 * (step.b[0] * mpmath.exp(-e0 * (t + 1) / 2)
                                     + step.b[1] * mpmath.exp(e0 * (t - 1) / 2))
                    return dens * cont.delta(eps - step.loss(t))

                v += mpmath.quad(g, [-ONE, ZERO, ONE])
            else:
                raise TypeError(f"ComposedRef: no quadrature for a step of {type(step.base).__name__}")
        return max(ZERO, +v)


@dataclass
class MaxRef:
    """The larger of several directions' profiles."""

    refs: list[Ref]
    rtol: float = 0.0

    def __post_init__(self) -> None:
        self.rtol = max(r.rtol for r in self.refs)

    def delta(self, eps: mpf) -> mpf:
        return max(r.delta(eps) for r in self.refs)

    def delta_inf(self) -> mpf:
        return max(r.delta_inf() for r in self.refs)

    def epsilon(self, target: mpf) -> mpf:
        return max(epsilon_exact(r, target) for r in self.refs)


def epsilon_exact(ref: Ref, target: mpf, hint: float | None = None) -> mpf:
    """Smallest eps >= 0 with ref.delta(eps) <= target (inf if none); bisection to 1e-14
    (relative) unless the reference inverts itself."""
    inv: Callable[[mpf], mpf] | None = getattr(ref, "epsilon", None)
    if inv is not None:
        return inv(target)
    if target < ref.delta_inf():
        return mpf("inf")
    if ref.delta(ZERO) <= target:
        return ZERO
    lo = ZERO
    hi = mpf(hint) if hint is not None and math.isfinite(hint) and hint > 0 else ONE
    while ref.delta(hi) > target:
        lo = hi
        hi = 2 * hi + 1
        if hi > 1e7:
            return mpf("inf")
    with mp.workdps(30):
        while hi - lo > mpf(1e-14) * max(ONE, hi):
            mid = (lo + hi) / 2
            if ref.delta(mid) <= target:
                hi = mid
            else:
                lo = mid
    return (lo + hi) / 2


__all__ = [
    "DPS",
    "ComposedRef",
    "GaussianBase",
    "GaussianRef",
    "LaplaceBase",
    "LaplaceRef",
    "MaxRef",
    "MonotoneStep",
    "PairRef",
    "Ref",
    "binomial_rr",
    "epsilon_exact",
    "subsample_pair",
    "subsample_steps",
]
