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
    ``epsilon_lower`` (at ``delta``), ``mu_lower`` (GDP) and ``rho_lower`` (zCDP: the smallest rho
    any zCDP guarantee of the mechanism can have) hold at ``confidence`` together with it."""

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
    rho_lower: float = 0.0

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
            f"  rho lower bound (zCDP): {self.rho_lower:.4g}",
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

    def roc_points(self, pad: float = 0.04) -> dict[str, Any]:
        """The figure's arrays: each test point's (alpha, beta) and its simultaneous confidence box
        (``alpha``, ``beta``, ``alpha_lower``, ``alpha_upper``, ``beta_lower``, ``beta_upper``), the
        witness's index in ``points`` (-1 without one), the claimed curve (``claim_alpha``,
        ``claim_beta``), the axes' limits (``xlim``, ``ylim``: [0, 1] widened by ``pad``, so a point
        at beta = 0 is not drawn on the axis) and a square ``zoom`` window (x0, x1, y0, y1) around the
        witness's box and the claim at its alpha (around all boxes without a witness), in which a box
        a hundredth wide is visible as a box."""
        pts = self.points
        get = {k: np.array([getattr(t, k) for t in pts], dtype=np.float64)
               for k in ("alpha", "beta", "alpha_lower", "alpha_upper", "beta_lower", "beta_upper")}
        a = np.linspace(0.0, 1.0, 501)
        out: dict[str, Any] = {**get, "claim_alpha": a, "claim_beta": np.asarray(self.claim.tradeoff(a)),
                               "witness": next((i for i, t in enumerate(pts) if t is self.witness), -1),
                               "xlim": (-pad, 1.0 + pad), "ylim": (-pad, 1.0 + pad), "zoom": None}
        if pts:
            # around the witness's box and the claim at its alpha (all the boxes without a witness),
            # square so that boxes keep their shape, twice as wide as what it must show, in the axes
            show = [out["witness"]] if out["witness"] >= 0 else list(range(len(pts)))
            x0, x1 = float(get["alpha_lower"][show].min()), float(get["alpha_upper"][show].max())
            curve = np.asarray(self.claim.tradeoff(np.clip(get["alpha"][show], 0.0, 1.0)), dtype=np.float64)
            y0 = float(min(get["beta_lower"][show].min(), curve.min()))
            y1 = float(max(get["beta_upper"][show].max(), curve.max()))
            half = max(x1 - x0, y1 - y0, 0.02)
            lo, hi = -pad, 1.0 + pad
            cx = min(max((x0 + x1) / 2, lo + half), hi - half)
            cy = min(max((y0 + y1) / 2, lo + half), hi - half)
            out["zoom"] = (cx - half, cx + half, cy - half, cy + half)
        return out

    def plot(self, ax: Axes | None = None) -> Axes:
        """The test points with their simultaneous confidence boxes against the claimed trade-off
        curve, and an inset magnifying the boxes; a box wholly below the curve refutes the claim."""
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle

        if ax is None:
            _, ax = plt.subplots(figsize=(5.5, 5.5))
        r = self.roc_points()
        inset = ax.inset_axes((0.5, 0.5, 0.47, 0.47)) if r["zoom"] is not None else None
        for target in (ax, inset) if inset is not None else (ax,):
            target.plot(r["claim_alpha"], r["claim_beta"], color="C0",
                        label=f"claim {self.claim}" if target is ax else None)
            for i in range(len(self.points)):
                witness = i == r["witness"]  # its box outlined in red, above its marker
                target.add_patch(Rectangle(
                    (r["alpha_lower"][i], r["beta_lower"][i]), r["alpha_upper"][i] - r["alpha_lower"][i],
                    r["beta_upper"][i] - r["beta_lower"][i], facecolor=(1.0, 0.5, 0.05, 0.35),
                    edgecolor="C3" if witness else "C1", linewidth=1.5 if witness else 1.0,
                    zorder=6 if witness else 2,
                    label=f"{self.confidence:g} confidence boxes" if target is ax and i == 0 else None))
            if r["witness"] >= 0:
                w = r["witness"]
                target.plot([r["alpha"][w]], [r["beta"][w]], "X", color="C3",
                            markersize=9 if target is ax else 6, markeredgecolor="black", zorder=5,
                            label=f"witness ({r['alpha'][w]:.3f}, {r['beta'][w]:.3f})"
                            if target is ax else None)
        ax.set(xlabel="type I error alpha", ylabel="type II error beta", xlim=r["xlim"], ylim=r["ylim"],
               title="violation" if self.violation else "no violation found")
        if inset is not None:
            x0, x1, y0, y1 = r["zoom"]
            inset.set(xlim=(x0, x1), ylim=(y0, y1))
            inset.tick_params(labelsize="x-small")
            ax.indicate_inset_zoom(inset, edgecolor="grey")
        ax.legend(fontsize="small", loc="lower left")
        return ax


def _json_safe(o: Any) -> Any:
    if isinstance(o, dict):
        return {k: _json_safe(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_json_safe(v) for v in o]
    if isinstance(o, float) and not math.isfinite(o):
        return str(o)
    return o
