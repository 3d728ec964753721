"""Variance and standard deviation on a data-adaptive interval, pure eps-DP under either adjacency.

Records are clipped into the public box [L, U]; the estimand is the variance of the clipped records.
Two stages (``AdaptiveVariance``):

1. Interval, eps_1 = ``interval_share`` * eps (``INTERVAL_SHARE``: 3/8 under replace-one, 1/4 under
   add/remove, by default): the thresholded noisy histogram of ``interval``
   (``occupied_interval``: K equal bins of [L, U], lattice Laplace noise of scale b, bins above
   ``threshold`` * b occupied, [lo, hi] their span widened each side by ``margin`` half-spans).
   The variance's sensitivity grows like the squared width, so data that live in a small part of
   [L, U] pay much less noise; data outside [lo, hi] are clipped into it (a bias the margin keeps
   small: it is what the threshold cannot see; a margin proportional to the span follows the tails'
   scale).
2. Moments, eps_2 = eps - eps_1. For a centre c in [lo, hi] and records clipped into [lo, hi]:
   S2 = sum (x - c)^2 and S1 = sum (x - c) (``centred.CentredSum``: Delta = max(|lo - c|, |hi - c|)^p
   under add/remove; hi - lo for S1 and max((lo - c)^2, (hi - c)^2) for S2 under replace-one) and, under
   add/remove only, the count N (Delta = 1; under replace-one N = n is public), each released by the
   lattice ``Laplace`` calibrated to PureDP(eps_2 w_i). The release is V = S2/N - (S1/N)^2 + 2 (b1/N)^2
   (b1: the S1 noise scale; E(S1 + L)^2 = S1^2 + 2 b1^2 for L ~ Lap(b1), so the last term removes the
   noise's bias) clamped into [0, ((hi - lo)/2)^2] (the largest variance of data in [lo, hi],
   Popoviciu), or sqrt(V).

Budget split. To first order V moves by dS2/N - 2 mu dS1/N - (V - mu^2) dN/N (mu = S1/N), so with
Laplace noise of scale Delta_i/eps_i the error variance is 2 sum (a_i/eps_i)^2 with a_i = Delta_i
|dV/dq_i|. Under sum eps_i = eps_2 it is least for eps_i proportional to a_i^(2/3) (Lagrange), where it
equals 2 (sum a_i^(2/3))^3/eps_2^2. The centre c (one of 33 points of [lo, hi]) and the split minimise
this with mu, V and N estimated from the occupied bins of the noisy histogram (post-processing). Shares
are rounded down to multiples of 1/64 (at least 1/64 each), so sum w_i <= 1 (``split_budget``).

Privacy. Stage 1 is eps_1-DP. Whatever stage 1 outputs, stage 2 is a composition of mechanisms meeting
PureDP(eps_2 w_i) with sum w_i <= 1, hence eps_2-DP, and eps_1 + eps_2 <= eps in exact arithmetic
(both rounded down). Adaptive composition [@dwork2014algorithmic, Thm 3.16] makes the whole eps-DP;
``guarantee()`` is ``accountant.compose`` of PureDP(eps_1) and PureDP(eps_2) (exact: tighter than
PureDP(eps) at delta > 0; its eps at delta = 0 is eps up to the numerics' upward rounding), and
``closed_form_guarantee()`` is PureDP(eps). Every noisy value is a
lattice release (float-safe); V and sqrt(V) are post-processing.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accountant import PureDP
from accountant.core.types import FloatArray

from ..base import Mechanism, OutputSpec
from ..centred import CentredSum
from ..domain import Adjacency, Domain
from ..noise import Laplace
from ..queries import Count
from .interval import (
    IntervalStage,
    candidate_centres,
    histogram_scale,
    occupied_interval,
    split_budget,
)
from .stability import check_eps

__all__ = ["AdaptiveVariance"]

Output = Literal["variance", "std"]
#: (lo, hi, centre, stage-2 budgets): what stage 2 is built from.
Plan = tuple[float, float, float, tuple[float, ...]]


#: The default ``interval_share`` of each adjacency. One record moves one histogram count by 1 under
#: add/remove and two counts under replace-one, so the stage-1 noise scale is b = 1/eps_1 or 2/eps_1,
#: and a bin holding m >= ``threshold`` * b records is missed (its noisy count at most ``threshold`` * b)
#: with probability exp(-(m/b - threshold))/2 (the Laplace tail); a missed point mass is clipped to the
#: interval's end. At eps = 1 and threshold 3.5 a bin of 50 records (a 5% point mass at n = 1e3) is
#: missed with probability 0.0014 at the replace-one share 3/8 (0.032 at 1/4) and 6e-5 at the
#: add/remove share 1/4. How the shares were chosen, on datasets other than the benchmark's: the
#: estimator measurements page, "Variance and standard deviation at both relations".
INTERVAL_SHARE: Mapping[Adjacency, float] = MappingProxyType({"replace": 0.375, "add_remove": 0.25})


@functools.lru_cache(maxsize=4096)
def _moments(lo: float, hi: float, n: int | None, adjacency: Adjacency, centre: float,
             eps: tuple[float, ...]) -> tuple[Laplace, ...]:
    """The lattice Laplace releases of S2, S1 (and N under add/remove) at budgets ``eps``."""
    domain = Domain(lo, hi, adjacency=adjacency, clip=True) if n is None else \
        Domain(lo, hi, n, adjacency=adjacency, clip=True)
    queries: list[Any] = [CentredSum(domain, centre, 2), CentredSum(domain, centre, 1)]
    if adjacency == "add_remove":
        queries.append(Count(domain))
    return tuple(Laplace.calibrated(q, PureDP(e)) for q, e in zip(queries, eps, strict=True))


@dataclass(frozen=True)
class AdaptiveVariance(IntervalStage, Mechanism):
    """Variance (or standard deviation) of records clipped into [lower, upper], eps-DP under
    ``adjacency``, on a private data-adaptive interval (module docstring).

    ``n``: the dataset size under ``"replace"`` (required), a public lower bound under
    ``"add_remove"`` (optional; the noisy count is raised to it). ``bins``: histogram bins of stage 1;
    ``interval_share``: the share of eps spent on them (None: ``INTERVAL_SHARE[adjacency]``, 3/8
    under replace-one, 1/4 under add/remove); ``threshold``: occupied means a noisy count above
    ``threshold`` noise scales; ``margin``: the widening each side, in half-spans of the occupied bins.
    ``bins``, ``threshold``, ``margin`` and the add/remove share were tuned on N(0, 1) and t_3 data in
    [-10, 10] at eps = 1; the replace-one share on those and a 5%-contaminated normal
    (``INTERVAL_SHARE``; ``benchmarks.estimators``).
    """

    lower: float
    upper: float
    eps: float
    adjacency: Adjacency = "replace"
    n: int | None = None
    bins: int = 20
    interval_share: float | None = None
    threshold: float = 3.5
    margin: float = 0.75
    output_kind: Output = "variance"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", check_eps(self.eps))
        self.check_interval_fields(INTERVAL_SHARE)
        if self.output_kind not in ("variance", "std"):
            raise ValueError(f"output_kind must be 'variance' or 'std', got {self.output_kind!r}")

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("continuous", (), f"a {self.output_kind} estimate in [0, ((upper - lower)/2)^2]")

    # ----- stage 1 post-processing -----------------------------------------------------------------
    def plan(self, counts: ArrayLike) -> Plan:
        """(lo, hi, centre, budgets of stage 2) from one row of noisy histogram counts: a function of
        the stage-1 output only."""
        h = np.asarray(counts, dtype=np.float64)
        return self._plan(h, histogram_scale(self.histogram), self.release_eps)

    def _plan(self, h: FloatArray, scale: float, eps2: float) -> Plan:
        lo, hi, occ = occupied_interval(h, scale, self.lower, self.upper, self.threshold, self.margin)
        width = (self.upper - self.lower) / self.bins
        w = h[occ] if occ.size else np.ones(1)
        mids = (self.lower + (occ + 0.5) * width) if occ.size else np.array([(lo + hi) / 2])
        total = float(w.sum())
        mean = float(np.dot(w, mids) / total)
        var = float(np.dot(w, (mids - mean) ** 2) / total) + width**2 / 12
        size = max(total, 1.0) if self.n is None else (float(self.n) if self.adjacency == "replace"
                                                         else max(total, float(self.n)))
        centres = candidate_centres(lo, hi)
        reach = np.maximum(centres - lo, hi - centres)
        a2 = reach**2
        offset = np.maximum(np.abs(mean - centres), width / 4)  # the histogram resolves the mean to ~width/4
        a1 = (reach if self.adjacency == "add_remove" else hi - lo) * 2 * offset
        parts = [a2, a1]
        if self.adjacency == "add_remove":
            parts.append(np.abs(var - (mean - centres) ** 2))
        powers = np.stack(parts) ** (2 / 3) / size ** (2 / 3)
        best = int(np.argmin(powers.sum(axis=0)))
        return lo, hi, float(centres[best]), split_budget(eps2, powers[:, best])

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        hist = self.histogram
        counts = np.asarray(hist.sample(data, rng, size=m), dtype=np.float64)
        scale, eps2 = histogram_scale(hist), self.release_eps
        plans = [self._plan(row, scale, eps2) for row in counts]
        out = np.empty(m, dtype=np.float64)
        groups: dict[Plan, list[int]] = {}
        for i, p in enumerate(plans):
            groups.setdefault(p, []).append(i)
        for (lo, hi, c, budgets), rows in groups.items():
            mechs = _moments(lo, hi, self.n, self.adjacency, c, budgets)
            k = len(rows)
            s2 = np.asarray(mechs[0].sample(data, rng, size=k), dtype=np.float64).reshape(k)
            s1 = np.asarray(mechs[1].sample(data, rng, size=k), dtype=np.float64).reshape(k)
            if self.adjacency == "add_remove":
                cnt = np.asarray(mechs[2].sample(data, rng, size=k), dtype=np.float64).reshape(k)
                size = np.maximum(cnt, float(self.n or 1))
            else:
                size = np.full(k, float(self.n or 1))
            # E[(S1 + L)^2] = S1^2 + 2 b^2 for Laplace noise L of scale b: subtract the noise's part
            b1 = float(mechs[1].scale)
            v = np.clip(s2 / size - (s1 / size) ** 2 + 2 * (b1 / size) ** 2, 0.0, ((hi - lo) / 2) ** 2)
            out[rows] = v
        return out if self.output_kind == "variance" else np.sqrt(out)
