"""Grid engine of the privacy-loss distribution (PLD) accountant.

A privacy-loss law is held in the *Q-world*: the law of L = log(q/p) under Q on the grid
{(offset + i) h}, plus a mass at L = +inf. Its privacy profile is

    delta(eps) = Q(L = inf) + sum_i m_i (1 - e^{eps - l_i})_+.

Two facts carry every soundness argument here [@koskela2020computing; @doroshenko2022connect]:

1. For independent composition, delta_{A x C}(eps) = int delta_A(eps - l) dC(l). Hence if
   delta_U >= delta_A for *all real* eps then delta_{U x C} >= delta_{A x C}, and likewise with
   <=; bounds survive composition, and numerical errors bounded by a uniform ``slack`` on delta
   add up (scaled by the other factor's total mass). FFT round-off enters the slack through a
   worst-case normwise bound (``_fft_conv``).
2. delta is pointwise monotone in the loss: moving Q-mass up (to +inf in particular) can only
   increase delta, dropping mass can only decrease it.
3. Errors relative to the upper tails cost delta only relatively (``GridLaw.tail``). By Abel
   summation, with w_i = (1 - e^{eps - l_i})_+ non-decreasing in l_i and in [0, 1], and E_i the
   error's tail sum over positions >= l_i, sum_i e_i w_i = sum_i E_i (w_i - w_{i-1}); so
   |E_i| <= t M_i (M the exact law's tail sums) gives |error of delta(eps)| <= t delta(eps). Such
   errors survive composition: the tail of e * C at l is int E(l - x) dC(x), at most
   t int M(l - x) dC(x) = t M_{A x C}(l). Sources whose tail functions are computed to a relative
   accuracy (``ndtr``) err in this way, so k copies cost k t relative, not an absolute k 8u floor.
4. A lower bound needs only a one-sided bound, and one on the profile: if a held law O~ has
   delta_{O~}(eps) <= (1 + t) delta_A(eps) + s at every real eps (A the exact law it stands for;
   at eps = -inf too, by the limit: |O~| <= (1 + t)|A| + s) and C >= 0 is any measure, then
   delta_{O~ x C}(eps) = int delta_{O~}(eps - l) dC(l) <= (1 + t) delta_{A x C}(eps) + s |C|.
   Applied twice, O~_1 x O~_2 is within t = (1 + t_1)(1 + t_2) - 1 and s = s_1 |O~_2| +
   (1 + t_1) s_2 |A_1| (|A_1| <= 1) of A_1 x A_2, plus the product's round-off. Dropping mass, and
   any re-discretisation whose profile lies below that of its input (the optimistic coarsening),
   keep such a bound. So where a source's errors are relative to its node profiles (tails
   computed to a relative accuracy, roundings of non-negative terms) k copies cost about k t
   relative, not k s absolute (``GridLaw.rel`` of optimistic laws, ``_optimistic_from_cells``).

Pessimistic discretisation ("connect the dots" [@doroshenko2022connect]): the content of each grid
cell (g_j, g_{j+1}] is split between its two end points so that its P- and Q-masses are kept; the
split pair is a refinement of the true pair, so it dominates it, and its profile interpolates the
true profile at the nodes (error O(h^2) per mechanism, not O(h) as with rounding up).

Optimistic discretisation: in y = e^eps the profile is convex with slope -P(L > log y), so it lies
above its tangent at the midpoint of each cell (read from the contents of the cell's two halves).
Lowering each node value below the tangents of its two cells and taking the lower convex hull
gives a profile with kinks on the grid only, below the truth everywhere: a grid PLD whose delta is
a lower bound, with an O(h^2) error about half that of connect-the-dots on average. Any tangent
of a cell will do, and so will any mix of the lowerings two tangents ask (the chord is linear in
them): at the bottom of a support a cell mixes in the tangent at its lower node, so that no node
is lowered below the profile's linear part (the hull would lower every node below it: a lost
mass, paid by every composed copy). Computed contents: the lowerings are read from upper bounds
of the halves' excess and deficit, and the node profiles' errors are charged relatively where
the profile allows it (point 4, ``_plderror``, ``relative_split``).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import NamedTuple

import numpy as np
from scipy import fft as sfft

from ._numeric import LIBM_REL, FloatArray, exp_rn, expm1_rn, lower_convex_hull

EPS_MACH = float(np.finfo(np.float64).eps)
#: machine epsilon of numpy's long double (x87 extended on x86-64; double elsewhere, where the
#: bounds using it revert to double precision's)
EPS_EXT = float(np.finfo(np.longdouble).eps)
#: Q-mass below which a tail of a composed law is truncated (pessimistic: moved to +inf or up to
#: the lowest kept point; optimistic: dropped). Sound either way; this only sets the tightness.
TAIL_MASS = 1e-19
#: Total delta (roughly) that truncations of repeated squaring may move to +inf, split by level
#: (at 1e-11 it set the accuracy floor: ~1e-7 in epsilon on W1, and no tail below delta 1e-11; it
#: is absolute, so it must stay ~1e-3 below the smallest delta read: 1e-15). The PLD accountant's
#: default laws use a larger budget for larger deltas (``pld.LAW_BUDGETS``).
TAIL_BUDGET = 1e-19
#: Tail mass left out of the initial discretisation of a continuous mechanism.
SOURCE_TAIL = 1e-24
#: Absolute round-off (delta) that plain FFTs may add to one composition, in all (it is a floor
#: on the delta that can be certified, like TAIL_BUDGET; the PLD accountant's default laws use a
#: larger one for larger deltas, ``pld.LAW_BUDGETS``). Products above their share are split
#: (``_split_conv``).
ROUNDOFF_BUDGET = 1e-19
#: Longest convolution whose operands take a third slice when the remainder is above its budget
#: (``_split_conv``; 1.4x the cost of two slices). It covers the first squaring of W4's source
#: (5.9e5 points, used 5e4 times: its two-slice bound was most of W4's absolute slack, 2e-13,
#: which made delta 1e-15 unreachable and cost 5e-2 in epsilon at 1e-12).
REFINE_MAX_POINTS = 2 ** 20
#: Convolutions with fewer than this many products are done directly rather than by FFT. Direct
#: sums of non-negative terms err only relatively, and pessimistic laws carry relative errors
#: through every level; optimistic laws fold them into the absolute slack at each coarsening, where
#: the FFT's (smaller, absolute) error serves them better.
DIRECT_CONV = {True: 20_000_000, False: 200_000}


@dataclass(frozen=True, eq=False)
class GridLaw:
    """Q-law of the privacy loss on {(offset + i) h} with an atom ``inf`` at +inf.

    ``slack`` bounds the numerical error of the arrays as an error on delta: for a pessimistic
    law the bound reported is delta(masses) + slack, for an optimistic one delta(masses) - slack
    (each relative to 1 +- rel, ``delta``).

    The error fields mean different things for the two kinds. Pessimistic laws: measure-level,
    two-sided bounds of the held masses against those of the exact discretisation (the comments
    of the fields below). Optimistic laws: each error model (slack s, rel r; tail is 0) is a
    one-sided bound of the held profile against the exact profile of what the law stands for,
    delta_held(eps) <= (1 + r) delta_exact(eps) + s at every real eps (module docstring, point 4),
    so ``delta`` reports max over the models of (delta_held - s) / (1 + r); ``convolve``'s
    algebra is the same, truncation (dropping) and the optimistic coarsening (whose profile lies
    below its input's, ``_optimistic_from_cells``) keep it.
    """

    h: float
    offset: int
    masses: FloatArray
    inf: float
    slack: float
    pessimistic: bool
    #: relative error bound: the exact masses m and the held ones satisfy |held - m| <= rel m + e
    #: entrywise (atom included), where every tail sum of e is at most ``slack``:
    #: |e([l, +inf])| <= slack at every l (|e|_1 <= slack implies it; a source's absolute charge,
    #: max_j TB_j of ``_plderror``, is only of this form). That is all the bounds need: delta errs
    #: by at most slack (Abel summation), and a convolution's e_a * b~ with b~ >= 0 has tail sums
    #: at most slack_a |b~|_1.
    rel: float = 0.0
    #: the grid is {shift + (offset + i) h}: a finite mechanism's top loss is put on a node
    shift: float = 0.0
    #: Q-mass of an atom at the support's top (the loss ``top``): a pessimistic truncation moves
    #: the upper tail there rather than to +inf, so that delta stays exactly 0 above the support
    top_mass: float = 0.0
    #: number of grid points cut from the top by truncations (``top`` stays where it was)
    cut: int = 0
    #: tail-relative error bound: besides the parts bounded by ``rel`` and ``slack``, the held law
    #: differs from the exact one by a signed measure e_t with |e_t([l, +inf])| <= tail m([l, +inf])
    #: at every loss l (atoms included), which errs delta by at most tail * delta (point 3 of the
    #: module docstring). Pessimistic laws only: truncation by dropping does not keep it, and
    #: optimistic laws state their relative errors on the profile (``rel``, point 4) instead.
    tail: float = 0.0
    #: a source's absolute charge that may replace its ``tail`` (``self_compose`` carries it as
    #: the ``alt`` bound of the composition)
    fallback_slack: float | None = None
    #: a second, independent error bound (slack, rel, tail) of the same held masses: both are
    #: valid, so ``delta`` reports the better of the two. Pessimistic laws: a tail-relative charge
    #: suits small deltas; k copies of an absolute one cost only k * slack, which suits large ones
    #: (the tail-relative model's cross terms grow like k^2 N, ``convolve``). Optimistic laws: a
    #: profile-relative model and an absolute one (``_optimistic_from_cells``)
    alt: tuple[float, float, float] | None = None
    #: position tolerance: every held mass stands for exact mass at most ``lag`` above it
    #: (pessimistic) or below it (optimistic), e.g. an atom put on a node an ulp below its loss.
    #: Moving every mass of a law by d shifts its profile by d, and moving by less is dominated,
    #: so the exact profile is at most delta_held(eps - lag) (at least delta_held(eps + lag)):
    #: ``raw_delta`` reads it there. It costs lag in eps, where an absolute charge q d per atom
    #: and copy cost delta (a few ulp per copy made the tails at delta 1e-15 unreachable). Lags
    #: add up under composition (``convolve``)
    lag: float = 0.0
    #: a bound on the exact law's largest finite loss, where one is known (a finite pair's top
    #: atom, sums of them under composition, rounded up), whatever the grid: a pessimistic law's
    #: delta is then exactly its atom at +inf from there on, though its top node (moved up to the
    #: grid, or read ``lag`` higher) may lie above it
    support_top: float = math.inf

    @property
    def top(self) -> float:
        """Largest finite loss the law can carry: the top of its grid when it was built, composed
        by addition; no held mass lies above it."""
        return self.shift + (self.offset + self.masses.size - 1 + self.cut) * self.h

    @property
    def losses(self) -> FloatArray:
        return np.asarray(self.shift + (self.offset + np.arange(self.masses.size)) * self.h,
                          dtype=np.float64)

    @property
    def total(self) -> float:
        return float(self.masses.sum()) + self.inf + self.top_mass

    def above_top(self, eps: float) -> bool:
        """Whether eps is at or above the exact top shift + K h plus the ``lag`` of a pessimistic
        law, or its ``support_top``, where the exact law has no finite mass above (``top`` is the
        rounding of the former, which may lie below it: compared in exact rational
        arithmetic)."""
        if not math.isfinite(eps):
            return eps >= self.top
        if self.pessimistic and eps >= self.support_top:
            return True
        lag = self.lag if self.pessimistic else 0.0
        k = self.offset + self.masses.size - 1 + self.cut
        return Fraction(eps) - Fraction(lag) >= Fraction(self.shift) + k * Fraction(self.h)

    def raw_delta(self, eps: float) -> float:
        """sum m_i (1 - e^{eps - l_i})_+ + inf (without the slack) at the exact nodes
        l_i = shift + K_i h, bounded from above for a pessimistic law and from below for an
        optimistic one, the exact law's mass up to ``lag`` above (below) the held. The nodes are
        computed within u (|K_i h| + |shift| / 2) (u = EPS_MACH; the product and the sum round
        within u/2 of |K_i h| and of |l_i| each), so the terms are taken at eps' = eps -+ P,
        P = lag + 1.01 u (|shift| + max |K_i h| + |eps| + lag) (eps' rounds within u/2 of
        |eps'|): each then lies at or above (pessimistic) or at or below its exact value, up to
        the relative roundings of eps' - l_i (u/2: w = 1 - e^{-x} is concave with w(0) = 0),
        numpy's expm1 (LIBM_REL), the product (u/2) and the sum (``sum_rounding``), and
        absolutely where a product underflows (half the smallest subnormal each). Hypothesis
        found the unshifted sum 4.8e-12 relative below its exact value at a node 3.4e-6 under an
        atom; randomized response x7 reported delta 0 at eps = the computed top, an ulp below
        the exact one (exact delta 7.9e-19); a subnormal mass gave 0 where the exact value is
        4.9e-327."""
        if self.above_top(eps):  # +inf included: no finite mass lies above the top
            return self.inf
        if eps == -math.inf:
            return self.total * (1.0 + (1.0 if self.pessimistic else -1.0)
                                 * sum_rounding(self.masses.size + 2))
        k_top = self.offset + self.masses.size - 1 + self.cut
        pos = self.lag + 1.01 * EPS_MACH * (abs(self.shift) + max(abs(self.offset), abs(k_top))
                                            * self.h + abs(eps) + self.lag)
        eps = eps - pos if self.pessimistic else eps + pos
        top = self.inf + self.top_mass * -math.expm1(min(eps - self.top, 0.0))
        j = max(0, math.floor((eps - self.shift) / self.h) - self.offset)
        m = self.masses[j:]
        value = top
        if m.size > 0:
            lo = self.shift + (self.offset + j + np.arange(m.size)) * self.h
            w = -np.expm1(np.minimum(eps - lo, 0.0))
            value += float(np.sum(m * w))
        # products below the normal range err absolutely, by at most half the smallest subnormal
        r = sum_rounding(m.size + 2) + LIBM_REL + 2.0 * EPS_MACH
        tiny = (m.size + 2) * math.ulp(0.0)
        return value * (1.0 + r) + tiny if self.pessimistic else max(value * (1.0 - r) - tiny, 0.0)

    @property
    def error_models(self) -> list[tuple[float, float, float]]:
        """The valid error bounds (slack, rel, tail) of the held masses: the law's own and ``alt``."""
        own = (self.slack, self.rel, self.tail)
        return [own] if self.alt is None else [own, self.alt]

    def delta(self, eps: float) -> float:
        """The bound on delta(eps): raw value plus (pessimistic) or minus (optimistic) slack, the
        best over the law's error models."""
        raw = self.raw_delta(eps)
        if self.pessimistic:
            best = 1.0
            for slack, rel, tail in self.error_models:
                if rel + tail >= 1.0:
                    continue
                if self.above_top(eps):
                    # only the atom at +inf counts above the support; it is formed by products
                    # and sums of scalars (never by FFT), so its error is relative: the slack and
                    # the relative bounds scale it instead of being added (exactly 0 when it is)
                    best = min(best, self.inf * (1.0 + 2.0 * (rel + tail + slack)
                                                 + 16.0 * EPS_MACH))
                else:
                    # raw >= (1 - rel - tail) delta - slack (module docstring, point 3); the
                    # sum, the difference and the quotient round within 2 u of the result
                    best = min(best, (raw + slack) / (1.0 - rel - tail) * (1.0 + 2.0 * EPS_MACH))
            return best
        return max(max(0.0, (raw - slack) / (1.0 + rel + tail) * (1.0 - 2.0 * EPS_MACH))
                   for slack, rel, tail in self.error_models)


def tail_l1(tail: float, n: int) -> float:
    """l1 bound of a tail-relative error on n grid points (and the two atoms, top and +inf): its
    entries are differences of consecutive tail sums, each at most ``tail`` (the exact law's mass
    is at most 1), so |e_t|_1 <= 2 tail (n + 2)."""
    return 2.0 * tail * (n + 2)


def sum_rounding(n: int) -> float:
    """Relative error bound of numpy's (pairwise) sum of n non-negative doubles, with margin."""
    return (math.log2(n + 1) + 16.0) * EPS_MACH


# ============================ discretisation from cell contents =================================


#: Cells per node interval that the discretisation reads: the pessimistic one (connect the dots)
#: needs each cell's contents; the optimistic one also the contents of its two halves.
REFINE = {True: 1, False: 2}


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


def from_cells(h: float, j0: int, q: FloatArray, pn: FloatArray, x: FloatArray, *, inf: float,
               q_above: float, q_below: float, pessimistic: bool, slack: float = 0.0,
               node_q: FloatArray | None = None, shift: float = 0.0,
               bounds: tuple[FloatArray, FloatArray, FloatArray] | None = None,
               rel: float = 0.0, alt: tuple[float, float] | None = None,
               errors: ContentErrors | None = None) -> GridLaw:
    """Grid law on the nodes g_j = (j0 + j) h from the contents of open cells and of atoms on
    their nodes. The cells are those of width h / r, r = REFINE[pessimistic], starting at g_{j0}:
    cell i is (g_{j0} + i h/r, g_{j0} + (i + 1) h/r); ``node_q`` holds the atoms on their nodes.

    For each cell: ``q`` its Q-mass, ``pn`` = e^{(its lower node)} times its P-mass and ``x`` =
    q - pn, the cell's contribution to delta at its lower node. ``q_above`` is the finite Q-mass
    above the last node and ``q_below`` the Q-mass at or below the first (both dropped by an
    optimistic law); ``inf`` the Q-mass at L = +inf. ``bounds`` (optimistic laws): upper bounds of
    each cell's exact x, upper deficit e^{h/r} pn - q and q, atoms included, when the contents
    are computed with errors (``_optimistic_from_cells``); by default the contents are taken as
    exact up to ``errors`` (optimistic laws: how the contents err against the law they stand
    for, whose own error bounds are ``slack`` and ``rel``; by default a few ulp).
    """
    q = np.maximum(q, 0.0)
    x = np.clip(x, 0.0, q)
    nodes = np.zeros(q.size + 1) if node_q is None else np.maximum(node_q, 0.0)
    if not pessimistic:
        return _optimistic_from_cells(h, j0, q, np.maximum(pn, 0.0), x, nodes, inf=inf,
                                      slack=slack, rel=rel, alt=alt, shift=shift,
                                      bounds=bounds,
                                      errors=errors or ContentErrors(8.0 * EPS_MACH,
                                                                     16.0 * EPS_MACH))
    n = q.size
    # the share b of the cell's Q-mass sent to the upper node keeps both masses:
    # b (1 - e^{-h}) = x  [@doroshenko2022connect, connect-the-dots]
    b = np.minimum(x / -math.expm1(-h), q)
    m = np.zeros(n + 1)
    m[:-1] += q - b
    m[1:] += b
    m += nodes
    m[0] += q_below
    # trailing empty nodes dropped: ``top`` is then the last node that carries mass
    nz = np.flatnonzero(m)
    m = m[:nz[-1] + 1] if nz.size else m[:1]
    return GridLaw(h, j0, m, inf + q_above, slack, True, 0.0, shift)


#: The optimistic construction's own rounding, relative to the node profiles it starts from
#: (``_optimistic_from_cells``: 12 u for the cells of width h and their split, 3 u for the
#: masses, 3 u for the slope changes and the round trip through the jumps; padded). Its scalar
#: constants (e^{-h/2}, expm1(-h/2), expm1(+-h)) are rounded to nearest (``exp_rn``,
#: ``expm1_rn``: within u whatever the libm; LIBM_REL would add 12 u)
CONSTRUCTION_REL = 20.0 * EPS_MACH / 2.0
#: Node profiles below which an optimistic source's errors are charged absolutely, not relatively
#: (``relative_split``): near the top of some supports (the add direction of a subsampled pair)
#: the profile vanishes faster than the tails' errors, and a relative charge there would be large
OPT_REL_REF = 1e-10


def relative_split(err: FloatArray, low: FloatArray, lowered: FloatArray) -> tuple[float, float]:
    """(t, s) with err_J + t lowered_J <= t max(low_J, 0) + s at every node J, for error bounds
    err_J at nodes whose exact values are at least low_J and lowerings ``lowered`` >= 0
    (``_optimistic_from_cells``), i.e. err_J - t a_J <= s with a_J = max(low_J, 0) - lowered_J:
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
        over = (err - t * a + 2.0 * EPS_MACH * (np.abs(err) + t * (pos + lowered))
                + 4.0 * sys.float_info.min)
    s = max(0.0, float(np.max(over, initial=0.0)))
    return (t, s) if math.isfinite(t) and math.isfinite(s) else (0.0, math.inf)


def node_profile(mu: FloatArray, h: float) -> FloatArray:
    """Upper bound of the profile sum_{i > J} mu_i (1 - e^{(J - i) h}) of a non-negative measure
    on the nodes of a grid, at each node J: P_J = e^{-h} P_{J+1} + (1 - e^{-h}) A_{J+1}, A the
    tail sums; non-negative terms only, each step within 4 u relative (the constants e^{-h} and
    -expm1(-h), rounded to nearest by ``exp_rn``; the cumulated sums, two products and the sum: u
    each), padded for the n steps. Products that underflow err absolutely,
    by at most half the smallest subnormal each (2 per step, damped by e^{-h} < 1): 4 (n + 4) of
    it are added (hypothesis found mu = (0, 5e-324), h = 0.5 bounded by 0 at node 0)."""
    from scipy import signal  # imported here: scipy.signal takes ~0.3 s to import

    tails = np.concatenate([np.cumsum(mu[::-1])[::-1][1:], [0.0]])
    p = signal.lfilter([1.0], [1.0, -exp_rn(-h)], (-expm1_rn(-h) * tails)[::-1])[::-1]
    return np.asarray(p * (1.0 + 2.0 * EPS_MACH * (mu.size + 4))
                      + 4.0 * (mu.size + 4) * math.ulp(0.0), dtype=np.float64)


def _optimistic_from_cells(h: float, j0: int, qf: FloatArray, pnf: FloatArray, xf: FloatArray,
                           nodesf: FloatArray, *, inf: float, slack: float, rel: float,
                           alt: tuple[float, float] | None, shift: float,
                           bounds: tuple[FloatArray, FloatArray, FloatArray] | None,
                           errors: ContentErrors) -> GridLaw:
    """Optimistic law from the contents of half cells (width h/2): a grid law whose profile lies
    below the tangents of the true one at the midpoints of the cells of width h.

    Error model (``GridLaw``, optimistic): if R's profile D satisfies D <= (1 + rel) delta + slack
    (delta the exact profile R stands for), the law's profile F~ satisfies F~ <= (1 + t) D + s at
    every eps, hence F~ <= (1 + t)(1 + rel) delta + (1 + t) slack + s: the law is returned with
    those. The proof works at the nodes, as F~ and the chords are linear in y = e^eps between
    them: with V_J = D_J - c_J (c the lowerings, at least what the tangents need), the chord of
    V lies below D on every cell [module docstring], and F~_J <= (1 + t) V_J + s gives
    F~ <= (1 + t) chord(V) + s <= (1 + t) D + s. Where a node is capped (its lowering limited to
    its computed profile), V_J = 0 <= D and F~_J is a rounding residue (absolute); at y = 0, V is
    R's Q-mass above the first node (the truth lies above the chord from there, as the mass
    below contributes (1 - y e^{-l})_+ >= 0).
    The rounding at a node: the cells of width h (q: 2 u, x: 6 u) and the split b (9 u) err
    relatively on terms of D~_J = sum_{C >= J} [q_C (1 - e^{g_J - g_C}) + b_C c_h e^{g_J - g_C}],
    which are all non-negative, and so do the masses m (3 roundings of non-negative terms), so
    the profile Dm of m is within 12 u of D~; the masses of F = Dm - c are
    M_i = m_i - E1 (c_{i+1} - c_i) + E2 (c_i - c_{i-1}) (E1 = 1/(e^h - 1), E2 = 1/(1 - e^{-h});
    at y = 0 the chord from R's mass: M_0's last term is c_0), within 3 u of m_i plus sigma_i =
    12 u (|E1 dc| + |E2 dc|), whose profile at J (``node_profile``) is charged at J; the hull
    (``_convexify``) lowers F~ up to its charge, node by node (added to E_J); the final products
    round within u and clipped negatives add ``neg``. With E_J = (1 + gamma) node_J + cpart_J +
    hull_J (gamma = CONSTRUCTION_REL and
    ``errors.rel``), F~_J <= (1 + gamma)(D_J - c_J) + E_J + gamma c_J + (hull, neg), and
    ``relative_split`` turns E_J <= t' D_J + excess_J (D_J bounded below from the computed
    profile d) into t = gamma + t' and s = max_J (excess_J + t c_J) + (hull, neg).
    """
    # two empty half cells on top: the top node then carries no lowering (the profile is flat
    # above it), so the law's atom at +inf stays exact
    n = (qf.size + 1) // 2 + 1
    pad = 2 * n - qf.size
    hf = 0.5 * h
    if bounds is None:  # exact contents: their own x and deficit
        bounds = (xf, np.maximum(math.exp(hf) * pnf - qf, 0.0), qf)
    node_err = np.zeros(n + 1)
    if errors.node is not None:
        given = errors.node[0::2]
        node_err[:given.size] = given[:n + 1]
    qf, pnf, xf, xf_up, def_up, qf_up = (np.concatenate([a, np.zeros(pad)])
                                         for a in (qf, pnf, xf, *bounds))
    nodesf = np.concatenate([nodesf, np.zeros(2 * n + 1 - nodesf.size)])
    if n * h > 700.0:
        # e^{loss} over the span overflows: the empty law (delta >= 0) is the optimistic bound
        return GridLaw(h, j0, np.zeros(n + 1), 0.0, 0.0, False, 0.0, shift)
    decay_f = exp_rn(-hf)
    # the contents of the cells of width h: the two halves and the atom at the midpoint
    lo_q, lo_pn, lo_x = qf[0::2], pnf[0::2], xf[0::2]
    hi_q, hi_pn, hi_x, mid = qf[1::2], pnf[1::2], xf[1::2], nodesf[1::2]
    q = lo_q + hi_q + mid
    pn = lo_pn + decay_f * (hi_pn + mid)
    x = lo_x + hi_x + -expm1_rn(-hf) * (hi_pn + mid)
    nodes = nodesf[0::2]
    # connect-the-dots masses of the cell measure: its profile D interpolates the truth at nodes
    b = np.minimum(x / -expm1_rn(-h), q)
    m = np.zeros(n + 1)
    m[:-1] += q - b
    m[1:] += b
    m += nodes
    d, rec, floor = node_values(x, pn, nodes, h)
    # The profile D is convex in y = e^eps; on cell j it lies above T_j, its tangent at the
    # midpoint y_j e^{h/2} with slope -(P(L > mid) + theta P(L = mid)), theta = 1/(1 + e^{h/2})
    # (a subgradient; theta balances the two halves). T_j lies below D_j by the lower half's
    # excess x plus tanh(h/4) times the midpoint atom's Q-mass, and below D_{j+1} by the upper
    # half's deficit e^{h/2} pn - q plus the same. Lowering node j by the larger of the amounts of
    # its two cells puts the chord of every cell below that cell's tangent, hence below D; the
    # error is O(h^2), a quarter of a lowering by the whole cell's excess.
    # The lowerings are read from upper bounds of the halves' excess and deficit (``bounds``):
    # computed contents err by u times the tails, not u times the cell (``_plderror``).
    t_mid = math.tanh(0.5 * hf) * mid
    below_lo = xf_up[0::2] + t_mid
    below_hi = def_up[1::2] + t_mid
    # what each node's two cells ask of it: as the lower node of cell J, as the upper of J - 1
    need_lo = np.concatenate([below_lo, [0.0]])
    need_hi = np.concatenate([[0.0], below_hi])
    # computed contents (bounds not given): the deficit e^{h/2} pn - q, a difference, errs by up
    # to res times the half cell's q; the margin covers it
    ulps = np.concatenate([lo_q, [0.0]]) + np.concatenate([[0.0], hi_q + mid])
    margin = errors.res * ulps
    # A node cannot go below 0 (D >= the atom at +inf): where a cell's upper node cannot reach its
    # tangent, the cell's lower node is lowered by the whole cell's excess x_j instead, and the
    # cell asks nothing of its upper node. On a cell the profile lies above both end tangents,
    # which meet at the fraction t of it, at a gap (1 - t) x_j below the chord; a lowering
    # c_j >= x_j keeps the chord below them whatever c_{j+1} >= 0 [@doroshenko2022connect].
    # (the whole cell's excess lo_x + hi_q - e^{-h/2} hi_pn, bounded from the halves' bounds)
    # This happens near the top of a support, and in a cell holding most of the mass close to its
    # upper node (Poisson subsampling at small q piles its mass just above log(1 - q)): there the
    # upper half's deficit exceeds the profile at the upper node, which kept that demand and so
    # went to 0 (capped), with the lower bound: sigma 0.5, q = 1e-3, T = 2 at tol 1e-4 had the
    # bracket (0, 0.516) at delta 1e-5.
    short = need_hi[1:] * (1.0 + 1e-9) + margin[1:] > d[1:]
    x_up = (xf_up[0::2] + -math.expm1(-hf) * (qf_up[1::2] + mid) + decay_f * xf_up[1::2]) * (
        1.0 + 8.0 * EPS_MACH)
    need_lo[:-1] = np.where(short, np.maximum(need_lo[:-1], x_up), need_lo[:-1])
    need_hi[1:] = np.where(short, 0.0, need_hi[1:])
    # At the bottom of a support the profile is nearly linear in y: D_J exceeds the line
    # L(y) = Q - y P (the law's total masses; the profile's value and slope below its support)
    # only by the deficit of the mass below node J, room_J = sum_{l < g_J} (y_J e^{-l} - 1) q_l.
    # A lowering beyond room_J puts node J below L, and the hull then lowers every node below it
    # too, down to the fixed value at y = 0: the law loses mass there, which costs every copy at
    # first order (sigma 1, q 1e-4: a node 4.7e-6 low where room was 2.6e-6 lowered all nodes
    # below by 2.1e-6, most of the lower end's 72 tol at T 1e3). The tangent at a cell's lower
    # node (slope -P(L > g_J)) asks nothing of node J and of node J + 1 the whole cell's deficit
    # at y_{J+1}, def_B + e^{h/2} def_A + (e^{h/2} - 1)(q_A + mid) (halves A below, B above the
    # midpoint), at most room_{J+1}. The pairs of lowerings (of nodes J, J + 1) under which the
    # cell's chord lies below D form a convex set (the chord is linear in them), so the mix
    # (1 - lam) (midpoint's pair) + lam (lower tangent's pair) is one; where the midpoint asks
    # more of node J than room_J (an estimate from the contents: it only chooses), lam is the
    # least that asks room_J of it (taken where node J + 1 can reach its share).
    from scipy import signal  # imported here: scipy.signal takes ~0.3 s to import

    e_hf = math.exp(hf)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        # e^{h/2} and its expm1 within LIBM_REL each, 4 roundings of non-negative terms
        def_whole = (def_up[1::2] + e_hf * def_up[0::2] + math.expm1(hf) * (qf_up[0::2] + mid)) * (
            1.0 + 2.0 * LIBM_REL + 8.0 * EPS_MACH)
        below_p = signal.lfilter([1.0], [1.0, -math.exp(h)], pn + nodes[:-1])
        room = math.exp(h) * below_p - np.cumsum(q + nodes[:-1])  # room_{J+1}, J = 0 .. n - 1
        room = np.maximum(np.concatenate([[0.0], room[:-1]]), 0.0)  # room_J, J = 0 .. n - 1
        lam = np.clip(1.0 - room / need_lo[:-1], 0.0, 1.0)
        ask_hi = (1.0 - lam) * need_hi[1:] + lam * def_whole
        margin_mix = margin[1:] + lam * errors.res * e_hf * lo_q
        # (finite requests only: an infinite bound times 1 - lam = 0 would be NaN)
        mix = (~short & (need_lo[:-1] > room) & np.isfinite(need_lo[:-1])
               & np.isfinite(need_hi[1:]) & np.isfinite(def_whole)
               & (ask_hi * (1.0 + 1e-9) + margin_mix <= d[1:]))
    need_lo[:-1] = np.where(mix, (1.0 - lam) * need_lo[:-1], need_lo[:-1])
    need_hi[1:] = np.where(mix, ask_hi, need_hi[1:])
    margin[1:] = np.where(mix, margin_mix, margin[1:])
    need = np.maximum(need_lo, need_hi)
    wanted = need * (1.0 + 1e-9) + margin
    c = np.minimum(wanted, d)
    # the node values: D~ (exact, from the contents) >= (d - its recursions' error (rec) - the
    # residues' profile) / (1 + rel), d the profile in the form sum_{c >= J} [x_c + pn_c
    # (1 - e^{g_J - g_c})] over the half cells, which differs from D~'s by their residues
    # q - x - pn weighted by 1 - e^{g_J - g_c}, at most the profile of the residues of the cells
    # of width h put on their upper nodes; D >= (D~ - node) / (1 + rel)
    resid = errors.res * node_profile(np.concatenate([[0.0], q]), h) * (1.0 + 1e-9)
    gamma = (1.0 + errors.rel) * (1.0 + CONSTRUCTION_REL) - 1.0
    low = (d * (1.0 - rec) - floor - resid - node_err) / (1.0 + errors.rel)
    # where capped, the node's value is Dm - d (a rounding residue: Dm within gamma of D~, D~
    # within the residues of d's exact value), and its reference value V_J is 0
    capped = wanted > d
    cap_err = np.where(capped, (gamma + rec) * d + floor + (1.0 + gamma) * resid, 0.0)
    # F = Dm - c by its masses (in units of y_{j0}; the profile is fixed at y = 0)
    e1, e2 = 1.0 / expm1_rn(h), 1.0 / -expm1_rn(-h)
    dc = np.diff(c)
    down = np.concatenate([e1 * dc, [0.0]])
    up = np.concatenate([[c[0]], e2 * dc])
    pre = (m - down) + up
    sigma = 12.0 * EPS_MACH / 2.0 * (np.abs(down) + np.abs(up)) * (1.0 + 1e-9)
    cpart = node_profile(sigma, h)
    xs, xs_err = node_exponentials(n + 1, h)
    jumps, hull = _convexify(xs, pre / xs, h, xs_err)
    masses = xs * jumps
    neg = float(-masses[masses < 0].sum())
    masses = np.maximum(masses, 0.0)
    # the nodes' error bounds E_J (y = 0 first: R's Q-mass above the first node, ``total``); the
    # hull's round-off node by node (relative where the profile allows it, ``relative_split``)
    u = EPS_MACH / 2.0
    err = np.concatenate([[(1.0 + gamma) * errors.total + (1.0 + u) * float(np.sum(sigma))
                           + (1.0 + u) * hull.zero],
                          np.where(capped, 0.0, (1.0 + gamma) * node_err + (1.0 + u) * cpart)
                          + (1.0 + u) * hull.nodes])
    held = float(np.sum(q) + np.sum(nodes)) * (1.0 - EPS_MACH * (n + 4))
    low = np.concatenate([[held / (1.0 + errors.rel) - errors.total],
                          np.where(capped, 0.0, low)])
    lowered = np.concatenate([[0.0], np.where(capped, 0.0, c)])
    fixed = (1.0 + u) * (float(np.max(cap_err + cpart * capped)) + hull.sup) + 2.0 * neg
    # two splits: relative where it can (``relative_split``), and all absolute (t = gamma; what
    # suits large deltas); the reference's own model and its ``alt`` (or own) carry them
    t_rel, s_rel = relative_split(err, low, lowered)
    s_abs = float(np.max(np.maximum(err, 0.0)))
    models = []
    for t_nodes, s_split, (s_in, r_in) in ((t_rel, s_rel, (slack, rel)),
                                           (0.0, s_abs, alt or (slack, rel))):
        t = gamma + t_nodes
        s_own = (s_split + gamma * float(np.max(lowered)) + fixed) * (1.0 + 1e-9)
        models.append(((1.0 + t) * s_in + s_own, (1.0 + t) * (1.0 + r_in) - 1.0))
    (s1, r1), (s2, r2) = models
    return GridLaw(h, j0, masses, inf, s1, False, r1, shift, alt=(s2, r2, 0.0))


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
    4 u (n - j) + 10 u, padded to 5 u (n - j + 4). (With libm constants, LIBM_REL each, it would
    be (LIBM_REL + 3 u) per step; numpy's cumsum and scipy's lfilter sum in order.) Products
    below the normal range err absolutely, by half the smallest subnormal each: W's are damped
    by e^{-h} per step (at most 1 / (2 (1 - e^{-h})) of it in all), so each term of D errs by at
    most one subnormal and d_j by (n - j + 1): floor = 4 (n + 4) subnormals (hypothesis: a lone
    top atom of 5e-324 at h = 0.5 gave d_0 = 0)."""
    from scipy import signal  # imported here: scipy.signal takes ~0.3 s to import

    n = x.size
    w = signal.lfilter([1.0], [1.0, -exp_rn(-h)], (np.concatenate([pn, [0.0]]) + nodes)[::-1])
    d = np.concatenate([np.cumsum((x + -expm1_rn(-h) * w[::-1][1:])[::-1])[::-1], [0.0]])
    rec = 2.5 * EPS_MACH * (n + 4 - np.arange(n + 1))
    return (np.asarray(d, dtype=np.float64), np.asarray(rec, dtype=np.float64),
            4.0 * (n + 4) * math.ulp(0.0))


def node_exponentials(size: int, h: float) -> tuple[FloatArray, float]:
    """e^{i h} for i < size and a bound xi on their relative error: computed in long double
    (argument within u_ext i h, expl within 1 ulp) and rounded to double (u)."""
    ld = np.arange(size, dtype=np.longdouble) * np.longdouble(h)
    xs = np.asarray(np.exp(ld).astype(np.float64), dtype=np.float64)
    return xs, (EPS_MACH / 2.0 + EPS_EXT * (size * h + 4.0)) * 1.01


class HullErrors(NamedTuple):
    """Round-off bounds of ``_convexify`` on the profile P(y) = sum_i jumps_i (xs_i - y)_+ of its
    result: ``nodes[k]`` at y = xs_k, ``zero`` at y = 0, plus ``sup`` at every y."""

    nodes: FloatArray
    zero: float
    sup: float


def _convexify(xs: FloatArray, jumps: FloatArray, h: float,
               xs_err: float = 0.0) -> tuple[FloatArray, HullErrors]:
    """``_hull_passes`` for a law's masses xs_i jumps_i on nodes y_i = xs_i (1 + xi_i), xs_i
    computed as e^{i h} within |xi_i| <= ``xs_err``: the hull is taken for knots xs, and the law's
    profile at node y_k is sum_{i > k} jumps_i (1 + xi_i)(y_i - y_k) = F(xs_k) + y_k sum_{i > k}
    jumps_i (xi_k - xi_i), F the function of knots xs; so the hull's change of jumps, dj, moves
    the profile at node k by F's change (the passes' bound) plus at most 2 xs_err (1 + xs_err)^2
    xs_k sum_{i > k} |dj_i|.

    The passes' bound sum_{i > k} w_i (xs_i - xs_k) (``_hull_passes``) is evaluated by
    ``node_profile`` with exact exponentials e^{(k - i) h} in place of xs_k / xs_i (within
    2 xs_err of it, so 2 xs_err (1 + xs_err)^2 xs_k sum_{i > k} w_i is added)."""
    out, w, sup = _hull_passes(xs, jumps)
    n = xs.size
    nodes = np.zeros(n)
    zero = 0.0
    if w.any():
        wx = w * xs
        tail_w = np.concatenate([np.cumsum(w[::-1])[::-1][1:], [0.0]])
        nodes = (node_profile(wx * (1.0 + 4.0 * EPS_MACH), h) * (1.0 + 1e-9)
                 + (2.0 * xs_err + 4.0 * EPS_MACH) * (1.0 + xs_err) ** 2 * xs * tail_w * 1.01)
        zero = float(np.sum(wx)) * (1.0 + 1e-9)
    if xs_err > 0.0:
        dj = np.abs(out - jumps)
        tail_dj = np.concatenate([np.cumsum(dj[::-1])[::-1][1:], [0.0]])
        nodes = nodes + 2.0 * xs_err * (1.0 + xs_err) ** 2 * xs * tail_dj * (1.0 + 1e-9)
    return out, HullErrors(np.asarray(nodes, dtype=np.float64), zero, sup)


def _hull_passes(xs: FloatArray, jumps: FloatArray) -> tuple[FloatArray, FloatArray, float]:
    """Lower convex hull of a piecewise-linear function given by its slope jumps at ``xs`` (its
    value at 0 fixed): each vertex with a negative jump (a concave kink) is replaced by the chord of
    its kept neighbours, which lowers the function; every other kink of each run of adjacent ones
    is removed at once (a run of r kinks takes about log2(r) passes; before, one pass per kink,
    and lattice laws on fine grids have runs of hundreds). If kinks remain after
    CONVEXIFY_PASSES passes the hull of the kept vertices is taken at once (``_hull_jumps``).

    Returns the jumps, weights w >= 0 and a bound ``sup``: the round-off of the passes errs on the
    function P(y) = sum_i jumps_i (xs_i - y)_+ by at most sum_i w_i (xs_i - y)_+ at every y, and
    the hull taken at once (when it is) by ``sup`` more. A move of a share s from a kink to its
    neighbours l < r errs on the jumps at l and r by at most 12 u |s| in all (w to 3 u, 1 - w to
    3 u absolute, the products, the sums of the shares and the additions' share), an error on P
    within 12 u |s| (xs_r - y)_+, plus 2 u |j| at each node it changes (the two additions to its
    old jump): those are added to w at r and at the nodes changed. A chord replaces P on [l, r]
    by the line through its values at l and r; applied to the error bound it moves w_cur to l and
    r in the same shares, which keeps the bound outside (l, r) and makes it the line inside, so
    the bound holds node by node through the passes (the rounded shares change it by at most
    3 u w_cur (xs_r - y)_+, added at r). Before, the passes' round-off was one absolute charge
    (up to 1e4 u of the function's scale where shares travel far to the right; hypothesis found
    2.6e-12 of it), which set the floor of an optimistic law's lower bound at small deltas. The
    hull taken at once is 1-Lipschitz in the sup norm only: there the passes' bound is folded
    into ``sup`` at its largest, y = 0."""
    u = 0.5 * EPS_MACH
    j = jumps.copy()
    w_err = np.zeros(j.size)
    kept = np.ones(j.size, dtype=bool)
    for _ in range(CONVEXIFY_PASSES):
        idx = np.flatnonzero(kept)
        neg = j[idx] < 0.0
        if not neg.any():
            break
        # every other kink of each run of adjacent concave kinks (its 1st, 3rd, ...): their kept
        # neighbours stay, so the chords are independent and a run halves at each pass
        ar = np.arange(idx.size)
        run_start = np.maximum.accumulate(np.where(neg & ~np.concatenate([[False], neg[:-1]]),
                                                   ar, 0))
        pos = np.flatnonzero(neg & ((ar - run_start) % 2 == 0) & (ar < idx.size - 1))
        if pos.size == 0:
            # only the last node is left (a rounding-level negative): clipped by the caller,
            # which adds it to the slack
            break
        cur = idx[pos]
        right = idx[pos + 1]
        left_pos = pos - 1
        x_left = np.where(left_pos >= 0, xs[idx[np.maximum(left_pos, 0)]], 0.0)
        wt = (xs[right] - xs[cur]) / (xs[right] - x_left)
        share = j[cur]
        has_left = left_pos >= 0
        left = idx[left_pos[has_left]]
        touched = np.concatenate([left, right])
        w_cur = w_err[cur]
        moved = (12.0 * u * np.abs(share) + 4.0 * u * w_cur) * (1.0 + 1e-9)
        w_err += np.bincount(touched, weights=2.0 * u * np.abs(j[touched]), minlength=j.size)
        w_err += np.bincount(left, weights=w_cur[has_left] * wt[has_left], minlength=j.size)
        w_err += np.bincount(right, weights=w_cur * (1.0 - wt) + moved, minlength=j.size)
        w_err[cur] = 0.0
        j += np.bincount(left, weights=share[has_left] * wt[has_left], minlength=j.size)
        j += np.bincount(right, weights=share * (1.0 - wt), minlength=j.size)
        j[cur] = 0.0
        kept[cur] = False
    else:
        # the values are sums of at most 2 n terms of size <= sum |j| xs, summed in extended
        # precision (recursive summation: error below 2 n u_ext of it [@higham2002accuracy,
        # Sec. 4.2]) and rounded to double (u of it); the hull's choices only lower them
        bound = 4.0 * j.size * EPS_EXT + 4.0 * EPS_MACH
        sup = float(np.sum(w_err * xs)) + bound * float(np.sum(np.abs(j) * xs))
        return _hull_jumps(xs, j, kept), np.zeros(j.size), sup * (1.0 + 1e-9)
    # the weights' own sums (non-negative terms, a few per node and pass) round up by the margin
    return np.asarray(j, dtype=np.float64), w_err * (1.0 + 1e-9), 0.0


#: vectorised passes of ``_convexify`` before it takes the hull vertex by vertex
CONVEXIFY_PASSES = 64


def _hull_jumps(xs: FloatArray, jumps: FloatArray, kept: FloatArray) -> FloatArray:
    """The slope jumps of the lower convex hull, over 0 and the kept nodes, of the function of
    ``_convexify`` (slope -sum_{xs_i > y} jumps_i, flat beyond the last node), by Andrew's
    monotone chain. Its values above the flat end are sums from the top (each node's is the
    next one's plus the segment's drop), so small values near the top keep their digits; they are
    summed in long double (``EPS_EXT``)."""
    idx = np.flatnonzero(kept)
    jk, xk = jumps[idx].astype(np.longdouble), xs[idx].astype(np.longdouble)
    slope = np.cumsum(jk[::-1])[::-1]  # -(slope) left of each kept node
    drops = np.diff(xk) * slope[1:]
    f = np.concatenate([np.cumsum(drops[::-1])[::-1], [0.0]])
    first = f[0] + xk[0] * slope[0]
    hx, hy = lower_convex_hull(np.concatenate([[0.0], xs[idx]]),
                               np.concatenate([[first], f]).astype(np.float64))
    slopes = np.concatenate([np.diff(hy) / np.diff(hx), [0.0]])
    out = np.zeros(jumps.size)
    out[np.searchsorted(xs, hx[1:])] = np.diff(slopes)
    return out


def deposit_atoms(h: float, j0: int, losses: FloatArray, qm: FloatArray, q: FloatArray,
                  pn: FloatArray, x: FloatArray, nodes: FloatArray, pessimistic: bool,
                  shift: float = 0.0) -> float:
    """Add atoms (losses, Q-masses) to the cells and nodes of a grid starting at node j0 (in
    place), on the grid {shift + j h}. An atom within 1e-9 h of a node is put on it. Returned:
    the law's ``GridLaw.lag``, how far an atom may be held on the wrong side of its loss: below
    it for a pessimistic law, above it for an optimistic one.

    An atom's place in its cell, t = l - g, is computed within dt = 1.01 u (|l| + 2 h) (u =
    EPS_MACH) of the exact one: l - shift rounds within u/2 of |l|, the node g = c h within u/2
    of |c h| <= |l| + h, the difference and a pessimistic law's addition of dt within u/2 of h
    each. A pessimistic law takes t + dt, at or above the exact place: the connect-the-dots share
    sent up grows with t, so a t rounded low would split the atom below itself, and delta at the
    cell's lower node (where the split is exact) would fall below the truth (hypothesis: a finite
    pair's atom at -0.503 on h 1.9e-4, 2.8e-11 relative). An optimistic law keeps the computed t,
    up to dt above the exact place. An atom put on a node may lie on the wrong side of it (a
    pessimistic law's above it, by up to t + dt, or t + dt - h; an optimistic law's below it):
    the lag is the largest such gap, taken in exact rational arithmetic (few atoms lie on
    nodes), so an atom exactly on its node keeps delta exactly 0 at and above it.

    A lag, not a charge on the profile: a move of E costs the profile about q E just below the
    atom, where the exact profile may be as small as the atom's own share q (l - eps). Charged
    relatively at the nodes (the atom's share there is at least q (1 - e^{-h})), the bound failed
    between them: a truncated discrete Gaussian (sigma 0.422, bound 7, sensitivity 3) x3 held its
    atom at 143.144 1.1e-12 high (the atoms are on a lattice only to 1e-9 h), and its lower end
    at delta 1e-10 lay 4e-14 above the exact epsilon, 7.4e-4 below the atom. A lag costs eps
    itself, wherever it is read (``raw_delta``); charged to the slack instead, a few ulp per copy
    made W2's delta 1e-15 unreachable."""
    keep = qm > 0
    given, qm = losses[keep], qm[keep]
    losses = given - shift
    cell = np.ceil(losses / h).astype(np.int64) - 1
    dt = 1.01 * EPS_MACH * (np.abs(losses) + 2.0 * h)
    raw = losses - cell * h + (dt if pessimistic else 0.0)
    t = np.clip(raw, 0.0, h)
    top = t >= h * (1 - 1e-9)
    bottom = t <= h * 1e-9
    on = top | bottom
    node = np.where(top, cell + 1, cell) - j0
    nodes += np.bincount(node[on], weights=qm[on], minlength=nodes.size)
    off = ~on
    idx = cell[off] - j0
    q += np.bincount(idx, weights=qm[off], minlength=q.size)
    pn += np.bincount(idx, weights=qm[off] * np.exp(-t[off]), minlength=q.size)
    x += np.bincount(idx, weights=qm[off] * -np.expm1(-t[off]), minlength=q.size)
    # a pessimistic law must not move mass down, an optimistic one up: the atoms put on a node
    # on the wrong side of them set the lag, and an optimistic law's atoms in cells their dt
    moved = np.where(top, h, np.where(bottom, 0.0, t)) - raw
    lag = Fraction(0) if pessimistic or not off.any() else Fraction(float(dt[off].max()))
    for i in np.flatnonzero(on & ((moved < 0.0) if pessimistic else (moved > 0.0))).tolist():
        place = (int(j0) + int(node[i])) * Fraction(h) + Fraction(shift)
        gap = Fraction(float(given[i])) - place
        lag = max(lag, gap if pessimistic else -gap)
    return math.nextafter(float(lag), math.inf) if lag > 0 else 0.0


def atom_content_bounds(h: float, q: FloatArray, pn: FloatArray, x: FloatArray,
                        count: int) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Upper bounds of the exact excess x, upper deficit e^h pn - q and Q-mass q of cells of
    width h holding atoms at their computed places, from the contents ``deposit_atoms`` summed
    (``_optimistic_from_cells`` reads them as ``bounds``): each content is a sum of at most
    ``count`` terms qm, qm e^{-t} or qm (1 - e^{-t}) (numpy's exp and expm1, LIBM_REL; the
    product, u/2) added within (count - 1) u/2, so within rho = LIBM_REL + (count + 2) u/2 of the
    exact one. The deficit is a difference of nearly equal terms for an atom just below the
    upper node (it cancels to about (h - t) qm), where a relative pad on the computed difference
    does not bound its rounding: each term is rounded outward by its own error (e^h from libm,
    LIBM_REL; the product and the difference, u/2 each) instead."""
    u = EPS_MACH / 2.0
    rho = (LIBM_REL + (count + 2) * u) * 1.01
    grow = math.exp(h)
    with np.errstate(over="ignore", invalid="ignore"):
        ahead = grow * pn
        pad = (LIBM_REL + 2.0 * rho + 2.0 * u) * (ahead + q) * 1.01
        deficit = (np.maximum(ahead - q, 0.0) + pad) * (1.0 + 4.0 * u)
    return (np.asarray(x * (1.0 + rho), dtype=np.float64),
            np.asarray(np.where(np.isnan(deficit), np.inf, deficit), dtype=np.float64),
            np.asarray(q * (1.0 + rho), dtype=np.float64))


def from_atoms(h: float, losses: FloatArray, qm: FloatArray, *, inf: float, q_above: float,
               pessimistic: bool, slack: float = 0.0, shift: float = 0.0,
               rel: float = 0.0) -> GridLaw:
    """Discretise a finite Q-law (atoms ``losses`` with Q-masses ``qm``) onto the grid
    {shift + j h}; an optimistic law's masses may err by ``slack`` and ``rel`` (its profile within
    1 + rel of the exact one, plus slack); a pessimistic law's by ``slack`` only (its relative
    errors are the caller's to charge, as ``GridLaw.tail``)."""
    if pessimistic and rel:
        raise ValueError(f"rel must be 0 for a pessimistic law (charge it as its tail), got {rel}")
    keep = qm > 0
    losses, qm = losses[keep], qm[keep]
    if losses.size == 0:
        return GridLaw(h, 0, np.zeros(1), inf + (q_above if pessimistic else 0.0), slack, pessimistic,
                       0.0, shift)
    rel_losses = losses - shift
    j0 = math.floor(float(rel_losses.min()) / h) - 1
    r = REFINE[pessimistic]
    n = r * (math.ceil(float(rel_losses.max()) / h) + 1 - j0)
    q, pn, x, nodes = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n + 1)
    lag = deposit_atoms(h / r, r * j0, losses, qm, q, pn, x, nodes, pessimistic, shift)
    if pessimistic:
        # (the split's and the masses' roundings are the caller's to charge: ``FinitePair``)
        law = from_cells(h, j0, q, pn, x, inf=inf, q_above=q_above, q_below=0.0,
                         pessimistic=True, slack=slack, node_q=nodes, shift=shift)
        # no finite mass of the exact law lies above its largest atom
        return replace(law, lag=lag, support_top=float(losses.max()))
    # optimistic: the contents are sums of at most qm.size products, each within LIBM_REL + u/2
    # (numpy's exp and expm1, the product): within LIBM_REL + (qm.size + 2) u/2 <= rel of the
    # exact ones, and |q - x - pn| <= res q; the lowerings read the contents' upper bounds
    # (``atom_content_bounds``: the deficit cancels for an atom just below a node, and its terms
    # are e^{h/2} times q, which res did not cover for more than about 300 atoms in a cell of a
    # grid of width 0.05, or on grids wider than 1); the atoms' places are covered by the lag
    law = from_cells(h, j0, q, pn, x, inf=inf, q_above=q_above, q_below=0.0,
                     pessimistic=False, slack=slack, node_q=nodes, shift=shift, rel=rel,
                     bounds=atom_content_bounds(h / r, q, pn, x, qm.size),
                     errors=ContentErrors(LIBM_REL + (qm.size + 4) * EPS_MACH,
                                          LIBM_REL + (qm.size + 6) * EPS_MACH))
    return replace(law, lag=lag)


#: Widest span (in loss) of an optimistic law the coarsening keeps (``coarsen``): the
#: construction's e^{loss} over the span must stay finite (700 overflows)
OPTIMISTIC_SPAN = 690.0


def coarsen(law: GridLaw, factor: int) -> GridLaw:
    """Re-discretise a law onto the grid of width factor * h (its nodes are nodes of the old grid).

    The contents of each new cell (half cell for an optimistic law), q, pn and x, are sums of
    at most factor - 1 terms m, m e^{-t} and m (1 - e^{-t}) (u = 2^-53, the unit roundoff;
    t = k h / r: a product, within u/2
    relative, which moves e^{-t} by at most t u/2 and 1 - e^{-t} by at most u/2 relative; numpy's
    exp and expm1 within LIBM_REL; the product u/2) added within (factor - 2) u/2, so each is
    within rho = LIBM_REL + (factor + H + 1) u/2 of the exact one (``coarsening_errors``).

    Pessimistic: each old point goes to the two nodes around it with the share sent up
    increasing in its position, so the map is monotone and keeps tail-relative errors (and
    entrywise relative ones) of its input [module docstring, point 3]. Its own round-off is
    tail-relative too: the held tail sums at node j are sum_{c >= j} q_c + b_{j-1} + the node
    atoms above (the split b_c - b_c telescopes), with q_c within rho, b = x / (1 - e^{-H})
    within rho + LIBM_REL + u (the expm1 and the quotient) and the three additions forming a
    node's mass 3 u: rho + LIBM_REL + 4 u of the tail in all.

    Optimistic: the optimistic construction applied to the held law as a mechanism; its profile
    lies below the held one up to its own round-off, stated relatively to the held profile
    (``_optimistic_from_cells``), so the held law's error models carry over [module docstring,
    point 4].
    """
    if factor == 1:
        return law
    nz = np.flatnonzero(law.masses > 0)
    if nz.size and not law.pessimistic and (nz[-1] - nz[0]) * law.h > OPTIMISTIC_SPAN:
        # the optimistic construction works in y = e^eps over the span, which overflows past 700
        # (it then returned the empty law, which lost every copy's delta: a PureDP(13) subsampled
        # at 0.54, 124 times, spans 1500 and had the bracket (0, 996) at delta 1e-3). Dropping
        # the lowest masses keeps an optimistic law's bounds (module docstring, point 4) and the
        # profile above the kept span's bottom
        first = int(nz[-1]) - math.floor(OPTIMISTIC_SPAN / law.h)
        law = replace(law, offset=law.offset + first, masses=law.masses[first:].copy())
        nz = np.flatnonzero(law.masses > 0)
    # the error models above are relative; they hold where every product, sum and difference
    # of the contents and of the masses formed lies in the normal range, which masses at least
    # ``normal`` ensure (each term is at least m e^{-H} (1 - e^{-h / r})). Below it, each
    # operation errs absolutely by at most half the smallest subnormal: an optimistic law drops
    # such masses (sound, point 4 of the module docstring), a pessimistic one charges them to
    # its slack (at most 8 roundings per point and node, each entering two masses)
    r = REFINE[law.pessimistic]
    least = math.exp(-law.h * factor) * -math.expm1(-law.h / r)
    normal = 4.0 * sys.float_info.min / least if least > 0.0 else math.inf
    if nz.size and float(law.masses[nz].min()) < normal:
        if law.pessimistic:
            underflow = 16.0 * (law.masses.size + 2 * (law.masses.size // factor + 3)) * math.ulp(0.0)
            law = replace(law, slack=law.slack + underflow,
                          alt=None if law.alt is None else (law.alt[0] + underflow, *law.alt[1:]))
        else:
            law = replace(law, masses=np.where(law.masses >= normal, law.masses, 0.0))
            nz = np.flatnonzero(law.masses > 0)
    if nz.size == 0:
        return GridLaw(law.h * factor, 0, np.zeros(1), law.inf + law.top_mass, law.slack,
                       law.pessimistic, law.rel, law.shift, tail=law.tail, lag=law.lag,
                       support_top=law.support_top)
    # in units u = h / r of the cells read (r = REFINE): old node i at i r, a cell every factor;
    # the first and last points with mass set the new grid (cell c = ceil(i / factor) - 1)
    first, last = int(nz[0]), int(nz[-1])
    i0, i1 = (law.offset + first) * r, (law.offset + last) * r
    big_h = law.h * factor
    j0 = (-((-i0) // factor) - 1) // r
    n = r * ((-((-i1) // factor) - 1) // r + 2 - j0)
    # the points laid out in rows of ``factor`` positions: row c holds new node c (column 0) and
    # the points inside cell c after it, in order, so the column sums below add each cell's
    # contents from 0 in the order of a scatter-add (bincount) over the points; empty positions
    # add exact zeros
    dense = np.zeros((n + 1) * factor)
    start = i0 - r * j0 * factor
    part = law.masses[first:last + 1]
    dense[start:start + r * part.size:r] = np.where(part > 0, part, 0.0)
    rows = dense.reshape(n + 1, factor)
    nodes = rows[:, 0].copy()
    # a point's place in its cell, k h / r: e^{-t} and 1 - e^{-t} from a table of the factor values
    t = -(np.arange(factor) * (law.h / r))
    decay, share = np.exp(t), -np.expm1(t)
    col = rows[:n, 1]
    q, pn, x = col.copy(), col * decay[1], col * share[1]
    for k in range(2, factor):
        col = rows[:n, k]
        q += col
        pn += col * decay[k]
        x += col * share[k]
    # connect-the-dots splits each cell by non-negative weights: relative errors carry over. Its
    # round-off is tail-relative for a pessimistic law (docstring). Optimistic: the construction
    # bounds its profile against the held law's (``_optimistic_from_cells``) from the contents'
    # errors (``coarsening_errors``)
    own_tail, content_errors = coarsening_errors(factor, big_h)
    out = from_cells(big_h, j0, q, pn, x, inf=law.inf, q_above=0.0, q_below=0.0,
                     pessimistic=law.pessimistic, slack=law.slack, node_q=nodes,
                     shift=law.shift, rel=law.rel,
                     alt=None if law.alt is None else (law.alt[0], law.alt[1]),
                     errors=content_errors)
    cut = max(0, math.ceil((law.top - out.top) / out.h - 1e-9))
    # a width factor * h that rounds (factor not a power of two) puts new node J at J times the
    # rounding from the old points it stands for: a lag (none for the powers of two of
    # ``self_compose``; hypothesis found a coarsening by 6 at node 17418 reporting delta 0 an ulp
    # below the old point, exact 3.0e-14)
    drift = abs(Fraction(big_h) - factor * Fraction(law.h))
    lag = law.lag
    if drift:
        k = max(abs(j0), abs(j0 + out.masses.size + cut))
        lag = math.nextafter(float(Fraction(law.lag) + k * drift), math.inf)
    if not law.pessimistic:
        return replace(out, cut=cut, lag=lag, support_top=law.support_top)
    tail = law.tail + own_tail
    alt = None if law.alt is None else (law.alt[0], law.alt[1], law.alt[2] + own_tail)
    # the top atom moves up to the new top
    return GridLaw(out.h, out.offset, out.masses, out.inf, out.slack, out.pessimistic, law.rel,
                   law.shift, law.top_mass, cut, tail, alt=alt, lag=lag,
                   support_top=law.support_top)


def coarsening_errors(factor: int, big_h: float) -> tuple[float, ContentErrors]:
    """The round-off of ``coarsen`` onto the grid of width H = ``big_h``: the tail-relative bound
    of a pessimistic law's own round-off, and how an optimistic law's contents err (``rel`` and
    ``res`` of ``ContentErrors``). Each content is within rho of the exact one (``coarsen``). The
    connect-the-dots profile of the contents is a sum of them with non-negative weights (rel =
    rho), and so is the Q-mass; exactly q = x + pn, so |q - x - pn| <= 2 rho q; the deficit
    e^{H/2} pn - q that the construction computes (e^{H/2} from libm, LIBM_REL; the product and
    the difference, u/2 each, the latter of at most e^{H/2} q since pn <= q) errs by at most
    (rho + e^{H/2} (rho + LIBM_REL + 2 u)) q: ``res`` is the larger, padded. (With exp and
    expm1 taken to 1 ulp this was (factor + 8) u and (factor + 10) u; numpy's LIBM_ULP ulp and the
    factor e^{H/2} of the deficit's terms exceed the latter: by 1.4x at factor 2, small H.)"""
    u = EPS_MACH / 2.0
    rho = (LIBM_REL + (factor + big_h + 1.0) * u) * 1.01
    grow = math.exp(0.5 * big_h) if big_h < 1400.0 else math.inf
    res = (rho + grow * (rho + LIBM_REL + 2.0 * u)) * 1.01
    return (rho + LIBM_REL + 4.0 * u) * 1.01, ContentErrors(rho, res)


# ============================ composition ========================================================


def _tail_count(m: FloatArray, tail: float, floor: float) -> int:
    """How many leading entries of m have running sum at most ``tail`` (> 0), entries at or below
    ``floor`` (>= 0) counted as 0: np.searchsorted(np.cumsum(sig), tail, side="right") with sig
    those entries. The running sum is taken block by block (carried into the next block: the same
    sequential sums as np.cumsum) and only as far as needed (the cuts lie in the far tails); while
    it is 0, entries counted as 0 keep it exactly 0 and are skipped unsummed (a composed law's
    tail below its round-off floor can be half of it)."""
    start, block, carry = 0, 4096, 0.0
    while start < m.size:
        part = m[start:start + block]
        keep = part > floor
        if carry == 0.0:
            if not keep.any():
                start, block = start + part.size, 2 * block
                continue
            first = int(np.argmax(keep))
            if first > 0:
                start, block = start + first, 4096
                continue
        run = np.cumsum(np.concatenate([[carry], np.where(keep, part, 0.0)]))[1:]
        k = int(np.searchsorted(run, tail, side="right"))
        if k < run.size:
            return start + k
        start, block, carry = start + run.size, 2 * block, float(run[-1])
    return m.size


def truncate(law: GridLaw, tail: float = TAIL_MASS, floor: float = 0.0) -> GridLaw:
    """Drop tails of mass at most ``tail``: pessimistically the upper tail goes to +inf and the
    lower tail up to the first kept point; optimistically both are dropped. Entries at or below
    ``floor`` (the round-off level of the last convolution, already in the slack) count as zero
    when the cut points are chosen; the mass moved is the actual one."""
    m = law.masses
    if m.size <= 2:
        return law
    lo = _tail_count(m, tail, floor)
    hi = m.size - _tail_count(m[::-1], tail, floor)
    lo = min(lo, m.size - 1)
    hi = max(hi, lo + 1)
    if lo == 0 and hi == m.size:
        return law
    kept = m[lo:hi].copy()
    below = float(m[:lo].sum())
    above = float(m[hi:].sum())
    cut = law.cut + m.size - hi
    if law.pessimistic:
        # moving mass up to a fixed point is monotone: tail-relative errors are kept; the sums
        # moved round relatively, an error within their share of the tail sums
        kept[0] += below
        more = sum_rounding(m.size)
        alt = None if law.alt is None else (law.alt[0], law.alt[1], law.alt[2] + more)
        return GridLaw(law.h, law.offset + lo, kept, law.inf, law.slack, True, law.rel, law.shift,
                       law.top_mass + above, cut, law.tail + more, alt=alt, lag=law.lag,
                       support_top=law.support_top)
    # dropping mass lowers the profile: the one-sided bounds of an optimistic law are kept
    return GridLaw(law.h, law.offset + lo, kept, law.inf, law.slack, False, law.rel, law.shift,
                   0.0, cut, alt=law.alt, lag=law.lag, support_top=law.support_top)


def _fft_relative_error(nf: int) -> float:
    """3 eps_F + u for transforms of length nf [@higham2002accuracy, Thm 24.2, with twiddle error u;
    pocketfft's mixed radices are charged as if every level were a radix-2 level, log2 nf]."""
    u = EPS_MACH / 2.0
    eta = u + (4 * u / (1 - 4 * u)) * (math.sqrt(2.0) + u)
    levels = math.ceil(math.log2(nf))
    eps_f = levels * eta / (1.0 - levels * eta)
    return 3.0 * eps_f + u


def _norms(x: FloatArray) -> tuple[float, float]:
    """(|x|_2, |x|_1) of a non-negative array, without BLAS (whose threads stall on a busy
    machine); both rounded up by a relative margin far above their rounding error."""
    up = 1.0 + 1e-9
    return math.sqrt(float(np.sum(x * x))) * up, float(np.sum(x)) * up


def _fft_sum_bound(terms: list[tuple[FloatArray, FloatArray]], nf: int) -> float:
    """Worst-case bound on the l2 norm of the error of ``_fft_sum(terms)`` at transform length nf.

    Each transform of length N errs by eps_F relative in l2 [@higham2002accuracy, Thm 24.2]; as
    |F x|_inf <= |x|_1 for non-negative x and |F^-1 v|_2 = |v|_2 / sqrt N, a product x * y errs by
    at most (3 eps_F + u)(|x|_2 |y|_1 + |x|_1 |y|_2) in l2. The complex products and the sum of K
    terms in the frequency domain add (K + 4) u to the factor, and second-order terms a 1% margin.
    """
    weight = 0.0
    for x, y in terms:
        (x2, x1), (y2, y1) = _norms(x), _norms(y)
        weight += x2 * y1 + x1 * y2
    factor = _fft_relative_error(nf) + (len(terms) + 4) * EPS_MACH / 2.0
    return 1.01 * factor * weight


def _fft_sum(terms: list[tuple[FloatArray, FloatArray]], n: int) -> FloatArray:
    """sum_k x_k * y_k for non-negative arrays by one FFT product sum (error: ``_fft_sum_bound``)."""
    nf = sfft.next_fast_len(n, real=True)
    acc = np.zeros(nf // 2 + 1, dtype=np.complex128)
    for x, y in terms:
        acc += sfft.rfft(x, nf) * sfft.rfft(y, nf)
    out: FloatArray = sfft.irfft(acc, nf)[:n]
    return out


#: the bound of an integer product must stay below this for rounding to recover it exactly
EXACT_BOUND = 0.25
#: widest slice tried (slices of 26 bits keep their integer sums exact in doubles)
MAX_SLICE_BITS = 26


class _Operand:
    """One operand x of ``_split_conv``, sliced: x = sum_{k < S} ulp_k H_k + t with H_k integers
    in [0, 2^beta) on the window [lo, hi) where x >= ulp_{S-1}, ulp_k = top 2^{-(k+1) beta} (top a
    power of 2 at least max x), and 0 <= t < ulp_{S-1} everywhere. Every step is exact in
    floating point: scalings by powers of 2, floor, and the remainders r - floor(r / ulp) ulp.
    The last slicing and the slices' norms of every slicing are kept (``_choose_beta`` tries a
    few widths, then ``_split_conv`` reads the chosen one three times)."""

    def __init__(self, x: FloatArray) -> None:
        self.x: FloatArray = x
        self.top = math.ldexp(1.0, math.frexp(float(x.max()))[1])
        self._last: tuple[tuple[int, int], tuple[int, int, float, list[FloatArray]],
                          FloatArray] | None = None
        self._norms: dict[tuple[int, int], list[tuple[float, float]]] = {}

    def _slice(self, beta: int, slices: int) -> tuple[tuple[int, int, float, list[FloatArray]],
                                                       FloatArray]:
        """The window (``window``) and the remainder on it."""
        key = (beta, slices)
        if self._last is not None and self._last[0] == key:
            return self._last[1], self._last[2]
        ulp0 = math.ldexp(self.top, -beta)
        above = self.x >= math.ldexp(self.top, -slices * beta)  # true at max x >= top / 2
        lo, hi = int(np.argmax(above)), self.x.size - int(np.argmax(above[::-1]))
        r = self.x[lo:hi]
        hs = []
        for k in range(slices):
            ulp = math.ldexp(ulp0, -k * beta)
            hk = np.floor(r / ulp)
            hs.append(hk)
            r = r - hk * ulp
        self._last = (key, (lo, hi, ulp0, hs), r)
        return self._last[1], r

    def window(self, beta: int, slices: int) -> tuple[int, int, float, list[FloatArray]]:
        """(lo, hi, ulp0, [H_0, ..., H_{S-1}]) for S = ``slices`` slices of beta bits; [lo, hi)
        runs from the first to the last entry at least ulp_{S-1}."""
        return self._slice(beta, slices)[0]

    def norms(self, beta: int, slices: int) -> list[tuple[float, float]]:
        """``_norms`` of the slices H_k."""
        key = (beta, slices)
        if key not in self._norms:
            self._norms[key] = [_norms(hk) for hk in self.window(beta, slices)[3]]
        return self._norms[key]

    def rest(self, beta: int, slices: int) -> FloatArray:
        """The remainder t (full length)."""
        (lo, hi, _, _), r = self._slice(beta, slices)
        t: FloatArray = self.x.copy()
        t[lo:hi] = r
        return t


def _integer_bounds(na: list[tuple[float, float]], nb: list[tuple[float, float]],
                    nfe: int) -> list[float]:
    """Worst-case l2 (hence entrywise) error bounds of the FFT products of the integer slices, by
    diagonal d: sum_{i + j = d} H_i * H_j' (``_fft_sum``'s factor, with at most S terms, and at
    least the 3 of the original two-slice bound), from the slices' norms ``na``, ``nb``
    (``_Operand.norms``)."""
    terms = max(3, min(len(na), len(nb)))
    factor = 1.01 * (_fft_relative_error(nfe) + (terms + 4) * EPS_MACH / 2.0)
    out = [0.0] * (len(na) + len(nb) - 1)
    for i, (a2, a1) in enumerate(na):
        for j, (b2, b1) in enumerate(nb):
            out[i + j] += factor * (a2 * b1 + a1 * b2)
    return out


def _choose_beta(oa: _Operand, ob: _Operand | None, slices: int) -> int:
    """The widest slice (bits) for which the diagonals d < S of the integer products are certified
    exact (error bound <= EXACT_BOUND), found by a few trials."""
    tried: dict[int, float] = {}
    beta = 16
    while beta not in tried:
        wa = oa.window(beta, slices)
        wb = wa if ob is None else ob.window(beta, slices)
        nfe = sfft.next_fast_len(wa[3][0].size + wb[3][0].size - 1, real=True)
        na = oa.norms(beta, slices)
        bound = max(_integer_bounds(na, na if ob is None else ob.norms(beta, slices), nfe)[:slices])
        tried[beta] = bound
        if bound == 0.0:
            step = 4
        elif EXACT_BOUND <= 0.0:
            step = -MAX_SLICE_BITS
        else:
            step = math.floor(math.log2(EXACT_BOUND / bound) / 2)
        beta = min(MAX_SLICE_BITS, max(4, beta + step))
    good = [k for k, v in tried.items() if v <= EXACT_BOUND]
    return max(good) if good else min(tried)


def _remainder_terms(a: FloatArray, b: FloatArray | None, oa: _Operand, ob: _Operand,
                     beta: int, slices: int) -> list[tuple[FloatArray, FloatArray]]:
    """The full-length products left after the integer slices: with h = a - t (the slices' sum),
    a * b - h * h' = h t' + t b; for a * a, t (2a - t)."""
    ta = oa.rest(beta, slices)
    if b is None:
        # h t + t a = t (2a - t); 2a - t = a + h rounds relatively (u)
        return [(ta, a + (a - ta))]
    return [(a - ta, ob.rest(beta, slices)), (ta, b)]  # a - t = h: exact


def _split_conv(a: FloatArray, b: FloatArray | None, n: int, refine_above: float | None = None,
                max_slices: int = 3) -> tuple[FloatArray, float, float, float]:
    """a * b of non-negative arrays with error-free splitting [@ozaki2012error]: the leading S
    slices of each operand are integer vectors whose products the FFT computes with a certified
    error below 1/4, so rounding returns them exactly; only products of small remainders carry
    round-off, charged by ``_fft_sum``'s bound.

    With h_k = ulp_k H_k and a = sum_k h_k + t (likewise b): a * b = sum_{i, j} h_i h_j' [by
    diagonal d = i + j, each a short FFT, exact for d < S] + h t' + t b [full length]. As
    t < 2^-S beta of the largest entry, the error is about 2^-S beta times that of a plain FFT.
    The slice width beta is the largest for which the diagonals d < S are certified exact.

    S = 2, and one more (up to ``max_slices``) while the remainder products' bound exceeds
    ``refine_above``: their error is then 2^-beta smaller again, for 3 more transforms of the
    windows per slice (a square: 8 with two slices, 11 with three, 14 with four).
    """
    oa = _Operand(a)
    ob = None if b is None else _Operand(b)
    slices = 2
    beta = _choose_beta(oa, ob, slices)
    terms = _remainder_terms(a, b, oa, oa if ob is None else ob, beta, slices)
    nf = sfft.next_fast_len(n, real=True)
    err_l2 = _fft_sum_bound(terms, nf)
    while (refine_above is not None and math.sqrt(nf) * err_l2 > refine_above
           and slices < max_slices):
        del terms
        slices += 1
        beta = _choose_beta(oa, ob, slices)
        terms = _remainder_terms(a, b, oa, oa if ob is None else ob, beta, slices)
        err_l2 = _fft_sum_bound(terms, nf)
    lo_a, _, ulp0a, ha = oa.window(beta, slices)
    lo_b, _, ulp0b, hb = (lo_a, 0, ulp0a, ha) if ob is None else ob.window(beta, slices)
    # the integer products on the windows: diagonals of units ulp0 ulp0' 2^{-d beta}
    nw = ha[0].size + hb[0].size - 1
    nfe = sfft.next_fast_len(nw, real=True)
    na = oa.norms(beta, slices)
    bounds = _integer_bounds(na, na if ob is None else ob.norms(beta, slices), nfe)
    fa = [sfft.rfft(x, nfe) for x in ha]
    fb = fa if ob is None else [sfft.rfft(x, nfe) for x in hb]
    del ha, hb, oa, ob  # the slices (kept by the operands too)
    unit = ulp0a * ulp0b
    l1 = 0.0
    exact = np.zeros(nw)
    for d, bnd in enumerate(bounds):  # one spectrum at a time (memory)
        pairs = range(max(0, d - slices + 1), min(d, slices - 1) + 1)
        spec = fa[pairs[0]] * fb[d - pairs[0]]
        for i in pairs[1:]:
            spec += fa[i] * fb[d - i]
        v = sfft.irfft(spec, nfe)[:nw]
        del spec
        r = np.rint(v)
        u_d = math.ldexp(unit, -d * beta)
        if bnd <= EXACT_BOUND and float(np.max(np.abs(v - r))) <= EXACT_BOUND:
            exact += np.maximum(r, 0.0) * u_d  # exact integers times a power of 2
        else:  # not certified exact: keep the float values and charge the bound (l1 <= sqrt N l2)
            exact += v * u_d
            l1 += math.sqrt(nfe) * bnd * u_d
    del fa, fb
    # relative: the diagonals' sum (2 S - 2 roundings), the final addition, and 2a - t
    rel, rem_l1, noise = 2.0 * slices * EPS_MACH, math.sqrt(nf) * err_l2, err_l2 / math.sqrt(nf)
    out = _fft_sum(terms, n)
    del terms
    out[lo_a + lo_b:lo_a + lo_b + nw] += exact
    return out, rel, l1 + rem_l1, noise


def _fft_conv(a: FloatArray, b: FloatArray | None, n: int, direct_limit: int,
              budget: float = 0.0, refine: bool = False,
              max_slices: int = 3) -> tuple[FloatArray, float, float, float]:
    """Linear convolution a * b (a * a when b is None) of non-negative arrays, with worst-case
    round-off bounds ``(out, rel, l1, typical)``: |out - a * b| <= rel (a * b) + e with |e|_1 <= l1;
    ``typical`` is the root-mean-square size of e's entries (|e|_2 / sqrt N), a noise level that
    only guides where tails are cut.

    Direct summation of m non-negative products errs by at most gamma_m = m u / (1 - m u) relative
    per entry [@higham2002accuracy, Sec. 3.1]: ``rel`` = gamma_m, no absolute part. Larger products
    go by one plain FFT when its worst-case l1 bound is within ``budget``, else by FFT with
    error-free splitting (``_split_conv``; ``refine``: its remainder split again when above the
    budget, which pessimistic laws use: their round-off is otherwise the floor in the tails).
    """
    bb = a if b is None else b
    m = min(a.size, bb.size)
    if not (a.any() and bb.any()):
        return np.zeros(n), 0.0, 0.0, 0.0
    if a.size * bb.size <= direct_limit:
        return np.convolve(a, bb), m * EPS_MACH / (1.0 - m * EPS_MACH), 0.0, 0.0
    if budget > 0.0:
        nf = sfft.next_fast_len(n, real=True)
        err_l2 = _fft_sum_bound([(a, bb)], nf)
        if math.sqrt(nf) * err_l2 <= budget:
            return _fft_sum([(a, bb)], n), 0.0, math.sqrt(nf) * err_l2, err_l2 / math.sqrt(nf)
    return _split_conv(a, b, n, budget if refine and n <= REFINE_MAX_POINTS else None, max_slices)


def convolve(a: GridLaw, b: GridLaw, tail: float = TAIL_MASS, budget: float = 0.0,
             max_slices: int = 3) -> GridLaw:
    """Law of the sum of independent losses (composition), directly when small, else by FFT (plain
    when its round-off bound is within ``budget``, else with error-free splitting: ``_fft_conv``).
    Round-off enters as a relative bound (``rel``) and a worst-case bound on the l1 error added to
    the slack. Negative values are clipped (which moves each towards the true non-negative value).
    """
    if a.h != b.h or a.pessimistic != b.pessimistic:
        raise ValueError("convolve needs laws on the same grid and of the same kind")
    ma, mb = a.masses, b.masses
    n = ma.size + mb.size - 1
    same = a is b
    # a remainder above its budget is split again for pessimistic laws, and for optimistic ones
    # only when more than the default 3 slices are allowed (``PLD.law(precise=True)``)
    out, rel_c, slack_fft, noise = _fft_conv(ma, None if same else mb, n,
                                             DIRECT_CONV[a.pessimistic], budget,
                                             a.pessimistic or max_slices > 3, max_slices)
    floor = noise
    out = np.maximum(out, 0.0)  # moves each entry towards the true, non-negative value
    sum_a, sum_b = float(ma.sum()), float(mb.sum())
    inf = a.inf * (sum_b + b.top_mass + b.inf) + (sum_a + a.top_mass) * b.inf
    # a top atom plus anything finite lies at or below the sum of the tops: put it there
    top_mass = a.top_mass * (sum_b + b.top_mass) + sum_a * b.top_mass
    # Held inputs: a~ = a' + t_a + e_a with a <= ... entrywise |a' - a| <= r_a a, tail-relative
    # t_a (``GridLaw.tail``) and |e_a|_1 <= s_a; the exact laws have mass <= 1. Expanding a~ * b~:
    # a' * b' is within (r_a + r_b + r_a r_b) a * b entrywise; a' * t_b and t_a * b' are
    # tail-relative with t_b (1 + r_a), t_a (1 + r_b) (a' >= 0 integrates t_b's tail bound);
    # t_a * t_b is tail-relative with 2 t_a t_b (n + 2) (|t_b,j| <= 2 t_b M_b(j) and
    # sum_j M_b(j) M_a(l - j) <= (n_b + 2) M_{ab}(l)); the rest is absolute: s_a (1 + r_b),
    # s_b (1 + r_a), s_a s_b, and |t_a|_1 s_b, |t_b|_1 s_a (``tail_l1``). The product's round-off
    # is slack_fft plus an error e within rel_c of the non-negative held product H entrywise: its
    # tail sums are within rel_c H([l, inf]) <= rel_c ((1 + r_in + t_in) M_ab(l) + s_in), a
    # tail-relative error plus at most rel_c s_in at each tail sum, 2 (n + 2) rel_c s_in in l1
    # (clamp the tail sums). Optimistic laws (profile-level one-sided models, no tail part;
    # module docstring, point 4): delta_{a~ x b~} <= (1 + r_a)(1 + r_b) delta_ab + s_a |b~| +
    # (1 + r_a) s_b with |b~| <= 1 + r_b + s_b (the model at eps = -inf), which is r_in and s_in;
    # the product's round-off multiplies by 1 + rel_c and adds slack_fft (clipping negatives only
    # moves entries towards the exact non-negative product).
    # The scalar atoms round within ``sum_rounding`` of their tails. A law with two error models
    # (``GridLaw.alt``) gives the product two: each is valid for the same held product.
    na, nb = ma.size, mb.size
    scalars = sum_rounding(max(na, nb))

    def errors(ea: tuple[float, float, float],
               eb: tuple[float, float, float]) -> tuple[float, float, float]:
        (s_a, r_a, t_a), (s_b, r_b, t_b) = ea, eb
        r_in = r_a + r_b + r_a * r_b
        t_in = t_a * (1 + r_b) + t_b * (1 + r_a) + 2.0 * t_a * t_b * (min(na, nb) + 2)
        s_in = (s_a * (1 + r_b) + s_b * (1 + r_a) + s_a * s_b
                + tail_l1(t_a, na) * s_b + tail_l1(t_b, nb) * s_a)
        if a.pessimistic:
            return (s_in + slack_fft + 2.0 * (n + 2) * rel_c * s_in, r_in,
                    t_in + rel_c * (1 + r_in + t_in) + scalars)
        return (s_in * (1 + rel_c) + slack_fft + rel_c * tail_l1(t_in, n)
                + scalars * (inf + top_mass), r_in * (1 + rel_c) + rel_c, t_in)

    ea, eb = a.error_models, b.error_models
    slack, rel, tail_rel = errors(ea[0], eb[0])
    alt = None if len(ea) + len(eb) == 2 else errors(ea[-1], eb[-1])
    # the grids' shifts add; the sum's rounding moves every point by at most half an ulp of it
    shift = a.shift + b.shift
    lag = a.lag + b.lag + abs(float(Fraction(a.shift) + Fraction(b.shift) - Fraction(shift)))
    # the supports' tops add (rounded up)
    support_top = a.support_top + b.support_top
    if math.isfinite(support_top) and (Fraction(support_top)
                                       < Fraction(a.support_top) + Fraction(b.support_top)):
        support_top = math.nextafter(support_top, math.inf)
    law = GridLaw(a.h, a.offset + b.offset, out, min(inf, 1.0), slack, a.pessimistic, rel,
                  shift, top_mass, a.cut + b.cut, tail_rel, alt=alt, lag=lag,
                  support_top=support_top)
    return truncate(law, tail=tail, floor=8.0 * floor)


def to_grid(law: GridLaw, h: float) -> GridLaw:
    """Bring a law onto a grid of width h, an integer multiple of its own."""
    if law.h == h:
        return law
    factor = round(h / law.h)
    if factor < 1 or not math.isclose(factor * law.h, h, rel_tol=1e-12):
        raise ValueError("grids must be nested (widths in integer ratio)")
    return coarsen(law, factor)


#: Squarings before the first coarsening of a self-composition (``coarsening_level``). A law
#: standing for m copies, coarsened to h, is used k/m times, and its connect-the-dots error is
#: largest while the law is narrow and far from Gaussian: coarsening from m = 4 on (no delay) made
#: most of the error on DP-SGD (W4, q = 0.004, sigma = 1.1, T = 1e5, at tol 3.5e-5: upper - truth
#: 4.9e-5 with no delay, 2.5e-5 / 1.6e-5 / 1.1e-5 / 1.0e-5 / 8.7e-6 with 1 / 2 / 3 / 4 / 5;
#: Laplace x100: 1.2e-5 -> 4.6e-7 with 4). A delay of 4 costs about 1.3x the time at equal tol.
COARSEN_DELAY = 4


def coarsening_level(steps: float, max_level: int) -> int:
    """Level of the grid (width h0 * 2^level) of a law standing for ``steps`` discretised steps:
    floor((floor(log2 steps) - COARSEN_DELAY) / 2), so that the point count stays about constant
    once coarsening starts (the law's spread grows like sqrt m) and each level's error, O(h^2)
    used k/m times, about the same as the steps' own. A copy whose atoms sit on the nodes counts
    for its continuous Q-mass only (``self_compose``'s ``weight``): its copies add little error,
    and a coarsening would add far more (Laplace x100 on nodes, b = 10, at the default tol: upper
    - truth 1.27e-5 coarsened once from 64 copies, 3.95e-6 by its 3.1 steps, in the same time)."""
    if not steps >= 1.0:
        return 0
    return min(max(math.frexp(steps)[1] - 1 - COARSEN_DELAY, 0) // 2, max_level)


def self_compose(law: GridLaw, k: int, max_level: int, max_slices: int = 3,
                 tail_budget: float = TAIL_BUDGET,
                 roundoff_budget: float = ROUNDOFF_BUDGET, weight: float = 1.0) -> GridLaw:
    """k-fold composition by repeated squaring (O(N log N log k)); the object standing for m
    copies is moved to the grid of width h0 * 2^``coarsening_level(m * weight)``, ``weight`` the
    discretised steps one copy stands for (``coarsening_level``). Its truncations move or
    drop about ``tail_budget`` of mass in all (``TAIL_BUDGET``), and its products done by plain
    FFT add at most ``roundoff_budget`` of round-off (``ROUNDOFF_BUDGET``)."""
    if law.fallback_slack is not None:
        # both charges of the source are carried; each delta uses the smaller result
        law = replace(law, fallback_slack=None, alt=(law.fallback_slack, law.rel, 0.0))
    h0 = law.h
    result: GridLaw | None = None
    base = law
    m = 1
    kk = k
    # round-off allowed in plain FFTs: the budget in all, split over the 2 L products; a
    # product at the m-copy level is used k/m times
    share = roundoff_budget / (2 * k.bit_length())
    while True:
        if kk & 1:
            if result is None:
                result = base
            else:
                h = max(result.h, base.h)
                result = convolve(to_grid(result, h), to_grid(base, h), tail_budget / 64, share,
                                  max_slices)
        kk >>= 1
        if kk == 0:
            break
        m *= 2
        # a tail dropped here is used k/m times: keep each level's share of delta near the budget
        base = convolve(base, base, tail_budget * m / (64 * k), share * m / k, max_slices)
        target = h0 * 2 ** coarsening_level(m * weight, max_level)
        if target > base.h:
            base = to_grid(base, target)
    assert result is not None
    return result


def compose_laws(laws: list[GridLaw], tail_budget: float = TAIL_BUDGET) -> GridLaw:
    """Composition of laws on nested grids (the coarsest grid is used)."""
    h = max(law.h for law in laws)
    acc = to_grid(laws[0], h)
    for law in laws[1:]:
        acc = convolve(acc, to_grid(law, h), tail_budget / 64)
    return acc
