"""Noise for smooth sensitivity with concentrated-DP guarantees [@bun2019average]: the three laws of
Bun & Steinke with their closed forms, and float-safe lattice releases of the first two.

The framework. Let g be a t-smooth upper bound on the local sensitivity of f (g(x) >= LS_f(x) and
g(x') <= e^t g(x) for neighbours) and Z a noise law. The release f(x) + g(x) Z / s is (1/2 eps^2)-CDP,
i.e. rho-zCDP with rho = eps^2/2 [@bun2016concentrated], when every shift by |a| <= s and dilation by
e^b, |b| <= t, of Z stays within Renyi divergence alpha eps^2/2 of Z. Bun & Steinke bound eps:

    Laplace-log-normal   Z = X e^(sigma Y), X ~ Lap(1), Y ~ N(0, 1):  eps = t/sigma + e^(3 sigma^2/2) s,
    uniform-log-normal   Z = U e^(sigma Y), U ~ U[-1, 1], sigma >= sqrt 2:
                                                   eps = t/sigma + e^(3 sigma^2/2) sqrt(2/pi) s/sigma,
    arsinh-normal        Z = sinh(sigma Y)/sigma:
                             eps = sqrt(t (t/sigma^2 + 1/sigma + 2)) + s (4 + 3 sigma^2)/(6 sigma),

with variances 2 e^(2 sigma^2), e^(2 sigma^2)/3 and (e^(2 sigma^2) - 1)/(2 sigma^2). Each is the sum of a
dilation term (the Gaussian Y shifted by t/sigma) and a shift term (for the log-normal mixtures the
Lipschitz constant of the log-density, largest at 0: E[e^(-2 sigma Y)]/E[e^(-sigma Y)] = e^(3 sigma^2/2)
for LLN), combined by the triangle-like inequality of zCDP (sqrt rho adds). ``LaplaceLogNormal``,
``UniformLogNormal`` and ``ArsinhNormal`` state these forms (rounded up) for planning; they are laws,
not releases: a continuous draw added to a double is not float-safe [@mironov2012significance]. The
Laplace-log-normal form is re-derived below (the lattice proof reduces to it); the other two are
checked numerically (Renyi divergences integrated on a grid at a few (s, t, alpha), in the tests).
The uniform-log-normal release below does not use the paper's form: its shift term is computed for
the lattice law itself. The arsinh-normal law is not a scale mixture; its release (``smooth_arsinh``)
rounds the continuous law exactly and shares ``LatticeSmoothNoise`` (the scale index, the calibration,
the total).

The lattice Laplace-log-normal release (``LatticeLLN``). Everything random is an exact integer draw
and the output lies on a public lattice gamma Z (gamma = 2^e, gamma <= tau 2^-12 for a public
resolution tau). With h = ln 2 / m (m = ``log_grid``):

    mu(x) = round(f(x) / gamma),   Q(x) = ceil(m log2((g(x) + tau) / gamma))   (exact, in rationals),
    K ~ N_Z(0, v),  L = Q(x) + K,  N ~ DLap(c_L),  c_L >= 2^(L/m) / s  (a public rational, relative
    excess <= 2^-38),  output gamma (mu(x) + N).

Q is the scale exponent of g + tau rounded up on the grid 2^(1/m), so 2^(Q/m) >= (g + tau)/gamma and,
g being t-smooth with t <= k h, Q(x') <= Q(x) + k. K is Bun & Steinke's sigma Y on the grid h Z
(sigma = h sqrt v). The proof follows theirs with the intermediate law R = (scale index Q(x), centre
mu(x')):
- R against x' differs only in the law of L (N_Z(Q(x), v) against N_Z(Q(x'), v), the same kernel
  from L to the output), so by data processing D_alpha <= alpha k^2 / (2 v) (integer shifts of a
  discrete Gaussian have the continuous Renyi divergence: the normalisers are equal): eps_dil = k/sqrt v;
- x against R is a shift of |mu(x) - mu(x')| <= (LS(x) + gamma)/gamma <= 2^(Q/m) lattice steps of the
  mixture p(j) = sum_L w_L DLap_{c_L}(j). One step outwards has log p(j)/p(j+1) <= E_nu_j[1/c] (Jensen),
  nu_j proportional to w_L tanh(1/(2 c_L)) e^(-j/c_L); nu_j increases in j in likelihood ratio, so the
  step loss is largest at j = 0. With tanh u <= u, tanh u >= u (1 - u^2/3), c_L in
  [2^(L/m)/s, (1 + eta) 2^(L/m)/s] and the discrete Gaussian's moment bound E[2^(-2K/m)] <=
  e^(2 h^2 v) [@canonne2020discrete], the shift is pure eps_shift-DP with

      eps_shift = s (1 + eta) e^(2 h^2 v) / ((1 - zeta) B),   B = sum_{K >= K0} w_K 2^(-K/m),
      zeta = s^2 2^(-24) 2^(-2 K0/m) / 12,

  independent of Q (2^(Q/m) >= 2^12 is used for zeta); B is summed in mpmath and rounded down with the
  normaliser bounded above by sqrt(2 pi v)(1 + 3 e^(-2 pi^2 v)) (Poisson summation). Pure eps-DP is
  (eps^2/2)-zCDP [@bun2016concentrated].
The release is (1/2 eps^2)-CDP with eps = eps_shift + eps_dil; as h -> 0 and B -> E[e^(-sigma Y)] this
is Bun & Steinke's t/sigma + e^(3 sigma^2/2) s (``paper_epsilon``, always below ``epsilon``).

The lattice uniform-log-normal release (``LatticeULN``). Same mu, Q, K and L = Q + K; then

    beta_L = ceil(2^(L/m)/s) (an integer, computed at 40 digits), n_L = max(1, beta_(L+1) - beta_L),
    M = beta_L + (uniform integer below n_L),   N uniform on {-M, ..., M},   output gamma (mu(x) + N).

The width M interpolates uniformly between consecutive grid scales: with a width on the grid only,
crossing the edge of one scale costs the discrete hazard of K, unbounded in K's tail, and the shift
would not be pure DP. The dilation term is LLN's (the kernel from L to the output does not involve
Q): eps_dil = k/sqrt v. For the shift, write A = 2^(Q/m)/s (so 2^(Q/m) = s A and A r_K = 2^(L/m)/s
with r_K = 2^(K/m)). N is round(V (M + 1/2)), V ~ U(-1, 1), so the output index is a post-processing
of mu + W with W having density p(w) = E[1{|w| < M + 1/2}/(2M + 1)], symmetric and non-increasing
in |w|: a shift by |d| <= D = 2^(Q/m) costs at most sup_(w >= 0) ln p(w)/p(w + D) (max divergence).
Couple M with y uniform on [r_K, r_(K+1)] (M = beta_L + floor(n_L U), y = r_K + (r_(K+1) - r_K) U):
as beta_L - A r_K and beta_(L+1) - A r_(K+1) lie in [0, 1 + 1e-30], M + 1/2 - A y lies in [-1/2, 2],
and M + 1/2 > A r_K. With eta = 3 s 2^-12 >= 3/A (2^(Q/m) >= 2^12), zeta_K = eta/r_K and u = w/A,
each level has 1{w < M + 1/2}/(2M + 1) <= 1{y > u - eta}/(2 A y (1 - zeta_K)) and
1{w + D < M + 1/2}/(2M + 1) >= 1{y > u + s + eta}/(2 A y (1 + zeta_K)) (y - eta >= y (1 - zeta_K)).
So, with G_c(v) = sum_(K0 <= K) c_K E_y[1{y > v}/y] = c_K ln(r_(K+1)/max(r_K, v))/(r_(K+1) - r_K)
summed over the cells above v, the weights w_K = e^(-K^2/(2v)) (the normaliser cancels), and a cut
K0 with zeta_K0 <= 1/2 whose lower levels only enter the numerator, and only for u < r_K0 + eta,
bounded by C_lo >= sum_(K < K0) w_K / r_K (a geometric tail bound, the terms being log-concave):

    p(w)/p(w + D) <= Num(u)/Den(u),   Num = T_hi + C_lo 1{u < r_K0 + eta} + G_(w/(1 - zeta))(u - eta),
                                      Den = G_(w/(1 + zeta))(u + s + eta),

G summed to K_hi = 14 sd (T_hi bounds the cells above, in the numerator; the denominator drops
them). Both are non-increasing, so on [u_i, u_(i+1)] the ratio is at most Num(u_i)/Den(u_(i+1)): a
grid (steps 3e-5 s below s, ratio 1 + 3e-5 above) bounds the sup on [0, U1], U1 = r_K1 + eta,
K1 = 10 sd. Above U1 only the cells K >= K1 matter and, with the clean G (c = w, every K >= K1),
ln G(v1)/G(v2) <= (v2 - v1) sup_(v >= r_K1) -G'/G; for v in cell J, -G'(v) = w_J/((r_(J+1) - r_J) v)
and G(v) >= w_(J+1) h/(r_(J+2) - r_(J+1)), so -G'/G <= e^((2J+1)/(2v)) 2^(1/m)/(h r_J), which
decreases in J when 1/v < h: the tail costs ln((1 + zeta_K1)/(1 - zeta_K1)) + (s + 2 eta) times its
value at K1. eps_shift is the larger of the two, rounded up. As m -> infinity the width law tends to
the log-normal e^(sigma Y) and eps_shift to sup_u ln F(u)/F(u + s), F(u) = Phi_bar(ln u/sigma +
sigma), whose s-coefficient e^(3 sigma^2/2) sup_w phi(w + sigma)/(sigma Phi_bar(w)) is Bun &
Steinke's with sqrt(2/pi) replaced by the exact supremum (below sqrt(2/pi) for sigma >= ~0.52).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property
from typing import ClassVar, Generic, TypeVar

import mpmath
import numpy as np
from numpy.typing import NDArray

from accountant import ZCDP
from accountant.core.validation import check_count, check_real

from ..samplers import discrete_gaussian_array, discrete_laplace, floor_log2, uniform_below
from .stability import float_up, sum_up

__all__ = [
    "ArsinhNormal",
    "LaplaceLogNormal",
    "LatticeLLN",
    "LatticeScaleMixture",
    "LatticeSmoothNoise",
    "LatticeULN",
    "UniformLogNormal",
    "cdp_rho",
    "uln_epsilon",
]

#: Default resolution m of the scale grid 2^(1/m) of ``LatticeLLN``.
LOG_GRID = 64
#: 2^(Q/m) >= 2^LATTICE_MARGIN_BITS: the release lattice is this many bits finer than tau.
LATTICE_MARGIN_BITS = 12
#: Relative excess of the Laplace scales c_L over 2^(L/m)/s.
SCALE_EXCESS = Fraction(1, 2**38)
_MP_DPS = 40
#: The lattice noise is clipped to +-NOISE_CLIP (post-processing; see ``LatticeScaleMixture.noise``).
NOISE_CLIP = 2**62
#: ``LatticeULN``'s shift bound: the grid covers u <= r_K1 at K1 = ULN_TAIL_SDS sd of K ...
ULN_TAIL_SDS = 10.0
#: ... sums levels within ULN_RANGE_SDS sd ...
ULN_RANGE_SDS = 14.0
#: ... and steps by ULN_GRID_STEP (relative).
ULN_GRID_STEP = 3e-5
P = TypeVar("P")
R = TypeVar("R", bound="LatticeSmoothNoise")


def _mp(x: float | Fraction) -> mpmath.mpf:
    if isinstance(x, Fraction):
        return mpmath.mpf(x.numerator) / x.denominator
    return mpmath.mpf(x)


def cdp_rho(eps: float) -> ZCDP:
    """(1/2 eps^2)-CDP as ``ZCDP(rho)``, rho = eps^2/2 rounded up."""
    e = check_real("eps", eps, low=0.0, high=1e6, low_open=True)
    return ZCDP(float_up(Fraction(e) ** 2 / 2))


def _check_st(s: float, t: float) -> tuple[float, float]:
    return (check_real("s", s, low=0.0, high=1e6, low_open=True),
            check_real("t", t, low=0.0, high=1e6))


@dataclass(frozen=True)
class LaplaceLogNormal:
    """The law X e^(sigma Y), X ~ Lap(1), Y ~ N(0, 1) [@bun2019average]: (1/2 eps^2)-CDP with smooth
    sensitivity at eps = t/sigma + e^(3 sigma^2/2) s (``epsilon``, rounded up); variance 2 e^(2 sigma^2)."""

    sigma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_real("sigma", self.sigma, low=0.0, high=10.0, low_open=True))

    def epsilon(self, s: float, t: float) -> float:
        s, t = _check_st(s, t)
        with mpmath.workdps(_MP_DPS):
            sg = _mp(self.sigma)
            return float_up(_mp(t) / sg + mpmath.exp(1.5 * sg**2) * _mp(s))

    @property
    def variance(self) -> float:
        return float_up(2 * mpmath.exp(2 * _mp(self.sigma) ** 2))

    @staticmethod
    def optimal_sigma(eps: float, t: float) -> float:
        """For a fixed t, the sigma minimising the variance 2 e^(5 sigma^2)/(eps - t/sigma)^2 of
        g Z/s at the largest s: the root in (t/eps, inf) of 5 (eps/t) sigma^3 - 5 sigma^2 - 1."""
        eps = check_real("eps", eps, low=0.0, high=1e6, low_open=True)
        t = check_real("t", t, low=0.0, high=eps, low_open=True, high_open=True)
        lo, hi = t / eps, max(2 * t / eps, 1.0)
        while 5 * eps / t * hi**3 - 5 * hi**2 - 1 < 0:
            hi *= 2
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if 5 * eps / t * mid**3 - 5 * mid**2 - 1 < 0:
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)


def uln_epsilon(sigma: float, s: float, t: float) -> float:
    """Bun & Steinke's uniform-log-normal form t/sigma + e^(3 sigma^2/2) sqrt(2/pi) s/sigma, rounded up."""
    s, t = _check_st(s, t)
    with mpmath.workdps(_MP_DPS):
        sg = _mp(check_real("sigma", sigma, low=0.0, high=10.0, low_open=True))
        return float_up(_mp(t) / sg + mpmath.exp(1.5 * sg**2) * mpmath.sqrt(2 / mpmath.pi) * _mp(s) / sg)


@dataclass(frozen=True)
class UniformLogNormal:
    """The law U e^(sigma Y), U ~ U[-1, 1], Y ~ N(0, 1), sigma >= sqrt 2 [@bun2019average]:
    (1/2 eps^2)-CDP at eps = t/sigma + e^(3 sigma^2/2) sqrt(2/pi) s / sigma; variance e^(2 sigma^2)/3."""

    sigma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_real("sigma", self.sigma, low=math.sqrt(2.0), high=10.0))

    def epsilon(self, s: float, t: float) -> float:
        s, t = _check_st(s, t)
        return uln_epsilon(self.sigma, s, t)

    @property
    def variance(self) -> float:
        return float_up(mpmath.exp(2 * _mp(self.sigma) ** 2) / 3)


@dataclass(frozen=True)
class ArsinhNormal:
    """The law sinh(sigma Y)/sigma, Y ~ N(0, 1) [@bun2019average]: (1/2 eps^2)-CDP at
    eps = sqrt(t (t/sigma^2 + 1/sigma + 2)) + s (4 + 3 sigma^2)/(6 sigma); variance
    (e^(2 sigma^2) - 1)/(2 sigma^2). The default sigma = 2/sqrt 3 minimises the shift coefficient."""

    sigma: float = 2.0 / math.sqrt(3.0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_real("sigma", self.sigma, low=0.0, high=10.0, low_open=True))

    def epsilon(self, s: float, t: float) -> float:
        s, t = _check_st(s, t)
        with mpmath.workdps(_MP_DPS):
            sg, tt = _mp(self.sigma), _mp(t)
            return float_up(mpmath.sqrt(tt * (tt / sg**2 + 1 / sg + 2)) + _mp(s) * (4 + 3 * sg**2) / (6 * sg))

    @property
    def variance(self) -> float:
        sg = _mp(self.sigma)
        return float_up(mpmath.expm1(2 * sg**2) / (2 * sg**2))


@dataclass(frozen=True)
class LatticeSmoothNoise(ABC):
    """The part every lattice release for smooth sensitivity shares: the targets sigma (the law's
    spread), t (smoothing) and s (shift parameter), the scale grid 2^(1/m), the scale index Q (the
    smooth sensitivity plus tau, rounded up on the grid: a t-smooth g with t <= k h moves it by at
    most k), the calibration ``for_epsilon`` and the total (1/2 eps^2)-CDP guarantee with
    eps = ``dilation_epsilon`` + ``shift_epsilon`` (the two terms combined by the triangle-like
    inequality of zCDP, sqrt rho adds). A law adds its two terms and its draw of the lattice noise.

    The grid fixes k = max(1, round(t m / ln 2)): the smooth sensitivity must be computed at
    ``smoothing`` = k ln2 / m (the largest t it may have)."""

    sigma: float
    t: float
    s: float
    log_grid: int = LOG_GRID

    #: The sigma ``for_epsilon`` uses when none is given.
    DEFAULT_SIGMA: ClassVar[float] = 1.0 / math.sqrt(5.0)
    #: The least sigma the law accepts.
    MIN_SIGMA: ClassVar[float] = 0.01

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_real("sigma", self.sigma, low=self.MIN_SIGMA, high=3.0))
        object.__setattr__(self, "t", check_real("t", self.t, low=0.0, high=10.0, low_open=True))
        object.__setattr__(self, "s", check_real("s", self.s, low=0.0, high=10.0, low_open=True))
        object.__setattr__(self, "log_grid", check_count("log_grid", self.log_grid, low=1, high=4096))

    @classmethod
    def smoothing_target(cls, eps: float, sigma: float, log_grid: int) -> float:
        """The t ``for_epsilon`` gives a total eps: sigma eps / 2 (half the budget to a dilation term
        t/sigma)."""
        return sigma * eps / 2

    @classmethod
    def for_epsilon(cls: type[R], eps: float, sigma: float | None = None, log_grid: int = LOG_GRID) -> R:
        """Targets for a total (1/2 eps^2)-CDP: t = ``smoothing_target`` (about half the budget to the
        dilation) and the largest s whose certified total is <= eps, to 1e-5 relative in the shift
        term: first s = room / (shift coefficient at s = eps), which is the answer when the
        coefficient is non-decreasing in s (the Laplace law); otherwise a bracketed secant search in
        log-log (the uniform law's coefficient falls as s grows). For a smooth sensitivity ~ 1/t
        (order statistics of smooth laws) the noise sd is ~ sd(Z) / (t s)."""
        eps = check_real("eps", eps, low=0.0, high=5.0, low_open=True)
        sg = cls.DEFAULT_SIGMA if sigma is None else sigma
        t = cls.smoothing_target(eps, sg, log_grid)
        probe = cls(sg, t, eps, log_grid)
        room = eps - probe.dilation_epsilon
        if not room > 0:
            raise ValueError(f"eps = {eps!r} leaves no room for the shift after the dilation term")
        lo = hi = room / probe.shift_coefficient * (1 - 2.0**-20)
        best = cls(sg, t, lo, log_grid)
        if best.epsilon <= eps:
            return best
        top = best.shift_epsilon
        while not (best := cls(sg, t, lo, log_grid)).epsilon <= eps:
            hi, lo, top = lo, lo / 2, best.shift_epsilon
        for _ in range(60):
            if best.shift_epsilon >= room * (1 - 1e-5):
                break
            slope = math.log(top / best.shift_epsilon) / math.log(hi / lo)
            guess = lo * (room * (1 - 5e-6) / best.shift_epsilon) ** (1 / max(slope, 1e-3))
            mid = guess if lo < guess < hi and (hi - lo) > lo * 1e-6 else math.sqrt(lo * hi)
            trial = cls(sg, t, mid, log_grid)
            if trial.epsilon <= eps:
                lo, best = mid, trial
            else:
                hi, top = mid, trial.shift_epsilon
        return best

    @property
    def h(self) -> float:
        return math.log(2.0) / self.log_grid

    @cached_property
    def k(self) -> int:
        return max(1, round(self.t * self.log_grid / math.log(2.0)))

    @property
    def smoothing(self) -> float:
        """k ln2 / m rounded down: the smooth sensitivity's t must not exceed it."""
        return math.nextafter(self.k * math.log(2.0) / self.log_grid, 0.0)

    @property
    @abstractmethod
    def dilation_epsilon(self) -> float:
        """The law's eps_dil for a change of the scale index by at most k (rounded up)."""

    @abstractmethod
    def _shift_bound(self, s: float) -> float:
        """The law's eps_shift at this s (rounded up)."""

    @cached_property
    def shift_epsilon(self) -> float:
        return self._shift_bound(self.s)

    @property
    def shift_coefficient(self) -> float:
        """shift_epsilon / s (at this s)."""
        return self.shift_epsilon / self.s

    @cached_property
    def epsilon(self) -> float:
        return sum_up(self.dilation_epsilon, self.shift_epsilon)

    def guarantee(self) -> ZCDP:
        return cdp_rho(self.epsilon)

    @property
    @abstractmethod
    def paper_epsilon(self) -> float:
        """Bun & Steinke's closed form at the grid's t = k h (and the law's sigma on the grid)."""

    def scale_index(self, g_plus_tau: Fraction, exponent: int) -> int:
        """Q = ceil(m log2((g + tau)/2^exponent)), exactly: the least Q with ((g + tau)/gamma)^m <= 2^Q."""
        f = Fraction(g_plus_tau) / Fraction(2) ** exponent
        if f < 2**LATTICE_MARGIN_BITS:
            raise ValueError("g + tau must be at least 2^12 lattice steps")
        y = f ** self.log_grid
        q = floor_log2(y)
        return q if y == Fraction(2) ** q else q + 1

    def level_scale(self, level: int) -> mpmath.mpf:
        """2^(L/m) / s in mpmath (relative error ~1e-40)."""
        return mpmath.mpf(2) ** (mpmath.mpf(level) / self.log_grid) / _mp(self.s)

    @abstractmethod
    def noise(self, rng: np.random.Generator, level: int, size: int) -> NDArray[np.int64]:
        """size draws of the lattice noise N given the scale index Q = ``level``, each clipped to
        +-2^62 (post-processing: the release adds a centre of magnitude <= 2^53 and clips the sum to
        +-2^53, so the sum's clip is unchanged)."""


@dataclass(frozen=True)
class LatticeScaleMixture(LatticeSmoothNoise, Generic[P]):
    """A lattice scale mixture: the discrete Gaussian K on the grid (the log-scale is L = Q + K) and
    the dilation term k/sqrt(v) (module docstring). A law adds its per-level draw and its shift bound.

    The grid fixes v = max(1, round((sigma m / ln 2)^2)) (sigma on the grid: ``sigma_grid``)."""

    @cached_property
    def v(self) -> int:
        """The variance of K (an integer)."""
        return max(1, round((self.sigma * self.log_grid / math.log(2.0)) ** 2))

    @property
    def sigma_grid(self) -> float:
        """h sqrt(v): the sigma the grid realises."""
        return self.h * math.sqrt(self.v)

    @cached_property
    def dilation_epsilon(self) -> float:
        with mpmath.workdps(_MP_DPS):
            return float_up(mpmath.mpf(self.k) / mpmath.sqrt(self.v))

    @abstractmethod
    def level_parameters(self, level: int) -> P:
        """The public parameters of the draw at level L = Q + K."""

    @abstractmethod
    def draw(self, rng: np.random.Generator, parameters: P) -> int:
        """One exact draw of N at a level with these parameters."""

    def noise(self, rng: np.random.Generator, level: int, size: int) -> NDArray[np.int64]:
        ks = discrete_gaussian_array(rng, Fraction(self.v), (size,))
        cache: dict[int, P] = {}
        out = np.empty(size, dtype=np.int64)
        for i, kk in enumerate(ks.tolist()):
            lv = level + kk
            if lv not in cache:
                with mpmath.workdps(_MP_DPS):
                    cache[lv] = self.level_parameters(lv)
            out[i] = max(-NOISE_CLIP, min(NOISE_CLIP, self.draw(rng, cache[lv])))
        return out


@dataclass(frozen=True)
class LatticeLLN(LatticeScaleMixture[Fraction]):
    """The float-safe lattice Laplace-log-normal release (module docstring): given L, an exact
    discrete Laplace of scale c_L (``laplace_scale``)."""

    def _shift_bound(self, s: float) -> float:
        """eps_shift of the module docstring for this s, minimised over a few cut-offs K0 (a larger
        |K0| keeps more of B but loosens zeta); B's sum is truncated above too (only lowering it)."""
        m, v = self.log_grid, self.v
        with mpmath.workdps(_MP_DPS):
            h = mpmath.log(2) / m
            sd = mpmath.sqrt(v)
            z_up = mpmath.sqrt(2 * mpmath.pi * v) * (1 + 3 * mpmath.exp(-2 * mpmath.pi**2 * v))
            reach = LATTICE_MARGIN_BITS * m / 2 - 1
            cuts = sorted({-int(mpmath.ceil(min(c0 * sd, reach))) for c0 in (4, 6, 8, 10)}, reverse=True)
            hi_k = int(mpmath.ceil(12 * sd))
            two_m = mpmath.mpf(2) ** (mpmath.mpf(-1) / m)
            b = mpmath.mpf(0)
            top = hi_k + 1
            best = mpmath.inf
            for k0 in cuts:  # B accumulated downwards: each cut adds the terms [k0, previous cut)
                b += mpmath.fsum(mpmath.exp(-mpmath.mpf(kk) ** 2 / (2 * v)) * two_m**kk
                                 for kk in range(k0, top))
                top = k0
                zeta = _mp(s) ** 2 * mpmath.mpf(2) ** (-2 * LATTICE_MARGIN_BITS) * two_m ** (2 * k0) / 12
                if zeta >= 1:
                    continue
                low_b = b / z_up * (1 - mpmath.mpf(10) ** -30)
                bound = _mp(s) * (1 + _mp(SCALE_EXCESS)) * mpmath.exp(2 * h**2 * v) / ((1 - zeta) * low_b)
                best = min(best, bound)
            return float_up(best * (1 + mpmath.mpf(10) ** -30))

    @property
    def paper_epsilon(self) -> float:
        """Bun & Steinke's t/sigma + e^(3 sigma^2/2) s at the grid's t = k h and sigma = h sqrt v."""
        return LaplaceLogNormal(self.sigma_grid).epsilon(self.s, self.k * self.h)

    def laplace_scale(self, level: int) -> Fraction:
        """c_L: a rational in [2^(L/m)/s, (1 + 2^-38) 2^(L/m)/s]."""
        with mpmath.workdps(_MP_DPS):
            val = self.level_scale(level)
            p = 64 - int(mpmath.floor(mpmath.log(val, 2)))
            num = int(mpmath.ceil(val * mpmath.mpf(2) ** p)) + 1
        return Fraction(num, 2**p) if p >= 0 else Fraction(num * 2 ** (-p))

    def level_parameters(self, level: int) -> Fraction:
        return self.laplace_scale(level)

    def draw(self, rng: np.random.Generator, parameters: Fraction) -> int:
        return discrete_laplace(rng, parameters)


@dataclass(frozen=True)
class LatticeULN(LatticeScaleMixture[tuple[int, int]]):
    """The float-safe lattice uniform-log-normal release (module docstring): given L, a width M
    uniform on the integers [beta_L, beta_(L+1)) (``width_range``), then N uniform on {-M, ..., M}.
    Its shift term is computed for the lattice law directly (no sigma >= sqrt 2 needed); the default
    sigma 0.7 about minimises sd(Z) x shift coefficient / sigma (the noise of a median)."""

    DEFAULT_SIGMA: ClassVar[float] = 0.7
    MIN_SIGMA: ClassVar[float] = 0.3

    @property
    def paper_epsilon(self) -> float:
        """Bun & Steinke's t/sigma + e^(3 sigma^2/2) sqrt(2/pi) s/sigma at the grid's t = k h and
        sigma = h sqrt v (their theorem states it for sigma >= sqrt 2; below, it is their formula)."""
        return uln_epsilon(self.sigma_grid, self.s, self.k * self.h)

    def width_range(self, level: int) -> tuple[int, int]:
        """(beta_L, count): beta_L = ceil(2^(L/m)/s) and count = max(1, beta_(L+1) - beta_L)."""
        with mpmath.workdps(_MP_DPS):
            lo = int(mpmath.ceil(self.level_scale(level)))
            hi = int(mpmath.ceil(self.level_scale(level + 1)))
        return lo, max(1, hi - lo)

    def level_parameters(self, level: int) -> tuple[int, int]:
        return self.width_range(level)

    def draw(self, rng: np.random.Generator, parameters: tuple[int, int]) -> int:
        beta, count = parameters
        width = beta + uniform_below(rng, count)
        return uniform_below(rng, 2 * width + 1) - width

    def _shift_bound(self, s: float) -> float:
        """eps_shift = ln sup_u Num(u)/Den(u) of the module docstring: on [0, U1] the sup of
        Num(u_i)/Den(u_(i+1)) over a grid (both are non-increasing), above U1 the tail bound;
        float64 sums of positive terms (relative error < 1e-12) covered by a 1e-9 relative margin."""
        m, v = self.log_grid, self.v
        h = math.log(2.0) / m
        if not 1.0 / v < h:
            raise ValueError(f"sigma = {self.sigma!r} is too small for the grid 2^(1/{m})")
        sd = math.sqrt(v)
        eta = 3.0 * s * 2.0**-LATTICE_MARGIN_BITS
        k1 = math.ceil(ULN_TAIL_SDS * sd)
        k_hi = math.ceil(ULN_RANGE_SDS * sd)
        k0 = max(-math.ceil(ULN_RANGE_SDS * sd), math.ceil(m * math.log2(2.0 * eta)) + 1)
        if not (2 * k0 - 3) / (2 * v) + h < 0:
            raise ValueError(f"s = {s!r} is too large for the lattice margin")  # pragma: no cover
        ks = np.arange(k0, k_hi + 2, dtype=np.float64)
        r = np.exp2(ks / m)  # r_K for K0 .. K_hi + 1
        w = np.exp(-ks[:-1] ** 2 / (2 * v))
        cell = r[:-1] * math.expm1(h)
        zeta = eta / r[:-1]
        full = h / cell

        def g_of(c: NDArray[np.float64], at: NDArray[np.float64]) -> NDArray[np.float64]:
            """G(v) = sum_K c_K E[1{y > v}/y], y uniform on [r_K, r_(K+1)], K0 <= K <= K_hi."""
            suffix = np.concatenate([np.cumsum((c * full)[::-1])[::-1], [0.0]])
            j = np.searchsorted(r, at, side="right") - 1
            inside = (j >= 0) & (j < len(c))
            jj = np.clip(j, 0, len(c) - 1)
            part = np.where(inside, c[jj] / cell[jj] * np.log(r[jj + 1] / np.maximum(at, r[jj])), 0.0)
            return np.where(j < 0, suffix[0], suffix[np.clip(j + 1, 0, len(c))] + part)

        def term(kk: float) -> float:
            return math.exp(-kk * kk / (2 * v) - kk * h)

        rho_lo = math.exp((2 * k0 - 3) / (2 * v) + h)
        c_lo = term(k0 - 1) / (1 - rho_lo)
        rho_hi = math.exp(-(2 * k_hi + 1) / (2 * v) - h)
        t_hi = term(k_hi + 1) / (1 - rho_hi) * h / math.expm1(h) / (1 - eta / float(r[-1]))
        u1 = 2.0 ** (k1 / m) + eta
        step = ULN_GRID_STEP
        u = np.concatenate([np.arange(0.0, s, s * step), s * np.exp(np.arange(0.0, math.log(u1 / s), step)),
                            [u1]])
        num = t_hi + c_lo * (u < 2.0 ** (k0 / m) + eta) + g_of(w / (1 - zeta), u - eta)
        den = g_of(w / (1 + zeta), u + s + eta)
        grid_log = math.log(float(np.max(num[:-1] / den[1:])))
        r1 = 2.0 ** (k1 / m)
        z1 = eta / r1
        lip = math.exp((2 * k1 + 1) / (2 * v)) * 2.0 ** (1 / m) / (h * r1)
        tail_log = math.log1p(2 * z1 / (1 - z1)) + (s + 2 * eta) * lip
        return math.nextafter(max(grid_log + 1e-9, tail_log * (1 + 1e-9)), math.inf)
