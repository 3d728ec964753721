"""The mean of records clipped to a private data-adaptive interval, pure eps-DP under either adjacency.

Two stages (``AdaptiveMean``), for records in the public box [L, U]:

1. Interval, eps_1 = ``interval_share`` * eps: the thresholded noisy histogram of ``interval``
   (``occupied_interval``: K equal bins of [L, U], lattice Laplace noise of scale b = Delta_1/eps_1,
   Delta_1 = 2 under replace-one and 1 under add/remove, bins above ``threshold`` * b occupied,
   [lo, hi] their span widened each side by ``margin`` half-spans, all of [L, U] when no bin is
   occupied).
2. Mean, eps_2 = eps - eps_1, on the records clipped into [lo, hi], by ``Staircase`` noise (the
   pure-DP additive noise of least variance; lattice release, exact integer sampler):

   - replace-one (n public): the mean itself (``queries.Mean`` on ``Domain(lo, hi, n, clip=True)``,
     L1 sensitivity (hi - lo)/n, derived in sympy), PureDP(eps_r), eps_r <= eps_2;
   - add/remove (n private): a centred sum S = sum (x - c) (``centred.CentredSum``, sensitivity
     max(c - lo, hi - c)) and the count N (``queries.Count``, sensitivity 1), released at budgets
     eps_S + eps_N <= eps_2, and the estimate c + S/max(N, n_0) clamped into [lo, hi]
     (post-processing; n_0 the public lower bound ``n``, else 1). To first order the estimate moves
     by dS/N - (mu - c) dN/N (mu the clipped mean), so with a_S = max(c - lo, hi - c) and
     a_N = |mu - c| the noise variance is about 2 (a_S/eps_S)^2/N^2 + 2 (a_N/eps_N)^2/N^2, least at
     eps_i proportional to a_i^(2/3) (``split_budget``) where it is 2 (a_S^(2/3) + a_N^(2/3))^3/
     (eps_2 N)^2. The centre c (one of ``candidate_centres(lo, hi)``) and the split minimise this
     with mu estimated from the occupied bins of the noisy histogram (post-processing); |mu - c| is
     floored at a quarter bin, the resolution of that estimate.

Privacy. Stage 1 is eps_1-DP; whatever it outputs, stage 2 is eps_2-DP (under add/remove a
composition of PureDP(eps_S) and PureDP(eps_N), eps_S + eps_N <= eps_2 in exact arithmetic), and
eps_1 + eps_2 <= eps in exact arithmetic (both rounded down); adaptive composition
[@dwork2014algorithmic, Thm 3.16] makes the whole eps-DP. ``guarantee()`` is ``accountant.compose``
of PureDP(eps_1) and PureDP(eps_2), ``closed_form_guarantee()`` PureDP(eps). Every noisy value is a
lattice release (float-safe); the interval, the centre, the split and the division are
post-processing of noisy values.

Accuracy. Under replace-one the noise standard deviation is about sqrt(0.959 * 2) (hi - lo)/(n eps_2)
at eps_2 near 1, against sqrt(0.959 * 2) (U - L)/(n eps) for the staircase mean on the whole box: a
gain when (hi - lo)/(U - L) < 1 - ``interval_share``. Under add/remove, with c near mu, about
sqrt(2) (hi - lo)/(2 n eps_2): a centred sum on [lo, hi] against the centred sum on [L, U] at eps/2
and a count at eps/2 of the usual release (noisy sum over noisy count). The price is a clipping
bias: records beyond [lo, hi] move to its ends, by E[(X - hi)_+] - E[(lo - X)_+] in expectation. It
cancels for a law symmetric about the interval's centre, is small when the margin covers the tails the
threshold cannot see (the threshold hides bins of fewer than ``threshold`` * b records), and is zero
for a point mass that clears the threshold (its bin is occupied, so it stays inside). The estimand is
the mean of the records clipped into [L, U].
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accountant.core.types import FloatArray
from accountant.core.validation import check_real

from ..base import Mechanism, OutputSpec
from ..centred import CentredSum
from ..domain import Adjacency, Domain
from ..noise import Staircase
from ..queries import Count, Mean
from .interval import IntervalStage, candidate_centres, histogram_scale, occupied_interval, split_budget
from .stability import check_eps

__all__ = ["AdaptiveMean"]

#: (lo, hi, centre, (eps_S, eps_N)): what the add/remove stage 2 is built from.
Plan = tuple[float, float, float, tuple[float, ...]]


@functools.lru_cache(maxsize=4096)
def _release(lo: float, hi: float, n: int, eps: float) -> Staircase:
    """Stage 2 under replace-one: the staircase release of the mean of n records clipped into [lo, hi]."""
    return Staircase(Mean(Domain(lo, hi, n, clip=True)), eps)


@functools.lru_cache(maxsize=4096)
def _sum_and_count(lo: float, hi: float, n: int | None, centre: float,
                   eps: tuple[float, ...]) -> tuple[Staircase, Staircase]:
    """Stage 2 under add/remove: the staircase releases of sum (x - centre) over the records clipped
    into [lo, hi] and of their count, at budgets ``eps`` = (eps_S, eps_N)."""
    domain = Domain(lo, hi, adjacency="add_remove", clip=True) if n is None else \
        Domain(lo, hi, n, adjacency="add_remove", clip=True)
    return Staircase(CentredSum(domain, centre, 1), eps[0]), Staircase(Count(domain), eps[1])


@dataclass(frozen=True)
class AdaptiveMean(IntervalStage, Mechanism):
    """Mean of records clipped into [lower, upper], eps-DP under ``adjacency``, released on a private
    data-adaptive interval with staircase noise (module docstring).

    ``n``: the dataset size under ``"replace"`` (required), a public lower bound under
    ``"add_remove"`` (optional; the noisy count is raised to it). ``bins``: histogram bins of stage 1;
    ``interval_share``: the share of eps spent on them; ``threshold``: occupied means a noisy count
    above ``threshold`` noise scales; ``margin``: the widening each side, in half-spans of the occupied
    bins. Defaults: the least worst-case RMSE ratio to the staircase mean on the whole box over N(0, 1),
    t_3 and a 5%-contaminated normal (atom at 10) in [-10, 10], n = 1e3 and 1e4, eps = 1, replace-one,
    among the 10 settings tried (``docs/measurements/estimators.md``); used unchanged under add/remove.
    """

    lower: float
    upper: float
    eps: float
    n: int | None = None
    bins: int = 20
    interval_share: float = 0.4
    threshold: float = 3.5
    margin: float = 0.25
    adjacency: Adjacency = "replace"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", check_real("eps", check_eps(self.eps), low=2.0**-18, high=64.0))
        self.check_interval_fields()

    @property
    def output(self) -> OutputSpec:
        if self.adjacency == "replace":
            return OutputSpec("continuous", (), "a mean estimate on the lattice of the stage-2 release")
        return OutputSpec("continuous", (), "a mean estimate in [lower, upper]: c + S/max(N, n_0)")

    # ----- stages ----------------------------------------------------------------------------------
    def interval(self, counts: ArrayLike) -> tuple[float, float]:
        """[lo, hi] from one row of noisy histogram counts: a function of the stage-1 output only."""
        h = np.asarray(counts, dtype=np.float64)
        lo, hi, _ = occupied_interval(h, histogram_scale(self.histogram), self.lower, self.upper,
                                      self.threshold, self.margin)
        return lo, hi

    def release(self, lo: float, hi: float) -> Staircase:
        """The replace-one stage-2 mechanism for the interval [lo, hi] (PureDP(eps_r), eps_r <= eps_2)."""
        if self.adjacency != "replace" or self.n is None:
            raise ValueError("release(lo, hi) is the replace-one stage 2; under add/remove use plan() "
                             "and sum_and_count()")
        return _release(lo, hi, self.n, self.release_eps)

    def plan(self, counts: ArrayLike) -> Plan:
        """Add/remove: (lo, hi, centre, (eps_S, eps_N)) from one row of noisy histogram counts, a
        function of the stage-1 output only (module docstring)."""
        h = np.asarray(counts, dtype=np.float64)
        return self._plan(h, histogram_scale(self.histogram))

    def _plan(self, h: FloatArray, scale: float) -> Plan:
        lo, hi, occ = occupied_interval(h, scale, self.lower, self.upper, self.threshold, self.margin)
        width = (self.upper - self.lower) / self.bins
        if occ.size:
            mids = self.lower + (occ + 0.5) * width
            mean = float(np.dot(h[occ], mids) / h[occ].sum())
        else:
            mean = (lo + hi) / 2
        centres = candidate_centres(lo, hi)
        a_s = np.maximum(centres - lo, hi - centres)
        a_n = np.maximum(np.abs(mean - centres), width / 4)
        powers = np.stack([a_s, a_n]) ** (2 / 3)
        best = int(np.argmin(powers.sum(axis=0)))
        return lo, hi, float(centres[best]), split_budget(self.release_eps, powers[:, best])

    def sum_and_count(self, plan: Plan) -> tuple[Staircase, Staircase]:
        """Add/remove: the stage-2 releases of the centred sum and the count for a ``plan``."""
        lo, hi, centre, budgets = plan
        return _sum_and_count(lo, hi, self.n, centre, budgets)

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        counts = np.asarray(self.histogram.sample(data, rng, size=m), dtype=np.float64).reshape(m, -1)
        out = np.empty(m, dtype=np.float64)
        if self.adjacency == "replace":
            groups: dict[tuple[float, float], list[int]] = {}
            for i, row in enumerate(counts):
                groups.setdefault(self.interval(row), []).append(i)
            for (lo, hi), rows in groups.items():
                out[rows] = np.asarray(self.release(lo, hi).sample(data, rng, size=len(rows)),
                                       dtype=np.float64).reshape(len(rows))
            return out
        scale = histogram_scale(self.histogram)
        plans: dict[Plan, list[int]] = {}
        for i, row in enumerate(counts):
            plans.setdefault(self._plan(row, scale), []).append(i)
        floor = float(self.n or 1)
        for p, rows in plans.items():
            k = len(rows)
            s_mech, n_mech = self.sum_and_count(p)
            s = np.asarray(s_mech.sample(data, rng, size=k), dtype=np.float64).reshape(k)
            cnt = np.asarray(n_mech.sample(data, rng, size=k), dtype=np.float64).reshape(k)
            out[rows] = np.clip(p[2] + s / np.maximum(cnt, floor), p[0], p[1])
        return out
