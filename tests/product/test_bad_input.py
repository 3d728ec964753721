"""Issue 8: every public callable of accountant, mechanisms and verify refuses bad input clearly.

A data-driven walker: for each name in the packages' ``__all__`` a table gives valid arguments;
each numeric or sequence parameter (found with ``inspect.signature``) is replaced, one at a time,
by values from a table of bad ones. A value that is never valid (NaN, a string, a bool, None where
None is not the default, a non-integer where an int goes, a sequence holding NaN or a string) must
raise ``ValueError``/``TypeError`` whose message names the parameter; a value that may be legal
(+-inf, -1, 0, 1e308, 10**400, an empty sequence, ...) must be accepted or refused the same way.
Never ``OverflowError``, ``ZeroDivisionError``, ``IndexError``, or a call that does not return
within ``CALL_SECONDS``. A few methods everyone calls (``delta``, ``epsilon``, ``sample``) are
walked too.
"""

from __future__ import annotations

import inspect
import math
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import numpy as np
import pytest

import accountant
import mechanisms
import verify
from accountant import (
    FDP,
    GDP,
    PLD,
    RDP,
    ZCDP,
    ApproxDP,
    FiniteLossTradeoff,
    GaussianPair,
    GaussianTradeoff,
    PureDP,
)
from mechanisms import Count, CustomQuery, Domain, Laplace, Mean, RandomizedResponse, Sum
from verify import examples

#: Wall-clock limit of one call (a bad value must not make a call run away).
CALL_SECONDS = 3.0

#: Exported names that take no user input to validate: abstract bases, exception types, aliases and
#: constants, and result records the library builds itself (reports, certificates, descriptors).
NOT_WALKED = {
    "accountant.Guarantee": "abstract base",
    "accountant.TradeoffFunction": "abstract base",
    "accountant.BudgetExceededError": "exception type",
    "accountant.Pair": "abstract base",
    "accountant.Implication": "result record returned by implication",
    "accountant.register_composition": "registration hook (takes types and a function)",
    "accountant.register_guarantee": "registration hook (takes a type)",
    "accountant.register_curve": "registration hook (takes a type)",
    "accountant.register_target": "registration hook (a singledispatch register)",
    "accountant.DPSGDAccount": "result record returned by dpsgd_epsilon",
    "mechanisms.Rate": "result record returned by the rate functions",
    "verify.AuditPlan": "result record returned by plan_audit",
    "accountant.SamplerBounds": "result record returned by sampler_bounds",
    "accountant.SAMPLERS": "constant",
    "accountant.Sampler": "type alias",
    "accountant.Method": "type alias",
    "verify.Auditable": "type alias (what verify.audit draws from)",
    "verify.Neighbours": "type alias (pairs or a neighbour search)",
    "verify.DeclaredMechanism": "protocol (a type for annotations)",
    "verify.NeighbourSearch": "protocol (a type for annotations)",
    "verify.SampledMechanism": "protocol (a type for annotations)",
    "mechanisms.Mechanism": "abstract base",
    "mechanisms.Query": "abstract base",
    "mechanisms.ADJACENCIES": "constant",
    "mechanisms.Adjacency": "type alias",
    "mechanisms.OutputSpec": "descriptor returned by Mechanism.output",
    "mechanisms.Sensitivity": "record derived by every Query",
    "verify.AuditReport": "result record returned by audit",
    "verify.Certificate": "result record returned by certify",
    "verify.TestPoint": "result record inside AuditReport",
    "verify.MechanismError": "exception type",
    "accountant.BCDPCompositionError": "exception type",
    "accountant.register_dp_event": "registration hook (takes a class name)",
    "mechanisms.BOTTOM": "constant (the refusal value)",
    "mechanisms.refused": "takes any outputs (None, NaN, strings are outputs too) and marks the refusals",
    "mechanisms.Refusal": "the refusal's type (a singleton, no parameters)",
    "verify.AdaptiveNeighbourSearch": "alias of AdaptiveSearch",
    "verify.Finding": "result record inside AuditReport",
    "verify.OneRunReport": "result record returned by one_run_audit",
    "verify.CanaryAuditReport": "result record returned by canary_audit",
    "verify.GuessTest": "result record inside OneRunReport",
    "verify.alignment_score": "takes a function (the canary's direction) and returns a scorer",
    "verify.loss_score": "takes a function (the loss) and returns a scorer",
    "mechanisms.BatchFit": "result record returned by NoisyGD/NoisyNewton.fit_batch",
    "mechanisms.PrivateFit": "result record returned by NoisyGD/NoisyNewton.fit",
    "mechanisms.WaldTest": "result record returned by wald_test",
    "mechanisms.BoundedPsiModel": "abstract base",
    "accountant.Approximate": "abstract base (the marker of CLTGDP and AsymptoticDP)",
    "accountant.from_dp_event": "takes a dp_accounting event tree (tests/test_interop.py walks its fields)",
    "accountant.from_opendp": "takes an OpenDP measurement (tests/accountant/extensions/test_opendp.py "
                              "feeds it bad map values)",
    "accountant.register_opendp_measure": "registration hook (takes a measure name)",
}

#: Accountant refusals still missing when this walker landed (owned by the accountant's authors, see
#: issue 8): (callable, parameter, repr(value)). Remove entries as they are fixed; the test fails
#: if an entry is fixed but still listed, so this set can only shrink.
KNOWN_ACCOUNTANT_GAPS: set[tuple[str, str, str]] = set()


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


def _scores() -> CustomQuery:
    return CustomQuery(Domain(-1, 1), lambda x: np.array([0.0, 1.0, 2.0]) + x[0], 3, linf=1.0)


def _dom() -> Domain:
    return Domain(0, 1, n=10)


def _rdp() -> RDP:
    return RDP(orders=(2.0, 4.0), epsilons=(0.5, 1.0))


Args = tuple[tuple[Any, ...], dict[str, Any]]

#: Valid arguments per exported callable ("package.name").
VALID: dict[str, Callable[[], Args]] = {
    # accountant
    "accountant.LocalDP": lambda: ((1.0,), {}),
    "accountant.BayesianDP": lambda: ((1.0,), {}),
    "accountant.CoordinateDP": lambda: (((0.1, 0.2),), {"eps": 0.25}),
    "accountant.BCDP": lambda: (((0.2, 2.0),), {"q": 0.1, "eps": 2.0}),
    "accountant.ldp_to_bdp": lambda: ((accountant.LocalDP(1.0),), {}),
    "accountant.ldp_to_bcdp": lambda: ((accountant.LocalDP(1.0), 3), {}),
    "accountant.cdp_to_bcdp": lambda: ((accountant.CoordinateDP((0.1, 0.2)), 0.3), {}),
    "accountant.bcdp_cdp_vector": lambda: (((0.2, 2.0), 0.3), {}),
    "accountant.mean_cdp_vector": lambda: (((0.2, 2.0), 2.0, 0.3, 0.5), {}),
    "accountant.baseline_zeta": lambda: (((0.2, 2.0), 2.0, 0.3), {}),
    "accountant.CLTGDP": lambda: ((1.0,), {"gamma": 0.5}),
    "accountant.calibrate": lambda: ((lambda s: GDP(1.0 / s), GDP(1.0), (0.1, 10.0)), {}),
    "accountant.calibrate_count": lambda: ((lambda n: GDP(float(n)), GDP(2.5), (1, 10)), {}),
    "accountant.div_up": lambda: ((1.0, 3.0), {}),
    "accountant.FDP": lambda: ((GaussianTradeoff(1.0),), {}),
    "accountant.GDP": lambda: ((1.0,), {}),
    "accountant.PLD": lambda: ((PLD.gaussian(1.0).factors,), {"tol": 3e-5}),
    "accountant.RDP": lambda: ((), {"orders": (2.0, 4.0), "epsilons": (0.5, 1.0)}),
    "accountant.ZCDP": lambda: ((0.5,), {}),
    "accountant.ApproxDP": lambda: ((1.0, 1e-5), {}),
    "accountant.AsymptoticDP": lambda: ((1.0, 1e-5), {"holds_when": "as n -> infinity"}),
    "accountant.CallableTradeoff": lambda: ((lambda a: np.maximum(1.0 - np.asarray(a), 0.0),), {}),
    "accountant.FiniteLossTradeoff": lambda: _fields(FiniteLossTradeoff.randomized_response(1.0, 3)),
    "accountant.GaussianTradeoff": lambda: ((1.0,), {}),
    "accountant.LaplaceTradeoff": lambda: ((1.0,), {}),
    "accountant.Ledger": lambda: ((), {"budget": ApproxDP(1.0, 1e-5)}),
    "accountant.LossMoments": lambda: ((0.1, 0.2, 0.3), {}),
    "accountant.PiecewiseLinearTradeoff": lambda: (([0.0, 0.5, 1.0], [1.0, 0.3, 0.0]), {}),
    "accountant.ProfileTradeoff": lambda: ((GDP(1.0).delta,), {"eps_grid": np.linspace(0.0, 5.0, 11)}),
    "accountant.PureDP": lambda: ((1.0,), {}),
    "accountant.GaussianPair": lambda: ((1.0,), {}),
    "accountant.implies": lambda: ((GDP(1.0), GDP(2.0)), {}),
    "accountant.implication": lambda: ((GDP(1.0), GDP(2.0)), {}),
    "accountant.guarantee_to_dict": lambda: ((GDP(1.0),), {}),
    "accountant.guarantee_from_dict": lambda: (({"type": "GDP", "mu": 1.0},), {}),
    "accountant.LaplacePair": lambda: ((1.0,), {}),
    "accountant.RandomizedResponsePair": lambda: ((1.0, 3), {}),
    "accountant.ApproxDPPair": lambda: ((1.0, 1e-5), {}),
    "accountant.DiscreteLaplacePair": lambda: ((2.0, 1), {}),
    "accountant.DiscreteGaussianPair": lambda: ((2.0, 1), {}),
    "accountant.MixtureGaussianPair": lambda: ((1.0, (0.0, 1.0), (0.9, 0.1)), {}),
    "accountant.TruncatedDiscreteGaussianPair": lambda: ((2.0, 10, 1), {}),
    "accountant.CurvePair": lambda: ((FiniteLossTradeoff.randomized_response(1.0),), {}),
    "accountant.FinitePair": lambda: ((PLD.from_pmfs([0.5, 0.5], [0.25, 0.75]).factors[0][0].remove,),
                                      {"label": "pmfs"}),
    "accountant.SubsampledPair": lambda: ((GaussianPair(1.0), 0.1), {"scheme": "poisson"}),
    "accountant.Release": lambda: ((PureDP(1.0),), {"count": 2, "label": "x"}),
    "accountant.compose": lambda: (([PureDP(1.0), GDP(0.5)],), {}),
    "accountant.compose_advanced": lambda: (([PureDP(0.1)] * 3,), {}),
    "accountant.compose_basic": lambda: (([PureDP(0.1), ApproxDP(0.2, 1e-6)],), {}),
    "accountant.compose_clt": lambda: (([PureDP(0.1)] * 3,), {}),
    "accountant.compose_plds": lambda: (([GDP(0.5), PureDP(0.1)],), {"tol": 3e-5}),
    "accountant.compose_rdp": lambda: (([_rdp(), _rdp()],), {"weights": [1, 2]}),
    "accountant.discrete_gaussian_is_gdp": lambda: ((1, Fraction(4), 1.0), {}),
    "accountant.discrete_gaussian_window": lambda: ((Fraction(4),), {}),
    "accountant.dpsgd_clt_mu": lambda: ((0.01, 1.0, 100), {}),
    "accountant.dpsgd_epsilon": lambda: ((0.01, 1.0, 10, 1e-5), {}),
    "accountant.batches_per_epoch": lambda: ((0.25,), {}),
    "accountant.check_sampler": lambda: (("shuffle",), {}),
    "accountant.shuffle_gdp": lambda: ((0.25, 1.0, 10), {}),
    "accountant.shuffle_max_cdf": lambda: ((0.5, 1.0, 4, 3, 2), {}),
    "accountant.shuffle_max_pmfs": lambda: ((1.0, 4, 3), {"cells": 20}),
    "accountant.shuffle_lower_pld": lambda: ((0.5, 1.0, 3), {"tol": 1e-2, "cells": 20}),
    "accountant.fixed_upper_pld": lambda: ((0.1, 1.0, 5), {"tol": 1e-2}),
    "accountant.fixed_lower_pld": lambda: ((0.1, 1.0, 5), {"tol": 1e-2}),
    "accountant.sampler_bounds": lambda: (("fixed", 0.1, 1.0, 5), {"tol": 1e-2}),
    "accountant.dpsgd_schedule": lambda: ((), {"epochs": 2.0, "batch_size": 10, "dataset_size": 100}),
    "accountant.dpsgd_pld": lambda: ((0.01, 1.0, 10), {}),
    "accountant.dpsgd_noise_multiplier": lambda: ((2.0, 1e-5, 0.5, 2), {"rtol": 1e-2}),
    "accountant.dpsgd_sampling_rate": lambda: ((2.0, 1e-5, 1.0, 5), {"rtol": 1e-2}),
    "accountant.dpsgd_steps": lambda: ((2.0, 1e-5, 0.5, 2.0), {"max_steps": 50, "rtol": 1e-2}),
    "accountant.OpacusAccountant": lambda: ((), {}),
    "accountant.gdp_to_approx_dp": lambda: ((1.0,), {"delta": 1e-5}),
    "accountant.gdp_to_tradeoff": lambda: ((1.0,), {}),
    "accountant.gdp_to_zcdp": lambda: ((1.0,), {}),
    "accountant.pld_from_guarantee": lambda: ((GDP(1.0),), {"tol": 3e-5}),
    "accountant.profile_to_tradeoff": lambda: ((GDP(1.0).delta,), {"eps_grid": [0.0, 1.0, 2.0]}),
    "accountant.pure_dp_to_approx_dp": lambda: ((1.0,), {"delta": 1e-5}),
    "accountant.pure_dp_to_gdp": lambda: ((1.0,), {}),
    "accountant.pure_dp_to_rdp": lambda: ((1.0,), {"orders": [2.0, 3.0]}),
    "accountant.pure_dp_to_zcdp": lambda: ((1.0,), {}),
    "accountant.randomized_response_rdp": lambda: ((1.0,), {"k": 3}),
    "accountant.BoundedRange": lambda: ((1.0,), {}),
    "accountant.bounded_range_delta": lambda: ((1.0, 0.5), {}),
    "accountant.bounded_range_rdp": lambda: ((1.0,), {}),
    "accountant.bounded_range_renyi": lambda: ((1.0, 2.5), {}),
    "accountant.finite_pair_rdp": lambda: ((FiniteLossTradeoff.randomized_response(1.0, 3),), {}),
    "accountant.rdp_to_approx_dp": lambda: ((_rdp(),), {"delta": 1e-5}),
    "accountant.rdp_to_approx_dp_classic": lambda: ((_rdp(),), {"delta": 1e-5}),
    "accountant.subsample": lambda: ((PureDP(1.0), 0.1), {}),
    "accountant.subsampled_gaussian": lambda: ((1.0, 0.1), {"sensitivity": 1.0}),
    "accountant.subsampled_gaussian_rdp": lambda: ((0.01, 1.0), {"steps": 10, "orders": (2, 4.5)}),
    "accountant.subsampled_gaussian_kl": lambda: ((0.01, 1.0), {}),
    "accountant.to_gdp": lambda: ((PureDP(1.0),), {}),
    "accountant.to_rdp": lambda: ((GDP(1.0),), {}),
    "accountant.to_zcdp": lambda: ((GDP(1.0),), {}),
    "accountant.tradeoff_to_profile": lambda: ((GaussianTradeoff(1.0),), {}),
    "accountant.zcdp_to_approx_dp": lambda: ((0.5,), {"delta": 1e-5}),
    "accountant.zcdp_to_rdp": lambda: ((0.5,), {"orders": [2.0, 3.0]}),
    # mechanisms
    "mechanisms.DuchiL2": lambda: ((1.0, 1.0, 3), {}),
    "mechanisms.BCDPMean": lambda: (((0.1, 0.5),), {"q": 0.2}),
    "mechanisms.AboveThreshold": lambda: ((_scores(), 0.5, 1.0), {}),
    "mechanisms.Count": lambda: ((_dom(),), {}),
    "mechanisms.CustomQuery": lambda: ((Domain(-1, 1), lambda x: x[:3], 3), {"linf": 1.0}),
    "mechanisms.DiscreteGaussian": lambda: ((Count(_dom()), 2.0), {}),
    "mechanisms.DiscreteLaplace": lambda: ((Count(_dom()), 2.0), {}),
    "mechanisms.Domain": lambda: ((0.0, 1.0), {"n": 10, "d": 1}),
    "mechanisms.ExponentialMechanism": lambda: ((_scores(), 1.0), {}),
    "mechanisms.Gaussian": lambda: ((Mean(_dom()), 1.0), {}),
    "mechanisms.Histogram": lambda: ((_dom(),), {"edges": (0.0, 0.5, 1.0)}),
    "mechanisms.Laplace": lambda: ((Mean(_dom()), 1.0), {}),
    "mechanisms.LinearCombination": lambda: (((Mean(_dom()), Sum(_dom())), (1.0, 2.0)), {}),
    "mechanisms.Mean": lambda: ((_dom(),), {}),
    "mechanisms.Staircase": lambda: ((Mean(_dom()), 1.0), {}),
    "mechanisms.Peeling": lambda: ((_scores(), 2, 1.0, 1e-5), {}),
    "mechanisms.Pipeline": lambda: (((Laplace(Mean(_dom()), 1.0), RandomizedResponse(2, 1.0)),), {}),
    "mechanisms.PrivateMax": lambda: ((_scores(), 1.0), {}),
    "mechanisms.RandomizedResponse": lambda: ((3, 1.0), {}),
    "mechanisms.ReportNoisyMax": lambda: ((_scores(), 1.0), {}),
    "mechanisms.ADist": lambda: ((lambda v: 0.0, lambda v: 3.0, 1.0, 1e-6), {"integer": True}),
    "mechanisms.ASamp": lambda: ((lambda v: float(v.sum() > 0), 1.0, 1e-3), {"q": 0.02, "m": 2000}),
    "mechanisms.ExponentialQuantile": lambda: ((-2.0, 4.0, 100, 1.0), {"q": 0.5, "bins": 600}),
    "mechanisms.JointExponentialQuantiles": lambda: ((-2.0, 4.0, 100, 1.0),
                                                     {"qs": (0.25, 0.75), "bins": 600}),
    "mechanisms.JointExponentialIQR": lambda: ((-2.0, 4.0, 100, 1.0), {"bins": 600}),
    "mechanisms.NoisyThresholdTest": lambda: ((1.0, 5.0), {}),
    "mechanisms.PTRMedian": lambda: ((0.0, 1.0, 100, 1.0, 1e-6, 0.01), {"q": 0.5}),
    "mechanisms.ProposeTestRelease": lambda: ((lambda v: 3.0, Laplace(Mean(_dom()), 1.0),
                                               mechanisms.NoisyThresholdTest(1.0, 5.0)),
                                              {"release_delta": 0.0}),
    "mechanisms.ScaleIQR": lambda: ((1.0, 1e-6), {}),
    "mechanisms.SmoothSensitivityMedian": lambda: ((0.0, 1.0, 100, 1.0, 1e-6), {"q": 0.5}),
    "mechanisms.SmoothSensitivityVector": lambda: ((lambda v: v.mean(axis=0), lambda v, xi: 0.5,
                                                    Domain(0, 1, 10, d=2, clip=True), 2, 1.0, 1e-6, 1.5,
                                                    1e-3), {}),
    "mechanisms.coordinate_quantile_release": lambda: ((0.0, 1.0, 100, 2, 1.0, 1e-6), {"q": 0.5}),
    "mechanisms.WinsorisedMean": lambda: ((-2.0, 4.0, 100, 1.0), {"quantile": 0.1, "bounds_share": 0.5}),
    "mechanisms.LocalGradientRandomiser": lambda: ((2, 1.0, 1.0), {}),
    "mechanisms.LocalNoisyGD": lambda: ((mechanisms.HuberLocation(), 100, 1.0, 5), {"step": 1.0}),
    "mechanisms.SmoothLLNQuantile": lambda: ((0.0, 1.0, 100, 0.5), {"q": 0.5}),
    "mechanisms.SmoothLaplaceQuantile": lambda: ((0.0, 1.0, 100, 1.0, 1e-6), {"q": 0.5}),
    "mechanisms.PTRWindowMedian": lambda: ((0.0, 1.0, 100, 0.5, 1e-6, 0.01), {"half_width": 3, "q": 0.5}),
    "mechanisms.SmoothLLNTrimmedMean": lambda: ((0.0, 1.0, 100, 0.5), {"trim": 10}),
    "mechanisms.AdaptivePTRMedian": lambda: ((0.0, 1.0, 100, 1.0, 1e-6), {"q": 0.5}),
    "mechanisms.SparseMean": lambda: ((1.0, 50, 100, 3, 1.0, 1e-6), {}),
    "mechanisms.SubsampleAndAggregate": lambda: ((np.mean, 10,
                                                   mechanisms.ExponentialQuantile(-2.0, 4.0, 10, 1.0)), {}),
    "mechanisms.TruncatedMean": lambda: ((1.0, 5, 100, 1.0, 1e-6), {}),
    "verify.AdaptiveSearch": lambda: (((0.0, 1.0, 3), "replace"), {"integers": False, "sensitivity": 1.0,
                                                                   "budget": 48, "keep": 8,
                                                                   "ball": ("l2", 1.0),
                                                                   "method": "surrogate", "norm": "linf"}),
    "mechanisms.DPSGD": lambda: ((mechanisms.LogisticRegression(2), 100, 1.0, 0.1, 5), {}),
    "mechanisms.HuberLocation": lambda: ((1.345, 1.0), {}),
    "mechanisms.OneShotMEstimator": lambda: ((mechanisms.HuberLocation(), 30, 1.0, 1e-5), {"iterations": 20}),
    "mechanisms.one_shot_noise_factor": lambda: ((100, 1.0, 1e-5), {}),
    "mechanisms.MedianEtaRule": lambda: ((0.3,), {"tau": 0.1}),
    "mechanisms.ptr_median_eta": lambda: ((100, 1.0, 1e-6, 0.1, 0.3), {}),
    "mechanisms.ptr_test_constant": lambda: ((1.0, 1e-6, 0.1), {}),
    "mechanisms.HuberRegression": lambda: ((2,), {"c": 1.345, "scale": 1.0, "design_bound": 10.0}),
    "mechanisms.LogisticRegression": lambda: ((2,), {"clip": 1.0, "design_bound": 1.0}),
    "mechanisms.NoisyGD": lambda: ((mechanisms.HuberLocation(), 100, 1.0, 5), {"step": 1.0}),
    "mechanisms.NoisyNewton": lambda: ((mechanisms.HuberLocation(), 100, 1.0, 5), {"step": 1.0}),
    "mechanisms.default_iterations": lambda: ((1000, "gd"), {}),
    "mechanisms.fit_nonprivate": lambda: ((mechanisms.HuberLocation(), np.ones((1, 30, 1)),
                                           np.linspace(-1.0, 1.0, 30)[None]), {}),
    "mechanisms.wald_test": lambda: ((np.array([0.1, 0.2]), np.eye(2)), {}),
    "mechanisms.Sum": lambda: ((_dom(),), {}),
    "mechanisms.Variance": lambda: ((_dom(),), {}),
    "mechanisms.CentredSum": lambda: ((_dom(), 0.5), {"power": 2}),
    "mechanisms.AdaptiveVariance": lambda: ((-2.0, 4.0, 1.0), {"adjacency": "replace", "n": 100}),
    "mechanisms.AdaptiveMean": lambda: ((-2.0, 4.0, 1.0, 100), {}),
    "mechanisms.VectorQuery": lambda: (((Mean(_dom()), Sum(_dom())),), {}),
    "mechanisms.analytic_gaussian_sigma": lambda: ((1.0, 1.0, 1e-5), {}),
    "mechanisms.bernoulli_exp_neg": lambda: ((_rng(), Fraction(1, 2)), {}),
    "mechanisms.bernoulli_exp_neg_vec": lambda: ((_rng(), np.array([1, 2]), np.array([3, 3])), {}),
    "mechanisms.bernoulli_rational": lambda: ((_rng(), Fraction(1, 3)), {}),
    "mechanisms.calibrated": lambda: ((Mean(_dom()), PureDP(1.0)), {}),
    "mechanisms.classic_gaussian_sigma": lambda: ((1.0, 0.5, 1e-5), {}),
    "mechanisms.clipped_count": lambda: ((Domain(0, 1, adjacency="add_remove"), PureDP(1.0)), {}),
    "mechanisms.clipped_mean": lambda: ((_dom(), PureDP(1.0)), {}),
    "mechanisms.clipped_sum": lambda: ((_dom(), PureDP(1.0)), {}),
    "mechanisms.clipped_variance": lambda: ((_dom(), PureDP(1.0)), {}),
    "mechanisms.compose_mechanisms": lambda: (([Laplace(Mean(_dom()), 1.0)],), {}),
    "mechanisms.discrete_gaussian": lambda: ((_rng(), Fraction(2)), {}),
    "mechanisms.discrete_gaussian_array": lambda: ((_rng(), Fraction(2), (3,)), {}),
    "mechanisms.discrete_laplace": lambda: ((_rng(), Fraction(2)), {}),
    "mechanisms.discrete_laplace_array": lambda: ((_rng(), Fraction(2), (3,)), {}),
    "mechanisms.gaussian_sigma": lambda: ((1.0, GDP(1.0)), {}),
    "mechanisms.gaussian_sigma_for": lambda: ((GDP(1.0), 1.0, "analytic"), {}),
    "mechanisms.laplace_scale": lambda: ((1.0, PureDP(1.0)), {}),
    "mechanisms.laplace_scale_for": lambda: ((PureDP(1.0), 1.0), {}),
    "mechanisms.noisy_histogram": lambda: ((_dom(), PureDP(1.0)), {"edges": [0.0, 0.5, 1.0]}),
    "mechanisms.sparse_mean_lower_rate": lambda: ((1000, 100, 5, 1.0, 1e-4), {"sigma": 1.0}),
    "mechanisms.sparse_mean_rate": lambda: ((1000, 100, 5, 1.0, 1e-4), {"sigma": 1.0, "bounded": True}),
    "mechanisms.truncated_mean_rate": lambda: ((1000, 10, 1.0, 1e-4), {"sigma": 1.0, "bounded": True}),
    "mechanisms.mean_lower_rate": lambda: ((1000, 10, 1.0, 1e-4), {"sigma": 1.0}),
    "mechanisms.bcdp_mean_rate": lambda: ((1000, [0.5, 1.0, 2.0]), {}),
    "mechanisms.bcdp_mean_corollary_rate": lambda: ((1000, 10, 3, 0.1, 1.0, 0.5), {}),
    "mechanisms.bcdp_least_squares_rate": lambda: ((1000, [0.5, 1.0, 2.0], 1.0), {}),
    # verify
    "verify.PatternSearch": lambda: ((3,), {"sensitivity": 1.0, "base": 0.0}),
    "verify.RandomSearch": lambda: (((0.0, 1.0, 3),), {"count": 5}),
    "verify.assert_private": lambda: ((examples.GeometricMechanism(1.0), PureDP(1.0), (0, 1)),
                                      {"samples": 500, "confidence": 0.95, "seed": 0}),
    "verify.audit": lambda: ((examples.GeometricMechanism(1.0), [(0, 1)], PureDP(1.0)),
                             {"samples": 500, "confidence": 0.95, "seed": 0, "selection_fraction": 0.5,
                              "delta": 0.0, "max_pairs": 2, "workers": 1}),
    "verify.certify": lambda: ((examples.GeometricMechanism(1.0), PureDP(1.0)), {"delta": 0.0}),
    "verify.statdp_patterns": lambda: ((3,), {"sensitivity": 1.0, "base": 0.0}),
    "verify.audit_power": lambda: ((PureDP(1.0), PureDP(2.0), 100), {"confidence": 0.95, "tests": 2,
                                                                    "selection_fraction": 0.3}),
    "verify.plan_audit": lambda: ((PureDP(1.0), PureDP(2.0), 100), {"confidence": 0.95, "tests": 2,
                                                                   "selection_fraction": 0.3}),
    "verify.samples_needed": lambda: ((PureDP(1.0), PureDP(2.0)), {"confidence": 0.95, "power": 0.5,
                                                                  "tests": 2, "selection_fraction": 0.3}),
    "verify.power_ceiling": lambda: ((PureDP(1.0), 100), {"confidence": 0.95}),
    "verify.tradeoff_fixed_point": lambda: ((PureDP(1.0),), {}),
    "verify.one_run_audit": lambda: (([0.1, 0.9, 0.2, 0.8], np.array([False, True, False, True])),
                                     {"delta": 0.0, "confidence": 0.95, "guesses": [(1, 1)]}),
    "verify.canary_audit": lambda: ((lambda data, rng: list(data), lambda model, c: float(c in model),
                                     [1.0, 2.0, 3.0, 4.0], _rng()),
                                    {"delta": 0.0, "confidence": 0.95, "runs": 1, "guesses": [(1, 1)]}),
}


def _method_at_half(g: object, m: str) -> Callable[[], tuple[Callable[..., Any], Args]]:
    """A thunk giving the bound method ``g.m`` and its arguments, (0.5,)."""
    def call() -> tuple[Callable[..., Any], Args]:
        return getattr(g, m), ((0.5,), {})

    return call


#: Methods everyone calls, walked like the exported callables.
METHODS: dict[str, Callable[[], tuple[Callable[..., Any], Args]]] = {
    **{f"{type(g).__name__}.{m}": _method_at_half(g, m)
       for g in (PureDP(1.0), ApproxDP(1.0, 1e-5), GDP(1.0), ZCDP(0.5), FDP(GaussianTradeoff(1.0)))
       for m in ("delta", "epsilon")},
    "RDP.epsilon": lambda: (_rdp().epsilon, ((1e-5,), {})),
    "PLD.delta": lambda: (PLD.gaussian(1.0).delta, ((0.5,), {})),
    "PLD.epsilon": lambda: (PLD.gaussian(1.0).epsilon, ((1e-5,), {})),
    "Laplace.sample": lambda: (Laplace(Mean(_dom()), 1.0).sample, (([0.5] * 10, _rng()), {"size": 3})),
    "RandomizedResponse.sample": lambda: (RandomizedResponse(3, 1.0).sample, (([0, 1, 2], _rng()),
                                                                                {"size": 3})),
}

#: Where the message names the value by another word than the parameter.
MESSAGE_NAME: dict[tuple[str, str], str | tuple[str, ...]] = {
    ("mechanisms.Gaussian", "scale"): "sigma",
    ("mechanisms.DiscreteGaussian", "scale"): "sigma",
    ("Laplace.sample", "data"): ("data", "record"),
    ("RandomizedResponse.sample", "data"): "record",
}

#: Values of the bad-value table that are legal for one parameter: (callable, parameter) -> reprs.
LEGAL = {
    ("mechanisms.Domain", "lower"): {"[1.0]"},  # per-coordinate bounds
    ("mechanisms.Domain", "upper"): {"[1.0]"},
    ("verify.assert_private", "seed"): {"None"},  # fresh entropy
    ("verify.audit", "seed"): {"None"},
    **{(f"{g}.delta", "eps"): {"[1.0]"} for g in ("PureDP", "ApproxDP", "GDP", "ZCDP", "FDP", "PLD")},
}  # (profiles are vectorised: delta([1.0]) is an array)

#: Values of the "may be legal" table that one parameter must refuse (issue 27):
#: (callable, parameter) -> reprs.
MUST_REFUSE = {
    ("mechanisms.Domain", "n"): {"None", "10**400", "-10**400", "0.0", "-1.0", "1e308", "inf"},
}

#: Parameters not walked: the data handed to the audited code (its failures are MechanismError; any
#: object can be a canary: canary_audit checks only that canaries is a sequence).
NOT_WALKED_PARAMS = {("verify.assert_private", "pair"), ("verify.canary_audit", "canaries")}

NAN, INF = math.nan, math.inf
HUGE_INT = 10**400


def _fields(obj: Any) -> Args:
    import dataclasses

    return (), {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.init}


def _is_number(v: Any) -> bool:
    numeric = (int, float, np.integer, np.floating, Fraction)
    return isinstance(v, numeric) and not isinstance(v, (bool, np.bool_))


def _is_sequence(v: Any) -> bool:
    if isinstance(v, np.ndarray):
        return v.ndim == 1 and v.size > 0 and v.dtype.kind in "iuf"
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(_is_number(x) for x in v)


def bad_values(valid: Any, none_ok: bool) -> Iterator[tuple[Any, bool]]:
    """(value, never_valid) pairs for a parameter whose valid value is ``valid``; None is bad unless
    it is the parameter's default."""
    if _is_number(valid):
        integer = isinstance(valid, (int, np.integer))
        yield NAN, True
        yield True, True
        yield [1.0], True
        yield "0.5", True
        if not none_ok:
            yield None, True
        yield 2.5, integer
        for v in (INF, -INF, -1.0, 0.0, 1e308, HUGE_INT, -HUGE_INT):
            yield v, False
    elif _is_sequence(valid):
        first = list(valid)
        for elem, never in ((NAN, True), ("a", True), (None, True), (INF, False), (-1.0, False),
                            (HUGE_INT, False), (1e308, False)):
            yield (elem, *first[1:]) if isinstance(valid, tuple) else [elem, *first[1:]], never
        if not none_ok:
            yield None, True
        yield "abc", True
        yield [], False
        yield 1.0, False


class CallTimeout(Exception):
    pass


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    def _raise(signum: int, frame: Any) -> None:
        raise CallTimeout(f"no answer within {seconds} s")

    old = signal.signal(signal.SIGALRM, _raise)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def walk(name: str, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    """Problems found when each numeric/sequence parameter of ``fn`` gets each bad value."""
    sig = inspect.signature(fn)
    bound = sig.bind(*args, **kwargs)
    with time_limit(CALL_SECONDS * 4):
        fn(*bound.args, **bound.kwargs)  # the valid call itself must work
    problems = []
    for pname, valid in list(bound.arguments.items()):
        param = sig.parameters[pname]
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or (name, pname) in NOT_WALKED_PARAMS:
            continue
        for value, never_valid in bad_values(valid, param.default is None):
            key = (name, pname, _show(value))
            if key[2] in LEGAL.get((name, pname), set()):
                continue
            never_valid = never_valid or key[2] in MUST_REFUSE.get((name, pname), set())
            trial = sig.bind(*args, **kwargs)
            trial.arguments[pname] = value
            try:
                with np.errstate(all="ignore"), time_limit(CALL_SECONDS):
                    fn(*trial.args, **trial.kwargs)
            except (ValueError, TypeError) as exc:
                words = MESSAGE_NAME.get((name, pname), pname)
                words = (words,) if isinstance(words, str) else words
                if not any(w.lower() in str(exc).lower() for w in words):
                    problems.append(f"{key}: {type(exc).__name__} does not name {words[0]!r}: {exc}")
            except Exception as exc:
                problems.append(f"{key}: {type(exc).__name__}: {str(exc)[:120]}")
            else:
                if never_valid:
                    problems.append(f"{key}: accepted")
    return problems


def _show(value: Any) -> str:
    """repr, with 10**400 (alone or first in a sequence) spelled as such."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) == HUGE_INT:
        return "10**400" if value > 0 else "-10**400"
    if isinstance(value, (list, tuple)) and value and _show(value[0]) == "10**400":
        return "[10**400, ...]"
    return repr(value)


def _exported() -> list[str]:
    return [f"{pkg.__name__}.{n}" for pkg in (accountant, mechanisms, verify) for n in pkg.__all__]


def test_domain_size_is_refused_by_name() -> None:
    """Issue 27: an explicit ``n=None`` and a size past 10^15 are refused, naming n and its range
    (omitting n still declares no size)."""
    assert Domain(0, 1).n is None
    for bad in (None, HUGE_INT, 0, 2.5, 10**15 + 1):
        with pytest.raises((TypeError, ValueError), match=r"n must be an integer in \[1, 10\^15\]"):
            Domain(0, 1, n=bad)
    assert "401 digits" in _refusal(lambda: Domain(0, 1, n=HUGE_INT))


def _refusal(call: Callable[[], Any]) -> str:
    try:
        call()
    except (TypeError, ValueError) as exc:
        return str(exc)
    raise AssertionError("accepted")


def test_every_export_is_walked_or_excused() -> None:
    missing = [n for n in _exported() if n not in VALID and n not in NOT_WALKED]
    assert not missing, f"add valid arguments for {missing} to VALID (or a reason to NOT_WALKED)"


def _check(name: str, problems: list[str]) -> None:
    gaps = {g for g in KNOWN_ACCOUNTANT_GAPS if g[0] == name}
    open_gaps = [p for p in problems if any(p.startswith(repr(g)) for g in gaps)]
    new = [p for p in problems if p not in open_gaps]
    fixed = [g for g in gaps if not any(p.startswith(repr(g)) for p in problems)]
    assert not new, "\n".join(new)
    assert not fixed, f"fixed, remove from KNOWN_ACCOUNTANT_GAPS: {fixed}"


@pytest.mark.parametrize("name", sorted(VALID))
def test_bad_input_is_refused_by_name(name: str) -> None:
    pkg, attr = name.split(".")
    fn = getattr({"accountant": accountant, "mechanisms": mechanisms, "verify": verify}[pkg], attr)
    args, kwargs = VALID[name]()
    _check(name, walk(name, fn, args, kwargs))


@pytest.mark.parametrize("name", sorted(METHODS))
def test_bad_input_to_methods(name: str) -> None:
    fn, (args, kwargs) = METHODS[name]()
    _check(name, walk(name, fn, args, kwargs))


# ------------------------------------------------------------------------------------------------
# issue 28, item 3: the edges the walker's generic values did not reach

#: Calls that hung (> 20 s), each run in a subprocess: (code, exception, words its message holds).
#: The 20 s timeout is a guard with a generous margin over the ~1 s they now take.
HANGS = [
    ("dpsgd_epsilon(5e-324, 1.0, 100, 1e-5)", "ValueError",
     ("sampling_rate", "5e-324", "2.2250738585072014e-308")),
    ("subsampled_gaussian_rdp(5e-324, 1.0, 10)", "ValueError", ("sampling_rate", "5e-324", "subnormal")),
    ("dpsgd_noise_multiplier(1.0, 5e-324, 0.01, 100)", "ValueError", ("delta=5e-324", "out of reach")),
    ("dpsgd_noise_multiplier(1e-9, 1e-5, 0.01, 1000)", "ValueError",
     ("target_epsilon=1e-09", "out of reach", "noise_multiplier", "ask for target_epsilon >=")),
    ("CoordinateDP(np.ones(10**7))", "ValueError", ("c must have at most 10000", "10000000")),
    ("mean_cdp_vector(np.ones(10**7), 2.0, 0.5, 0.5)", "ValueError", ("deltas", "at most 10000")),
]


@pytest.mark.parametrize(("code", "kind", "words"), HANGS, ids=[h[0] for h in HANGS])
def test_issue28_former_hangs_refuse_quickly(code: str, kind: str, words: tuple[str, ...]) -> None:
    import subprocess
    import sys
    from pathlib import Path

    script = ("import numpy as np\nfrom accountant import *\n"
              f"try:\n    {code}\nexcept Exception as exc:\n"
              "    print(type(exc).__name__); print(exc)\nelse:\n    print('accepted')\n")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=20,
                         cwd=root, env={**__import__("os").environ, "PYTHONPATH": str(root)})
    kind_got, _, message = out.stdout.partition("\n")
    assert kind_got == kind, out.stdout + out.stderr
    for w in words:
        assert w in message, message


def _gvp() -> Any:
    from accountant.pld.models.variance import GaussianVariancePair

    return PLD.from_pair(GaussianVariancePair(5e-324, 2))


def _rr_event() -> Any:
    from dp_accounting import dp_event

    return accountant.from_dp_event(dp_event.RandomizedResponseDpEvent(5e-324, 3))


def _tree_event() -> Any:
    from dp_accounting import dp_event

    return accountant.from_dp_event(dp_event.SingleEpochTreeAggregationDpEvent(1.0, []))


#: Calls that overflowed, indexed out of range, said the wrong thing or accepted silently.
REFUSED = [
    ("GaussianVariancePair(5e-324, 2)", _gvp, ValueError, ("ratio", "5e-324", "1e-12")),
    ("FDP(beta = 10**400)", lambda: FDP(lambda a: np.full_like(a, 10**400)), ValueError,
     ("tradeoff", "OverflowError")),
    ("profile_to_tradeoff(-> [0.5])", lambda: accountant.profile_to_tradeoff(lambda e: [0.5]),  # type: ignore[arg-type, return-value]
     TypeError, ("delta_fn", "[0.5]")),
    ("profile_to_tradeoff(-> [])", lambda: accountant.profile_to_tradeoff(lambda e: []),  # type: ignore[arg-type, return-value]
     TypeError, ("delta_fn", "[]")),
    ("MixtureGaussianPair(5e-324, ...)",
     lambda: accountant.MixtureGaussianPair(5e-324, (0.0, 1.0), (0.5, 0.5)), ValueError,
     ("sigma", "5e-324", "0.0001")),
    ("CoordinateDP((inf, 1.0))", lambda: accountant.CoordinateDP((INF, 1.0)), ValueError,
     ("c[0] = inf", "finite")),
    ("BCDP((inf, 1.0), 0.5, 2.0)", lambda: accountant.BCDP((INF, 1.0), 0.5, 2.0), ValueError,
     ("deltas[0] = inf", "finite")),
    ("Domain(n=10**400, d=10**400)", lambda: Domain(n=HUGE_INT, d=HUGE_INT), ValueError,
     ("d must be", "1e+15", "401 digits")),
    ("Domain(n=10**400)", lambda: Domain(n=HUGE_INT), ValueError, ("n must be", "10^15")),
    ("dpsgd_noise_multiplier(q=5e-324)",
     lambda: accountant.dpsgd_noise_multiplier(1.0, 1e-5, 5e-324, 100), ValueError,
     ("sampling_rate", "5e-324")),
    # named the ratio sensitivity / noise_multiplier = 1e+300, not the parameter the user gave
    ("dpsgd_epsilon(sigma=1e-300)", lambda: accountant.dpsgd_epsilon(0.01, 1e-300, 10, 1e-5),
     ValueError, ("noise_multiplier must be at least", "0.0001", "got 1e-300")),
    # said "eps must lie in [0.0, inf), got inf", of an eps the user never gave
    ("GDP(1).to_approx_dp(0.0)", lambda: GDP(1.0).to_approx_dp(0.0), ValueError,
     ("1-GDP implies no (eps, delta)-DP with finite eps at delta = 0.0", "delta must be larger")),
]


@pytest.mark.parametrize(("label", "call", "kind", "words"), REFUSED, ids=[r[0] for r in REFUSED])
def test_issue28_refusals_name_the_parameter(label: str, call: Callable[[], Any], kind: type,
                                             words: tuple[str, ...]) -> None:
    with time_limit(20.0), pytest.raises(kind) as info:
        call()
    for w in words:
        assert w in str(info.value), str(info.value)


def test_issue28_answers_instead_of_errors() -> None:
    """Two of the issue's inputs have exact answers: randomized response with a subnormal noise
    parameter (eps = log(1 + 3 (1 - p)/p) ~ 745.54, which overflowed a float ratio) and a tree
    aggregation over no steps (dp_accounting accepts the empty list: nothing is released)."""
    g = _rr_event()
    exact = math.log(3.0) - math.log(5e-324)  # 1 + 3(1-p)/p = 3/p to far below an ulp
    assert exact <= g.epsilon(0.0) <= exact * (1 + 1e-12)
    assert _tree_event() == PureDP(0.0)


def test_issue28_cli_tol_on_a_closed_form(capsys: pytest.CaptureFixture[str]) -> None:
    from verify.cli import main

    for bad in ("0", "nan"):
        assert main(["account", "--gdp", "1.0", "--tol", bad, "--delta", "1e-5"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, err
        assert "--tol: the PLD accuracy must be a number in [1e-09, 1]" in err, err
