"""The one-run f-DP test of Mahloujifar, Melis & Chaudhuri [@mahloujifar2024auditing].

Same game as ``steinke``: m canaries included independently with probability 1/2, k guesses, c of
them correct. For a claimed symmetric trade-off curve f let psi(y) = inf{alpha : f(alpha) <= 1 - y}
(for a symmetric f, psi(y) = f(1 - y)): under f-DP an event of probability y on one neighbour has
probability >= psi(y) on the other. If P(at least c correct) >= tau, the paper's recursion

    r = tau c / m,  h = tau (k - c) / m;  for i = c - 1, ..., 0:
        h' = max(h, psi(r)),  r' = min(r + i / (k - i) (h' - h), 1)

ends with r + h <= k / m. So when it ends with r + h > k / m, P(at least c correct) < tau, and
rejecting the claim then is a level-tau test. A larger psi (a stronger claim) makes the excess
larger, so the claims this test rejects are the strong ones: mu-GDP for every mu below a
threshold (psi(y) = Phi(Phi^{-1}(y) - mu)), (eps, delta)-DP for every eps below one
(psi(y) = max(0, 1 - delta - e^eps (1 - y), e^-eps (y - delta))). As in ``steinke``, any single
parameter the test rejects is a lower bound at level tau (the weaker claims it implies are
accounted for by taking the event over all of them).

Numerics: the largest rejected parameter is screened by a vectorised recursion in floating point
over a grid, then the one reported is re-checked by the recursion in mpmath at 40 significant
digits (Phi^{-1} by Newton steps from scipy's double), rejected only when the excess r + h - k/m
exceeds 1e-30 (far above the working precision's error over at most 10^6 steps).
A claim given as a curve (``claim_rejected``) is inverted on a
grid, psi rounded down to the grid (a weaker claim than the curve, so a rejection still holds), and
checked in floating point with an excess margin of 1e-9, which bounds the accumulated rounding of
at most 10^6 steps of relative error 1e-15 on quantities in [0, 1].
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np
from scipy import special

from accountant.core.types import FloatArray
from accountant.notions.tradeoff import TradeoffFunction

__all__ = [
    "claim_rejected", "epsilon_certify", "epsilon_lower", "epsilon_screen", "mu_certify", "mu_lower",
    "mu_screen", "recursion_excess",
]

Psi = Callable[[FloatArray], FloatArray]
#: Upper ends of the searches.
MU_MAX = 40.0
EPS_MAX = 30.0
#: Rejection margins on the recursion's excess: exact (mpmath) check and floating-point check.
DPS = 40
EXACT_MARGIN = mpmath.mpf("1e-30")
FLOAT_MARGIN = 1e-9


def recursion_excess(k: int, c: int, m: int, tau: float, psi: Psi, lanes: int) -> FloatArray:
    """r + h - k / m at the end of the recursion, for ``lanes`` claims at once (psi vectorised)."""
    r = np.full(lanes, tau * c / m)
    h = np.full(lanes, tau * (k - c) / m)
    for i in range(c - 1, -1, -1):
        h_new = np.maximum(h, psi(r))
        if np.array_equal(h_new, h):
            break  # neither r nor h can change any more
        r = np.minimum(r + (i / (k - i)) * (h_new - h), 1.0)
        h = h_new
    return np.asarray(r + h - k / m, dtype=np.float64)


def _excess_mp(k: int, c: int, m: int, tau: float, psi: Callable[[mpmath.mpf], mpmath.mpf]) -> mpmath.mpf:
    t = mpmath.mpf(tau)
    r = t * c / m
    h = t * (k - c) / m
    for i in range(c - 1, -1, -1):
        h_new = max(h, psi(r))
        if h_new == h:
            break
        r = min(r + mpmath.mpf(i) / (k - i) * (h_new - h), mpmath.mpf(1))
        h = h_new
    return r + h - mpmath.mpf(k) / m


def _ndtri_mp(y: mpmath.mpf) -> mpmath.mpf:
    """Phi^{-1}(y) to the working precision: scipy's double as a start, then Newton steps (each
    doubles the correct digits: 16 -> 32 -> 64 > DPS)."""
    x = mpmath.mpf(float(special.ndtri(float(y))))
    for _ in range(2):
        x -= (mpmath.ncdf(x) - y) / mpmath.npdf(x)
    return x


def _gdp_psi_mp(mu: float) -> Callable[[mpmath.mpf], mpmath.mpf]:
    def psi(y: mpmath.mpf) -> mpmath.mpf:
        if y <= 0:
            return mpmath.mpf(0)
        if y >= 1:
            return mpmath.mpf(1)
        return mpmath.ncdf(_ndtri_mp(y) - mu)
    return psi


def _approx_psi_mp(eps: float, delta: float) -> Callable[[mpmath.mpf], mpmath.mpf]:
    e, d = mpmath.exp(mpmath.mpf(eps)), mpmath.mpf(delta)

    def psi(y: mpmath.mpf) -> mpmath.mpf:
        return max(mpmath.mpf(0), 1 - d - e * (1 - y), (y - d) / e)
    return psi


def _screen(k: int, c: int, m: int, tau: float, family: Callable[[FloatArray], Psi], top: float) -> float:
    """Largest parameter in [0, top] rejected in floating point: a grid of 64, refined twice."""
    if k <= 0 or c <= k / 2:
        return 0.0
    lo, hi = 0.0, top
    best = 0.0
    for _ in range(3):
        grid = np.linspace(lo, hi, 64)
        rejected = recursion_excess(k, c, m, tau, family(grid), grid.size) > 0.0
        if not rejected.any():
            break
        j = int(np.flatnonzero(rejected).max())
        best = float(grid[j])
        if j == grid.size - 1:
            break
        lo, hi = grid[j], grid[j + 1]
    return best


def _certify(candidate: float, rejects: Callable[[float], bool]) -> float:
    """A parameter <= candidate whose claim the mpmath recursion rejects (0 after eight 0.1% steps)."""
    x = candidate
    for _ in range(8):
        if x <= 0.0:
            return 0.0
        with mpmath.workdps(DPS):
            if rejects(x):
                return x
        x *= 0.999
    return 0.0


def _gdp_family(mus: FloatArray) -> Psi:
    return lambda y: np.asarray(special.ndtr(special.ndtri(np.clip(y, 0.0, 1.0)) - mus), dtype=np.float64)


def _approx_family(delta: float) -> Callable[[FloatArray], Psi]:
    def family(eps: FloatArray) -> Psi:
        e = np.exp(eps)
        return lambda y: np.maximum(np.maximum(0.0, 1.0 - delta - e * (1.0 - y)), (y - delta) / e)
    return family


def mu_screen(k: int, c: int, m: int, tau: float) -> float:
    """Candidate largest mu with mu-GDP rejected at level tau (floating point, not a bound)."""
    return _screen(k, c, m, tau, _gdp_family, MU_MAX)


def mu_certify(k: int, c: int, m: int, tau: float, candidate: float) -> float:
    """A mu <= candidate whose GDP claim the recursion in mpmath rejects at level tau (0 if none)."""
    return _certify(candidate, lambda mu: bool(_excess_mp(k, c, m, tau, _gdp_psi_mp(mu)) > EXACT_MARGIN))


def epsilon_screen(k: int, c: int, m: int, delta: float, tau: float) -> float:
    """Candidate largest eps with (eps, delta)-DP rejected at level tau (floating point, not a bound)."""
    return _screen(k, c, m, tau, _approx_family(delta), EPS_MAX)


def epsilon_certify(k: int, c: int, m: int, delta: float, tau: float, candidate: float) -> float:
    """An eps <= candidate whose (eps, delta)-DP claim the mpmath recursion rejects (0 if none)."""
    return _certify(candidate,
                    lambda eps: bool(_excess_mp(k, c, m, tau, _approx_psi_mp(eps, delta)) > EXACT_MARGIN))


def mu_lower(k: int, c: int, m: int, tau: float) -> float:
    """The largest mu such that mu-GDP is rejected at level tau (0 if none), checked in mpmath."""
    return mu_certify(k, c, m, tau, mu_screen(k, c, m, tau))


def epsilon_lower(k: int, c: int, m: int, delta: float, tau: float) -> float:
    """The largest eps such that (eps, delta)-DP is rejected at level tau (0 if none), checked in mpmath."""
    return epsilon_certify(k, c, m, delta, tau, epsilon_screen(k, c, m, delta, tau))


def _grid_psi(f: TradeoffFunction) -> Psi:
    """psi(y) = inf{alpha : f(alpha) <= 1 - y} rounded down to a grid of alpha."""
    alpha = np.unique(np.concatenate([np.geomspace(1e-12, 1e-3, 400), np.linspace(0.0, 1.0, 8193)]))
    beta = np.asarray(f(alpha), dtype=np.float64)  # non-increasing

    def psi(y: FloatArray) -> FloatArray:
        # the largest grid alpha with f(alpha) > 1 - y; 0 when there is none
        target = 1.0 - np.asarray(y, dtype=np.float64)
        idx = np.searchsorted(-beta, -target, side="left") - 1
        return np.where(idx >= 0, alpha[np.maximum(idx, 0)], 0.0)
    return psi


def claim_rejected(k: int, c: int, m: int, tau: float, curve: TradeoffFunction) -> bool:
    """Whether the claim "f-DP with f = curve" is rejected at level tau (floating point, margin 1e-9)."""
    if k <= 0 or c <= k / 2:
        return False
    excess = recursion_excess(k, c, m, tau, _grid_psi(curve), 1)
    return bool(excess[0] > FLOAT_MARGIN) and math.isfinite(float(excess[0]))
