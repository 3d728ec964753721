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

import numpy as np

from ._numeric import LIBM_REL, FloatArray, check_real, div_up
from ._pldgrid import EPS_MACH
from .guarantees import GDP, Guarantee
from .pairs import (
    GaussianPair,
    LossDirection,
    Pair,
    SubsampledTailDirection,
    SymmetricTailDirection,
    _FiniteDirection,
    _GaussianDirection,
    _LaplaceDirection,
    _mixture_log,
    _MixtureDirection,
    mixture_log_error,
    symmetric_direction,
)
from .pld import PLD, check_tol, pld_from_guarantee

Scheme = Literal["poisson", "without_replacement"]
Adjacency = Literal["add_remove", "replace"]


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
    ``tol`` is the target width of the bracket (see ``PLD``; default: the mechanism's PLD's). A
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
            return _MixtureDirection((0.0, -mu), keep, (0.0, mu), keep), None
        base = self.base.remove  # an asymmetric base: its add order is bounded by the reverse
        if isinstance(base, (_GaussianDirection, _LaplaceDirection, _MixtureDirection)):
            rem = SubsampledTailDirection(base, rate, "remove")
            if self.scheme == "poisson":
                return rem, SubsampledTailDirection(base, rate, "add")
            return SymmetricTailDirection(rem), None
        if not isinstance(base, _FiniteDirection):
            raise TypeError(f"cannot subsample a pair of type {type(base).__name__}")
        if self.scheme == "poisson":
            return _mix_finite(base, rate)
        return symmetric_direction(_mix_finite(symmetric_direction(base), rate)[0]), None


def _mix_finite(base: _FiniteDirection, r: float) -> tuple[_FiniteDirection, _FiniteDirection]:
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
        lo = np.concatenate([_mixture_log(r, losses), [log1m]])
        qm = np.concatenate([(1 - r) * p + r * q, [(1 - r) * p_ninf]])
        return lo, qm, r * inf

    def add(losses: FloatArray, q: FloatArray, p: FloatArray, inf: float,
            p_ninf: float) -> tuple[FloatArray, FloatArray, float]:
        lo = np.concatenate([-_mixture_log(r, losses), [-log1m]])
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
        # EPS_MACH relatively) and losses (a few ulp of the operands, ``loss_err``) are moved up
        # for the pessimistic set, down for the optimistic one, and the absolute error of the rest
        # 1 - sum(p) (one ulp per atom) is added at the top loss, which keeps delta exactly 0
        # above the support (no mass at +inf); the base's mass error carries over to the mixtures
        # (non-negative combinations)
        mass_round = LIBM_REL + 12.0 * EPS_MACH  # exp's LIBM_REL, five roundings, padded
        up, down = 1.0 + mass_round, 1.0 - mass_round
        # the add losses -phi(l) also by w (the base losses' error; the rest's atom is exact)
        pl = pl + loss_err(pl, sets[0][0], w if fn is add else 0.0)
        pq = pq * up
        if base.p_ninf is None:
            pq[int(np.argmax(pl))] += 2.0 * EPS_MACH * (pl.size + 2)
        ol = ol - loss_err(ol, sets[1][0], w if fn is add else 0.0)
        # P-mass at -inf: none under remove (the mixture covers P); r Q(+inf) under add
        known = None if base.p_ninf is None else (0.0 if fn is remove else r * sets[0][3])
        out.append(_FiniteDirection(pl, pq, pi * up, ol, oq * down, oi * down, p_ninf=known,
                                    mass_rtol=base.mass_rtol))
    return out[0], out[1]


def subsampled_gaussian(noise_multiplier: float, rate: float, sensitivity: float = 1.0,
                        tol: float | None = None, adjacency: Adjacency = "add_remove") -> PLD:
    """One step of DP-SGD: a Gaussian of noise multiplier sigma, Poisson-subsampled with rate q
    (``tol``: the target bracket width, see ``PLD``; ``adjacency``: 'add_remove' or 'replace',
    with ``sensitivity`` the clipping norm either way)."""
    s = check_real("noise_multiplier", noise_multiplier, low=0.0, low_open=True, high=math.inf,
                   high_open=True)
    d = check_real("sensitivity", sensitivity, low=0.0, low_open=True, high=math.inf,
                   high_open=True)
    mu = check_real("sensitivity / noise_multiplier", div_up(d, s), low=0.0, low_open=True,
                    high=1e4)
    return subsample(GDP(mu), rate, "poisson", tol, adjacency)


__all__ = ["SubsampledPair", "subsample", "subsampled_gaussian"]
