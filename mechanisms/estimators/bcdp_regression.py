"""Least squares under BCDP and LDP [@aliakbarpour2025enhancing, Algorithm 3, Theorem 3]."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import BCDP, CoordinateDP, Guarantee, LocalDP, cdp_to_bcdp, compose
from accountant.core.types import FloatArray
from accountant.core.validation import as_float_array, check_real

from ..base import Mechanism, OutputSpec
from ..local import BCDPMean, ChannelFactory, DuchiL2, ZetaRule

__all__ = ["BCDPLeastSquares", "ball_quadratic_minimum"]


def ball_quadratic_minimum(h: FloatArray, b: FloatArray,
                           radius: float) -> FloatArray:
    """argmin of theta' H theta / 2 - b' theta over the ball ||theta|| <= radius, H symmetric and
    possibly indefinite (the trust-region subproblem): theta = (H + lam I)^{-1} b with lam >= 0,
    H + lam I positive semi-definite and lam (radius - ||theta||) = 0, lam found by bisection in
    H's eigenbasis; in the "hard case" (b orthogonal to the bottom eigenvector) the step is
    completed along that eigenvector to the boundary. A global minimum, to ~1e-12 relative."""
    w, v = np.linalg.eigh(h)
    g = v.T @ b
    if w[0] > 0:
        inner = g / w
        if np.linalg.norm(inner) <= radius:
            return np.asarray(v @ inner, dtype=np.float64)

    def norm_at(lam: float) -> float:
        return float(np.linalg.norm(g / (w + lam)))

    lo = max(0.0, -float(w[0]))
    scale = float(np.abs(w).max()) + float(np.linalg.norm(b)) / radius + 1.0
    if norm_at(lo + 1e-300 + 1e-14 * scale) <= radius:  # hard case
        free = w + lo > 1e-12 * scale
        theta = np.zeros_like(g)
        theta[free] = g[free] / (w[free] + lo)
        rest = radius**2 - float(theta @ theta)
        theta[np.argmin(w)] += math.sqrt(max(rest, 0.0))
        return np.asarray(v @ theta, dtype=np.float64)
    hi = lo + scale
    while norm_at(hi) > radius:
        hi = lo + 2 * (hi - lo)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if norm_at(mid) > radius:
            lo = mid
        else:
            hi = mid
    return np.asarray(v @ (g / (w + hi)), dtype=np.float64)


@dataclass(frozen=True)
class BCDPLeastSquares(Mechanism):
    """Algorithm 3: each user x = (z, l) in [-1, 1]^d (label last, the coordinate Assumption 1
    exempts) sends two independent copies of M_mean(x, c/2); the server minimises the unbiased
    f-hat(theta) = theta' (1/n sum z1 z2') theta / 2 - theta' (1/n sum l1 z2) over the ball
    ||theta|| <= ``radius`` (``ball_quadratic_minimum``, exact: f-hat may be non-convex). The two
    copies compose as CDP and LDP (not as BCDP, Example 2): c-CDP and c_d-LDP, hence the BCDP
    vector of Prop. 4 under dependence ``q`` (Theorem 3). The output is theta-hat in R^{d-1}."""

    c: tuple[float, ...]
    q: float
    radius: float
    channel: ChannelFactory = DuchiL2

    def __post_init__(self) -> None:
        object.__setattr__(self, "radius", check_real("radius", self.radius, low=0.0, high=1e12,
                                                      low_open=True))
        half = self._copy  # validates c and q
        if len(half.c) < 2:
            raise ValueError("c must have at least two entries (features, then the label)")

    @classmethod
    def calibrated(cls, target: BCDP, radius: float, zeta: float | ZetaRule = "minimax", *,
                   n: int | None = None, channel: ChannelFactory = DuchiL2) -> BCDPLeastSquares:
        """c from Theorem 2's rule for the target (as ``BCDPMean.calibrated``), split in two copies."""
        mean = BCDPMean.calibrated(target, zeta, n=n, channel=channel)
        return cls(mean.c, mean.q, radius, channel)

    @property
    def _copy(self) -> BCDPMean:
        return BCDPMean(tuple(x / 2 for x in self.c), self.q, self.channel)

    def cdp_guarantee(self) -> CoordinateDP:
        """Two copies of (c/2)-CDP, (c_d/2)-LDP compose to this (coordinate-wise sums)."""
        g = compose([self._copy.cdp_guarantee()] * 2)
        assert isinstance(g, CoordinateDP)
        return g

    def guarantee(self) -> Guarantee:
        d = len(self.c)
        return cdp_to_bcdp(self.cdp_guarantee(), (self.q,) * (d - 1) + (1.0,))

    def closed_form_guarantee(self) -> Guarantee:
        return LocalDP(self.cdp_guarantee().ldp_level)

    @property
    def sensitivity(self) -> Any:
        return sympy.Integer(1)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("continuous", (len(self.c) - 1,), "theta-hat in the ball")

    def objective(self, data: ArrayLike, rng: np.random.Generator) -> tuple[FloatArray,
                                                                            FloatArray]:
        """(H, b) of f-hat from two private copies of each record (H symmetrised: theta' A theta =
        theta' (A + A')/2 theta)."""
        x = as_float_array("data", data)
        d = len(self.c)
        if x.ndim != 2 or x.shape[1] != d or x.shape[0] == 0:
            raise ValueError(f"data must be (n, {d}) records (features, then the label), got {x.shape}")
        one = np.asarray(self._copy.sample(x, rng))
        two = np.asarray(self._copy.sample(x, rng))
        z1, l1, z2 = one[:, :-1], one[:, -1], two[:, :-1]
        n = x.shape[0]
        a = z1.T @ z2 / n
        return (a + a.T) / 2.0, (l1 @ z2) / n

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        out = []
        for _ in range(m):
            h, b = self.objective(data, rng)
            out.append(ball_quadratic_minimum(h, b, self.radius))
        return np.asarray(out, dtype=np.float64)
