"""Audit targets: DP-SGD with gradient canaries, correct and deliberately broken.

``GradientCanarySGD`` is the white-box model of DP-SGD used to audit an implementation's
aggregation step [@nasr2023tight; @steinke2023privacy]: every record *is* its per-example gradient
(a fixed vector in R^d), T steps each sample a batch, aggregate and add Gaussian noise, and the
model is the sum of the T noisy aggregates (theta_0 - theta_T up to the learning rate). A canary is
a Dirac gradient g e_j (coordinate j reserved for canary j) and its score is coordinate j of the
model: the canary's count of steps times its (clipped) gradient plus the noise. ``variant``:

- ``"correct"``: Poisson batches (each record with probability q, by an exact comparison of a
  uniform integer with q's binary fraction), each gradient clipped to L2 norm C, the sum plus
  N(0, sigma^2 C^2 I): what ``accountant.dpsgd_pld(q, sigma, T)`` certifies;
- ``"no_clipping"``: the gradients summed unclipped (the sum's sensitivity is then the canary's norm);
- ``"clip_after_sum"``: the batch's sum clipped to norm C B (its mean clipped to C: clipping after
  aggregation), B the realised batch size, so a large gradient among small ones passes whole;
- ``"noise_by_batch"``: the noise meant for the batch mean, N(0, (sigma C / B)^2 I), added to the sum;
- ``"shuffle_as_poisson"``: each epoch shuffles the records and walks them in batches of
  b = round(q n), while the claim is still the Poisson accountant's. With ``slots = n`` declared,
  each epoch permutes the n slots and the rows fill the first ones (a dataset one short leaves one
  slot empty, so its batch is one short), as ``mechanisms.estimators.DPSGD`` does.

``step_outputs`` returns the T noisy aggregates themselves (every intermediate model, the threat
model of DP-SGD's analysis); ``train`` is their sum. ``adversarial_pair`` and ``max_llr`` are the
white-box audit of the shuffled variant by the construction of the accountant's shuffle lower
bound [@chua2024private] (``accountant.shuffle_lower_pld``): every other record's gradient is
-C e_0 and the canary's +C e_0, so the batch sums, shifted by the known b C, are 0 but the canary's
batch: +2C with the canary, +C without it (one short). The score of a run is the log-likelihood
ratio of that pair read at each full epoch's largest shifted batch sum M_e,

    sum_e log f_2(M_e) / f_1(M_e),
    f_s(x) proportional to phi((x - s)/sigma) Phi(x/sigma) + (K - 1) Phi((x - s)/sigma) phi(x/sigma)

(x in units of C, K = 1/q batches an epoch; the density of the largest of K sums of which one is
shifted by s, the common factor Phi(x/sigma)^(K-2) / (K sigma) cancelled): the optimal test of the
pair whose PLD ``shuffle_lower_pld`` composes, so an audit of it can reach that lower bound's
trade-off curve. Any score gives a valid audit; this one is the most powerful for the pair.

``dpsgd_canaries`` builds the same audit for dpcert's estimator ``mechanisms.estimators.DPSGD`` on
Huber regression: canaries are records whose gradient is a fixed direction, the rows of a Hadamard
matrix over sqrt(p) (orthogonal, every coordinate +-1/sqrt(p), so the estimator's default
coordinate clipping at C/sqrt(p) leaves them whole), scored by the alignment of theta_T with them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy import linalg, special

from accountant import PLD, dpsgd_pld
from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real

__all__ = ["VARIANTS", "GradientCanarySGD", "Variant", "dpsgd_canaries"]

Variant = Literal["correct", "no_clipping", "clip_after_sum", "noise_by_batch", "shuffle_as_poisson"]
VARIANTS: tuple[Variant, ...] = ("correct", "no_clipping", "clip_after_sum", "noise_by_batch",
                                 "shuffle_as_poisson")
#: Poisson sampling compares a uniform integer below 2^SAMPLING_BITS with q's exact numerator.
SAMPLING_BITS = 62


@dataclass(frozen=True)
class GradientCanarySGD:
    """White-box DP-SGD on fixed per-example gradients (module docstring). ``train(gradients, rng)``
    takes the dataset as an (n, d) array of gradients and returns the summed noisy aggregates."""

    dim: int
    noise_multiplier: float
    sampling_rate: float
    steps: int
    clip: float = 1.0
    variant: Variant = "correct"
    #: n, the declared dataset size of the shuffled variant (None: the rows given)
    slots: int | None = None

    def __post_init__(self) -> None:
        check_count("dim", self.dim, low=1, high=10**6)
        check_real("noise_multiplier", self.noise_multiplier, low=0.0, high=1e4, low_open=True)
        q = Fraction(check_real("sampling_rate", self.sampling_rate, low=0.0, high=1.0, low_open=True))
        if q.denominator > 2**SAMPLING_BITS:
            raise ValueError(f"sampling_rate must be a multiple of 2^-{SAMPLING_BITS}, "
                             f"got {self.sampling_rate!r}")
        check_count("steps", self.steps, low=1, high=10**7)
        check_real("clip", self.clip, low=0.0, high=1e12, low_open=True)
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {self.variant!r}")
        if self.slots is not None:
            check_count("slots", self.slots, low=1, high=10**9)
            b = self.sampling_rate * self.slots
            if round(b) < 1 or abs(round(b) - b) > 1e-9 * b or self.slots % round(b):
                raise ValueError(f"slots * sampling_rate must be a whole batch dividing slots, got "
                                 f"slots={self.slots!r}, sampling_rate={self.sampling_rate!r}")

    def claim(self) -> PLD:
        """What the Poisson accountant certifies for this run (every variant claims it)."""
        return dpsgd_pld(self.sampling_rate, self.noise_multiplier, self.steps)

    def canaries(self, m: int, norm: float | None = None) -> FloatArray:
        """m Dirac gradients norm * e_j, j < m (norm defaults to the clip norm)."""
        check_count("m", m, low=2, high=self.dim)
        g = np.zeros((m, self.dim))
        g[np.arange(m), np.arange(m)] = self.clip if norm is None else norm
        return g

    def _clip_rows(self, g: FloatArray) -> FloatArray:
        norm = np.linalg.norm(g, axis=1, keepdims=True)
        return np.asarray(g * np.minimum(1.0, self.clip / np.maximum(norm, 1e-300)), dtype=np.float64)

    def _batches(self, n: int, rng: np.random.Generator) -> list[NDArray[np.intp]]:
        if self.variant == "shuffle_as_poisson":
            slots = n if self.slots is None else self.slots
            if n > slots:
                raise ValueError(f"the dataset has {n} rows, more than slots={slots}")
            size = max(1, round(self.sampling_rate * slots))
            out: list[NDArray[np.intp]] = []
            while len(out) < self.steps:
                perm = rng.permutation(slots)
                out.extend(perm[i:i + size][perm[i:i + size] < n] for i in range(0, slots - size + 1, size))
            return out[:self.steps]
        q = Fraction(self.sampling_rate)
        return [np.flatnonzero(rng.integers(0, q.denominator, size=n, dtype=np.int64) < q.numerator)
                for _ in range(self.steps)]

    def step_outputs(self, gradients: FloatArray, rng: np.random.Generator) -> FloatArray:
        """The (T, d) noisy aggregates of the T steps' batches, in order."""
        g = np.asarray(gradients, dtype=np.float64).reshape(-1, self.dim)
        clipped = g if self.variant in ("no_clipping", "clip_after_sum") else self._clip_rows(g)
        out = np.empty((self.steps, self.dim))
        sd = self.noise_multiplier * self.clip
        for t, batch in enumerate(self._batches(g.shape[0], rng)):
            s = clipped[batch].sum(axis=0)
            b = len(batch)
            if self.variant == "clip_after_sum" and b > 0:
                norm = float(np.linalg.norm(s))
                if norm > self.clip * b:
                    s = s * (self.clip * b / norm)
            scale = sd / max(b, 1) if self.variant == "noise_by_batch" else sd
            out[t] = s + rng.normal(0.0, scale, size=self.dim)
        return out

    def train(self, gradients: FloatArray, rng: np.random.Generator) -> FloatArray:
        """The sum over the T steps of the noisy aggregate of the batch's gradients."""
        return np.asarray(self.step_outputs(gradients, rng).sum(axis=0), dtype=np.float64)

    def adversarial_pair(self) -> tuple[FloatArray, FloatArray]:
        """(background, canary): ``slots`` - 1 rows of gradient -C e_0 and the canary +C e_0, the
        construction of the shuffle lower bound (module docstring). Needs ``slots``."""
        if self.slots is None:
            raise ValueError("adversarial_pair needs the declared dataset size: pass slots=n")
        background = np.zeros((self.slots - 1, self.dim))
        background[:, 0] = -self.clip
        canary = np.zeros(self.dim)
        canary[0] = self.clip
        return background, canary

    def max_llr(self, outputs: FloatArray) -> float:
        """sum over the full epochs of log f_2(M_e) / f_1(M_e) (module docstring), M_e the largest
        batch sum of epoch e in coordinate 0, over C and shifted by b: the white-box score of the
        canary of ``adversarial_pair`` from the ``step_outputs`` of one run. Needs ``slots``."""
        if self.slots is None:
            raise ValueError("max_llr needs the declared dataset size: pass slots=n")
        b = round(self.sampling_rate * self.slots)
        k = self.slots // b
        y = np.asarray(outputs, dtype=np.float64)[:, 0]
        epochs = y.size // k
        if epochs == 0:
            raise ValueError(f"max_llr reads full epochs of {k} steps, got {y.size} steps")
        x = (y[:epochs * k].reshape(epochs, k).max(axis=1) / self.clip + b)
        s = self.noise_multiplier

        def log_f(shift: float) -> NDArray[np.float64]:
            u = (x - shift) / s
            a = -0.5 * u * u + special.log_ndtr(x / s)
            if k == 1:
                return np.asarray(a, dtype=np.float64)
            c = math.log(k - 1) + special.log_ndtr(u) - 0.5 * (x / s) ** 2
            return np.asarray(np.logaddexp(a, c), dtype=np.float64)

        return float(np.sum(log_f(2.0) - log_f(1.0)))

    def score(self, model: FloatArray, canary: FloatArray) -> float:
        """Alignment of the model with the canary's direction."""
        c = np.asarray(canary, dtype=np.float64)
        return float(np.dot(model, c) / max(float(np.linalg.norm(c)), 1e-300))


def dpsgd_canaries(m: int, p: int) -> FloatArray:
    """m records [x, y] for ``mechanisms.estimators.DPSGD`` on ``HuberRegression(p, c=1,
    design_bound=1)``: x a Hadamard row over sqrt(p) (p a power of 2, p >= m), y = 1e6, so the
    per-example gradient is -x (the Huber score saturated) for any theta the run reaches."""
    check_count("m", m, low=2, high=p)
    check_count("p", p, low=2, high=2**14)
    if p & (p - 1):
        raise ValueError(f"p must be a power of 2 (Hadamard directions), got {p}")
    x = linalg.hadamard(p)[:m].astype(np.float64) / math.sqrt(p)
    return np.column_stack([x, np.full(m, 1e6)])
