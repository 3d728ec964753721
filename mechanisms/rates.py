"""Rates of convergence and minimax lower bounds of the estimators' source papers, as functions.

Vocabulary. Every statement implemented here is stated by its paper up to a constant factor it does
not give (``<~`` or ``>~``), so each function returns a ``Rate``: the expression of the theorem, with
the constant unknown. ``direction="upper"``: the named estimator's error is at most C times ``value``
for some constant C > 0 (a rate of convergence); ``direction="lower"``: every estimator meeting the
privacy constraint has worst-case error at least c times ``value`` for some c > 0 (a minimax lower
bound). A ``Rate`` is therefore never a bound on one error: what can be checked is that
error / ``value`` stays bounded (above for an upper rate, away from 0 for a lower one) as n, eps, d or
s vary. The hypotheses a function can check from its arguments are checked (a violation raises
``ValueError`` naming it); those it cannot (asymptotic ones such as eps = O(1), or properties of the
data's law) are listed in ``Rate.assumes``.

Sources: the sparse and classical mean of [@cai2021cost, Thms 13-15] and the classical-mean lower
bound the lecture slides quote from that paper [@avellamedina2025differentially]; the per-coordinate
(BCDP) mean and least squares of [@aliakbarpour2025enhancing, Thm 2 eq. (17), Cor. 1, Thm 3 eq. (22)].
The constant of (17) is not given by the paper (its proof takes O(d) from the channel's variance);
for ``BCDPMean`` the bound with the channel's constant is ``BCDPMean.worst_case_mse``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from accountant.core.validation import check_count, check_real

from .domain import MAX_COUNT
from .local import check_cdp_vector

__all__ = [
    "Rate",
    "bcdp_least_squares_rate",
    "bcdp_mean_corollary_rate",
    "bcdp_mean_rate",
    "mean_lower_rate",
    "sparse_mean_lower_rate",
    "sparse_mean_rate",
    "truncated_mean_rate",
]

Direction = Literal["upper", "lower"]

@dataclass(frozen=True)
class Rate:
    """A theorem's rate, known up to a constant factor only.

    ``value``: the expression of the theorem at the arguments given. ``direction``: "upper" (the
    estimator's ``quantity`` is <~ ``value``) or "lower" (every admissible estimator's worst case of
    ``quantity`` is >~ ``value``). ``quantity``: what is bounded (e.g. "E||mu_hat - mu||_2").
    ``theorem``: where it is stated. ``assumes``: the theorem's hypotheses the function could not
    check from its arguments."""

    value: float
    direction: Direction
    quantity: str
    theorem: str
    assumes: tuple[str, ...] = ()

    def __str__(self) -> str:
        rel = "<~" if self.direction == "upper" else ">~"
        return f"{self.quantity} {rel} {self.value:.6g} (up to a constant; {self.theorem})"


def _count(name: str, value: int, low: int = 1) -> int:
    return check_count(name, value, low=low, high=MAX_COUNT)


def _eps(eps: float) -> float:
    return check_real("eps", eps, low=0.0, high=1e6, low_open=True, high_open=False)


def _delta(delta: float) -> float:
    """0 < delta < 1: the (eps, delta) statements have log(1/delta); pure DP is not covered."""
    return check_real("delta", delta, low=0.0, high=1.0, low_open=True, high_open=True)


def _sigma(sigma: float) -> float:
    return check_real("sigma", sigma, low=0.0, high=1e150, low_open=True)


def _privacy_log(delta: float, n: int, bounded: bool) -> float:
    """log(1/delta), times log n in the unbounded (sub-Gaussian, T ~ sigma sqrt(log n)) case of
    [@cai2021cost, Thms 14-15, part 2]."""
    return math.log(1.0 / delta) * (1.0 if bounded else math.log(n))


def _unbounded_needs(n: int, bounded: bool) -> None:
    if not isinstance(bounded, bool):
        raise TypeError(f"bounded must be a bool, got {type(bounded).__name__} {bounded!r}")
    if not bounded and n < 2:
        raise ValueError(f"n must be >= 2 when bounded=False (the rate has log n), got {n}")


def sparse_mean_lower_rate(n: int, d: int, s: int, eps: float, delta: float,
                           sigma: float = 1.0) -> Rate:
    """Minimax lower bound for s-sparse means [@cai2021cost, Thm 13]: over the sub-Gaussian laws
    P(sigma, d, s) with ||mu||_0 <= s, every (eps, delta)-DP M has

        sup_P E||M(X) - mu_P||_2 >~ sigma (sqrt(s log d / n) + s log(d/s) sqrt(log(1/delta)) / (n eps)).

    Checked: 1 <= s < d (log(d/s) > 0) and n^-1 e^(-3 eps n / 2) <= delta <= n^-(1+tau) for some
    tau > 0, i.e. delta < 1/n. Assumed: eps = O(1) and sqrt(s log(1/delta)) log(d/s) / (n eps) = O(1)."""
    n, d = _count("n", n, low=2), _count("d", d, low=2)
    s = check_count("s", s, low=1, high=d - 1)
    eps, delta, sigma = _eps(eps), _delta(delta), _sigma(sigma)
    if not delta < 1.0 / n:
        raise ValueError(f"delta must be < 1/n = {1.0 / n:g} (Thm 13 needs delta <= n^-(1+tau), tau > 0), "
                         f"got {delta!r}")
    floor = math.exp(-1.5 * eps * n - math.log(n))
    if delta < floor:
        raise ValueError(f"delta must be >= n^-1 e^(-3 eps n/2) = {floor:g} (Thm 13), got {delta!r}")
    value = sigma * (math.sqrt(s * math.log(d) / n)
                     + s * math.log(d / s) * math.sqrt(math.log(1.0 / delta)) / (n * eps))
    return Rate(value, "lower", "sup_P E||M(X) - mu_P||_2 over (eps, delta)-DP M",
                "Cai, Wang & Zhang (2021), Theorem 13",
                ("eps = O(1)", "sqrt(s log(1/delta)) log(d/s) / (n eps) = O(1)"))


def sparse_mean_rate(n: int, d: int, s: int, eps: float, delta: float, sigma: float = 1.0,
                     bounded: bool = True) -> Rate:
    """Rate of Algorithm 3 (``SparseMean``) [@cai2021cost, Thm 14]: for P in P(sigma, d, s) with
    E X = mu, ||mu||_inf = O(1), s_hat of the order of s and s_hat >= s,

        E||mu_hat - mu||_2 <~ sigma (sqrt(s log d / n) + s log d sqrt(log(1/delta) L) / (n eps)),

    with L = 1 when ||X||_inf < M almost surely and T >= M (``bounded=True``), and L = log n for
    sub-Gaussian data with T >= C sigma sqrt(log n) (``bounded=False``). Checked: 1 <= s <= d,
    d >= 2. Within sqrt(log n) of ``sparse_mean_lower_rate``."""
    n, d = _count("n", n), _count("d", d, low=2)
    s = check_count("s", s, low=1, high=d)
    eps, delta, sigma = _eps(eps), _delta(delta), _sigma(sigma)
    _unbounded_needs(n, bounded)
    value = sigma * (math.sqrt(s * math.log(d) / n)
                     + s * math.log(d) * math.sqrt(_privacy_log(delta, n, bounded)) / (n * eps))
    assumes = ("||mu||_inf = O(1)", "s_hat of the order of s and s_hat >= s",
               "||X||_inf < M a.s. and T >= M" if bounded else "T >= C sigma sqrt(log n), C large enough")
    return Rate(value, "upper", "E||mu_hat - mu||_2 of Algorithm 3", "Cai, Wang & Zhang (2021), Theorem 14",
                assumes)


def truncated_mean_rate(n: int, d: int, eps: float, delta: float, sigma: float = 1.0,
                        bounded: bool = True) -> Rate:
    """Rate of the noisy truncated mean (``TruncatedMean``) [@cai2021cost, Thm 15]: for P in
    P(sigma, d) with E X = mu, ||mu||_inf = O(1),

        E||mu_hat - mu||_2 <~ sigma (sqrt(d / n) + d sqrt(log(1/delta) L) / (n eps)),

    L as in ``sparse_mean_rate`` (1 for bounded data with T >= M, log n for sub-Gaussian data with
    T >= C sigma sqrt(log n)). Within sqrt(log n) of ``mean_lower_rate``."""
    n, d = _count("n", n), _count("d", d)
    eps, delta, sigma = _eps(eps), _delta(delta), _sigma(sigma)
    _unbounded_needs(n, bounded)
    value = sigma * (math.sqrt(d / n) + d * math.sqrt(_privacy_log(delta, n, bounded)) / (n * eps))
    assumes = ("||mu||_inf = O(1)", "d << n",
               "||X||_inf < M a.s. and T >= M" if bounded else "T >= C sigma sqrt(log n), C large enough")
    return Rate(value, "upper", "E||mu_hat - mu||_2 of the noisy truncated mean",
                "Cai, Wang & Zhang (2021), Theorem 15", assumes)


def mean_lower_rate(n: int, d: int, eps: float, delta: float, sigma: float = 1.0) -> Rate:
    """Minimax lower bound for a d-dimensional mean under (eps, delta)-DP, as the lecture slides
    quote it from [@cai2021cost] [@avellamedina2025differentially, "Remarks" and "Optimal minimax
    rates"]: over the sub-Gaussian laws P(sigma, d),

        inf_M sup_P E||M(X) - mu||_2 >~ sigma (sqrt(d / n) + d sqrt(log(1/delta)) / (n eps)).

    The slides state no hypotheses; those of the paper's theorem (its Theorem 12, which the excerpt
    we implement from cites but does not state) are not checked here. Checked: 0 < delta < 1
    (pure DP is not covered: log(1/delta) = inf)."""
    n, d = _count("n", n), _count("d", d)
    eps, delta, sigma = _eps(eps), _delta(delta), _sigma(sigma)
    value = sigma * (math.sqrt(d / n) + d * math.sqrt(math.log(1.0 / delta)) / (n * eps))
    return Rate(value, "lower", "sup_P E||M(X) - mu||_2 over (eps, delta)-DP M",
                "Cai, Wang & Zhang (2021) as quoted by Avella Medina (2025)",
                ("the hypotheses of Cai, Wang & Zhang's classical-mean theorem (not in the slides)",))


def _r_squared(cs: tuple[float, ...]) -> float:
    """r^2 = sum_i 1 / sum_{k<=i} (c_k - c_{k-1})^2 / (d - k + 1) (c_0 = 0); inf when c_1 = 0."""
    d = len(cs)
    total, inner, prev = 0.0, 0.0, 0.0
    for k, ck in enumerate(cs, start=1):
        inner += (ck - prev) ** 2 / (d - k + 1)
        prev = ck
        total += math.inf if inner == 0.0 else 1.0 / inner
    return total


def bcdp_mean_rate(n: int, c: Sequence[float]) -> Rate:
    """Mean-squared error of M_mean with the L2 channel (``BCDPMean``)
    [@aliakbarpour2025enhancing, Thm 2, eq. (17)]: for records in [-1, 1]^d and the non-decreasing
    CDP vector c of (16) (``accountant.mean_cdp_vector``),

        E||x_bar - Pi(mean of the n releases)||_2^2 <~ min(r^2 / n, d),
        r^2 = sum_{i=1}^d 1 / sum_{k=1}^i (c_k - c_{k-1})^2 / (d - k + 1),  c_0 = 0,

    (Pi: projection on [-1, 1]^d; the expectation is over the mechanism, the records fixed). With
    c = eps 1 it is d^2 / (n eps^2), the eps-LDP rate. ``BCDPMean.worst_case_mse`` is the bound with
    the channel's own constant."""
    n = _count("n", n)
    cs = check_cdp_vector(c)
    value = min(_r_squared(cs) / n, float(len(cs)))
    return Rate(value, "upper", "E||x_bar - Pi(mean of M_mean)||_2^2", "Aliakbarpour et al. (2025), "
                "Theorem 2, eq. (17)", ("Assumption 1 (dependence bound q) for the c of eq. (16)",))


def bcdp_mean_corollary_rate(n: int, d: int, k: int, delta: float, eps: float, q: float) -> Rate:
    """eq. (17) simplified [@aliakbarpour2025enhancing, Cor. 1], zeta = 1/2, for delta_i = delta on
    the k sensitive coordinates and delta_i = eps > 2 delta on the other d - k:

        (1/n) (d k / delta^2 + (d - k)^2 / eps^2)                          if q <= q*,  (18)
        (1/n) (d k / delta^2 + (d - k)^2 / ((d - k) delta^2 / d + (c_d - delta/2)^2))  else, (19)

    q* = (e^(delta/2) - 1)/(e^eps - 1) and c_d = log((e^(delta/2) + q - 1)/q). Checked: 1 <= k <= d,
    eps > 2 delta > 0, 0 <= q <= 1."""
    d = _count("d", d)
    n, k = _count("n", n), check_count("k", k, low=1, high=d)
    delta = check_real("delta", delta, low=0.0, high=1e6, low_open=True)
    eps = _eps(eps)
    if not eps > 2.0 * delta:
        raise ValueError(f"eps must be > 2 delta = {2.0 * delta!r} (Corollary 1), got {eps!r}")
    q = check_real("q", q, low=0.0, high=1.0)
    sensitive = d * k / delta**2
    if q <= math.expm1(delta / 2.0) / math.expm1(eps):
        rest, eq = (d - k) ** 2 / eps**2, "(18)"
    else:
        cd = math.log((math.exp(delta / 2.0) + q - 1.0) / q)
        rest = 0.0 if k == d else (d - k) ** 2 / ((d - k) * delta**2 / d + (cd - delta / 2.0) ** 2)
        eq = "(19)"
    return Rate((sensitive + rest) / n, "upper", "E||x_bar - Pi(mean of M_mean)||_2^2",
                f"Aliakbarpour et al. (2025), Corollary 1, eq. {eq}",
                ("Assumption 1 with dependence bound q", "zeta = 1/2 in eq. (16)"))


def bcdp_least_squares_rate(n: int, c: Sequence[float], theta_radius: float) -> Rate:
    """Excess risk of BCDP least squares (Algorithm 3, ``BCDPLeastSquares``)
    [@aliakbarpour2025enhancing, Thm 3, eq. (22)]: for records x = (z, l) in [-1, 1]^d and Theta in
    the ball of radius R = ``theta_radius``,

        E[f(theta_hat) - f*] <~ (R^2 + R) min((log d / sqrt(n)) (r^2 + r d), d),

    r^2 as in ``bcdp_mean_rate`` for the vector c of Theorem 2 (d = len(c) >= 2: at least one
    feature and the label). (R^2 + R) is max over Theta of ||theta||^2 + ||theta||, attained on the
    sphere of radius R."""
    n = _count("n", n)
    cs = check_cdp_vector(c)
    if len(cs) < 2:
        raise ValueError(f"c must have d >= 2 entries (features and the label), got {list(cs)}")
    radius = check_real("theta_radius", theta_radius, low=0.0, high=1e150, low_open=True)
    d = len(cs)
    r2 = _r_squared(cs)
    inner = min(math.log(d) / math.sqrt(n) * (r2 + math.sqrt(r2) * d), float(d))
    return Rate((radius**2 + radius) * inner, "upper", "E[f(theta_hat) - f*] of Algorithm 3",
                "Aliakbarpour et al. (2025), Theorem 3, eq. (22)",
                ("Assumptions 1 and 2", "c set as in Theorem 2"))
