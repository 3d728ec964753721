"""Mixtures of Gaussians: a Gaussian mechanism with a random sensitivity
[@choquettechoo2024amplification], with its monotone loss found by safeguarded Newton steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from accountant.core.normal import ndtr_pair
from accountant.core.rounding import div_up
from accountant.core.types import MACHINE_EPSILON, FloatArray
from accountant.core.validation import check_real, check_reals
from accountant.pld.grid.law import SOURCE_TAIL
from accountant.pld.laws.base import LossDirection
from accountant.pld.laws.errors import ndtr_accuracy
from accountant.pld.laws.subsampled import subsample_tail
from accountant.pld.laws.tail import TailDirection, z_of_tail
from accountant.pld.models.base import Pair

#: Far end of the root bracket of ``MixtureDirection``, in standard deviations beyond every mean:
#: every component's mass beyond it (Phi(-40) < 1e-349) is below the smallest double.
_MIXTURE_FAR = 40.0


#: Sub-intervals over which ``MixtureDirection.slope_bounds`` takes its interval bounds.
_MIXTURE_SPLIT = 4


def _log_mixture(x: FloatArray, means: FloatArray, logw: FloatArray) -> tuple[FloatArray, FloatArray]:
    """log sum_i w_i e^{m_i x - m_i^2/2} (the log density ratio of sum_i w_i N(m_i, 1) to N(0, 1))
    and its derivative in x (the posterior mean of m), stably."""
    t = logw[None, :] + means[None, :] * x[:, None] - 0.5 * means[None, :] ** 2
    top = t.max(axis=1, keepdims=True)
    e = np.exp(t - top)
    s = e.sum(axis=1)
    return top[:, 0] + np.log(s), (e @ means) / s


@dataclass(frozen=True)
class MixtureDirection(TailDirection):
    """(P, Q) = (sum_i a_i N(s_i, 1), sum_j b_j N(t_j, 1)) with min_j t_j >= max_i s_i.

    The loss L(x) = log(q/p)(x) has derivative E[t | x, Q] - E[s | x, P] >= 0 (posterior means of the
    components), positive unless all means are equal (refused), so {L > g} = {X > L^{-1}(g)} and
    each tail is a sum of Gaussian tails at one point. The root is found by safeguarded Newton
    steps to a few ulps; a root off by d moves only the Q-mass of a sliver of width d across a cell
    boundary, and keeps its loss within a few ulps of that boundary, far below the 8u slack charged.
    """

    p_means: tuple[float, ...]
    p_weights: tuple[float, ...]
    q_means: tuple[float, ...]
    q_weights: tuple[float, ...]

    def subsampled(self, rate: float, poisson: bool) -> tuple[LossDirection, LossDirection | None]:
        return subsample_tail(self, rate, poisson)

    def __post_init__(self) -> None:
        if min(self.q_means) < max(self.p_means):
            raise ValueError("the loss of a Gaussian mixture pair is monotone only when every mean "
                             f"of Q is >= every mean of P; got P means {self.p_means}, Q means "
                             f"{self.q_means}")
        if min(self.q_means) == max(self.q_means) == min(self.p_means):
            raise ValueError("the two mixtures are equal: there is no privacy loss to account")

    @cached_property
    def _arrays(self) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        def arr(v: tuple[float, ...]) -> FloatArray:
            return np.asarray(v, dtype=np.float64)
        return arr(self.p_means), np.log(arr(self.p_weights)), arr(self.q_means), \
            np.log(arr(self.q_weights))

    def loss(self, x: FloatArray) -> tuple[FloatArray, FloatArray]:
        """L(x) and L'(x)."""
        pm, pw, qm, qw = self._arrays
        lq, dq = _log_mixture(x, qm, qw)
        lp, dp = _log_mixture(x, pm, pw)
        return lq - lp, dq - dp

    def inverse(self, g: FloatArray) -> FloatArray:
        """x with L(x) = g (+-inf where g lies beyond the loss range on the float line)."""
        pm, _, qm, _ = self._arrays
        xa = float(min(pm.min(), qm.min())) - _MIXTURE_FAR
        xb = float(max(pm.max(), qm.max())) + _MIXTURE_FAR
        (la, lb), _ = self.loss(np.array([xa, xb]))
        g = np.asarray(g, dtype=np.float64)
        inside = (g > la) & (g < lb)
        gi = g[inside]
        # start from a table of L on 4097 points (the bracket's ends and the interpolated root),
        # then safeguarded Newton steps on the points not yet converged
        xs = np.linspace(xa, xb, 4097)
        ls = np.maximum.accumulate(self.loss(xs)[0])
        k = np.clip(np.searchsorted(ls, gi, side="right"), 1, xs.size - 1)
        lo, hi = xs[k - 1], xs[k]
        x = np.clip(np.interp(gi, ls, xs), lo, hi)
        active = np.arange(gi.size)
        for _ in range(200):
            xa_ = x[active]
            f, d = self.loss(xa_)
            f = f - gi[active]
            lo[active] = np.where(f <= 0, xa_, lo[active])
            hi[active] = np.where(f > 0, xa_, hi[active])
            with np.errstate(divide="ignore", invalid="ignore"):
                xn = xa_ - f / d
            bad = ~((xn > lo[active]) & (xn < hi[active]))
            xn = np.where(bad, 0.5 * (lo[active] + hi[active]), xn)
            done = np.abs(xn - xa_) <= 4 * MACHINE_EPSILON * np.maximum(1.0, np.abs(xa_))
            x[active] = xn
            active = active[~done]
            if active.size == 0:
                break
        out = np.where(g <= la, -np.inf, np.inf)
        out[inside] = x
        return out

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        x = self.inverse(g)[:, None]
        out = []
        for means, weights in ((self.q_means, self.q_weights), (self.p_means, self.p_weights)):
            m = np.asarray(means)[None, :]
            w = np.asarray(weights)
            below, above = ndtr_pair(x - m)  # Phi(x - m), Phi(m - x)
            out += [below @ w, above @ w]
        return out[0], out[1], out[2], out[3]

    def _posterior(self, x: FloatArray, q_side: bool) -> tuple[FloatArray, FloatArray]:
        """Posterior mean and variance of the component mean given x, under Q or P."""
        pm, pw, qm, qw = self._arrays
        means, logw = (qm, qw) if q_side else (pm, pw)
        t = logw[None, :] + means[None, :] * x[:, None] - 0.5 * means[None, :] ** 2
        e = np.exp(t - t.max(axis=1, keepdims=True))
        s = e.sum(axis=1)
        m = (e @ means) / s
        return m, np.sum(e * (means[None, :] - m[:, None]) ** 2, axis=1) / s

    def _root_error(self, x: FloatArray, g: FloatArray, dg: FloatArray) -> FloatArray:
        """d with |x - x*| <= d, x = ``inverse(g)`` (finite) and L(x*) = g' for any g' within dg
        of g; inf where not proven. L(x) is computed to within eL (log-sum-exp of terms
        log w + m x - m^2/2: 8 u of the largest term and of the count, per side), so
        |L(x) - g'| <= |L~(x) - g| + eL + dg =: e; L is increasing with L' >= lam on
        [x - d, x + d] for lam the Q posterior mean at x - d minus the P one at x + d (both are
        increasing), so a root lies within d when lam d >= e."""
        pm, pw, qm, qw = self._arrays
        f, slope = self.loss(x)
        big = sum(float(np.max(np.abs(lw)) + 0.5 * np.max(m * m)) + m.size + 2.0
                  + float(np.max(np.abs(m))) * np.abs(x) for m, lw in ((qm, qw), (pm, pw)))
        e = (np.abs(f - g) + 8.0 * MACHINE_EPSILON * big + dg) * (1.0 + 1e-9)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = 2.0 * e / slope + 4.0 * MACHINE_EPSILON * np.maximum(1.0, np.abs(x))
        d = np.where(np.isfinite(d) & (d > 0), d, np.inf)
        ok = np.isfinite(d)
        lam = np.zeros_like(x)
        if ok.any():
            pad = 8.0 * MACHINE_EPSILON * (pm.size + qm.size + 2) * float(np.max(np.abs(
                np.concatenate([pm, qm]))))
            lam[ok] = (self._posterior(x[ok] - d[ok], True)[0]
                       - self._posterior(x[ok] + d[ok], False)[0] - pad)
        return np.asarray(np.where(ok & (lam * d >= e), d, np.inf), dtype=np.float64)

    def tail_accuracy(self, g: FloatArray,
                      dg: FloatArray) -> tuple[FloatArray, FloatArray]:
        # each tail is sum_i w_i Phi(+-(x - m_i)) at the computed root: ndtr's error at an
        # argument off by the root's error and the subtraction's rounding, then the weighted
        # sum of non-negative terms ((n + 2) u); beyond the loss range the tails are exact
        # (the mass beyond ``_MIXTURE_FAR`` is below the smallest double)
        x = self.inverse(g)
        fin = np.isfinite(x)
        rel = np.full(g.shape, 8.0 * MACHINE_EPSILON)
        if fin.any():
            xf = x[fin]
            d = self._root_error(xf, g[fin], dg[fin])
            pm, _, qm, _ = self._arrays
            means = np.concatenate([pm, qm])
            z = xf[:, None] - means[None, :]
            dz = d[:, None] + MACHINE_EPSILON * np.abs(z)
            worst = ndtr_accuracy(z, dz).max(axis=1)
            rel[fin] = worst + (means.size + 2) * MACHINE_EPSILON
        return rel, np.full(g.shape, 1e-300)

    def slope_bounds(self, g: FloatArray,
                     dg: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        # f(l) = q_X(x) / L'(x) at x = L^{-1}(l), so (log f)'(l) = ((m_Q - x) - L''/L') / L' with
        # L' = m_Q - m_P and L'' = v_Q - v_P (posterior means and variances of the component
        # means). On the cell's x-interval [x0, x1] (roots widened by their error), m_Q and m_P
        # are increasing and |v'| = |third central moment| <= R v <= R^3 / 4 (R the range of the
        # means), so each term lies in an interval; the quotient's bounds follow by interval
        # arithmetic (both infinite where L' may vanish), with 16 u pads on the terms
        x = self.inverse(g)
        d = np.full(g.shape, np.inf)
        ok_x = np.isfinite(x)
        if ok_x.any():
            d[ok_x] = self._root_error(x[ok_x], g[ok_x], dg[ok_x])
        x0, x1 = x[:-1], x[1:]
        up, down = np.full(x0.shape, np.inf), np.full(x0.shape, -np.inf)
        fin = np.isfinite(x0) & np.isfinite(x1)
        if not fin.any():
            return down, up
        x0 = x0[fin] - d[:-1][fin]
        x1 = x1[fin] + d[1:][fin]
        ok = np.isfinite(x0) & np.isfinite(x1)
        x0, x1 = np.where(ok, x0, 0.0), np.where(ok, x1, 0.0)
        # the interval bounds lose in proportion to the interval's width: 4 sub-intervals
        s_lo, s_hi = np.full(x0.shape, np.inf), np.full(x0.shape, -np.inf)
        for i in range(_MIXTURE_SPLIT):
            a0 = x0 + (x1 - x0) * (i / _MIXTURE_SPLIT)
            a1 = x1 if i == _MIXTURE_SPLIT - 1 else x0 + (x1 - x0) * ((i + 1) / _MIXTURE_SPLIT)
            lo_i, hi_i = self._slope_interval(np.minimum(a0, a1), np.maximum(a0, a1))
            s_lo, s_hi = np.minimum(s_lo, lo_i), np.maximum(s_hi, hi_i)
        good = ok & ~np.isnan(s_hi) & ~np.isnan(s_lo)
        idx = np.flatnonzero(fin)
        up[idx] = np.where(good, s_hi, np.inf)
        down[idx] = np.where(good, s_lo, -np.inf)
        return down, up

    def _slope_interval(self, x0: FloatArray, x1: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Bounds of (log f)' over the losses of x in [x0, x1] (``slope_bounds``; nan or
        infinite where L' may vanish)."""
        pm, _, qm, _ = self._arrays
        w = x1 - x0
        big = float(np.max(np.abs(np.concatenate([pm, qm]))))
        pad = 16.0 * MACHINE_EPSILON * (pm.size + qm.size + 2) * (big + 1.0)

        def bounds(q_side: bool, means: FloatArray) -> tuple[FloatArray, ...]:
            m0, v0 = self._posterior(x0, q_side)
            m1, _ = self._posterior(x1, q_side)
            r = float(means.max() - means.min())
            dv = w * r ** 3 / 4.0 + pad * (big + 1.0)
            return (m0 - pad, m1 + pad, np.maximum(v0 - dv, 0.0),
                    np.minimum(v0 + dv, r * r / 4.0 + pad * (big + 1.0)))

        mq_lo, mq_hi, vq_lo, vq_hi = bounds(True, qm)
        mp_lo, mp_hi, vp_lo, vp_hi = bounds(False, pm)
        l1_lo, l1_hi = mq_lo - mp_hi, mq_hi - mp_lo
        l2_lo, l2_hi = vq_lo - vp_hi, vq_hi - vp_lo
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            r_lo = l2_lo / np.where(l2_lo < 0, l1_lo, l1_hi)
            r_hi = l2_hi / np.where(l2_hi < 0, l1_hi, l1_lo)
            slack = 16.0 * MACHINE_EPSILON * (np.abs(x0) + np.abs(x1) + big + np.abs(r_lo)
                                       + np.abs(r_hi) + 1.0)
            n_lo = (mq_lo - x1) - r_hi - slack
            n_hi = (mq_hi - x0) - r_lo + slack
            s_hi = n_hi / np.where(n_hi >= 0, l1_lo, l1_hi)
            s_lo = n_lo / np.where(n_lo >= 0, l1_hi, l1_lo)
            s_hi = s_hi + 16.0 * MACHINE_EPSILON * (np.abs(s_hi) + 1.0)
            s_lo = s_lo - 16.0 * MACHINE_EPSILON * (np.abs(s_lo) + 1.0)
        positive = l1_lo > 0
        return (np.asarray(np.where(positive, s_lo, np.nan), dtype=np.float64),
                np.asarray(np.where(positive, s_hi, np.nan), dtype=np.float64))

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        z = z_of_tail(tail)
        (lo, hi), _ = self.loss(np.array([min(self.q_means) - z, max(self.q_means) + z]))
        return float(lo), float(hi)

    def reverse(self) -> MixtureDirection:
        """The pair (Q, P), reflected (x -> -x) so that its loss is increasing again."""
        return MixtureDirection(tuple(-m for m in self.q_means), self.q_weights,
                                 tuple(-m for m in self.p_means), self.p_weights)


#: The largest mean s_i / sigma of a mixture's components.
_MAX_MEAN = 1e4


def _check_mixture(sigma: float, sensitivities: Any, probs: Any) -> tuple[tuple[float, ...],
                                                                          tuple[float, ...]]:
    """Validated (sensitivities, probabilities) of a Gaussian mixture with zero-probability
    components dropped and the probabilities normalised."""
    s = check_reals("sensitivities", sensitivities, low=0.0, high=math.inf, high_open=True)
    p = check_reals("probs", probs, low=0.0, high=1.0)
    if s and not max(s) <= _MAX_MEAN * sigma:  # the losses' means s_i / sigma, up to 1e4
        raise ValueError(f"sigma must be at least max(sensitivities) / {_MAX_MEAN:g} = "
                         f"{max(s) / _MAX_MEAN!r}, got sigma={sigma!r} (sensitivities "
                         f"{s}): raise sigma or scale the sensitivities down")
    if len(s) != len(p) or not 1 <= len(s) <= 1000:
        raise ValueError(f"sensitivities and probs must have the same length in [1, 1000], got "
                         f"{len(s)} and {len(p)}")
    total = math.fsum(p)
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"probs must sum to 1 (within 1e-9), got a sum of {total!r}")
    kept = [(si, pi / total) for si, pi in zip(s, p, strict=True) if pi > 0]
    if max(si for si, _ in kept) == 0.0:
        raise ValueError(f"at least one sensitivity with positive probability must be > 0, got "
                         f"sensitivities {s} with probs {p}")
    return tuple(si for si, _ in kept), tuple(pi for _, pi in kept)


@dataclass(frozen=True)
class MixtureGaussianPair(Pair):
    """A Gaussian mechanism whose sensitivity is random, s_i >= 0 with probability p_i
    [@choquettechoo2024amplification]: remove = (N(0, sigma^2), sum_i p_i N(s_i, sigma^2)),
    add = the reverse (the model of dp_accounting's ``MixtureGaussianPrivacyLoss``).
    Sensitivities (0, 1) with probs (1 - q, q) give the Poisson-subsampled Gaussian; (0, 1, 2) with
    probs (1 - q)^2, 2q(1 - q), q^2 a record sampled twice. Vector sensitivities reduce to their
    norms [@choquettechoo2024amplification, Cor. 4.7]. Mixed signs (a non-monotone loss) are
    refused.

    The means s_i / sigma are rounded up (``div_up``): delta(eps) grows with each mean in both
    directions. As the loss increases in x, the remove region {q > e^eps p} is a half-line
    (x*, inf) and d delta / d m_j = p_j int_{x*}^inf (x - m_j) phi(x - m_j) dx = p_j phi(x* - m_j)
    >= 0 (the boundary term is 0); for add, the region is (-inf, x*) and d delta / d m_j =
    e^eps p_j phi(x* - m_j) >= 0."""

    sigma: float
    sensitivities: tuple[float, ...]
    probs: tuple[float, ...]
    kind: ClassVar[str | None] = "mixture_gaussian"

    def __post_init__(self) -> None:
        sigma = check_real("sigma", self.sigma, low=0.0, low_open=True, high=math.inf,
                           high_open=True)
        s, p = _check_mixture(sigma, self.sensitivities, self.probs)
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "sensitivities", s)
        object.__setattr__(self, "probs", p)

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        means = tuple(div_up(s, self.sigma) for s in self.sensitivities)
        rem = MixtureDirection((0.0,), (1.0,), means, self.probs)
        return rem, rem.reverse()
