"""Independent truths for the accounting benchmark's tails (issue 14).

W1 (GDP(2)) uses the closed form and W2 (100-fold Laplace) the exact k-fold Laplace profile
(``LaplaceKFold``: a finite sum of exponentially tilted Irwin-Hall integrals in mpmath at 150
digits, confirmed at 250; terms of total mass < 1e-61 dropped with that bound; about 1 minute of
CPU per delta). It reproduces the issue-3 truth 4.2203473 at delta 1e-5 (4.22034732508036).
W3-W5 use the Laplace inversion of the privacy profile: with f(x) = (1 - e^{eps - x})_+, whose
two-sided Laplace transform is e^{-s eps} / (s (s + 1)) for Re s > 0, and M(s) = E_Q[e^{s L}] the
moment generating function of the composed loss,

    delta(eps) = (1 / pi) int_0^inf Re[ e^{-s eps} M(s) / (s (s + 1)) ] dy,   s = c + i y,

for any c > 0 [@koskela2020computing uses the same transform pair numerically], c the saddle
point of the integrand on the real axis. W5: M is a product of closed forms, in mpmath at 30
digits (its Gaussian factor makes the integrand decay fast in y; W2's lattice does not, hence no
inversion for W2). W3/W4: M is the T-th power of the subsampled Gaussian's E_Q[(q/p)^s], a
one-dimensional integral by 600-node Gauss-Legendre in double precision (``NumpyInversion``: its
relative error ~1e-16 costs ~T 1e-16 relative on delta). Checked against the issue-3 truths at
delta 1e-5 / 1e-6: W3 1.8282367 (1.82823667), 6.1877124 (6.18771239), W4 6.7326941 (6.73269405),
W5 21.5585364 (21.55853638). None of this shares code with ``accountant``.

    python -m benchmarks.accounting_truths [--check] [--only W3,W5]   # the TAIL_TRUTHS table
"""

from __future__ import annotations

import argparse
import functools
import itertools
import math
from collections.abc import Callable
from typing import Any

import mpmath
from mpmath import mp, mpc, mpf

from tests.support.references import GaussianRef, epsilon_exact

LogMgf = Callable[[mpc], mpc]


def gaussian_log_mgf(sigma: float) -> LogMgf:
    """L ~ N(mu^2/2, mu^2) under Q, mu = 1/sigma."""
    m2 = 1 / mpf(sigma) ** 2
    return lambda s: s * m2 / 2 + s * s * m2 / 2


def laplace_log_mgf(b: float) -> LogMgf:
    """(Lap(0,b), Lap(1,b)): atoms at +-eps0 (Q-masses 1/2, e^-eps0/2), L = (2x-1)/b between."""
    e0 = 1 / mpf(b)

    def f(s: mpc) -> mpc:
        cont = (mpmath.exp(s * e0) - mpmath.exp(-(1 + s) * e0)) / (2 * (1 + 2 * s))
        return mpmath.log(mpmath.exp(s * e0) / 2 + mpmath.exp(-e0 - s * e0) / 2 + cont)

    return f


def rr_log_mgf(eps: float) -> LogMgf:
    """Binary randomized response: L = +-eps with Q-masses e^eps/(1+e^eps), 1/(1+e^eps)."""
    e = mpf(eps)
    return lambda s: mpmath.log((mpmath.exp(e * (1 + s)) + mpmath.exp(-e * s)) / (1 + mpmath.exp(e)))


class LaplaceKFold:
    """The exact delta(eps) of the k-fold Laplace pair (Lap(0, b), Lap(1, b)), eps0 = 1/b.

    One loss L = log(p/q)(x), x ~ P = Lap(0, b): an atom at +eps0 (mass 1/2, x <= 0), an atom at
    -eps0 (mass e^-eps0 / 2, x >= 1) and on (-eps0, eps0) the density e^{-eps0/2} e^{l/2} / 4
    (x = (1 - b l)/2 in (0, 1)). With u = l / eps0 the continuous part is
    (eps0 e^{-eps0/2} / 4) e^{c u} du on (-1, 1), c = eps0/2, so the k-fold loss mixes, over i
    atoms +eps0, j atoms -eps0 and m continuous terms (multinomial weights), a + eps0 U with
    a = (i - j) eps0 and U of density e^{c U} h_m(U), h_m the m-fold convolution of the indicator
    of (-1, 1) (Irwin-Hall, reflected: h_m(u) = sum_r (-1)^r C(m, r) (m - 2r - u)_+^{m-1} / (m-1)!).
    Then delta(eps) = E[(1 - e^{eps - L})_+] is a finite sum of

        int_{u > T} (e^{c u} - e^{eps - a} e^{-c u}) h_m(u) du,   T = (eps - a) / eps0,

    each a sum over r of e^{+-c (m - 2r)} int_0^{m-2r-T} e^{-+c v} v^{m-1}/(m-1)! dv (a power
    series, ``_exp_power_integral``); T >= m gives 0, T <= -m the closed form (2 sinh(c)/c)^m.
    The same pair reversed is the mirror image x -> 1 - x: both directions have this profile.

    Unlike ``references.LaplaceRef`` (the same law summed over every term, forward Irwin-Hall
    form, ~660 digits at k = 100: over 10 minutes per delta), the terms with more than ``m_max``
    continuous parts are dropped: each contributes at most its mass ((1 - e^{eps-L})_+ is in
    [0, 1]), so delta lies in [value, value + ``dropped``], dropped = P(Bin(k, (1 - e^-eps0)/2) >
    m_max) <= ``cut``; and the integrals at one m share their values at the integers
    p = m - 2r + (i - j) (only v's upper limit p - eps/eps0 matters). The alternating sum over r
    loses up to ~log10((4e)^m) digits (68 at m = 65): evaluate at ``dps`` >= 150 and compare with
    a second precision (``laplace_epsilon``)."""

    def __init__(self, eps0: float | mpf, k: int, cut: float = 1e-60) -> None:
        self.eps0, self.k = mpf(eps0), k
        pc = -mpmath.expm1(-self.eps0) / 2  # the mass of the continuous part
        m, dropped = k, mpf(0)
        while m >= 0:
            mass = mpmath.binomial(k, m) * pc ** m * (1 - pc) ** (k - m)
            if dropped + mass > cut:
                break
            dropped += mass
            m -= 1
        self.m_max, self.dropped = m, dropped

    def delta_slope(self, eps: mpf) -> tuple[mpf, mpf]:
        """(delta(eps), -delta'(eps)), the second E[e^{eps - L}; L > eps]."""
        k, e0 = self.k, self.eps0
        c, tau = e0 / 2, eps / e0
        cont, plus, minus = e0 * mpmath.exp(-c) / 4, mpf(1) / 2, mpmath.exp(-e0) / 2
        up = down = mpf(0)  # delta = up - down
        for m in range(self.m_max + 1):
            n = k - m
            wm = mpmath.binomial(k, m) * cont ** m
            full = (2 * mpmath.sinh(c) / c) ** m
            f_up: dict[int, mpf] = {}
            f_down: dict[int, mpf] = {}
            for i in range(n + 1):
                d = 2 * i - n  # (i - j): the atoms' sum over eps0
                t = tau - d
                if t >= m:
                    continue
                w = wm * mpmath.binomial(n, i) * plus ** i * minus ** (n - i)
                ea = mpmath.exp(eps - d * e0)
                if t <= -m:
                    up += w * full
                    down += w * ea * full
                    continue
                j_up = j_down = mpf(0)
                for r in range(m + 1):
                    top = m - 2 * r
                    if top <= t:
                        break
                    p = top + d
                    if p not in f_up:
                        f_up[p] = _exp_power_integral(c, m - 1, p - tau)
                        f_down[p] = _exp_power_integral(-c, m - 1, p - tau)
                    sign_binom = (-1) ** r * mpmath.binomial(m, r)
                    j_up += sign_binom * mpmath.exp(c * top) * f_up[p]
                    j_down += sign_binom * mpmath.exp(-c * top) * f_down[p]
                up += w * j_up
                down += w * ea * j_down
        return up - down, down

    def delta(self, eps: mpf) -> mpf:
        return self.delta_slope(eps)[0]


def _exp_power_integral(lam: mpf, n: int, w: mpf) -> mpf:
    """int_0^w e^{-lam v} v^n / n! dv = sum_i (-lam)^i w^{n+1+i} / (i! n! (n+1+i)), w >= 0."""
    x, base = -lam * w, w ** (n + 1) / mpmath.factorial(n)
    total, term, i = mpf(0), mpf(1), 0  # term = x^i / i!
    tiny = mpf(2) ** (-mp.prec - 10)
    while True:
        piece = base * term / (n + 1 + i)
        total += piece
        if i > abs(x) and abs(piece) <= tiny * abs(total):
            return total
        i += 1
        term *= x / i


def laplace_epsilon(scale: float, k: int, delta: float, guess: float, dps: int = 150) -> mpf:
    """epsilon(delta) of the k-fold Laplace pair (eps0 = 1/scale) at ``dps`` digits: Newton's
    method on log delta(eps) ((log delta)' = -slope / delta), to 1e-30 relative, kept inside the
    bracket (lo, hi) of points seen on either side (bisection when a step leaves it; delta = 0
    from k eps0 on). The root is checked to be bracketed, delta(eps - 1e-25) > delta >
    delta(eps + 1e-25) + the dropped mass (``LaplaceKFold``)."""
    with mp.workdps(dps):
        ref = LaplaceKFold(1 / mpf(scale), k)
        target = mpf(delta)
        if ref.dropped > mpf("1e-40") * target:
            raise ValueError(f"dropped mass {ref.dropped} not below 1e-40 delta")
        lo, hi = mpf(0), k * ref.eps0
        eps = min(max(mpf(guess), lo), hi)
        for _ in range(100):
            value, slope = ref.delta_slope(eps)
            lo, hi = (eps, hi) if value > target else (lo, eps)
            nxt = (lo + hi) / 2
            if value > 0:
                newton = eps + (mpmath.log(value) - mpmath.log(target)) * value / slope
                nxt = newton if lo < newton < hi else nxt
            if abs(nxt - eps) < mpf("1e-30") * eps:
                break
            eps = nxt
        else:
            raise RuntimeError(f"no convergence for delta {delta}")
        gap = mpf("1e-25")
        if not ref.delta(eps - gap) > target > ref.delta(eps + gap) + ref.dropped:
            raise RuntimeError(f"root not bracketed for delta {delta}")
        return eps


def w2_truth(delta: float, guess: float) -> float:
    """W2 (100-fold Laplace, b = 10): ``laplace_epsilon`` at 150 and 250 digits, which must agree
    to 1e-20 (measured at delta 1e-15: 80, 150 and 250 digits agree to 1e-80); 25-50 s of CPU
    per delta."""
    a = laplace_epsilon(10.0, 100, delta, guess, dps=150)
    b = laplace_epsilon(10.0, 100, delta, float(a), dps=250)
    if abs(a - b) > mpf("1e-20"):
        raise RuntimeError(f"W2 truth not converged in precision: {a} vs {b}")
    return float(b)


class Inversion:
    """delta(eps) of a loss with log-MGF ``log_m`` by Laplace inversion (module docstring); the
    MGF values at the quadrature nodes are computed once (for the saddle point of ``eps0``) and
    reused for every eps."""

    def __init__(self, log_m: LogMgf, eps0: float, panels: int = 8, order: int = 16) -> None:
        e0 = mpf(eps0)

        def real_log(c: mpf) -> mpf:
            return mpmath.re(log_m(mpc(c))) - c * e0 - mpmath.log(c * (c + 1))

        # the saddle point on the real axis: minimise the log-integrand at y = 0 (golden section)
        lo, hi = mpf("1e-3"), mpf(60)
        for _ in range(60):
            m1, m2 = lo + (hi - lo) * mpf("0.382"), lo + (hi - lo) * mpf("0.618")
            if real_log(m1) < real_log(m2):
                hi = m2
            else:
                lo = m1
        self.c = (lo + hi) / 2
        top = real_log(self.c)
        # extent in y: double until the integrand is below 1e-30 of its value at y = 0
        ymax = mpf(1)
        while mpmath.re(log_m(mpc(self.c, ymax))) - self.c * e0 - mpmath.log(
                abs(mpc(self.c, ymax) * mpc(self.c + 1, ymax))) > top - 70:
            ymax *= 2
        nodes, weights = [], []
        xs, ws = _gauss_legendre(order)
        edges = [ymax * mpf(k) / panels for k in range(panels + 1)]
        for a, b in itertools.pairwise(edges):
            for x, w in zip(xs, ws, strict=True):
                nodes.append((a + b) / 2 + (b - a) / 2 * x)
                weights.append((b - a) / 2 * w)
        self.s = [mpc(self.c, y) for y in nodes]
        self.w = weights
        self.log_m = [log_m(s) for s in self.s]

    def delta(self, eps: mpf) -> mpf:
        total = mpf(0)
        for s, w, lm in zip(self.s, self.w, self.log_m, strict=True):
            total += w * mpmath.re(mpmath.exp(lm - s * eps) / (s * (s + 1)))
        return total / mpmath.pi

    def delta_inf(self) -> mpf:
        return mpf(0)


def _gauss_legendre(n: int) -> tuple[list[mpf], list[mpf]]:
    xs, ws = [], []
    for k in range(1, n + 1):
        x = mpmath.cos(mpmath.pi * (k - mpf(1) / 4) / (n + mpf(1) / 2))
        for _ in range(100):
            p0, p1 = mpf(1), x
            for j in range(2, n + 1):
                p0, p1 = p1, ((2 * j - 1) * x * p1 - (j - 1) * p0) / j
            dp = n * (x * p1 - p0) / (x * x - 1)
            dx = p1 / dp
            x -= dx
            if abs(dx) < mpf(10) ** (-mp.dps + 5):
                break
        xs.append(x)
        ws.append(2 / ((1 - x * x) * dp * dp))
    return xs, ws


def composed(parts: list[tuple[LogMgf, int]]) -> LogMgf:
    return lambda s: mpmath.fsum(k * f(s) for f, k in parts)


class NumpyInversion:
    """The same Laplace inversion in double precision for the T-fold Poisson-subsampled Gaussian:
    log M by Gauss-Legendre on 600 nodes over the x-range where phi(x) g(x)^a lives (its relative
    error ~1e-16 costs T 1e-16 relative on delta), the saddle c by scipy's bounded search, and the
    y-integral by Gauss-Legendre on 16 panels of 32 nodes up to where the integrand is below e^-70
    of its peak. Fast enough for T = 1e5 (the mpmath quadrature of M at every node was not)."""

    def __init__(self, q: float, sigma: float, t: int, direction: str, eps0: float) -> None:
        import numpy as np
        from scipy import optimize

        self.np = np
        self.q, self.mu, self.t, self.remove = q, 1.0 / sigma, t, direction == "remove"
        self.eps0 = eps0

        def real_log(c: float) -> float:
            return float(np.real(self.t * self.log_m(np.array([c + 0j]))[0]) - c * eps0
                         - math.log(c * (c + 1)))

        res = optimize.minimize_scalar(real_log, bounds=(1e-3, 200.0), method="bounded",
                                       options={"xatol": 1e-10})
        self.c = float(res.x)
        top = real_log(self.c)
        ymax = 1.0
        while self._log_abs(np.array([self.c + 1j * ymax]), eps0)[0] > top - 70:
            ymax *= 2
        xs, ws = _leggauss(32)
        edges = np.linspace(0.0, ymax, 17)
        ys = np.concatenate([(a + b) / 2 + (b - a) / 2 * xs for a, b in itertools.pairwise(edges)])
        self.w = np.concatenate([(b - a) / 2 * ws for a, b in itertools.pairwise(edges)])
        self.s = self.c + 1j * ys
        self.tlm = self.t * self.log_m(self.s)

    def log_m(self, s: Any) -> Any:
        np = self.np
        a = (1 + s) if self.remove else -s
        hi = 15.0 + self.mu * (1.0 + float(np.max(np.abs(np.real(a))))) * 1.2
        xs, ws = _leggauss(600)
        x = -15.0 + (xs + 1) * (hi + 15.0) / 2
        w = ws * (hi + 15.0) / 2
        log_g = np.logaddexp(math.log1p(-self.q), math.log(self.q) + self.mu * x - self.mu ** 2 / 2)
        base = np.log(w) - x * x / 2 - 0.5 * math.log(2 * math.pi)
        terms = base[None, :] + np.asarray(a)[:, None] * log_g[None, :]
        m = np.max(np.real(terms), axis=1, keepdims=True)
        return np.log(np.sum(np.exp(terms - m), axis=1)) + m[:, 0]

    def _log_abs(self, s: Any, eps: float) -> Any:
        np = self.np
        return np.real(self.t * self.log_m(s) - s * eps - np.log(s * (s + 1)))

    def delta(self, eps: float) -> float:
        np = self.np
        vals = np.exp(self.tlm - self.s * eps) / (self.s * (self.s + 1))
        return float(np.sum(self.w * np.real(vals)) / math.pi)


@functools.cache
def _leggauss(n: int) -> tuple[Any, Any]:
    """Gauss-Legendre nodes and weights (numpy's; an eigenvalue problem: computed once)."""
    import numpy as np

    return np.polynomial.legendre.leggauss(n)


def epsilon_near(build: Callable[[float], Any], delta: float, guess: float) -> float:
    """epsilon(delta) by bisection with an inversion whose saddle is set at the current estimate
    (two rounds: at the guess, then at the first root), bracketing within +-5% of the guess."""
    eps = guess
    for _ in range(2):
        inv = build(eps)
        lo, hi = eps * 0.95, eps * 1.05
        def f(e: float, inv: Any = inv) -> float:
            value = inv.delta(mpf(e)) if isinstance(inv, Inversion) else inv.delta(e)
            return float(value) - delta
        for _ in range(12):  # widen if needed (the inversion is accurate near its saddle)
            if f(lo) > 0 > f(hi):
                break
            lo, hi = lo * 0.95, hi * 1.05
        else:
            raise RuntimeError(f"no bracket around {guess} for delta {delta}")
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) > 0 else (lo, mid)
        eps = (lo + hi) / 2
    return eps


def w5_inversion(eps0: float) -> Inversion:
    """W5: 50 Gaussians (sigma 3), 50 Laplace (b 5), 20 randomized response (eps 0.5)."""
    return Inversion(composed([(gaussian_log_mgf(3.0), 50), (laplace_log_mgf(5.0), 50),
                               (rr_log_mgf(0.5), 20)]), eps0)


def truth(name: str, delta: float, eps0: float) -> float:
    """The exact epsilon(delta) of a workload (max over directions), eps0 a close guess: W1 closed
    form; W2 the exact k-fold Laplace profile (``LaplaceKFold``); W5 the mpmath inversion;
    W3/W4 the double-precision inversion (``NumpyInversion``), the add direction checked to be
    below delta at the remove direction's epsilon (else its own epsilon is taken). Computed at 30
    digits (a local precision: importing this module leaves mpmath's global one alone)."""
    with mp.workdps(30):
        return _truth(name, delta, eps0)


def _truth(name: str, delta: float, eps0: float) -> float:
    if name.startswith("W1"):
        return float(epsilon_exact(GaussianRef(2.0), mpf(delta), hint=eps0))
    if name.startswith("W2"):
        return w2_truth(delta, eps0)
    if name.startswith("W5"):
        return epsilon_near(w5_inversion, delta, eps0)
    q, s, t = SUBSAMPLED[name[:15]]
    up = epsilon_near(lambda e0: NumpyInversion(q, s, t, "remove", e0), delta, eps0)
    if NumpyInversion(q, s, t, "add", up).delta(up) <= delta:
        return up
    return max(up, epsilon_near(lambda e0: NumpyInversion(q, s, t, "add", e0), delta, eps0))


#: (q, sigma, T) of the DP-SGD workloads
SUBSAMPLED = {"W3 DP-SGD T=1e3": (0.01, 1.0, 1000), "W3 DP-SGD T=1e4": (0.01, 1.0, 10000),
              "W4 DP-SGD T=1e5": (0.004, 1.1, 100000)}


def main() -> None:
    from benchmarks.accounting import WORKLOADS, dpcert_pld

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--check", action="store_true", help="recompute the issue-3 truths only")
    ap.add_argument("--only", default="", help="comma-separated workload name prefixes")
    args = ap.parse_args()
    deltas = [None] if args.check else [1e-10, 1e-12, 1e-15]
    for w in WORKLOADS:
        if args.only and not any(w.name.startswith(p) for p in args.only.split(",")):
            continue
        for d in deltas:
            delta = w.delta if d is None else d
            lo, up = dpcert_pld(w).epsilon_bracket(delta)
            guess = up if up < 1.5 * lo else 1.1 * lo  # a starting point only
            t = truth(w.name, delta, guess)
            extra = f"  (issue 3: {w.truth:.7f}, diff {t - w.truth:+.1e})" if d is None else ""
            print(f'    ("{w.name}", {delta:g}): {t!r},{extra}', flush=True)


if __name__ == "__main__":
    main()
