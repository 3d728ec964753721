"""A grid law: the Q-law of the privacy loss on the nodes {(offset + i) h} plus a mass at +inf,
with its error model (absolute slack, relative tail error, optimistic charges), and its profile
delta(eps) read soundly. The facts every bound rests on are in ``accountant.pld.grid``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from accountant.core.rounding import LIBM_REL
from accountant.core.types import FloatArray

MACHINE_EPSILON = float(np.finfo(np.float64).eps)


#: machine epsilon of numpy's long double (x87 extended on x86-64; double elsewhere, where the
#: bounds using it revert to double precision's)
EPS_EXT = float(np.finfo(np.longdouble).eps)


#: Q-mass below which a tail of a composed law is truncated (pessimistic: moved to +inf or up to
#: the lowest kept point; optimistic: dropped). Sound either way; this only sets the tightness.
TAIL_MASS = 1e-19


#: Total delta (roughly) that truncations of repeated squaring may move to +inf, split by level:
#: an absolute charge, so it stays far below the smallest delta read (1e-15). The PLD's default
#: laws use a larger budget for larger deltas (``accountant.pld.settings.LAW_BUDGETS``).
TAIL_BUDGET = 1e-19


#: Tail mass left out of the initial discretisation of a continuous mechanism.
SOURCE_TAIL = 1e-24


#: Absolute round-off (delta) that plain FFTs may add to one composition, in all (it is a floor on the delta
#: that can be certified, like TAIL_BUDGET; the PLD accountant's default laws use a larger one for larger
#: deltas, ``accountant.pld.settings.LAW_BUDGETS``). Products above their share are split (``_split_conv``).
ROUNDOFF_BUDGET = 1e-19


#: Longest convolution whose operands take a third slice when the remainder is above its budget
#: (``convolve``'s slicing; about 1.4x the cost of two slices): long sources used many times would
#: otherwise carry most of a law's absolute round-off slack.
REFINE_MAX_POINTS = 2 ** 20


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
    below its input's, ``optimistic_from_cells``) keep it.
    """

    h: float
    offset: int
    masses: FloatArray
    inf: float
    slack: float
    pessimistic: bool
    #: relative error bound: the exact masses m and the held ones satisfy |held - m| <= rel m + e entrywise
    #: (atom included), where every tail sum of e is at most ``slack``: |e([l, +inf])| <= slack at every l
    #: (|e|_1 <= slack implies it; a source's absolute charge, max_j TB_j of ``accountant.pld.laws.errors``,
    #: is only of this form). That is all the bounds need: delta errs by at most slack (Abel summation), and
    #: a convolution's e_a * b~ with b~ >= 0 has tail sums at most slack_a |b~|_1.
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
    #: profile-relative model and an absolute one (``optimistic_from_cells``)
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
        computed within u (|K_i h| + |shift| / 2) (u = MACHINE_EPSILON; the product and the sum round
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
        pos = self.lag + 1.01 * MACHINE_EPSILON * (abs(self.shift) + max(abs(self.offset), abs(k_top))
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
        r = sum_rounding(m.size + 2) + LIBM_REL + 2.0 * MACHINE_EPSILON
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
                                                 + 16.0 * MACHINE_EPSILON))
                else:
                    # raw >= (1 - rel - tail) delta - slack (module docstring, point 3); the
                    # sum, the difference and the quotient round within 2 u of the result
                    best = min(best, (raw + slack) / (1.0 - rel - tail) * (1.0 + 2.0 * MACHINE_EPSILON))
            return best
        return max(max(0.0, (raw - slack) / (1.0 + rel + tail) * (1.0 - 2.0 * MACHINE_EPSILON))
                   for slack, rel, tail in self.error_models)


def tail_l1(tail: float, n: int) -> float:
    """l1 bound of a tail-relative error on n grid points (and the two atoms, top and +inf): its
    entries are differences of consecutive tail sums, each at most ``tail`` (the exact law's mass
    is at most 1), so |e_t|_1 <= 2 tail (n + 2)."""
    return 2.0 * tail * (n + 2)


def sum_rounding(n: int) -> float:
    """Relative error bound of numpy's (pairwise) sum of n non-negative doubles, with margin."""
    return (math.log2(n + 1) + 16.0) * MACHINE_EPSILON
