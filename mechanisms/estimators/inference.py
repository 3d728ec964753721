"""Private inference for noisy M-estimation: the private sandwich variance, corrected GDP confidence
intervals and the Wald test [@avellamedina2023differentially; @avellamedina2025differentially,
"Private sandwich formula", "GDP Confidence Interval Coverage"].

Sandwich. At the private estimate theta_K (public after its release), the bread M_n(theta_K) and the
meat Q_n(theta_K) (``mestimation``) are released by the matrix Gaussian mechanism [@dwork2014analyze]
with noise sqrt(2) Bbar/(mu n) and sqrt(2) B^2/(mu n) on their upper triangles (sensitivities of
``mestimation``; the slides' 2 Bbar and 2 B^2 are the triangle-inequality bounds), each a mu-level
release, so that with the estimate the analysis is sqrt(3) mu-GDP for the continuous noise
[@avellamedina2025differentially, Prop. "private sandwich formula"]. V = M~^{-1} Q~ M~^{-1}, with M~
raised to eigenvalues >= ``floor`` and Q~ to >= 0 (post-processing).

Correction. theta_K carries the optimiser's noise besides the sampling error V/n. Linearised around
the M-estimate, with A = I - eta M~ (gradient descent) the injected noise sigma_g N_k enters as
theta_K - theta_hat ~ A^K (theta_0 - theta_hat) - eta sigma_g sum_k A^{K-1-k} N_k, so its covariance is

    C_GD = eta^2 sigma_g^2 sum_{j<K} A^{2j};

for damped noisy Newton with step eta, theta_{k+1} - theta_hat ~ (1 - eta)(theta_k - theta_hat)
- eta sigma_g H~^{-1} N_k, so C_Newton = eta^2 sigma_g^2 sum_{j<K} (1 - eta)^{2j} H~^{-2}, H~ the last
released Hessian; at eta = 1 this is the slides' C_Newton. (The slides' GD correction
8 eta^2 B^2 K/(n^2 mu^2) I is C_GD's last-step term eta^2 sigma_g^2 I, times two; ``gd_correction=
"slides"`` uses it.) The corrected covariance of theta_K is V/n + C; the naive one, V/n, ignores the
optimiser's noise. Intervals are theta_K,j +- z_{(1+level)/2} sqrt(cov_jj): asymptotic, not exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special, stats

from accountant import Guarantee
from accountant.core.types import FloatArray
from accountant.core.validation import as_float_array, check_real

from ..noise import Gaussian
from .mestimation import BoundedPsiModel
from .release import floor_eigenvalues, mean_mechanism, release_symmetric

__all__ = ["BatchFit", "PrivateFit", "WaldTest", "gd_noise_covariance", "newton_noise_covariance",
           "sandwich_mechanisms", "wald_test"]

GDCorrection = Literal["propagated", "slides"]


def sandwich_mechanisms(model: BoundedPsiModel, n: int, mu: float) -> tuple[Gaussian, Gaussian]:
    """The two releases of the private sandwich at level mu: (bread M~, meat Q~), lattice Gaussians
    on the upper triangles with noise sqrt(2) Bbar/(mu n) and sqrt(2) B^2/(mu n)."""
    p = model.dim
    d = p * (p + 1) // 2
    l2_m = math.sqrt(2.0) * model.hess_bound / n
    l2_q = math.sqrt(2.0) * model.grad_bound**2 / n
    bread = mean_mechanism(n, d, l2_m, model.hess_bound, l2_m / mu, "sandwich bread M_n (upper triangle)")
    meat = mean_mechanism(n, d, l2_q, model.grad_bound**2, l2_q / mu, "sandwich meat Q_n (upper triangle)")
    return bread, meat


def private_sandwich(model: BoundedPsiModel, n: int, mu: float, theta: FloatArray, x: FloatArray,
                     y: FloatArray, floor: float, rng: np.random.Generator) -> tuple[FloatArray, FloatArray]:
    """(M~ floored, V = M~^{-1} Q~ M~^{-1}) at theta (r, p), each (r, p, p)."""
    bread, meat = sandwich_mechanisms(model, n, mu)
    m_t = floor_eigenvalues(release_symmetric(bread, model.mean_hessian(theta, x, y), rng), floor)
    q_t = floor_eigenvalues(release_symmetric(meat, model.mean_outer(theta, x, y), rng), 0.0)
    m_inv = np.linalg.inv(m_t)
    return m_t, np.asarray(m_inv @ q_t @ m_inv, dtype=np.float64)


def gd_noise_covariance(bread: FloatArray, step: float, sigma: float, iterations: int,
                        rule: GDCorrection = "propagated") -> FloatArray:
    """C_GD = eta^2 sigma^2 sum_{j<K} (I - eta M)^{2j} for symmetric M (r, p, p) (module docstring);
    ``rule="slides"``: 2 eta^2 sigma^2 I."""
    r, p, _ = bread.shape
    if rule == "slides":
        return np.tile(2.0 * step**2 * sigma**2 * np.eye(p), (r, 1, 1))
    w, v = np.linalg.eigh(bread)
    a2 = (1.0 - step * w) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        geo = np.where(np.abs(1.0 - a2) > 1e-12, (1.0 - a2**iterations) / (1.0 - a2), float(iterations))
    lam = step**2 * sigma**2 * geo
    return np.asarray(np.einsum("rij,rj,rkj->rik", v, lam, v), dtype=np.float64)


def newton_noise_covariance(hessian: FloatArray, step: float, sigma: float, iterations: int) -> FloatArray:
    """C_Newton = eta^2 sigma^2 sum_{j<K} (1 - eta)^{2j} H^{-2} for the floored released Hessian H."""
    a2 = (1.0 - step) ** 2
    geo = float(iterations) if a2 == 1.0 else float((1.0 - a2**iterations) / (1.0 - a2))
    h_inv = np.linalg.inv(hessian)
    return np.asarray(step**2 * sigma**2 * geo * (h_inv @ h_inv), dtype=np.float64)


def _z(level: float) -> float:
    level = check_real("level", level, low=0.0, high=1.0, low_open=True, high_open=True)
    return float(special.ndtri(0.5 + level / 2.0))


@dataclass(frozen=True)
class WaldTest:
    """W = (R theta - r)^T (R C R^T)^{-1} (R theta - r), asymptotically chi^2 with ``df`` degrees of
    freedom under H0: R theta = r; ``p_value`` = P(chi^2_df >= W)."""

    statistic: float
    df: int
    p_value: float


def wald_test(estimate: ArrayLike, covariance: ArrayLike, restriction: ArrayLike | None = None,
              value: ArrayLike | None = None) -> WaldTest:
    """The Wald test of H0: R theta = r (default R = I, r = 0) with the given covariance of theta."""
    theta = as_float_array("estimate", estimate).reshape(-1)
    cov = as_float_array("covariance", covariance)
    p = theta.size
    if p == 0:
        raise ValueError("estimate must have at least one entry, got an empty array")
    if cov.shape != (p, p) or not np.isfinite(cov).all():
        raise ValueError(f"covariance must be a finite ({p}, {p}) matrix, one row per entry of estimate, "
                         f"got shape {cov.shape}")
    r_mat = np.eye(p) if restriction is None else as_float_array("restriction", restriction)
    r_mat = r_mat.reshape(-1, p) if r_mat.ndim == 1 else r_mat
    if r_mat.ndim != 2 or r_mat.shape[1] != p or r_mat.shape[0] < 1:
        raise ValueError(f"restriction must be a (q, {p}) matrix, got shape {r_mat.shape}")
    q = r_mat.shape[0]
    rhs = np.zeros(q) if value is None else as_float_array("value", value).reshape(-1)
    if rhs.shape != (q,):
        raise ValueError(f"value must have {q} entries (one per restriction), got {rhs.size}")
    diff = r_mat @ theta - rhs
    mid = r_mat @ cov @ r_mat.T
    try:
        stat = float(diff @ np.linalg.solve(mid, diff))
    except np.linalg.LinAlgError as exc:
        raise ValueError("R C R^T is singular: the restrictions are not identified") from exc
    return WaldTest(stat, q, float(stats.chi2.sf(stat, q)))


@dataclass(frozen=True)
class PrivateFit:
    """A private M-estimate: ``estimate`` (p,), the ``guarantee`` of everything released to compute it,
    the corrected ``covariance`` (V/n + C) and the ``naive_covariance`` (V/n) of the estimate when
    the sandwich was released (else None), and the ``iterations`` run."""

    estimate: FloatArray
    guarantee: Guarantee
    iterations: int
    covariance: FloatArray | None = None
    naive_covariance: FloatArray | None = None

    def _cov(self, naive: bool) -> FloatArray:
        cov = self.naive_covariance if naive else self.covariance
        if cov is None:
            raise ValueError("no variance was released: fit with inference_mu set to get intervals")
        return cov

    def standard_errors(self, naive: bool = False) -> FloatArray:
        return np.asarray(np.sqrt(np.diag(self._cov(naive))), dtype=np.float64)

    def interval(self, level: float = 0.95, naive: bool = False) -> tuple[FloatArray, FloatArray]:
        """(lower, upper) per coordinate: estimate -+ z sqrt(cov_jj) (corrected, or ``naive``)."""
        half = _z(level) * self.standard_errors(naive)
        return self.estimate - half, self.estimate + half

    def wald_test(self, restriction: ArrayLike | None = None, value: ArrayLike | None = None,
                  naive: bool = False) -> WaldTest:
        """``wald_test`` of H0: R theta = r with the corrected (or naive) covariance."""
        return wald_test(self.estimate, self._cov(naive), restriction, value)


@dataclass(frozen=True)
class BatchFit:
    """Independent private fits stacked on axis 0 (``fit_batch``): estimates (r, p), covariances
    (r, p, p) or None, and the guarantee of each fit."""

    estimates: FloatArray
    guarantee: Guarantee
    iterations: int
    covariances: FloatArray | None = None
    naive_covariances: FloatArray | None = None

    def fit(self, i: int) -> PrivateFit:
        cov = None if self.covariances is None else self.covariances[i]
        naive = None if self.naive_covariances is None else self.naive_covariances[i]
        return PrivateFit(self.estimates[i], self.guarantee, self.iterations, cov, naive)

    def covers(self, truth: ArrayLike, level: float = 0.95, naive: bool = False) -> NDArray[np.bool_]:
        """(r, p): whether each fit's interval contains ``truth`` (p,)."""
        cov = self.naive_covariances if naive else self.covariances
        if cov is None:
            raise ValueError("no variance was released: fit with inference_mu set to get intervals")
        t = as_float_array("truth", truth).reshape(1, -1)
        se = np.sqrt(np.einsum("rjj->rj", cov))
        return np.asarray(np.abs(self.estimates - t) <= _z(level) * se, dtype=np.bool_)
