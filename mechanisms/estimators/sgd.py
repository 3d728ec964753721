"""DP-SGD as an estimator for GLMs, in numpy [@abadi2016deep; @avellamedina2025differentially,
"Private Stochastic Gradient Descent Algorithm", "A remark on clipping"].

Each of T steps draws a batch by its ``sampler`` (``accountant.SAMPLERS``): ``"poisson"`` (default;
every record independently with probability q, by an exact comparison of a uniform integer with
q's exact binary fraction), ``"fixed"`` (b = q n of the n declared slots drawn uniformly without
replacement, ``Generator.choice``) or ``"shuffle"`` (each epoch a uniform permutation of the n slots,
``Generator.permutation``, cut into n/b batches of b); the data fill the first slots, so a dataset
with a record fewer has the batches of the full one with that record taken out, the law the
accountant's add/remove bounds describe. The guarantee is the sampler's sound upper bound
(``accountant.compose.samplers``; fixed-size batches under replace-one adjacency). Each step clips
the per-example gradients Psi(z_i, theta_t) of the model, releases their sum with Gaussian noise
sigma C on the catalogue's lattice, the sum computed exactly on a finer grid
(``_release.exact_sum_release``: its sensitivity does not grow with the batch through
floating-point error) and takes theta_{t+1} = theta_t - lr * release / (q n), n the declared
(public) dataset size. The fixed point solves
(1/n) sum_i clip(Psi(z_i, theta)) = 0: the clipped-likelihood M-estimator of the slides.

Clipping, and what is declared (add/remove adjacency, the sum moves by at most the clip norm):

- ``clipping="coordinate"`` (default): each coordinate clipped to [-C/sqrt(p), C/sqrt(p)] (the
  coordinate-wise Huber function), so every clipped gradient lies in the L2 ball of radius C, and
  each coordinate of the sum is released by the scalar lattice Gaussian (sensitivity C/sqrt(p)),
  whose declared guarantee is a verified GDP; the p coordinates compose to GDP(mu_step), mu_step a
  hair above 1/sigma [@dong2022gaussian, Cor. 3.3]. The step is Poisson-subsampled and T steps
  composed by the PLD accountant (``accountant.subsample``, exact Gaussian mixture tails
  [@zhu2022optimal]).
- ``clipping="l2"``: the multivariate Huber function h_C(z) = z min(1, C/||z||) of the slides, the
  sum released by the vector lattice Gaussian, whose declared guarantee is zCDP (GDP is not claimed
  for vector lattice releases); the subsampled step is accounted through the zCDP curve
  (``accountant.subsample`` of a ZCDP: sound, looser than a Gaussian pair, and slower).

``DPSGD.calibrated`` finds the least noise multiplier whose composed guarantee implies an (eps,
delta) target: for ``"coordinate"`` the accountant's DP-SGD calibration (``dpsgd_noise_multiplier``)
gives the Gaussian level, and ``accountant.calibrate`` the least lattice noise whose step GDP is
within it; for ``"l2"`` ``accountant.calibrate`` on the composed zCDP-curve PLD.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any, Literal

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import (
    GDP,
    ZCDP,
    ApproxDP,
    Guarantee,
    Sampler,
    batches_per_epoch,
    calibrate,
    check_sampler,
    compose,
    dpsgd_noise_multiplier,
    implies,
    subsample,
)
from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real

from ..base import Mechanism, OutputSpec, check_rng
from ..noise import Gaussian
from .inference import PrivateFit
from .mestimation import BoundedPsiModel
from .release import exact_sum_release, sum_mechanism

__all__ = ["DPSGD"]

Clipping = Literal["coordinate", "l2"]
#: Poisson sampling compares a uniform integer below 2^SAMPLING_BITS with q's exact numerator.
SAMPLING_BITS = 62


def _sampling_fraction(q: float) -> Fraction:
    f = Fraction(check_real("sampling_rate", q, low=0.0, high=1.0, low_open=True))
    if f.denominator > 2**SAMPLING_BITS:
        raise ValueError(f"sampling_rate must be a multiple of 2^-{SAMPLING_BITS} (exact Poisson sampling), "
                         f"got {q!r}; round it, e.g. to {float(round(f * 2**40) / 2**40)!r}")
    return f


@dataclass(frozen=True)
class DPSGD(Mechanism):
    """DP-SGD on a ``BoundedPsiModel`` (module docstring): ``DPSGD(model, n, noise_multiplier,
    sampling_rate, steps, learning_rate)``; ``clip`` defaults to the model's gradient bound."""

    model: BoundedPsiModel
    n: int
    noise_multiplier: float
    sampling_rate: float
    steps: int
    learning_rate: float = 1.0
    clip: float | None = None
    clipping: Clipping = "coordinate"
    theta0: tuple[float, ...] | None = None
    sampler: Sampler = "poisson"
    _cache: dict[str, Guarantee] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.model, BoundedPsiModel):
            raise TypeError(f"model must be a BoundedPsiModel, got {type(self.model).__name__}")
        check_count("n", self.n, low=1, high=10**12)
        check_real("noise_multiplier", self.noise_multiplier, low=0.0, high=1e4, low_open=True)
        _sampling_fraction(self.sampling_rate)
        check_count("steps", self.steps, low=1, high=10**7)
        check_real("learning_rate", self.learning_rate, low=0.0, high=1e6, low_open=True)
        if self.clip is not None:
            check_real("clip", self.clip, low=0.0, high=1e12, low_open=True)
        if self.clipping not in ("coordinate", "l2"):
            raise ValueError(f"clipping must be 'coordinate' or 'l2', got {self.clipping!r}")
        if check_sampler(self.sampler) != "poisson":
            self.batch_size  # noqa: B018  (validates that q n is a whole batch)
            if self.sampler == "shuffle":
                batches_per_epoch(self.sampling_rate)
        object.__setattr__(self, "theta0", self.model.start(self.theta0))

    @property
    def clip_norm(self) -> float:
        """C: the L2 bound of every clipped gradient (the sum's sensitivity)."""
        return self.model.grad_bound if self.clip is None else float(self.clip)

    @property
    def batch_size(self) -> int:
        """b = q n, the batch of the fixed and shuffle samplers (ValueError unless whole, to 1e-9)."""
        b = round(self.sampling_rate * self.n)
        if b < 1 or abs(b - self.sampling_rate * self.n) > 1e-9 * self.sampling_rate * self.n:
            raise ValueError(f"sampler={self.sampler!r} draws batches of sampling_rate * n records, so "
                             f"sampling_rate * n must be a whole number >= 1, got {self.sampling_rate!r} "
                             f"* {self.n} = {self.sampling_rate * self.n!r}")
        return b

    @property
    def sensitivity(self) -> Any:
        return sympy.nsimplify(self.clip_norm)

    @cached_property
    def step_mechanism(self) -> Gaussian:
        """The catalogue release of one noisy sum: scalar per coordinate, or the whole vector (l2)."""
        c, p = self.clip_norm, self.model.dim
        sigma = self.noise_multiplier * c
        if self.clipping == "coordinate":
            return sum_mechanism(1, c / math.sqrt(p), c / math.sqrt(p), sigma,
                                 "sum of one coordinate of the clipped gradients")
        return sum_mechanism(p, c, c, sigma, "sum of clipped gradients (L2 norm <= C)")

    def step_guarantee(self) -> Guarantee:
        """The declared guarantee of one (unsampled) noisy sum."""
        g = self.step_mechanism.closed_form_guarantee()
        return compose([g] * self.model.dim) if self.clipping == "coordinate" else g

    def guarantee(self) -> Guarantee:
        """The sampler's sound upper bound: T Poisson-subsampled steps composed by the PLD
        accountant; T steps each subsampled without replacement at rate b/n (replace-one: a
        replaced record moves the clipped sum by up to 2C, so the noisy sum's GDP(mu) is
        GDP(2 mu) and its zCDP(rho) is zCDP(4 rho) [@dong2022gaussian, Thm 2.14]); or, shuffled,
        the step guarantee composed once per epoch (ceil(T / K) epochs of K = n/b batches: each
        record is in one batch of each)."""
        if "g" not in self._cache:
            step = self.step_guarantee()
            if self.sampler == "poisson":
                one = subsample(step, self.sampling_rate, "poisson")
                self._cache["g"] = compose([one] * self.steps)
            elif self.sampler == "fixed":
                one = subsample(_doubled(step), self._fixed_rate, "without_replacement")
                self._cache["g"] = compose([one] * self.steps)
            else:
                k = batches_per_epoch(self.sampling_rate)
                self._cache["g"] = compose([step] * -(-self.steps // k))
        return self._cache["g"]

    @property
    def _fixed_rate(self) -> float:
        """b/n rounded up to a double (the bound grows with the rate)."""
        rate = self.batch_size / self.n
        return rate if Fraction(rate) >= Fraction(self.batch_size, self.n) else math.nextafter(rate, 2.0)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("continuous", (self.model.dim,), "the last iterate theta_T")

    # ----- fitting -----------------------------------------------------------------------------------
    def _clip(self, g: FloatArray) -> FloatArray:
        c = self.clip_norm
        if self.clipping == "coordinate":
            b = c / math.sqrt(self.model.dim)
            return np.clip(g, -b, b)
        norm = np.linalg.norm(g, axis=-1, keepdims=True)
        return np.asarray(g * np.minimum(1.0, c / np.maximum(norm, 1e-300)), dtype=np.float64)

    def batches(self, rows: int, rng: np.random.Generator) -> Iterator[NDArray[np.int64]]:
        """The row indices of each of the T batches drawn from ``rows`` records (module docstring):
        Poisson by exact integer comparison; fixed-size and shuffled over the n declared slots,
        the slots past ``rows`` empty."""
        m = check_count("rows", rows, low=0, high=self.n if self.sampler != "poisson" else 10**12)
        if self.sampler == "poisson":
            q = _sampling_fraction(self.sampling_rate)
            for _ in range(self.steps):
                yield np.flatnonzero(rng.integers(0, q.denominator, size=m, dtype=np.int64) < q.numerator)
            return
        b = self.batch_size
        k = self.n // b
        order = np.arange(self.n, dtype=np.int64)
        for t in range(self.steps):
            if self.sampler == "fixed":
                slots = rng.choice(self.n, size=b, replace=False)
            else:
                if t % k == 0:
                    order = rng.permutation(self.n)
                slots = order[(t % k) * b:(t % k + 1) * b]
            yield np.asarray(slots[slots < m], dtype=np.int64)

    def run(self, x: FloatArray, y: FloatArray, rng: np.random.Generator) -> FloatArray:
        """theta_T on one dataset x (m, p), y (m,) (already validated)."""
        q = _sampling_fraction(self.sampling_rate)
        mech = self.step_mechanism
        p = self.model.dim
        theta = np.zeros((1, p)) if self.theta0 is None else np.asarray(self.theta0, dtype=np.float64)[None]
        scale = self.learning_rate / (float(q) * self.n)
        for keep in self.batches(x.shape[0], rng):
            xb, yb = x[keep][None], y[keep][None]
            clipped = self._clip(self.model.per_example_gradients(theta, xb, yb)[0])
            # "coordinate": the scalar mechanism's lattice and independent noise on each coordinate,
            # the law of p scalar releases
            noisy = exact_sum_release(mech, clipped, rng)
            theta = theta - scale * noisy.reshape(1, p)
        return np.asarray(theta[0], dtype=np.float64)

    def fit(self, data: ArrayLike, rng: np.random.Generator) -> PrivateFit:
        """One run: the last iterate and the guarantee (no interval)."""
        rng = check_rng(rng)
        x, y = self.model.split(data)
        return PrivateFit(self.run(x, y, rng), self.guarantee(), self.steps)

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x, y = self.model.split(data)
        return np.stack([self.run(x, y, rng) for _ in range(m)])

    # ----- calibration ------------------------------------------------------------------------------
    @classmethod
    def calibrated(cls, model: BoundedPsiModel, n: int, target: ApproxDP, sampling_rate: float, steps: int,
                   learning_rate: float = 1.0, clipping: Clipping = "coordinate", rtol: float = 1e-3,
                   **kwargs: Any) -> DPSGD:
        """The least noise multiplier (within ``rtol``) whose composed guarantee implies ``target``."""
        if not isinstance(target, ApproxDP):
            raise TypeError(f"target must be an ApproxDP (eps, delta), got {type(target).__name__}")

        def make(s: float) -> DPSGD:
            return cls(model, n, s, sampling_rate, steps, learning_rate, clipping=clipping, **kwargs)

        gauss = dpsgd_noise_multiplier(target.eps, target.delta_, sampling_rate, steps, rtol=rtol)
        if clipping == "coordinate":
            # the least lattice noise whose step GDP is within the Gaussian level 1/gauss
            level = GDP(1.0 / gauss)
            s = calibrate(lambda v: make(v).step_guarantee(), level, (gauss, gauss * 1.01),
                          increasing=False, tol=rtol / 10)
        else:
            s = calibrate(lambda v: make(v).guarantee(), target, (gauss, gauss * 3.0), increasing=False,
                          tol=rtol)
        est = make(s)
        if not implies(est.guarantee(), target):
            raise AssertionError("the calibrated DP-SGD does not meet the target")  # pragma: no cover
        return est


def _doubled(g: Guarantee) -> Guarantee:
    """The guarantee of a Gaussian-noise sum at twice its sensitivity (replace-one from add/remove)."""
    if isinstance(g, GDP):
        return GDP(math.nextafter(2.0 * g.mu, math.inf))
    if isinstance(g, ZCDP):
        return ZCDP(math.nextafter(4.0 * g.rho, math.inf))
    raise TypeError(f"fixed-size batches need the step's GDP or zCDP guarantee, got {type(g).__name__}")
