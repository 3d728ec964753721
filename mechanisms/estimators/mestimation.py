"""M-estimators with a bounded psi, the models the private optimisers of ``gradient`` run on.

An M-estimator solves (1/n) sum_i Psi(z_i, theta) = 0 [@huber1964robust]; its influence function is
M^{-1} Psi, so a bounded Psi bounds what one record can do [@avellamedina2021privacy]. Every model
here has per-example gradient and Hessian of the form

    Psi(z_i, theta) = s_i x_i,      dPsi/dtheta (z_i, theta) = h_i x_i x_i^T,   h_i >= 0,

with scalars s_i, h_i computed from the record z_i = (x_i, y_i) and theta, and declares the bounds

    ||Psi(z, theta)||_2 <= B   (``grad_bound``),    h ||x||_2^2 <= Bbar   (``hess_bound``)

over every record of its declared domain and every theta [@avellamedina2023differentially,
Cond. 1]. Under replace-one adjacency (n public) they give the L2 sensitivities of the released
averages: the mean gradient moves by at most 2B/n; the mean Hessian and the mean outer product
Psi Psi^T, rank-one positive semi-definite per record, by at most sqrt(2) Bbar/n and sqrt(2) B^2/n
in Frobenius norm (||A - A'||_F^2 = ||A||_F^2 + ||A'||_F^2 - 2 tr(A A') and tr(A A') >= 0 for
PSD A, A'), hence in the L2 norm of their upper triangles.

- ``HuberLocation(c, scale)``: loss scale rho_c((y - theta)/scale), s = -psi_c, h = psi_c'/scale,
  B = c, Bbar = 1/scale.
- ``HuberRegression(p, c, scale, design_bound, weights)``: loss scale rho_c(r/scale) w(x), r = y - x^T beta,
  w(x) = 1 (``weights="none"``, needs ``design_bound`` R: B = c R, Bbar = R^2/scale) or the Mallows
  weight w(x) = min(1, 1/||x||^2) of the slides (B = c min(1, R), Bbar = min(1, R^2)/scale, R = inf
  allowed) [@avellamedina2023differentially, Sec. 5].
- ``LogisticRegression(p, clip, design_bound)``: the clipped likelihood Psi = h_c(grad log-lik), h_c(z) =
  z min(1, c/||z||) the multivariate Huber function; the score (pi - y) x is parallel to x, so a
  clipped record has zero Jacobian and h = pi (1 - pi) 1[|pi - y| ||x|| <= c]; B = c, Bbar = R^2/4.

Arrays are batched over replications: X (r, n, p), y (r, n), theta (r, p).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from accountant.core.types import FloatArray
from accountant.core.validation import as_float_array, check_count, check_real

__all__ = [
    "BoundedPsiModel",
    "HuberLocation",
    "HuberRegression",
    "LogisticRegression",
    "fit_nonprivate",
    "huber_psi",
]

Weights = Literal["none", "mallows"]


def huber_psi(r: FloatArray, c: float) -> FloatArray:
    """psi_c(r) = max(-c, min(c, r)), the derivative of Huber's loss [@huber1964robust]."""
    return np.clip(r, -c, c)


@dataclass(frozen=True)
class BoundedPsiModel(ABC):
    """A model with per-example Psi = s x and Jacobian h x x^T (module docstring)."""

    @property
    @abstractmethod
    def dim(self) -> int:
        """p, the number of parameters."""

    @property
    @abstractmethod
    def grad_bound(self) -> float:
        """B >= ||Psi(z, theta)||_2 for every record of the domain and every theta."""

    @property
    @abstractmethod
    def hess_bound(self) -> float:
        """Bbar >= h ||x||_2^2, the Frobenius norm of one record's Jacobian."""

    @abstractmethod
    def scores(self, theta: FloatArray, x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(s, h), each (r, n), for theta (r, p), x (r, n, p), y (r, n)."""

    @abstractmethod
    def split(self, data: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """One dataset as (x (n, p), y (n,)), validated against the declared domain."""

    @abstractmethod
    def check(self, x: FloatArray, y: FloatArray) -> None:
        """Raise ``ValueError`` unless every record of the batch x (r, n, p), y (r, n) lies in the
        declared domain (finite, design rows within the bound, labels in range)."""

    def check_batch(self, x: ArrayLike, y: ArrayLike, n: int) -> tuple[FloatArray, FloatArray]:
        """r datasets of n records, x (r, n, p) and y (r, n), as float arrays: their shapes checked,
        then every record against the declared domain (``check``)."""
        xa = np.asarray(x, dtype=np.float64)
        ya = np.asarray(y, dtype=np.float64)
        p = self.dim
        if xa.ndim != 3 or xa.shape[1:] != (n, p) or ya.shape != xa.shape[:2]:
            raise ValueError(f"x must have shape (r, n, p) = (r, {n}, {p}) and y (r, {n}), "
                             f"got {xa.shape} and {ya.shape}")
        self.check(xa, ya)
        return xa, ya

    def _split_rows(self, data: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Rows [x_1, ..., x_p, y] as (x, y), checked by ``check``."""
        p = self.dim
        arr = as_float_array("data", data)
        if arr.ndim != 2 or arr.shape[1] != p + 1 or arr.shape[0] < 1:
            raise ValueError(f"data must have shape (n, p + 1) = (n, {p + 1}) (rows [x, y]), "
                             f"got shape {arr.shape}")
        x, y = arr[:, :-1], arr[:, -1]
        self.check(x[None], y[None])
        return x, y

    def start(self, theta0: tuple[float, ...] | None) -> tuple[float, ...] | None:
        """A public starting point, validated: p finite reals (None: the origin)."""
        if theta0 is None:
            return None
        t0 = tuple(check_real("theta0", float(v), low=-1e12, high=1e12) for v in theta0)
        if len(t0) != self.dim:
            raise ValueError(f"theta0 must have p = {self.dim} entries, got {len(t0)}")
        return t0

    def _check_design(self, x: FloatArray, bound: float) -> None:
        if not np.isfinite(x).all():
            raise ValueError("data: the design must be finite (no NaN or inf)")
        if math.isfinite(bound):
            norms = np.sqrt(np.einsum("...j,...j->...", x, x))
            worst = float(norms.max(initial=0.0))
            if worst > bound:
                raise ValueError(f"data: a design row has ||x||_2 = {worst:.6g}, outside the declared "
                                 f"design_bound {bound:.6g}")

    # ----- averages ---------------------------------------------------------------------------------
    def mean_gradient(self, theta: FloatArray, x: FloatArray, y: FloatArray) -> FloatArray:
        """(1/n) sum_i Psi(z_i, theta), shape (r, p)."""
        s, _ = self.scores(theta, x, y)
        return np.asarray(np.einsum("rn,rnp->rp", s, x) / x.shape[1], dtype=np.float64)

    def mean_hessian(self, theta: FloatArray, x: FloatArray, y: FloatArray) -> FloatArray:
        """M_n(theta) = (1/n) sum_i h_i x_i x_i^T, shape (r, p, p)."""
        _, h = self.scores(theta, x, y)
        return np.asarray(np.einsum("rn,rnp,rnq->rpq", h, x, x) / x.shape[1], dtype=np.float64)

    def mean_outer(self, theta: FloatArray, x: FloatArray, y: FloatArray) -> FloatArray:
        """Q_n(theta) = (1/n) sum_i Psi_i Psi_i^T, shape (r, p, p)."""
        s, _ = self.scores(theta, x, y)
        return np.asarray(np.einsum("rn,rnp,rnq->rpq", s * s, x, x) / x.shape[1], dtype=np.float64)

    def per_example_gradients(self, theta: FloatArray, x: FloatArray, y: FloatArray) -> FloatArray:
        """Psi(z_i, theta), shape (r, n, p) (for tests and for DP-SGD)."""
        s, _ = self.scores(theta, x, y)
        return np.asarray(s[..., None] * x, dtype=np.float64)


def _positive(name: str, value: float) -> float:
    return check_real(name, value, low=0.0, high=1e12, low_open=True)


@dataclass(frozen=True)
class HuberRegression(BoundedPsiModel):
    """Huber regression y = x^T beta + u with a fixed (public) ``scale`` of the errors; records are
    rows [x_1, ..., x_p, y] (module docstring for B and Bbar)."""

    p: int
    c: float = 1.345
    scale: float = 1.0
    design_bound: float = math.inf
    weights: Weights = "none"

    def __post_init__(self) -> None:
        check_count("p", self.p, low=1, high=10_000)
        _positive("c", self.c)
        _positive("scale", self.scale)
        r = check_real("design_bound", self.design_bound, low=0.0, low_open=True, high=math.inf)
        if self.weights not in ("none", "mallows"):
            raise ValueError(f"weights must be 'none' or 'mallows', got {self.weights!r}")
        if self.weights == "none" and not math.isfinite(r):
            raise ValueError("design_bound must be finite with weights='none' (the gradient bound is "
                             "c * design_bound); use weights='mallows' for an unbounded design")

    @property
    def dim(self) -> int:
        return self.p

    @property
    def grad_bound(self) -> float:
        r = self.design_bound
        return self.c * (r if self.weights == "none" else min(1.0, r))

    @property
    def hess_bound(self) -> float:
        r2 = self.design_bound**2
        return (r2 if self.weights == "none" else min(1.0, r2)) / self.scale

    def _w(self, x: FloatArray) -> FloatArray:
        if self.weights == "none":
            return np.ones(x.shape[:-1])
        sq = np.einsum("...j,...j->...", x, x)
        return np.asarray(1.0 / np.maximum(1.0, sq), dtype=np.float64)

    def scores(self, theta: FloatArray, x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
        u = (y - np.einsum("rnp,rp->rn", x, theta)) / self.scale
        w = self._w(x)
        s = -huber_psi(u, self.c) * w
        h = (np.abs(u) <= self.c) * w / self.scale
        return np.asarray(s, dtype=np.float64), np.asarray(h, dtype=np.float64)

    def split(self, data: ArrayLike) -> tuple[FloatArray, FloatArray]:
        return self._split_rows(data)

    def check(self, x: FloatArray, y: FloatArray) -> None:
        self._check_design(x, self.design_bound)
        if not np.isfinite(y).all():
            raise ValueError("data: the responses must be finite (no NaN or inf)")


@dataclass(frozen=True)
class HuberLocation(BoundedPsiModel):
    """Huber's location M-estimator with a fixed (public) ``scale``: records are scalars; the
    regression on the constant design x = 1 (B = c, Bbar = 1/scale)."""

    c: float = 1.345
    scale: float = 1.0

    def __post_init__(self) -> None:
        _positive("c", self.c)
        _positive("scale", self.scale)

    @property
    def dim(self) -> int:
        return 1

    @property
    def grad_bound(self) -> float:
        return self.c

    @property
    def hess_bound(self) -> float:
        return 1.0 / self.scale

    def scores(self, theta: FloatArray, x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
        u = (y - theta[:, :1]) / self.scale
        return (np.asarray(-huber_psi(u, self.c), dtype=np.float64),
                np.asarray((np.abs(u) <= self.c) / self.scale, dtype=np.float64))

    def split(self, data: ArrayLike) -> tuple[FloatArray, FloatArray]:
        y = as_float_array("data", data)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1 or y.size < 1:
            raise ValueError(f"data must be a non-empty 1-d array of scalar records, got shape {y.shape}")
        x = np.ones((y.size, 1))
        self.check(x[None], y[None])
        return x, y

    def check(self, x: FloatArray, y: FloatArray) -> None:
        if not np.array_equal(x, np.ones_like(x)):
            raise ValueError("x: the design of a location model is the constant 1")
        if not np.isfinite(y).all():
            raise ValueError("data must be finite (no NaN or inf)")


@dataclass(frozen=True)
class LogisticRegression(BoundedPsiModel):
    """Logistic regression by the clipped likelihood: Psi = h_c((pi(x^T beta) - y) x), records are rows
    [x_1, ..., x_p, y] with y in {0, 1} and ||x||_2 <= ``design_bound`` (B = clip, Bbar = R^2/4)."""

    p: int
    clip: float = 1.0
    design_bound: float = 1.0

    def __post_init__(self) -> None:
        check_count("p", self.p, low=1, high=10_000)
        _positive("clip", self.clip)
        _positive("design_bound", self.design_bound)

    @property
    def dim(self) -> int:
        return self.p

    @property
    def grad_bound(self) -> float:
        return self.clip

    @property
    def hess_bound(self) -> float:
        return self.design_bound**2 / 4.0

    def scores(self, theta: FloatArray, x: FloatArray, y: FloatArray) -> tuple[FloatArray, FloatArray]:
        eta = np.einsum("rnp,rp->rn", x, theta)
        pi = special.expit(eta)
        resid = pi - y
        norm = np.abs(resid) * np.sqrt(np.einsum("rnp,rnp->rn", x, x))
        kept = norm <= self.clip
        factor = np.where(kept, 1.0, self.clip / np.where(kept, 1.0, norm))
        return (np.asarray(resid * factor, dtype=np.float64),
                np.asarray(pi * (1.0 - pi) * kept, dtype=np.float64))

    def split(self, data: ArrayLike) -> tuple[FloatArray, FloatArray]:
        return self._split_rows(data)

    def check(self, x: FloatArray, y: FloatArray) -> None:
        self._check_design(x, self.design_bound)
        if not np.isin(y, (0.0, 1.0)).all():
            raise ValueError("data: the responses of a logistic regression must be 0 or 1")


def fit_nonprivate(model: BoundedPsiModel, x: FloatArray, y: FloatArray, theta0: FloatArray | None = None,
                   iterations: int = 50) -> FloatArray:
    """The (non-private) M-estimate by damped Newton iterations on the batch x (r, n, p), y (r, n):
    the reference the private estimators are compared with. Halves a step while it does not reduce
    ||mean Psi||."""
    r, _, p = x.shape
    theta = np.zeros((r, p)) if theta0 is None else np.array(theta0, dtype=np.float64).reshape(r, p)
    ridge = 1e-10 * np.eye(p)
    for _ in range(check_count("iterations", iterations)):
        g = model.mean_gradient(theta, x, y)
        hm = model.mean_hessian(theta, x, y) + ridge
        step = np.linalg.solve(hm, g[..., None])[..., 0]
        norm0 = np.linalg.norm(g, axis=1)
        t = np.ones(r)
        for _ in range(30):
            cand = theta - t[:, None] * step
            worse = np.linalg.norm(model.mean_gradient(cand, x, y), axis=1) > norm0
            if not worse.any():
                break
            t = np.where(worse, t / 2.0, t)
        theta = theta - t[:, None] * step
    return theta
