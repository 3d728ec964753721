"""Estimators: statistical mechanisms built on the noise and selection layers.

Each estimator is a ``Mechanism`` (``guarantee()``, ``sample(data, rng, size=None)``) declared with
its sensitivity and the guarantee its paper proves; the modules cite their source in
``docs/references.bib``.
"""

from .adaptive_mean import AdaptiveMean
from .bcdp_regression import BCDPLeastSquares
from .gradient import NoisyGD, NoisyNewton, default_iterations
from .inference import BatchFit, PrivateFit, WaldTest, wald_test
from .interval import (
    IntervalStage,
    candidate_centres,
    float_down,
    histogram_scale,
    interval_histogram,
    occupied_interval,
    split_budget,
)
from .joint_quantiles import JointExponentialIQR, JointExponentialQuantiles
from .local_gd import LocalGradientRandomiser, LocalNoisyGD, local_noisy_gd_rate
from .mestimation import BoundedPsiModel, HuberLocation, HuberRegression, LogisticRegression, fit_nonprivate
from .one_shot import OneShotMEstimator, one_shot_noise_factor
from .ptr_eta import MedianEtaRule, ptr_median_eta, ptr_test_constant
from .ptr_window import PTRWindowMedian, central_window, window_distance, window_mean
from .robust import (
    AdaptivePTRMedian,
    ExponentialQuantile,
    PTRMedian,
    ScaleIQR,
    SmoothSensitivityMedian,
    iqr_distance,
)
from .sgd import DPSGD
from .smooth import NOISE_LAWS, SmoothLLNQuantile, SmoothLLNTrimmedMean, cdp_epsilon_for
from .smooth_arsinh import (
    LatticeArsinhNormal,
    arsinh_dilation_renyi,
    arsinh_dilation_step,
    arsinh_lattice_draw,
    arsinh_log_convexity,
    arsinh_shift_coefficient,
    arsinh_shift_renyi,
    arsinh_shift_rho,
)
from .smooth_laplace import SmoothLaplaceQuantile, laplace_smooth_delta, laplace_smooth_parameters
from .smooth_noise import (
    ArsinhNormal,
    LaplaceLogNormal,
    LatticeLLN,
    LatticeScaleMixture,
    LatticeSmoothNoise,
    LatticeULN,
    UniformLogNormal,
    cdp_rho,
    uln_epsilon,
)
from .smooth_sensitivity import (
    ApproxSmoothOrderStatistic,
    LatticeSmoothRelease,
    SmoothOrderStatistic,
    median_smooth_sensitivity,
    quantile_rank,
    smooth_sensitivity,
)
from .smooth_vector import SmoothSensitivityVector, coordinate_quantile_release
from .sparse import SparseMean, TruncatedMean
from .stability import (
    ADist,
    ASamp,
    NoisyThresholdTest,
    ProposeTestRelease,
    SubsampleAndAggregate,
    check_bounds,
    check_quantile_fields,
    distance_to_sensitivity_above,
    mode_aggregator,
    mode_with_distance,
    order_statistic_local_sensitivity,
    trimmed_mean_aggregator,
)
from .variance import AdaptiveVariance
from .winsorised import WinsorisedMean, winsorised_mean

__all__: list[str] = [
    "DPSGD",
    "NOISE_LAWS",
    "ADist",
    "ASamp",
    "AdaptiveMean",
    "AdaptivePTRMedian",
    "AdaptiveVariance",
    "ApproxSmoothOrderStatistic",
    "ArsinhNormal",
    "BCDPLeastSquares",
    "BatchFit",
    "BoundedPsiModel",
    "ExponentialQuantile",
    "HuberLocation",
    "HuberRegression",
    "IntervalStage",
    "JointExponentialIQR",
    "JointExponentialQuantiles",
    "LaplaceLogNormal",
    "LatticeArsinhNormal",
    "LatticeLLN",
    "LatticeScaleMixture",
    "LatticeSmoothNoise",
    "LatticeSmoothRelease",
    "LatticeULN",
    "LocalGradientRandomiser",
    "LocalNoisyGD",
    "LogisticRegression",
    "MedianEtaRule",
    "NoisyGD",
    "NoisyNewton",
    "NoisyThresholdTest",
    "OneShotMEstimator",
    "PTRMedian",
    "PTRWindowMedian",
    "PrivateFit",
    "ProposeTestRelease",
    "ScaleIQR",
    "SmoothLLNQuantile",
    "SmoothLLNTrimmedMean",
    "SmoothLaplaceQuantile",
    "SmoothOrderStatistic",
    "SmoothSensitivityMedian",
    "SmoothSensitivityVector",
    "SparseMean",
    "SubsampleAndAggregate",
    "TruncatedMean",
    "UniformLogNormal",
    "WaldTest",
    "WinsorisedMean",
    "arsinh_dilation_renyi",
    "arsinh_dilation_step",
    "arsinh_lattice_draw",
    "arsinh_log_convexity",
    "arsinh_shift_coefficient",
    "arsinh_shift_renyi",
    "arsinh_shift_rho",
    "candidate_centres",
    "cdp_epsilon_for",
    "cdp_rho",
    "central_window",
    "check_bounds",
    "check_quantile_fields",
    "coordinate_quantile_release",
    "default_iterations",
    "distance_to_sensitivity_above",
    "fit_nonprivate",
    "float_down",
    "histogram_scale",
    "interval_histogram",
    "iqr_distance",
    "laplace_smooth_delta",
    "laplace_smooth_parameters",
    "local_noisy_gd_rate",
    "median_smooth_sensitivity",
    "mode_aggregator",
    "mode_with_distance",
    "occupied_interval",
    "one_shot_noise_factor",
    "order_statistic_local_sensitivity",
    "ptr_median_eta",
    "ptr_test_constant",
    "quantile_rank",
    "smooth_sensitivity",
    "split_budget",
    "trimmed_mean_aggregator",
    "uln_epsilon",
    "wald_test",
    "window_distance",
    "window_mean",
    "winsorised_mean",
]
