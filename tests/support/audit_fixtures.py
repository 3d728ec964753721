"""Buggy mechanisms that exist to exercise the audit's neighbour searches (tests and benchmarks).

Each draws its noise exactly on the lattice of ``verify.examples`` (``GRID`` * Z), so the bug
shown is the algorithm's, never floating-point rounding [@mironov2012significance].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from accountant.core.types import FloatArray
from mechanisms import BOTTOM
from verify.examples import GRID, on_lattice, two_sided_geometric

__all__ = ["ClipAfterSumStep", "GaussianHistogram", "NoiselessPTRMode", "TopKReusingNoise", "lattice_laplace"]


def lattice_laplace(rng: np.random.Generator, scale: float, shape: tuple[int, ...]) -> FloatArray:
    """Laplace noise of the given scale on the lattice GRID * Z (exact discrete Laplace)."""
    return on_lattice(two_sided_geometric(rng, scale / GRID, shape))


@dataclass(frozen=True)
class NoiselessPTRMode:
    """Propose-test-release for the mode of integer records in [0, ``values``) with the test done
    WITHOUT noise (the bug [@dwork2014algorithmic, Sec. 7.2]: the distance to instability must be
    tested with Laplace noise): release the most frequent value when the gap between the two largest
    counts exceeds ``threshold``, else the refusal ``mechanisms.BOTTOM``. On neighbours across the
    threshold one releases and the other refuses with probability 1 (delta = 1); only pairs at that
    data-dependent gap show it. Outputs: an int or ``BOTTOM``, one per draw (a list)."""

    threshold: int = 30
    values: int = 11

    def sample(self, data: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        x = np.clip(np.round(np.asarray(data, dtype=np.float64)), 0, self.values - 1).astype(np.int64)
        counts = np.sort(np.bincount(x, minlength=self.values))
        mode = int(np.argmax(np.bincount(x, minlength=self.values)))
        out: Any = mode if counts[-1] - counts[-2] > self.threshold else BOTTOM
        return out if size is None else [out] * int(size)


@dataclass(frozen=True)
class TopKReusingNoise:
    """Report-noisy-top-k over counts (each count moves by at most 1 between neighbours) that also
    releases the k noisy counts it selected, reusing the selection noise Lap(2k/eps) instead of
    drawing fresh noise: the released values are post-selection (conditioned) noisy answers, the
    bug of noisy max returning its value [@ding2018detecting] in top-k form; claimed eps-DP.
    Output: a tuple (indices, values) of two tuples, per draw."""

    eps: float = 1.0
    k: int = 2

    def __call__(self, data: Any, rng: np.random.Generator, size: int) -> list[Any]:
        q = np.atleast_1d(np.asarray(data, dtype=np.float64))
        z = lattice_laplace(rng, 2.0 * self.k / self.eps, (int(size), q.size))
        noisy = q + z
        top = np.argsort(-noisy, axis=1, kind="stable")[:, : self.k]
        vals = np.take_along_axis(noisy, top, axis=1)
        return [(tuple(t), tuple(v)) for t, v in zip(top.tolist(), vals.tolist(), strict=True)]


@dataclass(frozen=True)
class ClipAfterSumStep:
    """One full-batch DP-SGD step that clips after summing (the bug): the per-example gradients
    (records in R^d) are summed, the sum is clipped to L2 norm ``clip`` * B (B the batch size, i.e.
    its mean clipped to ``clip``), and N(0, (sigma clip)^2 I) is added. Correct DP-SGD (each gradient
    clipped first) is (1/sigma)-GDP under add/remove, the claim. Here removing a record g from a
    dataset with sum S moves the mean of the output from clip_{C B}(S + g) to clip_{C (B - 1)}(S):
    by at most C (2B - 1), reached when S has norm >= C (B - 1) and S + g points the other way with
    norm >= C B. With B = 2 and records in [-G, G]^2, G >= 3 C / sqrt(2), that is 3C (true mu
    3/sigma), at pairs like {a, g} / {a} with a = -s (1, 1)/sqrt(2), 1 <= s/C <= sqrt(2) G/C - 2,
    g = (G, G); the centre-based pair {0, g} / {0} moves it by only 2C. Continuous Gaussian noise
    (audit it with ``floating_point=False``)."""

    sigma: float = 2.0
    clip: float = 1.0
    d: int = 2

    def sample(self, data: Any, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        g = np.asarray(data, dtype=np.float64).reshape(-1, self.d)
        s = g.sum(axis=0)
        norm, radius = float(np.linalg.norm(s)), self.clip * g.shape[0]
        if norm > radius:
            s = s * (radius / norm)
        return np.asarray(s + rng.normal(0.0, self.sigma * self.clip, (size or 1, self.d)), dtype=np.float64)

    def mu(self, data: Any, data2: Any) -> float:
        """The exact GDP mu of the pair: the distance between the two clipped sums over sigma clip
        (the outputs are Gaussians of equal covariance (sigma clip)^2 I)."""
        def mean(x: Any) -> FloatArray:
            g = np.asarray(x, dtype=np.float64).reshape(-1, self.d)
            s, radius = g.sum(axis=0), self.clip * g.shape[0]
            norm = float(np.linalg.norm(s))
            return np.asarray(s * (radius / norm) if norm > radius else s, dtype=np.float64)

        return float(np.linalg.norm(mean(data) - mean(data2)) / (self.sigma * self.clip))


@dataclass(frozen=True)
class GaussianHistogram:
    """Histogram of integer records in [0, ``bins``) plus N(0, sigma^2) per bin: under replace-one
    adjacency the L2 sensitivity is sqrt(2), so it is exactly (1/sigma^2)-zCDP (mu = sqrt(2)/sigma,
    on any pair moving one record between two bins); claiming 1/(2 sigma^2) (calibrated for
    add/remove) is the bug. Continuous Gaussian noise (audit with ``floating_point=False``)."""

    sigma: float = 2.0
    bins: int = 3

    def sample(self, data: Any, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        x = np.clip(np.round(np.asarray(data, dtype=np.float64)), 0, self.bins - 1).astype(np.int64)
        h = np.bincount(x.ravel(), minlength=self.bins).astype(np.float64)
        return np.asarray(h + rng.normal(0.0, self.sigma, (size or 1, self.bins)), dtype=np.float64)
