"""Additive noise mechanisms, split by nature as the float-safety argument is: float-to-lattice
releases of real-valued queries (``lattice``: ``Laplace``, ``Gaussian``) and integer noise for
integer-valued queries (``integer``: ``DiscreteLaplace``, ``DiscreteGaussian``)."""

from .integer import DiscreteGaussian, DiscreteLaplace
from .lattice import Gaussian, Laplace

__all__ = ["DiscreteGaussian", "DiscreteLaplace", "Gaussian", "Laplace"]
