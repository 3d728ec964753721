"""Stability-based estimators [@dwork2014algorithmic, Ch. 7]: the noisy distance test, propose-test-
release (PTR) as a combinator, A_dist (Alg. 13), A_samp (Alg. 14), subsample-and-aggregate, and the
local sensitivity of order statistics with the distances PTR needs [@nissim2007smooth, Sec. 3.1].

Refusals are ``BOTTOM`` (``mechanisms.base.Refusal``): a vectorised sampler returns an object array of
values and ``BOTTOM``.

Float safety of the test. "d + Lap(1/eps) > threshold" is decided on a lattice with exact discrete
Laplace noise (``samplers.discrete_laplace_array``): an integer distance is used as it is (noise of
scale b = ceil(2^20/eps)/2^20 >= 1/eps, so one unit of distance costs 1/b <= eps); a real distance of
sensitivity 1 (A_samp) is rounded to 2^-16 Z, moves by at most 2^16 + 1 steps, and the noise has
t = ceil((2^16 + 1)/eps) steps. The test's pass probabilities are those of the discrete law, computed
with mpmath and rounded up (``NoisyThresholdTest.delta``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import sympy
from numpy.typing import ArrayLike, NDArray

from accountant import ApproxDP, Guarantee, PureDP
from accountant.core.types import ADJACENCIES, FloatArray
from accountant.core.validation import as_float_array, check_count, check_real

from ..base import BOTTOM, Mechanism, OutputSpec
from ..domain import Domain
from ..noise import Laplace
from ..queries import CustomQuery
from ..samplers import discrete_laplace_array

__all__ = [
    "ADist",
    "ASamp",
    "NoisyThresholdTest",
    "ProposeTestRelease",
    "SubsampleAndAggregate",
    "check_bounds",
    "check_quantile_fields",
    "distance_to_sensitivity_above",
    "mode_aggregator",
    "mode_with_distance",
    "order_statistic_local_sensitivity",
    "trimmed_mean",
    "trimmed_mean_aggregator",
]

#: Resolution of the noise scale b = ceil(2^SCALE_BITS / eps) / 2^SCALE_BITS of the integer test.
SCALE_BITS = 20
#: A real-valued distance is rounded to 2^-REAL_LATTICE_BITS Z.
REAL_LATTICE_BITS = 16


def check_eps(eps: float, name: str = "eps") -> float:
    return check_real(name, eps, low=0.0, high=1e6, low_open=True)


def check_delta(delta: float, name: str = "delta") -> float:
    return check_real(name, delta, low=0.0, high=1.0, low_open=True, high_open=True)


def check_bounds(lower: float, upper: float) -> tuple[float, float]:
    """Validated public data bounds lower < upper (each within +-1e150)."""
    lo = check_real("lower", lower, low=-1e150, high=1e150)
    hi = check_real("upper", upper, low=-1e150, high=1e150)
    if not lo < hi:
        raise ValueError(f"lower must be < upper, got lower = {lower!r}, upper = {upper!r}")
    return lo, hi


def check_quantile_fields(m: Any) -> tuple[float, float]:
    """Validate, in place on a frozen quantile estimator, its data bounds, n, eps and the quantile q;
    returns (lower, upper)."""
    lo, hi = check_bounds(m.lower, m.upper)
    object.__setattr__(m, "lower", lo)
    object.__setattr__(m, "upper", hi)
    object.__setattr__(m, "n", check_count("n", m.n, low=1, high=10**9))
    object.__setattr__(m, "eps", check_eps(m.eps))
    object.__setattr__(m, "q", check_real("q", m.q, low=0.0, high=1.0, low_open=True, high_open=True))
    return lo, hi


def float_up(x: Any) -> float:
    """The least double >= x (an mpmath number, a Fraction or a float)."""
    v = float(x)
    return math.nextafter(v, math.inf) if v < x else v


def sum_up(*xs: float) -> float:
    """A double >= the exact sum of the doubles xs."""
    return float_up(sum((Fraction(x) for x in xs), Fraction(0)))


def object_outputs(values: list[Any]) -> NDArray[Any]:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


@dataclass(frozen=True)
class NoisyThresholdTest:
    """Pass iff d + Z > threshold, Z ~ Lap(1/eps) drawn exactly on a lattice (module docstring), for a
    distance d of sensitivity 1 [@dwork2014algorithmic, Sec. 7.2]. ``integer=True`` when d takes
    integer values. The test is ``PureDP(eps)`` in d; ``delta(bad)`` is the largest pass probability
    of a dataset whose distance is at most ``bad``."""

    eps: float
    threshold: float
    integer: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", check_eps(self.eps))
        object.__setattr__(self, "threshold", check_real("threshold", self.threshold, low=-1e12, high=1e12))
        if not isinstance(self.integer, bool):
            raise TypeError(f"integer must be a bool, got {self.integer!r}")

    @property
    def step(self) -> Fraction:
        """The lattice spacing gamma of the distance."""
        return Fraction(1) if self.integer else Fraction(1, 2**REAL_LATTICE_BITS)

    @property
    def shift(self) -> int:
        """Most lattice steps a neighbour moves the rounded distance."""
        return 1 if self.integer else 2**REAL_LATTICE_BITS + 1

    @property
    def scale(self) -> Fraction:
        """Discrete Laplace scale in lattice steps, with shift / scale <= eps."""
        den = 2**SCALE_BITS
        return Fraction(math.ceil(Fraction(self.shift) * den / Fraction(self.eps)), den)

    @property
    def cut(self) -> int:
        """c: pass iff (rounded distance + Z) >= c, i.e. d + Z > threshold on the lattice."""
        return math.floor(Fraction(self.threshold) / self.step) + 1

    def index(self, d: float) -> int:
        d = check_real("distance", d, low=-1e12, high=1e12)
        if self.integer:
            if d != math.floor(d):
                raise ValueError(f"the distance must be an integer for an integer test, got {d!r}")
            return int(d)
        return round(Fraction(d) / self.step)

    def passes(self, d: float, rng: np.random.Generator, m: int) -> NDArray[np.bool_]:
        z = discrete_laplace_array(rng, self.scale, (m,))
        return np.asarray(self.index(d) + z >= self.cut, dtype=bool)

    def pass_probability(self, index: int) -> mpmath.mpf:
        """P(index + Z >= cut) for Z with pmf proportional to exp(-|z|/scale) on Z (60 digits)."""
        with mpmath.workdps(60):
            r = mpmath.exp(-1 / mpmath.mpf(self.scale.numerator) * self.scale.denominator)
            j = self.cut - index  # P(Z >= j)
            # P(Z >= k) = r^k / (1 + r) for k >= 1
            return r**j / (1 + r) if j >= 1 else 1 - r ** (1 - j) / (1 + r)

    def delta(self, bad: float = 0.0) -> float:
        """max P(pass) over datasets whose distance is at most ``bad``, rounded up."""
        worst = self.index(bad) if self.integer else math.floor(Fraction(bad) / self.step) + 1
        return min(1.0, float_up(self.pass_probability(worst)))

    @classmethod
    def for_delta(cls, eps: float, delta: float, bad: float = 0.0,
                  integer: bool = True) -> NoisyThresholdTest:
        """The test with the least threshold (on the lattice) whose ``delta(bad)`` is at most ``delta``."""
        probe = cls(eps, 0.0, integer)
        b = float(probe.scale)
        worst = math.floor(bad) if integer else math.floor(Fraction(bad) / probe.step) + 1
        j = max(1, math.floor(b * math.log(1.0 / check_delta(delta))) - 2)  # a little below the answer
        while True:
            thr = float((worst + j - 1) * probe.step)
            test = cls(eps, thr, integer)
            if test.delta(bad) <= delta:
                return test
            j += 1


def _release_eps(release: Mechanism, release_delta: float) -> float:
    g = release.closed_form_guarantee()
    return g.eps if isinstance(g, PureDP) and release_delta == 0 else float(g.epsilon(release_delta))


@dataclass(frozen=True)
class ProposeTestRelease(Mechanism):
    """Propose-test-release [@dwork2009differential; @dwork2014algorithmic, Sec. 7.2] as a combinator.

    ``release`` is a mechanism calibrated to a *proposed* bound on the local sensitivity (e.g. a
    ``Laplace`` on a ``CustomQuery`` that declares the bound); ``distance(x)`` is the number of records
    to change to reach a dataset where the bound fails (0 when it fails at x; sensitivity 1). Output:
    ``BOTTOM`` unless the noisy distance passes ``test``, else one draw of ``release``.

    Guarantee: for neighbours with distance >= 1 the bound holds, so test (eps) and release compose;
    otherwise the release happens with probability at most ``test.delta(0)``. Hence
    ``ApproxDP(eps + eps_release(release_delta), test.delta(0) + release_delta)``.
    """

    distance: Callable[[FloatArray], float] = field(compare=False)
    release: Mechanism
    test: NoisyThresholdTest
    release_delta: float = 0.0

    def __post_init__(self) -> None:
        if not callable(self.distance):
            raise TypeError(f"distance must be callable, got {type(self.distance).__name__}")
        if not isinstance(self.release, Mechanism):
            raise TypeError(f"release must be a Mechanism, got {type(self.release).__name__}")
        if not isinstance(self.test, NoisyThresholdTest):
            raise TypeError(f"test must be a NoisyThresholdTest, got {type(self.test).__name__}")
        if self.release.output.shape != ():
            raise ValueError(f"PTR releases scalar outputs; release has shape {self.release.output.shape}")
        object.__setattr__(self, "release_delta", check_real("release_delta", self.release_delta, low=0.0,
                                                             high=1.0, high_open=True))

    @property
    def sensitivity(self) -> Any:
        """The proposed bound (the release's sensitivity); the distance has sensitivity 1."""
        return self.release.sensitivity

    def guarantee(self) -> Guarantee:
        eps = sum_up(self.test.eps, _release_eps(self.release, self.release_delta))
        return ApproxDP(eps, min(sum_up(self.test.delta(0), self.release_delta), math.nextafter(1.0, 0)))

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("mixed", (), f"BOTTOM or a release ({self.release.output.support})")

    def explain(self) -> str:
        return (f"propose-test-release: refuse unless distance + Lap(1/{self.test.eps}) > "
                f"{self.test.threshold}; release: {self.release.explain()}\n  guarantee: {self.guarantee()}")

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x = as_float_array("data", data)
        ok = self.test.passes(float(self.distance(x)), rng, m)
        out = object_outputs([BOTTOM] * m)
        k = int(ok.sum())
        if k:
            vals = np.asarray(self.release.sample(data, rng, size=k))
            out[np.flatnonzero(ok)] = vals.tolist()
        return out


class _BookTested(Mechanism):
    """A release gated by the book's noisy test of a sensitivity-1 distance d: Lap(1/eps) against
    ``threshold``, by default ln(1/delta)/eps [@dwork2014algorithmic, Alg. 13/14]; (eps, P(pass | d = 0))-DP.
    Subclasses are dataclasses with the fields ``eps``, ``delta`` and ``threshold``."""

    eps: float
    delta: float
    threshold: float | None

    def _integer_distance(self) -> bool:
        """Whether d takes integer values (the test is then decided on integers)."""
        return False

    @property
    def test(self) -> NoisyThresholdTest:
        thr = math.log(1.0 / self.delta) / self.eps if self.threshold is None else self.threshold
        return NoisyThresholdTest(self.eps, thr, self._integer_distance())

    @property
    def sensitivity(self) -> Any:
        """Of the distance d (for A_samp: given that no row is in more than 2mq subsamples)."""
        return sympy.Integer(1)

    def guarantee(self) -> Guarantee:
        return ApproxDP(self.eps, self.test.delta(0))


@dataclass(frozen=True)
class ADist(_BookTested):
    """A_dist [@dwork2014algorithmic, Alg. 13, Prop. 7.2]: output g(x) if d + Lap(1/eps) >
    ln(1/delta)/eps, else ``BOTTOM``, where ``distance(x)`` is the (integer) distance from x to the
    nearest dataset on which g is unstable (0 when unstable at x; sensitivity 1).

    Guarantee ``ApproxDP(eps, test.delta(0))``: on neighbours with distance >= 1, g agrees, so only
    the test differs (eps); otherwise g(x) is released with probability at most test.delta(0) (the
    discrete noise's tail beyond ln(1/delta)/eps: at most delta / (1 + e^-eps) < delta). Another
    ``threshold`` changes that delta, which the guarantee reports.
    """

    g: Callable[[FloatArray], Hashable] = field(compare=False)
    distance: Callable[[FloatArray], float] = field(compare=False)
    eps: float
    delta: float
    integer: bool = True
    threshold: float | None = None

    def __post_init__(self) -> None:
        for nm in ("g", "distance"):
            if not callable(getattr(self, nm)):
                raise TypeError(f"{nm} must be callable, got {type(getattr(self, nm)).__name__}")
        object.__setattr__(self, "eps", check_eps(self.eps))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.threshold is not None:
            object.__setattr__(self, "threshold", check_real("threshold", self.threshold, low=-1e12,
                                                             high=1e12))

    def _integer_distance(self) -> bool:
        return self.integer

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("mixed", (), "g(x) or BOTTOM")

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x = as_float_array("data", data)
        ok = self.test.passes(float(self.distance(x)), rng, m)
        value = self.g(x) if ok.any() else BOTTOM
        return object_outputs([value if o else BOTTOM for o in ok.tolist()])


def mode_with_distance(values: ArrayLike, adjacency: str = "add_remove") -> tuple[float, int]:
    """(mode, distance to instability) of a multiset [@dwork2014algorithmic, Sec. 7.3]: ties go to the
    smallest value; with G = count_(1) - count_(2) (0 for an absent value), one added or removed record
    moves G by at most 1 (2 under replace-one), and g is stable wherever G >= 2 (G >= 3), so
    max(G - 1, 0) (max((G - 1) // 2, 0) under replace-one) is a sensitivity-1 lower bound on the
    distance to instability."""
    v = as_float_array("values", values).reshape(-1)
    if v.size == 0:
        raise ValueError("values must not be empty")
    if adjacency not in ADJACENCIES:
        raise ValueError(f"adjacency must be 'add_remove' or 'replace', got {adjacency!r}")
    uniq, counts = np.unique(v, return_counts=True)
    order = np.lexsort((uniq, -counts))  # most frequent first, ties to the smallest value
    c1 = int(counts[order[0]])
    c2 = int(counts[order[1]]) if order.size > 1 else 0
    gap = c1 - c2
    dist = max(gap - 1, 0) if adjacency == "add_remove" else max((gap - 1) // 2, 0)
    return float(uniq[order[0]]), dist


@dataclass(frozen=True)
class ASamp(_BookTested):
    """A_samp [@dwork2014algorithmic, Alg. 14; @smith2013differentially]: m subsamples x_i, each row
    kept independently with probability q; ``BOTTOM`` if some row is in more than 2 m q of them; else
    z = (f(x_1), ..., f(x_m)), d = (count_(1) - count_(2)) / (4 m q) - 1 and A_dist on d: mode(z) if
    d + Lap(1/eps) > ln(1/delta)/eps, else ``BOTTOM``.

    Defaults are the book's q = eps / (64 ln(1/delta)) and m = ln(n/delta) / q^2 (Thm 7.3); any q, m keep
    the guarantee ``ApproxDP(eps, test.delta(0))`` (replace-one): the 2mq check depends on the subsets
    only, and given it a changed row moves every count by at most 2mq, so d by at most 1; d > 0 means
    a neighbour cannot change the mode. q is used as a dyadic rational (2^-40 Z) with exact Bernoulli
    draws; d is a real distance (lattice test).
    """

    f: Callable[[FloatArray], Hashable] = field(compare=False)
    eps: float
    delta: float
    q: float | None = None
    m: int | None = None
    threshold: float | None = None

    def __post_init__(self) -> None:
        if not callable(self.f):
            raise TypeError(f"f must be callable, got {type(self.f).__name__}")
        object.__setattr__(self, "eps", check_eps(self.eps))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.threshold is not None:
            object.__setattr__(self, "threshold", check_real("threshold", self.threshold, low=-1e12,
                                                             high=1e12))
        if self.q is not None:
            object.__setattr__(self, "q", check_real("q", self.q, low=2.0**-40, high=1.0))
        if self.m is not None:
            object.__setattr__(self, "m", check_count("m", self.m, low=1, high=10**7))

    def parameters(self, n: int) -> tuple[Fraction, int]:
        """(q, m) used on n rows: the given ones, else the book's (q rounded down to 2^-40 Z)."""
        q = self.q if self.q is not None else self.eps / (64.0 * math.log(1.0 / self.delta))
        qf = Fraction(math.floor(Fraction(q) * 2**40), 2**40)
        if qf <= 0:
            raise ValueError(f"q = {q!r} is below 2^-40")
        m = self.m if self.m is not None else math.ceil(math.log(n / self.delta) / float(qf) ** 2)
        return qf, check_count("m (the number of subsamples)", m, low=1, high=10**7)

    @property
    def output(self) -> OutputSpec:
        return OutputSpec("mixed", (), "mode of f over the subsamples, or BOTTOM")

    def _one(self, x: FloatArray, rng: np.random.Generator, q: Fraction, m: int) -> Any:
        n = x.shape[0]
        masks = rng.integers(0, q.denominator, size=(m, n)) < q.numerator
        if (masks.sum(axis=0) > 2 * m * q).any():
            return BOTTOM
        top = Counter(self.f(x[row]) for row in masks).most_common(2)
        c1 = top[0][1]
        c2 = top[1][1] if len(top) > 1 else 0
        d = Fraction(c1 - c2) / (4 * m * q) - 1
        if not self.test.passes(float(d), rng, 1)[0]:
            return BOTTOM
        return top[0][0]  # d > 0 on a pass with high probability; then the mode is unique

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        x = as_float_array("data", data)
        if x.shape[0] == 0:
            raise ValueError("data must not be empty")
        q, k = self.parameters(x.shape[0])
        return object_outputs([self._one(x, rng, q, k) for _ in range(m)])


@dataclass(frozen=True)
class SubsampleAndAggregate(Mechanism):
    """Subsample-and-aggregate [@nissim2007smooth; @dwork2014algorithmic, Sec. 7.1]: the n rows are
    split at random into ``blocks`` blocks of size n // blocks (the remainder is dropped), f is
    evaluated on each block without noise, and ``aggregator`` (a mechanism on ``blocks`` values under
    replace-one) releases a statistic of them. A changed row changes one block value, so the
    aggregator's guarantee is the guarantee (replace-one adjacency on the rows).
    """

    f: Callable[[FloatArray], float] = field(compare=False)
    blocks: int
    aggregator: Mechanism

    def __post_init__(self) -> None:
        if not callable(self.f):
            raise TypeError(f"f must be callable, got {type(self.f).__name__}")
        object.__setattr__(self, "blocks", check_count("blocks", self.blocks, low=1, high=10**8))
        if not isinstance(self.aggregator, Mechanism):
            raise TypeError(f"aggregator must be a Mechanism, got {type(self.aggregator).__name__}")

    @property
    def sensitivity(self) -> Any:
        return self.aggregator.sensitivity

    def guarantee(self) -> Guarantee:
        return self.aggregator.guarantee()

    def closed_form_guarantee(self) -> Guarantee:
        return self.aggregator.closed_form_guarantee()

    @property
    def output(self) -> OutputSpec:
        return self.aggregator.output

    def block_values(self, data: ArrayLike, rng: np.random.Generator) -> FloatArray:
        x = as_float_array("data", data)
        size = x.shape[0] // self.blocks
        if size < 1:
            raise ValueError(f"blocks = {self.blocks} exceeds the {x.shape[0]} rows")
        perm = rng.permutation(x.shape[0])[: size * self.blocks].reshape(self.blocks, size)
        return np.array([float(self.f(x[idx])) for idx in perm])

    def _sample(self, data: ArrayLike, rng: np.random.Generator, m: int) -> NDArray[Any]:
        outs = [self.aggregator.sample(self.block_values(data, rng), rng) for _ in range(m)]
        arr = np.empty((m, *self.output.shape), dtype=object if self.output.kind == "mixed" else np.float64)
        for i, o in enumerate(outs):
            arr[i] = o
        return arr


def trimmed_mean(values: ArrayLike, trim: int) -> float:
    """Mean of the values without the ``trim`` smallest and ``trim`` largest."""
    v = np.sort(as_float_array("values", values).reshape(-1))
    return float(v[trim:v.size - trim].mean())


def trimmed_mean_aggregator(lower: float, upper: float, blocks: int, trim: float,
                            target: Guarantee) -> Mechanism:
    """The alpha-trimmed mean of the block values as a subsample-and-aggregate aggregator
    [@dwork2014algorithmic, Sec. 7.1]: values clipped to [lower, upper], k = floor(trim * blocks) dropped
    at each end, lattice ``Laplace`` calibrated to ``target``. Replacing one value moves every order
    statistic at most to its neighbour's place, all in one direction, so the sum of the middle
    blocks - 2k moves by at most upper - lower: L1 sensitivity (upper - lower) / (blocks - 2k)."""
    lo = check_real("lower", lower, low=-1e150, high=1e150)
    hi = check_real("upper", upper, low=-1e150, high=1e150)
    if not lo < hi:
        raise ValueError(f"lower must be < upper, got {lower!r}, {upper!r}")
    m = check_count("blocks", blocks, low=1, high=10**8)
    k = math.floor(check_real("trim", trim, low=0.0, high=0.5, high_open=True) * m)
    if m - 2 * k < 1:
        raise ValueError(f"trim = {trim!r} leaves no block of {m}")
    width = sympy.nsimplify(hi) - sympy.nsimplify(lo)
    q = CustomQuery(Domain(lo, hi, m, clip=True), lambda v: trimmed_mean(v, k), l1=width / (m - 2 * k),
                    name=f"{trim}-trimmed mean of {m} block values")
    return Laplace.calibrated(q, target)


def mode_aggregator(eps: float, delta: float, adjacency: str = "replace") -> ADist:
    """The noisy mode of the block values: A_dist with g = mode and its distance to instability
    (``mode_with_distance``; replace-one, as one changed row changes one block value)."""
    return ADist(lambda v: mode_with_distance(v, adjacency)[0], lambda v: mode_with_distance(v, adjacency)[1],
                 eps, delta)


# ------------------------------------------------------------------ order statistics: local sensitivity


def padded_sorted(x: ArrayLike, lower: float, upper: float) -> FloatArray:
    """Sorted data with x_0 = lower and x_{n+1} = upper (NRS's convention: a changed record may go to
    either end of the domain)."""
    v = np.sort(as_float_array("data", x).reshape(-1))
    if v.size == 0:
        raise ValueError("data must not be empty")
    if not lower < upper:
        raise ValueError(f"lower must be < upper, got {lower!r}, {upper!r}")
    v = np.clip(v, lower, upper)
    return np.concatenate([[lower], v, [upper]])


def order_statistic_local_sensitivity(x: ArrayLike, rank: int, k: ArrayLike, lower: float,
                                      upper: float) -> FloatArray:
    """A^(k)(x) = max over datasets y at replace-distance <= k of LS(y) for the rank-th order statistic
    (1-based) of data clipped to [lower, upper]: max_{0 <= t <= k+1} x_(rank+t) - x_(rank+t-k-1), indices
    clipped to 0..n+1 [@nissim2007smooth, Prop. 3.4 (the median; any fixed rank by the same argument)].
    Vectorised over k."""
    xs = padded_sorted(x, lower, upper)
    n = xs.size - 2
    r = check_count("rank", rank, low=1, high=n)
    ks = np.atleast_1d(np.asarray(k, dtype=np.int64))
    if (ks < 0).any():
        raise ValueError("k must be >= 0")
    out = np.empty(ks.size)
    for i, kk in enumerate(ks.tolist()):
        t = np.arange(kk + 2)
        hi = np.clip(r + t, 0, n + 1)
        lo = np.clip(r + t - kk - 1, 0, n + 1)
        out[i] = float(np.max(xs[hi] - xs[lo]))
    return out


def distance_to_sensitivity_above(x: ArrayLike, rank: int, bound: float, lower: float, upper: float) -> int:
    """min{k >= 0 : A^(k)(x) > bound}: the number of records to change (replace-one) to reach a dataset
    whose rank-th order statistic has local sensitivity above ``bound`` (PTR's distance); A^(k) is
    non-decreasing in k, so a binary search. Sensitivity 1: A^(k)(y) <= A^(k+1)(x) for neighbours."""
    xs = padded_sorted(x, lower, upper)
    n = xs.size - 2
    check_count("rank", rank, low=1, high=n)
    if upper - lower <= bound:
        return n + 1  # no dataset exceeds the bound
    lo_k, hi_k = 0, n  # A^(n) = upper - lower > bound
    while lo_k < hi_k:
        mid = (lo_k + hi_k) // 2
        if order_statistic_local_sensitivity(xs[1:-1], rank, mid, lower, upper)[0] > bound:
            hi_k = mid
        else:
            lo_k = mid + 1
    return lo_k

