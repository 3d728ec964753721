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
from typing import TYPE_CHECKING, Any, ClassVar, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accountant.core.codec import Codec
from accountant.core.hull import lower_convex_hull
from accountant.core.rounding import LIBM_REL
from accountant.core.types import UNIT_ROUNDOFF, FloatArray
from accountant.core.validation import as_alpha, as_float_array, check_real

if TYPE_CHECKING:
    from matplotlib.axes import Axes


#: Tolerance used when checking that user-supplied points form a trade-off function.
VALIDITY_TOL = 1e-9


#: Safety margins of the sampled lower envelope (see ``_from_convex_samples``).
SAMPLE_MARGIN = 4.5e-16


KINK_MARGIN = 1e-14


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
        if type(alpha) is float and 0.0 <= alpha <= 1.0:  # one level: no array validation
            b = float(self._beta(np.array([alpha]))[0])
            # clipped to [0, 1] as np.clip does (NaN and -0.0 kept)
            return b if 0.0 <= b <= 1.0 else (0.0 if b < 0.0 else (1.0 if b > 1.0 else b))
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
            best = np.maximum(best, 1.0 - b[k] - term + (LIBM_REL + 4.0 * UNIT_ROUNDOFF) * (1.0 - b[k]))
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
        except OverflowError as exc:  # e.g. an int too large for a float
            raise ValueError(f"tradeoff must map alpha in [0, 1] to finite beta in [0, 1 - alpha]; "
                             f"on an array of alpha it raised OverflowError: {exc}") from exc
        except (TypeError, ValueError) as exc:
            raise TypeError("tradeoff must map an array of alpha in [0,1] to an array of beta") from exc
        check_tradeoff_values(grid, vals)
        env = PiecewiseLinearTradeoff._from_convex_samples(grid, vals)
        object.__setattr__(self, "_envelope", env)

    def _beta(self, alpha: FloatArray) -> FloatArray:
        return np.asarray(self.fn(alpha), dtype=np.float64).reshape(alpha.shape)

    def lower_envelope(self, grid: FloatArray | None = None) -> PiecewiseLinearTradeoff:
        return self._envelope if grid is None else super().lower_envelope(grid)

    def __repr__(self) -> str:
        return f"CallableTradeoff({function_name(self.fn)})"


def function_name(fn: Any) -> str:
    """A function's readable name for reprs (never its address): ``module.qualname``."""
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    return name.replace("<locals>.", "")


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
    #: What the profile is (e.g. "advanced composition of 100 releases"), for reprs.
    label: str = ""
    _lines: tuple[FloatArray, FloatArray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        e = as_float_array("eps_grid", self.eps_grid).ravel()
        if e.size == 0 or not np.isfinite(e).all():
            raise ValueError(f"eps_grid must be a non-empty array of finite reals, got {e!r}")
        d = np.array([_profile_value(self.delta_fn, float(x)) for x in e])
        if ((d < 0) | (d > 1) | np.isnan(d)).any():
            raise ValueError("delta_fn must return values in [0, 1]")
        keep = d < 1.0
        e, d = e[keep], d[keep]
        # each line rounded outward, so that the curve lies at or below the exact one: e^{+-eps}
        # (numpy's exp, LIBM_REL), 1 - delta, the products and the sum in ``_beta`` (u each)
        # are covered by slopes steeper and intercepts lower by r
        r = 2.0 * LIBM_REL + 8.0 * UNIT_ROUNDOFF
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

    def __repr__(self) -> str:
        what = self.label or f"the profile {function_name(self.delta_fn)}"
        e = np.asarray(self.eps_grid)
        return (f"ProfileTradeoff({what}, sampled at {e.size} eps in [{float(e.min()):g}, "
                f"{float(e.max()):g}])")


def _profile_value(delta_fn: Callable[[float], float], eps: float) -> float:
    """delta_fn(eps) as a float, or TypeError naming delta_fn when it is not one real number."""
    value = delta_fn(eps)
    arr = np.asarray(value) if not isinstance(value, (str, bytes)) else None
    if arr is None or arr.ndim != 0 or arr.dtype.kind not in "iuf" or isinstance(value, bool):
        raise TypeError(f"delta_fn must return one real number in [0, 1] for each eps, got "
                        f"{value!r} at eps={eps!r}")
    try:
        return float(arr)
    except OverflowError:
        raise ValueError(f"delta_fn must return values in [0, 1], got {value!r} at eps={eps!r}") from None


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


#: The JSON forms of trade-off curves (an ``FDP`` guarantee is stored with its curve's), one kind per
#: curve type, registered where the type is declared (``accountant.register_curve`` for a new one).
CURVES: Codec[TradeoffFunction] = Codec("trade-off curve", TradeoffFunction, "accountant.register_curve")


def _knots(d: dict[str, Any], name: str) -> FloatArray:
    return np.asarray(as_float_array(name, d[name]), dtype=np.float64)


CURVES.register(PiecewiseLinearTradeoff, "piecewise_linear",
                encode=lambda f: {"alphas": f.alphas.tolist(), "betas": f.betas.tolist()},
                decode=lambda d: PiecewiseLinearTradeoff(_knots(d, "alphas"), _knots(d, "betas")))


#: What to do with a curve that holds a function (the message of the TypeError).
ENVELOPE_ADVICE = ("store a sound piecewise-linear lower bound of it instead, FDP(f.lower_envelope()), "
                   "or tabulate the function into a registered curve type (accountant.register_curve)")


CURVES.refuse(CallableTradeoff, "its values come from a Python function, which JSON cannot hold; "
              + ENVELOPE_ADVICE)


CURVES.refuse(ProfileTradeoff, "its privacy profile is a Python function, which JSON cannot hold; "
              + ENVELOPE_ADVICE)
