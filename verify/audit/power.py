"""How many draws an audit needs: the power of ``verify.audit`` against a claim, planned before the run.

The model. The mechanism's real guarantee ``truth`` is tight: for every alpha some rejection region
S has errors alpha = P(S) on one input and beta = T(alpha) on its neighbour, T the trade-off curve
of ``truth``. The audit evaluates one such region on ``n`` evaluation draws per input (the
``1 - selection_fraction`` share of its samples; all of them beyond the selection cap,
``sampling.MAX_SELECTION_DRAWS``) and refutes the claim f when the corner of its Clopper-Pearson
box lies below the curve: beta_u < f(alpha_u), both bounds at the per-bound level
gamma = (1 - confidence) / (2 K) of an audit with K tests (``verify.audit``'s Bonferroni split).
With k_a ~ Bin(n, alpha) rejections of the first input and k_r ~ Bin(n, 1 - beta) of the second,

    P(refute at alpha) = sum_{k_a} P(k_a) P(k_r >= k*(k_a)),
    k*(k_a) = min { k : CP_lower(k, n, gamma) > 1 - f(CP_upper(k_a, n, gamma)) },

computed from the binomial laws (the k_a terms beyond 1e-10 of either tail dropped; exact up to
120 values of k_a, on 120 bins of k_a beyond), and the power is its largest value over alpha.
``samples_needed`` finds, by bisection to 0.5%, draws per input whose power reaches ``power`` (the
power of binomial tests rises with n only up to a small sawtooth, so a slightly smaller count can
reach it too).

What no audit can do (``power_ceiling``): whatever the mechanism, an audit that sees N binary
memberships (N runs of a pair's inputs, or N canary coins, in one run or pooled) refutes an
f-DP claim at confidence c with probability at most min(1, (1 - c) (1 - p)^-N), p the fixed point
of the claim's curve, p = f(p). Proof: in the game the output is a randomised function M(b) of the
membership bits b. Randomised response with error p (each bit flipped with probability p) has
the trade-off curve through (0, 1), (p, p), (1, 0), which lies above f because f is convex with
f(p) <= p; so M'(b) = M(RR_p(b)) is f-DP in each bit (post-processing), and M' must be refuted
with probability at most 1 - c by a valid audit. M' shows the auditor exactly what M shows
whenever no bit is flipped, which happens with probability (1 - p)^N independently of M's
randomness: P_M'(refute) >= (1 - p)^N P_M(refute). For (eps, delta)-DP, p = (1 - delta)/(1 + e^eps):
an audit of eps = 8 (delta = 1e-5, p = 3.35e-4) with N = 100 refutes with probability <= 0.0517 and
with N = 1,000 canaries <= 0.0699, however broken the mechanism; certain refutation needs
N >= ln(1/(1 - c)) / -ln(1 - p) (8,932 at c = 0.95). A claim's full trade-off curve is refuted
more cheaply when its fixed point is larger (a Poisson DP-SGD curve with epsilon 8 at 1e-5 can
have p near 0.27).

What ``plan_audit`` is: a plan, not a bound. It assumes the selection half of the audit finds the best region
(it searches a finite family, so a real audit can need more draws) and that ``truth`` is attained
(a Laplace mechanism of level eps does not attain the pure eps-DP curve: give its own trade-off
curve, e.g. ``accountant.FDP`` of the Laplace pair, to plan its audit). The tests compare the plan
with simulated audits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from accountant import Guarantee
from accountant.core.search import bisect_count
from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real

from ..claims import claim_delta
from .core import MAX_SAMPLES
from .regions import claim_objectives
from .sampling import split_draws
from .stats import cp_upper

__all__ = ["AuditPlan", "audit_power", "plan_audit", "power_ceiling", "samples_needed",
           "tradeoff_fixed_point"]

#: Families an audit of one pair of float outputs runs by default (distributional, representation):
#: the default number of tests is this times the claim's objectives.
DEFAULT_FAMILIES = 2
#: The region sizes alpha the plan considers first (log-spaced); the best is then refined on
#: ``REFINE`` points between its neighbours.
ALPHAS: FloatArray = np.logspace(-10.0, math.log10(0.5), 41)
REFINE = 41
#: Binomial tail mass dropped on each side of the sum over k_a.
TAIL = 1e-10
#: Most terms of the sum over k_a per alpha (beyond it, bins of k_a).
MAX_TERMS = 120


@dataclass(frozen=True)
class AuditPlan:
    """The plan of an audit of ``claim`` against a mechanism whose real guarantee is ``truth``.

    ``samples``: draws per input (selection and evaluation); ``power``: the probability the audit
    refutes the claim at those samples (model in the module docstring); ``alpha``/``beta``: the
    errors of the region that gives it; ``tests``/``level``: the audit's test count and per-bound
    level."""

    claim: Guarantee
    truth: Guarantee
    confidence: float
    samples: int
    power: float
    alpha: float
    beta: float
    tests: int
    level: float

    def __str__(self) -> str:
        return (f"audit of {self.claim} against a mechanism that is {self.truth}: {self.samples:,} draws "
                f"per input refute the claim with probability {self.power:.3f} at confidence "
                f"{self.confidence:g} (region alpha = {self.alpha:.3g}, beta = {self.beta:.3g}; "
                f"{self.tests} tests, each bound at level {self.level:.3g})")


def _checked(claim: Guarantee, truth: Guarantee, confidence: float, tests: int | None,
             selection_fraction: float) -> tuple[float, int, float]:
    for name, g in (("claim", claim), ("truth", truth)):
        if not isinstance(g, Guarantee):
            raise TypeError(f"{name} must be an accountant guarantee, got {type(g).__name__}")
    confidence = check_real("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    check_real("selection_fraction", selection_fraction, low=0.0, high=1.0, low_open=True,
               high_open=True)
    if tests is None:
        tests = DEFAULT_FAMILIES * len(claim_objectives(claim, claim_delta(claim)))
    tests = check_count("tests", tests, low=1, high=10**6)
    return confidence, tests, (1.0 - confidence) / (2 * tests)


def _gap(claim: Guarantee, truth: Guarantee, alphas: FloatArray = ALPHAS) -> tuple[FloatArray, FloatArray]:
    """(alpha, the truth's beta) on the ``alphas`` where the truth is below the claim's curve."""
    beta = np.asarray(truth.tradeoff(alphas), dtype=np.float64)
    keep = np.asarray(claim.tradeoff(alphas), dtype=np.float64) > beta
    return alphas[keep], beta[keep]


def _powers(n: int, gamma: float, alphas: FloatArray, betas: FloatArray, claim: Guarantee) -> FloatArray:
    """P(refute at alpha) for each (alpha, beta), the k_a terms of all alphas in one array.

    k*(k_a) by Clopper-Pearson's duality: CP_lower(k, n, gamma) > t exactly when
    P(Bin(n, t) >= k) < gamma, so k* = (the binomial's upper gamma quantile) + 1. Where k_a spans
    more than ``MAX_TERMS`` values (large n), the sum runs over ``MAX_TERMS`` equal bins of k_a, each
    weighted by its binomial mass and evaluated at its middle count."""
    lo = np.asarray(sps.binom.ppf(TAIL, n, alphas), dtype=np.float64)
    hi = np.asarray(sps.binom.isf(TAIL, n, alphas), dtype=np.float64)
    width = np.maximum(1.0, np.ceil((hi - lo + 1) / MAX_TERMS))
    counts = np.floor((hi - lo) / width).astype(np.int64) + 1
    which = np.repeat(np.arange(alphas.size), counts)
    step = np.arange(which.size) - np.repeat(np.cumsum(counts) - counts, counts)
    left = lo[which] + step * width[which]  # bin [left, left + width - 1] of k_a
    right = np.minimum(left + width[which] - 1.0, hi[which])
    mass = sps.binom.cdf(right, n, alphas[which]) - sps.binom.cdf(left - 1.0, n, alphas[which])
    k_a = np.floor((left + right) / 2)
    target = 1.0 - np.asarray(claim.tradeoff(cp_upper(k_a, n, gamma)), dtype=np.float64)
    k_star = sps.binom.isf(gamma, n, np.clip(target, 0.0, 1.0)) + 1.0
    terms = mass * sps.binom.sf(k_star - 1.0, n, 1.0 - betas[which])
    return np.clip(np.bincount(which, weights=terms, minlength=alphas.size), 0.0, 1.0)


def _evaluation(samples: int, selection_fraction: float) -> int:
    """The evaluation draws of an audit of ``samples`` draws per input (as ``verify.audit`` splits)."""
    return split_draws(samples, selection_fraction)[1]


def plan_audit(claim: Guarantee, truth: Guarantee, samples: int, confidence: float = 0.95, *,
               tests: int | None = None, selection_fraction: float = 0.3) -> AuditPlan:
    """The power of an audit of ``samples`` draws per input to refute ``claim`` when the mechanism's
    real guarantee is ``truth`` (module docstring), with the region that gives it."""
    confidence, k, gamma = _checked(claim, truth, confidence, tests, selection_fraction)
    samples = check_count("samples", samples, low=4, high=MAX_SAMPLES)
    alphas, betas = _gap(claim, truth)
    if alphas.size == 0:  # the truth is not below the claim: nothing refutes it
        return AuditPlan(claim, truth, confidence, samples, 0.0, math.nan, math.nan, k, gamma)
    n = _evaluation(samples, selection_fraction)
    powers = _powers(n, gamma, alphas, betas, claim)
    j = int(np.argmax(powers))
    near = ALPHAS[max(0, int(np.searchsorted(ALPHAS, alphas[j])) - 1):][:3]
    fine_a, fine_b = _gap(claim, truth, np.geomspace(near[0], near[-1], REFINE))
    alphas, betas = np.concatenate([alphas, fine_a]), np.concatenate([betas, fine_b])
    powers = np.concatenate([powers, _powers(n, gamma, fine_a, fine_b, claim)])
    j = int(np.argmax(powers))
    return AuditPlan(claim, truth, confidence, samples, float(powers[j]), float(alphas[j]),
                     float(betas[j]), k, gamma)


def audit_power(claim: Guarantee, truth: Guarantee, samples: int, confidence: float = 0.95, *,
                tests: int | None = None, selection_fraction: float = 0.3) -> float:
    """The probability that an audit of ``samples`` draws per input refutes ``claim`` when the
    mechanism's real guarantee is ``truth`` (``plan_audit(...).power``)."""
    return plan_audit(claim, truth, samples, confidence, tests=tests,
                      selection_fraction=selection_fraction).power


def samples_needed(claim: Guarantee, truth: Guarantee, confidence: float = 0.95, *, power: float = 0.5,
                   tests: int | None = None, selection_fraction: float = 0.3) -> int:
    """Draws per input with which an audit refutes ``claim`` with probability >= ``power`` when the
    mechanism's real guarantee is ``truth``, to 0.5% of the least such count (module docstring: a
    plan, not a bound).

    Raises ValueError when no number of draws up to ``verify.audit``'s maximum does (in particular
    when ``truth`` satisfies ``claim``: then nothing refutes it)."""
    confidence, _, _ = _checked(claim, truth, confidence, tests, selection_fraction)
    power = check_real("power", power, low=0.0, high=1.0, low_open=True, high_open=True)
    if _gap(claim, truth)[0].size == 0:
        raise ValueError(f"truth={truth} satisfies claim={claim} on every test (or nearly): no number "
                         "of draws refutes the claim; a refutation needs a truth below the claim's curve")

    def reaches(s: int) -> bool:
        return plan_audit(claim, truth, s, confidence, tests=tests,
                          selection_fraction=selection_fraction).power >= power

    hi = 16
    while not reaches(hi):
        if hi >= MAX_SAMPLES:
            raise ValueError(f"an audit of {claim} against a mechanism that is {truth} needs more than "
                             f"{MAX_SAMPLES:.0e} draws per input for power {power:g}: the violation is "
                             "too small to plan for")
        hi = min(MAX_SAMPLES, hi * 4)
    # to 0.5% of the count: the model is no finer than that
    return bisect_count(reaches, hi, hi // 4 if hi > 16 else 3, rel=0.005)


def tradeoff_fixed_point(claim: Guarantee) -> float:
    """p >= the fixed point of ``claim``'s trade-off curve f (f(p) <= p, checked; bisection to
    1e-15 on [0, 1/2], where f(1/2) <= 1/2 for every trade-off function)."""
    if not isinstance(claim, Guarantee):
        raise TypeError(f"claim must be an accountant guarantee, got {type(claim).__name__}")

    def below(a: float) -> bool:
        return float(np.asarray(claim.tradeoff(np.array([a])), dtype=np.float64)[0]) <= a

    lo, hi = 0.0, 0.5
    if below(lo):
        return 0.0
    while hi - lo > 1e-15:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if below(mid) else (mid, hi)
    return hi


def power_ceiling(claim: Guarantee, draws: int, confidence: float = 0.95) -> float:
    """The most probability with which ANY audit at ``confidence`` that sees ``draws`` binary
    memberships (runs on a pair's two inputs, or canary coins in one run or pooled) refutes
    ``claim``, whatever the mechanism: min(1, (1 - confidence) (1 - p)^-draws), p the fixed point
    of the claim's curve (module docstring; an upper bound, p rounded up)."""
    confidence = check_real("confidence", confidence, low=0.0, high=1.0, low_open=True, high_open=True)
    n = check_count("draws", draws, low=1, high=10**15)
    p = tradeoff_fixed_point(claim)
    log_power = math.log1p(-confidence) - n * math.log1p(-p) + 1e-12  # rounded up
    return 1.0 if log_power >= 0.0 else min(1.0, math.exp(log_power))
