"""Private means in high and low dimension [@cai2021cost, Sec. 5.3.2]: the sparse mean (Algorithm 3:
truncate to the L-infinity ball of radius T, average, keep the top s-hat coordinates by Peeling) and
the noisy truncated mean (Theorem 15)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import ZCDP, ApproxDP, Guarantee, calibrate
from accountant.core.validation import check_count, check_real

from ..base import Mechanism, OutputSpec
from ..domain import Domain
from ..noise import Gaussian
from ..queries import Mean
from ..selection import Peeling
from .stability import check_delta, check_eps

__all__ = ["SparseMean", "TruncatedMean"]


def _check_common(t: float, d: int, n: int) -> tuple[float, int, int]:
    return (check_real("T", t, low=0.0, high=1e150, low_open=True), check_count("d", d, low=1, high=10**7),
            check_count("n", n, low=1, high=10**9))


@dataclass(frozen=True)
class SparseMean(Mechanism):
    """Algorithm 3 of [@cai2021cost]: mu_T = mean of the records projected on [-T, T]^d (replace-one:
    L-infinity sensitivity 2T/n, the ``Mean`` query of the clipped domain), then ``Peeling(mu_T, s_hat,
    2T/n, eps, delta)``; the output is the d-vector with the s_hat peeled noisy values and zeros
    elsewhere.

    Guarantee: that of ``Peeling`` (the exact composition of its PrivateMax rounds); ``claimed()`` is
    Theorem 14's (eps, delta). Its rate is ``mechanisms.sparse_mean_rate``, the minimax lower bound
    of Theorem 13 ``mechanisms.sparse_mean_lower_rate``.
    """

    T: float
    d: int
    n: int
    s_hat: int
    eps: float
    delta: float

    def __post_init__(self) -> None:
        t, d, n = _check_common(self.T, self.d, self.n)
        object.__setattr__(self, "T", t)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "s_hat", check_count("s_hat", self.s_hat, low=1, high=d))
        object.__setattr__(self, "eps", check_eps(self.eps))
        object.__setattr__(self, "delta", check_delta(self.delta))

    @property
    def query(self) -> Mean:
        return Mean(Domain(-self.T, self.T, self.n, self.d, clip=True))

    @property
    def peeling(self) -> Peeling:
        return Peeling(self.query, self.s_hat, self.eps, self.delta)

    @property
    def sensitivity(self) -> Any:
        """L-infinity sensitivity 2T/n of the truncated mean."""
        return self.query.linf

    def guarantee(self) -> Guarantee:
        return self.peeling.guarantee()

    def claimed(self) -> Guarantee:
        return ApproxDP(self.eps, self.delta)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("continuous", (self.d,), "s_hat noisy coordinates (on a lattice), zeros elsewhere")

    def explain(self) -> str:
        return (f"sparse mean (Cai, Wang & Zhang, Alg. 3): T = {self.T}, s_hat = {self.s_hat}\n"
                f"{self.query.explain()}\n  {self.peeling.explain()}")

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        steps = self.peeling.sample(data, rng, size=m)  # (m, s_hat, 2): index, noisy value
        out = np.zeros((m, self.d))
        rows = np.repeat(np.arange(m), self.s_hat)
        out[rows, steps[:, :, 0].astype(np.int64).reshape(-1)] = steps[:, :, 1].reshape(-1)
        return out


@dataclass(frozen=True)
class TruncatedMean(Mechanism):
    """The noisy truncated mean of [@cai2021cost, Thm 15] for d << n: the mean of the records projected
    on [-T, T]^d plus Gaussian noise calibrated to (eps, delta) for the L2 sensitivity 2 T sqrt(d) / n
    (replace-one). ``method="classic"`` is Lemma 15's sigma^2 = 2 log(1.25/delta) Delta_2^2 / eps^2
    (eps < 1); the default ``"analytic"`` is the least sigma for the same (eps, delta)
    [@balle2018improving] when d = 1 and the zCDP route for d > 1 (``mechanism``); all use the
    catalogue's lattice ``Gaussian`` (its guarantee).
    Theorem 15's rate is ``mechanisms.truncated_mean_rate``, the lower bound ``mechanisms.mean_lower_rate``.
    (Theorem 15 prints the variance d T^2 log(1.25/delta) / (n^2 eps^2), 8 times less than Lemma 15
    asks for this sensitivity: not (eps, delta)-DP; it is not offered.)
    """

    T: float
    d: int
    n: int
    eps: float
    delta: float
    method: Literal["analytic", "classic"] = "analytic"

    def __post_init__(self) -> None:
        t, d, n = _check_common(self.T, self.d, self.n)
        object.__setattr__(self, "T", t)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "eps", check_eps(self.eps))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.method not in ("analytic", "classic"):
            raise ValueError(f"method must be 'analytic' or 'classic', got {self.method!r}")

    @cached_property
    def mechanism(self) -> Gaussian:
        """For d = 1 the lattice Gaussian calibrated to (eps, delta); for d > 1, where the lattice
        Gaussian declares zCDP, calibrated to the largest rho whose zCDP implies (eps, delta)
        (``Gaussian.calibrated`` with an (eps, delta) target fails for d > 1 in this release)."""
        q = Mean(Domain(-self.T, self.T, self.n, self.d, clip=True))
        target = ApproxDP(self.eps, self.delta)
        if self.method == "classic":  # Lemma 15's sigma, whatever guarantee the lattice then has
            return Gaussian(q, q.l2 * sympy.sqrt(2 * sympy.log(sympy.Rational(5, 4) / sympy.nsimplify(
                self.delta))) / sympy.nsimplify(self.eps))
        if self.d == 1:
            return Gaussian.calibrated(q, target)
        rho = calibrate(lambda r: ZCDP(r), target, (1e-12, 1e6), increasing=True)
        return Gaussian.calibrated(q, ZCDP(rho))

    @property
    def sensitivity(self) -> Any:
        return self.mechanism.sensitivity

    def guarantee(self) -> Guarantee:
        return self.mechanism.guarantee()

    def closed_form_guarantee(self) -> Guarantee:
        return self.mechanism.closed_form_guarantee()

    @property
    def output(self) -> OutputSpec:
        return self.mechanism.output

    def explain(self) -> str:
        return f"noisy truncated mean (Cai, Wang & Zhang, Thm 15)\n{self.mechanism.explain()}"

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        return np.asarray(self.mechanism.sample(data, rng, size=m))

