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

import math
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from accountant.core.types import UNIT_ROUNDOFF, FloatArray

from ..domain import Domain
from ..noise import Gaussian
from ..queries import CustomQuery
from ..samplers import discrete_gaussian_array, from_lattice, to_lattice


def _mean(v: FloatArray) -> FloatArray:
    return np.asarray(np.mean(v, axis=0), dtype=np.float64)


def float_slack(count: int, dim: int) -> float:
    """1 + (16 + 4 sqrt(dim) count^2) 2^-53 >= the relative excess of a sensitivity evaluated in doubles:
    each record's vector is within a few ulps of its bound, and a recursive sum of ``count`` terms
    of magnitude <= b errs by at most count^2 u b per coordinate [@higham2002accuracy, Sec. 4.2], so
    two neighbours' float averages differ by at most 2 sqrt(dim) count u b more than in exact
    arithmetic (u = 2^-53; generous: numpy's pairwise sums err less)."""
    return 1.0 + (16.0 + 4.0 * math.sqrt(dim) * float(count) ** 2) * UNIT_ROUNDOFF


def mean_mechanism(n: int, dim: int, l2: float, record_bound: float, sigma: float,
                   name: str) -> Gaussian:
    """The lattice Gaussian (noise sigma) on the mean of n records in [-record_bound, record_bound]^dim
    whose L2 sensitivity, replace-one, is ``l2`` (the caller's bound) times ``float_slack``."""
    query = CustomQuery(Domain(-record_bound, record_bound, n=n, d=dim), _mean, dim,
                        l2=l2 * float_slack(n, dim), name=name)
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


#: Per-record rounding of a sum's terms: 2^-SUM_FINE_BITS of the release lattice (``exact_sum_release``).
SUM_FINE_BITS = 20


def sum_mechanism(dim: int, l2: float, record_bound: float, sigma: float, name: str) -> Gaussian:
    """The lattice Gaussian (noise sigma) on the sum of records in [-record_bound, record_bound]^dim
    whose L2 norm is at most ``l2`` (add/remove one record), released by ``exact_sum_release``: the
    declared sensitivity is l2 + sqrt(dim) gamma' / 2, gamma' = 2^-SUM_FINE_BITS gamma the grid
    each record is rounded to, whatever the number of records."""
    gamma = 2.0 ** Gaussian(CustomQuery(Domain(-1, 1, d=dim), _mean, dim, l2=1.0), sigma).grid_exponent()
    fine = math.ldexp(gamma, -SUM_FINE_BITS)
    query = CustomQuery(Domain(-record_bound, record_bound, d=dim, adjacency="add_remove"),
                        lambda v: np.asarray(np.sum(v, axis=0), dtype=np.float64), dim,
                        l2=l2 + math.sqrt(dim) * fine / 2.0, name=name)
    return Gaussian(query, sigma)


def exact_sum_release(mech: Gaussian, records: FloatArray, rng: np.random.Generator) -> FloatArray:
    """The lattice release of the sum of ``records`` (m, d), computed exactly: each record is rounded to
    the grid gamma' = 2^-SUM_FINE_BITS gamma (an exact power-of-two scaling and rint), the integers
    are summed exactly in int64 and the sum rounded to the release lattice in integer arithmetic;
    then exact discrete Gaussian noise, as ``Gaussian.sample``. One record moves the exact sum by at
    most its L2 norm plus sqrt(d) gamma'/2, for any m (no floating-point summation error)."""
    e = mech.grid_exponent()
    fine = np.rint(np.ldexp(np.asarray(records, dtype=np.float64), SUM_FINE_BITS - e))
    if fine.size and float(np.abs(fine).max()) * max(1, fine.shape[0]) >= 2.0**62:
        raise ValueError("the records are too large for an exact int64 sum on the release lattice")
    total = fine.astype(np.int64).sum(axis=0)
    idx = (total + (1 << (SUM_FINE_BITS - 1))) >> SUM_FINE_BITS  # round half up, exactly
    noise = discrete_gaussian_array(rng, Fraction(mech.lattice_variance()), idx.shape)
    return from_lattice(idx + noise, e)
