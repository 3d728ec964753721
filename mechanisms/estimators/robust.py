"""Robust statistics: smooth sensitivity [@nissim2007smooth] and the smooth-sensitivity median
[@avellamedina2025differentially, "noise calibration with smooth sensitivity"], the PTR median
[@avellamedina2025differentially, "propose-test-release"; @dwork2009differential], the exponential
mechanism for medians and quantiles [@mcsherry2007mechanism], and the Scale algorithm for the
interquartile range [@dwork2014algorithmic, Alg. 12].

The smooth sensitivity of order statistics and the public lattice every smooth-sensitivity release
uses are in ``smooth_sensitivity``.

Float safety of the smooth-sensitivity release. The noise scale sigma(x) depends on the data, so it
cannot choose the lattice (the lattice would reveal it). The lattice is public: gamma = 2^e with e =
floor(log2 tau) - 12 for a public resolution tau (default (upper - lower) 2^-24), and the release is

    gamma * (round(m(x)/gamma) + N),   N ~ N_Z(0, s2(x)),  s2(x) = ceil(sigma(x)^2 / gamma^2),
    sigma(x) = (S(x) + tau) / alpha,

with S the xi-smooth sensitivity. Every output is a multiple of gamma for every input. The analysis of
[@nissim2007smooth, Lemma 2.5, 2.10] (sliding by at most alpha sigma, dilation by at most e^xi) carries
over: the rounded medians of neighbours differ by at most LS(x) + gamma <= S(x) + tau = alpha sigma(x)
lattice units of gamma; (S + tau) is xi-smooth when S is; the discrete Gaussian has the continuous
one's log-ratio at every lattice point and sub-Gaussian tails [@canonne2020discrete, Prop. 19]; its
normalisers satisfy |Z(s)/sqrt(2 pi s) - 1| <= 2 e^(-2 pi^2 s) and the ceiling changes s2 by a
relative 2^-24 at most (s2 >= 2^24), both absorbed by using xi (1 - 2^-10) in place of xi.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import ApproxDP, Guarantee, PureDP
from accountant.core.types import FloatArray
from accountant.core.validation import as_float_array, check_count, check_real

from ..base import BOTTOM, Mechanism, OutputSpec
from ..domain import Domain
from ..noise import Laplace
from ..queries import CustomQuery
from ..samplers import (
    discrete_gaussian_array,
    exp_weighted_indices,
    floor_log2,
    from_lattice,
    to_lattice,
)
from ..selection import ExponentialMechanism, ValueLattice
from .ptr_eta import MedianEtaRule
from .smooth_sensitivity import (
    ApproxSmoothOrderStatistic,
    quantile_rank,
    slides_smoothing,
)
from .stability import (
    NoisyThresholdTest,
    ProposeTestRelease,
    check_bounds,
    check_delta,
    check_eps,
    check_quantile_fields,
    distance_to_sensitivity_above,
    float_up,
    object_outputs,
    sum_up,
)

__all__ = [
    "AdaptivePTRMedian",
    "ExponentialQuantile",
    "PTRMedian",
    "ScaleIQR",
    "SmoothSensitivityMedian",
    "iqr_distance",
]

@dataclass(frozen=True)
class SmoothSensitivityMedian(ApproxSmoothOrderStatistic, Mechanism):
    """The smooth-sensitivity median (or q-quantile) with Gaussian noise [@nissim2007smooth, Sec. 2-3;
    @avellamedina2025differentially]: data clipped to [lower, upper], xi = eps / (4 (1 + 2 ln(2/delta)))
    (the slides' xi <= eps/(4(p + 2 log(2/delta))) with p = 1), alpha = eps / (5 sqrt(2 ln(2/delta)))
    [@nissim2007smooth, Lemma 2.10: the Gaussian is (alpha, beta)-admissible for beta = eps/(4(1 +
    ln(2/delta))) >= xi], released as m(x) + (S_xi(x) + tau)/alpha Z on the public lattice of the
    module docstring. Guarantee ``ApproxDP(eps, delta)`` [@nissim2007smooth, Lemma 2.6].

    ``xi`` overrides the smoothing parameter (a value above the one above voids the guarantee; the
    tests audit such a broken instance).

    The slides' scale 2/eps (alpha = eps/2, beta = eps/(4(1 + log(2/delta)))) is not (eps, delta)-DP:
    on ten 0s and eleven 1s against eleven 0s and ten 1s in [0, 1] the smooth sensitivity is 1 on
    both, so the release is a Gaussian mechanism with mu = eps/2, whose delta at eps = 1 is 0.0068.
    """

    xi: float | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.xi is not None:
            object.__setattr__(self, "xi", check_real("xi", self.xi, low=0.0, high=1e6, low_open=True))

    @property
    def smoothing(self) -> float:
        """xi used for S (the paper's xi less the relative slack ``XI_SLACK``, unless overridden)."""
        if self.xi is not None:
            return self.xi
        return slides_smoothing(self.eps, self.delta)

    @property
    def alpha(self) -> float:
        """alpha = eps / (5 sqrt(2 ln(2/delta))), rounded down."""
        a = self.eps / (5.0 * math.sqrt(2.0 * math.log(2.0 / self.delta)))
        return math.nextafter(a, 0.0)

    def guarantee(self) -> Guarantee:
        return ApproxDP(self.eps, self.delta)

    def lattice_variance(self, data: ArrayLike) -> int:
        """s2(x) = ceil(((S(x) + tau) / (alpha gamma))^2)."""
        s = Fraction(self.smooth_sensitivity(data)) + Fraction(self.tau)
        gamma = Fraction(2) ** self.exponent
        return math.ceil((s / (Fraction(self.alpha) * gamma)) ** 2)

    def _center_and_variance(self, data: ArrayLike) -> tuple[int, int]:
        x = self._data(data)
        center = int(to_lattice(np.array([np.sort(x)[self.rank - 1]]), self.exponent)[0])
        return center, self.lattice_variance(x)

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        """log p_data(y) - log p_data2(y) of the two discrete Gaussians on the lattice; the normaliser
        is sqrt(2 pi s2) within a relative 2 e^(-2 pi^2 s2) (s2 >= 2^24 here)."""
        k = np.ldexp(np.atleast_1d(np.asarray(y, dtype=np.float64)), -self.exponent)
        if not np.array_equal(k, np.round(k)):
            raise ValueError("outputs must lie on the release lattice")
        (c1, v1), (c2, v2) = self._center_and_variance(data), self._center_and_variance(data2)
        return np.asarray(-((k - c1) ** 2) / (2.0 * v1) + ((k - c2) ** 2) / (2.0 * v2)
                          - 0.5 * math.log(v1 / v2), dtype=np.float64)

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x = self._data(data)
        stat = np.sort(x)[self.rank - 1]
        e = self.exponent
        idx = to_lattice(np.array([stat]), e)[0]
        noise = discrete_gaussian_array(rng, Fraction(self.lattice_variance(x)), (m,))
        return from_lattice(idx + noise, e)


def _median_query(domain: Domain, rank: int, eta: float) -> CustomQuery:
    return CustomQuery(domain, lambda v: np.sort(v)[rank - 1], l1=sympy.nsimplify(eta),
                       name=f"order statistic of rank {rank} (proposed local sensitivity {eta})")


def PTRMedian(lower: float, upper: float, n: int, eps: float, delta: float, eta: float | MedianEtaRule,
              q: float = 0.5, threshold: float | None = None) -> ProposeTestRelease:
    """The PTR median (q-quantile) of [@avellamedina2025differentially] (A_eta with a Laplace test,
    (2 eps, delta)) as a ``ProposeTestRelease``: propose local sensitivity eta; the distance is the
    number of records to change to reach a dataset whose median has local sensitivity above eta
    (``distance_to_sensitivity_above``, the sensitivity-1 form of the slides' A_eta); the test
    refuses unless distance + Lap(1/eps) > threshold (default: the least one with pass probability
    <= delta at distance 0; the slides use 1 + log(2/delta)/eps for their A_eta); the release is the
    lattice ``Laplace`` of scale eta/eps. Guarantee ``ApproxDP(eps + eps_release, delta_test)``,
    eps_release = eps (1 + O(2^-16)) from the lattice. ``eta`` may be the slides' rule
    (``MedianEtaRule``, evaluated at n, eps, delta)."""
    lo, hi = check_bounds(lower, upper)
    n = check_count("n", n, low=1, high=10**9)
    eps = check_eps(eps)
    delta = check_delta(delta)
    if isinstance(eta, MedianEtaRule):
        eta = eta(n, eps, delta)
    eta = check_real("eta", eta, low=0.0, high=hi - lo, low_open=True)
    rank = quantile_rank(n, check_real("q", q, low=0.0, high=1.0, low_open=True, high_open=True))
    domain = Domain(lo, hi, n, clip=True)
    release = Laplace(_median_query(domain, rank, eta), sympy.nsimplify(eta) / sympy.Rational(Fraction(eps)))
    test = (NoisyThresholdTest.for_delta(eps, delta) if threshold is None
            else NoisyThresholdTest(eps, threshold))

    def distance(x: FloatArray) -> float:
        return float(distance_to_sensitivity_above(domain.validate(x), rank, eta, lo, hi))

    return ProposeTestRelease(distance, release, test)


#: The data-driven proposal is rounded up to the grid 2^(j/4): four mantissas, so four guarantees.
ETA_MANTISSAS = (1.0, 2.0**0.25, 2.0**0.5, 2.0**0.75)


@dataclass(frozen=True)
class AdaptivePTRMedian(Mechanism):
    """The PTR median (q-quantile) with a data-driven proposal: eta from a private interquartile range.

    1. The quartiles by ``ExponentialQuantile`` at eps_scale/2 each (eps_scale = ``scale_share`` eps,
       by default min(3/10, max(1/20, 200/(n eps))): the exponential mechanism's mass on the empty
       candidates far from a quartile is ~ bins e^(-eps_scale n/16), negligible once eps_scale n >=
       ~200) on ``bins`` candidates (few, for the same reason); iqr = max(q75 - q25,
       (upper - lower)/bins);
    2. eta = ``factor`` iqr / n rounded up to the grid 2^(j/4) and capped at upper - lower. For a
       density f at the median, the order statistic's local sensitivity at distance k is about
       (k + 1)/(n f), and PTR's test passes when that distance exceeds ~ (log(1/delta) + 3)/eps_ptr
       (the threshold and three noise scales), and 1/(n f) ~ 1.85 IQR/n for a normal law, hence the
       default factor 2 (log(1/delta) + 3)/eps_ptr (~75 at eps = 1, delta = 1e-6);
    3. ``PTRMedian`` at (eps_ptr, delta) with that eta, eps_ptr = (1 - scale_share) eps / 2 less
       2^-12 (the lattice release's slack).
    Eta is a function of stage 1's output only, so the stages compose adaptively: ``ApproxDP(
    eps_scale + eps_PTR, delta_PTR)`` [@dwork2014algorithmic, Thm 3.16], with eps_PTR the largest
    ``PTRMedian`` guarantee over the four mantissas (PTRMedian's guarantee depends on eta only
    through its mantissa: the release lattice scales with eta by powers of two)."""

    lower: float
    upper: float
    n: int
    eps: float
    delta: float
    q: float = 0.5
    scale_share: float | None = None
    factor: float | None = None
    bins: int = 256
    _ptrs: dict[float, ProposeTestRelease] = field(default_factory=dict, init=False, repr=False,
                                                   compare=False)

    def __post_init__(self) -> None:
        check_quantile_fields(self)
        object.__setattr__(self, "delta", check_delta(self.delta))
        share = (min(0.3, max(0.05, 200.0 / (self.n * self.eps))) if self.scale_share is None
                 else self.scale_share)
        object.__setattr__(self, "scale_share", check_real("scale_share", share, low=0.0, high=1.0,
                                                           low_open=True, high_open=True))
        factor = (2.0 * (math.log(1.0 / self.delta) + 3.0) / self.eps_ptr if self.factor is None
                  else self.factor)
        object.__setattr__(self, "factor", check_real("factor", factor, low=0.0, high=1e9, low_open=True))
        object.__setattr__(self, "bins", check_count("bins", self.bins, low=2, high=2**24))

    @property
    def eps_scale(self) -> float:
        assert self.scale_share is not None
        return self.eps * self.scale_share

    @property
    def eps_ptr(self) -> float:
        return (self.eps - self.eps_scale) / 2.0 * (1.0 - 2.0**-12)

    def quartile(self, q: float) -> ExponentialQuantile:
        return ExponentialQuantile(self.lower, self.upper, self.n, self.eps_scale / 2.0, q=q, bins=self.bins)

    def proposal(self, iqr: float) -> float:
        """eta for a (private) IQR estimate: factor iqr / n rounded up to 2^(j/4), capped at upper - lower."""
        assert self.factor is not None
        raw = self.factor * max(iqr, (self.upper - self.lower) / self.bins) / self.n
        j = math.ceil(4.0 * math.log2(raw))
        eta = math.ldexp(ETA_MANTISSAS[j % 4], j // 4)
        while eta < raw:  # guard against log2's rounding
            j += 1
            eta = math.ldexp(ETA_MANTISSAS[j % 4], j // 4)
        while eta > self.upper - self.lower:
            j -= 1
            eta = math.ldexp(ETA_MANTISSAS[j % 4], j // 4)
        return eta

    def ptr(self, eta: float) -> ProposeTestRelease:
        """``PTRMedian`` at (eps_ptr, delta) proposing eta (built once per eta)."""
        if eta not in self._ptrs:
            self._ptrs[eta] = PTRMedian(self.lower, self.upper, self.n, self.eps_ptr, self.delta, eta,
                                        q=self.q)
        return self._ptrs[eta]

    @property
    def sensitivity(self) -> Any:
        return sympy.nsimplify(self.upper) - sympy.nsimplify(self.lower)

    def guarantee(self) -> Guarantee:
        e = floor_log2(Fraction(self.upper - self.lower)) - 1
        gs = [self.ptr(math.ldexp(mant, e)).guarantee() for mant in ETA_MANTISSAS]
        if not all(isinstance(g, ApproxDP) for g in gs):  # pragma: no cover - PTR declares ApproxDP
            raise TypeError("PTRMedian's guarantee must be ApproxDP")
        eps = max(g.eps for g in gs if isinstance(g, ApproxDP))
        delta = max(g.delta_ for g in gs if isinstance(g, ApproxDP))
        return ApproxDP(sum_up(self.eps_scale, eps), delta)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("mixed", (), "a lattice value or BOTTOM")

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x = Domain(self.lower, self.upper, self.n, clip=True).validate(data)
        iqr = self.quartile(0.75).sample(x, rng, size=m) - self.quartile(0.25).sample(x, rng, size=m)
        etas = np.array([self.proposal(float(v)) for v in iqr])
        out = object_outputs([BOTTOM] * m)
        for eta in np.unique(etas).tolist():  # draws sharing a proposal are sampled together
            idx = np.flatnonzero(etas == eta)
            for i, v in zip(idx.tolist(), self.ptr(eta).sample(x, rng, size=idx.size), strict=True):
                out[i] = v
        return out


@dataclass(frozen=True)
class ExponentialQuantile(Mechanism):
    """The exponential mechanism for the q-quantile [@mcsherry2007mechanism; @avellamedina2025differentially,
    "exponential mechanism"]: candidates are the ``bins`` midpoints c_r of a public grid of [lower,
    upper], utility u(x, c) = -|#{i : x_i <= c} - q n| (sensitivity 1 under replace-one), output c_r
    with probability proportional to exp(eps u / 2). ``PureDP(eps)``.

    Sampled exactly by ``ExponentialMechanism``'s lattice law (its docstring), with
    ``samplers.exp_weighted_indices``.
    """

    lower: float
    upper: float
    n: int
    eps: float
    q: float = 0.5
    bins: int = 4096

    def __post_init__(self) -> None:
        check_quantile_fields(self)
        object.__setattr__(self, "bins", check_count("bins", self.bins, low=2, high=2**24))

    @property
    def candidates(self) -> FloatArray:
        w = (self.upper - self.lower) / self.bins
        return np.asarray(self.lower + (np.arange(self.bins) + 0.5) * w, dtype=np.float64)

    @property
    def mechanism(self) -> ExponentialMechanism:
        domain = Domain(self.lower, self.upper, self.n, clip=True)
        cands = self.candidates
        target = Fraction(self.q) * self.n

        def utility(v: FloatArray) -> FloatArray:
            below = np.searchsorted(np.sort(v), cands, side="right")
            return np.asarray(-np.abs(below - float(target)), dtype=np.float64)

        return ExponentialMechanism(CustomQuery(domain, utility, self.bins, linf=1,
                                                name=f"rank utility of the {self.q}-quantile"), self.eps)

    @property
    def sensitivity(self) -> Any:
        return sympy.Integer(1)

    def guarantee(self) -> Guarantee:
        return PureDP(self.eps)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("discrete", (), f"one of {self.bins} midpoints of [{self.lower}, {self.upper}]")

    def log_probabilities(self, data: ArrayLike) -> FloatArray:
        """log P(output = c_r) of the law sampled, for every candidate."""
        return self.mechanism.log_probabilities(data)

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        c = self.candidates
        idx = np.searchsorted(c, np.atleast_1d(np.asarray(y, dtype=np.float64)))
        if (idx >= c.size).any() or not np.array_equal(c[np.minimum(idx, c.size - 1)], np.atleast_1d(y)):
            raise ValueError("outputs must be candidates of this mechanism")
        return np.asarray(self.log_probabilities(data)[idx] - self.log_probabilities(data2)[idx])

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        s, d = self.mechanism.sampling_exponents(data)
        out = exp_weighted_indices(rng, s, d, m)
        return self.candidates[out]


Threshold = Literal["corrected", "book"]


@dataclass(frozen=True)
class ScaleIQR(Mechanism):
    """The Scale algorithm for the interquartile range [@dwork2014algorithmic, Alg. 12, Thm 7.1].

    For each discretisation j of log2 IQR into unit bins ([k, k+1), then [k - 1/2, k + 1/2)): A_0 is
    the number of records to change (replace-one) to move log2 IQR out of its bin, bounded below by
    the order-statistic box (``iqr_distance``; sensitivity 1); refuse (``BOTTOM``) when A_0 + Lap(1/eps)
    <= threshold, else release IQR * 2^Z, Z ~ Lap(1/eps) (log2 IQR on a lattice with exact discrete
    Laplace noise, ``selection.ValueLattice``). Output s^(1) unless refused, else s^(2).

    Thm 7.1 states (4 eps, delta) with threshold 1 + ln(1/delta). Per discretisation the proof gives
    (2 eps, P(pass | A_0 <= 1)), and with Lap(1/eps) noise P(1 + Lap(1/eps) > 1 + ln(1/delta)) =
    delta^eps / 2, which exceeds delta / 2 when eps < 1. ``threshold="book"`` keeps the book's
    threshold and declares the delta it really has; the default ``"corrected"`` picks the least
    threshold with P(pass | A_0 <= 1) <= delta / 2. ``claimed()`` is the book's (4 eps, delta).
    """

    eps: float
    delta: float
    threshold: Threshold = "corrected"

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", check_eps(self.eps))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.threshold not in ("corrected", "book"):
            raise ValueError(f"threshold must be 'corrected' or 'book', got {self.threshold!r}")

    @property
    def test(self) -> NoisyThresholdTest:
        if self.threshold == "book":
            return NoisyThresholdTest(self.eps, 1.0 + math.log(1.0 / self.delta))
        return NoisyThresholdTest.for_delta(self.eps, self.delta / 2.0, bad=1)

    @property
    def value_lattice(self) -> ValueLattice:
        """log2 IQR moves by less than 1 between neighbours that pass; Laplace scale 1/eps."""
        return ValueLattice.for_scale(1.0 / self.eps, 1.0)

    @property
    def sensitivity(self) -> Any:
        """Of log2 IQR on datasets that pass the test."""
        return sympy.Integer(1)

    def claimed(self) -> Guarantee:
        return ApproxDP(4.0 * self.eps, self.delta)

    def guarantee(self) -> Guarantee:
        one = sum_up(self.test.eps, float_up(self.value_lattice.eps))
        return ApproxDP(sum_up(one, one), min(sum_up(self.test.delta(1), self.test.delta(1)),
                                               math.nextafter(1.0, 0.0)))

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("mixed", (), "a positive scale estimate, 0.0, or BOTTOM")

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x = np.sort(as_float_array("data", data).reshape(-1))
        if x.size < 4:
            raise ValueError(f"data must have at least 4 records, got {x.size}")
        if np.abs(x).max() > 1e150:
            raise ValueError("data must lie in [-1e150, 1e150]")
        iqr = float(_quartiles(x)[1] - _quartiles(x)[0])
        out = object_outputs([BOTTOM] * m)
        pending = np.arange(m)
        for j in (1, 2):
            ok = self.test.passes(float(iqr_distance(x, j)), rng, pending.size)
            # the value is drawn for every run (both discretisations always run); kept where it passed
            vals = (self.value_lattice.release(np.full(pending.size, math.log2(iqr)), rng) if iqr > 0
                    else np.full(pending.size, -math.inf))
            for i, v in zip(pending[ok].tolist(), vals[ok].tolist(), strict=True):
                out[i] = float(np.exp2(v))
            pending = pending[~ok]
        return out


def _quartiles(x: FloatArray) -> tuple[float, float]:
    n = x.size
    return float(x[quantile_rank(n, 0.25) - 1]), float(x[quantile_rank(n, 0.75) - 1])


_SQRT_HALF = math.sqrt(0.5)


def _bins(v: FloatArray, j: int) -> FloatArray:
    """Bin of log2 v in discretisation j (1: [k, k+1), 2: [k - 1/2, k + 1/2)); -inf for v = 0. Computed
    from the exact binary exponent (frexp), so monotone in v."""
    f, e = np.frexp(v)
    k = (e - 1).astype(np.float64)
    if j == 2:
        k = k + (f >= _SQRT_HALF)
    return np.where(v > 0, k, -np.inf)


def iqr_distance(x: ArrayLike, j: int) -> int:
    """A lower bound on A_0 of Alg. 12 in discretisation j: the least k such that some IQR in
    [x_(r3-k) - x_(r1+k), x_(r3+k) - x_(r1-k)] (order statistics out of range: -inf / +inf, a negative
    lower end: 0) lies in another bin. Any dataset at replace-distance k has its quartiles in those
    ranges, so this is <= A_0; a neighbour's ranges at k lie inside x's at k + 1, so it has
    sensitivity 1; and a value >= 2 means every neighbour's log2 IQR is in x's bin."""
    v = np.sort(as_float_array("data", x).reshape(-1))
    n = v.size
    r1, r3 = quantile_rank(n, 0.25), quantile_rank(n, 0.75)
    pad = np.concatenate([[-np.inf], v, [np.inf]])
    ks = np.arange(0, n + 1)
    top = pad[np.clip(r3 + ks, 0, n + 1)] - pad[np.clip(r1 - ks, 0, n + 1)]
    low = np.maximum(pad[np.clip(r3 - ks, 0, n + 1)] - pad[np.clip(r1 + ks, 0, n + 1)], 0.0)
    low = np.where(r3 - ks < r1 + ks, 0.0, np.nan_to_num(low, nan=0.0))
    b0 = _bins(np.array([v[r3 - 1] - v[r1 - 1]]), j)[0]
    with np.errstate(invalid="ignore"):
        leave = (_bins(np.where(np.isinf(top), np.finfo(np.float64).max, top), j) != b0) | np.isinf(top) \
            | (_bins(low, j) != b0)
    return int(np.argmax(leave)) if leave.any() else n + 1

