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
    AdaptivePTRMedian,
    ExponentialQuantile,
    PTRMedian,
    ScaleIQR,
    SmoothSensitivityMedian,
    check_bounds,
    iqr_distance,
    median_smooth_sensitivity,
    quantile_rank,
    smooth_sensitivity,
)
from .sgd import DPSGD
from .smooth import SmoothLLNQuantile, SmoothLLNTrimmedMean, cdp_epsilon_for
from .smooth_noise import ArsinhNormal, LaplaceLogNormal, LatticeLLN, UniformLogNormal, cdp_rho
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

__all__: list[str] = [
    "DPSGD",
    "ADist",
    "ASamp",
    "AdaptivePTRMedian",
    "ArsinhNormal",
    "BCDPLeastSquares",
    "BatchFit",
    "BoundedPsiModel",
    "ExponentialQuantile",
    "HuberLocation",
    "HuberRegression",
    "LaplaceLogNormal",
    "LatticeLLN",
    "LogisticRegression",
    "NoisyGD",
    "NoisyNewton",
    "NoisyThresholdTest",
    "PTRMedian",
    "PrivateFit",
    "ProposeTestRelease",
    "ScaleIQR",
    "SmoothLLNQuantile",
    "SmoothLLNTrimmedMean",
    "SmoothSensitivityMedian",
    "SparseMean",
    "SubsampleAndAggregate",
    "TruncatedMean",
    "UniformLogNormal",
    "WaldTest",
    "cdp_epsilon_for",
    "cdp_rho",
    "check_bounds",
    "default_iterations",
    "distance_to_sensitivity_above",
    "fit_nonprivate",
    "iqr_distance",
    "median_smooth_sensitivity",
    "mode_aggregator",
    "mode_with_distance",
    "order_statistic_local_sensitivity",
    "quantile_rank",
    "smooth_sensitivity",
    "trimmed_mean_aggregator",
    "wald_test",
]
