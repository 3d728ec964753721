"""Privacy amplification by subsampling, on dominating pairs.

If (P, Q) dominates a mechanism, the subsampled mechanism with rate r is dominated by the pair
(P, (1-r)P + rQ) in one direction and ((1-r)P + rQ, P) in the other:
- Poisson subsampling with add/remove adjacency [@balle2018subsampling;
  @zhu2022optimal, Thm 11]: "remove" is (P, mix) and "add" is (mix, P). The neighbouring datasets are the
  same in every step of a composition, so each direction composes on its own.
- Sampling without replacement (m of n, r = m/n) with replace-one adjacency: one step is
  C_r(f)-DP with C_r(f) = min{f_r, f_r^{-1}}** and f_r = r f + (1-r) Id [@dong2022gaussian,
  Thm 4.2]. Here a pipeline may realise the remove direction in one step and the add direction in
  the next, so the two directions must NOT be composed apart: the step is described by the single
  symmetric pair of C_r(f), which composes soundly in any order [@dong2022gaussian, Thm 3.2]. For a symmetric
  base f, C_r(f) is f_r up to slope -1, a segment of slope -1, then f_r^{-1} [@dong2022gaussian, Sec. 4.2]:
  its pair is the remove pair's law on positive losses, mirrored (``symmetric_direction``). The
  base is made symmetric first (``symmetric_direction`` again), which is sound because a
  guarantee holds for both orders of every pair of neighbours.
- An asymmetric base (``PLD.from_pmfs``, ``from_densities``, ``MixtureGaussianPair``), Poisson,
  add/remove: a dominating pair (P, Q) of the remove order bounds the hockey-stick divergence at
  every e^eps > 0 [@zhu2022optimal], so its reverse (Q, P) bounds the add order, by
  H_a(Q||P) = 1 - a + a H_{1/a}(P||Q); hence remove is (P, (1-r)P + rQ) and add
  ((1-r)P + rQ, P), both from the remove pair, exact when the add pair is the reverse of the
  remove pair, as for those three [@lebeda2024avoiding].
- Poisson subsampling with replace-one adjacency (record x swapped for x'): with A the base's
  output on the rest of the sample and B, B' its output with x or x' added, the two outputs are
  (1-r)A + rB and (1-r)A + rB' (averaged over the rest, which joint convexity of the hockey-stick
  divergence allows). For the Gaussian sum query (contributions of norm at most Delta,
  mu = Delta/sigma) we use the symmetric pair ((1-r)N(0,1) + rN(-mu,1), (1-r)N(0,1) + rN(mu,1))
  [@lebeda2024avoiding]: it is attained by contributions -Delta and +Delta (so it cannot be
  improved), it dominates every configuration B' = -B (the kernel x -> a x + N(0, 1 - a^2) maps
  the pair onto it, a data processing argument), and the other configurations were checked
  numerically and by exact enumeration (tests/test_pairs_peers.py). Only the Gaussian base is
  supported: for a general pair the replace-one case is not determined by the add/remove pair.
  The base guarantee of a Poisson-subsampled mechanism is read under add/remove adjacency (the
  subsample's size varies); ``adjacency`` names the relation of the subsampled mechanism.

"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Literal

from accountant.core.rounding import div_up
from accountant.core.types import Adjacency
from accountant.core.validation import check_real
from accountant.notions.guarantees import GDP, Guarantee
from accountant.pld.distribution import PLD, pld_from_guarantee
from accountant.pld.laws.base import LossDirection
from accountant.pld.models.base import Pair
from accountant.pld.models.gaussian import GaussianPair
from accountant.pld.models.mixture import MixtureDirection
from accountant.pld.settings import check_tol

Scheme = Literal["poisson", "without_replacement"]


def _check_scheme(scheme: str, adjacency: str | None) -> Adjacency:
    """The adjacency of a subsampling scheme (None: add/remove for Poisson, replace-one for
    sampling without replacement), refusing combinations not supported."""
    if scheme not in ("poisson", "without_replacement"):
        raise ValueError(f"scheme must be 'poisson' or 'without_replacement', got {scheme!r}")
    if adjacency is None:
        return "add_remove" if scheme == "poisson" else "replace"
    if adjacency not in ("add_remove", "replace"):
        raise ValueError(f"adjacency must be 'add_remove' or 'replace', got {adjacency!r}")
    if scheme == "without_replacement" and adjacency == "add_remove":
        raise ValueError("sampling without replacement is supported under adjacency='replace' "
                         "only (a fixed sample size m of n); use scheme='poisson' for add/remove")
    return "add_remove" if adjacency == "add_remove" else "replace"


def subsample(mechanism: Guarantee, rate: float, scheme: Scheme = "poisson",
              tol: float | None = None, adjacency: Adjacency | None = None) -> PLD:
    """The PLD of a mechanism run on a random subsample of the data.

    ``mechanism`` is a guarantee (GDP, PureDP, ApproxDP, FDP, ...) or a single-mechanism PLD;
    ``rate`` is the sampling probability q (Poisson) or m/n (without replacement). The result
    composes with ``compose([...] * T)`` and its ``epsilon(delta)`` is a sound upper bound, with
    ``epsilon_bracket`` for the lower bound. A Gaussian (GDP) keeps its exact mixture tails.
    ``tol`` is the accuracy the grid is set by (see ``PLD``; default: the mechanism's PLD's). A
    composition takes the smallest tol of its parts unless ``compose(..., tol=...)`` sets one.
    ``adjacency`` ('add_remove' or 'replace') is the neighbouring relation of the subsampled
    mechanism (default: add/remove for Poisson, replace-one without replacement); Poisson under
    'replace' needs a Gaussian (GDP) mechanism, read as a sum of contributions of norm <= Delta.
    An asymmetric PLD (``PLD.from_pmfs``, ...) is subsampled with Poisson under add/remove.
    """
    if not isinstance(mechanism, Guarantee):
        raise TypeError(f"mechanism must be an accountant guarantee, got {type(mechanism).__name__}")
    r = check_real("rate", rate, low=0.0, high=1.0, low_open=True)
    adj = _check_scheme(scheme, adjacency)
    t = None if tol is None else check_tol(tol)
    pld = pld_from_guarantee(mechanism)
    if len(pld.factors) != 1 or pld.factors[0][1] != 1:
        raise ValueError("subsample a single mechanism (a PLD of one mechanism, count 1); "
                         "subsample first, then compose")
    base = pld.factors[0][0]
    if r == 1.0 and scheme == "poisson" and adj == "replace":
        if not isinstance(base, GaussianPair):
            SubsampledPair(base, 0.5, scheme, adj)  # raises the error naming what is supported
        else:  # every record is kept: contributions -Delta and +Delta
            base = GaussianPair(2.0 * base.mu)
    elif r < 1.0:
        base = SubsampledPair(base, r, scheme, adj)
    return PLD.from_pair(base, tol=pld.tol if t is None else t)


@dataclass(frozen=True)
class SubsampledPair(Pair):
    """The dominating pair(s) of a mechanism with pair ``base`` run on a subsample of rate
    ``rate`` (see the module docstring): Poisson under add/remove gives a remove and an add pair,
    Poisson under replace-one (Gaussian base) and sampling without replacement one symmetric pair.
    ``adjacency`` None takes the scheme's default."""

    base: Pair
    rate: float
    scheme: Scheme = "poisson"
    adjacency: Adjacency | None = None
    kind: ClassVar[str | None] = "subsampled"

    def __post_init__(self) -> None:
        if not isinstance(self.base, Pair):
            raise TypeError(f"base must be a Pair, got {type(self.base).__name__}")
        object.__setattr__(self, "rate", check_real("rate", self.rate, low=0.0, high=1.0,
                                                    low_open=True, high_open=True))
        adj = _check_scheme(self.scheme, self.adjacency)
        object.__setattr__(self, "adjacency", adj)
        if self.scheme == "poisson" and adj == "replace" and not isinstance(self.base, GaussianPair):
            raise ValueError("Poisson subsampling under replace-one adjacency is supported for the "
                             "Gaussian mechanism (a GDP guarantee) only, got a mechanism with pair "
                             f"{self.base!r}")
        if self.scheme == "without_replacement" and not self.base.symmetric:
            raise ValueError("sampling without replacement needs a mechanism with one dominating "
                             "pair for both directions (e.g. a guarantee); this pair is asymmetric")

    def directions(self) -> tuple[LossDirection, LossDirection | None]:
        rate = self.rate
        if isinstance(self.base, GaussianPair) and self.adjacency == "replace" \
                and self.scheme == "poisson":
            mu, keep = self.base.mu, (1.0 - rate, rate)
            return MixtureDirection((0.0, -mu), keep, (0.0, mu), keep), None
        # an asymmetric base: its add order is bounded by the reverse of its remove order
        return self.base.remove.subsampled(rate, poisson=self.scheme == "poisson")


#: The largest sensitivity / noise_multiplier of a DP-SGD step (``subsampled_gaussian``).
MAX_GAUSSIAN_MU = 1e4


def subsampled_gaussian(noise_multiplier: float, rate: float, sensitivity: float = 1.0,
                        tol: float | None = None, adjacency: Adjacency = "add_remove") -> PLD:
    """One step of DP-SGD: a Gaussian of noise multiplier sigma, Poisson-subsampled with rate q
    (``tol``: the target bracket width, see ``PLD``; ``adjacency``: 'add_remove' or 'replace',
    with ``sensitivity`` the clipping norm either way)."""
    s = check_real("noise_multiplier", noise_multiplier, low=0.0, low_open=True, high=math.inf,
                   high_open=True)
    d = check_real("sensitivity", sensitivity, low=0.0, low_open=True, high=math.inf,
                   high_open=True)
    mu = div_up(d, s)
    if not 0.0 < mu <= MAX_GAUSSIAN_MU:
        raise ValueError(f"noise_multiplier must be at least sensitivity / {MAX_GAUSSIAN_MU:g} = "
                         f"{d / MAX_GAUSSIAN_MU:.6g} (sensitivity={d!r}), got {s!r}: their ratio "
                         f"{mu:.6g} must lie in (0, {MAX_GAUSSIAN_MU:g}]")
    return subsample(GDP(mu), rate, "poisson", tol, adjacency)
