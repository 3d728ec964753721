"""Trade-off functions [@dong2022gaussian].

Convention: for a pair of output distributions (P, Q) on neighbouring inputs, a test phi of
H0: P against H1: Q has type I error alpha = E_P[phi] and type II error beta = 1 - E_Q[phi];
the trade-off function is T(P, Q)(alpha) = inf {beta_phi : alpha_phi <= alpha}. Its privacy loss is
L = log(q/p), and its privacy profile is

    delta(eps) = sup_phi E_Q[phi] - e^eps E_P[phi] = 1 + f*(-e^eps)    [@dong2022gaussian, Prop. 2.12]

where f* is the convex conjugate. Every class here answers ``f(alpha)`` (vectorised), ``profile``
(an exact value or a sound upper bound on delta), ``inverse``, ``symmetrize``, ``conjugate`` and
the moments of the privacy loss used by the central limit theorem.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import TYPE_CHECKING, Any, ClassVar, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from ._numeric import (
    LIBM_REL,
    FloatArray,
    as_alpha,
    as_float_array,
    check_count,
    check_real,
    gaussian_profile,
    lower_convex_hull,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: Tolerance used when checking that user-supplied points form a trade-off function.
VALIDITY_TOL = 1e-9
#: Unit round-off of a double, and the smallest positive double.
_U = 2.0 ** -53
_TINY = math.nextafter(0.0, 1.0)
#: Safety margins of the sampled lower envelope (see ``_from_convex_samples``).
SAMPLE_MARGIN = 4.5e-16
KINK_MARGIN = 1e-14
#: Window of the discrete Gaussian curve, in standard deviations on each side (tails < e^-800).
DISCRETE_GAUSSIAN_TAIL = 40.0


@dataclass(frozen=True)
class LossMoments:
    """Moments of the privacy loss under the null P, as in [@dong2022gaussian, Thm 3.5]:
    ``kl`` = -E_P[L] = KL(P || Q), ``kappa2`` = E_P[L^2], ``kappa3`` = E_P|L - E_P L|^3."""

    kl: float
    kappa2: float
    kappa3: float

    def __post_init__(self) -> None:
        check_real("kl", self.kl, low=-math.inf, high=math.inf, low_open=True, high_open=True)
        check_real("kappa2", self.kappa2, low=0.0, high=math.inf, high_open=True)
        check_real("kappa3", self.kappa3, low=0.0, high=math.inf, high_open=True)


class TradeoffFunction(ABC):
    """A trade-off function f: [0, 1] -> [0, 1], convex, continuous, non-increasing, f(a) <= 1 - a."""

    @abstractmethod
    def _beta(self, alpha: FloatArray) -> FloatArray:
        """Vectorised evaluation on a validated float array."""

    @overload
    def __call__(self, alpha: float) -> float: ...

    @overload
    def __call__(self, alpha: NDArray[Any] | Sequence[float]) -> FloatArray: ...

    def __call__(self, alpha: float | NDArray[Any] | Sequence[float]) -> float | FloatArray:
        a = as_alpha(alpha)
        out = np.clip(self._beta(np.atleast_1d(a)), 0.0, 1.0).reshape(a.shape)
        if np.ndim(alpha) == 0:
            return float(out)
        return out

    # ----- privacy profile, conjugate ---------------------------------------------------------
    @overload
    def profile(self, eps: float) -> float: ...

    @overload
    def profile(self, eps: NDArray[Any] | Sequence[float]) -> FloatArray: ...

    def profile(self, eps: float | NDArray[Any] | Sequence[float]) -> float | FloatArray:
        """delta(eps) = 1 + f*(-e^eps): exact for closed forms, a sound upper bound otherwise."""
        e = as_float_array("eps", eps)
        out = np.clip(self._profile(np.atleast_1d(e)), 0.0, 1.0).reshape(e.shape)
        if np.ndim(eps) == 0:
            return float(out)
        return out

    def _profile(self, eps: FloatArray) -> FloatArray:
        return self.lower_envelope()._profile(eps)

    def conjugate(self, y: ArrayLike) -> FloatArray:
        """Convex conjugate f*(y) = sup_a (y a - f(a)); for y < 0 it is profile(log(-y)) - 1."""
        yy = as_float_array("y", y)
        with np.errstate(divide="ignore"):
            eps = np.log(-np.minimum(yy, 0.0))
        return np.where(yy >= 0.0, yy - self(np.ones_like(yy)), self.profile(eps) - 1.0)

    # ----- structure -----------------------------------------------------------------------
    @property
    def is_symmetric(self) -> bool:
        """True when f equals its inverse, i.e. T(P, Q) = T(Q, P)."""
        return False

    def inverse(self) -> TradeoffFunction:
        """f^{-1}(b) = inf {a : f(a) <= b}: the trade-off function of the swapped pair T(Q, P)."""
        return self.lower_envelope().inverse()

    def symmetrize(self) -> TradeoffFunction:
        """min(f, f^{-1})**, the tightest symmetric curve below f [@dong2022gaussian, Sec. 4.1]."""
        if self.is_symmetric:
            return self
        return self.lower_envelope().symmetrize()

    def loss_moments(self) -> LossMoments:
        """Moments of the privacy loss under P [@dong2022gaussian, Thm 3.5]; numeric by default."""
        return self.lower_envelope().loss_moments()

    def lower_envelope(self, grid: FloatArray | None = None) -> PiecewiseLinearTradeoff:
        """A piecewise-linear trade-off function that lies below f everywhere (on ``grid``, by
        default ``envelope_alpha_grid()``).

        f is evaluated on a grid that is dense in both tails; on each cell the convexity of f and
        its monotonicity bound it below by the extended chords of the neighbouring cells. The lower
        convex hull of those bounds is a valid trade-off function g <= f, so g's privacy profile is
        an upper bound on f's.
        """
        a = (envelope_alpha_grid() if grid is None
             else np.unique(np.concatenate([[0.0, 1.0], grid])))
        return PiecewiseLinearTradeoff._from_convex_samples(a, np.asarray(self(a), dtype=np.float64))

    # ----- presentation ----------------------------------------------------------------------
    def curve(self, n: int = 501) -> tuple[FloatArray, FloatArray]:
        """Arrays (alpha, f(alpha)) for plotting."""
        a = np.linspace(0.0, 1.0, n)
        return a, self(a)

    def plot(self, ax: Axes | None = None, n: int = 501, **kwargs: Any) -> Axes:
        """Plot the curve with matplotlib (an optional dependency) and return the axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        a, b = self.curve(n)
        ax.plot(a, b, label=kwargs.pop("label", repr(self)), **kwargs)
        ax.set_xlabel("type I error alpha")
        ax.set_ylabel("type II error beta")
        return ax


def default_alpha_grid(n_linear: int = 2001, n_log: int = 300,
                       log_low: float = -30.0) -> FloatArray:
    """Alpha grid for numeric curves: uniform in the bulk, logarithmic near 0 and 1 from
    10^log_low (see ``envelope_alpha_grid`` for sampled curves)."""
    tail = np.logspace(log_low, -1, n_log)
    lin = np.linspace(0.0, 1.0, n_linear)
    return np.unique(np.concatenate([lin, tail, 1.0 - tail, [0.0, 1.0]]))


def envelope_alpha_grid() -> FloatArray:
    """The grid of sampled lower envelopes: ten points a decade from 1e-300, so the envelope
    resolves privacy losses up to ~690 (below 1e-300 its first cell puts the mass at +inf)."""
    return default_alpha_grid(n_log=2991, log_low=-300.0)


# ============================ closed forms ======================================================


@dataclass(frozen=True)
class GaussianTradeoff(TradeoffFunction):
    """G_mu(a) = Phi(Phi^{-1}(1 - a) - mu) = T(N(0,1), N(mu,1)) [@dong2022gaussian, Def. 2.7]."""

    mu: float

    def __post_init__(self) -> None:
        check_real("mu", self.mu, low=0.0, high=math.inf, high_open=True)

    def _beta(self, alpha: FloatArray) -> FloatArray:
        # Phi^{-1}(1 - a) = -ndtri(a) keeps accuracy for tiny a. Rounded down: an error of ulps
        # of |z| + mu in x becomes a relative error of phi(x)/Phi(x) times it in ndtr(x); against
        # mpmath the error stays below 3.9 u (1 + (|z| + mu) phi(x)/Phi(x)) (4,000 random
        # points, alpha down to 1e-300), and 16 of those are taken off.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            z = special.ndtri(alpha)
            x = -z - self.mu
            hazard = np.exp(-0.5 * x * x - 0.5 * math.log(2.0 * math.pi) - special.log_ndtr(x))
            scale = np.where(np.isfinite(z), 1.0 + (np.abs(z) + self.mu) * hazard, 0.0)
            beta = special.ndtr(x) * (1.0 - 16.0 * _U * scale)
        return np.asarray(np.maximum(beta, 0.0), dtype=np.float64)

    def _profile(self, eps: FloatArray) -> FloatArray:
        if self.mu == 0.0:  # 1 - e^eps below 0: expm1's LIBM_REL and the product, rounded up
            return np.where(eps >= 0.0, 0.0, np.minimum(
                -np.expm1(np.minimum(eps, 0.0)) * (1.0 + LIBM_REL + 2.0 * _U), 1.0))
        return gaussian_profile(self.mu, eps)

    @property
    def is_symmetric(self) -> bool:
        return True

    def inverse(self) -> TradeoffFunction:
        return self

    def loss_moments(self) -> LossMoments:
        m = self.mu
        return LossMoments(kl=m * m / 2, kappa2=m * m + m**4 / 4,
                           kappa3=2.0 * math.sqrt(2.0 / math.pi) * m**3)

    def __repr__(self) -> str:
        return f"G_{self.mu:g}"


@dataclass(frozen=True)
class LaplaceTradeoff(TradeoffFunction):
    """Laplace mechanism with Delta/b = eps: T(Lap(0,1), Lap(eps,1)) [@dong2022gaussian, Sec. 2.3].

    f(a) = 1 - e^eps a on [0, e^-eps/2], e^-eps/(4a) on [e^-eps/2, 1/2], e^-eps (1 - a) after.
    """

    eps: float

    def __post_init__(self) -> None:
        check_real("eps", self.eps, low=0.0, high=math.inf, high_open=True)

    def _beta(self, alpha: FloatArray) -> FloatArray:
        e = self.eps
        w = math.exp(-e)
        with np.errstate(divide="ignore"):
            mid = w / (4.0 * alpha)
        beta = np.where(alpha < w / 2, 1.0 - alpha / w, np.where(alpha <= 0.5, mid, w * (1 - alpha)))
        # each branch within exp's LIBM_REL and three roundings
        return np.asarray(beta * (1.0 - LIBM_REL - 4.0 * _U), dtype=np.float64)

    def _profile(self, eps: FloatArray) -> FloatArray:
        # delta(t) = 1 - e^{(t - eps)/2} on [-eps, eps], 0 above, 1 - e^t below.
        e = self.eps
        mid = -np.expm1((np.minimum(eps, e) - e) / 2.0)
        out = np.where(eps >= e, 0.0, np.where(eps >= -e, mid, -np.expm1(np.minimum(eps, 0.0))))
        # expm1's LIBM_REL, its argument's u (expm1 on (-inf, 0] is at most as sensitive), and the
        # product: rounded up
        return np.asarray(out * (1.0 + LIBM_REL + 4.0 * _U), dtype=np.float64)

    @property
    def is_symmetric(self) -> bool:
        return True

    def inverse(self) -> TradeoffFunction:
        return self

    def loss_moments(self) -> LossMoments:
        # Under P = Lap(0,1): L = -eps for y < 0 (mass 1/2), eps for y > eps (mass e^-eps/2),
        # 2y - eps in between (density e^-y / 2).
        e = self.eps

        from scipy import integrate  # imported on use: slow to import

        def moment(g: Callable[[float], float]) -> float:
            body, _ = integrate.quad(lambda y: g(2 * y - e) * math.exp(-y) / 2, 0.0, e)
            return 0.5 * g(-e) + 0.5 * math.exp(-e) * g(e) + body

        mean = moment(lambda v: v)
        return LossMoments(kl=-mean, kappa2=moment(lambda v: v * v),
                           kappa3=moment(lambda v: abs(v - mean) ** 3))

    def __repr__(self) -> str:
        return f"Laplace(eps={self.eps:g})"


# ============================ piecewise linear ==================================================


@dataclass(frozen=True, eq=False)
class PiecewiseLinearTradeoff(TradeoffFunction):
    """A convex piecewise-linear trade-off function through knots (alpha_i, beta_i).

    Knots are validated: alpha from 0 to 1 increasing, beta non-increasing, convex, in [0, 1] and
    below 1 - alpha. The profile is exact: delta(eps) = max_i (1 - beta_i - e^eps alpha_i).
    """

    alphas: FloatArray
    betas: FloatArray
    _slopes: FloatArray = field(init=False, repr=False)
    #: Knots built from sorted likelihood ratios are convex by construction; rounding in their
    #: cumulative sums must not be mistaken for non-convexity.
    _check_convexity: ClassVar[bool] = True

    def __post_init__(self) -> None:
        a = as_float_array("alphas", self.alphas).copy()
        b = as_float_array("betas", self.betas).copy()
        if a.ndim != 1 or a.shape != b.shape or a.size < 2:
            raise ValueError("alphas and betas must be 1-d arrays of equal length >= 2")
        if a[0] != 0.0 or a[-1] != 1.0 or (np.diff(a) <= 0).any():
            raise ValueError("alphas must increase strictly from 0 to 1")
        if (b < -VALIDITY_TOL).any() or (b > 1 - a + VALIDITY_TOL).any():
            raise ValueError("betas must satisfy 0 <= beta <= 1 - alpha (a trade-off function)")
        slopes = np.diff(b) / np.diff(a)
        if (slopes > VALIDITY_TOL).any():
            raise ValueError("betas must be non-increasing in alpha (a trade-off function)")
        if self._check_convexity and not is_convex(a, b, VALIDITY_TOL):
            raise ValueError("the points are not convex: a trade-off function must be convex")
        a.setflags(write=False)
        b = np.clip(b, 0.0, 1.0)
        b.setflags(write=False)
        object.__setattr__(self, "alphas", a)
        object.__setattr__(self, "betas", b)
        object.__setattr__(self, "_slopes", np.maximum.accumulate(np.minimum(slopes, 0.0)))

    # constructors ---------------------------------------------------------------------------
    @classmethod
    def from_points(cls, alphas: ArrayLike, betas: ArrayLike) -> PiecewiseLinearTradeoff:
        """The curve through the given knots (endpoints (0, .) and (1, 0) added when absent)."""
        a = as_float_array("alphas", alphas).ravel()
        b = as_float_array("betas", betas).ravel()
        if a.shape != b.shape:
            raise ValueError("alphas and betas must have the same length")
        order = np.argsort(a, kind="stable")
        a, b = a[order], b[order]
        if a.size == 0 or a[0] > 0.0:
            a = np.concatenate([[0.0], a])
            b = np.concatenate([[1.0], b])
        if a[-1] < 1.0:
            a = np.concatenate([a, [1.0]])
            b = np.concatenate([b, [0.0]])
        return cls(a, b)

    @classmethod
    def from_roc(cls, fpr: ArrayLike, tpr: ArrayLike) -> PiecewiseLinearTradeoff:
        """The trade-off curve achieved by a family of tests with the given ROC points.

        beta = 1 - tpr; randomising between tests makes the lower convex hull achievable, so the
        curve is the hull of the points together with (0, 1) and (1, 0).
        """
        a = as_float_array("fpr", fpr).ravel()
        b = 1.0 - as_float_array("tpr", tpr).ravel()
        if a.shape != b.shape:
            raise ValueError("fpr and tpr must have the same length")
        if ((a < 0) | (a > 1) | (b < 0) | (b > 1)).any():
            raise ValueError("fpr and tpr must lie in [0, 1]")
        pts_a = np.concatenate([[0.0, 1.0], a])
        pts_b = np.concatenate([[1.0, 0.0], b])
        order = np.lexsort((pts_b, pts_a))
        hx, hy = lower_convex_hull(pts_a[order], pts_b[order])
        return cls(hx, np.minimum(hy, 1.0 - hx))

    @classmethod
    def _from_convex_samples(cls, a: FloatArray, b: FloatArray) -> PiecewiseLinearTradeoff:
        """Sound piecewise-linear lower bound of a convex non-increasing f sampled at a, b = f(a).

        Samples carry rounding error of about one ulp, which extending a chord can amplify by the
        ratio of neighbouring cells; samples are lowered by ``SAMPLE_MARGIN`` and chord
        intersections by ``KINK_MARGIN`` so the bound survives it. The cost is a floor of about
        1e-14 on the delta of a curve known only through samples.

        The end cells have one neighbour: on the first, f is bounded below by the second chord
        extended left, so f(0) is replaced by that extension at 0 (the slope of f near 0 is
        unbounded in general; the missing mass sits at loss +inf); on the last, by the
        second-to-last chord extended right and by f(1).
        """
        b = np.maximum(b - SAMPLE_MARGIN, 0.0)
        da = np.diff(a)
        chord = np.diff(b) / da  # slope of cell i = [a_i, a_{i+1}]
        n = da.size
        if n >= 2:
            b = b.copy()
            b[0] = max(min(b[0], b[1] - chord[1] * a[1] - KINK_MARGIN), b[1])
            s_l = chord[n - 2]
            if s_l < 0.0:  # kink where the extended chord meets the level f(1)
                xk = a[n - 1] + (b[n] - b[n - 1]) / s_l
                if a[n - 1] < xk < a[n]:
                    a = np.concatenate([a[:-1], [xk], a[-1:]])
                    b = np.concatenate([b[:-1], [max(b[n] - KINK_MARGIN, 0.0)], b[-1:]])
                    da = np.diff(a)
                    chord = np.diff(b) / da
                    n = da.size
        xs = [a, np.empty(0)]
        ys = [b, np.empty(0)]
        if n >= 3:
            # cell i (1 <= i <= n-2): left chord i-1 extended right, right chord i+1 extended left.
            i = np.arange(1, n - 1)
            s_l, s_r = chord[i - 1], chord[i + 1]
            denom = s_r - s_l
            with np.errstate(divide="ignore", invalid="ignore"):
                # intersection of y = b_i + s_l (x - a_i) and y = b_{i+1} + s_r (x - a_{i+1})
                x = (b[i] - b[i + 1] - s_l * a[i] + s_r * a[i + 1]) / denom
            ok = np.isfinite(x) & (x > a[i]) & (x < a[i + 1])
            xk = x[ok]
            yk = np.maximum(b[i][ok] + s_l[ok] * (xk - a[i][ok]), b[i + 1][ok]) - KINK_MARGIN
            xs[1], ys[1] = xk, yk
        px = np.concatenate(xs)
        py = np.concatenate(ys)
        order = np.lexsort((py, px))
        hx, hy = lower_convex_hull(px[order], py[order])
        return cls(hx, np.minimum(np.maximum(hy, 0.0), 1.0 - hx))

    # evaluation -----------------------------------------------------------------------------
    def _beta(self, alpha: FloatArray) -> FloatArray:
        return np.asarray(np.interp(alpha, self.alphas, self.betas), dtype=np.float64)

    def _profile(self, eps: FloatArray) -> FloatArray:
        # the maximiser of 1 - beta - e^eps alpha is the first knot after which slopes exceed -e^eps
        a, b = self.alphas, self.betas
        with np.errstate(over="ignore"):
            neg_slope_target = -np.exp(eps)
        j = np.searchsorted(self._slopes, neg_slope_target, side="left")
        best = np.full(eps.shape, -np.inf)
        for shift in (-1, 0, 1):
            k = np.clip(j + shift, 0, a.size - 1)
            with np.errstate(over="ignore", invalid="ignore"):
                term = np.where(a[k] == 0.0, 0.0, np.exp(eps) * a[k])
            # rounded up: 1 - b errs by u (1 - b), the term by (LIBM_REL + u) term <=
            # (LIBM_REL + u) (1 - b) where it matters (exp and the product), the difference by
            # u (1 - b)
            best = np.maximum(best, 1.0 - b[k] - term + (LIBM_REL + 4.0 * _U) * (1.0 - b[k]))
        return best

    def inverse(self) -> PiecewiseLinearTradeoff:
        a, b = self.alphas, self.betas
        # reflect across the diagonal; f^{-1}(beta) = 0 for beta >= f(0)
        x = np.concatenate([b[::-1], [1.0]])
        y = np.concatenate([a[::-1], [0.0]])
        order = np.lexsort((y, x))
        hx, hy = lower_convex_hull(x[order], y[order])
        if hx[0] > 0.0:
            hx = np.concatenate([[0.0], hx])
            hy = np.concatenate([[1.0], hy])
        return PiecewiseLinearTradeoff(hx, np.minimum(hy, 1.0 - hx))

    def symmetrize(self) -> PiecewiseLinearTradeoff:
        inv = self.inverse()
        x = np.concatenate([self.alphas, inv.alphas])
        y = np.concatenate([self.betas, inv.betas])
        order = np.lexsort((y, x))
        hx, hy = lower_convex_hull(x[order], y[order])
        return PiecewiseLinearTradeoff(hx, hy)

    def loss_moments(self) -> LossMoments:
        # On a segment of slope s the privacy loss is log|s| and its P-mass is the segment length.
        da = np.diff(self.alphas)
        s = -self._slopes
        # zero slopes are L = -inf; a negligible mass of them is sampling error, not an atom
        if self.betas[0] < 1.0 - VALIDITY_TOL or da[s <= 0].sum() > VALIDITY_TOL:
            raise ValueError("the privacy loss has an atom at +-infinity: its moments are infinite")
        mass, loss = da[s > 0], np.log(s[s > 0])
        mean = float(np.sum(mass * loss))
        return LossMoments(kl=-mean, kappa2=float(np.sum(mass * loss**2)),
                           kappa3=float(np.sum(mass * np.abs(loss - mean) ** 3)))

    def lower_envelope(self, grid: FloatArray | None = None) -> PiecewiseLinearTradeoff:
        return self

    def __repr__(self) -> str:
        return f"PiecewiseLinearTradeoff({self.alphas.size} knots)"


@dataclass(frozen=True, eq=False)
class FiniteLossTradeoff(PiecewiseLinearTradeoff):
    """T(P, Q) for distributions with finitely many privacy-loss values, held exactly.

    ``losses`` are finite values of L = log(q/p) with Q-masses ``q_masses``; ``q_inf`` is the
    Q-mass where P vanishes (L = +inf) and ``p_ninf`` the P-mass where Q vanishes. The profile is
    delta(eps) = q_inf + sum_l q_l (1 - e^{eps - l})_+, summed without cancellation.

    Rounding is outward: ``q_inf`` must be exact or rounded up by the caller, ``mass_rtol``
    bounds the relative error of the stored finite masses and
    ``loss_atol`` the absolute error of the stored losses against the exact pair; the profile is
    rounded up and the knots of the curve are moved left and down by those bounds plus the
    summation error (a knot moved left and down lies below a non-increasing curve).
    """

    _check_convexity: ClassVar[bool] = False
    losses: FloatArray = field(default_factory=lambda: np.zeros(0))
    q_masses: FloatArray = field(default_factory=lambda: np.zeros(0))
    q_inf: float = 0.0
    p_ninf: float = 0.0
    mass_rtol: float = 0.0
    loss_atol: float = 0.0
    #: What the curve is the curve of (e.g. "discrete Laplace(b=2, shift=1)"), for reprs only.
    label: str = ""

    def __post_init__(self) -> None:
        super().__post_init__()
        losses = as_float_array("losses", self.losses).ravel()
        q = as_float_array("q_masses", self.q_masses).ravel()
        if not np.isfinite(losses).all():
            raise ValueError("losses must be finite (mass at +-inf goes in q_inf and p_ninf)")
        if q.shape != losses.shape:
            raise ValueError(f"losses and q_masses must have equal lengths, got {losses.size} "
                             f"losses and {q.size} q_masses")
        if (q < 0).any() or not np.isfinite(q).all():
            raise ValueError("q_masses must be finite and non-negative")
        for name in ("q_inf", "p_ninf"):
            check_real(name, getattr(self, name), low=0.0, high=1.0)
        for name in ("mass_rtol", "loss_atol"):
            check_real(name, getattr(self, name), low=0.0, high=math.inf, high_open=True)

    @classmethod
    def from_losses(cls, losses: ArrayLike, q_masses: ArrayLike, q_inf: float = 0.0,
                    p_ninf: float = 0.0, *, p_masses: ArrayLike | None = None,
                    mass_rtol: float = 0.0, loss_atol: float = 0.0, label: str = "") -> FiniteLossTradeoff:
        """The pair with Q-masses ``q_masses`` at ``losses`` (P-masses q e^-l, or ``p_masses``
        when given, e.g. computed in log space where e^-l overflows); see the class docstring
        for ``mass_rtol`` and ``loss_atol``; ``label`` names the model in reprs."""
        l_ = as_float_array("losses", losses).ravel()
        q = as_float_array("q_masses", q_masses).ravel()
        if l_.shape != q.shape or (q < 0).any() or not np.isfinite(l_).all():
            raise ValueError("losses must be finite and q_masses non-negative, of equal length")
        order = np.argsort(-l_, kind="stable")
        l_, q = l_[order], q[order]
        if p_masses is None:
            with np.errstate(over="ignore"):
                p = np.where(q == 0.0, 0.0, q * np.exp(-l_))
            mass_rtol += loss_atol + LIBM_REL + _U  # the losses', exp's and the product's errors
        else:
            p = as_float_array("p_masses", p_masses).ravel()[order]
        total_q, total_p = q_inf + q.sum(), p_ninf + p.sum()
        if abs(total_q - 1) > 1e-9 or abs(total_p - 1) > 1e-9:
            raise ValueError(f"masses must sum to 1 under P and Q, got {total_p!r} and {total_q!r}")
        # knots moved left and down by their error bounds (relative to the cumulative masses)
        r = mass_rtol + (l_.size + 4) * _U
        alphas = np.minimum(np.concatenate([[0.0], np.cumsum(p)]) * (1.0 - r - loss_atol), 1.0)
        drop = q_inf + np.concatenate([[0.0], np.cumsum(q)])
        betas = 1.0 - drop * (1.0 + r) - 2 * _U
        keep = np.concatenate([np.diff(alphas) > 0, [True]])  # of equal alphas, the lowest beta
        alphas, betas = alphas[keep], betas[keep]
        if alphas[0] > 0.0:
            alphas = np.concatenate([[0.0], alphas])
            betas = np.concatenate([[betas[0]], betas])
        if alphas[-1] < 1.0:
            alphas = np.concatenate([alphas, [1.0]])
            betas = np.concatenate([betas, [0.0]])
        betas = np.clip(betas, 0.0, 1.0 - alphas)
        return cls(alphas, betas, losses=l_, q_masses=q, q_inf=float(q_inf), p_ninf=float(p_ninf),
                   mass_rtol=mass_rtol, loss_atol=loss_atol, label=label)

    @classmethod
    def approx_dp(cls, eps: float, delta: float = 0.0) -> FiniteLossTradeoff:
        """f_{eps,delta}(a) = max(0, 1 - delta - e^eps a, e^-eps (1 - delta - a)) [@wasserman2010statistical;
        @dong2022gaussian, Prop. 2.5]: Q puts delta on L = +inf and (1-delta) on randomized response."""
        eps = check_real("eps", eps, low=0.0, high=math.inf, high_open=True)
        delta = check_real("delta", delta, low=0.0, high=1.0, high_open=True)
        w = (1 - delta) * float(special.expit(eps))  # (1 - delta) e^eps / (1 + e^eps)
        w_c = (1 - delta) * float(special.expit(-eps))  # (1 - delta) / (1 + e^eps), no overflow
        return cls.from_losses([eps, -eps], [w, w_c], q_inf=delta, p_ninf=delta,
                               p_masses=[w_c, w], mass_rtol=LIBM_REL + 4.0 * _U,  # expit's exp
                               label=f"({eps:.6g}, {delta:.6g})-DP")

    @classmethod
    def discrete_laplace(cls, scale: float, sensitivity: int = 1) -> FiniteLossTradeoff:
        """Exact T(P, Q) for P = DLap(b), Q = Delta + DLap(b), pmf proportional to exp(-|k|/b) on Z
        [@canonne2020discrete] (b = ``scale``, Delta = ``sensitivity``, an integer).

        With r = exp(-1/b) the loss log(q/p)(y) is Delta/b for y >= Delta (Q-mass 1/(1+r)), -Delta/b
        for y <= 0 (Q-mass r^Delta/(1+r)) and (2y - Delta)/b in between (Q-mass (1-r) r^(Delta-y)/(1+r)),
        the masses in log space. One loss atom per integer: the model of ``DiscreteLaplacePair``.
        """
        scale = check_real("scale", scale, low=0.0, high=math.inf, low_open=True, high_open=True)
        shift = check_count("sensitivity", sensitivity, low=0)
        if shift == 0:
            return cls.from_losses([0.0], [1.0])
        log_r = -1.0 / scale
        m = np.arange(1, shift)
        losses = np.concatenate([[shift / scale, -shift / scale], (2 * m - shift) / scale])
        log_norm = -math.log1p(math.exp(log_r))  # log 1/(1+r)
        q = np.concatenate([[math.exp(log_norm), math.exp(shift * log_r + log_norm)],
                            -math.expm1(log_r) * np.exp((shift - m) * log_r + log_norm)])
        # each loss k/b is rounded once (half an ulp); the profile and the curve are rounded outward
        # by that much (the losses of the exact pair may lie just above the doubles held). Masses:
        # the exponent k log r + log_norm (k <= shift) errs by 3u shift / b (log r = -1/b and the
        # product rounded, the sum) and 1.2 LIBM_REL + u log 2 (log_norm: exp, then log1p of a value
        # at most log 2 with slope at most 1/2); exp and expm1 add LIBM_REL each, the products 2u
        mass_rtol = 3.0 * _U * shift / scale + 4.0 * LIBM_REL
        return cls.from_losses(losses, q, loss_atol=2.0 * _U * shift / scale, mass_rtol=mass_rtol,
                               label=f"discrete Laplace(b={scale:.6g}, shift={shift})")

    @classmethod
    def discrete_gaussian(cls, sigma2: float | Fraction, shift: int = 1,
                          tail: float = DISCRETE_GAUSSIAN_TAIL) -> FiniteLossTradeoff:
        """T(P, Q) for P = N_Z(0, sigma2), Q = shift + N_Z(0, sigma2), pmf proportional to
        exp(-y^2/(2 sigma2)) on Z [@canonne2020discrete, Def. 1] (sigma2 exact: a float is taken at its
        binary value), the model of ``DiscreteGaussianPair`` and of the lattice Gaussian mechanism.

        Exact on the window -m <= y <= shift + m, m = ceil(tail sigma) (``discrete_gaussian_window``),
        where the loss is log(q/p)(y) = (2 shift y - shift^2)/(2 sigma2); the Q-mass outside the
        window goes to L = +inf and the P-mass outside to L = -inf, so the pair is a post-processing
        of this one and the curve a sound lower bound (pessimistic by less than exp(-tail^2/2)).

        Declared errors: the masses' (Q and P, both computed in log space) ``mass_rtol`` from
        ``gauss_masses``, which counts the error of the exponent's argument (hundreds of ulp where
        it is large), of log Z, and of the normaliser summed over the window only; masses below
        the normal range are not held and charged, at most ``GAUSS_UNHELD_MASS`` each, at +inf
        (Q) and -inf (P), as the window's rest is. Each loss is 2 shift y - shift^2 (exact, or
        three roundings of terms at most 3 max|L| 2 sigma2) over 2 sigma2 (sigma2 rounded, the
        quotient rounded): within 6u max|L| (1 + 5u) [@higham2002accuracy, Lemma 3.1], charged
        as ``loss_atol`` = 8u max|L|.
        """
        shift = check_count("shift", shift, low=0)
        tail = check_real("tail", tail, low=1.0, high=64.0)
        if shift == 0:
            return cls.from_losses([0.0], [1.0])
        y, s2, log_z, log_z_err, outside = _discrete_gaussian_window(_check_sigma2(sigma2), shift, tail)
        yf = y.astype(np.float64)
        losses = (2.0 * shift * yf - float(shift) ** 2) / (2.0 * s2)
        q, q_rtol = gauss_masses(yf - shift, s2, log_z, log_z_err, excess=outside)
        p, p_rtol = gauss_masses(yf, s2, log_z, log_z_err, excess=outside)
        # the window's rest and the masses not held, each rounded up (to the next double)
        q_inf = math.nextafter(outside + np.count_nonzero(q == 0.0) * GAUSS_UNHELD_MASS, 1.0)
        p_ninf = math.nextafter(outside + np.count_nonzero(p == 0.0) * GAUSS_UNHELD_MASS, 1.0)
        atol = 8.0 * _U * float(np.max(np.abs(losses)))
        return cls.from_losses(losses, q, q_inf=q_inf, p_ninf=p_ninf, p_masses=p,
                               mass_rtol=max(q_rtol, p_rtol),
                               loss_atol=atol,
                               label=f"discrete Gaussian(sigma^2={s2:.6g}, shift={shift})")

    @classmethod
    def randomized_response(cls, eps: float, k: int = 2) -> FiniteLossTradeoff:
        """k-ary randomized response (truth kept w.p. e^eps/(e^eps + k - 1)) on two inputs."""
        eps = check_real("eps", eps, low=0.0, high=math.inf, high_open=True)
        k = check_count("k", k, low=2)
        z = 1.0 + (k - 1) * math.exp(-eps)  # (e^eps + k - 1) e^-eps, no overflow
        q = [1.0 / z, (k - 2) * math.exp(-eps) / z, math.exp(-eps) / z]
        # z errs by exp's LIBM_REL and 2u, each mass by that, exp's again and 2u more
        return cls.from_losses([eps, 0.0, -eps], q, p_masses=q[::-1],
                               mass_rtol=2.0 * LIBM_REL + 4.0 * _U,
                               label=f"{k}-ary randomized response(eps={eps:.6g})")

    def _profile(self, eps: FloatArray) -> FloatArray:
        if self.losses.size == 0:
            return np.full(eps.shape, self.q_inf)
        with np.errstate(over="ignore"):
            gap = eps[:, None] - self.losses[None, :]
        body = np.sum(self.q_masses[None, :] * -np.expm1(np.minimum(gap, 0.0)), axis=1)
        # a loss off by at most loss_atol moves a term by at most q e^{gap} loss_atol (and an atom
        # within loss_atol below eps by at most q 2 loss_atol)
        near = gap < self.loss_atol
        slack = np.sum(np.where(near, self.q_masses[None, :]
                                * np.exp(np.minimum(gap, 0.0)), 0.0), axis=1)
        # the masses', the expm1 terms' (LIBM_REL, their arguments' u at most) and the sum's errors
        r = self.mass_rtol + LIBM_REL + (self.losses.size + 4) * _U
        # q_inf is held as a bound by the constructors: above every loss delta is exactly q_inf
        out = self.q_inf + body * (1.0 + r) + np.where(body > 0.0, _U * self.q_inf, 0.0) \
            + 2.0 * self.loss_atol * slack
        return np.asarray(np.where(out > 0.0, out, np.where(slack > 0, _TINY, 0.0)),
                          dtype=np.float64)

    def inverse(self) -> FiniteLossTradeoff:
        with np.errstate(over="ignore"):
            p = np.where(self.q_masses == 0.0, 0.0, self.q_masses * np.exp(-self.losses))
        return FiniteLossTradeoff.from_losses(-self.losses, p, q_inf=self.p_ninf, p_ninf=self.q_inf,
                                              p_masses=self.q_masses,
                                              mass_rtol=self.mass_rtol + self.loss_atol + LIBM_REL
                                              + _U,
                                              loss_atol=self.loss_atol)

    def loss_moments(self) -> LossMoments:
        if self.q_inf > 0 or self.p_ninf > 0:
            raise ValueError("the privacy loss has an atom at +-infinity: its moments are infinite")
        with np.errstate(over="ignore"):
            p = np.where(self.q_masses == 0.0, 0.0, self.q_masses * np.exp(-self.losses))
        mean = float(np.sum(p * self.losses))
        return LossMoments(kl=-mean, kappa2=float(np.sum(p * self.losses**2)),
                           kappa3=float(np.sum(p * np.abs(self.losses - mean) ** 3)))

    @property
    def is_symmetric(self) -> bool:
        inv = self.inverse()
        return bool(inv.losses.shape == self.losses.shape
                    and np.allclose(inv.losses, self.losses, rtol=1e-12, atol=1e-15)
                    and np.allclose(inv.q_masses, self.q_masses, rtol=1e-9, atol=1e-15)
                    and math.isclose(self.q_inf, self.p_ninf, rel_tol=1e-9, abs_tol=1e-15))

    def __repr__(self) -> str:
        if self.label:
            return f"{self.label} curve ({self.losses.size} loss values)"
        return f"FiniteLossTradeoff({self.losses.size} loss values, q_inf={self.q_inf:g})"


# ============================ curves from callables and profiles ================================


@dataclass(frozen=True, eq=False)
class CallableTradeoff(TradeoffFunction):
    """A user-supplied callable, validated on a grid as a trade-off function.

    Its profile, inverse and moments use the sound piecewise-linear lower envelope.
    """

    fn: Callable[[FloatArray], ArrayLike]
    _envelope: PiecewiseLinearTradeoff = field(init=False, repr=False)

    def __post_init__(self) -> None:
        grid = envelope_alpha_grid()
        try:
            vals = as_float_array("tradeoff(alpha)", self.fn(grid)).reshape(grid.shape)
        except (TypeError, ValueError) as exc:
            raise TypeError("tradeoff must map an array of alpha in [0,1] to an array of beta") from exc
        check_tradeoff_values(grid, vals)
        env = PiecewiseLinearTradeoff._from_convex_samples(grid, vals)
        object.__setattr__(self, "_envelope", env)

    def _beta(self, alpha: FloatArray) -> FloatArray:
        return np.asarray(self.fn(alpha), dtype=np.float64).reshape(alpha.shape)

    def lower_envelope(self, grid: FloatArray | None = None) -> PiecewiseLinearTradeoff:
        return self._envelope if grid is None else super().lower_envelope(grid)


def check_tradeoff_values(alpha: FloatArray, beta: FloatArray, tol: float = 1e-7) -> None:
    """Raise ValueError unless the samples are those of a trade-off function
    [@dong2022gaussian, Prop. 2.2]."""
    if not np.isfinite(beta).all():
        raise ValueError("a trade-off function must be finite on [0, 1]")
    if (beta < -tol).any() or (beta > 1 - alpha + tol).any():
        raise ValueError("a trade-off function must satisfy 0 <= f(alpha) <= 1 - alpha")
    if (np.diff(beta) > tol).any():
        raise ValueError("a trade-off function must be non-increasing")
    if not is_convex(alpha, beta, tol):
        raise ValueError("a trade-off function must be convex")


def is_convex(alpha: FloatArray, beta: FloatArray, tol: float) -> bool:
    """True when every sample lies at most ``tol`` above the chord of its two neighbours."""
    if alpha.size < 3:
        return True
    w = (alpha[1:-1] - alpha[:-2]) / (alpha[2:] - alpha[:-2])
    chord = beta[:-2] + w * (beta[2:] - beta[:-2])
    return bool((beta[1:-1] <= chord + tol).all())


@dataclass(frozen=True, eq=False)
class ProfileTradeoff(TradeoffFunction):
    """The tightest trade-off curve implied by a privacy profile known at finitely many eps:

        f(a) = max_i max(0, 1 - delta(eps_i) - e^{eps_i} a, e^{-eps_i} (1 - delta(eps_i) - a))

    [@dong2022gaussian, Prop. 2.12]. The profile reported is ``delta_fn`` itself, an upper bound on the
    curve's. The lines are rounded outward (the curve lies at or below the exact one).
    """

    delta_fn: Callable[[float], float]
    eps_grid: FloatArray = field(default_factory=lambda: np.linspace(0.0, 20.0, 801))
    _lines: tuple[FloatArray, FloatArray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        e = as_float_array("eps_grid", self.eps_grid).ravel()
        if e.size == 0 or not np.isfinite(e).all():
            raise ValueError(f"eps_grid must be a non-empty array of finite reals, got {e!r}")
        d = np.array([self.delta_fn(float(x)) for x in e])
        if ((d < 0) | (d > 1) | np.isnan(d)).any():
            raise ValueError("delta_fn must return values in [0, 1]")
        keep = d < 1.0
        e, d = e[keep], d[keep]
        # each line rounded outward, so that the curve lies at or below the exact one: e^{+-eps}
        # (numpy's exp, LIBM_REL), 1 - delta, the products and the sum in ``_beta`` (u each)
        # are covered by slopes steeper and intercepts lower by r
        r = 2.0 * LIBM_REL + 8.0 * _U
        shrink = np.exp(-e)
        slopes = np.concatenate([-np.exp(e), -shrink]) * (1.0 + r)
        icpts = np.concatenate([1.0 - d, shrink * (1.0 - d)]) * (1.0 - r)
        object.__setattr__(self, "_lines", (slopes, icpts))

    def _beta(self, alpha: FloatArray) -> FloatArray:
        slopes, icpts = self._lines
        if slopes.size == 0:
            return np.zeros_like(alpha)
        vals = np.max(icpts[None, :] + slopes[None, :] * alpha[:, None], axis=1)
        return np.asarray(np.maximum(vals, 0.0), dtype=np.float64)

    def _profile(self, eps: FloatArray) -> FloatArray:
        return np.array([self.delta_fn(float(x)) for x in eps.ravel()]).reshape(eps.shape)


def profile_to_tradeoff(delta_fn: Callable[[float], float],
                        eps_grid: ArrayLike | None = None) -> ProfileTradeoff:
    """Tightest trade-off curve from a profile sampled on ``eps_grid`` [@dong2022gaussian, Prop. 2.12]."""
    if eps_grid is None:
        return ProfileTradeoff(delta_fn)
    return ProfileTradeoff(delta_fn, as_float_array("eps_grid", eps_grid))


def tradeoff_to_profile(f: TradeoffFunction) -> Callable[[float], float]:
    """The privacy profile delta(eps) = 1 + f*(-e^eps) of a curve f [@dong2022gaussian, Prop. 2.12]."""
    return lambda eps: f.profile(float(eps))


def as_tradeoff(f: TradeoffFunction | Callable[[FloatArray], ArrayLike]) -> TradeoffFunction:
    """Accept a TradeoffFunction or wrap and validate a plain callable."""
    if isinstance(f, TradeoffFunction):
        return f
    if callable(f):
        return CallableTradeoff(f)
    raise TypeError(f"tradeoff must be a TradeoffFunction or a callable, got {type(f).__name__}")


#: Largest variance for which a discrete Gaussian curve is built (a window of ~2^25 atoms).
DISCRETE_GAUSSIAN_MAX_SIGMA2 = 2**30


def _check_sigma2(sigma2: float | Fraction, high: float | None = DISCRETE_GAUSSIAN_MAX_SIGMA2) -> Fraction:
    if isinstance(sigma2, bool) or not isinstance(sigma2, (int, float, Fraction)):
        raise TypeError(f"sigma2 must be a real number or a Fraction, got {type(sigma2).__name__}")
    if (isinstance(sigma2, float) and not math.isfinite(sigma2)) or sigma2 <= 0:
        raise ValueError(f"sigma2 must be finite and > 0, got {str(sigma2)[:40]}")
    if high is not None and sigma2 > high:
        raise ValueError(f"sigma2 must be <= {high} for an exact curve (use the zCDP bound beyond), "
                         f"got {str(sigma2)[:40]}")
    return Fraction(sigma2)


def discrete_gaussian_window(sigma2: float | Fraction, tail: float = DISCRETE_GAUSSIAN_TAIL) -> int:
    """m = ceil(tail sigma) (+1): the half-width of the window of ``FiniteLossTradeoff.discrete_gaussian``,
    whose curve has 2 m + shift + 1 loss atoms."""
    return math.isqrt(math.ceil(_check_sigma2(sigma2, None) * Fraction(tail) ** 2)) + 1


#: gamma_3 / (1 - gamma_3) [@higham2002accuracy, Lemma 3.1]: a = j^2 / (2 s2) with s2 = sigma2
#: rounded, j*j and the quotient rounded (doubling is exact) errs by gamma_3 a / (1 - gamma_3)
#: relative to the computed a.
_GAUSS_EXPONENT_REL = 3.0 * _U / (1.0 - 3.0 * _U) / (1.0 - 3.0 * _U / (1.0 - 3.0 * _U))
#: Bound on an exact mass whose computed value is below the normal range (2^-1022): exp is not
#: relatively accurate there, so such masses are not held (0) and charged at +-inf instead.
GAUSS_UNHELD_MASS = 2.0 ** -1020


def gauss_log_norm(m: int, s2: float) -> tuple[float, float]:
    """log Z for Z = sum_{|j| <= m} exp(-j^2/(2 sigma2)) (s2: sigma2 rounded to a double), and a
    bound on the absolute error of the value returned [@higham2002accuracy, Lemma 3.1].

    Z = 1 + 2 S with S = sum_{j=1}^m e^{-a_j}: each computed term errs relatively by at most
    gamma_3' a_j (the exponent, ``_GAUSS_EXPONENT_REL``) plus LIBM_REL (exp), or absolutely by
    2^-1070 when it is subnormal; S is summed correctly rounded (``math.fsum``, u); log1p has
    slope <= 1 on [0, inf) and adds LIBM_REL of its value. The error sum is taken with 0.1% margin
    for its own rounding."""
    j = np.arange(1, m + 1, dtype=np.float64)
    a = j * j / (2.0 * s2)
    t = np.exp(-a)
    s = math.fsum(t.tolist())
    err_s = 1.001 * (float(np.sum(t * (_GAUSS_EXPONENT_REL * a + LIBM_REL))) + _U * s) \
        + m * 2.0 ** -1070
    log_z = math.log1p(2.0 * s)
    return log_z, 1.001 * (2.0 * err_s + LIBM_REL * log_z)


def gauss_masses(d: FloatArray, s2: float, log_z: float, log_z_err: float,
                 excess: float = 0.0) -> tuple[FloatArray, float]:
    """The masses exp(-d^2/(2 sigma2) - log Z) at the integers ``d`` (log Z from ``gauss_log_norm``
    with its error ``log_z_err``; ``excess`` bounds Z'/Z - 1 when the masses stand for
    exp(-d^2/(2 sigma2)) / Z' with a larger normaliser Z'), and r: every mass returned is within
    r relatively of the exact one, except those below the normal range, returned as 0, whose
    exact values are below ``GAUSS_UNHELD_MASS``.

    Why: the argument -a - log_z (a = d^2/(2 s2)) errs absolutely by
    eta(a) = gamma_3' a + u (a + log_z) + log_z_err [@higham2002accuracy, Lemma 3.1; the
    subtraction's rounding is relative to a + log_z], so the mass by a factor e^{+-eta}, times
    exp's LIBM_REL, times Z'/Z in [1, 1 + excess]: r = expm1(eta(max a) + LIBM_REL + excess),
    with 0.1% margin. For a ~ 700 eta is ~ 4 u a, some 2800 u: far above the 8 u that finite pairs assume
    of masses given without a declared error."""
    a = d * d / (2.0 * s2)
    mass = np.exp(-a - log_z)
    mass = np.where(mass >= 2.0 ** -1022, mass, 0.0)
    top = float(a.max()) if a.size else 0.0
    eta = _GAUSS_EXPONENT_REL * top + _U * (top + log_z) * (1.0 + 2.0 * _U) + log_z_err
    return mass, 1.001 * math.expm1(eta + 1.001 * LIBM_REL + excess)


def _discrete_gaussian_window(sigma2: Fraction, shift: int,
                              tail: float) -> tuple[NDArray[np.int64], float, float, float, float]:
    """Support window [-m, shift + m], sigma2 as a float, log Z of N_Z(0, sigma2) summed over
    [-m, m] with its error bound (``gauss_log_norm``; the rest is below exp(-tail^2/2)
    relatively), and an upper bound on Q's mass outside the window, 2 P(Y > m).

    sum_{y > m} e^{-y^2/(2 sigma2)} <= e^{-m^2/(2 sigma2)} e^{-m/sigma2} / (1 - e^{-m/sigma2});
    the bound computed leaves out the factor e^{-m/sigma2}, so it exceeds the sum by a factor
    e^{m/sigma2} >= 1 + tail/sigma >= 1 + 3e-5 (sigma2 <= 2^30): far more than the rounding of its
    log (~1e-12) and of exp (LIBM_REL). Below 2^-1022 (log below -708) exp is not relatively
    accurate; the rest is then below 2^-1020, which is used."""
    m = discrete_gaussian_window(sigma2, tail)
    s2 = float(sigma2)
    log_z, log_z_err = gauss_log_norm(m, s2)
    log_tail = math.log(2.0) - (m * m) / (2.0 * s2) - math.log(-math.expm1(-m / s2)) - log_z
    outside = 2.0 ** -1020 if log_tail < -708.0 else math.exp(log_tail)
    return np.arange(-m, shift + m + 1, dtype=np.int64), s2, log_z, log_z_err, outside


def discrete_gaussian_is_gdp(shift: int, sigma2: int | Fraction, mu: float) -> bool:
    """Whether the curve of (N_Z(0, sigma2), shift + N_Z(0, sigma2)) lies above G_mu
    [@dong2022gaussian, Def. 2.7], decided more finely than the generic knot comparison of
    ``accountant.implies``: the tails are summed in log space.

    The exact curve is piecewise linear with knots (alpha_y, beta_y) = (P(Y >= y), Q(Y < y)), y in Z,
    and G_mu is convex, so G_mu <= curve everywhere iff at every knot. Each knot is compared on the
    side that is accurate in doubles: beta_y >= Phi(z - mu) where beta_y <= 1/2, else
    1 - beta_y <= Phi(mu - z), with z = Phi^{-1}(1 - alpha_y) taken from the smaller of alpha_y and
    1 - alpha_y. Knots whose tails underflow doubles (below 1e-300, beyond 40 sigma) are not compared.
    """
    return _discrete_gaussian_is_gdp(check_count("shift", shift, low=0), _check_sigma2(sigma2),
                                     check_real("mu", mu, low=0.0, high=math.inf, high_open=True))


@lru_cache(maxsize=64)
def _discrete_gaussian_is_gdp(shift: int, sigma2: Fraction, mu: float) -> bool:
    if shift == 0:
        return True
    y, s2, log_z, _, _ = _discrete_gaussian_window(sigma2, shift, DISCRETE_GAUSSIAN_TAIL)
    m = -int(y[0])
    # log P(Y = j) for j in [-m - shift - 1, shift + m]
    j = np.arange(-m - shift - 1, shift + m + 1, dtype=np.float64)
    lp = -(j * j) / (2.0 * s2) - log_z
    le = np.logaddexp.accumulate(lp)  # log P(Y <= j)
    ge = np.logaddexp.accumulate(lp[::-1])[::-1]  # log P(Y >= j)
    iy = y + m + shift + 1  # index of j = y
    log_alpha = ge[iy]  # P(Y >= y)
    log_one_minus_alpha = le[iy - 1]  # P(Y <= y - 1)
    log_beta = le[iy - shift - 1]  # Q(Y < y) = P(Y <= y - shift - 1)
    log_power = ge[iy - shift]  # Q(Y >= y) = P(Y >= y - shift)
    floor_ = math.log(1e-300)
    ok = (log_alpha > floor_) & (log_one_minus_alpha > floor_) & (log_beta > floor_) & (log_power > floor_)
    small_alpha = log_alpha < math.log(0.5)
    z = np.where(small_alpha, -special.ndtri(np.exp(np.where(small_alpha, log_alpha, 0.0))),
                 special.ndtri(np.exp(np.where(small_alpha, 0.0, log_one_minus_alpha))))
    low_beta = log_beta <= math.log(0.5)
    good = np.where(low_beta, log_beta >= special.log_ndtr(z - mu), log_power <= special.log_ndtr(mu - z))
    return bool(np.all(good | ~ok))
