"""dpcert accountant: privacy guarantees, trade-off functions, conversions and composition."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .core.lazy import lazy_exports

if TYPE_CHECKING:  # the exports, imported on first use (see accountant.lazy)
    from .compose.calibration import calibrate, calibrate_count
    from .compose.composition import (
        Method,
        compose,
        compose_advanced,
        compose_basic,
        compose_clt,
        compose_rdp,
        register_composition,
    )
    from .compose.dpsgd import (
        DPSGDAccount,
        dpsgd_clt_mu,
        dpsgd_epsilon,
        dpsgd_noise_multiplier,
        dpsgd_pld,
        dpsgd_sampling_rate,
        dpsgd_schedule,
        dpsgd_steps,
    )
    from .compose.ledger import BudgetExceededError, Ledger, Release
    from .compose.samplers import (
        SAMPLERS,
        Sampler,
        SamplerBounds,
        batches_per_epoch,
        check_sampler,
        fixed_lower_pld,
        fixed_upper_pld,
        sampler_bounds,
        shuffle_gdp,
        shuffle_lower_pld,
        shuffle_max_cdf,
        shuffle_max_pmfs,
    )
    from .compose.serialisation import (
        guarantee_from_dict,
        guarantee_to_dict,
        register_curve,
        register_guarantee,
    )
    from .compose.subsampled_rdp import subsampled_gaussian_kl, subsampled_gaussian_rdp
    from .core.rounding import div_up
    from .extensions.bcdp import (
        BCDP,
        BayesianDP,
        BCDPCompositionError,
        CoordinateDP,
        LocalDP,
        baseline_zeta,
        bcdp_cdp_vector,
        cdp_to_bcdp,
        ldp_to_bcdp,
        ldp_to_bdp,
        mean_cdp_vector,
    )
    from .extensions.bounded_range import (
        BoundedRange,
        bounded_range_delta,
        bounded_range_rdp,
        bounded_range_renyi,
    )
    from .extensions.interop import OpacusAccountant, from_dp_event, register_dp_event
    from .extensions.opendp import from_opendp, register_opendp_measure
    from .notions.closed_forms import GaussianTradeoff, LaplaceTradeoff
    from .notions.conversions import (
        finite_pair_rdp,
        gdp_to_approx_dp,
        gdp_to_tradeoff,
        gdp_to_zcdp,
        pure_dp_to_approx_dp,
        pure_dp_to_gdp,
        pure_dp_to_rdp,
        pure_dp_to_zcdp,
        randomized_response_rdp,
        rdp_to_approx_dp,
        rdp_to_approx_dp_classic,
        to_gdp,
        to_rdp,
        to_zcdp,
        zcdp_to_approx_dp,
        zcdp_to_rdp,
    )
    from .notions.discrete_gaussian import discrete_gaussian_is_gdp, discrete_gaussian_window
    from .notions.finite_loss import FiniteLossTradeoff
    from .notions.guarantees import (
        CLTGDP,
        FDP,
        GDP,
        RDP,
        ZCDP,
        ApproxDP,
        Approximate,
        AsymptoticDP,
        Guarantee,
        PureDP,
    )
    from .notions.ordering import Implication, implication, implies, register_target
    from .notions.tradeoff import (
        CallableTradeoff,
        LossMoments,
        PiecewiseLinearTradeoff,
        ProfileTradeoff,
        TradeoffFunction,
        profile_to_tradeoff,
        tradeoff_to_profile,
    )
    from .pld.distribution import PLD, compose_plds, pld_from_guarantee
    from .pld.models.base import Pair
    from .pld.models.discrete import DiscreteGaussianPair, DiscreteLaplacePair, TruncatedDiscreteGaussianPair
    from .pld.models.finite import ApproxDPPair, CurvePair, FinitePair, RandomizedResponsePair
    from .pld.models.gaussian import GaussianPair
    from .pld.models.laplace import LaplacePair
    from .pld.models.mixture import MixtureGaussianPair
    from .pld.subsampling import SubsampledPair, subsample, subsampled_gaussian

__all__ = [
    "BCDP",
    "CLTGDP",
    "FDP",
    "GDP",
    "PLD",
    "RDP",
    "SAMPLERS",
    "ZCDP",
    "ApproxDP",
    "ApproxDPPair",
    "Approximate",
    "AsymptoticDP",
    "BCDPCompositionError",
    "BayesianDP",
    "BoundedRange",
    "BudgetExceededError",
    "CallableTradeoff",
    "CoordinateDP",
    "CurvePair",
    "DPSGDAccount",
    "DiscreteGaussianPair",
    "DiscreteLaplacePair",
    "FiniteLossTradeoff",
    "FinitePair",
    "GaussianPair",
    "GaussianTradeoff",
    "Guarantee",
    "Implication",
    "LaplacePair",
    "LaplaceTradeoff",
    "Ledger",
    "LocalDP",
    "LossMoments",
    "Method",
    "MixtureGaussianPair",
    "OpacusAccountant",
    "Pair",
    "PiecewiseLinearTradeoff",
    "ProfileTradeoff",
    "PureDP",
    "RandomizedResponsePair",
    "Release",
    "Sampler",
    "SamplerBounds",
    "SubsampledPair",
    "TradeoffFunction",
    "TruncatedDiscreteGaussianPair",
    "baseline_zeta",
    "batches_per_epoch",
    "bcdp_cdp_vector",
    "bounded_range_delta",
    "bounded_range_rdp",
    "bounded_range_renyi",
    "calibrate",
    "calibrate_count",
    "cdp_to_bcdp",
    "check_sampler",
    "compose",
    "compose_advanced",
    "compose_basic",
    "compose_clt",
    "compose_plds",
    "compose_rdp",
    "discrete_gaussian_is_gdp",
    "discrete_gaussian_window",
    "div_up",
    "dpsgd_clt_mu",
    "dpsgd_epsilon",
    "dpsgd_noise_multiplier",
    "dpsgd_pld",
    "dpsgd_sampling_rate",
    "dpsgd_schedule",
    "dpsgd_steps",
    "finite_pair_rdp",
    "fixed_lower_pld",
    "fixed_upper_pld",
    "from_dp_event",
    "from_opendp",
    "gdp_to_approx_dp",
    "gdp_to_tradeoff",
    "gdp_to_zcdp",
    "guarantee_from_dict",
    "guarantee_to_dict",
    "implication",
    "implies",
    "ldp_to_bcdp",
    "ldp_to_bdp",
    "mean_cdp_vector",
    "pld_from_guarantee",
    "profile_to_tradeoff",
    "pure_dp_to_approx_dp",
    "pure_dp_to_gdp",
    "pure_dp_to_rdp",
    "pure_dp_to_zcdp",
    "randomized_response_rdp",
    "rdp_to_approx_dp",
    "rdp_to_approx_dp_classic",
    "register_composition",
    "register_curve",
    "register_dp_event",
    "register_guarantee",
    "register_opendp_measure",
    "register_target",
    "sampler_bounds",
    "shuffle_gdp",
    "shuffle_lower_pld",
    "shuffle_max_cdf",
    "shuffle_max_pmfs",
    "subsample",
    "subsampled_gaussian",
    "subsampled_gaussian_kl",
    "subsampled_gaussian_rdp",
    "to_gdp",
    "to_rdp",
    "to_zcdp",
    "tradeoff_to_profile",
    "zcdp_to_approx_dp",
    "zcdp_to_rdp",
]

__getattr__, __dir__ = lazy_exports(__name__, __file__)
