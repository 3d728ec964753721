"""The smooth surrogate of the adaptive search's DP-Finder-style phase: Gaussian-process regression
of the estimated privacy loss on features of a pair [@rasmussen2006gaussian, Alg. 2.1]."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from accountant.core.types import FloatArray

__all__ = ["Surrogate"]


@dataclass(frozen=True)
class Surrogate:
    """Gaussian-process regression with a squared-exponential kernel on standardised features
    (length scale: the median distance between the estimated pairs; noise: a tenth of the
    estimates' variance), the smooth surrogate of the search [@rasmussen2006gaussian, Alg. 2.1]."""

    mu: FloatArray
    sd: FloatArray
    points: FloatArray
    length: float
    chol: FloatArray
    weights: FloatArray
    y_mean: float
    y_scale: float

    #: noise variance relative to the (unit) variance of the standardised estimates
    NOISE = 0.1

    @classmethod
    def fit(cls, feats: FloatArray, y: FloatArray) -> Surrogate:
        mu = feats.mean(axis=0)
        sd = feats.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        z = (feats - mu) / sd
        d2 = _sqdist(z, z)
        pos = d2[np.triu_indices(len(z), 1)]
        pos = pos[pos > 0]
        length = float(np.sqrt(np.median(pos))) if pos.size else 1.0
        y_mean = float(y.mean())
        y_scale = float(y.std()) or 1.0
        k = np.exp(-d2 / (2 * length**2)) + cls.NOISE * np.eye(len(z))
        chol = np.asarray(np.linalg.cholesky(k), dtype=np.float64)
        w = np.linalg.solve(chol.T, np.linalg.solve(chol, (y - y_mean) / y_scale))
        return cls(mu, sd, z, length, chol, w, y_mean, y_scale)

    def predict(self, feats: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Posterior mean and standard deviation of the (noise-free) surrogate."""
        z = (feats - self.mu) / self.sd
        ks = np.exp(-_sqdist(z, self.points) / (2 * self.length**2))
        mean = ks @ self.weights
        v = np.linalg.solve(self.chol, ks.T)
        var = np.maximum(1.0 - np.sum(v * v, axis=0), 0.0)
        return self.y_mean + self.y_scale * mean, self.y_scale * np.sqrt(var)

    def acquire(self, feats: FloatArray) -> FloatArray:
        """The optimistic acquisition mean + sd (an upper confidence bound)."""
        m, s = self.predict(feats)
        return np.asarray(m + s, dtype=np.float64)


def _sqdist(a: FloatArray, b: FloatArray) -> FloatArray:
    return np.asarray(np.maximum(np.sum(a * a, 1)[:, None] + np.sum(b * b, 1)[None, :] - 2 * a @ b.T,
                                 0.0), dtype=np.float64)

