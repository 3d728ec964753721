"""Private selection: the exponential mechanism, report-noisy-max, PrivateMax, Peeling and the
sparse vector technique (AboveThreshold).

Scores come from a ``Query`` (one score per candidate) whose L-infinity sensitivity Delta is the
score sensitivity: every candidate's score moves by at most Delta between neighbours. A query is
*monotone* when all scores move in the same direction (counts under add/remove); several mechanisms
then need half the noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray
from scipy import special

from accountant import ApproxDP, BoundedRange, Guarantee, PureDP, calibrate, compose, implies
from accountant.core.types import FloatArray
from accountant.core.validation import check_count, check_real

from .base import Mechanism, OutputSpec
from .domain import to_float_up
from .queries import Query
from .samplers import (
    bernoulli_exp_neg_vec,
    discrete_laplace_array,
    floor_log2,
    from_lattice,
    geometric_array,
    to_lattice,
)

__all__ = ["AboveThreshold", "ExponentialMechanism", "Peeling", "PrivateMax", "ReportNoisyMax"]

Noise = Literal["laplace", "exponential", "gumbel"]


def _check_eps(eps: float, name: str = "eps") -> float:
    return check_real(name, eps, low=0.0, high=math.inf, low_open=True, high_open=True)


def _check_query(q: object, name: str) -> Query:
    if not isinstance(q, Query):
        raise TypeError(f"{name} must be a mechanisms Query, got {type(q).__name__}")
    return q


def _score_sensitivity(q: Query) -> float:
    delta = to_float_up("score sensitivity (linf)", q.linf)
    if delta == 0.0:
        raise ValueError(f"the scores of {q.describe()} do not depend on the data (sensitivity 0)")
    return delta


def _n_candidates(q: Query) -> int:
    k = q.output_dim
    if getattr(k, "free_symbols", None):
        raise ValueError(f"the number of candidates {k} is symbolic; bind it first")
    return int(k)


def _log_softmax_rows(logits: FloatArray) -> FloatArray:
    return np.asarray(logits - special.logsumexp(logits, axis=-1, keepdims=True), dtype=np.float64)


def _indices(y: ArrayLike, k: int) -> NDArray[np.int64]:
    arr = np.atleast_1d(np.asarray(y))
    if arr.ndim != 1 or not np.array_equal(arr, np.round(arr)) or (arr < 0).any() or (arr >= k).any():
        raise ValueError(f"outputs must be indices in 0..{k - 1}, got {arr[:5].tolist()}")
    return arr.astype(np.int64)


#: Scores are rounded to the lattice 2^(floor(log2 Delta) - SCORE_LATTICE_BITS) Z before sampling.
SCORE_LATTICE_BITS = 20
#: The exponent per lattice step is rounded down to about SCORE_EXPONENT_BITS significant bits ...
SCORE_EXPONENT_BITS = 30
#: ... on a lattice no finer than 2^-56, and at most 2^31 (every int64 product stays below 2^62).
SCORE_EXPONENT_MAX_DENOMINATOR_BITS = 56
SCORE_EXPONENT_MAX = 2**31


def _score_lattice(q: Query) -> tuple[int, int]:
    """(e, K): scores are rounded to n_r = round(u_r / 2^e), e = floor(log2 Delta) - 20, so a
    neighbour moves every n_r by at most K = floor(Delta / 2^e) + 1 (half a step of rounding on each
    side), and all in the same direction when the scores do (rounding is monotone)."""
    delta = Fraction(_score_sensitivity(q))
    e = floor_log2(delta) - SCORE_LATTICE_BITS
    return e, math.floor(delta / Fraction(2) ** e) + 1


@dataclass(frozen=True)
class ExponentialMechanism(Mechanism):
    """Output candidate r with probability proportional to exp(eps u(D, r) / (2 Delta))
    [@mcsherry2007mechanism]; eps-DP. For a monotone utility exp(eps u / Delta) suffices
    [@dwork2014algorithmic, Sec. 3.4]. ``monotone=None`` takes the utility query's own declaration.

    Sampled exactly (inverting a float CDF gives candidates probability 0 on one input and 2^-53 on a
    neighbour). The scores are rounded to n_r = round(u_r/gamma), gamma = 2^(floor(log2 Delta) - 20),
    so neighbours' n_r differ by at most K = floor(Delta/gamma) + 1 (and move together when u does);
    with the rational s <= eps/(2K) (eps/K if monotone) and d_r = min(max_j n_j - n_r, D), D = 2^62 // s
    numerator (the clipped utility max(n_r, max n - D) has the same sensitivity K), candidate r has
    probability proportional to exp(-s d_r): a uniform proposal (``rng.integers``) accepted by an exact
    Bernoulli(exp(-s d_r)) [@canonne2020discrete, Alg. 1]. This is the exponential mechanism on an integer
    utility of sensitivity K with factor s, so P(r|D)/P(r|D') <= exp(2 s K) <= e^eps (exp(s K) when monotone):
    the declared ``PureDP(eps)`` holds for what is sampled. Expected rounds: k / sum_r exp(-s d_r) <= k.

    It declares the stronger ``BoundedRange(eps)`` [@durfee2019practical, Sec. 4.2], whose RDP curve,
    zCDP level (eps^2/8) and profile are tight for the exponential mechanism: the clipped utility
    v_r = max(n_r, max n - D) has P(r) proportional to exp(s v_r), and each v_r - v'_r lies in
    [-K, K] (in [0, K] or [-K, 0] when monotone: max is monotone and 1-Lipschitz), so over the
    outputs the loss log P(r|D)/P(r|D') = s (v_r - v'_r) - log(Z/Z') varies by at most 2 s K <= eps
    (s K <= eps when monotone).
    """

    utility: Query
    eps: float
    monotone: bool | None = None

    def __post_init__(self) -> None:
        _check_query(self.utility, "utility")
        object.__setattr__(self, "eps", _check_eps(self.eps))
        if self.monotone is None:
            object.__setattr__(self, "monotone", self.utility.monotone)
        elif not isinstance(self.monotone, (bool, np.bool_)):
            raise TypeError(f"monotone must be None or a bool, got {self.monotone!r}")
        object.__setattr__(self, "monotone", bool(self.monotone))

    @property
    def sensitivity(self) -> Any:
        return self.utility.linf

    def guarantee(self) -> Guarantee:
        return BoundedRange(self.eps)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("discrete", (), f"candidate index in 0..{_n_candidates(self.utility) - 1}")

    def score_lattice(self) -> tuple[int, Fraction, int]:
        """(e, s, D): scores are rounded to 2^e Z; s is the exact exponent per lattice step and D the
        clip of the distances to the best score (class docstring)."""
        e, k_shift = _score_lattice(self.utility)
        exact = Fraction(self.eps) / ((1 if self.monotone else 2) * k_shift)
        bits = min(SCORE_EXPONENT_MAX_DENOMINATOR_BITS, max(0, SCORE_EXPONENT_BITS - floor_log2(exact)))
        s = min(Fraction(math.floor(exact * 2**bits), 2**bits), Fraction(SCORE_EXPONENT_MAX))
        return e, s, 2**62 // max(s.numerator, 1)

    def sampling_exponents(self, data: ArrayLike) -> tuple[Fraction, NDArray[np.int64]]:
        """(s, d): the sampler outputs r with probability exp(-s d_r) / sum_j exp(-s d_j), exactly."""
        e, s, clip = self.score_lattice()
        n = to_lattice(self.utility(data), e)
        return s, np.minimum(n.max() - n, clip)

    def log_probabilities(self, data: ArrayLike) -> FloatArray:
        """log P(output = r) for every candidate r, of the law sampled."""
        s, d = self.sampling_exponents(data)
        return _log_softmax_rows(-float(s) * d.astype(np.float64))

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        s, d = self.sampling_exponents(data)
        out = np.empty(m, dtype=np.int64)
        pending = np.arange(m)
        while pending.size:
            proposal = rng.integers(0, d.size, size=pending.size)
            accept = bernoulli_exp_neg_vec(rng, s.numerator * d[proposal],
                                           np.full(pending.size, s.denominator, dtype=np.int64))
            out[pending[accept]] = proposal[accept]
            pending = pending[~accept]
        return out

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        idx = _indices(y, _n_candidates(self.utility))
        return self.log_probabilities(data)[idx] - self.log_probabilities(data2)[idx]


@dataclass(frozen=True)
class ReportNoisyMax(Mechanism):
    """argmax_r u(D, r) + Z_r with i.i.d. noise of scale 2 Delta/eps (Delta/eps if monotone); eps-DP.

    Laplace noise: [@dwork2014algorithmic, Claim 3.9] (the threshold a candidate must beat moves by at most
    2 Delta, or Delta for monotone scores). Exponential noise: [@ding2021permute] (identical to
    permute-and-flip [@mckenna2020permute]). Gumbel noise: the output law is exactly the exponential
    mechanism's, so ``privacy_loss`` is available for it.

    Sampled exactly (float noise has bounded tails: a candidate that cannot win on one input may win
    on its neighbour). Laplace/exponential: scores on the lattice of ``ExponentialMechanism`` (n_r,
    moved by at most K steps), plus exact two-sided / one-sided geometric noise with
    P(z) proportional to exp(-|z|/t), t = ceil(c K/eps) steps (c = 2, or 1 when monotone), ties to the
    lowest index. The event "r wins" is {Z_r >= threshold} for fixed other noise, the threshold moves
    by at most 2K steps (K, and in the favourable direction for the other K, when monotone: the
    argument of [@dwork2014algorithmic]), and both laws' tails satisfy S(c - m) <= e^(m/t) S(c): so
    P(r|D) <= e^eps P(r|D').
    Gumbel: drawn from the exact exponential-mechanism sampler with the same eps (the same law).
    """

    utility: Query
    eps: float
    noise: Noise = "laplace"
    monotone: bool | None = None

    def __post_init__(self) -> None:
        _check_query(self.utility, "utility")
        object.__setattr__(self, "eps", _check_eps(self.eps))
        if self.noise not in ("laplace", "exponential", "gumbel"):
            raise ValueError(f"noise must be 'laplace', 'exponential' or 'gumbel', got {self.noise!r}")
        if self.monotone is None:
            object.__setattr__(self, "monotone", self.utility.monotone)

    @property
    def sensitivity(self) -> Any:
        return self.utility.linf

    @property
    def scale(self) -> Any:
        """Noise scale 2 Delta/eps (Delta/eps when monotone), as a sympy expression."""
        c = 1 if self.monotone else 2
        return c * self.utility.linf / sympy.Rational(repr(self.eps))

    def guarantee(self) -> Guarantee:
        return PureDP(self.eps)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("discrete", (), f"candidate index in 0..{_n_candidates(self.utility) - 1}")

    def noise_steps(self) -> int:
        """t = ceil(c K / eps): the geometric noise parameter in lattice steps (class docstring)."""
        _, k_shift = _score_lattice(self.utility)
        return math.ceil((1 if self.monotone else 2) * k_shift / Fraction(self.eps))

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        if self.noise == "gumbel":
            return ExponentialMechanism(self.utility, self.eps, self.monotone)._sample(data, rng, m)
        e, _ = _score_lattice(self.utility)
        n = to_lattice(self.utility(data), e)
        t = Fraction(self.noise_steps())
        shape = (m, n.size)
        if self.noise == "laplace":
            z = discrete_laplace_array(rng, t, shape)
        else:
            z = geometric_array(rng, int(t), shape)
        return np.asarray(np.argmax(n[None, :] + z, axis=1), dtype=np.int64)

    def privacy_loss(self, y: ArrayLike, data: ArrayLike, data2: ArrayLike) -> FloatArray:
        if self.noise != "gumbel":
            raise NotImplementedError("report-noisy-max has a closed-form output law only with Gumbel noise")
        return ExponentialMechanism(self.utility, self.eps, self.monotone).privacy_loss(y, data, data2)


#: The noisy value of PrivateMax is released on the lattice 2^(floor(log2 scale) - VALUE_LATTICE_BITS) Z.
VALUE_LATTICE_BITS = 16


@dataclass(frozen=True)
class ValueLattice:
    """How PrivateMax releases f_i + w without floating-point leaks [@mironov2012significance]: the value is
    rounded to the lattice 2^e Z and exact discrete Laplace noise of parameter t (in lattice steps)
    is added. Rounding moves a value by at most half a step, so neighbouring values differ by at
    most ``shift`` = floor(B / 2^e) + 1 steps, and the release is (shift / t)-DP."""

    exponent: int
    t: int
    shift: int

    @classmethod
    def for_scale(cls, scale: float, sensitivity: float) -> ValueLattice:
        e = floor_log2(Fraction(scale)) - VALUE_LATTICE_BITS
        step = Fraction(2) ** e
        t = math.ceil(Fraction(scale) / step)
        return cls(e, t, math.floor(Fraction(sensitivity) / step) + 1)

    @property
    def eps(self) -> Fraction:
        return Fraction(self.shift, self.t)

    def release(self, values: FloatArray, rng: np.random.Generator) -> FloatArray:
        noise = discrete_laplace_array(rng, Fraction(self.t), values.shape)
        return from_lattice(to_lattice(values, self.exponent) + noise, self.exponent)


def _argmax_lattice(utility: Query, scale: float) -> tuple[int, int, int]:
    """(e, K, t): the scores on the lattice of ``ExponentialMechanism`` (moved by at most K steps) and
    Laplace(scale) noise drawn exactly as discrete Laplace with t = ceil(scale / 2^e) steps."""
    e, k_shift = _score_lattice(utility)
    return e, k_shift, math.ceil(Fraction(scale) / Fraction(2) ** e)


def _private_max_steps(f: FloatArray, scale: float, utility: Query, lattice: ValueLattice,
                       rng: np.random.Generator, m: int, k: int) -> FloatArray:
    """k rounds of PrivateMax on m independent runs: (m, k, 2) array of (index, noisy value); the
    argmax of |n_j + Z_j| on the score lattice with exact discrete Laplace Z (``_argmax_lattice``)."""
    e, _, t = _argmax_lattice(utility, scale)
    n = to_lattice(f, e)
    out = np.empty((m, k, 2))
    removed = np.zeros((m, f.size), dtype=bool)
    rows = np.arange(m)
    for j in range(k):
        noisy = np.abs(n[None, :] + discrete_laplace_array(rng, Fraction(t), (m, f.size)))
        noisy[removed] = -1
        idx = np.argmax(noisy, axis=1)
        removed[rows, idx] = True
        out[:, j, 0] = idx
        out[:, j, 1] = lattice.release(f[idx], rng)
    return out


@dataclass(frozen=True)
class PrivateMax(Mechanism):
    """PrivateMax(f, B, eps) of Cai, Wang & Zhang [@cai2021cost, Algorithm 1]: with xi_j, w i.i.d.
    Laplace(2B/eps), return i = argmax_j |f_j(D) + xi_j| and f_i(D) + w. Output: [index, value].

    B is the L-infinity sensitivity of the utility. Guarantee: ``PureDP(3 eps / 2)`` plus at most
    2^-15 (below). Sampled exactly: the argmax is taken over |n_j + Z_j| with the scores on the lattice
    of ``ExponentialMechanism`` (moved by at most K steps) and exact discrete Laplace Z of t steps,
    so the event "i wins" is two half-lines whose end points move by at most 2K steps: 2K/t.
    Lemma 16 of [@cai2021cost] states (eps, 0)-DP; our accounting is: the argmax step is
    eps-DP (the event "i wins" is a pair of half-lines for xi_i whose end points move by at most 2B,
    i.e. 2B/scale = eps), and releasing f_i + w is an eps/2-DP Laplace mechanism (B/scale = eps/2);
    for non-monotone scores the argmax bound is approached, so we declare the sum. The lemma's eps
    fails: at B = 1, eps = 1, scores (-4, 3) against (-5, 2) give index 2 with probabilities 0.383 and
    0.207, and with the value's ratio e^(1/2) the output (2, v >= 3) has privacy loss 1.117. The value is
    released float-safely on a lattice (``ValueLattice``), whose rounding adds one lattice step to
    its sensitivity: the declared eps is eps + shift/t. ``PrivateMax.calibrated(f, PureDP(eps))`` spends
    a total budget of at most eps (noise about 3B/eps).
    """

    utility: Query
    eps: float

    def __post_init__(self) -> None:
        _check_query(self.utility, "utility")
        object.__setattr__(self, "eps", _check_eps(self.eps))

    @classmethod
    def calibrated(cls, utility: Query, target: Guarantee) -> PrivateMax:
        """The PrivateMax with the least noise whose declared guarantee implies ``target`` (a PureDP or
        ApproxDP target, met as pure DP: the declared guarantee is pure): the paper parameter 2 eps/3
        when it fits, else the largest below it that does (``accountant.calibrate``; the lattice
        rounding of the value adds a little to the declared eps)."""
        if not isinstance(target, (PureDP, ApproxDP)):
            raise TypeError(f"target must be a PureDP or ApproxDP guarantee (PrivateMax is pure DP), "
                            f"got {type(target).__name__}")
        mech = cls(utility, 2.0 * target.eps / 3.0)
        if implies(mech.guarantee(), target):
            return mech
        return cls(utility, calibrate(lambda x: cls(utility, x).guarantee(), target,
                                      (target.eps / 3.0, mech.eps), increasing=True, tol=2.0**-30))

    @property
    def sensitivity(self) -> Any:
        return self.utility.linf

    @property
    def scale(self) -> Any:
        return 2 * self.utility.linf / sympy.Rational(repr(self.eps))

    def _noise(self) -> tuple[float, ValueLattice]:
        b = _score_sensitivity(self.utility)
        scale = 2.0 * b / self.eps
        return scale, ValueLattice.for_scale(scale, b)

    def guarantee_eps(self) -> float:
        """eps of the argmax on the score lattice (2K/t, about 2B/scale) plus eps of the lattice value
        release, rounded up."""
        scale, lattice = self._noise()
        _, k_shift, t = _argmax_lattice(self.utility, scale)
        return to_float_up("eps", sympy.Rational(Fraction(2 * k_shift, t) + lattice.eps))

    def guarantee(self) -> Guarantee:
        return PureDP(self.guarantee_eps())

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("mixed", (2,), "[index of the noisy max |f_j|, noisy value f_index + w "
                                         "on a lattice 2^e Z]")

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        scale, lattice = self._noise()
        steps = _private_max_steps(self.utility(data), scale, self.utility, lattice, rng, m, 1)
        return steps[:, 0, :]


@dataclass(frozen=True)
class Peeling(Mechanism):
    """Peeling(f, k, B, eps, delta) of Cai, Wang & Zhang [@cai2021cost, Algorithm 2]: k rounds of
    PrivateMax with eps' = eps / (2 sqrt(3 k log(1/delta))), each removing the selected coordinate.
    Output: (k, 2) array of [index, noisy value].

    Guarantee: the exact composition [@kairouz2015composition, via ``accountant.compose``] of k
    rounds of ``PrivateMax(utility, eps')``, each ``PureDP(3 eps'/2)`` plus at most 2^-15 (see
    ``PrivateMax``). Lemma 17 of [@cai2021cost] claims (eps, delta)-DP; ``claimed()`` returns that claim
    and ``guarantee().epsilon(delta)`` the eps we can account for, which is below eps for the usual
    parameters (eps <= 1) -- see the tests.
    """

    utility: Query
    k: int
    eps: float
    delta: float

    def __post_init__(self) -> None:
        _check_query(self.utility, "utility")
        object.__setattr__(self, "eps", _check_eps(self.eps))
        object.__setattr__(self, "k", check_count("k", self.k, low=1, high=2**62))
        object.__setattr__(self, "delta", check_real("delta", self.delta, low=0.0, high=1.0, low_open=True,
                                                     high_open=True))
        if self.k > _n_candidates(self.utility):
            raise ValueError(f"k = {self.k} exceeds the {_n_candidates(self.utility)} candidates")

    @property
    def step_eps(self) -> float:
        """eps' = eps / (2 sqrt(3 k log(1/delta))), the PrivateMax parameter of each round."""
        return self.eps / (2.0 * math.sqrt(3.0 * self.k * math.log(1.0 / self.delta)))

    @property
    def sensitivity(self) -> Any:
        return self.utility.linf

    def claimed(self) -> Guarantee:
        """The guarantee stated by Lemma 17: (eps, delta)-DP."""
        return ApproxDP(self.eps, self.delta)

    @property
    def round(self) -> PrivateMax:
        """The PrivateMax run in every round (on the scores not yet selected)."""
        return PrivateMax(self.utility, self.step_eps)

    def guarantee(self) -> Guarantee:
        return compose([self.round.guarantee()] * self.k, method="exact")

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("mixed", (self.k, 2), "k rows [index, noisy value]")

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        scale, lattice = self.round._noise()
        return _private_max_steps(self.utility(data), scale, self.utility, lattice, rng, m, self.k)


@dataclass(frozen=True)
class AboveThreshold(Mechanism):
    """The sparse vector technique, AboveThreshold [@dwork2014algorithmic, Alg. 1 / Thm 3.23;
    @lyu2017understanding, Alg. 1 with c = 1]: rho ~ Lap(2 Delta/eps) drawn once, nu_i ~ Lap(4 Delta/eps)
    per query (Lap(2 Delta/eps) for monotone queries, [@lyu2017understanding, Thm 3]); output the index of
    the first query with q_i(D) + nu_i >= threshold + rho and halt, or k (meaning "none") if no
    query passes. eps-DP.

    Sampled exactly: queries and threshold on the lattice of ``ExponentialMechanism`` (a neighbour
    moves each n_i by at most K steps), rho and nu_i exact discrete Laplace with t = ceil(2K/eps) and
    ceil(4K/eps) steps (ceil(2K/eps) monotone). The proof of [@lyu2017understanding] carries over:
    shifting rho by K and the winner's nu by 2K (K) maps outcomes onto outcomes, and the discrete
    Laplace pmf satisfies p(z + m) <= e^(m/t) p(z), so the cost is K/t_rho + 2K/t_nu <= eps.
    """

    queries: Query
    threshold: float
    eps: float
    monotone: bool | None = None

    def __post_init__(self) -> None:
        _check_query(self.queries, "queries")
        object.__setattr__(self, "eps", _check_eps(self.eps))
        object.__setattr__(self, "threshold", check_real("threshold", self.threshold))
        if not math.isfinite(self.threshold):
            raise ValueError(f"threshold must be finite, got {self.threshold!r}")
        if self.monotone is None:
            object.__setattr__(self, "monotone", self.queries.monotone)

    @property
    def sensitivity(self) -> Any:
        return self.queries.linf

    def guarantee(self) -> Guarantee:
        return PureDP(self.eps)

    @property
    def output(self) -> OutputSpec:
        k = _n_candidates(self.queries)
        return OutputSpec("discrete", (), f"index of the first query above threshold in 0..{k - 1}, "
                                          f"or {k} if none")

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        e, k_shift = _score_lattice(self.queries)
        n = to_lattice(self.queries(data), e)
        n_threshold = int(to_lattice(np.array([self.threshold]), e)[0])
        t_rho = math.ceil(2 * k_shift / Fraction(self.eps))
        t_nu = math.ceil((2 if self.monotone else 4) * k_shift / Fraction(self.eps))
        rho = discrete_laplace_array(rng, Fraction(t_rho), (m, 1))
        above = n[None, :] + discrete_laplace_array(rng, Fraction(t_nu), (m, n.size)) >= n_threshold + rho
        first = np.argmax(above, axis=1)
        return np.where(above.any(axis=1), first, n.size).astype(np.int64)
