"""White-box certification: does a declared mechanism's exact guarantee imply a claim?

The mechanism's guarantee (and its PLD guarantee, when it has ``pld()``) is an exact curve or a
sound lower bound on its trade-off function, so a claim it implies holds. Comparisons:
(eps, delta) claims by the privacy profile, delta_mech(eps) <= delta (f_{eps,delta}-DP is (eps, delta)-DP
[@dong2022gaussian, Prop. 2.12]); GDP against GDP by mu; any other pair of curves by a sound comparison of a
piecewise-linear lower envelope of the mechanism's curve with the chords of the claim's (which lie
above it by convexity), checked at every knot of both.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from accountant import FDP, GDP, ZCDP, ApproxDP, GaussianTradeoff, Guarantee, PureDP, check_real
from accountant.tradeoff import default_alpha_grid

#: Slack allowed in beta when comparing curves numerically.
CURVE_TOL = 1e-12


@dataclass(frozen=True)
class Certificate:
    """Result of ``certify``: ``verdict`` is "holds" (the claim is implied) or "not implied" (the
    mechanism's declared guarantee does not imply it; use ``verify.audit`` to refute it)."""

    claim: Guarantee
    guarantee: Guarantee
    verdict: Literal["holds", "not implied"]
    method: str
    delta: float
    epsilon: float
    margin: float
    witness_alpha: float | None

    @property
    def holds(self) -> bool:
        return self.verdict == "holds"

    def to_dict(self) -> dict[str, Any]:
        return {"claim": str(self.claim), "guarantee": str(self.guarantee), "verdict": self.verdict,
                "holds": self.holds, "method": self.method, "delta": self.delta,
                "epsilon": self.epsilon if math.isfinite(self.epsilon) else str(self.epsilon),
                "margin": self.margin, "witness_alpha": self.witness_alpha}

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def __str__(self) -> str:
        lines = [f"certificate for claim {self.claim}: {self.verdict.upper()}",
                 f"  mechanism guarantee: {self.guarantee}",
                 f"  method: {self.method}",
                 f"  mechanism epsilon at delta={self.delta:g}: {self.epsilon:.6g}"]
        if self.witness_alpha is not None:
            lines.append(f"  the mechanism's curve is below the claim near alpha = {self.witness_alpha:.4g}")
        return "\n".join(lines)


def _claim_delta(claim: Guarantee) -> float:
    return claim.delta_ if isinstance(claim, ApproxDP) else 0.0


def _gdp_mu(claim: Guarantee) -> float | None:
    """mu of a GDP claim, or of an f-DP claim whose curve is a Gaussian trade-off G_mu."""
    if isinstance(claim, GDP):
        return claim.mu
    if isinstance(claim, FDP) and isinstance(claim.tradeoff_fn, GaussianTradeoff):
        return claim.tradeoff_fn.mu
    return None


def _zcdp_rho(g: Guarantee) -> float | None:
    """A rho with g => rho-zCDP: mu^2/2 for mu-GDP (the Gaussian pair's Renyi divergence), eps^2/2 for
    eps-DP [@bun2016concentrated, Prop. 1.4], rho itself; rounded up. None for other guarantees."""
    if isinstance(g, ZCDP):
        return g.rho
    x = g.mu if isinstance(g, GDP) else g.eps if isinstance(g, PureDP) else None
    if x is None:
        return None
    half_square = x * x / 2.0
    return math.nextafter(half_square, math.inf) if math.isfinite(half_square) else half_square


def compare(guarantee: Guarantee, claim: Guarantee) -> tuple[bool, str, float, float | None]:
    """(implied, method, margin, witness alpha) for ``guarantee`` implying ``claim``. An approximate
    guarantee (a CLT GDP) implies nothing: it is not a bound."""
    if getattr(guarantee, "approximate", False):
        return False, "approximate guarantee (not a bound)", -math.inf, None
    if isinstance(claim, PureDP | ApproxDP):
        eps, delta = claim.eps, _claim_delta(claim)
        d = float(guarantee.delta(eps))
        return d <= delta, f"privacy profile at eps={eps:g}", delta - d, None
    mu_claim = _gdp_mu(claim)
    if mu_claim is not None and isinstance(guarantee, GDP):
        return guarantee.mu <= mu_claim, "GDP parameter", mu_claim - guarantee.mu, None
    rho = _zcdp_rho(guarantee)
    if isinstance(claim, ZCDP) and rho is not None:
        return rho <= claim.rho, "zCDP parameter", claim.rho - rho, None
    lower = guarantee.tradeoff.lower_envelope()
    # chords through points on the claim's curve lie above it (convexity); through the knots of its
    # envelope too, so a piecewise-linear claim is compared exactly (itself included)
    knots = np.unique(np.concatenate([default_alpha_grid(), claim.tradeoff.lower_envelope().alphas]))
    pts = np.unique(np.concatenate([knots, lower.alphas]))
    claim_chords = np.interp(pts, knots, np.asarray(claim.tradeoff(knots), dtype=np.float64))
    gap = np.asarray(lower(pts), dtype=np.float64) - claim_chords
    j = int(np.argmin(gap))
    ok = bool(gap[j] >= -CURVE_TOL)
    return ok, "trade-off curves (sound envelope vs chords)", float(gap[j]), None if ok else float(pts[j])


def certify(mechanism: Any, claim: Guarantee, *, delta: float | None = None) -> Certificate:
    """Decide whether ``mechanism``'s declared guarantees (exact, standard notion, PLD) imply ``claim``.

    mechanism: an object with ``guarantee()`` returning an accountant guarantee (and optionally
    ``pld()``), or a guarantee itself. ``delta``: where the mechanism's epsilon is reported
    (default: the claim's delta)."""
    if not isinstance(claim, Guarantee):
        raise TypeError(f"claim must be an accountant guarantee, got {type(claim).__name__}")
    if isinstance(mechanism, Guarantee):
        candidates = [mechanism]
    else:
        g_fn = getattr(mechanism, "guarantee", None)
        if not callable(g_fn):
            raise TypeError("mechanism must declare guarantee() (a dpcert mechanism); "
                            "use verify.audit for a black-box callable")
        g = g_fn()
        if not isinstance(g, Guarantee):
            raise TypeError("mechanism.guarantee() must return an accountant guarantee, "
                            f"got {type(g).__name__}")
        # every sound guarantee the mechanism declares is tried: the exact one first (it is also
        # the one reported when none implies the claim), then its standard notion, then its PLD
        candidates = [g]
        for name in ("standard_guarantee", "pld"):
            fn = getattr(mechanism, name, None)
            if callable(fn):
                try:
                    extra = fn()
                except (NotImplementedError, ValueError):
                    continue
                if isinstance(extra, Guarantee):
                    candidates.append(extra)
    d = _claim_delta(claim) if delta is None else check_real("delta", delta, low=0.0, high=1.0,
                                                             high_open=True)
    results = [(g, *compare(g, claim)) for g in candidates]
    for g, ok, method, margin, _ in results:
        if ok:
            return Certificate(claim, g, "holds", method, d, g.epsilon(d), margin, None)
    g, _, method, margin, witness = results[0]
    return Certificate(claim, g, "not implied", method, d, g.epsilon(d), margin, witness)
