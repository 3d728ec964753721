"""Noisy gradient descent and noisy Newton for bounded-psi M-estimators
[@avellamedina2023differentially; @avellamedina2025differentially, "Noisy Gradient Descent",
"Noisy Newton"].

Noisy GD: theta_{k+1} = theta_k - eta (g_n(theta_k) + sigma_g Z_k), g_n the mean of Psi(z_i, theta_k)
(``mestimation``), sigma_g = 2 B sqrt(K)/(n mu). Noisy Newton: theta_{k+1} = theta_k - eta
(H~_k)^{-1} (g_n(theta_k) + sigma_g N_k), H~_k = M_n(theta_k) + W_k released on its upper triangle
with noise sqrt(2) Bbar sqrt(2K)/(n mu) and sigma_g = 2 B sqrt(2K)/(n mu), H~_k raised to eigenvalues
>= ``hessian_floor`` (post-processing). ``mu`` is the GDP parameter of the slides' algorithm with
continuous noise: each release is then (mu/sqrt(K))-GDP (GD) or (mu/sqrt(2K))-GDP (Newton), and the
K (or 2K) releases compose to mu-GDP [@dong2022gaussian, Cor. 3.3].

Releases are float-safe: each is the catalogue's lattice ``Gaussian`` (``_release``) on a query whose
L2 sensitivity, replace-one with n public, is 2B/n (gradient) or sqrt(2) Bbar/n (Hessian); the
declared ``guarantee()`` composes the catalogue's guarantees of those lattice releases with
``accountant.compose``: a verified GDP per release when p = 1 (so sqrt(K) mu_k-GDP in all, a hair
above mu), zCDP when p > 1 (the catalogue does not claim GDP for vector lattice releases; rho is a
hair above mu^2/2). With ``inference_mu`` the private sandwich (``inference``) is released at theta_K
and the fit carries corrected intervals.

Step sizes: GD needs 0 < eta < 2/Bbar (Bbar bounds the largest eigenvalue of every mean Hessian:
the classical stability range; the slides' analysis takes eta <= 1/Bbar); Newton 0 < eta <= 1.
Iterations: ``default_iterations`` is the slides' rule K = ceil(3 log n) for GD and
ceil(3 log log n) for Newton (constants ours).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar, Literal, TypeVar

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import GDP, Guarantee, calibrate, compose
from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real

from ..base import Mechanism, OutputSpec, check_rng
from ..noise import Gaussian
from .inference import (
    BatchFit,
    GDCorrection,
    PrivateFit,
    gd_noise_covariance,
    newton_noise_covariance,
    private_sandwich,
    sandwich_mechanisms,
)
from .mestimation import BoundedPsiModel
from .release import floor_eigenvalues, lattice_release, mean_mechanism, release_symmetric

__all__ = ["NoisyGD", "NoisyNewton", "default_iterations"]

Method = Literal["gd", "newton"]
OptT = TypeVar("OptT", bound="_NoisyOptimiser")
#: Largest number of iterations accepted.
MAX_ITERATIONS = 100_000


def default_iterations(n: int, method: Method) -> int:
    """K = ceil(3 log n) for noisy GD and ceil(3 log log n) for noisy Newton (at least 2)
    [@avellamedina2023differentially, Thms 3.2, 4.2: K of order log n and log log n]."""
    n = check_count("n", n, low=3)
    if method == "gd":
        return max(2, math.ceil(3.0 * math.log(n)))
    if method == "newton":
        return max(2, math.ceil(3.0 * math.log(math.log(n))))
    raise ValueError(f"method must be 'gd' or 'newton', got {method!r}")


@dataclass(frozen=True)
class _NoisyOptimiser(Mechanism):
    model: BoundedPsiModel
    n: int
    mu: float
    iterations: int
    step: float = 1.0
    theta0: tuple[float, ...] | None = None
    inference_mu: float | None = None
    hessian_floor: float | None = None
    _cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    method: ClassVar[Method] = "gd"

    def __post_init__(self) -> None:
        if not isinstance(self.model, BoundedPsiModel):
            raise TypeError(f"model must be a BoundedPsiModel (HuberLocation, HuberRegression, "
                            f"LogisticRegression), got {type(self.model).__name__}")
        check_count("n", self.n, low=1, high=10**12)
        check_real("mu", self.mu, low=0.0, high=1e6, low_open=True)
        check_count("iterations", self.iterations, low=1, high=MAX_ITERATIONS)
        if self.inference_mu is not None:
            check_real("inference_mu", self.inference_mu, low=0.0, high=1e6, low_open=True)
        if self.hessian_floor is not None:
            check_real("hessian_floor", self.hessian_floor, low=0.0, high=1e12, low_open=True)
        object.__setattr__(self, "theta0", self.model.start(self.theta0))
        self._check_step()

    def _check_step(self) -> None:
        raise NotImplementedError

    # ----- declaration ------------------------------------------------------------------------------
    @property
    def floor(self) -> float:
        """Least eigenvalue kept in a released Hessian or bread (default 1e-2 Bbar)."""
        return 1e-2 * self.model.hess_bound if self.hessian_floor is None else self.hessian_floor

    @property
    def sensitivity(self) -> Any:
        """L2 sensitivity of one gradient release, 2B/n (replace-one, n public)."""
        return 2 * sympy.nsimplify(self.model.grad_bound) / self.n

    @property
    def sigma_gradient(self) -> float:
        """Noise standard deviation on the mean gradient (before the lattice)."""
        raise NotImplementedError

    @cached_property
    def gradient_mechanism(self) -> Gaussian:
        """The catalogue release of one mean gradient."""
        b = self.model.grad_bound
        return mean_mechanism(self.n, self.model.dim, 2.0 * b / self.n, b, self.sigma_gradient,
                              "mean of per-example Psi (L2 norm <= B)")

    def _step_guarantees(self) -> list[Guarantee]:
        return [self.gradient_mechanism.closed_form_guarantee()]

    def _inference_guarantees(self) -> list[Guarantee]:
        if self.inference_mu is None:
            return []
        return [m.closed_form_guarantee() for m in sandwich_mechanisms(self.model, self.n, self.inference_mu)]

    def guarantee(self) -> Guarantee:
        """Composition of every release: K iterations (and the sandwich with ``inference_mu``)."""
        if "guarantee" not in self._cache:
            parts = self._step_guarantees() * self.iterations + self._inference_guarantees()
            self._cache["guarantee"] = compose(parts)
        g: Guarantee = self._cache["guarantee"]
        return g

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("continuous", (self.model.dim,), "the estimate theta_K")

    # ----- fitting -----------------------------------------------------------------------------------
    def _start(self, r: int) -> FloatArray:
        t0 = np.zeros(self.model.dim) if self.theta0 is None else np.asarray(self.theta0)
        return np.asarray(np.broadcast_to(t0, (r, self.model.dim)).copy(), dtype=np.float64)

    def _iterate(self, x: FloatArray, y: FloatArray,
                 rng: np.random.Generator) -> tuple[FloatArray, FloatArray]:
        """(theta_K, the matrix the noise correction needs) on the batch."""
        raise NotImplementedError

    def _correction(self, bread: FloatArray, last: FloatArray) -> FloatArray:
        raise NotImplementedError

    def fit_batch(self, x: ArrayLike, y: ArrayLike, rng: np.random.Generator) -> BatchFit:
        """Independent fits on r datasets x (r, n, p), y (r, n), each validated against the model's
        domain (vectorised over the datasets: a simulation's replications)."""
        rng = check_rng(rng)
        xa, ya = self.model.check_batch(x, y, self.n)
        return self._fit(xa, ya, rng)

    def _fit(self, x: FloatArray, y: FloatArray, rng: np.random.Generator) -> BatchFit:
        theta, last = self._iterate(x, y, rng)
        if self.inference_mu is None:
            return BatchFit(theta, self.guarantee(), self.iterations)
        bread, v = private_sandwich(self.model, self.n, self.inference_mu, theta, x, y, self.floor, rng)
        naive = v / self.n
        cov = naive + self._correction(bread, last)
        return BatchFit(theta, self.guarantee(), self.iterations, cov, naive)

    def _data(self, data: ArrayLike) -> tuple[FloatArray, FloatArray]:
        x, y = self.model.split(data)
        if x.shape[0] != self.n:
            raise ValueError(f"data has {x.shape[0]} records; this estimator is declared for n = {self.n} "
                             "(replace-one adjacency: n is public)")
        return x, y

    def fit(self, data: ArrayLike, rng: np.random.Generator) -> PrivateFit:
        """One private fit: the estimate, its guarantee and (with ``inference_mu``) its intervals."""
        rng = check_rng(rng)
        x, y = self._data(data)
        return self._fit(x[None], y[None], rng).fit(0)

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x, y = self._data(data)
        theta, _ = self._iterate(np.broadcast_to(x, (m, *x.shape)), np.broadcast_to(y, (m, y.size)), rng)
        return theta

    # ----- calibration ------------------------------------------------------------------------------
    @classmethod
    def calibrated(cls: type[OptT], model: BoundedPsiModel, n: int, target: Guarantee, iterations: int,
                   step: float = 1.0, inference: bool = True, tol: float = 1e-6, **kwargs: Any) -> OptT:
        """The estimator with the largest mu (and ``inference_mu = mu`` when ``inference``) whose
        composed guarantee implies ``target`` (``accountant.calibrate``, to a relative ``tol``). The
        search starts just below mu0 (then at mu0/4), the mu at which the continuous-noise algorithm
        (sqrt(1 + 2 inference) mu-GDP) meets the target exactly. GDP targets need p = 1: for p > 1
        the declared guarantee is zCDP."""
        if isinstance(target, GDP) and model.dim > 1:
            raise ValueError("a GDP target needs p = 1: vector lattice releases declare zCDP; calibrate "
                             "to a ZCDP or ApproxDP target")

        def make(mu: float) -> OptT:
            return cls(model, n, mu, iterations, step, inference_mu=mu if inference else None, **kwargs)

        total0 = calibrate(GDP, target, (1e-6, 1e3), increasing=True)
        mu0 = total0 / math.sqrt(3.0 if inference else 1.0)
        def search(lo: float) -> float:
            return calibrate(lambda m: make(m).guarantee(), target, (lo, mu0 * (1.0 + 1e-9)),
                             increasing=True, tol=tol)

        try:  # a scalar release declares a GDP within 0.1% of the continuous one: a narrow bracket
            return make(search(mu0 * 0.99))
        except ValueError:
            return make(search(mu0 / 4.0))


@dataclass(frozen=True)
class NoisyGD(_NoisyOptimiser):
    """Noisy gradient descent (module docstring); ``NoisyGD(model, n, mu, iterations, step)``."""

    step: float = 1.0
    gd_correction: GDCorrection = "propagated"

    method: ClassVar[Method] = "gd"

    def _check_step(self) -> None:
        high = 2.0 / self.model.hess_bound
        check_real("step", self.step, low=0.0, high=high, low_open=True, high_open=True)
        if self.gd_correction not in ("propagated", "slides"):
            raise ValueError(f"gd_correction must be 'propagated' or 'slides', got {self.gd_correction!r}")

    @property
    def sigma_gradient(self) -> float:
        return 2.0 * self.model.grad_bound * math.sqrt(self.iterations) / (self.n * self.mu)

    def _iterate(self, x: FloatArray, y: FloatArray,
                 rng: np.random.Generator) -> tuple[FloatArray, FloatArray]:
        theta = self._start(x.shape[0])
        mech = self.gradient_mechanism
        for _ in range(self.iterations):
            g = lattice_release(mech, self.model.mean_gradient(theta, x, y), rng)
            theta = theta - self.step * g
        return theta, theta

    def _correction(self, bread: FloatArray, last: FloatArray) -> FloatArray:
        return gd_noise_covariance(bread, self.step, self.sigma_gradient, self.iterations, self.gd_correction)


@dataclass(frozen=True)
class NoisyNewton(_NoisyOptimiser):
    """Damped noisy Newton (module docstring); ``NoisyNewton(model, n, mu, iterations, step)``."""

    method: ClassVar[Method] = "newton"

    def _check_step(self) -> None:
        check_real("step", self.step, low=0.0, high=1.0, low_open=True)

    @property
    def sigma_gradient(self) -> float:
        return 2.0 * self.model.grad_bound * math.sqrt(2 * self.iterations) / (self.n * self.mu)

    @property
    def sigma_hessian(self) -> float:
        return math.sqrt(2.0) * self.model.hess_bound * math.sqrt(2 * self.iterations) / (self.n * self.mu)

    @cached_property
    def hessian_mechanism(self) -> Gaussian:
        """The catalogue release of one mean Hessian (upper triangle)."""
        p = self.model.dim
        bb = self.model.hess_bound
        return mean_mechanism(self.n, p * (p + 1) // 2, math.sqrt(2.0) * bb / self.n, bb, self.sigma_hessian,
                              "mean of per-example Hessians (upper triangle, Frobenius <= Bbar)")

    def _step_guarantees(self) -> list[Guarantee]:
        return [self.gradient_mechanism.closed_form_guarantee(),
                self.hessian_mechanism.closed_form_guarantee()]

    def _iterate(self, x: FloatArray, y: FloatArray,
                 rng: np.random.Generator) -> tuple[FloatArray, FloatArray]:
        theta = self._start(x.shape[0])
        gm, hm = self.gradient_mechanism, self.hessian_mechanism
        hess = np.zeros((x.shape[0], self.model.dim, self.model.dim))
        for _ in range(self.iterations):
            g = lattice_release(gm, self.model.mean_gradient(theta, x, y), rng)
            noisy = release_symmetric(hm, self.model.mean_hessian(theta, x, y), rng)
            hess = floor_eigenvalues(noisy, self.floor)
            theta = theta - self.step * np.linalg.solve(hess, g[..., None])[..., 0]
        return theta, hess

    def _correction(self, bread: FloatArray, last: FloatArray) -> FloatArray:
        return newton_noise_covariance(last, self.step, self.sigma_gradient, self.iterations)

