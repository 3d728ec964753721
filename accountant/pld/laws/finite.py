"""Finite loss laws: atoms with Q-masses (pessimistic and optimistic sets), built from pmfs, densities,
curves and knots, their symmetrisation and their Poisson subsampling, every rounding charged outward.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

from accountant.core.hull import lower_convex_hull
from accountant.core.rounding import LIBM_REL
from accountant.core.types import MACHINE_EPSILON, FloatArray
from accountant.core.validation import as_float_array
from accountant.notions.finite_loss import FiniteLossTradeoff
from accountant.notions.tradeoff import TradeoffFunction, default_alpha_grid
from accountant.pld.grid.atoms import from_atoms
from accountant.pld.grid.law import SOURCE_TAIL, GridLaw
from accountant.pld.laws.base import LossDirection
from accountant.pld.laws.subsampled import mixture_log, mixture_log_error

#: Relative error taken of finite Q-masses given without a declared bound (``FiniteDirection``).
MASS_RTOL = 8.0 * MACHINE_EPSILON


@dataclass(frozen=True, eq=False)
class FiniteDirection(LossDirection):
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
            # (u = MACHINE_EPSILON) [``accountant.pld.grid`` docstring, point 3]
            law = from_atoms(h, self.losses, self.q, inf=self.inf, q_above=self.extra_pess_inf,
                             pessimistic=True, slack=0.0, shift=_top_shift(self.losses, self.q, h))
            return replace(law, tail=law.tail + (LIBM_REL + (self.q.size + 4) * MACHINE_EPSILON
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

    def subsampled(self, rate: float, poisson: bool) -> tuple[LossDirection, LossDirection | None]:
        """Poisson: the mixtures' atoms (``mix_finite``); without replacement: the symmetric pair
        of the symmetrised base's remove mixture [@dong2022gaussian, Thm 4.2]."""
        if poisson:
            return mix_finite(self, rate)
        return symmetric_direction(mix_finite(symmetric_direction(self), rate)[0]), None

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
                     mass_rtol: float = MASS_RTOL, opt_inf: float | None = None) -> FiniteDirection:
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
    return FiniteDirection(up, qm, float(inf), down, qm, float(inf if opt_inf is None else opt_inf),
                            p_ninf=p_ninf, mass_rtol=mass_rtol, loss_atol=float(loss_atol))


def curve_direction(f: FiniteLossTradeoff, opt_inf: float | None = None) -> FiniteDirection:
    """The finite pair of a finite curve with its declared errors: the losses' ``loss_atol`` and
    the masses' ``mass_rtol``, or MASS_RTOL where the curve declares less."""
    return finite_direction(f.losses, f.q_masses, f.q_inf, f.p_ninf, f.loss_atol,
                            mass_rtol=max(f.mass_rtol, MASS_RTOL), opt_inf=opt_inf)


def log_ratio(num: FloatArray, den: FloatArray, pessimistic: bool) -> FloatArray:
    """log(num / den) moved outward by its rounding: up for a pessimistic atom set, down for an
    optimistic one. The quotient of two values each within u/2 of exact ones errs by 3u/2
    (u = MACHINE_EPSILON; log moves by as much) and the log adds LIBM_ULP ulp, so the computed loss is
    within 2 u + LIBM_REL |l| of the exact; near an atom delta(eps) ~ q (l - eps), so an unmoved
    position error is a large relative error of delta there."""
    losses = np.log(num / den)
    err = 2.0 * MACHINE_EPSILON + LIBM_REL * np.abs(losses)
    return np.asarray(losses + err if pessimistic else losses - err, dtype=np.float64)


def pmf_direction(p: FloatArray, q: FloatArray) -> FiniteDirection:
    """The pair of two pmfs: Q-masses q at losses log(q / p) (``log_ratio``)."""
    both = (p > 0) & (q > 0)
    inf = float(q[(p == 0) & (q > 0)].sum())
    return FiniteDirection(log_ratio(q[both], p[both], True), q[both], inf,
                            log_ratio(q[both], p[both], False), q[both], inf,
                            p_ninf=float(p[(q == 0) & (p > 0)].sum()))


def density_direction(pm: FloatArray, qm: FloatArray, pess_loss: FloatArray) -> FiniteDirection:
    pm = np.maximum(pm, 0.0)
    qm = np.maximum(qm, 0.0)
    both = (pm > 0) & (qm > 0)
    only_q = (pm <= 0) & (qm > 0)
    fin = both & np.isfinite(pess_loss)
    outside = max(0.0, 1.0 - float(qm.sum()))
    pess_inf = float(qm[only_q].sum() + qm[both & ~np.isfinite(pess_loss)].sum()) + outside
    with np.errstate(divide="ignore"):
        merged = np.log(qm[both] / pm[both])
    return FiniteDirection(pess_loss[fin], qm[fin], pess_inf, merged, qm[both],
                            float(qm[only_q].sum()))


def knot_atoms(alphas: FloatArray, betas: FloatArray,
                pessimistic: bool) -> tuple[FloatArray, FloatArray, float]:
    """The pair of a convex piecewise-linear curve: a segment of slope -s carries Q-mass
    (its drop in beta) at loss log s, moved outward by its rounding (``log_ratio``: the drops are
    differences of the knots, each within u/2); 1 - f(0) is the Q-mass at +inf
    [@dong2022gaussian, Prop. 2.2]."""
    da = np.diff(alphas)
    db = -np.diff(betas)
    ok = (db > 0) & (da > 0)
    return log_ratio(db[ok], da[ok], pessimistic), db[ok], max(0.0, 1.0 - float(betas[0]))


def envelope_direction(f: TradeoffFunction) -> FiniteDirection:
    """Finite pair of any curve: pessimistic atoms from the sound lower envelope of f, optimistic
    ones from the chords of f (which lie above it, f being convex)."""
    env = f.lower_envelope()
    lo, qm, inf = knot_atoms(env.alphas, env.betas, True)
    a = default_alpha_grid()
    b = np.minimum(np.asarray(f(a), dtype=np.float64) + 1e-15, 1.0 - a)
    hx, hy = lower_convex_hull(a, b)
    olo, oqm, oinf = knot_atoms(hx, hy, False)
    return FiniteDirection(lo, qm, inf, olo, oqm, oinf)


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
    err = 8.0 * MACHINE_EPSILON * (1.0 + pp.size)
    if pessimistic:
        if used > 1.0 + 1e-12:
            return None
        up = 1.0 + 8.0 * MACHINE_EPSILON
        zero = max(0.0, 1.0 - used) + err
        return np.concatenate([lp, -lp, [0.0]]), np.concatenate([qp * up, pp * up, [zero]]), inf
    scale = min(1.0, (1.0 - inf) / (used - inf)) * (1.0 - 8.0 * MACHINE_EPSILON) if used > inf else 1.0
    zero = max(0.0, 1.0 - used - err)
    return (np.concatenate([lp, -lp, [0.0]]), np.concatenate([qp * scale, pp * scale, [zero]]),
            inf)


def merge_near_zero(losses: FloatArray, q: FloatArray, inf: float,
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


def symmetric_direction(d: FiniteDirection) -> FiniteDirection:
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
    # symmetric pair's unit mass (``merge_near_zero``)
    pl, pq, pi = merge_near_zero(pl, pq, pi, 2.0 * d.loss_atol)
    pess = _mirror_atoms(pl, pq * (1.0 + r), pi, True)
    if pess is None:
        p_rest = max(0.0, 1.0 - math.fsum((pq * np.exp(-pl)).tolist()))
        f = FiniteLossTradeoff.from_losses(pl, pq, q_inf=pi, p_ninf=p_rest,
                                           mass_rtol=r).symmetrize()
        # the symmetric curve's segment of slope -1 (loss 0) is held a few ulp above 0 (its knots'
        # own rounding, then ``log_ratio``'s outward move; 1.1e-15 for a single atom at 0.25):
        # atoms below 1e-12 are charged upward (``merge_near_zero``, sound at any threshold;
        # this one bounds its cost by 1e-12 of their mass)
        lo, qm, inf = merge_near_zero(*knot_atoms(f.alphas, f.betas, True), 1e-12)
        pess = _mirror_atoms(lo, qm, inf, True)
        if pess is None:
            raise ValueError("could not build a symmetric dominating pair for this mechanism")
    opt = _mirror_atoms(ol, oq * (1.0 - r), oi, False)
    assert opt is not None
    # symmetric: the P-mass at -inf is the Q-mass at +inf
    return FiniteDirection(*pess, *opt, p_ninf=pess[2] if pess[2] == opt[2] else None)


def mix_finite(base: FiniteDirection, r: float) -> tuple[FiniteDirection, FiniteDirection]:
    """Remove (P, (1-r)P + rQ) and add ((1-r)P + rQ, P) for a finite pair with Q-masses q at
    losses l (P-mass q e^{-l}), Q-mass at +inf and the rest of P at -inf; both atom sets.

    The base's losses may have been moved by their declared error (``loss_atol``): the exact loss
    L of an atom lies in [l - w, l] for a pessimistic atom at l and in [l, l + w] for an
    optimistic one, w = 2 loss_atol. Each mixed atom then bounds its exact counterpart, which
    makes the mixtures dominate (are dominated by) the exact ones atom by atom:
    - P-masses q e^{-L}: in [p e^{-w}, p] for an optimistic atom (p = q e^{-l}) and in [p, p e^w]
      for a pessimistic one, so they are taken at p (1 + 2w) >= p e^w (w <= 1) and p (1 - w);
    - remove losses phi(l) = log(1 - r + r e^l): phi is increasing, so phi(l) bounds phi(L);
    - add losses -phi(l): phi has slope in (0, 1), so -phi(L) <= -phi(l) + w for a pessimistic
      atom and >= -phi(l) - w for an optimistic one: they are moved by w.
    The known P-mass at -inf is exact; computed, 1 - sum(q e^{-l}) bounds 1 - sum(q e^{-L}) in the
    right direction for each set (before the rounding charged below)."""
    w = 2.0 * base.loss_atol
    sets = []
    for i, (losses, q, inf) in enumerate(base.proper_pairs()):
        p = q * np.exp(-losses)
        p_ninf = max(0.0, 1.0 - float(p.sum())) if base.p_ninf is None else base.p_ninf
        p = p * (1.0 + 2.0 * w) if i == 0 else p * (1.0 - w)  # bounds of q e^{-L}, as above
        sets.append((losses, q, p, inf, p_ninf))
    log1m = math.log1p(-r)

    def remove(losses: FloatArray, q: FloatArray, p: FloatArray, inf: float,
               p_ninf: float) -> tuple[FloatArray, FloatArray, float]:
        lo = np.concatenate([mixture_log(r, losses), [log1m]])
        qm = np.concatenate([(1 - r) * p + r * q, [(1 - r) * p_ninf]])
        return lo, qm, r * inf

    def add(losses: FloatArray, q: FloatArray, p: FloatArray, inf: float,
            p_ninf: float) -> tuple[FloatArray, FloatArray, float]:
        lo = np.concatenate([-mixture_log(r, losses), [-log1m]])
        qm = np.concatenate([p, [p_ninf]])
        return lo, qm, 0.0

    def loss_err(lo: FloatArray, losses: FloatArray, moved: float) -> FloatArray:
        # the mixed losses' rounding (``mixture_log_error``) and ``moved``; the last atom is
        # log1p(-r), one elementary function
        err = mixture_log_error(r, lo[:-1], losses) + moved
        return np.concatenate([err, [LIBM_REL * abs(log1m)]])

    out = []
    for fn in (remove, add):
        pl, pq, pi = fn(*sets[0])
        ol, oq, oi = fn(*sets[1])
        # rounding charged outward: masses (exp's LIBM_REL and five roundings, within 16
        # MACHINE_EPSILON relatively) and losses (a few ulp of the operands, ``loss_err``) are moved up
        # for the pessimistic set, down for the optimistic one, and the absolute error of the rest
        # 1 - sum(p) (one ulp per atom) is added at the top loss, which keeps delta exactly 0
        # above the support (no mass at +inf); the base's mass error carries over to the mixtures
        # (non-negative combinations)
        mass_round = LIBM_REL + 12.0 * MACHINE_EPSILON  # exp's LIBM_REL, five roundings, padded
        up, down = 1.0 + mass_round, 1.0 - mass_round
        # the add losses -phi(l) also by w (the base losses' error; the rest's atom is exact)
        pl = pl + loss_err(pl, sets[0][0], w if fn is add else 0.0)
        pq = pq * up
        if base.p_ninf is None:
            pq[int(np.argmax(pl))] += 2.0 * MACHINE_EPSILON * (pl.size + 2)
        ol = ol - loss_err(ol, sets[1][0], w if fn is add else 0.0)
        # P-mass at -inf: none under remove (the mixture covers P); r Q(+inf) under add
        known = None if base.p_ninf is None else (0.0 if fn is remove else r * sets[0][3])
        out.append(FiniteDirection(pl, pq, pi * up, ol, oq * down, oi * down, p_ninf=known,
                                    mass_rtol=base.mass_rtol))
    return out[0], out[1]
