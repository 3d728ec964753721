"""Ready-made statistics: noisy histogram and clipped count, sum, mean and variance
[@avellamedina2025differentially].

Each builds the query on the given domain (with ``clip=True``: the clipped statistic is the declared
one, so records are clipped into the box rather than rejected) and calibrates the requested noise to
``target``. The histogram's sensitivity, hence its noise, depends on the adjacency and on how many
bins a record can touch (``Histogram``): with Laplace noise and eps-DP, disjoint bins need scale
1/eps under add/remove and 2/eps under replace-one, and s bins per record s times that.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from accountant import Guarantee
from accountant.core.validation import as_float_array

from .base import Mechanism
from .domain import Domain
from .noise import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace
from .queries import Count, Histogram, Mean, Query, Sum, Variance

__all__ = ["calibrated", "clipped_count", "clipped_mean", "clipped_sum", "clipped_variance",
           "noisy_histogram"]

NoiseKind = Literal["laplace", "gaussian", "discrete_laplace", "discrete_gaussian"]


#: Noise families by name: each maps (query, target, **options) to a calibrated mechanism.
NOISE: dict[str, Callable[..., Mechanism]] = {
    "laplace": Laplace.calibrated,
    "gaussian": Gaussian.calibrated,
    "discrete_laplace": DiscreteLaplace.calibrated,
    "discrete_gaussian": DiscreteGaussian.calibrated,
}


def calibrated(query: Query, target: Guarantee, noise: NoiseKind = "laplace", **kwargs: Any) -> Mechanism:
    """The additive mechanism of the given noise family calibrated to ``target``."""
    try:
        make = NOISE[noise]
    except KeyError:
        raise ValueError(f"noise must be one of {sorted(NOISE)}, got {noise!r}") from None
    return make(query, target, **kwargs)


def _clipped(domain: Domain) -> Domain:
    if not isinstance(domain, Domain):
        raise TypeError(f"domain must be a Domain, got {type(domain).__name__}")
    return domain.clipped()


def _edges(edges: Sequence[float] | None) -> tuple[float, ...] | None:
    return None if edges is None else tuple(np.atleast_1d(as_float_array("edges", edges)).tolist())


def noisy_histogram(domain: Domain, target: Guarantee, edges: Sequence[float] | None = None, *,
                    membership: Callable[[Any], ArrayLike] | None = None, k: int | None = None,
                    max_bins_per_record: int = 1, noise: NoiseKind = "laplace") -> Mechanism:
    """Histogram counts plus calibrated noise [@avellamedina2025differentially, "noisy histogram"]."""
    q = Histogram(_clipped(domain), _edges(edges), membership, k,
                  max_bins_per_record)
    return calibrated(q, target, noise)


def clipped_count(domain: Domain, target: Guarantee, predicate: Callable[[Any], ArrayLike] | None = None, *,
                  noise: NoiseKind = "laplace") -> Mechanism:
    """Noisy (predicate) count."""
    return calibrated(Count(_clipped(domain), predicate), target, noise)


def clipped_sum(domain: Domain, target: Guarantee, *, noise: NoiseKind = "laplace") -> Mechanism:
    """Noisy sum of records clipped into the domain's box [@avellamedina2025differentially,
    "bounded data"]."""
    return calibrated(Sum(_clipped(domain)), target, noise)


def clipped_mean(domain: Domain, target: Guarantee, *, noise: NoiseKind = "laplace") -> Mechanism:
    """Noisy mean of records clipped into the box (the truncated mean of [@cai2021cost;
    @avellamedina2025differentially])."""
    return calibrated(Mean(_clipped(domain)), target, noise)


def clipped_variance(domain: Domain, target: Guarantee, *, noise: NoiseKind = "laplace") -> Mechanism:
    """Noisy plug-in variance of records clipped into the box."""
    return calibrated(Variance(_clipped(domain)), target, noise)
