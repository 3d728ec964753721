"""Privacy by compression: release Phi X for a random Gaussian Phi [@zhou2009differential].

X is n x p (records in rows, columns normalised to squared norm n, eq. (4)); Phi is m x n with
N(0, 1/n) entries, so the m rows of Phi X are i.i.d. N(0, Sigma), Sigma = X'X/n (eq. (11)).
Procedure 4.1 redraws Phi until the released covariance is near a public reference (eq. (12));
Procedure 4.2 renormalises the truncated law.

What the paper proves is asymptotic: Theorem 4.6 bounds the privacy parameter up to o(1) terms
(``theorem_4_6``, an ``AsymptoticParameter``, never a guarantee). What dpcert adds, for two given
databases: the untruncated release's privacy loss is a sum over the generalised eigen-directions
of (Sigma_1, Sigma_2) of independent chi-square terms, composed by the PLD with certified error
(``compression_pld``); and the truncated release's log density ratio is linear in X'X/m, so its
supremum over the truncation box is explicit (``truncated_loss_bound``).

The release declares no guarantee (there is none for all neighbouring databases), and its float
Gaussian Phi is therefore not claimed to carry one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import linalg

from accountant import PLD, Guarantee, PureDP
from accountant.core.types import MACHINE_EPSILON, FloatArray
from accountant.core.validation import as_float_array, check_count, check_real
from accountant.pld.models.variance import GaussianVariancePair

from .base import check_rng

__all__ = [
    "C1",
    "C2",
    "C_TRUNCATION",
    "AsymptoticParameter",
    "CompressedRelease",
    "TruncatedLoss",
    "compression_pld",
    "covariance",
    "normalise_columns",
    "subspace_error",
    "theorem_4_6",
    "truncated_loss_bound",
    "truncation_radius",
    "zwald_blanchard_bound",
]

#: Constants of the concentration inequality [@zhou2009differential, Lemma B.1].
C1 = 4.0 * math.e / math.sqrt(6.0 * math.pi)
C2 = math.sqrt(8.0) * math.e
#: C of eq. (12): sqrt(2 (C1 + C2)) (tau of the proof of Lemma 4.4).
C_TRUNCATION = math.sqrt(2.0 * (C1 + C2))


def _matrix(name: str, x: ArrayLike) -> FloatArray:
    a = as_float_array(name, x)
    if a.ndim != 2 or 0 in a.shape or not np.isfinite(a).all():
        raise ValueError(f"{name} must be a finite non-empty 2-d array, got shape {a.shape}")
    return a


def normalise_columns(x: ArrayLike) -> FloatArray:
    """Scale each column to squared norm n [@zhou2009differential, eq. (4)]."""
    a = _matrix("x", x)
    norms = np.linalg.norm(a, axis=0)
    if (norms == 0).any():
        raise ValueError(f"x has an all-zero column (index {int(np.flatnonzero(norms == 0)[0])})")
    return np.asarray(a * (math.sqrt(a.shape[0]) / norms), dtype=np.float64)


def covariance(x: ArrayLike) -> FloatArray:
    """Sigma = X'X/n."""
    a = _matrix("x", x)
    return np.asarray(a.T @ a / a.shape[0], dtype=np.float64)


def truncation_radius(n: int, p: int, m: int, delta_max: float) -> float:
    """C sqrt(ln(2np)/m) + Delta_max, the half-width of the box of eq. (12)."""
    return C_TRUNCATION * math.sqrt(math.log(2 * n * p) / m) + delta_max


@dataclass(frozen=True)
class CompressedRelease:
    """X -> Phi X with Phi_ij ~ N(0, 1/n), m rows. With a ``reference`` covariance (public, p x p:
    the Sigma_1 of Procedure 4.1) outputs whose X'X/m leaves the box of eq. (12) around it are
    discarded and Phi redrawn (at most ``max_draws`` times, then ``RuntimeError``)."""

    m: int
    reference: FloatArray | None = None
    delta_max: float = 0.0
    max_draws: int = 1000

    def __post_init__(self) -> None:
        object.__setattr__(self, "m", check_count("m", self.m, high=10**7))
        object.__setattr__(self, "delta_max", check_real("delta_max", self.delta_max, low=0.0,
                                                         high=math.inf, high_open=True))
        object.__setattr__(self, "max_draws", check_count("max_draws", self.max_draws))
        if self.reference is not None:
            r = _matrix("reference", self.reference)
            if r.shape[0] != r.shape[1] or not np.allclose(r, r.T):
                raise ValueError(f"reference must be a symmetric p x p matrix, got shape {r.shape}")
            object.__setattr__(self, "reference", r)

    def radius(self, n: int, p: int) -> float:
        return truncation_radius(n, p, self.m, self.delta_max)

    def sample(self, x: ArrayLike, rng: np.random.Generator) -> FloatArray:
        """One release Phi X (m x p)."""
        a = _matrix("x", x)
        rng = check_rng(rng)
        n, p = a.shape
        ref = self.reference
        if ref is not None and ref.shape != (p, p):
            raise ValueError(f"reference must be {p} x {p} for this data, got {ref.shape}")
        for _ in range(self.max_draws):
            out = np.asarray(rng.standard_normal((self.m, n)) / math.sqrt(n) @ a, dtype=np.float64)
            if ref is None or np.abs(out.T @ out / self.m - ref).max() <= self.radius(n, p):
                return out
        raise RuntimeError(f"no draw of Phi met eq. (12) in {self.max_draws} draws; Lemma 4.4 needs "
                           f"m >= 2 (C1 + C2) ln(2np) = {2 * (C1 + C2) * math.log(2 * n * p):.1f} "
                           "and a reference near the data's covariance")


def compression_pld(x1: ArrayLike, x2: ArrayLike, m: int, tol: float = 3e-5) -> Guarantee:
    """The privacy loss of the untruncated release of m rows for databases x1 and x2 (each n x p):
    in the basis where Sigma_2 = I and Sigma_1 = diag(lam), lam the generalised eigenvalues, each
    direction is ``GaussianVariancePair(lam_k, m)`` and the directions are independent, so the PLD of
    their composition (both orders) bounds delta(eps) with certified discretisation error.

    Floating point: each computed lam_k is moved away from 1 by ``eta``, a bound on its error (twice
    the whitened residual ||Sigma_1 V - Sigma_2 V diag(lam)||_F / sqrt(lam_min(Sigma_2)), Weyl's
    theorem, plus the rounding of X'X/n); a pair with its ratio further from 1 dominates (add
    independent N(0, c) noise and rescale). Eigenvalues within eta of 1 are covered together by two
    pairs with m times their count degrees of freedom, one on each side of 1. Equal covariances (e.g.
    a record's signs all flipped) give ``PureDP(0)``: the release's law is the same."""
    xa, xb = _matrix("x1", x1), _matrix("x2", x2)
    a, b = covariance(xa), covariance(xb)
    if a.shape != b.shape:
        raise ValueError(f"x1 and x2 must have the same number of columns, got {a.shape} and {b.shape}")
    m = check_count("m", m, high=10**7)
    if np.array_equal(a, b):
        return PureDP(0.0)
    try:
        lam, vec = linalg.eigh(a, b)
        low_b = float(np.linalg.eigvalsh(b)[0])
    except linalg.LinAlgError as e:
        raise ValueError("the covariances must be positive definite (p < n, full column rank)") from e
    if (lam <= 0).any() or low_b <= 0:
        raise ValueError("the covariances must be positive definite (p < n, full column rank)")
    u = MACHINE_EPSILON
    resid = float(np.linalg.norm(a @ vec - (b @ vec) * lam))
    n = xa.shape[0]
    cov_err = (n + 2) * u * (float(np.sum(xa**2)) + float(np.sum(xb**2))) / n
    eta = 2 * resid / math.sqrt(low_b) + 2 * cov_err * (1 + float(lam.max())) / low_b \
        + 64 * u * max(1.0, float(lam.max()))
    pairs = []
    near = [abs(float(v) - 1.0) for v in lam if abs(float(v) - 1.0) <= eta]
    for v in lam:
        v = float(v)
        if v > 1 + eta:
            pairs.append((GaussianVariancePair(v + eta, m), 1))
        elif v < 1 - eta:
            if v - eta <= 0:
                raise ValueError("the covariances are too ill-conditioned for a sound eigenvalue bound")
            pairs.append((GaussianVariancePair(v - eta, m), 1))
    if near:
        g = max(near) + eta
        pairs += [(GaussianVariancePair(1 + g, m * len(near)), 1),
                  (GaussianVariancePair(1 - g, m * len(near)), 1)]
    return PLD(tuple(pairs), tol)


@dataclass(frozen=True)
class TruncatedLoss:
    """sup over outputs kept by Procedure 4.1 of |log f_1/f_2| for two databases: ``box`` from the
    linear form of the log ratio over the box of eq. (12) (positive semi-definiteness relaxed, so an
    upper bound), ``renormalisation`` = -log(1 - 1/n^2) from Procedure 4.2 and Lemma 4.4 (inf when
    the lemma's condition m >= 2 (C1 + C2) ln 2np fails)."""

    box: float
    renormalisation: float

    @property
    def value(self) -> float:
        return self.box + self.renormalisation


def truncated_loss_bound(x1: ArrayLike, x2: ArrayLike, m: int, reference: ArrayLike,
                         delta_max: float) -> TruncatedLoss:
    """log f_1(X)/f_2(X) = (m/2)(log|Sigma_2| - log|Sigma_1|) + (m/2) tr(Gamma S) with S = X'X/m
    and Gamma = Sigma_2^{-1} - Sigma_1^{-1} [@zhou2009differential, proof of Thm 4.6]; over
    |S - reference|_max <= r its extremes are at tr(Gamma reference) -+ r ||vec Gamma||_1.
    Rounded up by a relative 1e-9 for the float linear algebra."""
    a, b = covariance(x1), covariance(x2)
    ref = _matrix("reference", reference)
    n, p = _matrix("x1", x1).shape
    m = check_count("m", m, high=10**7)
    r = truncation_radius(n, p, m, check_real("delta_max", delta_max, low=0.0, high=math.inf,
                                              high_open=True))
    s1, ld1 = np.linalg.slogdet(a)
    s2, ld2 = np.linalg.slogdet(b)
    if s1 <= 0 or s2 <= 0:
        raise ValueError("the covariances must be positive definite (p < n, full column rank)")
    gamma = np.linalg.inv(b) - np.linalg.inv(a)
    centre = ld2 - ld1 + float(np.sum(gamma * ref))
    spread = r * float(np.abs(gamma).sum())
    box = float(0.5 * m * max(abs(centre - spread), abs(centre + spread)) * (1 + 1e-9))
    lemma = m >= 2 * (C1 + C2) * math.log(2 * n * p)
    renorm = -math.log1p(-1.0 / n**2) if lemma else math.inf
    return TruncatedLoss(box, renorm)


@dataclass(frozen=True)
class AsymptoticParameter:
    """alpha(m, delta) of [@zhou2009differential, Thm 4.6, eq. (15)] with its o(1) term dropped:
    what the theorem states for large n, not a bound for any finite instance. ``assumptions``
    lists each hypothesis as (name, holds, detail)."""

    value: float
    terms: tuple[float, float, float]
    assumptions: tuple[tuple[str, bool, str], ...]

    def __str__(self) -> str:
        ok = all(h for _, h, _ in self.assumptions)
        return (f"alpha ~ {self.value:.4g} (asymptotic, o(1) dropped; not a bound; assumptions "
                f"{'hold' if ok else 'FAIL'})")


def theorem_4_6(n: int, p: int, m: int, delta_max: float, sigma_1: ArrayLike,
                delta_fro: float | None = None, lambda_min_i: float | None = None) -> AsymptoticParameter:
    """Eq. (15): alpha <= m p ||Delta||_F / (2 lam_i lam_1) * (C sqrt(ln 2np / m) + Delta_max +
    2 ||Delta||_F ||Sigma_1||_2^2 / (p lam_i lam_1) + o(1)), lam = smallest eigenvalues of Sigma_i and
    of the reference Sigma_1. ||Delta||_F defaults to its worst case p Delta_max (Prop. 3.1) and
    lam_i to lam_1 - ||Delta||_2 (Lemma 3.3, ||Delta||_2 <= ||Delta||_F)."""
    n = check_count("n", n, low=2)
    p = check_count("p", p)
    m = check_count("m", m)
    dmax = check_real("delta_max", delta_max, low=0.0, high=math.inf, high_open=True)
    s1 = _matrix("sigma_1", sigma_1)
    eig = np.linalg.eigvalsh(s1)
    lam1, norm1 = float(eig[0]), float(eig[-1])
    dfro = p * dmax if delta_fro is None else check_real("delta_fro", delta_fro, low=0.0)
    lami = lam1 - dfro if lambda_min_i is None else check_real("lambda_min_i", lambda_min_i, low=0.0)
    log2np = math.log(2 * n * p)
    assumptions = (
        ("Lemma 4.4: m >= 2 (C1 + C2) ln 2np", m >= 2 * (C1 + C2) * log2np,
         f"m = {m}, 2 (C1 + C2) ln 2np = {2 * (C1 + C2) * log2np:.1f}"),
        ("Lemma 3.3: ||Delta||_2 < lam_min(Sigma_1) (Sigma_i positive definite)", lami > 0,
         f"lam_min(Sigma_1) = {lam1:.4g}, ||Delta||_F = {dfro:.4g}"),
        ("Assumption 1: ||Gamma||_2 ||Sigma_1||_2 = o(1)", lami > 0 and dfro * norm1 / (lami * lam1) < 0.1,
         f"||Delta||_F ||Sigma_1||_2 / (lam_i lam_1) = "
         f"{dfro * norm1 / (lami * lam1) if lami > 0 else math.inf:.4g} (taken as o(1) when < 0.1)"),
        ("Thm 3.2, eq. (9): Delta_max = o(1/(p^2 sqrt(m ln 2np)))",
         dmax * p * p * math.sqrt(m * log2np) < 0.1,
         f"Delta_max p^2 sqrt(m ln 2np) = {dmax * p * p * math.sqrt(m * log2np):.4g} "
         "(taken as o(1) when < 0.1)"),
    )
    if lami <= 0:
        return AsymptoticParameter(math.inf, (math.inf, math.inf, math.inf), assumptions)
    front = m * p * dfro / (2 * lami * lam1)
    terms = (front * C_TRUNCATION * math.sqrt(log2np / m), front * dmax,
             front * 2 * dfro * norm1**2 / (p * lami * lam1))
    return AsymptoticParameter(sum(terms), terms, assumptions)


def _projector(a: FloatArray, d: int) -> FloatArray:
    _, v = np.linalg.eigh(a)
    top = v[:, -d:]
    return np.asarray(top @ top.T, dtype=np.float64)


def subspace_error(a: ArrayLike, b: ArrayLike, d: int) -> float:
    """||P_D(A) - P_D(B)||_F for the projectors onto the top-D eigenvectors (PCA subspaces)."""
    aa, bb = _matrix("a", a), _matrix("b", b)
    d = check_count("d", d, high=aa.shape[0])
    return float(np.linalg.norm(_projector(aa, d) - _projector(bb, d)))


def zwald_blanchard_bound(a: ArrayLike, b: ArrayLike, d: int) -> float | None:
    """||B||_F / delta_D with delta_D = (lam_D - lam_{D+1})/2 when ||B||_F <= delta_D/2, else None
    [@zwald2005convergence; @zhou2009differential, Prop. 3.4]; A symmetric positive, B = the
    perturbation (here the compressed minus the original covariance)."""
    aa, bb = _matrix("a", a), _matrix("b", b)
    d = check_count("d", d, high=aa.shape[0] - 1)
    lam = np.linalg.eigvalsh(aa)[::-1]
    gap = (lam[d - 1] - lam[d]) / 2
    fro = float(np.linalg.norm(bb))
    return fro / gap if gap > 0 and fro <= gap / 2 else None
