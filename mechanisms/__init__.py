"""dpcert mechanisms: declared queries with symbolic sensitivity, guarantees and samplers.

Declare a ``Domain`` (records, size n, adjacency), build a query (``Mean``, ``Histogram``, ...) whose
sensitivities are derived with sympy, and wrap it in a mechanism (``Laplace``, ``Gaussian``, ...)
calibrated to a target guarantee. Every mechanism has ``sensitivity``, ``guarantee()`` and
``sample(data, rng, size=None)``.
"""

from .base import Mechanism, OutputSpec, Pipeline, compose_mechanisms
from .calibration import (
    analytic_gaussian_sigma,
    classic_gaussian_sigma,
    gaussian_sigma,
    gaussian_sigma_for,
    laplace_scale,
    laplace_scale_for,
)
from .domain import ADJACENCIES, Adjacency, Domain
from .estimators import (
    DPSGD,
    BatchFit,
    BoundedPsiModel,
    HuberLocation,
    HuberRegression,
    LogisticRegression,
    NoisyGD,
    NoisyNewton,
    PrivateFit,
    WaldTest,
    default_iterations,
    fit_nonprivate,
    wald_test,
)
from .local import BCDPMean, DuchiL2, RandomizedResponse
from .noise import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace
from .queries import (
    Count,
    CustomQuery,
    Histogram,
    LinearCombination,
    Mean,
    Query,
    Sensitivity,
    Sum,
    Variance,
    VectorQuery,
)
from .samplers import (
    bernoulli_exp_neg,
    bernoulli_exp_neg_vec,
    bernoulli_rational,
    discrete_gaussian,
    discrete_gaussian_array,
    discrete_laplace,
    discrete_laplace_array,
)
from .selection import AboveThreshold, ExponentialMechanism, Peeling, PrivateMax, ReportNoisyMax
from .statistics import (
    calibrated,
    clipped_count,
    clipped_mean,
    clipped_sum,
    clipped_variance,
    noisy_histogram,
)

__all__ = [
    "ADJACENCIES",
    "DPSGD",
    "AboveThreshold",
    "Adjacency",
    "BCDPMean",
    "BatchFit",
    "BoundedPsiModel",
    "Count",
    "CustomQuery",
    "DiscreteGaussian",
    "DiscreteLaplace",
    "Domain",
    "DuchiL2",
    "ExponentialMechanism",
    "Gaussian",
    "Histogram",
    "HuberLocation",
    "HuberRegression",
    "Laplace",
    "LinearCombination",
    "LogisticRegression",
    "Mean",
    "Mechanism",
    "NoisyGD",
    "NoisyNewton",
    "OutputSpec",
    "Peeling",
    "Pipeline",
    "PrivateFit",
    "PrivateMax",
    "Query",
    "RandomizedResponse",
    "ReportNoisyMax",
    "Sensitivity",
    "Sum",
    "Variance",
    "VectorQuery",
    "WaldTest",
    "analytic_gaussian_sigma",
    "bernoulli_exp_neg",
    "bernoulli_exp_neg_vec",
    "bernoulli_rational",
    "calibrated",
    "classic_gaussian_sigma",
    "clipped_count",
    "clipped_mean",
    "clipped_sum",
    "clipped_variance",
    "compose_mechanisms",
    "default_iterations",
    "discrete_gaussian",
    "discrete_gaussian_array",
    "discrete_laplace",
    "discrete_laplace_array",
    "fit_nonprivate",
    "gaussian_sigma",
    "gaussian_sigma_for",
    "laplace_scale",
    "laplace_scale_for",
    "noisy_histogram",
    "wald_test",
]
