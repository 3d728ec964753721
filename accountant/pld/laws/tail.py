"""Loss laws given by their tails: the four tails of L under Q and P at the grid's nodes, their accuracy and
optional log-density slope bounds, discretised into cells with certified error bounds
(connect-the-dots [@doroshenko2022connect]).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from dataclasses import replace
from statistics import NormalDist
from typing import NamedTuple

import numpy as np

from accountant.core.rounding import LIBM_REL
from accountant.core.types import MACHINE_EPSILON, FloatArray
from accountant.pld.grid.atoms import atom_content_bounds, deposit_atoms
from accountant.pld.grid.cells import Cells, ContentErrors
from accountant.pld.grid.construct import REFINE, from_cells
from accountant.pld.grid.law import SOURCE_TAIL, GridLaw
from accountant.pld.laws.base import LossDirection
from accountant.pld.laws.errors import (
    UNDERFLOW,
    CellErrors,
    cell_errors,
    deficit_share,
    optimistic_node_error,
    product_error,
    source_tail_law,
    up_share,
)


class NodeData(NamedTuple):
    """What a discretisation computes at its nodes g_i = i w (i from ``start``): g, the nodes'
    errors dg (``product_error``), the four tails, the cells' error bounds (``cell_errors``) and
    the slope bounds of the cells (None: undeclared). Every entry depends on its own node, or
    its cell's two, alone: a run of nodes reads the same values from a longer run (``nodes``)."""

    start: int
    w: float
    g: FloatArray
    dg: FloatArray
    tails: tuple[FloatArray, FloatArray, FloatArray, FloatArray]
    errors: CellErrors
    slopes: tuple[FloatArray, FloatArray] | None

    def nodes(self, a: int, b: int) -> NodeData:
        """The data of the nodes a .. b (counted from ``start``) and of the cells between them."""
        def cut(x: FloatArray) -> FloatArray:
            return x[a:b + 1] if x.size == self.g.size else x[a:b]

        slopes = None if self.slopes is None else (cut(self.slopes[0]), cut(self.slopes[1]))
        fq, sq, fp, sp = (cut(t) for t in self.tails)
        return NodeData(self.start + a, self.w, cut(self.g), cut(self.dg), (fq, sq, fp, sp),
                        CellErrors(*(cut(e) for e in self.errors)), slopes)


#: The node data of the last HANDOFF_KEPT pessimistic sources discretised (two: a bracket builds the
#: fine law of one direction and the screening law of the other before the optimistic law of the
#: first), with the memos their directions kept of those nodes, for the optimistic source of the same
#: direction on twice the width; an entry is dropped when read
HANDOFF_KEPT = 2
_HANDOFF: list[tuple[TailDirection, NodeData, dict[str, object]]] = []
#: the memos a direction keeps of the nodes it last computed at (``TailDirection._forget``)
_MEMOS = ("_memo", "_base_tails")


def z_of_tail(tail: float) -> float:
    """z with Phi(-z) = tail (the standard library's inverse, within a few ulp)."""
    return -NormalDist().inv_cdf(tail)


class TailDirection(LossDirection):
    """A pair given by the tails of L under Q and P: (Q(L<=g), Q(L>g), P(L<=g), P(L>g)), their
    accuracy, and optionally bounds of the log-density slope of L under Q (``slope_bounds``),
    which give the pessimistic split without cancellation (``accountant.pld.laws.errors``)."""

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

    def _node_data(self, i0: int, i1: int, w: float) -> NodeData:
        """``NodeData`` at the nodes i w, i0 <= i <= i1 (the subclass's memos of these nodes stay
        set until ``_forget``)."""
        g = np.asarray(np.arange(i0, i1 + 1) * w, dtype=np.float64)
        tails = self.tails(g)
        dg = product_error(np.arange(i0, i1 + 1, dtype=np.float64), w)
        errors = cell_errors(g, tails, self.tail_accuracy(g, dg))
        return NodeData(i0, w, g, dg, tails, errors, self.slope_bounds(g, dg))

    def _nodes_for(self, lo: float, hi: float, h: float, pessimistic: bool) -> NodeData:
        """The node data of a discretisation on width h of the support [lo, hi]: the nodes
        r j0 .. r j1 at spacing h / r (r = ``REFINE``). A pessimistic law on h computes them on
        the nodes of the optimistic law on 2 h (a superset, as 2 floor(x / 2) - 2 <= floor(x) - 1)
        and keeps them (``_HANDOFF``) for it: the brackets build that law next (its half cells
        are these cells), which then reads them instead of computing them again."""
        r = REFINE[pessimistic]
        j0, j1 = math.floor(lo / h) - 1, math.ceil(hi / h) + 1
        w = h / r
        if not pessimistic:
            for entry in list(_HANDOFF):  # a snapshot (a cache: another thread may change it)
                owner, kept, memos = entry
                if owner is self and (kept.start, kept.w, kept.g.size) == (r * j0, w, r * (j1 - j0) + 1):
                    _HANDOFF[:] = [e for e in _HANDOFF if e is not entry]
                    self.__dict__.update(memos)
                    return kept
            return self._node_data(r * j0, r * j1, w)
        big = 2.0 * h
        i0, i1 = 2 * (math.floor(lo / big) - 1), 2 * (math.ceil(hi / big) + 1)
        full = self._node_data(i0, i1, w)
        _HANDOFF[:] = [*[e for e in _HANDOFF if e[0] is not self][1 - HANDOFF_KEPT:],
                       (self, full, {k: v for k, v in self.__dict__.items() if k in _MEMOS})]
        return full.nodes(j0 - i0, j1 - i0)

    def discretize(self, h: float, pessimistic: bool, tail: float = SOURCE_TAIL) -> GridLaw:
        lo, hi = self.support(tail)
        j0 = math.floor(lo / h) - 1
        r = REFINE[pessimistic]  # the optimistic law reads half cells
        hc = h / r
        data = self._nodes_for(lo, hi, h, pessimistic)
        g, dg, tails, errors = data.g, data.dg, data.tails, data.errors
        fq, sq = tails[:2]
        # difference the smaller of the two tails, so tiny cell masses keep their digits
        q = np.where(sq[:-1] <= 0.5, sq[:-1] - sq[1:], fq[1:] - fq[:-1])
        q = np.maximum(q, 0.0)
        raw = errors.pn  # e^g p of the P-masses differenced likewise
        pn = np.clip(raw, q * math.exp(-hc), q)
        x = q - pn
        atoms, atom_q = self.point_masses()
        atoms = atoms + self.atom_error() * (1.0 if pessimistic else -1.0)
        nodes = np.zeros(g.size)
        if pessimistic:  # r = 1: the cells are those of the law's grid
            cells_q = q.copy()
            x = self._split_up(data.slopes, h, q, x, errors.dx)
            lag = deposit_atoms(hc, r * j0, atoms, atom_q, q, pn, x, nodes, pessimistic)
            # the Q-mass above the last node goes to +inf, where delta reads it without slack
            # (``GridLaw.delta``): rounded up by its error bound unless the loss is bounded (then
            # it is 0). A tail that underflowed to 0 (sigma 17, q 1e-3: Q(L > 0.009) ~ 1e-310)
            # gave delta 0 above the grid, and a finite epsilon at delta 0 where the truth is inf.
            q_above = (float(sq[-1]) if self.bounded
                       else math.nextafter(float(sq[-1]) + float(errors.dsq[-1]), math.inf))
            law = replace(from_cells(Cells(h, j0, q, pn, x, inf=self.q_inf, q_above=q_above,
                                           q_below=float(fq[0]), node_q=nodes), pessimistic=True),
                          lag=lag, support_top=hi if self.bounded else math.inf)
            self._forget()
            in_cells = np.abs(q - cells_q) + MACHINE_EPSILON * q
            return source_tail_law(law, tails, errors, cells_q, in_cells, nodes)
        with np.errstate(invalid="ignore"):
            moved = np.where(np.isfinite(raw), np.abs(raw - pn), np.inf)
        bounds = self._optimistic_bounds(data.slopes, hc, q, pn, x, errors)
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
        q_above, q_below = float(sq[-1]), float(fq[0])
        # the construction below holds several arrays of this size: the ones read so far go first
        del data, g, dg, tails, fq, sq, errors, raw, moved, profile, aq, apn, ax, ax_up, adef_up, aq_up
        law = from_cells(Cells(h, j0, q, pn, x, inf=self.q_inf, q_above=q_above,
                               q_below=q_below, node_q=nodes), pessimistic=False,
                         errors=ContentErrors(k * MACHINE_EPSILON, (k + 8) * MACHINE_EPSILON,
                                              node_err + extra, total_err + extra, bounds))
        return replace(law, lag=lag)

    def _optimistic_bounds(self, slopes: tuple[FloatArray, FloatArray] | None, w: float, q: FloatArray,
                           pn: FloatArray, x: FloatArray,
                           errors: CellErrors) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Upper bounds of each cell's exact q, excess x and upper deficit e^w pn - q, the
        contents from which the optimistic construction reads its lowerings (``accountant.pld.grid.law``): the
        computed values rounded up by their error bounds (tight where a cell's mass is large
        against the tail) or, when declared, the slope bounds' shares of q's bound (no
        cancellation; ``up_share``, ``deficit_share``), whichever is smaller."""
        dq = errors.d_cell + errors.round_q
        q_up = (q + dq) * (1.0 + 2.0 * MACHINE_EPSILON)
        x_up = x + errors.dx
        grow = math.exp(w)
        with np.errstate(over="ignore"):  # an overflow is an infinite (valid) bound
            def_up = (np.maximum(grow * pn - q, 0.0) + grow * (errors.dx + 2.0 * dq)
                      + 4.0 * MACHINE_EPSILON * (q + 2.0 * pn)) * (1.0 + 1e-6)
        if slopes is not None:
            c_w = -math.expm1(-w)
            # c_w: expm1's error (LIBM_REL) and three products' roundings
            x_up = np.minimum(x_up, q_up * (up_share(slopes[1], w) * c_w)
                              * (1.0 + LIBM_REL + 2.0 * MACHINE_EPSILON))
            def_up = np.minimum(def_up, q_up * deficit_share(slopes[0], w) * (1.0 + 4.0 * MACHINE_EPSILON))
        with np.errstate(invalid="ignore"):
            x_up, def_up = (np.where(np.isnan(a), np.inf, a) for a in (x_up, def_up))
        return np.asarray(x_up, dtype=np.float64), np.asarray(def_up, dtype=np.float64), q_up

    def _split_up(self, slopes: tuple[FloatArray, FloatArray] | None, h: float, q: FloatArray,
                  x: FloatArray, dx: FloatArray) -> FloatArray:
        """x' with min(x' / (1 - e^{-h}), q) at least connect-the-dots' exact split b of each
        cell (g within dg of the exact nodes; ``accountant.pld.laws.errors``): the smaller of two upper
        bounds, x as differenced rounded up by its error bound dx (tight where the cell's mass is large
        against the tail) and, when declared, the slope bounds' (tight where the density is smooth on the
        scale of h); both are divided by c_h in ``from_cells`` (8 u covers it)."""
        c_h = -math.expm1(-h)
        up = x + dx + 8.0 * MACHINE_EPSILON * q * c_h
        if slopes is not None:
            up = np.minimum(up, q * (up_share(slopes[1], h) * (1.0 + 8.0 * MACHINE_EPSILON)) * c_h)
        return np.asarray(np.minimum(up, q), dtype=np.float64)

    def widened(self, g: FloatArray, dg: FloatArray) -> tuple[FloatArray, FloatArray]:
        """``widened_cells(g, dg)``, kept for one more call at the same nodes (the same arrays):
        a wrapped direction's ``slope_bounds`` widens the cells its base's widens, and reads
        them from here; the second call drops them."""
        memo = self.__dict__.pop("_widened", None)
        if memo is not None and memo[0] is g and memo[1] is dg:
            cells: tuple[FloatArray, FloatArray] = memo[2]
            return cells
        cells = widened_cells(g, dg)
        self.__dict__["_widened"] = (g, dg, cells)
        return cells

    def _forget(self) -> None:
        """Drop a subclass's values kept for the nodes of the last discretisation (its base's
        too: a wrapped direction's are kept on the base)."""
        for key in (*_MEMOS, "_widened"):
            self.__dict__.pop(key, None)
        base = self.__dict__.get("base")
        if isinstance(base, TailDirection):
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


def widened_cells(g: FloatArray, dg: FloatArray) -> tuple[FloatArray, FloatArray]:
    """The cells [g_j - dg_j, g_{j+1} + dg_{j+1}], rounded outward."""
    with np.errstate(invalid="ignore"):
        lo, hi = g[:-1] - dg[:-1], g[1:] + dg[1:]
        return (np.where(np.isfinite(lo), np.nextafter(lo, -np.inf), lo),
                np.where(np.isfinite(hi), np.nextafter(hi, np.inf), hi))


def linear_slopes(c0: float, c1: float, lo: FloatArray,
                   hi: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Bounds of c0 + c1 l over [lo, hi] (c1 < 0, both computed to 2 roundings: 8 u pads)."""
    def at(l_: FloatArray, sign: float) -> FloatArray:
        with np.errstate(invalid="ignore", over="ignore"):
            v = c0 + c1 * l_
            pad = np.where(np.isfinite(l_), 8.0 * MACHINE_EPSILON * (np.abs(c1 * l_) + abs(c0)), 0.0)
        return np.asarray(v + sign * pad, dtype=np.float64)

    return at(hi, -1.0), at(lo, 1.0)
