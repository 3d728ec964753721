"""Dominating pairs: one frozen value per privacy-loss model, written once.

A mechanism is described for the accountant by a dominating pair (P, Q) of distributions for each
order of neighbouring datasets [@zhu2022optimal]: every privacy guarantee of the mechanism is
read from the law of the privacy loss L = log(q/p) under Q. A ``Pair`` declares the model by its
parameters (``GaussianPair(mu)``, ``DiscreteLaplacePair(scale, sensitivity)``, ...) and builds its
``LossDirection`` objects, which know how to put that law on the PLD grid. The PLD, the f-DP
curves, subsampling and serialisation all read the same pair; a new model plugs in by subclassing
``Pair`` (with a ``kind`` name for serialisation), without editing the accountant.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, fields, replace
from fractions import Fraction
from functools import cached_property
from typing import Any, ClassVar, Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ._numeric import (
    LIBM_REL,
    FloatArray,
    as_float_array,
    check_count,
    check_real,
    check_reals,
    div_up,
    lower_convex_hull,
)
from ._plderror import (
    UNDERFLOW,
    CellErrors,
    cell_errors,
    deficit_share,
    ndtr_accuracy,
    optimistic_node_error,
    product_error,
    scaled_up,
    source_tail_law,
    up_share,
)
from ._pldgrid import (
    EPS_MACH,
    REFINE,
    SOURCE_TAIL,
    ContentErrors,
    GridLaw,
    atom_content_bounds,
    deposit_atoms,
    from_atoms,
    from_cells,
)
from .tradeoff import (
    GAUSS_UNHELD_MASS,
    FiniteLossTradeoff,
    GaussianTradeoff,
    LaplaceTradeoff,
    PiecewiseLinearTradeoff,
    TradeoffFunction,
    default_alpha_grid,
    gauss_log_norm,
    gauss_masses,
)

Direction = Literal["remove", "add"]
#: Relative error taken of finite Q-masses given without a declared bound (``_FiniteDirection``).
MASS_RTOL = 8.0 * EPS_MACH
#: Window of ``DiscreteGaussianPair`` in standard deviations (the PLD grid cannot use more).
PAIR_GAUSSIAN_TAIL = 13.0


def _z(tail: float) -> float:
    """z with Phi(-z) = tail."""
    return float(-special.ndtri(tail))


# ============================ one ordered pair ===================================================


class LossDirection(ABC):
    """One ordered dominating pair (P, Q), able to discretise the law of L = log(q/p) under Q."""

    @abstractmethod
    def discretize(self, h: float, pessimistic: bool, tail: float = SOURCE_TAIL) -> GridLaw:
        """Grid law on width h: pessimistic (delta never below the truth) or optimistic; a
        continuous law is cut where its tails have Q-mass ``tail`` (pessimistically moved to
        +inf or up, optimistically dropped)."""

    def atoms(self) -> tuple[float, ...]:
        """Finite loss values carrying an atom, used to align the grid with them."""
        return ()

    def continuous_mass(self) -> float:
        """Q-mass of L off its finite atoms (``atoms``): what a grid aligned with the atoms
        discretises with an error (it only guides the choice of the grid)."""
        return 1.0

    @abstractmethod
    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        """Interval outside of which L has Q-mass at most ``tail`` on each side."""


class _TailDirection(LossDirection):
    """A pair given by the tails of L under Q and P: (Q(L<=g), Q(L>g), P(L<=g), P(L>g)), their
    accuracy, and optionally bounds of the log-density slope of L under Q (``slope_bounds``),
    which give the pessimistic split without cancellation (``_plderror``)."""

    q_inf: float = 0.0
    #: whether ``support`` is exact (no finite mass above its top, whatever the tail): the
    #: pessimistic law then keeps delta exactly q_inf from there on (``GridLaw.support_top``)
    bounded: bool = False

    @abstractmethod
    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]: ...

    @abstractmethod
    def tail_accuracy(self, g: FloatArray,
                      dg: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(rel, abs) with |T~ - T| <= rel T~ + abs for each of the four tails computed at g,
        where g is within dg of the exact argument."""

    def tail_errors(self, g: FloatArray, dg: FloatArray, tails: tuple[FloatArray, ...],
                    which: tuple[int, ...] = (0, 1, 2, 3)) -> tuple[FloatArray, ...]:
        """Absolute error bounds of the four ``tails`` (fq, sq, fp, sp) computed at g (within dg
        of the exact arguments), of those listed in ``which`` (indices, in that order): by
        default rel T~ + abs from ``tail_accuracy``, which covers all four; a direction may bound
        each tail on its own. Both add UNDERFLOW (a tail below the normal range is subnormal or
        flushed to 0, ``cell_errors``)."""
        rel, ab = self.tail_accuracy(g, dg)
        with np.errstate(over="ignore", invalid="ignore"):
            return tuple(np.asarray(rel * np.abs(tails[i]) + ab + UNDERFLOW, dtype=np.float64)
                         for i in which)

    def slope_bounds(self, g: FloatArray,
                     dg: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        """For each cell between consecutive nodes of the increasing g, widened by the nodes'
        errors dg: (a, b) with a <= (log f)'(l) <= b for every l in [g_j - dg_j, g_{j+1} +
        dg_{j+1}] where f, the density of the continuous part of L under Q, is positive (+inf for
        b where the interval holds the lower end of f's support strictly inside, -inf for a at
        the upper end); None when undeclared (the split is then rounded up by the tails' error
        bound, ``cell_errors``)."""
        return None

    def profile_error(self, g: FloatArray, dg: FloatArray, tails: tuple[FloatArray, ...],
                      errors: CellErrors) -> FloatArray:
        """Bound on |(sq~ - e^g sp~) - (sq - e^g sp)| at the nodes g (within dg of the exact ones),
        the profile at a node as read from the computed upper tails: by default their error
        bounds added (``cell_errors``); a direction whose Q- and P-tails share their errors
        (subsampling) states a smaller one."""
        with np.errstate(over="ignore", invalid="ignore"):
            out = errors.dsq + np.exp(g) * errors.dsp * (1.0 + 1e-6)
        return np.asarray(np.where(np.isnan(out), np.inf, out), dtype=np.float64)

    def discretize(self, h: float, pessimistic: bool, tail: float = SOURCE_TAIL) -> GridLaw:
        lo, hi = self.support(tail)
        j0 = math.floor(lo / h) - 1
        j1 = math.ceil(hi / h) + 1
        r = REFINE[pessimistic]  # the optimistic law reads half cells
        hc = h / r
        g = np.asarray(np.arange(r * j0, r * j1 + 1) * hc, dtype=np.float64)
        tails = self.tails(g)
        fq, sq = tails[:2]
        # difference the smaller of the two tails, so tiny cell masses keep their digits
        q = np.where(sq[:-1] <= 0.5, sq[:-1] - sq[1:], fq[1:] - fq[:-1])
        q = np.maximum(q, 0.0)
        cells_q = q.copy()
        dg = product_error(np.arange(r * j0, r * j1 + 1, dtype=np.float64), hc)
        errors = cell_errors(g, tails, self.tail_accuracy(g, dg))
        raw = errors.pn  # e^g p of the P-masses differenced likewise
        pn = np.clip(raw, q * math.exp(-hc), q)
        x = q - pn
        atoms, atom_q = self.point_masses()
        atoms = atoms + self.atom_error() * (1.0 if pessimistic else -1.0)
        nodes = np.zeros(g.size)
        if pessimistic:  # r = 1: the cells are those of the law's grid
            x = self._split_up(g, dg, h, q, x, errors.dx)
            lag = deposit_atoms(hc, r * j0, atoms, atom_q, q, pn, x, nodes, pessimistic)
            # the Q-mass above the last node goes to +inf, where delta reads it without slack
            # (``GridLaw.delta``): rounded up by its error bound unless the loss is bounded (then
            # it is 0). A tail that underflowed to 0 (sigma 17, q 1e-3: Q(L > 0.009) ~ 1e-310)
            # gave delta 0 above the grid, and a finite epsilon at delta 0 where the truth is inf.
            q_above = (float(sq[-1]) if self.bounded
                       else math.nextafter(float(sq[-1]) + float(errors.dsq[-1]), math.inf))
            law = replace(from_cells(h, j0, q, pn, x, inf=self.q_inf, q_above=q_above,
                                     q_below=float(fq[0]), pessimistic=True, node_q=nodes),
                          lag=lag, support_top=hi if self.bounded else math.inf)
            self._forget()
            in_cells = np.abs(q - cells_q) + EPS_MACH * q
            return source_tail_law(law, tails, errors, cells_q, in_cells, nodes)
        with np.errstate(invalid="ignore"):
            moved = np.where(np.isfinite(raw), np.abs(raw - pn), np.inf)
        bounds = self._optimistic_bounds(g, dg, hc, q, pn, x, errors)
        profile = self.profile_error(g, dg, tails, errors)
        q_err = self.tail_errors(g[:1], dg[:1], tuple(t[:1] for t in tails), (1,))[0]
        node_err, total_err = optimistic_node_error(g, tails, errors, q, moved, profile,
                                                    float(q_err[0]))
        # the atoms' contents are exact up to their roundings (relative: a few ulp of their
        # shares of the node profiles); their places are covered by the law's lag
        aq, apn, ax = np.zeros(q.size), np.zeros(q.size), np.zeros(q.size)
        lag = deposit_atoms(hc, r * j0, atoms, atom_q, aq, apn, ax, nodes, pessimistic)
        extra = self.point_mass_error()  # errors of every node profile, at most these
        q, pn, x = q + aq, pn + apn, x + ax
        # the atoms' bounds added, each sum rounded up
        ax_up, adef_up, aq_up = atom_content_bounds(hc, aq, apn, ax, atoms.size)
        bounds = (np.nextafter(bounds[0] + ax_up, np.inf), np.nextafter(bounds[1] + adef_up, np.inf),
                  np.nextafter(bounds[2] + aq_up, np.inf))
        self._forget()
        k = atoms.size + 8
        law = from_cells(h, j0, q, pn, x, inf=self.q_inf, q_above=float(sq[-1]),
                         q_below=float(fq[0]), pessimistic=False,
                         node_q=nodes, bounds=bounds,
                         errors=ContentErrors(k * EPS_MACH, (k + 8) * EPS_MACH,
                                              node_err + extra, total_err + extra))
        return replace(law, lag=lag)

    def _optimistic_bounds(self, g: FloatArray, dg: FloatArray, w: float, q: FloatArray,
                           pn: FloatArray, x: FloatArray,
                           errors: CellErrors) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Upper bounds of each cell's exact q, excess x and upper deficit e^w pn - q, the
        contents from which the optimistic construction reads its lowerings (``_pldgrid``): the
        computed values rounded up by their error bounds (tight where a cell's mass is large
        against the tail) or, when declared, the slope bounds' shares of q's bound (no
        cancellation; ``up_share``, ``deficit_share``), whichever is smaller."""
        dq = errors.d_cell + errors.round_q
        q_up = (q + dq) * (1.0 + 2.0 * EPS_MACH)
        x_up = x + errors.dx
        grow = math.exp(w)
        with np.errstate(over="ignore"):  # an overflow is an infinite (valid) bound
            def_up = (np.maximum(grow * pn - q, 0.0) + grow * (errors.dx + 2.0 * dq)
                      + 4.0 * EPS_MACH * (q + 2.0 * pn)) * (1.0 + 1e-6)
        slopes = self.slope_bounds(g, dg)
        if slopes is not None:
            c_w = -math.expm1(-w)
            # c_w: expm1's error (LIBM_REL) and three products' roundings
            x_up = np.minimum(x_up, q_up * (up_share(slopes[1], w) * c_w)
                              * (1.0 + LIBM_REL + 2.0 * EPS_MACH))
            def_up = np.minimum(def_up, q_up * deficit_share(slopes[0], w) * (1.0 + 4.0 * EPS_MACH))
        with np.errstate(invalid="ignore"):
            x_up, def_up = (np.where(np.isnan(a), np.inf, a) for a in (x_up, def_up))
        return np.asarray(x_up, dtype=np.float64), np.asarray(def_up, dtype=np.float64), q_up

    def _split_up(self, g: FloatArray, dg: FloatArray, h: float, q: FloatArray, x: FloatArray,
                  dx: FloatArray) -> FloatArray:
        """x' with min(x' / (1 - e^{-h}), q) at least connect-the-dots' exact split b of each
        cell (g within dg of the exact nodes; ``_plderror``): the smaller of two upper bounds,
        x as differenced rounded up by its error bound dx (tight where the cell's mass is large
        against the tail) and, when declared, the slope bounds' (tight where the density is
        smooth on the scale of h); both are divided by c_h in ``from_cells`` (8 u covers it)."""
        c_h = -math.expm1(-h)
        up = x + dx + 8.0 * EPS_MACH * q * c_h
        slopes = self.slope_bounds(g, dg)
        if slopes is not None:
            up = np.minimum(up, q * (up_share(slopes[1], h) * (1.0 + 8.0 * EPS_MACH)) * c_h)
        return np.asarray(np.minimum(up, q), dtype=np.float64)

    def _forget(self) -> None:
        """Drop a subclass's values kept for the nodes of the last discretisation (its base's
        too: a wrapped direction's are kept on the base)."""
        self.__dict__.pop("_memo", None)
        self.__dict__.pop("_base_tails", None)
        base = self.__dict__.get("base")
        if isinstance(base, _TailDirection):
            base._forget()

    def point_masses(self) -> tuple[FloatArray, FloatArray]:
        """Atoms of L (losses, Q-masses) not included in ``tails``."""
        return np.zeros(0), np.zeros(0)

    def continuous_mass(self) -> float:
        return min(1.0, max(0.0, 1.0 - self.q_inf - float(self.point_masses()[1].sum())))

    def point_mass_error(self) -> float:
        """Bound on the total error of the atoms' Q-masses beyond a few ulp of each (an atom
        derived from computed tails); an optimistic law adds it to its charge (an atom's mass
        moves delta by at most itself, at every eps)."""
        return 0.0

    def atom_error(self) -> FloatArray:
        """Bounds of the rounding errors of the atoms' computed losses (``point_masses``, in
        order): ``discretize`` moves them up by it for a pessimistic law, down for an optimistic
        one (near an atom delta(eps) ~ q (l - eps), so a position error is a large relative error
        of delta there). Zero where the losses are exact."""
        return np.zeros(self.point_masses()[0].size)


def _ndtr(x: FloatArray) -> FloatArray:
    return np.asarray(special.ndtr(x), dtype=np.float64)


def _cells(g: FloatArray, dg: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The cells [g_j - dg_j, g_{j+1} + dg_{j+1}], rounded outward."""
    with np.errstate(invalid="ignore"):
        lo, hi = g[:-1] - dg[:-1], g[1:] + dg[1:]
        return (np.where(np.isfinite(lo), np.nextafter(lo, -np.inf), lo),
                np.where(np.isfinite(hi), np.nextafter(hi, np.inf), hi))


def _linear_slopes(c0: float, c1: float, lo: FloatArray,
                   hi: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Bounds of c0 + c1 l over [lo, hi] (c1 < 0, both computed to 2 roundings: 8 u pads)."""
    def at(l_: FloatArray, sign: float) -> FloatArray:
        with np.errstate(invalid="ignore", over="ignore"):
            v = c0 + c1 * l_
            pad = np.where(np.isfinite(l_), 8.0 * EPS_MACH * (np.abs(c1 * l_) + abs(c0)), 0.0)
        return np.asarray(v + sign * pad, dtype=np.float64)

    return at(hi, -1.0), at(lo, 1.0)


@dataclass(frozen=True)
class _GaussianDirection(_TailDirection):
    """(N(0,1), N(mu,1)): L = mu x - mu^2/2, symmetric [@koskela2020computing]."""

    mu: float

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        zq = g / self.mu - self.mu / 2
        zp = g / self.mu + self.mu / 2
        return _ndtr(zq), _ndtr(-zq), _ndtr(zp), _ndtr(-zp)

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        m, z = self.mu, _z(tail)
        return m * (-z + m / 2), m * (z + m / 2)

    def _arguments(self, g: FloatArray,
                   dg: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """z = g / mu -+ mu / 2 and their error: dg / mu, the quotient's and the sum's rounding."""
        u = EPS_MACH / 2
        with np.errstate(invalid="ignore"):
            zq = g / self.mu - self.mu / 2
            zp = g / self.mu + self.mu / 2
            dz = (dg / self.mu + 2 * u * (np.abs(g / self.mu) + self.mu)) * 1.01
        return zq, zp, np.where(np.isfinite(g), dz, 0.0)

    def _accuracies(self, g: FloatArray, dg: FloatArray) -> tuple[FloatArray, ...]:
        """(zq, zp, dz, ndtr_accuracy at zq, at zp) for nodes g within dg of exact ones; the last
        call's result is kept for the ``tail_errors`` that reads the nodes ``tail_accuracy`` did,
        which drops it (5 arrays of the grid: fresh memory for the later passes costs more than
        it saves)."""
        memo = self.__dict__.get("_memo")
        if memo is not None and memo[0] is g and memo[1] is dg:
            return tuple(memo[2])
        zq, zp, dz = self._arguments(g, dg)
        out = (zq, zp, dz, ndtr_accuracy(zq, dz), ndtr_accuracy(zp, dz))
        self.__dict__["_memo"] = (g, dg, out)
        return out

    def tail_accuracy(self, g: FloatArray,
                      dg: FloatArray) -> tuple[FloatArray, FloatArray]:
        _, _, _, acc_q, acc_p = self._accuracies(g, dg)
        rel = np.maximum(acc_q, acc_p)
        return rel, np.zeros_like(rel)

    def tail_errors(self, g: FloatArray, dg: FloatArray, tails: tuple[FloatArray, ...],
                    which: tuple[int, ...] = (0, 1, 2, 3)) -> tuple[FloatArray, ...]:
        # each tail Phi(+-z) at its own argument: a tail near 1 hardly moves (``ndtr_accuracy``;
        # the symmetric bound at +-z is that at z)
        zq, zp, dz, acc_q, acc_p = self._accuracies(g, dg)
        self.__dict__.pop("_memo", None)
        signed = (1.0, -1.0, 1.0, -1.0)
        return tuple(np.asarray(ndtr_accuracy(signed[i] * (zq if i < 2 else zp), dz,
                                              own_value=True, symmetric=acc_q if i < 2 else acc_p)
                                * tails[i] + UNDERFLOW, dtype=np.float64)
                     for i in which)

    def profile_error(self, g: FloatArray, dg: FloatArray, tails: tuple[FloatArray, ...],
                      errors: CellErrors) -> FloatArray:
        # the two upper tails' own errors (``tail_errors``): near the bottom both are near 1.
        # e^g dsp in log space (``scaled_up``), and at most e^g (sp~ + sp): for zp > 1, Mills'
        # ratio sp = Phi(-zp) <= phi(zp) / zp bounds the exact tail where ndtr flushed it (its
        # error bound UNDERFLOW, times e^g > e^709, would be large)
        dsq, dsp = self.tail_errors(g, dg, tails, (1, 3))
        _, zp, dz = self._arguments(g, dg)
        z = zp - dz
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            mills = np.where(z > 1.0, np.exp(g + dg - 0.5 * z * z - np.log(z)
                                             - 0.5 * math.log(2.0 * math.pi)), np.inf)
            esp = np.minimum(scaled_up(g, dsp), scaled_up(g, tails[3]) + mills)
            own = dsq + esp * (1.0 + 1e-6)
        default = super().profile_error(g, dg, tails, errors)
        return np.asarray(np.where(np.isnan(own), default, np.minimum(own, default)),
                          dtype=np.float64)

    def slope_bounds(self, g: FloatArray,
                     dg: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        # L ~ N(mu^2/2, mu^2) under Q: (log f)'(l) = 1/2 - l / mu^2, decreasing; 4 roundings
        return _linear_slopes(0.5, -1.0 / (self.mu * self.mu), *_cells(g, dg))


@dataclass(frozen=True)
class _LaplaceDirection(_TailDirection):
    """(Lap(0,1), Lap(eps,1)): atoms at +-eps, L = 2x - eps in between (symmetric)."""

    eps: float
    bounded = True

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        # the continuous part only (x in (0, eps)); its Q- and P-masses are both (1 - e^-eps)/2
        e = self.eps
        total = -0.5 * math.expm1(-e)
        gc = np.clip(g, -e, e)
        sq = np.where(g < -e, total, np.where(g < e, 0.5 * -np.expm1(-(e - gc) / 2), 0.0))
        sp = np.where(g < -e, total, np.where(g < e, 0.5 * math.exp(-e) * np.expm1((e - gc) / 2),
                                              0.0))
        return total - sq, sq, total - sp, sp

    def point_masses(self) -> tuple[FloatArray, FloatArray]:
        e = self.eps
        return np.array([-e, e]), np.array([0.5 * math.exp(-e), 0.5])

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        return -self.eps, self.eps

    def tail_accuracy(self, g: FloatArray,
                      dg: FloatArray) -> tuple[FloatArray, FloatArray]:
        # both densities of the continuous part are at most 1/4 in the loss: an argument error dg
        # moves a tail by at most a quarter of it, and only where the exact or the computed
        # argument lies in (-eps, eps) (outside, the tails are the constants 0 and ``total``);
        # eps - g rounds relatively (exactly near eps, Sterbenz), and so do the closed forms: sp =
        # e^-eps expm1(.) / 2 errs by two elementary functions' LIBM_REL, its argument's u (expm1
        # is at most as sensitive as its argument) and two products'; sq by less; total - sq
        # cancels within u total (g < 0)
        u = EPS_MACH / 2
        band = (g > -self.eps - dg) & (g < self.eps + dg)
        ab = 0.3 * np.where(band, dg, 0.0) + np.where(g < 0.0, 2 * u * -math.expm1(-self.eps), 0.0)
        return np.full(g.shape, 2.0 * LIBM_REL + 4.0 * u), np.asarray(ab, dtype=np.float64)

    def slope_bounds(self, g: FloatArray,
                     dg: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        # under Lap(eps, 1) the continuous part x in (0, eps) has density e^{x - eps} / 2 and
        # L = 2x - eps: f(l) is proportional to e^{l/2} on (-eps, eps)
        e = self.eps
        lo, hi = _cells(g, dg)
        return (np.where((lo < e) & (hi > e), -np.inf, 0.5),
                np.where((lo < -e) & (hi > -e), np.inf, 0.5))

    def atoms(self) -> tuple[float, ...]:
        return (-self.eps, self.eps)


def _mixture_log(r: float, l_: FloatArray) -> FloatArray:
    """log(1 - r + r e^l), the loss of the subsampled pair (P, (1-r)P + rQ) at a base loss l."""
    out = np.logaddexp(math.log1p(-r), math.log(r) + l_)
    return np.asarray(np.where(l_ == 0.0, 0.0, out), dtype=np.float64)  # exact at l = 0


def mixture_log_error(r: float, mixed: FloatArray, l_: FloatArray) -> FloatArray:
    """Bound on |``_mixture_log``(r, l) - phi(l)| for doubles l (``mixed`` its values; 0 at l = 0,
    where it is exact). It cancels near l = 0, so it errs by ulps of its operands, not of itself:
    logaddexp(x, y) = max + log1p(e^{-|x - y|}) has weights in [0, 1] summing to 1 on x = log(1 - r)
    and y = log r + l, which err by LIBM_REL |x| and LIBM_REL |log r| + u (|log r| + |l|); the
    difference, exp and log1p (a value at most log 2, slope at most 1/2 in exp's relative error)
    add at most 1.2 LIBM_REL + u (|x| + |y|) / 2, the final sum u |phi|. With s = |log(1 - r)| +
    |log r| >= 2 log 2 > 1.2, all of it is below (2 LIBM_REL + 2u) (|phi| + s + |l|)."""
    scale = abs(math.log1p(-r)) + abs(math.log(r))
    err = (2.0 * LIBM_REL + EPS_MACH) * (np.abs(mixed) + scale + np.abs(l_))
    return np.asarray(np.where(l_ == 0.0, 0.0, err), dtype=np.float64)


@dataclass(frozen=True)
class SubsampledTailDirection(_TailDirection):
    """A continuous pair (P, Q) subsampled with rate r, remove: (P, (1-r)P + rQ); add: swapped
    [@balle2018subsampling; @zhu2022optimal, Sec. 5]. The loss is the increasing
    function phi(l) = log(1 - r + r e^l) of the base loss l, so its tails are the base's tails at
    phi^{-1}(g) = log((e^g - 1 + r) / r), mixed; atoms are mapped by phi."""

    base: _TailDirection
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
        u = EPS_MACH / 2
        r = self.rate
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            em = np.expm1(v)
            y = em + r
            if known is None:
                near = np.log(y / r)  # accurate near log(1 - r); overflows above 709
                far = v + np.log1p(-(1.0 - r) * np.exp(-v)) - math.log(r)
                l_ = np.where(v > math.log1p(-r), np.where(v > 1.0, far, near), -np.inf)
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
        u = EPS_MACH / 2
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
        r, u = self.rate, EPS_MACH / 2
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
        l_lo, l_hi = _cells(l_, dl)
        c = (1.0 - r) / r
        with np.errstate(invalid="ignore", over="ignore"):
            # c (2 roundings), exp (LIBM_REL), the product and the sum
            d_max = (1.0 + c * np.exp(-l_lo)) * (1.0 + LIBM_REL + 3.0 * EPS_MACH)
            d_min = (1.0 + c * np.exp(-l_hi)) * (1.0 - LIBM_REL - 3.0 * EPS_MACH)

            def scaled(a: FloatArray, top: bool) -> FloatArray:
                """max (top) or min over the interval of a D, for a constant a."""
                return np.asarray(np.where((a >= 0) == top, a * d_max, a * d_min))

            if remove:
                up, down = 2.0 + scaled(s_hi - 2.0, True), 2.0 + scaled(s_lo - 2.0, False)
            else:
                up = (scaled(2.0 - s_lo, True) - 1.0)[::-1]
                down = (scaled(2.0 - s_hi, False) - 1.0)[::-1]
            pad_up = 4.0 * EPS_MACH * (np.abs(up) + 2.0)
            pad_down = 4.0 * EPS_MACH * (np.abs(down) + 2.0)
            up = np.where(np.isnan(up), np.inf, up + pad_up)
            down = np.where(np.isnan(down), -np.inf, down - pad_down)
        return np.asarray(down, dtype=np.float64), np.asarray(up, dtype=np.float64)

    def tail_accuracy(self, g: FloatArray,
                      dg: FloatArray) -> tuple[FloatArray, FloatArray]:
        # the base's tails at l = phi^{-1}(+-g) (its error dl below), mixed with non-negative
        # weights (3 u more)
        u = EPS_MACH / 2
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
            return _mixture_log(self.rate, losses), (1 - self.rate) * p + self.rate * q
        return -_mixture_log(self.rate, losses), p

    def atoms(self) -> tuple[float, ...]:
        return tuple(float(a) for a in self.point_masses()[0])

    def atom_error(self) -> FloatArray:
        # ``mixture_log_error``; phi's slope in l is at most 1, so the base's own position errors
        # carry over
        losses = self.base.point_masses()[0]
        err = mixture_log_error(self.rate, _mixture_log(self.rate, losses), losses)
        return np.asarray(err + self.base.atom_error(), dtype=np.float64)

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        """(phi(base bottom), phi(base top)) for remove (the bottom log(1 - r), phi(-inf), unless
        the base is bounded), mirrored for add, rounded outward (a bounded direction's top is
        where its delta stops, ``GridLaw.support_top``)."""
        ends = np.asarray(self.base.support(tail))
        phi = _mixture_log(self.rate, ends)
        err = mixture_log_error(self.rate, phi, ends)
        top = math.nextafter(float(phi[1] + err[1]), math.inf)
        if self.base.bounded:
            bottom = math.nextafter(float(phi[0] - err[0]), -math.inf)
        else:
            low = math.log1p(-self.rate)
            bottom = math.nextafter(low - LIBM_REL * abs(low), -math.inf)
        return (bottom, top) if self.direction == "remove" else (-top, -bottom)


@dataclass(frozen=True)
class SymmetricTailDirection(_TailDirection):
    """The symmetric pair with the profile of a continuous pair ``base`` at eps >= 0 (see
    ``symmetric_direction``): base's law on losses > 0, its P-law there mirrored below 0 and the
    rest of the mass in an atom at 0. For g < 0, with c the continuous parts:
    Q(L > g) = Q_c(L > 0) + P_c(0 < L < -g) and P(L > g) = P_c(L > 0) + Q_c(0 < L < -g)."""

    base: _TailDirection

    @property
    def q_inf(self) -> float:  # type: ignore[override]
        return self.base.q_inf

    @property
    def bounded(self) -> bool:  # type: ignore[override]
        return self.base.bounded  # the support is the base's top, mirrored

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        fq, sq, fp, sp = self.base.tails(np.abs(g))
        _, sq0, _, sp0 = (float(t[0]) for t in self.base.tails(np.zeros(1)))
        neg = g < 0
        return (np.where(neg, sp, fq), np.where(neg, sq0 + sp0 - sp, sq), np.where(neg, sq, fp),
                np.where(neg, sp0 + sq0 - sq, sp))

    def tail_accuracy(self, g: FloatArray,
                      dg: FloatArray) -> tuple[FloatArray, FloatArray]:
        # g >= 0: the base's; g < 0: two are the base's at |g| (swapped), the other two sums of
        # the base's tails at 0 and |g| (errors added, 4 roundings)
        rel, ab = self.base.tail_accuracy(np.abs(g), dg)
        rel0, ab0 = (float(t[0]) for t in self.base.tail_accuracy(np.zeros(1), np.zeros(1)))
        _, sq, _, sp = self.base.tails(np.abs(g))
        _, sq0, _, sp0 = (float(t[0]) for t in self.base.tails(np.zeros(1)))
        with np.errstate(invalid="ignore", over="ignore"):
            summed = ab + 2.0 * ab0 + (rel0 + 2.0 * EPS_MACH) * (sq0 + sp0) + rel * (sq + sp)
        return rel + EPS_MACH, np.asarray(np.where(g < 0, summed, ab), dtype=np.float64)

    def slope_bounds(self, g: FloatArray,
                     dg: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        # losses >= 0: the base's density; losses l < 0: f(l) = f_P(-l) = f_Q(-l) e^{l} of the
        # base, slope 1 - s(-l) (its cells reversed); a cell across 0 takes both parts' extremes
        pos = self.base.slope_bounds(np.maximum(g, 0.0), dg)
        neg_r = self.base.slope_bounds(np.maximum(-g, 0.0)[::-1], dg[::-1])
        if pos is None or neg_r is None:
            return None
        neg = (neg_r[0][::-1], neg_r[1][::-1])
        lo, hi = _cells(g, dg)
        with np.errstate(invalid="ignore"):
            n_lo = 1.0 - neg[1] - 2.0 * EPS_MACH * (np.abs(neg[1]) + 1.0)
            n_hi = 1.0 - neg[0] + 2.0 * EPS_MACH * (np.abs(neg[0]) + 1.0)
        has_pos, has_neg = hi > 0, lo < 0
        down = np.minimum(np.where(has_pos, pos[0], np.inf), np.where(has_neg, n_lo, np.inf))
        up = np.maximum(np.where(has_pos, pos[1], -np.inf), np.where(has_neg, n_hi, -np.inf))
        return (np.asarray(np.where(np.isnan(down), -np.inf, down), dtype=np.float64),
                np.asarray(np.where(np.isnan(up), np.inf, up), dtype=np.float64))

    def point_masses(self) -> tuple[FloatArray, FloatArray]:
        losses, q = self.base.point_masses()
        pos = losses > 0
        lp, qp = losses[pos], q[pos]
        pp = qp * np.exp(-lp)
        _, sq0, _, sp0 = (float(t[0]) for t in self.base.tails(np.zeros(1)))
        used = sq0 + sp0 + math.fsum(qp.tolist()) + math.fsum(pp.tolist()) + self.q_inf
        # the rest at 0, rounded up (extra Q-mass only raises delta)
        zero = max(0.0, 1.0 - used) + 8.0 * EPS_MACH * (2.0 + lp.size)
        return np.concatenate([lp, -lp, [0.0]]), np.concatenate([qp, pp, [zero]])

    def atom_error(self) -> FloatArray:
        # the base's positive atoms and their mirror images (negation is exact); 0 is exact
        losses = self.base.point_masses()[0]
        err = self.base.atom_error()[losses > 0]
        return np.concatenate([err, err, [0.0]])

    def point_mass_error(self) -> float:
        # the atom at 0: rounded up by 8 eps (2 + atoms), and 1 - used errs by the base's tails'
        # errors at 0 and the sums' rounding
        n = int(np.count_nonzero(self.base.point_masses()[0] > 0))
        _, sq0, _, sp0 = (float(t[0]) for t in self.base.tails(np.zeros(1)))
        rel0, ab0 = (float(t[0]) for t in self.base.tail_accuracy(np.zeros(1), np.zeros(1)))
        return (8.0 * EPS_MACH * (2.0 + n) + rel0 * (sq0 + sp0) + 2.0 * ab0
                + 8.0 * EPS_MACH) * 1.01

    def atoms(self) -> tuple[float, ...]:
        return tuple(float(a) for a in self.point_masses()[0])

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        hi = max(self.base.support(tail)[1], 0.0)
        return -hi, hi


@dataclass(frozen=True, eq=False)
class _FiniteDirection(LossDirection):
    """A pair with finitely many loss values; pessimistic and optimistic atom sets may differ
    (e.g. the lower envelope and the chords of a trade-off curve)."""

    losses: FloatArray
    q: FloatArray
    inf: float
    opt_losses: FloatArray
    opt_q: FloatArray
    opt_inf: float
    extra_pess_inf: float = 0.0
    #: P-mass at L = -inf when known exactly (e.g. delta for f_{eps,delta}); None: 1 - sum of the
    #: P-masses q e^{-l}, known only up to rounding
    p_ninf: float | None = None
    #: relative error bound of both sets' finite Q-masses against the exact ones (a declared
    #: bound, e.g. ``FiniteLossTradeoff.mass_rtol``; 8 u for masses given without one)
    mass_rtol: float = MASS_RTOL
    #: the losses' declared error (``finite_direction``): the pessimistic losses were moved up
    #: and the optimistic ones down by it, so each exact loss lies within 2 loss_atol below its
    #: pessimistic atom (0: the losses carry only their own outward rounding)
    loss_atol: float = 0.0

    def discretize(self, h: float, pessimistic: bool, tail: float = SOURCE_TAIL) -> GridLaw:
        # the grid is shifted so that the largest loss is a node: delta is then exact at and
        # above it (delta = 0 where the truth is), and k-fold compositions keep their top on a node
        if pessimistic:
            # the masses are accurate relatively (``mass_rtol``) and are summed, split and
            # deposited with non-negative weights: each cell's x is a sum of at most n terms
            # q (1 - e^{-t}) (numpy's expm1, LIBM_REL; the product and the sums, (n + 1) u/2),
            # the split adds expm1's ulp and the quotient's u/2, the masses 3 u/2: an error
            # relative to the tail sums below LIBM_REL + (n + 4) u + mass_rtol per atom count n
            # (u = EPS_MACH) [``_pldgrid`` module docstring, point 3]
            law = from_atoms(h, self.losses, self.q, inf=self.inf, q_above=self.extra_pess_inf,
                             pessimistic=True, slack=0.0, shift=_top_shift(self.losses, self.q, h))
            return replace(law, tail=law.tail + (LIBM_REL + (self.q.size + 4) * EPS_MACH
                                                 + self.mass_rtol))
        # optimistic: the masses within mass_rtol of the exact ones, an error relative to the
        # profile
        return from_atoms(h, self.opt_losses, self.opt_q, inf=self.opt_inf, q_above=0.0,
                          pessimistic=False, rel=self.mass_rtol,
                          shift=_top_shift(self.opt_losses, self.opt_q, h))

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        both = np.concatenate([self.losses[self.q > 0], self.opt_losses[self.opt_q > 0], [0.0]])
        return float(both.min()), float(both.max())

    def continuous_mass(self) -> float:
        return 0.0

    def atoms(self) -> tuple[float, ...]:
        both = np.concatenate([self.losses[self.q > 0], self.opt_losses[self.opt_q > 0]])
        vals = np.unique(both)
        return tuple(float(v) for v in vals) if vals.size <= 64 else (math.nan,)

    def proper_pairs(self) -> tuple[tuple[FloatArray, FloatArray, float], ...]:
        """(losses, Q-masses, Q-mass at +inf) for the pessimistic and optimistic atom sets."""
        return ((self.losses, self.q, self.inf + self.extra_pess_inf),
                (self.opt_losses, self.opt_q, self.opt_inf))


def _top_shift(losses: FloatArray, q: FloatArray, h: float) -> float:
    """Shift in (-h/2, h/2] of the grid {shift + j h} that puts the largest loss on a node."""
    if not (q > 0).any():
        return 0.0
    top = float(losses[q > 0].max())
    return top - h * round(top / h)


def finite_direction(losses: ArrayLike, q: ArrayLike, inf: float = 0.0,
                     p_ninf: float | None = None, loss_atol: float = 0.0,
                     mass_rtol: float = MASS_RTOL, opt_inf: float | None = None) -> _FiniteDirection:
    """A finite pair; ``p_ninf`` is its P-mass at L = -inf when known exactly, ``loss_atol`` the
    absolute error of the losses given against the exact ones (``FiniteLossTradeoff``): the
    pessimistic atoms are moved up by it and the optimistic ones down (near an atom delta(eps) ~
    q (l - eps), so an unmoved position error is a large relative error of delta there);
    ``mass_rtol`` the relative error of the masses; ``opt_inf`` the Q-mass at +inf of the
    optimistic set when ``inf`` is only an upper bound of it (e.g. a window's rest)."""
    l_ = as_float_array("losses", losses).ravel()
    qm = as_float_array("q_masses", q).ravel()
    if l_.shape != qm.shape or (qm < 0).any() or not np.isfinite(l_).all():
        raise ValueError("losses must be finite and q_masses non-negative, of equal length")
    up, down = (l_ + loss_atol, l_ - loss_atol) if loss_atol > 0.0 else (l_, l_)
    return _FiniteDirection(up, qm, float(inf), down, qm, float(inf if opt_inf is None else opt_inf),
                            p_ninf=p_ninf, mass_rtol=mass_rtol, loss_atol=float(loss_atol))


def curve_direction(f: FiniteLossTradeoff, opt_inf: float | None = None) -> _FiniteDirection:
    """The finite pair of a finite curve with its declared errors: the losses' ``loss_atol`` and
    the masses' ``mass_rtol``, or MASS_RTOL where the curve declares less (the discrete Laplace
    and k-ary randomized response pairs once dropped theirs: 3 u shift / b and 10 EPS_MACH)."""
    return finite_direction(f.losses, f.q_masses, f.q_inf, f.p_ninf, f.loss_atol,
                            mass_rtol=max(f.mass_rtol, MASS_RTOL), opt_inf=opt_inf)


def _check_int_sensitivity(sensitivity: int) -> int:
    return check_count("sensitivity", sensitivity, high=10**6)


def _log_ratio(num: FloatArray, den: FloatArray, pessimistic: bool) -> FloatArray:
    """log(num / den) moved outward by its rounding: up for a pessimistic atom set, down for an
    optimistic one. The quotient of two values each within u/2 of exact ones errs by 3u/2
    (u = EPS_MACH; log moves by as much) and the log adds LIBM_ULP ulp, so the computed loss is
    within 2 u + LIBM_REL |l| of the exact; near an atom delta(eps) ~ q (l - eps), so an unmoved
    position error is a large relative error of delta there."""
    losses = np.log(num / den)
    err = 2.0 * EPS_MACH + LIBM_REL * np.abs(losses)
    return np.asarray(losses + err if pessimistic else losses - err, dtype=np.float64)


def _pmf_direction(p: FloatArray, q: FloatArray) -> _FiniteDirection:
    """The pair of two pmfs: Q-masses q at losses log(q / p) (``_log_ratio``)."""
    both = (p > 0) & (q > 0)
    inf = float(q[(p == 0) & (q > 0)].sum())
    return _FiniteDirection(_log_ratio(q[both], p[both], True), q[both], inf,
                            _log_ratio(q[both], p[both], False), q[both], inf,
                            p_ninf=float(p[(q == 0) & (p > 0)].sum()))


def _density_direction(pm: FloatArray, qm: FloatArray, pess_loss: FloatArray) -> _FiniteDirection:
    pm = np.maximum(pm, 0.0)
    qm = np.maximum(qm, 0.0)
    both = (pm > 0) & (qm > 0)
    only_q = (pm <= 0) & (qm > 0)
    fin = both & np.isfinite(pess_loss)
    outside = max(0.0, 1.0 - float(qm.sum()))
    pess_inf = float(qm[only_q].sum() + qm[both & ~np.isfinite(pess_loss)].sum()) + outside
    with np.errstate(divide="ignore"):
        merged = np.log(qm[both] / pm[both])
    return _FiniteDirection(pess_loss[fin], qm[fin], pess_inf, merged, qm[both],
                            float(qm[only_q].sum()))


def _knot_atoms(alphas: FloatArray, betas: FloatArray,
                pessimistic: bool) -> tuple[FloatArray, FloatArray, float]:
    """The pair of a convex piecewise-linear curve: a segment of slope -s carries Q-mass
    (its drop in beta) at loss log s, moved outward by its rounding (``_log_ratio``: the drops are
    differences of the knots, each within u/2); 1 - f(0) is the Q-mass at +inf
    [@dong2022gaussian, Prop. 2.2]."""
    da = np.diff(alphas)
    db = -np.diff(betas)
    ok = (db > 0) & (da > 0)
    return _log_ratio(db[ok], da[ok], pessimistic), db[ok], max(0.0, 1.0 - float(betas[0]))


def envelope_direction(f: TradeoffFunction) -> _FiniteDirection:
    """Finite pair of any curve: pessimistic atoms from the sound lower envelope of f, optimistic
    ones from the chords of f (which lie above it, f being convex)."""
    env = f.lower_envelope()
    lo, qm, inf = _knot_atoms(env.alphas, env.betas, True)
    a = default_alpha_grid()
    b = np.minimum(np.asarray(f(a), dtype=np.float64) + 1e-15, 1.0 - a)
    hx, hy = lower_convex_hull(a, b)
    olo, oqm, oinf = _knot_atoms(hx, hy, False)
    return _FiniteDirection(lo, qm, inf, olo, oqm, oinf)


def _mirror_atoms(losses: FloatArray, q: FloatArray, inf: float,
                  pessimistic: bool) -> tuple[FloatArray, FloatArray, float] | None:
    """Atoms of the symmetric pair with the same profile at eps >= 0 (``symmetric_direction``):
    the Q-masses q at losses l > 0, their P-masses q e^{-l} at -l, and the rest of the unit mass at
    0. Float error (a few ulp per mass) is charged outward: masses raised for a pessimistic set,
    lowered for an optimistic one (extra Q-mass can only raise delta, of a composition too).

    The rest is negative when the pair is far from symmetric (Q(L > 0) + P(L > 0) > 1): then an
    optimistic set is scaled down (dropping Q-mass lowers delta) and a pessimistic one gives None.
    """
    pos = losses > 0.0
    lp, qp = losses[pos], q[pos]
    pp = qp * np.exp(-lp)
    used = math.fsum(qp.tolist()) + math.fsum(pp.tolist()) + inf
    err = 8.0 * EPS_MACH * (1.0 + pp.size)
    if pessimistic:
        if used > 1.0 + 1e-12:
            return None
        up = 1.0 + 8.0 * EPS_MACH
        zero = max(0.0, 1.0 - used) + err
        return np.concatenate([lp, -lp, [0.0]]), np.concatenate([qp * up, pp * up, [zero]]), inf
    scale = min(1.0, (1.0 - inf) / (used - inf)) * (1.0 - 8.0 * EPS_MACH) if used > inf else 1.0
    zero = max(0.0, 1.0 - used - err)
    return (np.concatenate([lp, -lp, [0.0]]), np.concatenate([qp * scale, pp * scale, [zero]]),
            inf)


def _merge_near_zero(losses: FloatArray, q: FloatArray, inf: float,
                     below: float) -> tuple[FloatArray, FloatArray, float]:
    """A pessimistic atom set (and its Q-mass at +inf) whose atoms at 0 < l <= ``below`` are
    charged to the smallest atom L above ``below``, or to +inf when there is none (L = inf): at
    every eps >= 0 its profile is at least the given set's.

    An atom (l, q) adds q (1 - e^{eps - l})_+ to delta(eps); for l < L the ratio
    (1 - e^{eps - l}) / (1 - e^{eps - L}) decreases on [0, l], so the Q-mass
    q (1 - e^{-l}) / (1 - e^{-L}) at L adds at least as much at every eps >= 0 (with 0.1% margin
    for the two expm1, LIBM_ULP ulp each, and the quotient's rounding; the sum at L rounded up). Such
    atoms are the moved copies of atoms at loss 0 up to rounding (e.g. y = shift/2 of an
    even-shift discrete Gaussian): one at l uses q (1 + e^{-l}) ~ 2q of a symmetric pair's unit
    mass (``_mirror_atoms``) where the true atom at 0 uses q, while it adds at most
    q (1 - e^{-l}) ~ q l to delta; charged at L it uses q tanh(l/2) / tanh(L/2)."""
    near = (losses > 0.0) & (losses <= below)
    if not near.any():
        return losses, q, inf
    above = losses > below
    charge = 1.001 * -math.fsum((q[near] * np.expm1(-losses[near])).tolist())
    keep = ~near
    if not above.any():
        return losses[keep], q[keep], math.nextafter(inf + charge, math.inf)
    target = int(np.flatnonzero(above)[np.argmin(losses[above])])
    out = q.copy()
    # the sum rounded up
    out[target] = math.nextafter(out[target] + charge / -math.expm1(-float(losses[target])),
                                 math.inf)
    return losses[keep], out[keep], inf


def symmetric_direction(d: _FiniteDirection) -> _FiniteDirection:
    """The symmetric pair S whose privacy profile is d's at every eps >= 0.

    Only Q-mass at losses > 0 enters delta(eps) for eps >= 0, and for eps < 0 every pair obeys
    delta_{P,Q}(eps) = 1 - e^eps + e^eps delta_{Q,P}(-eps); so a mechanism whose every ordered pair
    of neighbours has a profile below d's at eps >= 0 is dominated by S in both orders [@zhu2022optimal,
    Sec. 5, symmetric dominating pairs]. S keeps d's law on losses > 0, mirrors its
    P-law there to negative losses, and puts the remaining mass at loss 0. When d is too far from
    symmetric for that (its curve crosses the diagonal before slope -1), d's curve f is replaced by
    min(f, f^{-1})**, below both [@dong2022gaussian, Sec. 4.1].
    """
    (pl, pq, pi), (ol, oq, oi) = d.proper_pairs()
    # masses with a declared error beyond the MASS_RTOL the construction assumes of its input are
    # raised (pessimistic) and lowered (optimistic) by it: those of a pair whose Q-law above 0
    # dominates d's (is dominated by d's), so its symmetric pair dominates (is dominated) too
    r = d.mass_rtol if d.mass_rtol > MASS_RTOL else 0.0
    # atoms whose exact loss may be <= 0 (within 2 loss_atol below their moved copy) are charged
    # to the next atom up: counted at their moved copy they would take twice their mass from the
    # symmetric pair's unit mass (``_merge_near_zero``)
    pl, pq, pi = _merge_near_zero(pl, pq, pi, 2.0 * d.loss_atol)
    pess = _mirror_atoms(pl, pq * (1.0 + r), pi, True)
    if pess is None:
        p_rest = max(0.0, 1.0 - math.fsum((pq * np.exp(-pl)).tolist()))
        f = FiniteLossTradeoff.from_losses(pl, pq, q_inf=pi, p_ninf=p_rest,
                                           mass_rtol=r).symmetrize()
        # the symmetric curve's segment of slope -1 (loss 0) is held a few ulp above 0 (its knots'
        # own rounding, then ``_log_ratio``'s outward move; 1.1e-15 for a single atom at 0.25):
        # atoms below 1e-12 are charged upward (``_merge_near_zero``, sound at any threshold;
        # this one bounds its cost by 1e-12 of their mass)
        lo, qm, inf = _merge_near_zero(*_knot_atoms(f.alphas, f.betas, True), 1e-12)
        pess = _mirror_atoms(lo, qm, inf, True)
        if pess is None:
            raise ValueError("could not build a symmetric dominating pair for this mechanism")
    opt = _mirror_atoms(ol, oq * (1.0 - r), oi, False)
    assert opt is not None
    # symmetric: the P-mass at -inf is the Q-mass at +inf
    return _FiniteDirection(*pess, *opt, p_ninf=pess[2] if pess[2] == opt[2] else None)


# ============================ a mechanism's pair(s) ==============================================


class Pair(ABC):
    """A mechanism's dominating pair(s): ``remove`` = (P, Q) bounds one order of neighbouring
    datasets and ``add`` the other (None when one pair bounds both: the pair is symmetric).

    Concrete pairs are frozen dataclasses: equal values are the same mechanism, which the PLD
    groups and composes by repeated squaring. A subclass that sets ``kind`` is serialisable by its
    fields (numbers and nested pairs) and registered under that name (``pair_from_spec``).
    """

    kind: ClassVar[str | None] = None
    registry: ClassVar[dict[str, type[Pair]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if kind is not None:
            Pair.registry[kind] = cls

    @abstractmethod
    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        """Build (remove, add); add is None for a symmetric pair."""

    @cached_property
    def _built(self) -> tuple[LossDirection, LossDirection | None]:
        return self.directions()

    @property
    def remove(self) -> LossDirection:
        return self._built[0]

    @property
    def add(self) -> LossDirection | None:
        return self._built[1]

    @property
    def symmetric(self) -> bool:
        return self.add is None

    def direction(self, which: Direction) -> LossDirection:
        add = self.add
        return add if which == "add" and add is not None else self.remove


def pair_to_spec(pair: Pair) -> list[Any]:
    """A JSON-ready description ``[kind, [fields...]]`` of a registered pair."""
    if pair.kind is None:
        raise TypeError(f"cannot serialise {pair!r}: it is built from arrays or callables")
    values = [getattr(pair, f.name) for f in fields(pair)]  # type: ignore[arg-type]
    return [pair.kind, [pair_to_spec(v) if isinstance(v, Pair) else v for v in values]]


def pair_from_spec(spec: list[Any]) -> Pair:
    """Inverse of ``pair_to_spec``, by the registered ``kind``."""
    if not isinstance(spec, list) or len(spec) != 2 or not isinstance(spec[1], list):
        raise ValueError(f"a pair spec is [kind, [fields...]], got {spec!r}")
    cls = Pair.registry.get(spec[0])
    if cls is None:
        raise ValueError(f"unknown pair kind {spec[0]!r}; known: {sorted(Pair.registry)}")
    # a nested pair is [kind, [fields]]; any other list is a field's own value (e.g. a tuple)
    return cls(*(pair_from_spec(v) if _is_spec(v) else v for v in spec[1]))


def _is_spec(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and isinstance(v[0], str)


@dataclass(frozen=True)
class GaussianPair(Pair):
    """(N(0,1), N(mu,1)) with mu = sensitivity / sigma; symmetric [@koskela2020computing]."""

    mu: float
    kind: ClassVar[str | None] = "gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_real("mu", self.mu, low=0.0, low_open=True, high=1e4))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return _GaussianDirection(self.mu), None


@dataclass(frozen=True)
class LaplacePair(Pair):
    """(Lap(0,1), Lap(eps,1)) with eps = sensitivity / scale; symmetric."""

    eps: float
    kind: ClassVar[str | None] = "laplace"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", check_real("eps", self.eps, low=0.0, low_open=True,
                                                   high=700.0))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return _LaplaceDirection(self.eps), None


@dataclass(frozen=True)
class RandomizedResponsePair(Pair):
    """k-ary randomized response keeping the truth w.p. e^eps / (e^eps + k - 1)."""

    eps: float
    k: int = 2
    kind: ClassVar[str | None] = "randomized_response"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", check_real("eps", self.eps, low=0.0, high=math.inf,
                                                   high_open=True))
        object.__setattr__(self, "k", check_count("k", self.k, low=2, high=10**9))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return curve_direction(FiniteLossTradeoff.randomized_response(self.eps, self.k)), None


@dataclass(frozen=True)
class ApproxDPPair(Pair):
    """The pair of f_{eps,delta}: randomized response with an atom of mass delta at infinite loss
    [@kairouz2015composition] (pure DP when delta = 0)."""

    eps: float
    delta: float = 0.0
    kind: ClassVar[str | None] = "approx_dp"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", check_real("eps", self.eps, low=0.0, high=math.inf,
                                                   high_open=True))
        object.__setattr__(self, "delta", check_real("delta", self.delta, low=0.0, high=1.0,
                                                     high_open=True))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return curve_direction(FiniteLossTradeoff.approx_dp(self.eps, self.delta)), None


@dataclass(frozen=True)
class DiscreteLaplacePair(Pair):
    """Discrete Laplace, P(X = x) proportional to e^{-|x|/scale} on the integers, with integer
    sensitivity [@canonne2020discrete, notation t = scale]; symmetric."""

    scale: float
    sensitivity: int = 1
    kind: ClassVar[str | None] = "discrete_laplace"

    def __post_init__(self) -> None:
        object.__setattr__(self, "scale", check_real("scale", self.scale, low=0.0, low_open=True,
                                                     high=math.inf, high_open=True))
        object.__setattr__(self, "sensitivity", _check_int_sensitivity(self.sensitivity))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return curve_direction(FiniteLossTradeoff.discrete_laplace(self.scale,
                                                                   self.sensitivity)), None


@dataclass(frozen=True)
class DiscreteGaussianPair(Pair):
    """Discrete Gaussian, P(X = x) proportional to e^{-x^2/(2 sigma^2)} on the integers
    [@canonne2020discrete]; L = (2 x Delta - Delta^2)/(2 sigma^2) under Q = the shift; symmetric."""

    sigma: float
    sensitivity: int = 1
    kind: ClassVar[str | None] = "discrete_gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_real("sigma", self.sigma, low=0.0, low_open=True,
                                                     high=1e6))
        object.__setattr__(self, "sensitivity", _check_int_sensitivity(self.sensitivity))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        # a 13-sigma window: the mass beyond it (< e^-84) and masses not held are charged at
        # L = +inf by the pessimistic set and dropped by the optimistic one; the masses err by the
        # curve's declared mass_rtol (``gauss_masses``)
        f = FiniteLossTradeoff.discrete_gaussian(Fraction(self.sigma) ** 2, self.sensitivity,
                                                 tail=PAIR_GAUSSIAN_TAIL)
        return curve_direction(f, opt_inf=0.0), None


@dataclass(frozen=True, eq=False)
class FinitePair(Pair):
    """A pair given by its loss directions (pmfs, densities, sampled curves): equal only to
    itself, and not serialisable. ``label`` says where it came from."""

    remove_direction: LossDirection
    add_direction: LossDirection | None = None
    label: str = "finite"

    def __post_init__(self) -> None:
        for name in ("remove_direction", "add_direction"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, LossDirection):
                raise TypeError(f"{name} must be a LossDirection, got {type(value).__name__}")
        if self.remove_direction is None:
            raise TypeError("remove_direction must be a LossDirection, got None")

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        return self.remove_direction, self.add_direction

    def __repr__(self) -> str:
        return f"FinitePair({self.label})"


def tradeoff_pair(f: TradeoffFunction) -> Pair:
    """Dominating pair of f-DP (symmetric: it bounds both orders of neighbouring datasets);
    closed forms for Gaussian and Laplace curves, knots for piecewise-linear ones, otherwise the
    sound lower envelope and the chords of f (``envelope_direction``)."""
    if isinstance(f, GaussianTradeoff):
        return GaussianPair(f.mu)
    if isinstance(f, LaplaceTradeoff):
        return LaplacePair(f.eps)
    if isinstance(f, FiniteLossTradeoff):
        return FinitePair(curve_direction(f), None, "curve")
    if isinstance(f, PiecewiseLinearTradeoff):
        lo, qm, inf = _knot_atoms(f.alphas, f.betas, True)
        olo, oqm, oinf = _knot_atoms(f.alphas, f.betas, False)
        return FinitePair(_FiniteDirection(lo, qm, inf, olo, oqm, oinf), None,
                          "piecewise-linear curve")
    return FinitePair(envelope_direction(f), None, "sampled curve")


# ============================ mixtures of Gaussians ==============================================

#: Far end of the root bracket of ``_MixtureDirection``, in standard deviations beyond every mean:
#: every component's mass beyond it (Phi(-40) < 1e-349) is below the smallest double.
_MIXTURE_FAR = 40.0
#: Sub-intervals over which ``_MixtureDirection.slope_bounds`` takes its interval bounds.
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
class _MixtureDirection(_TailDirection):
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
            done = np.abs(xn - xa_) <= 4 * EPS_MACH * np.maximum(1.0, np.abs(xa_))
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
            out += [_ndtr(x - m) @ w, _ndtr(m - x) @ w]
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
        e = (np.abs(f - g) + 8.0 * EPS_MACH * big + dg) * (1.0 + 1e-9)
        with np.errstate(divide="ignore", invalid="ignore"):
            d = 2.0 * e / slope + 4.0 * EPS_MACH * np.maximum(1.0, np.abs(x))
        d = np.where(np.isfinite(d) & (d > 0), d, np.inf)
        ok = np.isfinite(d)
        lam = np.zeros_like(x)
        if ok.any():
            pad = 8.0 * EPS_MACH * (pm.size + qm.size + 2) * float(np.max(np.abs(
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
        rel = np.full(g.shape, 8.0 * EPS_MACH)
        if fin.any():
            xf = x[fin]
            d = self._root_error(xf, g[fin], dg[fin])
            pm, _, qm, _ = self._arrays
            means = np.concatenate([pm, qm])
            z = xf[:, None] - means[None, :]
            dz = d[:, None] + EPS_MACH * np.abs(z)
            worst = ndtr_accuracy(z, dz).max(axis=1)
            rel[fin] = worst + (means.size + 2) * EPS_MACH
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
        pad = 16.0 * EPS_MACH * (pm.size + qm.size + 2) * (big + 1.0)

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
            slack = 16.0 * EPS_MACH * (np.abs(x0) + np.abs(x1) + big + np.abs(r_lo)
                                       + np.abs(r_hi) + 1.0)
            n_lo = (mq_lo - x1) - r_hi - slack
            n_hi = (mq_hi - x0) - r_lo + slack
            s_hi = n_hi / np.where(n_hi >= 0, l1_lo, l1_hi)
            s_lo = n_lo / np.where(n_lo >= 0, l1_hi, l1_lo)
            s_hi = s_hi + 16.0 * EPS_MACH * (np.abs(s_hi) + 1.0)
            s_lo = s_lo - 16.0 * EPS_MACH * (np.abs(s_lo) + 1.0)
        positive = l1_lo > 0
        return (np.asarray(np.where(positive, s_lo, np.nan), dtype=np.float64),
                np.asarray(np.where(positive, s_hi, np.nan), dtype=np.float64))

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        z = _z(tail)
        (lo, hi), _ = self.loss(np.array([min(self.q_means) - z, max(self.q_means) + z]))
        return float(lo), float(hi)

    def reverse(self) -> _MixtureDirection:
        """The pair (Q, P), reflected (x -> -x) so that its loss is increasing again."""
        return _MixtureDirection(tuple(-m for m in self.q_means), self.q_weights,
                                 tuple(-m for m in self.p_means), self.p_weights)


def _check_mixture(sigma: float, sensitivities: Any, probs: Any) -> tuple[tuple[float, ...],
                                                                          tuple[float, ...]]:
    """Validated (sensitivities, probabilities) of a Gaussian mixture with zero-probability
    components dropped and the probabilities normalised."""
    s = check_reals("sensitivities", sensitivities, low=0.0, high=1e4 * sigma)
    p = check_reals("probs", probs, low=0.0, high=1.0)
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
        rem = _MixtureDirection((0.0,), (1.0,), means, self.probs)
        return rem, rem.reverse()


# ============================ the truncated discrete Gaussian ====================================


@dataclass(frozen=True)
class TruncatedDiscreteGaussianPair(Pair):
    """The discrete Gaussian [@canonne2020discrete] restricted to {-m, ..., m} and renormalised
    (m = ``bound``), against its shift by the integer sensitivity Delta; symmetric (y -> Delta - y
    swaps them). Exact finite pair: L = (2 Delta y - Delta^2)/(2 sigma^2) on the overlap
    Delta - m <= y <= m, and the Q-mass at m < y <= m + Delta (where P is 0) at L = +inf.
    Losses are moved outward by their float error; the masses' error (``gauss_masses``) is
    declared, and masses below the normal range are charged at +inf (pessimistic) or dropped."""

    sigma: float
    bound: int
    sensitivity: int = 1
    kind: ClassVar[str | None] = "truncated_discrete_gaussian"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_real("sigma", self.sigma, low=0.0, low_open=True,
                                                     high=1e6))
        object.__setattr__(self, "bound", check_count("bound", self.bound, low=0, high=10**6))
        object.__setattr__(self, "sensitivity", _check_int_sensitivity(self.sensitivity))

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        m, d, s2 = self.bound, self.sensitivity, self.sigma ** 2
        log_z, log_z_err = gauss_log_norm(m, s2)  # the normaliser of the window, exactly
        y = np.arange(d - m, m + 1, dtype=np.float64)  # the overlap (empty when d > 2m)
        losses = (2.0 * d * y - float(d) ** 2) / (2.0 * s2)
        q, rtol = gauss_masses(y - d, s2, log_z, log_z_err)
        # Q-mass where P is 0: y - d in [max(m - d + 1, -m), m], summed correctly rounded; up
        # (pessimistic, with the masses not held) and down (optimistic) by its error
        out, r_out = gauss_masses(np.arange(max(m - d + 1, -m), m + 1, dtype=np.float64), s2,
                                  log_z, log_z_err)
        inf = math.fsum(out.tolist())
        unheld = (np.count_nonzero(q == 0.0) + np.count_nonzero(out == 0.0)) * GAUSS_UNHELD_MASS
        inf_up = min(1.0, math.nextafter(inf * (1.0 + r_out + 4.0 * EPS_MACH) + unheld, 1.0))
        inf_down = inf * (1.0 - r_out - 4.0 * EPS_MACH)
        # losses: 8 u max|L| (``FiniteLossTradeoff.discrete_gaussian``); masses: ``gauss_masses``
        atol = 4 * EPS_MACH * (float(np.abs(losses).max()) if losses.size else 0.0)
        return _FiniteDirection(losses + atol, q, inf_up, losses - atol, q, inf_down, p_ninf=inf,
                                mass_rtol=rtol, loss_atol=atol), None
