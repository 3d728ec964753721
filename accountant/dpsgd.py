"""One-call accounting of DP-SGD [@abadi2016deep]: Poisson-subsampled Gaussian steps.

``dpsgd_epsilon`` returns the PLD bracket (sound lower and upper bounds on the exact epsilon),
the central-limit mu of [@bu2020deep] / [@dong2022gaussian, Cor. 5.4],
mu = q sqrt(T (e^{1/sigma^2} - 1)), marked approximate, and the RDP bound
[@mironov2019sampled] for comparison.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from ._numeric import check_count, check_real
from ._pldgrid import EPS_MACH
from .guarantees import GDP, RDP
from .pld import DEFAULT_TOL, PLD
from .subsampling import subsampled_gaussian

#: Integer orders used for the RDP comparison.
RDP_ORDERS: tuple[int, ...] = (*range(2, 64), 80, 96, 128, 160, 192, 256, 384, 512)


@dataclass(frozen=True)
class DPSGDAccount:
    """Budget of a DP-SGD run at one delta.

    ``epsilon_lower <= exact epsilon <= epsilon_upper`` (PLD bracket; ``epsilon_upper`` is the
    figure to report). ``clt_mu``/``clt_epsilon`` are the CLT approximation: not bounds.
    ``rdp_epsilon`` is the (looser) RDP upper bound. ``epsilon(delta)`` answers any other delta
    from the same composed PLD (``pld``).
    """

    sampling_rate: float
    noise_multiplier: float
    steps: int
    delta: float
    epsilon_lower: float
    epsilon_upper: float
    clt_mu: float
    clt_epsilon: float
    rdp_epsilon: float
    pld: PLD = field(repr=False, compare=False)

    def epsilon(self, delta: float | None = None) -> float:
        """The sound upper bound on epsilon at ``delta`` (default: the account's delta)."""
        return self.epsilon_upper if delta is None else self.pld.epsilon(delta)


def dpsgd_clt_mu(sampling_rate: float, noise_multiplier: float, steps: int) -> float:
    """mu = q sqrt(T (e^{1/sigma^2} - 1)), the CLT limit of DP-SGD [@bu2020deep; @dong2022gaussian, Cor. 5.4].
    An approximation, accurate when q sqrt(T) is of order one and T is large."""
    q, s, t = _check(sampling_rate, noise_multiplier, steps)
    if 1.0 / (s * s) > 700.0:
        return math.inf  # e^{1/sigma^2} overflows: the approximation says nothing here
    return q * math.sqrt(t * math.expm1(1.0 / (s * s)))


def subsampled_gaussian_rdp(sampling_rate: float, noise_multiplier: float, steps: int = 1,
                            orders: Sequence[int] = RDP_ORDERS) -> RDP:
    """RDP of T Poisson-subsampled Gaussian steps at integer orders a [@mironov2019sampled,
    Thm 5; @abadi2016deep]: eps(a) = T/(a-1) log sum_k C(a,k) (1-q)^{a-k} q^k
    e^{(k^2-k)/(2 sigma^2)}, summed in log space and rounded up by a bound on its float error."""
    q, s, t = _check(sampling_rate, noise_multiplier, steps)
    if not isinstance(orders, Sequence) or isinstance(orders, str) or not orders:
        raise TypeError(f"orders must be a non-empty sequence of integers, got {orders!r}")
    eps = []
    log_1mq = math.log1p(-q) if q < 1.0 else -math.inf
    for a in orders:
        a = check_count("orders", a, low=2, high=10**5)
        k = np.arange(a + 1, dtype=np.float64)
        log_c = special.gammaln(a + 1.0) - special.gammaln(k + 1.0) - special.gammaln(a - k + 1.0)
        with np.errstate(invalid="ignore"):
            terms = log_c + (a - k) * log_1mq + k * math.log(q) + (k * k - k) / (2 * s * s)
        terms = np.where(np.isnan(terms), -np.inf, terms)
        lse = float(special.logsumexp(terms))
        # float error, bounded and added: each term errs by a few ulp of the magnitudes it is
        # made of, weighted by its share w_k of the sum; summing a + 1 shares and the final log
        # add (a + 8) ulp [@higham2002accuracy, Sec. 3.1]
        with np.errstate(invalid="ignore"):
            parts = (np.abs(log_c) + np.abs((a - k) * log_1mq) + np.abs(k * math.log(q))
                     + (k * k - k) / (2 * s * s))
        w = np.exp(terms - lse)
        err = 16.0 * EPS_MACH * (float(np.sum(np.where(w > 0, w * parts, 0.0))) + a + 8)
        eps.append(math.nextafter(t * max(0.0, lse + err) / (a - 1), math.inf))
    return RDP(orders=tuple(float(a) for a in orders), epsilons=tuple(eps))


def dpsgd_epsilon(sampling_rate: float, noise_multiplier: float, steps: int, delta: float,
                  tol: float = DEFAULT_TOL) -> DPSGDAccount:
    """Epsilon of DP-SGD with Poisson sampling rate q, noise multiplier sigma, T steps, at delta
    (add/remove adjacency, sensitivity = clipping norm)."""
    q, s, t = _check(sampling_rate, noise_multiplier, steps)
    d = check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)
    step = subsampled_gaussian(s, q)
    pld = PLD(tuple((src, c * t) for src, c in step.factors), tol)
    lower, upper = pld.epsilon_bracket(d)
    mu = dpsgd_clt_mu(q, s, t)
    clt_eps = GDP(mu).epsilon(d) if math.isfinite(mu) else math.inf
    return DPSGDAccount(q, s, t, d, lower, upper, mu, clt_eps,
                        subsampled_gaussian_rdp(q, s, t).epsilon(d), pld)


def _check(q: float, s: float, t: int) -> tuple[float, float, int]:
    q = check_real("sampling_rate", q, low=0.0, high=1.0, low_open=True)
    s = check_real("noise_multiplier", s, low=0.0, low_open=True, high=1e100)
    return q, s, check_count("steps", t)
