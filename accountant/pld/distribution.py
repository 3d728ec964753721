""""""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, singledispatch

import numpy as np
from numpy.typing import ArrayLike

from accountant.core.hull import lower_convex_hull
from accountant.core.rounding import div_up
from accountant.core.search import smallest_epsilon
from accountant.core.types import MACHINE_EPSILON, FloatArray
from accountant.core.validation import check_count, check_real
from accountant.notions.guarantees import FDP, GDP, GUARANTEES, ApproxDP, Approximate, Guarantee, PureDP
from accountant.notions.tradeoff import PiecewiseLinearTradeoff, TradeoffFunction, as_tradeoff
from accountant.pld.grid.atoms import atom_quantum
from accountant.pld.grid.composition import coarsening_level, compose_laws, self_compose
from accountant.pld.grid.law import GridLaw
from accountant.pld.laplace_profile import LaplaceProfile, laplace_profile
from accountant.pld.laws.base import Direction, LossDirection
from accountant.pld.models.base import Pair, pair_from_spec, pair_to_spec
from accountant.pld.models.discrete import DiscreteGaussianPair, DiscreteLaplacePair
from accountant.pld.models.finite import (
    ApproxDPPair,
    RandomizedResponsePair,
    densities_pair,
    pmfs_pair,
    tradeoff_pair,
)
from accountant.pld.models.gaussian import GaussianDirection, GaussianPair
from accountant.pld.models.laplace import LaplacePair
from accountant.pld.readout import clip01, gdp_sensitivity, law_curve, lower_end
from accountant.pld.refinement import refined_lower
from accountant.pld.settings import (
    CUT_GAIN,
    DEFAULT_LAW_DELTA,
    DEFAULT_TOL,
    LADDER_TOP,
    LAW_BUDGETS,
    MAX_POINTS,
    OPTIMISTIC_REFINE,
    PESSIMISTIC_MORE,
    PRECISE_RATIO,
    PRECISE_SLICES,
    REFINED_MAX_POINTS,
    SCREEN_LEVELS,
    check_tol,
    grid_width,
    ladder_rung,
    law_budget,
    max_coarsening,
    rung_tol,
)


@dataclass(frozen=True, eq=False)
class PLD(Guarantee):
    """Privacy-loss distribution of a composition of mechanisms, with certified bounds.

    ``delta(eps)`` and ``epsilon(delta)`` are pessimistic (sound upper bounds covering both the remove and
    the add direction); ``delta_bracket``/``epsilon_bracket`` return (lower, upper) around the exact value;
    ``tradeoff`` is a sound lower bound on the composed f-DP curve. ``tol`` sets the grid, not a bound on
    the bracket's width: it is read at the nearest rung t of a ladder of tols a factor TOL_LADDER apart
    (``ladder_rung``), and the grid width h is chosen so that the discretisation error, about GRID_CONST *
    steps * h^2, is t (Gaussian pairs, composed exactly first, count as one step; a mechanism whose atoms
    sit on the nodes counts for its continuous Q-mass). The lower end spends the width tol leaves: it is
    read on finer optimistic laws only while the bracket is wider than tol (``_refined_lower``, both
    brackets; round-off is kept far below tol by the FFT's slicing). A small epsilon magnifies the grid's
    error (d eps / d(mu^2) of the mu-GDP curve through it): ``epsilon`` then refines its grid
    (``_pessimistic_finer``). At a tol read at or below the default's rung (tol <= 2 DEFAULT_TOL), every
    bound reported (``delta``, ``epsilon``, both brackets) is the tightest of the bounds at every rung from
    the default's down to t (``_rungs``; they share their laws; each rung's depend on the rung alone), so
    between two such tols the smaller never gives a wider bracket, a lower lower end or a higher upper end
    (exactly); coarser tols compute one grid and promise no nesting. Cost grows like 1/sqrt(tol); the
    widths measured (docs: measurements, accounting) are usually below tol, more where atoms or a pile of
    mass sit badly on the grid, or at deltas where the optimistic laws' round-off charges matter.
    """

    factors: tuple[tuple[Pair, int], ...]
    tol: float = DEFAULT_TOL

    def __post_init__(self) -> None:
        if not self.factors:
            raise ValueError("factors must contain at least one mechanism")
        for src, k in self.factors:
            if not isinstance(src, Pair):
                raise TypeError(f"factors must hold Pair objects, got {type(src).__name__}")
            check_count("composition count", k)
        check_tol(self.tol)

    # ----- constructors ----------------------------------------------------------------------
    @classmethod
    def from_pair(cls, pair: Pair, count: int = 1, tol: float = DEFAULT_TOL) -> PLD:
        """The PLD of ``count`` runs of the mechanism with this dominating pair."""
        return cls(((pair, count),), tol)

    @classmethod
    def gaussian(cls, sigma: float, sensitivity: float = 1.0, tol: float = DEFAULT_TOL) -> PLD:
        """Gaussian mechanism N(f(D), sigma^2) with L2 sensitivity Delta: mu = Delta / sigma."""
        s = check_real("sigma", sigma, low=0.0, low_open=True, high=math.inf, high_open=True)
        d = check_real("sensitivity", sensitivity, low=0.0, low_open=True, high=math.inf,
                       high_open=True)
        return cls.from_pair(GaussianPair(div_up(d, s)), tol=tol)

    @classmethod
    def laplace(cls, scale: float, sensitivity: float = 1.0, tol: float = DEFAULT_TOL) -> PLD:
        """Laplace mechanism Lap(f(D), b) with L1 sensitivity Delta: eps = Delta / b."""
        b = check_real("scale", scale, low=0.0, low_open=True, high=math.inf, high_open=True)
        d = check_real("sensitivity", sensitivity, low=0.0, low_open=True, high=math.inf,
                       high_open=True)
        return cls.from_pair(LaplacePair(div_up(d, b)), tol=tol)

    @classmethod
    def randomized_response(cls, eps: float, k: int = 2, tol: float = DEFAULT_TOL) -> PLD:
        """k-ary randomized response keeping the truth w.p. e^eps / (e^eps + k - 1)."""
        return cls.from_pair(RandomizedResponsePair(eps, k), tol=tol)

    @classmethod
    def discrete_laplace(cls, scale: float, sensitivity: int = 1, tol: float = DEFAULT_TOL) -> PLD:
        """Discrete Laplace: P(X = x) proportional to e^{-|x|/scale} on the integers, integer
        sensitivity [@canonne2020discrete, notation t = scale]."""
        return cls.from_pair(DiscreteLaplacePair(scale, sensitivity), tol=tol)

    @classmethod
    def discrete_gaussian(cls, sigma: float, sensitivity: int = 1,
                          tol: float = DEFAULT_TOL) -> PLD:
        """Discrete Gaussian: P(X = x) proportional to e^{-x^2/(2 sigma^2)} on the integers
        [@canonne2020discrete]; L = (2 x Delta - Delta^2)/(2 sigma^2) under Q = shift."""
        return cls.from_pair(DiscreteGaussianPair(sigma, sensitivity), tol=tol)

    @classmethod
    def from_pmfs(cls, p: ArrayLike, q: ArrayLike, tol: float = DEFAULT_TOL) -> PLD:
        """Any pair of pmfs on a common finite support: remove = (p, q), add = (q, p)."""
        return cls.from_pair(pmfs_pair(p, q), tol=tol)

    @classmethod
    def from_densities(cls, p: Callable[[FloatArray], ArrayLike],
                       q: Callable[[FloatArray], ArrayLike], grid: ArrayLike,
                       tol: float = DEFAULT_TOL) -> PLD:
        """A pair of densities on the real line, integrated on the cells of ``grid`` (Simpson).

        Pessimistic: each cell's Q-mass at the largest loss among its end and mid points (sound
        when the loss is monotone within each cell and the quadrature is accurate); Q-mass outside
        the grid at +inf. Optimistic: each cell merged into one outcome (a post-processing).
        """
        return cls.from_pair(densities_pair(p, q, grid), tol=tol)

    @classmethod
    def from_tradeoff(cls, f: TradeoffFunction | Callable[[FloatArray], ArrayLike],
                      tol: float = DEFAULT_TOL) -> PLD:
        """The PLD of the dominating pair of an f-DP guarantee (used for both directions).

        Closed forms are used for Gaussian and Laplace curves and knots for piecewise-linear ones;
        otherwise the pessimistic pair comes from the sound lower envelope of f and the optimistic
        pair from chords of f, which lie above it (f is convex).
        """
        return cls.from_pair(tradeoff_pair(as_tradeoff(f)), tol=tol)

    # ----- composition -----------------------------------------------------------------------
    def compose(self, *others: PLD) -> PLD:
        """Composition with other PLDs (equal mechanisms are grouped)."""
        return compose_plds([self, *others])

    def self_compose(self, k: int) -> PLD:
        """k-fold composition of this PLD with itself."""
        k = check_count("k", k)
        return PLD(tuple((s, check_count("composition count", c * k)) for s, c in self.factors),
                   self.tol)

    @property
    def steps(self) -> int:
        return sum(c for _, c in self.factors)

    @cached_property
    def _gaussian_mu2(self) -> float:
        """sum k mu^2 over the Gaussian pairs composed (0.0 when there are none)."""
        return math.fsum(c * s.mu * s.mu for s, c in self.factors if isinstance(s, GaussianPair))

    def _sources(self, direction: Direction, pessimistic: bool) -> list[tuple[LossDirection, int]]:
        """The loss directions to discretise, with how often each is composed. The Gaussian pairs
        are composed exactly first: runs of (N(0,1), N(mu_i,1)) compose to one Gaussian pair
        with mu = sqrt(sum mu_i^2) [@dong2022gaussian, Cor. 3.3], so they carry one
        discretisation error instead of one per copy. mu is rounded outward (its float error is
        below 3 ulp): up for a pessimistic law, down for an optimistic one (a larger mu
        dominates)."""
        out = [(s.direction(direction), c) for s, c in self.factors
               if not isinstance(s, GaussianPair)]
        if self._gaussian_mu2 > 0.0:
            mu = math.sqrt(self._gaussian_mu2)
            mu = (math.nextafter(mu * (1.0 + 2.0 * MACHINE_EPSILON), math.inf) if pessimistic
                  else math.nextafter(mu * (1.0 - 2.0 * MACHINE_EPSILON), 0.0))
            out.append((GaussianDirection(mu), 1))
        return out

    # ----- the grid --------------------------------------------------------------------------
    @cached_property
    def _span(self) -> float:
        """Widest support of a mechanism discretised (its tails cut as by any law)."""
        return self._span_cut(LAW_BUDGETS[True] / self.steps)

    def _span_cut(self, tail: float) -> float:
        """Widest support of a mechanism with tails of ``tail`` cut."""
        sources = [sd for d in self.directions for sd in self._sources(d, True)]
        return max(hi - lo for d, _ in sources for lo, hi in [d.support(tail)])

    @cached_property
    def _grid(self) -> tuple[float, int]:
        """(h, max_level): the grid width and the most coarsening levels (``_grid_plan``)."""
        h, max_level, _, _ = self._grid_plan
        return h, max_level

    @cached_property
    def _grid_plan(self) -> tuple[float, int, float, bool]:
        """(h, max_level, steps, aligned): the grid width, the most coarsening levels, the number
        of discretised steps the width was chosen for (``_pessimistic_finer`` reads it), and
        whether every atom sits on a node (``_step_weight``)."""
        # memory cap: no source's initial law needs more than MAX_POINTS points (coarser: looser)
        span = self._span

        def width(steps: float) -> float:
            return grid_width(steps, self._rung_tol, span)

        steps = float(sum(c for _, c in self._sources("remove", True)))
        h_target = width(steps)
        quantum = atom_quantum([a for s, _ in self.factors for d in _dirs(s) for a in d.atoms()])
        if quantum is not None:
            # atoms on nodes are discretised exactly: a step counts for its continuous Q-mass
            # (Laplace x100 at eps 0.1: 4.8 steps, not 100; randomized response: none)
            continuous = (sum(c * max(d.continuous_mass() for d in _dirs(s))
                              for s, c in self.factors if not isinstance(s, GaussianPair))
                          + (self._gaussian_mu2 > 0.0))
            aligned = width(continuous)
            if quantum >= aligned / 64:
                h_target, steps = aligned, continuous
        max_level = max_coarsening(h_target)
        if quantum is None or quantum < h_target / 64:
            return h_target, max_level, steps, False
        # the atoms stay on the nodes of every grid the laws are coarsened to (a screening law,
        # 2^SCREEN_LEVELS coarser, may lose them: it is only looser)
        levels = max(coarsening_level(c * d.continuous_mass(), max_level)
                     for r in self.directions for d, c in self._sources(r, True))
        # k a power of 2 (at least the target's): the rungs' aligned grids are nested too
        block = 2 ** levels
        k = block * 2 ** max(0, math.ceil(math.log2(quantum / (block * h_target)) - 1e-12))
        return quantum / k, max_level, steps, True

    def _step_weight(self, d: LossDirection) -> float:
        """Discretised steps one copy of d stands for: its continuous Q-mass when the grid is
        aligned with the atoms (they are discretised exactly), else 1 (``coarsening_level``)."""
        return d.continuous_mass() if self._grid_plan[3] else 1.0

    @property
    def directions(self) -> tuple[Direction, ...]:
        if all(s.symmetric for s, _ in self.factors):
            return ("remove",)
        return ("remove", "add")

    def law(self, direction: Direction = "remove", pessimistic: bool = True,
            coarse: bool = False, precise: bool = False, finer: int = 0) -> GridLaw:
        """The composed grid law of one direction (cached); ``coarse`` uses a grid 2^SCREEN_LEVELS
        wider (a cheaper bound, used to screen out a direction that does not attain the maximum;
        2^finer finer with ``finer``); ``precise`` splits FFT operands into up to PRECISE_SLICES
        slices, for deltas so small that the round-off charge of the default law would matter
        (``_precision``, ``_optimistic``); ``finer`` halves an optimistic law's grid that many more times
        (``epsilon_bracket``; only while its sources fit in MAX_POINTS, ``_optimistic_grid``), a
        pessimistic law's that many times (``epsilon``, sized by ``_pessimistic_finer``)."""
        # keyed by the grid itself: the rungs of the ladder share the laws (``_rungs``)
        cache: dict[tuple[str, bool, bool, bool, float, int, bool, int, float], GridLaw] = (
            self.__dict__.setdefault("_law_cache", {}))
        (h, max_level), source = self._grid, 1  # source: read coarser (``_optimistic_grid``)
        if coarse:
            h, max_level = 2 ** (SCREEN_LEVELS - finer) * h, max_level - SCREEN_LEVELS + finer
        elif not pessimistic:
            refine, source = self._optimistic_grid(finer, precise)
            h, max_level = h / refine, max_level + refine.bit_length() - 1
        else:
            h, max_level = h / 2 ** finer, max_level + finer
        budget: float = (LAW_BUDGETS[True] if precise or coarse
                         else self.__dict__.get("_cut", LAW_BUDGETS[False]))
        key = (direction, pessimistic, coarse, precise, h, max_level, self._grid_plan[3], source, budget)
        if key not in cache:
            # a tail cut from each of the n mechanisms adds at most n * tail to delta; the coarse
            # screening laws are cheap and serve every delta
            tail = budget / self.steps
            sources = self._sources(direction, pessimistic)
            # the laws are composed on the coarsest of their final grids (``self_compose`` ends on
            # h 2^coarsening_level of its steps); a mechanism run once is discretised on it
            # directly (one discretisation error instead of two, and a shorter source); sources
            # read coarser keep the plan counted from h (the same grids once past their width)
            coarsest = h * 2 ** max(coarsening_level(c * self._step_weight(d), max_level)
                                    for d, c in sources)
            slices = PRECISE_SLICES if key[3] else 3
            laws = [self_compose(d.discretize(max(coarsest if c == 1 else h, h * source), pessimistic, tail),
                                 c, max_level, slices, budget, budget, self._step_weight(d), plan=h)
                    for d, c in sources]
            cache[key] = compose_laws(laws, budget)
        return cache[key]

    # ----- Guarantee interface ---------------------------------------------------------------
    def _direction_delta(self, d: Direction, eps: float, precise: bool = False,
                         finer: int = 0) -> float:
        """A sound upper bound on the delta(eps) of direction d. The "add" directions are first
        bounded on a coarse grid; the fine law is built only when that bound exceeds the "remove"
        value, and then the smaller of the two (both are upper bounds) is used, so that the result
        never exceeds the coarse bound (``epsilon`` relies on it). ``finer``: the laws on a grid
        2^finer finer (``law``)."""
        if d == "remove":
            return self.law(d, precise=precise, finer=finer).delta(eps)
        coarse = (self.law(d, coarse=True, finer=finer).delta(eps)
                  if self._grid[1] + finer >= SCREEN_LEVELS else math.inf)
        if coarse <= self.law("remove", precise=precise, finer=finer).delta(eps):
            return coarse
        return min(coarse, self.law(d, precise=precise, finer=finer).delta(eps))

    def _precision(self, delta: float) -> bool:
        """Whether a delta this small needs the precise laws: it is below DEFAULT_LAW_DELTA (the
        default laws' tail cuts) or the "remove" law's smallest absolute round-off charge exceeds
        PRECISE_RATIO * delta (both kinds of law are sound)."""
        if delta < DEFAULT_LAW_DELTA:
            return True
        slack = min(s for s, _, _ in self.law("remove").error_models)
        return slack > PRECISE_RATIO * delta

    def _serving(self, delta: float) -> PLD:
        """This PLD with the default laws of ``epsilon`` at delta, cutting ``law_budget(delta, tol)``
        (the same grid and law cache), where that narrows the widest source by CUT_GAIN at least;
        else itself (a finite pair's support does not depend on the cut: one set of laws)."""
        cut, views = law_budget(delta, self._rung_tol), self.__dict__.setdefault("_views", {})
        if cut not in views:
            own = self.__dict__.get("_cut", LAW_BUDGETS[False])
            views[cut] = view = self
            if cut != own and self._span_cut(cut / self.steps) < (1 - CUT_GAIN) * self._span_cut(
                    own / self.steps):
                views[cut] = view = PLD(self.factors, self.tol)
                kept = {k: v for k, v in self.__dict__.items() if k not in ("_views", "_rungs")}
                view.__dict__.update(kept, _cut=cut, _law_cache=self.__dict__.setdefault("_law_cache", {}))
        return views[cut]  # type: ignore[no-any-return]

    def _rung_delta(self, eps: float) -> float:
        """delta(eps) on this PLD's own grid (a sound upper bound)."""
        value = max(self._direction_delta(d, eps) for d in self.directions)
        if value > 0.0 and self._precision(value):
            value = max(self._direction_delta(d, eps, True) for d in self.directions)
        return value

    def _rung_epsilon(self, delta: float) -> float:
        """Smallest eps >= 0 with delta(eps) <= delta on this PLD's own grid, rounded up
        (``math.inf`` if none): the largest of the directions' epsilons (delta(eps) is their
        profiles' maximum). Where the grid's error, magnified by a small epsilon's sensitivity
        (``_pessimistic_finer``), would exceed the rung's tol, it is solved again on a finer grid
        and the smaller of the two (both are upper bounds) is returned."""
        if (view := self._serving(delta)) is not self:
            return view._rung_epsilon(delta)
        precise = self._precision(delta)
        if delta < self._rung_delta_at_infinity(precise):
            return math.inf
        best = self._epsilon_on(delta, precise)
        finer = self._pessimistic_finer(best, delta, precise)
        return min(best, self._epsilon_on(delta, precise, finer)) if finer else best

    def _epsilon_on(self, delta: float, precise: bool, finer: int = 0) -> float:
        """``epsilon`` on the pessimistic laws 2^finer finer: the "remove" direction is solved
        first; another direction is solved on its fine grid only when its coarse bound at that
        epsilon exceeds delta (otherwise its epsilon is no larger)."""
        best = smallest_epsilon(
            lambda e: clip01(self.law("remove", precise=precise, finer=finer).delta(e)), delta)
        for d in self.directions[1:]:
            if math.isinf(best):
                break
            if (self._grid[1] + finer >= SCREEN_LEVELS
                    and self.law(d, coarse=True, finer=finer).delta(best) <= delta):
                continue

            def profile(e: float, d: Direction = d) -> float:
                return clip01(self._direction_delta(d, e, precise, finer))

            best = max(best, smallest_epsilon(profile, delta, eps_low=best))
        return best

    def _pessimistic_finer(self, eps: float, delta: float, precise: bool) -> int:
        """How many times ``epsilon`` halves the pessimistic grid at (eps, delta). The grid's
        error is about a variance: connect-the-dots keeps each cell's P- and Q-mass and spreads
        its loss, adding about h^2 / 6 per discretised step to the variance of the composed loss
        (a Gaussian-like composition mu-GDP then reads as sqrt(mu^2 + steps h^2 / 6)-GDP). GRID_CONST
        sizes h for an epsilon that moves about as much as that variance; a small epsilon moves
        far more: d eps / d(mu^2) of the mu-GDP curve through (eps, delta) (``gdp_sensitivity``)
        was 0.16-0.19 of the upper bound's excess over steps h^2 on Poisson-subsampled Gaussians
        (sigma 0.8-1, q 1e-4-1e-3, T 1e3-1e4, eps 0.01-0.8, where it is 9-310; sigma 0.6:
        0.05-0.09), e.g. sigma 1, q 1e-4, T 1e3: eps 0.0112 and an excess of 1.1e-3, 38 tol. Where
        that estimate exceeds tol, the grid is halved until it is below tol / 2, at most
        PESSIMISTIC_MORE times, and while the sources fit in MAX_POINTS and the composed law in
        REFINED_MAX_POINTS. Any grid is sound: this only sets the tightness and the time."""
        h, _, steps, _ = self._grid_plan
        if not (steps > 0.0 and 0.0 < eps < math.inf and 0.0 < delta < 1.0):
            return 0
        excess = gdp_sensitivity(eps, delta) * steps * h * h / 6.0
        if not excess > self._rung_tol:
            return 0
        span = self._span_cut(LAW_BUDGETS[precise] / self.steps)
        size = self.law("remove", precise=precise).masses.size
        finer = 0
        while excess / 4 ** finer > self._rung_tol / 2 and finer < PESSIMISTIC_MORE:
            more = 2 ** (finer + 1)
            if span * more > MAX_POINTS * h or size * more > REFINED_MAX_POINTS:
                break
            finer += 1
        return finer

    def _worst_direction(self, eps: float) -> Direction:
        worst: Direction = "remove"
        value = self.law("remove").delta(eps)
        for d in self.directions[1:]:
            v = self._direction_delta(d, eps)
            if v > value:
                worst, value = d, v
        return worst

    def _rung_delta_at_infinity(self, precise: bool = False) -> float:
        # above the support only the atom at +inf counts, and no slack (``GridLaw.delta``); the
        # default laws' atom holds their tail cuts
        return min(1.0, max(self._direction_delta(d, math.inf, precise) for d in self.directions))

    def _optimistic_grid(self, finer: int, precise: bool = False) -> tuple[int, int]:
        """(refine, source): an optimistic law's grid is ``refine`` times finer than the pessimistic one, its
        sources read ``source`` times coarser. finer < 0: (1, 2^-finer); else OPTIMISTIC_REFINE if the
        sources fit in MAX_POINTS with the precise (widest) cuts, then 2^finer more if they fit."""
        if finer < 0:
            return 1, 2 ** -finer
        h = self._grid[0]
        if self._span * OPTIMISTIC_REFINE > MAX_POINTS * h:
            return 1, 1
        span = self._span_cut(LAW_BUDGETS[precise] / self.steps)
        refine = OPTIMISTIC_REFINE
        for _ in range(finer):
            if span * refine * 2 > MAX_POINTS * h:
                break
            refine *= 2
        return refine, 1

    def _optimistic(self, direction: Direction, delta: float, finer: int = 0) -> GridLaw:
        """The optimistic law of a direction for a bracket at delta: the precise one below
        DEFAULT_LAW_DELTA or when the default law's smallest absolute round-off charge exceeds
        PRECISE_RATIO * delta (both are sound)."""
        if delta < DEFAULT_LAW_DELTA:
            return self.law(direction, pessimistic=False, precise=True, finer=finer)
        opt = self.law(direction, pessimistic=False, finer=finer)
        if min(s for s, _, _ in opt.error_models) > PRECISE_RATIO * delta:
            opt = self.law(direction, pessimistic=False, precise=True, finer=finer)
        return opt

    def _rung_delta_bracket(self, eps: float) -> tuple[float, float]:
        """(lower, upper) bounds on the exact delta(eps) on this PLD's own grid; upper is
        ``_rung_delta(eps)``, the lower end read on optimistic laws refined while the bracket is
        wider than the rung's tol (``_refined_lower``; the laws' precision set by upper)."""
        upper = self._rung_delta(eps)
        if upper == 0.0:
            return 0.0, 0.0
        worst = self._worst_direction(eps)
        return self._refined_lower(worst, upper, lambda law: law.delta(eps), upper), upper

    def _rung_epsilon_bracket(self, delta: float) -> tuple[float, float]:
        """(lower, upper) bounds on the exact epsilon(delta) on this PLD's own grid; upper is
        ``_rung_epsilon(delta)``, the lower end read on optimistic laws refined while the bracket is
        wider than the rung's tol (``_refined_lower``; sigma 0.8, q 1e-4, T 1e3: 3.6 tol on the base
        grid, 0.48 on the grid 4x finer)."""
        if (view := self._serving(delta)) is not self:
            return view._rung_epsilon_bracket(delta)
        upper = self._rung_epsilon(delta)
        if upper == math.inf:
            opt = self._optimistic(self._worst_direction(math.inf), delta)
            lower = smallest_epsilon(opt.delta, delta) if opt.inf <= delta else math.inf
            return lower_end(opt, delta, lower), upper
        worst = self._worst_direction(upper)
        return self._refined_lower(worst, delta, lambda law: lower_end(law, delta, upper), upper), upper

    def _refined_lower(self, worst: Direction, delta: float, read: Callable[[GridLaw], float],
                       upper: float) -> float:
        """The lower end ``read`` on the optimistic laws of direction ``worst`` for a bracket at
        ``delta`` (``_optimistic``), from the cheapest (sources 2^OPTIMISTIC_COARSER coarser) to ones
        up to 2^OPTIMISTIC_MORE finer than the pessimistic grid while the bracket is wider than the
        rung's tol (``refined_lower``; the rung's tol: the same brackets in every ladder), within
        MAX_POINTS for the sources and REFINED_MAX_POINTS for the composed law."""
        precise = delta < DEFAULT_LAW_DELTA

        def fits(finer: int) -> bool:  # the pessimistic law is read only here
            size = self.law(worst, precise=precise).masses.size
            return self._optimistic_grid(finer, precise)[0] * size <= REFINED_MAX_POINTS

        return refined_lower(lambda level: read(self._optimistic(worst, delta, level)),
                             lambda level: self._optimistic_grid(level, precise), fits, upper,
                             self._rung_tol)

    # ----- the exact k-fold Laplace profile --------------------------------------------------
    @cached_property
    def _laplace_profile(self) -> LaplaceProfile | None:
        """The exact profile of one Laplace pair composed with itself (``laplace_profile``): it
        answers every query it serves (``LaplaceProfile.serves``: by delta, never by tol)."""
        return laplace_profile(self.factors)

    # ----- the ladder of tols ----------------------------------------------------------------
    @cached_property
    def _rung_tol(self) -> float:
        """The tol the grid is set by: the largest rung of the ladder at most tol (``ladder_rung``)."""
        return rung_tol(ladder_rung(self.tol))

    @cached_property
    def _rungs(self) -> tuple[PLD, ...]:
        """Below the default's rung (``LADDER_TOP``), the PLDs of the same mechanisms at every rung
        from the default's down to this one's (this PLD last), sharing one law cache (a law is keyed
        by its grid, and grids recur across rungs); at or above it, this PLD alone. So the bounds
        at a tol finer than the default are the tightest over the rungs down to it and a smaller
        tol never widens them, while the default and coarser tols (calibration's searches) pay for
        one grid only."""
        cache = self.__dict__.setdefault("_law_cache", {})
        rungs = []
        rung = ladder_rung(self.tol)
        for j in range(min(rung, LADDER_TOP), rung):
            p = PLD(self.factors, rung_tol(j))
            p.__dict__["_law_cache"] = cache
            rungs.append(p)
        return (*rungs, self)

    def _delta(self, eps: float) -> float:
        """delta(eps): the smallest of the rungs' upper bounds (each is one)."""
        if (profile := self._laplace_profile) is not None and profile.serves():
            return profile.delta_bounds(eps)[1]
        return min(p._rung_delta(eps) for p in self._rungs)

    def _delta_at_infinity(self) -> float:
        return min(p._rung_delta_at_infinity() for p in self._rungs)

    def epsilon(self, delta: float) -> float:
        """Smallest eps >= 0 with delta(eps) <= delta, rounded up (``math.inf`` if none): the
        smallest of the rungs' upper bounds (``_rung_epsilon``; each is one), so at or below the
        default's rung a smaller tol never gives a larger value."""
        delta = check_real("delta", delta, low=0.0, high=1.0)
        if (profile := self._laplace_profile) is not None and profile.serves(delta):
            return profile.epsilon(delta)
        return min(p._rung_epsilon(delta) for p in self._rungs)

    def delta_bracket(self, eps: float) -> tuple[float, float]:
        """(lower, upper) bounds on the exact delta(eps) of the composition: the intersection of
        the rungs' brackets (each holds the exact value), so between tols at or below the default's
        rung a smaller tol never gives a lower lower end or a higher upper end."""
        eps = check_real("eps", eps)
        if (profile := self._laplace_profile) is not None and profile.serves():
            return profile.delta_bounds(eps)
        ends = [p._rung_delta_bracket(eps) for p in self._rungs]
        return max(lo for lo, _ in ends), min(up for _, up in ends)

    def epsilon_bracket(self, delta: float) -> tuple[float, float]:
        """(lower, upper) bounds on the exact epsilon(delta); upper is ``epsilon(delta)``: the
        intersection of the rungs' brackets (``_rung_epsilon_bracket``; each holds the exact
        value), so between tols at or below the default's rung a smaller tol never gives a lower
        lower end or a higher upper end. Its width is not bounded by tol: tol sets the grid."""
        delta = check_real("delta", delta, low=0.0, high=1.0)
        if (profile := self._laplace_profile) is not None and profile.serves(delta):
            return profile.epsilon_bracket(delta)
        ends = [p._rung_epsilon_bracket(delta) for p in self._rungs]
        return max(lo for lo, _ in ends), min(up for _, up in ends)

    @cached_property
    def tradeoff(self) -> PiecewiseLinearTradeoff:
        """A sound lower bound on the composed trade-off curve: the pessimistic pair's exact curve
        (lowered by the numerical slack), taking the lower convex envelope over both directions."""
        curves = [law_curve(self.law(d)) for d in self.directions]
        if len(curves) == 1:
            return curves[0]
        xs = np.concatenate([c.alphas for c in curves])
        ys = np.concatenate([c.betas for c in curves])
        order = np.lexsort((ys, xs))
        hx, hy = lower_convex_hull(xs[order], ys[order])
        return PiecewiseLinearTradeoff(hx, np.minimum(hy, 1.0 - hx))

    def to_fdp(self) -> FDP:
        """The composed guarantee as f-DP (a sound lower bound on the curve)."""
        return FDP(self.tradeoff)

    def __str__(self) -> str:
        parts = ", ".join(f"{s!r} x{c}" for s, c in self.factors)
        return f"PLD[{parts}]"

    __repr__ = __str__


def _dirs(s: Pair) -> tuple[LossDirection, ...]:
    return (s.remove,) if s.add is None else (s.remove, s.add)


@singledispatch
def pld_from_guarantee(g: Guarantee, tol: float = DEFAULT_TOL) -> PLD:
    """The PLD of a guarantee's dominating pair (GDP -> Gaussian, (eps, delta)-DP -> randomized
    response with an atom at infinity, f-DP -> the pair of f; other notions via their curve)."""
    if not isinstance(g, Guarantee):
        raise TypeError(f"expected an accountant guarantee, got {type(g).__name__}")
    if isinstance(g, Approximate):
        raise TypeError(g.refusal())
    return PLD.from_tradeoff(g.tradeoff, tol=tol)


@pld_from_guarantee.register
def _(g: PLD, tol: float = DEFAULT_TOL) -> PLD:
    return g


@pld_from_guarantee.register
def _(g: GDP, tol: float = DEFAULT_TOL) -> PLD:
    if isinstance(g, Approximate):  # a CLTGDP
        raise TypeError(g.refusal())
    return PLD.from_pair(GaussianPair(g.mu), tol=tol)


@pld_from_guarantee.register
def _(g: PureDP, tol: float = DEFAULT_TOL) -> PLD:
    return PLD.from_pair(ApproxDPPair(g.eps, 0.0), tol=tol)


@pld_from_guarantee.register
def _(g: ApproxDP, tol: float = DEFAULT_TOL) -> PLD:
    return PLD.from_pair(ApproxDPPair(g.eps, g.delta_), tol=tol)


def compose_plds(items: Sequence[Guarantee], tol: float | None = None) -> PLD:
    """Compose guarantees as PLDs; equal mechanisms are grouped (repeated squaring). ``tol`` is the
    target bracket width (see ``PLD``); by default the smallest of the PLDs composed."""
    # [g] * T repeats one object: count objects by identity first (C speed), convert each once
    by_id = dict(zip(map(id, items), items, strict=True))
    multiplicity: Mapping[int, int] = ({next(iter(by_id)): len(items)} if len(by_id) == 1
                                       else Counter(map(id, items)))
    plds = [(pld_from_guarantee(g), multiplicity[k]) for k, g in by_id.items()]
    counts: Counter[Pair] = Counter()
    order: list[Pair] = []
    for p, mult in plds:
        for s, c in p.factors:
            if s not in counts:
                order.append(s)
            counts[s] += c * mult
    t = min(p.tol for p, _ in plds) if tol is None else check_tol(tol)
    return PLD(tuple((s, counts[s]) for s in order), t)


GUARANTEES.register(
    PLD,
    encode=lambda g: {"tol": g.tol, "factors": [[pair_to_spec(s), c] for s, c in g.factors]},
    decode=lambda d: PLD(tuple((pair_from_spec(s), c) for s, c in d["factors"]), d["tol"]))
