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

__all__ = ["NoiselessPTRMode", "TopKReusingNoise", "lattice_laplace"]


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
