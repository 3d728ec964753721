"""What an audit reports: each evaluated test (``TestPoint``) and the whole audit (``AuditReport``)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from accountant import Guarantee

if TYPE_CHECKING:
    from matplotlib.axes import Axes


@dataclass(frozen=True)
class TestPoint:
    """One evaluated test: region {score > threshold} (direction 0: H0 = M(data), H1 = M(data2);
    direction 1: the swapped pair), its empirical errors and their simultaneous confidence box."""

    pair: int
    direction: int
    region: str
    objective: str
    #: "distributional", "declared" (the mechanism's likelihood ratio), "representation" (IEEE-754)
    #: or "renyi"
    family: str
    n: int
    rejections_null: int
    rejections_alt: int
    alpha: float
    beta: float
    alpha_lower: float
    alpha_upper: float
    beta_lower: float
    beta_upper: float
    epsilon_lower: float
    mu_lower: float
    claim_margin: float
    p_value: float
    #: Renyi tests: the order and the lower confidence bound on the Renyi divergence at it
    renyi_order: float | None = None
    renyi_lower: float | None = None


@dataclass(frozen=True)
class Finding:
    """One of the audit's two answers. "distributional": the outputs read as real numbers (regions
    are intervals, boxes, exact values of discrete outputs, structure categories; the declared
    likelihood ratio and Renyi tests included), so it judges the algorithm. "representation": tests
    that read the binary representation of doubles (which doubles can come out), so it judges the
    floating-point implementation [@mironov2012significance]. Both hold at the audit's confidence,
    jointly with every other bound in the report."""

    kind: str
    violation: bool
    epsilon_lower: float
    mu_lower: float
    p_value: float
    witness: TestPoint | None
    n_tests: int

    def summary(self) -> str:
        verdict = "refutes the claim" if self.violation else "no violation"
        return f"{verdict}; epsilon >= {self.epsilon_lower:.4g}, mu >= {self.mu_lower:.4g}"


@dataclass(frozen=True)
class AuditReport:
    """Result of ``audit``. ``violation`` is True when the claim is refuted at ``confidence``;
    ``epsilon_lower`` (at ``delta``) and ``mu_lower`` hold at ``confidence`` together with it."""

    claim: Guarantee
    violation: bool
    confidence: float
    epsilon_lower: float
    delta: float
    mu_lower: float
    p_value: float
    witness: TestPoint | None
    points: tuple[TestPoint, ...]
    #: the finding on the outputs as real numbers, and the floating-point representation finding
    #: (None with ``floating_point=False`` or when no output is a double)
    distributional: Finding
    representation: Finding | None
    floating_point: bool
    pairs: tuple[str, ...]
    candidate_pairs: int
    samples_per_input: int
    samples_total: int
    n_tests: int
    seconds: float
    notes: tuple[str, ...] = field(default=())
    #: False when the mechanism's outputs do not follow the audit's seed (a library with a random
    #: source of its own, e.g. OpenDP or PyDP): the report cannot be reproduced from the seed
    seeded: bool = True

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "claim":
                v = str(v)
            elif f.name in ("witness", "distributional", "representation"):
                v = None if v is None else asdict(v)
            elif f.name == "points":
                v = [asdict(p) for p in v]
            d[f.name] = v
        return d

    def to_json(self, **kwargs: Any) -> str:
        """The report as JSON (infinite bounds as the string "inf")."""
        return json.dumps(_json_safe(self.to_dict()), **kwargs)

    def __str__(self) -> str:
        verdict = "VIOLATION: claim refuted" if self.violation else "no violation found (not a certificate)"
        lines = [
            f"audit of claim {self.claim} at confidence {self.confidence:g}: {verdict}",
            f"  epsilon lower bound (delta={self.delta:g}): {self.epsilon_lower:.4g}",
            f"  mu lower bound (GDP): {self.mu_lower:.4g}",
            f"  adjusted p-value: {self.p_value:.3g}   tests: {self.n_tests}   "
            f"pairs screened: {self.candidate_pairs}",
            f"  samples: {self.samples_per_input} per input, {self.samples_total} in all, "
            f"{self.seconds:.2f} s",
        ]
        lines.append(f"  distributional finding (outputs as real numbers): {self.distributional.summary()}")
        lines.extend(self._witness_lines(self.distributional.witness))
        if self.representation is not None:
            lines.append(f"  floating-point representation finding: {self.representation.summary()}")
            lines.extend(self._witness_lines(self.representation.witness))
        elif not self.floating_point:
            lines.append("  floating-point representation: not tested (floating_point=False)")
        lines.extend(f"  note: {n}" for n in self.notes)
        return "\n".join(lines)

    def _witness_lines(self, w: TestPoint | None) -> list[str]:
        if w is None:
            return []
        pair = self.pairs[w.pair] if w.pair < len(self.pairs) else ""
        return [f"    witness: pair {w.pair} {pair} direction {w.direction}, region {w.region}",
                f"    alpha = {w.alpha:.4g} <= {w.alpha_upper:.4g}, beta = {w.beta:.4g} <= "
                f"{w.beta_upper:.4g} (n = {w.n}, p = {w.p_value:.3g})"]

    def plot(self, ax: Axes | None = None) -> Axes:
        """Empirical points with confidence boxes against the claimed trade-off curve."""
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle

        if ax is None:
            _, ax = plt.subplots(figsize=(5, 5))
        a = np.linspace(0.0, 1.0, 501)
        ax.plot(a, self.claim.tradeoff(a), label=f"claim {self.claim}")
        for p in self.points:
            ax.add_patch(Rectangle((p.alpha_lower, p.beta_lower), p.alpha_upper - p.alpha_lower,
                                   p.beta_upper - p.beta_lower, fill=False, color="C3"))
            ax.plot([p.alpha], [p.beta], "o", color="C3" if p is not self.witness else "C1")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel("type I error alpha")
        ax.set_ylabel("type II error beta")
        ax.set_title("violation" if self.violation else "no violation found")
        ax.legend()
        return ax


def _json_safe(o: Any) -> Any:
    if isinstance(o, dict):
        return {k: _json_safe(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_json_safe(v) for v in o]
    if isinstance(o, float) and not math.isfinite(o):
        return str(o)
    return o
