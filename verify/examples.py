"""The example mechanisms users run: the reference and deliberately buggy cases of ``dpcert audit
--list`` (``cases()``, also read by ``dpcert certify`` and ``dpcert plot audit``) and the mechanisms
the documentation and notebooks audit (``textbook_laplace``, ``TextbookLaplace``, ...).

They follow the dpcert mechanism protocol (``sensitivity``, ``guarantee()``,
``sample(data, rng, size)`` stacking outputs on axis 0, optional ``privacy_loss``) and the catalogue's
rules: the reference Laplace, Gaussian and randomized-response mechanisms ARE the catalogue's
(``mechanisms.Laplace``/``Gaussian`` with the lattice sampler, ``mechanisms.RandomizedResponse``),
with their declared guarantees; integer noise is drawn by the exact samplers of
``mechanisms.samplers`` (never numpy's floating-point geometric), so outputs are shifts of an
x-independent law on a common lattice and floating-point rounding cannot create outputs reachable
from one input only [@mironov2012significance]. The buggy sparse-vector variants are those analysed by
[@lyu2017understanding].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property, lru_cache
from typing import Any

import numpy as np
import sympy
from numpy.typing import NDArray

from accountant import GDP, Guarantee, PureDP
from accountant.core.types import FloatArray
from accountant.core.validation import check_real
from mechanisms import CustomQuery, DiscreteLaplace, Domain, Gaussian, Laplace, noisy_histogram
from mechanisms import RandomizedResponse as CatalogueRR
from mechanisms import ReportNoisyMax as CatalogueRNM
from mechanisms.samplers import discrete_laplace_array, from_lattice, to_lattice

GRID_EXPONENT = -20
GRID = 2.0**GRID_EXPONENT

def _size(size: int | None) -> int:
    return 1 if size is None else int(size)


def _shape_out(out: NDArray[Any], size: int | None, data: Any = None) -> Any:
    """Stack on axis 0; a scalar input gives scalar outputs (shape (size,)); size None gives one."""
    if data is not None and np.ndim(data) == 0 and out.ndim == 2:
        out = out[:, 0]
    return out[0] if size is None else out


def _data(x: Any) -> FloatArray:
    return np.atleast_1d(np.asarray(x, dtype=np.float64))


def snap(x: FloatArray) -> FloatArray:
    """Round to the lattice GRID * Z (exactly, as ``mechanisms.samplers.to_lattice``)."""
    return on_lattice(to_lattice(x, GRID_EXPONENT))


def on_lattice(index: NDArray[np.int64]) -> FloatArray:
    """Lattice indices as exact doubles (``mechanisms.samplers.from_lattice``)."""
    return from_lattice(index, GRID_EXPONENT)


def two_sided_geometric(rng: np.random.Generator, scale: float, shape: tuple[int, ...]) -> NDArray[np.int64]:
    """Discrete Laplace on Z, P(k) proportional to exp(-|k| / b), drawn exactly [@canonne2020discrete, Alg. 2]
    with b = ``scale`` rounded up to 2^-20 Z (more noise, never less)."""
    b = check_real("scale", scale, low=0.0, high=math.inf, low_open=True, high_open=True)
    return discrete_laplace_array(rng, Fraction(math.ceil(Fraction(b) * 2**20), 2**20), shape)


#: Scalar inputs of the catalogue-backed examples lie in [-SCALAR_BOUND, SCALAR_BOUND].
SCALAR_BOUND = 2.0**30


def _identity(x: FloatArray) -> FloatArray:
    return x


def _scalar_query(norm: str, sens: float) -> CustomQuery:
    """The identity on one scalar record, declaring sensitivity ``sens`` in ``norm``."""
    l1, l2 = (sens, None) if norm == "l1" else (None, sens)
    return CustomQuery(Domain(-SCALAR_BOUND, SCALAR_BOUND), _identity, 1, l1=l1, l2=l2)


class _Catalogue:
    """An example backed by a catalogue mechanism (``self.mechanism``) on one scalar input."""

    @cached_property
    def mechanism(self) -> Any:
        raise NotImplementedError

    @property
    def sensitivity(self) -> sympy.Expr:
        return self.mechanism.sensitivity

    def guarantee(self) -> Guarantee:
        g: Guarantee = self.mechanism.guarantee()
        return g

    def closed_form_guarantee(self) -> Guarantee:
        g: Guarantee = self.mechanism.closed_form_guarantee()
        return g

    def sample(self, data: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        return self.mechanism.sample(np.atleast_1d(np.asarray(data, dtype=np.float64)), rng, size)

    def privacy_loss(self, y: Any, data: Any, data2: Any) -> FloatArray:
        """log p_data(y) - log p_data2(y) of the law sampled (the catalogue's lattice pmf ratio)."""
        loss: FloatArray = self.mechanism.privacy_loss(y, np.atleast_1d(data), np.atleast_1d(data2))
        return loss


# ------------------------------------------------------------------------ reference mechanisms


@dataclass(frozen=True)
class ScalarLaplace(_Catalogue):
    """Laplace mechanism on one query with sensitivity ``sens`` [@dwork2014algorithmic, Thm 3.6]:
    the catalogue's ``Laplace.calibrated(query, PureDP(eps))`` with the lattice sampler. Its guarantee
    is the exact curve of the lattice pair, ``FDP(FiniteLossTradeoff.discrete_laplace(t, K1))``, which implies
    PureDP(eps) (the continuous ``LaplaceTradeoff(eps)`` is NOT implied by a lattice curve)."""

    eps: float
    sens: float = 1.0

    @cached_property
    def mechanism(self) -> Laplace:
        return Laplace.calibrated(_scalar_query("l1", self.sens), PureDP(self.eps))


@dataclass(frozen=True)
class GaussianMechanism(_Catalogue):
    """Gaussian mechanism for sensitivity ``sens`` calibrated to mu-GDP [@dong2022gaussian, Thm 2.7]:
    the catalogue's ``Gaussian.calibrated(query, GDP(mu))`` with the lattice sampler (exact discrete
    Gaussian noise); guarantee the exact lattice curve, closed-form guarantee a GDP(mu') with mu' <= mu."""

    mu: float
    sens: float = 1.0

    @cached_property
    def mechanism(self) -> Gaussian:
        return Gaussian.calibrated(_scalar_query("l2", self.sens), GDP(self.mu))


@dataclass(frozen=True)
class RandomizedResponse:
    """Binary randomized response: report the bit w.p. e^eps/(1 + e^eps) [@warner1965randomized]; eps-DP.
    The catalogue's exact sampler ``mechanisms.RandomizedResponse(2, eps)`` on one bit."""

    eps: float

    @cached_property
    def mechanism(self) -> CatalogueRR:
        return CatalogueRR(2, self.eps)

    @property
    def sensitivity(self) -> sympy.Expr:
        return sympy.Integer(1)

    def guarantee(self) -> Guarantee:
        return PureDP(self.eps)

    def sample(self, data: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        return self.mechanism.sample(np.int64(data), rng, size)

    def privacy_loss(self, y: Any, data: Any, data2: Any) -> FloatArray:
        return self.mechanism.privacy_loss(np.asarray(y).ravel(), np.int64(data), np.int64(data2))


@dataclass(frozen=True)
class GeometricMechanism(_Catalogue):
    """Integer-valued discrete Laplace (geometric) mechanism
    [@ghosh2009universally]: the catalogue's ``DiscreteLaplace.calibrated(query, PureDP(eps))`` on one
    integer answer with sensitivity ``sens`` (exact two-sided geometric noise); eps-DP."""

    eps: float
    sens: int = 1

    @cached_property
    def mechanism(self) -> DiscreteLaplace:
        return DiscreteLaplace.calibrated(_scalar_query("l1", self.sens), PureDP(self.eps))


@lru_cache(maxsize=32)
def _catalogue_rnm(k: int, eps: float, noise: str) -> CatalogueRNM:
    """The catalogue's report-noisy-max over k counts (monotone, L-infinity sensitivity 1)."""
    counts = CustomQuery(Domain(-SCALAR_BOUND, SCALAR_BOUND), _identity, k, linf=1, monotone=True)
    return CatalogueRNM(counts, eps, noise, monotone=True)  # type: ignore[arg-type]


@dataclass(frozen=True)
class ReportNoisyMax:
    """Report-noisy-max index over counting queries (monotone, sensitivity 1, add/remove one):
    noise Exp(1/eps) [@ding2021permute] (equivalent to permute-and-flip) or Lap(1/eps)
    [@dwork2014algorithmic, Claim 3.9]; both eps-DP, sampled exactly by the catalogue's
    ``mechanisms.ReportNoisyMax``. With ``return_value`` the noisy maximum itself is released too (float
    noise): a bug whose privacy loss grows with the number of queries."""

    eps: float
    noise: str = "exponential"
    return_value: bool = False

    @property
    def sensitivity(self) -> sympy.Expr:
        return sympy.Integer(1)

    def guarantee(self) -> Guarantee:
        return PureDP(self.eps)

    def sample(self, data: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        q = _data(data)
        if not self.return_value:
            return _catalogue_rnm(q.size, self.eps, self.noise).sample(q, rng, size)
        shape = (_size(size), q.size)
        z = rng.exponential(1 / self.eps, shape) if self.noise == "exponential" else \
            rng.laplace(0.0, 1 / self.eps, shape)
        noisy = q + z
        if self.return_value:
            return _shape_out(snap(noisy.max(axis=1)), size)
        return _shape_out(np.argmax(noisy, axis=1).astype(np.int64), size)


@dataclass(frozen=True)
class SparseVector:
    """Sparse vector / AboveThreshold on query answers with sensitivity 1 [@lyu2017understanding].

    ``variant``:
      - "correct": their Alg. 1 — threshold noise Lap(2/eps), query noise Lap(4c/eps), halt after c
        positive answers; eps-DP.
      - "no_query_noise": Alg. 5 (Stoddard et al.) — queries compared without noise; not DP.
      - "unscaled_query_noise": Alg. 4 (Lee & Clifton) — eps1 = eps/4, query noise Lap(4/(3 eps))
        not scaled with c; only ((1 + 6c)/4) eps-DP.
      - "no_halting": Alg. 6 (Chen et al.) — query noise Lap(2/eps), never halts; not DP.
      - "no_threshold_noise": the threshold is used without noise; privacy degrades with the
        number of queries.
      - "noisy_answer": Alg. 3 (Roth's lecture notes) — releases q_i + nu_i for positive answers;
        not eps-DP: its loss grows with the number of negative answers before the released one
        (k eps/4 for an answer at the k-th query, counting from 1: 2.5 at eps 1 over 10 queries).
    Output: one int per query, 1 above, 0 below, -1 not answered (after halting); for
    "noisy_answer" a float per query, the noisy answer when above and NaN otherwise. Answers,
    threshold and noise live on the lattice 2^-20 Z (exact discrete Laplace noise, integer
    comparisons), so the variants differ from the correct one by their algorithm only.
    """

    eps: float
    threshold: float = 0.0
    c: int = 1
    variant: str = "correct"

    @property
    def sensitivity(self) -> sympy.Expr:
        return sympy.Integer(1)

    def guarantee(self) -> Guarantee:
        return PureDP(self.eps)

    def sample(self, data: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        q = _data(data)
        n = _size(size)
        e, c, v = self.eps, self.c, self.variant
        if v == "unscaled_query_noise":
            rho_scale, nu_scale = 4.0 / e, 4.0 / (3.0 * e)
        elif v == "no_halting":
            rho_scale, nu_scale = 2.0 / e, 2.0 / e
        else:
            rho_scale, nu_scale = 2.0 / e, 4.0 * c / e
        # exact discrete Laplace noise on the lattice GRID * Z, compared in integer arithmetic
        qi = to_lattice(q, GRID_EXPONENT)
        thr = int(to_lattice(np.array([self.threshold]), GRID_EXPONENT)[0])
        rho = np.zeros(n, dtype=np.int64) if v == "no_threshold_noise" else \
            two_sided_geometric(rng, rho_scale / GRID, (n,))
        out = np.full((n, q.size), -1, dtype=np.int64)
        answers = np.full((n, q.size), np.nan)
        count = np.zeros(n, dtype=np.int64)
        for i in range(q.size):
            active = np.ones(n, dtype=bool) if v == "no_halting" else count < c
            nu = np.zeros(n, dtype=np.int64) if v == "no_query_noise" else \
                two_sided_geometric(rng, nu_scale / GRID, (n,))
            above = qi[i] + nu >= thr + rho
            out[:, i] = np.where(active, above.astype(np.int64), -1)
            answers[:, i] = np.where(active & above, on_lattice(qi[i] + nu), np.nan)
            count += active & above
        return _shape_out(answers if v == "noisy_answer" else out, size)


@dataclass(frozen=True)
class NoisySum:
    """Sum of records in [-1, 1] plus Laplace noise; ``assumed_sensitivity`` 1 is the bug (the true
    replace-one sensitivity is 2), so the mechanism is only (2/assumed) eps-DP."""

    eps: float
    assumed_sensitivity: float = 2.0

    @property
    def sensitivity(self) -> sympy.Expr:
        return sympy.Integer(2)

    def guarantee(self) -> Guarantee:
        return PureDP(self.eps)

    def sample(self, data: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        s = float(np.clip(_data(data), -1.0, 1.0).sum())
        z = two_sided_geometric(rng, self.assumed_sensitivity / self.eps / GRID, (_size(size),))
        return _shape_out(on_lattice(to_lattice(np.array(s), GRID_EXPONENT) + z), size)


@dataclass(frozen=True)
class NoisyHistogram:
    """Histogram of categorical records plus Laplace noise per bin. Under replace-one adjacency the
    L1 sensitivity is 2; calibrating for add/remove (sensitivity 1) is the bug."""

    eps: float
    bins: int = 4
    calibrated_for: str = "replace"

    @property
    def sensitivity(self) -> sympy.Expr:
        return sympy.Integer(2)

    def guarantee(self) -> Guarantee:
        return PureDP(self.eps)

    def sample(self, data: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        records = np.asarray(data, dtype=np.int64)
        h = np.bincount(records, minlength=self.bins)[: self.bins].astype(np.float64)
        sens = 2.0 if self.calibrated_for == "replace" else 1.0
        z = two_sided_geometric(rng, sens / self.eps / GRID, (_size(size), self.bins))
        return _shape_out(on_lattice(to_lattice(h, GRID_EXPONENT) + z), size)


@dataclass(frozen=True)
class TextbookLaplace:
    """Laplace by inverting the CDF of a double uniform and adding it to the answer in floating
    point: the construction [@mironov2012significance] showed leaks the input through the set of
    reachable doubles."""

    eps: float

    @property
    def sensitivity(self) -> sympy.Expr:
        return sympy.Integer(1)

    def guarantee(self) -> Guarantee:
        return PureDP(self.eps)

    def sample(self, data: Any, rng: np.random.Generator, size: int | None = None) -> Any:
        u = rng.random(_size(size)) - 0.5
        noise = -(1.0 / self.eps) * np.sign(u) * np.log1p(-2.0 * np.abs(u))
        return _shape_out(float(data) + noise, size)


def textbook_laplace(data: float, rng: np.random.Generator, eps: float = 1.0) -> float:
    """A plain-callable textbook Laplace sampler (one draw), as a third party might write it."""
    u = float(rng.random()) - 0.5
    return float(data) - (1.0 / eps) * math.copysign(1.0, u) * math.log(1.0 - 2.0 * abs(u))


# ------------------------------------------------------------------ the cases of --list


@dataclass(frozen=True)
class Case:
    """A benchmark case: the mechanism, pairs to audit, the claim, the true eps on those pairs
    (math.inf when unbounded, None when not known in closed form) and the known verdict."""

    name: str
    mechanism: Any
    pairs: list[tuple[Any, Any]]
    claim: Guarantee
    true_eps: float | None
    buggy: bool
    note: str = ""
    true_mu: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _rnm_laplace_pair_eps(eps: float) -> float:
    # counts (0, 0) vs (1, 0): P(index 1) = 1/2 vs P(L2 - L1 > 1) = (2 + eps) e^-eps / 4
    return math.log(2.0 * math.exp(eps) / (2.0 + eps))


def cases() -> list[Case]:
    """The benchmark suite: correct mechanisms (no violation expected) and buggy ones (flagged)."""
    svt_q = [0.0] * 10
    svt_q2 = [1.0] * 10
    ramp = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    ramp2 = [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    return [
        Case("laplace eps=0.5", ScalarLaplace(0.5), [(0.0, 1.0)], PureDP(0.5), 0.5, False),
        Case("laplace eps=1", ScalarLaplace(1.0), [(0.0, 1.0)], PureDP(1.0), 1.0, False),
        Case("gaussian mu=1", GaussianMechanism(1.0), [(0.0, 1.0)], GDP(1.0), None, False, true_mu=1.0),
        Case("randomized response eps=1", RandomizedResponse(1.0), [(0, 1)], PureDP(1.0), 1.0, False),
        Case("geometric eps=1", GeometricMechanism(1.0), [(0, 1)], PureDP(1.0), 1.0, False),
        Case("report noisy max (exp) eps=1", ReportNoisyMax(1.0), [([0.0, 0.0], [1.0, 0.0])],
             PureDP(1.0), 1.0, False),
        Case("report noisy max (laplace) eps=1", ReportNoisyMax(1.0, "laplace"),
             [([0.0, 0.0], [1.0, 0.0])], PureDP(1.0), _rnm_laplace_pair_eps(1.0), False,
             "pair eps below the claim"),
        Case("sparse vector (Alg. 1) eps=1", SparseVector(1.0), [(svt_q, svt_q2), (ramp, ramp2)],
             PureDP(1.0), None, False),
        Case("histogram (replace) eps=1",
             noisy_histogram(Domain(0, 4, n=3), PureDP(1.0), edges=[0, 1, 2, 3, 4]), [([0, 1, 2], [1, 1, 2])],
             PureDP(1.0), None, False),
        Case("textbook float Laplace eps=1", TextbookLaplace(1.0), [(0.0, 1.0)], PureDP(1.0), math.inf,
             True, "Mironov 2012: reachable doubles differ"),
        Case("svt no query noise (Alg. 5)", SparseVector(1.0, variant="no_query_noise"),
             [(svt_q, svt_q2), (ramp, ramp2)], PureDP(1.0), math.inf, True),
        Case("svt no halting (Alg. 6)", SparseVector(1.0, variant="no_halting"),
             [(svt_q, svt_q2), (ramp, ramp2)], PureDP(1.0), math.inf, True),
        Case("svt unscaled query noise (Alg. 4) c=3", SparseVector(1.0, c=3, variant="unscaled_query_noise"),
             [(svt_q, svt_q2), (ramp, ramp2)], PureDP(1.0), (1 + 6 * 3) / 4, True),
        Case("svt no threshold noise", SparseVector(1.0, variant="no_threshold_noise"),
             [(svt_q[:6], svt_q2[:6]), (svt_q, svt_q2), (ramp, ramp2)], PureDP(1.0), 2.5, True,
             "true eps on the pairs: all 10 answers below, e^(10/4); the 6-query pair's witness "
             "(all below, e^(6/4)) has probability 2^-6 from the first input, found at 10^5 draws"),
        Case("noisy max returning value (5 queries)", ReportNoisyMax(1.0, "laplace", return_value=True),
             [([0.0] * 5, [1.0] * 5)], PureDP(1.0), 5.0, True),
        Case("sum with wrong sensitivity", NoisySum(1.0, assumed_sensitivity=1.0),
             [([-1.0, 0.0, 0.0], [1.0, 0.0, 0.0])], PureDP(1.0), 2.0, True),
        Case("histogram calibrated for add/remove", NoisyHistogram(1.0, calibrated_for="add_remove"),
             [([0, 1, 2], [1, 1, 2])], PureDP(1.0), 2.0, True),
        Case("gaussian wrong sensitivity", GaussianMechanism(1.0, sens=0.5), [(0.0, 1.0)], GDP(1.0),
             None, True, "noise for sensitivity 0.5: true mu = 2", true_mu=2.0),
    ]
