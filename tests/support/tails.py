"""Independent references for loss laws given by their tails: each direction's four tails recomputed
in mpmath (``model_tails``), the exact profile, and the checks that a direction's declared tail
errors hold at sampled nodes."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import mpmath
import numpy as np

from accountant.pld.grid.law import GridLaw
from accountant.pld.laws.errors import product_error
from accountant.pld.laws.subsampled import SubsampledTailDirection
from accountant.pld.laws.symmetric import SymmetricTailDirection
from accountant.pld.laws.tail import TailDirection
from accountant.pld.models.gaussian import GaussianDirection
from accountant.pld.models.laplace import LaplaceDirection
from accountant.pld.models.mixture import MixtureDirection

mpf = mpmath.mpf


Tail = Callable[[mpmath.mpf], mpmath.mpf]


def model_tails(d: TailDirection) -> tuple[Tail, Tail, Tail, Tail]:
    """(Q(L > l), P(L > l), Q(L <= l), P(L <= l)) of the continuous part of a direction, in
    mpmath, from the model (each tail directly where it may be tiny: no complements)."""
    if isinstance(d, GaussianDirection):
        mu = mpf(d.mu)
        return (lambda l_: mpmath.ncdf(-(l_ / mu - mu / 2)),
                lambda l_: mpmath.ncdf(-(l_ / mu + mu / 2)),
                lambda l_: mpmath.ncdf(l_ / mu - mu / 2),
                lambda l_: mpmath.ncdf(l_ / mu + mu / 2))
    if isinstance(d, LaplaceDirection):
        e = mpf(d.eps)

        def clip(l_: mpmath.mpf) -> mpmath.mpf:
            return min(max(l_, -e), e)

        return (lambda l_: -mpmath.expm1(-(e - clip(l_)) / 2) / 2,
                lambda l_: mpmath.exp(-e) * mpmath.expm1((e - clip(l_)) / 2) / 2,
                lambda l_: mpmath.exp(-(e - clip(l_)) / 2) * -mpmath.expm1(-(e + clip(l_)) / 2) / 2,
                lambda l_: -mpmath.expm1(-(e + clip(l_)) / 2) / 2)
    if isinstance(d, SubsampledTailDirection):
        bq, bp, bfq, bfp = model_tails(d.base)
        r = mpf(d.rate)

        def base_loss(v: mpmath.mpf) -> mpmath.mpf:
            return mpmath.log((mpmath.expm1(v) + r) / r) if v > mpmath.log1p(-r) else mpf(-1e9)

        if d.direction == "remove":
            return (lambda v: (1 - r) * bp(base_loss(v)) + r * bq(base_loss(v)),
                    lambda v: bp(base_loss(v)),
                    lambda v: (1 - r) * bfp(base_loss(v)) + r * bfq(base_loss(v)),
                    lambda v: bfp(base_loss(v)))
        # L' = -phi(l) > v  <=>  l < phi^{-1}(-v), under P (Q' = P, P' = the mixture)
        return (lambda v: bfp(base_loss(-v)),
                lambda v: (1 - r) * bfp(base_loss(-v)) + r * bfq(base_loss(-v)),
                lambda v: bp(base_loss(-v)),
                lambda v: (1 - r) * bp(base_loss(-v)) + r * bq(base_loss(-v)))
    if isinstance(d, SymmetricTailDirection):
        bq, bp, _, _ = model_tails(d.base)
        sq0, sp0 = bq(mpf(0)), bp(mpf(0))

        def sq(l_: mpmath.mpf) -> mpmath.mpf:
            return bq(l_) if l_ >= 0 else sq0 + sp0 - bp(-l_)

        def sp(l_: mpmath.mpf) -> mpmath.mpf:
            return bp(l_) if l_ >= 0 else sp0 + sq0 - bq(-l_)

        return (sq, sp, lambda l_: sq(mpf(-1e9)) - sq(l_), lambda l_: sp(mpf(-1e9)) - sp(l_))
    assert isinstance(d, MixtureDirection)

    def side(means: tuple[float, ...], weights: tuple[float, ...], sign: int) -> Tail:
        def tail(l_: mpmath.mpf) -> mpmath.mpf:
            x = mixture_root(d, l_)
            return mpmath.fsum(mpf(w) * mpmath.ncdf(sign * (mpf(m) - x))
                               for m, w in zip(means, weights, strict=True))
        return tail

    return (side(d.q_means, d.q_weights, 1), side(d.p_means, d.p_weights, 1),
            side(d.q_means, d.q_weights, -1), side(d.p_means, d.p_weights, -1))


def _log_mix(means: tuple[float, ...], weights: tuple[float, ...],
             x: mpmath.mpf) -> tuple[mpmath.mpf, mpmath.mpf]:
    """(log sum_k w_k e^{m_k x - m_k^2/2}, its derivative in x: the posterior mean of m)."""
    terms = [(mpf(m), mpf(w) * mpmath.exp(mpf(m) * x - mpf(m) ** 2 / 2))
             for m, w in zip(means, weights, strict=True)]
    total = mpmath.fsum(t for _, t in terms)
    return mpmath.log(total), mpmath.fsum(m * t for m, t in terms) / total


def mixture_loss(d: MixtureDirection, x: mpmath.mpf) -> mpmath.mpf:
    return _log_mix(d.q_means, d.q_weights, x)[0] - _log_mix(d.p_means, d.p_weights, x)[0]


def mixture_root(d: MixtureDirection, l_: mpmath.mpf) -> mpmath.mpf:
    """The x in [-60, 60] with L(x) = l_ (L increases), to a bracket of width 120 / 2^(prec + 10)
    (or 2^10 ulps of |x| + 1, where L's own round-off stops bisection too), returned as its
    midpoint: Newton steps (L' = the difference of the posterior means) kept inside a bracket
    (bisection where a step leaves it), then a bracket of that width closed around the converged
    iterate by two evaluations, so the result is within half the width of the root like
    bisection's (bisection itself if Newton does not converge); outside [-60, 60] it clamps to an
    end as bisection does.
    Cached: the tails of one side ask for the same root."""
    return _mixture_root(d, l_, mpmath.mp.prec)


@functools.lru_cache(maxsize=4096)
def _mixture_root(d: MixtureDirection, l_: mpmath.mpf, prec: int) -> mpmath.mpf:
    def f(x: mpmath.mpf) -> tuple[mpmath.mpf, mpmath.mpf]:
        lq, dq = _log_mix(d.q_means, d.q_weights, x)
        lp, dp = _log_mix(d.p_means, d.p_weights, x)
        return lq - lp - l_, dq - dp

    lo, hi = mpf(-60), mpf(60)
    width = (hi - lo) / mpf(2) ** (prec + 10)
    if f(hi)[0] < 0:  # bisection's every step keeps the upper half
        return hi - width / 2
    if f(lo)[0] >= 0:
        return lo + width / 2
    x = mpf(0)
    for _ in range(64):  # Newton, kept inside the bracket (bisection where a step leaves it)
        fx, dfx = f(x)
        lo, hi = (x, hi) if fx < 0 else (lo, x)
        step = x - fx / dfx if dfx > 0 else lo - 1
        # converged (to L's round-off): close a bracket of half-width tol around the iterate
        tol = max(width / 2, (abs(step) + 1) * mpf(2) ** (10 - prec))
        if abs(step - x) <= tol and f(step - tol)[0] < 0 <= f(step + tol)[0]:
            return step
        x = step if lo < step < hi else (lo + hi) / 2
    for _ in range(prec + 10):  # not converged (never seen): bisection, as the fallback
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid)[0] < 0 else (lo, mid)
    return (lo + hi) / 2


def exact_profile(d: TailDirection, eps: float) -> mpmath.mpf:
    """Q(L > eps) - e^eps P(L > eps) + atoms, in mpmath (40 digits); at least 0 (above the
    support mpmath's stand-in for a base loss of -inf leaves a tiny negative value)."""
    sq, sp, _, _ = model_tails(d)
    with mpmath.workdps(40):
        e = mpf(eps)
        out = sq(e) - mpmath.exp(e) * sp(e) + mpf(d.q_inf)
        losses, qm = d.point_masses()
        for l_, m in zip(losses.tolist(), qm.tolist(), strict=True):
            out += mpf(m) * max(mpf(0), -mpmath.expm1(e - mpf(l_)))
        return max(out, mpf(0))


def sample_points(law: GridLaw, rng: np.random.Generator, n: int) -> np.ndarray:
    """Nodes and midpoints of cells (where the lowerings are tightest), across the support."""
    j = rng.integers(0, law.masses.size, n)
    return np.asarray(law.shift + (law.offset + j + rng.choice([0.0, 0.5], n)) * law.h)


def nodes_of(d: TailDirection, h: float, rng: np.random.Generator, n: int) -> np.ndarray:
    lo, hi = d.support(1e-24)
    j0, j1 = math.floor(lo / h) - 1, math.ceil(hi / h) + 1
    j = np.unique(np.concatenate([np.arange(j0, j0 + 6), np.arange(j1 - 3, j1 + 1),
                                  rng.integers(j0, j1 + 1, n)]))
    return j.astype(np.float64)


def assert_tail_errors_hold(d: TailDirection, h: float, j: np.ndarray) -> None:
    """Each of the four tails computed at the nodes j h is within its ``tail_errors`` bound of
    the exact tail (mpmath, 40 digits) at the exact node."""
    g = j * h
    tails = d.tails(g)
    errs = d.tail_errors(g, product_error(j, h), tails)
    sq, sp, fq, fp = model_tails(d)
    with mpmath.workdps(40):
        for i in range(g.size):
            e = mpf(int(j[i])) * mpf(h)
            for t, err, exact in zip(tails, errs, (fq(e), sq(e), fp(e), sp(e)), strict=True):
                assert abs(mpf(float(t[i])) - exact) <= err[i], (h, j[i], float(exact), err[i])


@dataclass(frozen=True)
class PerturbedGaussian(GaussianDirection):
    """A Gaussian direction whose tails are moved by up to ``rel`` of themselves, in the
    directions that raise the node profiles (upper Q-tails and lower P-tails up, the others
    down), and which declares that accuracy: its optimistic law must still lie below the truth."""

    rel: float = 1e-11

    def tails(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        fq, sq, fp, sp = super().tails(g)
        # uneven moves, so cells err differently (a tail at an infinite argument is exact)
        wave = np.where(np.isfinite(g), 0.5 + 0.5 * np.cos(np.where(np.isfinite(g), g, 0.0) * 7.0),
                        0.0)
        up, down = 1.0 + self.rel * wave, 1.0 - self.rel * wave
        return fq * down, sq * up, fp * up, sp * down

    def tail_accuracy(self, g: np.ndarray, dg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rel, ab = super().tail_accuracy(g, dg)
        return rel + 1.01 * self.rel, ab

    def tail_errors(self, g: np.ndarray, dg: np.ndarray, tails: tuple[np.ndarray, ...],
                    which: tuple[int, ...] = (0, 1, 2, 3)) -> tuple[np.ndarray, ...]:
        return TailDirection.tail_errors(self, g, dg, tails, which)
