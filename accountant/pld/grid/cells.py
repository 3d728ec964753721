"""The seam between a loss law and the grid: the cells a law hands the grid (``Cells``) and how their
contents err (``ContentErrors``), with the node-level helpers of the construction."""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from accountant.core.recurrence import linear_recurrence
from accountant.core.rounding import exp_rn, expm1_rn
from accountant.core.types import MACHINE_EPSILON, UNIT_ROUNDOFF, FloatArray
from accountant.pld.grid.law import EPS_EXT


class ContentErrors(NamedTuple):
    """How the contents given to the optimistic construction err, against a reference law R (the
    mechanism's exact law for a source, the held fine law for a coarsening) with profile D.

    ``rel``: the connect-the-dots profile D~ of the contents (exact arithmetic) satisfies
    D~_J <= (1 + rel) D_J + node_J at the law's nodes, and its total Q-mass is at most (1 + rel)
    R's Q-mass above the first node plus ``total``; ``node``: upper bounds node_J, one per node of
    the half-cell grid (None: 0); ``res``: |q - x - pn| of each half cell, and the error of its
    computed deficit e^{h/2} pn - q when ``bounds`` are not given, at most ``res`` times its q."""

    rel: float
    res: float
    node: FloatArray | None = None
    total: float = 0.0
    #: upper bounds of each cell's exact x, upper deficit e^{h/r} pn - q and q, atoms included,
    #: when the contents are computed with errors (None: the contents' own values)
    bounds: tuple[FloatArray, FloatArray, FloatArray] | None = None


@dataclass(frozen=True, eq=False)
class Cells:
    """What a loss law hands the grid: the contents of the open cells of width h / r starting at
    the node g_{j0} = j0 h + shift (r = ``REFINE[pessimistic]``: cell i is (g_{j0} + i h/r,
    g_{j0} + (i + 1) h/r)) and of atoms on their nodes, with the error model of the law they
    stand for.

    For each cell: ``q`` its Q-mass, ``pn`` = e^{(its lower node)} times its P-mass and ``x`` =
    q - pn, the cell's contribution to delta at its lower node; ``node_q`` the atoms' Q-masses
    on the nodes (None: none). ``inf`` is the Q-mass at L = +inf, ``q_above`` the finite Q-mass
    above the last node and ``q_below`` the Q-mass at or below the first (both dropped by an
    optimistic law). ``slack``, ``rel`` and ``alt`` are the error model the reference law
    already carries (``GridLaw``: 0 for a mechanism's own law)."""

    h: float
    j0: int
    q: FloatArray
    pn: FloatArray
    x: FloatArray
    inf: float
    q_above: float = 0.0
    q_below: float = 0.0
    node_q: FloatArray | None = None
    shift: float = 0.0
    slack: float = 0.0
    rel: float = 0.0
    alt: tuple[float, float] | None = None


#: The optimistic construction's own rounding, relative to the node profiles it starts from
#: (``optimistic_from_cells``: 12 u for the cells of width h and their split, 3 u for the
#: masses, 3 u for the slope changes and the round trip through the jumps; padded). Its scalar
#: constants (e^{-h/2}, expm1(-h/2), expm1(+-h)) are rounded to nearest (``exp_rn``,
#: ``expm1_rn``: within u whatever the libm; LIBM_REL would add 12 u)
CONSTRUCTION_REL = 20.0 * UNIT_ROUNDOFF


#: Node profiles below which an optimistic source's errors are charged absolutely, not relatively
#: (``relative_split``): near the top of some supports (the add direction of a subsampled pair)
#: the profile vanishes faster than the tails' errors, and a relative charge there would be large
OPT_REL_REF = 1e-10


def relative_split(err: FloatArray, low: FloatArray, lowered: FloatArray) -> tuple[float, float]:
    """(t, s) with err_J + t lowered_J <= t max(low_J, 0) + s at every node J, for error bounds
    err_J at nodes whose exact values are at least low_J and lowerings ``lowered`` >= 0
    (``optimistic_from_cells``), i.e. err_J - t a_J <= s with a_J = max(low_J, 0) - lowered_J:
    relative at every node where a_J >= OPT_REL_REF (t = the largest err_J / a_J there), and
    s = max_J (err_J - t a_J), rounded up, covers the others. For every t' < t the cost
    t' + s(t') / OPT_REL_REF is at least t (the node K attaining t has a_K >= OPT_REL_REF and
    s(t') >= (t - t') a_K), so this is the best split up to s(t) / OPT_REL_REF."""
    pos = np.maximum(low, 0.0)
    a = pos - lowered
    big = a >= OPT_REL_REF
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t = max(0.0, float(np.max(err[big] / a[big], initial=0.0)))
        # err - t a in floating point: within 4 u of |err| + t (pos + lowered) of its value, and
        # of a subnormal ulp where it underflows
        over = (err - t * a + 2.0 * MACHINE_EPSILON * (np.abs(err) + t * (pos + lowered))
                + 4.0 * sys.float_info.min)
    s = max(0.0, float(np.max(over, initial=0.0)))
    return (t, s) if math.isfinite(t) and math.isfinite(s) else (0.0, math.inf)


def node_profile(mu: FloatArray, h: float) -> FloatArray:
    """Upper bound of the profile sum_{i > J} mu_i (1 - e^{(J - i) h}) of a non-negative measure
    on the nodes of a grid, at each node J: P_J = e^{-h} P_{J+1} + (1 - e^{-h}) A_{J+1}, A the
    tail sums; non-negative terms only, each step within 4 u relative (the constants e^{-h} and
    -expm1(-h), rounded to nearest by ``exp_rn``; the cumulated sums, two products and the sum: u
    each; ``linear_recurrence`` one rounding more per term), padded for the n steps. Products that
    underflow err absolutely, by at most half the smallest subnormal each (at most 3 per step:
    the step's own and the recurrence's 2 (i + 1), weighted by powers of e^{-h} < 1): 4 (n + 4)
    of it are added (hypothesis found mu = (0, 5e-324), h = 0.5 bounded by 0 at node 0)."""
    tails = np.concatenate([np.cumsum(mu[::-1])[::-1][1:], [0.0]])
    p = linear_recurrence((-expm1_rn(-h) * tails)[::-1], exp_rn(-h))[::-1]
    return np.asarray(p * (1.0 + 2.0 * MACHINE_EPSILON * (mu.size + 4))
                      + 4.0 * (mu.size + 4) * math.ulp(0.0), dtype=np.float64)


def node_values(x: FloatArray, pn: FloatArray, nodes: FloatArray,
                h: float) -> tuple[FloatArray, FloatArray, float]:
    """The profile at the nodes of cells of width h with contents x, pn (n cells) and node atoms
    ``nodes`` (n + 1), D_j = D_{j+1} + x_j + (1 - e^{-h}) W_{j+1} with W_j = pn_j + nodes_j +
    e^{-h} W_{j+1} (W_j = y_j P(L >= g_j); a node atom has y_j p = q), summed from the top; and
    rec_j and ``floor`` with |d_j - D_j| <= rec_j D_j + floor (D in exact arithmetic from the
    contents, themselves within 6 u of their own sums from the half cells; u = 2^-53). Every
    term is non-negative: each step of W errs by e^{-h} (rounded to nearest, ``exp_rn``: u), the
    product and the sum (u each), its start by u; each term of D by 1 - e^{-h} (u: ``expm1_rn``,
    not 1 - e^{-h}, which cancels to a relative error u / h, 5e-11 at h = 1e-6), the product and
    the sum, so by 3 u (n - j) + 4 u; the sums from the top add (n - j) u, the contents 6 u:
    4 u (n - j) + 10 u, and ``linear_recurrence``'s one rounding more per term, u: padded to
    5 u (n - j + 4). (With libm constants, LIBM_REL each, it would be (LIBM_REL + 3 u) per step;
    numpy's cumsum sums in order.) Products below the normal range err absolutely, by half the
    smallest subnormal each: W's, from the recurrence's three chains of products (its blocks, their
    carries, the carried values; ``linear_recurrence``), are damped by e^{-h} per step (at most
    3 / (2 (1 - e^{-h})) of it in all), so each term of D errs by at most two subnormals and d_j by
    2 (n - j + 1): floor = 4 (n + 4) subnormals (hypothesis: a lone top atom of 5e-324 at h = 0.5
    gave d_0 = 0)."""
    n = x.size
    w = linear_recurrence((np.concatenate([pn, [0.0]]) + nodes)[::-1], exp_rn(-h))
    d = np.concatenate([np.cumsum((x + -expm1_rn(-h) * w[::-1][1:])[::-1])[::-1], [0.0]])
    rec = 2.5 * MACHINE_EPSILON * (n + 4 - np.arange(n + 1))
    return (np.asarray(d, dtype=np.float64), np.asarray(rec, dtype=np.float64),
            4.0 * (n + 4) * math.ulp(0.0))


#: ``node_exponentials`` keeps the longest array it computed for each of this many grid widths
#: (the optimistic construction asks for the same width twice per level of a composition)
EXPONENTIALS_KEPT = 4
#: ... when it has at most this many entries
EXPONENTIALS_MAX = 2 ** 18
_exponentials: dict[float, FloatArray] = {}


def node_exponentials(size: int, h: float) -> tuple[FloatArray, float]:
    """e^{i h} for i < size (read-only) and a bound xi on their relative error: computed in long
    double (argument within u_ext i h, expl within 1 ulp) and rounded to double (u). Each entry is
    computed alone, so the first ``size`` entries of a longer array kept for the same h are the
    same doubles."""
    kept = _exponentials.get(h)
    if kept is None or kept.size < size:
        ld = np.arange(size, dtype=np.longdouble) * np.longdouble(h)
        kept = np.asarray(np.exp(ld).astype(np.float64), dtype=np.float64)
        kept.flags.writeable = False
        if size <= EXPONENTIALS_MAX:
            _exponentials.pop(h, None)
            while len(_exponentials) >= EXPONENTIALS_KEPT:
                del _exponentials[next(iter(_exponentials))]
            _exponentials[h] = kept
    return kept[:size], (UNIT_ROUNDOFF + EPS_EXT * (size * h + 4.0)) * 1.01
