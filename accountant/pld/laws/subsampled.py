"""Subsampling of a continuous loss law: the loss of (P, (1-r)P + rQ) is phi(l) = log(1 - r + r e^l) of the
base loss l [@balle2018subsampling; @zhu2022optimal, Sec. 5].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from accountant.core.rounding import LIBM_REL
from accountant.core.types import MACHINE_EPSILON, UNIT_ROUNDOFF, FloatArray
from accountant.pld.grid.law import SOURCE_TAIL
from accountant.pld.laws.base import Direction, LossDirection
from accountant.pld.laws.errors import UNDERFLOW, CellErrors
from accountant.pld.laws.symmetric import SymmetricTailDirection
from accountant.pld.laws.tail import TailDirection


def mixture_log(r: float, l_: FloatArray) -> FloatArray:
    """log(1 - r + r e^l), the loss of the subsampled pair (P, (1-r)P + rQ) at a base loss l."""
    out = np.logaddexp(math.log1p(-r), math.log(r) + l_)
    return np.asarray(np.where(l_ == 0.0, 0.0, out), dtype=np.float64)  # exact at l = 0


def mixture_log_error(r: float, mixed: FloatArray, l_: FloatArray) -> FloatArray:
    """Bound on |``mixture_log``(r, l) - phi(l)| for doubles l (``mixed`` its values; 0 at l = 0,
    where it is exact). It cancels near l = 0, so it errs by ulps of its operands, not of itself:
    logaddexp(x, y) = max + log1p(e^{-|x - y|}) has weights in [0, 1] summing to 1 on x = log(1 - r)
    and y = log r + l, which err by LIBM_REL |x| and LIBM_REL |log r| + u (|log r| + |l|); the
    difference, exp and log1p (a value at most log 2, slope at most 1/2 in exp's relative error)
    add at most 1.2 LIBM_REL + u (|x| + |y|) / 2, the final sum u |phi|. With s = |log(1 - r)| +
    |log r| >= 2 log 2 > 1.2, all of it is below (2 LIBM_REL + 2u) (|phi| + s + |l|)."""
    scale = abs(math.log1p(-r)) + abs(math.log(r))
    err = (2.0 * LIBM_REL + MACHINE_EPSILON) * (np.abs(mixed) + scale + np.abs(l_))
    return np.asarray(np.where(l_ == 0.0, 0.0, err), dtype=np.float64)


@dataclass(frozen=True)
class SubsampledTailDirection(TailDirection):
    """A continuous pair (P, Q) subsampled with rate r, remove: (P, (1-r)P + rQ); add: swapped
    [@balle2018subsampling; @zhu2022optimal, Sec. 5]. The loss is the increasing
    function phi(l) = log(1 - r + r e^l) of the base loss l, so its tails are the base's tails at
    phi^{-1}(g) = log((e^g - 1 + r) / r), mixed; atoms are mapped by phi."""

    base: TailDirection
    rate: float
    direction: Direction

    @property
    def q_inf(self) -> float:  # type: ignore[override]
        return self.rate * self.base.q_inf if self.direction == "remove" else 0.0

    @property
    def bounded(self) -> bool:  # type: ignore[override]
        """The add loss -phi(l) is at most -log(1 - r) (-phi(base bottom) for a bounded base);
        the remove loss is bounded where the base's is (``support`` rounds both tops up)."""
        return self.direction == "add" or self.base.bounded

    def _base_loss(self, v: FloatArray) -> FloatArray:
        """phi^{-1}(v) for v > log(1 - r), else -inf."""
        return self._base_loss_bounded(v, None)[0]

    def _mapped(self, g: FloatArray, dg: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(v, l, dl) for nodes g within dg of exact ones: v = g (remove) or -g (add), l its base
        loss and dl l's error bound; the last call's result is kept (``tail_accuracy`` and
        ``slope_bounds`` read the same nodes), and l is taken from ``tails`` at the same nodes."""
        memo = self.__dict__.get("_memo")
        if memo is not None and memo[0] is g and memo[1] is dg:
            v, l_, dl = memo[2]
            return v, l_, dl
        v = g if self.direction == "remove" else -g
        tails = self.__dict__.get("_base_tails")
        l_, dl = self._base_loss_bounded(v, dg, tails[2] if tails and tails[0] is g else None)
        self.__dict__["_memo"] = (g, dg, (v, l_, dl))
        return v, l_, dl

    def _base_loss_bounded(self, v: FloatArray, dv: FloatArray | None,
                           known: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
        """phi^{-1}(v) (-inf for v <= log(1 - r); ``known`` if given: computed before) and, when dv
        is given, a bound of its error against phi^{-1}(v') for any exact v' within dv of v (0
        where it is -inf)."""
        u = UNIT_ROUNDOFF
        r = self.rate
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            em = np.expm1(v)
            y = em + r
            if known is None:
                # near log(1 - r): log(y / r) (overflows above 709); above 1: v + log1p(-(1 - r)
                # e^{-v}) - log r; each evaluated where it is used
                l_ = np.full(v.shape, -np.inf)
                far = v > 1.0
                near = (v > math.log1p(-r)) & ~far
                l_[near] = np.log(y[near] / r)
                vf = v[far]
                l_[far] = vf + np.log1p(-(1.0 - r) * np.exp(-vf)) - math.log(r)
            else:
                l_ = known
            if dv is None:
                return l_, l_
            # near: expm1 (LIBM_REL of em), the sum, the quotient (u) and log (LIBM_REL of l);
            # far: exp, log1p (its argument at most 0.37 in modulus) and log r (LIBM_REL each,
            # of values at most |v| + |l| + |log r| + 1) and three roundings
            dy = (LIBM_REL * np.abs(em) + (em + 1.0) * dv) * 1.01 + u * np.abs(y)
            d_near = np.where(y > dy, dy / (y - dy) * 1.01 + LIBM_REL * np.abs(l_) + 4.0 * u,
                              np.inf)
            d_far = 2.6 * dv + (2.0 * LIBM_REL + 4.0 * u) * (np.abs(v) + np.abs(l_)
                                                             + abs(math.log(r)) + 2.0)
            dl = np.where(np.isfinite(l_), np.where(v > 1.0, d_far, d_near), 0.0)
        return l_, np.asarray(dl, dtype=np.float64)

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        r = self.rate
        l_ = self._base_loss(g if self.direction == "remove" else -g)
        base = self.base.tails(l_)
        self.__dict__["_base_tails"] = (g, base, l_)  # for ``profile_error`` and ``_mapped``
        fq0, sq0, fp0, sp0 = base
        if self.direction == "remove":
            return (1 - r) * fp0 + r * fq0, (1 - r) * sp0 + r * sq0, fp0, sp0
        # L' = -phi(l) > g  <=>  l < phi^{-1}(-g): under Q' = P and P' = the mixture
        return sp0, fp0, (1 - r) * sp0 + r * sq0, (1 - r) * fp0 + r * fq0

    def tail_errors(self, g: FloatArray, dg: FloatArray, tails: tuple[FloatArray, ...],
                    which: tuple[int, ...] = (0, 1, 2, 3)) -> tuple[FloatArray, ...]:
        # each tail from the base's own per-tail errors at l = phi^{-1}(+-g) (within dl): a base
        # tail itself, or a mix with weights 1 - r and r (and its 4 roundings: 4 u of it); the
        # generic bound where l is -inf but the exact argument may map above log(1 - r)
        u = UNIT_ROUNDOFF
        r = self.rate
        v, l_, dl = self._mapped(g, dg)
        base = self.base.tails(l_)
        e0 = self.base.tail_errors(l_, dl, base)
        parts: tuple[tuple[int, ...], ...]
        if self.direction == "remove":  # (mix of fp0, fq0; mix of sp0, sq0; fp0; sp0)
            parts = ((2, 0), (3, 1), (2,), (3,))
        else:  # (sp0; fp0; mix of sp0, sq0; mix of fp0, fq0)
            parts = ((3,), (2,), (3, 1), (2, 0))
        default = super().tail_errors(g, dg, tails, which)
        edge = ~np.isfinite(l_) & (v + dg > math.log1p(-r))
        out = []
        for k, generic in zip(which, default, strict=True):
            mix = parts[k]
            with np.errstate(invalid="ignore"):
                if len(mix) == 1:
                    own = e0[mix[0]]
                else:
                    own = ((1.0 - r) * e0[mix[0]] + r * e0[mix[1]] + 4.0 * u * np.abs(tails[k])
                           + 4.0 * UNDERFLOW) * (1.0 + 4.0 * u)
            ok = ~edge & np.isfinite(own)
            out.append(np.asarray(np.where(ok, np.minimum(own, generic), generic),
                                  dtype=np.float64))
        return tuple(out)

    def profile_error(self, g: FloatArray, dg: FloatArray, tails: tuple[FloatArray, ...],
                      errors: CellErrors) -> FloatArray:
        # The base's tails T0 at l = phi^{-1}(+-g) enter both tails with coefficients that
        # nearly cancel: remove, sq - e^g sp = (1 - r - e^g) sp0 + r sq0; add, sq - e^g sp =
        # (1 - (1 - r) e^g) fp0 - e^g r fq0. Where l is finite, 1 - r - e^g = -r e^l (add:
        # 1 - (1 - r) e^g = e^g r e^l): the profile errs by r times the base's errors (at l
        # within dl, ``tail_errors``), not by the tails' own, plus the rounding of the mixed tail
        # (1 - r, two products and a sum: 5 u of it, and 4 UNDERFLOW where its terms are
        # subnormal, times e^g for the P-tail). The coefficient is bounded both ways (as
        # r e^{l + dl}, and directly, with e^g's rounding); where l is -inf but the exact node
        # may map above log(1 - r), the default bound.
        default = super().profile_error(g, dg, tails, errors)
        memo = self.__dict__.get("_base_tails")
        if memo is None or memo[0] is not g:
            return default
        r, u = self.rate, UNIT_ROUNDOFF
        v, l_, dl = self._mapped(g, dg)
        remove = self.direction == "remove"
        # the two base tails that enter (remove: the upper ones, add: the lower ones)
        d_q0, d_p0 = self.base.tail_errors(l_, dl, memo[1], (1, 3) if remove else (0, 2))
        with np.errstate(over="ignore", invalid="ignore"):
            eg = np.exp(g)
            slack_g = eg * (dg + LIBM_REL + 2.0 * u) * 1.01 + 4.0 * u  # exp's and g's error
            via_l = np.where(np.isfinite(l_), r * np.exp(l_ + dl), np.inf)
            if remove:
                coef = np.minimum(via_l, np.abs((1.0 - r) - eg) + slack_g)
                out = coef * d_p0 + r * d_q0 + 5.0 * u * tails[1]
            else:
                coef = np.minimum(eg * via_l, np.abs(1.0 - (1.0 - r) * eg) + slack_g)
                out = coef * d_p0 + eg * (r * d_q0 + 5.0 * u * tails[3])
            out = out * (1.0 + 1e-6) + 4.0 * UNDERFLOW * (1.0 + eg)
        edge = ~np.isfinite(l_) & (v + dg > math.log1p(-r))
        ok = ~edge & np.isfinite(out)
        return np.asarray(np.where(ok, np.minimum(out, default), default), dtype=np.float64)

    def slope_bounds(self, g: FloatArray,
                     dg: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        # With D(l) = dl/dv = 1 + (1 - r) e^{-l} / r (decreasing in l) and s(l) the base's slope:
        # remove: f(v) = f_Q(l) r D(l)^2, (log f)'(v) = 2 + (s(l) - 2) D(l);
        # add: L = -phi(l) under P, f(v) = f_Q(l) e^{-l} D(l), (log f)'(v) = (2 - s(l)) D(l) - 1;
        # bounded over the base's cells between the nodes l = phi^{-1}(+-g) (the add order
        # reversed), widened by the map's error
        r = self.rate
        remove = self.direction == "remove"
        _, l_, dl = self._mapped(g, dg)
        if not remove:  # increasing nodes
            l_, dl = l_[::-1], dl[::-1]
        base = self.base.slope_bounds(l_, dl)
        if base is None:
            return None
        s_lo, s_hi = base
        l_lo, l_hi = self.base.widened(l_, dl)  # as the base's slope_bounds widened them
        c = (1.0 - r) / r
        with np.errstate(invalid="ignore", over="ignore"):
            # c (2 roundings), exp (LIBM_REL), the product and the sum
            d_max = (1.0 + c * np.exp(-l_lo)) * (1.0 + LIBM_REL + 3.0 * MACHINE_EPSILON)
            d_min = (1.0 + c * np.exp(-l_hi)) * (1.0 - LIBM_REL - 3.0 * MACHINE_EPSILON)

            def scaled(a: FloatArray, top: bool) -> FloatArray:
                """max (top) or min over the interval of a D, for a constant a."""
                return np.asarray(np.where((a >= 0) == top, a * d_max, a * d_min))

            if remove:
                up, down = 2.0 + scaled(s_hi - 2.0, True), 2.0 + scaled(s_lo - 2.0, False)
            else:
                up = (scaled(2.0 - s_lo, True) - 1.0)[::-1]
                down = (scaled(2.0 - s_hi, False) - 1.0)[::-1]
            pad_up = 4.0 * MACHINE_EPSILON * (np.abs(up) + 2.0)
            pad_down = 4.0 * MACHINE_EPSILON * (np.abs(down) + 2.0)
            up = np.where(np.isnan(up), np.inf, up + pad_up)
            down = np.where(np.isnan(down), -np.inf, down - pad_down)
        return np.asarray(down, dtype=np.float64), np.asarray(up, dtype=np.float64)

    def tail_accuracy(self, g: FloatArray,
                      dg: FloatArray) -> tuple[FloatArray, FloatArray]:
        # the base's tails at l = phi^{-1}(+-g) (its error dl below), mixed with non-negative
        # weights (3 u more)
        u = UNIT_ROUNDOFF
        r = self.rate
        v, l_, dl = self._mapped(g, dg)
        rel, ab = self.base.tail_accuracy(l_, dl)
        # where l = -inf was computed but the exact argument may lie above log(1 - r), the
        # lower tails there are at most the base's at the largest such argument
        edge = ~np.isfinite(l_) & (v + dg > math.log1p(-r))
        if edge.any():
            hi = self._base_loss(v[edge] + dg[edge] * 1.01 + 4 * u * np.abs(v[edge]))
            fq0, _, fp0, _ = self.base.tails(hi)
            ab = ab.copy()
            ab[edge] += 2.0 * np.maximum(fq0, fp0) + 1e-300
        return rel + 3 * u, ab

    def point_masses(self) -> tuple[FloatArray, FloatArray]:
        losses, q = self.base.point_masses()
        p = q * np.exp(-losses)
        if self.direction == "remove":
            return mixture_log(self.rate, losses), (1 - self.rate) * p + self.rate * q
        return -mixture_log(self.rate, losses), p

    def atoms(self) -> tuple[float, ...]:
        return tuple(float(a) for a in self.point_masses()[0])

    def atom_error(self) -> FloatArray:
        # ``mixture_log_error``; phi's slope in l is at most 1, so the base's own position errors
        # carry over
        losses = self.base.point_masses()[0]
        err = mixture_log_error(self.rate, mixture_log(self.rate, losses), losses)
        return np.asarray(err + self.base.atom_error(), dtype=np.float64)

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        """(phi(base bottom), phi(base top)) for remove (the bottom log(1 - r), phi(-inf), unless
        the base is bounded), mirrored for add, rounded outward (a bounded direction's top is
        where its delta stops, ``GridLaw.support_top``)."""
        ends = np.asarray(self.base.support(tail))
        phi = mixture_log(self.rate, ends)
        err = mixture_log_error(self.rate, phi, ends)
        top = math.nextafter(float(phi[1] + err[1]), math.inf)
        if self.base.bounded:
            bottom = math.nextafter(float(phi[0] - err[0]), -math.inf)
        else:
            low = math.log1p(-self.rate)
            bottom = math.nextafter(low - LIBM_REL * abs(low), -math.inf)
        return (bottom, top) if self.direction == "remove" else (-top, -bottom)


def subsample_tail(base: TailDirection, rate: float,
                   poisson: bool) -> tuple[LossDirection, LossDirection | None]:
    """``LossDirection.subsampled`` of a continuous law: Poisson, the remove and add laws of the
    mixture (``SubsampledTailDirection``); without replacement, the symmetric law with the remove
    law's profile at eps >= 0 (``SymmetricTailDirection``) [@dong2022gaussian, Sec. 4.2]."""
    remove = SubsampledTailDirection(base, rate, "remove")
    if poisson:
        return remove, SubsampledTailDirection(base, rate, "add")
    return SymmetricTailDirection(remove), None
