"""The one-shot private M-estimator of Avella-Medina [@avellamedina2021privacy;
@avellamedina2025differentially, "Private M-estimation"]: release

    A_T(F_n) = T(F_n) + gamma(T, F_n) * 5 sqrt(2 log(n) log(1/delta)) / (eps n) * N_p(0, I),

T(F_n) the M-estimate (the root of (1/n) sum_i Psi(z_i, theta) = 0, ``mestimation.fit_nonprivate``)
and gamma(T, F_n) = sup_z ||IF(z; T, F_n)||_2 = sup_z ||M_n^{-1} Psi(z, T(F_n))||_2 its empirical
gross-error sensitivity, M_n = (1/n) sum_i dPsi/dtheta (z_i, T(F_n)).

For a ``BoundedPsiModel`` (||Psi||_2 <= B) the sensitivity used is the upper bound
gamma <= B / lambda_min(M_n) (equal to it for ``HuberLocation``: B = c, M_n = the fraction of
residuals within c, over the scale); lambda_min(M_n) is floored at the public ``curvature_floor``
(default Bbar/n, the least positive value M_n takes for a location model) so that gamma stays finite.

What the paper proves is *asymptotic*: the release is (eps, delta)-DP for n large enough, on data
drawn from a law meeting its conditions (gamma(T, F_n) and T(F_n) then move by O(1/n) between
neighbours, with high probability). It is not (eps, delta)-DP for every pair of neighbouring
datasets at any n: where few residuals lie in the region where Psi has slope, removing one of
them changes gamma by a constant factor, so the two Gaussian laws differ in scale and the
privacy loss is unbounded. The guarantee is therefore an ``AsymptoticDP``, which no ledger,
composition, conversion or ordering accepts; the benchmark ``benchmarks.one_shot_audit`` measures
at which n the claimed (eps, delta) survives an audit (docs/measurements/one_shot_audit.md).

The release is on a public lattice, like every release of the catalogue. Each record's Jacobian
h x x^T has norm at most Bbar, so lambda_min(M_n) <= lambda_max(M_n) <= Bbar and the noise standard
deviation s = gamma_n times the noise factor is at least s_min = factor B / max(Bbar, floor), a public
number. With gamma = 2^e the power of two in (2^-LATTICE_BITS s_min / 2, 2^-LATTICE_BITS s_min], the
release is gamma (round(T(F_n) / gamma) + Z), Z an exact discrete Gaussian per coordinate of variance
ceil((s / gamma)^2) >= 2^(2 LATTICE_BITS) (``samplers.discrete_gaussian_array``): no float noise is
added to a value, and the lattice does not depend on the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import AsymptoticDP
from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real

from ..base import Mechanism, OutputSpec
from ..samplers import discrete_gaussian_array, floor_log2, from_lattice, to_lattice
from .mestimation import BoundedPsiModel, HuberLocation, fit_nonprivate
from .smooth_sensitivity import LATTICE_BITS

__all__ = ["OneShotMEstimator", "one_shot_noise_factor"]

#: Where the guarantee is stated to hold (the ``AsymptoticDP``'s ``holds_when``).
HOLDS_WHEN = ("as n -> infinity, on i.i.d. data meeting the conditions of Avella-Medina (2021); "
              "docs/measurements/one_shot_audit.md gives the n where it was measured")


def one_shot_noise_factor(n: int, eps: float, delta: float) -> float:
    """5 sqrt(2 log(n) log(1/delta)) / (eps n): the noise standard deviation per unit of gross-error
    sensitivity [@avellamedina2025differentially, "Private M-estimation"] (n >= 2)."""
    n = check_count("n", n, low=2, high=10**12)
    eps = check_real("eps", eps, low=0.0, high=1e6, low_open=True)
    delta = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    return 5.0 * math.sqrt(2.0 * math.log(n) * math.log(1.0 / delta)) / (eps * n)


@dataclass(frozen=True)
class OneShotMEstimator(Mechanism):
    """T(F_n) + gamma_n * one_shot_noise_factor(n, eps, delta) * N_p(0, I) (module docstring), with
    gamma_n = B / max(lambda_min(M_n(T(F_n))), curvature_floor). Guarantee: ``AsymptoticDP(eps,
    delta)`` (not a bound). ``theta0`` is the public starting point of the Newton fit (None: the
    sample median for a location model, else the origin)."""

    model: BoundedPsiModel
    n: int
    eps: float
    delta: float
    curvature_floor: float | None = None
    iterations: int = 50

    def __post_init__(self) -> None:
        if not isinstance(self.model, BoundedPsiModel):
            raise TypeError(f"model must be a BoundedPsiModel, got {type(self.model).__name__}")
        object.__setattr__(self, "n", check_count("n", self.n, low=2, high=10**9))
        object.__setattr__(self, "eps", check_real("eps", self.eps, low=0.0, high=1e6, low_open=True))
        object.__setattr__(self, "delta", check_real("delta", self.delta, low=0.0, high=1.0, low_open=True,
                                                     high_open=True))
        if self.curvature_floor is not None:
            object.__setattr__(self, "curvature_floor", check_real(
                "curvature_floor", self.curvature_floor, low=0.0, high=1e12, low_open=True))
        object.__setattr__(self, "iterations", check_count("iterations", self.iterations, high=10_000))

    @property
    def floor(self) -> float:
        """The least lambda_min(M_n) used (``curvature_floor``, default Bbar/n)."""
        return self.curvature_floor if self.curvature_floor is not None else self.model.hess_bound / self.n

    @property
    def noise_factor(self) -> float:
        return one_shot_noise_factor(self.n, self.eps, self.delta)

    @property
    def sensitivity(self) -> Any:
        """The bound B/(n lambda) on one record's influence, lambda = lambda_min(M_n) (data-dependent:
        a symbol)."""
        lam = sympy.Symbol("lambda_min_M_n", positive=True)
        return sympy.nsimplify(self.model.grad_bound) / (self.n * lam)

    def guarantee(self) -> AsymptoticDP:
        return AsymptoticDP(self.eps, self.delta, HOLDS_WHEN)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("discrete", (self.model.dim,), f"2^{self.exponent} Z^p")

    def _xy(self, data: ArrayLike) -> tuple[FloatArray, FloatArray]:
        x, y = self.model.split(data)
        if x.shape[0] != self.n:
            raise ValueError(f"data must have n = {self.n} records, got {x.shape[0]}")
        return x, y

    def fit(self, data: ArrayLike) -> tuple[FloatArray, float]:
        """(T(F_n), gamma_n): the M-estimate (p,) and the gross-error-sensitivity bound used."""
        x, y = self._xy(data)
        start = np.array([[float(np.median(y))]]) if isinstance(self.model, HuberLocation) else None
        theta = fit_nonprivate(self.model, x[None], y[None], start, self.iterations)
        m_n = self.model.mean_hessian(theta, x[None], y[None])[0]
        lam = float(np.linalg.eigvalsh(0.5 * (m_n + m_n.T))[0])
        return np.asarray(theta[0], dtype=np.float64), self.model.grad_bound / max(lam, self.floor)

    def scale(self, data: ArrayLike) -> float:
        """The noise standard deviation gamma_n * noise_factor on this dataset."""
        return self.fit(data)[1] * self.noise_factor

    @property
    def exponent(self) -> int:
        """e of the release lattice 2^e Z^p: 2^e <= 2^-LATTICE_BITS s_min (module docstring)."""
        s_min = Fraction(self.noise_factor) * Fraction(self.model.grad_bound) / Fraction(
            max(self.model.hess_bound, self.floor))
        return floor_log2(s_min) - LATTICE_BITS

    def lattice(self, data: ArrayLike) -> tuple[NDArray[np.int64], int]:
        """(c, v): the release 2^e (c + Z), c = round(T(F_n) / 2^e), Z discrete Gaussian of variance
        v = ceil((s / 2^e)^2) per coordinate, s = ``scale(data)`` (module docstring)."""
        theta, gamma = self.fit(data)
        e = self.exponent
        return to_lattice(theta, e), math.ceil((Fraction(gamma * self.noise_factor) / Fraction(2) ** e) ** 2)

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        """log p_data(y) - log p_data2(y) for the two lattice releases. Each pmf is
        exp(-|k - c|^2 / (2 v)) over its normaliser, (2 pi v)^(p/2) within a relative 2 e^(-2 pi^2 v)
        (v >= 2^(2 LATTICE_BITS))."""
        arr = self._validate_pair(y, (self.model.dim,))
        k = np.ldexp(arr, -self.exponent)
        if not np.array_equal(k, np.round(k)):
            raise ValueError("outputs must lie on the release lattice")
        (c1, v1), (c2, v2) = self.lattice(data), self.lattice(data2)
        q1 = np.sum((k - c1) ** 2, axis=1)
        q2 = np.sum((k - c2) ** 2, axis=1)
        return np.asarray(-q1 / (2.0 * v1) + q2 / (2.0 * v2) - 0.5 * arr.shape[1] * math.log(v1 / v2),
                          dtype=np.float64)

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        c, v = self.lattice(data)
        noise = discrete_gaussian_array(rng, Fraction(v), (m, self.model.dim))
        return from_lattice(c[None, :] + noise, self.exponent)
