"""Float-safe release of averages of bounded per-record vectors through the catalogue's ``Gaussian``.

Each release is the lattice Gaussian of ``mechanisms.noise`` on a ``CustomQuery`` that declares the
L2 sensitivity of the average (the models of ``mestimation`` state it from their psi and design
bounds): the value is rounded to the mechanism's lattice gamma Z and exact discrete Gaussian noise of
variance parameter ``lattice_variance()`` is added to the index, exactly as ``Gaussian.sample`` does,
for a stack of rows (one row per replication or per iterate) at once. The declared guarantee of each
release is the mechanism's ``closed_form_guarantee()``: a verified GDP for a scalar, zCDP for a vector
(the catalogue does not claim GDP for the vector lattice Gaussian).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from ..domain import Domain
from ..noise import Gaussian
from ..queries import CustomQuery
from ..samplers import discrete_gaussian_array, from_lattice, to_lattice

FloatArray = NDArray[np.float64]


def _mean(v: FloatArray) -> FloatArray:
    return np.asarray(np.mean(v, axis=0), dtype=np.float64)


def mean_mechanism(n: int, dim: int, l2: float, record_bound: float, sigma: float,
                   name: str) -> Gaussian:
    """The lattice Gaussian (noise sigma) on the mean of n records in [-record_bound, record_bound]^dim
    whose L2 sensitivity, replace-one, is declared ``l2`` (the caller's bound)."""
    query = CustomQuery(Domain(-record_bound, record_bound, n=n, d=dim), _mean, dim, l2=l2, name=name)
    return Gaussian(query, sigma)


def lattice_release(mech: Gaussian, values: FloatArray, rng: np.random.Generator) -> FloatArray:
    """gamma (round(v/gamma) + Z) for each row v of ``values`` (r, d), Z exact discrete Gaussian: the law
    of ``mech.sample`` on a query answering v."""
    e = mech.grid_exponent()
    idx = to_lattice(values, e)
    noise = discrete_gaussian_array(rng, Fraction(mech.lattice_variance()), idx.shape)
    return from_lattice(idx + noise, e)


def triu_pairs(p: int) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    return np.triu_indices(p)


def release_symmetric(mech: Gaussian, mats: FloatArray, rng: np.random.Generator) -> FloatArray:
    """Release symmetric matrices (r, p, p) by their upper triangles (the matrix Gaussian mechanism of
    [@dwork2014analyze]), the noisy triangle mirrored."""
    p = mats.shape[-1]
    iu, ju = triu_pairs(p)
    noisy = lattice_release(mech, mats[:, iu, ju], rng)
    out = np.zeros_like(mats)
    out[:, iu, ju] = noisy
    out[:, ju, iu] = noisy
    return out


def floor_eigenvalues(mats: FloatArray, floor: float) -> FloatArray:
    """The symmetric matrices with eigenvalues raised to at least ``floor`` (post-processing)."""
    w, v = np.linalg.eigh(mats)
    w = np.maximum(w, floor)
    return np.asarray(np.einsum("rij,rj,rkj->rik", v, w, v), dtype=np.float64)


def sum_mechanism(dim: int, l2: float, record_bound: float, sigma: float, name: str) -> Gaussian:
    """The lattice Gaussian (noise sigma) on the sum of records in [-record_bound, record_bound]^dim
    whose L2 sensitivity, add/remove one record, is declared ``l2``."""
    query = CustomQuery(Domain(-record_bound, record_bound, d=dim, adjacency="add_remove"),
                        lambda v: np.asarray(np.sum(v, axis=0), dtype=np.float64), dim, l2=l2, name=name)
    return Gaussian(query, sigma)
