"""Noise for smooth sensitivity with concentrated-DP guarantees [@bun2019average]: the three laws of
Bun & Steinke with their closed forms, and a float-safe lattice release of the first.

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
checked only numerically (Renyi divergences integrated on a grid at a few (s, t, alpha), in the
tests), and no release here uses them.

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cached_property

import mpmath
import numpy as np
from numpy.typing import NDArray

from accountant import ZCDP
from accountant.core.validation import check_count, check_real

from ..samplers import discrete_gaussian_array, discrete_laplace, floor_log2
from .stability import float_up, sum_up

__all__ = [
    "ArsinhNormal",
    "LaplaceLogNormal",
    "LatticeLLN",
    "UniformLogNormal",
    "cdp_rho",
]

#: Default resolution m of the scale grid 2^(1/m) of ``LatticeLLN``.
LOG_GRID = 64
#: 2^(Q/m) >= 2^LATTICE_MARGIN_BITS: the release lattice is this many bits finer than tau.
LATTICE_MARGIN_BITS = 12
#: Relative excess of the Laplace scales c_L over 2^(L/m)/s.
SCALE_EXCESS = Fraction(1, 2**38)
_MP_DPS = 40


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


@dataclass(frozen=True)
class UniformLogNormal:
    """The law U e^(sigma Y), U ~ U[-1, 1], Y ~ N(0, 1), sigma >= sqrt 2 [@bun2019average]:
    (1/2 eps^2)-CDP at eps = t/sigma + e^(3 sigma^2/2) sqrt(2/pi) s / sigma; variance e^(2 sigma^2)/3."""

    sigma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_real("sigma", self.sigma, low=math.sqrt(2.0), high=10.0))

    def epsilon(self, s: float, t: float) -> float:
        s, t = _check_st(s, t)
        with mpmath.workdps(_MP_DPS):
            sg = _mp(self.sigma)
            return float_up(_mp(t) / sg + mpmath.exp(1.5 * sg**2) * mpmath.sqrt(2 / mpmath.pi) * _mp(s) / sg)

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
class LatticeLLN:
    """The float-safe lattice Laplace-log-normal release (module docstring) with targets sigma
    (log-normal spread), t (smoothing) and s (shift parameter) on the scale grid 2^(1/m).

    The grid fixes k = max(1, round(t m / ln 2)) and v = max(1, round((sigma m / ln 2)^2)): the
    smooth sensitivity must be computed at ``smoothing`` = k ln2 / m (the largest t it may have) and
    the guarantee is (1/2 ``epsilon``^2)-CDP, ``epsilon`` = ``dilation_epsilon`` + ``shift_epsilon``."""

    sigma: float
    t: float
    s: float
    log_grid: int = LOG_GRID

    def __post_init__(self) -> None:
        object.__setattr__(self, "sigma", check_real("sigma", self.sigma, low=0.01, high=3.0))
        object.__setattr__(self, "t", check_real("t", self.t, low=0.0, high=10.0, low_open=True))
        object.__setattr__(self, "s", check_real("s", self.s, low=0.0, high=10.0, low_open=True))
        object.__setattr__(self, "log_grid", check_count("log_grid", self.log_grid, low=1, high=4096))

    @classmethod
    def for_epsilon(cls, eps: float, sigma: float = 1.0 / math.sqrt(5.0),
                    log_grid: int = LOG_GRID) -> LatticeLLN:
        """Targets for a total (1/2 eps^2)-CDP: t = sigma eps / 2 (half the budget to the dilation)
        and the largest s whose certified total is <= eps. For a smooth sensitivity ~ 1/t (order
        statistics of smooth laws) the noise variance is ~ e^(2 sigma^2)/(t s)^2 with t s = sigma
        e^(-3 sigma^2/2) eps^2/4, least at sigma = 1/sqrt 5 (the default)."""
        eps = check_real("eps", eps, low=0.0, high=5.0, low_open=True)
        t = sigma * eps / 2
        probe = cls(sigma, t, eps, log_grid)
        room = eps - probe.dilation_epsilon
        if not room > 0:
            raise ValueError(f"eps = {eps!r} leaves no room for the shift after the dilation term")
        s = room / probe.shift_coefficient * (1 - 2.0**-20)
        out = cls(sigma, t, s, log_grid)
        if not out.epsilon <= eps:
            raise AssertionError("calibration overshot")  # pragma: no cover - shift_coefficient monotone in s
        return out

    @property
    def h(self) -> float:
        return math.log(2.0) / self.log_grid

    @cached_property
    def k(self) -> int:
        return max(1, round(self.t * self.log_grid / math.log(2.0)))

    @cached_property
    def v(self) -> int:
        """The variance of K (an integer)."""
        return max(1, round((self.sigma * self.log_grid / math.log(2.0)) ** 2))

    @property
    def smoothing(self) -> float:
        """k ln2 / m rounded down: the smooth sensitivity's t must not exceed it."""
        return math.nextafter(self.k * math.log(2.0) / self.log_grid, 0.0)

    @property
    def sigma_grid(self) -> float:
        """h sqrt(v): the sigma the grid realises."""
        return self.h * math.sqrt(self.v)

    @cached_property
    def dilation_epsilon(self) -> float:
        with mpmath.workdps(_MP_DPS):
            return float_up(mpmath.mpf(self.k) / mpmath.sqrt(self.v))

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

    @cached_property
    def shift_epsilon(self) -> float:
        return self._shift_bound(self.s)

    @property
    def shift_coefficient(self) -> float:
        """shift_epsilon / s (at this s; non-decreasing in s)."""
        return self.shift_epsilon / self.s

    @cached_property
    def epsilon(self) -> float:
        return sum_up(self.dilation_epsilon, self.shift_epsilon)

    def guarantee(self) -> ZCDP:
        return cdp_rho(self.epsilon)

    @property
    def paper_epsilon(self) -> float:
        """Bun & Steinke's t/sigma + e^(3 sigma^2/2) s at the grid's t = k h and sigma = h sqrt v."""
        return LaplaceLogNormal(self.sigma_grid).epsilon(self.s, self.k * self.h)

    def scale_index(self, g_plus_tau: Fraction, exponent: int) -> int:
        """Q = ceil(m log2((g + tau)/2^exponent)), exactly: the least Q with ((g + tau)/gamma)^m <= 2^Q."""
        f = Fraction(g_plus_tau) / Fraction(2) ** exponent
        if f < 2**LATTICE_MARGIN_BITS:
            raise ValueError("g + tau must be at least 2^12 lattice steps")
        y = f ** self.log_grid
        q = floor_log2(y)
        return q if y == Fraction(2) ** q else q + 1

    def laplace_scale(self, level: int) -> Fraction:
        """c_L: a rational in [2^(L/m)/s, (1 + 2^-38) 2^(L/m)/s]."""
        with mpmath.workdps(_MP_DPS):
            val = mpmath.mpf(2) ** (mpmath.mpf(level) / self.log_grid) / _mp(self.s)
            p = 64 - int(mpmath.floor(mpmath.log(val, 2)))
            num = int(mpmath.ceil(val * mpmath.mpf(2) ** p)) + 1
        return Fraction(num, 2**p) if p >= 0 else Fraction(num * 2 ** (-p))

    def noise(self, rng: np.random.Generator, level: int, size: int) -> NDArray[np.int64]:
        """size draws of the lattice noise N given the scale index Q = ``level``."""
        ks = discrete_gaussian_array(rng, Fraction(self.v), (size,))
        cache: dict[int, Fraction] = {}
        out = np.empty(size, dtype=np.int64)
        for i, kk in enumerate(ks.tolist()):
            lv = level + kk
            if lv not in cache:
                cache[lv] = self.laplace_scale(lv)
            out[i] = discrete_laplace(rng, cache[lv])
        return out
