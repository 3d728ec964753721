"""Estimators: statistical mechanisms built on the noise and selection layers.

Each estimator is a ``Mechanism`` (``guarantee()``, ``sample(data, rng, size=None)``) declared with
its sensitivity and the guarantee its paper proves; the modules cite their source in
``docs/references.bib``.
"""

from .bcdp_regression import BCDPLeastSquares
from .gradient import NoisyGD, NoisyNewton, default_iterations
from .inference import BatchFit, PrivateFit, WaldTest, wald_test
from .mestimation import BoundedPsiModel, HuberLocation, HuberRegression, LogisticRegression, fit_nonprivate
from .robust import (
    ExponentialQuantile,
    PTRMedian,
    ScaleIQR,
    SmoothSensitivityMedian,
    iqr_distance,
    median_smooth_sensitivity,
    smooth_sensitivity,
)
from .sgd import DPSGD
from .sparse import SparseMean, TruncatedMean
from .stability import (
    ADist,
    ASamp,
    NoisyThresholdTest,
    ProposeTestRelease,
    SubsampleAndAggregate,
    distance_to_sensitivity_above,
    mode_aggregator,
    mode_with_distance,
    order_statistic_local_sensitivity,
    trimmed_mean_aggregator,
)
from .variance import AdaptiveVariance

__all__: list[str] = [
    "DPSGD",
    "ADist",
    "ASamp",
    "AdaptiveVariance",
    "BCDPLeastSquares",
    "BatchFit",
    "BoundedPsiModel",
    "ExponentialQuantile",
    "HuberLocation",
    "HuberRegression",
    "LogisticRegression",
    "NoisyGD",
    "NoisyNewton",
    "NoisyThresholdTest",
    "PTRMedian",
    "PrivateFit",
    "ProposeTestRelease",
    "ScaleIQR",
    "SmoothSensitivityMedian",
    "SparseMean",
    "SubsampleAndAggregate",
    "TruncatedMean",
    "WaldTest",
    "default_iterations",
    "distance_to_sensitivity_above",
    "fit_nonprivate",
    "iqr_distance",
    "median_smooth_sensitivity",
    "mode_aggregator",
    "mode_with_distance",
    "order_statistic_local_sensitivity",
    "smooth_sensitivity",
    "trimmed_mean_aggregator",
    "wald_test",
]
