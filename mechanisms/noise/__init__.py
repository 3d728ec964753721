"""Additive noise mechanisms, split by nature as the float-safety argument is: float-to-lattice
releases of real-valued queries (``lattice``: ``Laplace``, ``Gaussian``; ``staircase``: ``Staircase``)
and integer noise for integer-valued queries (``integer``: ``DiscreteLaplace``, ``DiscreteGaussian``)."""

from .integer import DiscreteGaussian, DiscreteLaplace
from .lattice import Gaussian, Laplace
from .staircase import Staircase

__all__ = ["DiscreteGaussian", "DiscreteLaplace", "Gaussian", "Laplace", "Staircase"]
