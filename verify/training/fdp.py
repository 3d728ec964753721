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

Numerics: the largest rejected parameter is screened by a recursion in floating point, vectorised
over the guess counts and a grid of parameters refined around the largest rejected value; the one
reported is re-checked by the recursion in mpmath at 40 significant digits (Phi^{-1} by Newton steps
from scipy's double), rejected only when the excess r + h - k/m exceeds 1e-30 (far above the working
precision's error over at most 10^6 steps). A claim given as a curve (``claim_rejected``) is inverted on a
grid, psi rounded down to the grid (a weaker claim than the curve, so a rejection still holds), and
checked in floating point with an excess margin of 1e-9, which bounds the accumulated rounding of
at most 10^6 steps of relative error 1e-15 on quantities in [0, 1].
"""

from __future__ import annotations

from collections.abc import Callable

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from accountant.core.types import FloatArray
from accountant.notions.tradeoff import TradeoffFunction

__all__ = [
    "claim_rejected", "epsilon_certify", "epsilon_lower", "epsilon_screen", "mu_certify", "mu_lower",
    "mu_screen", "recursion_excess",
]

Psi = Callable[[FloatArray, NDArray[np.intp]], FloatArray]
#: The screening grid: LANES values, refined PASSES - 1 times (resolution top / (LANES - 1)^PASSES).
LANES = 16
PASSES = 5
#: Upper ends of the searches.
MU_MAX = 40.0
EPS_MAX = 30.0
#: Rejection margins on the recursion's excess: exact (mpmath) check and floating-point check.
DPS = 40
EXACT_MARGIN = mpmath.mpf("1e-30")
FLOAT_MARGIN = 1e-9


def recursion_excess(k: ArrayLike, c: ArrayLike, m: int, tau: float, psi: Psi, lanes: int) -> FloatArray:
    """r + h - k / m at the end of the recursion for n guess counts (k, c) (arrays of n) and ``lanes``
    claims each: shape (n, lanes). ``psi(r, rows)`` maps r for the counts ``rows`` (an index array)
    to psi(r), claim by claim."""
    kk = np.atleast_1d(np.asarray(k, dtype=np.int64))
    cc = np.atleast_1d(np.asarray(c, dtype=np.int64))
    r = np.repeat((tau * cc / m)[:, None], lanes, axis=1).astype(np.float64)
    h = np.repeat((tau * (kk - cc) / m)[:, None], lanes, axis=1).astype(np.float64)
    first = int(cc.min(initial=0))
    for i in range(int(cc.max(initial=0)) - 1, -1, -1):
        rows = np.flatnonzero(cc > i)  # counts with c > i take this step; k - i >= c - i > 0 there
        hr = h[rows]
        h_new = np.maximum(hr, psi(r[rows], rows))
        if i < first and np.array_equal(h_new, hr):
            break  # every count has started, and neither r nor h can change any more
        step = (i / (kk[rows] - i))[:, None]
        r[rows] = np.minimum(r[rows] + step * (h_new - hr), 1.0)
        h[rows] = h_new
    return np.asarray(r + h - kk[:, None] / m, dtype=np.float64)


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


def _screen(k: ArrayLike, c: ArrayLike, m: int, tau: float, family: Callable[[FloatArray], Psi],
            top: float) -> FloatArray:
    """Largest parameter in [0, top] rejected in floating point, for each guess count at once: a
    grid of LANES, refined PASSES - 1 times (0 where none is rejected)."""
    kk = np.atleast_1d(np.asarray(k, dtype=np.int64))
    cc = np.atleast_1d(np.asarray(c, dtype=np.int64))
    live = (kk > 0) & (2 * cc > kk)
    best = np.zeros(kk.size)
    if not live.any():
        return best
    kk, cc = kk[live], cc[live]
    lo, hi = np.zeros(kk.size), np.full(kk.size, top)
    found = np.zeros(kk.size)
    span = np.linspace(0.0, 1.0, LANES)
    for _ in range(PASSES):
        grid = lo[:, None] + (hi - lo)[:, None] * span[None, :]
        rejected = recursion_excess(kk, cc, m, tau, family(grid), span.size) > 0.0
        any_rej = rejected.any(axis=1)
        j = np.where(any_rej, span.size - 1 - np.argmax(rejected[:, ::-1], axis=1), 0)
        rows = np.arange(kk.size)
        found = np.where(any_rej, grid[rows, j], found)
        nxt = np.minimum(j + 1, span.size - 1)
        lo, hi = np.where(any_rej, grid[rows, j], lo), np.where(any_rej, grid[rows, nxt], lo)
    best[live] = found
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
    return lambda y, rows: np.asarray(special.ndtr(special.ndtri(np.clip(y, 0.0, 1.0)) - mus[rows]),
                                      dtype=np.float64)


def _approx_family(delta: float) -> Callable[[FloatArray], Psi]:
    def family(eps: FloatArray) -> Psi:
        e = np.exp(eps)
        return lambda y, rows: np.maximum(np.maximum(0.0, 1.0 - delta - e[rows] * (1.0 - y)),
                                          (y - delta) / e[rows])
    return family


def mu_screen(k: ArrayLike, c: ArrayLike, m: int, tau: float) -> FloatArray:
    """Candidate largest mu with mu-GDP rejected at level tau, per guess count (floating point, not
    a bound)."""
    return _screen(k, c, m, tau, _gdp_family, MU_MAX)


def mu_certify(k: int, c: int, m: int, tau: float, candidate: float) -> float:
    """A mu <= candidate whose GDP claim the recursion in mpmath rejects at level tau (0 if none)."""
    return _certify(candidate, lambda mu: bool(_excess_mp(k, c, m, tau, _gdp_psi_mp(mu)) > EXACT_MARGIN))


def epsilon_screen(k: ArrayLike, c: ArrayLike, m: int, delta: float, tau: float) -> FloatArray:
    """Candidate largest eps with (eps, delta)-DP rejected at level tau, per guess count (floating
    point, not a bound)."""
    return _screen(k, c, m, tau, _approx_family(delta), EPS_MAX)


def epsilon_certify(k: int, c: int, m: int, delta: float, tau: float, candidate: float) -> float:
    """An eps <= candidate whose (eps, delta)-DP claim the mpmath recursion rejects (0 if none)."""
    return _certify(candidate,
                    lambda eps: bool(_excess_mp(k, c, m, tau, _approx_psi_mp(eps, delta)) > EXACT_MARGIN))


def mu_lower(k: int, c: int, m: int, tau: float) -> float:
    """The largest mu such that mu-GDP is rejected at level tau (0 if none), checked in mpmath."""
    return mu_certify(k, c, m, tau, float(mu_screen(k, c, m, tau)[0]))


def epsilon_lower(k: int, c: int, m: int, delta: float, tau: float) -> float:
    """The largest eps such that (eps, delta)-DP is rejected at level tau (0 if none), checked in mpmath."""
    return epsilon_certify(k, c, m, delta, tau, float(epsilon_screen(k, c, m, delta, tau)[0]))


def _grid_psi(f: TradeoffFunction) -> Psi:
    """psi(y) = inf{alpha : f(alpha) <= 1 - y} rounded down to a grid of alpha."""
    alpha = np.unique(np.concatenate([np.geomspace(1e-12, 1e-3, 400), np.linspace(0.0, 1.0, 8193)]))
    beta = np.asarray(f(alpha), dtype=np.float64)  # non-increasing

    def psi(y: FloatArray, rows: NDArray[np.intp]) -> FloatArray:
        # the largest grid alpha with f(alpha) > 1 - y; 0 when there is none
        target = 1.0 - np.asarray(y, dtype=np.float64)
        idx = np.searchsorted(-beta, -target, side="left") - 1
        return np.where(idx >= 0, alpha[np.maximum(idx, 0)], 0.0)
    return psi


def claim_rejected(k: ArrayLike, c: ArrayLike, m: int, tau: float,
                   curve: TradeoffFunction) -> NDArray[np.bool_]:
    """Whether the claim "f-DP with f = curve" is rejected at level tau, per guess count (floating
    point, margin 1e-9)."""
    kk = np.atleast_1d(np.asarray(k, dtype=np.int64))
    cc = np.atleast_1d(np.asarray(c, dtype=np.int64))
    excess = recursion_excess(kk, cc, m, tau, _grid_psi(curve), 1)[:, 0]
    return np.asarray((excess > FLOAT_MARGIN) & (kk > 0) & (2 * cc > kk), dtype=np.bool_)
