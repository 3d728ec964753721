"""Figures: trade-off curves, privacy profiles, epsilon against DP-SGD steps, audit ROC points.

Each figure has a function returning its arrays (no matplotlib needed) and a ``plot_*`` function
drawing them on a matplotlib ``Axes`` (a new figure when ``ax`` is None) with labelled axes.
matplotlib is optional: ``pip install -e '.[plot]'`` (the ``plot`` extra).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from accountant import Guarantee, dpsgd_epsilon
from accountant.core.types import FloatArray

from .audit import AuditReport

#: Message naming the extra when matplotlib is missing.
MATPLOTLIB_HINT = ("plotting needs matplotlib, which is not installed; install the `plot` extra: "
                   "pip install -e '.[plot]' (from a checkout) or pip install matplotlib")


def pyplot() -> Any:
    """matplotlib.pyplot, or ModuleNotFoundError naming the ``plot`` extra."""
    try:
        import matplotlib.pyplot as plt
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(MATPLOTLIB_HINT, name=exc.name) from None
    return plt


def _axes(ax: Any) -> Any:
    return pyplot().subplots(figsize=(5.0, 4.0))[1] if ax is None else ax


# ----------------------------------------------------------------------------- arrays


def tradeoff_points(g: Guarantee, n: int = 400) -> tuple[FloatArray, FloatArray]:
    """(alpha, beta) on the guarantee's trade-off curve (exact, or its sound lower bound)."""
    alpha = np.unique(np.concatenate([np.linspace(0.0, 1.0, n), np.geomspace(1e-6, 1.0, n)]))
    return alpha, np.asarray(g.tradeoff(alpha), dtype=np.float64)


def profile_points(g: Guarantee, eps: Sequence[float] | FloatArray | None = None
                   ) -> tuple[FloatArray, FloatArray]:
    """(eps, delta(eps)): the privacy profile, a sound upper bound at each eps."""
    e = np.linspace(0.0, 10.0, 101) if eps is None else np.asarray(eps, dtype=np.float64)
    return e, np.asarray(g.delta(e), dtype=np.float64)


def steps_points(sampling_rate: float, noise_multiplier: float, steps: Sequence[int],
                 delta: float) -> dict[str, FloatArray]:
    """Epsilon of DP-SGD at each number of steps: the sound upper bound, the lower bound, the
    RDP bound and the CLT approximation (``steps``, ``upper``, ``lower``, ``rdp``, ``clt``)."""
    accts = [dpsgd_epsilon(sampling_rate, noise_multiplier, int(t), delta) for t in steps]
    return {"steps": np.asarray(steps, dtype=np.float64),
            "upper": np.array([a.epsilon_upper for a in accts]),
            "lower": np.array([a.epsilon_lower for a in accts]),
            "rdp": np.array([a.rdp_epsilon for a in accts]),
            "clt": np.array([a.clt_epsilon for a in accts])}


# ----------------------------------------------------------------------------- figures


def plot_tradeoff(guarantees: Sequence[Guarantee], labels: Sequence[str] | None = None,
                  ax: Any = None) -> Any:
    """Trade-off curves beta = f(alpha) of the guarantees, with the no-privacy line 1 - alpha."""
    ax = _axes(ax)
    for i, g in enumerate(guarantees):
        a, b = tradeoff_points(g)
        ax.plot(a, b, label=labels[i] if labels else str(g))
    ax.plot([0, 1], [1, 0], ":", color="grey", label="perfect privacy (1 - alpha)")
    ax.set(xlabel="type I error alpha", ylabel="type II error beta", xlim=(0, 1), ylim=(0, 1),
           title="trade-off curves")
    ax.legend(fontsize="small")
    return ax


def plot_profile(guarantees: Sequence[Guarantee], labels: Sequence[str] | None = None,
                 eps: Sequence[float] | FloatArray | None = None, ax: Any = None) -> Any:
    """Privacy profiles delta(eps), log scale."""
    ax = _axes(ax)
    for i, g in enumerate(guarantees):
        e, d = profile_points(g, eps)
        keep = d > 0
        ax.semilogy(e[keep], d[keep], label=labels[i] if labels else str(g))
    ax.set(xlabel="epsilon", ylabel="delta(epsilon)", title="privacy profiles")
    ax.legend(fontsize="small")
    return ax


def plot_steps(sampling_rate: float, noise_multiplier: float, steps: Sequence[int], delta: float,
               ax: Any = None) -> Any:
    """Epsilon against DP-SGD steps: the certified bracket (PLD), the RDP bound and the CLT
    approximation."""
    ax = _axes(ax)
    p = steps_points(sampling_rate, noise_multiplier, steps, delta)
    ax.fill_between(p["steps"], p["lower"], p["upper"], alpha=0.3, label="PLD bracket (certified)")
    ax.plot(p["steps"], p["upper"], "-", label="PLD upper bound")
    ax.plot(p["steps"], p["rdp"], "--", label="RDP bound")
    ax.plot(p["steps"], p["clt"], ":", label="CLT (approximation)")
    ax.set(xlabel="steps", ylabel=f"epsilon at delta = {delta:g}",
           title=f"DP-SGD, q = {sampling_rate:g}, sigma = {noise_multiplier:g}")
    ax.legend(fontsize="small")
    return ax


def plot_audit(report: AuditReport, ax: Any = None) -> Any:
    """The audit's test points in the (alpha, beta) plane with their simultaneous confidence boxes,
    against the claimed trade-off curve; a point whose box lies below the curve refutes it."""
    from matplotlib.patches import Rectangle

    ax = _axes(ax)
    a, b = tradeoff_points(report.claim)
    ax.plot(a, b, label=f"claim {report.claim}")
    for i, t in enumerate(report.points):
        ax.add_patch(Rectangle((t.alpha_lower, t.beta_lower), t.alpha_upper - t.alpha_lower,
                               t.beta_upper - t.beta_lower, alpha=0.25, color="C1",
                               label=f"{report.confidence:g} confidence boxes" if i == 0 else None))
        ax.plot([t.alpha], [t.beta], ".", color="C1")
    if report.witness is not None:
        ax.plot([report.witness.alpha], [report.witness.beta], "x", color="C3", label="witness")
    verdict = "violation" if report.violation else "no violation found"
    ax.set(xlabel="type I error alpha", ylabel="type II error beta", xlim=(0, 1), ylim=(0, 1),
           title=f"audit: {verdict}, epsilon >= {report.epsilon_lower:.3g}"
           if math.isfinite(report.epsilon_lower) else f"audit: {verdict}")
    ax.legend(fontsize="small")
    return ax


__all__ = ["MATPLOTLIB_HINT", "plot_audit", "plot_profile", "plot_steps", "plot_tradeoff",
           "profile_points", "pyplot", "steps_points", "tradeoff_points"]
