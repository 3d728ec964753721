"""Independent truths for the accounting benchmark's tails (issue 14), in mpmath.

W1 (GDP(2)) uses the closed form and W2 (100-fold Laplace) the exact k-fold Laplace profile of
``references.py``. W3-W5 use the Laplace inversion of the privacy profile: with
f(x) = (1 - e^{eps - x})_+, whose two-sided Laplace transform is e^{-s eps} / (s (s + 1)) for
Re s > 0, and M(s) = E_Q[e^{s L}] the moment generating function of the composed loss,

    delta(eps) = (1 / pi) int_0^inf Re[ e^{-s eps} M(s) / (s (s + 1)) ] dy,   s = c + i y,

for any c > 0 [@koskela2020computing uses the same transform pair numerically]. M is a product
of closed forms (Gaussian, Laplace and randomized-response losses) or a T-th power of the
subsampled Gaussian's E_Q[(q/p)^s], a one-dimensional integral done by mpmath quadrature at 30
digits; c is the saddle point of the integrand on the real axis, and the y-integral is
Gauss-Legendre on panels up to where the integrand falls below 1e-30 of its value at y = 0.
None of this shares code with ``accountant``. ``--check`` recomputes the issue-3 truths at
delta = 1e-5 for comparison: W1 agrees (closed form); the inversion (W3-W5) and the k-fold Laplace
profile (W2) take many minutes per workload and had not been run to completion when this was
written, so the benchmark's TAIL_TRUTHS holds W1 only until they are.

    python benchmarks/accounting_truths.py [--check]   # prints the TAIL_TRUTHS table (minutes)
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Callable
from pathlib import Path

import mpmath
from mpmath import mp, mpc, mpf

sys.path.insert(0, str(Path(__file__).resolve().parent))

from references import GaussianRef, LaplaceRef, epsilon_exact

mp.dps = 30
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


def subsampled_gaussian_log_mgf(q: float, sigma: float, direction: str) -> LogMgf:
    """Poisson-subsampled Gaussian, g(x) = 1 - q + q e^{mu x - mu^2/2}: remove is (N(0,1), mix),
    E_Q[e^{sL}] = int phi g^{1+s}; add is (mix, N(0,1)), E_Q[e^{sL}] = int phi g^{-s}."""
    r, mu = mpf(q), 1 / mpf(sigma)
    power = (lambda s: 1 + s) if direction == "remove" else (lambda s: -s)

    def f(s: mpc) -> mpc:
        a = power(s)
        val = mpmath.quad(lambda x: mpmath.npdf(x) * mpmath.exp(a * mpmath.log(
            1 - r + r * mpmath.exp(mu * x - mu * mu / 2))), [-mpmath.inf, -8, 0, mu, 8, mpmath.inf])
        return mpmath.log(val)

    return f


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


def workload_refs(name: str, eps0: float) -> list[object]:
    """The references (one per direction) of a benchmark workload, by its name's prefix."""
    if name.startswith("W1"):
        return [GaussianRef(2.0)]
    if name.startswith("W2"):
        return [LaplaceRef(0.1, 100)]
    if name.startswith("W3 DP-SGD T=1e3"):
        q, s, t = 0.01, 1.0, 1000
    elif name.startswith("W3 DP-SGD T=1e4"):
        q, s, t = 0.01, 1.0, 10000
    elif name.startswith("W4"):
        q, s, t = 0.004, 1.1, 100000
    else:  # W5: 50 Gaussians (sigma 3), 50 Laplace (b 5), 20 randomized response (eps 0.5)
        lm = composed([(gaussian_log_mgf(3.0), 50), (laplace_log_mgf(5.0), 50), (rr_log_mgf(0.5), 20)])
        return [Inversion(lm, eps0)]
    return [Inversion(composed([(subsampled_gaussian_log_mgf(q, s, d), t)]), eps0)
            for d in ("remove", "add")]


def truth(name: str, delta: float, eps0: float) -> float:
    """The exact epsilon(delta) of a workload (max over directions), eps0 a close guess."""
    with mp.workdps(30):
        refs = workload_refs(name, eps0)
        return float(max(epsilon_exact(r, mpf(delta), hint=eps0) for r in refs))  # type: ignore[arg-type]


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from accounting import WORKLOADS, dpcert_pld

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
            guess = dpcert_pld(w).epsilon(delta)
            t = truth(w.name, delta, guess)
            extra = f"  (issue 3: {w.truth:.7f}, diff {t - w.truth:+.1e})" if d is None else ""
            print(f'    ("{w.name}", {delta:g}): {t!r},{extra}', flush=True)


if __name__ == "__main__":
    main()
