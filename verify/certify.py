"""White-box certification: does a declared mechanism's exact guarantee imply a claim?

The mechanism's guarantee (and its PLD guarantee, when it has ``pld()``) is an exact curve or a
sound lower bound on its trade-off function, so a claim it implies holds. The question is the
accountant's one ordering, ``accountant.implication``, asked of every guarantee the mechanism
declares and, when a closed form does not decide it, of the sound piecewise-linear lower envelope
of that guarantee's curve (compared with the claim knot by knot). What is certification's own is the
report: which guarantee decided, with what figure, and where a curve falls below the claim.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from accountant import FDP, ApproxDP, Approximate, Guarantee, Implication, PureDP, implication
from accountant.core.validation import check_real
from accountant.notions.tradeoff import PiecewiseLinearTradeoff

from .claims import claim_delta
from .protocols import DeclaredMechanism


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
    witness_alpha: float | None

    @property
    def holds(self) -> bool:
        return self.verdict == "holds"

    def to_dict(self) -> dict[str, Any]:
        return {"claim": str(self.claim), "guarantee": str(self.guarantee), "verdict": self.verdict,
                "holds": self.holds, "method": self.method, "delta": self.delta,
                "epsilon": self.epsilon if math.isfinite(self.epsilon) else str(self.epsilon),
                "witness_alpha": self.witness_alpha}

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def __str__(self) -> str:
        lines = [f"certificate for claim {self.claim}: {self.verdict.upper()}",
                 f"  mechanism guarantee: {self.guarantee}",
                 f"  method: {self.method}"]
        if isinstance(self.claim, (PureDP, ApproxDP)):  # an epsilon is what such a claim is about
            lines.append(f"  mechanism epsilon at delta={self.delta:g}: {self.epsilon:.6g}")
        if self.witness_alpha is not None:
            lines.append(f"  the mechanism's curve is below the claim near alpha = {self.witness_alpha:.4g}")
        return "\n".join(lines)


def _implication(g: Guarantee, claim: Guarantee) -> Implication:
    """The ordering's answer; an approximation (a CLT GDP, an asymptotic DP) is not a bound, so it
    implies nothing."""
    if isinstance(g, Approximate):
        return Implication(False, "approximate guarantee (not a bound)")
    return implication(g, claim)


def _witness(envelope: PiecewiseLinearTradeoff, claim: Guarantee) -> float | None:
    """A knot of the mechanism's lower envelope where it lies below the claim's curve, if any."""
    a = np.asarray(envelope.alphas, dtype=np.float64)
    gap = np.asarray(envelope(a), dtype=np.float64) - np.asarray(claim.tradeoff(a), dtype=np.float64)
    j = int(np.argmin(gap))
    return float(a[j]) if gap[j] < 0.0 else None


def compare(guarantee: Guarantee, claim: Guarantee) -> tuple[bool, str, PiecewiseLinearTradeoff | None]:
    """(implied, method, envelope) for ``guarantee`` implying ``claim``: the ordering on the
    guarantee itself, else on the piecewise-linear lower envelope of its curve (returned when that
    was compared too, for the witness)."""
    first = _implication(guarantee, claim)
    if first.holds or isinstance(guarantee, Approximate):
        return first.holds, first.detail, None
    envelope = guarantee.tradeoff.lower_envelope()
    by_curve = implication(FDP(envelope), claim)
    if by_curve.holds:
        return True, f"trade-off curve (sound envelope): {by_curve.detail}", None
    return False, first.detail, envelope


def certify(mechanism: DeclaredMechanism | Guarantee, claim: Guarantee, *,
            delta: float | None = None) -> Certificate:
    """Decide whether ``mechanism``'s declared guarantees (exact, closed form, PLD) imply ``claim``.

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
        # the one reported when none implies the claim), then its closed form, then its PLD (an
        # approximation has neither: it is not a bound)
        candidates = [g]
        for name in () if isinstance(g, Approximate) else ("closed_form_guarantee", "pld"):
            fn = getattr(mechanism, name, None)
            if callable(fn):
                try:
                    extra = fn()
                except (NotImplementedError, ValueError):
                    continue
                if isinstance(extra, Guarantee):
                    candidates.append(extra)
    d = claim_delta(claim) if delta is None else check_real("delta", delta, low=0.0, high=1.0,
                                                             high_open=True)
    first: tuple[str, PiecewiseLinearTradeoff | None] | None = None
    for g in candidates:
        ok, method, envelope = compare(g, claim)
        if ok:
            return Certificate(claim, g, "holds", method, d, g.epsilon(d), None)
        first = first or (method, envelope)
    assert first is not None
    method, envelope = first
    g = candidates[0]
    witness = None if envelope is None else _witness(envelope, claim)
    return Certificate(claim, g, "not implied", method, d, g.epsilon(d), witness)
