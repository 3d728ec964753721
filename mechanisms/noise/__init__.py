"""Additive noise mechanisms: float-to-lattice (``Laplace``, ``Gaussian``) and integer
(``DiscreteLaplace``, ``DiscreteGaussian``)."""

from ..additive import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace

__all__ = ["DiscreteGaussian", "DiscreteLaplace", "Gaussian", "Laplace"]
