"""Estimators: statistical mechanisms built on the noise and selection layers.

Each estimator is a ``Mechanism`` (``guarantee()``, ``sample(data, rng, size=None)``) declared with
its sensitivity and the guarantee its paper proves; the modules cite their source in
``docs/references.bib``.
"""

from .bcdp_regression import BCDPLeastSquares
from .gradient import NoisyGD, NoisyNewton, default_iterations
from .inference import BatchFit, PrivateFit, WaldTest, wald_test
from .mestimation import BoundedPsiModel, HuberLocation, HuberRegression, LogisticRegression, fit_nonprivate
from .sgd import DPSGD

__all__: list[str] = [
    "DPSGD",
    "BCDPLeastSquares",
    "BatchFit",
    "BoundedPsiModel",
    "HuberLocation",
    "HuberRegression",
    "LogisticRegression",
    "NoisyGD",
    "NoisyNewton",
    "PrivateFit",
    "WaldTest",
    "default_iterations",
    "fit_nonprivate",
    "wald_test",
]
