"""Local-DP noisy gradient descent [@avellamedina2025differentially, "interactive noisy gradient
descent"; @duchi2013local].

Every user i holds one record z_i and, at each of K iterations, sends the server

    Psi~_i = clip_B(Psi(z_i, theta_k)) + sigma Z_{i,k},   Z_{i,k} ~ N(0, I_p),  sigma = 2 B sqrt(K) / mu,

clip_B(g) = g min(1, B/||g||_2); the server updates theta_{k+1} = theta_k - eta (1/n) sum_i Psi~_i. The
slides' update, with the noise inside the average, is exactly this.

Privacy, per user (local: the user's record against any other record, whatever the other users
hold). Two clipped gradients differ by at most 2B in L2, so one report is the Gaussian mechanism with
sensitivity 2B, (mu/sqrt(K))-GDP for continuous noise; the K reports, each at a theta_k that depends on
earlier reports only, compose adaptively to mu-GDP [@dong2022gaussian, Cor. 3.3]. The server's theta_K
is a post-processing of the reports, so it is as private for user i. Each report is the catalogue's
float-safe lattice Gaussian (``release.mean_mechanism`` with n = 1): its declared guarantee is a
verified GDP for p = 1 and zCDP for p > 1 (``LocalGradientRandomiser``), and ``LocalNoisyGD``
declares their K-fold composition (``accountant.compose``).

Accuracy. The noise in the averaged gradient has covariance sigma^2/n I_p: sqrt(n) times the central
``NoisyGD``'s (2 B sqrt(K)/(n mu)). Under local strong convexity and smoothness the slides state,
with probability >= 1 - tau, ||theta_K - theta_hat||_2 <~ log(n) B sqrt(p + log(n/tau)) / (mu sqrt(n))
(``local_noisy_gd_rate``). On a quadratic loss with eta = 1 (Huber's location with every residual
inside [-c, c]) theta_K = theta_hat - (1/n) sum_i sigma Z_{i,K-1} exactly: RMSE sigma/sqrt(n) per
coordinate, the closed form the tests check.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import Guarantee, compose
from accountant.core.types import FloatArray
from accountant.core.validation import as_float_array, check_count, check_real

from ..base import Mechanism, OutputSpec, check_rng
from ..noise import Gaussian
from ..rates import Rate
from .mestimation import BoundedPsiModel
from .release import lattice_release, mean_mechanism

__all__ = ["LocalGradientRandomiser", "LocalNoisyGD", "local_noisy_gd_rate"]

#: Largest number of iterations accepted.
MAX_ITERATIONS = 100_000


def clip_norm(g: FloatArray, bound: float) -> FloatArray:
    """g min(1, bound/||g||_2) row by row (the last axis is the vector)."""
    norms = np.sqrt(np.einsum("...j,...j->...", g, g))
    factor = np.minimum(1.0, bound / np.maximum(norms, np.finfo(np.float64).tiny))
    return np.asarray(g * factor[..., None], dtype=np.float64)


@dataclass(frozen=True)
class LocalGradientRandomiser(Mechanism):
    """One user's report: the gradient clipped to L2 norm ``bound`` plus lattice Gaussian noise of
    standard deviation ``sigma`` per coordinate (module docstring). Local adjacency: any two records;
    L2 sensitivity 2 ``bound``. Guarantee: the catalogue's lattice Gaussian's closed form, a verified
    GDP of about 2 bound/sigma for ``dim`` = 1, ``ZCDP`` of about (2 bound/sigma)^2/2 for ``dim`` > 1.
    ``data``: one gradient (``dim``,) or a stack of users' gradients (u, ``dim``), each randomised
    independently."""

    dim: int
    bound: float
    sigma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "dim", check_count("dim", self.dim, low=1, high=10_000))
        object.__setattr__(self, "bound", check_real("bound", self.bound, low=0.0, high=1e100, low_open=True))
        object.__setattr__(self, "sigma", check_real("sigma", self.sigma, low=0.0, high=1e100, low_open=True))

    @cached_property
    def mechanism(self) -> Gaussian:
        """The lattice Gaussian on one clipped gradient (sensitivity 2 bound, n = 1)."""
        return mean_mechanism(1, self.dim, 2.0 * self.bound, self.bound, self.sigma,
                              f"one gradient clipped to L2 norm {self.bound}")

    @property
    def sensitivity(self) -> Any:
        return 2 * sympy.nsimplify(self.bound)

    def guarantee(self) -> Guarantee:
        return self.mechanism.closed_form_guarantee()

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("discrete", (self.dim,), f"2^{self.mechanism.grid_exponent()} Z^{self.dim}")

    def clip(self, g: ArrayLike) -> FloatArray:
        """The gradients (rows) clipped to L2 norm ``bound``."""
        arr = as_float_array("data", g)
        if arr.shape[-1:] != (self.dim,) or arr.ndim > 2:
            raise ValueError(f"data must have shape ({self.dim},) or (u, {self.dim}), got {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError("data must be finite")
        return clip_norm(arr.reshape(-1, self.dim), self.bound)

    def randomise(self, gradients: FloatArray, rng: np.random.Generator) -> FloatArray:
        """Independent reports for the rows of ``gradients`` (rows, dim)."""
        return lattice_release(self.mechanism, self.clip(gradients), rng)

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        g = self.clip(data)
        if g.shape[0] != 1:
            raise ValueError("sample() takes one user's gradient; use randomise() for a stack of users")
        return self.randomise(np.repeat(g, m, axis=0), rng)

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        """The lattice Gaussian's log-ratio at the clipped gradients."""
        arr = self._validate_pair(y, (self.dim,))
        if self.dim == 1:
            arr = arr[:, 0]
        return self.mechanism.privacy_loss(arr, self.clip(data), self.clip(data2))


@dataclass(frozen=True)
class LocalNoisyGD(Mechanism):
    """Local-DP noisy gradient descent (module docstring): ``LocalNoisyGD(model, n, mu, iterations,
    step)``. Each user's K reports come from ``randomiser`` (sigma = 2 B sqrt(K)/mu); ``guarantee()``
    is their K-fold composition, per user (local) and hence for theta_K. 0 < step < 2/Bbar."""

    model: BoundedPsiModel
    n: int
    mu: float
    iterations: int
    step: float = 1.0
    theta0: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model, BoundedPsiModel):
            raise TypeError(f"model must be a BoundedPsiModel (HuberLocation, HuberRegression, "
                            f"LogisticRegression), got {type(self.model).__name__}")
        check_count("n", self.n, low=1, high=10**9)
        check_real("mu", self.mu, low=0.0, high=1e6, low_open=True)
        check_count("iterations", self.iterations, low=1, high=MAX_ITERATIONS)
        check_real("step", self.step, low=0.0, high=2.0 / self.model.hess_bound, low_open=True,
                   high_open=True)
        object.__setattr__(self, "theta0", self.model.start(self.theta0))

    @property
    def sigma(self) -> float:
        """Per-user noise standard deviation, 2 B sqrt(K)/mu."""
        return 2.0 * self.model.grad_bound * math.sqrt(self.iterations) / self.mu

    @cached_property
    def randomiser(self) -> LocalGradientRandomiser:
        return LocalGradientRandomiser(self.model.dim, self.model.grad_bound, self.sigma)

    @property
    def sensitivity(self) -> Any:
        """L2 sensitivity of one user's report, 2B."""
        return self.randomiser.sensitivity

    def guarantee(self) -> Guarantee:
        return compose([self.randomiser.guarantee()] * self.iterations)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("continuous", (self.model.dim,), "the estimate theta_K")

    def fit_batch(self, x: ArrayLike, y: ArrayLike, rng: np.random.Generator) -> FloatArray:
        """theta_K on r datasets x (r, n, p), y (r, n) at once (a simulation's replications)."""
        rng = check_rng(rng)
        xa, ya = self.model.check_batch(x, y, self.n)
        p = self.model.dim
        r = xa.shape[0]
        t0 = np.zeros(p) if self.theta0 is None else np.asarray(self.theta0)
        theta = np.asarray(np.broadcast_to(t0, (r, p)).copy(), dtype=np.float64)
        for _ in range(self.iterations):
            g = self.model.per_example_gradients(theta, xa, ya).reshape(-1, p)
            reports = self.randomiser.randomise(g, rng).reshape(r, self.n, p)
            theta = theta - self.step * reports.mean(axis=1)
        return theta

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x, y = self.model.split(data)
        if x.shape[0] != self.n:
            raise ValueError(f"data has {x.shape[0]} records; this estimator is declared for n = {self.n}")
        return self.fit_batch(np.broadcast_to(x, (m, *x.shape)), np.broadcast_to(y, (m, y.size)), rng)


def local_noisy_gd_rate(n: int, p: int, grad_bound: float, mu: float, tau: float = 0.05) -> Rate:
    """log(n) B sqrt(p + log(n/tau)) / (mu sqrt(n)): the slides' bound on ||theta_K - theta_hat||_2, with
    probability >= 1 - tau, for interactive (local) noisy gradient descent
    [@avellamedina2025differentially, "interactive noisy gradient descent"]."""
    n = check_count("n", n, low=2, high=10**12)
    p = check_count("p", p, low=1, high=10_000)
    b = check_real("grad_bound", grad_bound, low=0.0, high=1e100, low_open=True)
    mu = check_real("mu", mu, low=0.0, high=1e6, low_open=True)
    tau = check_real("tau", tau, low=0.0, high=1.0, low_open=True, high_open=True)
    value = math.log(n) * b * math.sqrt(p + math.log(n / tau)) / (mu * math.sqrt(n))
    return Rate(value, "upper", f"||theta_K - theta_hat||_2 (probability >= {1 - tau:g})",
                "slides, interactive noisy gradient descent",
                ("local strong convexity and smoothness of the loss", "K >= C log n iterations",
                 "step <= 1/(2 tau_2)"))
