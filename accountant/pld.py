"""Privacy-loss distributions (PLDs): numeric exact composition with certified brackets.

A ``PLD`` is a guarantee given by dominating pairs of mechanisms and how often each is composed.
It is evaluated lazily on a grid (see ``_pldgrid``) with two discretisations: a pessimistic one
whose delta(eps) and epsilon(delta) are sound upper bounds (what ``delta``/``epsilon`` report),
and an optimistic one giving lower bounds, read with ``delta_bracket``/``epsilon_bracket``.

Sources: Meiser & Mohammadi 2018 and Sommer, Meiser & Mohammadi 2019 (PLDs), Koskela, Jaelkoe &
Honkela 2020 (FFT accountant), Doroshenko et al. 2022 ("Connect the dots"), Zhu, Dong & Wang 2022
(dominating pairs, both adjacency directions).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, singledispatch
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ._numeric import (
    FloatArray,
    as_float_array,
    check_count,
    check_real,
    lower_convex_hull,
    smallest_epsilon,
)
from ._pldgrid import (
    EPS_MACH,
    SOURCE_TAIL,
    GridLaw,
    compose_laws,
    deposit_atoms,
    from_atoms,
    from_cells,
    self_compose,
)
from .guarantees import CLTGDP, FDP, GDP, ApproxDP, Guarantee, PureDP
from .tradeoff import (
    FiniteLossTradeoff,
    GaussianTradeoff,
    LaplaceTradeoff,
    PiecewiseLinearTradeoff,
    TradeoffFunction,
    as_tradeoff,
    default_alpha_grid,
)

Direction = Literal["remove", "add"]

#: Default target accuracy (in epsilon) used to choose the grid; the bracket reports the truth.
DEFAULT_TOL = 3e-5
#: Grid constant: the connect-the-dots error grows like steps * h^2 (measured on subsampled
#: Gaussians: about 2.5 steps h^2 in epsilon), so h0 = sqrt(tol / (GRID_CONST * steps)).
GRID_CONST = 1.5
MIN_H = 2e-6
#: Q-mass cut from the tails of each continuous mechanism: at most SOURCE_TAIL_BUDGET in total.
SOURCE_TAIL_BUDGET = 1e-12
SOURCE_TAIL_MAX = 1e-16
MAX_H = 0.05
#: Most grid points of one mechanism's initial law (2^19 doubles: 4 MiB per array; a 10-fold
#: composition of such laws peaks near 400 MiB).
MAX_POINTS = 2 ** 19


def _z(tail: float) -> float:
    """z with Phi(-z) = tail."""
    return float(-special.ndtri(tail))


# ============================ one ordered pair ===================================================


class LossDirection(ABC):
    """One ordered dominating pair (P, Q), able to discretise the law of L = log(q/p) under Q."""

    @abstractmethod
    def discretize(self, h: float, pessimistic: bool, tail: float = SOURCE_TAIL) -> GridLaw:
        """Grid law on width h: pessimistic (delta never below the truth) or optimistic; a
        continuous law is cut where its tails have Q-mass ``tail`` (pessimistically moved to
        +inf or up, optimistically dropped)."""

    def atoms(self) -> tuple[float, ...]:
        """Finite loss values carrying an atom, used to align the grid with them."""
        return ()

    @abstractmethod
    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        """Interval outside of which L has Q-mass at most ``tail`` on each side."""


class _TailDirection(LossDirection):
    """A pair given by the tails of L under Q and P: (Q(L<=g), Q(L>g), P(L<=g), P(L>g))."""

    q_inf: float = 0.0

    @abstractmethod
    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]: ...

    def discretize(self, h: float, pessimistic: bool, tail: float = SOURCE_TAIL) -> GridLaw:
        lo, hi = self.support(tail)
        j0 = math.floor(lo / h) - 1
        j1 = math.ceil(hi / h) + 1
        g = np.asarray(np.arange(j0, j1 + 1) * h, dtype=np.float64)
        fq, sq, fp, sp = self.tails(g)
        # difference the smaller of the two tails, so tiny cell masses keep their digits
        q = np.where(sq[:-1] <= 0.5, sq[:-1] - sq[1:], fq[1:] - fq[:-1])
        p = np.where(sp[:-1] <= 0.5, sp[:-1] - sp[1:], fp[1:] - fp[:-1])
        q = np.maximum(q, 0.0)
        with np.errstate(divide="ignore", over="ignore"):  # e^g p in log space: g may exceed 709
            pn = np.exp(g[:-1] + np.log(np.maximum(p, 0.0)))
        pn = np.clip(pn, q * math.exp(-h), q)
        x = q - pn
        nodes = np.zeros(g.size)
        atoms, atom_q = self.point_masses()
        extra = deposit_atoms(h, j0, atoms, atom_q, q, pn, x, nodes, pessimistic)
        return from_cells(h, j0, q, pn, x, inf=self.q_inf, q_above=float(sq[-1]),
                          q_below=float(fq[0]), pessimistic=pessimistic,
                          slack=8 * EPS_MACH + extra, node_q=nodes)

    def point_masses(self) -> tuple[FloatArray, FloatArray]:
        """Atoms of L (losses, Q-masses) not included in ``tails``."""
        return np.zeros(0), np.zeros(0)


def _ndtr(x: FloatArray) -> FloatArray:
    return np.asarray(special.ndtr(x), dtype=np.float64)


@dataclass(frozen=True)
class _GaussianDirection(_TailDirection):
    """(N(0,1), N(mu,1)): L = mu x - mu^2/2 (Koskela et al. 2020; symmetric)."""

    mu: float

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        zq = g / self.mu - self.mu / 2
        zp = g / self.mu + self.mu / 2
        return _ndtr(zq), _ndtr(-zq), _ndtr(zp), _ndtr(-zp)

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        m, z = self.mu, _z(tail)
        return m * (-z + m / 2), m * (z + m / 2)


@dataclass(frozen=True)
class _LaplaceDirection(_TailDirection):
    """(Lap(0,1), Lap(eps,1)): atoms at +-eps, L = 2x - eps in between (symmetric)."""

    eps: float

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        # the continuous part only (x in (0, eps)); its Q- and P-masses are both (1 - e^-eps)/2
        e = self.eps
        total = -0.5 * math.expm1(-e)
        gc = np.clip(g, -e, e)
        sq = np.where(g < -e, total, np.where(g < e, 0.5 * -np.expm1(-(e - gc) / 2), 0.0))
        sp = np.where(g < -e, total, np.where(g < e, 0.5 * math.exp(-e) * np.expm1((e - gc) / 2),
                                              0.0))
        return total - sq, sq, total - sp, sp

    def point_masses(self) -> tuple[FloatArray, FloatArray]:
        e = self.eps
        return np.array([-e, e]), np.array([0.5 * math.exp(-e), 0.5])

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        return -self.eps, self.eps

    def atoms(self) -> tuple[float, ...]:
        return (-self.eps, self.eps)


def _mixture_log(r: float, l_: FloatArray) -> FloatArray:
    """log(1 - r + r e^l), the loss of the subsampled pair (P, (1-r)P + rQ) at a base loss l."""
    out = np.logaddexp(math.log1p(-r), math.log(r) + l_)
    return np.asarray(np.where(l_ == 0.0, 0.0, out), dtype=np.float64)  # exact at l = 0


@dataclass(frozen=True)
class SubsampledTailDirection(_TailDirection):
    """A continuous pair (P, Q) subsampled with rate r, remove: (P, (1-r)P + rQ); add: swapped
    (Balle, Barthe & Gaboardi 2018; Zhu, Dong & Wang 2022, Sec. 5). The loss is the increasing
    function phi(l) = log(1 - r + r e^l) of the base loss l, so its tails are the base's tails at
    phi^{-1}(g) = log((e^g - 1 + r) / r), mixed; atoms are mapped by phi."""

    base: _TailDirection
    rate: float
    direction: Direction

    @property
    def q_inf(self) -> float:  # type: ignore[override]
        return self.rate * self.base.q_inf if self.direction == "remove" else 0.0

    def _base_loss(self, v: FloatArray) -> FloatArray:
        """phi^{-1}(v) for v > log(1 - r), else -inf."""
        r = self.rate
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            near = np.log((np.expm1(v) + r) / r)  # accurate near log(1 - r); overflows above 709
            far = v + np.log1p(-(1.0 - r) * np.exp(-v)) - math.log(r)
        return np.where(v > math.log1p(-r), np.where(v > 1.0, far, near), -np.inf)

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        r = self.rate
        if self.direction == "remove":
            fq0, sq0, fp0, sp0 = self.base.tails(self._base_loss(g))
            return (1 - r) * fp0 + r * fq0, (1 - r) * sp0 + r * sq0, fp0, sp0
        # L' = -phi(l) > g  <=>  l < phi^{-1}(-g): under Q' = P and P' = the mixture
        fq0, sq0, fp0, sp0 = self.base.tails(self._base_loss(-g))
        return sp0, fp0, (1 - r) * sp0 + r * sq0, (1 - r) * fp0 + r * fq0

    def point_masses(self) -> tuple[FloatArray, FloatArray]:
        losses, q = self.base.point_masses()
        p = q * np.exp(-losses)
        if self.direction == "remove":
            return _mixture_log(self.rate, losses), (1 - self.rate) * p + self.rate * q
        return -_mixture_log(self.rate, losses), p

    def atoms(self) -> tuple[float, ...]:
        return tuple(float(a) for a in self.point_masses()[0])

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        base = math.log1p(-self.rate)
        hi = float(_mixture_log(self.rate, np.asarray(self.base.support(tail)[1])))
        return (base, hi) if self.direction == "remove" else (-hi, -base)


@dataclass(frozen=True)
class SymmetricTailDirection(_TailDirection):
    """The symmetric pair with the profile of a continuous pair ``base`` at eps >= 0 (see
    ``symmetric_direction``): base's law on losses > 0, its P-law there mirrored below 0 and the
    rest of the mass in an atom at 0. For g < 0, with c the continuous parts:
    Q(L > g) = Q_c(L > 0) + P_c(0 < L < -g) and P(L > g) = P_c(L > 0) + Q_c(0 < L < -g)."""

    base: _TailDirection

    @property
    def q_inf(self) -> float:  # type: ignore[override]
        return self.base.q_inf

    def tails(self, g: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        fq, sq, fp, sp = self.base.tails(np.abs(g))
        _, sq0, _, sp0 = (float(t[0]) for t in self.base.tails(np.zeros(1)))
        neg = g < 0
        return (np.where(neg, sp, fq), np.where(neg, sq0 + sp0 - sp, sq), np.where(neg, sq, fp),
                np.where(neg, sp0 + sq0 - sq, sp))

    def point_masses(self) -> tuple[FloatArray, FloatArray]:
        losses, q = self.base.point_masses()
        pos = losses > 0
        lp, qp = losses[pos], q[pos]
        pp = qp * np.exp(-lp)
        _, sq0, _, sp0 = (float(t[0]) for t in self.base.tails(np.zeros(1)))
        used = sq0 + sp0 + math.fsum(qp.tolist()) + math.fsum(pp.tolist()) + self.q_inf
        # the rest at 0, rounded up (extra Q-mass only raises delta)
        zero = max(0.0, 1.0 - used) + 8.0 * EPS_MACH * (2.0 + lp.size)
        return np.concatenate([lp, -lp, [0.0]]), np.concatenate([qp, pp, [zero]])

    def atoms(self) -> tuple[float, ...]:
        return tuple(float(a) for a in self.point_masses()[0])

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        hi = max(self.base.support(tail)[1], 0.0)
        return -hi, hi


@dataclass(frozen=True, eq=False)
class _FiniteDirection(LossDirection):
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

    def discretize(self, h: float, pessimistic: bool, tail: float = SOURCE_TAIL) -> GridLaw:
        # the grid is shifted so that the largest loss is a node: delta is then exact at and
        # above it (delta = 0 where the truth is), and k-fold compositions keep their top on a node
        if pessimistic:
            return from_atoms(h, self.losses, self.q, inf=self.inf, q_above=self.extra_pess_inf,
                              pessimistic=True, slack=8 * EPS_MACH,
                              shift=_top_shift(self.losses, self.q, h))
        return from_atoms(h, self.opt_losses, self.opt_q, inf=self.opt_inf, q_above=0.0,
                          pessimistic=False, slack=8 * EPS_MACH,
                          shift=_top_shift(self.opt_losses, self.opt_q, h))

    def support(self, tail: float = SOURCE_TAIL) -> tuple[float, float]:
        both = np.concatenate([self.losses[self.q > 0], self.opt_losses[self.opt_q > 0], [0.0]])
        return float(both.min()), float(both.max())

    def atoms(self) -> tuple[float, ...]:
        both = np.concatenate([self.losses[self.q > 0], self.opt_losses[self.opt_q > 0]])
        vals = np.unique(both)
        return tuple(float(v) for v in vals) if vals.size <= 64 else (math.nan,)

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
                     p_ninf: float | None = None) -> _FiniteDirection:
    """An exact finite pair (the same atoms serve both discretisations); ``p_ninf`` is its P-mass
    at L = -inf when known exactly."""
    l_ = as_float_array("losses", losses).ravel()
    qm = as_float_array("q_masses", q).ravel()
    if l_.shape != qm.shape or (qm < 0).any() or not np.isfinite(l_).all():
        raise ValueError("losses must be finite and q_masses non-negative, of equal length")
    return _FiniteDirection(l_, qm, float(inf), l_, qm, float(inf), p_ninf=p_ninf)


# ============================ a mechanism = one or two ordered pairs =============================


@dataclass(frozen=True)
class PairSource:
    """A mechanism's dominating pair(s): ``remove`` = (P, Q) and ``add`` (None when symmetric).

    Equal ``name`` and ``params`` mean the same mechanism; identical sources are grouped and
    composed by repeated squaring.
    """

    name: str
    params: tuple[Any, ...]
    remove: LossDirection = field(compare=False)
    add: LossDirection | None = field(default=None, compare=False)

    def direction(self, which: Direction) -> LossDirection:
        if which == "add" and self.add is not None:
            return self.add
        return self.remove

    @property
    def symmetric(self) -> bool:
        return self.add is None


# ============================ the guarantee ======================================================


@dataclass(frozen=True, eq=False)
class PLD(Guarantee):
    """Privacy-loss distribution of a composition of mechanisms, with certified bounds.

    ``delta(eps)`` and ``epsilon(delta)`` are pessimistic (sound upper bounds covering both the
    remove and the add direction); ``delta_bracket``/``epsilon_bracket`` return (lower, upper)
    around the exact value; ``tradeoff`` is a sound lower bound on the composed f-DP curve.
    ``tol`` is the target accuracy in epsilon that sets the grid width.
    """

    factors: tuple[tuple[PairSource, int], ...]
    tol: float = DEFAULT_TOL

    def __post_init__(self) -> None:
        if not self.factors:
            raise ValueError("factors must contain at least one mechanism")
        for src, k in self.factors:
            if not isinstance(src, PairSource):
                raise TypeError(f"factors must hold PairSource objects, got {type(src).__name__}")
            check_count("composition count", k)
        check_real("tol", self.tol, low=1e-9, high=1.0)

    # ----- constructors ----------------------------------------------------------------------
    @classmethod
    def from_source(cls, source: PairSource, count: int = 1, tol: float = DEFAULT_TOL) -> PLD:
        return cls(((source, count),), tol)

    @classmethod
    def gaussian(cls, sigma: float, sensitivity: float = 1.0, tol: float = DEFAULT_TOL) -> PLD:
        """Gaussian mechanism N(f(D), sigma^2) with L2 sensitivity Delta: mu = Delta / sigma."""
        s = check_real("sigma", sigma, low=0.0, low_open=True, high=math.inf, high_open=True)
        d = check_real("sensitivity", sensitivity, low=0.0, low_open=True, high=math.inf,
                       high_open=True)
        return cls.from_source(gaussian_source(d / s), tol=tol)

    @classmethod
    def laplace(cls, scale: float, sensitivity: float = 1.0, tol: float = DEFAULT_TOL) -> PLD:
        """Laplace mechanism Lap(f(D), b) with L1 sensitivity Delta: eps = Delta / b."""
        b = check_real("scale", scale, low=0.0, low_open=True, high=math.inf, high_open=True)
        d = check_real("sensitivity", sensitivity, low=0.0, low_open=True, high=math.inf,
                       high_open=True)
        return cls.from_source(laplace_source(d / b), tol=tol)

    @classmethod
    def randomized_response(cls, eps: float, k: int = 2, tol: float = DEFAULT_TOL) -> PLD:
        """k-ary randomized response keeping the truth w.p. e^eps / (e^eps + k - 1)."""
        f = FiniteLossTradeoff.randomized_response(eps, k)
        d = finite_direction(f.losses, f.q_masses, p_ninf=f.p_ninf)
        return cls.from_source(PairSource("randomized_response", (float(eps), int(k)), d), tol=tol)

    @classmethod
    def discrete_laplace(cls, scale: float, sensitivity: int = 1, tol: float = DEFAULT_TOL) -> PLD:
        """Discrete Laplace: P(X = x) proportional to e^{-|x|/scale} on the integers, integer
        sensitivity (Canonne, Kamath & Steinke 2020 notation t = scale)."""
        s = check_real("scale", scale, low=0.0, low_open=True, high=math.inf, high_open=True)
        delta = _check_int_sensitivity(sensitivity)
        a = math.exp(-1.0 / s)
        # P = DLap(0), Q = DLap(Delta): x <= 0 -> L = -Delta/s, x >= Delta -> +Delta/s, else (2x-Delta)/s
        xs = np.arange(1, delta)
        z = (1 - a) / (1 + a)
        losses = np.concatenate([[-delta / s], (2 * xs - delta) / s, [delta / s]])
        q = np.concatenate([[a ** delta / (1 + a)], z * a ** (delta - xs), [1 / (1 + a)]])
        d = finite_direction(losses, q, p_ninf=0.0)
        return cls.from_source(PairSource("discrete_laplace", (s, delta), d), tol=tol)

    @classmethod
    def discrete_gaussian(cls, sigma: float, sensitivity: int = 1,
                          tol: float = DEFAULT_TOL) -> PLD:
        """Discrete Gaussian: P(X = x) proportional to e^{-x^2/(2 sigma^2)} on the integers
        (Canonne, Kamath & Steinke 2020); L = (2 x Delta - Delta^2)/(2 sigma^2) under Q = shift."""
        s = check_real("sigma", sigma, low=0.0, low_open=True, high=1e6)
        delta = _check_int_sensitivity(sensitivity)
        k = math.ceil(13 * s) + 2 * delta + 2
        xs = np.arange(-k, k + delta + 1, dtype=np.float64)
        log_w = -(xs ** 2) / (2 * s * s)
        log_z = float(special.logsumexp(log_w))  # tails beyond +-k are below e^{-84}
        q = np.exp(-((xs - delta) ** 2) / (2 * s * s) - log_z)
        losses = (2 * xs * delta - delta ** 2) / (2 * s * s)
        keep = q > 1e-300
        # mass outside the window (< 1e-36): pessimistically at +inf
        outside = max(0.0, 1.0 - float(q[keep].sum()))
        lo, qq = losses[keep], q[keep]
        d = _FiniteDirection(lo, qq, 0.0, lo, qq, 0.0, extra_pess_inf=outside + 1e-36)
        return cls.from_source(PairSource("discrete_gaussian", (s, delta), d), tol=tol)

    @classmethod
    def from_pmfs(cls, p: ArrayLike, q: ArrayLike, tol: float = DEFAULT_TOL) -> PLD:
        """Any pair of pmfs on a common finite support: remove = (p, q), add = (q, p)."""
        pa = as_float_array("p", p).ravel()
        qa = as_float_array("q", q).ravel()
        if pa.shape != qa.shape or pa.size == 0:
            raise ValueError("p and q must be non-empty arrays of the same length")
        for name, arr in (("p", pa), ("q", qa)):
            if (arr < 0).any() or abs(float(arr.sum()) - 1.0) > 1e-9:
                raise ValueError(f"{name} must be a pmf: non-negative and summing to 1")
        token = object()
        return cls.from_source(PairSource("pmfs", (token,), _pmf_direction(pa, qa),
                                          _pmf_direction(qa, pa)), tol=tol)

    @classmethod
    def from_densities(cls, p: Callable[[FloatArray], ArrayLike],
                       q: Callable[[FloatArray], ArrayLike], grid: ArrayLike,
                       tol: float = DEFAULT_TOL) -> PLD:
        """A pair of densities on the real line, integrated on the cells of ``grid`` (Simpson).

        Pessimistic: each cell's Q-mass at the largest loss among its end and mid points (sound
        when the loss is monotone within each cell and the quadrature is accurate); Q-mass outside
        the grid at +inf. Optimistic: each cell merged into one outcome (a post-processing).
        """
        x = np.unique(as_float_array("grid", grid).ravel())
        if x.size < 2 or not np.isfinite(x).all():
            raise ValueError("grid must hold at least two finite points")
        mid = (x[:-1] + x[1:]) / 2
        pv = [np.asarray(p(v), dtype=np.float64).reshape(v.shape) for v in (x, mid)]
        qv = [np.asarray(q(v), dtype=np.float64).reshape(v.shape) for v in (x, mid)]
        for name, (ends, mids) in (("p", pv), ("q", qv)):
            if (ends < 0).any() or (mids < 0).any() or not np.isfinite(ends).all():
                raise ValueError(f"{name} must be a finite non-negative density")
        w = np.diff(x) / 6
        pm = w * (pv[0][:-1] + 4 * pv[1] + pv[0][1:])
        qm = w * (qv[0][:-1] + 4 * qv[1] + qv[0][1:])
        with np.errstate(divide="ignore", invalid="ignore"):
            pts = [np.log(qv[0][:-1] / pv[0][:-1]), np.log(qv[1] / pv[1]),
                   np.log(qv[0][1:] / pv[0][1:])]
        token = object()
        rem = _density_direction(pm, qm, np.maximum.reduce(pts))
        add = _density_direction(qm, pm, np.maximum.reduce([-t for t in pts]))
        return cls.from_source(PairSource("densities", (token,), rem, add), tol=tol)

    @classmethod
    def from_tradeoff(cls, f: TradeoffFunction | Callable[[FloatArray], ArrayLike],
                      tol: float = DEFAULT_TOL) -> PLD:
        """The PLD of the dominating pair of an f-DP guarantee (used for both directions).

        Closed forms are used for Gaussian and Laplace curves and knots for piecewise-linear ones;
        otherwise the pessimistic pair comes from the sound lower envelope of f and the optimistic
        pair from chords of f, which lie above it (f is convex).
        """
        return cls.from_source(tradeoff_source(as_tradeoff(f)), tol=tol)

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

    # ----- the grid --------------------------------------------------------------------------
    @cached_property
    def _grid(self) -> tuple[float, int]:
        counts = [c for _, c in self.factors]
        total = sum(counts)
        h_target = math.sqrt(self.tol / (GRID_CONST * total))
        h_target = min(max(h_target, MIN_H), MAX_H)
        # memory cap: no source's initial law may need more than MAX_POINTS grid points (a
        # coarser grid is still sound, only looser)
        span = max(hi - lo for s, _ in self.factors for d in _dirs(s) for lo, hi in [d.support()])
        h_target = max(h_target, span / MAX_POINTS)
        max_level = max(0, int(math.log2(MAX_H / h_target)))
        quantum = _atom_quantum([a for s, _ in self.factors for d in _dirs(s) for a in d.atoms()])
        if quantum is None or quantum < h_target / 64:
            return h_target, max_level
        block = 2 ** max_level
        k = block * math.ceil(quantum / (block * h_target))
        return quantum / k, max_level

    @property
    def directions(self) -> tuple[Direction, ...]:
        if all(s.symmetric for s, _ in self.factors):
            return ("remove",)
        return ("remove", "add")

    def law(self, direction: Direction = "remove", pessimistic: bool = True,
            coarse: bool = False) -> GridLaw:
        """The composed grid law of one direction (cached); ``coarse`` uses a grid 4x wider (a
        cheaper bound, used to screen out a direction that does not attain the maximum)."""
        cache: dict[tuple[str, bool, bool], GridLaw] = self.__dict__.setdefault("_law_cache", {})
        key = (direction, pessimistic, coarse)
        if key not in cache:
            h, max_level = self._grid
            if coarse:
                h, max_level = 4 * h, max_level - 2
            # a tail cut from each of the n mechanisms adds at most n * tail to delta
            tail = min(SOURCE_TAIL_MAX, SOURCE_TAIL_BUDGET / self.steps)
            laws = [self_compose(s.direction(direction).discretize(h, pessimistic, tail), c,
                                 max_level) for s, c in self.factors]
            cache[key] = compose_laws(laws)
        return cache[key]

    # ----- Guarantee interface ---------------------------------------------------------------
    def _delta(self, eps: float) -> float:
        # the "add" direction is first bounded on a coarse grid: when that bound is already below
        # the "remove" value, the maximum is the latter and the fine "add" law is never built
        best = self.law("remove").delta(eps)
        for d in self.directions[1:]:
            if self._grid[1] < 2 or self.law(d, coarse=True).delta(eps) > best:
                best = max(best, self.law(d).delta(eps))
        return best

    def _worst_direction(self, eps: float) -> Direction:
        worst: Direction = "remove"
        value = self.law("remove").delta(eps)
        for d in self.directions[1:]:
            if self._grid[1] < 2 or self.law(d, coarse=True).delta(eps) > value:
                v = self.law(d).delta(eps)
                if v > value:
                    worst, value = d, v
        return worst

    def _delta_at_infinity(self) -> float:
        return min(1.0, self._delta(math.inf))

    def delta_bracket(self, eps: float) -> tuple[float, float]:
        """(lower, upper) bounds on the exact delta(eps) of the composition."""
        eps = check_real("eps", eps)
        worst = self._worst_direction(eps)
        return self.law(worst, pessimistic=False).delta(eps), self._delta(eps)

    def epsilon_bracket(self, delta: float) -> tuple[float, float]:
        """(lower, upper) bounds on the exact epsilon(delta); upper is ``epsilon(delta)``."""
        delta = check_real("delta", delta, low=0.0, high=1.0)
        upper = self.epsilon(delta)
        if upper == math.inf:
            worst = self._worst_direction(math.inf)
            opt = self.law(worst, pessimistic=False)
            lower = smallest_epsilon(opt.delta, delta) if opt.inf <= delta else math.inf
            return _lower_end(opt, delta, lower), upper
        opt = self.law(self._worst_direction(upper), pessimistic=False)
        return _lower_end(opt, delta, upper), upper

    @cached_property
    def tradeoff(self) -> PiecewiseLinearTradeoff:
        """A sound lower bound on the composed trade-off curve: the pessimistic pair's exact curve
        (lowered by the numerical slack), taking the lower convex envelope over both directions."""
        curves = [_law_curve(self.law(d)) for d in self.directions]
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
        parts = ", ".join(f"{s.name}{s.params if s.name not in ('pmfs', 'densities', 'finite') else ''}"
                          f" x{c}" for s, c in self.factors)
        return f"PLD[{parts}]"

    def __repr__(self) -> str:
        return str(self)


def _lower_end(opt: GridLaw, delta: float, upper: float) -> float:
    """Largest eps found with delta_opt(eps) > delta: below the exact epsilon(delta)."""
    if opt.delta(0.0) <= delta:
        return 0.0
    lo, hi = 0.0, upper if math.isfinite(upper) else 1.0
    while math.isinf(upper) and opt.delta(hi) > delta:
        lo, hi = hi, 2 * hi + 1
        if hi > 1e6:
            return lo
    for _ in range(200):
        if hi - lo <= 1e-13 * max(1.0, hi):
            break
        mid = 0.5 * (lo + hi)
        if opt.delta(mid) > delta:
            lo = mid
        else:
            hi = mid
    return lo


def _law_curve(law: GridLaw) -> PiecewiseLinearTradeoff:
    nz = law.masses > 0
    losses = np.concatenate([law.losses[nz], [law.top]])
    q = np.concatenate([law.masses[nz], [law.top_mass]])
    order = np.argsort(-losses, kind="stable")
    losses, q = losses[order], q[order]
    p = q * np.exp(-losses)
    alphas = np.concatenate([[0.0], np.cumsum(p)])
    betas = np.concatenate([[1.0 - law.inf], 1.0 - law.inf - np.cumsum(q)])
    betas = np.maximum(betas - 2 * (law.slack + law.rel) - 1e-15, 0.0)
    keep = np.concatenate([[True], np.diff(alphas) > 0])
    alphas, betas = alphas[keep], betas[keep]
    if alphas[-1] >= 1.0:
        alphas = alphas / alphas[-1]  # P-mass above 1 only by rounding; rescaling lowers beta
        betas = np.concatenate([betas[:-1], [0.0]])
    else:
        alphas = np.concatenate([alphas, [1.0]])
        betas = np.concatenate([betas, [0.0]])
    hx, hy = lower_convex_hull(alphas, np.minimum(betas, 1.0 - alphas))
    return PiecewiseLinearTradeoff(hx, np.minimum(hy, 1.0 - hx))


def _dirs(s: PairSource) -> tuple[LossDirection, ...]:
    return (s.remove,) if s.add is None else (s.remove, s.add)


def _atom_quantum(atoms: list[float]) -> float | None:
    """A common quantum a with every atom an integer multiple of it, when one is small."""
    vals = [abs(a) for a in atoms if a != 0.0]
    if not vals or any(not math.isfinite(v) for v in vals):
        return None
    base = min(vals)
    for k in range(1, 13):
        qa = base / k
        ratios = np.asarray(vals) / qa
        if np.allclose(ratios, np.round(ratios), rtol=0, atol=1e-9):
            return qa
    return None


def _check_int_sensitivity(sensitivity: int) -> int:
    return check_count("sensitivity", sensitivity, high=10**6)


def _pmf_direction(p: FloatArray, q: FloatArray) -> _FiniteDirection:
    both = (p > 0) & (q > 0)
    return finite_direction(np.log(q[both] / p[both]), q[both], float(q[(p == 0) & (q > 0)].sum()),
                            float(p[(q == 0) & (p > 0)].sum()))


def _density_direction(pm: FloatArray, qm: FloatArray, pess_loss: FloatArray) -> _FiniteDirection:
    pm = np.maximum(pm, 0.0)
    qm = np.maximum(qm, 0.0)
    both = (pm > 0) & (qm > 0)
    only_q = (pm <= 0) & (qm > 0)
    fin = both & np.isfinite(pess_loss)
    outside = max(0.0, 1.0 - float(qm.sum()))
    pess_inf = float(qm[only_q].sum() + qm[both & ~np.isfinite(pess_loss)].sum()) + outside
    with np.errstate(divide="ignore"):
        merged = np.log(qm[both] / pm[both])
    return _FiniteDirection(pess_loss[fin], qm[fin], pess_inf, merged, qm[both],
                            float(qm[only_q].sum()))


# ============================ sources ============================================================


def gaussian_source(mu: float) -> PairSource:
    """Gaussian pair with shift mu (= sensitivity / sigma)."""
    mu = check_real("mu", mu, low=0.0, low_open=True, high=1e4)
    return PairSource("gaussian", (mu,), _GaussianDirection(mu))


def laplace_source(eps: float) -> PairSource:
    """Laplace pair with eps = sensitivity / scale."""
    eps = check_real("eps", eps, low=0.0, low_open=True, high=700.0)
    return PairSource("laplace", (eps,), _LaplaceDirection(eps))


def subsampled_gaussian_source(mu: float, rate: float) -> PairSource:
    """Poisson-subsampled Gaussian pair: remove (N(0,1), (1-r)N(0,1) + rN(mu,1)), add swapped."""
    mu = check_real("mu", mu, low=0.0, low_open=True, high=1e4)
    rate = check_real("rate", rate, low=0.0, high=1.0, low_open=True)
    if rate == 1.0:
        return gaussian_source(mu)
    return PairSource("subsampled_gaussian", (mu, rate),
                      SubsampledTailDirection(_GaussianDirection(mu), rate, "remove"),
                      SubsampledTailDirection(_GaussianDirection(mu), rate, "add"))


def _knot_atoms(alphas: FloatArray, betas: FloatArray) -> tuple[FloatArray, FloatArray, float]:
    """The pair of a convex piecewise-linear curve: a segment of slope -s carries Q-mass
    (its drop in beta) at loss log s; 1 - f(0) is the Q-mass at +inf (DRS Prop. 2.2)."""
    da = np.diff(alphas)
    db = -np.diff(betas)
    ok = (db > 0) & (da > 0)
    losses = np.log(db[ok] / da[ok])
    return losses, db[ok], max(0.0, 1.0 - float(betas[0]))


def tradeoff_source(f: TradeoffFunction) -> PairSource:
    """Dominating pair of f-DP (symmetric: it bounds both orders of neighbouring datasets)."""
    if isinstance(f, GaussianTradeoff):
        return gaussian_source(f.mu)
    if isinstance(f, LaplaceTradeoff):
        return laplace_source(f.eps)
    if isinstance(f, FiniteLossTradeoff):
        d = finite_direction(f.losses, f.q_masses, f.q_inf, f.p_ninf)
        return PairSource("finite", (object(),), d)
    if isinstance(f, PiecewiseLinearTradeoff):
        lo, qm, inf = _knot_atoms(f.alphas, f.betas)
        return PairSource("piecewise_linear", (object(),), finite_direction(lo, qm, inf))
    return PairSource("tradeoff", (object(),), envelope_direction(f))


def envelope_direction(f: TradeoffFunction) -> _FiniteDirection:
    """Finite pair of any curve: pessimistic atoms from the sound lower envelope of f, optimistic
    ones from the chords of f (which lie above it, f being convex)."""
    env = f.lower_envelope()
    lo, qm, inf = _knot_atoms(env.alphas, env.betas)
    a = default_alpha_grid()
    b = np.minimum(np.asarray(f(a), dtype=np.float64) + 1e-15, 1.0 - a)
    hx, hy = lower_convex_hull(a, b)
    olo, oqm, oinf = _knot_atoms(hx, hy)
    return _FiniteDirection(lo, qm, inf, olo, oqm, oinf)


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
    err = 8.0 * EPS_MACH * (1.0 + pp.size)
    if pessimistic:
        if used > 1.0 + 1e-12:
            return None
        up = 1.0 + 8.0 * EPS_MACH
        zero = max(0.0, 1.0 - used) + err
        return np.concatenate([lp, -lp, [0.0]]), np.concatenate([qp * up, pp * up, [zero]]), inf
    scale = min(1.0, (1.0 - inf) / (used - inf)) * (1.0 - 8.0 * EPS_MACH) if used > inf else 1.0
    zero = max(0.0, 1.0 - used - err)
    return (np.concatenate([lp, -lp, [0.0]]), np.concatenate([qp * scale, pp * scale, [zero]]),
            inf)


def symmetric_direction(d: _FiniteDirection) -> _FiniteDirection:
    """The symmetric pair S whose privacy profile is d's at every eps >= 0.

    Only Q-mass at losses > 0 enters delta(eps) for eps >= 0, and for eps < 0 every pair obeys
    delta_{P,Q}(eps) = 1 - e^eps + e^eps delta_{Q,P}(-eps); so a mechanism whose every ordered pair
    of neighbours has a profile below d's at eps >= 0 is dominated by S in both orders (Zhu, Dong &
    Wang 2022, Sec. 5, symmetric dominating pairs). S keeps d's law on losses > 0, mirrors its
    P-law there to negative losses, and puts the remaining mass at loss 0. When d is too far from
    symmetric for that (its curve crosses the diagonal before slope -1), d's curve f is replaced by
    min(f, f^{-1})**, below both (Dong, Roth & Su 2022, Sec. 4.1).
    """
    (pl, pq, pi), (ol, oq, oi) = d.proper_pairs()
    pess = _mirror_atoms(pl, pq, pi, True)
    if pess is None:
        p_rest = max(0.0, 1.0 - math.fsum((pq * np.exp(-pl)).tolist()))
        f = FiniteLossTradeoff.from_losses(pl, pq, q_inf=pi, p_ninf=p_rest).symmetrize()
        lo, qm, inf = _knot_atoms(f.alphas, f.betas)
        pess = _mirror_atoms(lo, qm, inf, True)
        if pess is None:
            raise ValueError("could not build a symmetric dominating pair for this mechanism")
    opt = _mirror_atoms(ol, oq, oi, False)
    assert opt is not None
    # symmetric: the P-mass at -inf is the Q-mass at +inf
    return _FiniteDirection(*pess, *opt, p_ninf=pess[2] if pess[2] == opt[2] else None)


# ============================ guarantees -> PLD ==================================================


@singledispatch
def pld_from_guarantee(g: Guarantee, tol: float = DEFAULT_TOL) -> PLD:
    """The PLD of a guarantee's dominating pair (GDP -> Gaussian, (eps, delta)-DP -> randomized
    response with an atom at infinity, f-DP -> the pair of f; other notions via their curve)."""
    if not isinstance(g, Guarantee):
        raise TypeError(f"expected an accountant guarantee, got {type(g).__name__}")
    return PLD.from_tradeoff(g.tradeoff, tol=tol)


@pld_from_guarantee.register
def _(g: PLD, tol: float = DEFAULT_TOL) -> PLD:
    return g


@pld_from_guarantee.register
def _(g: GDP, tol: float = DEFAULT_TOL) -> PLD:
    if isinstance(g, CLTGDP):
        raise TypeError("a CLTGDP is an approximation, not a bound; use its .rigorous() guarantee")
    return PLD.from_source(gaussian_source(g.mu), tol=tol)


@pld_from_guarantee.register
def _(g: PureDP, tol: float = DEFAULT_TOL) -> PLD:
    f = g.tradeoff
    return PLD.from_source(PairSource("approx_dp", (g.eps, 0.0),
                                      finite_direction(f.losses, f.q_masses, f.q_inf, f.p_ninf)),
                          tol=tol)


@pld_from_guarantee.register
def _(g: ApproxDP, tol: float = DEFAULT_TOL) -> PLD:
    f = g.tradeoff
    return PLD.from_source(PairSource("approx_dp", (g.eps, g.delta_),
                                      finite_direction(f.losses, f.q_masses, f.q_inf, f.p_ninf)),
                          tol=tol)


def compose_plds(items: Sequence[Guarantee], tol: float | None = None) -> PLD:
    """Compose guarantees as PLDs; equal mechanisms are grouped (repeated squaring)."""
    # [g] * T repeats one object: count objects by identity first (C speed), convert each once
    by_id = dict(zip(map(id, items), items, strict=True))
    multiplicity = Counter(map(id, items))
    plds = [(pld_from_guarantee(g), multiplicity[k]) for k, g in by_id.items()]
    counts: Counter[PairSource] = Counter()
    order: list[PairSource] = []
    for p, mult in plds:
        for s, c in p.factors:
            if s not in counts:
                order.append(s)
            counts[s] += c * mult
    t = min(p.tol for p, _ in plds) if tol is None else tol
    return PLD(tuple((s, counts[s]) for s in order), t)


__all__ = [
    "PLD",
    "LossDirection",
    "PairSource",
    "compose_plds",
    "finite_direction",
    "gaussian_source",
    "laplace_source",
    "pld_from_guarantee",
    "subsampled_gaussian_source",
    "tradeoff_source",
]
